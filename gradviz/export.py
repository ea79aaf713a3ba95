"""Export a (laid-out) autograd graph to SVG, PNG, DOT, GraphML, JSON or HTML.

The SVG comes from :func:`gradviz.graph.render_svg.render_svg`, the one renderer
the window's export and the library use too, so an export looks like the window
without needing Qt.  Only PNG needs Qt (it renders that SVG with QtSvg), and Qt
is imported inside that function alone so ``gradviz export x.svg`` works on a
machine without a display or without the Qt libraries loaded.
"""

from __future__ import annotations

import json
import math
import os
import sys
import threading
import time
from collections.abc import Callable, Hashable, Mapping, Sequence
from pathlib import Path
from typing import Any

import networkx as nx

from gradviz.graph.grouping import sizing_attrs
from gradviz.graph.layout import (
    DEFAULT_SPACING,
    LayoutSpacing,
    layout_with_routes,
    node_lines,
    node_size,
)
from gradviz.graph.render_svg import render_svg
from gradviz.graph.snapshot_file import SNAPSHOT_FORMAT, SNAPSHOT_VERSION
from gradviz.graph.style import LIGHT, Theme, style_key
from gradviz.i18n import translate

__all__ = [
    "SNAPSHOT_SUFFIX",
    "SUPPORTED_SUFFIXES",
    "Progress",
    "is_snapshot_path",
    "run_snapshot",
    "svg_to_png",
    "export_graph",
    "export_snapshot",
    "graph_to_dot",
    "graph_to_svg",
    "snapshot_graph",
    "snapshot_to_svg",
]

Point = tuple[float, float]


def _style_key(attrs: Mapping[str, Any]) -> str:
    """The node's kind in the style table (kept for callers of the old name)."""
    return style_key(attrs)


def _sized(graph: nx.DiGraph) -> nx.DiGraph:
    """The graph the layout measures: a collapsed group's box has its caption line."""
    if not any(d.get("kind") == "group" for _, d in graph.nodes(data=True)):
        return graph
    sized = graph.copy()
    for v, d in graph.nodes(data=True):
        sized.nodes[v].clear()
        sized.nodes[v].update(sizing_attrs(d))
    return sized


def _resolve_positions(
    graph: nx.DiGraph, positions: Mapping[Hashable, Sequence[float]] | None, sp: LayoutSpacing
) -> dict[Hashable, Point]:
    """Positions for every node: the given ones, with any missing node fitted in around them
    (or, when that is not possible, everything laid out afresh)."""
    if positions is not None and all(v in positions for v in graph.nodes):
        return {v: (float(positions[v][0]), float(positions[v][1])) for v in graph.nodes}
    known = {v: p for v, p in (positions or {}).items() if v in graph}
    return dict(layout_with_routes(_sized(graph), known or None, spacing=sp).positions)


def graph_to_svg(
    graph: nx.DiGraph,
    positions: Mapping[Hashable, Sequence[float]] | None = None,
    *,
    spacing: LayoutSpacing | None = None,
    theme: Theme = LIGHT,
) -> str:
    """A standalone SVG document of the graph (laid out here when no positions are given).

    Drawn by :func:`gradviz.graph.render_svg.render_svg`, the renderer behind every
    SVG gradviz writes, in the light theme.
    """
    sp = spacing or DEFAULT_SPACING
    pos = _resolve_positions(graph, positions, sp)
    return render_svg(graph.nodes(data=True), graph.edges(data=True), pos, theme, spacing=sp)


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
    "no_grad": 'shape=ellipse, style="filled"',
    "saved": 'shape=box, style="filled", fontsize=10',
    "group": 'shape=box3d, style="filled"',
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
        f'  edge [color="{LIGHT.forward}"];',
    ]
    pinned = [float(positions[v][1]) for v in graph.nodes if v in positions] if positions else []
    top = max(pinned, default=0.0)
    for v, attrs in graph.nodes(data=True):
        key = style_key(attrs)
        style = LIGHT.node(key)
        fill, stroke = style.fill, style.stroke
        label = "\n".join(node_lines(sizing_attrs(attrs), sp))
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
            w, h = node_size(sizing_attrs(attrs), sp)
            parts.append(f'pos="{x:.2f},{top - y:.2f}!"')
            parts.append(f"width={w / 72:.3f}, height={h / 72:.3f}, fixedsize=true")
        lines.append(f"  {_dot_quote(v)} [{', '.join(parts)}];")
    for u, v, attrs in graph.edges(data=True):
        kind = attrs.get("kind", "grad")
        parts = [f'color="{LIGHT.edge(kind)}"']
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
    svg_to_png(graph_to_svg(graph, positions, spacing=sp), path)


def svg_to_png(svg: str, path: str | Path) -> None:
    """Render an SVG document (ours) to a PNG at twice its size, with QtSvg.

    Qt is imported here alone; without a display it renders offscreen.
    """
    if sys.platform.startswith("linux") and not (
        os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
    ):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QByteArray
    from PySide6.QtGui import QColor, QGuiApplication, QImage, QImageWriter, QPainter
    from PySide6.QtSvg import QSvgRenderer
    from PySide6.QtWidgets import QApplication

    # Text rendering needs an application object.  Make it a full QApplication
    # (not just a QGuiApplication): Qt allows one per process, and widgets
    # created later in the same process (the window, pytest-qt) need that kind.
    global _QT_APP
    if QGuiApplication.instance() is None:
        _QT_APP = QApplication(["gradviz-export"])
    renderer = QSvgRenderer(QByteArray(svg.encode("utf-8")))
    if not renderer.isValid():
        raise RuntimeError("Qt could not parse the generated SVG")
    size = renderer.defaultSize()
    w, h = max(1, size.width()), max(1, size.height())
    # Twice the scene size for crisp text, shrunk for huge graphs so the
    # image stays within Qt's limits and a sane amount of memory.
    scale = min(2.0, 16000 / w, 16000 / h, math.sqrt(40e6 / (w * h)))
    image = QImage(max(1, round(w * scale)), max(1, round(h * scale)), QImage.Format.Format_ARGB32)
    image.fill(QColor(LIGHT.paper))
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
    pos = _resolve_positions(graph, positions, sp)
    path.write_text(graph_to_dot(graph, pos, spacing=sp), encoding="utf-8")


def _write_graphml(graph: nx.DiGraph, path: Path, positions: Any, sp: LayoutSpacing) -> None:
    """GraphML only stores scalars: lists and dicts become JSON text, None is dropped."""
    pos = _resolve_positions(graph, positions, sp)
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
    pos = _resolve_positions(graph, positions, sp)
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


def _write_html(
    graph: nx.DiGraph, path: Path, positions: Any, sp: LayoutSpacing, language: str | None = None
) -> None:
    """The interactive page of the graph alone (a whole snapshot's page also replays its
    passes), its words in ``language`` (see :func:`gradviz.html_view.render_html`).

    ``positions`` place its expanded picture, as they place every other format's
    drawing, when they cover every node (the page then lays out only its grouped
    pictures); else the page lays the graph out itself."""
    from gradviz.graph.graphdata import graph_to_json
    from gradviz.html_view import render_html

    snapshot: dict[str, Any] = {"graph": graph_to_json(graph)}
    if positions is not None and all(v in positions for v in graph.nodes):
        snapshot["positions"] = {
            str(v): [float(positions[v][0]), float(positions[v][1])] for v in graph.nodes
        }
    page = render_html(snapshot, language=language)
    path.write_text(page, encoding="utf-8")


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
    progress: Callable[[str], None] | None = None,
    language: str | None = None,
) -> None:
    """Write ``graph`` to ``path`` in the format its suffix names.

    ``positions`` are the canvas's node centres, so the export matches the
    window.  When None, the graph is laid out here; nodes missing from them
    are fitted in around the given ones (or, when that is not possible,
    everything is laid out afresh). ``progress`` is told what is being done
    (a :class:`Progress` prints it on a terminal). ``language``: the words of an
    ``.html`` page (by default the one the program chose, else ``GRADVIZ_LANG`` and the
    locale: :func:`gradviz.i18n.resolve_language`).
    """
    path = Path(path)
    suffix = path.suffix.lower()
    writer = _WRITERS.get(suffix)
    if writer is None:
        raise ValueError(
            f"cannot export to {path.name!r}: unknown suffix {suffix or '(none)'!r}; "
            f"supported: {', '.join(SUPPORTED_SUFFIXES)}"
        )
    if progress is not None:  # the CLI's words, in its language
        laid = positions is not None and all(v in positions for v in graph.nodes)
        if suffix == ".html":
            what = translate(
                "Cli", "building the interactive page of {nodes} nodes and {edges} edges ({format})"
            )
        elif laid:
            what = translate("Cli", "drawing {nodes} nodes and {edges} edges ({format})")
        else:
            what = translate(
                "Cli", "laying out and drawing {nodes} nodes and {edges} edges ({format})"
            )
        progress(
            what.format(
                nodes=f"{graph.number_of_nodes():,}",
                edges=f"{graph.number_of_edges():,}",
                format=suffix[1:],
            )
        )
    if writer is _write_html:
        _write_html(graph, path, positions, spacing or DEFAULT_SPACING, language)
    else:
        writer(graph, path, positions, spacing or DEFAULT_SPACING)


# --- snapshots (gradviz.snapshot(), .gradviz.json files) -----------------------------------------


def snapshot_graph(
    snapshot: Mapping[str, Any],
) -> tuple[nx.DiGraph, dict[Hashable, tuple[float, float]] | None]:
    """The graph of a (checked) snapshot and the positions it was drawn at, if it carries them."""
    from gradviz.graph.graphdata import graph_from_json

    graph = graph_from_json(snapshot["graph"])
    saved = snapshot.get("positions")
    positions = None
    if isinstance(saved, Mapping) and saved:
        positions = {k: (float(v[0]), float(v[1])) for k, v in saved.items() if k in graph}
    return graph, positions or None


def snapshot_to_svg(
    snapshot: Mapping[str, Any],
    *,
    spacing: LayoutSpacing | None = None,
    positions: Mapping[Hashable, Sequence[float]] | None = None,
) -> str:
    """The snapshot's graph as an SVG document, laid out and drawn as the window draws it.

    ``positions``: where the graph was just laid out (the notebook's page lays it out
    too), used when the snapshot carries none of its own."""
    graph, saved = snapshot_graph(snapshot)
    return graph_to_svg(graph, saved or positions, spacing=spacing)


SNAPSHOT_SUFFIX = ".gradviz.json"
"""The name ending of a snapshot file (``gradviz open``, ``gradviz.load``): an export to
such a name writes the snapshot itself, not the graph's JSON (``.json``)."""


def is_snapshot_path(path: str | Path) -> bool:
    """``path`` names a snapshot file (``run.gradviz.json``)."""
    return Path(path).name.lower().endswith(SNAPSHOT_SUFFIX)


def run_snapshot(report: Mapping[str, Any]) -> dict[str, Any]:
    """A ``gradviz run`` report (its statements, results, tensors, graph, passes) as a
    snapshot file's data: what ``gradviz open`` opens (the statements, to step again)."""
    data = {
        key: value for key, value in report.items()
        if key not in ("format", "version", "source", "stopped", "mode", "language")
    }
    return {"format": SNAPSHOT_FORMAT, "version": SNAPSHOT_VERSION, "source": "gradviz run", **data}


def export_snapshot(
    snapshot: Mapping[str, Any],
    path: str | Path,
    *,
    progress: Callable[[str], None] | None = None,
    language: str | None = None,
) -> nx.DiGraph:
    """Write a snapshot's graph to ``path`` (any of :data:`SUPPORTED_SUFFIXES`); returns
    the graph. ``progress`` and ``language``: as for :func:`export_graph`."""
    graph, positions = snapshot_graph(snapshot)
    if is_snapshot_path(path):
        # the snapshot itself, checked as gradviz open will check it
        from gradviz.graph.snapshot_file import parse_snapshot
        from gradviz.graph.wire import dumps

        data = {"format": SNAPSHOT_FORMAT, "version": SNAPSHOT_VERSION, **snapshot}
        parse_snapshot(data, Path(path).name)
        Path(path).write_text(dumps(data) + "\n", encoding="utf-8")
        return graph
    if Path(path).suffix.lower() == ".html":
        # The page replays the snapshot's backward passes, so it takes the whole snapshot.
        from gradviz.html_view import render_html

        if progress is not None:
            passes = len(snapshot.get("backward_passes") or [])
            if passes == 1:
                what = translate(
                    "Cli",
                    "building the interactive page of {nodes} nodes, {edges} edges and "
                    "{passes} backward pass",
                )
            else:
                what = translate(
                    "Cli",
                    "building the interactive page of {nodes} nodes, {edges} edges and "
                    "{passes} backward passes",
                )
            progress(
                what.format(
                    nodes=f"{graph.number_of_nodes():,}",
                    edges=f"{graph.number_of_edges():,}",
                    passes=f"{passes:,}",
                )
            )
        Path(path).write_text(render_html(snapshot, language=language), encoding="utf-8")
        return graph
    export_graph(graph, path, positions, progress=progress, language=language)
    return graph


class Progress:
    """What a long export is doing, as lines on a terminal: nothing for one that ends
    within ``after`` seconds, then the step under way and each step after it, with the
    time so far (``gradviz: laying out and drawing 1,070 nodes ... (1.2 s)``).

    Call it with each step's words; :meth:`close` (or leaving a ``with`` block) stops
    it. Lines go to ``stream`` (stderr) only when that is a terminal, unless
    ``always``: a ``--json`` run or a pipe gets nothing.
    """

    def __init__(self, stream: Any = None, *, after: float = 1.0, always: bool = False):
        self.stream = stream if stream is not None else sys.stderr
        isatty = getattr(self.stream, "isatty", None)
        self.enabled = always or bool(isatty and isatty())
        self.after = after
        self.started = time.monotonic()
        self.current: str | None = None
        self.shown: str | None = None
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None

    def __call__(self, message: str) -> None:
        if not self.enabled:
            return
        with self._lock:
            self.current = message
            late = time.monotonic() - self.started >= self.after
            if late:
                self._show()
            elif self._timer is None:
                self._timer = threading.Timer(
                    self.after - (time.monotonic() - self.started), self._due
                )
                self._timer.daemon = True
                self._timer.start()

    def _due(self) -> None:
        with self._lock:
            if self._timer is not None:
                self._show()

    def _show(self) -> None:
        if self.current is None or self.current == self.shown:
            return
        self.shown = self.current
        elapsed = time.monotonic() - self.started
        try:
            print(f"gradviz: {self.current} ({elapsed:.1f} s)", file=self.stream, flush=True)
        except (OSError, ValueError):
            self.enabled = False

    def close(self) -> None:
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
