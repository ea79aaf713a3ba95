"""The guide strip over the canvas: the lesson's title and what to do or know next.

It shows a :class:`~gradviz.app.guide.GuideTitle` and a
:class:`~gradviz.app.guide.GuideNote` (the words are decided in
:mod:`gradviz.app.guide`); every piece of text is escaped here, the only place
that turns them into rich text. Colours come from the palette (dark mode
included); only the tags carry colours of their own.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontMetrics, QPalette, QResizeEvent
from PySide6.QtWidgets import QFrame, QLabel, QVBoxLayout, QWidget

from gradviz.app.guide import GuideNote, GuideTitle

from . import theme
from .i18n import translate
from .text import esc, plain_tooltip

__all__ = ["TAG_COLOURS", "GuideStrip", "note_html"]

#: a tag's role (see gradviz.app.guide.Tag) -> its background colour
TAG_COLOURS = {
    # fixed, deep colours: white text reads on them in the light and the dark palette
    "timeline": "#1c6fd1",
    "paused": "#d9480f",
    "error": "#c92a2a",
    "stopped": "#c92a2a",
    "note": "#6741d9",
    "just_ran": "#5c6370",
    "next": "#d9480f",
    "end": "#2b8a3e",
    "snapshot": "#6741d9",
    "backward": "#c92a2a",
}


def note_html(note: GuideNote, error_colour: str = theme.BACKWARD) -> str:
    """The note as the strip's rich text: a coloured tag, then its parts, escaped."""
    out = []
    if note.tag is not None:
        colour = TAG_COLOURS.get(note.tag.role, "#5c6370")
        out.append(
            f"<span style='background:{colour}; color:#ffffff; font-weight:600;'>"
            f"&nbsp;{esc(note.tag.text)}&nbsp;</span>&nbsp; "
        )
    for kind, text in note.parts:
        if kind == "code":
            out.append(f"<code>{esc(text)}</code>")
        elif kind == "bold":
            out.append(f"<b>{esc(text)}</b>")
        elif kind == "error":
            out.append(f"<br><span style='color:{error_colour}'>{esc(text)}</span>")
        else:
            out.append(esc(text))
    return "".join(out)


class GuideStrip(QFrame):
    """Two wrapped lines of guidance; ``title`` and ``note`` are its labels."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("guide")
        self.setAccessibleName(translate("Guide", "Guide"))
        self.setAutoFillBackground(True)
        self.setBackgroundRole(QPalette.ColorRole.AlternateBase)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.title = QLabel()
        self.title.setObjectName("guideTitle")
        self.title.setAccessibleName(translate("Guide", "Lesson"))
        self.note = QLabel()
        self.note.setObjectName("guideNote")
        self.note.setAccessibleName(translate("Guide", "What happens next"))
        for label in (self.title, self.note):
            label.setTextFormat(Qt.TextFormat.RichText)
            label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # the title keeps to one line (its subtitle elided, whole in the tooltip), so on a
        # small screen the canvas below keeps its room; the note wraps
        self.note.setWordWrap(True)
        self.title.setMinimumWidth(1)
        self._title = GuideTitle("")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(12, 6, 12, 7)
        layout.setSpacing(2)
        layout.addWidget(self.title)
        layout.addWidget(self.note)
        self.current: GuideNote | None = None

    def show_title(self, title: GuideTitle) -> None:
        self._title = title
        self.title.setToolTip(
            plain_tooltip(f"{title.title} — {title.subtitle}" if title.subtitle else title.title)
        )
        self._render_title()

    def _render_title(self) -> None:
        title = self._title
        bold = self.title.font()
        bold.setBold(True)
        room = self.contentsRect().width() - 26 - QFontMetrics(bold).horizontalAdvance(title.title)
        text = f"<b>{esc(title.title)}</b>"
        if title.subtitle and room > 40:
            muted = self.palette().color(QPalette.ColorRole.PlaceholderText).name()
            sub = self.title.fontMetrics().elidedText(
                f" — {title.subtitle}", Qt.TextElideMode.ElideRight, room
            )
            text += f"<span style='color:{muted}'>{esc(sub)}</span>"
        self.title.setText(text)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        self._render_title()

    def show_note(self, note: GuideNote) -> None:
        self.current = note
        self.note.setText(note_html(note))
        self.note.setAccessibleDescription(note.plain())
