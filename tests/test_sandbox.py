"""The interpreter refuses escapes and resource abuse with a clear message and no side effect."""

from __future__ import annotations

import os
import sys

import pytest
import torch

from gradviz.core.errors import SandboxError
from gradviz.core.guards import Limits
from gradviz.core.session import Session

SETUP = "x = torch.tensor([1., 2.], requires_grad=True)\ny = x * 2\n"

# (id, script) — every one must be refused by gradviz itself, never reach torch/numpy/os.
ADVERSARIAL = [
    ("dunder-class", "().__class__.__bases__[0].__subclasses__()"),
    ("dunder-on-tensor", "x.__class__"),
    ("dunder-dict", "torch.__dict__"),
    ("dunder-globals-lambda", "(lambda: 0).__globals__"),
    ("dunder-code", "f = lambda: 0\nf.__code__"),
    ("format-escape", "'{0.__class__}'.format(1)"),
    ("format-globals", "'{.__globals__}'.format(print)"),
    ("fstring-dunder", "f'{torch.__dict__}'"),
    ("torch-load", "torch.load('model.pt')"),
    ("torch-save", "torch.save(torch.ones(1), 'pwned.pt')"),
    ("torch-from-file", "torch.from_file('/etc/passwd', size=10)"),
    ("torch-hub", "torch.hub.load('a/b', 'c')"),
    ("torch-ops-load-library", "torch.ops.load_library('evil.so')"),
    ("cpp-extension", "torch.utils.cpp_extension.load_inline('x', '')"),
    ("torch-compile", "torch.compile(lambda t: t)"),
    ("torch-os", "torch.os.system('touch pwned')"),
    ("torch-builtins", "torch.builtins"),
    ("torch-importlib", "torch.importlib.import_module('os')"),
    ("torch-sys", "torch.sys.modules"),
    ("torch-private-C", "torch._C"),
    ("torch-jit", "torch.jit.load('m.pt')"),
    ("torch-serialization", "torch.serialization.load('m')"),
    ("import-os", "import os"),
    ("import-subprocess", "import subprocess"),
    ("from-os-import", "from os import system"),
    ("from-torch-import-load", "from torch import load"),
    ("dunder-import", "__import__('os')"),
    ("eval", "eval('1 + 1')"),
    ("exec", "exec('a = 1')"),
    ("open", "open('/etc/passwd').read()"),
    ("getattr", "getattr(torch, 'load')"),
    ("globals", "globals()"),
    ("type", "type(x)"),
    ("compile", "compile('1', 'f', 'eval')"),
    ("numpy-save", "import numpy as np\nnp.save('pwned.npy', np.ones(2))"),
    ("numpy-load", "import numpy as np\nnp.load('a.npy')"),
    ("numpy-fromfile", "import numpy as np\nnp.fromfile('/etc/passwd')"),
    ("ndarray-tofile", "import numpy as np\nnp.ones(2).tofile('pwned.bin')"),
    ("tensor-numpy-dump", "torch.ones(2).numpy().dump('pwned.pkl')"),
    ("numpy-ctypes", "import numpy as np\nnp.ones(2).ctypes"),
    ("hook-print", SETUP + "y.register_hook(print)"),
    ("hook-exec", SETUP + "y.register_hook(exec)"),
    ("hook-torch-save", SETUP + "y.register_hook(torch.save)"),
    ("hook-builtin-method", SETUP + "y.register_hook(x.add_)"),
    ("module-forward-hook", "m = torch.nn.Linear(2, 2)\nm.register_forward_hook(print)"),
    ("grad-fn-hook", SETUP + "y.grad_fn.register_hook(print)"),
    ("sort-key-print", "sorted([2, 1], key=print)"),
    ("map-exec", "list(map(exec, ['a = 1']))"),
    ("apply-callable", "torch.ones(2).apply_(print)"),
    ("tensor-storage", "torch.ones(2).untyped_storage()"),
    ("tensor-storage-legacy", "torch.ones(2).storage()"),
    ("plain-class", "class A:\n    pass"),
    ("autograd-class-dunder", "class F(torch.autograd.Function):\n    def __init__(self):\n        pass"),
    ("try-except", "try:\n    a = 1\nexcept Exception as e:\n    a = e"),
    ("async", "async def f():\n    pass"),
    ("yield", "def g():\n    yield 1"),
    ("global", "def g():\n    global torch\n    torch = 1"),
    ("decorator", "def d(f):\n    return f\n@d\ndef g():\n    pass"),
    ("with-open", "with open('pwned') as f:\n    pass"),
    ("huge-empty", "torch.empty(10**12)"),
    ("huge-expand-add", "torch.ones(1).expand(10**6, 10**6) + 1"),
    ("huge-expand-sum", "torch.ones(1).expand(10**6, 10**6).sum()"),
    ("huge-outer-matmul", "torch.ones(100000, 1) @ torch.ones(1, 100000)"),
    ("huge-randn", "torch.randn(30000, 30000)"),
    ("huge-zeros-like", "a = torch.ones(1).expand(10**5, 10**5)\ntorch.zeros_like(a)"),
    ("huge-int-power", "10**10**8"),
    ("huge-int-shift", "1 << 10**9"),
    ("huge-str-repeat", "'a' * 10**10"),
    ("huge-list-repeat", "[0] * 10**9"),
    ("huge-range-list", "list(range(10**12))"),
    ("huge-ljust", "'a'.ljust(10**9)"),
    ("huge-numpy-zeros", "import numpy as np\nnp.zeros(10**12)"),
    ("huge-numpy-arange", "import numpy as np\nnp.arange(10**12)"),
    ("huge-numpy-broadcast", "import numpy as np\nnp.ones((100000, 1)) * np.ones((1, 100000))"),
    ("endless-while", "while True:\n    pass"),
    ("endless-for", "for i in range(10**7):\n    pass"),
    ("endless-comprehension", "[i for i in range(10**7)]"),
    ("deep-recursion", "def f(n):\n    return f(n + 1)\nf(0)"),
    ("mutual-recursion", "def f(n):\n    return g(n)\ndef g(n):\n    return f(n)\nf(0)"),
    ("deep-nesting", "a = " + "(" * 500 + "1" + ")" * 500),
    ("coding-cookie", "# -*- coding: latin-1 -*-\na = 1"),
    ("coding-cookie-utf7", "# coding=utf-7\na = 1"),
    ("bidi-override", "a = 'safe\u202e' # comment"),
    ("bidi-isolate", "a = 1 # \u2066 hidden"),
    ("nested-fstring-spec", "f\"{1:{'>' * 10**8}}\""),
    ("setattr-module", "torch.load = print"),
    ("set-private-attr", SETUP + "x._backward_hooks = {}"),
    ("ctx-escape", "class F(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, a):\n        return ctx.__class__\n    @staticmethod\n    def backward(ctx, g):\n        return g\nF.apply(torch.ones(1, requires_grad=True))"),
    ("optimizer-closure-print", "p = torch.ones(1, requires_grad=True)\no = torch.optim.SGD([p], lr=0.1)\no.step(print)"),
    ("dict-dunder-kwargs", "dict(**{'__class__': 1})"),
]


def _refused(source: str, limits: Limits | None = None) -> str:
    """Run a script; return the refusal message or fail if it was not refused by gradviz."""
    session = Session(source, limits=limits)
    if session.parse_error is not None:
        assert session.parse_error.type in ("ScriptSyntaxError", "LimitExceeded", "SandboxError")
        return session.parse_error.message
    results = session.run_to_end()
    failed = [r for r in results if not r.ok]
    assert failed, f"not refused: {source!r}"
    error = failed[0].error
    assert error.type in ("SandboxError", "LimitExceeded", "ScriptSyntaxError"), (
        f"{source!r} was not refused by the sandbox but raised {error.type}: {error.message}"
    )
    return error.message


@pytest.mark.parametrize("source", [s for _, s in ADVERSARIAL], ids=[i for i, _ in ADVERSARIAL])
def test_adversarial_input_is_refused(source, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    grad_mode = torch.is_grad_enabled()
    inference = torch.is_inference_mode_enabled()
    modules_before = set(sys.modules)
    limits = Limits(max_statement_seconds=10)
    message = _refused(source, limits)
    assert message and len(message) < 400
    assert os.listdir(tmp_path) == [], "a refused script must not write files"
    assert torch.is_grad_enabled() == grad_mode
    assert torch.is_inference_mode_enabled() == inference
    assert not ({"subprocess", "ctypes"} & (set(sys.modules) - modules_before))


def test_there_are_at_least_40_adversarial_inputs():
    assert len(ADVERSARIAL) >= 40


def test_limit_messages_name_the_limit():
    assert "max_op_bytes" in _refused("torch.empty(10**12)") or "max_op_elements" in _refused(
        "torch.empty(10**12)"
    )
    assert "max_iterations" in _refused("while True:\n    pass")
    assert "max_call_depth" in _refused("def f(n):\n    return f(n + 1)\nf(0)")
    assert "max_int_bits" in _refused("10**10**8")


def test_grad_mode_restored_when_a_with_block_fails():
    session = Session("with torch.no_grad():\n    a = torch.ones(2)\n    torch.load('x')\nb = torch.ones(1, requires_grad=True) * 2\n")
    results = session.run_to_end(keep_going=True)
    assert not results[0].ok and results[1].ok
    assert torch.is_grad_enabled()
    assert session.snapshot()["tensors"]["b"]["grad_fn"] == "MulBackward0"


def test_set_grad_enabled_is_session_state_not_host_state():
    session = Session("torch.set_grad_enabled(False)\na = torch.ones(1, requires_grad=True) * 2\n")
    session.run_to_end()
    assert torch.is_grad_enabled(), "the host's grad mode must not change"
    assert session.snapshot()["tensors"]["a"]["grad_fn"] is None


def test_statement_time_limit():
    limits = Limits(max_statement_seconds=0.5, max_iterations=10**9)
    message = _refused("a = torch.ones(10)\nfor i in range(10**7):\n    a = a + 1\n", limits)
    assert "max_statement_seconds" in message


def test_byte_limit_is_configurable():
    limits = Limits(max_op_bytes=1000)
    message = _refused("a = torch.zeros(1000)", limits)
    assert "max_op_bytes" in message
    assert "max_op_bytes" not in Session("a = torch.zeros(1000)").run_to_end()[0].__repr__()


def test_refused_statement_keeps_earlier_state():
    session = Session("a = torch.ones(3)\nimport os\nb = a + 1\n")
    results = session.run_to_end()
    assert results[0].ok and not results[1].ok
    assert "import of 'os' refused" in results[1].error.message
    assert "a" in session.snapshot()["tensors"]


def test_allowed_features_work():
    src = """
import torch.nn.functional as F
import math
def scale(t, k=2, *rest, **opts):
    return t * k
vals = [scale(torch.tensor(float(i))) for i in range(3)]
total = sum(v.item() for v in vals)
pairs = {f"k{i}": i ** 2 for i in range(3)}
a, *b = [1, 2, 3]
msg = f"{total:.1f} {pairs['k2']} {b} {math.sqrt(16):g}"
x = torch.randn(4, 3)
y = F.relu(torch.nn.Linear(3, 2)(x)).sum()
w = 0
while w < 3:
    w += 1
if isinstance(x, torch.Tensor) and x.shape == (4, 3):
    ok = True
"""
    session = Session(src)
    results = session.run_to_end()
    assert all(r.ok for r in results), [r.error for r in results if not r.ok]
    g = session.globals
    assert g["msg"] == "6.0 4 [2, 3] 4" and g["w"] == 3 and g["ok"] is True


def test_sandbox_error_is_an_exception_type():
    assert issubclass(SandboxError, Exception)


def test_process_memory_cap_stops_a_statement_that_keeps_allocating():
    from gradviz.core.guards import resident_bytes

    rss = resident_bytes()
    if rss is None:
        pytest.skip("no /proc/self/statm on this platform")
    limits = Limits(max_process_bytes=rss + 200 * 1024**2)
    # 64 tensors of 16 MB each, all kept alive: 1 GB, far past the cap
    message = _refused("keep = [torch.ones(4 * 1024 * 1024) + i for i in range(64)]", limits)
    assert "max_process_bytes" in message
