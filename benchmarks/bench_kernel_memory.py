"""The kernel's resident memory over repeated runs of a lesson, with Reset between.

    python benchmarks/bench_kernel_memory.py [--demo inplace_memory] [--runs 10] [--trusted]

Starts one kernel as the window does (restricted unless --trusted), then, for each run:
loads the demo, runs it to the end, reads the kernel's RSS (/proc/<pid>/status), sends
Reset and reads it again. Prints each figure and the growth from the first run to the
last (the target: what a run held is released by Reset and by the next load, so RSS
stays flat after the first run; issue 22 measured +780 MB a run of inplace_memory).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gradviz.app.demos import find_demo  # noqa: E402
from gradviz.runner import KernelProcess  # noqa: E402


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--demo", default="inplace_memory")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--trusted", action="store_true")
    args = parser.parse_args()
    source = find_demo(args.demo).source
    with KernelProcess(cuda=False, trusted=args.trusted) as kernel:
        pid = kernel.info["pid"]
        start = rss_mib(pid)
        print(f"kernel {pid} ({'trusted' if args.trusted else 'restricted'}): {start:8.1f} MiB at start")
        after_reset = []
        for run in range(1, args.runs + 1):
            reply = kernel.request("load", source=source, device="cpu", run_to=10_000)
            assert reply.get("ok", True), reply
            loaded = rss_mib(pid)
            kernel.request("reset")
            reset = rss_mib(pid)
            after_reset.append(reset)
            print(f"run {run:2d}: {loaded:8.1f} MiB after the run, {reset:8.1f} MiB after Reset")
        growth = after_reset[-1] - after_reset[0]
        print(f"\nafter Reset: first {after_reset[0]:.1f} MiB, last {after_reset[-1]:.1f} MiB, "
              f"growth {growth:+.1f} MiB over {args.runs - 1} runs "
              f"({growth / max(args.runs - 1, 1):+.1f} MiB a run)")


if __name__ == "__main__":
    main()
