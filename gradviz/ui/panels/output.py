"""The Output panel: print output, values, warnings and errors, each with its line."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from PySide6.QtGui import QFont, QResizeEvent, QTextOption
from PySide6.QtWidgets import QVBoxLayout, QWidget

from ...app.models import AppState, readable_addresses
from .. import theme
from ..i18n import translate
from ..text import SafeTextBrowser
from ._common import ERROR_TEXT, WARNING_TEXT, _esc


@dataclass
class OutputEntry:
    line: int | None
    kind: str  # "output", "value", "warning", "error", "note"
    text: str
    detail: str = ""
    #: the statement (index) that wrote it; None for the window's notes
    statement: int | None = None

    def plain(self) -> str:
        prefix = f"[line {self.line}] " if self.line else ""
        return prefix + self.text + (f"\n{self.detail}" if self.detail else "")


class OutputPanel(QWidget):
    """print output, expression values, warnings and errors, each with its line number.

    Text wraps at the panel's width (a long path or URL breaks anywhere); a reply that
    ran statements scrolls to the first entry of the last one that wrote something, so
    its output starts in view (not the end of a long warning)."""

    #: under this width the line number goes inline rather than in its own column
    NARROW = 380

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setAccessibleName(translate("Panels", "Output"))
        self.browser = SafeTextBrowser()
        self.browser.setObjectName("outputBrowser")
        self.browser.setAccessibleName(
            translate("Panels", "Output: print output, values, warnings and errors")
        )
        font = QFont("DejaVu Sans Mono")
        font.setStyleHint(QFont.StyleHint.Monospace)
        font.setPointSize(9)
        self.browser.setFont(font)
        self.browser.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        self.browser.setStyleSheet(
            "QTextBrowser { background: palette(base); border: none; padding: 2px; }"
        )
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.browser)
        self._entries: list[OutputEntry] = []
        self._notes: list[OutputEntry] = []
        #: streamed print output of the running statement (add_live)
        self._live: list[OutputEntry] = []
        #: the entry to scroll to after the next render (None: the end)
        self._focus: int | None = None
        self._shown_key: Any = None
        self._narrow: bool | None = None

    def entries(self) -> list[OutputEntry]:
        return list(self._entries) + list(self._live) + list(self._notes)

    def text(self) -> str:
        return self.browser.toPlainText()

    def add_note(self, text: str, line: int | None = None, kind: str = "note") -> None:
        """A message from the window (stopped, restarted); kept until the next reset/load."""
        self._notes.append(OutputEntry(line, kind, text))
        self._focus = None
        self._render()

    #: characters of streamed output the panel shows before the statement's result
    MAX_LIVE = 200_000

    def add_live(self, text: str, line: int | None = None) -> None:
        """print output of the statement still running, as it is written; the
        statement's result replaces it (set_state)."""
        text = readable_addresses(text)
        live = self._live
        if live and live[-1].line == line and live[-1].kind == "output":
            merged = (live[-1].text + text)[-self.MAX_LIVE:]
            live[-1] = OutputEntry(line, "output", merged)
        else:
            live.append(OutputEntry(line, "output", text[-self.MAX_LIVE:]))
        while sum(len(e.text) for e in live) > self.MAX_LIVE and len(live) > 1:
            live.pop(0)
        self._focus = None
        self._render()

    def clear_notes(self) -> None:
        self._notes = []
        self._render()

    def set_state(self, state: AppState | Mapping[str, Any] | None) -> None:
        st = AppState.of(state)
        key = (st.results, st.parse_error, st.new_results)
        if key == self._shown_key:
            return  # nothing new to say: the reader's scroll position stands
        before = self._shown_key[0] if self._shown_key is not None else ()
        self._shown_key = key
        if st.new_results or len(st.results) < len(before):
            self._live = []  # the statement ended (or went back): its result carries it
        entries: list[OutputEntry] = []
        pe = st.parse_error
        if pe is not None:
            entries.append(
                OutputEntry(
                    pe.line,
                    "error",
                    f"{pe.type or 'SyntaxError'}: {pe.message}",
                    translate("Panels", "Nothing ran: fix the script and press Step again."),
                )
            )
        for r in st.results:
            line = r.line
            # an address the kernel hid reads as left out on purpose, not as 0x000000000000
            out = readable_addresses(r.output.rstrip("\n"))
            if out:
                entries.append(OutputEntry(line, "output", out, statement=r.index))
            if r.value is not None:
                entries.append(OutputEntry(
                    line, "value", f"= {readable_addresses(r.value)}", statement=r.index
                ))
            for w in r.warnings:
                entries.append(OutputEntry(line, "warning", w, statement=r.index))
            err = r.error
            if err is not None:
                why = err.explanation
                entries.append(
                    OutputEntry(
                        err.line or line,
                        "error",
                        f"{err.type}: {err.message}",
                        translate("Panels", "Why: {why}").format(why=translate("Explain", why))
                        if why
                        else "",
                        statement=r.index,
                    )
                )
        self._entries = entries
        # scroll to where the last statement this reply ran starts writing
        self._focus = None
        for r in reversed(st.new_results):
            first = next((i for i, e in enumerate(entries) if e.statement == r.index), None)
            if first is not None:
                self._focus = first
                break
        if self._focus is None and pe is not None:
            self._focus = 0
        self._render()

    def _render(self) -> None:
        colours = {
            "output": theme.TEXT,
            "value": "#3b82d6",  # reads on a light and a dark base
            "warning": WARNING_TEXT,
            "error": ERROR_TEXT,
            "note": theme.MUTED_TEXT,
        }
        narrow = self._is_narrow()
        self._narrow = narrow
        blocks = []
        for e in self.entries():
            prefix = _esc(
                translate("Panels", "line {line}").format(line=e.line) if e.line else "gradviz"
            )
            tag = {
                "warning": translate("Panels", "warning"),
                "error": translate("Panels", "error"),
            }.get(e.kind, "")
            body = _esc(e.text).replace("\n", "<br>")
            if e.kind == "note":
                body = f"<i>{body}</i>"
            if tag:
                body = f"<b>{tag}:</b> {body}"
            detail = (
                f"<br><span style='color:{theme.TEXT}'>{_esc(e.detail)}</span>" if e.detail else ""
            )
            colour = colours.get(e.kind, theme.TEXT)
            # one paragraph (narrow) or one table (wide) per entry: _entry_top finds it
            if narrow:
                blocks.append(
                    f"<p style='margin:0 0 3px 0'>"
                    f"<span style='color:{theme.HINT_TEXT}'>{prefix}</span> "
                    f"<span style='color:{colour}'>{body}{detail}</span></p>"
                )
            else:
                blocks.append(
                    f"<table cellspacing=0 cellpadding=1 width='100%'><tr>"
                    f"<td width=56 style='color:{theme.HINT_TEXT}'>{prefix}</td>"
                    f"<td style='color:{colour}'>{body}{detail}</td>"
                    "</tr></table>"
                )
        if not blocks:
            blocks.append(
                f"<span style='color:{theme.HINT_TEXT}'>"
                + _esc(
                    translate(
                        "Panels",
                        "print() output, expression values, warnings and errors appear here, "
                        "each with its line number.",
                    )
                )
                + "</span>"
            )
        self.browser.setHtml("".join(blocks))
        self._scroll()

    def _scroll(self) -> None:
        bar = self.browser.verticalScrollBar()
        top = None if self._focus is None else self._entry_top(self._focus)
        bar.setValue(bar.maximum() if top is None else min(top, bar.maximum()))

    def _entry_top(self, index: int) -> int | None:
        """Where entry ``index`` starts in the document (pixels), as the last render laid
        it out: its paragraph when narrow, its table when wide."""
        doc = self.browser.document()
        layout = doc.documentLayout()
        if self._narrow:
            block = doc.findBlockByNumber(index)
            return int(layout.blockBoundingRect(block).top()) if block.isValid() else None
        frames = doc.rootFrame().childFrames()
        if not 0 <= index < len(frames):
            return None
        return int(layout.frameBoundingRect(frames[index]).top())

    def _is_narrow(self) -> bool:
        return self.browser.viewport().width() < self.NARROW

    def focus_entry(self) -> int | None:
        """The entry the last render scrolled to (None: the end)."""
        return self._focus

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        if self._narrow is not None and self._is_narrow() != self._narrow:
            self._render()
        elif self._focus is not None:
            self._scroll()
