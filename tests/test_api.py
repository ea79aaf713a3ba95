"""The library API on a small nn.Sequential and a custom Function."""

from __future__ import annotations

import json

import pytest
import torch

import gradviz


def next_functions_walk(root: torch.Tensor) -> set[str]:
    """grad_fn class names reachable from root, by an independent walk."""
    seen, stack, out = set(), [root.grad_fn], []
    while stack:
        fn = stack.pop()
        if fn is None or id(fn) in seen:
            continue
        seen.add(id(fn))
        out.append(fn)
        stack.extend(n for n, _ in fn.next_functions)
    return out


@pytest.fixture
def model_and_loss():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 1))
    x = torch.randn(5, 3)
    with gradviz.record(model) as rec:
        loss = model(x).pow(2).mean()
        loss.backward()
    return model, loss, rec


def test_snapshot_node_set_equals_next_functions_walk(model_and_loss):
    model, loss, rec = model_and_loss
    snap = gradviz.snapshot(loss, model=model, recorder=rec)
    autograd_nodes = [n for n in snap["graph"]["nodes"] if n["kind"] in ("grad_fn", "accumulate_grad")]
    walk = next_functions_walk(loss)
    assert len(autograd_nodes) == len(walk)
    assert sorted(n["label"] for n in autograd_nodes) == sorted(type(f).__name__ for f in walk)


def test_parameters_get_qualified_names(model_and_loss):
    model, loss, rec = model_and_loss
    snap = gradviz.snapshot(loss, model=model, recorder=rec)
    acc_vars = {v for n in snap["graph"]["nodes"] if n["kind"] == "accumulate_grad" for v in n["vars"]}
    assert acc_vars == {"0.weight", "0.bias", "2.weight", "2.bias"}
    assert snap["tensors"]["0.weight"]["grad"] is not None
    modules = {n.get("module") for n in snap["graph"]["nodes"] if n["label"] == "AddmmBackward0"}
    assert modules == {"0", "2"}


def test_names_prefix_modules_and_label_tensors(model_and_loss):
    model, loss, rec = model_and_loss
    snap = gradviz.snapshot(loss, names={"net": model, "w": model[0].weight})
    names = set(snap["tensors"])
    assert {"net.0.weight", "w", "loss"} <= names


def test_recorded_passes(model_and_loss):
    model, loss, rec = model_and_loss
    snap = gradviz.snapshot(loss, model=model, recorder=rec)
    assert len(snap["backward_passes"]) == 1
    steps = snap["backward_passes"][0]["steps"]
    assert steps[0]["label"] == "MeanBackward0"
    assert sum(1 for s in steps if s["label"] == "AccumulateGrad") == 4
    assert set(snap["grad_history"]) == {"0.weight", "0.bias", "2.weight", "2.bias"}


def test_record_restores_torch_functions():
    before = (torch.autograd.backward, torch.autograd.grad)
    with gradviz.record():
        pass
    assert (torch.autograd.backward, torch.autograd.grad) == before


def test_custom_function_snapshot_and_grad():
    class MyPow(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return a**b

        @staticmethod
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            return g * b * a ** (b - 1), g * a**b * torch.log(a)

    q = torch.tensor(3.0, requires_grad=True)
    x = torch.tensor(5.0, requires_grad=True)
    with gradviz.record() as rec:
        z = torch.log(MyPow.apply(x, q))
        rec.name({"x": x, "q": q})
        z.backward(retain_graph=True)
        (gx,) = torch.autograd.grad(z, [x])
    snap = gradviz.snapshot(z, names={"x": x, "q": q}, recorder=rec)
    labels = {n["label"] for n in snap["graph"]["nodes"]}
    assert "MyPowBackward" in labels
    step = [s for s in snap["backward_passes"][0]["steps"] if s["label"] == "MyPowBackward"][0]
    assert step["grad_outputs"] == pytest.approx([0.008])
    assert step["grad_inputs"] == pytest.approx([0.6, 1.6094], abs=1e-4)
    assert [p["kind"] for p in snap["backward_passes"]] == ["backward", "grad"]
    assert gx.item() == pytest.approx(0.6)


def test_save_load_round_trip(tmp_path, model_and_loss):
    model, loss, rec = model_and_loss
    snap = gradviz.snapshot(loss, model=model, recorder=rec)
    path = gradviz.save(snap, tmp_path / "run.gradviz.json")
    data = json.loads(path.read_text())
    assert data["format"] == "gradviz-snapshot" and data["version"] == 1
    back = gradviz.load(path)
    assert back["graph"] == json.loads(json.dumps(snap["graph"]))
    assert back["tensors"].keys() == snap["tensors"].keys()


def test_load_refuses_other_files(tmp_path):
    bad = tmp_path / "x.json"
    bad.write_text('{"hello": 1}')
    with pytest.raises(ValueError, match="not a gradviz snapshot"):
        gradviz.load(bad)
    bad.write_text("not json")
    with pytest.raises(ValueError, match="not JSON"):
        gradviz.load(bad)


def test_clear_errors_for_bad_roots():
    with pytest.raises(TypeError, match="takes tensors"):
        gradviz.snapshot(3.0)
    with pytest.raises(ValueError, match="no grad_fn"):
        gradviz.snapshot(torch.ones(2))
    with pytest.raises(TypeError, match="not a tensor or module"):
        gradviz.snapshot(torch.ones(1, requires_grad=True) * 2, names={"x": 3})
