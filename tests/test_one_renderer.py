"""One renderer: the window's export, the CLI and the library write the same SVG.

Every SVG gradviz writes comes from ``gradviz.graph.render_svg.render_svg``. These
tests draw one small script's graph three ways and compare the documents, then
check what the renderer promises: edges follow their routes around boxes, the
viewBox holds every bend, and a tensor with ``requires_grad=False`` is drawn in
the style table's no-grad style, never as a green leaf.

The library captures the graph in this process (``gradviz.snapshot``), which
numbers its nodes on its own (``fn3`` here may be ``fn2`` in the kernel): its SVG
is compared after renaming every node id to its place in the graph
(:func:`canonical`). The window's export and the CLI's are compared byte for byte.
"""

from __future__ import annotations

import json
import os
import re
import xml.etree.ElementTree as ET

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

torch = pytest.importorskip("torch")

import gradviz  # noqa: E402
from gradviz import cli  # noqa: E402
from gradviz.api import Snapshot  # noqa: E402
from gradviz.export import graph_to_svg  # noqa: E402
from gradviz.graph.layout import layout_with_routes, node_size  # noqa: E402
from gradviz.graph.render_svg import render_svg, svg_number  # noqa: E402
from gradviz.graph.routing import Box, Obstacles, edge_geometries, geometry_segments  # noqa: E402
from gradviz.graph.style import LIGHT  # noqa: E402

SVG = "{http://www.w3.org/2000/svg}"
SCRIPT = """\
x = torch.tensor(2.0, requires_grad=True)
w = torch.tensor(3.0)
y = x * x + x.sin() * w
y.backward()
"""


def run_script_here():
    """The script run by plain Python in this process, as a library user runs it."""
    namespace = {"torch": torch}
    exec(compile(SCRIPT, "<script>", "exec"), namespace)  # noqa: S102 - our own script
    return namespace


def canonical(svg: str) -> str:
    """The SVG with each node id replaced by its place in the graph (n0, n1, ...)."""
    ids = re.findall(r'<g class="node [\w-]+" id="([^"]+)">', svg)
    names = {node_id: f"n{i}" for i, node_id in enumerate(ids)}
    pattern = re.compile(r"\b(" + "|".join(re.escape(i) for i in sorted(ids, key=len, reverse=True)) + r")\b")
    return pattern.sub(lambda m: names[m.group(1)], svg)


@pytest.fixture(scope="module")
def three_svgs(tmp_path_factory):
    """(window, cli, library) SVG documents of SCRIPT's graph, and the CLI's JSON export."""
    from PySide6.QtWidgets import QApplication

    from gradviz.ui.canvas import GraphCanvas

    tmp = tmp_path_factory.mktemp("one_renderer")
    script = tmp / "script.py"
    script.write_text(SCRIPT, encoding="utf-8")

    # (b) the CLI: gradviz export script.py -o cli.svg (and the same run's graph as JSON)
    assert cli.main(["export", str(script), "-o", str(tmp / "cli.svg")]) == 0
    assert cli.main(["export", str(script), "-o", str(tmp / "graph.json")]) == 0
    doc = json.loads((tmp / "graph.json").read_text(encoding="utf-8"))

    # (a) the window: a canvas given that graph at those positions, "Export graph..." to .svg
    app = QApplication.instance() or QApplication([])
    canvas = GraphCanvas()
    canvas.resize(800, 600)
    canvas.set_graph({"nodes": doc["nodes"], "edges": doc["edges"]}, doc["positions"])
    canvas.export_image(str(tmp / "window.svg"))
    app.processEvents()

    # (c) the library, in this process
    ns = run_script_here()
    snap = gradviz.snapshot(ns["y"], names={"x": ns["x"], "w": ns["w"]}, root_names=["y"])
    library = snap.to_svg()
    yield {
        "window": (tmp / "window.svg").read_text(encoding="utf-8"),
        "cli": (tmp / "cli.svg").read_text(encoding="utf-8"),
        "library": library,
        "doc": doc,
        "canvas": canvas,
    }
    canvas.deleteLater()
    app.processEvents()


def test_window_cli_and_library_write_the_same_svg(three_svgs):
    window, cli_svg, library = three_svgs["window"], three_svgs["cli"], three_svgs["library"]
    ET.fromstring(cli_svg.encode("utf-8"))
    assert window == cli_svg  # the very same bytes
    assert canonical(library) == canonical(cli_svg)  # the same picture, its own node ids
    # and a snapshot of the CLI's own graph draws the CLI's bytes
    doc = three_svgs["doc"]
    again = Snapshot({"graph": {"nodes": doc["nodes"], "edges": doc["edges"]},
                      "positions": doc["positions"]}).to_svg()
    assert again == cli_svg


def test_a_tensor_without_grad_is_no_leaf(three_svgs):
    root = ET.fromstring(three_svgs["cli"].encode("utf-8"))
    nodes = {el.get("id"): el for el in root.iter(f"{SVG}g") if "node" in el.get("class", "").split()}
    by_label = {el.find(f"{SVG}text").text: el for el in nodes.values()}
    w, x = by_label["w"], by_label["x"]
    assert w.get("class") == "node no_grad"
    assert w.find(f"{SVG}rect").get("fill") == LIGHT.nodes["no_grad"].fill
    assert x.get("class") == "node leaf"
    assert x.find(f"{SVG}rect").get("fill") == LIGHT.nodes["leaf"].fill
    assert LIGHT.nodes["no_grad"].fill != LIGHT.nodes["leaf"].fill
    # the window draws it so too
    canvas = three_svgs["canvas"]
    w_id = next(n["id"] for n in three_svgs["doc"]["nodes"] if n.get("label") == "w")
    assert canvas.node_item(w_id)._key == "no_grad"


# --------------------------------------------------------------------------- routes


def _column() -> tuple[list, list, dict]:
    """a above b above c, and an edge a -> c that would run straight through b."""
    nodes = [
        ("a", {"kind": "grad_fn", "label": "AddBackward0", "vars": ["z"]}),
        ("b", {"kind": "grad_fn", "label": "MulBackward0", "vars": ["y"]}),
        ("c", {"kind": "accumulate_grad", "label": "AccumulateGrad", "vars": ["x"]}),
        ("s", {"kind": "saved", "label": "self"}),
        ("s2", {"kind": "saved", "label": "other"}),
    ]
    edges = [("a", "b", {"kind": "grad"}), ("b", "c", {"kind": "grad"}), ("a", "c", {"kind": "grad"}),
             ("b", "s", {"kind": "saved"}), ("b", "s2", {"kind": "saved"})]
    positions = {"a": (100.0, 40.0), "b": (100.0, 124.0), "c": (100.0, 208.0),
                 "s": (190.0, 124.0), "s2": (260.0, 124.0)}
    return nodes, edges, positions


def _route(nodes, edges, positions):
    boxes, obstacles = {}, Obstacles()
    for node_id, attrs in nodes:
        w, h = node_size(attrs)
        boxes[node_id] = Box.of(attrs["kind"], *positions[node_id], w, h)
        obstacles.set(node_id, *positions[node_id], w, h)
    kinds = {(s, t): a["kind"] for s, t, a in edges}
    adj: dict = {}
    for key in kinds:
        for end in key:
            adj.setdefault(end, []).append(key)
    return {k: g for k, (g, _) in edge_geometries(kinds, kinds, adj, boxes, obstacles).items()}, boxes


def _curve_points(g, n: int = 24) -> list[tuple[float, float]]:
    pts, at = [], None
    for cmd, c in geometry_segments(g):
        if cmd == "M":
            at = (c[0], c[1])
        elif cmd == "L":
            pts += [(at[0] + (c[0] - at[0]) * i / n, at[1] + (c[1] - at[1]) * i / n) for i in range(n + 1)]
            at = (c[0], c[1])
        else:
            p0, p1, p2, p3 = at, (c[0], c[1]), (c[2], c[3]), (c[4], c[5])
            for i in range(n + 1):
                t = i / n
                pts.append(tuple(
                    (1 - t) ** 3 * p0[k] + 3 * (1 - t) ** 2 * t * p1[k] + 3 * (1 - t) * t * t * p2[k] + t ** 3 * p3[k]
                    for k in (0, 1)
                ))
            at = p3
    return pts


def _inside(p, box: Box, grow: float = 0.0) -> bool:
    return (abs(p[0] - box.cx) < box.width / 2 + grow) and (abs(p[1] - box.cy) < box.height / 2 + grow)


def test_edges_follow_their_routes_around_boxes():
    nodes, edges, positions = _column()
    shapes, boxes = _route(nodes, edges, positions)
    long = shapes[("a", "c")]
    assert long[0] == "r", "a -> c must bend around b"
    passes = long[3]
    bends = [(passes[i], passes[i + 1]) for i in range(0, len(passes), 2)]
    svg = render_svg(nodes, edges, positions)
    root = ET.fromstring(svg.encode("utf-8"))
    edge = next(el for el in root.iter(f"{SVG}g")
                if el.get("data-source") == "a" and el.get("data-target") == "c")
    d = edge.find(f"{SVG}path").get("d")
    for x, y in bends:
        assert f"{svg_number(x)},{svg_number(y)}" in d  # the path goes through each bend
    # no drawn edge crosses a box other than its own two ends
    for (s, t), g in shapes.items():
        for p in _curve_points(g)[1:-1]:
            for node_id, box in boxes.items():
                if node_id not in (s, t):
                    assert not _inside(p, box), f"{s}->{t} crosses {node_id} at {p}"
    # a saved tensor behind another one is reached under the row, not through it
    assert shapes[("b", "s2")][0] == "u"
    assert shapes[("b", "s")][0] == "l"


def test_the_window_draws_the_routes_the_svg_draws(qtbot):
    from gradviz.ui.canvas import GraphCanvas

    nodes, edges, positions = _column()
    shapes, _ = _route(nodes, edges, positions)
    canvas = GraphCanvas()
    qtbot.addWidget(canvas)
    data = {"nodes": [{"id": n, **a} for n, a in nodes],
            "edges": [{"source": s, "target": t, **a} for s, t, a in edges]}
    canvas.set_graph(data, {k: list(v) for k, v in positions.items()})
    for key, g in shapes.items():
        assert canvas._edges[key].geometry == g
    assert canvas.to_svg() == render_svg(nodes, edges, positions)


def _numbers(d: str) -> list[tuple[float, float]]:
    return [(float(a), float(b)) for a, b in re.findall(r"(-?[\d.]+),(-?[\d.]+)", d)]


def test_the_viewbox_holds_every_bend():
    """The layout's long edges (and the router's bends and U-turns) all inside the picture."""
    import networkx as nx

    g = nx.DiGraph()
    g.add_node("loss", kind="tensor", label="loss", vars=["loss"], shape=[], is_leaf=False,
               requires_grad=True)
    g.add_node("add", kind="grad_fn", label="AddBackward0")
    prev = "add"
    for i in range(5):
        g.add_node(f"f{i}", kind="grad_fn", label="SinBackward0")
        g.add_edge(prev, f"f{i}", kind="grad")
        prev = f"f{i}"
    g.add_node("acc", kind="accumulate_grad", label="AccumulateGrad", vars=["x"])
    g.add_node("x", kind="tensor", label="x", vars=["x"], shape=[3], is_leaf=True, requires_grad=True)
    for i in range(3):
        g.add_node(f"s{i}", kind="saved", label=f"saved{i}")
        g.add_edge("f4", f"s{i}", kind="saved")
    g.add_edge("loss", "add", kind="output")
    g.add_edge(prev, "acc", kind="grad")
    g.add_edge("add", "acc", kind="grad")  # spans six rows: the layout routes it
    g.add_edge("acc", "x", kind="leaf")
    result = layout_with_routes(g)
    assert result.routes, "the layout routes the long edge"
    svg = graph_to_svg(g)
    root = ET.fromstring(svg.encode("utf-8"))
    x0, y0, w, h = (float(v) for v in root.get("viewBox").split())
    points = [p for el in root.iter(f"{SVG}path") for p in _numbers(el.get("d"))]
    points += [p for route in result.routes.values() for p in route]
    assert points
    for px, py in points:
        assert x0 <= px <= x0 + w and y0 <= py <= y0 + h, (px, py)
    assert any(el.get("d").count("C") > 1 for el in root.iter(f"{SVG}path")), "a routed edge"
