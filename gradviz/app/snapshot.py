"""Saved snapshots in the window: recognise, validate and turn one into a state to render.

Torch-free on purpose: the window process never imports torch; the format
check itself is :mod:`gradviz.graph.snapshot_file`, shared with :func:`gradviz.api.load`.
"""

from __future__ import annotations

from typing import Any

from gradviz.graph.snapshot_file import (  # re-exported for the window
    SNAPSHOT_FORMAT,
    SNAPSHOT_VERSION,
    SnapshotError,
    parse_snapshot,
    read_snapshot,
)

#: a statement's line number beyond this is not a script's (the editor would fill the gap)
MAX_SCRIPT_LINES = 1_000_000

__all__ = [
    "SNAPSHOT_FORMAT",
    "SNAPSHOT_VERSION",
    "SnapshotError",
    "grad_events_from_passes",
    "parse_snapshot",
    "read_snapshot",
    "script_from_snapshot",
    "snapshot_from_graph_export",
    "snapshot_state",
    "summary",
]


def script_from_snapshot(data: Any) -> str | None:
    """The script behind a snapshot saved from a session: its statements at their lines.

    None when ``data`` carries no statements (an API snapshot, or not a snapshot).
    """
    if not isinstance(data, dict) or not isinstance(data.get("statements"), list):
        return None
    lines: dict[int, str] = {}
    for st in data["statements"]:
        if not isinstance(st, dict) or not isinstance(st.get("source"), str):
            return None
        line = st.get("line")
        if not isinstance(line, int) or isinstance(line, bool) or not 1 <= line <= MAX_SCRIPT_LINES:
            return None
        for offset, chunk in enumerate(st["source"].splitlines()):
            lines.setdefault(line + offset, chunk)
    if not lines:
        return None
    return "\n".join(lines.get(n, "") for n in range(1, max(lines) + 1)) + "\n"


def snapshot_from_graph_export(data: Any) -> dict[str, Any] | None:
    """The graph ``gradviz export -o graph.json`` wrote (``{nodes, edges, positions}``) as
    a snapshot of that graph alone (no tensors, no passes), for ``gradviz open`` and File
    > Open; None for anything else. The caller checks it as any snapshot
    (:func:`parse_snapshot`)."""
    if not isinstance(data, dict) or "format" in data or "graph" in data:
        return None
    nodes, edges = data.get("nodes"), data.get("edges")
    if not isinstance(nodes, list) or not isinstance(edges, list):
        return None
    snapshot: dict[str, Any] = {
        "format": SNAPSHOT_FORMAT,
        "version": SNAPSHOT_VERSION,
        "source": "export",
        "graph": {"nodes": nodes, "edges": edges},
        "tensors": {},
    }
    if isinstance(data.get("positions"), dict):
        snapshot["positions"] = data["positions"]
    return snapshot


def grad_events_from_passes(data: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Per leaf, the gradient each recorded pass accumulated (for the accumulation panel).

    API snapshots carry ``grad_history`` (values only) and the passes; the
    passes say which pass each value came from.
    """
    events: dict[str, list[dict[str, Any]]] = {}
    for index, bpass in enumerate(data.get("backward_passes") or []):
        if not isinstance(bpass, dict):
            continue
        for step in bpass.get("steps") or []:
            if step.get("label") != "AccumulateGrad":
                continue
            grads = step.get("grad_outputs") or [None]
            for name in step.get("vars") or []:
                events.setdefault(name, []).append(
                    {"kind": "backward", "pass_index": index, "value": grads[0], "statement": None}
                )
    if events:
        return events
    history = data.get("grad_history") or {}
    return {
        str(name): [{"kind": "backward", "value": v, "statement": None} for v in values]
        for name, values in history.items()
        if isinstance(values, list)
    }


def _not_new(items: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """``items`` with ``new`` false, copying only those that say otherwise (the caller's
    dicts are never changed)."""
    return [item if item.get("new") is False else {**item, "new": False} for item in items or []]


def snapshot_state(data: dict[str, Any]) -> dict[str, Any]:
    """A state the window's panels render, from a snapshot that has no statements to step."""
    graph = data.get("graph") or {}
    memory = data.get("memory") or {}
    state: dict[str, Any] = {
        "version": data.get("version"),
        "source": data.get("source", "api"),
        "device": str(data.get("device", "cpu")),
        "cursor": 0,
        "at_end": True,
        "parse_error": None,
        "statements": [],
        "results": [],
        "new_results": [],
        "tensors": dict(data.get("tensors") or {}),
        # Nothing in a saved snapshot is "new this step": no glow.
        "graph": {"nodes": _not_new(graph.get("nodes")), "edges": _not_new(graph.get("edges"))},
        "backward_passes": list(data.get("backward_passes") or []),
        "grad_history": dict(data.get("grad_history") or {}),
        "grad_events": dict(data.get("grad_events") or {}) or grad_events_from_passes(data),
        "memory": {"statements": [], "totals": dict(memory.get("totals") or {})},
        "read_only": True,
    }
    return state


def summary(state: dict[str, Any]) -> tuple[int, int]:
    """(nodes, backward passes) of a snapshot state."""
    nodes = len((state.get("graph") or {}).get("nodes") or [])
    passes = len(state.get("backward_passes") or [])
    return nodes, passes
