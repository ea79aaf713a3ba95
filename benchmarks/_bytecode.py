"""Bytecode for the gradviz that a whole-process benchmark times.

An installed gradviz has its modules compiled: pip byte-compiles a wheel's modules
when it installs it, as it did torch's. A source checkout may have none, and then:

- a confined kernel (the window's restricted mode, ``gradviz run --restricted``) never
  writes bytecode (``gradviz.runner.kernel_environment`` sets
  ``PYTHONDONTWRITEBYTECODE``), so the modules only the kernel imports (the session, the
  sandbox, the guards, the capture) are compiled from source at each of its starts;
- a trusted kernel and the CLI get the user's environment: they write bytecode on a
  first run, unless the environment sets ``PYTHONDONTWRITEBYTECODE``, as these benchmark
  machines' does; then every gradviz module is compiled in every process.

Either way that is about 0.1 s of a start that no installed gradviz spends. The
benchmarks that time whole processes against plain ``python`` (whose torch is compiled)
compile the tree they time first, with :func:`byte_compile`, and say so.
"""

from __future__ import annotations

import compileall
import sys
from pathlib import Path


def byte_compile(package: Path) -> int:
    """Write the ``__pycache__`` bytecode of every module under ``package`` (a package
    folder, ``.../gradviz``) that lacks it or has it older than its source, as pip does
    on install; returns how many modules the package has. Raises ``RuntimeError`` when
    a module does not compile or its bytecode cannot be written (a read-only install)."""
    if not compileall.compile_dir(str(package), quiet=1):
        raise RuntimeError(f"some modules under {package} could not be compiled or written")
    return sum(1 for _ in package.rglob("*.py"))


def byte_compile_note(package: Path) -> str:
    """:func:`byte_compile` ``package``, and the line a benchmark prints about it."""
    return f"{byte_compile(package)} modules of {package} byte-compiled, as an installed gradviz's are"


if __name__ == "__main__":  # readme.sh: python3 benchmarks/_bytecode.py gradviz
    print("bytecode:", byte_compile_note(Path(sys.argv[1])))
