"""The built-in lessons: one script per scenario under ``resources/demos``.

A demo file starts with ``# title:`` and ``# about:`` lines. A ``#>`` comment
line says what to look at when the statement below it runs; together they make
the demo a click-through.

``resources/`` is installed as the package ``gradviz.resources``, so the demos
are found through :mod:`importlib.resources` wherever gradviz is installed.
"""

from __future__ import annotations

import atexit
import re
from contextlib import ExitStack
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

#: resources/demos of a source checkout run without installing (``python main.py``
#: in a clone): only an install maps resources/ to gradviz.resources
_CHECKOUT_DEMOS = Path(__file__).resolve().parents[2] / "resources" / "demos"
_extracted = ExitStack()
atexit.register(_extracted.close)


class DemosMissing(FileNotFoundError):
    """The demo folder is missing or empty: gradviz was installed without its data."""


def demo_dir() -> Path:
    """The folder that holds the demo scripts."""
    try:
        root = resources.files("gradviz.resources") / "demos"
    except ModuleNotFoundError:
        return _CHECKOUT_DEMOS
    if isinstance(root, Path):
        return root
    # Installed inside a zip: extract once, for the life of the process.
    return Path(_extracted.enter_context(resources.as_file(root)))


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


def list_demos(directory: Path | None = None) -> list[Demo]:
    """Every demo, in lesson order; DemosMissing when there are none (a broken install)."""
    folder = directory if directory is not None else demo_dir()
    demos = [_parse(p) for p in sorted(folder.glob("*.py")) if not p.name.startswith("_")]
    if not demos:
        raise DemosMissing(
            f"no demos in {folder}: gradviz was installed without its resources "
            "(reinstall the gradviz-autograd wheel)"
        )
    return demos


def find_demo(name: str, directory: Path | None = None) -> Demo:
    demos = list_demos(directory)
    for demo in demos:
        if name in (demo.name, demo.path.stem, demo.path.name):
            return demo
    known = ", ".join(d.name for d in demos)
    raise KeyError(f"no demo named '{name}'; the demos are: {known}")
