"""gradviz: step through PyTorch autograd and watch the real graph.

The library API (``snapshot``, ``record``, ``save``, ``load``, ``show`` and the
:class:`Snapshot` they return) lives in :mod:`gradviz.api` and is imported lazily,
so ``import gradviz`` and ``import gradviz.core`` stay light (no torch until used).
"""

from __future__ import annotations

from typing import Any

#: the one version source: pyproject.toml reads it ([tool.setuptools.dynamic])
__version__ = "0.1.0"

_API = ("Snapshot", "snapshot", "record", "Recorder", "save", "load", "show", "NoDisplayError")
__all__ = [*_API, "__version__"]


def __getattr__(name: str) -> Any:
    if name in _API:
        from gradviz import api

        return getattr(api, name)
    raise AttributeError(f"module 'gradviz' has no attribute {name!r}")


def __dir__() -> list[str]:
    """The API and the module's own dunders (not the helpers this file imports)."""
    return sorted({*__all__, *(name for name in globals() if name.startswith("__"))})
