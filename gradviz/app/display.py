"""The graph the canvas shows: modules and chains collapsed, then laid out, maybe off-thread.

:func:`build_display` is a pure function (the core's grouping and layout, no Qt)
so the window can run it on the GUI thread for small graphs and on a worker
for big ones (:class:`gradviz.ui.display.LayoutRunner`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import networkx as nx

from gradviz.graph.graphdata import graph_to_json
from gradviz.graph.grouping import (
    CHAIN_PREFIX,
    collapse_chains,
    collapse_modules,
    group_caption,
    sizing_attrs,
    top_blocks,
)
from gradviz.graph.layout import layout
from gradviz.graph.records import NodeKind

__all__ = [
    "ASYNC_LAYOUT_NODES",
    "Display",
    "build_display",
    "group_caption",
    "map_passes",
    "model_blocks",
    "sizing_attrs",
    "top_blocks",
]

ASYNC_LAYOUT_NODES = 500
"""Graphs with more nodes than this are grouped and laid out on a worker thread."""

Point = tuple[float, float]






def model_blocks(modules: Iterable[str] | Mapping[str, int]) -> list[str]:
    """The blocks "collapse all" gives (:func:`top_blocks`, lists split), each top-level
    name grouped on its own as if it were the only model.

    A script's modules are named after its variables (``model.layers.0``), and a second
    variable holding a module (the ``layer`` a TransformerEncoder copies, a loss module
    with weights) put ``model`` beside it on the first level, where top_blocks stopped:
    the whole model was one box. Each name on that level now goes down its own tree as
    a lone model does (``model.layers.0``, ``model.layers.1``), so ``gradviz export``,
    the window and the library's ``snapshot(model=...)`` (whose names have no variable
    in front) give one box per layer alike. Given the module tree's node counts
    (:func:`gradviz.graph.grouping.module_tree`), a top-level module stays one box when
    it holds less than half the nodes of the biggest (the copied ``layer``, a loss
    module: a box each of their parts would crowd the model's), or when it has nodes
    of its own (ops its forward runs outside its children), which its blocks would
    leave out."""
    counts = modules if isinstance(modules, Mapping) else None
    names = sorted(set(modules))
    roots = [n for n in names if "." not in n]
    if len(roots) < 2:
        return top_blocks(names, split_lists=True)
    biggest = max((counts.get(r, 0) for r in roots), default=0) if counts is not None else 0
    out: list[str] = []
    for root in roots:
        prefix = root + "."
        under = [n[len(prefix):] for n in names if n.startswith(prefix)]
        if counts is not None and under:
            children = sum(counts.get(prefix + n, 0) for n in under if "." not in n)
            if counts.get(root, 0) > children or 2 * counts.get(root, 0) < biggest:
                under = []  # the root runs ops of its own, or is not a model's size
        if under:
            out.extend(prefix + block for block in top_blocks(under, split_lists=True))
        else:
            out.append(root)
    return sorted(out, key=_natural)


def _natural(name: str) -> list[tuple[int, int | str]]:
    return [(1, int(p)) if p.isdigit() else (0, p) for p in name.split(".")]


def is_chain(node_id: str) -> bool:
    return str(node_id).startswith(CHAIN_PREFIX)


@dataclass
class Display:
    """What the canvas draws, and how it maps back to the captured graph."""

    _graph: nx.DiGraph | None
    data: dict[str, Any]
    positions: Mapping[str, Sequence[float]]
    owner: dict[str, str] = field(default_factory=dict)
    """Captured node id -> the group node that hides it."""
    groups: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Group node id -> its attributes (label, members, count, module)."""
    collapsed: frozenset[str] = frozenset()
    chains: bool = False
    seconds: float = 0.0
    _graph_factory: Callable[[], nx.DiGraph] | None = None

    @classmethod
    def plain(
        cls,
        data: Mapping[str, Any],
        positions: Mapping[str, Sequence[float]],
        graph_factory: Callable[[], nx.DiGraph],
        seconds: float = 0.0,
    ) -> Display:
        """The captured graph as laid out (by the kernel, or from its JSON data by
        :func:`lay_out_plain`); networkx only if someone asks."""
        return cls(None, dict(data), positions, seconds=seconds, _graph_factory=graph_factory)

    @property
    def graph(self) -> nx.DiGraph:
        if self._graph is None:
            assert self._graph_factory is not None
            self._graph = self._graph_factory()
        return self._graph

    def shown(self, node_id: str) -> str:
        """The id drawn for ``node_id``: itself, or the group that hides it."""
        return self.owner.get(node_id, node_id)


def lay_out_plain(
    raw_data: Mapping[str, Any], graph_factory: Callable[[], nx.DiGraph]
) -> Display:
    """The captured graph, ungrouped, laid out afresh from its JSON data: the layout reads
    the node and edge lists, so opening a 100k-node snapshot builds no networkx graph
    (0.34 s) before its first paint. ``graph_factory`` makes it when someone asks."""
    started = time.perf_counter()
    placed = layout(raw_data)
    return Display.plain(raw_data, placed, graph_factory, time.perf_counter() - started)


def build_display(
    raw: nx.DiGraph,
    raw_data: Mapping[str, Any] | None,
    collapsed: Iterable[str] = (),
    chains: bool = False,
    previous: Mapping[str, Sequence[float]] | None = None,
    positions: Mapping[str, Sequence[float]] | None = None,
) -> Display:
    """Group ``raw`` (collapsed modules, then linear chains) and lay it out.

    ``positions`` (the kernel's, for the ungrouped graph) are used as they are
    when they cover every node; ``previous`` makes the layout incremental.
    Never mutates ``raw``: a worker thread may run this while the GUI reads it.
    """
    started = time.perf_counter()
    collapsed = frozenset(collapsed)
    if not collapsed and not chains:
        data = dict(raw_data) if raw_data is not None else graph_to_json(raw)
        if positions is not None and all(n in positions for n in raw.nodes):
            placed: Mapping[str, Sequence[float]] = positions
        else:
            placed = layout(raw, _usable(previous, raw))
        return Display(raw, data, placed, seconds=time.perf_counter() - started)
    # ops join the collapsed block they lie in where only parameters carry a module
    # (a snapshot taken without a recorder), as in the HTML page
    graph = collapse_modules(raw, collapsed, infer=True) if collapsed else raw
    if chains:
        graph = collapse_chains(graph)
    groups = {n: dict(d) for n, d in graph.nodes(data=True) if d.get("kind") == NodeKind.GROUP}
    owner = {str(m): gid for gid, d in groups.items() for m in d.get("members") or []}
    sized = graph
    if groups:
        sized = graph.copy()
        for gid in groups:
            sized.nodes[gid]["vars"] = [group_caption(groups[gid])]
    placed = layout(sized, _usable(previous, graph))
    return Display(
        graph,
        graph_to_json(graph),
        placed,
        owner,
        groups,
        collapsed,
        chains,
        time.perf_counter() - started,
    )


def _usable(
    previous: Mapping[str, Sequence[float]] | None, graph: nx.DiGraph
) -> dict[str, tuple[float, float]] | None:
    if not previous:
        return None
    # The layout keeps what is still there and places what is new; it decides
    # itself when too much changed for the old picture to be worth keeping.
    return {n: (float(p[0]), float(p[1])) for n, p in previous.items() if n in graph}


def map_passes(passes: Sequence[Any], owner: Mapping[str, str]) -> list[Any]:
    """Backward passes with each step's node and targets replaced by the ids drawn for them."""
    if not owner:
        return list(passes)
    out = []
    for bpass in passes:
        steps = []
        for step in bpass.get("steps") or []:
            node = str(step.get("node"))
            targets = [
                owner.get(str(t), str(t)) if t is not None else None
                for t in step.get("targets") or []
            ]
            steps.append({**step, "node": owner.get(node, node), "targets": targets})
        out.append({**bpass, "steps": steps})
    return out
