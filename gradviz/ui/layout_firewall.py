"""A container that keeps a child's layout changes from re-laying out the whole window.

Qt propagates every ``updateGeometry()`` up the parents: a label whose text changes
(the guide's note and the status bar's texts, every step) invalidates its parent's
layout, whose activation calls ``updateGeometry()`` on the parent in turn ("ideally
only if sizeHint() or sizePolicy() has changed", says Qt's own source), and so on up
to the main window, which lays out all its docks again (and makes a
QPropertyAnimation per dock for it, animated or not). A lesson step paid for that
twice, 2-5 ms each time, after the canvas had shown the step.

:class:`LayoutFirewall` holds one child without a layout: the child's geometry
requests arrive here as a LayoutRequest event and go further only when the parent's
layout would place things differently: the child needs another height at this width,
or more width than it has.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QSize
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QWidget


class LayoutFirewall(QWidget):
    """Shows ``child`` over its whole area and stands for it in the parent's layout
    (for a child that is never hidden on its own: the guide strip, the status row)."""

    def __init__(self, child: QWidget, parent: QWidget | None = None):
        super().__init__(parent)
        self.child = child
        child.setParent(self)
        self.setSizePolicy(child.sizePolicy())
        self._hint = child.sizeHint()
        self._minimum = child.minimumSizeHint()
        self._height = self._needed_height(self.width())

    def _needed_height(self, width: int) -> int:
        child = self.child
        if child.hasHeightForWidth():
            return child.heightForWidth(width)
        return child.sizeHint().height()

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.LayoutRequest:
            child = self.child
            # each measured once: a word-wrapped label lays its text out for each
            height = self._needed_height(self.width())
            minimum = child.minimumSizeHint()
            if (
                height != self._height
                or minimum.width() > self.width()
                or minimum.height() != self._minimum.height()
            ):
                # what the child asks for now becomes what the parent's layout reads
                self._hint, self._minimum, self._height = child.sizeHint(), minimum, height
                self.updateGeometry()
            child.setGeometry(self.rect())
            return True
        return super().event(event)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        self.child.setGeometry(self.rect())
        self._height = self._needed_height(self.width())

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt override
        return QSize(self._hint)

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt override
        return QSize(self._minimum)

    def hasHeightForWidth(self) -> bool:  # noqa: N802 - Qt override
        return self.child.hasHeightForWidth()

    def heightForWidth(self, width: int) -> int:  # noqa: N802 - Qt override
        return self._needed_height(width)
