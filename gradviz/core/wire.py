"""One JSON encoder and one decoder for everything that crosses a process border.

The kernel's replies, ``gradviz run --json`` and saved reports all go through
:func:`dumps`; the kernel's requests come in through :func:`loads_request`.
Both are total: whatever a script left behind (NaN, infinities, objects,
self-references, a list nested 100,000 deep, a 50 MB string), encoding gives
valid JSON, and a malformed request gives :class:`BadRequest`, never a crash.

Torch-free, so the window process can use it without loading torch.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

#: deeper structures are cut with a marker (JSON readers recurse)
MAX_DEPTH = 64
#: longer strings are cut with a marker
MAX_STRING = 1_000_000
#: longer lists and dicts are cut with a marker
MAX_ITEMS = 1_000_000
#: a request line longer than this is refused before parsing
MAX_REQUEST_BYTES = 8 * 1024 * 1024


class BadRequest(ValueError):
    """A request the kernel cannot act on; the reply says why."""


def dumps(value: Any, *, indent: int | None = None) -> str:
    """Encode anything as strict JSON (no NaN), never raising.

    The fast path is ``json.dumps`` itself; only a value it refuses (a NaN, an
    object, a too-deep structure) pays for the sanitizing walk.
    """
    try:
        return json.dumps(value, allow_nan=False, indent=indent, check_circular=True)
    except (ValueError, TypeError, RecursionError, OverflowError):
        pass
    return json.dumps(sanitize(value), allow_nan=False, indent=indent)


def sanitize(value: Any) -> Any:
    """A JSON-able copy of ``value``: non-finite floats as strings, other objects as
    their type name, bounded depth, length and size. Iterative: no recursion limit."""
    root: list[Any] = [None]
    # (value, container, key, depth, ancestors): fill container[key] with value's copy
    stack: list[tuple[Any, Any, Any, int, frozenset[int]]] = [(value, root, 0, 0, frozenset())]
    while stack:
        item, parent, key, depth, ancestors = stack.pop()
        parent[key] = _leaf(item, depth, ancestors)
        if isinstance(parent[key], _Container):
            marker = parent[key]
            inner = ancestors | {id(item)}
            if isinstance(item, Mapping):
                out_d: dict[str, Any] = {}
                parent[key] = out_d
                for i, (k, v) in enumerate(item.items()):
                    if i >= MAX_ITEMS:
                        out_d["…"] = f"<{len(item) - MAX_ITEMS:,} more entries>"
                        break
                    name = k if isinstance(k, str) else _scalar_key(k)
                    out_d[name] = None
                    stack.append((v, out_d, name, depth + 1, inner))
            else:
                seq = marker.items
                out_l: list[Any] = [None] * min(len(seq), MAX_ITEMS)
                parent[key] = out_l
                for i in range(len(out_l)):
                    stack.append((seq[i], out_l, i, depth + 1, inner))
                if len(seq) > MAX_ITEMS:
                    out_l.append(f"<{len(seq) - MAX_ITEMS:,} more items>")
    return root[0]


class _Container:
    __slots__ = ("items",)

    def __init__(self, items: Any):
        self.items = items


def _leaf(item: Any, depth: int, ancestors: frozenset[int]) -> Any:
    if item is None or isinstance(item, bool):
        return item
    if isinstance(item, int):
        if item.bit_length() > 64:
            return f"<int of {item.bit_length():,} bits>"
        return item
    if isinstance(item, float):
        if math.isnan(item) or math.isinf(item):
            return str(item)
        return item
    if isinstance(item, str):
        if len(item) > MAX_STRING:
            return item[:MAX_STRING] + f"… <{len(item) - MAX_STRING:,} more characters>"
        return item
    if isinstance(item, (list, tuple, Mapping)):
        if id(item) in ancestors:
            return "<cycle>"
        if depth >= MAX_DEPTH:
            return "<nested too deeply>"
        if isinstance(item, Mapping):
            return _Container(item)
        return _Container(list(item) if isinstance(item, tuple) else item)
    return f"<{type(item).__name__}>"


def _scalar_key(key: Any) -> str:
    if isinstance(key, (int, float, bool)) or key is None:
        return json.dumps(_leaf(key, 0, frozenset()))
    return f"<{type(key).__name__}>"


# --- requests ---------------------------------------------------------------------

#: command -> {field: allowed types}; fields not listed are refused
REQUEST_FIELDS: dict[str, dict[str, tuple[type, ...]]] = {
    "ping": {},
    "shutdown": {},
    "load": {"source": (str,), "device": (str,), "run_to": (int, type(None)),
             "zero_points": (list, type(None)), "time_limit_s": (int, float),
             "filename": (str,)},
    "set_device": {"device": (str,), "run_to": (int, type(None))},
    "step": {},
    "skip": {"force": (bool,)},
    "run_to_end": {"keep_going": (bool,)},
    "run_to": {"index": (int,)},
    "run_to_line": {"line": (int,)},
    "step_back": {},
    "reset": {},
    "zero_grad": {},
    "snapshot": {},
    "report": {"source": (str,), "device": (str,), "keep_going": (bool,),
               "layout": (bool,), "time_limit_s": (int, float), "trace": (bool,),
               "filename": (str,)},
    "debug": {"mode": (str,), "breakpoints": (list,)},
    "debug_stop": {},
}
REQUIRED_FIELDS: dict[str, tuple[str, ...]] = {
    "run_to": ("index",), "run_to_line": ("line",), "set_device": ("device",),
    "report": ("source",),
}


def loads_request(line: str | bytes) -> dict[str, Any]:
    """Parse and check one request line; raise :class:`BadRequest` with the reason."""
    if len(line) > MAX_REQUEST_BYTES:
        raise BadRequest(f"request of {len(line):,} bytes; the limit is {MAX_REQUEST_BYTES:,}")
    try:
        request = json.loads(line)
    except RecursionError:
        raise BadRequest("request nested too deeply") from None
    except (ValueError, TypeError) as exc:  # JSONDecodeError, huge integers, bad UTF-8
        raise BadRequest(f"bad JSON: {str(exc)[:200]}") from None
    if not isinstance(request, dict):
        raise BadRequest("a request must be a JSON object")
    rid = request.get("id")
    if rid is not None and not (isinstance(rid, (int, str)) and not isinstance(rid, bool)):
        raise BadRequest("'id' must be an integer or a string")
    if isinstance(rid, int) and abs(rid) > 2**53:
        raise BadRequest("'id' is out of range")
    cmd = request.get("cmd")
    if not isinstance(cmd, str) or cmd not in REQUEST_FIELDS:
        raise BadRequest(f"unknown command {str(cmd)[:40]!r}")
    fields = REQUEST_FIELDS[cmd]
    for name, value in request.items():
        if name in ("id", "cmd"):
            continue
        if name == "delta":  # any command: reply with what changed (gradviz.core.delta)
            if not isinstance(value, bool):
                raise BadRequest("'delta' has the wrong type")
            continue
        if name not in fields:
            raise BadRequest(f"'{cmd}' takes no field {name[:40]!r}")
        if isinstance(value, bool) and bool not in fields[name]:
            raise BadRequest(f"'{name}' has the wrong type")
        if not isinstance(value, fields[name]):
            raise BadRequest(f"'{name}' has the wrong type")
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 2**31:
            raise BadRequest(f"'{name}' is out of range")
    for name in REQUIRED_FIELDS.get(cmd, ()):
        if name not in request:
            raise BadRequest(f"'{cmd}' needs '{name}'")
    limit = request.get("time_limit_s")
    if limit is not None and not (0 < limit <= 3600):
        raise BadRequest("'time_limit_s' must be between 0 and 3600")
    points = request.get("zero_points")
    if points is not None and not all(
        isinstance(p, int) and not isinstance(p, bool) and 0 <= p < 2**31 for p in points
    ):
        raise BadRequest("'zero_points' must be a list of small integers")
    return request
