"""The translations: the catalog, the .ts/.qm files, and that no window string escapes them.

Qt-free tests first (the language choice, the .ts files themselves); then a scan of the
window's sources for text handed to Qt without ``translate``; then the window built in
Korean, every visible string read back from its widgets.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from gradviz import i18n

ROOT = Path(__file__).resolve().parent.parent
HANGUL = re.compile(r"[\uac00-\ud7a3]")
PLACEHOLDER = re.compile(r"\{\w*\}")


@pytest.fixture(autouse=True)
def _english_unless_asked(monkeypatch):
    """Each test starts in English whatever the machine's locale, and leaves English
    installed (the translators and the catalog are per process)."""
    monkeypatch.setenv(i18n.ENV_VAR, "en")
    yield
    monkeypatch.setenv(i18n.ENV_VAR, "en")
    if "PySide6.QtCore" in sys.modules:
        from gradviz.ui.i18n import install_language

        install_language(None)
    i18n.set_language("en")


def _messages(path: Path) -> list[tuple[str, str, ET.Element]]:
    out = []
    for context in ET.parse(path).getroot().iter("context"):
        name = context.findtext("name") or ""
        for message in context.iter("message"):
            out.append((name, message.findtext("source") or "", message))
    return out


# --- choosing the language (Qt-free) ------------------------------------------------------


@pytest.mark.parametrize(
    ("env", "saved", "want"),
    [
        ({}, None, "en"),
        ({"LANG": "ko_KR.UTF-8"}, None, "ko"),
        ({"LANG": "C.UTF-8"}, None, "en"),
        ({"LANG": "de_DE.UTF-8"}, None, "en"),
        ({"LC_ALL": "ko_KR.UTF-8", "LANG": "en_US.UTF-8"}, None, "ko"),
        ({"LC_ALL": "en_US.UTF-8", "LANG": "ko_KR.UTF-8"}, None, "en"),
        ({"LANGUAGE": "ko:en"}, None, "ko"),
        ({"LANG": "ko_KR.UTF-8"}, "en", "en"),  # View > Language beats the locale
        ({"LANG": "en_US.UTF-8"}, "ko", "ko"),
        ({"LANG": "ko_KR.UTF-8"}, "", "ko"),  # "" follows the system
        ({"GRADVIZ_LANG": "en", "LANG": "ko_KR.UTF-8"}, "ko", "en"),  # the variable beats all
        ({"GRADVIZ_LANG": "ko"}, "en", "ko"),
        ({"GRADVIZ_LANG": "ko_KR"}, None, "ko"),
        ({"GRADVIZ_LANG": "xx", "LANG": "ko_KR.UTF-8"}, None, "ko"),  # unknown: ignored
    ],
)
def test_choose_language(env, saved, want):
    assert i18n.choose_language(saved, env) == want


def test_catalog_is_qt_free():
    code = (
        "import sys, gradviz.i18n as t, gradviz.app.guide as g; t.set_language('ko');"
        "assert '한 단계' in t.translate('Actions', 'Step'), t.translate('Actions', 'Step');"
        "assert 'PySide6' not in sys.modules, [m for m in sys.modules if 'PySide' in m]"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_translate_without_qt():
    i18n.set_language("ko")
    assert i18n.translate("Guide", "Ran line {line}").format(line=3) == "3번 줄을 실행했습니다"
    assert i18n.translate("Guide", "no such text") == "no such text"
    assert i18n.translate("Demos", "Devices") == "장치"
    assert i18n.messages("Legend")["shares memory"] == "메모리 공유"
    i18n.set_language("en")
    assert i18n.translate("Guide", "Ran line {line}") == "Ran line {line}"
    assert i18n.messages("Legend") == {}


# --- the .ts and .qm files ------------------------------------------------------------------


@pytest.mark.parametrize("path", i18n.ts_paths("ko"), ids=lambda p: p.name)
def test_every_message_has_korean(path):
    """Finished, in Korean, with the same placeholders and menu mnemonic as the English."""
    problems = []
    for context, source, message in _messages(path):
        tr = message.find("translation")
        text = "" if tr is None else (tr.text or "".join(f.text or "" for f in tr))
        where = f"{context}: {source!r}"
        if tr is None or tr.get("type") in ("unfinished", "obsolete", "vanished") or not text:
            problems.append(f"untranslated {where}")
            continue
        has_words = re.search(r"[A-Za-z]{2,}", re.sub(r"\{\w*\}|<[^>]+>", "", source))
        if has_words and not HANGUL.search(text) and text != source:
            problems.append(f"not Korean {where}: {text!r}")
        if sorted(PLACEHOLDER.findall(source)) != sorted(PLACEHOLDER.findall(text)):
            problems.append(f"placeholders differ {where}: {text!r}")
        if ("&" in source.replace("&nbsp;", "")) != ("&" in text.replace("&nbsp;", "")):
            problems.append(f"mnemonic differs {where}: {text!r}")
    assert not problems, "\n".join(problems)


def test_ts_files_match_the_sources(tmp_path):
    """lupdate finds nothing new: every translate() call in the code is in the .ts, and the
    demos' texts are in demos_ko.ts (python -m gradviz.i18n.build --update refreshes them)."""
    from gradviz.i18n import build

    if build.find_tool("lupdate") is None:
        pytest.skip("no lupdate (pip install PySide6-Essentials)")
    copy = tmp_path / "gradviz_ko.ts"
    copy.write_bytes(i18n.ts_path("ko").read_bytes())
    subprocess.run(
        [build.find_tool("lupdate"), "-locations", "none", "-no-obsolete",
         *build.source_files(), "-ts", str(copy)],
        check=True, stdout=subprocess.DEVNULL,
    )  # fmt: skip
    now = {(c, s) for c, s, _ in _messages(copy)}
    committed = {(c, s) for c, s, _ in _messages(i18n.ts_path("ko"))}
    assert now == committed, (
        f"new: {sorted(now - committed)}\ngone: {sorted(committed - now)}\n"
        "run: python -m gradviz.i18n.build --update, then translate the new messages"
    )
    demos = {s for _, s, _ in _messages(i18n.ts_path("ko").with_name("demos_ko.ts"))}
    assert demos == set(build.demo_texts()), (
        f"new: {sorted(set(build.demo_texts()) - demos)}\n"
        "a demo's title, about line or #> note changed: run python -m gradviz.i18n.build "
        "--update, then translate the new messages in gradviz/i18n/demos_ko.ts"
    )


def test_qm_says_what_the_ts_says(qapp):
    """The wheel ships the committed .qm (its isolated build has no Qt): every finished
    message of the .ts files must come out of it as the .ts says (a .ts edited without
    running python -m gradviz.i18n.build fails here, whatever lrelease version made it)."""
    from PySide6.QtCore import QTranslator

    translator = QTranslator()
    assert translator.load(str(i18n.qm_path("ko")))
    stale = [
        f"{context}: {source!r}"
        for (context, source, disambiguation), text in i18n.catalog("ko").items()
        if translator.translate(context, source, disambiguation or None) != text
    ]
    assert not stale, "run python -m gradviz.i18n.build:\n" + "\n".join(stale)


def test_packaged():
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "gradviz.i18n" in project["tool"]["setuptools"]["packages"]
    data = project["tool"]["setuptools"]["package-data"]["gradviz.i18n"]
    assert "*.qm" in data and "*.ts" in data
    assert i18n.qm_path("ko").is_file()


# --- the window's sources: no text reaches Qt without translate() ----------------------------

#: calls whose string argument a user reads
_VISIBLE = {
    "setText", "setToolTip", "setStatusTip", "setWindowTitle", "setPlaceholderText",
    "setAccessibleName", "setAccessibleDescription", "setIconText", "setWhatsThis",
    "addMenu", "addAction", "setTabText", "addTab", "setHeaderLabels",
    "setHorizontalHeaderLabels", "showMessage", "set_status", "add_note", "setTitle",
    "QLabel", "QPushButton", "QCheckBox", "QRadioButton", "QAction", "QToolBar", "QMenu",
    "QDockWidget", "QGroupBox", "add_menu_action", "show_error", "message_box",
    "GuideTitle", "Tag",
}  # fmt: skip
#: files whose words are the window's (every module of gradviz/ui, its subpackages too,
#: and the guide's)
_WINDOW_FILES = sorted((ROOT / "gradviz" / "ui").rglob("*.py")) + [
    ROOT / "gradviz" / "app" / "guide.py"
]


def _raw_words(node: ast.AST) -> str | None:
    """English words in ``node`` that no translate() call wraps (a literal or an f-string)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        text = node.value
    elif isinstance(node, ast.JoinedStr):
        text = "".join(v.value for v in node.values if isinstance(v, ast.Constant))
    else:
        return None
    if re.fullmatch(r"[a-z_]+", text):
        return None  # a key (kind="error"), not words
    text = re.sub(r"<[^>]+>|&\w+;|\{[^}]*\}", " ", text)
    words = re.findall(r"[A-Za-z][a-z]{2,}", text)
    return text if words else None


@pytest.mark.parametrize("path", _WINDOW_FILES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_window_text_is_wrapped(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    raw = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name not in _VISIBLE:
            continue
        for arg in [*node.args, *(k.value for k in node.keywords)]:
            args = arg.elts if isinstance(arg, (ast.List, ast.Tuple)) else [arg]
            for a in args:
                text = _raw_words(a)
                if text is not None:
                    raw.append(f"line {a.lineno}: {name}({text.strip()[:60]!r})")
    assert not raw, f"{path.name}: text shown without translate():\n" + "\n".join(raw)


def _literal_calls() -> list[tuple[Path, int, str, str]]:
    """Every ``translate("Context", "text")`` and ``QT_TRANSLATE_NOOP`` call with literal
    arguments in the package (an f-string's inside included, where lupdate does not look)."""
    out = []
    for path in sorted((ROOT / "gradviz").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call) or len(node.args) < 2:
                continue
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            context, text = node.args[:2]
            if (
                name in ("translate", "QT_TRANSLATE_NOOP")
                and isinstance(context, ast.Constant) and isinstance(context.value, str)
                and isinstance(text, ast.Constant) and isinstance(text.value, str)
            ):  # fmt: skip
                out.append((path, node.lineno, context.value, text.value))
    return out


def test_every_translate_call_has_its_entry():
    """A translate() lupdate cannot see (inside an f-string) would stay English forever."""
    catalog = i18n.catalog("ko")
    calls = _literal_calls()
    assert len(calls) > 400
    missing = [
        f"{path.relative_to(ROOT)}:{line}: {context} {text!r}"
        for path, line, context, text in calls
        if (context, text, "") not in catalog
    ]
    assert not missing, "\n".join(missing)


# --- the window in Korean ---------------------------------------------------------------------

#: what stays as it is in every language: names of things, not words
_AS_IS = re.compile(
    r"^(?:[\W\d_]*|cpu|cuda|gradviz|English|grad|grad_fn|requires_grad|is_leaf|retains_grad|"
    r"dtype|device|shape|\.grad|AccumulateGrad|Enter / Shift\+Enter|"
    r"(?:(?:Ctrl|Shift|Alt)\+)*(?:F\d+|[A-Z=+\-0]|Del|Esc)( / .*)?)$"
)


def _visible_texts(window) -> list[tuple[str, str]]:
    """(where, text) for every string the window's widgets, actions and menus show."""
    from PySide6.QtWidgets import (
        QAbstractButton,
        QDockWidget,
        QLabel,
        QLineEdit,
        QPlainTextEdit,
        QTableWidget,
        QToolBar,
        QTreeWidget,
        QWidget,
    )

    out: list[tuple[str, str]] = []

    def add(where: str, text: str) -> None:
        text = re.sub(r"<[^>]+>|&nbsp;", " ", text or "").strip()
        if text:
            out.append((where, text))

    for action in window.findChildren(__import__("PySide6.QtGui").QtGui.QAction):
        if action.isSeparator():
            continue
        name = action.objectName() or action.text()
        add(f"action {name} text", action.text())
        add(f"action {name} tip", action.toolTip())
        add(f"action {name} status tip", action.statusTip())
    for widget in window.findChildren(QWidget):
        name = f"{type(widget).__name__} {widget.objectName()}"
        add(f"{name} tooltip", widget.toolTip())
        add(f"{name} accessible name", widget.accessibleName())
        add(f"{name} accessible description", widget.accessibleDescription())
        if isinstance(widget, (QLabel, QAbstractButton)):
            add(f"{name} text", widget.text())
        if isinstance(widget, (QLineEdit, QPlainTextEdit)):
            add(f"{name} placeholder", widget.placeholderText().splitlines()[0]
                if widget.placeholderText() else "")  # fmt: skip
        if isinstance(widget, (QDockWidget, QToolBar)):
            add(f"{name} title", widget.windowTitle())
        if isinstance(widget, QTableWidget):
            for col in range(widget.columnCount()):
                item = widget.horizontalHeaderItem(col)
                add(f"{name} header {col}", item.text() if item else "")
        if isinstance(widget, QTreeWidget):
            header = widget.headerItem()
            for col in range(widget.columnCount()):
                add(f"{name} header {col}", header.text(col))
    for menu in window.menuBar().actions():
        add("menu title", menu.text())
    return out


def _untranslated(texts: list[tuple[str, str]]) -> list[str]:
    return [
        f"{where}: {text!r}"
        for where, text in texts
        if not HANGUL.search(text) and not _AS_IS.match(text)
    ]


@pytest.fixture
def korean(monkeypatch):
    monkeypatch.setenv(i18n.ENV_VAR, "ko")


def test_window_in_korean(qtbot, gui_dirs, korean):
    from PySide6.QtCore import QSettings

    from gradviz.ui import actions
    from gradviz.ui.app import create_application
    from gradviz.ui.main_window import MainWindow

    create_application(adopt=True)
    settings_dir, data_dir = gui_dirs
    settings = QSettings(str(settings_dir / "gradviz.ini"), QSettings.Format.IniFormat)
    window = MainWindow(settings=settings, data_dir=data_dir, start_kernel=False)
    qtbot.addWidget(window)
    assert window.language == "ko"
    texts = _visible_texts(window)
    assert len(texts) > 150, len(texts)
    assert _untranslated(texts) == []
    assert [a.text() for a in window.menuBar().actions()] == [
        "파일(&F)", "실행(&R)", "데모(&D)", "보기(&V)", "도움말(&H)",
    ]  # fmt: skip
    # the F1 table: every row in Korean
    rows = actions.shortcut_rows(window.actions_by_key)
    assert rows and all(HANGUL.search(what) for what, _ in rows), rows
    # the demos menu: titles and tooltips from the demos' catalog
    demo_titles = [a.text() for a in window.demo_actions.values()]
    assert all(HANGUL.search(t) for t in demo_titles), demo_titles
    # names for scripts and tests stay English
    assert window.findChild(__import__("PySide6.QtWidgets").QtWidgets.QToolButton, "StepintoButton")
    window.close()


def test_debug_strip_and_guide_in_korean(qtbot, korean):
    from gradviz.app.guide import GuideContext, guide_note, position_text, reply_status
    from gradviz.app.models import AppState, FrameInfo, PauseInfo
    from gradviz.ui.app import create_application
    from gradviz.ui.debug_strip import DebugStrip
    from gradviz.ui.i18n import install_language

    create_application(adopt=True)
    assert install_language(None) == "ko"
    pause = PauseInfo(statement=0, line=7, iteration=2, iterations=3,
                      frames=(FrameInfo(name="Net.forward", call_line=23),))  # fmt: skip
    strip = DebugStrip()
    qtbot.addWidget(strip)
    strip.set_pause(pause)
    assert strip.iteration_text() == "3번 중 2번째 반복"
    assert strip.stack_text() == "forward (Net) ← 23번 줄"
    assert "멈춤" in strip.where_label.text()
    assert position_text(5, 2) == "문장 5개 중 2개 실행"
    assert position_text(5, 2, pause) == "7번 줄에서 멈춤, 3번 중 2번째 반복"
    note = guide_note(GuideContext(pause=pause, paused_code="y = x * 2"))
    assert note.tag is not None and note.tag.text == "멈춤 · 7번 줄 · 3번 중 2번째 반복"
    assert reply_status("reset", AppState.of(None)).startswith("처음으로 돌아갔습니다")


def test_language_menu_remembers_the_choice(qtbot, gui_dirs, monkeypatch):
    from PySide6.QtCore import QSettings

    from gradviz.ui import dialogs
    from gradviz.ui.app import create_application
    from gradviz.ui.main_window import MainWindow

    monkeypatch.delenv(i18n.ENV_VAR)
    monkeypatch.setenv("LANG", "en_US.UTF-8")
    for var in ("LC_ALL", "LC_MESSAGES", "LANGUAGE"):
        monkeypatch.delenv(var, raising=False)
    told = []
    monkeypatch.setattr(dialogs, "language_changed", lambda *a: told.append(a[1:]))
    create_application(adopt=True)
    settings_dir, data_dir = gui_dirs
    ini = str(settings_dir / "gradviz.ini")
    window = MainWindow(settings=QSettings(ini, QSettings.Format.IniFormat), data_dir=data_dir,
                        start_kernel=False)  # fmt: skip
    qtbot.addWidget(window)
    assert window.language == "en"
    checked = [a.data() for a in window.language_actions.actions() if a.isChecked()]
    assert checked == [""]  # follows the system
    ko = next(a for a in window.language_actions.actions() if a.data() == "ko")
    ko.trigger()
    assert told == [("한국어", None)]
    assert window.menuBar().actions()[0].text() == "&File"  # applies at the next start
    window.close()

    again = MainWindow(settings=QSettings(ini, QSettings.Format.IniFormat), data_dir=data_dir,
                       start_kernel=False)  # fmt: skip
    qtbot.addWidget(again)
    assert again.language == "ko"
    assert again.menuBar().actions()[0].text() == "파일(&F)"
    assert [a.data() for a in again.language_actions.actions() if a.isChecked()] == ["ko"]
    monkeypatch.setenv("LANG", "ko_KR.UTF-8")  # back to the system's language, Korean here
    system = next(a for a in again.language_actions.actions() if a.data() == "")
    system.trigger()
    assert told[-1] == ("한국어", None)
    again.close()

    monkeypatch.setenv(i18n.ENV_VAR, "en")  # the variable beats the saved choice
    third = MainWindow(settings=QSettings(ini, QSettings.Format.IniFormat), data_dir=data_dir,
                       start_kernel=False)  # fmt: skip
    qtbot.addWidget(third)
    assert third.menuBar().actions()[0].text() == "&File"
    third.close()


@pytest.mark.slow
def test_demo_runs_in_korean(main_window, qtbot, monkeypatch):
    """A demo stepped in Korean: the guide (the demo's note), the status bar and the
    position speak Korean; the code in the editor is the demo's own, unchanged."""
    from gradviz.app.demos import find_demo

    monkeypatch.setenv(i18n.ENV_VAR, "ko")
    window = main_window(demo="two_paths")
    assert window.editor.toPlainText() == find_demo("two_paths").source
    assert "데모: 한 리프 텐서로 들어가는 두 경로" in window.guide.title.text()
    window.run_to_end()
    qtbot.waitUntil(lambda: not window.busy and window.at_end(), timeout=60_000)
    assert HANGUL.search(window.guide.note.text()), window.guide.note.text()
    assert HANGUL.search(window.position_label.text()), window.position_label.text()
    assert HANGUL.search(window.accumulation_panel.table.horizontalHeaderItem(0).text())
    assert os.environ[i18n.ENV_VAR] == "ko"
