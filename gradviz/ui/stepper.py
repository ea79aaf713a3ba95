"""Running the script in the kernel: step, step into/out, run, run to, step back, stop.

:class:`Stepper` sends the window's forward commands to the kernel process
(:class:`~gradviz.ui.kernel_client.KernelClient`), keeps the timeline of every
step the user took, replays the kernel to a past step, and reports the
kernel's life (ready, busy, progress, crash, restart) in the status bar.
Every reply's state goes to :meth:`MainWindow.apply_state`.
"""

from __future__ import annotations

import ast
import functools
import gc
import time
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol

from PySide6.QtCore import QObject, QTimer
from PySide6.QtGui import QStandardItemModel

from gradviz.app.guide import GuideContext, guide_note, reply_status
from gradviz.app.guide import first_line as _first_line
from gradviz.app.models import Answer, AppState, KernelInfo, PhaseInfo, StoppedStatement
from gradviz.app.replay import replay_note
from gradviz.app.timeline import MAX_KEPT_NODES, Timeline, TimelineStep, describe_step
from gradviz.protocol import (
    Continue,
    Debug,
    DebugStop,
    Load,
    Request,
    Reset,
    RunTo,
    RunToBackward,
    RunToEnd,
    RunToLine,
    SetDevice,
    Step,
    StepBack,
    StepMode,
    Stop,
    ZeroGrad,
)

from .i18n import translate
from .text import plain_tooltip

if TYPE_CHECKING:
    from PySide6.QtGui import QActionGroup
    from PySide6.QtWidgets import QComboBox, QProgressBar

    from gradviz.app.files import Document
    from gradviz.app.guide import GuideNote
    from gradviz.app.models import PauseInfo, ResultInfo, StatementInfo

    from .editor import CodeEditor
    from .graph_view import GraphView
    from .kernel_client import KernelClient
    from .panels import OutputPanel
    from .timeline import TimelineBar


class StepperWindow(Protocol):
    """What the stepper reads and drives of its window (the main window is one): typed,
    so a misspelled attribute is a type error, not a silent ``hasattr`` False (Run >
    Device once never followed the device picker that way)."""

    client: KernelClient
    doc: Document
    editor: CodeEditor
    graph_view: GraphView
    output_panel: OutputPanel
    timeline_bar: TimelineBar
    device_combo: QComboBox
    device_actions: QActionGroup
    progress: QProgressBar
    model: AppState
    state: dict[str, Any] | None
    closing: bool
    freeze_heap: bool

    def set_status(self, text: str) -> None: ...
    def update_actions(self) -> None: ...
    def update_guide(self, note: GuideNote | None = None) -> None: ...
    def apply_state(self, state: dict[str, Any], changes: Any = None) -> None: ...
    def lay_out_pending(self) -> None: ...
    def pause(self) -> PauseInfo | None: ...
    def failed_here(self) -> ResultInfo | None: ...
    def at_end(self) -> bool: ...
    def cursor_index(self) -> int: ...
    def statements(self) -> tuple[StatementInfo, ...]: ...
    def device_from_state(self) -> str: ...

#: how long Stop waits for the kernel to end a statement gently before killing it
STOP_GRACE_MS = 1500
#: Stop is enabled this long after a request starts (a quick step never flashes it)
STOP_ENABLE_DELAY_MS = 200
#: intents that run from the statement at the cursor (the status names its line)
_FROM_CURSOR = (Step, Debug, RunToEnd, RunToLine, Continue, RunToBackward)


def _when_idle(method: Callable[..., None]) -> Callable[..., None]:
    """Run a kernel action now, or after the actions before it are answered.

    A learner may press F10 three times while the first step still runs; each
    press must act on the state the previous one produced, so the press itself
    waits in line (the kernel client queues requests, this queues decisions).
    A read-only snapshot has no kernel work: the press only says so.
    """

    @functools.wraps(method)
    def wrapper(self: Stepper, *args: Any, **kwargs: Any) -> None:
        if self.w.doc.read_only:
            self.w.set_status(
                translate("Stepper", "This is a read-only snapshot: open a script (Ctrl+O) to step")
            )
            return
        if self.w.client.busy or self._pending:
            self._pending.append(lambda: method(self, *args, **kwargs))
            return
        method(self, *args, **kwargs)

    return wrapper


class Stepper(QObject):
    """The forward commands, the timeline and the kernel's life, for one window."""

    def __init__(self, window: StepperWindow):
        super().__init__(window)  # type: ignore[arg-type]  # the window is a QObject
        self.w = window
        self.client = window.client
        self._sent_source: str | None = None
        #: what the last replay repeated outside the script (trusted), to say after it
        self._replay_note: str | None = None
        self._device = "cpu"
        #: every step the user took, with the state it left (see gradviz.app.timeline)
        self.timeline = Timeline()
        #: the timeline step shown when it is a past one (None: the kernel's present)
        self._timeline_at: int | None = None
        #: replies still to come that a timeline replay asked for (not new steps)
        self._unrecorded = 0
        self._busy_since: float | None = None
        self._running_index: int | None = None
        #: a statement the user or the time limit stopped: index, line, seconds, message
        self._stopped: StoppedStatement | None = None
        self._restarted_note: str | None = None
        #: why the window skips a statement Stop or the watchdog killed (said once)
        self._skip_why: str | None = None
        self._pending: list[Callable[[], None]] = []
        self._busy_timer = QTimer(self)
        self._busy_timer.setInterval(250)
        self._busy_timer.timeout.connect(self._on_busy_timer)
        self._stop_timer = QTimer(self)
        self._stop_timer.setSingleShot(True)
        self._stop_timer.setInterval(STOP_ENABLE_DELAY_MS)
        self._stop_timer.timeout.connect(window.update_actions)
        c = self.client
        c.ready.connect(self._on_client_ready)
        c.progressed.connect(self._on_client_progressed)
        c.busy_changed.connect(self._on_client_busy_changed)
        c.crashed.connect(self._on_client_crashed)
        c.restarting.connect(self._on_client_restarting)
        c.replayed.connect(self._on_client_replayed)
        c.gave_up.connect(self._on_client_gave_up)
        c.timed_out.connect(self._on_client_timed_out)
        window.editor.breakpoints_changed.connect(self._on_editor_breakpoints_changed)
        window.timeline_bar.step_picked.connect(self._on_timeline_bar_step_picked)

    @property
    def device(self) -> str:
        """The device the user picked (the kernel's may differ while it switches)."""
        return self._device

    @property
    def stopped(self) -> StoppedStatement | None:
        return self._stopped

    @property
    def timeline_at(self) -> int | None:
        return self._timeline_at

    @property
    def stop_delay_active(self) -> bool:
        return self._stop_timer.isActive()

    def forget_history(self) -> None:
        """Another text or snapshot: no timeline, no queued presses, nothing stopped."""
        self._pending.clear()
        self._stopped = None
        self.timeline.clear()
        self._timeline_at = None
        self.w.timeline_bar.set_steps([], -1)

    def restore_device(self, device: str) -> None:
        if device in ("cpu", "cuda"):
            self._device = device
            self._set_combo_device(device)

    def shutdown(self) -> None:
        self._busy_timer.stop()
        self._stop_timer.stop()

    def _send(
        self,
        request: Request,
        status: str,
        then: Callable[[AppState], None] | None = None,
    ) -> None:
        """Send ``request`` (the window's intent); its reply is shown, then ``then``
        runs on the state it left."""

        def on_reply(reply: dict[str, Any]) -> None:
            answer = Answer.of(reply)
            if (
                isinstance(request, Load)
                and not answer.ok
                and request.device != "cpu"
                and not answer.stopped
                and not answer.crashed
            ):
                # e.g. the last session used cuda and this machine has none: use cpu
                self._device = "cpu"
                self._set_combo_device("cpu")
                self.w.output_panel.add_note(
                    translate("Stepper", "{message}: running on cpu instead").format(
                        message=answer.message
                    )
                )
                self._send(replace(request, device="cpu"), status, then)
                return
            self._on_reply(answer, request)
            if then is not None and answer.ok:
                then(AppState.of(answer.state))

        if isinstance(request, Load):
            self._sent_source = request.source
        self._running_index = self._index_for_status(request)
        if status:
            self.w.set_status(status)
        self.client.request(replace(request, delta=True), on_reply)

    def _index_for_status(self, request: Request) -> int | None:
        if isinstance(request, _FROM_CURSOR) and self.w.state:
            return self.w.cursor_index()
        if isinstance(request, (Load, SetDevice, StepBack)):
            return 0
        return None

    def _on_reply(self, reply: Answer, request: Request) -> None:
        if self.w.closing:
            return
        replayed = self._unrecorded > 0
        if replayed:
            self._unrecorded -= 1
            if not reply.ok:
                self._unrecorded = 0  # the replay broke off: what comes next is new
        if self.w.doc.read_only:
            return  # a reply to a request sent before the snapshot opened: the snapshot stays
        if reply.handled_elsewhere:
            return  # the stop / crash handlers say what happened
        if not reply.ok:
            message = reply.message or translate("Stepper", "the kernel refused")
            self._sent_source = self.client.source
            if isinstance(request, SetDevice):
                self._device = self.w.device_from_state()
                self._set_combo_device(self._device)
            self.w.output_panel.add_note(message, kind="error")
            self.w.set_status(message)
            self.w.update_actions()
            return
        state = reply.state
        if isinstance(state, dict):
            self._timeline_at = None
            self.w.apply_state(state, reply.changes)
            stop = Stop.from_wire(reply.stop)
            self.w.set_status(self._status(request, stop))
            note, self._replay_note = self._replay_note, None
            if note is not None:
                self.w.output_panel.add_note(note, None, "warning")
            if not replayed:
                self._record_step(request, state, stop)
            self.w.lay_out_pending()  # the status text and the timeline's new step too
            if self.w.freeze_heap:
                # the state just kept on the timeline is long-lived: out of the cyclic
                # collector's work, or a full collection over every kept step stalls a
                # later step (the timeline's clear on load gives it back)
                gc.freeze()
            elif self._unrecorded == 0 and self.timeline.steps:
                # the end of a replay to a step whose snapshot had been dropped: keep it now
                last = self.timeline.steps[-1]
                if last.state is None and last.nodes <= MAX_KEPT_NODES:
                    last.state = state

    def _source(self) -> str:
        return self.w.editor.toPlainText()

    def text_changed(self) -> bool:
        sent = self._sent_source if self._sent_source is not None else self.client.source
        return self._source() != sent

    def load_into_kernel(
        self,
        run_to: int | None = None,
        then: Callable[[AppState], None] | None = None,
        status: str = "",
    ) -> None:
        self._stopped = None
        self._send(
            Load(source=self._source(), device=self._device, run_to=run_to),
            status or translate("Stepper", "Loading the script…"),
            then,
        )

    def _syntax_ok(self) -> bool:
        """Check edited text before it replaces the kernel's: a typo must not lose the state."""
        try:
            ast.parse(self._source())
        except SyntaxError as exc:
            line = exc.lineno or 1
            message = f"SyntaxError: {exc.msg}"
            self.w.editor.set_error(
                line,
                line,
                translate(
                    "Stepper",
                    "{message}\n\nNothing ran and the state is unchanged: fix this line and "
                    "press Step again.",
                ).format(message=message),
            )
            self.w.output_panel.add_note(
                translate("Stepper", "{message} (nothing ran; the state is kept)").format(
                    message=message
                ),
                line,
                "error",
            )
            self.w.set_status(
                translate("Stepper", "Line {line}: {message}. Nothing ran; the state is kept.")
                .format(line=line, message=message)
            )
            self.w.update_guide(guide_note(GuideContext(syntax_error=(line, message))))
            return False
        return True

    @_when_idle
    def step(self) -> None:
        """F10: step over: the next statement (inside a paused statement, the next one at
        the same level); reloads edited text first; the kernel passes a failed statement."""
        if self._continue_from_timeline(self.step):
            return
        self._step("over", translate("Stepper", "Running the next statement…"))

    @_when_idle
    def step_into(self) -> None:
        """F11: stop at the next statement at any depth (a loop body, a script function,
        the forward of a script nn.Module called as net(x))."""
        if self._continue_from_timeline(self.step_into):
            return
        self._step("into", translate("Stepper", "Stepping into…"))

    @_when_idle
    def step_out(self) -> None:
        """Shift+F11: finish the current loop or call; stop in the code around it."""
        if self._continue_from_timeline(self.step_out):
            return
        if self.w.pause() is None or self.text_changed():
            self.w.set_status(
                translate(
                    "Stepper", "Step out works inside a paused loop or call: Step into (F11) first"
                )
            )
            return
        self._send(Step(mode="out"), translate("Stepper", "Stepping out…"))

    def _step(self, mode: StepMode, status: str) -> None:
        """Send a Step intent; the kernel decides what it means on its own state (resume
        the paused statement, pass a failed one, run the next)."""
        if self.text_changed():
            if not self._syntax_ok():
                return

            def then(state: AppState) -> None:
                results = state.new_results
                if results and not results[-1].ok:
                    return
                self._send(Step(mode=mode), status)

            self.load_into_kernel(
                self.w.cursor_index(), then, translate("Stepper", "The script changed: re-running it…")
            )
            return
        stopped = self._stopped
        # A statement Stop killed is not run again by accident: the restarted kernel
        # does not know it was stopped, so the intent says so.
        skip = bool(
            stopped is not None and stopped.index == self.w.cursor_index()
            and self.w.pause() is None and not self.w.at_end()
        )
        if skip:
            # why it was stopped is the window's to say (the kernel that timed out is gone)
            self._skip_why = (
                translate("Stepper", "it hit the time limit")
                if stopped is not None and stopped.message
                else translate("Stepper", "you stopped it")
            )
            self._stopped = None
        elif self.w.pause() is None and self.w.at_end():
            self.w.set_status(translate("Stepper", "At the end of the script: nothing left to step"))
            return
        self._send(Step(mode=mode, skip_current=skip), status)

    @_when_idle
    def continue_run(self) -> None:
        """F5: run to the next breakpoint: before a statement whose first line has one, or
        inside a body where one is; to the end when there is none (the kernel decides)."""
        if self._continue_from_timeline(self.continue_run):
            return
        self._intent(
            Continue(breakpoints=self._breakpoints()),
            translate("Stepper", "Running to the next breakpoint…"),
        )

    @_when_idle
    def run_to_backward(self) -> None:
        """Ctrl+F11: run until just before the next statement that calls backward() (or
        autograd.grad), wherever it is: at the top level, in a loop, in a function."""
        if self._continue_from_timeline(self.run_to_backward):
            return
        self._intent(
            RunToBackward(breakpoints=self._breakpoints()),
            translate("Stepper", "Running to the next backward()…"),
        )

    def _intent(self, request: Request, status: str) -> None:
        """Send an intent, after loading edited text first."""
        if self.text_changed():
            if not self._syntax_ok():
                return
            self.load_into_kernel(None, lambda st: self._send(request, status))
            return
        self._send(request, status)

    def _breakpoints(self) -> tuple[int, ...]:
        return tuple(sorted(self.w.editor.breakpoints()))

    def toggle_breakpoint(self) -> None:
        """F9: set or clear a breakpoint on the editor's cursor line."""
        self.w.editor.toggle_breakpoint(self.w.editor.cursor_line())

    def _on_editor_breakpoints_changed(self, lines: list[int]) -> None:
        if lines:
            text = (
                translate("Stepper", "Breakpoints on lines {lines}: Run (F5) stops at the next one")
                if len(lines) > 1
                else translate("Stepper", "Breakpoints on line {lines}: Run (F5) stops at the next one")
            )
            self.w.set_status(text.format(lines=", ".join(str(n) for n in lines)))
        else:
            self.w.set_status(translate("Stepper", "No breakpoints: Run (F5) runs to the end"))

    @_when_idle
    def run_to_end(self) -> None:
        """Run every statement left, breakpoints or not (stops at a failure; a paused
        statement finishes where it stands first)."""
        if self._continue_from_timeline(self.run_to_end):
            return
        self._intent(RunToEnd(), translate("Stepper", "Running to the end…"))

    def run_to_cursor(self) -> None:
        """Ctrl+F10: run through the statement on the editor's cursor line."""
        self._run_to_line(self.w.editor.cursor_line())

    @_when_idle
    def _run_to_line(self, line: int) -> None:
        if self._continue_from_timeline(lambda: self._run_to_line(line)):
            return
        self._intent(
            RunToLine(line=line), translate("Stepper", "Running to line {line}…").format(line=line)
        )

    @_when_idle
    def step_back(self) -> None:
        """Shift+F10: back to the previous step on the timeline: at once where its
        snapshot is kept; otherwise the kernel replays to it."""
        shown = self._timeline_at if self._timeline_at is not None else len(self.timeline) - 1
        if not self.text_changed() and shown >= 1:
            self.show_timeline_step(shown - 1)
            return
        if self._continue_from_timeline(self.step_back):
            return
        if self.text_changed():
            if not self._syntax_ok():
                return
            self.load_into_kernel(max(self.w.cursor_index() - 1, 0))
            return
        self._stopped = None
        cursor = self.w.model.cursor
        self._note_replay(max(cursor - 1, 0))
        self._send(StepBack(), translate("Stepper", "Stepping back…"))

    @_when_idle
    def reset(self) -> None:
        """Ctrl+R: back to before the first statement."""
        self.w.output_panel.clear_notes()
        self._stopped = None
        if self.client.dead:
            self.client.restart()
            return
        if self.text_changed():
            self.load_into_kernel(None)
            return
        self._send(Reset(), translate("Stepper", "Resetting…"))

    @_when_idle
    def zero_grad(self) -> None:
        if self._continue_from_timeline(self.zero_grad):
            return
        self._send(ZeroGrad(), translate("Stepper", "Zeroing every leaf's .grad…"))

    def stop(self) -> None:
        """Shift+F5: a paused or running statement ends where it stands (its work so far
        is kept); one stuck in native code is killed after STOP_GRACE_MS, and the kernel
        restarts and replays."""
        if not self.client.busy and self.w.pause() is not None:
            self._pending.clear()
            self._send(DebugStop(), translate("Stepper", "Stopping the paused statement…"))
            return
        if not self.client.busy:
            return
        self._pending.clear()
        req = self.client.inflight
        if req is not None and self.client.interrupt():
            # The kernel ends the statement at its next loop iteration or statement and
            # replies as usual: its work so far is kept, nothing is rewound. Only a
            # statement stuck in one long native op is killed (after a short grace).
            self.w.set_status(
                translate("Stepper", "Stopping: the statement ends at its next step and keeps its work…")
            )
            QTimer.singleShot(STOP_GRACE_MS, lambda rid=req.id: self._stop_hard(rid))
            return
        self._stop_hard(None)

    def _stop_hard(self, request_id: int | None) -> None:
        """Kill the kernel (restart, replay): for a statement that did not end on Stop."""
        req = self.client.inflight
        if request_id is not None and (req is None or req.id != request_id):
            return  # the stopped request replied in time
        if not self.client.busy:
            return
        index = self._running_index
        req = self.client.inflight
        if req is not None and req.progress_done is not None:
            index = req.progress_done
        seconds = time.monotonic() - (self._busy_since or time.monotonic())
        statements = () if req is not None and req.cmd == "load" else self.w.statements()
        line = statements[index].line if index is not None and index < len(statements) else None
        self._stopped = StoppedStatement(index, line, seconds)
        if not self.client.stop():
            return
        where = (
            translate("Stepper", "line {line}").format(line=line)
            if line
            else translate("Stepper", "the statement")
        )
        self.w.output_panel.add_note(
            translate(
                "Stepper",
                "Stopped {where} after {seconds} s. Restarting the kernel and replaying the "
                "statements before it; nothing before it is lost.",
            ).format(where=where, seconds=f"{seconds:.1f}"),
            line,
        )
        self.w.set_status(
            translate("Stepper", "Stopped {where}: restarting the kernel and replaying…").format(
                where=where
            )
        )

    def _on_client_timed_out(self, message: str, phase: Any) -> None:
        """The watchdog killed the kernel: mark the statement, keep everything before it."""
        if self.w.closing:
            return
        self._pending.clear()
        # the phase is the kernel's message (the client put its own limit_s in): checked
        running = PhaseInfo.of(phase)
        index = running.index if running.index is not None else self._running_index
        statements = self.w.statements()
        line = (
            statements[index].line
            if index is not None and 0 <= index < len(statements) else None
        )
        seconds = running.limit_s if running.limit_s is not None else 0.0
        self._stopped = StoppedStatement(index, line, seconds, message)
        self.w.output_panel.add_note(
            translate(
                "Stepper",
                "{message}. Restarting the kernel and replaying the statements before it; "
                "nothing before it is lost.",
            ).format(message=message),
            line,
        )
        self.w.set_status(
            translate(
                "Stepper", "Time limit: line {line} stopped; restarting the kernel and replaying…"
            ).format(line=line)
        )

    @_when_idle
    def set_device(self, device: str) -> None:
        if device != self._device and self._continue_from_timeline(lambda: self.set_device(device)):
            return
        if device == self._device:
            self._set_combo_device(device)
            return
        info = self.client.info
        kernel = KernelInfo.of(info)
        if device == "cuda" and info and not kernel.cuda_available:
            self.w.set_status(
                translate("Stepper", "cuda is unavailable: {reason}").format(
                    reason=kernel.cuda_reason or None
                )
            )
            self._set_combo_device(self._device)
            return
        self._device = device
        self._set_combo_device(device)
        cursor = self.w.cursor_index()
        if self.text_changed() and self._syntax_ok():
            self.load_into_kernel(
                cursor,
                status=translate("Stepper", "Switching to {device} and re-running…").format(
                    device=device
                ),
            )
        else:
            self._send(
                SetDevice(device=device, run_to=cursor),
                translate("Stepper", "Switching to {device}: re-running {n} statements…").format(
                    device=device, n=cursor
                ),
            )

    def _set_combo_device(self, device: str) -> None:
        self.w.device_combo.blockSignals(True)
        self.w.device_combo.setCurrentText(device)
        self.w.device_combo.blockSignals(False)
        for act in self.w.device_actions.actions():
            act.setChecked(act.text() == device)

    def _on_device_combo_changed(self, text: str) -> None:
        self.set_device(text)

    def _record_step(self, request: Request, state: dict[str, Any], stop: Stop | None) -> None:
        """Put the state a step left on the timeline (a load of new text starts a new one)."""
        if not request.IS_STEP:
            return
        if isinstance(request, Load):
            self.timeline.clear()
            if self.w.freeze_heap:
                gc.unfreeze()
        model = AppState.of(state)
        pause = model.paused
        label, tip = describe_step(state)
        self.timeline.add(
            TimelineStep(
                label=label,
                tip=tip,
                state=state,
                cursor=pause.statement if pause is not None else model.cursor,
                # how the kernel got to this pause (its own account), so a replay can
                # get there again
                path=(stop.path if stop is not None else ()) if pause is not None else (),
                paused=pause is not None,
                nodes=len(model.graph_nodes),
            )
        )
        self._timeline_at = None
        self.w.timeline_bar.set_steps(self.timeline.steps, len(self.timeline) - 1)

    def _status(self, request: Request, stop: Stop | None) -> str:
        """The status line after ``request``'s reply: where and why the kernel stopped."""
        pause = self.w.pause()
        model = self.w.model
        text = reply_status(request.CMD, model, pause)
        if stop is not None and pause is None and not any(not r.ok for r in model.new_results):
            if stop.reason == "breakpoint" and stop.line:
                text = translate(
                    "Stepper", "Stopped at the breakpoint on line {line} (before it runs)"
                ).format(line=stop.line)
            elif stop.reason == "backward" and stop.line:
                text = translate("Stepper", "Stopped before line {line}: it calls backward()").format(
                    line=stop.line
                )
            elif stop.reason == "no_backward":
                text = translate("Stepper", "No backward() call is left to run to")
            elif stop.reason == "end" and not model.new_results and stop.skipped is None:
                text = translate("Stepper", "At the end of the script: nothing left to step")
        if stop is not None and stop.skipped is not None:
            why = (
                translate("Stepper", "you stopped it")
                if stop.skipped_why == "stopped"
                else translate("Stepper", "it failed")
            )
            if self._skip_why is not None:
                why, self._skip_why = self._skip_why, None
            text = translate("Stepper", "Skipped line {line} ({why}); {status}").format(
                line=stop.skipped, why=why, status=text
            )
        return text

    def _on_client_replayed_step(self, state: dict[str, Any]) -> None:
        """A restarted kernel's replay is where the session now stands: a step of its own."""
        self._record_step(RunTo(index=0), state, None)

    def _on_timeline_bar_step_picked(self, index: int) -> None:
        if self.busy:
            self.w.set_status(
                translate("Stepper", "The kernel is busy: pick the step again when it is done")
            )
            self.w.timeline_bar.set_steps(self.timeline.steps, self._shown_step())
            return
        self.show_timeline_step(index)

    def _shown_step(self) -> int:
        return self._timeline_at if self._timeline_at is not None else len(self.timeline) - 1

    def show_timeline_step(self, index: int) -> None:
        """Show the moment of timeline step ``index``: its kept snapshot at once (no kernel
        request), or, when its snapshot was dropped to save memory, a replay to it."""
        if not 0 <= index < len(self.timeline):
            return
        step = self.timeline.steps[index]
        last = len(self.timeline) - 1
        if step.state is None:
            self._replay_to_step(index)
            return
        self._timeline_at = None if index == last else index
        self.w.apply_state(self._in_place(step.state))
        self.w.timeline_bar.set_steps(self.timeline.steps, index)
        if index == last:
            self.w.set_status(
                translate("Stepper", "Back at the present: step {n} of {total}").format(
                    n=index + 1, total=last + 1
                )
            )
        else:
            self.w.set_status(
                translate(
                    "Stepper",
                    "Showing step {n} of {total} ({tip}) from the timeline;"
                    " Step or Run continues from here",
                ).format(n=index + 1, total=last + 1, tip=step.tip)
            )

    def _in_place(self, state: dict[str, Any]) -> dict[str, Any]:
        """A kept state with every node where it is on screen now, when all of them are
        shown: going back on the timeline moves nothing (a node a later step moved, such
        as an in-place op's tensor, stays put; the kernel keeps the places shown too)."""
        display = self.w.graph_view.display
        old = AppState.of(state).positions
        if display is None or not old or not all(n in display.positions for n in old):
            return state
        return {**state, "positions": {n: list(display.positions[n]) for n in old}}

    def _continue_from_timeline(self, action: Callable[[], None]) -> bool:
        """When a past step is shown, make it the present before ``action`` runs: the
        kernel replays to it (the steps after it leave the timeline). True when it did."""
        at = self._timeline_at
        if at is None:
            return False
        self._timeline_at = None
        if at >= len(self.timeline) - 1:
            return False
        self._replay_to_step(at)
        self._pending.append(action)
        return True

    def _note_replay(self, upto: int) -> None:
        """Before the kernel replays the script's first ``upto`` statements (trusted:
        real Python), say what that repeats outside the script (files, programs)."""
        if not self.client.trusted:
            return  # restricted mode reaches nothing outside the kernel
        statements = [(st.line, st.end_line or st.line) for st in self.w.model.statements]
        source = self._sent_source if self._sent_source is not None else self.client.source
        note = replay_note(source or "", statements, upto)
        if note is not None:
            self.w.output_panel.add_note(note, None, "warning")
            self.w.set_status(note)
            self._replay_note = note  # said again once the replay's state is shown

    def _replay_to_step(self, index: int) -> None:
        """Bring the kernel to timeline step ``index``: run its statements again from a
        fresh start, then repeat the debug requests that paused it (same seed, same run)."""
        step = self.timeline.steps[index]
        self.timeline.truncate(index)
        self._timeline_at = None
        source = self._sent_source if self._sent_source is not None else self.client.source
        zero_points = [z for z in self.w.model.zero_points if z <= step.cursor]
        self._note_replay(step.cursor + (1 if step.path else 0))
        self._stopped = None
        self._unrecorded += 1 + len(step.path)
        self._send(
            Load(source=source or "", device=self._device, run_to=step.cursor,
                 zero_points=tuple(zero_points)),
            translate("Stepper", "Going back to step {n}: replaying…").format(n=index + 1),
        )  # fmt: skip
        for mode, breakpoints in step.path:
            self._send(Debug(mode=mode, breakpoints=breakpoints), "")  # type: ignore[arg-type]
        self.w.timeline_bar.set_steps(self.timeline.steps, index)

    def _on_client_ready(self, info: dict[str, Any]) -> None:
        model = self.w.device_combo.model()
        if isinstance(model, QStandardItemModel):
            item = model.item(1)
            kernel = KernelInfo.of(info)
            available = kernel.cuda_available
            item.setEnabled(available)
            reason = kernel.cuda_reason
            item.setToolTip(
                plain_tooltip(
                    translate("Stepper", "CUDA is available")
                    if available
                    else translate("Stepper", "cuda unavailable: {reason}").format(reason=reason)
                )
            )
            cuda_action = self.w.device_actions.actions()[1]
            cuda_action.setEnabled(available)
            cuda_action.setToolTip(item.toolTip())
            if not available and self._device == "cuda":
                self._device = "cpu"
                self._set_combo_device("cpu")
                self.w.set_status(
                    translate("Stepper", "cuda is unavailable here ({reason}): using cpu").format(
                        reason=reason
                    )
                )
        if not self.client.replaying and self.w.state is None:
            self.w.set_status(translate("Stepper", "Kernel ready"))

    def _on_client_progressed(self, done: int, total: int) -> None:
        if total >= 2:
            self.w.progress.setRange(0, total)
            self.w.progress.setValue(done)
            self.w.progress.show()
        if self.client.replaying:
            self.w.set_status(
                translate("Stepper", "Replaying {done} of {total} statements on a fresh kernel…")
                .format(done=done, total=total)
            )
        else:
            statements = self.w.statements()
            self._running_index = done
            if done < len(statements) and done < total:
                line = statements[done].line
                self.w.set_status(
                    translate("Stepper", "Running line {line} ({n} of {total})…").format(
                        line=line, n=done + 1, total=total
                    )
                )

    def _on_client_busy_changed(self, busy: bool) -> None:
        if busy:
            self._busy_since = time.monotonic()
            self._busy_timer.start()
            self._stop_timer.start()
        else:
            self._busy_since = None
            self._busy_timer.stop()
            self._stop_timer.stop()
            self.w.progress.hide()
        self.w.update_actions()
        while not busy and self._pending and not self.client.busy and not self.w.closing:
            self._pending.pop(0)()

    @property
    def busy(self) -> bool:
        """True while the kernel works or pressed actions wait their turn."""
        return self.client.busy or bool(self._pending)

    def _on_busy_timer(self) -> None:
        if self._busy_since is None:
            return
        elapsed = time.monotonic() - self._busy_since
        if elapsed < 1.0 or self.client.replaying or not self.client.inflight:
            return
        statements = self.w.statements()
        index = self._running_index
        req = self.client.inflight
        if req is not None and req.progress_done is not None:
            index = req.progress_done
        where = translate("Stepper", "the script")
        if req is not None and req.cmd != "load" and index is not None and index < len(statements):
            where = translate("Stepper", "line {line}").format(line=statements[index].line)
        self.w.set_status(
            translate("Stepper", "Running {where} for {seconds} s… Stop (Shift+F5) ends it").format(
                where=where, seconds=f"{elapsed:.0f}"
            )
        )

    def _on_client_restarting(self, why: str) -> None:
        self.w.progress.hide()
        if why == "crashed":
            self.w.set_status(translate("Stepper", "The kernel died: restarting it and replaying…"))

    def _on_client_crashed(self, message: str) -> None:
        if self.w.closing:
            return
        self._restarted_note = message
        self.w.output_panel.add_note(
            translate(
                "Stepper", "{message}. Restarting it and replaying the statements that had run."
            ).format(message=_first_line(message))
        )
        self.w.set_status(translate("Stepper", "The kernel died: restarting it and replaying…"))

    def _on_client_replayed(self, reply: dict[str, Any]) -> None:
        if self.w.closing or self.w.doc.read_only:
            return
        crashed = self._restarted_note is not None
        self._restarted_note = None
        self.w.progress.hide()
        answer = Answer.of(reply)
        if not answer.ok or answer.state is None:
            self.w.set_status(
                translate("Stepper", "Restarted, but the replay failed: {message}").format(
                    message=answer.message
                )
            )
            self._sent_source = self.client.source
            self.w.update_actions()
            return
        state = answer.state
        self._sent_source = self.client.source
        self._unrecorded = 0
        self._timeline_at = None
        self.w.apply_state(state)
        self._on_client_replayed_step(state)
        n = self.w.model.cursor
        if crashed:
            self.w.set_status(
                translate("Stepper", "Kernel restarted after a crash; replayed {n} statements")
                .format(n=n)
            )
        else:
            where = (
                translate("Stepper", "line {line}").format(line=self._stopped.line)
                if self._stopped is not None and self._stopped.line
                else translate("Stepper", "the statement")
            )
            self.w.set_status(
                translate(
                    "Stepper",
                    "Stopped {where}; replayed {n} statements on a fresh kernel:"
                    " all state before it is kept",
                ).format(where=where, n=n)
            )

    def _on_client_gave_up(self, message: str) -> None:
        self._pending.clear()
        self.w.output_panel.add_note(
            translate("Stepper", "The kernel keeps crashing; press Reset (Ctrl+R) to start it again.")
        )
        self.w.set_status(
            translate("Stepper", "The kernel keeps crashing: press Reset (Ctrl+R) to start it again")
        )
        self.w.update_actions()
