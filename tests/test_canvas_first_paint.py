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
