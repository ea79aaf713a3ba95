"""gradviz.show() never harms its host: no display, a host Qt application, a running loop.

Each case runs in a fresh process (a Qt application is one per process, and a
missing display used to abort the whole process with SIGABRT).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("PySide6")

PREAMBLE = """
import gc, json, os, sys, time
import torch
import gradviz
x = torch.tensor([1.0, 2.0], requires_grad=True)
with gradviz.record() as rec:
    loss = (x ** 2).sum()
    loss.backward()
"""

HOST = PREAMBLE + """
from PySide6.QtCore import QTimer
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication, QStyleFactory

app = QApplication(["host"])
app.setApplicationName("host-app")
app.setOrganizationName("host-org")
app.setStyle(QStyleFactory.create("Windows"))
# no style sheet of its own: one would wrap the style and hide its name from look()
palette = app.palette()
palette.setColor(QPalette.ColorRole.Window, QColor("#123456"))
app.setPalette(palette)
app.setQuitOnLastWindowClosed(False)

def look():
    return [app.style().name(), app.styleSheet(), app.palette().color(QPalette.ColorRole.Window).name(),
            app.font().toString(), app.applicationName(), app.organizationName()]

def windows():
    return [w for w in app.topLevelWidgets() if type(w).__name__ == "MainWindow" and w.isVisible()]

before = look()
out = {}

def show_now():
    started = time.monotonic()
    out["returned"] = gradviz.show(loss, names={"x": x}, recorder=rec)
    out["seconds"] = time.monotonic() - started
    shown = windows()
    out["windows"] = len(shown)
    out["read_only"] = shown[0].read_only if shown else None
    out["nodes"] = len(shown[0].canvas.node_ids()) if shown else 0
"""


def run(code: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
        timeout=300, env=env or {**os.environ, "QT_QPA_PLATFORM": "offscreen"},
    )


def last_json(proc: subprocess.CompletedProcess) -> dict:
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the display check is Linux's")
@pytest.mark.parametrize("platform", [None, "xcb", "wayland"])
def test_no_display_raises_a_clear_error_and_the_process_lives(platform):
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    if platform:
        env["QT_QPA_PLATFORM"] = platform
    proc = run(PREAMBLE + """
try:
    gradviz.show(loss)
except gradviz.NoDisplayError as exc:
    print(json.dumps({"error": str(exc), "alive": True}))
""", env=env)
    out = last_json(proc)
    assert out["alive"]
    assert "cannot open a window" in out["error"] and "gradviz open" in out["error"]
    # in a notebook, display() shows the page: to_html() would show its source as a string
    assert "inline" in out["error"] and "display(snap)" in out["error"]
    assert "to_html()" not in out["error"]


def test_inside_a_host_application_show_returns_at_once_and_leaves_the_host_alone():
    proc = run(HOST + """
show_now()
after = look()
shown = windows()
out["same_look"] = before == after
out["before"] = before
out["frozen"] = gc.get_freeze_count()
out["kernel_started"] = shown[0].client.started
out["kernel_pid"] = shown[0].client.pid()
shown[0].close()
print(json.dumps(out))
""")
    out = last_json(proc)
    assert out["before"][0] == "windows" and out["before"][1] == ""
    assert out["returned"] is None and out["windows"] == 1 and out["read_only"] is True
    assert out["nodes"] > 0
    assert out["same_look"], "show() restyled the host application"
    assert out["frozen"] == 0, "show() froze the host's heap"
    assert out["kernel_started"] is False and out["kernel_pid"] is None


def test_inside_a_running_event_loop_show_returns_and_the_loop_goes_on():
    proc = run(HOST + """
ticks = []
timer = QTimer()
timer.timeout.connect(lambda: ticks.append(1))
timer.start(10)

def later():
    show_now()
    out["ticks_at_show"] = len(ticks)
    QTimer.singleShot(300, finish)

def finish():
    out["ticks_after"] = len(ticks)
    out["same_look"] = before == look()
    for w in windows():
        w.close()
    app.quit()

QTimer.singleShot(0, later)
out["exec"] = app.exec()
print(json.dumps(out))
""")
    out = last_json(proc)
    assert out["returned"] is None and out["windows"] == 1 and out["exec"] == 0
    assert out["seconds"] < 60
    assert out["ticks_after"] > out["ticks_at_show"], "the host's loop stopped"
    assert out["same_look"]


def test_from_a_plain_script_show_runs_its_own_loop_without_freezing_the_heap():
    proc = run(PREAMBLE + """
from PySide6.QtWidgets import QApplication

seen = {}
def fake_exec(self):
    seen["frozen"] = gc.get_freeze_count()
    seen["styled"] = bool(self.styleSheet()) and self.palette().color(self.palette().ColorRole.Window).name()
    seen["windows"] = sum(type(w).__name__ == "MainWindow" for w in self.topLevelWidgets())
    for w in self.topLevelWidgets():
        w.close()
    return 0

QApplication.exec = fake_exec
seen["returned"] = gradviz.show(loss)
print(json.dumps(seen))
""")
    out = last_json(proc)
    # styled (Fusion and a layout style sheet) with the system's own palette, no heap frozen
    assert out == {"frozen": 0, "styled": out["styled"], "windows": 1, "returned": 0}
    assert str(out["styled"]).startswith("#")


def test_in_a_notebook_without_gui_qt_show_says_the_cell_will_wait():
    """`gradviz.show()` in a Jupyter kernel with no `%gui qt` runs Qt until the window
    closes; before it does, it says so and names `%gui qt` (the cell looked hung)."""
    proc = run(PREAMBLE + """
import types
from PySide6.QtWidgets import QApplication

fake = types.ModuleType("IPython")
fake.get_ipython = lambda: types.SimpleNamespace(kernel=object())
sys.modules["IPython"] = fake

def fake_exec(self):
    for w in self.topLevelWidgets():
        w.close()
    return 0

QApplication.exec = fake_exec
print(json.dumps({"returned": gradviz.show(loss)}))
""")
    assert last_json(proc) == {"returned": 0}
    assert "%gui qt" in proc.stderr and "waits until the window is closed" in proc.stderr


def test_outside_a_notebook_show_says_nothing_of_gui_qt():
    proc = run(PREAMBLE + """
from PySide6.QtWidgets import QApplication

QApplication.exec = lambda self: [w.close() for w in self.topLevelWidgets()] and 0
print(json.dumps({"returned": gradviz.show(loss)}))
""")
    assert "%gui qt" not in proc.stderr
