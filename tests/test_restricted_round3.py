"""Restricted mode, round 3: what a shared script still opened, and the class of each.

Every attack here must end in a clean refusal (SandboxError / LimitExceeded), the
interpreter alive, nothing written; where it is the kernel that must survive, the
attack runs through ``gradviz run --json`` (the real, confined kernel).
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys

import pytest
import torch

from gradviz.core.guards import Limits
from gradviz.core.sandbox import LibraryCallable, made_by_torch
from gradviz.core.session import Session

REFUSALS = ("SandboxError", "LimitExceeded")


def _first_failure(source: str, limits: Limits | None = None):
    session = Session(source, limits=limits or Limits(max_statement_seconds=20))
    assert session.parse_error is None, session.parse_error
    results = session.run_to_end(keep_going=False)
    failed = [r for r in results if not r.ok]
    return session, (failed[0] if failed else None)


# --- laundering through library results ----------------------------------------------
#
# A library call that runs script code hands back what that code returned. None of it
# may come back as a vetted LibraryCallable: a payload the allowlist never allows to be
# called must stay uncallable, whichever library call carried it.

#: values the script can name (to compare, to print) but never call as themselves
PAYLOADS = {
    "ndarray-type": ("np.ndarray", "p((2,), dtype=object)"),
    "type-of-array": ("type(np.ones(1))", "p((2,), dtype=object)"),
    "str-format": ("'{0.__class__.__mro__}'.format", "p(1)"),
    "type-of-builtin": ("type(print)", "p()"),
    "node-type": ("type(torch.ones(1, requires_grad=True).exp().grad_fn)", "p()"),
    "bound-ndarray-method": ("np.ones(2).tofile", "p('pwned.bin')"),
}

#: library calls that run script code; each binds ``p`` to what that code returned
CARRIERS = {
    "functional_call": (
        "class M(torch.nn.Module):\n"
        "    def forward(self, x):\n"
        "        return PAYLOAD\n"
        "p = functional_call(M(), {}, (torch.ones(1),))\n"
    ),
    "functional_call-tuple": (
        "class M(torch.nn.Module):\n"
        "    def forward(self, x):\n"
        "        return (x * 2, PAYLOAD)\n"
        "p = functional_call(M(), {}, (torch.ones(1),))[1]\n"
    ),
    "vjp-aux": (
        "def f(x):\n"
        "    return x * 2, PAYLOAD\n"
        "out, fn, p = vjp(f, torch.ones(1), has_aux=True)\n"
    ),
    "jvp-aux": (
        "def f(x):\n"
        "    return x * 2, PAYLOAD\n"
        "out, tangent, p = jvp(f, (torch.ones(1),), (torch.ones(1),), has_aux=True)\n"
    ),
    "grad-aux": (
        "def f(x):\n"
        "    return (x * 2).sum(), PAYLOAD\n"
        "g, p = grad(f, has_aux=True)(torch.ones(1))\n"
    ),
    "grad_and_value-aux": (
        "def f(x):\n"
        "    return (x * 2).sum(), PAYLOAD\n"
        "g, (v, p) = grad_and_value(f, has_aux=True)(torch.ones(1))\n"
    ),
    "checkpoint": (
        "def f(x):\n"
        "    return (x * 2, PAYLOAD)\n"
        "p = checkpoint(f, torch.ones(1, requires_grad=True), use_reentrant=False)[1]\n"
    ),
}

IMPORTS = (
    "import torch\nimport numpy as np\n"
    "from torch.func import functional_call, vjp, jvp, grad, grad_and_value\n"
    "from torch.utils.checkpoint import checkpoint\n"
)


@pytest.mark.parametrize(
    "carrier,payload",
    list(itertools.product(CARRIERS, PAYLOADS)),
    ids=[f"{c}-{p}" for c, p in itertools.product(CARRIERS, PAYLOADS)],
)
def test_no_library_result_is_laundered_into_a_vetted_callable(carrier, payload, tmp_path,
                                                                monkeypatch):
    monkeypatch.chdir(tmp_path)
    value, use = PAYLOADS[payload]
    source = IMPORTS + CARRIERS[carrier].replace("PAYLOAD", value) + use + "\n"
    session, failure = _first_failure(source)
    assert failure is not None, f"not refused: {source}"
    # it may stop where the payload is made, carried or used: never run
    assert failure.error.type in REFUSALS or failure.error.type in ("TypeError", "RuntimeError",
                                                                     "ValueError"), failure.error
    assert "p" not in session.globals or not isinstance(session.globals["p"], LibraryCallable)
    assert os.listdir(tmp_path) == []


def test_transforms_still_give_callable_functions_that_match_pytorch():
    source = (
        IMPORTS
        + "from torch.func import vmap, jacrev\n"
        "def f(x):\n"
        "    return (x ** 3).sum()\n"
        "def s(x):\n"
        "    return torch.sin(x)\n"
        "x = torch.tensor([1.0, 2.0, 3.0])\n"
        "g = grad(f)(x)\n"
        "jr = jacrev(s)(x)\n"
        "v = vmap(s)(x)\n"
        "out, fn = vjp(s, x)\n"
        "(vj,) = fn(torch.ones(3))\n"
    )
    session, failure = _first_failure(source)
    assert failure is None, failure and failure.error
    x = torch.tensor([1.0, 2.0, 3.0])
    ns = session.globals
    torch.testing.assert_close(ns["g"], torch.func.grad(lambda t: (t ** 3).sum())(x))
    torch.testing.assert_close(ns["jr"], torch.func.jacrev(torch.sin)(x))
    torch.testing.assert_close(ns["vj"], torch.cos(x))
    assert isinstance(ns["fn"], LibraryCallable)


def test_made_by_torch_is_positive_identification():
    import numpy as np

    assert made_by_torch(torch.func.grad(torch.sin))
    for value in (np.ndarray, print, "{}".format, len, lambda: 0, torch.sin, torch.Tensor.add,
                  torch.nn.Linear(1, 1), torch.func.grad, type(print)):
        # torch.func.grad itself is torch's code, but only ever wrapped where a transform
        # returned it; everything else here is not a function torch made at all
        if value is torch.func.grad:
            continue
        assert not made_by_torch(value), value


def test_laundering_refused_through_the_real_kernel(tmp_path):
    script = tmp_path / "launder.py"
    script.write_text(
        IMPORTS
        + CARRIERS["functional_call"].replace("PAYLOAD", "np.ndarray")
        + "a = p((2,), dtype=object)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-m", "gradviz", "run", "--restricted", "--json", str(script)],
        capture_output=True, text=True, timeout=180, cwd=tmp_path,
    )
    assert proc.returncode == 1, proc.stderr[-2000:]
    report = json.loads(proc.stdout)
    failed = [s for s in report["statements"] if not s["ok"]]
    assert failed and failed[0]["error"]["type"] in REFUSALS
    assert sorted(os.listdir(tmp_path)) == ["launder.py"]


# --- freeing a deep chain ---------------------------------------------------------------
#
# torch frees an autograd node that ever had a Python object (capture and a script's
# next_functions walk give one to every node they read) by recursing into the next
# such node. On the main thread's 8 MiB stack a dropped chain of ~50,000 such nodes
# segfaults; the kernel serves every request on a thread with a deep stack.

CHAIN_DROP = """
import sys, torch
sys.path.insert(0, {root!r})
from gradviz.kernel import serve_on_deep_stack

def work():
    x = torch.ones(1, requires_grad=True)
    y = x
    for _ in range(200_000):
        y = y * 1.0
    f = y.grad_fn
    while f.next_functions:
        f = f.next_functions[0][0]
    f = None
    y = None
    print("freed", flush=True)

if sys.argv[1] == "main-thread":
    work()
else:
    serve_on_deep_stack(work, sys.stdout)
"""


def test_a_deep_wrapped_chain_is_freed_on_the_kernels_deep_stack(tmp_path):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    script = tmp_path / "chain_drop.py"
    script.write_text(CHAIN_DROP.format(root=root))
    deep = subprocess.run([sys.executable, str(script), "deep"], capture_output=True, text=True,
                          timeout=300)
    assert deep.returncode == 0 and "freed" in deep.stdout, deep.stderr[-2000:]
    # the control: the same drop on the main thread is what crashed the kernel
    shallow = subprocess.run([sys.executable, str(script), "main-thread"], capture_output=True,
                             text=True, timeout=300)
    if shallow.returncode == 0:
        pytest.skip("this torch frees wrapped chains without recursion (the control did not crash)")
    assert shallow.returncode < 0


def test_walking_and_dropping_a_long_chain_keeps_the_real_kernel_alive(tmp_path):
    script = tmp_path / "deep_walk.py"
    script.write_text(
        "import torch\n"
        "x = torch.ones(60000, 1, requires_grad=True)\n"
        "y = sum(x.unbind())\n"
        "f = y.grad_fn\n"
        "n = 0\n"
        "while len(f.next_functions) > 0:\n"
        "    f = f.next_functions[0][0]\n"
        "    n = n + 1\n"
        "f = None\n"
        "y = None\n"
        "print('alive', n)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-m", "gradviz", "run", "--restricted", "--json", str(script)],
        capture_output=True, text=True, timeout=240, cwd=tmp_path,
    )
    report = json.loads(proc.stdout)
    assert proc.returncode == 0, report["statements"][-1]
    assert report["statements"][-1]["output"] == "alive 60001\n"


# --- budgets for the whole run ------------------------------------------------------


def test_print_output_is_capped_per_run_not_only_per_statement(monkeypatch):
    from gradviz.core import sandbox

    monkeypatch.setattr(sandbox, "MAX_RUN_OUTPUT_CHARS", 1_000_000)
    line = "s = 'a' * 300_000\n"
    source = line + "print(s)\n" * 10 + "z = 1\n"
    session = Session(source)
    results = session.run_to_end(keep_going=True)
    printed = [r for r in results if "print" in r.source]
    assert [r.ok for r in printed[:3]] == [True, True, True]
    refused = [r for r in printed if not r.ok]
    assert refused and all(r.error.type == "LimitExceeded" for r in refused)
    assert "max_run_output" in refused[0].error.message
    assert sum(len(r.output) for r in results) <= 1_000_000
    assert results[-1].ok  # statements that print nothing still run


def test_a_run_of_many_slow_statements_stops_at_the_run_budget(monkeypatch):
    from gradviz.core import sandbox

    monkeypatch.setattr(sandbox, "MAX_RUN_SECONDS", 3.0)
    slow = "for i in range(10**6):\n    a = i\n"
    source = slow * 40
    limits = Limits(max_statement_seconds=2.5)
    session = Session(source, limits=limits)
    results = session.run_to_end(keep_going=True)
    refused = [r for r in results if not r.ok]
    assert refused, "the run budget never stopped the script"
    assert all(r.error.type == "LimitExceeded" for r in refused)
    # once spent, every later statement is refused before it runs (no 40 x 2.5 s)
    assert all("max_run_seconds" in r.error.message for r in results[-10:])


# --- capture is bounded ------------------------------------------------------------------


def test_capture_reads_at_most_its_node_budget_and_says_so(monkeypatch):
    from gradviz.core import capture

    monkeypatch.setattr(capture, "MAX_CAPTURE_NODES", 2_000)
    source = (
        "x = torch.ones(5000, 1, requires_grad=True)\n"
        "y = sum(x.unbind())\n"
        "z = y * 2\n"
        "w = z + 1\n"
    )
    session = Session(source)
    results = session.run_to_end(keep_going=True)
    assert all(r.ok for r in results), [r.error for r in results]
    grad_fns = [n for n, d in session.graph.nodes(data=True) if d.get("kind") == "grad_fn"]
    assert 0 < len(grad_fns) <= 2_000
    assert any("max_capture_nodes" in w for w in results[1].warnings)
    # the nodes nearest the names are the ones shown: z and w's own nodes are there
    ops = {d.get("label") or d.get("op") for _, d in session.graph.nodes(data=True)}
    assert any("MulBackward0" in str(o) for o in ops) and any("AddBackward0" in str(o) for o in ops)
    # the same script below the budget: the whole graph, no warning
    monkeypatch.setattr(capture, "MAX_CAPTURE_NODES", 250_000)
    whole = Session(source)
    whole_results = whole.run_to_end(keep_going=True)
    assert not any("max_capture_nodes" in w for r in whole_results for w in r.warnings)
    assert whole.graph.number_of_nodes() > session.graph.number_of_nodes()


# --- no OS layer, no restricted mode ------------------------------------------------------


def test_restricted_mode_is_refused_where_no_os_layer_confines_the_kernel():
    from gradviz.runner import os_layer_missing

    linux = {"platform": "linux", "applied": ["tmpdir", "rlimits", "landlock", "seccomp"]}
    assert os_layer_missing(linux) is None
    assert os_layer_missing({"platform": "linux", "applied": ["seccomp"]}) is None
    for platform, name in (("darwin", "macOS"), ("win32", "Windows")):
        why = os_layer_missing({"platform": platform, "applied": ["tmpdir", "rlimits"]})
        assert why is not None and name in why and "--trust" in why
    bare = os_layer_missing({"platform": "linux", "applied": ["tmpdir", "rlimits"]})
    assert bare is not None and "Landlock" in bare
    # a kernel that says nothing of itself is not taken at its word
    assert os_layer_missing(None) is not None
    assert os_layer_missing({"applied": "landlock"}) is not None


def test_a_restricted_gradviz_run_of_many_slow_statements_stops_at_its_30_s_budget(tmp_path):
    script = tmp_path / "slow.py"
    # 40 statements of 900,000 iterations each (under max_iterations): well over 30 s
    script.write_text("for i in range(900_000):\n    a = i * i\n" * 40)
    proc = subprocess.run(
        [sys.executable, "-m", "gradviz", "run", "--restricted", "--json", "--keep-going",
         str(script)],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )
    assert proc.returncode == 1, proc.stderr[-2000:]
    report = json.loads(proc.stdout)
    # the run's budget (30 s of work), not 40 statements' worth: once it is
    # spent, every later statement is refused before it runs
    assert report["statements"][-1]["error"]["limit"] == "max_run_seconds"
    assert "30 s in all" in report["statements"][-1]["error"]["message"]


# --- memory held across statements, by plain Python containers -----------------------------

def test_restricted_scripts_hold_at_most_four_gib_by_default():
    """4 GiB on top of what the process held when the session began (torch, gradviz;
    a test process's earlier tests), never more than 60% of the machine."""
    from gradviz.core.guards import RESTRICTED_PROCESS_BYTES, physical_memory, resident_bytes

    total, before = physical_memory(), resident_bytes()
    if total is None or before is None:
        pytest.skip("physical or resident memory unknown here")
    limits = Limits()
    cap = limits.process_cap()
    assert RESTRICTED_PROCESS_BYTES == 4 * 1024**3
    assert cap <= int(total * 0.6)
    assert cap == int(total * 0.6) or abs(cap - (before + RESTRICTED_PROCESS_BYTES)) < 64 * 1024**2
    assert limits.process_cap() == cap  # the baseline is read once


@pytest.mark.parametrize(("build", "mib"), [
    ("[0] * 10_000_000", 80),                # a list repeated: 8 bytes a pointer
    ("'x' * 9_000_000", 9),                  # a string repeated
    ("list(range(10_000_000))", 80),         # a list from an iterable (ints cached or not)
    ("[0 for i in range(900_000)]", 7),      # a comprehension (checked as it grows)
])
def test_many_containers_under_the_item_cap_are_refused_at_the_process_cap(build, mib):
    """The red team's 60 lists, each under the item cap, held 4.8 GB together: each
    statement checks what it is about to build against what the process holds."""
    from gradviz.core.guards import resident_bytes

    from .conftest import _give_memory_back

    _give_memory_back()  # heap earlier tests freed would take the lists without growing RSS
    rss = resident_bytes()
    if rss is None:
        pytest.skip("no /proc/self/statm here")
    limits = Limits(max_process_bytes=rss + 8 * mib * 1024**2)
    source = "\n".join(f"l{i} = {build}" for i in range(60)) + "\ndel l0\nx = 1\n"
    session = Session(source, limits=limits)
    results = session.run_to_end(keep_going=True)
    refusals = [r for r in results if not r.ok]
    assert refusals, "60 statements ran, none refused"
    refused = refusals[0]
    assert refused.error.limit == "max_process_bytes", refused.error.message
    # the cap counts resident memory: heap that earlier tests freed is reused first
    assert 1 <= refused.index < 60, (refused.index, refused.error.message)
    assert resident_bytes() <= limits.max_process_bytes + 8 * mib * 1024**2
    # what ran before the refusal is kept, and a statement that builds nothing (del)
    # still runs after it
    assert results[-2].ok and results[-1].ok, [results[-2].error, results[-1].error]
    assert "l0" not in session.globals and session.globals["x"] == 1


# --- saved tensors handed back by a script's unpack hook: checked for every backward ----

HOOKED = (
    "import torch\n"
    "import torch.nn.functional as F\n"
    "x = torch.randn(1, 1, 8, 8, requires_grad=True)\n"
    "w = torch.randn(6, 5, requires_grad=True)\n"
    "def pack(t):\n"
    "    return t\n"
    "def unpack(t):\n"
    "    return {ret}\n"
    "with torch.autograd.graph.saved_tensors_hooks(pack, unpack):\n"
    "    y = F.max_pool2d(x, 2).sum() + (w.t() @ w).sum() + w.expand(2, 6, 5).sum()\n"
    "y.backward()\n"
)


@pytest.mark.parametrize(("ret", "says"), [
    ("torch.zeros(100, dtype=t.dtype)", "shape"),
    ("t.double()", "torch.float64"),
    ("t.to(torch.int64)", "torch.int64"),
    ("t.reshape(-1)[:1].expand(t.shape) if t.dim() else t", "share memory"),
    ("5", "not a tensor"),
    ("None", "not a tensor"),
    ("torch.empty(t.shape, dtype=t.dtype, device='meta')", "meta"),
])
def test_unpack_hooks_must_return_the_saved_tensors_like(ret, says):
    session = Session(HOOKED.format(ret=ret))
    results = session.run_to_end(keep_going=True)
    failed = [r for r in results if not r.ok]
    assert failed, "the forged saved tensor was accepted"
    assert "unpack hook returned" in failed[0].error.message and says in failed[0].error.message, (
        failed[0].error.message)
    assert failed[0].source == "y.backward()"


@pytest.mark.parametrize("hooks", [
    ("t.cpu()", "t"),                              # the tutorial's offload to the host
    ("(t.dtype, t.to(torch.float16))", "t[1].to(t[0])"),  # kept in half precision
    ("t.contiguous()", "t"),                       # another layout of the same values
    ("t.clone()", "t.detach()"),
])
def test_unpack_hooks_that_give_the_tensor_back_match_pytorch(hooks):
    pack, unpack = hooks
    source = HOOKED.replace("    return t\ndef unpack", f"    return {pack}\ndef unpack").format(
        ret=unpack)
    session = Session(source)
    results = session.run_to_end(keep_going=True)
    assert all(r.ok for r in results), [r.error for r in results if not r.ok]
    namespace: dict = {}
    torch.manual_seed(0)
    exec(compile(source, "hooks.py", "exec"), namespace)  # noqa: S102 - our own test script
    for name in ("x", "w"):
        torch.testing.assert_close(session.globals[name].grad, namespace[name].grad)
