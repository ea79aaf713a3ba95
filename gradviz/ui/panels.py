"""Side panels: tensors, .grad accumulation, memory, inspector, output, modules.

Every panel is handed the kernel's ``state`` dict (see
``docs/snapshot-example.json``) and renders it. No autograd logic lives here:
the numbers come from the kernel; the panels only format, sort and colour.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QPainter, QPainterPath, QPaintEvent, QPen
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

from ..core.chain_rule import chain_rule, fmt_number, scalar_of
from . import theme
from .text import SafeTextBrowser, esc, plain_tooltip

CHANGED = "#fff3bf"
#: the name of a local variable of the paused frame
LOCAL_TEXT = "#1864ab"
ZERO_ROW = "#e7f5ff"
TOTAL_ROW = "#f1f3f5"
ERROR_TEXT = theme.BACKWARD
WARNING_TEXT = "#c45f00"

# --- formatting ---------------------------------------------------------------------------


def fmt_value(value: Any, limit: int = 400) -> str:
    """A tensor value from the kernel: a number, nested lists, or torch's summary string."""
    if value is None:
        return "None"
    if isinstance(value, list):
        text = _fmt_list(value)
    else:
        text = fmt_number(value)
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return text


def _fmt_list(value: list[Any]) -> str:
    parts = [_fmt_list(v) if isinstance(v, list) else fmt_number(v) for v in value]
    return "[" + ", ".join(parts) + "]"


def fmt_bytes(n: int | float | None) -> str:
    """``400,000,000 B (381.5 MiB)``; small counts stay plain (``12 B``)."""
    if n is None:
        return "–"
    n = int(n)
    text = f"{n:,} B"
    size = float(abs(n))
    for unit in ("KiB", "MiB", "GiB", "TiB"):
        if size < 1024:
            break
        size /= 1024
        if size < 1024 or unit == "TiB":
            return f"{text} ({size:.1f} {unit})"
    return text


def short_bytes(n: float) -> str:
    """Axis ticks: ``381.5 MiB``, ``12 B``."""
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(size) < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GiB"


def fmt_shape(shape: Any) -> str:
    if shape is None:
        return ""
    return "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def norm_of(value: Any) -> float | None:
    """The Euclidean norm of nested numeric lists (None for a summary string)."""
    total = 0.0
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, list):
            stack.extend(v)
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            total += float(v) * float(v)
        else:
            return None
    return math.sqrt(total)


def statement_line(state: dict[str, Any], index: int | None) -> int | None:
    if index is None:
        return None
    statements = state.get("statements") or []
    if 0 <= index < len(statements):
        return statements[index].get("line")
    return None


def statement_source(state: dict[str, Any], index: int | None) -> str:
    if index is None:
        return ""
    statements = state.get("statements") or []
    if 0 <= index < len(statements):
        return statements[index].get("source", "")
    return ""


def _item(text: str, tooltip: str | None = None, *, align_right: bool = False) -> QTableWidgetItem:
    item = QTableWidgetItem(text)
    item.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable)
    if tooltip:
        item.setToolTip(plain_tooltip(tooltip))
    if align_right:
        item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    return item


def _table(headers: Sequence[str]) -> QTableWidget:
    table = QTableWidget(0, len(headers))
    table.setHorizontalHeaderLabels(list(headers))
    table.verticalHeader().setVisible(False)
    table.verticalHeader().setDefaultSectionSize(22)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.setAlternatingRowColors(False)
    table.setShowGrid(False)
    table.setWordWrap(False)
    table.horizontalHeader().setHighlightSections(False)
    table.horizontalHeader().setDefaultAlignment(
        Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
    )
    table.setStyleSheet(
        "QTableWidget { background: #ffffff; border: none; gridline-color: #eef1f6; }"
        "QTableWidget::item { padding: 0 4px; border-bottom: 1px solid #f1f3f5; }"
        f"QTableWidget::item:selected {{ background: #d0e4ff; color: {theme.TEXT}; }}"
        f"QHeaderView::section {{ background: #f4f6fa; color: {theme.MUTED_TEXT}; border: none;"
        " border-bottom: 1px solid #dfe3ea; padding: 3px 4px; font-weight: 600; font-size: 11px; }"
    )
    return table


def _hint(text: str) -> QLabel:
    label = QLabel(text)
    label.setWordWrap(True)
    label.setStyleSheet(f"color: {theme.MUTED_TEXT}; padding: 4px 6px;")
    return label


# --- tensors ------------------------------------------------------------------------------

#: what the learner reads first (value, grad) comes first; the rest as get_tensor_info prints it
TENSOR_COLUMNS = (
    "name",
    "value",
    "grad",
    "grad_fn",
    "requires_grad",
    "is_leaf",
    "retains_grad",
    "shape",
    "dtype",
    "device",
    "version",
    "storage",
)


class TensorsPanel(QWidget):
    """One row per script variable holding a tensor; leaves first; changes in yellow."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.table = _table(TENSOR_COLUMNS)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        self._previous: dict[str, dict[str, Any]] = {}
        self._rows: dict[str, int] = {}
        self._changed: set[tuple[str, str]] = set()
        self.hint = _hint("No tensors yet: step (F10) through a script to create some.")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.hint)
        layout.addWidget(self.table)

    def set_state(self, state: dict[str, Any] | None) -> None:
        tensors: dict[str, dict[str, Any]] = dict((state or {}).get("tensors") or {})
        order = list(tensors)
        # a paused statement's frame: its locals (``Net.forward.x``) come first, marked
        frame_locals = [str(n) for n in (state or {}).get("frame_locals") or []]
        self._locals = {
            n for n in order if any(n == f or n.startswith(f + ".") for f in frame_locals)
        }
        # the frame's own names (x, h) before paths through them (self.fc1.weight)
        names = sorted(
            order,
            key=lambda n: (
                n not in self._locals,
                n.count(".") if n in self._locals else 0,
                not tensors[n].get("is_leaf"),
                order.index(n),
            ),
        )
        groups: dict[str, list[str]] = {}
        for name in names:
            group = tensors[name].get("storage")
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
                        item.setToolTip(
                            f"{name}: a local variable of the paused frame "
                            f"({frame.rsplit('.', 1)[0]}), listed before the script's globals"
                        )
                changed = before is None or self._cell_changed(key, before, info)
                if changed and self._previous is not None and self._has_previous:
                    item.setBackground(QColor(CHANGED))
                    self._changed.add((name, key))
                if key == "storage" and len(groups.get(info.get("storage") or "", [])) > 1:
                    item.setForeground(QColor(theme.storage_colour(info["storage"])))
                    font = item.font()
                    font.setBold(True)
                    item.setFont(font)
                self.table.setItem(row, col, item)
        self.table.setUpdatesEnabled(True)
        if names and names != self._sized_for:
            # fit the columns when rows come or go (a user's own widths survive value changes)
            self.table.resizeColumnsToContents()
            for col, key in enumerate(TENSOR_COLUMNS[:-1]):
                cap = 260 if key == "value" else 170
                self.table.setColumnWidth(col, min(self.table.columnWidth(col), cap))
            self._sized_for = list(names)
        self.hint.setVisible(not names)
        self._previous = tensors
        self._has_previous = True

    _has_previous = False
    _sized_for: list[str] = []

    def reset_changes(self) -> None:
        """Forget the previous state (after a load): nothing is highlighted next time."""
        self._previous = {}
        self._has_previous = False

    @staticmethod
    def _cell_changed(key: str, before: dict[str, Any], after: dict[str, Any]) -> bool:
        if key == "name":
            return False
        return before.get(key) != after.get(key)

    @staticmethod
    def _texts(info: dict[str, Any], groups: dict[str, list[str]]) -> dict[str, tuple[str, str]]:
        name = info.get("name", "")
        group = info.get("storage") or ""
        sharing = [n for n in groups.get(group, []) if n != name]
        storage = group
        tip = ""
        if sharing:
            storage = f"{group} ⇄ {', '.join(sharing)}"
            tip = f"{name} shares memory with {', '.join(sharing)}: writing one changes the other"
        grad = info.get("grad")
        value = fmt_value(info.get("value"), 2000)
        return {
            "name": (name, ""),
            "shape": (fmt_shape(info.get("shape")), ""),
            "dtype": (str(info.get("dtype", "")), ""),
            "device": (str(info.get("device", "")), ""),
            "requires_grad": (str(info.get("requires_grad")), ""),
            "is_leaf": (str(info.get("is_leaf")), ""),
            "retains_grad": (str(info.get("retains_grad")), ""),
            "grad_fn": (str(info.get("grad_fn") or "None"), ""),
            "grad": (fmt_value(grad, 200), fmt_value(grad, 2000) if grad is not None else ""),
            "version": (
                "—" if info.get("version") is None else str(info["version"]),
                "t._version: in-place writes bump it (inference tensors keep none)",
            ),
            "storage": (storage, tip),
            "value": (value.replace("\n", " ")[:200], value if len(value) > 60 else ""),
        }

    # test and inspector helpers
    def names(self) -> list[str]:
        return sorted(self._rows, key=self._rows.__getitem__)

    def is_local(self, name: str) -> bool:
        """True for a local of the paused frame (listed first, tinted blue)."""
        return name in self._locals

    _locals: set[str] = set()

    def cell(self, name: str, column: str) -> str:
        item = self.table.item(self._rows[name], TENSOR_COLUMNS.index(column))
        return item.text() if item else ""

    def is_highlighted(self, name: str, column: str) -> bool:
        return (name, column) in self._changed


# --- a small plot -------------------------------------------------------------------------


@dataclass
class Series:
    name: str
    colour: str
    points: list[tuple[str, float]]  # (x label, y)
    style: str = "step"  # "step", "line" or "bar"


class MiniPlot(QWidget):
    """A compact plot painted with QPainter: step/line series and bars over labelled x slots."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.series: list[Series] = []
        self.y_title = ""
        self.empty_text = "nothing to plot yet"
        self.y_format: Callable[[float], str] = fmt_number
        self.markers: dict[int, str] = {}  # x slot -> label drawn under the axis (e.g. "zero")
        self.drawn_labels: list[QRectF] = []
        self.drawn_legend: list[tuple[QRectF, str]] = []
        self.binary_units = False  # ticks at round KiB/MiB/GiB values
        self.setMinimumHeight(120)

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt override
        return QSize(320, 160)

    def set_series(self, series: list[Series], y_title: str = "") -> None:
        self.series = series
        self.y_title = y_title
        self.update()

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt override
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        p.fillRect(self.rect(), QColor("#ffffff"))
        font = theme.label_font(10)
        p.setFont(font)
        fm = p.fontMetrics()
        slots = max((len(s.points) for s in self.series), default=0)
        values = [y for s in self.series for _, y in s.points if math.isfinite(y)]
        if not slots or not values:
            p.setPen(QColor(theme.HINT_TEXT))
            p.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, self.empty_text)
            p.end()
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
        right, bottom = 12, 26
        # the legend: a grid of at most two rows, names shortened (with "…") to fit
        # their column rather than cut off at the edge or pushing the plot away
        legend: list[tuple[float, int, Series, str]] = []
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
        top = 22 + 14 * legend_rows
        plot = QRectF(
            left, top, max(self.width() - left - right, 10), max(self.height() - top - bottom, 10)
        )

        def ypos(v: float) -> float:
            return plot.bottom() - (v - lo) / (hi - lo) * plot.height()

        slot_w = plot.width() / slots

        def xpos(i: int) -> float:
            return plot.left() + slot_w * (i + 0.5)

        # grid and y ticks (a label only where it clears the one before: a short plot)
        last_label_y = math.inf
        for t in ticks:
            y = ypos(t)
            p.setPen(QPen(QColor("#eef1f6"), 1))
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
        p.setPen(QPen(QColor("#c5ccd6"), 1))
        p.drawLine(QPointF(plot.left(), ypos(0)), QPointF(plot.right(), ypos(0)))
        p.drawLine(QPointF(plot.left(), plot.top()), QPointF(plot.left(), plot.bottom()))
        # title
        p.setPen(QColor(theme.MUTED_TEXT))
        title_font = theme.label_font(10, bold=True)
        p.setFont(title_font)
        p.drawText(QRectF(left, 2, plot.width(), 16), Qt.AlignmentFlag.AlignLeft, self.y_title)
        p.setFont(font)
        # x labels (thinned when crowded)
        labels = next(
            (s.points for s in self.series if len(s.points) == slots), self.series[0].points
        )
        step = max(1, math.ceil(slots / max(1, plot.width() / 46)))
        for i, (label, _) in enumerate(labels):
            if i % step:
                continue
            colour = ERROR_TEXT if i in self.markers else theme.MUTED_TEXT
            p.setPen(QColor(colour))
            text = self.markers.get(i, label)
            p.drawText(
                QRectF(xpos(i) - slot_w / 2 - 20, plot.bottom() + 4, slot_w + 40, 16),
                Qt.AlignmentFlag.AlignHCenter,
                text,
            )
        # series
        bars = [s for s in self.series if s.style == "bar"]
        bar_w = min(slot_w * 0.7, 28) / max(1, len(bars))
        for b, s in enumerate(bars):
            p.setPen(Qt.PenStyle.NoPen)
            p.setBrush(QColor(s.colour))
            for i, (_, y) in enumerate(s.points):
                x0 = xpos(i) - bar_w * len(bars) / 2 + b * bar_w
                r = QRectF(x0, min(ypos(y), ypos(0)), bar_w - 1, abs(ypos(y) - ypos(0)))
                p.drawRect(r)
        # value labels drawn so far: no two may overlap, and none may cover a point
        placed: list[QRectF] = []
        dots = [
            QRectF(xpos(i) - 5, ypos(y) - 5, 10, 10)
            for s in self.series if s.style != "bar"
            for i, (_, y) in enumerate(s.points) if math.isfinite(y)
        ]
        for s in self.series:
            if s.style == "bar" or not s.points:
                continue
            colour = QColor(s.colour)
            path = QPainterPath()
            for i, (_, y) in enumerate(s.points):
                pt = QPointF(xpos(i), ypos(y))
                if i == 0:
                    path.moveTo(pt)
                elif s.style == "step":
                    path.lineTo(QPointF(xpos(i), path.currentPosition().y()))
                    path.lineTo(pt)
                else:
                    path.lineTo(pt)
            p.setBrush(Qt.BrushStyle.NoBrush)
            p.setPen(QPen(colour, 2))
            p.drawPath(path)
            p.setBrush(QBrush(colour))
            label_every = max(1, math.ceil(len(s.points) / max(1, plot.width() / 46)))
            for i, (_, y) in enumerate(s.points):
                pt = QPointF(xpos(i), ypos(y))
                p.setPen(QPen(QColor("#ffffff"), 1.5))
                p.drawEllipse(pt, 4, 4)
                if s.style == "step" and i % label_every == 0:
                    text = self.y_format(y)
                    w = fm.horizontalAdvance(text) + 4
                    box = QRectF(pt.x() - w / 2, pt.y() - 20, w, 14)
                    def blocked(box: QRectF) -> bool:
                        return any(box.intersects(b) for b in placed) or any(
                            box.intersects(d) for d in dots
                        )

                    if blocked(box):
                        box.moveTop(pt.y() + 6)  # below the point, if that is free
                    if blocked(box) or not plot.adjusted(-8, -20, 8, 20).contains(box):
                        continue  # no room: this point goes unlabelled (the table lists it)
                    placed.append(box)
                    p.setPen(colour)
                    p.drawText(box, Qt.AlignmentFlag.AlignHCenter, text)
        # legend, under the title
        for x, row, s, name in legend:
            y = 21 + 14 * row
            p.setPen(Qt.PenStyle.NoPen)
            p.setBrush(QColor(s.colour))
            p.drawRect(QRectF(x, y, 9, 9))
            p.setPen(QColor(theme.MUTED_TEXT))
            p.drawText(QPointF(x + 13, y + 9), name)
        p.end()
        #: what the last paint drew (tests read them): value-label boxes, legend entries
        self.drawn_labels = placed
        self.drawn_legend = [
            (QRectF(x, 21 + 14 * row, fm.horizontalAdvance(name) + 13, 10), name)
            for x, row, _, name in legend
        ]


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
    "zero": "zeroed",
    "set": "assigned",
    "none": "set to None",
}


class AccumulationPanel(QWidget):
    """Each leaf's .grad after every backward pass, zero_() and assignment, plus a plot."""

    #: what the table and plot show now (a state that changes none of it redraws nothing)
    _shown_key: Any = None

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.table = _table(("leaf", "after", "line", ".grad"))
        self.table.horizontalHeader().setStretchLastSection(True)
        self.plot = MiniPlot()
        self.plot.empty_text = "x.grad after each backward() shows here"
        self.hint = _hint(
            "backward() adds into .grad: run it twice (retain_graph=True) and the value doubles."
        )
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self.table)
        splitter.addWidget(self.plot)
        splitter.setSizes([140, 160])
        splitter.setChildrenCollapsible(False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.hint)
        layout.addWidget(splitter)
        self._rows: list[dict[str, Any]] = []

    def set_state(self, state: dict[str, Any] | None) -> None:
        state = state or {}
        events: dict[str, list[dict[str, Any]]] = state.get("grad_events") or {}
        key = (events, [s.get("line") for s in state.get("statements") or []],
               len(state.get("backward_passes") or []))
        if key == self._shown_key:
            return  # a step that changed no gradient: the table and plot stand
        self._shown_key = key
        self._rows = []
        for name, items in events.items():
            for number, event in enumerate(items):
                self._rows.append({"leaf": name, "order": number, **event})
        self.table.setRowCount(len(self._rows))
        for row, event in enumerate(self._rows):
            kind = event.get("kind", "")
            after = GRAD_EVENT_TEXT.get(kind, kind)
            line = statement_line(state, event.get("statement"))
            passes = state.get("backward_passes") or []
            if kind == "backward" and event.get("pass_index") is not None:
                after = f"backward #{event['pass_index'] + 1}"
                if 0 <= event["pass_index"] < len(passes):
                    bpass = passes[event["pass_index"]]
                    # the backward() call's own line (inside a loop body too)
                    line = bpass.get("line") or line
                    if bpass.get("iteration") is not None:
                        after += f" (iteration {bpass['iteration']})"
            items = [
                _item(event["leaf"]),
                _item(after),
                _item(str(line) if line else "", statement_source(state, event.get("statement"))),
                _item(fmt_value(event.get("value"), 200), fmt_value(event.get("value"), 2000)),
            ]
            for col, item in enumerate(items):
                if kind == "zero":
                    item.setBackground(QColor(ZERO_ROW))
                    font = item.font()
                    font.setItalic(True)
                    item.setFont(font)
                self.table.setItem(row, col, item)
        self.table.resizeColumnsToContents()
        self.hint.setVisible(not self._rows)
        self._plot(events)

    def _plot(self, events: dict[str, list[dict[str, Any]]]) -> None:
        series = []
        any_norm = False
        markers: dict[int, str] = {}
        for n, (name, items) in enumerate(events.items()):
            points = []
            for i, event in enumerate(items):
                value = event.get("value")
                y = scalar_of(value)
                if y is None and value is not None:
                    y = norm_of(value)
                    any_norm = True
                if y is None:
                    y = 0.0
                kind = event.get("kind")
                label = (
                    f"#{event['pass_index'] + 1}" if event.get("pass_index") is not None else kind
                )
                if kind == "zero":
                    markers[i] = "zero"
                points.append((label, y))
            colour = theme.STORAGE_COLOURS[(n + 5) % len(theme.STORAGE_COLOURS)]
            series.append(Series(f"{name}.grad", colour, points, "step"))
        self.plot.markers = markers
        title = "‖.grad‖ (norm: non-scalar grads)" if any_norm else ".grad after each event"
        self.plot.set_series(series, title)

    def rows(self) -> list[tuple[str, str, str]]:
        """(leaf, after, .grad) per row, as shown."""
        out = []
        for row in range(self.table.rowCount()):
            out.append(tuple(self.table.item(row, c).text() for c in (0, 1, 3)))
        return out

    def values(self, leaf: str) -> list[str]:
        return [v for name, _, v in self.rows() if name == leaf]


# --- memory ---------------------------------------------------------------------------------


class MemoryPanel(QWidget):
    """Bytes per statement: allocated by it, held by the graph, alive in variables."""

    #: what the table shows now (the same figures again redraw nothing)
    _shown_key: Any = None

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.table = _table(())
        self.plot = MiniPlot()
        self.plot.y_format = short_bytes
        self.plot.binary_units = True
        self.plot.empty_text = "allocated bytes per statement show here"
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(self.table)
        splitter.addWidget(self.plot)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([640, 280])
        splitter.setChildrenCollapsible(False)
        self.plot.setMaximumWidth(420)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(splitter)
        self._columns: list[str] = []

    def set_state(self, state: dict[str, Any] | None) -> None:
        state = state or {}
        memory = state.get("memory") or {}
        key = (memory, state.get("device"), bool(state.get("read_only")),
               [(s.get("line"), s.get("source")) for s in state.get("statements") or []])
        if key == self._shown_key:
            return  # the same figures: the table stands
        self._shown_key = key
        rows = memory.get("statements") or []
        totals = memory.get("totals") or {}
        cuda = str(state.get("device", "cpu")).startswith("cuda")
        columns = ["line", "statement", "allocated", "held by graph", "live tensors"]
        keys = ["allocated_bytes", "saved_bytes", "live_bytes"]
        if cuda:
            columns += ["cuda allocated", "cuda peak"]
            keys += ["cuda_allocated", "cuda_max_allocated"]
        if columns != self._columns:
            self.table.setColumnCount(len(columns))
            self.table.setHorizontalHeaderLabels(columns)
            self._columns = columns
        tips = {
            "allocated_bytes": "bytes this statement allocated (new tensors, outputs)",
            "saved_bytes": "bytes the autograd graph holds in saved tensors after it",
            "live_bytes": "bytes of all tensors bound to variables after it",
        }
        # A snapshot has no statements, only what its graph holds now: show that row alone.
        show_totals = bool(rows) or bool(state.get("read_only"))
        self.table.setRowCount(len(rows) + (1 if show_totals else 0))
        for r, row in enumerate(rows):
            source = statement_source(state, row.get("index")).splitlines()
            self.table.setItem(r, 0, _item(str(row.get("line", ""))))
            self.table.setItem(r, 1, _item(source[0] if source else "", "\n".join(source)))
            for c, key in enumerate(keys, start=2):
                item = _item(fmt_bytes(row.get(key)), tips.get(key), align_right=True)
                if key == "allocated_bytes" and row.get(key):
                    font = item.font()
                    font.setBold(True)
                    item.setFont(font)
                self.table.setItem(r, c, item)
        if show_totals:
            r = len(rows)
            total_items = [_item(""), _item("total / now" if rows else "snapshot (now)")]
            total_items.append(
                _item(
                    fmt_bytes(totals.get("allocated_bytes")),
                    "sum over statements",
                    align_right=True,
                )
            )
            total_items.append(_item(fmt_bytes(totals.get("saved_bytes")), "now", align_right=True))
            total_items.append(_item(fmt_bytes(totals.get("live_bytes")), "now", align_right=True))
            if cuda:
                total_items.append(_item(fmt_bytes(totals.get("cuda_allocated")), align_right=True))
                total_items.append(
                    _item(fmt_bytes(totals.get("cuda_max_allocated")), align_right=True)
                )
            for c, item in enumerate(total_items):
                item.setBackground(QColor(TOTAL_ROW))
                font = item.font()
                font.setBold(True)
                item.setFont(font)
                self.table.setItem(r, c, item)
        self.table.resizeColumnsToContents()
        self.table.setColumnWidth(1, min(self.table.columnWidth(1), 200))
        points_alloc = [
            (str(row.get("line", "")), float(row.get("allocated_bytes") or 0)) for row in rows
        ]
        points_live = [
            (str(row.get("line", "")), float(row.get("live_bytes") or 0)) for row in rows
        ]
        self.plot.set_series(
            [
                Series("allocated", "#4c6ef5", points_alloc, "bar"),
                Series("live", "#f08c00", points_live, "line"),
            ]
            if rows
            else [],
            "bytes per statement (x: line)",
        )

    def row_texts(self) -> list[list[str]]:
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
        self.hint = _hint(
            "Tick a module (or double-click it) to collapse its nodes into one box. "
            "Module names come from gradviz.record(model)."
        )
        self.tree = QTreeWidget()
        self.tree.setObjectName("modulesTree")
        self.tree.setColumnCount(2)
        self.tree.setHeaderLabels(["module", "nodes"])
        self.tree.setExpandsOnDoubleClick(False)
        self.tree.setUniformRowHeights(True)
        self.tree.setStyleSheet("QTreeWidget { background: #ffffff; border: none; }")
        header = self.tree.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        self.chains_box = QCheckBox("Collapse linear chains")
        self.chains_box.setObjectName("chainsBox")
        self.chains_box.setToolTip("Draw each run of three or more one-to-one ops as one box")
        self.collapse_all_button = QPushButton("Collapse all")
        self.collapse_all_button.setToolTip(
            "Collapse the top-level blocks (layers.0, layers.1, …) into one box each"
        )
        self.expand_all_button = QPushButton("Expand all")
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
                plain_tooltip(f"{module} (inside collapsed {hidden_by})" if hidden_by else module),
            )

    def _update_enabled(self) -> None:
        has = bool(self._items)
        self.collapse_all_button.setEnabled(has)
        self.expand_all_button.setEnabled(has and bool(self._collapsed))
        self.tree.setVisible(has)
        self.hint.setText(
            "Tick a module (or double-click it) to collapse its nodes into one box."
            if has
            else "No modules in this graph yet. Nodes built by an nn.Module the script calls "
            "(or one recorded with gradviz.record(model)) are tagged with its name and can "
            "be collapsed here."
        )

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
    "grad_fn": "grad_fn: a backward op recorded by the forward pass",
    "accumulate_grad": "AccumulateGrad: adds the incoming gradient into a leaf's .grad",
    "tensor": "tensor bound to a variable",
    "saved": "saved tensor: kept by a grad_fn for its backward formula",
    "group": "collapsed group: one box for many nodes (double-click it to expand)",
}


_esc = esc  # every script-derived value in the panels' HTML goes through it


class InspectorPanel(QWidget):
    """Everything about the node selected on the canvas, including its chain-rule product."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.browser = SafeTextBrowser()
        self.browser.setStyleSheet(
            "QTextBrowser { background: #ffffff; border: none; padding: 6px; }"
        )
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.browser)
        self.state: dict[str, Any] = {}
        self.node_id: str | None = None
        #: the backward pass being stepped on the canvas (preferred over the latest one)
        self.focus_pass: int | None = None
        #: group nodes drawn on the canvas (collapsed modules and chains) -> their attributes
        self.groups: dict[str, dict[str, Any]] = {}
        #: the search text, so a group can say which of its members match
        self.search_text = ""
        self._empty()

    def _empty(self) -> None:
        self.browser.setHtml(
            f"<p style='color:{theme.MUTED_TEXT}'>Click a node on the graph to see its op, "
            "saved tensors, the gradients it received and passed on, and the chain rule "
            "that produced them. Double-click a node to find its statement.</p>"
        )

    def text(self) -> str:
        return self.browser.toPlainText()

    def set_state(self, state: dict[str, Any] | None) -> None:
        self.state = state or {}
        nodes = {n["id"] for n in (self.state.get("graph") or {}).get("nodes", [])}
        if self.node_id and (self.node_id in nodes or self.node_id in self.groups):
            self.show_node(self.node_id)
        else:
            self.node_id = None
            self._empty()

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
        graph = self.state.get("graph") or {}
        nodes = {n["id"]: n for n in graph.get("nodes", [])}
        if node_id in self.groups:
            self.browser.setHtml(self._group_html(node_id, self.groups[node_id], nodes))
            return
        node = nodes.get(node_id)
        if node is None:
            self._empty()
            return
        edges = graph.get("edges", [])
        self.browser.setHtml(self._html(node, nodes, edges))

    # --- building the page ---------------------------------------------------------------

    def _html(
        self, node: dict[str, Any], nodes: dict[str, Any], edges: list[dict[str, Any]]
    ) -> str:
        state = self.state
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
        parts.append(
            f"<h3><span style='color:{style.stroke}'>■</span>"
            f" {_esc(node.get('label', node['id']))}</h3>"
            f"<div class='k'>{_esc(KIND_TEXT.get(kind, kind))} · id {_esc(node['id'])}</div>"
        )
        rows: list[tuple[str, str]] = []
        if node.get("vars"):
            rows.append(("variables", ", ".join(node["vars"])))
        if "shape" in node:
            rows.append(("shape", fmt_shape(node.get("shape"))))
        for key in ("dtype", "device", "storage"):
            if node.get(key):
                rows.append((key, str(node[key])))
        tensor = self._tensor_for(node)
        if tensor:
            for key in ("requires_grad", "is_leaf", "retains_grad", "grad_fn", "version"):
                rows.append((key, str(tensor.get(key))))
            rows.append(("value", fmt_value(tensor.get("value"))))
            rows.append(("grad", fmt_value(tensor.get("grad"))))
        elif kind == "saved" and "value" in node:
            rows.append(("value", fmt_value(node.get("value"))))
        if kind == "saved" and node.get("stale") is True:
            rows.append(
                (
                    "stale",
                    f"modified in place after it was saved: its version is "
                    f"{node.get('version')}, the saved one was {node.get('expected_version')}; "
                    "backward through this node fails",
                )
            )
        idx = node.get("statement")
        line = statement_line(state, idx)
        if line:
            rows.append(("created by", f"line {line}: {statement_source(state, idx)}"))
        parts.append(self._rows(rows))

        if kind == "grad_fn":
            saved = [
                nodes[e["target"]]
                for e in edges
                if e["source"] == node["id"] and e.get("kind") == "saved" and e["target"] in nodes
            ]
            parts.append("<div class='sec'>Saved tensors</div>")
            if node.get("freed"):
                parts.append(
                    f"<div style='color:{theme.FREED}'>freed: backward() ran without "
                    "retain_graph=True, "
                    "so this node's saved tensors are gone (a second backward fails)</div>"
                )
            elif saved:
                srows = []
                for s in saved:
                    owner = f" — same memory as {', '.join(s['vars'])}" if s.get("vars") else ""
                    if s.get("stale") is True:
                        owner += (
                            f" — STALE (version {s.get('version')}, saved at version "
                            f"{s.get('expected_version')})"
                        )
                    srows.append(
                        (
                            s.get("label", ""),
                            f"{fmt_value(s.get('value'))}  {fmt_shape(s.get('shape'))}{owner}",
                        )
                    )
                parts.append(self._rows(srows))
            else:
                parts.append("<div class='k'>none</div>")
            scalars = node.get("saved") or {}
            if scalars:
                parts.append("<div class='sec'>Saved values</div>")
                parts.append(self._rows([(k, fmt_value(v)) for k, v in scalars.items()]))

        parts.extend(self._backward_html(node, nodes, edges))
        return "".join(parts)

    def _group_html(
        self, group_id: str, group: dict[str, Any], nodes: dict[str, dict[str, Any]]
    ) -> str:
        members = [nodes[m] for m in group.get("members") or [] if m in nodes]
        chain = group_id.startswith("c:")
        style = theme.NODE_STYLES["group"]
        title = group.get("label", group_id)
        what = "linear chain of ops" if chain else f"module {group.get('module', '')}"
        parts = [
            f"<style>.k{{color:{theme.MUTED_TEXT};}} td{{padding:1px 8px 1px 0;"
            f"vertical-align:top;}} .sec{{color:{theme.MUTED_TEXT};font-weight:600;"
            "margin-top:8px;}</style>",
            f"<h3 style='margin:0 0 2px 0'><span style='color:{style.stroke}'>■</span>"
            f" {_esc(title)}</h3>",
            f"<div class='k'>collapsed {_esc(what)} · id {_esc(group_id)}</div>",
        ]
        kinds = Counter(str(m.get("kind", "?")) for m in members)
        rows = [("nodes", str(group.get("count", len(members))))]
        if group.get("module"):
            rows.insert(0, ("module", str(group["module"])))
        rows.append(("of which", ", ".join(f"{n} {k}" for k, n in kinds.most_common())))
        params = [v for m in members if m.get("kind") == "tensor" for v in (m.get("vars") or [])]
        if params:
            more = f", … ({len(params)} in all)" if len(params) > 8 else ""
            shown = ", ".join(params[:8]) + more
            rows.append(("tensors", shown))
        parts.append(self._rows(rows))
        ops = Counter(str(m.get("label", "?")) for m in members if m.get("kind") == "grad_fn")
        if ops:
            parts.append("<div class='sec'>Ops inside</div>")
            parts.append(self._rows([(op, f"× {n}") for op, n in ops.most_common(12)]))
            if len(ops) > 12:
                parts.append(f"<div class='k'>… and {len(ops) - 12} more kinds of op</div>")
        needle = self.search_text.strip().lower()
        if needle:
            hits = [m for m in members if needle in _search_text(m)]
            if hits:
                parts.append(f"<div class='sec'>Matches for '{_esc(self.search_text)}'</div>")
                parts.append(
                    self._rows([(str(m.get("label", "")), m.get("id", "")) for m in hits[:8]])
                )
        parts.append(
            "<p class='k'>Double-click the box (or right-click › Expand) to show these nodes.</p>"
        )
        return "".join(parts)

    @staticmethod
    def _rows(rows: list[tuple[str, str]]) -> str:
        body = "".join(
            f"<tr><td class='k'>{_esc(k)}</td><td class='mono'>{_esc(v)}</td></tr>" for k, v in rows
        )
        return f"<table>{body}</table>"

    def _tensor_for(self, node: dict[str, Any]) -> dict[str, Any] | None:
        if node.get("kind") != "tensor":
            return None
        tensors = self.state.get("tensors") or {}
        for name in node.get("vars") or [node.get("label")]:
            if name in tensors:
                return tensors[name]
        return None

    def _autograd_node(self, node: dict[str, Any], edges: list[dict[str, Any]]) -> str | None:
        """The node the engine runs for ``node``.

        Itself, a tensor's grad_fn or a leaf's AccumulateGrad.
        """
        kind = node.get("kind")
        if kind in ("grad_fn", "accumulate_grad"):
            return node["id"]
        if kind == "tensor":
            for e in edges:
                if e.get("kind") == "output" and e["source"] == node["id"]:
                    return e["target"]
                if e.get("kind") == "leaf" and e["target"] == node["id"]:
                    return e["source"]
        return None

    def _backward_html(
        self, node: dict[str, Any], nodes: dict[str, Any], edges: list[dict[str, Any]]
    ) -> list[str]:
        target = self._autograd_node(node, edges)
        passes = self.state.get("backward_passes") or []
        if target is None:
            return []
        found = None
        order = list(range(len(passes) - 1, -1, -1))
        if self.focus_pass is not None and 0 <= self.focus_pass < len(passes):
            order.remove(self.focus_pass)
            order.insert(0, self.focus_pass)
        for pi in order:
            for step in passes[pi].get("steps", []):
                if step.get("node") == target:
                    found = (pi, step)
                    break
            if found:
                break
        if not found:
            if passes:
                return [
                    "<div class='sec'>Backward</div>"
                    "<div class='k'>not run by any backward pass yet</div>"
                ]
            return []
        pi, step = found
        bpass = passes[pi]
        # the call's own line (inside a loop body too), else its statement's
        line = bpass.get("line") or statement_line(self.state, bpass.get("statement"))
        where = f" (line {line}" if line else ""
        if bpass.get("iteration") is not None:
            where += (", " if where else " (") + f"iteration {bpass['iteration']}"
        where += ")" if where else ""
        out = [f"<div class='sec'>Backward pass #{pi + 1}{_esc(where)}</div>"]
        rows = [("grad in", ", ".join(fmt_value(g) for g in step.get("grad_outputs", [])) or "–")]
        labels = {n: nodes[n].get("label", n) for n in nodes}
        for g, t in zip(step.get("grad_inputs", []), step.get("targets", [])):
            if t is None:
                continue
            rows.append((f"grad out → {labels.get(t, t)}", fmt_value(g)))
        out.append(self._rows(rows))
        chain = chain_rule(bpass, target)
        if chain:
            out.append("<div class='sec'>Chain rule</div>")
            out.append("<div class='mono'>" + "<br>".join(_esc(c) for c in chain) + "</div>")
        return out


# --- output ---------------------------------------------------------------------------------


@dataclass
class OutputEntry:
    line: int | None
    kind: str  # "output", "value", "warning", "error", "note"
    text: str
    detail: str = ""

    def plain(self) -> str:
        prefix = f"[line {self.line}] " if self.line else ""
        return prefix + self.text + (f"\n{self.detail}" if self.detail else "")


class OutputPanel(QWidget):
    """print output, expression values, warnings and errors, each with its line number."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.browser = SafeTextBrowser()
        font = QFont("DejaVu Sans Mono")
        font.setStyleHint(QFont.StyleHint.Monospace)
        font.setPointSize(9)
        self.browser.setFont(font)
        self.browser.setStyleSheet(
            "QTextBrowser { background: #ffffff; border: none; padding: 4px; }"
        )
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.browser)
        self._entries: list[OutputEntry] = []
        self._notes: list[OutputEntry] = []

    def entries(self) -> list[OutputEntry]:
        return list(self._entries) + list(self._notes)

    def text(self) -> str:
        return self.browser.toPlainText()

    def add_note(self, text: str, line: int | None = None, kind: str = "note") -> None:
        """A message from the window (stopped, restarted); kept until the next reset/load."""
        self._notes.append(OutputEntry(line, kind, text))
        self._render()

    def clear_notes(self) -> None:
        self._notes = []
        self._render()

    def set_state(self, state: dict[str, Any] | None) -> None:
        state = state or {}
        entries: list[OutputEntry] = []
        parse_error = state.get("parse_error")
        if parse_error:
            entries.append(
                OutputEntry(
                    parse_error.get("line"),
                    "error",
                    f"{parse_error.get('type', 'SyntaxError')}: {parse_error.get('message', '')}",
                    "Nothing ran: fix the script and press Step again.",
                )
            )
        for r in state.get("results") or []:
            line = r.get("line")
            out = (r.get("output") or "").rstrip("\n")
            if out:
                entries.append(OutputEntry(line, "output", out))
            if r.get("value") is not None:
                entries.append(OutputEntry(line, "value", f"= {r['value']}"))
            for w in r.get("warnings") or []:
                entries.append(OutputEntry(line, "warning", w))
            err = r.get("error")
            if err:
                why = err.get("explanation")
                entries.append(
                    OutputEntry(
                        err.get("line") or line,
                        "error",
                        f"{err.get('type')}: {err.get('message')}",
                        f"Why: {why}" if why else "",
                    )
                )
        self._entries = entries
        self._render()

    def _render(self) -> None:
        colours = {
            "output": theme.TEXT,
            "value": "#1864ab",
            "warning": WARNING_TEXT,
            "error": ERROR_TEXT,
            "note": theme.MUTED_TEXT,
        }
        blocks = []
        for e in self.entries():
            prefix = _esc(f"line {e.line}" if e.line else "gradviz")
            tag = {"warning": "warning", "error": "error"}.get(e.kind, "")
            body = _esc(e.text).replace("\n", "<br>")
            if e.kind == "note":
                body = f"<i>{body}</i>"
            if tag:
                body = f"<b>{tag}:</b> {body}"
            detail = (
                f"<br><span style='color:{theme.TEXT}'>{_esc(e.detail)}</span>" if e.detail else ""
            )
            blocks.append(
                f"<table cellspacing=0 cellpadding=1 width='100%'><tr>"
                f"<td width=62 style='color:{theme.HINT_TEXT}'>{prefix}</td>"
                f"<td style='color:{colours.get(e.kind, theme.TEXT)}'>{body}{detail}</td>"
                "</tr></table>"
            )
        if not blocks:
            blocks.append(
                f"<span style='color:{theme.HINT_TEXT}'>print() output, expression values, "
                "warnings "
                "and errors appear here, each with its line number.</span>"
            )
        self.browser.setHtml("".join(blocks))
        bar = self.browser.verticalScrollBar()
        bar.setValue(bar.maximum())
