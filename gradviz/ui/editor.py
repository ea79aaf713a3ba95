"""The script editor: line numbers, Python highlighting and statement markers.

The editor only shows what the window tells it: which statement runs next,
which statements ran, which one failed (red, with PyTorch's message as a
tooltip) and where a demo has a note. It knows nothing about the kernel.
"""

from __future__ import annotations

import keyword
import math
import re
from dataclasses import dataclass
from typing import cast

from PySide6.QtCore import QEvent, QPoint, QRect, QSize, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QFont,
    QHelpEvent,
    QKeyEvent,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QPalette,
    QPen,
    QPolygon,
    QResizeEvent,
    QSyntaxHighlighter,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
    QTextFormat,
    QTextOption,
)
from PySide6.QtWidgets import QApplication, QPlainTextEdit, QTextEdit, QToolTip, QWidget

from gradviz import i18n

from . import theme
from .i18n import translate
from .text import plain_tooltip

NEXT_BAND = "#fff4c2"
NEXT_MARK = "#f08c00"
RAN_BAND = "#eef8f0"
RAN_MARK = "#69db7c"
ERROR_BAND = "#ffe3e3"
ERROR_MARK = theme.BACKWARD
NOTE_MARK = "#7048e8"
#: the line a paused statement stops at (inside a loop body or a function)
PAUSED_BAND = "#ffe8a3"
PAUSED_MARK = "#e67700"
#: the top-level statement that is paused in the middle
RUNNING_BAND = "#fff9e0"
BREAKPOINT_MARK = "#e03131"
#: the light syntax colours; on a dark base each is lightened (see _syntax_colour)
SYNTAX = {
    "keyword": "#7c3aed", "builtin": "#0b7285", "torch": "#1864ab", "number": "#c2410c",
    "string": "#2b8a3e", "comment": "#8a93a3", "note": NOTE_MARK, "def": "#1c4f9c",
    "self": "#a61e4d",
}  # fmt: skip


def is_dark(palette: QPalette) -> bool:
    """Whether ``palette`` draws text on a dark base (the system's dark mode)."""
    return palette.color(QPalette.ColorRole.Base).lightness() < 128


def band_colour(colour: str, palette: QPalette) -> QColor:
    """A line band's colour over the editor's base: the light tint as it is, or on a dark
    base the mark's hue at low opacity, so marks read in both modes."""
    c = QColor(colour)
    if not is_dark(palette):
        return c
    dark = QColor()
    dark.setHsl(max(c.hslHue(), 0), min(255, c.hslSaturation()), 58)
    return dark


def _syntax_colour(colour: str, dark: bool) -> QColor:
    c = QColor(colour)
    return c.lighter(165) if dark else c


def _format(colour: QColor, *, bold: bool = False, italic: bool = False) -> QTextCharFormat:
    fmt = QTextCharFormat()
    fmt.setForeground(colour)
    if bold:
        fmt.setFontWeight(QFont.Weight.Bold)
    fmt.setFontItalic(italic)
    return fmt


class PythonHighlighter(QSyntaxHighlighter):
    """Keywords, builtins, numbers, strings (triple-quoted across lines), comments, notes."""

    _IN_TRIPLE_SINGLE = 1
    _IN_TRIPLE_DOUBLE = 2

    def __init__(self, document: QTextDocument, dark: bool = False):
        super().__init__(document)
        self.set_dark(dark, rehighlight=False)
        words = "|".join(keyword.kwlist)
        builtins = "|".join(
            [
                "print", "len", "range", "abs", "min", "max", "sum", "float", "int",
                "list", "tuple", "dict", "str", "bool", "isinstance", "enumerate", "zip",
                "round", "type", "super",
            ]
        )  # fmt: skip
        self.rules: list[tuple[re.Pattern[str], str]] = [
            (re.compile(rf"\b(?:{words})\b"), "keyword"),
            (re.compile(rf"\b(?:{builtins})\b(?=\s*\()"), "builtin"),
            (re.compile(r"\b(?:torch|numpy|np|math|nn|F|dev)\b"), "torch"),
            (re.compile(r"\b(?:self|ctx)\b"), "self"),
            (re.compile(r"\b(?:def|class)\s+(\w+)"), "def"),
            (
                re.compile(r"\b(?:0[xX][0-9a-fA-F_]+|\d[\d_]*\.?\d*(?:[eE][+-]?\d+)?j?|\.\d+)\b"),
                "number",
            ),
        ]
        self._string = re.compile(
            r"""[rbfRBF]{0,2}('''|\"\"\"|'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*")"""
        )

    def set_dark(self, dark: bool, rehighlight: bool = True) -> None:
        """Colours for a dark or a light base."""
        bold, italic = {"keyword", "def"}, {"comment", "note"}
        self.formats = {
            kind: _format(_syntax_colour(colour, dark), bold=kind in bold, italic=kind in italic)
            for kind, colour in SYNTAX.items()
        }
        if rehighlight:
            self.rehighlight()

    def highlightBlock(self, text: str) -> None:  # noqa: N802 - Qt override
        for pattern, name in self.rules:
            for found in pattern.finditer(text):
                group = 1 if name == "def" else 0
                self.setFormat(found.start(group), found.end(group) - found.start(group), self.formats[name])
        self.setCurrentBlockState(0)
        start = 0
        previous = self.previousBlockState()
        if previous in (self._IN_TRIPLE_SINGLE, self._IN_TRIPLE_DOUBLE):
            quote = "'''" if previous == self._IN_TRIPLE_SINGLE else '"""'
            end = text.find(quote)
            if end < 0:
                self.setFormat(0, len(text), self.formats["string"])
                self.setCurrentBlockState(previous)
                return
            self.setFormat(0, end + 3, self.formats["string"])
            start = end + 3
        pos = start
        while pos < len(text):
            hash_at = text.find("#", pos)
            m = self._string.search(text, pos)
            if hash_at >= 0 and (m is None or hash_at < m.start()):
                is_note = text[hash_at:].startswith("#>")
                self.setFormat(
                    hash_at,
                    len(text) - hash_at,
                    self.formats["note" if is_note else "comment"],
                )
                return
            if m is None:
                return
            token = m.group(1)
            if token in ("'''", '"""'):
                end = text.find(token, m.end())
                if end < 0:
                    self.setFormat(m.start(), len(text) - m.start(), self.formats["string"])
                    state = self._IN_TRIPLE_SINGLE if token == "'''" else self._IN_TRIPLE_DOUBLE
                    self.setCurrentBlockState(state)
                    return
                self.setFormat(m.start(), end + 3 - m.start(), self.formats["string"])
                pos = end + 3
            else:
                self.setFormat(m.start(), m.end() - m.start(), self.formats["string"])
                pos = m.end()


#: more changed lines than this (a run through a whole script) redraw the gutter whole
_GUTTER_PARTIAL_LINES = 40


@dataclass(frozen=True)
class _GutterMarks:
    """What the gutter marks: the next statement's lines, the error's, the paused line,
    the lines that ran, and the demo's notes."""

    next: tuple[int, int] | None
    error: tuple[int, int] | None
    paused: int | None
    executed: frozenset[int]
    notes: dict[int, str]

    def lines_differing(self, other: _GutterMarks) -> set[int]:
        """The lines (1-based) whose marks differ between ``self`` and ``other``."""
        lines: set[int] = set(self.executed ^ other.executed)
        for mine, theirs in ((self.next, other.next), (self.error, other.error)):
            if mine != theirs:
                for span in (mine, theirs):
                    if span is not None:
                        lines.update(range(span[0], span[1] + 1))
        if self.paused != other.paused:
            lines.update(n for n in (self.paused, other.paused) if n is not None)
            # the next statement's arrow is drawn only while nothing is paused
            lines.update(span[0] for span in (self.next, other.next) if span is not None)
        if self.notes != other.notes:
            lines.update(
                n for n in self.notes.keys() | other.notes.keys()
                if self.notes.get(n) != other.notes.get(n)
            )  # fmt: skip
        return lines


class _Gutter(QWidget):
    """Line numbers plus markers: ran, next, error, demo note."""

    def __init__(self, editor: CodeEditor):
        super().__init__(editor)
        self.editor = editor
        self.setMouseTracking(True)

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt override
        return QSize(self.editor.gutter_width(), 0)

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt override
        self.editor.paint_gutter(event)

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802 - Qt override
        if event.button() == Qt.MouseButton.LeftButton:
            line = self.editor.line_at_y(int(event.position().y()))
            if line is not None:
                self.editor.toggle_breakpoint(line)
                self.editor.gutter_clicked.emit(line)
                event.accept()
                return
        super().mousePressEvent(event)

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip:
            help_event = cast(QHelpEvent, event)  # what a ToolTip event is
            line = self.editor.line_at_y(help_event.pos().y())
            text = self.editor.gutter_tooltip(line) if line else ""
            if text:
                QToolTip.showText(help_event.globalPos(), plain_tooltip(text), self)
            else:
                QToolTip.hideText()
                event.ignore()
            return True
        return super().event(event)


class CodeEditor(QPlainTextEdit):
    """A QPlainTextEdit for tensor scripts, with the markers a stepping debugger needs."""

    #: the user clicked a line in the gutter (which toggles its breakpoint)
    gutter_clicked = Signal(int)
    #: the set of breakpoint lines changed (sorted line numbers)
    breakpoints_changed = Signal(list)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        # a monospaced font one point above the user's own size (their setting is kept)
        font = QFont("DejaVu Sans Mono")
        font.setStyleHint(QFont.StyleHint.Monospace)
        font.setFixedPitch(True)
        base = QApplication.font().pointSizeF()
        font.setPointSizeF((base if base > 0 else 9.0) + 1.0)
        self.setFont(font)
        # long lines (a lesson's #> notes) wrap at spaces at the editor's width rather
        # than run off; a single long token is never broken inside (it scrolls instead)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.setWordWrapMode(QTextOption.WrapMode.WordWrap)
        self.setTabStopDistance(self.fontMetrics().horizontalAdvance(" ") * 4)
        self.setPlaceholderText(
            translate("Editor", "# Type PyTorch code here, e.g.")
            + "\nx = torch.tensor(5.0, requires_grad=True)\ny = x ** 3\ny.backward()"
        )
        self.highlighter = PythonHighlighter(self.document(), is_dark(self.palette()))
        self._gutter = _Gutter(self)
        self._next: tuple[int, int] | None = None
        self._ran: tuple[int, int] | None = None
        self._executed: set[int] = set()
        self._error: tuple[int, int, str] | None = None
        self._notes: dict[int, str] = {}
        self._paused: int | None = None
        #: the marks the gutter shows now (see _gutter_marks_changed); None: redraw it all
        self._gutter_shows: _GutterMarks | None = None
        #: the breakpoint lines, from cursors anchored at their blocks' starts: a
        #: cursor moves with the text around it, so a breakpoint stays on its line of
        #: code when lines are added or removed above it
        self._breakpoints: set[int] = set()
        self._breakpoint_anchors: list[QTextCursor] = []
        self.document().contentsChanged.connect(self._follow_breakpoints)
        self.blockCountChanged.connect(self._update_gutter_width)
        self.updateRequest.connect(self._on_update_request)
        self._update_gutter_width()
        self.setFrameShape(QPlainTextEdit.Shape.NoFrame)

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt override
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange and hasattr(self, "_gutter"):
            self.highlighter.set_dark(is_dark(self.palette()))
            self._gutter_shows = None  # every mark's colour
            self._refresh()

    def show_line(self, line: int) -> None:
        """Scroll so ``line`` (1-based) is in view, a few lines from the top, without
        moving the text cursor; nothing happens when it is in view already."""
        block = self.document().findBlockByNumber(line - 1)
        if not block.isValid():
            return
        geo = self.blockBoundingGeometry(block).translated(self.contentOffset())
        if geo.top() >= 0 and geo.bottom() <= self.viewport().height():
            return
        self.verticalScrollBar().setValue(max(0, line - 1 - 3))

    # --- markers (set by the window) --------------------------------------------------

    def set_statement_marks(
        self,
        next_lines: tuple[int, int] | None,
        ran_lines: tuple[int, int] | None = None,
        executed: set[int] | None = None,
    ) -> None:
        """Mark the statement that runs next and the one that just ran (1-based, inclusive)."""
        self._next = next_lines
        self._ran = ran_lines
        self._executed = set(executed or ())
        self._refresh()

    def set_error(self, first: int, last: int, message: str) -> None:
        self._error = (first, max(first, last), message)
        self._refresh()

    def clear_error(self) -> None:
        if self._error is not None:
            self._error = None
            self._refresh()

    def set_paused_line(self, line: int | None) -> None:
        """Mark the line a paused statement stopped at (None: nothing is paused)."""
        if line != self._paused:
            self._paused = line
            self._refresh()
            if line is not None:
                self._reveal(line)

    @property
    def paused_line(self) -> int | None:
        return self._paused

    def toggle_breakpoint(self, line: int) -> None:
        """Set or clear a breakpoint on ``line`` (a click in the gutter, or F9)."""
        if line < 1 or line > self.blockCount():
            return
        self._set_breakpoint_lines(self._breakpoints ^ {line})

    def set_breakpoints(self, lines: set[int] | list[int]) -> None:
        self._set_breakpoint_lines(
            {int(n) for n in lines if 1 <= int(n) <= self.blockCount()}
        )

    def setPlainText(self, text: str) -> None:  # noqa: N802 (Qt API)
        """A whole new text (a file, a demo): its breakpoints start empty."""
        self._breakpoint_anchors = []
        super().setPlainText(text)
        if self._breakpoints:
            self._set_breakpoint_lines(set())

    def _set_breakpoint_lines(self, wanted: set[int]) -> None:
        anchors = []
        for line in sorted(wanted):
            cursor = QTextCursor(self.document().findBlockByNumber(line - 1))
            anchors.append(cursor)
        self._breakpoint_anchors = anchors
        if wanted != self._breakpoints:
            self._breakpoints = set(wanted)
            self._gutter.update()
            self.breakpoints_changed.emit(self.breakpoints())

    def _follow_breakpoints(self) -> None:
        """After an edit: each breakpoint's line is where its anchor went (two that
        meet, when the lines between them are deleted, become one)."""
        if not self._breakpoint_anchors:
            return
        lines = {c.blockNumber() + 1 for c in self._breakpoint_anchors}
        if lines != self._breakpoints:
            self._set_breakpoint_lines(lines)

    def breakpoints(self) -> list[int]:
        return sorted(self._breakpoints)

    def _reveal(self, line: int) -> None:
        """Scroll so ``line`` is visible, without moving the text cursor."""
        first = self.firstVisibleBlock().blockNumber() + 1
        shown = max(1, self.viewport().height() // max(1, self.fontMetrics().height()))
        if not first <= line < first + shown - 1:
            self.verticalScrollBar().setValue(max(0, line - 1 - shown // 3))

    def set_notes(self, notes: dict[int, str]) -> None:
        if notes != self._notes:
            self._notes = dict(notes)
            self._gutter_marks_changed()

    @property
    def next_lines(self) -> tuple[int, int] | None:
        return self._next

    @property
    def ran_lines(self) -> tuple[int, int] | None:
        return self._ran

    @property
    def error(self) -> tuple[int, int, str] | None:
        return self._error

    @property
    def notes(self) -> dict[int, str]:
        return dict(self._notes)

    def tooltip_at_line(self, line: int) -> str:
        """What hovering the text at ``line`` shows (the error message on the failing line)."""
        if self._error and self._error[0] <= line <= self._error[1]:
            return self._error[2]
        return ""

    def gutter_tooltip(self, line: int) -> str:
        parts = []
        if self._error and self._error[0] <= line <= self._error[1]:
            parts.append(self._error[2])
        if line in self._notes:
            parts.append(translate("Editor", "What to look at: ") + i18n.translate("Demos", self._notes[line]))
        if self._paused == line:
            parts.append(
                translate("Editor", "Paused here: this line runs next (Step over F10, Step into F11)")
            )
        elif self._next and self._next[0] <= line <= self._next[1]:
            parts.append(translate("Editor", "Runs next (Step, F10)"))
        if line in self._breakpoints:
            parts.append(translate("Editor", "Breakpoint: Run (F5) stops here (click to remove)"))
        return "\n\n".join(parts)

    def select_lines(self, first: int, last: int | None = None) -> None:
        """Put the cursor on ``first`` and select through the end of ``last``."""
        doc = self.document()
        start = doc.findBlockByNumber(max(first - 1, 0))
        end = doc.findBlockByNumber(max((last or first) - 1, 0))
        if not start.isValid():
            return
        cursor = QTextCursor(start)
        if end.isValid():
            cursor.setPosition(
                end.position() + max(end.length() - 1, 0), QTextCursor.MoveMode.KeepAnchor
            )
        self.setTextCursor(cursor)
        self.centerCursor()
        self.setFocus()

    def cursor_line(self) -> int:
        return self.textCursor().blockNumber() + 1

    def line_at_y(self, y: int) -> int | None:
        block = self.firstVisibleBlock()
        top = round(self.blockBoundingGeometry(block).translated(self.contentOffset()).top())
        while block.isValid():
            height = round(self.blockBoundingRect(block).height())
            if top <= y < top + height:
                return block.blockNumber() + 1
            top += height
            block = block.next()
        return None

    # --- painting ---------------------------------------------------------------------

    def _refresh(self) -> None:
        selections = []

        def band(first: int, last: int, colour: str, underline: bool = False) -> None:
            doc = self.document()
            for number in range(first - 1, last):
                block = doc.findBlockByNumber(number)
                if not block.isValid():
                    break
                sel = QTextEdit.ExtraSelection()
                sel.format.setBackground(band_colour(colour, self.palette()))
                sel.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
                sel.cursor = QTextCursor(block)
                selections.append(sel)
                if underline and block.length() > 1:
                    wavy = QTextEdit.ExtraSelection()
                    wavy.format.setUnderlineStyle(QTextCharFormat.UnderlineStyle.WaveUnderline)
                    wavy.format.setUnderlineColor(QColor(ERROR_MARK))
                    cur = QTextCursor(block)
                    text = block.text()
                    indent = len(text) - len(text.lstrip())
                    cur.setPosition(block.position() + indent)
                    cur.setPosition(block.position() + len(text), QTextCursor.MoveMode.KeepAnchor)
                    wavy.cursor = cur
                    selections.append(wavy)

        if self._ran and not (self._error and self._error[0] == self._ran[0]):
            band(self._ran[0], self._ran[1], RAN_BAND)
        if self._next:
            band(self._next[0], self._next[1], RUNNING_BAND if self._paused else NEXT_BAND)
        if self._paused:
            band(self._paused, self._paused, PAUSED_BAND)
        if self._error:
            band(self._error[0], self._error[1], ERROR_BAND, underline=True)
        self.setExtraSelections(selections)
        self._gutter_marks_changed()

    def _gutter_marks_changed(self) -> None:
        """Redraw the gutter's lines whose marks changed (a step moves the next-line
        arrow and marks one more line ran: two or three lines, not the whole strip,
        which cost a lesson step about a millisecond of painting); all of it when many
        changed or nothing was drawn yet."""
        now = _GutterMarks(
            self._next, self._error[:2] if self._error else None, self._paused,
            frozenset(self._executed), dict(self._notes),
        )  # fmt: skip
        before, self._gutter_shows = self._gutter_shows, now
        if before is None:
            self._gutter.update()
            return
        lines = now.lines_differing(before)
        if not lines:
            return
        first = self.firstVisibleBlock().blockNumber() + 1
        shown = [n for n in lines if n >= first]
        if len(shown) > _GUTTER_PARTIAL_LINES:
            self._gutter.update()
            return
        offset = self.contentOffset()
        doc = self.document()
        bottom = self._gutter.height()
        width = self._gutter.width()
        for line in sorted(shown):
            block = doc.findBlockByNumber(line - 1)
            if not block.isValid():
                continue
            geo = self.blockBoundingGeometry(block).translated(offset)
            if geo.top() > bottom:
                break
            top = math.floor(geo.top())
            self._gutter.update(0, top, width, math.ceil(geo.bottom()) - top + 1)

    def gutter_width(self) -> int:
        digits = max(2, len(str(max(1, self.blockCount()))))
        return 30 + self.fontMetrics().horizontalAdvance("9") * digits

    def _update_gutter_width(self, *_: object) -> None:
        self.setViewportMargins(self.gutter_width(), 0, 0, 0)

    def _on_update_request(self, rect: QRect, dy: int) -> None:
        if dy:
            self._gutter.scroll(0, dy)
        else:
            self._gutter.update(0, rect.y(), self._gutter.width(), rect.height())
        if rect.contains(self.viewport().rect()):
            self._update_gutter_width()

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        cr = self.contentsRect()
        self._gutter.setGeometry(QRect(cr.left(), cr.top(), self.gutter_width(), cr.height()))

    def paint_gutter(self, event: QPaintEvent) -> None:
        painter = QPainter(self._gutter)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.fillRect(event.rect(), self.palette().color(QPalette.ColorRole.Window))
        width = self._gutter.width()
        painter.setPen(self.palette().color(QPalette.ColorRole.Mid))
        # end to end (the paint clips it): a line ending inside a partial update would
        # leave its antialiased end lighter there
        painter.drawLine(width - 1, 0, width - 1, self._gutter.height())
        block = self.firstVisibleBlock()
        top = round(self.blockBoundingGeometry(block).translated(self.contentOffset()).top())
        fm = self.fontMetrics()
        painter.setFont(self.font())
        while block.isValid() and top <= event.rect().bottom():
            height = round(self.blockBoundingRect(block).height())
            line = block.blockNumber() + 1
            if block.isVisible() and top + height >= event.rect().top():
                is_next = bool(self._next and self._next[0] <= line <= self._next[1])
                is_error = bool(self._error and self._error[0] <= line <= self._error[1])
                if line in self._executed:
                    painter.fillRect(width - 4, top, 3, height, QColor(RAN_MARK))
                if is_error:
                    painter.fillRect(width - 4, top, 3, height, QColor(ERROR_MARK))
                role = QPalette.ColorRole.Text if (is_next or is_error) else QPalette.ColorRole.PlaceholderText
                painter.setPen(self.palette().color(role))
                painter.drawText(
                    0, top, width - 18, fm.height(), Qt.AlignmentFlag.AlignRight, str(line)
                )
                cy = top + fm.height() // 2
                if is_error:
                    painter.setPen(Qt.PenStyle.NoPen)
                    painter.setBrush(QColor(ERROR_MARK))
                    painter.drawEllipse(QPoint(width - 11, cy), 4, 4)
                elif line == self._paused:
                    painter.setPen(Qt.PenStyle.NoPen)
                    painter.setBrush(QColor(PAUSED_MARK))
                    x = width - 15
                    painter.drawPolygon(
                        QPolygon([QPoint(x, cy - 5), QPoint(x + 8, cy), QPoint(x, cy + 5)])
                    )
                elif is_next and self._next and line == self._next[0] and not self._paused:
                    painter.setPen(Qt.PenStyle.NoPen)
                    painter.setBrush(QColor(NEXT_MARK))
                    x = width - 15
                    painter.drawPolygon(
                        QPolygon([QPoint(x, cy - 5), QPoint(x + 8, cy), QPoint(x, cy + 5)])
                    )
                if line in self._breakpoints:
                    painter.setPen(QPen(QColor("#ffffff"), 1.2))
                    painter.setBrush(QColor(BREAKPOINT_MARK))
                    painter.drawEllipse(QPoint(8, cy), 5, 5)
                if line in self._notes:
                    painter.setPen(Qt.PenStyle.NoPen)
                    painter.setBrush(QColor(NOTE_MARK))
                    painter.drawEllipse(QPoint(6, cy), 3, 3)
            block = block.next()
            top += height
        painter.end()

    # --- editing conveniences -------------------------------------------------------------

    def viewportEvent(self, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if event.type() == QEvent.Type.ToolTip:
            help_event = cast(QHelpEvent, event)  # what a ToolTip event is
            line = self.cursorForPosition(help_event.pos()).blockNumber() + 1
            text = self.tooltip_at_line(line)
            if text:
                QToolTip.showText(help_event.globalPos(), plain_tooltip(text), self.viewport())
            else:
                QToolTip.hideText()
            return True
        return super().viewportEvent(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - Qt override
        key = event.key()
        if key == Qt.Key.Key_Tab and not event.modifiers():
            self.insertPlainText("    ")
            return
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and not event.modifiers():
            text = self.textCursor().block().text()
            before = text[: self.textCursor().positionInBlock()]
            indent = before[: len(before) - len(before.lstrip())]
            if before.rstrip().endswith(":"):
                indent += "    "
            super().keyPressEvent(event)
            self.insertPlainText(indent)
            return
        super().keyPressEvent(event)
