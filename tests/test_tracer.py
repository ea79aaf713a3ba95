"""The trusted engine's line events (issue 20): ``sys.monitoring`` on Python 3.12+,
``sys.settrace`` before it or when another tool holds the debugger's id. Both give the
same pauses, iterations and Stop, and plain Python's values."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from gradviz.core import pyengine
from gradviz.core.debugger import Pause
from gradviz.core.session import Session

needs_monitoring = pytest.mark.skipif(
    sys.version_info < (3, 12), reason="sys.monitoring (PEP 669) is Python 3.12+; "
    f"this is {sys.version_info.major}.{sys.version_info.minor}: the settrace path runs"
)

LOOP = """\
import torch
w = torch.ones(3, requires_grad=True)
total = 0.0
for i in range(4):
    y = (w * i).sum()
    y.backward()
    total += y.item()
"""


def _walk(source: str) -> tuple[list[tuple[int, int | None]], Session]:
    """Every pause of F11 pressed through the loop statement: (line, iteration)."""
    session = Session(source, trusted=True)
    session.run_to(3)
    seen = []
    outcome = session.debug("into")
    while isinstance(outcome, Pause):
        seen.append((outcome.line, outcome.iteration))
        outcome = session.debug("into")
    assert outcome is not None and outcome.ok, outcome
    return seen, session


def _plain(source: str) -> dict:
    namespace: dict = {}
    exec(compile(source, "<plain>", "exec"), namespace)
    return namespace


@pytest.mark.parametrize("tracer", ["default", "settrace"])
def test_both_tracers_step_the_same_loop(tracer, monkeypatch):
    if tracer == "settrace":
        monkeypatch.setenv("GRADVIZ_TRACER", "settrace")
    seen, session = _walk(LOOP)
    assert seen == [(line, i) for i in range(1, 5) for line in (5, 6, 7)]
    plain = _plain(LOOP)
    assert session.globals["total"] == plain["total"]
    assert session.globals["w"].grad.tolist() == plain["w"].grad.tolist()
    assert len(session.passes) == 4


@needs_monitoring
def test_monitoring_is_used_and_library_code_stops_calling_back(monkeypatch):
    monkeypatch.delenv("GRADVIZ_TRACER", raising=False)
    # statements other tests left paused (sessions dropped mid-pause) keep their count
    left_running = dict(pyengine._MONITOR.files)
    calls = {"start": 0}
    real = pyengine._MONITOR._on_start

    def counting(code, offset):
        calls["start"] += 1
        return real(code, offset)

    seen, _ = _walk(LOOP)
    assert seen and pyengine._MONITOR.ready
    assert sys.monitoring.get_tool(pyengine._Monitor.TOOL) == "gradviz"
    # a second run: every library code object was disabled at its first start, so
    # the loop's hundreds of torch calls call back (almost) never
    sys.monitoring.register_callback(
        pyengine._Monitor.TOOL, sys.monitoring.events.PY_START, counting
    )
    try:
        session = Session(LOOP, trusted=True)
        session.run_to_end()
    finally:
        sys.monitoring.register_callback(
            pyengine._Monitor.TOOL, sys.monitoring.events.PY_START, real
        )
    assert calls["start"] < 40, calls  # the script's own statements and little else
    # this test's statements ended: events are off between statements
    assert pyengine._MONITOR.files == left_running


@needs_monitoring
def test_a_held_debugger_id_falls_back_to_settrace():
    """Another tool (a debugger of the user's) holds sys.monitoring's debugger id:
    gradviz steps with settrace instead, in a process of its own."""
    code = textwrap.dedent(
        f"""
        import sys
        sys.monitoring.use_tool_id(0, "someone else")
        from gradviz.core import pyengine
        from gradviz.core.session import Session
        from gradviz.core.debugger import Pause
        s = Session({LOOP!r}, trusted=True)
        s.run_to(3)
        out = s.debug("into")
        assert isinstance(out, Pause) and out.line == 5, out
        assert pyengine._MONITOR.failed and "someone else" in pyengine._MONITOR.failed
        assert sys.monitoring.get_tool(0) == "someone else"
        sys.__stdout__.write("ok\\n")  # the paused statement's engine holds sys.stdout
        """
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0 and proc.stdout.strip().endswith("ok"), proc.stderr[-3000:]


def test_stop_ends_the_loop_at_its_next_line_on_either_tracer(monkeypatch):
    source = "import torch\nn = 0\nwhile True:\n    n += 1\n"
    session = Session(source, trusted=True)
    session.run_to(2)
    engine = session.interpreter

    def stop_soon(frame, event, arg, real=engine._trace_line):
        if engine.globals.get("n", 0) >= 50:
            engine.stop_requested = True
        return real(frame, event, arg)

    monkeypatch.setattr(engine, "_trace_line", stop_soon)
    result = session.step()
    assert result is not None and not result.ok and result.error.type == "Stopped"
    assert session.globals["n"] >= 50
