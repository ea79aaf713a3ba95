"""Whether the installed fonts can show a script's text, and what to install if not.

The seed lessons are Korean blog posts: their readers paste Korean comments, names and
prints. Qt (through fontconfig) finds a font for each character by itself; where no
installed font has a writing system's letters, every one of them is an empty box. So the
window looks at the writing systems a text uses and says once, with the package to
install, which ones no font can show.
"""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtGui import QFontDatabase

from gradviz.i18n import QT_TRANSLATE_NOOP

from .i18n import translate

WS = QFontDatabase.WritingSystem

#: (first, last code point) -> the writing system, its name, and the Debian/Ubuntu package
#: with a font for it (scripts/setup.sh installs fonts-nanum)
RANGES: tuple[tuple[int, int, QFontDatabase.WritingSystem, str, str], ...] = (
    (0x1100, 0x11FF, WS.Korean, QT_TRANSLATE_NOOP("Fonts", "Korean"), "fonts-nanum"),
    (0x3130, 0x318F, WS.Korean, QT_TRANSLATE_NOOP("Fonts", "Korean"), "fonts-nanum"),
    (0xAC00, 0xD7AF, WS.Korean, QT_TRANSLATE_NOOP("Fonts", "Korean"), "fonts-nanum"),
    (0x3040, 0x30FF, WS.Japanese, QT_TRANSLATE_NOOP("Fonts", "Japanese"), "fonts-noto-cjk"),
    (0x4E00, 0x9FFF, WS.SimplifiedChinese, QT_TRANSLATE_NOOP("Fonts", "Chinese"), "fonts-noto-cjk"),
    (0x0400, 0x04FF, WS.Cyrillic, QT_TRANSLATE_NOOP("Fonts", "Cyrillic"), "fonts-dejavu"),
    (0x0370, 0x03FF, WS.Greek, QT_TRANSLATE_NOOP("Fonts", "Greek"), "fonts-dejavu"),
    (0x0590, 0x05FF, WS.Hebrew, QT_TRANSLATE_NOOP("Fonts", "Hebrew"), "fonts-noto-core"),
    (0x0600, 0x06FF, WS.Arabic, QT_TRANSLATE_NOOP("Fonts", "Arabic"), "fonts-noto-core"),
    (0x0900, 0x097F, WS.Devanagari, QT_TRANSLATE_NOOP("Fonts", "Devanagari"), "fonts-noto-core"),
    (0x0E00, 0x0E7F, WS.Thai, QT_TRANSLATE_NOOP("Fonts", "Thai"), "fonts-noto-core"),
)


def writing_systems(text: str) -> list[tuple[QFontDatabase.WritingSystem, str, str]]:
    """The writing systems ``text`` uses (of those in RANGES), each once, in order."""
    seen: dict[str, tuple[QFontDatabase.WritingSystem, str, str]] = {}
    for ch in {c for c in text if ord(c) > 0x36F}:
        cp = ord(ch)
        for first, last, system, name, package in RANGES:
            if first <= cp <= last and name not in seen:
                seen[name] = (system, name, package)
    return [seen[k] for k in sorted(seen)]


def missing_fonts(text: str, families: dict | None = None) -> list[tuple[str, str]]:
    """(writing system, package) for each one ``text`` uses that no installed font has.

    ``families``: writing system -> installed families (tests pass their own)."""
    out = []
    for system, name, package in writing_systems(text):
        installed = (families or {}).get(system) if families is not None else (
            QFontDatabase.families(system)
        )
        if not installed:
            out.append((name, package))
    return out


def missing_fonts_message(missing: Iterable[tuple[str, str]]) -> str | None:
    missing = list(missing)
    if not missing:
        return None
    names = translate("Fonts", " and ").join(translate("Fonts", name) for name, _ in missing)
    packages = " ".join(sorted({package for _, package in missing}))
    return translate(
        "Fonts",
        "No installed font can show this script's {names} text (it shows as empty "
        "boxes, here and in exported pictures). Install one, then restart gradviz: on "
        "Debian or Ubuntu, sudo apt install {packages}",
    ).format(names=names, packages=packages)
