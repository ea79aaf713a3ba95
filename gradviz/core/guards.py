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

Ops whose output size depends on their inputs' values (nonzero, masked_select,
unique, repeat_interleave, ...) are sized from those values before they run
(:func:`data_dependent_sizes`); work is counted as the op really does it
(factorizations, a matrix exponential's squarings: :func:`op_macs`); resident memory
is read again whenever the ops since the last reading allocated
``PROCESS_SAMPLE_BYTES``, and before an op that would take the process past its cap.
The integer tensors that native kernels use as memory offsets are checked below the
guard, on every call (:func:`install_offset_checks`).

The guard must not change the graph it shows: a few composite ops decide differently
while any dispatch mode is enabled (reshape picks view over _reshape_alias), so while
a guard is entered they decide as plain PyTorch does (:func:`enter_fidelity_kernels`),
and what the mode hides from autograd's version counters is put back.
"""

from __future__ import annotations

import gc
import math
import os
import re
import sys
import threading
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


#: what a shared script may hold, on top of what the process held when its session
#: began (torch and gradviz: ~0.25 GB in the kernel, 0.8 GB with CUDA). The largest
#: lesson (the in-place one: three 400 MB tensors) needs 1.2 GB of it; a shared
#: script holding more than this is taking the reader's machine, not teaching (the red
#: team's 60 lists of 80 MB held 4.8 GB under the item caps). The user's own scripts run
#: in trusted mode, which has no such cap.
RESTRICTED_PROCESS_BYTES = 4 * GiB


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
    #: many; None = RESTRICTED_PROCESS_BYTES, or 60% of physical memory where that is
    #: less (Linux), so the machine never starts swapping
    max_process_bytes: int | None = None

    #: the process's resident memory when these limits were first read (torch and
    #: gradviz themselves): the script's RESTRICTED_PROCESS_BYTES come on top of it
    _baseline: int | None = field(default=None, init=False, repr=False, compare=False)

    def process_cap(self) -> int | None:
        if self.max_process_bytes is not None:
            return self.max_process_bytes
        total = physical_memory()
        if not total:
            return None
        if self._baseline is None:
            self._baseline = resident_bytes() or 0
        return min(int(total * 0.6), self._baseline + RESTRICTED_PROCESS_BYTES)


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
    "convolution_overrideable", "convolution_backward", "conv_tbc", "conv_tbc_backward",
    "_cdist_forward", "_cdist_backward", "_euclidean_dist", "_pdist_forward", "_pdist_backward",
    "_trilinear", "_native_multi_head_attention", "scaled_dot_product_attention",
    "inverse", "cholesky_inverse", "geqrf", "orgqr", "ormqr",
    "mkldnn_rnn_layer", "mkldnn_rnn_layer_backward",
})
#: names the prefixes below catch whose work grows only with their input (a norm, a
#: cross product), or that are views (detach): never counted as work
_LINEAR_OPS = frozenset({
    "linalg_vector_norm", "linalg_cross", "linalg__powsum", "_linalg_check_errors",
    "detach", "detach_", "detach_copy", "linalg_diagonal",
})
_WORK_PREFIXES = ("linalg_", "_linalg_", "cholesky", "lu", "_lu", "svd", "qr",
                  "triangular_solve", "inverse", "det", "slogdet", "logdet",
                  "_scaled_dot_product")

#: factorizations and the like: multiply-adds per matrix, in multiples of m*n*min(m, n)
#: (n**3 for a square matrix). Each is the time the op takes on CPU against a matrix
#: product of the same size (measured with torch 2.13 on n = 1000, rounded up), so
#: max_op_macs bounds their time as it bounds a matrix product's: an eigendecomposition
#: of a 1000x1000 matrix takes as long as some 80 products of that size.
_FACTORIZATIONS: dict[str, int] = {
    "linalg_eig": 80, "linalg_eigvals": 80, "_linalg_eigvals": 80,
    "_linalg_eigh": 8, "linalg_eigh": 8, "linalg_eigvalsh": 8,
    "_linalg_svd": 10, "linalg_svd": 10, "linalg_svdvals": 10, "svd": 10,
    "linalg_pinv": 12, "linalg_matrix_rank": 10,
    "linalg_inv_ex": 2, "linalg_inv": 2, "inverse": 2, "cholesky_inverse": 2,
    "linalg_lstsq": 2, "linalg_qr": 2, "geqrf": 2, "linalg_householder_product": 2,
    "orgqr": 2,
    "_linalg_det": 1, "linalg_det": 1, "det": 1, "_linalg_slogdet": 1,
    "linalg_slogdet": 1, "slogdet": 1, "logdet": 1,
    "linalg_lu_factor_ex": 1, "linalg_lu_factor": 1, "linalg_lu": 1, "lu_unpack": 1,
    "linalg_cholesky_ex": 1, "linalg_cholesky": 1, "cholesky": 1,
    "linalg_ldl_factor_ex": 1, "linalg_ldl_factor": 1,
}
#: solves against a right-hand side B (n x k): (index of the n x n matrix or factor,
#: index of B, whether the op factorizes the matrix first: n**3 more)
_SOLVES: dict[str, tuple[int, int, bool]] = {
    "_linalg_solve_ex": (0, 1, True), "linalg_solve": (0, 1, True),
    "linalg_solve_ex": (0, 1, True),
    "linalg_lu_solve": (0, 2, False), "lu_solve": (1, 0, False),
    "cholesky_solve": (1, 0, False), "_cholesky_solve_helper": (1, 0, False),
    "linalg_solve_triangular": (0, 1, False), "triangular_solve": (1, 0, False),
    "linalg_ldl_solve": (0, 2, False), "ormqr": (0, 2, False),
}
#: matrix products a matrix exponential takes besides its squarings (degree-18 Taylor
#: polynomial, evaluated as torch does); the squarings depend on the matrix's norm
#: (see OpGuard._matrix_exp_squarings)
MATRIX_EXP_PRODUCTS = 8


#: pointwise ops whose kernel costs far more than a multiply-add per element, in
#: multiply-adds per element: time per element with torch 2.13 on CPU (2**22 elements)
#: over a matrix product's time per multiply-add on the same machine (about 0.03 ns),
#: rounded up. zeta of 2**29 elements took 140 s where the size guard let it through.
_HEAVY_POINTWISE: dict[str, int] = {
    "special_zeta": 10_000, "polygamma": 10_000, "igamma": 10_000, "igammac": 10_000,
    "i0": 2_000, "special_i0e": 2_000, "special_i1": 2_000, "special_i1e": 400,
    "special_modified_bessel_i0": 2_000, "special_modified_bessel_i1": 2_000,
    "special_modified_bessel_k0": 2_000, "special_modified_bessel_k1": 2_000,
    "special_scaled_modified_bessel_k0": 2_000, "special_scaled_modified_bessel_k1": 2_000,
    "special_airy_ai": 2_000, "special_spherical_bessel_j0": 700,
    "special_bessel_j0": 200, "special_bessel_j1": 200, "special_bessel_y0": 200,
    "special_bessel_y1": 200, "digamma": 800, "lgamma": 500, "mvlgamma": 500,
}
#: the orthogonal polynomials of degree n: a recurrence of n steps per element (about
#: 8 ns a step: legendre_polynomial_p of 10 elements at n = 10**12 runs for a day)
_POLYNOMIAL_STEP = 300
#: sorting: multiply-adds per element per halving (sort of 2**24 floats: 3.6 s);
#: unique over rows compares whole rows, a tensor op per comparison (11,000)
_SORT_STEP = 300
_UNIQUE_ROW_STEP = 12_000
#: histc: per bin (2**26 bins: 1.5 s) and per element
_HISTC_BIN = 800



def may_cost_work(func: Any) -> bool:
    """Whether :func:`op_macs` counts work for ``func``: the matrix products,
    convolutions, pools, distances, factorizations and attentions, whose work
    outgrows their output (for every other op it is 0)."""
    name = func.overloadpacket.__name__
    if name in _LINEAR_OPS:
        return False
    return (name in _WORK_OPS or "pool" in name or name.startswith(_WORK_PREFIXES)
            or name in _HEAVY_POINTWISE or "_polynomial_" in name
            or name in _SORTING_OPS)


#: ops that sort (their work grows as n log n of the sorted dimension)
_SORTING_OPS = frozenset({"sort", "argsort", "msort", "_unique", "_unique2", "unique_dim",
                          "unique_dim_consecutive", "histc"})


def _pointwise_elements(args: tuple) -> int:
    shapes = [_dims(a) for a in args if isinstance(a, torch.Tensor)]
    shape = broadcast_shape(shapes) if shapes else None
    return math.prod(shape) if shape is not None else max((_numel(a) for a in args), default=0)


def _largest_degree(n: Any) -> int:
    if isinstance(n, torch.Tensor):
        if n.numel() == 0:
            return 0
        values, _ = _compact(n)
        with torch.no_grad():
            low, high = torch.aminmax(values.to(torch.float64))
        largest = max(abs(float(low)), abs(float(high)))
    else:
        largest = abs(float(n))
    return int(min(largest, 2.0**62)) if math.isfinite(largest) else 1 << 62


def _sorting_macs(name: str, args: tuple) -> int:
    t = args[0] if args and isinstance(args[0], torch.Tensor) else None
    if t is None or t.numel() == 0:
        return 0
    n = t.numel()
    if name == "histc":
        bins = int(args[1]) if len(args) > 1 and isinstance(args[1], int) else 100
        return bins * _HISTC_BIN + n * 32
    if name in ("unique_dim", "unique_dim_consecutive"):
        dim = int(args[1]) % max(t.dim(), 1) if len(args) > 1 else 0
        rows = int(t.shape[dim]) if t.dim() else 1
        width = n // max(rows, 1)
        return rows * max(rows.bit_length(), 1) * max(width, 1) * _UNIQUE_ROW_STEP
    if name in ("_unique", "_unique2"):
        along = n
    else:
        dim = args[1] if len(args) > 1 and isinstance(args[1], int) else -1
        along = int(t.shape[dim]) if t.dim() else 1
    return n * max(along.bit_length(), 1) * _SORT_STEP


def op_macs(func: Any, args: tuple, flat_out: list[Any]) -> int:
    """Multiply-adds an op will do, for the ops whose work outgrows their output.

    Elementwise ops and reductions do work in proportion to the elements the
    size guard already bounds; these do not.
    """
    out = next((t for t in flat_out if isinstance(t, torch.Tensor)), None)
    if out is None:
        return 0
    return _macs(func, args, out.numel()) or 0


def _distance_weight(p: Any, backward: bool, pairs: bool = False) -> int:
    """Cost of one term of a p-norm distance (cdist, pdist kernels, not the matrix
    product path) in multiply-adds: an elementwise kernel, and for a general p a pow
    per term. Measured with torch 2.13 on 2,000 x 500 against a matrix product of the
    same multiply-adds: cdist with p = 2 without mm 26x, pdist with p = 2 6x, p = 1.5
    about 200x (pdist's backward 550x), rounded up."""
    try:
        p = float(p)
    except (TypeError, ValueError):
        return 256
    if p in (0.0, 1.0, 2.0, math.inf):
        return 8 if pairs else 32
    return 640 if backward else 256


def _matrices(t: Any) -> tuple[int, int, int]:
    """(batch, rows, columns) of a batch of matrices (a vector is one column)."""
    if t.dim() == 1:
        return 1, int(t.shape[0]), 1
    m, n = int(t.shape[-2]), int(t.shape[-1])
    return math.prod(int(s) for s in t.shape[:-2]), m, n


def _solve_macs(name: str, args: tuple) -> int:
    a_at, b_at, factorizes = _SOLVES[name]
    a, b = args[a_at], args[b_at]
    if not isinstance(a, torch.Tensor) or not isinstance(b, torch.Tensor) or a.dim() < 2:
        return 0
    batch_a, m, n = _matrices(a)
    batch_b, _, k = _matrices(b) if b.dim() else (1, 0, 1)
    batch = max(batch_a, batch_b)
    macs = 2 * batch * m * n * max(k, 1)
    if factorizes:
        macs += batch * m * n * min(m, n)
    return macs


def _pool_macs(name: str, args: tuple, out_numel: int | None) -> int | None:
    inp: Any = args[0] if args else None
    if name.startswith(("adaptive_", "_adaptive_")):
        # each output reads a window of about in/out + 1 along each dimension: in + out
        spatial = 3 if "3d" in name else 1 if "1d" in name else 2
        if name.endswith("_backward"):
            inp = args[1]
            out_size = [int(s) for s in args[0].shape[-spatial:]]
        else:
            out_size = [int(s) for s in args[1]]
            spatial = len(out_size)
        in_size = [int(s) for s in inp.shape[-spatial:]]
        planes = math.prod(int(s) for s in inp.shape[:-spatial])
        return planes * math.prod(i + o for i, o in zip(in_size, out_size))
    if name.endswith("_backward"):
        # (grad_output, self, kernel_size, ...): every output's window, once more
        if len(args) > 2 and isinstance(args[2], (list, tuple)) and isinstance(args[0], torch.Tensor):
            return _numel(args[0]) * max(math.prod(int(k) for k in args[2]), 1)
        return 0
    if len(args) > 1 and isinstance(args[1], (list, tuple)):
        if out_numel is None:
            return None
        return out_numel * max(math.prod(int(k) for k in args[1]), 1)
    return 0


def _macs(func: Any, args: tuple, out_numel: int | None) -> int | None:
    """:func:`op_macs` given the elements of the first output; None where that is
    needed and ``out_numel`` is None."""
    if not may_cost_work(func):
        return 0
    name = func.overloadpacket.__name__
    try:
        if name in _HEAVY_POINTWISE:
            weight = _HEAVY_POINTWISE[name]
            if name == "mvlgamma":
                weight *= max(int(args[1]) if len(args) > 1 and isinstance(args[1], int) else 1, 1)
            return _pointwise_elements(args) * weight
        if "_polynomial_" in name:
            n = args[1] if len(args) > 1 else 0
            return _pointwise_elements(args) * max(_largest_degree(n), 1) * _POLYNOMIAL_STEP
        if name in _SORTING_OPS:
            return _sorting_macs(name, args)
        if name in ("mm", "addmm", "bmm", "baddbmm", "addbmm"):
            a, b = (args[0], args[1]) if name in ("mm", "bmm") else (args[1], args[2])
            return _numel(a) * int(b.shape[-1])
        if name in ("convolution", "_convolution", "convolution_overrideable"):
            inp, weight, transposed = args[0], args[1], bool(args[6]) if len(args) > 6 else False
            per = _numel(weight) // max(int(weight.shape[0]), 1)
            if transposed:
                return _numel(inp) * per
            return None if out_numel is None else out_numel * per
        if name == "convolution_backward":
            grad, inp, weight = args[0], args[1], args[2]
            transposed = bool(args[7]) if len(args) > 7 else False
            mask = list(args[10]) if len(args) > 10 else [True, True, True]
            per = _numel(weight) // max(int(weight.shape[0]), 1)
            forward = (_numel(inp) if transposed else _numel(grad)) * per
            return forward * max(int(bool(mask[0])) + int(bool(mask[1])), 1)
        if name in ("mkldnn_rnn_layer", "mkldnn_rnn_layer_backward"):
            # every step multiplies (input, hidden) by the gate weights: T*B*4H*(I+H);
            # the backward does it again for the input and once for the weights
            inp, w_ih, w_hh = args[0], args[1], args[2]
            steps = _numel(inp) // max(int(inp.shape[-1]), 1)
            macs = steps * (_numel(w_ih) + _numel(w_hh))
            return macs * (2 if name.endswith("_backward") else 1)
        if name in ("conv_tbc", "conv_tbc_backward"):
            inp, weight = (args[0], args[1]) if name == "conv_tbc" else (args[1], args[2])
            k, c_in, c_out = (int(s) for s in weight.shape)
            steps, batch = int(inp.shape[0]), int(inp.shape[1])
            macs = (steps + 2 * abs(int(args[-1])) + 1) * batch * c_out * k * c_in
            return macs * (2 if name.endswith("_backward") else 1)
        if "pool" in name:
            return _pool_macs(name, args, out_numel)
        if name in ("_cdist_forward", "_cdist_backward", "_euclidean_dist"):
            x1, x2 = (args[1], args[2]) if name == "_cdist_backward" else (args[0], args[1])
            batch = max(math.prod(int(s) for s in x1.shape[:-2]),
                        math.prod(int(s) for s in x2.shape[:-2]))
            macs = batch * int(x1.shape[-2]) * int(x2.shape[-2]) * int(x1.shape[-1])
            if name != "_euclidean_dist":
                p = args[3] if name == "_cdist_backward" else args[2]
                macs *= _distance_weight(p, backward=False)
            return macs * (2 if name == "_cdist_backward" else 1)
        if name in ("_pdist_forward", "_pdist_backward"):
            x = args[0] if name == "_pdist_forward" else args[1]
            rows = int(x.shape[0])
            at = 1 if name == "_pdist_forward" else 2
            weight = _distance_weight(args[at] if len(args) > at else 2.0,
                                      backward=name == "_pdist_backward", pairs=True)
            return rows * (rows - 1) // 2 * int(x.shape[1]) * weight
        if name in _SOLVES:
            return _solve_macs(name, args)
        if name == "linalg_matrix_exp":
            batch, n, _ = _matrices(args[0])
            return MATRIX_EXP_PRODUCTS * batch * n**3
        if name in _FACTORIZATIONS:
            a = next((t for t in args if isinstance(t, torch.Tensor) and t.dim() >= 2), None)
            if a is None:
                return 0
            batch, m, n = _matrices(a)
            return _FACTORIZATIONS[name] * batch * m * n * min(m, n)
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

#: bytes the ops may allocate before the guard reads the process's resident memory
#: again (it also reads it every 32 ops, for memory that no op allocates)
PROCESS_SAMPLE_BYTES = 64 * 1024**2


def _element_guess(flat_args: list[Any], kwargs: dict) -> int:
    """Bytes of an element of an op's output, as a guess from its arguments (the
    widest tensor argument, or the dtype asked for)."""
    size = max((a.element_size() for a in flat_args if isinstance(a, torch.Tensor)), default=0)
    dtype = kwargs.get("dtype")
    if isinstance(dtype, torch.dtype):
        size = max(size, dtype.itemsize)
    return size or 8


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


#: op -> {argument name: (position, keyword-only, default)}
_ARGUMENTS: dict[Any, dict[str, tuple[int, bool, Any]]] = {}


def _argument(func: Any, args: tuple, kwargs: dict, name: str) -> Any:
    table = _ARGUMENTS.get(func)
    if table is None:
        table = _ARGUMENTS[func] = {
            arg.name: (index, arg.kwarg_only, arg.default_value)
            for index, arg in enumerate(func._schema.arguments)
        }
    found = table.get(name)
    if found is None:
        return None
    index, kwarg_only, default = found
    if kwarg_only or index >= len(args):
        return kwargs.get(name, default)
    return args[index]


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


# --- integer tensors the kernels use as memory offsets ---------------------------------
#
# Some native kernels take the values of an integer tensor as offsets into memory and
# do not check them (torch 2.13, CPU): the backward kernels of max pooling and adaptive
# max pooling (their saved indices), embedding_dense_backward with scale_grad_by_freq
# and the embedding_bag backward kernels (the saved indices, offset2bag and bag sizes),
# ctc_loss forward and backward (the targets and lengths). Each was found by rewriting
# the op's saved integer tensor in a subprocess: a segfault (tests/test_guard_round3.py
# keeps one as a control). A script can rewrite such a tensor after the forward without
# a version counter noticing (a numpy view ``idx.numpy()``, ``.data``,
# ``grad_fn._saved_indices``), or hand the backward another tensor altogether (a
# saved_tensors_hooks unpack hook). Some backward kernels also trust the shapes and the
# layout of what they saved (pooling, batch norm, pdist, weight norm, the oneDNN LSTM
# layer): an unpack hook that returns a tensor of another shape, or an expanded view,
# makes them read or write out of bounds just the same.
#
# So these tensors are checked right before the kernel runs, on the very tensors it
# receives: one min/max reduction (over the stored values: a broadcast dimension is read
# once) and shape comparisons. The autograd engine runs a backward pass outside the op
# guard (gradviz.core.session: with a dispatch mode active the engine would accumulate
# gradients differently), so its ATen calls never reach OpGuard.__torch_dispatch__, and
# a composite op the guard does see runs the native kernels inside it with the guard's
# mode off. The checks are therefore installed below the guard, as Python kernels at the
# dispatcher's BackendSelect key (:func:`install_offset_checks`): every call of these
# ops passes that key, forward or backward, guarded or not, before the CPU kernel. Where
# they could not be installed, the guard runs the same checks itself on the ops it sees.

#: batch of a ctc_loss call the checks accept: its lengths become Python lists of ints
#: on the way to the kernel (8 bytes and more each)
MAX_CTC_BATCH = 1 << 20


def _unchecked(op: str, what: str) -> SandboxError:
    return SandboxError(
        f"refused: {op} {what} (PyTorch does not check it: the kernel would read or "
        "write outside the tensor's memory)"
    )


def _compact(t: torch.Tensor) -> tuple[torch.Tensor, int]:
    """``t`` without its broadcast dimensions (stride 0), and how many times ``t``
    repeats each element of it: a reduction over it reads every stored value once,
    however large the expanded view."""
    repeat = 1
    for dim in range(t.dim() - 1, -1, -1):
        if t.stride(dim) == 0 and t.shape[dim] > 1:
            repeat *= int(t.shape[dim])
            t = t.select(dim, 0)
    return t, repeat


def _value_range(t: torch.Tensor) -> tuple[int, int] | None:
    """(min, max) of an integer tensor, or None where it is empty."""
    if t.numel() == 0:
        return None
    values, _ = _compact(t)
    with torch.no_grad():
        low, high = torch.aminmax(values)
    return int(low), int(high)


def _count_nonzero(t: torch.Tensor) -> int:
    """Nonzero elements of ``t`` (of its broadcast too), without materializing either."""
    if t.numel() == 0:
        return 0
    values, repeat = _compact(t)
    with torch.no_grad():
        return int(torch.count_nonzero(values)) * repeat


def _index_tensor(op: str, name: str, t: Any, low: int, high: int) -> None:
    """``t`` must be an integer tensor whose every value is in [low, high)."""
    if not isinstance(t, torch.Tensor):
        raise _unchecked(op, f"needs {name} as a tensor, got {type(t).__name__}")
    if t.dtype not in (torch.int64, torch.int32):
        raise _unchecked(op, f"got {name} of dtype {t.dtype}, not int64 or int32")
    span = _value_range(t)
    if span is not None and (span[0] < low or span[1] >= high):
        raise _unchecked(op, f"got {name} in [{span[0]}, {span[1]}], outside [{low}, {high})")


def _dense(t: torch.Tensor) -> bool:
    """Whether ``t``'s elements fill exactly ``t.numel()`` slots of its storage (any
    order), all within it: what a kernel that walks its data pointer assumes."""
    if t.numel() == 0:
        return True
    span = _span([int(s) for s in t.shape], [int(s) for s in t.stride()])
    try:
        room = t.untyped_storage().nbytes() // t.element_size() - t.storage_offset()
    except Exception:  # noqa: BLE001
        return False
    return span == t.numel() and room >= span


def _dims(t: Any) -> tuple[int, ...]:
    return tuple(int(s) for s in t.shape) if isinstance(t, torch.Tensor) else ()


def _pool_backward_check(spatial: int, indices: str | None) -> Any:
    """Pooling backward (grad_output, self, ..., [indices]): grad_output and self agree
    on every dimension but the pooled ones, indices have grad_output's shape and point
    into one plane of self."""

    def check(func: Any, args: tuple, kwargs: dict) -> None:
        op = func.overloadpacket.__name__
        grad = _argument(func, args, kwargs, "grad_output")
        self_ = _argument(func, args, kwargs, "self")
        if not isinstance(grad, torch.Tensor) or not isinstance(self_, torch.Tensor):
            return
        if grad.dim() != self_.dim() or grad.dim() < spatial or (
            _dims(grad)[:-spatial] != _dims(self_)[:-spatial]
        ):
            raise _unchecked(op, f"got grad_output of shape {_dims(grad)} for an input of "
                                 f"shape {_dims(self_)}")
        if indices is None:
            return
        idx = _argument(func, args, kwargs, indices)
        if not isinstance(idx, torch.Tensor) or _dims(idx) != _dims(grad):
            raise _unchecked(op, f"got {indices} of shape {_dims(idx)} for grad_output of "
                                 f"shape {_dims(grad)}")
        if not _dense(idx):
            raise _unchecked(op, f"got {indices} that are not laid out densely (the "
                                 "kernel walks their memory as the forward wrote it)")
        plane = math.prod(_dims(self_)[-spatial:])
        _index_tensor(op, indices, idx, 0, plane)

    return check


def _max_unpool_check(func: Any, args: tuple, kwargs: dict) -> None:
    op = func.overloadpacket.__name__
    self_ = _argument(func, args, kwargs, "self")
    idx = _argument(func, args, kwargs, "indices")
    size = _int_list(_argument(func, args, kwargs, "output_size")) or []
    if not isinstance(self_, torch.Tensor) or not isinstance(idx, torch.Tensor):
        return
    if _dims(idx) != _dims(self_):
        raise _unchecked(op, f"got indices of shape {_dims(idx)} for an input of shape "
                             f"{_dims(self_)}")
    _index_tensor(op, "indices", idx, 0, max(math.prod(size), 0))


def _embedding_backward_check(func: Any, args: tuple, kwargs: dict) -> None:
    """embedding_dense_backward / embedding_sparse_backward (grad, indices, num_weights,
    padding_idx, scale_grad_by_freq): every index is a row of the weight."""
    num_weights = _argument(func, args, kwargs, "num_weights")
    _index_tensor(func.overloadpacket.__name__, "indices",
                  _argument(func, args, kwargs, "indices"), 0, int(num_weights))


def _bag_check(op: str, grad: Any, indices: Any, offset2bag: Any, rows: int) -> None:
    """The embedding_bag backward kernels: indices are rows of the weight, offset2bag
    maps each index to a row of grad."""
    _index_tensor(op, "indices", indices, 0, rows)
    if not isinstance(grad, torch.Tensor) or grad.dim() != 2:
        raise _unchecked(op, f"got grad of shape {_dims(grad)}, not (bags, features)")
    if isinstance(offset2bag, torch.Tensor) and offset2bag.numel():
        if offset2bag.numel() < indices.numel() or not offset2bag.is_contiguous():
            raise _unchecked(op, f"got offset2bag of shape {_dims(offset2bag)} for "
                                 f"{indices.numel()} indices")
        _index_tensor(op, "offset2bag", offset2bag, 0, int(grad.shape[0]))


def _embedding_bag_dense_backward_check(func: Any, args: tuple, kwargs: dict) -> None:
    op = func.overloadpacket.__name__
    grad = _argument(func, args, kwargs, "grad")
    indices = _argument(func, args, kwargs, "indices")
    mode = _argument(func, args, kwargs, "mode")
    if mode == 2:
        return  # max: index_select and index_add_ over maximum_indices, both checked
    _bag_check(op, grad, indices, _argument(func, args, kwargs, "offset2bag"),
               int(_argument(func, args, kwargs, "num_weights")))
    bag_size = _argument(func, args, kwargs, "bag_size")
    if mode == 1 and indices.numel() and (
        not isinstance(bag_size, torch.Tensor) or not bag_size.is_contiguous()
        or bag_size.numel() < grad.shape[0]
    ):
        raise _unchecked(op, f"got bag_size of shape {_dims(bag_size)} for "
                             f"{grad.shape[0]} bags")


def _embedding_bag_psw_backward_check(func: Any, args: tuple, kwargs: dict) -> None:
    weight = _argument(func, args, kwargs, "weight")
    rows = int(weight.shape[0]) if isinstance(weight, torch.Tensor) and weight.dim() else 0
    _bag_check(func.overloadpacket.__name__, _argument(func, args, kwargs, "grad"),
               _argument(func, args, kwargs, "indices"),
               _argument(func, args, kwargs, "offset2bag"), rows)


def _lengths(op: str, name: str, value: Any, batch: int) -> tuple[int, int, int]:
    """(min, max, sum) of a ctc length argument (a tensor or a list) of ``batch``
    entries, read without making a Python list of a tensor."""
    if isinstance(value, torch.Tensor):
        if value.dim() > 1 or value.numel() != batch:
            raise SandboxError(f"refused: ctc_loss {name} must have one entry per batch "
                               f"element ({batch}), got shape {_dims(value)}")
        if value.dtype.is_floating_point or value.dtype.is_complex or value.dtype == torch.bool:
            raise SandboxError(f"refused: ctc_loss {name} must be integers")
        span = _value_range(value)
        if span is None:
            return 0, 0, 0
        if span[0] < 0:
            raise SandboxError(f"refused: ctc_loss {name} must not be negative")
        with torch.no_grad():
            # every entry is in [0, max]: max * batch < 2**63, so the sum cannot wrap
            total = int(value.sum()) if span[1] <= (1 << 62) // max(batch, 1) else 1 << 62
        return span[0], span[1], total
    values = list(value or [])
    if len(values) != batch or not all(isinstance(n, int) for n in values):
        raise SandboxError(f"refused: ctc_loss {name} must have one integer per batch "
                           f"element ({batch})")
    if not values:
        return 0, 0, 0
    if min(values) < 0:
        raise SandboxError(f"refused: ctc_loss {name} must not be negative")
    return min(values), max(values), sum(values)


def _ctc_shapes(func: Any, args: tuple, kwargs: dict) -> tuple[int, int, int, int]:
    """Check a ctc_loss call's targets and lengths; (T, N, classes, longest target)."""
    op = func.overloadpacket.__name__
    log_probs = _argument(func, args, kwargs, "log_probs")
    targets = _argument(func, args, kwargs, "targets")
    if not isinstance(log_probs, torch.Tensor) or not isinstance(targets, torch.Tensor):
        raise SandboxError("refused: ctc_loss needs log_probs and targets as tensors")
    if log_probs.dim() not in (2, 3):
        raise SandboxError(f"refused: ctc_loss log_probs must be (T, N, C) or (T, C), got "
                           f"shape {_dims(log_probs)}")
    steps, classes = int(log_probs.shape[0]), int(log_probs.shape[-1])
    batch = int(log_probs.shape[1]) if log_probs.dim() == 3 else 1
    if batch > MAX_CTC_BATCH:
        raise SandboxError(f"refused: ctc_loss over a batch of {batch:,}; gradviz allows "
                           f"{MAX_CTC_BATCH:,}")
    blank = _argument(func, args, kwargs, "blank")
    if not isinstance(blank, int) or not 0 <= blank < classes:
        raise SandboxError(f"refused: ctc_loss blank must be a class index in [0, {classes})")
    _, longest_input, _ = _lengths(op, "input_lengths",
                                   _argument(func, args, kwargs, "input_lengths"), batch)
    if longest_input > steps:
        raise SandboxError(f"refused: ctc_loss input_lengths must be in [0, {steps}]")
    _, longest, total = _lengths(op, "target_lengths",
                                 _argument(func, args, kwargs, "target_lengths"), batch)
    if targets.dim() == 2:
        if targets.shape[0] < batch or longest > targets.shape[1]:
            raise SandboxError("refused: ctc_loss target_lengths do not fit the targets")
    elif targets.dim() == 1:
        if longest > targets.numel() or total > targets.numel():
            raise SandboxError("refused: ctc_loss target_lengths do not fit the targets")
        if targets.numel() > 1 and targets.stride(0) != 1:
            # the kernel finds each sequence at its offset in elements, not in strides
            raise _unchecked(op, "got concatenated targets that are not contiguous")
    else:
        raise SandboxError(f"refused: ctc_loss targets must be (N, S) or concatenated (sum of "
                           f"target_lengths), got shape {_dims(targets)}")
    if targets.dtype not in (torch.int64, torch.int32):
        raise SandboxError(f"refused: ctc_loss targets must be int64 or int32, got {targets.dtype}")
    if not _targets_read_in_range(targets, _argument(func, args, kwargs, "target_lengths"),
                                  batch, total, classes):
        raise SandboxError(
            f"refused: ctc_loss targets must be class indices in [0, {classes}) "
            "(PyTorch does not check them)"
        )
    return steps, batch, classes, longest


def _targets_read_in_range(targets: torch.Tensor, lengths: Any, batch: int, total: int,
                           classes: int) -> bool:
    """Whether every target the kernel reads is in [0, classes): the first
    target_lengths[i] of row i, or the first sum(target_lengths) concatenated ones
    (padding after them may hold anything, as in PyTorch)."""
    span = _value_range(targets)
    if span is None or (span[0] >= 0 and span[1] < classes):
        return True
    if targets.dim() == 1:
        span = _value_range(targets[:total])
        return span is None or (span[0] >= 0 and span[1] < classes)
    rows = targets[:batch]
    if rows.numel() > 1 << 24:
        return False  # too many to mask cheaply: every value must be a class then
    with torch.no_grad():
        counts = lengths if isinstance(lengths, torch.Tensor) else torch.tensor(list(lengths))
        read = torch.arange(rows.shape[1]) < counts.reshape(-1, 1).to(torch.int64)
        span = _value_range(torch.where(read, rows, 0))
    return span is None or (span[0] >= 0 and span[1] < classes)


def _ctc_check(func: Any, args: tuple, kwargs: dict) -> None:
    steps, batch, _, longest = _ctc_shapes(func, args, kwargs)
    if not func.overloadpacket.__name__.endswith("_backward"):
        return
    # the backward also reads what the forward returned, at the sizes above
    grad = _argument(func, args, kwargs, "grad")
    nll = _argument(func, args, kwargs, "neg_log_likelihood")
    alpha = _argument(func, args, kwargs, "log_alpha")
    log_probs = _argument(func, args, kwargs, "log_probs")
    for name, t in (("grad", grad), ("neg_log_likelihood", nll)):
        if not isinstance(t, torch.Tensor) or t.dim() != 1 or t.shape[0] < batch:
            raise _unchecked("_ctc_loss_backward", f"got {name} of shape {_dims(t)} for a "
                                                   f"batch of {batch}")
    if not isinstance(alpha, torch.Tensor) or alpha.dim() != 3 or (
        alpha.shape[0] < batch or alpha.shape[1] < steps or alpha.shape[2] < 2 * longest + 1
    ) or alpha.dtype != log_probs.dtype:
        raise _unchecked("_ctc_loss_backward", f"got log_alpha of shape {_dims(alpha)}, not "
                                               f"({batch}, {steps}, {2 * longest + 1})")


#: LSTM layers run by oneDNN: what each forward made, by the shapes and settings of its
#: arguments, so that the backward can check what it is handed (an opaque workspace
#: among them, whose size only the forward knows)
_RNN_LAYERS: dict[tuple, tuple] = {}
_RNN_LAYERS_KEPT = 4096


def _rnn_key(func: Any, args: tuple, kwargs: dict, weights: tuple[str, ...], cx: str) -> tuple:
    names = (*weights, "hx_", cx)
    get = lambda name: _argument(func, args, kwargs, name)  # noqa: E731
    input_ = get("input")
    return (
        _dims(input_), getattr(input_, "dtype", None), *(_dims(get(n)) for n in names),
        *(get(n) for n in ("reverse", "mode", "hidden_size", "num_layers", "has_biases",
                           "bidirectional", "batch_first", "train")),
        tuple(get("batch_sizes") or ()),
    )


def _rnn_layer_record(func: Any, args: tuple, kwargs: dict, out: Any) -> None:
    key = _rnn_key(func, args, kwargs, ("weight0", "weight1", "weight2", "weight3"), "cx_")
    output, hy, cy, workspace = out
    if len(_RNN_LAYERS) >= _RNN_LAYERS_KEPT:
        _RNN_LAYERS.clear()
    _RNN_LAYERS[key] = (_dims(output), _dims(hy), _dims(cy), workspace.numel())


def _rnn_layer_backward_check(func: Any, args: tuple, kwargs: dict) -> None:
    key = _rnn_key(func, args, kwargs, ("weight1", "weight2", "weight3", "weight4"), "cx_tmp")
    made = _RNN_LAYERS.get(key)
    op = "mkldnn_rnn_layer_backward"
    if made is None:
        raise _unchecked(op, "got tensors no LSTM layer forward made (shapes changed since)")
    output_shape, hy_shape, cy_shape, workspace_numel = made
    get = lambda name: _argument(func, args, kwargs, name)  # noqa: E731
    expected = {"output": output_shape, "hy_": hy_shape, "cy_": cy_shape,
                "grad_output": output_shape, "grad_hy": hy_shape, "grad_cy": cy_shape}
    for name, shape in expected.items():
        t = get(name)
        if (t is not None or not name.startswith("grad")) and _dims(t) != shape:
            raise _unchecked(op, f"got {name} of shape {_dims(t)}, not {shape}")
    workspace = get("workspace")
    if not isinstance(workspace, torch.Tensor) or not workspace.is_contiguous() or (
        workspace.numel() < workspace_numel or workspace.dtype != torch.uint8
    ):
        raise _unchecked(op, f"got a workspace of shape {_dims(workspace)}, not "
                             f"({workspace_numel},)")


def _batch_norm_backward_check(func: Any, args: tuple, kwargs: dict) -> None:
    """native_batch_norm_backward: per-channel tensors of the input's channels."""
    op = func.overloadpacket.__name__
    input_ = _argument(func, args, kwargs, "input")
    grad = _argument(func, args, kwargs, "grad_out")
    if not isinstance(input_, torch.Tensor) or input_.dim() < 2:
        return
    if _dims(grad) != _dims(input_):
        raise _unchecked(op, f"got grad_out of shape {_dims(grad)} for an input of shape "
                             f"{_dims(input_)}")
    channels = int(input_.shape[1])
    train = bool(_argument(func, args, kwargs, "train"))
    needed = ("save_mean", "save_invstd") if train else ("running_mean", "running_var")
    for name in ("weight", "running_mean", "running_var", "save_mean", "save_invstd"):
        t = _argument(func, args, kwargs, name)
        if t is None and name not in needed:
            continue
        if not isinstance(t, torch.Tensor) or (t.numel() != channels and (
            name in needed or name == "weight" or t.numel() != 0
        )):
            raise _unchecked(op, f"got {name} of shape {_dims(t)} for {channels} channels")


def _pdist_backward_check(func: Any, args: tuple, kwargs: dict) -> None:
    """_pdist_backward(grad, self, p, pdist): one distance per pair of self's rows."""
    grad, self_, pdist = args[0], args[1], args[3]
    rows = int(self_.shape[0]) if isinstance(self_, torch.Tensor) and self_.dim() == 2 else -1
    pairs = rows * (rows - 1) // 2
    if rows < 0 or _dims(pdist) != (pairs,) or _dims(grad) != (pairs,):
        raise _unchecked("_pdist_backward", f"got pdist of shape {_dims(pdist)} and grad of "
                                            f"shape {_dims(grad)} for {rows} rows")


def _weight_norm_backward_check(func: Any, args: tuple, kwargs: dict) -> None:
    """_weight_norm_interface_backward(grad_w, saved_v, saved_g, saved_norms, dim)."""
    grad_w, v, g, norms, dim = args[:5]
    op = "_weight_norm_interface_backward"
    if not all(isinstance(t, torch.Tensor) for t in (grad_w, v, g, norms)) or v.dim() == 0:
        raise _unchecked(op, "got a saved tensor that is not a tensor")
    dim = dim % v.dim() if isinstance(dim, int) and -v.dim() <= dim < v.dim() else -1
    if (
        dim < 0 or v.numel() == 0 or _dims(grad_w) != _dims(v) or _dims(g) != _dims(norms)
        or g.numel() != v.shape[dim]
    ):
        raise _unchecked(op, f"got saved_v {_dims(v)}, saved_g {_dims(g)}, saved_norms "
                             f"{_dims(norms)} and grad_w {_dims(grad_w)}, which do not agree")


def _nll_loss_backward_check(func: Any, args: tuple, kwargs: dict) -> None:
    """nll_loss(2d)_backward(grad_output, self, target, weight, reduction, ignore_index,
    total_weight): the kernel writes grad_input at each target's class without checking
    it (the forward checked the targets it was given; a script can rewrite them before
    the backward reads them, through ``.data`` or a numpy view)."""
    op = func.overloadpacket.__name__
    self_ = _argument(func, args, kwargs, "self")
    target = _argument(func, args, kwargs, "target")
    weight = _argument(func, args, kwargs, "weight")
    ignore = _argument(func, args, kwargs, "ignore_index")
    if not isinstance(self_, torch.Tensor) or not isinstance(target, torch.Tensor):
        raise _unchecked(op, "needs self and target as tensors")
    if self_.dim() == 0:
        raise _unchecked(op, "got a 0-dimensional input")
    classes = int(self_.shape[0] if self_.dim() == 1 else self_.shape[1])
    batch = _dims(self_)[:1] + _dims(self_)[2:] if self_.dim() > 1 else ()
    if _dims(target) != batch:
        raise _unchecked(op, f"got target of shape {_dims(target)} for an input of shape "
                             f"{_dims(self_)}")
    if isinstance(weight, torch.Tensor) and weight.numel() != classes:
        raise _unchecked(op, f"got weight of shape {_dims(weight)} for {classes} classes")
    if target.dtype not in (torch.int64, torch.int32, torch.uint8):
        raise _unchecked(op, f"got target of dtype {target.dtype}")
    if target.numel() == 0:
        return
    with torch.no_grad():
        values = target if not isinstance(ignore, int) else torch.where(target == ignore, 0, target)
    _index_tensor(op, "target", values.to(torch.int64) if values.dtype == torch.uint8 else values,
                  0, classes)


def _offset_ops() -> dict[Any, Any]:
    aten = torch.ops.aten
    table = {
        "max_pool2d_with_indices_backward.default": _pool_backward_check(2, "indices"),
        "max_pool3d_with_indices_backward.default": _pool_backward_check(3, "indices"),
        "adaptive_max_pool2d_backward.default": _pool_backward_check(2, "indices"),
        "adaptive_max_pool3d_backward.default": _pool_backward_check(3, "indices"),
        "fractional_max_pool2d_backward.default": _pool_backward_check(2, "indices"),
        "fractional_max_pool3d_backward.default": _pool_backward_check(3, "indices"),
        "avg_pool2d_backward.default": _pool_backward_check(2, None),
        "avg_pool3d_backward.default": _pool_backward_check(3, None),
        "_adaptive_avg_pool2d_backward.default": _pool_backward_check(2, None),
        "_adaptive_avg_pool3d_backward.default": _pool_backward_check(3, None),
        "max_unpool2d.default": _max_unpool_check,
        "max_unpool3d.default": _max_unpool_check,
        "embedding_dense_backward.default": _embedding_backward_check,
        "embedding_sparse_backward.default": _embedding_backward_check,
        "_embedding_bag_dense_backward.default": _embedding_bag_dense_backward_check,
        "_embedding_bag_per_sample_weights_backward.default": _embedding_bag_psw_backward_check,
        "_ctc_loss.default": _ctc_check,
        "_ctc_loss.Tensor": _ctc_check,
        "_ctc_loss_backward.default": _ctc_check,
        "_ctc_loss_backward.Tensor": _ctc_check,
        "mkldnn_rnn_layer_backward.default": _rnn_layer_backward_check,
        "native_batch_norm_backward.default": _batch_norm_backward_check,
        "_pdist_backward.default": _pdist_backward_check,
        "_weight_norm_interface_backward.default": _weight_norm_backward_check,
        "nll_loss_backward.default": _nll_loss_backward_check,
        "nll_loss2d_backward.default": _nll_loss_backward_check,
    }
    out = {}
    for qualified, check in table.items():
        name, overload = qualified.split(".")
        try:
            out[getattr(getattr(aten, name), overload)] = check
        except (AttributeError, RuntimeError):
            continue  # not in this torch
    return out


#: op -> check(func, args, kwargs), raising SandboxError
OFFSET_CHECKS: dict[Any, Any] = _offset_ops()
#: composite ops the guard sees whose native kernel, called inside them, the guard does
#: not see (it runs with the guard's mode off): op -> (check, that native op)
_COMPOSITE_CHECKS: dict[Any, tuple[Any, Any]] = {}
if hasattr(torch.ops.aten, "_embedding_bag_backward"):
    _COMPOSITE_CHECKS[torch.ops.aten._embedding_bag_backward.default] = (
        _embedding_bag_dense_backward_check, torch.ops.aten._embedding_bag_dense_backward.default)

#: op -> record(func, args, kwargs, out), after the op ran (what a backward check needs)
_RECORDS: dict[Any, Any] = {}
if hasattr(torch.ops.aten, "mkldnn_rnn_layer"):
    _RECORDS[torch.ops.aten.mkldnn_rnn_layer.default] = _rnn_layer_record

#: the ops whose checks (or records) run below the guard, at BackendSelect
_INSTALLED: set[Any] = set()
_LIBRARY: Any = None


def _live(args: tuple, kwargs: dict) -> bool:
    """Whether a call works on real memory (not the meta device the guard sizes on)."""
    for value in (*args, *kwargs.values()):
        if isinstance(value, torch.Tensor):
            return value.device.type != "meta"
    return True


def _checked_kernel(func: Any, after: Any) -> Any:
    check = OFFSET_CHECKS.get(func)
    record = _RECORDS.get(func)
    work = func in _WORK_KERNELS

    def kernel(keyset: Any, *args: Any, **kwargs: Any) -> Any:
        metered = work and _METER.guard is not None
        live = (check is not None or record is not None or metered) and _live(args, kwargs)
        if check is not None and live:
            check(func, args, kwargs)
        if metered and live:
            _meter_work(func, args, kwargs)
        out = func.redispatch(keyset & after, *args, **kwargs)
        if record is not None and live:
            record(func, args, kwargs, out)
        return out

    return kernel


# --- backward work: the engine's ops, counted by the guard's limits -------------------
#
# The autograd engine runs outside the guard (gradviz.core.session: under a dispatch
# mode it would accumulate gradients out of place), so the ops of backward formulas
# pass no TorchDispatchMode. Some of them cost far more than the forward op the guard
# let through: a matrix exponential's backward is the exponential of a matrix twice as
# wide (8 times the work), an eigendecomposition's or a cdist's backward runs matrix
# products, a convolution's backward twice its forward. Every op whose work outgrows its
# output (:func:`may_cost_work`) gets a kernel below every mode (at BackendSelect, with
# the offset checks) that, while a backward pass runs outside a guard
# (:class:`metering`), counts it against that guard's limits before it runs: its
# multiply-adds, the statement's deadline and the process's memory. The engine's other
# ops are bounded by the gradients' sizes (checked before the pass) and checked against
# the deadline before each node runs (:func:`meter_tick`, called by
# gradviz.core.backward's pre-hooks).


class _Meter:
    """The guard whose limits hold while the autograd engine runs outside it. One
    statement runs at a time in a kernel; the engine may run a pass on a device thread,
    so this is process-wide, not per thread."""

    guard: OpGuard | None = None
    #: set while the meter's own checks run ops (a norm, a meta kernel)
    busy: bool = False
    ticks: int = 0


_METER = _Meter()


class metering:
    """Count the ops a backward pass runs outside ``guard`` against its limits."""

    def __init__(self, guard: OpGuard | None):
        self.guard = guard
        self.before: OpGuard | None = None

    def __enter__(self) -> None:
        self.before = _METER.guard
        if self.guard is not None:
            install_offset_checks()
            _METER.guard = self.guard

    def __exit__(self, *exc: object) -> None:
        _METER.guard = self.before


def _meter_deadline(guard: OpGuard) -> None:
    if guard.deadline is not None and time.monotonic() > guard.deadline:
        raise LimitExceeded(
            "refused: the statement ran past its time limit during backward (gradviz "
            "limit max_statement_seconds)",
            limit="max_statement_seconds",
        )


def meter_tick() -> None:
    """Before the engine runs a node (a pre-hook): the statement's deadline, and every
    32 nodes the process's memory, against the metering guard's limits."""
    guard = _METER.guard
    if guard is None or _METER.busy or guard.paused:
        return
    _meter_deadline(guard)
    _METER.ticks += 1
    if guard.process_cap is not None and (_METER.ticks & 31) == 0:
        guard._check_process_memory()


def _meter_work(func: Any, args: tuple, kwargs: dict) -> None:
    guard = _METER.guard
    if guard is None or _METER.busy or guard.paused:
        return
    _METER.busy = True
    try:
        _meter_deadline(guard)
        macs = _macs(func, args, None)
        if macs is None:
            try:
                out = func(*tree_map(_to_meta, args), **tree_map(_to_meta, kwargs))
            except Exception:  # noqa: BLE001 - no meta kernel: count it as the largest
                out = None
            macs = op_macs(func, args, tree_flatten(out)[0]) if out is not None else 0
        if macs > guard.limits.max_op_macs:
            raise LimitExceeded(
                f"refused: backward would run {func.overloadpacket.__name__}, "
                f"{macs:,} multiply-adds; the limit is {guard.limits.max_op_macs:,} "
                "(gradviz limit max_op_macs)",
                limit="max_op_macs",
            )
        if func.overloadpacket.__name__ == "linalg_matrix_exp":
            guard._check_matrix_exp(func, args)
        if guard.process_cap is not None:
            guard._check_process_memory()
    finally:
        _METER.busy = False


#: binary pointwise ops: their Scalar overloads call the Tensor one with a wrapped
#: number, which a Python kernel receives as a Python number and cannot pass on; none
#: of them has a derivative whose formula calls them (the guard sizes their forward)
_NOT_METERED = frozenset({"special_zeta", "igamma", "igammac", "histc"}) | {
    # matrix products: a Python kernel on each would cost every linear layer's forward
    # (a GRU's small products: +28% of a script's time), and a backward formula's
    # products multiply matrices of its forward's shapes (an mm's backward repeats its
    # forward's work, which the guard counted; factorizations' backwards are dominated by
    # the factorizations and exponentials that are metered)
    "mm", "addmm", "bmm", "baddbmm", "addbmm",
}


def _work_ops() -> list[Any]:
    """Every ATen op (overload) with a kernel of its own whose work :func:`may_cost_work`
    counts: the ops a backward formula may call that the meter must see."""
    keys = ("CPU", "CUDA", "CompositeExplicitAutograd", "CompositeExplicitAutogradNonFunctional")
    out = []
    for qualified in sorted(torch._C._dispatch_get_all_op_names()):
        if not qualified.startswith("aten::"):
            continue
        name, _, overload = qualified[6:].partition(".")
        if "_polynomial_" in name:
            continue  # binary pointwise (see _NOT_METERED)
        probe = types.SimpleNamespace(overloadpacket=types.SimpleNamespace(__name__=name))
        if not may_cost_work(probe) or name in _NOT_METERED:
            continue
        if not any(torch._C._dispatch_has_kernel_for_dispatch_key(qualified, k) for k in keys):
            continue
        try:
            op = getattr(getattr(torch.ops.aten, name), overload or "default")
        except (AttributeError, RuntimeError):
            continue
        returns = op._schema.returns
        if returns and all(r.alias_info is not None for r in returns):
            continue  # a view (or out=): counted where it was made
        out.append(op)
    return out


#: the ops whose kernels below the guard count their work while a backward pass runs
#: outside it (filled by install_offset_checks)
_WORK_KERNELS: set[Any] = set()


def install_offset_checks() -> bool:
    """Install :data:`OFFSET_CHECKS` (and the records they need) below every dispatch
    mode, once per process; True where they are installed. Each runs on every call of
    its op, guarded or not: an out-of-bounds offset is never valid."""
    global _LIBRARY
    if _LIBRARY is not None:
        return True
    try:
        after = torch._C._dispatch_keyset_full_after(torch._C.DispatchKey.BackendSelect)
        library = torch.library.Library("aten", "IMPL")
    except Exception:  # noqa: BLE001 - a torch without these: the guard checks instead
        return False
    _WORK_KERNELS.update(_work_ops())
    ops = list(dict.fromkeys([*OFFSET_CHECKS, *_RECORDS, *_WORK_KERNELS]))
    for op in ops:
        try:
            library.impl(op, _checked_kernel(op, after), "BackendSelect", with_keyset=True)
        except Exception:  # noqa: BLE001
            continue
        _INSTALLED.add(op)
    _LIBRARY = library
    return True


def remove_offset_checks() -> None:
    """Take the kernels :func:`install_offset_checks` installed out again (tests: the
    guard's own checks then run instead)."""
    global _LIBRARY
    if _LIBRARY is not None:
        _LIBRARY._destroy()
        _LIBRARY = None
    _INSTALLED.clear()
    _WORK_KERNELS.clear()


# --- the guard is invisible to autograd ---------------------------------------------------
#
# Some of PyTorch's composite ops (C++ code that runs at the autograd key and calls other
# ops) choose which ops to call by asking ``at::isTensorSubclassLike``
# (aten/src/ATen/TensorSubclassLikeUtils.h), and that answers true for every tensor
# while any TorchDispatchMode is enabled (``c10::impl::dispatch_mode_enabled()``,
# c10/core/impl/TorchDispatchModeTLS.cpp: modes are set and the Python key is not
# excluded), OpGuard included:
#
# * ``reshape`` (aten/src/ATen/native/TensorShape.cpp, ``reshape_symint``): a
#   non-contiguous tensor that can be viewed in the new shape goes to
#   ``_reshape_alias`` (ReshapeAliasBackward0), but to ``view`` (ViewBackward0) under a
#   mode. ``matmul`` (LinearAlgebra.cpp, ``_matmul_impl``: the batch of a transposed
#   operand is reshaped), ``einsum``, ``flatten``, ``tensordot``, ``reshape_as`` reach it.
# * ``ctc_loss`` with tensor lengths (LossCTC.cpp): plain tensors take the fast path, the
#   lengths read as integer lists, ``_ctc_loss`` (CtcLossBackward0); under a mode, the
#   lengths stay tensors, ``_ctc_loss.Tensor`` (CtcLossBackward1).
#
# The graph on screen must be the one PyTorch builds. While an OpGuard is entered, these
# ops get a Python kernel at the autograd keys (a kernel registered there takes
# precedence over the composite one) that makes the decision as plain PyTorch makes it,
# from the tensors alone, and calls the very op plain PyTorch calls, through the
# dispatcher: the guard still sees and sizes every op it runs (nothing runs with the
# mode hidden). In every other case (no OpGuard, another mode, the guard's own work
# with the Python key excluded, a real subclass) it runs the composite kernel itself.
# The kernels are removed when the last guard is left, so the autograd engine (run
# outside the guard, see gradviz.core.session) and trusted mode never meet them.

_CIA = torch._C.DispatchKey.CompositeImplicitAutograd
_PYTHON_KEY = torch._C.DispatchKey.Python
#: keys that make a tensor subclass-like by itself (TensorSubclassLikeUtils.h)
_SUBCLASS_KEYS = tuple(
    getattr(torch._C.DispatchKey, name)
    for name in ("Python", "FuncTorchGradWrapper", "FuncTorchBatched", "Functionalize",
                 "Sparse", "SparseCsr")
    if hasattr(torch._C.DispatchKey, name)
)
#: the autograd keys the kernels are registered at (the devices gradviz runs on)
_AUTOGRAD_KEYS = ("AutogradCPU", "AutogradCUDA")


def _guard_alone() -> bool:
    """Whether a dispatch mode is enabled now and every mode set is an OpGuard: the
    only case where the guard, and nothing else, changes a composite op's choice."""
    try:
        if torch._C._dispatch_tls_is_dispatch_key_excluded(_PYTHON_KEY):
            return False
        depth = torch._C._len_torch_dispatch_stack()
        if depth == 0:
            return False
        return all(isinstance(torch._C._get_dispatch_stack_at(i), OpGuard)
                   for i in range(depth))
    except Exception:  # noqa: BLE001 - unknown state: PyTorch's own composite decides
        return False


def _plain_tensor(t: Any) -> bool:
    """Whether ``t`` is a tensor that isTensorSubclassLike calls plain without a mode
    (a dense tensor, no Python subclass dispatch, no functorch wrapper, not meta)."""
    if not isinstance(t, torch.Tensor) or t.layout != torch.strided:
        return False
    if t.device.type not in ("cpu", "cuda"):
        return False
    try:
        keys = torch._C._dispatch_keys(t)
    except Exception:  # noqa: BLE001
        return False
    return not any(keys.has(k) for k in _SUBCLASS_KEYS)


def _viewed_geometry(t: torch.Tensor, shape: Any) -> tuple[list[int], list[int]] | None:
    """(sizes, strides) of ``t`` reshaped to ``shape`` as a view, computed as reshape
    computes them (infer_size_dv, then computeStride: the very code ``view`` runs, here
    on a meta tensor of ``t``'s geometry); None where it cannot be a view (reshape
    copies then) or ``shape`` is not valid (reshape raises its own error)."""
    try:
        with torch._C._DisableTorchDispatch():
            meta = torch.empty_strided(tuple(t.shape), tuple(t.stride()), dtype=t.dtype,
                                       device="meta")
            viewed = meta.view(shape)
        return [int(s) for s in viewed.shape], [int(s) for s in viewed.stride()]
    except Exception:  # noqa: BLE001
        return None


def _reshape_kernel(self: Any, shape: Any) -> Any:
    """``aten::reshape`` at the autograd keys: ``_reshape_alias`` where plain PyTorch
    calls it (a non-contiguous tensor viewable in ``shape``), the composite otherwise."""
    if (
        _plain_tensor(self) and not self.is_mkldnn and not self.is_contiguous()
        and _guard_alone()
    ):
        geometry = _viewed_geometry(self, shape)
        if geometry is not None:
            return torch.ops.aten._reshape_alias.default(self, *geometry)
    return torch.ops.aten.reshape.default._op_dk(_CIA, self, shape)


def _flatten_kernel(self: Any, start_dim: int = 0, end_dim: int = -1) -> Any:
    """``aten::flatten.using_ints`` at the autograd keys: flatten calls reshape's C++
    function directly (not through the dispatcher), so it decides as reshape does."""
    if (
        _plain_tensor(self) and self.dim() > 0 and not self.is_mkldnn
        and not self.is_contiguous() and _guard_alone()
    ):
        dims = self.dim()
        start = start_dim + dims if start_dim < 0 else start_dim
        end = end_dim + dims if end_dim < 0 else end_dim
        if 0 <= start < end < dims:
            sizes = [int(s) for s in self.shape]
            shape = [*sizes[:start], math.prod(sizes[start:end + 1]), *sizes[end + 1:]]
            geometry = _viewed_geometry(self, shape)
            if geometry is not None:
                return torch.ops.aten._reshape_alias.default(self, *geometry)
    return torch.ops.aten.flatten.using_ints._op_dk(_CIA, self, start_dim, end_dim)


def _linear_kernel(input: Any, weight: Any, bias: Any = None) -> Any:
    """``aten::linear`` at the autograd keys. Where linear does not fuse the bias into
    an addmm (an input other than a matrix, not contiguous), plain PyTorch computes
    ``output = at::matmul(input, weight.t())`` and adds the bias in place,
    ``output.add_(bias)`` (the output's version counter reads one more); under a mode
    it adds out of place (Linear.cpp). The same ops are called here, in that order."""
    if (
        _plain_tensor(bias) and _plain_tensor(input) and _plain_tensor(weight)
        and input.dim() not in (0, 2) and not input.is_mkldnn and _guard_alone()
        and not _has_tangent(bias) and not _linear_fuses(input, weight, bias)
    ):
        output = torch.ops.aten.linear.default(input, weight)  # at::matmul, no bias
        return output.add_(bias)
    return torch.ops.aten.linear.default._op_dk(_CIA, input, weight, bias)


def _linear_fuses(input: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> bool:
    """Whether linear takes a fused path (an addmm on the input flattened to a matrix)
    for these tensors: asked of linear itself, on meta tensors of their geometry (its
    choice depends on their shapes and strides alone; a fused path returns a view)."""
    try:
        with torch._C._DisableTorchDispatch():
            # Asked on tiny CPU tensors of the same rank, contiguity and layout (what
            # linear's choice reads), not meta tensors: linear on meta runs Python
            # decompositions that import sympy (a second, and memory, in a lesson that
            # never needed it: tests/test_cold_start.py)
            n = input.dim()
            small = torch.zeros([2] * max(n, 1), dtype=input.dtype)
            if n == 0:
                small = torch.zeros((), dtype=input.dtype)
            elif not input.is_contiguous():
                small = torch.zeros([2] * (n - 1) + [4], dtype=input.dtype)[..., ::2]
            w = torch.zeros(3, 2, dtype=weight.dtype)
            if weight.dim() == 2 and not weight.is_contiguous():
                w = torch.zeros(2, 3, dtype=weight.dtype).t()
            b = torch.zeros([3] * bias.dim(), dtype=bias.dtype) if bias.dim() <= 1 else None
            if b is None or weight.dim() != 2:
                raise ValueError("an unusual geometry: ask linear on meta tensors")
            out = torch.ops.aten.linear.default._op_dk(_CIA, small, w, b)
        return out._base is not None
    except Exception:  # noqa: BLE001 - an unusual geometry: ask on meta tensors
        pass
    try:
        with torch._C._DisableTorchDispatch():
            metas = [torch.empty_strided(tuple(t.shape), tuple(t.stride()), dtype=t.dtype,
                                         device="meta") for t in (input, weight, bias)]
            out = torch.ops.aten.linear.default._op_dk(_CIA, *metas)
        return out._base is not None
    except Exception:  # noqa: BLE001 - linear raises its own error on the real tensors
        return True


def _has_tangent(t: torch.Tensor) -> bool:
    """Whether ``t`` carries a forward-mode tangent (linear then adds out of place)."""
    try:
        return torch._VF._unpack_dual(t, 0).tangent is not None
    except Exception:  # noqa: BLE001
        return True


#: factories whose kernel fills the fresh tensor in place (``empty`` then ``fill_`` or
#: ``zero_``): one version bump, made at the ADInplaceOrView key
_FILLED_FACTORIES = frozenset({"full", "zeros", "ones"})


class _InComposite(threading.local):
    #: how many of the composites below are running on this thread (under a guard)
    depth = 0


_IN_COMPOSITE = _InComposite()


def _made_by_a_factory_kernel(op: str) -> Any:
    """A composite that makes its output with a factory (``at::zeros`` in one_hot,
    ``at::full`` in pad_sequence and _pad_packed_sequence) and fills it in place.
    Called from C++ without a mode, the factory's own fill bumps the fresh tensor's
    version; under a mode the factory reaches the mode whole and runs with every key
    above Python excluded, so that bump is lost (the output's ``_version`` read one
    less). While such a composite runs under a guard, the guard bumps what these
    factories make, right when they make it (before any view of it is taken)."""
    name, _, overload = op.partition(".")
    func = getattr(getattr(torch.ops.aten, name), overload or "default")

    def kernel(*args: Any, **kwargs: Any) -> Any:
        if not _guard_alone():
            return func._op_dk(_CIA, *args, **kwargs)
        _IN_COMPOSITE.depth += 1
        try:
            return func._op_dk(_CIA, *args, **kwargs)
        finally:
            _IN_COMPOSITE.depth -= 1

    return kernel


def _bump_version(t: torch.Tensor) -> None:
    try:
        torch._C._autograd._unsafe_set_version_counter((t,), (t._version + 1,))
    except Exception:  # noqa: BLE001 - an inference tensor has no version counter
        pass


def _ctc_loss_kernel(*args: Any, **kwargs: Any) -> Any:
    """``aten::ctc_loss.Tensor`` at the autograd keys: plain tensors take PyTorch's fast
    path (lengths as integer lists, ``ctc_loss.IntList``), as they do without a mode."""
    func = torch.ops.aten.ctc_loss.Tensor
    names = ("log_probs", "targets", "input_lengths", "target_lengths")
    tensors = [_argument(func, args, kwargs, n) for n in names]
    lengths = tensors[2:]
    if (
        all(_plain_tensor(t) for t in tensors) and _guard_alone()
        and all(t.numel() <= MAX_CTC_BATCH for t in lengths)
    ):
        for name, t in zip(names[2:], lengths):
            if t.dtype.is_floating_point or t.dtype.is_complex or t.dtype == torch.bool:
                raise RuntimeError(f"{name} must be integral")
        as_lists = [t.to(torch.device("cpu"), torch.long).contiguous().tolist() for t in lengths]
        return torch.ops.aten.ctc_loss.IntList(
            tensors[0], tensors[1], *as_lists,
            *(_argument(func, args, kwargs, n) for n in ("blank", "reduction", "zero_infinity")),
        )
    return func._op_dk(_CIA, *args, **kwargs)


#: composite op -> its kernel at the autograd keys while a guard is entered
_FIDELITY_KERNELS: dict[str, Any] = {
    "reshape": _reshape_kernel,
    "ctc_loss.Tensor": _ctc_loss_kernel,
    "flatten.using_ints": _flatten_kernel,
    "linear": _linear_kernel,
    "one_hot": _made_by_a_factory_kernel("one_hot"),
    "pad_sequence": _made_by_a_factory_kernel("pad_sequence"),
    "_pad_packed_sequence": _made_by_a_factory_kernel("_pad_packed_sequence"),
}
_fidelity_library: Any = None
_fidelity_users = 0


def enter_fidelity_kernels() -> None:
    """Install the kernels above (the first guard entered does; each enter is matched
    by a :func:`leave_fidelity_kernels`)."""
    global _fidelity_library, _fidelity_users
    _fidelity_users += 1
    if _fidelity_library is not None:
        return
    try:
        library = torch.library.Library("aten", "IMPL")
    except Exception:  # noqa: BLE001 - a torch without Python kernels: graphs may differ
        return
    for op, kernel in _FIDELITY_KERNELS.items():
        for key in _AUTOGRAD_KEYS:
            try:
                library.impl(op, kernel, key)
            except Exception:  # noqa: BLE001
                continue
    _fidelity_library = library


def leave_fidelity_kernels() -> None:
    global _fidelity_library, _fidelity_users
    _fidelity_users = max(_fidelity_users - 1, 0)
    if _fidelity_users == 0 and _fidelity_library is not None:
        library, _fidelity_library = _fidelity_library, None
        library._destroy()


# --- ops whose output size depends on their inputs' values ------------------------------
#
# nonzero, masked_select, unique, bincount, repeat_interleave, boolean indexing and a
# few more have no meta kernel: their output size is known only from the values of
# their inputs. Each is sized here before it runs, from a bound on its arguments'
# shapes where that bound is within the limits, otherwise from one cheap pass over the
# values (a count or a min/max, run with the guard paused), so that neither the output
# nor a temporary the kernel makes on the way is allocated before a refusal.


def _fits(limits: Limits, elements: int, nbytes: int) -> bool:
    return elements <= limits.max_op_elements and nbytes <= limits.max_op_bytes


def _itemsize(t: Any) -> int:
    return t.element_size() if isinstance(t, torch.Tensor) else 8


def _mask_indices(func: Any, args: tuple, kwargs: dict, limits: Limits) -> tuple[list, list, int]:
    """For indexing with boolean masks: the shapes of the index tensors once each mask
    is turned into its nonzero positions, the nonzero temporaries that makes, and the
    elements of self's dimensions that are not indexed."""
    self_ = _argument(func, args, kwargs, "self")
    indices = _argument(func, args, kwargs, "indices") or []
    shapes: list[tuple[int, ...]] = []
    temps: list[tuple[int, int]] = []
    indexed: set[int] = set()
    position = 0
    for idx in indices:
        if idx is None:
            position += 1
            continue
        if idx.dtype in (torch.bool, torch.uint8):
            count = idx.numel()
            if not _fits(limits, count * max(idx.dim(), 1), count * max(idx.dim(), 1) * 8):
                count = _count_nonzero(idx)
            temps.append((count * idx.dim(), count * idx.dim() * 8))
            shapes.append((count,))
            indexed.update(range(position, position + idx.dim()))
            position += idx.dim()
        else:
            shapes.append(_dims(idx))
            indexed.add(position)
            position += 1
    rest = math.prod(int(s) for d, s in enumerate(self_.shape) if d not in indexed)
    return shapes, temps, rest


#: the ops data_dependent_sizes knows
DATA_DEPENDENT_OPS = frozenset({
    "nonzero", "masked_select", "index", "_unsafe_index", "index_put", "index_put_",
    "_index_put_impl", "_index_put_impl_", "_unsafe_index_put", "_unique", "_unique2",
    "unique_dim", "unique_consecutive", "unique_dim_consecutive", "repeat_interleave",
    "bincount", "histogram", "_histogramdd_bin_edges", "_histogramdd_from_bin_cts",
    "_pack_padded_sequence", "_ctc_loss", "linalg_lstsq",
})


def data_dependent_sizes(
    func: Any, args: tuple, kwargs: dict, limits: Limits
) -> list[tuple[int, int]] | None:
    """(elements, bytes) of each output and large temporary of ``func``, for the ops
    whose output size depends on the values of their inputs; None for every other op
    (and where the arguments are not what the op takes: it refuses them itself)."""
    name = func.overloadpacket.__name__
    get = lambda n: _argument(func, args, kwargs, n)  # noqa: E731
    try:
        if name == "nonzero":
            self_ = get("self")
            dims = self_.dim()
            count = self_.numel()
            if not _fits(limits, count * dims, count * dims * 8):
                count = _count_nonzero(self_)
            return [(count * dims, count * dims * 8)]
        if name == "masked_select":
            self_, mask = get("self"), get("mask")
            shape = broadcast_shape([_dims(self_), _dims(mask)])
            if shape is None:
                return None
            total = math.prod(shape)
            count = total
            if not _fits(limits, count, count * _itemsize(self_)):
                count = _count_nonzero(mask) * (total // mask.numel()) if mask.numel() else 0
            # the parallel kernel keeps the mask and its prefix sum as int64, expanded
            return [(count, count * _itemsize(self_)), (total, total * 8), (total, total * 8)]
        if name in ("index", "_unsafe_index"):
            indices = get("indices") or []
            if not any(isinstance(i, torch.Tensor) and i.dtype in (torch.bool, torch.uint8)
                       for i in indices):
                return None  # integer indices only: the meta kernel sizes it
            shapes, temps, rest = _mask_indices(func, args, kwargs, limits)
            count = _broadcast_bound(shapes) * rest if shapes else rest
            return [(count, count * _itemsize(get("self"))), *temps]
        if name in ("index_put", "index_put_", "_index_put_impl", "_index_put_impl_",
                    "_unsafe_index_put"):
            indices = get("indices") or []
            if not any(isinstance(i, torch.Tensor) and i.dtype in (torch.bool, torch.uint8)
                       for i in indices):
                return None
            _, temps, _ = _mask_indices(func, args, kwargs, limits)
            self_ = get("self")
            made = [] if name.endswith("_") else [(self_.numel(), self_.numel() * _itemsize(self_))]
            return [*made, *temps]
        if name in ("_unique", "_unique2", "unique_dim", "unique_consecutive",
                    "unique_dim_consecutive"):
            self_ = get("self")
            n = self_.numel()
            # values, inverse and counts: each at most one entry per element (the sort
            # inside keeps a copy and its int64 permutation too)
            return [(n, n * _itemsize(self_)), (n, n * 8), (n, n * 8)]
        if name == "repeat_interleave" and isinstance(get("repeats"), torch.Tensor):
            repeats = get("repeats")
            width = _itemsize(repeats)
            given = get("output_size")
            given = int(given) if isinstance(given, int) else 0
            span = _value_range(repeats) if repeats.dim() <= 1 else None
            if span is None or span[0] < 0:
                return [(given, given * width)]  # empty, or refused by the op itself
            bound = span[1] * repeats.numel()
            if _fits(limits, bound, bound * width):
                total = bound
            elif span[1] > limits.max_op_elements:
                total = span[1]
            else:
                with torch.no_grad():
                    total = int(repeats.sum())  # at most 2**29 * 2**29: no wrap
            total = max(total, given)
            return [(total, total * width)]
        if name == "bincount":
            self_ = get("self")
            length = int(get("minlength") or 0)
            span = _value_range(self_) if isinstance(self_, torch.Tensor) else None
            if span is not None:
                if span[0] < 0:
                    return None
                length = max(length, span[1] + 1)
            return [(length, length * 8)]
        if name == "histogram" and isinstance(get("bins"), int):
            bins = int(get("bins"))
            return [(bins, bins * 8), (bins + 1, (bins + 1) * 8)]
        if name in ("_histogramdd_bin_edges", "_histogramdd_from_bin_cts"):
            edges = _int_list(get("bins")) or []
            if name == "_histogramdd_bin_edges":
                return [(b + 1, (b + 1) * 8) for b in edges]
            count = math.prod(edges)
            return [(count, count * 8)]
        if name == "_pack_padded_sequence":
            input_, lengths = get("input"), get("lengths")
            span = _value_range(lengths)
            longest = span[1] if span is not None else 0
            return [(longest, longest * 8), (input_.numel(), input_.numel() * _itemsize(input_))]
        if name == "_ctc_loss":
            steps, batch, _, longest = _ctc_shapes(func, args, kwargs)
            alpha = batch * steps * (2 * longest + 1)
            return [(alpha, alpha * _itemsize(get("log_probs")))]
        if name == "linalg_lstsq":
            a, b = get("self"), get("b")
            batch_a, m, n = _matrices(a)
            batch_b, _, k = _matrices(b)
            count = max(batch_a, batch_b) * max(m, n) * k
            return [(count, count * _itemsize(a))]
    except (AttributeError, IndexError, TypeError, ValueError, RuntimeError):
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
        #: bytes the ops allocated since resident memory was last read
        self.unsampled_bytes = 0
        #: set while torch.from_numpy/as_tensor(ndarray) runs: their lift shares memory
        self.lifting_shared = False
        install_offset_checks()

    def __enter__(self) -> OpGuard:
        out = super().__enter__()
        enter_fidelity_kernels()
        return out

    def __exit__(self, *exc: Any) -> None:
        try:
            leave_fidelity_kernels()
        finally:
            super().__exit__(*exc)

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

    def _refuse_work(self, func: Any, macs: int) -> None:
        name = getattr(func, "__name__", str(func))
        raise LimitExceeded(
            f"refused: {name} would take {macs:,} multiply-adds; the limit is "
            f"{self.limits.max_op_macs:,} (gradviz limit max_op_macs)",
            limit="max_op_macs",
        )

    def _check_work(self, func: Any, args: tuple, flat_out: list[Any]) -> None:
        macs = op_macs(func, args, flat_out)
        if macs > self.limits.max_op_macs:
            self._refuse_work(func, macs)

    def _check_matrix_exp(self, func: Any, args: tuple) -> None:
        """A matrix exponential squares its result once per doubling of the matrix's
        norm (scaling and squaring): up to about a thousand products for a large norm."""
        a = args[0] if args else None
        if not isinstance(a, torch.Tensor) or a.dim() < 2 or a.numel() == 0:
            return
        batch, n, _ = _matrices(a)
        product = batch * n**3
        most = math.ceil(math.log2(n)) + 1100  # the largest finite norm of any dtype
        if (MATRIX_EXP_PRODUCTS + most) * product <= self.limits.max_op_macs:
            return
        with paused(self), torch.no_grad():
            largest = float(torch.linalg.vector_norm(a, float("inf")))
        # torch squares ceil(log2(|A|_1 / theta)) times, theta > 1 and |A|_1 <= n max|a_ij|
        norm = largest * n
        squarings = math.ceil(math.log2(norm)) if math.isfinite(norm) and norm > 1 else 0
        macs = (MATRIX_EXP_PRODUCTS + squarings) * product
        if macs > self.limits.max_op_macs:
            self._refuse_work(func, macs)

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

    def _check_outputs(self, func: Any, args: tuple, kwargs: dict, flat_args: list[Any]) -> int:
        """Refuse an op whose outputs or work would break a limit, before it runs;
        returns about how many bytes its outputs will take."""
        has_tensor = any(isinstance(a, torch.Tensor) for a in flat_args)
        takes_device = any(a.name == "device" for a in func._schema.arguments)
        if not has_tensor and not takes_device:
            return 0  # nothing to size: no tensor in, and not a factory
        macs: int | None = 0
        if may_cost_work(func):
            # from the arguments where it can be: also for ops without a meta kernel
            macs = _macs(func, args, None)
            if macs is not None and macs > self.limits.max_op_macs:
                self._refuse_work(func, macs)
            if func.overloadpacket.__name__ == "linalg_matrix_exp":
                self._check_matrix_exp(func, args)
        bound = output_bound(func, args, kwargs)
        if (
            bound is not None
            and bound <= self.limits.max_op_elements
            and bound * WIDEST_ELEMENT <= self.limits.max_op_bytes
            and macs is not None
        ):
            # no output of this op can reach a limit (see output_bound)
            return bound * _element_guess(flat_args, kwargs)
        try:
            meta_args = tree_map(_to_meta, args)
            meta_kwargs = tree_map(_to_meta, kwargs)
            if not has_tensor:
                meta_kwargs["device"] = torch.device("meta")
            out = func(*meta_args, **meta_kwargs)
        except Exception:
            # No meta kernel (or an op that needs real data): the input check above
            # still bounds what it can read, the ops whose output size depends on their
            # values are sized in data_dependent_sizes; let the real op decide.
            return 0
        flat_out = tree_flatten(out)[0]
        self._check_work(func, args, flat_out)
        predicted = 0
        for index, t in enumerate(flat_out):
            if not isinstance(t, torch.Tensor) or _is_alias_return(func, index):
                continue
            if t.numel() > self.limits.max_op_elements:
                self._refuse(func, "create", t.numel(), self.limits.max_op_elements, "elements")
            nbytes = _storage_bytes(tuple(t.shape), tuple(t.stride()), t.element_size())
            if nbytes > self.limits.max_op_bytes:
                self._refuse(func, "allocate", nbytes, self.limits.max_op_bytes, "bytes")
            predicted += nbytes
        return predicted

    def _check_data_dependent(self, func: Any, sizes: list[tuple[int, int]]) -> int:
        """Refuse an op whose output or temporary, sized from its inputs' values, would
        break a limit; returns the bytes they take together."""
        total = 0
        for elements, nbytes in sizes:
            if elements > self.limits.max_op_elements:
                self._refuse(func, "create", elements, self.limits.max_op_elements, "elements")
            if nbytes > self.limits.max_op_bytes:
                self._refuse(func, "allocate", nbytes, self.limits.max_op_bytes, "bytes")
            total += nbytes
        return total

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

    def _check_process_memory(self, extra: int = 0) -> None:
        """Refuse where the process holds more than its cap, or would with ``extra``
        bytes more (what the caller is about to build: a list of n items is 8n)."""
        rss = resident_bytes()
        self.unsampled_bytes = 0
        if rss is not None and self.process_cap is not None and rss + extra > self.process_cap:
            if extra:
                raise LimitExceeded(
                    f"refused: building {_fmt_bytes(extra)} more while the script holds "
                    f"{_fmt_bytes(rss)} of memory; the limit is {_fmt_bytes(self.process_cap)} "
                    "(gradviz limit max_process_bytes)",
                    limit="max_process_bytes",
                )
            raise LimitExceeded(
                f"refused: the script holds {_fmt_bytes(rss)} of memory; the limit is "
                f"{_fmt_bytes(self.process_cap)} (gradviz limit max_process_bytes)",
                limit="max_process_bytes",
            )

    def _reserve(self, func: Any, nbytes: int) -> None:
        """Before an op that allocates ``nbytes``: resident memory is read again once the
        ops since the last reading (this one included) allocate PROCESS_SAMPLE_BYTES,
        and the op is refused where it would take the process past its cap. So no
        sequence of ops gets further past the cap than that much, and no single op
        starts past it."""
        cap = self.process_cap
        if cap is None or nbytes <= 0 or self.unsampled_bytes + nbytes < PROCESS_SAMPLE_BYTES:
            return
        rss = resident_bytes()
        if rss is None:
            return
        self.unsampled_bytes = 0
        if rss + nbytes > cap:
            name = getattr(func, "__name__", str(func))
            raise LimitExceeded(
                f"refused: {name} would allocate {_fmt_bytes(nbytes)} while the script holds "
                f"{_fmt_bytes(rss)} of memory; the limit is {_fmt_bytes(cap)} (gradviz limit "
                "max_process_bytes)",
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
        offsets, native = OFFSET_CHECKS.get(func), func
        if offsets is None and func in _COMPOSITE_CHECKS:
            offsets, native = _COMPOSITE_CHECKS[func]
        if offsets is not None and native not in _INSTALLED:
            # not checked below the guard (see install_offset_checks): check it here
            with paused(self):
                offsets(func, args, kwargs)
        predicted = 0
        if not is_view:
            sizes = None
            if func.overloadpacket.__name__ in DATA_DEPENDENT_OPS:
                with paused(self):
                    sizes = data_dependent_sizes(func, args, kwargs, self.limits)
            if sizes is not None:
                predicted = self._check_data_dependent(func, sizes)
                macs = _macs(func, args, None)
                if macs is not None and macs > self.limits.max_op_macs:
                    self._refuse_work(func, macs)
            else:
                predicted = self._check_outputs(func, args, kwargs, flat_args)
        self._reserve(func, predicted)

        input_storages = set()
        for arg in flat_args:
            if isinstance(arg, torch.Tensor) and arg.device.type != "meta":
                found = _storage_of(arg)
                if found is not None:
                    input_storages.add(found[0])

        foreach_written = _foreach_written(func, args, kwargs)
        written = _written_bytes(func, args, kwargs) if func._schema.is_mutable else 0
        out = func(*args, **kwargs)
        if _IN_COMPOSITE.depth and func.overloadpacket.__name__ in _FILLED_FACTORIES:
            if isinstance(out, torch.Tensor):
                _bump_version(out)  # see _made_by_a_factory_kernel
        for t, version in foreach_written:
            if t._version == version:
                # the CPU kernels of in-place foreach ops (and CUDA's slow path) apply
                # an in-place op to each tensor, whose version bump a mode loses; the
                # fast CUDA kernels bump it themselves (see _foreach_written)
                _bump_version(t)

        record = _RECORDS.get(func)
        if record is not None and func not in _INSTALLED:
            record(func, args, kwargs, out)
        if not is_view:
            # an op no check above could size: refuse its result now, before the script
            # can build on it
            for t in tree_flatten(out)[0]:
                if isinstance(t, torch.Tensor) and t.numel() > self.limits.max_op_elements:
                    self._refuse(func, "create", t.numel(), self.limits.max_op_elements, "elements")
        self.counter.ops += 1
        new_bytes = 0
        seen: set[int] = set()
        if func.overloadpacket.__name__ == "lift_fresh" and not self.lifting_shared:
            # torch.tensor(data) fills a fresh tensor outside the dispatcher and
            # then lifts it: that storage is new memory of this statement.
            input_storages.clear()
        largest = 0
        for t in tree_flatten(out)[0]:
            if not isinstance(t, torch.Tensor) or t.device.type == "meta":
                continue
            found = _storage_of(t)
            if found is None:
                # no storage to read: a sparse tensor (none at all), or forward AD's
                # zero tangent (a ZeroTensor: a storage object over no memory, whose
                # data pointer PyTorch refuses to give). Nothing to count as new memory.
                # Any other strided tensor that hides its storage is held to the byte
                # limit at the size it spans, as if it were new (it was sized before the
                # op ran too, and its element count just above)
                if not is_view and t.layout == torch.strided and not _is_zero_tensor(t):
                    largest = max(largest, _nominal_bytes(t))
                continue
            ptr, nbytes = found
            if ptr in input_storages or ptr in seen or ptr == 0:
                continue
            seen.add(ptr)
            new_bytes += nbytes
            largest = max(largest, nbytes)
        if new_bytes:
            self.counter.allocated_bytes += new_bytes
            name = func.overloadpacket.__name__
            self.counter.by_op[name] = self.counter.by_op.get(name, 0) + new_bytes
        if self.process_cap is not None:
            # memory written in place counts too: a tensor made by empty() (or a numpy
            # array by np.empty) is not resident until it is written
            self.unsampled_bytes += new_bytes + written
            if self.unsampled_bytes >= PROCESS_SAMPLE_BYTES or (self.counter.ops & 31) == 0:
                self._check_process_memory()
        if largest > self.limits.max_op_bytes and not is_view:
            self._refuse(func, "allocate", largest, self.limits.max_op_bytes, "bytes")
        return out


def _foreach_written(func: Any, args: tuple, kwargs: dict) -> list[tuple[torch.Tensor, int]]:
    """(tensor, version) of each tensor an in-place foreach op (``torch._foreach_mul_``,
    used by clip_grad_norm_ and foreach optimizers) writes. Without a mode, each is
    bumped once (the CPU kernel runs ``t.mul_(...)`` on each, which bumps it at the
    ADInplaceOrView key); under a mode those inner ops run with that key excluded
    (the mode runs an op with every key above Python excluded), so PyTorch would miss
    a later in-place change of a tensor autograd saved, and ``_version`` reads 0."""
    if not func._schema.is_mutable or not func.overloadpacket.__name__.startswith("_foreach_"):
        return []
    written = []
    for arg in func._schema.arguments:
        if arg.alias_info is None or not arg.alias_info.is_write or arg.is_out:
            continue
        value = _argument(func, args, kwargs, arg.name)
        for t in value if isinstance(value, (list, tuple)) else [value]:
            if isinstance(t, torch.Tensor) and not t.is_inference():
                written.append((t, t._version))
    return written


def _written_bytes(func: Any, args: tuple, kwargs: dict) -> int:
    """Bytes of the storages a mutating op writes (in place or out=): pages of a tensor
    made by ``empty`` become resident only when written, so resident memory can grow
    by that much without any op allocating."""
    total = 0
    for arg in func._schema.arguments:
        if arg.alias_info is None or not arg.alias_info.is_write:
            continue
        value = _argument(func, args, kwargs, arg.name)
        for t in value if isinstance(value, (list, tuple)) else [value]:
            if isinstance(t, torch.Tensor) and t.device.type == "cpu" and t.layout == torch.strided:
                found = _storage_of(t)
                if found is not None:
                    total += found[1]
    return total


def _storage_of(t: torch.Tensor) -> tuple[int, int] | None:
    """(data pointer, bytes) of ``t``'s storage, or None where it has none that can be
    read: a sparse tensor has no storage, and forward AD's zero tangents (ZeroTensor,
    ``torch._efficientzerotensor``) have one over no memory, whose data pointer PyTorch
    refuses to give ("Attempted to access the data pointer on an invalid python
    storage"); so does a wrapper tensor subclass."""
    try:
        storage = t.untyped_storage()
        return storage.data_ptr(), storage.nbytes()
    except Exception:  # noqa: BLE001 - any failure to read it means: no storage known
        return None


def _is_zero_tensor(t: torch.Tensor) -> bool:
    """Whether ``t`` is a ZeroTensor (forward AD's zero tangent): all zeros, no memory."""
    try:
        return bool(t._is_zerotensor())
    except Exception:  # noqa: BLE001
        return False


def _nominal_bytes(t: torch.Tensor) -> int:
    """Bytes ``t``'s elements would span in a storage of their own."""
    return _storage_bytes(tuple(int(s) for s in t.shape), tuple(int(s) for s in t.stride()),
                          t.element_size())


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
