"""One JSON encoder and one decoder for everything that crosses a process border.

The kernel's replies, ``gradviz run --json`` and saved reports all go through
:func:`dumps`, which is total: whatever a script left behind (NaN, infinities,
objects, self-references, a list nested 100,000 deep, a 50 MB string), encoding
gives valid JSON, never a crash. (Requests are typed and checked by
:mod:`gradviz.protocol`.)

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
