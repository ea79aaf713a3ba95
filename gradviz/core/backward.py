"""Record what the autograd engine does during one backward pass.

Before ``backward()`` (or ``autograd.grad``) runs, a pre-hook and a hook are
put on every node reachable from the roots. The pre-hook sees the gradients a
node receives (``grad_outputs``); the hook sees what it passes on
(``grad_inputs``). Hook call order is the engine's execution order. The hooks
are removed when the pass ends, failed or not, so the user's graph is left as
PyTorch left it.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

import torch

from .capture import IdRegistry, stats_budget, tensor_value
from .guards import meter_tick


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
    #: the tensors the node had saved, as this step used them (label, value, shape):
    #: read just before the pass started, since a pass without retain_graph frees them;
    #: None when not recorded (a big pass, or nothing was saved)
    saved: list[dict[str, Any]] | None = None


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
    #: the pass built a graph of its own gradients (double backward)
    create_graph: bool = False
    #: where the call was made: its line (inside loops and functions too) and the
    #: innermost loop's iteration (1-based; None outside loops)
    line: int | None = None
    iteration: int | None = None
    #: the graph the pass ran over, as it was when the pass started: the ids of the
    #: grad_fn nodes reachable from its roots, their class names (same order, repeats
    #: kept) and the edges between them (node -> next node)
    nodes: list[str] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)
    edges: list[list[str]] = field(default_factory=list)
    #: node id -> the script's names for it (its tensors, or the leaf of an AccumulateGrad)
    names: dict[str, list[str]] = field(default_factory=dict)

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


#: passes over more nodes than this do not record each step's saved tensors (reading
#: them costs a little per node; a lesson has tens of nodes, a model thousands)
SAVED_VALUES_NODES = 500

#: values one backward pass reduces to min/max/mean for its steps' gradient summaries,
#: all steps together (capture.stats_budget; a lesson's pass needs a few thousand):
#: summaries must not cost more than the pass itself on a big model
BACKWARD_STATS_ELEMENTS = 20_000_000

#: the real functions, taken before anyone (gradviz.record) patches torch.autograd
_AUTOGRAD_GRAD = torch.autograd.grad


def _is_autograd_grad(func: Any) -> bool:
    """Whether ``func`` is torch.autograd.grad, under any wrappers that name what they
    wrap (``__wrapped__``: trusted mode's routing, gradviz.record's own patch)."""
    for _ in range(8):
        if func is _AUTOGRAD_GRAD or func is torch.autograd.grad:
            return True
        func = getattr(func, "__wrapped__", None)
        if func is None:
            return False
    return False


def backward_call(func: Any, args: tuple, kwargs: dict) -> tuple[list[torch.Tensor], bool, bool]:
    """The roots, retain_graph and create_graph of a call of ``func(*args, **kwargs)``.

    ``func`` is ``Tensor.backward`` (bound), ``torch.autograd.backward`` or
    ``torch.autograd.grad``. The call is bound to the function's own signature,
    so positional and keyword arguments read alike (``z.backward(None, True)``
    is ``z.backward(retain_graph=True)``). retain_graph defaults to
    create_graph, as in PyTorch.
    """
    owner = getattr(func, "__self__", None)
    target = getattr(func, "__func__", func) if isinstance(owner, torch.Tensor) else func
    call_args = (owner, *args) if target is not func else args
    try:
        bound = dict(inspect.signature(target).bind(*call_args, **kwargs).arguments)
    except (TypeError, ValueError):
        bound = {}  # PyTorch itself will refuse the call; record what can be read
    # keywords first: a wrapper's (*args, **kwargs) signature binds them under "kwargs"
    arguments = {**kwargs, **bound}
    roots: list[torch.Tensor] = []
    for name in ("self", "tensors", "outputs"):
        if name in arguments:
            roots = _as_tensor_list(arguments[name])
            break
    else:
        first = call_args[0] if call_args else kwargs.get("tensors", kwargs.get("outputs"))
        roots = _as_tensor_list(first)
    create_graph = bool(arguments.get("create_graph", False))
    retain = arguments.get("retain_graph")
    return roots, create_graph if retain is None else bool(retain), create_graph


def record_backward(
    func: Any,
    args: tuple,
    kwargs: dict,
    run: Callable[[], Any],
    registry: IdRegistry,
    names: dict[int, list[str]],
    statement: int | None = None,
    on_step: Callable[[Any, BackwardStep], None] | None = None,
    read_saved_values: Callable[[Any], list[dict[str, Any]] | None] | None = None,
) -> tuple[Any, BackwardPass]:
    """Run ``run()`` (a backward call) with hooks on every node; return its result and trace.

    ``names`` maps ``id(grad_fn)`` and ``id(leaf)`` to script variable names so
    steps carry the user's names; ``on_step(node, step)`` sees each step with the
    autograd node it ran (so names given later can still be attached). Exceptions
    propagate after the trace is completed with the error (the session keeps the
    partial trace). ``read_saved_values(node)`` gives a node's saved tensors as the
    pass will use them (read just before it starts, on passes of at most
    SAVED_VALUES_NODES nodes), kept on its step.
    """
    is_grad = _is_autograd_grad(func)
    roots, retain_graph, create_graph = backward_call(func, args, kwargs)

    root_fns = [t.grad_fn for t in roots if t.grad_fn is not None]
    nodes = _collect_nodes(root_fns)
    trace = BackwardPass(
        root=[registry.node_id(fn, statement)[0] for fn in root_fns],
        retain_graph=retain_graph,
        steps=[],
        statement=statement,
        kind="grad" if is_grad else "backward",
        create_graph=create_graph,
    )
    for fn in nodes:
        node_id = registry.node_id(fn, statement)[0]
        trace.nodes.append(node_id)
        trace.labels.append(type(fn).__name__)
        for nxt, _ in fn.next_functions:
            if nxt is not None:
                trace.edges.append([node_id, registry.node_id(nxt, statement)[0]])
        own = names.get(id(fn), [])
        if type(fn).__name__ == "AccumulateGrad":
            own = names.get(id(fn.variable), [])
        if own:
            trace.names[node_id] = list(own)
    received: dict[int, list[Any]] = {}
    # Read before the pass starts, not from inside it: a saved tensor behind a one-time
    # unpack hook (torch.utils.checkpoint) would otherwise be unpacked twice in one pass.
    # Between statements capture reads them the same way.
    saved_before: dict[int, list[dict[str, Any]] | None] = {}
    if read_saved_values is not None and len(nodes) <= SAVED_VALUES_NODES:
        saved_before = {id(fn): read_saved_values(fn) for fn in nodes}
    handles = []

    def make_prehook(fn: Any) -> Callable[..., None]:
        def prehook(grad_outputs: tuple) -> None:
            meter_tick()  # restricted mode: the statement's deadline and memory
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
            step = BackwardStep(
                node=node_id,
                label=label,
                grad_outputs=received.pop(id(fn), _grads_to_json(grad_outputs)),
                grad_inputs=_grads_to_json(grad_inputs),
                vars=list(var_names),
                targets=targets,
                saved=saved_before.pop(id(fn), None),
            )
            trace.steps.append(step)
            if on_step is not None:
                on_step(fn, step)

        return hook

    for fn in nodes:
        try:
            handles.append(fn.register_prehook(make_prehook(fn)))
            handles.append(fn.register_hook(make_hook(fn)))
        except (RuntimeError, AttributeError):
            continue
    try:
        # every step summarizes the gradients it received and passed on: one budget of
        # min/max/mean values for the whole pass (GPT-2's ~3,000 gradients, up to 2.4M
        # values each), past which a summary shows its first values and count only
        with stats_budget(BACKWARD_STATS_ELEMENTS):
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
