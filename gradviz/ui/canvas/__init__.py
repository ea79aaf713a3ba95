"""The graph canvas: the real autograd graph, laid out by the core, drawn fast.

:class:`GraphCanvas` receives the kernel's JSON (``graph`` and ``positions``
of a state message) and speaks in node ids; it knows nothing about torch.

It draws with the rules every gradviz picture shares: the colours of
:mod:`gradviz.graph.style` (the dark theme when the palette is dark), edges
routed around boxes by :mod:`gradviz.graph.routing`, values written by
:mod:`gradviz.graph.fmt`; its SVG export *is* :func:`gradviz.graph.render_svg.render_svg`.

Speed (STYLE.md section 4): the scene is updated in place on every step
(nodes whose ids persist are kept and only moved or restyled), nodes are
cached in device coordinates and drop their text when tiny on screen, edges
sit on a fixed Z layer below the nodes. A step re-routes only the edges whose
route a changed box can touch, and a step that only turns "new" glows off
(:attr:`gradviz.graph.delta.GraphChanges.renewed`) only repaints.

Big graphs (issue 12): each node is a plain record (:class:`_Node`: the
graph's own attribute dict, its place, a box shape shared by every node whose
text reads alike). Past :data:`LAZY_NODE_THRESHOLD` nodes a node gets a
:class:`NodeItem` only when it is on screen at a readable zoom, or when asked
for (:meth:`GraphCanvas.node_item`, a click, a tooltip); tiles of the scene
(:class:`_NodeTile`) paint the others with the same code, as flat rectangles
in a few calls when tiny. Past :data:`BULK_EDGE_THRESHOLD` edges, bands of the
scene (:class:`_EdgeBand`) paint the edges in bulk, one path per style, and
route them when first painted. A 100,000-node graph builds in about a second
and takes about 120 MB.

The legend sits in a strip below the view (a viewport margin), so it never
covers the graph; the empty-graph hint is a child widget of the view, so
scrolling never repaints it.

One module per feature: :mod:`.view` (GraphCanvas: the scene, placing nodes and
edges, big graphs' tiles and bands, the mouse), :mod:`.navigation` (zoom, fit, the
view that follows each step), :mod:`.backward` (the backward pass's step drawn on
the graph), :mod:`.nodes`, :mod:`.edges`, :mod:`.storage` (shared-storage links),
:mod:`.legend`, :mod:`.export` (SVG and PNG of what the canvas shows, outside the
widget) and :mod:`._common` (constants, small helpers).
"""

from __future__ import annotations

from ._common import (
    BULK_EDGE_THRESHOLD,
    FIT_MAX_ZOOM,
    LAZY_NODE_THRESHOLD,
    MAX_ZOOM,
    MIN_ZOOM,
    READABLE_ZOOM,
    format_value,
)
from .nodes import NodeItem
from .view import GraphCanvas

__all__ = [
    "BULK_EDGE_THRESHOLD",
    "FIT_MAX_ZOOM",
    "LAZY_NODE_THRESHOLD",
    "MAX_ZOOM",
    "MIN_ZOOM",
    "READABLE_ZOOM",
    "GraphCanvas",
    "NodeItem",
    "format_value",
]
