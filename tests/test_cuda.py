"""CUDA paths: run where torch.cuda.is_available(), skipped with the reason elsewhere."""

from __future__ import annotations

import pytest
import torch

from gradviz.core.demos import find_demo
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
