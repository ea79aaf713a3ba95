"""The headless CLI, run as a subprocess as a user would."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import torch


def gradviz(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "gradviz", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
    )


def test_demos_lists_every_demo():
    proc = gradviz("demos")
    assert proc.returncode == 0
    for name in ("retain_graph", "two_paths", "custom_function", "inplace_memory"):
        assert name in proc.stdout


def test_run_demo_json(tmp_path):
    proc = gradviz("run", "--demo", "retain_graph", "--json", "--keep-going")
    assert proc.returncode == 1  # the third backward fails on purpose
    report = json.loads(proc.stdout)
    assert report["device"] == "cpu"
    assert report["grad_history"]["x"] == pytest.approx([0.6, 1.2])
    failed = [s for s in report["statements"] if not s["ok"]]
    assert len(failed) == 1
    assert "backward through the graph a second time" in failed[0]["error"]["message"]
    assert failed[0]["error"]["explanation"]
    assert failed[0]["line"] == 15
    st = report["statements"][0]
    assert set(st) >= {"line", "source", "ok", "error", "warnings", "output", "allocated_bytes"}
    x = report["tensors"]["x"]
    assert set(x) >= {"shape", "dtype", "device", "value", "requires_grad", "is_leaf",
                      "retains_grad", "grad_fn", "grad", "version", "storage"}
    kinds = {n["kind"] for n in report["graph"]["nodes"]}
    assert kinds <= {"grad_fn", "accumulate_grad", "tensor", "saved"}
    passes = report["backward_passes"]
    assert len(passes) == 3
    assert passes[0]["retain_graph"] is True and passes[1]["retain_graph"] is False
    assert {"node", "label", "grad_outputs", "grad_inputs"} <= set(passes[0]["steps"][0])
    assert "statements" in report["memory"] and "totals" in report["memory"]


def test_run_stops_at_first_failure_without_keep_going(tmp_path):
    script = tmp_path / "s.py"
    script.write_text("a = torch.ones(2)\nb = a @ torch.ones(3)\nc = 1\n")
    proc = gradviz("run", str(script), "--json")
    assert proc.returncode == 1
    report = json.loads(proc.stdout)
    assert [s["ok"] for s in report["statements"]] == [True, False]
    proc = gradviz("run", str(script), "--json", "--keep-going")
    assert [s["ok"] for s in json.loads(proc.stdout)["statements"]] == [True, False, True]


def test_run_success_exit_zero_and_text_report(tmp_path):
    script = tmp_path / "ok.py"
    script.write_text("x = torch.tensor(5.0, requires_grad=True)\ny = torch.log(x ** 3)\ny.backward()\nprint(x.grad)\n")
    proc = gradviz("run", str(script))
    assert proc.returncode == 0, proc.stderr
    assert "tensor(0.6000)" in proc.stdout


def test_usage_errors_exit_two(tmp_path):
    assert gradviz("run", str(tmp_path / "missing.py")).returncode == 2
    assert gradviz("run", "--demo", "no_such_demo").returncode == 2
    if not torch.cuda.is_available():
        proc = gradviz("run", "--demo", "two_paths", "--device", "cuda")
        assert proc.returncode == 2
        assert "cuda is unavailable" in proc.stderr


def test_refused_script_reports_and_exits_one(tmp_path):
    script = tmp_path / "evil.py"
    script.write_text("import os\nos.system('touch pwned')\n")
    proc = gradviz("run", "--restricted", str(script), "--json", "--keep-going", cwd=tmp_path)
    assert proc.returncode == 1
    assert not (tmp_path / "pwned").exists()
    report = json.loads(proc.stdout)
    refused = [r for r in report["statements"] if not r["ok"]][0]
    # os itself may be a safe subset in restricted mode; os.system never is
    assert refused["source"] in ("import os", "os.system('touch pwned')"), refused
    assert "refused" in refused["error"]["message"] or "not available" in refused["error"]["message"]
    # the report says which OS layers confined the kernel (the trusted report has none)
    if sys.platform.startswith("linux"):
        assert {"landlock", "seccomp"} <= set(report["confinement"]["applied"])
        assert report["confinement"]["device_rights"] == []


@pytest.mark.parametrize("suffix", [".svg", ".png", ".dot", ".graphml", ".json"])
def test_export_formats(tmp_path, suffix):
    out = tmp_path / f"graph{suffix}"
    proc = gradviz("export", "--demo", "two_paths", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    data = out.read_bytes()
    assert data
    if suffix == ".svg":
        ET.fromstring(data)
    elif suffix == ".png":
        assert data.startswith(b"\x89PNG")
    elif suffix == ".json":
        assert json.loads(data)["nodes"]
    elif suffix == ".dot":
        assert b"digraph" in data


def test_core_does_not_import_qt():
    code = (
        "import sys, gradviz.core.session, gradviz.graph.layout, gradviz.core.capture, "
        "gradviz.core.sandbox, gradviz.app.demos, gradviz.kernel, gradviz.cli\n"
        "bad = [m for m in sys.modules if m.startswith('PySide6') or m.startswith('shiboken')]\n"
        "print(bad)\nsys.exit(1 if bad else 0)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_window_without_a_display_says_so(monkeypatch):
    import os

    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    proc = subprocess.run(
        [sys.executable, "-m", "gradviz"], capture_output=True, text=True, timeout=120, env=env
    )
    if not sys.platform.startswith("linux"):
        pytest.skip("the display check is for Linux")
    assert proc.returncode == 2
    assert "no display" in proc.stderr and "xvfb-run" in proc.stderr


def test_text_report_prints_numbers_and_sizes_as_the_window_does(tmp_path):
    """Gradients and byte counts go through gradviz.graph.fmt: ``x: [1.6]``, not
    ``[1.600000023841858]``; ``4,000,000 B (3.8 MiB)``, as the panels write them."""
    from gradviz.graph.fmt import fmt_bytes, fmt_value

    script = tmp_path / "s.py"
    script.write_text(
        "x = torch.tensor(2.0, requires_grad=True)\n"
        "big = torch.zeros(1000, 1000)\n"
        "y = x * 0.8\n"
        "y.backward()\n"
    )
    report = json.loads(gradviz("run", str(script), "--json").stdout)
    history = report["grad_history"]["x"]
    assert history == [pytest.approx(0.8)] and history[0] != 0.8  # float32: 0.800000011920929
    proc = gradviz("run", str(script))
    assert proc.returncode == 0, proc.stderr
    assert f"  x: {fmt_value(history)}\n" in proc.stdout
    assert "x: [0.8]" in proc.stdout and "0.80000001" not in proc.stdout
    allocated = next(s["allocated_bytes"] for s in report["statements"] if s["line"] == 2)
    assert allocated >= 4_000_000
    assert f"allocated {fmt_bytes(allocated)}" in proc.stdout
    assert "MiB)" in proc.stdout


@pytest.mark.parametrize(("last", "says"), [
    ("import ctypes\nctypes.string_at(0)\n", "SIGSEGV (a segmentation fault"),
    ("import os\nos._exit(3)\n", "exited with code 3"),
])
def test_a_trusted_script_that_ends_the_process_is_reported_at_its_line(tmp_path, last, says):
    """A trusted script is real Python: a crash in native code, or os._exit, ends the
    kernel. The report keeps what ran and names the line and what happened."""
    script = tmp_path / "crash.py"
    script.write_text("import torch\nx = torch.ones(2) * 3\n" + last)
    proc = gradviz("run", str(script), "--json", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)
    ok = [s for s in report["statements"] if s["ok"]]
    assert [s["source"] for s in ok][:2] == ["import torch", "x = torch.ones(2) * 3"]
    failed = report["statements"][-1]
    assert not failed["ok"] and failed["line"] == 4, failed
    assert failed["error"]["type"] == "KernelDied"
    assert "while line 4 ran" in failed["error"]["message"] and says in failed["error"]["message"]


def test_a_notebook_runs_its_code_cells(tmp_path):
    """`gradviz run x.ipynb` runs the code cells in order (IPython's %/! lines kept as
    comments), not the notebook's JSON as Python."""
    nb = {"cells": [
        {"cell_type": "markdown", "source": ["# notes"]},
        {"cell_type": "code", "source": ["%matplotlib inline\n", "import torch\n",
                                         "x = torch.ones(2, requires_grad=True)"]},
        {"cell_type": "code", "source": "y = (x * 3).sum()\ny.backward()"},
    ], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path = tmp_path / "lesson.ipynb"
    path.write_text(json.dumps(nb))
    for mode in ("--trust", "--restricted"):
        proc = gradviz("run", mode, str(path), "--json", cwd=tmp_path)
        assert proc.returncode == 0, proc.stdout[-1000:] + proc.stderr[-1000:]
        report = json.loads(proc.stdout)
        assert [s["source"] for s in report["statements"]][-2:] == ["y = (x * 3).sum()", "y.backward()"]
        assert report["tensors"]["x"]["grad"] == [3.0, 3.0]
    (tmp_path / "not.ipynb").write_text('{"a": 1}')
    proc = gradviz("run", str(tmp_path / "not.ipynb"))
    assert proc.returncode == 2 and "not a Jupyter notebook" in proc.stderr


def test_a_bare_file_argument_opens_it(tmp_path):
    proc = gradviz(str(tmp_path / "missing.py"))
    assert proc.returncode == 2 and "no such file" in proc.stderr  # routed to `open`
