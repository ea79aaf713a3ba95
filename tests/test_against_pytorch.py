"""Every demo through gradviz and through plain PyTorch: identical leaf gradients."""

from __future__ import annotations

import pytest
import torch

from gradviz.app.demos import list_demos
from gradviz.core.capture import named_tensors

from .helpers import LESSONS, run_plain, run_script

DEMOS = list_demos()  # raises DemosMissing where the demo folder is missing or empty


def test_every_lesson_is_compared():
    """An install without its demos must fail here, not compare an empty set."""
    assert {d.name for d in DEMOS} == LESSONS


@pytest.mark.parametrize("demo", DEMOS, ids=[d.name for d in DEMOS])
def test_leaf_gradients_match_plain_pytorch(demo):
    session = run_script(demo.source)
    ours = named_tensors(session.globals)
    theirs = named_tensors(run_plain(demo.source))
    leaves = {n for n, t in theirs.items() if t.is_leaf and t.requires_grad}
    assert leaves == {n for n, t in ours.items() if t.is_leaf and t.requires_grad}
    for name in leaves:
        a, b = ours[name].grad, theirs[name].grad
        if b is None:
            assert a is None, name
        else:
            assert a is not None, name
            torch.testing.assert_close(a, b, msg=f"{demo.name}: {name}.grad differs")
