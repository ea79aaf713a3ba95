"""What the editor marks: the next statement, the last one that ran, lines run, the error.

:func:`editor_marks` reads a kernel state and returns :class:`EditorMarks`;
the editor widget only paints them. Qt-free.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .guide import error_line_inside
from .models import ErrorInfo, ResultInfo, StatementInfo, StoppedStatement

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
    statements: Sequence[StatementInfo],
    results: Sequence[ResultInfo],
    cursor: int,
    failed: ResultInfo | None,
    parse_error: ErrorInfo | None = None,
    stopped: StoppedStatement | None = None,
) -> EditorMarks:
    """The marks for a state: ``failed`` is the failed result at the cursor, ``stopped``
    a statement the user (or the time limit) stopped (index, seconds, message)."""
    executed = frozenset(
        line for s in statements if s.ran for line in range(s.line, s.end_line + 1)
    )
    next_lines = None
    if cursor < len(statements) and failed is None:
        s = statements[cursor]
        next_lines = (s.line, s.end_line)
    ran_lines = None
    ok = [r for r in results if r.ok]
    if ok and failed is None:
        ran_lines = (ok[-1].line, ok[-1].end_line)
    error = None
    if parse_error is not None and parse_error.line:
        line = parse_error.line
        error = (line, line, f"{parse_error.title}\n\nNothing ran: fix this line.")
    elif failed is not None:
        err = failed.error
        inside = error_line_inside(failed)
        first, last = (inside, inside) if inside else (failed.line, failed.end_line)
        tip = err.title if err is not None else "The statement failed"
        if err is not None and err.explanation:
            tip += f"\n\nWhy: {err.explanation}"
        tip += "\n\nStep (F10) skips this statement; edit it and Step to run it again."
        error = (first, last, tip)
    elif stopped is not None and stopped.index == cursor and cursor < len(statements):
        s = statements[cursor]
        why = stopped.message or f"Stopped by you after {stopped.seconds:.1f} s."
        error = (
            s.line,
            s.end_line,
            f"{why}\nEverything before it is intact. Step (F10) skips it; edit it and Step to run "
            "the new text.",
        )
    return EditorMarks(next_lines, ran_lines, executed, error)
