"""The main window driven as a learner drives it: keys, toolbar clicks, the canvas, panels."""

from __future__ import annotations

import os
import signal

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt  # noqa: E402

from gradviz.app.demos import find_demo  # noqa: E402

TIMEOUT = 30_000


def click(qtbot, window, action) -> None:
    """Click the toolbar button of ``action`` (it must be enabled)."""
    button = window.toolbar.widgetForAction(action)
    assert button is not None and button.isVisible()
    assert action.isEnabled(), f"{action.text()} is disabled"
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


def press(qtbot, window, key, modifier=Qt.KeyboardModifier.NoModifier) -> None:
    """A key press in the editor, where a learner's focus usually is."""
    window.activateWindow()
    window.editor.setFocus()
    qtbot.keyClick(window.editor, key, modifier)


def wait_idle(qtbot, window, condition=None) -> None:
    qtbot.waitUntil(
        lambda: not window.busy and (condition is None or bool(condition())),
        timeout=TIMEOUT,
    )


def node_for(window, label: str, var: str | None = None) -> str:
    for node in window.state["graph"]["nodes"]:
        if node.get("label") == label and (var is None or var in (node.get("vars") or [])):
            return node["id"]
    raise AssertionError(f"no node {label} {var}")


def click_node(qtbot, window, node_id: str, double: bool = False) -> None:
    canvas = window.canvas
    item = canvas.node_item(node_id)
    canvas.centerOn(item)
    pos = canvas.mapFromScene(item.scenePos())
    if double:
        qtbot.mouseDClick(canvas.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    else:
        qtbot.mouseClick(canvas.viewport(), Qt.MouseButton.LeftButton, pos=pos)


# --- first launch, stepping, the canvas -------------------------------------------------------


def test_first_launch_opens_a_demo_and_step_shows_the_new_tensor(qtbot, main_window):
    window = main_window(first_launch=True)
    demo = find_demo("first_backward")
    assert window.editor.toPlainText() == demo.source
    assert demo.title in window.guide_title.text()
    # the first screen teaches: the lesson already ran up to its first backward()
    wait_idle(qtbot, window, lambda: window.state["cursor"] == 8)
    labels = {window.canvas.node_item(n).attrs.get("label") for n in window.canvas.node_ids()}
    assert {"PowBackward0", "AddBackward0", "MeanBackward0"} <= labels
    assert "gradient flow" in window.guide_note.text()  # the note of z.backward(), next
    assert window.act_stop.isEnabled() is False
    assert window.act_bw_step.isEnabled() is False

    click(qtbot, window, window.act_reset)
    wait_idle(qtbot, window, lambda: window.state["cursor"] == 0)
    first = window.state["statements"][0]
    assert window.editor.next_lines == (first["line"], first["end_line"])

    click(qtbot, window, window.act_step)  # import torch
    wait_idle(qtbot, window, lambda: window.state["cursor"] == 1)
    click(qtbot, window, window.act_step)  # w = torch.tensor(...)
    wait_idle(qtbot, window, lambda: window.state["cursor"] == 2)

    assert "w" in window.tensors_panel.names()
    assert window.tensors_panel.is_highlighted("w", "value")
    w_node = node_for(window, "w")
    assert "new" in window.canvas.node_item(w_node).state
    ran = window.state["statements"][1]
    assert window.editor.ran_lines == (ran["line"], ran["end_line"])
    assert "statement 2 of" in window.position_label.text()

    press(qtbot, window, Qt.Key.Key_F10)  # x = w ** 3, by keyboard this time
    wait_idle(qtbot, window, lambda: window.state["cursor"] == 3)
    pow_node = node_for(window, "PowBackward0", "x")
    assert "new" in window.canvas.node_item(pow_node).state
    assert "new" not in window.canvas.node_item(w_node).state


def test_run_to_end_then_step_the_backward_pass(qtbot, main_window):
    window = main_window(demo="two_paths")
    press(qtbot, window, Qt.Key.Key_F5)
    wait_idle(qtbot, window, lambda: window.state["at_end"])
    assert not window.act_step.isEnabled()
    assert window.act_bw_step.isEnabled()
    assert window.tensors_panel.cell("x", "grad") == "1.6"
    assert window.tensors_panel.cell("y", "grad") == "0.008"

    steps = window.state["backward_passes"][0]["steps"]
    press(qtbot, window, Qt.Key.Key_F7)
    root = window.canvas.node_item(steps[0]["node"])
    assert "executing" in root.state
    click(qtbot, window, window.act_bw_step)
    second = steps[1]
    assert "executing" in window.canvas.node_item(second["node"]).state
    assert "executing" not in root.state
    assert "executed" in root.state
    target = second["targets"][0]
    assert "carrying" in window.canvas.edge_state(second["node"], target)
    assert window.canvas.edge_label(second["node"], target)
    assert f"step 2 of {len(steps)}" in window.guide_note.text()
    assert second["label"] in window.inspector_panel.text()

    click(qtbot, window, window.act_bw_end)
    acc = node_for(window, "AccumulateGrad")
    assert "executing" in window.canvas.node_item(acc).state
    # the last step is shown: F7 now only ends the replay (see test_ui_replay.py)
    assert "F7 ends the replay" in window.guide_note.text()
    assert not window.act_bw_end.isEnabled()

    # the inspector explains x.grad with the chain rule over both paths
    x_node = node_for(window, "x")
    click_node(qtbot, window, x_node)
    text = window.inspector_panel.text()
    assert "1 × 1 × 0.008 × 75 = 0.6" in text
    assert "1 × 1 × 0.1 × 10 = 1" in text
    assert "dz/dx = 0.6 + 1 = 1.6" in text


def test_double_click_on_a_node_selects_its_statement(qtbot, main_window):
    window = main_window(demo="two_paths")
    window.run_to_end()
    wait_idle(qtbot, window, lambda: window.state["at_end"])
    add = node_for(window, "AddBackward0")
    click_node(qtbot, window, add, double=True)
    cursor = window.editor.textCursor()
    assert "torch.log(y) + torch.sqrt(w)" in cursor.selectedText()
    line = next(n for n in window.state["graph"]["nodes"] if n["id"] == add)["statement"]
    assert window.editor.cursor_line() == window.state["statements"][line]["line"]


# --- accumulation, errors, skipping -----------------------------------------------------------


def test_retain_graph_accumulates_then_fails_and_step_skips_the_failure(qtbot, main_window):
    window = main_window(demo="retain_graph")
    click(qtbot, window, window.act_run_to_end)
    wait_idle(qtbot, window, lambda: window.state["results"])
    assert window.accumulation_panel.values("x") == ["0.6", "1.2"]
    rows = window.accumulation_panel.rows()
    assert rows[0][1] == "backward #1" and rows[1][1] == "backward #2"

    error = window.editor.error
    assert error is not None
    failing = window.state["results"][-1]
    assert error[0] == failing["line"]
    assert "backward through the graph a second time" in window.editor.tooltip_at_line(error[0])
    assert "Why:" in window.editor.tooltip_at_line(error[0])
    entries = [e.plain() for e in window.output_panel.entries()]
    assert any(e.startswith(f"[line {failing['line']}] RuntimeError") for e in entries)
    assert f"Line {failing['line']} failed" in window.status_text()
    assert window.tensors_panel.cell("x", "grad") == "1.2"  # state before it is kept

    click(qtbot, window, window.act_step)  # skips the failure, runs x.grad.zero_()
    wait_idle(qtbot, window, lambda: window.state["cursor"] > failing["index"] + 1)
    assert window.editor.error is None
    assert f"Skipped line {failing['line']}" in window.status_text()
    assert window.accumulation_panel.rows()[-1][1] == "zeroed"
    assert window.accumulation_panel.values("x")[-1] == "0.0"


def test_failing_statement_is_marked_and_state_before_it_stays(qtbot, main_window, type_lines):
    window = main_window(source="")
    type_lines(
        window.editor,
        "a = torch.tensor([0., 1.], requires_grad=True)",
        "a[0] = 3",
        "b = a * 2",
    )
    press(qtbot, window, Qt.Key.Key_F5)
    wait_idle(qtbot, window, lambda: bool(window.state["results"]))
    assert window.editor.error[:2] == (2, 2)
    assert "leaf Variable that requires grad" in window.editor.tooltip_at_line(2)
    assert window.tensors_panel.names() == ["a"]
    assert window.editor.toPlainText().startswith("a = torch.tensor")

    press(qtbot, window, Qt.Key.Key_F10)  # skip a[0] = 3, run b = a * 2
    wait_idle(qtbot, window, lambda: "b" in window.tensors_panel.names())
    assert "Skipped line 2" in window.status_text()
    assert window.editor.error is None


def test_a_syntax_error_keeps_the_state_and_the_text(qtbot, main_window, type_lines):
    window = main_window(source="")
    type_lines(window.editor, "a = torch.ones(3) * 2")
    press(qtbot, window, Qt.Key.Key_F10)
    wait_idle(qtbot, window, lambda: "a" in window.tensors_panel.names())
    type_lines(window.editor, "b = a +")
    press(qtbot, window, Qt.Key.Key_F10)
    assert window.editor.error is not None and window.editor.error[0] == 2
    assert "SyntaxError" in window.editor.tooltip_at_line(2)
    assert window.tensors_panel.names() == ["a"]
    assert "b = a +" in window.editor.toPlainText()
    assert window.window().isVisible()


def test_editing_the_script_then_stepping_reruns_it(qtbot, main_window, type_lines):
    window = main_window(source="")
    type_lines(window.editor, "x = torch.tensor(2.0, requires_grad=True)", "y = x * 3")
    click(qtbot, window, window.act_run_to_end)
    wait_idle(qtbot, window, lambda: window.state["at_end"] and window.state["cursor"] == 2)
    assert not window.act_step.isEnabled()
    type_lines(window.editor, "y.backward()")
    assert window.act_step.isEnabled()  # the text changed: there is something to run
    click(qtbot, window, window.act_step)
    wait_idle(qtbot, window, lambda: window.state["cursor"] == 3)
    assert window.tensors_panel.cell("x", "grad") == "3.0"
    assert window.act_bw_step.isEnabled()


def test_step_back_and_reset(qtbot, main_window):
    window = main_window(demo="two_paths")
    press(qtbot, window, Qt.Key.Key_F10)
    wait_idle(qtbot, window, lambda: window.state["cursor"] == 1)
    press(qtbot, window, Qt.Key.Key_F10)
    wait_idle(qtbot, window, lambda: window.state["cursor"] == 2)
    assert window.tensors_panel.names() == ["x"]
    press(qtbot, window, Qt.Key.Key_F10, Qt.KeyboardModifier.ShiftModifier)
    wait_idle(qtbot, window, lambda: window.state["cursor"] == 1)
    assert window.tensors_panel.names() == []
    window.run_to_end()
    wait_idle(qtbot, window, lambda: window.state["at_end"])
    press(qtbot, window, Qt.Key.Key_R, Qt.KeyboardModifier.ControlModifier)
    wait_idle(qtbot, window, lambda: window.state["cursor"] == 0)
    assert window.canvas.node_ids() == []
    assert not window.act_bw_step.isEnabled()
    assert not window.act_zero_grad.isEnabled()


def test_run_to_cursor_runs_through_the_cursor_line(qtbot, main_window):
    window = main_window(demo="two_paths")
    statements = window.state["statements"]
    target = next(s for s in statements if s["source"].startswith("w = x ** 2"))
    window.editor.select_lines(target["line"])
    press(qtbot, window, Qt.Key.Key_F10, Qt.KeyboardModifier.ControlModifier)
    wait_idle(qtbot, window, lambda: window.state["cursor"] == target["index"] + 1)
    assert set(window.tensors_panel.names()) == {"x", "y", "w"}


def test_zero_grad_button(qtbot, main_window):
    window = main_window(demo="two_paths")
    window.run_to_end()
    wait_idle(qtbot, window, lambda: window.state["at_end"])
    click(qtbot, window, window.act_zero_grad)
    wait_idle(qtbot, window, lambda: window.tensors_panel.cell("x", "grad") == "0.0")
    assert "Zeroed .grad of x" in window.status_text()
    assert window.accumulation_panel.rows()[-1][1] == "zeroed"


# --- memory, devices --------------------------------------------------------------------------


def test_memory_panel_shows_400_million_bytes_for_out_of_place_relu(qtbot, main_window):
    window = main_window(demo="inplace_memory")
    window.run_to_end()
    wait_idle(qtbot, window, lambda: window.state["at_end"])
    rows = window.memory_panel.row_texts()
    relu = next(r for r in rows if r[1].startswith("out = torch.relu(t)"))
    assert relu[2] == "400,000,000 B (381.5 MiB)"
    inplace = next(r for r in rows if r[1].startswith("torch.relu_(t)"))
    assert inplace[2] == "0 B"
    assert rows[-1][1] == "total / now"


def test_cuda_is_shown_but_disabled_with_the_reason(qtbot, main_window):
    window = main_window()
    if window.client.info.get("cuda_available"):
        pytest.skip("this machine has CUDA")
    combo = window.device_combo
    item = combo.model().item(1)
    assert item.text() == "cuda"
    assert not item.isEnabled()
    assert window.client.info["cuda_reason"] in item.toolTip()
    window.set_device("cuda")
    assert combo.currentText() == "cpu"
    assert "cuda is unavailable" in window.status_text()


# --- the kernel: stop, crash --------------------------------------------------------------------


def test_stop_ends_a_runaway_loop_where_it_stands_and_keeps_its_work(
    qtbot, main_window, type_lines
):
    """Stop during a long loop: the kernel ends the statement at its next iteration
    (no kill, no replay), the statement is marked where it stopped, and what it did
    so far is kept (issue 9: Stop keeps the place)."""
    window = main_window(source="")
    type_lines(window.editor, "a = torch.zeros(1)", "b = torch.ones(2)", "for i in range(10**7):")
    type_lines(window.editor, "a.add_(1)")  # the editor indents the loop body
    text = window.editor.toPlainText()
    assert "\n    a.add_(1)" in text
    press(qtbot, window, Qt.Key.Key_F10)
    press(qtbot, window, Qt.Key.Key_F10)
    wait_idle(qtbot, window, lambda: window.state["cursor"] == 2)
    old_pid = window.client.pid()
    press(qtbot, window, Qt.Key.Key_F10)  # the runaway loop
    qtbot.waitUntil(window.act_stop.isEnabled, timeout=TIMEOUT)
    qtbot.wait(300)
    click(qtbot, window, window.act_stop)
    wait_idle(qtbot, window, lambda: not window.client.busy)
    assert window.client.pid() == old_pid, "a loop ends gently: the kernel is not killed"
    assert window.state["cursor"] == 2
    assert window.editor.toPlainText() == text
    result = window.state["new_results"][-1]
    assert not result["ok"] and result["error"]["type"] == "Stopped"
    assert "iteration" in result["error"]["message"]
    # the loop's work is kept: a counted the iterations that ran
    ran = window.state["tensors"]["a"]["value"][0]
    assert ran >= 1
    assert sorted(window.tensors_panel.names()) == ["a", "b"]
    assert window.editor.error is not None and window.editor.error[0] in (3, 4)
    # still responsive: the next command is answered, and the same kernel serves it
    press(qtbot, window, Qt.Key.Key_F10)
    wait_idle(qtbot, window, lambda: window.state["cursor"] == 3)
    assert window.client.pid() == old_pid
    # a stopped statement reads as stopped (like a paused one), not as a failure
    assert "Skipped line 3 (you stopped it)" in window.status_text()


def test_stop_kills_a_statement_stuck_in_native_work_and_keeps_the_state_before_it(
    qtbot, main_window, type_lines
):
    """One long native op cannot end at an iteration: after a short grace the kernel is
    killed, restarted, and the statements before it are replayed."""
    window = main_window(source="")
    type_lines(window.editor, "a = torch.ones(2)", "m = torch.randn(1500, 1500)")
    type_lines(window.editor, "for k in range(50):", "u = torch.linalg.svd(m @ m)")
    press(qtbot, window, Qt.Key.Key_F10)
    press(qtbot, window, Qt.Key.Key_F10)
    wait_idle(qtbot, window, lambda: window.state["cursor"] == 2)
    old_pid = window.client.pid()
    press(qtbot, window, Qt.Key.Key_F10)
    qtbot.waitUntil(window.act_stop.isEnabled, timeout=TIMEOUT)
    qtbot.wait(200)
    click(qtbot, window, window.act_stop)
    qtbot.waitUntil(
        lambda: "replayed 2 statements" in window.status_text()
        or (window.client.pid() == old_pid and not window.client.busy),
        timeout=TIMEOUT,
    )
    wait_idle(qtbot, window, lambda: not window.client.busy)
    assert window.state["cursor"] == 2
    assert sorted(window.tensors_panel.names())[:2] == ["a", "m"]


def test_the_window_survives_a_kernel_killed_from_outside(qtbot, main_window):
    window = main_window(demo="two_paths")
    for n in (1, 2, 3):
        press(qtbot, window, Qt.Key.Key_F10)
        wait_idle(qtbot, window, lambda n=n: window.state["cursor"] == n)
    pid = window.client.pid()
    with qtbot.waitSignal(window.client.crashed, timeout=TIMEOUT):
        os.kill(pid, signal.SIGKILL)
    qtbot.waitUntil(lambda: "restarted after a crash" in window.status_text(), timeout=TIMEOUT)
    assert window.client.pid() not in (None, pid)
    assert window.state["cursor"] == 3
    assert window.tensors_panel.names() == ["x", "y"]
    press(qtbot, window, Qt.Key.Key_F10)
    wait_idle(qtbot, window, lambda: window.state["cursor"] == 4)
    assert "w" in window.tensors_panel.names()


def test_zero_grad_is_replayed_after_a_kernel_crash(qtbot, main_window):
    source = (
        "x = torch.tensor(5.0, requires_grad=True)\n"
        "y = x ** 2\n"
        "y.backward()\n"
    )
    window = main_window(source=source)
    window.run_to_end()
    wait_idle(qtbot, window, lambda: window.state["cursor"] == 3)
    click(qtbot, window, window.act_zero_grad)
    wait_idle(qtbot, window, lambda: window.state["tensors"]["x"]["grad"] == 0.0)
    pid = window.client.pid()
    with qtbot.waitSignal(window.client.crashed, timeout=TIMEOUT):
        os.kill(pid, signal.SIGKILL)
    qtbot.waitUntil(lambda: "restarted after a crash" in window.status_text(), timeout=TIMEOUT)
    assert window.state["cursor"] == 3
    assert window.state["tensors"]["x"]["grad"] == 0.0  # the Zero-grad press was replayed


HANG_IN_C = (
    "a = torch.ones(2)\n"
    "x = [0]\n"
    "y = [0]\n"
    "for i in range(60):\n"
    "    x = [x, x]\n"
    "    y = [y, y]\n"
    "r = x == y\n"
    "b = a * 2\n"
)


def test_the_watchdog_stops_native_work_and_keeps_the_place(qtbot, main_window):
    """`x == y` over a shared-structure DAG runs 2**60 comparisons inside C, where no
    in-process check reaches: the client's watchdog kills the kernel at the time limit,
    the window replays what ran before and marks the line."""
    window = main_window(source="a = torch.ones(2)\n")
    window.client.time_limit_s = 1.0
    window.editor.setPlainText(HANG_IN_C)
    with qtbot.waitSignal(window.client.timed_out, timeout=60_000) as timed_out:
        press(qtbot, window, Qt.Key.Key_F5)  # run to end
    assert "refused: time limit 1 s" in timed_out.args[0]
    qtbot.waitUntil(lambda: "replayed" in window.status_text(), timeout=60_000)
    wait_idle(qtbot, window, lambda: window.state["cursor"] == 4)
    assert window.tensors_panel.names() == ["a"]
    assert window.editor.toPlainText() == HANG_IN_C
    assert window.editor.error is not None and window.editor.error[0] == 7
    assert any("time limit" in e.text for e in window.output_panel.entries())
    # Step skips the stopped statement and runs the next one
    press(qtbot, window, Qt.Key.Key_F10)
    wait_idle(qtbot, window, lambda: window.state["cursor"] == 6)
    assert "Skipped line 7 (it hit the time limit)" in window.status_text()
    assert set(window.tensors_panel.names()) == {"a", "b"}


def test_f7_before_any_backward_says_why_it_does_nothing(qtbot, main_window):
    from PySide6.QtCore import Qt

    window = main_window(source="import torch\nx = torch.ones(2, requires_grad=True)\n")
    assert not window.actions_by_key["bw_step"].isEnabled()
    window.editor.setFocus()
    qtbot.keyClick(window.editor, Qt.Key.Key_F7)
    assert "No backward pass to step through yet" in window.status_text()


@pytest.mark.parametrize("trusted", [True, False], ids=["trusted", "restricted"])
def test_the_step_after_a_run_to_glows_exactly_what_the_kernel_calls_new(
    qtbot, main_window, trusted
):
    """Run to a line through a loop that makes ~1,800 nodes (a big graph: tiles and
    bands), then step: the delta turns every glow of the run off in one field, and the
    canvas glows exactly the nodes and edges the kernel's state calls new, those the
    stepped statement made; so again after one more step."""
    source = (
        "x = torch.tensor(1., requires_grad=True)\ny = x\n"
        "for i in range(900):\n    y = y * 1.0001\n"
        "y = (y * 1.0001).sin()\nz = y.exp()\n"
    )
    window = main_window(source=source)
    window.client.set_mode(trusted)
    window.stepper._run_to_line(4)
    wait_idle(qtbot, window, lambda: window.state["cursor"] == 3)
    canvas = window.canvas
    glowing = {n["id"] for n in window.state["graph"]["nodes"] if n["new"]}
    assert len(glowing) > 1500 and canvas._lazy  # the run made them, drawn by tiles

    def shown() -> tuple[set, set]:
        nodes = {n for n, node in canvas._nodes.items() if "new" in node.state()}
        edges = {k for k in canvas._edges if "new" in canvas.edge_state(*k)}
        return nodes, edges

    for cursor in (4, 5):
        press(qtbot, window, Qt.Key.Key_F10)
        wait_idle(qtbot, window, lambda cursor=cursor: window.state["cursor"] == cursor)
        graph = window.state["graph"]
        new_nodes = {n["id"] for n in graph["nodes"] if n["new"]}
        new_edges = {(e["source"], e["target"]) for e in graph["edges"] if e["new"]}
        assert new_nodes and len(new_nodes) < 10
        assert {n["statement"] for n in graph["nodes"] if n["id"] in new_nodes} <= {cursor - 1}
        assert shown() == (new_nodes, new_edges)
        assert canvas._counts["new"] == len(new_nodes)


_LOOP = """\
import torch.nn as nn
torch.manual_seed(0)
net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
opt = torch.optim.SGD(net.parameters(), lr=0.1)
x = torch.randn(16, 4)
target = torch.randn(16, 1)
""" + """\
opt.zero_grad()
out = net(x)
loss = ((out - target) ** 2).mean()
loss.backward()
opt.step()
""" * 3


@pytest.mark.parametrize("size", [(1400, 900), (1024, 700)])
def test_the_graph_follows_a_training_loop_without_jumping(qtbot, main_window, size):
    """A loop stepped with F10: the graph, too big to read whole, stays at the readable
    zoom; each step's new nodes are in sight after it, and the view scrolls only when
    they would not be, and then only as far as they need. Centring on them each step
    made the picture jump up and down every iteration (the forward ops at the top, the
    loss at the bottom) and repainted all of it."""
    from gradviz.ui.canvas._common import READABLE_ZOOM
    from gradviz.ui.canvas.navigation import REVEAL_PAD

    window = main_window(source=_LOOP)
    window.resize(*size)
    window.stepper._run_to_line(6)  # through the setup: the loop is next
    wait_idle(qtbot, window, lambda: window.state["cursor"] == 6)
    canvas = window.canvas
    held: list[int] = []  # the steps with new nodes after which the view had not moved
    for cursor in range(7, 21):
        before = canvas.mapToScene(canvas.viewport().rect()).boundingRect()
        scroll = (canvas.horizontalScrollBar().value(), canvas.verticalScrollBar().value())
        viewport = canvas.viewport().size()
        window.step()
        wait_idle(qtbot, window, lambda c=cursor: window.state["cursor"] == c)
        assert canvas.is_fitted()
        if canvas.zoom_level() != pytest.approx(READABLE_ZOOM):
            assert cursor < 12, "from the second iteration on the graph is too big to read whole"
            continue  # the first forward pass: the graph still reads whole
        boxes = [
            canvas.node_item(n["id"]).sceneBoundingRect()
            for n in window.state["graph"]["nodes"] if n.get("new")
        ]
        if not boxes:
            continue
        newest = boxes[0]
        for box in boxes[1:]:
            newest = newest.united(box)
        after = canvas.mapToScene(canvas.viewport().rect()).boundingRect()
        if newest.width() <= after.width() and newest.height() <= after.height():
            assert after.contains(newest), f"step to {cursor}: the new nodes are in sight"
        else:  # more than the view holds (a small window): the middle of them is shown
            assert after.intersects(newest), f"step to {cursor}: the new nodes are in sight"
        assert canvas.newest_rect().contains(newest)
        padded = canvas.newest_rect().adjusted(-REVEAL_PAD, -REVEAL_PAD, REVEAL_PAD, REVEAL_PAD)
        now = (canvas.horizontalScrollBar().value(), canvas.verticalScrollBar().value())
        if before.contains(padded) and canvas.viewport().size() == viewport:
            # (a legend row that came shrinks the viewport: then the view may move)
            assert now == scroll, f"step to {cursor}: in sight already, yet the view moved"
        if now == scroll:
            held.append(cursor)
    if size == (1400, 900):
        # the third iteration repeats the second: its forward and loss steps find their
        # new nodes where the last ones were, and the picture holds still (the old rule
        # centred on them: up for the forward ops, down for the loss, every iteration).
        # At 1024x700 the forward ops are taller than the view: it goes to them each time
        assert held[-2:] == [18, 19], held

