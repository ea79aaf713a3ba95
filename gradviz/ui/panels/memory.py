"""The Memory panel: allocated, saved-for-backward and freed bytes, as the kernel counts them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QResizeEvent, QShowEvent
from PySide6.QtWidgets import QSplitter, QTableWidgetItem, QVBoxLayout, QWidget

from ...app.models import AppState
from ...graph.fmt import fmt_bytes, short_bytes
from ...i18n import QT_TRANSLATE_NOOP
from ..i18n import translate
from ._common import TOTAL_ROW, StateWhenShown, _FittedTable, _item, _table, content_width
from .plot import MiniPlot, Series

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


class MemoryPanel(StateWhenShown, QWidget):
    """Bytes per statement: allocated by it, held by the graph, alive in variables.

    Cells read the short form (``3.8 MiB``); the tooltip and :meth:`row_texts` give the
    exact count (``4,000,000 B (3.8 MiB)``). The plot beside the table gives up its
    width first: in a narrow dock it folds away (drag the splitter handle to open it).
    Behind another dock's tab it draws a new state when it shows (StateWhenShown).
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
        super().set_state(state)

    def _draw_state(self, state: AppState | Mapping[str, Any] | None) -> None:
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
        self.shown_now()
        super().showEvent(event)
        self._place_plot()

    def row_texts(self) -> list[list[str]]:
        """Each row's texts with every byte count exact (``4,000,000 B (3.8 MiB)``): what
        the cells show in short form and their tooltips in full."""
        self.shown_now()
        return [list(row) for row in self._full]

    def shown_texts(self) -> list[list[str]]:
        """Each row's texts as the cells show them (byte counts short: ``3.8 MiB``)."""
        self.shown_now()
        out = []
        for r in range(self.table.rowCount()):
            out.append(
                [
                    item.text() if (item := self.table.item(r, c)) is not None else ""
                    for c in range(self.table.columnCount())
                ]
            )
        return out


# --- modules ---------------------------------------------------------------------------------
