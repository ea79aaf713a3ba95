"""Fixtures for the UI tests. Qt is imported inside the fixtures, so core tests never load it."""

from __future__ import annotations

import os

import pytest

# Headless by default; a developer can still run the UI tests on a real display.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# The tests read the window in English whatever the machine's locale (LANG=ko_KR.UTF-8
# picks Korean otherwise); tests/test_i18n.py sets Korean where it checks it.
os.environ.setdefault("GRADVIZ_LANG", "en")

def _slow_tests() -> frozenset[str]:
    """The node ids tests/slow_tests.txt lists (scripts/slow_tests.py writes it)."""
    from pathlib import Path

    path = Path(__file__).with_name("slow_tests.txt")
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return frozenset()
    return frozenset(line.strip() for line in lines if line.strip() and not line.startswith("#"))


def pytest_collection_modifyitems(config, items):
    """The fast lane (``pytest -m "not slow"``, a few minutes on 2 cores) leaves out the
    tests that took a second or more in a whole run, as listed in tests/slow_tests.txt,
    besides those marked ``@pytest.mark.slow`` by hand. CI runs every test."""
    listed = _slow_tests()
    if not listed:
        return
    slow = pytest.mark.slow
    for item in items:
        if item.nodeid in listed:
            item.add_marker(slow)


def _give_memory_back() -> None:
    """Collect what the module's tests left, and hand freed heap back to the OS (glibc
    keeps it otherwise: the suite's resident memory only ever grew, to 12 GB)."""
    import ctypes
    import gc
    import sys

    gc.collect()
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL("libc.so.6").malloc_trim(0)
        except (OSError, AttributeError):
            pass


def _rss_bytes() -> tuple[int, int]:
    """This process's resident memory now and at its peak (Linux; zeros elsewhere)."""
    import resource

    now = 0
    try:
        with open("/proc/self/statm") as f:
            now = int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        pass
    return now, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


#: a test's leftovers are collected before the next test runs once the process holds
#: this much more than after the last collection (relative, so the garbage carried from
#: test to test stays this small wherever the process's own size is)
COLLECT_GROWTH_BYTES = 512 * 1024 * 1024
#: a test that raises the process's peak by this much is named in GRADVIZ_TEST_RSS_LOG
LOG_PEAK_STEP_BYTES = 64 * 1024 * 1024

#: resident memory after the last collection
_floor = [0]


def _collect_and_note_floor() -> None:
    _give_memory_back()
    _floor[0] = _rss_bytes()[0]


@pytest.fixture(autouse=True)
def _memory_between_tests(request):
    """A test that made big tensors inside a session (whose frames and namespaces hold
    cycles) leaves them to the cyclic collector, whose full collections come rarely in
    a process that holds as many objects as the suite's: test_sandbox's MAC refusals
    (each builds its 0.2-1.8 GB operands first) carried 1.4 GB into linear-macs, which
    peaked at 3.12 GB in the whole suite. Past COLLECT_GROWTH_BYTES above the last
    collection they are collected at once (reading the size costs microseconds;
    collecting, only then)."""
    log = os.environ.get("GRADVIZ_TEST_RSS_LOG")
    before = _rss_bytes() if log or not _floor[0] else None
    if not _floor[0] and before is not None:
        _floor[0] = before[0]
    yield
    now = _rss_bytes()[0]
    if log and before is not None and now:
        peak = _rss_bytes()[1]
        if peak >= before[1] + LOG_PEAK_STEP_BYTES:
            # which test set the suite's peak: its id, resident before and after, peak
            with open(log, "a", encoding="utf-8") as f:
                f.write(f"{request.node.nodeid}\t{before[0] >> 20}\t{now >> 20}"
                        f"\t{peak >> 20}\n")
    if now > _floor[0] + COLLECT_GROWTH_BYTES:
        _collect_and_note_floor()


@pytest.fixture(autouse=True, scope="module")
def _memory_between_modules(request):
    before = _rss_bytes() if os.environ.get("GRADVIZ_TEST_RSS_LOG") else None
    yield
    _collect_and_note_floor()
    log = os.environ.get("GRADVIZ_TEST_RSS_LOG")
    if log and before is not None:
        # where the suite's memory goes, module by module (README's test memory figure)
        after = _rss_bytes()
        with open(log, "a", encoding="utf-8") as f:
            f.write(f"{request.module.__name__}\t{before[0] >> 20}\t{after[0] >> 20}"
                    f"\t{after[1] >> 20}\n")


KERNEL_TIMEOUT_MS = 60_000
"""Generous: CI machines are slow and shared, and each window starts a kernel (imports torch)."""


def _pointer(widget) -> int:
    import shiboken6

    return int(shiboken6.getCppPointer(widget)[0])


@pytest.fixture
def gui_dirs(tmp_path, monkeypatch):
    """Temporary settings and autosave folders, so tests never touch the user's."""
    settings_dir = tmp_path / "settings"
    data_dir = tmp_path / "data"
    settings_dir.mkdir()
    data_dir.mkdir()
    monkeypatch.setenv("GRADVIZ_SETTINGS_DIR", str(settings_dir))
    monkeypatch.setenv("GRADVIZ_DATA_DIR", str(data_dir))
    return settings_dir, data_dir


@pytest.fixture
def main_window(qtbot, gui_dirs, monkeypatch):
    """Factory: ``main_window(demo=..., file=..., source=...)`` -> a shown, ready MainWindow.

    At teardown every window is closed (unsaved changes discarded), its kernel
    process must be gone, and no top-level widget may be left behind.
    """
    from PySide6.QtCore import QCoreApplication, QEvent, QSettings
    from PySide6.QtWidgets import QApplication, QMessageBox

    from gradviz.ui import dialogs
    from gradviz.ui import main_window as mw
    from gradviz.ui.app import create_application

    create_application(adopt=True)  # styled as the gradviz command styles its own application
    settings_dir, data_dir = gui_dirs
    before = {_pointer(w) for w in QApplication.topLevelWidgets()}
    windows = []

    def factory(
        demo: str | None = None,
        file: str | None = None,
        source: str | None = None,
        first_launch: bool = False,
    ):
        settings = QSettings(str(settings_dir / "gradviz.ini"), QSettings.Format.IniFormat)
        if not first_launch and demo is None and file is None and source is None:
            demo = "first_backward"
        window = mw.MainWindow(settings=settings, data_dir=data_dir)
        windows.append(window)
        window.resize(1400, 900)
        window.show()
        if source is None:
            window.open_initial(file=file, demo=demo)
        else:  # a new, untitled script
            window.new_file()
            window.editor.setPlainText(source)
        qtbot.waitUntil(
            lambda: window.client.is_ready and window.state is not None and not window.busy,
            timeout=KERNEL_TIMEOUT_MS,
        )
        return window

    yield factory

    monkeypatch.setattr(
        dialogs, "ask_unsaved_changes", lambda *a, **k: QMessageBox.StandardButton.Discard
    )
    for window in windows:
        pid = window.client.pid()
        window.close()
        assert window.client.pid() is None, "the kernel outlived its window"
        if pid:
            with pytest.raises(ProcessLookupError):
                os.kill(pid, 0)
        window.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    QCoreApplication.processEvents()
    leaked = [
        f"{type(w).__name__}({w.objectName()!r})"
        for w in QApplication.topLevelWidgets()
        if _pointer(w) not in before and type(w).__name__ not in ("QTipLabel",)
    ]
    assert not leaked, f"top-level widgets left behind: {leaked}"


@pytest.fixture
def type_lines(qtbot):
    """Type lines into the editor the way a person does: characters, then Enter."""
    from PySide6.QtCore import Qt

    def typer(editor, *lines: str) -> None:
        editor.setFocus()
        for line in lines:
            qtbot.keyClicks(editor, line)
            qtbot.keyClick(editor, Qt.Key.Key_Return)

    return typer
