"""CUDA paths: run where torch.cuda.is_available(), skipped with the reason elsewhere."""

from __future__ import annotations

import pytest
import torch

from gradviz.app.demos import find_demo
from gradviz.core.session import DeviceUnavailable, Session, cuda_unavailable_reason

from .helpers import result_at, run_script

needs_cuda = pytest.mark.skipif(
    not torch.cuda.is_available(), reason=f"no CUDA here: {cuda_unavailable_reason()}"
)


@pytest.mark.skipif(torch.cuda.is_available(), reason="CUDA is available on this machine")
def test_cuda_refused_with_reason_without_a_device():
    with pytest.raises(DeviceUnavailable, match="cuda is unavailable"):
        Session("a = 1", device="cuda")
    assert cuda_unavailable_reason()


@needs_cuda
def test_devices_mismatch_on_cuda():
    s = run_script(find_demo("devices").source, device="cuda")
    r = [r for r in s.results if r.source == "c = a + b"][0]
    assert not r.ok
    assert "Expected all tensors to be on the same device" in r.error.message
    assert r.error.explanation
    t = s.snapshot()["tensors"]
    assert t["a"]["device"].startswith("cuda") and t["b"]["device"] == "cpu"
    assert t["b_moved"]["device"].startswith("cuda")
    assert result_at(s, "t.detach().to('cpu').numpy()").ok


@needs_cuda
def test_inplace_memory_on_cuda():
    s = run_script(find_demo("inplace_memory").source, device="cuda")
    relu = result_at(s, "out = torch.relu(t)")
    relu_ = result_at(s, "torch.relu_(t)")
    assert relu.allocated_bytes == 400_000_000
    assert relu_.allocated_bytes == 0
    assert relu.memory.cuda_max_allocated >= 800_000_000
    assert relu.memory.cuda_allocated >= 800_000_000
    assert relu_.memory.cuda_allocated == relu.memory.cuda_allocated


@needs_cuda
def test_scenarios_match_on_cuda():
    s = run_script(find_demo("two_paths").source, device="cuda")
    assert s.snapshot()["tensors"]["x"]["grad"] == pytest.approx(1.6)
    s = run_script(find_demo("retain_graph").source, device="cuda")
    assert s.grad_history()["x"] == pytest.approx([0.6, 1.2])


# --- the product path: gradviz run --device cuda, through the confined kernel -------------
#
# Session in this process never meets the kernel's confinement; these go through
# ``gradviz run --json`` (the kernel the window starts too), where the driver has to
# start under the first confinement stage (gradviz.core.confine.close_device_door).

DEMOS = ["devices", "first_backward", "retain_graph", "two_paths", "two_leaves",
         "custom_function", "no_grad_memory", "inplace_memory", "inplace_dangers",
         "shared_storage", "clone_vs_detach", "leaves"]


MODES = ["restricted", "trusted"]


def _run_json(demo: str, device: str, mode: str = "restricted") -> dict:
    import json
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-m", "gradviz", "run", "--json", "--keep-going", "--demo", demo,
         "--device", device, "--restricted" if mode == "restricted" else "--trust"],
        capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    report = json.loads(proc.stdout)
    assert report["mode"] == mode
    return report


def _comparable(report: dict) -> list[tuple]:
    """What must not depend on the device: which statements ran, and their errors' types
    (cuda's messages name devices), the graph's grad_fn labels."""
    statements = [(s["source"], s["ok"], (s["error"] or {}).get("type")) for s in report["statements"]]
    labels = sorted(n["label"] for n in report["graph"]["nodes"] if n["kind"] == "grad_fn")
    return [tuple(statements), tuple(labels)]


@needs_cuda
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("demo", [d for d in DEMOS if d != "devices"])
def test_every_demo_runs_on_cuda_through_the_kernel(demo, mode):
    cuda = _run_json(demo, "cuda", mode)
    cpu = _run_json(demo, "cpu", mode)
    assert cuda["device"].startswith("cuda")
    if mode == "restricted":
        # both OS layers, and the driver's rights named and taken back
        assert {"landlock", "seccomp"} <= set(cuda["confinement"]["applied"])
        rights = cuda["confinement"]["device_rights"]
        assert len(rights) == 2 and all("then refused" in r for r in rights), rights
    else:
        assert "confinement" not in cuda
    assert _comparable(cuda) == _comparable(cpu)
    for name, t in cuda["tensors"].items():
        if t.get("grad") is not None and cpu["tensors"].get(name, {}).get("grad") is not None:
            # grads come as (nested) lists of numbers
            torch.testing.assert_close(
                torch.tensor(t["grad"]), torch.tensor(cpu["tensors"][name]["grad"]),
                rtol=1e-5, atol=1e-6, msg=f"{demo}: {name}.grad",
            )


@needs_cuda
@pytest.mark.parametrize("mode", MODES)
def test_inplace_memory_counters_on_cuda_through_the_kernel(mode):
    report = _run_json("inplace_memory", "cuda", mode)
    mib = 1024 * 1024
    relu = [s for s in report["statements"] if "torch.relu(" in s["source"]][0]
    relu_ = [s for s in report["statements"] if "torch.relu_(" in s["source"]][0]
    assert round(relu["allocated_bytes"] / mib, 1) == 381.5 or relu["allocated_bytes"] >= 4e8
    assert relu_["allocated_bytes"] == 0


@needs_cuda
def test_device_switch_mid_session_in_the_confined_kernel():
    """What the window does when the picker changes: one confined kernel (started with
    the device door, as the window starts it), cpu first, then cuda, then back. The
    picker sets ``dev``, which the lesson's tensors are made on."""
    from gradviz.runner import KernelProcess

    source = find_demo("no_grad_memory").source
    with KernelProcess(cuda=True) as kernel:
        confinement = kernel.info["confinement"]
        assert {"landlock", "seccomp"} <= set(confinement["applied"])
        assert confinement["device_rights"], confinement
        assert all("then refused" in r for r in confinement["device_rights"])
        assert kernel.info["cuda_available"] is True, kernel.info
        state = kernel.request("load", source=source, device="cpu", run_to=10_000)["state"]
        assert state["tensors"]["x"]["device"] == "cpu"
        assert state["tensors"]["z"]["grad_fn"] is None  # made under no_grad
        state = kernel.request("set_device", device="cuda", run_to=10_000)["state"]
        assert state["device"].startswith("cuda")
        assert state["tensors"]["x"]["device"].startswith("cuda")
        assert state["tensors"]["y"]["device"].startswith("cuda")
        assert state["memory"]["totals"]["cuda_allocated"] >= 4_000_000, state["memory"]
        state = kernel.request("set_device", device="cpu", run_to=10_000)["state"]
        assert state["tensors"]["x"]["device"] == "cpu"


CUDA_LOOP = """\
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1)).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(8, 3).to(dev)
y = torch.randn(8, 1).to(dev)
for step in range(3):
    opt.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    opt.step()
w = model[0].weight
"""
CUDA_LOOP_BACKWARD = 12


@needs_cuda
@pytest.mark.parametrize("mode", MODES)
def test_debugger_steps_a_training_loop_on_cuda_through_the_kernel(mode):
    """The window's path on a GPU: the kernel (confined in restricted mode, real Python
    under the line debugger in trusted mode) stops at a breakpoint inside the loop on
    cuda, steps into the next line, and runs on to the end; the loss, the weights' grad
    and grad_fn are plain PyTorch's, run here on the same device."""
    from gradviz import protocol as P
    from gradviz.runner import KernelProcess

    plain: dict = {"dev": "cuda"}
    exec(compile(CUDA_LOOP, "<plain>", "exec"), plain)
    with KernelProcess(cuda=True, trusted=mode == "trusted") as kernel:
        reply = kernel.request(P.Load(source=CUDA_LOOP, device="cuda"))
        assert reply["ok"], reply
        reply = kernel.request(P.Continue(breakpoints=(CUDA_LOOP_BACKWARD,)))
        assert reply["stop"]["reason"] == "breakpoint", reply.get("stop")
        paused = reply["state"]["paused"]
        assert paused["line"] == CUDA_LOOP_BACKWARD and paused["iteration"] == 1
        assert reply["state"]["tensors"]["loss"]["device"].startswith("cuda")
        reply = kernel.request(P.Step(mode="into"))
        assert reply["state"]["paused"]["line"] == CUDA_LOOP_BACKWARD + 1
        reply = kernel.request(P.Continue())
        state = reply["state"]
        assert state["at_end"] and len(state["backward_passes"]) == 3
    assert state["tensors"]["loss"]["value"] == pytest.approx(plain["loss"].item(), rel=1e-5)
    assert state["tensors"]["loss"]["grad_fn"] == type(plain["loss"].grad_fn).__name__
    torch.testing.assert_close(
        torch.tensor(state["tensors"]["w"]["grad"]), plain["w"].grad.cpu(), rtol=1e-5, atol=1e-6
    )
