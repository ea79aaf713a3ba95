"""Explanations match PyTorch's own messages (taken from torch, never typed by hand)."""

from __future__ import annotations

import pytest
import torch

from gradviz.graph.explain import explain


def _message(fn) -> str:
    with pytest.raises(Exception) as info:  # noqa: PT011 - whatever torch raises
        fn()
    return str(info.value)


def test_integer_requires_grad_is_explained_whatever_the_case():
    message = _message(lambda: torch.tensor([1, 2], requires_grad=True))
    assert explain(message) is not None and "floating point" in explain(message)


def test_view_of_a_leaf_is_not_shadowed_by_the_leaf_explanation():
    x = torch.ones(3, requires_grad=True)
    view_message = _message(lambda: x[0:2].mul_(2))
    leaf_message = _message(lambda: x.mul_(2))
    assert "view of a leaf" in explain(view_message)
    assert "view" not in explain(leaf_message)
