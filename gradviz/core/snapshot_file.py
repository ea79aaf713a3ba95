"""Reading ``*.gradviz.json`` snapshot files: torch-free, shared by the API, the CLI and the window.

The window process never imports torch, so the format check lives here rather
than in :mod:`gradviz.api`. A file is checked once, here, against the JSON
Schema shipped in the package (``gradviz/core/snapshot.schema.json``, described
in docs/snapshot-format.md), then for what a schema cannot say (unique node ids,
edges between known nodes). Whatever passes can be drawn without a TypeError.
"""

from __future__ import annotations

import functools
import json
from importlib import resources
from pathlib import Path
from typing import Any

SNAPSHOT_FORMAT = "gradviz-snapshot"
SNAPSHOT_VERSION = 1
SCHEMA_FILE = "snapshot.schema.json"
#: a message quotes at most this much of the offending value
_MAX_QUOTE = 160
#: deeper nesting than this is no file gradviz wrote (a value nests once per tensor
#: dimension); refused before any recursive reader (the schema check, a panel) sees it
MAX_DEPTH = 100


class SnapshotError(ValueError):
    """The file is not a snapshot gradviz can show; the message says why."""


def snapshot_schema() -> dict[str, Any]:
    """The JSON Schema of format version 1, as shipped in the package."""
    text = resources.files("gradviz.core").joinpath(SCHEMA_FILE).read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


@functools.lru_cache(maxsize=1)
def _validator() -> Any:
    """The schema compiled to a Python function (once; ~50 ms).

    fastjsonschema turns the schema into straight-line Python: a 5,000-op chain
    (15,000 nodes) checks in about 0.25 s, where an interpreting validator
    (jsonschema) took 3.4 s, on the window's GUI thread.
    """
    import fastjsonschema

    return fastjsonschema.compile(snapshot_schema())


def _where(path: Any) -> str:
    """``graph.nodes[3].id`` for a path of keys and list indices."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "the top level"


def _located(name: str, message: str) -> str:
    """fastjsonschema's ``data.graph.nodes[3].id must be string`` as ``at graph.nodes[3].id: must be string``."""
    where = name.removeprefix("data").removeprefix(".") or "the top level"
    what = message.removeprefix(name).strip()
    return f"at {where}: {_short(what)}"


def _short(text: str) -> str:
    return text if len(text) <= _MAX_QUOTE else text[: _MAX_QUOTE - 1] + "…"


def _nesting_problem(data: Any) -> str | None:
    """Where ``data`` nests lists and objects deeper than MAX_DEPTH (an iterative walk)."""
    stack: list[tuple[Any, int, tuple[Any, ...]]] = [(data, 0, ())]
    while stack:
        value, depth, path = stack.pop()
        if depth > MAX_DEPTH:
            return f"at {_where(path[:8])}…: nested more than {MAX_DEPTH} levels deep"
        if isinstance(value, dict):
            stack.extend((v, depth + 1, (*path, k)) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((v, depth + 1, (*path, i)) for i, v in enumerate(value))
    return None


def schema_problem(data: Any) -> str | None:
    """The first thing that makes ``data`` break the schema (where and what), or None."""
    from fastjsonschema import JsonSchemaValueException

    nesting = _nesting_problem(data)
    if nesting:
        return nesting
    try:
        _validator()(data)
    except JsonSchemaValueException as error:
        return _located(str(error.name), str(error.message))
    except RecursionError:
        return "values are nested too deeply"
    return None


def _graph_problem(graph: dict[str, Any]) -> str | None:
    """What the schema cannot check: node ids are unique and edges join known nodes."""
    seen: set[str] = set()
    for i, node in enumerate(graph["nodes"]):
        if node["id"] in seen:
            return f"at graph.nodes[{i}]: the node id {_short(repr(node['id']))} is used twice"
        seen.add(node["id"])
    for i, edge in enumerate(graph["edges"]):
        for end in ("source", "target"):
            if edge[end] not in seen:
                return (
                    f"at graph.edges[{i}].{end}: {_short(repr(edge[end]))} is not the id "
                    "of a node in graph.nodes"
                )
    return None


def parse_snapshot(data: Any, name: str = "the snapshot") -> dict[str, Any]:
    """``data`` itself when it is a snapshot gradviz can show, else SnapshotError saying why."""
    if not isinstance(data, dict) or data.get("format") != SNAPSHOT_FORMAT:
        raise SnapshotError(f"{name} is not a gradviz snapshot (no 'format: {SNAPSHOT_FORMAT}')")
    version = data.get("version", 0)
    if not isinstance(version, int) or isinstance(version, bool):
        raise SnapshotError(f"{name} has an unreadable format version: {_short(repr(version))}")
    if version > SNAPSHOT_VERSION:
        raise SnapshotError(
            f"{name} was written by a newer gradviz (format version {version}); "
            f"this one reads version {SNAPSHOT_VERSION}"
        )
    for key in ("graph", "tensors"):
        if key not in data:
            raise SnapshotError(f"{name} is not a complete gradviz snapshot (no '{key}')")
    problem = schema_problem(data) or _graph_problem(data["graph"])
    if problem:
        raise SnapshotError(
            f"{name} is a damaged gradviz snapshot ({problem}); "
            "see docs/snapshot-format.md for the format"
        )
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
    except (ValueError, RecursionError) as exc:
        raise SnapshotError(f"{path.name} is not a gradviz snapshot (not JSON: {exc})") from None
    return parse_snapshot(data, path.name)


def looks_like_snapshot(path: str | Path) -> bool:
    """True for a ``.json`` file, or any file whose JSON names the snapshot format.

    ``gradviz run`` and ``gradviz export`` take scripts and snapshots; this
    tells them apart without running anything.
    """
    path = Path(path)
    if path.suffix.lower() == ".json":
        return True
    try:
        with path.open("rb") as fh:
            head = fh.read(4096).lstrip()
    except OSError:
        return False
    return head.startswith(b"{") and f'"{SNAPSHOT_FORMAT}"'.encode() in head
