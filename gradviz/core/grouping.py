"""Make big graphs readable: collapse by module, collapse linear chains, search.

All functions are pure: they take the captured graph and return a new one in
which a group stands for many nodes. A group node has ``kind="group"``, a
``label``, ``members`` (the node ids it hides) and ``count``; edges into and
out of the members become edges of the group (deduplicated, never self-loops).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import networkx as nx

GROUP_PREFIX = "g:"
CHAIN_PREFIX = "c:"


def group_caption(attrs: Mapping[str, Any]) -> str:
    """The second line of a group box: its variables (a chain's), else how many nodes it hides."""
    names = [str(v) for v in attrs.get("vars") or []]
    if names:
        return ", ".join(names)
    count = int(attrs.get("count") or len(attrs.get("members") or []))
    return f"{count} node" + ("" if count == 1 else "s")


def sizing_attrs(attrs: Mapping[str, Any]) -> Mapping[str, Any]:
    """Attributes that give a group box its two lines (layout, canvas and the HTML view
    size it alike)."""
    if attrs.get("kind") != "group":
        return attrs
    return {**attrs, "vars": [group_caption(attrs)]}


def top_blocks(modules: Iterable[str]) -> list[str]:
    """The first level of the module tree with more than one module (``layers.0``, ``layers.1``).

    "Collapse all" collapses these: collapsing the single outermost container
    (a ModuleList) would hide the whole model in one box.
    """
    names = sorted(set(modules))
    children: dict[str, list[str]] = {}
    for name in names:
        parent = name.rsplit(".", 1)[0] if "." in name else ""
        children.setdefault(parent, []).append(name)
    level = children.get("", [])
    while len(level) == 1 and children.get(level[0]):
        level = children[level[0]]
    return level


def node_module(data: Mapping[str, Any]) -> str | None:
    """The module a node belongs to: its ``module`` attribute, or its parameter's prefix."""
    module = data.get("module")
    if module:
        return str(module)
    return None


def module_tree(graph: nx.DiGraph) -> dict[str, int]:
    """Every module path (and each of its ancestors) -> number of nodes under it."""
    return module_tree_of_nodes(data for _, data in graph.nodes(data=True))


def module_tree_of_nodes(nodes: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """:func:`module_tree` straight from node dicts (the JSON form): no graph needed."""
    counts: dict[str, int] = {}
    for data in nodes:
        module = node_module(data)
        if not module:
            continue
        parts = module.split(".")
        for i in range(1, len(parts) + 1):
            prefix = ".".join(parts[:i])
            counts[prefix] = counts.get(prefix, 0) + 1
    return counts


def _owner(module: str | None, collapsed: set[str]) -> str | None:
    """The outermost collapsed module containing ``module``."""
    if not module:
        return None
    parts = module.split(".")
    for i in range(1, len(parts) + 1):
        prefix = ".".join(parts[:i])
        if prefix in collapsed:
            return prefix
    return None


def _contract(graph: nx.DiGraph, owner_of: Mapping[str, str], groups: Mapping[str, dict[str, Any]]) -> nx.DiGraph:
    out = nx.DiGraph()
    for node, data in graph.nodes(data=True):
        group = owner_of.get(node)
        if group is None:
            out.add_node(node, **data)
        elif group not in out:
            out.add_node(group, **groups[group])
    for u, v, data in graph.edges(data=True):
        gu, gv = owner_of.get(u, u), owner_of.get(v, v)
        if gu == gv:
            continue
        if data.get("kind") == "saved" and gu != u:
            continue  # a collapsed node's saved tensors hide with it
        if not out.has_edge(gu, gv):
            out.add_edge(gu, gv, **data)
    return out


def collapse_modules(graph: nx.DiGraph, collapsed: Iterable[str]) -> nx.DiGraph:
    """Replace the nodes of each collapsed module (and its submodules) by one group node."""
    collapsed = set(collapsed)
    if not collapsed:
        return graph.copy()
    owner_of: dict[str, str] = {}
    members: dict[str, list[str]] = {}
    for node, data in graph.nodes(data=True):
        module = _owner(node_module(data), collapsed)
        if module is None and data.get("kind") == "saved":
            # saved tensors follow the grad_fn that saved them
            preds = list(graph.predecessors(node))
            if preds:
                module = _owner(node_module(graph.nodes[preds[0]]), collapsed)
        if module is not None:
            gid = GROUP_PREFIX + module
            owner_of[node] = gid
            members.setdefault(gid, []).append(node)
    groups = {
        gid: {
            "kind": "group",
            "label": gid[len(GROUP_PREFIX):],
            "vars": [],
            "members": nodes,
            "count": len(nodes),
            "module": gid[len(GROUP_PREFIX):],
            "new": any(graph.nodes[n].get("new") for n in nodes),
        }
        for gid, nodes in members.items()
    }
    return _contract(graph, owner_of, groups)


def linear_chains(graph: nx.DiGraph, min_length: int = 3) -> list[list[str]]:
    """Maximal runs of grad_fn nodes joined one to one (ignoring saved/output edges).

    Found iteratively in one pass; a 10,000-op chain gives one run.
    """

    def grad_succ(n: str) -> list[str]:
        return [v for v in graph.successors(n) if graph.edges[n, v].get("kind") == "grad"]

    def grad_pred(n: str) -> list[str]:
        return [u for u in graph.predecessors(n) if graph.edges[u, n].get("kind") == "grad"]

    def linkable(n: str) -> bool:
        return graph.nodes[n].get("kind") == "grad_fn"

    chains: list[list[str]] = []
    seen: set[str] = set()
    for node in graph.nodes:
        if node in seen or not linkable(node):
            continue
        preds = grad_pred(node)
        # start of a run: the predecessor cannot extend into us
        if len(preds) == 1 and linkable(preds[0]) and len(grad_succ(preds[0])) == 1:
            continue
        run = [node]
        seen.add(node)
        current = node
        while True:
            succ = grad_succ(current)
            if len(succ) != 1:
                break
            nxt = succ[0]
            if nxt in seen or not linkable(nxt) or len(grad_pred(nxt)) != 1:
                break
            run.append(nxt)
            seen.add(nxt)
            current = nxt
        if len(run) >= min_length:
            chains.append(run)
    return chains


def collapse_chains(graph: nx.DiGraph, min_length: int = 3) -> nx.DiGraph:
    """Replace each linear chain by one group node labelled with its ops."""
    owner_of: dict[str, str] = {}
    groups: dict[str, dict[str, Any]] = {}
    for run in linear_chains(graph, min_length):
        gid = f"{CHAIN_PREFIX}{run[0]}"
        labels = [graph.nodes[n].get("label", "") for n in run]
        distinct = list(dict.fromkeys(labels))
        summary = ", ".join(distinct[:3]) + (", ..." if len(distinct) > 3 else "")
        members = list(run)
        for n in run:
            members.extend(v for v in graph.successors(n) if graph.edges[n, v].get("kind") == "saved")
        for n in members:
            owner_of[n] = gid
        groups[gid] = {
            "kind": "group",
            "label": f"{len(run)} ops: {summary}",
            "vars": sorted({v for n in run for v in graph.nodes[n].get("vars", [])})[:4],
            "members": members,
            "count": len(members),
            "new": any(graph.nodes[n].get("new") for n in members),
        }
    return _contract(graph, owner_of, groups)


def search(graph: nx.DiGraph, text: str, limit: int = 200) -> list[str]:
    """Node ids whose label, variable names, op, module or shape contain ``text``."""
    needle = text.strip().lower()
    if not needle:
        return []
    hits: list[str] = []
    for node, data in graph.nodes(data=True):
        shape = data.get("shape")
        fields = [
            str(node),
            str(data.get("label", "")),
            " ".join(data.get("vars", []) or []),
            str(data.get("module", "") or ""),
            "x".join(str(s) for s in shape) if shape else "",
            str(list(shape)) if shape is not None else "",
        ]
        if any(needle in f.lower() for f in fields):
            hits.append(node)
            if len(hits) >= limit:
                break
    return hits
