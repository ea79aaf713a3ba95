"""The graph canvas: the real autograd graph, laid out by the core, drawn fast.

:class:`GraphCanvas` receives the kernel's JSON (``graph`` and ``positions``
of a state message) and speaks in node ids; it knows nothing about torch.

It draws with the rules every gradviz picture shares: the colours of
:mod:`gradviz.core.style` (the dark theme when the palette is dark), edges
routed around boxes by :mod:`gradviz.core.routing`, values written by
:mod:`gradviz.core.fmt`; its SVG export *is* :func:`gradviz.core.render_svg.render_svg`.

Speed (STYLE.md section 4): the scene is updated in place on every step
(items whose ids persist are kept and only moved or restyled), nodes are
cached in device coordinates and drop their text when tiny on screen, edges
sit on a fixed Z layer below the nodes and, past
:data:`BULK_EDGE_THRESHOLD` edges, are painted in bulk by a few path items
instead of one item each. A step re-routes only the edges whose route a
changed box can touch. The legend sits in a strip below the view (a viewport
margin), so it never covers the graph; the empty-graph hint is a child
widget of the view, so scrolling never repaints it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from PySide6.QtCore import QEvent, QPoint, QPointF, QRect, QRectF, Qt, Signal
from PySide6.QtGui import (
    QBrush,
    QContextMenuEvent,
    QFontMetricsF,
    QKeyEvent,
    QMouseEvent,
    QPainter,
    QPainterPath,
    QPaintEvent,
    QPen,
    QPolygonF,
    QResizeEvent,
    QShowEvent,
    QTransform,
    QWheelEvent,
)
from PySide6.QtWidgets import (
    QGraphicsItem,
    QGraphicsScene,
    QGraphicsView,
    QLabel,
    QStyleOptionGraphicsItem,
    QWidget,
)

from gradviz.core.delta import GraphChanges
from gradviz.core.fmt import fmt_value
from gradviz.core.layout import DEFAULT_SPACING, node_lines, node_size, shape_text
from gradviz.core.render_svg import left_tab, node_colours, node_tooltip, render_svg
from gradviz.core.routing import (
    Box,
    Obstacles,
    arrow_polygon,
    badge_center,
    badge_width,
    edge_geometries,
    edge_path,
    geometry_midpoint,
    geometry_segments,
    port_span,
    storage_link_curve,
    storage_link_pairs,
)
from gradviz.core.style import LIGHT, Theme, corner_radius, style_key
from gradviz.ui import theme
from gradviz.ui.display import sizing_attrs
from gradviz.ui.text import plain_label, plain_tooltip

__all__ = [
    "BULK_EDGE_THRESHOLD",
    "FIT_MAX_ZOOM",
    "MAX_ZOOM",
    "MIN_ZOOM",
    "READABLE_ZOOM",
    "GraphCanvas",
    "NodeItem",
    "format_value",
]

MIN_ZOOM = 0.02
MAX_ZOOM = 8.0
ZOOM_STEP = 1.25
FIT_MAX_ZOOM = 1.5
"""fit_to_view never magnifies past this: a three-node graph should not fill a screen."""
READABLE_ZOOM = 7.0 / 12.0
"""fit_to_view shrinks no further than this (12 px node text -> 7 px): a bigger graph is
shown at this zoom around its newest nodes, and the rest is a drag away."""
BULK_EDGE_THRESHOLD = 1500
"""Above this many edges, edges are painted by a few bulk items instead of one item each."""
BULK_CHUNK = 256
"""Edges per bulk item: small enough that the scene index culls what is off screen."""
TEXT_LOD = 0.35
"""Below this level of detail nodes are plain filled rectangles without text."""
EMPTY_HINT = "Step forward (F10) to build the graph"
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
    """Short text for a gradient or tensor value: :func:`gradviz.core.fmt.fmt_value`
    with room for an edge label (26 characters)."""
    return fmt_value(value, max_chars)


class _Scene(QGraphicsScene):
    """The canvas's scene; its items paint with its :attr:`theme`."""

    def __init__(self) -> None:
        super().__init__()
        self.theme: Theme = LIGHT


def _theme_of(item: QGraphicsItem) -> Theme:
    scene = item.scene()
    return getattr(scene, "theme", LIGHT)


def _get(obj: Any, key: str, default: Any = None) -> Any:
    """Read ``key`` from a JSON dict or from a dataclass (BackwardPass/BackwardStep)."""
    if isinstance(obj, Mapping):
        return obj.get(key, default)
    return getattr(obj, key, default)


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
    if attrs.get("kind") == "group":
        rows.append("double-click to expand")
    elif attrs.get("statement") is not None:
        rows.append(f"created by statement {attrs['statement']} (double-click to show)")
    return "\n".join(rows)


class NodeItem(QGraphicsItem):
    """One node of the graph: a box (grad_fn, AccumulateGrad, saved) or a pill (tensor).

    The item's origin is the centre of its box, exactly the layout's position,
    and the box has exactly :func:`gradviz.core.layout.node_size`.
    """

    def __init__(self, node_id: str, attrs: Mapping[str, Any]):
        super().__init__()
        self.node_id = node_id
        self.attrs: dict[str, Any] = {}
        self._flags: set[str] = set()
        self._badge: str | None = None
        self._rect = QRectF()
        self._bounds = QRectF()
        self.width = 0.0
        self.height = 0.0
        self.span = 0.0
        self.cx = 0.0
        self.cy = 0.0
        self.setZValue(Z_NODE)
        self.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        self.set_attrs(attrs)

    # --- state ------------------------------------------------------------------

    @property
    def state(self) -> set[str]:
        """Among {"new", "selected", "executing", "executed", "freed", "stale", "group"}.

        "group" marks a box that stands for a collapsed module or chain.
        """
        out = set(self._flags)
        if self.attrs.get("new"):
            out.add("new")
        if self.attrs.get("freed"):
            out.add("freed")
        if self.attrs.get("stale"):
            out.add("stale")
        if self.attrs.get("kind") == "group":
            out.add("group")
        return out

    @property
    def kind(self) -> str:
        return str(self.attrs.get("kind", ""))

    @property
    def storage_badge(self) -> str | None:
        """The storage group shown on the node ("S3") when it shares memory, else None."""
        return self._badge

    def set_attrs(self, attrs: Mapping[str, Any]) -> None:
        old = self.attrs
        if old and old.keys() == attrs.keys() and all(
            old[k] == v for k, v in attrs.items() if k != "new"
        ):
            # only the "new" glow changed (every node, the step after a run): no text,
            # size or tooltip to redo
            self.attrs = dict(attrs)
            self._update_z()
            self.update()
            return
        self.attrs = dict(attrs)
        self._key = style_key(self.attrs)
        sized = sizing_attrs(self.attrs)  # a group's second line: "65 nodes"
        self._lines = node_lines(sized)
        w, h = node_size(sized)
        if (w, h) != (self.width, self.height):
            self.prepareGeometryChange()
            self.width, self.height = w, h
            self._rect = QRectF(-w / 2, -h / 2, w, h)
            self._bounds = self._rect.adjusted(
                -_NODE_MARGIN, -_NODE_MARGIN, _NODE_MARGIN, _NODE_MARGIN
            )
        kind = self.attrs.get("kind")
        self._radius = corner_radius(kind, h)
        #: the width along the top/bottom border where edges attach (the router reads it)
        self.span = port_span(kind, w, h)
        self.setToolTip(plain_tooltip(_tooltip(self.node_id, self.attrs)))
        self._update_z()
        self.update()

    def set_flag(self, flag: str, on: bool) -> None:
        if (flag in self._flags) == on:
            return
        if on:
            self._flags.add(flag)
        else:
            self._flags.discard(flag)
        self._update_z()
        self.update()

    def set_badge(self, group: str | None) -> None:
        if group != self._badge:
            self._badge = group
            self.update()

    def set_center(self, x: float, y: float) -> None:
        if (x, y) != (self.cx, self.cy):
            self.cx, self.cy = x, y
            self.setPos(x, y)

    def badge_center(self) -> tuple[float, float]:
        """Where the storage badge sits, relative to the node's centre (links end there)."""
        return badge_center(self.attrs.get("kind"), self.width, self.height, self._badge or "S0")

    def _update_z(self) -> None:
        hot = self._flags & {"selected", "executing"} or self.attrs.get("new")
        self.setZValue(Z_NODE_HOT if hot else Z_NODE)

    def search_text(self) -> str:
        parts = [str(self.attrs.get("label", "")), *(str(v) for v in self.attrs.get("vars") or [])]
        if self.attrs.get("module"):
            parts.append(str(self.attrs["module"]))
        shape = self.attrs.get("shape")
        if shape is not None:
            parts += [shape_text(shape), str(list(shape)) if isinstance(shape, list) else ""]
        return "\n".join(parts).lower()

    # --- geometry ----------------------------------------------------------------

    def boundingRect(self) -> QRectF:  # noqa: N802 (Qt API)
        return self._bounds

    def shape(self) -> QPainterPath:
        path = QPainterPath()
        path.addRoundedRect(self._rect, self._radius, self._radius)
        return path

    def port_span(self) -> float:
        """Width along the top/bottom border where edges may attach (the flat part)."""
        return self.span

    # --- painting ----------------------------------------------------------------

    def _colours(self, t: Theme) -> tuple[str, str, str]:
        """Fill, border and text colour for the current state."""
        fill, stroke, text = node_colours(self.attrs, t)
        if "executed" in self._flags:
            fill = theme.blend(fill, t.executed_tint, 0.45)
            stroke = theme.blend(stroke, t.backward, 0.55)
        if "executing" in self._flags:
            fill = t.backward_fill
            stroke = t.backward
        return fill, stroke, text

    def paint(
        self,
        painter: QPainter,
        option: QStyleOptionGraphicsItem,
        widget: QWidget | None = None,
    ) -> None:
        t = _theme_of(self)
        fill, stroke, text_colour = self._colours(t)
        lod = option.levelOfDetailFromTransform(painter.worldTransform())
        rect = self._rect
        if lod < TEXT_LOD:
            # Tiny on screen: a flat rectangle (a shade toward the border, or the pale
            # fills vanish), plus a cosmetic ring for what matters.
            painter.fillRect(rect, theme.qcolor(theme.blend(fill, stroke, 0.35)))
            ring = None
            if "executing" in self._flags:
                ring = t.backward
            elif "selected" in self._flags:
                ring = t.selection
            elif self.attrs.get("new"):
                ring = t.new
            if ring is not None:
                pen = QPen(theme.qcolor(ring), 2.0)
                pen.setCosmetic(True)
                painter.setPen(pen)
                painter.setBrush(Qt.BrushStyle.NoBrush)
                painter.drawRect(rect)
            return

        painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        r = self._radius
        pill = self.attrs.get("kind") == "tensor"
        group = self.attrs.get("kind") == "group"
        if group:
            # A stack of cards: the boxes it hides peek out behind it.
            for offset, shade in ((7.5, 0.45), (4.0, 0.2)):
                painter.setPen(QPen(theme.qcolor(theme.blend(stroke, t.background, shade)), 1.1))
                painter.setBrush(theme.qcolor(theme.blend(fill, t.background, shade)))
                painter.drawRoundedRect(rect.translated(offset, -offset), r, r)

        def rounded(grow: float) -> None:
            rr = rect.adjusted(-grow, -grow, grow, grow)
            radius = rr.height() / 2 if pill else r + grow
            painter.drawRoundedRect(rr, radius, radius)

        painter.setBrush(Qt.BrushStyle.NoBrush)
        if "executing" in self._flags:
            for grow, alpha in ((6.0, 45), (3.5, 90)):
                painter.setPen(QPen(theme.qcolor(t.backward, alpha), 3.0))
                rounded(grow)
        elif self.attrs.get("new"):
            for grow, alpha in ((6.0, 40), (3.5, 85)):
                painter.setPen(QPen(theme.qcolor(t.new, alpha), 3.0))
                rounded(grow)
        if "selected" in self._flags:
            painter.setPen(QPen(theme.qcolor(t.selection), 2.5))
            rounded(4.5)

        # The body.
        width = 1.3
        if self.attrs.get("new"):
            stroke, width = t.new, 2.2
        if "executing" in self._flags:
            stroke, width = t.backward, 2.6
        pen = QPen(theme.qcolor(stroke), width)
        if self.attrs.get("freed"):
            pen.setStyle(Qt.PenStyle.DashLine)
        painter.setPen(pen)
        painter.setBrush(theme.qcolor(fill))
        rounded(0.0)
        if group:
            # A double border says "more inside".
            painter.setPen(QPen(theme.qcolor(stroke, 150), 0.9))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            rounded(-2.5)

        # The text: label in bold, then variables / shape.
        fonts = _fonts()
        n = len(self._lines)
        top = -n * _LINE_H / 2
        text_rect = rect.adjusted(4, 0, -4, 0)
        for i, line in enumerate(self._lines):
            painter.setFont(fonts.label if i == 0 else fonts.body)
            colour = text_colour if i == 0 else t.muted_text
            painter.setPen(theme.qcolor(colour))
            line_rect = QRectF(text_rect.left(), top + i * _LINE_H, text_rect.width(), _LINE_H)
            painter.drawText(line_rect, Qt.AlignmentFlag.AlignCenter, line)

        # Tabs on the border: what the box is / its state (left), its storage group (right).
        tab = left_tab(self.node_id, self.attrs, t)
        inset = self.height / 2 if pill else max(r, 4.0)
        if tab is not None:
            text, colour, tab_fill = tab
            self._draw_tab(painter, rect.left() + inset - 2, rect.top(), text, colour, tab_fill,
                           italic=True)
        if self._badge:
            colour = theme.storage_colour(self._badge, t)
            cx, cy = self.badge_center()
            self._draw_tab(
                painter,
                cx - badge_width(self._badge) / 2,
                cy,
                self._badge,
                colour,
                colour,
                italic=False,
                text_colour="#ffffff",
                width=badge_width(self._badge),
            )

    @staticmethod
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
        w = width if width is not None else fm.horizontalAdvance(text) + 8
        h = 12.0
        box = QRectF(x, y_mid - h / 2, w, h)
        painter.setPen(QPen(theme.qcolor(colour), 1.0))
        painter.setBrush(theme.qcolor(fill))
        painter.drawRoundedRect(box, h / 2, h / 2)
        painter.setFont(font)
        painter.setPen(theme.qcolor(text_colour or colour))
        painter.drawText(box, Qt.AlignmentFlag.AlignCenter, text)


# --------------------------------------------------------------------------- edges

# An edge's geometry as plain floats (cheap to compare between steps); see
# gradviz.core.routing: ("c", ...) a curve between rows, ("l", ...) a line within a row,
# ("u", ...) a U under a row, ("r", ...) a route through the gaps of the rows between.
Geometry = tuple[Any, ...]


def _add_geometry(path: QPainterPath, arrows: QPainterPath | None, g: Geometry) -> None:
    for cmd, c in geometry_segments(g):
        if cmd == "M":
            path.moveTo(c[0], c[1])
        elif cmd == "L":
            path.lineTo(c[0], c[1])
        else:
            path.cubicTo(c[0], c[1], c[2], c[3], c[4], c[5])
    if arrows is None:
        return
    head = arrow_polygon(g)
    if head is not None:
        arrows.addPolygon(QPolygonF([QPointF(x, y) for x, y in head]))
        arrows.closeSubpath()


def _midpoint(g: Geometry) -> QPointF:
    return QPointF(*geometry_midpoint(g))


@dataclass(frozen=True)
class _EdgeStyle:
    """How an edge is stroked; ``role`` names its colour in the theme."""

    role: str
    width: float
    dashed: bool = False
    arrow: bool = True

    def colour(self, t: Theme) -> str:
        if self.role == "new":
            return t.new
        if self.role == "carry":
            return t.backward
        return t.edge(self.role)


_EDGE_STYLES = {
    "grad": _EdgeStyle("grad", 1.6),
    "output": _EdgeStyle("output", 1.0),
    "leaf": _EdgeStyle("leaf", 1.4),
    "saved": _EdgeStyle("saved", 1.3, dashed=True, arrow=False),
    "new": _EdgeStyle("new", 2.2),
    "carry": _EdgeStyle("carry", 2.8),
}


@lru_cache(maxsize=64)
def _style_for(kind: str, new: bool) -> _EdgeStyle:
    style = _EDGE_STYLES.get(kind, _EDGE_STYLES["grad"])
    if new:
        base = _EDGE_STYLES["new"]
        return _EdgeStyle(base.role, base.width, style.dashed, style.arrow)
    return style


class _Kinds(Mapping[EdgeKey, str]):
    """The kinds of the edges in a dict of :class:`_Edge` (what the router reads)."""

    def __init__(self, edges: Mapping[EdgeKey, Any]):
        self._edges = edges

    def __getitem__(self, key: EdgeKey) -> str:
        return self._edges[key].kind

    def __contains__(self, key: object) -> bool:
        return key in self._edges

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self._edges)

    def __len__(self) -> int:
        return len(self._edges)


class _PathItem(QGraphicsItem):
    """Strokes a path and fills its arrowheads; one edge, or a bulk chunk of many."""

    def __init__(self, style: _EdgeStyle, z: float):
        super().__init__()
        self.style = style
        self._path = QPainterPath()
        self._arrows = QPainterPath()
        self._bounds = QRectF()
        self.setZValue(z)
        self.setAcceptedMouseButtons(Qt.MouseButton.NoButton)

    def set_paths(self, path: QPainterPath, arrows: QPainterPath) -> None:
        self.prepareGeometryChange()
        self._path, self._arrows = path, arrows
        self._bounds = path.boundingRect().united(arrows.boundingRect()).adjusted(-3, -3, 3, 3)
        self.update()

    def set_style(self, style: _EdgeStyle) -> None:
        if style != self.style:
            self.style = style
            self.update()

    def boundingRect(self) -> QRectF:  # noqa: N802 (Qt API)
        return self._bounds

    def shape(self) -> QPainterPath:
        return QPainterPath()  # never hit by clicks or tooltips

    def paint(
        self,
        painter: QPainter,
        option: QStyleOptionGraphicsItem,
        widget: QWidget | None = None,
    ) -> None:
        lod = option.levelOfDetailFromTransform(painter.worldTransform())
        detailed = lod >= TEXT_LOD
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, detailed)
        colour = theme.qcolor(self.style.colour(_theme_of(self)))
        pen = QPen(colour, self.style.width)
        if not detailed:
            pen.setWidthF(1.0)
            pen.setCosmetic(True)
        if self.style.dashed:
            pen.setStyle(Qt.PenStyle.DashLine)
        painter.setPen(pen)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawPath(self._path)
        if not self._arrows.isEmpty():
            # zoomed out too: a line stops where its arrowhead starts, so without the
            # head it would end short of the box it points at
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(colour)
            painter.drawPath(self._arrows)


class _EdgeItem(_PathItem):
    def __init__(self, kind: str, new: bool, geometry: Geometry):
        super().__init__(_style_for(kind, new), Z_EDGE_NEW if new else Z_EDGE)
        self.geometry: Geometry = ()
        self.set_geometry(geometry)

    def set_geometry(self, geometry: Geometry) -> None:
        if geometry == self.geometry:
            return
        self.geometry = geometry
        path, arrows = QPainterPath(), QPainterPath()
        _add_geometry(path, arrows, geometry)
        self.set_paths(path, arrows)


@dataclass
class _Chunk:
    """Up to BULK_CHUNK edges of one style drawn by one path item."""

    style: _EdgeStyle
    keys: list[EdgeKey]
    item: _PathItem


@dataclass
class _Edge:
    kind: str
    new: bool
    geometry: Geometry = ()
    item: _EdgeItem | None = None


class _EdgeLabelItem(QGraphicsItem):
    """The gradient value on a carrying edge: red text on a white rounded tag."""

    def __init__(self, text: str, center: QPointF):
        super().__init__()
        self.text = text
        fonts = _fonts()
        w = fonts.edge_metrics.horizontalAdvance(text) + 12
        h = fonts.edge_metrics.height() + 4
        self._rect = QRectF(-w / 2, -h / 2, w, h)
        self.setPos(center)
        self.setZValue(Z_LABEL)
        self.setAcceptedMouseButtons(Qt.MouseButton.NoButton)
        self.setToolTip(plain_tooltip(f"gradient passed along this edge: {text}"))

    def boundingRect(self) -> QRectF:  # noqa: N802 (Qt API)
        return self._rect.adjusted(-1, -1, 1, 1)

    def paint(
        self,
        painter: QPainter,
        option: QStyleOptionGraphicsItem,
        widget: QWidget | None = None,
    ) -> None:
        if option.levelOfDetailFromTransform(painter.worldTransform()) < TEXT_LOD:
            return
        t = _theme_of(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        painter.setPen(QPen(theme.qcolor(t.backward), 1.2))
        painter.setBrush(theme.qcolor(t.label_fill, 240))
        painter.drawRoundedRect(self._rect, 4, 4)
        painter.setFont(_fonts().edge)
        painter.setPen(theme.qcolor(t.label_text))
        painter.drawText(self._rect, Qt.AlignmentFlag.AlignCenter, self.text)


class _StorageLinks(QGraphicsItem):
    """Dotted coloured links between nodes that share one storage (memory)."""

    def __init__(self) -> None:
        super().__init__()
        self._paths: dict[tuple[str, bool], QPainterPath] = {}
        self._bounds = QRectF()
        self.setZValue(Z_STORAGE)
        self.setAcceptedMouseButtons(Qt.MouseButton.NoButton)

    def set_links(self, links: Sequence[tuple[str, NodeItem, NodeItem, bool]]) -> None:
        """(group, a, b, strong) links; strong ones (the selection's) are drawn bolder."""
        paths: dict[tuple[str, bool], QPainterPath] = {}
        for group, a, b, strong in links:
            path = paths.setdefault((group, strong), QPainterPath())
            (ax, ay), (bx, by) = a.badge_center(), b.badge_center()
            x0, y0, x1, y1 = a.cx + ax, a.cy + ay, b.cx + bx, b.cy + by
            path.moveTo(x0, y0)
            path.cubicTo(*storage_link_curve(x0, y0, x1, y1))
        self.prepareGeometryChange()
        self._paths = paths
        bounds = QRectF()
        for path in paths.values():
            bounds = bounds.united(path.boundingRect())
        self._bounds = bounds.adjusted(-3, -3, 3, 3)
        self.update()

    def boundingRect(self) -> QRectF:  # noqa: N802 (Qt API)
        return self._bounds

    def shape(self) -> QPainterPath:
        return QPainterPath()

    def paint(
        self,
        painter: QPainter,
        option: QStyleOptionGraphicsItem,
        widget: QWidget | None = None,
    ) -> None:
        detailed = option.levelOfDetailFromTransform(painter.worldTransform()) >= TEXT_LOD
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, detailed)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        t = _theme_of(self)
        for (group, strong), path in self._paths.items():
            width = (2.6 if strong else 1.8) if detailed else 1.0
            pen = QPen(theme.qcolor(theme.storage_colour(group, t), 240 if strong else 200), width)
            pen.setCosmetic(not detailed)
            pen.setStyle(Qt.PenStyle.DotLine)
            pen.setCapStyle(Qt.PenCapStyle.RoundCap)
            painter.setPen(pen)
            painter.drawPath(path)


# --------------------------------------------------------------------------- overlays


class _Legend(QWidget):
    """The key to the colours: a strip under the view, in its viewport margin, so it
    never covers the graph. It names only what the graph on show has (one or two rows
    at the window's usual sizes)."""

    PAD = 8.0
    ROW = 18.0
    GAP = 16.0
    SWATCH = 20.0

    def __init__(self, parent: QWidget):
        super().__init__(parent)
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self._font = theme.label_font(11)
        self._fm = QFontMetricsF(self._font)
        self._theme: Theme = LIGHT
        self.rows: list[tuple[str, str, str, str]] = []
        #: where each row was placed in the last layout: (x, y, row)
        self.placed: list[tuple[float, float, tuple[str, str, str, str]]] = []

    def set_rows(self, rows: list[tuple[str, str, str, str]], t: Theme) -> bool:
        """(swatch, fill or colour, stroke, text) rows; True when they changed."""
        if rows == self.rows and t is self._theme:
            return False
        self.rows, self._theme = rows, t
        self.update()
        return True

    def _place(self, width: float) -> tuple[list[tuple[float, float, tuple]], float]:
        placed: list[tuple[float, float, tuple]] = []
        x, y = self.PAD, 4.0
        for row in self.rows:
            w = self.SWATCH + 5 + self._fm.horizontalAdvance(row[3])
            if x > self.PAD and x + w > width - self.PAD:
                x, y = self.PAD, y + self.ROW
            placed.append((x, y, row))
            x += w + self.GAP
        return placed, (y + self.ROW + 4.0 if self.rows else 0.0)

    def height_for(self, width: float) -> int:
        return math.ceil(self._place(width)[1])

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 (Qt API)
        t = self._theme
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        p.fillRect(self.rect(), theme.qcolor(t.legend_fill))
        p.setPen(QPen(theme.qcolor(t.legend_border), 1.0))
        p.drawLine(QPointF(0, 0.5), QPointF(self.width(), 0.5))
        p.setFont(self._font)
        self.placed, _ = self._place(self.width())
        for x, y, (kind, fill, stroke, text) in self.placed:
            self._swatch(p, kind, fill, stroke, QRectF(x, y + 4, self.SWATCH, 10))
            p.setPen(theme.qcolor(t.text))
            p.drawText(
                QRectF(x + self.SWATCH + 5, y, self._fm.horizontalAdvance(text) + 2, self.ROW),
                Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft,
                text,
            )
        p.end()

    @staticmethod
    def _swatch(p: QPainter, kind: str, fill: str, stroke: str, r: QRectF) -> None:
        if kind.startswith("edge"):
            pen = QPen(theme.qcolor(fill), 2.2)
            if kind == "edge-dashed":
                pen.setStyle(Qt.PenStyle.DashLine)
            elif kind == "edge-dotted":
                pen.setStyle(Qt.PenStyle.DotLine)
            p.setPen(pen)
            p.drawLine(QPointF(r.left(), r.center().y()), QPointF(r.right(), r.center().y()))
            return
        pen = QPen(theme.qcolor(stroke), 1.4 if kind != "glow" else 2.2)
        if kind == "dashed":
            pen.setStyle(Qt.PenStyle.DashLine)
        p.setPen(pen)
        p.setBrush(theme.qcolor(fill))
        radius = r.height() / 2 if kind == "pill" else 3
        p.drawRoundedRect(r, radius, radius)


_PILLS = ("leaf", "tensor", "no_grad")
_NODE_KEYS = ("grad_fn", "accumulate_grad", "leaf", "tensor", "no_grad", "saved", "group")


def _legend_rows(
    t: Theme, present: Iterable[str] | None = None
) -> list[tuple[str, str, str, str]]:
    """(swatch kind, fill or colour, stroke, text) for each row of the legend: every row,
    or those ``present`` names (node kinds, and "new", "backward", "freed", "stale",
    "storage")."""
    show = None if present is None else set(present)
    rows: list[tuple[str, str, str, str]] = []
    for key in _NODE_KEYS:
        if show is None or key in show:
            st = t.node(key)
            rows.append(("pill" if key in _PILLS else "box", st.fill, st.stroke, st.legend))
    grad_fn = t.node("grad_fn")
    states = [
        ("new", ("glow", t.background, t.new, "new this step")),
        ("backward", ("glow", t.backward_fill, t.backward, "running (backward)")),
        ("backward", (
            "box",
            theme.blend(grad_fn.fill, t.executed_tint, 0.45),
            theme.blend(grad_fn.stroke, t.backward, 0.55),
            "already ran",
        )),
        ("backward", ("edge", t.backward, "", "gradient flowing")),
        ("freed", ("dashed", theme.blend(grad_fn.fill, t.background, 0.55), t.freed,
                   "freed by backward()")),
        ("stale", ("box", t.stale_fill, t.stale, "stale: changed in place")),
        ("storage", ("edge-dotted", theme.storage_colour("S1", t), "", "shares memory")),
    ]
    for name, row in states:
        if show is None or name in show:
            rows.append(row)
    return rows


# --------------------------------------------------------------------------- the view


class GraphCanvas(QGraphicsView):
    """The autograd graph, updated in place each step; stepping backward lights it up.

    Signals:
        node_selected(str): a node was clicked (not emitted by :meth:`select_node`).
        node_activated(str): a node was double-clicked (show the statement that made it).
        node_menu_requested(str, QPoint): a right-click on a node, at this global position.
        view_changed(): the zoom or the visible region changed.
    """

    node_selected = Signal(str)
    node_activated = Signal(str)
    node_menu_requested = Signal(str, QPoint)
    view_changed = Signal()

    def __init__(self, parent: QWidget | None = None):
        scene = _Scene()
        # Items rarely move (only when a full re-layout happens), so a BSP index pays off.
        scene.setItemIndexMethod(QGraphicsScene.ItemIndexMethod.BspTreeIndex)
        super().__init__(scene, parent)
        scene.setParent(self)
        self._scene = scene
        self._nodes: dict[str, NodeItem] = {}
        self._edges: dict[EdgeKey, _Edge] = {}
        self._bulk_items: list[_PathItem] = []
        self._chunks: list[_Chunk] = []
        self._chunk_of: dict[EdgeKey, int] = {}
        self._edges_for_chunks: dict[EdgeKey, Geometry] = {}
        self._bulk = False
        #: node id -> the keys of its edges (which edges a moved node bends)
        self._adj: dict[str, set[EdgeKey]] = {}
        #: the kernel state the canvas shows (GraphChanges.seq), for applying a delta
        self._graph_seq: int | None = None
        #: the rectangle the nodes occupy (see graph_rect)
        self._node_bounds = QRectF()
        self._storage = _StorageLinks()
        scene.addItem(self._storage)
        self._carry: dict[EdgeKey, tuple[_PathItem, _EdgeLabelItem | None, str | None]] = {}
        self._backward: tuple[int, int, Sequence[Any]] | None = None
        self._marked: set[str] = set()
        self._selected: str | None = None
        self._groups: dict[str, list[NodeItem]] = {}
        #: node id -> its storage group, and group -> its node ids (tensor and saved nodes)
        self._storage_of: dict[str, str] = {}
        self._member_ids: dict[str, set[str]] = {}
        self._links: list[tuple[str, str, str]] = []
        self._fitted_once = False
        self._press_on_node = False
        self._pending_fit = False
        #: the view shows the graph as fit_to_view left it (no zoom or pan since): a
        #: resize (the guide above growing, the window shrinking) fits it again
        self._fitted = False
        #: the boxes edges route around, and each edge's region (what can change its route)
        self._obstacles = Obstacles()
        self._boxes: dict[str, Box] = {}  # plain copies of the items' boxes (fast to read)
        self._region_of: dict[EdgeKey, tuple[float, float, float, float]] = {}
        self._region_bands: dict[int, set[EdgeKey]] = {}
        #: how many nodes of each style key, and "new" / "freed" / "stale" (the legend)
        self._counts: dict[str, int] = {}
        #: the rectangle of the nodes the last update made new (fit_to_view centres there)
        self._newest = QRectF()
        #: the graph data last given to set_graph (its edge order, for the SVG export)
        self._graph_data: Mapping[str, Any] = {"nodes": [], "edges": []}
        self._theme: Theme = LIGHT
        self._legend_on = True
        self._legend_h = 0
        self._fit_whole = False

        self.setRenderHints(
            QPainter.RenderHint.Antialiasing
            | QPainter.RenderHint.TextAntialiasing
            | QPainter.RenderHint.SmoothPixmapTransform
        )
        self.setViewportUpdateMode(QGraphicsView.ViewportUpdateMode.MinimalViewportUpdate)
        self.setCacheMode(QGraphicsView.CacheModeFlag.CacheBackground)
        self.setOptimizationFlag(QGraphicsView.OptimizationFlag.DontAdjustForAntialiasing, True)
        self.setDragMode(QGraphicsView.DragMode.ScrollHandDrag)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.NoAnchor)
        self.setResizeAnchor(QGraphicsView.ViewportAnchor.AnchorViewCenter)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setBackgroundBrush(QBrush(theme.qcolor(theme.BACKGROUND)))
        self.setFrameShape(QGraphicsView.Shape.NoFrame)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setMinimumSize(200, 150)

        self._hint = plain_label(QLabel(EMPTY_HINT, self))
        self._hint.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self._hint.setWordWrap(True)
        self._hint.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self._legend = _Legend(self)
        self._follow_palette(force=True)

    # --- public API: the graph ---------------------------------------------------

    def set_graph(
        self,
        graph: Mapping[str, Any],
        positions: Mapping[str, Sequence[float]],
        changes: GraphChanges | None = None,
    ) -> None:
        """Show ``graph`` ({nodes, edges} as the kernel sends it) at ``positions``.

        Updates in place: items whose ids persist are kept (moved and restyled
        when needed), new ones are added and gone ones removed.  Nodes and
        edges flagged ``new`` glow until the next call.  Backward highlighting
        and the selection are kept for the nodes that remain.

        ``changes`` (from :class:`gradviz.core.delta.StateDecoder`) says what
        differs from the graph shown now; when it was computed against exactly
        that graph only the items it names (and the edges next to them) are
        touched, which keeps a step on a 2,000-node graph to a few milliseconds.
        """
        self._graph_data = graph
        self._fresh: list[NodeItem] = []  # items this update made or restyled (for _newest)
        if (
            changes is not None
            and self._graph_seq is not None
            and changes.base == self._graph_seq
            and self._nodes
        ):
            grown = self._apply_changes(graph, positions, changes)
            bounds = self._node_bounds
            for item in grown:
                bounds = bounds.united(
                    QRectF(item.cx - item.width / 2, item.cy - item.height / 2, item.width, item.height)
                )
            # a node that went may leave the rectangle a little larger than needed: harmless
            self._node_bounds = bounds
        else:
            self._set_graph_whole(graph, positions)
            self._node_bounds = self._nodes_rect()
        self._graph_seq = changes.seq if changes is not None else None
        newest = QRectF()
        for item in self._fresh:
            if item.attrs.get("new") and item.node_id in self._nodes:
                newest = newest.united(item.sceneBoundingRect())
        if not newest.isEmpty():
            self._newest = newest
        elif not self._nodes:
            self._newest = QRectF()
        self._fresh = []
        self._update_scene_rect()
        self._apply_backward()
        self._update_legend()
        self._update_overlays()
        if self._nodes and not self._fitted_once:
            # The first graph is fitted to the view, once the view has its real size.
            self._fitted_once = True
            if self.isVisible():
                self.fit_to_view()
            else:
                self._pending_fit = True
        elif not self._nodes:
            self._fitted_once = False

    def _set_graph_whole(
        self, graph: Mapping[str, Any], positions: Mapping[str, Sequence[float]]
    ) -> None:
        nodes = graph.get("nodes") or []
        seen: dict[str, None] = {}
        scene = self._scene
        for attrs in nodes:
            node_id = str(attrs["id"])
            seen[node_id] = None
            pos = positions.get(node_id)
            item = self._nodes.get(node_id)
            if item is None:
                item = NodeItem(node_id, attrs)
                self._nodes[node_id] = item
                scene.addItem(item)
                self._count(item, 1)
                self._fresh.append(item)
            elif item.attrs != attrs:
                self._restyle(item, attrs)
            if pos is not None:
                item.set_center(float(pos[0]), float(pos[1]))
        obstacles = self._obstacles
        for node_id in [n for n in self._nodes if n not in seen]:
            self._drop_node(node_id)
            obstacles.remove(node_id)
        # Graph order, for node_ids() and deterministic drawing.
        self._nodes = {n: self._nodes[n] for n in seen}
        boxes: dict[str, Box] = {}
        for node_id, item in self._nodes.items():
            cx, cy, w, h = item.cx, item.cy, item.width, item.height
            obstacles.set(node_id, cx, cy, w, h)
            boxes[node_id] = Box(cx, cy, w, h, item.span)
        self._boxes = boxes
        self._update_storage()
        self._update_edges(graph.get("edges") or [])

    def _count(self, item: NodeItem, sign: int) -> None:
        counts = self._counts
        attrs = item.attrs
        for name, on in (
            (item._key, True),
            ("new", attrs.get("new")),
            ("freed", attrs.get("freed")),
            ("stale", attrs.get("stale")),
        ):
            if on:
                counts[name] = counts.get(name, 0) + sign

    def _restyle(self, item: NodeItem, attrs: Mapping[str, Any]) -> None:
        self._count(item, -1)
        item.set_attrs(attrs)
        self._count(item, 1)
        self._fresh.append(item)
        box = self._boxes.get(item.node_id)
        if box is not None:
            box.span = item.span  # its kind may have changed; a new size makes it dirty

    def _drop_node(self, node_id: str) -> None:
        item = self._nodes.pop(node_id, None)
        if item is None:
            return
        self._count(item, -1)
        self._scene.removeItem(item)
        self._marked.discard(node_id)
        if node_id == self._selected:
            self._selected = None

    def _apply_changes(
        self,
        graph: Mapping[str, Any],
        positions: Mapping[str, Sequence[float]],
        changes: GraphChanges,
    ) -> list[NodeItem]:
        """The delta path of :meth:`set_graph`: touch only what ``changes`` names.
        Returns the items added, moved or resized."""
        scene = self._scene
        nodes = graph.get("nodes") or []
        index = changes.node_attrs
        if len(index) != len(nodes):  # not the decoder's index of this graph
            index = {str(a["id"]): a for a in nodes}
        dirty: set[str] = set()
        storage = False
        touched: list[str] = []
        for node_id in changes.removed:
            item = self._nodes.get(node_id)
            if item is not None:
                storage = storage or item.kind in ("tensor", "saved")
                self._drop_node(node_id)
                dirty.add(node_id)
                touched.append(node_id)
        # new nodes in the state's order, so the canvas keeps the graph's order
        for node_id in [*changes.added, *(n for n in changes.nodes if n not in self._nodes)]:
            if node_id in self._nodes or node_id not in index:
                continue
            attrs = index[node_id]
            item = NodeItem(node_id, attrs)
            self._nodes[node_id] = item
            scene.addItem(item)
            self._count(item, 1)
            self._fresh.append(item)
            dirty.add(node_id)
            touched.append(node_id)
            storage = storage or item.kind in ("tensor", "saved")
        for node_id in changes.nodes:
            item = self._nodes.get(node_id)
            attrs = index.get(node_id)
            if item is None or attrs is None or item.attrs == attrs:
                continue
            size = (item.width, item.height)
            storage = storage or item.kind in ("tensor", "saved") or (
                attrs.get("kind") in ("tensor", "saved")
            )
            self._restyle(item, attrs)
            touched.append(node_id)
            if (item.width, item.height) != size:
                dirty.add(node_id)
        for node_id in [*changes.moved, *changes.added]:
            item = self._nodes.get(node_id)
            pos = positions.get(node_id)
            if item is not None and pos is not None:
                if (float(pos[0]), float(pos[1])) != (item.cx, item.cy):
                    item.set_center(float(pos[0]), float(pos[1]))
                    dirty.add(node_id)
        if changes.reordered or len(self._nodes) != len(nodes):
            # graph order, as the whole path keeps it
            self._nodes = {str(a["id"]): self._nodes[str(a["id"])] for a in nodes}
        if storage:
            self._update_storage(touched)
        elif dirty and self._groups:
            self._update_storage_links()  # a moved member moves its links
        edge_attrs: dict[EdgeKey, Mapping[str, Any]] = {}
        if changes.edges:
            eindex = changes.edge_attrs
            if len(eindex) != len(graph.get("edges") or []):
                eindex = {(str(e["source"]), str(e["target"])): e for e in graph.get("edges") or []}
            edge_attrs = {k: eindex[k] for k in changes.edges if k in eindex}
        grown = [self._nodes[n] for n in dirty if n in self._nodes]
        self._update_edges_changed(
            graph.get("edges") or [], edge_attrs, set(changes.removed_edges), dirty
        )
        return grown

    def clear(self) -> None:
        """Remove every node and edge (the empty-graph hint shows)."""
        self._backward = None
        self.set_graph({"nodes": [], "edges": []}, {})

    def set_empty_hint(self, text: str) -> None:
        """Text shown in the middle of the canvas while the graph is empty."""
        self._hint.setText(text)
        self._update_overlays()

    @property
    def empty_hint(self) -> QLabel:
        """The label over an empty canvas (visible only while there are no nodes)."""
        return self._hint

    @property
    def bulk_edges(self) -> bool:
        """True when edges are painted in bulk (more than BULK_EDGE_THRESHOLD of them)."""
        return self._bulk

    # --- public API: backward stepping ---------------------------------------------

    def show_backward_step(
        self, pass_index: int | None, step_index: int | None, passes: Sequence[Any]
    ) -> None:
        """Highlight step ``step_index`` of backward pass ``pass_index``.

        The executing node turns red, the nodes this pass already ran get a
        light "done" tint, and the edges from the executing node to its
        ``targets`` are drawn red with the gradient they carry.  ``None`` for
        either index (or an index out of range) clears the highlighting.
        """
        if pass_index is None or step_index is None:
            self._backward = None
        else:
            self._backward = (pass_index, step_index, passes)
        self._apply_backward()
        self._update_legend()

    def clear_backward(self) -> None:
        """Remove all backward-pass highlighting."""
        self.show_backward_step(None, None, [])

    # --- public API: selection and search -------------------------------------------

    def select_node(self, node_id: str | None, center: bool = True) -> None:
        """Select ``node_id`` (None clears) and centre the view on it; emits nothing."""
        self._set_selected(node_id if node_id in self._nodes else None)
        if center and self._selected is not None:
            self.centerOn(self._nodes[self._selected])

    def selected_node(self) -> str | None:
        return self._selected

    def search(self, text: str) -> list[str]:
        """Ids of nodes whose label, variable names or shape contain ``text`` (any case)."""
        needle = text.strip().lower()
        if not needle:
            return []
        return [n for n, item in self._nodes.items() if needle in item.search_text()]

    # --- public API: test helpers -----------------------------------------------------

    def node_ids(self) -> list[str]:
        """Ids of the nodes on the canvas, in graph order."""
        return list(self._nodes)

    def node_item(self, node_id: str) -> NodeItem | None:
        """The item drawing ``node_id`` (its ``state`` property tells how it is shown)."""
        return self._nodes.get(node_id)

    def edge_state(self, source: str, target: str) -> set[str]:
        """Among {"new", "carrying"} for the edge ``source -> target``."""
        out: set[str] = set()
        edge = self._edges.get((source, target))
        if edge is not None and edge.new:
            out.add("new")
        if (source, target) in self._carry:
            out.add("carrying")
        return out

    def edge_label(self, source: str, target: str) -> str | None:
        """The gradient text on a carrying edge, else None."""
        entry = self._carry.get((source, target))
        return entry[2] if entry is not None else None

    def storage_links(self) -> list[tuple[str, str, str]]:
        """(storage group, node id, node id) for each dotted shared-memory link drawn."""
        return list(self._links)

    def legend_items(self) -> list[tuple[str, str]]:
        """(what, colour) for each row the legend shows now, e.g. ("op (grad_fn)", fill):
        the kinds of node on the canvas and the states some node is in."""
        return [(text, colour) for _, colour, _, text in self._legend.rows]

    def legend_rect(self) -> QRect:
        """Where the legend strip is, in the view's coordinates (empty when hidden)."""
        legend = self._legend
        return legend.geometry() if legend.isVisible() else QRect()

    def set_legend_visible(self, visible: bool) -> None:
        """Show or hide the colour key, a strip under the graph (key L toggles it)."""
        self._legend_on = bool(visible)
        self._update_overlays()

    def legend_visible(self) -> bool:
        return self._legend_on

    def _update_legend(self) -> None:
        present = {k for k, n in self._counts.items() if n > 0}
        if self._marked:
            present.add("backward")
        if self._groups:
            present.add("storage")
        if self._legend.set_rows(_legend_rows(self._theme, present), self._theme):
            self._update_overlays()

    # --- public API: theme ----------------------------------------------------------------

    def current_theme(self) -> Theme:
        """The theme the canvas draws with (dark when its palette is dark)."""
        return self._theme

    def set_theme(self, t: Theme) -> None:
        """Draw with ``t``; the canvas picks one itself from its palette, and again
        whenever the palette changes."""
        if t is self._theme:
            return
        self._apply_theme(t)

    def _apply_theme(self, t: Theme) -> None:
        self._theme = t
        self._scene.theme = t
        self.setBackgroundBrush(QBrush(theme.qcolor(t.background)))
        self._hint.setStyleSheet(f"color: {t.hint_text}; font-size: 15px; background: transparent;")
        for item in self._nodes.values():
            item.update()  # drops its cached pixmap
        self.resetCachedContent()
        self._scene.update()
        self._update_legend()
        self._legend.update()

    def _follow_palette(self, force: bool = False) -> None:
        t = theme.palette_theme(self.palette())
        if force:
            self._apply_theme(t)
        else:
            self.set_theme(t)

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 (Qt API)
        super().changeEvent(event)
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange):
            self._follow_palette()

    # --- public API: navigation ---------------------------------------------------------

    def zoom_level(self) -> float:
        """Current scale (1.0 = layout pixels)."""
        return self.transform().m11()

    def zoom_in(self) -> None:
        self._zoom_by(ZOOM_STEP)

    def zoom_out(self) -> None:
        self._zoom_by(1 / ZOOM_STEP)

    def set_zoom(self, level: float) -> None:
        """Zoom to ``level`` (1.0 = layout pixels), keeping the centre of the view."""
        self._zoom_by(level / self.zoom_level())

    def reset_zoom(self) -> None:
        """Back to 100 %, keeping the centre of the view."""
        self._zoom_by(1.0 / self.zoom_level())

    def fit_to_view(self, whole: bool = False) -> None:
        """Zoom and scroll so the graph reads well: all of it when it fits at a readable
        zoom (never magnified past FIT_MAX_ZOOM); a bigger graph is shown at
        READABLE_ZOOM (node text about 7 px), centred on its newest nodes, the rest a
        drag or a wheel away. ``whole``: all of it, however small (key W)."""
        rect = QRectF(self._node_bounds)  # kept by set_graph, so a step re-fits cheaply
        if rect.isEmpty():
            self.setTransform(QTransform())
            self.view_changed.emit()
            return
        rect = rect.adjusted(-24, -24, 24, 24)
        view = self.viewport().rect()
        vw, vh = max(1.0, float(view.width())), max(1.0, float(view.height()))
        scale_all = min(vw / rect.width(), vh / rect.height())
        if whole or scale_all >= READABLE_ZOOM:
            scale = max(MIN_ZOOM, min(scale_all, FIT_MAX_ZOOM, MAX_ZOOM))
            center = rect.center()
        else:
            # the smallest readable zoom shows the most of it
            scale = READABLE_ZOOM
            newest = self._newest
            if newest.isEmpty() or not rect.intersects(newest):
                focus = QPointF(rect.center().x(), rect.top())  # the roots sit at the top
            else:
                focus = newest.center()
            half_w, half_h = vw / scale / 2, vh / scale / 2

            def clamp(v: float, lo: float, hi: float) -> float:
                return (lo + hi) / 2 if lo > hi else min(max(v, lo), hi)

            center = QPointF(
                clamp(focus.x(), rect.left() + half_w, rect.right() - half_w),
                clamp(focus.y(), rect.top() + half_h, rect.bottom() - half_h),
            )
        self.setTransform(QTransform.fromScale(scale, scale))
        self.centerOn(center)
        self._fitted = True
        self._fit_whole = whole
        self.view_changed.emit()

    def fit_whole(self) -> None:
        """Zoom out until the whole graph is in view, however small (key W)."""
        self.fit_to_view(whole=True)

    def keep_graph_in_view(self) -> None:
        """After a step: a view the user left fitted is fitted again (on the newest nodes
        when the graph is too big to read whole); one they zoomed or panned keeps its
        zoom and only scrolls to the newest nodes when they are out of sight."""
        if self._node_bounds.isEmpty():
            return
        visible = self.mapToScene(self.viewport().rect()).boundingRect()
        if visible.contains(self._node_bounds):
            return
        if self._fitted:
            self.fit_to_view(self._fit_whole)
        elif not self._newest.isEmpty() and not visible.intersects(self._newest):
            self.centerOn(self._newest.center())
            self.view_changed.emit()

    def is_fitted(self) -> bool:
        """The view is as fit_to_view left it (no zoom or pan since)."""
        return self._fitted

    # --- public API: export -------------------------------------------------------------

    def to_svg(self) -> str:
        """The graph on the canvas as an SVG document: the one renderer's picture
        (:func:`gradviz.core.render_svg.render_svg`, light theme), as ``gradviz export``
        and ``Snapshot.to_svg()`` draw it; the step's transient highlights are left out."""
        nodes = [(node_id, item.attrs) for node_id, item in self._nodes.items()]
        keys: dict[EdgeKey, None] = {}
        for e in self._graph_data.get("edges") or []:
            key = (str(e["source"]), str(e["target"]))
            if key in self._edges:
                keys[key] = None
        keys.update(dict.fromkeys(self._edges))
        edges = [(s, t, {"kind": self._edges[(s, t)].kind}) for s, t in keys]
        positions = {node_id: (item.cx, item.cy) for node_id, item in self._nodes.items()}
        return render_svg(nodes, edges, positions, LIGHT)

    def export_image(self, path: str) -> None:
        """Write the whole graph to ``path``: SVG (:meth:`to_svg`) or PNG (that SVG,
        rendered at twice its size), by suffix. Raises ValueError for any other suffix."""
        suffix = Path(path).suffix.lower()
        if suffix not in (".png", ".svg"):
            raise ValueError(
                f"cannot export to {suffix or 'a file without suffix'!r}: use .png or .svg"
            )
        svg = self.to_svg()
        if suffix == ".svg":
            Path(path).write_text(svg, encoding="utf-8")
            return
        from gradviz.export import svg_to_png

        svg_to_png(svg, path)

    # --- internals: graph --------------------------------------------------------------

    def _update_storage(self, touched: Iterable[str] | None = None) -> None:
        """Badges on nodes that share a storage group, and the dotted links between them.

        ``touched``: only these nodes changed (added, restyled or removed); the
        groups they were or are in are redone, not every group of the graph."""
        storage_of, member_ids = self._storage_of, self._member_ids
        if touched is None:
            storage_of.clear()
            member_ids.clear()
            self._groups.clear()
            touched = list(self._nodes)
        affected: set[str] = set()
        for node_id in touched:
            old = storage_of.pop(node_id, None)
            if old is not None:
                affected.add(old)
                member_ids[old].discard(node_id)
            item = self._nodes.get(node_id)
            if item is None:
                continue
            group = item.attrs.get("storage") if item.kind in ("tensor", "saved") else None
            if group is None:
                item.set_badge(None)
                continue
            storage_of[node_id] = str(group)
            member_ids.setdefault(str(group), set()).add(node_id)
            affected.add(str(group))
        if not affected:
            self._update_storage_links()
            return
        order: dict[str, int] | None = None
        for group in affected:
            ids = member_ids.get(group)
            if not ids:
                member_ids.pop(group, None)
                self._groups.pop(group, None)
                continue
            if len(ids) == 1:
                self._groups.pop(group, None)
                self._nodes[next(iter(ids))].set_badge(None)
                continue
            if order is None:
                order = {n: i for i, n in enumerate(self._nodes)}
            members = [self._nodes[n] for n in sorted(ids, key=order.__getitem__)]
            self._groups[group] = members
            for item in members:
                item.set_badge(group)
        self._update_storage_links()

    def _update_storage_links(self) -> None:
        # Each group linked as gradviz.core.routing.storage_link_pairs says (a star, or a
        # chain in a big group); the badges still tell, and selecting a node draws all
        # of its links.
        links: list[tuple[str, NodeItem, NodeItem, bool]] = [
            (group, a, b, False)
            for group, a, b in storage_link_pairs(
                self._groups, lambda m: m.kind, lambda m: (m.cx, m.cy)
            )
        ]
        selected = self._nodes.get(self._selected) if self._selected else None
        if selected is not None and selected.storage_badge in self._groups:
            # The selection's group is drawn as a bold star from the selected node.
            group = str(selected.storage_badge)
            members = self._groups[group]
            in_group = {id(m) for m in members}
            links = [link for link in links if id(link[1]) not in in_group]
            links += [(group, selected, m, True) for m in members if m is not selected]
        self._links = [(group, a.node_id, b.node_id) for group, a, b, _ in links]
        self._storage.set_links(links)

    def _update_edges(self, edges: Sequence[Mapping[str, Any]]) -> None:
        wanted: dict[EdgeKey, _Edge] = {}
        for e in edges:
            s, t = str(e["source"]), str(e["target"])
            if s == t or s not in self._nodes or t not in self._nodes:
                continue
            wanted[(s, t)] = _Edge(str(e.get("kind", "grad")), bool(e.get("new")))
        adj: dict[str, set[EdgeKey]] = {}
        for key in wanted:
            adj.setdefault(key[0], set()).add(key)
            adj.setdefault(key[1], set()).add(key)
        self._adj = adj
        self._region_of.clear()
        self._region_bands.clear()
        self._compute_geometry(wanted, wanted)
        bulk = len(wanted) > BULK_EDGE_THRESHOLD
        scene = self._scene
        if bulk:
            if self._bulk and wanted == self._edges:
                return  # same edges, same places: the bulk paths stand
            for edge in self._edges.values():
                if edge.item is not None:
                    scene.removeItem(edge.item)
                    edge.item = None
            if self._bulk:
                # a step: redraw only the chunks whose edges changed
                gone = [k for k in self._edges if k not in wanted]
                self._edges = wanted
                self._patch_bulk(wanted, gone)
            else:
                self._edges = wanted
                self._rebuild_bulk()
        else:
            self._clear_bulk()
            for key, old in self._edges.items():
                if key not in wanted and old.item is not None:
                    scene.removeItem(old.item)
            for key, edge in wanted.items():
                old = self._edges.get(key)
                edge.item = old.item if old is not None else None
            self._edges = wanted
            self._restyle_items(wanted)
        self._bulk = bulk

    def _restyle_items(self, keys: Iterable[EdgeKey]) -> None:
        """Give the per-edge items of ``keys`` their geometry and style (no bulk)."""
        scene = self._scene
        for key in keys:
            edge = self._edges[key]
            if edge.item is None:
                edge.item = _EdgeItem(edge.kind, edge.new, edge.geometry)
                scene.addItem(edge.item)
            else:
                edge.item.set_geometry(edge.geometry)
                edge.item.set_style(_style_for(edge.kind, edge.new))
                edge.item.setZValue(Z_EDGE_NEW if edge.new else Z_EDGE)

    def _update_edges_changed(
        self,
        all_edges: Sequence[Mapping[str, Any]],
        changed: Mapping[EdgeKey, Mapping[str, Any]],
        removed: set[EdgeKey],
        dirty: set[str],
    ) -> None:
        """The delta path for edges: the changed and removed ones, and those whose
        ends moved or resized (with their neighbours, which share border ports)."""
        nodes, edges, adj, scene = self._nodes, self._edges, self._adj, self._scene
        # The boxes that came, went, moved or resized: the router's obstacles follow them,
        # and every edge whose route they can touch is routed again.
        obstacles, plain = self._obstacles, self._boxes
        boxes: list[tuple[float, float, float, float]] = []
        for n in dirty:
            old_box = obstacles.get(n)
            item = nodes.get(n)
            if item is None:
                obstacles.remove(n)
                plain.pop(n, None)
            else:
                obstacles.set(n, item.cx, item.cy, item.width, item.height)
                plain[n] = Box(item.cx, item.cy, item.width, item.height, item.span)
            new_box = obstacles.get(n)
            if old_box is not None:
                boxes.append(old_box)
            if new_box is not None and new_box != old_box:
                boxes.append(new_box)
        crossed = self._edges_meeting(boxes)
        gone: list[EdgeKey] = []
        for key in list(removed) + [k for n in dirty if n not in nodes for k in adj.get(n, ())]:
            edge = edges.pop(key, None)
            if edge is None:
                continue
            gone.append(key)
            self._set_region(key, None)
            for end in key:
                keys = adj.get(end)
                if keys is not None:
                    keys.discard(key)
                    if not keys:
                        del adj[end]
            if edge.item is not None:
                scene.removeItem(edge.item)
            dirty.update(key)
        touched: set[EdgeKey] = set()
        for key, e in changed.items():
            s, t = key
            if s == t or s not in nodes or t not in nodes:
                continue
            edge = _Edge(str(e.get("kind", "grad")), bool(e.get("new")))
            old = edges.get(key)
            if old is not None:
                edge.item, edge.geometry = old.item, old.geometry
            edges[key] = edge
            adj.setdefault(s, set()).add(key)
            adj.setdefault(t, set()).add(key)
            touched.add(key)
            dirty.update(key)
        bulk = len(edges) > BULK_EDGE_THRESHOLD
        if bulk != self._bulk:
            self._update_edges(all_edges)  # crossing the bulk threshold: redo them all
            return
        # Edges at a dirty node, and at its neighbours (their ports order by the far end).
        near = set(dirty)
        for n in dirty:
            for s, t in adj.get(n, ()):
                near.add(s)
                near.add(t)
        affected = {k for n in near for k in adj.get(n, ())}
        affected.update(touched)
        affected.update(k for k in crossed if k in edges)
        if not affected and not gone:
            return
        self._compute_geometry(affected, edges)
        if bulk:
            self._patch_bulk(affected, gone)
        else:
            self._restyle_items(affected)

    def _compute_geometry(self, keys: Iterable[EdgeKey], every: Mapping[EdgeKey, _Edge]) -> None:
        """Give each edge of ``keys`` its path (:func:`gradviz.core.routing.edge_geometries`:
        ports spread along shared borders, routes around the boxes in the way); ``every``
        is the whole edge set, ``self._adj`` its index by node."""
        keys = keys if isinstance(keys, (list, dict, set)) else list(keys)
        # every edge (a whole update) reads faster from a plain dict; a step, from a view
        kinds: Mapping[EdgeKey, str] = (
            {k: e.kind for k, e in every.items()} if len(keys) * 4 > len(every) else _Kinds(every)
        )
        result = edge_geometries(keys, kinds, self._adj, self._boxes, self._obstacles)
        for key, (geometry, region) in result.items():
            every[key].geometry = geometry
            self._set_region(key, region)

    def _set_region(self, key: EdgeKey, region: tuple[float, float, float, float] | None) -> None:
        """Index edge ``key`` by the region its route depends on (None: forget it)."""
        bands = self._region_bands
        old = self._region_of.pop(key, None)
        if old is not None:
            for b in range(math.floor(old[2] / REGION_BAND), math.floor(old[3] / REGION_BAND) + 1):
                keys = bands.get(b)
                if keys is not None:
                    keys.discard(key)
                    if not keys:
                        del bands[b]
        if region is None:
            return
        self._region_of[key] = region
        for b in range(math.floor(region[2] / REGION_BAND), math.floor(region[3] / REGION_BAND) + 1):
            bands.setdefault(b, set()).add(key)

    def _edges_meeting(self, boxes: Iterable[tuple[float, float, float, float]]) -> set[EdgeKey]:
        """Edges whose route a box (left, right, top, bottom) can change."""
        found: set[EdgeKey] = set()
        bands, region_of = self._region_bands, self._region_of
        for left, right, top, bottom in boxes:
            for b in range(math.floor(top / REGION_BAND), math.floor(bottom / REGION_BAND) + 1):
                for key in bands.get(b, ()):
                    r = region_of[key]
                    if r[0] < right and r[1] > left and r[2] < bottom and r[3] > top:
                        found.add(key)
        return found

    def _clear_bulk(self) -> None:
        for item in self._bulk_items:
            self._scene.removeItem(item)
        self._bulk_items = []
        self._chunks = []
        self._chunk_of = {}

    def _fill_chunk(self, chunk: _Chunk) -> None:
        path, arrows = QPainterPath(), QPainterPath()
        for key in chunk.keys:
            _add_geometry(path, arrows if chunk.style.arrow else None, self._edges_for_chunks[key])
        chunk.item.set_paths(path, arrows)

    def _new_chunk(self, style: _EdgeStyle, keys: list[EdgeKey]) -> _Chunk:
        z = Z_EDGE_NEW if style.role == "new" else Z_EDGE
        item = _PathItem(style, z)
        self._scene.addItem(item)
        self._bulk_items.append(item)
        chunk = _Chunk(style, keys, item)
        index = len(self._chunks)
        self._chunks.append(chunk)
        for key in keys:
            self._chunk_of[key] = index
        return chunk

    def _patch_bulk(self, keys: Iterable[EdgeKey], gone: Iterable[EdgeKey]) -> None:
        """Update bulk chunks in place for the edges ``keys`` (in ``self._edges``) and the
        edges ``gone``: a step that adds ten edges redraws a chunk or two, not the
        thousands of edges already drawn (the step-latency budget)."""
        drawn, chunk_of, chunks = self._edges_for_chunks, self._chunk_of, self._chunks
        dirty: set[int] = set()
        pending: dict[_EdgeStyle, list[EdgeKey]] = {}
        for key in gone:
            index = chunk_of.pop(key, None)
            drawn.pop(key, None)
            if index is not None:
                chunks[index].keys.remove(key)
                dirty.add(index)
        for key in keys:
            edge = self._edges[key]
            style = _style_for(edge.kind, edge.new)
            index = chunk_of.get(key)
            if index is not None:
                if drawn.get(key) == edge.geometry and chunks[index].style == style:
                    continue
                chunks[index].keys.remove(key)
                del chunk_of[key]
                dirty.add(index)
            drawn[key] = edge.geometry
            pending.setdefault(style, []).append(key)
        for style, keys_ in pending.items():
            room = [
                i for i, c in enumerate(chunks)
                if c.style == style and len(c.keys) < BULK_CHUNK
            ]
            while keys_:
                if room:
                    index = room.pop()
                    chunk = chunks[index]
                    take = keys_[: BULK_CHUNK - len(chunk.keys)]
                    keys_ = keys_[BULK_CHUNK - len(chunk.keys):]
                    chunk.keys.extend(take)
                    for key in take:
                        chunk_of[key] = index
                    dirty.add(index)
                else:
                    take, keys_ = keys_[:BULK_CHUNK], keys_[BULK_CHUNK:]
                    self._new_chunk(style, take)
                    dirty.add(len(chunks) - 1)
        for index in dirty:
            self._fill_chunk(chunks[index])

    def _rebuild_bulk(self) -> None:
        self._clear_bulk()
        self._edges_for_chunks = {k: e.geometry for k, e in self._edges.items()}
        by_style: dict[_EdgeStyle, list[EdgeKey]] = {}
        for key, edge in self._edges.items():
            by_style.setdefault(_style_for(edge.kind, edge.new), []).append(key)
        for style, keys in by_style.items():
            # Chunks of nearby edges, so the scene index can skip those off screen.
            keys.sort(key=lambda k: (self._edges_for_chunks[k][2], self._edges_for_chunks[k][1]))
            for start in range(0, len(keys), BULK_CHUNK):
                self._fill_chunk(self._new_chunk(style, keys[start : start + BULK_CHUNK]))

    def _nodes_rect(self) -> QRectF:
        if not self._nodes:
            return QRectF()
        xs0 = min(i.cx - i.width / 2 for i in self._nodes.values())
        xs1 = max(i.cx + i.width / 2 for i in self._nodes.values())
        ys0 = min(i.cy - i.height / 2 for i in self._nodes.values())
        ys1 = max(i.cy + i.height / 2 for i in self._nodes.values())
        return QRectF(xs0, ys0, xs1 - xs0, ys1 - ys0)

    def graph_rect(self) -> QRectF:
        """The scene rectangle the nodes occupy (kept up to date by each set_graph)."""
        return QRectF(self._node_bounds)

    def _update_scene_rect(self) -> None:
        rect = self._node_bounds
        if rect.isEmpty():
            self._scene.setSceneRect(QRectF(0, 0, 1, 1))
            return
        # Room to pan a little past the graph and to zoom around its corners.
        margin = 400.0
        self._scene.setSceneRect(rect.adjusted(-margin, -margin, margin, margin))

    # --- internals: backward and selection ------------------------------------------------

    def _apply_backward(self) -> None:
        for node_id in self._marked:
            item = self._nodes.get(node_id)
            if item is not None:
                item.set_flag("executing", False)
                item.set_flag("executed", False)
        self._marked = set()
        for path_item, label_item, _ in self._carry.values():
            self._scene.removeItem(path_item)
            if label_item is not None:
                self._scene.removeItem(label_item)
        self._carry = {}
        if self._backward is None:
            return
        pass_index, step_index, passes = self._backward
        if not 0 <= pass_index < len(passes):
            return
        steps = _get(passes[pass_index], "steps") or []
        if not 0 <= step_index < len(steps):
            return
        for step in steps[:step_index]:
            item = self._nodes.get(str(_get(step, "node")))
            if item is not None:
                item.set_flag("executed", True)
                self._marked.add(item.node_id)
        step = steps[step_index]
        node_id = str(_get(step, "node"))
        source = self._nodes.get(node_id)
        if source is None:
            return
        source.set_flag("executed", False)
        source.set_flag("executing", True)
        self._marked.add(node_id)

        grads = list(_get(step, "grad_inputs") or [])
        values: dict[str, list[Any]] = {}
        for i, target in enumerate(_get(step, "targets") or []):
            if target is None or i >= len(grads) or grads[i] is None:
                continue
            values.setdefault(str(target), []).append(grads[i])
        for target, vals in values.items():
            target_item = self._nodes.get(target)
            if target_item is None or target == node_id:
                continue
            key = (node_id, target)
            edge = self._edges.get(key)
            geometry = (
                edge.geometry
                if edge is not None
                else edge_path(
                    self._boxes[node_id], self._boxes[target], 0.0, 0.0, True, self._obstacles, key
                )[0]
            )
            path, arrows = QPainterPath(), QPainterPath()
            _add_geometry(path, arrows, geometry)
            path_item = _PathItem(_EDGE_STYLES["carry"], Z_CARRY)
            path_item.set_paths(path, arrows)
            self._scene.addItem(path_item)
            text = " + ".join(format_value(v) for v in vals)
            label = _EdgeLabelItem(text, _midpoint(geometry))
            self._scene.addItem(label)
            self._carry[key] = (path_item, label, text)

    def _set_selected(self, node_id: str | None) -> None:
        if node_id == self._selected:
            return
        old = self._nodes.get(self._selected) if self._selected else None
        if old is not None:
            old.set_flag("selected", False)
        self._selected = node_id
        if node_id is not None:
            self._nodes[node_id].set_flag("selected", True)
        self._update_storage_links()

    def _node_at(self, pos: Any) -> NodeItem | None:
        for item in self.items(pos):
            while item is not None and not isinstance(item, NodeItem):
                item = item.parentItem()
            if isinstance(item, NodeItem):
                return item
        return None

    # --- internals: zoom and overlays -------------------------------------------------------

    def _zoom_by(self, factor: float, anchor: QPointF | None = None) -> None:
        self._fitted = False
        current = self.zoom_level()
        target = max(MIN_ZOOM, min(MAX_ZOOM, current * factor))
        if math.isclose(target, current, rel_tol=1e-9):
            return
        vp = self.viewport().rect()
        view_pt = anchor if anchor is not None else QPointF(vp.center())
        scene_pt = self.mapToScene(view_pt.toPoint())
        self.setTransform(QTransform.fromScale(target, target))
        # Keep the scene point under the anchor where it was on screen.
        moved = self.mapFromScene(scene_pt)
        dx = moved.x() - view_pt.x()
        dy = moved.y() - view_pt.y()
        self.horizontalScrollBar().setValue(self.horizontalScrollBar().value() + round(dx))
        self.verticalScrollBar().setValue(self.verticalScrollBar().value() + round(dy))
        self.view_changed.emit()

    def _update_overlays(self) -> None:
        legend = self._legend
        h = legend.height_for(self.width()) if self._legend_on and self._nodes else 0
        if h != self._legend_h:
            # the strip takes its room from the viewport: it never covers the graph
            self._legend_h = h
            self.setViewportMargins(0, 0, 0, h)
        legend.setGeometry(0, self.height() - h, self.width(), h)
        legend.setVisible(h > 0)
        vp = self.viewport().geometry()
        self._hint.setVisible(not self._nodes)
        self._hint.setGeometry(vp.adjusted(20, 20, -20, -20))

    # --- Qt events -------------------------------------------------------------------------

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802 (Qt API)
        if event.button() == Qt.MouseButton.LeftButton:
            item = self._node_at(event.position().toPoint())
            if item is not None:
                # A press on a node selects it; only the background pans.
                self._press_on_node = True
                self.setFocus(Qt.FocusReason.MouseFocusReason)
                self._set_selected(item.node_id)
                self.node_selected.emit(item.node_id)
                event.accept()
                return
        self._press_on_node = False
        super().mousePressEvent(event)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:  # noqa: N802 (Qt API)
        if not self._press_on_node and event.button() == Qt.MouseButton.LeftButton:
            self._fitted = False  # the user panned
        if self._press_on_node and event.button() == Qt.MouseButton.LeftButton:
            self._press_on_node = False
            event.accept()
            return
        super().mouseReleaseEvent(event)

    def mouseDoubleClickEvent(self, event: QMouseEvent) -> None:  # noqa: N802 (Qt API)
        if event.button() == Qt.MouseButton.LeftButton:
            item = self._node_at(event.position().toPoint())
            if item is not None:
                self._press_on_node = True
                if item.node_id != self._selected:  # the press before it selected it already
                    self._set_selected(item.node_id)
                    self.node_selected.emit(item.node_id)
                self.node_activated.emit(item.node_id)
                event.accept()
                return
        super().mouseDoubleClickEvent(event)

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:  # noqa: N802 (Qt API)
        item = self._node_at(event.pos())
        if item is None:
            super().contextMenuEvent(event)
            return
        if item.node_id != self._selected:
            self._set_selected(item.node_id)
            self.node_selected.emit(item.node_id)
        self.node_menu_requested.emit(item.node_id, event.globalPos())
        event.accept()

    def wheelEvent(self, event: QWheelEvent) -> None:  # noqa: N802 (Qt API)
        delta = event.angleDelta().y() or event.angleDelta().x()
        if not delta:
            delta = event.pixelDelta().y()
        if not delta:
            event.ignore()
            return
        self._zoom_by(1.0015**delta, event.position())
        event.accept()

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 (Qt API)
        key = Qt.Key(event.key())
        ctrl = bool(event.modifiers() & Qt.KeyboardModifier.ControlModifier)
        if key in (Qt.Key.Key_Plus, Qt.Key.Key_Equal):
            self.zoom_in()
        elif key in (Qt.Key.Key_Minus, Qt.Key.Key_Underscore):
            self.zoom_out()
        elif key == Qt.Key.Key_Home or (key == Qt.Key.Key_F and not ctrl):
            self.fit_to_view()
        elif key == Qt.Key.Key_0 and ctrl:
            self.reset_zoom()
        elif key == Qt.Key.Key_L and not ctrl:
            self.set_legend_visible(not self.legend_visible())
        elif key == Qt.Key.Key_W and not ctrl:
            self.fit_whole()
        else:
            super().keyPressEvent(event)
            return
        event.accept()

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt API)
        super().resizeEvent(event)
        self._update_overlays()
        if (self._pending_fit or self._fitted) and self.isVisible() and self._nodes:
            self._pending_fit = False
            self.fit_to_view(self._fit_whole)
        self.view_changed.emit()

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 (Qt API)
        super().showEvent(event)
        if self._pending_fit:
            self._pending_fit = False
            self.fit_to_view()

    def scrollContentsBy(self, dx: int, dy: int) -> None:  # noqa: N802 (Qt API)
        super().scrollContentsBy(dx, dy)
        self.view_changed.emit()
