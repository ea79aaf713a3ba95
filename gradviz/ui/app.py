"""Start the window: ``gradviz``, ``gradviz window [file] [--demo name]``, ``gradviz open FILE``,
``gradviz.show(loss)``, ``python main.py``."""

from __future__ import annotations

import gc
import sys
from typing import Any

from PySide6.QtCore import QCoreApplication, Qt
from PySide6.QtGui import QColor, QFont, QPalette
from PySide6.QtWidgets import QApplication

from . import theme

__all__ = ["create_application", "run_app"]


def create_application(argv: list[str] | None = None) -> QApplication:
    """The QApplication with gradviz's names (for QSettings and AppDataLocation) and style."""
    QCoreApplication.setOrganizationName("gradviz")
    QCoreApplication.setApplicationName("gradviz")
    app = QApplication.instance()
    if app is None:
        app = QApplication(argv if argv is not None else sys.argv[:1])
    assert isinstance(app, QApplication)
    app.setStyle("Fusion")
    palette = app.palette()
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
    app.setPalette(palette)
    font = QFont("DejaVu Sans")
    font.setPointSize(9)
    app.setFont(font)
    app.setStyleSheet(
        f"QDockWidget {{ font-weight: 600; color: {theme.TEXT}; }}"
        "QDockWidget::title { background: #eef1f6; padding: 5px 8px;"
        " border-bottom: 1px solid #dfe3ea; }"
        "QTabBar::tab { padding: 4px 12px; background: #eef1f6; border: 1px solid #dfe3ea;"
        f" border-bottom: none; margin-right: 1px; color: {theme.MUTED_TEXT}; }}"
        f"QTabBar::tab:selected {{ background: #ffffff; color: {theme.TEXT}; }}"
        "QMainWindow::separator { background: #dfe3ea; width: 1px; height: 1px; }"
        "QToolTip { border: 1px solid #ced4da; padding: 4px; }"
    )
    return app


def run_app(
    file: str | None = None,
    demo: str | None = None,
    snapshot: dict[str, Any] | None = None,
) -> int:
    """Open the window and run Qt until it closes.

    On ``snapshot`` (a dict from ``gradviz.snapshot()``: read-only), else ``file``
    (a script, or a ``*.gradviz.json`` snapshot), else a ``demo``, else the
    last script or the first demo.
    """
    app = create_application()
    from .main_window import MainWindow

    window = MainWindow()
    window.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    window.show()
    window.open_initial(file=file, demo=demo, snapshot=snapshot)
    # Qt, the widgets and their Python wrappers are long-lived: keep them out of
    # the cyclic collector so decoding a big kernel reply does not pay for them.
    gc.collect()
    gc.freeze()
    return app.exec()
