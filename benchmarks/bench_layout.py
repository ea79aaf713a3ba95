"""Time gradviz's layout against Graphviz ``dot`` on real autograd graphs.

Not a test: it prints figures.  Run ``python3 benchmarks/bench_layout.py``
(``--layers 96`` for a bigger transformer).  The graphs are built with a small
iterative walk over ``grad_fn.next_functions`` kept here on purpose, so the
benchmark measures the layout and does not depend on the capture module.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import networkx as nx
import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gradviz.export import graph_to_dot  # noqa: E402
from gradviz.graph.layout import layout  # noqa: E402


def _tensor_attrs(t: torch.Tensor) -> dict:
    return {
        "shape": list(t.shape),
        "dtype": str(t.dtype).removeprefix("torch."),
        "device": str(t.device),
    }


def autograd_to_nx(root_tensor: torch.Tensor) -> nx.DiGraph:
    """Autograd graph behind ``root_tensor`` in the documented networkx format.

    Iterative (an explicit stack), because a 5,000-op chain is 5,000 deep.
    Saved tensors are found through the ``_saved_*`` attributes of each node.
    """
    g = nx.DiGraph()
    g.add_node(
        "t0",
        kind="tensor",
        label="out",
        vars=["out"],
        is_leaf=False,
        requires_grad=True,
        statement=None,
        new=False,
        **_tensor_attrs(root_tensor),
    )
    root_fn = root_tensor.grad_fn
    if root_fn is None:
        return g
    ids: dict[int, str] = {}
    keep: list[object] = []  # keep nodes alive so id() values are not reused
    counters = {"fn": 0, "acc": 0, "t": 1, "s": 0}

    def node_id(fn: object) -> tuple[str, bool]:
        key = id(fn)
        if key in ids:
            return ids[key], False
        keep.append(fn)
        prefix = "acc" if type(fn).__name__ == "AccumulateGrad" else "fn"
        nid = f"{prefix}{counters[prefix]}"
        counters[prefix] += 1
        ids[key] = nid
        return nid, True

    def add_fn(fn: object, nid: str) -> None:
        name = type(fn).__name__
        if name == "AccumulateGrad":
            g.add_node(nid, kind="accumulate_grad", label=name, vars=[], statement=None, new=False)
            var = fn.variable  # type: ignore[attr-defined]
            tid = f"t{counters['t']}"
            counters["t"] += 1
            g.add_node(
                tid,
                kind="tensor",
                label=f"p{tid[1:]}",
                vars=[f"p{tid[1:]}"],
                is_leaf=True,
                requires_grad=True,
                statement=None,
                new=False,
                **_tensor_attrs(var),
            )
            g.add_edge(nid, tid, kind="leaf", new=False)
            return
        g.add_node(
            nid,
            kind="grad_fn",
            label=name,
            vars=[],
            statement=None,
            new=False,
            saved={},
            freed=False,
        )
        for attr in dir(fn):
            if not attr.startswith("_saved_"):
                continue
            try:
                value = getattr(fn, attr)
            except RuntimeError:
                continue
            values = value if isinstance(value, tuple) else (value,)
            for k, item in enumerate(values):
                if not isinstance(item, torch.Tensor):
                    continue
                sid = f"s{counters['s']}"
                counters["s"] += 1
                label = attr[len("_saved_") :] + (f"[{k}]" if isinstance(value, tuple) else "")
                g.add_node(
                    sid,
                    kind="saved",
                    label=label,
                    vars=[],
                    statement=None,
                    new=False,
                    **_tensor_attrs(item),
                )
                g.add_edge(nid, sid, kind="saved", new=False)

    rid, _ = node_id(root_fn)
    add_fn(root_fn, rid)
    g.add_edge("t0", rid, kind="output", new=False)
    stack = [root_fn]
    while stack:
        fn = stack.pop()
        src = ids[id(fn)]
        for nxt, _ in fn.next_functions:
            if nxt is None:
                continue
            nid, fresh = node_id(nxt)
            if fresh:
                add_fn(nxt, nid)
                stack.append(nxt)
            g.add_edge(src, nid, kind="grad", new=False)
    return g


def chain_graph(n: int = 5000) -> nx.DiGraph:
    """``x = x * 1.0001`` n times on a leaf: one long column of MulBackward0."""
    x = torch.ones(3, requires_grad=True)
    y = x
    for _ in range(n):
        y = y * 1.0001
    return autograd_to_nx(y.sum())


def sincos_graph(n: int = 5000) -> nx.DiGraph:
    """Alternating sin/cos: a chain whose every grad_fn saved its input."""
    x = torch.ones(3, requires_grad=True)
    y = x
    for i in range(n):
        y = y.sin() if i % 2 else y.cos()
    return autograd_to_nx(y.sum())


def transformer_graph(layers: int = 24) -> nx.DiGraph:
    """Backward graph of a small TransformerEncoder: wide layers, many parameters."""
    torch.manual_seed(0)
    block = nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128)
    # Nested tensors only apply to batch_first inference; saying so silences a warning.
    model = nn.TransformerEncoder(block, num_layers=layers, enable_nested_tensor=False)
    src = torch.randn(8, 2, 64)  # (sequence, batch, features)
    return autograd_to_nx(model(src).sum())


def best_of(fn: Callable[[], object], repeat: int = 3) -> float:
    """Best wall time of ``repeat`` calls (the least disturbed by the machine)."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def time_dot(graph: nx.DiGraph, dot: str, timeout: float) -> float | None:
    """Seconds for ``dot -Tsvg`` to lay out and render the graph itself; None on timeout."""
    source = graph_to_dot(graph).encode()
    start = time.perf_counter()
    try:
        subprocess.run(
            [dot, "-Tsvg", "-o", "/dev/null"],
            input=source,
            check=True,
            timeout=timeout,
            capture_output=True,
        )
    except subprocess.TimeoutExpired:
        return None
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=24, help="transformer depth (default 24)")
    parser.add_argument("--chain", type=int, default=5000, help="chain length (default 5000)")
    parser.add_argument(
        "--dot-timeout",
        type=float,
        default=300.0,
        help="give up on dot after this many seconds (default 300)",
    )
    args = parser.parse_args(argv)

    graphs = [
        (f"chain mul x{args.chain}", chain_graph(args.chain)),
        (f"chain sin/cos x{args.chain}", sincos_graph(args.chain)),
        (f"transformer {args.layers} layers", transformer_graph(args.layers)),
    ]
    dot = shutil.which("dot")
    header = f"{'graph':<28} {'nodes':>7} {'edges':>7} {'gradviz s':>10} {'dot s':>9} {'ratio':>8}"
    print(header)
    print("-" * len(header))
    for name, graph in graphs:
        ours = best_of(lambda graph=graph: layout(graph))
        theirs = time_dot(graph, dot, args.dot_timeout) if dot else None
        if theirs is None:
            dot_s = "n/a" if dot is None else f">{args.dot_timeout:.0f}"
            ratio = "n/a"
        else:
            dot_s = f"{theirs:.3f}"
            ratio = f"{theirs / ours:.1f}x"
        print(
            f"{name:<28} {graph.number_of_nodes():>7} {graph.number_of_edges():>7} "
            f"{ours:>10.3f} {dot_s:>9} {ratio:>8}",
            flush=True,
        )
    print(
        "\nratio = dot time / gradviz layout time (dot also renders SVG; "
        "gradviz is best of 3, dot a single run)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
