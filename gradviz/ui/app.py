"""Start the window: ``gradviz``, ``gradviz window [file] [--demo name]``, ``gradviz open FILE``,
``gradviz.show(loss)``, ``python main.py``.

gradviz styles only what it owns. When gradviz makes the QApplication (the
``gradviz`` command, ``gradviz.show()`` from a plain script) it sets the
application's style, palette, font and style sheet. Inside someone else's Qt
application (IPython's ``%gui qt``, napari) it leaves the application alone and
dresses its own window instead, and never touches the host's heap.
"""

from __future__ import annotations

import gc
import sys
from typing import Any

from PySide6.QtCore import QCoreApplication, Qt
from PySide6.QtGui import QColor, QFont, QPalette
from PySide6.QtWidgets import QApplication, QStyleFactory, QWidget

from . import theme

__all__ = ["create_application", "host_application", "open_window", "run_app", "style_window"]

#: set on a QApplication that gradviz made (and so may style)
_OWNED = "gradviz_owned"
#: windows opened inside a host application: kept alive until they close
_open_windows: set[Any] = set()

_STYLE_SHEET = (
    f"QDockWidget {{ font-weight: 600; color: {theme.TEXT}; }}"
    "QDockWidget::title { background: #eef1f6; padding: 5px 8px;"
    " border-bottom: 1px solid #dfe3ea; }"
    "QTabBar::tab { padding: 4px 12px; background: #eef1f6; border: 1px solid #dfe3ea;"
    f" border-bottom: none; margin-right: 1px; color: {theme.MUTED_TEXT}; }}"
    f"QTabBar::tab:selected {{ background: #ffffff; color: {theme.TEXT}; }}"
    "QMainWindow::separator { background: #dfe3ea; width: 1px; height: 1px; }"
    "QToolTip { border: 1px solid #ced4da; padding: 4px; }"
)


def _palette(base: QPalette) -> QPalette:
    palette = QPalette(base)
    palette.setColor(QPalette.ColorRole.Window, QColor("#f4f6fa"))
    palette.setColor(QPalette.ColorRole.Base, QColor("#ffffff"))
    palette.setColor(QPalette.ColorRole.AlternateBase, QColor("#f8f9fb"))
    palette.setColor(QPalette.ColorRole.Text, QColor(theme.TEXT))
    palette.setColor(QPalette.ColorRole.WindowText, QColor(theme.TEXT))
    palette.setColor(QPalette.ColorRole.ButtonText, QColor(theme.TEXT))
    palette.setColor(QPalette.ColorRole.Button, QColor("#ffffff"))
    palette.setColor(QPalette.ColorRole.Highlight, QColor(theme.SELECTION))
    palette.setColor(QPalette.ColorRole.ToolTipBase, QColor("#ffffff"))
    palette.setColor(QPalette.ColorRole.ToolTipText, QColor(theme.TEXT))
    return palette


def _font() -> QFont:
    font = QFont("DejaVu Sans")
    font.setPointSize(9)
    return font


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
    app.setFont(_font())
    app.setStyleSheet(_STYLE_SHEET)
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
    window.setFont(_font())
    window.setStyleSheet(_STYLE_SHEET)


def _main_window(
    file: str | None, demo: str | None, snapshot: dict[str, Any] | None, hosted: bool
) -> Any:
    from .main_window import MainWindow

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
