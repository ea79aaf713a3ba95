"""The report of a headless run (``gradviz run --json``), built in the kernel.

It is plain JSON-able data, so the CLI process that prints it never loads
torch and never holds an object the script made.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any


def statement_json(r: Any) -> dict[str, Any]:
    return {
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


def json_report(session: Any, results: list[Any]) -> dict[str, Any]:
    snap = session.snapshot()
    return {
        "version": snap["version"],
        "device": snap["device"],
        "parse_error": snap["parse_error"],
        "statements": [statement_json(r) for r in results],
        "tensors": snap["tensors"],
        "graph": snap["graph"],
        "backward_passes": snap["backward_passes"],
        # torchviz.make_dot calls: the roots each asked for (drawn in "graph")
        "make_dot": snap["make_dot"],
        "grad_history": snap["grad_history"],
        "grad_events": snap["grad_events"],
        "memory": snap["memory"],
        **({"steps": session.trace_steps} if session.trace_steps is not None else {}),
    }
