"""The window's grouping (gradviz.app.display.build_display) on a snapshot whose ops carry
no module: a collapsed block hides its ops too, as in the HTML page."""

from __future__ import annotations

import networkx as nx
import pytest

pytest.importorskip("torch")

from gradviz.app.display import build_display  # noqa: E402
from gradviz.graph.graphdata import graph_from_json  # noqa: E402
from tests.test_html_view_routes import parameters_only_snapshot  # noqa: E402


def test_a_collapsed_block_hides_its_ops_when_only_parameters_carry_modules():
    snap = parameters_only_snapshot(blocks=3)
    raw = graph_from_json(snap["graph"])
    display = build_display(raw, snap["graph"], {"blocks.1"})
    group = display.groups["g:blocks.1"]
    labels = {raw.nodes[m].get("label") for m in group["members"]}
    assert {"NativeLayerNormBackward0", "AddmmBackward0", "ReluBackward0"} <= labels
    assert nx.is_directed_acyclic_graph(display.graph)
    assert all(n in display.positions for n in display.graph)
    # the picture is still the captured graph's: the loss reaches every parameter
    loss = next(n for n, d in display.graph.nodes(data=True) if d.get("label") == "SumBackward0")
    params = [n for n, d in display.graph.nodes(data=True) if d.get("kind") == "accumulate_grad"]
    assert params and all(nx.has_path(display.graph, loss, p) for p in params)
