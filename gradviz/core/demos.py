"""The built-in lessons: one script per scenario under ``resources/demos``.

A demo file starts with ``# title:`` and ``# about:`` lines. A ``#>`` comment
line says what to look at when the statement below it runs; together they make
the demo a click-through.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

DEMO_DIR = Path(__file__).resolve().parents[2] / "resources" / "demos"


@dataclass
class Demo:
    name: str
    title: str
    about: str
    path: Path
    source: str
    #: 1-based line of the statement a note stands above -> the note
    notes: dict[int, str] = field(default_factory=dict)


def _parse(path: Path) -> Demo:
    source = path.read_text(encoding="utf-8")
    title, about = path.stem, ""
    notes: dict[int, str] = {}
    pending: list[str] = []
    for lineno, line in enumerate(source.splitlines(), start=1):
        stripped = line.strip()
        if stripped.startswith("# title:"):
            title = stripped.removeprefix("# title:").strip()
        elif stripped.startswith("# about:"):
            about = stripped.removeprefix("# about:").strip()
        elif stripped.startswith("#>"):
            pending.append(stripped.removeprefix("#>").strip())
        elif stripped and not stripped.startswith("#") and pending:
            notes[lineno] = " ".join(pending)
            pending = []
    name = re.sub(r"^\d+_", "", path.stem)
    return Demo(name=name, title=title, about=about, path=path, source=source, notes=notes)


def list_demos(directory: Path = DEMO_DIR) -> list[Demo]:
    return [_parse(p) for p in sorted(directory.glob("*.py"))]


def find_demo(name: str, directory: Path = DEMO_DIR) -> Demo:
    demos = list_demos(directory)
    for demo in demos:
        if name in (demo.name, demo.path.stem, demo.path.name):
            return demo
    known = ", ".join(d.name for d in demos)
    raise KeyError(f"no demo named '{name}'; the demos are: {known}")
