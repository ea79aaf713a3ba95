"""Saved snapshots in the window (read-only) and the tools for big graphs.

The snapshots are real: built in this process with ``gradviz.record`` around a
TransformerEncoder and a 600-op chain, saved to disk, then opened the ways a
person opens them (File > Open, ``gradviz open``, ``gradviz.show``). The window
itself never imports torch.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")
torch = pytest.importorskip("torch")

from PySide6 import QtWidgets  # noqa: E402
from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

import gradviz  # noqa: E402
from gradviz.ui import dialogs  # noqa: E402
from gradviz.ui import main_window as mw  # noqa: E402

TIMEOUT = 30_000
CHAIN_OPS = 600  # more than ASYNC_LAYOUT_NODES: grouped and laid out on the worker


def _transformer_snapshot() -> dict:
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(
        d_model=16, nhead=2, dim_feedforward=32, dropout=0.0, batch_first=True
    )
    model = torch.nn.TransformerEncoder(layer, num_layers=4, enable_nested_tensor=False)
    x = torch.randn(2, 5, 16)
    with gradviz.record(model) as rec:
        loss = model(x).pow(2).mean()
        loss.backward()
    return gradviz.snapshot(loss, model=model, recorder=rec)


def _chain_snapshot() -> dict:
    x = torch.tensor([0.5, 1.0, 1.5], requires_grad=True)
    with gradviz.record() as rec:
        y = x
        for _ in range(CHAIN_OPS):
            y = y.sin()
        loss = y.sum()
        loss.backward()
    return gradviz.snapshot(loss, names={"x": x}, recorder=rec)


@pytest.fixture(scope="module")
def transformer_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("snap") / "encoder.gradviz.json"
    gradviz.save(_transformer_snapshot(), path)
    return path


@pytest.fixture(scope="module")
def chain_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("snap") / "chain.gradviz.json"
    gradviz.save(_chain_snapshot(), path)
    return path


def _nodes(path) -> list[dict]:
    return json.loads(path.read_text())["graph"]["nodes"]


def open_via_menu(qtbot, window, monkeypatch, path) -> None:
    """File > Open, with the file dialog answering ``path``."""
    monkeypatch.setattr(QtWidgets.QFileDialog, "getOpenFileName", lambda *a, **k: (str(path), "*.json"))
    window.act_open.trigger()
    wait_laid_out(qtbot, window)


def wait_laid_out(qtbot, window) -> None:
    qtbot.waitUntil(lambda: not window.layout_pending, timeout=TIMEOUT)


def press(qtbot, window, key, modifier=Qt.KeyboardModifier.NoModifier) -> None:
    window.activateWindow()
    window.canvas.setFocus()
    qtbot.keyClick(window.canvas, key, modifier)


def double_click_module(qtbot, window, module: str) -> None:
    tree = window.modules_panel.tree
    item = window.modules_panel.item(module)
    assert item is not None, f"no module {module} in the panel"
    parent = item.parent()
    while parent is not None:
        parent.setExpanded(True)
        parent = parent.parent()
    tree.scrollToItem(item)
    rect = tree.visualItemRect(item)
    # a person's double-click starts with a click (item views need the press before it)
    qtbot.mouseClick(tree.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.mouseDClick(tree.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


def node_id(path, var: str, kind: str = "tensor") -> str:
    return next(n["id"] for n in _nodes(path) if n["kind"] == kind and var in (n.get("vars") or []))


# --- read-only view ---------------------------------------------------------------------------


def test_file_open_shows_an_api_snapshot_read_only(
    qtbot, main_window, monkeypatch, transformer_file
):
    window = main_window()  # a demo, ready to step
    assert window.act_step.isEnabled()
    open_via_menu(qtbot, window, monkeypatch, transformer_file)

    nodes = _nodes(transformer_file)
    assert window.read_only
    assert len(window.canvas.node_ids()) == len(nodes) > 200
    banner = window.guide_title.text()
    assert "Read-only snapshot of encoder.gradviz.json" in banner
    assert f"{len(nodes)} nodes · 1 backward pass" in banner and "open a script to step" in banner
    for act in (window.act_step, window.act_run_to_end, window.act_step_back, window.act_reset):
        assert not act.isEnabled()
    assert not window.device_combo.isEnabled()
    assert window.editor.isReadOnly()
    assert "(read-only)" in window.windowTitle()

    # every panel has the snapshot
    assert "layers.0.linear1.weight" in window.tensors_panel.names()
    assert window.accumulation_panel.values("layers.3.norm2.bias")
    assert window.memory_panel.row_texts()[-1][1] == "snapshot (now)"
    assert "encoder.gradviz.json" in window.output_panel.text()
    assert "layers.3" in window.modules_panel.modules()

    # forward stepping is refused even when asked for directly
    window.step()
    assert not window.busy and window.read_only

    # F11 replays the recorded pass on the canvas
    assert window.act_bw_step.isEnabled()
    steps = json.loads(transformer_file.read_text())["backward_passes"][0]["steps"]
    press(qtbot, window, Qt.Key.Key_F7)
    first = window.canvas.node_item(steps[0]["node"])
    assert "executing" in first.state
    press(qtbot, window, Qt.Key.Key_F7)
    assert "executing" in window.canvas.node_item(steps[1]["node"]).state
    assert "executed" in first.state
    assert "step 2 of" in window.guide_note.text()
    assert steps[1]["label"] in window.inspector_panel.text()


def test_gradviz_open_and_run_app_open_the_read_only_view(
    qtbot, main_window, monkeypatch, transformer_file
):
    window = main_window(file=str(transformer_file))  # what `gradviz open FILE` does
    assert window.read_only and not window.act_step.isEnabled()
    assert len(window.canvas.node_ids()) == len(_nodes(transformer_file))

    # gradviz.show() -> run_app(snapshot=...): the same view, titled after show()
    from gradviz.ui import app as app_module

    monkeypatch.setattr(QApplication, "exec", lambda self: 0)
    snap = gradviz.load(transformer_file)
    assert app_module.run_app(snapshot=snap) == 0
    shown = [w for w in QApplication.topLevelWidgets() if isinstance(w, mw.MainWindow)]
    shown = [w for w in shown if w is not window]
    assert len(shown) == 1
    other = shown[0]
    try:
        assert other.read_only
        assert "Read-only snapshot of gradviz.show()" in other.guide_title.text()
        assert len(other.canvas.node_ids()) == len(snap["graph"]["nodes"])
        # a read-only snapshot needs no torch process
        qtbot.wait(200)
        assert other.client.pid() is None and not other.client.started
    finally:
        other.close()


def test_gradviz_show_hands_the_snapshot_to_run_app(monkeypatch):
    from gradviz.ui import app as app_module

    got = {}
    monkeypatch.setattr(app_module, "run_app", lambda **kw: got.update(kw) or 0)
    monkeypatch.setattr(app_module, "host_application", lambda: None)  # no Qt app runs yet
    x = torch.ones(3, requires_grad=True)
    assert gradviz.show((x * 2).sum()) == 0
    snap = got["snapshot"]
    assert snap["format"] == "gradviz-snapshot" and snap["statements"] == []


def test_a_file_that_is_not_a_snapshot_is_refused_and_nothing_is_lost(
    qtbot, main_window, monkeypatch, tmp_path, transformer_file
):
    errors: list[str] = []
    monkeypatch.setattr(dialogs, "show_error", lambda parent, title, text: errors.append(text))
    window = main_window()
    text, state = window.editor.toPlainText(), window.state

    other = tmp_path / "settings.json"
    other.write_text(json.dumps({"hello": "world"}))
    open_via_menu(qtbot, window, monkeypatch, other)
    assert errors and "not a gradviz snapshot" in errors[-1]
    assert window.editor.toPlainText() == text and window.state is state
    assert not window.read_only and window.act_step.isEnabled()

    open_via_menu(qtbot, window, monkeypatch, transformer_file)
    shown = list(window.canvas.node_ids())
    newer = tmp_path / "future.gradviz.json"
    newer.write_text(json.dumps({"format": "gradviz-snapshot", "version": 99, "graph": {}}))
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    for bad, why in ((newer, "newer gradviz"), (broken, "not JSON")):
        open_via_menu(qtbot, window, monkeypatch, bad)
        assert why in errors[-1]
        assert window.read_only and window.canvas.node_ids() == shown
        assert "encoder.gradviz.json" in window.guide_title.text()

    # a demo takes the window back to stepping
    window.demo_actions["first_backward"].trigger()
    qtbot.waitUntil(lambda: window.state is not None and not window.busy, timeout=TIMEOUT)
    assert not window.read_only and not window.editor.isReadOnly()
    assert window.act_step.isEnabled() and window.device_combo.isEnabled()


# --- modules, search -------------------------------------------------------------------------


def test_collapse_a_module_search_and_expand(qtbot, main_window, monkeypatch, transformer_file):
    window = main_window(file=str(transformer_file))
    canvas = window.canvas
    total = len(canvas.node_ids())
    nodes = _nodes(transformer_file)
    members = [n["id"] for n in nodes if n.get("module", "").startswith("layers.1")]

    double_click_module(qtbot, window, "layers.1")
    wait_laid_out(qtbot, window)
    group = canvas.node_item("g:layers.1")
    assert group is not None and "group" in group.state
    assert all(canvas.node_item(m) is None for m in members)
    assert len(canvas.node_ids()) == total - len(members) + 1
    assert canvas.search("layers.1") == ["g:layers.1"]
    assert window.modules_panel.collapsed() == {"layers.1"}
    # the inspector says what the box holds
    assert "collapsed module layers.1" in window.inspector_panel.text()
    assert f"{len(members)}" in window.inspector_panel.text()

    # a hit hidden in the group selects the group
    weight = node_id(transformer_file, "layers.1.linear1.weight")
    window.focus_search()
    qtbot.keyClicks(window.search_box, "layers.1.linear1.weight")
    qtbot.keyClick(window.search_box, Qt.Key.Key_Return)
    assert canvas.selected_node() == "g:layers.1"
    assert "selected" in group.state
    assert "inside the collapsed layers.1" in window.status_text()

    # double-click the group: its nodes come back; Enter now lands on the weight itself
    window.graph_view.on_node_activated("g:layers.1")  # what a double-click on the box does
    wait_laid_out(qtbot, window)
    assert canvas.node_item("g:layers.1") is None
    assert len(canvas.node_ids()) == total
    assert window.modules_panel.collapsed() == set()
    window.search_box.setFocus()
    qtbot.keyClick(window.search_box, Qt.Key.Key_Return)
    assert window.search_label.text() == "1 of 2"
    assert canvas.selected_node() == weight
    assert "selected" in canvas.node_item(weight).state
    inspector = window.inspector_panel.text()
    assert "layers.1.linear1.weight" in inspector and "32×16" in inspector
    qtbot.keyClick(window.search_box, Qt.Key.Key_Return)
    assert window.search_label.text() == "2 of 2"
    assert canvas.node_item(canvas.selected_node()).kind == "accumulate_grad"

    # right-click menu: collapse the module a node belongs to, then expand it again
    menu = window.node_menu(weight)
    texts = [a.text() for a in menu.actions()]
    assert texts == [
        "Collapse module layers.1.linear1",
        "Collapse module layers.1",
        "Collapse module layers",
    ]
    menu.actions()[0].trigger()
    wait_laid_out(qtbot, window)
    assert canvas.node_item(weight) is None
    assert "group" in canvas.node_item("g:layers.1.linear1").state
    menu = window.node_menu("g:layers.1.linear1")
    assert [a.text() for a in menu.actions()] == ["Expand layers.1.linear1"]
    menu.actions()[0].trigger()
    wait_laid_out(qtbot, window)
    assert canvas.node_item(weight) is not None

    # collapse all: one box per block; expand all: everything back
    window.modules_panel.collapse_all_button.click()
    wait_laid_out(qtbot, window)
    assert {n for n in canvas.node_ids() if n.startswith("g:")} == {
        f"g:layers.{i}" for i in range(4)
    }
    window.modules_panel.expand_all_button.click()
    wait_laid_out(qtbot, window)
    assert len(canvas.node_ids()) == total


def test_ctrl_f_focuses_the_search_box(qtbot, main_window, transformer_file):
    window = main_window(file=str(transformer_file))
    press(qtbot, window, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(window.search_box.hasFocus, timeout=TIMEOUT)
    qtbot.keyClicks(window.search_box, "NativeLayerNormBackward0")
    assert window.search_label.text() == "8 found"  # two norms per layer, four layers
    qtbot.keyClick(window.search_box, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    assert window.search_label.text() == "8 of 8"
    assert window.canvas.node_item(window.canvas.selected_node()).attrs["label"] == (
        "NativeLayerNormBackward0"
    )
    window.search_box.setText("no such node")
    assert window.search_label.text() == "no match"

    # a narrow window drops the toolbar's button texts, not the search box
    window.resize(1000, 800)
    qtbot.waitUntil(
        lambda: window.toolbar.toolButtonStyle() == Qt.ToolButtonStyle.ToolButtonIconOnly,
        timeout=TIMEOUT,
    )
    qtbot.waitUntil(window.search_box.isVisible, timeout=TIMEOUT)
    window.resize(1400, 900)
    qtbot.waitUntil(
        lambda: window.toolbar.toolButtonStyle() == Qt.ToolButtonStyle.ToolButtonTextBesideIcon,
        timeout=TIMEOUT,
    )
    qtbot.waitUntil(window.search_box.isVisible, timeout=TIMEOUT)


# --- big graphs: chains, the layout worker, backward on groups ----------------------------


def test_long_chain_collapses_and_lays_out_off_the_gui_thread(
    qtbot, main_window, monkeypatch, chain_file
):
    window = main_window()
    monkeypatch.setattr(
        QtWidgets.QFileDialog, "getOpenFileName", lambda *a, **k: (str(chain_file), "*.json")
    )
    window.act_open.trigger()
    total = len(_nodes(chain_file))
    assert total > window.graph_view.async_layout_nodes
    assert window.layout_pending
    assert window.layout_label.text() == f"Laying out {total:,} nodes…"
    wait_laid_out(qtbot, window)
    assert len(window.canvas.node_ids()) == total
    assert not window.layout_label.isVisible()

    window.act_chains.trigger()  # View > Collapse linear chains
    assert window.modules_panel.chains_box.isChecked()
    wait_laid_out(qtbot, window)
    shown = window.canvas.node_ids()
    chains = [n for n in shown if n.startswith("c:")]
    assert len(chains) == 1 and len(shown) < 10
    assert "group" in window.canvas.node_item(chains[0]).state

    # backward steps inside the chain light up the chain's box
    press(qtbot, window, Qt.Key.Key_F7)
    assert "executing" in window.canvas.node_item(chains[0]).state
    press(qtbot, window, Qt.Key.Key_F7)
    assert "executing" in window.canvas.node_item(chains[0]).state

    # a request made stale by a newer one is dropped: the newest picture wins
    stale = window.graph_view.layout_runner.stale
    window.act_chains.trigger()  # off
    window.act_chains.trigger()  # on again, before the first finished
    window.act_chains.trigger()  # off
    wait_laid_out(qtbot, window)
    qtbot.waitUntil(lambda: window.graph_view.layout_runner.stale == stale + 2, timeout=TIMEOUT)
    assert len(window.canvas.node_ids()) == total
    # ... and the step shown is drawn on the node itself again
    step = json.loads(chain_file.read_text())["backward_passes"][0]["steps"][1]
    assert "executing" in window.canvas.node_item(step["node"]).state


def test_collapse_chains_in_a_script_session(qtbot, main_window):
    lines = ["x = torch.tensor(0.5, requires_grad=True)", "y = x"]
    lines += ["y = y.sin()"] * 6
    window = main_window(source="\n".join(lines) + "\n")
    window.run_to_end()
    qtbot.waitUntil(lambda: not window.busy and window.state["at_end"], timeout=TIMEOUT)
    before = len(window.canvas.node_ids())
    window.modules_panel.chains_box.click()
    assert window.act_chains.isChecked()
    shown = window.canvas.node_ids()
    assert len(shown) < before and any(n.startswith("c:") for n in shown)
    window.act_chains.trigger()
    assert len(window.canvas.node_ids()) == before


def test_snapshot_files_are_checked_like_gradviz_load(tmp_path, transformer_file):
    from gradviz.app.snapshot import SnapshotError, read_snapshot

    assert read_snapshot(transformer_file) == gradviz.load(transformer_file)
    cases = {
        "plain.json": {"a": 1},
        "newer.json": {"format": "gradviz-snapshot", "version": 2, "graph": {}, "tensors": {}},
        "partial.json": {"format": "gradviz-snapshot", "version": 1, "graph": {}},
    }
    for name, data in cases.items():
        path = tmp_path / name
        path.write_text(json.dumps(data))
        with pytest.raises(ValueError) as from_api:
            gradviz.load(path)
        with pytest.raises(SnapshotError) as from_ui:
            read_snapshot(path)
        assert str(from_ui.value) == str(from_api.value).replace(f"{path}", path.name)


def test_grouping_helpers_map_hidden_nodes_to_their_boxes(transformer_file):
    from gradviz.graph.graphdata import graph_from_json
    from gradviz.ui.display import build_display, map_passes, top_blocks

    snap = gradviz.load(transformer_file)
    raw = graph_from_json(snap["graph"])
    assert top_blocks(["layers", "layers.0", "layers.0.linear1", "layers.1"]) == [
        "layers.0",
        "layers.1",
    ]
    display = build_display(raw, snap["graph"], {"layers.3"})
    assert "g:layers.3" in display.graph and all(n in display.positions for n in display.graph)
    hidden = next(n for n, d in raw.nodes(data=True) if d.get("module") == "layers.3.linear1")
    assert display.shown(hidden) == "g:layers.3"
    mapped = map_passes(snap["backward_passes"], display.owner)
    nodes = {step["node"] for step in mapped[0]["steps"]}
    assert "g:layers.3" in nodes and hidden not in nodes
    # the captured graph is left as it was (a worker may be reading it)
    assert len(raw) == len(snap["graph"]["nodes"]) and "g:layers.3" not in raw


def test_the_window_never_imports_torch():
    code = "import gradviz.ui.main_window, gradviz.ui.app, sys; print('torch' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
        check=True,
        timeout=120,
    )
    assert out.stdout.strip() == "False"


def test_modules_of_a_script_session_collapse(qtbot, main_window):
    """A model called by the script: its nodes are tagged by module and collapse in the panel."""
    source = (
        "torch.manual_seed(0)\n"
        "model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 1))\n"
        "x = torch.randn(2, 3)\n"
        "loss = model(x).sum()\n"
    )
    window = main_window(source=source)
    window.run_to_end()
    qtbot.waitUntil(lambda: not window.busy and window.state["at_end"], timeout=TIMEOUT)
    wait_laid_out(qtbot, window)
    assert {"model", "model.0", "model.2"} <= set(window.modules_panel.modules())
    before = set(window.canvas.node_ids())
    double_click_module(qtbot, window, "model.0")
    wait_laid_out(qtbot, window)
    qtbot.waitUntil(lambda: "g:model.0" in window.canvas.node_ids(), timeout=TIMEOUT)
    assert "group" in window.canvas.node_item("g:model.0").state
    assert len(window.canvas.node_ids()) < len(before)


def test_a_script_after_a_snapshot_gets_the_editor_width_back(
    qtbot, main_window, monkeypatch, transformer_file
):
    """A snapshot narrows the editor (nothing to edit there); the next script opened had
    kept that narrow editor for good."""
    from gradviz.app.demos import find_demo

    window = main_window()
    qtbot.wait(100)
    before = window.splitter.sizes()
    share = before[0] / sum(before)
    open_via_menu(qtbot, window, monkeypatch, transformer_file)
    assert window.read_only
    narrowed = window.splitter.sizes()
    assert narrowed[0] / sum(narrowed) < share - 0.05
    window.files.load_demo(find_demo("two_paths"), ask=False)
    qtbot.waitUntil(lambda: not window.read_only, timeout=30_000)
    after = window.splitter.sizes()
    assert abs(after[0] / sum(after) - share) < 0.02, (before, narrowed, after)
