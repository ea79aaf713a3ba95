"""Cold start (issue 12): a lesson run by gradviz imports neither torch._dynamo nor sympy.

The op guard used to size every output on the meta device, and torch's meta
kernels (and the ``torch._disable_dynamo`` wrapper of every dispatch mode) import
``torch._dynamo`` and sympy on their first call: about 2 s on top of ``import
torch``. The guard now arms those wrappers (:func:`arm_disable_dynamo_wrappers`)
and bounds the outputs of common ops from their argument shapes. These tests hold
the first half, the kernel stays light; tests/test_guard_bounds.py holds the second,
every refusal still happens before anything is allocated.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]
DEMOS = ROOT / "resources" / "demos"
#: every demo but 08 (it allocates 800 MB on purpose, to show in-place memory)
LESSONS = sorted(p for p in DEMOS.glob("[0-9][0-9]_*.py") if not p.name.startswith("08_"))

aten = torch.ops.aten


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


# --- the kernel stays light ------------------------------------------------------

KERNEL_PROBE = textwrap.dedent(
    """
    import io, json, sys
    requests = [json.loads(line) for line in sys.stdin]
    sys.stdin = io.TextIOWrapper(io.BytesIO(
        "".join(json.dumps(r) + "\\n" for r in requests).encode()))
    from gradviz import kernel
    code = kernel.main(["--workdir", sys.argv[1]])
    heavy = {m: m in sys.modules for m in ("torch._dynamo", "sympy", "torch._inductor")}
    print("PROBE " + json.dumps({"code": code, "heavy": heavy}), file=sys.__stderr__)
    """
)


def test_lessons_through_the_kernel_import_neither_dynamo_nor_sympy(tmp_path):
    """The kernel as `gradviz run` starts it (confined, warmed up), fed every lesson."""
    requests = [
        {"id": i, "cmd": "report", "source": p.read_text(encoding="utf-8"), "device": "cpu",
         "keep_going": True, "layout": False}
        for i, p in enumerate(LESSONS, 1)
    ]
    requests.append({"id": 0, "cmd": "shutdown"})
    proc = subprocess.run(
        [sys.executable, "-c", KERNEL_PROBE, str(tmp_path)], cwd=tmp_path, env=_env(),
        input="".join(json.dumps(r) + "\n" for r in requests), capture_output=True,
        text=True, timeout=600,
    )
    probe = [line for line in proc.stderr.splitlines() if line.startswith("PROBE ")]
    assert probe, proc.stderr[-3000:]
    result = json.loads(probe[-1][len("PROBE "):])
    assert result["code"] == 0
    replies = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    replies = {r["id"]: r for r in replies if r.get("event") == "reply"}
    for i, lesson in enumerate(LESSONS, 1):
        assert replies[i]["ok"], (lesson.name, replies[i])
    assert result["heavy"] == {"torch._dynamo": False, "sympy": False, "torch._inductor": False}


def test_gradviz_run_of_a_lesson_still_reports(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "gradviz", "run", "--json", str(DEMOS / "02_first_backward.py")],
        cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=300,
    )
    report = json.loads(proc.stdout)
    assert proc.returncode == 1  # the lesson ends on a backward PyTorch refuses
    statements = report["statements"]
    assert [s["ok"] for s in statements].count(False) == 1
    assert "does not require grad" in json.dumps(statements[-1])


ARMING_PROBE = textwrap.dedent(
    """
    import sys
    import torch
    from gradviz.core import guards

    def f(x):
        return x + 1

    wrapped = torch._disable_dynamo(f)
    assert guards.arm_disable_dynamo_wrappers() > 0
    assert wrapped(1) == 2
    shim = getattr(f, "__dynamo_disable")
    print("armed:", getattr(shim, "_gradviz_until_dynamo", False))
    meta = torch.ones(3, device="meta")
    torch.ops.aten.pow.Tensor_Scalar(meta, 2)  # a Python meta kernel, wrapped inside
    print("dynamo after calls:", "torch._dynamo" in sys.modules)
    import torch._dynamo
    assert wrapped(2) == 3
    real = getattr(f, "__dynamo_disable")
    print("real after import:", real is not shim and not hasattr(real, "_gradviz_until_dynamo"))
    print("armed after import:", guards.arm_disable_dynamo_wrappers())
    """
)


def test_armed_wrappers_become_torch_s_own_once_dynamo_is_loaded():
    """Arming changes nothing but the import: with torch._dynamo loaded (by torch
    itself, say an optimizer step) each wrapper builds torch's real disable(fn)."""
    if "_disable_dynamo" not in dir(torch):
        pytest.skip("this torch has no _disable_dynamo")
    proc = subprocess.run(
        [sys.executable, "-c", ARMING_PROBE], env=_env(), capture_output=True, text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "armed: True" in proc.stdout
    assert "dynamo after calls: False" in proc.stdout
    assert "real after import: True" in proc.stdout
    assert "armed after import: 0" in proc.stdout  # nothing is armed once dynamo is in


OPTIMIZER_PROBE = textwrap.dedent(
    """
    import sys, torch
    if sys.argv[1] == "gradviz":
        from gradviz.core import guards
        guards.arm_disable_dynamo_wrappers()
    net = torch.nn.Linear(4, 1)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    print("after construction:", "torch._dynamo" in sys.modules)
    """
)


def test_an_optimizer_imports_dynamo_where_plain_python_does():
    """torch.optim imports torch._dynamo itself (its step() does, directly), so arming
    leaves its wrappers alone: a script pays that import when it makes the optimizer,
    as plain Python does, and not in the middle of a stepped training loop."""
    if "_disable_dynamo" not in dir(torch):
        pytest.skip("this torch has no _disable_dynamo")
    lines = {}
    for how in ("plain", "gradviz"):
        proc = subprocess.run(
            [sys.executable, "-c", OPTIMIZER_PROBE, how], env=_env(), capture_output=True,
            text=True, timeout=300,
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
        lines[how] = proc.stdout.strip().splitlines()[-1]
    assert lines["gradviz"] == lines["plain"]
