"""Which nn.Module built which autograd node: forward hooks that tag new grad_fn nodes.

After a submodule's forward, the nodes between its outputs' grad_fns and its
inputs' grad_fns were created by it. Inner modules' hooks fire first, so the
innermost qualified name wins (``layers.0.linear1`` rather than ``layers.0``).
Used by :func:`gradviz.record` and by the session for modules a script calls.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import torch

OnNode = Callable[[Any, str], None]


def tensors_in(value: Any) -> list[torch.Tensor]:
    """Tensors inside a module's inputs or outputs (tuples, lists, dicts)."""
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in tensors_in(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in tensors_in(v)]
    return []


def _hook(qualname: str, on_node: OnNode, seen_nodes: set[int]) -> Any:
    def hook(module: torch.nn.Module, inputs: Any, output: Any) -> None:
        stops = {id(t.grad_fn) for t in tensors_in(inputs) if t.grad_fn is not None}
        stack = [t.grad_fn for t in tensors_in(output) if t.grad_fn is not None]
        visited: set[int] = set()
        while stack:
            fn = stack.pop()
            if id(fn) in visited or id(fn) in stops:
                continue
            visited.add(id(fn))
            if id(fn) not in seen_nodes:
                seen_nodes.add(id(fn))
                on_node(fn, qualname)
            for nxt, _ in fn.next_functions:
                if nxt is not None and type(nxt).__name__ != "AccumulateGrad":
                    stack.append(nxt)

    return hook


@contextmanager
def tagging(root: torch.nn.Module, on_node: OnNode, prefix: str = "") -> Iterator[None]:
    """Call ``on_node(grad_fn, qualified_name)`` once per node built inside ``root``'s submodules.

    ``prefix`` names the root (``model`` gives ``model.0``); the root itself is
    not a group of its own unless a prefix names it.
    """
    seen: set[int] = set()
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
