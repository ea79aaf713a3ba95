"""Where gradviz keeps its settings and autosaves (environment variables override both)."""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QSettings, QStandardPaths

from gradviz.app.files import APP_NAME

__all__ = ["default_data_dir", "default_settings"]


def default_settings() -> QSettings:
    """The user's settings; ``GRADVIZ_SETTINGS_DIR`` puts them in an ini file there instead."""
    folder = os.environ.get("GRADVIZ_SETTINGS_DIR")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        return QSettings(str(Path(folder) / "gradviz.ini"), QSettings.Format.IniFormat)
    return QSettings("gradviz", "gradviz")


def default_data_dir() -> Path:
    """Where autosaves go; ``GRADVIZ_DATA_DIR`` overrides it.

    gradviz's folder whatever the application is called: inside a host's Qt
    application (``gradviz.show()`` under napari) AppDataLocation would be the
    host's. On Linux this is the AppDataLocation of gradviz's own application.
    """
    folder = os.environ.get("GRADVIZ_DATA_DIR")
    if folder:
        return Path(folder)
    location = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.GenericDataLocation)
    return Path(location) / APP_NAME / APP_NAME if location else Path.home() / ".gradviz"
