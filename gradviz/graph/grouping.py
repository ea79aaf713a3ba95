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

from gradviz.i18n import translate

from .records import EdgeKind, NodeKind

GROUP_PREFIX = "g:"
CHAIN_PREFIX = "c:"


def group_caption(attrs: Mapping[str, Any]) -> str:
    """The second line of a group box: its variables (a chain's), else how many nodes it hides."""
    names = [str(v) for v in attrs.get("vars") or []]
    if names:
        return ", ".join(names)
    count = int(attrs.get("count") or len(attrs.get("members") or []))
    # the window's language (the window and its layout worker size and draw it alike)
    text = translate("Grouping", "{n} node") if count == 1 else translate("Grouping", "{n} nodes")
    return text.format(n=count)


def sizing_attrs(attrs: Mapping[str, Any]) -> Mapping[str, Any]:
    """Attributes that give a group box its two lines (layout, canvas and the HTML view
    size it alike)."""
    if attrs.get("kind") != NodeKind.GROUP:
        return attrs
    return {**attrs, "vars": [group_caption(attrs)]}


def top_blocks(modules: Iterable[str], *, split_lists: bool = False) -> list[str]:
    """The first level of the module tree with more than one module (``layers.0``, ``layers.1``).

    "Collapse all" collapses these: collapsing the single outermost container
    (a ModuleList) would hide the whole model in one box.

    ``split_lists``: a container on that level whose children are numbered (GPT's
    ``blocks`` beside ``tok`` and ``lm_head``, a ResNet's ``layer1``, a U-Net's
    ``up``) gives its items (``blocks.0``, ``blocks.1``, ...) instead of one box for
    the whole list: a list's items run one after another, or far apart (a U-Net's
    up-convolutions between its decoder blocks), and one box for all of them hides
    the model's shape (or runs into itself).
    """
    names = sorted(set(modules))
    children: dict[str, list[str]] = {}
    for name in names:
        parent = name.rsplit(".", 1)[0] if "." in name else ""
        children.setdefault(parent, []).append(name)
    level = children.get("", [])
    while len(level) == 1 and children.get(level[0]):
        level = children[level[0]]
    if not split_lists:
        return level
    out: list[str] = []
    for name in level:
        kids = children.get(name, [])
        numbered = bool(kids) and all(k.rsplit(".", 1)[-1].isdigit() for k in kids)
        if len(kids) > 1 and numbered:
            out.extend(kids)
        else:
            out.append(name)
    return sorted(out, key=_natural)  # blocks.2 before blocks.10


def _natural(name: str) -> list[tuple[int, int | str]]:
    return [(1, int(p)) if p.isdigit() else (0, p) for p in name.split(".")]


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
        if data.get("kind") == NodeKind.SAVED and gu != u:
            continue  # a collapsed node's saved tensors hide with it
        if not out.has_edge(gu, gv):
            out.add_edge(gu, gv, **data)
    return out


def infer_blocks(graph: nx.DiGraph, blocks: Iterable[str]) -> dict[Any, str]:
    """Which of ``blocks`` each untagged node belongs to, read off the graph's shape.

    A snapshot taken without a recorder or a model tags only the parameters (their
    AccumulateGrad and tensor nodes) with a module; the ops between them carry
    none, so collapsing ``blocks.3`` would hide only its parameters. Here:

    * an op that reads a block's parameters (an edge to their AccumulateGrad, or
      to ops on those parameters alone) belongs to that block, when they all
      belong to one;
    * an op with such a node of block ``B`` both above it (towards the loss) and
      below it (towards the inputs) lies between two of ``B``'s ops: it is
      ``B``'s too. Found in one pass each way over a topological order, keeping
      only the nearest such op on each side, so the answer is cheap and never
      wrong, only sometimes missing (tied weights, as GPT-2's head and token
      embedding, put one block at both ends of the graph: no harm done);
    * an op between two different blocks of one list (a residual add after a
      block's last parameter) joins the block that produced its input.

    Only for display: nodes keep their own attributes. Returns {} for a graph
    whose ops already carry modules (a recorder's or a window session's) or that
    has a cycle.
    """
    chosen = set(blocks)
    if not chosen:
        return {}
    kind = {v: d.get("kind") for v, d in graph.nodes(data=True)}
    if any(kind[v] == NodeKind.GRAD_FN and d.get("module") for v, d in graph.nodes(data=True)):
        return {}
    try:
        order = list(nx.topological_sort(graph))
    except nx.NetworkXUnfeasible:
        return {}
    tagged: dict[Any, str] = {}
    for v, d in graph.nodes(data=True):
        owner = _owner(node_module(d), chosen)
        if owner is not None:
            tagged[v] = owner
    # ops on parameters alone (a weight's TBackward, its view or expand) belong to
    # their block, and so does the op reading them (a linear's MmBackward)
    pure: dict[Any, str] = {}
    seeds: dict[Any, str] = {}
    for v in reversed(order):
        if kind[v] != NodeKind.GRAD_FN:
            continue
        found: set[str] = set()
        only = True
        for w in graph.successors(v):
            b = tagged.get(w) or pure.get(w)
            if b is None:
                only = False
            else:
                found.add(b)
        if len(found) == 1:
            seeds[v] = next(iter(found))
            if only:
                pure[v] = seeds[v]
    if not seeds:
        return {}
    position = {v: i for i, v in enumerate(order)}
    at = {position[v]: b for v, b in seeds.items()}
    none_above, none_below = -1, len(order)
    above: dict[Any, int] = {}  # where the nearest seed above v is (v's own if it is one)
    for v in order:
        if v in seeds:
            above[v] = position[v]
        else:
            above[v] = max((above[u] for u in graph.predecessors(v)), default=none_above)
    below: dict[Any, int] = {}  # where the nearest seed below v is
    for v in reversed(order):
        if v in seeds:
            below[v] = position[v]
        else:
            below[v] = min((below[w] for w in graph.successors(v)), default=none_below)
    out: dict[Any, str] = {}
    for v in order:
        if v in tagged or kind[v] == NodeKind.SAVED:
            continue  # saved tensors follow the op that saved them (collapse_modules)
        if v in seeds:
            out[v] = seeds[v]
            continue
        seed_above, seed_below = above[v], below[v]
        if seed_above == none_above or seed_below == none_below:
            continue
        up, down = at[seed_above], at[seed_below]
        if up == down:
            out[v] = up
        elif kind[v] == NodeKind.GRAD_FN and _siblings(up, down):
            out[v] = down
    return out


def _siblings(a: str, b: str) -> bool:
    """Two numbered blocks of one list (``blocks.2``, ``blocks.3``)."""
    (pa, _, ia), (pb, _, ib) = a.rpartition("."), b.rpartition(".")
    return pa == pb and ia.isdigit() and ib.isdigit()


def collapse_modules(
    graph: nx.DiGraph, collapsed: Iterable[str], *, infer: bool = False
) -> nx.DiGraph:
    """Replace the nodes of each collapsed module (and its submodules) by one group node.

    ``infer``: untagged ops join the block they lie in (:func:`infer_blocks`), for
    graphs whose ops carry no module (a snapshot taken without a recorder).
    """
    collapsed = set(collapsed)
    if not collapsed:
        return graph.copy()
    inferred = infer_blocks(graph, collapsed) if infer else {}
    out = _collapse(graph, collapsed, inferred)
    if inferred and not nx.is_directed_acyclic_graph(out):
        # a block met at both ends of the graph (a weight tied between the input
        # embedding and the output head): its box would run into itself, so it keeps
        # its tagged nodes only
        looped = {
            v
            for part in nx.strongly_connected_components(out)
            if len(part) > 1
            for v in part
            if out.nodes[v].get("kind") == NodeKind.GROUP
        }
        bad = {
            str(g)[len(GROUP_PREFIX):]
            for g in looped
            if not _convex(graph, set(out.nodes[g].get("members") or ()))
        }
        inferred = {v: b for v, b in inferred.items() if b not in bad}
        out = _collapse(graph, collapsed, inferred)
    return out


def _convex(graph: nx.DiGraph, members: set[Any]) -> bool:
    """No path leaves ``members`` and comes back (one box for them makes no loop)."""
    todo = [w for v in members for w in graph.successors(v) if w not in members]
    seen = set(todo)
    while todo:
        v = todo.pop()
        for w in graph.successors(v):
            if w in members:
                return False
            if w not in seen:
                seen.add(w)
                todo.append(w)
    return True


def _collapse(graph: nx.DiGraph, collapsed: set[str], inferred: Mapping[Any, str]) -> nx.DiGraph:
    owner_of: dict[str, str] = {}
    members: dict[str, list[str]] = {}
    for node, data in graph.nodes(data=True):
        module = _owner(node_module(data), collapsed) or inferred.get(node)
        if module is None and data.get("kind") == NodeKind.SAVED:
            # saved tensors follow the grad_fn that saved them
            preds = list(graph.predecessors(node))
            if preds:
                module = _owner(node_module(graph.nodes[preds[0]]), collapsed) or inferred.get(
                    preds[0]
                )
        if module is not None:
            gid = GROUP_PREFIX + module
            owner_of[node] = gid
            members.setdefault(gid, []).append(node)
    groups = {
        gid: {
            "kind": NodeKind.GROUP.value,
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
        return [v for v in graph.successors(n) if graph.edges[n, v].get("kind") == EdgeKind.GRAD]

    def grad_pred(n: str) -> list[str]:
        return [u for u in graph.predecessors(n) if graph.edges[u, n].get("kind") == EdgeKind.GRAD]

    def linkable(n: str) -> bool:
        return graph.nodes[n].get("kind") == NodeKind.GRAD_FN

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
            members.extend(v for v in graph.successors(n) if graph.edges[n, v].get("kind") == EdgeKind.SAVED)
        for n in members:
            owner_of[n] = gid
        groups[gid] = {
            "kind": NodeKind.GROUP.value,
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
