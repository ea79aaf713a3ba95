"""Value summaries: reduced on one thread, and within a budget where many are made."""

from __future__ import annotations

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
