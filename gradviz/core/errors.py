"""Exceptions and warnings raised by gradviz's core."""

from __future__ import annotations


class GradvizWarning(UserWarning):
    """A warning raised by gradviz itself (never by the user's script)."""


class SandboxError(Exception):
    """The script asked for something the sandbox refuses.

    Raised for a construct, name or attribute outside the allowlists, and for a
    resource limit (``limit`` names it) that a statement would break.
    """

    def __init__(self, message: str, *, limit: str | None = None, line: int | None = None):
        super().__init__(message)
        self.limit = limit
        self.line = line


class LimitExceeded(SandboxError):
    """A statement would break a resource limit (memory, time, loop, size, depth)."""


class ScriptSyntaxError(SandboxError):
    """The script cannot be parsed or uses a construct outside the allowlist."""


class Stopped(SandboxError):
    """The learner pressed Stop while the statement ran (the window's Stop, sent to the
    kernel as a signal): it ends at the next loop iteration or statement, and what it
    did so far is kept. A script's ``except`` cannot catch it, like any refusal."""
