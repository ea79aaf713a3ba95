"""Colours and fonts shared by gradviz's widgets.

The colours live in :mod:`gradviz.graph.style` (Qt-free, so the exports and the
CLI draw with the very same table); this module re-exports them for the
widgets, adds what needs Qt (``QColor``, fonts) and picks the theme that
suits a palette: :func:`palette_theme` gives :data:`DARK` when the palette's
window colour is dark, else :data:`LIGHT`.

The module-level colour names (``TEXT``, ``MUTED_TEXT``, ``NODE_STYLES``...) are
the active theme's: the light one until :func:`activate` picks the one that
suits the application's palette (gradviz's QApplication does, so the panels'
text reads on a dark window); the canvas asks its own :class:`Theme`.
"""

from __future__ import annotations

from functools import lru_cache

from PySide6.QtGui import QColor, QFont, QPalette

from gradviz.graph.style import (
    DARK,
    LIGHT,
    NodeStyle,
    Theme,
    blend,
    corner_radius,
    style_key,
)
from gradviz.graph.style import storage_colour as _storage_colour

__all__ = [
    "BACKGROUND",
    "BACKWARD",
    "BACKWARD_DONE_FILL",
    "BACKWARD_FILL",
    "DARK",
    "EDGE_COLOURS",
    "FORWARD",
    "LIGHT",
    "MUTED_TEXT",
    "NEW",
    "NODE_STYLES",
    "SELECTION",
    "STALE",
    "STALE_FILL",
    "STORAGE_COLOURS",
    "TEXT",
    "NodeStyle",
    "activate",
    "Theme",
    "blend",
    "corner_radius",
    "is_dark_palette",
    "label_font",
    "mono_font",
    "palette_theme",
    "qcolor",
    "storage_colour",
    "style_key",
]

BACKGROUND = LIGHT.background
"""Canvas background: near-white so exported PNGs (pure white) look the same."""
TEXT = LIGHT.text
MUTED_TEXT = LIGHT.muted_text
HINT_TEXT = LIGHT.hint_text
FORWARD = LIGHT.forward
BACKWARD = LIGHT.backward
BACKWARD_FILL = LIGHT.backward_fill
BACKWARD_DONE_FILL = LIGHT.backward_done_fill
NEW = LIGHT.new
SELECTION = LIGHT.selection
FREED = LIGHT.freed
STALE = LIGHT.stale
STALE_FILL = LIGHT.stale_fill
EDGE_COLOURS = dict(LIGHT.edges)
NODE_STYLES: dict[str, NodeStyle] = dict(LIGHT.nodes)
STORAGE_COLOURS = LIGHT.storage
"""Colours of shared-storage groups, picked by group number (``S3`` -> index 3)."""


def storage_colour(group: str, theme: Theme = LIGHT) -> str:
    """The colour of storage group ``group`` (``"S3"``); stable across steps."""
    return _storage_colour(group, theme)


def activate(palette: QPalette) -> Theme:
    """Make the module-level colours the theme that suits ``palette`` (call before the
    widgets are made: they read these names when they build their text and sheets)."""
    chosen = palette_theme(palette)
    g = globals()
    g.update(
        BACKGROUND=chosen.background, TEXT=chosen.text, MUTED_TEXT=chosen.muted_text,
        HINT_TEXT=chosen.hint_text, FORWARD=chosen.forward, BACKWARD=chosen.backward,
        BACKWARD_FILL=chosen.backward_fill, BACKWARD_DONE_FILL=chosen.backward_done_fill,
        NEW=chosen.new, SELECTION=chosen.selection, FREED=chosen.freed, STALE=chosen.stale,
        STALE_FILL=chosen.stale_fill, EDGE_COLOURS=dict(chosen.edges),
        NODE_STYLES=dict(chosen.nodes), STORAGE_COLOURS=chosen.storage,
    )  # fmt: skip
    return chosen


def is_dark_palette(palette: QPalette) -> bool:
    """True when the palette's window colour is dark (lightness under 128)."""
    return palette.color(QPalette.ColorRole.Window).lightness() < 128


def palette_theme(palette: QPalette) -> Theme:
    """The theme that suits ``palette``: dark on a dark window colour."""
    return DARK if is_dark_palette(palette) else LIGHT


@lru_cache(maxsize=512)
def qcolor(hex_colour: str, alpha: int = 255) -> QColor:
    """``QColor`` for a hex string, with an optional alpha (0-255); cached.

    The result is shared: copy it (``QColor(c)``) before changing it.
    """
    colour = QColor(hex_colour)
    colour.setAlpha(alpha)
    return colour


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
