"""The page routes its own edges and makes its "open" pictures (gradviz/html_view.js).

The page's script is run in node on real snapshots; what it drew is compared with
Python: every edge's polyline with :func:`gradviz.graph.routing.edge_geometries` on
the same boxes, and every "open" picture with ``_open_one`` (the collapsed graph
with one block expanded), its boxes free of overlaps.
"""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")

import gradviz  # noqa: E402
from gradviz.graph.graphdata import graph_from_json  # noqa: E402
from gradviz.graph.grouping import collapse_modules, module_tree, top_blocks  # noqa: E402
from gradviz.graph.routing import Box, Obstacles, edge_geometries, geometry_polyline  # noqa: E402
from gradviz.html_view import _open_one, _owners, page_model, render_html  # noqa: E402
from tests.test_html_view import encoder_snapshot, run_page_in_node  # noqa: E402


class Block(torch.nn.Module):
    def __init__(self, d: int):
        super().__init__()
        self.norm = torch.nn.LayerNorm(d)
        self.fc1, self.fc2 = torch.nn.Linear(d, 2 * d), torch.nn.Linear(2 * d, d)

    def forward(self, x):
        return x + self.fc2(torch.relu(self.fc1(self.norm(x))))


class Net(torch.nn.Module):
    """An embedding, a list of residual blocks, a head tied to the embedding (as GPT-2)."""

    def __init__(self, d: int = 8, blocks: int = 4, vocab: int = 11):
        super().__init__()
        self.tok = torch.nn.Embedding(vocab, d)
        self.blocks = torch.nn.ModuleList(Block(d) for _ in range(blocks))
        self.head = torch.nn.Linear(d, vocab, bias=False)
        self.head.weight = self.tok.weight

    def forward(self, idx):
        x = self.tok(idx)
        for block in self.blocks:
            x = block(x)
        return self.head(x)


def parameters_only_snapshot(blocks: int = 4) -> dict:
    """No recorder, no model: only the parameters carry a module (as ``snapshot(loss,
    names=dict(model.named_parameters()))``)."""
    torch.manual_seed(0)
    net = Net(blocks=blocks)
    loss = net(torch.tensor([[1, 2, 3]])).logsumexp(-1).sum()
    return gradviz.snapshot(loss, names=dict(net.named_parameters())).to_dict()


def python_polylines(picture: dict, kinds: dict) -> dict:
    boxes, obstacles = {}, Obstacles()
    for i, node in enumerate(picture["ids"]):
        x, y, w, h = (picture[k][i] for k in ("x", "y", "w", "h"))
        boxes[node] = Box.of(kinds.get(node, "group"), x, y, w, h)
        obstacles.set(node, x, y, w, h)
    edge_kinds = {(u, v): kind for u, v, kind, _ in picture["edges"]}
    adj: dict = {}
    for key in edge_kinds:
        for end in key:
            adj.setdefault(end, []).append(key)
    shapes = edge_geometries(edge_kinds, edge_kinds, adj, boxes, obstacles)
    return {key: [c for p in geometry_polyline(shapes[key][0]) for c in p] for key in edge_kinds}


def check_pictures(snap: dict, tmp_path) -> dict:
    report = run_page_in_node(render_html(snap), tmp_path, pictures=True)
    assert report["errors"] == []
    kinds = {n["id"]: n.get("kind") for n in snap["graph"]["nodes"]}
    pictures = {p["key"]: p for p in report["pictures"]}
    routed = 0
    for picture in pictures.values():
        assert not picture["straight"]
        expected = python_polylines(picture, kinds)
        for u, v, _, flat in picture["edges"]:
            want = expected[(u, v)]
            assert len(flat) == len(want) and all(
                math.isclose(a, b, abs_tol=1e-6) for a, b in zip(flat, want)
            ), (picture["key"], u, v, flat, want)
            routed += len(want) > 4  # through a pass, or around a box
    assert routed, "some edge should have had to go around a box"
    return pictures


def check_open_pictures(snap: dict, pictures: dict) -> None:
    graph = graph_from_json(snap["graph"])
    blocks = top_blocks(module_tree(graph), split_lists=True)
    collapsed = collapse_modules(graph, blocks, infer=True)
    owners = _owners(collapsed)
    opened = [key for key in pictures if key.startswith("open:")]
    assert opened == [f"open:{b}" for b in page_model(snap)["open"]] and opened
    for key in opened:
        picture = pictures[key]
        want = _open_one(graph, collapsed, owners, "g:" + key[len("open:"):])
        assert sorted(picture["ids"]) == sorted(want.nodes)
        assert {(u, v): k for u, v, k, _ in picture["edges"]} == {
            (u, v): d.get("kind", "grad") for u, v, d in want.edges(data=True)
        }
        boxes = [
            (picture["x"][i] - picture["w"][i] / 2, picture["x"][i] + picture["w"][i] / 2,
             picture["y"][i] - picture["h"][i] / 2, picture["y"][i] + picture["h"][i] / 2)
            for i in range(len(picture["ids"]))
        ]
        for i, a in enumerate(boxes):
            for b in boxes[:i]:
                overlap = min(a[1], b[1]) - max(a[0], b[0]), min(a[3], b[3]) - max(a[2], b[2])
                assert min(overlap) <= 1e-6, (key, a, b)


def test_routes_and_open_pictures_of_a_recorded_model(tmp_path):
    snap, _ = encoder_snapshot(layers=3)
    pictures = check_pictures(snap, tmp_path)
    check_open_pictures(snap, pictures)


def test_routes_and_open_pictures_of_a_snapshot_that_tags_only_parameters(tmp_path):
    snap = parameters_only_snapshot()
    model = page_model(snap)
    modules = next(v for v in model["views"] if v["key"] == "modules")
    # a box per block, holding the block's ops (not only its parameters)
    for i in range(4):
        group = model["groups"][f"g:blocks.{i}"]
        labels = {model["nodes"][m].get("label") for m in group["members"]}
        assert {"NativeLayerNormBackward0", "ReluBackward0", "AddmmBackward0"} <= labels, labels
    assert len(modules["ids"]) < len(model["views"][0]["ids"]) / 3
    pictures = check_pictures(snap, tmp_path)
    check_open_pictures(snap, pictures)


def test_the_page_embeds_no_routes_and_no_picture_per_block():
    snap = parameters_only_snapshot(blocks=8)
    model = page_model(snap)
    assert [v["key"] for v in model["views"]][:2] == ["all", "modules"]
    assert model["open"] == [*(f"blocks.{i}" for i in range(8)), "tok"]
    assert all(len(e) == 3 for v in model["views"] for e in v["edges"])


def test_positions_a_snapshot_carries_place_the_expanded_picture(monkeypatch):
    """A window's snapshot (or gradviz export's kernel report) carries where every node
    was drawn: the page draws the expanded picture there, with no layout of its own;
    positions that miss a node or are not finite numbers are laid out afresh."""
    import gradviz.html_view as html_view
    from gradviz.graph.layout import layout

    snap = parameters_only_snapshot()
    whole = len(snap["graph"]["nodes"])
    placed = {k: [x + 1000.0, y] for k, (x, y) in layout(snap["graph"]).items()}
    calls = []
    real = html_view.layout_with_routes

    def counted(graph, *args, **kwargs):
        calls.append(graph.number_of_nodes())
        return real(graph, *args, **kwargs)

    monkeypatch.setattr(html_view, "layout_with_routes", counted)
    model = page_model({**snap, "positions": placed})
    everything = model["views"][0]
    assert whole not in calls
    assert everything["x"][0] == round(placed[everything["ids"][0]][0], 1)
    for bad in ({**placed, everything["ids"][0]: [float("nan"), 0.0]},
                {k: v for k, v in list(placed.items())[1:]},
                {**placed, everything["ids"][0]: ["1", 2]}):
        calls.clear()
        page_model({**snap, "positions": bad})
        assert whole in calls


def test_export_graph_draws_the_page_at_the_positions_it_is_given(tmp_path, monkeypatch):
    """``export_graph(graph, 'x.html', positions)`` draws the expanded picture where the
    caller drew the graph, as the SVG, DOT, GraphML and JSON writers do (it laid the
    graph out again and ignored them); without positions the page lays it out."""
    import json
    import re

    import gradviz.html_view as html_view
    from gradviz.export import export_graph
    from gradviz.graph.layout import layout

    snap = parameters_only_snapshot()
    graph = graph_from_json(snap["graph"])
    placed = {k: (x + 1000.0, y + 7.0) for k, (x, y) in layout(snap["graph"]).items()}
    calls = []
    real = html_view.layout_with_routes

    def counted(g, *args, **kwargs):
        calls.append(g.number_of_nodes())
        return real(g, *args, **kwargs)

    def expanded(path) -> dict:
        text = path.read_text(encoding="utf-8")
        block = re.search(r'class="gvz-data">(.*?)</script>', text, re.S)
        assert block
        return json.loads(block.group(1))["views"][0]

    monkeypatch.setattr(html_view, "layout_with_routes", counted)
    export_graph(graph, tmp_path / "at.html", placed)
    everything = expanded(tmp_path / "at.html")
    assert graph.number_of_nodes() not in calls
    assert everything["x"] == [round(placed[v][0], 1) for v in everything["ids"]]
    assert everything["y"] == [round(placed[v][1], 1) for v in everything["ids"]]

    calls.clear()
    missing = dict(list(placed.items())[1:])  # one node left out: laid out afresh
    export_graph(graph, tmp_path / "fresh.html", missing)
    assert graph.number_of_nodes() in calls
    assert expanded(tmp_path / "fresh.html")["x"] != everything["x"]
