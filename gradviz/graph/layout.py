"""Layered (Sugiyama-style) layout of an autograd graph: graph -> {node: (x, y)}.

The canvas, the exporters and the benchmarks all need the same positions, so the
layout lives in the Qt-free core and is a pure function of its input: the same
graph (same nodes, attributes and insertion order) always gives the same
coordinates.  Nothing here iterates a ``set`` or depends on string hashing.

Coordinates are Qt scene coordinates: y grows downward, so the gradient sources
(the loss tensor) sit at the top and the leaf tensors at the bottom.  A position
is the *centre* of the node's box; :func:`node_size` gives the box so that the
canvas draws exactly the boxes the layout kept apart.

The pipeline for a full layout, per weakly connected component:

1. layer assignment by longest path (Kahn's algorithm, iterative: a 10,000-op
   chain must not hit the recursion limit), after removing the back edges of
   any cycle so a malformed graph cannot hang us; sources that only feed a
   deeper node (a variable's tensor node next to its grad_fn) are pulled down;
2. dummy nodes on edges that span several layers (within a budget, so a leaf
   used by every op of a long chain cannot create millions of them);
3. crossing reduction: DFS initial order, then alternating barycenter sweeps,
   keeping the ordering with the fewest crossings (counted vectorised);
4. x coordinates: alternating sweeps that pull every node towards the mean of
   its neighbours, solved per layer as a weighted isotonic regression
   (pool-adjacent-violators), which keeps the layer order and the minimum
   gaps, never overlaps and lets long chains collapse to one straight column.

Saved-tensor nodes take no layer of their own: they sit to the right of the
grad_fn that saved them, inside that grad_fn's reserved width (which also keeps
a stale saved tensor's "stale v1\u2260v0" tab clear).  Components are laid out side
by side, in the order of their first node; tensors without any edge follow in a
grid of short rows, the picture about as wide as a canvas, those that share a
storage next to each other.

Incremental mode (``previous`` given) keeps every old node exactly where it
was, so the picture does not jump when a statement adds a few nodes, and puts
the new nodes one layer above or below their placed neighbours in the nearest
free slot; new tensors without edges join the grid.  The one exception is an
in-place op's new grad_fn, which goes between a variable's tensor node and the
op that made it: the tensor node moves up a layer to make room.  When most of
the graph went and the rest lies scattered, too much is new, or the layering
cannot be honoured, it falls back to a full layout.

:class:`IncrementalLayout` keeps a layout between a kernel's steps, and where
each node was shown: a step back replays the script from the start, and the
nodes that come back take their places again.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections import deque
from collections.abc import Callable, Collection, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from operator import mul
from typing import Any, TypeAlias, cast

import networkx as nx
import numpy as np

from gradviz.graph.gcpause import paused_gc

from .fmt import fmt_shape
from .graphdata import graph_from_json
from .records import TENSOR_KINDS, EdgeKind, NodeKind

#: the kinds hot loops compare against, bound once (an Enum member lookup costs ~100 ns
#: on Python 3.11, a module global ~10)
_TENSOR, _SAVED, _SAVED_EDGE = NodeKind.TENSOR, NodeKind.SAVED, EdgeKind.SAVED

__all__ = [
    "DEFAULT_SPACING",
    "LayoutResult",
    "LayoutSpacing",
    "layout",
    "text_key",
    "layout_with_routes",
    "node_lines",
    "node_size",
    "tag_extent",
]

Point = tuple[float, float]


@dataclass(frozen=True)
class LayoutSpacing:
    """Every length the layout uses, in scene units (pixels at zoom 1).

    The canvas and the exporters read the same object so a box drawn by either
    has exactly the size the layout reserved for it.
    """

    char_width: float = 7.5
    """Advance of one character of the node font (monospace, about 12 px)."""
    line_height: float = 16.0
    pad_x: float = 10.0
    pad_y: float = 6.0
    min_width: float = 56.0
    max_chars: int = 40
    """Longer text lines are cut with an ellipsis so one odd name cannot widen a layer."""
    node_gap: float = 24.0
    """Minimum horizontal gap between two boxes of one layer."""
    dummy_gap: float = 8.0
    """Minimum gap between two bends of long edges (they are only lines)."""
    dummy_width: float = 4.0
    layer_gap: float = 40.0
    """Vertical gap between two layers of boxes."""
    saved_gap: float = 10.0
    """Gap between a grad_fn and the saved tensors to its right."""
    component_gap: float = 64.0
    margin: float = 24.0
    grid_gap: float = 32.0
    """Horizontal gap between two tensors of the grid of tensors without edges (their
    storage badges poke out on the right)."""
    aspect: float = 4 / 3
    """Width / height the grid of tensors without edges aims the whole picture at (a
    typical canvas): rows of a few tensors, not one long row that fitting shrinks."""
    tab_char_width: float = 6.0
    """Advance of one character of the small italic tab font (the canvas's 9 pt tabs,
    "stale v1\u2260v0" on a saved tensor): its width is kept clear like the box's."""

    @property
    def row_height(self) -> float:
        """Height of a regular (two-line) node; every layer is this tall."""
        return 2 * self.line_height + 2 * self.pad_y

    @property
    def saved_height(self) -> float:
        """Height of the small one-line saved-tensor box."""
        return self.line_height + 2 * self.pad_y

    @property
    def pitch(self) -> float:
        """Distance between the centres of two consecutive layers."""
        return self.row_height + self.layer_gap


DEFAULT_SPACING = LayoutSpacing()


@dataclass
class LayoutResult:
    """Positions plus what a renderer needs to draw long edges nicely.

    ``routes`` maps an edge ``(u, v)`` to the bend points between its ends for
    edges that span several layers (the positions of their dummy nodes); edges
    not in it are drawn straight.  Incremental layouts have no routes.
    """

    positions: dict[Hashable, Point]
    routes: dict[tuple[Hashable, Hashable], list[Point]] = field(default_factory=dict)
    sizes: dict[Hashable, tuple[float, float]] = field(default_factory=dict)
    incremental: bool = False


# --------------------------------------------------------------------------- node boxes


def _clip(text: str, max_chars: int) -> str:
    """Cut a line to ``max_chars`` characters, marking the cut with an ellipsis."""
    if len(text) <= max_chars:
        return text
    return text[: max(1, max_chars - 1)] + "\u2026"


shape_text = fmt_shape


def node_lines(attrs: Mapping[str, Any], spacing: LayoutSpacing | None = None) -> list[str]:
    """The text lines drawn in a node: its label, then its variable names.

    A variable name equal to the label is not repeated (a tensor's label *is*
    its name); a tensor with nothing else to say shows its shape instead, so
    every regular node reads two lines.  Saved tensors are small one-liners.
    """
    sp = spacing or DEFAULT_SPACING
    kind = attrs.get("kind")
    label = attrs.get("label")
    label = str(label) if label not in (None, "") else str(kind or "?")
    if kind == _SAVED:
        return [_clip(label, sp.max_chars)]
    raw = attrs.get("vars") or []
    if isinstance(raw, str):
        raw = [raw]
    extra = [str(v) for v in raw if str(v) != label]
    lines = [label]
    if extra:
        lines.append(", ".join(extra))
    elif kind == _TENSOR and attrs.get("shape") is not None:
        lines.append(shape_text(attrs["shape"]))
    return [_clip(line, sp.max_chars) for line in lines]


def tag_extent(attrs: Mapping[str, Any], spacing: LayoutSpacing | None = None) -> float:
    """How far right of a box's left edge the tab on its top border reaches (0: none).

    Only the "stale v1\u2260v0" tab of a stale saved tensor can be wider than its box
    (a short label such as "self"); the canvas draws it from 3 px inside the left edge,
    its text plus 8 px wide.  The layout keeps that width free, as it does the box's,
    so no neighbour and no bend of a long edge sits under it."""
    if attrs.get("kind") != _SAVED or attrs.get("stale") is not True:
        return 0.0
    sp = spacing or DEFAULT_SPACING
    text = f"stale v{attrs.get('version')}\u2260v{attrs.get('expected_version')}"
    return 3.0 + len(text) * sp.tab_char_width + 8.0


_SIZES: dict[tuple[Any, ...], tuple[float, float]] = {}
_SIZES_CAP = 4096


def text_key(attrs: Mapping[str, Any]) -> tuple[Any, ...]:
    """What :func:`node_lines` and :func:`node_size` read of a node: two nodes with equal
    keys draw the same text in the same box (the canvas measures a 50,000-node chain's
    repeated ``SinBackward0`` once). May hold unhashable values from a malformed node:
    a caller that hashes it catches ``TypeError``."""
    kind = attrs.get("kind")
    names = attrs.get("vars")
    shape = attrs.get("shape") if kind == _TENSOR else None
    return (
        kind,
        attrs.get("label"),
        tuple(names) if isinstance(names, list) else names,
        tuple(shape) if isinstance(shape, list) else shape,
    )


def node_size(
    attrs: Mapping[str, Any], spacing: LayoutSpacing | None = None
) -> tuple[float, float]:
    """Width and height of a node's box, from its text.

    Regular nodes all have the two-line height so that layers line up; tensor
    nodes are drawn as pills (rounded ends), which need half a height more
    width to keep the text clear of the curve.
    """
    sp = spacing or DEFAULT_SPACING
    label = attrs.get("label")
    if attrs.get("vars") or attrs.get("kind") == _TENSOR or not isinstance(label, str):
        return _node_size(attrs, sp)
    # A grad_fn, AccumulateGrad or saved tensor with no variable name: its label and
    # kind say it all, and a big graph repeats a few dozen of them (100k nodes: 1 s
    # of measuring text, now a dict lookup; the default spacing's sizes are kept)
    if sp is not DEFAULT_SPACING:
        return _node_size(attrs, sp)  # (hashing a spacing costs more than measuring)
    key = (attrs.get("kind"), label)
    size = _SIZES.get(key)
    if size is None:
        if len(_SIZES) >= _SIZES_CAP:
            _SIZES.clear()
        size = _SIZES[key] = _node_size(attrs, sp)
    return size


def _node_size(attrs: Mapping[str, Any], sp: LayoutSpacing) -> tuple[float, float]:
    lines = node_lines(attrs, sp)
    chars = max(len(line) for line in lines)
    width = max(sp.min_width, chars * sp.char_width + 2 * sp.pad_x)
    kind = attrs.get("kind")
    if kind == _SAVED:
        return (max(0.75 * sp.min_width, chars * sp.char_width + 2 * sp.pad_x), sp.saved_height)
    height = sp.row_height
    if kind == _TENSOR:
        width += height / 2
    return (width, height)


# --------------------------------------------------------------------------- preparation


@dataclass
class _Prepared:
    """Index-based view of the graph: lists are much faster than networkx views."""

    ids: list[Hashable]
    sizes: list[tuple[float, float]]
    reserve: list[float]  # width kept free: the box, or its wider stale tab
    storage: list[Any]  # storage group of a tensor / saved tensor, else None
    succ: list[list[int]]  # layering edges (everything but "saved"), insertion order
    pred: list[list[int]]
    und: list[list[int]]  # every edge, both directions: for components and BFS
    saved_in: list[list[int]]  # grad_fns that saved this node
    owner: list[int]  # grad_fn a saved node is drawn beside, or -1
    attached: list[list[int]]  # saved nodes drawn beside this grad_fn


GraphInput: TypeAlias = "nx.DiGraph | Mapping[str, Any]"
"""What the layout reads: a networkx graph, or the graph as JSON data
(:func:`gradviz.graph.graphdata.graph_to_json`'s ``{"nodes": [...], "edges": [...]}``),
which spares building networkx for a graph that only needs laying out."""


def _as_networkx(graph: GraphInput) -> nx.DiGraph:
    return graph if isinstance(graph, nx.DiGraph) else graph_from_json(dict(graph))


def _node_lists(
    graph: GraphInput,
) -> tuple[list[Hashable], list[Mapping[str, Any]], Iterable[tuple[Hashable, Hashable, Any]]] | None:
    """Node ids, their attributes and the (u, v, kind) edges, in the order networkx would
    give them (None: JSON data with an edge to an unknown node, which networkx would add)."""
    if isinstance(graph, nx.DiGraph):
        ids = list(graph.nodes)
        return ids, [graph.nodes[v] for v in ids], graph.edges(data="kind")
    nodes = graph.get("nodes") or []
    ids = [node["id"] for node in nodes]
    known = set(ids)
    # networkx keeps one edge per pair (the last one's attributes) and lists edges by
    # source in node order, then by target in the order they were first added
    out: dict[Hashable, dict[Hashable, Any]] = {}
    for e in graph.get("edges") or []:
        u, v = e["source"], e["target"]
        if u not in known or v not in known:
            return None
        targets = out.get(u)
        if targets is None:
            targets = out[u] = {}
        targets[v] = e.get("kind")
    edges = [(u, v, kind) for u in ids if u in out for v, kind in out[u].items()]
    return ids, nodes, edges


def _prepare(graph: GraphInput, sp: LayoutSpacing) -> _Prepared:
    lists = _node_lists(graph)
    if lists is None:
        lists = _node_lists(_as_networkx(graph))
        assert lists is not None
    ids, attrs, edges = lists
    index = {v: i for i, v in enumerate(ids)}
    n = len(ids)
    sizes = [node_size(a, sp) for a in attrs]
    reserve = [max(size[0], tag_extent(a, sp)) for size, a in zip(sizes, attrs, strict=True)]
    storage = [
        a.get("storage") if a.get("kind") in TENSOR_KINDS else None for a in attrs
    ]
    succ: list[list[int]] = [[] for _ in range(n)]
    pred: list[list[int]] = [[] for _ in range(n)]
    und: list[list[int]] = [[] for _ in range(n)]
    saved_in: list[list[int]] = [[] for _ in range(n)]
    saved_out = [0] * n
    for u, v, kind in edges:
        iu, iv = index[u], index[v]
        if iu == iv:
            continue
        und[iu].append(iv)
        und[iv].append(iu)
        if kind == _SAVED_EDGE:
            saved_in[iv].append(iu)
            saved_out[iu] += 1
        else:
            succ[iu].append(iv)
            pred[iv].append(iu)
    owner = [-1] * n
    attached: list[list[int]] = [[] for _ in range(n)]
    for v in range(n):
        # Only a pure saved tensor (reached by "saved" edges and nothing else)
        # rides along with its grad_fn; anything more connected takes a layer.
        if saved_in[v] and not succ[v] and not pred[v] and not saved_out[v]:
            owner[v] = saved_in[v][0]
            attached[owner[v]].append(v)
    return _Prepared(ids, sizes, reserve, storage, succ, pred, und, saved_in, owner, attached)


def _components(prep: _Prepared, nodes: Iterable[int]) -> list[list[int]]:
    """Weakly connected components among ``nodes``, each sorted, ordered by first node."""
    allowed = set(nodes)
    seen: set[int] = set()
    comps: list[list[int]] = []
    for start in sorted(allowed):
        if start in seen:
            continue
        seen.add(start)
        comp = [start]
        queue = deque([start])
        while queue:
            v = queue.popleft()
            for w in prep.und[v]:
                if w in allowed and w not in seen:
                    seen.add(w)
                    comp.append(w)
                    queue.append(w)
        comp.sort()
        comps.append(comp)
    return comps


# --------------------------------------------------------------------------- layering


def _kahn_layers(
    main: list[int], succ: list[list[int]], pred: list[list[int]], layer: dict[int, int]
) -> int:
    """Longest-path layers (layer = 1 + max layer of predecessors); returns nodes done."""
    indeg = {v: len(pred[v]) for v in main}
    for v in main:
        layer[v] = 0
    queue = deque(v for v in main if indeg[v] == 0)
    done = 0
    while queue:
        u = queue.popleft()
        done += 1
        nxt = layer[u] + 1
        for w in succ[u]:
            if layer[w] < nxt:
                layer[w] = nxt
            indeg[w] -= 1
            if indeg[w] == 0:
                queue.append(w)
    return done


def _break_cycles(main: list[int], succ: list[list[int]], pred: list[list[int]]) -> None:
    """Drop the back edges of an iterative DFS, which leaves a DAG.

    Autograd graphs are acyclic, but a hand-made or corrupt graph must not make
    the layout loop forever; the dropped edges are still drawn, just ignored
    for layering.
    """
    state = dict.fromkeys(main, 0)  # 0 new, 1 on stack, 2 done
    back: list[tuple[int, int]] = []
    for root in main:
        if state[root]:
            continue
        state[root] = 1
        stack = [(root, 0)]
        while stack:
            v, i = stack[-1]
            out = succ[v]
            if i < len(out):
                stack[-1] = (v, i + 1)
                w = out[i]
                if state[w] == 1:
                    back.append((v, w))
                elif state[w] == 0:
                    state[w] = 1
                    stack.append((w, 0))
            else:
                state[v] = 2
                stack.pop()
    for v, w in back:
        succ[v].remove(w)
        pred[w].remove(v)


# --------------------------------------------------------------------------- ordering


def _count_crossings(
    eu: np.ndarray, ev: np.ndarray, el: np.ndarray, pos: np.ndarray, nbits: int
) -> int:
    """Total edge crossings between all pairs of consecutive layers at once.

    Edges are sorted by (layer, upper position, lower position); crossings are
    then the inversions of the lower positions within each layer, counted
    bit by bit from the top (a vectorised merge count, O(E log W)).
    """
    if len(eu) < 2:
        return 0
    pu = pos[eu]
    pv = pos[ev]
    order = np.lexsort((pv, pu, el))
    b = pv[order]
    g = el[order] << nbits
    total = 0
    for k in range(nbits - 1, -1, -1):
        key = g | (b >> (k + 1))
        idx = np.argsort(key, kind="stable")
        kk = key[idx]
        bit = (b[idx] >> k) & 1
        before = np.cumsum(bit) - bit
        starts = np.empty(len(kk), dtype=bool)
        starts[0] = True
        np.not_equal(kk[1:], kk[:-1], out=starts[1:])
        group = np.cumsum(starts) - 1
        rel = before - before[starts][group]
        total += int(rel[bit == 0].sum())
    return total


def _order_layers(
    layers: list[list[int]], lpred: list[list[int]], lsucc: list[list[int]], m: int, rounds: int = 4
) -> list[list[int]]:
    """Barycenter sweeps (down with predecessors, up with successors); keep the best."""
    nl = len(layers)
    if nl < 2 or max(len(layer) for layer in layers) < 2:
        return layers
    pos = [0] * m
    layer_of = [0] * m
    for li, layer in enumerate(layers):
        for i, v in enumerate(layer):
            pos[v] = i
            layer_of[v] = li
    eu_l: list[int] = []
    ev_l: list[int] = []
    for v in range(m):
        for w in lsucc[v]:
            eu_l.append(v)
            ev_l.append(w)
    eu = np.asarray(eu_l, dtype=np.int64)
    ev = np.asarray(ev_l, dtype=np.int64)
    el = np.asarray(layer_of, dtype=np.int64)[eu] if len(eu) else eu
    nbits = max(1, max(len(layer) for layer in layers).bit_length())

    def crossings() -> int:
        return _count_crossings(eu, ev, el, np.asarray(pos, dtype=np.int64), nbits)

    best = crossings()
    best_layers = [list(layer) for layer in layers]
    if best == 0:
        return best_layers

    def sweep(indices: Iterable[int], nbrs: list[list[int]]) -> None:
        for li in indices:
            layer = layers[li]
            if len(layer) < 2:
                continue
            keyed = []
            for v in layer:
                ns = nbrs[v]
                if ns:
                    s = 0
                    for u in ns:
                        s += pos[u]
                    key = s / len(ns)
                else:
                    key = float(pos[v])
                keyed.append((key, pos[v], v))
            keyed.sort()
            for i, item in enumerate(keyed):
                v = item[2]
                layer[i] = v
                pos[v] = i

    stale = 0
    for _ in range(rounds):
        sweep(range(1, nl), lpred)
        sweep(range(nl - 2, -1, -1), lsucc)
        c = crossings()
        if c < best:
            best = c
            best_layers = [list(layer) for layer in layers]
            stale = 0
            if best == 0:
                break
        else:
            stale += 1
            if stale >= 2:
                break
    return best_layers


# --------------------------------------------------------------------------- x placement


def _pendant_masses(
    layers: list[list[int]], into: list[list[int]], out: list[list[int]], m: int, cap: float
) -> list[float]:
    """Size of the tree hanging off each node along ``out``, or ``cap`` if it is no tree.

    A node hangs when it has exactly one neighbour along ``into`` and everything
    along ``out`` hangs too (an AccumulateGrad and its leaf below a grad_fn; a
    variable's tensor node above one).  Such small trees should follow the node
    they hang from instead of pulling it sideways: in a transformer every
    parameter hangs off the main path, and letting each pull the path by half
    a box makes the picture drift diagonally across thousands of pixels.
    Layers are visited so that ``out`` neighbours are done first.
    """
    mass = [cap] * m
    for layer in layers:
        for v in layer:
            if len(into[v]) != 1:
                continue
            total = 1.0
            for w in out[v]:
                mw = mass[w]
                if mw >= cap:
                    total = cap
                    break
                total += mw
            mass[v] = min(total, cap)
    return mass


_GRAVITY = 0.02
"""Pull of every node towards the component's axis (x = 0), relative to a neighbour's 1.

Following neighbours alone lets small asymmetries (a diamond whose branches
differ) add up: a 96-layer transformer drifted diagonally over 8,000 px.  A weak
spring to a common axis bounds that drift without visibly bending short runs.
"""


def _references(
    primary: list[list[int]],
    anchors: list[list[int]],
    mass: list[float],
    own: list[float],
    cap: float,
    dummy: list[bool],
    m: int,
) -> list[tuple[list[int], list[float], float]]:
    """Neighbours each node aligns with in one sweep, their weights, and the total pull
    (the gravity plus every weight, summed once here for the sweeps).

    Normally a node follows its ``primary`` neighbours (the layer just placed),
    ignoring those that merely hang off it when it has others (``mass`` below
    ``cap``).  A node that itself hangs (``own`` below ``cap``) follows its
    ``anchors`` instead, the nodes it hangs from: a parameter's AccumulateGrad
    follows its grad_fn in both directions, so it is never left behind when
    the main path moves.  Bends of long edges count little next to real nodes,
    so a residual connection curves around the main path instead of dragging
    it sideways.
    """
    refs: list[tuple[list[int], list[float], float]] = []
    for v in range(m):
        if own[v] < cap and anchors[v]:
            ns = anchors[v]
            ws = [1.0] * len(ns)
            refs.append((ns, ws, sum(ws, 0.0)))  # exactly under/over its anchor
            continue
        ns = primary[v]
        solid = [u for u in ns if mass[u] >= cap]
        if solid:
            ws = [0.05 if dummy[u] else 1.0 for u in solid]
            refs.append((solid, ws, sum(ws, _GRAVITY)))
        else:
            ws = [mass[u] for u in ns]
            refs.append((ns, ws, sum(ws, _GRAVITY)))
    return refs


def _assign_x(
    layers: list[list[int]],
    lpred: list[list[int]],
    lsucc: list[list[int]],
    left: list[float],
    right: list[float],
    dummy: list[bool],
    sp: LayoutSpacing,
    m: int,
    rounds: int = 3,
) -> list[float]:
    """Pull nodes towards their neighbours, layer by layer, without overlap.

    Alternating down and up sweeps, then one sweep using both sides.  Each
    layer is placed by a weighted isotonic regression (see ``balance``), so the
    order from crossing reduction and the minimum gaps always hold; the weights (main path heavy, long-edge bends
    light, hanging trees almost nothing) decide who steps aside.
    """
    cap = 64.0
    x = [0.0] * m
    offsets_of: list[list[float]] = []
    for layer in layers:
        offs = [0.0]
        for a, b in zip(layer, layer[1:], strict=False):
            gap = sp.dummy_gap if (dummy[a] and dummy[b]) else sp.node_gap
            offs.append(offs[-1] + right[a] + gap + left[b])
        offsets_of.append(offs)
        for v, o in zip(layer, offs, strict=True):
            x[v] = o
    hang_down = _pendant_masses(layers[::-1], lpred, lsucc, m, cap)
    hang_up = _pendant_masses(layers, lsucc, lpred, m, cap)
    # Down sweeps align with predecessors (ignore variables hanging above),
    # up sweeps with successors (ignore parameters hanging below).
    down_refs = _references(lpred, lsucc, hang_up, hang_up, cap, dummy, m)
    up_refs = _references(lsucc, lpred, hang_down, hang_down, cap, dummy, m)
    both_nbrs = [lpred[v] + lsucc[v] for v in range(m)]
    both_mass = [min(hang_up[v], hang_down[v]) for v in range(m)]
    anchors = [
        both_nbrs[v]
        if (hang_up[v] < cap and hang_down[v] < cap)
        else (lpred[v] if hang_down[v] < cap else lsucc[v])
        for v in range(m)
    ]
    both_refs = _references(both_nbrs, anchors, both_mass, both_mass, cap, dummy, m)
    # Weights in the per-layer regression: main-path nodes 1, bends of long
    # edges 1/50, hanging trees next to nothing (size / 1e5), in every sweep.
    # Hanging trees then take whatever room is left beside the node they
    # hang from; weighting them more lets every parameter nudge the main
    # path, and the nudges add up over hundreds of layers.
    weight = [
        both_mass[v] * 1e-5 if both_mass[v] < cap else (0.02 if dummy[v] else 1.0) for v in range(m)
    ]

    x_at = x.__getitem__

    def balance(li: int, refs: list[tuple[list[int], list[float], float]]) -> None:
        layer = layers[li]
        if len(layer) == 1:
            # nothing to keep apart from: the node goes where its neighbours pull it,
            # with no regression (a 50,000-op chain is 100,000 such layers, swept 7 times)
            v = layer[0]
            ns, ws, total = refs[v]
            if ns:
                x[v] = sum(map(mul, map(x_at, ns), ws)) / total
            return
        # Minimise sum w_i (x_i - d_i)^2 subject to x_{i+1} - x_i >= the offset gaps:
        # with z_i = d_i - o_i (o the cumulative minimum offsets) the constraints become
        # z nondecreasing, a weighted isotonic regression, solved exactly in O(n) by
        # pool-adjacent-violators. Inline: a layer is ~4 nodes, swept 7 times, and a call
        # with its lists cost GPT-2's layout 15% more than the arithmetic
        offsets = offsets_of[li]
        vals: list[float] = []
        wts: list[float] = []
        cnts: list[int] = []
        for v, o in zip(layer, offsets):
            ns, ws, total = refs[v]
            if ns:
                # gravity pulls towards 0: it adds weight, not position
                val = sum(map(mul, map(x_at, ns), ws)) / total - o
                wt = weight[v]
            else:
                val = x[v] - o  # nothing to follow this sweep: stay put
                wt = 1e-6
            cnt = 1
            while vals and vals[-1] > val:
                pv = vals.pop()
                pw = wts.pop()
                val = (pv * pw + val * wt) / (pw + wt)
                wt += pw
                cnt += cnts.pop()
            vals.append(val)
            wts.append(wt)
            cnts.append(cnt)
        i = 0
        for val, cnt in zip(vals, cnts):
            for _ in range(cnt):
                x[layer[i]] = val + offsets[i]
                i += 1

    nl = len(layers)
    for _ in range(rounds):
        for li in range(1, nl):
            balance(li, down_refs)
        for li in range(nl - 2, -1, -1):
            balance(li, up_refs)
    for li in range(nl):
        balance(li, both_refs)
    return x


# --------------------------------------------------------------------------- full layout


@dataclass
class _CompLayout:
    positions: dict[int, Point]
    routes: dict[tuple[int, int], list[Point]]
    width: float


def _layout_component(prep: _Prepared, comp: list[int], sp: LayoutSpacing) -> _CompLayout:
    """Lay out one weakly connected component with its left edge at x = 0."""
    main = [v for v in comp if prep.owner[v] < 0]
    succ, pred, sizes = prep.succ, prep.pred, prep.sizes
    row_mid = sp.margin + sp.row_height / 2

    def extents(v: int) -> tuple[float, float]:
        half = sizes[v][0] / 2
        right = prep.reserve[v] - half  # a stale tab may reach past the box
        for s in prep.attached[v]:
            right += sp.saved_gap + prep.reserve[s]
        return half, right

    if len(main) == 1:
        v = main[0]
        lft, rgt = extents(v)
        single: dict[int, Point] = {v: (lft, row_mid)}
        _place_attached(prep, single, [v], sp)
        return _CompLayout(single, {}, lft + rgt)

    layer = dict.fromkeys(main, 0)
    if _kahn_layers(main, succ, pred, layer) < len(main):
        _break_cycles(main, succ, pred)
        _kahn_layers(main, succ, pred, layer)
    for v in main:
        if not pred[v] and succ[v]:
            # A source that only feeds deeper nodes (a variable's tensor node)
            # hangs directly above its nearest successor instead of at the top.
            layer[v] = min(layer[w] for w in succ[v]) - 1
    base = min(layer.values())
    if base:
        for v in main:
            layer[v] -= base

    # Layered graph: real nodes 0..len(main)-1 (in graph order), then dummies.
    local = {v: i for i, v in enumerate(main)}
    llayer = [layer[v] for v in main]
    lpred: list[list[int]] = [[] for _ in main]
    lsucc: list[list[int]] = [[] for _ in main]
    left: list[float] = []
    right: list[float] = []
    for v in main:
        lft, rgt = extents(v)
        left.append(lft)
        right.append(rgt)
    dummy = [False] * len(main)
    long_edges: list[tuple[int, int, int, int]] = []
    for v in main:
        lv = layer[v]
        for w in succ[v]:
            span = layer[w] - lv
            if span == 1:
                lsucc[local[v]].append(local[w])
                lpred[local[w]].append(local[v])
            else:
                long_edges.append((span, len(long_edges), v, w))
    long_edges.sort()
    budget = 4 * len(main) + 1000
    chains: dict[tuple[int, int], list[int]] = {}
    half_dummy = sp.dummy_width / 2
    for span, _, v, w in long_edges:
        if span - 1 > budget:
            break  # sorted by span: every later edge is longer still
        budget -= span - 1
        prev = local[v]
        chain: list[int] = []
        for k in range(1, span):
            d = len(llayer)
            llayer.append(layer[v] + k)
            lpred.append([prev])
            lsucc.append([])
            lsucc[prev].append(d)
            left.append(half_dummy)
            right.append(half_dummy)
            dummy.append(True)
            chain.append(d)
            prev = d
        lsucc[prev].append(local[w])
        lpred[local[w]].append(prev)
        chains[(v, w)] = chain
    m = len(llayer)

    # Initial order: DFS preorder from the sources (a tree gets no crossings).
    disc = [-1] * m
    counter = 0
    for s in range(m):
        if lpred[s] or disc[s] >= 0:
            continue
        stack = [s]
        while stack:
            v = stack.pop()
            if disc[v] >= 0:
                continue
            disc[v] = counter
            counter += 1
            for w in reversed(lsucc[v]):
                if disc[w] < 0:
                    stack.append(w)
    for v in range(m):
        if disc[v] < 0:
            disc[v] = counter
            counter += 1
    nl = max(llayer) + 1
    layers: list[list[int]] = [[] for _ in range(nl)]
    for v in sorted(range(m), key=disc.__getitem__):
        layers[llayer[v]].append(v)

    layers = _order_layers(layers, lpred, lsucc, m)
    x = _assign_x(layers, lpred, lsucc, left, right, dummy, sp, m)

    lo = min(x[v] - left[v] for v in range(m))
    hi = max(x[v] + right[v] for v in range(m))
    positions: dict[int, Point] = {}
    for i, v in enumerate(main):
        positions[v] = (x[i] - lo, row_mid + llayer[i] * sp.pitch)
    routes = {
        edge: [(x[d] - lo, row_mid + llayer[d] * sp.pitch) for d in chain]
        for edge, chain in chains.items()
        if chain
    }
    _place_attached(prep, positions, main, sp)
    return _CompLayout(positions, routes, hi - lo)


def _place_attached(
    prep: _Prepared, positions: dict[int, Point], owners: Sequence[int], sp: LayoutSpacing
) -> None:
    """Put each grad_fn's saved tensors in a row to its right, vertically centred."""
    for v in owners:
        if not prep.attached[v]:
            continue
        x, y = positions[v]
        edge = x + prep.sizes[v][0] / 2
        edge += prep.reserve[v] - prep.sizes[v][0]
        for s in prep.attached[v]:
            w = prep.sizes[s][0]
            positions[s] = (edge + sp.saved_gap + w / 2, y)
            edge += sp.saved_gap + prep.reserve[s]  # the next one starts past a stale tab


def _full_layout(
    prep: _Prepared,
    nodes: Iterable[int],
    sp: LayoutSpacing,
    x0: float,
    beside: tuple[float, float] = (0.0, 0.0),
) -> tuple[dict[int, Point], dict[tuple[int, int], list[Point]]]:
    """Lay out every component of ``nodes`` side by side, starting at x = x0; the
    tensors without any edge follow in a grid (:func:`_grid`).

    ``beside``: width and height of a picture already left of x0 (an incremental
    layout's), which the grid's shape takes into account."""
    positions: dict[int, Point] = {}
    routes: dict[tuple[int, int], list[Point]] = {}
    cursor = x0
    loose: list[int] = []
    bottom = 0.0
    for comp in _components(prep, nodes):
        if len(comp) == 1 and not prep.und[comp[0]]:
            loose.append(comp[0])
            continue
        cl = _layout_component(prep, comp, sp)
        for v, (x, y) in cl.positions.items():
            positions[v] = (x + cursor, y)
            bottom = max(bottom, y + prep.sizes[v][1] / 2)
        for edge, pts in cl.routes.items():
            routes[edge] = [(x + cursor, y) for x, y in pts]
        cursor += cl.width + sp.component_gap
    if loose:
        width, height = beside
        if cursor > x0:
            width += (sp.component_gap if width else 0.0) + cursor - sp.component_gap - x0
            height = max(height, bottom - sp.margin)
        positions.update(_grid(prep, loose, sp, cursor, (width, height)))
    return positions, routes


# --------------------------------------------------------------------------- loose tensors
#
# A tensor that takes part in no autograd graph (no grad_fn, no AccumulateGrad, no
# saved edge) has no layer: shared_storage and clone_vs_detach make a dozen of them.
# Side by side they made one row 1,500 px wide and 44 px tall, which fitting to a
# canvas shrank to labels 5 px tall.  They go in rows of a few instead, the picture
# about as wide as a canvas, and tensors that share a storage (the canvas's badges
# and dotted links) next to each other in one row.


def _grid_blocks(prep: _Prepared, loose: Sequence[int]) -> list[list[int]]:
    """Loose tensors in graph order, those sharing a storage group kept together."""
    blocks: list[list[int]] = []
    by_group: dict[Any, list[int]] = {}
    for v in loose:
        group = prep.storage[v]
        if group is None:
            blocks.append([v])
            continue
        block = by_group.get(group)
        if block is None:
            block = by_group[group] = []
            blocks.append(block)
        block.append(v)
    return blocks


def _grid_rows(blocks: Sequence[Sequence[int]], columns: int) -> list[list[int]]:
    """Rows of at most ``columns`` tensors; a storage group that fits in a row is not
    split, and a block goes in the first row with room for it (no half-empty row
    above a group that had to start a new one)."""
    rows: list[list[int]] = []
    for block in blocks:
        if len(block) <= columns:
            for row in rows:
                if len(row) + len(block) <= columns:
                    row.extend(block)
                    break
            else:
                rows.append(list(block))
            continue
        for i in range(0, len(block), columns):  # a group wider than a row: whole rows
            rows.append(list(block[i : i + columns]))
    return rows


def _link_sag(dx: float, sp: LayoutSpacing) -> float:
    """How far below a row's centre the dotted storage link between two of its tensors
    ``dx`` apart reaches: the canvas bends it under the boxes by min(90, 14 + 0.15 dx)
    from the badge on the pill's end (0.354 of its height below the middle), and a
    cubic bends three quarters of that."""
    return 0.354 * sp.row_height + 0.75 * min(90.0, 14.0 + 0.15 * dx)


def _grid_pitch(sp: LayoutSpacing) -> float:
    """Distance between two grid rows: two layers. The layer between them is free for
    the AccumulateGrad a tensor gets when an op uses it (the grid's tensors are often
    the leaves the next statements build on, and a graph grows up from its leaves),
    and it holds the storage links that sag under a row, however long."""
    return max(2 * sp.pitch, _link_sag(math.inf, sp) + sp.dummy_gap + sp.row_height / 2)


def _grid_columns(
    blocks: Sequence[Sequence[int]],
    widths: Mapping[int, float] | Sequence[float],
    sp: LayoutSpacing,
    beside: tuple[float, float],
) -> int:
    """How many tensors a grid row holds: the count whose picture (the grid to the right
    of ``beside``, the width and height of what is already laid out) is closest to
    :attr:`LayoutSpacing.aspect`."""
    n = sum(len(b) for b in blocks)
    if n <= 1:
        return 1
    bw, bh = beside
    most = min(n, 2 * math.isqrt(n) + 2)
    # On their own, at least three a row (a column of two or three reads worse than a
    # short row); a storage group stays on one row (its links short, under it) unless
    # it is much wider than the shape alone would want.
    least = min(max(1 if bw else 3, max(len(b) for b in blocks)), most)
    best, best_score = least, math.inf
    for columns in range(least, most + 1):
        rows = _grid_rows(blocks, columns)
        width = max(sum(widths[v] for v in row) + sp.grid_gap * (len(row) - 1) for row in rows)
        height = sp.row_height + (len(rows) - 1) * _grid_pitch(sp)
        total_w = bw + sp.component_gap + width if bw else width
        score = abs(math.log(total_w / max(bh, height) / sp.aspect))
        if score < best_score - 1e-9:
            best, best_score = columns, score
    return best


def _grid(
    prep: _Prepared, loose: Sequence[int], sp: LayoutSpacing, x0: float,
    beside: tuple[float, float],
) -> dict[int, Point]:
    """Loose tensors in rows from (x0, the top layer), each row packed from the left."""
    blocks = _grid_blocks(prep, loose)
    widths = {v: prep.reserve[v] for v in loose}
    rows = _grid_rows(blocks, _grid_columns(blocks, widths, sp, beside))
    positions: dict[int, Point] = {}
    y = sp.margin + sp.row_height / 2
    for row in rows:
        x = x0
        for v in row:
            positions[v] = (x + prep.sizes[v][0] / 2, y)
            x += widths[v] + sp.grid_gap
        y += _grid_pitch(sp)
    return positions


# --------------------------------------------------------------------------- incremental


class _Occupancy:
    """Boxes already placed, bucketed by height band and sorted by left edge."""

    def __init__(self, band: float, hgap: float, vgap: float):
        self.band = band
        self.hgap = hgap
        self.vgap = vgap
        self.rows: dict[int, tuple[list[float], list[tuple[float, float, float, float]]]] = {}
        self.max_w = 0.0

    def _bands(self, y0: float, y1: float) -> range:
        return range(math.floor(y0 / self.band), math.floor(y1 / self.band) + 1)

    def add(self, cx: float, cy: float, w: float, h: float) -> None:
        box = (cx - w / 2, cx + w / 2, cy - h / 2, cy + h / 2)
        self.max_w = max(self.max_w, w)
        for b in self._bands(box[2], box[3]):
            keys, boxes = self.rows.setdefault(b, ([], []))
            i = bisect_right(keys, box[0])
            keys.insert(i, box[0])
            boxes.insert(i, box)

    def remove(self, cx: float, cy: float, w: float, h: float) -> None:
        """Take out a box :meth:`add` put in (the same arguments)."""
        box = (cx - w / 2, cx + w / 2, cy - h / 2, cy + h / 2)
        for b in self._bands(box[2], box[3]):
            row = self.rows.get(b)
            if row is None:
                continue
            keys, boxes = row
            i = bisect_left(keys, box[0])
            while i < len(keys) and keys[i] == box[0]:
                if boxes[i] == box:
                    del keys[i]
                    del boxes[i]
                    break
                i += 1

    def hits(
        self, cx: float, cy: float, w: float, h: float, gap: float | None = None
    ) -> list[tuple[float, float, float, float]]:
        """Boxes closer than the gaps to this one (``gap``: one gap for both ways)."""
        hgap = self.hgap if gap is None else gap
        vgap = self.vgap if gap is None else gap
        x0, x1 = cx - w / 2 - hgap, cx + w / 2 + hgap
        y0, y1 = cy - h / 2 - vgap, cy + h / 2 + vgap
        found = []
        for b in self._bands(y0, y1):
            row = self.rows.get(b)
            if row is None:
                continue
            keys, boxes = row
            lo = bisect_left(keys, x0 - self.max_w)
            hi = bisect_left(keys, x1)
            for box in boxes[lo:hi]:
                if box[1] > x0 and box[0] < x1 and box[3] > y0 and box[2] < y1:
                    found.append(box)
        return found

    def free_x(
        self, cx: float, cy: float, w: float, h: float, *, right_only: bool = False
    ) -> float:
        """Nearest centre x to ``cx`` where the box fits (ties go right)."""

        def search(direction: int) -> float:
            c = cx
            while True:
                found = self.hits(c, cy, w, h)
                if not found:
                    return c
                # The small margin keeps rounding from finding the same box again
                # ((x + g + w/2) - w/2 - g can land an ulp short of x): no endless loop.
                if direction > 0:
                    c = max(b[1] for b in found) + self.hgap + w / 2 + 1e-6
                else:
                    c = min(b[0] for b in found) - self.hgap - w / 2 - 1e-6

        to_right = search(1)
        if right_only or to_right == cx:
            return to_right
        to_left = search(-1)
        return to_left if cx - to_left < to_right - cx else to_right


Lifts = list[tuple[Any, Point]]
"""Placed nodes that moved to make room for a new one, with their new positions."""


def _place_one(
    w: float,
    h: float,
    pos: Mapping[Any, Point],
    sizes: Any,
    pred: Sequence[Any],
    succ: Sequence[Any],
    und: Sequence[Any],
    saved_in: Sequence[Any],
    owned: bool,
    occ: _Occupancy,
    sp: LayoutSpacing,
    pendant: Callable[[Any], bool],
) -> tuple[Point, Lifts] | None:
    """Where a new node of size ``w`` x ``h`` goes beside its placed neighbours (``pos``),
    and which placed nodes move up to make room (already moved in ``occ``, not in
    ``pos``); None when it does not fit and the picture should be laid out afresh.

    ``owned``: a pure saved tensor, drawn to the right of the grad_fn that saved it.
    ``pendant(u)``: the placed predecessor ``u`` is a tensor node tied to nothing but
    this new node (see below)."""
    anchors = [u for u in saved_in if u in pos]
    if owned and anchors:
        ax, ay = pos[anchors[0]]
        want = ax + sizes[anchors[0]][0] / 2 + sp.saved_gap + w / 2
        return (occ.free_x(want, ay, w, h, right_only=True), ay), []
    pitch = sp.pitch
    ps = [pos[u] for u in pred if u in pos]
    ss = [pos[u] for u in succ if u in pos]
    near = ps + ss or [pos[u] for u in und if u in pos]
    want = sum(p[0] for p in near) / len(near)
    lift: list[Any] = []
    if ps and ss:
        lo = max(p[1] for p in ps)
        hi = min(p[1] for p in ss)
        if hi - lo >= 2 * pitch - 1e-6:
            y = lo + pitch
        else:
            # No free layer between what feeds it and what it feeds: an in-place op
            # (``b.mul_(2)``) put a new grad_fn between the tensor node b and the op
            # that made b.  Placed half-way, sideways, its edges looped back up (and one
            # ran through the "stale" tab of the saved tensor beside it).  Instead the
            # new node takes the layer just above what it feeds, and the tensor node,
            # which hangs from nothing but it, moves up a layer: the chain keeps
            # flowing down.  Anything else in the way needs a fresh layering.
            y = hi - pitch
            lift = [u for u in pred if u in pos and pos[u][1] > y - pitch + 1e-6]
            if not all(pendant(u) for u in lift):
                return None
            for u in lift:
                occ.remove(*pos[u], *sizes[u])
    elif ps:
        y = max(p[1] for p in ps) + pitch  # below what feeds it gradients
    elif ss:
        y = min(p[1] for p in ss) - pitch  # above the root it hangs from
    else:
        y = near[0][1]  # tied by saved edges only: same row
    x = occ.free_x(want, y, w, h)
    if abs(x - want) > max(8 * (w + sp.node_gap), 800.0):
        for u in lift:  # leave the occupancy as it was
            occ.add(*pos[u], *sizes[u])
        return None  # crowded: a fresh layout reads better than a far-flung node
    lifts: Lifts = []
    if lift:
        occ.add(x, y, w, h)  # the lifted nodes must not land on the new one
        for u in lift:
            uw, uh = sizes[u]
            ux = occ.free_x(x, y - pitch, uw, uh)
            occ.add(ux, y - pitch, uw, uh)
            lifts.append((u, (ux, y - pitch)))
        occ.remove(x, y, w, h)  # the caller adds it, as for any new node
    return (x, y), lifts


def _sides(graph: nx.DiGraph, v: Hashable) -> tuple[list, list, list, list, bool]:
    """A node's layering successors and predecessors, the grad_fns that saved it, all its
    neighbours, and whether it saved anything; self-loops left out, in the graph's
    adjacency order (both incremental passes read them alike, so they agree)."""
    out, into = graph._succ[v], graph._pred[v]
    succ = [u for u, d in out.items() if u != v and d.get("kind") != _SAVED_EDGE]
    pred = [u for u, d in into.items() if u != v and d.get("kind") != _SAVED_EDGE]
    saved_in = [u for u, d in into.items() if u != v and d.get("kind") == _SAVED_EDGE]
    saved_out = any(u != v and d.get("kind") == _SAVED_EDGE for u, d in out.items())
    und = [u for u in out if u != v] + [u for u in into if u != v]
    return succ, pred, saved_in, und, saved_out


def _grow(
    graph: nx.DiGraph,
    pos: dict[Hashable, Point],
    sizes: Mapping[Hashable, tuple[float, float]],
    occ: _Occupancy,
    sp: LayoutSpacing,
    new: Sequence[Hashable],
) -> tuple[list[Hashable], list[tuple[Hashable, Point]]] | None:
    """Place the ``new`` nodes tied to the placed ones (``pos``, ``occ``), breadth-first
    from them in the order of ``new``, so each sees placed neighbours.  Returns the nodes
    placed and the old ones lifted (with where they were); None, with ``pos`` and ``occ``
    as they were, when one does not fit.  New nodes with no tie are left out."""
    succ_all, pred_all = graph._succ, graph._pred
    queued = set(pos)
    queue: deque[Hashable] = deque()
    for v in new:
        if v in queued:
            continue
        if any(u in pos for u in succ_all[v]) or any(u in pos for u in pred_all[v]):
            queued.add(v)
            queue.append(v)
    placed_now: list[Hashable] = []
    lifted: list[tuple[Hashable, Point]] = []  # old nodes moved up, and where they were

    def undo() -> None:
        for v in placed_now:
            occ.remove(*pos.pop(v), *sizes[v])
        for v, old in reversed(lifted):
            occ.remove(*pos[v], *sizes[v])
            occ.add(*old, *sizes[v])
            pos[v] = old

    fresh = set(new)
    stalled = 0
    while queue:
        v = queue.popleft()
        w, h = sizes[v]
        succ, pred, saved_in, und, saved_out = _sides(graph, v)
        if stalled <= len(queue):
            # Growing up from the placed nodes (a forward pass over old leaves), a node
            # waits for its new successors, or it sits one layer above the first one
            # placed and leaves no room for the others below it; growing down, the same
            # with its predecessors. (A full round of waiting: place it anyway.)
            above = any(u in pos for u in succ) and not any(u in pos for u in pred)
            below = any(u in pos for u in pred) and not any(u in pos for u in succ)
            if (above and any(u in fresh and u not in pos for u in succ)) or (
                below and any(u in fresh and u not in pos for u in pred)
            ):
                queue.append(v)
                stalled += 1
                continue
        stalled = 0
        owned = bool(saved_in) and not succ and not pred and not saved_out

        def pendant(u: Hashable, v: Hashable = v) -> bool:
            # no edge into it, every edge out of it into v: a variable's tensor node
            return all(x == u for x in pred_all[u]) and all(x in (u, v) for x in succ_all[u])

        placed = _place_one(w, h, pos, sizes, pred, succ, und, saved_in, owned, occ, sp, pendant)
        if placed is None:
            undo()
            return None
        (x, y), lifts = placed
        pos[v] = (x, y)
        placed_now.append(v)
        occ.add(x, y, w, h)
        for u, p in lifts:
            lifted.append((u, pos[u]))
            pos[u] = p
        for u in und:
            if u not in queued:
                queued.add(u)
                queue.append(u)
    return placed_now, lifted


def _incremental(
    graph: nx.DiGraph, prep: _Prepared, previous: Mapping[Any, Sequence[float]],
    sp: LayoutSpacing,
) -> dict[Hashable, Point] | None:
    """Keep old positions, place new nodes near their neighbours; None means 'do a full one'."""
    index = {v: i for i, v in enumerate(prep.ids)}
    kept = {v: p for v, p in previous.items() if v in index}
    if not kept:
        return None
    n = len(prep.ids)
    pos: dict[int, Point] = {}
    for v, p in kept.items():
        pos[index[v]] = (float(p[0]), float(p[1]))
    # Rebinding a variable (``y = y * 2``) drops the old tensor node every step:
    # the rest of the picture still fits, so only a mostly-gone graph is redone, and
    # only when what is left of it is scattered (a fresh layout would move the few
    # nodes left for nothing, and they would jump back on a step back).
    if len(kept) < len(previous) / 2 and _scattered(prep, pos, sp):
        return None
    new_count = n - len(pos)
    if new_count == 0:
        return {v: pos[i] for i, v in enumerate(prep.ids)}
    if new_count > 2 * len(pos) + 50:
        return None  # mostly new: a fresh layout reads better than a patched one

    occ = _Occupancy(sp.pitch / 2, sp.node_gap, 2.0)
    for i, (x, y) in pos.items():
        occ.add(x, y, *prep.sizes[i])

    ids = prep.ids
    by_id = {ids[i]: p for i, p in pos.items()}
    grown = _grow(graph, by_id, dict(zip(ids, prep.sizes, strict=True)), occ, sp,
                  [v for i, v in enumerate(ids) if i not in pos])
    if grown is None:
        return None
    for v in grown[0]:
        pos[index[v]] = by_id[v]
    for v, _ in grown[1]:
        pos[index[v]] = by_id[v]

    rest = [i for i in range(n) if i not in pos]
    if rest:
        _place_rest(prep, pos, occ, rest, sp)
    return {v: pos[i] for i, v in enumerate(prep.ids)}


def _scattered(prep: _Prepared, pos: Mapping[int, Point], sp: LayoutSpacing) -> bool:
    """Whether the boxes at ``pos`` spread over more than twice the room they need."""
    left, top, right, bottom = _extent(prep, pos, pos)
    need = sum((prep.reserve[i] + sp.node_gap) * sp.pitch for i in pos)
    return (right - left) * (bottom - top) > 2 * need


def _extent(prep: _Prepared, pos: Mapping[int, Point], nodes: Iterable[int]) -> tuple[float, ...]:
    """(left, top, right, bottom) of the boxes of ``nodes``."""
    left = top = math.inf
    right = bottom = -math.inf
    for i in nodes:
        x, y = pos[i]
        w, h = prep.sizes[i]
        left, right = min(left, x - w / 2), max(right, x - w / 2 + prep.reserve[i])
        top, bottom = min(top, y - h / 2), max(bottom, y + h / 2)
    return left, top, right, bottom


def _place_rest(
    prep: _Prepared, pos: dict[int, Point], occ: _Occupancy, rest: list[int], sp: LayoutSpacing
) -> None:
    """Place the new nodes with no tie to the old picture (``rest``): loose tensors join
    the grid of loose tensors already there; the rest, and a first grid, go to the
    right of the picture, top-aligned with it."""
    loose_old = [i for i in pos if not prep.und[i]]
    if loose_old:
        loose_new = [i for i in rest if not prep.und[i]]
        if loose_new:
            _append_loose(prep, pos, occ, sorted(loose_old), loose_new, sp)
            rest = [i for i in rest if prep.und[i]]
        if not rest:
            return
    left, top, right, bottom = _extent(prep, pos, pos)
    extra, _ = _full_layout(
        prep, rest, sp, right + sp.component_gap, (right - left, bottom - top)
    )
    dy = top - sp.margin
    for i, (x, y) in extra.items():
        pos[i] = (x, y + dy)


def _append_loose(
    prep: _Prepared,
    pos: dict[int, Point],
    occ: _Occupancy,
    loose_old: list[int],
    loose_new: list[int],
    sp: LayoutSpacing,
) -> None:
    """New loose tensors join the grid without moving it.

    One that shares a storage with a loose tensor goes right after the last of them, or
    right under it when that place is taken; any other goes after the newest loose
    tensor, or starts a new row below it when its row is as long as a grid of all of
    them would make it (rows :func:`_grid_pitch` apart, as in a full layout)."""
    others = [i for i in pos if prep.und[i]]
    beside = (0.0, 0.0)
    if others:
        left, top, right, bottom = _extent(prep, pos, others)
        beside = (right - left, bottom - top)
    loose = loose_old + loose_new
    columns = _grid_columns([[i] for i in loose], prep.reserve, sp, beside)
    pitch = _grid_pitch(sp)
    last_of: dict[Any, int] = {}
    for i in loose_old:
        if prep.storage[i] is not None:
            last_of[prep.storage[i]] = i
    anchor = loose_old[-1]  # the newest: the end of the grid
    for v in loose_new:
        w, h = prep.sizes[v]
        mate = last_of.get(prep.storage[v]) if prep.storage[v] is not None else None
        after = mate if mate is not None else anchor
        ax, ay = pos[after]
        left = ax - prep.sizes[after][0] / 2
        want, y = left + prep.reserve[after] + sp.grid_gap + w / 2, ay
        if mate is not None:
            if occ.hits(want, y, w, h) and not occ.hits(left + w / 2, ay + pitch, w, h):
                want, y = left + w / 2, ay + pitch
        else:
            count, start = _row_run(prep, pos, anchor, sp)
            if count >= columns:
                want, y = start + w / 2, ay + pitch  # a new row, from the grid's left
        x = occ.free_x(want, y, w, h, right_only=True)
        pos[v] = (x, y)
        occ.add(x, y, w, h)
        anchor = v
        if prep.storage[v] is not None:
            last_of[prep.storage[v]] = v


def _row_run(
    prep: _Prepared, pos: Mapping[int, Point], end: int, sp: LayoutSpacing
) -> tuple[int, float]:
    """How many loose tensors make the row that ends at ``end`` and where it starts: the
    loose tensors left of it on its row, each at most two grid gaps from the next."""
    ey = pos[end][1]
    row = sorted(
        (pos[i][0] - prep.sizes[i][0] / 2, i)
        for i in pos
        if not prep.und[i] and abs(pos[i][1] - ey) < 1.0 and pos[i][0] <= pos[end][0]
    )
    count, start = 1, row[-1][0]
    for (left, i), (next_left, _) in zip(row[-2::-1], row[::-1], strict=False):
        if next_left - (left + prep.reserve[i]) > 2 * sp.grid_gap + 1.0:
            break
        count, start = count + 1, left
    return count, start


# --------------------------------------------------------------------------- public API


def layout_with_routes(
    graph: GraphInput,
    previous: Mapping[Any, Sequence[float]] | None = None,
    *,
    spacing: LayoutSpacing | None = None,
) -> LayoutResult:
    """Like :func:`layout`, also returning bend points of long edges and node sizes."""
    sp = spacing or DEFAULT_SPACING
    # The layout allocates many small lists and frees nothing cyclic; with a
    # big heap around (torch, the app) the cyclic collector's passes would
    # cost more than the layout itself.
    with paused_gc():
        return _layout_with_routes(graph, previous, sp)


def _layout_with_routes(
    graph: GraphInput, previous: Mapping[Any, Sequence[float]] | None, sp: LayoutSpacing
) -> LayoutResult:
    if previous:
        graph = _as_networkx(graph)  # the incremental pass reads networkx's adjacency
    prep = _prepare(graph, sp)  # fresh lists: cycle breaking may edit them
    sizes = dict(zip(prep.ids, prep.sizes, strict=True))
    if previous:
        assert isinstance(graph, nx.DiGraph)
        positions = _incremental(graph, prep, previous, sp)
        if positions is not None:
            return LayoutResult(positions, {}, sizes, incremental=True)
    placed, routes = _full_layout(prep, range(len(prep.ids)), sp, sp.margin)
    ids = prep.ids
    return LayoutResult(
        {ids[i]: placed[i] for i in range(len(ids))},
        {(ids[u], ids[v]): pts for (u, v), pts in routes.items()},
        sizes,
    )


def layout(
    graph: GraphInput,
    previous: Mapping[str, tuple[float, float]] | None = None,
    *,
    spacing: LayoutSpacing | None = None,
) -> dict[str, tuple[float, float]]:  # keys are the graph's node ids (strings by contract)
    """Centre position of every node of ``graph``; y grows downward.

    ``previous`` (positions from an earlier call) makes the layout incremental:
    when the graph only gained nodes, the old ones keep exactly their old
    positions and the new ones are fitted around them.  Otherwise a full,
    deterministic layered layout is computed.
    """
    return cast(
        "dict[str, tuple[float, float]]",
        layout_with_routes(graph, previous, spacing=spacing).positions,
    )


class IncrementalLayout:
    """The layout of a graph that grows a statement at a time, kept between calls.

    :func:`layout` with ``previous`` re-reads the whole graph on every call (node
    sizes, adjacency, an occupancy map of every placed box). This keeps them: a
    call reads each node's label once to see whether its size changed, takes out
    the boxes of nodes that went, and places only the new nodes, with the same
    rules as :func:`layout`'s incremental pass. Anything else (a mostly new
    graph, no room between layers, a new component) falls back to :func:`layout`.
    """

    def __init__(self, spacing: LayoutSpacing | None = None):
        self.sp = spacing or DEFAULT_SPACING
        self.positions: dict[Hashable, Point] = {}
        self._sizes: dict[Hashable, tuple[float, float]] = {}
        self._keys: dict[Hashable, tuple[Any, ...]] = {}
        self._occ: _Occupancy | None = None
        #: how the last call went: "full", "incremental" or "fallback" (for benchmarks)
        self.last = ""
        #: the nodes the last call placed (None: it laid out everything)
        self.moved: set[Hashable] | None = None
        #: where each node was last shown, by id, kept by reset(remember=True)
        self.memory: dict[Hashable, Point] = {}
        #: the picture shown when reset(remember=True) came: its places come first
        self._shown: dict[Hashable, Point] = {}

    def reset(self, remember: bool = False) -> None:
        """Start a new picture.

        ``remember``: the same script runs again from the start (a step back, a device
        switch, the timeline going back to an earlier step), so its nodes get the same
        ids. Where each node was last shown is kept (:attr:`memory`: also the nodes
        that went since), and a node that comes back takes that place again when
        nothing else is there now: stepping back shows the picture it left, instead
        of a fresh layout whose nodes swap places.  (Ids never repeat within a run, so
        the memory only comes into play after such a reset.)"""
        if remember:
            self.memory.update(self.positions)
            if self.positions:
                self._shown = self.positions
        else:
            self.memory = {}
            self._shown = {}
        self.positions = {}
        self._sizes = {}
        self._keys = {}
        self._occ = None

    def update(
        self,
        graph: nx.DiGraph,
        changed: Collection[Hashable] | None = None,
        removed: Collection[Hashable] | None = None,
    ) -> dict[Hashable, Point]:
        """Positions for every node of ``graph``; old nodes keep theirs.

        ``changed``/``removed``: the nodes added or changed and the nodes gone since
        the last call, when the caller knows (a capture updated in place); then
        nothing else is looked at. :attr:`moved` says which positions are new
        (None: maybe all of them)."""
        with paused_gc():  # as layout_with_routes: many small lists, nothing cyclic
            placed = None
            if self.positions:
                placed = self._place_new(graph, changed, removed)
            if placed is None:
                self.last = "fallback" if self.positions else "full"
                self.moved = None
                self._rebuild(graph, self._layout(graph))
                self._remember(self.positions)
            else:
                self.last = "incremental"
                self.moved = placed
                self._remember({v: self.positions[v] for v in placed})
            return self.positions

    #: the memory forgets all but the picture shown when it holds more nodes than this
    MEMORY_CAP = 200_000

    def _remember(self, positions: Mapping[Hashable, Point]) -> None:
        if len(self.memory) + len(positions) > self.MEMORY_CAP:
            self.memory = dict(self.positions)
        self.memory.update(positions)

    def _layout(self, graph: nx.DiGraph) -> Mapping[Any, Point]:
        """:func:`layout` around the kept positions, or around remembered ones.

        Remembered places come from the pictures of several steps: after a full
        layout in between, the nodes gone since sit where that older picture had
        them and may not fit with the rest. So first the picture last shown plus
        every other remembered place that fits, then the picture last shown alone
        (the others placed around it as new), then a fresh layout."""
        base = self.positions
        if not self.memory:
            return layout_with_routes(graph, base or None, spacing=self.sp).positions
        shown = {v: p for v, p in self._shown.items() if v in graph and v not in base}
        for then in (self.memory, {}):
            recalled = self._recall(graph, shown, then)
            if recalled:
                if not base:
                    self.last = "recalled"
                result = layout_with_routes(graph, {**base, **recalled}, spacing=self.sp)
                if result.incremental or not then:
                    return result.positions
        return layout_with_routes(graph, base or None, spacing=self.sp).positions

    def _recall(
        self,
        graph: nx.DiGraph,
        first: Mapping[Hashable, Point],
        then: Mapping[Hashable, Point],
    ) -> dict[Hashable, Point]:
        """Remembered places of graph nodes with no position now: all of ``first`` (the
        picture last shown stays as it was), then each of ``then`` where its box (at
        today's size) overlaps no box kept or taken before it."""
        sp, pos = self.sp, self.positions
        out: dict[Hashable, Point] = dict(first)
        wanted = [(v, then[v]) for v in graph if v in then and v not in pos and v not in first]
        if not wanted:
            return out
        occ = _Occupancy(sp.pitch / 2, sp.node_gap, 2.0)
        for v, p in [*pos.items(), *first.items()]:
            if v in graph:
                occ.add(*p, *node_size(graph.nodes[v], sp))
        for v, p in wanted:
            size = node_size(graph.nodes[v], sp)
            if not occ.hits(*p, *size, gap=-0.5):
                out[v] = p
                occ.add(*p, *size)
        return out

    def _seat_remembered(self, new: list[Hashable]) -> list[Hashable]:
        """Put new nodes back where the memory has them, where that place is free."""
        pos, sizes, occ, memory = self.positions, self._sizes, self._occ, self.memory
        assert occ is not None
        seated = []
        for v in new:
            p = memory.get(v)
            if p is not None and not occ.hits(*p, *sizes[v], gap=-0.5):
                pos[v] = p
                occ.add(*p, *sizes[v])
                seated.append(v)
        return seated

    def _rebuild(self, graph: nx.DiGraph, positions: Mapping[Hashable, Point]) -> None:
        sp = self.sp
        self.positions = dict(positions)
        self._keys = {v: _size_key(d) for v, d in graph.nodes(data=True)}
        self._sizes = {v: node_size(d, sp) for v, d in graph.nodes(data=True)}
        occ = _Occupancy(sp.pitch / 2, sp.node_gap, 2.0)
        for v, (x, y) in self.positions.items():
            occ.add(x, y, *self._sizes[v])
        self._occ = occ

    def _place_new(
        self,
        graph: nx.DiGraph,
        changed: Collection[Hashable] | None = None,
        removed: Collection[Hashable] | None = None,
    ) -> set[Hashable] | None:
        sp, occ, pos, sizes = self.sp, self._occ, self.positions, self._sizes
        assert occ is not None
        node_data = graph._node
        known = changed is not None and removed is not None
        if known:
            assert changed is not None and removed is not None
            gone = [v for v in removed if v in pos]
            new = [v for v in changed if v not in pos and v in node_data]
            look_at: Iterable[Hashable] = [v for v in changed if v in node_data]
            if len(pos) - len(gone) + len(new) != len(node_data):
                known = False  # the hint does not add up: read the whole graph
        if not known:
            gone = [v for v in pos if v not in node_data]
            new = [v for v in node_data if v not in pos]
            look_at = node_data
        kept = len(pos) - len(gone)
        # the same thresholds as _incremental
        if not kept or kept < len(pos) / 2 or len(new) > 2 * kept + 50:
            return None
        # From here on the kept state changes: a None below must rebuild from scratch.
        for v in gone:
            occ.remove(*pos.pop(v), *sizes.pop(v))
            self._keys.pop(v, None)
        keys = self._keys
        for v in look_at:
            data = node_data[v]
            key = _size_key(data)
            if keys.get(v) != key:
                keys[v] = key
                size = node_size(data, sp)
                if v in pos and sizes[v] != size:
                    occ.remove(*pos[v], *sizes[v])
                    occ.add(*pos[v], *size)
                sizes[v] = size
        if not new:
            return set()
        # After a step back the nodes of the next statement come back: to where they were.
        seated = self._seat_remembered(new)
        grown = _grow(graph, pos, sizes, occ, sp, [v for v in new if v not in pos])
        if grown is None or len(seated) + len(grown[0]) < len(new):
            # no room (or a new component with no tie to the picture: layout() places it)
            if grown is not None:
                for v in grown[0]:
                    occ.remove(*pos.pop(v), *sizes[v])
                for v, old in reversed(grown[1]):
                    occ.remove(*pos[v], *sizes[v])
                    occ.add(*old, *sizes[v])
                    pos[v] = old
            for v in seated:
                occ.remove(*pos.pop(v), *sizes[v])
            return None
        placed, lifted = grown
        return set(seated).union(placed, (u for u, _ in lifted))


def _size_key(data: Mapping[str, Any]) -> tuple[Any, ...]:
    """What a node's size depends on (see :func:`node_lines`)."""
    raw = data.get("vars")
    return (
        data.get("kind"), data.get("label"),
        tuple(raw) if isinstance(raw, list) else raw,
        tuple(data["shape"]) if isinstance(data.get("shape"), list) else data.get("shape"),
    )
