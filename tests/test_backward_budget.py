"""A backward pass's gradient summaries share one budget of reduced values."""

from __future__ import annotations

import torch

from gradviz.core import backward as backward_module
from gradviz.core import capture as capture_module
from gradviz.core.capture import IdRegistry


def test_a_backward_pass_summarizes_its_gradients_within_one_budget(monkeypatch):
    monkeypatch.setattr(backward_module, "BACKWARD_STATS_ELEMENTS", 1_000)
    x = torch.ones(600, requires_grad=True)  # over MAX_VALUE_ELEMENTS: summarized
    loss = (x * 2).sin().sum()
    _, trace = backward_module.record_backward(
        torch.Tensor.backward, (loss,), {}, loss.backward, IdRegistry(), {}
    )
    texts = [g for step in trace.steps for g in step.grad_inputs if isinstance(g, str)]
    assert any("min" in t for t in texts)  # the first 1,000 values' worth
    assert any("skipped" in t for t in texts)  # then past the budget
    assert capture_module._STATS.left is None  # no budget left behind
    assert torch.equal(x.grad, 2 * (x * 2).cos())
