"""The fast step path: capture's per-node cache, the kept layout, state deltas and the
canvas's delta updates each give exactly what the whole computation gives."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from gradviz.core.capture import capture
from gradviz.core.session import Session
from gradviz.graph.delta import DeltaMismatch, StateDecoder, StateEncoder
from gradviz.graph.graphdata import graph_to_json
from gradviz.graph.layout import IncrementalLayout, layout

ROOT = Path(__file__).resolve().parents[1]

# in-place ops on saved tensors (stale), backward freeing saved tensors, .data writes,
# .grad accumulation and an optimizer: everything the capture cache must notice
TRAINING = """\
import torch.nn as nn
torch.manual_seed(0)
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 4)
        self.fc2 = nn.Linear(4, 1)
    def forward(self, x):
        return self.fc2(torch.tanh(self.fc1(x)))
net = Net()
opt = torch.optim.SGD(net.parameters(), lr=0.1)
x = torch.randn(5, 3)
for i in range(3):
    opt.zero_grad()
    loss = net(x).pow(2).mean()
    loss.backward()
    opt.step()
a = torch.ones(3, requires_grad=True)
b = a * 2
c = b.exp()
d = c * b
b2 = b.detach()
b2.add_(1)
e = torch.ones(3, requires_grad=True)
f = (e * 3).sin()
g = f.sum()
g.backward(retain_graph=True)
h = f.cos()
f.data = torch.zeros(3)
k = h * 2
"""

# names moving between nodes of a graph that stays: the in-place capture path
NAMES = """\
x = torch.ones(3, requires_grad=True)
w = torch.randn(3, requires_grad=True)
y = x * w
z = y.exp()
y2 = y
del y
q = z * x
x2 = x
x = None
r = q.sum() + w.sum()
h = z
z = None
lin = torch.nn.Linear(3, 2)
o = lin(q)
p = o.sum() * r
lin2 = lin
o2 = o
o = None
s = p.sin()
"""

SCRIPTS = {
    "names": NAMES,
    "training": TRAINING,
    "inplace": (ROOT / "resources/demos/08_inplace_memory.py").read_text(),
    "shared": (ROOT / "resources/demos/10_shared_storage.py").read_text(),
    "double": (ROOT / "tests/tutorials/19_double_backward.py").read_text(),
}


def _uncached(session: Session) -> dict:
    """The graph as a capture without the cache reads it now."""
    session.interpreter.capturing = True
    try:
        cap = capture(
            session._capture_variables(), session.registry, statement=None,
            previous_nodes=session._last_graph_nodes, previous_edges=session._last_graph_edges,
            include_saved=session.capture_saved, module_tags=session.module_tags,
        )
    finally:
        session.interpreter.capturing = False
    return graph_to_json(cap.graph)


def _strip_new(graph: dict) -> dict:
    return {
        "nodes": sorted(({k: v for k, v in n.items() if k != "new"} for n in graph["nodes"]),
                        key=lambda n: n["id"]),
        "edges": sorted(({k: v for k, v in e.items() if k != "new"} for e in graph["edges"]),
                        key=lambda e: (e["source"], e["target"])),
    }


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_capture_cache_reads_what_a_fresh_capture_reads(name):
    session = Session(SCRIPTS[name])
    steps = 0
    before: set = set()
    before_edges: set = set()
    in_place = 0
    while not session.at_end and steps < 200:
        session.step()
        steps += 1
        in_place += session._capture.changes is not None
        cached = graph_to_json(session.graph)
        assert _strip_new(cached) == _strip_new(_uncached(session)), f"after step {steps}"
        # "new": what the step added to the graph, on nodes and edges alike
        assert {n["id"]: n["new"] for n in cached["nodes"]} == {
            n["id"]: n["id"] not in before for n in cached["nodes"]
        }, f"after step {steps}"
        assert {(e["source"], e["target"]): e["new"] for e in cached["edges"]} == {
            (e["source"], e["target"]): (e["source"], e["target"]) not in before_edges
            for e in cached["edges"]
        }, f"after step {steps}"
        before = {n["id"] for n in cached["nodes"]}
        before_edges = {(e["source"], e["target"]) for e in cached["edges"]}
        assert session._last_graph_nodes == before
    assert session.at_end
    if name in ("training", "double", "names"):
        assert in_place > 3, "the in-place update path ran"


def test_capture_cache_sees_a_stale_saved_tensor():
    session = Session("a = torch.ones(3, requires_grad=True)\nb = a * 2\nc = b.exp()\n"
                      "d = c * b\nwith torch.no_grad():\n    b.add_(1)\n")
    session.run_to_end()
    stale = [n for n in graph_to_json(session.graph)["nodes"] if n.get("stale") is True]
    assert stale, "b's in-place add makes the saved tensor of c*b stale"


def test_incremental_layout_matches_layout_with_previous():
    lines = ["x = torch.tensor(1., requires_grad=True)", "y = x",
             "for i in range(300):\n    y = y * 1.0001"]
    lines += ["y = (y * 1.0001).sin().cos()"] * 6 + ["z = y.exp() + x"]
    session = Session("\n".join(lines))
    kept = IncrementalLayout()
    previous = None
    ways = []
    while not session.at_end:
        session.step()
        positions = kept.update(session.graph)
        ways.append(kept.last)
        previous = layout(session.graph, previous)
        assert positions == previous
        assert set(positions) == set(session.graph)
        previous = dict(positions)
    # the chain's statements are placed around the picture; z, which ties back to x at
    # the bottom, goes above the chain's top (its new nodes wait for each other)
    assert ways.count("incremental") >= 6 and ways[-1] == "incremental"
    kept.reset()
    assert kept.update(session.graph) == layout(session.graph)


def _states(source: str, limit: int = 200) -> list[dict]:
    from gradviz.kernel_server import Kernel

    kernel = Kernel(io.StringIO())
    states = [kernel.handle({"cmd": "load", "source": source})]
    while not kernel.session.at_end and len(states) < limit:
        states.append(kernel.handle({"cmd": "step"}))
    states.append(kernel.handle({"cmd": "step_back"}))
    states.append(kernel.handle({"cmd": "zero_grad"}))
    states.append(kernel.handle({"cmd": "run_to_end"}))
    return [json.loads(json.dumps(s)) for s in states]  # as the wire carries them


@pytest.mark.parametrize("name", ["training", "inplace"])
def test_decoded_deltas_are_the_whole_states(name):
    encoder, decoder = StateEncoder(), StateDecoder()
    sizes = []
    for state in _states(SCRIPTS[name]):
        wire = json.loads(json.dumps(encoder.encode(state, delta=True)))
        sizes.append((len(json.dumps(wire)), len(json.dumps(state))))
        decoded, changes = decoder.decode(wire)
        assert decoded == state
        if changes is not None:
            before = {n["id"] for n in decoded["graph"]["nodes"]}
            assert changes.nodes <= before and not (changes.removed & before)
    assert sum(a for a, _ in sizes[1:]) < sum(b for _, b in sizes[1:])


def test_a_delta_on_the_wrong_base_is_refused():
    encoder, decoder = StateEncoder(), StateDecoder()
    states = _states("a = torch.ones(2, requires_grad=True)\nb = a * 2\nc = b.sum()\n")
    decoder.decode(encoder.encode(states[0], delta=True))
    encoder.encode(states[1], delta=True)  # lost on the way
    with pytest.raises(DeltaMismatch):
        decoder.decode(encoder.encode(states[2], delta=True))
    decoded, changes = decoder.decode(encoder.encode(states[2], delta=False))
    assert decoded == states[2] and changes is None


def _canvas_picture(canvas) -> dict:
    return {
        "nodes": {n: (canvas.node_item(n).cx, canvas.node_item(n).cy, canvas.node_item(n).width,
                      canvas.node_item(n).storage_badge, canvas.node_item(n).state - {"selected"})
                  for n in canvas.node_ids()},
        "order": canvas.node_ids(),
        "edges": {k: (e.kind, e.new, canvas.edge_geometry(*k)) for k, e in canvas._edges.items()},
        "links": sorted(canvas.storage_links()),
        "rect_contains": canvas.graph_rect().contains(canvas._nodes_rect()),
    }


@pytest.mark.parametrize("big", [False, True])
@pytest.mark.parametrize("name", ["training", "shared"])
def test_canvas_deltas_draw_what_a_whole_update_draws(qtbot, monkeypatch, name, big):
    """``big``: with the thresholds low, as a big graph is drawn (tiles, bands, items on
    demand, routes found when asked)."""
    from gradviz.ui.canvas import GraphCanvas
    from gradviz.ui.canvas import view as canvas_module

    if big:
        monkeypatch.setattr(canvas_module, "LAZY_NODE_THRESHOLD", 8)
        monkeypatch.setattr(canvas_module, "BULK_EDGE_THRESHOLD", 8)

    stepped, fresh = GraphCanvas(), GraphCanvas()
    qtbot.addWidget(stepped)
    qtbot.addWidget(fresh)
    encoder, decoder = StateEncoder(), StateDecoder()
    applied = 0
    for state in _states(SCRIPTS[name]):
        decoded, changes = decoder.decode(encoder.encode(state, delta=True))
        stepped.set_graph(decoded["graph"], decoded["positions"], changes)
        applied += changes is not None
        fresh.clear()
        fresh.set_graph(decoded["graph"], decoded["positions"])
        assert _canvas_picture(stepped) == _canvas_picture(fresh)
    assert applied > 5


def test_canvas_deltas_cross_the_bulk_edge_threshold(qtbot, monkeypatch):
    """A chain that grows past BULK_EDGE_THRESHOLD and LAZY_NODE_THRESHOLD (per-edge
    items, then bands; an item per node, then tiles), and back when stepping back."""
    from gradviz.ui.canvas import GraphCanvas, NodeItem
    from gradviz.ui.canvas import view as canvas_module

    source = "x = torch.tensor(1., requires_grad=True)\ny = x\n" + "y = y.sin() * 2\n" * 8
    stepped, fresh = GraphCanvas(), GraphCanvas()
    qtbot.addWidget(stepped)
    qtbot.addWidget(fresh)
    encoder, decoder = StateEncoder(), StateDecoder()
    monkeypatch.setattr(canvas_module, "BULK_EDGE_THRESHOLD", 12)
    monkeypatch.setattr(canvas_module, "LAZY_NODE_THRESHOLD", 32)  # 35 nodes, 31 a step back
    modes = []
    for state in _states(source):
        decoded, changes = decoder.decode(encoder.encode(state, delta=True))
        stepped.set_graph(decoded["graph"], decoded["positions"], changes)
        fresh.clear()
        fresh.set_graph(decoded["graph"], decoded["positions"])
        # what is drawn, before _canvas_picture makes items for every node
        items = {i.node_id for i in stepped.scene().items() if isinstance(i, NodeItem)}
        tiled = {n for tile in stepped._tiles.values() for n in tile.members}
        lazy = len(stepped.node_ids()) > canvas_module.LAZY_NODE_THRESHOLD
        assert stepped._lazy == lazy
        assert tiled == (set(stepped.node_ids()) if lazy else set())
        if not lazy:
            assert items == set(stepped.node_ids())
        modes.append(lazy)
        assert _canvas_picture(stepped) == _canvas_picture(fresh)
        assert stepped.bulk_edges == fresh.bulk_edges
        drawn = {k for band in stepped._bands.values() for k in band.keys}
        assert drawn == (set(stepped._edges) if stepped.bulk_edges else set())
    assert stepped.bulk_edges
    assert True in modes and False in modes[modes.index(True):]  # there and back


def test_value_summaries_share_a_budget_and_read_a_storage_once():
    import torch

    from gradviz.core import capture as capture_module
    from gradviz.core.capture import IdRegistry

    big = torch.arange(3_000_000, dtype=torch.float32).reshape(1000, 3000)
    small = torch.ones(100, 100)
    view = big[0]  # 3,000 values of big's storage
    cap = capture({"big": big, "small": small, "view": view, "again": big}, IdRegistry())
    values = {name: info.value for name, info in cap.tensors.items()}
    # past the budget: the first values and the count, no statistics
    assert values["big"].startswith("[0, 1, 2, 3, 4, 5, ...] (3,000,000 values")
    assert "skipped" in values["big"] and values["again"] == values["big"]
    assert "mean 1" in values["small"] and "max 2999" in values["view"]
    # outside a capture (the inspector's one-off reads) there is no budget
    assert capture_module._STATS.left is None
    assert "mean" in capture_module.summarize(big)


def _served_pairs(source: str, steps: int = 60) -> list[tuple[dict, dict]]:
    """(whole state, state the window rebuilds) for each reply of a kernel asked for
    deltas, as Kernel.serve encodes them (with the in-place capture's hints)."""
    from gradviz.kernel_server import Kernel

    requests = [{"cmd": "load", "source": source}] + [{"cmd": "step"}] * steps + [
        {"cmd": "step_back"}, {"cmd": "zero_grad"}, {"cmd": "run_to_end"}, {"cmd": "reset"},
        {"cmd": "run_to", "index": 4}, {"cmd": "step"}, {"cmd": "step"},
    ]
    kernel = Kernel(io.StringIO())
    decoder = StateDecoder()
    pairs = []
    hinted = 0
    for request in requests:
        state = kernel.handle(request)
        hint, kernel._hint = kernel._hint, None
        hinted += hint is not None
        whole = json.loads(json.dumps(state))  # before the encoder keeps it
        wire = json.loads(json.dumps(kernel.encoder.encode(state, True, hint)))
        rebuilt, _ = decoder.decode(wire)
        pairs.append((whole, rebuilt))
    assert hinted > 3, "the in-place capture's hints were used"
    return pairs


@pytest.mark.parametrize("name", ["names", "training"])
def test_served_deltas_rebuild_exactly_the_whole_states(name):
    """The kernel's hinted deltas (from the in-place capture) against whole states."""
    pairs = _served_pairs(SCRIPTS[name])
    for i, (whole, rebuilt) in enumerate(pairs):
        assert rebuilt == whole, f"state {i}"


def test_debugger_pauses_send_the_whole_change():
    """A pause captures the graph where it stopped (capture_pause), then the kernel's
    state snapshots it: the delta must still carry everything since the state sent
    before."""
    from gradviz.kernel_server import Kernel

    kernel = Kernel(io.StringIO())
    decoder = StateDecoder()
    requests = [{"cmd": "load", "source": SCRIPTS["training"]}] + [
        {"cmd": "debug", "mode": "into", "breakpoints": []}
    ] * 40
    for i, request in enumerate(requests):
        state = kernel.handle(request)
        hint, kernel._hint = kernel._hint, None
        whole = json.loads(json.dumps(state))
        rebuilt, _ = decoder.decode(
            json.loads(json.dumps(kernel.encoder.encode(state, True, hint)))
        )
        assert rebuilt == whole, f"request {i}"



def test_modules_changed_says_when_the_module_tree_changes():
    """The window keeps its module tree across a delta that says no module changed:
    that must be exactly when the tree computed afresh is the same."""
    from gradviz.graph.grouping import module_tree_of_nodes
    from gradviz.kernel_server import Kernel

    kernel = Kernel(io.StringIO())
    decoder = StateDecoder()
    source = SCRIPTS["training"] + "del net\nlin = torch.nn.Linear(3, 1)\nq = lin(x).sum()\n"
    previous = None
    kept = changed = 0
    for request in [{"cmd": "load", "source": source}] + [{"cmd": "step"}] * 60:
        state = kernel.handle(request)
        hint, kernel._hint = kernel._hint, None
        wire = json.loads(json.dumps(kernel.encoder.encode(state, True, hint)))
        decoded, changes = decoder.decode(wire)
        tree = module_tree_of_nodes(decoded["graph"]["nodes"])
        if changes is not None and previous is not None:
            assert (tree != previous) <= changes.modules_changed
            kept += not changes.modules_changed
            changed += changes.modules_changed
        previous = tree
    assert kept and changed


RUN_THEN_STEP = (
    "x = torch.tensor(1., requires_grad=True)\ny = x\n"
    "for i in range(40):\n    y = y.sin() * 2\n"
    "z = y.exp()\n"
)


@pytest.mark.parametrize(("hinted", "big"), [(True, False), (False, False), (True, True)])
def test_the_step_after_a_run_turns_every_glow_off_in_one_field(qtbot, monkeypatch, hinted, big):
    """The first step after running to a line turns every node's "new" glow off: the
    delta says so in one field (``unglow``) instead of sending their dicts or ids, the
    window rebuilds exactly the whole state, and the canvas shows what a whole update
    shows, its glowing nodes and edges exactly those the kernel's state calls new
    (``big``: drawn as a big graph is, by tiles and bands)."""
    from gradviz.kernel_server import Kernel
    from gradviz.ui.canvas import GraphCanvas
    from gradviz.ui.canvas import view as canvas_module

    if big:
        monkeypatch.setattr(canvas_module, "LAZY_NODE_THRESHOLD", 20)
        monkeypatch.setattr(canvas_module, "BULK_EDGE_THRESHOLD", 20)

    kernel = Kernel(io.StringIO())
    decoder = StateDecoder()
    stepped, fresh = GraphCanvas(), GraphCanvas()
    qtbot.addWidget(stepped)
    qtbot.addWidget(fresh)
    wires = []
    for request in [{"cmd": "load", "source": RUN_THEN_STEP, "run_to": 3}, {"cmd": "step"}]:
        state = kernel.handle(request)
        hint, kernel._hint = kernel._hint, None
        whole = json.loads(json.dumps(state))
        wire = json.loads(json.dumps(kernel.encoder.encode(state, True, hint if hinted else None)))
        wires.append(wire)
        decoded, changes = decoder.decode(wire)
        assert decoded == whole
        stepped.set_graph(decoded["graph"], decoded["positions"], changes)
        fresh.clear()
        fresh.set_graph(decoded["graph"], decoded["positions"])
        assert _canvas_picture(stepped) == _canvas_picture(fresh)
        # what glows on the canvas is what the kernel calls new, nodes and edges
        assert {n for n in stepped.node_ids() if "new" in stepped.node_item(n).state} == {
            n["id"] for n in whole["graph"]["nodes"] if n["new"]
        }
        assert {k for k, e in stepped._edges.items() if e.new} == {
            (e["source"], e["target"]) for e in whole["graph"]["edges"] if e["new"]
        }
    first, step = wires[0]["graph"], wires[1]["delta"]
    glowing = [n["id"] for n in first["nodes"] if n["new"]]
    assert len(glowing) > 100  # the run made them all
    # every old node went dark; the delta says so once, with no id of them
    assert step["unglow"] is True and step["unglow_edges"] is True
    assert "renew_off" not in step and "renew_edges_off" not in step
    assert not {n["id"] for n in step["nodes"]} & set(glowing)
    assert not any(e["new"] is False for e in step["edges"])
    assert changes is not None and changes.renewed == set(glowing)
    assert not any("new" in stepped.node_item(n).state for n in glowing)
    assert len(json.dumps(wires[1])) < len(json.dumps(wires[0])) / 10
    assert stepped.bulk_edges == big and stepped._lazy == big


def test_a_glow_turned_off_stays_a_renewal_until_a_later_change_says_more():
    """GraphDelta keeps the nodes whose only change is their glow going off apart from
    those changed, through merges: a later change or removal wins, and a renewal after
    a change leaves the change (whose dict is sent whole, glow and all)."""
    from gradviz.core.capture import GraphDelta

    edge = ("a", "b")
    first = GraphDelta(nodes={"n": None}, renewed={"a": None, "b": None, "c": None},
                       renewed_edges={edge: None})
    first.merge(GraphDelta(nodes={"a": None}, removed={"b": None}, renewed={"n": None},
                           edges={edge: None}))
    assert first.renewed == {"c": None}
    assert first.nodes == {"n": None, "a": None} and first.removed == {"b": None}
    assert first.edges == {edge: None} and not first.renewed_edges
    first.merge(GraphDelta(renewed={"d": None}, removed_edges={edge: None}))
    assert first.renewed == {"c": None, "d": None}
    assert not first.edges and first.removed_edges == {edge: None}


def test_unglow_only_when_every_glow_held_goes_off():
    """``unglow`` says "every glow the window holds goes off": sent only when that is
    what happened (a glowing node sent whole or removed does not count against it);
    when some glow stays on, the ones turned off are listed. Either way the window
    rebuilds the whole state, and keeps which nodes glow."""

    def state(nodes, edges=()):
        return {"cursor": 0, "graph": {
            "nodes": [{"id": n, "kind": "grad_fn", "new": new} for n, new in nodes],
            "edges": [{"source": u, "target": v, "kind": "grad", "new": new}
                      for u, v, new in edges],
        }}

    states = [
        state([("a", True), ("b", True), ("c", False)], [("a", "b", True), ("b", "c", False)]),
        # a's glow goes off, b's stays on: listed, not unglow
        state([("a", False), ("b", True), ("c", False)], [("a", "b", False), ("b", "c", False)]),
        # b goes off, d is new: every glow held went off
        state([("a", False), ("b", False), ("c", False), ("d", True)],
              [("a", "b", False), ("b", "c", False), ("c", "d", True)]),
        # d (glowing) goes, e and g come: d's removal is no glow left on
        state([("a", False), ("b", False), ("c", False), ("e", True), ("g", True)],
              [("a", "b", False), ("b", "c", False), ("c", "e", True)]),
        # e sent whole (its label changed) with its glow off, g's glow off, f new: unglow
        state([("a", False), ("b", False), ("c", False), ("e", False), ("g", False),
               ("f", True)], [("a", "b", False), ("b", "c", False), ("c", "e", False)]),
    ]
    states[4]["graph"]["nodes"][3]["label"] = "x"
    encoder, decoder = StateEncoder(), StateDecoder()
    bodies = []
    for s in states:
        wire = json.loads(json.dumps(encoder.encode(s, delta=True)))
        decoded, changes = decoder.decode(wire)
        assert decoded == s
        bodies.append(wire.get("delta"))
        if changes is not None:
            glowing_now = {n["id"] for n in s["graph"]["nodes"] if n["new"]}
            assert decoder._glowing == glowing_now == encoder._glowing
    assert bodies[1]["renew_off"] == ["a"] and "unglow" not in bodies[1]
    assert bodies[1]["unglow_edges"] is True  # the one glowing edge went dark
    assert bodies[2]["unglow"] is True and "renew_off" not in bodies[2]
    assert "unglow_edges" not in bodies[2]  # no edge glowed
    assert "unglow" not in bodies[3] and bodies[3]["removed"] == ["d"]
    assert bodies[4]["unglow"] is True and [n["id"] for n in bodies[4]["nodes"]] == ["e", "f"]


@pytest.mark.parametrize("width", [500, 700])  # widths where the strip wraps its rows
def test_the_legend_keeps_its_height_while_stepping(qtbot, width):
    """A row of the legend that comes and goes with a step (the "new" glow, freed or
    stale boxes) must not resize the viewport: that refitted the view (the graph
    jumped) and repainted all of it every other step. A new graph fits the strip to
    its rows again, as a fresh canvas does."""
    from gradviz.ui.canvas import GraphCanvas

    stepped, fresh = GraphCanvas(), GraphCanvas()
    for canvas in (stepped, fresh):
        qtbot.addWidget(canvas)
        canvas.resize(width, 450)
        canvas.show()
    encoder, decoder = StateEncoder(), StateDecoder()
    heights, rows, applied = [], [], 0
    for state in _states(SCRIPTS["training"]):
        decoded, changes = decoder.decode(encoder.encode(state, delta=True))
        stepped.set_graph(decoded["graph"], decoded["positions"], changes)
        if changes is None or not decoded["graph"]["nodes"]:
            heights, rows = [], []  # a whole graph: the strip is fitted again
            continue
        applied += 1
        heights.append(stepped.viewport().height())
        rows.append(len(stepped.legend_items()))
    assert applied > 5
    assert heights == sorted(heights, reverse=True)  # it may grow (less room), never shrink
    assert any(b < a for a, b in zip(rows, rows[1:]))  # and rows did go in between
    # a new graph: the strip fits its rows, as on a canvas that only ever saw this graph
    last = decoded
    stepped.clear()
    stepped.set_graph(last["graph"], last["positions"])
    fresh.set_graph(last["graph"], last["positions"])
    assert stepped.legend_rect() == fresh.legend_rect()
    assert stepped.viewport().height() == fresh.viewport().height()
