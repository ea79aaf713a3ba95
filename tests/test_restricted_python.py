"""Restricted mode runs the Python shared scripts are written in (issue 21).

Each construct a script may now use has two kinds of tests here:

* fidelity: the same snippet through ``Session`` (restricted mode) and through plain
  ``exec`` prints the same text (addresses masked) -- never a hand-written value;
* adversarial: what a hostile shared script would try through that construct (reach
  builtins, ``__globals__``, frames, ``object.__subclasses__``, files, processes, real
  addresses; run unbounded C loops; smuggle a refused callable to library code) ends
  in a clean refusal or an ordinary Python error, the interpreter alive and nothing
  written.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import sys
import warnings

import numpy as np
import pytest
import torch

from gradviz.core.guards import Limits
from gradviz.core.session import Session

REFUSALS = ("SandboxError", "LimitExceeded", "ScriptSyntaxError")
_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")


def _restricted(source: str, limits: Limits | None = None):
    session = Session(source, limits=limits or Limits(max_statement_seconds=20))
    assert session.parse_error is None, session.parse_error
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = session.run_to_end(keep_going=False)
    failed = [r for r in results if not r.ok]
    return session, "".join(r.output for r in results), (failed[0] if failed else None)


def _plain(source: str) -> str:
    torch.manual_seed(0)
    np.random.seed(0)
    out = io.StringIO()
    namespace: dict = {"__name__": "__main__", "torch": torch}
    argv = sys.argv
    sys.argv = ["script.py"]  # what a script run as `python3 script.py` sees
    with contextlib.redirect_stdout(out), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            exec(compile(source, "<plain>", "exec"), namespace)  # noqa: S102 - trusted test input
        finally:
            sys.argv = argv
    return out.getvalue()


def _same_as_python(source: str) -> object:
    session, output, failure = _restricted(source)
    assert failure is None, (failure.line, failure.error.type, failure.error.message)
    assert _ADDRESS.sub("0x?", output) == _ADDRESS.sub("0x?", _plain(source))
    return session


def _refused(source: str, also: tuple[str, ...] = (), tmp_path=None):
    """The first failing statement of ``source`` is a refusal (or one of ``also``)."""
    session, _, failure = _restricted(source)
    assert failure is not None, f"not refused:\n{source}"
    assert failure.error.type in REFUSALS + also, (failure.error.type, failure.error.message)
    # the interpreter is alive: a fresh statement still runs
    after = Session("x = 1 + 1\nprint(x)")
    assert after.run_to_end()[-1].output == "2\n"
    return session, failure


# --- fidelity: what the seed lessons and real scripts write --------------------------

FIDELITY = {
    "future-and-docstrings": (
        "from __future__ import annotations, print_function, division\n"
        "'''A module docstring.'''\n"
        "x = torch.ones(2, requires_grad=True)\n"
        "'''a note between statements'''\n"
        "print((x * 2).sum())\n"
    ),
    "time": (
        "import time\n"
        "t0 = time.perf_counter()\n"
        "t1 = time.time()\n"
        "time.sleep(0.01)\n"
        "print(time.perf_counter() >= t0, time.time() >= t1, time.monotonic() > 0)\n"
    ),
    "collections": (
        "import collections\n"
        "from collections import namedtuple, deque, Counter, defaultdict, OrderedDict\n"
        "P = namedtuple('P', ['x', 'y'], defaults=[0])\n"
        "p = P(1)\n"
        "print(p, p.x, p.y, p._asdict(), type(p), P._make([3, 4]))\n"
        "q = p._replace(x=5)\n"
        "print(q == P(5, 0), P._fields)\n"
        "d = deque([1, 2, 3], maxlen=3)\n"
        "d.append(4); d.appendleft(0); d.rotate(1)\n"
        "print(d, d.popleft(), d.maxlen)\n"
        "c = Counter('abracadabra')\n"
        "print(c.most_common(2), c['a'], sorted(c))\n"
        "dd = defaultdict(list)\n"
        "dd['k'].append(1)\n"
        "di = defaultdict(int)\n"
        "di['n'] += 3\n"
        "dl = defaultdict(lambda: 7)\n"
        "print(dd, di, dl['z'])\n"
        "od = OrderedDict(a=1, b=2)\n"
        "od.move_to_end('a')\n"
        "print(od, list(od))\n"
        "Transition = collections.namedtuple('Transition', ('state', 'action'))\n"
        "t = Transition(torch.ones(2), 1)\n"
        "print(t.state.sum(), t.action)\n"
    ),
    "functools": (
        "import functools\n"
        "from functools import partial, reduce\n"
        "def f(a, b, c=1):\n"
        "    return a * 100 + b * 10 + c\n"
        "g = partial(f, 1, c=3)\n"
        "print(g(2), reduce(lambda a, b: a + b, [1, 2, 3]), reduce(max, [3, 9, 2], 0))\n"
        "h = partial(torch.sum, dim=0)\n"
        "print(h(torch.ones(2, 3)))\n"
        "def deco(fn):\n"
        "    @functools.wraps(fn)\n"
        "    def inner(*a):\n"
        "        return fn(*a) + 1\n"
        "    return inner\n"
        "@deco\n"
        "def k(x):\n"
        "    return x\n"
        "print(k(1), k.__name__)\n"
        "x = torch.ones(3, requires_grad=True)\n"
        "x.register_hook(partial(torch.mul, other=2.0))\n"
        "(x * 3).sum().backward()\n"
        "print(x.grad)\n"
    ),
    "itertools": (
        "import itertools\n"
        "from itertools import count\n"
        "print(list(itertools.islice(count(5), 3)), list(itertools.chain([1], (2, 3))))\n"
        "print(list(itertools.chain.from_iterable([[1, 2], [3]])))\n"
        "print(list(itertools.product('ab', repeat=2)), list(itertools.combinations(range(4), 2)))\n"
        "print(list(itertools.permutations([1, 2, 3], 2)), list(itertools.accumulate([1, 2, 3])))\n"
        "print([(k, list(g)) for k, g in itertools.groupby('aabbc')])\n"
        "print(list(itertools.zip_longest([1, 2], 'a', fillvalue=0)), list(itertools.repeat(1, 3)))\n"
        "print(list(itertools.starmap(lambda a, b: a * b, [(1, 2), (3, 4)])))\n"
        "for i in count():\n"
        "    if i > 3:\n"
        "        break\n"
        "print(i, sum(itertools.islice(itertools.cycle([1, 2]), 5)))\n"
    ),
    "copy": (
        "import copy\n"
        "net = torch.nn.Linear(2, 2)\n"
        "target = copy.deepcopy(net)\n"
        "print(target.weight.equal(net.weight), target.weight is net.weight)\n"
        "x = torch.ones(2, requires_grad=True)\n"
        "box = {'a': [x, x], 'n': 3}\n"
        "box2 = copy.deepcopy(box)\n"
        "print(box2['a'][0] is box2['a'][1], box2['a'][0] is x, box2['a'][0].requires_grad)\n"
        "sh = copy.copy(box)\n"
        "print(sh['a'] is box['a'])\n"
        "def f(v):\n"
        "    return v\n"
        "print(copy.deepcopy(f) is f, copy.deepcopy(len) is len)\n"
        "class Agent:\n"
        "    def __init__(self):\n"
        "        self.w = torch.zeros(2)\n"
        "a = Agent()\n"
        "b = copy.deepcopy(a)\n"
        "b.w.add_(1)\n"
        "print(a.w, b.w)\n"
    ),
    "dataclass-typing": (
        "from dataclasses import dataclass, field\n"
        "import dataclasses\n"
        "from typing import List, Optional, Tuple\n"
        "@dataclass\n"
        "class GPTConfig:\n"
        "    block_size: int = 8\n"
        "    n_layer: int = 2\n"
        "    bias: bool = True\n"
        "    names: List[str] = field(default_factory=list)\n"
        "    extra: Optional[Tuple[int, int]] = None\n"
        "c = GPTConfig(n_layer=4)\n"
        "c.block_size = 16\n"
        "print(c, c == GPTConfig(16, 4), GPTConfig.block_size)\n"
        "@dataclasses.dataclass(frozen=True)\n"
        "class Frozen:\n"
        "    a: int\n"
        "    b: float = 0.5\n"
        "    def total(self):\n"
        "        return self.a + self.b\n"
        "fr = Frozen(1)\n"
        "print(fr, fr.total(), dataclasses.asdict(fr))\n"
        "@dataclass\n"
        "class Post:\n"
        "    n: int = 1\n"
        "    def __post_init__(self):\n"
        "        self.sq = self.n * self.n\n"
        "print(Post(3).sq)\n"
    ),
    "types-argparse": (
        "import types\n"
        "import argparse\n"
        "cfg = types.SimpleNamespace(lr=0.1, zeros=torch.zeros, f=lambda v: v + 1)\n"
        "cfg.epochs = 3\n"
        "print(cfg.lr, cfg.zeros(2), cfg.f(1), cfg.epochs, vars(cfg)['lr'])\n"
        "parser = argparse.ArgumentParser(description='demo',\n"
        "                                 formatter_class=argparse.ArgumentDefaultsHelpFormatter)\n"
        "parser.add_argument('--batch-size', type=int, default=8, metavar='N', help='batch (%(default)s)')\n"
        "parser.add_argument('--lr', type=float, default=1.0)\n"
        "parser.add_argument('--no-cuda', action='store_true', default=False)\n"
        "parser.add_argument('--layers', nargs='+', type=int, default=[1, 2])\n"
        "group = parser.add_argument_group('model')\n"
        "group.add_argument('--model', choices=['a', 'b'], default='a')\n"
        "def str2bool(s):\n"
        "    return s.lower() in ('yes', 'true', '1')\n"
        "parser.add_argument('--flag', type=str2bool, default=True)\n"
        "args = parser.parse_args()\n"
        "print(args, args.batch_size, vars(args)['lr'])\n"
        "args2 = parser.parse_args(['--lr', '0.5', '--flag', 'no', '--layers', '3', '4'])\n"
        "print(args2.lr, args2.flag, args2.layers)\n"
        "args3, rest = parser.parse_known_args([])\n"
        "args3.cuda = not args3.no_cuda and torch.cuda.is_available()\n"
        "print(args3.cuda, rest)\n"
    ),
    "inspect-d2l": (
        "import inspect\n"
        "class HyperParameters:\n"
        "    def save_hyperparameters(self, ignore=[]):\n"
        "        frame = inspect.currentframe().f_back\n"
        "        _, _, _, local_vars = inspect.getargvalues(frame)\n"
        "        self.hparams = {k: v for k, v in local_vars.items()\n"
        "                        if k not in set(ignore + ['self']) and not k.startswith('_')}\n"
        "        for k, v in self.hparams.items():\n"
        "            setattr(self, k, v)\n"
        "class Board(HyperParameters):\n"
        "    def __init__(self, xlabel=None, lr=0.1, sizes=(2, 3)):\n"
        "        self.save_hyperparameters()\n"
        "b = Board(xlabel='epoch')\n"
        "print(b.xlabel, b.lr, b.sizes, sorted(b.hparams))\n"
        "print('lr' in inspect.signature(torch.optim.SGD).parameters)\n"
    ),
    "script-classes": (
        "class Linear(object):\n"
        "    '''makemore's layer: a plain class with __call__'''\n"
        "    gravity, mass = 9.8, 1.0\n"
        "    class spec:\n"
        "        reward_threshold = 475.0\n"
        "    def __init__(self, fan_in, fan_out):\n"
        "        self.weight = torch.ones(fan_in, fan_out) / fan_in ** 0.5\n"
        "        self._cache = None\n"
        "    def __call__(self, x):\n"
        "        self._cache = self._mul(x)\n"
        "        return self._cache\n"
        "    def _mul(self, x):\n"
        "        return x @ self.weight\n"
        "def _helper(n):\n"
        "    return n * 2\n"
        "layer = Linear(3, 2)\n"
        "print(layer(torch.ones(1, 3)), layer._cache.shape, _helper(4))\n"
        "print(Linear.gravity, layer.mass, layer.spec.reward_threshold, Linear.spec.reward_threshold)\n"
        "print(type(layer), layer.__class__.__name__, type(layer) is Linear)\n"
        "layers = [layer, Linear(2, 2)]\n"
        "print(sum(p.numel() for l in layers for p in [l.weight]))\n"
        "x = torch.ones(3, requires_grad=True)\n"
        "class Scale:\n"
        "    def __call__(self, g):\n"
        "        return g * 3\n"
        "x.register_hook(Scale())\n"
        "x.sum().backward()\n"
        "print(x.grad)\n"
        "class Net(torch.nn.Module):\n"
        "    def __init__(self):\n"
        "        super(Net, self).__init__()\n"
        "        self.fc = torch.nn.Linear(2, 2)\n"
        "        self._scale = 2.0\n"
        "        self.apply(self._init_weights)\n"
        "    def _init_weights(self, m):\n"
        "        if isinstance(m, torch.nn.Linear):\n"
        "            torch.nn.init.ones_(m.weight)\n"
        "    def forward(self, x):\n"
        "        return self.fc(x) * self._scale\n"
        "net = Net()\n"
        "print(net(torch.ones(1, 2)), net._scale)\n"
        "print(net.__class__.__name__)\n"
    ),
    "errors-sort-builtins": (
        "def check(v):\n"
        "    try:\n"
        "        return int(v)\n"
        "    except ValueError as err:\n"
        "        raise RuntimeError('bad value') from err\n"
        "try:\n"
        "    check('x')\n"
        "except RuntimeError as e:\n"
        "    print('caught', e)\n"
        "try:\n"
        "    raise KeyError('k') from None\n"
        "except KeyError as e:\n"
        "    print('caught', e)\n"
        "words = ['ccc', 'a', 'bb']\n"
        "words.sort(key=lambda w: len(w))\n"
        "words.sort(key=len, reverse=True)\n"
        "print(words)\n"
        "a = torch.ones(2)\n"
        "id_0 = id(a)\n"
        "a.add_(1)\n"
        "b = a + 1\n"
        "print(id(a) == id_0, id(b) == id_0, type(id_0))\n"
        "print(type(a), type(1.0), type([]), type(print) is type(len), type(torch))\n"
        "print(getattr(a, 'shape'), hasattr(a, 'grad'), hasattr(a, 'nonexistent'), getattr(a, 'nope', 5))\n"
        "class C:\n"
        "    pass\n"
        "c = C()\n"
        "setattr(c, 'v', 3)\n"
        "print(c.v, hasattr(c, 'w'), getattr(c, 'v'))\n"
        "delattr(c, 'v')\n"
        "print(hasattr(c, 'v'), pow(2, 10), pow(2, 10, 7), format(3.14159, '.2f'), slice(1, 3))\n"
        "try:\n"
        "    print('running')\n"
        "except KeyboardInterrupt:\n"
        "    print('stopped')\n"
    ),
    "numpy": (
        "import numpy as np\n"
        "np.random.seed(0)\n"
        "a = np.random.randn(3, 2)\n"
        "b = np.random.normal(0, 1, size=(2, 2))\n"
        "print(np.dot(a, b).shape, np.where(a > 0, 1, 0).sum() >= 0)\n"
        "print(np.vstack([a, a]).shape, np.hstack([a, a]).shape, np.concatenate([a, a]).shape)\n"
        "print(np.finfo(np.float32).eps, np.random.randint(0, 10, size=3).shape)\n"
        "rng = np.random.default_rng(0)\n"
        "print(rng.integers(0, 5, size=4), rng.random(2).shape)\n"
        "rs = np.random.RandomState(1)\n"
        "print(rs.rand(2).shape, rs.choice(5, 3).shape)\n"
    ),
    "torch-extras": (
        "g = torch.Generator().manual_seed(42)\n"
        "print(torch.randn(3, generator=g), g.initial_seed())\n"
        "x = torch.randn(4, 4)\n"
        "with torch.autocast(device_type='cpu', dtype=torch.bfloat16):\n"
        "    y = torch.mm(x, x)\n"
        "print(y.dtype)\n"
        "class M(torch.nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.fc = torch.nn.Linear(4, 2)\n"
        "    @torch.autocast(device_type='cpu', dtype=torch.bfloat16)\n"
        "    def forward(self, v):\n"
        "        return self.fc(v)\n"
        "print(M()(x).dtype)\n"
        "import contextlib\n"
        "with contextlib.nullcontext():\n"
        "    z = x * 2\n"
        "print(z.shape)\n"
        "import os, sys\n"
        "print(os.path.join('data', 'names.txt'), sys.version_info >= (3, 8))\n"
    ),
    "training-loop-helpers": (
        "from torch.utils.data.dataloader import DataLoader\n"
        "from torch.utils.data import TensorDataset, RandomSampler\n"
        "import numpy as np\n"
        "torch.manual_seed(0)\n"
        "ds = TensorDataset(torch.arange(10.0))\n"
        "sampler = RandomSampler(ds, replacement=True, num_samples=int(1e10))\n"
        "loader = DataLoader(ds, sampler=sampler, batch_size=4)\n"
        "batch = next(iter(loader))\n"
        "print(batch)\n"
        "model = torch.nn.Linear(2, 1)\n"
        "opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "scaler = torch.amp.GradScaler('cpu', enabled=False)\n"
        "loss = model(torch.ones(3, 2)).sum()\n"
        "scaler.scale(loss).backward()\n"
        "scaler.step(opt)\n"
        "scaler.update()\n"
        "print(model.weight, scaler.is_enabled())\n"
        "tokens = np.arange(5).astype(np.uint16)\n"
        "print(tokens.dtype, tokens.sum())\n"
        "x = torch.ones(2, requires_grad=True)\n"
        "with torch.autograd.detect_anomaly():\n"
        "    (x * 2).sum().backward()\n"
        "with torch.autograd.set_detect_anomaly(True):\n"
        "    (x * 3).sum().backward()\n"
        "print(x.grad)\n"
    ),
    "module-train-method": (
        "class Net(torch.nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.fc = torch.nn.Linear(2, 1)\n"
        "        self.opt = torch.optim.SGD(self.fc.parameters(), lr=0.1)\n"
        "    def train(self, x, y):\n"
        "        loss = ((self.fc(x) - y) ** 2).mean()\n"
        "        self.opt.zero_grad()\n"
        "        loss.backward()\n"
        "        self.opt.step()\n"
        "        return loss.item()\n"
        "net = Net()\n"
        "torch.manual_seed(0)\n"
        "print(net.train(torch.ones(4, 2), torch.zeros(4, 1)))\n"
        "print(net.training)\n"
    ),
    "forward-mode-and-del": (
        "import torch.autograd.forward_ad as fwAD\n"
        "import functools\n"
        "import functorch as ft\n"
        "class Fn(torch.autograd.Function):\n"
        "    @staticmethod\n"
        "    def forward(ctx, foo):\n"
        "        result = torch.exp(foo)\n"
        "        ctx.result = result\n"
        "        return result\n"
        "    @staticmethod\n"
        "    def jvp(ctx, gI):\n"
        "        gO = gI * ctx.result\n"
        "        del ctx.result\n"
        "        return gO\n"
        "primal = torch.randn(3, dtype=torch.double)\n"
        "tangent = torch.randn(3, dtype=torch.double)\n"
        "with fwAD.dual_level():\n"
        "    dual_out = Fn.apply(fwAD.make_dual(primal, tangent))\n"
        "    jvp_out = fwAD.unpack_dual(dual_out).tangent\n"
        "print(torch.allclose(jvp_out, tangent * primal.exp()))\n"
        "def f(x, y):\n"
        "    return x * y\n"
        "out, tan = ft.jvp(functools.partial(f, y=torch.ones(3)), (primal,), (tangent,))\n"
        "print(torch.allclose(tan, tangent))\n"
        "m = torch.nn.Linear(2, 2)\n"
        "del m.bias\n"
        "m.bias = torch.zeros(2)\n"
        "print(m(torch.ones(1, 2)).shape, dict(m.named_parameters()).keys())\n"
        "class Box:\n"
        "    pass\n"
        "b = Box()\n"
        "b.v = 1\n"
        "del b.v\n"
        "print(hasattr(b, 'v'))\n"
    ),
}


@pytest.mark.parametrize("name", list(FIDELITY))
def test_restricted_prints_what_python_prints(name):
    _same_as_python(FIDELITY[name])


def test_id_is_stable_distinct_and_not_the_address():
    session, _, failure = _restricted(
        "a = torch.ones(2)\nb = torch.ones(2)\nia = id(a)\nib = id(b)\nia2 = id(a)\n"
    )
    assert failure is None
    ns = session.globals
    assert ns["ia"] == ns["ia2"] and ns["ia"] != ns["ib"]
    assert ns["ia"] != id(ns["a"]) and ns["ib"] != id(ns["b"])
    # not a fixed offset either: differences of ids are not differences of addresses
    assert ns["ia"] - ns["ib"] != id(ns["a"]) - id(ns["b"])


def test_hasattr_of_a_name_gradviz_leaves_out_of_a_module_is_false():
    session, _, failure = _restricted(
        "a = hasattr(torch, 'compile')\nb = hasattr(torch.nn.functional, 'relu')\n"
        "c = hasattr(torch, 'load')\n"
    )
    assert failure is None
    assert session.globals["a"] is False and session.globals["b"] is True
    assert session.globals["c"] is False
    _refused("hasattr(torch, '__builtins__')\n")


def test_argparse_reads_no_command_line(monkeypatch):
    monkeypatch.setattr(sys, "argv", ["gradviz", "--lr", "9", "--secret"])
    session, _, failure = _restricted(
        "import argparse\np = argparse.ArgumentParser()\np.add_argument('--lr', type=float, default=1.0)\n"
        "args = p.parse_args()\n"
    )
    assert failure is None
    assert session.globals["args"].lr == 1.0


def test_argparse_help_and_errors_print_to_the_script_and_stop_the_statement():
    session, output, failure = _restricted(
        "import argparse\np = argparse.ArgumentParser(prog='train')\np.add_argument('--lr', type=float)\n"
        "p.parse_args(['-h'])\n"
    )
    assert failure is not None and failure.error.type == "SandboxError"
    assert "--lr" in output and "usage: train" in output
    session, output, failure = _restricted(
        "import argparse\np = argparse.ArgumentParser(prog='train')\np.add_argument('--lr', type=float)\n"
        "p.parse_args(['--lr', 'abc'])\n"
    )
    assert failure.error.type == "SandboxError" and "invalid float value" in failure.error.message


# --- adversarial ---------------------------------------------------------------------

ATTACKS = {
    # namedtuple's generated code: no module=, no dunder fields, no _source/_make globals
    "namedtuple-module": "import collections\nP = collections.namedtuple('P', 'x', module='os')\n",
    "namedtuple-dunder-field": "import collections\nP = collections.namedtuple('P', ['__class__'])\n",
    "namedtuple-globals": "import collections\nP = collections.namedtuple('P', 'x')\ng = P._make.__globals__\n",
    "namedtuple-new-globals": "import collections\nP = collections.namedtuple('P', 'x')\ng = P.__new__\n",
    "namedtuple-defaults-type": "import collections\nP = collections.namedtuple('P', 'x', defaults=[type(print)])\n",
    "namedtuple-private-lib": "import collections\nP = collections.namedtuple('P', 'x')\nd = P(1)._field_defaults\n",
    # functools: a partial or reduce of what the script may not call stays uncallable
    "partial-ndarray": "import functools\nf = functools.partial(np.ndarray, (2,), dtype=object)\nf()\n",
    "partial-type-of-builtin": "import functools\nf = functools.partial(type(print))\nf()\n",
    "partial-as-hook": (
        "import functools\nx = torch.ones(2, requires_grad=True)\n"
        "x.register_hook(functools.partial(np.ndarray, (2,)))\nx.sum().backward()\n"
    ),
    "partial-str-format": "import functools\nf = functools.partial('{0.__class__}'.format)\nf(1)\n",
    "partial-func-attr": "import functools\nf = functools.partial(print)\ng = f.func.__self__\n",
    "reduce-refused": "import functools\nfunctools.reduce(type(print), [1, 2])\n",
    "wraps-builtin": "import functools\n@functools.wraps(print)\ndef f():\n    pass\nf.__wrapped__\n",
    # copy: no memo (real ids), gradviz objects copy as themselves, no pickling hooks
    "deepcopy-memo": "import copy\ncopy.deepcopy([1], {})\n",
    "deepcopy-grad-fn": "import copy\ny = torch.ones(1, requires_grad=True) * 2\ncopy.deepcopy(y.grad_fn)\n",
    "deepcopy-nested": "import copy\na = []\nfor i in range(200000):\n    a = [a]\ncopy.deepcopy(a)\n",
    "deepcopy-reduce": "import copy\nx = torch.ones(1)\nx.__reduce_ex__(4)\n",
    "copy-module-escape": "import copy\nm = copy.deepcopy(torch)\nm.members\n",
    "copy-safemodule-escape": "import copy\nimport math\nm = copy.copy(math)\n",
    # dataclasses: factories the generated __init__ calls are the script's or containers
    "field-factory-print": "from dataclasses import dataclass, field\nf = field(default_factory=print)\n",
    "field-factory-type": "from dataclasses import field\nf = field(default_factory=type(print))\n",
    "field-factory-partial": (
        "from dataclasses import dataclass, field\nimport functools\n"
        "@dataclass\nclass C:\n    a: object = field(default_factory=functools.partial(np.ndarray, (2,)))\n"
        "C()\n"
    ),
    "field-metadata": "from dataclasses import field\nf = field(default=1, metadata={'a': 1})\n",
    "dataclass-slots": "from dataclasses import dataclass\n@dataclass(slots=True)\nclass C:\n    a: int = 1\n",
    "dataclass-module": "from dataclasses import dataclass\n@dataclass\nclass M(torch.nn.Module):\n    a: int = 1\n",
    "dataclass-function": "from dataclasses import dataclass\ndef f():\n    pass\ndataclass(f)\n",
    "dataclass-init-globals": (
        "from dataclasses import dataclass\n@dataclass\nclass C:\n    a: int = 1\ng = C.__init__.__globals__\n"
    ),
    "class-decorator-builtin": "@print\nclass C:\n    pass\n",
    "autograd-function-decorator": (
        "from dataclasses import dataclass\n@dataclass\nclass F(torch.autograd.Function):\n"
        "    @staticmethod\n    def forward(ctx, x):\n        return x\n"
        "    @staticmethod\n    def backward(ctx, g):\n        return g\n"
    ),
    # itertools: every iterator ticks, combinatorics are sized before they are built
    "count-into-list": "import itertools\nlist(itertools.count())\n",
    "repeat-into-sum": "import itertools\nsum(itertools.repeat(1))\n",
    "cycle-into-sorted": "import itertools\nsorted(itertools.cycle([1, 2]))\n",
    "islice-skip-forever": "import itertools\nlist(itertools.islice(itertools.count(), 10**18, None))\n",
    "product-repeat": "import itertools\nitertools.product(range(10), repeat=10**9)\n",
    "cwr-huge-r": "import itertools\nitertools.combinations_with_replacement([1], 10**9)\n",
    "tee-many": "import itertools\nitertools.tee([1], 10**9)\n",
    "starmap-type": "import itertools\nlist(itertools.starmap(type(print), [(1,)]))\n",
    "accumulate-ndarray": "import itertools\nlist(itertools.accumulate([1, 2], np.ndarray))\n",
    "groupby-print-key": "import itertools\nlist(itertools.groupby([1], print.__self__))\n",
    "deque-of-count": "import collections, itertools\ncollections.deque(itertools.count())\n",
    "deque-multiply": "import collections\nd = collections.deque([1]) * 10**9\n",
    "counter-elements": "import collections\nlist(collections.Counter(a=10**12).elements())\n",
    "defaultdict-type": "import collections\nd = collections.defaultdict(type(print))\n",
    "defaultdict-ndarray": "import collections\nd = collections.defaultdict(np.ndarray)\n",
    "defaultdict-linear": "import collections\nd = collections.defaultdict(torch.nn.Linear)\n",
    # argparse: no files, no action classes, no exits, no private destinations
    "argparse-fromfile": "import argparse\np = argparse.ArgumentParser(fromfile_prefix_chars='@')\n",
    "argparse-type-print": "import argparse\np = argparse.ArgumentParser()\np.add_argument('--a', type=print)\n",
    "argparse-type-ndarray": "import argparse\np = argparse.ArgumentParser()\np.add_argument('--a', type=np.ndarray)\n",
    "argparse-type-linear": "import argparse\np = argparse.ArgumentParser()\np.add_argument('--a', type=torch.nn.Linear)\n",
    "argparse-action-class": (
        "import argparse\nclass A:\n    pass\np = argparse.ArgumentParser()\np.add_argument('--a', action=A)\n"
    ),
    "argparse-dunder-dest": "import argparse\np = argparse.ArgumentParser()\np.add_argument('--__class__')\n",
    "argparse-private-dest": "import argparse\np = argparse.ArgumentParser()\np.add_argument('--a', dest='_x')\n",
    "argparse-nargs": "import argparse\np = argparse.ArgumentParser()\np.add_argument('--a', nargs=10**9)\n",
    "argparse-help-width": (
        "import argparse\np = argparse.ArgumentParser()\np.add_argument('--a', help='%(default)999999999s')\n"
    ),
    "argparse-huge-choices": (
        "import argparse\np = argparse.ArgumentParser()\np.add_argument('--a', type=int, choices=range(10**9))\n"
        "p.parse_args(['--a', '-1'])\n"
    ),
    "argparse-choices-iterator": (
        "import argparse, itertools\np = argparse.ArgumentParser()\n"
        "p.add_argument('--a', choices=itertools.count())\n"
    ),
    "ctx-private": (
        "class F(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
        "        return ctx._forward_cls\n"
        "    @staticmethod\n    def backward(ctx, g):\n        return g\n"
        "F.apply(torch.ones(1, requires_grad=True))\n"
    ),
    "ctx-set-private": (
        "class F(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
        "        ctx._x = 1\n        return x\n"
        "    @staticmethod\n    def backward(ctx, g):\n        return g\n"
        "F.apply(torch.ones(1, requires_grad=True))\n"
    ),
    "module-override-named-parameters": (
        "class M(torch.nn.Module):\n    def named_parameters(self):\n        return print\n"
    ),
    "module-override-extra-repr-not-str": (
        "class M(torch.nn.Module):\n    def extra_repr(self):\n        return print\nprint(M())\n"
    ),
    "module-setattr-train-lib-class": "setattr(torch.nn.Linear, 'train', 1)\n",
    "argparse-exit": "import argparse\np = argparse.ArgumentParser()\np.exit(0)\n",
    "argparse-private": "import argparse\np = argparse.ArgumentParser()\np._gradviz\n",
    "argparse-actions": "import argparse\np = argparse.ArgumentParser()\np._actions\n",
    "argparse-namespace": "import argparse\np = argparse.ArgumentParser()\np.parse_args([], namespace=object())\n",
    "argparse-formatter": "import argparse\np = argparse.ArgumentParser(formatter_class=type(print))\n",
    "argparse-print-file": "import argparse\np = argparse.ArgumentParser()\np.print_help(file=1)\n",
    "argparse-filetype": "import argparse\nargparse.FileType('w')\n",
    # getattr/hasattr/setattr: the dot syntax's rules
    "getattr-class-mro": "getattr(getattr(torch.ones(1), '__class__'), '__mro__')\n",
    "getattr-subclasses": "getattr(object, '__subclasses__')()\n",
    "getattr-builtins": "getattr(torch, '__builtins__')\n",
    "getattr-globals": "def f():\n    pass\ngetattr(f, '__globals__')\n",
    "getattr-module-private": "m = torch.nn.Linear(1, 1)\ngetattr(m, '_forward_hooks')\n",
    "getattr-script-module-private": (
        "class M(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "    def peek(self):\n        return self._parameters\nM().peek()\n"
    ),
    "getattr-tensor-private": "getattr(torch.ones(1), '_base')\n",
    "setattr-module-private": "m = torch.nn.Linear(1, 1)\nsetattr(m, '_parameters', {})\n",
    "setattr-script-module-private": (
        "class M(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self._forward_hooks = {}\nM()\n"
    ),
    "setattr-class-dunder": "class C:\n    pass\nsetattr(C, '__getattr__', print)\n",
    "setattr-class-forward-lib": "class M(torch.nn.Module):\n    pass\nsetattr(M, 'state_dict', 1)\n",
    "setattr-dunder-class": "class C:\n    pass\nc = C()\nc.__class__ = int\n",
    "setattr-tensor-class": "x = torch.ones(1)\nsetattr(x, '__class__', torch.nn.Parameter)\n",
    "object-subclasses": "object.__subclasses__()\n",
    "object-call": "o = object()\n",
    "class-private-lib-base": "class L(torch.nn.Linear):\n    def peek(self):\n        return self._flat\nL(1, 1).peek()\n",
    "vars-module": "vars(torch.nn.Linear(1, 1))\n",
    "vars-tensor": "vars(torch.ones(1))\n",
    "delattr-lib": "delattr(torch.ones(1), 'grad')\n",
    "delattr-module-private": "m = torch.nn.Linear(1, 1)\ndelattr(m, '_parameters')\n",
    # SimpleNamespace, inspect frames, os and sys
    "namespace-type": "import types\nn = types.SimpleNamespace(f=type(print))\n",
    "namespace-dict": "import types\nn = types.SimpleNamespace(a=1)\nn.__dict__\n",
    "namespace-dunder-kw": "import types\nn = types.SimpleNamespace(**{'__class__': 1})\n",
    "frame-globals": "import inspect\ninspect.currentframe().f_globals\n",
    "frame-code": "import inspect\ninspect.currentframe().f_code\n",
    "frame-builtins": "import inspect\ndef f():\n    return inspect.currentframe().f_back.f_builtins\nf()\n",
    "getargvalues-real-frame": "import inspect\ninspect.getargvalues(1)\n",
    "signature-ndarray": "import inspect\ninspect.signature(np.ndarray)\n",
    "signature-param-default": (
        "import inspect\np = inspect.signature(torch.optim.SGD).parameters\np['lr'].default\n"
    ),
    "os-system": "import os\nos.system('touch pwned')\n",
    "os-environ": "import os\nos.environ\n",
    "os-path-exists": "import os\nos.path.exists('/')\n",
    "sys-modules": "import sys\nsys.modules\n",
    "sys-exit": "import sys\nsys.exit(0)\n",
    "time-sleep-long": "import time\ntime.sleep(10**6)\n",
    # builtins with sizes
    "pow-huge": "pow(2, 10**9)\n",
    "pow-mod-huge": "pow(2, 3, 2**100000)\n",
    "format-width": "format(1, '999999999')\n",
    "raise-from-print": "raise ValueError('x') from print\n",
    "raise-keyboard-interrupt": "raise KeyboardInterrupt\n",
    "generator-get-state": "g = torch.Generator()\ng.get_state()\n",
    "generator-set-state": "g = torch.Generator()\ng.set_state(torch.zeros(5056, dtype=torch.uint8))\n",
    "autocast-device": "with torch.autocast(device_type='mps'):\n    pass\n",
    "np-random-huge": "np.random.randint(0, 2, size=(10**6, 10**6))\n",
    "np-choice-huge": "np.random.choice(10**12, 3, replace=False)\n",
    "np-rng-huge": "np.random.default_rng(0).random((10**6, 10**6))\n",
    "np-outer-huge": "a = np.ones(10**5)\nnp.outer(a, a)\n",
    "np-vstack-many": "a = np.ones(10**7)\nnp.vstack([a] * 100)\n",
    "np-random-bitgen": "np.random.default_rng(0).bit_generator\n",
    "script-call-hook-of-refused": (
        "class H:\n    def __call__(self, g):\n        return np.ndarray((2,), dtype=object)\n"
        "x = torch.ones(2, requires_grad=True)\nx.register_hook(H())\nx.sum().backward()\n"
    ),
    "id-of-nothing": "id()\n",
    "globals-builtins": "globals()['__builtins__']\n",
    "globals-write": "globals()['torch'] = 1\ntorch.zeros(1).__class__.__mro__\n",
    # training-loop helpers: only their no-op or checked forms
    "grad-scaler-enabled": "s = torch.amp.GradScaler('cpu')\n",
    "grad-scaler-step-bad-grad": (
        "p = torch.nn.Parameter(torch.ones(2))\nopt = torch.optim.SGD([p], lr=0.1)\n"
        "p.grad = torch.ones(2)\np.grad.data = torch.ones(3)\n"
        "torch.amp.GradScaler('cpu', enabled=False).step(opt)\n"
    ),
    "grad-scaler-step-closure": (
        "p = torch.nn.Parameter(torch.ones(2))\nopt = torch.optim.SGD([p], lr=0.1)\n"
        "torch.amp.GradScaler('cpu', enabled=False).step(opt, print)\n"
    ),
    "grad-scaler-private": "s = torch.amp.GradScaler('cpu', enabled=False)\ns._scale\n",
    "del-ctx-api": (
        "class F(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
        "        del ctx.save_for_backward\n        return x\n"
        "    @staticmethod\n    def backward(ctx, g):\n        return g\n"
        "F.apply(torch.ones(1, requires_grad=True))\n"
    ),
    "del-tensor-grad": "x = torch.ones(1)\ndel x.grad\n",
    "del-module-private": "m = torch.nn.Linear(1, 1)\ndel m._parameters\n",
    "del-module-method": "m = torch.nn.Linear(1, 1)\ndel m.forward\n",
    "functorch-internal": "import functorch\nfunctorch._C\n",
    "sampler-other": (
        "from torch.utils.data import TensorDataset, DataLoader\nds = TensorDataset(torch.ones(3))\n"
        "DataLoader(ds, sampler=[0, 1, 2])\n"
    ),
    "sampler-generator-print": (
        "from torch.utils.data import TensorDataset, RandomSampler\nds = TensorDataset(torch.ones(3))\n"
        "RandomSampler(ds, generator=print)\n"
    ),
}

#: ordinary Python errors a construct may stop with (what plain Python raises too)
ORDINARY = ("TypeError", "ValueError", "AttributeError", "RecursionError", "NameError",
            "RuntimeError", "KeyError")


@pytest.mark.parametrize("name", list(ATTACKS))
def test_attack_is_refused_cleanly(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    source = "import numpy as np\n" + ATTACKS[name]
    _refused(source, also=ORDINARY)
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("name", ["count-into-list", "repeat-into-sum", "cycle-into-sorted",
                                  "islice-skip-forever", "deque-of-count", "time-sleep-long",
                                  "pow-huge", "product-repeat", "cwr-huge-r", "np-random-huge",
                                  "np-choice-huge"])
def test_unbounded_work_ends_in_a_limit_not_a_hang(name):
    _, failure = _refused("import numpy as np\n" + ATTACKS[name])
    assert failure.error.type in REFUSALS, failure.error


def test_private_names_of_library_objects_stay_refused():
    for source in (
        "x = torch.ones(1)\nx._grad\n",
        "m = torch.nn.Linear(1, 1)\nm._modules\n",
        "m = torch.nn.Linear(1, 1)\nm._parameters\n",
        "o = torch.optim.SGD([torch.ones(1, requires_grad=True)], lr=0.1)\no._zero_grad_profile_name\n",
        "a = np.ones(2)\na._x = 1\n",
    ):
        _refused("import numpy as np\n" + source, also=("AttributeError",))


def test_raise_from_keeps_no_cause():
    session, _, failure = _restricted(
        "try:\n    try:\n        1 / 0\n    except ZeroDivisionError as e:\n"
        "        raise ValueError('v') from e\nexcept ValueError as err:\n    caught = err\n"
    )
    assert failure is None
    caught = session.globals["caught"]
    assert caught.__cause__ is None and caught.__traceback__ is None


def test_script_frames_expose_copies_only():
    session, _, failure = _restricted(
        "import inspect\n"
        "def f(a):\n    fr = inspect.currentframe()\n    loc = fr.f_locals\n    loc['a'] = 99\n"
        "    return a, fr\n"
        "a, fr = f(1)\n"
        "back = fr.f_back\n"
    )
    assert failure is None
    assert session.globals["a"] == 1
    assert session.globals["back"] is not None


def test_an_error_raised_in_a_script_function_is_on_its_own_line():
    """As in Python's traceback (the deepest line of the script): also when the autograd
    engine called the function (a custom backward), with anomaly mode on or off."""
    source = (
        "class F(torch.autograd.Function):\n"
        "    @staticmethod\n"
        "    def forward(ctx, x):\n"
        "        return x.clone()\n"
        "    @staticmethod\n"
        "    def backward(ctx, g):\n"
        "        raise RuntimeError('boom')\n"
        "def helper(v):\n"
        "    return v + undefined_name\n"
        "x = torch.ones(2, requires_grad=True)\n"
        "y = F.apply(x).sum()\n"
    )
    for tail in ("y.backward()\n", "with torch.autograd.detect_anomaly():\n    y.backward()\n",
                 "z = helper(1)\n"):
        _, _, failure = _restricted(source + tail)
        assert failure.error.line == (9 if "helper" in tail else 7), failure.error


def test_refused_imports_list_only_the_main_module_names():
    _, _, failure = _restricted("import torch.utils.cpp_extension\n")
    assert "utils.data.dataloader" not in failure.error.message
    assert len(failure.error.message) < 400


# --- through the real, confined kernel -----------------------------------------------

KERNEL_ATTACKS = (
    "import itertools, copy, sys, argparse, functools, collections\n"
    "a = sorted(itertools.cycle([1, 2]))\n"
    "b = []\n"
    "for i in range(100000):\n"
    "    b = [b]\n"
    "c = copy.deepcopy(b)\n"
    "p = argparse.ArgumentParser()\n"
    "p.parse_args(['-h'])\n"
    "p.parse_args(['--nope'])\n"
    "sys.exit(0)\n"
    "f = functools.partial(np.ndarray, (2,), dtype=object)\n"
    "g = f()\n"
    "d = collections.deque(itertools.count())\n"
    "x = torch.ones(2, requires_grad=True)\n"
    "x.register_hook(f)\n"
    "x.sum().backward()\n"
    "print('alive', id(x) == id(x))\n"
)


def run_attacks_in_kernel(tmp_path, attacks: str) -> list[dict]:
    """``attacks`` (numpy imported first) through the real confined kernel,
    ``gradviz run --restricted --json --keep-going``: its statements' reports."""
    import json
    import subprocess

    script = tmp_path / "attacks.py"
    script.write_text("import numpy as np\n" + attacks)
    proc = subprocess.run(
        [sys.executable, "-m", "gradviz", "run", "--restricted", "--json", "--keep-going",
         str(script)],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )
    return json.loads(proc.stdout)["statements"]


def test_attacks_through_the_real_kernel_leave_it_alive(tmp_path):
    statements = run_attacks_in_kernel(tmp_path, KERNEL_ATTACKS)
    failed = [s for s in statements if not s["ok"]]
    # each attack stopped on its own line, as a refusal or an ordinary error; the last
    # statement still ran in the same kernel
    assert len(failed) >= 8, [(s.get("line"), s.get("error")) for s in statements]
    for s in failed:
        assert s["error"]["type"] in REFUSALS + ORDINARY, s["error"]
    assert statements[-1]["ok"] and "alive True" in statements[-1].get("output", ""), statements[-1]
    assert sorted(os.listdir(tmp_path)) == ["attacks.py"]


# --- the legacy typed constructors (torch.LongTensor(pad_list), pytorch's chatbot tutorial)


def test_legacy_typed_constructors_match_pytorch():
    _same_as_python(
        "a = torch.LongTensor([[1, 2], [3, 4]])\n"
        "print(a, a.dtype, a.shape)\n"
        "b = torch.FloatTensor(3)\n"
        "print(b.shape, b.dtype)\n"
        "c = torch.FloatTensor(torch.Size([2, 3]))\n"
        "print(c.shape)\n"
        "d = torch.BoolTensor([True, False])\n"
        "print(d, torch.ByteTensor([1, 255]), torch.DoubleTensor((0.5,)).dtype)\n"
        "print(torch.LongTensor().shape, torch.IntTensor([]).dtype)\n"
        "w = torch.nn.Parameter(torch.FloatTensor(4).uniform_())\n"
        "print(w.shape, w.requires_grad)\n"
    )


@pytest.mark.parametrize(
    "source",
    [
        "a = torch.LongTensor([[1, 2], [3]])",  # ragged
        "a = torch.LongTensor(-1)",
        "a = torch.LongTensor(['x'])",
        "a = torch.FloatTensor([1.0, None])",
    ],
)
def test_legacy_constructors_fail_as_pytorch_fails(source):
    with pytest.raises(Exception) as plain:  # noqa: B017 - whatever PyTorch raises
        _plain(source)
    _, _, failure = _restricted(source)
    assert failure is not None and failure.error.type == type(plain.value).__name__


@pytest.mark.parametrize(
    "source",
    [
        "a = torch.LongTensor(10**12)",  # sized by the op guard before anything is made
        "a = torch.FloatTensor(2**31, 2**31)",
        "a = torch.FloatTensor(4)\nb = torch.FloatTensor(a)",  # aliasing a tensor's memory
        "a = torch.FloatTensor(torch.ones(2).numpy())",  # or an array's
        "a = torch.LongTensor([1, 2], device='cpu')",  # no keywords
        "a = torch.LongTensor.__call__",  # the constructor is a function, nothing behind it
        "a = torch.LongTensor.__globals__",
        "a = torch.LongTensor([1] * 10**9)",  # the list is sized before it is built
    ],
)
def test_legacy_constructors_refuse_what_aliases_or_overflows(source):
    _, _, failure = _restricted(source, Limits(max_statement_seconds=20))
    assert failure is not None, source
    assert failure.error.type in REFUSALS + ("TypeError", "RuntimeError"), (
        failure.error.type, failure.error.message
    )
    after = Session("x = torch.LongTensor([7])\nprint(int(x))").run_to_end()
    assert after[-1].output == "7\n"
