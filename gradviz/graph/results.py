"""What a statement's run produced, declared once for the kernel and the window.

torch-free and Qt-free: the session builds these, the kernel sends them as JSON
(``dataclasses.asdict``), and the window's models (:mod:`gradviz.app.models`) decode
the same classes from the wire.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ErrorInfo:
    """A statement's error (or the script's parse error), explained."""

    type: str
    message: str
    explanation: str | None = None
    line: int | None = None
    limit: str | None = None

    @property
    def title(self) -> str:
        """``RuntimeError: boom``."""
        return f"{self.type}: {self.message}"


@dataclass(frozen=True, slots=True)
class MemoryFigures:
    """Bytes after one statement: allocated by it, held by the graph, alive in variables."""

    allocated_bytes: int = 0
    saved_bytes: int = 0
    live_bytes: int = 0
    cuda_allocated: int | None = None
    cuda_max_allocated: int | None = None
    cuda_reserved: int | None = None

    def get(self, key: str) -> int | None:
        """A figure by its wire name (``"saved_bytes"``); None for an unknown name."""
        return getattr(self, key, None) if key in _FIGURES else None


_FIGURES = frozenset(
    ("allocated_bytes", "saved_bytes", "live_bytes", "cuda_allocated", "cuda_max_allocated",
     "cuda_reserved")
)
