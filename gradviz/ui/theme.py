"""Colours and fonts shared by gradviz's widgets.

One place for the palette so the canvas, its legend and the panels beside it
agree on what "forward", "backward", "new" and each node kind look like.
Colours are plain hex strings (cheap to compare, easy to reuse in style
sheets and rich text); :func:`qcolor` turns one into a ``QColor``.

The node colours follow the exporter (:mod:`gradviz.export`) so a saved SVG
looks like the window.  "New" is violet rather than the exporter's pink so it
cannot be mistaken for the red of the backward pass when both show at once.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from PySide6.QtGui import QColor, QFont

__all__ = [
    "BACKGROUND",
    "BACKWARD",
    "BACKWARD_DONE_FILL",
    "BACKWARD_FILL",
    "FORWARD",
    "MUTED_TEXT",
    "NEW",
    "NODE_STYLES",
    "SELECTION",
    "STALE",
    "STALE_FILL",
    "STORAGE_COLOURS",
    "TEXT",
    "NodeStyle",
    "blend",
    "label_font",
    "mono_font",
    "qcolor",
    "storage_colour",
]

BACKGROUND = "#fbfcfe"
"""Canvas background: near-white so exported PNGs (pure white) look the same."""
TEXT = "#1f2430"
MUTED_TEXT = "#5c6370"
HINT_TEXT = "#8a93a3"

FORWARD = "#7b8aa3"
"""Edges of the graph as built by the forward pass (grey-blue)."""
BACKWARD = "#e03131"
"""Everything about the backward pass being stepped: executing node, carrying edges."""
BACKWARD_FILL = "#ffe3e3"
"""Fill of the node the engine is executing."""
BACKWARD_DONE_FILL = "#fff0f0"
"""Tint mixed into nodes this pass already executed."""
NEW = "#9c36b5"
"""Glow around what the last statement added."""
SELECTION = "#1c7ed6"
FREED = "#868e96"
#: a saved tensor modified in place after it was saved
STALE = "#c92a2a"
STALE_FILL = "#fff5f5"

EDGE_COLOURS = {
    "grad": FORWARD,
    "output": "#a3aec0",
    "leaf": "#2f9e44",
    "saved": "#e8590c",
}


@dataclass(frozen=True)
class NodeStyle:
    """Fill and border of one kind of node, and its name in the legend."""

    fill: str
    stroke: str
    legend: str


NODE_STYLES: dict[str, NodeStyle] = {
    "grad_fn": NodeStyle("#d6ebff", "#3b7dd8", "grad_fn (backward op)"),
    "accumulate_grad": NodeStyle("#e9ecef", "#7a7f87", "AccumulateGrad"),
    "leaf": NodeStyle("#c9f2c7", "#2f9e44", "leaf tensor (requires grad)"),
    "tensor": NodeStyle("#fff3b0", "#c9a100", "non-leaf tensor"),
    "no_grad": NodeStyle("#ffffff", "#adb5bd", "tensor, no grad"),
    "saved": NodeStyle("#ffd8a8", "#e8590c", "saved tensor"),
    "group": NodeStyle("#e3fafc", "#0c8599", "collapsed module / chain"),
}

STORAGE_COLOURS = (
    "#1098ad",
    "#d6336c",
    "#5f3dc4",
    "#2b8a3e",
    "#e67700",
    "#1864ab",
    "#a61e4d",
    "#5c940d",
)
"""Colours of shared-storage groups, picked by group number (``S3`` -> index 3)."""


def storage_colour(group: str) -> str:
    """The colour of storage group ``group`` (``"S3"``); stable across steps."""
    digits = "".join(ch for ch in str(group) if ch.isdigit())
    index = int(digits) if digits else sum(map(ord, str(group)))
    return STORAGE_COLOURS[index % len(STORAGE_COLOURS)]


@lru_cache(maxsize=256)
def qcolor(hex_colour: str, alpha: int = 255) -> QColor:
    """``QColor`` for a hex string, with an optional alpha (0-255); cached.

    The result is shared: copy it (``QColor(c)``) before changing it.
    """
    colour = QColor(hex_colour)
    colour.setAlpha(alpha)
    return colour


@lru_cache(maxsize=1024)
def blend(a: str, b: str, t: float) -> str:
    """Hex colour ``t`` of the way from ``a`` to ``b`` (0 gives ``a``)."""
    ca, cb = QColor(a), QColor(b)
    mix = QColor(
        round(ca.red() + (cb.red() - ca.red()) * t),
        round(ca.green() + (cb.green() - ca.green()) * t),
        round(ca.blue() + (cb.blue() - ca.blue()) * t),
    )
    return mix.name()


def mono_font(pixel_size: int = 12, *, bold: bool = False) -> QFont:
    """The node font: a monospace face whose advance fits the layout's 7.5 px per character."""
    font = QFont("DejaVu Sans Mono")
    font.setStyleHint(QFont.StyleHint.Monospace)
    font.setFixedPitch(True)
    font.setPixelSize(pixel_size)
    font.setBold(bold)
    return font


def label_font(pixel_size: int = 10, *, bold: bool = False, italic: bool = False) -> QFont:
    """A small proportional font for badges, edge labels and the legend."""
    font = QFont("DejaVu Sans")
    font.setStyleHint(QFont.StyleHint.SansSerif)
    font.setPixelSize(pixel_size)
    font.setBold(bold)
    font.setItalic(italic)
    return font
