"""Send a state as what changed since the last one: the step-latency budget.

A kernel state carries the whole graph (0.7 MB of JSON at 2,000 nodes); a step
that adds ten nodes changes a few kilobytes of it. The kernel's
:class:`StateEncoder` remembers the last state it sent and, for a client that
asks (``"delta": true`` on a request), sends only the top-level fields that
changed, the nodes and edges added, changed or removed, and the positions that
moved. A node or edge whose only change is its "new" flag travels as its id in
``renew_off`` / ``renew_on`` (edges: ``renew_edges_off`` / ``renew_edges_on``), not
as its dict. When the glows turned off are exactly those the window holds glowing
(every step turns the last step's glows off; the step after a run, every node's),
the delta says so in one field, ``unglow`` (edges: ``unglow_edges``), instead of
listing them: the step after a run at 10,000 nodes sends no id of them. The window's :class:`StateDecoder` rebuilds the whole state from its
copy of the previous one (unchanged node dicts are shared between the two, so
keeping every step on the timeline costs little) and says what changed, so the
canvas updates those items only.

Both ends number the states they exchange; a delta whose base is not the
state the decoder holds raises :class:`DeltaMismatch`, and the client asks for
a whole state again. Torch-free and Qt-free: both processes import it.
"""

from __future__ import annotations

from collections.abc import Collection, Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any

EdgeKey = tuple[str, str]

#: the top-level keys that travel as per-item changes rather than as values
ITEMISED = ("graph", "positions")


class DeltaMismatch(ValueError):
    """A delta that does not apply to the state the decoder holds."""


@dataclass
class GraphChanges:
    """What a delta changed in the graph, for a canvas showing state ``base``."""

    base: int
    seq: int
    #: ids of nodes added or whose attributes changed
    nodes: set[str] = field(default_factory=set)
    #: those of ``nodes`` whose only change is their "new" flag (the step after a run
    #: turns every node's glow off): nothing to measure, route or re-link
    renewed: set[str] = field(default_factory=set)
    removed: set[str] = field(default_factory=set)
    #: edges added or whose attributes changed
    edges: set[EdgeKey] = field(default_factory=set)
    removed_edges: set[EdgeKey] = field(default_factory=set)
    #: ids of nodes whose position changed (new nodes included)
    moved: set[str] = field(default_factory=set)
    #: the node order changed beyond removals and appended new nodes
    reordered: bool = False
    #: the edge order changed beyond removals and appended new edges
    edges_reordered: bool = False
    #: the keys of ``edges`` sent whole, as the delta lists them (the added ones in the
    #: order the state appends them)
    edge_list: list[EdgeKey] = field(default_factory=list)
    #: those of ``edges`` whose only change is their "new" flag
    renewed_edges: set[EdgeKey] = field(default_factory=set)
    #: a node joined, left or changed its module (the module tree must be redone)
    modules_changed: bool = False
    #: the new nodes, in the order the state lists them (appended after the old)
    added: list[str] = field(default_factory=list)
    #: node id -> attributes, for every node of the new state
    node_attrs: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: edge -> attributes, for every edge of the new state
    edge_attrs: dict[EdgeKey, dict[str, Any]] = field(default_factory=dict)


def _edge_key(edge: dict[str, Any]) -> EdgeKey:
    return (str(edge["source"]), str(edge["target"]))


def _kept_then_added(
    kept: dict[EdgeKey, dict[str, Any]], changed: list[dict[str, Any]], removed: Any,
) -> dict[EdgeKey, dict[str, Any]]:
    """The edges in the order both ends keep them: the old ones that stay, in their
    order, then the new ones as the delta lists them."""
    edges = dict(kept)
    for key in removed:
        edges.pop(key, None)
    for e in changed:
        edges[_edge_key(e)] = e
    return edges


def _renewal(old: Mapping[str, Any] | None, new: Mapping[str, Any]) -> bool:
    """``new`` is ``old`` with only its boolean "new" flag turned over (the step after a
    run turns every node's and edge's glow off): sent as its id, not its dict."""
    if old is None:
        return False
    flag = new.get("new")
    return (
        isinstance(flag, bool)
        and old.get("new") is (not flag)
        and len(old) == len(new)
        and {**old, "new": flag} == new  # what the decoder makes of it (C speed)
    )


def _split(
    changed: Any, old: Mapping[Any, Any], key: Any
) -> tuple[list[Any], list[Any], list[Any]]:
    """The changed items to send whole, and the keys of those that only turned their
    "new" flag on and off."""
    whole: list[Any] = []
    on: list[Any] = []
    off: list[Any] = []
    for item in changed:
        k = key(item)
        if _renewal(old.get(k), item):
            (on if item["new"] else off).append(k)
        else:
            whole.append(item)
    return whole, on, off


def _node_key(node: dict[str, Any]) -> str:
    return str(node["id"])


def _follow(
    index: dict[Any, Any], removed: Any, changed: Any, now: Mapping[Any, Any],
    glowing: set[Any],
) -> tuple[list[Any], list[Any], list[Any]]:
    """Bring ``index`` (what was sent) up to ``now`` for the keys named; the items that
    really differ, to send, split as :func:`_split` does (an item changed in place can
    only have turned its glow over: ``glowing`` says how it was sent)."""
    for key in removed:
        index.pop(key, None)
    whole: list[Any] = []
    on: list[Any] = []
    off: list[Any] = []
    for key in changed:
        item = now[key]
        old = index.get(key)
        index[key] = item
        lit = bool(item.get("new"))
        if old is item:
            if lit is not (key in glowing):
                (on if lit else off).append(key)
            continue
        if old is not None and old.get("new") is not item.get("new") and _renewal(old, item):
            (on if item["new"] else off).append(key)
        elif old != item:
            whole.append(item)
    return whole, on, off


def _renew(
    index: dict[Any, Any], renewed: Collection[Any], now: Mapping[Any, Any],
    whole: list[Any], on: list[Any], off: list[Any], glowing: set[Any],
) -> None:
    """The keys whose only change is their "new" flag turned over since the state sent
    last (the caller knows it: nothing is compared, nothing read per key): those
    ``glowing`` (sent with their glow on) are off now, the others on. Set operations
    only: the step after a run turns 10,000 of them off. One the window was not sent
    goes whole. ``index`` keeps the dicts it had for them: they differ at most in the
    flag, which ``glowing`` tracks (the session may have turned it in the same dict)."""
    if not renewed:
        return
    went_off = glowing.intersection(renewed)
    if len(went_off) == len(renewed):
        off.extend(went_off)  # all of them glowed, so all were sent (every step's case)
        return
    unknown = set(renewed).difference(index)
    for key in unknown:
        item = now.get(key)
        if item is not None:
            index[key] = item
            whole.append(item)
    off.extend(went_off)
    if len(went_off) + len(unknown) < len(renewed):
        # sent dark and renewed: its glow came on (read, not assumed: none is expected)
        on.extend(
            k for k in renewed
            if k not in glowing and k not in unknown and (now.get(k) or {}).get("new")
        )


def _flipped(
    items: Mapping[Any, Mapping[str, Any]], index: Mapping[Any, Any], glowing: set[Any],
    whole: list[Any], key: Any, on: list[Any], off: list[Any],
) -> None:
    """The items whose glow differs from how it was sent though their dicts compare
    equal (their flag was turned in place): renewals too."""
    lit = {k for k, item in items.items() if item.get("new")}
    flipped = lit.symmetric_difference(glowing)
    if not flipped:
        return
    flipped.difference_update(key(item) for item in whole)
    flipped.difference_update(on)
    flipped.difference_update(off)
    for k in flipped:
        if k in items and k in index:
            (on if k in lit else off).append(k)


def _renewed_into(
    body: dict[str, Any], name: str, on: list[Any], off: list[Any], unglow: str,
    glowing: set[Any], whole: list[Any], key: Any, removed: Collection[Any],
) -> None:
    """Put the renewed keys in the delta (as lists: JSON has no tuples), and bring
    ``glowing`` (the keys the window holds with their glow on) up to it.

    When ``off`` is every key that glowed and neither went nor is sent whole, the
    delta says ``unglow`` instead of listing them (the decoder turns off the glows it
    holds): the step after a run turns off 10,000 of them."""
    if off:
        rest = glowing.difference(off)
        if len(rest) == len(glowing) - len(off) and (
            not rest or rest <= ({key(item) for item in whole} | set(removed))
        ):
            body[unglow] = True
            glowing.clear()
        else:
            glowing.difference_update(off)
            body[f"{name}_off"] = [list(k) if isinstance(k, tuple) else k for k in off]
    glowing.difference_update(removed)
    for item in whole:
        if item.get("new"):
            glowing.add(key(item))
        else:
            glowing.discard(key(item))
    if on:
        glowing.update(on)
        body[f"{name}_on"] = [list(k) if isinstance(k, tuple) else k for k in on]


def _unglow(
    items: dict[Any, dict[str, Any]], glowing: set[Any], changed: set[Any], renewed: set[Any]
) -> None:
    """The delta's ``unglow``: every item in ``glowing`` turns its glow off (a new dict:
    the state before keeps its own), and is named changed and renewed."""
    if len(glowing) * 4 > len(items):
        # most of them (the step after a run): read in the state's order, which is the
        # order their dicts were made in (a third faster than in the set's order)
        found = 0
        for key, old in items.items():
            if key in glowing:
                new = old.copy()
                new["new"] = False
                items[key] = new
                found += 1
        if found != len(glowing):
            raise DeltaMismatch("a node stopped glowing, but the window does not hold it")
    else:
        for key in glowing:
            held = items.get(key)
            if held is None:
                raise DeltaMismatch(f"{key!r} stopped glowing, but the window does not hold it")
            new = held.copy()
            new["new"] = False
            items[key] = new
    changed.update(glowing)
    renewed.update(glowing)
    glowing.clear()


@dataclass
class StateHint:
    """What the kernel knows changed since the state it sent last: the graph's JSON
    nodes and edges by key (as the state lists them), the keys changed or added and
    removed, and the nodes whose positions were set (None: maybe all)."""

    nodes: dict[str, dict[str, Any]]
    edges: dict[EdgeKey, dict[str, Any]]
    changed: Collection[str]
    removed: Collection[str]
    changed_edges: Collection[EdgeKey]
    removed_edges: Collection[EdgeKey]
    moved: Collection[Hashable] | None
    #: keys whose only change is their "new" flag (never in ``changed``): sent as
    #: renewals without comparing their dicts (the step after a run: every node)
    renewed: Collection[str] = ()
    renewed_edges: Collection[EdgeKey] = ()


class StateEncoder:
    """The kernel's side: the last state sent, and the delta to the next one."""

    def __init__(self) -> None:
        self.seq = 0
        self._last: dict[str, Any] | None = None
        self._nodes: dict[str, dict[str, Any]] = {}
        self._edges: dict[EdgeKey, dict[str, Any]] = {}
        self._positions: dict[str, Any] = {}
        #: the nodes and edges whose glow is on as the window holds them (see unglow)
        self._glowing: set[str] = set()
        self._glowing_edges: set[EdgeKey] = set()

    def reset(self) -> None:
        """Forget what was sent: the next state goes whole."""
        self._last = None
        self._nodes, self._edges, self._positions = {}, {}, {}
        self._glowing, self._glowing_edges = set(), set()

    def encode(
        self, state: dict[str, Any], delta: bool, hint: StateHint | None = None
    ) -> dict[str, Any]:
        """``state`` whole (with ``seq``), or, when ``delta`` and a base exists, as
        ``{"seq", "base", "delta": {...}}``. Either way it becomes the new base.

        With a ``hint`` the graph's part of the delta is read off it (the work is
        what changed, not the graph's size); without, it is found by comparing."""
        if hint is not None and delta and self._last is not None:
            return self._encode_hinted(state, hint)
        graph = state.get("graph") or {}
        nodes = {str(n["id"]): n for n in graph.get("nodes") or []}
        edges = {_edge_key(e): e for e in graph.get("edges") or []}
        positions = state.get("positions") or {}
        last, self.seq = self._last, self.seq + 1
        out: dict[str, Any]
        if not delta or last is None:
            out = dict(state)
            out["seq"] = self.seq
            self._glowing = {k for k, n in nodes.items() if n.get("new")}
            self._glowing_edges = {k for k, e in edges.items() if e.get("new")}
        else:
            old_nodes, old_edges, old_pos = self._nodes, self._edges, self._positions
            removed = [n for n in old_nodes if n not in nodes]
            added_order = [n for n in old_nodes if n in nodes] + [
                n for n in nodes if n not in old_nodes
            ]
            # a list that only grew (results, backward passes, statements run) sends
            # its new items
            changed_nodes, nodes_on, nodes_off = _split(
                [n for i, n in nodes.items() if old_nodes.get(i) != n], old_nodes, _node_key
            )
            changed_edges, edges_on, edges_off = _split(
                [e for k, e in edges.items() if old_edges.get(k) != e], old_edges, _edge_key
            )
            _flipped(nodes, old_nodes, self._glowing, changed_nodes, _node_key, nodes_on,
                     nodes_off)
            _flipped(edges, old_edges, self._glowing_edges, changed_edges, _edge_key,
                     edges_on, edges_off)
            body: dict[str, Any] = {
                **self._fields(state, last),
                "nodes": changed_nodes,
                "removed": removed,
                "edges": changed_edges,
                "removed_edges": [list(k) for k in old_edges if k not in edges],
                "positions": {
                    k: v for k, v in positions.items() if old_pos.get(k) != v
                },
                "removed_positions": [k for k in old_pos if k not in positions],
            }
            _renewed_into(body, "renew", nodes_on, nodes_off, "unglow", self._glowing,
                          changed_nodes, _node_key, removed)
            _renewed_into(body, "renew_edges", edges_on, edges_off, "unglow_edges",
                          self._glowing_edges, changed_edges, _edge_key,
                          [tuple(k) for k in body["removed_edges"]])
            if added_order != list(nodes):
                body["order"] = list(nodes)
            arranged = _kept_then_added(
                old_edges, body["edges"], [tuple(k) for k in body["removed_edges"]]
            )
            if list(arranged) != list(edges):
                body["edge_order"] = [list(k) for k in edges]
            if "graph" in state and "graph" not in last:
                body["graph_keys"] = True
            out = {"seq": self.seq, "base": self.seq - 1, "delta": body}
        self._last = state
        self._nodes, self._edges, self._positions = nodes, edges, dict(positions)
        return out


    def _encode_hinted(self, state: dict[str, Any], hint: StateHint) -> dict[str, Any]:
        last = self._last
        assert last is not None
        self.seq += 1
        old_nodes, old_edges, old_pos = self._nodes, self._edges, self._positions
        body = self._fields(state, last)
        body["removed"] = list(hint.removed)
        body["nodes"], on, off = _follow(
            old_nodes, hint.removed, hint.changed, hint.nodes, self._glowing
        )
        _renew(old_nodes, hint.renewed, hint.nodes, body["nodes"], on, off, self._glowing)
        _renewed_into(body, "renew", on, off, "unglow", self._glowing, body["nodes"],
                      _node_key, hint.removed)
        body["removed_edges"] = [list(k) for k in hint.removed_edges]
        body["edges"], on, off = _follow(
            old_edges, hint.removed_edges, hint.changed_edges, hint.edges, self._glowing_edges
        )
        _renew(old_edges, hint.renewed_edges, hint.edges, body["edges"], on, off,
               self._glowing_edges)
        _renewed_into(body, "renew_edges", on, off, "unglow_edges", self._glowing_edges,
                      body["edges"], _edge_key, hint.removed_edges)
        positions = state.get("positions") or {}
        if hint.moved is None:
            body["positions"] = {k: v for k, v in positions.items() if old_pos.get(k) != v}
            body["removed_positions"] = [k for k in old_pos if k not in positions]
            self._positions = dict(positions)
        else:
            body["removed_positions"] = [k for k in hint.removed if k in old_pos]
            for k in hint.removed:
                old_pos.pop(k, None)
            body["positions"] = {k: positions[k] for k in hint.moved if k in positions}
            old_pos.update(body["positions"])
        self._last = state
        return {"seq": self.seq, "base": self.seq - 1, "delta": body}

    @staticmethod
    def _fields(state: dict[str, Any], last: dict[str, Any]) -> dict[str, Any]:
        """The top-level fields that changed (lists that only grew: their new items)."""
        changed = {
            k: v for k, v in state.items()
            if k not in ITEMISED and (k not in last or last[k] != v)
        }
        extend = {
            k: v[len(last[k]):] for k, v in changed.items()
            if isinstance(v, list) and isinstance(last.get(k), list)
            and len(v) > len(last[k]) and v[: len(last[k])] == last[k]
        }
        return {
            "set": {k: v for k, v in changed.items() if k not in extend},
            "extend": extend,
            "drop": [k for k in last if k not in state and k not in ITEMISED],
        }


class StateDecoder:
    """The window's side: rebuild each whole state from the one before."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.seq: int | None = None
        self._state: dict[str, Any] | None = None
        self._nodes: dict[str, dict[str, Any]] = {}
        self._edges: dict[EdgeKey, dict[str, Any]] = {}
        #: the nodes and edges of the state held whose glow is on (what ``unglow`` means)
        self._glowing: set[str] = set()
        self._glowing_edges: set[EdgeKey] = set()

    def decode(self, wire: dict[str, Any]) -> tuple[dict[str, Any], GraphChanges | None]:
        """The whole state ``wire`` stands for, and what changed when it was a delta."""
        if "delta" not in wire:
            state = {k: v for k, v in wire.items() if k != "seq"}
            self._remember(state, wire.get("seq"))
            return state, None
        if self._state is None or wire.get("base") != self.seq:
            raise DeltaMismatch(
                f"a change to state {wire.get('base')} arrived while the window holds state "
                f"{self.seq}"
            )
        body = wire["delta"]
        old = self._state
        state = {k: v for k, v in old.items() if k not in body.get("drop", ())}
        state.update(body.get("set") or {})
        for k, items in (body.get("extend") or {}).items():
            if not isinstance(state.get(k), list):
                raise DeltaMismatch(f"{k!r} grew, but the window holds no list for it")
            state[k] = state[k] + items
        changes = GraphChanges(base=int(wire["base"]), seq=int(wire["seq"]))
        nodes = dict(self._nodes)
        glowing = set(self._glowing)
        for n in body.get("removed") or ():
            old_node = nodes.pop(n, None)
            glowing.discard(n)
            changes.removed.add(n)
            changes.modules_changed |= bool(old_node and old_node.get("module"))
        if body.get("unglow"):
            _unglow(nodes, glowing, changes.nodes, changes.renewed)
        renewed = changes.renewed
        for n in body.get("nodes") or ():
            key = str(n["id"])
            old_node = nodes.get(key)
            if old_node is None:
                changes.added.append(key)
            changes.modules_changed |= (old_node or {}).get("module") != n.get("module")
            nodes[key] = n
            changes.nodes.add(key)
            renewed.discard(key)
            if n.get("new"):
                glowing.add(key)
            else:
                glowing.discard(key)
        for flag in (True, False):
            for n in body.get("renew_on" if flag else "renew_off") or ():
                old_node = nodes.get(n)
                if old_node is None:
                    raise DeltaMismatch(f"node {n!r} changed, but the window does not hold it")
                nodes[n] = {**old_node, "new": flag}
                changes.nodes.add(n)
                renewed.add(n)
                if flag:
                    glowing.add(n)
                else:
                    glowing.discard(n)
        if "order" in body:
            missing = [n for n in body["order"] if n not in nodes]
            if missing or len(body["order"]) != len(nodes):
                raise DeltaMismatch("the node order names nodes the window does not hold")
            nodes = {n: nodes[n] for n in body["order"]}
            changes.reordered = True
        removed_edges = [(str(p[0]), str(p[1])) for p in body.get("removed_edges") or ()]
        changes.removed_edges.update(removed_edges)
        changed_edges = list(body.get("edges") or ())
        changes.edge_list = [_edge_key(e) for e in changed_edges]
        changes.edges.update(changes.edge_list)
        edges = dict(self._edges)
        glowing_edges = set(self._glowing_edges)
        for edge_key in removed_edges:
            edges.pop(edge_key, None)
            glowing_edges.discard(edge_key)
        if body.get("unglow_edges"):
            _unglow(edges, glowing_edges, changes.edges, changes.renewed_edges)
            changes.renewed_edges.difference_update(changes.edge_list)
        for edge_key, e in zip(changes.edge_list, changed_edges):
            edges[edge_key] = e
            if e.get("new"):
                glowing_edges.add(edge_key)
            else:
                glowing_edges.discard(edge_key)
        for flag in (True, False):
            for p in body.get("renew_edges_on" if flag else "renew_edges_off") or ():
                edge_key = (str(p[0]), str(p[1]))
                old_edge = edges.get(edge_key)
                if old_edge is None:
                    raise DeltaMismatch(
                        f"edge {edge_key!r} changed, but the window does not hold it"
                    )
                edges[edge_key] = {**old_edge, "new": flag}
                changes.edges.add(edge_key)
                changes.renewed_edges.add(edge_key)
                if flag:
                    glowing_edges.add(edge_key)
                else:
                    glowing_edges.discard(edge_key)
        if "edge_order" in body:
            order = [(str(p[0]), str(p[1])) for p in body["edge_order"]]
            if len(order) != len(edges) or any(k not in edges for k in order):
                raise DeltaMismatch("the edge order names edges the window does not hold")
            edges = {k: edges[k] for k in order}
            changes.edges_reordered = True
        positions = dict(old.get("positions") or {})
        for n in body.get("removed_positions") or ():
            positions.pop(n, None)
        moved = body.get("positions") or {}
        positions.update(moved)
        changes.moved = set(moved)
        if "graph" in old or body.get("graph_keys") or nodes or edges:
            graph = dict(old.get("graph") or {})
            graph["nodes"] = list(nodes.values())
            graph["edges"] = list(edges.values())
            state["graph"] = graph
        if "positions" in old or moved:
            state["positions"] = positions
        self._remember(state, wire.get("seq"), nodes, edges)
        self._glowing, self._glowing_edges = glowing, glowing_edges
        changes.node_attrs, changes.edge_attrs = nodes, edges
        return state, changes

    def _remember(
        self,
        state: dict[str, Any],
        seq: Any,
        nodes: dict[str, dict[str, Any]] | None = None,
        edges: dict[EdgeKey, dict[str, Any]] | None = None,
    ) -> None:
        graph = state.get("graph") or {}
        self._state = state
        self.seq = seq if isinstance(seq, int) else None
        self._nodes = (
            nodes if nodes is not None
            else {str(n["id"]): n for n in graph.get("nodes") or []}
        )
        self._edges = (
            edges if edges is not None else {_edge_key(e): e for e in graph.get("edges") or []}
        )
        if nodes is None:
            self._glowing = {k for k, n in self._nodes.items() if n.get("new")}
        if edges is None:
            self._glowing_edges = {k for k, e in self._edges.items() if e.get("new")}
