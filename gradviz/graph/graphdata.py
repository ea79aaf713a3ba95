"""The graph as JSON data and back; torch-free so the window process never loads torch."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import networkx as nx

from gradviz.graph.gcpause import paused_gc


def graph_to_json(graph: nx.DiGraph) -> dict[str, Any]:
    """The documented node/edge lists (see docs/architecture.md)."""
    return {
        "nodes": [{"id": n, **data} for n, data in graph.nodes(data=True)],
        "edges": [{"source": u, "target": v, **data} for u, v, data in graph.edges(data=True)],
    }


def graph_from_json(data: Mapping[str, Any]) -> nx.DiGraph:
    """The networkx graph of ``graph_to_json``'s lists (the node and edge dicts are copied).

    Nodes go in by id, then take their attributes in place: ``add_node(**attrs)`` per node
    cost 1.1 s on a 100k-node snapshot, this about a quarter of it."""
    with paused_gc():  # 300k dicts at 100k nodes, none cyclic
        return _graph_from_json(data)


def _graph_from_json(data: Mapping[str, Any]) -> nx.DiGraph:
    graph = nx.DiGraph()
    nodes = data.get("nodes", [])
    graph.add_nodes_from([node["id"] for node in nodes])
    node_data = graph._node
    for node in nodes:
        attrs = node_data[node["id"]]
        attrs.update(node)
        del attrs["id"]
    graph.add_edges_from(
        [(e["source"], e["target"], e) for e in data.get("edges", [])]
    )
    for _u, _v, attrs in graph.edges(data=True):
        attrs.pop("source", None)
        attrs.pop("target", None)
    return graph
