"""Smoke test of benchmarks/bench_export.py and the models it shares with bench_peers.py.

No timing assertions: figures belong to the benchmark's own run."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def peers():
    yield _load("bench_peers")
    sys.modules.pop("bench_peers", None)


def test_the_issue_models_build_small(peers):
    cases = [
        peers.llama_case(tokens=4, vocab=50, d=16, heads=2, layers=2, hidden=24, context=8),
        peers.vit_case(size=32, d=16, heads=2, layers=2, mlp=24, classes=5),
        peers.lstm_case(tokens=5, vocab=30, d=8),
        peers.unet_case(size=16, levels=2, width=4),
    ]
    for case in cases:
        root = case.root()
        assert root.dim() == 0 and root.grad_fn is not None
        root.backward()
        assert all(p.grad is not None for p in case.model.parameters() if p.requires_grad)
    assert {"llama16", "vit", "lstm", "unet"} <= set(peers.DEFAULT_GRAPHS)


def test_bench_export_prints_its_table(capsys, peers):
    bench = _load("bench_export")
    try:
        assert bench.main(["--graphs", "lstm", "--repeat", "1", "--no-torchviz"]) == 0
    finally:
        sys.modules.pop("bench_export", None)
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("lstm") and " new " in line)
    assert "x" in row and "-" not in row.split()[3]  # html/svg figures present


def test_bench_export_times_the_page_in_a_browser_or_says_why_not(capsys, peers):
    import shutil

    bench = _load("bench_export")
    try:
        assert bench.main(["--graphs", "lstm", "--repeat", "1", "--no-torchviz", "--browser"]) == 0
    finally:
        sys.modules.pop("bench_export", None)
    out = capsys.readouterr().out
    have = all(map(shutil.which, ("chromedriver",))) and any(
        map(shutil.which, ("chromium", "chromium-browser", "google-chrome"))
    ) and importlib.util.find_spec("selenium") is not None
    if not have:
        assert "--browser: skipped (" in out
        return
    table = out.split("the page in headless Chromium", 1)[1]
    row = next(line for line in table.splitlines() if line.startswith("lstm"))
    fields = row.split()
    assert fields[2] in ("all", "modules", "chains") and float(fields[3]) >= 0  # first picture, ms
    assert "modules" in row and "open" in row  # the pictures picked later, each timed
