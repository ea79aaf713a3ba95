"""Command line: ``gradviz`` (the window), ``run``, ``export``, ``demos``, ``open``.

Exit codes for ``run``: 0 when every statement ran, 1 when one failed (the
report is still printed), 2 for a usage error (unreadable file, unavailable
device, unknown demo).
"""

from __future__ import annotations

import argparse
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
    run.add_argument(
        "--time-limit", type=float, default=None, metavar="S",
        help="seconds one statement may run (default 25); past it the kernel is stopped",
    )

    export = sub.add_parser("export", help="run a script and write its graph to a file")
    esrc = export.add_mutually_exclusive_group(required=True)
    esrc.add_argument("file", nargs="?")
    esrc.add_argument("--demo")
    export.add_argument("-o", "--output", required=True, help=".svg .png .dot .graphml .json or .html")
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


def _run_report(args: argparse.Namespace, layout: bool = False) -> dict[str, Any] | int:
    """Run the script in a confined kernel process; return its JSON report.

    The script never runs in this process: the kernel does, under a watchdog
    (see :mod:`gradviz.runner`). A statement that outlives the time limit gets
    the kernel killed, and the report ends with that statement refused.
    """
    from gradviz.runner import KernelError, KernelProcess, KernelTimeout

    try:
        source, _label = _load_source(args)
    except (OSError, KeyError) as exc:
        print(f"gradviz: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if isinstance(source, bytes):
        try:
            text = source.decode("utf-8")
        except UnicodeDecodeError as exc:
            return _failed_report(f"the script is not valid UTF-8: {exc}", "ScriptSyntaxError")
    else:
        text = source
    streamed: list[dict[str, Any]] = []

    def on_event(message: dict[str, Any]) -> None:
        if message.get("event") == "result" and isinstance(message.get("result"), dict):
            streamed.append(message["result"])

    try:
        with KernelProcess(cuda=args.device == "cuda") as kernel:
            reply = kernel.request(
                "report", on_event, source=text, device=args.device,
                keep_going=bool(getattr(args, "keep_going", False)), layout=layout,
                **({"time_limit_s": args.time_limit} if getattr(args, "time_limit", None) else {}),
            )
    except KernelTimeout as exc:
        line = exc.phase.get("line")
        line = line if isinstance(line, int) else None
        lines = text.splitlines()
        return _failed_report(
            str(exc), "LimitExceeded", line=line,
            source=lines[line - 1] if line and 0 < line <= len(lines) else "",
            statements=streamed, limit="max_statement_seconds",
        )
    except KernelError as exc:
        return _failed_report(f"the kernel stopped: {exc}", "KernelDied", statements=streamed)
    if not reply.get("ok"):
        if reply.get("error") == "device_unavailable":
            print(f"gradviz: {reply.get('message')}", file=sys.stderr)
            return EXIT_USAGE
        return _failed_report(str(reply.get("message")), "KernelError", statements=streamed)
    report = reply.get("state")
    if not isinstance(report, dict):
        return _failed_report("the kernel sent no report", "KernelError", statements=streamed)
    return report


def _failed_report(
    message: str,
    kind: str,
    *,
    line: int | None = None,
    source: str = "",
    statements: list[dict[str, Any]] | None = None,
    limit: str | None = None,
) -> dict[str, Any]:
    """The report of a run the kernel could not finish: what ran, then the refusal."""
    statements = list(statements or [])
    error = {"type": kind, "message": message, "explanation": None, "line": line, "limit": limit}
    if line is not None:
        statements.append(
            {"index": len(statements), "line": line, "end_line": line, "source": source,
             "ok": False, "error": error, "warnings": [], "output": "", "value": None,
             "allocated_bytes": 0}
        )
        parse_error = None
    else:
        parse_error = error
    return {
        "version": 1, "device": None, "parse_error": parse_error, "statements": statements,
        "tensors": {}, "graph": {"nodes": [], "edges": []}, "backward_passes": [],
        "grad_history": {}, "grad_events": {}, "memory": {}, "stopped": True,
    }


def _human_bytes(n: int) -> str:
    if n >= 1024**2:
        return f"{n:,} bytes ({n / 1024**2:.1f} MiB)"
    return f"{n:,} bytes"


def _print_report(report: dict[str, Any]) -> None:
    parse_error = report.get("parse_error")
    if parse_error:
        print(f"error: {parse_error.get('message')}")
    for r in report.get("statements", []):
        mark = "ok " if r.get("ok") else "ERR"
        source = r.get("source") or ""
        first = source.splitlines()[0] if source else ""
        print(f"{mark} {r.get('line', 0):>4}  {first}")
        if r.get("output"):
            for line in str(r["output"]).rstrip("\n").splitlines():
                print(f"           | {line}")
        if r.get("value") is not None:
            print(f"           = {r['value']}")
        for w in r.get("warnings") or []:
            print(f"           ! {w}")
        if r.get("allocated_bytes"):
            print(f"           allocated {_human_bytes(int(r['allocated_bytes']))}")
        error = r.get("error")
        if error:
            print(f"           {error.get('type')}: {error.get('message')}")
            if error.get("explanation"):
                print(f"           why: {error['explanation']}")
    history = report.get("grad_history") or {}
    if history:
        print("grad after each backward pass:")
        for name, values in history.items():
            print(f"  {name}: {values}")


def _report_failed(report: dict[str, Any]) -> bool:
    return bool(report.get("parse_error")) or any(
        not r.get("ok") for r in report.get("statements", [])
    )


def cmd_run(args: argparse.Namespace) -> int:
    from gradviz.core.wire import dumps

    report = _run_report(args)
    if isinstance(report, int):
        return report
    if args.json:
        sys.stdout.write(dumps(report, indent=1) + "\n")
    else:
        _print_report(report)
    return EXIT_FAILED if _report_failed(report) else EXIT_OK


def cmd_export(args: argparse.Namespace) -> int:
    from gradviz.core.graphdata import graph_from_json
    from gradviz.export import export_graph

    report = _run_report(args, layout=True)
    if isinstance(report, int):
        return report
    if report.get("stopped"):
        _print_report(report)
        return EXIT_FAILED
    graph = graph_from_json(report["graph"])
    positions = {k: (float(x), float(y)) for k, (x, y) in report.get("positions", {}).items()}
    try:
        if Path(args.output).suffix.lower() == ".html":
            from gradviz.html_view import render_html  # the page replays the run's backward passes

            Path(args.output).write_text(render_html(report), encoding="utf-8")
        else:
            export_graph(graph, args.output, positions=positions or None)
    except (ValueError, OSError) as exc:
        print(f"gradviz: {exc}", file=sys.stderr)
        return EXIT_USAGE
    print(f"wrote {args.output} ({graph.number_of_nodes()} nodes, {graph.number_of_edges()} edges)")
    return EXIT_FAILED if _report_failed(report) else EXIT_OK


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
