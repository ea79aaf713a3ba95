"""A captured deep graph is freed without overflowing the stack (issue 12).

Once Python has touched an autograd node, torch keeps its wrapper for as long as
the node lives, and a graph of wrapped nodes is freed by recursion: dropping a
captured 50,000-node chain crashed the process (SIGSEGV) on an 8 MiB stack.
Each case runs in a fresh process, so a crash fails the test instead of pytest.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import weakref
from typing import Any

import pytest
import torch

import gradviz
from gradviz.core.capture import IdRegistry

STACK_BYTES = 8 * 1024 * 1024
"""Linux's usual main-thread stack: where 50,000 wrapped nodes crashed (25,000 did not)."""

CHAIN = """
import json, sys, weakref
import torch
import gradviz

n = {depth}
x = torch.ones(1, requires_grad=True)
y = x
saved = []  # what the first, middle and last multiplication saved
for i in range(n):
    if i in (0, n // 2, n - 1):
        t = torch.ones(1)  # saved by its MulBackward0: freed only with the graph
        saved.append(weakref.ref(t))
        y = y * t
        del t
    else:
        y = y * 1.0
    if i == 1_000:
        mid = y
"""

SNAPSHOT = CHAIN + """
del mid
snap = gradviz.snapshot(y, names={{"x": x}})
kinds = [node["kind"] for node in snap["graph"]["nodes"]]
del y  # the graph goes here: this crashed
print(json.dumps({{
    "grad_fn": kinds.count("grad_fn"), "accumulate_grad": kinds.count("accumulate_grad"),
    "alive": [r() is not None for r in saved],
}}), flush=True)
"""


def _small_stack() -> None:
    import resource

    _soft, hard = resource.getrlimit(resource.RLIMIT_STACK)
    if hard == resource.RLIM_INFINITY or hard >= STACK_BYTES:
        resource.setrlimit(resource.RLIMIT_STACK, (STACK_BYTES, hard))


def run(code: str, timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
        timeout=timeout, env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
        preexec_fn=_small_stack if sys.platform.startswith("linux") else None,
    )


def last_json(proc: subprocess.CompletedProcess) -> dict:
    assert proc.returncode == 0, f"exit code {proc.returncode}\n{proc.stderr[-3000:]}"
    return json.loads(proc.stdout.strip().splitlines()[-1])


def check_snapshot(depth: int) -> None:
    out = last_json(run(SNAPSHOT.format(depth=depth)))
    assert out["grad_fn"] == depth and out["accumulate_grad"] == 1
    assert out["alive"] == [False, False, False], "the graph outlived its tensors"


def test_a_50k_chain_snapshots_frees_and_exits_cleanly():
    check_snapshot(50_000)


@pytest.mark.slow
def test_a_200k_chain_snapshots_frees_and_exits_cleanly():
    check_snapshot(200_000)


@pytest.mark.slow
@pytest.mark.parametrize("first", ["root", "middle"])
def test_a_60k_chain_frees_whichever_tensor_the_caller_drops_first(first):
    """A named tensor low in the chain, and a node high in it that the snapshot never saw."""
    out = last_json(run(CHAIN.format(depth=60_000) + f"""
node = y.grad_fn
for _ in range(1_000):
    node = node.next_functions[0][0]
hidden = node  # the caller's, ~59,000 levels above x: its drop frees all but the top
del node
snap = gradviz.snapshot(y, names={{"x": x, "mid": mid}})
if {first!r} == "root":
    del y
    after_first = [r() is not None for r in saved]
    del mid
else:
    del mid
    after_first = [r() is not None for r in saved]
    del y
after_second = [r() is not None for r in saved]
del hidden
print(json.dumps({{"first": after_first, "second": after_second,
                  "all": [r() is not None for r in saved]}}))
"""))
    assert out["first"] == ([True, True, False] if first == "root" else [True, True, True])
    assert out["second"] == [True, True, False]
    assert out["all"] == [False, False, False]


@pytest.mark.slow
def test_show_of_a_50k_chain_in_a_host_application_exits_cleanly():
    pytest.importorskip("PySide6")
    out = last_json(run(CHAIN.format(depth=50_000) + """
from PySide6.QtWidgets import QApplication

app = QApplication(["host"])
app.setQuitOnLastWindowClosed(False)
returned = gradviz.show(y, names={"x": x})
windows = [w for w in app.topLevelWidgets() if type(w).__name__ == "MainWindow" and w.isVisible()]
app.processEvents()
for w in windows:
    w.close()
app.processEvents()
del windows, y, mid
print(json.dumps({"returned": returned, "alive": [r() is not None for r in saved]}))
"""))
    assert out["returned"] is None
    assert out["alive"] == [False, False, False]


def test_small_bands_keep_every_node_and_free_the_whole_graph(monkeypatch):
    """In process, with bands of 10 levels: who keeps what, and that all of it is freed."""
    monkeypatch.setattr(IdRegistry, "FREE_IN_ORDER_DEPTH", 10)
    x = torch.ones(1, requires_grad=True)
    y = x
    for _ in range(30):
        y = y * 1.0
    mid = y
    t = torch.ones(1)
    saved = weakref.ref(t)
    y = y * t
    del t
    for _ in range(30):
        y = y * 1.0
    gradviz.snapshot(y, names={"x": x, "mid": mid})
    keepers = []
    node = y.grad_fn
    while node is not None:
        keeper = node.metadata.get(IdRegistry.FREE_IN_ORDER_KEY)
        if keeper is not None:
            keepers.append(len(keeper.fns))
        node = node.next_functions[0][0] if node.next_functions else None
    # the root, `mid`, and the nodes at levels 10, 20, .. 60; each of the other 61 nodes
    # (60 MulBackward0 and AccumulateGrad) is held once, by the nearest of them above it
    assert len(keepers) == 2 + 6
    assert sum(keepers) == 61
    del node, keeper, mid
    assert saved() is not None
    del y
    assert saved() is None


def test_each_keeper_drops_a_branching_graph_children_first(monkeypatch):
    """A graph that branches and joins again: every keeper's wrappers list each node
    after all the nodes below it that the same keeper holds (the order torch frees them
    in without recursing), and every node below the root is held."""
    monkeypatch.setattr(IdRegistry, "FREE_IN_ORDER_DEPTH", 4)
    x = torch.ones(2, requires_grad=True)
    w = torch.ones(2, requires_grad=True)
    y = x
    for i in range(12):
        a = y * w if i % 3 else y.sin()
        b = a.cos() * 2.0
        y = a + b if i % 2 else torch.stack([a, b]).sum(0)
    loss = y.sum()
    gradviz.snapshot(loss, names={"x": x, "w": w})
    seen: dict[int, Any] = {}
    todo = [loss.grad_fn]
    while todo:
        node = todo.pop()
        if id(node) not in seen:
            seen[id(node)] = node
            todo.extend(n for n, _ in node.next_functions if n is not None)
    held = []
    for node in seen.values():
        keeper = node.metadata.get(IdRegistry.FREE_IN_ORDER_KEY)
        if keeper is None:
            continue
        place = {id(fn): i for i, fn in enumerate(keeper.fns)}
        held.extend(place)
        for fn in keeper.fns:
            for child, _ in fn.next_functions:
                if child is not None and id(child) in place:
                    assert place[id(child)] < place[id(fn)], (fn.name(), child.name())
    # below the root, every node is held by a keeper above it (by two where branches
    # from two bands join)
    assert set(held) == set(seen) - {id(loss.grad_fn)}
    assert len(seen) > 40


def test_a_restricted_report_reads_at_most_its_node_budget_and_says_so(monkeypatch):
    """gradviz run --restricted of a long chain: the report's capture stops at
    REPORT_CAPTURE_NODES (a 400,000-node chain was read for 15 s into a 67 MB reply
    the parent would not parse) and the statement's warnings say why the picture is
    cut. The kernel in-process, with a small budget."""
    import io

    from gradviz import kernel_server
    from gradviz import protocol as P

    monkeypatch.setattr(kernel_server, "REPORT_CAPTURE_NODES", 300)
    out = io.StringIO()
    kernel = kernel_server.Kernel(out, trusted=False)
    source = "import torch\nx = torch.ones(2000, 1, requires_grad=True)\ny = sum(x.unbind())\n"
    try:
        kernel.serve(io.BytesIO((P.encode_request(1, P.Report(source=source)) + "\n").encode()))
    finally:
        kernel.release()
    reply = next(m for m in map(json.loads, out.getvalue().splitlines()) if m["event"] == "reply")
    report = reply["state"]
    assert all(s["ok"] for s in report["statements"])
    grad_fns = [n for n in report["graph"]["nodes"] if n["kind"] == "grad_fn"]
    assert 0 < len(grad_fns) <= 300
    warnings = report["statements"][-1]["warnings"]
    assert any("more than 300 nodes" in w and "max_capture_nodes" in w for w in warnings)
    # the same script in the window's session keeps its whole graph
    from gradviz.core.session import Session

    session = Session(source)
    session.run_to_end()
    assert sum(1 for _, d in session.graph.nodes(data=True) if d["kind"] == "grad_fn") > 1000


def test_the_kernel_exits_without_freeing_and_still_runs_atexit(tmp_path):
    """The kernel ends with os._exit once serving is over (freeing a long chain one
    object at a time cost 10 s after the reply); a trusted script's atexit handlers
    still run, as python runs them."""
    script = tmp_path / "bye.py"
    script.write_text(
        "import atexit, pathlib, torch\n"
        "x = torch.ones(1, requires_grad=True)\n"
        "y = x\n"
        "for _ in range(60_000):\n"
        "    y = y * 1.0\n"
        "f = y.grad_fn\n"
        "while f.next_functions:\n"
        "    f = f.next_functions[0][0]\n"  # every node gets its Python wrapper
        "atexit.register(lambda: pathlib.Path('bye.txt').write_text('bye'))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-m", "gradviz", "run", "--trust", "--json", str(script)],
        capture_output=True, text=True, timeout=240, cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert all(s["ok"] for s in json.loads(proc.stdout)["statements"])
    assert (tmp_path / "bye.txt").read_text() == "bye"


def test_a_restricted_capture_is_bounded_by_what_is_left_of_the_run():
    """After a statement that used the run's budget, its capture may read for
    CAPTURE_FLOOR_S more, not for capture's own 20 s (the 400,000-node chain's
    capture ran 15 s past its run); a trusted session's capture has no run budget."""
    import time

    from gradviz.core.session import CAPTURE_FLOOR_S, Session

    session = Session("x = 1\n")
    session.interpreter.max_run_seconds = 30.0
    session.interpreter.run_seconds = 2.0
    left = session._capture_deadline(25.0) - time.monotonic()
    assert CAPTURE_FLOOR_S - 0.5 < left <= CAPTURE_FLOOR_S
    left = session._capture_deadline(10.0) - time.monotonic()
    assert 17.5 < left <= 18.0
    assert Session("x = 1\n", trusted=True)._capture_deadline(25.0) is None
