"""Command line: ``gradviz`` (the window), ``run``, ``export``, ``demos``, ``open``.

Exit codes for ``run``: 0 when every statement ran, 1 when one failed (the
report is still printed), 2 for a usage error (unreadable file, unavailable
device, unknown demo, a snapshot file where a script was expected, a damaged
snapshot file).

The script runs in a kernel process this one does not trust (see
:mod:`gradviz.runner`): what it sends is bounded before it is kept (print
output to :data:`~gradviz.runner.MAX_OUTPUT_CHARS` a run, other text per field
and in all), and every text line printed goes through :func:`printable`, so a
control sequence in a script's output, source or error (a terminal title, a
clipboard write, a screen clear) is shown escaped, never acted on.
"""

from __future__ import annotations

import argparse
import itertools
import sys
from pathlib import Path
from typing import Any

from gradviz import i18n
from gradviz.i18n import QT_TRANSLATE_NOOP, translate

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2

#: characters one text field of a statement keeps (its value, an error message, a
#: warning, its source: at most the 1 MB a script may have); print output has its own
#: budget (runner.MAX_OUTPUT_CHARS)
MAX_FIELD_CHARS = 1_000_000
#: characters of statements' text other than print output kept, all fields together
MAX_TEXT_CHARS = 4 * 1024 * 1024
#: entries (list items, dict keys) kept in the nested values of all statements together
MAX_ITEMS = 200_000
#: statement results streamed by the kernel kept for a run it could not finish
MAX_KEPT_RESULTS = 10_000
#: fields of one statement's result kept (a statement has ten)
MAX_STATEMENT_KEYS = 32

# Every C0 and C1 control character but newline and tab, DEL, the bidi controls, the
# line and paragraph separators and lone surrogates (unprintable as UTF-8) print as
# escapes: \x1b, \u202e. Backslashes stay as they are.
_ESCAPES = {
    c: f"\\x{c:02x}" for c in (*range(0x00, 0x20), *range(0x7F, 0xA0)) if c not in (0x09, 0x0A)
}
_ESCAPES.update(
    {c: f"\\u{c:04x}" for c in (0x061C, 0x200E, 0x200F, 0x2028, 0x2029, *range(0x202A, 0x202F),
                                  *range(0x2066, 0x206A), *range(0xD800, 0xE000))}
)


def printable(text: object) -> str:
    """``text`` safe to print on a terminal: control characters escaped (see _ESCAPES).

    Every text line ``gradviz run`` and ``gradviz export`` print goes through here."""
    return str(text).translate(_ESCAPES)


def _out(text: object = "", *, file: Any = None) -> None:
    """Print one line of text output, escaped (:func:`printable`)."""
    print(printable(text), file=file if file is not None else sys.stdout)


def _err(text: object) -> None:
    _out(f"gradviz: {text}", file=sys.stderr)


class _Budget:
    """What one report (or the results streamed before it) may keep of the kernel's
    text: print output, other text, nested entries. A cut string ends in a marker."""

    def __init__(self) -> None:
        from gradviz.runner import MAX_OUTPUT_CHARS

        # twice what the kernel sends (runner.MAX_OUTPUT_CHARS): its cut, and the markers
        # it ends a cut output with, pass unchanged
        self.output_left = 2 * MAX_OUTPUT_CHARS
        self.text_left = MAX_TEXT_CHARS
        self.items_left = MAX_ITEMS

    def output(self, text: str) -> str:
        keep = min(len(text), self.output_left)
        self.output_left -= keep
        if keep == len(text):
            return text
        cut = len(text) - keep
        return text[:keep] + f"\n[gradviz: output truncated: {cut:,} characters not shown]\n"

    def text(self, text: str) -> str:
        keep = min(len(text), MAX_FIELD_CHARS, self.text_left)
        self.text_left -= keep
        if keep == len(text):
            return text
        return text[:keep] + f"… [gradviz: {len(text) - keep:,} characters not shown]"

    def value(self, value: Any, depth: int = 0) -> Any:
        """A bounded copy of ``value`` (strings cut, containers capped, depth 4)."""
        if isinstance(value, str):
            return self.text(value)
        if value is None or isinstance(value, (bool, int, float)):
            return value
        if depth >= 4 or self.items_left <= 0:
            return "<not shown>"
        if isinstance(value, dict):
            out: dict[str, Any] = {}
            for key, item in value.items():
                if self.items_left <= 0:
                    out["…"] = "<more entries not shown>"
                    break
                self.items_left -= 1
                out[str(key)[:200]] = self.value(item, depth + 1)
            return out
        if isinstance(value, list):
            items: list[Any] = []
            for item in value:
                if self.items_left <= 0:
                    items.append("<more items not shown>")
                    break
                self.items_left -= 1
                items.append(self.value(item, depth + 1))
            return items
        return f"<{type(value).__name__}>"

    def statement(self, r: dict[str, Any]) -> dict[str, Any]:
        """A bounded copy of one statement's result (its first MAX_STATEMENT_KEYS fields)."""
        out: dict[str, Any] = {}
        for key, value in itertools.islice(r.items(), MAX_STATEMENT_KEYS):
            if key == "output" and isinstance(value, str):
                out[key] = self.output(value)
            else:
                out[str(key)[:200]] = self.value(value, 1)
        return out


def _bound_report(report: dict[str, Any]) -> dict[str, Any]:
    """Cut what the report's statements carry to what this process keeps and prints."""
    statements = report.get("statements")
    if isinstance(statements, list):
        budget = _Budget()
        report["statements"] = [budget.statement(r) for r in statements if isinstance(r, dict)]
    elif statements is not None:
        report["statements"] = []
    return report


def _build_parser() -> argparse.ArgumentParser:
    from gradviz import __version__

    parser = argparse.ArgumentParser(
        prog="gradviz",
        description=translate(
            "Cli", "Step through PyTorch autograd. With no command, opens the window."
        ),
    )
    parser.add_argument("--version", action="version", version=f"gradviz {__version__}")
    sub = parser.add_subparsers(dest="command")

    run = sub.add_parser(
        "run", help=translate("Cli", "run a script headless and report what autograd did")
    )
    src = run.add_mutually_exclusive_group(required=True)
    src.add_argument("file", nargs="?", help=translate("Cli", "a tensor script (.py)"))
    src.add_argument(
        "--demo", help=translate("Cli", "run a built-in demo by name (see `gradviz demos`)")
    )
    run.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    _add_lang(run)
    run.add_argument(
        "--keep-going", action="store_true", help=translate("Cli", "go on after a failing statement")
    )
    run.add_argument("--json", action="store_true", help=translate("Cli", "print one JSON object"))
    run.add_argument(
        "--trace", action="store_true",
        help=translate(
            "Cli",
            "with --json: add 'steps', every statement run at any depth (loops, functions), "
            "and place each backward pass (line, iteration, the nodes it ran over)",
        ),
    )
    run.add_argument(
        "--time-limit", type=float, default=None, metavar="S",
        help=translate(
            "Cli", "seconds one statement may run (default 25); past it the kernel is stopped"
        ),
    )
    _add_trust_arguments(run)
    run.add_argument(
        "--total-limit", type=float, default=None, metavar="S",
        help=translate(
            "Cli",
            "seconds the whole run may take (default 600, or 4 statement limits when more); "
            "past it the kernel is stopped",
        ),
    )

    export = sub.add_parser(
        "export",
        help=translate(
            "Cli", "write the graph of a script (run first) or of a snapshot file to a file"
        ),
    )
    esrc = export.add_mutually_exclusive_group(required=True)
    esrc.add_argument(
        "file", nargs="?",
        help=translate("Cli", "a tensor script (.py) or a .gradviz.json snapshot"),
    )
    esrc.add_argument("--demo")
    export.add_argument(
        "-o", "--output", required=True,
        help=translate(
            "Cli",
            ".svg .png .dot .graphml .json (the graph's data) .html, or .gradviz.json "
            "(a snapshot: gradviz open shows it)",
        ),
    )
    export.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    _add_lang(export)
    _add_trust_arguments(export)

    demos = sub.add_parser("demos", help=translate("Cli", "list the built-in demos, one a line"))
    demos.add_argument(
        "-v", "--verbose", action="store_true", help=translate("Cli", "also say what each teaches")
    )

    window = sub.add_parser("window", help=translate("Cli", "open the window (the default)"))
    window.add_argument("file", nargs="?")
    window.add_argument("--demo")

    opener = sub.add_parser(
        "open", help=translate("Cli", "open a script or a saved .gradviz.json snapshot")
    )
    opener.add_argument("file")
    for p in (window, opener):
        p.add_argument(
            "--quit-after", type=float, default=None, metavar="S",
            help=translate("Cli", "close the window after S seconds (a smoke test of an install)"),
        )
    return parser


#: errors that are restricted mode's refusals, not the script's own failures
REFUSAL_TYPES = ("SandboxError", "ScriptSyntaxError", "LimitExceeded")
#: (English in --json's "trust_hint"; the text output translates it, context ``Cli``)
TRUST_HINT = QT_TRANSLATE_NOOP(
    "Cli",
    "restricted mode refused this; if you trust the script's author, run it as Python: "
    "gradviz run --trust FILE",
)


def _add_trust_arguments(parser: argparse.ArgumentParser) -> None:
    """--restricted / --trust: how a script runs (trusted, as python runs it, unless
    --restricted: for scripts from someone else)."""
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument(
        "--restricted", action="store_true",
        help=translate(
            "Cli",
            "run the script in restricted mode: gradviz's interpreter in a confined "
            "process, for scripts from someone else (no files, network or programs)",
        ),
    )
    mode.add_argument(
        "--trust", action="store_true",
        help=translate(
            "Cli", "run the script as real Python (the default): for your own code, as python runs it"
        ),
    )


def _trusted(args: argparse.Namespace) -> bool:
    return not getattr(args, "restricted", False)


def _snapshot_arg(args: argparse.Namespace) -> bool:
    """True when the command was given a snapshot file rather than a script."""
    from gradviz.graph.snapshot_file import looks_like_snapshot

    file = getattr(args, "file", None)
    return isinstance(file, str) and bool(file) and not getattr(args, "demo", None) and (
        looks_like_snapshot(file)
    )


def _read_snapshot_arg(file: str) -> dict[str, Any] | int:
    """The checked snapshot in ``file``, or EXIT_USAGE after saying what is wrong with it.

    The graph ``gradviz export -o graph.json`` wrote is read as a snapshot of that graph."""
    import json

    from gradviz.app.snapshot import snapshot_from_graph_export
    from gradviz.graph.snapshot_file import SnapshotError, parse_snapshot, read_snapshot

    try:
        return read_snapshot(file)
    except SnapshotError as exc:
        problem = exc
    try:
        graph = snapshot_from_graph_export(json.loads(Path(file).read_text(encoding="utf-8")))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        graph = None
    if graph is not None:
        try:
            return parse_snapshot(graph, Path(file).name)
        except SnapshotError as exc:
            problem = exc
    _err(problem)
    return EXIT_USAGE


def _load_source(args: argparse.Namespace) -> tuple[str | bytes, str]:
    from gradviz.app.demos import find_demo

    if getattr(args, "demo", None):
        demo = find_demo(args.demo)
        return demo.source, str(demo.path)
    path = Path(args.file)
    data = path.read_bytes()
    if path.suffix == ".ipynb":
        return notebook_source(data, str(path)), str(path)
    return data, str(path)


def notebook_source(data: bytes, label: str) -> str:
    """A Jupyter notebook's code cells, in order, as one script (what "Run All" runs).
    IPython's own lines (``%magic``, ``!shell``) are kept as comments: they are not
    Python. Raises OSError with what is wrong for a file that is no notebook."""
    import json

    try:
        notebook = json.loads(data.decode("utf-8"))
        cells = notebook["cells"]
    except (UnicodeDecodeError, ValueError, KeyError, TypeError) as exc:
        raise OSError(
            translate("Cli", "{file} is not a Jupyter notebook ({error})").format(
                file=label, error=f"{type(exc).__name__}: {exc}"
            )
        ) from None
    parts = []
    for number, cell in enumerate(cells if isinstance(cells, list) else [], 1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        text = cell.get("source", "")
        text = "".join(text) if isinstance(text, list) else str(text)
        lines = [
            f"# (IPython, not run) {line}" if line.lstrip().startswith(("%", "!")) else line
            for line in text.splitlines()
        ]
        parts.append(f"# --- cell {number} ---\n" + "\n".join(lines))
    return "\n\n".join(parts) + "\n"


def _run_report(args: argparse.Namespace, layout: bool = False) -> dict[str, Any] | int:
    """Run the script in a confined kernel process; return its JSON report.

    The script never runs in this process: the kernel does, under a watchdog
    (see :mod:`gradviz.runner`). A statement that outlives the time limit gets
    the kernel killed, and the report ends with that statement refused.
    """
    from gradviz.protocol import Event, Result
    from gradviz.runner import (
        KernelDied,
        KernelError,
        KernelProcess,
        KernelReplyTooLarge,
        KernelTimeout,
        KernelUnconfined,
    )

    try:
        source, _label = _load_source(args)
    except KeyError as exc:  # an unknown demo: the message lists the known ones
        _err(exc.args[0] if exc.args else exc)
        return EXIT_USAGE
    except OSError as exc:
        _err(exc)
        return EXIT_USAGE
    if isinstance(source, bytes):
        try:
            text = source.decode("utf-8")
        except UnicodeDecodeError as exc:
            return _failed_report(f"the script is not valid UTF-8: {exc}", "ScriptSyntaxError")
    else:
        text = source
    # Each statement's result, as the kernel streams it: only for a run it cannot
    # finish (the reply carries them all again), so kept bounded.
    streamed: list[dict[str, Any]] = []
    budget = _Budget()

    def on_event(event: Event) -> None:
        if isinstance(event, Result) and len(streamed) < MAX_KEPT_RESULTS:
            streamed.append(budget.statement(event.result))

    time_limit = getattr(args, "time_limit", None)
    trusted = _trusted(args)
    script = Path(_label).resolve() if not getattr(args, "demo", None) else None
    confinement: Any = None
    try:
        with KernelProcess(
            cuda=args.device == "cuda", time_limit_s=time_limit,
            total_limit_s=getattr(args, "total_limit", None),
            trusted=trusted, cwd=str(script.parent) if script is not None else None,
            one_shot=True,
        ) as kernel:
            # said in the kernel's hello, before any script ran: still the kernel's own
            confinement = kernel.info.get("confinement")
            reply = kernel.request(
                "report", on_event, source=text, device=args.device,
                keep_going=bool(getattr(args, "keep_going", False)), layout=layout,
                trace=bool(getattr(args, "trace", False)),
                **({"time_limit_s": time_limit} if time_limit else {}),
                **({"filename": str(script)} if trusted and script is not None else {}),
            )
    except KernelTimeout as exc:
        line, source = _phase_line(exc.phase.get("line"), text)
        return _failed_report(
            str(exc), "LimitExceeded", line=line, source=source,
            statements=streamed, limit="max_run_seconds" if exc.whole else "max_statement_seconds",
        )
    except KernelUnconfined as exc:
        _err(exc)
        return EXIT_USAGE
    except KernelReplyTooLarge as exc:
        return _failed_report(str(exc), "ReplyTooLarge", statements=streamed, limit="max_reply_bytes")
    except KernelDied as exc:
        # the statement the kernel was running when it went: a crash in native code, or
        # a script that ended the process itself (os._exit)
        line, source = _phase_line(
            exc.phase.get("line") if exc.phase.get("phase") == "statement" else None, text
        )
        where = f" while line {line} ran" if line else ""
        return _failed_report(
            f"the script stopped the Python process{where}: {exc}",
            "KernelDied", line=line, source=source.strip(), statements=streamed,
        )
    except KernelError as exc:
        return _failed_report(f"the kernel stopped: {exc}", "KernelDied", statements=streamed)
    if not reply.get("ok"):
        if reply.get("error") == "device_unavailable":
            _err(_short(reply.get("message")))
            return EXIT_USAGE
        return _failed_report(_short(reply.get("message")), "KernelError", statements=streamed)
    report = reply.get("state")
    del reply
    streamed.clear()
    if not isinstance(report, dict):
        return _failed_report("the kernel sent no report", "KernelError")
    report = _bound_report(report)
    if isinstance(report, dict) and isinstance(confinement, dict):
        # the OS layers and the rights kept for the device (restricted mode only)
        report["confinement"] = {
            key: [_short(v) for v in confinement.get(key) or [] if isinstance(v, str)][:64]
            for key in ("applied", "skipped", "notes", "device_rights")
        }
    return report


def _phase_line(line: Any, text: str) -> tuple[int | None, str]:
    """The script line a kernel phase named (the kernel's word: checked), and its text."""
    line = line if isinstance(line, int) and not isinstance(line, bool) else None
    lines = text.splitlines()
    return line, lines[line - 1] if line and 0 < line <= len(lines) else ""


def _short(text: Any) -> str:
    """A message from the kernel, cut to :data:`MAX_FIELD_CHARS`."""
    text = str(text)
    return text if len(text) <= MAX_FIELD_CHARS else text[:MAX_FIELD_CHARS] + "…"


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


def _print_report(report: dict[str, Any]) -> None:
    """The report as text; numbers and sizes read as the window shows them (graph.fmt).

    Every line goes through :func:`printable` (by :func:`_out`): nothing the script
    or the kernel wrote reaches the terminal as a control sequence."""
    from gradviz.app.models import readable_addresses as shown
    from gradviz.graph.fmt import fmt_bytes, fmt_value

    parse_error = report.get("parse_error")
    if parse_error:
        message = parse_error.get("message") if isinstance(parse_error, dict) else parse_error
        _out(translate("Cli", "error: {message}").format(message=message))
    statements = report.get("statements")
    for r in statements if isinstance(statements, list) else []:
        if not isinstance(r, dict):
            continue
        mark = "ok " if r.get("ok") else "ERR"
        source = r.get("source") or ""
        first = str(source).splitlines()[0] if source else ""
        line = r.get("line", 0)
        _out(f"{mark} {str(line):>4}  {first}")
        if r.get("output"):
            for text in shown(str(r["output"])).rstrip("\n").splitlines():
                _out(f"           | {text}")
        if r.get("value") is not None:
            _out(f"           = {shown(str(r['value']))}")
        warnings = r.get("warnings")
        for w in warnings if isinstance(warnings, list) else []:
            _out(f"           ! {shown(str(w))}")
        allocated = r.get("allocated_bytes")
        if allocated and isinstance(allocated, (int, float)) and not isinstance(allocated, bool):
            _out("           " + translate("Cli", "allocated {size}").format(size=fmt_bytes(allocated)))
        error = r.get("error")
        if isinstance(error, dict):
            _out(f"           {error.get('type')}: {shown(str(error.get('message')))}")
            if error.get("explanation"):
                why = translate("Explain", str(error["explanation"]))
                _out("           " + translate("Cli", "why: {why}").format(why=why))
            if report.get("mode") == "restricted" and error.get("type") in REFUSAL_TYPES:
                _out("           " + translate("Cli", TRUST_HINT))
        elif error:
            _out(f"           {error}")
    history = report.get("grad_history") or {}
    if isinstance(history, dict) and history:
        _out(translate("Cli", "grad after each backward pass:"))
        for name, values in history.items():
            _out(f"  {str(name)[:MAX_FIELD_CHARS]}: {fmt_value(values, MAX_FIELD_CHARS)}")


def _report_failed(report: dict[str, Any]) -> bool:
    statements = report.get("statements")
    return bool(report.get("parse_error")) or any(
        not (isinstance(r, dict) and r.get("ok"))
        for r in (statements if isinstance(statements, list) else [])
    )


def cmd_run(args: argparse.Namespace) -> int:
    from gradviz.graph.wire import dumps

    if _snapshot_arg(args):
        snap = _read_snapshot_arg(args.file)
        if isinstance(snap, int):
            return snap
        nodes = len(snap["graph"]["nodes"])
        passes = len(snap.get("backward_passes") or [])
        refusal = (
            translate(
                "Cli",
                "{file} is a gradviz snapshot ({nodes} nodes, {passes} backward pass), not a "
                "script: there is nothing to run. Open it with `gradviz open {file}`, or draw "
                "it with `gradviz export {file} -o graph.svg`",
            )
            if passes == 1
            else translate(
                "Cli",
                "{file} is a gradviz snapshot ({nodes} nodes, {passes} backward passes), not a "
                "script: there is nothing to run. Open it with `gradviz open {file}`, or draw "
                "it with `gradviz export {file} -o graph.svg`",
            )
        )
        _err(refusal.format(file=args.file, nodes=nodes, passes=passes))
        return EXIT_USAGE
    report = _run_report(args)
    if isinstance(report, int):
        return report
    # the mode this side chose (never what the kernel says of itself), first
    report = {"mode": "trusted" if _trusted(args) else "restricted", **report}
    if not _trusted(args) and _report_failed(report):
        report["trust_hint"] = TRUST_HINT
    if args.json:
        report = _with_translations(report)
        sys.stdout.write(dumps(report, indent=1) + "\n")
    else:
        _print_report(report)
    return EXIT_FAILED if _report_failed(report) else EXIT_OK


def _with_translations(report: dict[str, Any]) -> dict[str, Any]:
    """``--json``'s additions for the chosen language, English kept as it is: ``language``
    after ``mode``, and beside each error's ``explanation`` (English, the stable key) its
    ``explanation_translated`` (the same sentence in ``language``; None when there is none)."""

    def error(e: Any) -> Any:
        if not isinstance(e, dict) or "explanation" not in e:
            return e
        out: dict[str, Any] = {}
        for key, value in e.items():
            out[key] = value
            if key == "explanation":
                out["explanation_translated"] = (
                    translate("Explain", value) if isinstance(value, str) else None
                )
        return out

    out: dict[str, Any] = {}
    for key, value in report.items():
        if key == "parse_error":
            value = error(value)
        elif key == "statements" and isinstance(value, list):
            value = [
                {**r, "error": error(r["error"])} if isinstance(r, dict) and "error" in r else r
                for r in value
            ]
        out[key] = value
        if key == "mode":
            out["language"] = i18n.current_language()
    return out


def cmd_export(args: argparse.Namespace) -> int:
    from gradviz.export import Progress

    # a long export says what it is doing on a terminal (nothing for a quick one, a
    # pipe or --json)
    with Progress() as progress:
        return _export(args, progress)


def _export(args: argparse.Namespace, progress: Any) -> int:
    from gradviz.export import export_graph, export_snapshot, is_snapshot_path, run_snapshot
    from gradviz.graph.graphdata import graph_from_json

    if _snapshot_arg(args):
        snap = _read_snapshot_arg(args.file)
        if isinstance(snap, int):
            return snap
        try:
            graph = export_snapshot(snap, args.output, progress=progress)
        except (ValueError, OSError) as exc:
            _err(exc)
            return EXIT_USAGE
        _out(_wrote(args.output, graph))
        return EXIT_OK
    progress(translate("Cli", "running {script} …").format(
        script=getattr(args, "file", None) or getattr(args, "demo", None) or "the script"
    ))
    report = _run_report(args, layout=True)
    if isinstance(report, int):
        return report
    if report.get("stopped"):
        _print_report(report)
        return EXIT_FAILED
    graph = graph_from_json(report["graph"])
    positions = {k: (float(x), float(y)) for k, (x, y) in report.get("positions", {}).items()}
    try:
        if is_snapshot_path(args.output):
            # the run as a snapshot file: `gradviz open` shows it, `export` draws it
            export_snapshot(run_snapshot(report), args.output, progress=progress)
        elif Path(args.output).suffix.lower() == ".html":
            # the page replays the run's backward passes
            export_snapshot(report, args.output, progress=progress)
        else:
            export_graph(graph, args.output, positions=positions or None, progress=progress)
    except (ValueError, OSError) as exc:
        _err(exc)
        return EXIT_USAGE
    _out(_wrote(args.output, graph))
    return EXIT_FAILED if _report_failed(report) else EXIT_OK


def _wrote(path: str, graph: Any) -> str:
    return translate("Cli", "wrote {path} ({nodes} nodes, {edges} edges)").format(
        path=path, nodes=graph.number_of_nodes(), edges=graph.number_of_edges()
    )


def cmd_demos(args: argparse.Namespace) -> int:
    from gradviz.app.demos import DemosMissing, list_demos

    try:
        demos = list_demos()
    except DemosMissing as exc:
        _err(exc)
        return EXIT_USAGE
    for demo in demos:
        _out(f"{demo.name:<18} {translate('Demos', demo.title)}")
        if demo.about and getattr(args, "verbose", False):
            _out(f"{'':<18} {translate('Demos', demo.about)}")
    return EXIT_OK


def _no_display_reason() -> str | None:
    """Why a window cannot open here (Linux without X11/Wayland), or None."""
    from gradviz.headless import no_display_reason

    reason = no_display_reason()
    if reason is None:
        return None
    return translate(
        "Cli",
        "{reason}. Run gradviz on a desktop, or under a virtual screen "
        "(xvfb-run -a gradviz); the headless commands (gradviz run, export, demos) need none",
    ).format(reason=reason)


def cmd_window(args: argparse.Namespace) -> int:
    """The window on a script, a demo, or a saved snapshot (read-only when it has no script)."""
    file = getattr(args, "file", None)
    if file and not Path(file).is_file():
        _err(translate("Cli", "no such file: {file}").format(file=file))
        return EXIT_USAGE
    if file and _snapshot_arg(args) and _has_format(file):
        # Checked here too, so a damaged snapshot is explained without a display.
        snap = _read_snapshot_arg(file)
        if isinstance(snap, int):
            return snap
    reason = _no_display_reason()
    if reason:
        _err(reason)
        return EXIT_USAGE
    try:
        from gradviz.ui.app import run_app
    except ImportError as exc:
        _err(translate("Cli", "the window needs PySide6 ({error})").format(error=exc))
        return EXIT_USAGE
    quit_after = getattr(args, "quit_after", None)
    if quit_after is not None:
        from PySide6.QtCore import QTimer

        from gradviz.ui.app import create_application

        create_application()
        QTimer.singleShot(int(quit_after * 1000), _quit_windows)
    return run_app(file=file, demo=getattr(args, "demo", None), own_process=True)


def _has_format(file: str) -> bool:
    """The JSON file names a format (a snapshot), rather than only holding statements."""
    import json

    try:
        data = json.loads(Path(file).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return True  # unreadable: let the snapshot reader say why
    return not isinstance(data, dict) or "format" in data or "statements" not in data


def _quit_windows() -> None:
    """``--quit-after``: close every window as a person would (the kernel shuts down), then quit."""
    from PySide6.QtWidgets import QApplication, QMessageBox

    from gradviz.ui import dialogs, main_window

    dialogs.ask_unsaved_changes = lambda *a, **k: QMessageBox.StandardButton.Discard
    for widget in QApplication.topLevelWidgets():
        if isinstance(widget, main_window.MainWindow):
            widget.close()
    QApplication.quit()


def app_main() -> int:
    """The ``gradviz-app`` launcher (a GUI entry point: no console window on Windows)."""
    return main(["window", *sys.argv[1:]])


COMMANDS = ("run", "export", "demos", "window", "open")


def _add_lang(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--lang", choices=sorted(i18n.LANGUAGES),
        help=translate("Cli", "explanations and pages in this language (else GRADVIZ_LANG)"),
    )


def main(argv: list[str] | None = None) -> int:
    # GRADVIZ_LANG, else the locale (the window's saved choice is the window's own)
    i18n.set_language(i18n.choose_language())
    parser = _build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] not in COMMANDS and not argv[0].startswith("-") and (
        Path(argv[0]).suffix in (".py", ".json") or Path(argv[0]).exists()
    ):
        argv = ["open", *argv]  # `gradviz script.py` opens it, as editors do
    args = parser.parse_args(argv)
    if getattr(args, "lang", None):
        i18n.set_language(args.lang)
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
