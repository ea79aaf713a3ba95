"""The library API, for trusted code: your own script or notebook, run by your own Python.

Unlike the window's scripts, nothing here is sandboxed: it is a lens on tensors
you already have.

>>> import gradviz
>>> with gradviz.record() as rec:
...     loss = model(x).pow(2).mean()
...     loss.backward()
>>> snap = gradviz.snapshot(loss, model=model, recorder=rec)
>>> snap                                   # in a notebook: the graph, inline
>>> snap.save("run.gradviz.json")          # open it with `gradviz open run.gradviz.json`

A :class:`Snapshot` holds the same data as the window's snapshots (see
``docs/snapshot-format.md``); it reads like a dict (``snap["graph"]``).
"""

from __future__ import annotations

import json
import sys
import weakref
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import torch

from gradviz.core.backward import BackwardPass, BackwardStep, _WithTrace, record_backward
from gradviz.core.capture import (
    IdRegistry,
    NodeNames,
    capture,
    graph_to_json,
    stats_budget,
    tensor_value,
)
from gradviz.core.modules import ModuleTags, tagging
from gradviz.graph.snapshot_file import SNAPSHOT_FORMAT, SNAPSHOT_VERSION, read_snapshot
from gradviz.headless import no_display_reason

__all__ = ["NoDisplayError", "Recorder", "Snapshot", "load", "record", "save", "show", "snapshot"]

RECORD_STATS_ELEMENTS = 20_000_000
"""Values one recorded backward pass reduces for its gradients' min/max/mean (all steps
together); past them a gradient shows its first values and its size."""

FORMAT = SNAPSHOT_FORMAT
FORMAT_VERSION = SNAPSHOT_VERSION


class Snapshot(dict):  # type: ignore[type-arg]
    """An autograd graph, its backward passes and tensors, as plain JSON-able data.

    A dict (``snap["graph"]["nodes"]``, ``json.dumps(snap)`` as before) that also
    writes itself (:meth:`to_json`, :meth:`save`) and draws itself: :meth:`to_svg`,
    :meth:`to_html`, and in Jupyter, VS Code notebooks and Colab the interactive view
    and the laid-out graph as SVG (gradviz's own renderer, no Graphviz) from one
    layout (``_repr_mimebundle_``; ``_repr_html_`` and ``_repr_svg_`` each alone).
    """

    __slots__ = ()

    def to_dict(self) -> dict[str, Any]:
        """A plain dict of the snapshot (the window and the HTML view take one)."""
        return dict(self)

    def to_json(self, indent: int | None = None) -> str:
        """The snapshot file's text: versioned JSON (``format``: gradviz-snapshot)."""
        data = {"format": FORMAT, "version": FORMAT_VERSION, **self}
        return json.dumps(data, allow_nan=False, default=str, indent=indent)

    def save(self, path: str | Path) -> Path:
        """Write the snapshot to ``path``; open it with ``gradviz open PATH``."""
        path = Path(path)
        path.write_text(self.to_json(), encoding="utf-8")
        return path

    def to_svg(self) -> str:
        """The laid-out graph as an SVG document, drawn as the window and ``gradviz export`` draw it."""
        from gradviz.export import snapshot_to_svg

        return snapshot_to_svg(self)

    def to_html(self, language: str | None = None) -> str:
        """The interactive view: one self-contained HTML page (no network), for a file.

        ``language`` (``"ko"``, ``"en"``): its words; by default ``GRADVIZ_LANG``, else
        the locale, as ``gradviz`` on the command line chooses (the notebook's view too)."""
        from gradviz.html_view import render_html  # lazily: most uses never draw HTML

        return render_html(self.to_dict(), language=language)

    def _repr_html_(self) -> str | None:
        """The interactive view inside a notebook (its own frame: Jupyter, VS Code, Colab).

        None for a graph too big for a page (``PageTooBig``): IPython then shows the SVG
        alone, as :meth:`_repr_mimebundle_` does. IPython calls this after the bundle when
        the bundle has no page, and a raise here printed a traceback under the picture."""
        from gradviz.html_view import PageTooBig, notebook_html

        try:
            return notebook_html(self.to_dict())
        except PageTooBig:
            return None

    def _repr_svg_(self) -> str:
        return _svg_element(self.to_svg())

    def _repr_mimebundle_(
        self, include: Any = None, exclude: Any = None
    ) -> dict[str, str]:
        """What a notebook shows, laid out once: the interactive page and, for front ends
        without HTML, the SVG at the page's positions (IPython calls this instead of
        ``_repr_html_`` and ``_repr_svg_``, which laid the graph out once each)."""
        from gradviz.export import snapshot_to_svg
        from gradviz.html_view import PageTooBig, notebook_page

        def wanted(mime: str) -> bool:
            return (not include or mime in include) and not (exclude and mime in exclude)

        out = {"text/plain": repr(self)} if wanted("text/plain") else {}
        positions = None
        if wanted("text/html"):
            try:
                out["text/html"], positions = notebook_page(self.to_dict())
            except PageTooBig:
                pass  # too big for a page: the SVG alone
        if wanted("image/svg+xml"):
            out["image/svg+xml"] = _svg_element(snapshot_to_svg(self, positions=positions))
        return out

    def __repr__(self) -> str:
        graph = self.get("graph") or {}
        nodes = len(graph.get("nodes") or [])
        passes = len(self.get("backward_passes") or [])
        roots = [str(n) for n in self.get("root_names") or []]
        named = f", roots {', '.join(roots)}" if roots else ""
        return (
            f"<gradviz.Snapshot: {nodes} node{'' if nodes == 1 else 's'}, {passes} backward "
            f"pass{'' if passes == 1 else 'es'}, device {self.get('device')}{named}>"
        )

    __str__ = __repr__


def _svg_element(document: str) -> str:
    """The ``<svg>`` element alone: notebooks put it inside HTML, where ``<?xml?>`` is noise."""
    start = document.find("<svg")
    return document[start:] if start >= 0 else document


class Recorder:
    """Backward passes run inside ``gradviz.record()``.

    Each pass keeps the autograd node behind each step and every leaf's ``.grad``
    right after the pass, so names given later (to :meth:`name` or to
    :func:`snapshot`) still label the steps and the accumulation history.
    """

    def __init__(self) -> None:
        self.registry = IdRegistry()
        self.passes: list[BackwardPass] = []
        #: which module built which node (by the node's birth: holds no node alive)
        self.module_tags = ModuleTags()
        self._names = NodeNames()
        #: what name() was given: kept alive so the ids above stay theirs
        self._named: list[tuple[str, torch.Tensor]] = []
        #: per pass: the autograd node of each step (aligned with pass.steps)
        self._step_nodes: list[list[Any]] = []
        #: per pass: (leaf, its .grad right after the pass) for each leaf it accumulated into
        self._grads_after: list[list[tuple[torch.Tensor, Any]]] = []

    def name(self, mapping: Mapping[str, Any]) -> None:
        """Give recorded steps the user's names (tensor or module -> name), before or after backward()."""
        for name, t in _named(mapping).items():
            self._named.append((name, t))
            self._names.setdefault(id(t), []).append(name)
            if t.grad_fn is not None:
                self._names.add(t.grad_fn, name)

    def _record(self, func: Any, args: tuple, kwargs: dict, run: Any) -> Any:
        nodes: list[Any] = []

        def on_step(fn: Any, step: BackwardStep) -> None:
            nodes.append(fn)

        try:
            # every step's gradients are summarized: on GPT-2 some 3,000 of up to 2.4M
            # values each, seconds of reductions; a pass shares one budget of them
            with stats_budget(RECORD_STATS_ELEMENTS):
                result, trace = record_backward(
                    func, args, kwargs, run, self.registry, self._names, on_step=on_step
                )
        except _WithTrace as failed:
            self._add(failed.trace, nodes)
            raise failed.original from None
        self._add(trace, nodes)
        return result

    def _add(self, trace: BackwardPass, nodes: list[Any]) -> None:
        grads: list[tuple[torch.Tensor, Any]] = []
        if trace.kind == "backward":
            for fn in nodes:
                leaf = getattr(fn, "variable", None) if type(fn).__name__ == "AccumulateGrad" else None
                if isinstance(leaf, torch.Tensor):
                    grads.append((leaf, tensor_value(leaf.grad) if leaf.grad is not None else None))
        self.passes.append(trace)
        self._step_nodes.append(nodes)
        self._grads_after.append(grads)

    def _passes_json(
        self, names: Mapping[int, list[str]]
    ) -> tuple[list[dict[str, Any]], dict[str, list[Any]]]:
        """The passes with every step named by ``names`` (id -> names), and the grad history."""
        out: list[dict[str, Any]] = []
        history: dict[str, list[Any]] = {}
        for trace, nodes, grads in zip(self.passes, self._step_nodes, self._grads_after):
            data = trace.to_json()
            if len(nodes) == len(data["steps"]):
                for step, fn in zip(data["steps"], nodes):
                    owner = fn.variable if step["label"] == "AccumulateGrad" else fn
                    step["vars"] = _merged(step["vars"], names.get(id(owner), []))
            leaf_grads: dict[str, Any] = {}
            for leaf, value in grads:
                for name in names.get(id(leaf), []):
                    leaf_grads[name] = value
                    history.setdefault(name, []).append(value)
            data["leaf_grads"] = {**data.get("leaf_grads", {}), **leaf_grads}
            out.append(data)
        return out, history


def _merged(first: list[str], more: list[str]) -> list[str]:
    return first + [n for n in more if n not in first]


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
        return recorder._record(
            original_backward, args, kwargs, lambda: original_backward(*args, **kwargs)
        )

    def grad(*args: Any, **kwargs: Any) -> Any:
        return recorder._record(original_grad, args, kwargs, lambda: original_grad(*args, **kwargs))

    with ExitStack() as stack:
        for root in modules:
            recorder.name({"": root})
            stack.enter_context(tagging(root, recorder.module_tags.tag))
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
) -> Snapshot:
    """The autograd graph behind ``roots`` as a :class:`Snapshot`.

    ``model``'s parameters are labelled with their qualified names
    (``encoder.layers.0.linear1.weight``); ``names`` adds your own labels
    (tensors, or modules whose parameters get ``name.`` prefixes). Names given
    here also label the recorder's passes and history, even when ``backward()``
    ran before the tensors had names.
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
    # torch keeps the wrapper of every node the walk touched, and would free the graph
    # by recursion once the caller drops it: a deep chain overflowed the stack (issue 12)
    IdRegistry.free_in_order(graph, cap.node_objects)
    if recorder is not None:
        for node_id, fn in cap.node_objects.items():
            module = recorder.module_tags.of(fn)
            if module is not None:
                graph.nodes[node_id]["module"] = module
    # (capture already named parameters' modules from their qualified names)
    # nothing in a snapshot was added "by the last statement": no violet glow, on
    # nodes or on edges
    for _node_id, data in graph.nodes(data=True):
        data["new"] = False
    for _u, _v, data in graph.edges(data=True):
        data["new"] = False
    passes: list[dict[str, Any]] = []
    history: dict[str, list[Any]] = {}
    if recorder is not None:
        by_id = NodeNames()  # tensors by id (held by the caller), nodes held
        for name, t in [*recorder._named, *variables.items()]:
            if name not in by_id.setdefault(id(t), []):
                by_id[id(t)].append(name)
            if t.grad_fn is not None:
                by_id.add(t.grad_fn, name)
        passes, history = recorder._passes_json(by_id)
    return Snapshot({
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "source": "api",
        "device": str(roots[0].device),
        "cursor": 0,
        "statements": [],
        "results": [],
        "tensors": {name: info.to_json() for name, info in cap.tensors.items()},
        "graph": graph_to_json(graph),
        "backward_passes": passes,
        "grad_history": history,
        "grad_events": {},
        "memory": {
            "statements": [],
            "totals": {"allocated_bytes": 0, "saved_bytes": cap.saved_bytes, "live_bytes": cap.live_bytes},
        },
        "root_names": list(labels[: len(roots)]),
        "root_values": [tensor_value(r) for r in roots],
    })


def save(snap: Mapping[str, Any], path: str | Path) -> Path:
    """Write a snapshot as versioned JSON (``format``: gradviz-snapshot, ``version``: 1)."""
    return (snap if isinstance(snap, Snapshot) else Snapshot(snap)).save(path)


def load(path: str | Path) -> Snapshot:
    """Read a snapshot written by :func:`save`, checked against the format's schema.

    Refuses other and damaged files with a ValueError that says what is wrong where.
    """
    return Snapshot(read_snapshot(path))


class NoDisplayError(RuntimeError):
    """:func:`show` was called where no window can open (no display)."""


_windows: weakref.WeakSet[Any] = weakref.WeakSet()


def show(*roots: Any, **kwargs: Any) -> int | None:
    """Open the window, read-only, on the graph behind ``roots`` (or on a :class:`Snapshot`).

    Takes :func:`snapshot`'s arguments (``model=``, ``names=``, ``recorder=``, …):
    pass the recorder of a ``gradviz.record(model)`` block to replay its backward
    passes with F7 and collapse the model's modules.

    Inside a running Qt application (IPython's ``%gui qt``, napari) the window
    opens and ``show`` returns None at once; the host keeps its look. Otherwise
    ``show`` runs Qt until the window closes and returns its exit code. Where no
    window can open (no display) it raises :class:`NoDisplayError` and the
    process lives on: display the snapshot inline instead. No torch kernel
    process is started for a read-only snapshot.
    """
    if len(roots) == 1 and isinstance(roots[0], Mapping) and not kwargs:
        snap = roots[0] if isinstance(roots[0], Snapshot) else Snapshot(roots[0])
    else:
        snap = snapshot(*roots, **kwargs)
    from gradviz.ui.app import host_application  # lazily: the library works without PySide6

    if host_application() is None:
        reason = no_display_reason()
        if reason:
            raise NoDisplayError(
                f"gradviz.show() cannot open a window: {reason}. In a notebook, show the "
                "snapshot inline instead: make it the last expression of a cell, or call "
                "`IPython.display.display(snap)` (the interactive page, with a static SVG "
                "beside it); or save it with `snap.save('run.gradviz.json')` and run "
                "`gradviz open run.gradviz.json` on a machine with a display"
            )
    from gradviz.ui.app import open_window, run_app

    if host_application() is not None:
        window = open_window(snapshot=snap.to_dict())
        _windows.add(window)
        return None
    if _in_notebook():
        # without %gui qt the cell runs Qt itself until the window closes: say so first
        print(NOTEBOOK_BLOCKS, file=sys.stderr, flush=True)
    return run_app(snapshot=snap.to_dict())


#: said before a notebook cell starts waiting on the window (no %gui qt)
NOTEBOOK_BLOCKS = (
    "gradviz.show(): this cell waits until the window is closed. Run `%gui qt` once in "
    "the notebook first and the window opens beside it, the notebook staying responsive; "
    "or display the snapshot inline (make it the last expression of a cell)."
)


def _in_notebook() -> bool:
    """True inside a Jupyter kernel (IPython with a kernel behind it), not a terminal."""
    ipython = sys.modules.get("IPython")
    get = getattr(ipython, "get_ipython", None) if ipython is not None else None
    shell = get() if callable(get) else None
    return shell is not None and getattr(shell, "kernel", None) is not None
