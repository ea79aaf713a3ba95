"""Korean learners: the window says once, with the package to install, when no installed
font can show the script's letters (they would be empty boxes)."""

from __future__ import annotations

from PySide6.QtGui import QFontDatabase

from gradviz.ui import fonts
from gradviz.ui import main_window as mw

KOREAN = "# 기울기를 계산합니다\nx = torch.tensor(2.0, requires_grad=True)\nprint('결과:', x)\n"


def test_writing_systems_of_a_korean_script():
    found = fonts.writing_systems(KOREAN + "# ελληνικά\n")
    assert [name for _, name, _ in found] == ["Greek", "Korean"]
    assert fonts.writing_systems("x = 1  # ascii only, é and ü too\n") == []


def test_missing_fonts_names_the_package():
    ws = QFontDatabase.WritingSystem
    assert fonts.missing_fonts(KOREAN, families={ws.Korean: []}) == [("Korean", "fonts-nanum")]
    assert fonts.missing_fonts(KOREAN, families={ws.Korean: ["NanumGothic"]}) == []
    message = fonts.missing_fonts_message([("Korean", "fonts-nanum")])
    assert "Korean" in message and "sudo apt install fonts-nanum" in message


def test_the_window_says_it_once(qtbot, main_window, monkeypatch):
    ws = QFontDatabase.WritingSystem
    monkeypatch.setattr(mw, "missing_fonts",
                        lambda text: fonts.missing_fonts(text, families={ws.Korean: []}))
    window = main_window(source="x = 1\n")
    qtbot.wait(600)
    assert "font" not in window.status_text()
    window.editor.setPlainText(KOREAN)
    qtbot.waitUntil(lambda: "fonts-nanum" in window.status_text(), timeout=5000)
    assert "fonts-nanum" in window.output_panel.text()
    window.set_status("")
    window.editor.setPlainText(KOREAN + "# 또\n")
    qtbot.wait(700)
    assert "fonts-nanum" not in window.status_text()  # once a session


def test_installed_fonts_cover_korean_where_setup_ran(qapp):
    """scripts/setup.sh installs fonts-nanum: with it, nothing is missing."""
    import pytest

    if not QFontDatabase.families(QFontDatabase.WritingSystem.Korean):
        pytest.skip("no Korean font installed here (scripts/setup.sh installs fonts-nanum)")
    assert fonts.missing_fonts(KOREAN) == []

