"""Tests for gradviz.export: every format writes a file that parses back."""

from __future__ import annotations

import json
import shutil
import subprocess
import xml.etree.ElementTree as ET

import networkx as nx
import pytest

from gradviz.export import SUPPORTED_SUFFIXES, export_graph, graph_to_dot, graph_to_svg
from gradviz.graph.layout import layout
from gradviz.graph.style import LIGHT

SVG_NS = "{http://www.w3.org/2000/svg}"
NASTY = 'we<ird> & "quoted" \\ name'


def graph() -> nx.DiGraph:
    """``y = x ** 2; loss = y.sum()`` plus a lone tensor and a nasty label."""
    g = nx.DiGraph()
    g.add_node(
        "t1",
        kind="tensor",
        label="loss",
        vars=["loss"],
        shape=[],
        dtype="float32",
        device="cpu",
        is_leaf=False,
        requires_grad=True,
        storage="S1",
        statement=1,
        new=True,
    )
    g.add_node(
        "fn1",
        kind="grad_fn",
        label="SumBackward0",
        vars=["loss"],
        statement=1,
        new=True,
        saved={},
        freed=False,
    )
    g.add_node(
        "fn2",
        kind="grad_fn",
        label="PowBackward0",
        vars=["y"],
        statement=0,
        new=False,
        saved={"exponent": 2},
        freed=False,
    )
    g.add_node(
        "s1",
        kind="saved",
        label="self",
        shape=[3],
        dtype="float32",
        device="cpu",
        storage="S2",
        statement=0,
        new=False,
    )
    g.add_node(
        "acc1", kind="accumulate_grad", label="AccumulateGrad", vars=[], statement=None, new=False
    )
    g.add_node(
        "t2",
        kind="tensor",
        label="x",
        vars=["x"],
        shape=[3],
        dtype="float32",
        device="cpu",
        is_leaf=True,
        requires_grad=True,
        storage="S2",
        statement=None,
        new=False,
    )
    g.add_node(
        "t3",
        kind="tensor",
        label=NASTY,
        vars=[NASTY, "alias"],
        shape=[2, 2],
        is_leaf=True,
        requires_grad=False,
        statement=None,
        new=False,
    )
    g.add_edge("t1", "fn1", kind="output", new=True)
    g.add_edge("fn1", "fn2", kind="grad", new=True)
    g.add_edge("fn2", "s1", kind="saved", new=False)
    g.add_edge("fn2", "acc1", kind="grad", new=False)
    g.add_edge("acc1", "t2", kind="leaf", new=False)
    return g


@pytest.mark.parametrize("suffix", SUPPORTED_SUFFIXES)
def test_every_format_writes_a_non_empty_file(tmp_path, suffix):
    if suffix == ".png":
        pytest.importorskip("PySide6.QtSvg")
    path = tmp_path / f"graph{suffix}"
    export_graph(graph(), path)
    assert path.stat().st_size > 0


def test_svg_parses_and_draws_every_node_and_edge(tmp_path):
    g = graph()
    path = tmp_path / "g.svg"
    export_graph(g, path)
    root = ET.parse(path).getroot()
    assert root.tag == f"{SVG_NS}svg"
    nodes = [el for el in root.iter(f"{SVG_NS}g") if "node" in el.get("class", "").split()]
    assert {el.get("id") for el in nodes} == set(g.nodes)
    edges = [el for el in root.iter(f"{SVG_NS}g") if "edge" in el.get("class", "").split()]
    assert {(el.get("data-source"), el.get("data-target")) for el in edges} == set(g.edges)
    lines = [el.find(f"{SVG_NS}path") for el in edges]
    dashed = [el for el in lines if el.get("stroke-dasharray")]
    assert len(dashed) == 1  # the saved edge
    heads = [el for el in edges if el.find(f"{SVG_NS}path[@class='head']") is not None]
    assert len(heads) == g.number_of_edges() - 1  # every edge but the saved one has an arrow
    texts = [el.text for el in root.iter(f"{SVG_NS}text")]
    assert NASTY in texts  # escaped on the way out, intact on the way back
    # distinct fills per kind: grad_fn, accumulate_grad, leaf, non-leaf tensor, saved
    fills = {el.get("id"): el.find(f"{SVG_NS}rect").get("fill") for el in nodes}
    assert len({fills[v] for v in ("fn1", "acc1", "t2", "t1", "s1")}) == 5
    # the style table's colours: AccumulateGrad as the window draws it, and a tensor
    # with requires_grad=False is no green leaf
    assert fills["acc1"] == LIGHT.nodes["accumulate_grad"].fill
    assert fills["t2"] == LIGHT.nodes["leaf"].fill
    assert fills["t3"] == LIGHT.nodes["no_grad"].fill != LIGHT.nodes["leaf"].fill


def test_svg_uses_given_positions(tmp_path):
    g = graph()
    pos = {v: (100.0 * i, 50.0) for i, v in enumerate(g.nodes)}
    root = ET.fromstring(graph_to_svg(g, pos))
    rects = {
        el.get("id"): el.find(f"{SVG_NS}rect") for el in root.iter(f"{SVG_NS}g") if el.get("id")
    }
    for v, (x, _) in pos.items():
        r = rects[v]
        assert float(r.get("x")) + float(r.get("width")) / 2 == pytest.approx(x, abs=0.1)


def test_png_has_png_magic(tmp_path):
    pytest.importorskip("PySide6.QtSvg")
    path = tmp_path / "g.png"
    export_graph(graph(), path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_graphml_round_trips(tmp_path):
    g = graph()
    path = tmp_path / "g.graphml"
    export_graph(g, path)
    back = nx.read_graphml(path)
    assert set(back.nodes) == set(g.nodes)
    assert set(back.edges) == set(g.edges)
    assert json.loads(back.nodes["t3"]["vars"]) == [NASTY, "alias"]
    assert json.loads(back.nodes["fn2"]["saved"]) == {"exponent": 2}
    assert back.nodes["t2"]["is_leaf"] is True
    assert "statement" not in back.nodes["acc1"]  # None cannot be stored, so it is left out
    assert isinstance(back.nodes["fn1"]["x"], float)
    assert back.edges["fn2", "s1"]["kind"] == "saved"


def test_json_is_node_link_with_positions(tmp_path):
    g = graph()
    pos = layout(g)
    path = tmp_path / "g.json"
    export_graph(g, path, positions=pos)
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert [n["id"] for n in doc["nodes"]] == list(g.nodes)
    assert doc["nodes"][2]["saved"] == {"exponent": 2}
    assert {(e["source"], e["target"]) for e in doc["edges"]} == set(g.edges)
    assert {e["kind"] for e in doc["edges"]} == {"output", "grad", "saved", "leaf"}
    assert {v: tuple(p) for v, p in doc["positions"].items()} == pos


def test_dot_is_quoted_and_pinned(tmp_path):
    g = graph()
    path = tmp_path / "g.dot"
    export_graph(g, path)
    text = path.read_text(encoding="utf-8")
    assert text.startswith("digraph")
    assert text.count("pos=") == g.number_of_nodes()
    assert '\\"quoted\\"' in text and "\\\\ name" in text
    assert "pos=" not in graph_to_dot(g)  # no positions: Graphviz lays it out
    dot = shutil.which("dot")
    if dot:
        for source in (text, graph_to_dot(g)):
            res = subprocess.run(
                [dot, "-Tsvg"], input=source, capture_output=True, text=True, timeout=30
            )
            assert res.returncode == 0, res.stderr
            ET.fromstring(res.stdout)


def test_partial_positions_are_completed(tmp_path):
    g = graph()
    pos = layout(g)
    del pos["t3"]
    path = tmp_path / "g.json"
    export_graph(g, path, positions=pos)
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert set(doc["positions"]) == set(g.nodes)
    assert all(tuple(doc["positions"][v]) == p for v, p in pos.items())


def test_suffix_is_case_insensitive(tmp_path):
    path = tmp_path / "G.SVG"
    export_graph(graph(), path)
    ET.parse(path)


def test_empty_graph_exports(tmp_path):
    for suffix in (".svg", ".json", ".dot", ".graphml"):
        path = tmp_path / f"empty{suffix}"
        export_graph(nx.DiGraph(), path)
        assert path.stat().st_size > 0
    ET.parse(tmp_path / "empty.svg")


@pytest.mark.parametrize("name", ["graph.pdf", "graph", "graph.svg.bak"])
def test_unknown_suffix_is_a_clear_error(tmp_path, name):
    with pytest.raises(ValueError) as info:
        export_graph(graph(), tmp_path / name)
    message = str(info.value)
    for suffix in SUPPORTED_SUFFIXES:
        assert suffix in message
    assert not (tmp_path / name).exists()
