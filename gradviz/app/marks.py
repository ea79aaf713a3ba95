"""What the editor marks: the next statement, the last one that ran, lines run, the error.

:func:`editor_marks` reads a kernel state and returns :class:`EditorMarks`;
the editor widget only paints them. Qt-free.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["EditorMarks", "editor_marks"]

Lines = tuple[int, int]


@dataclass(frozen=True)
class EditorMarks:
    #: the statement that runs next (first and last line), unless the last one failed
    next_lines: Lines | None = None
    #: the last statement that ran without error
    ran_lines: Lines | None = None
    #: every line of every statement that ran
    executed: frozenset[int] = frozenset()
    #: (first line, last line, tooltip) of the error mark
    error: tuple[int, int, str] | None = None


def editor_marks(
    statements: Sequence[Mapping[str, Any]],
    results: Sequence[Mapping[str, Any]],
    cursor: int,
    failed: Mapping[str, Any] | None,
    parse_error: Mapping[str, Any] | None = None,
    stopped: Mapping[str, Any] | None = None,
) -> EditorMarks:
    """The marks for a state: ``failed`` is the failed result at the cursor, ``stopped``
    a statement the user (or the time limit) stopped (index, seconds, message)."""
    executed = frozenset(
        line for s in statements if s.get("ran") for line in range(s["line"], s["end_line"] + 1)
    )
    next_lines = None
    if cursor < len(statements) and not failed:
        s = statements[cursor]
        next_lines = (s["line"], s["end_line"])
    ran_lines = None
    ok = [r for r in results if r.get("ok")]
    if ok and not failed:
        ran_lines = (ok[-1]["line"], ok[-1]["end_line"])
    error = None
    if parse_error and parse_error.get("line"):
        line = parse_error["line"]
        error = (
            line,
            line,
            f"{parse_error.get('type')}: {parse_error.get('message')}\n\nNothing ran: fix this line.",
        )
    elif failed:
        err = failed.get("error") or {}
        first, last = failed["line"], failed["end_line"]
        line = err.get("line")
        if isinstance(line, int) and first <= line <= last:
            first = last = line
        tip = f"{err.get('type')}: {err.get('message')}"
        if err.get("explanation"):
            tip += f"\n\nWhy: {err['explanation']}"
        tip += "\n\nStep (F10) skips this statement; edit it and Step to run it again."
        error = (first, last, tip)
    elif stopped and stopped.get("index") == cursor and cursor < len(statements):
        s = statements[cursor]
        why = stopped.get("message") or f"Stopped by you after {stopped['seconds']:.1f} s."
        error = (
            s["line"],
            s["end_line"],
            f"{why}\nEverything before it is intact. Step (F10) skips it; edit it and Step to run "
            "the new text.",
        )
    return EditorMarks(next_lines, ran_lines, executed, error)
