"""The kernel protocol, typed once (issue 20, item 1): every request round-trips, a
malformed one is refused, the parent reads every kernel line through checked events,
and the kernel decides what the window's intents mean on its own state, on both
engines. Results are compared with plain PyTorch running the same script."""

from __future__ import annotations

import dataclasses
import io
import json
import re
from pathlib import Path

import pytest

import gradviz
from gradviz import protocol as P
from gradviz.runner import phase_limit

from .test_debugger import BACKWARD_LINE, TRAIN

ROOT = Path(gradviz.__file__).resolve().parent

# --- requests --------------------------------------------------------------------------


def _sample(cls: type[P.Request]) -> P.Request:
    """A request of ``cls`` with every field off its default."""
    values = {
        str: "x = 1\n", int: 3, bool: True, float: 2.5,
    }
    kwargs = {}
    for f in dataclasses.fields(cls):
        hint = P._hints(cls)[f.name]
        if f.name == "delta":
            kwargs[f.name] = True
        elif f.name in ("mode",):
            options = [a for a in hint.__args__ if a != f.default]
            kwargs[f.name] = options[0]
        elif f.name in ("breakpoints", "zero_points"):
            kwargs[f.name] = (2, 5)
        elif f.name == "device":
            kwargs[f.name] = "cuda"
        else:
            base = next(t for t in (bool, int, float, str) if t in (hint, *getattr(hint, "__args__", ())))
            kwargs[f.name] = values[base]
    return cls(**kwargs)


@pytest.mark.parametrize("cmd", sorted(P.REQUESTS))
def test_every_request_round_trips(cmd):
    cls = P.REQUESTS[cmd]
    for request in (_sample(cls), *([cls()] if _constructible(cls) else [])):
        rid, back = P.decode_request(P.encode_request(7, request))
        assert rid == 7 and back == request and type(back) is cls


def _constructible(cls: type[P.Request]) -> bool:
    try:
        cls()
    except TypeError:
        return False
    return True


@pytest.mark.parametrize(
    "line",
    [
        '{"id": 1, "cmd": "step", "mode": "sideways"}',
        '{"id": 1, "cmd": "step", "mode": "continue"}',  # a debug mode, not a step mode
        '{"id": 1, "cmd": "continue", "breakpoints": [1, -2]}',
        '{"id": 1, "cmd": "continue", "breakpoints": [1.5]}',
        '{"id": 1, "cmd": "run_to_backward", "breakpoints": "12"}',
        '{"id": 1, "cmd": "run_to_line"}',
        '{"id": 1, "cmd": "run_to_line", "line": -4}',
        '{"id": 1, "cmd": "load", "run_to": -1}',
        '{"id": 1, "cmd": "load", "time_limit_s": 0}',
        '{"id": 1, "cmd": "load", "time_limit_s": 1e9}',
        '{"id": 1, "cmd": "step", "skip_current": 1}',
        '{"id": 1, "cmd": "step", "delta": "yes"}',
        '{"id": 1, "cmd": "report", "source": "a", "trace": null}',
        '{"id": 1, "cmd": "__init__"}',
        '{"id": 1, "cmd": "Step"}',
        '{"id": 1}',
    ],
)
def test_malformed_intents_are_refused(line):
    with pytest.raises(P.BadRequest):
        P.decode_request(line)


def test_command_names_live_in_the_protocol_only():
    """No other module builds a request by hand: a command's name is written once."""
    offenders = []
    for path in ROOT.rglob("*.py"):
        if path.name == "protocol.py":
            continue
        text = path.read_text(encoding="utf-8")
        if re.search(r"""["']cmd["']\s*:""", text):
            offenders.append(str(path.relative_to(ROOT)))
    assert offenders == []


# --- events: the parent trusts nothing --------------------------------------------------


def test_events_are_checked_field_by_field():
    phase = P.decode_event({"event": "phase", "id": 3, "phase": "statement", "limit_s": 1e9,
                            "line": "12; rm -rf", "index": -1})
    assert isinstance(phase, P.Phase) and phase.line is None and phase.index is None
    # a kernel announcing a huge limit never lengthens the parent's own
    assert phase_limit(phase.limit_s, 25.0) == 25.0
    assert P.decode_event({"event": "phase", "id": 3, "limit_s": float("nan")}).limit_s is None
    assert P.decode_event({"event": "progress", "id": 1, "done": True, "total": 3}) is None
    assert P.decode_event({"event": "progress", "id": 1, "done": 2**40, "total": 3}) is None
    assert P.decode_event({"event": "output", "id": 1, "text": 5}) is None
    assert P.decode_event(["reply"]) is None
    assert P.decode_event({"event": "gradviz.other"}) is None
    out = P.decode_event({"event": "output", "id": 1, "text": "x" * 100, "line": 0}, max_text=10)
    assert out.text == "x" * 10 and out.line is None
    reply = P.decode_event({"event": "reply", "id": {"a": 1}, "ok": "yes", "state": [1]})
    assert isinstance(reply, P.Reply) and reply.id is None and reply.ok is False
    assert reply.state is None and reply.message
    bad_stop = P.decode_event({"event": "reply", "id": 1, "ok": True, "state": {},
                               "stop": {"reason": "paused", "line": 4,
                                        "path": [["into", [1]], ["exec", []]]}})
    assert bad_stop.stop == P.Stop("paused", 4)  # a malformed path is dropped whole
    assert P.decode_event({"event": "reply", "id": 1, "ok": True,
                           "stop": {"reason": "rm"}}).stop is None
    ready = P.decode_event({"event": "ready", "pid": "1", "cuda_available": 1, "mode": "root"})
    assert ready.pid is None and ready.cuda_available is False and ready.mode is None


def test_a_reply_round_trips_with_its_stop():
    stop = P.Stop("paused", 22, path=(("into", ()), ("continue", (24,))))
    reply = P.Reply(5, ok=True, state={"cursor": 1}, stop=stop)
    line = json.dumps(P.event_message(reply))
    assert P.decode_event(json.loads(line)) == reply


# --- the kernel decides the intents (both engines) ---------------------------------------


class Conversation:
    """An in-process kernel spoken to over the wire: requests encoded as the window
    encodes them, replies decoded as the window decodes them."""

    def __init__(self, trusted: bool):
        from gradviz.kernel_server import Kernel

        self.out = io.StringIO()
        self.kernel = Kernel(self.out, trusted=trusted)
        self.next_id = 1

    def ask(self, request: P.Request) -> P.Reply:
        rid, self.next_id = self.next_id, self.next_id + 1
        start = len(self.out.getvalue())
        self.kernel.serve(io.BytesIO((P.encode_request(rid, request) + "\n").encode()))
        replies = [
            event for line in self.out.getvalue()[start:].splitlines()
            if isinstance(event := P.decode_event(json.loads(line)), P.Reply) and event.id == rid
        ]
        assert len(replies) == 1, self.out.getvalue()[start:][-2000:]
        return replies[0]

    def close(self) -> None:
        self.kernel.release()


@pytest.fixture(params=["restricted", "trusted"])
def talk(request):
    conversation = Conversation(trusted=request.param == "trusted")
    yield conversation
    conversation.close()


def _plain(source: str) -> dict:
    namespace: dict = {}
    exec(compile(source, "<plain>", "exec"), namespace)
    return namespace


def test_f5_pressed_right_after_f11_resumes_the_paused_statement(talk):
    """The race of issue 20: F11 pauses inside the loop, F5 was pressed before the window
    saw the pause. The kernel reads F5 on its own state: it resumes the loop where it
    stands, it never runs the paused statement again from its start."""
    loop = next(i for i, line in enumerate(TRAIN.splitlines(), 1) if line.startswith("for "))
    reply = talk.ask(P.Load(source=TRAIN))
    cursor = next(s["index"] for s in reply.state["statements"] if s["line"] == loop)
    talk.ask(P.RunTo(index=cursor))
    reply = talk.ask(P.Step(mode="into"))
    assert reply.state["paused"]["line"] == loop + 1 and reply.stop.reason == "paused"
    assert reply.stop.path == (("into", ()),)
    reply = talk.ask(P.Continue())  # no breakpoint: the loop finishes, then the rest
    assert reply.ok and reply.stop == P.Stop("end") and reply.state["at_end"]
    # the loop ran three times in all, as plain Python runs it: three backward passes
    assert len(reply.state["backward_passes"]) == 3
    plain = _plain(TRAIN)
    assert reply.state["tensors"]["loss"]["value"] == pytest.approx(plain["loss"].item(), rel=1e-6)
    assert reply.state["tensors"]["loss"]["grad_fn"] == type(plain["loss"].grad_fn).__name__


def test_continue_stops_at_breakpoints_the_kernel_finds(talk):
    talk.ask(P.Load(source=TRAIN))
    reply = talk.ask(P.Continue(breakpoints=(BACKWARD_LINE,)))
    assert reply.stop.reason == "breakpoint" and reply.stop.line == BACKWARD_LINE
    assert reply.state["paused"]["line"] == BACKWARD_LINE
    assert reply.state["paused"]["iteration"] == 1
    reply = talk.ask(P.Continue(breakpoints=(BACKWARD_LINE,)))
    assert reply.state["paused"]["iteration"] == 2
    # a breakpoint on a top-level line stops before it runs; pressed there, it is passed
    talk.ask(P.Load(source=TRAIN))
    first = next(i for i, line in enumerate(TRAIN.splitlines(), 1) if line.startswith("x = "))
    reply = talk.ask(P.Continue(breakpoints=(first,)))
    assert reply.stop == P.Stop("breakpoint", first) and reply.state["paused"] is None
    at = reply.state["cursor"]
    assert reply.state["statements"][at]["line"] == first
    reply = talk.ask(P.Continue(breakpoints=(first,)))
    assert reply.state["at_end"] and reply.stop.reason == "end"


def test_run_to_backward_stops_before_each_backward(talk):
    source = "import torch\nx = torch.ones(2, requires_grad=True)\ny = (x * 3).sum()\n" \
             "y.backward()\nz = x.grad * 2\n"
    talk.ask(P.Load(source=source))
    reply = talk.ask(P.RunToBackward())
    assert reply.stop == P.Stop("backward", 4) and reply.state["paused"] is None
    assert reply.state["cursor"] == 3 and not reply.state["backward_passes"]
    reply = talk.ask(P.RunToBackward())  # pressed before it: it runs, then none is left
    assert reply.stop.reason == "no_backward" and reply.state["at_end"]
    plain = _plain(source)
    assert reply.state["tensors"]["x"]["grad"] == plain["x"].grad.tolist()
    assert len(reply.state["backward_passes"]) == 1


def test_step_passes_a_failed_statement_and_says_so(talk):
    source = "import torch\na = torch.ones(2)\nb = a @ torch.ones(3)\nc = a * 2\n"
    talk.ask(P.Load(source=source))
    reply = talk.ask(P.RunToEnd())
    assert reply.stop == P.Stop("failed", 3)
    with pytest.raises(RuntimeError) as plain_error:
        _plain(source)
    failed = reply.state["new_results"][-1]
    assert failed["error"]["type"] == type(plain_error.value).__name__
    reply = talk.ask(P.Step())  # the kernel passes the failed line, then runs line 4
    assert reply.stop.skipped == 3 and reply.stop.skipped_why == "failed"
    assert [r["line"] for r in reply.state["new_results"]] == [4]
    assert reply.state["at_end"]
    reply = talk.ask(P.Step())
    assert reply.stop == P.Stop("end") and reply.state["new_results"] == []


def test_step_skips_a_statement_the_window_stopped(talk):
    source = "x = 1\ny = 2\nz = 3\n"
    talk.ask(P.Load(source=source, run_to=1))
    reply = talk.ask(P.Step(skip_current=True))
    assert reply.stop.skipped == 2 and reply.stop.skipped_why == "stopped"
    assert [r["line"] for r in reply.state["new_results"]] == [3]


def test_step_out_outside_a_pause_is_refused_with_a_reason(talk):
    talk.ask(P.Load(source="x = 1\n"))
    reply = talk.ask(P.Step(mode="out"))
    assert not reply.ok and "step into first" in reply.message
    assert talk.ask(P.Step()).ok  # the kernel goes on


def test_run_to_line_inside_the_paused_statement_is_a_one_off_breakpoint(talk):
    loop = next(i for i, line in enumerate(TRAIN.splitlines(), 1) if line.startswith("for "))
    reply = talk.ask(P.Load(source=TRAIN))
    cursor = next(s["index"] for s in reply.state["statements"] if s["line"] == loop)
    talk.ask(P.RunTo(index=cursor))
    talk.ask(P.Step(mode="into"))
    reply = talk.ask(P.RunToLine(line=BACKWARD_LINE))
    assert reply.state["paused"]["line"] == BACKWARD_LINE
    assert reply.state["paused"]["iteration"] == 1


def _debugger_threads() -> list:
    import threading

    return [t for t in threading.enumerate() if t.name == "gradviz-debugger"]


@pytest.mark.parametrize("then", ["load", "reset", "step_back"])
def test_a_paused_statement_ends_with_its_session(talk, then):
    """A script loaded over, reset or stepped back while a loop is paused: the kernel
    ends the paused statement first (its worker thread ends, and in trusted mode line
    events go off), and the new run is plain Python's."""
    before = len(_debugger_threads())
    from gradviz.core import pyengine

    running = dict(pyengine._MONITOR.files)  # what other tests left paused
    talk.ask(P.Load(source=TRAIN))
    reply = talk.ask(P.Continue(breakpoints=(BACKWARD_LINE,)))
    assert reply.state["paused"]["line"] == BACKWARD_LINE
    assert len(_debugger_threads()) == before + 1
    if then == "load":
        reply = talk.ask(P.Load(source=TRAIN))
    elif then == "reset":
        reply = talk.ask(P.Reset())
    else:
        reply = talk.ask(P.StepBack())
    assert reply.ok and reply.state["paused"] is None
    assert len(_debugger_threads()) == before
    assert pyengine._MONITOR.files == running
    reply = talk.ask(P.RunToEnd())
    plain = _plain(TRAIN)
    assert reply.state["tensors"]["loss"]["value"] == pytest.approx(plain["loss"].item(), rel=1e-6)
    assert len(reply.state["backward_passes"]) == 3
