"""Start the window: ``gradviz``, ``gradviz window [file] [--demo name]``, ``gradviz open FILE``,
``gradviz.show(loss)``, ``python main.py``.

gradviz styles only what it owns. When gradviz makes the QApplication (the
``gradviz`` command, ``gradviz.show()`` from a plain script) it sets the
application's style (Fusion) and a layout-only style sheet; colours and fonts stay
the system's (dark mode and the user's font size included), unless ``GRADVIZ_THEME``
picks ``dark`` or ``light``. Inside someone else's Qt
application (IPython's ``%gui qt``, napari) it leaves the application alone and
dresses its own window instead, and never touches the host's heap.
"""

from __future__ import annotations

import gc
import os
import sys
from typing import Any

from PySide6.QtCore import QCoreApplication, Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication, QStyleFactory, QWidget

from . import theme

__all__ = ["create_application", "host_application", "open_window", "run_app", "style_window"]

#: set on a QApplication that gradviz made (and so may style)
_OWNED = "gradviz_owned"
#: windows opened inside a host application: kept alive until they close
_open_windows: set[Any] = set()

#: layout only: every colour comes from the palette, so dark mode and the user's
#: font size carry through (palette(...) follows the palette in use)
_STYLE_SHEET = (
    "QDockWidget { font-weight: 600; }"
    "QDockWidget::title { background: palette(alternate-base); padding: 5px 8px; }"
    "QTabBar::tab { padding: 4px 12px; }"
    "QToolBar { spacing: 2px; padding: 3px 6px; }"
    "QToolButton { padding: 3px 7px; }"
)

#: GRADVIZ_THEME: "dark" or "light" picks that palette; anything else (or unset)
#: keeps the system's (its dark mode included)
THEME_ENV = "GRADVIZ_THEME"


def dark_palette() -> QPalette:
    """A dark palette for Fusion, for systems that report no dark mode of their own."""
    p = QPalette()
    role = QPalette.ColorRole
    for r, colour in (
        (role.Window, "#25282d"), (role.WindowText, "#e6e8eb"), (role.Base, "#1d1f23"),
        (role.AlternateBase, "#2c3036"), (role.ToolTipBase, "#2c3036"),
        (role.ToolTipText, "#e6e8eb"), (role.PlaceholderText, "#9aa0a8"),
        (role.Text, "#e6e8eb"), (role.Button, "#2f333a"), (role.ButtonText, "#e6e8eb"),
        (role.BrightText, "#ff6b6b"), (role.Link, "#74a7ff"), (role.Highlight, "#3d6fd6"),
        (role.HighlightedText, "#ffffff"), (role.Mid, "#3a3f46"), (role.Dark, "#16181b"),
        (role.Light, "#3c4148"), (role.Shadow, "#0c0d0f"),
    ):  # fmt: skip
        p.setColor(r, QColor(colour))
    for r in (role.WindowText, role.Text, role.ButtonText):
        p.setColor(QPalette.ColorGroup.Disabled, r, QColor("#6c727a"))
    return p


def _palette(base: QPalette) -> QPalette:
    """The palette gradviz uses: the system's unless GRADVIZ_THEME asks for one."""
    choice = os.environ.get(THEME_ENV, "").strip().lower()
    if choice == "dark":
        return dark_palette()
    if choice == "light":
        return QStyleFactory.create("Fusion").standardPalette()
    return QPalette(base)


def host_application() -> QApplication | None:
    """The running QApplication when someone else made it (a host), else None."""
    app = QApplication.instance()
    if app is None or app.property(_OWNED):
        return None
    return app if isinstance(app, QApplication) else None


def create_application(argv: list[str] | None = None, *, adopt: bool = False) -> QApplication:
    """gradviz's own QApplication (names for QSettings, style), or the host's left as it is.

    ``adopt``: an existing application is gradviz's to style after all (the test
    suite, where pytest-qt makes the QApplication the ``gradviz`` command would).
    """
    app = QApplication.instance()
    if app is not None and adopt:
        app.setProperty(_OWNED, True)
    if app is not None and not app.property(_OWNED):
        if not isinstance(app, QApplication):
            raise RuntimeError(
                "this process runs a Qt application without widgets (QCoreApplication or "
                "QGuiApplication); the gradviz window needs a QApplication"
            )
        return app
    if app is None:
        QCoreApplication.setOrganizationName("gradviz")
        QCoreApplication.setApplicationName("gradviz")
        app = QApplication(argv if argv is not None else sys.argv[:1])
        app.setProperty(_OWNED, True)
    assert isinstance(app, QApplication)
    app.setStyle("Fusion")
    app.setPalette(_palette(app.palette()))
    app.setStyleSheet(_STYLE_SHEET)
    theme.activate(app.palette())
    return app


def style_window(window: QWidget) -> None:
    """Dress one window like gradviz's own application, leaving the host application alone.

    A widget's palette, font and style sheet pass to its children; its style does
    not, so the host's widget style stays (and so do the host's other windows).
    """
    style = QStyleFactory.create("Fusion")
    if style is not None:
        style.setParent(window)
        window.setStyle(style)
    window.setPalette(_palette(window.palette()))
    window.setStyleSheet(_STYLE_SHEET)


def _main_window(
    file: str | None, demo: str | None, snapshot: dict[str, Any] | None, hosted: bool
) -> Any:
    from .main_window import MainWindow

    theme.activate(QApplication.palette())  # the panels' text colours suit the palette
    # The kernel (a torch process) starts with the first script or demo the window
    # runs, so a read-only snapshot never starts one.
    window = MainWindow(start_kernel=False)
    window.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    if hosted:
        style_window(window)
    window.show()
    window.open_initial(file=file, demo=demo, snapshot=snapshot)
    return window


def open_window(
    file: str | None = None,
    demo: str | None = None,
    snapshot: dict[str, Any] | None = None,
) -> Any:
    """Open a window inside the running (host) application and return it at once."""
    app = create_application()
    window = _main_window(file, demo, snapshot, hosted=not app.property(_OWNED))
    _open_windows.add(window)
    window.destroyed.connect(lambda *_: _open_windows.discard(window))
    return window


def run_app(
    file: str | None = None,
    demo: str | None = None,
    snapshot: dict[str, Any] | None = None,
    *,
    own_process: bool = False,
) -> int:
    """Open the window and run Qt until it closes.

    On ``snapshot`` (a dict from ``gradviz.snapshot()``: read-only), else ``file``
    (a script, or a ``*.gradviz.json`` snapshot), else a ``demo``, else the
    last script or the first demo. ``own_process``: the process is gradviz's own
    (the ``gradviz`` command), so its heap may be frozen for speed.
    """
    app = create_application()
    window = _main_window(file, demo, dict(snapshot) if snapshot is not None else None, False)
    if own_process:
        # Qt, the widgets and their Python wrappers are long-lived: keep them out of
        # the cyclic collector so decoding a big kernel reply does not pay for them.
        # Only in gradviz's own process: a library call must not freeze its host's heap.
        gc.collect()
        gc.freeze()
        window.freeze_heap = True
    _open_windows.add(window)
    window.destroyed.connect(lambda *_: _open_windows.discard(window))
    return app.exec()
