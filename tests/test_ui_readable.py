"""A screen that reads well at 1024x700: every demo's key numbers are whole and in view.

For each lesson, run to the end in the real window at 1024x700: the leaves'
gradients sit in Tensors cells inside the table's viewport, unelided (no
horizontal scrolling, no "1.6…"); the no_grad lesson's Memory figures ("held by
graph": 3.8 MiB against 0 B) likewise; and the accumulation plot puts each
leaf's .grad at its backward pass number.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtGui import QFontMetrics  # noqa: E402
from PySide6.QtWidgets import QApplication, QTableWidget, QTableWidgetItem  # noqa: E402

from .conftest import KERNEL_TIMEOUT_MS  # noqa: E402

DEMOS = sorted((Path(__file__).resolve().parents[1] / "resources" / "demos").glob("*.py"))
#: the name the window opens a demo by: the file's name without its number
NAMES = [d.stem.split("_", 1)[1] for d in DEMOS]

#: the view's room around a cell's text: the item style's padding (4 px a side) and the
#: text margins (3 px a side); a longer text is elided
TEXT_ROOM = 14


def _settle() -> None:
    for _ in range(5):
        QApplication.processEvents()


def _run_to_end(qtbot, window) -> None:
    window.run_to_end()

    def done() -> bool:
        state = window.state or {}
        results = state.get("results") or []
        failed = bool(results) and results[-1].get("error") is not None
        return not window.busy and (state.get("at_end") or failed)

    qtbot.waitUntil(done, timeout=KERNEL_TIMEOUT_MS)
    _settle()


def assert_readable(table: QTableWidget, item: QTableWidgetItem, what: str) -> None:
    """``item`` lies wholly inside the table's viewport and its text is not elided."""
    rect = table.visualItemRect(item)
    viewport = table.viewport().rect()
    assert viewport.contains(rect), (
        f"{what}: cell {rect.getRect()} outside the viewport {viewport.getRect()}"
        f" (table {table.width()}x{table.height()})"
    )
    width = QFontMetrics(item.font()).horizontalAdvance(item.text())
    column = table.columnWidth(item.column())
    assert width <= column - TEXT_ROOM, f"{what}: {item.text()!r} needs {width} px in {column}"


@pytest.mark.parametrize("demo", NAMES)
def test_key_numbers_are_whole_and_in_view_at_1024x700(qtbot, main_window, demo):
    window = main_window(demo=demo)
    window.resize(1024, 700)
    _settle()
    _run_to_end(qtbot, window)
    state = window.state

    # the Tensors panel: each leaf's name, value and .grad whole and in view
    window.tensors_dock.raise_()
    _settle()
    panel = window.tensors_panel
    leaves = [
        name for name, t in state["tensors"].items()
        if t.get("is_leaf") and t.get("grad") is not None
    ]
    for name in leaves:
        for column in ("name", "grad", "value"):
            item = panel.item(name, column)
            if column == "value" and len(item.text()) > 40:
                continue  # a big tensor's summary: elided, whole in the tooltip
            assert_readable(panel.table, item, f"{demo}: {name} {column}")
        assert panel.cell(name, "grad") != "None"

    # the accumulation plot: x is the backward pass number, for every leaf
    window.accumulation_dock.raise_()
    _settle()
    plot = window.accumulation_panel.plot
    plot.grab()
    events = state.get("grad_events") or {}
    passes = state.get("backward_passes") or []
    if any(e.get("pass_index") is not None for items in events.values() for e in items):
        assert plot.slot_labels == [str(i + 1) for i in range(len(passes))]
        drawn: dict[str, list[float]] = {}
        for series_name, point in plot.drawn_points:
            drawn.setdefault(series_name, []).append(point.x())
        for leaf, items in events.items():
            series = next(s for s in plot.series if s.name == leaf)
            for k, event in enumerate(items):
                if event["kind"] == "backward" and event.get("pass_index") is not None:
                    assert series.xs[k] == event["pass_index"], (demo, leaf, k)
                    assert drawn[leaf][k] == pytest.approx(plot.slot_x(event["pass_index"]))
        shown = [label for _, label in plot.drawn_x_labels]
        assert "1" in shown, shown
        assert plot.drawn_legend or len(plot.series) < 2

    if demo == "no_grad_memory":
        # held by graph: 4,000,000 B after y = exp(x), 0 B for the same lines under no_grad
        window.memory_dock.raise_()
        _settle()
        memory = window.memory_panel
        table = memory.table
        held = memory._columns.index("held by graph")
        lines = [r[0] for r in memory.row_texts()]
        for line, short, exact in (("7", "3.8 MiB", "4,000,000 B"), ("12", "0 B", "0 B")):
            item = table.item(lines.index(line), held)
            assert item.text() == short and exact in item.toolTip()
            assert_readable(table, item, f"memory line {line} held by graph")
            assert_readable(table, table.item(lines.index(line), 0), f"memory line {line}")
