"""The restricted-mode banner over the editor: why this script is sandboxed, and
the one question (trust this folder's authors?), as VS Code's Workspace Trust asks it."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from gradviz.app.trust import banner_text, banner_tip

from .i18n import translate


class TrustBanner(QFrame):
    """Shown while a script from a folder never trusted runs in restricted mode."""

    #: the user trusts the authors of the scripts in the banner's folder
    trust_requested = Signal(object)
    #: the user keeps the script restricted (the banner goes; the folder stays untrusted)
    kept_restricted = Signal(object)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("trustBanner")
        self.setAccessibleName(translate("Trust", "Restricted mode"))
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setStyleSheet(
            "#trustBanner { background: #7a4b00; border: none; }"
            "#trustBanner QLabel { color: white; }"
        )
        self.folder: Path | None = None
        # the question on top, the answers under it: fits an editor 300 px wide
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 6, 10, 6)
        layout.setSpacing(4)
        self.label = QLabel()
        self.label.setWordWrap(True)
        self.label.setTextFormat(Qt.TextFormat.PlainText)
        layout.addWidget(self.label)
        buttons = QHBoxLayout()
        buttons.setContentsMargins(0, 0, 0, 0)
        buttons.addStretch(1)
        layout.addLayout(buttons)
        self.trust_button = QPushButton(translate("Trust", "Trust folder"))
        self.trust_button.setObjectName("trustFolderButton")
        self.trust_button.setToolTip(
            translate("Trust", "Run the scripts of this folder as Python from now on (remembered)")
        )
        self.keep_button = QPushButton(translate("Trust", "Keep restricted"))
        self.keep_button.setObjectName("keepRestrictedButton")
        self.keep_button.setToolTip(translate("Trust", "Keep this script in gradviz's sandbox"))
        buttons.addWidget(self.trust_button)
        buttons.addWidget(self.keep_button)
        self.trust_button.clicked.connect(lambda: self.trust_requested.emit(self.folder))
        self.keep_button.clicked.connect(self._on_keep)
        self.hide()

    def ask(self, folder: Path) -> None:
        self.folder = folder
        self.label.setText(banner_text(folder))
        self.setToolTip(banner_tip(folder))
        self.show()

    def _on_keep(self) -> None:
        self.hide()
        self.kept_restricted.emit(self.folder)
