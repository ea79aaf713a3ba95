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
        self.list.blockSignals(True)
        self.list.clear()
        for number, step in enumerate(steps, start=1):
            item = QListWidgetItem(f"{number}  {step.label}")
            tip = step.tip if step.state is not None else step.tip + translate("Timeline", " (not kept: replays)")
            item.setToolTip(tip)
            item.setSizeHint(QSize(item.sizeHint().width(), 30))
            if step.paused:
                item.setForeground(Qt.GlobalColor.darkYellow)
            self.list.addItem(item)
        if 0 <= current < len(steps):
            self.list.setCurrentRow(current)
            self.list.scrollToItem(self.list.item(current))
        self.list.blockSignals(False)

    def labels(self) -> list[str]:
        return [self.list.item(i).text() for i in range(self.list.count())]

    def current(self) -> int:
        return self.list.currentRow()

    def item_rect(self, index: int) -> Any:
        """Where step ``index`` is drawn in the list's viewport (for clicking it)."""
        return self.list.visualItemRect(self.list.item(index))

    def _on_list_item_clicked(self, item: QListWidgetItem) -> None:
        self.step_picked.emit(self.list.row(item))
