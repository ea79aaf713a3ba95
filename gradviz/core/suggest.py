"""Refusal messages that teach: why a name is refused and what to write instead."""

from __future__ import annotations

import difflib

from gradviz.core import namespaces as ns
from gradviz.core import surface

#: modules scripts ask for that reach the machine, and why they are refused
SYSTEM_MODULES = {
    "os": "files and processes",
    "sys": "the interpreter",
    "subprocess": "processes",
    "shutil": "files",
    "pathlib": "files",
    "io": "files",
    "socket": "the network",
    "urllib": "the network",
    "requests": "the network",
    "pickle": "code hidden in data",
    "ctypes": "raw memory",
    "importlib": "the import system",
    "builtins": "the interpreter",
    "gc": "the interpreter's objects",
    "inspect": "the interpreter's frames",
    "threading": "threads",
    "multiprocessing": "processes",
    "signal": "process signals",
}

#: imports a lesson writes whose names gradviz draws itself or does not need
NOT_NEEDED = {
    "matplotlib": "gradviz draws the graph and the values itself; print what you want to see",
    "time": "gradviz times each statement itself",
    "typing": "annotations are accepted without importing typing",
}


def _close(name: str, candidates: list[str]) -> list[str]:
    return difflib.get_close_matches(name, candidates, n=3, cutoff=0.75)


def _listing(names: list[str], limit: int = 24) -> str:
    shown = sorted(names)[:limit]
    more = len(names) - len(shown)
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "")


def unavailable_member(module: ns.SafeModule, name: str) -> str:
    """``torch.X`` / ``from M import X`` refused: why, and what to write instead."""
    base = f"'{module.name}.{name}' is not available in gradviz scripts"
    short = module.name.rsplit(".", 1)[-1]
    reason = surface.denial_reason(name, module.name)
    if reason:
        return f"{base}: {reason}"
    if module.name == "torch" and name in ns.TENSOR_ATTRIBUTES:
        return f"{base}; it is a tensor method: write x.{name}(...)"
    members = [m for m in module.members if not m.startswith("_")]
    close = _close(name, members)
    if close:
        return f"{base}; did you mean {' or '.join(f'{short}.{c}' for c in close)}?"
    return base


def unavailable_tensor_attribute(name: str) -> str:
    base = f"the attribute '{name}' of Tensor is not available in gradviz scripts"
    reason = surface.denial_reason(name, "Tensor")
    if reason:
        return f"{base}: {reason}"
    torch_names = surface.allowed("torch")
    if name in torch_names:
        return f"{base}; write torch.{name}(x, ...)"
    close = _close(name, sorted(ns.TENSOR_ATTRIBUTES))
    if close:
        return f"{base}; did you mean {' or '.join(f'x.{c}' for c in close)}?"
    return base


def refused_import(module_name: str, importable: list[str]) -> str:
    top = module_name.split(".")[0]
    base = f"import of '{module_name}' refused"
    if top in SYSTEM_MODULES:
        return (
            f"{base}: scripts are shared between people, so they cannot reach "
            f"{SYSTEM_MODULES[top]}"
        )
    if top in NOT_NEEDED:
        return f"{base}: {NOT_NEEDED[top]}"
    if module_name.startswith("torch."):
        reason = surface.denial_reason(module_name.split(".")[1], "torch")
        if reason:
            return f"{base}: {reason}"
    close = _close(module_name, importable)
    if close:
        return f"{base}; did you mean {' or '.join(close)}?"
    if top == "torch":
        subs = sorted(m[len("torch."):] for m in importable if m.startswith("torch."))
        return f"{base}; from torch, scripts may import torch.{{{', '.join(subs)}}}"
    return f"{base}; scripts may import torch and its namespaces, numpy, math and random"


def refused_from_import(module: ns.SafeModule, name: str) -> str:
    base = f"'{name}' cannot be imported from {module.name} in gradviz scripts"
    reason = surface.denial_reason(name, module.name)
    if reason:
        return f"{base}: {reason}"
    members = [m for m in module.members if not m.startswith("_")]
    close = _close(name, members)
    if close:
        return f"{base}; did you mean {' or '.join(close)}?"
    return f"{base}; it offers {_listing(members)}"
