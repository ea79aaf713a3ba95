"""Each window's autosave, and the autosaves that crashed windows left behind.

A window writes its unsaved text to ``<data dir>/autosave/<id>.py`` (and
``<id>.json``: the file or demo it belongs to, when) while it holds an
exclusive OS lock on ``<id>.lock``. The lock lives exactly as long as the
window's process: a crash or a kill releases it, a running window never does.
So at start-up an autosave whose lock can be taken is a crash's, and is
offered back; one whose lock is held belongs to a live window, here or in
another process, and is neither offered nor deleted.

Qt-free, so it is tested without a display.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = ["Autosave", "Orphan", "find_orphans"]

FOLDER = "autosave"
#: the single shared autosave of gradviz before per-window autosaves (still offered)
LEGACY = ("autosave.py", "autosave.json")


def _try_lock(path: Path) -> IO[bytes] | None:
    """Open ``path`` and take its exclusive lock without waiting; None when someone holds it."""
    try:
        handle = open(path, "a+b")  # noqa: SIM115 - held open for the lock's lifetime
    except OSError:
        return None
    if fcntl is None:  # pragma: no cover - Windows: msvcrt locks a byte range instead
        import msvcrt

        try:
            msvcrt.locking(handle.fileno(), msvcrt.LK_NBLCK, 1)
        except OSError:
            handle.close()
            return None
        return handle
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        return None
    return handle


def _unlink(*paths: Path) -> None:
    for path in paths:
        with contextlib.suppress(OSError):
            path.unlink()


def _write_atomically(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


class Autosave:
    """One window's autosave files; the lock is taken on the first write."""

    def __init__(self, data_dir: Path):
        self.folder = Path(data_dir) / FOLDER
        self.id = f"{os.getpid()}-{uuid.uuid4().hex[:12]}"
        self._lock: IO[bytes] | None = None

    @property
    def text_path(self) -> Path:
        return self.folder / f"{self.id}.py"

    @property
    def meta_path(self) -> Path:
        return self.folder / f"{self.id}.json"

    @property
    def lock_path(self) -> Path:
        return self.folder / f"{self.id}.lock"

    def write(self, text: str, meta: dict[str, Any]) -> None:
        """Save ``text`` (OSError when the folder cannot be written)."""
        if self._lock is None:
            self.folder.mkdir(parents=True, exist_ok=True)
            self._lock = _try_lock(self.lock_path)
            if self._lock is None:
                raise OSError(f"cannot lock {self.lock_path}")
        _write_atomically(self.text_path, text)
        _write_atomically(self.meta_path, json.dumps({**meta, "saved_at": time.time()}))

    def remove(self) -> None:
        """Forget the saved text (it was saved for real, or discarded); keep the lock."""
        _unlink(self.text_path, self.meta_path)

    def close(self) -> None:
        """The window closed normally: files and lock go."""
        self.remove()
        if self._lock is not None:
            _unlink(self.lock_path)
            self._lock.close()
            self._lock = None


@dataclass
class Orphan:
    """An autosave that no running window holds: a crashed window's."""

    text_path: Path
    meta_path: Path
    lock_path: Path | None
    _lock: IO[bytes] | None

    def read(self) -> tuple[str, dict[str, Any]]:
        """Its text and what it was (``file``, ``demo``, ``saved_at``)."""
        text = self.text_path.read_text(encoding="utf-8", errors="replace")
        try:
            meta = json.loads(self.meta_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            meta = {}
        if not isinstance(meta, dict):
            meta = {}
        if not isinstance(meta.get("saved_at"), (int, float)):
            meta["saved_at"] = self.text_path.stat().st_mtime
        return text, meta

    def discard(self) -> None:
        """Delete it (restored into a window, declined, or older than its file)."""
        _unlink(self.text_path, self.meta_path)
        self.release(delete_lock=True)

    def release(self, delete_lock: bool = False) -> None:
        """Let go of it without deleting it (another window may offer it later)."""
        if self._lock is not None:
            if delete_lock and self.lock_path is not None:
                _unlink(self.lock_path)
            self._lock.close()
            self._lock = None


def find_orphans(data_dir: Path) -> list[Orphan]:
    """Autosaves left by crashed windows, newest first, each locked for the caller.

    Locking them means two windows starting at once never offer the same one;
    :meth:`Orphan.discard` or :meth:`Orphan.release` lets go.
    """
    data_dir = Path(data_dir)
    found: list[tuple[float, Orphan]] = []
    folder = data_dir / FOLDER
    for text_path in sorted(folder.glob("*.py")) if folder.is_dir() else []:
        lock_path = text_path.with_suffix(".lock")
        lock = _try_lock(lock_path)
        if lock is None:
            continue  # a live window's
        if not text_path.is_file():  # its window closed while we looked
            lock.close()
            _unlink(lock_path)
            continue
        orphan = Orphan(text_path, text_path.with_suffix(".json"), lock_path, lock)
        found.append((_mtime(text_path), orphan))
    legacy_text, legacy_meta = (data_dir / name for name in LEGACY)
    if legacy_text.is_file():
        found.append((_mtime(legacy_text), Orphan(legacy_text, legacy_meta, None, None)))
    return [orphan for _, orphan in sorted(found, key=lambda item: -item[0])]


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0
