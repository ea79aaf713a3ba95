"""Cold start: `gradviz run LESSON` against `python LESSON`, fresh processes.

    python benchmarks/bench_cold_start.py [--runs 5] [--baseline DIR] [LESSON ...]

For each lesson (default: three of resources/demos) it starts ``--runs``
fresh processes of each kind, interleaved (plain, gradviz, plain, gradviz,
...), so a slow moment of the shared machine falls on both sides:

* plain: ``python LESSON`` (demos that use the toolbar's ``dev`` get
  ``dev = 'cpu'`` defined first, as the window does);
* gradviz: ``python -m gradviz run LESSON`` (the ``gradviz`` console script
  runs the same ``gradviz.cli.main``; the module form skips a launcher shim).

It prints the min and median wall time of each and their ratio (gradviz /
plain), and whether running the lesson through a Session (what the kernel
does) in a fresh process imports ``torch._dynamo``. ``--baseline DIR`` times
the ``gradviz run`` of another checkout too (say ``git worktree add DIR
HEAD~3``), in the same interleaving, for a before/after. The target of
issue 12: gradviz within 1.3x of plain python. A benchmark, not a test: the
machines are shared, so figures vary from run to run; compare min to min.

Each timed tree's modules are byte-compiled first, as an installed gradviz's are
(pip compiles a wheel on install, as it did torch's): see ``benchmarks/_bytecode.py``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _bytecode import byte_compile_note

ROOT = Path(__file__).resolve().parents[1]
DEMOS = ROOT / "resources" / "demos"
DEFAULT_LESSONS = ["02_first_backward.py", "04_two_paths.py", "07_no_grad_memory.py"]
TARGET = 1.3

DYNAMO_PROBE = """
import sys
from gradviz.core.session import Session
src = open(sys.argv[1], encoding="utf-8").read()
Session(src, device="cpu").run_to_end(keep_going=True)
print("torch._dynamo" in sys.modules)
"""


def _env(root: Path = ROOT) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(root) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def _plain_copy(lesson: Path, folder: Path) -> Path:
    """The lesson as plain python runs it: ``dev`` defined where the lesson uses it."""
    source = lesson.read_text(encoding="utf-8")
    if "dev" in source.replace("device", ""):
        source = "dev = 'cpu'\n" + source
    path = folder / lesson.name
    path.write_text(source, encoding="utf-8")
    return path


def _time(cmd: list[str], cwd: Path, root: Path = ROOT) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, env=_env(root), stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def dynamo_imported(lesson: Path, root: Path = ROOT) -> bool:
    """Whether running the lesson through a Session imports torch._dynamo."""
    out = subprocess.run(
        [sys.executable, "-c", DYNAMO_PROBE, str(lesson)], cwd=root, env=_env(root),
        capture_output=True, text=True, check=False,
    )
    return out.stdout.strip().splitlines()[-1:] != ["False"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("lessons", nargs="*", help="lesson files (default: three demos)")
    parser.add_argument("--runs", type=int, default=5, help="fresh processes of each kind")
    parser.add_argument("--baseline", type=Path, help="another checkout to time as well")
    args = parser.parse_args(argv)
    lessons = [Path(p) for p in args.lessons] or [DEMOS / name for name in DEFAULT_LESSONS]
    kinds = [("gradviz", ROOT)]
    if args.baseline:
        kinds.insert(0, ("baseline", args.baseline.resolve()))

    for kind, root in kinds:
        print(f"  {kind}: {byte_compile_note(root / 'gradviz')}", file=sys.stderr)
    rows = []
    with tempfile.TemporaryDirectory(prefix="gradviz-bench-") as tmp:
        folder = Path(tmp)
        for lesson in lessons:
            plain_file = _plain_copy(lesson, folder)
            plain_cmd = [sys.executable, str(plain_file)]
            gv_cmd = [sys.executable, "-m", "gradviz", "run", str(lesson.resolve())]
            times: dict[str, list[float]] = {"plain": [], **{k: [] for k, _ in kinds}}
            for _ in range(args.runs):
                times["plain"].append(_time(plain_cmd, folder))
                for kind, root in kinds:
                    times[kind].append(_time(gv_cmd, folder, root))
            for kind, root in kinds:
                rows.append((lesson.name, kind, times["plain"], times[kind],
                             dynamo_imported(lesson, root)))
            print(f"  {lesson.name}: " + ", ".join(
                f"{k} {min(v):.2f} s" for k, v in times.items()), file=sys.stderr)

    print(f"{'lesson':24} {'run':8} {'plain min':>9} {'med':>6} {'gradviz min':>11} "
          f"{'med':>6} {'ratio min':>9} {'med':>6}  dynamo")
    worst = 0.0
    for name, kind, plain, gv, dyn in rows:
        pm, pmed, gm, gmed = min(plain), statistics.median(plain), min(gv), statistics.median(gv)
        if kind == "gradviz":
            worst = max(worst, gm / pm)
        print(f"{name:24} {kind:8} {pm:9.2f} {pmed:6.2f} {gm:11.2f} {gmed:6.2f} "
              f"{gm / pm:9.2f} {gmed / pmed:6.2f}  {'imported' if dyn else 'not imported'}")
    print(f"worst min ratio of this checkout {worst:.2f} (target {TARGET}x): "
          f"{'met' if worst <= TARGET else 'not met'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
