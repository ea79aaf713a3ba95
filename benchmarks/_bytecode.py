"""Bytecode for the gradviz that a whole-process benchmark times.

An installed gradviz has its modules compiled: pip byte-compiles a wheel's modules
when it installs it, as it did torch's. A source checkout may have none: the kernel
never writes bytecode (``gradviz.runner.kernel_environment`` sets
``PYTHONDONTWRITEBYTECODE``), so the modules only the kernel imports (the session,
the sandbox, the guards, the capture) are compiled from source at every kernel start,
and a machine whose environment sets ``PYTHONDONTWRITEBYTECODE`` (these benchmark
machines do) compiles every gradviz module in every process. That is about 0.1 s of
each ``gradviz run`` that no installed gradviz spends. The benchmarks that time whole
processes against plain ``python`` (whose torch is compiled) compile the tree they
time first, with :func:`byte_compile`, and say so.
"""

from __future__ import annotations

import compileall
from pathlib import Path


def byte_compile(package: Path) -> int:
    """Write the ``__pycache__`` bytecode of every module under ``package`` (a package
    folder, ``.../gradviz``) that lacks it or has it older than its source, as pip does
    on install; returns how many modules the package has. Raises ``RuntimeError`` when
    a module does not compile."""
    if not compileall.compile_dir(str(package), quiet=1):
        raise RuntimeError(f"some modules under {package} do not compile")
    return sum(1 for _ in package.rglob("*.py"))
