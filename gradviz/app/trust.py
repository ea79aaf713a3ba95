"""Which scripts run as Python: trust, decided per folder, as editors decide it.

gradviz runs a script in one of two modes (VS Code's Workspace Trust is the model):

* **trusted**: the script is the user's own; it runs as real Python (imports,
  files, the GPU), as ``python script.py`` would;
* **restricted**: the script came from someone else; gradviz's interpreter runs it
  in a confined process, and refuses what could reach the machine.

Built-in demos and scripts written in the window are trusted. A file opened from
disk is trusted when its folder (or a folder above it) was trusted before; else it
opens in restricted mode and the window asks once, with a banner: trust the authors
of the scripts in this folder, or keep it restricted. Nothing runs before that
choice except in restricted mode. The answer is remembered (a list of folders in
the window's settings).

Qt-free: the window gives a ``load``/``save`` pair over its settings.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from gradviz.i18n import QT_TRANSLATE_NOOP, translate

TRUSTED = "trusted"
RESTRICTED = "restricted"

#: what the window's banner and badge say, in VS Code's words where they fit (English:
#: the keys of their translations, context ``Trust``; the window shows translate(...))
BADGE_TEXT = {
    TRUSTED: QT_TRANSLATE_NOOP("Trust", "Trusted"),
    RESTRICTED: QT_TRANSLATE_NOOP("Trust", "Restricted mode"),
}
BADGE_TIP = {
    TRUSTED: QT_TRANSLATE_NOOP(
        "Trust",
        "This script runs as Python, as python would run it: imports, files, the GPU. "
        "Scripts you write, the demos and folders you trusted run this way.",
    ),
    RESTRICTED: QT_TRANSLATE_NOOP(
        "Trust",
        "This script runs in restricted mode: gradviz's interpreter in a confined "
        "process, with no files, network or programs, and only what the allowlist admits. "
        "For scripts from someone else.",
    ),
}


def banner_text(folder: Path) -> str:
    """The banner's question: short enough for a narrow editor (the whole path is in
    its tooltip, banner_tip)."""
    return translate(
        "Trust",
        "Restricted mode: scripts in '{folder}' may come from someone else, "
        "so this one runs in gradviz's sandbox. Trust the authors of this folder's scripts?",
    ).format(folder=folder.name or folder)


def banner_tip(folder: Path) -> str:
    return f"{folder}\n\n" + translate(
        "Trust",
        "In restricted mode gradviz's interpreter runs the script in a confined "
        "process: no files, network or programs, and only the Python its allowlist admits. "
        "Trust folder runs the scripts of this folder as Python from now on (remembered).",
    )


@dataclass(frozen=True)
class Decision:
    """How one script runs, and why."""

    mode: str
    #: the folder whose trust decided it (None for demos and unsaved scripts)
    folder: Path | None
    #: the window should ask (a file from a folder never trusted)
    ask: bool

    @property
    def trusted(self) -> bool:
        return self.mode == TRUSTED


class TrustStore:
    """Trusted folders; everything beneath one is trusted."""

    def __init__(self, load: Callable[[], Iterable[str]] | None = None,
                 save: Callable[[list[str]], None] | None = None):
        self._save = save
        self._folders: set[Path] = set()
        for entry in (load() if load is not None else ()):
            if isinstance(entry, str) and entry:
                self._folders.add(_canonical(Path(entry)))

    @property
    def folders(self) -> list[Path]:
        return sorted(self._folders)

    def is_trusted(self, folder: Path) -> bool:
        folder = _canonical(folder)
        return any(folder == f or f in folder.parents for f in self._folders)

    def trust(self, folder: Path) -> None:
        self._folders.add(_canonical(folder))
        self._persist()

    def forget(self, folder: Path) -> None:
        self._folders.discard(_canonical(folder))
        self._persist()

    def decide(self, path: Path | None, *, demo: bool = False) -> Decision:
        """The mode a script opens in: ``path`` None is a demo or an unsaved script."""
        if demo or path is None:
            return Decision(TRUSTED, None, ask=False)
        folder = _canonical(path).parent
        if self.is_trusted(folder):
            return Decision(TRUSTED, folder, ask=False)
        return Decision(RESTRICTED, folder, ask=True)

    def _persist(self) -> None:
        if self._save is not None:
            self._save([str(f) for f in sorted(self._folders)])


def _canonical(path: Path) -> Path:
    try:
        return Path(os.path.realpath(path))
    except (OSError, ValueError):
        return Path(os.path.abspath(path))
