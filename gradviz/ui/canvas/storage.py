"""The dotted links between nodes that share a storage."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QPainter, QPainterPath
from PySide6.QtWidgets import QGraphicsItem, QStyleOptionGraphicsItem, QWidget

from gradviz.graph.routing import storage_link_curve
from gradviz.ui import theme

from ._common import TEXT_LOD, Z_STORAGE, _exposed_on_device, _pen, _theme_of
from .nodes import NodeItem


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
        detailed = option.levelOfDetailFromTransform(painter.worldTransform()) >= TEXT_LOD
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, detailed)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        t = _theme_of(self)
        exposed = _exposed_on_device(painter, option)
        for (group, strong), (path, box) in self._paths.items():
            if not box.intersects(exposed):
                continue
            width = (2.6 if strong else 1.8) if detailed else 1.0
            painter.setPen(_pen(
                theme.storage_colour(group, t), 240 if strong else 200, width,
                Qt.PenStyle.DotLine, not detailed, Qt.PenCapStyle.RoundCap,
            ))
            painter.drawPath(path)


# --------------------------------------------------------------------------- overlays
