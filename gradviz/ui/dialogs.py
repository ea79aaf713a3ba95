"""The window's dialogs: unsaved changes, restore an autosave, errors, shortcuts, about.

Module-level functions, so tests replace the modal ones (``monkeypatch.setattr``)
and every caller gets the same wording. Each modal dialog gives the keyboard back
to the window when it closes (:func:`_return_focus`): window shortcuts only fire
in the active window, and on some window managers the window was left inactive
after a Discard, so every shortcut stopped working until a menu was opened.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QMessageBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from .i18n import translate
from .text import message_box

__all__ = [
    "ask_restore_autosave",
    "ask_unsaved_changes",
    "language_changed",
    "show_about",
    "show_error",
    "show_shortcuts",
]


def _return_focus(parent: QWidget, focused: QWidget | None) -> None:
    """Make ``parent``'s window active again and give the focus back to ``focused``."""
    window = parent.window()
    window.raise_()
    window.activateWindow()
    if focused is not None and focused.isVisible() and focused.window() is window:
        focused.setFocus(Qt.FocusReason.ActiveWindowFocusReason)


def _exec(parent: QWidget, box: QMessageBox) -> QMessageBox.StandardButton:
    focused = parent.window().focusWidget()
    answer = QMessageBox.StandardButton(box.exec())
    box.deleteLater()
    _return_focus(parent, focused)
    return answer


def ask_unsaved_changes(parent: QWidget, name: str) -> QMessageBox.StandardButton:
    """Save / Discard / Cancel for a modified script (monkeypatched in tests)."""
    box = message_box(
        parent,
        QMessageBox.Icon.Warning,
        translate("Dialogs", "Unsaved changes"),
        translate("Dialogs", "{name} has changes that are not saved.").format(name=name),
        QMessageBox.StandardButton.Save
        | QMessageBox.StandardButton.Discard
        | QMessageBox.StandardButton.Cancel,
        QMessageBox.StandardButton.Save,
        informative=translate("Dialogs", "Save them before going on?"),
    )
    return _exec(parent, box)


def ask_restore_autosave(parent: QWidget, name: str, when: str) -> bool:
    """Offer the text autosaved before gradviz last stopped (monkeypatched in tests)."""
    box = message_box(
        parent,
        QMessageBox.Icon.Question,
        translate("Dialogs", "Restore unsaved work?"),
        translate(
            "Dialogs",
            "gradviz stopped before {name} could be saved.\n"
            "An autosaved copy from {when} exists. Restore it?",
        ).format(name=name, when=when),
        QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
        QMessageBox.StandardButton.Yes,
    )
    return _exec(parent, box) == QMessageBox.StandardButton.Yes


def show_error(parent: QWidget, title: str, text: str) -> None:
    """A modal error message, shown as plain text (monkeypatched in tests)."""
    box = message_box(parent, QMessageBox.Icon.Warning, title, text)
    _exec(parent, box)


def show_shortcuts(parent: QWidget, rows: list[tuple[str, str]]) -> QDialog:
    """The Help › Keyboard shortcuts table (non-modal; it deletes itself when closed)."""
    dialog = QDialog(parent)
    dialog.setWindowTitle(translate("Dialogs", "Keyboard shortcuts"))
    table = QTableWidget(len(rows), 2)
    table.setHorizontalHeaderLabels([translate("Dialogs", "Action"), translate("Dialogs", "Keys")])
    table.verticalHeader().setVisible(False)
    table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
    for row, (what, keys) in enumerate(rows):
        table.setItem(row, 0, QTableWidgetItem(what))
        table.setItem(row, 1, QTableWidgetItem(keys))
    table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
    table.resizeColumnToContents(1)
    # a long row (Korean is wider) wraps onto a second line rather than being cut off
    table.setWordWrap(True)
    table.horizontalHeader().sectionResized.connect(lambda *_: table.resizeRowsToContents())
    buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
    buttons.rejected.connect(dialog.reject)
    layout = QVBoxLayout(dialog)
    layout.addWidget(table)
    layout.addWidget(buttons)
    dialog.resize(680, 460)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.open()
    return dialog


def show_about(parent: QWidget) -> None:
    QMessageBox.about(
        parent,
        translate("Dialogs", "About gradviz"),
        translate(
            "Dialogs",
            "<b>gradviz</b> — step through PyTorch autograd.<br><br>"
            "Type tensor code, step forward statement by statement, then step the backward "
            "pass node by node and watch gradients flow and accumulate in the real autograd "
            "graph. Scripts run in a separate, sandboxed kernel process.",
        ),
    )


def language_changed(parent: QWidget, chosen: str, env: str | None) -> None:
    """View › Language picked a language: it applies when gradviz starts again
    (monkeypatched in tests)."""
    text = translate("Dialogs", "gradviz will speak {language} the next time it starts.").format(
        language=chosen
    )
    if env:
        text += "\n\n" + translate(
            "Dialogs", "GRADVIZ_LANG is set, so {language} is used while it stays set."
        ).format(language=env)
    box = message_box(parent, QMessageBox.Icon.Information, translate("Dialogs", "Language"), text)
    _exec(parent, box)
