"""The rooms' import contracts (issue 23), checked in a fresh interpreter each:

- ``gradviz.core`` (the engine) never imports Qt;
- ``gradviz.graph`` (the graph pipeline) imports neither Qt, torch nor the engine;
- ``gradviz.app`` imports neither Qt, torch nor the engine;
- the window (``gradviz.ui``) never imports torch, nor any engine module (the
  sandbox, the session, the op guard, the trusted engine, ``gradviz.core`` at all):
  it talks to the kernel.
"""

from __future__ import annotations

import json
import os
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import gradviz

ROOT = Path(gradviz.__file__).resolve().parent
ENGINE = ("gradviz.core.sandbox", "gradviz.core.session", "gradviz.core.guards",
          "gradviz.core.pyengine", "gradviz.core.capture", "gradviz.kernel_server")


def _modules(package: str) -> list[str]:
    folder = ROOT / package.split(".", 1)[1].replace(".", "/")
    return [f"{package}.{m.name}" for m in pkgutil.iter_modules([str(folder)])]


def _loaded_after_importing(modules: list[str]) -> set[str]:
    code = (
        "import importlib, json, sys\n"
        f"for m in {modules!r}:\n"
        "    importlib.import_module(m)\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    return set(json.loads(proc.stdout.strip().splitlines()[-1]))


def _offenders(loaded: set[str], roots: tuple[str, ...]) -> list[str]:
    return sorted(m for m in loaded if m.split(".")[0] in roots or m in roots)


def test_core_never_imports_qt():
    loaded = _loaded_after_importing(_modules("gradviz.core"))
    assert not _offenders(loaded, ("PySide6", "shiboken6")), "core imported Qt"


def _engine_modules(loaded: set[str]) -> list[str]:
    return sorted(m for m in loaded if m == "gradviz.core" or m.startswith("gradviz.core.")
                  or m == "gradviz.kernel_server")


def test_graph_imports_neither_qt_torch_nor_the_engine():
    loaded = _loaded_after_importing(_modules("gradviz.graph"))
    assert not _offenders(loaded, ("PySide6", "shiboken6")), "graph imported Qt"
    assert not _offenders(loaded, ("torch",)), "graph imported torch"
    assert not _engine_modules(loaded), f"graph imported the engine: {_engine_modules(loaded)}"


def test_app_imports_neither_qt_nor_torch():
    loaded = _loaded_after_importing(_modules("gradviz.app"))
    assert not _offenders(loaded, ("PySide6", "shiboken6")), "app imported Qt"
    assert not _offenders(loaded, ("torch",)), "app imported torch"
    assert not _engine_modules(loaded), f"app imported the engine: {_engine_modules(loaded)}"


@pytest.mark.skipif(pytest.importorskip("PySide6") is None, reason="needs PySide6")
def test_the_window_imports_neither_torch_nor_the_engine():
    loaded = _loaded_after_importing(_modules("gradviz.ui"))
    assert not _offenders(loaded, ("torch",)), "the window imported torch"
    engine = sorted(set(ENGINE) & loaded)
    assert not engine, f"the window imported the engine: {engine}"
    assert not _engine_modules(loaded), f"the window imported the engine: {_engine_modules(loaded)}"
