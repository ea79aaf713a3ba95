"""Every lesson of SCENARIOS.md, run through the core, checked against PyTorch's numbers."""

from __future__ import annotations

import math

import pytest
import torch

from gradviz.app.demos import find_demo, list_demos
from gradviz.core.session import Session

from .helpers import result_at, run_script


def demo_session(name: str, **kwargs) -> Session:
    return run_script(find_demo(name).source, **kwargs)


def grad(session: Session, name: str):
    return session.snapshot()["tensors"][name]["grad"]


def test_every_scenario_has_a_demo_with_title_and_notes():
    demos = list_demos()
    assert len(demos) >= 12
    for demo in demos:
        assert demo.title and demo.about, demo.path
        assert demo.notes, f"{demo.name} has no '#>' notes"


def test_devices_cpu():
    s = demo_session("devices")
    r = result_at(s, "t.numpy()")
    assert not r.ok
    assert "Can't call numpy() on Tensor that requires grad" in r.error.message
    assert r.error.explanation
    assert result_at(s, "t.detach().to('cpu').numpy()").ok
    out = result_at(s, "print(b.device, b_moved.device)").output
    assert out.strip() == "cpu cpu"
    snap = s.snapshot()
    # .to() made a new tensor: b and b_moved are two variables
    assert "b" in snap["tensors"] and "b_moved" in snap["tensors"]


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_devices_cuda_mismatch():
    s = demo_session("devices", device="cuda")
    # the statement that mixes devices, found by its text (not by position: which
    # statements come before it may change, and on cuda they all succeed)
    r = [r for r in s.results if r.source.strip() == "c = a + b"][0]
    assert not r.ok
    assert "Expected all tensors to be on the same device" in r.error.message
    assert s.snapshot()["tensors"]["a"]["device"].startswith("cuda")
    assert s.snapshot()["tensors"]["b"]["device"] == "cpu"


def test_first_backward():
    s = demo_session("first_backward")
    snap = s.snapshot()
    t = snap["tensors"]
    assert t["y"]["grad"] == [[0.25, 0.25], [0.25, 0.25]]
    assert t["x"]["grad"] == [[0.25, 0.25], [0.25, 0.25]]
    assert t["w"]["grad"] == [[0.75, 3.0], [6.75, 3.0]]
    assert t["z"]["value"] == 14.0
    labels = {n["label"] for n in snap["graph"]["nodes"] if n["kind"] == "grad_fn"}
    assert {"PowBackward0", "AddBackward0", "MeanBackward0"} <= labels
    # reading x.grad before retain_grad: None plus PyTorch's warning, not an error
    r = [r for r in s.results if r.source.strip() == "x.grad"][0]
    assert r.ok and r.value is None
    assert any("not a leaf Tensor" in w for w in r.warnings)
    # no_grad: z = 14 with no grad_fn; backward fails with PyTorch's message
    assert t["zn"]["value"] == 14.0 and t["zn"]["grad_fn"] is None
    r = result_at(s, "zn.backward()")
    assert not r.ok
    assert "element 0 of tensors does not require grad and does not have a grad_fn" in r.error.message
    assert r.error.explanation


def test_first_backward_graph_labels_use_variable_names():
    s = demo_session("first_backward")
    nodes = {n["label"]: n for n in s.snapshot()["graph"]["nodes"] if n["kind"] == "grad_fn"}
    assert nodes["PowBackward0"]["vars"] == ["x"]
    assert nodes["AddBackward0"]["vars"] == ["y"]
    stmt = s.statements[nodes["PowBackward0"]["statement"]]
    assert stmt.source == "x = w ** 3"


def test_retain_graph_and_accumulation():
    s = demo_session("retain_graph")
    history = s.grad_history()["x"]
    assert history == pytest.approx([0.6, 1.2])
    r = [r for r in s.results if r.source.strip() == "z.backward()"]
    assert r[0].ok
    assert not r[1].ok
    assert "Trying to backward through the graph a second time" in r[1].error.message
    kinds = [e.kind for e in s.grad_events["x"]]
    assert kinds == ["backward", "backward", "zero"]
    assert grad(s, "x") == 0.0
    # after the second pass the saved tensors are freed
    pow_nodes = [n for n in s.snapshot()["graph"]["nodes"] if n["label"] == "PowBackward0"]
    assert pow_nodes and pow_nodes[0]["freed"] is True


def test_retain_graph_keeps_saved_tensors_until_last_pass():
    src = find_demo("retain_graph").source
    s = Session(src)
    s.run_to(4)  # after z.backward(retain_graph=True)
    pow_node = [n for n in s.snapshot()["graph"]["nodes"] if n["label"] == "PowBackward0"][0]
    assert pow_node["freed"] is False
    saved = [n for n in s.snapshot()["graph"]["nodes"] if n["kind"] == "saved"]
    assert saved, "saved tensors are drawn while the graph is retained"


def test_zero_grad_button():
    src = "x = torch.tensor(5.0, requires_grad=True)\ny = x ** 3\ny.backward()\n"
    s = run_script(src)
    assert grad(s, "x") == pytest.approx(75.0)
    assert s.zero_grad() == ["x"]
    assert grad(s, "x") == 0.0
    assert s.grad_events["x"][-1].kind == "zero"


def test_two_paths():
    s = demo_session("two_paths")
    t = s.snapshot()["tensors"]
    assert t["z"]["grad"] == pytest.approx(1.0)
    assert t["y"]["grad"] == pytest.approx(0.008)
    assert t["w"]["grad"] == pytest.approx(0.1)
    assert t["x"]["grad"] == pytest.approx(1.6)
    steps = s.passes[0].steps
    # both PowBackward0 nodes send into x's AccumulateGrad, which receives the sum
    pows = [st for st in steps if st.label == "PowBackward0"]
    assert sorted(p.grad_inputs[0] for p in pows) == pytest.approx([0.6, 1.0])
    acc = [st for st in steps if st.label == "AccumulateGrad" and st.vars == ["x"]]
    assert len(acc) == 1
    assert acc[0].grad_outputs[0] == pytest.approx(1.6)
    root = s.snapshot()["graph"]
    assert any(n["label"] == "AddBackward0" and n["vars"] == ["z"] for n in root["nodes"])


def test_two_leaves():
    s = demo_session("two_leaves")
    assert grad(s, "q") == pytest.approx(0.008 * 125 * math.log(5), rel=1e-5)
    assert grad(s, "q") == pytest.approx(1.6094, abs=1e-4)
    assert grad(s, "x") == pytest.approx(0.6)
    labels = {n["label"] for n in s.snapshot()["graph"]["nodes"]}
    assert "PowBackward1" in labels and "PowBackward0" not in labels


def test_custom_function():
    s = demo_session("custom_function")
    step = [st for st in s.passes[0].steps if st.label == "MyPowBackward"][0]
    assert step.grad_outputs == pytest.approx([0.008])
    assert step.grad_inputs == pytest.approx([0.6, 1.6094], abs=1e-4)
    # its saved tensors were 5 and 3 (freed after the pass; check before backward)
    s2 = Session(find_demo("custom_function").source)
    s2.run_to(6)
    g = s2.snapshot()["graph"]
    fn = [n for n in g["nodes"] if n["label"] == "MyPowBackward"][0]
    saved = [e["target"] for e in g["edges"] if e["source"] == fn["id"] and e["kind"] == "saved"]
    values = sorted(n["value"] for n in g["nodes"] if n["id"] in saved)
    assert values == [3.0, 5.0]


def test_no_grad_memory():
    s = demo_session("no_grad_memory")
    with_grad = result_at(s, "y = torch.exp(x)\n") if False else s.results[2]
    assert with_grad.source == "y = torch.exp(x)"
    assert with_grad.memory.saved_bytes >= 4_000_000
    no_grad = result_at(s, "with torch.no_grad():")
    assert no_grad.memory.saved_bytes == 0
    assert no_grad.memory.saved_bytes < with_grad.memory.saved_bytes
    z = s.snapshot()["tensors"]["z"]
    assert z["grad_fn"] is None


def test_inplace_memory():
    s = demo_session("inplace_memory")
    assert result_at(s, "out = torch.relu(t)").allocated_bytes == 400_000_000
    assert result_at(s, "torch.relu_(t)").allocated_bytes == 0
    assert s.snapshot()["tensors"]["t"]["version"] == 1


def test_inplace_dangers():
    s = demo_session("inplace_dangers")
    r = result_at(s, "a[0] = 3")
    assert not r.ok
    assert "leaf Variable that requires grad is being used in an in-place operation" in r.error.message
    r = result_at(s, "b.sum().backward()")
    assert not r.ok
    assert "modified by an inplace operation" in r.error.message
    assert "version" in r.error.explanation
    assert result_at(s, "print(\"b._version =\"").output.strip() == "b._version = 1"
    # the stale saved tensor is named in the graph: SigmoidBackward0's saved result
    s2 = Session(find_demo("inplace_dangers").source)
    while s2.cursor < 5:  # through b.mul_(2), past the failing a[0] = 3
        if not s2.step().ok:
            s2.skip_failed()
    g = s2.snapshot()["graph"]
    sig = [n for n in g["nodes"] if n["label"] == "SigmoidBackward0"][0]
    assert sig["stale"] == ["result"]
    stale = [n for n in g["nodes"] if n.get("stale") is True]
    assert stale and stale[0]["version"] == 1 and stale[0]["expected_version"] == 0
    assert s2.snapshot()["tensors"]["b"]["version"] == 1
    assert grad(s, "a") == pytest.approx([0.5, 0.3932], abs=1e-4)


def test_shared_storage():
    s = demo_session("shared_storage")
    t = s.snapshot()["tensors"]
    assert result_at(s, 'print("a =", a)').output.strip() == "a = [2. 2. 2. 2.]"
    assert t["a"]["storage"] == t["b"]["storage"]
    for name in ("v", "s", "d", "n"):
        assert t[name]["storage"] == t["x"]["storage"], name
    assert t["c"]["storage"] != t["x"]["storage"]
    assert t["i"]["storage"] != t["x"]["storage"]
    assert t["y_before"]["storage"] != t["y"]["storage"]
    assert t["A"]["storage"] == t["B"]["storage"]
    assert t["A"]["value"] == [3.0, 2.0]
    assert t["y"]["value"] == [5.0, 10.0, 15.0, 20.0]  # 1x, then +x four times in place


def test_clone_vs_detach():
    s = demo_session("clone_vs_detach")
    out = result_at(s, 'print("a =", a').output
    assert "a = tensor(3., requires_grad=True)" in out
    assert "b = tensor(2., grad_fn=<AddBackward0>)" in out
    assert "c = tensor(3.)" in out
    assert result_at(s, 'print("a.grad =", a.grad)').output.strip() == "a.grad = tensor(7.)"
    assert result_at(s, 'print("a_.grad').output.strip() == "a_.grad = tensor(2.)  a.grad = None"
    t = s.snapshot()["tensors"]
    assert t["x"]["grad"] == pytest.approx([-0.0053, 0.3793], abs=1e-4)
    assert result_at(s, "x.clone().requires_grad").output.strip() == "True False False"


def test_leaves_info():
    s = demo_session("leaves")
    t = s.snapshot()["tensors"]
    assert t["a"]["is_leaf"] and not t["a"]["requires_grad"]
    assert t["w"]["is_leaf"] and t["w"]["requires_grad"]
    assert not t["h"]["is_leaf"] and t["h"]["retains_grad"]
    assert t["h"]["grad"] == [1.0, 1.0]
    assert t["loss"]["grad"] is None
    assert "h: requires_grad(True) is_leaf(False) retains_grad(True)" in result_at(
        s, 'print("h:"'
    ).output


def test_failing_statement_keeps_state_before_it():
    s = Session("a = torch.ones(2)\nb = a @ torch.ones(3)\nc = a * 2\n")
    results = s.run_to_end()
    assert [r.ok for r in results] == [True, False]
    assert s.cursor == 1
    assert "a" in s.globals and "c" not in s.globals
    assert results[1].error.explanation  # shape mismatch gets a sentence


def test_step_back_replays():
    s = Session("torch.manual_seed(1)\na = torch.randn(3)\nb = a * 2\n")
    s.run_to_end()
    before = s.snapshot()["tensors"]["a"]["value"]
    s.step_back()
    assert s.cursor == 2 and "b" not in s.globals
    assert s.snapshot()["tensors"]["a"]["value"] == before


def test_edit_then_rerun_and_run_to_line():
    s = Session("a = torch.ones(2)\nb = a + 1\nc = b * 3\n")
    s.run_to_line(2)
    assert s.cursor == 2
    s.set_source("a = torch.ones(2)\nb = a + 5\nc = b * 3\n")
    s.run_to(2)
    assert s.snapshot()["tensors"]["b"]["value"] == [6.0, 6.0]


def test_syntax_error_is_reported_not_raised():
    s = Session("a = torch.ones(2)\nb = (a +\n")
    assert s.parse_error is not None and s.parse_error.line == 2
    assert s.statements == []


def test_new_nodes_marked_per_statement():
    s = Session("x = torch.tensor(2., requires_grad=True)\ny = x * 3\nz = y.exp()\n")
    s.run_to(2)
    s.step()
    nodes = {n["label"]: n for n in s.snapshot()["graph"]["nodes"]}
    assert nodes["ExpBackward0"]["new"] is True
    assert nodes["MulBackward0"]["new"] is False


def test_deep_chain_capture_is_iterative():
    s = Session("x = torch.tensor(1., requires_grad=True)\ny = x\nfor i in range(10000):\n    y = y * 1.0\n")
    s.run_to_end()
    assert all(r.ok for r in s.results)
    g = s.graph
    assert sum(1 for _, d in g.nodes(data=True) if d["kind"] == "grad_fn") == 10000
    s.step  # noqa: B018
    r = Session("x = torch.tensor(1., requires_grad=True)\ny = x\nfor i in range(10000):\n    y = y * 1.0\ny.backward()\n")
    r.run_to_end()
    assert r.snapshot()["tensors"]["x"]["grad"] == 1.0
    assert len(r.passes[0].steps) == 10001


def test_autograd_grad_is_recorded():
    s = run_script(
        "x = torch.tensor(3., requires_grad=True)\ny = x ** 2\n(g,) = torch.autograd.grad(y, [x])\n"
    )
    assert s.results[-1].ok
    assert s.passes[0].kind == "grad"
    assert s.snapshot()["tensors"]["g"]["value"] == 6.0


def test_hooks_run_script_functions():
    s = run_script(
        "def double(g):\n    return g * 2\n"
        "x = torch.tensor(3., requires_grad=True)\ny = x * 1\nh = y.register_hook(double)\n"
        "y.backward()\n"
    )
    assert all(r.ok for r in s.results)
    assert grad(s, "x") == 2.0


def test_zero_grad_button_survives_step_back():
    src = (
        "x = torch.tensor(5.0, requires_grad=True)\ny = x ** 2\ny.backward(retain_graph=True)\n"
        "y.backward()\nz = x * 1\n"
    )
    s = Session(src)
    s.run_to(3)
    assert grad(s, "x") == pytest.approx(10.0)
    s.zero_grad()
    s.run_to_end()
    assert grad(s, "x") == pytest.approx(10.0)  # zeroed, then one more backward
    s.step_back()  # replays from the start: the Zero-grad press is replayed at cursor 3
    assert s.cursor == 4
    assert grad(s, "x") == pytest.approx(10.0)
    assert [e.kind for e in s.grad_events["x"]] == ["backward", "zero", "backward"]
    s.set_source(src)  # a new script forgets the presses
    s.run_to_end()
    assert grad(s, "x") == pytest.approx(20.0)


def test_seeding_shows_no_generator_address():
    """``torch.manual_seed(0)`` returns the generator; its repr is an address, not a
    value the learner wants under the line. Other expression values still show."""
    from gradviz.core.session import Session

    session = Session("torch.manual_seed(0)\nx = torch.ones(2)\nx.sum()\n")
    session.run_to_end()
    values = [r.value for r in session.results]
    assert values[0] is None and values[2] == repr(torch_sum_of_ones())


def torch_sum_of_ones():
    import torch

    return torch.ones(2).sum()
