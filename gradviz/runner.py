"""A kernel process driven from plain Python (no Qt): what ``gradviz run`` uses.

The script runs in ``python -m gradviz.kernel``, confined and in its own
temporary folder, never in the process that prints the report. This side is
the watchdog: the kernel announces each phase of work with its time limit,
and a phase that outlives it (plus :data:`GRACE_S`) gets the kernel killed,
whatever it was doing, native code included. The caller then gets
:class:`KernelTimeout` and reports "refused: time limit".

Torch-free: this process never imports torch.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import queue
import shutil
import site
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

#: seconds a phase may run past its limit before the kernel is killed: the
#: in-process checks refuse at the limit itself when they can (between ops,
#: every 256 loop iterations), so this only has to cover one slow op
GRACE_S = 2.0
#: a phase announced without a limit gets the default statement limit
DEFAULT_LIMIT_S = 25.0
#: importing torch and warming up, on a slow shared machine
START_TIMEOUT_S = 180.0
#: how long a request may wait for its first phase message
FIRST_PHASE_S = 60.0

PACKAGE_PARENT = str(Path(__file__).resolve().parents[1])
DISTRIBUTION = "gradviz-autograd"


def import_path() -> str | None:
    """The folder the kernel must put on PYTHONPATH to import this gradviz, or None.

    None when this gradviz is installed, from a wheel or editable: the kernel's
    interpreter finds it by itself, and neither its path nor its working
    directory points into a source tree. A source checkout run without
    installing (``python main.py`` in a clone) gets the checkout's root.
    """
    here = Path(__file__).resolve().parent
    try:
        dist = importlib.metadata.distribution(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return PACKAGE_PARENT
    installed = Path(str(dist.locate_file("gradviz/__init__.py"))).resolve().parent
    if installed == here and installed.parent in _site_dirs():
        return None
    try:
        direct = json.loads(dist.read_text("direct_url.json") or "{}")
    except ValueError:
        direct = {}
    if direct.get("dir_info", {}).get("editable") and str(direct.get("url", "")).startswith(
        "file://"
    ):
        source = Path(urllib.parse.unquote(urllib.parse.urlparse(direct["url"]).path)).resolve()
        if source == here.parent:
            return None  # the editable install's finder maps gradviz to this very tree
    return PACKAGE_PARENT


def _site_dirs() -> set[Path]:
    """Where the kernel's interpreter looks for installed packages (no user site: it is off)."""
    return {Path(p).resolve() for p in site.getsitepackages()}


class KernelError(RuntimeError):
    """The kernel could not answer."""


class KernelTimeout(KernelError):
    """A phase outlived its limit; the kernel was killed."""

    def __init__(self, phase: dict[str, Any], limit_s: float, elapsed_s: float):
        self.phase = phase
        self.limit_s = limit_s
        self.elapsed_s = elapsed_s
        super().__init__(timeout_message(phase, limit_s))


class KernelDied(KernelError):
    """The kernel exited without answering."""


def timeout_message(phase: dict[str, Any], limit_s: float) -> str:
    what = {
        "statement": "the statement",
        "capture": "capturing the graph after the statement",
        "layout": "laying out the graph",
        "report": "building the report",
        "encode": "encoding the reply",
    }.get(str(phase.get("phase")), "the kernel")
    line = phase.get("line")
    where = f" (line {line})" if isinstance(line, int) else ""
    return (
        f"refused: time limit {limit_s:g} s: {what}{where} ran longer, and gradviz stopped "
        "it (gradviz limit max_statement_seconds)"
    )


def kernel_environment(workdir: str) -> dict[str, str]:
    """A clean environment: only what Python, torch and CUDA need to start."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": workdir,
        "TMPDIR": workdir,
        "LANG": "C.UTF-8",
        "PYTHONNOUSERSITE": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONIOENCODING": "utf-8",
    }
    path = import_path()
    if path is not None:
        env["PYTHONPATH"] = path
    for name in ("CUDA_VISIBLE_DEVICES", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
                 "LD_LIBRARY_PATH", "SYSTEMROOT", "VIRTUAL_ENV"):
        if name in os.environ:
            env[name] = os.environ[name]
    return env


def kernel_command(
    workdir: str, python: str | None = None, cuda: bool = False, confine: bool = True
) -> list[str]:
    cmd = [python or sys.executable, "-m", "gradviz.kernel", "--workdir", workdir]
    if cuda:
        cmd.append("--cuda")
    if not confine:
        cmd.append("--no-confine")
    return cmd


class KernelProcess:
    """One confined kernel; ``request`` sends a command and waits for its reply."""

    def __init__(
        self,
        *,
        python: str | None = None,
        cuda: bool = False,
        grace_s: float = GRACE_S,
        confine: bool = True,
    ):
        self.grace_s = grace_s
        self.workdir = tempfile.mkdtemp(prefix="gradviz-kernel-")
        self._messages: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._stderr: deque[str] = deque(maxlen=40)
        self._next_id = 1
        self.info: dict[str, Any] = {}
        self._proc = subprocess.Popen(
            kernel_command(self.workdir, python, cuda, confine),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=self.workdir,
            env=kernel_environment(self.workdir),
        )
        threading.Thread(target=self._read_stdout, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()
        ready = self._next_message(time.monotonic() + START_TIMEOUT_S)
        if ready is None or ready.get("event") != "ready":
            self.close()
            raise KernelDied(f"the kernel did not start{self._stderr_hint()}")
        self.info = ready

    # --- io ------------------------------------------------------------------------

    def _read_stdout(self) -> None:
        assert self._proc.stdout is not None
        for raw in self._proc.stdout:
            try:
                message = json.loads(raw.decode("utf-8"))
            except (ValueError, RecursionError):
                continue  # not ours: the protocol is one JSON object per line
            if isinstance(message, dict):
                self._messages.put(message)
        self._messages.put(None)

    def _read_stderr(self) -> None:
        assert self._proc.stderr is not None
        for raw in self._proc.stderr:
            self._stderr.append(raw.decode("utf-8", "replace").rstrip())

    def _next_message(self, deadline: float) -> dict[str, Any] | None:
        try:
            return self._messages.get(timeout=max(deadline - time.monotonic(), 0.0))
        except queue.Empty:
            raise TimeoutError from None

    def _stderr_hint(self) -> str:
        tail = [line for line in self._stderr if line.strip()][-3:]
        return (": " + " | ".join(tail)) if tail else ""

    # --- requests ------------------------------------------------------------------

    def request(
        self, cmd: str, on_event: Callable[[dict[str, Any]], None] | None = None, **params: Any
    ) -> dict[str, Any]:
        """Send one command; return its reply message (``ok``, ``state`` or ``message``)."""
        rid = self._next_id
        self._next_id += 1
        line = json.dumps({"id": rid, "cmd": cmd, **params}) + "\n"
        assert self._proc.stdin is not None
        try:
            self._proc.stdin.write(line.encode("utf-8"))
            self._proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise KernelDied(f"the kernel exited{self._stderr_hint()}") from None
        phase: dict[str, Any] = {"phase": "start"}
        limit = FIRST_PHASE_S
        started = time.monotonic()
        while True:
            try:
                message = self._next_message(started + limit + self.grace_s)
            except TimeoutError:
                elapsed = time.monotonic() - started
                self.kill()
                raise KernelTimeout(phase, limit, elapsed) from None
            if message is None:
                code = self._proc.wait()
                raise KernelDied(f"the kernel exited with code {code}{self._stderr_hint()}")
            if message.get("id") != rid:
                continue
            event = message.get("event")
            if event == "phase":
                phase = message
                limit = float(message.get("limit_s") or FIRST_PHASE_S)
                started = time.monotonic()
            elif event == "reply":
                return message
            if on_event is not None:
                on_event(message)

    def request_raw(self, line: bytes, timeout_s: float = 30.0) -> dict[str, Any]:
        """Send bytes as they are (a malformed request, in tests) and return the next reply."""
        assert self._proc.stdin is not None
        self._proc.stdin.write(line if line.endswith(b"\n") else line + b"\n")
        self._proc.stdin.flush()
        deadline = time.monotonic() + timeout_s
        while True:
            message = self._next_message(deadline)
            if message is None:
                raise KernelDied(f"the kernel exited{self._stderr_hint()}")
            if message.get("event") == "reply":
                return message

    # --- lifetime ------------------------------------------------------------------

    def kill(self) -> None:
        if self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait()

    def close(self) -> None:
        if self._proc.poll() is None:
            try:
                assert self._proc.stdin is not None
                self._proc.stdin.write(b'{"cmd": "shutdown"}\n')
                self._proc.stdin.flush()
                self._proc.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                pass
        self.kill()
        shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self) -> KernelProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
