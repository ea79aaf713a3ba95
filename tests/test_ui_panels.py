"""Panels and editor on their own: given a kernel state, they show the right text (no kernel)."""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtCore import QObject, QRectF, Signal  # noqa: E402
from PySide6.QtWidgets import QWidget  # noqa: E402

from gradviz.app.models import AppState  # noqa: E402
from gradviz.graph.chain_rule import chain_rule  # noqa: E402
from gradviz.graph.fmt import fmt_bytes, fmt_number, fmt_value  # noqa: E402
from gradviz.ui.editor import CodeEditor  # noqa: E402
from gradviz.ui.panels import (  # noqa: E402
    AccumulationPanel,
    InspectorPanel,
    MemoryPanel,
    MiniPlot,
    OutputPanel,
    TensorsPanel,
    nice_ticks,
)

EXAMPLE = Path(__file__).resolve().parents[1] / "docs" / "snapshot-example.json"


@pytest.fixture
def example_state():
    return json.loads(EXAMPLE.read_text())


def _step(node, label, grad_out, grad_in, targets, names=()):
    return {
        "node": node,
        "label": label,
        "grad_outputs": grad_out,
        "grad_inputs": grad_in,
        "vars": list(names),
        "targets": targets,
    }


RETAIN_GRAPH_PASS = {
    "root": ["fn3"],
    "retain_graph": True,
    "statement": 4,
    "kind": "backward",
    "error": None,
    "leaf_grads": {"x": 0.6000000238418579},
    "steps": [
        _step("fn3", "LogBackward0", [1.0], [0.00800000037997961], ["fn2"], ["z"]),
        _step("fn2", "PowBackward0", [0.00800000037997961], [0.6000000238418579], ["acc1"], ["y"]),
        _step("acc1", "AccumulateGrad", [0.6000000238418579], [], [], ["x"]),
    ],
}


def test_numbers_and_bytes_read_like_pytorch_prints_them():
    assert fmt_number(0.6000000238418579) == "0.6"
    assert fmt_number(1.2000000476837158) == "1.2"
    assert fmt_number(1.6094379425048828) == "1.6094"
    assert fmt_number(0.00800000037997961) == "0.008"
    assert fmt_number(14.0) == "14.0"
    assert fmt_number(-0.005316) == "-0.0053"
    assert fmt_number(1.5e-7) == "1.5e-07"
    assert fmt_value([[0.75, 3.0], [6.75, 3.0]]) == "[[0.75, 3.0], [6.75, 3.0]]"
    assert fmt_value(None) == "None"
    assert fmt_bytes(400_000_000) == "400,000,000 B (381.5 MiB)"
    assert fmt_bytes(0) == "0 B"
    assert fmt_bytes(12) == "12 B"
    assert fmt_bytes(2048) == "2,048 B (2.0 KiB)"
    assert nice_ticks(0, 1.2) == [0, 0.5, 1.0, 1.5]


def test_chain_rule_multiplies_local_derivatives_from_the_root():
    lines = chain_rule(RETAIN_GRAPH_PASS, "acc1")
    assert lines[0] == "dz/dx = 1 × 0.008 × 75 = 0.6"
    assert chain_rule(RETAIN_GRAPH_PASS, "fn2")[0] == "dz/dy = 1 × 0.008 = 0.008"
    non_scalar = copy.deepcopy(RETAIN_GRAPH_PASS)
    non_scalar["steps"][0]["grad_outputs"] = [[1.0, 1.0]]
    assert chain_rule(non_scalar, "acc1") == []


def test_tensors_panel_puts_leaves_first_and_highlights_what_changed(qtbot, example_state):
    panel = TensorsPanel()
    qtbot.addWidget(panel)
    panel.set_state(example_state)
    assert panel.names()[0] == "x"
    assert set(panel.names()) == {"x", "y", "w", "z"}
    assert panel.cell("z", "grad_fn") == "AddBackward0"
    assert panel.cell("x", "value") == "5.0"
    assert panel.cell("x", "shape") == "scalar"
    after = copy.deepcopy(example_state)
    after["tensors"]["x"]["grad"] = 1.600000023841858
    after["tensors"]["x"]["version"] = 1
    after["tensors"]["B"] = dict(after["tensors"]["y"], name="B", is_leaf=True, grad_fn=None)
    panel.set_state(after)
    assert panel.cell("x", "grad") == "1.6"
    assert panel.is_highlighted("x", "grad") and panel.is_highlighted("x", "version")
    assert not panel.is_highlighted("x", "value")
    assert not panel.is_highlighted("z", "value")
    assert panel.is_highlighted("B", "value")  # a new variable
    assert panel.names()[:2] == ["x", "B"]
    assert "⇄ y" in panel.cell("B", "storage")  # shares y's memory


def test_accumulation_panel_lists_every_pass_and_marks_zeroing(qtbot, example_state):
    panel = AccumulationPanel()
    qtbot.addWidget(panel)
    state = dict(example_state)
    state["grad_events"] = {
        "x": [
            {"kind": "backward", "statement": 4, "value": 0.6000000238418579, "pass_index": 0},
            {"kind": "backward", "statement": 6, "value": 1.2000000476837158, "pass_index": 1},
            {"kind": "zero", "statement": 9, "value": 0.0, "pass_index": None},
        ]
    }
    panel.set_state(state)
    assert panel.rows() == [
        ("x", "backward #1", "0.6"),
        ("x", "backward #2", "1.2"),
        ("x", "zeroed", "0.0"),
    ]
    assert panel.table.item(2, 0).font().italic()
    assert panel.plot.y_title == ".grad of each leaf"
    state["grad_events"] = {"w": [{"kind": "backward", "statement": 1, "value": [[3.0, 4.0]]}]}
    panel.set_state(state)
    assert "norm" in panel.plot.y_title
    assert panel.plot.series[0].points[0][1] == pytest.approx(5.0)
    panel.resize(400, 300)
    assert not panel.grab().isNull()


def test_memory_panel_formats_bytes_per_statement_with_a_totals_row(qtbot, example_state):
    panel = MemoryPanel()
    qtbot.addWidget(panel)
    state = copy.deepcopy(example_state)
    state["memory"]["statements"][4]["allocated_bytes"] = 400_000_000
    panel.set_state(state)
    rows = panel.row_texts()
    assert rows[4][0] == "9" and rows[4][1].startswith("z = torch.log(y)")
    assert rows[4][2] == "400,000,000 B (381.5 MiB)"  # exact, as the tooltip gives it
    assert rows[-1][1] == "total / now"
    assert len(rows) == len(state["memory"]["statements"]) + 1
    shown = panel.shown_texts()  # the cells: short
    assert shown[4][2] == "381.5 MiB" and shown[0][2] == "0 B"
    assert "400,000,000 B (381.5 MiB)" in panel.table.item(4, 2).toolTip()
    panel.resize(700, 250)
    assert not panel.grab().isNull()


def test_inspector_shows_op_saved_tensors_and_statement(qtbot, example_state):
    panel = InspectorPanel()
    qtbot.addWidget(panel)
    panel.set_state(example_state)
    panel.show_node("fn3")
    text = panel.text()
    assert "PowBackward0" in text
    assert "exponent" in text and "3" in text
    assert "self" in text and "same memory as x" in text
    assert "line 6: y = x ** 3" in text
    freed = copy.deepcopy(example_state)
    for node in freed["graph"]["nodes"]:
        if node["id"] == "fn3":
            node["freed"] = True
    panel.set_state(freed)
    assert "freed" in panel.text()
    passes = copy.deepcopy(RETAIN_GRAPH_PASS)
    passes["root"] = ["fn11"]
    passes["steps"] = [
        _step("fn11", "LogBackward0", [1.0], [0.008], ["fn3"], []),
        _step("fn3", "PowBackward0", [0.008], [0.6], ["acc5"], ["y"]),
        _step("acc5", "AccumulateGrad", [0.6], [], [], ["x"]),
    ]
    freed["backward_passes"] = [passes]
    panel.set_state(freed)
    panel.show_node("t1")  # the leaf tensor x: its AccumulateGrad's gradient
    text = panel.text()
    assert "Backward pass #1" in text
    assert "d(LogBackward0 output)/dx = 1 × 0.008 × 75 = 0.6" in text


def test_output_panel_prefixes_every_entry_with_its_line(qtbot):
    panel = OutputPanel()
    qtbot.addWidget(panel)
    results = [
        {"line": 3, "output": "hello\n", "value": None, "warnings": [], "error": None},
        {
            "line": 4,
            "output": "",
            "value": "tensor(14.)",
            "warnings": ["UserWarning: .grad of a non-leaf"],
            "error": None,
        },
        {
            "line": 5,
            "output": "",
            "value": None,
            "warnings": [],
            "error": {
                "type": "RuntimeError",
                "message": "boom",
                "explanation": "because",
                "line": 5,
            },
        },
    ]
    panel.set_state({"results": results})
    plain = [e.plain() for e in panel.entries()]
    assert plain == [
        "[line 3] hello",
        "[line 4] = tensor(14.)",
        "[line 4] UserWarning: .grad of a non-leaf",
        "[line 5] RuntimeError: boom\nWhy: because",
    ]
    assert "line 5" in panel.text() and "because" in panel.text()


def test_editor_marks_next_statement_error_and_notes(qtbot):
    editor = CodeEditor()
    qtbot.addWidget(editor)
    editor.setPlainText("import torch\nx = torch.ones(2)\nx[0] = 3\n")
    editor.set_statement_marks((2, 2), (1, 1), {1})
    editor.set_error(3, 3, "RuntimeError: a leaf Variable that requires grad")
    editor.set_notes({2: "look here"})
    assert editor.tooltip_at_line(3).startswith("RuntimeError")
    assert editor.tooltip_at_line(2) == ""
    assert "look here" in editor.gutter_tooltip(2)
    assert len(editor.extraSelections()) >= 3
    editor.select_lines(2)
    assert editor.cursor_line() == 2
    editor.resize(400, 200)
    editor.show()
    assert not editor.grab().isNull()


def test_signal_emit_does_not_exhaust_true(qtbot):
    """PySide6 6.12's emit() steals a reference to True; gradviz.ui guards against it."""
    import gradviz.ui  # noqa: F401 - applies the guard

    class Emitter(QObject):
        fired = Signal()

    emitter = Emitter()
    before = sys.getrefcount(True)
    for _ in range(before + 10):
        emitter.fired.emit()
    assert sys.getrefcount(True) > 0


def test_accumulation_plot_labels_never_overlap_and_the_legend_is_whole(qtbot):
    """Four leaves with close gradients (the training lesson): value labels that would
    collide are left out, and the legend fits in two rows rather than cutting names off."""
    from gradviz.ui.panels import MiniPlot, Series

    plot = MiniPlot()
    qtbot.addWidget(plot)
    names = ["net.fc1.bias.grad", "net.fc1.weight.grad", "net.fc2.bias.grad", "net.fc2.weight.grad"]
    values = [[0.5298, 0.4219, 0.4494], [0.4357, 0.4212, 0.3588],
              [0.2068, 0.1707, 0.1872], [-0.5374, -0.3376, -0.2095]]
    colours = ["#1c7ed6", "#ae3ec9", "#37b24d", "#f59f00"]
    plot.set_series([
        Series(n, c, [(f"#{i + 1}", v) for i, v in enumerate(vs)])
        for n, c, vs in zip(names, colours, values, strict=True)
    ], "||.grad||")
    for width in (364, 240):
        plot.resize(width, 170)
        plot.grab()  # paints
        boxes = plot.drawn_labels
        assert boxes, "some values are labelled"
        assert not any(a.intersects(b) for i, a in enumerate(boxes) for b in boxes[i + 1:])
        # nor does one cover a point's dot, the legend or an x label, or leave the plot
        dots = [QRectF(pt.x() - 5, pt.y() - 5, 10, 10) for _, pt in plot.drawn_points]
        others = dots + [r for r, _ in plot.drawn_legend] + [r for r, _ in plot.drawn_x_labels]
        assert not any(box.intersects(other) for box in boxes for other in others)
        room = plot._plot_rect.adjusted(-8, -4, 8, 0)
        assert all(room.contains(box) for box in boxes)
        # every leaf named (shortened with "…" when its column is narrow), inside the plot
        shown = [name for _, name in plot.drawn_legend]
        assert len(shown) == 4 and all(
            n == full or ("…" in n and n.replace("…", "") != full)
            for n, full in zip(shown, names, strict=True)
        )
        assert all(rect.right() <= width for rect, _ in plot.drawn_legend)
        assert max(rect.bottom() for rect, _ in plot.drawn_legend) < 50  # two rows at most


def test_plot_labels_every_point_with_room_and_no_point_without_a_value(qtbot):
    """Points far apart in a wide plot are each labelled (a placement stricter than
    "no overlap" would drop labels and still pass the test above); a nan .grad gets
    its dot and no label (it has no place on the axis)."""
    import math

    from gradviz.ui.panels import MiniPlot, Series

    plot = MiniPlot()
    qtbot.addWidget(plot)
    plot.resize(600, 220)
    plot.set_series([Series("w.grad", "#1c7ed6", [("#1", 0.2), ("#2", 1.4), ("#3", 0.7)])], "g")
    plot.grab()
    assert len(plot.drawn_labels) == 3
    plot.set_series(
        [Series("w.grad", "#1c7ed6", [("#1", 0.2), ("#2", math.nan), ("#3", 0.7)])], "g"
    )
    plot.grab()
    assert len(plot.drawn_labels) == 2
    assert all(
        math.isfinite(v) for box in plot.drawn_labels
        for v in (box.x(), box.y(), box.width(), box.height())
    )


def _result(index, line, output="", warnings=(), value=None, error=None):
    return {"index": index, "line": line, "end_line": line, "source": f"s{index}", "ok": error is None,
            "error": error, "warnings": list(warnings), "output": output, "value": value}


@pytest.mark.parametrize("width", [240, 600])
def test_output_scrolls_to_where_the_new_statement_starts_writing(qtbot, width):
    """A long warning is read from its start, not from the end the scroll bar reaches."""
    from PySide6.QtCore import QPoint

    panel = OutputPanel()
    qtbot.addWidget(panel)
    panel.resize(width, 160)
    panel.show()
    earlier = [_result(i, 10 + i, output=f"print {i}\n") for i in range(12)]
    warning = "UserWarning: " + " ".join(["the .grad attribute of a non-leaf Tensor"] * 30)
    last = _result(12, 40, value="tensor(1.)", warnings=[warning])
    panel.set_state({"results": earlier + [last], "new_results": [last]})
    entries = panel.entries()
    assert panel.focus_entry() == next(i for i, e in enumerate(entries) if e.line == 40)
    bar = panel.browser.verticalScrollBar()
    assert 0 < bar.value() < bar.maximum()  # not the end: the warning runs on below
    top = panel.browser.cursorForPosition(QPoint(4, 4)).block().text()
    # narrow: the line number inline; wide: in its own column
    assert top == "line 40" if width > OutputPanel.NARROW else top.startswith("line 40 = "), top
    assert panel.browser.lineWrapMode() == panel.browser.LineWrapMode.WidgetWidth
    # the same state again leaves a reader's scroll position alone
    bar.setValue(0)
    panel.set_state({"results": earlier + [last], "new_results": [last]})
    assert bar.value() == 0
    # a note goes to the end
    panel.add_note("restarted")
    assert panel.focus_entry() is None and bar.value() == bar.maximum()


def test_inspector_names_leaves_and_shows_the_saved_values_a_replayed_pass_used(
    qtbot, example_state
):
    panel = InspectorPanel()
    qtbot.addWidget(panel)
    before = copy.deepcopy(example_state)  # fn3 (PowBackward0) saved x, alive
    panel.set_state(before)
    after = copy.deepcopy(example_state)  # backward ran without retain_graph: freed
    saved_ids = {e["target"] for e in after["graph"]["edges"]
                 if e["source"] == "fn3" and e.get("kind") == "saved"}
    after["graph"]["nodes"] = [n for n in after["graph"]["nodes"] if n["id"] not in saved_ids]
    after["graph"]["edges"] = [e for e in after["graph"]["edges"] if e["target"] not in saved_ids]
    for node in after["graph"]["nodes"]:
        if node["id"] == "fn3":
            node["freed"] = True
    bpass = copy.deepcopy(RETAIN_GRAPH_PASS)
    bpass["steps"] = [
        _step("fn11", "LogBackward0", [1.0], [0.008], ["fn3"], ["z"]),
        _step("fn3", "PowBackward0", [0.008], [0.6], ["acc5"], ["y"]),
        _step("acc5", "AccumulateGrad", [0.6], [], [], ["x"]),
    ]
    bpass["root"] = ["fn11"]
    after["backward_passes"] = [bpass]
    panel.set_state(after)
    panel.show_node("fn3")
    text = panel.text()
    assert "0.6 → x.grad (AccumulateGrad)" in text
    assert "freed: backward() ran without retain_graph=True" in text  # not replaying
    panel.focus_pass = 0  # the window replays pass #1
    panel.show_node("fn3")
    text = panel.text()
    assert "as backward pass #1 used them" in text and "5.0" in text and "same memory as x" in text
    # values the kernel recorded with the step win over what the window saw
    after = copy.deepcopy(after)
    after["backward_passes"][0]["steps"][1]["saved"] = [
        {"label": "self", "value": 7.5, "shape": [], "vars": ["x"]}
    ]
    panel.set_state(after)
    assert "self" in panel.text() and "7.5" in panel.text()
    panel.show_node("acc5")
    assert "x.grad (AccumulateGrad)" in panel.text() and "adds into" in panel.text()


def test_inspector_remembers_saved_tensors_from_deltas_as_from_whole_states(
    qtbot, example_state, monkeypatch
):
    """The window's deltas bring the inspector's memory of saved tensors up to date by
    what changed; it ends where reading every whole state ends."""
    from gradviz.graph.delta import StateDecoder, StateEncoder

    def seen(panel: InspectorPanel) -> dict:
        return {k: (v.label, v.statement, [{a: b for a, b in d.items() if a != "new"}
                                            for d in v.saved])
                for k, v in panel._seen_saved.items()}

    base = copy.deepcopy(example_state)
    for n in base["graph"]["nodes"]:
        n["new"] = True
    for e in base["graph"]["edges"]:
        e["new"] = True
    saved = [e for e in base["graph"]["edges"] if e.get("kind") == "saved"]
    assert saved  # fn3 saved x
    owner = saved[0]["source"]
    states = [base]
    # 1: every glow off (renewals only)
    s1 = copy.deepcopy(base)
    for n in s1["graph"]["nodes"]:
        n["new"] = False
    for e in s1["graph"]["edges"]:
        e["new"] = False
    states.append(s1)
    # 2: a new grad_fn with two saved tensors, and the old saved value changes
    s2 = copy.deepcopy(s1)
    s2["graph"]["nodes"] += [
        {"id": "fn90", "kind": "grad_fn", "label": "MulBackward0", "statement": 5, "new": True},
        {"id": "fn90:other", "kind": "saved", "label": "other", "value": 2.0, "new": True},
        {"id": "fn90:self", "kind": "saved", "label": "self", "value": 3.0, "new": True},
    ]
    s2["graph"]["edges"] += [
        {"source": "fn90", "target": "fn90:other", "kind": "saved", "new": True},
        {"source": "fn90", "target": "fn90:self", "kind": "saved", "new": True},
    ]
    for n in s2["graph"]["nodes"]:
        if n["id"] == saved[0]["target"]:
            n["value"] = 9.25
    states.append(s2)
    # 3: backward freed the first grad_fn's saved tensors: its saved nodes go
    s3 = copy.deepcopy(s2)
    gone = {e["target"] for e in saved}
    s3["graph"]["nodes"] = [n for n in s3["graph"]["nodes"] if n["id"] not in gone]
    s3["graph"]["edges"] = [e for e in s3["graph"]["edges"] if e["target"] not in gone]
    for n in s3["graph"]["nodes"]:
        if n["id"] == owner:
            n["freed"] = True
    states.append(s3)
    # 4: one saved edge of the new grad_fn goes, the other's value changes
    s4 = copy.deepcopy(s3)
    s4["graph"]["edges"] = [e for e in s4["graph"]["edges"] if e["target"] != "fn90:other"]
    for n in s4["graph"]["nodes"]:
        if n["id"] == "fn90:self":
            n["value"] = 4.5
    states.append(s4)

    encoder, decoder = StateEncoder(), StateDecoder()
    by_delta, whole = InspectorPanel(), InspectorPanel()
    qtbot.addWidget(by_delta)
    qtbot.addWidget(whole)
    full_reads = []
    index_all = InspectorPanel._index_all
    monkeypatch.setattr(
        by_delta, "_index_all", lambda edges: (full_reads.append(1), index_all(by_delta, edges))
    )
    for i, state in enumerate(states):
        wire = json.loads(json.dumps(encoder.encode(state, delta=True)))
        decoded, changes = decoder.decode(wire)
        assert (changes is None) == (i == 0)
        by_delta.take_changes(changes)
        by_delta.set_state(decoded)
        whole.set_state(copy.deepcopy(state))
        assert seen(by_delta) == seen(whole), i
    # the whole first state, and the first delta (a whole state carries no number the
    # panel could match a delta's base to, as for the canvas); every delta after is applied
    assert len(full_reads) == 2
    assert seen(whole)[owner][2][0]["value"] == 9.25  # remembered before it was freed
    assert [d["label"] for d in seen(whole)["fn90"][2]] == ["self"]
    assert seen(whole)["fn90"][2][0]["value"] == 4.5


def test_accumulation_plot_puts_every_leaf_at_its_backward_pass_number(qtbot, example_state):
    """a_.grad from pass 3 and x.grad from pass 4 sit at 3 and 4, not both at #1."""
    panel = AccumulationPanel()
    qtbot.addWidget(panel)
    state = dict(example_state)
    state["backward_passes"] = [dict(RETAIN_GRAPH_PASS, statement=i) for i in (1, 2, 3, 5)]
    state["grad_events"] = {
        "a": [{"kind": "backward", "statement": 1, "value": 2.0, "pass_index": 0},
              {"kind": "backward", "statement": 2, "value": 7.0, "pass_index": 1},
              {"kind": "zero", "statement": 4, "value": 0.0, "pass_index": None}],
        "a_": [{"kind": "backward", "statement": 3, "value": 2.0, "pass_index": 2}],
        "x": [{"kind": "backward", "statement": 5, "value": [1.0, 2.0], "pass_index": 3}],
    }
    panel.set_state(AppState.of(state))
    plot = panel.plot
    assert plot.slot_labels == ["1", "2", "3", "4"] and plot.x_title == "backward pass"
    xs = {s.name: s.xs for s in plot.series}
    assert xs == {"a": [0, 1, 2.5], "a_": [2], "x": [3]}  # the zero_ between passes 3 and 4
    plot.resize(360, 220)
    plot.show()
    plot.grab()
    drawn = {}
    for name, point in plot.drawn_points:
        drawn.setdefault(name, []).append(point.x())
    assert drawn["a_"] == [plot.slot_x(2)] and drawn["x"] == [plot.slot_x(3)]
    assert drawn["a"][:2] == [plot.slot_x(0), plot.slot_x(1)]
    assert [t for _, t in plot.drawn_x_labels][:4] == ["1", "2", "3", "4"]
    assert [name for _, name in plot.drawn_legend] == ["a", "a_", "x"]  # whole


def test_panels_take_a_typed_state_or_the_wire_dict_alike(qtbot, example_state):
    typed = AppState.of(example_state)
    for cls in (TensorsPanel, MemoryPanel, OutputPanel, AccumulationPanel, InspectorPanel):
        a, b = cls(), cls()
        qtbot.addWidget(a)
        qtbot.addWidget(b)
        a.set_state(example_state)
        b.set_state(typed)
        a.set_state(None)  # nothing to show is fine too
        a.set_state(typed)
    assert a.state is typed


def test_every_widget_of_the_panels_has_an_accessible_name(qtbot, example_state):
    from PySide6.QtWidgets import (
        QAbstractButton,
        QAbstractItemView,
        QLabel,
        QSplitter,
        QTextBrowser,
    )

    from gradviz.ui.debug_strip import DebugStrip
    from gradviz.ui.panels import ModulesPanel
    from gradviz.ui.passes_panel import PassesPanel

    panels = [TensorsPanel(), MemoryPanel(), OutputPanel(), AccumulationPanel(),
              InspectorPanel(), ModulesPanel(), PassesPanel(), DebugStrip()]
    for panel in panels:
        qtbot.addWidget(panel)
        assert panel.accessibleName(), type(panel).__name__
        kinds = (QAbstractItemView, QTextBrowser, QAbstractButton, QSplitter, QLabel, MiniPlot)
        for child in panel.findChildren(QWidget):
            if isinstance(child, kinds) and child.parent() is not None and not isinstance(
                child.parent(), QAbstractItemView
            ):
                assert child.accessibleName(), f"{type(panel).__name__}: {type(child).__name__}"
