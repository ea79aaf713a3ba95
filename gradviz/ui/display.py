"""The worker thread that groups and lays out big graphs for the canvas.

:class:`LayoutRunner` runs :func:`gradviz.app.display.build_display` jobs off
the GUI thread. It reports back by a signal (queued onto the GUI thread) and
drops results that a newer request made stale.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QThreadPool, Signal

from gradviz.app.display import (  # noqa: F401  (the canvas and panels draw with these)
    ASYNC_LAYOUT_NODES,
    Display,
    build_display,
    group_caption,
    is_chain,
    map_passes,
    sizing_attrs,
    top_blocks,
)

__all__ = ["LayoutRunner"]


class LayoutRunner(QObject):
    """Runs :func:`build_display` jobs on one worker thread, newest request wins.

    Signals:
        finished(int, object): request id and its Display (only the newest request's).
        failed(int, str): request id and the error text.
    """

    finished = Signal(int, object)
    failed = Signal(int, str)
    _done = Signal(int, object, str)

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(1)
        self._latest = 0
        self._pending: int | None = None
        self.stale = 0
        """Requests whose result was dropped (or never computed) because a newer one came."""
        # Emitted on the worker thread; the runner lives on the GUI thread, so this is queued.
        self._done.connect(self._on_done)

    @property
    def pending(self) -> bool:
        """True while the newest request has not reported back."""
        return self._pending is not None

    def submit(self, job: Callable[[], Any]) -> int:
        """Queue ``job`` (built from plain data the GUI no longer mutates); returns its id."""
        self._latest += 1
        request = self._latest
        self._pending = request

        def run() -> None:
            if request != self._latest:
                self._done.emit(request, None, "stale")  # superseded while it waited
                return
            try:
                result = job()
            except Exception as exc:  # noqa: BLE001 - reported to the window, not lost
                self._done.emit(request, None, f"{type(exc).__name__}: {exc}")
                return
            self._done.emit(request, result, "")

        self._pool.start(run)
        return request

    def invalidate(self) -> None:
        """Forget the pending request: its result will be dropped when it comes."""
        self._latest += 1
        self._pending = None

    def shutdown(self, timeout_ms: int = 30_000) -> None:
        """Drop everything and wait for the running job (called when the window closes)."""
        self.invalidate()
        self._pool.clear()
        self._pool.waitForDone(timeout_ms)

    def _on_done(self, request: int, result: Any, error: str) -> None:
        if request != self._latest:
            self.stale += 1
            return
        self._pending = None
        if error:
            self.failed.emit(request, error)
        else:
            self.finished.emit(request, result)
