"""The legend strip under the view: which colour and shape means what."""

from __future__ import annotations

import math
from collections.abc import Iterable

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QFontMetricsF, QPainter, QPaintEvent, QPen, QPixmap
from PySide6.QtWidgets import QWidget

from gradviz.graph.style import LIGHT, Theme
from gradviz.ui import theme
from gradviz.ui.i18n import translate


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
        #: the strips drawn lately, by rows and size (for the theme ``_pictures_theme``):
        #: a loop's steps swap between a few sets of rows (the "new" and backward rows come
        #: and go), and drawing the strip's swatches and texts afresh cost 0.3-0.8 ms
        #: of each of those steps; a picture drawn before is copied in 0.02-0.05 ms
        self._pictures: dict[tuple, tuple[QPixmap, list]] = {}
        self._pictures_theme: Theme | None = None
        # _draw fills every pixel with the theme's legend fill (an opaque colour): Qt
        # need not paint the view's frame under the strip first
        self.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent, True)

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
        dpr = self.devicePixelRatioF()
        key = (tuple(self.rows), self.width(), self.height(), dpr)
        if self._pictures_theme is not self._theme:
            self._pictures.clear()
            self._pictures_theme = self._theme
        entry = self._pictures.get(key)
        if entry is None:
            pixmap = QPixmap(
                max(1, math.ceil(self.width() * dpr)), max(1, math.ceil(self.height() * dpr))
            )
            pixmap.setDevicePixelRatio(dpr)
            # the strip's own opaque fill: a pixmap without alpha draws text as the
            # widget does (Qt draws greyscale-only text into an image with alpha)
            pixmap.fill(theme.qcolor(self._theme.legend_fill))
            painter = QPainter(pixmap)
            placed = self._draw(painter)
            painter.end()
            if len(self._pictures) >= 8:
                del self._pictures[next(iter(self._pictures))]  # the oldest
            entry = self._pictures[key] = (pixmap, placed)
        pixmap, self.placed = entry
        p = QPainter(self)
        p.drawPixmap(0, 0, pixmap)
        p.end()

    def _draw(self, p: QPainter) -> list[tuple[float, float, tuple[str, str, str, str]]]:
        """Draw the strip for the rows, theme and size it has now (every pixel: the fill
        is opaque); where each row went."""
        t = self._theme
        p.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        p.fillRect(self.rect(), theme.qcolor(t.legend_fill))
        p.setPen(QPen(theme.qcolor(t.legend_border), 1.0))
        p.drawLine(QPointF(0, 0.5), QPointF(self.width(), 0.5))
        p.setFont(self._font)
        placed, _ = self._place(self.width())
        for x, y, (kind, fill, stroke, text) in placed:
            self._swatch(p, kind, fill, stroke, QRectF(x, y + 4, self.SWATCH, 10))
            p.setPen(theme.qcolor(t.text))
            p.drawText(
                QRectF(x + self.SWATCH + 5, y, self._fm.horizontalAdvance(text) + 2, self.ROW),
                Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft,
                text,
            )
        return placed

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
            rows.append(
                ("pill" if key in _PILLS else "box", st.fill, st.stroke, translate("Legend", st.legend))
            )
    grad_fn = t.node("grad_fn")
    states = [
        ("new", ("glow", t.background, t.new, translate("Legend", "new this step"))),
        ("backward", ("glow", t.backward_fill, t.backward, translate("Legend", "running (backward)"))),
        ("backward", (
            "box",
            theme.blend(grad_fn.fill, t.executed_tint, 0.45),
            theme.blend(grad_fn.stroke, t.backward, 0.55),
            translate("Legend", "already ran"),
        )),
        ("backward", ("edge", t.backward, "", translate("Legend", "gradient flowing"))),
        ("freed", ("dashed", theme.blend(grad_fn.fill, t.background, 0.55), t.freed,
                   translate("Legend", "freed by backward()"))),
        ("stale", ("box", t.stale_fill, t.stale, translate("Legend", "stale: changed in place"))),
        ("storage", ("edge-dotted", theme.storage_colour("S1", t), "",
                     translate("Legend", "shares memory"))),
    ]
    for name, row in states:
        if show is None or name in show:
            rows.append(row)
    return rows


# --------------------------------------------------------------------------- the view
