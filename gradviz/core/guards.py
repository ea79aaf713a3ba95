"""Per-op resource guard and allocation counter, as a TorchDispatchMode.

Every ATen op a statement runs passes through :class:`OpGuard` below autograd.
Before the op runs, its outputs are sized, so that ``torch.empty(10**12)`` or an
outer product of two long vectors is refused before a byte is allocated: from the
shapes in its arguments where they show the op far from every limit
(:func:`output_bound`: elementwise ops, reductions, factories, matrix products),
otherwise on the ``meta`` device (shape inference without memory). Inputs are
checked too, so an expanded view of 10**12 elements cannot be read. After the
op runs, outputs whose storage is new (not a view of an input, not written in
place) are counted: that is "bytes allocated by the statement", the figure the
memory panel shows (scenario 8: ``torch.relu(t)`` on 10000x10000 float32
allocates 400,000,000 bytes, ``torch.relu_(t)`` allocates 0).
"""

from __future__ import annotations

import gc
import math
import os
import re
import sys
import time
import types
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten, tree_map

from .errors import LimitExceeded, SandboxError

GiB = 1024**3


# --- cold start: no torch._dynamo --------------------------------------------------
#
# torch wraps many of its Python functions in ``torch._disable_dynamo``: every
# ``TorchDispatchMode.__torch_dispatch__`` (OpGuard's included) and the type-promotion
# wrapper of the ``torch._refs`` / ``torch._decomp`` functions that serve as the meta
# kernels of ops such as ``pow`` or ``mean``, which the guard runs to size an output.
# The first call of such a wrapper imports ``torch._dynamo`` (about a second, sympy
# and torch._inductor with it) only to build ``torch._dynamo.disable(fn)``: a call of
# ``fn`` that turns dynamo's frame evaluation off while it runs. Until
# ``torch._dynamo`` is imported there is no frame evaluation to turn off (only dynamo
# installs it, and scripts cannot reach torch.compile, see gradviz.core.surface), so
# the call of ``fn`` itself is the same thing. ``arm_disable_dynamo_wrappers`` gives
# each such wrapper that call (it caches it where it caches the real one), and the
# call builds the real ``disable(fn)`` the moment ``torch._dynamo`` is loaded (by
# something other than a script), so the wrappers behave exactly as before then.


def _disable_dynamo_code() -> types.CodeType | None:
    """The code of torch's ``_disable_dynamo`` wrapper, or None where it is not the
    one this module knows (a torch that works differently is only left slower)."""
    disable = getattr(torch, "_disable_dynamo", None)
    if disable is None:
        return None
    try:
        inner = disable(lambda: None)
    except Exception:
        return None
    code = getattr(inner, "__code__", None)
    if code is None or code.co_freevars != ("fn", "recursive"):
        return None
    return code


_DISABLE_DYNAMO_CODE = _disable_dynamo_code()
#: attribute where _disable_dynamo caches ``torch._dynamo.disable(fn)`` on ``fn``
_CACHE = "__dynamo_disable"
_armed_modules = -1


def _until_dynamo(fn: Any, recursive: bool) -> Any:
    """``fn`` while torch._dynamo is not loaded; ``torch._dynamo.disable(fn)`` after."""

    def call(*args: Any, **kwargs: Any) -> Any:
        dynamo = sys.modules.get("torch._dynamo")
        disable = getattr(dynamo, "disable", None) if dynamo is not None else None
        if disable is None:
            return fn(*args, **kwargs)
        real = disable(fn, recursive, wrapping=False)
        setattr(fn, _CACHE, real)
        return real(*args, **kwargs)

    call._gradviz_until_dynamo = True  # type: ignore[attr-defined]
    return call


def arm_disable_dynamo_wrappers() -> int:
    """Give every ``torch._disable_dynamo`` wrapper made so far a call that does not
    import torch._dynamo (see above); returns how many were armed now.

    Cheap when nothing was imported since the last time (the wrappers are made when
    torch's modules are imported). Frozen objects (``gc.freeze``) are not seen: arm
    before freezing, as the kernel does by running a statement first.
    """
    global _armed_modules
    if _DISABLE_DYNAMO_CODE is None or "torch._dynamo" in sys.modules:
        return 0
    if len(sys.modules) == _armed_modules:
        return 0
    _armed_modules = len(sys.modules)
    armed = 0
    for wrapper in gc.get_referrers(_DISABLE_DYNAMO_CODE):
        if type(wrapper) is not types.FunctionType or wrapper.__closure__ is None:
            continue
        cells = dict(zip(wrapper.__code__.co_freevars, wrapper.__closure__))
        try:
            fn, recursive = cells["fn"].cell_contents, cells["recursive"].cell_contents
        except (KeyError, ValueError):
            continue
        if getattr(fn, _CACHE, None) is not None:
            continue
        if str(getattr(fn, "__module__", "") or "").startswith("torch.optim"):
            # an optimizer imports torch._dynamo anyway (its step() does, directly):
            # left as torch made it, its construction pays for that import where plain
            # Python does, not the script's first opt.step() (a 1 s stall in a stepped
            # training loop)
            continue
        try:
            setattr(fn, _CACHE, _until_dynamo(fn, recursive))
        except (AttributeError, TypeError):
            continue
        armed += 1
    return armed


@dataclass
class Limits:
    """Resource limits for one session. Every refusal names the limit it hit."""

    max_op_bytes: int = 2 * GiB
    max_op_elements: int = 2**29
    #: multiply-adds of one matmul, convolution, pooling or distance op: the size
    #: guard bounds outputs, but a small output can still cost hours of work
    max_op_macs: int = 200_000_000_000
    max_int_bits: int = 1 << 16
    max_str_length: int = 10_000_000
    max_sequence_length: int = 10_000_000
    max_iterations: int = 1_000_000
    max_call_depth: int = 64
    #: a statement, and each phase after it (capture, layout, reply); past it the
    #: kernel's parent kills the kernel (gradviz.runner.GRACE_S later). 25 s leaves
    #: a whole `gradviz run` (start, limit, grace, report) within 35 s
    max_statement_seconds: float = 25.0
    max_source_bytes: int = 1_000_000
    max_ast_depth: int = 80
    #: resident memory of the whole process; each op is capped, but a loop could keep
    #: many; None = 60% of physical memory (Linux), so the machine never starts swapping
    max_process_bytes: int | None = None

    def process_cap(self) -> int | None:
        if self.max_process_bytes is not None:
            return self.max_process_bytes
        total = physical_memory()
        return int(total * 0.6) if total else None


def physical_memory() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def resident_bytes() -> int | None:
    """This process's resident memory (Linux /proc), or None where unknown."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def _fmt_bytes(n: int) -> str:
    if n >= GiB:
        return f"{n / GiB:.1f} GiB"
    return f"{n / 1024**2:.1f} MiB"


def _storage_bytes(shape: tuple[int, ...], stride: tuple[int, ...], itemsize: int) -> int:
    if any(s == 0 for s in shape):
        return 0
    span = 1 + sum((s - 1) * abs(st) for s, st in zip(shape, stride))
    return span * itemsize


def _is_alias_return(func: Any, index: int) -> bool:
    returns = func._schema.returns
    if index >= len(returns):
        return False
    return returns[index].alias_info is not None


def _to_meta(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return torch.empty_strided(
            value.shape, value.stride(), dtype=value.dtype, device="meta"
        )
    if isinstance(value, torch.device):
        return torch.device("meta")
    return value


def _numel(value: Any) -> int:
    return value.numel() if isinstance(value, torch.Tensor) else 0


_WORK_OPS = frozenset({
    "mm", "addmm", "bmm", "baddbmm", "addbmm", "convolution", "_convolution",
    "convolution_overrideable", "_cdist_forward", "_euclidean_dist", "_trilinear",
    "_native_multi_head_attention", "scaled_dot_product_attention",
})
_WORK_PREFIXES = ("linalg_", "_linalg_", "cholesky", "lu", "_lu", "svd", "qr",
                  "triangular_solve", "inverse", "det", "slogdet", "logdet",
                  "_scaled_dot_product")


def may_cost_work(func: Any) -> bool:
    """Whether :func:`op_macs` counts work for ``func``: the matrix products,
    convolutions, pools, distances, factorizations and attentions, whose work
    outgrows their output (for every other op it is 0)."""
    name = func.overloadpacket.__name__
    return name in _WORK_OPS or "pool" in name or name.startswith(_WORK_PREFIXES)


def op_macs(func: Any, args: tuple, flat_out: list[Any]) -> int:
    """Multiply-adds an op will do, for the ops whose work outgrows their output.

    Elementwise ops and reductions do work in proportion to the elements the
    size guard already bounds; these do not.
    """
    out = next((t for t in flat_out if isinstance(t, torch.Tensor)), None)
    if out is None:
        return 0
    return _macs(func, args, out.numel()) or 0


def _macs(func: Any, args: tuple, out_numel: int | None) -> int | None:
    """:func:`op_macs` given the elements of the first output; None where that is
    needed and ``out_numel`` is None."""
    if not may_cost_work(func):
        return 0
    name = func.overloadpacket.__name__
    try:
        if name in ("mm", "addmm", "bmm", "baddbmm", "addbmm"):
            a, b = (args[0], args[1]) if name in ("mm", "bmm") else (args[1], args[2])
            return _numel(a) * int(b.shape[-1])
        if name in ("convolution", "_convolution", "convolution_overrideable"):
            inp, weight, transposed = args[0], args[1], bool(args[6]) if len(args) > 6 else False
            per = _numel(weight) // max(int(weight.shape[0]), 1)
            if transposed:
                return _numel(inp) * per
            return None if out_numel is None else out_numel * per
        if "pool" in name and len(args) > 1 and isinstance(args[1], (list, tuple)):
            if out_numel is None:
                return None
            return out_numel * max(math.prod(int(k) for k in args[1]), 1)
        if name in ("_cdist_forward", "_euclidean_dist"):
            return None if out_numel is None else out_numel * int(args[0].shape[-1])
        if name.startswith(("linalg_", "_linalg_", "cholesky", "lu", "_lu", "svd", "qr",
                            "triangular_solve", "inverse", "det", "slogdet", "logdet")):
            a = next((t for t in args if isinstance(t, torch.Tensor) and t.dim() >= 2), None)
            return _numel(a) * int(a.shape[-1]) if a is not None else 0
        if name == "_trilinear":
            i1, i2 = args[0], args[1]
            return _numel(i1) * max(_numel(i2) // max(int(i2.shape[0]) if i2.dim() else 1, 1), 1)
        if name == "_native_multi_head_attention":
            q = args[0]
            return _numel(q) * (int(q.shape[-2]) * 2 + int(q.shape[-1]) * 4)
        if name.startswith("_scaled_dot_product") or name == "scaled_dot_product_attention":
            q, k = args[0], args[1]
            return 2 * _numel(q) * int(k.shape[-2])
    except (AttributeError, IndexError, TypeError, ValueError):
        return 0
    return 0


# --- output sizes from shapes alone ----------------------------------------------
#
# Sizing an output on the meta device runs the op's meta kernel, and for most ATen
# ops that kernel is Python (torch._meta_registrations, torch._refs): its first call
# imports sympy (0.5-1 s: torch._check and the type-promotion code import it). For
# the ops below, the shapes in the arguments bound the outputs; when that bound is
# under the limits, no output can break them and the meta kernel is not needed.
# Every other op, and every op whose bound reaches a limit, is sized on the meta
# device as before: this only skips work whose answer is known to be "within the
# limits", so the guard refuses exactly what it refused before.

#: bytes of the widest element type (complex128): a bound in elements times this
#: bounds the bytes whatever dtype the op picks
WIDEST_ELEMENT = 16

#: output has exactly the shape in the ``size`` argument, dense
_SIZE_FACTORIES = frozenset({
    "empty", "zeros", "ones", "full", "rand", "randn", "randint",
    "new_empty", "new_zeros", "new_ones", "new_full",
})
#: output has exactly the shape in ``size``, laid out by ``stride``
_STRIDED_FACTORIES = frozenset({"empty_strided", "new_empty_strided"})
#: output has the shape of the first argument, dense
_LIKE_FACTORIES = frozenset({
    "empty_like", "zeros_like", "ones_like", "full_like", "rand_like", "randn_like",
    "randint_like",
})
#: each output has at most as many elements as the largest tensor argument
#: (counting an empty dimension as 1: the mean of an empty batch still has C)
_NO_LARGER = frozenset({
    "_softmax", "_log_softmax", "_softmax_backward_data", "_log_softmax_backward_data",
    "_unsafe_view", "native_dropout", "native_layer_norm", "native_batch_norm",
    "_native_batch_norm_legit", "_native_batch_norm_legit_no_training",
    "nll_loss_forward", "nll_loss_backward", "nll_loss2d_forward", "nll_loss2d_backward",
    "dot", "vdot", "mv", "addmv",
})
#: each output has at most the broadcast shape of the tensor arguments
_BROADCASTING = frozenset({
    "mse_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits",
    "smooth_l1_loss", "huber_loss",
})
#: output has the shape in ``input_sizes``
_GRAD_OF_INDEXING = frozenset({"select_backward", "slice_backward"})
_TENSOR_RETURN = re.compile(r"\bTensor\b")


def _shape_of(value: Any) -> tuple[int, ...] | None:
    if isinstance(value, torch.Tensor):
        return tuple(int(s) for s in value.shape)
    return None


def _int_list(value: Any) -> list[int] | None:
    """A size or stride argument as plain ints, or None where it is anything else."""
    if isinstance(value, int) and not isinstance(value, bool):
        return [value]
    if isinstance(value, (list, tuple)) and all(
        isinstance(v, int) and not isinstance(v, bool) for v in value
    ):
        return list(value)
    return None


def _argument(func: Any, args: tuple, kwargs: dict, name: str) -> Any:
    for index, arg in enumerate(func._schema.arguments):
        if arg.name == name:
            if arg.kwarg_only or index >= len(args):
                return kwargs.get(name, arg.default_value)
            return args[index]
    return None


def _room(shape: tuple[int, ...]) -> int:
    """Elements of ``shape`` counting each empty dimension as 1: at least the
    elements of anything that keeps some of its dimensions."""
    return math.prod(max(s, 1) for s in shape)


def _broadcast_bound(shapes: list[tuple[int, ...]]) -> int:
    """At least the elements of the broadcast of ``shapes``: the product, dimension
    by dimension from the right, of the largest size."""
    total = 1
    for i in range(1, max(len(s) for s in shapes) + 1):
        total *= max(s[-i] for s in shapes if len(s) >= i)
    return total


def broadcast_shape(shapes: list[tuple[int, ...]]) -> tuple[int, ...] | None:
    """The broadcast of ``shapes``, or None where they do not broadcast."""
    out = []
    for i in range(max(len(s) for s in shapes), 0, -1):
        sizes = {s[-i] for s in shapes if len(s) >= i} - {1}
        if len(sizes) > 1:
            return None
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def _span(size: list[int], stride: list[int]) -> int | None:
    if len(size) != len(stride) or any(s < 0 for s in size):
        return None
    if any(s == 0 for s in size):
        return 0
    return 1 + sum((s - 1) * abs(st) for s, st in zip(size, stride))


def _exact(value: Any) -> Fraction | None:
    """A real Scalar argument as an exact fraction; None for anything else."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return Fraction(value)


def _tensor_shapes(values: Any) -> list[tuple[int, ...]]:
    return [tuple(int(s) for s in v.shape) for v in values if isinstance(v, torch.Tensor)]


def output_bound(func: Any, args: tuple, kwargs: dict) -> int | None:
    """An upper bound on the elements the storage of each new output of ``func``
    spans, from the shapes and sizes in its arguments alone; None where this module
    does not know how ``func`` shapes its outputs (or an argument is not what it
    expects), and the op must be sized on the meta device."""
    if not any(_TENSOR_RETURN.search(str(r.type)) for r in func._schema.returns):
        return 0  # returns no tensor (item(), allclose, ...)
    name = func.overloadpacket.__name__
    tags = func.tags
    values = (*args, *kwargs.values())
    try:
        if torch.Tag.pointwise in tags or name in _BROADCASTING:
            # every output has (at most) the broadcast shape of the tensor arguments,
            # dense; pointwise ops take tensors and scalars only
            shapes = _tensor_shapes(values)
            if not shapes or any(isinstance(v, (list, tuple)) for v in values):
                return None
            return _broadcast_bound(shapes)
        if torch.Tag.reduction in tags:
            # each output keeps some of self's dimensions (or 1s in their place)
            shape = _shape_of(args[0]) if args else None
            return _room(shape) if shape is not None else None
        if name in _NO_LARGER:
            shapes = _tensor_shapes(values)
            return max(_room(s) for s in shapes) if shapes else None
        if name == "_to_copy":
            layout = kwargs.get("layout")
            shape = _shape_of(args[0]) if args else None
            if shape is None or layout not in (None, torch.strided):
                return None
            return math.prod(shape)
        if name in ("cat", "stack"):
            # the outputs hold every element of the inputs, once
            tensors = args[0] if args else kwargs.get("tensors")
            if not isinstance(tensors, (list, tuple)) or not all(
                isinstance(t, torch.Tensor) for t in tensors
            ):
                return None
            return sum(t.numel() for t in tensors)
        if name == "index_select":
            self_, index = _argument(func, args, kwargs, "self"), _argument(
                func, args, kwargs, "index")
            if not isinstance(self_, torch.Tensor) or not isinstance(index, torch.Tensor):
                return None
            return _room(tuple(self_.shape)) * max(index.numel(), 1)
        if name in ("mm", "addmm", "bmm", "baddbmm", "addbmm"):
            a, b = (args[0], args[1]) if name in ("mm", "bmm") else (args[1], args[2])
            if not isinstance(a, torch.Tensor) or not isinstance(b, torch.Tensor):
                return None
            if name in ("mm", "addmm"):
                return int(a.shape[0]) * int(b.shape[1]) if a.dim() == b.dim() == 2 else None
            if a.dim() != 3 or b.dim() != 3:
                return None
            rows = int(a.shape[1]) * int(b.shape[2])
            return rows if name == "addbmm" else max(int(a.shape[0]), int(b.shape[0])) * rows
        if name in _SIZE_FACTORIES:
            size = _int_list(_argument(func, args, kwargs, "size"))
            if size is None or any(s < 0 for s in size):
                return None
            return math.prod(size)
        if name in _GRAD_OF_INDEXING:
            size = _int_list(_argument(func, args, kwargs, "input_sizes"))
            if size is None or any(s < 0 for s in size):
                return None
            return math.prod(size)
        if name in _STRIDED_FACTORIES:
            size = _int_list(_argument(func, args, kwargs, "size"))
            stride = _int_list(_argument(func, args, kwargs, "stride"))
            return _span(size, stride) if size is not None and stride is not None else None
        if name in _LIKE_FACTORIES:
            shape = _shape_of(args[0]) if args else None
            return math.prod(shape) if shape is not None else None
        if name in ("linspace", "logspace", "randperm"):
            steps = args[0] if name == "randperm" else _argument(func, args, kwargs, "steps")
            if isinstance(steps, bool) or not isinstance(steps, int) or steps < 0:
                return None
            return steps
        if name == "arange":
            names = [a.name for a in func._schema.arguments]
            start = _exact(_argument(func, args, kwargs, "start")) if "start" in names else 0
            step = _exact(_argument(func, args, kwargs, "step")) if "step" in names else 1
            end = _exact(_argument(func, args, kwargs, "end"))
            if start is None or end is None or step is None or step == 0:
                return None
            # torch counts ceil((end - start) / step) in doubles (exactly for ints):
            # within a few parts in 2**53 of the exact quotient, so this is above it
            quotient = (end - start) / step
            return max(math.ceil(quotient * (1 + Fraction(1, 2**40))), 0) + 1
        if name == "eye":
            n = _argument(func, args, kwargs, "n")
            names = [a.name for a in func._schema.arguments]
            m = _argument(func, args, kwargs, "m") if "m" in names else n
            if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in (n, m)):
                return None
            return n * m
    except (AttributeError, IndexError, TypeError, ValueError, OverflowError):
        return None
    return None


@dataclass
class AllocationCounter:
    """Bytes newly allocated by the ops of one statement."""

    allocated_bytes: int = 0
    ops: int = 0
    by_op: dict[str, int] = field(default_factory=dict)


class _Mutations:
    """How many mutating ops (in-place, out=) ran under any guard: capture re-reads
    saved tensors only after this changes (it never goes down)."""

    count = 0


MUTATIONS = _Mutations()


class OpGuard(TorchDispatchMode):
    """Refuse ops that would break a limit; count new storage allocated by the rest."""

    def __init__(self, limits: Limits, counter: AllocationCounter, deadline: float | None = None):
        super().__init__()
        arm_disable_dynamo_wrappers()
        self.limits = limits
        self.counter = counter
        self.deadline = deadline
        self.paused = 0
        self.process_cap = limits.process_cap()
        #: set while torch.from_numpy/as_tensor(ndarray) runs: their lift shares memory
        self.lifting_shared = False

    def _refuse(self, func: Any, what: str, amount: int, limit: int, unit: str) -> None:
        name = getattr(func, "__name__", str(func))
        if unit == "bytes":
            detail = f"{_fmt_bytes(amount)} ({amount:,} bytes); the limit is {_fmt_bytes(limit)}"
            limit_name = "max_op_bytes"
        else:
            detail = f"{amount:,} elements; the limit is {limit:,}"
            limit_name = "max_op_elements"
        raise LimitExceeded(
            f"refused: {name} would {what} {detail} (gradviz limit {limit_name})",
            limit=limit_name,
        )

    def _check_inputs(self, func: Any, flat_args: list[Any], is_view: bool) -> None:
        if is_view:
            return
        for arg in flat_args:
            if isinstance(arg, torch.Tensor) and arg.numel() > self.limits.max_op_elements:
                self._refuse(func, "read", arg.numel(), self.limits.max_op_elements, "elements")

    def _check_work(self, func: Any, args: tuple, flat_out: list[Any]) -> None:
        macs = op_macs(func, args, flat_out)
        if macs > self.limits.max_op_macs:
            name = getattr(func, "__name__", str(func))
            raise LimitExceeded(
                f"refused: {name} would take {macs:,} multiply-adds; the limit is "
                f"{self.limits.max_op_macs:,} (gradviz limit max_op_macs)",
                limit="max_op_macs",
            )

    def _within_limits(self, func: Any, args: tuple, kwargs: dict) -> bool:
        """True when the shapes in the arguments alone show that no output of the op
        reaches a size limit, and its work (if counted) is under max_op_macs."""
        bound = output_bound(func, args, kwargs)
        if (
            bound is None
            or bound > self.limits.max_op_elements
            or bound * WIDEST_ELEMENT > self.limits.max_op_bytes
        ):
            return False
        macs = _macs(func, args, None)
        return macs is not None and macs <= self.limits.max_op_macs

    def _check_outputs(self, func: Any, args: tuple, kwargs: dict, flat_args: list[Any]) -> None:
        has_tensor = any(isinstance(a, torch.Tensor) for a in flat_args)
        takes_device = any(a.name == "device" for a in func._schema.arguments)
        if not has_tensor and not takes_device:
            return  # nothing to size: no tensor in, and not a factory
        if self._within_limits(func, args, kwargs):
            return  # no output of this op can reach a limit (see output_bound)
        try:
            meta_args = tree_map(_to_meta, args)
            meta_kwargs = tree_map(_to_meta, kwargs)
            if not has_tensor:
                meta_kwargs["device"] = torch.device("meta")
            out = func(*meta_args, **meta_kwargs)
        except Exception:
            # No meta kernel (or an op that needs real data): the input check above
            # still bounds what it can read; let the real op decide.
            return
        flat_out = tree_flatten(out)[0]
        self._check_work(func, args, flat_out)
        for index, t in enumerate(flat_out):
            if not isinstance(t, torch.Tensor) or _is_alias_return(func, index):
                continue
            if t.numel() > self.limits.max_op_elements:
                self._refuse(func, "create", t.numel(), self.limits.max_op_elements, "elements")
            nbytes = _storage_bytes(tuple(t.shape), tuple(t.stride()), t.element_size())
            if nbytes > self.limits.max_op_bytes:
                self._refuse(func, "allocate", nbytes, self.limits.max_op_bytes, "bytes")

    @staticmethod
    def _out_shapes_match(func: Any, args: tuple, kwargs: dict, outs: list[Any]) -> bool:
        """True when ``func`` is pointwise and every out= tensor already has the
        broadcast shape of its inputs: the shape it makes, so nothing is resized (a
        mismatch, or anything else, is sized on the meta device)."""
        if torch.Tag.pointwise not in func.tags:
            return False
        out_names = {a.name for a in func._schema.arguments if a.is_out}
        values = [*args, *(v for k, v in kwargs.items() if k not in out_names)]
        if any(isinstance(v, (list, tuple)) for v in values):
            return False
        shapes = _tensor_shapes(values)
        shape = broadcast_shape(shapes) if shapes else None
        return shape is not None and all(tuple(t.shape) == shape for t in outs)

    def _check_out_shapes(self, func: Any, args: tuple, kwargs: dict, outs: list[Any]) -> None:
        """``out=`` must already have the result's shape. PyTorch resizes a mismatched
        out tensor by setting its sizes before growing its storage: when the growth
        fails (a numpy-shared storage cannot grow) the tensor is left larger than its
        memory, and the next op on it reads and writes out of bounds."""
        if self._out_shapes_match(func, args, kwargs, outs):
            return
        try:
            meta_args = tree_map(_to_meta, args)
            meta_kwargs = tree_map(_to_meta, kwargs)
            func(*meta_args, **meta_kwargs)
        except Exception:
            raise SandboxError(
                f"refused: {func.overloadpacket.__name__}(..., out=...) cannot be sized "
                "before it runs; call it without out= and assign the result"
            ) from None
        meta_outs = [meta_kwargs[a.name] for a in func._schema.arguments
                     if a.is_out and isinstance(meta_kwargs.get(a.name), torch.Tensor)]
        for real, meta in zip(outs, meta_outs):
            if tuple(real.shape) != tuple(meta.shape):
                raise SandboxError(
                    f"refused: out= has shape {tuple(real.shape)} but "
                    f"{func.overloadpacket.__name__} makes {tuple(meta.shape)}; gradviz does "
                    "not let out= resize a tensor (make it the right shape, or assign the "
                    "result)"
                )

    def _check_ctc(self, args: tuple, kwargs: dict) -> None:
        """ctc_loss trusts its targets: a label outside [0, classes) reads out of bounds."""
        names = ("log_probs", "targets", "input_lengths", "target_lengths")
        values = dict(zip(names, args))
        values.update({k: v for k, v in kwargs.items() if k in names})
        log_probs, targets = values.get("log_probs"), values.get("targets")
        if not isinstance(log_probs, torch.Tensor) or not isinstance(targets, torch.Tensor):
            return
        classes = log_probs.shape[-1] if log_probs.dim() else 0
        steps = log_probs.shape[0] if log_probs.dim() else 0
        with paused(self):
            bad = targets.numel() and (
                bool((targets < 0).any()) or bool((targets >= classes).any())
            )
            lengths = []
            for key in ("input_lengths", "target_lengths"):
                v = values.get(key)
                lengths.append(v.tolist() if isinstance(v, torch.Tensor) else list(v or []))
        if bad:
            raise SandboxError(
                f"refused: ctc_loss targets must be class indices in [0, {classes}) "
                "(PyTorch does not check them)"
            )
        inputs, target_lengths = lengths
        if any(not isinstance(n, int) or n < 0 or n > steps for n in inputs):
            raise SandboxError(f"refused: ctc_loss input_lengths must be in [0, {steps}]")
        limit = targets.shape[-1] if targets.dim() == 2 else targets.numel()
        if any(not isinstance(n, int) or n < 0 or n > limit for n in target_lengths) or (
            targets.dim() == 1 and sum(target_lengths) > targets.numel()
        ):
            raise SandboxError("refused: ctc_loss target_lengths do not fit the targets")

    def _check_process_memory(self) -> None:
        rss = resident_bytes()
        if rss is not None and self.process_cap is not None and rss > self.process_cap:
            raise LimitExceeded(
                f"refused: the script holds {_fmt_bytes(rss)} of memory; the limit is "
                f"{_fmt_bytes(self.process_cap)} (gradviz limit max_process_bytes)",
                limit="max_process_bytes",
            )

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[override]
        kwargs = kwargs or {}
        if func._schema.is_mutable:
            MUTATIONS.count += 1
        if self.paused:
            return func(*args, **kwargs)
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise LimitExceeded(
                "refused: the statement ran past its time limit (gradviz limit "
                "max_statement_seconds)",
                limit="max_statement_seconds",
            )
        flat_args = tree_flatten((args, kwargs))[0]
        name = func.overloadpacket.__name__
        if name in ("ctc_loss", "_ctc_loss"):
            self._check_ctc(args, kwargs)
        outs = [
            kwargs[a.name] for a in func._schema.arguments
            if a.is_out and isinstance(kwargs.get(a.name), torch.Tensor)
        ]
        if outs:
            self._check_out_shapes(func, args, kwargs, outs)
        is_view = bool(func._schema.returns) and all(
            _is_alias_return(func, i) for i in range(len(func._schema.returns))
        )
        self._check_inputs(func, flat_args, is_view)
        if not is_view:
            self._check_outputs(func, args, kwargs, flat_args)

        input_storages = set()
        for arg in flat_args:
            if isinstance(arg, torch.Tensor) and arg.device.type != "meta":
                try:
                    input_storages.add(arg.untyped_storage().data_ptr())
                except Exception:
                    pass

        out = func(*args, **kwargs)

        if not is_view:
            # ops with no meta kernel (nonzero, unique, ...) were not sized before they
            # ran: refuse their result now, before the script can build on it
            for t in tree_flatten(out)[0]:
                if isinstance(t, torch.Tensor) and t.numel() > self.limits.max_op_elements:
                    self._refuse(func, "create", t.numel(), self.limits.max_op_elements, "elements")
        self.counter.ops += 1
        if self.process_cap is not None and (self.counter.ops & 31) == 0:
            self._check_process_memory()
        new_bytes = 0
        seen: set[int] = set()
        if func.overloadpacket.__name__ == "lift_fresh" and not self.lifting_shared:
            # torch.tensor(data) fills a fresh tensor outside the dispatcher and
            # then lifts it: that storage is new memory of this statement.
            input_storages.clear()
        for t in tree_flatten(out)[0]:
            if not isinstance(t, torch.Tensor) or t.device.type == "meta":
                continue
            try:
                storage = t.untyped_storage()
            except Exception:
                continue
            ptr = storage.data_ptr()
            if ptr in input_storages or ptr in seen or ptr == 0:
                continue
            seen.add(ptr)
            new_bytes += storage.nbytes()
        if new_bytes:
            self.counter.allocated_bytes += new_bytes
            name = func.overloadpacket.__name__
            self.counter.by_op[name] = self.counter.by_op.get(name, 0) + new_bytes
        return out


class paused:
    """Suspend a guard's checks and counting (printing a tensor is not the script's work)."""

    def __init__(self, guard: OpGuard | None):
        self.guard = guard

    def __enter__(self) -> None:
        if self.guard is not None:
            self.guard.paused += 1

    def __exit__(self, *exc: object) -> None:
        if self.guard is not None:
            self.guard.paused -= 1
