"""The Gradient accumulation panel: each leaf's .grad after every backward pass."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QSplitter, QVBoxLayout, QWidget

from ...app.models import AppState
from ...graph.chain_rule import scalar_of
from ...graph.fmt import fmt_value
from ...i18n import QT_TRANSLATE_NOOP
from .. import theme
from ..i18n import translate
from ._common import ZERO_ROW, _hint, _item, _table, norm_of
from .plot import MiniPlot, Series

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
    #: each cell's (text, tooltip, zeroed) as shown, row by row
    _cells: list[tuple[tuple[str, str | None, bool], ...]] = []
    #: (leaf, its n-th event) -> (a .grad value, its cell text, its tooltip), as shown
    _values: dict[tuple[str, int], tuple[Any, str, str]] = {}

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
        #: the columns were fitted to every cell since the font or style last changed
        self._fitted = False

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt override
        if event.type() in (QEvent.Type.FontChange, QEvent.Type.StyleChange):
            self._fitted = False  # the texts measure differently now
        super().changeEvent(event)

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
        cells: list[tuple[tuple[str, str | None, bool], ...]] = []
        values: dict[tuple[str, int], tuple[Any, str, str]] = {}
        seen: dict[str, int] = {}
        for name, event in rows:
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
            # a value formatted once (the rows before a new event keep theirs)
            # by the leaf's n-th event, compared by value: each state decodes its events'
            # values afresh, so an identity check formatted every row again each step
            slot = (name, seen.get(name, 0))
            seen[name] = slot[1] + 1
            known = self._values.get(slot)
            if known is None or (known[0] is not event.value and known[0] != event.value):
                known = (event.value, fmt_value(event.value, 200), fmt_value(event.value, 2000))
            values[slot] = known
            value = known[1]
            zero = kind == "zero"
            cells.append((
                (name, f"{name}.grad", zero),
                (after, None, zero),
                (str(line) if line else "", st.statement_source(event.statement), zero),
                (value, known[2], zero),
            ))  # fmt: skip
            self._rows.append((name, after, value))
        self._values = values
        # only the cells that changed are set (a backward pass adds rows below the others)
        table = self.table
        # rows only added (a step's new events): the columns grow to fit the new cells;
        # other changes fit every column again (Qt measures every cell for that, a
        # millisecond each backward or zero_grad step of a lesson)
        grow_only = 0 < len(self._cells) <= len(rows) and self._fitted
        if table.rowCount() != len(rows):
            table.setRowCount(len(rows))
        shown = self._cells
        written: list[tuple[int, int]] = []
        for row, new_cells in enumerate(cells):
            was = shown[row] if row < len(shown) else ()
            for col, cell in enumerate(new_cells):
                if col < len(was) and was[col] == cell and table.item(row, col) is not None:
                    continue
                text, tip, zero = cell
                item = _item(text, tip)
                if zero:
                    item.setBackground(QColor(ZERO_ROW))
                    font = item.font()
                    font.setItalic(True)
                    item.setFont(font)
                table.setItem(row, col, item)
                written.append((row, col))
        self._cells = cells
        if grow_only:
            model = table.model()
            for row, col in written:
                need = table.sizeHintForIndex(model.index(row, col)).width()
                if need > table.columnWidth(col):
                    table.setColumnWidth(col, need)
        else:
            table.resizeColumnsToContents()
            self._fitted = bool(rows)
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
