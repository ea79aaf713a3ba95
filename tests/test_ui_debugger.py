"""The window as a debugger (issue 9): step into a training loop, breakpoints, run to
backward(), each pass on its own graph, the timeline, Stop that keeps the place.

Every number is checked against plain PyTorch run to the same point."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

import torch  # noqa: E402
from PySide6.QtCore import QPoint, Qt  # noqa: E402

from gradviz.graph.fmt import fmt_value  # noqa: E402
from gradviz.ui.canvas import format_value  # noqa: E402
from tests.test_debugger import BACKWARD_LINE, LOOP_LINE, TRAIN, _graph_labels, _plain_until  # noqa: E402
from tests.test_ui_window import press, wait_idle  # noqa: E402

FORWARD_LINES = (12, 13)
CALL_LINE = 23
OPT_STEP_LINE = 25


def _loop_index(window) -> int:
    return next(s["index"] for s in window.state["statements"] if s["line"] == LOOP_LINE)


def _key(qtbot, window, key, modifier=Qt.KeyboardModifier.NoModifier) -> None:
    """Press ``key`` and wait for the step it makes to land on the timeline."""
    before = len(window.timeline)
    press(qtbot, window, key, modifier)
    wait_idle(qtbot, window, lambda: len(window.timeline) > before)


def _window_at_loop(qtbot, main_window):
    window = main_window(source=TRAIN)
    window.editor.select_lines(LOOP_LINE - 1)
    press(qtbot, window, Qt.Key.Key_F10, Qt.KeyboardModifier.ControlModifier)  # run to cursor
    wait_idle(qtbot, window, lambda: window.state["cursor"] == _loop_index(window))
    assert window.state["paused"] is None
    return window


def _click_gutter(qtbot, editor, line: int) -> None:
    block = editor.document().findBlockByNumber(line - 1)
    top = editor.blockBoundingGeometry(block).translated(editor.contentOffset()).top()
    y = int(top + editor.blockBoundingRect(block).height() / 2)
    qtbot.mouseClick(editor._gutter, Qt.MouseButton.LeftButton, pos=QPoint(10, y))


def _plain_grads(iterations: int) -> dict[str, torch.Tensor]:
    plain = _plain_until(iterations)
    return {f"net.{n}": p.grad for n, p in plain["net"].named_parameters()}


def _canvas_labels(window) -> list[str]:
    return sorted(window.canvas.node_item(n).attrs["label"] for n in window.canvas.node_ids())


def test_step_into_a_training_loop_line_by_line(qtbot, main_window):
    window = _window_at_loop(qtbot, main_window)
    lines, iterations = [], []
    for k in (1, 2, 3):
        for expected in (22, CALL_LINE, *FORWARD_LINES, BACKWARD_LINE, OPT_STEP_LINE):
            _key(qtbot, window, Qt.Key.Key_F11)
            lines.append(window.editor.paused_line)
            iterations.append(window.debug_strip.iteration_text())
            assert window.debug_strip.isVisible()
            assert f"line {expected}" in window.guide_note.text()
            if expected == FORWARD_LINES[0]:
                # inside forward: the call stack and the frame's locals beside the globals
                assert window.debug_strip.stack_text() == f"forward (Net) ← line {CALL_LINE}"
                names = window.tensors_panel.names()
                assert names[0].startswith("Net.forward.") and "x" in names
                assert window.tensors_panel.is_local("Net.forward.x")
                assert not window.tensors_panel.is_local("x")
                assert window.tensors_panel.cell("Net.forward.x", "shape") == window.tensors_panel.cell("x", "shape")
            if expected == OPT_STEP_LINE:
                # just after loss.backward(): the graph drawn is this iteration's
                passes = window.state["backward_passes"]
                assert len(passes) == k and passes[-1]["iteration"] == k
                on_canvas = set(window.canvas.node_ids())
                assert set(passes[-1]["nodes"]) <= on_canvas
                if k > 1:
                    old = {n for n, lab in zip(passes[-2]["nodes"], passes[-2]["labels"]) if lab != "AccumulateGrad"}
                    assert not old & on_canvas, "the previous iteration's graph is still drawn"
                grads = _plain_grads(k)
                for name, grad in grads.items():
                    assert window.tensors_panel.cell(name, "grad") == fmt_value(grad.tolist(), 200), (k, name)
    assert lines == [22, CALL_LINE, *FORWARD_LINES, BACKWARD_LINE, OPT_STEP_LINE] * 3
    assert iterations == [f"iteration {k} of 3" for k in (1, 2, 3) for _ in range(6)]

    _key(qtbot, window, Qt.Key.Key_F11)  # the loop ends: the statement is done
    assert window.state["paused"] is None and window.editor.paused_line is None
    assert not window.debug_strip.isVisible()
    assert window.state["cursor"] == _loop_index(window) + 1
    assert window.editor.next_lines[0] == 26


def test_replaying_pass_two_shows_its_own_graph_and_gradients(qtbot, main_window):
    window = _window_at_loop(qtbot, main_window)
    press(qtbot, window, Qt.Key.Key_F5)  # no breakpoints: to the end
    wait_idle(qtbot, window, lambda: window.state["at_end"])
    passes = window.state["backward_passes"]
    titles = window.passes_panel.titles()
    assert titles == [f"#{k} · line {BACKWARD_LINE} · iteration {k} · loss" for k in (1, 2, 3)]

    row = window.passes_panel.list.visualItemRect(window.passes_panel.list.item(1)).center()
    window.passes_dock.raise_()
    qtbot.mouseClick(window.passes_panel.list.viewport(), Qt.MouseButton.LeftButton, pos=row)
    second = passes[1]
    # pass 2's nodes are gone from the final graph: the canvas draws pass 2's own graph
    assert set(window.canvas.node_ids()) == set(second["nodes"])
    assert _canvas_labels(window) == _graph_labels(_plain_until(2)["loss"])
    for node_id in window.canvas.node_ids():
        attrs = window.canvas.node_item(node_id).attrs
        assert not re.fullmatch(r"(fn|acc|t)\d+", attrs["label"])
        if attrs["label"] == "AccumulateGrad":
            assert attrs["vars"] and attrs["vars"][0].startswith("net.")
    assert "executing" in window.canvas.node_item(second["steps"][0]["node"]).state
    assert f"Backward #2 (line {BACKWARD_LINE}, iteration 2)" in window.guide_note.text()

    # the pass list shows each .grad right after pass 2 (the Tensors panel shows the final)
    grads = _plain_grads(2)
    for name, grad in grads.items():
        assert f"{name}.grad = {fmt_value(grad.tolist(), 90)}" in window.passes_panel.grads_text()
    # step the pass: the gradient carried into each parameter's AccumulateGrad is pass 2's
    acc_names = {n: second["names"][n][0] for n, lab in zip(second["nodes"], second["labels"])
                 if lab == "AccumulateGrad"}
    seen = set()
    for index, step in enumerate(second["steps"]):
        if index:
            press(qtbot, window, Qt.Key.Key_F7)
        assert "executing" in window.canvas.node_item(step["node"]).state
        text = window.guide_note.text()
        assert not re.search(r"\b(fn|acc)\d+\b", text), text
        for grad, target in zip(step["grad_inputs"], step["targets"]):
            if target in acc_names:
                name = acc_names[target]
                assert torch.allclose(torch.tensor(grad), grads[name]), name
                assert window.canvas.edge_label(step["node"], target) == format_value(grads[name].tolist())
                seen.add(name)
    assert seen == set(grads)
    assert f"step {len(second['steps'])} of {len(second['steps'])}" in window.guide_note.text()

    # a pass still on the graph (the last one) is replayed on the graph itself
    row = window.passes_panel.list.visualItemRect(window.passes_panel.list.item(2)).center()
    qtbot.mouseClick(window.passes_panel.list.viewport(), Qt.MouseButton.LeftButton, pos=row)
    assert "loss" in {window.canvas.node_item(n).attrs["label"] for n in window.canvas.node_ids()}
    assert set(passes[2]["nodes"]) <= set(window.canvas.node_ids())


def test_step_into_forward_and_step_out_to_the_caller(qtbot, main_window):
    window = _window_at_loop(qtbot, main_window)
    for line in (22, CALL_LINE, FORWARD_LINES[0]):
        _key(qtbot, window, Qt.Key.Key_F11)
        assert window.editor.paused_line == line
    assert window.debug_strip.stack_text() == f"forward (Net) ← line {CALL_LINE}"
    assert "in Net.forward" in window.status_text()
    _key(qtbot, window, Qt.Key.Key_F11, Qt.KeyboardModifier.ShiftModifier)  # step out
    assert window.editor.paused_line == BACKWARD_LINE
    assert window.debug_strip.stack_text() == ""
    assert window.debug_strip.iteration_text() == "iteration 1 of 3"
    assert not any(window.tensors_panel.is_local(n) for n in window.tensors_panel.names())
    assert "loss" in window.tensors_panel.names()
    # F10 steps over: the next statement of the loop body, never inside forward
    _key(qtbot, window, Qt.Key.Key_F10)
    assert window.editor.paused_line == OPT_STEP_LINE
    _key(qtbot, window, Qt.Key.Key_F10)
    assert window.editor.paused_line == 22 and window.debug_strip.iteration_text() == "iteration 2 of 3"
    # Shift+F11 in the loop body finishes the loop
    _key(qtbot, window, Qt.Key.Key_F11, Qt.KeyboardModifier.ShiftModifier)
    assert window.state["paused"] is None
    assert window.state["cursor"] == _loop_index(window) + 1
    assert not window.act_step_out.isEnabled()


def test_a_breakpoint_in_the_loop_stops_on_each_iteration(qtbot, main_window):
    window = main_window(source=TRAIN)
    assert window.state["cursor"] == 0
    _click_gutter(qtbot, window.editor, OPT_STEP_LINE)
    assert window.editor.breakpoints() == [OPT_STEP_LINE]
    for k in (1, 2, 3):
        _key(qtbot, window, Qt.Key.Key_F5)
        assert window.editor.paused_line == OPT_STEP_LINE
        assert window.debug_strip.iteration_text() == f"iteration {k} of 3"
        assert len(window.state["backward_passes"]) == k
    press(qtbot, window, Qt.Key.Key_F5)  # no breakpoint left ahead: to the end
    wait_idle(qtbot, window, lambda: window.state["at_end"])
    assert window.state["paused"] is None
    assert window.output_panel.entries()[-1].plain().strip()  # print(loss.item()) ran
    # clicking the dot again removes the breakpoint
    _click_gutter(qtbot, window.editor, OPT_STEP_LINE)
    assert window.editor.breakpoints() == []


def test_a_breakpoint_on_a_top_level_line_stops_before_it(qtbot, main_window):
    window = main_window(source=TRAIN)
    window.editor.select_lines(19)  # x = torch.randn(5, 3)
    press(qtbot, window, Qt.Key.Key_F9)
    assert window.editor.breakpoints() == [19]
    _key(qtbot, window, Qt.Key.Key_F5)
    statement = window.state["statements"][window.state["cursor"]]
    assert statement["line"] == 19 and window.state["paused"] is None
    assert "x" not in window.tensors_panel.names()
    assert "breakpoint on line 19" in window.status_text()


def test_run_to_next_backward(qtbot, main_window):
    window = main_window(source=TRAIN)
    for k in (1, 2, 3):
        _key(qtbot, window, Qt.Key.Key_F11, Qt.KeyboardModifier.ControlModifier)
        assert window.editor.paused_line == BACKWARD_LINE
        assert window.debug_strip.iteration_text() == f"iteration {k} of 3"
        assert len(window.state["backward_passes"]) == k - 1  # just before it
    press(qtbot, window, Qt.Key.Key_F11, Qt.KeyboardModifier.ControlModifier)
    wait_idle(qtbot, window, lambda: "No backward() call is left" in window.status_text())
    assert window.state["at_end"] and len(window.state["backward_passes"]) == 3


def test_timeline_shows_a_past_step_without_asking_the_kernel(qtbot, main_window, monkeypatch):
    window = _window_at_loop(qtbot, main_window)
    for _ in range(5):  # 22, 23, 12, 13, 24
        _key(qtbot, window, Qt.Key.Key_F11)
    steps = window.timeline.steps
    assert [s.label for s in steps[-5:]] == [
        "line 22 · it 1", "line 23 · it 1", "line 12 · it 1 · forward",
        "line 13 · it 1 · forward", "line 24 · it 1",
    ]  # fmt: skip
    assert window.timeline_bar.labels()[-1].endswith("line 24 · it 1")
    sent = []
    real = window.client.request
    monkeypatch.setattr(
        window.client, "request", lambda *a, **k: sent.append(getattr(a[0], "CMD", a[0])) or real(*a, **k)
    )

    # click "line 13 · it 1 · forward": h exists in forward's frame, loss does not yet
    index = len(steps) - 2
    bar = window.timeline_bar.list
    qtbot.mouseClick(bar.viewport(), Qt.MouseButton.LeftButton, pos=bar.visualItemRect(bar.item(index)).center())
    assert sent == []
    past = steps[index].state
    assert window.state is past
    assert window.editor.paused_line == 13
    assert set(window.canvas.node_ids()) == {n["id"] for n in past["graph"]["nodes"]}
    assert "Net.forward.h" in window.tensors_panel.names() and "loss" not in window.tensors_panel.names()
    assert f"step {index + 1} of {len(steps)}" in window.guide_note.text()

    # Step back is instant too
    press(qtbot, window, Qt.Key.Key_F10, Qt.KeyboardModifier.ShiftModifier)
    assert sent == [] and window.editor.paused_line == FORWARD_LINES[0]
    assert window.timeline_bar.current() == index - 1
    # the last step is the present again
    qtbot.mouseClick(bar.viewport(), Qt.MouseButton.LeftButton, pos=bar.visualItemRect(bar.item(len(steps) - 1)).center())
    assert sent == [] and window.editor.paused_line == BACKWARD_LINE

    # stepping from a past step continues from there: the kernel replays to it first
    qtbot.mouseClick(bar.viewport(), Qt.MouseButton.LeftButton, pos=bar.visualItemRect(bar.item(index - 2)).center())
    assert window.editor.paused_line == CALL_LINE
    press(qtbot, window, Qt.Key.Key_F10)  # step over net(x) ...
    wait_idle(qtbot, window, lambda: window.editor.paused_line == BACKWARD_LINE)  # ... to backward()
    # replayed: load, into, into (the kernel's account of the pause); then the Step intent
    assert sent == ["load", "debug", "debug", "step"]
    # the steps after the one continued from left the timeline; the new step follows it
    assert len(window.timeline) == index
    assert window.timeline.steps[-2].label == "line 23 · it 1"
    assert "loss" in window.tensors_panel.names()


def test_stop_keeps_the_place(qtbot, main_window):
    window = _window_at_loop(qtbot, main_window)
    _click_gutter(qtbot, window.editor, BACKWARD_LINE)
    _key(qtbot, window, Qt.Key.Key_F5)
    _key(qtbot, window, Qt.Key.Key_F5)
    assert window.debug_strip.iteration_text() == "iteration 2 of 3"
    kept = len(window.timeline)
    assert window.act_stop.isEnabled()
    _key(qtbot, window, Qt.Key.Key_F5, Qt.KeyboardModifier.ShiftModifier)  # Stop
    state = window.state
    assert state["paused"] is None and window.editor.paused_line is None
    error = state["results"][-1]["error"]
    assert error["type"] == "DebugStopped" and "line 24, iteration 2" in error["message"]
    # nothing was rewound: one optimizer step ran, iteration 2's forward is kept
    assert state["cursor"] == _loop_index(window)
    plain = _plain_until(2)
    for name, param in plain["net"].named_parameters():
        assert torch.allclose(torch.tensor(state["tensors"][f"net.{name}"]["value"]), param), name
    assert torch.allclose(torch.tensor(state["tensors"]["loss"]["value"]), plain["loss"])
    assert len(window.timeline) == kept + 1 and window.timeline.steps[kept - 1].paused
    assert window.editor.error is not None
    assert "Stopped · line" in window.guide_note.text() and "Nothing was rewound" in window.guide_note.text()
    assert not window.act_stop.isEnabled()
    # Step goes on after the stopped statement: it skips the rest of it, runs the print
    press(qtbot, window, Qt.Key.Key_F10)
    wait_idle(qtbot, window, lambda: window.state["at_end"])
    assert "Skipped line 21" in window.status_text()
    assert window.state["results"][-1]["line"] == 26 and window.state["results"][-1]["ok"]


def test_breakpoints_move_with_the_code_they_mark(qtbot):
    from gradviz.ui.editor import CodeEditor

    editor = CodeEditor()
    qtbot.addWidget(editor)
    editor.setPlainText("a = 1\nb = 2\nc = 3\nd = 4\n")
    seen = []
    editor.breakpoints_changed.connect(seen.append)
    editor.toggle_breakpoint(3)  # c = 3
    cursor = editor.textCursor()
    cursor.setPosition(0)
    cursor.insertText("# a note\n# another\n")  # two lines above it
    assert editor.breakpoints() == [5]
    assert editor.document().findBlockByNumber(4).text() == "c = 3"
    cursor.setPosition(editor.document().findBlockByNumber(1).position())
    cursor.movePosition(cursor.MoveOperation.Down, cursor.MoveMode.KeepAnchor)
    cursor.removeSelectedText()  # one line above it goes
    assert editor.breakpoints() == [4]
    assert editor.document().findBlockByNumber(3).text() == "c = 3"
    assert seen[-1] == [4]
    editor.setPlainText("x = 1\n")  # another file: no breakpoints carried over
    assert editor.breakpoints() == []


def test_keys_pressed_without_waiting_continue_the_paused_statement(qtbot, main_window):
    """F10, F11 and F5 pressed one after another without waiting, while paused inside
    the loop: the paused statement goes on each time and is never run again whole (the
    loop runs its 3 iterations, 3 backward passes, plain PyTorch's gradients)."""
    window = _window_at_loop(qtbot, main_window)
    _key(qtbot, window, Qt.Key.Key_F11)  # paused inside the loop, iteration 1
    assert window.state["paused"] is not None
    for key in (Qt.Key.Key_F10, Qt.Key.Key_F11, Qt.Key.Key_F5):
        press(qtbot, window, key)
    wait_idle(qtbot, window, lambda: window.state["paused"] is None
              and window.state["cursor"] > _loop_index(window))
    passes = window.state["backward_passes"]
    assert [p["iteration"] for p in passes] == [1, 2, 3], passes
    for name, grad in _plain_grads(3).items():
        assert window.tensors_panel.cell(name, "grad") == fmt_value(grad.tolist(), 200), name


def test_run_device_menu_follows_the_device_picker(qtbot, main_window):
    """Run > Device and the toolbar's picker show one device: the stepper once looked the
    menu's actions up on itself (a hasattr that was always False) and never checked them."""
    window = main_window(source="x = 1\n")
    cpu, cuda = window.device_actions.actions()[:2]
    assert cpu.isChecked()
    window.stepper._set_combo_device("cuda")  # what a switch (or a refusal) shows
    assert cuda.isChecked() and not cpu.isChecked()
    assert window.device_combo.currentText() == "cuda"
    window.stepper._set_combo_device("cpu")
    assert cpu.isChecked() and window.device_combo.currentText() == "cpu"
