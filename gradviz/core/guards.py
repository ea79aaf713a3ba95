"""Per-op resource guard and allocation counter, as a TorchDispatchMode.

Every ATen op a statement runs passes through :class:`OpGuard` below autograd.
Before the op runs, its output shapes are worked out on the ``meta`` device
(shape inference without memory) so that ``torch.empty(10**12)`` or an outer
product of two long vectors is refused before a byte is allocated; inputs are
checked too, so an expanded view of 10**12 elements cannot be read. After the
op runs, outputs whose storage is new (not a view of an input, not written in
place) are counted: that is "bytes allocated by the statement", the figure the
memory panel shows (scenario 8: ``torch.relu(t)`` on 10000x10000 float32
allocates 400,000,000 bytes, ``torch.relu_(t)`` allocates 0).
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass, field
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten, tree_map

from .errors import LimitExceeded, SandboxError

GiB = 1024**3


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


def op_macs(func: Any, args: tuple, flat_out: list[Any]) -> int:
    """Multiply-adds an op will do, for the ops whose work outgrows their output.

    Elementwise ops and reductions do work in proportion to the elements the
    size guard already bounds; these do not.
    """
    name = func.overloadpacket.__name__
    out = next((t for t in flat_out if isinstance(t, torch.Tensor)), None)
    if out is None:
        return 0
    try:
        if name in ("mm", "addmm", "bmm", "baddbmm", "addbmm"):
            a, b = (args[0], args[1]) if name in ("mm", "bmm") else (args[1], args[2])
            return _numel(a) * int(b.shape[-1])
        if name in ("convolution", "_convolution", "convolution_overrideable"):
            inp, weight, transposed = args[0], args[1], bool(args[6]) if len(args) > 6 else False
            per = _numel(weight) // max(int(weight.shape[0]), 1)
            return (_numel(inp) if transposed else out.numel()) * per
        if "pool" in name and len(args) > 1 and isinstance(args[1], (list, tuple)):
            return out.numel() * max(math.prod(int(k) for k in args[1]), 1)
        if name in ("_cdist_forward", "_euclidean_dist"):
            return out.numel() * int(args[0].shape[-1])
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

    def _check_outputs(self, func: Any, args: tuple, kwargs: dict, flat_args: list[Any]) -> None:
        has_tensor = any(isinstance(a, torch.Tensor) for a in flat_args)
        takes_device = any(a.name == "device" for a in func._schema.arguments)
        if not has_tensor and not takes_device:
            return  # nothing to size: no tensor in, and not a factory
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

    def _check_out_shapes(self, func: Any, args: tuple, kwargs: dict, outs: list[Any]) -> None:
        """``out=`` must already have the result's shape. PyTorch resizes a mismatched
        out tensor by setting its sizes before growing its storage: when the growth
        fails (a numpy-shared storage cannot grow) the tensor is left larger than its
        memory, and the next op on it reads and writes out of bounds."""
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
