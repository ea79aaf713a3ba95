"""Trusted mode: a script gradviz runs as real Python leaves what plain Python leaves.

Each script (the cut-down tutorials in ``tests/tutorials/`` and the practitioner
scripts in ``tests/practitioner/``, shrunk from public code nobody here wrote) runs
twice: through a trusted :class:`~gradviz.core.session.Session`, statement by
statement with ``--keep-going`` semantics, and through plain ``exec`` of the same
statements in a ``__main__`` namespace, from the same seeds, file name and working
folder. Compared: which statements fail, on which line, with which error type;
every top-level tensor's value (bit for bit on the CPU), dtype, shape, flags,
``grad`` and ``grad_fn``; every module's parameters and their grads; the multiset
of grad_fn node types reachable from the script's names; and the printed output.
"""

from __future__ import annotations

import ast
import collections
import contextlib
import io
import os
import random
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from gradviz.core.session import Session

from .helpers import walk_grad_fns
from .test_tutorials import comparable_output, process_names, same_module, same_tensor

HERE = Path(__file__).resolve().parent
SCRIPTS = sorted(HERE.glob("tutorials/[0-9][0-9]_*.py")) + sorted(
    HERE.glob("practitioner/[0-9][0-9]_*.py")
)


@contextlib.contextmanager
def _script_process(path: Path):
    """What ``python path`` sets up: its folder as working directory and first on
    sys.path, and the process-wide torch state put back afterwards."""
    cwd, syspath = os.getcwd(), list(sys.path)
    grad_mode, dtype = torch.is_grad_enabled(), torch.get_default_dtype()
    rng = random.getstate()
    os.chdir(path.parent)
    sys.path.insert(0, str(path.parent))
    try:
        yield
    finally:
        os.chdir(cwd)
        sys.path[:] = syspath
        torch.set_grad_enabled(grad_mode)
        torch.set_default_dtype(dtype)
        torch.set_default_device(None)
        random.setstate(rng)


def run_plain(path: Path) -> tuple[dict[str, Any], list[tuple[int, str]], str]:
    """exec each top-level statement as Python would, going on after a failure."""
    source = path.read_text()
    tree = ast.parse(source, filename=str(path))
    namespace: dict[str, Any] = {"__name__": "__main__", "__file__": str(path),
                                 "__builtins__": __builtins__, "dev": torch.device("cpu")}
    failures: list[tuple[int, str]] = []
    out = io.StringIO()
    argv = sys.argv
    with _script_process(path), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.manual_seed(0)
        np.random.seed(0)
        sys.argv = [str(path)]
        try:
            for stmt in tree.body:
                code = compile(ast.Module([stmt], type_ignores=[]), str(path), "exec")
                try:
                    with contextlib.redirect_stdout(out):
                        exec(code, namespace)  # noqa: S102 - the test's own corpus
                except Exception as exc:  # noqa: BLE001
                    line = stmt.lineno
                    tb = exc.__traceback__
                    while tb is not None:
                        if tb.tb_frame.f_code.co_filename == str(path):
                            line = tb.tb_lineno
                        tb = tb.tb_next
                    failures.append((line, type(exc).__name__))
        finally:
            sys.argv = argv
    return namespace, failures, out.getvalue()


def run_trusted(path: Path) -> tuple[Session, list[tuple[int, str]], str]:
    with _script_process(path), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        session = Session(path.read_text(), trusted=True, filename=str(path))
        assert session.parse_error is None, session.parse_error
        results = session.run_to_end(keep_going=True)
    failures = [(r.error.line or r.line, r.error.type) for r in results if not r.ok]
    output = "".join(r.output for r in results)
    return session, failures, output


def _grad_fn_multiset(namespace: dict[str, Any]) -> collections.Counter:
    roots = [v.grad_fn for v in namespace.values() if isinstance(v, torch.Tensor)]
    return collections.Counter(type(fn).__name__ for fn in walk_grad_fns(*roots))


@pytest.mark.parametrize("path", SCRIPTS, ids=[f"{p.parent.name}/{p.stem}" for p in SCRIPTS])
def test_trusted_mode_matches_plain_python(path):
    plain, plain_failures, plain_out = run_plain(path)
    session, failures, out = run_trusted(path)
    ours = session.globals
    assert failures == plain_failures
    assert comparable_output(path.stem, out) == comparable_output(path.stem, plain_out)
    compared = 0
    for name, theirs in plain.items():
        if name in process_names(path.stem):
            continue
        if name.startswith("__") or name not in ours:
            assert name.startswith("__") or name in ours, f"{name} missing in gradviz"
            continue
        value = ours[name]
        if isinstance(theirs, torch.Tensor):
            same_tensor(value, theirs, name)
            compared += 1
        elif isinstance(theirs, torch.nn.Module):
            same_module(value, theirs, name)  # parameters, buffers, the training flag
            compared += 1
        elif isinstance(theirs, np.ndarray):
            np.testing.assert_array_equal(value, theirs, err_msg=name)
            compared += 1
        elif type(theirs) in (int, float, str, bool):
            assert value == theirs or (value != value and theirs != theirs), name
    assert compared, "the script left no tensor or module to compare"
    assert _grad_fn_multiset(ours) == _grad_fn_multiset(plain)


def test_trusted_mode_records_backward_passes_and_modules():
    source = (
        "import torch\n"
        "import torch.nn as nn\n"
        "net = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))\n"
        "x = torch.randn(2, 3)\n"
        "loss = net(x).sum()\n"
        "loss.backward()\n"
        "g = torch.autograd.grad((x.requires_grad_() * 2).sum(), x)\n"
    )
    session = Session(source, trusted=True)
    results = session.run_to_end()
    assert all(r.ok for r in results), [r.error for r in results if not r.ok]
    assert [p.kind for p in session.passes] == ["backward", "grad"]
    assert results[5].passes == [0]
    labels = [s.label for s in session.passes[0].steps]
    assert labels[0] == "SumBackward0" and "AccumulateGrad" in labels
    modules = {d.get("module") for _, d in session.graph.nodes(data=True)}
    assert {"net.0", "net.2"} <= modules


def test_trusted_mode_runs_what_restricted_mode_refuses():
    source = (
        "import itertools, collections, functools, dataclasses\n"
        "import torch\n"
        "y = torch.ones(2, requires_grad=True) * 2\n"
        "id_0 = id(y)\n"
        "y.add_(1)\n"
        "same = id(y) == id_0\n"
        "g = torch.Generator().manual_seed(3)\n"
        "r = torch.rand(2, generator=g)\n"
        "class Scale(object):\n"
        "    def __call__(self, t):\n"
        "        return t * 3\n"
        "z = Scale()(y)\n"
        "pairs = list(itertools.combinations(range(3), 2))\n"
        "print(type(z).__name__, same, getattr(z, 'shape'))\n"
    )
    session = Session(source, trusted=True)
    results = session.run_to_end()
    assert all(r.ok for r in results), [r.error for r in results if not r.ok]
    assert session.globals["same"] is True
    assert results[-1].output == "Tensor True torch.Size([2])\n"
    # restricted mode now runs most of this too (issue 21); reaching outside the kernel
    # it never does: the same script with a program started is refused there only
    outside = source + "import subprocess\n"
    assert all(r.ok for r in Session(outside, trusted=True).run_to_end())
    refused = [r for r in Session(outside).run_to_end(keep_going=True) if not r.ok]
    assert refused and refused[-1].source == "import subprocess", refused


def test_a_failing_statement_reports_the_scripts_own_line_and_type():
    source = (
        "import torch\n"
        "def f(t):\n"
        "    return t.view(5)\n"
        "a = torch.ones(2, 3)\n"
        "b = f(a)\n"
        "c = a * 2\n"
    )
    session = Session(source, trusted=True, filename="/tmp/gradviz_trusted_line.py")
    results = session.run_to_end(keep_going=True)
    failed = [r for r in results if not r.ok]
    assert len(failed) == 1 and failed[0].error.type == "RuntimeError"
    assert failed[0].error.line == 3  # inside f, where Python's traceback points
    assert results[-1].ok and session.globals["c"].sum().item() == 12.0


# --- gradviz run: trusted unless --restricted ----------------------------------------------

PROJECT_SCRIPT = """\
import argparse, itertools, collections
import torch
from helper_mod import scale
parser = argparse.ArgumentParser()
parser.add_argument("--lr", type=float, default=0.1)
args = parser.parse_args()
data = open("data.txt").read().split()
x = torch.tensor([float(v) for v in data], requires_grad=True)
y = scale(x).sum()
y.backward()
print(args.lr, x.grad)
"""


def _project(tmp_path: Path) -> Path:
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "helper_mod.py").write_text("def scale(t, k=2):\n    return t * k\n")
    (tmp_path / "proj" / "data.txt").write_text("1 2 3")
    script = tmp_path / "proj" / "main_script.py"
    script.write_text(PROJECT_SCRIPT)
    return script


def test_gradviz_run_is_python_by_default_in_the_scripts_own_folder(tmp_path):
    import json
    import subprocess

    script = _project(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    proc = subprocess.run([sys.executable, "-m", "gradviz", "run", "--json", str(script)],
                          capture_output=True, text=True, timeout=240, cwd=elsewhere)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    report = json.loads(proc.stdout)
    assert report["mode"] == "trusted"
    assert report["statements"][-1]["output"] == "0.1 tensor([2., 2., 2.])\n"
    assert report["tensors"]["x"]["grad"] == [2.0, 2.0, 2.0]
    assert len(report["backward_passes"]) == 1
    # what python itself prints, from the same folder
    plain = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                           timeout=120, cwd=script.parent)
    assert plain.stdout == report["statements"][-1]["output"]


def test_gradviz_run_restricted_refuses_and_names_the_trust_action(tmp_path):
    import json
    import subprocess

    script = _project(tmp_path)
    proc = subprocess.run(
        [sys.executable, "-m", "gradviz", "run", "--restricted", "--json", str(script)],
        capture_output=True, text=True, timeout=240, cwd=tmp_path,
    )
    assert proc.returncode == 1
    report = json.loads(proc.stdout)
    assert report["mode"] == "restricted"
    refused = [s for s in report["statements"] if not s["ok"]]
    assert refused and refused[0]["error"]["type"] == "SandboxError", report["statements"]
    assert "gradviz run --trust" in report["trust_hint"]
    text = subprocess.run(
        [sys.executable, "-m", "gradviz", "run", "--restricted", str(script)],
        capture_output=True, text=True, timeout=240, cwd=tmp_path,
    )
    assert "gradviz run --trust FILE" in text.stdout


def test_a_trusted_kernel_never_installs_restricted_modes_offset_checks(tmp_path):
    """Restricted mode's op guard installs checks below the dispatcher for the whole
    process; a trusted kernel is plain Python and must not have them."""
    import json
    import subprocess

    script = tmp_path / "probe.py"
    script.write_text(
        "import torch\n"
        "from gradviz.core import guards\n"
        "installed = guards._LIBRARY is not None or bool(guards._INSTALLED)\n"
        "print(installed)\n"
    )
    proc = subprocess.run([sys.executable, "-m", "gradviz", "run", "--json", str(script)],
                          capture_output=True, text=True, timeout=240, cwd=tmp_path)
    report = json.loads(proc.stdout)
    assert report["mode"] == "trusted"
    assert report["statements"][-1]["output"] == "False\n"


NO_GRAPH_KEPT = """
import gc, weakref
import torch

class Double(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.scratch = torch.ones(1000)  # on ctx, not saved: only the node frees it
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2

class M(torch.nn.Module):
    def forward(self, x):
        return Double.apply(x).sin()

m = M()

def evaluate(steps):
    refs = []
    for _ in range(steps):
        y = m(torch.ones(2, requires_grad=True))  # a forward with no backward
        refs.append(weakref.ref(y.grad_fn.next_functions[0][0]))
    del y
    gc.collect()
    return sum(r() is not None for r in refs)

alive = evaluate(20)
y = m(torch.ones(2, requires_grad=True))
"""


def test_module_tagging_keeps_no_graph_alive(tmp_path):
    """Module tagging held every node a module built until the statement ended: a loop
    of forwards kept all their graphs (each custom Function's ctx, each saved tensor),
    and a CUDA peak-memory reading went up. Plain Python frees them as it goes."""
    path = tmp_path / "no_graph_kept.py"
    path.write_text(NO_GRAPH_KEPT)
    plain, _, _ = run_plain(path)
    session, failures, _ = run_trusted(path)
    assert not failures
    assert plain["alive"] == 0
    assert session.globals["alive"] == plain["alive"]
    # and the tags are still there for the graph that is drawn
    modules = {d.get("module") for _, d in session.graph.nodes(data=True) if d["kind"] == "grad_fn"}
    assert modules == {"m"}


@pytest.mark.parametrize("trusted", [True, False], ids=["trusted", "restricted"])
def test_triple_quoted_comment_blocks_are_not_echoed(trusted):
    """A '''...''' block used as a comment shows nothing, as python shows nothing; a real
    expression statement still shows its value."""
    source = "x = 1\n'''a comment\nover two lines'''\nx + 1\n"
    results = Session(source, trusted=trusted).run_to_end()
    assert [(r.line, r.value) for r in results] == [(1, None), (2, None), (4, "2")]


def test_a_statement_keeps_each_warning_once_and_at_most_a_hundred():
    """A loop warning on every pass kept a record per warning (900,000 took the kernel to
    1.1 GB); each text is kept once, and past 100 texts the rest are counted."""
    source = (
        "import warnings\n"
        "for i in range(50_000):\n    warnings.warn('same')\n"
        "for i in range(150):\n    warnings.warn(f'text {i}')\n"
    )
    results = Session(source, trusted=True).run_to_end()
    assert results[1].warnings == ["UserWarning: same"]
    kept = results[2].warnings
    assert len(kept) == 101 and kept[0] == "UserWarning: text 0"
    assert "50 more warnings" in kept[-1]


TAGGED_MODELS = """\
import torch
import torch.nn as nn

torch.manual_seed(0)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 3, padding=1)
        self.bn = nn.BatchNorm2d(3)
        self.act = nn.ReLU()

    def forward(self, x):
        return x + self.act(self.bn(self.conv(x)))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(Block(), Block())
        self.encoder = nn.TransformerEncoderLayer(d_model=12, nhead=2, dim_feedforward=16)
        self.rnn = nn.LSTM(12, 8, num_layers=2)
        self.head = nn.Linear(8, 2)

    def forward(self, img):
        h = self.stem(img).flatten(1).reshape(4, 1, 12) * 1.5  # (seq 4, batch 1, 12)
        h = self.encoder(h)
        out, _ = self.rnn(h)
        return self.head(torch.tanh(out[-1]))


net = Net()
img = torch.randn(1, 3, 4, 4, requires_grad=True)
for _ in range(2):
    out = net(img)
shared = nn.Linear(2, 2)
both = shared(shared(out)).sum()
"""


def _tags_in_order(root: torch.Tensor, tag_of) -> list[tuple[str, str | None]]:
    """(node class, its module tag) for every node under ``root``, in one fixed walk."""
    seen: set[int] = set()
    order: list[tuple[str, str | None]] = []
    stack = [root.grad_fn]
    while stack:
        fn = stack.pop()
        if fn is None or id(fn) in seen:
            continue
        seen.add(id(fn))
        order.append((type(fn).__name__, tag_of(fn)))
        stack.extend(nxt for nxt, _ in reversed(fn.next_functions))
    return order


def test_trusted_module_tags_match_per_module_forward_hooks():
    """The trusted engine tags nodes from the sequence-number range each module call
    used, resolved once per root call; the reference is the per-module forward hooks
    (gradviz.core.modules.tagging) that restricted mode and gradviz.record use, run
    here on plain Python with the same seed. Nested custom modules, Sequential, a
    transformer layer, a two-layer LSTM, batch norm, a module called twice."""
    from gradviz.core.modules import ModuleTags, tagging

    session = Session(TAGGED_MODELS, trusted=True)
    results = session.run_to_end()
    assert all(r.ok for r in results), [r.error for r in results if not r.ok]

    plain: dict = {}
    reference = ModuleTags()
    head, tail = TAGGED_MODELS.split("for _ in range(2):\n")
    exec(compile(head, "<plain>", "exec"), plain)  # noqa: S102 - the reference
    with tagging(plain["net"], reference.tag, prefix="net"):
        for _ in range(2):
            plain["out"] = plain["net"](plain["img"])
    shared = plain["shared"] = torch.nn.Linear(2, 2)
    shared.load_state_dict(session.globals["shared"].state_dict())
    with tagging(shared, reference.tag, prefix="shared"):
        plain["both"] = shared(shared(plain["out"])).sum()

    ours = _tags_in_order(session.globals["both"], session.module_tags.of)
    theirs = _tags_in_order(plain["both"], reference.of)
    assert [label for label, _ in ours] == [label for label, _ in theirs]
    assert ours == theirs
    tagged = {tag for _, tag in ours if tag}
    assert {"net.stem.0.conv", "net.stem.1.bn", "net.encoder.self_attn", "net.rnn",
            "net.head", "shared"} <= tagged, tagged
