"""PySide6 widgets: a thin layer over gradviz.core (no autograd logic here)."""

from gradviz.ui import _compat  # noqa: F401  (guards against a PySide6 6.12.0 refcount bug)
