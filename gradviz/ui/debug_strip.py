"""The debugger strip over the canvas: where a paused statement stands.

While a statement is paused inside a loop body or a script function, the strip
says which line runs next, which iteration of the innermost loop this is
("iteration 2 of 3") and the call stack, innermost frame first
(``forward (Net) ← line 23``). The pause arrives in the kernel's state as a
plain dict; :class:`PauseView` decodes it once, here at the border.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QSizePolicy, QWidget

from . import theme


@dataclass(frozen=True)
class Frame:
    """A script function being run: ``Net.forward`` called from ``call_line``."""

    name: str
    call_line: int

    @property
    def title(self) -> str:
        """``forward (Net)`` for a method, ``train`` for a plain function."""
        owner, _, method = self.name.rpartition(".")
        return f"{method} ({owner})" if owner else self.name


@dataclass(frozen=True)
class PauseView:
    """Where a paused statement stands (the kernel's ``paused``)."""

    statement: int
    line: int
    depth: int
    iteration: int | None
    iterations: int | None
    #: outermost first, as the kernel sends them
    frames: tuple[Frame, ...] = field(default_factory=tuple)

    @classmethod
    def from_state(cls, state: dict[str, Any] | None) -> PauseView | None:
        raw = (state or {}).get("paused")
        if not isinstance(raw, dict):
            return None
        frames = tuple(
            Frame(str(f["name"]), int(f["call_line"]))
            for f in raw.get("frames") or []
            if isinstance(f, dict) and "name" in f and "call_line" in f
        )
        iteration = raw.get("iteration")
        iterations = raw.get("iterations")
        return cls(
            statement=int(raw.get("statement", -1)),
            line=int(raw["line"]),
            depth=int(raw.get("depth", 0)),
            iteration=int(iteration) if isinstance(iteration, int) else None,
            iterations=int(iterations) if isinstance(iterations, int) else None,
            frames=frames,
        )

    @property
    def iteration_text(self) -> str:
        """``iteration 2 of 3`` (``iteration 4`` when the loop's length is unknown)."""
        if self.iteration is None:
            return ""
        if self.iterations is None:
            return f"iteration {self.iteration}"
        return f"iteration {self.iteration} of {self.iterations}"

    @property
    def stack_text(self) -> str:
        """Innermost frame first: ``forward (Net) ← line 23``; empty at the top level."""
        return "   ·   ".join(f"{f.title} ← line {f.call_line}" for f in reversed(self.frames))

    @property
    def frame(self) -> str | None:
        """The innermost frame's qualified name (``Net.forward``), None in the script body."""
        return self.frames[-1].name if self.frames else None


class DebugStrip(QFrame):
    """A one-line strip: ``Paused · line 12 · iteration 1 of 3 · forward (Net) ← line 23``."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("debugStrip")
        self.setStyleSheet(
            "QFrame#debugStrip { background: #fff9e0; border: none;"
            " border-bottom: 1px solid #ffe8a3; }"
        )
        self.where_label = QLabel()
        self.where_label.setObjectName("debugWhere")
        self.where_label.setTextFormat(Qt.TextFormat.RichText)
        self.iteration_label = QLabel()
        self.iteration_label.setObjectName("debugIteration")
        self.iteration_label.setTextFormat(Qt.TextFormat.PlainText)
        self.iteration_label.setStyleSheet(
            "QLabel { background: #e67700; color: #ffffff; font-weight: 600;"
            " border-radius: 3px; padding: 1px 6px; }"
        )
        self.stack_label = QLabel()
        self.stack_label.setObjectName("debugStack")
        self.stack_label.setTextFormat(Qt.TextFormat.PlainText)
        self.stack_label.setStyleSheet(f"color: {theme.TEXT};")
        self.stack_label.setToolTip("Call stack, innermost frame first: function ← the line that called it")
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
        self.pause: PauseView | None = None
        self.hide()

    def set_pause(self, pause: PauseView | None) -> None:
        self.pause = pause
        if pause is None:
            self.hide()
            return
        self.setToolTip(
            f"Paused before line {pause.line}"
            + (f", {pause.iteration_text}" if pause.iteration_text else "")
            + (f"\ncall stack: {pause.stack_text}" if pause.stack_text else "")
        )
        self.where_label.setText(
            f"<b style='color:#e67700'>Paused</b>&nbsp; at line {pause.line}"
        )
        self.iteration_label.setText(pause.iteration_text)
        self.iteration_label.setVisible(bool(pause.iteration_text))
        stack = pause.stack_text
        self.stack_label.setText(f"call stack: {stack}" if stack else "")
        self.show()

    def iteration_text(self) -> str:
        return self.iteration_label.text() if self.pause is not None else ""

    def stack_text(self) -> str:
        return self.pause.stack_text if self.pause is not None else ""
