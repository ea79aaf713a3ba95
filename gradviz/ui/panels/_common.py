"""Shared by the panels: row tints, reading the state, table cells that fit their text."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QAbstractItemView, QLabel, QTableWidget, QTableWidgetItem, QWidget

from ...app.models import AppState
from .. import theme
from ..i18n import translate
from ..text import esc, plain_tooltip

_esc = esc  # every script-derived value in the panels' HTML goes through it

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


class _PanelTable(QTableWidget):
    """A panel's table whose viewport fills its own background (the style sheet's
    ``palette(base)``), so Qt counts it opaque: a changed cell then repaints the cell,
    not the dock and table frame under it as well (a fifth of a millisecond a paint,
    twice a lesson step). The style sheet turns the fill off each time it polishes
    the table; it is turned back on after."""

    def event(self, event: QEvent) -> bool:
        handled = super().event(event)
        if event.type() in (QEvent.Type.Polish, QEvent.Type.StyleChange):
            self.viewport().setAutoFillBackground(True)
        return handled


def _table(headers: Sequence[str], name: str = "") -> QTableWidget:
    table = _PanelTable(0, len(headers))
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


def hidden_in_shown_window(widget: QWidget) -> bool:
    """True while ``widget``'s window is on screen but the widget is not (a dock tab
    behind another: Qt keeps it "visible" with nothing of it showing; a closed dock):
    what it would draw now nobody sees."""
    return widget.window().isVisible() and (
        not widget.isVisible() or widget.visibleRegion().isEmpty()
    )


class StateWhenShown:
    """A panel's ``set_state`` that waits while the panel is hidden in a shown window
    (a dock tab behind another): the last state is kept and drawn when the panel
    shows, or when something reads the panel (:meth:`shown_now`; its dock's
    visibilityChanged calls it, see gradviz.ui.window_layout). A panel outside a
    shown window (tests, a window not shown yet) draws at once, as before."""

    _waiting: Any = None
    _has_waiting = False

    def set_state(self, state: Any) -> None:
        if hidden_in_shown_window(self):  # type: ignore[arg-type]
            self._waiting, self._has_waiting = state, True
            return
        self._waiting, self._has_waiting = None, False
        self._draw_state(state)

    def _draw_state(self, state: Any) -> None:
        raise NotImplementedError

    def shown_now(self) -> None:
        """Draw the state that waited (the panel shows, or something reads it)."""
        if self._has_waiting:
            state = self._waiting
            self._waiting, self._has_waiting = None, False
            self._draw_state(state)


# --- tensors ------------------------------------------------------------------------------
