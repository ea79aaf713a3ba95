"""The chain rule read off a recorded scalar backward pass (no Qt).

``chain_rule(bpass, target)`` gives the inspector's lines, such as
``dz/dx = 1 × 0.008 × 75 = 0.6``. Each factor is a local derivative: the
gradient a node passed on divided by the gradient it received; the first
factor is the root's seed gradient.

The number of root→target paths can grow exponentially (``y = (y*y)*0.5`` in a
loop doubles it every iteration), so nothing here walks every path:

1. the graph is pruned to the nodes that can reach the target (reverse
   reachability over the recorded steps);
2. dynamic programming over that pruned DAG, in topological order, counts the
   paths and sums, over all of them, the product of their factors (the total
   derivative) — iteratively, since graphs can be thousands of nodes deep;
3. at most ``max_paths`` paths are listed, by a backtracking walk inside the
   pruned DAG, where every branch reaches the target.

The work is O(nodes + edges + max_paths × path length), counted in
:attr:`ChainRule.work`.

``fmt_number`` and ``scalar_of`` live here so that this module needs no Qt;
``gradviz.ui.panels`` imports them from here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .fmt import fmt_number

__all__ = ["ChainPath", "ChainRule", "chain_rule", "chain_rule_result", "fmt_number", "scalar_of"]


def scalar_of(value: Any) -> float | None:
    """The number in a 0-d (or one-element) value, else None."""
    while isinstance(value, list) and len(value) == 1:
        value = value[0]
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return float(value)
    return None


def _first_number(values: list[Any]) -> float | None:
    for v in values:
        s = scalar_of(v)
        if s is not None:
            return s
    return None


def _compact(value: float) -> str:
    """Chain-rule factors: ``1``, ``75``, ``0.008`` (no trailing ``.0``)."""
    text = fmt_number(value)
    return text[:-2] if text.endswith(".0") else text


@dataclass(frozen=True)
class ChainPath:
    """One root→target path: its factors (seed first) and the labels of its nodes."""

    factors: tuple[float, ...]
    labels: tuple[str, ...]

    @property
    def product(self) -> float:
        return math.prod(self.factors)


@dataclass
class ChainRule:
    """The chain rule of one scalar pass for one target node.

    ``total`` is d root / d target summed over *all* ``path_count`` paths (not
    only the ``paths`` listed); ``work`` counts the nodes, edges and path steps
    touched to find all this.
    """

    of: str
    wrt: str
    total: float
    path_count: int
    paths: list[ChainPath]
    work: int
    lines: list[str] = field(default_factory=list)

    @property
    def truncated(self) -> bool:
        return self.path_count > len(self.paths)


def chain_rule(bpass: Mapping[str, Any], target: str, max_paths: int = 6) -> list[str]:
    """Lines like ``dz/dx = 1 × 0.008 × 75 = 0.6`` for a scalar backward pass.

    Empty for a non-scalar pass, or where the target is not reached from the root.
    """
    result = chain_rule_result(bpass, target, max_paths)
    return result.lines if result is not None else []


def chain_rule_result(bpass: Mapping[str, Any], target: str, max_paths: int = 6) -> ChainRule | None:
    """The structured chain rule (see :class:`ChainRule`); None where there is none."""
    max_paths = max(int(max_paths), 0)
    steps = bpass.get("steps") or []
    by_node: dict[str, dict[str, Any]] = {}
    work = 0
    for step in steps:
        work += 1
        by_node.setdefault(step["node"], step)
        for g in list(step.get("grad_outputs", [])) + list(step.get("grad_inputs", [])):
            if g is not None and scalar_of(g) is None:
                return None
    roots = [r for r in bpass.get("root", []) if r in by_node]
    if not roots or target not in by_node:
        return None
    root = roots[0]
    seed = _first_number(by_node[root].get("grad_outputs", []))
    if seed is None:
        return None

    # the edges (node → next, local factor), in the recorded order
    out_edges: dict[str, list[tuple[str, float]]] = {}
    into: dict[str, list[str]] = {}
    for node_id, step in by_node.items():
        g_out = _first_number(step.get("grad_outputs", []))
        edges: list[tuple[str, float]] = []
        for g_in, nxt in zip(step.get("grad_inputs", []), step.get("targets", [])):
            work += 1
            if nxt is None or g_in is None:
                continue
            g_in_value = scalar_of(g_in)
            if g_in_value is None:
                continue
            local = g_in_value / g_out if g_out else math.nan
            edges.append((nxt, local))
            into.setdefault(nxt, []).append(node_id)
        out_edges[node_id] = edges

    # 1. prune: only nodes that can reach the target
    reach = {target}
    stack = [target]
    while stack:
        node_id = stack.pop()
        for prev in into.get(node_id, ()):
            work += 1
            if prev not in reach:
                reach.add(prev)
                stack.append(prev)
    if root not in reach:
        return None

    # topological order of the pruned graph from the root (iterative DFS); the
    # target ends every path, and an edge closing a cycle (not in a recorded
    # autograd graph, but a snapshot file may say anything) is dropped
    pruned: dict[str, list[tuple[str, float]]] = {}
    order: list[str] = []
    state: dict[str, int] = {root: 1}  # 1: on the DFS stack, 2: done
    dfs: list[tuple[str, int]] = [(root, 0)]
    while dfs:
        node_id, i = dfs[-1]
        edges = out_edges.get(node_id, []) if node_id != target else []
        if i < len(edges):
            dfs[-1] = (node_id, i + 1)
            nxt, local = edges[i]
            work += 1
            if nxt not in reach:
                continue
            seen = state.get(nxt)
            if seen == 1:
                continue  # a cycle
            pruned.setdefault(node_id, []).append((nxt, local))
            if seen is None:
                state[nxt] = 1
                dfs.append((nxt, 0))
        else:
            dfs.pop()
            state[node_id] = 2
            order.append(node_id)  # post-order: every successor comes first

    # 2. count the paths and sum their products, target first
    count: dict[str, int] = {target: 1}
    deriv: dict[str, float] = {target: 1.0}
    for node_id in order:
        if node_id == target:
            continue
        n, d = 0, 0.0
        for nxt, local in pruned.get(node_id, ()):
            work += 1
            n += count[nxt]
            d += local * deriv[nxt]
        count[node_id], deriv[node_id] = n, d
    path_count = count.get(root, 0)
    if path_count == 0:
        return None
    total = seed * deriv[root]

    # 3. list at most max_paths paths: backtracking inside the pruned DAG,
    # where every branch reaches the target
    def label_of(node_id: str) -> str:
        return by_node.get(node_id, {}).get("label", node_id)

    paths: list[ChainPath] = []
    factors: list[float] = [seed]
    labels: list[str] = [by_node[root]["label"]]
    walk: list[tuple[str, int]] = [(root, 0)]
    while walk and len(paths) < max_paths:
        node_id, i = walk[-1]
        if node_id == target:
            paths.append(ChainPath(tuple(factors), tuple(labels)))
            work += len(factors)
            edges = []
        else:
            edges = pruned.get(node_id, [])
        if i < len(edges):
            walk[-1] = (node_id, i + 1)
            nxt, local = edges[i]
            work += 1
            walk.append((nxt, 0))
            factors.append(local)
            labels.append(label_of(nxt))
        else:
            walk.pop()
            factors.pop()
            labels.pop()
            work += 1

    of, wrt = _name_of(by_node, root), _name_of(by_node, target)
    result = ChainRule(of, wrt, total, path_count, paths, work)
    result.lines = _lines(result, max_paths)
    return result


def _name_of(by_node: dict[str, dict[str, Any]], node_id: str) -> str:
    step = by_node.get(node_id) or {}
    names = step.get("vars") or []
    return names[0] if names else f"({step.get('label', node_id)} output)"


def _lines(result: ChainRule, max_paths: int) -> list[str]:
    of, wrt, total = result.of, result.wrt, result.total
    lines: list[str] = []
    products = []
    for path in result.paths:
        product = path.product
        products.append(product)
        text = " × ".join("?" if math.isnan(f) else _compact(f) for f in path.factors)
        if result.path_count > 1:
            lines.append(f"via {' → '.join(path.labels)}:")
            lines.append(f"  {text} = {_compact(product)}")
        else:
            lines.append(f"d{of}/d{wrt} = {text} = {_compact(product)}")
    if result.path_count > 1:
        terms = [_compact(p) for p in products]
        if result.truncated:
            terms.append("…")
        lines.append(f"d{of}/d{wrt} = {' + '.join(terms)} = {_compact(total)} (the paths add up)")
    if result.truncated:
        lines.append(
            f"({len(result.paths):,} of {result.path_count:,} paths shown; "
            "the total sums all of them)"
        )
    lines.append("factors: seed gradient, then each node's local derivative (grad out / grad in)")
    return lines
