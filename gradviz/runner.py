"""A kernel process driven from plain Python (no Qt): what ``gradviz run`` uses.

The script runs in ``python -m gradviz.kernel``, confined and in its own
temporary folder, never in the process that prints the report. This side is
the watchdog: the kernel announces each phase of work, and a phase that
outlives its limit (plus :data:`GRACE_S`) gets the kernel killed, whatever it
was doing, native code included. The caller then gets :class:`KernelTimeout`
and reports "refused: time limit".

Nothing the kernel says is trusted: a script that escaped the in-kernel
interpreter writes whatever it likes on stdout. So this side decides every
limit itself (:func:`phase_limit`: the kernel's announced limit counts only
when it is shorter than the parent's own), bounds the whole request
(:func:`total_limit`: endless phase messages cannot keep a request alive), and
bounds what it holds: a line over :data:`MAX_LINE_BYTES`, or one whose parsed
form would take more than :data:`MAX_PARSED_BYTES`, is dropped unread, lines
wait in a queue of at most :data:`MAX_QUEUED_BYTES`, and stderr lines are cut.

Torch-free: this process never imports torch.
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import json
import math
import os
import re
import shutil
import signal
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

from gradviz.protocol import (
    Event,
    Phase,
    Ready,
    Reply,
    Request,
    Shutdown,
    decode_event,
    encode_request,
    event_message,
    request_of,
)

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
#: the least time a whole request (every phase of it together) may take; see total_limit
DEFAULT_TOTAL_LIMIT_S = 600.0
#: the longest statement limit a request may ask for (gradviz.graph.wire refuses more)
MAX_LIMIT_S = 3600.0

#: a stdout line from the kernel longer than this is dropped unread (the report of a
#: 20,000-op chain and its backward pass is 10 MB)
MAX_LINE_BYTES = 64 * 1024 * 1024
#: a line whose parsed form could take more memory than this is dropped unparsed
#: (JSON such as ``[{},{},...]`` takes ~25 times its length once parsed; a report
#: ~7 times, so reports up to ~30 MB pass); see parsed_size_estimate. With the line
#: queue and the line being read, what this process holds of the kernel's output
#: stays well under 1 GB whatever it writes
MAX_PARSED_BYTES = 512 * 1024 * 1024
#: lines read but not yet taken by the request loop, at most (one line always fits)
MAX_QUEUED_BYTES = 16 * 1024 * 1024
#: a stderr line is cut to this many bytes (the rest of it is read and dropped)
MAX_STDERR_LINE_BYTES = 2000
#: print output a report carries (all its statements together); the rest is cut
#: with a marker, in the kernel and again in this process
MAX_OUTPUT_CHARS = 4 * 1024 * 1024

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
    """A phase outlived its limit (or the request its total limit); the kernel was killed.

    ``whole`` is True when the request as a whole ran out of time
    (:func:`total_limit`), False when one phase outlived ``limit_s``.
    """

    def __init__(
        self, phase: dict[str, Any], limit_s: float, elapsed_s: float, whole: bool = False
    ):
        self.phase = phase
        self.limit_s = limit_s
        self.elapsed_s = elapsed_s
        self.whole = whole
        super().__init__(timeout_message(phase, limit_s, whole))


class KernelUnconfined(KernelError):
    """Restricted mode was asked for where no OS layer confines the kernel."""


def os_layer_missing(confinement: Any) -> str | None:
    """Why restricted mode cannot be offered here, or None when it can.

    The interpreter is the first filter and the OS layer the boundary (a red team
    with arbitrary Python in the kernel was stopped by Landlock and seccomp, not by
    the interpreter). Where neither applies (macOS and Windows, where gradviz has
    no OS layer yet; Linux with neither Landlock nor libseccomp), an escape would be
    the user's whole account, so a script from someone else is not opened."""
    applied = confinement.get("applied") if isinstance(confinement, dict) else None
    if not isinstance(applied, list):
        applied = []
    if "landlock" in applied or "seccomp" in applied:
        return None
    platform = confinement.get("platform") if isinstance(confinement, dict) else None
    where = {"darwin": "macOS", "win32": "Windows"}.get(str(platform), str(platform or sys.platform))
    return (
        f"restricted mode is not available on this machine ({where}): gradviz has no "
        "OS-level sandbox here (no Landlock and no seccomp filter), and its interpreter "
        "alone must not be the only wall around a script from someone else. Run only "
        "scripts you trust, as Python (gradviz run --trust, or Trust folder in the window)"
    )


class KernelDied(KernelError):
    """The kernel exited without answering; ``phase``: the last phase it announced (a
    statement's names its line), ``code``: its exit status (negative: a signal)."""

    def __init__(self, message: str, phase: dict[str, Any] | None = None,
                 code: int | None = None):
        super().__init__(message)
        self.phase = phase or {}
        self.code = code


def exit_description(code: int | None) -> str:
    """How a process ended, in words: ``killed by SIGSEGV (a segmentation fault: native
    code read or wrote memory it does not own)``, ``exited with code 3``."""
    if code is None:
        return "ended"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            return f"was killed by signal {-code}"
        why = {
            "SIGSEGV": "a segmentation fault: native code read or wrote memory it does not own",
            "SIGBUS": "a bus error: native code read memory that is not there",
            "SIGABRT": "an abort: native code gave up (an assertion, a double free)",
            "SIGKILL": "killed from outside: out of memory, or stopped",
            "SIGFPE": "an arithmetic fault in native code",
            "SIGILL": "an illegal instruction in native code",
        }.get(name)
        return f"was killed by {name}" + (f" ({why})" if why else "")
    return f"exited with code {code}"


class KernelReplyTooLarge(KernelError):
    """The kernel's reply was over what this process reads (it was dropped unread)."""


# --- limits: decided here, never by the kernel ------------------------------------


def _seconds(value: Any) -> float | None:
    """``value`` as a usable number of seconds (finite, > 0), or None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        seconds = float(value)
    except (OverflowError, ValueError):
        return None
    if not math.isfinite(seconds) or seconds <= 0:
        return None
    return seconds


def statement_limit(configured: Any = None) -> float:
    """The parent's own limit for one phase: what it configured (sent to the kernel as
    ``time_limit_s``) when that is a valid limit, else :data:`DEFAULT_LIMIT_S`."""
    seconds = _seconds(configured)
    if seconds is None or seconds > MAX_LIMIT_S:
        return DEFAULT_LIMIT_S
    return seconds


def phase_limit(announced: Any, own: float) -> float:
    """The limit a phase runs under: the kernel's announced ``limit_s`` only when it is a
    number no larger than the parent's ``own``; anything else (larger, NaN, infinite,
    negative, zero, not a number) gives ``own``. A kernel can only shorten its leash."""
    seconds = _seconds(announced)
    if seconds is None or seconds > own:
        return own
    return seconds


def total_limit(own: float, configured: Any = None) -> float:
    """How long one whole request (a ``report``, a ``load`` with replay) may run, every
    phase together: ``configured`` when it is a valid number of seconds, else the larger
    of :data:`DEFAULT_TOTAL_LIMIT_S` and four phases at the statement limit (one
    statement, its capture, the report and its encoding, each at its limit)."""
    seconds = _seconds(configured)
    if seconds is not None:
        return seconds
    return max(DEFAULT_TOTAL_LIMIT_S, 4 * own)


def timeout_message(phase: dict[str, Any], limit_s: float, whole: bool = False) -> str:
    if whole:
        return (
            f"refused: time limit {limit_s:g} s for the whole run: it ran longer, and "
            "gradviz stopped it (gradviz limit max_run_seconds)"
        )
    what = {
        "statement": "the statement",
        "capture": "capturing the graph after the statement",
        "layout": "laying out the graph",
        "report": "building the report",
        "encode": "encoding the reply",
    }.get(str(phase.get("phase")), "the kernel")
    line = phase.get("line")
    where = f" (line {line})" if isinstance(line, int) and not isinstance(line, bool) else ""
    return (
        f"refused: time limit {limit_s:g} s: {what}{where} ran longer, and gradviz stopped "
        "it (gradviz limit max_statement_seconds)"
    )


# --- what is read from the kernel: bounded -------------------------------------------

_ASTRAL_ESCAPE = re.compile(rb"\\u[dD][89abAB]")
_WIDE_BYTES = re.compile(rb"[\xf0-\xff]")


def parsed_size_estimate(line: bytes) -> int:
    """An upper estimate of the memory ``json.loads(line)`` takes at its peak: the line,
    its decoded text, every string's characters at the widest width they may take (twice
    where escapes make the parser build strings in pieces), and each value's object (a
    dict ~184 bytes, a list ~64, a number or an item ~40, a dict entry ~96 with the
    parser's memo of keys, a string ~52 beyond its characters). Counts bytes only, in C: a 64 MB line takes milliseconds.

    Checked against json.loads on adversarial shapes (tests/test_parent_trust.py)."""
    n = len(line)
    if line.isascii():
        text_width = 1
    else:
        text_width = 4 if _WIDE_BYTES.search(line) else 2
    if b"\\u" in line:
        string_width = 4 if _ASTRAL_ESCAPE.search(line) else max(text_width, 2)
    else:
        string_width = text_width
    if b"\\" in line:
        string_width *= 2
    return (
        65536 + n + n * text_width + n * string_width + 184 * line.count(b"{")
        + 64 * line.count(b"[") + 40 * line.count(b",") + 96 * line.count(b":")
        + 26 * line.count(b'"')
    )


class Dropped:
    """A stdout line that was not read: over :data:`MAX_LINE_BYTES`, or too costly to
    parse. ``head`` is its first bytes, to tell whether it was a reply."""

    __slots__ = ("size", "head", "why")

    def __init__(self, size: int, head: bytes, why: str):
        self.size = size
        self.head = head
        self.why = why

    # the kernel begins a reply with its event and id, in either order
    _REPLY = (
        re.compile(rb'^\s*\{\s*"id"\s*:\s*(-?\d{1,20})\s*,\s*"event"\s*:\s*"reply"'),
        re.compile(rb'^\s*\{\s*"event"\s*:\s*"reply"\s*,\s*"id"\s*:\s*(-?\d{1,20})\s*[,}]'),
    )

    def reply_id(self) -> int | None:
        """The request id when the line begins as the kernel begins a reply, else None."""
        for pattern in self._REPLY:
            match = pattern.match(self.head)
            if match:
                return int(match.group(1))
        return None

    def note(self) -> str:
        return f"a line of {self.size:,} bytes from the kernel was dropped: {self.why}"


def read_lines(stream: Any, max_bytes: int) -> Any:
    """Lines (bytes) from a binary stream; a line over ``max_bytes`` comes as a
    :class:`Dropped` instead, read through to its newline without being held whole."""
    while True:
        line = stream.readline(max_bytes + 1)
        if not line:
            return
        if len(line) <= max_bytes or line.endswith(b"\n") and len(line) == max_bytes + 1:
            yield line
            continue
        head, size = line[:200], len(line)
        del line
        while True:
            rest = stream.readline(1 << 20)
            size += len(rest)
            if not rest or rest.endswith(b"\n"):
                break
        yield Dropped(size, head, f"over the limit of {max_bytes:,} bytes a line")


class _LineQueue:
    """Lines from the reader thread to the request loop, at most ``max_bytes`` of them
    waiting (one line always fits): a kernel that writes faster than it is read blocks
    on its pipe instead of filling this process."""

    def __init__(self, max_bytes: int):
        self._items: deque[tuple[Any, int]] = deque()
        self._bytes = 0
        self._max = max_bytes
        self._closed = False
        self._cond = threading.Condition()

    def put(self, item: Any, size: int) -> None:
        with self._cond:
            while self._items and self._bytes + size > self._max and not self._closed:
                self._cond.wait()
            if self._closed:
                return
            self._items.append((item, size))
            self._bytes += size
            self._cond.notify_all()

    def get(self, timeout: float) -> Any:
        """The next item; TimeoutError when none comes within ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while not self._items:
                left = deadline - time.monotonic()
                if left <= 0 or self._closed:
                    raise TimeoutError
                self._cond.wait(left)
            item, size = self._items.popleft()
            self._bytes -= size
            self._cond.notify_all()
            return item

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        """Drop what waits and let a blocked reader go."""
        with self._cond:
            self._closed = True
            self._items.clear()
            self._bytes = 0
            self._cond.notify_all()


def kernel_environment(workdir: str, trusted: bool = False) -> dict[str, str]:
    """A clean environment: only what Python, torch and CUDA need to start.

    A trusted kernel gets this process's whole environment instead, as ``python
    script.py`` would (the script may read its own variables, find its data). Either
    way PYTHONPATH keeps what this process was given after gradviz's own entry: a
    gradviz whose dependencies come from PYTHONPATH must find them in its kernel too
    (else the OS layers' bindings were not found and silently skipped)."""
    given = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    own = import_path()
    pythonpath = os.pathsep.join([*([own] if own else []), *[p for p in given if p != own]])
    if trusted:
        env = dict(os.environ)
        env.pop("PYTHONPATH", None)
        env["PYTHONIOENCODING"] = "utf-8"
        if pythonpath:
            env["PYTHONPATH"] = pythonpath
        return env
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": workdir,
        "TMPDIR": workdir,
        "LANG": "C.UTF-8",
        "PYTHONNOUSERSITE": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONIOENCODING": "utf-8",
    }
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    for name in ("CUDA_VISIBLE_DEVICES", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
                 "LD_LIBRARY_PATH", "SYSTEMROOT", "VIRTUAL_ENV"):
        if name in os.environ:
            env[name] = os.environ[name]
    return env


def kernel_command(
    workdir: str, python: str | None = None, cuda: bool = False, confine: bool = True,
    trusted: bool = False, one_shot: bool = False,
) -> list[str]:
    cmd = [python or sys.executable, "-m", "gradviz.kernel", "--workdir", workdir]
    if cuda:
        cmd.append("--cuda")
    if trusted:
        cmd.append("--trusted")  # real Python, not confined: the user's own code
        if one_shot:
            cmd.append("--one-shot")  # one report: no warm-up for steps that never come
    elif not confine:
        cmd.append("--no-confine")
    return cmd


class KernelProcess:
    """One confined kernel; ``request`` sends a command and waits for its reply.

    ``time_limit_s``: the parent's statement limit for requests that name none (the
    kernel's default otherwise); ``total_limit_s``: how long one whole request may
    take (:func:`total_limit` when None). ``command`` replaces the kernel's command
    line (``python -m gradviz.kernel ...``): tests start a fake kernel with it.
    """

    def __init__(
        self,
        *,
        python: str | None = None,
        cuda: bool = False,
        grace_s: float = GRACE_S,
        confine: bool = True,
        time_limit_s: float | None = None,
        total_limit_s: float | None = None,
        command: list[str] | None = None,
        max_line_bytes: int = MAX_LINE_BYTES,
        max_parsed_bytes: int = MAX_PARSED_BYTES,
        trusted: bool = False,
        cwd: str | None = None,
        one_shot: bool = False,
    ):
        #: trusted: the kernel runs the user's own script as real Python, unconfined, in
        #: ``cwd`` (the script's folder), with no time limit unless one is configured
        self.trusted = trusted
        self.grace_s = grace_s
        self.time_limit_s = time_limit_s
        self.total_limit_s = total_limit_s
        self.max_line_bytes = max_line_bytes
        self.max_parsed_bytes = max_parsed_bytes
        self.workdir = tempfile.mkdtemp(prefix="gradviz-kernel-")
        self._lines = _LineQueue(MAX_QUEUED_BYTES)
        self._stderr: deque[str] = deque(maxlen=40)
        self._next_id = 1
        #: the statement limit the kernel's session runs under, as this side set it
        self._session_limit_s = self._own_limit(time_limit_s)
        self.info: dict[str, Any] = {}
        self._proc = subprocess.Popen(
            command or kernel_command(self.workdir, python, cuda, confine, trusted, one_shot),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=(cwd or os.getcwd()) if trusted else self.workdir,
            env=kernel_environment(self.workdir, trusted),
        )
        threading.Thread(target=self._read_stdout, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()
        try:
            ready = self._next_message(time.monotonic() + START_TIMEOUT_S)
        except TimeoutError:
            ready = None
        hello = decode_event(ready)
        if not isinstance(hello, Ready):
            self.close()
            raise KernelDied(f"the kernel did not start{self._stderr_hint()}")
        self.info = hello.info()
        if not trusted and confine and command is None:
            # The kernel speaks before any script ran, so its report is still its own.
            why = os_layer_missing(hello.confinement)
            if why is not None:
                self.close()
                raise KernelUnconfined(why)

    # --- io ------------------------------------------------------------------------

    def _read_stdout(self) -> None:
        assert self._proc.stdout is not None
        for line in read_lines(self._proc.stdout, self.max_line_bytes):
            if isinstance(line, Dropped):
                self._lines.put(line, len(line.head))
            else:
                self._lines.put(line, len(line))
        self._lines.put(None, 0)

    def _read_stderr(self) -> None:
        assert self._proc.stderr is not None
        for raw in read_lines(self._proc.stderr, MAX_STDERR_LINE_BYTES):
            if isinstance(raw, Dropped):
                raw = raw.head + f"… ({raw.size:,} bytes)".encode()
            self._stderr.append(raw.decode("utf-8", "replace").rstrip())

    def _next_message(self, deadline: float) -> dict[str, Any] | None:
        """The next message (a dict), a ``{"event": "gradviz.dropped"}`` note for a line
        that was not read, or None when the kernel's stdout closed. Lines that are not
        JSON objects are skipped. TimeoutError past ``deadline``, even while lines keep
        coming (a flood cannot hold off a deadline)."""
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            try:
                # no limit at all (a trusted script, as python runs it): wait in hours
                line = self._lines.get(min(left, 3600.0))
            except TimeoutError:
                if math.isinf(deadline) and not self._lines.closed:
                    continue
                raise
            if line is None:
                return None
            if isinstance(line, Dropped):
                self._stderr.append(line.note())
                return {"event": "gradviz.dropped", "reply_id": line.reply_id(),
                        "note": line.note()}
            if parsed_size_estimate(line) > self.max_parsed_bytes:
                dropped = Dropped(
                    len(line), line[:200],
                    f"parsed, it could take over {self.max_parsed_bytes:,} bytes",
                )
                del line
                self._stderr.append(dropped.note())
                return {"event": "gradviz.dropped", "reply_id": dropped.reply_id(),
                        "note": dropped.note()}
            try:
                message = json.loads(line)
            except (ValueError, RecursionError):
                continue  # not ours: the protocol is one JSON object per line
            finally:
                del line
            if isinstance(message, dict):
                return message

    def _stderr_hint(self) -> str:
        tail = [line for line in self._stderr if line.strip()][-3:]
        return (": " + " | ".join(tail)) if tail else ""

    # --- requests ------------------------------------------------------------------

    def request(
        self,
        request: Request | str,
        on_event: Callable[[Event], None] | None = None,
        **params: Any,
    ) -> dict[str, Any]:
        """Send one request (or the command ``request`` with ``params``); return its reply
        message (``ok``, ``state`` or ``message``), every field checked
        (:func:`gradviz.protocol.decode_event`).

        Every deadline is this side's: a phase runs under :func:`phase_limit` (the
        kernel's announced limit only when shorter than the statement limit this side
        set), the request as a whole under :func:`total_limit`. Past either, the kernel
        is killed and :class:`KernelTimeout` raised.
        """
        if isinstance(request, str):
            request = request_of(request, **params)
        rid = self._next_id
        self._next_id += 1
        resets = request.RESETS
        asked = getattr(request, "time_limit_s", None)
        own = self._own_limit(asked) if resets else self._session_limit_s
        if resets and asked is None and self.time_limit_s is not None:
            request = dataclasses.replace(request, time_limit_s=own)  # type: ignore[call-arg]
        line = encode_request(rid, request) + "\n"
        assert self._proc.stdin is not None
        try:
            self._proc.stdin.write(line.encode("utf-8"))
            self._proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise KernelDied(f"the kernel exited{self._stderr_hint()}") from None
        del line
        phase: dict[str, Any] = {"phase": "start"}
        limit = FIRST_PHASE_S
        total = (
            total_limit(own, self.total_limit_s)
            if not self.trusted or _seconds(self.total_limit_s) or math.isfinite(own)
            else math.inf
        )
        started = begun = time.monotonic()
        while True:
            phase_end = started + limit + self.grace_s
            request_end = begun + total + self.grace_s
            try:
                message = self._next_message(min(phase_end, request_end))
            except TimeoutError:
                now = time.monotonic()
                self.kill()
                if request_end <= phase_end:
                    raise KernelTimeout(phase, total, now - begun, whole=True) from None
                raise KernelTimeout(phase, limit, now - started) from None
            if message is None:
                code = self._proc.wait()
                raise KernelDied(
                    f"the kernel {exit_description(code)}{self._stderr_hint()}", phase, code
                )
            if message.get("event") == "gradviz.dropped":
                if message.get("reply_id") == rid:
                    raise KernelReplyTooLarge(
                        f"the kernel's reply was not read: {message.get('note')} (gradviz "
                        "limit max_reply_bytes)"
                    )
                continue
            event = decode_event(message)
            del message
            if event is None or event.id != rid:
                continue
            if isinstance(event, Phase):
                phase = event.as_dict()
                limit = phase_limit(event.limit_s, own)
                started = time.monotonic()
            elif isinstance(event, Reply):
                if resets and event.ok:
                    self._session_limit_s = own
                return event_message(event)
            if on_event is not None:
                on_event(event)

    def _own_limit(self, configured: Any) -> float:
        """This side's limit for one phase; none for a trusted kernel unless configured
        (python gives a script all the time it takes; Stop and Ctrl+C end it)."""
        if self.trusted and _seconds(configured) is None:
            return math.inf
        return statement_limit(configured)

    def request_raw(self, line: bytes, timeout_s: float = 30.0) -> dict[str, Any]:
        """Send bytes as they are (a malformed request, in tests) and return the next reply.

        TimeoutError when none comes within ``timeout_s``."""
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
        self._lines.close()  # what waits is dropped; a blocked reader goes on to the end
        if self._proc.poll() is None:
            try:
                assert self._proc.stdin is not None
                self._proc.stdin.write(encode_request(None, Shutdown()).encode() + b"\n")
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
