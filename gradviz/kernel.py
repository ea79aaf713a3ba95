"""The kernel: a worker process that owns a Session and answers the window.

The window never runs a statement on its GUI thread: it starts
``python -m gradviz.kernel`` and talks to it with one JSON object per line on
stdin/stdout (never pickle: a message is data, not code). A runaway statement
is stopped by killing this process; the window then starts a fresh kernel and
replays the statements before it.

Requests: ``{"id": N, "cmd": ..., ...}``. Every request gets exactly one reply
``{"id": N, "event": "reply", "ok": true, "state": {...}}`` or
``{"id": N, "event": "reply", "ok": false, "message": "..."}``; long
commands may send ``{"id": N, "event": "progress", "done": k, "total": n}``
first. The kernel says ``{"event": "ready", ...}`` once when it starts.

Commands:
``load`` (source, device, run_to: optional int, zero_points: cursors at which
Zero grad was pressed, replayed), ``step``, ``skip``,
``run_to_end`` (keep_going), ``run_to`` (index), ``run_to_line`` (line),
``step_back``, ``reset``, ``zero_grad``, ``set_device`` (device, run_to),
``snapshot``, ``ping``, ``shutdown``.
"""

from __future__ import annotations

import gc
import json
import os
import sys
import time
import traceback
from typing import IO, Any

from gradviz.core.layout import layout
from gradviz.core.session import DeviceUnavailable, Session, cuda_unavailable_reason


class Kernel:
    def __init__(self, out: IO[str]):
        self.out = out
        self.positions: dict[str, tuple[float, float]] = {}
        self.session = self._new_session("", "cpu")
        self._request_id: Any = None

    # --- protocol ---------------------------------------------------------------

    def send(self, message: dict[str, Any]) -> None:
        self.out.write(json.dumps(message, allow_nan=False, default=str) + "\n")
        self.out.flush()

    def progress(self, done: int, total: int) -> None:
        self.send({"id": self._request_id, "event": "progress", "done": done, "total": total})

    def state(self, results: list[Any] | None = None) -> dict[str, Any]:
        snap = self.session.snapshot()
        graph = self.session.graph  # the captured networkx graph itself: no JSON round trip
        started = time.perf_counter()
        self.positions = layout(graph, self.positions or None)
        snap["positions"] = {k: [float(x), float(y)] for k, (x, y) in self.positions.items()}
        snap["layout_s"] = time.perf_counter() - started
        snap["new_results"] = [r.to_json() for r in (results or [])]
        snap["at_end"] = self.session.at_end
        snap["zero_points"] = sorted(self.session.zero_points)
        return snap

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        cmd = request.get("cmd")
        s = self.session
        if cmd == "ping":
            return {"pong": True}
        if cmd == "load":
            s = self._new_session(request.get("source", ""), request.get("device", "cpu"))
            s.zero_points = {int(p) for p in request.get("zero_points") or [] if int(p) > 0}
            return self.state(self._run_to(request.get("run_to")))
        if cmd == "set_device":
            s.set_device(request["device"])
            return self.state(self._run_to(request.get("run_to")))
        if cmd == "step":
            r = s.step()
            return self.state([r] if r else [])
        if cmd == "skip":
            if request.get("force"):
                s.skip_current()
            else:
                s.skip_failed()
            return self.state([])
        if cmd == "run_to_end":
            return self.state(s.run_to_end(request.get("keep_going", False), self.progress))
        if cmd == "run_to":
            return self.state(self._run_to(request["index"]))
        if cmd == "run_to_line":
            return self.state(s.run_to_line(request["line"], self.progress))
        if cmd == "step_back":
            return self.state(s.step_back(self.progress))
        if cmd == "reset":
            s.reset()
            return self.state([])
        if cmd == "zero_grad":
            zeroed = s.zero_grad()
            st = self.state([])
            st["zeroed"] = zeroed
            return st
        if cmd == "snapshot":
            return self.state([])
        raise ValueError(f"unknown command {cmd!r}")

    def _new_session(self, source: str, device: str) -> Session:
        self.session = Session(source, device=device)
        self.positions = {}
        # A reset (step back, device switch, replay) starts a new picture.
        self.session.events.connect("reset", self._forget_positions)
        return self.session

    def _forget_positions(self) -> None:
        self.positions = {}

    def _run_to(self, index: int | None) -> list[Any]:
        return [] if index is None else self.session.run_to(index, self.progress)

    def serve(self, stdin: IO[str]) -> None:
        self.send(
            {
                "event": "ready",
                "pid": os.getpid(),
                "cuda_available": cuda_unavailable_reason() is None,
                "cuda_reason": cuda_unavailable_reason(),
            }
        )
        for line in stdin:
            line = line.strip()
            if not line:
                continue
            try:
                request = json.loads(line)
            except json.JSONDecodeError as exc:
                self.send({"event": "reply", "id": None, "ok": False, "message": f"bad JSON: {exc}"})
                continue
            self._request_id = request.get("id")
            if request.get("cmd") == "shutdown":
                self.send({"event": "reply", "id": self._request_id, "ok": True, "state": None})
                return
            try:
                state = self.handle(request)
                self.send({"event": "reply", "id": self._request_id, "ok": True, "state": state})
            except DeviceUnavailable as exc:
                self.send({"event": "reply", "id": self._request_id, "ok": False, "message": str(exc)})
            except Exception as exc:  # noqa: BLE001 - report, keep serving
                self.send(
                    {
                        "event": "reply",
                        "id": self._request_id,
                        "ok": False,
                        "message": f"kernel error: {type(exc).__name__}: {exc}",
                        "traceback": traceback.format_exc(limit=8),
                    }
                )


def main() -> int:
    # Keep the protocol channel private: anything written to fd 1 by native
    # code or stray prints goes to stderr instead of corrupting the JSON stream.
    protocol_fd = os.dup(1)
    os.dup2(2, 1)
    out = os.fdopen(protocol_fd, "w", encoding="utf-8", buffering=1)
    sys.stdout = sys.stderr
    kernel = Kernel(out)
    # torch and numpy leave ~10^5 long-lived objects; moving them out of the
    # collector's reach keeps full collections from adding 100+ ms to a step.
    gc.collect()
    gc.freeze()
    kernel.serve(sys.stdin)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
