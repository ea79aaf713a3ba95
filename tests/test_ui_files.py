"""Demos menu, files, unsaved changes, autosave, settings, help: the window around the script."""

from __future__ import annotations

import json
import time

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6 import QtWidgets  # noqa: E402
from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtWidgets import QMessageBox  # noqa: E402

from gradviz.app.demos import find_demo, list_demos  # noqa: E402
from gradviz.ui import dialogs  # noqa: E402

TIMEOUT = 30_000
Button = QMessageBox.StandardButton


def wait_idle(qtbot, window, condition=None) -> None:
    qtbot.waitUntil(
        lambda: not window.busy and (condition is None or bool(condition())),
        timeout=TIMEOUT,
    )


def answer_unsaved(monkeypatch, button) -> list[str]:
    asked: list[str] = []

    def ask(parent, name):
        asked.append(name)
        return button

    monkeypatch.setattr(dialogs, "ask_unsaved_changes", ask)
    return asked


def test_demos_menu_has_every_demo_and_loads_one_ready_to_step(qtbot, main_window, monkeypatch):
    window = main_window(source="")
    actions = window.demos_menu.actions()
    assert [a.data() for a in actions] == [d.name for d in list_demos()]

    qtbot.keyClicks(window.editor, "my own work")
    asked = answer_unsaved(monkeypatch, Button.Cancel)
    window.demo_actions["retain_graph"].trigger()
    assert asked and window.editor.toPlainText() == "my own work"

    answer_unsaved(monkeypatch, Button.Discard)
    window.demo_actions["retain_graph"].trigger()
    demo = find_demo("retain_graph")
    wait_idle(qtbot, window, lambda: window.client.source == demo.source)
    assert window.editor.toPlainText() == demo.source
    assert window.state["cursor"] == 0
    assert demo.title in window.guide_title.text()
    assert window.editor.notes == demo.notes
    assert "retain_graph" in window.windowTitle()

    # run to the line above the first note: the guide says what to look at next
    note_line = min(demo.notes)
    window.editor.select_lines(note_line - 1)
    window.run_to_cursor()
    wait_idle(qtbot, window, lambda: window.state["cursor"] > 0)
    assert demo.notes[note_line][:30] in window.guide_note.text()


def test_save_as_then_open_from_recent_files(qtbot, main_window, tmp_path, monkeypatch):
    window = main_window(source="")
    qtbot.keyClicks(window.editor, "a = torch.ones(2)")
    assert window.windowTitle().startswith("untitled.py*")
    target = tmp_path / "lesson.py"
    assert window.save_as(target)
    assert target.read_text() == "a = torch.ones(2)"
    assert window.windowTitle().startswith("lesson.py —")
    window.new_file()
    wait_idle(qtbot, window)
    assert window.editor.toPlainText() == ""
    recent = [a for a in window.recent_menu.actions() if a.text() == "lesson.py"]
    assert recent
    recent[0].trigger()
    wait_idle(qtbot, window, lambda: window.client.source == "a = torch.ones(2)")
    assert window.path == target.resolve()
    qtbot.keyClicks(window.editor, "!")
    assert "*" in window.windowTitle()


def test_closing_with_unsaved_changes_asks_first(qtbot, main_window, tmp_path, monkeypatch):
    window = main_window(source="")
    qtbot.keyClicks(window.editor, "x = 1")
    answer_unsaved(monkeypatch, Button.Cancel)
    assert window.close() is False
    assert window.isVisible() and window.client.pid() is not None

    target = tmp_path / "kept.py"
    monkeypatch.setattr(QtWidgets.QFileDialog, "getSaveFileName", lambda *a, **k: (str(target), ""))
    asked = answer_unsaved(monkeypatch, Button.Save)
    assert window.close() is True
    assert asked and target.read_text() == "x = 1"
    assert window.client.pid() is None


def test_autosave_and_restore_after_a_crash(qtbot, main_window, gui_dirs, monkeypatch):
    window = main_window(source="")
    assert window.files.autosave_timer.isActive() and window.files.autosave_timer.interval() <= 5000
    qtbot.keyClicks(window.editor, "unsaved = torch.zeros(3)")
    window.autosave_now()
    autosave = window.autosave_path
    assert autosave.read_text() == "unsaved = torch.zeros(3)"

    # the process "crashed": the OS drops the window's lock, the autosave stays
    window.autosave._lock.close()
    window.autosave._lock = None
    offered: list[str] = []
    monkeypatch.setattr(
        dialogs, "ask_restore_autosave", lambda parent, name, when: offered.append(name) or True
    )
    again = main_window(first_launch=True)
    assert offered == ["an untitled script"]
    assert again.editor.toPlainText() == "unsaved = torch.zeros(3)"
    assert again.editor.document().isModified()
    # the text moved into the new window's own autosave; the crashed one is gone
    assert not autosave.exists()
    assert again.autosave_path.read_text() == "unsaved = torch.zeros(3)"


def test_a_live_window_autosave_is_never_offered_or_deleted(
    qtbot, main_window, gui_dirs, monkeypatch
):
    _, data_dir = gui_dirs
    first = main_window(source="")
    qtbot.keyClicks(first.editor, "mine = torch.ones(2)")
    first.autosave_now()
    assert first.autosave_path.read_text() == "mine = torch.ones(2)"

    offered: list[str] = []
    monkeypatch.setattr(
        dialogs, "ask_restore_autosave", lambda parent, name, when: offered.append(name) or False
    )
    second = main_window(first_launch=True)  # a second window while the first one works
    assert offered == []
    assert first.autosave_path.read_text() == "mine = torch.ones(2)"
    assert second.autosave_path != first.autosave_path

    # the second window's own work does not touch the first one's autosave either
    second.new_file()
    qtbot.keyClicks(second.editor, "theirs = 1")
    second.autosave_now()
    second.files.load_demo(find_demo("two_paths"), ask=False)  # drops second's autosave only
    assert not second.autosave_path.exists()
    assert first.autosave_path.read_text() == "mine = torch.ones(2)"

    # a crashed window's autosave (its process died holding the lock) is offered once
    import subprocess
    import sys

    crash = (
        "import os, sys\n"
        "from pathlib import Path\n"
        "from gradviz.app.autosave import Autosave\n"
        "a = Autosave(Path(sys.argv[1]))\n"
        "a.write('lost = 3', {'file': None, 'demo': None})\n"
        "os._exit(9)\n"
    )
    subprocess.run([sys.executable, "-c", crash, str(data_dir)], check=False, timeout=120)
    third = main_window(first_launch=True)
    assert offered == ["an untitled script"]  # declined: deleted
    assert first.autosave_path.read_text() == "mine = torch.ones(2)"
    assert [p.read_text() for p in (data_dir / "autosave").glob("*.py")] == [
        "mine = torch.ones(2)"
    ]
    assert third.editor.toPlainText() != "lost = 3"


def test_an_autosave_older_than_the_saved_file_is_not_offered(
    qtbot, main_window, gui_dirs, tmp_path, monkeypatch
):
    _, data_dir = gui_dirs
    script = tmp_path / "s.py"
    script.write_text("a = torch.ones(1)\n")
    (data_dir / "autosave.py").write_text("old text")
    (data_dir / "autosave.json").write_text(
        json.dumps({"file": str(script), "demo": None, "saved_at": time.time() - 3600})
    )
    monkeypatch.setattr(
        dialogs, "ask_restore_autosave", lambda *a: pytest.fail("offered a stale autosave")
    )
    window = main_window(file=str(script))
    assert window.editor.toPlainText() == "a = torch.ones(1)\n"
    assert not (data_dir / "autosave.py").exists()


def test_settings_remember_the_last_script_and_the_layout(qtbot, main_window, tmp_path):
    script = tmp_path / "mine.py"
    script.write_text("b = torch.ones(2) * 3\n")
    first = main_window(file=str(script))
    first.memory_dock.raise_()
    first.inspector_dock.hide()
    assert first.close()

    second = main_window(first_launch=True)  # no file given: a later launch opens the last script
    assert second.path == script.resolve()
    assert second.editor.toPlainText() == "b = torch.ones(2) * 3\n"
    assert second.inspector_dock.isHidden()
    assert second.device_combo.currentText() == "cpu"


def test_help_shows_the_keyboard_shortcuts(qtbot, main_window):
    window = main_window()
    window.act_shortcuts.trigger()
    dialog = window.shortcuts_dialog
    qtbot.waitUntil(dialog.isVisible)
    table = dialog.findChild(QtWidgets.QTableWidget)
    keys = [table.item(r, 1).text() for r in range(table.rowCount())]
    assert {"F10", "F11", "Shift+F11", "F5", "Ctrl+F11", "F7", "Shift+F7", "Shift+F5"} <= set(keys)
    dialog.close()
    assert window.act_step.shortcut().toString() == "F10"
    assert window.act_stop.shortcut().toString() == "Shift+F5"
    assert window.act_run_to_cursor.shortcut().toString() == "Ctrl+F10"
    # the debugger keys of VS Code and PyCharm; the backward replay keys do not clash
    assert window.act_step_into.shortcut().toString() == "F11"
    assert window.act_step_out.shortcut().toString() == "Shift+F11"
    assert window.act_bw_step.shortcut().toString() == "F7"
    assert window.act_bw_end.shortcut().toString() == "Shift+F7"
    assert window.toolbar.widgetForAction(window.act_step).toolTip().endswith("(F10)")
    assert window.act_step.toolTip() and Qt.Key.Key_F10


def test_opening_a_saved_snapshot_loads_its_statements(qtbot, main_window, tmp_path):
    snapshot = tmp_path / "run.gradviz.json"
    snapshot.write_text(
        json.dumps(
            {
                "statements": [
                    {"line": 1, "source": "a = torch.ones(2, requires_grad=True)"},
                    {"line": 3, "source": "b = (a * 2).sum()"},
                ]
            }
        )
    )
    window = main_window(file=str(snapshot))
    assert window.editor.toPlainText() == (
        "a = torch.ones(2, requires_grad=True)\n\nb = (a * 2).sum()\n"
    )
    window.run_to_end()
    wait_idle(qtbot, window, lambda: window.state["at_end"])
    assert window.tensors_panel.names() == ["a", "b"]


def test_a_remembered_cuda_choice_falls_back_to_cpu_where_cuda_is_missing(
    qtbot, main_window, gui_dirs
):
    import torch
    from PySide6.QtCore import QSettings

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    settings_dir, _ = gui_dirs
    settings = QSettings(str(settings_dir / "gradviz.ini"), QSettings.Format.IniFormat)
    settings.setValue("device", "cuda")
    settings.sync()
    window = main_window(demo="two_paths")
    assert window.device_combo.currentText() == "cpu"
    assert window.state["device"] == "cpu"
    window.step()
    wait_idle(qtbot, window, lambda: window.state["cursor"] == 1)


# --- a file that is not text is never shown as a script, nor saved over -------------------

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 40


def test_a_png_opened_by_mistake_is_refused_and_never_overwritten(
    qtbot, main_window, tmp_path, monkeypatch
):
    from gradviz.ui import dialogs

    shown: list[str] = []
    monkeypatch.setattr(dialogs, "show_error", lambda parent, title, text: shown.append(text))
    image = tmp_path / "real.png"
    image.write_bytes(PNG)
    window = main_window(source="a = torch.ones(2)\n")
    before = window.editor.toPlainText()
    assert window.files.open_path(image, ask=False) is False
    assert shown and "PNG image" in shown[-1] and "not touched" in shown[-1]
    assert window.editor.toPlainText() == before  # the user's text is kept
    assert image.read_bytes() == PNG
    # Save As onto the image (a slip in the file dialog): refused, the image kept
    assert window.files.save_as(image) is False
    assert image.read_bytes() == PNG
    assert "not overwritten" in shown[-1]


def test_opening_refuses_binary_and_huge_files_and_reads_text_whole(tmp_path):
    from gradviz.app.files import MAX_SCRIPT_BYTES, read_path, refuse_to_overwrite

    cases = {
        "real.png": PNG,
        "model.pt": b"\x80\x02}q\x00(X\x05\x00\x00\x00",
        "latin1.py": "x = 'caf\xe9'\n".encode("latin-1"),
        "nul.py": b"a = 1\x00\n",
    }
    for name, data in cases.items():
        path = tmp_path / name
        path.write_bytes(data)
        opened = read_path(path)
        assert opened.kind == "refused", name
        assert refuse_to_overwrite(path) is not None, name
    big = tmp_path / "big.py"
    big.write_bytes(b"#" * (MAX_SCRIPT_BYTES + 1))
    assert read_path(big).kind == "refused" and refuse_to_overwrite(big) is not None
    korean = tmp_path / "lesson.py"
    korean.write_text("# 역전파\nx = 1  # 기울기\n", encoding="utf-8")
    assert read_path(korean).kind == "script" and read_path(korean).text.startswith("# 역전파")
    assert refuse_to_overwrite(korean) is None
