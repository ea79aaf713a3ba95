"""The interactive HTML view: one self-contained page for a snapshot.

:func:`render_html` turns a snapshot (``gradviz.snapshot(...)``, ``gradviz run
--json``, a ``.gradviz.json`` file) into one HTML document that needs no
network and no server: the script and the style are inlined, the graph is laid
out here by :mod:`gradviz.graph.layout` (the same layout the window and the SVG
export use) and embedded as positions. The page (``html_view.js``) draws it on
a 2D canvas with culling and a level of detail, so 10,000 nodes stay usable,
and replays the recorded backward passes step by step.

Grouping for big graphs follows the window's Modules panel: the model's top
blocks (``layers.0``, ``layers.1``, ...) collapse into one box each. Three
pictures are laid out here: everything expanded, every block collapsed, and
linear chains collapsed; a grouped one is offered only where it hides a real
share of the nodes, within a budget of the graph's own size (:class:`PageLimits`).
The page routes a picture's edges when it first shows it (a port of
:mod:`gradviz.graph.routing`), and makes a block's "open" picture (every block
collapsed but one) from the other two: its box replaced by its nodes as the
expanded picture places them, the boxes below moved down. So the page's size and
the time to build it grow with the graph, not with blocks x nodes, and cost about
one layout of the graph more than its SVG. A graph beyond
:attr:`PageLimits.max_elements` is refused with :class:`PageTooBig` before any
layout runs, and past :attr:`PageLimits.seconds` the remaining pictures are left
out (said in the page).

Everything a snapshot names (tensor, module and op names) comes from a user's
script: the page puts it in the DOM only as text (``textContent``) or draws it
on the canvas, and the embedded JSON escapes ``<``, ``>`` and ``&`` so no
name can close the ``<script>`` element that carries it.
"""

from __future__ import annotations

import hashlib
import html
import json
import math
import time
import unicodedata
from bisect import bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

import networkx as nx

from gradviz.app.display import model_blocks
from gradviz.graph.explain import explain
from gradviz.graph.graphdata import graph_from_json
from gradviz.graph.grouping import (
    CHAIN_PREFIX,
    GROUP_PREFIX,
    collapse_chains,
    collapse_modules,
    group_caption,
    linear_chains,
    module_tree,
)
from gradviz.graph.layout import DEFAULT_SPACING, layout_with_routes, node_lines, node_size
from gradviz.graph.records import int_or_none
from gradviz.graph.style import LIGHT, NODE_KINDS, corner_radius, style_key
from gradviz.graph.wire import sanitize
from gradviz.i18n import catalog, resolve_language
from gradviz.i18n.html_texts import page_messages, page_text

__all__ = [
    "PageLimits",
    "PageTooBig",
    "SnapshotShapeError",
    "notebook_html",
    "notebook_page",
    "page_model",
    "render_html",
]

_PILLS = ("leaf", "tensor", "no_grad")

DEFAULT_GROUPED_NODES = 1000
"""Graphs with more nodes than this open with their modules collapsed (where they have any)."""

_GRAD_EVENT_TEXT = {"zero": "zeroed", "set": "assigned", "none": "set to None"}

_t = page_text  # _t(language, "English {name}", name=...): the page's words (HtmlView)


def _count(n: int) -> str:
    return f"{n:,}"


class SnapshotShapeError(ValueError):
    """The snapshot lacks something the page needs, or has it in the wrong shape."""


class PageTooBig(ValueError):
    """The graph is too big for one page: building it would take minutes and hundreds of MB."""


@dataclass(frozen=True)
class PageLimits:
    """What one page may cost. Snapshots are shared between people, so a page is built
    from untrusted input: its size and build time must stay proportional to the graph.

    The unit is a graph element: a node or an edge laid out, routed and embedded once.
    """

    max_elements: int = 250_000
    """A graph with more nodes + edges than this is refused (:class:`PageTooBig`): about
    a 100,000-op chain, whose expanded picture alone takes some 15 s and 25 MB."""
    extra_factor: float = 2.0
    """The grouped pictures together lay out at most this many times the graph's elements..."""
    extra_floor: int = 20_000
    """...or this many elements, whichever is more (small graphs keep every picture)."""
    min_share: float = 0.1
    """A grouped picture is offered only when it hides at least this share of the nodes."""
    seconds: float = 30.0
    """Wall-clock budget: past it no further picture is laid out (noted in the page)."""


DEFAULT_LIMITS = PageLimits()


# --------------------------------------------------------------------------- decoding


@dataclass(frozen=True)
class _Step:
    node: str
    label: str
    grad_outputs: list[Any]
    grad_inputs: list[Any]
    targets: list[str | None]
    vars: list[str]


@dataclass(frozen=True)
class _Pass:
    root: list[str]
    retain_graph: bool
    kind: str
    error: str | None
    statement: int | None
    steps: list[_Step]
    leaf_grads: dict[str, Any]
    #: where it ran: the line of its backward() call and the innermost loop's iteration
    #: (``gradviz run`` records them; a library snapshot has neither)
    line: int | None = None
    iteration: int | None = None


def _as_list(value: Any, where: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise SnapshotShapeError(f"{where} should be a list, not {type(value).__name__}")
    return value


def _as_dict(value: Any, where: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise SnapshotShapeError(f"{where} should be an object, not {type(value).__name__}")
    return dict(value)


def _names(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [str(v) for v in value if v is not None]
    return []


def _decode_graph(
    snapshot: Mapping[str, Any], limits: PageLimits, language: str = "en"
) -> nx.DiGraph:
    data = _as_dict(snapshot.get("graph"), "snapshot['graph']")
    nodes = _as_list(data.get("nodes"), "graph['nodes']")
    edges = _as_list(data.get("edges"), "graph['edges']")
    _check_size(len(nodes), len(edges), limits, language)  # before any work on them
    for i, node in enumerate(nodes):
        if not isinstance(node, Mapping) or not isinstance(node.get("id"), str):
            raise SnapshotShapeError(f"graph['nodes'][{i}] has no string 'id'")
    known = {node["id"] for node in nodes}
    for i, edge in enumerate(edges):
        if not isinstance(edge, Mapping):
            raise SnapshotShapeError(f"graph['edges'][{i}] is not an object")
        for end in ("source", "target"):
            if edge.get(end) not in known:
                raise SnapshotShapeError(
                    f"graph['edges'][{i}] {end} {str(edge.get(end))[:60]!r} is not a node id"
                )
    return graph_from_json({"nodes": nodes, "edges": edges})


def _decode_passes(snapshot: Mapping[str, Any]) -> list[_Pass]:
    passes = []
    for i, raw in enumerate(_as_list(snapshot.get("backward_passes"), "backward_passes")):
        where = f"backward_passes[{i}]"
        raw = _as_dict(raw, where)
        steps = []
        for j, step in enumerate(_as_list(raw.get("steps"), f"{where}['steps']")):
            step = _as_dict(step, f"{where}['steps'][{j}]")
            targets = _as_list(step.get("targets"), f"{where}['steps'][{j}]['targets']")
            steps.append(
                _Step(
                    node=str(step.get("node")),
                    label=str(step.get("label") or step.get("node")),
                    grad_outputs=_as_list(step.get("grad_outputs"), f"{where} grad_outputs"),
                    grad_inputs=_as_list(step.get("grad_inputs"), f"{where} grad_inputs"),
                    targets=[None if t is None else str(t) for t in targets],
                    vars=_names(step.get("vars")),
                )
            )
        error = raw.get("error")
        passes.append(
            _Pass(
                root=_names(raw.get("root")),
                retain_graph=bool(raw.get("retain_graph")),
                kind=str(raw.get("kind") or "backward"),
                error=None if error is None else str(error),
                statement=int_or_none(raw.get("statement")),
                steps=steps,
                leaf_grads=_as_dict(raw.get("leaf_grads"), f"{where}['leaf_grads']"),
                line=int_or_none(raw.get("line")),
                iteration=int_or_none(raw.get("iteration")),
            )
        )
    return passes


def _foreign(graph: nx.DiGraph, p: _Pass) -> bool:
    """The pass ran over nodes the snapshot's graph does not hold: an earlier iteration's
    graph (a training loop's), freed before the graph the snapshot shows was built."""
    return any(s.node not in graph for s in p.steps)


def _recorded_graph(graph: nx.DiGraph, p: _Pass) -> nx.DiGraph:
    """The graph an earlier pass ran over, as far as it recorded it: a node per engine
    step (its op and the names it had), an edge from each step to the nodes it sent a
    gradient to, and, for the nodes the snapshot's graph holds too (a parameter's
    AccumulateGrad), their attributes there and the leaf tensor each one fills."""
    out = nx.DiGraph()
    labels = {s.node: s.label for s in p.steps}
    names = {s.node: s.vars for s in p.steps}

    def add(node: str) -> None:
        if node in out:
            return
        if node in graph:
            out.add_node(node, **{**graph.nodes[node], "new": False})
            return
        label = labels.get(node, "?")
        out.add_node(
            node,
            kind="accumulate_grad" if label == "AccumulateGrad" else "grad_fn",
            label=label,
            vars=list(names.get(node) or []),
            new=False,
        )

    for s in p.steps:
        add(s.node)
    for s in p.steps:
        for t in s.targets:
            if t is not None and t != s.node:
                add(t)
                out.add_edge(s.node, t, kind="grad", new=False)
    for node in list(out.nodes):
        if node in graph and out.nodes[node].get("kind") == "accumulate_grad":
            for leaf in graph.successors(node):
                if graph.nodes[leaf].get("kind") == "tensor":
                    add(leaf)
                    out.add_edge(node, leaf, **{**graph.edges[node, leaf], "new": False})
    return out


def _pass_views(
    graph: nx.DiGraph, passes: Sequence[_Pass], limits: PageLimits, started: float, language: str
) -> tuple[list[dict[str, Any]], dict[int, nx.DiGraph]]:
    """A picture of each earlier pass's own graph (see :func:`_foreign`), drawn from what
    it recorded, so the page replays it on what it ran over rather than on the last
    graph. Together they lay out at most the grouped pictures' budget; a pass past it, or
    past the page's time, is replayed on the last graph with a note saying so."""
    budget = max(float(limits.extra_floor), limits.extra_factor * _elements(graph))
    deadline = started + limits.seconds
    views: list[dict[str, Any]] = []
    graphs: dict[int, nx.DiGraph] = {}
    for k, p in enumerate(passes):
        if not p.steps or not _foreign(graph, p):
            continue
        own = _recorded_graph(graph, p)
        if _elements(own) > budget or time.monotonic() > deadline:
            continue
        budget -= _elements(own)
        title = _t(language, "graph of backward #{n}", n=k + 1)
        view, _ = _view(own, f"pass:{k}", title, language=language)
        view["pass"] = k
        views.append(view)
        graphs[k] = own
    return views, graphs


# --------------------------------------------------------------------------- grouping








def _style_of(attrs: Mapping[str, Any]) -> str:
    return style_key(attrs)


# --------------------------------------------------------------------------- geometry


def _r(value: float) -> float:
    return round(float(value), 1)


def _caption(attrs: Mapping[str, Any], language: str) -> str:
    """A group box's second line in ``language`` (:func:`group_caption`: its chain's
    variables, else how many nodes it hides)."""
    if attrs.get("vars"):
        return group_caption(attrs)
    n = int(attrs.get("count") or len(attrs.get("members") or []))
    return _t(language, "{n} node" if n == 1 else "{n} nodes", n=n)


def _measured(text: str) -> str:
    """``text`` as wide as it is drawn, in narrow characters: the layout counts characters,
    and a Hangul syllable takes two columns of the page's monospaced font."""
    return "".join(c + c if unicodedata.east_asian_width(c) in "WF" else c for c in text)


def _view(
    graph: nx.DiGraph,
    key: str,
    title: str,
    focus: str | None = None,
    given: Mapping[Any, tuple[float, float]] | None = None,
    language: str = "en",
) -> tuple[dict[str, Any], Mapping[Any, tuple[float, float]]]:
    """One picture: node boxes laid out by the core layout (or at ``given`` positions,
    which cover every node), and its edges by index (and the positions, unrounded).

    The page routes the edges itself (``html_view.js``, a port of
    :func:`gradviz.graph.routing.edge_geometries`) when the picture is first shown, so
    a picture costs its layout here and its boxes in the page, not its routes."""
    sized = graph
    if any(d.get("kind") == "group" for _, d in graph.nodes(data=True)):
        sized = graph.copy()
        for v, d in graph.nodes(data=True):
            if d.get("kind") == "group":
                sized.nodes[v]["vars"] = [_measured(_caption(d, language))]
    if given is not None:
        pos = given
        sizes = {v: node_size(d, DEFAULT_SPACING) for v, d in sized.nodes(data=True)}
    else:
        result = layout_with_routes(sized, spacing=DEFAULT_SPACING)
        pos, sizes = result.positions, result.sizes
    index = {v: i for i, v in enumerate(graph.nodes)}
    edges = [
        [index[u], index[v], str(attrs.get("kind", "grad"))]
        for u, v, attrs in graph.edges(data=True)
        if u != v
    ]
    view = {
        "key": key,
        "title": title,
        "focus": focus,
        "ids": [str(v) for v in graph.nodes],
        "x": [_r(pos[v][0]) for v in graph.nodes],
        "y": [_r(pos[v][1]) for v in graph.nodes],
        "w": [_r(sizes[v][0]) for v in graph.nodes],
        "h": [_r(sizes[v][1]) for v in graph.nodes],
        "edges": edges,
    }
    return view, pos


def _given_positions(
    snapshot: Mapping[str, Any], graph: nx.DiGraph
) -> dict[Any, tuple[float, float]] | None:
    """The positions a snapshot carries (the window's, or the kernel's in ``gradviz
    export``), when they place every node with finite numbers: the expanded picture is
    then drawn where they say, with no layout of its own. Else None."""
    saved = snapshot.get("positions")
    if not isinstance(saved, Mapping) or len(saved) < graph.number_of_nodes():
        return None
    out: dict[Any, tuple[float, float]] = {}
    for v in graph.nodes:
        p = saved.get(v)
        if not isinstance(p, list | tuple) or len(p) != 2:
            return None
        x, y = p
        if not all(isinstance(c, int | float) and not isinstance(c, bool) for c in (x, y)):
            return None
        if not (math.isfinite(x) and math.isfinite(y)):
            return None
        out[v] = (float(x), float(y))
    return out


def _elements(graph: nx.DiGraph) -> int:
    return graph.number_of_nodes() + graph.number_of_edges()


def _owners(collapsed: nx.DiGraph) -> dict[str, str]:
    """Captured node id -> the group that hides it."""
    return {
        m: g
        for g, d in collapsed.nodes(data=True)
        if d.get("kind") == "group"
        for m in d.get("members") or []
    }


def _open_one(
    graph: nx.DiGraph, collapsed: nx.DiGraph, owners: Mapping[str, str], gid: str
) -> nx.DiGraph:
    """``collapsed`` with group ``gid`` expanded back into its members.

    The same graph as ``collapse_modules(graph, blocks - {that block})`` (a test
    holds them equal), built from the members' own edges rather than by a new
    pass over the whole graph: a 96-block model needs 96 of these.
    """
    members = [m for m in collapsed.nodes[gid].get("members") or [] if m in graph]
    out = nx.DiGraph()
    for v, d in collapsed.nodes(data=True):
        if v == gid:
            for m in members:
                out.add_node(m, **graph.nodes[m])
        else:
            out.add_node(v, **d)
    for u, v, d in collapsed.edges(data=True):
        if u != gid and v != gid:
            out.add_edge(u, v, **d)
    for m in members:
        for u, v, d in (*graph.in_edges(m, data=True), *graph.out_edges(m, data=True)):
            gu, gv = owners.get(u, gid), owners.get(v, gid)
            gu, gv = u if gu == gid else gu, v if gv == gid else gv
            if gu == gv or out.has_edge(gu, gv):
                continue
            if d.get("kind") == "saved" and gu != u:
                continue  # a collapsed node's saved tensors hide with it
            out.add_edge(gu, gv, **d)
    return out


def _views(
    graph: nx.DiGraph,
    limits: PageLimits,
    started: float,
    given: Mapping[Any, tuple[float, float]] | None = None,
    language: str = "en",
) -> tuple[list[dict[str, Any]], dict[str, nx.DiGraph], list[str], list[str], Mapping[Any, Any]]:
    """The pictures laid out here, the grouped graphs they show, notes on what was left
    out, the blocks the page can open one at a time, and the expanded picture's positions.

    Laid out here: everything expanded, the model's blocks collapsed, linear chains
    collapsed. A grouped picture is offered only where it hides at least
    ``limits.min_share`` of the nodes, and the two together get a budget of
    ``limits.extra_factor`` times the graph's nodes + edges. A block's "open" picture
    (the collapsed picture with that block's nodes instead of its box) is made by the
    page when it is asked for, from the other two pictures' positions: the page holds
    no picture per block, so its size grows with the graph, not blocks x nodes.
    """
    deadline = started + limits.seconds
    n = graph.number_of_nodes()
    budget = max(float(limits.extra_floor), limits.extra_factor * _elements(graph))
    need = max(1, math.ceil(limits.min_share * n))
    notes: list[str] = []
    grouped: dict[str, nx.DiGraph] = {}
    plans: list[tuple[str, str]] = []  # (key, title) in the page's order

    # a list of blocks gives a box per block, and ops join the block they lie in
    # even where only the parameters carry a module (a snapshot without a recorder);
    # each variable's model is grouped on its own (a script's `model` beside `layer`)
    blocks = model_blocks(module_tree(graph))
    if blocks:
        candidate = collapse_modules(graph, blocks, infer=True)
        hidden = n - candidate.number_of_nodes()
        if hidden < need:
            counts = {"hidden": _count(hidden), "total": _count(n)}
            if len(blocks) == 1:
                notes.append(_t(language, "No collapsed-modules picture: collapsing the one top block would hide only {hidden} of {total} nodes.", **counts))
            else:
                notes.append(_t(language, "No collapsed-modules picture: collapsing the {blocks} top blocks would hide only {hidden} of {total} nodes.", blocks=_count(len(blocks)), **counts))
        elif _elements(candidate) > budget:
            notes.append(_t(language, "No collapsed-modules picture: it would make the page too big."))
        else:
            grouped["modules"] = candidate
            plans.append(("modules", _t(language, "Modules collapsed")))
            budget -= _elements(candidate)
    if linear_chains(graph):
        candidate = collapse_chains(graph)
        hidden = n - candidate.number_of_nodes()
        if hidden < need:
            notes.append(_t(language, "No collapsed-chains picture: it would hide only {hidden} of {total} nodes.", hidden=_count(hidden), total=_count(n)))
        elif _elements(candidate) > budget:
            notes.append(_t(language, "No collapsed-chains picture: it would make the page too big."))
        else:
            grouped["chains"] = candidate
            plans.append(("chains", _t(language, "Linear chains collapsed")))
            budget -= _elements(candidate)

    everything, positions = _view(
        graph, "all", _t(language, "Everything expanded"), given=given, language=language
    )
    views = [everything]
    late: list[str] = []
    for key, title in plans:
        if time.monotonic() > deadline:
            late.append(title)
            del grouped[key]
            continue
        views.append(_view(grouped[key], key, title, language=language)[0])
    if late:
        late_text = (
            "{n} grouped picture left out: building the page ran past its {seconds} s time budget."
            if len(late) == 1
            else "{n} grouped pictures left out: building the page ran past its {seconds} s time budget."
        )
        notes.append(_t(language, late_text, n=_count(len(late)), seconds=f"{limits.seconds:g}"))
    opened: list[str] = []
    collapsed = grouped.get("modules")
    if collapsed is not None:
        for block in blocks:
            gid = GROUP_PREFIX + block
            if gid in collapsed and len(collapsed.nodes[gid].get("members") or []) >= 2:
                opened.append(block)  # (opening a one-node box shows nothing new)
    return views, grouped, notes, opened, positions


def _groups(grouped: Mapping[str, nx.DiGraph]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for graph in grouped.values():
        for v, d in graph.nodes(data=True):
            if d.get("kind") != "group" or v in out:
                continue
            out[str(v)] = {
                "label": str(d.get("label", v)),
                "module": d.get("module"),
                "chain": str(v).startswith(CHAIN_PREFIX),
                "count": int(d.get("count") or 0),
                "members": [str(m) for m in d.get("members") or []],
            }
    return out


# --------------------------------------------------------------------------- backward timeline


def _offsets(passes: Sequence[_Pass]) -> list[int]:
    """Cursor position where each pass starts; a pass of n steps has n + 1 positions
    (ready, then after each step). The last entry is the position after every pass."""
    out, at = [], 0
    for p in passes:
        out.append(at)
        at += len(p.steps) + 1
    out.append(at)
    return out


def _scalar_of(value: Any) -> float | None:
    while isinstance(value, list) and len(value) == 1:
        value = value[0]
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float):
        return float(value)
    return None


def _norm_of(value: Any) -> float | None:
    total, stack = 0.0, [value]
    while stack:
        v = stack.pop()
        if isinstance(v, list):
            stack.extend(v)
        elif isinstance(v, int | float) and not isinstance(v, bool):
            total += float(v) * float(v)
        else:
            return None
    return math.sqrt(total)


def _plot_y(value: Any) -> tuple[float | None, bool]:
    """(the y of a plot point, whether it is a norm); None for a summary string."""
    y = _scalar_of(value)
    if y is not None:
        return (y if math.isfinite(y) else None), False
    y = _norm_of(value)
    return (y if y is not None and math.isfinite(y) else None), True


def _leaves(
    snapshot: Mapping[str, Any], graph: nx.DiGraph, passes: Sequence[_Pass], language: str = "en"
) -> list[dict[str, Any]]:
    """Each leaf's ``.grad`` along the cursor: where it changes, to what, and why (in
    ``language``; a plot point's ``short`` is the label under it: ``#2`` for a pass)."""
    offsets = _offsets(passes)
    end = offsets[-1]
    tensors = _as_dict(snapshot.get("tensors"), "snapshot['tensors']")
    events = _as_dict(snapshot.get("grad_events"), "snapshot['grad_events']")
    history = _as_dict(snapshot.get("grad_history"), "snapshot['grad_history']")

    acc_step: dict[tuple[int, str], int] = {}
    names: list[str] = []
    for k, p in enumerate(passes):
        for i, step in enumerate(p.steps):
            if step.label == "AccumulateGrad":
                # a pass recorded before its leaves were named still knows its node
                known = step.vars or (
                    _names(graph.nodes[step.node].get("vars")) if step.node in graph else []
                )
                for v in known:
                    acc_step.setdefault((k, v), i)
                    names.append(v)
        names.extend(str(n) for n in p.leaf_grads)
    names = list(dict.fromkeys([*map(str, events), *map(str, history), *names]))

    acc_node: dict[str, str] = {}
    tensor_node: dict[str, str] = {}
    for v, d in graph.nodes(data=True):
        kind = d.get("kind")
        for name in _names(d.get("vars")):
            if kind == "accumulate_grad":
                acc_node.setdefault(name, str(v))
            elif kind == "tensor" and d.get("is_leaf"):
                tensor_node.setdefault(name, str(v))

    def after_pass(k: int, name: str) -> int:
        i = acc_step.get((k, name))
        return offsets[k] + (i + 1 if i is not None else len(passes[k].steps))

    # the first pass after a statement is the first whose running maximum of statement
    # indices passes it: one bisection per event, not a walk over the passes
    highest: list[float] = []
    for p in passes:
        top = highest[-1] if highest else -math.inf
        highest.append(max(top, p.statement) if p.statement is not None else top)

    def before_statement(statement: Any) -> int:
        if isinstance(statement, int):
            k = bisect_right(highest, statement)
            if k < len(passes):
                return offsets[k]
        return end

    # which passes ran each leaf's AccumulateGrad, and which passes name it in leaf_grads
    ran_by_name: dict[str, list[int]] = {}
    for k, name in sorted(acc_step):
        ran_by_name.setdefault(name, []).append(k)
    graded: dict[str, list[int]] = {}
    for k, p in enumerate(passes):
        for name in p.leaf_grads:
            graded.setdefault(str(name), []).append(k)

    def label(what: int | str) -> str:
        """A change's label: the pass's title (the page compares them), or the event's."""
        if isinstance(what, int):
            return _t(language, "backward #{n}", n=what + 1)
        if what in _GRAD_EVENT_TEXT:
            return _t(language, _GRAD_EVENT_TEXT[what])
        return _t(language, "as saved") if what == "as saved" else what

    out = []
    for name in names:
        changes: list[tuple[int, Any, int | str]] = []  # (at, value, pass index or event)
        leaf_events = _as_list(events.get(name), f"grad_events[{name!r}]")
        if leaf_events:
            for e in leaf_events:
                if not isinstance(e, Mapping):
                    continue
                kind = str(e.get("kind") or "")
                index = int_or_none(e.get("pass_index"))
                if kind == "backward" and index is not None and 0 <= index < len(passes):
                    changes.append((after_pass(index, name), e.get("value"), index))
                elif kind != "backward":
                    at = before_statement(e.get("statement"))
                    changes.append((at, e.get("value"), kind))
        elif any(name in passes[k].leaf_grads for k in graded.get(name, ())):
            for k in graded[name]:
                p = passes[k]
                if name in p.leaf_grads:
                    changes.append((after_pass(k, name), p.leaf_grads[name], k))
        else:
            ran = ran_by_name.get(name, [])
            values = _as_list(history.get(name), f"grad_history[{name!r}]")
            for k, value in zip(ran, values):
                changes.append((after_pass(k, name), value, k))
        changes.sort(key=lambda c: c[0])
        info = tensors.get(name)
        if isinstance(info, Mapping) and "grad" in info:
            final = info.get("grad")
            if not changes or changes[-1][1] != final:
                changes.append((end, final, "as saved"))
        points = []
        for at, value, what in changes:
            if what == "as saved":
                continue
            y, norm = _plot_y(value)
            short = f"#{what + 1}" if isinstance(what, int) else label(what)
            points.append({"at": at, "y": y, "norm": norm, "label": label(what), "short": short})
        out.append(
            {
                "name": name,
                "tensor": tensor_node.get(name),
                "acc": acc_node.get(name),
                "changes": [[at, value, label(what)] for at, value, what in changes],
                "points": points,
            }
        )
    return out


def _statement_texts(snapshot: Mapping[str, Any]) -> dict[Any, dict[str, Any]]:
    """Statement index -> its line and source (``statements`` first, then ``results``),
    read once: looked up per pass, a long list made the page quadratic."""
    out: dict[Any, dict[str, Any]] = {}
    for source in ("statements", "results"):
        for s in _as_list(snapshot.get(source), f"snapshot[{source!r}]"):
            if isinstance(s, Mapping):
                index = s.get("index")
                if isinstance(index, int | float | str) and index not in out:
                    out[index] = {
                        "line": int_or_none(s.get("line")),
                        "source": str(s.get("source") or ""),
                    }
    return out


def _explanation(error: str | None, language: str) -> str | None:
    """gradviz's one sentence on a failed pass's PyTorch error (the window's and the CLI's,
    context ``Explain``), in ``language``; None for an error it does not know."""
    if not error:
        return None
    sentence = explain(error)
    return None if sentence is None else catalog(language).get(("Explain", sentence, ""), sentence)


def _pass_json(
    texts: Mapping[Any, dict[str, Any]],
    k: int,
    p: _Pass,
    language: str = "en",
    graph: nx.DiGraph | None = None,
    own: Mapping[int, nx.DiGraph] | None = None,
) -> dict[str, Any]:
    if p.kind in ("backward", "grad"):
        title = _t(language, "backward #{n}" if p.kind == "backward" else "grad #{n}", n=k + 1)
    else:
        title = f"{p.kind} #{k + 1}"
    return {
        "title": title,
        "kind": p.kind,
        "root": p.root,
        "retain_graph": p.retain_graph,
        "error": p.error,
        "explanation": _explanation(p.error, language),
        "statement": _where(texts, p),
        # ran over an earlier graph than the one drawn; "view": the picture of its own
        "foreign": graph is not None and bool(p.steps) and _foreign(graph, p),
        "view": f"pass:{k}" if own is not None and k in own else None,
        "iteration": p.iteration,
        "steps": [
            {
                "node": s.node,
                "label": s.label,
                "in": s.grad_outputs,
                "out": s.grad_inputs,
                "targets": s.targets,
                "vars": s.vars,
            }
            for s in p.steps
        ],
    }


# --------------------------------------------------------------------------- the page


def _where(texts: Mapping[Any, dict[str, Any]], p: _Pass) -> dict[str, Any] | None:
    """The pass's statement (its line and source); for a pass that ran inside it (a
    loop's body, a function) the line of the backward() call itself, not the whole loop."""
    st = None if p.statement is None else texts.get(p.statement)
    if st is None or p.line is None or st.get("line") is None or p.line == st["line"]:
        return st
    lines = str(st.get("source") or "").splitlines()
    at = p.line - st["line"]
    if not 0 <= at < len(lines):
        return st
    return {"line": p.line, "source": lines[at].strip(), "iteration": p.iteration}


def _check_size(n: int, e: int, limits: PageLimits, language: str = "en") -> None:
    if n + e > limits.max_elements:
        raise PageTooBig(
            _t(
                language,
                "the graph has {nodes} nodes and {edges} edges, more than an HTML page takes "
                "({limit} nodes + edges): building it would take minutes and hundreds of MB. "
                "Export it as .svg, .json or .graphml instead, or open it in the window "
                "(gradviz open)",
                nodes=_count(n),
                edges=_count(e),
                limit=_count(limits.max_elements),
            )
        )


def page_model(
    snapshot: Mapping[str, Any],
    *,
    title: str | None = None,
    limits: PageLimits | None = None,
    language: str | None = None,
) -> dict[str, Any]:
    """Everything the page embeds: the graph, its pictures, the passes and the leaves' history,
    and the page's words in ``language`` (see :func:`render_html`).

    Raises :class:`SnapshotShapeError` (a ValueError) when the snapshot lacks
    the graph or has it in the wrong shape, and :class:`PageTooBig` (a ValueError
    too) when the graph is beyond ``limits`` (:class:`PageLimits`), before any
    layout has run.
    """
    return _page_model(snapshot, title, limits, language)[0]


def _page_model(
    snapshot: Mapping[str, Any],
    title: str | None,
    limits: PageLimits | None,
    language: str | None = None,
) -> tuple[dict[str, Any], Mapping[Any, Any]]:
    started = time.monotonic()
    lang = resolve_language(language)
    limits = limits or DEFAULT_LIMITS
    if not isinstance(snapshot, Mapping):
        raise SnapshotShapeError(f"a snapshot is a JSON object, not {type(snapshot).__name__}")
    graph = _decode_graph(snapshot, limits, lang)
    passes = _decode_passes(snapshot)
    views, grouped, notes, opened, positions = _views(
        graph, limits, started, _given_positions(snapshot, graph), lang
    )
    groups = _groups(grouped)
    pass_views, own = _pass_views(graph, passes, limits, started, lang)
    views = views + pass_views
    shown: dict[str, dict[str, Any]] = {}
    for g in (graph, *grouped.values(), *own.values()):
        for v, d in g.nodes(data=True):
            if str(v) not in shown:
                if d.get("kind") == "group":
                    lines = node_lines({**d, "vars": [_caption(d, lang)]}, DEFAULT_SPACING)
                else:
                    lines = node_lines(d, DEFAULT_SPACING)
                    if lines[1:] == ["scalar"] and d.get("shape") == []:  # a 0-d tensor's shape
                        lines = [lines[0], _t(lang, "scalar")]
                shown[str(v)] = {"lines": lines, "style": _style_of(d)}
    nodes = {str(v): _node_attrs(d) for v, d in graph.nodes(data=True)}
    for g in own.values():  # the nodes of earlier passes' own graphs
        for v, d in g.nodes(data=True):
            nodes.setdefault(str(v), _node_attrs(d))
    # Big models open on their blocks, as a picture that can be read at once.
    default = 0
    if graph.number_of_nodes() > DEFAULT_GROUPED_NODES:
        keys = [v["key"] for v in views]
        if "modules" in keys:
            default = keys.index("modules")
    statements = [
        {"index": s.get("index"), "line": s.get("line"), "source": s.get("source")}
        for s in _as_list(snapshot.get("statements"), "snapshot['statements']")
        if isinstance(s, Mapping)
    ]
    texts = _statement_texts(snapshot)
    return {
        "title": title or _default_title(graph, lang),
        "language": lang,
        "messages": page_messages(lang),
        "device": snapshot.get("device"),
        "counts": {"nodes": graph.number_of_nodes(), "edges": graph.number_of_edges()},
        "style": {  # the one style table (gradviz.graph.style), light theme
            "nodes": {k: [LIGHT.node(k).fill, LIGHT.node(k).stroke] for k in NODE_KINDS},
            "legend": {k: _legend(lang, LIGHT.node(k).legend) for k in NODE_KINDS},
            "radius": {k: corner_radius(k, 0.0) for k in NODE_KINDS if k not in _PILLS},
            "edges": dict(LIGHT.edges),
            "background": LIGHT.background,
            "storage": list(LIGHT.storage),
            "backward": LIGHT.backward,
            "backward_fill": LIGHT.backward_fill,
            "backward_done_fill": LIGHT.backward_done_fill,
            "selection": LIGHT.selection,
            "line_height": DEFAULT_SPACING.line_height,
        },
        "nodes": nodes,
        "shown": shown,
        "groups": groups,
        "views": views,
        "open": opened,
        "default_view": default,
        "notes": notes,
        "passes": [_pass_json(texts, k, p, lang, graph, own) for k, p in enumerate(passes)],
        "offsets": _offsets(passes),
        "leaves": _leaves(snapshot, graph, passes, lang),
        "tensors": _as_dict(snapshot.get("tensors"), "snapshot['tensors']"),
        "statements": statements,
    }, positions


_UNSHOWN = frozenset({"id", "new"})  # "new": the last statement's glow, a window's thing
_FALSE_AS_ABSENT = frozenset({"freed", "is_leaf", "requires_grad"})


def _node_attrs(attrs: Mapping[str, Any]) -> dict[str, Any]:
    """A node's attributes as the page reads them: empty ones left out (the page reads
    a missing list, dict, flag or name as empty), a quarter of a model's page."""
    return {
        k: v
        for k, v in attrs.items()
        if k not in _UNSHOWN
        and v is not None
        and not (isinstance(v, list | dict) and not v)
        and not (v is False and k in _FALSE_AS_ABSENT)
    }


def _default_title(graph: nx.DiGraph, language: str) -> str:
    n = graph.number_of_nodes()
    text = "autograd graph, {n} node" if n == 1 else "autograd graph, {n} nodes"
    return _t(language, text, n=_count(n))


def _legend(language: str, text: str) -> str:
    """A kind of node as the window's legend names it (context ``Legend``)."""
    return catalog(language).get(("Legend", text, ""), text)


def _script_json(value: Any) -> str:
    """JSON that is safe inside ``<script type="application/json">``.

    ``<`` ``>`` ``&`` become \\u escapes, so neither ``</script>`` nor ``<!--``
    can appear; U+2028/2029 too, for older JavaScript parsers. NaN and
    infinities (a script's gradients may hold them) become strings.
    """
    try:
        text = json.dumps(value, allow_nan=False, ensure_ascii=False, separators=(",", ":"))
    except (ValueError, TypeError):
        text = json.dumps(
            sanitize(value), allow_nan=False, ensure_ascii=False, separators=(",", ":")
        )
    return (
        text.replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


def _asset(name: str) -> str:
    return resources.files("gradviz").joinpath(name).read_text(encoding="utf-8")


def _body(language: str) -> str:
    """The page's frame, its words in ``language`` (the script fills it in)."""

    def t(text: str) -> str:
        return html.escape(_t(language, text), quote=True)

    return f"""<div class="gvz-root" tabindex="-1">
<header class="gvz-bar">
  <span class="gvz-brand">gradviz</span>
  <span class="gvz-title"></span>
  <span class="gvz-tools">
    <button type="button" data-act="fit" title="{t("Fit the graph to the window (0)")}">{t("Fit")}</button>
    <button type="button" data-act="zoom-in" title="{t("Zoom in (+ or the mouse wheel)")}">+</button>
    <button type="button" data-act="zoom-out" title="{t("Zoom out (-)")}">&minus;</button>
    <select class="gvz-view" title="{t("Which picture of the graph: expanded, or grouped")}"></select>
    <input class="gvz-search" type="search" placeholder="{t("Find a node (/)")}" title="{t("Find a node: a name, an op, a module or a shape (Enter: the next one)")}" spellcheck="false">
  </span>
</header>
<div class="gvz-main">
  <div class="gvz-stage">
    <canvas class="gvz-canvas"></canvas>
    <div class="gvz-hud"></div>
    <div class="gvz-legend"></div>
  </div>
  <aside class="gvz-side">
    <section class="gvz-backward">
      <h2>{t("Backward passes")}</h2>
      <div class="gvz-controls">
        <button type="button" data-act="start" title="{t("Before the first pass (Home)")}">|&#x25C0;</button>
        <button type="button" data-act="pass-back" title="{t("Back to the end of the previous pass (Shift+Left, Page Up)")}">&#x25C0;&#x25C0;</button>
        <button type="button" data-act="step-back" title="{t("Back one step (Left)")}">&#x25C0;</button>
        <button type="button" data-act="step" title="{t("One engine step (Right)")}">&#x25B6;</button>
        <button type="button" data-act="pass" title="{t("To the end of this pass, then of the next (Shift+Right, Page Down)")}">&#x25B6;&#x25B6;</button>
        <button type="button" data-act="end" title="{t("After the last pass (End)")}">&#x25B6;|</button>
        <select class="gvz-pass" title="{t("Jump to a pass")}"></select>
      </div>
      <div class="gvz-status"></div>
    </section>
    <section class="gvz-inspector">
      <h2>{t("Inspector")}</h2>
      <div class="gvz-insp-body"></div>
    </section>
    <section class="gvz-grads">
      <h2>{t("Leaf .grad")}</h2>
      <div class="gvz-plot"></div>
      <div class="gvz-grad-table"></div>
    </section>
    <section class="gvz-modules">
      <h2>{t("Modules")}</h2>
      <div class="gvz-module-body"></div>
    </section>
  </aside>
</div>
<script type="application/json" class="gvz-data">__DATA__</script>
<script>__SCRIPT__</script>
</div>"""

# The page loads nothing: scripts and styles are inline and nothing else may be fetched.
_CSP = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:"


def render_html(
    snapshot: Mapping[str, Any],
    *,
    title: str | None = None,
    limits: PageLimits | None = None,
    language: str | None = None,
) -> str:
    """One self-contained HTML document showing ``snapshot`` interactively.

    Pan and zoom (drag, wheel), click a node for its inspector, step the
    recorded backward passes (buttons or the arrow keys) with the gradients on
    the edges, each leaf's ``.grad`` history as a plot, and the model's modules
    collapsed into boxes for big graphs. No network is needed or allowed.

    The page's size and build time are bounded by ``limits`` (:class:`PageLimits`):
    a graph beyond them raises :class:`PageTooBig` (a ValueError) before any work.

    ``language`` (``"ko"``, ``"en"``): the page's words; by default the language the
    program chose (``gradviz export`` and the window set it), else, in a notebook or a
    script, ``GRADVIZ_LANG`` then the locale, as the CLI reads them
    (:func:`gradviz.i18n.resolve_language`). Names from the snapshot stay as they are.
    """
    return _render(page_model(snapshot, title=title, limits=limits, language=language))


def _render(model: Mapping[str, Any]) -> str:
    language = str(model.get("language") or "en")
    body = (
        _body(language)
        .replace("__SCRIPT__", _asset("html_view.js"))
        .replace("__DATA__", _script_json(model))
    )
    return (
        f'<!DOCTYPE html>\n<html lang="{language}">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{html.escape(model['title'])}</title>\n"
        f"<style>\n{_asset('html_view.css')}</style>\n</head>\n<body>\n{body}\n</body>\n</html>\n"
    )


def notebook_html(
    snapshot: Mapping[str, Any],
    *,
    height: int = 640,
    title: str | None = None,
    limits: PageLimits | None = None,
    language: str | None = None,
) -> str:
    """The page in an ``<iframe srcdoc>``, for notebooks (``_repr_html_``).

    The frame keeps the page's script, style and keyboard handling away from
    the notebook's own, and shows the same page in Jupyter, VS Code and Colab.
    ``language``: as for :func:`render_html`.
    """
    return notebook_page(
        snapshot, height=height, title=title, limits=limits, language=language
    )[0]


def notebook_page(
    snapshot: Mapping[str, Any],
    *,
    height: int = 640,
    title: str | None = None,
    limits: PageLimits | None = None,
    language: str | None = None,
) -> tuple[str, dict[Any, tuple[float, float]]]:
    """:func:`notebook_html` and the positions its expanded picture was laid out at, so a
    notebook's SVG of the same display (``Snapshot._repr_mimebundle_``) needs no layout
    of its own."""
    model, positions = _page_model(snapshot, title, limits, language)
    page = _render(model)
    lang = str(model["language"])
    # An untrusted notebook's output is sanitized (JupyterLab strips the iframe and any
    # <style>): the note below stays and says why the box is empty; a trusted output's
    # <style> hides it. The class is the page's own, so two outputs never collide.
    mark = "gvz-untrusted-" + hashlib.sha1(page.encode("utf-8")).hexdigest()[:12]
    frame = (
        f"<style>.{mark}{{display:none}}</style>"
        f'<div class="{mark}">{html.escape(_t(lang, UNTRUSTED_NOTE))}</div>'
        f'<iframe srcdoc="{html.escape(page, quote=True)}" '
        f'style="width:100%;height:{int(height)}px;border:1px solid #dee2e6;border-radius:4px" '
        f'sandbox="allow-scripts" title="{html.escape(_t(lang, "gradviz interactive graph"))}">'
        "</iframe>"
    )
    return frame, {str(v): (float(x), float(y)) for v, (x, y) in positions.items()}


#: shown where a notebook hides the interactive graph (an untrusted output), in English;
#: the output says it in the page's language
UNTRUSTED_NOTE = (
    "gradviz: this notebook is not trusted, so its interactive graph is hidden. Trust the "
    "notebook (File > Trust Notebook) or run the cell again to see it; the static picture "
    "is in the same output as SVG."
)
