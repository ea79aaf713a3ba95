"""Write tests/slow_tests.txt, the tests the fast lane (``pytest -m "not slow"``) leaves out.

Reads the output of a whole run with ``--durations=0`` and lists every test whose setup,
call and teardown together took at least ``--over`` seconds:

    QT_QPA_PLATFORM=offscreen python3 -m pytest -q --durations=0 > /tmp/run.txt
    python3 scripts/slow_tests.py /tmp/run.txt

tests/conftest.py marks the listed tests ``slow`` (as ``@pytest.mark.slow`` does by
hand); a test missing from the list (a new one) runs in both lanes until the list is
made again. CI runs every test whatever the list says.
"""

from __future__ import annotations

import argparse
import re
from collections import defaultdict
from pathlib import Path

LIST = Path(__file__).resolve().parents[1] / "tests" / "slow_tests.txt"
_LINE = re.compile(r"^(\d+(?:\.\d+)?)s (?:call|setup|teardown)\s+(tests/\S.*?)\s*$")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("durations", type=Path, help="pytest output with --durations=0")
    parser.add_argument("--over", type=float, default=1.0, help="seconds (default 1.0)")
    args = parser.parse_args(argv)
    seconds: dict[str, float] = defaultdict(float)
    for line in args.durations.read_text(encoding="utf-8", errors="replace").splitlines():
        m = _LINE.match(line)
        if m:
            seconds[m.group(2)] += float(m.group(1))
    if not seconds:
        parser.error(f"no durations in {args.durations} (run pytest with --durations=0)")
    slow = sorted(t for t, s in seconds.items() if s >= args.over)
    LIST.write_text(
        f"# tests of at least {args.over:.1f} s in a whole run (scripts/slow_tests.py): the fast\n"
        "# lane, pytest -m \"not slow\", leaves them out; CI runs them all\n"
        + "".join(f"{t}\n" for t in slow),
        encoding="utf-8",
    )
    fast = sum(s for s in seconds.values() if s < args.over)
    print(f"{len(slow)} of {len(seconds)} timed tests listed in {LIST}; "
          f"the rest took {fast:.0f} s together")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
