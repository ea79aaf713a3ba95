"""The note before a replay that would repeat what a trusted script did to the world."""

from __future__ import annotations

from gradviz.app.replay import outside_effects, replay_note

SCRIPT = """\
import os, torch
from pathlib import Path
x = torch.ones(2)
os.makedirs("out", exist_ok=True)
with open("log.txt", "a") as f:
    f.write("x")
with open("data.txt") as f:
    text = f.read()
torch.save(x, "out/x.pt")
Path("out/y.txt").write_text("y")
y = x * 2
"""


def test_outside_effects_are_found_and_reads_are_not():
    effects = [(e.line, e.call, e.what) for e in outside_effects(SCRIPT)]
    assert effects == [
        (4, "os.makedirs", "makes folders"),
        (5, "open", "writes a file"),
        (9, "torch.save", "writes a file"),
        (10, "….write_text", "writes a file"),
    ]
    assert all(line != 7 for line, _, _ in effects)  # open(..., read) is not an effect
    assert outside_effects("x = (\n") == []  # a syntax error says nothing


def test_replay_note_names_only_the_lines_the_replay_runs():
    statements = [(1, 1), (2, 2), (3, 3), (4, 4), (5, 6), (7, 8), (9, 9), (10, 10), (11, 11)]
    assert replay_note(SCRIPT, statements, 3) is None
    note = replay_note(SCRIPT, statements, 5)
    assert "line 4 makes folders (os.makedirs)" in note and "line 5 writes a file" in note
    assert "torch.save" not in note
    assert "same seeds" in note
