"""Trusted mode against plain python: the same training script, whole processes.

    python benchmarks/bench_trusted.py [--repeat 3] [--iterations 2000]

Writes a 2,000-iteration MLP training loop (batch 64, synthetic data), then times,
interleaved, ``python script.py`` and ``gradviz run --json script.py`` (trusted: the
script runs as real Python in gradviz's kernel, with the line tracer, backward
recording and the graph capture at the end) and, for reference, the same through
``--restricted``. Prints each run, the minimum and median of each, and the ratio of
minimums (the target: trusted at most 1.3x python). The gradviz it runs (the one
``python -m gradviz`` imports here) is byte-compiled first, as an installed one is:
see ``benchmarks/_bytecode.py``.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _bytecode import byte_compile_note

SCRIPT = """\
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
X = torch.randn(1024, 32)
Y = X[:, :1] * 2 + 1
for step in range({iterations}):
    i = (step * 64) % 1024
    xb, yb = X[i:i + 64], Y[i:i + 64]
    loss = ((model(xb) - yb) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
print(round(loss.item(), 6))
"""


def _time(cmd: list[str], cwd: Path) -> tuple[float, str]:
    started = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=900)
    elapsed = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"{cmd} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return elapsed, proc.stdout


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--iterations", type=int, default=2000)
    parser.add_argument("--restricted", action="store_true",
                        help="also time restricted mode (it stops at its run budget)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        # the gradviz that `python -m gradviz` finds from the folder the runs start in
        found = subprocess.run(
            [sys.executable, "-c", "import gradviz, os; print(os.path.dirname(gradviz.__file__))"],
            cwd=folder, capture_output=True, text=True, check=True,
        )
        print(byte_compile_note(Path(found.stdout.strip())), flush=True)
        script = folder / "train.py"
        script.write_text(SCRIPT.format(iterations=args.iterations))
        tools = {
            "python": [sys.executable, str(script)],
            "gradviz trusted": [sys.executable, "-m", "gradviz", "run", "--json", str(script)],
        }
        if args.restricted:
            tools["gradviz restricted"] = [sys.executable, "-m", "gradviz", "run", "--json",
                                           "--restricted", "--keep-going", str(script)]
        times: dict[str, list[float]] = {name: [] for name in tools}
        for k in range(args.repeat):
            for name, cmd in tools.items():
                elapsed, _ = _time(cmd, folder)
                times[name].append(elapsed)
                print(f"run {k + 1}: {name:20} {elapsed:7.2f} s", flush=True)
        print()
        print(f"{'':20} {'min s':>8} {'median s':>9}")
        for name, values in times.items():
            print(f"{name:20} {min(values):8.2f} {statistics.median(values):9.2f}")
        ratio = min(times["gradviz trusted"]) / min(times["python"])
        print(f"\ntrusted / python (minimums): {ratio:.2f}x (target: at most 1.3x)")


if __name__ == "__main__":
    main()
