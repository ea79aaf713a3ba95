"""Text that a script, a kernel reply or a snapshot file names, shown as text in Qt.

Qt guesses whether a string is rich text (``Qt.mightBeRichText``) for
tooltips, QLabels left on ``Qt.AutoText`` and message boxes. A variable or
module name such as ``<img src="/dev/zero">`` then becomes markup, and Qt
reads the file it names. Every widget path that shows such a string goes
through this module:

* :func:`plain_tooltip` for every tooltip (widgets, actions, table and tree
  items, canvas items, ``QToolTip.showText``);
* :func:`esc` for every value interpolated into HTML the app builds itself
  (inspector, output, guide);
* :func:`plain_label` / :func:`message_box` for labels and dialogs;
* :func:`add_menu_action` / :func:`menu_text` / :func:`title_text` for menu
  entries and window titles (``&`` and ``[*]`` are special there, and an
  action's tooltip defaults to its text);
* :class:`SafeTextBrowser` for HTML panels: it never loads an external
  resource, so even a missed escape cannot make Qt read a file.
"""

from __future__ import annotations

import html
from typing import Any

from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QAction, QImage, QTextDocument
from PySide6.QtWidgets import QLabel, QMenu, QMessageBox, QTextBrowser, QWidget

__all__ = [
    "SafeTextBrowser",
    "SafeTextDocument",
    "add_menu_action",
    "esc",
    "menu_text",
    "message_box",
    "plain_label",
    "plain_tooltip",
    "title_text",
]


def esc(text: Any) -> str:
    """``text`` escaped for interpolation into HTML the app builds (content or attribute)."""
    return html.escape(str(text), quote=True)


def plain_tooltip(text: Any) -> str:
    """A tooltip that shows ``text`` literally, line breaks and spaces kept.

    The result is rich text on purpose: Qt then never guesses, and the
    escaped content can only ever be characters. Empty text stays empty (no
    tooltip).
    """
    if text is None:
        return ""
    text = str(text)
    if not text:
        return ""
    return f"<p style='white-space:pre-wrap'>{html.escape(text, quote=False)}</p>"


def plain_label(label: QLabel) -> QLabel:
    """Make ``label`` show its text as plain text whatever it contains; returns it."""
    label.setTextFormat(Qt.TextFormat.PlainText)
    return label


def menu_text(text: Any) -> str:
    """``text`` for a QAction/QMenu entry: ``&`` is not a mnemonic, a tab not a shortcut column."""
    return str(text).replace("&", "&&").replace("\t", " ")


def add_menu_action(menu: QMenu, text: Any, tooltip: Any = None) -> QAction:
    """Add an entry showing ``text`` to ``menu``; its tooltip (the text by default) is plain too.

    A QAction without a tooltip of its own uses its text as one, where Qt guesses markup.
    """
    action = menu.addAction(menu_text(text))
    action.setToolTip(plain_tooltip(text if tooltip is None else tooltip))
    return action


def title_text(text: Any) -> str:
    """``text`` for ``setWindowTitle``: a ``[*]`` in a file name is not the modified marker."""
    return str(text).replace("[*]", "[*][*]")


def message_box(
    parent: QWidget | None,
    icon: QMessageBox.Icon,
    title: str,
    text: str,
    buttons: QMessageBox.StandardButton = QMessageBox.StandardButton.Ok,
    default: QMessageBox.StandardButton = QMessageBox.StandardButton.NoButton,
    informative: str = "",
) -> QMessageBox:
    """A QMessageBox whose text (and informative text) is shown as plain text."""
    box = QMessageBox(parent)
    box.setIcon(icon)
    box.setWindowTitle(title_text(title))
    box.setTextFormat(Qt.TextFormat.PlainText)
    box.setText(str(text))
    if informative:
        box.setInformativeText(str(informative))
        # QMessageBox gives the informative label no format of its own: make it plain too.
        for label in box.findChildren(QLabel, "qt_msgbox_informativelabel"):
            plain_label(label)
    box.setStandardButtons(buttons)
    if default != QMessageBox.StandardButton.NoButton:
        box.setDefaultButton(default)
    return box


def _placeholder_image() -> QImage:
    image = QImage(1, 1, QImage.Format.Format_ARGB32)
    image.fill(Qt.GlobalColor.transparent)
    return image


class SafeTextDocument(QTextDocument):
    """A QTextDocument that loads no external resource (files, qrc, network).

    Returning nothing is not enough: Qt's image handler then opens the image
    path itself. An empty placeholder image stops that. ``data:`` URLs (no
    file behind them) are still decoded by Qt. ``refused`` keeps the last
    URLs refused (for diagnostics and tests).
    """

    MAX_REFUSED = 64

    def __init__(self, parent: Any = None):
        super().__init__(parent)
        self.setUndoRedoEnabled(False)  # as QTextBrowser sets up its own document
        self.refused: list[str] = []

    def loadResource(self, type: int, name: QUrl | str) -> Any:  # noqa: A002, N802 - Qt override
        url = name if isinstance(name, QUrl) else QUrl(name)  # Qt hands a QUrl
        if url.scheme().lower() == "data":
            return super().loadResource(type, url)
        if len(self.refused) < self.MAX_REFUSED:
            self.refused.append(url.toString())
        if int(getattr(type, "value", type)) == QTextDocument.ResourceType.ImageResource.value:
            return _placeholder_image()
        return None


class SafeTextBrowser(QTextBrowser):
    """A read-only HTML panel that follows no link and loads no external resource."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setDocument(SafeTextDocument(self))
        self.setOpenLinks(False)
        self.setOpenExternalLinks(False)

    #: the HTML last set, while the document still holds just that (see setHtml)
    _shown: str | None = None

    def setHtml(self, text: str) -> None:  # noqa: N802 - Qt override
        """Set ``text``, unless it is what the browser shows already (the same HTML, the
        document not changed since): a panel that renders every step then lays out and
        repaints nothing when its words did not change."""
        if text == self._shown:
            return
        super().setHtml(text)
        self._shown = text

    def _forget_shown(self) -> None:
        self._shown = None

    def setDocument(self, document: QTextDocument) -> None:  # noqa: N802 - Qt override
        if not isinstance(document, SafeTextDocument):
            raise TypeError("SafeTextBrowser only shows a SafeTextDocument")
        self._shown = None
        super().setDocument(document)
        # any other change (setPlainText, clear, an edit) ends what setHtml set
        document.contentsChanged.connect(self._forget_shown)

    def loadResource(self, type: int, name: QUrl | str) -> Any:  # noqa: A002, N802 - Qt override
        # The document refuses (and records) everything but data: URLs, which Qt decodes.
        return None


def elide_words(text: str, metrics: Any, width: int) -> str:
    """``text`` cut to ``width`` pixels at a word's end, with "…" (whole when it fits;
    one long word is cut inside it only when nothing else fits)."""
    text = " ".join(text.split())  # a status line is one line
    if width <= 0 or metrics.horizontalAdvance(text) <= width:
        return text
    ellipsis = "…"
    room = width - metrics.horizontalAdvance(ellipsis)
    cut = metrics.elidedText(text, Qt.TextElideMode.ElideRight, max(room, 0) + 1)
    cut = cut[:-1] if cut.endswith(ellipsis) else cut
    words = cut.rsplit(" ", 1)
    if len(words) == 2 and words[0] and not text[len(cut):len(cut) + 1].isspace():
        cut = words[0]  # the last word was cut inside: end before it
    return cut.rstrip(" ,;:") + ellipsis


class ElidedLabel(QLabel):
    """A one-line label that never forces its parent wider: text too long for it ends
    in "…" at a word's end and shows whole in the tooltip. ``text()`` is the whole text."""

    def __init__(self, text: str = "", parent: QWidget | None = None):
        super().__init__(parent)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setMinimumWidth(1)
        policy = self.sizePolicy()
        policy.setHorizontalPolicy(policy.Policy.Ignored)
        self.setSizePolicy(policy)
        self._full = ""
        self.setText(text)

    def setText(self, text: str) -> None:  # noqa: N802 - Qt override
        self._full = str(text)
        self._elide()

    def text(self) -> str:
        return self._full

    def shown_text(self) -> str:
        """What the label shows now (cut or whole)."""
        return super().text()

    def _elide(self) -> None:
        shown = elide_words(self._full, self.fontMetrics(), self.contentsRect().width())
        super().setText(shown)
        self.setToolTip(plain_tooltip(self._full) if shown != " ".join(self._full.split()) else "")

    def resizeEvent(self, event: Any) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        self._elide()
