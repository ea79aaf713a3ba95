"""The toolbar's icons, painted so they look the same on every platform and theme."""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QIcon, QPainter, QPainterPath, QPen, QPixmap, QPolygonF

from . import theme

__all__ = ["icon"]


def icon(kind: str) -> QIcon:
    """The 20x20 icon (drawn at 2x) of a toolbar action: step, run, back, bwstep, …"""
    pix = QPixmap(40, 40)
    pix.fill(Qt.GlobalColor.transparent)
    p = QPainter(pix)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    p.scale(2, 2)
    forward = QColor("#2f6fd6")
    backward = QColor(theme.BACKWARD)
    grey = QColor("#5c6370")

    def tri(x: float, y: float, w: float, h: float, colour: QColor, left: bool = False) -> None:
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(colour)
        if left:
            pts = [QPointF(x + w, y), QPointF(x, y + h / 2), QPointF(x + w, y + h)]
        else:
            pts = [QPointF(x, y), QPointF(x + w, y + h / 2), QPointF(x, y + h)]
        p.drawPolygon(QPolygonF(pts))

    def bar(x: float, y: float, w: float, h: float, colour: QColor) -> None:
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(colour)
        p.drawRoundedRect(QRectF(x, y, w, h), 1.0, 1.0)

    def nabla(x: float, y: float, s: float, colour: QColor) -> None:
        p.setPen(
            QPen(
                colour,
                2.0,
                Qt.PenStyle.SolidLine,
                Qt.PenCapStyle.RoundCap,
                Qt.PenJoinStyle.RoundJoin,
            )
        )
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.drawPolygon(
            QPolygonF([QPointF(x, y), QPointF(x + s, y), QPointF(x + s / 2, y + s * 0.9)])
        )

    if kind == "step":
        tri(4, 4, 9, 12, forward)
        bar(14, 4, 2.5, 12, forward)
    elif kind == "run":
        tri(2, 4, 7, 12, forward)
        tri(9, 4, 7, 12, forward)
        bar(16, 4, 2, 12, forward)
    elif kind == "cursor":
        tri(2, 4, 8, 12, forward)
        p.setPen(QPen(grey, 1.6))
        p.drawLine(QPointF(15, 3), QPointF(15, 17))
        p.drawLine(QPointF(12.5, 3), QPointF(17.5, 3))
        p.drawLine(QPointF(12.5, 17), QPointF(17.5, 17))
    elif kind == "back":
        bar(3.5, 4, 2.5, 12, grey)
        tri(7, 4, 9, 12, grey, left=True)
    elif kind == "reset":
        p.setPen(QPen(grey, 2.0, Qt.PenStyle.SolidLine, Qt.PenCapStyle.RoundCap))
        p.setBrush(Qt.BrushStyle.NoBrush)
        path = QPainterPath()
        path.arcMoveTo(4, 4, 12, 12, 110)
        path.arcTo(4, 4, 12, 12, 110, 290)
        p.drawPath(path)
        tri(2.5, 2, 6, 7, grey, left=False)
    elif kind == "bwstep":
        nabla(4, 4, 12, backward)
    elif kind == "bwend":
        nabla(1.5, 4.5, 9, backward)
        nabla(9.5, 4.5, 9, backward)
    elif kind == "zero":
        p.setPen(QPen(QColor("#1098ad"), 1.8))
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.drawEllipse(QPointF(10, 10), 7, 7)
        font = theme.label_font(10, bold=True)
        p.setFont(font)
        p.drawText(QPointF(6.6, 13.8), "0")
    elif kind in ("into", "out"):
        # an arrow down into a line of code (into), or up out of it (out)
        p.setPen(QPen(forward, 2.2, Qt.PenStyle.SolidLine, Qt.PenCapStyle.RoundCap))
        p.drawLine(QPointF(10, 3.5), QPointF(10, 11.5))
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(forward)
        if kind == "into":
            head = [QPointF(5.5, 9.5), QPointF(14.5, 9.5), QPointF(10, 14.5)]
        else:
            head = [QPointF(5.5, 7.5), QPointF(14.5, 7.5), QPointF(10, 2.5)]
        p.drawPolygon(QPolygonF(head))
        bar(4, 16, 12, 2.2, grey)
    elif kind == "tobw":
        tri(1.5, 5, 7, 10, forward)
        nabla(9.5, 5, 9, backward)
    elif kind == "stop":
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(backward)
        p.drawRoundedRect(4, 4, 12, 12, 2.5, 2.5)
    p.end()
    icon = QIcon(pix)
    # the disabled look is the same drawing, faint: Qt's own derivation lightens it,
    # which on a dark palette makes a disabled button brighter than an enabled one
    faint = QPixmap(pix.size())
    faint.fill(Qt.GlobalColor.transparent)
    fp = QPainter(faint)
    fp.setOpacity(0.3)
    fp.drawPixmap(0, 0, pix)
    fp.end()
    icon.addPixmap(faint, QIcon.Mode.Disabled)
    return icon
