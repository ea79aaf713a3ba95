"""Which nn.Module built which autograd node: forward hooks that tag new grad_fn nodes.

After a submodule's forward, the nodes between its outputs' grad_fns and its
inputs' grad_fns were created by it. Inner modules' hooks fire first, so the
innermost qualified name wins (``layers.0.linear1`` rather than ``layers.0``).
Used by :func:`gradviz.record` and by the session for modules a script calls.
"""

from __future__ import annotations

import bisect
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import torch

OnNode = Callable[[Any, str], None]


class ModuleTags:
    """Which module built which autograd node, without keeping any node alive.

    A node is known by its birth: its class and its sequence number (torch numbers
    the nodes a thread makes, in order). Holding the nodes instead (their ids are
    only theirs while they live) kept every graph a training loop built until the
    statement ended: each custom Function's ``ctx`` attributes, and the saved tensors
    of every forward pass that had no backward (a CUDA peak-memory reading went up).

    Nodes that an autograd engine's device thread makes (a double backward on CUDA)
    are numbered by that thread: one could share a forward node's birth, and so its
    tag. Module tagging only ever names forward nodes, made on the script's thread.
    """

    __slots__ = ("_by_birth", "_ranges", "_segments")

    def __init__(self) -> None:
        self._by_birth: dict[tuple[type, int], str] = {}
        #: (first, past-last sequence number, qualname) of module calls not yet read
        #: (CallTagger notes them; the next capture reads them, see of())
        self._ranges: deque[tuple[int, int, str]] = deque(maxlen=MAX_RANGES)
        #: the ranges as sorted segments: (starts, names) of the innermost call
        self._segments: tuple[list[int], list[str | None]] | None = None

    @staticmethod
    def birth(fn: Any) -> tuple[type, int] | None:
        try:
            return type(fn), int(fn._sequence_nr())
        except (AttributeError, TypeError, RuntimeError):
            return None

    def tag(self, fn: Any, qualname: str) -> None:
        """The first (innermost) module to claim ``fn`` keeps it."""
        key = self.birth(fn)
        if key is not None:
            self._by_birth.setdefault(key, qualname)

    def add_range(self, first: int, past: int, qualname: str) -> None:
        """A module call made the nodes numbered ``first`` to ``past - 1`` (inner calls
        are noted first, as they end first)."""
        self._ranges.append((first, past, qualname))
        self._segments = None

    def of(self, fn: Any) -> str | None:
        if fn is None or not (self._by_birth or self._ranges):
            return None
        key = self.birth(fn)
        if key is None:
            return None
        found = self._by_birth.get(key)
        if found is None and self._ranges:
            found = self._from_ranges(key[1])
            if found is not None:
                self._by_birth[key] = found  # kept past the ranges (see settle)
        return found

    def _from_ranges(self, number: int) -> str | None:
        if self._segments is None:
            self._segments = _segments(self._ranges)
        starts, names = self._segments
        at = bisect.bisect_right(starts, number) - 1
        return names[at] if at >= 0 else None

    def settle(self) -> None:
        """A capture has read what the noted calls made: their ranges go (a node made
        before and read later is tagged from what a capture keeps, by birth)."""
        self._ranges.clear()
        self._segments = None

    def keep_only(self, fns: Any) -> None:
        """Forget the tags of nodes not in ``fns`` (the graph a capture walked)."""
        if not self._by_birth:
            return  # nothing to forget (reading each node's birth cost 20-50 us)
        keys = {self.birth(fn) for fn in fns}
        self._by_birth = {k: v for k, v in self._by_birth.items() if k in keys}

    def __len__(self) -> int:
        return len(self._by_birth)


def tensors_in(value: Any) -> list[torch.Tensor]:
    """Tensors inside a module's inputs or outputs (tuples, lists, dicts)."""
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in tensors_in(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in tensors_in(v)]
    return []


def tag_call(
    qualname: str, on_node: OnNode, seen_nodes: dict[int, Any], inputs: Any, output: Any
) -> None:
    """After a module's forward: ``on_node`` for each node between its outputs' grad_fns
    and its inputs' grad_fns (what it built) that no inner module claimed first.

    Every map here holds the nodes it keys by id: torch frees a node's Python object
    with its last reference, and a later node's object can take the freed address."""
    stops = {id(fn): fn for fn in (t.grad_fn for t in tensors_in(inputs)) if fn is not None}
    stack = [t.grad_fn for t in tensors_in(output) if t.grad_fn is not None]
    visited: dict[int, Any] = {}
    while stack:
        fn = stack.pop()
        if id(fn) in visited or id(fn) in stops:
            continue
        visited[id(fn)] = fn
        if id(fn) not in seen_nodes:
            seen_nodes[id(fn)] = fn
            on_node(fn, qualname)
        for nxt, _ in fn.next_functions:
            if nxt is not None and type(nxt).__name__ != "AccumulateGrad":
                stack.append(nxt)


def _hook(qualname: str, on_node: OnNode, seen_nodes: dict[int, Any]) -> Any:
    def hook(module: torch.nn.Module, inputs: Any, output: Any) -> None:
        tag_call(qualname, on_node, seen_nodes, inputs, output)

    return hook


#: module-call ranges a session keeps between captures (a longer loop keeps the last)
MAX_RANGES = 200_000


def _segments(ranges: Any) -> tuple[list[int], list[str | None]]:
    """Nested-or-apart ranges as sorted segments, each named by the innermost range
    holding it (None between ranges)."""
    ordered = sorted(ranges, key=lambda r: (r[0], -r[1]))
    starts: list[int] = []
    names: list[str | None] = []
    opened: list[tuple[int, int, str]] = []

    def mark(at: int, name: str | None) -> None:
        if starts and starts[-1] == at:
            names[-1] = name
        else:
            starts.append(at)
            names.append(name)

    def close_until(limit: int | None) -> None:
        while opened and (limit is None or opened[-1][1] <= limit):
            ended = opened.pop()
            mark(ended[1], opened[-1][2] if opened else None)

    for first, past, name in ordered:
        close_until(first)
        opened.append((first, past, name))
        mark(first, name)
    close_until(None)
    return starts, names


#: the sequence number the next autograd node this thread makes will get
_next_sequence_nr: Callable[[], int] = torch._C._autograd._get_sequence_nr


class CallTagger:
    """The tagging of one root module call, for a caller that sees every module call
    start and end (the trusted engine): each call only notes the range of autograd
    sequence numbers its forward used (two reads of a counter) in the session's
    :class:`ModuleTags`; the next capture names each node it reads by the innermost
    range holding its number. Walking each submodule's output graph as it returned
    (what :func:`tagging` does) was most of what gradviz added to a training loop.

    torch numbers the nodes a thread makes in order, and a forward runs on one
    thread, so a node made inside a call has a number in that call's range."""

    __slots__ = ("names", "tags", "_open")

    def __init__(self, names: dict[int, tuple[torch.nn.Module, str]], tags: ModuleTags):
        self.names = names
        self.tags = tags
        self._open: list[int] = [_next_sequence_nr()]  # the root call has begun

    @staticmethod
    def names_under(root: torch.nn.Module, prefix: str) -> dict[int, tuple[torch.nn.Module, str]]:
        """Each module under ``root`` (itself included, as ``prefix``) by id."""
        return {
            id(module): (module, ".".join(p for p in (prefix, qualname) if p))
            for qualname, module in torch.nn.Module.named_modules(root)
        }

    def entered(self) -> None:
        """A call inside the root call starts."""
        self._open.append(_next_sequence_nr())

    def left(self, module: torch.nn.Module, output: Any) -> None:
        """A call ends (inner ones first): the numbers it used are noted."""
        begun = self._open.pop()
        ended = _next_sequence_nr()
        if ended > begun and output is not None:
            entry = self.names.get(id(module))
            if entry is not None and entry[0] is module:
                self.tags.add_range(begun, ended, entry[1])


@contextmanager
def tagging(root: torch.nn.Module, on_node: OnNode, prefix: str = "") -> Iterator[None]:
    """Call ``on_node(grad_fn, qualified_name)`` once per node built inside ``root``'s submodules.

    ``prefix`` names the root (``model`` gives ``model.0``); the root itself is
    not a group of its own unless a prefix names it.
    """
    seen: dict[int, Any] = {}
    handles = []
    for qualname, module in torch.nn.Module.named_modules(root):
        name = ".".join(p for p in (prefix, qualname) if p)
        if not name:
            continue  # an unnamed root covers everything: its name says nothing
        handles.append(torch.nn.Module.register_forward_hook(module, _hook(name, on_node, seen)))
    try:
        yield
    finally:
        for h in handles:
            h.remove()


class LineBirths:
    """Which line of a statement made which autograd node: at each line the running
    statement reaches (the interpreter's inner statements, the trusted engine's line
    events), the counter torch numbers new nodes with is noted; a node made while a
    line ran has a number from that line's note up to the next. A loop's nodes are
    named by the line in its body that made them, not by the loop's first line.

    Notes are kept for the statement running now (reset at each statement); a line
    that made no node replaces the note before it, so a loop of N iterations keeps
    at most one note per line that made nodes in each iteration."""

    __slots__ = ("_seqs", "_lines")

    def __init__(self) -> None:
        self._seqs: list[int] = []
        self._lines: list[int] = []

    def reset(self) -> None:
        self._seqs.clear()
        self._lines.clear()

    def at(self, line: int) -> None:
        """The statement reaches ``line`` now."""
        seq = _next_sequence_nr()
        seqs = self._seqs
        if seqs and seqs[-1] == seq:
            self._lines[-1] = line  # the line before made nothing
        elif len(seqs) < MAX_LINE_NOTES:
            seqs.append(seq)
            self._lines.append(line)

    def line_of(self, fn: Any) -> int | None:
        """The line that made ``fn``, when it was made while this statement ran."""
        seqs = self._seqs
        if not seqs:
            return None
        try:
            number = int(fn._sequence_nr())
        except (AttributeError, TypeError, RuntimeError):
            return None
        if number < seqs[0] or number >= _next_sequence_nr():
            return None  # made before this statement (or on another thread's count)
        return self._lines[bisect.bisect_right(seqs, number) - 1]


#: line notes kept per statement (a longer statement names nodes past it by its last one)
MAX_LINE_NOTES = 200_000
