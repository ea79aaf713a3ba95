"""The canvas's picture written to a file, outside the widget: SVG (the one renderer,
:func:`gradviz.graph.render_svg.render_svg`, light theme, as ``gradviz export`` and
``Snapshot.to_svg()`` draw it) or PNG (that SVG rendered at twice its size)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from gradviz.graph.render_svg import render_svg
from gradviz.graph.style import LIGHT
from gradviz.ui.i18n import translate

if TYPE_CHECKING:
    from .view import GraphCanvas


def canvas_svg(canvas: GraphCanvas) -> str:
    """The graph on ``canvas`` as an SVG document; the step's transient highlights (the
    backward step, the selection) are left out."""
    nodes, edges, positions = canvas.picture()
    return render_svg(nodes, edges, positions, LIGHT)


def export_canvas(canvas: GraphCanvas, path: str) -> None:
    """Write the whole graph on ``canvas`` to ``path``: SVG or PNG, by suffix. Raises
    ValueError for any other suffix."""
    suffix = Path(path).suffix.lower()
    if suffix not in (".png", ".svg"):
        raise ValueError(
            translate("Canvas", "cannot export to {what}: use .png or .svg").format(
                what=repr(suffix) if suffix else translate("Canvas", "a file without suffix")
            )
        )
    svg = canvas_svg(canvas)
    if suffix == ".svg":
        Path(path).write_text(svg, encoding="utf-8")
        return
    from gradviz.export import svg_to_png

    svg_to_png(svg, path)
