"""The window at every size: shrinking it, relaunching at the smaller size and Reset panel
layout keep the canvas the largest area (issue 22: after 1400x900 -> 1024x700 the canvas
was about 210x90 px under the legend)."""

from __future__ import annotations

import pytest


def _canvas_share(window) -> tuple[float, float]:
    canvas = window.canvas
    return canvas.width() / window.width(), canvas.height() / window.height()


def _settle(qtbot, window, size=None):
    if size is not None:
        window.resize(*size)
        qtbot.waitUntil(lambda: window.size().toTuple() == tuple(size), timeout=5000)
    # the layout, and any rebalancing queued after the resize (slow on a busy machine)
    qtbot.wait(150)
    qtbot.waitUntil(lambda: window._pending_rebalance is None, timeout=5000)
    qtbot.wait(150)


@pytest.mark.parametrize("sizes", [[(1024, 700)], [(1024, 700), (1400, 900)],
                                   [(900, 650), (1024, 700)]])
def test_resizing_keeps_the_canvas_the_largest_area(qtbot, main_window, sizes):
    window = main_window(demo="two_paths")
    _settle(qtbot, window)
    w0, h0 = _canvas_share(window)
    for size in sizes:
        _settle(qtbot, window, size)
        w, h = _canvas_share(window)
        assert window.canvas.width() >= 0.3 * window.width(), (size, window.canvas.size())
        assert window.canvas.height() >= 0.35 * window.height(), (size, window.canvas.size())
        # the proportions the user had are kept, give or take the panels' minimum sizes
        assert abs(w - w0) < 0.12 and abs(h - h0) < 0.15, ((w0, h0), (w, h), size)


def test_relaunch_after_shrinking_keeps_the_canvas(qtbot, main_window):
    window = main_window(demo="two_paths")
    _settle(qtbot, window, (1024, 700))
    window._save_window()
    window.close()
    again = main_window(demo="two_paths")  # the same settings file: restored geometry/state
    _settle(qtbot, again)
    assert again.canvas.width() >= 0.3 * again.width(), again.canvas.size()
    assert again.canvas.height() >= 0.35 * again.height(), again.canvas.size()


def test_reset_panel_layout_restores_the_editor_and_canvas(qtbot, main_window):
    window = main_window(demo="two_paths")
    _settle(qtbot, window, (1024, 700))
    window.splitter.setSizes([900, 100])  # the user dragged the canvas nearly shut
    window.resizeDocks([window.tensors_dock], [500], window.tensors_dock.orientation()
                       if hasattr(window.tensors_dock, "orientation") else _vertical())
    _settle(qtbot, window)
    window.reset_layout()
    _settle(qtbot, window)
    editor, canvas = window.splitter.sizes()
    assert canvas > editor, (editor, canvas)
    assert window.canvas.height() >= 0.35 * window.height(), window.canvas.size()


def test_first_window_fits_the_screen(qtbot, main_window):
    window = main_window(demo="two_paths")
    screen = window.screen().availableGeometry()
    window.settings.setValue("window/geometry", None)
    window.resize(screen.width() + 500, screen.height() + 400)
    window._fit_to_screen()
    assert window.width() <= screen.width() and window.height() <= screen.height()


def _vertical():
    from PySide6.QtCore import Qt

    return Qt.Orientation.Vertical


def test_a_long_status_ends_at_a_word_and_never_widens_the_window(qtbot, main_window):
    from gradviz.ui.text import ElidedLabel

    window = main_window(demo="two_paths")
    _settle(qtbot, window, (1024, 700))
    long = ("Line 15 failed: RuntimeError: Trying to backward through the graph a second "
            "time (or directly access saved tensors after they have already been freed). "
            "Saved intermediate values of the graph are freed when you call .backward()")
    window.set_status(long)
    qtbot.wait(50)
    label = window.status_label
    assert isinstance(label, ElidedLabel)
    assert window.status_text() == long  # what tests and the user's tooltip read
    shown = label.shown_text()
    assert shown.endswith("…") and len(shown) < len(long)
    # it ends where a word ends: the text before "…" is a prefix that stops at a space
    kept = shown[:-1]
    assert long.startswith(kept) and long[len(kept)] in " ,;:.(", shown
    assert long in label.toolTip()
    assert window.minimumSizeHint().width() <= 1024
    window.set_status("Ran line 4")
    assert label.shown_text() == "Ran line 4" and label.toolTip() == ""


def test_another_script_starts_the_tensors_table_at_its_names(qtbot, main_window):
    from tests.test_ui_window import wait_idle

    window = main_window(demo="retain_graph")
    _settle(qtbot, window, (1024, 700))
    window.stepper.run_to_end()
    wait_idle(qtbot, window, lambda: window.state and window.state["at_end"] or
              window.failed_here() is not None)
    bar = window.tensors_panel.table.horizontalScrollBar()
    if bar.maximum() == 0:
        pytest.skip("the tensors table fits without scrolling at this size")
    bar.setValue(bar.maximum())
    from gradviz.app.demos import find_demo

    window.files.load_demo(find_demo("inplace_memory"), ask=False)
    wait_idle(qtbot, window, lambda: window.state is not None)
    window.stepper.run_to_end()
    wait_idle(qtbot, window, lambda: window.state and window.state["at_end"])
    assert bar.value() == 0


def test_dock_tabs_show_whole_titles(qtbot, main_window):
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QTabBar

    window = main_window(demo="two_paths")
    _settle(qtbot, window, (1024, 700))
    bars = [b for b in window.findChildren(QTabBar) if b.parent() is window and b.count()]
    assert bars
    for bar in bars:
        assert bar.elideMode() == Qt.TextElideMode.ElideNone and bar.usesScrollButtons()
        for i in range(bar.count()):  # each tab is as wide as its whole title
            text_width = bar.fontMetrics().horizontalAdvance(bar.tabText(i).replace("&", ""))
            assert bar.tabRect(i).width() >= text_width, bar.tabText(i)


MANY_LEAVES = """\
import torch
import torch.nn as nn

torch.manual_seed(0)
layer = nn.TransformerEncoderLayer(d_model=16, nhead=2, dim_feedforward=32, batch_first=True)
model = nn.TransformerEncoder(layer, num_layers=2)
out = model(torch.randn(1, 4, 16))
loss = out.pow(2).mean()
loss.backward()
"""


def test_a_pass_with_many_leaves_never_grows_the_window(qtbot, main_window):
    """A 2-layer transformer's backward pass gives 24 leaves a .grad: the Backward passes
    dock lists each under the picked pass. The list scrolls; the window stays 1024x700
    (it grew to 1024x821, past a 768-px laptop screen)."""
    from tests.test_ui_window import wait_idle

    window = main_window(source=MANY_LEAVES)
    _settle(qtbot, window, (1024, 700))
    window.stepper.run_to_end()
    wait_idle(qtbot, window, lambda: window.state and window.state["at_end"])
    _settle(qtbot, window)
    panel = window.passes_panel
    assert panel.grads_text().count(".grad =") >= 24  # every leaf is still listed
    assert window.size().toTuple() == (1024, 700), window.size()
    assert window.minimumSizeHint().height() <= 700, window.minimumSizeHint()
