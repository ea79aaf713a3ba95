"""Widgets that redraw only what a step changed still show what a whole redraw shows.

Each test reads the pixels on screen (the window's backing store, through
``QScreen.grabWindow``), not ``QWidget.grab()``, which paints the widget afresh and so
would hide a region that was never updated."""

from __future__ import annotations

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtCore import QEvent, QObject, QThread  # noqa: E402
from PySide6.QtGui import QGuiApplication, QImage  # noqa: E402
from PySide6.QtWidgets import QApplication, QWidget  # noqa: E402

from gradviz.ui.editor import CodeEditor  # noqa: E402


def _on_screen(widget: QWidget) -> QImage:
    # item views lay out on a zero timer, then paint: a few turns of the loop
    for _ in range(3):
        QApplication.processEvents()
        QThread.msleep(2)
    QApplication.processEvents()
    window = widget.window()
    return QGuiApplication.primaryScreen().grabWindow(window.winId()).toImage()


def _redrawn_whole(widget: QWidget, *parts: QWidget) -> QImage:
    for part in parts:
        part.repaint()
    return _on_screen(widget)


class _PaintRegions(QObject):
    """The area each paint of ``widget`` covered, in pixels."""

    def __init__(self, widget: QWidget):
        super().__init__()
        self.areas: list[int] = []
        widget.installEventFilter(self)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt API)
        if event.type() == QEvent.Type.Paint:
            self.areas.append(sum(r.width() * r.height() for r in event.region()))
        return False


@pytest.fixture
def editor(qtbot):
    editor = CodeEditor()
    qtbot.addWidget(editor)
    editor.resize(500, 400)
    editor.setPlainText("\n".join(f"x{i} = torch.ones({i})" for i in range(200)))
    editor.show()
    qtbot.waitExposed(editor)
    return editor


def test_gutter_after_steps_equals_a_whole_redraw(editor):
    """Stepping down a script (the view scrolls), an error that comes and goes, a pause,
    notes: after each change the gutter on screen is what a whole redraw paints."""
    gutter = editor._gutter
    ran: set[int] = set()
    for line in range(1, 130, 3):
        ran.add(line)
        editor.set_statement_marks((line + 3, line + 4), (line, line + 2), ran)
        editor.show_line(line + 3)
        if line == 40:
            editor.set_error(line + 3, line + 4, "RuntimeError: boom")
        if line == 43:
            editor.clear_error()
        if line == 70:
            editor.set_paused_line(line + 3)
        if line == 73:
            editor.set_paused_line(None)
        if line == 88:
            editor.set_notes({90: "look", 95: "here"})
        if line == 91:
            editor.set_notes({95: "here"})
        shown = _on_screen(editor)
        assert shown == _redrawn_whole(editor, gutter, editor.viewport()), f"line {line}"


def test_marks_that_change_no_band_are_redrawn(editor):
    """Changes the editor's bands never touch, with nothing scrolling: a demo's notes
    coming, changing and going, a line marked ran on its own, and a pause toggled
    while the next statement stays (its arrow shows only while nothing is paused). Each
    is on screen as a whole redraw paints it, so only the gutter's own updates put it
    there."""
    gutter = editor._gutter
    editor.set_statement_marks((10, 10), (9, 9), {9})
    _on_screen(editor)
    changes = [
        lambda: editor.set_notes({4: "look"}),
        lambda: editor.set_notes({4: "here", 6: "and here"}),
        lambda: editor.set_notes({}),
        lambda: editor.set_statement_marks((10, 10), (9, 9), {2, 9}),
        lambda: editor.set_paused_line(3),
        lambda: editor.set_paused_line(None),
    ]
    for n, change in enumerate(changes):
        change()
        assert _on_screen(editor) == _redrawn_whole(editor, gutter, editor.viewport()), n


def test_the_check_sees_a_mark_never_drawn(editor):
    """The comparison above can fail: a mark changed behind the gutter's back (no
    update) leaves the screen unlike a whole redraw."""
    editor.set_statement_marks((5, 5), (4, 4), {4})
    _on_screen(editor)
    editor._next = (9, 9)  # what the window would show next, without asking for a paint
    assert _on_screen(editor) != _redrawn_whole(editor, editor._gutter)


def test_a_step_redraws_only_the_lines_it_changed(editor):
    gutter = editor._gutter
    editor.set_statement_marks((5, 5), (4, 4), {1, 2, 3, 4})
    _on_screen(editor)
    paints = _PaintRegions(gutter)
    editor.set_statement_marks((6, 6), (5, 5), {1, 2, 3, 4, 5})
    editor.set_notes({})  # the same notes: nothing to redraw
    _on_screen(editor)
    line_h = editor.fontMetrics().height()
    # lines 5 (ran; the arrow left) and 6 (the arrow came), not the whole strip
    assert paints.areas and sum(paints.areas) <= 3 * (line_h + 2) * gutter.width()
    assert sum(paints.areas) < gutter.width() * gutter.height() / 4


# pytorch/tutorials, beginner_source/examples_nn/polynomial_optim.py, its loop unrolled
# three times (the stepper steps top-level statements)
_POLYNOMIAL = """\
import torch
import math
x = torch.linspace(-math.pi, math.pi, 200)
y = torch.sin(x)
p = torch.tensor([1, 2, 3])
xx = x.unsqueeze(-1).pow(p)
model = torch.nn.Sequential(torch.nn.Linear(3, 1), torch.nn.Flatten(0, 1))
loss_fn = torch.nn.MSELoss(reduction='sum')
optimizer = torch.optim.RMSprop(model.parameters(), lr=1e-3)
""" + """\
y_pred = model(xx)
loss = loss_fn(y_pred, y)
optimizer.zero_grad()
loss.backward()
optimizer.step()
""" * 3


def test_tensor_columns_hold_still_while_a_loop_runs(qtbot):
    """.grad comes (backward) and goes (zero_grad) every iteration; once the rows are
    all there and the first .grad came, no column moves (value and grad traded their
    room every iteration, and the whole table was drawn again each time)."""
    from gradviz.app.models import AppState
    from gradviz.core.session import Session
    from gradviz.ui.panels import TensorsPanel

    panel = TensorsPanel()
    qtbot.addWidget(panel)
    panel.resize(700, 260)
    panel.show()
    qtbot.waitExposed(panel)
    session = Session(_POLYNOMIAL)
    table = panel.table
    shown: list[tuple[tuple[str, ...], tuple[int, ...]]] = []
    while not session.at_end:
        result = session.step()
        assert result is None or result.ok, result
        panel.set_state(AppState.from_wire(session.snapshot()))
        QApplication.processEvents()
        widths = tuple(table.columnWidth(c) for c in range(table.columnCount()))
        shown.append((tuple(panel.names()), widths))
    # the rows are all there once the first loss exists; from the second iteration on
    # (.grad set, cleared, set again) the columns stay where they are
    second_iteration = shown[-10:]
    assert len({names for names, _ in second_iteration}) == 1
    assert len({widths for _, widths in second_iteration}) == 1


@pytest.mark.parametrize("dark", [False, True])
def test_tensor_table_in_its_dock_redraws_cells_only_and_right(qtbot, dark):
    """A step changes a few cells: the table paints them, the dock and the table's
    frame under it are not painted again, and the screen is what a whole redraw of the
    dock shows (light and dark palettes: the viewport fills its own background)."""
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QColor, QPalette
    from PySide6.QtWidgets import QDockWidget, QMainWindow

    from gradviz.app.models import AppState
    from gradviz.core.session import Session
    from gradviz.ui.panels import TensorsPanel

    window = QMainWindow()
    qtbot.addWidget(window)
    if dark:
        palette = window.palette()
        for role, colour in (
            (QPalette.ColorRole.Window, "#2b2b2b"), (QPalette.ColorRole.Base, "#1e1e1e"),
            (QPalette.ColorRole.Text, "#e0e0e0"), (QPalette.ColorRole.WindowText, "#e0e0e0"),
        ):  # fmt: skip
            palette.setColor(role, QColor(colour))
        window.setPalette(palette)
    panel = TensorsPanel()
    dock = QDockWidget("Tensors")
    dock.setWidget(panel)
    window.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, dock)
    window.resize(900, 400)
    window.show()
    qtbot.waitExposed(window)
    assert panel.table.viewport().autoFillBackground()  # polished, and filled again
    session = Session(_POLYNOMIAL)
    dock_paints = _PaintRegions(dock)
    cell_steps = 0
    while not session.at_end:
        session.step()
        table = panel.table
        layout_before = table.rowCount(), [table.columnWidth(c) for c in range(table.columnCount())]
        painted_before = len(dock_paints.areas)
        panel.set_state(AppState.from_wire(session.snapshot()))
        shown = _on_screen(panel)
        layout = table.rowCount(), [table.columnWidth(c) for c in range(table.columnCount())]
        if layout == layout_before and layout[0]:
            # the same rows and columns: only cells changed, and only the table painted
            cell_steps += 1
            assert len(dock_paints.areas) == painted_before
        assert shown == _redrawn_whole(panel, dock, panel.table.viewport())
    assert cell_steps >= 10


def test_accumulation_columns_grow_to_new_rows_without_refitting_all(qtbot, monkeypatch):
    """Each backward and zero_grad of the loop adds rows: the columns grow to fit them
    (no cell narrower than it asks), without Qt measuring every cell again; fewer rows
    (another script) fit every column afresh."""
    from gradviz.app.models import AppState
    from gradviz.core.session import Session
    from gradviz.ui.panels import AccumulationPanel

    panel = AccumulationPanel()
    qtbot.addWidget(panel)
    panel.resize(420, 500)
    panel.show()
    qtbot.waitExposed(panel)
    table = panel.table
    refits = []
    whole_fit = table.resizeColumnsToContents
    monkeypatch.setattr(table, "resizeColumnsToContents", lambda: refits.append(table.rowCount()) or whole_fit())
    session = Session(_POLYNOMIAL)
    grew = 0
    while not session.at_end:
        session.step()
        rows_before = table.rowCount()
        panel.set_state(AppState.from_wire(session.snapshot()))
        for row in range(table.rowCount()):
            for col in range(table.columnCount()):
                need = table.sizeHintForIndex(table.model().index(row, col)).width()
                assert need <= table.columnWidth(col), (row, col)
        grew += table.rowCount() > rows_before > 0
    assert grew >= 4  # backward and zero_grad rows came, iteration after iteration
    assert len([n for n in refits if n]) == 1  # (an empty table) and the first rows only
    panel.set_state(AppState.from_wire(Session("import torch\n").snapshot()))
    assert refits[-1] == 0 and table.rowCount() == 0
