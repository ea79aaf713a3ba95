"""`gradviz export` of a slow script says what it is doing on a terminal (issue 25: a
1,070-node export ran 14-18 s with nothing printed), and nothing on a pipe."""

from __future__ import annotations

import os
import pty
import subprocess
import sys

SLOW = "import time\nimport torch\nx = torch.ones(3, requires_grad=True)\ntime.sleep(2.0)\n" \
       "y = (x * 2).sum()\n"


def _run_in_pty(args: list[str], cwd) -> tuple[int, str]:
    leader, follower = pty.openpty()
    proc = subprocess.Popen(args, stdin=follower, stdout=follower, stderr=follower, cwd=cwd,
                            env={**os.environ, "GRADVIZ_LANG": "en"})
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 4096)
        except OSError:  # the child closed its end
            break
        if not data:
            break
        chunks.append(data)
    os.close(leader)
    return proc.wait(timeout=120), b"".join(chunks).decode("utf-8", "replace")


def test_a_slow_export_says_what_it_does_on_a_terminal(tmp_path):
    script = tmp_path / "slow.py"
    script.write_text(SLOW)
    out = tmp_path / "slow.svg"
    rc, text = _run_in_pty(
        [sys.executable, "-m", "gradviz", "export", str(script), "-o", str(out)], tmp_path
    )
    assert rc == 0, text[-2000:]
    assert "running" in text and "slow.py" in text, text[-2000:]
    assert out.read_text(encoding="utf-8").lstrip().startswith(("<?xml", "<svg"))


def test_an_export_to_a_pipe_prints_only_its_result(tmp_path):
    script = tmp_path / "slow.py"
    script.write_text(SLOW)
    proc = subprocess.run(
        [sys.executable, "-m", "gradviz", "export", str(script), "-o", str(tmp_path / "s.svg")],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "running" not in proc.stderr and proc.stdout.startswith("wrote ")
