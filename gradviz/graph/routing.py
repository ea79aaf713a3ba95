"""Where each edge runs: its ports on the two boxes and its bends around boxes in its way.

The window's canvas and the SVG renderer (:mod:`gradviz.graph.render_svg`) both
take an edge's shape from :func:`edge_geometries`, so an exported picture has
the very curves the window draws. Qt-free.

Positions arrive from the layout as node centres only (the kernel's
incremental layout keeps no routes), so the routes are found here, from the
boxes alone, and stay a pure function of them:

* an edge between two rows is an S-curve from the bottom of one box to the
  top of the other (vertical at both ends);
* when that curve would cross a box on a row in between, the edge passes that
  row through the nearest gap: a vertical *pass* at a free x, with S-curves
  between the passes (:func:`edge_path`);
* an edge within one row is a straight line, or, when boxes stand between
  its ends (the saved tensors beside their grad_fn), a U under the row.

A geometry is a tuple of floats (cheap to compare between steps):

* ``("c", x0, y0, c1x, c1y, c2x, c2y, bx, by, tx, ty)``: one cubic to ``(bx, by)``;
  ``"u"`` is the same, for the U under a row;
* ``("l", x0, y0, bx, by, tx, ty)``: a straight line;
* ``("r", x0, y0, passes, bx, by, tx, ty)``: S-curves through the passes,
  ``passes`` being ``(x, y_in, x, y_out, ...)``;

each followed by its arrowhead from ``(bx, by)`` to the tip ``(tx, ty)``
(none when they are equal).
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Container, Hashable, Iterable, Mapping, Sequence
from operator import itemgetter
from typing import Any, Protocol, TypeVar

from .records import EdgeKind, NodeKind
from .style import corner_radius

#: the kinds hot loops compare against, bound once (an Enum member lookup costs ~100 ns
#: on Python 3.11, a module global ~10)
_TENSOR, _SAVED_EDGE = NodeKind.TENSOR, EdgeKind.SAVED

__all__ = [
    "ARROW_HALF",
    "ARROW_LEN",
    "CLEARANCE",
    "Box",
    "Obstacles",
    "arrow_ends",
    "arrow_polygon",
    "badge_center",
    "badge_width",
    "edge_geometries",
    "edge_path",
    "geometry_bounds",
    "geometry_midpoint",
    "geometry_points",
    "geometry_polyline",
    "geometry_segments",
    "port_span",
    "storage_link_curve",
    "storage_link_pairs",
]

ARROW_LEN = 8.0
ARROW_HALF = 4.0
CLEARANCE = 6.0
"""How far a routed edge keeps from the boxes it passes."""
PORT_STEP = 14.0
"""Distance between two edges leaving one side of a box."""
MAX_PASSES = 64
SMALL_STORAGE_GROUP = 6
"""Storage groups up to this size get every link drawn; bigger ones are chained."""
BADGE_CHAR = 6.0
"""Advance of a character of the storage badge's font (9 px bold sans)."""

EdgeKey = tuple[Hashable, Hashable]
Geometry = tuple[Any, ...]
Region = tuple[float, float, float, float]
"""(x0, x1, y0, y1): every box that can change an edge's route meets this rectangle."""


class BoxLike(Protocol):
    """What the router reads of a node's box: a :class:`Box`, or the canvas's own node."""

    @property
    def cx(self) -> float: ...
    @property
    def cy(self) -> float: ...
    @property
    def width(self) -> float: ...
    @property
    def height(self) -> float: ...
    @property
    def span(self) -> float: ...


#: a node's key (the canvas's string ids, the SVG renderer's own): the edges of one call
#: are keyed by the same kind of key as its nodes
K = TypeVar("K", bound=Hashable)


class Box:
    """A node's box as the router sees it: centre, size, and the width edges may attach to."""

    __slots__ = ("cx", "cy", "height", "span", "width")

    def __init__(self, cx: float, cy: float, width: float, height: float, span: float):
        self.cx, self.cy, self.width, self.height, self.span = cx, cy, width, height, span

    @classmethod
    def of(cls, kind: Any, cx: float, cy: float, width: float, height: float) -> Box:
        return cls(cx, cy, width, height, port_span(kind, width, height))


def port_span(kind: Any, width: float, height: float) -> float:
    """Width along the top/bottom border where edges may attach (the flat part)."""
    flat = width - (height if kind == _TENSOR else 2 * corner_radius(kind, height))
    return max(0.0, min(0.6 * width, flat))


# --------------------------------------------------------------------------- obstacles


Entry = tuple[float, float, float, float, Any]
"""A box as the obstacles keep it: (left, right, top, bottom, id)."""
_left = itemgetter(0)


class Obstacles:
    """The boxes edges must go around, bucketed in horizontal bands and sorted by left edge.

    Each box is one tuple (its floats shared by every band it lies in): a
    100,000-node graph's obstacles take about 25 MB."""

    def __init__(self, band: float = 42.0):
        self.band = band
        self._rows: dict[int, list[Entry]] = {}
        self._boxes: dict[Hashable, Entry] = {}
        self._max_w = 0.0

    def __len__(self) -> int:
        return len(self._boxes)

    def __contains__(self, node_id: object) -> bool:
        return node_id in self._boxes

    def get(self, node_id: Hashable) -> tuple[float, float, float, float] | None:
        """(left, right, top, bottom) of ``node_id``'s box, or None."""
        entry = self._boxes.get(node_id)
        return None if entry is None else entry[:4]

    def _bands(self, y0: float, y1: float) -> range:
        return range(math.floor(y0 / self.band), math.floor(y1 / self.band) + 1)

    def set(self, node_id: Hashable, cx: float, cy: float, w: float, h: float) -> bool:
        """Put ``node_id``'s box at this place; True when that changed anything."""
        left, right, top, bottom = cx - w / 2, cx + w / 2, cy - h / 2, cy + h / 2
        old = self._boxes.get(node_id)
        if old is not None:
            if old[0] == left and old[1] == right and old[2] == top and old[3] == bottom:
                return False
            self.remove(node_id)
        entry = (left, right, top, bottom, node_id)
        self._boxes[node_id] = entry
        self._max_w = max(self._max_w, w)
        for b in self._bands(top, bottom):
            entries = self._rows.setdefault(b, [])
            entries.insert(bisect_right(entries, left, key=_left), entry)
        return True

    def set_many(self, boxes: Iterable[tuple[Hashable, float, float, float, float]]) -> None:
        """:meth:`set` for many boxes ``(id, cx, cy, w, h)`` at once: the boxes that
        changed are sorted into their bands together (a 100,000-node graph is one sort
        per band, not an insertion each)."""
        pending: dict[int, list[Entry]] = {}
        known = self._boxes
        max_w = self._max_w
        band = self.band
        for node_id, cx, cy, w, h in boxes:
            left, right, top, bottom = cx - w / 2, cx + w / 2, cy - h / 2, cy + h / 2
            old = known.get(node_id)
            if old is not None:
                if old[0] == left and old[1] == right and old[2] == top and old[3] == bottom:
                    continue
                self.remove(node_id)
            entry = known[node_id] = (left, right, top, bottom, node_id)
            if w > max_w:
                max_w = w
            for b in range(math.floor(top / band), math.floor(bottom / band) + 1):
                if b in pending:
                    pending[b].append(entry)
                else:
                    pending[b] = [entry]
        self._max_w = max_w
        rows = self._rows
        for b, entries in pending.items():
            row = rows.get(b)
            if row is not None:
                entries = row + entries
            if len(entries) > 1:
                entries.sort(key=_left)  # stable: as inserting them one by one orders them
            rows[b] = entries

    def remove(self, node_id: Hashable) -> tuple[float, float, float, float] | None:
        """Take ``node_id``'s box out; returns it (None when it was not there)."""
        entry = self._boxes.pop(node_id, None)
        if entry is None:
            return None
        left = entry[0]
        for b in self._bands(entry[2], entry[3]):
            entries = self._rows.get(b)
            if entries is None:
                continue
            i = bisect_left(entries, left, key=_left)
            while i < len(entries) and entries[i][0] == left:
                if entries[i][4] == node_id:
                    del entries[i]
                    break
                i += 1
            if not entries:
                del self._rows[b]
        return entry[:4]

    def query(self, x0: float, x1: float, y0: float, y1: float) -> list[Entry]:
        """Boxes ``(left, right, top, bottom, id)`` whose inside meets the open rectangle."""
        reach = x0 - self._max_w
        b0, b1 = math.floor(y0 / self.band), math.floor(y1 / self.band)
        if b0 == b1:
            entries = self._rows.get(b0)
            if entries is None:
                return []
            return [
                e
                for e in entries[
                    bisect_left(entries, reach, key=_left) : bisect_left(entries, x1, key=_left)
                ]
                if e[1] > x0 and e[0] < x1 and e[3] > y0 and e[2] < y1
            ]
        found: dict[Any, Entry] = {}
        for b in range(b0, b1 + 1):
            entries = self._rows.get(b)
            if entries is None:
                continue
            for e in entries[
                bisect_left(entries, reach, key=_left) : bisect_left(entries, x1, key=_left)
            ]:
                if e[1] > x0 and e[0] < x1 and e[3] > y0 and e[2] < y1:
                    found[e[4]] = e
        return list(found.values())


# --------------------------------------------------------------------------- S-curves


def _s_param(u: float) -> float:
    """The t at which an S-curve has gone the fraction ``u`` of its height."""
    # y(t) = 1.5 t (1 - t) + t^3 is increasing (its slope is at least 0.75): Newton converges.
    t = u
    for _ in range(6):
        f = 1.5 * t * (1 - t) + t * t * t - u
        t -= f / (1.5 - 3 * t + 3 * t * t)
        t = 0.0 if t < 0 else 1.0 if t > 1 else t
    return t


def _s_x(xa: float, ya: float, xb: float, yb: float, y: float) -> float:
    """x of the S-curve from (xa, ya) to (xb, yb) where it crosses height ``y``."""
    if yb == ya or xa == xb:
        return xa
    u = (y - ya) / (yb - ya)
    u = 0.0 if u < 0 else 1.0 if u > 1 else u
    t = _s_param(u)
    return xa + (xb - xa) * t * t * (3 - 2 * t)


_S_STEPS = 512
# how far along its width an S-curve is at each 1/_S_STEPS of its height (increasing)
_S_TABLE = [(lambda t: t * t * (3 - 2 * t))(_s_param(i / _S_STEPS)) for i in range(_S_STEPS + 1)]


def _s_x_span(
    xa: float, ya: float, xb: float, yb: float, y0: float, y1: float
) -> tuple[float, float]:
    """An x range that holds the S-curve from (xa, ya) to (xb, yb) between heights y0 and
    y1 (a little wider than the curve: from the table, no Newton solve)."""
    if yb == ya or xa == xb:
        return xa, xa
    u0, u1 = (y0 - ya) / (yb - ya), (y1 - ya) / (yb - ya)
    if u0 > u1:
        u0, u1 = u1, u0
    u0 = 0.0 if u0 < 0 else 1.0 if u0 > 1 else u0
    u1 = 0.0 if u1 < 0 else 1.0 if u1 > 1 else u1
    f0 = _S_TABLE[int(u0 * _S_STEPS)] - 1e-9
    f1 = _S_TABLE[min(_S_STEPS, math.ceil(u1 * _S_STEPS))] + 1e-9
    xs0, xs1 = xa + (xb - xa) * f0, xa + (xb - xa) * f1
    return (xs0, xs1) if xs0 <= xs1 else (xs1, xs0)


class _Router:
    def __init__(self, obstacles: Obstacles, skip: Container[Any]):
        self.obs = obstacles
        self.skip = skip
        self.region = [math.inf, -math.inf, math.inf, -math.inf]

    def see(self, x0: float, x1: float, y0: float, y1: float) -> None:
        r = self.region
        if x0 < r[0]:
            r[0] = x0
        if x1 > r[1]:
            r[1] = x1
        if y0 < r[2]:
            r[2] = y0
        if y1 > r[3]:
            r[3] = y1

    def boxes(self, x0: float, x1: float, y0: float, y1: float) -> list[tuple]:
        self.see(x0, x1, y0, y1)
        return [e for e in self.obs.query(x0, x1, y0, y1) if e[4] not in self.skip]

    def first_hit(self, xa: float, ya: float, xb: float, yb: float) -> tuple | None:
        """The first box (from A) the S-curve A -> B comes within CLEARANCE of: the box
        met first going from A (the top of a box, going down; its bottom, going up), then
        the leftmost, then by id.

        The window is read one band of the obstacles at a time, from A: a box first
        met in a band starts (going down) below every box met in the bands before, so
        the first band with a hit holds the answer. A long edge (GPT-2's tied embedding
        spans the whole graph) that the router bends 60 times used to read its whole
        remaining window at each bend."""
        lo, hi = (ya, yb) if yb > ya else (yb, ya)
        if hi - lo < 1e-9:
            return None
        c = CLEARANCE
        down = yb > ya
        x0, x1 = min(xa, xb) - c, max(xa, xb) + c
        self.see(x0, x1, lo, hi)  # the route depends on the whole window, as before
        obs, skip, band = self.obs, self.skip, self.obs.band
        first, last = math.floor(lo / band), math.floor(hi / band)
        seen: set[Any] = set()
        for b in range(first, last + 1) if down else range(last, first - 1, -1):
            s0, s1 = max(lo, b * band), min(hi, (b + 1) * band)
            if s1 <= s0:
                continue
            near: list[tuple[tuple, tuple, float, float]] = []
            for e in obs.query(x0, x1, s0, s1):
                if e[4] in seen or e[4] in skip:
                    continue
                seen.add(e[4])
                y0, y1 = max(e[2] - c, lo), min(e[3] + c, hi)
                if y1 <= y0:
                    continue
                # a cheap bound first: most boxes of a wide window are nowhere near the curve
                xs0, xs1 = _s_x_span(xa, ya, xb, yb, y0, y1)
                if xs1 <= e[0] - c or xs0 >= e[1] + c:
                    continue
                near.append(((e[2] if down else -e[3], e[0], str(e[4])), e, y0, y1))
            near.sort(key=lambda entry: entry[0])
            # the first (from A) the curve really comes near
            for _, e, y0, y1 in near:
                xs0, xs1 = _s_x(xa, ya, xb, yb, y0), _s_x(xa, ya, xb, yb, y1)
                if max(xs0, xs1) <= e[0] - c or min(xs0, xs1) >= e[1] + c:
                    continue
                return e
        return None

    def free_x(self, want: float, y0: float, y1: float) -> float:
        """The x nearest ``want`` where a vertical line from y0 to y1 keeps clear of every box."""
        c = CLEARANCE

        def search(direction: int) -> float:
            x = want
            for _ in range(500):
                hits = self.boxes(x - c, x + c, y0, y1)
                if not hits:
                    return x
                if direction > 0:
                    x = max(e[1] for e in hits) + c + 1e-6
                else:
                    x = min(e[0] for e in hits) - c - 1e-6
            return x

        right = search(1)
        if right == want:
            return want
        left = search(-1)
        # what could change this choice lies within the nearer distance on either side
        reach = min(right - want, want - left)
        self.see(want - reach - c, want + reach + c, y0, y1)
        return left if want - left < right - want else right

    def route(self, x0: float, y0: float, x1: float, y1: float) -> list[tuple[float, float]]:
        """Pass points between (x0, y0) and (x1, y1): [(x, y_in), (x, y_out), ...]."""
        anchors = [(x0, y0), (x1, y1)]
        c = CLEARANCE
        k = 0
        passes = 0
        while k < len(anchors) - 1 and passes < MAX_PASSES:
            (xa, ya), (xb, yb) = anchors[k], anchors[k + 1]
            hit = self.first_hit(xa, ya, xb, yb)
            if hit is None:
                k += 2
                continue
            if yb > ya:
                y_in, y_out = max(hit[2] - c, ya), min(hit[3] + c, yb)
            else:
                y_in, y_out = min(hit[3] + c, ya), max(hit[2] - c, yb)
            want = _s_x(xa, ya, xb, yb, (y_in + y_out) / 2)
            gx = self.free_x(want, min(y_in, y_out), max(y_in, y_out))
            anchors[k + 1 : k + 1] = [(gx, y_in), (gx, y_out)]
            passes += 1
        return anchors[1:-1]


# --------------------------------------------------------------------------- one edge


def edge_path(
    a: BoxLike,
    b: BoxLike,
    src_dx: float = 0.0,
    dst_dx: float = 0.0,
    arrow: bool = True,
    obstacles: Obstacles | None = None,
    skip: Container[Any] = (),
) -> tuple[Geometry, Region]:
    """The geometry of an edge from box ``a`` to box ``b`` and the region it depends on.

    ``src_dx``/``dst_dx`` move the ends along the borders (edges sharing a side
    spread out); ``skip`` holds the ids of ``a`` and ``b`` in ``obstacles``.
    """
    dy = b.cy - a.cy
    threshold = (a.height + b.height) / 4
    alen = ARROW_LEN if arrow else 0.0
    c = CLEARANCE
    obstacles = obstacles if obstacles is not None and len(obstacles) else None
    if dy > threshold or dy < -threshold:
        sign = 1.0 if dy > 0 else -1.0
        x0, y0 = a.cx + src_dx, a.cy + sign * a.height / 2
        tx, ty = b.cx + dst_dx, b.cy - sign * b.height / 2
        by = ty - sign * alen
        xl, xr = (x0, tx) if x0 <= tx else (tx, x0)
        if obstacles is not None:
            yl, yh = (y0, by) if y0 <= by else (by, y0)
            if any(e[4] not in skip for e in obstacles.query(xl - c, xr + c, yl, yh)):
                # something stands near the straight curve: route (the router looks at
                # the same window first, so the region is the same either way)
                router = _Router(obstacles, skip)
                passes = router.route(x0, y0, tx, by)
                router.see(xl - c, xr + c, min(y0, ty), max(y0, ty))
                region = _grown(router.region)
                if passes:
                    flat = tuple(v for p in passes for v in p)
                    return ("r", x0, y0, flat, tx, by, tx, ty), region
        region = _grown((xl - c, xr + c, min(y0, ty), max(y0, ty)))
        bend = max(abs(by - y0) * 0.5, 12.0) * sign
        return ("c", x0, y0, x0, y0 + bend, tx, by - bend, tx, by, tx, ty), region
    sign = 1.0 if b.cx >= a.cx else -1.0
    x0, y0 = a.cx + sign * a.width / 2, a.cy
    tx, ty = b.cx - sign * b.width / 2, b.cy
    xl, xr = (x0, tx) if x0 <= tx else (tx, x0)
    lo_y, hi_y = min(y0, ty) - 2.0, max(y0, ty) + 2.0
    if obstacles is not None:
        blockers = [e for e in obstacles.query(xl, xr, lo_y, hi_y) if e[4] not in skip]
        if blockers:
            router = _Router(obstacles, skip)
            router.see(xl, xr, lo_y, hi_y)
            return _under(a, b, sign, alen, blockers, router)
    region = _grown((xl, xr, lo_y, hi_y))
    length = math.hypot(tx - x0, ty - y0) or 1.0
    bx, by = tx - (tx - x0) / length * alen, ty - (ty - y0) / length * alen
    return ("l", x0, y0, bx, by, tx, ty), region


def _under(
    a: BoxLike, b: BoxLike, sign: float, alen: float, blockers: Sequence[tuple], router: _Router
) -> tuple[Geometry, Region]:
    """An edge within a row with boxes between its ends: a U under the row, bottom to bottom."""
    x0, y0 = a.cx + sign * a.span / 2, a.cy + a.height / 2
    tx, ty = b.cx, b.cy + b.height / 2
    by = ty + alen
    need = max([e[3] for e in blockers] + [y0, by]) + CLEARANCE
    # the cubic's lowest point is about 1/8 (y0 + by) + 3/4 yc
    yc = max((need - 0.125 * (y0 + by)) / 0.75, max(y0, by) + 12.0)
    router.see(min(x0, tx), max(x0, tx), min(y0, ty), yc)
    return ("u", x0, y0, x0, yc, tx, yc, tx, by, tx, ty), _grown(router.region)


def _grown(r: Sequence[float]) -> Region:
    c = CLEARANCE + 1.0
    return (r[0] - c, r[1] + c, r[2] - c, r[3] + c)


# --------------------------------------------------------------------------- every edge


def _port_order(entry: tuple[float, EdgeKey]) -> tuple[float, str]:
    return entry[0], repr(entry[1])


def edge_geometries(
    todo: Iterable[tuple[K, K]],
    kinds: Mapping[tuple[K, K], str],
    adj: Mapping[K, Iterable[tuple[K, K]]],
    nodes: Mapping[K, BoxLike],
    obstacles: Obstacles | None = None,
) -> dict[tuple[K, K], tuple[Geometry, Region]]:
    """Geometry (and region) of each edge of ``todo``.

    ``kinds`` holds every edge drawn (key -> kind; a ``saved`` edge has no
    arrowhead) and ``adj`` indexes them by node: edges leaving or entering one
    side of a box spread along it, ordered by where their other ends are, so
    the whole neighbourhood of an edge decides its ports.
    """
    todo = list(todo)
    # (node, side) -> [(x of the other end, key)] for edges leaving/entering vertically.
    ports: dict[tuple[K, int], list[tuple[float, tuple[K, K]]]] = {}
    ends = {n for key in todo for n in key}
    for q in ends:
        for key in adj.get(q, ()):
            if key not in kinds:
                continue
            s, t = key
            a, b = nodes[s], nodes[t]
            dy = b.cy - a.cy
            threshold = (a.height + b.height) / 4
            if dy > threshold:
                if q == s:
                    ports.setdefault((s, 1), []).append((b.cx, key))
                else:
                    ports.setdefault((t, -1), []).append((a.cx, key))
            elif dy < -threshold:
                if q == s:
                    ports.setdefault((s, -1), []).append((b.cx, key))
                else:
                    ports.setdefault((t, 1), []).append((a.cx, key))
    offsets: dict[tuple[tuple[K, K], str], float] = {}
    for (node_id, _side), entries in ports.items():
        if len(entries) < 2:
            continue
        entries.sort(key=_port_order)
        span = min(nodes[node_id].span, PORT_STEP * (len(entries) - 1))
        step = span / (len(entries) - 1)
        for i, (_, key) in enumerate(entries):
            end = "src" if key[0] == node_id else "dst"
            offsets[(key, end)] = -span / 2 + i * step
    out: dict[tuple[K, K], tuple[Geometry, Region]] = {}
    for key in todo:
        s, t = key
        out[key] = edge_path(
            nodes[s],
            nodes[t],
            offsets.get((key, "src"), 0.0),
            offsets.get((key, "dst"), 0.0),
            kinds[key] != _SAVED_EDGE,
            obstacles,
            key,
        )
    return out


# --------------------------------------------------------------------------- reading a geometry


def geometry_segments(g: Geometry) -> list[tuple[str, tuple[float, ...]]]:
    """The path as (command, coordinates): ("M", (x, y)), ("L", (x, y)), ("C", (c1, c2, p))."""
    out: list[tuple[str, tuple[float, ...]]] = [("M", (g[1], g[2]))]
    if g[0] in ("c", "u"):
        out.append(("C", g[3:9]))
    elif g[0] == "l":
        out.append(("L", g[3:5]))
    else:
        ax, ay = g[1], g[2]
        flat = g[3]
        for i in range(0, len(flat), 4):
            px, y_in, _, y_out = flat[i : i + 4]
            out.append(_s_segment(ax, ay, px, y_in))
            out.append(("L", (px, y_out)))
            ax, ay = px, y_out
        out.append(_s_segment(ax, ay, g[4], g[5]))
    return out


def _s_segment(ax: float, ay: float, bx: float, by: float) -> tuple[str, tuple[float, ...]]:
    if by == ay:
        return ("L", (bx, by))
    k = (by - ay) / 2
    return ("C", (ax, ay + k, bx, by - k, bx, by))


def arrow_ends(g: Geometry) -> tuple[float, float, float, float]:
    """(bx, by, tx, ty): the arrowhead's base centre and tip."""
    if g[0] in ("c", "u"):
        return g[7], g[8], g[9], g[10]
    if g[0] == "l":
        return g[3], g[4], g[5], g[6]
    return g[4], g[5], g[6], g[7]


def arrow_polygon(g: Geometry) -> list[tuple[float, float]] | None:
    """The arrowhead's triangle (tip first), or None for an edge without one."""
    bx, by, tx, ty = arrow_ends(g)
    if (bx, by) == (tx, ty):
        return None
    length = math.hypot(tx - bx, ty - by)
    ux, uy = (tx - bx) / length, (ty - by) / length
    px, py = -uy * ARROW_HALF, ux * ARROW_HALF
    return [(tx, ty), (bx + px, by + py), (bx - px, by - py)]


def geometry_points(g: Geometry) -> list[tuple[float, float]]:
    """Every point of the path and its control points, and the arrow's tip."""
    pts: list[tuple[float, float]] = []
    for _, coords in geometry_segments(g):
        pts += [(coords[i], coords[i + 1]) for i in range(0, len(coords), 2)]
    bx, by, tx, ty = arrow_ends(g)
    pts.append((tx, ty))
    return pts


def geometry_bounds(g: Geometry) -> tuple[float, float, float, float]:
    """(x0, y0, x1, y1) around the whole drawing of the edge (curves stay inside their hull)."""
    pts = geometry_points(g)
    head = arrow_polygon(g) or []
    xs = [p[0] for p in pts + head]
    ys = [p[1] for p in pts + head]
    return min(xs), min(ys), max(xs), max(ys)


def geometry_polyline(g: Geometry) -> list[tuple[float, float]]:
    """The points a plain polyline drawing of the edge goes through: its ends, its passes,
    then the arrow's base and tip (so the head keeps its direction)."""
    bx, by, tx, ty = arrow_ends(g)
    pts = [(g[1], g[2])]
    if g[0] == "r":
        flat = g[3]
        pts += [(flat[i], flat[i + 1]) for i in range(0, len(flat), 2)]
    elif g[0] == "u":
        pts += [(g[3], g[4]), (g[5], g[6])]  # down, across, up
    if (bx, by) != (tx, ty):
        pts.append((bx, by))
    pts.append((tx, ty))
    return pts


def geometry_midpoint(g: Geometry) -> tuple[float, float]:
    """Where a label on the edge goes: mid-curve, or mid-way to the first pass of a route."""
    if g[0] in ("c", "u"):
        return (
            (g[1] + 3 * g[3] + 3 * g[5] + g[7]) / 8,
            (g[2] + 3 * g[4] + 3 * g[6] + g[8]) / 8,
        )
    if g[0] == "l":
        return (g[1] + g[3]) / 2, (g[2] + g[4]) / 2
    flat = g[3]
    return (g[1] + flat[0]) / 2, (g[2] + flat[1]) / 2


# --------------------------------------------------------------------------- shared storage


def badge_width(group: str) -> float:
    """Width of a storage badge ("S3") on a node's border."""
    return BADGE_CHAR * len(str(group)) + 8


def badge_center(kind: Any, width: float, height: float, group: str) -> tuple[float, float]:
    """Where a storage badge sits, relative to the node's centre (links end there)."""
    if kind == _TENSOR:
        # A sticker on the rounded end, 45 degrees below the middle.
        return width / 2 - 0.146 * height, 0.354 * height
    # A sticker on the bottom-right corner, poking out a little.
    return width / 2 - badge_width(group) / 2 + 3, height / 2 - 1


def storage_link_pairs(
    groups: Mapping[str, Sequence[K]],
    kind: Callable[[K], Any],
    center: Callable[[K], tuple[float, float]],
) -> list[tuple[str, K, K]]:
    """(group, a, b) for each dotted link between nodes sharing a storage.

    ``groups`` lists each group's members in graph order. Small groups are
    linked in full, a star from the variable ("these live in x's memory"); in
    big ones (a weight saved by every op of a long chain) only the tensors are
    chained, or the lines would cover the graph.
    """
    links: list[tuple[str, K, K]] = []
    for group, members in groups.items():
        tensors = [m for m in members if kind(m) == _TENSOR]
        if len(members) <= SMALL_STORAGE_GROUP:
            hub = tensors[0] if tensors else members[0]
            links += [(group, hub, m) for m in members if m != hub]
            continue
        ordered = sorted(tensors or members, key=lambda m: (center(m)[1], center(m)[0]))
        links += [(group, a, b) for a, b in zip(ordered, ordered[1:], strict=False)]
    return links


def storage_link_curve(
    x0: float, y0: float, x1: float, y1: float
) -> tuple[float, float, float, float, float, float]:
    """Control points and end of the cubic from badge (x0, y0) to badge (x1, y1)."""
    if abs(y1 - y0) < 4:
        # Same row: a sag under the boxes between the two badges.
        sag = min(90.0, 14.0 + abs(x1 - x0) * 0.15)
        return (x0, y0 + sag, x1, y1 + sag, x1, y1)
    # Between rows: bow out to the right, where the badges are.
    bow = 40.0 + 0.2 * abs(y1 - y0)
    return (x0 + bow, y0 + (y1 - y0) * 0.25, x1 + bow, y1 - (y1 - y0) * 0.25, x1, y1)
