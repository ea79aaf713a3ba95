"""Restricted mode, round 4 (issue 19): new attacks of each class, and how each is refused.

What got through before this round's fixes (each ran through ``gradviz run --restricted
--json``):

* backward work: the autograd engine runs outside the op guard, so a backward formula's
  ops were never counted: ``matrix_exp`` of a 1500x1500 matrix passed the forward
  checks and its backward (the exponential of a 3000x3000 block matrix, 8x the work)
  ran; cdist/pdist with a general p cost ~200x a multiply-add per term and ran 20x past
  the statement limit (the parent killed the kernel);
* work the guard misjudged: ``legendre_polynomial_p(x, 10**12)`` (a recurrence of n
  steps per element: a day for 10 elements), sort/unique of 2**29 elements, unique over
  2**22 rows, zeta/polygamma of 2**29 elements, histc with 2**29 bins;
* forged saved tensors: ``nll_loss``'s backward reads its target unchecked (a
  ``.data`` write after the forward segfaulted the kernel); batch norm's backward took
  an empty weight swapped in by ``w.data = torch.zeros(0)`` (segfault);
* memory: pages of ``torch.empty``/``np.empty`` become resident only when written, and
  no op allocated them then: 1.5 GiB past a 600 MiB cap;
* output: ``print(d)``/``str(d)``/f-strings of a list holding one 9 MB string 400 times
  (3 KB held, a 3.6 GB text).

Every attack must end in a clean refusal (SandboxError / LimitExceeded) or an ordinary
Python error, the interpreter alive and nothing written; where the kernel must survive,
through the real confined kernel. Correct values are compared against plain PyTorch.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest
import torch

from gradviz.core import guards
from gradviz.core.guards import AllocationCounter, Limits, OpGuard, resident_bytes
from gradviz.core.sandbox import LibraryCallable, TooLongToShow, text_bound

from .test_restricted_python import _restricted

REFUSALS = ("SandboxError", "LimitExceeded")
HEADER = "import torch\nimport numpy as np\nimport torch.nn as nn\nimport torch.nn.functional as F\n"


def _run(source: str, limits: Limits | None = None):
    """The session and its first failure (test_restricted_python's runner, less output)."""
    session, _, failure = _restricted(source, limits)
    return session, failure


def _refused(source: str, limits: Limits | None = None, says: str = "") -> str:
    _, failure = _run(source, limits)
    assert failure is not None, f"not refused:\n{source}"
    assert failure.error.type in REFUSALS, (failure.error.type, failure.error.message)
    assert says in failure.error.message, failure.error.message
    return failure.error.message


# --- 1. backward work is counted by the guard's limits ---------------------------------
#
# Small limits keep these cheap: each forward passes the limit and its backward does not.

SMALL_WORK = 1_000_000_000


@pytest.mark.parametrize("source", [
    # the exponential of a 600x600 block matrix: 8x the forward's products
    "a = (torch.randn(300, 300) * 0.001).requires_grad_()\n"
    "b = torch.linalg.matrix_exp(a)\n"
    "b.sum().backward()\n",
    # a general p: the backward kernel does a pow per term, twice
    "a = torch.randn(300, 40, requires_grad=True)\n"
    "d = torch.cdist(a, torch.randn(300, 40), p=1.5)\n"
    "d.sum().backward()\n",
    "a = torch.randn(400, 20, requires_grad=True)\n"
    "d = torch.pdist(a, p=1.5)\n"
    "d.sum().backward()\n",
    # convolution_backward: the input's and the weight's gradients
    "x = torch.randn(1, 24, 64, 64, requires_grad=True)\n"
    "w = torch.randn(24, 24, 15, 15, requires_grad=True)\n"
    "y = F.conv2d(x, w, padding=7)\n"
    "y.sum().backward()\n",
    # the same through torch.autograd.grad
    "a = (torch.randn(300, 300) * 0.001).requires_grad_()\n"
    "b = torch.linalg.matrix_exp(a)\n"
    "g, = torch.autograd.grad(b.sum(), a)\n",
], ids=["matrix_exp", "cdist", "pdist", "conv2d", "autograd.grad"])
def test_backward_work_is_refused_where_the_forward_passed(source):
    limits = Limits(max_statement_seconds=20, max_op_macs=SMALL_WORK)
    session, failure = _run(HEADER + source, limits)
    assert failure is not None, "the backward was not metered"
    assert failure.error.type == "LimitExceeded", failure.error.message
    assert "backward" in failure.error.message and "max_op_macs" in failure.error.message
    # the forward ran: the refusal is the backward's
    assert failure.line == HEADER.count("\n") + source.count("\n")


def test_metered_backward_matches_plain_pytorch():
    source = (
        "torch.manual_seed(0)\n"
        "a = (torch.randn(20, 20) * 0.1).requires_grad_()\n"
        "x = torch.randn(1, 2, 8, 8, requires_grad=True)\n"
        "w = torch.randn(3, 2, 3, 3, requires_grad=True)\n"
        "p = torch.randn(6, 3, requires_grad=True)\n"
        "loss = torch.linalg.matrix_exp(a).sum() + F.conv2d(x, w).pow(2).sum()"
        " + torch.cdist(p, p.detach() + 1, p=1.5).sum() + torch.lgamma(p.abs() + 1).sum()"
        " + torch.sort(p.flatten())[0].cumsum(0).sum()\n"
        "loss.backward()\n"
    )
    session, failure = _run(HEADER + source)
    assert failure is None, failure and failure.error
    plain: dict = {}
    exec(HEADER + source, plain)  # noqa: S102 - the reference: plain PyTorch
    for name in ("a", "x", "w", "p"):
        torch.testing.assert_close(session.globals[name].grad, plain[name].grad)


def test_the_meter_counts_only_while_a_pass_runs_outside_the_guard():
    guard = OpGuard(Limits(max_op_macs=10**6), AllocationCounter())
    a = torch.randn(200, 200) * 0.01
    torch.linalg.matrix_exp(a)  # no meter: nothing refused (trusted code, the guard's work)
    with guards.metering(guard):
        with pytest.raises(guards.LimitExceeded, match="backward would run linalg_matrix_exp"):
            torch.linalg.matrix_exp(a)
        a @ a  # a product repeats its forward's work in a backward: not metered
        guard.deadline = time.monotonic() - 1
        with pytest.raises(guards.LimitExceeded, match="time limit during backward"):
            guards.meter_tick()
    guards.meter_tick()  # left: nothing to check
    torch.linalg.matrix_exp(a)


# --- 2. work the guard misjudged -------------------------------------------------------

@pytest.mark.parametrize("source", [
    "y = torch.special.legendre_polynomial_p(torch.full((10,), 0.5), 10**12)",
    "y = torch.special.laguerre_polynomial_l(torch.full((10,), 0.5), torch.tensor([10**12]))",
    "y = torch.special.hermite_polynomial_h(0.5, torch.tensor([10.0**15]))",
    "y = torch.special.zeta(torch.full((1,), 2.0).expand(2**29), 1.0)",
    "y = torch.polygamma(5, torch.full((1,), 2.0).expand(2**29))",
    "y = torch.mvlgamma(torch.full((1,), 200.0).expand(2**20), 10**5)",
    "y = torch.ones(1).expand(2**29).sort()",
    "y = torch.argsort(torch.ones(1).expand(2**29))",
    "y = torch.unique(torch.ones(1, 4).expand(2**22, 4), dim=0)",
    "y = torch.histc(torch.ones(10), bins=2**29)",
    "y = torch.cdist(torch.ones(1, 500).expand(20000, 500), torch.ones(20000, 500), p=1.5)",
], ids=["legendre", "laguerre", "hermite", "zeta", "polygamma", "mvlgamma", "sort",
        "argsort", "unique_dim", "histc", "cdist_p"])
def test_work_counts_what_the_op_really_does(source):
    start = time.monotonic()
    _refused("import torch\n" + source + "\n", says="max_op_macs")
    assert time.monotonic() - start < 10  # refused before it ran


def test_the_same_ops_at_teaching_sizes_match_plain_pytorch():
    source = (
        "x = torch.linspace(-0.9, 0.9, 7)\n"
        "a = torch.special.legendre_polynomial_p(x, 5)\n"
        "b = torch.special.zeta(x + 2, 1.5)\n"
        "c = torch.polygamma(2, x + 2)\n"
        "d = torch.sort(torch.tensor([3.0, 1.0, 2.0]))\n"
        "e = torch.unique(torch.tensor([[1, 2], [1, 2], [0, 1]]), dim=0)\n"
        "f = torch.histc(x, bins=4)\n"
        "g = torch.quantile(x, 0.5)\n"
        "h = torch.mvlgamma(x + 3, 2)\n"
    )
    session, failure = _run("import torch\n" + source)
    assert failure is None, failure and failure.error
    plain: dict = {}
    exec("import torch\n" + source, plain)  # noqa: S102
    for name in "abcdefgh":
        got, want = session.globals[name], plain[name]
        if isinstance(want, tuple):
            for g, w in zip(got, want):
                torch.testing.assert_close(g, w)
        else:
            torch.testing.assert_close(got, want)


# --- 3. saved tensors forged after the forward ------------------------------------------

FORGERIES = {
    "nll_loss-data": (
        "x = torch.randn(4, 5, requires_grad=True)\n"
        "t = torch.tensor([1, 2, 3, 4])\n"
        "y = F.nll_loss(x, t, reduction='none')\n"
        "t.data.fill_(10**9)\n"
        "y.sum().backward()\n"),
    "cross_entropy-numpy": (
        "x = torch.randn(4, 5, requires_grad=True)\n"
        "t = torch.tensor([1, 2, 3, 4])\n"
        "loss = F.cross_entropy(x, t)\n"
        "a = t.numpy()\n"
        "a[:] = -10**9\n"
        "loss.backward()\n"),
    "nll_loss2d-data": (
        "x = torch.randn(1, 5, 3, 3, requires_grad=True)\n"
        "t = torch.zeros(1, 3, 3, dtype=torch.long)\n"
        "y = F.nll_loss(x, t)\n"
        "t.data.fill_(10**9)\n"
        "y.backward()\n"),
    "nll_loss-weight-swapped": (
        "x = torch.randn(4, 5, requires_grad=True)\n"
        "w = torch.ones(5)\n"
        "y = F.nll_loss(x, torch.tensor([1, 2, 3, 4]), weight=w)\n"
        "w.data = torch.ones(1)\n"
        "y.backward()\n"),
    "batch_norm-weight-swapped": (
        "x = torch.randn(4, 3, 5, requires_grad=True)\n"
        "w = torch.ones(3, requires_grad=True)\n"
        "b = torch.zeros(3, requires_grad=True)\n"
        "y = F.batch_norm(x, torch.zeros(3), torch.ones(3), w, b, training=True)\n"
        "w.data = torch.zeros(0)\n"
        "y.sum().backward()\n"),
    "batch_norm-eval-weight-swapped": (
        "x = torch.randn(4, 3, 5, requires_grad=True)\n"
        "w = torch.ones(3, requires_grad=True)\n"
        "y = F.batch_norm(x, torch.zeros(3), torch.ones(3), w, None, training=False)\n"
        "w.data = torch.zeros(0)\n"
        "y.sum().backward()\n"),
}


@pytest.mark.parametrize("name", sorted(FORGERIES))
def test_forged_saved_tensors_are_refused(name):
    _, failure = _run(HEADER + FORGERIES[name])
    assert failure is not None, "not refused"
    # refused by gradviz's check, or by PyTorch's own where it checks (a RuntimeError),
    # never a crash (this test process would be dead)
    assert failure.error.type in (*REFUSALS, "RuntimeError", "IndexError"), failure.error


def test_nll_loss_checks_accept_ignored_targets_and_match_pytorch():
    source = (
        "torch.manual_seed(0)\n"
        "x = torch.randn(4, 5, requires_grad=True)\n"
        "t = torch.tensor([1, -100, 3, 4])\n"
        "loss = F.cross_entropy(x, t, weight=torch.arange(1.0, 6.0))\n"
        "loss.backward()\n"
        "x2 = torch.randn(2, 5, 3, 3, requires_grad=True)\n"
        "t2 = torch.tensor([[[0, 1, 2], [3, 4, 7], [7, 0, 1]]] * 2)\n"
        "l2 = F.nll_loss(x2.log_softmax(1), t2, ignore_index=7)\n"
        "l2.backward()\n"
    )
    session, failure = _run(HEADER + source)
    assert failure is None, failure and failure.error
    plain: dict = {}
    exec(HEADER + source, plain)  # noqa: S102
    torch.testing.assert_close(session.globals["x"].grad, plain["x"].grad)
    torch.testing.assert_close(session.globals["x2"].grad, plain["x2"].grad)


# --- 4. memory written in place ----------------------------------------------------------

@pytest.mark.parametrize("fill", [
    "xs = [torch.empty(2**25) for _ in range(12)]\nfor t in xs:\n    t.fill_(1.0)\n",
    "xs = [np.empty((3000, 3000)) for _ in range(12)]\nfor a in xs:\n    a.fill(1.0)\n",
    "xs = [np.zeros((3000, 3000)) for _ in range(12)]\nfor a in xs:\n    a += 1\n",
    "xs = [np.empty((3000, 3000)) for _ in range(12)]\nfor a in xs:\n    a[:] = 2.0\n",
], ids=["torch-empty-fill", "np-empty-fill", "np-zeros-iadd", "np-empty-setitem"])
def test_memory_written_in_place_counts_toward_the_cap(fill):
    import gc

    gc.collect()
    base = resident_bytes()
    if base is None:
        pytest.skip("no /proc: resident memory is unknown here")
    cap = base + 600 * 2**20
    session, failure = _run(HEADER + fill, Limits(max_statement_seconds=20, max_process_bytes=cap))
    try:
        assert failure is not None and failure.error.limit == "max_process_bytes", (
            failure and failure.error)
        # the refusal came within one op's writes of the cap
        assert resident_bytes() < cap + 300 * 2**20
    finally:
        session.globals.pop("xs", None)
        gc.collect()


# --- 5. text built from a small value -------------------------------------------------------

BIG_TEXT = "s = 'z' * 9_000_000\nd = [s] * 400\n"


@pytest.mark.parametrize("use", [
    "print(d)", "t = str(d)", "t = repr(d)", "t = f'{d}'", "t = f'{d!r:>10}'",
    "t = '%s' % (d,)", "t = '{}'.format(d)", "t = format(d)", "print(s, s)",
    "print(1, end=s + s)", "t = str({1: d})", "t = f'{d!a}'",
])
def test_text_of_a_value_is_sized_before_it_is_built(use):
    before = resident_bytes() or 0
    message = _refused("import torch\n" + BIG_TEXT + use + "\n")
    assert "max_str_length" in message or "max_sequence_length" in message, message
    after = resident_bytes() or 0
    assert after - before < 1024**3


def test_a_huge_value_statement_is_shown_as_not_shown():
    session, failure = _run("import torch\n" + BIG_TEXT + "d\n[1, 2]\n")
    assert failure is None
    shown = [r.value for r in session.results]
    assert "not shown" in shown[-2] and shown[-1] == "[1, 2]"
    assert "not shown" in repr(TooLongToShow("list"))


def test_text_bound_is_at_least_the_real_length():
    values = [
        "abc", [1, 2, 3], {"a": [1.5, None, True]}, ("x" * 100, b"\x00" * 10),
        {1, 2}, [[1] * 10] * 10, torch.ones(5), 10**40,
    ]
    for value in values:
        assert text_bound(value, 10**9) >= len(repr(value)), value
    cyclic: list = []
    cyclic.append(cyclic)
    assert text_bound(cyclic, 10**9) >= len(repr(cyclic))


def test_ordinary_printing_matches_plain_python(capsys):
    source = (
        "import torch\n"
        "d = {'a': [1, 2.5, None], 'b': (True, 'x')}\n"
        "print(d, str(d), repr([d]), f'{d!r} {3:>5}', '%s|%5.2f' % ('q', 2.0), '{}'.format(d))\n"
        "print('a', 'b', sep='--', end='!\\n')\n"
    )
    session, failure = _run(source)
    assert failure is None, failure and failure.error
    plain: dict = {}
    exec(source, plain)  # noqa: S102
    expected = capsys.readouterr().out
    assert "".join(r.output for r in session.results) == expected


# --- 6. library results: nothing a script returns comes back callable ---------------------

LAUNDERING = {
    "forward-hook": (
        "m = nn.Linear(1, 1)\n"
        "def h(mod, i, o):\n    return np.ndarray\n"
        "m.register_forward_hook(h)\n"
        "p = m(torch.ones(1))\n"),
    "collate_fn": (
        "from torch.utils.data import DataLoader, TensorDataset\n"
        "def c(batch):\n    return np.ndarray\n"
        "dl = DataLoader(TensorDataset(torch.ones(4, 1)), batch_size=2, collate_fn=c)\n"
        "p = next(iter(dl))\n"),
    "optimizer-closure": (
        "m = nn.Linear(1, 1)\n"
        "opt = torch.optim.SGD(m.parameters(), lr=0.1)\n"
        "def closure():\n    return np.ndarray\n"
        "p = opt.step(closure)\n"),
    "defaultdict-factory": (
        "import collections\n"
        "def f():\n    return np.ndarray\n"
        "p = collections.defaultdict(f)['x']\n"),
    "partial": (
        "import functools\n"
        "def f(x):\n    return np.ndarray\n"
        "p = functools.partial(f, 1)()\n"),
    "reduce": (
        "import functools\n"
        "def f(a, b):\n    return np.ndarray\n"
        "p = functools.reduce(f, [1, 2, 3])\n"),
    "sequential": (
        "class M(nn.Module):\n    def forward(self, x):\n        return np.ndarray\n"
        "p = nn.Sequential(M())(torch.ones(1))\n"),
    "function-apply": (
        "class Fn(torch.autograd.Function):\n"
        "    @staticmethod\n    def forward(ctx, x):\n        return x * 1, np.ndarray\n"
        "    @staticmethod\n    def backward(ctx, g, h):\n        return g\n"
        "p = Fn.apply(torch.ones(1, requires_grad=True))[1]\n"),
    "map": (
        "def f(x):\n    return np.ndarray\n"
        "p = list(map(f, [1]))[0]\n"),
    "checkpoint_sequential": (
        "from torch.utils.checkpoint import checkpoint_sequential\n"
        "class M(nn.Module):\n    def forward(self, x):\n        return np.ndarray\n"
        "p = checkpoint_sequential(nn.Sequential(M()), 1, torch.ones(1, requires_grad=True), "
        "use_reentrant=False)\n"),
    "vmap-out_dims-none": (
        "from torch.func import vmap\n"
        "def f(x):\n    return x, np.ndarray\n"
        "p = vmap(f, out_dims=(0, None))(torch.ones(2, 1))[1]\n"),
    "generator": (
        "def g():\n    yield np.ndarray\n"
        "p = next(g())\n"),
}


@pytest.mark.parametrize("name", sorted(LAUNDERING))
def test_no_library_call_launders_a_script_value_into_a_callable(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    source = HEADER + LAUNDERING[name] + "a = p((2,), dtype=object)\nprint(type(a))\n"
    session, failure = _run(source)
    assert failure is not None, "the payload was called"
    assert failure.error.type in (*REFUSALS, "TypeError", "RuntimeError", "ValueError"), (
        failure.error)
    assert not isinstance(session.globals.get("p"), LibraryCallable)
    assert "a" not in session.globals
    assert os.listdir(tmp_path) == []


# --- 7. through the real confined kernel ---------------------------------------------------

KERNEL_ATTACKS = {
    "matrix_exp-backward": (
        "a = (torch.randn(1500, 1500) * 0.001).requires_grad_()\n"
        "b = torch.linalg.matrix_exp(a)\n"
        "b.sum().backward()\n", "max_op_macs"),
    "nll_loss-forged-target": (FORGERIES["nll_loss-data"], "target"),
    "batch_norm-swapped-weight": (FORGERIES["batch_norm-weight-swapped"], ".data"),
    "legendre-degree": (
        "y = torch.special.legendre_polynomial_p(torch.full((10,), 0.5), 10**12)\n", "max_op_macs"),
    "text-flood": (BIG_TEXT + "print(d)\n", "max_str_length"),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(KERNEL_ATTACKS))
def test_round4_attacks_are_refused_by_the_real_kernel(name, tmp_path):
    source, says = KERNEL_ATTACKS[name]
    script = tmp_path / "attack.py"
    script.write_text(HEADER + source + "print('next statement runs')\n")
    start = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "gradviz", "run", "--restricted", "--json", str(script)],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )
    assert time.monotonic() - start < 40
    assert proc.returncode == 1, proc.stderr[-2000:]
    report = json.loads(proc.stdout)
    failed = [s for s in report["statements"] if not s["ok"]]
    assert failed, report["statements"]
    error = failed[0]["error"]
    assert error["type"] in REFUSALS, error  # not KernelDied, not a time-limit kill
    assert says in error["message"], error
    assert sorted(os.listdir(tmp_path)) == ["attack.py"]
