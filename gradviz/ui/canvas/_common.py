"""The canvas's constants (zoom, Z layers, thresholds of the big-graph paths) and small helpers."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QPainter, QPen
from PySide6.QtWidgets import (
    QGraphicsItem,
    QGraphicsScene,
    QGraphicsSceneHelpEvent,
    QStyleOptionGraphicsItem,
)

from gradviz.graph.fmt import fmt_value
from gradviz.graph.layout import DEFAULT_SPACING
from gradviz.graph.style import LIGHT, Theme
from gradviz.i18n import QT_TRANSLATE_NOOP
from gradviz.ui import theme

MIN_ZOOM = 0.02
MAX_ZOOM = 8.0
ZOOM_STEP = 1.25
FIT_MAX_ZOOM = 1.5
"""fit_to_view never magnifies past this: a three-node graph should not fill a screen."""
READABLE_ZOOM = 7.0 / 12.0
"""fit_to_view shrinks no further than this (12 px node text -> 7 px): a bigger graph is
shown at this zoom around its newest nodes, and the rest is a drag away."""
BULK_EDGE_THRESHOLD = 256
"""Above this many edges, edges are painted in bulk by bands (:class:`_EdgeBand`) instead of
one item each, and routed when first painted (GPT-2's 1,245 edges: those on screen). A
screen at a readable zoom shows about a hundred boxes: past a few screens most edges are
off screen when a graph arrives (a 4-level U-Net's 385: a quarter of them on screen),
and routing them all and making an item for each cost half of its first picture."""
EDGE_BAND = 1024.0
"""Height of the bands of the scene whose edges one bulk item paints (by their upper end)."""
LAZY_NODE_THRESHOLD = 256
"""Above this many nodes, nodes get an item only when on screen and readable or asked for
(:meth:`GraphCanvas.node_item`); tiles paint the others (the same picture: see
BULK_EDGE_THRESHOLD for why this low)."""
NODE_TILE = 1024.0
"""Side of the squares of the scene whose nodes one tile paints (a big graph)."""
MAX_LIVE_ITEMS = 3000
"""A big graph keeps at most about this many node items; far ones go back to their tiles."""
TEXT_LOD = 0.35
"""Below this level of detail nodes are plain filled rectangles without text."""
EMPTY_HINT = QT_TRANSLATE_NOOP("Canvas", "Step forward (F10) to build the graph")

#: the legend's names of the node kinds, as gradviz.graph.style writes them (the key the
#: window translates them by; tests/test_i18n.py checks each one has its entry)
_LEGEND_WORDS = (
    QT_TRANSLATE_NOOP("Legend", "op (grad_fn)"),
    QT_TRANSLATE_NOOP("Legend", "leaf, requires grad"),
    QT_TRANSLATE_NOOP("Legend", "computed tensor"),
    QT_TRANSLATE_NOOP("Legend", "tensor, no grad"),
    QT_TRANSLATE_NOOP("Legend", "saved for backward"),
    QT_TRANSLATE_NOOP("Legend", "module / chain"),
)
REGION_BAND = 168.0
"""Height of the bands that index edges by the region their route depends on."""

# Fixed Z layers: storage links < edges < carrying edges < nodes < labels.
Z_STORAGE = 0.0
Z_EDGE = 1.0
Z_EDGE_NEW = 2.0
Z_CARRY = 3.0
Z_NODE = 10.0
Z_NODE_HOT = 11.0
Z_LABEL = 20.0

_NODE_MARGIN = 9.0  # room around a box for the glow, the selection ring and the tabs
_LINE_H = DEFAULT_SPACING.line_height

EdgeKey = tuple[str, str]


# --------------------------------------------------------------------------- value text


def format_value(value: Any, max_chars: int = 26) -> str:
    """Short text for a gradient or tensor value: :func:`gradviz.graph.fmt.fmt_value`
    with room for an edge label (26 characters)."""
    return fmt_value(value, max_chars)


@lru_cache(maxsize=1024)
def _colour(hex_colour: str, alpha: int = 255) -> QColor:
    """``theme.qcolor``, made once per colour: shared, never change it."""
    return theme.qcolor(hex_colour, alpha)


@lru_cache(maxsize=1024)
def _brush(hex_colour: str, alpha: int = 255) -> QBrush:
    """A solid brush of this colour, made once: shared, never change it."""
    return QBrush(_colour(hex_colour, alpha))


@lru_cache(maxsize=1024)
def _pen(
    hex_colour: str,
    alpha: int = 255,
    width: float = 1.0,
    style: Qt.PenStyle = Qt.PenStyle.SolidLine,
    cosmetic: bool = False,
    cap: Qt.PenCapStyle = Qt.PenCapStyle.SquareCap,
) -> QPen:
    """``QPen(colour, width)`` with this style, cap and cosmetic flag, made once per
    combination (painting made a few pens per node): shared, never change it."""
    pen = QPen(_colour(hex_colour, alpha), width)
    if style != Qt.PenStyle.SolidLine:
        pen.setStyle(style)
    if cosmetic:
        pen.setCosmetic(True)
    if cap != Qt.PenCapStyle.SquareCap:
        pen.setCapStyle(cap)
    return pen


class _Scene(QGraphicsScene):
    """The canvas's scene; its items paint with its :attr:`theme`."""

    def __init__(self) -> None:
        super().__init__()
        self.theme: Theme = LIGHT

    def helpEvent(self, event: QGraphicsSceneHelpEvent) -> None:  # noqa: N802 (Qt API)
        # Node items write their tooltips when first asked (NodeItem.toolTip, a Python
        # method Qt's own lookup does not call): ask those under the pointer first.
        for item in self.items(event.scenePos()):
            ask = getattr(item, "toolTip", None)
            if ask is not None:
                ask()
        super().helpEvent(event)


def _theme_of(item: QGraphicsItem) -> Theme:
    scene = item.scene()
    return getattr(scene, "theme", LIGHT)


def _get(obj: Any, key: str, default: Any = None) -> Any:
    """Read ``key`` from a JSON dict or from a dataclass (BackwardPass/BackwardStep)."""
    if isinstance(obj, Mapping):
        return obj.get(key, default)
    return getattr(obj, key, default)


def _only_new_differs(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """The two attribute dicts differ at most in their "new" flag."""
    return old.keys() == new.keys() and all(
        old[k] == v for k, v in new.items() if k != "new"
    )


def _nodes_union(nodes: Iterable[Any], grow: float) -> QRectF:
    """The rectangle around the boxes of ``nodes`` (each grown by ``grow``)."""
    x0 = y0 = math.inf
    x1 = y1 = -math.inf
    for n in nodes:
        w, h = n.width / 2, n.height / 2
        if n.cx - w < x0:
            x0 = n.cx - w
        if n.cx + w > x1:
            x1 = n.cx + w
        if n.cy - h < y0:
            y0 = n.cy - h
        if n.cy + h > y1:
            y1 = n.cy + h
    if x0 > x1:
        return QRectF()
    return QRectF(x0 - grow, y0 - grow, x1 - x0 + 2 * grow, y1 - y0 + 2 * grow)


def _exposed_on_device(painter: QPainter, option: QStyleOptionGraphicsItem) -> QRectF:
    """The part of the item ``painter`` can reach: its exposed rect, cut to the paint
    device (``QGraphicsView.render`` exposes the whole item, however big)."""
    exposed = option.exposedRect
    device = painter.device()
    inverse, invertible = painter.worldTransform().inverted()
    if device is None or not invertible:
        return exposed
    reach = inverse.mapRect(QRectF(0, 0, device.width(), device.height()))
    return exposed.intersected(reach)
