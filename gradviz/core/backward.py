"""Record what the autograd engine does during one backward pass.

Before ``backward()`` (or ``autograd.grad``) runs, a pre-hook and a hook are
put on every node reachable from the roots. The pre-hook sees the gradients a
node receives (``grad_outputs``); the hook sees what it passes on
(``grad_inputs``). Hook call order is the engine's execution order. The hooks
are removed when the pass ends, failed or not, so the user's graph is left as
PyTorch left it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

import torch

from .capture import IdRegistry, tensor_value


@dataclass
class BackwardStep:
    """One node executed by the engine."""

    node: str
    label: str
    grad_outputs: list[Any]
    grad_inputs: list[Any]
    vars: list[str] = field(default_factory=list)
    #: next node ids, aligned with grad_inputs (None where the input needs no grad)
    targets: list[str | None] = field(default_factory=list)


@dataclass
class BackwardPass:
    """One call of backward()/autograd.grad and the steps the engine took."""

    root: list[str]
    retain_graph: bool
    steps: list[BackwardStep]
    statement: int | None = None
    kind: str = "backward"  # or "grad"
    error: str | None = None
    #: leaf name -> its .grad after this pass (nested list / summary)
    leaf_grads: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _grads_to_json(grads: Iterable[Any]) -> list[Any]:
    return [tensor_value(g) if isinstance(g, torch.Tensor) else None for g in grads]


def _collect_nodes(roots: Iterable[Any]) -> list[Any]:
    seen: set[int] = set()
    out: list[Any] = []
    stack = [r for r in roots if r is not None]
    while stack:
        fn = stack.pop()
        if id(fn) in seen:
            continue
        seen.add(id(fn))
        out.append(fn)
        for nxt, _ in fn.next_functions:
            if nxt is not None and id(nxt) not in seen:
                stack.append(nxt)
    return out


def _as_tensor_list(value: Any) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [v for v in value if isinstance(v, torch.Tensor)]
    return []


def record_backward(
    func: Any,
    args: tuple,
    kwargs: dict,
    run: Callable[[], Any],
    registry: IdRegistry,
    names: dict[int, list[str]],
    statement: int | None = None,
) -> tuple[Any, BackwardPass]:
    """Run ``run()`` (a backward call) with hooks on every node; return its result and trace.

    ``names`` maps ``id(grad_fn)`` and ``id(leaf)`` to script variable names so
    steps carry the user's names. Exceptions propagate after the trace is
    completed with the error (the session keeps the partial trace).
    """
    is_grad = func is torch.autograd.grad
    if isinstance(getattr(func, "__self__", None), torch.Tensor):
        roots = [func.__self__]
        retain = kwargs.get("retain_graph", args[1] if len(args) > 1 else None)
        create_graph = kwargs.get("create_graph", args[2] if len(args) > 2 else False)
    else:
        roots = _as_tensor_list(kwargs.get("outputs", kwargs.get("tensors", args[0] if args else None)))
        retain = kwargs.get("retain_graph")
        create_graph = kwargs.get("create_graph", False)
    retain_graph = bool(create_graph) if retain is None else bool(retain)

    root_fns = [t.grad_fn for t in roots if t.grad_fn is not None]
    nodes = _collect_nodes(root_fns)
    trace = BackwardPass(
        root=[registry.node_id(fn, statement)[0] for fn in root_fns],
        retain_graph=retain_graph,
        steps=[],
        statement=statement,
        kind="grad" if is_grad else "backward",
    )
    received: dict[int, list[Any]] = {}
    handles = []

    def make_prehook(fn: Any) -> Callable[..., None]:
        def prehook(grad_outputs: tuple) -> None:
            received[id(fn)] = _grads_to_json(grad_outputs)

        return prehook

    def make_hook(fn: Any) -> Callable[..., None]:
        node_id = registry.node_id(fn, statement)[0]
        label = type(fn).__name__

        def hook(grad_inputs: tuple, grad_outputs: tuple) -> None:
            targets = []
            for nxt, _ in fn.next_functions:
                targets.append(registry.node_id(nxt, statement)[0] if nxt is not None else None)
            var_names = names.get(id(fn), [])
            if label == "AccumulateGrad":
                var_names = names.get(id(fn.variable), [])
            trace.steps.append(
                BackwardStep(
                    node=node_id,
                    label=label,
                    grad_outputs=received.pop(id(fn), _grads_to_json(grad_outputs)),
                    grad_inputs=_grads_to_json(grad_inputs),
                    vars=list(var_names),
                    targets=targets,
                )
            )

        return hook

    for fn in nodes:
        try:
            handles.append(fn.register_prehook(make_prehook(fn)))
            handles.append(fn.register_hook(make_hook(fn)))
        except (RuntimeError, AttributeError):
            continue
    try:
        result = run()
    except BaseException as exc:
        trace.error = f"{type(exc).__name__}: {exc}"
        raise _WithTrace(exc, trace) from exc
    finally:
        for h in handles:
            h.remove()
    return result, trace


class _WithTrace(Exception):
    """Carries the partial trace of a failed pass up to the session."""

    def __init__(self, original: BaseException, trace: BackwardPass):
        super().__init__(str(original))
        self.original = original
        self.trace = trace
