"""Trust in the window, as editors do it: demos and new scripts run as Python; a file
from a folder never trusted opens in restricted mode with a banner that asks once."""

from __future__ import annotations

from PySide6.QtCore import Qt

TIMEOUT = 120_000

SCRIPT = (
    "import subprocess, itertools\n"  # a script's own tool: refused in restricted mode
    "import torch\n"
    "pairs = list(itertools.combinations(range(3), 2))\n"
    "x = torch.ones(2, requires_grad=True)\n"
    "y = (x * len(pairs)).sum()\n"
    "y.backward()\n"
)


def wait_idle(qtbot, window, condition=None) -> None:
    qtbot.waitUntil(
        lambda: window.client.is_ready and not window.busy
        and (condition is None or bool(condition())),
        timeout=TIMEOUT,
    )


def press_f10(qtbot, window, wait: bool = True) -> None:
    before = window.state["cursor"] if window.state else None
    window.editor.setFocus()
    qtbot.keyClick(window.editor, Qt.Key.Key_F10)
    if wait:
        wait_idle(qtbot, window, lambda: window.state["cursor"] != before)


def run_to_end(qtbot, window) -> None:
    window.editor.setFocus()
    qtbot.keyClick(window.editor, Qt.Key.Key_F5)
    wait_idle(qtbot, window, lambda: window.state is not None)


def test_a_demo_runs_as_python_and_says_so(qtbot, main_window):
    window = main_window(demo="first_backward")
    assert window.client.trusted
    assert window.mode_badge.text() == "Trusted"
    assert not window.trust_banner.isVisibleTo(window)


def test_a_file_from_an_untrusted_folder_opens_restricted_and_asks_once(
    qtbot, main_window, tmp_path
):
    folder = tmp_path / "shared"
    folder.mkdir()
    script = folder / "theirs.py"
    script.write_text(SCRIPT)
    window = main_window(file=str(script))
    # nothing ran as Python: restricted mode, the banner asks
    assert not window.client.trusted
    assert window.mode_badge.text() == "Restricted mode"
    assert window.trust_banner.isVisibleTo(window)
    assert "'shared'" in window.trust_banner.label.text()
    assert str(folder.resolve()) in window.trust_banner.toolTip()
    run_to_end(qtbot, window)
    assert window.state["cursor"] == 0  # `import subprocess` is refused in restricted mode
    assert window.editor.error is not None and window.editor.error[0] == 1

    # Trust folder: remembered, the kernel replaced, the script runs as Python
    pid_before = window.client.pid()
    qtbot.mouseClick(window.trust_banner.trust_button, Qt.MouseButton.LeftButton)
    wait_idle(qtbot, window, lambda: window.client.trusted)
    assert window.client.pid() != pid_before
    assert not window.trust_banner.isVisibleTo(window)
    assert window.mode_badge.text() == "Trusted"
    run_to_end(qtbot, window)
    assert window.state["cursor"] == 6
    assert window.state["tensors"]["x"]["grad"] == [3.0, 3.0]
    stored = window.settings.value("trust/folders")
    stored = [stored] if isinstance(stored, str) else list(stored)
    assert str(folder.resolve()) in stored

    # the same folder again: trusted at once, no question
    other = folder / "second.py"
    other.write_text("import collections\nc = collections.Counter('aab')\n")
    assert window.files.open_path(other, ask=False)
    wait_idle(qtbot, window)
    assert window.client.trusted and not window.trust_banner.isVisibleTo(window)


def test_keep_restricted_hides_the_banner_and_stays_sandboxed(qtbot, main_window, tmp_path):
    script = tmp_path / "theirs.py"
    script.write_text("a = torch.ones(2)\nb = a * 2\n")
    window = main_window(file=str(script))
    assert window.trust_banner.isVisibleTo(window)
    qtbot.mouseClick(window.trust_banner.keep_button, Qt.MouseButton.LeftButton)
    assert not window.trust_banner.isVisibleTo(window)
    assert not window.client.trusted
    run_to_end(qtbot, window)
    assert window.state["cursor"] == 2
    assert not window.settings.value("trust/folders")


def test_print_in_a_stepped_function_shows_before_the_next_step(qtbot, main_window):
    """Trusted mode streams print output as it is written, tagged with its line: at a
    pause inside a function, what it printed is already in the Output panel."""
    source = (
        "import torch\n"
        "def f(t):\n"
        "    print('inside f', t.sum().item())\n"
        "    u = t * 2\n"
        "    return u\n"
        "y = f(torch.ones(3))\n"
    )
    window = main_window(source=source)
    assert window.client.trusted
    window.editor.setFocus()
    qtbot.keyClick(window.editor, Qt.Key.Key_F10)  # import torch
    wait_idle(qtbot, window, lambda: window.state["cursor"] == 1)
    qtbot.keyClick(window.editor, Qt.Key.Key_F10)  # def f
    wait_idle(qtbot, window, lambda: window.state["cursor"] == 2)
    for _ in range(3):  # into f: line 3, then line 4 (after the print ran)
        qtbot.keyClick(window.editor, Qt.Key.Key_F11)
        wait_idle(qtbot, window)
        paused = window.state.get("paused")
        if paused and paused.get("line") == 4:
            break
    assert window.state["paused"]["line"] == 4
    live = [e for e in window.output_panel.entries() if e.kind == "output"]
    assert live and live[-1].text == "inside f 3.0\n" and live[-1].line == 3
    assert "inside f 3.0" in window.output_panel.text()


def test_a_trusted_script_that_ends_the_kernel_keeps_the_window_and_the_text(qtbot, main_window):
    """os._exit in the user's own script ends the trusted kernel: the window stays, the
    text stays, the message names the line, and the kernel comes back."""
    source = "import torch\nx = torch.ones(2) * 3\nimport os\nos._exit(3)\ny = x + 1\n"
    window = main_window(source=source)
    assert window.client.trusted
    for _ in range(3):
        press_f10(qtbot, window)
    assert window.state["cursor"] == 3
    messages = []
    window.client.crashed.connect(messages.append)
    press_f10(qtbot, window, wait=False)
    qtbot.waitUntil(lambda: bool(messages), timeout=TIMEOUT)
    assert "exited with code 3 while line 4 ran" in messages[0]
    qtbot.waitUntil(lambda: window.client.is_ready and not window.busy, timeout=TIMEOUT)
    assert window.editor.toPlainText() == source
    assert window.isVisible()


def test_going_back_by_a_replay_says_what_it_repeats_outside_the_script(qtbot, main_window, tmp_path):
    """Trusted: a replay from the start writes the script's files again; the window says
    so, naming the line."""
    log = tmp_path / "log.txt"
    source = (
        "import torch\n"
        f"with open({str(log)!r}, 'a') as f:\n"
        "    f.write('ran\\n')\n"
        "x = torch.ones(2) * 3\n"
        "y = x + 1\n"
    )
    window = main_window(source=source)
    for _ in range(3):
        press_f10(qtbot, window)
    assert log.read_text() == "ran\n"
    window.stepper._replay_to_step(len(window.stepper.timeline) - 1)  # a replay to here
    wait_idle(qtbot, window)
    assert log.read_text() == "ran\nran\n"  # what the note warns of
    assert "line 2 writes a file (open)" in window.output_panel.text()
    assert window.state["cursor"] == 3
