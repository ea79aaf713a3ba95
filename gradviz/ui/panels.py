"""Side panels: tensors, .grad accumulation, memory, inspector, output, modules.

Every panel is handed the kernel's state, as a typed :class:`~gradviz.app.models.AppState`
or as the wire dict (``AppState.of`` decodes it once; see
``docs/snapshot-example.json``), and renders it. No autograd logic lives here:
the numbers come from the kernel; the panels only format (through
:mod:`gradviz.core.fmt`, the one formatter), sort and colour.

The panels are read at 1024x700 as well as at 1400x900: tables fit their
columns to what they show (the numbers a learner reads first get their room,
long values are elided with the whole value in the tooltip), byte counts use the
short form in cells and the full one in tooltips, and every widget has an
accessible name.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFont,
    QFontMetrics,
    QPainter,
    QPainterPath,
    QPaintEvent,
    QPalette,
    QPen,
    QResizeEvent,
    QShowEvent,
    QTextOption,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ..app.models import AppState, PassInfo, StepInfo, TensorInfo
from ..core.chain_rule import chain_rule, scalar_of
from ..core.fmt import fmt_bytes, fmt_number, fmt_shape, fmt_value, short_bytes
from ..i18n import QT_TRANSLATE_NOOP
from . import theme
from .i18n import translate
from .text import SafeTextBrowser, esc, plain_tooltip

__all__ = [
    "AccumulationPanel",
    "InspectorPanel",
    "MemoryPanel",
    "MiniPlot",
    "ModulesPanel",
    "OutputEntry",
    "OutputPanel",
    "Series",
    "TensorsPanel",
    # the one formatter, re-exported for the modules that import it from here
    "chain_rule",
    "fmt_bytes",
    "fmt_number",
    "fmt_shape",
    "fmt_value",
    "leaf_title",
    "nice_ticks",
    "norm_of",
    "scalar_of",
    "short_bytes",
    "statement_line",
    "statement_source",
]

#: row tints are translucent, so they read over a light and a dark base alike
CHANGED = "#6effd43b"
#: the name of a local variable of the paused frame
LOCAL_TEXT = "#3b82d6"
ZERO_ROW = "#404dabf7"
TOTAL_ROW = "#28808080"
ERROR_TEXT = theme.BACKWARD
WARNING_TEXT = "#c45f00"

#: a cell's text needs this much more than its advance: the item style's padding
#: (4 px a side), the view's text margins (3 px a side) and 2 px of air
CELL_PAD = 16

# --- reading the state ----------------------------------------------------------------------


def norm_of(value: Any) -> float | None:
    """The Euclidean norm of nested numeric lists (None for a summary string)."""
    total = 0.0
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, (list, tuple)):
            stack.extend(v)
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            total += float(v) * float(v)
        else:
            return None
    return math.sqrt(total)


def statement_line(state: AppState | Mapping[str, Any] | None, index: int | None) -> int | None:
    return AppState.of(state).statement_line(index)


def statement_source(state: AppState | Mapping[str, Any] | None, index: int | None) -> str:
    return AppState.of(state).statement_source(index)


def leaf_title(names: Sequence[str], label: str = "AccumulateGrad") -> str:
    """How an AccumulateGrad reads everywhere: ``x.grad (AccumulateGrad)``, by its leaf."""
    if not names:
        return label
    grads = translate("Panels", " and ").join(f"{n}.grad" for n in names)
    return f"{grads} ({label})"


def _item(text: str, tooltip: str | None = None, *, align_right: bool = False) -> QTableWidgetItem:
    item = QTableWidgetItem(text)
    item.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable)
    if tooltip:
        item.setToolTip(plain_tooltip(tooltip))
    if align_right:
        item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    return item


def _table(headers: Sequence[str], name: str = "") -> QTableWidget:
    table = QTableWidget(0, len(headers))
    table.setHorizontalHeaderLabels([translate("Panels", h) for h in headers])
    if name:
        table.setAccessibleName(name)
    table.verticalHeader().setVisible(False)
    table.verticalHeader().setDefaultSectionSize(22)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.setAlternatingRowColors(False)
    table.setShowGrid(False)
    table.setWordWrap(False)
    table.setTextElideMode(Qt.TextElideMode.ElideRight)
    table.setHorizontalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
    table.horizontalHeader().setHighlightSections(False)
    table.horizontalHeader().setDefaultAlignment(
        Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
    )
    table.horizontalHeader().setMinimumSectionSize(28)
    table.setStyleSheet(
        "QTableWidget { background: palette(base); border: none; gridline-color: palette(midlight); }"
        "QTableWidget::item { padding: 0 4px; border-bottom: 1px solid palette(alternate-base); }"
        "QTableWidget::item:selected { background: palette(highlight);"
        " color: palette(highlighted-text); }"
        f"QHeaderView::section {{ background: palette(window); color: {theme.MUTED_TEXT};"
        " border: none; border-bottom: 1px solid palette(midlight); padding: 3px 4px;"
        " font-weight: 600; }"
    )
    return table


def _hint(text: str, name: str = "") -> QLabel:
    label = QLabel(text)
    label.setWordWrap(True)
    label.setStyleSheet(f"color: {theme.MUTED_TEXT}; padding: 4px 6px;")
    label.setAccessibleName(name or translate("Panels", "Hint"))
    return label


def text_width(item: QTableWidgetItem | None) -> int:
    """The advance of an item's text in its own font (what the view needs to show it whole)."""
    if item is None:
        return 0
    return QFontMetrics(item.font()).horizontalAdvance(item.text())


#: a column's width is measured on its longest few texts only (shaping text is slow:
#: measuring every cell of a 300-parameter model took half a second per step)
MEASURED = 6


def content_width(table: QTableWidget, col: int) -> int:
    """The width column ``col`` needs to show its header and every cell unelided (the
    longest texts, by characters, are the ones measured)."""
    width = table.horizontalHeader().sectionSizeHint(col)
    items = [table.item(row, col) for row in range(table.rowCount())]
    longest = sorted(
        (i for i in items if i is not None), key=lambda i: len(i.text()), reverse=True
    )
    for item in longest[:MEASURED]:
        width = max(width, text_width(item) + CELL_PAD)
    return width


def share(needs: Sequence[int], room: int, floor: int) -> list[int]:
    """Split ``room`` between columns that need ``needs``: all get theirs when they fit;
    else the narrow ones get theirs and the wide ones split the rest (never under ``floor``)."""
    widths = list(needs)
    if sum(needs) <= room:
        return widths
    left, count = room, len(needs)
    for idx in sorted(range(len(needs)), key=needs.__getitem__):
        widths[idx] = max(floor, min(needs[idx], left // max(1, count)))
        left -= widths[idx]
        count -= 1
    return widths


class _FittedTable:
    """Columns fitted to the viewport by ``fit`` until the user drags one (then theirs
    stay until the rows change)."""

    def __init__(self, table: QTableWidget, fit: Callable[[], None]):
        self.table = table
        self._fit = fit
        self._fitting = False
        self.user_sized = False
        table.horizontalHeader().sectionResized.connect(self._on_section_resized)

    def refit(self, *, rows_changed: bool = False) -> None:
        if rows_changed:
            self.user_sized = False
        if self.user_sized or self.table.rowCount() == 0:
            return
        self._fitting = True
        try:
            self._fit()
        finally:
            self._fitting = False

    def _on_section_resized(self, index: int, old: int, new: int) -> None:
        if not self._fitting and self.table.isVisible():
            self.user_sized = True


# --- tensors ------------------------------------------------------------------------------

#: what the learner reads first (value, grad, shape) comes first; the less used after
TENSOR_COLUMNS = (
    "name",
    "value",
    "grad",
    "shape",
    "grad_fn",
    "requires_grad",
    "is_leaf",
    "retains_grad",
    "dtype",
    "device",
    "version",
    "storage",
)

#: the column headers a learner reads in their language (PyTorch's own attribute
#: names, requires_grad, is_leaf, grad_fn, dtype…, stay as PyTorch spells them)
_HEADER_WORDS = (
    QT_TRANSLATE_NOOP("Panels", "name"),
    QT_TRANSLATE_NOOP("Panels", "value"),
    QT_TRANSLATE_NOOP("Panels", "shape"),
    QT_TRANSLATE_NOOP("Panels", "version"),
    QT_TRANSLATE_NOOP("Panels", "storage"),
    QT_TRANSLATE_NOOP("Panels", "leaf"),
    QT_TRANSLATE_NOOP("Panels", "after"),
    QT_TRANSLATE_NOOP("Panels", "line"),
    QT_TRANSLATE_NOOP("Panels", "module"),
    QT_TRANSLATE_NOOP("Panels", "nodes"),
)

#: widest a fitted column gets before its text is elided (the tooltip has it whole)
TENSOR_CAPS = {"name": 220, "shape": 110, "grad_fn": 170, "storage": 200}
OTHER_CAP = 150


class TensorsPanel(QWidget):
    """One row per script variable holding a tensor; leaves first; changes in yellow."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setAccessibleName(translate("Panels", "Tensors"))
        self.table = _table(TENSOR_COLUMNS, translate("Panels", "Tensors table"))
        self.table.setObjectName("tensorsTable")
        self.table.setAccessibleDescription(
            translate(
                "Panels",
                "One row per variable holding a tensor: value, .grad, shape, grad_fn and flags",
            )
        )
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        self._fitter = _FittedTable(self.table, self._fit_columns)
        self._previous: Mapping[str, TensorInfo] = {}
        self._rows: dict[str, int] = {}
        self._changed: set[tuple[str, str]] = set()
        self.hint = _hint(
            translate("Panels", "No tensors yet: step (F10) through a script to create some."),
            translate("Panels", "Tensors hint"),
        )
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.hint)
        layout.addWidget(self.table)

    def set_state(self, state: AppState | Mapping[str, Any] | None) -> None:
        st = AppState.of(state)
        tensors = st.tensors
        order = list(tensors)
        position = {n: i for i, n in enumerate(order)}
        # a paused statement's frame: its locals (``Net.forward.x``) come first, marked
        frame_locals = list(st.frame_locals)
        self._locals = {
            n for n in order if any(n == f or n.startswith(f + ".") for f in frame_locals)
        }
        # the frame's own names (x, h) before paths through them (self.fc1.weight)
        names = sorted(
            order,
            key=lambda n: (
                n not in self._locals,
                n.count(".") if n in self._locals else 0,
                not tensors[n].is_leaf,
                position[n],
            ),
        )
        groups: dict[str, list[str]] = {}
        for name in names:
            group = tensors[name].storage
            if group:
                groups.setdefault(group, []).append(name)
        self._changed = set()
        self._rows = {}
        self.table.setUpdatesEnabled(False)
        self.table.setRowCount(len(names))
        for row, name in enumerate(names):
            info = tensors[name]
            before = self._previous.get(name)
            self._rows[name] = row
            texts = self._texts(info, groups)
            for col, key in enumerate(TENSOR_COLUMNS):
                text, tip = texts[key]
                item = _item(text, tip or (text if len(text) > 30 else None))
                if key == "name":
                    font = item.font()
                    font.setBold(True)
                    item.setFont(font)
                    if name in self._locals:
                        # the table's style sheet paints cell backgrounds itself: mark by text
                        frame = next(f for f in frame_locals if name == f or name.startswith(f + "."))
                        item.setForeground(QColor(LOCAL_TEXT))
                        font.setItalic(True)
                        item.setFont(font)
                        item.setToolTip(plain_tooltip(
                            translate(
                                "Panels",
                                "{name}: a local variable of the paused frame ({frame}), "
                                "listed before the script's globals",
                            ).format(name=name, frame=frame.rsplit(".", 1)[0])
                        ))  # fmt: skip
                changed = before is None or self._cell_changed(key, before, info)
                if changed and self._has_previous:
                    item.setBackground(QColor(CHANGED))
                    self._changed.add((name, key))
                if key == "storage" and len(groups.get(info.storage or "", [])) > 1:
                    item.setForeground(QColor(theme.storage_colour(info.storage or "")))
                    font = item.font()
                    font.setBold(True)
                    item.setFont(font)
                self.table.setItem(row, col, item)
        self.table.setUpdatesEnabled(True)
        if names and not set(names) & set(self._sized_for):
            # another script's tensors: start at the name column (a scroll to the right
            # kept from the last script hid it)
            self.table.horizontalScrollBar().setValue(0)
        if names:
            # refit when rows come or go or a value grows (a user's own widths survive
            # value changes until the rows change)
            self._fitter.refit(rows_changed=names != self._sized_for)
            self._sized_for = list(names)
        if not names:
            self._sized_for = []
        self.hint.setVisible(not names)
        self._previous = tensors
        self._has_previous = True

    _has_previous = False
    _sized_for: list[str] = []

    def _fit_columns(self) -> None:
        """Name, value, grad and shape in the viewport's width when they can be: value and
        grad share what name and shape leave; the rest take their content's width."""
        table = self.table
        col = {key: i for i, key in enumerate(TENSOR_COLUMNS)}
        need = {key: content_width(table, i) for key, i in col.items()}
        widths = {
            key: min(need[key], TENSOR_CAPS.get(key, OTHER_CAP)) for key in TENSOR_COLUMNS
        }
        room = table.viewport().width() - widths["name"] - widths["shape"]
        widths["value"], widths["grad"] = share(
            [need["value"], need["grad"]], max(room, 0), floor=90
        )
        for key, width in widths.items():
            table.setColumnWidth(col[key], width)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        self._fitter.refit()

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt override
        super().showEvent(event)
        self._fitter.refit()

    def reset_changes(self) -> None:
        """Forget the previous state (after a load): nothing is highlighted next time."""
        self._previous = {}
        self._has_previous = False

    @staticmethod
    def _cell_changed(key: str, before: TensorInfo, after: TensorInfo) -> bool:
        if key == "name":
            return False
        return getattr(before, key) != getattr(after, key)

    @staticmethod
    def _texts(info: TensorInfo, groups: dict[str, list[str]]) -> dict[str, tuple[str, str]]:
        name = info.name
        group = info.storage or ""
        sharing = [n for n in groups.get(group, []) if n != name]
        storage = group
        tip = ""
        if sharing:
            storage = f"{group} ⇄ {', '.join(sharing)}"
            tip = translate(
                "Panels", "{name} shares memory with {others}: writing one changes the other"
            ).format(name=name, others=", ".join(sharing))
        value, value_tip = _value_texts(info.value, name)
        grad, grad_tip = _value_texts(info.grad, f"{name}.grad")
        return {
            "name": (name, ""),
            "shape": (fmt_shape(info.shape), f"shape {list(info.shape or ())}"),
            "dtype": (info.dtype, ""),
            "device": (info.device, ""),
            "requires_grad": (str(info.requires_grad), ""),
            "is_leaf": (str(info.is_leaf), ""),
            "retains_grad": (str(info.retains_grad), ""),
            "grad_fn": (info.grad_fn or "None", ""),
            "grad": (grad, grad_tip),
            "version": (
                "—" if info.version is None else str(info.version),
                translate(
                    "Panels", "t._version: in-place writes bump it (inference tensors keep none)"
                ),
            ),
            "storage": (storage, tip),
            "value": (value, value_tip),
        }

    # test and inspector helpers
    def names(self) -> list[str]:
        return sorted(self._rows, key=self._rows.__getitem__)

    def is_local(self, name: str) -> bool:
        """True for a local of the paused frame (listed first, tinted blue)."""
        return name in self._locals

    _locals: set[str] = set()

    def cell(self, name: str, column: str) -> str:
        item = self.item(name, column)
        return item.text() if item else ""

    def item(self, name: str, column: str) -> QTableWidgetItem | None:
        return self.table.item(self._rows[name], TENSOR_COLUMNS.index(column))

    def is_highlighted(self, name: str, column: str) -> bool:
        return (name, column) in self._changed


def _value_texts(value: Any, name: str) -> tuple[str, str]:
    """A value's cell text (up to 200 characters) and its tooltip: the whole value (up to
    2,000), unless the cell is short."""
    whole = fmt_value(value, 2000)
    shown = whole if len(whole) <= 200 else fmt_value(value, 200)
    if value is None or len(whole) <= 12:
        return shown, ""
    return shown, f"{name} = {whole}"


# --- a small plot -------------------------------------------------------------------------


@dataclass
class Series:
    name: str
    colour: str
    points: list[tuple[str, float]]  # (x label, y)
    style: str = "step"  # "step", "line" or "bar"
    #: each point's x in slot units (slot i is centred on x = i); None: point i at slot i
    xs: list[float] | None = None

    def x(self, i: int) -> float:
        return self.xs[i] if self.xs is not None else float(i)


class MiniPlot(QWidget):
    """A compact plot painted with QPainter: step/line series and bars over labelled x slots."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setAccessibleName(translate("Panels", "Plot"))
        self.series: list[Series] = []
        self.y_title = ""
        #: what the x axis counts (``backward pass``), written under its labels
        self.x_title = ""
        #: the x slots' labels; None: the longest series' point labels
        self.slot_labels: list[str] | None = None
        self.empty_text = translate("Panels", "nothing to plot yet")
        self.y_format: Callable[[float], str] = fmt_number
        #: x (slot units) -> a dashed line there, labelled under the axis where it has room
        self.markers: dict[float, str] = {}
        self.drawn_labels: list[QRectF] = []
        self.drawn_legend: list[tuple[QRectF, str]] = []
        #: what the last paint drew (tests read them): each point (series name, centre)
        #: and each x label (its box, its text)
        self.drawn_points: list[tuple[str, QPointF]] = []
        self.drawn_x_labels: list[tuple[QRectF, str]] = []
        self.binary_units = False  # ticks at round KiB/MiB/GiB values
        self._plot_rect = QRectF()
        self._slot_w = 0.0
        self.setMinimumHeight(140)

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt override
        return QSize(320, 160)

    def set_series(self, series: list[Series], y_title: str = "") -> None:
        self.series = series
        self.y_title = y_title
        self.setAccessibleDescription(self.describe())
        self.update()

    def describe(self) -> str:
        """The plot in words (its accessible description)."""
        if not self.series:
            return self.empty_text
        parts = [
            f"{s.name}: " + ", ".join(f"{label} {self.y_format(y)}" for label, y in s.points)
            for s in self.series
        ]
        return f"{self.y_title}. " + "; ".join(parts)

    def slot_count(self) -> int:
        if self.slot_labels is not None:
            return len(self.slot_labels)
        return max((len(s.points) for s in self.series), default=0)

    def slot_x(self, x: float) -> float:
        """The pixel x of slot position ``x`` in the last paint."""
        return self._plot_rect.left() + self._slot_w * (x + 0.5)

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt override
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        p.fillRect(self.rect(), self.palette().color(QPalette.ColorRole.Base))
        font = theme.label_font(11)
        p.setFont(font)
        fm = p.fontMetrics()
        slots = self.slot_count()
        values = [y for s in self.series for _, y in s.points if math.isfinite(y)]
        self.drawn_points, self.drawn_x_labels = [], []
        if not slots or not values:
            p.setPen(QColor(theme.HINT_TEXT))
            p.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, self.empty_text)
            p.end()
            self.drawn_labels, self.drawn_legend = [], []
            return
        lo, hi = min(0.0, min(values)), max(0.0, max(values))
        unit = 1.0
        if self.binary_units and hi > 1024:
            unit = 1024.0 ** min(3, int(math.log(hi, 1024)))
        ticks = [t * unit for t in nice_ticks(lo / unit, hi / unit)]
        lo, hi = ticks[0], ticks[-1]
        if any(s.style == "step" for s in self.series) and max(values) > hi * 0.9:
            # room for the value labels above the top points
            hi += (hi - lo) * 0.15
        left = max(fm.horizontalAdvance(self.y_format(t)) for t in ticks) + 14
        right = 12
        bottom = 22 + (fm.height() if self.x_title else 0)
        # the legend: a grid of at most two rows, names shortened (with "…") to fit
        # their column rather than cut off at the edge or pushing the plot away
        legend: list[tuple[float, int, Series, str]] = []
        row_h = fm.height() + 2
        if len(self.series) > 1:
            room = self.width() - right - left
            widths = [fm.horizontalAdvance(s.name) + 26 for s in self.series]
            rows = 1 if sum(widths) <= room else 2
            columns = math.ceil(len(self.series) / rows)
            column_w = room / columns
            for i, s in enumerate(self.series):
                row, col = divmod(i, columns)
                name = s.name
                if rows > 1 or widths[i] > column_w:
                    name = fm.elidedText(s.name, Qt.TextElideMode.ElideMiddle, int(column_w - 22))
                legend.append((left + col * column_w, row, s, name))
        legend_rows = legend[-1][1] + 1 if legend else 0
        top = 22 + row_h * legend_rows
        plot = QRectF(
            left, top, max(self.width() - left - right, 10), max(self.height() - top - bottom, 10)
        )

        def ypos(v: float) -> float:
            return plot.bottom() - (v - lo) / (hi - lo) * plot.height()

        slot_w = plot.width() / slots
        self._plot_rect, self._slot_w = QRectF(plot), slot_w

        def xpos(x: float) -> float:
            return plot.left() + slot_w * (x + 0.5)

        # grid and y ticks (a label only where it clears the one before: a short plot)
        last_label_y = math.inf
        for t in ticks:
            y = ypos(t)
            p.setPen(QPen(self.palette().color(QPalette.ColorRole.Midlight), 1))
            p.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y))
            if abs(last_label_y - y) < fm.height() + 2:
                continue
            last_label_y = y
            p.setPen(QColor(theme.MUTED_TEXT))
            label = self.y_format(t)
            p.drawText(
                QRectF(0, y - 8, left - 6, 16),
                Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
                label,
            )
        p.setPen(QPen(self.palette().color(QPalette.ColorRole.Mid), 1))
        p.drawLine(QPointF(plot.left(), ypos(0)), QPointF(plot.right(), ypos(0)))
        p.drawLine(QPointF(plot.left(), plot.top()), QPointF(plot.left(), plot.bottom()))
        # title
        p.setPen(QColor(theme.MUTED_TEXT))
        title_font = theme.label_font(11, bold=True)
        p.setFont(title_font)
        p.drawText(QRectF(left, 2, plot.width(), 16), Qt.AlignmentFlag.AlignLeft, self.y_title)
        p.setFont(font)
        # x labels (thinned when crowded: never closer than the widest label)
        labels = (
            self.slot_labels
            if self.slot_labels is not None
            else [
                label
                for label, _ in next(
                    (s.points for s in self.series if len(s.points) == slots),
                    self.series[0].points,
                )
            ]
        )
        widest = max((fm.horizontalAdvance(label) for label in labels), default=0) + 10
        step = max(1, math.ceil(slots / max(1.0, plot.width() / max(widest, 24))))
        p.setPen(QColor(theme.MUTED_TEXT))
        for i, label in enumerate(labels):
            if i % step and i != slots - 1:
                continue
            w = max(fm.horizontalAdvance(label) + 6, slot_w)
            box = QRectF(xpos(i) - w / 2, plot.bottom() + 3, w, fm.height())
            if any(box.intersects(b) for b, _ in self.drawn_x_labels):
                continue
            p.drawText(box, Qt.AlignmentFlag.AlignHCenter, label)
            self.drawn_x_labels.append((box, label))
        if self.x_title:
            p.drawText(
                QRectF(plot.left(), plot.bottom() + 3 + fm.height(), plot.width(), fm.height()),
                Qt.AlignmentFlag.AlignHCenter,
                self.x_title,
            )
        # markers: a dashed line at their x, named under the axis where that is free
        for x, text in sorted(self.markers.items()):
            px = xpos(x)
            p.setPen(QPen(QColor(ERROR_TEXT), 1, Qt.PenStyle.DashLine))
            p.drawLine(QPointF(px, plot.top()), QPointF(px, plot.bottom()))
            w = fm.horizontalAdvance(text) + 4
            box = QRectF(px - w / 2, plot.bottom() + 3, w, fm.height())
            if not any(box.intersects(b) for b, _ in self.drawn_x_labels):
                p.setPen(QColor(ERROR_TEXT))
                p.drawText(box, Qt.AlignmentFlag.AlignHCenter, text)
                self.drawn_x_labels.append((box, text))
        # series
        bars = [s for s in self.series if s.style == "bar"]
        bar_w = min(slot_w * 0.7, 28) / max(1, len(bars))
        for b, s in enumerate(bars):
            p.setPen(Qt.PenStyle.NoPen)
            p.setBrush(QColor(s.colour))
            for i, (_, y) in enumerate(s.points):
                x0 = xpos(s.x(i)) - bar_w * len(bars) / 2 + b * bar_w
                r = QRectF(x0, min(ypos(y), ypos(0)), bar_w - 1, abs(ypos(y) - ypos(0)))
                p.drawRect(r)
        # value labels drawn so far: no two may overlap, and none may cover a point
        placed: list[QRectF] = []
        dots = [
            QRectF(xpos(s.x(i)) - 5, ypos(y) - 5, 10, 10)
            for s in self.series if s.style != "bar"
            for i, (_, y) in enumerate(s.points) if math.isfinite(y)
        ]

        # the legend and the x labels are no place for a value either
        fixed = [
            QRectF(x, 21 + row_h * row, fm.horizontalAdvance(name) + 13, fm.height())
            for x, row, _, name in legend
        ] + [b for b, _ in self.drawn_x_labels]
        room = plot.adjusted(-8, -4, 8, 0)

        def blocked(box: QRectF) -> bool:
            return (
                any(box.intersects(b) for b in placed)
                or any(box.intersects(d) for d in dots)
                or any(box.intersects(f) for f in fixed)
                or not room.contains(box)
            )

        for s in self.series:
            if s.style == "bar" or not s.points:
                continue
            colour = QColor(s.colour)
            path = QPainterPath()
            for i, (_, y) in enumerate(s.points):
                pt = QPointF(xpos(s.x(i)), ypos(y))
                if i == 0:
                    path.moveTo(pt)
                elif s.style == "step":
                    path.lineTo(QPointF(pt.x(), path.currentPosition().y()))
                    path.lineTo(pt)
                else:
                    path.lineTo(pt)
            p.setBrush(Qt.BrushStyle.NoBrush)
            p.setPen(QPen(colour, 2))
            p.drawPath(path)
            p.setBrush(QBrush(colour))
            label_every = max(1, math.ceil(len(s.points) / max(1, plot.width() / 46)))
            for i, (_, y) in enumerate(s.points):
                pt = QPointF(xpos(s.x(i)), ypos(y))
                p.setPen(QPen(QColor("#ffffff"), 1.5))
                p.drawEllipse(pt, 4, 4)
                self.drawn_points.append((s.name, pt))
                if s.style == "step" and i % label_every == 0:
                    text = self.y_format(y)
                    w, h = fm.horizontalAdvance(text) + 4, fm.height()
                    # above the point, else right of it, left of it, below it
                    box = next(
                        (
                            b for b in (
                                QRectF(pt.x() - w / 2, pt.y() - h - 6, w, h),
                                QRectF(pt.x() + 7, pt.y() - h / 2, w, h),
                                QRectF(pt.x() - 7 - w, pt.y() - h / 2, w, h),
                                QRectF(pt.x() - w / 2, pt.y() + 6, w, h),
                            )
                            if not blocked(b)
                        ),
                        None,
                    )
                    if box is None:
                        continue  # no room: this point goes unlabelled (the table lists it)
                    placed.append(box)
                    p.setPen(colour)
                    p.drawText(box, Qt.AlignmentFlag.AlignHCenter, text)
        # legend, under the title
        drawn_legend = []
        for x, row, s, name in legend:
            y = 21 + row_h * row
            p.setPen(Qt.PenStyle.NoPen)
            p.setBrush(QColor(s.colour))
            p.drawRect(QRectF(x, y + 2, 9, 9))
            p.setPen(QColor(theme.TEXT))
            p.drawText(QPointF(x + 13, y + fm.ascent()), name)
            drawn_legend.append(
                (QRectF(x, y, fm.horizontalAdvance(name) + 13, fm.height()), name)
            )
        p.end()
        #: what the last paint drew (tests read them): value-label boxes, legend entries
        self.drawn_labels = placed
        self.drawn_legend = drawn_legend


def nice_ticks(lo: float, hi: float, count: int = 4) -> list[float]:
    """Round tick values (1, 2, 2.5, 5 x 10^k) covering ``lo``..``hi``."""
    if hi <= lo:
        hi = lo + 1.0
    raw = (hi - lo) / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    start = math.floor(lo / step) * step
    ticks = []
    value = start
    while value < hi - step * 1e-9:
        ticks.append(round(value, 12))
        value += step
    ticks.append(round(value, 12))
    return ticks


# --- accumulation -------------------------------------------------------------------------

GRAD_EVENT_TEXT = {
    "backward": "backward",
    "zero": QT_TRANSLATE_NOOP("Panels", "zeroed"),
    "set": QT_TRANSLATE_NOOP("Panels", "assigned"),
    "none": QT_TRANSLATE_NOOP("Panels", "set to None"),
}


class AccumulationPanel(QWidget):
    """Each leaf's .grad after every backward pass, zero_() and assignment, plus a plot
    whose x axis is the backward pass (1, 2, … over the script's passes), the same for
    every leaf."""

    #: what the table and plot show now (a state that changes none of it redraws nothing)
    _shown_key: Any = None

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setAccessibleName(translate("Panels", "Gradient accumulation"))
        self.table = _table(
            ("leaf", "after", "line", ".grad"), translate("Panels", "Gradient accumulation table")
        )
        self.table.setObjectName("accumulationTable")
        self.table.horizontalHeader().setStretchLastSection(True)
        self.plot = MiniPlot()
        self.plot.setObjectName("accumulationPlot")
        self.plot.setAccessibleName(translate("Panels", "Gradient accumulation plot"))
        self.plot.empty_text = translate("Panels", "x.grad after each backward() shows here")
        self.hint = _hint(
            translate(
                "Panels",
                "backward() adds into .grad: run it twice (retain_graph=True) and the value "
                "doubles.",
            ),
            translate("Panels", "Gradient accumulation hint"),
        )
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.setAccessibleName(translate("Panels", "Gradient accumulation table and plot"))
        splitter.addWidget(self.table)
        splitter.addWidget(self.plot)
        # the plot gets the larger share: the table scrolls, the plot should not be flat
        splitter.setStretchFactor(0, 2)
        splitter.setStretchFactor(1, 3)
        splitter.setSizes([120, 180])
        splitter.setChildrenCollapsible(False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.hint)
        layout.addWidget(splitter)
        self._rows: list[tuple[str, str, str]] = []

    def set_state(self, state: AppState | Mapping[str, Any] | None) -> None:
        st = AppState.of(state)
        events = st.grad_events
        passes = st.backward_passes
        key = (events, tuple(s.line for s in st.statements), len(passes))
        if key == self._shown_key:
            return  # a step that changed no gradient: the table and plot stand
        self._shown_key = key
        rows = [(name, event) for name, items in events.items() for event in items]
        self._rows = []
        self.table.setRowCount(len(rows))
        for row, (name, event) in enumerate(rows):
            kind = event.kind
            after = translate("Panels", GRAD_EVENT_TEXT.get(kind, kind))
            line = st.statement_line(event.statement)
            if kind == "backward" and event.pass_index is not None:
                after = f"backward #{event.pass_index + 1}"
                if 0 <= event.pass_index < len(passes):
                    bpass = passes[event.pass_index]
                    # the backward() call's own line (inside a loop body too)
                    line = bpass.line or line
                    if bpass.iteration is not None:
                        after += translate("Panels", " (iteration {n})").format(
                            n=bpass.iteration
                        )
            value = fmt_value(event.value, 200)
            items = [
                _item(name, f"{name}.grad"),
                _item(after),
                _item(str(line) if line else "", st.statement_source(event.statement)),
                _item(value, fmt_value(event.value, 2000)),
            ]
            for col, item in enumerate(items):
                if kind == "zero":
                    item.setBackground(QColor(ZERO_ROW))
                    font = item.font()
                    font.setItalic(True)
                    item.setFont(font)
                self.table.setItem(row, col, item)
            self._rows.append((name, after, value))
        self.table.resizeColumnsToContents()
        self.hint.setVisible(not rows)
        self._plot(st)

    def _plot(self, st: AppState) -> None:
        """One step series per leaf over the backward passes: a pass's value at its pass
        number, a zero_() or assignment between the passes it came between."""
        events = st.grad_events
        passes = st.backward_passes
        by_pass = any(e.pass_index is not None for items in events.values() for e in items)
        series = []
        any_norm = False
        markers: dict[float, str] = {}
        slots = 0
        for n, (name, items) in enumerate(events.items()):
            points: list[tuple[str, float]] = []
            xs: list[float] = []
            previous = -0.5
            for i, event in enumerate(items):
                y = scalar_of(event.value)
                if y is None and event.value is not None:
                    y = norm_of(event.value)
                    any_norm = True
                if y is None:
                    y = 0.0
                if not by_pass:
                    x = float(i)
                elif event.kind == "backward" and event.pass_index is not None:
                    x = float(event.pass_index)
                else:
                    # between the passes before it and the next one
                    before = sum(
                        1 for bp in passes
                        if bp.statement is not None and event.statement is not None
                        and bp.statement < event.statement
                    )
                    x = max(previous, before - 1.0) + 0.5
                    if x <= previous:
                        x = previous + 0.25
                label = (
                    f"#{event.pass_index + 1}" if event.pass_index is not None else event.kind
                )
                if event.kind == "zero":
                    markers[x] = translate("Panels", "zero")
                points.append((label, y))
                xs.append(x)
                previous = x
            slots = max(slots, len(points) if not by_pass else math.floor(max(xs, default=0)) + 1)
            colour = theme.STORAGE_COLOURS[(n + 5) % len(theme.STORAGE_COLOURS)]
            # named by the leaf alone (the title says .grad): a narrow legend stays whole
            series.append(Series(name, colour, points, "step", xs))
        if by_pass:
            slots = max(slots, len(passes))
            self.plot.slot_labels = [str(i + 1) for i in range(slots)]
            self.plot.x_title = translate("Panels", "backward pass")
        else:
            self.plot.slot_labels = None
            self.plot.x_title = translate("Panels", "event")
        self.plot.markers = markers
        title = (
            translate("Panels", "‖.grad‖ of each leaf (norm)")
            if any_norm
            else translate("Panels", ".grad of each leaf")
        )
        self.plot.set_series(series, title)

    def rows(self) -> list[tuple[str, str, str]]:
        """(leaf, after, .grad) per row, as shown."""
        return list(self._rows)

    def values(self, leaf: str) -> list[str]:
        return [v for name, _, v in self.rows() if name == leaf]


# --- memory ---------------------------------------------------------------------------------

MEMORY_TIPS = {
    "allocated_bytes": QT_TRANSLATE_NOOP(
        "Panels", "bytes this statement allocated (new tensors, outputs)"
    ),
    "saved_bytes": QT_TRANSLATE_NOOP(
        "Panels", "bytes the autograd graph holds in saved tensors after it"
    ),
    "live_bytes": QT_TRANSLATE_NOOP("Panels", "bytes of all tensors bound to variables after it"),
    "cuda_allocated": QT_TRANSLATE_NOOP("Panels", "torch.cuda.memory_allocated() after it"),
    "cuda_max_allocated": QT_TRANSLATE_NOOP(
        "Panels", "torch.cuda.max_memory_allocated() after it"
    ),
}


class MemoryPanel(QWidget):
    """Bytes per statement: allocated by it, held by the graph, alive in variables.

    Cells read the short form (``3.8 MiB``); the tooltip and :meth:`row_texts` give the
    exact count (``4,000,000 B (3.8 MiB)``). The plot beside the table gives up its
    width first: in a narrow dock it folds away (drag the splitter handle to open it).
    """

    #: what the table shows now (the same figures again redraw nothing)
    _shown_key: Any = None

    #: the statement column's narrowest (its text is elided, the tooltip has it whole), and
    #: what it gets before the plot gets any room
    STATEMENT_MIN = 90
    STATEMENT_WANT = 170
    #: the plot folds away when the table would get less than it needs
    PLOT_MIN = 170

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setAccessibleName(translate("Panels", "Memory"))
        self.table = _table((), translate("Panels", "Memory table"))
        self.table.setObjectName("memoryTable")
        self.table.horizontalHeader().setStretchLastSection(False)
        self.plot = MiniPlot()
        self.plot.setObjectName("memoryPlot")
        self.plot.setAccessibleName(translate("Panels", "Memory plot"))
        self.plot.y_format = short_bytes
        self.plot.binary_units = True
        self.plot.x_title = translate("Panels", "line")
        self.plot.empty_text = translate("Panels", "allocated bytes per statement show here")
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.setAccessibleName(translate("Panels", "Memory table and plot"))
        self.splitter.addWidget(self.table)
        self.splitter.addWidget(self.plot)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setCollapsible(0, False)
        self.splitter.setCollapsible(1, True)
        self.splitter.setSizes([640, 280])
        self.splitter.splitterMoved.connect(self._on_splitter_moved)
        self.plot.setMaximumWidth(420)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.splitter)
        self._columns: list[str] = []
        self._keys: list[str] = []
        self._full: list[list[str]] = []
        self._fitter = _FittedTable(self.table, self._fit_columns)
        self._user_split = False

    def set_state(self, state: AppState | Mapping[str, Any] | None) -> None:
        st = AppState.of(state)
        memory = st.memory
        key = (memory, st.device, st.read_only, tuple((s.line, s.source) for s in st.statements))
        if key == self._shown_key:
            return  # the same figures: the table stands
        self._shown_key = key
        rows = memory.statements
        totals = memory.totals
        cuda = st.device.startswith("cuda")
        columns = [
            QT_TRANSLATE_NOOP("Panels", "line"),
            QT_TRANSLATE_NOOP("Panels", "statement"),
            QT_TRANSLATE_NOOP("Panels", "allocated"),
            QT_TRANSLATE_NOOP("Panels", "held by graph"),
            QT_TRANSLATE_NOOP("Panels", "live tensors"),
        ]
        keys = ["allocated_bytes", "saved_bytes", "live_bytes"]
        if cuda:
            columns += [
                QT_TRANSLATE_NOOP("Panels", "cuda allocated"),
                QT_TRANSLATE_NOOP("Panels", "cuda peak"),
            ]
            keys += ["cuda_allocated", "cuda_max_allocated"]
        if columns != self._columns:
            self.table.setColumnCount(len(columns))
            self.table.setHorizontalHeaderLabels([translate("Panels", c) for c in columns])
            self._columns = columns
        self._keys = keys
        # A snapshot has no statements, only what its graph holds now: show that row alone.
        show_totals = bool(rows) or st.read_only
        self.table.setRowCount(len(rows) + (1 if show_totals else 0))
        self._full = []
        for r, row in enumerate(rows):
            source = st.statement_source(row.index).splitlines()
            first = source[0] if source else ""
            self.table.setItem(
                r, 0, _item(str(row.line), translate("Panels", "line {line}").format(line=row.line))
            )
            self.table.setItem(r, 1, _item(first, "\n".join(source)))
            full = [str(row.line), first]
            for c, k in enumerate(keys, start=2):
                figure = row.get(k)
                item = self._figure(figure, translate("Panels", MEMORY_TIPS.get(k, "")))
                if k == "allocated_bytes" and figure:
                    font = item.font()
                    font.setBold(True)
                    item.setFont(font)
                self.table.setItem(r, c, item)
                full.append(fmt_bytes(figure))
            self._full.append(full)
        if show_totals:
            r = len(rows)
            label = (
                translate("Panels", "total / now") if rows else translate("Panels", "snapshot (now)")
            )
            total_items = [_item(""), _item(label)]
            full = ["", label]
            for k in keys:
                figure = totals.get(k)
                tip = (
                    translate("Panels", "sum over statements")
                    if k == "allocated_bytes"
                    else translate("Panels", "now")
                )
                total_items.append(self._figure(figure, tip))
                full.append(fmt_bytes(figure))
            for c, item in enumerate(total_items):
                item.setBackground(QColor(TOTAL_ROW))
                font = item.font()
                font.setBold(True)
                item.setFont(font)
                self.table.setItem(r, c, item)
            self._full.append(full)
        self._fitter.refit(rows_changed=True)
        self._place_plot()
        points_alloc = [(str(row.line), float(row.allocated_bytes or 0)) for row in rows]
        points_live = [(str(row.line), float(row.live_bytes or 0)) for row in rows]
        self.plot.set_series(
            [
                Series(translate("Panels", "allocated"), "#4c6ef5", points_alloc, "bar"),
                Series(translate("Panels", "live"), "#f08c00", points_live, "line"),
            ]
            if rows
            else [],
            translate("Panels", "bytes per statement"),
        )

    @staticmethod
    def _figure(figure: float | None, what: str) -> QTableWidgetItem:
        """A byte count: short in the cell (``3.8 MiB``), exact in the tooltip."""
        text = "–" if figure is None else short_bytes(figure)
        tip = fmt_bytes(figure) + (f": {what}" if what else "")
        return _item(text, tip, align_right=True)

    def _needed(self) -> int:
        """The table's width with every figure whole and the statement readable."""
        widths = [content_width(self.table, c) for c in range(self.table.columnCount())]
        if len(widths) > 1:
            widths[1] = min(widths[1], self.STATEMENT_WANT)
        return sum(widths) + 4

    def _fit_columns(self) -> None:
        """Figures whole; the statement takes what they leave (elided, whole in its tooltip)."""
        table = self.table
        count = table.columnCount()
        widths = [content_width(table, c) for c in range(count)]
        if count > 1:
            others = sum(widths) - widths[1]
            room = table.viewport().width() - others
            widths[1] = max(self.STATEMENT_MIN, min(widths[1], room))
        for c, w in enumerate(widths):
            table.setColumnWidth(c, w)

    def _place_plot(self) -> None:
        """The table first: the plot keeps what the table leaves, or folds away."""
        if self._user_split:
            return
        total = self.splitter.width()
        if total <= 0:
            return
        needed = self._needed()
        plot = min(max(total - needed, 0), 420)
        if plot < self.PLOT_MIN:
            plot = 0
        self.splitter.blockSignals(True)
        self.splitter.setSizes([total - plot, plot])
        self.splitter.blockSignals(False)
        self._fitter.refit()

    def _on_splitter_moved(self, pos: int, index: int) -> None:
        self._user_split = True
        self._fitter.refit()

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        self._place_plot()
        self._fitter.refit()

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt override
        super().showEvent(event)
        self._place_plot()

    def row_texts(self) -> list[list[str]]:
        """Each row's texts with every byte count exact (``4,000,000 B (3.8 MiB)``): what
        the cells show in short form and their tooltips in full."""
        return [list(row) for row in self._full]

    def shown_texts(self) -> list[list[str]]:
        """Each row's texts as the cells show them (byte counts short: ``3.8 MiB``)."""
        out = []
        for r in range(self.table.rowCount()):
            out.append(
                [
                    self.table.item(r, c).text() if self.table.item(r, c) else ""
                    for c in range(self.table.columnCount())
                ]
            )
        return out


# --- modules ---------------------------------------------------------------------------------


class ModulesPanel(QWidget):
    """The model's module tree with node counts; a ticked module is collapsed into one box.

    Signals:
        collapsed_changed(list): the modules to collapse, after a tick, double-click or button.
    """

    collapsed_changed = Signal(list)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setAccessibleName(translate("Panels", "Modules"))
        self.hint = _hint(
            translate(
                "Panels",
                "Tick a module (or double-click it) to collapse its nodes into one box. "
                "Module names come from gradviz.record(model).",
            ),
            translate("Panels", "Modules hint"),
        )
        self.tree = QTreeWidget()
        self.tree.setObjectName("modulesTree")
        self.tree.setAccessibleName(translate("Panels", "Module tree"))
        self.tree.setColumnCount(2)
        self.tree.setHeaderLabels([translate("Panels", "module"), translate("Panels", "nodes")])
        self.tree.setExpandsOnDoubleClick(False)
        self.tree.setUniformRowHeights(True)
        self.tree.setStyleSheet("QTreeWidget { background: palette(base); border: none; }")
        header = self.tree.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        self.chains_box = QCheckBox(translate("Panels", "Collapse linear chains"))
        self.chains_box.setObjectName("chainsBox")
        self.chains_box.setAccessibleName(translate("Panels", "Collapse linear chains"))
        self.chains_box.setToolTip(
            translate("Panels", "Draw each run of three or more one-to-one ops as one box")
        )
        self.collapse_all_button = QPushButton(translate("Panels", "Collapse all"))
        self.collapse_all_button.setAccessibleName(translate("Panels", "Collapse all modules"))
        self.collapse_all_button.setToolTip(
            translate(
                "Panels", "Collapse the top-level blocks (layers.0, layers.1, …) into one box each"
            )
        )
        self.expand_all_button = QPushButton(translate("Panels", "Expand all"))
        self.expand_all_button.setAccessibleName(translate("Panels", "Expand all modules"))
        buttons = QHBoxLayout()
        buttons.setContentsMargins(6, 4, 6, 4)
        buttons.addWidget(self.collapse_all_button)
        buttons.addWidget(self.expand_all_button)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.hint)
        layout.addLayout(buttons)
        chains_row = QHBoxLayout()
        chains_row.setContentsMargins(8, 0, 6, 4)
        chains_row.addWidget(self.chains_box)
        layout.addLayout(chains_row)
        layout.addWidget(self.tree, 1)
        self._counts: dict[str, int] = {}
        self._items: dict[str, QTreeWidgetItem] = {}
        self._collapsed: set[str] = set()
        self.tree.itemChanged.connect(self._on_tree_item_changed)
        self.tree.itemDoubleClicked.connect(self._on_tree_item_double_clicked)
        self.collapse_all_button.clicked.connect(self.collapse_all)
        self.expand_all_button.clicked.connect(self.expand_all)
        self._update_enabled()

    # --- what the window tells us -----------------------------------------------------------

    def set_modules(self, counts: Mapping[str, int], collapsed: Iterable[str]) -> None:
        """Show the module tree (path -> node count) with ``collapsed`` ticked; emits nothing."""
        counts = dict(counts)
        self._collapsed = set(collapsed) & set(counts)
        self.tree.blockSignals(True)
        if counts != self._counts:
            self._counts = counts
            self._rebuild()
        self._sync_checks()
        self.tree.blockSignals(False)
        self._update_enabled()

    # --- what a person does ----------------------------------------------------------------

    def modules(self) -> list[str]:
        return list(self._items)

    def collapsed(self) -> set[str]:
        return set(self._collapsed)

    def item(self, module: str) -> QTreeWidgetItem | None:
        return self._items.get(module)

    def set_collapsed(self, module: str, collapsed: bool) -> None:
        """Tick or untick ``module`` as a click on its box does (emits collapsed_changed)."""
        item = self._items.get(module)
        if item is None:
            return
        state = Qt.CheckState.Checked if collapsed else Qt.CheckState.Unchecked
        item.setCheckState(0, state)  # itemChanged does the rest

    def collapse_all(self) -> None:
        from .display import top_blocks

        self._collapsed = set(top_blocks(self._counts))
        self._changed()

    def expand_all(self) -> None:
        self._collapsed = set()
        self._changed()

    # --- internals -------------------------------------------------------------------------

    def _rebuild(self) -> None:
        self.tree.clear()
        self._items = {}
        for module in sorted(self._counts, key=lambda m: [_natural(p) for p in m.split(".")]):
            parent_name = module.rsplit(".", 1)[0] if "." in module else None
            parent = self._items.get(parent_name) if parent_name else None
            item = QTreeWidgetItem([module.rsplit(".", 1)[-1], str(self._counts[module])])
            item.setData(0, Qt.ItemDataRole.UserRole, module)
            item.setToolTip(0, plain_tooltip(module))
            item.setFlags(
                Qt.ItemFlag.ItemIsEnabled
                | Qt.ItemFlag.ItemIsSelectable
                | Qt.ItemFlag.ItemIsUserCheckable
            )
            item.setCheckState(0, Qt.CheckState.Unchecked)
            item.setTextAlignment(1, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            if parent is None:
                self.tree.addTopLevelItem(item)
            else:
                parent.addChild(item)
            self._items[module] = item
        # Two levels open: "layers" and its blocks, not every Linear inside.
        for module, item in self._items.items():
            if module.count(".") < 1:
                item.setExpanded(True)

    def _sync_checks(self) -> None:
        for module, item in self._items.items():
            checked = module in self._collapsed
            item.setCheckState(0, Qt.CheckState.Checked if checked else Qt.CheckState.Unchecked)
            hidden_by = next(
                (c for c in self._collapsed if module != c and module.startswith(c + ".")), None
            )
            colour = QColor(theme.HINT_TEXT if hidden_by else theme.TEXT)
            item.setForeground(0, colour)
            item.setForeground(1, colour)
            item.setToolTip(
                0,
                plain_tooltip(
                    translate("Panels", "{module} (inside collapsed {group})").format(
                        module=module, group=hidden_by
                    )
                    if hidden_by
                    else module
                ),
            )

    def _update_enabled(self) -> None:
        has = bool(self._items)
        self.collapse_all_button.setEnabled(has)
        self.expand_all_button.setEnabled(has and bool(self._collapsed))
        self.tree.setVisible(has)
        self.hint.setText(
            translate("Panels", "Tick a module (or double-click it) to collapse its nodes into one box.")
            if has
            else translate("Panels", "No modules in this graph yet. Nodes built by an nn.Module the script calls "
            "(or one recorded with gradviz.record(model)) are tagged with its name and can "
            "be collapsed here.")
        )  # fmt: skip

    def _changed(self) -> None:
        self.tree.blockSignals(True)
        self._sync_checks()
        self.tree.blockSignals(False)
        self._update_enabled()
        self.collapsed_changed.emit(sorted(self._collapsed))

    def _on_tree_item_changed(self, item: QTreeWidgetItem, column: int) -> None:
        if column != 0:
            return
        module = str(item.data(0, Qt.ItemDataRole.UserRole))
        checked = item.checkState(0) == Qt.CheckState.Checked
        if checked == (module in self._collapsed):
            return
        if checked:
            self._collapsed.add(module)
        else:
            self._collapsed.discard(module)
        self._changed()

    def _on_tree_item_double_clicked(self, item: QTreeWidgetItem, column: int) -> None:
        module = str(item.data(0, Qt.ItemDataRole.UserRole))
        self.set_collapsed(module, module not in self._collapsed)


def _search_text(node: dict[str, Any]) -> str:
    """What the window's search looks at (grouping.search): id, label, names, module, shape."""
    shape = node.get("shape")
    fields = [
        str(node.get("id", "")),
        str(node.get("label", "")),
        *map(str, node.get("vars") or []),
        str(node.get("module") or ""),
        "x".join(map(str, shape)) if shape else "",
        str(list(shape)) if shape is not None else "",
    ]
    return "\n".join(fields).lower()


def _natural(part: str) -> tuple[int, int | str]:
    """Sort key so that layers.2 comes before layers.10."""
    return (0, int(part)) if part.isdigit() else (1, part)


# --- inspector ------------------------------------------------------------------------------

KIND_TEXT = {
    "grad_fn": QT_TRANSLATE_NOOP("Panels", "grad_fn: a backward op recorded by the forward pass"),
    "accumulate_grad": QT_TRANSLATE_NOOP(
        "Panels", "AccumulateGrad: adds the incoming gradient into a leaf's .grad"
    ),
    "tensor": QT_TRANSLATE_NOOP("Panels", "tensor bound to a variable"),
    "saved": QT_TRANSLATE_NOOP("Panels", "saved tensor: kept by a grad_fn for its backward formula"),
    "group": QT_TRANSLATE_NOOP(
        "Panels", "collapsed group: one box for many nodes (double-click it to expand)"
    ),
}

#: the inspector's row names a learner reads in their language (PyTorch's attribute
#: names, requires_grad, is_leaf, grad_fn, dtype…, stay as PyTorch spells them)
_ROW_WORDS = (
    QT_TRANSLATE_NOOP("Panels", "variables"),
    QT_TRANSLATE_NOOP("Panels", "stale"),
    QT_TRANSLATE_NOOP("Panels", "created by"),
    QT_TRANSLATE_NOOP("Panels", "of which"),
    QT_TRANSLATE_NOOP("Panels", "tensors"),
    QT_TRANSLATE_NOOP("Panels", "grad in"),
    QT_TRANSLATE_NOOP("Panels", "passes on"),
    QT_TRANSLATE_NOOP("Panels", "adds into"),
)


_esc = esc  # every script-derived value in the panels' HTML goes through it


def _section(title: str) -> str:
    """A section heading of the inspector's page (``title`` already translated)."""
    return f"<div class='sec'>{_esc(title)}</div>"


@dataclass(frozen=True)
class _SeenSaved:
    """A node's saved tensors as a state showed them before backward freed them."""

    label: str
    statement: Any
    saved: tuple[Mapping[str, Any], ...]


class InspectorPanel(QWidget):
    """Everything about the node selected on the canvas, including its chain-rule product."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setAccessibleName(translate("Panels", "Inspector"))
        self.browser = SafeTextBrowser()
        self.browser.setObjectName("inspectorBrowser")
        self.browser.setAccessibleName(translate("Panels", "Inspector: the selected node"))
        self.browser.setStyleSheet(
            "QTextBrowser { background: palette(base); border: none; padding: 6px; }"
        )
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.browser)
        self.state: AppState = AppState.of(None)
        self.node_id: str | None = None
        #: the backward pass being stepped on the canvas (preferred over the latest one)
        self.focus_pass: int | None = None
        #: group nodes drawn on the canvas (collapsed modules and chains) -> their attributes
        self.groups: dict[str, dict[str, Any]] = {}
        #: the search text, so a group can say which of its members match
        self.search_text = ""
        #: grad_fn id -> its saved tensors as last seen alive (a replayed pass shows the
        #: values it used after backward freed them); forgotten when the script changes
        self._seen_saved: dict[str, _SeenSaved] = {}
        self._seen_graph: Any = None
        self._seen_script: tuple[str, ...] = ()
        self._empty()

    def _empty(self) -> None:
        self.browser.setHtml(
            f"<p style='color:{theme.MUTED_TEXT}'>"
            + _esc(
                translate(
                    "Panels",
                    "Click a node on the graph to see its op, saved tensors, the gradients it "
                    "received and passed on, and the chain rule that produced them. "
                    "Double-click a node to find its statement.",
                )
            )
            + "</p>"
        )

    def text(self) -> str:
        return self.browser.toPlainText()

    def set_state(self, state: AppState | Mapping[str, Any] | None) -> None:
        self.state = AppState.of(state)
        self._remember_saved(self.state)
        nodes = self.state.nodes_by_id
        if self.node_id and (self.node_id in nodes or self.node_id in self.groups):
            self.show_node(self.node_id)
        else:
            self.node_id = None
            self._empty()

    def _remember_saved(self, st: AppState) -> None:
        """Keep each grad_fn's saved tensors while they are alive: after backward frees
        them, a replay of that pass still shows the values it used."""
        script = tuple(s.source for s in st.statements)
        if not script:
            # a read-only snapshot (or nothing run): no earlier state of it to remember,
            # its recorded passes carry what they used
            self._seen_saved, self._seen_script, self._seen_graph = {}, script, None
            return
        if script != self._seen_script:
            self._seen_saved = {}
            self._seen_script = script
        if st.graph_data is self._seen_graph:
            return
        self._seen_graph = st.graph_data
        nodes = st.nodes_by_id
        saved: dict[str, list[Mapping[str, Any]]] = {}
        for e in st.graph_edges:
            if e.get("kind") == "saved" and e.get("target") in nodes:
                saved.setdefault(str(e["source"]), []).append(nodes[e["target"]])
        for node_id, items in saved.items():
            node = nodes.get(node_id)
            if node is None or node.get("freed"):
                continue
            self._seen_saved[node_id] = _SeenSaved(
                str(node.get("label", "")), node.get("statement"), tuple(items)
            )

    def set_groups(self, groups: Mapping[str, dict[str, Any]]) -> None:
        """The group nodes now on the canvas; a shown group that is gone clears the page."""
        self.groups = dict(groups)
        if self.node_id and self.node_id.startswith(("g:", "c:")):
            if self.node_id in self.groups:
                self.show_node(self.node_id)
            else:
                self.node_id = None
                self._empty()

    def show_node(self, node_id: str | None) -> None:
        self.node_id = node_id
        if not node_id:
            self._empty()
            return
        nodes = self.state.nodes_by_id
        if node_id in self.groups:
            self.browser.setHtml(self._group_html(node_id, self.groups[node_id], nodes))
            return
        node = nodes.get(node_id)
        if node is None:
            self._empty()
            return
        self.browser.setHtml(self._html(node, nodes, self.state.graph_edges))

    # --- building the page ---------------------------------------------------------------

    def _html(
        self,
        node: Mapping[str, Any],
        nodes: Mapping[str, Mapping[str, Any]],
        edges: Sequence[Mapping[str, Any]],
    ) -> str:
        st = self.state
        kind = node.get("kind", "")
        parts = [
            f"<style>h3{{margin:0 0 2px 0;}} .k{{color:{theme.MUTED_TEXT};}}"
            " .mono{font-family:'DejaVu Sans Mono';}"
            " td{padding:1px 8px 1px 0;vertical-align:top;}"
            f" .sec{{color:{theme.MUTED_TEXT};font-weight:600;"
            "margin-top:8px;}</style>"
        ]
        style = theme.NODE_STYLES.get(
            "leaf"
            if kind == "tensor" and node.get("is_leaf") and node.get("requires_grad")
            else kind,
            theme.NODE_STYLES["grad_fn"],
        )
        title = str(node.get("label", node["id"]))
        if kind == "accumulate_grad" and node.get("vars"):
            title = leaf_title([str(v) for v in node["vars"]], title)
        parts.append(
            f"<h3><span style='color:{style.stroke}'>■</span>"
            f" {_esc(title)}</h3>"
            f"<div class='k'>{_esc(translate('Panels', KIND_TEXT.get(kind, kind)))}"
            f" · id {_esc(node['id'])}</div>"
        )
        rows: list[tuple[str, str]] = []
        if node.get("vars"):
            rows.append(("variables", ", ".join(map(str, node["vars"]))))
        if "shape" in node:
            rows.append(("shape", fmt_shape(node.get("shape"))))
        for key in ("dtype", "device", "storage"):
            if node.get(key):
                rows.append((key, str(node[key])))
        tensor = self._tensor_for(node)
        if tensor:
            rows.append(("requires_grad", str(tensor.requires_grad)))
            rows.append(("is_leaf", str(tensor.is_leaf)))
            rows.append(("retains_grad", str(tensor.retains_grad)))
            rows.append(("grad_fn", str(tensor.grad_fn)))
            rows.append(("version", str(tensor.version)))
            rows.append(("value", fmt_value(tensor.value, 400)))
            rows.append(("grad", fmt_value(tensor.grad, 400)))
        elif kind == "saved" and "value" in node:
            rows.append(("value", fmt_value(node.get("value"), 400)))
        if kind == "saved" and node.get("stale") is True:
            rows.append(
                (
                    "stale",
                    translate(
                        "Panels",
                        "modified in place after it was saved: its version is {version}, the "
                        "saved one was {expected}; backward through this node fails",
                    ).format(version=node.get("version"), expected=node.get("expected_version")),
                )
            )
        idx = node.get("statement")
        line = st.statement_line(idx)
        if line:
            rows.append(
                (
                    "created by",
                    translate("Panels", "line {line}: {source}").format(
                        line=line, source=st.statement_source(idx)
                    ),
                )
            )
        parts.append(self._rows(rows))

        target = self._autograd_node(node, edges)
        found = self._pass_step(target) if target is not None else None
        if kind == "grad_fn":
            parts.extend(self._saved_html(node, nodes, edges, found))
        parts.extend(self._backward_html(target, found, nodes))
        return "".join(parts)

    def _saved_html(
        self,
        node: Mapping[str, Any],
        nodes: Mapping[str, Mapping[str, Any]],
        edges: Sequence[Mapping[str, Any]],
        found: tuple[int, PassInfo, StepInfo] | None,
    ) -> list[str]:
        """The node's saved tensors: alive now, or, once backward freed them, the values a
        replayed pass used (recorded by the pass, else as this window last saw them)."""
        out = [_section(translate("Panels", "Saved tensors"))]
        saved = [
            nodes[e["target"]]
            for e in edges
            if e["source"] == node["id"] and e.get("kind") == "saved" and e["target"] in nodes
        ]
        replay = found if self.focus_pass is not None and found is not None else None
        if node.get("freed"):
            recorded = replay[2].saved if replay is not None else None
            seen = self._seen_saved.get(str(node["id"]))
            if seen is not None and (
                seen.label != node.get("label") or seen.statement != node.get("statement")
            ):
                seen = None
            if replay is not None and (recorded or seen is not None):
                pi = replay[0]
                if recorded:
                    srows = [
                        (s.label, f"{fmt_value(s.value, 400)}  {fmt_shape(s.shape)}"
                         + (f" — {', '.join(s.vars)}" if s.vars else ""))
                        for s in recorded
                    ]
                else:
                    assert seen is not None
                    srows = [self._saved_row(s) for s in seen.saved]
                out.append(
                    "<div class='k'>"
                    + _esc(
                        translate(
                            "Panels",
                            "as backward pass #{n} used them (freed after it, since it ran "
                            "without retain_graph=True)",
                        ).format(n=pi + 1)
                    )
                    + "</div>"
                )
                out.append(self._rows(srows))
            else:
                out.append(
                    f"<div style='color:{theme.FREED}'>"
                    + _esc(
                        translate(
                            "Panels",
                            "freed: backward() ran without retain_graph=True, so this node's "
                            "saved tensors are gone (a second backward fails)",
                        )
                    )
                    + "</div>"
                )
        elif saved:
            out.append(self._rows([self._saved_row(s) for s in saved]))
        else:
            out.append("<div class='k'>" + _esc(translate("Panels", "none")) + "</div>")
        scalars = node.get("saved") or {}
        if scalars:
            out.append(_section(translate("Panels", "Saved values")))
            out.append(self._rows([(k, fmt_value(v, 400)) for k, v in scalars.items()]))
        return out

    @staticmethod
    def _saved_row(s: Mapping[str, Any]) -> tuple[str, str]:
        owner = (
            translate("Panels", " — same memory as {names}").format(
                names=", ".join(map(str, s["vars"]))
            )
            if s.get("vars")
            else ""
        )
        if s.get("stale") is True:
            owner += translate("Panels", " — STALE (version {version}, saved at version {expected})").format(
                version=s.get("version"), expected=s.get("expected_version")
            )
        return (
            str(s.get("label", "")),
            f"{fmt_value(s.get('value'), 400)}  {fmt_shape(s.get('shape'))}{owner}",
        )

    def _group_html(
        self, group_id: str, group: dict[str, Any], nodes: Mapping[str, Mapping[str, Any]]
    ) -> str:
        members = [nodes[m] for m in group.get("members") or [] if m in nodes]
        chain = group_id.startswith("c:")
        style = theme.NODE_STYLES["group"]
        title = group.get("label", group_id)
        what = (
            translate("Panels", "collapsed linear chain of ops")
            if chain
            else translate("Panels", "collapsed module {name}").format(name=group.get("module", ""))
        )
        parts = [
            f"<style>.k{{color:{theme.MUTED_TEXT};}} td{{padding:1px 8px 1px 0;"
            f"vertical-align:top;}} .sec{{color:{theme.MUTED_TEXT};font-weight:600;"
            "margin-top:8px;}</style>",
            f"<h3 style='margin:0 0 2px 0'><span style='color:{style.stroke}'>■</span>"
            f" {_esc(title)}</h3>",
            f"<div class='k'>{_esc(what)} · id {_esc(group_id)}</div>",
        ]
        kinds = Counter(str(m.get("kind", "?")) for m in members)
        rows = [("nodes", str(group.get("count", len(members))))]
        if group.get("module"):
            rows.insert(0, ("module", str(group["module"])))
        rows.append(("of which", ", ".join(f"{n} {k}" for k, n in kinds.most_common())))
        params = [v for m in members if m.get("kind") == "tensor" for v in (m.get("vars") or [])]
        if params:
            more = (
                translate("Panels", ", … ({n} in all)").format(n=len(params))
                if len(params) > 8
                else ""
            )
            shown = ", ".join(params[:8]) + more
            rows.append(("tensors", shown))
        parts.append(self._rows(rows))
        ops = Counter(str(m.get("label", "?")) for m in members if m.get("kind") == "grad_fn")
        if ops:
            parts.append(_section(translate("Panels", "Ops inside")))
            parts.append(self._rows([(op, f"× {n}") for op, n in ops.most_common(12)]))
            if len(ops) > 12:
                parts.append(
                    "<div class='k'>"
                    + _esc(
                        translate("Panels", "… and {n} more kinds of op").format(n=len(ops) - 12)
                    )
                    + "</div>"
                )
        needle = self.search_text.strip().lower()
        if needle:
            hits = [m for m in members if needle in _search_text(m)]
            if hits:
                parts.append(
                    "<div class='sec'>"
                    + _esc(translate("Panels", "Matches for '{text}'").format(text=self.search_text))
                    + "</div>"
                )
                parts.append(
                    self._rows([(str(m.get("label", "")), m.get("id", "")) for m in hits[:8]])
                )
        parts.append(
            "<p class='k'>"
            + _esc(
                translate(
                    "Panels", "Double-click the box (or right-click › Expand) to show these nodes."
                )
            )
            + "</p>"
        )
        return "".join(parts)

    @staticmethod
    def _rows(rows: list[tuple[str, str]]) -> str:
        body = "".join(
            f"<tr><td class='k'>{_esc(translate('Panels', k))}</td>"
            f"<td class='mono'>{_esc(v)}</td></tr>"
            for k, v in rows
        )
        return f"<table>{body}</table>"

    def _tensor_for(self, node: Mapping[str, Any]) -> TensorInfo | None:
        if node.get("kind") != "tensor":
            return None
        tensors = self.state.tensors
        for name in node.get("vars") or [node.get("label")]:
            if name in tensors:
                return tensors[name]
        return None

    def _autograd_node(
        self, node: Mapping[str, Any], edges: Sequence[Mapping[str, Any]]
    ) -> str | None:
        """The node the engine runs for ``node``.

        Itself, a tensor's grad_fn or a leaf's AccumulateGrad.
        """
        kind = node.get("kind")
        if kind in ("grad_fn", "accumulate_grad"):
            return str(node["id"])
        if kind == "tensor":
            for e in edges:
                if e.get("kind") == "output" and e["source"] == node["id"]:
                    return str(e["target"])
                if e.get("kind") == "leaf" and e["target"] == node["id"]:
                    return str(e["source"])
        return None

    def _pass_step(self, target: str) -> tuple[int, PassInfo, StepInfo] | None:
        """The pass (the focused one first, else the latest) that ran ``target``, and its step."""
        passes = self.state.backward_passes
        order = list(range(len(passes) - 1, -1, -1))
        if self.focus_pass is not None and 0 <= self.focus_pass < len(passes):
            order.remove(self.focus_pass)
            order.insert(0, self.focus_pass)
        for pi in order:
            step = passes[pi].step_of(target)
            if step is not None:
                return pi, passes[pi], step
        return None

    def _target_title(self, bpass: PassInfo, target: str, nodes: Mapping[str, Mapping[str, Any]]) -> str:
        """What a gradient's target is called: ``x.grad (AccumulateGrad)`` for a leaf's
        accumulator, ``PowBackward0 (y)`` for an op, by the script's names."""
        node = nodes.get(target) or {}
        label = str(node.get("label") or "")
        names = [str(v) for v in node.get("vars") or []]
        if not label:
            label = next(
                (lab for n, lab in zip(bpass.nodes, bpass.labels, strict=False) if n == target),
                target,
            )
        if not names:
            names = list(bpass.names.get(target, ()))
        if label == "AccumulateGrad":
            return leaf_title(names, label)
        names = [n for n in names if n != label]
        return f"{label} ({', '.join(names)})" if names else label

    def _backward_html(
        self,
        target: str | None,
        found: tuple[int, PassInfo, StepInfo] | None,
        nodes: Mapping[str, Mapping[str, Any]],
    ) -> list[str]:
        passes = self.state.backward_passes
        if target is None:
            return []
        if not found:
            if passes:
                return [
                    _section(translate("Panels", "Backward"))
                    + "<div class='k'>"
                    + _esc(translate("Panels", "not run by any backward pass yet"))
                    + "</div>"
                ]
            return []
        pi, bpass, step = found
        # the call's own line (inside a loop body too), else its statement's
        line = bpass.where(self.state.statements)
        where = []
        if line:
            where.append(translate("Panels", "line {line}").format(line=line))
        if bpass.iteration is not None:
            where.append(translate("Panels", "iteration {n}").format(n=bpass.iteration))
        place = f" ({', '.join(where)})" if where else ""
        title = translate("Panels", "Backward pass #{n}").format(n=pi + 1)
        out = [f"<div class='sec'>{_esc(title + place)}</div>"]
        rows = [("grad in", ", ".join(fmt_value(g, 400) for g in step.grad_outputs) or "–")]
        for g, t in zip(step.grad_inputs, step.targets, strict=False):
            if t is None:
                continue
            rows.append(("passes on", f"{fmt_value(g, 400)} → {self._target_title(bpass, t, nodes)}"))
        if step.is_accumulate:
            rows.append(
                (
                    "adds into",
                    translate("Panels", " and ").join(f"{v}.grad" for v in step.vars) or ".grad",
                )
            )
        out.append(self._rows(rows))
        chain = chain_rule(bpass.raw, target) if bpass.raw else []
        if chain:
            out.append(_section(translate("Panels", "Chain rule")))
            out.append("<div class='mono'>" + "<br>".join(_esc(c) for c in chain) + "</div>")
        return out


# --- output ---------------------------------------------------------------------------------


@dataclass
class OutputEntry:
    line: int | None
    kind: str  # "output", "value", "warning", "error", "note"
    text: str
    detail: str = ""
    #: the statement (index) that wrote it; None for the window's notes
    statement: int | None = None

    def plain(self) -> str:
        prefix = f"[line {self.line}] " if self.line else ""
        return prefix + self.text + (f"\n{self.detail}" if self.detail else "")


class OutputPanel(QWidget):
    """print output, expression values, warnings and errors, each with its line number.

    Text wraps at the panel's width (a long path or URL breaks anywhere); a reply that
    ran statements scrolls to the first entry of the last one that wrote something, so
    its output starts in view (not the end of a long warning)."""

    #: under this width the line number goes inline rather than in its own column
    NARROW = 380

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setAccessibleName(translate("Panels", "Output"))
        self.browser = SafeTextBrowser()
        self.browser.setObjectName("outputBrowser")
        self.browser.setAccessibleName(
            translate("Panels", "Output: print output, values, warnings and errors")
        )
        font = QFont("DejaVu Sans Mono")
        font.setStyleHint(QFont.StyleHint.Monospace)
        font.setPointSize(9)
        self.browser.setFont(font)
        self.browser.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        self.browser.setStyleSheet(
            "QTextBrowser { background: palette(base); border: none; padding: 2px; }"
        )
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.browser)
        self._entries: list[OutputEntry] = []
        self._notes: list[OutputEntry] = []
        #: streamed print output of the running statement (add_live)
        self._live: list[OutputEntry] = []
        #: the entry to scroll to after the next render (None: the end)
        self._focus: int | None = None
        self._shown_key: Any = None
        self._narrow: bool | None = None

    def entries(self) -> list[OutputEntry]:
        return list(self._entries) + list(self._live) + list(self._notes)

    def text(self) -> str:
        return self.browser.toPlainText()

    def add_note(self, text: str, line: int | None = None, kind: str = "note") -> None:
        """A message from the window (stopped, restarted); kept until the next reset/load."""
        self._notes.append(OutputEntry(line, kind, text))
        self._focus = None
        self._render()

    #: characters of streamed output the panel shows before the statement's result
    MAX_LIVE = 200_000

    def add_live(self, text: str, line: int | None = None) -> None:
        """print output of the statement still running, as it is written; the
        statement's result replaces it (set_state)."""
        live = self._live
        if live and live[-1].line == line and live[-1].kind == "output":
            merged = (live[-1].text + text)[-self.MAX_LIVE:]
            live[-1] = OutputEntry(line, "output", merged)
        else:
            live.append(OutputEntry(line, "output", text[-self.MAX_LIVE:]))
        while sum(len(e.text) for e in live) > self.MAX_LIVE and len(live) > 1:
            live.pop(0)
        self._focus = None
        self._render()

    def clear_notes(self) -> None:
        self._notes = []
        self._render()

    def set_state(self, state: AppState | Mapping[str, Any] | None) -> None:
        st = AppState.of(state)
        key = (st.results, st.parse_error, st.new_results)
        if key == self._shown_key:
            return  # nothing new to say: the reader's scroll position stands
        before = self._shown_key[0] if self._shown_key is not None else ()
        self._shown_key = key
        if st.new_results or len(st.results) < len(before):
            self._live = []  # the statement ended (or went back): its result carries it
        entries: list[OutputEntry] = []
        pe = st.parse_error
        if pe is not None:
            entries.append(
                OutputEntry(
                    pe.line,
                    "error",
                    f"{pe.type or 'SyntaxError'}: {pe.message}",
                    translate("Panels", "Nothing ran: fix the script and press Step again."),
                )
            )
        for r in st.results:
            line = r.line
            out = r.output.rstrip("\n")
            if out:
                entries.append(OutputEntry(line, "output", out, statement=r.index))
            if r.value is not None:
                entries.append(OutputEntry(line, "value", f"= {r.value}", statement=r.index))
            for w in r.warnings:
                entries.append(OutputEntry(line, "warning", w, statement=r.index))
            err = r.error
            if err is not None:
                why = err.explanation
                entries.append(
                    OutputEntry(
                        err.line or line,
                        "error",
                        f"{err.type}: {err.message}",
                        translate("Panels", "Why: {why}").format(why=translate("Explain", why))
                        if why
                        else "",
                        statement=r.index,
                    )
                )
        self._entries = entries
        # scroll to where the last statement this reply ran starts writing
        self._focus = None
        for r in reversed(st.new_results):
            first = next((i for i, e in enumerate(entries) if e.statement == r.index), None)
            if first is not None:
                self._focus = first
                break
        if self._focus is None and pe is not None:
            self._focus = 0
        self._render()

    def _render(self) -> None:
        colours = {
            "output": theme.TEXT,
            "value": "#3b82d6",  # reads on a light and a dark base
            "warning": WARNING_TEXT,
            "error": ERROR_TEXT,
            "note": theme.MUTED_TEXT,
        }
        narrow = self._is_narrow()
        self._narrow = narrow
        blocks = []
        for e in self.entries():
            prefix = _esc(
                translate("Panels", "line {line}").format(line=e.line) if e.line else "gradviz"
            )
            tag = {
                "warning": translate("Panels", "warning"),
                "error": translate("Panels", "error"),
            }.get(e.kind, "")
            body = _esc(e.text).replace("\n", "<br>")
            if e.kind == "note":
                body = f"<i>{body}</i>"
            if tag:
                body = f"<b>{tag}:</b> {body}"
            detail = (
                f"<br><span style='color:{theme.TEXT}'>{_esc(e.detail)}</span>" if e.detail else ""
            )
            colour = colours.get(e.kind, theme.TEXT)
            # one paragraph (narrow) or one table (wide) per entry: _entry_top finds it
            if narrow:
                blocks.append(
                    f"<p style='margin:0 0 3px 0'>"
                    f"<span style='color:{theme.HINT_TEXT}'>{prefix}</span> "
                    f"<span style='color:{colour}'>{body}{detail}</span></p>"
                )
            else:
                blocks.append(
                    f"<table cellspacing=0 cellpadding=1 width='100%'><tr>"
                    f"<td width=56 style='color:{theme.HINT_TEXT}'>{prefix}</td>"
                    f"<td style='color:{colour}'>{body}{detail}</td>"
                    "</tr></table>"
                )
        if not blocks:
            blocks.append(
                f"<span style='color:{theme.HINT_TEXT}'>"
                + _esc(
                    translate(
                        "Panels",
                        "print() output, expression values, warnings and errors appear here, "
                        "each with its line number.",
                    )
                )
                + "</span>"
            )
        self.browser.setHtml("".join(blocks))
        self._scroll()

    def _scroll(self) -> None:
        bar = self.browser.verticalScrollBar()
        top = None if self._focus is None else self._entry_top(self._focus)
        bar.setValue(bar.maximum() if top is None else min(top, bar.maximum()))

    def _entry_top(self, index: int) -> int | None:
        """Where entry ``index`` starts in the document (pixels), as the last render laid
        it out: its paragraph when narrow, its table when wide."""
        doc = self.browser.document()
        layout = doc.documentLayout()
        if self._narrow:
            block = doc.findBlockByNumber(index)
            return int(layout.blockBoundingRect(block).top()) if block.isValid() else None
        frames = doc.rootFrame().childFrames()
        if not 0 <= index < len(frames):
            return None
        return int(layout.frameBoundingRect(frames[index]).top())

    def _is_narrow(self) -> bool:
        return self.browser.viewport().width() < self.NARROW

    def focus_entry(self) -> int | None:
        """The entry the last render scrolled to (None: the end)."""
        return self._focus

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        if self._narrow is not None and self._is_narrow() != self._narrow:
            self._render()
        elif self._focus is not None:
            self._scroll()
