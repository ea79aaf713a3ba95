"""Where the window's widgets sit: editor and canvas in the middle, panels docked around.

:func:`build_central` makes the editor (with its file header) beside the canvas
(under the guide and debugger strips, over the timeline); :func:`build_docks`
docks the panels; :func:`build_status` makes the status bar;
:func:`apply_default_sizes` gives the first screen its proportions, keeping the
canvas the largest area at every window size. Widgets take the system palette
and font: nothing here sets colours or font sizes.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import (
    QDockWidget,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from .canvas import GraphCanvas
from .debug_strip import DebugStrip
from .editor import CodeEditor
from .guide_strip import GuideStrip
from .i18n import translate
from .layout_firewall import LayoutFirewall
from .panels import (
    AccumulationPanel,
    InspectorPanel,
    MemoryPanel,
    ModulesPanel,
    OutputPanel,
    TensorsPanel,
)
from .panels._common import StateWhenShown
from .passes_panel import PassesPanel
from .text import ElidedLabel, plain_label
from .timeline import TimelineBar
from .trust_banner import TrustBanner

__all__ = [
    "SETTINGS_VERSION",
    "apply_default_sizes",
    "build_central",
    "build_docks",
    "build_status",
]

#: the version of the saved dock layout (a layout saved by another version is not restored)
SETTINGS_VERSION = 1


def _muted(label: QLabel) -> QLabel:
    label.setForegroundRole(QPalette.ColorRole.PlaceholderText)
    return label


def build_central(w: Any) -> None:
    """``w.editor``, ``w.canvas``, ``w.guide`` (+ ``guide_title``/``guide_note``),
    ``w.debug_strip``, ``w.timeline_bar``, ``w.editor_header`` and ``w.splitter``."""
    w.editor = CodeEditor()
    w.editor.setObjectName("editor")
    w.editor.setAccessibleName(translate("Window", "Script editor"))
    w.canvas = GraphCanvas()
    w.canvas.setObjectName("canvas")
    w.canvas.setAccessibleName(translate("Window", "Autograd graph"))
    w.guide = GuideStrip()
    w.guide_title, w.guide_note = w.guide.title, w.guide.note
    w.debug_strip = DebugStrip()
    w.debug_strip.setAccessibleName(translate("Window", "Debugger position"))
    w.timeline_bar = TimelineBar()
    w.timeline_bar.setAccessibleName(translate("Window", "Timeline of steps"))

    canvas_box = QWidget()
    canvas_layout = QVBoxLayout(canvas_box)
    canvas_layout.setContentsMargins(0, 0, 0, 0)
    canvas_layout.setSpacing(0)
    # its note changes every step: only a change of its height lays the window out
    canvas_layout.addWidget(LayoutFirewall(w.guide))
    canvas_layout.addWidget(w.debug_strip)
    canvas_layout.addWidget(w.canvas, 1)
    canvas_layout.addWidget(w.timeline_bar)

    editor_box = QWidget()
    editor_layout = QVBoxLayout(editor_box)
    editor_layout.setContentsMargins(0, 0, 0, 0)
    editor_layout.setSpacing(0)
    w.editor_header = _muted(plain_label(QLabel()))  # a file or snapshot name
    w.editor_header.setObjectName("editorHeader")
    w.editor_header.setAccessibleName(translate("Window", "File name"))
    w.editor_header.setContentsMargins(10, 5, 10, 5)
    font = w.editor_header.font()
    font.setBold(True)
    w.editor_header.setFont(font)
    editor_layout.addWidget(w.editor_header)
    w.trust_banner = TrustBanner()
    w.trust_banner.trust_requested.connect(w.on_trust_requested)
    w.trust_banner.kept_restricted.connect(w.keep_restricted)
    editor_layout.addWidget(w.trust_banner)
    editor_layout.addWidget(w.editor, 1)

    w.splitter = QSplitter(Qt.Orientation.Horizontal)
    w.splitter.setObjectName("mainSplitter")
    w.splitter.addWidget(editor_box)
    w.splitter.addWidget(canvas_box)
    w.splitter.setStretchFactor(0, 0)
    w.splitter.setStretchFactor(1, 1)
    w.splitter.setSizes([440, 560])
    w.splitter.setChildrenCollapsible(False)
    w.setCentralWidget(w.splitter)


def _dock(w: Any, title: str, name: str, widget: QWidget, area: Qt.DockWidgetArea) -> QDockWidget:
    dock = QDockWidget(title, w)
    dock.setObjectName(name)
    dock.setAccessibleName(title)
    dock.setWidget(widget)
    widget.setAccessibleName(widget.accessibleName() or title)
    dock.setFeatures(
        QDockWidget.DockWidgetFeature.DockWidgetMovable
        | QDockWidget.DockWidgetFeature.DockWidgetClosable
        | QDockWidget.DockWidgetFeature.DockWidgetFloatable
    )
    w.addDockWidget(area, dock)
    if isinstance(widget, StateWhenShown):
        # a panel that waits while its tab is behind another draws when it comes forward
        def came_forward(visible: bool, panel: StateWhenShown = widget) -> None:
            if visible:
                panel.shown_now()

        dock.visibilityChanged.connect(came_forward)
    return dock


def build_docks(w: Any) -> None:
    """The panels (``w.tensors_panel`` …) and their docks (``w.tensors_dock`` …, ``w.docks``)."""
    w.setCorner(Qt.Corner.BottomRightCorner, Qt.DockWidgetArea.RightDockWidgetArea)
    w.setCorner(Qt.Corner.TopRightCorner, Qt.DockWidgetArea.RightDockWidgetArea)
    w.tensors_panel = TensorsPanel()
    w.accumulation_panel = AccumulationPanel()
    w.memory_panel = MemoryPanel()
    w.inspector_panel = InspectorPanel()
    w.output_panel = OutputPanel()
    w.modules_panel = ModulesPanel()
    w.passes_panel = PassesPanel()
    right = Qt.DockWidgetArea.RightDockWidgetArea
    bottom = Qt.DockWidgetArea.BottomDockWidgetArea
    w.inspector_dock = _dock(w, translate("Window", "Inspector"), "inspectorDock", w.inspector_panel, right)
    w.accumulation_dock = _dock(
        w, translate("Window", "Gradient accumulation"), "accumulationDock", w.accumulation_panel, right
    )
    w.tensors_dock = _dock(w, translate("Window", "Tensors"), "tensorsDock", w.tensors_panel, bottom)
    w.memory_dock = _dock(w, translate("Window", "Memory"), "memoryDock", w.memory_panel, bottom)
    w.output_dock = _dock(w, translate("Window", "Output"), "outputDock", w.output_panel, bottom)
    w.modules_dock = _dock(w, translate("Window", "Modules"), "modulesDock", w.modules_panel, right)
    w.passes_dock = _dock(w, translate("Window", "Backward passes"), "passesDock", w.passes_panel, right)
    w.splitDockWidget(w.tensors_dock, w.output_dock, Qt.Orientation.Horizontal)
    w.tabifyDockWidget(w.tensors_dock, w.memory_dock)
    w.tabifyDockWidget(w.accumulation_dock, w.modules_dock)
    w.tabifyDockWidget(w.accumulation_dock, w.passes_dock)
    w.tensors_dock.raise_()
    w.accumulation_dock.raise_()
    w.docks = [
        w.inspector_dock,
        w.accumulation_dock,
        w.tensors_dock,
        w.memory_dock,
        w.output_dock,
        w.modules_dock,
        w.passes_dock,
    ]
    w.default_dock_state = w.saveState(SETTINGS_VERSION)


def build_status(w: Any) -> None:
    """``w.status_label`` (what just happened), ``w.progress``, ``w.layout_label``,
    ``w.position_label`` and ``w.device_label``."""
    bar = w.statusBar()
    # a long status (an error's message) ends in "…" at a word, whole in its tooltip
    w.status_label = ElidedLabel(translate("Window", "Starting the kernel…"))
    w.status_label.setObjectName("kernelStatus")
    w.status_label.setAccessibleName(translate("Window", "Status"))
    w.progress = QProgressBar()
    w.progress.setAccessibleName(translate("Window", "Progress"))
    w.progress.setMaximumWidth(180)
    w.progress.setMaximumHeight(14)
    w.progress.setTextVisible(False)
    w.progress.hide()
    w.position_label = _muted(plain_label(QLabel()))
    w.position_label.setAccessibleName(translate("Window", "Position in the script"))
    w.device_label = _muted(plain_label(QLabel()))  # a snapshot names its device
    w.device_label.setAccessibleName(translate("Window", "Device"))
    w.layout_label = plain_label(QLabel())
    w.layout_label.setObjectName("layoutStatus")
    w.layout_label.setAccessibleName(translate("Window", "Layout progress"))
    w.layout_label.hide()
    for label in (w.position_label, w.device_label, w.layout_label):
        label.setContentsMargins(8, 0, 8, 0)
    # one row behind a layout firewall: the status and position texts change every step,
    # and only a change of the row's height (or a text wider than the window) lays the
    # window out again
    row = QWidget()
    row_layout = QHBoxLayout(row)
    row_layout.setContentsMargins(0, 0, 0, 0)
    row_layout.setSpacing(0)
    row_layout.addWidget(w.status_label, 1)
    for widget in (w.layout_label, w.progress, w.position_label, w.device_label):
        row_layout.addWidget(widget)
    bar.addWidget(LayoutFirewall(row), 1)


def apply_default_sizes(w: Any) -> None:
    """Proportions for the first screen (a restored layout keeps the user's own).

    The canvas gets the most room: on a small screen (1024x700) the side and bottom
    panels take a smaller share, so the graph stays readable.
    """
    width = max(w.width(), 800)
    small = width < 1200 or w.height() < 800
    right = int(width * (0.27 if small else 0.26))
    w.resizeDocks([w.inspector_dock], [right], Qt.Orientation.Horizontal)
    w.resizeDocks([w.inspector_dock, w.accumulation_dock], [55, 45], Qt.Orientation.Vertical)
    bottom = int(w.height() * (0.27 if small else 0.28))
    w.resizeDocks([w.tensors_dock], [bottom], Qt.Orientation.Vertical)
    centre = width - right
    tensors = 0.6 if small else 0.66  # Output stays wide enough to read a warning
    w.resizeDocks(
        [w.tensors_dock, w.output_dock],
        [int(centre * tensors), int(centre * (1 - tensors))],
        Qt.Orientation.Horizontal,
    )
    editor = 0.38 if small else 0.44
    w.splitter.setSizes([int(centre * editor), int(centre * (1 - editor))])
