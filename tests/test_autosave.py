"""Per-window autosaves and their locks, without a window (gradviz.app.autosave is Qt-free)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("PySide6")  # gradviz.ui's package import guards a PySide6 bug

from gradviz.app.autosave import Autosave, find_orphans  # noqa: E402


def crashed_window(data_dir, text: str) -> None:
    """A process that autosaves ``text`` and dies without cleaning up (as a crash does)."""
    code = textwrap.dedent(
        f"""
        import os, sys
        from pathlib import Path
        from gradviz.app.autosave import Autosave
        Autosave(Path(sys.argv[1])).write({text!r}, {{"file": None, "demo": "two_paths"}})
        os._exit(9)
        """
    )
    proc = subprocess.run([sys.executable, "-c", code, str(data_dir)], timeout=120)
    assert proc.returncode == 9


def test_each_window_has_its_own_autosave(tmp_path):
    a, b = Autosave(tmp_path), Autosave(tmp_path)
    a.write("a = 1", {"file": None})
    b.write("b = 2", {"file": None})
    assert a.text_path != b.text_path
    assert (a.text_path.read_text(), b.text_path.read_text()) == ("a = 1", "b = 2")
    meta = json.loads(a.meta_path.read_text())
    assert meta["file"] is None and isinstance(meta["saved_at"], float)
    b.remove()
    assert a.text_path.read_text() == "a = 1" and not b.text_path.exists()


def test_a_live_autosave_is_not_an_orphan_in_this_process_or_another(tmp_path):
    live = Autosave(tmp_path)
    live.write("working = 1", {"file": None})
    assert find_orphans(tmp_path) == []
    # another process looks while this one lives
    code = "import sys; from gradviz.app.autosave import find_orphans; print(len(find_orphans(sys.argv[1])))"
    out = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, timeout=120
    )
    assert out.stdout.strip() == "0", out.stderr
    assert live.text_path.read_text() == "working = 1"


def test_a_crashed_autosave_is_offered_to_one_window_at_a_time(tmp_path):
    crashed_window(tmp_path, "lost = 3")
    first = find_orphans(tmp_path)
    assert len(first) == 1
    text, meta = first[0].read()
    assert text == "lost = 3" and meta["demo"] == "two_paths"
    assert find_orphans(tmp_path) == []  # the first finder holds it while it asks
    first[0].release()
    again = find_orphans(tmp_path)
    assert len(again) == 1
    again[0].discard()
    assert find_orphans(tmp_path) == [] and not list((tmp_path / "autosave").iterdir())


def test_closing_removes_files_and_lock(tmp_path):
    a = Autosave(tmp_path)
    a.write("x = 1", {})
    a.close()
    assert not list((tmp_path / "autosave").iterdir())


def test_the_old_shared_autosave_is_still_offered(tmp_path):
    (tmp_path / "autosave.py").write_text("old = 1")
    (tmp_path / "autosave.json").write_text(json.dumps({"file": None, "saved_at": 1.0}))
    (orphan,) = find_orphans(tmp_path)
    assert orphan.read() == ("old = 1", {"file": None, "saved_at": 1.0})
    orphan.discard()
    assert not (tmp_path / "autosave.py").exists()
