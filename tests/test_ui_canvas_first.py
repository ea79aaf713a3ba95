"""A step shows on the canvas first; the side panels take the state after that paint."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QEvent, QObject  # noqa: E402

from tests.conftest import KERNEL_TIMEOUT_MS  # noqa: E402

SCRIPT = """\
import torch.nn as nn
torch.manual_seed(0)
net = nn.Linear(4, 1)
x = torch.randn(8, 4)
out = net(x)
loss = out.pow(2).mean()
"""


class _CanvasPaints(QObject):
    """At each paint of the canvas: the nodes on it and the tensors panel's names."""

    def __init__(self, window):
        super().__init__()
        self.w = window
        self.seen: list[tuple[int, list[str]]] = []
        window.canvas.viewport().installEventFilter(self)

    def eventFilter(self, obj, event):  # noqa: N802 - Qt API
        if event.type() == QEvent.Type.Paint:
            self.seen.append((len(self.w.canvas.node_ids()), self.w.tensors_panel.names()))
        return False


def test_a_step_is_painted_on_the_canvas_before_the_panels_take_it(main_window, qtbot):
    w = main_window(source=SCRIPT)
    w.stepper._run_to_line(4)  # through `x = ...`: `out = net(x)` is next

    def next_line():
        return w.state["statements"][w.state["cursor"]]["line"]

    qtbot.waitUntil(lambda: not w.busy and next_line() == 5, timeout=KERNEL_TIMEOUT_MS)
    qtbot.wait(50)
    before = len(w.canvas.node_ids())
    paints = _CanvasPaints(w)
    w.step()  # out = net(x): new nodes on the canvas, `out` in the tensors panel
    qtbot.waitUntil(lambda: not w.busy and next_line() == 6, timeout=KERNEL_TIMEOUT_MS)
    assert "out" in w.tensors_panel.names()
    # the canvas had the new nodes on screen while the panel did not name `out` yet
    first = next(seen for seen in paints.seen if seen[0] > before)
    assert "out" not in first[1]
