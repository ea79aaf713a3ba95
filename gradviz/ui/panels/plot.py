"""MiniPlot: the small line chart the accumulation and memory panels draw."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QBrush, QColor, QPainter, QPainterPath, QPaintEvent, QPalette, QPen
from PySide6.QtWidgets import QWidget

from ...graph.fmt import fmt_number
from .. import theme
from ..i18n import translate
from ._common import ERROR_TEXT


@dataclass
class Series:
    name: str
    colour: str
    points: list[tuple[str, float]]  # (x label, y)
    style: str = "step"  # "step", "line" or "bar"
    #: each point's x in slot units (slot i is centred on x = i); None: point i at slot i
    xs: list[float] | None = None

    def x(self, i: int) -> float:
        return self.xs[i] if self.xs is not None else float(i)


class MiniPlot(QWidget):
    """A compact plot painted with QPainter: step/line series and bars over labelled x slots."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setAccessibleName(translate("Panels", "Plot"))
        self.series: list[Series] = []
        self.y_title = ""
        #: what the x axis counts (``backward pass``), written under its labels
        self.x_title = ""
        #: the x slots' labels; None: the longest series' point labels
        self.slot_labels: list[str] | None = None
        self.empty_text = translate("Panels", "nothing to plot yet")
        self.y_format: Callable[[float], str] = fmt_number
        #: x (slot units) -> a dashed line there, labelled under the axis where it has room
        self.markers: dict[float, str] = {}
        self.drawn_labels: list[QRectF] = []
        self.drawn_legend: list[tuple[QRectF, str]] = []
        #: what the last paint drew (tests read them): each point (series name, centre)
        #: and each x label (its box, its text)
        self.drawn_points: list[tuple[str, QPointF]] = []
        self.drawn_x_labels: list[tuple[QRectF, str]] = []
        self.binary_units = False  # ticks at round KiB/MiB/GiB values
        self._plot_rect = QRectF()
        self._slot_w = 0.0
        self.setMinimumHeight(140)
        # paintEvent fills the whole widget first: Qt need not paint the dock under it
        self.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent, True)

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt override
        return QSize(320, 160)

    def set_series(self, series: list[Series], y_title: str = "") -> None:
        self.series = series
        self.y_title = y_title
        self.setAccessibleDescription(self.describe())
        self.update()

    def describe(self) -> str:
        """The plot in words (its accessible description)."""
        if not self.series:
            return self.empty_text
        parts = [
            f"{s.name}: " + ", ".join(f"{label} {self.y_format(y)}" for label, y in s.points)
            for s in self.series
        ]
        return f"{self.y_title}. " + "; ".join(parts)

    def slot_count(self) -> int:
        if self.slot_labels is not None:
            return len(self.slot_labels)
        return max((len(s.points) for s in self.series), default=0)

    def slot_x(self, x: float) -> float:
        """The pixel x of slot position ``x`` in the last paint."""
        return self._plot_rect.left() + self._slot_w * (x + 0.5)

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt override
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        p.fillRect(self.rect(), self.palette().color(QPalette.ColorRole.Base))
        font = theme.label_font(11)
        p.setFont(font)
        fm = p.fontMetrics()
        slots = self.slot_count()
        values = [y for s in self.series for _, y in s.points if math.isfinite(y)]
        self.drawn_points, self.drawn_x_labels = [], []
        if not slots or not values:
            p.setPen(QColor(theme.HINT_TEXT))
            p.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, self.empty_text)
            p.end()
            self.drawn_labels, self.drawn_legend = [], []
            return
        lo, hi = min(0.0, min(values)), max(0.0, max(values))
        unit = 1.0
        if self.binary_units and hi > 1024:
            unit = 1024.0 ** min(3, int(math.log(hi, 1024)))
        ticks = [t * unit for t in nice_ticks(lo / unit, hi / unit)]
        lo, hi = ticks[0], ticks[-1]
        if any(s.style == "step" for s in self.series) and max(values) > hi * 0.9:
            # room for the value labels above the top points
            hi += (hi - lo) * 0.15
        left = max(fm.horizontalAdvance(self.y_format(t)) for t in ticks) + 14
        right = 12
        bottom = 22 + (fm.height() if self.x_title else 0)
        # the legend: a grid of at most two rows, names shortened (with "…") to fit
        # their column rather than cut off at the edge or pushing the plot away
        legend: list[tuple[float, int, Series, str]] = []
        row_h = fm.height() + 2
        if len(self.series) > 1:
            room = self.width() - right - left
            widths = [fm.horizontalAdvance(s.name) + 26 for s in self.series]
            rows = 1 if sum(widths) <= room else 2
            columns = math.ceil(len(self.series) / rows)
            column_w = room / columns
            for i, s in enumerate(self.series):
                row, col = divmod(i, columns)
                name = s.name
                if rows > 1 or widths[i] > column_w:
                    name = fm.elidedText(s.name, Qt.TextElideMode.ElideMiddle, int(column_w - 22))
                legend.append((left + col * column_w, row, s, name))
        legend_rows = legend[-1][1] + 1 if legend else 0
        top = 22 + row_h * legend_rows
        plot = QRectF(
            left, top, max(self.width() - left - right, 10), max(self.height() - top - bottom, 10)
        )

        def ypos(v: float) -> float:
            return plot.bottom() - (v - lo) / (hi - lo) * plot.height()

        slot_w = plot.width() / slots
        self._plot_rect, self._slot_w = QRectF(plot), slot_w

        def xpos(x: float) -> float:
            return plot.left() + slot_w * (x + 0.5)

        # grid and y ticks (a label only where it clears the one before: a short plot)
        last_label_y = math.inf
        for t in ticks:
            y = ypos(t)
            p.setPen(QPen(self.palette().color(QPalette.ColorRole.Midlight), 1))
            p.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y))
            if abs(last_label_y - y) < fm.height() + 2:
                continue
            last_label_y = y
            p.setPen(QColor(theme.MUTED_TEXT))
            label = self.y_format(t)
            p.drawText(
                QRectF(0, y - 8, left - 6, 16),
                Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
                label,
            )
        p.setPen(QPen(self.palette().color(QPalette.ColorRole.Mid), 1))
        p.drawLine(QPointF(plot.left(), ypos(0)), QPointF(plot.right(), ypos(0)))
        p.drawLine(QPointF(plot.left(), plot.top()), QPointF(plot.left(), plot.bottom()))
        # title
        p.setPen(QColor(theme.MUTED_TEXT))
        title_font = theme.label_font(11, bold=True)
        p.setFont(title_font)
        p.drawText(QRectF(left, 2, plot.width(), 16), Qt.AlignmentFlag.AlignLeft, self.y_title)
        p.setFont(font)
        # x labels (thinned when crowded: never closer than the widest label)
        labels = (
            self.slot_labels
            if self.slot_labels is not None
            else [
                label
                for label, _ in next(
                    (s.points for s in self.series if len(s.points) == slots),
                    self.series[0].points,
                )
            ]
        )
        widest = max((fm.horizontalAdvance(label) for label in labels), default=0) + 10
        step = max(1, math.ceil(slots / max(1.0, plot.width() / max(widest, 24))))
        p.setPen(QColor(theme.MUTED_TEXT))
        for i, label in enumerate(labels):
            if i % step and i != slots - 1:
                continue
            w = max(fm.horizontalAdvance(label) + 6, slot_w)
            box = QRectF(xpos(i) - w / 2, plot.bottom() + 3, w, fm.height())
            if any(box.intersects(b) for b, _ in self.drawn_x_labels):
                continue
            p.drawText(box, Qt.AlignmentFlag.AlignHCenter, label)
            self.drawn_x_labels.append((box, label))
        if self.x_title:
            p.drawText(
                QRectF(plot.left(), plot.bottom() + 3 + fm.height(), plot.width(), fm.height()),
                Qt.AlignmentFlag.AlignHCenter,
                self.x_title,
            )
        # markers: a dashed line at their x, named under the axis where that is free
        for x, text in sorted(self.markers.items()):
            px = xpos(x)
            p.setPen(QPen(QColor(ERROR_TEXT), 1, Qt.PenStyle.DashLine))
            p.drawLine(QPointF(px, plot.top()), QPointF(px, plot.bottom()))
            w = fm.horizontalAdvance(text) + 4
            box = QRectF(px - w / 2, plot.bottom() + 3, w, fm.height())
            if not any(box.intersects(b) for b, _ in self.drawn_x_labels):
                p.setPen(QColor(ERROR_TEXT))
                p.drawText(box, Qt.AlignmentFlag.AlignHCenter, text)
                self.drawn_x_labels.append((box, text))
        # series
        bars = [s for s in self.series if s.style == "bar"]
        bar_w = min(slot_w * 0.7, 28) / max(1, len(bars))
        for k, s in enumerate(bars):
            p.setPen(Qt.PenStyle.NoPen)
            p.setBrush(QColor(s.colour))
            for i, (_, y) in enumerate(s.points):
                x0 = xpos(s.x(i)) - bar_w * len(bars) / 2 + k * bar_w
                r = QRectF(x0, min(ypos(y), ypos(0)), bar_w - 1, abs(ypos(y) - ypos(0)))
                p.drawRect(r)
        # value labels drawn so far: no two may overlap, and none may cover a point.
        # Boxes are (left, top, right, bottom) floats here: a backward step's repaint
        # tried ~100 candidate boxes against ~60 others, and QRectF calls made that a
        # third of the plot's paint
        placed: list[QRectF] = []
        # (each right and bottom summed as QRectF sums them: x + width)
        taken: list[tuple[float, float, float, float]] = [
            (x0, y0, x0 + 10, y0 + 10)
            for s in self.series if s.style != "bar"
            for i, (_, y) in enumerate(s.points) if math.isfinite(y)
            for x0, y0 in ((xpos(s.x(i)) - 5, ypos(y) - 5),)
        ]  # the points' dots
        # the legend and the x labels are no place for a value either
        taken += [
            (x, y0, x + (fm.horizontalAdvance(name) + 13), y0 + fm.height())
            for x, row, _, name in legend
            for y0 in (21 + row_h * row,)
        ]
        taken += [(b.left(), b.top(), b.right(), b.bottom()) for b, _ in self.drawn_x_labels]
        labels_room = plot.adjusted(-8, -4, 8, 0)
        room_l, room_t = labels_room.left(), labels_room.top()
        room_r, room_b = labels_room.right(), labels_room.bottom()

        def free(left: float, top: float, w: float, h: float) -> bool:
            """Inside the room (edges included) and overlapping nothing taken (QRectF's
            rules: boxes that only touch do not overlap)."""
            right, bottom = left + w, top + h
            if left < room_l or top < room_t or right > room_r or bottom > room_b:
                return False
            return not any(
                left < r and x < right and top < b and y < bottom for x, y, r, b in taken
            )

        advance: dict[str, float] = {}
        white_pen = QPen(QColor("#ffffff"), 1.5)
        for s in self.series:
            if s.style == "bar" or not s.points:
                continue
            colour = QColor(s.colour)
            path = QPainterPath()
            for i, (_, y) in enumerate(s.points):
                pt = QPointF(xpos(s.x(i)), ypos(y))
                if i == 0:
                    path.moveTo(pt)
                elif s.style == "step":
                    path.lineTo(QPointF(pt.x(), path.currentPosition().y()))
                    path.lineTo(pt)
                else:
                    path.lineTo(pt)
            p.setBrush(Qt.BrushStyle.NoBrush)
            p.setPen(QPen(colour, 2))
            p.drawPath(path)
            p.setBrush(QBrush(colour))
            label_every = max(1, math.ceil(len(s.points) / max(1, plot.width() / 46)))
            for i, (_, y) in enumerate(s.points):
                px, py = xpos(s.x(i)), ypos(y)
                pt = QPointF(px, py)
                p.setPen(white_pen)
                p.drawEllipse(pt, 4, 4)
                self.drawn_points.append((s.name, pt))
                if s.style == "step" and i % label_every == 0 and math.isfinite(py):
                    text = self.y_format(y)
                    tw = advance.get(text)
                    if tw is None:
                        tw = advance[text] = fm.horizontalAdvance(text) + 4
                    h = fm.height()
                    # above the point, else right of it, left of it, below it
                    corner = next(
                        (
                            c for c in (
                                (px - tw / 2, py - h - 6),
                                (px + 7, py - h / 2),
                                (px - 7 - tw, py - h / 2),
                                (px - tw / 2, py + 6),
                            )
                            if free(c[0], c[1], tw, h)
                        ),
                        None,
                    )
                    if corner is None:
                        continue  # no room: this point goes unlabelled (the table lists it)
                    taken.append((corner[0], corner[1], corner[0] + tw, corner[1] + h))
                    rect = QRectF(corner[0], corner[1], tw, h)
                    placed.append(rect)
                    p.setPen(colour)
                    p.drawText(rect, Qt.AlignmentFlag.AlignHCenter, text)
        # legend, under the title
        drawn_legend = []
        for x, row, s, name in legend:
            y = 21 + row_h * row
            p.setPen(Qt.PenStyle.NoPen)
            p.setBrush(QColor(s.colour))
            p.drawRect(QRectF(x, y + 2, 9, 9))
            p.setPen(QColor(theme.TEXT))
            p.drawText(QPointF(x + 13, y + fm.ascent()), name)
            drawn_legend.append(
                (QRectF(x, y, fm.horizontalAdvance(name) + 13, fm.height()), name)
            )
        p.end()
        #: what the last paint drew (tests read them): value-label boxes, legend entries
        self.drawn_labels = placed
        self.drawn_legend = drawn_legend


def nice_ticks(lo: float, hi: float, count: int = 4) -> list[float]:
    """Round tick values (1, 2, 2.5, 5 x 10^k) covering ``lo``..``hi``."""
    if hi <= lo:
        hi = lo + 1.0
    raw = (hi - lo) / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    start = math.floor(lo / step) * step
    ticks = []
    value = start
    while value < hi - step * 1e-9:
        ticks.append(round(value, 12))
        value += step
    ticks.append(round(value, 12))
    return ticks


# --- accumulation -------------------------------------------------------------------------
