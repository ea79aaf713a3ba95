"""Restricted mode runs more real Python (issue 21, round 4): ``re``, and a script
nn.Module's own ``parameters``/``extra_repr``.

Fidelity: the same snippet through ``Session`` (restricted mode) and plain ``exec``
prints the same text. Adversarial: what a hostile script would do through the construct
(a pattern that backtracks for ever, a replacement that makes gigabytes, a callable
replacement, private attributes of the objects gradviz hands back, a module description
of gigabytes) ends in a clean refusal or an ordinary Python error, before the work.
"""

from __future__ import annotations

import contextlib
import io
import time
import warnings

import pytest
import torch

from gradviz.core.guards import Limits
from gradviz.core.session import Session

REFUSALS = ("SandboxError", "LimitExceeded", "ScriptSyntaxError")


def _run(source: str):
    session = Session(source, limits=Limits(max_statement_seconds=20))
    assert session.parse_error is None, session.parse_error
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = session.run_to_end(keep_going=False)
    failed = [r for r in results if not r.ok]
    return session, results, (failed[0] if failed else None)


def _same_as_python(source: str) -> None:
    torch.manual_seed(0)
    _, results, failure = _run(source)
    assert failure is None, failure and failure.error
    buf = io.StringIO()
    torch.manual_seed(0)
    with contextlib.redirect_stdout(buf), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(source, {})  # noqa: S102 - the reference: plain Python
    assert "".join(r.output for r in results) == buf.getvalue()


def _refused(source: str, says: str = "") -> None:
    start = time.monotonic()
    _, _, failure = _run(source)
    assert failure is not None, f"not refused:\n{source}"
    assert failure.error.type in REFUSALS, (failure.error.type, failure.error.message)
    assert says in failure.error.message, failure.error.message
    assert time.monotonic() - start < 10


# --- re ---------------------------------------------------------------------------------

def test_re_as_tutorials_use_it_matches_python():
    _same_as_python(
        "import re\n"
        "s = \"Hello, World!  It's   a test.  42 apples\"\n"
        "a = re.sub(r\"([.!?])\", r\" \\1\", s)\n"
        "b = re.sub(r\"[^a-zA-Z.!?]+\", r\" \", a)\n"
        "c = re.sub(r\"\\s+\", r\" \", b).strip()\n"
        "print(a, b, c, re.findall(r\"\\d+\", s), re.split(r\"\\s+\", s), sep='|')\n"
        "p = re.compile(r\"(\\w+)@(\\w+)\\.com\", re.IGNORECASE)\n"
        "m = p.search('mail: Bob@Example.com now')\n"
        "print(m.group(0), m.group(1), m.groups(), m.span(), m[2], p.match('x') is None)\n"
        "print(re.escape('a.b*c'), p.pattern, re.sub('[^A-Za-z]+', ' ', 'The Time-Machine, by H. G.').lower())\n"
        "print([x.group() for x in re.finditer(r'[a-z]+', 'ab cd ef')], re.subn('a', 'b', 'aaa'))\n"
        "print(re.fullmatch(r'\\d{2,4}', '2024') is not None, re.split(r'(,)', 'a,b'))\n"
        "for line in ['x = 1', 'y=2']:\n"
        "    k, v = re.split(r'\\s*=\\s*', line)\n"
        "    print(k, v)\n"
    )


@pytest.mark.parametrize(("source", "says"), [
    ("re.match(r'(a+)+$', 'a' * 40 + 'b')", "repeat inside a repeat"),
    ("re.match(r'(a|ab)*c', 'ab' * 30)", "alternation"),
    ("re.search(r'(\\w)\\1', 'aa')", "backreferences"),
    ("re.search(r'a(?=b)', 'ab')", "lookahead"),
    ("re.search(r'a{1,100000}b', 'a')", "bounded repeat"),
    ("re.search(r'a+b', 'a' * 1_000_000)", "backtrack"),
    ("re.search(r'.*.*.*x', 'a' * 2_000)", "backtrack"),
    ("re.sub('', 'x' * 1000, 'a' * 1_000_000)", "limit"),
    ("re.findall('', 'a' * 10_000_001)", "limit"),
    ("re.sub('a', lambda m: 'b', 'aaa')", "not a function"),
    ("re.compile('a')._compiled", ""),
    ("re.compile('a').search('a')._m", ""),
    ("re.compile('a' * 20_000)", "pattern"),
    ("re.compile('a', 1 << 20)", "flags"),
])
def test_re_refuses_what_could_run_away(source, says):
    _refused("import re\n" + source + "\n", says)


def test_re_objects_give_nothing_else():
    for source in ("import re\np = re.compile('a')\nq = type(p)('b')\n",
                   "import re\nm = re.match('a', 'a')\nq = type(m)(m)\n",
                   "import re\nx = re.compile('a').sub.__self__\n"):
        _, _, failure = _run(source)
        assert failure is not None and failure.error.type in (*REFUSALS, "TypeError",
                                                               "AttributeError"), source


def test_a_pattern_at_its_limit_runs_in_time():
    start = time.monotonic()
    _, _, failure = _run("import re\nm = re.search(r'a+b', 'a' * 40_000)\n")
    assert failure is None, failure and failure.error
    assert time.monotonic() - start < 15


# --- nn.Module subclasses: parameters, extra_repr ----------------------------------------

def test_a_script_module_may_define_parameters_and_extra_repr():
    _same_as_python(
        "import torch\n"
        "from torch import nn\n"
        "class Scratch(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.W = torch.ones(3, 2, requires_grad=True)\n"
        "        self.b = torch.zeros(2, requires_grad=True)\n"
        "    def parameters(self):\n"
        "        return [self.W, self.b]\n"
        "    def forward(self, x):\n"
        "        return x @ self.W + self.b\n"
        "class Lin(nn.Linear):\n"
        "    def extra_repr(self):\n"
        "        return f'in={self.in_features}, out={self.out_features}, scratch'\n"
        "m = Scratch()\n"
        "opt = torch.optim.SGD(m.parameters(), lr=0.1)\n"
        "loss = m(torch.ones(4, 3)).sum()\n"
        "loss.backward()\n"
        "opt.step()\n"
        "print(m.W, len(m.parameters()))\n"
        "net = nn.Sequential(Lin(2, 3), nn.ReLU(), Lin(3, 1))\n"
        "print(net)\n"
        "print(str(net[0]), repr(net[2]))\n"
    )


@pytest.mark.parametrize(("body", "says"), [
    ("        return 'x' * 20_000\n", "extra_repr"),
    ("        return 5\n", "str"),
])
def test_extra_repr_must_be_a_short_str(body, says):
    _, _, failure = _run(
        "import torch\nfrom torch import nn\n"
        "class Lin(nn.Linear):\n    def extra_repr(self):\n" + body +
        "print(Lin(2, 2))\n"
    )
    assert failure is not None
    assert failure.error.type in (*REFUSALS, "TypeError")
    assert says in failure.error.message


def test_a_module_tree_of_long_descriptions_is_sized_before_its_text_is_built():
    _refused(
        "import torch\nfrom torch import nn\n"
        "s = 'x' * 9_999\n"
        "class Lin(nn.Module):\n    def extra_repr(self):\n        return s\n"
        "net = nn.ModuleList([Lin() for _ in range(2_000)])\n"
        "print(net)\n", "max_str_length",
    )


def test_parameters_override_cannot_feed_the_optimizer_other_objects():
    _, _, failure = _run(
        "import torch\nimport numpy as np\nfrom torch import nn\n"
        "class M(nn.Module):\n    def parameters(self):\n        return [np.ndarray]\n"
        "opt = torch.optim.SGD(M().parameters(), lr=0.1)\n"
    )
    assert failure is not None
    assert failure.error.type in (*REFUSALS, "TypeError")


def test_capture_does_not_run_an_overridden_parameters():
    session, results, failure = _run(
        "import torch\nfrom torch import nn\n"
        "calls = []\n"
        "class M(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.fc = nn.Linear(2, 2)\n"
        "    def parameters(self):\n"
        "        calls.append(1)\n"
        "        return [self.fc.weight]\n"
        "    def forward(self, x):\n"
        "        return self.fc(x)\n"
        "m = M()\n"
        "y = m(torch.ones(1, 2)).sum()\n"
        "y.backward()\n"
        "n = len(calls)\n"
    )
    assert failure is None, failure and failure.error
    assert session.globals["n"] == 0


# --- torch.jit: importable, compiling refused where it is called ---------------------------

def test_torch_jit_imports_and_eager_queries_match_python():
    _same_as_python(
        "import torch\n"
        "from torch.jit import script, trace\n"
        "from torch.jit import is_scripting, is_tracing\n"
        "print(is_scripting(), is_tracing(), torch.ones(2))\n"
    )


@pytest.mark.parametrize("call", [
    "script(f)", "trace(f, (torch.ones(1),))", "torch.jit.script(f)",
])
def test_torch_jit_compiling_is_refused_where_it_is_called(call):
    _, _, failure = _run(
        "import torch\nfrom torch.jit import script, trace\n"
        "def f(x):\n    return x + 1\n" + f"g = {call}\n"
    )
    assert failure is not None and failure.error.type in REFUSALS, failure and failure.error
    assert failure.line == 5


# --- the script's own special methods, read as attributes ----------------------------------

def test_a_script_class_calls_its_own_special_methods_as_python_does():
    _same_as_python(
        "class Vocab:\n"
        "    def __init__(self):\n"
        "        self.d = {'a': 1}\n"
        "    def __getitem__(self, t):\n"
        "        if not isinstance(t, (list, tuple)):\n"
        "            return self.d.get(t, 0)\n"
        "        return [self.__getitem__(x) for x in t]\n"
        "    def __len__(self):\n"
        "        return len(self.d)\n"
        "    def __call__(self, x):\n"
        "        return x + 1\n"
        "v = Vocab()\n"
        "print(v[['a', 'b']], v.__len__(), v.__call__(1), v(2), list(map(v.__getitem__, ['a'])))\n"
    )


@pytest.mark.parametrize("source", [
    "x = [1]\ny = x.__getitem__(0)\n",
    "import torch\nm = torch.nn.Linear(1, 1)\nf = m.__call__\n",
    "class A:\n    pass\nf = A().__len__\n",
    "class V:\n    def __len__(self):\n        return 1\nf = V.__len__\n",
    "class V:\n    def __len__(self):\n        return 1\nv = V()\nv.__len__ = print\n",
    "class V:\n    def __len__(self):\n        return 1\nf = V().__len__.__self__\n",
    "class V:\n    def __len__(self):\n        return 1\nf = getattr(V(), '__len__')\n",
    "class V:\n    def __len__(self):\n        return 1\nf = V().__init__\n",
    "import torch\nclass M(torch.nn.Module):\n    pass\nf = M().__call__\n",
    "class D(dict):\n    pass\nf = D().__getitem__\n",
])
def test_special_methods_stay_refused_everywhere_else(source):
    _, _, failure = _run(source)
    assert failure is not None, source
    assert failure.error.type in (*REFUSALS, "AttributeError"), failure.error


# --- unicodedata ---------------------------------------------------------------------------

def test_unicodedata_as_the_chatbot_tutorial_uses_it_matches_python():
    _same_as_python(
        "import unicodedata\n"
        "def unicode_to_ascii(s):\n"
        "    return ''.join(c for c in unicodedata.normalize('NFD', s)\n"
        "                   if unicodedata.category(c) != 'Mn')\n"
        "print(unicode_to_ascii('Ça va? Où êtes-vous, Müller'), unicodedata.name('é'))\n"
    )


def test_unicodedata_normalize_is_sized_before_it_is_built():
    _refused("import unicodedata\ns = unicodedata.normalize('NFKD', '\\ufdfa' * 1_000_000)\n",
             "max_sequence_length")
