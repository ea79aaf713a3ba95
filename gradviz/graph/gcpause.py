"""Pausing Python's cyclic garbage collector around bulk work.

Reading a 100k-node snapshot, building its networkx graph, laying it out or making
its canvas each allocate millions of small containers. The cyclic collector runs
every few hundred allocations and, every so often, walks the whole heap again: on
a 100k-node file that doubled the time of each of those steps. None of them makes
garbage that only the cyclic collector can free (what they make is either kept or
freed by reference counting), so pausing it costs nothing but the delay: cycles
made meanwhile are collected by its next run.

Torch-free and Qt-free: the kernel, the window's GUI thread and its layout worker
all use it. Pauses nest and may overlap across threads; the collector comes back
when the last one ends, and only if it was running when the first one began.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_depth = 0
_was_enabled = False


@contextmanager
def paused_gc() -> Iterator[None]:
    """Run the ``with`` block without the cyclic collector (reference counting still
    frees everything that is not in a cycle)."""
    global _depth, _was_enabled
    with _lock:
        if _depth == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _was_enabled:
                gc.enable()
