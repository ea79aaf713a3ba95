"""Edges: styles, one item per edge, bands that paint thousands in bulk, labels."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QPainter, QPainterPath, QPolygonF
from PySide6.QtWidgets import QGraphicsItem, QStyleOptionGraphicsItem, QWidget

from gradviz.graph.routing import arrow_polygon, geometry_midpoint, geometry_segments
from gradviz.graph.style import Theme
from gradviz.ui.i18n import translate
from gradviz.ui.text import plain_tooltip

from ._common import TEXT_LOD, Z_EDGE, Z_EDGE_NEW, Z_LABEL, EdgeKey, _brush, _pen, _theme_of
from .nodes import Geometry, _fonts


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
        _stroke(painter, self.style, _theme_of(self), detailed, self._path, self._arrows)


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


class _Edge:
    """One edge: its kind, whether it is new, its route (None: not routed yet) and the
    item or band that draws it."""

    __slots__ = ("band", "geometry", "item", "kind", "new")

    def __init__(self, kind: str, new: bool):
        self.kind = kind
        self.new = new
        self.geometry: Geometry | None = None
        self.item: _EdgeItem | None = None
        self.band: _EdgeBand | None = None


class _EdgeBand(QGraphicsItem):
    """The edges of a big graph whose upper end lies in one horizontal band of the
    scene, painted in bulk: one path per style. Routes are found when the band is
    first painted (a 100,000-edge graph routes only what is looked at), and the
    paths are made again only after a change to one of its edges."""

    def __init__(self, index: int, build: Any):
        super().__init__()
        self.index = index
        self.keys: dict[EdgeKey, None] = {}
        #: (style, path, arrowheads) in drawing order; None: to be made before painting
        self.paths: list[tuple[_EdgeStyle, QPainterPath, QPainterPath]] | None = None
        #: (top, bottom) of the boxes its edges join; None: to be found again
        self.extent: tuple[float, float] | None = None
        self._build = build
        self._bounds = QRectF()
        self.setZValue(Z_EDGE)
        self.setAcceptedMouseButtons(Qt.MouseButton.NoButton)

    def set_bounds(self, rect: QRectF) -> None:
        if rect != self._bounds:
            self.prepareGeometryChange()
            self._bounds = rect

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
        if self.paths is None:
            self._build(self)
        lod = option.levelOfDetailFromTransform(painter.worldTransform())
        detailed = lod >= TEXT_LOD
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, detailed)
        t = _theme_of(self)
        for style, path, arrows in self.paths or ():
            _stroke(painter, style, t, detailed, path, arrows)


def _stroke(
    painter: QPainter, style: _EdgeStyle, t: Theme, detailed: bool, path: QPainterPath,
    arrows: QPainterPath,
) -> None:
    colour = style.colour(t)
    painter.setPen(_pen(
        colour, 255, style.width if detailed else 1.0,
        Qt.PenStyle.DashLine if style.dashed else Qt.PenStyle.SolidLine, not detailed,
    ))
    painter.setBrush(Qt.BrushStyle.NoBrush)
    painter.drawPath(path)
    if not arrows.isEmpty():
        # zoomed out too: a line stops where its arrowhead starts, so without the
        # head it would end short of the box it points at
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(_brush(colour))
        painter.drawPath(arrows)


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
        self.setToolTip(
            plain_tooltip(translate("Canvas", "gradient passed along this edge: {grad}").format(grad=text))
        )

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
        painter.setPen(_pen(t.backward, 255, 1.2))
        painter.setBrush(_brush(t.label_fill, 240))
        painter.drawRoundedRect(self._rect, 4, 4)
        painter.setFont(_fonts().edge)
        painter.setPen(_pen(t.label_text))
        painter.drawText(self._rect, Qt.AlignmentFlag.AlignCenter, self.text)
