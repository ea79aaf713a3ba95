"""Issue 22's "Smaller things seen", each checked as a user meets it: the CLI run as a
subprocess, the window under pytest-qt."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from gradviz import i18n

ENCODER = (
    "import torch\n"
    "import torch.nn as nn\n"
    "torch.manual_seed(0)\n"
    "layer = nn.TransformerEncoderLayer(d_model=16, nhead=2, dim_feedforward=32, batch_first=True)\n"
    "model = nn.TransformerEncoder(layer, num_layers=3, enable_nested_tensor=False)\n"
    "x = torch.randn(2, 5, 16)\n"
    "loss = model(x).sum()\n"
)

GRAD_FN = (
    "import torch\n"
    "x = torch.tensor(2.0, requires_grad=True)\n"
    "y = x * 3\n"
    "print(y.grad_fn)\n"
    "y.grad_fn\n"
)


def gradviz(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "gradviz", *args],
        capture_output=True, text=True, timeout=300, cwd=cwd,
    )


def page_data(path: Path) -> dict:
    page = path.read_text(encoding="utf-8")
    match = re.search(r'<script type="application/json" class="gvz-data">(.*?)</script>', page, re.S)
    assert match
    return json.loads(match.group(1))


# ------------------------------------------------------------- a script's model, per layer


def test_model_blocks_group_each_variables_model_on_its_own():
    from gradviz.app.display import model_blocks

    script = ["layer", "layer.linear1", "layer.norm1", "model", "model.layers",
              "model.layers.0", "model.layers.0.linear1", "model.layers.1",
              "model.layers.1.linear1", "model.layers.10", "model.layers.10.linear1"]
    assert model_blocks(script) == [
        "layer.linear1", "layer.norm1", "model.layers.0", "model.layers.1", "model.layers.10"
    ]
    # one model (the library's names, or a script with one): as before
    assert model_blocks(["layers", "layers.0", "layers.0.a", "layers.1", "layers.1.a"]) == [
        "layers.0", "layers.1"
    ]
    assert model_blocks(["tok", "blocks", "blocks.0", "blocks.0.a", "blocks.1", "blocks.1.a",
                         "head"]) == ["blocks.0", "blocks.1", "head", "tok"]
    # with the module tree's counts: the copied template layer is no model, one box
    assert model_blocks({"layer": 12, "layer.linear1": 2, "layer.norm1": 10, "model": 228,
                         "model.layers": 228, "model.layers.0": 112, "model.layers.1": 116}) == [
        "layer", "model.layers.0", "model.layers.1"
    ]
    # two models of a size (a GAN's): each by its blocks
    assert model_blocks({"d": 90, "d.net": 90, "d.net.0": 45, "d.net.1": 45, "g": 100,
                         "g.net": 100, "g.net.0": 50, "g.net.1": 50}) == [
        "d.net.0", "d.net.1", "g.net.0", "g.net.1"
    ]


def test_export_groups_a_scripts_encoder_per_layer_as_the_library_does(tmp_path):
    torch = pytest.importorskip("torch")
    import gradviz as gv

    script = tmp_path / "encoder.py"
    script.write_text(ENCODER, encoding="utf-8")
    out = tmp_path / "encoder.html"
    proc = gradviz("export", str(script), "-o", str(out), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    cli = {k for k, g in page_data(out)["groups"].items() if not g["chain"]}
    assert "g:model" not in cli  # (was: the whole model in one box)
    assert {"g:model.layers.0", "g:model.layers.1", "g:model.layers.2"} <= cli
    assert "g:layer" in cli  # the template the encoder copied: one box, not its parts

    namespace: dict = {}
    exec(compile(ENCODER, str(script), "exec"), namespace)  # noqa: S102 - the test's own script
    model = namespace["model"]
    with gv.record(model) as rec:
        loss = model(torch.randn(2, 5, 16)).sum()
    api = {k for k, g in page_data_of(gv.snapshot(loss, model=model, recorder=rec).to_html())
           ["groups"].items() if not g["chain"]}
    assert api == {"g:layers.0", "g:layers.1", "g:layers.2"}
    assert {k for k in cli if k.startswith("g:model.")} == {"g:model." + k[2:] for k in api}


def page_data_of(page: str) -> dict:
    match = re.search(r'class="gvz-data">(.*?)</script>', page, re.S)
    if match is None:  # the notebook frame holds the page escaped in srcdoc
        import html

        return page_data_of(html.unescape(page))
    return json.loads(match.group(1))


# ------------------------------------------------------------- grad_fn addresses


@pytest.mark.parametrize("mode", ["--trust", "--restricted"])
def test_grad_fn_objects_read_as_python_prints_them_with_the_address_left_out(tmp_path, mode):
    script = tmp_path / "grad_fn.py"
    script.write_text(GRAD_FN, encoding="utf-8")
    proc = gradviz("run", mode, str(script), cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0x000000000000" not in proc.stdout
    printed = next(line for line in proc.stdout.splitlines() if "| <MulBackward0" in line)
    if mode == "--restricted":
        assert "= <MulBackward0 object at 0x\u2026>" in proc.stdout
        assert printed.endswith("| <MulBackward0 object at 0x\u2026>")
    else:  # print and the value ran as Python: Python's own text, real addresses
        assert re.search(r"\| <MulBackward0 object at 0x[0-9a-f]{6,}>$", printed), printed
        assert re.search(r"= <MulBackward0 object at 0x[0-9a-f]{6,}>", proc.stdout), proc.stdout


def test_the_output_panel_shows_a_hidden_address_as_left_out(qtbot):
    from gradviz.core.session import Session
    from gradviz.ui.panels.output import OutputPanel

    session = Session(GRAD_FN)
    session.run_to_end()
    state = session.snapshot()
    panel = OutputPanel()
    qtbot.addWidget(panel)
    panel.set_state(state)
    panel.add_live("<AddBackward0 object at 0x000000000000>\n", None)
    text = panel.browser.toPlainText()
    assert "0x000000000000" not in text
    assert "object at 0x\u2026>" in text


def test_the_placeholder_is_only_the_kernels():
    from gradviz.app.models import readable_addresses

    assert readable_addresses("[<MulBackward0 object at 0x000000000000>]") == (
        "[<MulBackward0 object at 0x\u2026>]"
    )
    # a real address (a trusted print) and other hex stay as they are
    assert readable_addresses("at 0x7f0012345678 at 0x0000000000001") == (
        "at 0x7f0012345678 at 0x0000000000001"
    )


# ------------------------------------------------------------- files


def test_a_json_export_opens_as_a_snapshot(tmp_path):
    from gradviz.app.files import read_path

    script = tmp_path / "s.py"
    script.write_text(GRAD_FN.replace("print(y.grad_fn)\ny.grad_fn\n", "y.backward()\n"))
    graph = tmp_path / "graph.json"
    proc = gradviz("export", str(script), "-o", str(graph), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(graph.read_text())["nodes"]  # the graph's data, as before
    opened = read_path(graph)  # what `gradviz open graph.json` and File > Open read
    assert opened.kind == "snapshot", opened.message
    assert {n["label"] for n in opened.data["graph"]["nodes"]} >= {"MulBackward0", "x"}
    # the headless commands read it as a snapshot too
    proc = gradviz("export", str(graph), "-o", str(tmp_path / "again.svg"))
    assert proc.returncode == 0 and "MulBackward0" in (tmp_path / "again.svg").read_text()
    proc = gradviz("run", str(graph))
    assert proc.returncode == 2 and "is a gradviz snapshot" in proc.stderr

    # a .gradviz.json export is the run's snapshot: its statements, tensors and passes
    snap = tmp_path / "run.gradviz.json"
    proc = gradviz("export", str(script), "-o", str(snap), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    from gradviz.graph.snapshot_file import read_snapshot

    data = read_snapshot(snap)
    assert data["tensors"]["x"]["grad"] == 3.0 and len(data["backward_passes"]) == 1
    opened = read_path(snap)
    assert opened.kind == "statements" and "y.backward()" in opened.text
    proc = gradviz("export", str(snap), "-o", str(tmp_path / "copy.gradviz.json"))
    assert proc.returncode == 0 and read_snapshot(tmp_path / "copy.gradviz.json")["tensors"]


def test_a_notebook_is_run_by_its_code_cells_and_a_bare_file_opens(tmp_path):
    nb = {"cells": [{"cell_type": "code", "source": "import torch\nx = torch.ones(2)"}],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path = tmp_path / "n.ipynb"
    path.write_text(json.dumps(nb))
    proc = gradviz("run", str(path), "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert [s["source"] for s in json.loads(proc.stdout)["statements"]] == [
        "import torch", "x = torch.ones(2)"
    ]
    proc = gradviz(str(tmp_path / "absent.py"))
    assert proc.returncode == 2 and "no such file" in proc.stderr  # `open`, not a usage error


# ------------------------------------------------------------- the timeline


def test_a_timeline_chip_after_a_step_back_names_a_line_not_a_count():
    from gradviz.app.timeline import describe_step

    statements = [{"line": n} for n in (1, 2, 5, 9, 24)]
    try:
        i18n.set_language("en")
        assert describe_step({"cursor": 4, "statements": statements}) == (
            "before line 24", "4 statements run; line 24 runs next"
        )
        assert describe_step({"cursor": 5, "statements": statements}) == (
            "after 5 statements", "5 statements run"
        )
        assert describe_step({"cursor": 1}) == ("after 1 statement", "1 statement run")
        i18n.set_language("ko")
        assert describe_step({"cursor": 4, "statements": statements}) == (
            "24번 줄 앞", "문장 4개 실행됨. 다음은 24번 줄"
        )
        assert describe_step({"cursor": 5, "statements": statements})[0] == "문장 5개 실행 뒤"
    finally:
        i18n.set_language("en")


# ------------------------------------------------------------- F7 and Ctrl+F11


def test_f7_and_run_to_backward_without_any_backward_say_so(qtbot, main_window):
    from PySide6.QtCore import Qt

    window = main_window(source="import torch\nx = torch.ones(2, requires_grad=True)\ny = x * 2\n")
    window.canvas.setFocus()
    qtbot.keyClick(window.canvas, Qt.Key.Key_F7)
    assert "No backward pass to step through yet" in window.status_text()
    window.stepper.run_to_backward()
    qtbot.waitUntil(lambda: "No backward() call is left to run to" in window.status_text(),
                    timeout=60_000)


def test_a_top_level_module_with_ops_of_its_own_stays_one_box():
    from gradviz.app.display import model_blocks

    # module_tree's counts: "net" runs 3 ops outside its one child
    assert model_blocks({"loss_fn": 2, "net": 10, "net.body": 7, "net.body.0": 3,
                         "net.body.1": 4}) == ["loss_fn", "net"]
    assert model_blocks({"loss_fn": 2, "net": 7, "net.body": 7, "net.body.0": 3,
                         "net.body.1": 4}) == ["loss_fn", "net.body.0", "net.body.1"]
