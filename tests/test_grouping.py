"""Grouping big graphs: by module, by linear chain, and search."""

from __future__ import annotations

import networkx as nx
import torch

import gradviz
from gradviz.core.capture import graph_from_json
from gradviz.core.grouping import (
    collapse_chains,
    collapse_modules,
    linear_chains,
    module_tree,
    search,
)
from gradviz.core.session import Session


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
