"""The window's language: Qt translators installed from the locale, GRADVIZ_LANG or settings.

Every string the window shows is written ``translate("Context", "English text")``
(``QCoreApplication.translate``; the name is what ``pyside6-lupdate`` looks for).
:func:`install_language` loads ``gradviz_<lang>.qm`` (and Qt's own ``qtbase_<lang>.qm``
for its dialogs' buttons) before the window builds its widgets, and tells the
Qt-free catalog (:mod:`gradviz.i18n`) the same language, so the guide strip's words
follow too. View › Language saves a choice in the settings; it applies the next time
a window opens (the widgets are built in one language).
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QLibraryInfo, QSettings, QTranslator

from gradviz import i18n

__all__ = ["SETTINGS_KEY", "install_language", "saved_language", "translate"]

#: QSettings key of the View › Language choice: "" follows the system
SETTINGS_KEY = "language"

translate = QCoreApplication.translate

#: the translators gradviz installed, so a later call can take them out again
_installed: list[QTranslator] = []
_installed_language: str | None = None


def saved_language(settings: QSettings | None) -> str:
    """The View › Language choice in ``settings`` ("" when none: follow the system)."""
    if settings is None:
        return ""
    value = settings.value(SETTINGS_KEY, "")
    return i18n.normalize_language(value) or ""


def install_language(settings: QSettings | None = None, *, qt_strings: bool = True) -> str:
    """Install the translators for the language gradviz should speak now; returns its code.

    ``qt_strings``: also Qt's own catalogue (standard buttons, a line edit's menu);
    left out inside a host application, whose Qt strings are the host's business.
    """
    global _installed_language
    language = i18n.choose_language(saved_language(settings))
    i18n.set_language(language)
    app = QCoreApplication.instance()
    if app is None or language == _installed_language:
        return language
    for translator in _installed:
        app.removeTranslator(translator)
    _installed.clear()
    _installed_language = language
    if language == i18n.DEFAULT_LANGUAGE:
        return language
    own = QTranslator(app)
    if own.load(str(i18n.qm_path(language))):
        app.installTranslator(own)
        _installed.append(own)
    if qt_strings:
        qt = QTranslator(app)
        folder = QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)
        if qt.load(f"qtbase_{language}", folder):
            app.installTranslator(qt)
            _installed.append(qt)
    return language
