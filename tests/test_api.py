"""The library API on a small nn.Sequential and a custom Function."""

from __future__ import annotations

import json

import pytest
import torch

import gradviz

from .helpers import walk_grad_fns


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


def test_nothing_in_a_snapshot_is_new(model_and_loss):
    """The violet "added by the last statement" glow means nothing in a snapshot: no node
    and no edge carries it (edges did, and every edge was drawn violet)."""
    model, loss, rec = model_and_loss
    snap = gradviz.snapshot(loss, model=model, recorder=rec)
    assert snap["graph"]["nodes"] and snap["graph"]["edges"]
    assert not any(n["new"] for n in snap["graph"]["nodes"])
    assert not any(e["new"] for e in snap["graph"]["edges"])


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


# --- what gradviz.record records, checked against what PyTorch did ------------------------------


def _graph_still_there(z: torch.Tensor) -> bool:
    """Did PyTorch keep z's graph? Another backward through it tells."""
    try:
        torch.autograd.grad(z, [t for t in _leaves(z)], allow_unused=True)
    except RuntimeError:
        return False
    return True


def _leaves(z: torch.Tensor) -> list[torch.Tensor]:
    return [fn.variable for fn in walk_grad_fns(z.grad_fn) if hasattr(fn, "variable")]


BACKWARD_CALLS = {
    "z.backward(retain_graph=True)": lambda z, x: z.backward(retain_graph=True),
    "z.backward(None, True)": lambda z, x: z.backward(None, True),
    "z.backward()": lambda z, x: z.backward(),
    "z.backward(None, False)": lambda z, x: z.backward(None, False),
    "z.backward(None, None, True)": lambda z, x: z.backward(None, None, True),
    "z.backward(create_graph=True)": lambda z, x: z.backward(create_graph=True),
    "z.backward(None, False, True)": lambda z, x: z.backward(None, False, True),
    "autograd.backward(z, None, True)": lambda z, x: torch.autograd.backward(z, None, True),
    "autograd.backward([z], retain_graph=True)": lambda z, x: torch.autograd.backward(
        [z], retain_graph=True
    ),
    "autograd.backward(z, None, None, True)": lambda z, x: torch.autograd.backward(
        z, None, None, True
    ),
    "autograd.grad(z, x, None, True)": lambda z, x: torch.autograd.grad(z, x, None, True),
    "autograd.grad(z, [x], create_graph=True)": lambda z, x: torch.autograd.grad(
        z, [x], create_graph=True
    ),
    "autograd.grad(z, x)": lambda z, x: torch.autograd.grad(z, x),
}


@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")
@pytest.mark.parametrize("call", list(BACKWARD_CALLS), ids=list(BACKWARD_CALLS))
def test_record_reads_retain_and_create_graph_as_pytorch_does(call):
    x = torch.tensor([1.5, -2.0], requires_grad=True)
    with gradviz.record() as rec:
        z = (x**3).sum()  # PowBackward0 saves x: a freed graph cannot be run again
        result = BACKWARD_CALLS[call](z, x)
    (trace,) = rec.passes
    # what PyTorch did: is the graph still there, and did the gradient get a graph of its own?
    gradient = x.grad if result is None else result[0]
    assert trace.retain_graph is _graph_still_there(z)
    assert trace.create_graph is (gradient.grad_fn is not None)
    assert trace.kind == ("grad" if call.startswith("autograd.grad") else "backward")


def test_grad_history_is_grad_after_each_pass():
    x = torch.tensor(2.0, requires_grad=True)
    after: list[float] = []
    with gradviz.record() as rec:
        rec.name({"x": x})
        z = x**3
        z.backward(retain_graph=True)
        after.append(x.grad.item())  # plain PyTorch's .grad after pass 1
        z.backward()
        after.append(x.grad.item())  # ... and after pass 2 (accumulated)
    snap = gradviz.snapshot(z, names={"x": x}, recorder=rec)
    assert snap["grad_history"]["x"] == pytest.approx(after)
    assert after == pytest.approx([12.0, 24.0])  # what the lesson teaches
    assert [p["leaf_grads"]["x"] for p in snap["backward_passes"]] == pytest.approx(after)


def test_grad_history_of_a_model_zeroed_between_steps():
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 1)
    data = torch.randn(4, 3)
    seen: list[list[float]] = []
    with gradviz.record(model) as rec:
        for _ in range(3):
            model.zero_grad()
            model(data).pow(2).mean().backward()
            seen.append(model.bias.grad.tolist())
        loss = model(data).sum()
    snap = gradviz.snapshot(loss, model=model, recorder=rec)
    assert snap["grad_history"]["bias"] == [pytest.approx(v) for v in seen]


@pytest.mark.parametrize("how", ["rec.name after backward", "snapshot(names=...)", "snapshot(model=...)"])
def test_names_given_after_backward_label_steps_and_history(how):
    torch.manual_seed(1)
    lin = torch.nn.Linear(2, 1)
    x = torch.tensor([[0.5, -1.0]], requires_grad=True)
    with gradviz.record() as rec:  # nothing named before backward()
        loss = lin(x).pow(2).sum()
        loss.backward()
    expected = {"x": x.grad, "weight": lin.weight.grad}
    kwargs: dict = {"recorder": rec}
    if how == "rec.name after backward":
        rec.name({"x": x, "weight": lin.weight})
    elif how == "snapshot(names=...)":
        kwargs["names"] = {"x": x, "weight": lin.weight}
    else:
        kwargs.update(model=lin, names={"x": x})
    snap = gradviz.snapshot(loss, **kwargs)
    steps = snap["backward_passes"][0]["steps"]
    accumulated = {v: s["grad_outputs"][0] for s in steps if s["label"] == "AccumulateGrad" for v in s["vars"]}
    for name, grad in expected.items():
        torch.testing.assert_close(torch.tensor(accumulated[name]), grad)
        (after_pass,) = snap["grad_history"][name]
        torch.testing.assert_close(torch.tensor(after_pass), grad)
    pow_step = next(s for s in steps if s["label"] == "PowBackward0")
    assert pow_step["node"] in {n["id"] for n in snap["graph"]["nodes"]}


def test_a_failing_backward_raises_what_pytorch_raises_and_is_recorded():
    def build():
        x = torch.tensor(5.0, requires_grad=True)
        return x, torch.log(x**3)

    x, z = build()
    z.backward()
    with pytest.raises(RuntimeError) as plain:
        z.backward()
    x, z = build()
    with gradviz.record() as rec:
        z.backward()
        with pytest.raises(RuntimeError) as recorded:
            z.backward()
    assert type(recorded.value) is type(plain.value)
    assert str(recorded.value) == str(plain.value)
    assert len(rec.passes) == 2 and rec.passes[1].error.startswith("RuntimeError")
    snap = gradviz.snapshot(z, names={"x": x}, recorder=rec)
    assert snap["grad_history"]["x"] == [pytest.approx(x.grad.item())]


# --- the Snapshot object ----------------------------------------------------------------------


def test_snapshot_object_reads_like_the_dict_and_saves(tmp_path, model_and_loss):
    model, loss, rec = model_and_loss
    snap = gradviz.snapshot(loss, model=model, recorder=rec)
    assert isinstance(snap, gradviz.Snapshot)
    assert snap["format"] == "gradviz-snapshot" and "graph" in snap and len(snap) == len(snap.to_dict())
    text = repr(snap)
    nodes = len(snap["graph"]["nodes"])
    assert text == f"<gradviz.Snapshot: {nodes} nodes, 1 backward pass, device cpu, roots loss>"
    assert json.loads(snap.to_json())["graph"] == json.loads(json.dumps(snap["graph"]))
    back = gradviz.load(snap.save(tmp_path / "a.gradviz.json"))
    assert isinstance(back, gradviz.Snapshot) and back == gradviz.load(gradviz.save(snap, tmp_path / "b.json"))
    assert back["backward_passes"] == json.loads(json.dumps(snap["backward_passes"]))


def test_repr_svg_is_the_laid_out_graph(model_and_loss):
    import xml.etree.ElementTree as ET

    model, loss, rec = model_and_loss
    snap = gradviz.snapshot(loss, model=model, recorder=rec)
    svg = snap._repr_svg_()
    root = ET.fromstring(svg)
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    drawn = root.findall(".//{http://www.w3.org/2000/svg}g[@id]")
    assert sorted(g.get("id") for g in drawn) == sorted(n["id"] for n in snap["graph"]["nodes"])
    assert json.loads(json.dumps(snap))["graph"] == snap["graph"]  # still a plain dict to json


def test_repr_html_is_the_interactive_page_in_a_frame(model_and_loss):
    import html

    model, loss, rec = model_and_loss
    snap = gradviz.snapshot(loss, model=model, recorder=rec)
    frame = snap._repr_html_()
    # the untrusted-notebook note first (hidden by its style where the output is trusted)
    assert frame.startswith("<style>.gvz-untrusted-") and "<iframe srcdoc=" in frame
    page = html.unescape(frame.split('srcdoc="', 1)[1].split('" style=', 1)[0])
    assert page == snap.to_html()


def test_dir_lists_the_api():
    listed = dir(gradviz)
    for name in ("snapshot", "record", "save", "load", "show", "Snapshot", "Recorder", "__version__"):
        assert name in listed
    assert set(gradviz.__all__) <= set(listed)
    assert "Any" not in listed and "annotations" not in listed


def test_done_when_check_prints_true_with_no_display():
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    code = (
        "import gradviz, torch; x=torch.ones(2, requires_grad=True); "
        "s=gradviz.snapshot((x*2).sum()); print(len(s._repr_svg_()) > 0)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "True"


def test_record_tells_grad_from_backward_under_trusted_mode_routing():
    """Regression (seen only when the trusted tests ran first): trusted mode wraps
    torch.autograd.grad once per process, and record() took the wrapper for backward."""
    from gradviz.core.pyengine import _install_wrappers

    _install_wrappers()
    x = torch.tensor(2.0, requires_grad=True)
    with gradviz.record() as rec:
        z = x ** 3
        (gx,) = torch.autograd.grad(z, [x], retain_graph=True)
        z.backward()
    snap = gradviz.snapshot(z, names={"x": x}, recorder=rec)
    assert [p["kind"] for p in snap["backward_passes"]] == ["grad", "backward"]
    assert gx.item() == pytest.approx(12.0) and x.grad.item() == pytest.approx(12.0)


def test_notebook_display_lays_the_graph_out_once(model_and_loss, monkeypatch):
    """IPython calls _repr_mimebundle_ instead of _repr_html_ and _repr_svg_: the page and
    the SVG come from one layout, and are what the two would have given."""
    import gradviz.export
    import gradviz.html_view

    model, loss, rec = model_and_loss
    snap = gradviz.snapshot(loss, model=model, recorder=rec)
    html_alone, svg_alone = snap._repr_html_(), snap._repr_svg_()
    calls = []
    real = gradviz.html_view.layout_with_routes

    def counted(graph, *args, **kwargs):
        calls.append(graph.number_of_nodes())
        return real(graph, *args, **kwargs)

    monkeypatch.setattr(gradviz.html_view, "layout_with_routes", counted)
    monkeypatch.setattr(gradviz.export, "layout_with_routes", counted)
    bundle = snap._repr_mimebundle_()
    assert bundle["text/html"] == html_alone and bundle["image/svg+xml"] == svg_alone
    assert bundle["text/plain"] == repr(snap)
    whole = len(snap["graph"]["nodes"])
    assert calls.count(whole) == 1, calls  # the expanded picture, laid out once
    only_svg = snap._repr_mimebundle_(include={"image/svg+xml"})
    assert set(only_svg) == {"image/svg+xml"} and only_svg["image/svg+xml"] == svg_alone
    assert "text/html" not in snap._repr_mimebundle_(exclude={"text/html"})


def test_a_graph_too_big_for_a_page_shows_its_svg_in_a_notebook_without_a_traceback(
    monkeypatch, capsys
):
    """Past the page's limit the bundle holds the SVG alone; IPython then asks
    _repr_html_ for the missing text/html, which raised PageTooBig and printed its
    traceback in the output. It says "no HTML" (None) instead."""
    interactiveshell = pytest.importorskip("IPython.core.interactiveshell")
    import gradviz.html_view
    from gradviz.html_view import PageLimits

    x = torch.ones(3, requires_grad=True)
    snap = gradviz.snapshot((x * 2).sin().sum(), names={"x": x})
    elements = len(snap["graph"]["nodes"]) + len(snap["graph"]["edges"])
    monkeypatch.setattr(gradviz.html_view, "DEFAULT_LIMITS", PageLimits(max_elements=elements - 1))
    shell = interactiveshell.InteractiveShell.instance()
    capsys.readouterr()
    data, _ = shell.display_formatter.format(snap)
    printed = capsys.readouterr()
    assert set(data) == {"text/plain", "image/svg+xml"}
    assert data["image/svg+xml"] == snap._repr_svg_()
    assert "PageTooBig" not in printed.out + printed.err
    assert "Traceback" not in printed.out + printed.err
    assert snap._repr_html_() is None

    monkeypatch.setattr(gradviz.html_view, "DEFAULT_LIMITS", PageLimits(max_elements=elements))
    data, _ = shell.display_formatter.format(snap)  # at the limit: the page as before
    assert data["text/html"] == snap._repr_html_() and "<iframe srcdoc=" in data["text/html"]


def test_a_recorded_pass_summarizes_its_gradients_within_a_budget(monkeypatch):
    import gradviz.api

    monkeypatch.setattr(gradviz.api, "RECORD_STATS_ELEMENTS", 5_000)
    w = torch.randn(60, 50, requires_grad=True)  # 3,000 values, summarized (over 1,000)
    with gradviz.record() as rec:
        loss = (w * 2).sin().sum()
        loss.backward()
    snap = gradviz.snapshot(loss, names={"w": w}, recorder=rec)
    texts = [
        g for step in snap["backward_passes"][0]["steps"] for g in step["grad_inputs"]
        if isinstance(g, str)
    ]
    assert any("mean" in t for t in texts) and any("skipped" in t for t in texts), texts
    assert "mean" in str(snap["grad_history"]["w"][0])  # .grad after the pass: not in the budget
