"""Command line: ``gradviz`` (the window), ``run``, ``export``, ``demos``, ``open``.

Exit codes for ``run``: 0 when every statement ran, 1 when one failed (the
report is still printed), 2 for a usage error (unreadable file, unavailable
device, unknown demo).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gradviz",
        description="Step through PyTorch autograd. With no command, opens the window.",
    )
    sub = parser.add_subparsers(dest="command")

    run = sub.add_parser("run", help="run a script headless and report what autograd did")
    src = run.add_mutually_exclusive_group(required=True)
    src.add_argument("file", nargs="?", help="a tensor script (.py)")
    src.add_argument("--demo", help="run a built-in demo by name (see `gradviz demos`)")
    run.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    run.add_argument("--keep-going", action="store_true", help="go on after a failing statement")
    run.add_argument("--json", action="store_true", help="print one JSON object")

    export = sub.add_parser("export", help="run a script and write its graph to a file")
    esrc = export.add_mutually_exclusive_group(required=True)
    esrc.add_argument("file", nargs="?")
    esrc.add_argument("--demo")
    export.add_argument("-o", "--output", required=True, help=".svg .png .dot .graphml or .json")
    export.add_argument("--device", default="cpu", choices=["cpu", "cuda"])

    sub.add_parser("demos", help="list the built-in demos")

    window = sub.add_parser("window", help="open the window (the default)")
    window.add_argument("file", nargs="?")
    window.add_argument("--demo")

    opener = sub.add_parser("open", help="open a script or a saved .gradviz.json snapshot")
    opener.add_argument("file")
    return parser


def _load_source(args: argparse.Namespace) -> tuple[str | bytes, str]:
    from gradviz.core.demos import find_demo

    if getattr(args, "demo", None):
        demo = find_demo(args.demo)
        return demo.source, str(demo.path)
    path = Path(args.file)
    return path.read_bytes(), str(path)


def _run_session(args: argparse.Namespace) -> tuple[Any, list[Any]] | int:
    from gradviz.core.session import DeviceUnavailable, Session

    try:
        source, _label = _load_source(args)
    except (OSError, KeyError) as exc:
        print(f"gradviz: {exc}", file=sys.stderr)
        return EXIT_USAGE
    try:
        session = Session(source, device=args.device)
    except DeviceUnavailable as exc:
        print(f"gradviz: {exc}", file=sys.stderr)
        return EXIT_USAGE
    results = session.run_to_end(keep_going=getattr(args, "keep_going", False))
    return session, results


def _human_bytes(n: int) -> str:
    if n >= 1024**2:
        return f"{n:,} bytes ({n / 1024**2:.1f} MiB)"
    return f"{n:,} bytes"


def _print_report(session: Any, results: list[Any]) -> None:
    if session.parse_error:
        print(f"error: {session.parse_error.message}")
    for r in results:
        mark = "ok " if r.ok else "ERR"
        first = r.source.splitlines()[0] if r.source else ""
        print(f"{mark} {r.line:>4}  {first}")
        if r.output:
            for line in r.output.rstrip("\n").splitlines():
                print(f"           | {line}")
        if r.value is not None:
            print(f"           = {r.value}")
        for w in r.warnings:
            print(f"           ! {w}")
        if r.allocated_bytes:
            print(f"           allocated {_human_bytes(r.allocated_bytes)}")
        if r.error:
            print(f"           {r.error.type}: {r.error.message}")
            if r.error.explanation:
                print(f"           why: {r.error.explanation}")
    history = session.grad_history()
    if history:
        print("grad after each backward pass:")
        for name, values in history.items():
            print(f"  {name}: {values}")


def _json_report(session: Any, results: list[Any]) -> dict[str, Any]:
    from dataclasses import asdict

    snap = session.snapshot()
    statements = []
    for r in results:
        statements.append(
            {
                "index": r.index,
                "line": r.line,
                "end_line": r.end_line,
                "source": r.source,
                "ok": r.ok,
                "error": asdict(r.error) if r.error else None,
                "warnings": r.warnings,
                "output": r.output,
                "value": r.value,
                "allocated_bytes": r.allocated_bytes,
            }
        )
    return {
        "version": snap["version"],
        "device": snap["device"],
        "parse_error": snap["parse_error"],
        "statements": statements,
        "tensors": snap["tensors"],
        "graph": snap["graph"],
        "backward_passes": snap["backward_passes"],
        "grad_history": snap["grad_history"],
        "grad_events": snap["grad_events"],
        "memory": snap["memory"],
    }


def cmd_run(args: argparse.Namespace) -> int:
    outcome = _run_session(args)
    if isinstance(outcome, int):
        return outcome
    session, results = outcome
    if args.json:
        json.dump(_json_report(session, results), sys.stdout, indent=1, allow_nan=False)
        sys.stdout.write("\n")
    else:
        _print_report(session, results)
    failed = session.parse_error is not None or any(not r.ok for r in results)
    return EXIT_FAILED if failed else EXIT_OK


def cmd_export(args: argparse.Namespace) -> int:
    from gradviz.core.layout import layout
    from gradviz.export import export_graph

    outcome = _run_session(args)
    if isinstance(outcome, int):
        return outcome
    session, results = outcome
    graph = session.graph
    try:
        export_graph(graph, args.output, positions=layout(graph))
    except (ValueError, OSError) as exc:
        print(f"gradviz: {exc}", file=sys.stderr)
        return EXIT_USAGE
    print(f"wrote {args.output} ({graph.number_of_nodes()} nodes, {graph.number_of_edges()} edges)")
    return EXIT_FAILED if any(not r.ok for r in results) else EXIT_OK


def cmd_demos(args: argparse.Namespace) -> int:
    from gradviz.core.demos import list_demos

    for demo in list_demos():
        print(f"{demo.name:<18} {demo.title}")
        if demo.about:
            print(f"{'':<18} {demo.about}")
    return EXIT_OK


def _no_display_reason() -> str | None:
    """Why a window cannot open here (Linux without X11/Wayland), or None."""
    if not sys.platform.startswith("linux") or os.environ.get("QT_QPA_PLATFORM"):
        return None
    if os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"):
        return None
    return (
        "no display: DISPLAY and WAYLAND_DISPLAY are unset. Run gradviz on a desktop, "
        "or under a virtual screen (xvfb-run -a gradviz); the headless commands "
        "(gradviz run, export, demos) need none"
    )


def cmd_window(args: argparse.Namespace) -> int:
    """The window on a script, a demo, or a saved snapshot (read-only when it has no script)."""
    file = getattr(args, "file", None)
    if getattr(args, "command", None) == "open" and file and not Path(file).is_file():
        print(f"gradviz: no such file: {file}", file=sys.stderr)
        return EXIT_USAGE
    reason = _no_display_reason()
    if reason:
        print(f"gradviz: {reason}", file=sys.stderr)
        return EXIT_USAGE
    try:
        from gradviz.ui.app import run_app
    except ImportError as exc:
        print(f"gradviz: the window needs PySide6 ({exc})", file=sys.stderr)
        return EXIT_USAGE
    return run_app(file=file, demo=getattr(args, "demo", None))


def main(argv: list[str] | None = None) -> int:
    parser = _build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        return cmd_window(argparse.Namespace(command=None, file=None, demo=None))
    if args.command == "run":
        return cmd_run(args)
    if args.command == "export":
        return cmd_export(args)
    if args.command == "demos":
        return cmd_demos(args)
    if args.command in ("window", "open"):
        return cmd_window(args)
    parser.print_help()
    return EXIT_USAGE


if __name__ == "__main__":
    raise SystemExit(main())
