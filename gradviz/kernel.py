"""The kernel: a worker process that owns a Session and answers the window.

The window never runs a statement on its GUI thread: it starts
``python -m gradviz.kernel`` and talks to it with one JSON object per line on
stdin/stdout (never pickle: a message is data, not code). A runaway statement
is stopped by killing this process; the window then starts a fresh kernel and
replays the statements before it.

Every request, reply and event is declared once, as a frozen dataclass, in
:mod:`gradviz.protocol` (the commands, their fields, the events and what the
parent checks of each). A request is a JSON object with an ``id`` and a ``cmd``
naming the command, and the command's fields; every
request gets exactly one reply ``{"id": N, "event": "reply", "ok": true,
"state": {...}}`` or ``{"id": N, "event": "reply", "ok": false, "message":
"..."}``; long commands may send ``progress``, ``output`` and ``result`` events
first. The kernel says ``{"event": "ready", ...}`` once when it starts. The
window sends intents (step, continue, run to backward, run to the end or a
line): the kernel decides what they mean on its own state and says why it
stopped (``stop`` in the reply).

Watchdog: before each phase of work (a statement, the graph capture, the
layout, encoding the reply) the kernel sends ``{"event": "phase", "phase":
..., "limit_s": N}``. The parent (the window's client, or ``gradviz run``)
kills the kernel when a phase outlives ``limit_s`` plus a grace period, so a
deadline holds even while native code runs that no in-process check reaches.

Requests are parsed by :func:`gradviz.protocol.decode_request` (a malformed
one gets an error reply and the kernel stays up); every message is encoded by
:func:`gradviz.graph.wire.dumps` (NaN, objects, depth and size never crash it).

Before it reads a request the kernel confines itself (see
:mod:`gradviz.core.confine`): its working directory is a private temporary
folder, and on Linux it cannot start processes, open network sockets or read
files outside what Python and torch need.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import tempfile
from typing import Any


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m gradviz.kernel")
    parser.add_argument("--workdir", help="the kernel's private folder (made when omitted)")
    parser.add_argument(
        "--no-confine", action="store_true",
        help="skip the OS-level layer (for debugging the kernel itself)",
    )
    parser.add_argument("--cuda", action="store_true", help="let the kernel reach CUDA devices")
    parser.add_argument(
        "--trusted", action="store_true",
        help="run scripts as real Python, unconfined, in the working directory it was "
        "started in (the user's own code, as python runs it)",
    )
    parser.add_argument(
        "--one-shot", action="store_true",
        help="a trusted kernel for one report (gradviz run): no warm-up for later steps",
    )
    return parser.parse_args(argv)


def memory_cap() -> int | None:
    """60% of physical memory: the same default as Limits.max_process_bytes."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") * 0.6)
    except (ValueError, OSError, AttributeError):
        return None


def start_device() -> str:
    """Initialise CUDA and allocate once, so the driver has done everything it does
    only at start (sockets, thread names) while the first confinement stage holds."""
    import torch

    if not torch.cuda.is_available():
        return "no CUDA device was found, so nothing started"
    torch.cuda.init()
    torch.empty(1, device="cuda").add_(1)
    torch.cuda.synchronize()
    return f"{torch.cuda.get_device_name(0)} started"


def main(argv: list[str] | None = None) -> int:
    args = _parse_args(argv)
    # Keep the protocol channel private: anything written to fd 1 by native
    # code or stray prints goes to stderr instead of corrupting the JSON stream.
    protocol_fd = os.dup(1)
    os.dup2(2, 1)
    out = os.fdopen(protocol_fd, "w", encoding="utf-8", buffering=1)
    sys.stdout = sys.stderr
    workdir = args.workdir or tempfile.mkdtemp(prefix="gradviz-kernel-")
    if args.trusted:
        # as python script.py: the script's folder (the kernel's working directory)
        # first on sys.path, HOME and TMPDIR the user's own
        sys.path.insert(0, os.getcwd())
    else:
        os.chdir(workdir)
        os.environ["TMPDIR"] = workdir
        os.environ["HOME"] = workdir
    confinement: dict[str, Any] | None = None
    report = None
    if not args.no_confine and not args.trusted:
        # First, before torch or numpy start a thread: see gradviz.core.confine.
        from gradviz.core.confine import confine

        report = confine(workdir, memory_bytes=memory_cap(), cuda=args.cuda)
    from gradviz.kernel_server import Kernel, warm_up

    # The warm-up spares the window's first step torch's lazy imports; one report run
    # as python runs a script has no later step to spare (trusted only: a confined
    # kernel loads what it needs before its OS layer closes)
    one_shot = args.one_shot and args.trusted
    if not one_shot:
        warm_up(trusted=args.trusted)
    if report is not None:
        if args.cuda:
            # the driver starts under the first stage, before any request is read;
            # then the rights it needed are taken back (see confine.close_device_door)
            from gradviz.core.confine import close_device_door

            report = close_device_door(report, start_device)
        confinement = report.to_json()
    kernel = Kernel(out, trusted=args.trusted)
    # torch and numpy leave ~10^5 long-lived objects; moving them out of the
    # collector's reach keeps full collections from adding 100+ ms to a step.
    if not one_shot:
        gc.collect()
        gc.freeze()
    kernel.install_stop_signal()
    code = serve_on_deep_stack(lambda: kernel.serve(sys.stdin.buffer, confinement), out)
    # what the script left stays held until the process ends (see exit_now): dropped
    # here, a deep chain would be freed on the main thread's stack
    _SERVED.append(kernel)
    return code


#: the kernels main() served, held to the end of the process
_SERVED: list[Any] = []


def exit_now(code: int) -> None:
    """End the kernel without freeing what the script left: the process is going, and
    dropping a 400,000-node chain (and its captured picture) one object at a time
    took 10 s after the reply had gone, while the parent waited for the exit. The
    script's atexit handlers still run, as python runs them; then the streams are
    flushed and the process exits (no interpreter teardown, so no deep chain is
    freed on the main thread's stack either)."""
    import atexit

    try:
        atexit._run_exitfuncs()
    finally:
        for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
            try:
                if stream is not None:
                    stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(code)


#: stack of the thread that runs every request. torch frees an autograd node that
#: ever had a Python object (capture gives one to every node it reads; so does a
#: script walking ``next_functions``) by recursion into the next such node, about
#: 200 bytes of C stack each: a 50,000-node chain dropped on the main thread's 8 MiB
#: stack segfaults the kernel. 1 GiB holds ~5 million nodes, 10x what capture reads
#: (gradviz.core.capture.MAX_CAPTURE_NODES) plus what a script can walk within its
#: run budget. Only the pages touched are ever resident.
DEEP_STACK_BYTES = 1 << 30


def serve_on_deep_stack(
    serve: Any, out: Any, stack_bytes: int = DEEP_STACK_BYTES, release: Any = None
) -> int:
    """Run ``serve`` on a thread with a deep stack; the main thread only waits (and
    runs signal handlers: Python delivers signals to it, see Kernel.serve).

    Once serving is over, ``release()`` runs on that same thread and should drop
    what the script left (the kernel's session): freed there, a deep chain unwinds
    on the deep stack, never on the main thread's at interpreter shutdown."""
    import threading

    outcome: dict[str, int] = {}

    def run() -> None:
        code = 1
        try:
            serve()
            code = 0
        except BaseException:  # noqa: BLE001 - say it on stderr; the exit code says it too
            import traceback

            traceback.print_exc()
        finally:
            try:
                if release is not None:
                    release()
                    gc.collect()
            finally:
                outcome["code"] = code
                try:
                    out.flush()
                except (OSError, ValueError):
                    pass

    try:
        threading.stack_size(stack_bytes)
    except (ValueError, RuntimeError):  # a platform without a settable stack size
        pass
    worker = threading.Thread(target=run, name="gradviz-kernel", daemon=True)
    try:
        worker.start()  # the size is read here, at the thread's creation
    finally:
        threading.stack_size(0)
    while worker.is_alive():
        worker.join(0.5)  # short waits: signal handlers run between them
    return outcome.get("code", 1)


if __name__ == "__main__":
    exit_now(main())  # the kernel's process: no teardown (see exit_now)
