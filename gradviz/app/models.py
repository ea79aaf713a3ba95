"""Typed models of the kernel's state, decoded once at the border.

The kernel answers every request with a JSON state (see
:meth:`gradviz.core.session.Session.snapshot` and the fields
:mod:`gradviz.kernel_server` adds: ``positions``, ``new_results``,
``at_end``, ``zeroed`` ...). :meth:`AppState.from_wire` turns that dict into
frozen dataclasses whose fields are checked: a field of the wrong type raises
:class:`StateError` naming it (``tensors['x'].grad_fn: expected str or None,
got int``). A missing field takes its default, since saved snapshots carry
only part of a state. Every panel reads these objects, so a change to a reply
field is a change here and in the panels that show it, found by the type
checker rather than by a hunt through ``.get("...")`` calls.

Decoding is cheap on every step. The window's delta decoder builds each new
state from the previous one, sharing every sub-dict that did not change (the
tensors when no tensor changed, each old result and backward pass when the
lists only grew). Sub-objects are therefore memoized by identity: a small
cache keyed by ``id()`` that holds the source object alive (so the id cannot
be reused), and a shared sub-dict decodes to the very same typed object. A
sub-dict is treated as immutable once decoded (change a state by building new
dicts, as the delta decoder does); the top-level dict is read afresh on every
decode, so a field set on it is seen.

The graph is not converted: the canvas reads its node and edge dicts as
networkx attributes, so :attr:`AppState.graph_data` is the wire's own dict
(and :meth:`AppState.node` finds a node dict by id). Tensor values and
gradients stay as the kernel sends them (a number, nested lists or a summary
string), ready for :func:`gradviz.graph.fmt.fmt_value`.

Qt-free and torch-free.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, TypeVar

from gradviz.graph.records import Edge, Node, edge_dicts, int_or_none, node_dicts
from gradviz.graph.results import ErrorInfo, MemoryFigures

__all__ = [
    "AppState",
    "DotGraphInfo",
    "ErrorInfo",
    "FrameInfo",
    "GradEventInfo",
    "MemoryFigures",
    "MemoryInfo",
    "MemoryRow",
    "PassInfo",
    "PauseInfo",
    "ResultInfo",
    "SavedValueInfo",
    "StateError",
    "StatementInfo",
    "StepInfo",
    "TensorInfo",
    "Value",
    "readable_addresses",
]

#: a tensor value as the kernel sends it: a number, nested lists of numbers, a
#: one-line summary string of a big tensor, or None
Value = Any

_EMPTY: Mapping[str, Any] = MappingProxyType({})

#: the address the kernel writes in place of an object's (restricted mode's print, and
#: every expression value: ``<MulBackward0 object at 0x000000000000>``)
_HIDDEN_ADDRESS = re.compile(r" at 0x0{12}(?![0-9a-fA-F])")
#: what the window and ``gradviz run`` show instead: the address left out on purpose,
#: in the form Python prints (zeros read as a broken or null pointer)
SHOWN_ADDRESS = " at 0x\u2026"


def readable_addresses(text: str) -> str:
    """``text`` with the kernel's hidden addresses written as left out on purpose:
    ``<MulBackward0 object at 0x…>`` (the kernel never gives a script's reader an
    object's real address in restricted mode, nor in any expression's value).

    For what is shown (``gradviz run``'s text report, the Output panel): the decoded
    state keeps the kernel's text as it came."""
    return _HIDDEN_ADDRESS.sub(SHOWN_ADDRESS, text) if " at 0x0" in text else text

T = TypeVar("T")


class StateError(ValueError):
    """A kernel reply field of the wrong type; ``field`` names it (``tensors['x'].shape``)."""

    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}")
        self.field = field


# --- checking one field -------------------------------------------------------------------


def _type_name(value: Any) -> str:
    return "None" if value is None else type(value).__name__


def _fail(path: str, expected: str, value: Any) -> StateError:
    return StateError(path, f"expected {expected}, got {_type_name(value)} ({value!r:.60})")


def _obj(value: Any, path: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise _fail(path, "an object", value)
    return value


def _int(d: Mapping[str, Any], key: str, path: str, default: int = 0) -> int:
    v = d.get(key, default)
    if isinstance(v, bool) or not isinstance(v, int):
        raise _fail(f"{path}.{key}", "int", v)
    return v


def _opt_int(d: Mapping[str, Any], key: str, path: str) -> int | None:
    v = d.get(key)
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int):
        raise _fail(f"{path}.{key}", "int or None", v)
    return v


def _num(d: Mapping[str, Any], key: str, path: str, default: float = 0.0) -> float:
    v = d.get(key, default)
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise _fail(f"{path}.{key}", "a number", v)
    return v


def _opt_num(d: Mapping[str, Any], key: str, path: str) -> float | None:
    v = d.get(key)
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise _fail(f"{path}.{key}", "a number or None", v)
    return v


def _str(d: Mapping[str, Any], key: str, path: str, default: str = "") -> str:
    v = d.get(key, default)
    if not isinstance(v, str):
        raise _fail(f"{path}.{key}", "str", v)
    return v


def _opt_str(d: Mapping[str, Any], key: str, path: str) -> str | None:
    v = d.get(key)
    if v is not None and not isinstance(v, str):
        raise _fail(f"{path}.{key}", "str or None", v)
    return v


def _bool(d: Mapping[str, Any], key: str, path: str, default: bool = False) -> bool:
    v = d.get(key, default)
    if not isinstance(v, bool):
        raise _fail(f"{path}.{key}", "bool", v)
    return v


def _seq(d: Mapping[str, Any], key: str, path: str) -> Sequence[Any]:
    """A list field (missing or None: empty)."""
    v = d.get(key)
    if v is None:
        return ()
    if not isinstance(v, (list, tuple)):
        raise _fail(f"{path}.{key}", "a list", v)
    return v


def _strs(d: Mapping[str, Any], key: str, path: str) -> tuple[str, ...]:
    items = _seq(d, key, path)
    for i, item in enumerate(items):
        if not isinstance(item, str):
            raise _fail(f"{path}.{key}[{i}]", "str", item)
    return tuple(items)


def _ints(d: Mapping[str, Any], key: str, path: str) -> tuple[int, ...]:
    items = _seq(d, key, path)
    for i, item in enumerate(items):
        if isinstance(item, bool) or not isinstance(item, int):
            raise _fail(f"{path}.{key}[{i}]", "int", item)
    return tuple(items)


def _check_value(v: Any, path: str) -> Value:
    """A tensor value: checked at the top level only (nested lists go to fmt_value as sent)."""
    if v is None or isinstance(v, (bool, int, float, str, list, tuple)):
        return v
    raise _fail(path, "a number, list, string or None", v)


def _values(d: Mapping[str, Any], key: str, path: str) -> tuple[Value, ...]:
    items = _seq(d, key, path)
    for i, item in enumerate(items):
        _check_value(item, f"{path}.{key}[{i}]")
    return tuple(items)


def _map(d: Mapping[str, Any], key: str, path: str) -> Mapping[str, Any]:
    v = d.get(key)
    if v is None:
        return _EMPTY
    return _obj(v, f"{path}.{key}")


def _key(path: str, name: str) -> str:
    return f"{path}[{name!r}]"


# --- memoizing by identity ----------------------------------------------------------------


class _Memo:
    """(what it decodes to, ``id(obj)``) -> (obj, decoded), least recently used first;
    holding ``obj`` keeps its id from being reused while the entry lives."""

    def __init__(self, size: int):
        self.size = size
        self._items: OrderedDict[tuple[str, int], tuple[Any, Any]] = OrderedDict()
        self.hits = 0
        self.misses = 0

    def get(self, tag: str, obj: Any, decode: Callable[[Any], T]) -> T:
        key = (tag, id(obj))
        hit = self._items.get(key)
        if hit is not None and hit[0] is obj:
            self._items.move_to_end(key)
            self.hits += 1
            return hit[1]
        value = decode(obj)
        self.misses += 1
        self._items[key] = (obj, value)
        if len(self._items) > self.size:
            self._items.popitem(last=False)
        return value

    def clear(self) -> None:
        self._items.clear()


#: one memo per kind of sub-object: the top-level parts of the last few dozen states (a
#: timeline jump back finds them), and the items of every result and pass of a long loop
_MEMOS: dict[str, _Memo] = {
    "part": _Memo(256),
    "tensor": _Memo(8192),
    "result": _Memo(8192),
    "pass": _Memo(4096),
}


def clear_memos() -> None:
    """Forget every decoded object (tests; a window that drops its whole timeline)."""
    for memo in _MEMOS.values():
        memo.clear()


def _memo(kind: str, obj: Any, decode: Callable[[Any], T], tag: str | None = None) -> T:
    """``decode(obj)``, once per object: ``kind`` picks the memo, ``tag`` (default: the
    kind) says what ``obj`` decodes to, so one object read two ways is decoded twice."""
    return _MEMOS[kind].get(tag or kind, obj, decode)


# --- the models ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StatementInfo:
    """One top-level statement of the script."""

    index: int
    line: int
    end_line: int
    source: str
    ran: bool = False

    @classmethod
    def from_wire(cls, d: Any, path: str = "statement") -> StatementInfo:
        d = _obj(d, path)
        line = _int(d, "line", path)
        return cls(
            index=_int(d, "index", path),
            line=line,
            end_line=_int(d, "end_line", path, line),
            source=_str(d, "source", path),
            ran=_bool(d, "ran", path),
        )


def error_from_wire(d: Any, path: str = "error") -> ErrorInfo:
    """A statement's error (:class:`gradviz.graph.results.ErrorInfo`) read off the wire."""
    d = _obj(d, path)
    return ErrorInfo(
        type=_str(d, "type", path, "Error"),
        message=_str(d, "message", path),
        explanation=_opt_str(d, "explanation", path),
        line=_opt_int(d, "line", path),
        limit=_opt_str(d, "limit", path),
    )


def _memory_fields(d: Mapping[str, Any], path: str) -> dict[str, Any]:
    return {
        "allocated_bytes": _num(d, "allocated_bytes", path, 0),
        "saved_bytes": _num(d, "saved_bytes", path, 0),
        "live_bytes": _num(d, "live_bytes", path, 0),
        "cuda_allocated": _opt_num(d, "cuda_allocated", path),
        "cuda_max_allocated": _opt_num(d, "cuda_max_allocated", path),
        "cuda_reserved": _opt_num(d, "cuda_reserved", path),
    }


def memory_from_wire(d: Any, path: str = "memory") -> MemoryFigures:
    """A statement's memory figures (:class:`gradviz.graph.results.MemoryFigures`)."""
    return MemoryFigures(**_memory_fields(_obj(d, path), path))


@dataclass(frozen=True, slots=True)
class ResultInfo:
    """What one executed statement did: output, value, warnings, error, memory, passes."""

    index: int
    line: int
    end_line: int
    source: str
    ok: bool
    error: ErrorInfo | None
    warnings: tuple[str, ...]
    output: str
    #: the repr of an expression statement's value (None: no value to show)
    value: str | None
    allocated_bytes: int
    memory: MemoryFigures
    duration_s: float
    #: indices into the state's backward_passes of the passes this statement ran
    passes: tuple[int, ...] = ()

    @classmethod
    def from_wire(cls, d: Any, path: str = "result") -> ResultInfo:
        d = _obj(d, path)
        error = d.get("error")
        memory = d.get("memory")
        line = _int(d, "line", path)
        return cls(
            index=_int(d, "index", path),
            line=line,
            end_line=_int(d, "end_line", path, line),
            source=_str(d, "source", path),
            ok=_bool(d, "ok", path, error is None),
            error=None if error is None else error_from_wire(error, f"{path}.error"),
            warnings=_strs(d, "warnings", path),
            output=_str(d, "output", path),
            value=_opt_str(d, "value", path),
            allocated_bytes=int(_num(d, "allocated_bytes", path, 0)),
            memory=MemoryFigures() if memory is None
            else memory_from_wire(memory, f"{path}.memory"),
            duration_s=_num(d, "duration_s", path, 0.0),
            passes=_ints(d, "passes", path),
        )


@dataclass(frozen=True, slots=True)
class TensorInfo:
    """One script variable holding a tensor (or a numpy array), as the Tensors panel lists it."""

    name: str
    shape: tuple[int, ...] | None
    dtype: str
    device: str
    value: Value
    requires_grad: bool
    is_leaf: bool
    retains_grad: bool
    grad_fn: str | None
    grad: Value
    #: None for inference tensors, which keep no version counter
    version: int | None
    #: the storage group (``S3``): tensors with the same one share memory
    storage: str | None
    nbytes: int
    #: the graph node drawn for it
    node: str | None = None
    kind: str = "tensor"  # or "ndarray"

    @classmethod
    def from_wire(cls, d: Any, path: str = "tensor", name: str = "") -> TensorInfo:
        d = _obj(d, path)
        shape = d.get("shape")
        if shape is not None:
            shape = _ints(d, "shape", path)
        return cls(
            name=_str(d, "name", path, name),
            shape=shape,
            dtype=_str(d, "dtype", path),
            device=_str(d, "device", path),
            value=_check_value(d.get("value"), f"{path}.value"),
            requires_grad=_bool(d, "requires_grad", path),
            is_leaf=_bool(d, "is_leaf", path, True),
            retains_grad=_bool(d, "retains_grad", path),
            grad_fn=_opt_str(d, "grad_fn", path),
            grad=_check_value(d.get("grad"), f"{path}.grad"),
            version=_opt_int(d, "version", path),
            storage=_opt_str(d, "storage", path),
            nbytes=_int(d, "nbytes", path, 0),
            node=_opt_str(d, "node", path),
            kind=_str(d, "kind", path, "tensor"),
        )


@dataclass(frozen=True, slots=True)
class SavedValueInfo:
    """A tensor a node had saved for its backward, as the pass that ran it used it."""

    label: str
    value: Value = None
    shape: tuple[int, ...] | None = None
    #: the script's names for the tensor saved (``x``)
    vars: tuple[str, ...] = ()

    @classmethod
    def from_wire(cls, d: Any, path: str = "saved") -> SavedValueInfo:
        d = _obj(d, path)
        shape = d.get("shape")
        return cls(
            label=_str(d, "label", path),
            value=_check_value(d.get("value"), f"{path}.value"),
            shape=None if shape is None else _ints(d, "shape", path),
            vars=_strs(d, "vars", path),
        )


@dataclass(frozen=True, slots=True)
class StepInfo:
    """One node the engine ran during a backward pass."""

    node: str
    label: str
    #: the gradients the node received (one per output of its forward op)
    grad_outputs: tuple[Value, ...] = ()
    #: the gradients it passed on, aligned with ``targets``
    grad_inputs: tuple[Value, ...] = ()
    #: the script's names for the node (its output tensor's, or an AccumulateGrad's leaf)
    vars: tuple[str, ...] = ()
    #: the next nodes, aligned with grad_inputs (None where an input needs no grad)
    targets: tuple[str | None, ...] = ()
    #: the saved tensors as this step used them, when the kernel records them (None: not
    #: recorded)
    saved: tuple[SavedValueInfo, ...] | None = None

    @property
    def is_accumulate(self) -> bool:
        return self.label == "AccumulateGrad"

    @classmethod
    def from_wire(cls, d: Any, path: str = "step") -> StepInfo:
        d = _obj(d, path)
        targets = _seq(d, "targets", path)
        for i, t in enumerate(targets):
            if t is not None and not isinstance(t, str):
                raise _fail(f"{path}.targets[{i}]", "str or None", t)
        saved = d.get("saved")
        if saved is not None:
            items = _seq(d, "saved", path)
            saved = tuple(
                SavedValueInfo.from_wire(s, f"{path}.saved[{i}]") for i, s in enumerate(items)
            )
        return cls(
            node=_str(d, "node", path),
            label=_str(d, "label", path),
            grad_outputs=_values(d, "grad_outputs", path),
            grad_inputs=_values(d, "grad_inputs", path),
            vars=_strs(d, "vars", path),
            targets=tuple(targets),
            saved=saved,
        )


@dataclass(frozen=True, slots=True)
class PassInfo:
    """One ``backward()`` / ``autograd.grad`` call and the steps the engine took."""

    root: tuple[str, ...] = ()
    retain_graph: bool = False
    steps: tuple[StepInfo, ...] = ()
    statement: int | None = None
    kind: str = "backward"  # or "grad"
    error: str | None = None
    #: leaf name -> its .grad right after this pass
    leaf_grads: Mapping[str, Value] = field(default_factory=lambda: _EMPTY)
    create_graph: bool = False
    #: the call's own line (inside loops and functions too) and the innermost loop's
    #: 1-based iteration
    line: int | None = None
    iteration: int | None = None
    #: the graph the pass ran over, as it was when the pass started
    nodes: tuple[str, ...] = ()
    labels: tuple[str, ...] = ()
    edges: tuple[tuple[str, str], ...] = ()
    #: node id -> the script's names for it
    names: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: _EMPTY)
    #: the wire dict it was decoded from (for the core's functions that read passes as
    #: JSON: gradviz.graph.chain_rule)
    raw: Mapping[str, Any] = field(
        default_factory=lambda: _EMPTY, compare=False, repr=False
    )

    @classmethod
    def of(cls, bpass: PassInfo | Mapping[str, Any]) -> PassInfo:
        """``bpass`` typed: a wire dict is decoded once (the state's own passes share it)."""
        if isinstance(bpass, PassInfo):
            return bpass
        return _memo("pass", bpass, lambda d: cls.from_wire(d, "pass"))

    def step_of(self, node: str) -> StepInfo | None:
        """The step that ran ``node`` (None when the pass did not reach it)."""
        for step in self.steps:
            if step.node == node:
                return step
        return None

    def where(self, statements: Sequence[StatementInfo] = ()) -> int | None:
        """The line of the call: its own, else its statement's."""
        if self.line is not None:
            return self.line
        if self.statement is not None and 0 <= self.statement < len(statements):
            return statements[self.statement].line
        return None

    @classmethod
    def from_wire(cls, d: Any, path: str = "pass") -> PassInfo:
        d = _obj(d, path)
        leaf_grads = _map(d, "leaf_grads", path)
        for name, value in leaf_grads.items():
            _check_value(value, f"{path}.leaf_grads{_key('', name)}")
        edges = []
        for i, e in enumerate(_seq(d, "edges", path)):
            if (
                not isinstance(e, (list, tuple))
                or len(e) != 2
                or not all(isinstance(x, str) for x in e)
            ):
                raise _fail(f"{path}.edges[{i}]", "a [source, target] pair of str", e)
            edges.append((e[0], e[1]))
        names_raw = _map(d, "names", path)
        names = {
            str(k): _strs(names_raw, k, f"{path}.names") for k in names_raw
        }
        return cls(
            root=_strs(d, "root", path),
            retain_graph=_bool(d, "retain_graph", path),
            steps=tuple(
                StepInfo.from_wire(s, f"{path}.steps[{i}]")
                for i, s in enumerate(_seq(d, "steps", path))
            ),
            statement=_opt_int(d, "statement", path),
            kind=_str(d, "kind", path, "backward"),
            error=_opt_str(d, "error", path),
            leaf_grads=MappingProxyType(dict(leaf_grads)),
            create_graph=_bool(d, "create_graph", path),
            line=_opt_int(d, "line", path),
            iteration=_opt_int(d, "iteration", path),
            nodes=_strs(d, "nodes", path),
            labels=_strs(d, "labels", path),
            edges=tuple(edges),
            names=MappingProxyType(names),
            raw=d,
        )


@dataclass(frozen=True, slots=True)
class GradEventInfo:
    """A leaf's .grad after a backward pass, a zero_(), an assignment or a reset to None."""

    kind: str  # "backward", "zero", "set", "none"
    statement: int | None = None
    value: Value = None
    #: the backward pass (an index into the state's backward_passes) for kind "backward"
    pass_index: int | None = None

    @classmethod
    def from_wire(cls, d: Any, path: str = "event") -> GradEventInfo:
        d = _obj(d, path)
        return cls(
            kind=_str(d, "kind", path, "backward"),
            statement=_opt_int(d, "statement", path),
            value=_check_value(d.get("value"), f"{path}.value"),
            pass_index=_opt_int(d, "pass_index", path),
        )


@dataclass(frozen=True, slots=True)
class MemoryRow(MemoryFigures):
    """The memory figures after one executed statement."""

    index: int = 0
    line: int = 0

    @classmethod
    def from_wire(cls, d: Any, path: str = "memory.statements[]") -> MemoryRow:
        d = _obj(d, path)
        return cls(
            index=_int(d, "index", path),
            line=_int(d, "line", path),
            **_memory_fields(d, path),
        )


@dataclass(frozen=True, slots=True)
class MemoryInfo:
    """Per executed statement its figures, and the totals now."""

    statements: tuple[MemoryRow, ...] = ()
    #: ``allocated_bytes`` summed over statements; ``saved_bytes``/``live_bytes`` now;
    #: the cuda figures on a cuda device (a key is absent when not measured)
    totals: Mapping[str, int | None] = field(default_factory=lambda: _EMPTY)

    @classmethod
    def from_wire(cls, d: Any, path: str = "memory") -> MemoryInfo:
        d = _obj(d, path)
        totals = _map(d, "totals", path)
        for k in totals:
            _opt_num(totals, k, f"{path}.totals")
        return cls(
            statements=tuple(
                MemoryRow.from_wire(r, f"{path}.statements[{i}]")
                for i, r in enumerate(_seq(d, "statements", path))
            ),
            totals=MappingProxyType(dict(totals)),
        )


@dataclass(frozen=True, slots=True)
class FrameInfo:
    """A script function being run: ``Net.forward`` called from ``call_line``."""

    name: str
    call_line: int

    @property
    def title(self) -> str:
        """``forward (Net)`` for a method, ``train`` for a plain function."""
        owner, _, method = self.name.rpartition(".")
        return f"{method} ({owner})" if owner else self.name


@dataclass(frozen=True, slots=True)
class PauseInfo:
    """Where a paused statement stands (the kernel's ``paused``)."""

    statement: int
    line: int
    depth: int = 0
    #: the innermost running loop: 1-based iteration and its length (None: unknown)
    iteration: int | None = None
    iterations: int | None = None
    #: outermost first, as the kernel sends them
    frames: tuple[FrameInfo, ...] = ()

    @property
    def iteration_text(self) -> str:
        """``iteration 2 of 3`` (``iteration 4`` when the loop's length is unknown)."""
        if self.iteration is None:
            return ""
        if self.iterations is None:
            return f"iteration {self.iteration}"
        return f"iteration {self.iteration} of {self.iterations}"

    @property
    def stack_text(self) -> str:
        """Innermost frame first: ``forward (Net) ← line 23``; empty at the top level."""
        return "   ·   ".join(f"{f.title} ← line {f.call_line}" for f in reversed(self.frames))

    @property
    def frame(self) -> str | None:
        """The innermost frame's qualified name (``Net.forward``), None in the script body."""
        return self.frames[-1].name if self.frames else None

    @classmethod
    def from_wire(cls, d: Any, path: str = "paused") -> PauseInfo:
        d = _obj(d, path)
        if "line" not in d:
            raise StateError(f"{path}.line", "missing")
        frames = []
        for i, f in enumerate(_seq(d, "frames", path)):
            fp = f"{path}.frames[{i}]"
            f = _obj(f, fp)
            frames.append(FrameInfo(_str(f, "name", fp), _int(f, "call_line", fp)))
        return cls(
            statement=_int(d, "statement", path, -1),
            line=_int(d, "line", path),
            depth=_int(d, "depth", path, 0),
            iteration=_opt_int(d, "iteration", path),
            iterations=_opt_int(d, "iterations", path),
            frames=tuple(frames),
        )

    @classmethod
    def of(cls, pause: PauseInfo | Mapping[str, Any] | None) -> PauseInfo | None:
        """``pause`` typed (a wire dict decoded once); None stays None."""
        if pause is None or isinstance(pause, PauseInfo):
            return pause
        return _memo("part", pause, PauseInfo.from_wire, "paused")

    @classmethod
    def from_state(cls, state: Any) -> PauseInfo | None:
        """The pause of a state (an AppState or a wire dict); None when not paused."""
        if isinstance(state, AppState):
            return state.paused
        raw = (state or {}).get("paused")
        if raw is None:
            return None
        return _memo("part", raw, PauseInfo.from_wire, "paused")


@dataclass(frozen=True, slots=True)
class DotGraphInfo:
    """A ``make_dot(...)`` call of the script: its roots' labels and nodes."""

    line: int
    statement: int | None
    roots: tuple[str, ...]
    root_nodes: tuple[str | None, ...]
    #: the params given: name -> the tensor's node id
    params: Mapping[str, str]

    @classmethod
    def from_wire(cls, d: Any, path: str = "make_dot") -> DotGraphInfo:
        d = _obj(d, path)
        root_nodes = _seq(d, "root_nodes", path)
        for i, n in enumerate(root_nodes):
            if n is not None and not isinstance(n, str):
                raise _fail(f"{path}.root_nodes[{i}]", "str or None", n)
        params = _map(d, "params", path)
        for k in params:
            _str(params, k, f"{path}.params")
        return cls(
            line=_int(d, "line", path),
            statement=_opt_int(d, "statement", path),
            roots=_strs(d, "roots", path),
            root_nodes=tuple(root_nodes),
            params=MappingProxyType(dict(params)),
        )


# --- the whole state ----------------------------------------------------------------------


def _tensors(raw: Any) -> Mapping[str, TensorInfo]:
    d = _obj(raw, "tensors")
    out: dict[str, TensorInfo] = {}
    for name, t in d.items():
        key = str(name)

        def decode(value: Any, key: str = key) -> TensorInfo:
            return TensorInfo.from_wire(value, _key("tensors", key), key)

        out[key] = _memo("tensor", t, decode)
    return MappingProxyType(out)


def _items(kind: str, path: str, decode: Callable[[Any, str], T]) -> Callable[[Any], tuple[T, ...]]:
    """A list decoder whose items are memoized one by one (a list that grew shares its
    old items' decoded objects)."""

    def run(raw: Any) -> tuple[T, ...]:
        if not isinstance(raw, (list, tuple)):
            raise _fail(path, "a list", raw)
        out: list[T] = []
        for i, item in enumerate(raw):

            def one(value: Any, i: int = i) -> T:
                return decode(value, f"{path}[{i}]")

            out.append(_memo(kind, item, one))
        return tuple(out)

    return run


def _plain_list(path: str, decode: Callable[[Any, str], T]) -> Callable[[Any], tuple[T, ...]]:
    def run(raw: Any) -> tuple[T, ...]:
        if not isinstance(raw, (list, tuple)):
            raise _fail(path, "a list", raw)
        return tuple(decode(x, f"{path}[{i}]") for i, x in enumerate(raw))

    return run


def _grad_events(raw: Any) -> Mapping[str, tuple[GradEventInfo, ...]]:
    d = _obj(raw, "grad_events")
    out = {}
    for name, events in d.items():
        path = _key("grad_events", name)
        if not isinstance(events, (list, tuple)):
            raise _fail(path, "a list", events)
        out[str(name)] = tuple(
            GradEventInfo.from_wire(e, f"{path}[{i}]") for i, e in enumerate(events)
        )
    return MappingProxyType(out)


def _grad_history(raw: Any) -> Mapping[str, tuple[Value, ...]]:
    d = _obj(raw, "grad_history")
    out = {}
    for name, values in d.items():
        path = _key("grad_history", name)
        if not isinstance(values, (list, tuple)):
            raise _fail(path, "a list", values)
        for i, v in enumerate(values):
            _check_value(v, f"{path}[{i}]")
        out[str(name)] = tuple(values)
    return MappingProxyType(out)


def _graph(raw: Any) -> Mapping[str, Any]:
    d = _obj(raw, "graph")
    for key in ("nodes", "edges"):
        if not isinstance(d.get(key, []), (list, tuple)):
            raise _fail(f"graph.{key}", "a list", d.get(key))
    return d


def _parse_error(raw: Any) -> ErrorInfo:
    return error_from_wire(raw, "parse_error")


def _node_index(graph: Mapping[str, Any]) -> Mapping[str, Mapping[str, Any]]:
    return MappingProxyType({str(n["id"]): n for n in node_dicts(graph)})


def _edge_records(graph: Mapping[str, Any]) -> Sequence[Edge]:
    return tuple(Edge(e) for e in edge_dicts(graph))


def remember_node_index(graph: Mapping[str, Any], nodes: Mapping[str, Mapping[str, Any]]) -> None:
    """Make ``nodes`` (id -> node dict, exactly ``graph``'s nodes in its order, held
    unchanged from now on) what :attr:`AppState.nodes_by_id` gives for ``graph``: the
    window's delta decoder has built it already (indexing 10,000 nodes again cost 11 ms
    a step)."""
    _MEMOS["part"].get("node_index", graph, lambda _graph: MappingProxyType(nodes))


_statements = _plain_list("statements", StatementInfo.from_wire)
_results = _items("result", "results", ResultInfo.from_wire)
_new_results = _items("result", "new_results", ResultInfo.from_wire)
_passes = _items("pass", "backward_passes", PassInfo.from_wire)
_dots = _plain_list("make_dot", DotGraphInfo.from_wire)


def _part(state: Mapping[str, Any], key: str, decode: Callable[[Any], T], empty: T) -> T:
    raw = state.get(key)
    if raw is None:
        return empty
    return _memo("part", raw, decode, key)


_NO_GRAPH: Mapping[str, Any] = MappingProxyType({"nodes": [], "edges": []})


@dataclass(frozen=True, slots=True)
class AppState:
    """The kernel's state (or a saved snapshot's), typed.

    ``raw`` is the wire dict it was decoded from: what a saved snapshot writes,
    and what code not yet reading the typed fields still reads.
    """

    raw: Mapping[str, Any]
    device: str = "cpu"
    #: the index of the next statement to run
    cursor: int = 0
    parse_error: ErrorInfo | None = None
    statements: tuple[StatementInfo, ...] = ()
    #: every statement executed so far, in order
    results: tuple[ResultInfo, ...] = ()
    #: the statements this reply executed
    new_results: tuple[ResultInfo, ...] = ()
    tensors: Mapping[str, TensorInfo] = field(default_factory=lambda: _EMPTY)
    #: the autograd graph as the kernel sends it: ``{"nodes": [...], "edges": [...]}``
    #: (node and edge dicts are the canvas's networkx attributes; not converted)
    graph_data: Mapping[str, Any] = field(default_factory=lambda: _NO_GRAPH)
    backward_passes: tuple[PassInfo, ...] = ()
    make_dot: tuple[DotGraphInfo, ...] = ()
    memory: MemoryInfo = field(default_factory=MemoryInfo)
    #: leaf name -> its .grad after each backward pass
    grad_history: Mapping[str, tuple[Value, ...]] = field(default_factory=lambda: _EMPTY)
    #: leaf name -> every change of its .grad
    grad_events: Mapping[str, tuple[GradEventInfo, ...]] = field(default_factory=lambda: _EMPTY)
    paused: PauseInfo | None = None
    #: the paused frame's local names (``Net.forward.x``), listed first by the Tensors panel
    frame_locals: tuple[str, ...] = ()
    #: node id -> [x, y], as the kernel laid the graph out (the wire's own dict)
    positions: Mapping[str, Sequence[float]] = field(default_factory=lambda: _EMPTY)
    at_end: bool = False
    #: the leaves a zero_grad request zeroed (None: not a zero_grad reply)
    zeroed: tuple[str, ...] | None = None
    #: statement indices before which the kernel zeroes every .grad
    zero_points: tuple[int, ...] = ()
    #: a saved snapshot shown read-only (no statements to step)
    read_only: bool = False
    #: a snapshot's own format version
    version: int | None = None
    #: seconds the kernel spent laying the graph out
    layout_s: float | None = None

    # --- decoding ---------------------------------------------------------------------

    @classmethod
    def from_wire(cls, raw: Mapping[str, Any]) -> AppState:
        """Decode (and check) a wire state: sub-dicts already decoded (shared with an
        earlier state, or this one decoded again) give the very same sub-objects, so a
        decode costs a lookup per top-level field plus the work on what changed. The
        top-level dict itself is read afresh each time (a caller may set a field on it)."""
        if isinstance(raw, AppState):
            return raw
        return cls._decode(_obj(raw, "state"))

    @classmethod
    def of(cls, state: AppState | Mapping[str, Any] | None) -> AppState:
        """``state`` as an AppState: decoded when it is a wire dict, empty when None."""
        if isinstance(state, AppState):
            return state
        if state is None:
            return _EMPTY_STATE
        return cls.from_wire(state)

    @classmethod
    def _decode(cls, d: Mapping[str, Any]) -> AppState:
        parse_error = d.get("parse_error")
        zeroed = d.get("zeroed")
        graph = d.get("graph")
        positions = d.get("positions")
        return cls(
            raw=d,
            device=_str(d, "device", "state", "cpu") if d.get("device") is not None else "cpu",
            cursor=_int(d, "cursor", "state", 0),
            parse_error=None if parse_error is None
            else _memo("part", parse_error, _parse_error, "parse_error"),
            statements=_part(d, "statements", _statements, ()),
            results=_part(d, "results", _results, ()),
            new_results=_part(d, "new_results", _new_results, ()),
            tensors=_part(d, "tensors", _tensors, _EMPTY),
            graph_data=_NO_GRAPH if graph is None else _graph(graph),
            backward_passes=_part(d, "backward_passes", _passes, ()),
            make_dot=_part(d, "make_dot", _dots, ()),
            memory=_part(d, "memory", MemoryInfo.from_wire, _EMPTY_MEMORY),
            grad_history=_part(d, "grad_history", _grad_history, _EMPTY),
            grad_events=_part(d, "grad_events", _grad_events, _EMPTY),
            paused=_part(d, "paused", PauseInfo.from_wire, None),
            frame_locals=_strs(d, "frame_locals", "state"),
            positions=_EMPTY if positions is None else _obj(positions, "positions"),
            at_end=_bool(d, "at_end", "state"),
            zeroed=None if zeroed is None else _strs(d, "zeroed", "state"),
            zero_points=_ints(d, "zero_points", "state"),
            read_only=_bool(d, "read_only", "state"),
            version=_opt_int(d, "version", "state"),
            layout_s=_opt_num(d, "layout_s", "state"),
        )

    # --- reading -----------------------------------------------------------------------

    @property
    def graph_nodes(self) -> Sequence[Mapping[str, Any]]:
        return self.graph_data.get("nodes") or ()

    @property
    def graph_edges(self) -> Sequence[Mapping[str, Any]]:
        return self.graph_data.get("edges") or ()

    @property
    def nodes_by_id(self) -> Mapping[str, Mapping[str, Any]]:
        """The graph's node dicts by id (built once per graph)."""
        return _memo("part", self.graph_data, _node_index, "node_index")

    def node(self, node_id: str) -> Mapping[str, Any] | None:
        return self.nodes_by_id.get(node_id)

    def record(self, node_id: str) -> Node | None:
        """The node ``node_id`` as a typed record (a face over its dict), or None."""
        attrs = self.nodes_by_id.get(node_id)
        return None if attrs is None else Node(attrs, node_id)

    @property
    def edge_records(self) -> Sequence[Edge]:
        """The graph's edges as typed records (built once per graph)."""
        return _memo("part", self.graph_data, _edge_records, "edge_records")

    def statement(self, index: int | None) -> StatementInfo | None:
        if index is None or not 0 <= index < len(self.statements):
            return None
        return self.statements[index]

    def statement_line(self, index: int | None) -> int | None:
        s = self.statement(index)
        return s.line if s else None

    def statement_source(self, index: int | None) -> str:
        s = self.statement(index)
        return s.source if s else ""

    def pass_line(self, index: int) -> int | None:
        """The line of backward pass ``index``'s call (inside a loop body too)."""
        if not 0 <= index < len(self.backward_passes):
            return None
        return self.backward_passes[index].where(self.statements)



_EMPTY_MEMORY = MemoryInfo()
_EMPTY_STATE = AppState(raw=MappingProxyType({}))


# --- the kernel client's answers --------------------------------------------------------


def _loose_text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


@dataclass(frozen=True, slots=True)
class Answer:
    """What the window's kernel client answered one request, read once: the kernel's
    reply (its ``state`` already delta-decoded, with the ``changes`` the delta named),
    or the client's own failure (the request was stopped, the kernel crashed or ran
    past its time limit, the request was cancelled behind one of those)."""

    ok: bool = False
    message: str | None = None
    #: the whole wire state (a dict AppState.of decodes), None when the reply has none
    state: dict[str, Any] | None = None
    #: what the delta changed (gradviz.graph.delta.GraphChanges), None for a whole state
    changes: Any = None
    #: where and why the intent stopped, as the wire writes it (protocol.Stop.from_wire)
    stop: Any = None
    stopped: bool = False
    crashed: bool = False
    timed_out: bool = False

    @property
    def cancelled(self) -> bool:
        """Queued behind a request that was stopped (or a kernel that crashed)."""
        return self.message == "cancelled"

    @property
    def handled_elsewhere(self) -> bool:
        """Stopped, crashed or cancelled: the client's stop and crash signals say what
        happened, so the reply itself shows nothing."""
        return self.stopped or self.crashed or self.cancelled

    @classmethod
    def of(cls, message: Mapping[str, Any]) -> Answer:
        state = message.get("state")
        return cls(
            ok=message.get("ok") is True,
            message=_loose_text(message.get("message")),
            state=state if isinstance(state, dict) else None,
            changes=message.get("changes"),
            stop=message.get("stop"),
            stopped=message.get("stopped") is True,
            crashed=message.get("crashed") is True,
            timed_out=message.get("timed_out") is True,
        )


@dataclass(frozen=True, slots=True)
class StoppedStatement:
    """A statement the user (Stop) or the time limit stopped: the window marks it, the
    guide says why, and everything before it is kept."""

    index: int | None
    line: int | None
    seconds: float
    #: the time limit's message; None when the user pressed Stop
    message: str | None = None


@dataclass(frozen=True, slots=True)
class PhaseInfo:
    """The kernel's last phase message as the client saw it (the watchdog's view of
    what was running): the statement's index and the limit it ran under."""

    index: int | None = None
    limit_s: float | None = None
    line: int | None = None

    @classmethod
    def of(cls, phase: Any) -> PhaseInfo:
        if not isinstance(phase, Mapping):
            return cls()
        limit = phase.get("limit_s")
        seconds = float(limit) if isinstance(limit, (int, float)) and not isinstance(limit, bool) else None
        return cls(
            index=int_or_none(phase.get("index")),
            limit_s=seconds if seconds is not None and 0 <= seconds < 1e9 else None,
            line=int_or_none(phase.get("line")),
        )


@dataclass(frozen=True, slots=True)
class KernelInfo:
    """What a started kernel says it can do (its ready message)."""

    cuda_available: bool = False
    cuda_reason: str = ""
    mode: str | None = None

    @classmethod
    def of(cls, info: Any) -> KernelInfo:
        if not isinstance(info, Mapping):
            return cls()
        mode = info.get("mode")
        return cls(
            cuda_available=info.get("cuda_available") is True,
            cuda_reason=_loose_text(info.get("cuda_reason")) or "",
            mode=mode if mode in ("trusted", "restricted") else None,
        )
