"""The fast path of the schema check (``_node_ok``/``_edge_ok`` and the validator without
the per-item checks of graph.nodes and graph.edges) against the full compiled schema:
it never accepts what the schema refuses, and every message is the full check's own."""

from __future__ import annotations

import copy
import json
import random

import pytest
import torch
from fastjsonschema import JsonSchemaValueException

import gradviz
from gradviz.graph import snapshot_file as sf
from gradviz.graph.snapshot_file import schema_problem, snapshot_schema

#: each property of a node or edge is set to each of these, in turn
VALUES = [
    None, True, False, 0, 1, -1, 3.0, 2.5, "", "x", [], [1], ["a"], [True], {}, {"a": 1},
    [0, 2], [-1], [3.0], [2.5], [None], ["a", 1], [[]], "grad_fn", "grad",
]
_DELETE = object()


@pytest.fixture(scope="module")
def snap() -> dict:
    """A real snapshot (after JSON, as a file gives it): tensors, grad_fns, accumulate_grads."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.Tanh())
    with gradviz.record(model) as rec:
        loss = model(torch.randn(2, 3)).pow(2).mean()
        loss.backward()
    return json.loads(gradviz.snapshot(loss, model=model, recorder=rec).to_json())


def full_check(data) -> str | None:
    """What the full compiled schema says of ``data``, worded as schema_problem words it."""
    try:
        sf._validator()(data)
    except JsonSchemaValueException as error:
        return sf._located(str(error.name), str(error.message))
    return None


def with_graph(snap: dict, nodes=None, edges=None) -> dict:
    graph = snap["graph"]
    return {**snap, "graph": {
        "nodes": graph["nodes"] if nodes is None else nodes,
        "edges": graph["edges"] if edges is None else edges,
    }}


def variants(base: dict, properties, extra_values) -> list:
    """``base`` with each property deleted, or set to each of VALUES and ``extra_values``."""
    out = []
    for key in [*properties, "not_in_the_schema"]:
        for value in [_DELETE, *VALUES, *extra_values]:
            item = copy.deepcopy(base)
            if value is _DELETE:
                item.pop(key, None)
            else:
                item[key] = copy.deepcopy(value)
            out.append(item)
    return out


def random_items(properties, rng: random.Random, count: int) -> list:
    """Items with a random subset of the properties, each holding a random value."""
    pool = [*VALUES, "t1", "tensor", "saved", "leaf", "output", ["x", "y"], [2, 3]]
    return [
        {key: copy.deepcopy(rng.choice(pool)) for key in properties if rng.random() < 0.6}
        for _ in range(count)
    ]


def check_agreement(snap: dict, items: list, where: str, fast) -> int:
    """For each item put in graph.<where>[1]: a fast yes is a schema yes, and schema_problem
    says exactly what the full check says. Returns how many items the fast check passed."""
    passed = 0
    for item in items:
        listed = copy.deepcopy(snap["graph"][where])
        listed[1] = item
        data = with_graph(snap, **{where: listed})
        expected = full_check(data)
        if fast(item):
            passed += 1
            assert expected is None, (item, expected)
        assert schema_problem(data) == expected, item
    return passed


def test_a_real_snapshot_takes_the_fast_path(snap, monkeypatch):
    assert schema_problem(snap) is None
    assert full_check(snap) is None
    assert sf._graph_items_ok(snap)

    def full_validator():
        raise AssertionError("the full validator ran for a valid file")

    monkeypatch.setattr(sf, "_validator", full_validator)
    assert schema_problem(snap) is None
    assert schema_problem(json.loads(json.dumps(snap))) is None


def test_the_fast_node_check_never_accepts_what_the_schema_refuses(snap):
    schema = snapshot_schema()["$defs"]["node"]
    properties = list(schema["properties"])
    real = {node["kind"]: node for node in snap["graph"]["nodes"]}
    fullest = {**real["grad_fn"], **real["tensor"]}  # every property of a node, valid
    fullest.setdefault("line", 4)  # a session's nodes carry the line that made them
    assert set(properties) <= set(fullest) and sf._node_ok(fullest)
    minimal = {key: fullest[key] for key in schema["required"]}
    kinds = [*schema["properties"]["kind"]["enum"], "banana", "Tensor"]
    items = variants(fullest, properties, kinds) + variants(minimal, properties, kinds)
    items += random_items(properties, random.Random(0), 1500)
    items += [None, 5, "t1", [], [fullest], (), ("id", "t1")]
    passed = check_agreement(snap, items, "nodes", sf._node_ok)
    assert passed > 150  # not a vacuous check: many valid variants took the fast path


def test_the_fast_edge_check_never_accepts_what_the_schema_refuses(snap):
    schema = snapshot_schema()["$defs"]["edge"]
    properties = list(schema["properties"])
    fullest = next(edge for edge in snap["graph"]["edges"] if "input" in edge)
    assert set(properties) <= set(fullest) and sf._edge_ok(fullest)
    minimal = {key: fullest[key] for key in schema["required"]}
    kinds = [*schema["properties"]["kind"]["enum"], "banana", "Grad"]
    items = variants(fullest, properties, kinds) + variants(minimal, properties, kinds)
    items += random_items(properties, random.Random(1), 1500)
    items += [None, 5, "t1", [], [fullest], ()]
    passed = check_agreement(snap, items, "edges", sf._edge_ok)
    assert passed > 40


def test_a_graph_not_shaped_as_expected_gets_the_full_check_and_its_message(snap):
    graph = snap["graph"]
    cases = [
        {k: v for k, v in snap.items() if k != "graph"},
        {**snap, "graph": []},
        {**snap, "graph": None},
        {**snap, "graph": {"nodes": graph["nodes"]}},
        {**snap, "graph": {"edges": graph["edges"]}},
        with_graph(snap, nodes={"0": graph["nodes"][0]}),
        with_graph(snap, edges="fn1->fn2"),
        with_graph(snap, nodes=[*graph["nodes"], None]),
        with_graph(snap, edges=[*graph["edges"], {"source": "fn1"}]),
        with_graph(snap, nodes=[], edges=[]),
        [], None, "gradviz-snapshot",
    ]
    for data in cases:
        assert schema_problem(data) == full_check(data)
    assert all(full_check(data) for data in cases[:-4])


def test_a_file_damaged_outside_the_graph_items_says_what_the_full_check_says(snap):
    """Good nodes and edges, damage elsewhere: the reduced validator refuses, and the
    message is the full validator's (which also checks the items)."""
    cases = [
        {**snap, "tensors": []},
        {**snap, "version": 2},
        {**snap, "root_names": [1]},
        {**snap, "graph": {**snap["graph"], "extra": 1}, "memory": [1]},
        {**snap, "backward_passes": [{"steps": [{"label": "x"}]}]},
        {**snap, "positions": {"t1": [1.0]}},
    ]
    for data in cases:
        assert sf._graph_items_ok(data)
        with pytest.raises(JsonSchemaValueException):
            sf._validator_without_graph_items()(data)
        expected = full_check(data)
        assert expected is not None and schema_problem(data) == expected


def test_the_reduced_validator_leaves_only_the_graph_items_unchecked(snap):
    """Its job is everything but graph.nodes[*] and graph.edges[*]: a bad item passes it
    (the fast predicates have refused that file already), a bad list does not."""
    graph = snap["graph"]
    bad_items = with_graph(snap, nodes=[*graph["nodes"], 5], edges=[*graph["edges"], 5])
    sf._validator_without_graph_items()(bad_items)
    assert not sf._graph_items_ok(bad_items)
    assert schema_problem(bad_items) == full_check(bad_items) is not None
    for data in (with_graph(snap, nodes={}), with_graph(snap, edges=5)):
        with pytest.raises(JsonSchemaValueException):
            sf._validator_without_graph_items()(data)
