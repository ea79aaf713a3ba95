"""The debugger strip over the canvas: where a paused statement stands.

While a statement is paused inside a loop body or a script function, the strip
says which line runs next, which iteration of the innermost loop this is
("iteration 2 of 3") and the call stack, innermost frame first
(``forward (Net) ← line 23``). The pause arrives in the kernel's state as a
plain dict; :class:`~gradviz.app.models.PauseInfo` (``PauseView`` here) decodes it
once, at the border.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QSizePolicy, QWidget

from ..app.models import AppState, FrameInfo, PauseInfo
from . import theme
from .i18n import translate

#: the typed pause lives in gradviz.app.models; these names stay for the window's imports
PauseView = PauseInfo
Frame = FrameInfo

__all__ = ["DebugStrip", "Frame", "PauseView"]


class DebugStrip(QFrame):
    """A one-line strip: ``Paused · line 12 · iteration 1 of 3 · forward (Net) ← line 23``."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("debugStrip")
        self.setAccessibleName(translate("DebugStrip", "Debugger: where the paused statement stands"))
        self.setStyleSheet(
            "QFrame#debugStrip { background: rgba(255, 200, 0, 40); border: none;"
            " border-bottom: 1px solid rgba(230, 119, 0, 90); }"
        )
        self.where_label = QLabel()
        self.where_label.setObjectName("debugWhere")
        self.where_label.setAccessibleName(translate("DebugStrip", "Paused at line"))
        self.where_label.setTextFormat(Qt.TextFormat.RichText)
        self.iteration_label = QLabel()
        self.iteration_label.setObjectName("debugIteration")
        self.iteration_label.setAccessibleName(translate("DebugStrip", "Loop iteration"))
        self.iteration_label.setTextFormat(Qt.TextFormat.PlainText)
        self.iteration_label.setStyleSheet(
            "QLabel { background: #e67700; color: #ffffff; font-weight: 600;"
            " border-radius: 3px; padding: 1px 6px; }"
        )
        self.stack_label = QLabel()
        self.stack_label.setObjectName("debugStack")
        self.stack_label.setAccessibleName(translate("DebugStrip", "Call stack"))
        self.stack_label.setTextFormat(Qt.TextFormat.PlainText)
        self.stack_label.setStyleSheet(f"color: {theme.TEXT};")
        self.stack_label.setToolTip(
            translate(
                "DebugStrip",
                "Call stack, innermost frame first: function ← the line that called it",
            )
        )
        # the strip must not widen the canvas column (a narrow window squeezes the editor):
        # the labels give up their width and are clipped instead
        for label in (self.where_label, self.stack_label):
            label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.where_label.setMinimumWidth(120)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(12, 4, 12, 4)
        layout.setSpacing(10)
        layout.addWidget(self.where_label, 2)
        layout.addWidget(self.iteration_label)
        layout.addWidget(self.stack_label, 3)
        self.pause: PauseInfo | None = None
        self.hide()

    def set_state(self, state: AppState | Mapping[str, Any] | None) -> None:
        """Show the pause of ``state`` (typed or the wire dict); hidden when not paused."""
        self.set_pause(AppState.of(state).paused)

    def set_pause(self, pause: PauseInfo | Mapping[str, Any] | None) -> None:
        """Show ``pause`` (typed, or the kernel's ``paused`` dict); None hides the strip."""
        pause = PauseInfo.of(pause)
        self.pause = pause
        if pause is None:
            self.hide()
            return
        iteration, stack = iteration_text(pause), stack_text(pause)
        self.setToolTip(
            translate("DebugStrip", "Paused before line {line}").format(line=pause.line)
            + (f", {iteration}" if iteration else "")
            + ("\n" + translate("DebugStrip", "call stack: {stack}").format(stack=stack)
               if stack else "")
        )  # fmt: skip
        self.where_label.setText(
            translate("DebugStrip", "<b style='color:#e67700'>Paused</b>&nbsp; at line {line}")
            .format(line=pause.line)
        )  # fmt: skip
        self.iteration_label.setText(iteration)
        self.iteration_label.setVisible(bool(iteration))
        self.stack_label.setText(
            translate("DebugStrip", "call stack: {stack}").format(stack=stack) if stack else ""
        )
        self.show()

    def iteration_text(self) -> str:
        return self.iteration_label.text() if self.pause is not None else ""

    def stack_text(self) -> str:
        return stack_text(self.pause) if self.pause is not None else ""


def iteration_text(pause: PauseInfo) -> str:
    """``iteration 2 of 3`` (``iteration 4`` when the loop's length is unknown), translated
    (the window's words for :attr:`PauseInfo.iteration_text`)."""
    if pause.iteration is None:
        return ""
    if pause.iterations is None:
        return translate("DebugStrip", "iteration {n}").format(n=pause.iteration)
    return translate("DebugStrip", "iteration {n} of {total}").format(
        n=pause.iteration, total=pause.iterations
    )


def stack_text(pause: PauseInfo) -> str:
    """Innermost frame first: ``forward (Net) ← line 23``, translated."""
    return "   ·   ".join(
        translate("DebugStrip", "{function} ← line {line}").format(
            function=f.title, line=f.call_line
        )
        for f in reversed(pause.frames)
    )
