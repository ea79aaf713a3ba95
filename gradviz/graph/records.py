"""The graph's node and edge records, typed once for every view (torch-free, Qt-free).

A node crosses the process border as a JSON object (``docs/snapshot-format.md``) and
lives in the views as the attribute dict of a networkx node. :class:`Node` and
:class:`Edge` read those dicts through one typed face, so a view says ``node.kind is
NodeKind.TENSOR`` or ``node.vars`` instead of ``attrs.get("kind") == "tensor"`` and
``attrs.get("vars") or []``; adding an attribute means one property here.

They wrap the dict rather than copy it: a 100,000-node graph is read by the canvas a
node at a time, and a copy per node would cost more than the reads. The dict is the
one the graph holds (``node.attrs``), so a record always reads the current state.

:class:`NodeKind` and :class:`EdgeKind` are ``str`` enums: a member equals its wire
text (``NodeKind.TENSOR == "tensor"``), so JSON, the schema and the HTML page keep
their strings.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum
from typing import Any


class NodeKind(str, Enum):
    """What a node of the picture stands for."""

    GRAD_FN = "grad_fn"  #: a grad_fn (``MulBackward0``, a custom Function's backward)
    ACCUMULATE_GRAD = "accumulate_grad"  #: where a leaf's gradient is summed into .grad
    TENSOR = "tensor"  #: a tensor the script holds (a variable, a parameter)
    SAVED = "saved"  #: a tensor a grad_fn saved for its backward
    GROUP = "group"  #: a collapsed block of nodes (a module, a chain); views only

    @classmethod
    def of(cls, value: Any) -> NodeKind | None:
        """The kind a wire value names, or None for anything else."""
        return _NODE_KINDS.get(value) if isinstance(value, str) else None

    def __str__(self) -> str:
        return self.value


class EdgeKind(str, Enum):
    """What an edge of the picture says; edges point the way gradients flow."""

    GRAD = "grad"  #: between autograd nodes
    OUTPUT = "output"  #: from a tensor to the grad_fn that made it
    LEAF = "leaf"  #: from AccumulateGrad to its leaf tensor
    SAVED = "saved"  #: from a grad_fn to a tensor it saved

    @classmethod
    def of(cls, value: Any) -> EdgeKind:
        """The kind a wire value names; an edge without a known kind is a grad edge."""
        return _EDGE_KINDS.get(value, EdgeKind.GRAD) if isinstance(value, str) else EdgeKind.GRAD

    def __str__(self) -> str:
        return self.value


_NODE_KINDS: dict[str, NodeKind] = {k.value: k for k in NodeKind}
_EDGE_KINDS: dict[str, EdgeKind] = {k.value: k for k in EdgeKind}
#: the kinds that stand for a tensor's memory (they carry shape, dtype and storage)
TENSOR_KINDS = frozenset({NodeKind.TENSOR, NodeKind.SAVED})


def int_or_none(value: Any) -> int | None:
    """``value`` when it is a plain int (not a bool, not a float), else None: how the
    readers of decoded JSON take an optional count, index or line."""
    return value if type(value) is int else None


class Node:
    """One node's attributes, typed. ``Node(attrs)`` wraps ``attrs`` (a graph's node
    dict or a wire object) without copying it."""

    __slots__ = ("attrs", "_id")

    def __init__(self, attrs: Mapping[str, Any], node_id: str | None = None) -> None:
        self.attrs = attrs
        self._id = node_id

    def __repr__(self) -> str:
        return f"Node({self.id!r}, {self.attrs.get('kind')!r}, {self.label!r})"

    # --- identity -----------------------------------------------------------------------
    @property
    def id(self) -> str:
        if self._id is not None:
            return self._id
        return str(self.attrs.get("id", ""))

    @property
    def kind(self) -> NodeKind | None:
        return NodeKind.of(self.attrs.get("kind"))

    @property
    def kind_text(self) -> str:
        """The kind as the wire writes it ('' when absent), for views that key on text."""
        value = self.attrs.get("kind")
        return value if isinstance(value, str) else ""

    @property
    def is_tensor_like(self) -> bool:
        """A tensor or a saved tensor: a node that stands for memory."""
        return self.kind in TENSOR_KINDS

    # --- what it is called ----------------------------------------------------------------
    @property
    def label(self) -> str:
        value = self.attrs.get("label")
        return "" if value is None else str(value)

    def label_or(self, default: str) -> str:
        """The label, or ``default`` where the node has none."""
        value = self.attrs.get("label")
        return default if value is None or value == "" else str(value)

    @property
    def vars(self) -> list[str]:
        """The script's names bound to this node (a grad_fn's outputs, a leaf's names)."""
        value = self.attrs.get("vars")
        return [str(v) for v in value] if value else []

    @property
    def module(self) -> str | None:
        value = self.attrs.get("module")
        return str(value) if value else None

    # --- the tensor it stands for ---------------------------------------------------------
    @property
    def shape(self) -> list[int] | None:
        value = self.attrs.get("shape")
        return value if isinstance(value, list) else None

    @property
    def dtype(self) -> str | None:
        return self.attrs.get("dtype")

    @property
    def device(self) -> str | None:
        return self.attrs.get("device")

    @property
    def storage(self) -> str | None:
        """The storage group (equal ids share memory); tensors and saved tensors only."""
        value = self.attrs.get("storage")
        return None if value is None else str(value)

    @property
    def value(self) -> Any:
        return self.attrs.get("value")

    @property
    def is_leaf(self) -> bool:
        return bool(self.attrs.get("is_leaf"))

    @property
    def requires_grad(self) -> bool:
        return bool(self.attrs.get("requires_grad"))

    # --- when and where it was made ---------------------------------------------------------
    @property
    def statement(self) -> int | None:
        """The index of the statement that made the node, or None."""
        return int_or_none(self.attrs.get("statement"))

    @property
    def line(self) -> int | None:
        """The source line that made it (the inner line of a loop or a call)."""
        return int_or_none(self.attrs.get("line"))

    @property
    def new(self) -> bool:
        """It appeared with the last statement."""
        return bool(self.attrs.get("new"))

    # --- the grad_fn's saved state -------------------------------------------------------------
    @property
    def freed(self) -> bool:
        """A grad_fn whose saved tensors a backward pass freed."""
        return bool(self.attrs.get("freed"))

    @property
    def stale(self) -> bool:
        """A saved tensor changed in place since it was saved (or, on a grad_fn, any of
        its saved attributes was)."""
        return bool(self.attrs.get("stale"))

    @property
    def stale_saved(self) -> bool:
        """A saved tensor itself marked stale (``stale is True``, with its versions)."""
        return self.attrs.get("stale") is True

    @property
    def version(self) -> Any:
        return self.attrs.get("version")

    @property
    def expected_version(self) -> Any:
        return self.attrs.get("expected_version")

    @property
    def saved(self) -> dict[str, Any]:
        """A grad_fn's non-tensor saved attributes (``{"exponent": 3}``)."""
        value = self.attrs.get("saved")
        return value if isinstance(value, dict) else {}

    # --- a collapsed group (views only) ------------------------------------------------------
    @property
    def members(self) -> list[str]:
        value = self.attrs.get("members")
        return [str(m) for m in value] if value else []

    @property
    def count(self) -> int | None:
        return int_or_none(self.attrs.get("count"))


class Edge:
    """One edge's attributes, typed (wraps the dict, as :class:`Node` does)."""

    __slots__ = ("attrs",)

    def __init__(self, attrs: Mapping[str, Any]) -> None:
        self.attrs = attrs

    def __repr__(self) -> str:
        return f"Edge({self.source!r} -> {self.target!r}, {self.kind.value})"

    @property
    def source(self) -> str:
        return str(self.attrs.get("source", ""))

    @property
    def target(self) -> str:
        return str(self.attrs.get("target", ""))

    @property
    def kind(self) -> EdgeKind:
        return EdgeKind.of(self.attrs.get("kind"))

    @property
    def new(self) -> bool:
        return bool(self.attrs.get("new"))


def node_dicts(data: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """The raw node objects of a graph's JSON data ([] where it has none)."""
    return _items(data, "nodes")


def edge_dicts(data: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """The raw edge objects of a graph's JSON data ([] where it has none)."""
    return _items(data, "edges")


def _items(data: Mapping[str, Any] | None, key: str) -> list[dict[str, Any]]:
    if not data:
        return []
    value = data.get(key)
    return value if isinstance(value, list) else []
