"""Work-arounds for Qt binding bugs, applied once when ``gradviz.ui`` is imported."""

from __future__ import annotations

import ctypes
import sys

from PySide6.QtCore import QPointF


def _pin_none() -> None:
    """Keep ``None`` alive under a PySide6 build that drops references to it.

    PySide6 6.12.0 on CPython 3.11 returns ``None`` from every void method
    (``painter.setPen``, ``item.update``, ...) without owning a reference, so
    each call takes one away; after a few thousand calls CPython frees None
    and aborts ("Fatal Python error: none_dealloc").  From Python 3.12 None
    is immortal and nothing happens.  When the leak is detected, None gets a
    reference count no app can ever spend.  Every gradviz widget imports this
    module, so importing any of them applies the fix.
    """
    if sys.version_info >= (3, 12) or sys.implementation.name != "cpython":
        return
    point = QPointF()
    before = sys.getrefcount(None)
    for _ in range(16):
        point.setX(0.0)
    if before - sys.getrefcount(None) < 8:
        return  # this build counts correctly
    if hasattr(sys, "gettotalrefcount"):  # debug build: the count is not the first field
        incref = ctypes.pythonapi.Py_IncRef
        incref.argtypes = [ctypes.py_object]
        for _ in range(1_000_000):
            incref(None)
        return
    ctypes.c_ssize_t.from_address(id(None)).value += 1 << 40


_pin_none()
