"""Reading ``*.gradviz.json`` snapshot files: torch-free, shared by the API, the CLI and the window.

The window process never imports torch, so the format check lives here rather
than in :mod:`gradviz.api`. A file is checked once, here, against the JSON
Schema shipped in the package (``gradviz/graph/snapshot.schema.json``, described
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
    text = resources.files("gradviz.graph").joinpath(SCHEMA_FILE).read_text(encoding="utf-8")
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


@functools.lru_cache(maxsize=1)
def _validator_without_graph_items() -> Any:
    """The schema compiled with ``graph.nodes[*]`` and ``graph.edges[*]`` left unchecked.

    For a file whose nodes and edges :func:`_node_ok` and :func:`_edge_ok` passed: the
    rest of the file (tensors, passes, history, ...) still gets the full check."""
    import fastjsonschema

    schema = snapshot_schema()  # a fresh copy: safe to change
    graph = schema["$defs"]["graph"]["properties"]
    graph["nodes"]["items"] = graph["edges"]["items"] = {}
    return fastjsonschema.compile(schema)


# The fast path for graph.nodes[*] and graph.edges[*] ($defs/node and $defs/edge of the
# schema), where a 100k-node file spends nearly all of the compiled validator's time:
# 0.65 s of it, where these two predicates take 0.13-0.17 s (schema_problem, nesting
# check included: 0.9 s -> 0.4 s). Straight-line code, one test per property of the
# schema: a loop over each item's keys took a third longer. They may be stricter than the
# schema, never more lenient: types are matched exactly (a bool is no integer; 3.0, which
# fastjsonschema takes for an integer, a tuple or a str subclass is refused here), and a
# False only means "not sure": the compiled validator then decides, and writes the
# message. Keys the schema does not name may hold anything, as in the schema.
_STR_OR_NULL = frozenset({str, type(None)})
_INT_OR_NULL = frozenset({int, type(None)})  # $defs/optional_int
_STALE = frozenset({bool, list, dict, type(None)})
_NODE_KINDS = frozenset({"grad_fn", "accumulate_grad", "tensor", "saved"})
_EDGE_KINDS = frozenset({"grad", "output", "leaf", "saved"})


def _node_ok(node: Any) -> bool:
    """True only for a node that $defs/node accepts (False: not sure, ask the schema)."""
    if type(node) is not dict:
        return False
    get = node.get  # a missing key reads as None (or the default given), which passes
    node_id, kind, names, dims = get("id"), get("kind"), get("vars", []), get("shape")
    if not (
        type(node_id) is str and node_id != ""  # required, like kind and label
        and type(kind) is str and kind in _NODE_KINDS
        and type(get("label")) is str
        and type(names) is list
        and (dims is None or type(dims) is list)
        and type(get("dtype")) in _STR_OR_NULL
        and type(get("device")) in _STR_OR_NULL
        and type(get("module")) in _STR_OR_NULL
        and type(get("storage")) in _STR_OR_NULL
        and type(get("statement")) in _INT_OR_NULL
        and type(get("line")) in _INT_OR_NULL
        and type(get("is_leaf", False)) is bool
        and type(get("requires_grad", False)) is bool
        and type(get("new", False)) is bool
        and type(get("freed", False)) is bool
        and ("saved" not in node or type(node["saved"]) is dict)
        and type(get("stale")) in _STALE
    ):
        return False
    for name in names:  # $defs/name_list
        if type(name) is not str:
            return False
    for size in dims or ():  # $defs/shape
        if type(size) is not int or size < 0:
            return False
    return True


def _edge_ok(edge: Any) -> bool:
    """True only for an edge that $defs/edge accepts (False: not sure, ask the schema)."""
    if type(edge) is not dict:
        return False
    get = edge.get  # a missing key reads as None (or the default given)
    source, target, kind = get("source"), get("target"), get("kind", "grad")
    return (
        type(source) is str and source != ""  # required, like target
        and type(target) is str and target != ""
        and type(kind) is str and kind in _EDGE_KINDS
        and type(get("input")) in _INT_OR_NULL
        and type(get("new", False)) is bool
    )


def _graph_items_ok(data: Any) -> bool:
    """Whether every item of ``data["graph"]["nodes"]`` and ``["edges"]`` is surely valid."""
    graph = data.get("graph") if type(data) is dict else None
    if type(graph) is not dict:
        return False
    nodes, edges = graph.get("nodes"), graph.get("edges")
    return (
        type(nodes) is list and type(edges) is list
        and all(map(_node_ok, nodes)) and all(map(_edge_ok, edges))
    )


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


def _too_deep(data: Any) -> bool:
    """Whether ``data`` nests lists and objects more than MAX_DEPTH levels deep.

    Level by level, keeping only the containers: a 100k-node file's 1.7 million values
    take 0.2 s, where a walk that visits every value with its path took 1.2 s."""
    containers = (dict, list)
    level = [data] if isinstance(data, containers) else []
    depth = 0
    while level:  # the containers ``depth`` levels down
        if depth >= MAX_DEPTH:
            return any(len(value) for value in level)  # anything in them is too deep
        depth += 1
        deeper: list[Any] = []
        for value in level:
            items = value.values() if isinstance(value, dict) else value
            deeper += [v for v in items if isinstance(v, containers)]
        level = deeper
    return False


def _nesting_problem(data: Any) -> str | None:
    """Where ``data`` nests lists and objects deeper than MAX_DEPTH (iterative walks)."""
    if not _too_deep(data):
        return None
    # the rare refusal: walk again with paths, to say where
    stack: list[tuple[Any, int, tuple[Any, ...]]] = [(data, 0, ())]
    while stack:
        value, depth, path = stack.pop()
        if depth > MAX_DEPTH:
            return f"at {_where(path[:8])}…: nested more than {MAX_DEPTH} levels deep"
        if isinstance(value, dict):
            stack.extend((v, depth + 1, (*path, k)) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((v, depth + 1, (*path, i)) for i, v in enumerate(value))
    return f"nested more than {MAX_DEPTH} levels deep"


def schema_problem(data: Any) -> str | None:
    """The first thing that makes ``data`` break the schema (where and what), or None.

    When every node and edge passes :func:`_node_ok`/:func:`_edge_ok`, the rest of the
    file is checked without them (a 100k-node file: 0.4 s instead of 0.9 s); any other
    file, and every refusal's message, gets the full validator, as before."""
    from fastjsonschema import JsonSchemaValueException

    nesting = _nesting_problem(data)
    if nesting:
        return nesting
    try:
        if _graph_items_ok(data):  # the common case: skip the slow per-item checks
            try:
                _validator_without_graph_items()(data)
                return None
            except JsonSchemaValueException:
                pass  # damaged elsewhere: the full check below says where, as it always did
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
