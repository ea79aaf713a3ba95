"""Work-arounds for Qt binding bugs, applied once when ``gradviz.ui`` is imported.

PySide6 6.12.0 on CPython 3.11 returns ``None`` from void methods
(``painter.setPen``, ``item.update``) and ``True`` from ``Signal.emit`` without
owning a reference, so each call takes one away; after a few thousand calls
CPython frees the singleton and aborts (``none_dealloc`` / ``bool_dealloc``).
pyproject.toml excludes that release; these guards cover an environment that
has it anyway. Each first measures whether the leak is present and does
nothing otherwise (and nothing on Python 3.12+, where both are immortal).
"""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Callable

from PySide6.QtCore import QObject, QPointF, Signal


def _leaks(singleton: object, call: Callable[[], object]) -> bool:
    before = sys.getrefcount(singleton)
    for _ in range(16):
        call()
    return before - sys.getrefcount(singleton) >= 8


def _pin(singleton: object) -> None:
    """Give ``singleton`` a reference count no program can spend."""
    if hasattr(sys, "gettotalrefcount"):  # debug build: the count is not the first field
        incref = ctypes.pythonapi.Py_IncRef
        incref.argtypes = [ctypes.py_object]
        for _ in range(1_000_000):
            incref(singleton)
        return
    ctypes.c_ssize_t.from_address(id(singleton)).value += 1 << 40


class _Probe(QObject):
    fired = Signal()


def apply() -> None:
    if sys.version_info >= (3, 12) or sys.implementation.name != "cpython":
        return
    point = QPointF()
    if _leaks(None, lambda: point.setX(0.0)):
        _pin(None)
    probe = _Probe()
    if _leaks(True, probe.fired.emit):
        _pin(True)


apply()
