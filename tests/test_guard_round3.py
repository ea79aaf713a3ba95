"""Restricted mode, round 3: the op guard (gradviz.core.guards).

1. Native kernels that use an integer tensor as memory offsets without checking it
   (max pooling and adaptive max pooling backward, embedding backward with
   scale_grad_by_freq, embedding_bag backward, ctc_loss): a script rewrites the saved
   tensor after the forward (numpy view, ``.data``, ``grad_fn._saved_*``, a
   saved_tensors_hooks unpack hook) and the backward writes out of bounds. Each attack
   runs in a subprocess (a crash is a failing test, not a dead pytest) and must end in
   a SandboxError. A survey forges every saved tensor of 17 forwards ten ways (values,
   dtype, shape, layout, memory that ends right after the tensor) and checks that no
   backward crashes; its control shows each of them crashing plain PyTorch.
2. Ops whose output size depends on their inputs' values are sized before they run.
3. ctc_loss's checks never materialize an expanded view.
4. Work counts what factorizations, matrix exponentials, distances and pools really do.
5. Process memory is read often enough that no sequence of ops outruns the cap.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import textwrap
import time

import pytest
import torch
import torch.nn.functional as F

from gradviz.core import guards
from gradviz.core.errors import LimitExceeded, SandboxError
from gradviz.core.guards import (
    AllocationCounter,
    Limits,
    OpGuard,
    op_macs,
    resident_bytes,
)
from gradviz.core.session import Session

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REFUSALS = ("SandboxError", "LimitExceeded")
aten = torch.ops.aten

#: address space of every subprocess: an attack that allocates its way past a check
#: fails to allocate (a failing test) instead of taking the machine's memory
SUBPROCESS_MEMORY = 6 * 1024**3


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (SUBPROCESS_MEMORY, SUBPROCESS_MEMORY))


def _python(code: str, *argv: str, timeout: float = 240) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return subprocess.run(
        [sys.executable, "-c", code, *argv], capture_output=True, text=True,
        timeout=timeout, env=env, preexec_fn=_limit_memory,
    )


#: runs each script of a JSON list through the sandbox, one JSON line per script
SESSION_RUNNER = textwrap.dedent(
    """
    import json, sys
    from gradviz.core.guards import Limits
    from gradviz.core.session import Session
    for source in json.loads(sys.argv[1]):
        session = Session(source, limits=Limits(max_statement_seconds=20))
        failed = None
        if session.parse_error is not None:
            failed = {"type": session.parse_error.type, "message": session.parse_error.message}
        else:
            for r in session.run_to_end(keep_going=False):
                if not r.ok:
                    failed = {"type": r.error.type, "message": r.error.message}
                    break
        print(json.dumps(failed), flush=True)
    """
)


def _run_in_sandbox(sources: list[str]) -> list[dict | None]:
    """Each source through a Session in one subprocess; its first failure (or None)."""
    proc = _python(SESSION_RUNNER, json.dumps(sources))
    lines = proc.stdout.splitlines()
    assert proc.returncode == 0 and len(lines) == len(sources), (
        f"the interpreter died (rc {proc.returncode}) after {len(lines)} of "
        f"{len(sources)} scripts:\n{proc.stderr[-3000:]}"
    )
    return [json.loads(line) for line in lines]


# --- 1. saved integer tensors rewritten after the forward ---------------------------------

HEADER = "import torch\nimport torch.nn.functional as F\n"

#: op -> (setup whose last line makes the output ``y`` and saves ``idx``, the name of
#: the saved tensor on y.grad_fn, a forged value)
OFFSET_OPS = {
    "max_pool2d": (
        "x = torch.randn(1, 1, 8, 8, requires_grad=True)\n"
        "y, idx = F.max_pool2d(x, 2, return_indices=True)\n", "_saved_result1", "10**9"),
    "max_pool1d": (
        "x = torch.randn(1, 1, 8, requires_grad=True)\n"
        "y, idx = F.max_pool1d(x, 2, return_indices=True)\n", None, "10**9"),
    "max_pool3d": (
        "x = torch.randn(1, 1, 4, 4, 4, requires_grad=True)\n"
        "y, idx = F.max_pool3d(x, 2, return_indices=True)\n", "_saved_result1", "-10**9"),
    "adaptive_max_pool2d": (
        "x = torch.randn(1, 1, 8, 8, requires_grad=True)\n"
        "y, idx = F.adaptive_max_pool2d(x, 3, return_indices=True)\n", "_saved_result1",
        "10**9"),
    "adaptive_max_pool1d": (
        "x = torch.randn(1, 1, 8, requires_grad=True)\n"
        "y, idx = F.adaptive_max_pool1d(x, 3, return_indices=True)\n", None, "10**9"),
    "adaptive_max_pool3d": (
        "x = torch.randn(1, 1, 4, 4, 4, requires_grad=True)\n"
        "y, idx = F.adaptive_max_pool3d(x, 3, return_indices=True)\n", "_saved_result1",
        "10**9"),
    "embedding_scale_grad_by_freq": (
        "w = torch.randn(10, 3, requires_grad=True)\n"
        "idx = torch.tensor([1, 2, 3])\n"
        "y = F.embedding(idx, w, scale_grad_by_freq=True)\n", "_saved_indices", "10**9"),
    "embedding_bag_mean": (
        "w = torch.randn(10, 3, requires_grad=True)\n"
        "idx = torch.tensor([1, 2, 3])\n"
        "y = F.embedding_bag(idx, w, torch.tensor([0, 2]), mode='mean')\n", "_saved_indices",
        "10**9"),
    "embedding_bag_per_sample_weights": (
        "w = torch.randn(10, 3, requires_grad=True)\n"
        "p = torch.ones(3, requires_grad=True)\n"
        "idx = torch.tensor([1, 2, 3])\n"
        "y = F.embedding_bag(idx, w, torch.tensor([0, 2]), mode='sum', per_sample_weights=p)\n",
        "_saved_indices", "10**9"),
    "ctc_loss": (
        "lp = torch.randn(6, 2, 5).log_softmax(2).detach().requires_grad_()\n"
        "idx = torch.tensor([[1, 2, 3], [1, 1, 2]])\n"
        "y = F.ctc_loss(lp, idx, torch.tensor([6, 5]), torch.tensor([3, 2]), reduction='none')\n",
        "_saved_targets", "10**9"),
    "max_unpool2d": (
        "x = torch.randn(1, 1, 4, 4)\n"
        "p, idx = F.max_pool2d(x, 2, return_indices=True)\n"
        "p.requires_grad_()\n"
        "y = F.max_unpool2d(p, idx, 2)\n", None, "10**9"),
}


def _attack(op: str, path: str) -> str | None:
    setup, saved, value = OFFSET_OPS[op]
    if path == "numpy":
        # a numpy view writes the storage without a version counter bump
        return HEADER + setup + f"a = idx.numpy()\na[...] = {value}\ny.sum().backward()\n"
    if path == "data":
        return HEADER + setup + f"idx.data[...] = {value}\ny.sum().backward()\n"
    if path == "data-fill":
        return HEADER + setup + f"idx.data.fill_({value})\ny.sum().backward()\n"
    if path == "saved-attribute":
        if saved is None:
            return None
        return HEADER + setup + f"y.grad_fn.{saved}.numpy()[...] = {value}\ny.sum().backward()\n"
    if path == "unpack-hook":
        lines = setup.rstrip("\n").split("\n")
        return (
            HEADER + "\n".join(lines[:-1]) + "\n"
            "def pack(t):\n    return t\n"
            "def unpack(t):\n"
            "    if t.dtype == torch.int64:\n"
            f"        return torch.full_like(t, {value})\n"
            "    return t\n"
            "with torch.autograd.graph.saved_tensors_hooks(pack, unpack):\n"
            f"    {lines[-1]}\n"
            "y.sum().backward()\n"
        )
    if path == "before-forward":
        # the forward itself handed forged indices (max_unpool2d takes them as input)
        if op != "max_unpool2d":
            return None
        return HEADER + setup.replace("p.requires_grad_()", f"idx.numpy()[...] = {value}")
    raise AssertionError(path)


PATHS = ("numpy", "data", "data-fill", "saved-attribute", "unpack-hook", "before-forward")


@pytest.mark.parametrize("op", sorted(OFFSET_OPS))
def test_forged_saved_offsets_are_refused_through_the_sandbox(op):
    attacks = {p: s for p in PATHS if (s := _attack(op, p)) is not None}
    results = dict(zip(attacks, _run_in_sandbox(list(attacks.values()))))
    for path, failed in results.items():
        assert failed is not None, f"{op} via {path}: not refused"
        if op == "max_unpool2d" and path != "before-forward":
            # its backward is a gather, which PyTorch checks itself: a clean error
            assert failed["type"] in (*REFUSALS, "RuntimeError"), (path, failed)
            assert "out of bounds" in failed["message"] or failed["type"] in REFUSALS
            continue
        assert failed["type"] in REFUSALS, (op, path, failed)
        assert "refused" in failed["message"] and len(failed["message"]) < 400, failed


def test_the_attacks_crash_plain_pytorch():
    """The control: the same rewrite in plain PyTorch writes out of bounds (if a torch
    release checks these itself, this skips)."""
    code = HEADER + OFFSET_OPS["max_pool2d"][0] + "idx.numpy()[...] = 10**9\ny.sum().backward()\n"
    proc = _python(code)
    if proc.returncode == 0 or "Error" in proc.stderr:
        pytest.skip("this torch checks max_pool2d_with_indices_backward's indices itself")
    assert proc.returncode < 0


#: the backward of each op, run on forged indices: with the guard's own checks only (the
#: kernels below it removed: the guard sees the backward's ATen ops when the engine runs
#: under it), with the kernels below the guard, and with no guard at all
GUARD_ONLY = textwrap.dedent(
    """
    import json, sys, torch
    import torch.nn.functional as F
    from gradviz.core import guards
    from gradviz.core.errors import SandboxError
    from gradviz.core.guards import AllocationCounter, Limits, OpGuard
    which = sys.argv[1]
    guards.install_offset_checks()
    if which == "guard":
        guards.remove_offset_checks()
    assert bool(guards._INSTALLED) == (which != "guard")
    for setup in json.loads(sys.argv[2]):
        scope = {"torch": torch, "F": F}
        exec(setup, scope)
        scope["idx"].numpy()[...] = 10**9
        try:
            if which == "unguarded":
                scope["y"].sum().backward()  # no dispatch mode: the kernels below refuse
            else:
                with OpGuard(Limits(), AllocationCounter()):
                    scope["y"].sum().backward()
        except SandboxError as exc:
            print("REFUSED", str(exc).replace("\\n", " "), flush=True)
        else:
            print("NOT REFUSED", flush=True)
    """
)

GUARDED_OPS = ["max_pool2d", "max_pool1d", "max_pool3d", "adaptive_max_pool2d",
               "adaptive_max_pool3d", "embedding_scale_grad_by_freq", "embedding_bag_mean",
               "embedding_bag_per_sample_weights", "ctc_loss"]


@pytest.mark.parametrize("which", ["guard", "below-the-guard", "unguarded"])
def test_the_guard_itself_refuses_forged_offsets(which):
    setups = [OFFSET_OPS[op][0] for op in GUARDED_OPS]
    proc = _python(GUARD_ONLY, which, json.dumps(setups))
    lines = proc.stdout.splitlines()
    assert proc.returncode == 0 and len(lines) == len(setups), (
        f"died after {GUARDED_OPS[:len(lines)]}: {proc.stderr[-3000:]}")
    for op, line in zip(GUARDED_OPS, lines):
        assert line.startswith("REFUSED refused: "), (op, line)


def test_offset_checks_are_installed_below_the_guard():
    assert guards.install_offset_checks()
    for op in (aten.max_pool2d_with_indices_backward.default,
               aten.embedding_dense_backward.default, aten._ctc_loss.Tensor,
               aten._ctc_loss_backward.default):
        assert op in guards._INSTALLED


def test_offset_checks_accept_what_the_forward_made():
    """Legitimate training through every checked op is unchanged (values and grads)."""
    torch.manual_seed(0)
    x = torch.randn(2, 3, 8, 8, requires_grad=True)
    y, idx = F.max_pool2d(x, 2, return_indices=True)
    y.sum().backward()
    expected = torch.zeros_like(x).flatten(2).scatter_(2, idx.flatten(2), 1.0).view_as(x)
    assert torch.equal(x.grad, expected)
    checks = [
        lambda: F.max_pool3d(torch.randn(1, 2, 4, 4, 4, requires_grad=True), 2),
        lambda: F.adaptive_max_pool2d(torch.randn(1, 2, 7, 5, requires_grad=True), 3),
        lambda: F.adaptive_max_pool3d(torch.randn(2, 4, 4, 4, requires_grad=True), 2),
        lambda: F.max_pool1d(torch.randn(2, 3, 9, requires_grad=True), 3, 2),
        lambda: F.avg_pool2d(torch.randn(1, 2, 8, 8, requires_grad=True), 2),
        lambda: F.adaptive_avg_pool2d(torch.randn(2, 8, 8, requires_grad=True), 3),
        lambda: F.fractional_max_pool2d(torch.randn(1, 1, 8, 8, requires_grad=True), 2,
                                        output_size=4),
        lambda: F.embedding(torch.tensor([[1, 2], [2, 9]]),
                            torch.randn(10, 3, requires_grad=True), scale_grad_by_freq=True,
                            padding_idx=2),
        lambda: F.embedding_bag(torch.tensor([1, 2, 4, 5, 4, 3]),
                                torch.randn(10, 3, requires_grad=True), torch.tensor([0, 2, 2]),
                                mode="mean", scale_grad_by_freq=True),
        lambda: F.embedding_bag(torch.tensor([1, 2, 4]), torch.randn(10, 3, requires_grad=True),
                                torch.tensor([0, 1]), mode="sum",
                                per_sample_weights=torch.ones(3, requires_grad=True)),
        lambda: F.embedding_bag(torch.tensor([1, 2, 4]), torch.randn(10, 3, requires_grad=True),
                                torch.tensor([0, 1]), mode="max"),
        lambda: F.ctc_loss(torch.randn(6, 2, 5).log_softmax(2).detach().requires_grad_(),
                           torch.tensor([1, 2, 3, 1, 1]), torch.tensor([6, 5]),
                           torch.tensor([3, 2])),
        lambda: F.ctc_loss(torch.randn(6, 2, 5).log_softmax(2).detach().requires_grad_(),
                           torch.tensor([[1, 2, 3], [1, 1, 0]]), [6, 5], [3, 2]),
        lambda: torch.nn.LSTM(3, 4, num_layers=2, bidirectional=True)(
            torch.randn(5, 2, 3, requires_grad=True))[0],
        lambda: torch.nn.BatchNorm1d(3)(torch.randn(4, 3, 5, requires_grad=True)),
        lambda: F.instance_norm(torch.randn(4, 3, 5, requires_grad=True)),
    ]
    for make in checks:
        out = make()
        out = out[0] if isinstance(out, tuple) else out
        out.sum().backward()
    with OpGuard(Limits(), AllocationCounter()):
        for make in checks:
            out = make()
            out = out[0] if isinstance(out, tuple) else out
            out.sum().backward()


def test_offset_checks_leave_gradient_accumulation_as_pytorch_does_it():
    """The checks run below autograd: x.grad is accumulated in place, as in PyTorch."""
    code = textwrap.dedent(
        """
        import sys, torch
        import torch.nn.functional as F
        if sys.argv[1] == "checked":
            from gradviz.core import guards
            assert guards.install_offset_checks()
        x = torch.randn(1, 1, 8, 8, requires_grad=True)
        w = torch.randn(10, 3, requires_grad=True)
        for _ in range(3):
            y, i = F.max_pool2d(x, 2, return_indices=True)
            e = F.embedding(torch.tensor([1, 1, 2]), w, scale_grad_by_freq=True)
            (y.sum() + e.sum()).backward()
        print(x.grad._version, w.grad._version, float(x.grad.sum()), float(w.grad.sum()))
        """
    )
    plain, checked = _python(code, "plain"), _python(code, "checked")
    assert plain.returncode == 0 and checked.returncode == 0, plain.stderr + checked.stderr
    assert plain.stdout == checked.stdout


# --- shapes: an unpack hook that returns a tensor of another shape ---------------------------

#: (forward whose backward trusts its saved tensors' shapes, which saved tensors to
#: replace, the replacement); each crashed plain PyTorch (segfault or abort)
SHAPE_FORGERIES = {
    "max_pool3d-empty": ("y = F.max_pool3d(x3, 2, return_indices=True)[0]", "empty"),
    "avg_pool2d-empty": ("y = F.avg_pool2d(x2, 2)", "empty"),
    "adaptive_avg_pool2d-half": ("y = F.adaptive_avg_pool2d(x2, 3)", "half"),
    "adaptive_avg_pool2d-empty": ("y = F.adaptive_avg_pool2d(x2, 3)", "empty"),
    "batch_norm-empty": ("y = F.batch_norm(x1, torch.zeros(3), torch.ones(3), w, b, training=True)",
                         "empty"),
    "batch_norm-eval-empty": (
        "y = F.batch_norm(x1, torch.zeros(3), torch.ones(3), w, b, training=False)", "empty"),
    "instance_norm-empty": ("y = F.instance_norm(x1)", "empty"),
    "ctc_loss-tiny": ("y = F.ctc_loss(lp, torch.tensor([[1, 2, 3], [1, 1, 2]]), "
                      "torch.tensor([6, 5]), torch.tensor([3, 2]))", "tiny"),
    "ctc_loss-half": ("y = F.ctc_loss(lp, torch.tensor([1, 2, 3, 1, 1]), torch.tensor([6, 5]), "
                      "torch.tensor([3, 2]))", "half"),
    "lstm-tiny": ("y = lstm(x1.permute(2, 0, 1))[0]", "tiny"),
    "ctc_loss-log-alpha": ("y = F.ctc_loss(lp, torch.tensor([[1, 2, 3], [1, 1, 2]]), "
                           "torch.tensor([6, 5]), torch.tensor([3, 2]))", "alpha"),
    "adaptive_max_pool3d-expanded": ("y = F.adaptive_max_pool3d(x3, 3)", "expand"),
    "pdist-empty": ("y = F.pdist(x1[0])", "empty"),
}

SHAPE_SETUP = (
    HEADER
    + "x1 = torch.randn(4, 3, 5, requires_grad=True)\n"
    "x2 = torch.randn(1, 2, 8, 8, requires_grad=True)\n"
    "x3 = torch.randn(1, 2, 4, 4, 4, requires_grad=True)\n"
    "w = torch.ones(3, requires_grad=True)\n"
    "b = torch.zeros(3, requires_grad=True)\n"
    "lp = torch.randn(6, 2, 5).log_softmax(2).detach().requires_grad_()\n"
    "lstm = torch.nn.LSTM(3, 4)\n"
    "def pack(t):\n    return t\n"
    "def unpack(t):\n"
    "    if t.dim() == 0:\n        return t\n"
    "    if MODE == 'empty':\n        return torch.zeros([0] + list(t.shape[1:]), dtype=t.dtype)\n"
    "    if MODE == 'half':\n        return torch.zeros([max(s // 2, 1) for s in t.shape], dtype=t.dtype)\n"
    "    if MODE == 'alpha':\n"
    "        return t[..., :1].contiguous() if t.dim() == 3 and t.shape[-1] == 7 else t\n"
    "    if MODE == 'expand':\n        return torch.zeros([1] * t.dim(), dtype=t.dtype).expand(t.shape)\n"
    "    return torch.zeros([1] * t.dim(), dtype=t.dtype)\n"
)


def test_saved_tensors_of_another_shape_are_refused():
    sources = []
    for forward, mode in SHAPE_FORGERIES.values():
        sources.append(
            SHAPE_SETUP.replace("MODE", repr(mode))
            + "with torch.autograd.graph.saved_tensors_hooks(pack, unpack):\n"
            + f"    {forward}\n"
            + "y.sum().backward()\n"
        )
    results = _run_in_sandbox(sources)
    for name, failed in zip(SHAPE_FORGERIES, results):
        assert failed is not None, f"{name}: not refused"
        if name.startswith("ctc_loss") and failed["type"] == "RuntimeError":
            # forged consistently (lengths too): the kernel stays in bounds, and autograd
            # rejects a gradient of the forged shape
            assert "invalid gradient" in failed["message"], (name, failed)
            continue
        assert failed["type"] in REFUSALS, (name, failed)


#: every saved tensor of each forward replaced by an unpack hook, ten ways; in plain
#: PyTorch 2.13 each of these forwards crashed its backward (segfault, abort or SIGFPE)
#: in at least one way (the control below)
SURVEY_FORWARDS = {
    "max_pool2d": "x = torch.randn(1, 2, 8, 8, requires_grad=True)\n"
                  "run(lambda: F.max_pool2d(x, 2, return_indices=True)[0])",
    "max_pool3d": "x = torch.randn(1, 2, 4, 4, 4, requires_grad=True)\n"
                  "run(lambda: F.max_pool3d(x, 2, return_indices=True)[0])",
    "adaptive_max_pool2d": "x = torch.randn(1, 2, 8, 8, requires_grad=True)\n"
                           "run(lambda: F.adaptive_max_pool2d(x, 3))",
    "adaptive_max_pool3d": "x = torch.randn(1, 2, 4, 4, 4, requires_grad=True)\n"
                           "run(lambda: F.adaptive_max_pool3d(x, 3))",
    "avg_pool2d": "x = torch.randn(1, 2, 8, 8, requires_grad=True)\nrun(lambda: F.avg_pool2d(x, 2))",
    "adaptive_avg_pool2d": "x = torch.randn(1, 2, 8, 8, requires_grad=True)\n"
                           "run(lambda: F.adaptive_avg_pool2d(x, 3))",
    "lp_pool2d": "x = torch.randn(1, 2, 8, 8, requires_grad=True)\nrun(lambda: F.lp_pool2d(x, 2, 2))",
    "embedding": "w = torch.randn(10, 3, requires_grad=True)\n"
                 "run(lambda: F.embedding(torch.tensor([1, 2, 3]), w, scale_grad_by_freq=True))",
    "embedding_bag": "w = torch.randn(10, 3, requires_grad=True)\n"
                     "run(lambda: F.embedding_bag(torch.tensor([1, 2, 3]), w, torch.tensor([0, 2]), "
                     "mode='mean'))",
    "ctc_loss": "lp = torch.randn(6, 2, 5).log_softmax(2).requires_grad_()\n"
                "run(lambda: F.ctc_loss(lp, torch.tensor([[1, 2, 3], [1, 1, 2]]), "
                "torch.tensor([6, 5]), torch.tensor([3, 2])))",
    "ctc_loss_1d": "lp = torch.randn(6, 2, 5).log_softmax(2).requires_grad_()\n"
                   "run(lambda: F.ctc_loss(lp, torch.tensor([1, 2, 3, 1, 1]), torch.tensor([6, 5]), "
                   "torch.tensor([3, 2])))",
    "batch_norm": "x = torch.randn(4, 3, 5, requires_grad=True)\n"
                  "w = torch.ones(3, requires_grad=True)\nb = torch.zeros(3, requires_grad=True)\n"
                  "run(lambda: F.batch_norm(x, torch.zeros(3), torch.ones(3), w, b, training=True))",
    "batch_norm_eval": "x = torch.randn(4, 3, 5, requires_grad=True)\n"
                       "w = torch.ones(3, requires_grad=True)\nb = torch.zeros(3, requires_grad=True)\n"
                       "run(lambda: F.batch_norm(x, torch.zeros(3), torch.ones(3), w, b, "
                       "training=False))",
    "instance_norm": "x = torch.randn(4, 6, 5, requires_grad=True)\nrun(lambda: F.instance_norm(x))",
    "pdist": "x = torch.randn(5, 3, requires_grad=True)\nrun(lambda: F.pdist(x))",
    "weight_norm": "v = torch.randn(4, 3, requires_grad=True)\ng = torch.ones(4, 1, requires_grad=True)\n"
                   "run(lambda: torch._weight_norm(v, g, 0))",
    "lstm": "m = torch.nn.LSTM(3, 4)\nq = torch.randn(5, 1, 3, requires_grad=True)\n"
            "run(lambda: m(q)[0])",
}

SURVEY = textwrap.dedent(
    """
    import json, os, resource, signal, sys
    import torch
    import torch.nn.functional as F
    if sys.argv[1] == "checked":
        from gradviz.core.guards import install_offset_checks
        install_offset_checks()
    torch.set_num_threads(1)
    MODES = ["tiny", "big_int", "neg_int", "int32", "flat", "transposed", "tail1", "half",
             "empty", "expand"]

    def at_end(shape, dtype):
        # at the very end of its own allocation: reading past it leaves the mapping
        n = 1
        for size in shape:
            n *= size
        big = torch.zeros(2**22 // torch.empty(0, dtype=dtype).element_size() + n, dtype=dtype)
        return big[big.numel() - n:].view(shape)

    def unpack(t):
        if not isinstance(t, torch.Tensor) or t.dim() == 0:
            return t
        if MODE == "tiny":
            return torch.zeros([1] * t.dim(), dtype=t.dtype)
        if MODE in ("big_int", "neg_int") and not t.is_floating_point():
            return torch.full_like(t, 10**9 if MODE == "big_int" else -10**9)
        if MODE == "int32" and t.dtype == torch.int64:
            return t.to(torch.int32)
        if MODE == "flat":
            return t.reshape(-1)[:1].clone()
        if MODE == "transposed" and t.dim() >= 2:
            return t.transpose(0, -1)
        if MODE == "tail1":
            return at_end([1] * t.dim(), t.dtype)
        if MODE == "half":
            return at_end([max(s // 2, 1) for s in t.shape], t.dtype)
        if MODE == "empty":
            return torch.zeros([0] + list(t.shape[1:]), dtype=t.dtype)
        if MODE == "expand":
            return at_end([1] * t.dim(), t.dtype).expand(t.shape)
        return t

    def run(make):
        with torch.autograd.graph.saved_tensors_hooks(lambda t: t, unpack):
            out = make()
        out.sum().backward()

    crashes = []
    for name, code in json.loads(sys.argv[2]).items():
        for mode in MODES:
            pid = os.fork()
            if pid == 0:
                resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
                signal.alarm(30)  # a kernel looping on garbage ends as SIGALRM
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, 2)
                MODE = mode
                try:
                    exec(code, {"torch": torch, "F": F, "run": run})
                except Exception:
                    pass
                os._exit(0)
            _, status = os.waitpid(pid, 0)
            if os.WIFSIGNALED(status):
                crashes.append(f"{name}:{mode}:{os.WTERMSIG(status)}")
    print(json.dumps(crashes))
    """
)


def test_no_forged_saved_tensor_crashes_a_backward():
    """Each forward, its saved tensors forged ten ways (values, dtype, shape, layout, a
    tensor at the very end of its memory): with the checks, no backward crashes."""
    proc = _python(SURVEY, "checked", json.dumps(SURVEY_FORWARDS))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert json.loads(proc.stdout) == []


def test_the_survey_finds_the_crashes_in_plain_pytorch():
    """The control: without the checks the same survey crashes every forward listed."""
    proc = _python(SURVEY, "plain", json.dumps(SURVEY_FORWARDS), timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    crashed = {c.split(":")[0] for c in json.loads(proc.stdout)}
    if not crashed:
        pytest.skip("this torch checks its saved tensors itself")
    assert crashed == set(SURVEY_FORWARDS), set(SURVEY_FORWARDS) - crashed


# --- 2. outputs sized from their inputs' values, before they run --------------------------

#: (script, the limit its refusal names); each would allocate gigabytes before the old
#: after-the-fact check (the subprocess has 6 GiB of address space: no refusal without
#: the pre-check would mean an allocation failure, not a LimitExceeded)
DATA_DEPENDENT = {
    "repeat_interleave-elements": ("r = torch.repeat_interleave(torch.full((2**15,), 2**15))",
                                   "max_op_elements"),
    "repeat_interleave-bytes": ("r = torch.repeat_interleave(torch.full((2**14,), 2**15))",
                                "max_op_bytes"),
    "repeat_interleave-self": ("r = torch.ones(4).repeat_interleave(torch.tensor([2**40, 1, 1, 1]))",
                               "max_op_elements"),
    "nonzero-25-dims": ("m = torch.ones([2] * 25, dtype=torch.bool)\nn = torch.nonzero(m)",
                        "max_op_elements"),
    "argwhere-25-dims": ("m = torch.ones([2] * 25, dtype=torch.bool)\nn = torch.argwhere(m)",
                         "max_op_elements"),
    "where-25-dims": ("m = torch.ones([2] * 25, dtype=torch.bool)\nn = torch.where(m)",
                      "max_op_elements"),
    "bool-index-25-dims": ("m = torch.ones([2] * 25, dtype=torch.bool)\n"
                           "x = torch.zeros([2] * 25)\nn = x[m]", "max_op_elements"),
    "masked-select-broadcast": ("x = torch.ones(2**14, 1)\n"
                                "m = torch.ones(1, 2**15, dtype=torch.bool)\n"
                                "n = x.masked_select(m)", "max_op_bytes"),
    "unique-inverse": ("x = torch.zeros(2**29, dtype=torch.uint8)\n"
                       "u = torch.unique(x, return_inverse=True)", "max_op_bytes"),
    "bincount": ("b = torch.bincount(torch.tensor([2**40]))", "max_op_elements"),
    "histogramdd": ("h = torch.histogramdd(torch.randn(10, 3), bins=[10000, 10000, 10000])",
                    "max_op_elements"),
    "ctc-log-alpha": ("lp = torch.randn(2**12, 1, 2).log_softmax(2)\n"
                      "l = torch.nn.functional.ctc_loss(lp, torch.ones(2**20, dtype=torch.long), "
                      "torch.tensor([2**12]), torch.tensor([2**20]))", "max_op_elements"),
}


def test_data_dependent_outputs_are_refused_before_they_are_allocated():
    started = time.monotonic()
    results = _run_in_sandbox([s for s, _ in DATA_DEPENDENT.values()])
    for (name, (_, limit)), failed in zip(DATA_DEPENDENT.items(), results):
        assert failed is not None and failed["type"] == "LimitExceeded", (name, failed)
        assert limit in failed["message"], (name, failed)
    assert time.monotonic() - started < 120


def test_data_dependent_ops_are_counted_exactly_when_the_bound_is_too_loose():
    """The bound (every element nonzero) is over the limit, the real count is not."""
    limits = Limits(max_op_elements=10**6)
    source = (
        "m = torch.zeros([2] * 18, dtype=torch.bool)\nm[0, 0, 0] = True\n"
        "n = torch.nonzero(m)\nk = m.masked_select(m)\nx = torch.ones([2] * 18)\nv = x[m]\n"
        "r = torch.repeat_interleave(torch.tensor([1, 2] + [0] * 10**5))\n"
        "b = torch.bincount(torch.tensor([3, 5]))\n"
        "u, inv = torch.unique(torch.tensor([3, 1, 3]), return_inverse=True)\n"
    )
    session = Session(source, limits=limits)
    results = session.run_to_end()
    assert all(r.ok for r in results), [r.error for r in results if not r.ok]
    g = session.globals
    assert g["n"].shape == (2**15, 18) and g["k"].numel() == 2**15 and g["v"].numel() == 2**15
    assert g["r"].tolist() == [0, 1, 1] and g["b"].tolist() == [0, 0, 0, 1, 0, 1]
    assert g["inv"].tolist() == [1, 0, 1]


def test_data_dependent_sizes_bound_the_outputs():
    limits = Limits()
    m = torch.rand(4, 5, 6) > 0.5
    x = torch.randn(4, 5, 6)
    for func, args, out in [
        (aten.nonzero.default, (m,), torch.nonzero(m)),
        (aten.masked_select.default, (x, m), x.masked_select(m)),
        (aten.index.Tensor, (x, [None, m[0]]), x[:, m[0]]),
        (aten.index.Tensor, (x, [m[:, :, 0], torch.tensor([1])]), x[m[:, :, 0], torch.tensor([1])]),
        (aten.repeat_interleave.Tensor, (torch.tensor([3, 0, 2]),),
         torch.repeat_interleave(torch.tensor([3, 0, 2]))),
        (aten.bincount.default, (torch.tensor([2, 7]),), torch.bincount(torch.tensor([2, 7]))),
    ]:
        sizes = guards.data_dependent_sizes(func, args, {}, limits)
        assert sizes is not None and sizes[0][0] >= out.numel(), func
    assert guards.data_dependent_sizes(aten.add.Tensor, (x, x), {}, limits) is None
    assert guards.data_dependent_sizes(aten.index.Tensor, (x, [torch.tensor([1])]), {},
                                       limits) is None


# --- 3. ctc_loss never materializes an expanded view ------------------------------------------

CTC_EXPANDED = {
    # 2**28 lengths would become 2**28 Python ints (8.6 GB) on the way to the check
    "expanded-lengths": (
        "import torch.nn.functional as F\n"
        "lp = torch.zeros(1, 1, 2).expand(1, 2**28, 2)\n"
        "l = F.ctc_loss(lp, torch.ones(1, 1, dtype=torch.long).expand(2**28, 1), "
        "torch.full((1,), 1000).expand(2**28), torch.ones(1, dtype=torch.long).expand(2**28))"
    ),
    # 2**29 expanded targets are read once per stored value, not compared as a whole
    "expanded-targets": (
        "import torch.nn.functional as F\n"
        "lp = torch.randn(50, 4, 5).log_softmax(2)\n"
        "l = F.ctc_loss(lp, torch.full((1, 1), 7).expand(4, 2**27), torch.full((4,), 50), "
        "torch.full((4,), 3))"
    ),
    "lengths-of-another-batch": (
        "import torch.nn.functional as F\n"
        "lp = torch.randn(50, 4, 5).log_softmax(2)\n"
        "l = F.ctc_loss(lp, torch.ones(4, 3, dtype=torch.long), torch.full((8,), 50), "
        "torch.full((8,), 3))"
    ),
}


def test_ctc_checks_do_not_materialize_expanded_views():
    started = time.monotonic()
    results = _run_in_sandbox(list(CTC_EXPANDED.values()))
    for name, failed in zip(CTC_EXPANDED, results):
        assert failed is not None and failed["type"] in REFUSALS, (name, failed)
        assert "ctc_loss" in failed["message"], (name, failed)
    assert time.monotonic() - started < 60


def test_ctc_refusals_of_rounds_1_and_2_still_hold():
    for source in (
        "lp = torch.randn(5, 1, 4).log_softmax(2)\nt = torch.tensor([[1000000000, -1000000000, 3]])\n"
        "l = torch.ctc_loss(lp, t, [5], [3], 0, 0, False)",
        "lp = torch.randn(5, 1, 4).log_softmax(2)\nl = torch.ctc_loss(lp, torch.tensor([[1, 2]]), [500], [2])",
        "lp = torch.randn(5, 2, 4).log_softmax(2)\n"
        "l = torch.nn.functional.ctc_loss(lp, torch.tensor([1, 2, 3]), torch.tensor([5, 5]), "
        "torch.tensor([2, 2]))",
    ):
        results = Session(source).run_to_end()
        failed = [r for r in results if not r.ok]
        assert failed and failed[0].error.type in REFUSALS, source
        assert "ctc_loss" in failed[0].error.message


# --- 4. work ----------------------------------------------------------------------------------

@pytest.mark.parametrize(
    "source",
    [
        "a = torch.randn(3500, 3500)\nb = torch.linalg.matrix_exp(a)",
        "a = torch.randn(1500, 1500)\nb = torch.linalg.eig(a)",
        "a = torch.randn(1500, 1500)\nb = torch.linalg.eigvals(a)",
        "a = torch.randn(3000, 3000)\nb = torch.linalg.svd(a)",
        "a = torch.randn(6000, 6000)\nb = torch.linalg.lstsq(a, a)",
        "a = torch.randn(5000, 5000)\nb = torch.linalg.inv(a)",
        "a = torch.randn(3000, 3000)\nb = torch.linalg.pinv(a)",
        "a = torch.randn(3000, 3000)\nb = torch.linalg.eigh(a)",
        "a = torch.randn(4000, 4000)\nb = torch.linalg.solve(a, torch.randn(4000, 20000))",
        "import torch.nn.functional as F\nd = F.pdist(torch.ones(20000, 4000))",
    ],
    ids=["matrix_exp", "eig", "eigvals", "svd", "lstsq", "inv", "pinv", "eigh", "solve", "pdist"],
)
def test_factorizations_count_their_real_work(source):
    started = time.monotonic()
    results = Session(source, limits=Limits(max_statement_seconds=20)).run_to_end()
    failed = [r for r in results if not r.ok]
    assert failed and failed[0].error.type == "LimitExceeded", [r.error for r in failed]
    assert "max_op_macs" in failed[0].error.message
    assert time.monotonic() - started < 15, "refused before the work, not after"


def test_matrix_exp_counts_its_squarings():
    """Scaling and squaring: the work grows with log2 of the norm."""
    limits = Limits(max_op_macs=200**3 * 40)
    ok = Session("a = torch.randn(200, 200) / 200\nb = torch.linalg.matrix_exp(a)",
                 limits=limits).run_to_end()
    assert all(r.ok for r in ok)
    big = Session("a = torch.randn(200, 200) * 1e30\nb = torch.linalg.matrix_exp(a)",
                  limits=limits).run_to_end()
    assert not big[-1].ok and "max_op_macs" in big[-1].error.message


def test_work_of_ops_is_counted_from_their_shapes():
    a = torch.ones(30, 20)
    macs = lambda func, args, out: op_macs(func, args, out or [torch.ones(1)])  # noqa: E731
    assert macs(aten.linalg_eig.default, (torch.ones(10, 10),), []) == 80 * 1000
    assert macs(aten._linalg_svd.default, (a, False, True), []) == 10 * 30 * 20 * 20
    assert macs(aten._linalg_solve_ex.default, (torch.ones(10, 10), torch.ones(10, 3)),
                   []) == 1000 + 2 * 10 * 10 * 3
    # distances: each term weighted by what its kernel costs against a multiply-add
    # (guards._distance_weight): an elementwise kernel for p = 2, a pow per term for p = 1.5
    assert macs(aten._pdist_forward.default, (a, 2.0), []) == 30 * 29 // 2 * 20 * 8
    assert macs(aten._pdist_forward.default, (a, 1.5), []) == 30 * 29 // 2 * 20 * 256
    assert macs(aten._cdist_forward.default, (a, torch.ones(7, 20), 2.0, None), []) == (
        30 * 7 * 20 * 32)
    assert macs(aten._cdist_forward.default, (a, torch.ones(7, 20), 1.5, None), []) == (
        30 * 7 * 20 * 256)
    grad, inp, weight = torch.ones(1, 8, 6, 6), torch.ones(1, 3, 8, 8), torch.ones(8, 3, 3, 3)
    args = (grad, inp, weight, [8], [1, 1], [0, 0], [1, 1], False, [0, 0], 1, [True, True, False])
    assert macs(aten.convolution_backward.default, args, []) == 2 * grad.numel() * 27
    # adaptive pooling reads about in + out per output dimension, not out * out
    assert macs(aten._adaptive_avg_pool2d.default, (torch.ones(1, 1, 1000, 1000), [1000, 1000]),
                   [torch.ones(1, 1, 1000, 1000)]) == 2000 * 2000


def test_large_adaptive_pools_are_not_refused_as_work():
    source = "import torch.nn.functional as F\nb = F.adaptive_avg_pool2d(torch.ones(1, 1, 1000, 1000), 1000)"
    assert all(r.ok for r in Session(source).run_to_end())


# --- 5. process memory --------------------------------------------------------------------------

MEMORY_PROBE = textwrap.dedent(
    """
    import sys, torch
    from gradviz.core.errors import LimitExceeded
    from gradviz.core.guards import AllocationCounter, Limits, OpGuard, resident_bytes
    cap = resident_bytes() + 400 * 1024**2
    guard = OpGuard(Limits(max_process_bytes=cap), AllocationCounter())
    keep = []
    try:
        with guard:
            for i in range(200):
                keep.append(torch.empty(int(sys.argv[1])).fill_(1.0))
    except LimitExceeded as exc:
        over = resident_bytes() - cap
        print("REFUSED", len(keep), over, "max_process_bytes" in str(exc))
    else:
        print("NOT REFUSED")
    """
)


@pytest.mark.parametrize("elements", [2 * 1024**2, 25 * 1024**2])  # 8 MB and 100 MB tensors
def test_process_memory_cannot_be_outrun(elements):
    """Every tensor is kept: the refusal comes before the process is a sampling period
    (PROCESS_SAMPLE_BYTES) plus one tensor past the cap, never 31 tensors past it."""
    proc = _python(MEMORY_PROBE, str(elements))
    assert proc.returncode == 0, proc.stderr[-2000:]
    word, kept, over, named = proc.stdout.split()
    assert word == "REFUSED" and named == "True", proc.stdout
    assert int(over) <= guards.PROCESS_SAMPLE_BYTES + elements * 4 + 16 * 1024**2, proc.stdout


def test_an_op_that_would_pass_the_cap_is_refused_before_it_allocates():
    rss = resident_bytes()
    if rss is None:
        pytest.skip("no /proc/self/statm on this platform")
    guard = OpGuard(Limits(max_process_bytes=rss + 300 * 1024**2), AllocationCounter())
    with pytest.raises(LimitExceeded, match="max_process_bytes"):
        with guard:
            torch.empty(100 * 1024**2)  # 400 MB
    assert guard.counter.allocated_bytes == 0


def test_the_sandbox_still_refuses_a_statement_that_keeps_allocating():
    rss = resident_bytes()
    if rss is None:
        pytest.skip("no /proc/self/statm on this platform")
    limits = Limits(max_process_bytes=rss + 200 * 1024**2)
    results = Session("keep = [torch.ones(4 * 1024 * 1024) + i for i in range(64)]",
                      limits=limits).run_to_end()
    assert not results[-1].ok and "max_process_bytes" in results[-1].error.message


# --- the guard stays invisible ----------------------------------------------------------------

def test_allocation_figures_are_unchanged():
    session = Session("t = torch.ones(1000, 1000)\nr = torch.relu(t)\nt.relu_()\ns = t.sum()")
    results = session.run_to_end()
    assert [r.allocated_bytes for r in results] == [4_000_000, 4_000_000, 0, 4]


def test_guard_refusals_are_sandbox_errors():
    assert issubclass(LimitExceeded, SandboxError)
