"""Step through a statement like a debugger: into loops, ifs and script functions.

gradviz's interpreter walks the syntax tree recursively, so it cannot hand a
half-run loop back to its caller. The debugger runs the statement at the
session's cursor on a worker thread instead; before every nested statement the
interpreter calls the session's statement hook, and when the stepping mode says
"stop here" the worker parks on a queue until the next command. While it is
parked, the controlling thread reads the state (the worker touches nothing), so
the graph, the tensors and the current frame's locals are the state of that
moment. Each torch state the statement sets (grad mode, the op guard, default
device) is thread-local or set by the worker itself, so the controller never
runs under the script's modes.

Modes, as in VS Code and PyCharm:

``into``     stop at the next statement at any depth (a loop body, an ``if``
             branch, the body of a script function or an ``nn.Module.forward``);
``over``     stop at the next statement no deeper than this one;
``out``      stop at the next statement shallower than this one (finish the
             loop or call);
``continue`` stop only at a breakpoint line;
``backward`` stop just before the next statement that calls ``backward()``
             or ``autograd.grad`` (or at a breakpoint).

A statement at the top level never pauses: reaching one means the statement
the debugger started has finished, and its result is returned as a normal step.
"""

from __future__ import annotations

import ast
import queue
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gradviz.graph.statements import calls_backward

from .errors import Stopped

if TYPE_CHECKING:
    from .session import Session, StatementResult

MODES = ("into", "over", "out", "continue", "backward")

#: the worker's stack: script recursion (max_call_depth) runs on it
WORKER_STACK_BYTES = 256 << 20


class DebugStopped(Stopped):
    """Stop pressed while a statement was paused: it ends where it stood (a script's
    ``except`` cannot catch it, like any refusal)."""


@dataclass
class Pause:
    """Where a paused statement stands."""

    statement: int
    line: int
    depth: int
    #: innermost running loop: 1-based iteration and its length (None for while loops
    #: and iterables without a length)
    iteration: int | None
    iterations: int | None
    #: script functions being run, outermost first (``Net.forward``)
    frames: list[str] = field(default_factory=list)
    #: line of each frame's call site, aligned with frames
    call_lines: list[int] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "statement": self.statement,
            "line": self.line,
            "depth": self.depth,
            "iteration": self.iteration,
            "iterations": self.iterations,
            "frames": [
                {"name": name, "call_line": line}
                for name, line in zip(self.frames, self.call_lines)
            ],
        }


class Debugger:
    """Runs one top-level statement of ``session`` on a worker thread that pauses."""

    def __init__(self, session: Session):
        self.session = session
        self._to_worker: queue.Queue[tuple[str, frozenset[int]]] = queue.Queue()
        self._to_main: queue.Queue[tuple[str, Any]] = queue.Queue()
        self._thread: threading.Thread | None = None
        self.mode = "into"
        self.breakpoints: frozenset[int] = frozenset()
        self.reference_depth = 0
        self.pause: Pause | None = None
        self._result: Any = None
        self._error: BaseException | None = None

    @property
    def active(self) -> bool:
        """A statement is paused in the middle."""
        return self._thread is not None and self.pause is not None

    # --- the controller's side --------------------------------------------------------

    def resume(self, mode: str, breakpoints: frozenset[int] = frozenset()) -> Pause | StatementResult:
        """Run until the next stop; a Pause, or the statement's result when it ended."""
        if mode not in MODES:
            raise ValueError(f"unknown stepping mode {mode!r}; one of {', '.join(MODES)}")
        self.breakpoints = breakpoints
        if self._thread is None:
            self.mode = mode
            self.reference_depth = 0
            self._start()
        else:
            assert self.pause is not None
            self.mode = mode
            self.reference_depth = self.pause.depth
            self._to_worker.put(("go", breakpoints))
        return self._wait()

    def stop(self) -> StatementResult | None:
        """End a paused statement where it stands (its effects so far are kept)."""
        if self._thread is None:
            return None
        self._to_worker.put(("stop", frozenset()))
        outcome = self._wait()
        assert not isinstance(outcome, Pause)
        return outcome

    def _start(self) -> None:
        session = self.session

        def work() -> None:
            try:
                self._result = session.step()
            except BaseException as exc:  # noqa: BLE001 - handed to the controller
                self._error = exc
            finally:
                self._to_main.put(("done", None))

        previous = threading.stack_size()
        threading.stack_size(WORKER_STACK_BYTES)
        try:
            self._thread = threading.Thread(target=work, name="gradviz-debugger", daemon=True)
            self._thread.start()
        finally:
            threading.stack_size(previous)

    def _wait(self) -> Pause | StatementResult:
        kind, info = self._to_main.get()
        if kind == "paused":
            self.pause = info
            return info
        assert self._thread is not None
        self._thread.join()
        self._thread = None
        self.pause = None
        if self._error is not None:
            error, self._error = self._error, None
            raise error
        return self._result

    # --- the worker's side (called by the session's statement hook) -------------------

    def should_pause(self, stmt: ast.stmt, depth: int) -> bool:
        if depth < 1:
            return False
        if stmt.lineno in self.breakpoints:
            return True
        if self.mode == "into":
            return True
        if self.mode == "over":
            return depth <= self.reference_depth
        if self.mode == "out":
            return depth < self.reference_depth
        if self.mode == "backward":
            return calls_backward(stmt)
        return False  # continue: breakpoints only

    def park(self, pause: Pause) -> None:
        """Hand the pause to the controller and wait for its next command."""
        interp = self.session.interpreter
        self.session.events.emit("phase", "paused", {"line": pause.line})
        started = time.monotonic()
        self._to_main.put(("paused", pause))
        command, _ = self._to_worker.get()
        paused_s = time.monotonic() - started
        if interp.deadline is not None:
            # time spent paused is the learner's, not the statement's nor the run's
            interp.deadline += paused_s
        # the op guard keeps its own copy of the deadline: a 40 s pause in a loop made
        # the next op "run past its time limit"
        guard = getattr(interp, "format_guard", None)
        if guard is not None and getattr(guard, "deadline", None) is not None:
            guard.deadline += paused_s
        interp.discount_pause(paused_s)
        self.session.events.emit("phase", "statement", {"line": pause.line})
        if command == "stop":
            raise DebugStopped(f"stopped at {interp.place()}: the statement's work so far is kept")
