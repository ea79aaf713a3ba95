"""gradviz: step through PyTorch autograd and watch the real graph.

The library API (``snapshot``, ``record``, ``save``, ``load``, ``show``) lives in
:mod:`gradviz.api` and is imported lazily so ``import gradviz.core`` stays light.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"
__all__ = ["snapshot", "record", "save", "load", "show", "__version__"]


def __getattr__(name: str) -> Any:
    if name in ("snapshot", "record", "save", "load", "show", "Recorder"):
        from gradviz import api

        return getattr(api, name)
    raise AttributeError(f"module 'gradviz' has no attribute {name!r}")
