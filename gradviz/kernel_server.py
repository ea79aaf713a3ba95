"""The kernel's request handler: one Session, answered over JSON lines.

Imported by :mod:`gradviz.kernel` only after the process has confined
itself (torch and numpy start threads at import, and Landlock binds only the
threads started after it), so this module may import anything.
"""

from __future__ import annotations

import gc
import os
import signal
import threading
import time
import traceback
from collections.abc import Iterator
from dataclasses import replace
from typing import IO, Any

from gradviz.core.debugger import Pause
from gradviz.core.guards import Limits, arm_disable_dynamo_wrappers
from gradviz.core.report import json_report, statement_json
from gradviz.core.session import DeviceUnavailable, Session, cuda_unavailable_reason
from gradviz.graph.delta import StateEncoder, StateHint
from gradviz.graph.gcpause import paused_gc
from gradviz.graph.layout import IncrementalLayout, layout
from gradviz.graph.statements import calls_backward
from gradviz.graph.wire import dumps
from gradviz.protocol import (
    MAX_REQUEST_BYTES,
    BadRequest,
    Continue,
    Debug,
    DebugStop,
    Load,
    Ping,
    Report,
    Request,
    Reset,
    RunTo,
    RunToBackward,
    RunToEnd,
    RunToLine,
    SetDevice,
    Shutdown,
    Skip,
    Snapshot,
    Step,
    StepBack,
    Stop,
    ZeroGrad,
    decode_request,
    request_of,
)
from gradviz.runner import MAX_OUTPUT_CHARS

#: restricted mode, gradviz run: seconds of work a whole script may take (statements
#: and captures), so that with the kernel's start and the report a refusal comes
#: within 40 s; the window's sessions keep the interpreter's own budget
REPORT_RUN_SECONDS = 30.0
#: the most graph nodes a report captures (gradviz run, gradviz export)
REPORT_CAPTURE_NODES = 50_000

#: requests that act on a paused statement; any other ends it where it stands first
_KEEP_PAUSE = (Step, Continue, RunToBackward, RunToEnd, RunToLine, Debug, DebugStop, Snapshot)
#: error types of a statement the user (or a limit) stopped: Step passes it as stopped
_STOPPED = frozenset({"DebugStopped", "Stopped"})


class Kernel:
    def __init__(self, out: IO[str], trusted: bool = False):
        self.out = out
        #: trusted: sessions run the script as real Python (gradviz.core.pyengine); the
        #: mode is the kernel's, fixed when it starts (a confined kernel never runs one)
        self.trusted = trusted
        #: the script's file (tracebacks, the debugger), as the last load/report named it
        self.filename: str | None = None
        #: the last state sent, so a window that asks gets only what changed
        self.encoder = StateEncoder()
        #: positions as the last state sent them, and what changed since (for the encoder)
        self._positions_json: dict[str, list[float]] | None = None
        self._hint: StateHint | None = None
        #: the picture's layout, kept between steps (new nodes are placed around it)
        self.layout = IncrementalLayout()
        self.session = self._new_session("", "cpu")
        self._request_id: Any = None
        #: print output a report may still carry (streamed results and the reply each
        #: get MAX_OUTPUT_CHARS): a script printing 10 MB a statement must not make a
        #: reply the parent refuses to read (gradviz.runner.MAX_LINE_BYTES)
        self._output_left = MAX_OUTPUT_CHARS
        self._debug_path: list[tuple[str, tuple[int, ...]]] = []

    # --- protocol ---------------------------------------------------------------

    def send(self, message: dict[str, Any]) -> None:
        self.out.write(dumps(message) + "\n")
        self.out.flush()

    def phase(self, name: str, info: dict[str, Any] | None = None) -> None:
        """Tell the parent's watchdog that a phase of work starts now."""
        self._flush_output()  # print output written so far goes first (a pause shows it)
        self.send(
            {
                "id": self._request_id,
                "event": "phase",
                "phase": name,
                # a trusted session has no limit unless one was asked for
                "limit_s": (
                    None if self.trusted and not self._asked_limit
                    else self.session.limits.max_statement_seconds
                ),
                **(info or {}),
            }
        )

    def progress(self, done: int, total: int) -> None:
        self.send({"id": self._request_id, "event": "progress", "done": done, "total": total})

    def state(self, results: list[Any] | None = None) -> dict[str, Any]:
        # the state's JSON, its layout and (in serve) its delta make tens of thousands
        # of small dicts and lists on a big graph, kept or freed by reference counting:
        # the cyclic collector's full passes over them doubled the step after a run
        with paused_gc():
            return self._state(results)

    def _state(self, results: list[Any] | None) -> dict[str, Any]:
        # live: sent at once, so the next step may turn its glows off in place
        snap = self.session.snapshot(live=True)
        graph = self.session.graph  # the captured networkx graph itself: no JSON round trip
        self.phase("layout", {"nodes": graph.number_of_nodes()})
        started = time.perf_counter()
        changes = self.session.take_graph_changes()
        positions = self.layout.update(
            graph, changes.nodes if changes else None, changes.removed if changes else None
        )
        moved = self.layout.moved if changes is not None else None
        if changes is None or moved is None or self._positions_json is None:
            self._positions_json = {
                str(k): [float(x), float(y)] for k, (x, y) in positions.items()
            }
        else:
            for k in changes.removed:
                self._positions_json.pop(k, None)
            for node in moved:
                x, y = positions[node]
                self._positions_json[str(node)] = [float(x), float(y)]
        snap["positions"] = dict(self._positions_json)
        store = self.session._json_store
        self._hint = None
        if changes is not None and store is not None:
            self._hint = StateHint(
                nodes=store[1], edges=store[2], changed=changes.nodes, removed=changes.removed,
                changed_edges=changes.edges, removed_edges=changes.removed_edges, moved=moved,
                renewed=changes.renewed, renewed_edges=changes.renewed_edges,
            )
        snap["layout_s"] = time.perf_counter() - started
        snap["new_results"] = [r.to_json() for r in (results or [])]
        snap["at_end"] = self.session.at_end
        snap["zero_points"] = sorted(self.session.zero_points)
        return snap

    def handle(self, request: Request | dict[str, Any]) -> dict[str, Any]:
        """Answer one request with the state it leaves (a handler per command). A dict
        is read as its JSON object would be (tests drive the kernel in-process)."""
        if isinstance(request, dict):
            params = {k: v for k, v in request.items() if k not in ("id", "cmd")}
            request = request_of(request.get("cmd"), **params)
        self._stop = None
        if self.session.paused is not None and not isinstance(request, _KEEP_PAUSE):
            self.session.stop_debugging()  # any other command ends the paused statement first
        handler = getattr(self, f"_on_{request.CMD}")
        return handler(request)

    # --- handlers: one per command (gradviz.protocol names them) --------------------

    def _on_ping(self, request: Ping) -> dict[str, Any]:
        return {"pong": True}

    def _on_snapshot(self, request: Snapshot) -> dict[str, Any]:
        return self.state([])

    def _on_load(self, request: Load) -> dict[str, Any]:
        self._note_request(request)
        s = self._new_session(request.source, request.device, _limits(request))
        s.zero_points = {p for p in request.zero_points if p > 0}
        return self.state(self._run_to(request.run_to))

    def _on_set_device(self, request: SetDevice) -> dict[str, Any]:
        self.session.set_device(request.device)
        return self.state(self._run_to(request.run_to))

    def _on_skip(self, request: Skip) -> dict[str, Any]:
        if request.force:
            self.session.skip_current()
        else:
            self.session.skip_failed()
        return self.state([])

    def _on_run_to(self, request: RunTo) -> dict[str, Any]:
        return self.state(self._run_to(request.index))

    def _on_step_back(self, request: StepBack) -> dict[str, Any]:
        return self.state(self.session.step_back(self.progress))

    def _on_reset(self, request: Reset) -> dict[str, Any]:
        self.session.reset()
        return self.state([])

    def _on_zero_grad(self, request: ZeroGrad) -> dict[str, Any]:
        zeroed = self.session.zero_grad()
        st = self.state([])
        st["zeroed"] = zeroed
        return st

    def _on_debug(self, request: Debug) -> dict[str, Any]:
        results: list[Any] = []
        self._debug(request.mode, frozenset(request.breakpoints), results)
        return self.state(results)

    def _on_debug_stop(self, request: DebugStop) -> dict[str, Any]:
        stopped = self.session.stop_debugging()
        return self.state([stopped] if stopped else [])

    # The intents: what a key means is decided here, on the session as it stands when
    # the request is read (a key pressed while the last request ran acts on the state
    # that request left), and the reply says where and why it stopped.

    def _on_step(self, request: Step) -> dict[str, Any]:
        s = self.session
        results: list[Any] = []
        if s.paused is not None:
            self._debug(request.mode, frozenset(), results)
            return self.state(results)
        skipped = self._pass_failed(skip_current=request.skip_current)
        if s.at_end:
            self._stop = Stop("end", skipped=skipped[0], skipped_why=skipped[1])
            return self.state(results)
        if request.mode == "out":
            raise BadRequest("step out works inside a paused loop or call: step into first")
        if request.mode == "into":
            self._debug("into", frozenset(), results)
        else:
            r = s.step()
            results.extend([r] if r else [])
        self._stop = replace(self._stop or Stop("done"), skipped=skipped[0], skipped_why=skipped[1])
        return self.state(results)

    def _on_run_to_end(self, request: RunToEnd) -> dict[str, Any]:
        s = self.session
        results: list[Any] = []
        if s.paused is not None:
            # finish the paused statement where it stands, then the rest
            if self._debug("continue", frozenset(), results) or self._failed(results):
                return self.state(results)
        elif not request.keep_going:
            self._pass_failed()
        results += s.run_to_end(request.keep_going, self.progress)
        self._stop = Stop("failed", results[-1].line) if self._failed(results) else Stop("end")
        return self.state(results)

    def _on_run_to_line(self, request: RunToLine) -> dict[str, Any]:
        s = self.session
        line = request.line
        results: list[Any] = []
        pause = s.paused
        if pause is not None:
            stmt = s.statements[pause.statement]
            if stmt.line < line <= stmt.end_line:
                # inside the paused statement: run to that line, a one-off breakpoint
                self._debug("continue", frozenset({line}), results)
                return self.state(results)
            s.stop_debugging()
        if self._failed_at_cursor() and line > s.statements[s.cursor].end_line:
            s.skip_failed()
        results += s.run_to_line(line, self.progress)
        self._stop = Stop("failed", results[-1].line) if self._failed(results) else Stop("done")
        return self.state(results)

    def _on_continue(self, request: Continue) -> dict[str, Any]:
        return self.state(self._go_on(frozenset(request.breakpoints), to_backward=False))

    def _on_run_to_backward(self, request: RunToBackward) -> dict[str, Any]:
        return self.state(self._go_on(frozenset(request.breakpoints), to_backward=True))

    def _go_on(self, breakpoints: frozenset[int], to_backward: bool) -> list[Any]:
        """F5 (``to_backward`` False) and Ctrl+F11: statement by statement, entering
        those with a breakpoint inside (or, for backward, every one) under the
        debugger, until a pause, a breakpoint, a failure or the end."""
        s = self.session
        mode = "backward" if to_backward else "continue"
        results: list[Any] = []
        first = True
        if s.paused is not None:
            if self._debug(mode, breakpoints, results) or self._failed(results):
                return results
            first = False
        else:
            self._pass_failed()
        total = len(s.statements)
        while not s.at_end:
            stmt = s.statements[s.cursor]
            if stmt.line in breakpoints and not first:
                self._stop = Stop("breakpoint", stmt.line)
                return results
            if to_backward and not first and calls_backward(stmt.node):
                self._stop = Stop("backward", stmt.line)
                return results
            inside = any(stmt.line < b <= stmt.end_line for b in breakpoints)
            if to_backward or inside:
                if self._debug(mode, breakpoints, results):
                    return results
            else:
                r = s.step()
                results.extend([r] if r else [])
            self.progress(s.cursor, total)
            if self._failed(results):
                self._stop = Stop("failed", results[-1].line)
                return results
            first = False
        self._stop = Stop("no_backward" if to_backward else "end")
        return results

    def _debug(self, mode: str, breakpoints: frozenset[int], results: list[Any]) -> bool:
        """Run or resume the statement at the cursor under the debugger; True when it
        paused (the state is the pause's), its result appended when it ended."""
        if self.session.paused is None:
            self._debug_path = []  # a statement starts under the debugger
        try:
            outcome = self.session.debug(mode, breakpoints)
        except ValueError as exc:
            raise BadRequest(str(exc)) from None
        if isinstance(outcome, Pause):
            self._debug_path.append((mode, tuple(sorted(breakpoints))))
            self.session.capture_pause()  # the reply's state() snapshots it
            reason = "breakpoint" if outcome.line in breakpoints else "paused"
            if mode == "backward" and outcome.line not in breakpoints:
                reason = "backward"
            self._stop = Stop(reason, outcome.line, path=tuple(self._debug_path))
            return True
        self._debug_path = []
        if outcome is not None:
            results.append(outcome)
            if not outcome.ok:
                self._stop = Stop("failed", outcome.line)
        return False

    def _failed_at_cursor(self) -> bool:
        s = self.session
        return bool(s.results) and not s.results[-1].ok and s.results[-1].index == s.cursor

    def _pass_failed(self, skip_current: bool = False) -> tuple[int | None, str | None]:
        """Move past the statement at the cursor when it failed (or was stopped, or,
        ``skip_current``, was killed by Stop): its line and why, or (None, None)."""
        s = self.session
        if s.at_end:
            return None, None
        line = s.statements[s.cursor].line
        if self._failed_at_cursor():
            error = s.results[-1].error
            why = "stopped" if error is not None and error.type in _STOPPED else "failed"
            s.skip_failed()
            return line, why
        if skip_current:
            s.skip_current()
            return line, "stopped"
        return None, None

    @staticmethod
    def _failed(results: list[Any]) -> bool:
        return bool(results) and not results[-1].ok

    def _on_report(self, request: Report) -> dict[str, Any]:
        self._note_request(request)
        s = self._new_session(request.source, request.device, _limits(request))
        if request.trace:
            s.enable_trace()
        if not self.trusted:
            # a shared script run headless is refused within REPORT_RUN_SECONDS of
            # work in all (a longer statement limit asked for widens it)
            asked = request.time_limit_s
            s.interpreter.max_run_seconds = max(
                REPORT_RUN_SECONDS, 2 * float(asked) if asked else 0.0
            )
        # A report's picture is read within what the parent will take: past about
        # 55,000 nodes the reply is too big for it to parse (a 400,000-node chain was
        # read for 15 s into a 67 MB line the parent then dropped; a trusted 60,000-node
        # chain's 30 MB reply was dropped too)
        s.capture_max_nodes = REPORT_CAPTURE_NODES
        s.events.connect("statement_executed", self._send_result)
        self._output_left = MAX_OUTPUT_CHARS
        results = s.run_to_end(keep_going=request.keep_going)
        self.phase("report")
        report = json_report(s, results)
        left = MAX_OUTPUT_CHARS
        for statement in report["statements"]:
            statement["output"], left = _clip_output(statement["output"], left)
        if request.layout:
            self.phase("layout", {"nodes": s.graph.number_of_nodes()})
            report["positions"] = {
                k: [float(x), float(y)] for k, (x, y) in layout(s.graph).items()
            }
        return report

    #: streamed print output is sent at most this often (seconds) or past this size
    OUTPUT_EVERY_S = 0.05
    OUTPUT_CHUNK = 64 * 1024

    def _stream_output(self, text: str, line: int | None) -> None:
        """print output of a trusted statement, sent as it is written; a burst (a loop
        printing each iteration) goes out in batches, at most one every
        OUTPUT_EVERY_S, and what waits goes out at the next phase (a pause included)."""
        pending = self._pending_output
        if pending and pending[1] != line:
            self._flush_output()
            pending = self._pending_output
        if pending:
            pending[0] = (pending[0] + text)[-self.OUTPUT_CHUNK:]
        else:
            self._pending_output = [text[-self.OUTPUT_CHUNK:], line]
        if time.monotonic() - self._output_sent_at >= self.OUTPUT_EVERY_S:
            self._flush_output()

    def _flush_output(self) -> None:
        pending, self._pending_output = self._pending_output, []
        if pending:
            self._output_sent_at = time.monotonic()
            self.send({"id": self._request_id, "event": "output", "text": pending[0],
                       "line": pending[1]})

    _output_sent_at = 0.0
    _pending_output: list[Any] = []
    #: a load or reset left the last run's objects to the collector (see serve)
    _garbage_pending = False

    def _collect_pending(self) -> None:
        if self._garbage_pending:
            self._garbage_pending = False
            gc.collect()

    def release(self) -> None:
        """Drop the session and what it holds (the script's objects, its graph)."""
        gc.unfreeze()
        self.session = None  # type: ignore[assignment]
        self.layout = IncrementalLayout()
        self.encoder = StateEncoder()
        gc.collect()

    def install_stop_signal(self) -> None:
        """The window's Stop (SIGUSR1) asks the running statement to end; call from
        the main thread, which is where Python runs signal handlers."""
        if hasattr(signal, "SIGUSR1"):
            signal.signal(signal.SIGUSR1, self._on_stop_signal)

    def _on_stop_signal(self, signum: int, frame: Any) -> None:
        if self.session is None:  # released: serving is over
            return
        interp = self.session.interpreter
        interrupt = getattr(interp, "interrupt", None)
        if interrupt is not None:
            interrupt()  # real Python: Stopped raised in the thread that runs it
        else:
            interp.stop_requested = True

    def _send_result(self, result: Any) -> None:
        message = statement_json(result)
        message["output"], self._output_left = _clip_output(message["output"], self._output_left)
        self.send({"id": self._request_id, "event": "result", "result": message})

    _asked_limit = False
    #: why the last intent stopped where it did (gradviz.protocol.Stop), sent with its reply
    _stop: Stop | None = None

    def _note_request(self, request: Load | Report) -> None:
        self._asked_limit = request.time_limit_s is not None
        self.filename = request.filename or None

    def _new_session(self, source: str, device: str, limits: Limits | None = None) -> Session:
        # the old session's objects may be collected again (see serve)
        gc.unfreeze()
        self._garbage_pending = True
        old = getattr(self, "session", None)
        self.session = Session(
            source, device=device, limits=limits, trusted=self.trusted,
            filename=self.filename if self.trusted else None,
        )
        # The same script loaded again (the timeline going back replays it this way)
        # gives its nodes the same ids: they keep the places they were shown at. A new
        # script's ids name other things: its picture starts afresh.
        same = old is not None and old.source == self.session.source
        # The last run's objects (cycles through its frames and namespaces) go now, before
        # this run starts, not after it: loading a script again held both runs' tensors
        # at once (the in-place demo: 1.6 GB for its 0.8 GB)
        old = None
        self._collect_pending()
        self.layout.reset(remember=same)
        self._positions_json = None
        # A reset (step back, device switch, replay) starts a new picture, which keeps
        # the places of the nodes that come back.
        self.session.events.connect("reset", self._forget_positions)
        if self.trusted:
            self.session.output_hook = self._stream_output
        self.session.events.connect("phase", self.phase)
        return self.session

    def _forget_positions(self) -> None:
        gc.unfreeze()  # a replay from the start: what the last run kept is garbage now
        self._garbage_pending = True
        self.layout.reset(remember=True)
        self._positions_json = None

    def _run_to(self, index: int | None) -> list[Any]:
        return [] if index is None else self.session.run_to(index, self.progress)

    def serve(self, stdin: IO[bytes], confinement: dict[str, Any] | None = None) -> None:
        self.send(
            {
                "event": "ready",
                "pid": os.getpid(),
                "cuda_available": cuda_unavailable_reason() is None,
                "cuda_reason": cuda_unavailable_reason(),
                "workdir": os.getcwd(),
                "confinement": confinement,
                "mode": "trusted" if self.trusted else "restricted",
            }
        )
        # The window's Stop: SIGUSR1 asks the running statement to end at its next loop
        # iteration or statement, keeping its work (the window kills the kernel only
        # when that does not come back promptly, e.g. inside one long native op).
        # Only the main thread may set a handler: gradviz.kernel serves on a worker
        # thread and sets it there (install_stop_signal) before starting that thread.
        if hasattr(signal, "SIGUSR1") and threading.current_thread() is threading.main_thread():
            self.install_stop_signal()
        for line in request_lines(stdin):
            if not line.strip():
                continue
            self.session.interpreter.stop_requested = False  # a late signal of an earlier request
            self._request_id = None
            try:
                self._request_id, request = decode_request(line)
            except BadRequest as exc:
                self.send({"event": "reply", "id": None, "ok": False, "message": f"bad request: {exc}"})
                continue
            if isinstance(request, Shutdown):
                self.send({"event": "reply", "id": self._request_id, "ok": True, "state": None})
                return
            try:
                try:
                    state = self.handle(request)
                except BaseException:
                    # no state goes out: the next one goes whole (what changed since
                    # the last one sent is not known any more)
                    self.encoder.reset()
                    raise
                # before the reply: what the window shows next (memory figures, the
                # kernel's size) is what is left once the old run's objects went
                self._collect_pending()
                self.phase("encode")
                with paused_gc():  # see state()
                    if not isinstance(request, (Report, Ping)):
                        hint, self._hint = self._hint, None
                        state = self.encoder.encode(state, request.delta, hint)
                    reply = {"event": "reply", "id": self._request_id, "ok": True, "state": state}
                    if self._stop is not None:
                        reply["stop"] = self._stop.to_wire()
                    self.send(reply)
                # What the kernel keeps from step to step (the graph, the layout, the
                # script's objects) leaves the cyclic collector's work: without this a
                # full collection over it stalls a step every few (100-200 ms at 2,000
                # nodes). A load or reset unfroze what the old run kept: it is collected
                # here, once the request let go of it, or the freeze would keep its
                # cycles (and the tensors they hold) for good: the kernel grew 760 MB a
                # run of the in-place lesson (benchmarks/bench_kernel_memory.py).
                gc.freeze()
            except DeviceUnavailable as exc:
                self.send(
                    {"event": "reply", "id": self._request_id, "ok": False, "message": str(exc),
                     "error": "device_unavailable"}
                )
            except BadRequest as exc:
                self.send({"event": "reply", "id": self._request_id, "ok": False, "message": str(exc)})
            except MemoryError:
                gc.collect()
                self.send(
                    {
                        "event": "reply",
                        "id": self._request_id,
                        "ok": False,
                        "message": "refused: the kernel ran out of memory (gradviz limit "
                        "max_process_bytes)",
                    }
                )
            except Exception as exc:  # noqa: BLE001 - report, keep serving
                self.send(
                    {
                        "event": "reply",
                        "id": self._request_id,
                        "ok": False,
                        "message": f"kernel error: {type(exc).__name__}: {exc}",
                        "traceback": traceback.format_exc(limit=8),
                    }
                )


def _clip_output(text: Any, left: int) -> tuple[Any, int]:
    """``text`` cut to the ``left`` characters of print output a report may still carry
    (the cut ends in a marker), and what is left after it."""
    if not isinstance(text, str):
        return text, left
    keep = min(len(text), max(left, 0))
    if keep == len(text):
        return text, left - keep
    cut = f"\n[gradviz: output truncated: {len(text) - keep:,} characters not shown]\n"
    return text[:keep] + cut, 0


def _limits(request: Load | Report) -> Limits:
    limits = Limits()
    if request.time_limit_s is not None:
        limits.max_statement_seconds = float(request.time_limit_s)
    return limits


def request_lines(stdin: IO[bytes]) -> Iterator[bytes]:
    """Request lines as bytes; a line over the size limit is replaced by a marker that
    fails to parse, so a flood without newlines never fills the kernel's memory."""
    while True:
        line = stdin.readline(MAX_REQUEST_BYTES + 1)
        if not line:
            return
        if len(line) > MAX_REQUEST_BYTES and not line.endswith(b"\n"):
            while True:  # drop the rest of the oversized line
                rest = stdin.readline(MAX_REQUEST_BYTES)
                if not rest or rest.endswith(b"\n"):
                    break
            yield b"x" * (MAX_REQUEST_BYTES + 1)
            continue
        yield line


def warm_up(trusted: bool = False) -> None:
    """Run a tiny script once, so the user's first statement finds torch's lazy imports
    and the capture's caches warm (the op guard no longer pulls in torch._dynamo; see
    :mod:`gradviz.core.guards`). A trusted kernel warms up trusted: it never builds an
    op guard (whose offset checks are process-wide), only arms torch's
    _disable_dynamo wrappers, which behave as before once torch._dynamo is loaded."""
    if trusted:
        arm_disable_dynamo_wrappers()
    session = Session(
        "a = torch.ones(2, requires_grad=True)\nb = (a * 2).sum()\nb.backward()\n",
        trusted=trusted,
    )
    session.run_to_end()
    gc.collect()
