"""Capture the real autograd graph reachable from a set of named tensors.

The walk over ``grad_fn.next_functions`` is iterative (an explicit stack), so
a 10,000-op chain works; torchviz recurses and dies near 2,500.

Node ids must stay the same from one statement to the next so the canvas can
keep positions and mark what is new. Autograd nodes cannot be weakly
referenced, so :class:`IdRegistry` holds them strongly, but only those still
reachable after each capture: a graph the script dropped is released.
"""

from __future__ import annotations

import math
import re
import threading
import time
import weakref
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, fields
from typing import Any

import networkx as nx
import numpy as np
import torch
from torch.nn.parameter import is_lazy

from gradviz.graph.gcpause import paused_gc
from gradviz.graph.graphdata import graph_from_json, graph_to_json  # noqa: F401  (re-exported)

from .modules import ModuleTags

MAX_VALUE_ELEMENTS = 64
MAX_SUMMARY_CHARS = 2_000


@dataclass
class TensorInfo:
    """What the tensor panel shows for one variable."""

    name: str
    shape: list[int]
    dtype: str
    device: str
    value: Any
    requires_grad: bool
    is_leaf: bool
    retains_grad: bool
    grad_fn: str | None
    grad: Any
    #: None for inference tensors, which keep no version counter
    version: int | None
    storage: str | None
    nbytes: int
    node: str | None = None
    kind: str = "tensor"  # or "ndarray" for numpy arrays (shared-memory lessons)

    def to_json(self) -> dict[str, Any]:
        # Shallow on purpose: values are fresh lists already, and asdict's deep
        # copy was a third of snapshot time on big models.
        return {name: getattr(self, name) for name in _TENSOR_INFO_FIELDS}


#: TensorInfo's field names, read once (``fields()`` builds its tuple on every call)
_TENSOR_INFO_FIELDS = tuple(f.name for f in fields(TensorInfo))


@dataclass
class GraphCapture:
    graph: nx.DiGraph
    tensors: dict[str, TensorInfo]
    saved_bytes: int
    live_bytes: int
    node_objects: dict[str, Any] = field(default_factory=dict, repr=False)
    #: what differs from the previous capture, when it was updated in place (see
    #: CaptureCache); None when the graph was built whole
    changes: GraphDelta | None = None
    #: why the walk stopped before the whole graph (node or time budget), or None
    cut: str | None = None


@dataclass
class GraphDelta:
    """Nodes and edges a capture added, changed or removed (ids and (u, v) keys).

    Each is an ordered set (a dict of None): what was added is appended in the
    order it came, so every run of a script lists its nodes in the same order."""

    nodes: dict[str, None] = field(default_factory=dict)
    removed: dict[str, None] = field(default_factory=dict)
    edges: dict[tuple[str, str], None] = field(default_factory=dict)
    removed_edges: dict[tuple[str, str], None] = field(default_factory=dict)
    #: nodes and edges whose only change is their "new" glow turning off (never in
    #: ``nodes``/``edges``): the step after a run turns off every one of them, and
    #: nothing about them is measured or compared again (10,000 nodes: the layout
    #: and the state's delta skip reading each one)
    renewed: dict[str, None] = field(default_factory=dict)
    renewed_edges: dict[tuple[str, str], None] = field(default_factory=dict)

    def merge(self, later: GraphDelta) -> None:
        """Fold in the changes of a later capture."""
        for n in later.removed:
            self.nodes.pop(n, None)
            self.renewed.pop(n, None)
            self.removed[n] = None
        for n in later.nodes:
            self.removed.pop(n, None)
            self.renewed.pop(n, None)
            self.nodes[n] = None
        _fold_renewed(self.renewed, later.renewed, self.nodes)
        for e in later.removed_edges:
            self.edges.pop(e, None)
            self.renewed_edges.pop(e, None)
            self.removed_edges[e] = None
        for e in later.edges:
            self.removed_edges.pop(e, None)
            self.renewed_edges.pop(e, None)
            self.edges[e] = None
        _fold_renewed(self.renewed_edges, later.renewed_edges, self.edges)


def _fold_renewed(renewed: dict[Any, None], later: dict[Any, None], changed: dict[Any, None]) -> None:
    """Add ``later``'s renewals to ``renewed``, but for the keys ``changed`` (a change
    wins over a renewal); the step after a run folds 10,000 of them, at C speed."""
    if len(later) > len(changed):
        renewed.update(later)
        for key in changed:
            renewed.pop(key, None)
    else:
        for key in later:
            if key not in changed:
                renewed[key] = None


class IdRegistry:
    """Stable string ids for autograd nodes, tensors and saved tensors."""

    def __init__(self) -> None:
        self._counter = 0
        self._nodes: dict[int, tuple[Any, str, int | None]] = {}
        self._tensors: dict[int, tuple[weakref.ref[torch.Tensor], str, int | None]] = {}
        self._saved: dict[tuple[str, str], str] = {}
        self._storage: dict[int, str] = {}
        self._storage_counter = 0
        #: the line that made a node (gradviz.core.modules.LineBirths), asked when the
        #: node is first seen; its answers by node id
        self.line_of: Callable[[Any], int | None] | None = None
        self.node_lines: dict[str, int] = {}

    def _next(self, prefix: str) -> str:
        self._counter += 1
        return f"{prefix}{self._counter}"

    def node_id(self, fn: Any, statement: int | None) -> tuple[str, int | None]:
        entry = self._nodes.get(id(fn))
        if entry is not None and entry[0] is fn:
            return entry[1], entry[2]
        prefix = "acc" if type(fn).__name__ == "AccumulateGrad" else "fn"
        node_id = self._next(prefix)
        self._nodes[id(fn)] = (fn, node_id, statement)
        if self.line_of is not None and prefix == "fn":
            line = self.line_of(fn)
            if line is not None:
                self.node_lines[node_id] = line
        return node_id, statement

    def tensor_id(self, t: torch.Tensor, statement: int | None) -> tuple[str, int | None]:
        entry = self._tensors.get(id(t))
        if entry is not None and entry[0]() is t:
            return entry[1], entry[2]
        node_id = self._next("t")
        self._tensors[id(t)] = (weakref.ref(t), node_id, statement)
        return node_id, statement

    def saved_id(self, fn_id: str, attr: str) -> str:
        key = (fn_id, attr)
        if key not in self._saved:
            self._saved[key] = self._next("s")
        return self._saved[key]

    def storage_id(self, ptr: int) -> str:
        if ptr not in self._storage:
            self._storage_counter += 1
            self._storage[ptr] = f"S{self._storage_counter}"
        return self._storage[ptr]

    def prune(self, live_fn_ids: set[int]) -> None:
        """Forget nodes no longer reachable so their graphs (and saved tensors) can be freed."""
        self._nodes = {k: v for k, v in self._nodes.items() if k in live_fn_ids}
        self._tensors = {k: v for k, v in self._tensors.items() if v[0]() is not None}
        if self.node_lines:
            kept = {v[1] for v in self._nodes.values()}
            self.node_lines = {k: v for k, v in self.node_lines.items() if k in kept}

    #: a node freed by a node above it frees the nodes below it by recursion, as deep as
    #: the chain of nodes freed together: at most this many (torch's C++ stack reached
    #: its end at 25,000-50,000 on an 8 MiB stack)
    FREE_IN_ORDER_DEPTH = 1_000
    FREE_IN_ORDER_KEY = "gradviz.free_in_order"

    class _FreeInOrder:
        """Nodes below one autograd node, dropped parents first when that node is freed."""

        __slots__ = ("fns",)
        #: lists being dropped: one freed inside another's drop waits its turn (no nesting)
        pending: list[list[Any]] = []
        draining = False

        def __init__(self, fns: list[Any]) -> None:
            self.fns = fns  # the last is dropped first

        def __del__(self) -> None:
            cls = type(self)
            cls.pending.append(self.fns)
            if cls.draining:
                return
            cls.draining = True
            try:
                while cls.pending:
                    fns = cls.pending[-1]
                    if fns:
                        fns.pop()  # frees that node if nothing else holds it
                    else:
                        cls.pending.pop()
            finally:
                cls.draining = False

    @classmethod
    def free_in_order(cls, graph: nx.DiGraph, node_objects: dict[str, Any]) -> int:
        """Let a deep captured graph be freed iteratively; call before dropping ``node_objects``.

        Once Python has seen an autograd node (any ``grad_fn`` or ``next_functions``
        lookup), torch keeps its wrapper alive for as long as the node lives, and the
        wrapper owns the node. torch frees a graph with a loop only through nodes
        nobody else owns; a wrapped node is freed from inside its wrapper's
        deallocation, nested in its parent's destructor, so dropping a captured
        50,000-node chain recursed that deep and overflowed the stack (issue 12).

        So some nodes keep, in their ``metadata``, the wrappers of the nodes below
        them down to the next such node; torch drops a node's edges before its
        metadata, and the wrappers are then dropped parents first: each drop frees
        one node. Those nodes are every named tensor's ``grad_fn`` (each target of an
        ``output`` edge) and, so that tensors the capture did not see bound how deep
        a recursion goes, every node entered across a band of FREE_IN_ORDER_DEPTH
        levels. Returns how many nodes keep wrappers.
        """
        depth = cls.FREE_IN_ORDER_DEPTH
        if len(node_objects) < depth:
            return 0
        children: dict[str, list[str]] = {n: [] for n in node_objects}
        indegree = dict.fromkeys(node_objects, 0)
        holders: dict[str, None] = {}
        for u, v, kind in graph.edges(data="kind"):
            if kind == "grad" and u in children and v in indegree:
                children[u].append(v)
                indegree[v] += 1
            elif kind == "output" and v in node_objects:
                holders[v] = None
        order = [n for n, d in indegree.items() if d == 0]  # Kahn: parents before children
        level = dict.fromkeys(order, 0)  # the longest path from a root: grows along every edge
        for n in order:
            for c in children[n]:
                level[c] = max(level.get(c, 0), level[n] + 1)
                indegree[c] -= 1
                if indegree[c] == 0:
                    order.append(c)
        for n in order:
            for c in children[n]:
                if level[c] // depth > level[n] // depth:
                    holders[c] = None  # an edge into the next band
        place = {n: i for i, n in enumerate(order)}
        kept = 0
        for holder in holders:
            below: set[str] = set()
            todo = [holder]
            while todo:
                for c in children[todo.pop()]:
                    if c not in below:
                        below.add(c)
                        if c not in holders:
                            todo.append(c)
            # children before parents: the walk's order (parents first) reversed, by
            # sorting what lies below (not filtering the whole order per holder, which
            # was quadratic at 100,000 nodes); a node the walk never ordered is left
            # out, as the filter left it out
            fns = [
                node_objects[n]
                for n in sorted((n for n in below if n in place), key=place.__getitem__,
                                reverse=True)
            ]
            try:
                node_objects[holder].metadata[cls.FREE_IN_ORDER_KEY] = cls._FreeInOrder(fns)
            except Exception:  # noqa: BLE001 - a node without metadata: freed as before
                continue
            kept += 1
        return kept


_SAVED_ATTRS: dict[type, list[str]] = {}


def saved_attribute_names(fn: Any) -> list[str]:
    cls = type(fn)
    if cls not in _SAVED_ATTRS:
        _SAVED_ATTRS[cls] = sorted(a for a in dir(fn) if a.startswith("_saved_"))
    return _SAVED_ATTRS[cls]


STALE_VERSION = re.compile(r"is at version (\d+); expected version (\d+)")


def read_saved(
    fn: Any, stale: dict[str, dict[str, Any]] | None = None
) -> tuple[dict[str, torch.Tensor], dict[str, Any], bool]:
    """Saved tensors and saved scalars of a node, and whether they were freed.

    A saved tensor that was modified in place since it was saved cannot be
    unpacked; it goes into ``stale`` (attribute -> versions) so the canvas can
    point at it (scenario 9).
    """
    tensors: dict[str, torch.Tensor] = {}
    scalars: dict[str, Any] = {}
    freed = False
    if isinstance(fn, torch.autograd.function.BackwardCFunction):
        try:
            for i, t in enumerate(fn.saved_tensors):
                if isinstance(t, torch.Tensor):
                    tensors[f"saved_tensors[{i}]"] = t
        except RuntimeError:
            freed = True
        except Exception:  # noqa: BLE001 - a saved-tensors hook gradviz did not run
            pass
        return tensors, scalars, freed
    for attr in saved_attribute_names(fn):
        name = attr[len("_saved_") :]
        try:
            value = getattr(fn, attr)
        except RuntimeError as exc:
            match = STALE_VERSION.search(str(exc))
            if match and stale is not None:
                stale[name] = {"version": int(match.group(1)), "expected": int(match.group(2))}
            elif not match:
                freed = True
            continue
        except Exception:
            continue
        if isinstance(value, torch.Tensor):
            tensors[name] = value
        elif isinstance(value, (tuple, list)) and value and all(
            isinstance(v, torch.Tensor) for v in value
        ):
            for i, v in enumerate(value):
                tensors[f"{name}[{i}]"] = v
        else:
            scalars[name] = jsonable_scalar(value)
    return tensors, scalars, freed


def jsonable_scalar(value: Any, depth: int = 0) -> Any:
    """A short JSON-able view of a saved non-tensor value (sizes, strides, scalars)."""
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return str(value)
        return value
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return value if value.bit_length() <= 64 else f"<int of {value.bit_length()} bits>"
    if isinstance(value, str):
        return value[:200]
    if isinstance(value, (tuple, list)):
        if depth >= 4:
            return "[...]"
        return [jsonable_scalar(v, depth + 1) for v in value[:32]]
    if isinstance(value, (torch.dtype, torch.device, torch.layout, torch.memory_format)):
        return str(value)
    return f"<{type(value).__name__}>"


def tensor_value(t: torch.Tensor | None, limit: int = MAX_VALUE_ELEMENTS) -> Any:
    """A JSON-friendly value: nested lists for small tensors, a short summary otherwise.

    The summary is computed with a few reductions rather than torch's printer,
    which costs milliseconds per tensor and dominates capture on big models.
    """
    if t is None:
        return None
    t = t.detach()
    if t.is_sparse or t.device.type == "meta":
        return f"<{t.layout} tensor, shape {list(t.shape)}>"
    try:
        if t.numel() <= limit:
            data = t.cpu()
            if data.is_complex():
                return str(data.tolist())
            values = data.tolist()
            # only a float can be nan or inf (JSON has neither): one sum in C says whether
            # any is, instead of a Python call per element (a fifth of a lesson's capture)
            if not data.is_floating_point() or math.isfinite(sum(data.reshape(-1).tolist())):
                return values
            return _clean(values)
        return summarize(t)
    except RuntimeError as exc:
        # a tensor whose values cannot be read here (a functorch wrapper, a dual
        # tensor's storage-less view): its shape, and why, instead of a failed capture
        return f"<{type(t).__name__} of shape {list(t.shape)}: values not readable ({exc})>"[:300]


MAX_STATS_ELEMENTS = 5_000_000
#: elements whose min/max/mean one capture computes, all tensors together: a
#: GPT-2-sized model's weights are ~85M values, and reducing them all cost ~97% of a
#: snapshot; past the budget a summary shows the first values and the count only
STATS_BUDGET_ELEMENTS = 2_000_000


class _StatsBudget:
    """The budget of the capture running now (None outside one: no limit), and the
    summaries it made, by storage and view (a weight saved by several ops is read once)."""

    left: int | None = None
    memo: dict[tuple[Any, ...], str] = {}


_STATS = _StatsBudget()


@contextmanager
def stats_budget(elements: int = STATS_BUDGET_ELEMENTS) -> Iterator[None]:
    """Value summaries made inside share ``elements`` values of min/max/mean; past them a
    summary shows its first values and count only. For work that summarizes many big
    tensors outside a capture (the backward recorder: every step's gradients, ~3,000
    of them on GPT-2, each up to 2.4M values). Nothing is memoized (tensors die during a
    backward pass and their addresses are reused). A capture inside sets its own; a
    budget already running (the library's record() around the recorder's own) is
    shared, never refilled."""
    if _STATS.left is not None and _STATS.memo is _NO_MEMO:
        yield  # inside another stats_budget: its values are this one's too
        return
    saved = _STATS.left, _STATS.memo
    _STATS.left, _STATS.memo = elements, _NO_MEMO
    try:
        yield
    finally:
        _STATS.left, _STATS.memo = saved


class _NoMemo(dict):  # type: ignore[type-arg]
    def __setitem__(self, key: Any, value: Any) -> None:
        pass


_NO_MEMO = _NoMemo()

def summarize(t: torch.Tensor) -> str:
    """``[0.1, -0.2, 0.3, ...] (4096 values, min -1.2, max 1.3, mean 0.01)``.

    Never materialises the tensor: an expanded view can stand for 10**10
    elements on a few bytes of storage, so the head is read from the first
    row and statistics only from tensors of modest size.
    """
    key = None
    if _STATS.left is not None:
        try:
            # data_ptr() is the storage's address plus the offset: every tensor of a
            # capture is alive while it runs, so no two storages share it
            key = (t.data_ptr(), tuple(t.shape), t.stride(), t.dtype, t._version)
        except Exception:  # noqa: BLE001 - a tensor without storage: no memo
            key = None
        if key is not None and key in _STATS.memo:
            return _STATS.memo[key]
    values = _head_values(t)
    if values is None:
        if t.is_contiguous() and t.device.type == "cpu":
            # the first row's first values lead the flat view: one view, not an index per dim
            first = t.view(-1)[: min(6, t.shape[-1])] if t.dim() else t.view(-1)[:6]
        else:
            row = t[(0,) * (t.dim() - 1)] if t.dim() > 1 else t
            first = row[:6].cpu()
        values = first.tolist()
    head = ", ".join(_fmt(v) for v in values)
    text = f"[{head}, ...] ({t.numel():,} values"
    numeric = t.dtype.is_floating_point or t.dtype in (
        torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8,
    )
    if numeric and t.numel() <= MAX_STATS_ELEMENTS:
        if _STATS.left is None or t.numel() <= _STATS.left:
            if _STATS.left is not None:
                _STATS.left -= t.numel()
            lo, hi, mean = _stats(t)
            text += f", min {_fmt(lo)}, max {_fmt(hi)}, mean {_fmt(mean)}"
        else:
            text += "; min/max/mean skipped to keep capture fast"
    text += ")"
    if key is not None:
        _STATS.memo[key] = text
    return text


#: dtypes whose values numpy reads as torch's tolist() gives them
_NUMPY_DTYPES = frozenset({
    torch.float16, torch.float32, torch.float64, torch.int8, torch.int16, torch.int32,
    torch.int64, torch.uint8, torch.bool,
})


def _head_values(t: torch.Tensor) -> list[Any] | None:
    """The first row's first values of a contiguous CPU tensor, read through a numpy
    view of its memory (a quarter of torch's view-and-slice: a ResNet-50's ~470
    summaries spent 5 ms there); None where that does not apply."""
    if t.dtype not in _NUMPY_DTYPES or t.requires_grad or t.device.type != "cpu":
        return None
    if not t.is_contiguous():
        return None
    try:
        flat = t.numpy().ravel()  # a view: the tensor is contiguous
    except (RuntimeError, TypeError):  # a conjugate/negative view, a tensor subclass
        return None
    return flat[: min(6, t.shape[-1]) if t.dim() else 6].tolist()


def _stats(t: torch.Tensor) -> tuple[float, float, float]:
    """min, max and mean of ``t``, reduced on one thread: torch's pool waits for busy
    cores (a 2.4M-value gradient: 33 ms on the default threads of a loaded 2-core
    machine, 0.9 ms on one), and the backward recorder summarizes every gradient
    outside a capture (which runs on one thread already). The script's thread count
    is given back at once (setting it costs nothing)."""
    threads = torch.get_num_threads()
    if threads != 1:
        torch.set_num_threads(1)
    try:
        f = t.float()
        lo, hi = torch.aminmax(f)
        return lo.item(), hi.item(), f.mean().item()
    finally:
        if threads != 1:
            torch.set_num_threads(threads)


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def _clean(value: Any) -> Any:
    if isinstance(value, list):
        return [_clean(v) for v in value]
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return str(value)
    return value


def storage_ptr(t: torch.Tensor) -> int | None:
    try:
        return t.untyped_storage().data_ptr()
    except Exception:
        return None


def storage_nbytes(t: torch.Tensor) -> int:
    try:
        return t.untyped_storage().nbytes()
    except Exception:
        return 0


def _escaped_transform_tensor(t: torch.Tensor) -> bool:
    try:
        return bool(torch._C._functorch.is_functorch_wrapped_tensor(t))
    except Exception:  # noqa: BLE001 - an older torch without the query
        return False


def named_tensors(variables: dict[str, Any]) -> dict[str, torch.Tensor]:
    """Tensors bound to script names, with module parameters as ``model.0.weight``."""
    out: dict[str, torch.Tensor] = {}
    for name, value in variables.items():
        if isinstance(value, torch.Tensor):
            if _escaped_transform_tensor(value) or is_lazy(value):
                # a tensor kept from inside vmap/grad has no value outside; a lazy
                # module's parameter has no shape before its first forward
                continue
            out[name] = value
        elif isinstance(value, torch.nn.Module):
            # nn.Module's own method: a script class cannot change what capture walks
            try:
                params = list(torch.nn.Module.named_parameters(value))
            except AttributeError:
                continue  # a module paused inside its __init__, before super().__init__()
            for pname, p in params:
                if not is_lazy(p):
                    out[f"{name}.{pname}"] = p
    return out


def tensor_info(name: str, t: torch.Tensor, registry: IdRegistry) -> TensorInfo:
    retains = bool(t.retains_grad) if t.requires_grad else False
    grad = t.grad if (t.is_leaf or retains) else None
    ptr = storage_ptr(t)
    return TensorInfo(
        name=name,
        shape=list(t.shape),
        dtype=str(t.dtype).removeprefix("torch."),
        device=str(t.device),
        value=tensor_value(t),
        requires_grad=t.requires_grad,
        is_leaf=t.is_leaf,
        retains_grad=retains,
        grad_fn=type(t.grad_fn).__name__ if t.grad_fn is not None else None,
        grad=tensor_value(grad),
        version=None if t.is_inference() else int(t._version),
        storage=registry.storage_id(ptr) if ptr else None,
        nbytes=storage_nbytes(t),
    )


def array_info(name: str, a: np.ndarray, registry: IdRegistry, storages: dict[int, int]) -> TensorInfo:
    ptr = a.__array_interface__["data"][0]
    group = None
    for base, nbytes in storages.items():
        if base <= ptr < base + max(nbytes, 1):
            group = registry.storage_id(base)
            break
    if group is None:
        owner = a
        while isinstance(owner.base, np.ndarray):
            owner = owner.base
        group = registry.storage_id(owner.__array_interface__["data"][0])
    value = _clean(a.tolist()) if a.size <= MAX_VALUE_ELEMENTS else str(a)[:MAX_SUMMARY_CHARS]
    return TensorInfo(
        name=name, shape=list(a.shape), dtype=str(a.dtype), device="cpu (numpy)", value=value,
        requires_grad=False, is_leaf=True, retains_grad=False, grad_fn=None, grad=None,
        version=0, storage=group, nbytes=int(a.nbytes), kind="ndarray",
    )


@dataclass
class _NodeEntry:
    """What a grad_fn node shows of itself, read once (see :class:`CaptureCache`)."""

    fn: Any
    attrs: dict[str, Any]
    #: (saved node id, its attributes but ``vars``, a weak reference to the tensor)
    saved: list[tuple[str, dict[str, Any], Any]]
    #: (storage pointer, bytes) of the saved tensors, for the memory figures
    storages: list[tuple[int, int]]
    #: (input index, next node) for each input with a node (next_functions never change)
    inputs: list[tuple[int, Any]] = field(default_factory=list)


class CaptureCache:
    """Per-node results of earlier captures, valid while the caller's token holds."""

    def __init__(self) -> None:
        self.token: Any = None
        self.entries: dict[int, _NodeEntry] = {}
        self.last: _LastCapture | None = None

    def clear(self) -> None:
        self.token = None
        self.entries = {}
        self.last = None


@dataclass
class _LastCapture:
    """The previous capture and the indexes that let the next one update it in place."""

    graph: nx.DiGraph
    fn_ids: dict[int, str]
    node_objects: dict[str, Any]
    #: id(tensor) -> its tensor node, for the named tensors
    tensor_nodes: dict[int, str]
    #: id(leaf) -> the AccumulateGrad node of that leaf
    acc_of_leaf: dict[int, str]
    #: id(saved tensor) -> (saved node id, weak reference), for saved tensors alive
    saved_by_tensor: dict[int, list[tuple[str, Any]]]
    #: fn node ids that are the grad_fn of a named tensor
    roots: set[str]
    names_by_fn: dict[int, list[str]]
    names_by_tensor: dict[int, list[str]]
    #: the nodes and edges the last capture added (their glow is on), in the graph's
    #: order: the next capture turns them off in the order their dicts were made
    new_nodes: dict[str, None]
    new_edges: dict[tuple[str, str], None]
    saved_storages: dict[int, int]


def _node_entry(
    fn: Any, node_id: str, cls_name: str, created: int | None, registry: IdRegistry,
    include_saved: bool,
) -> _NodeEntry:
    stale: dict[str, dict[str, Any]] = {}
    saved_tensors, scalars, freed = read_saved(fn, stale) if include_saved else ({}, {}, False)
    attrs = {
        "kind": "grad_fn", "label": cls_name, "saved": scalars, "freed": freed,
        "statement": created, "stale": sorted(stale),
    }
    line = registry.node_lines.get(node_id)
    if line is not None:
        attrs["line"] = line  # the statement's line that made it (a loop's body line)
    saved: list[tuple[str, dict[str, Any], Any]] = []
    storages: list[tuple[int, int]] = []
    for attr, versions in stale.items():
        sid = registry.saved_id(node_id, attr)
        saved.append((sid, {
            "kind": "saved", "label": attr, "stale": True, "statement": created,
            "version": versions["version"], "expected_version": versions["expected"],
        }, None))
    for attr, st in saved_tensors.items():
        sid = registry.saved_id(node_id, attr)
        ptr = storage_ptr(st)
        if ptr:
            storages.append((ptr, storage_nbytes(st)))
        try:
            ref = weakref.ref(st)
        except TypeError:
            ref = None
        saved.append((sid, {
            "kind": "saved", "label": attr, "shape": list(st.shape),
            "dtype": str(st.dtype).removeprefix("torch."), "device": str(st.device),
            "storage": registry.storage_id(ptr) if ptr else None,
            "value": tensor_value(st, 8), "statement": created,
        }, ref))
    inputs = [(i, nxt) for i, (nxt, _nr) in enumerate(fn.next_functions) if nxt is not None]
    return _NodeEntry(fn, attrs, saved, storages, inputs)


#: grad_fn nodes one capture reads at most. Reading a node gives it a Python object,
#: which torch keeps for the node's life and frees by recursion (see
#: gradviz.kernel.DEEP_STACK_BYTES); and every later statement re-reads what changed.
#: Past it the picture shows the nodes nearest the script's names and says so.
MAX_CAPTURE_NODES = 250_000
#: seconds one capture may walk (the statement's own limit is the other bound)
MAX_CAPTURE_SECONDS = 20.0


class _WalkBudget:
    """The node budget and deadline of the capture running now (None: no capture)."""

    left: int | None = None
    #: the node budget the running capture started with
    limit: int = MAX_CAPTURE_NODES
    deadline: float | None = None
    #: why the running capture stopped early, if it did
    cut: str | None = None

    @classmethod
    def spend(cls) -> bool:
        """One more node: False once the capture must stop reading nodes."""
        if cls.left is None:
            return True
        if cls.cut is not None:
            return False
        if cls.left <= 0:
            cls.cut = (
                f"the graph has more than {cls.limit:,} nodes; gradviz shows the "
                f"{cls.limit:,} nearest the script's variables (gradviz limit "
                "max_capture_nodes)"
            )
            return False
        cls.left -= 1
        if cls.left & 1023 == 0 and cls.deadline is not None and time.monotonic() > cls.deadline:
            cls.cut = (
                "reading the graph took longer than its time limit; gradviz shows the "
                "nodes read by then (gradviz limit max_capture_seconds)"
            )
            return False
        return True


_WALK = _WalkBudget


def capture(*args: Any, deadline: float | None = None, **kwargs: Any) -> GraphCapture:
    """See :func:`_capture`; value summaries share one budget (STATS_BUDGET_ELEMENTS),
    and the walk reads at most ``max_nodes`` (at most MAX_CAPTURE_NODES) nodes, until
    ``deadline`` (monotonic)
    or MAX_CAPTURE_SECONDS from now, whichever is sooner. A capture cut short says
    why in its ``cut``."""
    _ALIASES.prefixes = tuple(kwargs.pop("frame_prefixes", None) or ())
    max_nodes = kwargs.pop("max_nodes", None) or MAX_CAPTURE_NODES
    outer = _STATS.left, _STATS.memo  # a stats_budget() around this capture
    _STATS.left, _STATS.memo = STATS_BUDGET_ELEMENTS, {}
    own = time.monotonic() + MAX_CAPTURE_SECONDS
    _WALK.left, _WALK.cut = min(max_nodes, MAX_CAPTURE_NODES), None
    _WALK.limit = _WALK.left
    _WALK.deadline = own if deadline is None else min(deadline, own)
    threads = torch.get_num_threads()
    try:
        # the value summaries' reductions on one thread: torch's pool stalls waiting for
        # busy cores (ResNet-50's capture 35 ms on one thread, 308 ms on the default
        # threads of a loaded 2-core machine); restored for the script's next statement
        torch.set_num_threads(1)
        with paused_gc():  # a dict or two per node, kept or freed by reference counting
            cap = _capture(*args, **kwargs)
        cap.cut = _WALK.cut
        cache = kwargs.get("cache")
        if cap.cut is not None and cache is not None:
            # a cut picture is no base for in-place updates: those would walk on past
            # its frontier, a budget's worth more each statement
            cache.last = None
        return cap
    finally:
        if torch.get_num_threads() != threads:
            torch.set_num_threads(threads)
        _STATS.left, _STATS.memo = outer
        _WALK.left, _WALK.deadline, _WALK.cut = None, None, None
        _ALIASES.prefixes = ()


class NodeNames(dict):
    """Names by autograd node id that hold the nodes they name.

    torch makes a node's Python object on demand and frees it with its last
    reference, so an id taken from a passing ``t.grad_fn`` can name a different
    node a moment later (its object at the freed address). Holding each named
    node keeps its object, and so its id, its own while the map lives."""

    def __init__(self) -> None:
        super().__init__()
        self._held: dict[int, Any] = {}

    def add(self, fn: Any, name: str) -> None:
        self._held[id(fn)] = fn
        names = self.setdefault(id(fn), [])
        if name not in names:
            names.append(name)


def _names_of(tensors: dict[str, torch.Tensor]) -> tuple[NodeNames, dict[int, list[str]]]:
    """The script's names by grad_fn (id) and by tensor (id)."""
    names_by_fn = NodeNames()
    names_by_tensor: dict[int, list[str]] = {}
    for name, t in tensors.items():
        names_by_tensor.setdefault(id(t), []).append(name)
        if t.grad_fn is not None:
            names_by_fn.add(t.grad_fn, name)
    return names_by_fn, names_by_tensor


#: the paused frame's name prefixes (``Net.forward.``) while a capture runs: a tensor
#: that the script's globals name too is labelled by those names only
_ALIASES = threading.local()


def _label(names: list[str]) -> str:
    """A tensor node's label: its names joined, less the paused frame's aliases of a
    tensor the globals name too (``net.fc1.weight``, not ``net.fc1.weight =
    Net.forward.self.fc1.weight``: the node grew into its neighbours). Every name stays
    in the node's ``vars``."""
    prefixes = getattr(_ALIASES, "prefixes", ())
    if prefixes and len(names) > 1:
        outside = [n for n in names if not n.startswith(prefixes)]
        if outside:
            return " = ".join(outside)
    return " = ".join(names)


def _tensor_attrs(
    t: torch.Tensor, info: TensorInfo, names: list[str], created: int | None
) -> dict[str, Any]:
    """A named tensor's node."""
    return {
        "kind": "tensor", "label": _label(names), "vars": list(names),
        "shape": list(t.shape), "dtype": info.dtype, "device": info.device,
        "is_leaf": t.is_leaf, "requires_grad": t.requires_grad, "storage": info.storage,
        "statement": created,
    }


def _accumulate_attrs(leaf: torch.Tensor, names: list[str], created: int | None) -> dict[str, Any]:
    """An AccumulateGrad node: named as its leaf is."""
    return {
        "kind": "accumulate_grad", "label": "AccumulateGrad", "vars": list(names),
        "shape": list(leaf.shape), "statement": created,
    }


def _module_for(
    node: str, data: Mapping[str, Any], module_of: Mapping[str, str],
    module_tags: ModuleTags | None = None, fn: Any = None,
) -> str | None:
    """The module whose forward built ``node``, else (a parameter, its AccumulateGrad) the
    module its qualified name says."""
    module = module_of.get(node)
    if module is None and module_tags is not None and fn is not None:
        module = module_tags.of(fn)
    if module is None and data.get("kind") in ("accumulate_grad", "tensor"):
        qualified = next((v for v in data.get("vars", ()) if "." in v), None)
        if qualified:
            module = qualified.rsplit(".", 1)[0]
    return module


def _capture(
    variables: dict[str, Any],
    registry: IdRegistry,
    statement: int | None = None,
    previous_nodes: set[str] | None = None,
    previous_edges: set[tuple[str, str]] | None = None,
    include_saved: bool = True,
    module_of: dict[str, str] | None = None,
    cache: CaptureCache | None = None,
    token: Any = None,
    module_tags: ModuleTags | None = None,
) -> GraphCapture:
    """Build the autograd graph reachable from ``variables`` as a networkx DiGraph.

    With a ``cache``, what a grad_fn node shows of itself (its saved tensors and
    scalars, freed or stale) is read once and reused while ``token`` stays the
    same: the caller changes it whenever something could have changed a saved
    tensor (an in-place op, a backward pass, a ``.data`` write). A step that adds
    ten nodes to a 2,000-node graph then reads ten nodes, not 2,000.
    """
    reuse = (
        cache is not None
        and token is not None
        and cache.token == token
        # numpy writes into shared memory bypass every op: no reuse while arrays exist
        and not any(isinstance(v, np.ndarray) for v in variables.values())
    )
    if reuse and cache is not None and cache.last is not None:
        fast = _capture_in_place(
            variables, registry, statement, include_saved, module_of or {}, cache, module_tags
        )
        if fast is not None:
            return fast
    tensors = named_tensors(variables)
    names_by_fn, names_by_tensor = _names_of(tensors)

    infos: dict[str, TensorInfo] = {}
    storages: dict[int, int] = {}
    tensor_nodes: dict[int, str] = {}
    node_objects: dict[str, Any] = {}
    # Nodes and edges are collected here and put into networkx in bulk at the end
    # (one add_node per node costs more than the rest of the walk). Insertion
    # order is the order nodes are first met, as add_edge would have made it.
    nodes: dict[str, dict[str, Any]] = {}
    edges: list[tuple[str, str, dict[str, Any]]] = []
    for name, t in tensors.items():
        info = tensor_info(name, t, registry)
        ptr = storage_ptr(t)
        if ptr:
            storages[ptr] = max(storages.get(ptr, 0), info.nbytes)
        if id(t) not in tensor_nodes:
            node_id, created = registry.tensor_id(t, statement)
            tensor_nodes[id(t)] = node_id
            nodes.setdefault(node_id, {}).update(
                _tensor_attrs(t, info, names_by_tensor[id(t)], created)
            )
        info.node = tensor_nodes[id(t)]
        infos[name] = info
    live_bytes = sum(storages.values())

    for name, value in variables.items():
        if isinstance(value, np.ndarray):
            infos[name] = array_info(name, value, registry, storages)

    # Iterative walk over the autograd graph.
    fn_ids: dict[int, str] = {}
    fn_created: dict[int, int | None] = {}
    stack: list[Any] = []

    def visit(fn: Any) -> str | None:
        key = id(fn)
        if key in fn_ids:
            return fn_ids[key]
        if not _WALK.spend():
            return None  # past the budget: the picture stops here
        node_id, created = registry.node_id(fn, statement)
        fn_ids[key] = node_id
        fn_created[key] = created
        node_objects[node_id] = fn
        nodes.setdefault(node_id, {})
        stack.append(fn)
        return node_id

    for t in tensors.values():
        if t.grad_fn is not None:
            fn_id = visit(t.grad_fn)
            if fn_id is not None:
                edges.append((tensor_nodes[id(t)], fn_id, {"kind": "output"}))

    saved_storages: dict[int, int] = {}
    entries = cache.entries if reuse and cache is not None else {}
    acc_of_leaf: dict[int, str] = {}
    saved_by_tensor: dict[int, list[tuple[str, Any]]] = {}
    while stack:
        fn = stack.pop()
        key = id(fn)
        node_id = fn_ids[key]
        created = fn_created[key]
        cls_name = type(fn).__name__
        if cls_name == "AccumulateGrad":
            leaf = fn.variable
            acc_of_leaf[id(leaf)] = node_id
            nodes[node_id].update(
                _accumulate_attrs(leaf, names_by_tensor.get(id(leaf), []), created)
            )
            if id(leaf) in tensor_nodes:
                edges.append((node_id, tensor_nodes[id(leaf)], {"kind": "leaf"}))
            continue
        entry = entries.get(key)
        if entry is None or entry.fn is not fn:
            entry = _node_entry(fn, node_id, cls_name, created, registry, include_saved)
            if cache is not None:
                cache.entries[key] = entry
        data = nodes[node_id]
        data.update(entry.attrs)
        data["vars"] = list(names_by_fn.get(key, ()))
        for sid, attrs, ref in entry.saved:
            st = ref() if ref is not None else None
            saved = nodes.setdefault(sid, {})
            saved.update(attrs)
            saved["vars"] = list(names_by_tensor.get(id(st), ())) if st is not None else []
            if st is not None:
                saved_by_tensor.setdefault(id(st), []).append((sid, ref))
            edges.append((node_id, sid, {"kind": "saved"}))
        for ptr, nbytes in entry.storages:
            saved_storages[ptr] = max(saved_storages.get(ptr, 0), nbytes)
        for index, nxt in entry.inputs:
            nxt_id = visit(nxt)
            if nxt_id is not None:
                edges.append((node_id, nxt_id, {"kind": "grad", "input": index}))

    registry.prune(set(fn_ids))
    if cache is not None:
        live = cache.entries
        cache.entries = {k: live[k] for k in fn_ids if k in live}
        cache.token = token
    prev_nodes = previous_nodes or set()
    prev_edges = previous_edges or set()
    for n, data in nodes.items():
        data["new"] = n not in prev_nodes
    for u, v, data in edges:
        data["new"] = (u, v) not in prev_edges
    graph = nx.DiGraph()
    # ids only: a (node, attrs) pair costs networkx a caught TypeError per node
    graph.add_nodes_from(nodes)
    node_data = graph._node
    for n, data in nodes.items():
        node_data[n].update(data)
    graph.add_edges_from(edges)
    _apply_modules(graph, module_of or {}, module_tags, node_objects)
    if cache is not None:
        cache.last = _LastCapture(
            graph=graph, fn_ids=fn_ids, node_objects=node_objects,
            tensor_nodes=tensor_nodes, acc_of_leaf=acc_of_leaf,
            saved_by_tensor=saved_by_tensor,
            roots={fn_ids[id(t.grad_fn)] for t in tensors.values() if t.grad_fn is not None},
            names_by_fn=names_by_fn, names_by_tensor=names_by_tensor,
            new_nodes=dict.fromkeys(n for n, d in nodes.items() if d["new"]),
            new_edges=dict.fromkeys((u, v) for u, v, d in edges if d["new"]),
            saved_storages=saved_storages,
        )
    return GraphCapture(
        graph=graph,
        tensors=infos,
        saved_bytes=sum(saved_storages.values()),
        live_bytes=live_bytes,
        node_objects=node_objects,
    )


def _capture_in_place(
    variables: dict[str, Any],
    registry: IdRegistry,
    statement: int | None,
    include_saved: bool,
    module_of: dict[str, str],
    cache: CaptureCache,
    module_tags: ModuleTags | None = None,
) -> GraphCapture | None:
    """Update the last capture's graph in place with what the statement added.

    Autograd nodes never change their inputs, so a node met before has the same
    subgraph below it: the walk stops there. When every grad_fn a name held
    before is still reachable (the usual ``y = f(y)``), no node went, and the
    work is the new nodes plus the names that moved. Anything else (a graph the
    script let go, a missing index) returns None: the caller captures whole.
    """
    last = cache.last
    assert last is not None
    graph = last.graph
    node_data, succ = graph._node, graph._succ
    tensors = named_tensors(variables)
    names_by_fn, names_by_tensor = _names_of(tensors)
    fn_ids, objects = last.fn_ids, last.node_objects

    # Which grad_fns are new: walk from the named tensors, stopping at known nodes.
    new_fns: list[Any] = []
    hits: set[str] = set()
    roots: set[str] = set()
    pending: dict[int, Any] = {}
    stack = [t.grad_fn for t in tensors.values() if t.grad_fn is not None]
    for fn in stack:
        known = fn_ids.get(id(fn))
        if known is not None and objects.get(known) is fn:
            roots.add(known)
    while stack:
        fn = stack.pop()
        key = id(fn)
        known = fn_ids.get(key)
        if known is not None and objects.get(known) is fn:
            hits.add(known)
            continue
        if key in pending:
            continue
        if len(pending) >= _WALK.limit // 2:
            return None  # this many new nodes: the whole walk, with its budget, decides
        if len(pending) & 1023 == 1023 and _WALK.deadline is not None and (
            time.monotonic() > _WALK.deadline
        ):
            # past the capture's time: the whole walk cuts at once and says why (this
            # walk held 125,000 new nodes of a chain with no clock, 15 s past the run)
            return None
        pending[key] = fn
        new_fns.append(fn)
        if type(fn).__name__ != "AccumulateGrad":
            stack.extend(nxt for nxt, _nr in fn.next_functions if nxt is not None)
    if not last.roots <= (roots | hits):
        return None  # a graph the script let go of: nodes leave, capture whole
    delta = GraphDelta()
    infos: dict[str, TensorInfo] = {}
    storages: dict[int, int] = {}

    def set_attrs(node: str, attrs: dict[str, Any]) -> None:
        data = node_data.get(node)
        if data is None:
            graph.add_node(node)
            node_data[node].update(attrs)
            delta.nodes[node] = None
        elif any(data.get(k) != v for k, v in attrs.items()):
            data.update(attrs)
            delta.nodes[node] = None

    def set_module(node: str) -> None:
        data = node_data[node]
        module = _module_for(node, data, module_of, module_tags, objects.get(node))
        if data.get("module") != module:
            if module is None:
                del data["module"]
            else:
                data["module"] = module
            delta.nodes[node] = None

    added: set[str] = set()
    added_edges: set[tuple[str, str]] = set()

    def add_edge(u: str, v: str, attrs: dict[str, Any]) -> None:
        old = succ.get(u, {}).get(v)
        if old is None:
            graph.add_edge(u, v)
            succ[u][v].update(attrs, new=True)
            delta.edges[(u, v)] = None
            added_edges.add((u, v))
        elif any(old.get(k) != val for k, val in attrs.items()):
            old.update(attrs)
            delta.edges[(u, v)] = None

    # The new grad_fn nodes: every one gets its id first, so edges between them resolve.
    new_ids: dict[int, tuple[str, int | None]] = {}
    for fn in new_fns:
        node_id, created = registry.node_id(fn, statement)
        new_ids[id(fn)] = (node_id, created)
        fn_ids[id(fn)] = node_id
        objects[node_id] = fn
        added.add(node_id)
    for fn in new_fns:
        node_id, created = new_ids[id(fn)]
        cls_name = type(fn).__name__
        if cls_name == "AccumulateGrad":
            leaf = fn.variable
            last.acc_of_leaf[id(leaf)] = node_id
            set_attrs(node_id, {
                **_accumulate_attrs(leaf, names_by_tensor.get(id(leaf), []), created),
                "new": True,
            })
            continue
        entry = cache.entries.get(id(fn))
        if entry is None or entry.fn is not fn:
            entry = _node_entry(fn, node_id, cls_name, created, registry, include_saved)
            cache.entries[id(fn)] = entry
        set_attrs(node_id, {**entry.attrs, "vars": list(names_by_fn.get(id(fn), ())),
                            "new": True})
        for sid, attrs, ref in entry.saved:
            st = ref() if ref is not None else None
            added.add(sid)
            set_attrs(sid, {**attrs, "new": True, "vars": (
                list(names_by_tensor.get(id(st), ())) if st is not None else []
            )})
            if st is not None:
                last.saved_by_tensor.setdefault(id(st), []).append((sid, ref))
            add_edge(node_id, sid, {"kind": "saved"})
        for saved_ptr, nbytes in entry.storages:
            last.saved_storages[saved_ptr] = max(last.saved_storages.get(saved_ptr, 0), nbytes)
        for index, nxt in entry.inputs:
            add_edge(node_id, fn_ids[id(nxt)], {"kind": "grad", "input": index})
    for node in added:
        set_module(node)

    # The named tensors: their nodes, and the edges to their grad_fns.
    tensor_nodes: dict[int, str] = {}
    for name, t in tensors.items():
        info = tensor_info(name, t, registry)
        ptr = storage_ptr(t)
        if ptr:
            storages[ptr] = max(storages.get(ptr, 0), info.nbytes)
        if id(t) not in tensor_nodes:
            node_id, created = registry.tensor_id(t, statement)
            tensor_nodes[id(t)] = node_id
            attrs = _tensor_attrs(t, info, names_by_tensor[id(t)], created)
            if node_id not in node_data:
                attrs["new"] = True
                added.add(node_id)
            set_attrs(node_id, attrs)
            set_module(node_id)
            if t.grad_fn is not None:
                add_edge(node_id, fn_ids[id(t.grad_fn)], {"kind": "output"})
        info.node = tensor_nodes[id(t)]
        infos[name] = info
    current = set(tensor_nodes.values())
    for node_id in [n for n in last.tensor_nodes.values() if n not in current]:
        if node_id in node_data:
            for v in succ[node_id]:
                delta.removed_edges[(node_id, v)] = None
            for u in graph._pred[node_id]:
                delta.removed_edges[(u, node_id)] = None
            graph.remove_node(node_id)
            delta.removed[node_id] = None
            delta.nodes.pop(node_id, None)

    # Names that moved: grad_fn and AccumulateGrad vars, saved tensors that are named,
    # and the AccumulateGrad -> leaf edges.
    for key in [*names_by_fn, *(k for k in last.names_by_fn if k not in names_by_fn)]:
        fn_node = fn_ids.get(key)
        if fn_node is not None and fn_node in node_data and node_data[fn_node].get("kind") == "grad_fn":
            set_attrs(fn_node, {"vars": list(names_by_fn.get(key, ()))})
    for key in [
        *names_by_tensor, *(k for k in last.names_by_tensor if k not in names_by_tensor)
    ]:
        names = list(names_by_tensor.get(key, ()))
        acc = last.acc_of_leaf.get(key)
        if acc is not None and acc in node_data:
            leaf = objects[acc].variable
            if id(leaf) == key:
                set_attrs(acc, {"vars": names})
                set_module(acc)
                if key in tensor_nodes:
                    add_edge(acc, tensor_nodes[key], {"kind": "leaf"})
        for sid, ref in last.saved_by_tensor.get(key, ()):
            st = ref() if ref is not None else None
            if sid in node_data and st is not None and id(st) == key:
                set_attrs(sid, {"vars": names})

    # "new" marks: last step's go off, this step's are on (set above)
    # (the step after a run: every node and edge, so the loops only turn the flags and
    # the rest is set operations)
    changed_nodes, renewed = delta.nodes, delta.renewed
    for node in last.new_nodes:
        if node not in added:
            data = node_data.get(node)
            if data is not None:
                data["new"] = False
                if node not in changed_nodes:
                    renewed[node] = None
    changed_edges, renewed_edges = delta.edges, delta.renewed_edges
    for edge in last.new_edges:
        if edge not in added_edges:
            nbrs = succ.get(edge[0])
            edge_data = nbrs.get(edge[1]) if nbrs is not None else None
            if edge_data is not None:
                edge_data["new"] = False
                if edge not in changed_edges:
                    renewed_edges[edge] = None
    for node in delta.nodes:
        node_data[node].setdefault("new", False)
    for u, v in delta.edges:
        succ[u][v].setdefault("new", False)
    for e in delta.removed_edges:
        delta.edges.pop(e, None)
        renewed_edges.pop(e, None)
    delta.removed_edges = {
        (u, v): None for u, v in delta.removed_edges if v not in succ.get(u, {})
    }

    last.tensor_nodes = tensor_nodes
    last.roots = roots | {fn_ids[id(t.grad_fn)] for t in tensors.values() if t.grad_fn is not None}
    last.names_by_fn, last.names_by_tensor = names_by_fn, names_by_tensor
    # in the graph's order (delta's), then any added that did not change (none expected)
    new_nodes = dict.fromkeys(n for n in delta.nodes if n in added)
    if len(new_nodes) < len(added):
        new_nodes.update(dict.fromkeys(n for n in added if n in node_data))
    last.new_nodes = new_nodes
    new_edges = dict.fromkeys(e for e in delta.edges if e in added_edges)
    if len(new_edges) < len(added_edges):
        new_edges.update(dict.fromkeys(e for e in added_edges if e[1] in succ.get(e[0], {})))
    last.new_edges = new_edges
    return GraphCapture(
        graph=graph,
        tensors=infos,
        saved_bytes=sum(last.saved_storages.values()),
        live_bytes=sum(storages.values()),
        node_objects=objects,
        changes=delta,
    )


def _apply_modules(
    graph: nx.DiGraph, module_of: dict[str, str], module_tags: ModuleTags | None = None,
    node_objects: Mapping[str, Any] | None = None,
) -> None:
    """``module`` on nodes built by a module's forward, and on parameters by their names."""
    objects = node_objects or {}
    for node, data in graph.nodes(data=True):
        module = _module_for(node, data, module_of, module_tags, objects.get(node))
        if module is not None:
            data["module"] = module
