"""GraphCanvas: the real snapshot drawn, stepped, clicked, zoomed and exported."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from PySide6.QtCore import QEvent, QPoint, QPointF, Qt  # noqa: E402
from PySide6.QtGui import QHelpEvent, QImage, QPainter, QWheelEvent  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from gradviz.core.capture import graph_from_json  # noqa: E402
from gradviz.graph.layout import layout, node_size  # noqa: E402
from gradviz.ui.canvas import (  # noqa: E402
    BULK_EDGE_THRESHOLD,
    FIT_MAX_ZOOM,
    LAZY_NODE_THRESHOLD,
    MAX_ZOOM,
    MIN_ZOOM,
    READABLE_ZOOM,
    GraphCanvas,
    NodeItem,
    format_value,
)
from gradviz.ui.canvas import view as canvas_module  # noqa: E402

EXAMPLE = Path(__file__).resolve().parents[1] / "docs" / "snapshot-example.json"

# The pass the kernel records for `z.backward()` on this very graph
# (resources/demos/04_two_paths.py, statement 8): same node ids as the example.
TWO_PATHS_PASS = {
    "root": ["fn10"],
    "retain_graph": False,
    "steps": [
        {"node": "fn10", "label": "AddBackward0", "grad_outputs": [1.0],
         "grad_inputs": [1.0, 1.0], "vars": ["z"], "targets": ["fn11", "fn12"]},
        {"node": "fn12", "label": "SqrtBackward0", "grad_outputs": [1.0],
         "grad_inputs": [0.10000000149011612], "vars": [], "targets": ["fn7"]},
        {"node": "fn11", "label": "LogBackward0", "grad_outputs": [1.0],
         "grad_inputs": [0.00800000037997961], "vars": [], "targets": ["fn3"]},
        {"node": "fn7", "label": "PowBackward0", "grad_outputs": [0.10000000149011612],
         "grad_inputs": [1.0], "vars": ["w"], "targets": ["acc5"]},
        {"node": "fn3", "label": "PowBackward0", "grad_outputs": [0.00800000037997961],
         "grad_inputs": [0.6000000238418579], "vars": ["y"], "targets": ["acc5"]},
        {"node": "acc5", "label": "AccumulateGrad", "grad_outputs": [1.600000023841858],
         "grad_inputs": [], "vars": ["x"], "targets": []},
    ],
    "statement": 8,
    "kind": "backward",
    "error": None,
}


@pytest.fixture
def snapshot() -> dict:
    return json.loads(EXAMPLE.read_text())


def _shown_canvas(qtbot, width: int = 900, height: int = 650) -> GraphCanvas:
    """An empty canvas of this size, shown and exposed."""
    view = GraphCanvas()
    qtbot.addWidget(view)
    view.resize(width, height)
    view.show()
    qtbot.waitExposed(view)
    return view


@pytest.fixture
def canvas(qtbot) -> GraphCanvas:
    return _shown_canvas(qtbot)


def _node_items(view: GraphCanvas) -> list[NodeItem]:
    return [i for i in view.scene().items() if isinstance(i, NodeItem)]


def _chain(n: int) -> dict:
    """A chain of n grad_fns ending in one leaf, as the kernel would send it."""
    nodes = [
        {"id": "t0", "kind": "tensor", "label": "x", "vars": ["x"], "shape": [3],
         "is_leaf": True, "requires_grad": True, "storage": "S1", "statement": 0, "new": False},
        {"id": "acc0", "kind": "accumulate_grad", "label": "AccumulateGrad", "vars": ["x"],
         "statement": 0, "new": False},
    ]
    edges = [{"source": "acc0", "target": "t0", "kind": "leaf", "new": False}]
    prev = "acc0"
    for i in range(n - 2):
        node_id = f"fn{i}"
        nodes.append({"id": node_id, "kind": "grad_fn", "label": "MulBackward0", "vars": [],
                      "saved": {}, "freed": False, "statement": i + 1, "new": False})
        edges.append({"source": node_id, "target": prev, "kind": "grad", "input": 0,
                      "new": False})
        prev = node_id
    return {"nodes": nodes, "edges": edges}


def _positions(graph: dict) -> dict[str, list[float]]:
    return {k: [x, y] for k, (x, y) in layout(graph_from_json(graph)).items()}


# --------------------------------------------------------------------------- drawing


def test_example_snapshot_nodes_and_kinds(canvas, snapshot):
    assert canvas.empty_hint.isVisible()
    canvas.set_graph(snapshot["graph"], snapshot["positions"])
    nodes = {n["id"]: n for n in snapshot["graph"]["nodes"]}
    assert sorted(canvas.node_ids()) == sorted(nodes)
    assert len(_node_items(canvas)) == 14
    assert not canvas.empty_hint.isVisible()
    for node_id, attrs in nodes.items():
        item = canvas.node_item(node_id)
        assert item is not None and item.kind == attrs["kind"]
        # Boxes are exactly the layout's boxes, centred on the layout's positions.
        assert (item.width, item.height) == node_size(attrs)
        x, y = snapshot["positions"][node_id]
        assert (item.pos().x(), item.pos().y()) == pytest.approx((x, y))
    kinds = [canvas.node_item(n).kind for n in canvas.node_ids()]
    assert kinds.count("grad_fn") == 5
    assert kinds.count("tensor") == 4
    assert kinds.count("saved") == 4
    assert kinds.count("accumulate_grad") == 1
    assert canvas.node_item("nope") is None
    assert not canvas.bulk_edges


def test_storage_groups_get_badges_and_links(canvas, snapshot):
    canvas.set_graph(snapshot["graph"], snapshot["positions"])
    badges = {n: canvas.node_item(n).storage_badge for n in canvas.node_ids()}
    # x (t1) and the two saved "self" copies of x share S1; y and LogBackward's self share S2.
    assert badges["t1"] == badges["s4"] == badges["s8"] == "S1"
    assert badges["t2"] == badges["s14"] == "S2"
    assert badges["t6"] is None and badges["fn3"] is None and badges["s13"] is None
    links = {(g, frozenset((a, b))) for g, a, b in canvas.storage_links()}
    assert ("S1", frozenset(("t1", "s4"))) in links
    assert ("S2", frozenset(("t2", "s14"))) in links


def test_detach_shares_storage_link(canvas):
    graph = {"nodes": [
        {"id": "t1", "kind": "tensor", "label": "A", "vars": ["A"], "shape": [2],
         "is_leaf": True, "requires_grad": True, "storage": "S7", "new": False},
        {"id": "t2", "kind": "tensor", "label": "B", "vars": ["B"], "shape": [2],
         "is_leaf": True, "requires_grad": False, "storage": "S7", "new": True},
        {"id": "t3", "kind": "tensor", "label": "C", "vars": ["C"], "shape": [2],
         "is_leaf": True, "requires_grad": False, "storage": "S8", "new": False},
    ], "edges": []}
    canvas.set_graph(graph, _positions(graph))
    assert canvas.storage_links() == [("S7", "t1", "t2")]
    assert canvas.node_item("t1").storage_badge == "S7"
    assert canvas.node_item("t3").storage_badge is None


@pytest.mark.parametrize("zoom", [0.5, 1.0, 2.0])
def test_storage_links_ink_at_every_zoom(canvas, zoom):
    """The dotted links are drawn by three pens as the zoom grows (one device pixel,
    flat dashes, round dots): each of them inks the way between the two boxes."""
    from gradviz.ui.canvas.storage import _StorageLinks

    graph = {"nodes": [
        {"id": "t1", "kind": "tensor", "label": "A", "vars": ["A"], "shape": [2],
         "is_leaf": True, "requires_grad": True, "storage": "S7", "new": False},
        {"id": "t2", "kind": "tensor", "label": "B", "vars": ["B"], "shape": [2],
         "is_leaf": True, "requires_grad": False, "storage": "S7", "new": False},
    ], "edges": []}
    canvas.set_graph(graph, {"t1": [0.0, 0.0], "t2": [300.0, 160.0]})
    canvas.set_zoom(zoom)
    canvas.centerOn(150.0, 80.0)
    links = [i for i in canvas.scene().items() if isinstance(i, _StorageLinks)]
    assert len(links) == 1

    def picture() -> QImage:
        image = QImage(canvas.viewport().size(), QImage.Format.Format_ARGB32)
        image.fill(0xFFFFFFFF)
        painter = QPainter(image)
        canvas.render(painter)
        painter.end()
        return image

    with_links = picture()
    links[0].setVisible(False)
    without = picture()
    links[0].setVisible(True)
    inked = sum(
        with_links.pixel(x, y) != without.pixel(x, y)
        for x in range(0, with_links.width(), 2) for y in range(0, with_links.height(), 2)
    )
    assert inked > 20 * zoom, f"the link drew {inked} sampled pixels at zoom {zoom}"


def test_new_nodes_glow_until_next_graph(canvas, snapshot):
    graph = copy.deepcopy(snapshot["graph"])
    added = {n["id"] for n in graph["nodes"] if n["statement"] == 4}
    for node in graph["nodes"]:
        node["new"] = node["id"] in added
    for edge in graph["edges"]:
        edge["new"] = edge["source"] == "fn10"
    canvas.set_graph(graph, snapshot["positions"])
    for node_id in canvas.node_ids():
        assert ("new" in canvas.node_item(node_id).state) == (node_id in added)
    assert canvas.edge_state("fn10", "fn11") == {"new"}
    assert canvas.edge_state("fn3", "acc5") == set()

    canvas.set_graph(snapshot["graph"], snapshot["positions"])
    assert not any("new" in canvas.node_item(n).state for n in canvas.node_ids())
    assert canvas.edge_state("fn10", "fn11") == set()


def test_incremental_update_keeps_items(canvas, snapshot):
    full = snapshot["graph"]
    canvas.set_graph(full, snapshot["positions"])
    before = {n: canvas.node_item(n) for n in canvas.node_ids()}

    # Step back to statement 3: the nodes of statement 4 disappear.
    gone = {n["id"] for n in full["nodes"] if n["statement"] == 4}
    smaller = {
        "nodes": [n for n in full["nodes"] if n["id"] not in gone],
        "edges": [e for e in full["edges"] if e["source"] not in gone
                  and e["target"] not in gone],
    }
    moved = dict(snapshot["positions"])
    moved["t1"] = [moved["t1"][0] + 50, moved["t1"][1]]
    canvas.set_graph(smaller, moved)
    assert set(canvas.node_ids()) == set(before) - gone
    for node_id in canvas.node_ids():
        assert canvas.node_item(node_id) is before[node_id]
    assert canvas.node_item("t1").pos().x() == pytest.approx(moved["t1"][0])
    assert len(_node_items(canvas)) == len(before) - len(gone)
    assert canvas.edge_state("fn10", "fn11") == set()

    # Forward again: the old items stay, the returning ids get fresh items.
    canvas.set_graph(full, snapshot["positions"])
    for node_id in before:
        item = canvas.node_item(node_id)
        assert (item is before[node_id]) == (node_id not in gone)
    assert len(_node_items(canvas)) == len(before)


def test_freed_grad_fn_state(canvas, snapshot):
    graph = copy.deepcopy(snapshot["graph"])
    for node in graph["nodes"]:
        if node["id"] == "fn3":
            node["freed"] = True
    canvas.set_graph(graph, snapshot["positions"])
    assert "freed" in canvas.node_item("fn3").state
    assert "freed" not in canvas.node_item("fn7").state


def test_empty_graph_shows_hint(canvas, snapshot):
    assert canvas.empty_hint.isVisible()
    assert "F10" in canvas.empty_hint.text()
    canvas.set_graph(snapshot["graph"], snapshot["positions"])
    assert not canvas.empty_hint.isVisible()
    canvas.clear()
    assert canvas.node_ids() == []
    assert canvas.empty_hint.isVisible()


def test_search(canvas, snapshot):
    canvas.set_graph(snapshot["graph"], snapshot["positions"])
    assert sorted(canvas.search("powbackward")) == ["fn3", "fn7"]
    assert set(canvas.search("Y")) >= {"t2", "fn3", "s14"}
    assert "s13" in canvas.search("result")
    assert "t1" in canvas.search("scalar")
    assert canvas.search("") == []
    assert canvas.search("no such thing") == []


# --------------------------------------------------------------------------- backward


def test_backward_first_step_carries_gradients(canvas, snapshot):
    canvas.set_graph(snapshot["graph"], snapshot["positions"])
    canvas.show_backward_step(0, 0, [TWO_PATHS_PASS])
    assert "executing" in canvas.node_item("fn10").state  # the root's node runs first
    assert not any("executed" in canvas.node_item(n).state for n in canvas.node_ids())
    for target in ("fn11", "fn12"):
        assert canvas.edge_state("fn10", target) == {"carrying"}
        assert canvas.edge_label("fn10", target) == "1.0"
    assert canvas.edge_state("fn11", "fn3") == set()
    assert canvas.edge_label("fn11", "fn3") is None


def test_backward_later_step(canvas, snapshot):
    canvas.set_graph(snapshot["graph"], snapshot["positions"])
    canvas.show_backward_step(0, 2, [TWO_PATHS_PASS])
    assert "executing" in canvas.node_item("fn11").state
    assert "executed" in canvas.node_item("fn10").state
    assert "executed" in canvas.node_item("fn12").state
    assert "executed" not in canvas.node_item("fn11").state
    assert canvas.node_item("fn3").state == set()
    assert canvas.edge_state("fn11", "fn3") == {"carrying"}
    assert canvas.edge_label("fn11", "fn3") == "0.008"
    assert canvas.edge_state("fn10", "fn11") == set()

    canvas.show_backward_step(0, 4, [TWO_PATHS_PASS])
    assert canvas.edge_label("fn3", "acc5") == "0.6"
    canvas.show_backward_step(0, 5, [TWO_PATHS_PASS])  # AccumulateGrad passes nothing on
    assert "executing" in canvas.node_item("acc5").state
    assert canvas.edge_label("fn3", "acc5") is None


def test_backward_highlight_survives_set_graph_and_clears(canvas, snapshot):
    canvas.set_graph(snapshot["graph"], snapshot["positions"])
    canvas.show_backward_step(0, 2, [TWO_PATHS_PASS])
    canvas.set_graph(snapshot["graph"], snapshot["positions"])
    assert "executing" in canvas.node_item("fn11").state
    assert canvas.edge_label("fn11", "fn3") == "0.008"

    canvas.clear_backward()
    for node_id in canvas.node_ids():
        assert not canvas.node_item(node_id).state & {"executing", "executed"}
    assert canvas.edge_state("fn11", "fn3") == set()

    canvas.show_backward_step(0, 99, [TWO_PATHS_PASS])  # out of range: nothing lit
    assert not any(canvas.node_item(n).state for n in canvas.node_ids())
    canvas.show_backward_step(None, None, [])
    assert not any(canvas.node_item(n).state for n in canvas.node_ids())


def test_format_value():
    assert format_value(0.00800000037997961) == "0.008"
    assert format_value(1.6094379124341003) == "1.6094"
    assert format_value(1.0) == "1.0"
    assert format_value(125.0) == "125.0"
    assert format_value(3) == "3"
    assert format_value(None) == "None"
    assert format_value([0.5, 0.25]) == "[0.5, 0.25]"
    text = format_value(list(range(100)))
    assert text.startswith("[0, 1, 2") and text.endswith("\u2026]") and len(text) <= 26
    assert len(format_value("tensor([[1., 2.],\n        [3., 4.]]) " * 10)) <= 26
    assert "\n" not in format_value("tensor([[1., 2.],\n [3., 4.]])")


# --------------------------------------------------------------------------- interaction


def test_click_selects_node(canvas, qtbot, snapshot):
    canvas.set_graph(snapshot["graph"], snapshot["positions"])
    item = canvas.node_item("fn3")
    pos = canvas.mapFromScene(item.scenePos())
    with qtbot.waitSignal(canvas.node_selected, timeout=1000) as blocker:
        qtbot.mouseClick(canvas.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    assert blocker.args == ["fn3"]
    assert "selected" in item.state
    assert canvas.selected_node() == "fn3"

    other = canvas.node_item("t1")
    with qtbot.waitSignal(canvas.node_activated, timeout=1000) as blocker:
        qtbot.mouseDClick(canvas.viewport(), Qt.MouseButton.LeftButton,
                          pos=canvas.mapFromScene(other.scenePos()))
    assert blocker.args == ["t1"]
    assert "selected" in other.state and "selected" not in item.state


def test_click_on_background_selects_nothing(canvas, qtbot, snapshot):
    canvas.set_graph(snapshot["graph"], snapshot["positions"])
    with qtbot.assertNotEmitted(canvas.node_selected):
        qtbot.mouseClick(canvas.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(3, 3))
    assert canvas.selected_node() is None


def test_select_node_programmatically(canvas, qtbot, snapshot):
    canvas.set_graph(snapshot["graph"], snapshot["positions"])
    with qtbot.assertNotEmitted(canvas.node_selected):
        canvas.select_node("t1")
    assert "selected" in canvas.node_item("t1").state
    centre = canvas.mapToScene(canvas.viewport().rect().center())
    assert centre.x() == pytest.approx(canvas.node_item("t1").pos().x(), abs=2)
    # The selection's storage group is linked from it.
    assert {(a, b) for _, a, b in canvas.storage_links() if a == "t1"} >= {
        ("t1", "s4"), ("t1", "s8")}
    canvas.select_node(None)
    assert canvas.selected_node() is None
    assert "selected" not in canvas.node_item("t1").state


def test_zoom_stays_in_bounds(canvas, qtbot, snapshot):
    canvas.set_graph(snapshot["graph"], snapshot["positions"])
    canvas.fit_to_view()
    assert MIN_ZOOM <= canvas.zoom_level() <= MAX_ZOOM
    for _ in range(40):
        canvas.zoom_in()
    assert canvas.zoom_level() == pytest.approx(MAX_ZOOM)
    for _ in range(80):
        canvas.zoom_out()
    assert canvas.zoom_level() == pytest.approx(MIN_ZOOM)
    canvas.reset_zoom()
    assert canvas.zoom_level() == pytest.approx(1.0)

    with qtbot.waitSignal(canvas.view_changed, timeout=1000):
        qtbot.keyClick(canvas, Qt.Key.Key_Plus)
    assert canvas.zoom_level() == pytest.approx(1.25)
    qtbot.keyClick(canvas, Qt.Key.Key_Minus)
    qtbot.keyClick(canvas, Qt.Key.Key_Minus, Qt.KeyboardModifier.ControlModifier)
    assert canvas.zoom_level() == pytest.approx(0.8)
    qtbot.keyClick(canvas, Qt.Key.Key_Equal, Qt.KeyboardModifier.ControlModifier)
    assert canvas.zoom_level() == pytest.approx(1.0)
    qtbot.keyClick(canvas, Qt.Key.Key_F)
    fitted = canvas.zoom_level()
    assert MIN_ZOOM <= fitted <= MAX_ZOOM
    canvas.zoom_in()
    qtbot.keyClick(canvas, Qt.Key.Key_Home)
    assert canvas.zoom_level() == pytest.approx(fitted)


def test_wheel_zooms_under_the_mouse(canvas, snapshot):
    canvas.set_graph(snapshot["graph"], snapshot["positions"])
    canvas.reset_zoom()
    at = QPointF(canvas.mapFromScene(canvas.node_item("fn3").scenePos()))
    scene_before = canvas.mapToScene(at.toPoint())
    event = QWheelEvent(at, QPointF(canvas.viewport().mapToGlobal(at.toPoint())), QPoint(0, 0),
                        QPoint(0, 120), Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier,
                        Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(canvas.viewport(), event)
    assert canvas.zoom_level() > 1.1
    scene_after = canvas.mapToScene(at.toPoint())
    assert scene_after.x() == pytest.approx(scene_before.x(), abs=2)
    assert scene_after.y() == pytest.approx(scene_before.y(), abs=2)


# --------------------------------------------------------------------------- export


def test_export_png_and_svg(canvas, snapshot, tmp_path):
    canvas.set_graph(snapshot["graph"], snapshot["positions"])
    canvas.show_backward_step(0, 2, [TWO_PATHS_PASS])
    png = tmp_path / "graph.png"
    canvas.export_image(str(png))
    image = QImage(str(png))
    assert not image.isNull() and image.width() > 300 and image.height() > 300
    assert image.pixelColor(1, 1).name() == "#ffffff"

    svg = tmp_path / "graph.svg"
    canvas.export_image(str(svg))
    text = svg.read_text()
    assert "<svg" in text and "PowBackward0" in text
    assert "<image" not in text  # nodes are vectors, not cached bitmaps

    with pytest.raises(ValueError):
        canvas.export_image(str(tmp_path / "graph.jpg"))


def test_export_empty_canvas(canvas, tmp_path):
    canvas.export_image(str(tmp_path / "empty.png"))
    assert (tmp_path / "empty.png").stat().st_size > 0


# --------------------------------------------------------------------------- scale


def test_large_chain_uses_bulk_edges(canvas, qtbot):
    graph = _chain(3000)
    positions = _positions(graph)
    canvas.set_graph(graph, positions)
    assert len(canvas.node_ids()) == 3000
    assert len(graph["edges"]) > BULK_EDGE_THRESHOLD
    assert canvas.bulk_edges
    # No item per edge: nodes plus a few bulk paths and overlays.
    assert len(canvas.scene().items()) < 3000 + 100

    # One more statement: incremental, items kept, new ones glow.
    first = canvas.node_item("fn10")
    bigger = copy.deepcopy(graph)
    bigger["nodes"].append({"id": "fn9999", "kind": "grad_fn", "label": "SumBackward0",
                            "vars": ["loss"], "statement": 9999, "new": True})
    bigger["edges"].append({"source": "fn9999", "target": "fn2997", "kind": "grad",
                            "new": True})
    more = {k: [x, y] for k, (x, y) in
            layout(graph_from_json(bigger), positions).items()}
    canvas.set_graph(bigger, more)
    assert canvas.node_item("fn10") is first
    assert "new" in canvas.node_item("fn9999").state
    assert canvas.edge_state("fn9999", "fn2997") == {"new"}

    trace = {"steps": [{"node": "fn9999", "grad_inputs": [1.0], "targets": ["fn2997"]}]}
    canvas.show_backward_step(0, 0, [trace])
    assert canvas.edge_label("fn9999", "fn2997") == "1.0"
    canvas.fit_to_view()
    assert MIN_ZOOM <= canvas.zoom_level() <= MAX_ZOOM
    canvas.select_node("fn1500")
    assert not canvas.grab().isNull()

    # Back under the threshold: per-edge items again.
    small = _chain(20)
    canvas.set_graph(small, _positions(small))
    assert not canvas.bulk_edges
    assert len(canvas.node_ids()) == 20


def test_first_graph_is_fitted_when_shown_later(qtbot, snapshot):
    view = GraphCanvas()
    qtbot.addWidget(view)
    view.set_graph(snapshot["graph"], snapshot["positions"])  # not shown yet
    view.resize(900, 650)
    view.show()
    qtbot.waitExposed(view)
    visible = view.mapToScene(view.viewport().rect()).boundingRect()
    for node_id in view.node_ids():
        assert visible.contains(view.node_item(node_id).sceneBoundingRect())


def test_drag_on_background_pans(canvas, qtbot, snapshot):
    canvas.set_graph(snapshot["graph"], snapshot["positions"])
    canvas.zoom_in()
    canvas.zoom_in()
    start = QPoint(5, canvas.viewport().height() // 2)
    before = canvas.mapToScene(start)
    qtbot.mousePress(canvas.viewport(), Qt.MouseButton.LeftButton, pos=start)
    qtbot.mouseMove(canvas.viewport(), start + QPoint(60, 40))
    qtbot.mouseMove(canvas.viewport(), start + QPoint(120, 80))
    qtbot.mouseRelease(canvas.viewport(), Qt.MouseButton.LeftButton, pos=start + QPoint(120, 80))
    after = canvas.mapToScene(start)
    assert after.x() < before.x() - 20 and after.y() < before.y() - 20
    assert canvas.selected_node() is None


def test_stale_saved_tensor_is_marked(qtbot):
    """Scenario 9: the saved result of SigmoidBackward0, modified in place by b.mul_(2)."""
    from gradviz.app.demos import find_demo
    from gradviz.core.session import Session
    from gradviz.graph.layout import layout

    session = Session(find_demo("inplace_dangers").source)
    while session.cursor < 5:
        if not session.step().ok:
            session.skip_failed()
    snap = session.snapshot()
    positions = {k: list(v) for k, v in layout(session.graph).items()}
    canvas = GraphCanvas()
    qtbot.addWidget(canvas)
    canvas.set_graph(snap["graph"], positions)
    stale = [n["id"] for n in snap["graph"]["nodes"] if n.get("stale") is True]
    assert len(stale) == 1
    assert "stale" in canvas.node_item(stale[0]).state
    assert "version 1" in canvas.node_item(stale[0]).toolTip()
    sigmoid = [n["id"] for n in snap["graph"]["nodes"] if n["label"] == "SigmoidBackward0"][0]
    assert "stale" in canvas.node_item(sigmoid).state


def _session_graph(source: str) -> tuple[dict, dict]:
    from gradviz.core.session import Session

    session = Session(source)
    session.run_to_end()
    data = json.loads(json.dumps(session.snapshot()["graph"]))
    return data, {k: list(v) for k, v in layout(graph_from_json(data)).items()}


def test_a_fitted_graph_is_fitted_again_when_the_view_shrinks(qtbot):
    """The guide above the canvas grows a line, the window gets smaller: a graph the
    view had fitted stays whole; one the user zoomed into is left as they set it.
    (A graph this small stays whole: a bigger one is fitted to a readable zoom, below.)"""
    data, positions = _session_graph("x = torch.ones(3, requires_grad=True)\nx = x.sin() * 2\n")
    canvas = _shown_canvas(qtbot, 900, 700)
    canvas.set_graph(data, positions)
    canvas.fit_to_view()

    def whole_graph_visible() -> bool:
        visible = canvas.mapToScene(canvas.viewport().rect()).boundingRect()
        return visible.contains(canvas.graph_rect())

    assert whole_graph_visible()
    assert canvas.zoom_level() <= FIT_MAX_ZOOM
    canvas.resize(560, 380)
    QApplication.processEvents()
    assert whole_graph_visible() and canvas.is_fitted()
    canvas.set_zoom(2.0)  # the user zooms in: a resize keeps their zoom
    canvas.resize(580, 400)
    QApplication.processEvents()
    assert canvas.zoom_level() == pytest.approx(2.0)


def test_fit_after_a_run_ending_on_backward_shows_the_graph_not_loose_tensors(qtbot):
    """A transformer script built from a template layer (deep-copied by
    nn.TransformerEncoder: its parameters are loose tensors beside the graph) and run
    to its end on ``loss.backward()``, which makes no node: nothing glows, and the
    fitted view used to open on the template's parameters. It opens on the latest
    statement's nodes (the loss), not on a box with no edge."""
    data, positions = _session_graph(
        "import torch.nn as nn\n"
        "torch.manual_seed(0)\n"
        "layer = nn.TransformerEncoderLayer(d_model=16, nhead=2, dim_feedforward=32,"
        " batch_first=True)\n"
        "model = nn.TransformerEncoder(layer, num_layers=2)\n"
        "x = torch.randn(1, 4, 16)\n"
        "out = model(x)\n"
        "loss = out.pow(2).mean()\n"
        "loss.backward()\n"
    )
    assert not any(n.get("new") for n in data["nodes"])
    canvas = _shown_canvas(qtbot, 600, 450)
    canvas.set_graph(data, positions)
    canvas.fit_to_view()
    visible = canvas.mapToScene(canvas.viewport().rect()).boundingRect()
    assert not visible.contains(canvas.graph_rect())  # too big to read whole
    loss = [n["id"] for n in data["nodes"] if n["label"] == "loss"]
    assert len(loss) == 1
    assert visible.intersects(canvas.node_item(loss[0]).sceneBoundingRect())
    connected = {e["source"] for e in data["edges"]} | {e["target"] for e in data["edges"]}
    shown = [n for n in canvas.node_ids()
             if visible.intersects(canvas.node_item(n).sceneBoundingRect())]
    assert sum(n in connected for n in shown) > len(shown) / 2


def test_fit_keeps_node_text_readable(qtbot):
    """Fitting never shrinks node text below about 7 px: a tall graph is shown at a
    readable zoom around its newest nodes (the rest is a drag away), W shows it whole,
    and a tiny graph is not blown up past FIT_MAX_ZOOM."""
    data, positions = _session_graph(
        "x = torch.ones(3, requires_grad=True)\n" + "x = x.sin() * 2\n" * 12
    )
    canvas = _shown_canvas(qtbot, 600, 450)  # what the window gives the canvas at 1024x700
    canvas.set_graph(data, positions)
    canvas.fit_to_view()
    assert canvas.zoom_level() >= READABLE_ZOOM
    assert canvas.zoom_level() * 12 >= 7  # the node font is 12 px
    visible = canvas.mapToScene(canvas.viewport().rect()).boundingRect()
    assert not visible.contains(canvas.graph_rect())
    newest = [n["id"] for n in data["nodes"] if n.get("new")]
    assert newest
    for node_id in newest:
        assert visible.intersects(canvas.node_item(node_id).sceneBoundingRect())
    canvas.resize(500, 320)  # fitted: refitted, still readable, still on the newest nodes
    QApplication.processEvents()
    assert canvas.is_fitted() and canvas.zoom_level() >= READABLE_ZOOM
    visible = canvas.mapToScene(canvas.viewport().rect()).boundingRect()
    assert any(visible.intersects(canvas.node_item(n).sceneBoundingRect()) for n in newest)
    canvas.fit_whole()
    visible = canvas.mapToScene(canvas.viewport().rect()).boundingRect()
    assert visible.contains(canvas.graph_rect())

    tiny = _chain(3)
    canvas.resize(900, 650)
    canvas.set_graph(tiny, _positions(tiny))
    canvas.fit_to_view()
    assert canvas.zoom_level() == pytest.approx(FIT_MAX_ZOOM)


# --------------------------------------------------------------------------- legend and theme


@pytest.mark.parametrize("size", [(600, 450), (900, 650)])  # the canvas at 1024x700, 1400x900
def test_legend_is_shown_under_the_graph_and_never_covers_it(qtbot, snapshot, size):
    canvas = _shown_canvas(qtbot, *size)
    canvas.set_graph(snapshot["graph"], snapshot["positions"])
    assert canvas.legend_visible()  # by default
    strip = canvas.legend_rect()
    assert not strip.isEmpty()
    viewport = canvas.viewport().geometry()
    assert not strip.intersects(viewport)  # outside the viewport: no node is ever under it
    assert strip.width() == canvas.width() and strip.bottom() == canvas.height() - 1
    assert strip.height() <= 2 * 18 + 8  # two rows at most at these sizes
    legend = canvas._legend
    placed, _ = legend._place(strip.width())
    for x, _, row in placed:  # every row whole inside the strip, in an 11 px font
        assert x + legend.SWATCH + 5 + legend._fm.horizontalAdvance(row[3]) <= strip.width()
    assert legend._font.pixelSize() >= 11
    texts = [text for text, _ in canvas.legend_items()]
    kinds = {n["kind"] for n in snapshot["graph"]["nodes"]}
    assert ("op (grad_fn)" in texts) == ("grad_fn" in kinds)
    assert "AccumulateGrad" in texts
    assert "module / chain" not in texts  # only what the graph has
    canvas.fit_to_view()
    visible = canvas.mapToScene(viewport.translated(-viewport.topLeft())).boundingRect()
    assert visible.contains(canvas.graph_rect())

    height = canvas.viewport().height()
    canvas.set_legend_visible(False)
    assert canvas.legend_rect().isEmpty() and canvas.viewport().height() > height
    canvas.set_legend_visible(True)
    assert canvas.viewport().height() == height


def test_backward_rows_join_the_legend_while_a_pass_is_shown(canvas, snapshot):
    canvas.set_graph(snapshot["graph"], snapshot["positions"])
    assert "running (backward)" not in [t for t, _ in canvas.legend_items()]
    canvas.show_backward_step(0, 1, [TWO_PATHS_PASS])
    assert "running (backward)" in [t for t, _ in canvas.legend_items()]
    canvas.clear_backward()
    assert "running (backward)" not in [t for t, _ in canvas.legend_items()]


def test_legend_strip_is_drawn_once_per_set_of_rows_and_shows_what_drawing_it_shows(
    qtbot, monkeypatch
):
    """A loop's steps swap the legend between a few sets of rows (the "new" row comes and
    goes): each set is drawn once and copied after; what shows is always what drawing
    the strip straight onto the widget shows, in either theme and at a new width."""
    from PySide6.QtWidgets import QWidget

    from gradviz.graph.style import DARK, LIGHT
    from gradviz.ui.canvas.legend import _Legend, _legend_rows

    host = QWidget()
    qtbot.addWidget(host)
    host.resize(600, 80)
    legend = _Legend(host)
    legend.setGeometry(0, 0, 600, 44)
    host.show()
    qtbot.waitExposed(host)
    drawn: list[int] = []
    real_draw = _Legend._draw
    monkeypatch.setattr(_Legend, "_draw", lambda self, p: drawn.append(1) or real_draw(self, p))
    straight_paints: list[int] = []

    class Straight(_Legend):  # the strip drawn straight on the widget, no picture kept
        def paintEvent(self, event) -> None:  # noqa: N802 (Qt API)
            straight_paints.append(1)
            painter = QPainter(self)
            real_draw(self, painter)
            painter.end()

    reference = Straight(host)

    def shown(widget) -> QImage:
        return widget.grab().toImage().convertToFormat(QImage.Format.Format_ARGB32)

    kinds = {"grad_fn", "accumulate_grad", "leaf", "saved"}
    sets = [
        (LIGHT, kinds, 600), (LIGHT, kinds | {"new"}, 600), (LIGHT, kinds, 600),
        (LIGHT, kinds | {"new"}, 600), (DARK, kinds | {"new"}, 600), (DARK, kinds, 600),
        (DARK, kinds, 420), (LIGHT, kinds, 600),
    ]  # fmt: skip
    before = None
    for t, present, width in sets:
        for widget in (legend, reference):
            widget.setGeometry(0, 0, width, 44)
            widget.set_rows(_legend_rows(t, present), t)
        picture = shown(legend)
        assert picture == shown(reference)
        assert picture != before  # every change of rows, theme or width shows
        assert legend.placed == legend._place(legend.width())[0]
        before = picture
    # light and dark, each with and without "new", dark at the new width; the light
    # pictures again after dark were drawn again (a theme change lets the old ones go)
    assert len(drawn) == 6
    assert len(straight_paints) == len(sets)  # the reference was drawn straight each time


def test_canvas_follows_a_dark_palette(canvas, snapshot):
    from PySide6.QtGui import QColor, QPalette

    from gradviz.graph.style import DARK, LIGHT

    app = QApplication.instance()
    old = app.palette()
    canvas.set_graph(snapshot["graph"], snapshot["positions"])
    assert canvas.current_theme() is LIGHT
    dark = QPalette(old)
    dark.setColor(QPalette.ColorRole.Window, QColor("#202124"))
    dark.setColor(QPalette.ColorRole.WindowText, QColor("#e8eaed"))
    try:
        app.setPalette(dark)
        QApplication.processEvents()
        assert canvas.current_theme() is DARK
        image = canvas.grab().toImage()
        assert image.pixelColor(3, 3).lightness() < 128  # a dark background
        assert [c for _, c in canvas.legend_items()][0] == DARK.nodes["grad_fn"].fill
        assert f'fill="{LIGHT.paper}"' in canvas.to_svg()  # exports stay light
    finally:
        app.setPalette(old)
        QApplication.processEvents()
    assert canvas.current_theme() is LIGHT


def test_keep_graph_in_view_follows_the_newest_nodes_and_keeps_the_users_zoom(canvas):
    data, positions = _session_graph(
        "x = torch.ones(3, requires_grad=True)\n" + "x = x.sin() * 2\n" * 12
    )
    canvas.set_graph(data, positions)
    canvas.fit_to_view()
    canvas.keep_graph_in_view()  # fitted: stays fitted
    assert canvas.is_fitted() and canvas.zoom_level() == pytest.approx(READABLE_ZOOM)
    canvas.set_zoom(1.2)  # the user's zoom, then they drag to the far end of the graph
    canvas.centerOn(canvas.graph_rect().center().x(), canvas.graph_rect().bottom())
    canvas.keep_graph_in_view()
    assert canvas.zoom_level() == pytest.approx(1.2)
    visible = canvas.mapToScene(canvas.viewport().rect()).boundingRect()
    newest = [n["id"] for n in data["nodes"] if n.get("new")]
    assert any(visible.intersects(canvas.node_item(n).sceneBoundingRect()) for n in newest)


# --------------------------------------------------------------------------- big graphs


def _image(view: GraphCanvas) -> QImage:
    """What the view's viewport paints now (a grab goes through its paint event; a
    QGraphicsView.render into an image may reuse an item's pixmap cached for it before)."""
    return view.viewport().grab().toImage()


def _differing(a: QImage, b: QImage) -> int:
    assert a.size() == b.size()
    return sum(a.pixel(x, y) != b.pixel(x, y) for y in range(a.height()) for x in range(a.width()))


def _has_item(view: GraphCanvas, node_id: str) -> bool:
    """Whether the node has an item now (without making one, as node_item would)."""
    return view._nodes[node_id].item is not None


def _view(qtbot, graph: dict, positions: dict, lazy: bool, monkeypatch=None) -> GraphCanvas:
    if monkeypatch is not None:
        threshold = 10 if lazy else 1_000_000
        monkeypatch.setattr(canvas_module, "LAZY_NODE_THRESHOLD", threshold)
        monkeypatch.setattr(canvas_module, "BULK_EDGE_THRESHOLD", threshold)
    view = GraphCanvas()
    qtbot.addWidget(view)
    view.resize(900, 650)
    view.set_graph(graph, positions)
    view.show()
    qtbot.waitExposed(view)
    return view


def test_a_big_graph_gets_items_only_for_the_nodes_on_screen(qtbot):
    graph = _chain(3000)
    positions = _positions(graph)
    view = _view(qtbot, graph, positions, lazy=True)
    assert len(graph["nodes"]) > LAZY_NODE_THRESHOLD
    items = [i for i in view.scene().items() if isinstance(i, NodeItem)]
    assert 0 < len(items) < 300  # not 3,000: tiles paint the others
    visible = view.mapToScene(view.viewport().rect()).boundingRect()
    for node_id in view.node_ids():
        node = view._nodes[node_id]
        if visible.intersects(node.scene_rect()):
            assert _has_item(view, node_id), node_id
    # a node at the far end has none until it is scrolled to
    far = max(view.node_ids(), key=lambda n: abs(positions[n][1] - visible.center().y()))
    assert not _has_item(view, far)
    view.centerOn(QPointF(*positions[far]))
    QApplication.processEvents()
    assert _has_item(view, far)
    item = view.node_item(far)
    assert (item.pos().x(), item.pos().y()) == pytest.approx(tuple(positions[far]))
    # node_item makes the item of a node anywhere, with the node's data
    other = "fn1500"  # mid-way: never on screen
    assert not _has_item(view, other)
    item = view.node_item(other)
    assert item is not None and item.scene() is view.scene() and item.node_id == other
    assert item.attrs is view._nodes[other].attrs and item.toolTip()
    assert (item.width, item.height) == node_size(item.attrs)


def test_an_item_made_on_demand_draws_what_every_item_drew(qtbot, monkeypatch):
    """The same 400-node chain drawn by an item per node, by items made for the nodes on
    screen, and by the tiles alone (no items at all): one picture."""
    graph = _chain(400)
    for node in graph["nodes"][-30:]:
        node["new"] = True
    for edge in graph["edges"][-20:]:
        edge["new"] = True
    positions = _positions(graph)

    def look(view: GraphCanvas) -> QImage:
        view.reset_zoom()
        view.centerOn(QPointF(*positions["fn385"]))
        view.select_node("fn383", center=False)
        QApplication.processEvents()
        return _image(view)

    eager = _view(qtbot, graph, positions, lazy=False, monkeypatch=monkeypatch)
    assert all(_has_item(eager, n) for n in eager.node_ids())
    lazy = _view(qtbot, graph, positions, lazy=True, monkeypatch=monkeypatch)
    assert lazy.bulk_edges and not eager.bulk_edges
    every, on_screen = look(eager), look(lazy)
    assert 0 < len(lazy._live) < 60
    assert _differing(every, on_screen) == 0
    # no items at all: the tiles draw each node with the same code (the items draw
    # through a cached pixmap: antialiasing may differ at a few edge pixels)
    monkeypatch.setattr(lazy, "_sync_items", lambda: None)
    for node in list(lazy._live.values()):
        lazy._release(node)
    tiles = _image(lazy)
    assert not lazy._live
    assert _differing(every, tiles) < 0.01 * every.width() * every.height()
    # zoomed out below the text level too
    for view in (eager, lazy):
        view.fit_whole()
    assert _differing(_image(eager), _image(lazy)) < 0.01 * every.width() * every.height()


def test_a_click_or_tooltip_on_a_node_without_an_item_reaches_it(qtbot, monkeypatch):
    graph = _chain(400)
    positions = _positions(graph)
    view = _view(qtbot, graph, positions, lazy=True, monkeypatch=monkeypatch)
    view.fit_whole()  # tiny nodes: no items are made for them
    QApplication.processEvents()
    target = "fn200"
    assert not _has_item(view, target)
    point = view.mapFromScene(QPointF(*positions[target]))
    with qtbot.waitSignal(view.node_selected, timeout=1000) as blocker:
        qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=point)
    assert blocker.args == [target]
    assert view.selected_node() == target and _has_item(view, target)
    assert "selected" in view.node_item(target).state
    other = "fn100"
    point = view.mapFromScene(QPointF(*positions[other]))
    event = QHelpEvent(QEvent.Type.ToolTip, point, view.viewport().mapToGlobal(point))
    QApplication.sendEvent(view.viewport(), event)
    assert _has_item(view, other) and "MulBackward0" in view.node_item(other).toolTip()


def test_turning_off_every_glow_of_a_big_graph_repaints_it(qtbot, monkeypatch):
    """The step after a run: every node's "new" flag goes off at once; a big graph's
    tiles and items show it (the picture is a fresh canvas's), near and zoomed out."""
    graph = _chain(400)
    positions = _positions(graph)
    glowing = copy.deepcopy(graph)
    for node in glowing["nodes"]:
        node["new"] = True
    view = _view(qtbot, glowing, positions, lazy=True, monkeypatch=monkeypatch)
    fresh = _view(qtbot, graph, positions, lazy=True, monkeypatch=monkeypatch)
    for v in (view, fresh):
        v.reset_zoom()
        v.centerOn(QPointF(*positions["fn200"]))
    QApplication.processEvents()
    before = _image(view)
    view.set_graph(graph, positions)
    QApplication.processEvents()
    assert not any("new" in view._nodes[n].state() for n in view.node_ids())
    after = _image(view)
    assert _differing(before, after) > 0
    assert _differing(after, _image(fresh)) == 0
    assert dict(view.legend_items()).keys() == dict(fresh.legend_items()).keys()
    # zoomed out: the tiles' rings for new nodes are gone too
    view.set_graph(glowing, positions)
    for v in (view, fresh):
        v.fit_whole()
    QApplication.processEvents()
    ringed = _image(view)
    view.set_graph(graph, positions)
    QApplication.processEvents()
    assert _differing(ringed, _image(view)) > 0
    # (a node drawn by its item's cached pixmap may differ from its tile's by an
    # antialiased pixel: the two canvases made items for different nodes)
    assert _differing(_image(view), _image(fresh)) < 10


def test_a_big_graph_routes_its_edges_when_they_are_painted(qtbot, monkeypatch):
    from gradviz.graph.render_svg import render_svg_data

    graph = _chain(400)
    positions = _positions(graph)
    monkeypatch.setattr(canvas_module, "LAZY_NODE_THRESHOLD", 10)
    monkeypatch.setattr(canvas_module, "BULK_EDGE_THRESHOLD", 10)
    view = GraphCanvas()
    qtbot.addWidget(view)
    view.resize(900, 650)
    view.set_graph(graph, positions)
    assert view.bulk_edges
    assert all(e.geometry is None for e in view._edges.values())  # nothing painted yet
    view.show()
    qtbot.waitExposed(view)
    _image(view)
    routed = {k for k, e in view._edges.items() if e.geometry is not None}
    assert routed and len(routed) < len(view._edges) / 2
    # asked for, a route is found now, and it is the one the whole graph's routing gives
    # (the SVG export routes every edge at once)
    fresh = GraphCanvas()
    qtbot.addWidget(fresh)
    monkeypatch.setattr(canvas_module, "BULK_EDGE_THRESHOLD", 1_000_000)
    monkeypatch.setattr(canvas_module, "LAZY_NODE_THRESHOLD", 1_000_000)
    fresh.set_graph(graph, positions)
    for key in view._edges:
        assert view.edge_geometry(*key) == fresh._edges[key].geometry
    assert view.to_svg() == fresh.to_svg() == render_svg_data(graph, positions)
