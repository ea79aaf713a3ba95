"""The window's side of the kernel protocol (see :mod:`gradviz.kernel`).

The kernel is a separate Python process (``python -m gradviz.kernel``) that
owns the :class:`~gradviz.core.session.Session`; the GUI thread never runs a
statement. Messages are JSON lines on the process's stdio, never pickle: a
reply is data, not code.

One request is in flight at a time; others wait in a queue. ``stop()`` kills
the process (a statement that runs away cannot be interrupted any other way),
starts a fresh kernel and *replays*: it loads the same source on the same
device and runs the statements that had completed before the runaway one. An
unexpected exit (a crash, a kill from outside) is handled the same way.

The kernel is not trusted (a script may escape the in-kernel interpreter and
write anything on its stdout): the watchdog's limits are this side's own
(:func:`gradviz.runner.phase_limit`, :func:`gradviz.runner.total_limit`), and
a line over :data:`gradviz.runner.MAX_LINE_BYTES` is never buffered whole: the
kernel is killed as if it had crashed.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import sys
import tempfile
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from typing import Any

from PySide6.QtCore import QObject, QProcess, QProcessEnvironment, QTimer, Signal

from gradviz.graph.delta import DeltaMismatch, StateDecoder
from gradviz.graph.gcpause import paused_gc
from gradviz.protocol import (
    Continue,
    Debug,
    Load,
    Output,
    Phase,
    Progress,
    Ready,
    Reply,
    Request,
    Reset,
    RunTo,
    RunToBackward,
    RunToEnd,
    RunToLine,
    SetDevice,
    Shutdown,
    Snapshot,
    Step,
    StepBack,
    decode_event,
    encode_request,
    event_message,
    request_of,
)
from gradviz.runner import (
    FIRST_PHASE_S,
    GRACE_S,
    MAX_LINE_BYTES,
    kernel_command,
    kernel_environment,
    os_layer_missing,
    phase_limit,
    statement_limit,
    timeout_message,
    total_limit,
)
from gradviz.ui.i18n import translate

#: requests that rebuild the session from the start before running anything
_RESETTING = (Load, SetDevice, StepBack, Reset)
#: characters of one streamed print kept (the statement's result carries it whole)
MAX_LIVE_OUTPUT = 64 * 1024
#: give up restarting after this many exits in a row without a good reply
MAX_CRASHES_IN_A_ROW = 3

Callback = Callable[[dict[str, Any]], None]


@dataclass
class KernelRequest:
    """A request on its way: the protocol's request, its id and who waits for the reply."""

    id: int
    request: Request
    callback: Callback | None = None
    replay: bool = False
    sent_at: float = 0.0
    progress_done: int | None = None
    progress_total: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def cmd(self) -> str:
        return self.request.CMD

    @property
    def params(self) -> dict[str, Any]:
        """The request's fields by name."""
        return {f.name: getattr(self.request, f.name) for f in fields(self.request)}

    def line(self) -> bytes:
        return (encode_request(self.id, self.request) + "\n").encode("utf-8")


class KernelClient(QObject):
    """Talks to one kernel process at a time and restarts it when it dies."""

    # Payloads are declared ``object``, not ``dict``: a dict signal converts the
    # whole reply to a QVariantMap and back on every emit, which cost ~20 ms per
    # step on a 2,000-node graph; ``object`` hands over the Python reference.
    #: the kernel said hello: {"pid", "cuda_available", "cuda_reason"}
    ready = Signal(object)
    #: every reply: request id, the whole reply message
    replied = Signal(int, object)
    #: progress of the request in flight: done, total
    progressed = Signal(int, int)
    #: print output of the running statement, as it is written (text, line or None)
    output_written = Signal(str, object)
    #: True while a request is in flight or waiting, or the kernel is starting
    busy_changed = Signal(bool)
    #: the kernel exited unexpectedly; the message says how (a restart follows)
    crashed = Signal(str)
    #: a fresh kernel is being started: why ("stopped", "crashed")
    restarting = Signal(str)
    #: the replay after a restart finished: its reply (ok, state or message)
    replayed = Signal(object)
    #: restarting was abandoned after repeated crashes
    gave_up = Signal(str)
    #: the watchdog killed the kernel: a phase outlived its time limit (message, phase)
    timed_out = Signal(str, object)

    def __init__(self, parent: QObject | None = None, python: str | None = None):
        super().__init__(parent)
        self._python = python or sys.executable
        #: refuse a restricted kernel with no OS layer (runner.os_layer_missing); a
        #: kernel program given by hand (a test's fake, a developer's) is taken as is
        self.require_os_layer = python is None
        self._process: QProcess | None = None
        #: the start of a line not ended yet (never more than max_line_bytes)
        self._buffer = bytearray()
        #: counts kernels started and killed: a line handled during feed() that
        #: restarted the kernel ends that feed (the rest was the old kernel's)
        self._generation = 0
        #: a stdout line longer than this kills the kernel (tests make it small)
        self.max_line_bytes = MAX_LINE_BYTES
        #: a kernel killed for what it wrote, until it is gone
        self._refused: QProcess | None = None
        self._stderr_tail: deque[str] = deque(maxlen=40)
        self._ready = False
        self._info: dict[str, Any] = {}
        self._queue: deque[KernelRequest] = deque()
        self._inflight: KernelRequest | None = None
        self._next_id = 1
        self._busy = False
        self._started = False
        self._closing = False
        self._dead = False
        self._crashes_in_a_row = 0
        self._pending_replay: dict[str, Any] | None = None
        self._replaying = False
        #: rebuilds whole states from the kernel's deltas (gradviz.graph.delta)
        self._decoder = StateDecoder()
        # what the kernel holds, as of its last good reply
        self.source = ""
        self.device = "cpu"
        self.cursor = 0
        #: cursors of Zero-grad presses in the running session (replayed after a restart)
        self.zero_points: list[int] = []
        self.restarts = 0
        self._workdir: str | None = None
        #: trusted: the kernel runs the script as real Python, unconfined, in ``cwd``
        #: (the script's folder), with no time limit (Stop ends it); else restricted
        self.trusted = False
        self.cwd: str | None = None
        #: the script's file, sent with each load in trusted mode (tracebacks, debugger)
        self.filename: str | None = None
        #: seconds a statement may run (None: the kernel's default); sent with every load
        self.time_limit_s: float | None = None
        #: seconds one whole request may take (None: runner.total_limit's default)
        self.total_limit_s: float | None = None
        #: seconds a phase may run past its limit
        self.grace_s = GRACE_S
        # The watchdog: each phase the kernel announces must end within its limit
        # plus a grace period, and each request within its total limit, or the kernel
        # is killed whatever it is doing. The limits are this side's: the kernel's
        # announced limit_s counts only when shorter (runner.phase_limit).
        self._phase: dict[str, Any] = {}
        #: the limit the phase in progress runs under, and whether the watchdog's next
        #: deadline is the request's total rather than the phase's
        self._phase_limit_s = FIRST_PHASE_S
        self._whole_deadline = False
        #: the statement limit the running kernel's session was given (by a load)
        self._session_limit_s = statement_limit(None)
        self._watchdog = QTimer(self)
        self._watchdog.setSingleShot(True)
        self._watchdog.timeout.connect(self._on_watchdog_timeout)

    # --- public -------------------------------------------------------------------

    @property
    def info(self) -> dict[str, Any]:
        return dict(self._info)

    @property
    def is_ready(self) -> bool:
        return self._ready

    @property
    def busy(self) -> bool:
        return self._busy

    @property
    def replaying(self) -> bool:
        return self._replaying

    @property
    def dead(self) -> bool:
        return self._dead

    @property
    def inflight(self) -> KernelRequest | None:
        return self._inflight

    def pid(self) -> int | None:
        if self._process is None or self._process.state() == QProcess.ProcessState.NotRunning:
            return None
        return int(self._process.processId()) or None

    @property
    def started(self) -> bool:
        """True once the kernel was started (by start() or by the first request)."""
        return self._started

    def start(self) -> None:
        """Start the kernel (once; restarts happen by themselves)."""
        self._started = True
        self._closing = False
        self._dead = False
        self._start_process()

    def set_mode(self, trusted: bool, cwd: str | None = None, filename: str | None = None) -> bool:
        """Run scripts as real Python (``trusted``, in ``cwd``) or in restricted mode. A
        kernel of the other kind (or another folder) is replaced by a fresh one before
        the next request; nothing of the old one carries over (the caller loads again).
        Returns whether the kernel was replaced."""
        folder = cwd if trusted else None
        changed = trusted != self.trusted or folder != self.cwd
        self.trusted, self.cwd = trusted, folder
        self.filename = filename if trusted else None
        if not changed or self._closing or not self._started:
            return False
        self._dead = False  # a kernel refused for its mode (no OS layer) may start now
        self._crashes_in_a_row = 0
        self._kill_process()
        if self._inflight is not None or self._queue:
            self._fail_all(
                translate("KernelClient", "the kernel was replaced: the script's trust changed")
            )
        self._pending_replay = None
        self._replaying = False
        self._start_process()
        return True

    def request(
        self, request: Request | str, callback: Callback | None = None, **params: Any
    ) -> int:
        """Queue a request (or the command ``request`` with ``params``); ``callback(reply)``
        runs on the GUI thread when it is answered.

        The first request starts the kernel when start() was not called: a window
        that only shows a read-only snapshot never starts a torch process.
        """
        if isinstance(request, str):
            if request not in ("report", "ping", "shutdown"):
                params.setdefault("delta", True)  # only what changed comes back
            request = request_of(request, **params)
        if not self._started and not self._closing:
            self.start()
        if isinstance(request, Load):
            if request.time_limit_s is None and self.time_limit_s is not None:
                request = replace(request, time_limit_s=float(self.time_limit_s))
            if not request.filename and self.trusted and self.filename:
                request = replace(request, filename=self.filename)
        req = KernelRequest(self._next_id, request, callback)
        self._next_id += 1
        self._queue.append(req)
        if self._dead:
            self._fail(
                req,
                translate(
                    "KernelClient", "the kernel is not running (it crashed repeatedly); press Reset"
                ),
            )
            self._queue.remove(req)
            return req.id
        self._pump()
        return req.id

    #: requests whose statements the kernel can end gently (Stop keeps their work)
    INTERRUPTIBLE = (Step, RunToEnd, RunTo, RunToLine, Debug, Continue, RunToBackward)

    def interrupt(self) -> bool:
        """Ask the kernel to end the running statement at its next loop iteration or
        statement (SIGUSR1), keeping what it did. Returns False when nothing such runs;
        the caller kills the kernel (stop()) if no reply comes back promptly."""
        req = self._inflight
        pid = self.pid()
        if (
            req is None or pid is None or self._replaying
            or not isinstance(req.request, self.INTERRUPTIBLE)
        ):
            return False
        if not hasattr(signal, "SIGUSR1"):
            return False
        try:
            os.kill(pid, signal.SIGUSR1)
        except OSError:
            return False
        return True

    def stop(self) -> bool:
        """Kill a runaway request; restart and replay what ran before it.

        Returns False when nothing was running.
        """
        if self._inflight is None and not self._replaying:
            return False
        replay = self._replay_plan()
        self._kill_process()
        self._fail_all("stopped", stopped=True)
        self._restart(replay, "stopped")
        return True

    def restart(self) -> None:
        """Start afresh after giving up (the Reset action); loads the last source."""
        self._started = True
        self._dead = False
        self._crashes_in_a_row = 0
        self._kill_process()
        plan: dict[str, Any] = {"source": self.source, "device": self.device, "run_to": 0}
        if self.time_limit_s is not None:
            plan["time_limit_s"] = self.time_limit_s
        if self.trusted and self.filename:
            plan["filename"] = self.filename
        self._restart(plan, "restart")

    def shutdown(self, timeout_ms: int = 250) -> None:
        """Ask the kernel to exit; kill it if it has not within ``timeout_ms``.

        The kernel holds nothing worth flushing and torch's own teardown takes
        most of a second, so the grace period is short: closing must feel instant.
        """
        self._closing = True
        self._queue.clear()
        self._inflight = None
        proc = self._process
        if proc is None:
            return
        self._disconnect(proc)
        if proc.state() != QProcess.ProcessState.NotRunning:
            if self._ready:
                proc.write(encode_request(0, Shutdown()).encode() + b"\n")
                proc.closeWriteChannel()
                if not proc.waitForFinished(timeout_ms):
                    proc.kill()
                    proc.waitForFinished(1000)
            else:
                proc.kill()
                proc.waitForFinished(1000)
        self._process = None
        self._ready = False
        self._watchdog.stop()
        proc.deleteLater()
        self._remove_workdir()
        self._set_busy(False)

    # --- process ------------------------------------------------------------------

    def _start_process(self) -> None:
        proc = QProcess(self)
        # A private folder and a clean environment: the kernel confines itself to them.
        self._remove_workdir()
        self._workdir = tempfile.mkdtemp(prefix="gradviz-kernel-")
        env = QProcessEnvironment()
        for name, value in kernel_environment(self._workdir, self.trusted).items():
            env.insert(name, value)
        env.insert("PYTHONUNBUFFERED", "1")
        proc.setProcessEnvironment(env)
        # a trusted script runs in its own folder, as python would run it there
        proc.setWorkingDirectory(
            self.cwd if self.trusted and self.cwd and os.path.isdir(self.cwd) else self._workdir
        )
        proc.setProcessChannelMode(QProcess.ProcessChannelMode.SeparateChannels)
        proc.readyReadStandardOutput.connect(self._on_process_stdout)
        proc.readyReadStandardError.connect(self._on_process_stderr)
        proc.finished.connect(self._on_process_finished)
        proc.errorOccurred.connect(self._on_process_error)
        self._process = proc
        self._refused = None
        self._buffer = bytearray()
        self._generation += 1
        self._session_limit_s = self._limit_for(None)  # a new kernel's session: the default
        self._decoder.reset()  # a new kernel sends its first state whole
        self._ready = False
        self._set_busy(True)
        program, *arguments = kernel_command(
            self._workdir, self._python, cuda=True, trusted=self.trusted
        )
        proc.start(program, arguments)

    def _remove_workdir(self) -> None:
        if self._workdir is not None:
            shutil.rmtree(self._workdir, ignore_errors=True)
            self._workdir = None

    def _disconnect(self, proc: QProcess) -> None:
        for qt_signal, slot in (
            (proc.readyReadStandardOutput, self._on_process_stdout),
            (proc.readyReadStandardError, self._on_process_stderr),
            (proc.finished, self._on_process_finished),
            (proc.errorOccurred, self._on_process_error),
        ):
            try:
                qt_signal.disconnect(slot)
            except (RuntimeError, TypeError):
                pass

    def _kill_process(self) -> None:
        self._watchdog.stop()
        self._generation += 1
        self._buffer = bytearray()
        proc = self._process
        self._process = None
        self._ready = False
        if proc is None:
            return
        self._disconnect(proc)
        if proc.state() != QProcess.ProcessState.NotRunning:
            proc.kill()
            proc.waitForFinished(1000)
        proc.deleteLater()

    def _restart(self, replay: dict[str, Any] | None, why: str) -> None:
        self.restarts += 1
        self._pending_replay = replay
        self._replaying = replay is not None
        self.restarting.emit(why)
        self._start_process()

    def _replay_plan(self) -> dict[str, Any]:
        """Source, device and how many statements to re-run after a kill."""
        req = self._inflight
        source, device, cursor = self.source, self.device, self.cursor
        if req is not None:
            r = req.request
            if isinstance(r, Load):
                source, device = r.source, r.device
            elif isinstance(r, SetDevice):
                device = r.device
            if req.progress_done is not None:
                cursor = req.progress_done
            elif isinstance(r, _RESETTING):
                cursor = 0
            if req.replay:
                # killed during a replay: replay only what that replay had finished
                cursor = req.progress_done or 0
        elif self._pending_replay is not None:
            return dict(self._pending_replay)
        plan: dict[str, Any] = {"source": source, "device": device, "run_to": cursor}
        if self.time_limit_s is not None:
            plan["time_limit_s"] = self.time_limit_s
        if self.trusted and self.filename:
            plan["filename"] = self.filename
        if source == self.source and self.zero_points:
            # Zero-grad presses are part of the history a replay must repeat.
            plan["zero_points"] = [p for p in self.zero_points if p <= cursor]
        return plan

    # --- queue --------------------------------------------------------------------

    def _pump(self) -> None:
        proc = self._process
        if self._inflight is not None or not self._ready or proc is None:
            self._update_busy()
            return
        if not self._queue:
            self._update_busy()
            return
        req = self._queue.popleft()
        self._inflight = req
        req.sent_at = time.monotonic()
        if req.request.RESETS:
            req.extra["limit_s"] = self._limit_for(getattr(req.request, "time_limit_s", None))
        proc.write(req.line())
        # onto the pipe now, not when the event loop next runs: the kernel starts while
        # the window paints what it was showing (the step after a run waited 15 ms for
        # the run's first paint). A request is sent only to an idle kernel, whose stdin
        # has room: this does not block
        proc.waitForBytesWritten(0)
        # the watchdog runs from the moment a request is sent, phase message or not
        self._phase = {"phase": "start", "id": req.id}
        self._arm_watchdog(req, FIRST_PHASE_S)
        self._update_busy()

    def _limit_for(self, configured: Any) -> float:
        """This side's statement limit: none in trusted mode unless one is configured
        (python gives a script the time it takes; Stop ends it)."""
        if self.trusted and configured is None:
            return math.inf
        return statement_limit(configured)

    def _own_limit(self, req: KernelRequest) -> float:
        """This side's statement limit for ``req``: the one it sent with it (a load), else
        the one the kernel's session was given."""
        limit = req.extra.get("limit_s")
        return limit if isinstance(limit, float) else self._session_limit_s

    def _arm_watchdog(self, req: KernelRequest, limit: float) -> None:
        """(Re)start the watchdog for a phase of ``req`` that starts now and may run
        ``limit`` s; the request's total limit caps it whatever phases come."""
        now = time.monotonic()
        self._phase_limit_s = limit
        phase_end = now + limit + self.grace_s
        request_end = (
            req.sent_at + total_limit(self._own_limit(req), self.total_limit_s) + self.grace_s
        )
        self._whole_deadline = request_end <= phase_end
        if math.isinf(min(phase_end, request_end)):
            self._watchdog.stop()  # no limit at all (trusted): Stop is the way out
            return
        if request_end <= now:
            # past the request's total already (phase messages kept coming): a zero
            # timer could wait behind the next read, so time out now
            self._on_watchdog_timeout()
            return
        self._watchdog.start(max(0, int((min(phase_end, request_end) - now) * 1000)))

    def _update_busy(self) -> None:
        busy = (
            self._inflight is not None
            or bool(self._queue)
            or (self._process is not None and not self._ready)
        )
        self._set_busy(busy)

    def _set_busy(self, busy: bool) -> None:
        if busy != self._busy:
            self._busy = busy
            self.busy_changed.emit(busy)

    def _fail(self, req: KernelRequest, message: str, **extra: Any) -> None:
        reply = {"id": req.id, "event": "reply", "ok": False, "message": message, **extra}
        if req.callback is not None:
            req.callback(reply)
        self.replied.emit(req.id, reply)

    def _fail_all(self, message: str, **extra: Any) -> None:
        pending = ([self._inflight] if self._inflight else []) + list(self._queue)
        self._inflight = None
        self._queue.clear()
        for req in pending:
            self._fail(req, message if req is pending[0] else "cancelled", **extra)

    # --- messages -----------------------------------------------------------------

    def _on_process_stdout(self) -> None:
        proc = self._process
        if proc is None:
            return
        data = bytes(proc.readAllStandardOutput().data())
        if proc is self._refused:
            return
        self.feed(data)

    def feed(self, data: bytes) -> None:
        """Parse what the kernel wrote; a message may arrive split over several reads.

        A line longer than :attr:`max_line_bytes` is not kept: the kernel is killed
        (and restarted as after a crash, see :meth:`_refuse_kernel`)."""
        generation = self._generation
        start = 0
        while True:
            end = data.find(b"\n", start)
            if end < 0:
                self._buffer += data[start:]
                if len(self._buffer) > self.max_line_bytes:
                    self._refuse_kernel(len(self._buffer))
                return
            if self._buffer:
                self._buffer += data[start:end]
                line = bytes(self._buffer)
                self._buffer = bytearray()
            else:
                line = data[start:end]
            start = end + 1
            if len(line) > self.max_line_bytes:
                self._refuse_kernel(len(line))
                return
            if not line.strip():
                continue
            try:
                message = json.loads(line.decode("utf-8"))
            except (UnicodeDecodeError, ValueError, RecursionError):
                self._stderr_tail.append(
                    translate("KernelClient", "bad line from kernel: {line}").format(
                        line=line[:200].decode("utf-8", "replace")
                    )
                )
                continue
            del line
            if isinstance(message, dict):
                self._on_message(message)
                if generation != self._generation:
                    return  # that message restarted the kernel: the rest was the old one's

    def _refuse_kernel(self, size: int) -> None:
        """The kernel wrote a line over the limit: drop it and kill the kernel, which
        then restarts as after a crash (three in a row and it is given up on)."""
        self._buffer = bytearray()
        self._generation += 1
        self._stderr_tail.append(
            translate(
                "KernelClient",
                "refused: the kernel wrote a line of over {size} bytes (gradviz reads at most "
                "{limit} a line)",
            ).format(size=f"{size:,}", limit=f"{self.max_line_bytes:,}")
        )
        proc = self._process
        if proc is not None and proc.state() != QProcess.ProcessState.NotRunning:
            self._refused = proc  # what it writes until it is gone is read and dropped
            proc.kill()  # finished() follows: the crash path restarts and replays

    def _on_process_stderr(self) -> None:
        proc = self._process
        if proc is None:
            return
        text = bytes(proc.readAllStandardError().data()).decode("utf-8", "replace")
        for line in text.splitlines():
            if line.strip():
                self._stderr_tail.append(line[:2000])

    def _on_message(self, message: dict[str, Any]) -> None:
        """One line from the kernel, read as its protocol event (every field checked;
        a line that is no event of the protocol is skipped) and handed to its handler."""
        event = decode_event(message, max_text=MAX_LIVE_OUTPUT)
        del message
        if isinstance(event, Ready):
            self._on_ready(event)
            return
        req = self._inflight
        if event is None or req is None or event.id != req.id:
            return
        if isinstance(event, Phase):
            self._phase = {**event.as_dict(), "id": event.id}
            self._arm_watchdog(req, phase_limit(event.limit_s, self._own_limit(req)))
        elif isinstance(event, Output):
            self.output_written.emit(event.text, event.line)
        elif isinstance(event, Progress):
            req.progress_done = event.done
            req.progress_total = event.total
            self.progressed.emit(event.done, event.total)
        elif isinstance(event, Reply):
            self._on_reply(req, event)

    def _on_ready(self, event: Ready) -> None:
        why = (
            os_layer_missing(event.confinement)
            if not self.trusted and self._process is not None and self.require_os_layer
            else None
        )
        if why is not None:
            # restricted mode with no OS layer around it: nothing from someone
            # else runs here (see runner.os_layer_missing); Trust folder runs as Python
            self._kill_process()
            self._dead = True
            self._fail_all(why)
            self.gave_up.emit(why)
            return
        self._ready = True
        self._info = event.info()
        self.ready.emit(dict(self._info))
        if self._pending_replay is not None:
            plan = self._pending_replay
            self._pending_replay = None
            req = KernelRequest(
                self._next_id, request_of("load", **plan), self._on_replay_reply, replay=True
            )
            self._next_id += 1
            self._queue.appendleft(req)
        self._pump()

    def _on_reply(self, req: KernelRequest, reply: Reply) -> None:
        self._inflight = None
        self._watchdog.stop()
        message = event_message(reply)
        if reply.ok:
            self._crashes_in_a_row = 0
            if "limit_s" in req.extra:  # the kernel's session now runs under it
                self._session_limit_s = req.extra["limit_s"]
            state = reply.state
            if isinstance(state, dict):
                try:
                    # the step after a run rebuilds every node's dict: no cyclic
                    # collector passes over them meanwhile (see gradviz.graph.gcpause)
                    with paused_gc():
                        state, changes = self._decoder.decode(state)
                except (DeltaMismatch, KeyError, TypeError) as exc:
                    # out of step with the kernel: ask for the whole state, and let
                    # that reply answer this request
                    self._stderr_tail.append(f"state resent whole: {exc}")
                    again = KernelRequest(
                        self._next_id, Snapshot(delta=False), req.callback, replay=req.replay
                    )
                    self._next_id += 1
                    self._queue.appendleft(again)
                    self._pump()
                    return
                message["state"] = state
                message["changes"] = changes
                r = req.request
                if isinstance(r, Load):
                    self.source = r.source
                if isinstance(r, (Load, SetDevice)):
                    self.device = r.device
                self.cursor = int(state.get("cursor", 0))
                self.zero_points = list(state.get("zero_points") or [])
        if req.callback is not None:
            req.callback(message)
        self.replied.emit(req.id, message)
        self._pump()

    def _on_watchdog_timeout(self) -> None:
        """A phase outlived its limit: kill the kernel, restart it and replay what ran."""
        if self._inflight is None and not self._replaying:
            return
        phase = dict(self._phase)
        req = self._inflight
        if self._whole_deadline and req is not None:
            limit = total_limit(self._own_limit(req), self.total_limit_s)
        else:
            limit = self._phase_limit_s
        phase["limit_s"] = limit  # what this side enforced, never what the kernel said
        message = timeout_message(phase, limit, whole=self._whole_deadline)
        replay = self._replay_plan()
        self._kill_process()
        self._fail_all(message, stopped=True, timed_out=True, phase=phase)
        self.timed_out.emit(message, phase)
        self._restart(replay, "timed out")

    def _on_replay_reply(self, reply: dict[str, Any]) -> None:
        self._replaying = False
        self.replayed.emit(reply)

    def _on_process_error(self, error: QProcess.ProcessError) -> None:
        if error == QProcess.ProcessError.FailedToStart:
            self._on_process_finished(-1, QProcess.ExitStatus.CrashExit)

    def _on_process_finished(self, code: int, status: QProcess.ExitStatus) -> None:
        proc = self._process
        if self._closing or proc is None:
            return
        self._on_process_stderr()
        self._disconnect(proc)
        self._process = None
        self._ready = False
        self._watchdog.stop()
        proc.deleteLater()
        phase = self._phase or {}
        line = phase.get("line") if phase.get("phase") == "statement" else None
        if not (type(line) is int and 0 < line < 2**31):
            line = None
        # native code failed (a segmentation fault in a C extension, an abort), or the
        # script ended the process (os._exit)
        crashed = status == QProcess.ExitStatus.CrashExit
        if crashed and line is None:
            what = translate(
                "KernelClient", "the kernel crashed (native code in the script or a library failed)"
            )
        elif crashed:
            what = translate(
                "KernelClient",
                "the kernel crashed (native code in the script or a library failed) "
                "while line {line} ran",
            )
        elif line is None:
            what = translate("KernelClient", "the kernel exited with code {code}")
        else:
            what = translate("KernelClient", "the kernel exited with code {code} while line {line} ran")
        what = what.format(code=code, line=line)
        tail = "\n".join(list(self._stderr_tail)[-6:])
        message = what + (f":\n{tail}" if tail else "")
        replay = self._replay_plan()
        self._fail_all(what, crashed=True)
        self._crashes_in_a_row += 1
        self.crashed.emit(message)
        if self._crashes_in_a_row >= MAX_CRASHES_IN_A_ROW:
            self._dead = True
            self._replaying = False
            self._set_busy(False)
            self.gave_up.emit(message)
            return
        if self._crashes_in_a_row == MAX_CRASHES_IN_A_ROW - 1:
            # the replay itself may be what crashes: load the text without running it
            replay["run_to"] = 0
        self._restart(replay, "crashed")
