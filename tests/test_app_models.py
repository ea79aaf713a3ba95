"""The typed models of the kernel's state (gradviz.app.models): no Qt."""

from __future__ import annotations

import copy
import dataclasses
import io
import json
from collections.abc import Mapping
from pathlib import Path

import pytest

from gradviz.app import models
from gradviz.app.models import AppState, PauseInfo, StateError
from gradviz.graph.delta import StateDecoder, StateEncoder

DEMOS = sorted((Path(__file__).resolve().parents[1] / "resources" / "demos").glob("*.py"))
EXAMPLE = Path(__file__).resolve().parents[1] / "docs" / "snapshot-example.json"


def _plain(obj):
    """A model as the wire writes it: dataclasses as dicts, tuples as lists."""
    if dataclasses.is_dataclass(obj):
        return {
            f.name: _plain(getattr(obj, f.name)) for f in dataclasses.fields(obj) if f.name != "raw"
        }
    if isinstance(obj, Mapping):
        return {k: _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    return obj


def _kernel_states(source: str) -> list[dict]:
    """A demo's states as the window gets them: load, each step, zero_grad, run to end."""
    from gradviz.kernel_server import Kernel

    kernel = Kernel(io.StringIO())
    states = [kernel.handle({"cmd": "load", "source": source})]
    while not kernel.session.at_end and len(states) < 60:
        states.append(kernel.handle({"cmd": "step"}))
        if states[-1]["results"] and states[-1]["results"][-1]["error"]:
            kernel.handle({"cmd": "skip"})
    states.append(kernel.handle({"cmd": "zero_grad"}))
    states.append(kernel.handle({"cmd": "load", "source": source}))
    states.append(kernel.handle({"cmd": "run_to_end", "keep_going": True}))
    return [json.loads(json.dumps(s)) for s in states]  # as the wire carries them


def _check_equals_raw(state: AppState, raw: dict) -> None:
    assert state.raw is raw
    assert state.device == raw["device"]
    assert state.cursor == raw["cursor"]
    assert state.at_end == raw["at_end"]
    assert list(state.frame_locals) == raw["frame_locals"]
    assert list(state.zero_points) == raw.get("zero_points", [])
    assert (None if state.zeroed is None else list(state.zeroed)) == raw.get("zeroed")
    assert state.graph_data is raw["graph"]
    assert state.positions is raw["positions"]
    # every sub-object holds exactly the wire's fields, no more and no fewer
    assert _plain(state.statements) == raw["statements"]
    assert _plain(state.results) == raw["results"]
    assert _plain(state.new_results) == raw["new_results"]
    assert _plain(state.tensors) == raw["tensors"]
    assert _plain(state.make_dot) == raw["make_dot"]
    assert _plain(state.grad_history) == raw["grad_history"]
    assert _plain(state.grad_events) == raw["grad_events"]
    assert _plain(state.memory) == raw["memory"]
    assert _plain(state.backward_passes) == [
        {**p, "steps": [{"saved": None, **s} for s in p["steps"]]} for p in raw["backward_passes"]
    ]
    if raw["parse_error"] is None:
        assert state.parse_error is None
    else:
        assert _plain(state.parse_error) == raw["parse_error"]
    if raw["paused"] is None:
        assert state.paused is None
    else:
        assert _plain(state.paused) == raw["paused"]
    for node in raw["graph"]["nodes"]:
        assert state.node(node["id"]) is node


@pytest.mark.parametrize("demo", DEMOS, ids=[d.stem for d in DEMOS])
def test_every_demo_state_decodes_with_the_wire_fields(demo):
    from gradviz.core.session import Session

    session = Session(demo.read_text())
    session.run_to_end(keep_going=True)
    snap = json.loads(json.dumps(session.snapshot()))
    state = AppState.from_wire(snap)
    assert _plain(state.tensors) == snap["tensors"]
    assert _plain(state.results) == snap["results"]
    assert [p.leaf_grads for p in state.backward_passes] == [
        p["leaf_grads"] for p in snap["backward_passes"]
    ]
    assert [p.raw for p in state.backward_passes] == snap["backward_passes"]
    assert [s.line for s in state.statements] == [s["line"] for s in snap["statements"]]
    # ...and every state the kernel sends on the way, through the window's delta decoder
    encoder, decoder = StateEncoder(), StateDecoder()
    for raw in _kernel_states(demo.read_text()):
        decoded, _ = decoder.decode(json.loads(json.dumps(encoder.encode(raw, delta=True))))
        _check_equals_raw(AppState.from_wire(decoded), decoded)


def test_states_decoded_from_deltas_share_what_did_not_change():
    models.clear_memos()
    source = (DEMOS[2]).read_text()  # retain_graph: three passes, results that grow
    encoder, decoder = StateEncoder(), StateDecoder()
    previous: AppState | None = None
    shared_results = shared_tensors = 0
    for raw in _kernel_states(source)[:-3]:
        decoded, _ = decoder.decode(encoder.encode(raw, delta=True))
        state = AppState.from_wire(decoded)
        if previous is not None:
            old = previous.raw
            if decoded.get("tensors") is old.get("tensors"):
                assert state.tensors is previous.tensors
                shared_tensors += 1
            # a list that grew keeps its old items' decoded objects
            kept = min(len(state.results), len(previous.results))
            for i in range(kept):
                if decoded["results"][i] is old["results"][i]:
                    assert state.results[i] is previous.results[i]
                    shared_results += 1
            for i in range(min(len(state.backward_passes), len(previous.backward_passes))):
                if decoded["backward_passes"][i] is old["backward_passes"][i]:
                    assert state.backward_passes[i] is previous.backward_passes[i]
        previous = state
    assert shared_results > 5 and shared_tensors >= 1


def test_decoding_the_same_dict_twice_shares_the_objects():
    raw = json.loads(EXAMPLE.read_text())
    a = AppState.from_wire(raw)
    again = AppState.from_wire(raw)
    assert again == a and again.tensors is a.tensors and again.results is a.results
    assert again.backward_passes is a.backward_passes and again.grad_events is a.grad_events
    assert AppState.of(a) is a
    # a field set on the dict itself is read (the top level is never taken from a memo)
    raw["cursor"] = 5
    assert AppState.of(raw).cursor == 5 and AppState.of(raw).tensors is a.tensors
    # a new top-level dict over the same sub-dicts (the window's {**state, "graph": g})
    b = AppState.of({**raw, "cursor": 3, "graph": {"nodes": [], "edges": []}})
    assert b is not a and b.cursor == 3 and not b.graph_nodes
    assert b.tensors is a.tensors and b.results is a.results and b.memory is a.memory
    assert b.statements is a.statements
    # one changed tensor: only it decodes anew
    changed = dict(raw, tensors=dict(raw["tensors"], x=dict(raw["tensors"]["x"], grad=1.5)))
    c = AppState.of(changed)
    assert c.tensors["x"].grad == 1.5 and c.tensors["y"] is a.tensors["y"]
    assert AppState.of(None).tensors == {} and AppState.of(None).statements == ()


def test_the_example_snapshot_reads_as_typed_fields():
    raw = json.loads(EXAMPLE.read_text())
    state = AppState.of(raw)
    x = state.tensors["x"]
    assert (x.name, x.shape, x.is_leaf, x.grad_fn, x.value) == ("x", (), True, None, 5.0)
    assert state.statement_line(2) == 6 and state.statement_source(2) == "y = x ** 3"
    assert state.statement_line(99) is None and state.statement_source(None) == ""
    assert state.memory.statements[4].line == 9
    assert state.memory.totals["saved_bytes"] == raw["memory"]["totals"]["saved_bytes"]
    assert state.node("fn3")["label"] == "PowBackward0"
    with pytest.raises(dataclasses.FrozenInstanceError):
        state.cursor = 2  # type: ignore[misc]
    with pytest.raises(TypeError):
        state.tensors["q"] = x  # type: ignore[index]


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        (lambda s: s.update(cursor="3"), "state.cursor"),
        (lambda s: s.update(device=5), "state.device"),
        (lambda s: s.update(at_end="yes"), "state.at_end"),
        (lambda s: s.update(tensors=[]), "tensors"),
        (lambda s: s["tensors"]["x"].update(grad_fn=3), "tensors['x'].grad_fn"),
        (lambda s: s["tensors"]["x"].update(shape=[2, "3"]), "tensors['x'].shape[1]"),
        (lambda s: s["tensors"]["x"].update(requires_grad=1), "tensors['x'].requires_grad"),
        (lambda s: s["tensors"]["x"].update(grad={"a": 1}), "tensors['x'].grad"),
        (lambda s: s["statements"][2].update(line=None), "statements[2].line"),
        (lambda s: s["results"][1].update(warnings="w"), "results[1].warnings"),
        (lambda s: s["results"][1].update(error={"type": 1}), "results[1].error.type"),
        (lambda s: s["memory"]["statements"][0].update(saved_bytes="4"),
         "memory.statements[0].saved_bytes"),
        (lambda s: s.update(grad_events={"x": [{"kind": "backward", "pass_index": "0"}]}),
         "grad_events['x'][0].pass_index"),
        (lambda s: s.update(backward_passes=[{"steps": [{"node": "fn1", "label": 2}]}]),
         "backward_passes[0].steps[0].label"),
        (lambda s: s.update(backward_passes=[{"steps": [], "edges": [["a"]]}]),
         "backward_passes[0].edges[0]"),
        (lambda s: s.update(paused={"statement": 1}), "paused.line"),
        (lambda s: s.update(paused={"line": 3, "frames": [{"name": "f", "call_line": "2"}]}),
         "paused.frames[0].call_line"),
        (lambda s: s.update(graph={"nodes": {}, "edges": []}), "graph.nodes"),
        (lambda s: s.update(frame_locals=[1]), "state.frame_locals[0]"),
    ],
)
def test_a_field_of_the_wrong_type_raises_a_state_error_naming_it(edit, field):
    raw = copy.deepcopy(json.loads(EXAMPLE.read_text()))
    edit(raw)
    with pytest.raises(StateError) as info:
        AppState.from_wire(raw)
    assert info.value.field == field
    assert str(info.value).startswith(field + ": ")


def test_a_snapshot_state_with_few_fields_decodes_with_defaults():
    state = AppState.of(
        {"tensors": {"w": {"shape": [2], "dtype": "float32", "device": "cpu",
                           "requires_grad": True, "is_leaf": True}},
         "backward_passes": [{"steps": [{"node": "acc1", "label": "AccumulateGrad",
                                         "grad_outputs": [[1.0, 2.0]], "vars": ["w"]}]}],
         "read_only": True}
    )
    assert state.tensors["w"].name == "w" and state.tensors["w"].grad is None
    assert state.backward_passes[0].steps[0].is_accumulate
    assert state.backward_passes[0].step_of("acc1").vars == ("w",)
    assert state.read_only and state.cursor == 0 and state.memory.statements == ()


def test_a_pause_reads_as_the_debug_strip_says_it():
    raw = {"paused": {"statement": 4, "line": 23, "depth": 2, "iteration": 2, "iterations": 3,
                      "frames": [{"name": "train", "call_line": 30},
                                 {"name": "Net.forward", "call_line": 23}]}}
    pause = PauseInfo.from_state(raw)
    assert pause is AppState.of(raw).paused is PauseInfo.from_state(AppState.of(raw))
    assert pause.iteration_text == "iteration 2 of 3"
    assert pause.stack_text == "forward (Net) ← line 23   ·   train ← line 30"
    assert pause.frame == "Net.forward"
    assert PauseInfo.from_state({"paused": None}) is None and PauseInfo.from_state(None) is None


def test_recorded_saved_values_of_a_step_decode_when_the_kernel_sends_them():
    step = models.StepInfo.from_wire(
        {"node": "fn3", "label": "MyPowBackward", "grad_outputs": [0.008],
         "saved": [{"label": "saved_tensors[0]", "value": 5.0, "shape": [], "vars": ["x"]}]}
    )
    assert step.saved == (models.SavedValueInfo("saved_tensors[0]", 5.0, (), ("x",)),)
    assert models.StepInfo.from_wire({"node": "a", "label": "b"}).saved is None


def test_a_paused_kernel_state_decodes_with_its_frames():
    from gradviz.kernel_server import Kernel

    source = (
        "import torch\n"
        "def f(t):\n"
        "    return t * 2\n"
        "x = torch.ones(2, requires_grad=True)\n"
        "for i in range(3):\n"
        "    y = f(x)\n"
        "    y.sum().backward()\n"
    )
    kernel = Kernel(io.StringIO())
    kernel.handle({"cmd": "load", "source": source, "run_to": 2})
    kernel.handle({"cmd": "debug", "mode": "into"})
    raw = json.loads(json.dumps(kernel.handle({"cmd": "debug", "mode": "into"})))
    assert AppState.from_wire(raw).paused.line == 6  # the loop body, before y = f(x)
    raw = json.loads(json.dumps(kernel.handle({"cmd": "debug", "mode": "into"})))
    state = AppState.from_wire(raw)
    _check_equals_raw(state, raw)
    assert state.paused is not None and state.paused.iteration == 1
    assert state.paused.frame == "f" and state.paused.frames[0].call_line == 6
