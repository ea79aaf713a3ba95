"""Nodes: their records, boxes, the NodeItem drawn for one and the tiles that paint many."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QFontMetricsF, QPainter, QPainterPath, QPen
from PySide6.QtWidgets import QGraphicsItem, QStyleOptionGraphicsItem, QWidget

from gradviz.graph.layout import node_lines, node_size, shape_text, text_key
from gradviz.graph.records import Node, NodeKind
from gradviz.graph.render_svg import left_tab, node_colours, node_tooltip
from gradviz.graph.routing import badge_center, badge_width, port_span
from gradviz.graph.style import Theme, corner_radius, style_key
from gradviz.ui import theme
from gradviz.ui.display import sizing_attrs
from gradviz.ui.i18n import translate
from gradviz.ui.text import plain_tooltip

from ._common import (
    _LINE_H,
    _NODE_MARGIN,
    TEXT_LOD,
    Z_NODE,
    Z_NODE_HOT,
    _brush,
    _colour,
    _exposed_on_device,
    _nodes_union,
    _pen,
    _theme_of,
)

# --------------------------------------------------------------------------- fonts


@dataclass(frozen=True)
class _Fonts:
    label: Any
    label_metrics: QFontMetricsF
    body: Any
    tab: Any
    tab_metrics: QFontMetricsF
    badge: Any
    badge_metrics: QFontMetricsF
    edge: Any
    edge_metrics: QFontMetricsF


@lru_cache(maxsize=1)
def _fonts() -> _Fonts:
    label = theme.mono_font(12, bold=True)
    tab = theme.label_font(9, italic=True)
    badge = theme.label_font(9, bold=True)
    edge = theme.label_font(11, bold=True)
    return _Fonts(
        label,
        QFontMetricsF(label),
        theme.mono_font(12),
        tab,
        QFontMetricsF(tab),
        badge,
        QFontMetricsF(badge),
        edge,
        QFontMetricsF(edge),
    )


# --------------------------------------------------------------------------- nodes


def _tooltip(node_id: str, attrs: Mapping[str, Any]) -> str:
    rows = node_tooltip(node_id, attrs)
    node = Node(attrs)
    if node.kind is NodeKind.GROUP:
        rows.append(translate("Canvas", "double-click to expand"))
    elif node.statement is not None:
        rows.append(
            translate("Canvas", "created by statement {n} (double-click to show)").format(
                n=node.statement
            )
        )
    return "\n".join(rows)


_SELECTED, _EXECUTING, _EXECUTED = 1, 2, 4
_FLAG_BITS = {"selected": _SELECTED, "executing": _EXECUTING, "executed": _EXECUTED}
_HOT = _SELECTED | _EXECUTING


class _Shape:
    """What a node's text makes of its box: the lines, the size, the corners and the
    border edges attach to. Nodes that read alike share one (a chain of 50,000
    SinBackward0 boxes measures its text once)."""

    __slots__ = ("bounds", "height", "lines", "radius", "rect", "span", "width")

    def __init__(self, attrs: Mapping[str, Any]):
        sized = sizing_attrs(attrs)  # a group's second line: "65 nodes"
        self.lines: list[str] = node_lines(sized)
        w, h = node_size(sized)
        kind = Node(attrs).kind
        self.width, self.height = w, h
        self.radius = corner_radius(kind, h)
        #: the width along the top/bottom border where edges attach (the router reads it)
        self.span = port_span(kind, w, h)
        self.rect = QRectF(-w / 2, -h / 2, w, h)
        self.bounds = self.rect.adjusted(-_NODE_MARGIN, -_NODE_MARGIN, _NODE_MARGIN, _NODE_MARGIN)


_GROUP = NodeKind.GROUP
_SHAPES: dict[Any, _Shape] = {}
_SHAPES_MAX = 50_000


def _shape_of(attrs: Mapping[str, Any]) -> _Shape:
    """The (shared) shape of a node with these attributes: what
    :func:`gradviz.graph.layout.node_lines` and ``node_size`` read is the key."""
    key = text_key(attrs)
    if key[0] == _GROUP:
        return _Shape(attrs)  # its caption counts its members: measured each time
    try:
        found = _SHAPES.get(key)
    except TypeError:  # an unhashable value somewhere: measure it, do not keep it
        return _Shape(attrs)
    if found is None:
        if len(_SHAPES) >= _SHAPES_MAX:
            _SHAPES.clear()
        found = _SHAPES[key] = _Shape(attrs)
    return found


class _Node:
    """One node of the canvas's graph: its attributes (the graph's own dict, read only),
    its place and box, its transient state, and the item drawing it when it has one.

    The router reads it as a :class:`gradviz.graph.routing.Box` (``cx``, ``cy``,
    ``width``, ``height``, ``span``)."""

    __slots__ = (
        "badge", "cx", "cy", "flags", "height", "item", "key", "node_id", "rec", "shape",
        "span", "tile", "width",
    )

    def __init__(self, node_id: str, attrs: Mapping[str, Any]):
        self.node_id = node_id
        self.cx = 0.0
        self.cy = 0.0
        self.flags = 0
        self.badge: str | None = None
        self.item: NodeItem | None = None
        self.tile: _NodeTile | None = None
        self.shape: _Shape | None = None
        self.set_attrs(attrs)

    def set_attrs(self, attrs: Mapping[str, Any]) -> bool:
        """Take these attributes; True when the box changed size."""
        self.rec = Node(attrs, self.node_id)
        self.key = style_key(attrs)
        shape = _shape_of(attrs)
        old = self.shape
        if shape is old:
            return False
        resized = old is None or (shape.width, shape.height) != (old.width, old.height)
        if resized and self.item is not None:
            self.item.prepareGeometryChange()
        self.shape = shape
        self.width, self.height, self.span = shape.width, shape.height, shape.span
        return resized

    @property
    def attrs(self) -> Mapping[str, Any]:
        """The graph's own attribute dict (read only)."""
        return self.rec.attrs

    @attrs.setter
    def attrs(self, attrs: Mapping[str, Any]) -> None:
        """Take attributes that change nothing drawn but the "new" glow (no re-measure)."""
        self.rec = Node(attrs, self.node_id)

    @property
    def kind(self) -> str:
        return self.rec.kind_text

    def state(self) -> set[str]:
        out = {name for name, bit in _FLAG_BITS.items() if self.flags & bit}
        rec = self.rec
        if rec.new:
            out.add("new")
        if rec.freed:
            out.add("freed")
        if rec.stale:
            out.add("stale")
        if rec.kind is NodeKind.GROUP:
            out.add("group")
        return out

    def hot(self) -> bool:
        """Drawn above the others: selected, running, or new this step."""
        return bool(self.flags & _HOT or self.rec.new)

    def badge_center(self) -> tuple[float, float]:
        """Where the storage badge sits, relative to the node's centre (links end there)."""
        return badge_center(self.rec.kind, self.width, self.height, self.badge or "S0")

    def scene_rect(self) -> QRectF:
        """The box and the room around it for the glow, ring and tabs, in the scene."""
        return self.shape.bounds.translated(self.cx, self.cy)  # type: ignore[union-attr]

    def box(self) -> tuple[float, float, float, float]:
        """(left, top, right, bottom) of the box in the scene."""
        w, h = self.width / 2, self.height / 2
        return self.cx - w, self.cy - h, self.cx + w, self.cy + h


def _search_text(attrs: Mapping[str, Any]) -> str:
    node = Node(attrs)
    parts = [node.label, *node.vars]
    if node.module:
        parts.append(node.module)
    shape = node.shape
    if shape is not None:
        parts += [shape_text(shape), str(list(shape)) if isinstance(shape, list) else ""]
    return "\n".join(parts).lower()


class NodeItem(QGraphicsItem):
    """One node of the graph: a box (grad_fn, AccumulateGrad, saved) or a pill (tensor).

    The item's origin is the centre of its box, exactly the layout's position,
    and the box has exactly :func:`gradviz.graph.layout.node_size`. On a big graph
    the canvas makes items only for the nodes on screen and those asked for
    (:meth:`GraphCanvas.node_item`); tiles paint the rest with the same code.
    """

    def __init__(self, node_id: str, attrs: Mapping[str, Any] | None = None, *,
                 node: _Node | None = None):
        super().__init__()
        if node is None:
            node = _Node(node_id, dict(attrs or {}))
        self._node = node
        #: the tooltip is written when first asked for (:meth:`toolTip`; the canvas's
        #: scene asks before showing one): most nodes are never hovered, and writing
        #: them all cost a fifth of building a 400-node scene
        self._tip_stale = True
        node.item = self
        # no picture cache until the item has been painted once (GraphCanvas turns it on
        # after a paint): painting through a fresh cache costs more than painting
        self.setPos(node.cx, node.cy)
        self._update_z()

    def refresh(self, tooltip: bool = True) -> None:
        """Show the node's attributes as they are now (``tooltip``: they changed beyond
        the "new" flag, so the tooltip is written again, when next asked for)."""
        if tooltip:
            self._tip_stale = True
        self._update_z()
        self.update()

    def toolTip(self) -> str:  # noqa: N802 (Qt API)
        """The node's tooltip, written now if its attributes changed since."""
        if self._tip_stale:
            self._tip_stale = False
            node = self._node
            self.setToolTip(plain_tooltip(_tooltip(node.node_id, node.attrs)))
        return super().toolTip()

    # --- the node's data -------------------------------------------------------------

    @property
    def node_id(self) -> str:
        return self._node.node_id

    @property
    def attrs(self) -> Mapping[str, Any]:
        return self._node.attrs

    @property
    def width(self) -> float:
        return self._node.width

    @property
    def height(self) -> float:
        return self._node.height

    @property
    def span(self) -> float:
        return self._node.span

    @property
    def cx(self) -> float:
        return self._node.cx

    @property
    def cy(self) -> float:
        return self._node.cy

    @property
    def _key(self) -> str:
        return self._node.key

    # --- state ------------------------------------------------------------------

    @property
    def state(self) -> set[str]:
        """Among {"new", "selected", "executing", "executed", "freed", "stale", "group"}.

        "group" marks a box that stands for a collapsed module or chain.
        """
        return self._node.state()

    @property
    def kind(self) -> str:
        return self._node.kind

    @property
    def storage_badge(self) -> str | None:
        """The storage group shown on the node ("S3") when it shares memory, else None."""
        return self._node.badge

    def set_attrs(self, attrs: Mapping[str, Any]) -> None:
        node = self._node
        old = node.attrs
        if old and old.keys() == attrs.keys() and all(
            old[k] == v for k, v in attrs.items() if k != "new"
        ):
            # only the "new" glow changed: no text, size or tooltip to redo
            node.attrs = dict(attrs)
            self.refresh(tooltip=False)
            return
        node.set_attrs(dict(attrs))
        self.refresh()

    def set_flag(self, flag: str, on: bool) -> None:
        node, bit = self._node, _FLAG_BITS[flag]
        if bool(node.flags & bit) == on:
            return
        node.flags = node.flags | bit if on else node.flags & ~bit
        self.refresh(tooltip=False)

    def set_badge(self, group: str | None) -> None:
        if group != self._node.badge:
            self._node.badge = group
            self.update()

    def set_center(self, x: float, y: float) -> None:
        node = self._node
        if (x, y) != (node.cx, node.cy):
            node.cx, node.cy = x, y
            self.setPos(x, y)

    def badge_center(self) -> tuple[float, float]:
        """Where the storage badge sits, relative to the node's centre (links end there)."""
        return self._node.badge_center()

    def _update_z(self) -> None:
        self.setZValue(Z_NODE_HOT if self._node.hot() else Z_NODE)

    def search_text(self) -> str:
        return _search_text(self._node.attrs)

    # --- geometry ----------------------------------------------------------------

    def boundingRect(self) -> QRectF:  # noqa: N802 (Qt API)
        return self._node.shape.bounds  # type: ignore[union-attr]

    def shape(self) -> QPainterPath:
        shape = self._node.shape
        assert shape is not None
        path = QPainterPath()
        path.addRoundedRect(shape.rect, shape.radius, shape.radius)
        return path

    def port_span(self) -> float:
        """Width along the top/bottom border where edges may attach (the flat part)."""
        return self._node.span

    # --- painting ----------------------------------------------------------------

    def paint(
        self,
        painter: QPainter,
        option: QStyleOptionGraphicsItem,
        widget: QWidget | None = None,
    ) -> None:
        lod = option.levelOfDetailFromTransform(painter.worldTransform())
        _paint_node(painter, self._node, _theme_of(self), lod)


def _node_colours(node: _Node, t: Theme) -> tuple[str, str, str]:
    """Fill, border and text colour for the node's current state."""
    fill, stroke, text = node_colours(node.attrs, t)
    if node.flags & _EXECUTED:
        fill = theme.blend(fill, t.executed_tint, 0.45)
        stroke = theme.blend(stroke, t.backward, 0.55)
    if node.flags & _EXECUTING:
        fill = t.backward_fill
        stroke = t.backward
    return fill, stroke, text


def _flat_colour(node: _Node, t: Theme) -> str:
    """The colour of a node drawn as a flat rectangle (tiny on screen): a shade toward
    the border, or the pale fills vanish."""
    fill, stroke, _ = _node_colours(node, t)
    return theme.blend(fill, stroke, 0.35)


def _ring_colour(node: _Node, t: Theme) -> str | None:
    """The ring a tiny node gets for what matters: running, selected or new."""
    if node.flags & _EXECUTING:
        return t.backward
    if node.flags & _SELECTED:
        return t.selection
    if node.rec.new:
        return t.new
    return None


#: the glow rings' width around a new or running node, in scene units
RING_WIDTH = 3.0
#: the widest translucent stroke (device pixels) Qt's raster engine draws on its fast path
_FAST_STROKE_PX = 0.99


def _paint_node(painter: QPainter, node: _Node, t: Theme, lod: float) -> None:
    """Draw ``node`` centred on the painter's origin (a NodeItem and a tile both draw so)."""
    shape = node.shape
    assert shape is not None
    rec, flags = node.rec, node.flags
    rect = shape.rect
    if lod < TEXT_LOD:
        # Tiny on screen: a flat rectangle, plus a cosmetic ring for what matters.
        painter.fillRect(rect, _colour(_flat_colour(node, t)))
        ring = _ring_colour(node, t)
        if ring is not None:
            painter.setPen(_pen(ring, 255, 2.0, cosmetic=True))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRect(rect)
        return

    fill, stroke, text_colour = _node_colours(node, t)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
    r = shape.radius
    kind = rec.kind
    pill = kind is NodeKind.TENSOR
    group = kind is NodeKind.GROUP
    if group:
        # A stack of cards: the boxes it hides peek out behind it.
        for offset, shade in ((7.5, 0.45), (4.0, 0.2)):
            painter.setPen(_pen(theme.blend(stroke, t.background, shade), 255, 1.1))
            painter.setBrush(_brush(theme.blend(fill, t.background, shade)))
            painter.drawRoundedRect(rect.translated(offset, -offset), r, r)

    def rounded(grow: float) -> None:
        rr = rect.adjusted(-grow, -grow, grow, grow)
        radius = rr.height() / 2 if pill else r + grow
        painter.drawRoundedRect(rr, radius, radius)

    def glow_ring(colour: str, alpha: int, grow: float) -> None:
        """A translucent band RING_WIDTH wide, ``grow`` out from the box.

        Qt's raster engine strokes a translucent pen wider than a device pixel through
        its general path (70 us a ring, measured: a fifth of a new node's paint at a
        lesson's zoom) and one a pixel wide or less through its fast one (9 us). At the
        zooms where the band is 1-3 pixels wide it is drawn as that many thin strokes
        side by side (the pixels differ by 23/255 at most, checked at four zooms)."""
        strokes = math.ceil(RING_WIDTH * lod / _FAST_STROKE_PX)
        if not 1 < strokes <= 3:
            painter.setPen(_pen(colour, alpha, RING_WIDTH))
            rounded(grow)
            return
        width = RING_WIDTH / strokes
        painter.setPen(_pen(colour, alpha, width))
        for k in range(strokes):
            rounded(grow - RING_WIDTH / 2 + (k + 0.5) * width)

    new = rec.new
    painter.setBrush(Qt.BrushStyle.NoBrush)
    if flags & _EXECUTING:
        for grow, alpha in ((6.0, 45), (3.5, 90)):
            glow_ring(t.backward, alpha, grow)
    elif new:
        for grow, alpha in ((6.0, 40), (3.5, 85)):
            glow_ring(t.new, alpha, grow)
    if flags & _SELECTED:
        painter.setPen(_pen(t.selection, 255, 2.5))
        rounded(4.5)

    # The body.
    width = 1.3
    if new:
        stroke, width = t.new, 2.2
    if flags & _EXECUTING:
        stroke, width = t.backward, 2.6
    dashed = Qt.PenStyle.DashLine if rec.freed else Qt.PenStyle.SolidLine
    painter.setPen(_pen(stroke, 255, width, dashed))
    painter.setBrush(_brush(fill))
    rounded(0.0)
    if group:
        # A double border says "more inside".
        painter.setPen(_pen(stroke, 150, 0.9))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        rounded(-2.5)

    # The text: label in bold, then variables / shape.
    fonts = _fonts()
    lines = shape.lines
    top = -len(lines) * _LINE_H / 2
    left, text_w = rect.left() + 4, rect.width() - 8
    for i, line in enumerate(lines):
        painter.setFont(fonts.label if i == 0 else fonts.body)
        painter.setPen(_pen(text_colour if i == 0 else t.muted_text))
        painter.drawText(
            QRectF(left, top + i * _LINE_H, text_w, _LINE_H), Qt.AlignmentFlag.AlignCenter, line
        )

    # Tabs on the border: what the box is / its state (left), its storage group (right).
    tab = left_tab(node.node_id, rec.attrs, t)
    inset = node.height / 2 if pill else max(r, 4.0)
    if tab is not None:
        text, colour, tab_fill = tab
        _draw_tab(painter, rect.left() + inset - 2, rect.top(), text, colour, tab_fill,
                  italic=True)
    badge = node.badge
    if badge:
        colour = theme.storage_colour(badge, t)
        cx, cy = node.badge_center()
        _draw_tab(
            painter,
            cx - badge_width(badge) / 2,
            cy,
            badge,
            colour,
            colour,
            italic=False,
            text_colour="#ffffff",
            width=badge_width(badge),
        )


def _draw_tab(
    painter: QPainter,
    x: float,
    y_mid: float,
    text: str,
    colour: str,
    fill: str,
    *,
    italic: bool,
    text_colour: str | None = None,
    width: float | None = None,
) -> None:
    fonts = _fonts()
    font, fm = (fonts.tab, fonts.tab_metrics) if italic else (fonts.badge, fonts.badge_metrics)
    w = width if width is not None else _advance(fm, text) + 8
    h = 12.0
    box = QRectF(x, y_mid - h / 2, w, h)
    painter.setPen(_pen(colour))
    painter.setBrush(_brush(fill))
    painter.drawRoundedRect(box, h / 2, h / 2)
    painter.setFont(font)
    painter.setPen(_pen(text_colour or colour))
    painter.drawText(box, Qt.AlignmentFlag.AlignCenter, text)


_ADVANCES: dict[tuple[int, str], float] = {}


def _advance(fm: QFontMetricsF, text: str) -> float:
    """``fm.horizontalAdvance(text)``, measured once per text ("saved" on 50,000 tabs)."""
    key = (id(fm), text)
    found = _ADVANCES.get(key)
    if found is None:
        if len(_ADVANCES) > 4096:
            _ADVANCES.clear()
        found = _ADVANCES[key] = fm.horizontalAdvance(text)
    return found


class _NodeTile(QGraphicsItem):
    """The nodes of a big graph whose centres lie in one square of the scene, drawn by
    one item: flat rectangles in a few calls when they are tiny on screen, each node
    in full (:func:`_paint_node`) otherwise. A node with its own :class:`NodeItem`
    (on screen and readable, or asked for) is left to it."""

    def __init__(self, key: tuple[int, int]):
        super().__init__()
        self.key = key
        self.members: dict[str, _Node] = {}
        self._bounds = QRectF()
        #: the flat rectangles by colour and the rings, for the theme they were made for
        self._flat: tuple[Theme, list[tuple[Any, list[QRectF]]], list[tuple[Any, list[QRectF]]]] | None = None
        self.setZValue(Z_NODE)
        self.setAcceptedMouseButtons(Qt.MouseButton.NoButton)
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemUsesExtendedStyleOption, True)

    def refresh(self) -> None:
        """The members, their places or looks changed: new bounds, drawn again."""
        bounds = _nodes_union(self.members.values(), _NODE_MARGIN)
        if bounds != self._bounds:
            self.prepareGeometryChange()
            self._bounds = bounds
        self._flat = None
        self.update()

    def recolour(self) -> None:
        """The theme or many members' looks changed: drawn again whole, same bounds."""
        self._flat = None
        self.update()

    def restyled(self, node: _Node) -> None:
        """One member's look changed (not its place or size)."""
        self._flat = None
        self.update(node.scene_rect())

    def boundingRect(self) -> QRectF:  # noqa: N802 (Qt API)
        return self._bounds

    def shape(self) -> QPainterPath:
        return QPainterPath()  # never hit: the canvas finds nodes by their boxes

    def _flat_lists(self, t: Theme) -> tuple[list, list]:
        flat = self._flat
        if flat is None or flat[0] is not t:
            fills: dict[str, list[QRectF]] = {}
            rings: dict[str, list[QRectF]] = {}
            for node in self.members.values():
                if node.item is not None:
                    continue
                rect = node.shape.rect.translated(node.cx, node.cy)  # type: ignore[union-attr]
                fills.setdefault(_flat_colour(node, t), []).append(rect)
                ring = _ring_colour(node, t)
                if ring is not None:
                    rings.setdefault(ring, []).append(rect)
            flat = self._flat = (
                t,
                [(theme.qcolor(c), rects) for c, rects in fills.items()],
                [(theme.qcolor(c), rects) for c, rects in rings.items()],
            )
        return flat[1], flat[2]

    def paint(
        self,
        painter: QPainter,
        option: QStyleOptionGraphicsItem,
        widget: QWidget | None = None,
    ) -> None:
        t = _theme_of(self)
        lod = option.levelOfDetailFromTransform(painter.worldTransform())
        if lod < TEXT_LOD:
            fills, rings = self._flat_lists(t)
            painter.setPen(Qt.PenStyle.NoPen)
            for colour, rects in fills:
                painter.setBrush(colour)
                painter.drawRects(rects)
            painter.setBrush(Qt.BrushStyle.NoBrush)
            for colour, rects in rings:
                pen = QPen(colour, 2.0)
                pen.setCosmetic(True)
                painter.setPen(pen)
                painter.drawRects(rects)
            return
        exposed = _exposed_on_device(painter, option)
        x0, y0, x1, y1 = exposed.left(), exposed.top(), exposed.right(), exposed.bottom()
        m = _NODE_MARGIN
        later: list[_Node] = []
        for node in self.members.values():
            if node.item is not None:
                continue
            w, h = node.width / 2 + m, node.height / 2 + m
            if node.cx + w < x0 or node.cx - w > x1 or node.cy + h < y0 or node.cy - h > y1:
                continue
            if node.hot():
                later.append(node)  # above the others, as their items would be
                continue
            painter.translate(node.cx, node.cy)
            _paint_node(painter, node, t, lod)
            painter.translate(-node.cx, -node.cy)
        for node in later:
            painter.translate(node.cx, node.cy)
            _paint_node(painter, node, t, lod)
            painter.translate(-node.cx, -node.cy)


# --------------------------------------------------------------------------- edges

# An edge's geometry as plain floats (cheap to compare between steps); see
# gradviz.graph.routing: ("c", ...) a curve between rows, ("l", ...) a line within a row,
# ("u", ...) a U under a row, ("r", ...) a route through the gaps of the rows between.
Geometry = tuple[Any, ...]
