"""The dotted links between nodes that share a storage."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Protocol

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QPainter, QPainterPath, QPen
from PySide6.QtWidgets import QGraphicsItem, QStyleOptionGraphicsItem, QWidget

from gradviz.graph.routing import storage_link_curve
from gradviz.ui import theme

from ._common import TEXT_LOD, Z_STORAGE, _colour, _exposed_on_device, _pen, _theme_of

#: up to this pen width on screen (pixels) a dot's round ends are under a pixel and a
#: quarter across: the dots are drawn as flat dashes of the same length instead, which
#: looks the same there and strokes about 3x faster (the links of an LSTM's first
#: picture cost 10 ms round, 3.7 ms flat)
FLAT_DOTS_PX = 2.5
#: ...and up to this many pixels, one pixel wide: a 1-px pen is drawn by Qt's cosmetic
#: stroker, a wider one is stroked into dash polygons first and those filled (LSTM's
#: 17 storage groups at its fitted zoom, 1.2 px: 3.3 ms of a 7.7 ms paint, 0.1 ms at 1 px)
HAIRLINE_DOTS_PX = 1.5


@lru_cache(maxsize=256)
def _flat_dot_pen(hex_colour: str, alpha: int, width: float) -> QPen:
    """The dotted pen's dashes as flat ones of the same extent: a round-capped dot of
    length 0 (Qt's dot pattern: 1 on, 2 off, in pen widths; the round caps add half a
    width at each end) covers 2 widths of every 3, so flat dashes 2 on, 1 off, started
    half a width into the dash. Shared, never change it."""
    pen = QPen(_colour(hex_colour, alpha), width)
    pen.setCapStyle(Qt.PenCapStyle.FlatCap)
    pen.setDashPattern([2.0, 1.0])
    pen.setDashOffset(0.5)
    return pen


@lru_cache(maxsize=256)
def _hairline_dot_pen(hex_colour: str, alpha: int) -> QPen:
    """The flat dots of :func:`_flat_dot_pen` one device pixel wide (cosmetic: the
    pattern is in pixels too, 2 on, 1 off). Shared, never change it."""
    pen = QPen(_colour(hex_colour, alpha), 1.0)
    pen.setCosmetic(True)
    pen.setCapStyle(Qt.PenCapStyle.FlatCap)
    pen.setDashPattern([2.0, 1.0])
    return pen


class _Linked(Protocol):
    """A node a dotted storage link joins (the canvas's node): its centre and badge."""

    @property
    def cx(self) -> float: ...
    @property
    def cy(self) -> float: ...
    def badge_center(self) -> tuple[float, float]: ...


class _StorageLinks(QGraphicsItem):
    """Dotted coloured links between nodes that share one storage (memory)."""

    def __init__(self) -> None:
        super().__init__()
        #: (group, strong) -> (path, its bounds with the pen's room)
        self._paths: dict[tuple[str, bool], tuple[QPainterPath, QRectF]] = {}
        self._bounds = QRectF()
        self.setZValue(Z_STORAGE)
        self.setAcceptedMouseButtons(Qt.MouseButton.NoButton)
        # paint() skips the groups outside the exposed rect: a ResNet-50 has ~160
        # groups, and stroking every dotted path cost a third of its first paint
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemUsesExtendedStyleOption, True)

    def set_links(self, links: Sequence[tuple[str, _Linked, _Linked, bool]]) -> None:
        """(group, a, b, strong) links; strong ones (the selection's) are drawn bolder."""
        paths: dict[tuple[str, bool], QPainterPath] = {}
        for group, a, b, strong in links:
            path = paths.setdefault((group, strong), QPainterPath())
            (ax, ay), (bx, by) = a.badge_center(), b.badge_center()
            x0, y0, x1, y1 = a.cx + ax, a.cy + ay, b.cx + bx, b.cy + by
            path.moveTo(x0, y0)
            path.cubicTo(*storage_link_curve(x0, y0, x1, y1))
        self.prepareGeometryChange()
        self._paths = {key: (path, path.boundingRect().adjusted(-3, -3, 3, 3))
                       for key, path in paths.items()}
        bounds = QRectF()
        for _path, box in self._paths.values():
            bounds = bounds.united(box)
        self._bounds = bounds
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
        lod = option.levelOfDetailFromTransform(painter.worldTransform())
        detailed = lod >= TEXT_LOD
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, detailed)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        t = _theme_of(self)
        exposed = _exposed_on_device(painter, option)
        for (group, strong), (path, box) in self._paths.items():
            if not box.intersects(exposed):
                continue
            width = (2.6 if strong else 1.8) if detailed else 1.0
            colour, alpha = theme.storage_colour(group, t), 240 if strong else 200
            if detailed and width * lod <= HAIRLINE_DOTS_PX:
                painter.setPen(_hairline_dot_pen(colour, alpha))
            elif detailed and width * lod <= FLAT_DOTS_PX:
                painter.setPen(_flat_dot_pen(colour, alpha, width))
            else:
                painter.setPen(_pen(
                    colour, alpha, width, Qt.PenStyle.DotLine, not detailed,
                    Qt.PenCapStyle.RoundCap,
                ))
            painter.drawPath(path)


# --------------------------------------------------------------------------- overlays
