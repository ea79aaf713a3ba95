"""gradviz.graph.routing: the band-by-band search for the first box an edge meets finds
exactly what a search of its whole window finds."""

from __future__ import annotations

import random

from gradviz.graph.routing import CLEARANCE, Obstacles, _Router, _s_x, _s_x_span


def whole_window_first_hit(router: _Router, xa, ya, xb, yb):
    """The reference: every box of the window, sorted from A, the first the curve nears."""
    lo, hi = (ya, yb) if yb > ya else (yb, ya)
    if hi - lo < 1e-9:
        return None
    c = CLEARANCE
    down = yb > ya
    near = []
    for e in router.obs.query(min(xa, xb) - c, max(xa, xb) + c, lo, hi):
        if e[4] in router.skip:
            continue
        y0, y1 = max(e[2] - c, lo), min(e[3] + c, hi)
        if y1 <= y0:
            continue
        xs0, xs1 = _s_x_span(xa, ya, xb, yb, y0, y1)
        if xs1 <= e[0] - c or xs0 >= e[1] + c:
            continue
        near.append(((e[2] if down else -e[3], e[0], str(e[4])), e, y0, y1))
    near.sort(key=lambda entry: entry[0])
    for _, e, y0, y1 in near:
        xs0, xs1 = _s_x(xa, ya, xb, yb, y0), _s_x(xa, ya, xb, yb, y1)
        if max(xs0, xs1) <= e[0] - c or min(xs0, xs1) >= e[1] + c:
            continue
        return e
    return None


def test_first_hit_is_the_whole_windows_first_hit_on_random_boxes():
    rng = random.Random(12)
    for trial in range(60):
        obs = Obstacles(band=rng.choice([10.0, 42.0, 97.0]))
        boxes = []
        for i in range(rng.randint(0, 120)):
            w, h = rng.uniform(4, 160), rng.uniform(4, 90)
            # some on the band grid and some sharing tops, to exercise the ties
            cx = rng.choice([rng.uniform(-300, 300), 0.0, 50.0])
            cy = rng.choice([rng.uniform(-800, 800), 42.0 * rng.randint(-10, 10) + h / 2])
            obs.set(f"n{i}", cx, cy, w, h)
            boxes.append(f"n{i}")
        skip = set(rng.sample(boxes, min(len(boxes), 3)))
        router = _Router(obs, skip)
        for _ in range(40):
            xa, xb = rng.uniform(-350, 350), rng.uniform(-350, 350)
            ya, yb = rng.uniform(-900, 900), rng.uniform(-900, 900)
            if rng.random() < 0.1:
                yb = ya
            assert router.first_hit(xa, ya, xb, yb) == whole_window_first_hit(
                router, xa, ya, xb, yb
            ), (trial, xa, ya, xb, yb)


def test_the_route_depends_on_the_whole_window_as_before():
    obs = Obstacles()
    obs.set("a", 0.0, 100.0, 60.0, 30.0)
    obs.set("b", 0.0, 900.0, 60.0, 30.0)
    router = _Router(obs, ())
    hit = router.first_hit(0.0, 0.0, 10.0, 1000.0)
    assert hit is not None and hit[4] == "a"
    # the region (what invalidates this route when it changes) covers the whole span
    left, right, top, bottom = router.region
    assert top <= 0.0 and bottom >= 1000.0 and left <= -CLEARANCE and right >= 10.0 + CLEARANCE
