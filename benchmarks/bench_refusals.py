"""Every refusal test case through `gradviz run`, timed: no input may hang the CLI.

    python benchmarks/bench_refusals.py [--jobs 2] [--limit-s 35]

Runs each script of tests/test_sandbox.py's refusal lists (ADVERSARIAL,
HARDENING, the class, language, review, hook and data-loading doors,
CLI_ATTACKS and the watchdog cases) as a user would, in a fresh
`gradviz run FILE` process with the default time limit, and prints the
slowest cases, every exit code other than 1, and the target check (every
case under --limit-s seconds, exit 1). A benchmark, not a test: the
machines are shared, so figures vary from run to run.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

WATCHDOG_CASES = [
    ("list-equality-dag", "x = [0]\ny = [0]\nfor i in range(60):\n    x = [x, x]\n    y = [y, y]\nr = x == y"),
    ("set-hash-collisions", "l = list(range(0, 200000 * (2**61 - 1), 2**61 - 1))\ns = set(l)"),
    # a chain built until the statement's time runs out, then captured, reported, freed
    ("chain-400k", "import torch\nx = torch.ones(1, requires_grad=True)\ny = x\n"
                   "for i in range(400000):\n    y = y * 1.0\nz = y * 2"),
]


def cases() -> list[tuple[str, str]]:
    import test_sandbox as ts

    out = [(f"adversarial/{i}", s) for i, s in ts.ADVERSARIAL]
    for group in ("HARDENING", "SCRIPT_CLASS_DOORS", "LANGUAGE_DOORS", "REVIEW_FINDINGS",
                  "MODULE_HOOK_DOORS", "DATALOADER_DOORS"):
        out += [(f"{group.lower()}/{i}", s) for i, s in getattr(ts, group)]
    out += [(f"cli/{i}", s.replace("SECRET_PATH", "/etc/shadow")) for i, s in ts.CLI_ATTACKS]
    out += [(f"watchdog/{i}", s) for i, s in WATCHDOG_CASES]
    return out


def run_one(case: tuple[str, str], folder: Path) -> tuple[str, float, int, str]:
    name, source = case
    script = folder / (name.replace("/", "_") + ".py")
    script.write_text(source, encoding="utf-8")
    started = time.perf_counter()
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "gradviz", "run", str(script)],
            capture_output=True, text=True, timeout=300, cwd=folder,
        )
        code, out = proc.returncode, proc.stdout + proc.stderr
    except subprocess.TimeoutExpired:
        code, out = -9, "did not finish in 300 s"
    elapsed = time.perf_counter() - started
    last = next((ln.strip() for ln in reversed(out.splitlines()) if ln.strip()), "")
    return name, elapsed, code, last[:110]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--limit-s", type=float, default=35.0)
    parser.add_argument("--only", default="", help="run the cases whose name contains this")
    args = parser.parse_args()
    todo = [c for c in cases() if args.only in c[0]]
    print(f"{len(todo)} refusal cases through `gradviz run`, {args.jobs} at a time", flush=True)
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(lambda c: run_one(c, Path(tmp)), todo))
    results.sort(key=lambda r: -r[1])
    print("\nslowest:")
    for name, elapsed, code, last in results[:12]:
        print(f"  {elapsed:6.1f} s  exit {code:>3}  {name:<40} {last}")
    others = [r for r in results if r[2] != 1]
    if others:
        print("\nexit code other than 1:")
        for name, elapsed, code, last in others:
            print(f"  {elapsed:6.1f} s  exit {code:>3}  {name:<40} {last}")
    times = sorted(r[1] for r in results)
    print(
        f"\n{len(results)} cases: median {times[len(times) // 2]:.1f} s, slowest "
        f"{times[-1]:.1f} s; target every case under {args.limit_s:g} s with exit 1: "
        f"{'met' if times[-1] < args.limit_s and not others else 'NOT met'}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
