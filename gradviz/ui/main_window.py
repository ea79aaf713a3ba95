"""The main window: it composes the editor, the canvas, the panels and the actions.

The window holds no torch objects and little logic of its own. Its parts:

* :mod:`gradviz.ui.window_layout` places the widgets; :mod:`gradviz.ui.actions`
  declares every command (text, keys, icon, handler, menu and toolbar place);
* :class:`~gradviz.ui.stepper.Stepper` runs the script in the kernel process and
  keeps the timeline; :class:`~gradviz.ui.files.Files` opens, saves and autosaves;
  :class:`~gradviz.ui.graph_view.GraphView` turns the state's graph into the
  picture (grouping, layout, search); :class:`~gradviz.ui.backward_replay.BackwardReplay`
  steps the recorded backward pass;
* what to say and which commands make sense come from the Qt-free
  :mod:`gradviz.app` layer (guide text, editor marks, enabled commands, the
  document and its read-only flag).

:meth:`MainWindow.apply_state` is the one place a kernel state (or a snapshot's)
reaches the widgets.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any, cast

import networkx as nx
from PySide6.QtCore import QByteArray, QCoreApplication, QEvent, QSettings, Qt, QTimer
from PySide6.QtGui import QActionGroup, QCloseEvent, QGuiApplication
from PySide6.QtWidgets import (
    QApplication,
    QComboBox,
    QDockWidget,
    QLabel,
    QLineEdit,
    QMainWindow,
    QMenu,
    QProgressBar,
    QSplitter,
    QTabBar,
    QToolBar,
)

from gradviz import i18n
from gradviz.app.commands import CommandContext, enabled_commands
from gradviz.app.files import APP_NAME, Document
from gradviz.app.guide import (
    GuideContext,
    GuideNote,
    GuideTitle,
    guide_note,
    guide_title,
    position_text,
    read_only_banner,
    read_only_note,
)
from gradviz.app.marks import editor_marks
from gradviz.app.models import (
    AppState,
    PauseInfo,
    ResultInfo,
    StatementInfo,
    remember_node_index,
)
from gradviz.app.trust import BADGE_TEXT, BADGE_TIP, RESTRICTED, TRUSTED, Decision, TrustStore
from gradviz.graph.delta import GraphChanges
from gradviz.i18n import QT_TRANSLATE_NOOP

from . import actions as action_table
from . import dialogs
from .backward_replay import BackwardReplay
from .canvas import GraphCanvas
from .debug_strip import DebugStrip
from .editor import CodeEditor
from .files import AUTOSAVE_INTERVAL_MS, Files
from .fonts import missing_fonts, missing_fonts_message
from .graph_view import GraphView
from .guide_strip import GuideStrip
from .i18n import SETTINGS_KEY as LANGUAGE_KEY
from .i18n import install_language, saved_language, translate
from .kernel_client import KernelClient
from .panels import (
    AccumulationPanel,
    InspectorPanel,
    MemoryPanel,
    ModulesPanel,
    OutputPanel,
    TensorsPanel,
)
from .passes_panel import PassesPanel
from .settings import default_data_dir, default_settings
from .stepper import Stepper
from .timeline import TimelineBar
from .trust_banner import TrustBanner
from .window_layout import (
    SETTINGS_VERSION,
    apply_default_sizes,
    build_central,
    build_docks,
    build_status,
)

__all__ = ["APP_NAME", "MainWindow"]


#: the mode badge's words as gradviz.app.trust writes them (BADGE_TEXT, BADGE_TIP): the
#: keys the window translates them by (tests/test_i18n.py checks each has its entry)
_TRUST_WORDS = (
    QT_TRANSLATE_NOOP("Trust", "Trusted"),
    QT_TRANSLATE_NOOP("Trust", "Restricted mode"),
    QT_TRANSLATE_NOOP(
        "Trust",
        "This script runs as Python, as python would run it: imports, files, the GPU. "
        "Scripts you write, the demos and folders you trusted run this way.",
    ),
    QT_TRANSLATE_NOOP(
        "Trust",
        "This script runs in restricted mode: gradviz's interpreter in a confined "
        "process, with no files, network or programs, and only what the allowlist admits. "
        "For scripts from someone else.",
    ),
)

#: on a shrink, a panel keeps its old height up to this share of the window
PANEL_MAX_SHARE = 0.33


class MainWindow(QMainWindow):
    """gradviz's window. Construct, ``show()``, then ``open_initial()``."""

    #: freeze the heap after each step (gc.freeze): only in gradviz's own process,
    #: never inside a host program that called the library (see gradviz.ui.app)
    freeze_heap = False

    # The parts, made by gradviz.ui.window_layout and gradviz.ui.actions (the actions
    # themselves are window.act_<key>, and window.actions_by_key by key).
    editor: CodeEditor
    editor_header: QLabel
    canvas: GraphCanvas
    guide: GuideStrip
    guide_title: QLabel
    guide_note: QLabel
    debug_strip: DebugStrip
    timeline_bar: TimelineBar
    splitter: QSplitter
    tensors_panel: TensorsPanel
    accumulation_panel: AccumulationPanel
    memory_panel: MemoryPanel
    inspector_panel: InspectorPanel
    output_panel: OutputPanel
    modules_panel: ModulesPanel
    passes_panel: PassesPanel
    inspector_dock: QDockWidget
    modules_dock: QDockWidget
    docks: list[QDockWidget]
    default_dock_state: QByteArray
    toolbar: QToolBar
    device_combo: QComboBox
    mode_badge: QLabel
    trust_banner: TrustBanner
    device_actions: QActionGroup
    search_box: QLineEdit
    search_label: QLabel
    recent_menu: QMenu
    status_label: QLabel
    position_label: QLabel
    device_label: QLabel
    layout_label: QLabel
    progress: QProgressBar  # (window_layout.build_status)
    language_actions: QActionGroup  # View › Language (actions.build_menus)

    def __init__(
        self,
        settings: QSettings | None = None,
        data_dir: Path | str | None = None,
        *,
        autosave_interval_ms: int = AUTOSAVE_INTERVAL_MS,
        start_kernel: bool = True,
    ):
        super().__init__()
        self.settings = settings if settings is not None else default_settings()
        self.data_dir = Path(data_dir) if data_dir is not None else default_data_dir()
        # before any widget: each takes its words in the language installed now
        app = QApplication.instance()
        self.language = install_language(
            self.settings, qt_strings=bool(app is not None and app.property("gradviz_owned"))
        )
        #: the kernel's last state shown (or a snapshot's) as it came (the wire dict:
        #: what a snapshot saves); None before the first reply
        self.state: dict[str, Any] | None = None
        #: the same state, typed: what every widget reads
        self.model: AppState = AppState.of(None)
        #: what the editor holds: a file, a demo, or a read-only snapshot
        self.doc = Document()
        self.closing = False
        self._sized = False
        self._pending_rebalance: dict[str, Any] | None = None
        #: the note that no installed font shows the script's letters: once a session
        self._font_note_given = False
        self._font_check = QTimer(self)
        self._font_check.setSingleShot(True)
        self._font_check.setInterval(400)
        self._font_check.timeout.connect(self._check_fonts)
        #: the panels' and the editor's shares of the window, at the size they were seen
        self._shares: dict[str, Any] | None = None
        self.setWindowTitle(APP_NAME)
        self.setObjectName("gradvizMainWindow")
        self.setAccessibleName("gradviz")
        self.setDockOptions(
            QMainWindow.DockOption.AnimatedDocks
            | QMainWindow.DockOption.AllowTabbedDocks
            | QMainWindow.DockOption.AllowNestedDocks
        )
        self.client = KernelClient(self)
        self.client.output_written.connect(lambda text, line: self.output_panel.add_live(text, line))
        # the first screen is a demo or the user's own script: trusted until a file
        # from a folder never trusted says otherwise (see Files.open_path)
        self.client.trusted = True
        self.trust = TrustStore(load=self._trusted_folders, save=self._save_trusted_folders)
        #: folders whose banner was answered "Keep restricted" in this session
        self._kept_restricted: set[Path] = set()
        build_central(self)
        build_docks(self)
        #: the panels that show the whole state (set_state)
        self.state_panels = (
            self.tensors_panel,
            self.accumulation_panel,
            self.memory_panel,
            self.output_panel,
            self.inspector_panel,
        )
        self.files = Files(self, self.data_dir, autosave_interval_ms)
        self.actions_by_key = action_table.build_actions(self)
        action_table.build_menus(self, self.actions_by_key)
        action_table.build_toolbar(self, self.actions_by_key)
        build_status(self)
        self.stepper = Stepper(self)
        self.graph_view = GraphView(self)
        self.replay = BackwardReplay(self)
        self.files.update_recent_menu()
        self._check_language_action()
        self.modules_panel.chains_box.toggled.connect(self.actions_by_key["chains"].setChecked)
        self.passes_panel.pass_picked.connect(self.replay.pick)
        self.editor.textChanged.connect(self._on_editor_text_changed)
        self.editor.document().modificationChanged.connect(lambda *_: self.files.update_title())
        self.resize(1400, 900)
        self._restore_window()
        self.update_actions()
        self.files.update_title()
        if start_kernel:
            self.client.start()

    # --- the kernel's state -------------------------------------------------------------------

    def apply_state(self, state: dict[str, Any], changes: GraphChanges | None = None) -> None:
        """Render a kernel state (or a snapshot's) in every part of the window.

        ``changes`` (what differs from the state before, as the kernel sent it) lets
        the canvas update only those items."""
        self.state = state
        model = self.model = AppState.of(state)
        if changes is not None and len(changes.node_attrs) == len(model.graph_nodes):
            # the decoder's own index of this graph's nodes (built in the same order)
            remember_node_index(model.graph_data, changes.node_attrs)
        view = self.graph_view
        view.state_changes = changes
        view.set_raw_graph(model.graph_data)
        view.pass_graph_shown = None
        passes = model.backward_passes
        self.replay.sync(passes)
        self.inspector_panel.focus_pass = None
        view.refresh_display()
        if self.isVisible():
            # The canvas shows the step now, before the side panels take the state: Qt
            # would paint every dirty widget of the window in one pass and put it on
            # screen at its end, so the graph waited for the tables, the plot and the
            # gutter (5-8 ms at lesson size). The scene's pending item changes become
            # the viewport's dirty region first (a queued call of the scene's).
            QCoreApplication.sendPostedEvents(self.canvas.scene(), QEvent.Type.MetaCall)
            QCoreApplication.sendPostedEvents(self, QEvent.Type.UpdateRequest)
        self.inspector_panel.take_changes(changes)
        for panel in self.state_panels:
            panel.set_state(model)
        self.debug_strip.set_pause(self.pause())
        self.passes_panel.set_passes(passes, self.statements(), self.replay.player.pass_index)
        self._mark_editor()
        self.update_guide()
        self._update_position()
        self.update_actions()
        self.lay_out_pending()

    def lay_out_pending(self) -> None:
        """Lay out now what a state changed (new texts in the guide and status row, new
        rows in the tables and the timeline), so it paints in the same pass as the rest.

        Left to the event loop, the labels' layout requests and the item views' delayed
        layouts ran after the panels had painted, and each drew its widget again in a
        pass of its own: measuring the wrapped guide note redrew it every step, a new
        accumulation row its table and scroll bars (a lesson step settled 0.5-6 ms
        later)."""
        if not self.isVisible():
            return
        for view in (
            self.tensors_panel.table, self.accumulation_panel.table,
            self.memory_panel.table, self.timeline_bar.list,
        ):  # fmt: skip
            view.executeDelayedItemsLayout()
        # a request answered posts its parent's, which Qt's call leaves for a later one
        for _ in range(3):
            QCoreApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)

    def statements(self) -> tuple[StatementInfo, ...]:
        return self.model.statements

    def cursor_index(self) -> int:
        return self.model.cursor

    def failed_here(self) -> ResultInfo | None:
        """The failed result at the cursor, if the last statement that ran failed."""
        results = self.model.results
        if results and not results[-1].ok and results[-1].index == self.model.cursor:
            return results[-1]
        return None

    def at_end(self) -> bool:
        return self.cursor_index() >= len(self.statements())

    def pause(self) -> PauseInfo | None:
        """Where the kernel's statement is paused (None when nothing is, or read-only)."""
        return None if self.doc.read_only else self.model.paused

    def device_from_state(self) -> str:
        if self.state:
            return "cuda" if self.model.device.startswith("cuda") else "cpu"
        return self.stepper.device

    def _demo_text_shown(self) -> bool:
        """A demo's notes are true only for the demo's own text."""
        demo = self.doc.demo
        return demo is not None and self.editor.toPlainText() == demo.source

    # --- editor marks, guide, position, actions -------------------------------------------------

    def _mark_editor(self) -> None:
        model = self.model
        marks = editor_marks(
            model.statements, model.results, model.cursor, self.failed_here(),
            model.parse_error, self.stepper.stopped,
        )  # fmt: skip
        self.editor.set_statement_marks(marks.next_lines, marks.ran_lines, set(marks.executed))
        pause = self.pause()
        self.editor.set_paused_line(pause.line if pause is not None else None)
        if marks.error is not None:
            self.editor.set_error(*marks.error)
        else:
            self.editor.clear_error()
        # the line that matters now stays in view: the error, where it is paused, or next
        lines = marks.error or marks.next_lines or marks.ran_lines
        if pause is not None and not marks.error:
            self.editor.show_line(pause.line)
        elif lines:
            self.editor.show_line(lines[0])
        self.editor.set_notes(self.doc.demo.notes if self._demo_text_shown() else {})

    def update_guide(self, note: GuideNote | None = None) -> None:
        """The guide strip: ``note`` when given (a backward step, a syntax error), else
        what the state says comes next."""
        nodes = len(self.model.graph_nodes)
        passes = len(self.model.backward_passes)
        if self.doc.read_only:
            self.guide.show_title(
                GuideTitle(read_only_banner(self.doc.snapshot_name, nodes, passes))
            )
            self.guide.show_note(note or read_only_note(self.replay.available()))
            return
        demo_on = self._demo_text_shown()
        self.guide.show_title(
            guide_title(
                self.doc.demo if demo_on else None, self.doc.path.name if self.doc.path else None
            )
        )
        if note is None:
            pause = self.pause()
            timeline_at = self.stepper.timeline_at
            note = guide_note(
                GuideContext(
                    statements=self.statements(),
                    cursor=self.cursor_index(),
                    failed=self.failed_here(),
                    parse_error=self.model.parse_error,
                    pause=pause,
                    paused_code=(
                        self.editor.document().findBlockByNumber(pause.line - 1).text().strip()
                        if pause is not None else ""
                    ),
                    stopped=self.stepper.stopped,
                    notes=self.doc.demo.notes if demo_on else {},
                    timeline=(timeline_at, len(self.stepper.timeline)) if timeline_at is not None else None,
                    backward_available=self.replay.available(),
                    has_passes=bool(passes),
                )
            )  # fmt: skip
        self.guide.show_note(note)

    def read_only_banner(self) -> str:
        """``Read-only snapshot of run.gradviz.json: 136 nodes · 1 backward pass — …``."""
        model = self.model
        return read_only_banner(
            self.doc.snapshot_name, len(model.graph_nodes), len(model.backward_passes)
        )

    def _update_position(self) -> None:
        if self.doc.read_only:
            self.position_label.setText(translate("MainWindow", "read-only snapshot"))
            self.device_label.setText(
                translate("MainWindow", "device: {device}").format(device=self.model.device)
            )
            return
        self.position_label.setText(
            position_text(len(self.statements()), self.cursor_index(), self.pause())
        )
        self.device_label.setText(
            translate("MainWindow", "device: {device}").format(device=self.device_from_state())
        )

    def update_actions(self) -> None:
        """Enable the commands that make sense now (:func:`gradviz.app.commands.enabled_commands`)."""
        if not hasattr(self, "stepper"):
            return  # still being built
        stepper, client = self.stepper, self.client
        changed = (
            stepper.text_changed()
            or bool(stepper._pending)
            or (stepper._sent_source is not None and stepper._sent_source != client.source)
        )  # a load of new text is under way, or presses wait their turn
        model = self.model
        enabled = enabled_commands(
            CommandContext(
                read_only=self.doc.read_only,
                alive=not client.dead,
                changed=changed,
                has_state=self.state is not None,
                at_end=self.at_end(),
                failed_here=self.failed_here() is not None,
                paused=self.pause() is not None,
                has_statements=bool(self.statements()),
                can_step_back=self.cursor_index() > 0 or bool(model.results) or stepper._shown_step() > 0,
                backward_available=self.replay.available(),
                backward_shown=self.replay.player.visible,
                has_grad=any(t.is_leaf and t.grad is not None for t in model.tensors.values()),
                stoppable=client.busy and not stepper.stop_delay_active
                and (client.inflight is not None or client.replaying),
                busy=client.busy,
            )
        )  # fmt: skip
        for key, on in enabled.items():
            if key == "device":
                self.device_combo.setEnabled(on)
                self.device_actions.setEnabled(on)
            else:
                self.actions_by_key[key].setEnabled(on)

    def keyPressEvent(self, event: Any) -> None:  # noqa: N802 - Qt override
        """A key no widget took: F7 while there is no backward pass to show says why
        (its action is disabled, so the key would do nothing and say nothing)."""
        if event.key() in (Qt.Key.Key_F7,) and not self.actions_by_key["bw_step"].isEnabled():
            self.set_status(
                translate(
                    "MainWindow",
                    "No backward pass to step through yet: F7 shows backward() node by node "
                    "once a statement has called backward() or torch.autograd.grad (F10 steps "
                    "to it)",
                )
            )
            event.accept()
            return
        super().keyPressEvent(event)

    def _on_editor_text_changed(self) -> None:
        self.update_actions()
        if not self._font_note_given:
            self._font_check.start()  # once the text stops changing (a paste, a file)
        if self.doc.demo is not None and self.state is not None:
            # notes are only true for the demo's own text
            self._mark_editor()
            self.update_guide()

    #: the editor's share of the editor/canvas split before a snapshot narrowed it
    editor_share_before_snapshot: float | None = None

    def leave_read_only(self) -> None:
        """A script replaces the snapshot: every panel starts empty, and the editor gets
        back the width the snapshot took from it."""
        self.doc.leave_snapshot()
        self.editor.setReadOnly(False)
        share, self.editor_share_before_snapshot = self.editor_share_before_snapshot, None
        total = sum(self.splitter.sizes())
        if share is not None and total > 0:
            editor = int(total * share)
            self.splitter.setSizes([editor, total - editor])
        self.graph_view.forget()
        self.state = None
        self.model = AppState.of(None)
        self.graph_view.set_raw_graph({})
        self.canvas.clear()
        for panel in self.state_panels:
            panel.set_state({})
        self.inspector_panel.set_groups({})
        self.modules_panel.set_modules({}, ())
        self.graph_view.update_search_hits()

    # --- window geometry, help, status ------------------------------------------------------------

    def childEvent(self, event: Any) -> None:  # noqa: N802 - Qt override
        super().childEvent(event)
        child = event.child()
        if event.type() == QEvent.Type.ChildPolished and isinstance(child, QTabBar):
            # the tabs of docks sharing a place (made by QMainWindow as docks are
            # tabified or restored): whole titles, scrolled when they do not fit
            # ("Gradient accu…", "M…" at 1024 px), never cut
            child.setElideMode(Qt.TextElideMode.ElideNone)
            child.setUsesScrollButtons(True)

    def resizeEvent(self, event: Any) -> None:  # noqa: N802 - Qt override
        action_table.fit_toolbar(self, event.size().width())
        super().resizeEvent(event)
        shares = self._shares
        if self._sized and shares is not None and shares["size"] != event.size().toTuple():
            # QMainWindow gives or takes the whole difference from the central area
            # (shrinking 1400x900 to 1024x700 left the canvas 200x90 px): the panels
            # and the editor keep the shares they had at the size the user left
            self._pending_rebalance = shares
            QTimer.singleShot(0, self._rebalance)

    def eventFilter(self, watched: Any, event: Any) -> bool:  # noqa: N802 - Qt override
        if event.type() == QEvent.Type.Resize and self._sized and self._pending_rebalance is None:
            # a panel or the editor/canvas split changed while the window kept its size:
            # the user's own proportions, remembered once the layout settles
            if self._shares is None or self._shares["size"] == self.size().toTuple():
                QTimer.singleShot(0, self._remember_shares)
        return super().eventFilter(watched, event)

    def _shown_docks(self) -> list[Any]:
        """Docked panels on screen (a tab behind another is moved off screen, not hidden)."""
        return [d for d in self.docks
                if d.isVisible() and not d.isFloating() and not d.visibleRegion().isEmpty()]

    def _remember_shares(self) -> None:
        if self._pending_rebalance is not None:
            return
        width, height = max(self.width(), 1), max(self.height(), 1)
        docks = self._shown_docks()
        sizes = self.splitter.sizes()
        self._shares = {
            "size": self.size().toTuple(),
            "docks": docks,
            "widths": [d.width() / width for d in docks],
            "heights": [d.height() / height for d in docks],
            "editor": sizes[0] / max(sum(sizes), 1) if len(sizes) == 2 else None,
        }

    def _rebalance(self) -> None:
        shares, self._pending_rebalance = self._pending_rebalance, None
        if not shares:
            return
        width, height = self.width(), self.height()
        shown = self._shown_docks()
        docks = [d for d in shares["docks"] if d in shown]
        keep = [shares["docks"].index(d) for d in docks]
        if docks:
            # each panel keeps its share of the width, and of the height too, except
            # that on a shrink a panel keeps its old height up to a third of the window
            # (a table stays readable; the canvas keeps most of the room)
            _, old_h = shares["size"]
            widths = [shares["widths"][i] * width for i in keep]
            heights = [max(shares["heights"][i] * height,
                           min(shares["heights"][i] * old_h, PANEL_MAX_SHARE * height)) for i in keep]
            self.resizeDocks(docks, [max(1, int(w)) for w in widths], Qt.Orientation.Horizontal)
            self.resizeDocks(docks, [max(1, int(h)) for h in heights], Qt.Orientation.Vertical)
        layout = self.layout()
        if layout is not None:
            layout.activate()  # the central area's new width, now
        if shares["editor"] is not None:
            total = max(sum(self.splitter.sizes()), 1)
            editor = int(total * shares["editor"])
            self.splitter.setSizes([editor, total - editor])
        # the same shares, at this size (a later resize starts from them)
        self._shares = {**shares, "size": self.size().toTuple()}

    def showEvent(self, event: Any) -> None:  # noqa: N802 - Qt override
        super().showEvent(event)
        if not self._sized:
            self._sized = True
            if QGuiApplication.platformName() != "offscreen":  # no real screen to fit
                self._fit_to_screen()
            for widget in (*self.docks, self.splitter):
                widget.installEventFilter(self)
            if not self._restored_layout:
                apply_default_sizes(self)
                QTimer.singleShot(0, self._remember_shares)
            else:
                # a layout saved on a larger screen, or before the panels kept their
                # share, can leave the canvas a sliver: start from the defaults then
                QTimer.singleShot(0, self._rescue_canvas)

    def _rescue_canvas(self) -> None:
        if (self.canvas.width() < 0.3 * self.width()
                or self.canvas.height() < 0.35 * self.height()):
            apply_default_sizes(self)
        QTimer.singleShot(0, self._remember_shares)

    def _fit_to_screen(self) -> None:
        """Never larger than the screen the window opens on (a geometry saved on a
        larger monitor, or a default that does not fit a small laptop)."""
        screen = self.screen()
        if screen is None:
            return
        area = screen.availableGeometry()
        frame = self.frameGeometry()
        extra_w = max(frame.width() - self.width(), 0)
        extra_h = max(frame.height() - self.height(), 0)
        width = min(self.width(), area.width() - extra_w)
        height = min(self.height(), area.height() - extra_h)
        if (width, height) != (self.width(), self.height()):
            self.resize(max(width, 400), max(height, 300))
        frame = self.frameGeometry()
        if not area.contains(frame):
            x = min(max(frame.x(), area.x()), area.right() - frame.width() + 1)
            y = min(max(frame.y(), area.y()), area.bottom() - frame.height() + 1)
            self.move(max(x, area.x()), max(y, area.y()))

    def _restore_window(self) -> None:
        geometry = self.settings.value("window/geometry")
        if isinstance(geometry, QByteArray) and not geometry.isEmpty():
            self.restoreGeometry(geometry)
        state = self.settings.value("window/state")
        self._restored_layout = False
        if isinstance(state, QByteArray) and not state.isEmpty():
            self._restored_layout = self.restoreState(state, SETTINGS_VERSION)
        split = self.settings.value("window/splitter")
        if self._restored_layout and isinstance(split, QByteArray) and not split.isEmpty():
            self.splitter.restoreState(split)  # the editor/canvas split is not a dock
        self.stepper.restore_device(str(self.settings.value("device", "cpu") or "cpu"))

    def _save_window(self) -> None:
        s, doc = self.settings, self.doc
        s.setValue("window/geometry", self.saveGeometry())
        s.setValue("window/state", self.saveState(SETTINGS_VERSION))
        s.setValue("window/splitter", self.splitter.saveState())
        s.setValue("device", self.stepper.device)
        last = doc.path or (doc.snapshot_path if doc.read_only else None)
        s.setValue("file/last", str(last) if last else "")
        s.setValue("file/last_demo", doc.demo.name if doc.demo and not doc.path else "")
        s.setValue("launched", True)
        s.sync()

    def reset_layout(self) -> None:
        self.restoreState(self.default_dock_state, SETTINGS_VERSION)
        for dock in self.docks:
            dock.show()
        apply_default_sizes(self)
        # the restored docks take their places at the next layout pass: size them (and
        # the editor/canvas split) again once they have
        def size_again() -> None:
            apply_default_sizes(self)
            self._remember_shares()

        QTimer.singleShot(0, size_again)

    def show_shortcuts(self) -> None:
        self.shortcuts_dialog = dialogs.show_shortcuts(
            self, action_table.shortcut_rows(self.actions_by_key)
        )

    def show_about(self) -> None:
        dialogs.show_about(self)

    # --- language ------------------------------------------------------------------------

    def _check_language_action(self) -> None:
        """View › Language shows the saved choice ("System language" when there is none)."""
        saved = saved_language(self.settings)
        for act in self.language_actions.actions():
            act.setChecked(act.data() == saved)

    def choose_language(self, code: str) -> None:
        """View › Language: remember the choice; the window's words change when gradviz
        starts again (GRADVIZ_LANG, when set, still wins)."""
        if code == saved_language(self.settings):
            return
        self.settings.setValue(LANGUAGE_KEY, code)
        self.settings.sync()
        self._check_language_action()
        # what this choice means without GRADVIZ_LANG ("" follows the locale)
        chosen = i18n.choose_language(
            code, {k: v for k, v in os.environ.items() if k != i18n.ENV_VAR}
        )
        env = i18n.normalize_language(os.environ.get(i18n.ENV_VAR, ""))
        dialogs.language_changed(self, i18n.LANGUAGES[chosen], env and i18n.LANGUAGES[env])

    # --- trust -------------------------------------------------------------------------

    def _trusted_folders(self) -> list[str]:
        value = self.settings.value("trust/folders", [])
        if isinstance(value, str):  # QSettings gives one entry as a plain string
            return [value] if value else []
        return [str(v) for v in cast("Iterable[Any]", value or [])]

    def _save_trusted_folders(self, folders: list[str]) -> None:
        self.settings.setValue("trust/folders", folders)

    def apply_trust(self, decision: Decision, filename: Path | None = None) -> None:
        """Run the editor's script in ``decision``'s mode: the kernel (replaced when
        the mode changes), the badge beside the device, and the banner that asks."""
        cwd = str(decision.folder) if decision.folder is not None else None
        self.client.set_mode(decision.trusted, cwd, str(filename) if filename else None)
        mode = TRUSTED if decision.trusted else RESTRICTED
        self.mode_badge.setText(translate("Trust", BADGE_TEXT[mode]))
        self.mode_badge.setToolTip(translate("Trust", BADGE_TIP[mode]))
        self.mode_badge.setProperty("mode", mode)
        # a pill that reads on the light and the dark palette alike
        colour = "#2e7d32" if decision.trusted else "#9a5b00"
        self.mode_badge.setStyleSheet(
            f"QLabel#modeBadge {{ background: {colour}; color: white; border-radius: 8px; "
            "padding: 2px 8px; margin-left: 6px; font-weight: bold; }"
        )
        if decision.ask and decision.folder is not None and (
            decision.folder not in self._kept_restricted
        ):
            self.trust_banner.ask(decision.folder)
        else:
            self.trust_banner.hide()

    def on_trust_requested(self, folder: Path | None) -> None:
        """Trust folder: remembered; the script is loaded again as Python."""
        if folder is None:
            return
        self.trust.trust(folder)
        path = self.doc.path
        self.apply_trust(self.trust.decide(path), path)
        self.stepper.load_into_kernel(
            None,
            status=translate(
                "MainWindow", "Trusted {folder}: its scripts run as Python from now on"
            ).format(folder=folder),
        )
        self.set_status(
            translate(
                "MainWindow", "Trusted {folder}: press Step (F10) to run the script as Python"
            ).format(folder=folder)
        )

    def keep_restricted(self, folder: Path | None) -> None:
        if folder is not None:
            self._kept_restricted.add(folder)

    def _check_fonts(self) -> None:
        message = missing_fonts_message(missing_fonts(self.editor.toPlainText()))
        if message is None or self._font_note_given:
            return
        self._font_note_given = True
        self.output_panel.add_note(message, None, "warning")
        self.set_status(message)

    def set_status(self, text: str) -> None:
        self.status_label.setText(text)

    def status_text(self) -> str:
        return self.status_label.text()

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt override
        if not self.closing and not self.files.maybe_save():
            event.ignore()
            return
        self.closing = True
        self.graph_view.layout_runner.shutdown()
        self.files.autosave_timer.stop()
        self.stepper.shutdown()
        self._save_window()
        self.files.autosave.close()
        self.client.shutdown()
        event.accept()

    # --- what scripts, tests and the library call ----------------------------------------------

    @property
    def read_only(self) -> bool:
        """True while a snapshot with no script is shown (see :class:`gradviz.app.files.Document`)."""
        return self.doc.read_only

    @property
    def path(self) -> Path | None:
        return self.doc.path

    @property
    def timeline(self) -> Any:
        return self.stepper.timeline

    @property
    def busy(self) -> bool:
        """True while the kernel works or pressed actions wait their turn."""
        return self.stepper.busy

    @property
    def layout_pending(self) -> bool:
        """True while a big graph is being grouped and laid out on the worker thread."""
        return self.graph_view.layout_pending

    @property
    def autosave(self) -> Any:
        return self.files.autosave

    @property
    def autosave_path(self) -> Path:
        """This window's autosave (each window has its own, see :mod:`gradviz.app.autosave`)."""
        return self.files.autosave.text_path

    def open_initial(self, file: str | None = None, demo: str | None = None,
                     snapshot: dict[str, Any] | None = None) -> None:  # fmt: skip
        """What the first screen shows: the given snapshot/file/demo, else the last script/a demo."""
        self.files.open_initial(file, demo, snapshot)

    def open_path(self, path: Path, ask: bool = True) -> bool:
        return self.files.open_path(path, ask)

    def open_snapshot(self, data: dict[str, Any], name: str, path: Path | None = None) -> None:
        self.files.open_snapshot(data, name, path)

    def new_file(self) -> None:
        self.files.new_file()

    def save_as(self, path: str | Path | None = None) -> bool:
        return self.files.save_as(path)

    def autosave_now(self) -> None:
        self.files.autosave_now()

    def step(self) -> None:
        self.stepper.step()

    def run_to_end(self) -> None:
        self.stepper.run_to_end()

    def run_to_cursor(self) -> None:
        self.stepper.run_to_cursor()

    def set_device(self, device: str) -> None:
        self.stepper.set_device(device)

    def find_node(self, text: str | None = None) -> None:
        self.graph_view.find_node(text)

    def focus_search(self) -> None:
        self.graph_view.focus_search()

    def search_hits(self) -> list[str]:
        return self.graph_view.search_hits()

    def node_menu(self, node_id: str) -> QMenu:
        return self.graph_view.node_menu(node_id)

    def displayed_graph(self) -> nx.DiGraph:
        return self.graph_view.displayed_graph()
