"""Tests for gradviz.graph.layout: a pure, deterministic layered layout."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import networkx as nx
import pytest

from gradviz.graph.layout import (
    IncrementalLayout,
    LayoutSpacing,
    layout,
    layout_with_routes,
    node_lines,
    node_size,
    tag_extent,
)

from .helpers import boxes, overlapping

ROOT = Path(__file__).resolve().parents[1]


# --------------------------------------------------------------------------- fixtures


def small_graph() -> nx.DiGraph:
    """``y = x * w; z = y.sin(); loss = z.sum()`` in the documented format."""
    g = nx.DiGraph()
    g.add_node("t1", kind="tensor", label="loss", vars=["loss"], shape=[], is_leaf=False)
    g.add_node("fn1", kind="grad_fn", label="SumBackward0", vars=["loss"])
    g.add_node("fn2", kind="grad_fn", label="SinBackward0", vars=["z"])
    g.add_node("s1", kind="saved", label="self", shape=[3])
    g.add_node("fn3", kind="grad_fn", label="MulBackward0", vars=["y"])
    g.add_node("s2", kind="saved", label="self", shape=[3])
    g.add_node("s3", kind="saved", label="other", shape=[3])
    g.add_node("acc1", kind="accumulate_grad", label="AccumulateGrad", vars=[])
    g.add_node("acc2", kind="accumulate_grad", label="AccumulateGrad", vars=[])
    g.add_node("t2", kind="tensor", label="x", vars=["x"], shape=[3], is_leaf=True)
    g.add_node("t3", kind="tensor", label="w", vars=["w"], shape=[3], is_leaf=True)
    g.add_node("t4", kind="tensor", label="z", vars=["z"], shape=[3], is_leaf=False)
    g.add_edge("t1", "fn1", kind="output")
    g.add_edge("fn1", "fn2", kind="grad")
    g.add_edge("fn2", "s1", kind="saved")
    g.add_edge("fn2", "fn3", kind="grad")
    g.add_edge("fn3", "s2", kind="saved")
    g.add_edge("fn3", "s3", kind="saved")
    g.add_edge("fn3", "acc1", kind="grad")
    g.add_edge("fn3", "acc2", kind="grad")
    g.add_edge("acc1", "t2", kind="leaf")
    g.add_edge("acc2", "t3", kind="leaf")
    g.add_edge("t4", "fn2", kind="output")
    return g


def random_dag(n: int, seed: int) -> nx.DiGraph:
    """A random autograd-like DAG: grad_fns with varied labels, leaves, saved tensors."""
    rng = random.Random(seed)
    g = nx.DiGraph()
    names = [
        "MulBackward0",
        "AddBackward0",
        "ViewBackward0",
        "NativeLayerNormBackward0",
        "T",
        "SinBackward0",
        "a_rather_long_custom_function_name_Backward",
    ]
    for i in range(n):
        g.add_node(
            f"fn{i}",
            kind="grad_fn",
            label=rng.choice(names),
            vars=[f"v{i}"] if rng.random() < 0.3 else [],
        )
    for i in range(1, n):
        for j in rng.sample(range(i), k=min(i, rng.choice([1, 1, 2, 3]))):
            g.add_edge(f"fn{j}", f"fn{i}", kind="grad")
    for i in range(n):
        if rng.random() < 0.3:
            g.add_node(f"s{i}", kind="saved", label=rng.choice(["self", "other", "result"]))
            g.add_edge(f"fn{i}", f"s{i}", kind="saved")
        if g.out_degree(f"fn{i}") == 0 and rng.random() < 0.5:
            g.add_node(f"acc{i}", kind="accumulate_grad", label="AccumulateGrad", vars=[])
            g.add_node(
                f"t{i}", kind="tensor", label=f"p{i}", vars=[f"p{i}"], is_leaf=True, shape=[2, 3]
            )
            g.add_edge(f"fn{i}", f"acc{i}", kind="grad")
            g.add_edge(f"acc{i}", f"t{i}", kind="leaf")
    g.add_node("lone", kind="tensor", label="lone", vars=["lone"], shape=[1], is_leaf=True)
    return g


def chain(n: int) -> nx.DiGraph:
    g = nx.DiGraph()
    g.add_node("t0", kind="tensor", label="out", vars=["out"], shape=[3])
    g.add_edge("t0", "fn0", kind="output")
    for i in range(n):
        g.add_node(f"fn{i}", kind="grad_fn", label="MulBackward0", vars=[])
        if i:
            g.add_edge(f"fn{i - 1}", f"fn{i}", kind="grad")
    g.add_node("acc", kind="accumulate_grad", label="AccumulateGrad", vars=[])
    g.add_node("t1", kind="tensor", label="x", vars=["x"], shape=[3], is_leaf=True)
    g.add_edge(f"fn{n - 1}", "acc", kind="grad")
    g.add_edge("acc", "t1", kind="leaf")
    return g


# --------------------------------------------------------------------------- tests


def test_every_node_gets_a_finite_position():
    g = small_graph()
    pos = layout(g)
    assert set(pos) == set(g.nodes)
    for x, y in pos.values():
        assert isinstance(x, float) and isinstance(y, float)
        assert abs(x) < 1e6 and abs(y) < 1e6


def test_empty_graph():
    assert layout(nx.DiGraph()) == {}


def test_deterministic_within_a_process():
    g = random_dag(150, seed=3)
    assert layout(g) == layout(g)
    assert layout(g) == layout(g.copy())


def test_deterministic_across_hash_seeds():
    """String hashing is randomised per process; the layout must not notice."""
    code = (
        "import json; "
        "from tests.test_layout import random_dag; from gradviz.graph.layout import layout; "
        "print(json.dumps(sorted(layout(random_dag(120, seed=5)).items())))"
    )
    outs = []
    for seed in ("1", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(ROOT)}
        res = subprocess.run(
            [sys.executable, "-c", code],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        outs.append(json.loads(res.stdout))
    assert outs[0] == outs[1]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_no_overlapping_boxes_on_random_dag(seed):
    g = random_dag(200, seed=seed)
    assert overlapping(g, layout(g)) == []


@pytest.mark.parametrize("seed", [0, 1])
def test_gradient_edges_point_downward(seed):
    for g in (small_graph(), random_dag(200, seed=seed)):
        pos = layout(g)
        for u, v, kind in g.edges(data="kind"):
            if kind != "saved":
                assert pos[v][1] > pos[u][1], (u, v)


def test_root_on_top_and_leaves_at_bottom():
    g = small_graph()
    pos = layout(g)
    assert pos["t1"][1] == min(y for _, y in pos.values())
    assert pos["t2"][1] == max(y for _, y in pos.values())
    # a variable's tensor node hangs right above its grad_fn, not at the top
    assert pos["fn2"][1] - pos["t4"][1] == pytest.approx(LayoutSpacing().pitch)


def test_long_chain_is_iterative_and_narrow():
    g = chain(10_000)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(200)  # anything recursive would fail at once
    try:
        pos = layout(g)
    finally:
        sys.setrecursionlimit(limit)
    xs = {pos[f"fn{i}"][0] for i in range(10_000)}
    assert len(xs) == 1  # one straight column
    ys = [pos[f"fn{i}"][1] for i in range(10_000)]
    assert ys == sorted(ys)


def test_saved_tensors_sit_beside_their_grad_fn():
    g = small_graph()
    pos = layout(g)
    sp = LayoutSpacing()
    for fn, saved in (("fn2", ["s1"]), ("fn3", ["s2", "s3"])):
        fx, fy = pos[fn]
        edge = fx + node_size(g.nodes[fn])[0] / 2
        for s in saved:
            sx, sy = pos[s]
            assert sy == fy  # same layer: saved tensors add no layers
            w = node_size(g.nodes[s])[0]
            assert sx - w / 2 == pytest.approx(edge + sp.saved_gap)
            edge = sx + w / 2
    layers = {y for v, (_, y) in pos.items() if g.nodes[v]["kind"] != "saved"}
    assert {pos[s][1] for s in ("s1", "s2", "s3")} <= layers


def test_disconnected_components_side_by_side():
    g = small_graph()
    for name in ("a", "b", "c"):
        g.add_node(f"lone_{name}", kind="tensor", label=name, vars=[name], shape=[2], is_leaf=True)
    pos = layout(g)
    assert overlapping(g, pos) == []
    main_right = max(b[2] for v, b in boxes(g, pos).items() if not v.startswith("lone"))
    lone = [pos[f"lone_{n}"] for n in "abc"]
    assert all(x > main_right for x, _ in lone)
    # tensors without edges: a grid to the right, read in graph order
    assert lone == sorted(lone, key=lambda p: (p[1], p[0]))
    assert min(y for _, y in lone) == min(y for _, y in pos.values())  # top-aligned


def test_cycles_are_broken_not_looped():
    g = nx.DiGraph()
    for i in range(6):
        g.add_node(f"fn{i}", kind="grad_fn", label="Weird", vars=[])
    nx.add_cycle(g, [f"fn{i}" for i in range(4)], kind="grad")
    g.add_edge("fn3", "fn4", kind="grad")
    g.add_edge("fn4", "fn5", kind="grad")
    g.add_edge("fn5", "fn5", kind="grad")  # self-loop
    pos = layout(g)
    assert set(pos) == set(g.nodes)
    assert overlapping(g, pos) == []
    assert layout(g) == pos


def test_long_edges_get_bend_points_on_the_layers_they_cross():
    g = chain(5)
    g.add_edge("fn0", "acc", kind="grad")  # spans several layers
    res = layout_with_routes(g)
    bends = res.routes[("fn0", "acc")]
    pitch = LayoutSpacing().pitch
    y0, y1 = res.positions["fn0"][1], res.positions["acc"][1]
    assert [y for _, y in bends] == pytest.approx(
        [y0 + pitch * k for k in range(1, round((y1 - y0) / pitch))]
    )


def test_incremental_keeps_old_positions_exactly():
    g = small_graph()
    before = layout(g)
    g.add_node("fn9", kind="grad_fn", label="MulBackward0", vars=["q"])
    g.add_node("t9", kind="tensor", label="q", vars=["q"], shape=[], is_leaf=False)
    g.add_node("s9", kind="saved", label="other", shape=[])
    g.add_edge("t9", "fn9", kind="output")
    g.add_edge("fn9", "fn1", kind="grad")
    g.add_edge("fn9", "s9", kind="saved")
    g.add_node("p9", kind="tensor", label="p", vars=["p"], shape=[1], is_leaf=True)
    res = layout_with_routes(g, before)
    assert res.incremental
    after = res.positions
    for v, p in before.items():
        assert after[v] == p
    assert overlapping(g, after) == []
    # the new grad_fn hangs above the old root it feeds, its tensor above it
    assert after["fn9"][1] < after["fn1"][1]
    assert after["t9"][1] < after["fn9"][1]
    assert after["s9"][1] == after["fn9"][1] and after["s9"][0] > after["fn9"][0]
    assert layout(g, before) == after  # deterministic too


def test_incremental_places_new_leaves_below():
    g = small_graph()
    before = layout(g)
    g.add_node("acc9", kind="accumulate_grad", label="AccumulateGrad", vars=[])
    g.add_node("t9", kind="tensor", label="b", vars=["b"], shape=[3], is_leaf=True)
    g.add_edge("fn2", "acc9", kind="grad")
    g.add_edge("acc9", "t9", kind="leaf")
    after = layout(g, before)
    assert all(after[v] == p for v, p in before.items())
    assert after["fn2"][1] < after["acc9"][1] < after["t9"][1]
    assert overlapping(g, after) == []


def test_incremental_with_nothing_new_returns_previous():
    g = small_graph()
    before = layout(g)
    assert layout(g, before) == before


def test_a_removed_node_keeps_the_rest_in_place():
    """Rebinding a variable drops its old tensor node: the others stay where they were."""
    g = small_graph()
    before = layout(g)
    g.remove_nodes_from(["t4"])
    res = layout_with_routes(g, before)
    assert res.incremental
    assert all(res.positions[v] == p for v, p in before.items() if v != "t4")


def test_mostly_removed_graph_falls_back_to_full_layout():
    """What is left of a mostly gone graph is laid out afresh when it lies scattered."""
    g = small_graph()
    before = layout(g)
    keep = ["t1", "t3"]  # the loss on top, a leaf at the bottom: far apart
    g.remove_nodes_from([v for v in list(g.nodes) if v not in keep])
    moved = {v: (x + 1000.0, y) for v, (x, y) in before.items()}
    res = layout_with_routes(g, moved)
    assert not res.incremental
    assert res.positions == layout(g)


def test_mostly_removed_graph_keeps_a_compact_rest_in_place():
    """``b = a.sigmoid()`` after a failed in-place chain drops most of the graph; what is
    left (a leaf and its AccumulateGrad, one above the other) stays where it was, so
    stepping back and forth does not move it."""
    g = small_graph()
    before = layout(g)
    keep = list(g.nodes)[:2]  # the loss and its SumBackward0, one above the other
    g.remove_nodes_from([v for v in list(g.nodes) if v not in keep])
    moved = {v: (x + 1000.0, y) for v, (x, y) in before.items()}
    res = layout_with_routes(g, moved)
    assert res.incremental
    assert res.positions == {v: moved[v] for v in keep}


def test_rebinding_a_variable_each_step_stays_incremental():
    from gradviz.core.session import Session

    s = Session("x = torch.tensor(1., requires_grad=True)\ny = x * 2\ny = y.sin()\ny = y.cos()\n")
    s.run_to(2)
    pos = layout(s.graph)
    for _ in range(2):
        s.step()
        res = layout_with_routes(s.graph, pos)
        assert res.incremental
        assert all(res.positions[v] == p for v, p in pos.items() if v in res.positions)
        pos = res.positions


def test_node_size_tracks_text():
    short = node_size({"kind": "grad_fn", "label": "MulBackward0", "vars": []})
    long = node_size({"kind": "grad_fn", "label": "NativeLayerNormBackward0", "vars": []})
    saved = node_size({"kind": "saved", "label": "self"})
    assert long[0] > short[0] and long[1] == short[1]
    assert saved[1] < short[1]
    huge = node_size({"kind": "grad_fn", "label": "x" * 500})
    assert huge[0] < 500  # long names are cut, not allowed to widen a whole layer
    assert node_lines({"kind": "grad_fn", "label": "AddBackward0", "vars": ["a", "b"]}) == [
        "AddBackward0",
        "a, b",
    ]
    assert node_lines({"kind": "tensor", "label": "x", "vars": ["x"], "shape": [2, 3]}) == [
        "x",
        "2\u00d73",
    ]


def test_layout_module_is_qt_free():
    code = (
        "import sys; import gradviz.graph.layout; "
        "sys.exit(any(m.startswith('PySide6') for m in sys.modules))"
    )
    subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        check=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


def test_free_slot_search_terminates_despite_rounding():
    """(x + gap + w/2) - w/2 - gap can land an ulp short of x: the search must still move on."""
    import threading

    from gradviz.graph.layout import _Occupancy

    occ = _Occupancy(band=40.0, hgap=24.0, vgap=2.0)
    right = 985.0868243521302
    occ.add(right - 50.0, 0.0, 100.0, 30.0)  # a box whose right edge is ``right``
    result = []
    worker = threading.Thread(
        target=lambda: result.append(occ.free_x(right, 0.0, 259.3844933506341, 30.0, right_only=True)),
        daemon=True,
    )
    worker.start()
    worker.join(timeout=10)
    assert result, "free_x looped forever"
    assert result[0] - 259.3844933506341 / 2 - 24.0 >= right - 1e-6


# --------------------------------------------------------------------------- loose tensors


def loose_tensors() -> nx.DiGraph:
    """The shared_storage demo's end: eleven tensors without grad, x's storage shared by
    v, s and d, A's by B (node order as the demo creates them)."""
    g = nx.DiGraph()
    for name, storage, shape in [
        ("b", "S1", [4]), ("x", "S2", [4]), ("y_before", "S3", [4]), ("y", "S4", [4]),
        ("v", "S2", [2, 2]), ("s", "S2", [4]), ("d", "S2", [4]), ("c", "S5", [4]),
        ("i", "S6", [2]), ("A", "S7", [2]), ("B", "S7", [2]),
    ]:
        g.add_node(f"t_{name}", kind="tensor", label=name, vars=[name], shape=shape,
                   storage=storage, is_leaf=True, requires_grad=name == "A")
    return g


def rows_of(pos: dict, nodes) -> list[list]:
    """The nodes by row (same y), each row left to right, rows top to bottom."""
    rows: dict[float, list] = {}
    for v in nodes:
        rows.setdefault(pos[v][1], []).append(v)
    return [sorted(r, key=lambda v: pos[v][0]) for _, r in sorted(rows.items())]


def bbox(graph: nx.DiGraph, pos: dict) -> tuple[float, float]:
    bx = boxes(graph, pos).values()
    return (max(b[2] for b in bx) - min(b[0] for b in bx),
            max(b[3] for b in bx) - min(b[1] for b in bx))


def test_loose_tensors_make_a_readable_grid():
    """Before: one row 1,510 x 44 px (34:1), fitted to a canvas at labels ~5 px tall."""
    g = loose_tensors()
    pos = layout(g)
    assert overlapping(g, pos) == []
    w, h = bbox(g, pos)
    assert 1.0 <= w / h <= 2.5, (w, h)  # about a canvas's shape, not one long row
    rows = rows_of(pos, g)
    assert 3 <= len(rows) <= 4 and max(len(r) for r in rows) <= 5
    # tensors that share a storage are next to each other on one row
    for group in ("S2", "S7"):
        members = [v for v in g if g.nodes[v]["storage"] == group]
        row = next(r for r in rows if members[0] in r)
        at = sorted(row.index(v) for v in members)
        assert all(v in row for v in members)
        assert at == list(range(at[0], at[0] + len(members)))
    # the storage links sag under a row: the row below leaves room for them
    ys = sorted({y for _, y in pos.values()})
    assert all(b - a >= LayoutSpacing().pitch for a, b in zip(ys, ys[1:]))


def test_a_few_loose_tensors_stay_in_one_row():
    g = loose_tensors()
    g.remove_nodes_from([v for v in list(g)[3:]])
    pos = layout(g)
    assert len(rows_of(pos, g)) == 1


def test_loose_tensors_sit_right_of_the_graph_in_a_grid():
    g = small_graph()
    loose = loose_tensors()
    g.add_nodes_from(loose.nodes(data=True))
    pos = layout(g)
    assert overlapping(g, pos) == []
    graph_right = max(b[2] for v, b in boxes(g, pos).items() if v not in loose)
    assert all(pos[v][0] > graph_right for v in loose)
    assert len(rows_of(pos, loose)) > 1
    w, h = bbox(g, pos)
    assert w / h < 2.5


def test_new_loose_tensors_join_the_grid_without_moving_it():
    """A statement at a time (the kernel's way): old tensors stay, new ones fill rows, a
    tensor sharing a storage goes right after (or under) the one it shares with."""
    full = loose_tensors()
    g = nx.DiGraph()
    pos = None
    for v, data in full.nodes(data=True):
        g.add_node(v, **data)
        kept = IncrementalLayout()
        if pos is not None:
            kept.update(nx.DiGraph(full.subgraph(list(pos))))  # the picture so far ...
            kept.positions = dict(pos)
        new = layout(g, pos)
        if pos is not None:
            assert all(new[u] == p for u, p in pos.items())
            assert kept.update(g) == new  # ... grows the same way as layout(previous)
        pos = new
    assert overlapping(g, pos) == []
    w, h = bbox(g, pos)
    assert 0.75 <= w / h <= 3.0, (w, h)  # before: 1,510 x 44
    sp = LayoutSpacing()
    for group in ("S2", "S7"):
        members = [v for v in g if g.nodes[v]["storage"] == group]
        for a, b in zip(members, members[1:]):
            (ax, ay), (bx, by) = pos[a], pos[b]
            beside = ay == by and 0 < bx - ax <= (boxes(g, pos)[a][2] - boxes(g, pos)[a][0]) / 2 + (
                boxes(g, pos)[b][2] - boxes(g, pos)[b][0]) / 2 + sp.grid_gap + 1e-6
            under = by - ay == pytest.approx(2 * sp.pitch) and abs(
                boxes(g, pos)[a][0] - boxes(g, pos)[b][0]) < 1e-6
            assert beside or under, (a, b, pos[a], pos[b])


# --------------------------------------------------------------------------- in-place ops


def inplace_graph(ops: int) -> nx.DiGraph:
    """``a`` a leaf, ``b = a.sigmoid()``, then ``ops`` in-place ops on b (b.mul_(2), ...):
    each puts a new grad_fn between the tensor node b and the one before."""
    g = nx.DiGraph()
    g.add_node("t_a", kind="tensor", label="a", vars=["a"], shape=[2], is_leaf=True)
    g.add_node("acc", kind="accumulate_grad", label="AccumulateGrad", vars=["a"])
    g.add_node("fn_sig", kind="grad_fn", label="SigmoidBackward0", vars=[])
    g.add_node("s_res", kind="saved", label="result")
    g.add_node("t_b", kind="tensor", label="b", vars=["b"], shape=[2], is_leaf=False)
    g.add_edge("acc", "t_a", kind="leaf")
    g.add_edge("fn_sig", "acc", kind="grad")
    g.add_edge("fn_sig", "s_res", kind="saved")
    g.add_edge("t_b", "fn_sig", kind="output")
    last = "fn_sig"
    for k in range(ops):
        fn = f"fn_op{k}"
        g.add_node(fn, kind="grad_fn", label="MulBackward0", vars=["b"])
        g.add_node(f"s_op{k}", kind="saved", label="other")
        g.add_edge(fn, f"s_op{k}", kind="saved")
        g.add_edge(fn, last, kind="grad")
        g.remove_edge("t_b", last)
        g.add_edge("t_b", fn, kind="output")
        g.nodes[last]["vars"] = []
        last = fn
    if ops:
        g.nodes["s_res"].update(stale=True, version=ops, expected_version=0)
    return g


def layering_edges_point_down(g: nx.DiGraph, pos: dict) -> list:
    """Edges (other than saved ones) whose head is not at least a layer below their tail."""
    pitch = LayoutSpacing().pitch
    return [(u, v) for u, v, k in g.edges(data="kind")
            if k != "saved" and pos[v][1] - pos[u][1] < pitch - 1e-6]


def test_inplace_ops_keep_the_chain_flowing_down():
    """Before: the new grad_fn went half-way between b and SigmoidBackward0, sideways; its
    edges looped back up (MulBackward0 -> SigmoidBackward0 rose by 42 px)."""
    pos = layout(inplace_graph(0))
    kept = IncrementalLayout()
    kept.update(inplace_graph(0))
    for ops in range(1, 4):
        g = inplace_graph(ops)
        assert kept.positions == pos
        res = layout_with_routes(g, pos)
        assert res.incremental
        new = res.positions
        assert layering_edges_point_down(g, new) == []
        assert overlapping(g, new) == []
        # everything but the tensor b stays put; b moves up a layer, over its new grad_fn
        assert all(new[v] == p for v, p in pos.items() if v != "t_b")
        assert new["t_b"][1] == pytest.approx(pos["t_b"][1] - LayoutSpacing().pitch)
        assert new["t_b"][0] == pytest.approx(new[f"fn_op{ops - 1}"][0])
        assert kept.update(g) == new  # the kept layout agrees
        assert kept.moved == {"t_b", f"fn_op{ops - 1}", f"s_op{ops - 1}"}
        pos = new


def test_inplace_op_with_something_else_in_the_way_is_laid_out_afresh():
    """No layer free and the node above is not the tensor that moved: a fresh layering."""
    g = inplace_graph(0)
    pos = layout(g)
    g.add_node("fn_x", kind="grad_fn", label="AddBackward0", vars=["z"])
    g.add_edge("fn_x", "fn_sig", kind="grad")
    g.add_edge("t_b", "fn_x", kind="output")  # b also feeds another op: not a loose end
    pos2 = layout(g, pos)
    g.add_node("fn_new", kind="grad_fn", label="MulBackward0", vars=[])
    g.remove_edge("fn_x", "fn_sig")
    g.add_edge("fn_x", "fn_new", kind="grad")
    g.add_edge("fn_new", "fn_sig", kind="grad")
    res = layout_with_routes(g, pos2)
    assert layering_edges_point_down(g, res.positions) == []
    assert overlapping(g, res.positions) == []


def stale_tag(g: nx.DiGraph, pos: dict, v) -> tuple[float, float, float, float]:
    """The canvas's "stale v1≠v0" tab: from 3 px inside the box's left edge, 12 px tall
    around its top border (gradviz/ui/canvas.py, NodeItem.paint)."""
    x0, y0, _, _ = boxes(g, pos)[v]
    return (x0 + 3.0, y0 - 6.0, x0 + tag_extent(g.nodes[v]), y0 + 6.0)


def test_edges_keep_clear_of_the_stale_tag():
    """The canvas draws an edge from its tail's border to its head's, bending between
    them: it stays within the rectangle of its two ends. None may cross the tab."""
    for ops in (1, 2):
        g = inplace_graph(ops)
        for pos in (layout(g), layout(g, layout(inplace_graph(ops - 1)))):
            tag = stale_tag(g, pos, "s_res")
            bx = boxes(g, pos)
            for u, v in g.edges:
                if "s_res" in (u, v):
                    continue  # its own saved edge ends at its side, under the tab
                (ux, uy), (vx, vy) = pos[u], pos[v]
                # a down edge runs from the tail's bottom to the head's top
                x0, x1 = sorted((ux, vx))
                y0, y1 = sorted((bx[u][3], bx[v][1])) if vy > uy else sorted((uy, vy))
                clear = x1 < tag[0] or x0 > tag[2] or y1 < tag[1] or y0 > tag[3]
                assert clear, (u, v, tag)


def test_a_stale_tab_wider_than_its_box_is_kept_free():
    g = nx.DiGraph()
    g.add_node("fn", kind="grad_fn", label="MulBackward0", vars=[])
    g.add_node("s1", kind="saved", label="self", stale=True, version=12, expected_version=10)
    g.add_node("s2", kind="saved", label="other")
    g.add_edge("fn", "s1", kind="saved")
    g.add_edge("fn", "s2", kind="saved")
    g.add_node("fn2", kind="grad_fn", label="AddBackward0", vars=[])
    g.add_node("fn3", kind="grad_fn", label="SinBackward0", vars=[])
    g.add_edge("fn2", "fn", kind="grad")
    g.add_edge("fn2", "fn3", kind="grad")
    pos = layout(g)
    tag = stale_tag(g, pos, "s1")
    assert tag[2] > boxes(g, pos)["s1"][2]  # "stale v12≠v10" is wider than "self"
    assert boxes(g, pos)["s2"][0] >= tag[2] + LayoutSpacing().saved_gap - 1e-6
    assert boxes(g, pos)["fn3"][0] >= tag[2] or boxes(g, pos)["fn3"][2] <= boxes(g, pos)["fn"][0]


# --------------------------------------------------------------------------- step back


def test_remembered_positions_come_back_after_a_reset():
    """Step back replays the script from the start: the same node ids come back, and the
    kept layout puts them where they were shown instead of laying them out afresh."""
    steps = [inplace_graph(0), inplace_graph(1), inplace_graph(2)]
    kept = IncrementalLayout()
    shown = [dict(kept.update(g)) for g in steps]
    kept.reset(remember=True)
    back = kept.update(steps[1])
    assert kept.last == "recalled"
    assert all(back[v] == shown[2][v] for v in back if v in shown[2])  # nothing moves
    assert back["fn_op0"] == shown[2]["fn_op0"]
    assert kept.update(steps[2]) == shown[2]  # and forward again: the same picture
    kept.reset(remember=True)
    assert kept.update(steps[0])["fn_sig"] == shown[2]["fn_sig"]
    kept.reset()  # another script: a fresh layout
    assert kept.update(steps[1]) == layout(steps[1])


def test_a_remembered_place_that_is_taken_now_is_not_used():
    g = small_graph()
    kept = IncrementalLayout()
    pos = dict(kept.update(g))
    kept.reset(remember=True)
    kept.memory["t3"] = pos["t2"]  # where x sits: t3 must not land on it
    kept._shown = {}
    out = kept.update(g)
    assert overlapping(g, out) == []
    assert out["t2"] == pos["t2"]
