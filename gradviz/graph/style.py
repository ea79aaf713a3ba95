"""The one style table: what each kind of node, edge and state looks like.

The window's canvas (through :mod:`gradviz.ui.theme`), the SVG renderer
(:mod:`gradviz.graph.render_svg`, behind every SVG and PNG export), the HTML
view and the DOT export all read their colours here, so a kind of node looks
the same wherever it is drawn. Qt-free and torch-free: exports and the CLI
need no display.

Two themes: :data:`LIGHT` (the default, and what every export uses) and
:data:`DARK` (the canvas picks it when the application's palette is dark).

The kinds (:func:`style_key`):

* ``grad_fn``: a backward op; ``accumulate_grad``: AccumulateGrad;
* ``leaf``: a leaf tensor that requires grad (green);
* ``tensor``: a non-leaf tensor (computed, requires grad);
* ``no_grad``: a tensor with ``requires_grad=False`` (grey: never the leaf green);
* ``saved``: a tensor saved for backward; ``group``: a collapsed module or chain.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

__all__ = [
    "DARK",
    "EDGE_WIDTHS",
    "FONT_FAMILY",
    "LABEL_FONT_FAMILY",
    "LIGHT",
    "NODE_KINDS",
    "NodeStyle",
    "Theme",
    "blend",
    "corner_radius",
    "is_dark_colour",
    "storage_colour",
    "style_key",
]

FONT_FAMILY = "monospace"
"""Node text in an SVG: a monospace face (the layout counts 7.5 px per character). One
generic name, not a list: QtSvg, which renders the PNG exports, reads no lists."""
LABEL_FONT_FAMILY = "sans-serif"
"""Tabs and badges in an SVG."""

NODE_KINDS = ("grad_fn", "accumulate_grad", "leaf", "tensor", "no_grad", "saved", "group")

#: corner radius of each kind's box; tensors are pills (radius = half the height)
_RADIUS = {"grad_fn": 8.0, "accumulate_grad": 3.0, "saved": 5.0, "group": 4.0}

#: stroke width of each kind of edge (the window and the SVG draw alike)
EDGE_WIDTHS = {"grad": 1.6, "output": 1.0, "leaf": 1.4, "saved": 1.3, "new": 2.2, "carry": 2.8}


@dataclass(frozen=True)
class NodeStyle:
    """Fill and border of one kind of node, and its name in the legend."""

    fill: str
    stroke: str
    legend: str


@dataclass(frozen=True)
class Theme:
    """Every colour gradviz draws a graph with (hex strings)."""

    name: str
    dark: bool
    background: str
    """The canvas behind the graph."""
    paper: str
    """The background of an exported picture."""
    text: str
    muted_text: str
    hint_text: str
    forward: str
    """Edges of the graph as built by the forward pass."""
    backward: str
    """Everything about the backward pass being stepped: executing node, carrying edges."""
    backward_fill: str
    backward_done_fill: str
    executed_tint: str
    """Mixed into the fill of nodes the pass already executed."""
    new: str
    """Glow around what the last statement added (violet, not the backward red)."""
    selection: str
    freed: str
    stale: str
    stale_fill: str
    tab_fill: str
    """Inside of the small tabs on a box's border ("saved", "freed", "module")."""
    label_fill: str
    """Behind the gradient value written on a carrying edge."""
    label_text: str
    legend_fill: str
    legend_border: str
    nodes: Mapping[str, NodeStyle]
    edges: Mapping[str, str]
    storage: tuple[str, ...] = field(default=())

    def node(self, key: str) -> NodeStyle:
        return self.nodes.get(key) or self.nodes["grad_fn"]

    def edge(self, kind: str) -> str:
        return self.edges.get(kind) or self.edges["grad"]


_STORAGE_LIGHT = (
    "#1098ad", "#d6336c", "#5f3dc4", "#2b8a3e", "#e67700", "#1864ab", "#a61e4d", "#5c940d",
)
_STORAGE_DARK = (
    "#3bc9db", "#f06595", "#9775fa", "#51cf66", "#ffa94d", "#4dabf7", "#e64980", "#94d82d",
)

_LEGEND = {
    "grad_fn": "op (grad_fn)",
    "accumulate_grad": "AccumulateGrad",
    "leaf": "leaf, requires grad",
    "tensor": "computed tensor",
    "no_grad": "tensor, no grad",
    "saved": "saved for backward",
    "group": "module / chain",
}

LIGHT = Theme(
    name="light",
    dark=False,
    background="#fbfcfe",
    paper="#ffffff",
    text="#1f2430",
    muted_text="#5c6370",
    hint_text="#8a93a3",
    forward="#7b8aa3",
    backward="#e03131",
    backward_fill="#ffe3e3",
    backward_done_fill="#fff0f0",
    executed_tint="#ffc9c9",
    new="#9c36b5",
    selection="#1c7ed6",
    freed="#868e96",
    stale="#c92a2a",
    stale_fill="#fff5f5",
    tab_fill="#ffffff",
    label_fill="#ffffff",
    label_text="#c92a2a",
    legend_fill="#f4f6fa",
    legend_border="#dde2ea",
    nodes={
        "grad_fn": NodeStyle("#d6ebff", "#3b7dd8", _LEGEND["grad_fn"]),
        "accumulate_grad": NodeStyle("#e9ecef", "#7a7f87", _LEGEND["accumulate_grad"]),
        "leaf": NodeStyle("#c9f2c7", "#2f9e44", _LEGEND["leaf"]),
        "tensor": NodeStyle("#fff3b0", "#c9a100", _LEGEND["tensor"]),
        "no_grad": NodeStyle("#ffffff", "#adb5bd", _LEGEND["no_grad"]),
        "saved": NodeStyle("#ffd8a8", "#e8590c", _LEGEND["saved"]),
        "group": NodeStyle("#e3fafc", "#0c8599", _LEGEND["group"]),
    },
    edges={"grad": "#7b8aa3", "output": "#a3aec0", "leaf": "#2f9e44", "saved": "#e8590c"},
    storage=_STORAGE_LIGHT,
)

DARK = Theme(
    name="dark",
    dark=True,
    background="#1b1e24",
    paper="#1b1e24",
    text="#e9ecef",
    muted_text="#adb5bd",
    hint_text="#868e96",
    forward="#8d9bb3",
    backward="#ff6b6b",
    backward_fill="#5c1d1d",
    backward_done_fill="#3a2224",
    executed_tint="#7a2e2e",
    new="#cc5de8",
    selection="#4dabf7",
    freed="#868e96",
    stale="#ff6b6b",
    stale_fill="#3d1f22",
    tab_fill="#25292f",
    label_fill="#25292f",
    label_text="#ff8787",
    legend_fill="#22262d",
    legend_border="#343a40",
    nodes={
        "grad_fn": NodeStyle("#1d3557", "#5c9ded", _LEGEND["grad_fn"]),
        "accumulate_grad": NodeStyle("#343a40", "#939aa3", _LEGEND["accumulate_grad"]),
        "leaf": NodeStyle("#1b4025", "#51cf66", _LEGEND["leaf"]),
        "tensor": NodeStyle("#4a3e0f", "#f0c419", _LEGEND["tensor"]),
        "no_grad": NodeStyle("#25292f", "#6c757d", _LEGEND["no_grad"]),
        "saved": NodeStyle("#4a2c12", "#ff922b", _LEGEND["saved"]),
        "group": NodeStyle("#0f3b40", "#22b8cf", _LEGEND["group"]),
    },
    edges={"grad": "#8d9bb3", "output": "#5c677a", "leaf": "#51cf66", "saved": "#ff922b"},
    storage=_STORAGE_DARK,
)


def style_key(attrs: Mapping[str, Any]) -> str:
    """Which style a node takes: one of :data:`NODE_KINDS`.

    A tensor is a green leaf only when it requires grad; ``requires_grad=False``
    (a constant, data, a detached copy) is ``no_grad``.  A tensor without the
    attribute counts as requiring grad (graphs built before it existed).
    """
    kind = attrs.get("kind")
    if kind == "tensor":
        if not attrs.get("requires_grad", True):
            return "no_grad"
        return "leaf" if attrs.get("is_leaf") else "tensor"
    return kind if kind in _RADIUS else "grad_fn"


def corner_radius(kind: Any, height: float) -> float:
    """The corner radius of a node's box; a tensor is a pill."""
    return _RADIUS.get(str(kind), height / 2)


def storage_colour(group: str, theme: Theme = LIGHT) -> str:
    """The colour of storage group ``group`` (``"S3"``); stable across steps."""
    digits = "".join(ch for ch in str(group) if ch.isdigit())
    index = int(digits) if digits else sum(map(ord, str(group)))
    colours = theme.storage or _STORAGE_LIGHT
    return colours[index % len(colours)]


def _rgb(hex_colour: str) -> tuple[int, int, int]:
    h = hex_colour.lstrip("#")
    if len(h) == 3:
        h = "".join(c * 2 for c in h)
    return int(h[0:2], 16), int(h[2:4], 16), int(h[4:6], 16)


@lru_cache(maxsize=2048)
def blend(a: str, b: str, t: float) -> str:
    """Hex colour ``t`` of the way from ``a`` to ``b`` (0 gives ``a``)."""
    ra, ga, ba = _rgb(a)
    rb, gb, bb = _rgb(b)
    return f"#{round(ra + (rb - ra) * t):02x}{round(ga + (gb - ga) * t):02x}{round(ba + (bb - ba) * t):02x}"


def is_dark_colour(hex_colour: str) -> bool:
    """True for a colour whose HSL lightness is under 128 of 255 (as ``QColor.lightness``)."""
    r, g, b = _rgb(hex_colour)
    return (max(r, g, b) + min(r, g, b)) / 2 < 128

