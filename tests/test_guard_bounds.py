"""The op guard's output bounds (issue 12): every refusal happens before anything is
allocated.

The guard bounds the outputs of common ops from their argument shapes
(:func:`gradviz.core.guards.output_bound`) instead of sizing them on the meta device
(which imports torch._dynamo and sympy: see tests/test_cold_start.py), falling back to
the meta device whenever a bound could reach a limit. These tests hold the bounds:
exact where they must be, never below the real output, and every huge output refused.
"""

from __future__ import annotations

import pytest
import torch

from gradviz.core.guards import (
    WIDEST_ELEMENT,
    AllocationCounter,
    Limits,
    OpGuard,
    broadcast_shape,
    may_cost_work,
    op_macs,
    output_bound,
)
from gradviz.core.session import Session

aten = torch.ops.aten


# --- every refusal still happens, before anything is allocated --------------------


def _refusal(source: str, limits: Limits | None = None) -> str:
    """The refusal of the script's first failing statement (a LimitExceeded or
    SandboxError: an allocation failure in torch would be a RuntimeError)."""
    results = Session(source, limits=limits).run_to_end()
    failed = [r for r in results if not r.ok]
    assert failed, f"not refused: {source!r}"
    error = failed[0].error
    assert error.type in ("LimitExceeded", "SandboxError"), (error.type, error.message)
    return error.message


HUGE = [
    # pointwise: an outer product by broadcasting, 10**12 elements
    ("broadcast-add", "a = torch.ones(10**6, 1)\nb = torch.ones(1, 10**6)\nc = a + b"),
    ("broadcast-where", "c = torch.ones(10**6, 1) > 0\nd = torch.where(c, torch.ones(1, 10**6), 0.0)"),
    ("broadcast-pow", "a = torch.ones(10**6, 1)\nc = a ** torch.ones(10**6)"),
    ("broadcast-mse", "import torch.nn.functional as F\n"
     "l = F.mse_loss(torch.ones(10**6, 1), torch.ones(1, 10**6), reduction='none')"),
    # factories
    ("zeros", "a = torch.zeros(10**6, 10**6)"),
    ("full", "a = torch.full((10**6, 10**6), 1.0)"),
    ("randn", "a = torch.randn(10**6, 10**6)"),
    ("empty", "a = torch.empty(10**12)"),
    ("ones-list", "a = torch.ones([10**4] * 3)"),
    ("new-zeros", "a = torch.ones(2).new_zeros((10**6, 10**6))"),
    ("empty-strided", "a = torch.empty_strided((10**6,), (10**7,))"),
    ("zeros-like-expanded", "a = torch.zeros_like(torch.ones(1).expand(10**12))"),
    ("arange", "a = torch.arange(10**12)"),
    ("arange-float", "a = torch.arange(0.0, 1e12, 0.5)"),
    ("arange-far-from-zero", "a = torch.arange(2**62, 2**62 + 10**12)"),
    ("linspace", "a = torch.linspace(0, 1, 10**12)"),
    ("eye", "a = torch.eye(10**6)"),
    ("randperm", "a = torch.randperm(10**12)"),
    # bytes, not elements: 2**28 complex128 elements are 4 GiB
    ("complex-bytes", "a = torch.zeros(2**28, dtype=torch.complex128)"),
    ("complex-promotion", "a = torch.ones(1, dtype=torch.float64).expand(2**28) * 1j"),
    # matrix products
    ("mm-outer", "a = torch.ones(10**6, 1) @ torch.ones(1, 10**6)"),
    ("addmm-outer", "a = torch.addmm(torch.ones(1), torch.ones(10**6, 1), torch.ones(1, 10**6))"),
    ("bmm", "a = torch.bmm(torch.ones(10, 10**5, 1), torch.ones(10, 1, 10**5))"),
    # reading a huge expanded view is refused too
    ("sum-of-expanded", "a = torch.ones(1).expand(10**12).sum()"),
]


@pytest.mark.parametrize("source", [s for _, s in HUGE], ids=[i for i, _ in HUGE])
def test_huge_outputs_are_refused_before_they_are_allocated(source):
    message = _refusal(source)
    assert any(limit in message for limit in ("max_op_elements", "max_op_bytes", "max_op_macs")), (
        message
    )


SMALL_LIMITS = [
    # just over a limit of a million elements: the bound does not skip the exact check
    ("cat", "t = torch.ones(600000)\nc = torch.cat([t, t])", "max_op_elements"),
    ("stack", "t = torch.ones(600000)\nc = torch.stack([t, t])", "max_op_elements"),
    ("index-select",
     "t = torch.ones(1000, 1000)\nc = t.index_select(0, torch.zeros(10**4, dtype=torch.long))",
     "max_op_elements"),
    ("softmax", "t = torch.ones(1000, 1000)\nu = t.expand(2, 1000, 1000).softmax(-1)",
     "max_op_elements"),
    ("mm-work", "a = torch.ones(10, 10**5) @ torch.ones(10**5, 10)", "max_op_macs"),
    # a linalg op whose work grows faster than its input (a norm's is linear: not work)
    ("linalg-inv-work", "a = torch.linalg.inv(torch.eye(200))", "max_op_macs"),
]


@pytest.mark.parametrize(
    "source,limit", [(s, lim) for _, s, lim in SMALL_LIMITS], ids=[i for i, _, _ in SMALL_LIMITS]
)
def test_just_over_a_limit_is_still_refused(source, limit):
    limits = Limits(max_op_elements=10**6, max_op_macs=10**6)
    assert limit in _refusal(source, limits)


def test_bytes_limit_counts_the_widest_element():
    """A bound in elements only skips the check when even 16-byte elements fit."""
    limits = Limits(max_op_bytes=4000)
    assert "max_op_bytes" in _refusal("a = torch.zeros(1001)", limits)
    assert "max_op_bytes" in _refusal("a = torch.ones(501, dtype=torch.float64) + 1", limits)
    ok = Session("a = torch.zeros(1000)\nb = a + 1\nc = b.sum()", limits=limits).run_to_end()
    assert all(r.ok for r in ok)


def test_out_of_the_wrong_shape_is_still_refused():
    message = _refusal("t = torch.zeros(4)\ntorch.add(torch.ones(10), 1.0, out=t)")
    assert "out=" in message
    message = _refusal("t = torch.zeros(4, 1)\ntorch.mul(torch.ones(4, 1), torch.ones(4), out=t)")
    assert "out=" in message
    ok = Session("t = torch.zeros(4)\ntorch.add(torch.ones(4), 1.0, out=t)").run_to_end()
    assert all(r.ok for r in ok)


def test_small_ops_still_count_their_allocation():
    """Skipping the meta kernel skips sizing only: counting new storage is unchanged."""
    session = Session("t = torch.ones(1000, 1000)\nr = torch.relu(t)\nt.relu_()\ns = t.sum()")
    results = session.run_to_end()
    assert all(r.ok for r in results)
    assert [r.allocated_bytes for r in results] == [4_000_000, 4_000_000, 0, 4]


# --- the bound is a bound ----------------------------------------------------------


def _span(t: torch.Tensor) -> int:
    if t.numel() == 0:
        return 0
    return 1 + sum((s - 1) * abs(st) for s, st in zip(t.shape, t.stride()))


def _check_bound(func, *args, **kwargs):
    """Run the op for real (small) and check every output fits output_bound."""
    bound = output_bound(func, args, kwargs)
    assert bound is not None, f"{func} is not bounded"
    out = func(*args, **kwargs)
    outs = [out] if isinstance(out, torch.Tensor) else [o for o in out if isinstance(o, torch.Tensor)]
    for t in outs:
        assert t.numel() <= bound and _span(t) <= bound, (func, tuple(t.shape), bound)
    return bound


SHAPES = [(), (0,), (1,), (3,), (2, 3), (3, 1), (1, 4), (0, 3), (2, 0, 1), (2, 1, 4), (5, 1, 1)]


@pytest.mark.parametrize("a", SHAPES, ids=str)
@pytest.mark.parametrize("b", SHAPES, ids=str)
def test_bound_of_pointwise_ops(a, b):
    x, y = torch.rand(a), torch.rand(b)
    if broadcast_shape([a, b]) is None:
        with pytest.raises(RuntimeError):
            aten.add.Tensor(x, y)
        return
    _check_bound(aten.add.Tensor, x, y)
    _check_bound(aten.mul.Tensor, x, 2.0)
    _check_bound(aten.pow.Tensor_Tensor, x, y)
    _check_bound(aten.where.self, x > 0.5, x, y)
    _check_bound(aten.clamp.Tensor, x, y, None)
    _check_bound(aten.sigmoid.default, y)
    _check_bound(aten.clone.default, x.t() if x.dim() == 2 else x)
    _check_bound(aten.mse_loss.default, x, y, 0)
    _check_bound(aten.frexp.Tensor, y)
    assert torch.broadcast_shapes(a, b) == broadcast_shape([a, b])


@pytest.mark.parametrize("a", SHAPES, ids=str)
def test_bound_of_reductions_and_same_shape_ops(a):
    x = torch.rand(a)
    _check_bound(aten.sum.default, x)
    _check_bound(aten.mean.default, x)
    _check_bound(aten.var_mean.correction, x, None, keepdim=True)
    if x.dim():
        _check_bound(aten.sum.dim_IntList, x, [0], True)
        if x.shape[-1]:
            _check_bound(aten.amax.default, x, [-1])
        _check_bound(aten.std.correction, x, [0])
        if x.shape[0]:
            _check_bound(aten.max.dim, x, 0)
        _check_bound(aten._softmax.default, x, -1, False)
        _check_bound(aten._log_softmax.default, x, 0, False)
        if x.shape[-1]:
            _check_bound(aten.native_layer_norm.default, x, list(x.shape[-1:]), None, None,
                         1e-5)
    _check_bound(aten._to_copy.default, x, dtype=torch.float64)
    _check_bound(aten.zeros_like.default, x)
    _check_bound(aten.empty_like.default, x.expand(2, *x.shape) if x.dim() else x)
    _check_bound(aten.cat.default, [x.reshape(-1), x.reshape(-1)])
    _check_bound(aten.stack.default, [x, x])
    if x.dim():
        index = torch.tensor([0, 0, 0]) if x.shape[0] else torch.tensor([], dtype=torch.long)
        _check_bound(aten.index_select.default, x, 0, index)


def test_bound_of_matrix_products_and_losses():
    for n, k, m in [(2, 3, 4), (0, 3, 4), (2, 0, 4), (1, 1, 1), (5, 2, 0)]:
        a, b = torch.rand(n, k), torch.rand(k, m)
        _check_bound(aten.mm.default, a, b)
        _check_bound(aten.addmm.default, torch.rand(m), a, b)
        _check_bound(aten.bmm.default, a.expand(3, n, k), b.expand(3, k, m))
        _check_bound(aten.baddbmm.default, torch.rand(1), a.expand(3, n, k), b.expand(3, k, m))
        _check_bound(aten.addbmm.default, torch.rand(1), a.expand(3, n, k), b.expand(3, k, m))
        _check_bound(aten.mv.default, a, torch.rand(k))
    _check_bound(aten.dot.default, torch.rand(3), torch.rand(3))
    logp = torch.rand(5, 3).log_softmax(-1)
    target = torch.tensor([0, 1, 2, 1, 0])
    for reduction in (0, 1, 2):
        _check_bound(aten.nll_loss_forward.default, logp, target, None, reduction, -100)
    _check_bound(aten.native_batch_norm.default, torch.rand(2, 3), None, None, None, None,
                 True, 0.1, 1e-5)
    _check_bound(aten.native_dropout.default, torch.rand(4, 2), 0.5, True)


def test_bound_of_factories():
    _check_bound(aten.zeros.default, [2, 3])
    _check_bound(aten.ones.default, [0, 3])
    _check_bound(aten.full.default, [4], 1.5)
    _check_bound(aten.empty.memory_format, [3, 2])
    _check_bound(aten.randint.low, 0, 5, [3])
    _check_bound(aten.empty_strided.default, [3, 2], [1, 3])
    _check_bound(aten.empty_strided.default, [2, 2], [10, 0])
    _check_bound(aten.new_empty_strided.default, torch.ones(1), [2, 3], [5, 1])
    _check_bound(aten.new_full.default, torch.ones(1), [2, 3], 1.0)
    _check_bound(aten.eye.default, 4)
    _check_bound(aten.eye.m, 3, 5)
    _check_bound(aten.linspace.default, 0, 1, 7)
    _check_bound(aten.logspace.default, 0, 1, 7)
    _check_bound(aten.randperm.default, 9)
    for start, end, step in [(0, 10, 3), (0.0, 1.0, 0.1), (-5, 5, 1), (10, 0, -0.3),
                             (0, 1, 1e-3), (1e15, 1e15 + 50, 1.0), (2**53, 2**53 + 7, 1), (2**60, 2**60 + 100, 1),
                             (0.1, 0.7, 0.1), (0, 0, 1)]:
        _check_bound(aten.arange.start_step, start, end, step)
        if start == 0:
            _check_bound(aten.arange.default, end)
    assert output_bound(aten.arange.start_step, (0, float("inf"), 1), {}) is None
    assert output_bound(aten.zeros.default, ([-1, 3],), {}) is None
    assert output_bound(aten._local_scalar_dense.default, (torch.ones(()),), {}) == 0


def test_unknown_ops_are_not_bounded():
    """Ops outside the known families go to the meta device, as before."""
    for func, args in [
        (aten.repeat.default, (torch.ones(2), [10**6])),
        (aten.expand_copy.default, (torch.ones(1), [10**6])),
        (aten.convolution.default, (torch.ones(1, 1, 3, 3), torch.ones(1, 1, 2, 2), None,
                                    [1, 1], [0, 0], [1, 1], False, [0, 0], 1)),
        (aten.nonzero.default, (torch.ones(3),)),
        (aten._foreach_add.List, ([torch.ones(2)], [torch.ones(2)])),
    ]:
        assert output_bound(func, args, {}) is None, func


def test_bounded_ops_that_count_work_count_it_from_their_arguments():
    """The guard skips the meta kernel only when op_macs does not need the output."""
    a, b = torch.ones(3, 4), torch.ones(4, 5)
    assert may_cost_work(aten.mm.default) and not may_cost_work(aten.add.Tensor)
    assert op_macs(aten.mm.default, (a, b), [torch.ones(3, 5)]) == 60
    guard = OpGuard(Limits(max_op_macs=59), AllocationCounter())
    assert not guard._within_limits(aten.mm.default, (a, b), {})
    guard = OpGuard(Limits(max_op_macs=60), AllocationCounter())
    assert guard._within_limits(aten.mm.default, (a, b), {})
    # convolution needs its output's size: always the meta device
    conv = (torch.ones(1, 1, 3, 3), torch.ones(1, 1, 2, 2), None, [1, 1], [0, 0], [1, 1],
            False, [0, 0], 1)
    assert not guard._within_limits(aten.convolution.default, conv, {})


def test_within_limits_needs_room_for_the_widest_element():
    limits = Limits(max_op_elements=10**9, max_op_bytes=1600)
    guard = OpGuard(limits, AllocationCounter())
    assert guard._within_limits(aten.zeros.default, ([1600 // WIDEST_ELEMENT],), {})
    assert not guard._within_limits(aten.zeros.default, ([1600 // WIDEST_ELEMENT + 1],), {})
    guard = OpGuard(Limits(max_op_elements=100), AllocationCounter())
    assert guard._within_limits(aten.add.Tensor, (torch.ones(10, 1), torch.ones(1, 10)), {})
    assert not guard._within_limits(aten.add.Tensor, (torch.ones(11, 1), torch.ones(1, 10)), {})


def test_no_dtype_is_wider_than_the_widest_element():
    dtypes = {v for v in vars(torch).values() if isinstance(v, torch.dtype)}
    assert max(d.itemsize for d in dtypes) <= WIDEST_ELEMENT
