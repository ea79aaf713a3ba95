"""The Qt-free application layer (gradviz.app): guide text, backward player, commands,
files, editor marks. No QApplication here; states come from real sessions, and numbers
are compared with what PyTorch computed, formatted by the one formatter."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from gradviz.app.backward_player import BackwardPlayer
from gradviz.app.commands import FORWARD_COMMANDS, CommandContext, enabled_commands
from gradviz.app.demos import list_demos
from gradviz.app.files import Document, RecentFiles, read_path, restore_plan
from gradviz.app.guide import (
    GuideContext,
    backward_step_note,
    guide_note,
    node_titles,
    reply_status,
    statements_before_backward,
)
from gradviz.app.marks import editor_marks
from gradviz.app.models import AppState
from gradviz.core.session import Session
from gradviz.graph.fmt import fmt_value

DEMOS = {d.name: d for d in list_demos()}


def run(source: str) -> AppState:
    session = Session(source)
    session.run_to_end(keep_going=True)
    return AppState.from_wire(session.snapshot())


def test_the_app_layer_imports_neither_qt_nor_torch():
    code = (
        "import sys, gradviz.app.guide, gradviz.app.backward_player, gradviz.app.commands,"
        " gradviz.app.files, gradviz.app.marks, gradviz.app.display, gradviz.app.timeline,"
        " gradviz.app.autosave, gradviz.app.snapshot;"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('PySide6', 'torch')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# --- the backward replay's words ----------------------------------------------------------


def test_backward_note_names_leaves_by_their_variable_with_pytorchs_numbers():
    demo = DEMOS["custom_function"]
    state = run(demo.source)
    bpass = state.backward_passes[0]
    # the same numbers from plain PyTorch: the script's own leaves after backward()
    env: dict = {}
    exec(compile(demo.source.replace("dev", "'cpu'"), "demo", "exec"), env)  # noqa: S102
    x, q = env["x"], env["q"]
    notes = [
        backward_step_note(bpass, 0, i, state.graph_nodes, state.statements).plain()
        for i in range(1, len(bpass.steps) + 1)
    ]
    pow_step = next(n for n in notes if n.split(": ", 1)[1].startswith("MyPowBackward"))
    assert f"{fmt_value(x.grad.item())} → x.grad" in pow_step
    assert f"{fmt_value(q.grad.item())} → q.grad" in pow_step
    assert "AccumulateGrad" not in pow_step.split(" and passes ")[1]
    assert all("acc" not in n and "fn" not in n.split(": ", 1)[0] for n in notes)
    assert notes[-1].split(": ", 1)[0].endswith(f"step {len(notes)} of {len(notes)}")


def test_node_titles_never_show_internal_ids():
    state = run(DEMOS["two_leaves"].source)
    bpass = state.backward_passes[0]
    titles = node_titles(bpass, state.graph_nodes)
    for node_id in bpass.nodes:
        assert node_id not in titles[node_id]


# --- the guide note -----------------------------------------------------------------------


def test_a_failed_statement_inside_a_loop_is_named_by_the_line_that_failed():
    source = "import torch\nx = torch.ones(2)\nfor i in range(2):\n    y = x @ torch.ones(3)\n"
    state = run(source)
    failed = state.results[-1]
    assert not failed.ok
    note = guide_note(GuideContext(statements=state.statements, cursor=state.cursor, failed=failed))
    assert note.tag is not None and note.tag.text == "Line 4 failed"
    reply = AppState.from_wire({**state.raw, "new_results": [state.raw["results"][-1]]})
    assert reply_status("step", reply).startswith("Line 4 failed")
    marks = editor_marks(state.statements, state.results, state.cursor, failed)
    assert marks.error is not None and marks.error[:2] == (4, 4)


def test_a_syntax_error_says_the_line_once():
    state = run("import torch\nx = (\n")
    pe = state.parse_error
    assert pe is not None
    note = guide_note(GuideContext(parse_error=pe))
    assert note.tag is not None and note.tag.text.startswith(f"Fix · line {pe.line}")
    assert f"line {pe.line}" not in note.plain().split(": ", 1)[1]
    status = reply_status("load", state)
    assert status.count(f"line {pe.line}") == 1
    typed = guide_note(GuideContext(syntax_error=(3, "SyntaxError: invalid syntax")))
    assert typed.tag is not None and typed.tag.text == "Fix · line 3"
    assert "state is kept" in typed.plain()


def test_demo_notes_and_the_end_of_the_script():
    demo = DEMOS["retain_graph"]
    session = Session(demo.source)
    state = AppState.from_wire(session.snapshot())
    first = guide_note(GuideContext(statements=state.statements, cursor=0, notes=demo.notes))
    assert first.tag is not None and first.tag.role in ("note", "next")
    session.run_to_end(keep_going=True)
    end = AppState.from_wire(session.snapshot())
    note = guide_note(
        GuideContext(statements=end.statements, cursor=len(end.statements),
                     notes=demo.notes, backward_available=True, has_passes=True)
    )  # fmt: skip
    assert note.tag is not None and note.tag.text == "End" and "F7" in note.plain()


def test_statements_before_backward_counts_top_level_statements():
    source = DEMOS["first_backward"].source
    n = statements_before_backward(source)
    state = AppState.from_wire(Session(source).snapshot())
    assert n is not None and ".backward(" in state.statements[n].source
    assert all(".backward(" not in s.source for s in state.statements[:n])


# --- the backward player ------------------------------------------------------------------


def test_the_player_walks_every_step_then_ends_and_hides_its_highlight():
    state = run(DEMOS["retain_graph"].source)
    passes = state.backward_passes
    player = BackwardPlayer()
    player.sync(passes)
    seen = []
    while player.step(passes):
        assert player.visible and player.step_index is not None
        seen.append((player.pass_index, player.step_index))
    expected = [(i, k) for i, p in enumerate(passes) for k in range(len(p.steps))]
    assert seen == expected
    assert not player.visible and player.step_index is None  # the replay ended
    assert not player.available(passes)


def test_a_new_state_hides_the_highlight_and_keeps_the_place():
    passes = run(DEMOS["retain_graph"].source).backward_passes
    player = BackwardPlayer()
    player.sync(passes)
    player.step(passes)
    player.step(passes)
    assert player.step_index == 1
    player.sync(passes)  # Zero grad: the same passes
    assert player.step_index is None and player.focus_pass is None
    player.step(passes)
    assert player.step_index == 2  # F7 goes on where it was
    player.sync(passes[:1])  # Step back: a pass fewer
    assert player.step_index is None and player.pass_index == 0 and player.shown == 0


def test_picking_a_pass_starts_it_over():
    passes = run(DEMOS["retain_graph"].source).backward_passes
    player = BackwardPlayer()
    player.sync(passes)
    assert player.pick(passes, 1) and (player.pass_index, player.step_index) == (1, 0)
    assert not player.pick(passes, 99)


# --- which commands make sense -------------------------------------------------------------


def test_read_only_is_one_input_of_the_command_rule():
    ctx = CommandContext(read_only=True, has_state=True, backward_available=True, has_grad=True)
    enabled = enabled_commands(ctx)
    assert not any(enabled[c] for c in FORWARD_COMMANDS)
    assert enabled["bw_step"] and enabled["bw_end"]
    assert not enabled["save"] and not enabled["device"]
    live = enabled_commands(CommandContext(has_state=True, has_statements=True))
    assert live["step"] and live["run_to_end"] and live["save"] and not live["step_out"]


def test_paused_commands():
    enabled = enabled_commands(
        CommandContext(has_state=True, at_end=False, paused=True, has_grad=True)
    )
    assert enabled["step_out"] and enabled["stop"] and not enabled["zero_grad"]
    busy = enabled_commands(CommandContext(has_state=True, paused=True, busy=True))
    assert not busy["stop"]


# --- files ---------------------------------------------------------------------------------


class Store(dict):
    def value(self, key, default=None):
        return self.get(key, default)

    def setValue(self, key, value):  # noqa: N802 - QSettings' name
        self[key] = value


def test_recent_files_newest_first_without_repeats():
    recent = RecentFiles(Store())
    for name in ["a.py", "b.py", "a.py"] + [f"{i}.py" for i in range(10)]:
        recent.add(name)
    items = recent.items()
    assert items[0] == "9.py" and len(items) == 8 and len(set(items)) == 8
    recent.forget("9.py")
    assert "9.py" not in recent.items()


def test_read_path_kinds(tmp_path: Path):
    script = tmp_path / "s.py"
    script.write_text("x = 1\n")
    assert read_path(script).kind == "script"
    bad = tmp_path / "bad.json"
    bad.write_text("{nope")
    refused = read_path(bad)
    assert refused.kind == "refused" and "not JSON" in refused.message
    missing = read_path(tmp_path / "missing.py")
    assert missing.kind == "refused" and missing.unreadable
    import gradviz

    x = torch.tensor(2.0, requires_grad=True)
    snap = tmp_path / "snap.gradviz.json"
    gradviz.snapshot((x * x).sum()).save(snap)
    opened = read_path(snap)
    assert opened.kind == "snapshot" and opened.data is not None


def test_an_autosaved_demo_is_offered_as_that_demo(tmp_path: Path):
    plan = restore_plan("x = 2", {"file": None, "demo": "two_paths", "saved_at": time.time()},
                        {"two_paths": "Two paths"})  # fmt: skip
    assert plan is not None and plan.demo_name == "two_paths" and "Two paths" in plan.name
    plain = restore_plan("x = 2", {"file": None, "demo": None, "saved_at": time.time()}, {})
    assert plain is not None and plain.name == "an untitled script" and plain.demo_name is None
    newer = tmp_path / "f.py"
    newer.write_text("x = 3")
    assert restore_plan("x = 2", {"file": str(newer), "saved_at": time.time() - 60}, {}) is None


def test_document_names():
    doc = Document()
    assert doc.name() == "untitled.py"
    doc.demo = DEMOS["leaves"]
    assert doc.name() == "demo: leaves.py"
    doc.open_snapshot("run.gradviz.json", None)
    assert doc.read_only and doc.name() == "run.gradviz.json (read-only)" and doc.demo is None
    doc.leave_snapshot()
    assert not doc.read_only


@pytest.mark.parametrize("name", sorted(DEMOS))
def test_every_demo_gets_a_note_and_marks(name):
    demo = DEMOS[name]
    session = Session(demo.source)
    for _ in range(len(session.statements)):
        session.step()
        raw = session.snapshot()
        state = AppState.from_wire(raw)
        results = state.results
        failed = results[-1] if results and not results[-1].ok else None
        if failed is not None and failed.index != state.cursor:
            failed = None
        note = guide_note(
            GuideContext(statements=state.statements, cursor=state.cursor, failed=failed,
                         notes=demo.notes)
        )  # fmt: skip
        assert note.plain()
        marks = editor_marks(state.statements, results, state.cursor, failed)
        assert marks.executed
        if failed is not None:
            session.skip_failed()
    json.dumps(raw)
