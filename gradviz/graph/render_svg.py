"""The one SVG renderer: a graph, its node positions and a theme -> an SVG document.

Every SVG gradviz writes comes from :func:`render_svg`: the window's "Export
graph..." (``GraphCanvas.export_image``), ``gradviz export FILE -o x.svg``, the
library's ``Snapshot.to_svg()`` / :func:`gradviz.export.graph_to_svg`, and the
PNG exports that render this SVG. Given the same nodes, edges and positions
they write the same bytes.

It draws what the window draws, with the same rules: the boxes are the
layout's (:func:`gradviz.graph.layout.node_size`), the colours are the theme's
(:mod:`gradviz.graph.style`), the edges run where :mod:`gradviz.graph.routing`
puts them (around the boxes in their way) and the viewBox holds every bend.
What belongs to one moment in the window is left out: the glow of the last
statement's nodes, the selection and the backward pass being stepped.

Qt-free and torch-free.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Any

from .fmt import fmt_shape, fmt_value
from .grouping import CHAIN_PREFIX, group_caption, sizing_attrs
from .layout import DEFAULT_SPACING, LayoutSpacing, node_lines, node_size
from .records import TENSOR_KINDS, EdgeKind, NodeKind
from .routing import (
    Box,
    Obstacles,
    arrow_polygon,
    badge_center,
    badge_width,
    edge_geometries,
    geometry_bounds,
    geometry_segments,
    storage_link_curve,
    storage_link_pairs,
)
from .style import (
    EDGE_WIDTHS,
    FONT_FAMILY,
    LABEL_FONT_FAMILY,
    LIGHT,
    Theme,
    blend,
    corner_radius,
    style_key,
)
from .style import storage_colour as _storage_colour

__all__ = ["node_tooltip", "render_svg", "render_svg_data", "svg_number"]

FONT_SIZE = 12
NODE_MARGIN = 9.0
"""Room around a box for its tabs and badge (as the canvas reserves)."""
TAB_CHAR = 5.4
"""Advance of a character of a tab's font (9 px italic sans), for the tab's width."""

# XML 1.0 forbids most control characters even when escaped.
_XML_BAD = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _xml(text: Any) -> str:
    """Text safe inside an XML element or a double-quoted attribute."""
    s = _XML_BAD.sub("\ufffd", str(text))
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def svg_number(value: float) -> str:
    """A coordinate as the SVG writes it: at most two decimals, no trailing zeros."""
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


_n = svg_number


def _pt(x: float, y: float) -> str:
    return f"{_n(x)},{_n(y)}"


def path_data(segments: Iterable[tuple[str, Sequence[float]]]) -> str:
    """SVG path data for (command, coordinates) segments."""
    parts = []
    for cmd, coords in segments:
        pts = " ".join(_pt(coords[i], coords[i + 1]) for i in range(0, len(coords), 2))
        parts.append(f"{cmd}{pts}")
    return " ".join(parts)


def node_tooltip(node_id: Hashable, attrs: Mapping[str, Any]) -> list[str]:
    """The rows that describe a node (the window's tooltip adds its own hints below them)."""
    kind = attrs.get("kind", "?")
    if kind == NodeKind.GROUP:
        chain = str(node_id).startswith(CHAIN_PREFIX)
        what = "linear chain" if chain else f"module {attrs.get('module', '')}"
        return [
            str(attrs.get("label", node_id)),
            f"collapsed {what}: {group_caption(attrs)} ({attrs.get('count', 0)} nodes)",
        ]
    rows = [f"{attrs.get('label', node_id)}  ({kind}, {node_id})"]
    if attrs.get("vars"):
        rows.append("variables: " + ", ".join(str(v) for v in attrs["vars"]))
    if attrs.get("shape") is not None:
        rows.append(f"shape: {fmt_shape(attrs['shape'])}  {attrs.get('dtype', '') or ''}".rstrip())
    if kind == NodeKind.TENSOR:
        rows.append(f"requires_grad={attrs.get('requires_grad')}  is_leaf={attrs.get('is_leaf')}")
    if attrs.get("storage"):
        rows.append(f"storage group {attrs['storage']}")
    if "value" in attrs:
        rows.append("value: " + fmt_value(attrs["value"], 60))
    saved = attrs.get("saved")
    if isinstance(saved, Mapping) and saved:
        rows.append("saved: " + ", ".join(f"{k}={fmt_value(v, 30)}" for k, v in saved.items()))
    if attrs.get("freed"):
        rows.append("saved tensors freed by backward()")
    if attrs.get("stale") is True:
        rows.append(
            f"STALE: modified in place after it was saved (version {attrs.get('version')}, "
            f"saved at version {attrs.get('expected_version')}); backward through it fails"
        )
    elif attrs.get("stale"):
        rows.append("stale saved tensors: " + ", ".join(str(a) for a in attrs["stale"]))
    return rows


def node_colours(attrs: Mapping[str, Any], theme: Theme) -> tuple[str, str, str]:
    """Fill, border and text colour of a node as the graph has it (no transient state)."""
    style = theme.node(style_key(attrs))
    fill, stroke, text = style.fill, style.stroke, theme.text
    if attrs.get("freed"):
        fill = blend(fill, theme.background, 0.55)
        stroke = theme.freed
        text = theme.muted_text
    if attrs.get("stale"):
        # A saved tensor changed in place since it was saved (scenario 9).
        stroke = theme.stale
        if attrs.get("stale") is True:
            fill = theme.stale_fill
    return fill, stroke, text


def left_tab(node_id: Hashable, attrs: Mapping[str, Any], theme: Theme) -> tuple[str, str, str] | None:
    """(text, border/text colour, fill) of the tab on a box's top-left border, if it has one."""
    kind = attrs.get("kind")
    if kind == NodeKind.SAVED and attrs.get("stale") is True:
        version, expected = attrs.get("version"), attrs.get("expected_version")
        return (f"stale v{version}\u2260v{expected}", theme.stale, theme.tab_fill)
    if kind == NodeKind.SAVED:
        style = theme.node("saved")
        return ("saved", style.stroke, blend(style.fill, theme.tab_fill, 0.6))
    if kind == NodeKind.GROUP:
        what = "chain" if str(node_id).startswith(CHAIN_PREFIX) else "module"
        return (what, theme.node("group").stroke, theme.tab_fill)
    if attrs.get("freed"):
        return ("freed", theme.freed, theme.tab_fill)
    return None


def render_svg_data(
    graph: Mapping[str, Any],
    positions: Mapping[Any, Sequence[float]],
    theme: Theme = LIGHT,
    *,
    spacing: LayoutSpacing | None = None,
) -> str:
    """:func:`render_svg` for the graph as JSON data (``{"nodes": [...], "edges": [...]}``)."""
    nodes = [(n["id"], {k: v for k, v in n.items() if k != "id"}) for n in graph.get("nodes") or []]
    edges = [
        (e["source"], e["target"], {k: v for k, v in e.items() if k not in ("source", "target")})
        for e in graph.get("edges") or []
    ]
    return render_svg(nodes, edges, positions, theme, spacing=spacing)


def render_svg(
    nodes: Iterable[tuple[Hashable, Mapping[str, Any]]],
    edges: Iterable[tuple[Hashable, Hashable, Mapping[str, Any]]],
    positions: Mapping[Any, Sequence[float]],
    theme: Theme = LIGHT,
    *,
    spacing: LayoutSpacing | None = None,
) -> str:
    """An SVG document of the nodes (drawn in this order) and edges at ``positions``.

    ``positions`` holds the centre of every node (a node without one is drawn
    at the origin).
    """
    sp = spacing or DEFAULT_SPACING
    node_list = list(nodes)
    boxes: dict[Hashable, Box] = {}
    drawn: list[tuple[Hashable, Mapping[str, Any], list[str], Box]] = []
    obstacles = Obstacles()
    for node_id, attrs in node_list:
        sized = sizing_attrs(attrs)
        w, h = node_size(sized, sp)
        p = positions.get(node_id)
        cx, cy = (float(p[0]), float(p[1])) if p is not None else (0.0, 0.0)
        box = Box.of(attrs.get("kind"), cx, cy, w, h)
        boxes[node_id] = box
        obstacles.set(node_id, cx, cy, w, h)
        drawn.append((node_id, attrs, node_lines(sized, sp), box))

    kinds: dict[tuple[Hashable, Hashable], str] = {}
    adj: dict[Hashable, list[tuple[Hashable, Hashable]]] = {}
    for s, t, attrs in edges:
        if s == t or s not in boxes or t not in boxes or (s, t) in kinds:
            continue
        kinds[(s, t)] = str(attrs.get("kind", "grad"))
        adj.setdefault(s, []).append((s, t))
        adj.setdefault(t, []).append((s, t))
    geometry = edge_geometries(kinds, kinds, adj, boxes, obstacles)

    # shared storage: badges on the members, dotted links between them
    groups: dict[str, list[Hashable]] = {}
    kind_of = {node_id: attrs.get("kind") for node_id, attrs in node_list}
    for node_id, attrs in node_list:
        if attrs.get("kind") in TENSOR_KINDS and attrs.get("storage") is not None:
            groups.setdefault(str(attrs["storage"]), []).append(node_id)
    groups = {g: m for g, m in groups.items() if len(m) > 1}
    badge_of = {m: g for g, members in groups.items() for m in members}

    def badge_point(node_id: Hashable) -> tuple[float, float]:
        box = boxes[node_id]
        dx, dy = badge_center(kind_of[node_id], box.width, box.height, badge_of[node_id])
        return box.cx + dx, box.cy + dy

    links = []
    for group, a, b in storage_link_pairs(groups, kind_of.__getitem__, lambda m: (boxes[m].cx, boxes[m].cy)):
        (x0, y0), (x1, y1) = badge_point(a), badge_point(b)
        links.append((group, (x0, y0, *storage_link_curve(x0, y0, x1, y1))))

    # the picture's extent: every box with its tabs, every edge with its bends and heads
    xs: list[float] = []
    ys: list[float] = []
    for box in boxes.values():
        xs += [box.cx - box.width / 2 - NODE_MARGIN, box.cx + box.width / 2 + NODE_MARGIN]
        ys += [box.cy - box.height / 2 - NODE_MARGIN, box.cy + box.height / 2 + NODE_MARGIN]
    for g, _ in geometry.values():
        x0, y0, x1, y1 = geometry_bounds(g)
        xs += [x0, x1]
        ys += [y0, y1]
    for _, curve in links:
        xs += curve[0::2]
        ys += curve[1::2]
    pad = sp.margin
    if xs:
        x0, y0, x1, y1 = min(xs) - pad, min(ys) - pad, max(xs) + pad, max(ys) + pad
    else:
        x0, y0, x1, y1 = 0.0, 0.0, 2 * pad, 2 * pad
    width, height = x1 - x0, y1 - y0

    out: list[str] = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_n(width)}" height="{_n(height)}" '
        f'viewBox="{_n(x0)} {_n(y0)} {_n(width)} {_n(height)}" '
        f'font-family="{_xml(FONT_FAMILY)}" font-size="{FONT_SIZE}">',
        f'<rect class="background" x="{_n(x0)}" y="{_n(y0)}" width="{_n(width)}" '
        f'height="{_n(height)}" fill="{theme.paper}"/>',
    ]

    if links:
        out.append('<g class="storage" fill="none" stroke-dasharray="1.8,3.6" stroke-linecap="round">')
        for group, c in links:
            d = f"M{_pt(c[0], c[1])} C{_pt(c[2], c[3])} {_pt(c[4], c[5])} {_pt(c[6], c[7])}"
            out.append(
                f'<path d="{d}" stroke="{_storage_colour(group, theme)}" stroke-width="1.8" '
                'stroke-opacity="0.78"/>'
            )
        out.append("</g>")

    out.append('<g class="edges" fill="none">')
    for (s, t), kind in kinds.items():
        g, _ = geometry[(s, t)]
        colour = theme.edge(kind)
        width_ = EDGE_WIDTHS.get(kind, EDGE_WIDTHS["grad"])
        dash = f' stroke-dasharray="{_n(4 * width_)},{_n(2 * width_)}"' if kind == EdgeKind.SAVED else ""
        out.append(
            f'<g class="edge {_xml(kind)}" data-source="{_xml(s)}" data-target="{_xml(t)}">'
            f'<path d="{path_data(geometry_segments(g))}" stroke="{colour}" '
            f'stroke-width="{_n(width_)}"{dash}/>'
        )
        head = arrow_polygon(g)
        if head is not None:
            d = "M" + " L".join(_pt(x, y) for x, y in head) + " Z"
            out.append(f'<path class="head" d="{d}" fill="{colour}" stroke="none"/>')
        out.append("</g>")
    out.append("</g>")

    out.append('<g class="nodes">')
    for node_id, attrs, lines, box in drawn:
        _node(out, node_id, attrs, lines, box, badge_of.get(node_id), theme, sp)
    out.append("</g>")
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _node(
    out: list[str],
    node_id: Hashable,
    attrs: Mapping[str, Any],
    lines: list[str],
    box: Box,
    badge: str | None,
    theme: Theme,
    sp: LayoutSpacing,
) -> None:
    key = style_key(attrs)
    kind = attrs.get("kind")
    fill, stroke, text_colour = node_colours(attrs, theme)
    x, y, w, h = box.cx - box.width / 2, box.cy - box.height / 2, box.width, box.height
    r = corner_radius(kind, h)
    out.append(f'<g class="node {_xml(key)}" id="{_xml(node_id)}">')
    out.append(f"<title>{_xml(chr(10).join(node_tooltip(node_id, attrs)))}</title>")

    def rect(dx: float, dy: float, grow: float, f: str, s: str, sw: float, extra: str = "") -> None:
        rr = h / 2 + grow if kind == NodeKind.TENSOR else r + grow
        out.append(
            f'<rect x="{_n(x + dx - grow)}" y="{_n(y + dy - grow)}" width="{_n(w + 2 * grow)}" '
            f'height="{_n(h + 2 * grow)}" rx="{_n(rr)}" fill="{f}" stroke="{s}" '
            f'stroke-width="{_n(sw)}"{extra}/>'
        )

    if kind == NodeKind.GROUP:
        # A stack of cards: the boxes it hides peek out behind it.
        for offset, shade in ((7.5, 0.45), (4.0, 0.2)):
            rect(offset, -offset, 0.0, blend(fill, theme.background, shade),
                 blend(stroke, theme.background, shade), 1.1)
    dash = ' stroke-dasharray="5.2,2.6"' if attrs.get("freed") else ""
    rect(0.0, 0.0, 0.0, fill, stroke, 1.3, dash)
    if kind == NodeKind.GROUP:
        rect(0.0, 0.0, -2.5, "none", stroke, 0.9, ' stroke-opacity="0.59"')

    # Baselines set explicitly: QtSvg (used for PNG) ignores dominant-baseline.
    top = box.cy - len(lines) * sp.line_height / 2
    for i, line in enumerate(lines):
        baseline = top + (i + 0.5) * sp.line_height + 0.36 * FONT_SIZE
        weight = ' font-weight="bold"' if i == 0 else ""
        colour = text_colour if i == 0 else theme.muted_text
        out.append(
            f'<text x="{_n(box.cx)}" y="{_n(baseline)}" text-anchor="middle" '
            f'fill="{colour}"{weight}>{_xml(line)}</text>'
        )

    tab = left_tab(node_id, attrs, theme)
    if tab is not None:
        text, colour, tab_fill = tab
        inset = h / 2 if kind == NodeKind.TENSOR else max(r, 4.0)
        _tab(out, x + inset - 2, y, text, colour, tab_fill, colour, italic=True)
    if badge is not None:
        colour = _storage_colour(badge, theme)
        bw = badge_width(badge)
        dx, dy = badge_center(kind, w, h, badge)
        _tab(out, box.cx + dx - bw / 2, box.cy + dy, badge, colour, colour, "#ffffff",
             italic=False, width=bw)
    out.append("</g>")


def _tab(
    out: list[str],
    x: float,
    y_mid: float,
    text: str,
    colour: str,
    fill: str,
    text_colour: str,
    *,
    italic: bool,
    width: float | None = None,
) -> None:
    w = width if width is not None else TAB_CHAR * len(text) + 8
    h = 12.0
    style = ' font-style="italic"' if italic else ' font-weight="bold"'
    out.append(
        f'<rect x="{_n(x)}" y="{_n(y_mid - h / 2)}" width="{_n(w)}" height="{_n(h)}" '
        f'rx="{_n(h / 2)}" fill="{fill}" stroke="{colour}" stroke-width="1"/>'
    )
    out.append(
        f'<text x="{_n(x + w / 2)}" y="{_n(y_mid + 3.2)}" text-anchor="middle" '
        f'font-family="{_xml(LABEL_FONT_FAMILY)}" font-size="9"{style} '
        f'fill="{text_colour}">{_xml(text)}</text>'
    )
