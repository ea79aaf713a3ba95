"""The main window: editor, graph canvas, side panels, toolbar, menus, status bar.

The window holds no torch objects. It sends commands to the kernel process
(:class:`~gradviz.ui.kernel_client.KernelClient`) and renders the ``state``
each reply carries. Stepping the *backward* pass is a replay of what the
kernel recorded when ``backward()`` ran: one engine step per F7 press.

Stepping *inside* a statement works like a debugger (F10 over, F11 into,
Shift+F11 out, F5 to the next breakpoint, Ctrl+F11 to the next backward()):
the kernel pauses the statement on a worker thread and each reply is the state
of that moment. Every reply is kept on the timeline under the canvas, so a past
step is shown again without asking the kernel.

A saved snapshot with no statements (``gradviz.snapshot()`` /
``gradviz.show()``) opens *read-only*: every panel shows it, F7 replays its
recorded passes, and nothing steps forward. Big graphs are made readable by
collapsing modules and linear chains (:mod:`gradviz.ui.display`), grouped and
laid out on a worker thread when they have more than 500 nodes.
"""

from __future__ import annotations

import ast
import functools
import gc
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import networkx as nx
from PySide6.QtCore import (
    QByteArray,
    QEvent,
    QObject,
    QPoint,
    QPointF,
    QSettings,
    QSize,
    QStandardPaths,
    Qt,
    QTimer,
)
from PySide6.QtGui import (
    QAction,
    QActionGroup,
    QCloseEvent,
    QColor,
    QIcon,
    QKeyEvent,
    QKeySequence,
    QPainter,
    QPainterPath,
    QPen,
    QPixmap,
    QPolygonF,
    QStandardItemModel,
)
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDockWidget,
    QFileDialog,
    QFrame,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMainWindow,
    QMenu,
    QMessageBox,
    QProgressBar,
    QSizePolicy,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QToolBar,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from gradviz.core.debugger import calls_backward
from gradviz.core.delta import GraphChanges
from gradviz.core.demos import Demo, DemosMissing, list_demos
from gradviz.core.graphdata import graph_from_json
from gradviz.core.grouping import module_tree_of_nodes, search

from . import theme
from .autosave import Autosave, find_orphans
from .canvas import GraphCanvas
from .debug_strip import DebugStrip, PauseView
from .display import (
    ASYNC_LAYOUT_NODES,
    Display,
    LayoutRunner,
    build_display,
    is_chain,
    map_passes,
)
from .editor import CodeEditor
from .kernel_client import KernelClient
from .panels import (
    AccumulationPanel,
    InspectorPanel,
    MemoryPanel,
    ModulesPanel,
    OutputPanel,
    TensorsPanel,
    fmt_value,
)
from .passes_panel import PassesPanel, pass_graph
from .snapshot import (
    SnapshotError,
    parse_snapshot,
    script_from_snapshot,
    snapshot_state,
)
from .text import (
    add_menu_action,
    esc,
    menu_text,
    message_box,
    plain_label,
    plain_tooltip,
    title_text,
)
from .timeline import MAX_KEPT_NODES, Timeline, TimelineBar, TimelineStep, describe_step

APP_NAME = "gradviz"
FIRST_DEMO = "first_backward"
AUTOSAVE_INTERVAL_MS = 3000
MAX_RECENT = 8
STOP_ENABLE_DELAY_MS = 200
SETTINGS_VERSION = 1
SEARCH_MIN_WIDTH = 130
#: error types of a statement the learner stopped, paused (gradviz.core.debugger.DebugStopped)
#: or running (gradviz.core.errors.Stopped): its work is kept, Step skips the rest of it
STOPPED_TYPES = frozenset({"DebugStopped", "Stopped"})

SHORTCUTS = [
    ("Step over (the next statement at this level)", "F10"),
    ("Step into (loop, if, with and try bodies; script functions, forward)", "F11"),
    ("Step out (finish the current loop or call)", "Shift+F11"),
    ("Run / continue to the next breakpoint (to the end when there is none)", "F5"),
    ("Run to the next backward() call", "Ctrl+F11"),
    ("Toggle a breakpoint on the cursor line (or click the line number)", "F9"),
    ("Run to cursor (through the editor's line)", "Ctrl+F10"),
    ("Step back (the previous step on the timeline)", "Shift+F10"),
    ("Reset (back to before the first statement)", "Ctrl+R / Ctrl+Shift+F5"),
    ("Backward step (one engine step of the backward pass)", "F7"),
    ("Backward to end (the whole pass)", "Shift+F7"),
    ("Zero grad (every leaf's .grad = 0)", "Ctrl+Shift+G"),
    ("Stop (the statement ends where it stands and keeps its work; one stuck in native "
     "code is killed)", "Shift+F5"),
    ("Zoom in / out / fit the graph", "Ctrl++ / Ctrl+- / Ctrl+0"),
    ("Find a node by name, op, shape or module", "Ctrl+F"),
    ("Next / previous search hit (in the search box)", "Enter / Shift+Enter"),
    ("New / Open / Save / Save As", "Ctrl+N / Ctrl+O / Ctrl+S / Ctrl+Shift+S"),
]

#: how long Stop waits for the kernel to end a statement gently before killing it
STOP_GRACE_MS = 1500


# --- dialogs the tests replace ------------------------------------------------------------


def ask_unsaved_changes(parent: QWidget, name: str) -> QMessageBox.StandardButton:
    """Save / Discard / Cancel for a modified script (monkeypatched in tests)."""
    box = message_box(
        parent,
        QMessageBox.Icon.Warning,
        "Unsaved changes",
        f"{name} has changes that are not saved.",
        QMessageBox.StandardButton.Save
        | QMessageBox.StandardButton.Discard
        | QMessageBox.StandardButton.Cancel,
        QMessageBox.StandardButton.Save,
        informative="Save them before going on?",
    )
    answer = QMessageBox.StandardButton(box.exec())
    box.deleteLater()
    return answer


def ask_restore_autosave(parent: QWidget, name: str, when: str) -> bool:
    """Offer the text autosaved before gradviz last stopped (monkeypatched in tests)."""
    box = message_box(
        parent,
        QMessageBox.Icon.Question,
        "Restore unsaved work?",
        f"gradviz stopped before {name} was saved.\n"
        f"An autosaved copy from {when} exists. Restore it?",
        QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
        QMessageBox.StandardButton.Yes,
    )
    answer = QMessageBox.StandardButton(box.exec())
    box.deleteLater()
    return answer == QMessageBox.StandardButton.Yes


def show_error(parent: QWidget, title: str, text: str) -> None:
    """A modal error message, shown as plain text (monkeypatched in tests)."""
    box = message_box(parent, QMessageBox.Icon.Warning, title, text)
    box.exec()
    box.deleteLater()


def default_settings() -> QSettings:
    """The user's settings; ``GRADVIZ_SETTINGS_DIR`` puts them in an ini file there instead."""
    folder = os.environ.get("GRADVIZ_SETTINGS_DIR")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        return QSettings(str(Path(folder) / "gradviz.ini"), QSettings.Format.IniFormat)
    return QSettings("gradviz", "gradviz")


def default_data_dir() -> Path:
    """Where autosaves go; ``GRADVIZ_DATA_DIR`` overrides it.

    gradviz's folder whatever the application is called: inside a host's Qt
    application (``gradviz.show()`` under napari) AppDataLocation would be the
    host's. On Linux this is the AppDataLocation of gradviz's own application.
    """
    folder = os.environ.get("GRADVIZ_DATA_DIR")
    if folder:
        return Path(folder)
    location = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.GenericDataLocation)
    return Path(location) / APP_NAME / APP_NAME if location else Path.home() / ".gradviz"


# --- toolbar icons, painted so they look the same everywhere ---------------------------------


def _icon(kind: str) -> QIcon:
    pix = QPixmap(40, 40)
    pix.fill(Qt.GlobalColor.transparent)
    p = QPainter(pix)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    p.scale(2, 2)
    forward = QColor("#2f6fd6")
    backward = QColor(theme.BACKWARD)
    grey = QColor("#5c6370")

    def tri(x: float, y: float, w: float, h: float, colour: QColor, left: bool = False) -> None:
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(colour)
        if left:
            pts = [QPointF(x + w, y), QPointF(x, y + h / 2), QPointF(x + w, y + h)]
        else:
            pts = [QPointF(x, y), QPointF(x + w, y + h / 2), QPointF(x, y + h)]
        p.drawPolygon(QPolygonF(pts))

    def bar(x: float, y: float, w: float, h: float, colour: QColor) -> None:
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(colour)
        p.drawRoundedRect(x, y, w, h, 1, 1)

    def nabla(x: float, y: float, s: float, colour: QColor) -> None:
        p.setPen(
            QPen(
                colour,
                2.0,
                Qt.PenStyle.SolidLine,
                Qt.PenCapStyle.RoundCap,
                Qt.PenJoinStyle.RoundJoin,
            )
        )
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.drawPolygon(
            QPolygonF([QPointF(x, y), QPointF(x + s, y), QPointF(x + s / 2, y + s * 0.9)])
        )

    if kind == "step":
        tri(4, 4, 9, 12, forward)
        bar(14, 4, 2.5, 12, forward)
    elif kind == "run":
        tri(2, 4, 7, 12, forward)
        tri(9, 4, 7, 12, forward)
        bar(16, 4, 2, 12, forward)
    elif kind == "cursor":
        tri(2, 4, 8, 12, forward)
        p.setPen(QPen(grey, 1.6))
        p.drawLine(QPointF(15, 3), QPointF(15, 17))
        p.drawLine(QPointF(12.5, 3), QPointF(17.5, 3))
        p.drawLine(QPointF(12.5, 17), QPointF(17.5, 17))
    elif kind == "back":
        bar(3.5, 4, 2.5, 12, grey)
        tri(7, 4, 9, 12, grey, left=True)
    elif kind == "reset":
        p.setPen(QPen(grey, 2.0, Qt.PenStyle.SolidLine, Qt.PenCapStyle.RoundCap))
        p.setBrush(Qt.BrushStyle.NoBrush)
        path = QPainterPath()
        path.arcMoveTo(4, 4, 12, 12, 110)
        path.arcTo(4, 4, 12, 12, 110, 290)
        p.drawPath(path)
        tri(2.5, 2, 6, 7, grey, left=False)
    elif kind == "bwstep":
        nabla(4, 4, 12, backward)
    elif kind == "bwend":
        nabla(1.5, 4.5, 9, backward)
        nabla(9.5, 4.5, 9, backward)
    elif kind == "zero":
        p.setPen(QPen(QColor("#1098ad"), 1.8))
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.drawEllipse(QPointF(10, 10), 7, 7)
        font = theme.label_font(10, bold=True)
        p.setFont(font)
        p.drawText(QPointF(6.6, 13.8), "0")
    elif kind in ("into", "out"):
        # an arrow down into a line of code (into), or up out of it (out)
        p.setPen(QPen(forward, 2.2, Qt.PenStyle.SolidLine, Qt.PenCapStyle.RoundCap))
        p.drawLine(QPointF(10, 3.5), QPointF(10, 11.5))
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(forward)
        if kind == "into":
            head = [QPointF(5.5, 9.5), QPointF(14.5, 9.5), QPointF(10, 14.5)]
        else:
            head = [QPointF(5.5, 7.5), QPointF(14.5, 7.5), QPointF(10, 2.5)]
        p.drawPolygon(QPolygonF(head))
        bar(4, 16, 12, 2.2, grey)
    elif kind == "tobw":
        tri(1.5, 5, 7, 10, forward)
        nabla(9.5, 5, 9, backward)
    elif kind == "stop":
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(backward)
        p.drawRoundedRect(4, 4, 12, 12, 2.5, 2.5)
    p.end()
    icon = QIcon(pix)
    return icon


def _when_idle(method: Callable[..., None]) -> Callable[..., None]:
    """Run a kernel action now, or after the actions before it are answered.

    A learner may press F10 three times while the first step still runs; each
    press must act on the state the previous one produced, so the press itself
    waits in line (the kernel client queues requests, this queues decisions).
    """

    @functools.wraps(method)
    def wrapper(self: MainWindow, *args: Any, **kwargs: Any) -> None:
        if self.read_only:
            self.set_status("This is a read-only snapshot: open a script (Ctrl+O) to step")
            return
        if self.client.busy or self._pending:
            self._pending.append(lambda: method(self, *args, **kwargs))
            return
        method(self, *args, **kwargs)

    return wrapper


class MainWindow(QMainWindow):
    """gradviz's window. Construct, ``show()``, then ``open_initial()``."""

    #: freeze the heap after each step (gc.freeze): only in gradviz's own process,
    #: never inside a host program that called the library (see gradviz.ui.app)
    freeze_heap = False

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
        self.autosave = Autosave(self.data_dir)
        self.state: dict[str, Any] | None = None
        self.path: Path | None = None
        self.demo: Demo | None = None
        try:
            self.demos = list_demos()
            self._demos_missing: str | None = None
        except DemosMissing as exc:  # a broken install: the window still opens
            self.demos = []
            self._demos_missing = str(exc)
        self._sent_source: str | None = None
        self._device = "cpu"
        self._bw_pass: int | None = None
        self._bw_shown = 0
        self._bw_known = 0
        #: the pass whose own graph the canvas shows (its nodes are gone from the state's)
        self._pass_graph_shown: int | None = None
        #: every step the user took, with the state it left (see gradviz.ui.timeline)
        self.timeline = Timeline()
        #: the timeline step shown when it is a past one (None: the kernel's present)
        self._timeline_at: int | None = None
        #: debug requests since the paused statement started: a replay repeats them
        self._debug_path: list[tuple[str, tuple[int, ...]]] = []
        #: replies still to come that a timeline replay asked for (not new steps)
        self._unrecorded = 0
        self._busy_since: float | None = None
        self._running_index: int | None = None
        self._stopped: dict[str, Any] | None = None
        self._last_autosave_text: str | None = None
        self._closing = False
        self._restarted_note: str | None = None
        self._pending: list[Callable[[], None]] = []
        # A snapshot opened read-only: no script, nothing steps forward.
        self.read_only = False
        self.snapshot_name: str | None = None
        self.snapshot_path: Path | None = None
        # What the canvas shows: the captured graph, grouped (modules, chains), laid out.
        self._raw_graph_data: dict[str, Any] = {}
        self._raw_graph_cache: nx.DiGraph | None = None
        self._collapsed: set[str] = set()
        self._display: Display | None = None
        #: what the state being applied changed (the kernel's delta), for the canvas
        self._state_changes: GraphChanges | None = None
        #: (state seq, module tree) of the graph shown: kept while a delta touches no module
        self._modules_cache: tuple[int | None, Any] | None = None
        self._canvas_passes_cache: list[Any] | None = None
        self._after_display: Callable[[], None] | None = None
        self._layout_nodes = 0
        #: graphs with more nodes than this are grouped and laid out on a worker thread
        self.async_layout_nodes = ASYNC_LAYOUT_NODES
        self.layout_runner = LayoutRunner(self)
        self.layout_runner.finished.connect(self._on_layout_runner_finished)
        self.layout_runner.failed.connect(self._on_layout_runner_failed)
        self._search_hits: list[str] = []
        self._search_index = -1

        self.setWindowTitle(APP_NAME)
        self.setObjectName("gradvizMainWindow")
        self.setDockOptions(
            QMainWindow.DockOption.AnimatedDocks
            | QMainWindow.DockOption.AllowTabbedDocks
            | QMainWindow.DockOption.AllowNestedDocks
        )
        self.client = KernelClient(self)
        self._build_central()
        self._build_docks()
        self._build_actions()
        self._build_menus()
        self._build_toolbar()
        self._build_status()
        self._connect()
        self.resize(1400, 900)
        self._restore_window()

        self._autosave_timer = QTimer(self)
        self._autosave_timer.setInterval(autosave_interval_ms)
        self._autosave_timer.timeout.connect(self._on_autosave_timer)
        self._autosave_timer.start()
        self._busy_timer = QTimer(self)
        self._busy_timer.setInterval(250)
        self._busy_timer.timeout.connect(self._on_busy_timer)
        self._stop_timer = QTimer(self)
        self._stop_timer.setSingleShot(True)
        self._stop_timer.setInterval(STOP_ENABLE_DELAY_MS)
        self._stop_timer.timeout.connect(self._update_actions)
        self._update_actions()
        self._update_title()
        if start_kernel:
            self.client.start()

    # --- construction -------------------------------------------------------------------------

    def _build_central(self) -> None:
        self.editor = CodeEditor()
        self.editor.setObjectName("editor")
        self.canvas = GraphCanvas()
        self.canvas.setObjectName("canvas")
        self.canvas.set_legend_visible(False)

        self.guide = QFrame()
        self.guide.setObjectName("guide")
        self.guide.setStyleSheet(
            "QFrame#guide { background: #f3f0ff; border: none; border-bottom: 1px solid #e5dbff; }"
        )
        self.guide_title = QLabel()
        self.guide_title.setObjectName("guideTitle")
        self.guide_title.setWordWrap(True)
        self.guide_title.setTextFormat(Qt.TextFormat.RichText)
        self.guide_title.setStyleSheet(f"color: {theme.TEXT}; font-size: 13px;")
        self.guide_note = QLabel()
        self.guide_note.setObjectName("guideNote")
        self.guide_note.setWordWrap(True)
        self.guide_note.setTextFormat(Qt.TextFormat.RichText)
        self.guide_note.setStyleSheet(f"color: {theme.TEXT}; font-size: 12px;")
        guide_layout = QVBoxLayout(self.guide)
        guide_layout.setContentsMargins(12, 7, 12, 8)
        guide_layout.setSpacing(3)
        guide_layout.addWidget(self.guide_title)
        guide_layout.addWidget(self.guide_note)

        canvas_box = QWidget()
        canvas_layout = QVBoxLayout(canvas_box)
        canvas_layout.setContentsMargins(0, 0, 0, 0)
        canvas_layout.setSpacing(0)
        canvas_layout.addWidget(self.guide)
        self.debug_strip = DebugStrip()
        canvas_layout.addWidget(self.debug_strip)
        canvas_layout.addWidget(self.canvas, 1)
        self.timeline_bar = TimelineBar()
        canvas_layout.addWidget(self.timeline_bar)

        editor_box = QWidget()
        editor_layout = QVBoxLayout(editor_box)
        editor_layout.setContentsMargins(0, 0, 0, 0)
        editor_layout.setSpacing(0)
        self.editor_header = plain_label(QLabel())  # a file or snapshot name
        self.editor_header.setStyleSheet(
            f"background: #f4f6fa; color: {theme.MUTED_TEXT}; padding: 5px 10px;"
            " border-bottom: 1px solid #e3e7ee; font-weight: 600;"
        )
        editor_layout.addWidget(self.editor_header)
        editor_layout.addWidget(self.editor, 1)

        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.setObjectName("mainSplitter")
        self.splitter.addWidget(editor_box)
        self.splitter.addWidget(canvas_box)
        self.splitter.setStretchFactor(0, 0)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([440, 560])
        self.splitter.setChildrenCollapsible(False)
        self.splitter.setHandleWidth(1)
        self.splitter.setStyleSheet("QSplitter::handle { background: #dfe3ea; }")
        self.setCentralWidget(self.splitter)

    def _dock(self, title: str, name: str, widget: QWidget, area: Qt.DockWidgetArea) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(name)
        dock.setWidget(widget)
        dock.setFeatures(
            QDockWidget.DockWidgetFeature.DockWidgetMovable
            | QDockWidget.DockWidgetFeature.DockWidgetClosable
            | QDockWidget.DockWidgetFeature.DockWidgetFloatable
        )
        self.addDockWidget(area, dock)
        return dock

    def _build_docks(self) -> None:
        self.setCorner(Qt.Corner.BottomRightCorner, Qt.DockWidgetArea.RightDockWidgetArea)
        self.setCorner(Qt.Corner.TopRightCorner, Qt.DockWidgetArea.RightDockWidgetArea)
        self.tensors_panel = TensorsPanel()
        self.accumulation_panel = AccumulationPanel()
        self.memory_panel = MemoryPanel()
        self.inspector_panel = InspectorPanel()
        self.output_panel = OutputPanel()
        self.modules_panel = ModulesPanel()
        self.passes_panel = PassesPanel()
        right = Qt.DockWidgetArea.RightDockWidgetArea
        bottom = Qt.DockWidgetArea.BottomDockWidgetArea
        self.inspector_dock = self._dock("Inspector", "inspectorDock", self.inspector_panel, right)
        self.accumulation_dock = self._dock(
            "Gradient accumulation", "accumulationDock", self.accumulation_panel, right
        )
        self.tensors_dock = self._dock("Tensors", "tensorsDock", self.tensors_panel, bottom)
        self.memory_dock = self._dock("Memory", "memoryDock", self.memory_panel, bottom)
        self.output_dock = self._dock("Output", "outputDock", self.output_panel, bottom)
        self.modules_dock = self._dock("Modules", "modulesDock", self.modules_panel, right)
        self.passes_dock = self._dock("Backward passes", "passesDock", self.passes_panel, right)
        self.splitDockWidget(self.tensors_dock, self.output_dock, Qt.Orientation.Horizontal)
        self.tabifyDockWidget(self.tensors_dock, self.memory_dock)
        self.tabifyDockWidget(self.accumulation_dock, self.modules_dock)
        self.tabifyDockWidget(self.accumulation_dock, self.passes_dock)
        self.tensors_dock.raise_()
        self.accumulation_dock.raise_()
        self.docks = [
            self.inspector_dock,
            self.accumulation_dock,
            self.tensors_dock,
            self.memory_dock,
            self.output_dock,
            self.modules_dock,
            self.passes_dock,
        ]
        self._default_state = self.saveState(SETTINGS_VERSION)
        self._sized = False

    def _apply_default_sizes(self) -> None:
        """Proportions for the first screen (a restored layout keeps the user's own)."""
        width = max(self.width(), 1000)
        right = int(width * 0.26)
        self.resizeDocks([self.inspector_dock], [right], Qt.Orientation.Horizontal)
        self.resizeDocks(
            [self.inspector_dock, self.accumulation_dock], [55, 45], Qt.Orientation.Vertical
        )
        self.resizeDocks([self.tensors_dock], [int(self.height() * 0.28)], Qt.Orientation.Vertical)
        centre = width - right
        self.resizeDocks(
            [self.tensors_dock, self.output_dock],
            [int(centre * 0.7), int(centre * 0.3)],
            Qt.Orientation.Horizontal,
        )
        self.splitter.setSizes([int(centre * 0.44), int(centre * 0.56)])

    def resizeEvent(self, event: Any) -> None:  # noqa: N802 - Qt override
        self._fit_toolbar(event.size().width())
        super().resizeEvent(event)

    def _fit_toolbar(self, width: int) -> None:
        """Text beside icons when there is room, else icons only, so the search box stays.

        The room left over goes to the search box first (names like
        layers.1.self_attn.in_proj_weight are long), then to the spacer before it.
        """
        wide = width >= self._toolbar_text_width
        style = (
            Qt.ToolButtonStyle.ToolButtonTextBesideIcon
            if wide
            else Qt.ToolButtonStyle.ToolButtonIconOnly
        )
        spare = max(0, width - self._toolbar_text_width - 12) if wide else 0
        minimum = min(360, SEARCH_MIN_WIDTH + spare)
        if self.search_box.minimumWidth() != minimum:
            self.search_box.setMinimumWidth(minimum)
            self.toolbar.layout().invalidate()  # before the toolbar is laid out for this size
        if self.toolbar.toolButtonStyle() != style:
            self.toolbar.setToolButtonStyle(style)

    def showEvent(self, event: Any) -> None:  # noqa: N802 - Qt override
        super().showEvent(event)
        if not self._sized:
            self._sized = True
            if not self._restored_layout:
                self._apply_default_sizes()

    def _action(
        self,
        text: str,
        slot: Callable[[], Any],
        shortcuts: list[str] | str | None = None,
        tip: str = "",
        icon: str | None = None,
    ) -> QAction:
        action = QAction(text, self)
        if shortcuts:
            keys = [shortcuts] if isinstance(shortcuts, str) else shortcuts
            action.setShortcuts([QKeySequence(k) for k in keys])
            action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        if tip:
            shown = action.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
            action.setToolTip(f"{tip} ({shown})" if shown else tip)
            action.setStatusTip(tip)
        if icon:
            action.setIcon(_icon(icon))
        action.triggered.connect(lambda *_: slot())
        self.addAction(action)
        return action

    def _build_actions(self) -> None:
        a = self._action
        self.act_step = a(
            "Step over", self.step, "F10",
            "Run the next statement (inside a paused loop or call: the next one at this level)",
            "step",
        )  # fmt: skip
        self.act_step.setIconText("Step")  # the toolbar's label; menus say "Step over"
        self.act_step_into = a(
            "Step into", self.step_into, "F11",
            "Stop at the next statement at any depth: loop and if bodies, script functions,"
            " a module's forward", "into",
        )  # fmt: skip
        self.act_step_out = a(
            "Step out", self.step_out, "Shift+F11",
            "Finish the current loop or call and stop in the code around it", "out",
        )  # fmt: skip
        self.act_run_to_end = a(
            "Run", self.continue_run, "F5",
            "Run to the next breakpoint (to the end when there is none)", "run",
        )  # fmt: skip
        self.act_run_to_backward = a(
            "Run to backward()", self.run_to_backward, "Ctrl+F11",
            "Run until just before the next statement that calls backward()", "tobw",
        )  # fmt: skip
        self.act_toggle_breakpoint = a(
            "Toggle breakpoint", self.toggle_breakpoint, "F9",
            "Set or clear a breakpoint on the editor's cursor line",
        )  # fmt: skip
        self.act_run_to_cursor = a(
            "Run to cursor", self.run_to_cursor, "Ctrl+F10",
            "Run through the statement on the editor's cursor line", "cursor",
        )  # fmt: skip
        self.act_step_back = a(
            "Step back",
            self.step_back,
            "Shift+F10",
            "Undo the last statement (replays the ones before it)",
            "back",
        )
        self.act_reset = a(
            "Reset",
            self.reset,
            ["Ctrl+R", "Ctrl+Shift+F5"],
            "Back to before the first statement",
            "reset",
        )
        self.act_bw_step = a(
            "Backward step", self.backward_step, "F7",
            "Show the next engine step of the backward pass", "bwstep",
        )  # fmt: skip
        self.act_bw_end = a(
            "Backward to end", self.backward_to_end, "Shift+F7",
            "Show the backward pass to its last step", "bwend",
        )  # fmt: skip
        self.act_zero_grad = a(
            "Zero grad", self.zero_grad, "Ctrl+Shift+G", "Set every leaf's .grad to zero", "zero"
        )
        self.act_stop = a(
            "Stop", self.stop, "Shift+F5",
            "Stop the statement that is running or paused (its work so far is kept)", "stop",
        )  # fmt: skip

        self.act_new = a("&New", self.new_file, _std_key(QKeySequence.StandardKey.New))
        self.act_open = a(
            "&Open…", self.open_file_dialog, _std_key(QKeySequence.StandardKey.Open)
        )  # fmt: skip
        self.act_save = a("&Save", self.save, _std_key(QKeySequence.StandardKey.Save))
        self.act_save_as = a("Save &As…", self.save_as, "Ctrl+Shift+S")
        self.act_export = a("Export graph image…", self.export_graph)
        self.act_quit = a("&Quit", self.close, "Ctrl+Q")

        self.act_zoom_in = a("Zoom in", self.canvas.zoom_in, ["Ctrl++", "Ctrl+="])
        self.act_zoom_out = a("Zoom out", self.canvas.zoom_out, "Ctrl+-")
        self.act_fit = a("Fit graph", self.canvas.fit_to_view, "Ctrl+0")
        self.act_find = a("Find node…", self.focus_search, "Ctrl+F")
        self.act_chains = QAction("Collapse linear chains", self, checkable=True)
        self.act_chains.setStatusTip("Draw each run of three or more one-to-one ops as one box")
        self.act_chains.toggled.connect(self._on_chains_toggled)
        self.act_collapse_all = a(
            "Collapse all modules", lambda: self.modules_panel.collapse_all()
        )  # fmt: skip
        self.act_expand_all = a("Expand all", self.expand_all)
        self.act_legend = QAction("Show legend", self, checkable=True)
        self.act_legend.setChecked(False)
        self.act_legend.toggled.connect(self.canvas.set_legend_visible)
        self.act_reset_layout = a("Reset panel layout", self.reset_layout)

        self.act_shortcuts = a("Keyboard shortcuts", self.show_shortcuts, "F1")
        self.act_about = a("About gradviz", self.show_about)

    def _build_menus(self) -> None:
        bar = self.menuBar()
        file_menu = bar.addMenu("&File")
        file_menu.addActions([self.act_new, self.act_open])
        self.recent_menu = file_menu.addMenu("Open &recent")
        file_menu.addActions([self.act_save, self.act_save_as])
        file_menu.addSeparator()
        file_menu.addAction(self.act_export)
        file_menu.addSeparator()
        file_menu.addAction(self.act_quit)
        self._update_recent_menu()

        run_menu = bar.addMenu("&Run")
        run_menu.addActions(
            [
                self.act_step,
                self.act_step_into,
                self.act_step_out,
                self.act_run_to_end,
                self.act_run_to_backward,
                self.act_run_to_cursor,
                self.act_step_back,
                self.act_reset,
            ]
        )
        run_menu.addAction(self.act_toggle_breakpoint)
        run_menu.addSeparator()
        run_menu.addActions([self.act_bw_step, self.act_bw_end, self.act_zero_grad])
        run_menu.addSeparator()
        run_menu.addAction(self.act_stop)
        device_menu = run_menu.addMenu("Device")
        self.device_actions = QActionGroup(self)
        for name in ("cpu", "cuda"):
            act = QAction(name, self, checkable=True)
            act.setChecked(name == "cpu")
            act.triggered.connect(lambda _=False, n=name: self.set_device(n))
            self.device_actions.addAction(act)
            device_menu.addAction(act)

        self.demos_menu = bar.addMenu("&Demos")
        self.demo_actions: dict[str, QAction] = {}
        for number, demo in enumerate(self.demos, start=1):
            act = QAction(menu_text(f"{number}. {demo.title}"), self)
            act.setToolTip(plain_tooltip(demo.about))
            act.setStatusTip(demo.about)
            act.setData(demo.name)
            act.triggered.connect(lambda _=False, d=demo: self.load_demo(d))
            self.demos_menu.addAction(act)
            self.demo_actions[demo.name] = act
        if self._demos_missing:
            missing = self.demos_menu.addAction("(no demos found)")
            missing.setEnabled(False)
            missing.setStatusTip(self._demos_missing)
        self.demos_menu.setToolTipsVisible(True)

        view_menu = bar.addMenu("&View")
        view_menu.addActions([self.act_zoom_in, self.act_zoom_out, self.act_fit, self.act_find])
        view_menu.addAction(self.act_legend)
        view_menu.addSeparator()
        view_menu.addActions([self.act_chains, self.act_collapse_all, self.act_expand_all])
        view_menu.addSeparator()
        for dock in self.docks:
            view_menu.addAction(dock.toggleViewAction())
        view_menu.addAction(self.act_reset_layout)

        help_menu = bar.addMenu("&Help")
        help_menu.addActions([self.act_shortcuts, self.act_about])

    def _build_toolbar(self) -> None:
        tb = QToolBar("Debug")
        tb.setObjectName("debugToolbar")
        tb.setMovable(False)
        tb.setIconSize(QSize(20, 20))
        tb.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        tb.setStyleSheet(
            "QToolBar { background: #ffffff; border: none; border-bottom: 1px solid #e3e7ee;"
            " spacing: 2px; padding: 3px 6px; }"
            f"QToolButton {{ padding: 3px 7px; border-radius: 4px; color: {theme.TEXT}; }}"
            "QToolButton:hover { background: #edf2fa; }"
            "QToolButton:disabled { color: #adb5bd; }"
            f"QLabel {{ color: {theme.MUTED_TEXT}; padding: 0 4px 0 2px; }}"
        )
        self.addToolBar(Qt.ToolBarArea.TopToolBarArea, tb)
        self.toolbar = tb
        #: actions drawn as icon-only buttons -> their button
        self.icon_buttons: dict[QAction, QToolButton] = {}
        tb.addWidget(QLabel("Device"))
        self.device_combo = QComboBox()
        self.device_combo.setObjectName("deviceCombo")
        self.device_combo.addItems(["cpu", "cuda"])
        self.device_combo.setToolTip("Where tensors made with device=dev live (dev is this choice)")
        self.device_combo.setMinimumWidth(80)
        self.device_combo.currentTextChanged.connect(self._on_device_combo_changed)
        tb.addWidget(self.device_combo)
        tb.addSeparator()
        tb.addAction(self.act_step)
        # the finer debugger moves are icons (with their keys in the tooltip), so the
        # toolbar keeps its labels at 1400 px
        self._add_icon_button(tb, self.act_step_into)
        self._add_icon_button(tb, self.act_step_out)
        tb.addAction(self.act_run_to_end)
        self._add_icon_button(tb, self.act_run_to_backward)
        self._add_icon_button(tb, self.act_run_to_cursor)
        tb.addActions([self.act_step_back, self.act_reset])
        tb.addSeparator()
        tb.addActions([self.act_bw_step, self.act_bw_end, self.act_zero_grad])
        tb.addSeparator()
        tb.addAction(self.act_stop)
        spacer = QWidget()
        spacer.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        tb.addWidget(spacer)
        self.search_box = QLineEdit()
        self.search_box.setObjectName("searchBox")
        self.search_box.setPlaceholderText("Find node  (Ctrl+F)")
        self.search_box.setClearButtonEnabled(True)
        self.search_box.setMinimumWidth(SEARCH_MIN_WIDTH)
        self.search_box.setMaximumWidth(360)
        self.search_box.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.search_box.setToolTip(
            "Search the graph by name, op, shape or module; Enter jumps to the next hit,"
            " Shift+Enter to the previous"
        )
        self.search_box.setStyleSheet(
            "QLineEdit { border: 1px solid #ced4da; border-radius: 4px; padding: 3px 6px;"
            " background: #ffffff; }"
            f"QLineEdit:focus {{ border-color: {theme.SELECTION}; }}"
        )
        self.search_box.textChanged.connect(self._on_search_box_text_changed)
        self.search_box.returnPressed.connect(self.search_next)
        self.search_box.installEventFilter(self)
        tb.addWidget(self.search_box)
        self.search_label = plain_label(QLabel(""))
        self.search_label.setObjectName("searchHits")
        self.search_label.setFixedWidth(72)
        tb.addWidget(self.search_label)
        self._toolbar_text_width = tb.sizeHint().width()

    def _add_icon_button(self, toolbar: QToolBar, action: QAction) -> None:
        """A toolbar button that shows only its icon whatever the toolbar's style."""
        button = QToolButton(toolbar)
        button.setDefaultAction(action)
        button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonIconOnly)
        button.setAutoRaise(True)
        button.setIconSize(toolbar.iconSize())
        button.setObjectName(f"{action.iconText().replace(' ', '')}Button")
        toolbar.addWidget(button)
        self.icon_buttons[action] = button

    def _build_status(self) -> None:
        bar = self.statusBar()
        bar.setStyleSheet(
            "QStatusBar { background: #f4f6fa; border-top: 1px solid #e3e7ee;"
            f" color: {theme.TEXT}; }}"
            "QStatusBar::item { border: none; }"
        )
        self.status_label = QLabel("Starting the kernel…")
        self.status_label.setObjectName("kernelStatus")
        self.status_label.setTextFormat(Qt.TextFormat.PlainText)
        self.progress = QProgressBar()
        self.progress.setMaximumWidth(180)
        self.progress.setMaximumHeight(14)
        self.progress.setTextVisible(False)
        self.progress.hide()
        self.position_label = plain_label(QLabel())
        self.position_label.setStyleSheet(f"color: {theme.MUTED_TEXT}; padding: 0 8px;")
        self.device_label = plain_label(QLabel())  # a snapshot names its device
        self.device_label.setStyleSheet(f"color: {theme.MUTED_TEXT}; padding: 0 8px;")
        self.layout_label = plain_label(QLabel())
        self.layout_label.setObjectName("layoutStatus")
        self.layout_label.setStyleSheet(f"color: {theme.SELECTION}; padding: 0 8px;")
        self.layout_label.hide()
        bar.addWidget(self.status_label, 1)
        bar.addPermanentWidget(self.layout_label)
        bar.addPermanentWidget(self.progress)
        bar.addPermanentWidget(self.position_label)
        bar.addPermanentWidget(self.device_label)

    def _connect(self) -> None:
        c = self.client
        c.ready.connect(self._on_client_ready)
        c.progressed.connect(self._on_client_progressed)
        c.busy_changed.connect(self._on_client_busy_changed)
        c.crashed.connect(self._on_client_crashed)
        c.restarting.connect(self._on_client_restarting)
        c.replayed.connect(self._on_client_replayed)
        c.gave_up.connect(self._on_client_gave_up)
        c.timed_out.connect(self._on_client_timed_out)
        self.canvas.node_selected.connect(self._on_canvas_node_selected)
        self.canvas.node_activated.connect(self._on_canvas_node_activated)
        self.canvas.node_menu_requested.connect(self._on_canvas_node_menu_requested)
        self.modules_panel.collapsed_changed.connect(self._on_modules_panel_collapsed_changed)
        self.modules_panel.chains_box.toggled.connect(self.act_chains.setChecked)
        self.editor.textChanged.connect(self._on_editor_text_changed)
        self.editor.breakpoints_changed.connect(self._on_editor_breakpoints_changed)
        self.timeline_bar.step_picked.connect(self._on_timeline_bar_step_picked)
        self.passes_panel.pass_picked.connect(self._on_passes_panel_pass_picked)
        self.editor.document().modificationChanged.connect(lambda *_: self._update_title())

    # --- startup ------------------------------------------------------------------------------

    def open_initial(
        self,
        file: str | None = None,
        demo: str | None = None,
        snapshot: dict[str, Any] | None = None,
    ) -> None:
        """What the first screen shows: the given snapshot/file/demo, else the last script/a demo.

        ``snapshot`` (from ``gradviz.show()``) opens read-only.
        """
        if snapshot is not None:
            try:
                parse_snapshot(snapshot, "the snapshot")
            except SnapshotError as exc:
                show_error(self, "Cannot show the snapshot", str(exc))
            else:
                self.open_snapshot(snapshot, "gradviz.show()")
                return
        if self._offer_autosave():
            return
        if file:
            if self.open_path(Path(file), ask=False):
                return
        if demo:
            found = self._find_demo(demo)
            if found is not None:
                self.load_demo(found, ask=False)
                return
            known = ", ".join(d.name for d in self.demos)
            self.output_panel.add_note(f"No demo named '{demo}'; the demos are: {known}")
        last = str(self.settings.value("file/last", "") or "")
        last_demo = str(self.settings.value("file/last_demo", "") or "")
        launched = _to_bool(self.settings.value("launched"))
        if last and Path(last).is_file() and self.open_path(Path(last), ask=False):
            return
        if last_demo or not launched:
            found = self._find_demo(last_demo or FIRST_DEMO) or self._find_demo(FIRST_DEMO)
            if found is not None:
                # The very first screen should teach: run the lesson up to its first
                # backward(), so the graph is already drawn and the guide says what's next.
                run_to = None if launched else _statements_before_backward(found.source)
                self.load_demo(found, ask=False, run_to=run_to)
                return
        self._set_text("", None, None)
        self._load_into_kernel()

    def _find_demo(self, name: str) -> Demo | None:
        for d in self.demos:
            if name in (d.name, d.path.stem, d.path.name):
                return d
        return None

    def _restore_window(self) -> None:
        geometry = self.settings.value("window/geometry")
        if isinstance(geometry, QByteArray) and not geometry.isEmpty():
            self.restoreGeometry(geometry)
        state = self.settings.value("window/state")
        self._restored_layout = False
        if isinstance(state, QByteArray) and not state.isEmpty():
            self._restored_layout = self.restoreState(state, SETTINGS_VERSION)
        device = str(self.settings.value("device", "cpu") or "cpu")
        if device in ("cpu", "cuda"):
            self._device = device
            self._set_combo_device(device)

    def _save_window(self) -> None:
        s = self.settings
        s.setValue("window/geometry", self.saveGeometry())
        s.setValue("window/state", self.saveState(SETTINGS_VERSION))
        s.setValue("device", self._device)
        last = self.path or (self.snapshot_path if self.read_only else None)
        s.setValue("file/last", str(last) if last else "")
        s.setValue("file/last_demo", self.demo.name if self.demo and not self.path else "")
        s.setValue("launched", True)
        s.sync()

    # --- the kernel's replies -----------------------------------------------------------------

    def _send(
        self,
        cmd: str,
        status: str,
        then: Callable[[dict[str, Any]], None] | None = None,
        before: Callable[[dict[str, Any]], None] | None = None,
        **params: Any,
    ) -> None:
        def on_reply(reply: dict[str, Any]) -> None:
            if (
                cmd == "load"
                and not reply.get("ok")
                and params.get("device", "cpu") != "cpu"
                and not reply.get("stopped")
                and not reply.get("crashed")
            ):
                # e.g. the last session used cuda and this machine has none: use cpu
                self._device = "cpu"
                self._set_combo_device("cpu")
                self.output_panel.add_note(f"{reply.get('message')}: running on cpu instead")
                self._send("load", status, then, before, **{**params, "device": "cpu"})
                return
            if before is not None and reply.get("ok") and not self._closing:
                before(reply["state"])
            self._on_reply(reply, cmd)
            if then is not None and reply.get("ok"):
                then(reply["state"])

        if cmd == "load":
            self._sent_source = params.get("source", "")
        self._running_index = self._index_for_status(cmd, params)
        if status:
            self.set_status(status)
        self.client.request(cmd, on_reply, **params)

    def _index_for_status(self, cmd: str, params: dict[str, Any]) -> int | None:
        if cmd in ("step", "debug", "run_to_end", "run_to_line") and self.state:
            return int(self.state.get("cursor", 0))
        if cmd in ("load", "set_device", "step_back"):
            return 0
        return None

    def _on_reply(self, reply: dict[str, Any], cmd: str) -> None:
        if self._closing:
            return
        replayed = self._unrecorded > 0
        if replayed:
            self._unrecorded -= 1
            if not reply.get("ok"):
                self._unrecorded = 0  # the replay broke off: what comes next is new
        if self.read_only:
            return  # a reply to a request sent before the snapshot opened: the snapshot stays
        if reply.get("stopped") or reply.get("crashed") or reply.get("message") == "cancelled":
            return  # the stop / crash handlers say what happened
        if not reply.get("ok"):
            message = reply.get("message", "the kernel refused")
            self._sent_source = self.client.source
            if cmd == "set_device":
                self._device = self._device_from_state()
                self._set_combo_device(self._device)
            self.output_panel.add_note(message, kind="error")
            self.set_status(message)
            self._update_actions()
            return
        state = reply.get("state")
        if isinstance(state, dict):
            self._timeline_at = None
            self.apply_state(state, reply.get("changes"))
            self.set_status(self._describe(cmd, state))
            if not replayed:
                self._record_step(cmd, state)
            if self.freeze_heap:
                # the state just kept on the timeline is long-lived: out of the cyclic
                # collector's work, or a full collection over every kept step stalls a
                # later step (the timeline's clear on load gives it back)
                gc.freeze()
            elif self._unrecorded == 0 and self.timeline.steps:
                # the end of a replay to a step whose snapshot had been dropped: keep it now
                last = self.timeline.steps[-1]
                if last.state is None and last.nodes <= MAX_KEPT_NODES:
                    last.state = state

    def _describe(self, cmd: str, state: dict[str, Any]) -> str:
        new = state.get("new_results") or []
        failed = [r for r in new if not r.get("ok")]
        if state.get("parse_error"):
            pe = state["parse_error"]
            return f"The script does not parse (line {pe.get('line')}): {pe.get('message')}"
        pause = PauseView.from_state(state)
        if pause is not None:
            where = f"Paused before line {pause.line}"
            if pause.iteration_text:
                where += f" ({pause.iteration_text})"
            if pause.frame:
                where += f" in {pause.frame}"
            return where + ": F10 over, F11 into, Shift+F11 out, F5 continue, Shift+F5 stop"
        if failed:
            r = failed[-1]
            err = r.get("error") or {}
            if err.get("type") in STOPPED_TYPES:
                return f"{_first_line(err.get('message', ''))}; Step skips the rest of line {r['line']}"
            return (
                f"Line {r['line']} failed: {err.get('type')}: {_first_line(err.get('message', ''))}"
            )
        if cmd == "zero_grad":
            zeroed = state.get("zeroed") or []
            return (
                f"Zeroed .grad of {', '.join(zeroed)}" if zeroed else "No leaf has a .grad to zero"
            )
        if cmd == "reset":
            return "Reset: nothing has run yet. Step (F10) runs the first statement."
        if cmd == "load" and not new:
            return "Loaded: nothing has run yet. Step (F10) runs the first statement."
        if len(new) == 1:
            passes = new[0].get("passes") or []
            extra = ""
            if passes:
                extra = " — backward() ran: press F7 to step through it"
            return f"Ran line {new[0]['line']}{extra}"
        if new:
            return f"Ran {len(new)} statements (lines {new[0]['line']}–{new[-1]['line']})"
        if state.get("at_end"):
            return "At the end of the script"
        return "Ready"

    def apply_state(self, state: dict[str, Any], changes: GraphChanges | None = None) -> None:
        """Render a kernel state (or a snapshot's) in every part of the window.

        ``changes`` (what differs from the state before, as the kernel sent it) lets
        the canvas update only those items."""
        self.state = state
        self._state_changes = changes
        self._set_raw_graph(state.get("graph") or {})
        self._canvas_passes_cache = None
        previous_known = self._bw_known
        passes = state.get("backward_passes") or []
        if len(passes) > previous_known:
            first_new = previous_known
            self._bw_pass = next(
                (i for i in range(first_new, len(passes)) if passes[i].get("steps")),
                len(passes) - 1,
            )
            self._bw_shown = 0
            self.canvas.clear_backward()
        elif len(passes) < previous_known or not passes:
            self._bw_pass = None if not passes else min(self._bw_pass or 0, len(passes) - 1)
            self._bw_shown = 0
            self.canvas.clear_backward()
        self._bw_known = len(passes)
        self._pass_graph_shown = None
        self.inspector_panel.focus_pass = self._bw_pass if self._bw_shown else None
        self._refresh_display()
        self.tensors_panel.set_state(state)
        self.accumulation_panel.set_state(state)
        self.memory_panel.set_state(state)
        self.output_panel.set_state(state)
        self.inspector_panel.set_state(state)
        pause = None if self.read_only else PauseView.from_state(state)
        self.debug_strip.set_pause(pause)
        self.passes_panel.set_passes(passes, self._statements(), self._bw_pass)
        self._mark_editor()
        self._update_guide()
        self._update_position()
        self._update_actions()

    def _keep_graph_in_view(self) -> None:
        items = self.canvas.graph_rect()
        if items.isEmpty():
            return
        visible = self.canvas.mapToScene(self.canvas.viewport().rect()).boundingRect()
        if not visible.contains(items):
            self.canvas.fit_to_view()

    def _keep_in_view(self, node_id: str) -> None:
        """Scroll to ``node_id`` when it is off screen (a big graph's executing node)."""
        item = self.canvas.node_item(node_id)
        if item is None:
            return
        visible = self.canvas.mapToScene(self.canvas.viewport().rect()).boundingRect()
        if not visible.contains(item.sceneBoundingRect()):
            self.canvas.centerOn(item)

    def _device_from_state(self) -> str:
        if self.state:
            return "cuda" if str(self.state.get("device", "cpu")).startswith("cuda") else "cpu"
        return self._device

    # --- editor marks, guide, position --------------------------------------------------------

    def _statements(self) -> list[dict[str, Any]]:
        return list((self.state or {}).get("statements") or [])

    def _cursor(self) -> int:
        return int((self.state or {}).get("cursor", 0))

    def _failed_here(self) -> dict[str, Any] | None:
        """The failed result at the cursor, if the last statement that ran failed."""
        results = (self.state or {}).get("results") or []
        if results and not results[-1].get("ok") and results[-1].get("index") == self._cursor():
            return results[-1]
        return None

    def _at_end(self) -> bool:
        return self._cursor() >= len(self._statements())

    def _mark_editor(self) -> None:
        state = self.state or {}
        statements = self._statements()
        cursor = self._cursor()
        executed = {
            line for s in statements if s.get("ran") for line in range(s["line"], s["end_line"] + 1)
        }
        failed = self._failed_here()
        next_lines = None
        if cursor < len(statements) and not failed:
            s = statements[cursor]
            next_lines = (s["line"], s["end_line"])
        ran_lines = None
        results = state.get("results") or []
        ok = [r for r in results if r.get("ok")]
        if ok and not failed:
            ran_lines = (ok[-1]["line"], ok[-1]["end_line"])
        self.editor.set_statement_marks(next_lines, ran_lines, executed)
        pause = self._pause()
        self.editor.set_paused_line(pause.line if pause is not None else None)
        parse_error = state.get("parse_error")
        if parse_error and parse_error.get("line"):
            self.editor.set_error(
                parse_error["line"],
                parse_error["line"],
                f"{parse_error.get('type')}: {parse_error.get('message')}"
                "\n\nNothing ran: fix this line.",
            )
        elif failed:
            err = failed.get("error") or {}
            first, last = failed["line"], failed["end_line"]
            line = err.get("line")
            if line and first <= line <= last:
                first = last = line
            tip = f"{err.get('type')}: {err.get('message')}"
            if err.get("explanation"):
                tip += f"\n\nWhy: {err['explanation']}"
            tip += "\n\nStep (F10) skips this statement; edit it and Step to run it again."
            self.editor.set_error(first, last, tip)
        elif self._stopped and self._stopped.get("index") == cursor and cursor < len(statements):
            s = statements[cursor]
            why = self._stopped.get("message") or (
                f"Stopped by you after {self._stopped['seconds']:.1f} s."
            )
            self.editor.set_error(
                s["line"],
                s["end_line"],
                f"{why}\n"
                "Everything before it is intact. Step (F10) skips it; edit it and Step to run "
                "the new text.",
            )
        else:
            self.editor.clear_error()
        if self.demo is not None and self.editor.toPlainText() == self.demo.source:
            self.editor.set_notes(self.demo.notes)
        else:
            self.editor.set_notes({})

    def _update_guide(self, backward_text: str | None = None) -> None:
        if self.read_only:
            self._update_read_only_guide(backward_text)
            return
        demo_on = self.demo is not None and self.editor.toPlainText() == self.demo.source
        if demo_on and self.demo is not None:
            self.guide_title.setText(
                f"<b>Demo: {_h(self.demo.title)}</b>"
                f"<span style='color:{theme.MUTED_TEXT}'> — {_h(self.demo.about)}</span>"
            )
        else:
            name = self.path.name if self.path else "untitled script"
            self.guide_title.setText(
                f"<b>{_h(name)}</b><span style='color:{theme.MUTED_TEXT}'> — F10 steps over, "
                "F11 steps into, F7 steps the backward pass; click a node to inspect it</span>"
            )
        if backward_text:
            self.guide_note.setText(backward_text)
            return
        statements = self._statements()
        cursor = self._cursor()
        notes = self.demo.notes if (demo_on and self.demo) else {}
        failed = self._failed_here()
        text = ""
        pause = self._pause()
        if self._timeline_at is not None:
            text = _tag(
                f"Timeline · step {self._timeline_at + 1} of {len(self.timeline)}", theme.SELECTION
            ) + _h(
                "a kept snapshot of that moment. Step, Run or Step into continue from here"
                " (the kernel replays to it); click the last step to come back."
            )
        elif pause is not None:
            code = self.editor.document().findBlockByNumber(pause.line - 1).text().strip()
            where = f"Paused · line {pause.line}"
            if pause.iteration_text:
                where += f" · {pause.iteration_text}"
            text = _tag(where, "#e67700") + f"<code>{_h(code)}</code>" + _h(
                " runs next. F10 steps over it, F11 steps into it, Shift+F11 finishes the "
                "loop or call, F5 runs to the next breakpoint, Shift+F5 stops here."
            )
        elif self.state and self.state.get("parse_error"):
            pe = self.state["parse_error"]
            text = _tag("Fix", "#e03131") + _h(f"line {pe.get('line')}: {pe.get('message')}")
        elif failed and (failed.get("error") or {}).get("type") in STOPPED_TYPES:
            err = failed.get("error") or {}
            text = _tag(f"Stopped · line {failed['line']}", theme.BACKWARD) + _h(
                f"{_first_line(err.get('message', ''))}. Nothing was rewound. Step skips the "
                "rest of this statement; edit it and Step to run it again."
            )
        elif failed:
            err = failed.get("error") or {}
            why = err.get("explanation") or _first_line(err.get("message", ""))
            text = _tag(f"Line {failed['line']} failed", theme.BACKWARD) + _h(why)
        elif self._stopped and self._stopped.get("index") == cursor and cursor < len(statements):
            who = (
                f"it ran past the {self._stopped['seconds']:g} s time limit and gradviz stopped it"
                if self._stopped.get("message")
                else f"you stopped it after {self._stopped['seconds']:.1f} s"
            )
            text = _tag(f"Stopped · line {statements[cursor]['line']}", theme.BACKWARD) + _h(
                f"{who}; everything before it is kept. Step skips it; edit it first to run it "
                "again."
            )
        elif cursor < len(statements):
            s = statements[cursor]
            note = _note_for(notes, s)
            if note:
                text = _tag(f"Next · line {s['line']}", "#7048e8") + _h(note)
            else:
                prev = statements[cursor - 1] if cursor > 0 else None
                prev_note = _note_for(notes, prev) if prev else None
                if prev and prev_note:
                    text = _tag(f"Just ran · line {prev['line']}", "#5c6370") + _h(prev_note)
                else:
                    text = _tag(f"Next · line {s['line']}", "#f08c00") + (
                        f"<code>{_h(_first_line(s['source']))}</code>"
                    )
        elif statements:
            passes = (self.state or {}).get("backward_passes") or []
            prev_note = _note_for(notes, statements[-1])
            if self._bw_available():
                text = _tag("End", "#2f9e44") + _h(
                    "every statement ran. Press F7 to step through the backward pass, "
                    "one engine step at a time (pick any pass in the Backward passes panel)."
                )
            elif prev_note:
                text = _tag(f"Just ran · line {statements[-1]['line']}", "#5c6370") + _h(prev_note)
            else:
                extra = " Reset (Ctrl+R) to start over." if not passes else ""
                text = _tag("End", "#2f9e44") + _h("every statement ran." + extra)
        else:
            text = _h("Type PyTorch code in the editor, then press Step (F10).")
        self.guide_note.setText(text)

    def _update_read_only_guide(self, backward_text: str | None = None) -> None:
        self.guide_title.setText(f"<b>{_h(self.read_only_banner())}</b>")
        if backward_text:
            self.guide_note.setText(backward_text)
            return
        if self._bw_available():
            text = _tag("Snapshot", theme.NODE_STYLES["group"].stroke) + _h(
                "press F7 to replay the recorded backward pass one engine step at a time. "
                "Click a node to inspect it; collapse modules in the Modules panel; "
                "Ctrl+F finds a node."
            )
        else:
            text = _tag("Snapshot", theme.NODE_STYLES["group"].stroke) + _h(
                "click a node to inspect it; collapse modules in the Modules panel; "
                "Ctrl+F finds a node. Open a script (Ctrl+O) or a demo to step again."
            )
        self.guide_note.setText(text)

    def read_only_banner(self) -> str:
        """``Read-only snapshot of run.gradviz.json: 136 nodes · 1 backward pass — …``."""
        nodes = len((self.state or {}).get("graph", {}).get("nodes") or [])
        passes = len(self._passes())
        return (
            f"Read-only snapshot of {self.snapshot_name}: {nodes} node{_s(nodes)} · "
            f"{passes} backward pass{'es' if passes != 1 else ''} — open a script to step"
        )

    def _update_position(self) -> None:
        if self.read_only:
            self.position_label.setText("read-only snapshot")
            self.device_label.setText(f"device: {(self.state or {}).get('device', 'cpu')}")
            return
        n = len(self._statements())
        cursor = self._cursor()
        text = f"statement {min(cursor, n)} of {n} run" if n else "no statements"
        pause = self._pause()
        if pause is not None:
            text = f"paused at line {pause.line}" + (
                f", {pause.iteration_text}" if pause.iteration_text else ""
            )
        self.position_label.setText(text)
        self.device_label.setText(f"device: {self._device_from_state()}")

    # --- actions: forward -----------------------------------------------------------------------

    def _source(self) -> str:
        return self.editor.toPlainText()

    def _text_changed(self) -> bool:
        sent = self._sent_source if self._sent_source is not None else self.client.source
        return self._source() != sent

    def _load_into_kernel(
        self,
        run_to: int | None = None,
        then: Callable[[dict[str, Any]], None] | None = None,
        status: str = "",
    ) -> None:
        self._stopped = None
        self._send(
            "load",
            status or "Loading the script…",
            then,
            source=self._source(),
            device=self._device,
            run_to=run_to,
        )

    def _syntax_ok(self) -> bool:
        """Check edited text before it replaces the kernel's: a typo must not lose the state."""
        try:
            ast.parse(self._source())
        except SyntaxError as exc:
            line = exc.lineno or 1
            message = f"SyntaxError: {exc.msg}"
            self.editor.set_error(
                line,
                line,
                f"{message}\n\nNothing ran and the state is unchanged: fix this line and "
                "press Step again.",
            )
            self.output_panel.add_note(f"{message} (nothing ran; the state is kept)", line, "error")
            self.set_status(f"Line {line}: {message}. Nothing ran; the state is kept.")
            return False
        return True

    @_when_idle
    def step(self) -> None:
        """F10: step over: the next statement (inside a paused statement, the next one at
        the same level); reloads edited text first and skips a failed statement."""
        if self._continue_from_timeline(self.step):
            return
        if self._pause() is not None and not self._text_changed():
            self._send_debug("over", "Stepping over…")
            return
        self._advance(None)

    @_when_idle
    def step_into(self) -> None:
        """F11: stop at the next statement at any depth (a loop body, a script function,
        the forward of a script nn.Module called as net(x))."""
        if self._continue_from_timeline(self.step_into):
            return
        if self._pause() is not None and not self._text_changed():
            self._send_debug("into", "Stepping into…")
            return
        self._advance("into")

    @_when_idle
    def step_out(self) -> None:
        """Shift+F11: finish the current loop or call; stop in the code around it."""
        if self._continue_from_timeline(self.step_out):
            return
        if self._pause() is None or self._text_changed():
            self.set_status("Step out works inside a paused loop or call: Step into (F11) first")
            return
        self._send_debug("out", "Stepping out…")

    def _advance(self, mode: str | None) -> None:
        """Run the statement at the cursor: whole (``mode`` None), or under the debugger."""
        if self._text_changed():
            if not self._syntax_ok():
                return
            ran = self._cursor()

            def then(state: dict[str, Any]) -> None:
                results = state.get("new_results") or []
                if results and not results[-1].get("ok"):
                    return
                self._send_step(mode, "Running the next statement…")

            self._load_into_kernel(ran, then, "The script changed: re-running it…")
            return
        failed = self._failed_here()
        if failed:
            line = failed["line"]
            stopped_here = (failed.get("error") or {}).get("type") in STOPPED_TYPES
            why = "you stopped it" if stopped_here else "it failed"
            self._send("skip", "")
            self._send_step(
                mode,
                f"Skipped line {line} ({why})",
                lambda st: self.set_status(
                    f"Skipped line {line} ({why}); {self._describe('step', st)}"
                ),
            )
            return
        stopped = self._stopped
        if stopped and stopped.get("index") == self._cursor() and not self._at_end():
            # A statement the user stopped is not run again by accident: skip it.
            line = stopped.get("line")
            why = "it hit the time limit" if stopped.get("message") else "you stopped it"
            self._stopped = None
            self._send("skip", "", force=True)
            self._send_step(
                mode,
                f"Skipped line {line} ({why})",
                lambda st: self.set_status(
                    f"Skipped line {line} ({why}); {self._describe('step', st)}"
                ),
            )
            return
        if self._at_end():
            self.set_status("At the end of the script: nothing left to step")
            return
        self._send_step(mode, "Running the next statement…")

    def _send_step(
        self, mode: str | None, status: str, then: Callable[[dict[str, Any]], None] | None = None
    ) -> None:
        if mode is None:
            self._send("step", status, then)
        else:
            self._send_debug(mode, status, then)

    def _send_debug(
        self,
        mode: str,
        status: str = "",
        then: Callable[[dict[str, Any]], None] | None = None,
        breakpoints: tuple[int, ...] | None = None,
    ) -> None:
        """A debug request: run (or resume) the statement at the cursor until ``mode`` says
        stop, with the editor's breakpoints (or the given ones)."""
        if breakpoints is None:
            breakpoints = tuple(self.editor.breakpoints())
        resuming = self._pause() is not None

        def before(state: dict[str, Any]) -> None:
            # how the kernel got to this pause, so a replay can get there again
            if state.get("paused"):
                path = self._debug_path if resuming else []
                self._debug_path = [*path, (mode, breakpoints)]
            else:
                self._debug_path = []

        self._send("debug", status, then, before, mode=mode, breakpoints=list(breakpoints))

    def _pause(self) -> PauseView | None:
        """Where the kernel's statement is paused (None when nothing is)."""
        if self.read_only:
            return None
        return PauseView.from_state(self.state)

    @_when_idle
    def continue_run(self) -> None:
        """F5: run to the next breakpoint: before a statement whose first line has one, or
        inside a body where one is; to the end when there is none."""
        if self._continue_from_timeline(self.continue_run):
            return
        if self._text_changed():
            if not self._syntax_ok():
                return
            self._load_into_kernel(None, lambda st: self._continue_from(st, first=True))
            return
        if self._pause() is not None:
            self._send_debug(
                "continue", "Running to the next breakpoint…",
                lambda st: self._continue_from(st, first=False),
            )  # fmt: skip
            return
        self._continue_from(self.state or {}, first=True)

    def _continue_from(self, state: dict[str, Any], first: bool) -> None:
        """Go on from ``state`` (top level) to the next breakpoint; ``first``: the press
        itself, so a breakpoint on the statement at the cursor is passed, not stopped at."""
        if state.get("paused") or (not first and self._failed_here()):
            return
        breakpoints = set(self.editor.breakpoints())
        if not breakpoints:
            if self._failed_here():
                self._send("skip", "")
            self._send("run_to_end", "Running to the end…", keep_going=False)
            return
        statements = self._statements()
        cursor = self._cursor()
        if first and self._failed_here():
            self._send("skip", "")
            cursor += 1
        for s in statements[cursor:]:
            index = s["index"]
            on_first = s["line"] in breakpoints and not (first and index == cursor)
            inside = any(s["line"] < b <= s["end_line"] for b in breakpoints)
            if not on_first and not inside:
                continue
            if on_first:
                if index > cursor:
                    self._send(
                        "run_to", f"Running to the breakpoint on line {s['line']}…",
                        lambda st, line=s["line"]: self.set_status(
                            f"Stopped at the breakpoint on line {line} (before it runs)"
                        ),
                        index=index,
                    )  # fmt: skip
                else:
                    self.set_status(f"Stopped at the breakpoint on line {s['line']} (before it runs)")
                return

            def enter(st: dict[str, Any], index: int = index) -> None:
                if int(st.get("cursor", -1)) != index or self._failed_here():
                    return  # a statement before it failed: stop there
                self._send_debug(
                    "continue", "Running to the next breakpoint…",
                    lambda st2: self._continue_from(st2, first=False),
                )  # fmt: skip

            if index > cursor:
                self._send("run_to", "Running to the next breakpoint…", enter, index=index)
            else:
                self._send_debug(
                    "continue", "Running to the next breakpoint…",
                    lambda st2: self._continue_from(st2, first=False),
                )  # fmt: skip
            return
        self._send("run_to_end", "Running to the end (no breakpoint ahead)…", keep_going=False)

    @_when_idle
    def run_to_backward(self) -> None:
        """Ctrl+F11: run until just before the next statement that calls backward() (or
        autograd.grad), wherever it is: at the top level, in a loop, in a function."""
        if self._continue_from_timeline(self.run_to_backward):
            return
        if self._text_changed():
            if not self._syntax_ok():
                return
            self._load_into_kernel(None, lambda st: self._to_backward_from(first=True))
            return
        if self._pause() is not None:
            self._send_debug(
                "backward", "Running to the next backward()…",
                lambda st: self._to_backward_from(first=False),
            )  # fmt: skip
            return
        self._to_backward_from(first=True)

    def _to_backward_from(self, first: bool) -> None:
        if self._pause() is not None or (not first and self._failed_here()):
            return  # paused before a backward() inside a body, or a statement failed
        statements = self._statements()
        cursor = self._cursor()
        if first and self._failed_here():
            self._send("skip", "")
            cursor += 1
        if cursor >= len(statements):
            self.set_status("No backward() call is left to run to")
            return
        s = statements[cursor]
        if not first and _top_level_backward(s["source"]):
            self.set_status(f"Stopped before line {s['line']}: it calls backward()")
            return
        self._send_debug(
            "backward", "Running to the next backward()…",
            lambda st: self._to_backward_from(first=False),
        )  # fmt: skip

    def toggle_breakpoint(self) -> None:
        """F9: set or clear a breakpoint on the editor's cursor line."""
        self.editor.toggle_breakpoint(self.editor.cursor_line())

    def _on_editor_breakpoints_changed(self, lines: list[int]) -> None:
        if lines:
            self.set_status(
                "Breakpoints on line" + ("s " if len(lines) > 1 else " ")
                + ", ".join(str(n) for n in lines) + ": Run (F5) stops at the next one"
            )  # fmt: skip
        else:
            self.set_status("No breakpoints: Run (F5) runs to the end")

    @_when_idle
    def run_to_end(self) -> None:
        """Run every statement left, breakpoints or not (stops at a failure)."""
        if self._continue_from_timeline(self.run_to_end):
            return
        if self._pause() is not None and not self._text_changed():
            # finish the paused statement where it stands, then the rest
            self._send_debug(
                "continue", "Running to the end…",
                lambda st: None if st.get("paused") or self._failed_here() else self._send(
                    "run_to_end", "Running to the end…", keep_going=False
                ),
                breakpoints=(),
            )  # fmt: skip
            return
        if self._text_changed():
            if not self._syntax_ok():
                return
            self._load_into_kernel(
                None, lambda st: self._send("run_to_end", "Running to the end…", keep_going=False)
            )
            return
        if self._failed_here():
            self._send("skip", "")
        self._send("run_to_end", "Running to the end…", keep_going=False)

    def run_to_cursor(self) -> None:
        """Ctrl+F10: run through the statement on the editor's cursor line."""
        self._run_to_line(self.editor.cursor_line())

    @_when_idle
    def _run_to_line(self, line: int) -> None:
        if self._continue_from_timeline(lambda: self._run_to_line(line)):
            return
        pause = self._pause()
        statements = self._statements()
        if pause is not None and not self._text_changed() and 0 <= pause.statement < len(statements):
            s = statements[pause.statement]
            if s["line"] < line <= s["end_line"]:
                # inside the paused statement: run to that line, as a one-off breakpoint
                self._send_debug(
                    "continue", f"Running to line {line}…", breakpoints=(line,)
                )  # fmt: skip
                return
        if self._text_changed():
            if not self._syntax_ok():
                return
            self._load_into_kernel(
                None, lambda st: self._send("run_to_line", f"Running to line {line}…", line=line)
            )
            return
        failed = self._failed_here()
        if failed and line > failed["end_line"]:
            self._send("skip", "")
        self._send("run_to_line", f"Running to line {line}…", line=line)

    @_when_idle
    def step_back(self) -> None:
        """Shift+F10: back to the previous step on the timeline: at once where its
        snapshot is kept; otherwise the kernel replays to it."""
        shown = self._timeline_at if self._timeline_at is not None else len(self.timeline) - 1
        if not self._text_changed() and shown >= 1:
            self.show_timeline_step(shown - 1)
            return
        if self._continue_from_timeline(self.step_back):
            return
        if self._text_changed():
            if not self._syntax_ok():
                return
            self._load_into_kernel(max(self._cursor() - 1, 0))
            return
        self._stopped = None
        self._send("step_back", "Stepping back…")

    @_when_idle
    def reset(self) -> None:
        """Ctrl+R: back to before the first statement."""
        self.output_panel.clear_notes()
        self._stopped = None
        if self.client.dead:
            self.client.restart()
            return
        if self._text_changed():
            self._load_into_kernel(None)
            return
        self._send("reset", "Resetting…")

    @_when_idle
    def zero_grad(self) -> None:
        if self._continue_from_timeline(self.zero_grad):
            return
        self._send("zero_grad", "Zeroing every leaf's .grad…")

    def stop(self) -> None:
        """Shift+F5: a paused or running statement ends where it stands (its work so far
        is kept); one stuck in native code is killed after STOP_GRACE_MS, and the kernel
        restarts and replays."""
        if not self.client.busy and self._pause() is not None:
            self._pending.clear()
            self._debug_path = []
            self._send("debug_stop", "Stopping the paused statement…")
            return
        if not self.client.busy:
            return
        self._pending.clear()
        req = self.client.inflight
        if req is not None and self.client.interrupt():
            # The kernel ends the statement at its next loop iteration or statement and
            # replies as usual: its work so far is kept, nothing is rewound. Only a
            # statement stuck in one long native op is killed (after a short grace).
            self.set_status("Stopping: the statement ends at its next step and keeps its work…")
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
        statements = self._statements()
        if req is not None and req.cmd == "load":
            statements = []
        line = statements[index]["line"] if index is not None and index < len(statements) else None
        self._stopped = {"index": index, "line": line, "seconds": seconds}
        if not self.client.stop():
            return
        where = f"line {line}" if line else "the statement"
        self.output_panel.add_note(
            f"Stopped {where} after {seconds:.1f} s. Restarting the kernel and replaying the "
            "statements before it; nothing before it is lost.",
            line,
        )
        self.set_status(f"Stopped {where}: restarting the kernel and replaying…")

    def _on_client_timed_out(self, message: str, phase: Any) -> None:
        """The watchdog killed the kernel: mark the statement, keep everything before it."""
        if self._closing:
            return
        self._pending.clear()
        phase = phase if isinstance(phase, dict) else {}
        index = phase.get("index") if isinstance(phase.get("index"), int) else self._running_index
        statements = self._statements()
        line = statements[index]["line"] if index is not None and index < len(statements) else None
        seconds = float(phase.get("limit_s") or 0.0)
        self._stopped = {"index": index, "line": line, "seconds": seconds, "message": message}
        self.output_panel.add_note(
            f"{message}. Restarting the kernel and replaying the statements before it; "
            "nothing before it is lost.",
            line,
        )
        self.set_status(f"Time limit: line {line} stopped; restarting the kernel and replaying…")

    @_when_idle
    def set_device(self, device: str) -> None:
        if device != self._device and self._continue_from_timeline(
            lambda: self.set_device(device)
        ):
            return
        if device == self._device:
            self._set_combo_device(device)
            return
        info = self.client.info
        if device == "cuda" and info and not info.get("cuda_available"):
            self.set_status(f"cuda is unavailable: {info.get('cuda_reason')}")
            self._set_combo_device(self._device)
            return
        self._device = device
        self._set_combo_device(device)
        cursor = self._cursor()
        if self._text_changed() and self._syntax_ok():
            self._load_into_kernel(cursor, status=f"Switching to {device} and re-running…")
        else:
            self._send(
                "set_device",
                f"Switching to {device}: re-running {cursor} statements…",
                device=device,
                run_to=cursor,
            )

    def _set_combo_device(self, device: str) -> None:
        self.device_combo.blockSignals(True)
        self.device_combo.setCurrentText(device)
        self.device_combo.blockSignals(False)
        for act in self.device_actions.actions() if hasattr(self, "device_actions") else []:
            act.setChecked(act.text() == device)

    def _on_device_combo_changed(self, text: str) -> None:
        self.set_device(text)

    # --- the timeline ----------------------------------------------------------------------

    #: replies that are steps the user took (a skip is half of a step; a snapshot is none)
    _STEP_COMMANDS = frozenset({
        "load", "step", "debug", "debug_stop", "run_to_end", "run_to", "run_to_line",
        "step_back", "reset", "zero_grad", "set_device",
    })  # fmt: skip

    def _record_step(self, cmd: str, state: dict[str, Any]) -> None:
        """Put the state a step left on the timeline (a load of new text starts a new one)."""
        if cmd not in self._STEP_COMMANDS:
            return
        if cmd == "load":
            self.timeline.clear()
            if self.freeze_heap:
                gc.unfreeze()
        pause = PauseView.from_state(state)
        label, tip = describe_step(state)
        self.timeline.add(
            TimelineStep(
                label=label,
                tip=tip,
                state=state,
                cursor=pause.statement if pause is not None else int(state.get("cursor", 0)),
                path=tuple(self._debug_path) if pause is not None else (),
                paused=pause is not None,
                nodes=len((state.get("graph") or {}).get("nodes") or []),
            )
        )
        self._timeline_at = None
        self.timeline_bar.set_steps(self.timeline.steps, len(self.timeline) - 1)

    def _on_client_replayed_step(self, state: dict[str, Any]) -> None:
        """A restarted kernel's replay is where the session now stands: a step of its own."""
        self._debug_path = []
        self._record_step("run_to", state)

    def _on_timeline_bar_step_picked(self, index: int) -> None:
        if self.busy:
            self.set_status("The kernel is busy: pick the step again when it is done")
            self.timeline_bar.set_steps(self.timeline.steps, self._shown_step())
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
        self.apply_state(step.state)
        self.timeline_bar.set_steps(self.timeline.steps, index)
        if index == last:
            self.set_status(f"Back at the present: step {index + 1} of {last + 1}")
        else:
            self.set_status(
                f"Showing step {index + 1} of {last + 1} ({step.tip}) from the timeline;"
                " Step or Run continues from here"
            )

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

    def _replay_to_step(self, index: int) -> None:
        """Bring the kernel to timeline step ``index``: run its statements again from a
        fresh start, then repeat the debug requests that paused it (same seed, same run)."""
        step = self.timeline.steps[index]
        self.timeline.truncate(index)
        self._timeline_at = None
        source = self._sent_source if self._sent_source is not None else self.client.source
        zero_points = [
            int(z) for z in (self.state or {}).get("zero_points") or [] if int(z) <= step.cursor
        ]
        self._stopped = None
        self._unrecorded += 1 + len(step.path)
        self._send(
            "load", f"Going back to step {index + 1}: replaying…",
            source=source, device=self._device, run_to=step.cursor, zero_points=zero_points,
        )  # fmt: skip
        for mode, breakpoints in step.path:
            self._send("debug", "", mode=mode, breakpoints=list(breakpoints))
        self._debug_path = list(step.path)
        self.timeline_bar.set_steps(self.timeline.steps, index)

    # --- actions: backward ------------------------------------------------------------------

    def _passes(self) -> list[dict[str, Any]]:
        return list((self.state or {}).get("backward_passes") or [])

    def _bw_available(self) -> bool:
        passes = self._passes()
        if self._bw_pass is None or not passes:
            return False
        if self._bw_pass < len(passes) and self._bw_shown < len(
            passes[self._bw_pass].get("steps") or []
        ):
            return True
        return any(p.get("steps") for p in passes[self._bw_pass + 1 :])

    def _bw_steps_of_current_pass(self) -> int:
        """Steps of the pass being shown, moving on to the next pass once it is all shown."""
        passes = self._passes()
        assert self._bw_pass is not None
        steps = passes[self._bw_pass].get("steps") or []
        if self._bw_shown >= len(steps):
            self._bw_pass = next(
                i for i in range(self._bw_pass + 1, len(passes)) if passes[i].get("steps")
            )
            self._bw_shown = 0
        return len(passes[self._bw_pass].get("steps") or [])

    def backward_step(self) -> None:
        """F7: show the next engine step of the backward pass on the canvas."""
        if not self._bw_available():
            return
        self._bw_steps_of_current_pass()
        self._bw_shown += 1
        self._show_backward()

    def backward_to_end(self) -> None:
        """Shift+F7: show the whole pass (the next one, when this one is fully shown)."""
        if not self._bw_available():
            return
        self._bw_shown = self._bw_steps_of_current_pass()
        self._show_backward()

    def _on_passes_panel_pass_picked(self, index: int) -> None:
        """A row of the pass list: replay that pass from its first engine step."""
        passes = self._passes()
        if not 0 <= index < len(passes):
            return
        self._bw_pass = index
        if not passes[index].get("steps"):
            self._bw_shown = 0
            self._show_pass_graph(index)
            self.set_status(f"Backward pass #{index + 1} recorded no engine step")
            return
        self._bw_shown = 1
        self._show_backward()

    def _show_pass_graph(self, index: int) -> None:
        """Draw pass ``index``'s own graph (the one it ran over) instead of the state's."""
        bpass = self._passes()[index]
        data = pass_graph(bpass)
        raw = graph_from_json(data)
        display = build_display(raw, data)
        self._pass_graph_shown = index
        self._display = display
        self._canvas_passes_cache = None
        self.layout_runner.invalidate()
        self.canvas.set_graph(display.data, display.positions)
        self.canvas.fit_to_view()
        self.inspector_panel.set_groups({})
        self.inspector_panel.set_state({**(self.state or {}), "graph": data})

    def _pass_needs_own_graph(self, bpass: dict[str, Any]) -> bool:
        """True when some node the pass ran over is not in the graph the state shows (a
        later iteration built a new graph): the pass is then drawn on its own graph."""
        nodes = set(bpass.get("nodes") or [])
        if not nodes:
            return False
        shown = {str(n["id"]) for n in self._raw_graph_data.get("nodes") or []}
        return not nodes <= shown

    def _show_backward(self) -> None:
        passes = self._passes()
        assert self._bw_pass is not None
        bpass = passes[self._bw_pass]
        steps = bpass.get("steps") or []
        index = self._bw_shown - 1
        if self._pass_needs_own_graph(bpass):
            if self._pass_graph_shown != self._bw_pass:
                self._show_pass_graph(self._bw_pass)
        elif self._pass_graph_shown is not None:
            self._pass_graph_shown = None
            self.inspector_panel.set_state(self.state or {})
            self._refresh_display(fit=True)
        self.canvas.show_backward_step(self._bw_pass, index, self._canvas_passes())
        self.passes_panel.set_passes(passes, self._statements(), self._bw_pass)
        step = steps[index]
        self._keep_in_view(self._display.shown(step["node"]) if self._display else step["node"])
        self.inspector_panel.focus_pass = self._bw_pass
        self.inspector_panel.show_node(step["node"])
        labels = _node_titles(bpass, (self.state or {}).get("graph", {}).get("nodes", []))
        received = ", ".join(fmt_value(g, 60) for g in step.get("grad_outputs", []))
        sent = [
            f"{fmt_value(g, 60)} → {labels.get(t, t)}"
            for g, t in zip(step.get("grad_inputs", []), step.get("targets", []))
            if t is not None
        ]
        name = step.get("label", step["node"])
        if step.get("vars"):
            name += f" ({', '.join(step['vars'])})"
        line = bpass.get("line")
        if (
            line is None
            and bpass.get("statement") is not None
            and bpass["statement"] < len(self._statements())
        ):
            line = self._statements()[bpass["statement"]]["line"]
        where = f" (line {line}" if line else ""
        if bpass.get("iteration") is not None:
            where += f", iteration {bpass['iteration']}" if where else f" (iteration {bpass['iteration']}"
        where += ")" if where else ""
        what = f"<b>{_h(name)}</b> receives {_h(received or '–')}"
        if sent:
            what += " and passes " + _h("; ".join(sent))
        elif step.get("label") == "AccumulateGrad":
            what += " and adds it into " + _h(
                ", ".join(f"{v}.grad" for v in step.get("vars", [])) or ".grad"
            )
        tag = _tag(
            f"Backward #{self._bw_pass + 1}{where} · step {self._bw_shown} of {len(steps)}",
            theme.BACKWARD,
        )
        error = ""
        if self._bw_shown == len(steps) and bpass.get("error"):
            error = (
                f"<br><span style='color:{theme.BACKWARD}'>{_h(_first_line(bpass['error']))}</span>"
            )
        self._update_guide(tag + what + error)
        self.set_status(
            f"Backward pass #{self._bw_pass + 1}: step {self._bw_shown} of {len(steps)}"
            f" ({step.get('label')})"
        )
        self._update_actions()

    # --- canvas ------------------------------------------------------------------------------

    def _on_canvas_node_selected(self, node_id: str) -> None:
        self.inspector_panel.focus_pass = self._bw_pass if self._bw_shown else None
        self.inspector_panel.show_node(node_id)
        self.inspector_dock.raise_()

    def _on_canvas_node_activated(self, node_id: str) -> None:
        if self._display is not None and node_id in self._display.groups:
            self.expand_group(node_id)
            return
        node = next(
            (n for n in (self.state or {}).get("graph", {}).get("nodes", []) if n["id"] == node_id),
            None,
        )
        if node is None or node.get("statement") is None:
            return
        statements = self._statements()
        index = node["statement"]
        if 0 <= index < len(statements):
            s = statements[index]
            self.editor.select_lines(s["line"], s["end_line"])
            self.set_status(f"{node.get('label')} was created by line {s['line']}")

    def _on_canvas_node_menu_requested(self, node_id: str, pos: QPoint) -> None:
        menu = self.node_menu(node_id)
        if menu.actions():
            menu.exec(pos)
        menu.deleteLater()

    def node_menu(self, node_id: str) -> QMenu:
        """The right-click menu of a node: collapse its module(s), or expand a group."""
        menu = QMenu(self)
        display = self._display
        if display is not None and node_id in display.groups:
            label = display.groups[node_id].get("label", node_id)
            act = add_menu_action(menu, f"Expand {label}")
            act.triggered.connect(lambda _=False: self.expand_group(node_id))
            return menu
        raw = self._raw_graph
        module = raw.nodes[node_id].get("module") if node_id in raw else None
        if module:
            parts = str(module).split(".")
            # innermost first: the module that built the op, then the blocks around it
            for i in range(len(parts), 0, -1):
                name = ".".join(parts[:i])
                act = add_menu_action(menu, f"Collapse module {name}")
                act.triggered.connect(lambda _=False, m=name: self.collapse_module(m))
        return menu

    # --- grouping and layout -------------------------------------------------------------------

    def collapse_module(self, module: str) -> None:
        """Draw every node of ``module`` (and its submodules) as one box."""
        self._collapsed.add(module)
        gid = f"g:{module}"
        self._refresh_display(after=lambda: self._focus_node(gid))

    def expand_group(self, group_id: str) -> None:
        """Show a group's nodes again (a module group; a chain turns chain collapsing off)."""
        display = self._display
        if display is None or group_id not in display.groups:
            return
        group = display.groups[group_id]
        members = [str(m) for m in group.get("members") or []]
        if is_chain(group_id):
            self.set_status("Linear chains expanded (View › Collapse linear chains)")
            self.act_chains.setChecked(False)  # refreshes the display
        else:
            self._collapsed.discard(str(group.get("module", "")))
            self._refresh_display()
            self.set_status(f"Expanded {group.get('label', group_id)}: {len(members)} nodes")
        first = members[0] if members else None
        if first is not None:
            self._after_display = lambda: self._focus_node(first, select=False)
            if not self.layout_runner.pending:
                self._run_after_display()

    def expand_all(self) -> None:
        self._collapsed = set()
        self._refresh_display(fit=True)

    def _on_modules_panel_collapsed_changed(self, modules: list[str]) -> None:
        added = set(modules) - self._collapsed
        self._collapsed = set(modules)
        if len(added) == 1:
            gid = f"g:{next(iter(added))}"
            self._refresh_display(after=lambda: self._focus_node(gid))
        else:
            self._refresh_display(fit=True)

    def _on_chains_toggled(self, on: bool) -> None:
        box = self.modules_panel.chains_box
        if box.isChecked() != on:
            box.blockSignals(True)
            box.setChecked(on)
            box.blockSignals(False)
        if self.state is not None:
            self._refresh_display(fit=True)

    def _focus_node(self, node_id: str, select: bool = True) -> None:
        """Bring ``node_id`` (or the group hiding it) into view, readable."""
        if self._display is not None:
            node_id = self._display.shown(node_id)
        item = self.canvas.node_item(node_id)
        if item is None:
            return
        if select:
            self.canvas.select_node(node_id, center=True)
            self._on_canvas_node_selected(node_id)
        if self.canvas.zoom_level() < 0.5:
            self.canvas.set_zoom(0.8)  # a dot on a zoomed-out canvas says nothing
        self.canvas.centerOn(item)

    @property
    def layout_pending(self) -> bool:
        """True while a big graph is being grouped and laid out on the worker thread."""
        return self.layout_runner.pending

    def displayed_graph(self) -> nx.DiGraph:
        """The graph on the canvas (groups in place of collapsed modules and chains)."""
        return self._display.graph if self._display is not None else self._raw_graph

    def _set_raw_graph(self, data: dict[str, Any]) -> None:
        self._raw_graph_data = data
        self._raw_graph_cache = None

    @property
    def _raw_graph(self) -> nx.DiGraph:
        """The captured graph as networkx, built on first use: a plain step that
        needs no grouping or search never pays for it (the step-latency budget)."""
        if self._raw_graph_cache is None:
            self._raw_graph_cache = graph_from_json(self._raw_graph_data)
        return self._raw_graph_cache

    def _refresh_display(self, fit: bool = False, after: Callable[[], None] | None = None) -> None:
        """Group the state's graph as the user asked, lay it out, and show it.

        Graphs of more than ``async_layout_nodes`` nodes are grouped and laid
        out on the worker thread; the canvas keeps the old picture until the
        result comes (a newer request makes an older one's result stale).
        """
        state = self.state or {}
        nodes = self._raw_graph_data.get("nodes") or []
        delta = self._state_changes
        cached = self._modules_cache
        if (
            delta is not None and cached is not None and cached[0] == delta.base
            and not delta.modules_changed
        ):
            modules = cached[1]  # no node joined, left or changed a module: the same tree
        else:
            modules = module_tree_of_nodes(nodes)
        self._modules_cache = (delta.seq if delta is not None else None, modules)
        self._collapsed &= set(modules)
        collapsed = frozenset(self._collapsed)
        chains = self.act_chains.isChecked()
        self.modules_panel.set_modules(modules, collapsed)
        given = None if self.read_only else state.get("positions")
        count = len(nodes)
        if delta is not None and given:
            # the kernel sent a position with every node it added
            placed = len(given) == len(nodes) and all(n in given for n in delta.nodes)
        else:
            placed = bool(given) and all(n["id"] in given for n in nodes)
        if not collapsed and not chains and placed:
            # The kernel laid it out already and nothing is grouped: no graph work here.
            self.layout_runner.invalidate()
            changes, self._state_changes = self._state_changes, None
            self._show_display(
                Display.plain(self._raw_graph_data, given, lambda: self._raw_graph), fit, changes
            )
            return
        self._state_changes = None
        raw = self._raw_graph
        previous = None
        if self._display is not None and not fit:
            previous = dict(self._display.positions)
        job = functools.partial(
            build_display, raw, state.get("graph"), collapsed, chains, previous, given
        )
        self._after_display = after
        needs_layout = bool(collapsed or chains or not given or any(n not in given for n in raw))
        if needs_layout and count > self.async_layout_nodes:
            self.layout_runner.submit(job)
            self._layout_nodes = count
            self._layout_fit = fit
            self.layout_label.setText(f"Laying out {count:,} nodes…")
            self.layout_label.show()
            return
        self.layout_runner.invalidate()  # anything still running is out of date now
        self._show_display(job(), fit)

    def _on_layout_runner_finished(self, request: int, display: Display) -> None:
        if self._closing:
            return
        self._show_display(display, self._layout_fit)
        shown = display.graph.number_of_nodes()
        boxes = f"{shown:,} nodes"
        if display.groups:
            boxes = f"{shown:,} boxes for {self._layout_nodes:,} nodes"
        self.set_status(f"Laid out {boxes} in {display.seconds:.2f} s (on a worker thread)")

    def _on_layout_runner_failed(self, request: int, message: str) -> None:
        self.layout_label.hide()
        self.set_status(f"Could not lay out the graph: {message}")
        self.output_panel.add_note(f"Layout failed: {message}", kind="error")

    _layout_fit = False

    def _show_display(
        self, display: Display, fit: bool, changes: GraphChanges | None = None
    ) -> None:
        first = self._display is None
        self._display = display
        self._canvas_passes_cache = None
        self.layout_label.hide()
        self.canvas.set_graph(display.data, display.positions, changes)
        self.inspector_panel.set_groups(display.groups)
        if self._bw_pass is not None and self._bw_shown:
            # group ids changed: redraw the step with the ids now on the canvas
            self.canvas.show_backward_step(self._bw_pass, self._bw_shown - 1, self._canvas_passes())
        if fit and not first:
            self.canvas.fit_to_view()
        else:
            self._keep_graph_in_view()
        self._update_search_hits(keep=True)
        self._run_after_display()

    def _run_after_display(self) -> None:
        after, self._after_display = self._after_display, None
        if after is not None:
            after()

    def _canvas_passes(self) -> list[Any]:
        """The backward passes in the ids drawn on the canvas (a hidden node -> its group)."""
        if self._canvas_passes_cache is None:
            owner = self._display.owner if self._display is not None else {}
            self._canvas_passes_cache = map_passes(self._passes(), owner)
        return self._canvas_passes_cache

    # --- search ---------------------------------------------------------------------------------

    def focus_search(self) -> None:
        """Ctrl+F: put the cursor in the search box."""
        self.search_box.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.search_box.selectAll()

    def find_node(self, text: str | None = None) -> None:
        """Search for ``text`` and jump to the first hit (no text: focus the search box)."""
        if text is None:
            self.focus_search()
            return
        self.search_box.setText(text)
        self.search_next()

    def search_hits(self) -> list[str]:
        """Ids on the canvas that match the search text (a group stands for its members)."""
        return list(self._search_hits)

    def _on_search_box_text_changed(self, text: str) -> None:
        self._search_index = -1
        self.inspector_panel.search_text = text
        self._update_search_hits()

    def _update_search_hits(self, keep: bool = False) -> None:
        text = self.search_box.text()
        current = (
            self._search_hits[self._search_index]
            if keep and 0 <= self._search_index < len(self._search_hits)
            else None
        )
        hits: list[str] = []
        if text.strip():
            display = self._display
            shown = display.graph if display is not None else self._raw_graph
            found = set(search(self._raw_graph, text, limit=max(1, len(self._raw_graph))))
            if display is not None:
                found = {display.shown(n) for n in found}
                if display.groups:
                    group_hits = search(shown, text, limit=len(shown))
                    found |= {n for n in group_hits if n in display.groups}
            hits = [n for n in shown.nodes if n in found]
        self._search_hits = hits
        self._search_index = hits.index(current) if current in hits else -1
        self._update_search_label()

    def _update_search_label(self) -> None:
        text = self.search_box.text().strip()
        n = len(self._search_hits)
        if not text:
            self.search_label.setText("")
        elif not n:
            self.search_label.setText("no match")
        elif self._search_index < 0:
            self.search_label.setText(f"{n} found")
        else:
            self.search_label.setText(f"{self._search_index + 1} of {n}")
        colour = theme.BACKWARD if text and not n else theme.MUTED_TEXT
        self.search_label.setStyleSheet(f"color: {colour}; padding: 0 6px;")

    def search_next(self, step: int = 1) -> None:
        """Enter in the search box: select the next hit on the canvas and inspect it."""
        hits = self._search_hits
        text = self.search_box.text().strip()
        if not hits:
            if text:
                self.set_status(f"No node matches '{text}'")
            return
        if self._search_index < 0:
            self._search_index = 0 if step > 0 else len(hits) - 1
        else:
            self._search_index = (self._search_index + step) % len(hits)
        target = hits[self._search_index]
        self._focus_node(target)
        self._update_search_label()
        groups = self._display.groups if self._display is not None else {}
        where = f"{self._search_index + 1} of {len(hits)}"
        if target in groups:
            self.set_status(
                f"'{text}' ({where}) is inside the collapsed {groups[target].get('label', target)}:"
                " double-click it to expand"
            )
        else:
            raw = self._raw_graph
            label = raw.nodes[target].get("label", target) if target in raw else target
            self.set_status(f"'{text}': {where} — {label}")

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if watched is getattr(self, "search_box", None) and event.type() == QEvent.Type.KeyPress:
            assert isinstance(event, QKeyEvent)
            key = event.key()
            shift = bool(event.modifiers() & Qt.KeyboardModifier.ShiftModifier)
            if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and shift:
                self.search_next(-1)
                return True
            if key == Qt.Key.Key_Escape:
                self.canvas.setFocus()
                return True
        return super().eventFilter(watched, event)

    def export_graph(self) -> None:
        path, _ = QFileDialog.getSaveFileName(
            self, "Export graph", "graph.png", "PNG image (*.png);;SVG (*.svg)"
        )
        if not path:
            return
        try:
            self.canvas.export_image(path)
        except (OSError, ValueError) as exc:
            show_error(self, "Export failed", str(exc))
            return
        self.set_status(f"Graph written to {path}")

    # --- kernel events ---------------------------------------------------------------------------

    def _on_client_ready(self, info: dict[str, Any]) -> None:
        model = self.device_combo.model()
        if isinstance(model, QStandardItemModel):
            item = model.item(1)
            available = bool(info.get("cuda_available"))
            item.setEnabled(available)
            reason = info.get("cuda_reason") or ""
            item.setToolTip(
                plain_tooltip("CUDA is available" if available else f"cuda unavailable: {reason}")
            )
            cuda_action = self.device_actions.actions()[1]
            cuda_action.setEnabled(available)
            cuda_action.setToolTip(item.toolTip())
            if not available and self._device == "cuda":
                self._device = "cpu"
                self._set_combo_device("cpu")
                self.set_status(f"cuda is unavailable here ({reason}): using cpu")
        if not self.client.replaying and self.state is None:
            self.set_status("Kernel ready")

    def _on_client_progressed(self, done: int, total: int) -> None:
        if total >= 2:
            self.progress.setRange(0, total)
            self.progress.setValue(done)
            self.progress.show()
        if self.client.replaying:
            self.set_status(f"Replaying {done} of {total} statements on a fresh kernel…")
        else:
            statements = self._statements()
            self._running_index = done
            if done < len(statements) and done < total:
                line = statements[done]["line"]
                self.set_status(f"Running line {line} ({done + 1} of {total})…")

    def _on_client_busy_changed(self, busy: bool) -> None:
        if busy:
            self._busy_since = time.monotonic()
            self._busy_timer.start()
            self._stop_timer.start()
        else:
            self._busy_since = None
            self._busy_timer.stop()
            self._stop_timer.stop()
            self.progress.hide()
        self._update_actions()
        while not busy and self._pending and not self.client.busy and not self._closing:
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
        statements = self._statements()
        index = self._running_index
        req = self.client.inflight
        if req is not None and req.progress_done is not None:
            index = req.progress_done
        where = "the script"
        if req is not None and req.cmd != "load" and index is not None and index < len(statements):
            where = f"line {statements[index]['line']}"
        self.set_status(f"Running {where} for {elapsed:.0f} s… Stop (Shift+F5) ends it")

    def _on_client_restarting(self, why: str) -> None:
        self.progress.hide()
        if why == "crashed":
            self.set_status("The kernel died: restarting it and replaying…")

    def _on_client_crashed(self, message: str) -> None:
        if self._closing:
            return
        self._restarted_note = message
        self.output_panel.add_note(
            f"{_first_line(message)}. Restarting it and replaying the statements that had run."
        )
        self.set_status("The kernel died: restarting it and replaying…")

    def _on_client_replayed(self, reply: dict[str, Any]) -> None:
        if self._closing or self.read_only:
            return
        crashed = self._restarted_note is not None
        self._restarted_note = None
        self.progress.hide()
        if not reply.get("ok"):
            self.set_status(f"Restarted, but the replay failed: {reply.get('message')}")
            self._sent_source = self.client.source
            self._update_actions()
            return
        state = reply["state"]
        self._sent_source = self.client.source
        self._unrecorded = 0
        self._timeline_at = None
        self.apply_state(state)
        self._on_client_replayed_step(state)
        n = int(state.get("cursor", 0))
        if crashed:
            self.set_status(f"Kernel restarted after a crash; replayed {n} statements")
        else:
            where = (
                f"line {self._stopped['line']}"
                if self._stopped and self._stopped.get("line")
                else "the statement"
            )
            self.set_status(
                f"Stopped {where}; replayed {n} statements on a fresh kernel:"
                " all state before it is kept"
            )

    def _on_client_gave_up(self, message: str) -> None:
        self._pending.clear()
        self.output_panel.add_note(
            "The kernel keeps crashing; press Reset (Ctrl+R) to start it again."
        )
        self.set_status("The kernel keeps crashing: press Reset (Ctrl+R) to start it again")
        self._update_actions()

    # --- action state -------------------------------------------------------------------------

    def _update_actions(self) -> None:
        read_only = self.read_only
        self.device_combo.setEnabled(not read_only)
        self.device_actions.setEnabled(not read_only)
        self.act_save.setEnabled(not read_only)
        self.act_save_as.setEnabled(not read_only)
        if read_only:
            # A snapshot has no statements: only the recorded backward passes replay.
            for act in (
                self.act_step,
                self.act_step_into,
                self.act_step_out,
                self.act_run_to_backward,
                self.act_run_to_end,
                self.act_run_to_cursor,
                self.act_step_back,
                self.act_reset,
                self.act_zero_grad,
                self.act_stop,
            ):
                act.setEnabled(False)
            self.act_bw_step.setEnabled(self._bw_available())
            self.act_bw_end.setEnabled(self._bw_available())
            return
        alive = not self.client.dead
        changed = self._text_changed() if hasattr(self, "editor") else False
        # a load of new text is under way (or presses wait their turn): the state that
        # decides what makes sense is not known yet, so let presses queue
        loading = self._pending or (
            self._sent_source is not None and self._sent_source != self.client.source
        )
        changed = bool(changed or loading)
        has_state = self.state is not None
        at_end = self._at_end()
        can_forward = alive and (
            changed or (has_state and (not at_end or self._failed_here() is not None))
        )
        pause = self._pause()
        paused = pause is not None and not changed
        can_forward = can_forward or (alive and paused)
        self.act_step.setEnabled(can_forward)
        self.act_step_into.setEnabled(can_forward)
        self.act_step_out.setEnabled(alive and paused)
        self.act_run_to_backward.setEnabled(can_forward)
        self.act_run_to_end.setEnabled(can_forward)
        self.act_run_to_cursor.setEnabled(
            alive and (changed or (has_state and bool(self._statements())))
        )
        results = (self.state or {}).get("results") or []
        self.act_step_back.setEnabled(
            alive and (changed or self._cursor() > 0 or bool(results) or self._shown_step() > 0)
        )
        self.act_reset.setEnabled(True)
        self.act_bw_step.setEnabled(self._bw_available())
        self.act_bw_end.setEnabled(self._bw_available())
        tensors = (self.state or {}).get("tensors") or {}
        has_grad = any(t.get("is_leaf") and t.get("grad") is not None for t in tensors.values())
        # a paused statement would be stopped by any other command: zero grad waits
        self.act_zero_grad.setEnabled(alive and has_grad and not paused)
        stoppable = (
            self.client.busy
            and not self._stop_timer.isActive()
            and (self.client.inflight is not None or self.client.replaying)
        )
        self.act_stop.setEnabled(bool(stoppable) or (paused and not self.client.busy))

    # --- editor text ----------------------------------------------------------------------------

    def _on_editor_text_changed(self) -> None:
        self._update_actions()
        if self.demo is not None and self.state is not None:
            # notes are only true for the demo's own text
            self._mark_editor()
            self._update_guide()

    def _set_text(self, text: str, path: Path | None, demo: Demo | None) -> None:
        if self.read_only:
            self._leave_read_only()
        self.path = path
        self.demo = demo
        self.editor.blockSignals(True)
        self.editor.setPlainText(text)
        self.editor.blockSignals(False)
        self.editor.document().setModified(False)
        self.editor.set_statement_marks(None)
        self.editor.clear_error()
        self.editor.set_notes(demo.notes if demo else {})
        self._bw_pass, self._bw_shown, self._bw_known = None, 0, 0
        self.canvas.clear_backward()
        self.output_panel.clear_notes()
        self.tensors_panel.reset_changes()
        self._stopped = None
        self.editor.set_breakpoints([])
        self.editor.set_paused_line(None)
        self.timeline.clear()
        self._timeline_at = None
        self._debug_path = []
        self.timeline_bar.set_steps([], -1)
        self._last_autosave_text = None
        self._update_title()
        self._update_editor_header()

    def _update_title(self) -> None:
        if not hasattr(self, "editor_header"):
            return
        name = self._display_name()
        mark = "*" if self.editor.document().isModified() else ""
        self.setWindowTitle(title_text(f"{name}{mark} — {APP_NAME}"))
        self._update_editor_header()

    def _update_editor_header(self) -> None:
        name = self._display_name()
        mark = " •" if self.editor.document().isModified() else ""
        self.editor_header.setText(f"{name}{mark}")
        self.editor_header.setToolTip(plain_tooltip(self.path) if self.path else "")

    def _display_name(self) -> str:
        if self.read_only:
            return f"{self.snapshot_name} (read-only)"
        if self.path:
            return self.path.name
        if self.demo:
            return f"demo: {self.demo.name}.py"
        return "untitled.py"

    # --- files -----------------------------------------------------------------------------------

    def maybe_save(self) -> bool:
        """True when it is fine to drop the editor's text (saved, discarded or unchanged)."""
        if not self.editor.document().isModified():
            return True
        answer = ask_unsaved_changes(self, self._display_name())
        if answer == QMessageBox.StandardButton.Save:
            return self.save()
        if answer == QMessageBox.StandardButton.Discard:
            return True
        return False

    def new_file(self) -> None:
        if not self.maybe_save():
            return
        self._remove_autosave()
        self._set_text("", None, None)
        self._load_into_kernel(None, status="New script")
        self.editor.setFocus()

    def load_demo(self, demo: Demo, ask: bool = True, run_to: int | None = None) -> None:
        """Put a demo's text in the editor and reset (or run its first ``run_to`` statements)."""
        if ask and not self.maybe_save():
            return
        self._remove_autosave()
        self._set_text(demo.source, None, demo)
        self._load_into_kernel(run_to, status=f"Demo '{demo.title}' loaded: press Step (F10)")
        self.set_status(
            f"Demo '{demo.title}' loaded: press Step (F10) to run it statement by statement"
        )

    def open_file_dialog(self) -> None:
        if not self.maybe_save():
            return
        where = self.path or self.snapshot_path
        start = str(where.parent) if where else str(Path.home())
        path, _ = QFileDialog.getOpenFileName(
            self,
            "Open script or snapshot",
            start,
            "Scripts and snapshots (*.py *.json);;Python scripts (*.py);;"
            "gradviz snapshots (*.gradviz.json *.json);;All files (*)",
        )
        if path:
            self.open_path(Path(path), ask=False)

    def open_path(self, path: Path, ask: bool = True) -> bool:
        if ask and not self.maybe_save():
            return False
        try:
            text = path.read_bytes().decode("utf-8", errors="replace")
        except OSError as exc:
            self.set_status(f"Cannot open {path}: {exc}")
            self._forget_recent(path)
            return False
        if path.name.endswith(".json"):
            try:
                data = json.loads(text)
            except ValueError as exc:
                return self._refuse_file(
                    path, f"{path.name} is not a gradviz snapshot (not JSON: {exc})"
                )
            if isinstance(data, dict) and "format" in data:
                # A snapshot file: checked against the format's schema before anything reads it.
                try:
                    parse_snapshot(data, path.name)
                except SnapshotError as exc:
                    return self._refuse_file(path, str(exc))
            script = script_from_snapshot(data)
            if script is None:
                # No statements (gradviz.snapshot() / gradviz.show()): a read-only view.
                try:
                    parse_snapshot(data, path.name)
                except SnapshotError as exc:
                    return self._refuse_file(path, str(exc))
                self._remove_autosave()
                self.open_snapshot(data, path.name, path.resolve())
                self._add_recent(path.resolve())
                return True
            self._remove_autosave()
            self._set_text(script, None, None)
            self.editor.document().setModified(True)
            self._update_title()
            self._load_into_kernel(None)
            self.set_status(f"Opened the statements saved in {path.name}: step to re-run them")
            return True
        self._remove_autosave()
        self._set_text(text, path.resolve(), None)
        self._add_recent(path.resolve())
        self._load_into_kernel(None, status=f"Opened {path.name}")
        self.set_status(f"Opened {path}: press Step (F10) to run it")
        return True

    def _refuse_file(self, path: Path, message: str) -> bool:
        """Say why ``path`` cannot be opened; what the window shows stays as it was."""
        self.set_status(message)
        show_error(self, "Cannot open file", f"{message}\n\nNothing was changed.")
        return False

    # --- read-only snapshots ------------------------------------------------------------------

    def open_snapshot(self, data: dict[str, Any], name: str, path: Path | None = None) -> None:
        """Show a snapshot with no statements read-only: all panels, F7 replays its passes."""
        state = snapshot_state(data)
        self._pending.clear()
        self.read_only = True
        self.snapshot_name = name
        self.snapshot_path = path
        self.path = None
        self.demo = None
        self._stopped = None
        self._bw_pass, self._bw_shown, self._bw_known = None, 0, 0
        self.timeline.clear()
        self._timeline_at = None
        self.timeline_bar.set_steps([], -1)
        self.editor.set_paused_line(None)
        self._collapsed = set()
        self._display = None
        self.layout_runner.invalidate()
        self.canvas.clear()
        self.output_panel.clear_notes()
        self.tensors_panel.reset_changes()
        nodes = len(state["graph"]["nodes"])
        passes = len(state["backward_passes"])
        self.editor.blockSignals(True)
        self.editor.setPlainText(
            f"# Read-only snapshot: {name}\n"
            f"# saved by gradviz (source: {state.get('source', 'api')}) with no script to step.\n"
            f"# {nodes} nodes · {passes} backward pass{'es' if passes != 1 else ''}"
            f" · device {state['device']}\n"
            "#\n"
            "# F7 / Shift+F7 replay the recorded backward pass on the graph.\n"
            "# Collapse modules in the Modules panel; Ctrl+F finds a node.\n"
            "# Open a script (Ctrl+O) or a demo to step forward again.\n"
        )
        self.editor.blockSignals(False)
        self.editor.setReadOnly(True)
        self.editor.document().setModified(False)
        sizes = self.splitter.sizes()
        if len(sizes) == 2 and sum(sizes) > 0 and sizes[0] > 0.3 * sum(sizes):
            # Nothing to edit: the graph gets the room.
            total = sum(sizes)
            self.splitter.setSizes([int(total * 0.24), total - int(total * 0.24)])
        self.editor.set_statement_marks(None)
        self.editor.clear_error()
        self.editor.set_notes({})
        self.apply_state(state)
        self.output_panel.add_note(
            f"Opened the snapshot {name}: {nodes} nodes, {passes} backward "
            f"pass{'es' if passes != 1 else ''}, device {state['device']} (read-only)"
        )
        self._update_title()
        if self._bw_available():
            self.set_status(f"Read-only snapshot {name}: press F7 to replay its backward pass")
        else:
            self.set_status(f"Read-only snapshot {name}")
        if self.modules_panel.modules():
            self.modules_dock.raise_()

    def _leave_read_only(self) -> None:
        self.read_only = False
        self.snapshot_name = None
        self.snapshot_path = None
        self.editor.setReadOnly(False)
        self._collapsed = set()
        self._display = None
        self.layout_runner.invalidate()
        self.layout_label.hide()
        self.state = None
        self._set_raw_graph({})
        self.canvas.clear()
        for panel in (
            self.tensors_panel,
            self.accumulation_panel,
            self.memory_panel,
            self.output_panel,
            self.inspector_panel,
        ):
            panel.set_state({})
        self.inspector_panel.set_groups({})
        self.modules_panel.set_modules({}, ())
        self._update_search_hits()

    def save(self) -> bool:
        if self.path is None:
            return self.save_as()
        return self._write(self.path)

    def save_as(self, path: str | Path | None = None) -> bool:
        if path is None:
            start = (
                str(self.path)
                if self.path
                else str(Path.home() / (f"{self.demo.name}.py" if self.demo else "script.py"))
            )
            chosen, _ = QFileDialog.getSaveFileName(
                self, "Save script", start, "Python scripts (*.py)"
            )
            if not chosen:
                return False
            path = chosen
        return self._write(Path(path))

    def _write(self, path: Path) -> bool:
        try:
            path.write_text(self._source(), encoding="utf-8")
        except OSError as exc:
            show_error(self, "Save failed", f"Could not write {path}:\n{exc}")
            return False
        self.path = path.resolve()
        self.editor.document().setModified(False)
        self._remove_autosave()
        self._add_recent(self.path)
        self._update_title()
        self.set_status(f"Saved {path}")
        return True

    def _recent(self) -> list[str]:
        value = self.settings.value("file/recent", [])
        if value is None:
            return []
        if isinstance(value, str):
            return [value] if value else []
        return [str(v) for v in value]

    def _add_recent(self, path: Path) -> None:
        items = [p for p in self._recent() if p != str(path)]
        items.insert(0, str(path))
        self.settings.setValue("file/recent", items[:MAX_RECENT])
        self._update_recent_menu()

    def _forget_recent(self, path: Path) -> None:
        self.settings.setValue("file/recent", [p for p in self._recent() if p != str(path)])
        self._update_recent_menu()

    def _update_recent_menu(self) -> None:
        menu = self.recent_menu
        menu.clear()
        recent = self._recent()
        for p in recent:
            act = add_menu_action(menu, Path(p).name, tooltip=p)
            act.setStatusTip(p)
            act.triggered.connect(lambda _=False, path=p: self.open_path(Path(path)))
        if not recent:
            empty = menu.addAction("(none yet)")
            empty.setEnabled(False)
        menu.setToolTipsVisible(True)

    # --- autosave ------------------------------------------------------------------------------

    @property
    def autosave_path(self) -> Path:
        """This window's autosave (each window has its own, see :mod:`gradviz.ui.autosave`)."""
        return self.autosave.text_path

    def _on_autosave_timer(self) -> None:
        if not self.editor.document().isModified():
            return
        text = self._source()
        if text == self._last_autosave_text:
            return
        meta = {
            "file": str(self.path) if self.path else None,
            "demo": self.demo.name if self.demo else None,
        }
        try:
            self.autosave.write(text, meta)
        except OSError:
            return
        self._last_autosave_text = text

    def autosave_now(self) -> None:
        self._on_autosave_timer()

    def _remove_autosave(self) -> None:
        """Forget this window's autosave; other windows' stay as they are."""
        self.autosave.remove()
        self._last_autosave_text = None

    def _offer_autosave(self) -> bool:
        """Offer the text of a window that crashed. True when it was restored.

        Only autosaves no running window holds are offered (a live window keeps its
        autosave locked); declined ones are deleted, and once one is restored the
        rest wait for the next window.
        """
        orphans = find_orphans(self.data_dir)
        restored = False
        for orphan in orphans:
            if restored:
                orphan.release()
                continue
            try:
                text, meta = orphan.read()
            except OSError:
                orphan.release()
                continue
            file = Path(meta["file"]) if isinstance(meta.get("file"), str) else None
            saved_at = float(meta["saved_at"])
            if file and file.is_file() and (
                file.stat().st_mtime >= saved_at
                or file.read_text(encoding="utf-8", errors="replace") == text
            ):
                orphan.discard()  # the file itself is newer: nothing was lost
                continue
            when = time.strftime("%Y-%m-%d %H:%M", time.localtime(saved_at))
            name = file.name if file else "an untitled script"
            if not ask_restore_autosave(self, name, when):
                orphan.discard()
                continue
            demo_name = meta.get("demo")
            demo = self._find_demo(demo_name) if isinstance(demo_name, str) else None
            self._set_text(text, file if file and file.is_file() else None, demo)
            self.editor.document().setModified(True)
            self._update_title()
            self.autosave_now()  # the text lives in this window's autosave before the old one goes
            orphan.discard()
            self._load_into_kernel(None, status="Restored the autosaved text")
            self.set_status("Restored the text autosaved before gradviz stopped (not saved yet)")
            restored = True
        return restored

    # --- help, layout ---------------------------------------------------------------------

    def show_shortcuts(self) -> None:
        dialog = QDialog(self)
        dialog.setWindowTitle("Keyboard shortcuts")
        table = QTableWidget(len(SHORTCUTS), 2)
        table.setHorizontalHeaderLabels(["Action", "Keys"])
        table.verticalHeader().setVisible(False)
        table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        for row, (what, keys) in enumerate(SHORTCUTS):
            table.setItem(row, 0, QTableWidgetItem(what))
            table.setItem(row, 1, QTableWidgetItem(keys))
        table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        table.resizeColumnToContents(1)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(dialog.reject)
        layout = QVBoxLayout(dialog)
        layout.addWidget(table)
        layout.addWidget(buttons)
        dialog.resize(560, 420)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.shortcuts_dialog = dialog
        dialog.open()

    def show_about(self) -> None:
        QMessageBox.about(
            self,
            "About gradviz",
            "<b>gradviz</b> — step through PyTorch autograd.<br><br>"
            "Type tensor code, step forward statement by statement, then step the backward "
            "pass node by node and watch gradients flow and accumulate in the real autograd "
            "graph. Scripts run in a separate, sandboxed kernel process.",
        )

    def reset_layout(self) -> None:
        self.restoreState(self._default_state, SETTINGS_VERSION)
        for dock in self.docks:
            dock.show()
        self._apply_default_sizes()

    # --- status --------------------------------------------------------------------------------

    def set_status(self, text: str) -> None:
        self.status_label.setText(text)

    def status_text(self) -> str:
        return self.status_label.text()

    # --- closing -------------------------------------------------------------------------------

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt override
        if not self._closing and not self.maybe_save():
            event.ignore()
            return
        self._closing = True
        self.layout_runner.shutdown()
        self._autosave_timer.stop()
        self._busy_timer.stop()
        self._save_window()
        self.autosave.close()
        self.client.shutdown()
        event.accept()


# --- small helpers --------------------------------------------------------------------------------


def _h(text: Any) -> str:
    """Escape ``text`` for the guide's rich-text labels (see :mod:`gradviz.ui.text`)."""
    return esc(text)


def _tag(text: str, colour: str) -> str:
    return (
        f"<span style='background:{colour}; color:#ffffff; font-weight:600;'>"
        f"&nbsp;{_h(text)}&nbsp;</span>&nbsp; "
    )


def _first_line(text: str) -> str:
    text = str(text or "").strip()
    first = text.splitlines()[0] if text else ""
    return first if len(first) <= 120 else first[:117] + "…"


def _note_for(notes: dict[int, str], statement: dict[str, Any] | None) -> str | None:
    if not statement or not notes:
        return None
    for line in range(statement["line"], statement["end_line"] + 1):
        if line in notes:
            return notes[line]
    return None


def _s(n: int) -> str:
    return "" if n == 1 else "s"


def _statements_before_backward(source: str) -> int | None:
    """How many top-level statements come before the first one that calls backward()."""
    try:
        body = ast.parse(source).body
    except SyntaxError:
        return None
    lines = source.splitlines()
    for index, stmt in enumerate(body):
        text = "\n".join(lines[stmt.lineno - 1 : (stmt.end_lineno or stmt.lineno)])
        if ".backward(" in text:
            return index
    return None


def _node_titles(bpass: dict[str, Any], graph_nodes: list[dict[str, Any]]) -> dict[str, str]:
    """Node id -> what the guide calls it: its op and the script's names for it
    (``AccumulateGrad (net.fc1.weight)``), never an internal id."""
    titles: dict[str, str] = {}
    for n in graph_nodes:
        label = str(n.get("label", ""))
        names = [str(v) for v in n.get("vars") or [] if str(v) != label]
        titles[str(n["id"])] = f"{label} ({', '.join(names)})" if names else label
    names_of = bpass.get("names") or {}
    for node_id, label in zip(bpass.get("nodes") or [], bpass.get("labels") or []):
        own = [str(v) for v in names_of.get(node_id) or []]
        titles.setdefault(str(node_id), f"{label} ({', '.join(own)})" if own else str(label))
    return titles


def _top_level_backward(source: str) -> bool:
    """Whether a top-level statement's text calls backward() itself (the core's rule)."""
    try:
        body = ast.parse(source).body
    except SyntaxError:
        return False
    return bool(body) and calls_backward(body[0])


def _std_key(key: QKeySequence.StandardKey) -> str:
    return QKeySequence(key).toString()


def _to_bool(value: Any) -> bool:
    if isinstance(value, str):
        return value.lower() in ("1", "true", "yes")
    return bool(value)
