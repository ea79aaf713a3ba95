"""Smoke test of benchmarks/bench_peers.py: its models, its child protocol, its tables.

No timing assertions: figures belong to the benchmark's own run.
"""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path

import pytest
import torch

PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_peers.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_peers", PATH)
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_peers"] = module
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop("bench_peers", None)


def _graph_size(root: torch.Tensor) -> int:
    seen, todo = set(), [root.grad_fn]
    while todo:
        fn = todo.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        todo.extend(next_fn for next_fn, _ in fn.next_functions)
    return len(seen)


def test_full_size_models_have_the_published_parameter_counts(bench):
    with torch.device("meta"):  # no memory, no init cost
        gpt = bench.GPT()
        resnet = bench.ResNet()
    assert sum(p.numel() for p in gpt.parameters()) == 124_439_808  # GPT-2 small, tied head
    assert gpt.lm_head.weight is gpt.tok.weight
    assert sum(p.numel() for p in resnet.parameters()) == 25_557_032  # torchvision resnet50


def test_tiny_gpt_is_causal_and_has_a_backward_graph(bench):
    case = bench.gpt_case(tokens=8, vocab=97, context=16, d=32, heads=4, layers=2, mlp=64)
    root = case.root()
    assert root.dim() == 0 and root.grad_fn is not None
    assert _graph_size(root) > 50
    assert "tok.weight" in case.names() and "lm_head.weight" not in case.names()  # tied
    root.backward()
    assert case.model.tok.weight.grad is not None
    idx = case.inputs[0]
    changed = idx.clone()
    changed[0, -1] = (changed[0, -1] + 1) % 97
    with torch.no_grad():
        a, b = case.model(idx), case.model(changed)
    assert torch.allclose(a[:, :-1], b[:, :-1]) and not torch.allclose(a[:, -1], b[:, -1])


def test_tiny_resnet_and_the_other_graphs_build(bench):
    case = bench.resnet_case(blocks=(1, 1, 1, 1), width=4, classes=10, size=64)
    assert case.model(*case.inputs).shape == (1, 10)
    root = case.root()
    assert root.grad_fn is not None and _graph_size(root) > 50
    root.backward()
    chain = bench.chain_case(10)
    assert _graph_size(chain.root()) == 11 and set(chain.names()) == {"x"}
    assert _graph_size(bench.chain_case(10, "sinmul").root()) == 21
    assert bench.encoder_case(1).root().grad_fn is not None
    assert set(bench.DEFAULT_GRAPHS) <= set(bench.GRAPHS)


def test_gradviz_cell_paints_the_graph(bench, qapp):
    result = bench._run_gradviz(bench.chain_case(20))
    assert result["nodes"] > 20 and result["inked_samples"] > 0
    assert set(result["stages"]) == {"capture", "layout", "scene", "paint"}


def test_tables_from_fake_figures(bench):
    ok = bench.summarize([
        {"ok": True, "seconds": s, "nodes": 10, "stages": {"capture": s / 2}} for s in (2.0, 1.0, 3.0)
    ])
    assert (ok["min"], ok["median"], ok["stages"]["capture"]) == (1.0, 2.0, 1.0)
    fast = bench.summarize([{"ok": True, "seconds": 4.0, "nodes": 7}])
    timeout = bench.summarize([{"ok": False, "timeout": True, "error": "timeout after 300 s"}])
    failed = bench.summarize([{"ok": False, "error": "RecursionError: too deep"}])
    summary = {
        "chain5k": {"gradviz": ok, "torchviz": fast, "torchviz+saved": timeout,
                    "torchview": bench.summarize([], is_installed=False), "torchlens": failed},
    }
    text = bench.format_tables(summary, ["chain5k", "gpt2"], timeout=300.0)
    row = next(line for line in text.splitlines() if line.startswith("chain5k"))
    assert "10/7" in row and "1.00/2.00" in row and "4.00/4.00" in row
    assert "2.00x" in row and "timeout" in row and ">150x" in row
    assert "not installed" in text
    assert "chain5k / torchlens: failed: RecursionError: too deep" in text
    assert any(line.startswith("gpt2") for line in text.splitlines())  # no figures: dashes


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz dot is not installed")
def test_torchviz_cell_in_a_fresh_process(bench):
    pytest.importorskip("torchviz", reason="torchviz is not installed (pip install torchviz)")
    result = bench.measure("chain500", "torchviz", timeout=120)
    assert result["ok"], result
    assert result["nodes"] > 500 and result["stages"]["dot"] > 0
    late = bench.measure("chain500", "torchviz", timeout=0.01)
    assert late["ok"] is False and late["timeout"] is True


def test_unknown_graph_is_refused(bench, capsys):
    with pytest.raises(SystemExit):
        bench.main(["--graphs", "nope"])
    assert "unknown graphs" in capsys.readouterr().err
