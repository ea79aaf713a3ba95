"""Shared test helpers (no Qt)."""

from __future__ import annotations

import ast
import warnings

import numpy as np
import torch

from gradviz.core.layout import node_size
from gradviz.core.session import Session

#: the built-in lessons (README's demo table); a demo folder missing any of them is a broken install
LESSONS = frozenset({
    "devices", "first_backward", "retain_graph", "two_paths", "two_leaves", "custom_function",
    "no_grad_memory", "inplace_memory", "inplace_dangers", "shared_storage", "clone_vs_detach",
    "leaves",
})


def run_script(source: str, keep_going: bool = True, **kwargs) -> Session:
    session = Session(source, **kwargs)
    session.run_to_end(keep_going=keep_going)
    return session


def result_at(session: Session, line_text: str):
    """The result of the first statement whose source contains ``line_text``."""
    for r in session.results:
        if line_text in r.source:
            return r
    raise AssertionError(f"no statement containing {line_text!r} ran")


def run_plain(source: str, device: str = "cpu", seed: int = 0) -> dict:
    """Run a (trusted) demo with Python's own exec, statement by statement, keep-going."""
    torch.manual_seed(seed)
    np.random.seed(seed)
    namespace: dict = {"torch": torch, "dev": torch.device(device), "np": np, "numpy": np}
    tree = ast.parse(source)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _exec_each(tree, namespace)
    return namespace


def _exec_each(tree: ast.Module, namespace: dict) -> None:
    for stmt in tree.body:
        module = ast.Module(body=[stmt], type_ignores=[])
        try:
            exec(compile(module, "<demo>", "exec"), namespace)  # noqa: S102 - trusted test input
        except Exception:  # noqa: BLE001 - the demos fail on purpose in places
            pass


def boxes(graph, pos: dict) -> dict:
    """Each node's box (left, top, right, bottom) at ``pos``, sized as the layout sizes it."""
    out = {}
    for v, (x, y) in pos.items():
        w, h = node_size(graph.nodes[v])
        out[v] = (x - w / 2, y - h / 2, x + w / 2, y + h / 2)
    return out


def overlapping(graph, pos: dict) -> list[tuple]:
    """Pairs of node boxes that intersect (a sweep over x, fine for test sizes)."""
    bx = sorted(boxes(graph, pos).items(), key=lambda kv: kv[1][0])
    bad = []
    for i, (a, ba) in enumerate(bx):
        for b, bb in bx[i + 1 :]:
            if bb[0] >= ba[2]:
                break
            if bb[1] < ba[3] and ba[1] < bb[3]:
                bad.append((a, b))
    return bad
