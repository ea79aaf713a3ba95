"""The built-in demos' pictures, as the window gets them from the kernel step by step:
readable tensors without gradients, in-place chains that flow down, and positions that
stay put on Step back (issue: seen at 1400x900 and 1024x700)."""

from __future__ import annotations

import io

import pytest

from gradviz.app.demos import find_demo
from gradviz.core.session import Session
from gradviz.graph.layout import (
    DEFAULT_SPACING,
    IncrementalLayout,
    layout,
    tag_extent,
)

from .helpers import boxes, overlapping


def extent(graph, pos: dict, nodes=None) -> tuple[float, float]:
    bx = [b for v, b in boxes(graph, pos).items() if nodes is None or v in nodes]
    return (max(b[2] for b in bx) - min(b[0] for b in bx),
            max(b[3] for b in bx) - min(b[1] for b in bx))


def kernel():
    from gradviz.kernel_server import Kernel

    return Kernel(io.StringIO())


def step_through(name: str, until: str | None = None):
    """The demo run a statement at a time, as the window does (a failed one skipped);
    stops after the statement that starts with ``until``. Returns the kernel and the
    positions of every state."""
    k = kernel()
    states = [k.handle({"cmd": "load", "source": find_demo(name).source, "device": "cpu"})]
    while not k.session.at_end:
        if k.session.failed:
            k.handle({"cmd": "skip"})
            if k.session.at_end:
                break
        states.append(k.handle({"cmd": "step"}))
        ran = k.session.statements[k.session.cursor - 1].source
        if until is not None and ran.startswith(until):
            break
    return k, [{v: tuple(p) for v, p in s["positions"].items()} for s in states]


def loose(graph) -> list:
    return [v for v in graph if graph.degree(v) == 0]


# --------------------------------------------------------------------------- loose tensors


def test_shared_storage_demo_is_a_readable_grid():
    """Before: eleven tensors in one row 1,510 x 44 px; fitted to the canvas of a
    1400x900 window (about 700 px wide) their labels were ~5 px tall."""
    k, states = step_through("shared_storage")
    graph, pos = k.session.graph, states[-1]
    assert len(loose(graph)) == graph.number_of_nodes() == 11
    assert overlapping(graph, pos) == []
    w, h = extent(graph, pos)
    assert w / h < 2.5 and w < 700, (w, h)
    assert len({y for _, y in pos.values()}) >= 3  # rows, not one row
    # view, [:] and detach share x's storage: each sits right after or right under the
    # one before it (the canvas links them with short dotted lines)
    x = next(v for v in graph if graph.nodes[v]["label"] == "x")
    group = [v for v in graph if graph.nodes[v].get("storage") == graph.nodes[x]["storage"]]
    assert len(group) == 4
    bx = boxes(graph, pos)
    for a, b in zip(group, group[1:]):
        beside = pos[a][1] == pos[b][1] and 0 < bx[b][0] - bx[a][2] <= 2 * DEFAULT_SPACING.grid_gap
        under = pos[b][1] > pos[a][1] and abs(bx[a][0] - bx[b][0]) < 1e-6
        assert beside or under, (graph.nodes[a]["label"], graph.nodes[b]["label"])
    # a fresh layout of the same graph: the storage group on one row, side by side
    fresh = layout(graph)
    assert len({fresh[v][1] for v in group}) == 1
    w, h = extent(graph, fresh)
    assert w / h < 2.5


def test_clone_vs_detach_loose_tensors_are_not_one_row():
    """Before: the six tensors without edges made one row to the right of the graphs,
    the whole picture 1,475 x 632 px."""
    k, states = step_through("clone_vs_detach")
    graph, pos = k.session.graph, states[-1]
    assert overlapping(graph, pos) == []
    lone = loose(graph)
    assert len(lone) >= 5
    assert len({pos[v][1] for v in lone}) >= 2
    w, h = extent(graph, pos)
    assert w / h < 1.5, (w, h)
    w, h = extent(graph, layout(graph))  # a fresh layout: the graphs side by side
    assert w / h < 2.2 and w < 0.6 * 1475, (w, h)


@pytest.mark.parametrize("name", ["devices", "inplace_memory"])
def test_a_few_tensors_without_grad_sit_in_a_short_row(name):
    k, states = step_through(name)
    graph, pos = k.session.graph, states[-1]
    assert overlapping(graph, pos) == []
    w, _ = extent(graph, pos)
    assert w < 450  # devices: 527 px in one row before


# --------------------------------------------------------------------------- in-place


def test_inplace_dangers_chain_flows_down_clear_of_the_stale_tab():
    """``b.mul_(2)``: before, MulBackward0 went half-way between b and SigmoidBackward0,
    sideways, and its edge climbed back through the saved result's "stale v1≠v0" tab."""
    k, states = step_through("inplace_dangers", until="b.mul_(2)")
    graph, pos = k.session.graph, states[-1]
    assert overlapping(graph, pos) == []
    pitch = DEFAULT_SPACING.pitch
    for u, v, kind in graph.edges(data="kind"):
        if kind != "saved":
            assert pos[v][1] - pos[u][1] >= pitch - 1e-6, (u, v)  # one layer down or more
    stale = [v for v, d in graph.nodes(data=True) if d.get("stale") is True]
    assert len(stale) == 1
    bx = boxes(graph, pos)
    x0, y0 = bx[stale[0]][0], bx[stale[0]][1]
    tab = (x0 + 3.0, y0 - 6.0, x0 + tag_extent(graph.nodes[stale[0]]), y0 + 6.0)
    for u, v in graph.edges:
        if stale[0] in (u, v):
            continue
        # the canvas bends an edge between its tail's bottom and its head's top
        xs = sorted((pos[u][0], pos[v][0]))
        ys = (bx[u][3], bx[v][1])
        assert xs[1] < tab[0] or xs[0] > tab[2] or ys[1] < tab[1] or ys[0] > tab[3], (u, v)
    # only b's tensor node moved (up a layer, above its new grad_fn)
    before = states[-2]
    moved = [v for v in before if v in pos and before[v] != pos[v]]
    assert [graph.nodes[v]["label"] for v in moved] == ["b"]


def test_kept_layout_is_layout_of_previous_through_the_demos():
    """IncrementalLayout must keep giving what layout(graph, previous) gives (the kernel
    keeps one; exports and tests call layout)."""
    for name in ("inplace_dangers", "shared_storage", "clone_vs_detach", "two_leaves"):
        session = Session(find_demo(name).source)
        kept = IncrementalLayout()
        previous = None
        while not session.at_end:
            if session.failed:
                session.skip_failed()
                if session.at_end:
                    break
            session.step()
            positions = kept.update(session.graph)
            assert positions == layout(session.graph, previous), (name, session.cursor)
            previous = dict(positions)


# --------------------------------------------------------------------------- step back


def moved_between(a: dict, b: dict) -> list:
    return sorted(v for v in set(a) & set(b) if a[v] != b[v])


@pytest.mark.parametrize(
    "name", ["first_backward", "two_paths", "two_leaves", "shared_storage", "clone_vs_detach"]
)
def test_step_back_keeps_positions(name):
    """Before: Step back replayed the script and laid the graph out afresh, so the nodes
    it still shows swapped places (first_backward: all 11 moved; clone_vs_detach: 18)."""
    k, states = step_through(name)
    shown = states[-1]
    for _ in range(4):
        if k.session.cursor == 0:
            break
        back = {v: tuple(p) for v, p in k.handle({"cmd": "step_back"})["positions"].items()}
        assert moved_between(shown, back) == []
        assert overlapping(k.session.graph, back) == []
        shown = back
    # stepping forward again brings back the picture it had
    cursor = k.session.cursor
    assert len(states) == len(k.session.statements) + 1  # (no failed statement skipped)
    again = {v: tuple(p) for v, p in k.handle({"cmd": "step"})["positions"].items()}
    assert again == states[cursor + 1]


DROPPING = """\
x = torch.ones(2, requires_grad=True)
y = (x * 2).exp().sin().cos()
y = x.tanh()
z = y * 3
"""


def test_step_back_over_a_statement_that_dropped_nodes_restores_its_picture():
    """``y = x.tanh()`` drops most of the graph (the layout used to start afresh then,
    moving x); stepping back over it brings the chain back where it was, and x stays."""
    k = kernel()
    states = [k.handle({"cmd": "load", "source": DROPPING})["positions"]]
    while not k.session.at_end:
        states.append(k.handle({"cmd": "step"})["positions"])
    assert moved_between(states[2], states[3]) == []  # the rebinding moved nothing
    back = k.handle({"cmd": "step_back"})["positions"]
    assert back == states[3]
    back = k.handle({"cmd": "step_back"})["positions"]
    assert back == states[2]


def test_replaying_the_same_script_keeps_positions_and_a_new_one_starts_afresh():
    """The timeline going back reloads the same source and runs to the step: the nodes
    keep their places. Another script's ids mean other nodes: a fresh layout."""
    source = find_demo("two_paths").source
    k = kernel()
    k.handle({"cmd": "load", "source": source})
    shown = k.handle({"cmd": "run_to_end"})["positions"]
    replayed = k.handle({"cmd": "load", "source": source, "run_to": 5})["positions"]
    assert moved_between(shown, replayed) == []
    other = find_demo("two_leaves").source
    fresh = k.handle({"cmd": "load", "source": other, "run_to": 5})["positions"]
    assert {v: tuple(p) for v, p in fresh.items()} == layout(k.session.graph)


def test_device_switch_keeps_positions():
    """A device switch replays the script on the new device: the same picture."""
    k, states = step_through("clone_vs_detach", until="z = a ** 2")
    again = k.handle({"cmd": "set_device", "device": "cpu", "run_to": k.session.cursor})
    assert {v: tuple(p) for v, p in again["positions"].items()} == states[-1]
