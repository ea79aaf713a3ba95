"""Export a (laid-out) autograd graph to SVG, PNG, DOT, GraphML, JSON or HTML.

The SVG is written by hand from the same :mod:`gradviz.core.layout` boxes the
canvas draws, so an export looks like the window without needing Qt.  Only
PNG needs Qt (it renders that SVG with QtSvg), and Qt is imported inside that
function alone so ``gradviz export x.svg`` works on a machine without a
display or without the Qt libraries loaded.
"""

from __future__ import annotations

import json
import math
import os
import re
import sys
from collections.abc import Callable, Hashable, Mapping, Sequence
from pathlib import Path
from typing import Any

import networkx as nx

from gradviz.core.layout import (
    DEFAULT_SPACING,
    LayoutSpacing,
    layout_with_routes,
    node_lines,
    node_size,
)

__all__ = [
    "SUPPORTED_SUFFIXES",
    "export_graph",
    "export_snapshot",
    "graph_to_dot",
    "graph_to_svg",
    "snapshot_graph",
    "snapshot_to_svg",
]

Point = tuple[float, float]

# kind -> (fill, stroke); tensors split into leaf / non-leaf below.
_STYLE = {
    "grad_fn": ("#d6ebff", "#3b7dd8"),
    "accumulate_grad": ("#e4e4e4", "#777777"),
    "leaf": ("#c9f2c7", "#2f9e44"),
    "tensor": ("#fff3b0", "#c9a100"),
    "saved": ("#ffd8a8", "#e8590c"),
}
_NEW_STROKE = "#d6336c"
_EDGE_COLOUR = {"grad": "#555555", "output": "#999999", "leaf": "#2f9e44", "saved": "#e8590c"}
_FONT = "DejaVu Sans Mono, Menlo, Consolas, monospace"
_FONT_SIZE = 12

# XML 1.0 forbids most control characters even when escaped.
_XML_BAD = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _xml(text: Any) -> str:
    """Text safe inside an XML element or a double-quoted attribute."""
    s = _XML_BAD.sub("\ufffd", str(text))
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def _style_key(attrs: Mapping[str, Any]) -> str:
    kind = attrs.get("kind")
    if kind == "tensor":
        return "leaf" if attrs.get("is_leaf") else "tensor"
    return kind if kind in _STYLE else "grad_fn"


def _resolve_positions(
    graph: nx.DiGraph, positions: Mapping[Hashable, Sequence[float]] | None, sp: LayoutSpacing
) -> tuple[dict[Hashable, Point], dict[tuple[Hashable, Hashable], list[Point]]]:
    """Positions for every node (filling gaps incrementally) and long-edge bends.

    Bends exist only when we lay out ourselves: with caller-supplied positions
    the routes would no longer match, so edges are drawn straight.
    """
    if positions is not None and all(v in positions for v in graph.nodes):
        return {v: (float(positions[v][0]), float(positions[v][1])) for v in graph.nodes}, {}
    if positions:
        known = {v: p for v, p in positions.items() if v in graph}
        result = layout_with_routes(graph, known, spacing=sp)
    else:
        result = layout_with_routes(graph, spacing=sp)
    return result.positions, result.routes


def _clip_to_box(center: Point, size: tuple[float, float], toward: Point) -> Point:
    """Where the segment from a box's centre toward ``toward`` leaves the box."""
    cx, cy = center
    dx, dy = toward[0] - cx, toward[1] - cy
    if dx == 0 and dy == 0:
        return center
    hw, hh = size[0] / 2, size[1] / 2
    t = min(hw / abs(dx) if dx else math.inf, hh / abs(dy) if dy else math.inf)
    t = min(t, 1.0)
    return (cx + dx * t, cy + dy * t)


def _saved_comb(
    owner: Point, owner_size: tuple[float, float], saved: Point, saved_size: tuple[float, float]
) -> list[Point] | None:
    """Route for a saved tensor sitting in its grad_fn's row: under the row, then up.

    Several saved tensors sit side by side; straight edges would run through
    the first box and read as ``self -> other``.  None when the saved tensor
    is elsewhere (caller-supplied positions), so it gets a plain edge.
    """
    if abs(owner[1] - saved[1]) > 1.0 or saved[0] <= owner[0] + owner_size[0] / 2:
        return None
    start_x = owner[0] + owner_size[0] / 2 - min(12.0, owner_size[0] / 4)
    bottom = owner[1] + owner_size[1] / 2
    below = bottom + 6.0
    return [
        (start_x, bottom),
        (start_x, below),
        (saved[0], below),
        (saved[0], saved[1] + saved_size[1] / 2),
    ]


def edge_points(
    kind: str,
    u: Hashable,
    v: Hashable,
    pos: Mapping[Hashable, Point],
    sizes: Mapping[Hashable, tuple[float, float]],
    routes: Mapping[tuple[Hashable, Hashable], Sequence[Point]],
) -> list[Point]:
    """The polyline an edge is drawn along: a saved tensor's comb, else the layout's
    route (its bends) clipped to the two boxes, else a straight box-to-box line."""
    pts = _saved_comb(pos[u], sizes[u], pos[v], sizes[v]) if kind == "saved" else None
    if pts is not None:
        return pts
    bends = list(routes.get((u, v), []))
    first = bends[0] if bends else pos[v]
    last = bends[-1] if bends else pos[u]
    return [_clip_to_box(pos[u], sizes[u], first), *bends, _clip_to_box(pos[v], sizes[v], last)]


def graph_to_svg(
    graph: nx.DiGraph,
    positions: Mapping[Hashable, Sequence[float]] | None = None,
    *,
    spacing: LayoutSpacing | None = None,
) -> str:
    """A standalone SVG document of the graph (laid out here when no positions are given)."""
    sp = spacing or DEFAULT_SPACING
    pos, routes = _resolve_positions(graph, positions, sp)
    sizes = {v: node_size(graph.nodes[v], sp) for v in graph.nodes}
    pad = sp.margin
    if pos:
        x0 = min(pos[v][0] - sizes[v][0] / 2 for v in pos) - pad
        y0 = min(pos[v][1] - sizes[v][1] / 2 for v in pos) - pad
        x1 = max(pos[v][0] + sizes[v][0] / 2 for v in pos) + pad
        y1 = max(pos[v][1] + sizes[v][1] / 2 for v in pos) + pad
    else:
        x0, y0, x1, y1 = 0.0, 0.0, 2 * pad, 2 * pad
    width, height = x1 - x0, y1 - y0
    out: list[str] = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.1f}" height="{height:.1f}" '
        f'viewBox="{x0:.1f} {y0:.1f} {width:.1f} {height:.1f}" '
        f'font-family="{_xml(_FONT)}" font-size="{_FONT_SIZE}">',
        "<defs>",
    ]
    for name, colour in _EDGE_COLOUR.items():
        out.append(
            f'<marker id="arrow-{name}" viewBox="0 0 10 10" refX="10" refY="5" '
            f'markerWidth="8" markerHeight="8" markerUnits="userSpaceOnUse" orient="auto">'
            f'<path d="M0,0 L10,5 L0,10 z" fill="{colour}"/></marker>'
        )
    out.append("</defs>")
    out.append(
        f'<rect x="{x0:.1f}" y="{y0:.1f}" width="{width:.1f}" height="{height:.1f}" '
        'fill="#ffffff"/>'
    )

    out.append('<g class="edges" fill="none">')
    for u, v, attrs in graph.edges(data=True):
        if u == v:
            continue
        kind = attrs.get("kind", "grad")
        colour = _EDGE_COLOUR.get(kind, _EDGE_COLOUR["grad"])
        marker = kind if kind in _EDGE_COLOUR else "grad"
        pts = edge_points(kind, u, v, pos, sizes, routes)
        coords = " ".join(f"{x:.1f},{y:.1f}" for x, y in pts)
        dash = ' stroke-dasharray="5,3"' if kind == "saved" else ""
        width_attr = "2" if attrs.get("new") else "1.2"
        out.append(
            f'<polyline points="{coords}" stroke="{colour}" stroke-width="{width_attr}"'
            f'{dash} marker-end="url(#arrow-{marker})"/>'
        )
    out.append("</g>")

    out.append('<g class="nodes">')
    for v, attrs in graph.nodes(data=True):
        x, y = pos[v]
        w, h = sizes[v]
        key = _style_key(attrs)
        fill, stroke = _STYLE[key]
        if attrs.get("new"):
            stroke = _NEW_STROKE
        stroke_w = 2.5 if attrs.get("new") else 1.2
        rx = {"grad_fn": 8.0, "accumulate_grad": 2.0, "saved": 3.0}.get(key, h / 2)
        dash = ' stroke-dasharray="4,3"' if attrs.get("freed") else ""
        out.append(f'<g class="node {_xml(key)}" id="{_xml(v)}">')
        out.append(f"<title>{_xml(_tooltip(v, attrs))}</title>")
        out.append(
            f'<rect x="{x - w / 2:.1f}" y="{y - h / 2:.1f}" width="{w:.1f}" '
            f'height="{h:.1f}" rx="{rx:.1f}" fill="{fill}" stroke="{stroke}" '
            f'stroke-width="{stroke_w}"{dash}/>'
        )
        lines = node_lines(attrs, sp)
        # Baselines set explicitly: QtSvg (used for PNG) ignores dominant-baseline.
        top = y - (len(lines) - 1) * sp.line_height / 2 + 0.36 * _FONT_SIZE
        for i, line in enumerate(lines):
            weight = ' font-weight="bold"' if i == 0 and key != "saved" else ""
            colour = "#000000" if i == 0 else "#444444"
            out.append(
                f'<text x="{x:.1f}" y="{top + i * sp.line_height:.1f}" '
                f'text-anchor="middle" fill="{colour}"{weight}>{_xml(line)}</text>'
            )
        out.append("</g>")
    out.append("</g>")
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _tooltip(node: Hashable, attrs: Mapping[str, Any]) -> str:
    parts = [str(node)]
    for key in ("kind", "label", "vars", "shape", "dtype", "device", "storage", "saved"):
        if attrs.get(key) not in (None, [], {}, ""):
            parts.append(f"{key}: {attrs[key]}")
    return "\n".join(parts)


def _dot_quote(value: Any) -> str:
    """A DOT double-quoted string; newlines become DOT's centred line breaks."""
    s = str(value).replace("\\", "\\\\").replace('"', '\\"')
    s = s.replace("\r\n", "\n").replace("\r", "\n").replace("\n", "\\n")
    return f'"{s}"'


_DOT_SHAPES = {
    "grad_fn": 'shape=box, style="rounded,filled"',
    "accumulate_grad": 'shape=box, style="filled"',
    "leaf": 'shape=ellipse, style="filled"',
    "tensor": 'shape=ellipse, style="filled"',
    "saved": 'shape=box, style="filled", fontsize=10',
}


def graph_to_dot(
    graph: nx.DiGraph,
    positions: Mapping[Hashable, Sequence[float]] | None = None,
    *,
    spacing: LayoutSpacing | None = None,
) -> str:
    """Graphviz source for the graph.

    Without ``positions`` Graphviz lays it out itself (the benchmark compares
    against that); with them every node gets a pinned ``pos`` in points (y
    flipped, Graphviz's y grows upward) for ``neato -n`` or ``dot -Kneato -n``.
    """
    sp = spacing or DEFAULT_SPACING
    lines = [
        "digraph autograd {",
        '  graph [rankdir=TB, fontname="monospace"];',
        '  node [fontname="monospace", fontsize=12];',
        '  edge [color="#555555"];',
    ]
    pinned = [float(positions[v][1]) for v in graph.nodes if v in positions] if positions else []
    top = max(pinned, default=0.0)
    for v, attrs in graph.nodes(data=True):
        key = _style_key(attrs)
        fill, stroke = _STYLE[key]
        label = "\n".join(node_lines(attrs, sp))
        parts = [
            f"label={_dot_quote(label)}",
            _DOT_SHAPES[key],
            f'fillcolor="{fill}"',
            f'color="{stroke}"',
        ]
        if attrs.get("new"):
            parts.append("penwidth=2.5")
        if positions and v in positions:
            x, y = float(positions[v][0]), float(positions[v][1])
            w, h = node_size(attrs, sp)
            parts.append(f'pos="{x:.2f},{top - y:.2f}!"')
            parts.append(f"width={w / 72:.3f}, height={h / 72:.3f}, fixedsize=true")
        lines.append(f"  {_dot_quote(v)} [{', '.join(parts)}];")
    for u, v, attrs in graph.edges(data=True):
        kind = attrs.get("kind", "grad")
        parts = [f'color="{_EDGE_COLOUR.get(kind, _EDGE_COLOUR["grad"])}"']
        if kind == "saved":
            parts.append("style=dashed")
        lines.append(f"  {_dot_quote(u)} -> {_dot_quote(v)} [{', '.join(parts)}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _plain(value: Any) -> Any:
    """A value GraphML can store: scalars as they are, everything else as JSON text."""
    if isinstance(value, bool | int | float | str):
        return value
    if hasattr(value, "item") and callable(value.item):  # numpy / torch scalars
        try:
            return _plain(value.item())
        except (TypeError, ValueError, RuntimeError):
            pass
    return json.dumps(value, default=_json_default, sort_keys=True)


def _json_default(value: Any) -> Any:
    """json.dump fallback for tuples-in-disguise, sets, numpy/torch values."""
    if isinstance(value, set | frozenset):
        return sorted(value, key=str)
    if hasattr(value, "tolist"):
        return value.tolist()
    if hasattr(value, "item"):
        return value.item()
    if isinstance(value, Path):
        return str(value)
    return str(value)


def _write_svg(graph: nx.DiGraph, path: Path, positions: Any, sp: LayoutSpacing) -> None:
    path.write_text(graph_to_svg(graph, positions, spacing=sp), encoding="utf-8")


def _write_png(graph: nx.DiGraph, path: Path, positions: Any, sp: LayoutSpacing) -> None:
    """Render our SVG with QtSvg, so PNGs look exactly like the SVG export."""
    if sys.platform.startswith("linux") and not (
        os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
    ):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QByteArray, Qt
    from PySide6.QtGui import QColor, QGuiApplication, QImage, QImageWriter, QPainter
    from PySide6.QtSvg import QSvgRenderer
    from PySide6.QtWidgets import QApplication

    # Text rendering needs an application object.  Make it a full QApplication
    # (not just a QGuiApplication): Qt allows one per process, and widgets
    # created later in the same process (the window, pytest-qt) need that kind.
    global _QT_APP
    if QGuiApplication.instance() is None:
        _QT_APP = QApplication(["gradviz-export"])
    svg = graph_to_svg(graph, positions, spacing=sp)
    renderer = QSvgRenderer(QByteArray(svg.encode("utf-8")))
    if not renderer.isValid():
        raise RuntimeError("Qt could not parse the generated SVG")
    size = renderer.defaultSize()
    w, h = max(1, size.width()), max(1, size.height())
    # Twice the scene size for crisp text, shrunk for huge graphs so the
    # image stays within Qt's limits and a sane amount of memory.
    scale = min(2.0, 16000 / w, 16000 / h, math.sqrt(40e6 / (w * h)))
    image = QImage(max(1, round(w * scale)), max(1, round(h * scale)), QImage.Format.Format_ARGB32)
    image.fill(QColor(Qt.GlobalColor.white))
    painter = QPainter(image)
    try:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
        renderer.render(painter)
    finally:
        painter.end()
    writer = QImageWriter(str(path), QByteArray(b"png"))
    if not writer.write(image):
        raise OSError(f"could not write PNG to {path}: {writer.errorString()}")


_QT_APP: Any = None


def _write_dot(graph: nx.DiGraph, path: Path, positions: Any, sp: LayoutSpacing) -> None:
    pos, _ = _resolve_positions(graph, positions, sp)
    path.write_text(graph_to_dot(graph, pos, spacing=sp), encoding="utf-8")


def _write_graphml(graph: nx.DiGraph, path: Path, positions: Any, sp: LayoutSpacing) -> None:
    """GraphML only stores scalars: lists and dicts become JSON text, None is dropped."""
    pos, _ = _resolve_positions(graph, positions, sp)
    flat = nx.DiGraph()
    flat.graph.update({k: _plain(v) for k, v in graph.graph.items() if v is not None})
    for v, attrs in graph.nodes(data=True):
        data = {k: _plain(val) for k, val in attrs.items() if val is not None}
        data["x"], data["y"] = pos[v]
        flat.add_node(str(v), **data)
    for u, v, attrs in graph.edges(data=True):
        flat.add_edge(
            str(u), str(v), **{k: _plain(val) for k, val in attrs.items() if val is not None}
        )
    nx.write_graphml(flat, path)


def _write_json(graph: nx.DiGraph, path: Path, positions: Any, sp: LayoutSpacing) -> None:
    pos, _ = _resolve_positions(graph, positions, sp)
    doc = {
        "nodes": [
            {"id": v, **{k: val for k, val in attrs.items() if k != "id"}}
            for v, attrs in graph.nodes(data=True)
        ],
        "edges": [
            {
                "source": u,
                "target": v,
                **{k: val for k, val in attrs.items() if k not in ("source", "target")},
            }
            for u, v, attrs in graph.edges(data=True)
        ],
        "positions": {str(v): [x, y] for v, (x, y) in pos.items()},
    }
    with path.open("w", encoding="utf-8") as fh:
        json.dump(doc, fh, indent=1, default=_json_default)
        fh.write("\n")


def _write_html(graph: nx.DiGraph, path: Path, positions: Any, sp: LayoutSpacing) -> None:
    """The interactive page of the graph alone (a whole snapshot's page also replays its passes)."""
    from gradviz.core.graphdata import graph_to_json
    from gradviz.html_view import render_html

    path.write_text(render_html({"graph": graph_to_json(graph)}), encoding="utf-8")


_WRITERS: dict[str, Callable[[nx.DiGraph, Path, Any, LayoutSpacing], None]] = {
    ".svg": _write_svg,
    ".png": _write_png,
    ".dot": _write_dot,
    ".graphml": _write_graphml,
    ".json": _write_json,
    ".html": _write_html,
}
SUPPORTED_SUFFIXES = tuple(_WRITERS)


def export_graph(
    graph: nx.DiGraph,
    path: str | Path,
    positions: Mapping[Hashable, Sequence[float]] | None = None,
    *,
    spacing: LayoutSpacing | None = None,
) -> None:
    """Write ``graph`` to ``path`` in the format its suffix names.

    ``positions`` are the canvas's node centres, so the export matches the
    window.  When None, the graph is laid out here; nodes missing from them
    are fitted in around the given ones (or, when that is not possible,
    everything is laid out afresh).
    """
    path = Path(path)
    suffix = path.suffix.lower()
    writer = _WRITERS.get(suffix)
    if writer is None:
        raise ValueError(
            f"cannot export to {path.name!r}: unknown suffix {suffix or '(none)'!r}; "
            f"supported: {', '.join(SUPPORTED_SUFFIXES)}"
        )
    writer(graph, path, positions, spacing or DEFAULT_SPACING)


# --- snapshots (gradviz.snapshot(), .gradviz.json files) -----------------------------------------


def snapshot_graph(
    snapshot: Mapping[str, Any],
) -> tuple[nx.DiGraph, dict[Hashable, tuple[float, float]] | None]:
    """The graph of a (checked) snapshot and the positions it was drawn at, if it carries them."""
    from gradviz.core.graphdata import graph_from_json

    graph = graph_from_json(snapshot["graph"])
    saved = snapshot.get("positions")
    positions = None
    if isinstance(saved, Mapping) and saved:
        positions = {k: (float(v[0]), float(v[1])) for k, v in saved.items() if k in graph}
    return graph, positions or None


def snapshot_to_svg(snapshot: Mapping[str, Any], *, spacing: LayoutSpacing | None = None) -> str:
    """The snapshot's graph as an SVG document, laid out and drawn as the window draws it."""
    graph, positions = snapshot_graph(snapshot)
    return graph_to_svg(graph, positions, spacing=spacing)


def export_snapshot(snapshot: Mapping[str, Any], path: str | Path) -> nx.DiGraph:
    """Write a snapshot's graph to ``path`` (any of :data:`SUPPORTED_SUFFIXES`); returns the graph."""
    graph, positions = snapshot_graph(snapshot)
    if Path(path).suffix.lower() == ".html":
        # The page replays the snapshot's backward passes, so it takes the whole snapshot.
        from gradviz.html_view import render_html

        Path(path).write_text(render_html(snapshot), encoding="utf-8")
        return graph
    export_graph(graph, path, positions)
    return graph
