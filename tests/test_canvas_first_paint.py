"""The canvas's first picture: what it leaves for later (tooltips, item caches) still works."""

from __future__ import annotations

import json
import os
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from PySide6.QtCore import QEvent, QPointF  # noqa: E402
from PySide6.QtGui import QHelpEvent  # noqa: E402
from PySide6.QtWidgets import QApplication, QGraphicsItem, QToolTip  # noqa: E402

from gradviz.ui.canvas import GraphCanvas, NodeItem  # noqa: E402

EXAMPLE = Path(__file__).resolve().parents[1] / "docs" / "snapshot-example.json"


@pytest.fixture
def view(qtbot) -> GraphCanvas:
    canvas = GraphCanvas()
    qtbot.addWidget(canvas)
    canvas.resize(900, 650)
    canvas.show()
    qtbot.waitExposed(canvas)
    snapshot = json.loads(EXAMPLE.read_text())
    canvas.set_graph(snapshot["graph"], snapshot["positions"])
    return canvas


def test_a_node_tooltip_is_written_when_first_asked_for_and_qt_shows_it(view, qtbot):
    items = [i for i in view.scene().items() if isinstance(i, NodeItem)]
    assert items and all(i._tip_stale for i in items)  # nothing written yet
    node_id = next(n for n in view.node_ids() if view.node_item(n).kind == "grad_fn")
    item = view.node_item(node_id)
    label = str(item.attrs["label"])
    point = view.mapFromScene(QPointF(item.cx, item.cy))
    QApplication.sendEvent(
        view.viewport(),
        QHelpEvent(QEvent.Type.ToolTip, point, view.viewport().mapToGlobal(point)),
    )
    qtbot.waitUntil(lambda: label in QToolTip.text())  # Qt's own lookup found it
    assert not item._tip_stale
    # new attributes: written again when next asked for
    item.set_attrs({**item.attrs, "label": "RenamedBackward0"})
    assert item._tip_stale and "RenamedBackward0" in item.toolTip()


def test_node_items_are_cached_from_their_second_paint(view, qtbot):
    items = [i for i in view.scene().items() if isinstance(i, NodeItem)]
    view.viewport().repaint()
    qtbot.waitUntil(lambda: all(
        i.cacheMode() == QGraphicsItem.CacheMode.DeviceCoordinateCache for i in items
    ))
    assert not view._uncached


@pytest.mark.parametrize("lod", [0.4, 0.583, 0.8, 1.3])
@pytest.mark.parametrize("running", [False, True])
def test_glow_rings_in_thin_strokes_look_like_one_wide_stroke(view, monkeypatch, lod, running):
    """The rings round a new (or running) node are drawn as 1-3 strokes a device pixel
    wide where one wide translucent stroke would take Qt's slow path: the picture must
    be the one the wide stroke draws."""
    from PySide6.QtGui import QColor, QImage, QPainter

    from gradviz.ui.canvas import nodes

    node_id = next(n for n in view.node_ids() if view.node_item(n).kind == "grad_fn")
    node = view.node_item(node_id)._node
    node.set_attrs({**node.attrs, "new": True})
    if running:
        node.flags |= nodes._EXECUTING
    theme = view.current_theme()

    def picture() -> QImage:
        image = QImage(260, 120, QImage.Format.Format_ARGB32_Premultiplied)
        image.fill(QColor(theme.background))
        painter = QPainter(image)
        painter.translate(130.3, 60.6)
        painter.scale(lod, lod)
        nodes._paint_node(painter, node, theme, lod)
        painter.end()
        return image

    thin = picture()
    monkeypatch.setattr(nodes, "_FAST_STROKE_PX", 1e9)  # one stroke a ring, as before
    wide = picture()
    worst = max(
        max(abs(a.red() - b.red()), abs(a.green() - b.green()), abs(a.blue() - b.blue()))
        for a, b in (
            (thin.pixelColor(x, y), wide.pixelColor(x, y))
            for y in range(thin.height()) for x in range(thin.width())
        )
    )
    assert worst <= 32
