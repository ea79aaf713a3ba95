"""One formatter for every number, value, byte count and shape gradviz shows.

The window's panels and canvas, the CLI, the exports and the library all print
through these functions, so ``1.6094``, ``4,000,000 B (3.8 MiB)`` and ``2×3``
read the same everywhere. Qt-free and torch-free.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from gradviz.i18n import translate

__all__ = ["ELLIPSIS", "clip", "fmt_bytes", "fmt_number", "fmt_shape", "fmt_value", "short_bytes"]

ELLIPSIS = "\u2026"


def fmt_number(value: Any) -> str:
    """Numbers the way a learner reads them: 0.6, 1.2, 1.6094, 0.008, 14.0.

    Integers stay integers; a float keeps its point (``125.0``) and at most four
    decimals; very large or very small floats use four significant digits.
    """
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return str(value)
        if value == 0:
            return "0.0"
        if value.is_integer() and abs(value) < 1e15:
            return f"{value:.1f}"
        if 1e-4 <= abs(value) < 1e6:
            text = f"{value:.4f}".rstrip("0").rstrip(".")
            if text not in ("0", "-0"):
                return text
        return f"{value:.4g}"
    return str(value)


def clip(text: str, max_chars: int | None) -> str:
    """Cut ``text`` to ``max_chars`` characters, marking the cut with an ellipsis."""
    if max_chars is None or len(text) <= max_chars:
        return text
    return text[: max(1, max_chars - 1)] + ELLIPSIS


def _fmt_list(value: Sequence[Any], budget: int | None) -> str:
    parts: list[str] = []
    used = 2  # the brackets
    for i, item in enumerate(value):
        if isinstance(item, (list, tuple)):
            inner = None if budget is None else max(budget - used - 5, 6)
            text = _fmt_list(item, inner)
        else:
            text = fmt_number(item)
        if budget is not None:
            sep = 2 if parts else 0
            more = 3 if i < len(value) - 1 else 0  # room for ", …"
            if parts and used + sep + len(text) + more > budget:
                parts.append(ELLIPSIS)
                break
            used += sep + len(text)
        parts.append(text)
    return "[" + ", ".join(parts) + "]"


def fmt_value(value: Any, max_chars: int | None = None) -> str:
    """A tensor value as the kernel sends it: a number, nested lists, or torch's
    summary string of a big tensor (squeezed to one line).

    With ``max_chars`` the text fits that many characters: a list keeps as many
    whole items as fit and ends in ``…``.
    """
    if value is None:
        return "None"
    if isinstance(value, (list, tuple)):
        text = _fmt_list(value, max_chars)
    elif isinstance(value, (bool, int, float)):
        text = fmt_number(value)
    else:
        text = " ".join(str(value).split())
    return clip(text, max_chars)


def fmt_bytes(n: int | float | None) -> str:
    """``4,000,000 B (3.8 MiB)``; small counts stay plain (``12 B``); None is ``–``."""
    if n is None:
        return "\u2013"
    n = int(n)
    text = f"{n:,} B"
    size = float(abs(n))
    for unit in ("KiB", "MiB", "GiB", "TiB"):
        if size < 1024:
            break
        size /= 1024
        if size < 1024 or unit == "TiB":
            return f"{text} ({size:.1f} {unit})"
    return text


def short_bytes(n: float) -> str:
    """The short form, for axis ticks and tight cells: ``3.8 MiB``, ``12 B``."""
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(size) < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GiB"


def fmt_shape(shape: Any) -> str:
    """``[2, 3]`` -> ``2×3``; a 0-d tensor reads ``scalar``; no shape reads ``''``."""
    if shape is None:
        return ""
    try:
        dims = [str(int(d)) for d in shape]
    except (TypeError, ValueError):
        return str(shape)
    # a 0-d tensor in the program's language (the window, gradviz run --lang)
    return "\u00d7".join(dims) if dims else translate("Fmt", "scalar")
