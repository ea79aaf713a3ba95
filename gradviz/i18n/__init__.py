"""gradviz's languages, Qt-free: which one to use, and the translations' catalog.

The window translates the Qt way: every string it shows goes through
``QCoreApplication.translate(context, text)``; ``pyside6-lupdate`` extracts them
into ``gradviz_<lang>.ts`` here (XML, what a translator edits, e.g. in Qt
Linguist) and ``pyside6-lrelease`` compiles that to ``gradviz_<lang>.qm``, which
:mod:`gradviz.ui.i18n` loads into a QTranslator (``python -m gradviz.i18n.build``
does both; scripts/setup.sh runs it).

Code that must not import Qt (``gradviz.app``, and later the core's explanations,
the demos' notes, the CLI and the HTML view) uses :func:`translate` from this
module: the same call, looked up in the same ``.ts`` file read as XML, so there is
one catalog for every place gradviz speaks. Its first argument is a context (the
``.ts`` groups messages by it), its second the English text, which is the key:
untranslated text stays English. The demos' titles, "about" lines and ``#>`` notes are
data, not code: ``demos_<lang>.ts`` holds them (context ``Demos``, extracted from the
demo files by ``python -m gradviz.i18n.build --update``), and lrelease compiles it into
the same ``.qm``.

Which language: ``GRADVIZ_LANG`` (``ko``, ``en``) first, then the choice saved
from View › Language, then the system locale (``LC_ALL``, ``LC_MESSAGES``,
``LANG``, ``LANGUAGE``); English unless one of these says Korean.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from functools import cache
from pathlib import Path

__all__ = [
    "DEFAULT_LANGUAGE",
    "ENV_VAR",
    "LANGUAGES",
    "QT_TRANSLATE_NOOP",
    "catalog",
    "choose_language",
    "current_language",
    "language_from_locale",
    "messages",
    "normalize_language",
    "qm_path",
    "resolve_language",
    "set_language",
    "translate",
    "ts_path",
    "ts_paths",
]

#: the language of the source texts: no translation is loaded for it
DEFAULT_LANGUAGE = "en"
#: code -> the language's name in that language (how the View › Language menu lists it)
LANGUAGES: dict[str, str] = {"en": "English", "ko": "한국어"}
#: overrides the saved choice and the locale for one run
ENV_VAR = "GRADVIZ_LANG"

_HERE = Path(__file__).resolve().parent
_current = DEFAULT_LANGUAGE
_chosen = False  # whether a program (the CLI, the window) has set the language


def ts_path(language: str) -> Path:
    """The translation source (XML) for ``language``."""
    return _HERE / f"gradviz_{language}.ts"


def ts_paths(language: str) -> list[Path]:
    """Every translation source for ``language``: the window's (lupdate's) and the demos'
    (``demos_<lang>.ts``, made by :mod:`gradviz.i18n.build` from the demo files)."""
    return sorted(_HERE.glob(f"*_{language}.ts"))


def qm_path(language: str) -> Path:
    """The compiled translation Qt loads for ``language`` (made by lrelease from the .ts)."""
    return _HERE / f"gradviz_{language}.qm"


def normalize_language(value: object) -> str | None:
    """``"ko_KR.UTF-8"``, ``"ko"``, ``"KO"`` -> ``"ko"``; a language gradviz lacks -> None."""
    if not isinstance(value, str):
        return None
    code = value.strip().split(".")[0].split("@")[0].replace("-", "_").split("_")[0].lower()
    return code if code in LANGUAGES else None


def language_from_locale(environ: Mapping[str, str] | None = None) -> str:
    """The language the system locale asks for, as gettext reads it; English otherwise."""
    env = os.environ if environ is None else environ
    for var in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = env.get(var, "")
        if value:
            return normalize_language(value) or DEFAULT_LANGUAGE
    for part in env.get("LANGUAGE", "").split(":"):
        code = normalize_language(part)
        if code:
            return code
    return DEFAULT_LANGUAGE


def choose_language(saved: object = None, environ: Mapping[str, str] | None = None) -> str:
    """``GRADVIZ_LANG``, else ``saved`` (View › Language; "" or None: follow the system),
    else the locale."""
    env = os.environ if environ is None else environ
    return (
        normalize_language(env.get(ENV_VAR, ""))
        or normalize_language(saved)
        or language_from_locale(env)
    )


def set_language(language: str) -> None:
    """The language :func:`translate` answers in (the window sets it with its translator)."""
    global _current, _chosen
    _current = normalize_language(language) or DEFAULT_LANGUAGE
    _chosen = True


def current_language() -> str:
    return _current


def resolve_language(language: str | None = None) -> str:
    """The language of something made outside the window's or the CLI's own text (the HTML
    page, a notebook's view): ``language`` when given (``"ko"``, ``"ko_KR"``, ``"en"``),
    else the one the program chose (:func:`set_language`: ``gradviz export``, the window),
    else, in a library or a notebook where nobody chose, ``GRADVIZ_LANG`` then the locale
    as the CLI reads them (:func:`choose_language`). A language gradviz lacks raises
    ValueError."""
    if language is not None:
        code = normalize_language(language)
        if code is None:
            known = ", ".join(LANGUAGES)
            raise ValueError(f"gradviz has no language {language!r} (it has: {known})")
        return code
    return _current if _chosen else choose_language()


@cache
def catalog(language: str) -> dict[tuple[str, str, str], str]:
    """``(context, source, disambiguation) -> translation`` for the finished messages of
    ``language``'s .ts file (empty for English or a missing file)."""
    if language == DEFAULT_LANGUAGE:
        return {}
    # here, not at the top: the kernel imports this module (the core's explanations mark
    # their sentences with QT_TRANSLATE_NOOP) and never reads a catalog
    import xml.etree.ElementTree as ET

    out: dict[tuple[str, str, str], str] = {}
    contexts = (c for path in ts_paths(language) for c in ET.parse(path).getroot().iter("context"))
    for context in contexts:
        name = context.findtext("name") or ""
        for message in context.iter("message"):
            tr = message.find("translation")
            if tr is None or tr.get("type") in ("unfinished", "obsolete", "vanished"):
                continue
            forms = tr.findall("numerusform")
            text = forms[0].text if forms else tr.text
            if text:
                key = (name, message.findtext("source") or "", message.findtext("comment") or "")
                out[key] = text
    return out


def messages(context: str, language: str | None = None) -> dict[str, str]:
    """English -> translation for every finished message of ``context`` (default: the
    current language): what a page without Python (the HTML view's script) looks up."""
    return {
        source: text
        for (ctx, source, disambiguation), text in catalog(language or _current).items()
        if ctx == context and not disambiguation
    }


def translate(
    context: str, text: str, disambiguation: str | None = None, n: int = -1
) -> str:
    """``QCoreApplication.translate`` without Qt: ``text`` in the current language.

    ``%n`` becomes ``n`` as Qt does it (Korean has one plural form, so the first
    form is the only one). An English text with no entry comes back as it is.
    """
    found = catalog(_current).get((context, text, disambiguation or ""), text)
    return found.replace("%n", str(n)) if n >= 0 else found


def QT_TRANSLATE_NOOP(context: str, text: str) -> str:  # noqa: N802 (lupdate's name)
    """Marks ``text`` for lupdate where it is declared (a table); translated where shown."""
    return text
