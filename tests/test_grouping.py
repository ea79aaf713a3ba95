"""Grouping big graphs: by module, by linear chain, and search."""

from __future__ import annotations

import networkx as nx
import torch

import gradviz
from gradviz.core.capture import graph_from_json
from gradviz.core.session import Session
from gradviz.graph.grouping import (
    collapse_chains,
    collapse_modules,
    linear_chains,
    module_tree,
    search,
)


def model_graph() -> nx.DiGraph:
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(3, 4), torch.nn.ReLU(),
        torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Tanh()), torch.nn.Linear(4, 1),
    )
    with gradviz.record(model) as rec:
        loss = model(torch.randn(2, 3)).sum()
    return graph_from_json(gradviz.snapshot(loss, model=model, recorder=rec)["graph"])


def test_module_tree_counts_nested_modules():
    tree = module_tree(model_graph())
    assert {"0", "2", "2.0", "3"} <= set(tree)
    assert tree["2"] >= tree["2.0"]


def test_collapse_module_hides_members_and_keeps_connectivity():
    g = model_graph()
    c = collapse_modules(g, {"2"})
    group = c.nodes["g:2"]
    assert group["kind"] == "group" and group["count"] >= 3
    assert not any(n in c for n in group["members"])
    # the loss still reaches the first layer's weights through the group
    loss = [n for n, d in c.nodes(data=True) if d.get("label") == "loss"][0]
    w0 = [n for n, d in c.nodes(data=True) if d.get("label") == "0.weight"][0]
    assert nx.has_path(c, loss, w0)
    assert nx.is_directed_acyclic_graph(c)


def test_collapse_nothing_is_identity():
    g = model_graph()
    assert set(collapse_modules(g, set()).nodes) == set(g.nodes)


def test_linear_chain_collapses_to_one_node():
    s = Session("x = torch.tensor(1., requires_grad=True)\ny = x\nfor i in range(2000):\n    y = y.sin()\n")
    s.run_to_end()
    chains = linear_chains(s.graph)
    assert len(chains) == 1 and len(chains[0]) >= 1999
    c = collapse_chains(s.graph)
    assert c.number_of_nodes() < 10
    group = [d for _, d in c.nodes(data=True) if d["kind"] == "group"][0]
    assert "SinBackward0" in group["label"]


def test_search_by_name_op_and_shape():
    g = model_graph()
    assert search(g, "2.0.weight")
    assert all("Addmm" in g.nodes[n]["label"] for n in search(g, "addmm"))
    assert search(g, "4x3")  # the first layer's weight shape
    assert search(g, "") == []


def test_top_blocks_can_split_lists_of_blocks():
    from gradviz.graph.grouping import top_blocks

    tree = ["tok", "blocks", "blocks.0", "blocks.0.fc", "blocks.1", "blocks.1.fc", "blocks.10",
            "blocks.10.fc", "head"]
    assert top_blocks(tree) == ["blocks", "head", "tok"]  # the window's Modules panel, as before
    assert top_blocks(tree, split_lists=True) == ["blocks.0", "blocks.1", "blocks.10", "head", "tok"]


def test_ops_join_the_block_they_lie_in_when_only_parameters_carry_modules():
    """A snapshot without a recorder: ops inferred into their blocks, and a weight tied
    between the embedding and the head (one block at both ends) keeps its parameters
    only, so no box runs into itself."""
    from gradviz.graph.grouping import infer_blocks, top_blocks
    from tests.test_html_view_routes import parameters_only_snapshot

    g = graph_from_json(parameters_only_snapshot(blocks=3)["graph"])
    assert not any(d.get("module") for _, d in g.nodes(data=True) if d.get("kind") == "grad_fn")
    blocks = top_blocks(module_tree(g), split_lists=True)
    assert blocks == ["blocks.0", "blocks.1", "blocks.2", "tok"]
    inferred = infer_blocks(g, blocks)
    for b in ("blocks.0", "blocks.1", "blocks.2"):
        labels = {g.nodes[v]["label"] for v, owner in inferred.items() if owner == b}
        assert {"NativeLayerNormBackward0", "AddmmBackward0", "ReluBackward0"} <= labels, labels
    c = collapse_modules(g, blocks, infer=True)
    assert nx.is_directed_acyclic_graph(c)
    tok = c.nodes["g:tok"]["members"]
    assert all(g.nodes[m]["kind"] in ("tensor", "accumulate_grad") for m in tok)
    assert c.number_of_nodes() < g.number_of_nodes() / 3
    # without inference (or with a recorder's tags) nothing changes
    assert set(collapse_modules(g, blocks).nodes) != set(c.nodes)
    recorded = model_graph()
    assert infer_blocks(recorded, top_blocks(module_tree(recorded), split_lists=True)) == {}


def test_a_group_box_counts_its_nodes_in_the_windows_language():
    """The window draws (and its layout sizes) a collapsed box's second line in the
    language it speaks: 'n nodes' in English, '노드 n개' in Korean (issue 24)."""
    from gradviz import i18n
    from gradviz.graph.grouping import group_caption

    before = i18n.current_language()
    try:
        i18n.set_language("en")
        assert group_caption({"count": 84}) == "84 nodes"
        assert group_caption({"count": 1}) == "1 node"
        i18n.set_language("ko")
        assert group_caption({"count": 84}) == "노드 84개"
        assert group_caption({"vars": ["h"], "count": 3}) == "h"  # a chain names its variable
    finally:
        i18n.set_language(before)


def test_a_zero_d_tensor_reads_scalar_in_the_programs_language():
    from gradviz import i18n
    from gradviz.graph.fmt import fmt_shape

    before = i18n.current_language()
    try:
        i18n.set_language("en")
        assert fmt_shape([]) == "scalar" and fmt_shape([2, 3]) == "2\u00d73"
        i18n.set_language("ko")
        assert fmt_shape([]) == "스칼라" and fmt_shape([2, 3]) == "2\u00d73"
    finally:
        i18n.set_language(before)
