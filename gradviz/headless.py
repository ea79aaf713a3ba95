"""Can this process open a window? One rule for ``gradviz`` (the CLI) and ``gradviz.show()``.

On Linux, Qt's xcb and wayland platform plugins abort the whole process (SIGABRT,
no exception) when there is no display to connect to. That must never happen
inside someone's notebook kernel, so the check runs before any QApplication is
made. Torch-free and Qt-free.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

#: Qt platform plugins that draw without a display server
DISPLAY_FREE_PLATFORMS = frozenset(
    {"offscreen", "minimal", "minimalegl", "vnc", "eglfs", "linuxfb", "vkkhrdisplay", "directfb"}
)


def no_display_reason(
    environ: Mapping[str, str] | None = None, platform: str | None = None
) -> str | None:
    """Why Qt cannot open a window here, or None when it can (or this is not Linux).

    ``QT_QPA_PLATFORM`` may name several plugins (``wayland;xcb``), each with
    options after a colon; Qt tries them in order, so one usable plugin is enough.
    """
    env = os.environ if environ is None else environ
    if not (platform or sys.platform).startswith("linux"):
        return None
    x11 = bool(env.get("DISPLAY"))
    wayland = bool(env.get("WAYLAND_DISPLAY"))
    requested = [
        p.split(":", 1)[0].strip().lower()
        for p in (env.get("QT_QPA_PLATFORM") or "").split(";")
        if p.strip()
    ]
    for plugin in requested:
        if plugin in DISPLAY_FREE_PLATFORMS:
            return None
        if (plugin == "xcb" and x11) or (plugin.startswith("wayland") and wayland):
            return None
    if not requested and (x11 or wayland):
        return None
    if requested:
        return (
            f"no display for QT_QPA_PLATFORM={env.get('QT_QPA_PLATFORM')}: "
            f"DISPLAY is {'set' if x11 else 'unset'} and WAYLAND_DISPLAY is "
            f"{'set' if wayland else 'unset'}"
        )
    return "no display: DISPLAY and WAYLAND_DISPLAY are unset"
