"""benchmarks/_bytecode.py: the whole-process benchmarks time a byte-compiled gradviz, as
pip installs it, not one that compiles its modules at every start."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.fixture(scope="module")
def byte_compile():
    spec = importlib.util.spec_from_file_location("_bytecode", BENCHMARKS / "_bytecode.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.byte_compile


def _package(root: Path) -> list[Path]:
    (root / "sub").mkdir(parents=True)
    files = [root / "__init__.py", root / "a.py", root / "sub" / "__init__.py", root / "sub" / "b.py"]
    for i, path in enumerate(files):
        path.write_text(f"VALUE = {i}\n", encoding="utf-8")
    return files


def test_every_module_gets_the_bytecode_the_interpreter_looks_for(byte_compile, tmp_path):
    files = _package(tmp_path / "pkg")
    assert byte_compile(tmp_path / "pkg") == len(files)
    for path in files:
        cached = Path(importlib.util.cache_from_source(str(path)))
        assert cached.is_file(), path
        # what the import system will load: this interpreter's magic number, then (a
        # timestamp .pyc, flags 0) the source's time and size, or (SOURCE_DATE_EPOCH set)
        # a hash of the source
        header = cached.read_bytes()[:16]
        assert header[:4] == importlib.util.MAGIC_NUMBER
        flags = int.from_bytes(header[4:8], "little")
        if flags == 0:
            stat = path.stat()
            assert int.from_bytes(header[8:12], "little") == int(stat.st_mtime) & 0xFFFFFFFF
            assert int.from_bytes(header[12:16], "little") == stat.st_size
        else:
            assert header[8:16] == importlib.util.source_hash(path.read_bytes())


def test_a_module_edited_since_is_compiled_again(byte_compile, tmp_path):
    files = _package(tmp_path / "pkg")
    byte_compile(tmp_path / "pkg")
    cached = Path(importlib.util.cache_from_source(str(files[1])))
    before = cached.read_bytes()
    files[1].write_text("VALUE = 'a longer value than before'\n", encoding="utf-8")
    stamp = files[1].stat().st_mtime + 2  # an edit a moment later (the header keeps seconds)
    os.utime(files[1], (stamp, stamp))
    byte_compile(tmp_path / "pkg")
    assert cached.read_bytes() != before


def test_a_module_that_does_not_compile_is_said(byte_compile, tmp_path):
    _package(tmp_path / "pkg")
    (tmp_path / "pkg" / "broken.py").write_text("def f(:\n", encoding="utf-8")
    with pytest.raises(RuntimeError, match="could not be compiled"):
        byte_compile(tmp_path / "pkg")


@pytest.mark.slow
def test_the_cold_start_benchmark_compiles_the_trees_it_times(tmp_path):
    """One run of one lesson, with a copy of gradviz without bytecode as its baseline, in
    an environment where no process writes bytecode itself (PYTHONDONTWRITEBYTECODE, as
    on these machines): the copy's modules have bytecode afterwards, so the benchmark
    wrote it, before the clock."""
    root = Path(__file__).resolve().parents[1]
    tree = tmp_path / "tree"
    shutil.copytree(root / "gradviz", tree / "gradviz",
                    ignore=shutil.ignore_patterns("__pycache__"))
    lesson = root / "resources" / "demos" / "02_first_backward.py"
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    out = subprocess.run(
        [sys.executable, str(BENCHMARKS / "bench_cold_start.py"), "--runs", "1",
         "--baseline", str(tree), str(lesson)],
        capture_output=True, text=True, timeout=300, check=True, env=env,
    )
    assert f"baseline: {sum(1 for _ in (tree / 'gradviz').rglob('*.py'))} modules" in out.stderr
    assert "byte-compiled, as an installed gradviz's are" in out.stderr
    assert "worst min ratio of this checkout" in out.stdout
    for module in ("core/session.py", "core/sandbox.py", "kernel_server.py", "cli.py"):
        source = tree / "gradviz" / module
        assert Path(importlib.util.cache_from_source(str(source))).is_file(), module
