"""What a statement's source says about the graph, read off its AST (no torch, no Qt).

The kernel's debugger and the window's guide share one rule for "this statement runs a
backward pass", so the window can tell a learner what Step will do without asking the
kernel.
"""

from __future__ import annotations

import ast


def calls_backward(stmt: ast.stmt) -> bool:
    """Whether a simple statement calls ``.backward(...)``, ``autograd.backward`` or
    ``autograd.grad`` (compound statements are entered, not stopped at)."""
    if isinstance(stmt, (ast.For, ast.While, ast.If, ast.With, ast.Try, ast.FunctionDef,
                         ast.ClassDef)):
        return False
    for node in ast.walk(stmt):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
            if name == "backward":
                return True
            if name == "grad" and isinstance(f, ast.Attribute) and (
                isinstance(f.value, ast.Attribute) and f.value.attr == "autograd"
                or isinstance(f.value, ast.Name) and f.value.id == "autograd"
            ):
                return True
    return False
