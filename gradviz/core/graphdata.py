"""The graph as JSON data and back; torch-free so the window process never loads torch."""

from __future__ import annotations

from typing import Any

import networkx as nx


def graph_to_json(graph: nx.DiGraph) -> dict[str, Any]:
    """The documented node/edge lists (see docs/architecture.md)."""
    return {
        "nodes": [{"id": n, **data} for n, data in graph.nodes(data=True)],
        "edges": [{"source": u, "target": v, **data} for u, v, data in graph.edges(data=True)],
    }


def graph_from_json(data: dict[str, Any]) -> nx.DiGraph:
    graph = nx.DiGraph()
    for node in data.get("nodes", []):
        attrs = {k: v for k, v in node.items() if k != "id"}
        graph.add_node(node["id"], **attrs)
    for edge in data.get("edges", []):
        attrs = {k: v for k, v in edge.items() if k not in ("source", "target")}
        graph.add_edge(edge["source"], edge["target"], **attrs)
    return graph
