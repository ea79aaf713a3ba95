"""Value summaries: reduced on one thread, and within a budget where many are made."""

from __future__ import annotations

import json

import pytest
import torch

from gradviz.core import capture as capture_module
from gradviz.core.capture import STATS_BUDGET_ELEMENTS, stats_budget, summarize


def test_summaries_reduce_on_one_thread_and_give_the_thread_count_back(monkeypatch):
    before = torch.get_num_threads()
    seen = []
    real = torch.aminmax

    def spy(t):
        seen.append(torch.get_num_threads())
        return real(t)

    monkeypatch.setattr(torch, "aminmax", spy)
    try:
        torch.set_num_threads(2)
        text = summarize(torch.arange(10_000, dtype=torch.float32))
        assert "min 0, max 9999, mean 5000" in text
        assert seen == [1] and torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


def test_a_budget_bounds_the_values_reduced_and_nests_with_a_capture():
    big = torch.ones(600, 1000)
    assert capture_module._STATS.left is None
    with stats_budget(1_500_000):
        assert "mean 1" in summarize(big)
        assert "mean 1" in summarize(big)  # nothing memoized: read again (600k more)
        assert "skipped" in summarize(big)  # past the budget
        x = torch.ones(3, requires_grad=True)
        capture_module.capture({"x": x, "y": (x * 2).sum()}, capture_module.IdRegistry())  # its own budget
        assert capture_module._STATS.left == 1_500_000 - 2 * big.numel()
        assert "skipped" in summarize(big)
    assert capture_module._STATS.left is None
    assert "mean 1" in summarize(big)  # no budget outside
    assert STATS_BUDGET_ELEMENTS >= 1_000_000


def test_a_summary_reads_its_first_values_through_numpy_as_torch_gives_them(monkeypatch):
    """The numpy read of a contiguous tensor's first row gives the text torch's own
    slicing gives; tensors it cannot read (bfloat16, a transposed view, one that
    requires grad) take torch's path."""
    torch.manual_seed(0)
    cases = [
        torch.randn(3, 4, 5),
        torch.randn(2, 3),
        torch.arange(100, dtype=torch.int64).view(10, 10),
        torch.randn(50) > 0,
        torch.randn(4, 40).to(torch.float16),
        torch.randn(4, 40).to(torch.bfloat16),
        torch.randn(40, 4).t(),
        torch.randn(30, requires_grad=True),
    ]
    read = [capture_module._head_values(t) is not None for t in cases]
    assert read == [True, True, True, True, True, False, False, False]
    texts = [summarize(t.detach() if i < 7 else t) for i, t in enumerate(cases)]
    monkeypatch.setattr(capture_module, "_head_values", lambda t: None)
    assert texts == [summarize(t.detach() if i < 7 else t) for i, t in enumerate(cases)]
    assert texts[2].startswith("[0, 1, 2, 3, 4, 5, ...] (100 values")


@pytest.mark.parametrize(
    "t",
    [
        torch.tensor([1.0, float("nan"), float("inf")]),
        torch.tensor([[float("-inf"), 2.0], [3.0, float("nan")]]),
        torch.tensor([1e308, 1e308], dtype=torch.float64),  # finite, but their sum is not
        torch.tensor([float("inf"), float("-inf")]),  # a sum of nan
        torch.tensor(2.5),
        torch.tensor([[1, 2], [3, 4]]),
        torch.tensor([True, False]),
        torch.zeros(0),
        torch.randn(3, 4, dtype=torch.float16),
    ],
)
def test_small_tensor_values_are_json_whatever_their_floats(t):
    """nan and inf become strings (JSON has neither); every other value is the list
    torch gives: the one-sum check finds exactly what the per-element walk found."""
    from gradviz.core.capture import _clean, tensor_value

    value = tensor_value(t)
    assert value == _clean(t.tolist())
    json.dumps(value, allow_nan=False)
