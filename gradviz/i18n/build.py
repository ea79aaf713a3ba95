"""Make the translations: ``python -m gradviz.i18n.build [--update] [--check]``.

Default: compile every language's ``.ts`` files here (``gradviz_<lang>.ts``, the
window's, and ``demos_<lang>.ts``, the demos' texts) to ``gradviz_<lang>.qm`` with Qt's
``lrelease`` (scripts/setup.sh runs this; the ``.qm`` files are never edited by
hand). ``--update`` first runs ``lupdate`` over the ``gradviz`` package, so new
``translate(...)`` calls appear in the ``.ts`` files as unfinished messages and
removed ones go; the demo files' titles, "about" lines and ``#>`` notes are extracted
into ``demos_<lang>.ts`` the same way. ``--check``: exit 1 when a ``.qm`` differs from what lrelease
makes of its ``.ts`` now (the wheel ships the committed ``.qm``).

Both tools come with the PySide6-Essentials wheel (``pyside6-lupdate``,
``pyside6-lrelease``); the binaries inside the installed PySide6 are used first,
then those on PATH (``lupdate``/``lrelease`` of a system Qt 6 also work).
"""

from __future__ import annotations

import argparse
import importlib.util
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

from . import DEFAULT_LANGUAGE, LANGUAGES, qm_path, ts_path, ts_paths

__all__ = ["demo_texts", "find_tool", "main", "release", "source_files", "stale", "update"]

PACKAGE = Path(__file__).resolve().parent.parent


def find_tool(name: str) -> str | None:
    """``lupdate`` or ``lrelease``: PySide6's own binary, else one on PATH."""
    spec = importlib.util.find_spec("PySide6")
    if spec is not None and spec.origin:
        exe = Path(spec.origin).parent / name
        if exe.is_file():
            return str(exe)
    for candidate in (f"pyside6-{name}", name, f"{name}-qt6", f"{name}6"):
        found = shutil.which(candidate)
        if found:
            return found
    return None


def _tool(name: str) -> str:
    exe = find_tool(name)
    if exe is None:
        raise SystemExit(
            f"gradviz.i18n.build: no {name} found (pip install PySide6-Essentials brings "
            f"pyside6-{name})"
        )
    return exe


def translated_languages() -> list[str]:
    return [lang for lang in LANGUAGES if lang != DEFAULT_LANGUAGE]


def source_files() -> list[str]:
    """What lupdate reads: the package's Python (``translate("Ctx", "text")`` and
    ``QT_TRANSLATE_NOOP("Ctx", "text")``). Not the HTML view's JavaScript: lupdate's parser
    stops at modern syntax (object spread); its words are marked in Python instead and
    reach the page as :func:`gradviz.i18n.messages`."""
    return sorted(str(p) for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def update(languages: list[str] | None = None) -> None:
    """Refresh the .ts files from the sources (new messages unfinished, gone ones dropped)."""
    sources = source_files()
    for lang in languages or translated_languages():
        subprocess.run(
            [_tool("lupdate"), "-locations", "none", "-no-obsolete", "-source-language", "en",
             "-target-language", lang, *sources, "-ts", str(ts_path(lang))],
            check=True, stdout=subprocess.DEVNULL,
        )  # fmt: skip
        update_demos(lang)


def demo_texts() -> list[str]:
    """Every demo's title, "about" line and ``#>`` notes, in lesson order (each once)."""
    from gradviz.app.demos import list_demos  # torch-free

    texts: list[str] = []
    for demo in list_demos():
        texts += [demo.title, demo.about, *demo.notes.values()]
    return list(dict.fromkeys(t for t in texts if t))


def update_demos(language: str) -> Path:
    """Write ``demos_<lang>.ts`` (context ``Demos``): the demos' texts, each keeping its
    translation when it has one; a new text is unfinished, a text no demo has any more goes."""
    path = ts_path(language).with_name(f"demos_{language}.ts")
    old: dict[str, str] = {}
    if path.is_file():
        for message in ET.parse(path).getroot().iter("message"):
            tr = message.find("translation")
            if tr is not None and tr.text and tr.get("type") != "unfinished":
                old[message.findtext("source") or ""] = tr.text
    root = ET.Element("TS", {"version": "2.1", "language": language, "sourcelanguage": "en"})
    context = ET.SubElement(root, "context")
    ET.SubElement(context, "name").text = "Demos"
    for text in demo_texts():
        message = ET.SubElement(context, "message")
        ET.SubElement(message, "source").text = text
        tr = ET.SubElement(message, "translation")
        if text in old:
            tr.text = old[text]
        else:
            tr.set("type", "unfinished")
    ET.indent(root, space="    ")
    body = ET.tostring(root, encoding="unicode")
    path.write_text(
        '<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE TS>\n' + body + "\n", encoding="utf-8"
    )
    return path


def release(languages: list[str] | None = None, out_dir: Path | None = None) -> list[Path]:
    """Compile each language's .ts files to one .qm (in ``out_dir``, default beside them)."""
    made = []
    for lang in languages or translated_languages():
        target = (out_dir / qm_path(lang).name) if out_dir else qm_path(lang)
        subprocess.run(
            [_tool("lrelease"), "-silent", *map(str, ts_paths(lang)), "-qm", str(target)],
            check=True,
        )
        made.append(target)
    return made


def stale() -> list[str]:
    """The .qm files that differ from what lrelease makes of their .ts now."""
    with tempfile.TemporaryDirectory() as tmp:
        fresh = release(out_dir=Path(tmp))
        return [
            qm_path(p.stem.split("_", 1)[1]).name
            for p in fresh
            if not qm_path(p.stem.split("_", 1)[1]).is_file()
            or qm_path(p.stem.split("_", 1)[1]).read_bytes() != p.read_bytes()
        ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gradviz.i18n.build")
    parser.add_argument("--update", action="store_true", help="run lupdate first")
    parser.add_argument("--check", action="store_true", help="only check the .qm are current")
    args = parser.parse_args(argv)
    if args.check:
        bad = stale()
        for name in bad:
            print(f"{name} is out of date: run python -m gradviz.i18n.build", file=sys.stderr)
        return 1 if bad else 0
    if args.update:
        update()
    for path in release():
        print(f"wrote {path.relative_to(PACKAGE.parent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
