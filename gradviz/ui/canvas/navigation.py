"""Navigation: zoom, fit and keeping the newest nodes in sight (the canvas's camera).

A mixin of :class:`gradviz.ui.canvas.view.GraphCanvas`, which owns the scene and
calls :meth:`Navigation.keep_graph_in_view` after each step; the keys and the wheel
reach it through the canvas's Qt events.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QPointF, QRectF
from PySide6.QtGui import QTransform
from PySide6.QtWidgets import QGraphicsView

from ._common import FIT_MAX_ZOOM, MAX_ZOOM, MIN_ZOOM, READABLE_ZOOM, ZOOM_STEP, _nodes_union

#: room left between the newest nodes a step reveals and the view's edge (scene units)
REVEAL_PAD = 24.0


def _reveal(now: float, lo: float, hi: float, half: float, pad: float = REVEAL_PAD) -> float:
    """The view's centre along one axis after the least scroll that shows ``lo..hi``
    (with ``pad`` around it) in a view ``2 * half`` wide centred at ``now``; the
    middle of ``lo..hi`` when it is wider than the view."""
    lo, hi = lo - pad, hi + pad
    if hi - lo >= 2 * half:
        return (lo + hi) / 2
    if lo < now - half:
        return lo + half
    if hi > now + half:
        return hi - half
    return now


class Navigation(QGraphicsView):
    """Zoom (wheel, keys, 100 %), fit (readable zoom on the newest nodes, or the whole
    graph) and the view that follows each step."""

    if TYPE_CHECKING:  # kept by the canvas (view.py)
        _node_bounds: QRectF  # every node's box, kept by set_graph
        _newest: QRectF  # the boxes the last step added
        _nodes: dict[str, Any]  # node id -> the canvas's node (rec, cx, cy, width, height)
        _fitted: bool
        _fit_whole: bool

        def _view_changed(self) -> None: ...

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

    def fit_to_view(self, whole: bool = False, follow: bool = False) -> None:
        """Zoom and scroll so the graph reads well: all of it when it fits at a readable
        zoom (never magnified past FIT_MAX_ZOOM); a bigger graph is shown at
        READABLE_ZOOM (node text about 7 px), centred on its newest nodes, the rest a
        drag or a wheel away. ``whole``: all of it, however small (key W).

        ``follow`` (a step, :meth:`keep_graph_in_view`): a bigger graph already shown at
        READABLE_ZOOM scrolls only as far as its newest nodes need to be in sight, as a
        debugger reveals the next line: centring on them made a training loop's picture
        jump up and down every iteration (its forward ops at the top, its loss at the
        bottom) and repainted all of it each time."""
        rect = QRectF(self._node_bounds)  # kept by set_graph, so a step re-fits cheaply
        if rect.isEmpty():
            self.setTransform(QTransform())
            self._view_changed()
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
                newest = self._latest_statement_rect()
            if newest.isEmpty():
                focus = QPointF(rect.center().x(), rect.top())  # the roots sit at the top
            else:
                focus = newest.center()
            half_w, half_h = vw / scale / 2, vh / scale / 2
            # a step on a view already at this zoom: the least scroll from where it is
            # (QRect.center() is up to a pixel off centerOn's centre: REVEAL_PAD absorbs it)
            now = None
            if follow and math.isclose(self.zoom_level(), scale):
                now = self.mapToScene(view.center())
            if now is not None and not newest.isEmpty():
                focus = QPointF(
                    _reveal(now.x(), newest.left(), newest.right(), half_w),
                    _reveal(now.y(), newest.top(), newest.bottom(), half_h),
                )

            def clamp(v: float, lo: float, hi: float) -> float:
                return (lo + hi) / 2 if lo > hi else min(max(v, lo), hi)

            center = QPointF(
                clamp(focus.x(), rect.left() + half_w, rect.right() - half_w),
                clamp(focus.y(), rect.top() + half_h, rect.bottom() - half_h),
            )
            if now is not None and max(abs(center.x() - now.x()), abs(center.y() - now.y())) * scale < 1:
                # the picture holds still (a centerOn of the same point can still move it
                # a pixel: the viewport's centre is not a whole pixel)
                self._fitted = True
                self._fit_whole = whole
                return
        self.setTransform(QTransform.fromScale(scale, scale))
        self.centerOn(center)
        self._fitted = True
        self._fit_whole = whole
        self._view_changed()

    def _latest_statement_rect(self) -> QRectF:
        """The boxes of the latest statement that made nodes (a run's loss and its op),
        for a big graph whose last step made none (a run ending on ``backward()``).
        Without it the view went to the top of the middle of the picture, which on a
        transformer script was the grid of a template layer's unused parameters beside
        the graph, not the graph (None when no node knows its statement)."""
        latest = -1
        made: list[Any] = []
        for node in self._nodes.values():
            # the attribute read straight (a 100,000-node file walks this once)
            statement = node.rec.attrs.get("statement")
            if type(statement) is not int or statement < latest:
                continue
            if statement != latest:
                latest, made = statement, []
            made.append(node)
        return _nodes_union(made, 0.0)

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
            self.fit_to_view(self._fit_whole, follow=True)
        elif not self._newest.isEmpty() and not visible.intersects(self._newest):
            self.centerOn(self._newest.center())
            self._view_changed()

    def newest_rect(self) -> QRectF:
        """The scene rectangle of the boxes the latest step that added nodes added
        (with room for their glow): what a fitted view keeps in sight (when it lies
        outside the graph, fit_to_view follows the latest statement's boxes instead)."""
        return QRectF(self._newest)

    def is_fitted(self) -> bool:
        """The view is as fit_to_view left it (no zoom or pan since)."""
        return self._fitted


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
        self._view_changed()
