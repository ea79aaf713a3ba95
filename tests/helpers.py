"""Shared test helpers (no Qt)."""

from __future__ import annotations

import ast
import warnings

import numpy as np
import torch

from gradviz.core.session import Session
from gradviz.graph.layout import node_size

#: the built-in lessons (README's demo table); a demo folder missing any of them is a broken install
LESSONS = frozenset({
    "devices", "first_backward", "retain_graph", "two_paths", "two_leaves", "custom_function",
    "no_grad_memory", "inplace_memory", "inplace_dangers", "shared_storage", "clone_vs_detach",
    "leaves",
})


def run_script(source: str, keep_going: bool = True, **kwargs) -> Session:
    session = Session(source, **kwargs)
    session.run_to_end(keep_going=keep_going)
    return session


def result_at(session: Session, line_text: str):
    """The result of the first statement whose source contains ``line_text``."""
    for r in session.results:
        if line_text in r.source:
            return r
    raise AssertionError(f"no statement containing {line_text!r} ran")


def run_plain(source: str, device: str = "cpu", seed: int = 0) -> dict:
    """Run a (trusted) demo with Python's own exec, statement by statement, keep-going."""
    torch.manual_seed(seed)
    np.random.seed(seed)
    namespace: dict = {"torch": torch, "dev": torch.device(device), "np": np, "numpy": np}
    tree = ast.parse(source)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _exec_each(tree, namespace)
    return namespace


def _exec_each(tree: ast.Module, namespace: dict) -> None:
    for stmt in tree.body:
        module = ast.Module(body=[stmt], type_ignores=[])
        try:
            exec(compile(module, "<demo>", "exec"), namespace)  # noqa: S102 - trusted test input
        except Exception:  # noqa: BLE001 - the demos fail on purpose in places
            pass


def boxes(graph, pos: dict) -> dict:
    """Each node's box (left, top, right, bottom) at ``pos``, sized as the layout sizes it."""
    out = {}
    for v, (x, y) in pos.items():
        w, h = node_size(graph.nodes[v])
        out[v] = (x - w / 2, y - h / 2, x + w / 2, y + h / 2)
    return out


def overlapping(graph, pos: dict) -> list[tuple]:
    """Pairs of node boxes that intersect (a sweep over x, fine for test sizes)."""
    bx = sorted(boxes(graph, pos).items(), key=lambda kv: kv[1][0])
    bad = []
    for i, (a, ba) in enumerate(bx):
        for b, bb in bx[i + 1 :]:
            if bb[0] >= ba[2]:
                break
            if bb[1] < ba[3] and ba[1] < bb[3]:
                bad.append((a, b))
    return bad


def walk_grad_fns(*roots) -> list:
    """Every autograd node reachable from ``roots`` (grad_fn objects), each once.

    The nodes visited are kept alive while the walk runs: torch makes a node's Python
    object on demand and frees it with its last reference, so a walk that remembers
    ``id(fn)`` alone can meet a later node at a freed one's address and skip it
    (seen under Python 3.12 with torch 2.11: whole graphs counted as their root)."""
    seen: dict[int, object] = {}
    stack = [r for r in roots if r is not None]
    while stack:
        fn = stack.pop()
        if fn is None or id(fn) in seen:
            continue
        seen[id(fn)] = fn
        stack.extend(n for n, _ in fn.next_functions)
    return list(seen.values())
