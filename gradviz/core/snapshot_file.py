"""Reading ``*.gradviz.json`` snapshot files: torch-free, shared by the API and the window.

The window process never imports torch, so the format check lives here rather
than in :mod:`gradviz.api` (see docs/snapshot-format.md).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SNAPSHOT_FORMAT = "gradviz-snapshot"
SNAPSHOT_VERSION = 1


class SnapshotError(ValueError):
    """The file is not a snapshot this window can show; the message says why."""


def parse_snapshot(data: Any, name: str = "the snapshot") -> dict[str, Any]:
    """``data`` itself when it is a complete snapshot gradviz can read, else SnapshotError."""
    if not isinstance(data, dict) or data.get("format") != SNAPSHOT_FORMAT:
        raise SnapshotError(f"{name} is not a gradviz snapshot (no 'format: {SNAPSHOT_FORMAT}')")
    try:
        version = int(data.get("version", 0))
    except (TypeError, ValueError):
        raise SnapshotError(
            f"{name} has an unreadable format version: {data.get('version')!r}"
        ) from None
    if version > SNAPSHOT_VERSION:
        raise SnapshotError(
            f"{name} was written by a newer gradviz (format version {version}); "
            f"this one reads version {SNAPSHOT_VERSION}"
        )
    for key in ("graph", "tensors"):
        if key not in data:
            raise SnapshotError(f"{name} is not a complete gradviz snapshot (no '{key}')")
    graph = data["graph"]
    if not isinstance(graph, dict) or not isinstance(graph.get("nodes", []), list):
        raise SnapshotError(f"{name} has no readable graph (expected nodes and edges)")
    return data


def read_snapshot(path: str | Path) -> dict[str, Any]:
    """Read and check a ``*.gradviz.json`` file (as ``gradviz.load`` does, without torch)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SnapshotError(f"cannot read {path}: {exc}") from None
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise SnapshotError(f"{path.name} is not a gradviz snapshot (not JSON: {exc})") from None
    return parse_snapshot(data, path.name)
