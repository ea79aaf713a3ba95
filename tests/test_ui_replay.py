"""The backward replay's highlights, node positions across Step back, and keys after dialogs,
driven through the real window as a learner drives it."""

from __future__ import annotations

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt, QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication, QMessageBox  # noqa: E402

from gradviz.ui import dialogs  # noqa: E402

from .test_ui_window import click, press, wait_idle  # noqa: E402


def run_through(qtbot, window) -> None:
    """F5 until the end: a lesson that fails on purpose is run on past its error."""
    for _ in range(10):
        press(qtbot, window, Qt.Key.Key_F5)
        wait_idle(qtbot, window)
        if window.state["at_end"] or window.state["cursor"] >= len(window.state["statements"]):
            return
    raise AssertionError("the demo did not run to its end")


def highlighted(window) -> list[str]:
    canvas = window.canvas
    return [n for n in canvas.node_ids() if "executing" in canvas.node_item(n).state]


def test_highlights_clear_when_the_replay_ends_and_on_every_new_state(qtbot, main_window):
    window = main_window(demo="retain_graph")
    run_through(qtbot, window)
    passes = window.state["backward_passes"]
    total = sum(len(p["steps"]) for p in passes)
    assert total >= 2

    # every recorded step, one F7 each: exactly one node executes at a time
    for _ in range(total):
        press(qtbot, window, Qt.Key.Key_F7)
        assert len(highlighted(window)) == 1
    assert "F7 ends the replay" in window.guide_note.text()
    press(qtbot, window, Qt.Key.Key_F7)  # past the last step: the replay ends
    assert highlighted(window) == []
    assert not window.act_bw_step.isEnabled()
    assert "Backward #" not in window.guide_note.text()

    # Zero grad: a new state, the highlight of the step shown before goes
    click(qtbot, window, window.act_reset)
    wait_idle(qtbot, window, lambda: window.state["cursor"] == 0)
    run_through(qtbot, window)
    press(qtbot, window, Qt.Key.Key_F7)
    assert len(highlighted(window)) == 1
    click(qtbot, window, window.act_zero_grad)
    wait_idle(qtbot, window, lambda: window.state.get("zeroed") is not None)
    assert highlighted(window) == []

    # Step back: the same
    press(qtbot, window, Qt.Key.Key_F7)
    assert len(highlighted(window)) == 1
    press(qtbot, window, Qt.Key.Key_F10, Qt.KeyboardModifier.ShiftModifier)
    wait_idle(qtbot, window)
    assert highlighted(window) == []


def test_node_positions_stay_put_across_step_back(qtbot, main_window):
    window = main_window(demo="first_backward")
    for _ in range(4):
        press(qtbot, window, Qt.Key.Key_F10)
        wait_idle(qtbot, window)
    canvas = window.canvas
    before = {n: canvas.node_item(n).pos() for n in canvas.node_ids()}
    assert before
    press(qtbot, window, Qt.Key.Key_F10)
    wait_idle(qtbot, window)
    press(qtbot, window, Qt.Key.Key_F10, Qt.KeyboardModifier.ShiftModifier)
    wait_idle(qtbot, window)
    after = {n: canvas.node_item(n).pos() for n in canvas.node_ids()}
    assert set(after) == set(before)
    assert all(after[n] == before[n] for n in before), "a node moved on Step back"


def test_shortcuts_work_after_a_discard_dialog(qtbot, main_window, monkeypatch):
    window = main_window(demo="two_paths")
    window.editor.setFocus()
    qtbot.keyClicks(window.editor, "# an edit ")
    assert window.editor.document().isModified()
    # the real Save / Discard / Cancel box (the fixture replaces it only when closing)
    seen: list[str] = []

    def answer() -> None:
        box = QApplication.activeModalWidget()
        if not isinstance(box, QMessageBox):
            QTimer.singleShot(20, answer)
            return
        seen.append(box.text())
        box.button(QMessageBox.StandardButton.Discard).click()

    QTimer.singleShot(20, answer)
    demo = window.files.find_demo("retain_graph")
    window.files.load_demo(demo)  # asks first: the text was edited
    assert seen and "not saved" in seen[0]
    wait_idle(qtbot, window, lambda: window.state is not None and window.state["cursor"] == 0)
    assert window.isActiveWindow() or QApplication.platformName() == "offscreen"
    # a shortcut, sent to the window as the keyboard would (no focus set by the test)
    target = QApplication.focusWidget() or window
    assert target.window() is window
    qtbot.keyClick(target, Qt.Key.Key_F10)
    wait_idle(qtbot, window, lambda: window.state["cursor"] == 1)
    assert dialogs.ask_unsaved_changes.__module__ == "gradviz.ui.dialogs"
