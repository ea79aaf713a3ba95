"""The timeline under the canvas: every step the user took, each one clickable.

The steps themselves (and what each one keeps) are :mod:`gradviz.app.timeline`;
this widget only draws them and says which one was picked.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QListWidget, QListWidgetItem, QWidget

from gradviz.app.timeline import TimelineStep

from . import theme
from .i18n import translate


class TimelineBar(QWidget):
    """A strip of steps; clicking one shows that moment (``step_picked(index)``)."""

    step_picked = Signal(int)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("timeline")
        self.list = QListWidget()
        self.list.setObjectName("timelineList")
        self.list.setFlow(QListWidget.Flow.LeftToRight)
        self.list.setWrapping(False)
        self.list.setHorizontalScrollMode(QListWidget.ScrollMode.ScrollPerPixel)
        self.list.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.setFixedHeight(44)
        self.list.setSpacing(2)
        self.list.setStyleSheet(
            "QListWidget { background: palette(window); border: none;"
            " border-top: 1px solid palette(midlight); }"
            "QListWidget::item { border: 1px solid palette(mid); border-radius: 3px;"
            " padding: 1px 6px; color: palette(text); background: palette(base); }"
            "QListWidget::item:selected { background: palette(highlight);"
            " color: palette(highlighted-text); border-color: palette(highlight); }"
        )
        self.list.itemClicked.connect(self._on_list_item_clicked)
        self.title = QLabel(translate("Timeline", "Timeline"))
        self.title.setStyleSheet(
            f"color: {theme.MUTED_TEXT}; font-weight: 600; padding: 0 6px 0 10px;"
            " background: palette(window); border-top: 1px solid palette(midlight);"
        )
        self.title.setFixedHeight(44)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.title)
        layout.addWidget(self.list, 1)

    def set_steps(self, steps: list[TimelineStep], current: int) -> None:
        """Show ``steps`` with step ``current`` picked. Only the rows that differ from what
        the list shows are written (a step adds one row: rebuilding every row each step
        cost more the longer the session, and redrew the whole strip)."""
        rows = [
            (
                f"{number}  {step.label}",
                step.tip if step.state is not None
                else step.tip + translate("Timeline", " (not kept: replays)"),
                step.paused,
            )
            for number, step in enumerate(steps, start=1)
        ]
        lst = self.list
        lst.blockSignals(True)
        while lst.count() > len(rows):
            lst.takeItem(lst.count() - 1)
        shown = self._rows
        for index, row in enumerate(rows):
            if index < len(shown) and index < lst.count() and shown[index] == row:
                continue
            item = lst.item(index) if index < lst.count() else None
            if item is None:
                item = QListWidgetItem()
                _fill(item, *row)
                lst.addItem(item)
            else:
                _fill(item, *row)
        self._rows = rows
        if 0 <= current < len(steps):
            if lst.currentRow() != current:
                lst.setCurrentRow(current)
            lst.scrollToItem(lst.item(current))
        elif lst.currentRow() != -1:
            lst.setCurrentRow(-1)
        lst.blockSignals(False)

    #: what each row shows: (text, tooltip, paused)
    _rows: list[tuple[str, str, bool]] = []

    def labels(self) -> list[str]:
        return [self.list.item(i).text() for i in range(self.list.count())]

    def current(self) -> int:
        return self.list.currentRow()

    def item_rect(self, index: int) -> Any:
        """Where step ``index`` is drawn in the list's viewport (for clicking it)."""
        return self.list.visualItemRect(self.list.item(index))

    def _on_list_item_clicked(self, item: QListWidgetItem) -> None:
        self.step_picked.emit(self.list.row(item))


def _fill(item: QListWidgetItem, text: str, tip: str, paused: bool) -> None:
    """Write one timeline row (a new item or one reused for another step)."""
    item.setText(text)
    item.setToolTip(tip)
    item.setSizeHint(QSize(-1, 30))
    if paused:
        item.setForeground(Qt.GlobalColor.darkYellow)
    else:
        item.setData(Qt.ItemDataRole.ForegroundRole, None)
