"""The kernel protocol, typed once: every request, reply and event as a frozen dataclass.

The window (:mod:`gradviz.ui.kernel_client`), ``gradviz run``
(:mod:`gradviz.runner`) and the kernel (:mod:`gradviz.kernel_server`) speak one
JSON object per line. This module is the only place that knows the command names
and the fields each carries, the way the Debug Adapter Protocol (and debugpy's
handler per request) does it:

- a client builds a request object (``Step(mode="into")``) and sends
  :func:`encode_request`; the kernel reads it back with :func:`decode_request`,
  which refuses anything malformed with :class:`BadRequest`, and hands it to the
  handler registered for its class;
- the kernel answers with :class:`Reply` and may send :class:`Phase`,
  :class:`Progress`, :class:`Output` and :class:`Result` events first; the parent
  reads each line back with :func:`decode_event`, which checks every field: the
  parent trusts nothing the kernel says (a script in a restricted kernel may have
  escaped the interpreter and write any line it likes).

The window sends *intents* (:class:`Step`, :class:`Continue`,
:class:`RunToBackward`, :class:`RunToEnd`, :class:`RunToLine`): the kernel decides
on its current state what they mean (resume a paused statement, skip a failed
one, stop at a breakpoint) and says why it stopped in :attr:`Reply.stop`. So a
key pressed while an earlier request still runs acts on the state that request
left, not on what the window showed when the key went down.

Torch-free and Qt-free: both sides import it.
"""

from __future__ import annotations

import json
import math
import types
from dataclasses import MISSING, asdict, dataclass, field, fields
from typing import Any, ClassVar, Literal, Union, get_args, get_origin, get_type_hints

__all__ = [
    "MAX_REQUEST_BYTES", "BadRequest", "Request", "REQUESTS", "decode_request",
    "encode_request", "request_of", "Event", "Ready", "Phase", "Progress", "Output",
    "Result", "Reply", "Stop", "decode_event",
]

#: a request line longer than this is refused before parsing
MAX_REQUEST_BYTES = 8 * 1024 * 1024
#: integers in requests and events stay in this range (JSON readers differ past it)
MAX_INT = 2**31
#: longest string kept from an event field the parent shows (a phase name, a reason)
MAX_NAME = 200

StepMode = Literal["over", "into", "out"]
DebugMode = Literal["into", "over", "out", "continue", "backward"]


class BadRequest(ValueError):
    """A request the kernel cannot act on; the reply says why."""


# --- requests -----------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Request:
    """One command to the kernel. ``delta``: reply with what changed since the last
    state sent (:mod:`gradviz.graph.delta`), not the whole state."""

    CMD: ClassVar[str] = ""
    #: the request replaces the kernel's session (its statement limit comes with it)
    RESETS: ClassVar[bool] = False
    #: the request moves the script forward or back (a step on the window's timeline)
    IS_STEP: ClassVar[bool] = False
    delta: bool = False


REQUESTS: dict[str, type[Request]] = {}


def _command(name: str, *, resets: bool = False, step: bool = False) -> Any:
    def register(cls: type[Request]) -> type[Request]:
        cls.CMD = name
        cls.RESETS = resets
        cls.IS_STEP = step
        if name in REQUESTS:
            raise TypeError(f"command {name!r} declared twice")
        REQUESTS[name] = cls
        return cls

    return register


@_command("ping")
@dataclass(frozen=True, kw_only=True)
class Ping(Request):
    """Is the kernel there? Replies ``{"pong": true}``."""


@_command("shutdown")
@dataclass(frozen=True, kw_only=True)
class Shutdown(Request):
    """End the kernel after replying."""


@_command("snapshot")
@dataclass(frozen=True, kw_only=True)
class Snapshot(Request):
    """The current state again (a paused statement stays paused)."""


@_command("load", resets=True, step=True)
@dataclass(frozen=True, kw_only=True)
class Load(Request):
    """A new session on ``source``; then run ``run_to`` statements (replays use it),
    zeroing every leaf's ``.grad`` at the cursors in ``zero_points``."""

    source: str = ""
    device: str = "cpu"
    run_to: int | None = None
    zero_points: tuple[int, ...] = ()
    time_limit_s: float | None = None
    filename: str = ""


@_command("set_device", step=True)
@dataclass(frozen=True, kw_only=True)
class SetDevice(Request):
    """Re-run the script on ``device`` up to ``run_to`` statements."""

    device: str
    run_to: int | None = None


@_command("step", step=True)
@dataclass(frozen=True, kw_only=True)
class Step(Request):
    """F10 / F11 / Shift+F11, an intent the kernel resolves on its state:

    - paused inside a statement: resume it by ``mode`` (``over`` the next statement
      at this depth, ``into`` the next at any depth, ``out`` of the loop or call);
    - at a statement that failed (or was stopped): move past it, then go on;
    - ``skip_current``: the statement at the cursor was killed by Stop (the window
      knows, the restarted kernel does not): move past it without running it;
    - else run the statement at the cursor: whole for ``over``, under the debugger
      for ``into`` (it pauses at its first nested statement).
    """

    mode: StepMode = "over"
    skip_current: bool = False


@_command("skip")
@dataclass(frozen=True, kw_only=True)
class Skip(Request):
    """Move past a failed statement (``force``: past the statement at the cursor)."""

    force: bool = False


@_command("run_to_end", step=True)
@dataclass(frozen=True, kw_only=True)
class RunToEnd(Request):
    """Every statement left, breakpoints or not: a paused statement finishes where it
    stands first, a failed one at the cursor is passed; stops at the next failure
    unless ``keep_going``."""

    keep_going: bool = False


@_command("run_to", step=True)
@dataclass(frozen=True, kw_only=True)
class RunTo(Request):
    """Run until ``index`` statements have run (behind the cursor: replay from the start)."""

    index: int


@_command("run_to_line", step=True)
@dataclass(frozen=True, kw_only=True)
class RunToLine(Request):
    """Run to the cursor's line: inside the paused statement, as a one-off breakpoint;
    else through the statement on ``line`` (a failed statement before it is passed)."""

    line: int


@_command("continue", step=True)
@dataclass(frozen=True, kw_only=True)
class Continue(Request):
    """F5: run to the next breakpoint, before a statement whose first line has one or
    inside a body where one is; to the end when none is ahead. Pressed at the top
    level, a breakpoint on the statement at the cursor is passed, not stopped at."""

    breakpoints: tuple[int, ...] = ()


@_command("run_to_backward", step=True)
@dataclass(frozen=True, kw_only=True)
class RunToBackward(Request):
    """Ctrl+F11: run until just before the next statement that calls ``backward()``
    or ``autograd.grad``, at any depth (or a breakpoint on the way)."""

    breakpoints: tuple[int, ...] = ()


@_command("step_back", resets=False, step=True)
@dataclass(frozen=True, kw_only=True)
class StepBack(Request):
    """Undo the last statement by replaying those before it."""


@_command("reset", step=True)
@dataclass(frozen=True, kw_only=True)
class Reset(Request):
    """Back to before the first statement."""


@_command("zero_grad", step=True)
@dataclass(frozen=True, kw_only=True)
class ZeroGrad(Request):
    """Set every leaf's ``.grad`` to None (the reply's state names them: ``zeroed``)."""


@_command("debug", step=True)
@dataclass(frozen=True, kw_only=True)
class Debug(Request):
    """Run (or resume) the statement at the cursor under the debugger until ``mode``
    says stop. The timeline replays a paused step's path with these."""

    mode: DebugMode = "into"
    breakpoints: tuple[int, ...] = ()


@_command("debug_stop", step=True)
@dataclass(frozen=True, kw_only=True)
class DebugStop(Request):
    """End the paused statement where it stands (its work so far is kept)."""


@_command("report", resets=True)
@dataclass(frozen=True, kw_only=True)
class Report(Request):
    """Run a whole script headless (``gradviz run``) and reply with its report; each
    statement's result is sent as a :class:`Result` event the moment it ends."""

    source: str
    device: str = "cpu"
    keep_going: bool = False
    layout: bool = False
    time_limit_s: float | None = None
    trace: bool = False
    filename: str = ""


#: the most breakpoints one request may name
MAX_BREAKPOINTS = 10_000


_HINTS: dict[type[Request], dict[str, Any]] = {}


def _hints(cls: type[Request]) -> dict[str, Any]:
    """Each field's type, resolved once per class."""
    hints = _HINTS.get(cls)
    if hints is None:
        hints = _HINTS[cls] = get_type_hints(cls)
    return hints


def _fits(value: Any, hint: Any) -> tuple[bool, Any]:
    """Whether a JSON value fits a field's type, and the value as the field keeps it."""
    origin = get_origin(hint)
    if origin in (Union, types.UnionType):
        for option in get_args(hint):
            ok, kept = _fits(value, option)
            if ok:
                return True, kept
        return False, None
    if origin is Literal:
        return (type(value) is str and value in get_args(hint)), value
    if origin is tuple:  # tuple[int, ...]: a JSON array of small non-negative ints
        if not isinstance(value, list) or len(value) > MAX_BREAKPOINTS:
            return False, None
        ok = all(type(v) is int and 0 <= v < MAX_INT for v in value)
        return ok, tuple(value) if ok else None
    if hint is type(None):
        return value is None, None
    if hint is bool:
        return type(value) is bool, value
    if hint is int:
        return (type(value) is int and abs(value) <= MAX_INT), value
    if hint is float:
        ok = type(value) in (int, float) and math.isfinite(value)
        return ok, float(value) if ok else None
    if hint is str:
        return isinstance(value, str), value
    raise TypeError(f"no wire form for {hint!r}")  # a declaration error, caught by tests


def request_of(cmd: Any, **params: Any) -> Request:
    """The request ``cmd`` with ``params`` (as a JSON object would carry them): checked
    field by field, :class:`BadRequest` with the reason otherwise."""
    cls = REQUESTS.get(cmd) if isinstance(cmd, str) else None
    if cls is None:
        raise BadRequest(f"unknown command {str(cmd)[:40]!r}")
    hints = _hints(cls)
    names = {f.name: f for f in fields(cls)}
    kept: dict[str, Any] = {}
    for name, value in params.items():
        if name not in names:
            raise BadRequest(f"'{cmd}' takes no field {str(name)[:40]!r}")
        ok, value = _fits(value, hints[name])
        if not ok:
            raise BadRequest(f"'{name}' has the wrong type")
        kept[name] = value
    for name, f in names.items():
        if name not in kept and f.default is MISSING and f.default_factory is MISSING:
            raise BadRequest(f"'{cmd}' needs '{name}'")
    request = cls(**kept)
    _check_values(request)
    return request


def _check_values(request: Request) -> None:
    limit = getattr(request, "time_limit_s", None)
    if limit is not None and not 0 < limit <= 3600:
        raise BadRequest("'time_limit_s' must be between 0 and 3600")
    if isinstance(request, (RunToLine, RunTo)):
        value = request.line if isinstance(request, RunToLine) else request.index
        if value < 0:
            raise BadRequest("a line or index is never negative")
    run_to = getattr(request, "run_to", None)
    if run_to is not None and run_to < 0:
        raise BadRequest("'run_to' is never negative")


def decode_request(line: str | bytes) -> tuple[int | str | None, Request]:
    """One request line: its id and its request. :class:`BadRequest` says what is
    wrong with a malformed one (the kernel replies with it and stays up)."""
    if len(line) > MAX_REQUEST_BYTES:
        raise BadRequest(f"request of {len(line):,} bytes; the limit is {MAX_REQUEST_BYTES:,}")
    try:
        message = json.loads(line)
    except RecursionError:
        raise BadRequest("request nested too deeply") from None
    except (ValueError, TypeError) as exc:  # JSONDecodeError, huge integers, bad UTF-8
        raise BadRequest(f"bad JSON: {str(exc)[:200]}") from None
    if not isinstance(message, dict):
        raise BadRequest("a request must be a JSON object")
    rid = message.pop("id", None)
    if rid is not None and not (isinstance(rid, (int, str)) and not isinstance(rid, bool)):
        raise BadRequest("'id' must be an integer or a string")
    if isinstance(rid, int) and abs(rid) > 2**53:
        raise BadRequest("'id' is out of range")
    cmd = message.pop("cmd", None)
    return rid, request_of(cmd, **message)


def encode_request(rid: int | str | None, request: Request) -> str:
    """The line (without its newline) that carries ``request`` with id ``rid``."""
    body: dict[str, Any] = {"id": rid, "cmd": request.CMD}
    for f in fields(request):
        value = getattr(request, f.name)
        if value == f.default:
            continue  # the kernel fills it in: lines stay short
        body[f.name] = list(value) if isinstance(value, tuple) else value
    return json.dumps(body)


# --- events ---------------------------------------------------------------------------


def _int(value: Any, low: int = 0) -> int | None:
    return value if type(value) is int and low <= value < MAX_INT else None


def _text(value: Any, limit: int = MAX_NAME) -> str | None:
    return value[:limit] if isinstance(value, str) else None


def _seconds(value: Any) -> float | None:
    if type(value) in (int, float) and math.isfinite(value) and value >= 0:
        return float(value)
    return None


@dataclass(frozen=True)
class Event:
    """A message from the kernel. ``id``: the request it belongs to (None: none)."""

    EVENT: ClassVar[str] = ""
    id: int | str | None


@dataclass(frozen=True)
class Ready(Event):
    """The kernel started and says what it can do (once, before any request)."""

    EVENT: ClassVar[str] = "ready"
    pid: int | None = None
    cuda_available: bool = False
    cuda_reason: str | None = None
    workdir: str | None = None
    #: the OS layers the kernel applied (gradviz.core.confine's report), checked by
    #: gradviz.runner.os_layer_missing; kept as the kernel sent it (a dict or None)
    confinement: Any = None
    mode: str | None = None

    def info(self) -> dict[str, Any]:
        """What the window and ``gradviz run`` show of it."""
        return {k: v for k, v in asdict(self).items() if k != "id" and v is not None}


@dataclass(frozen=True)
class Phase(Event):
    """A phase of work starts now: the parent's watchdog times it. ``limit_s`` is what
    the kernel announces; the parent never waits longer than its own limit."""

    EVENT: ClassVar[str] = "phase"
    phase: str = "start"
    limit_s: float | None = None
    line: int | None = None
    index: int | None = None
    nodes: int | None = None

    def as_dict(self) -> dict[str, Any]:
        """The phase as the timeout messages read it (no None fields)."""
        return {k: v for k, v in asdict(self).items() if v is not None and k != "id"}


@dataclass(frozen=True)
class Progress(Event):
    EVENT: ClassVar[str] = "progress"
    done: int = 0
    total: int = 0


@dataclass(frozen=True)
class Output(Event):
    """print output of the running statement, as it is written, and the line that wrote it."""

    EVENT: ClassVar[str] = "output"
    text: str = ""
    line: int | None = None


@dataclass(frozen=True)
class Result(Event):
    """One statement's result during a :class:`Report` (a JSON object, read by the CLI)."""

    EVENT: ClassVar[str] = "result"
    result: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Stop:
    """Why an intent stopped where it did: the window's status line reads it.

    ``reason``: ``paused`` (inside a statement), ``breakpoint`` (before the statement
    on ``line``, or paused at it), ``backward`` (before the statement on ``line``,
    which calls backward), ``failed`` (the statement on ``line`` failed), ``end``
    (nothing left), ``done`` (the intent's target was reached), ``no_backward`` (no
    backward() call is left). ``skipped``: the line of a failed or stopped statement
    passed first, and ``skipped_why`` (``failed``, ``stopped``).
    """

    reason: str
    line: int | None = None
    skipped: int | None = None
    skipped_why: str | None = None
    #: at a pause: the debugger requests (mode, breakpoints) that led there from the
    #: statement's start, so the window's timeline can replay its way back to it
    path: tuple[tuple[str, tuple[int, ...]], ...] = ()

    REASONS: ClassVar[frozenset[str]] = frozenset(
        {"paused", "breakpoint", "backward", "failed", "end", "done", "no_backward"}
    )

    def to_wire(self) -> dict[str, Any]:
        out = {k: v for k, v in asdict(self).items() if v is not None and k != "path"}
        if self.path:
            out["path"] = [[mode, list(points)] for mode, points in self.path]
        return out

    @classmethod
    def from_wire(cls, value: Any) -> Stop | None:
        if not isinstance(value, dict) or value.get("reason") not in cls.REASONS:
            return None
        why = value.get("skipped_why")
        return cls(
            reason=value["reason"],
            line=_int(value.get("line"), 1),
            skipped=_int(value.get("skipped"), 1),
            skipped_why=why if why in ("failed", "stopped") else None,
            path=_path(value.get("path")),
        )


@dataclass(frozen=True)
class Reply(Event):
    """The one answer to a request: ``ok`` with a ``state`` (a dict the state decoder
    reads; None for shutdown), or not, with a ``message``."""

    EVENT: ClassVar[str] = "reply"
    ok: bool = False
    state: Any = None
    message: str | None = None
    #: a short machine-readable kind of failure (``device_unavailable``)
    error: str | None = None
    traceback: str | None = None
    stop: Stop | None = None


def _path(value: Any) -> tuple[tuple[str, tuple[int, ...]], ...]:
    """A debugger path as the kernel sent it, or () when any part of it is malformed."""
    debug_modes = get_args(DebugMode)
    if not isinstance(value, list) or len(value) > 10_000:
        return ()
    out = []
    for item in value:
        if not (isinstance(item, list) and len(item) == 2 and item[0] in debug_modes):
            return ()
        ok, points = _fits(item[1], tuple[int, ...])
        if not ok:
            return ()
        out.append((item[0], points))
    return tuple(out)


def _event_id(value: Any) -> int | str | None:
    if type(value) is int and abs(value) <= 2**53:
        return value
    if isinstance(value, str) and len(value) <= MAX_NAME:
        return value
    return None


def decode_event(message: Any, *, max_text: int = 1 << 20) -> Event | None:
    """A kernel message as its event, every field checked (None: not an event of the
    protocol; the caller skips it). Fields of the wrong type are dropped, never
    trusted: a ``limit_s`` of 1e9 is read, but the parent's own limits cap it."""
    if not isinstance(message, dict):
        return None
    kind = message.get("event")
    rid = _event_id(message.get("id"))
    if kind == "reply":
        text = _text(message.get("message"), max_text)
        ok = message.get("ok") is True
        state = message.get("state")
        return Reply(
            rid, ok=ok, state=state if isinstance(state, dict) else None,
            message=text if text is not None or ok else "the kernel gave no reason",
            error=_text(message.get("error")), traceback=_text(message.get("traceback"), 20_000),
            stop=Stop.from_wire(message.get("stop")),
        )
    if kind == "phase":
        return Phase(
            rid, phase=_text(message.get("phase")) or "start",
            limit_s=_seconds(message.get("limit_s")), line=_int(message.get("line"), 1),
            index=_int(message.get("index")), nodes=_int(message.get("nodes")),
        )
    if kind == "progress":
        done, total = _int(message.get("done")), _int(message.get("total"))
        if done is None or total is None:
            return None
        return Progress(rid, done=done, total=total)
    if kind == "output":
        text = message.get("text")
        if not isinstance(text, str):
            return None
        return Output(rid, text=text[:max_text], line=_int(message.get("line"), 1))
    if kind == "result":
        result = message.get("result")
        return Result(rid, result=result) if isinstance(result, dict) else None
    if kind == "ready":
        return Ready(
            rid, pid=_int(message.get("pid")),
            cuda_available=message.get("cuda_available") is True,
            cuda_reason=_text(message.get("cuda_reason"), 2000),
            workdir=_text(message.get("workdir"), 4096),
            confinement=message.get("confinement"),
            mode=message.get("mode") if message.get("mode") in ("trusted", "restricted") else None,
        )
    return None


def event_message(event: Event) -> dict[str, Any]:
    """The JSON object that carries ``event`` (the kernel's side)."""
    body: dict[str, Any] = {"id": event.id, "event": event.EVENT}
    for f in fields(event):
        if f.name == "id":
            continue
        value = getattr(event, f.name)
        if isinstance(value, Stop):
            value = value.to_wire()
        if value is None and f.name not in ("limit_s",):
            continue
        body[f.name] = value
    return body

