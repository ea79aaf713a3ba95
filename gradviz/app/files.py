"""Files the window opens and remembers: scripts, snapshots, recent files, autosaves.

:func:`read_path` decides what a file on disk is (a script, the statements saved
in a report, a read-only snapshot, or something to refuse with a reason);
:class:`RecentFiles` keeps the Open recent list in any settings store with
``value``/``setValue`` (QSettings, or a dict-backed one in tests);
:func:`restore_plan` decides whether an autosave left by a crashed window is
worth offering and what to call it. Qt-free.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from gradviz.graph.gcpause import paused_gc
from gradviz.i18n import QT_TRANSLATE_NOOP, translate

from .snapshot import (
    SnapshotError,
    parse_snapshot,
    script_from_snapshot,
    snapshot_from_graph_export,
)

__all__ = [
    "APP_NAME",
    "MAX_RECENT",
    "Document",
    "OpenedFile",
    "RecentFiles",
    "RestorePlan",
    "display_name",
    "read_path",
    "restore_plan",
]

APP_NAME = "gradviz"
MAX_RECENT = 8


class SettingsStore(Protocol):
    def value(self, key: str, default: Any = None) -> Any: ...

    def setValue(self, key: str, value: Any) -> None: ...  # noqa: N802 - QSettings' name


class RecentFiles:
    """The most recently opened files, newest first, at most ``MAX_RECENT``."""

    KEY = "file/recent"

    def __init__(self, store: SettingsStore):
        self.store = store

    def items(self) -> list[str]:
        value = self.store.value(self.KEY, [])
        if value is None:
            return []
        if isinstance(value, str):
            return [value] if value else []
        return [str(v) for v in value]

    def add(self, path: Path | str) -> None:
        items = [p for p in self.items() if p != str(path)]
        items.insert(0, str(path))
        self.store.setValue(self.KEY, items[:MAX_RECENT])

    def forget(self, path: Path | str) -> None:
        self.store.setValue(self.KEY, [p for p in self.items() if p != str(path)])


@dataclass(frozen=True)
class OpenedFile:
    """What :func:`read_path` found.

    ``kind`` is ``"script"`` (``text`` is the script), ``"statements"`` (``text`` is
    the script a saved report ran), ``"snapshot"`` (``data`` opens read-only) or
    ``"refused"`` (``message`` says why; ``unreadable`` when the file could not be
    read at all, so the recent list forgets it).
    """

    kind: str
    path: Path
    text: str = ""
    data: dict[str, Any] | None = None
    message: str = ""
    unreadable: bool = False


def read_path(path: Path) -> OpenedFile:
    """Read ``path`` and decide what it is; never raises for a bad file."""
    with paused_gc():  # a 100k-node file parses into ~2 million objects, none cyclic
        return _read_path(path)


#: what a file that is not text most likely is, by its first bytes
#: (the English is the key of its translation, context ``Files``)
_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", QT_TRANSLATE_NOOP("Files", "a PNG image")),
    (b"\xff\xd8\xff", QT_TRANSLATE_NOOP("Files", "a JPEG image")),
    (b"GIF8", QT_TRANSLATE_NOOP("Files", "a GIF image")),
    (b"%PDF", QT_TRANSLATE_NOOP("Files", "a PDF document")),
    (b"PK\x03\x04", QT_TRANSLATE_NOOP("Files", "a zip archive")),
    (b"\x7fELF", QT_TRANSLATE_NOOP("Files", "a program (ELF)")),
    (b"\x80", QT_TRANSLATE_NOOP("Files", "a pickle (a saved PyTorch model?)")),
    (b"\x93NUMPY", QT_TRANSLATE_NOOP("Files", "a NumPy array file")),
    (b"\x1f\x8b", QT_TRANSLATE_NOOP("Files", "a gzip archive")),
)
#: the largest script the editor opens (a model checkpoint opened by mistake is not one)
MAX_SCRIPT_BYTES = 5 * 1024 * 1024


def _looks_like(raw: bytes) -> str | None:
    """What a file that starts with ``raw`` most likely is (a PNG image...), or None."""
    return next((what for magic, what in _MAGIC if raw.startswith(magic)), None)


def _looks_like_text(raw: bytes) -> str | None:
    """"it looks like a PNG image" (in the current language) for a file that starts with
    ``raw``, or None."""
    kind = _looks_like(raw)
    if kind is None:
        return None
    return translate("Files", "it looks like {kind}").format(kind=translate("Files", kind))


def _too_big(size: int) -> str:
    return translate("Files", "it is {size} bytes, more than a script").format(size=f"{size:,}")


def _not_text(path: Path, raw: bytes, why: str) -> OpenedFile:
    what = _looks_like_text(raw) or why
    return OpenedFile(
        "refused", path,
        message=translate(
            "Files",
            "{name} is not a script gradviz can open: {what}. Nothing was "
            "changed, and the file was not touched.",
        ).format(name=path.name, what=what),
    )


def _read_path(path: Path) -> OpenedFile:
    try:
        size = path.stat().st_size
        if size > MAX_SCRIPT_BYTES and not path.name.endswith(".json"):
            with path.open("rb") as f:
                head = f.read(16)
            return _not_text(path, head, _too_big(size))
        raw = path.read_bytes()
    except OSError as exc:
        return OpenedFile(
            "refused", path, unreadable=True,
            message=translate("Files", "Cannot open {path}: {error}").format(path=path, error=exc),
        )
    # Never shown as a script (and so never saved over) unless it is text, whole:
    # a PNG opened by mistake and saved with Ctrl+S lost the image.
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return _not_text(
            path, raw[:16],
            translate("Files", "it is not valid UTF-8 text (byte {byte})").format(
                byte=f"{exc.start:,}"
            ),
        )
    if "\x00" in text:
        return _not_text(path, raw[:16], translate("Files", "it holds NUL bytes, so it is not text"))
    if text.startswith("\ufeff"):
        text = text[1:]  # a byte order mark: the editor shows the text, not the mark
    if not path.name.endswith(".json"):
        return OpenedFile("script", path, text=text)
    try:
        data = json.loads(text)
    except ValueError as exc:
        return OpenedFile(
            "refused", path,
            message=translate("Files", "{name} is not a gradviz snapshot (not JSON: {error})")
            .format(name=path.name, error=exc),
        )
    checked = isinstance(data, dict) and "format" in data
    if checked:
        # A snapshot file: checked against the format's schema before anything reads it.
        try:
            parse_snapshot(data, path.name)
        except SnapshotError as exc:
            return OpenedFile("refused", path, message=str(exc))
    script = script_from_snapshot(data)
    if script is not None:
        return OpenedFile("statements", path, text=script)
    # No statements (gradviz.snapshot() / gradviz.show()): a read-only view, checked once
    if not checked:
        data = snapshot_from_graph_export(data) or data  # gradviz export -o graph.json
        try:
            parse_snapshot(data, path.name)
        except SnapshotError as exc:
            return OpenedFile("refused", path, message=str(exc))
    return OpenedFile("snapshot", path, data=data)


def refuse_to_overwrite(path: Path) -> str | None:
    """Why the window must not save a script over ``path``, or None: a file there that
    is not text (an image, a checkpoint) is never replaced."""
    try:
        if not path.exists():
            return None
        if path.is_dir():
            return translate("Files", "{path} is a folder: nothing was saved").format(path=path)
        size = path.stat().st_size
        with path.open("rb") as f:
            raw = f.read(min(size, MAX_SCRIPT_BYTES + 1))
    except OSError:
        return None  # the write itself will say what is wrong
    why = None
    if size > MAX_SCRIPT_BYTES:
        why = _too_big(size)
    else:
        try:
            if "\x00" in raw.decode("utf-8"):
                why = translate("Files", "it holds NUL bytes")
        except UnicodeDecodeError:
            why = translate("Files", "it is not UTF-8 text")
    if why is None:
        return None
    return translate(
        "Files", "{name} was not overwritten: {why}. Save the script under another name."
    ).format(name=path.name, why=_looks_like_text(raw) or why)


def write_text_atomically(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` whole or not at all (a full disk or a crash mid-write
    leaves the old file as it was)."""
    tmp = path.with_name(f".{path.name}.gradviz-tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink(missing_ok=True)


def display_name(
    *, read_only: bool = False, snapshot_name: str | None = None, path: Path | None = None,
    demo: Any = None,
) -> str:  # fmt: skip
    """What the title bar and the editor's header call the text shown."""
    if read_only:
        return f"{snapshot_name} (read-only)"
    if path:
        return path.name
    if demo:
        return f"demo: {demo.name}.py"
    return "untitled.py"


@dataclass
class Document:
    """What the editor holds: a file, a demo's text, or a read-only snapshot.

    ``read_only`` is the one place that says a snapshot is shown: commands read it
    through :func:`gradviz.app.commands.enabled_commands`, not each on its own.
    """

    path: Path | None = None
    demo: Any = None
    read_only: bool = False
    snapshot_name: str | None = None
    snapshot_path: Path | None = None

    def name(self) -> str:
        return display_name(
            read_only=self.read_only, snapshot_name=self.snapshot_name, path=self.path,
            demo=self.demo,
        )  # fmt: skip

    def open_snapshot(self, name: str, path: Path | None) -> None:
        self.read_only, self.snapshot_name, self.snapshot_path = True, name, path
        self.path = None
        self.demo = None

    def leave_snapshot(self) -> None:
        self.read_only, self.snapshot_name, self.snapshot_path = False, None, None


@dataclass(frozen=True)
class RestorePlan:
    """An autosave worth offering: its text, and what it was (a file, a demo, or neither)."""

    text: str
    file: Path | None
    demo_name: str | None
    #: how the prompt names it: ``two_paths.py``, ``the demo 'Two paths' (edited)``, …
    name: str
    #: when it was saved, as the prompt shows it
    when: str


def restore_plan(
    text: str, meta: dict[str, Any], demo_titles: dict[str, str]
) -> RestorePlan | None:
    """Whether an orphaned autosave is worth offering (None: the file on disk is as new).

    ``demo_titles`` maps demo names to titles, so an edited demo is offered as
    that demo, not as an untitled script.
    """
    file = Path(meta["file"]) if isinstance(meta.get("file"), str) else None
    saved_at = float(meta["saved_at"])
    if file and file.is_file():
        try:
            same = file.stat().st_mtime >= saved_at or (
                file.read_text(encoding="utf-8", errors="replace") == text
            )
        except OSError:
            same = False
        if same:
            return None  # the file itself is newer: nothing was lost
    demo_name = meta.get("demo") if isinstance(meta.get("demo"), str) else None
    if file:
        name = file.name
    elif demo_name and demo_name in demo_titles:
        name = translate("Files", "your edits of the demo '{title}'").format(
            title=translate("Demos", demo_titles[demo_name])
        )
    else:
        name = translate("Files", "an untitled script")
        demo_name = None
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(saved_at))
    return RestorePlan(text, file if file and file.is_file() else None, demo_name, name, when)
