"""The library API, for trusted code: your own script or notebook, run by your own Python.

Unlike the window's scripts, nothing here is sandboxed: it is a lens on tensors
you already have.

>>> import gradviz
>>> with gradviz.record() as rec:
...     loss = model(x).pow(2).mean()
...     loss.backward()
>>> snap = gradviz.snapshot(loss, model=model, recorder=rec)
>>> gradviz.save(snap, "run.gradviz.json")   # open it with `gradviz open run.gradviz.json`

The snapshot has the same shape as the window's (see ``docs/snapshot-format.md``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import torch

from gradviz.core.backward import BackwardPass, record_backward
from gradviz.core.capture import IdRegistry, capture, graph_to_json, tensor_value
from gradviz.core.modules import tagging
from gradviz.core.snapshot_file import read_snapshot

FORMAT = "gradviz-snapshot"
FORMAT_VERSION = 1


class Recorder:
    """Backward passes run inside ``gradviz.record()``."""

    def __init__(self) -> None:
        self.registry = IdRegistry()
        self.passes: list[BackwardPass] = []
        self.module_of: dict[int, str] = {}
        self._names: dict[int, list[str]] = {}

    def name(self, mapping: Mapping[str, Any]) -> None:
        """Give recorded steps the user's names (tensor or module -> name)."""
        for name, t in _named(mapping).items():
            self._names.setdefault(id(t), []).append(name)
            if t.grad_fn is not None:
                self._names.setdefault(id(t.grad_fn), []).append(name)


@contextmanager
def record(*modules: torch.nn.Module) -> Iterator[Recorder]:
    """Record every ``backward()``/``autograd.grad`` run inside the block.

    Pass modules to also note, for each autograd node built in their forward,
    the qualified name of the innermost module that built it (used to
    collapse big graphs by module).
    """
    recorder = Recorder()
    original_backward = torch.autograd.backward
    original_grad = torch.autograd.grad

    def backward(*args: Any, **kwargs: Any) -> Any:
        result, trace = record_backward(
            original_backward, args, kwargs, lambda: original_backward(*args, **kwargs),
            recorder.registry, recorder._names,
        )
        recorder.passes.append(trace)
        return result

    def grad(*args: Any, **kwargs: Any) -> Any:
        result, trace = record_backward(
            torch.autograd.grad, args, kwargs, lambda: original_grad(*args, **kwargs),
            recorder.registry, recorder._names,
        )
        trace.kind = "grad"
        recorder.passes.append(trace)
        return result

    def on_node(fn: Any, qualname: str) -> None:
        recorder.module_of.setdefault(id(fn), qualname)

    with ExitStack() as stack:
        for root in modules:
            recorder.name({"": root})
            stack.enter_context(tagging(root, on_node))
        torch.autograd.backward = backward  # Tensor.backward looks it up at call time
        torch.autograd.grad = grad
        try:
            yield recorder
        finally:
            torch.autograd.backward = original_backward
            torch.autograd.grad = original_grad


def _named(mapping: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    out: dict[str, torch.Tensor] = {}
    for name, value in mapping.items():
        if isinstance(value, torch.nn.Module):
            for pname, p in value.named_parameters():
                out[f"{name}.{pname}" if name else pname] = p
        elif isinstance(value, torch.Tensor):
            out[name] = value
        else:
            raise TypeError(f"names['{name}'] is a {type(value).__name__}, not a tensor or module")
    return out


def snapshot(
    *roots: torch.Tensor,
    names: Mapping[str, Any] | None = None,
    model: torch.nn.Module | None = None,
    recorder: Recorder | None = None,
    root_names: list[str] | None = None,
    include_saved: bool = True,
) -> dict[str, Any]:
    """The autograd graph behind ``roots`` as a snapshot (plain JSON-able data).

    ``model``'s parameters are labelled with their qualified names
    (``encoder.layers.0.linear1.weight``); ``names`` adds your own labels
    (tensors, or modules whose parameters get ``name.`` prefixes).
    """
    if not roots:
        raise TypeError("snapshot() needs at least one tensor")
    for i, root in enumerate(roots):
        if not isinstance(root, torch.Tensor):
            raise TypeError(f"snapshot() takes tensors; argument {i} is a {type(root).__name__}")
        if root.grad_fn is None:
            raise ValueError(
                f"argument {i} has no grad_fn: it was not computed from tensors that require "
                "grad (or it was computed under no_grad), so there is no graph to show"
            )
    variables: dict[str, Any] = {}
    if model is not None:
        variables.update(_named({"": model}))
    if names:
        variables.update(_named(names))
    labels = root_names or (["loss"] if len(roots) == 1 else [f"root{i}" for i in range(len(roots))])
    for label, root in zip(labels, roots):
        variables.setdefault(label, root)
    registry = recorder.registry if recorder is not None else IdRegistry()
    cap = capture(variables, registry, include_saved=include_saved)
    graph = cap.graph
    if recorder is not None:
        for node_id, fn in cap.node_objects.items():
            module = recorder.module_of.get(id(fn))
            if module is not None:
                graph.nodes[node_id]["module"] = module
    # (capture already named parameters' modules from their qualified names)
    for _node_id, data in graph.nodes(data=True):
        data["new"] = False
    passes = recorder.passes if recorder is not None else []
    history: dict[str, list[Any]] = {}
    for p in passes:
        for step in p.steps:
            if step.label == "AccumulateGrad":
                for v in step.vars:
                    history.setdefault(v, []).append(step.grad_outputs[0] if step.grad_outputs else None)
    return {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "source": "api",
        "device": str(roots[0].device),
        "cursor": 0,
        "statements": [],
        "results": [],
        "tensors": {name: info.to_json() for name, info in cap.tensors.items()},
        "graph": graph_to_json(graph),
        "backward_passes": [p.to_json() for p in passes],
        "grad_history": history,
        "grad_events": {},
        "memory": {
            "statements": [],
            "totals": {"allocated_bytes": 0, "saved_bytes": cap.saved_bytes, "live_bytes": cap.live_bytes},
        },
        "root_values": [tensor_value(r) for r in roots],
    }


def save(snap: Mapping[str, Any], path: str | Path) -> Path:
    """Write a snapshot as versioned JSON (``format``: gradviz-snapshot, ``version``: 1)."""
    data = dict(snap)
    data.setdefault("format", FORMAT)
    data.setdefault("version", FORMAT_VERSION)
    path = Path(path)
    path.write_text(json.dumps(data, allow_nan=False, default=str), encoding="utf-8")
    return path


def load(path: str | Path) -> dict[str, Any]:
    """Read a snapshot written by :func:`save`; refuses other files with a clear message."""
    return read_snapshot(path)


def show(*roots: torch.Tensor, **kwargs: Any) -> int:
    """Open the window, read-only, on the graph behind ``roots`` (blocks until it closes).

    Takes :func:`snapshot`'s arguments (``model=``, ``names=``, ``recorder=``, …):
    pass the recorder of a ``gradviz.record(model)`` block to replay its backward
    passes with F11 and collapse the model's modules. The window process is this
    one; the UI itself never imports torch.
    """
    snap = snapshot(*roots, **kwargs)
    from gradviz.ui.app import run_app  # lazily: the library works without PySide6

    return run_app(snapshot=snap)
