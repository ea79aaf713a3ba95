"""Stepping inside statements like a debugger (issue 9), checked against plain PyTorch."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import torch

from gradviz.core.debugger import Pause
from gradviz.core.session import Session
from gradviz.graph.statements import calls_backward

from .helpers import walk_grad_fns

TRAIN = """\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 4)
        self.fc2 = nn.Linear(4, 1)

    def forward(self, x):
        h = torch.tanh(self.fc1(x))
        return self.fc2(h)


torch.manual_seed(0)
net = Net()
opt = torch.optim.SGD(net.parameters(), lr=0.1)
x = torch.randn(5, 3)
y = torch.randn(5, 1)
for step in range(3):
    opt.zero_grad()
    loss = ((net(x) - y) ** 2).mean()
    loss.backward()
    opt.step()
print(loss.item())
"""
LOOP_LINE = 21
BACKWARD_LINE = 24


@pytest.fixture(params=["restricted", "trusted"])
def engine(request) -> str:
    """Every in-process stepping test runs on both engines: the allowlist interpreter
    and real Python under sys.settrace (gradviz.core.pyengine)."""
    return request.param


def _session(source: str, engine: str) -> Session:
    return Session(source, trusted=engine == "trusted")


def _at_loop(engine: str = "restricted") -> Session:
    session = _session(TRAIN, engine)
    index = next(s.index for s in session.statements if s.line == LOOP_LINE)
    session.run_to(index)
    return session


def _plain_until(iterations: int) -> dict:
    """TRAIN run by plain Python, stopping after `iterations` backward() calls."""
    head, loop = TRAIN.split("for step in range(3):\n")
    body = loop.split("print(")[0]
    source = head + f"for step in range({iterations}):\n" + body.replace("    opt.step()\n", f"    if step < {iterations} - 1:\n        opt.step()\n")
    env: dict = {}
    exec(source, env)  # noqa: S102 - the reference is plain PyTorch
    return env


def _graph_labels(t: torch.Tensor) -> list[str]:
    return sorted(type(fn).__name__ for fn in walk_grad_fns(t.grad_fn))


def test_step_into_a_training_loop_follows_lines_and_iterations(engine):
    session = _at_loop(engine)
    lines, iterations = [], []
    while True:
        out = session.debug("into")
        if not isinstance(out, Pause):
            break
        lines.append(out.line)
        iterations.append(out.iteration)
        assert out.iterations == 3
    assert out is not None and out.ok
    # each iteration: the loop body, with forward (lines 12-13) entered from line 23
    assert lines == [22, 23, 12, 13, 24, 25] * 3
    assert iterations == [1] * 6 + [2] * 6 + [3] * 6
    assert torch.is_grad_enabled()


def test_each_backward_pass_keeps_its_own_graph_and_gradients(engine):
    session = _at_loop(engine)
    session.step()
    assert [p.line for p in session.passes] == [BACKWARD_LINE] * 3
    assert [p.iteration for p in session.passes] == [1, 2, 3]
    for k, p in enumerate(session.passes, start=1):
        plain = _plain_until(k)
        assert sorted(p.labels) == _graph_labels(plain["loss"]), k
        assert len(p.nodes) == len(p.labels) and len(set(p.nodes)) == len(p.nodes)
        expected = {f"net.{n}": q.grad for n, q in plain["net"].named_parameters()}
        for name, grad in expected.items():
            assert torch.allclose(torch.tensor(p.leaf_grads[name]), grad), (k, name)
    # each iteration builds its own graph: only the leaves' AccumulateGrad nodes are shared
    shared = set(session.passes[0].nodes) & set(session.passes[1].nodes)
    labels = dict(zip(session.passes[0].nodes, session.passes[0].labels))
    assert shared and {labels[n] for n in shared} == {"AccumulateGrad"}


def test_step_into_forward_and_out_to_the_caller(engine):
    session = _at_loop(engine)
    session.debug("into")  # line 22
    session.debug("into")  # line 23
    inside = session.debug("into")
    assert isinstance(inside, Pause) and inside.line == 12
    assert inside.frames == ["Net.forward"] and inside.call_lines == [23]
    snap = session.pause_snapshot()
    assert "Net.forward.x" in snap["frame_locals"]
    assert snap["paused"]["frames"] == [{"name": "Net.forward", "call_line": 23}]
    out = session.debug("out")
    assert isinstance(out, Pause) and out.line == BACKWARD_LINE and out.frames == []
    assert out.iteration == 1


def test_step_over_stays_at_the_loop_body(engine):
    session = _at_loop(engine)
    lines = []
    out = session.debug("into")
    while isinstance(out, Pause):
        lines.append(out.line)
        out = session.debug("over")
    assert lines == [22, 23, 24, 25] * 3


def test_breakpoint_stops_on_each_iteration_and_run_to_backward(engine):
    session = _at_loop(engine)
    hits = []
    out = session.debug("continue", frozenset({25}))
    while isinstance(out, Pause):
        hits.append((out.line, out.iteration))
        out = session.debug("continue", frozenset({25}))
    assert hits == [(25, 1), (25, 2), (25, 3)]

    session = _at_loop(engine)
    stops = []
    out = session.debug("backward")
    while isinstance(out, Pause):
        stops.append((out.line, out.iteration, len(session.passes)))
        out = session.debug("backward")
    # just before each backward(): the pass has not run yet
    assert stops == [(24, 1, 0), (24, 2, 1), (24, 3, 2)]


def test_stop_keeps_the_place_and_the_work_done(engine):
    session = _at_loop(engine)
    out = session.debug("continue", frozenset({24}))
    out = session.debug("continue", frozenset({24}))
    assert isinstance(out, Pause) and out.iteration == 2
    result = session.stop_debugging()
    assert result is not None and not result.ok and result.error.type == "DebugStopped"
    assert "line 24, iteration 2" in result.error.message
    # one optimizer step ran (iteration 1), nothing was rewound
    plain = _plain_until(2)
    for (name, p), (_, q) in zip(session.globals["net"].named_parameters(), plain["net"].named_parameters()):
        assert torch.allclose(p, q), name
    assert session.statements[session.cursor].line == LOOP_LINE
    assert session.paused is None and session.debugger is None
    # and the session goes on: Step runs the loop statement again, from its start
    assert session.step().ok


def test_reset_or_close_while_paused_ends_the_worker(engine):
    """The library's Session reset (or closed) in the middle of a paused loop: the
    paused statement's worker thread ends with it instead of waiting for ever with the
    old run's frame, and the fresh run is plain Python's."""
    import threading

    def workers() -> int:
        return sum(t.name == "gradviz-debugger" for t in threading.enumerate())

    before = workers()
    session = _at_loop(engine)
    assert isinstance(session.debug("continue", frozenset({24})), Pause)
    assert workers() == before + 1
    session.reset()
    assert workers() == before and session.paused is None and session.cursor == 0
    session.run_to_end()
    plain: dict = {}
    exec(compile(TRAIN, "<plain>", "exec"), plain)  # noqa: S102 - the reference
    assert session.globals["loss"].item() == pytest.approx(plain["loss"].item(), rel=1e-6)
    assert len(session.passes) == 3
    session = _at_loop(engine)
    assert isinstance(session.debug("continue", frozenset({24})), Pause)
    session.close()
    assert workers() == before and session.paused is None


def test_a_failure_while_stepping_ends_the_statement_cleanly(engine):
    session = _session("import torch\nx = torch.ones(2)\nfor i in range(3):\n    y = x * i\n    z = undefined\n", engine)
    session.step()
    session.step()
    assert isinstance(session.debug("into"), Pause)
    out = session.debug("over")
    assert isinstance(out, Pause) and out.line == 5
    result = session.debug("over")
    assert not isinstance(result, Pause) and not result.ok and result.error.type == "NameError"
    assert session.debugger is None and session.globals["y"].sum() == 0
    assert torch.is_grad_enabled()


def test_unknown_mode_is_refused(engine):
    session = _at_loop(engine)
    with pytest.raises(ValueError):
        session.debug("sideways")
    assert session.debugger is None


def test_calls_backward_sees_the_forms_people_write():
    import ast
    for src, want in [("loss.backward()", True), ("torch.autograd.backward([l])", True),
                      ("g = torch.autograd.grad(l, x)", True), ("opt.step()", False),
                      ("for i in r:\n    l.backward()", False)]:
        assert calls_backward(ast.parse(src).body[0]) is want, src


def test_kernel_debug_command_pauses_and_reports(tmp_path):
    from gradviz.kernel_server import Kernel

    out = (tmp_path / "out.txt").open("w")
    kernel = Kernel(out)
    loop_index = next(st.index for st in Session(TRAIN).statements if st.line == LOOP_LINE)
    kernel.handle({"cmd": "load", "source": TRAIN, "run_to": loop_index})
    state = kernel.handle({"cmd": "debug", "mode": "into"})
    assert state["paused"]["line"] == 22 and state["paused"]["iteration"] == 1
    state = kernel.handle({"cmd": "debug", "mode": "continue", "breakpoints": [24]})
    assert state["paused"]["line"] == 24
    state = kernel.handle({"cmd": "debug_stop"})
    assert state["paused"] is None
    assert state["new_results"][0]["error"]["type"] == "DebugStopped"
    from gradviz.protocol import BadRequest
    for bad in ({"cmd": "debug", "mode": "into", "breakpoints": ["x"]},
                {"cmd": "debug", "mode": "into", "breakpoints": [True]},
                {"cmd": "debug", "mode": "into", "breakpoints": list(range(20_000))},
                {"cmd": "debug", "mode": "sideways"}):
        with pytest.raises(BadRequest):
            kernel.handle(bad)
    # the kernel still steps after the refusals
    assert kernel.handle({"cmd": "debug", "mode": "into"})["paused"]["line"] == 22


@pytest.mark.slow
def test_cli_trace_lists_every_statement_and_places_each_pass(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(TRAIN)
    proc = subprocess.run(
        [sys.executable, "-m", "gradviz", "run", str(script), "--json", "--trace"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    steps = report["steps"]
    body = [s for s in steps if s["depth"] >= 1 and s["frame"] is None]
    assert [s["line"] for s in body[-12:]] == [22, 23, 24, 25] * 3
    assert [s["iteration"] for s in body[-12:]] == [1] * 4 + [2] * 4 + [3] * 4
    forward = [s for s in steps if s["frame"] == "Net.forward"]
    assert [s["depth"] for s in forward] == [2] * 6 and all(s["ok"] for s in steps)
    top = [s for s in steps if s["depth"] == 0]
    assert top[0] == {"line": 1, "depth": 0, "iteration": None, "frame": None, "ok": True}
    passes = report["backward_passes"]
    assert [(p["line"], p["iteration"]) for p in passes] == [(24, 1), (24, 2), (24, 3)]
    plain = _plain_until(3)
    assert sorted(passes[2]["labels"]) == _graph_labels(plain["loss"])
    assert len(passes[2]["nodes"]) == len(passes[2]["labels"])


LONG_LOOP = "a = torch.zeros(1)\nfor i in range(10**7):\n    a.add_(1)\nb = a * 2\n"


def test_stop_request_ends_a_long_loop_and_keeps_its_work():
    """What the window's Stop does to a running statement (the kernel sets the flag from
    its SIGUSR1 handler): the loop ends at its next iteration, its work is kept."""
    import threading

    session = Session(LONG_LOOP)
    session.step()
    timer = threading.Timer(0.5, lambda: setattr(session.interpreter, "stop_requested", True))
    timer.start()
    result = session.step()
    timer.join()
    assert not result.ok and result.error.type == "Stopped"
    assert "iteration" in result.error.message and result.error.line == 3
    done = int(session.globals["a"].item())
    # the stop lands at a loop iteration (i is the last one run) or just after the loop
    # bound i for the next one, before its body ran (i is one further): a counts bodies
    assert 1 <= done < 10**7 and session.globals["i"] in (done - 1, done)
    assert session.statements[session.cursor].line == 2  # the place is kept, not rewound
    assert session.interpreter.stop_requested is False
    assert torch.is_grad_enabled()


@pytest.mark.slow
def test_sigusr1_stops_the_kernel_statement_without_killing_it():
    import os
    import signal
    import threading

    from gradviz.runner import KernelProcess

    with KernelProcess() as kernel:
        kernel.request("load", None, source=LONG_LOOP, device="cpu", run_to=1)
        pid = kernel._proc.pid
        timer = threading.Timer(1.0, lambda: os.kill(pid, signal.SIGUSR1))
        timer.start()
        reply = kernel.request("step", None)
        timer.join()
        assert reply["ok"], reply
        state = reply["state"]
        result = state["new_results"][-1]
        assert result["error"]["type"] == "Stopped"
        assert state["tensors"]["a"]["value"][0] >= 1
        # the same kernel goes on serving
        assert kernel.request("ping", None)["ok"] is True
        assert kernel._proc.poll() is None


def test_a_statement_over_several_lines_pauses_once_on_both_engines(engine):
    """CPython reports a statement spread over lines at each of them (and at its first
    line again); stepping pauses once per statement, as the interpreter does, and a
    one-line function called again is entered again."""
    source = (
        "import torch\n"
        "x = torch.ones(2, requires_grad=True)\n"
        "for i in range(2):\n"
        "    y = (x *\n"
        "         2).sum()\n"
        "    y.backward()\n"
        "def f(t): return t * 2\n"
        "for i in range(3):\n"
        "    z = f(x)\n"
    )
    session = _session(source, engine)
    session.run_to(2)
    stops = []
    out = session.debug("into")
    while isinstance(out, Pause):
        stops.append((out.line, out.depth))
        out = session.debug("into")
    assert stops == [(4, 1), (6, 1)] * 2
    session.step()  # def f
    stops = []
    out = session.debug("into")
    while isinstance(out, Pause):
        stops.append((out.line, out.depth))
        out = session.debug("into")
    assert stops == [(9, 1), (7, 2)] * 3
    assert torch.equal(session.globals["x"].grad, torch.full((2,), 4.0))


def test_a_long_pause_inside_a_loop_costs_nothing(engine, monkeypatch):
    """40 s spent reading a paused loop (longer than the 25 s statement limit), then
    stepping on: the loop goes on to the end, as plain Python's does."""
    import time as time_module

    session = _at_loop(engine)
    session.debug("into")
    inside = session.debug("into")
    assert isinstance(inside, Pause)
    real = time_module.monotonic
    monkeypatch.setattr(time_module, "monotonic", lambda: real() + 40.0)  # the user reads
    for _ in range(4):
        out = session.debug("over")
        assert not (hasattr(out, "ok") and not out.ok), out.error
    out = session.debug("continue")
    assert out is not None and not isinstance(out, Pause) and out.ok, getattr(out, "error", out)
    plain = _plain_until(3)
    for name, p in plain["net"].named_parameters():
        torch.testing.assert_close(dict(session.globals["net"].named_parameters())[name].grad, p.grad)


def test_paused_in_forward_a_node_is_labelled_by_its_global_name_only(engine):
    """Paused inside Net.forward, a parameter is both ``net.fc1.weight`` and the frame's
    ``Net.forward.self.fc1.weight``: the node's label joined both, grew and overlapped
    its neighbours. The label keeps the script's global names; every name stays in
    ``vars`` (the inspector lists them), and a name only the frame has still shows."""
    s = _session(TRAIN, engine)
    s.run_to(next(st.index for st in s.statements if st.line == LOOP_LINE))
    out = s.debug("into")
    while isinstance(out, Pause) and out.line != 12:
        out = s.debug("into")
    assert isinstance(out, Pause) and out.frames == ["Net.forward"]
    try:
        s.pause_snapshot()
        tensors = {d["label"]: d for _, d in s.graph.nodes(data=True) if d.get("kind") == "tensor"}
        weight = tensors["net.fc1.weight"]
        assert set(weight["vars"]) == {"net.fc1.weight", "Net.forward.self.fc1.weight"}
        assert not any("Net.forward." in label and "=" in label for label in tensors)
        assert "x" in tensors and "Net.forward.x" in tensors["x"]["vars"]
    finally:
        s.stop_debugging()
    # at the top level again, nothing is hidden: a name is a name
    s2 = _session("import torch\na = torch.ones(2, requires_grad=True)\nb = a\n", engine)
    s2.run_to_end()
    labels = [d["label"] for _, d in s2.graph.nodes(data=True) if d.get("kind") == "tensor"]
    assert labels == ["a = b"]
