"""The interpreter refuses escapes and resource abuse with a clear message and no side effect."""

from __future__ import annotations

import os
import re
import sys

import pytest
import torch

from gradviz.core import namespaces as ns
from gradviz.core.errors import SandboxError
from gradviz.core.guards import Limits
from gradviz.core.session import Session

from .helpers import result_at, run_script

SETUP = "x = torch.tensor([1., 2.], requires_grad=True)\ny = x * 2\n"

# (id, script) — every one must be refused by gradviz itself, never reach torch/numpy/os.
ADVERSARIAL = [
    ("dunder-class", "().__class__.__bases__[0].__subclasses__()"),
    ("dunder-on-tensor", "torch.ones(1).__class__.__bases__"),
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
    ("import-os", "import os\nos.system('touch pwned')"),
    ("import-subprocess", "import subprocess"),
    ("from-os-import", "from os import system"),
    ("from-torch-import-load", "from torch import load"),
    ("dunder-import", "__import__('os')"),
    ("eval", "eval('1 + 1')"),
    ("exec", "exec('a = 1')"),
    ("open", "open('/etc/passwd').read()"),
    ("getattr", "getattr(torch, 'load')"),
    ("globals", "locals()"),
    ("type", "B = type('B', (object,), {'f': print})"),
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
    ("plain-class-dunder", "class A:\n    def __eq__(self, other):\n        return True"),
    ("autograd-class-dunder", "class F(torch.autograd.Function):\n    def __init__(self):\n        pass"),
    ("try-except-frame", "try:\n    a = 1 / 0\nexcept Exception as e:\n    a = e.__traceback__.tb_frame"),
    ("async", "async def f():\n    pass"),
    ("yield", "class A:\n    yield 1"),
    ("global", "def g():\n    global torch\n    torch = 1"),
    ("decorator-builtin-type", "@list\ndef g():\n    pass"),
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
    ("ctx-escape", "class F(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, a):\n        return ctx.__dict__\n    @staticmethod\n    def backward(ctx, g):\n        return g\nF.apply(torch.ones(1, requires_grad=True))"),
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
    session = Session("a = torch.ones(3)\nimport subprocess\nb = a + 1\n")
    results = session.run_to_end()
    assert results[0].ok and not results[1].ok
    assert "import of 'subprocess' refused" in results[1].error.message
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


# --- hardening: each class of hole, closed as a class ---------------------------------
NP = "import numpy as np\n"
T8 = "t = torch.zeros(4, dtype=torch.int64)\n"

#: numpy objects that alias memory the script did not allocate, or hold objects
RAW_NUMPY = [
    ("ndarray-object-over-tensor", NP + T8 + "a = np.ndarray((4,), 'O', t.numpy())"),
    ("ndarray-keyword-buffer", NP + T8 + "a = np.ndarray(shape=(4,), dtype=np.int64, buffer=t.numpy())"),
    ("ndarray-strides", NP + "a = np.ndarray((2**40,), np.int64, strides=(0,))"),
    ("ndarray-over-bytes-constant", NP + "a = np.ndarray((1,), np.uint8, b'\\n')"),
    ("ndarray-6gib", NP + "a = np.ndarray((6 << 30,), 'u1')\na.fill(1)"),
    ("ndarray-as-callback", "x = torch.ones(2, requires_grad=True)\nimport numpy as np\nh = (x * 2).register_hook(np.ndarray)"),
    ("frombuffer", NP + "a = np.frombuffer(b'\\n', np.uint8)"),
    ("torch-frombuffer", "a = torch.frombuffer(b'\\n', dtype=torch.uint8)"),
    ("memoryview", "m = memoryview(b'\\n')"),
    ("bytearray", "m = bytearray(8)"),
    ("asarray-bytes", NP + "a = np.asarray(b'abc')"),
    ("array-of-namespace", NP + "a = np.array([torch, 1])"),
    ("array-object-dtype-kw", NP + "a = np.array([1, 2], dtype=object)"),
    ("array-object-dtype-str", NP + "a = np.zeros(3, 'O')"),
    ("array-structured", NP + "a = np.zeros(3, dtype=[('a', 'f4'), ('b', 'f4')])"),
    ("array-structured-str", NP + "a = np.zeros(3, 'f4,f4')"),
    ("array-strings", NP + "a = np.array(['a', 'b'])"),
    ("array-str-type", NP + "a = np.zeros(3, str)"),
    ("array-list-type", NP + "a = np.zeros(3, list)"),
    ("ragged-object", NP + "a = np.array([[1], [1, 2]], dtype=object)"),
    ("astype-object", NP + "a = np.ones(3).astype(object)"),
    ("astype-void", NP + "a = np.ones(3).astype('V8')"),
    ("astype-bytes", NP + "a = np.ones(3).astype('S4')"),
    ("stride-tricks", NP + "a = np.lib.stride_tricks.as_strided(np.ones(1), (2**40,), (0,))"),
    ("flags-write", NP + "a = np.ones(3)\na.flags.writeable = True"),
    ("flags-read", NP + "f = np.ones(3).flags"),
    ("setflags", NP + "np.ones(3).setflags(write=True)"),
    ("set-strides", NP + "a = np.ones(3)\na.strides = (0,)"),
    ("set-shape", NP + "a = np.ones(3)\na.shape = (2**40,)"),
    ("set-data", NP + "a = np.ones(3)\na.data = b'x'"),
    ("array-base", NP + "b = torch.ones(3).numpy().base"),
    ("array-view-dtype", NP + "v = np.ones(3).view(np.int64)"),
    ("ufunc-outer", NP + "a = np.maximum.outer(np.ones(3), np.ones(3))"),
    ("ufunc-at", NP + "np.add.at(np.ones(3), [0], 1)"),
    ("numpy-out-not-array", NP + "a = np.ones(3)\nnp.exp(a, out=[0, 0, 0])"),
    ("numpy-out-tensor", NP + "a = np.ones(3)\nnp.exp(a, out=torch.ones(3))"),
    ("numpy-like-keyword", NP + "a = np.zeros(3, like=np.ones(1))"),
    ("zero-stride-numpy", "a = torch.ones(1).expand(2**40).numpy()"),
    ("zero-stride-numpy-sum", "torch.ones(1).expand(2**36).numpy().sum()"),
    ("asarray-expanded", NP + "a = np.asarray(torch.ones(1).expand(2**36))"),
    ("numpy-broadcast-function", NP + "a = np.maximum(np.ones((1, 2**20)), np.ones((2**20, 1)))"),
    ("numpy-matmul-work", NP + "a = np.ones((8000, 8000))\nb = a @ a"),
    ("from-numpy-structured", NP + "b = torch.from_numpy(np.zeros(2, 'f4,f4'))"),
    ("tensor-of-strings", NP + "b = torch.tensor(np.array(['1']))"),
]

#: names that an assignment can shadow must not unlock what lookup really finds
SHADOWING = [
    ("shadow-forward-hook", "m = torch.nn.Linear(2, 2)\nm.register_forward_hook = torch.nn.Identity()\nm.register_forward_hook(print)"),
    ("shadow-apply", "m = torch.nn.Linear(2, 2)\nm.apply = torch.nn.Identity()"),
    ("shadow-forward", "m = torch.nn.Linear(2, 2)\nm.forward = torch.nn.Identity()"),
    ("shadow-state-dict", "m = torch.nn.Linear(2, 2)\nm.state_dict = torch.nn.Identity()"),
    ("shadow-share-memory", "m = torch.nn.Linear(2, 2)\nm.share_memory = torch.nn.Identity()\nm.share_memory()"),
    ("shadow-to-empty", "m = torch.nn.Linear(2, 2)\nm.to_empty = torch.ones(1)"),
    ("shadow-parameters", "m = torch.nn.Linear(2, 2)\nm.parameters = torch.nn.Identity()"),
    ("shadow-then-call", "m = torch.nn.Linear(2, 2)\nm.register_full_backward_hook = torch.nn.Identity()\nm.register_full_backward_hook(print)"),
    ("submodule-pre-hook", "s = torch.nn.Sequential(torch.nn.Identity())\ns[0].register_forward_pre_hook(print)"),
    ("moduledict-item-hook", "d = torch.nn.ModuleDict({'a': torch.nn.Identity()})\nd['a'].register_full_backward_hook(print)"),
    ("module-apply-print", "m = torch.nn.Linear(2, 2)\nm.apply(print)"),
    ("module-to-empty", "m = torch.nn.Linear(2, 2)\nm.to_empty(device='meta')"),
    ("ctx-shadow-save", "class F(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, a):\n        ctx.save_for_backward = 1\n        return a * 1\n    @staticmethod\n    def backward(ctx, g):\n        return g\nF.apply(torch.ones(1, requires_grad=True))"),
    ("ctx-internal-attr", "class F(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, a):\n        return ctx.to_save\n    @staticmethod\n    def backward(ctx, g):\n        return g\nF.apply(torch.ones(1, requires_grad=True))"),
]

#: work the clock could not stop between ops, refused before it starts (operands kept
#: under 0.4 GB each: the refusal reads shapes, and a 1.6 GB Linear weight was the
#: suite's peak memory)
UNBOUNDED_WORK = [
    ("lambda-via-map", "big = list(range(2000000))\nr = any(map(lambda v: v < 0, big))"),
    ("lambda-via-sorted", "big = list(range(2000000))\nr = sorted(big, key=lambda v: -v)"),
    ("lambda-via-filter", "big = list(range(2000000))\nr = list(filter(lambda v: v >= 0, big))"),
    ("conv1d-macs", "import torch.nn.functional as F\nx = torch.ones(1, 1, 2**24)\nw = torch.ones(1, 1, 2**22)\ny = F.conv1d(x, w)"),
    ("conv2d-macs", "import torch.nn.functional as F\nx = torch.ones(1, 64, 512, 512)\nw = torch.ones(512, 64, 31, 31)\ny = F.conv2d(x, w)"),
    ("maxpool-macs", "import torch.nn.functional as F\nx = torch.ones(1, 1, 4096, 4096)\ny = F.max_pool2d(x, 2048, stride=1)"),
    ("matmul-macs", "a = torch.ones(7000, 7000)\nb = a @ a"),
    ("bmm-macs", "a = torch.ones(16, 2500, 2500)\nb = torch.bmm(a, a)"),
    ("einsum-macs", "a = torch.ones(7000, 7000)\nb = torch.einsum('ij,jk->ik', a, a)"),
    ("cdist-macs", "a = torch.ones(20000, 2000)\nd = torch.cdist(a, a)"),
    ("linear-macs", "m = torch.nn.Linear(4000, 4000)\ny = m(torch.ones(20000, 4000))"),
    ("sum-of-lists", "r = sum([[0] * 1000] * 100000, [])"),
]

#: memory a check sees only after it is spent
MEMORY = [
    ("extend-doubling", "l = [0] * 6000000\nl.extend(l)"),
    ("extend-loop", "l = [0] * 1000\nfor i in range(20):\n    l.extend(l)"),
    ("iadd-doubling", "l = [0] * 6000000\nl += l"),
    ("tolist-big-tensor", "a = torch.zeros(2**27).tolist()"),
    ("tolist-big-array", "import numpy as np\na = np.zeros(2**27).tolist()"),
    ("replace-empty", "s = 'a' * 5000000\nt = s.replace('', 'xx')"),
    ("replace-growth", "s = 'a' * 1000000\nt = s.replace('a', 'b' * 100)"),
    ("join-growth", "s = ','.join(['a' * 1000000] * 20)"),
    ("fstring-width", "s = f'{1:>999999999}'"),
    ("fstring-precision", "s = f'{1.5:.999999999f}'"),
    ("fstring-huge-digits", "s = f'{1:>99999999999999999999999}'"),
    ("fstring-nested-width", "w = 10**9\ns = f'{1:>{w}}'"),
    ("percent-width", "s = '%999999999d' % 1"),
    ("percent-precision", "s = '%.999999999f' % 1.0"),
    ("percent-star", "s = '%*d' % (10**9, 1)"),
    ("percent-star-precision", "s = '%.*f' % (10**9, 1.0)"),
    ("dict-update-growth", "d = {i: i for i in range(600000)}\nfor k in range(20):\n    d.update({i + k * 600000: 0 for i in range(600000)})"),
]

#: values the report could not encode: every one is refused before it is held
REPORT_VALUES = [
    ("object-array-namespace", NP + "a = np.array([torch.nn, 1], dtype=object)"),
    ("structured-nan", NP + "a = np.array([(float('nan'), 1)], dtype=[('a', 'f8'), ('b', 'i4')])"),
    ("object-array-recursion", NP + "l = []\nl.append(l)\na = np.array([l, 1], dtype=object)"),
]

HARDENING = RAW_NUMPY + SHADOWING + UNBOUNDED_WORK + MEMORY + REPORT_VALUES


@pytest.mark.parametrize("source", [s for _, s in HARDENING], ids=[i for i, _ in HARDENING])
def test_hardening_refusals(source, tmp_path, monkeypatch):
    test_adversarial_input_is_refused(source, tmp_path, monkeypatch)


def test_there_are_at_least_150_refused_inputs():
    assert len(ADVERSARIAL) + len(HARDENING) >= 150


def test_bytes_constants_stay_immutable():
    """Every path from a bytes constant to writable memory is refused, so the
    interned b"\\n" the kernel's protocol relies on never changes."""
    attempts = [
        NP + "a = np.ndarray((1,), np.uint8, b'\\n')\nt = torch.from_numpy(a)\nt.fill_(88)",
        NP + "a = np.frombuffer(b'\\n', np.uint8)\nt = torch.from_numpy(a)\nt.fill_(88)",
        "t = torch.frombuffer(b'\\n', dtype=torch.uint8)\nt.fill_(88)",
        NP + "a = np.asarray(b'\\n')\nt = torch.as_tensor(a)",
        NP + "s = np.float32(1.0)\nt = torch.from_numpy(s)\nt.fill_(88)",
        NP + "a = np.ones(2)\nb = torch.from_numpy(a).as_strided((2**20,), (1,))\nb.fill_(88)",
    ]
    for source in attempts:
        Session(source).run_to_end(keep_going=True)
    assert b"\n" == bytes([10]) and b"\n".decode() == "\n"
    assert "\n".join(["a", "b"]) == "a\nb"


def test_shared_memory_lesson_still_works_for_arrays_the_script_made():
    session = Session(NP + "a = np.ones(4)\nb = torch.from_numpy(a)\nb.add_(1)\nv = a.tolist()\n")
    results = session.run_to_end()
    assert all(r.ok for r in results), [r.error for r in results if not r.ok]
    assert session.globals["v"] == [2.0, 2.0, 2.0, 2.0]
    assert isinstance(session.globals["a"], __import__("numpy").ndarray)


def test_modules_still_resolve_parameters_submodules_and_data():
    src = (
        "m = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.ReLU())\n"
        "w = m[0].weight\n"
        "n = m[0].in_features\n"
        "d = torch.nn.ModuleDict({'enc': torch.nn.Linear(2, 2)})\n"
        "e = d.enc.bias\n"
        "m.extra = torch.nn.Linear(2, 2)\n"
        "ok = m.extra.out_features == 2 and m.training\n"
        "ps = [p.shape for p in m.parameters()]\n"
    )
    session = Session(src)
    results = session.run_to_end()
    assert all(r.ok for r in results), [r.error for r in results if not r.ok]
    assert session.globals["n"] == 3 and session.globals["ok"] is True


def test_numpy_isinstance_still_works():
    session = Session(NP + "ok = isinstance(np.ones(2), np.ndarray)\n")
    assert session.run_to_end()[0].ok or session.run_to_end()
    assert session.globals["ok"] is True


def test_refusal_leaves_global_torch_state_unchanged():
    before = (torch.is_grad_enabled(), torch.is_inference_mode_enabled(),
              torch.get_default_dtype(), torch.get_num_threads())
    for _, source in HARDENING[:20]:
        Session(source, limits=Limits(max_statement_seconds=5)).run_to_end(keep_going=True)
    after = (torch.is_grad_enabled(), torch.is_inference_mode_enabled(),
             torch.get_default_dtype(), torch.get_num_threads())
    assert before == after


# --- through `gradviz run`: the kernel process, its watchdog and its confinement -------
import json  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402

from gradviz import protocol  # noqa: E402
from gradviz.graph import wire  # noqa: E402
from gradviz.runner import KernelProcess  # noqa: E402

SECRET = "gradviz-secret-7f3a9c"

#: one script per attack class, run as a user would: `gradviz run FILE`
CLI_ATTACKS = [
    ("object-forgery", NP + T8 + "a = np.ndarray((4,), 'O', t.numpy())\nprint(a[0])"),
    ("immutable-write", NP + "a = np.frombuffer(b'\\n', np.uint8)\nt = torch.from_numpy(a)\nt.fill_(88)"),
    ("method-shadowing", "m = torch.nn.Linear(2, 2)\nm.register_forward_hook = torch.nn.Identity()\nm.register_forward_hook(print)"),
    ("library-called-lambda", "big = list(range(3000000))\nr = any(map(lambda v: v < 0, big))"),
    ("conv-work", "import torch.nn.functional as F\ny = F.conv1d(torch.ones(1, 1, 2**24), torch.ones(1, 1, 2**22))"),
    ("numpy-zero-stride", "torch.ones(1).expand(2**40).numpy().sum()"),
    ("numpy-6gib", NP + "a = np.ndarray((6 << 30,), 'u1')\na.fill(1)"),
    ("extend-bomb", "l = [0] * 1000\nfor i in range(25):\n    l.extend(l)"),
    ("tolist-bomb", "a = torch.zeros(2**27)\nb = a.tolist()"),
    ("format-width", "s = f'{1:>999999999}'"),
    ("report-object-array", NP + "a = np.array([torch.nn, 1], dtype=object)"),
    ("read-secret", "f = open('SECRET_PATH')\nprint(f.read())"),
    ("derived-from-file", "t = torch.from_file('SECRET_PATH', size=8, dtype=torch.uint8)\nprint(t)"),
    ("derived-storage", "t = torch.ones(4)\ns = t.untyped_storage()"),
    ("derived-transform-builtin", "g = torch.func.grad(print)(torch.ones(()))"),
    ("derived-type-escape", "C = type('C', (object,), {'f': print})"),
]


def _gradviz_run(tmp_path, source: str, *extra: str, timeout: float = 120):
    script = tmp_path / "script.py"
    script.write_text(source, encoding="utf-8")
    cwd = tmp_path / "cwd"
    cwd.mkdir(exist_ok=True)
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "gradviz", "run", "--restricted", str(script), *extra],
        capture_output=True, text=True, cwd=cwd, timeout=timeout,
    )
    return proc, time.monotonic() - started, cwd


@pytest.mark.slow
@pytest.mark.parametrize("source", [s for _, s in CLI_ATTACKS], ids=[i for i, _ in CLI_ATTACKS])
def test_attack_classes_refused_through_gradviz_run(source, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET)
    proc, _elapsed, cwd = _gradviz_run(tmp_path, source.replace("SECRET_PATH", str(secret)))
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert "SandboxError: " in out or "LimitExceeded: " in out, out
    assert SECRET not in out
    assert "Traceback" not in out
    assert os.listdir(cwd) == []
    assert secret.read_text() == SECRET


@pytest.mark.slow
@pytest.mark.parametrize(
    "source",
    [
        # list equality over a shared-structure DAG: 2**60 comparisons in C
        "x = [0]\ny = [0]\nfor i in range(60):\n    x = [x, x]\n    y = [y, y]\nr = x == y",
        # set of integers that all hash alike: quadratic insertion in C
        "l = list(range(0, 200000 * (2**61 - 1), 2**61 - 1))\ns = set(l)",
    ],
    ids=["list-equality-dag", "set-hash-collisions"],
)
def test_watchdog_stops_native_work_and_keeps_earlier_results(source, tmp_path):
    proc, elapsed, _ = _gradviz_run(tmp_path, "a = torch.ones(2)\n" + source, "--time-limit", "2")
    out = proc.stdout
    assert proc.returncode == 1, out + proc.stderr
    assert "refused: time limit 2 s" in out
    assert "ok " in out.splitlines()[0]  # the statement before it ran and is reported
    assert elapsed < 60


@pytest.mark.slow
def test_watchdog_report_in_json(tmp_path):
    source = "a = torch.ones(2)\nx = [0]\ny = [0]\nfor i in range(60):\n    x = [x, x]\n    y = [y, y]\nr = x == y\n"
    proc, _elapsed, _ = _gradviz_run(tmp_path, source, "--json", "--time-limit", "1")
    assert proc.returncode == 1
    report = json.loads(proc.stdout)
    last = report["statements"][-1]
    assert last["ok"] is False and last["error"]["limit"] == "max_statement_seconds"
    assert report["statements"][0]["ok"] is True


def test_wire_encodes_anything():
    deep: list = []
    node = deep
    for _ in range(100_000):
        node.append([])
        node = node[0]
    cyclic: list = [1]
    cyclic.append(cyclic)
    value = {
        "nan": float("nan"), "inf": [float("inf"), -float("inf")], "obj": object(),
        "deep": deep, "cycle": cyclic, "big": 10**5000, 3: "int key", (1, 2): "tuple key",
        "long": "x" * (wire.MAX_STRING + 10),
    }
    text = wire.dumps(value)
    decoded = json.loads(text)
    assert decoded["nan"] == "nan" and decoded["inf"] == ["inf", "-inf"]
    assert decoded["obj"] == "<object>" and decoded["cycle"][1] == "<cycle>"
    assert decoded["big"].startswith("<int of")
    assert len(decoded["long"]) < wire.MAX_STRING + 100


@pytest.mark.parametrize(
    "line",
    [
        b"[" * 100_000 + b"]" * 100_000,
        b'{"id": 1, "cmd": "run_to", "index": ' + b"9" * 5000 + b"}",
        b'{"id": 1, "cmd": "run_to", "index": 1e999}',
        b"\xff\xfe not utf-8",
        b"[1, 2, 3]",
        b'{"id": 1, "cmd": "exec"}',
        b'{"id": 1, "cmd": "load", "source": 42}',
        b'{"id": 1, "cmd": "load", "source": "a = 1", "cwd": "/"}',
        b'{"id": {"a": 1}, "cmd": "ping"}',
        b'{"id": 1, "cmd": "run_to"}',
        b'{"id": 1, "cmd": "load", "zero_points": [1, "x"]}',
        b'{"id": 1, "cmd": "run_to", "index": true}',
        b'{"id": 1, "cmd": "debug", "mode": 5}',
        b'{"id": 1, "cmd": "debug", "mode": "into", "breakpoints": "12"}',
        b'{"id": 1, "cmd": "debug", "mode": "into", "frame": "globals"}',
        b'{"id": 1, "cmd": "debug_stop", "force": true}',
    ],
    ids=["deep-nesting", "huge-int", "float-overflow", "bad-utf8", "not-an-object", "unknown-cmd",
         "wrong-type", "unknown-field", "bad-id", "missing-field", "bad-list", "bool-as-int",
         "debug-mode-int", "debug-breakpoints-string", "debug-unknown-field", "debug-stop-field"],
)
def test_malformed_requests_get_an_error_and_the_kernel_stays_up(line):
    with pytest.raises(protocol.BadRequest):
        protocol.decode_request(line)


@pytest.mark.slow
def test_kernel_survives_malformed_requests():
    with KernelProcess() as kernel:
        for line in (b"[" * 100_000 + b"]" * 100_000, b'{"id": 1, "cmd": "run_to", "index": '
                     + b"9" * 5000 + b"}", b"\xff\xfe", b'{"cmd": "nope"}', b"x" * (9 << 20)):
            reply = kernel.request_raw(line)
            assert reply["ok"] is False and "bad request" in reply["message"]
        assert kernel.request("ping")["ok"] is True
        reply = kernel.request("report", source="a = torch.tensor([float('nan'), 1.0])\n")
        assert reply["ok"] is True
        assert reply["state"]["tensors"]["a"]["value"][0] == "nan"


@pytest.mark.slow
def test_kernel_runs_confined():
    with KernelProcess() as kernel:
        report = kernel.info.get("confinement")
        assert report is not None
        if sys.platform.startswith("linux"):
            assert "rlimits" in report["applied"]


def test_inference_mode_tensor_at_top_level_is_captured():
    """Regression: capture read t._version, which inference tensors do not keep."""
    session = Session("with torch.inference_mode():\n    t = torch.ones(2)\nu = t + 1\n")
    results = session.run_to_end(keep_going=True)
    assert all(r.ok for r in results), [r.error for r in results if not r.ok]
    tensors = session.snapshot()["tensors"]
    with torch.inference_mode():
        t = torch.ones(2)
    u = t + 1
    assert tensors["t"]["version"] is None  # inference tensors keep no version counter
    assert tensors["u"]["version"] == u._version
    assert tensors["t"]["value"] == t.tolist() and tensors["u"]["value"] == u.tolist()


@pytest.mark.slow
def test_script_refused_before_it_runs_exits_1(tmp_path):
    for source in ("# -*- coding: latin-1 -*-\na = 1\n", "a = 'x\u202e'\n",
                   "a = " + "(" * 500 + "1" + ")" * 500 + "\n"):
        proc, _elapsed, _ = _gradviz_run(tmp_path, source)
        assert proc.returncode == 1, proc.stdout + proc.stderr
        assert "error:" in proc.stdout


# --- script classes: the new doors ------------------------------------------------------
M = "import torch.nn as nn\n"
NET_HEAD = M + "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(2, 2)\n"

SCRIPT_CLASS_DOORS = [
    ("class-getattr", M + "class A(nn.Module):\n    def __getattr__(self, n):\n        return 1"),
    ("class-reduce", "class A:\n    def __reduce__(self):\n        return (print, ('x',))"),
    ("class-torch-function", "class A:\n    def __torch_function__(self, f, t, a=(), k=None):\n        return f"),
    ("class-torch-dispatch", M + "class A(nn.Module):\n    def __torch_dispatch__(self, f, t, a=(), k=None):\n        return f"),
    ("class-init-subclass", "class A:\n    def __init_subclass__(cls):\n        pass"),
    ("class-call-dunder", M + "class A(nn.Module):\n    def __call__(self, x):\n        return x"),
    ("class-private-method", M + "class A(nn.Module):\n    def _apply(self, fn):\n        return self"),
    ("class-private-name", "class __A:\n    pass"),
    ("metaclass-keyword", "class A(metaclass=type):\n    pass"),
    ("class-keyword", "class A(nn.Module, foo=1):\n    pass"),
    ("class-decorator", "@print\nclass A:\n    pass"),
    ("method-decorator-builtin", "class A:\n    @print\n    def f(self):\n        pass"),
    ("method-decorator-non-function", "def d(f):\n    return 1\nclass A:\n    @d\n    def f(self):\n        pass"),
    ("tensor-base", "class T(torch.Tensor):\n    pass"),
    ("ndarray-base", "import numpy as np\nclass A(np.ndarray):\n    pass"),
    ("exception-base", "class E(ValueError):\n    pass"),
    ("optimizer-base", "class O(torch.optim.SGD):\n    pass"),
    ("class-attr-builtin", "class A:\n    f = print"),
    ("class-attr-module", "class A:\n    t = torch"),
    ("class-attr-function", "class A:\n    f = torch.load"),
    ("class-body-statement", "class A:\n    import os"),
    ("class-body-loop", "class A:\n    for i in range(3):\n        pass"),
    ("super-with-other-object", NET_HEAD + "    def f(self):\n        return super(Net, torch.nn.Linear(1, 1))\nNet().f()"),
    ("super-with-builtin-class", NET_HEAD + "    def f(self):\n        return super(int, self)\nNet().f()"),
    ("super-three-args", NET_HEAD + "    def f(self):\n        return super(Net, self, 1)\nNet().f()"),
    ("super-outside-method", "s = super()"),
    ("super-in-plain-function", "def f(self):\n    return super()\nf(1)"),
    ("super-class-attr", NET_HEAD + "    def f(self):\n        return super().__class__\nNet().f()"),
    ("super-dict", NET_HEAD + "    def f(self):\n        return super().__dict__\nNet().f()"),
    ("super-hook", NET_HEAD + "    def f(self):\n        return super().register_forward_hook(print)\nNet().f()"),
    ("super-apply", NET_HEAD + "    def f(self):\n        return super().apply(print)\nNet().f()"),
    ("super-init-elsewhere", "x = torch.ones(1)\nx.__init__()"),
    ("init-attr-on-module", NET_HEAD + "n = Net()\nn.__init__()"),
    ("self-class", NET_HEAD + "    def f(self):\n        return self.__class__.__dict__\nNet().f()"),
    ("self-dict", NET_HEAD + "    def f(self):\n        return self.__dict__\nNet().f()"),
    ("type-of-self-method", NET_HEAD + "    def f(self):\n        return type(self).forward\nNet().f()"),
    ("type-of-self-init", NET_HEAD + "    def f(self):\n        return type(self).__init__\nNet().f()"),
    ("self-modules-table", NET_HEAD + "    def f(self):\n        return self._modules\nNet().f()"),
    ("self-hook-method", NET_HEAD + "    def f(self):\n        return self.register_forward_pre_hook(print)\nNet().f()"),
    ("store-namespace", NET_HEAD + "n = Net()\nn.t = torch"),
    ("store-numpy-module", "import numpy as np\nclass A:\n    pass\na = A()\na.np = np"),
    ("store-torch-load", "class A:\n    pass\na = A()\na.f = torch.load"),
    ("store-type", "class A:\n    pass\na = A()\na.t = type(print)"),
    ("shadow-script-method", NET_HEAD + "    def f(self):\n        return 1\nn = Net()\nn.f = torch.nn.Identity()"),
    ("instance-private-attr", "a = torch.nn.Linear(1, 1)\na._secret = 1"),
    ("class-object-attr", "class A:\n    pass\nA.__subclasses__()"),
    ("class-mro", "class A:\n    pass\nA.mro()"),
    ("module-class-apply", NET_HEAD + "n = Net()\nNet.apply(n, print)"),
    ("module-class-unbound-method", NET_HEAD + "    def f(self):\n        return 1\ng = Net.f"),
    ("module-class-hook", NET_HEAD + "Net.register_forward_hook"),
    ("autograd-function-instantiate", "class F(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, a):\n        return a * 1\n    @staticmethod\n    def backward(ctx, g):\n        return g\nf = F()"),
    ("module-base-hook-in-init", M + "class A(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.register_forward_hook(print)\nA()"),
]


@pytest.mark.parametrize(
    "source", [s for _, s in SCRIPT_CLASS_DOORS], ids=[i for i, _ in SCRIPT_CLASS_DOORS]
)
def test_script_class_doors_are_refused(source, tmp_path, monkeypatch):
    test_adversarial_input_is_refused(source, tmp_path, monkeypatch)


# --- language doors: try/except, raise, str.format, iter/next, decorators, grad_fn data ----
LANGUAGE_DOORS = [
    ("except-traceback", "try:\n    1 / 0\nexcept Exception as e:\n    t = e.__traceback__"),
    ("except-context", "try:\n    1 / 0\nexcept Exception as e:\n    t = e.__context__"),
    ("except-with-traceback", "try:\n    1 / 0\nexcept Exception as e:\n    t = e.with_traceback(None)"),
    ("except-catches-limit", "try:\n    while True:\n        pass\nexcept Exception:\n    pass"),
    ("except-catches-limit-runtime", "try:\n    torch.empty(10**12)\nexcept RuntimeError:\n    pass"),
    ("except-catches-refusal", "try:\n    import subprocess\nexcept Exception:\n    pass\nsubprocess"),
    ("except-catches-sandbox-error", "try:\n    open('x')\nexcept Exception:\n    pass\nopen('x')"),
    ("except-catches-recursion", "def f(n):\n    return f(n + 1)\ntry:\n    f(0)\nexcept RuntimeError:\n    pass"),
    ("except-bare", "try:\n    1 / 0\nexcept:\n    pass"),
    ("except-callable", "try:\n    1 / 0\nexcept print:\n    pass"),
    ("except-tuple-callable", "try:\n    1 / 0\nexcept (ValueError, print):\n    pass"),
    ("raise-non-exception", "raise print"),
    ("raise-with-namespace", "raise ValueError(torch)"),
    ("format-attribute", "'{0.__class__}'.format(1)"),
    ("format-attribute-named", "'{a.real}'.format(a=1)"),
    ("format-index", "'{0[0]}'.format([1])"),
    ("format-globals-kw", "'{f.__globals__}'.format(f=print)"),
    ("format-width", "'{:>999999999}'.format(1)"),
    ("format-nested-width", "'{:{w}}'.format(1, w=10**9)"),
    ("format-map", "'{a}'.format_map({'a': 1})"),
    ("iter-callable-builtin", "it = iter(print, 1)"),
    ("next-on-namespace", "next(torch)"),
    ("decorator-builtin", "@print\ndef f():\n    pass"),
    ("decorator-torch-load", "@torch.load\ndef f():\n    pass"),
    ("decorator-lambda", "@(lambda f: f)\ndef f():\n    pass"),
    ("decorator-staticmethod-outside", "@staticmethod\ndef f():\n    pass"),
    ("decorator-once-differentiable-outside", "from torch.autograd.function import once_differentiable\n@once_differentiable\ndef f(ctx, g):\n    return g"),
    ("call-staticmethod", "s = staticmethod(len)"),
    ("name-dunder-store", "__name__ = 'x'"),
    ("name-dunder-builtins", "b = __builtins__"),
    ("grad-fn-call", SETUP + "y.grad_fn(torch.ones(2))"),
    ("grad-fn-raw-saved", SETUP + "r = y.grad_fn._raw_saved_self"),
    ("saved-on-tensor", SETUP + "r = x._saved_self"),
    ("saved-hook-print", SETUP + "y.grad_fn._saved_self.register_hook(print)"),
    ("grad-fn-prehook-print", SETUP + "y.grad_fn.register_prehook(print)"),
    ("grad-fn-as-sort-key", SETUP + "sorted([1, 2], key=y.grad_fn)"),
    ("grad-fn-as-hook", SETUP + "y.register_hook(y.grad_fn)"),
    ("random-sample-huge", "import random\ns = random.sample(range(10**9), 10**8)"),
    ("random-internals", "import random\nr = random.getstate()"),
    ("random-seed-callable", "import random\nrandom.seed(print)"),
]


@pytest.mark.parametrize("source", [s for _, s in LANGUAGE_DOORS], ids=[i for i, _ in LANGUAGE_DOORS])
def test_language_doors_are_refused(source, tmp_path, monkeypatch):
    test_adversarial_input_is_refused(source, tmp_path, monkeypatch)


def test_caught_exceptions_carry_only_their_message():
    session = Session(
        "k = torch.ones(1)\ntry:\n    d = {}\n    v = d[k]\nexcept KeyError as e:\n    a = e.args\n"
        "try:\n    z = torch.ones(2) @ torch.ones(3)\nexcept RuntimeError as e:\n    m = str(e)\n"
    )
    results = session.run_to_end()
    assert all(r.ok for r in results), [r.error for r in results if not r.ok]
    assert all(isinstance(v, str) for v in session.globals["a"])
    plain = None
    try:
        torch.ones(2) @ torch.ones(3)
    except RuntimeError as exc:
        plain = str(exc)
    assert session.globals["m"] == plain


# --- found by review: each with the smallest script that showed it ----------------------
REVIEW_FINDINGS = [
    ("fused-optimizer-data-resize", "p = torch.nn.Parameter(torch.zeros(4))\np.sum().backward()\np.data = torch.zeros(1000000)\nopt = torch.optim.SGD([p], lr=0.1, momentum=0.9, fused=True)\nopt.step()"),
    ("data-resize", "p = torch.zeros(4, requires_grad=True)\np.data = torch.zeros(100)"),
    ("data-dtype", "p = torch.zeros(4)\np.data = torch.zeros(4, dtype=torch.int64)"),
    ("fused-option", "p = torch.nn.Parameter(torch.zeros(4))\nopt = torch.optim.Adam([p], fused=True)"),
    ("fused-param-group", "p = torch.nn.Parameter(torch.zeros(4))\np.sum().backward()\nopt = torch.optim.SGD([p], lr=0.1)\nopt.param_groups[0]['fused'] = True\nopt.step()"),
    ("override-named-parameters", M + "class Net(nn.Module):\n    def named_parameters(self):\n        return 5\nn = Net()"),
    ("override-extra-repr-long", M + "class Net(nn.Module):\n    def extra_repr(self):\n        return 'x' * 20000\nprint(Net())"),
    ("override-parameters-attribute", M + "class Net(nn.Module):\n    parameters = [1]"),
    ("override-named-modules", M + "class Net(nn.Module):\n    def named_modules(self):\n        return []"),
    ("override-register-hook-name", M + "class Net(nn.Module):\n    def register_forward_hook(self, h):\n        return h"),
    ("class-attr-module-api", M + "class Net(nn.Module):\n    parameters = 1"),
    ("iter-two-argument", "x = list(iter(int, 1))"),
    ("numpy-int-size", "import numpy as np\na = np.ones(np.int64(200000000))"),
    ("numpy-int-repeat", "import numpy as np\ns = 'x' * np.int64(10**8)"),
    ("numpy-int-ljust", "import numpy as np\ns = 'x'.ljust(np.int64(10**8))"),
    ("tensor-int-repeat", "s = [0] * torch.tensor(10**8)"),
    ("percent-mapping-width", "s = '%(a)1000000000d' % {'a': 1}"),
    ("fstring-many-fields", "s = f'{1:9999999}{1:9999999}{1:9999999}'"),
    ("linalg-work", "a = torch.randn(8000, 8000)\nb = torch.linalg.inv(a)"),
    ("backward-expanded-gradient", "x = torch.ones(40000, requires_grad=True)\nx.expand(40000, 40000)[0].sum().backward()"),
    ("object-array-via-operator", "import numpy as np\na = np.ones(2) + [1, 2**100]"),
]


@pytest.mark.parametrize("source", [s for _, s in REVIEW_FINDINGS], ids=[i for i, _ in REVIEW_FINDINGS])
def test_review_findings_are_refused(source, tmp_path, monkeypatch):
    test_adversarial_input_is_refused(source, tmp_path, monkeypatch)


def test_script_code_reached_while_printing_is_guarded():
    limits = Limits(max_op_elements=1000)
    source = "def f(i):\n    return torch.ones(100000).numel()\nprint(list(map(f, [1])))\n"
    assert "max_op_elements" in _refused(source, limits)


def test_python_objects_count_against_process_memory():
    from gradviz.core.guards import resident_bytes

    rss = resident_bytes()
    if rss is None:
        pytest.skip("no /proc/self/statm on this platform")
    limits = Limits(max_process_bytes=rss + 300 * 1024**2)
    message = _refused("keep = []\nfor i in range(200):\n    keep.append('x' * 5000000 + str(i))\n", limits)
    assert "max_process_bytes" in message


def test_ops_without_a_meta_kernel_are_sized_after_they_run():
    limits = Limits(max_op_elements=10**6)
    source = "m = torch.ones([2] * 18, dtype=torch.bool)\nn = torch.nonzero(m)\n"
    assert "max_op_elements" in _refused(source, limits)


def test_super_binds_to_the_method_s_own_self():
    """Rebinding self inside a method cannot point super() at another object."""
    session = Session(
        "import torch.nn as nn\n"
        "class Net(nn.Linear):\n"
        "    def f(self):\n"
        "        self = Net\n"
        "        return super().__init__\n"
        "m = nn.Linear(2, 2)\n"
        "g = Net(2, 2).f()\n"
        "g(m, 5, 7)\n"
    )
    results = session.run_to_end(keep_going=True)
    assert not results[-1].ok
    assert session.globals["m"].in_features == 2 and session.globals["m"].out_features == 2


MODULE_HOOK_DOORS = [
    ("forward-hook-torch-function", "m = torch.nn.Linear(2, 2)\nm.register_forward_hook(torch.save)"),
    ("forward-pre-hook-builtin", "m = torch.nn.Linear(2, 2)\nm.register_forward_pre_hook(sorted)"),
    ("backward-hook-print", "m = torch.nn.Linear(2, 2)\nm.register_full_backward_hook(print)"),
    ("backward-pre-hook-method", "m = torch.nn.Linear(2, 2)\nl = []\nm.register_full_backward_pre_hook(l.append)"),
    ("apply-init-function", "m = torch.nn.Linear(2, 2)\nm.apply(torch.nn.init.zeros_)"),
    ("apply-numpy", "import numpy as np\nm = torch.nn.Linear(2, 2)\nm.apply(np.sum)"),
    ("hook-returns-huge", "m = torch.nn.Linear(2, 2)\ndef h(mod, i, o):\n    return torch.empty(10**12)\nm.register_forward_hook(h)\nm(torch.ones(2))"),
    ("backward-hook-huge", "m = torch.nn.Linear(2, 2)\ndef h(mod, gi, go):\n    return (torch.empty(10**12),)\nm.register_full_backward_hook(h)\nx = torch.ones(1, 2, requires_grad=True)\nm(x).sum().backward()"),
]


@pytest.mark.parametrize("source", [s for _, s in MODULE_HOOK_DOORS], ids=[i for i, _ in MODULE_HOOK_DOORS])
def test_module_hook_doors_are_refused(source, tmp_path, monkeypatch):
    test_adversarial_input_is_refused(source, tmp_path, monkeypatch)


DL = "from torch.utils.data import TensorDataset, DataLoader\nds = TensorDataset(torch.ones(4, 2))\n"
DATALOADER_DOORS = [
    ("dataloader-workers-bool", DL + "dl = DataLoader(ds, num_workers=True)"),
    ("dataloader-workers-negative", DL + "dl = DataLoader(ds, num_workers=-1)"),
    ("dataloader-workers-str", DL + "dl = DataLoader(ds, num_workers='2')"),
    ("dataloader-workers-float", DL + "dl = DataLoader(ds, num_workers=2.0)"),
    ("dataloader-pin-memory-str", DL + "dl = DataLoader(ds, pin_memory='cuda')"),
    ("dataloader-pin-memory-device", DL + "dl = DataLoader(ds, pin_memory=True, pin_memory_device='cuda')"),
    ("dataloader-prefetch-object", DL + "dl = DataLoader(ds, num_workers=2, prefetch_factor=print)"),
    ("dataloader-persistent-object", DL + "dl = DataLoader(ds, num_workers=2, persistent_workers=[1])"),
    ("dataloader-persistent-workers", DL + "dl = DataLoader(ds, num_workers=2, persistent_workers=True)"),
    ("dataloader-worker-init", DL + "def f(i):\n    pass\ndl = DataLoader(ds, worker_init_fn=f)"),
    ("dataloader-collate-builtin", DL + "dl = DataLoader(ds, collate_fn=print)"),
    ("dataloader-collate-torch", DL + "dl = DataLoader(ds, collate_fn=torch.save)"),
    ("dataloader-mp-context", DL + "dl = DataLoader(ds, multiprocessing_context='fork')"),
    ("dataloader-sampler", DL + "dl = DataLoader(ds, sampler=[0, 1])"),
    ("dataloader-positional-sampler", DL + "dl = DataLoader(ds, 2, False, [0, 1])"),
    ("dataloader-iterator-internals", DL + "dl = DataLoader(ds)\nit = dl._get_iterator()"),
    ("dataloader-attribute", DL + "dl = DataLoader(ds)\nf = dl.collate_fn"),
    ("utils-cpp-extension", "import torch.utils.cpp_extension"),
    ("utils-attribute", "f = torch.utils.cpp_extension"),
    ("utils-data-internal", "from torch.utils.data import get_worker_info"),
    ("tensor-type-string-cuda-like", "t = torch.ones(1).type(print)"),
]


@pytest.mark.parametrize("source", [s for _, s in DATALOADER_DOORS], ids=[i for i, _ in DATALOADER_DOORS])
def test_dataloader_doors_are_refused(source, tmp_path, monkeypatch):
    test_adversarial_input_is_refused(source, tmp_path, monkeypatch)


# pytorch/examples' mnist on a CUDA machine: the loader options it passes there
CUDA_LOADER = (
    "import torch\n"
    "from torch.utils.data import TensorDataset, DataLoader\n"
    "torch.manual_seed(0)\n"
    "ds = TensorDataset(torch.randn(10, 3), torch.arange(10))\n"
    "train_kwargs = {'batch_size': 4}\n"
    "cuda_kwargs = {'num_workers': 1, 'pin_memory': True, 'shuffle': True}\n"
    "train_kwargs.update(cuda_kwargs)\n"
    "dl = DataLoader(ds, **train_kwargs, persistent_workers=False, prefetch_factor=2)\n"
    "batches = [(x, y) for x, y in dl]\n"
    "firsts = torch.cat([y for _, y in batches])\n"
    "again = torch.cat([y for _, y in dl])\n"
)


def test_dataloader_worker_and_pinning_options_load_in_process():
    """The options run, in the kernel's own process (no worker starts: the confined
    kernel could not fork one), with the batches plain PyTorch's workers give."""
    import warnings as _warnings

    session = run_script(CUDA_LOADER)
    failed = [r for r in session.results if not r.ok]
    assert not failed, failed[0].error
    loader_line = result_at(session, "dl = DataLoader(ds, **train_kwargs, persistent_workers=False, prefetch_factor=2)")
    assert any("no worker processes" in w for w in loader_line.warnings), loader_line.warnings
    namespace: dict = {}
    with _warnings.catch_warnings():
        _warnings.simplefilter("ignore")  # pin_memory without a device warns
        exec(compile(CUDA_LOADER, "loader.py", "exec"), namespace)  # noqa: S102 - our own test
    for name in ("firsts", "again"):
        assert torch.equal(session.globals[name], namespace[name]), name
    for (x, y), (px, py) in zip(session.globals["batches"], namespace["batches"], strict=True):
        assert torch.equal(x, px) and torch.equal(y, py)


OPT = "p = torch.nn.Parameter(torch.ones(2))\nopt = torch.optim.SGD([p], lr=0.1)\n"
GRADCHECK_SCHEDULER_DOORS = [
    ("gradcheck-builtin", "x = torch.ones(2, dtype=torch.float64, requires_grad=True)\ntorch.autograd.gradcheck(print, (x,))"),
    ("gradcheck-torch-save", "x = torch.ones(2, dtype=torch.float64, requires_grad=True)\ntorch.autograd.gradcheck(torch.save, (x,))"),
    ("gradgradcheck-numpy", "import numpy as np\nx = torch.ones(2, dtype=torch.float64, requires_grad=True)\ntorch.autograd.gradgradcheck(np.sum, (x,))"),
    ("lambda-lr-builtin", OPT + "s = torch.optim.lr_scheduler.LambdaLR(opt, lr_lambda=print)"),
    ("scheduler-optimizer-attr", OPT + "s = torch.optim.lr_scheduler.StepLR(opt, 1)\no = s.optimizer"),
    ("scheduler-state-dict", OPT + "s = torch.optim.lr_scheduler.StepLR(opt, 1)\nd = s.state_dict()"),
    ("scheduler-load-state", OPT + "s = torch.optim.lr_scheduler.StepLR(opt, 1)\ns.load_state_dict({})"),
    ("wrapped-step-fused", OPT + "s = torch.optim.lr_scheduler.StepLR(opt, 1)\nopt.param_groups[0]['fused'] = True\nopt.step()"),
    ("wrapped-step-func", OPT + "s = torch.optim.lr_scheduler.StepLR(opt, 1)\nf = opt.step.func"),
    ("lr-scheduler-internal", "from torch.optim.lr_scheduler import _LRScheduler"),
]


@pytest.mark.parametrize(
    "source", [s for _, s in GRADCHECK_SCHEDULER_DOORS], ids=[i for i, _ in GRADCHECK_SCHEDULER_DOORS]
)
def test_gradcheck_and_scheduler_doors_are_refused(source, tmp_path, monkeypatch):
    test_adversarial_input_is_refused(source, tmp_path, monkeypatch)


# --- the derived tensor API (issue 8): what it must never open -------------------

X = "x = torch.ones(4, requires_grad=True)\n"
NET = "net = torch.nn.Linear(2, 2)\n"
DERIVED_API_DOORS = [
    # files, processes, compilers, native entry points
    ("torch-load", "torch.load('weights.pt')"),
    ("torch-save", X + "torch.save(x, 'out.pt')"),
    ("from-file", "t = torch.from_file('/etc/passwd', size=16)"),
    ("frombuffer-bytes", "t = torch.frombuffer(b'abcd', dtype=torch.uint8)"),
    ("asarray-bytes", "t = torch.asarray(b'abcd')"),
    ("hub", "torch.hub.load('x/y', 'z')"),
    ("jit-script", "f = torch.jit.script"),
    ("compile", "f = torch.compile(lambda t: t)"),
    ("ops-aten", "f = torch.ops.aten.add"),
    ("underscore-c", "c = torch._C"),
    ("library", "lib = torch.library"),
    ("import-torch-jit", "import torch.jit\nf = torch.jit.script"),
    ("from-torch-jit-script", "from torch.jit import script\nf = script(lambda t: t)"),
    ("from-torch-jit-load", "from torch.jit import load"),
    ("import-multiprocessing", "import torch.multiprocessing"),
    ("from-torch-import-load", "from torch import load"),
    ("fbgemm", "torch.fbgemm_pack_quantized_matrix(torch.ones(2, 2))"),
    ("mkldnn", X + "y = x.to_mkldnn()"),
    ("sparse-coo-unchecked", "t = torch.sparse_coo_tensor(torch.tensor([[100000]]), torch.ones(1), (2,))"),
    ("quantize", "q = torch.quantize_per_tensor(torch.ones(2), 0.1, 0, torch.quint8)"),
    ("segment-reduce", "torch.segment_reduce(torch.ones(4), 'sum', lengths=torch.tensor([10**6]))"),
    ("raw-lstm", "torch.lstm"),
    # raw memory
    ("untyped-storage", X + "s = x.untyped_storage()"),
    ("storage", X + "s = x.storage()"),
    ("set-storage", X + "y = torch.empty(0)\ny.set_(x)"),
    ("as-strided-oob", "t = torch.ones(2)\nu = t.as_strided((1000,), (1,))"),
    ("torch-as-strided", "t = torch.as_strided(torch.ones(2), (1000,), (1,))"),
    ("share-memory", X + "x.share_memory_()"),
    ("pin-memory", X + "x.pin_memory()"),
    ("resize-grow", "t = torch.ones(2)\nt.resize_(10**6)"),
    ("legacy-new", "t = torch.ones(2).new(10)"),
    ("const-data-ptr", X + "p = x.const_data_ptr()"),
    ("as-subclass", X + "y = x.as_subclass(torch.nn.Parameter)"),
    # Python callables run per element, or handed to transforms
    ("apply-builtin", "t = torch.ones(3)\nt.apply_(abs)"),
    ("map-print", "t = torch.ones(3)\nt.map_(t, print)"),
    ("func-grad-builtin", "g = torch.func.grad(print)"),
    ("func-grad-torch-fn", "g = torch.func.grad(torch.save)"),
    ("vmap-builtin", "v = torch.vmap(len)(torch.ones(3, 2))"),
    ("jacobian-builtin", X + "torch.autograd.functional.jacobian(print, x)"),
    ("hessian-numpy", "import numpy as np\n" + X + "torch.autograd.functional.hessian(np.sum, x)"),
    ("checkpoint-builtin", X + "torch.utils.checkpoint.checkpoint(print, x, use_reentrant=False)"),
    ("functionalize", "f = torch.func.functionalize"),
    ("linearize", "f = torch.func.linearize"),
    ("transform-result-internals", "g = torch.func.grad(lambda t: t.sum())\nf = g.func"),
    ("transform-result-wrapped", "g = torch.func.grad(lambda t: t.sum())\nf = g.__wrapped__"),
    ("post-accumulate-builtin", X + "x.register_post_accumulate_grad_hook(print)"),
    ("saved-hooks-builtins", X + "with torch.autograd.graph.saved_tensors_hooks(print, print):\n    y = x * x"),
    ("saved-hooks-torch-save", X + "with torch.autograd.graph.saved_tensors_hooks(torch.save, torch.load):\n    y = x * x"),
    ("profiler-trace", "with torch.autograd.profiler.profile(with_stack=True) as p:\n    y = torch.ones(2)"),
    ("profiler-export", "with torch.autograd.profiler.profile() as p:\n    y = torch.ones(2)\np.export_chrome_trace('trace.json')"),
    ("profiler-use-kineto-positional", "with torch.autograd.profiler.profile(True, False, True) as p:\n    y = torch.ones(2)"),
    ("anomaly-mode", "with torch.autograd.detect_anomaly(check_nan=print):\n    y = torch.ones(2)"),
    ("with-open", "with open('x') as f:\n    pass"),
    # distributions
    ("dist-callable-param", "d = torch.distributions.Normal(print, 1.0)"),
    ("dist-transform-base", "from torch.distributions.transforms import Transform"),
    ("dist-transform-subclass", "class T(torch.distributions.transforms.ExpTransform):\n    pass"),
    ("dist-register-kl", "f = torch.distributions.register_kl"),
    ("dist-default-validate", "torch.distributions.Distribution.set_default_validate_args(False)"),
    ("dist-huge-sample", "d = torch.distributions.Normal(0.0, 1.0)\ns = d.sample((10**12,))"),
    ("dist-support-internals", "d = torch.distributions.Normal(0.0, 1.0)\nc = d.support.check"),
    # modules and state
    ("load-state-dict-callable", NET + "net.load_state_dict({'weight': print, 'bias': torch.ones(2)})"),
    ("module-dict-builtin", "m = torch.nn.ModuleDict({'a': print})"),
    ("functional-call-builtin", NET + "torch.func.functional_call(net, {'weight': print}, (torch.ones(2),))"),
    ("sync-batchnorm", "m = torch.nn.SyncBatchNorm(2)"),
    ("process-settings", "torch.set_num_threads(64)"),
    ("printoptions", "torch.set_printoptions(linewidth=10**9)"),
    ("rng-state-bytes", "torch.set_rng_state(torch.zeros(5000, dtype=torch.uint8))"),
    ("default-tensor-type", "torch.set_default_tensor_type(torch.DoubleTensor)"),
    ("accelerator-set-device", "torch.accelerator.set_device_index(0)"),
    # type(), __name__, dunders, generators
    ("type-three-args", "C = type('C', (object,), {})"),
    ("type-node-class", X + "N = type((x * 2).grad_fn)\nn = N()"),
    ("type-safe-module", "M = type(torch)\nm = M('os', {})"),
    ("type-builtin-fn", "F = type(print)\nf = F()"),
    ("type-dunder", X + "T = type(x)\nd = T.__dict__"),
    ("type-mro", X + "m = type(x).mro()"),
    ("type-subclasses", "s = type(1).__subclasses__()"),
    ("name-on-tensor", X + "n = x.__name__"),
    ("name-assign", "def f():\n    pass\nf.__name__ = 'g'"),
    ("class-repr-dunder", "class A:\n    def __repr__(self):\n        return 'a'"),
    ("class-getattr-dunder", "class A:\n    def __getattr__(self, n):\n        return 1"),
    ("class-call-dunder", "class A:\n    def __getattr__(self, name):\n        return 1"),
    ("class-del-dunder", "class A:\n    def __del__(self):\n        pass"),
    ("dataset-base-internal", "class D(torch.utils.data.IterableDataset):\n    pass"),
    ("getitem-recursion", "class A:\n    def __getitem__(self, i):\n        return self[i]\nA()[0]"),
    ("endless-generator", "def g():\n    while True:\n        yield 1\nfor v in g():\n    break"),
    ("huge-generator", "def g():\n    for i in range(10**9):\n        yield i\nv = g()"),
    ("yield-in-lambda", "f = lambda: (yield 1)\nf()"),
    ("yield-top-level", "yield 1"),
    ("yield-from", "def g():\n    yield from [1]"),
    ("torchviz-roots", "from torchviz import make_dot\nd = make_dot(torch.ones(1, requires_grad=True) * 2)\nr = d.roots"),
    ("torchviz-other-name", "from torchviz import make_dot_from_trace"),
    ("torchviz-format-callable", "from torchviz import make_dot\nd = make_dot(torch.ones(1, requires_grad=True) * 2)\nd.format = print"),
    ("len-returns-huge", "class D(torch.utils.data.Dataset):\n    def __len__(self):\n        return 10**12\n    def __getitem__(self, i):\n        return torch.ones(1)\nfor b in torch.utils.data.DataLoader(D()):\n    pass"),
]


@pytest.mark.parametrize("source", [s for _, s in DERIVED_API_DOORS], ids=[i for i, _ in DERIVED_API_DOORS])
def test_derived_api_doors_are_refused(source, tmp_path, monkeypatch):
    test_adversarial_input_is_refused(source, tmp_path, monkeypatch)
    assert torch.get_default_dtype() == torch.float32
    assert torch.get_default_device() == torch.device("cpu")


@pytest.mark.parametrize("assign", [False, True])
def test_load_state_dict_with_wrong_shapes_fails_as_in_pytorch(assign):
    """Odd state dicts reach torch's own checks (shapes are checked even with assign=True):
    the statement fails with PyTorch's message and the module keeps its parameters."""
    source = (
        "net = torch.nn.Linear(2, 2)\nw = net.weight.detach().clone()\n"
        f"net.load_state_dict({{'weight': torch.ones(9, 9), 'bias': torch.ones(2)}}, assign={assign})\n"
    )
    session = Session(source)
    results = session.run_to_end(keep_going=True)
    assert results[0].ok and results[1].ok and not results[2].ok
    plain: dict = {"torch": torch}
    exec("net = torch.nn.Linear(2, 2)\n", plain)  # noqa: S102 - the reference is plain PyTorch
    with pytest.raises(RuntimeError) as info:
        plain["net"].load_state_dict({"weight": torch.ones(9, 9), "bias": torch.ones(2)}, assign=assign)
    assert results[2].error.type == "RuntimeError"
    assert results[2].error.message.splitlines()[0] == str(info.value).splitlines()[0]
    assert torch.equal(session.globals["net"].weight, session.globals["w"])


def test_module_tables_cannot_shadow_methods():
    """register_buffer/add_module under a method's name fail in PyTorch itself, and the
    method stays what lookup finds (state_dict and friends are allowed since issue 8)."""
    source = (
        "m = torch.nn.Linear(2, 2)\n"
        "m.register_buffer('apply', torch.ones(1))\n"
        "m.add_module('state_dict', torch.nn.Identity())\n"
        "m.register_buffer('scale', torch.ones(1))\n"
        "keys = sorted(m.state_dict().keys())\n"
    )
    session = Session(source)
    results = session.run_to_end(keep_going=True)
    assert results[0].ok and not results[1].ok and not results[2].ok
    assert results[1].error.type == "KeyError" and results[2].error.type == "KeyError"
    assert results[3].ok and results[4].ok
    plain: dict = {"torch": torch}
    exec("m = torch.nn.Linear(2, 2)\nm.register_buffer('scale', torch.ones(1))\n"  # noqa: S102
         "keys = sorted(m.state_dict().keys())\n", plain)
    assert session.globals["keys"] == plain["keys"]


def test_script_defaults_do_not_outlive_their_statements():
    """set_default_dtype/device hold for the script's later statements, never for gradviz
    or another script (the process's defaults come back after every statement)."""
    source = (
        "torch.set_default_dtype(torch.float64)\n"
        "a = torch.ones(2)\n"
        "torch.set_default_device('meta')\n"
        "b = torch.ones(2)\n"
    )
    session = Session(source)
    results = session.run_to_end()
    assert all(r.ok for r in results), [r.error for r in results]
    assert session.globals["a"].dtype == torch.float64
    assert session.globals["b"].device.type == "meta"
    assert torch.get_default_dtype() == torch.float32
    assert torch.get_default_device() == torch.device("cpu")
    assert torch.ones(1).dtype == torch.float32


def test_data_ptr_compares_like_pytorch_but_hides_the_address():
    session = Session("x = torch.ones(4)\np = x.data_ptr()\nq = x[1].data_ptr()\n")
    assert all(r.ok for r in session.run_to_end())
    x = session.globals["x"]
    assert session.globals["q"] - session.globals["p"] == x[1].data_ptr() - x.data_ptr()
    assert session.globals["p"] != x.data_ptr()


def test_saved_tensor_hooks_run_only_when_the_script_runs_them():
    """gradviz reads saved tensors to draw them; that must not call the script's
    unpack hook (its print would appear in the statement's output twice)."""
    source = (
        "x = torch.ones(3, requires_grad=True)\n"
        "def pack(t):\n    print('pack')\n    return t\n"
        "def unpack(t):\n    print('unpack')\n    return t\n"
        "with torch.autograd.graph.saved_tensors_hooks(pack, unpack):\n    y = x * x\n"
        "y.sum().backward()\n"
    )
    session = Session(source)
    results = session.run_to_end()
    assert all(r.ok for r in results)
    outputs = [r.output for r in results]
    assert outputs[3].count("unpack") == 0 and outputs[3].count("pack") == 2
    assert outputs[4].count("unpack") == 2


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("t = torch.ones(3)\nu = t.rol(1)", "did you mean x.roll"),
        ("u = torch.fliplr2", "did you mean torch.fliplr"),
        ("torch.save(torch.ones(1), 'x')", "it writes files"),
        ("t = torch.ones(2).untyped_storage()", "storages are raw memory"),
        ("import subprocess", "cannot reach processes"),
        ("import matplotlib.pyplot as plt", "gradviz draws the graph"),
        ("import torch.nn.functionl", "did you mean torch.nn.functional"),
        ("from torch.nn import Lineer", "did you mean Linear"),
        ("from torch.optim import Foo", "it offers"),
        ("import torch.utils.cpp_extension", "scripts may import torch.{"),
        ("t = torch.ones(2).as_strided((3,), (1,))", "write view, expand or unfold"),
    ],
)
def test_refusals_say_what_to_write_instead(source, expected):
    assert expected in _refused(source)


def test_tensor_method_missing_points_to_torch_function():
    from gradviz.core import suggest
    # a name only torch has (no Tensor method): the message says how to call it
    assert "write torch.cartesian_prod(x, ...)" in suggest.unavailable_tensor_attribute(
        "cartesian_prod"
    )
    # and the reverse: a tensor method asked for on torch
    torch_ns = ns.build_torch_namespace()
    assert "x.new_zeros" in suggest.unavailable_member(torch_ns, "new_zeros")


def test_generators_yield_in_order_and_stop_at_return():
    source = (
        "def g(n):\n    for i in range(n):\n        if i == 3:\n            return\n        yield i * i\n"
        "out = list(g(10))\n"
    )
    session = Session(source)
    assert all(r.ok for r in session.run_to_end())
    ns_plain: dict = {}
    exec(source, ns_plain)  # noqa: S102 - the reference is plain Python
    assert session.globals["out"] == ns_plain["out"]


# --- found by the red-team review of the derived API --------------------------------

RED_TEAM_FINDINGS = [
    ("native-batch-norm-oob", "x = torch.randn(1, 200000, 1)\nout = torch.native_batch_norm(x, torch.ones(1), torch.zeros(1), torch.zeros(1), torch.ones(1), True, 0.5, 1e-5)"),
    ("native-layer-norm", "y = torch.native_layer_norm(torch.ones(2, 3), [3], None, None, 1e-5)"),
    ("ctc-label-oob", "lp = torch.randn(5, 1, 4).log_softmax(2)\nt = torch.tensor([[1000000000, -1000000000, 3]])\nprint(torch.ctc_loss(lp, t, [5], [3], 0, 0, False))"),
    ("ctc-label-small-oob", "import torch.nn.functional as F\nlp = torch.randn(5, 1, 4).log_softmax(2)\nl = F.ctc_loss(lp, torch.tensor([[7, 8, 3]]), torch.tensor([5]), torch.tensor([3]))"),
    ("ctc-module-oob", "lp = torch.randn(5, 1, 4).log_softmax(2)\nl = torch.nn.CTCLoss()(lp, torch.tensor([[1000000000, 5, 3]]), torch.tensor([5]), torch.tensor([3]))"),
    ("ctc-input-lengths", "lp = torch.randn(5, 1, 4).log_softmax(2)\nl = torch.ctc_loss(lp, torch.tensor([[1, 2]]), [500], [2])"),
    ("out-resize-shared", "t = torch.zeros(4000)\na = t.numpy()\ntorch.add(torch.zeros(400000), 1.0, out=t)"),
    ("out-resize-grow", "t = torch.zeros(4)\ntorch.ones(10, out=t)"),
    ("modulelist-iter", "class L(torch.nn.ModuleList):\n    def __iter__(self):\n        return iter([])\nL()"),
    ("parameterlist-len", "class P(torch.nn.ParameterList):\n    def __len__(self):\n        return 0"),
    ("sequential-getitem", "class S(torch.nn.Sequential):\n    def __getitem__(self, i):\n        return self"),
    ("grid-sampler-modes", "g = torch.grid_sampler_2d(torch.randn(1, 1, 4, 4), torch.zeros(1, 8, 8, 2), 7, 7, False)"),
    ("hash-of-object", "h = hash(torch.ones(1))"),
    ("hash-of-list-in-tuple", "h = hash((1, torch.nn))"),
    ("dataloader-huge-batch", "ds = torch.utils.data.TensorDataset(torch.arange(4.))\nfor b in torch.utils.data.DataLoader(ds, batch_size=100000000, drop_last=True):\n    pass"),
    ("private-keyword", "import torch.nn.functional as F\ny = F.fractional_max_pool2d(torch.ones(1, 1, 4, 4), 2, output_size=2, _random_samples=torch.ones(1, 1, 2))"),
    ("tensor-index-functorch", "t = torch.ones(3)\ni = t.index"),
]


@pytest.mark.parametrize("source", [s for _, s in RED_TEAM_FINDINGS], ids=[i for i, _ in RED_TEAM_FINDINGS])
def test_red_team_findings_are_refused(source, tmp_path, monkeypatch):
    test_adversarial_input_is_refused(source, tmp_path, monkeypatch)


def test_out_with_the_right_shape_still_works_as_in_the_blitz():
    source = "x = torch.ones(5, 3)\ny = torch.ones(5, 3)\nresult = torch.empty(5, 3)\ntorch.add(x, y, out=result)\n"
    session = Session(source)
    assert all(r.ok for r in session.run_to_end())
    assert torch.equal(session.globals["result"], torch.full((5, 3), 2.0))


def test_repr_of_a_value_never_runs_script_code_and_hides_addresses():
    """The statement's value is formatted by gradviz after the statement: a script
    class's method must not run then, and object addresses are hidden."""
    source = (
        "class D(torch.utils.data.Dataset):\n"
        "    def __len__(self):\n        print('len ran')\n        return 1\n"
        "    def __getitem__(self, i):\n        return i\n"
        "d = D()\n"
        "d\n"
        "g = torch.manual_seed(0)\n"
        "print(g, repr(iter([1])), f'{g}')\n"
    )
    session = Session(source)
    results = session.run_to_end()
    assert all(r.ok for r in results), [r.error for r in results]
    assert "len ran" not in "".join(r.output for r in results)
    printed = results[-1].output
    assert " at 0x000000000000" in printed and not re.search(r"0x(?!0{12})[0-9a-f]{6,}", printed)


def test_escaped_vmap_tensor_does_not_break_capture():
    source = (
        "from torch.func import vmap\nbox = []\n"
        "def f(x):\n    box.append(x)\n    return x * 2\n"
        "y = vmap(f)(torch.ones(3, 2))\nesc = box[0]\nz = y + 1\n"
    )
    session = Session(source)
    results = session.run_to_end()
    assert all(r.ok for r in results), [r.error for r in results]
    assert "z" in session.snapshot()["tensors"]
