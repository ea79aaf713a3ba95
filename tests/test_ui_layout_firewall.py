"""LayoutFirewall: a label's new text re-lays out the window only when it needs room."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QEvent, QObject, Qt  # noqa: E402
from PySide6.QtWidgets import (  # noqa: E402
    QApplication,
    QDockWidget,
    QLabel,
    QMainWindow,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from gradviz.ui.guide_strip import GuideStrip  # noqa: E402
from gradviz.ui.layout_firewall import LayoutFirewall  # noqa: E402


class _LayoutRequests(QObject):
    """Counts the LayoutRequest events a widget receives."""

    def __init__(self, widget: QWidget):
        super().__init__()
        self.count = 0
        widget.installEventFilter(self)

    def eventFilter(self, obj, event):  # noqa: N802 - Qt API
        if event.type() == QEvent.Type.LayoutRequest:
            self.count += 1
        return False


def _settle() -> None:
    for _ in range(5):
        QApplication.processEvents()


def _window(qtbot, firewall: bool) -> tuple[QMainWindow, QLabel, QWidget]:
    window = QMainWindow()
    qtbot.addWidget(window)
    column = QWidget()
    layout = QVBoxLayout(column)
    note = QLabel("Next: line 3")
    note.setWordWrap(True)
    layout.addWidget(LayoutFirewall(note) if firewall else note)
    layout.addWidget(QTextEdit(), 1)
    window.setCentralWidget(column)
    for name in ("a", "b", "c"):
        window.addDockWidget(
            Qt.DockWidgetArea.RightDockWidgetArea,
            QDockWidget(name),
        )
    window.resize(600, 400)
    window.show()
    qtbot.waitExposed(window)
    _settle()
    return window, note, column


def test_a_new_text_of_the_same_height_stays_inside(qtbot):
    """Without the firewall every setText reaches the main window's layout (the docks
    laid out again); behind it, a text of the same height goes no further."""
    for firewall, expect_window in ((False, True), (True, False)):
        window, note, _column = _window(qtbot, firewall)
        seen = _LayoutRequests(window)
        for i in range(5):
            note.setText(f"Next: line {i + 10}")
            _settle()
        assert (seen.count > 0) is expect_window, (firewall, seen.count)
        window.close()


def test_a_text_that_needs_more_lines_grows_the_strip(qtbot):
    window, note, _column = _window(qtbot, True)
    one_line = note.height()
    note.setText("a long note " * 40)
    _settle()
    assert note.height() >= 3 * one_line
    assert note.height() >= note.heightForWidth(note.width())
    note.setText("short again")
    _settle()
    assert note.height() == one_line
    window.close()


def test_the_guide_strip_behind_a_firewall_follows_the_window_width(qtbot):
    """The guide's wrapped note gets the height its text needs when the window narrows,
    and its child fills the firewall."""
    window = QMainWindow()
    qtbot.addWidget(window)
    column = QWidget()
    layout = QVBoxLayout(column)
    guide = GuideStrip()
    guide.note.setText("word " * 60)
    wall = LayoutFirewall(guide)
    layout.addWidget(wall)
    layout.addWidget(QTextEdit(), 1)
    window.setCentralWidget(column)
    window.resize(1000, 500)
    window.show()
    qtbot.waitExposed(window)
    _settle()
    wide = wall.height()
    window.resize(400, 500)
    _settle()
    assert wall.height() > wide
    assert guide.geometry() == wall.rect()
    assert guide.note.height() >= guide.note.heightForWidth(guide.note.width())
    window.close()
