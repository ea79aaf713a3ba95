"""Restricted mode, round 5 of issue 21: @property, enum, functools.lru_cache/cache,
optimizer state, torch.nn.utils.parametrize/parametrizations, TransformedDistribution,
argparse sub-commands, functorch's make_functional, @classmethod / @staticmethod
read on a script class, and functools.cached_property.

As in ``test_restricted_python``: each construct is checked against plain ``exec`` of
the same script (printed values, gradients, grad_fn names; failing lines and error
types), never against hand-written numbers; and each comes with what a hostile shared
script would try through it, which must end in a clean refusal or an ordinary Python
error with the interpreter alive.
"""

from __future__ import annotations

import os
import traceback

import pytest
import torch

from gradviz.core.guards import Limits
from gradviz.core.session import Session
from tests.test_restricted_python import (
    _ADDRESS,
    ORDINARY,
    REFUSALS,
    _plain,
    _refused,
    _restricted,
    _same_as_python,
    run_attacks_in_kernel,
)

# --- fidelity ---------------------------------------------------------------------

FIDELITY = {
    "property": (
        "class Temperature:\n"
        "    def __init__(self, c=0.0):\n"
        "        self._c = c\n"
        "    @property\n"
        "    def celsius(self):\n"
        "        return self._c\n"
        "    @celsius.setter\n"
        "    def celsius(self, value):\n"
        "        if value < -273.15:\n"
        "            raise ValueError('below absolute zero')\n"
        "        self._c = float(value)\n"
        "    @property\n"
        "    def fahrenheit(self):\n"
        "        return self._c * 9 / 5 + 32\n"
        "t = Temperature()\n"
        "t.celsius = 25\n"
        "print(t.celsius, t.fahrenheit, hasattr(t, 'celsius'), getattr(t, 'fahrenheit'))\n"
        "try:\n"
        "    t.celsius = -300\n"
        "except ValueError as e:\n"
        "    print('refused by the setter:', e)\n"
        "try:\n"
        "    t.fahrenheit = 1\n"
        "except AttributeError:\n"
        "    print('no setter')\n"
        "class Hot(Temperature):\n"
        "    @property\n"
        "    def celsius(self):\n"
        "        return super().celsius + 100\n"
        "print(Hot(1.0).celsius)\n"
        "class Scaled(torch.nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.fc = torch.nn.Linear(3, 2)\n"
        "        self._scale = 2.0\n"
        "    @property\n"
        "    def scale(self):\n"
        "        return self._scale\n"
        "    @scale.setter\n"
        "    def scale(self, v):\n"
        "        self._scale = v\n"
        "    @property\n"
        "    def out_features(self):\n"
        "        return self.fc.out_features\n"
        "    def forward(self, x):\n"
        "        return self.fc(x) * self.scale\n"
        "m = Scaled()\n"
        "m.scale = 3.0\n"
        "x = torch.randn(4, 3, requires_grad=True)\n"
        "y = m(x).sum()\n"
        "y.backward()\n"
        "print(m.scale, m.out_features, y.grad_fn.name(), x.grad, m.fc.weight.grad)\n"
    ),
    "enum": (
        "import enum\n"
        "from enum import Enum, IntEnum, auto\n"
        "class Color(Enum):\n"
        "    '''colours'''\n"
        "    RED = 1\n"
        "    GREEN = auto()\n"
        "    BLUE = auto()\n"
        "    def describe(self):\n"
        "        return f'{self.name} is {self.value}'\n"
        "    @property\n"
        "    def warm(self):\n"
        "        return self is Color.RED\n"
        "class Mode(IntEnum):\n"
        "    TRAIN = 1\n"
        "    EVAL = 2\n"
        "class Split(str, Enum):\n"
        "    TRAIN = 'train'\n"
        "    VALID = 'valid'\n"
        "@enum.unique\n"
        "class Phase(Enum):\n"
        "    A = 'a'\n"
        "    B = 'b'\n"
        "print(Color.RED, repr(Color.GREEN), Color.BLUE.name, Color.BLUE.value, type(Color.RED))\n"
        "print(list(Color), len(Color), Color(2), Color['BLUE'], Color.RED in Color)\n"
        "for c in Color:\n"
        "    print(c.describe(), c.warm)\n"
        "print([c.name for c in Color], sorted(Mode), Mode.EVAL + 1, Mode(1) == 1, Mode.TRAIN < Mode.EVAL)\n"
        "print(Split.TRAIN == 'train', Split('valid'), Split.VALID.value.upper(), Phase.B)\n"
        "counts = {Color.RED: 0, Color.GREEN: 5}\n"
        "counts[Color.RED] += 1\n"
        "print(counts, Color.RED is Color(1), isinstance(Color.RED, Color), isinstance(Mode.TRAIN, int))\n"
        "mode = Mode.TRAIN\n"
        "if mode == Mode.TRAIN:\n"
        "    print('training', mode.name.lower())\n"
        "try:\n"
        "    Color(7)\n"
        "except ValueError as e:\n"
        "    print('ValueError', e)\n"
        "try:\n"
        "    Color['PINK']\n"
        "except KeyError as e:\n"
        "    print('KeyError', e)\n"
    ),
    "lru-cache": (
        "import functools\n"
        "from functools import lru_cache, cache\n"
        "@functools.lru_cache(maxsize=None)\n"
        "def fib(n):\n"
        "    return n if n < 2 else fib(n - 1) + fib(n - 2)\n"
        "print(fib(40), fib.cache_info(), fib.__name__, type(fib))\n"
        "fib.cache_clear()\n"
        "print(fib.cache_info().currsize, fib.cache_parameters())\n"
        "@lru_cache\n"
        "def square(x):\n"
        "    return x * x\n"
        "@cache\n"
        "def cube(x):\n"
        "    return x ** 3\n"
        "print(square(3), square(3), square.cache_info(), cube(2), cube.cache_info().hits)\n"
        "@lru_cache(maxsize=2)\n"
        "def ident(x):\n"
        "    print('computing', x)\n"
        "    return x\n"
        "for v in [1, 2, 1, 3, 2, 1]:\n"
        "    ident(v)\n"
        "print(ident.cache_info())\n"
        "@lru_cache(maxsize=8, typed=True)\n"
        "def kind(x):\n"
        "    return type(x).__name__\n"
        "print(kind(1), kind(1.0), kind.cache_info().misses)\n"
        "print(list(map(square, [1, 2, 3])), sorted([3, 1, 2], key=cube))\n"
        "@lru_cache(maxsize=None)\n"
        "def embedding_table(n):\n"
        "    torch.manual_seed(n)\n"
        "    return torch.randn(n, 2)\n"
        "a = embedding_table(3)\n"
        "print(a is embedding_table(3), a)\n"
        "class Model:\n"
        "    def __init__(self, k):\n"
        "        self.k = k\n"
        "    @functools.lru_cache(maxsize=None)\n"
        "    def powers(self, n):\n"
        "        return [self.k ** i for i in range(n)]\n"
        "    @staticmethod\n"
        "    @functools.cache\n"
        "    def table(n):\n"
        "        return tuple(range(n))\n"
        "    @property\n"
        "    @functools.cache\n"
        "    def total(self):\n"
        "        print('summing once')\n"
        "        return sum(self.powers(4))\n"
        "m = Model(2)\n"
        "print(m.powers(5), m.powers(5) is m.powers(5), m.table(3), m.table(2))\n"
        "print(m.total, m.total, m.table.cache_info())\n"
        "x = torch.ones(3, requires_grad=True)\n"
        "@cache\n"
        "def weight():\n"
        "    return torch.full((3,), 2.0)\n"
        "(x * weight()).sum().backward()\n"
        "print(x.grad)\n"
    ),
    "optimizer-state": (
        "torch.manual_seed(0)\n"
        "model = torch.nn.Linear(3, 2)\n"
        "sgd = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)\n"
        "adam = torch.optim.Adam(model.parameters(), lr=1e-2)\n"
        "print(len(sgd.state), model.weight in sgd.state)\n"
        "for step in range(3):\n"
        "    loss = model(torch.randn(4, 3)).pow(2).sum()\n"
        "    sgd.zero_grad(); adam.zero_grad()\n"
        "    loss.backward()\n"
        "    sgd.step(); adam.step()\n"
        "    for g in sgd.param_groups:\n"
        "        g['lr'] = g['lr'] * 0.5\n"
        "    adam.param_groups[0]['lr'] *= 0.9\n"
        "p = model.weight\n"
        "print(sgd.state[p]['momentum_buffer'])\n"
        "print(sorted(adam.state[p]), adam.state[p]['exp_avg'], adam.state[p]['exp_avg_sq'])\n"
        "print(adam.state[p]['step'], sgd.param_groups[0]['lr'], adam.param_groups[0]['lr'])\n"
        "for state in adam.state.values():\n"
        "    for k, v in state.items():\n"
        "        if isinstance(v, torch.Tensor):\n"
        "            state[k] = v.to('cpu')\n"
        "adam.state[p]['step'] += 1\n"
        "print(adam.state[p].get('step'), len(adam.state), p in adam.state)\n"
        "buf = sgd.state[model.bias].get('momentum_buffer')\n"
        "print(buf is sgd.state[model.bias]['momentum_buffer'], buf.shape)\n"
        "print({k: v.shape for k, v in adam.state[model.bias].items()})\n"
    ),
    "parametrize": (
        "import torch.nn as nn\n"
        "import torch.nn.utils.parametrize as parametrize\n"
        "from torch.nn.utils import parametrizations\n"
        "from torch.nn.utils.parametrizations import weight_norm, orthogonal, spectral_norm\n"
        "torch.manual_seed(0)\n"
        "class Symmetric(nn.Module):\n"
        "    def forward(self, X):\n"
        "        return X.triu() + X.triu(1).transpose(-1, -2)\n"
        "class Skew(nn.Module):\n"
        "    def forward(self, X):\n"
        "        A = X.triu(1)\n"
        "        return A - A.transpose(-1, -2)\n"
        "    def right_inverse(self, A):\n"
        "        return A.triu(1)\n"
        "layer = nn.Linear(3, 3)\n"
        "parametrize.register_parametrization(layer, 'weight', Symmetric())\n"
        "print(layer)\n"
        "print(layer.weight, parametrize.is_parametrized(layer), parametrize.is_parametrized(layer, 'bias'))\n"
        "print(layer.parametrizations.weight.original, layer.parametrizations.weight[0])\n"
        "x = torch.randn(2, 3, requires_grad=True)\n"
        "out = layer(x).pow(2).sum()\n"
        "out.backward()\n"
        "print(out.grad_fn.name(), x.grad, layer.parametrizations.weight.original.grad)\n"
        "sk = nn.Linear(3, 3)\n"
        "parametrize.register_parametrization(sk, 'weight', Skew())\n"
        "X = torch.rand(3, 3)\n"
        "X = X - X.T\n"
        "sk.weight = X\n"
        "print(torch.dist(sk.weight, X))\n"
        "with parametrize.cached():\n"
        "    w1 = sk.weight\n"
        "    print(w1 is sk.weight)\n"
        "parametrize.remove_parametrizations(sk, 'weight')\n"
        "print(type(sk).__name__, sk.weight)\n"
        "class Net(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.w = nn.Parameter(torch.randn(3, 3))\n"
        "        self._gain = 2.0\n"
        "    def forward(self, v):\n"
        "        return v @ self.w * self._gain\n"
        "net = Net()\n"
        "parametrize.register_parametrization(net, 'w', Symmetric())\n"
        "print(net.w, net._gain, net(torch.ones(1, 3)))\n"
        "wn = weight_norm(nn.Linear(4, 2))\n"
        "wn.weight = torch.ones(2, 4)\n"
        "print(wn.parametrizations.weight.original0.shape, wn.parametrizations.weight.original1.shape)\n"
        "o = orthogonal(nn.Linear(3, 3))\n"
        "print(torch.allclose(o.weight @ o.weight.T, torch.eye(3), atol=1e-5))\n"
        "sn = parametrizations.spectral_norm(nn.Linear(4, 4))\n"
        "z = sn(torch.randn(2, 4)).sum() + wn(torch.randn(3, 4)).sum() + o(torch.randn(1, 3)).sum()\n"
        "z.backward()\n"
        "print(z, wn.parametrizations.weight.original0.grad, o.parametrizations.weight.original.grad)\n"
    ),
    "transformed-distribution": (
        "import torch.distributions as D\n"
        "from torch.distributions import Normal, TransformedDistribution, Uniform\n"
        "from torch.distributions.transforms import (AffineTransform, ExpTransform,\n"
        "    SigmoidTransform, TanhTransform, ComposeTransform, PowerTransform)\n"
        "torch.manual_seed(0)\n"
        "loc = torch.zeros(2, requires_grad=True)\n"
        "scale = torch.ones(2, requires_grad=True)\n"
        "base = Normal(loc, scale)\n"
        "d = TransformedDistribution(base, [AffineTransform(1.0, 2.0), ExpTransform()])\n"
        "s = d.rsample()\n"
        "lp = d.log_prob(torch.tensor([1.5, 3.0]))\n"
        "(lp.sum() + s.sum()).backward()\n"
        "print(s, lp, loc.grad, scale.grad, lp.grad_fn.name())\n"
        "print(d.base_dist is base, len(d.transforms), d.transforms[1], d.has_rsample)\n"
        "logistic = TransformedDistribution(Uniform(torch.zeros(3), torch.ones(3)),\n"
        "    [SigmoidTransform().inv, AffineTransform(loc=0.5, scale=2.0)])\n"
        "print(logistic.sample((2,)).shape, logistic.log_prob(torch.zeros(3)))\n"
        "squash = TransformedDistribution(Normal(torch.zeros(1), torch.ones(1)), TanhTransform(cache_size=1))\n"
        "a = squash.rsample((4,))\n"
        "print(a.abs().max() < 1, squash.log_prob(a).shape)\n"
        "t = ComposeTransform([AffineTransform(0.0, 3.0), PowerTransform(2.0)])\n"
        "y = t(torch.tensor([1.0, 2.0]))\n"
        "print(y, t.inv(y), t.log_abs_det_jacobian(torch.tensor([1.0, 2.0]), y), t.sign)\n"
        "e = D.ExpTransform()\n"
        "print(e(torch.zeros(1)), e.inv(torch.ones(1)), e.bijective, e.inv.inv is e, e.domain)\n"
        "ln = D.LogNormal(0.0, 1.0)\n"
        "print(len(ln.transforms), ln.base_dist.loc, ln.log_prob(torch.tensor(2.0)))\n"
    ),
    "argparse-subparsers": (
        "import argparse\n"
        "def train(args):\n"
        "    return f'train lr={args.lr}'\n"
        "def evaluate(args):\n"
        "    return f'eval on {args.split}'\n"
        "parser = argparse.ArgumentParser(description='style transfer')\n"
        "parser.add_argument('--seed', type=int, default=42)\n"
        "sub = parser.add_subparsers(title='subcommands', dest='subcommand', help='what to do')\n"
        "tr = sub.add_parser('train', help='train a model')\n"
        "tr.add_argument('--lr', type=float, default=1e-3)\n"
        "tr.add_argument('--epochs', type=int, default=2)\n"
        "tr.set_defaults(func=train)\n"
        "ev = sub.add_parser('eval', aliases=['test'], help='evaluate',\n"
        "                    formatter_class=argparse.ArgumentDefaultsHelpFormatter)\n"
        "ev.add_argument('--split', choices=['valid', 'test'], default='valid')\n"
        "ev.set_defaults(func=evaluate)\n"
        "args = parser.parse_args(['--seed', '1', 'train', '--lr', '0.5'])\n"
        "print(args.subcommand, args.seed, args.lr, args.epochs, args.func(args))\n"
        "args = parser.parse_args(['test', '--split', 'test'])\n"
        "print(args.subcommand, args.func(args), vars(args)['split'])\n"
        "print(parser.parse_args([]))\n"
        "sub.required = True\n"
        "print(parser.parse_known_args(['eval', '--extra'])[1])\n"
        "parser.print_help()\n"
        "ev.print_usage()\n"
    ),
    "classmethod-staticmethod": (
        "import functools\n"
        "class Config:\n"
        "    n_layer = 2\n"
        "    def __init__(self, n_layer=2, lr=0.1):\n"
        "        self.n_layer, self.lr = n_layer, lr\n"
        "    @classmethod\n"
        "    def from_dict(cls, d):\n"
        "        return cls(**d)\n"
        "    @classmethod\n"
        "    def default_layers(cls):\n"
        "        return cls.n_layer * 2\n"
        "    @staticmethod\n"
        "    def check(v):\n"
        "        return v > 0\n"
        "    @classmethod\n"
        "    @functools.cache\n"
        "    def table(cls, n):\n"
        "        return tuple(range(n))\n"
        "class Big(Config):\n"
        "    n_layer = 12\n"
        "c = Config.from_dict({'n_layer': 4, 'lr': 0.5})\n"
        "b = Big.from_dict({})\n"
        "print(c.n_layer, c.lr, type(b).__name__, Big.default_layers(), c.default_layers())\n"
        "print(Config.check(3), c.check(-1), getattr(Config, 'check')(1), Config.table(3))\n"
        "class Net(torch.nn.Module):\n"
        "    def __init__(self, width):\n"
        "        super().__init__()\n"
        "        self.fc = torch.nn.Linear(width, 1)\n"
        "    @classmethod\n"
        "    def small(cls):\n"
        "        return cls(2)\n"
        "    def forward(self, x):\n"
        "        return self.fc(x)\n"
        "torch.manual_seed(0)\n"
        "net = Net.small()\n"
        "out = net(torch.ones(1, 2)).sum()\n"
        "out.backward()\n"
        "print(out, net.fc.weight.grad)\n"
    ),
    "cached-property": (
        "import functools\n"
        "from functools import cached_property\n"
        "class Dataset:\n"
        "    def __init__(self, text):\n"
        "        self.text = text\n"
        "    @cached_property\n"
        "    def vocab(self):\n"
        "        print('building the vocabulary')\n"
        "        return sorted(set(self.text))\n"
        "    @functools.cached_property\n"
        "    def stoi(self):\n"
        "        return {ch: i for i, ch in enumerate(self.vocab)}\n"
        "d = Dataset('hello world')\n"
        "print(d.vocab, d.vocab is d.vocab, d.stoi['o'], 'vocab' in vars(d))\n"
        "del d.vocab\n"
        "print(len(d.vocab))\n"
        "d.stoi = {'x': 0}\n"
        "print(d.stoi)\n"
        "class Net(torch.nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.fc = torch.nn.Linear(2, 2)\n"
        "    @functools.cached_property\n"
        "    def n_params(self):\n"
        "        return sum(p.numel() for p in self.parameters())\n"
        "    def forward(self, x):\n"
        "        return self.fc(x)\n"
        "print(Net().n_params)\n"
    ),
    "functorch-make-functional": (
        "import functorch as ft\n"
        "torch.manual_seed(0)\n"
        "class Net(torch.nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.fc = torch.nn.Linear(3, 2)\n"
        "        self.bn = torch.nn.BatchNorm1d(2)\n"
        "    def forward(self, x):\n"
        "        return self.bn(self.fc(x)).tanh()\n"
        "model = Net().eval()\n"
        "x = torch.randn(4, 3)\n"
        "func, params, buffers = ft.make_functional_with_buffers(model)\n"
        "tangents = tuple(torch.ones_like(p) for p in params)\n"
        "out, jvp_out = ft.jvp(lambda ps: func(ps, buffers, x), (params,), (tangents,))\n"
        "print(out, jvp_out, len(params), len(buffers))\n"
        "f2, p2 = ft.make_functional(torch.nn.Linear(3, 1))\n"
        "y = f2(p2, x).sum()\n"
        "y.backward()\n"
        "print(y, p2[0].grad, y.grad_fn.name())\n"
    ),
}


@pytest.mark.parametrize("name", list(FIDELITY))
def test_restricted_prints_what_python_prints(name):
    _same_as_python(FIDELITY[name])


def _plain_failure(source: str) -> tuple[int, str]:
    """The line (in the script) and the type of the exception plain Python stops with."""
    try:
        _plain(source)
    except Exception as exc:  # noqa: BLE001 - whatever plain Python raises
        lines = [f.lineno for f in traceback.extract_tb(exc.__traceback__) if f.filename == "<plain>"]
        return lines[-1], type(exc).__name__
    raise AssertionError("plain Python ran it without an error")


FAILURES = {
    "property-without-setter": (
        "class C:\n    @property\n    def v(self):\n        return 1\nc = C()\nc.v = 2\n"
    ),
    "property-getter-raises": (
        "class C:\n    @property\n    def v(self):\n        return self.missing\nc = C()\n"
        "print('before')\nc.v\n"
    ),
    "enum-bad-value": "import enum\nclass E(enum.Enum):\n    A = 1\nE(3)\n",
    "enum-reassign-member": "import enum\nclass E(enum.Enum):\n    A = 1\nE.A = 2\n",
    "enum-member-name-set": "import enum\nclass E(enum.Enum):\n    A = 1\nE.A.name = 'x'\n",
    "enum-duplicate-unique": (
        "import enum\n@enum.unique\nclass E(enum.Enum):\n    A = 1\n    B = 1\n"
    ),
    "lru-cache-unhashable": (
        "import functools\n@functools.lru_cache(maxsize=None)\ndef f(x):\n    return len(x)\n"
        "print(f((1, 2)))\nf([1, 2])\n"
    ),
    "lru-cache-bad-maxsize": "import functools\nfunctools.lru_cache('big')\n",
    "lru-cache-error-inside": (
        "import functools\n@functools.cache\ndef f(x):\n    return 1 / x\nf(1)\nf(0)\n"
    ),
    "optimizer-state-missing-key": (
        "p = torch.nn.Parameter(torch.ones(2))\nopt = torch.optim.SGD([p], lr=0.1)\n"
        "opt.state[p]['momentum_buffer']\n"
    ),
    "parametrize-unknown-name": (
        "import torch.nn.utils.parametrize as P\nclass Id(torch.nn.Module):\n"
        "    def forward(self, x):\n        return x\n"
        "P.register_parametrization(torch.nn.Linear(2, 2), 'nope', Id())\n"
    ),
    "parametrize-changes-shape": (
        "import torch.nn.utils.parametrize as P\nclass Cut(torch.nn.Module):\n"
        "    def forward(self, x):\n        return x[:1]\n"
        "P.register_parametrization(torch.nn.Linear(2, 2), 'weight', Cut())\n"
    ),
    "transformed-not-a-transform": (
        "from torch.distributions import Normal, TransformedDistribution\n"
        "TransformedDistribution(Normal(0.0, 1.0), [3])\n"
    ),
    "transformed-log-prob-outside-support": (
        "from torch.distributions import Normal, TransformedDistribution\n"
        "from torch.distributions.transforms import ExpTransform\n"
        "d = TransformedDistribution(Normal(0.0, 1.0), ExpTransform(), validate_args=True)\n"
        "d.log_prob(torch.tensor(-1.0))\n"
    ),
}


@pytest.mark.parametrize("name", list(FAILURES))
def test_errors_stop_on_the_line_and_with_the_type_python_gives(name):
    line, kind = _plain_failure(FAILURES[name])
    _, _, failure = _restricted(FAILURES[name])
    assert failure is not None
    assert (failure.error.line or failure.line, failure.error.type) == (line, kind), (
        failure.error.message
    )


def test_a_parametrized_model_shows_the_graph_plain_pytorch_builds():
    """Values, gradients and the grad_fn of every tensor the script holds, through the
    session's capture (the parametrization's forward is script code torch calls)."""
    source = (
        "import torch.nn.utils.parametrize as P\n"
        "torch.manual_seed(0)\n"
        "class Sym(torch.nn.Module):\n"
        "    def forward(self, X):\n"
        "        return X.triu() + X.triu(1).transpose(-1, -2)\n"
        "model = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.Tanh(), torch.nn.Linear(3, 1))\n"
        "P.register_parametrization(model[0], 'weight', Sym())\n"
        "opt = torch.optim.Adam(model.parameters(), lr=0.1)\n"
        "x = torch.randn(5, 3)\n"
        "w = model[0].weight\n"
        "h = model(x)\n"
        "loss = h.pow(2).mean()\n"
        "loss.backward()\n"
        "opt.step()\n"
        "m = opt.state[model[0].parametrizations.weight.original]['exp_avg']\n"
    )
    session, _, failure = _restricted(source)
    assert failure is None, failure.error.message
    torch.manual_seed(0)
    plain: dict = {"torch": torch}
    exec(compile(source, "<plain>", "exec"), plain)  # noqa: S102 - trusted test input
    for name in ("x", "w", "h", "loss", "m"):
        ours, theirs = session.globals[name], plain[name]
        assert torch.equal(ours.detach(), theirs.detach()), name
        assert type(ours.grad_fn).__name__ == type(theirs.grad_fn).__name__, name
    ours_p = session.globals["model"][0].parametrizations.weight.original
    theirs_p = plain["model"][0].parametrizations.weight.original
    assert torch.equal(ours_p, theirs_p) and torch.equal(ours_p.grad, theirs_p.grad)


# --- adversarial ---------------------------------------------------------------------

ATTACKS = {
    # @property: the property object, its functions and the class namespace stay out
    "property-object": "class C:\n    @property\n    def v(self):\n        return 1\nC.v\n",
    "property-fget": "class C:\n    @property\n    def v(self):\n        return 1\nC.v.fget\n",
    "property-getattr-class": (
        "class C:\n    @property\n    def v(self):\n        return 1\ngetattr(C, 'v').fget\n"
    ),
    "property-type-of": (
        "class C:\n    @property\n    def v(self):\n        return 1\ntype(C()).v.fset\n"
    ),
    "property-call": "property(print)\n",
    "property-alias-call": "p = property\np(lambda s: 1)\n",
    "property-outside-class": "@property\ndef f(self):\n    return 1\n",
    "property-deleter": (
        "class C:\n    @property\n    def v(self):\n        return 1\n"
        "    @v.deleter\n    def v(self):\n        pass\n"
    ),
    "property-setter-of-global": (
        "g = torch.ones(1)\nclass C:\n    @g.setter\n    def v(self, x):\n        pass\n"
    ),
    "property-module-training": (
        "class M(torch.nn.Module):\n    @property\n    def training(self):\n        return True\nM()\n"
    ),
    "property-module-private-table": (
        "class M(torch.nn.Module):\n    @property\n    def _parameters(self):\n        return {}\nM()\n"
    ),
    "property-module-api": (
        "class M(torch.nn.Module):\n    @property\n    def state_dict(self):\n        return print\n"
    ),
    "property-autograd-function": (
        "class F(torch.autograd.Function):\n    @property\n    def forward(ctx, x):\n        return x\n"
        "    @staticmethod\n    def backward(ctx, g):\n        return g\n"
    ),
    "property-staticmethod": (
        "class C:\n    @property\n    @staticmethod\n    def v():\n        return 1\n"
    ),
    "property-getter-loops": (
        "class C:\n    @property\n    def v(self):\n        while True:\n            pass\nC().v\n"
    ),
    "property-getter-recurses": (
        "class C:\n    @property\n    def v(self):\n        return self.v\nC().v\n"
    ),
    "property-setter-stores-refused": (
        "class C:\n    @property\n    def v(self):\n        return 1\n"
        "    @v.setter\n    def v(self, x):\n        self.f = x\nc = C()\nc.v = np.ndarray\n"
        "c.f((2,), dtype=object)\n"
    ),
    "property-super-library": (
        "class M(torch.nn.Linear):\n    def peek(self):\n        return super().T_destination\n"
        "M(1, 1).peek()\n"
    ),
    # @classmethod / @staticmethod read on the class: the script's own, bound by Python
    "classmethod-call": "classmethod(print)\n",
    "classmethod-outside-class": "@classmethod\ndef f(cls):\n    return cls\n",
    "classmethod-func": (
        "class C:\n    @classmethod\n    def f(cls):\n        return 1\nC.f.__func__\n"
    ),
    "classmethod-self-dunder": (
        "class C:\n    @classmethod\n    def f(cls):\n        return 1\ngetattr(C.f, '__self__')\n"
    ),
    "classmethod-super": (
        "class A:\n    @classmethod\n    def f(cls):\n        return 1\n"
        "class B(A):\n    @classmethod\n    def f(cls):\n        return super().f()\nB.f()\n"
    ),
    "classmethod-library-class": "torch.nn.Linear.__init__\n",
    "classmethod-library-staticmethod": (
        "class M(torch.nn.Linear):\n    pass\nM.register_buffer\n"
    ),
    "classmethod-and-property": (
        "class C:\n    @property\n    @classmethod\n    def f(cls):\n        return 1\n"
    ),
    "classmethod-module-api": (
        "class M(torch.nn.Module):\n    @classmethod\n    def zero_grad(cls):\n        return 1\n"
    ),
    "classmethod-autograd-function": (
        "class F(torch.autograd.Function):\n    @classmethod\n    def forward(cls, ctx, x):\n"
        "        return x\n    @staticmethod\n    def backward(ctx, g):\n        return g\n"
    ),
    # functools.cached_property: a method's decorator in a class body, nothing more
    "cached-property-call": "import functools\nfunctools.cached_property(print)\n",
    "cached-property-outside-class": (
        "import functools\n@functools.cached_property\ndef f(self):\n    return 1\n"
    ),
    "cached-property-object": (
        "import functools\nclass C:\n    @functools.cached_property\n    def v(self):\n"
        "        return 1\nC.v\n"
    ),
    "cached-property-func": (
        "import functools\nclass C:\n    @functools.cached_property\n    def v(self):\n"
        "        return 1\nC.v.func\n"
    ),
    "cached-property-static": (
        "import functools\nclass C:\n    @functools.cached_property\n    @staticmethod\n"
        "    def v():\n        return 1\n"
    ),
    "cached-property-module-training": (
        "import functools\nclass M(torch.nn.Module):\n    @functools.cached_property\n"
        "    def training(self):\n        return True\nM()\n"
    ),
    "cached-property-store-refused": (
        "import functools\nclass C:\n    @functools.cached_property\n    def v(self):\n"
        "        return 1\nc = C()\nc.v = type(print)\n"
    ),
    "cached-property-recurses": (
        "import functools\nclass C:\n    @functools.cached_property\n    def v(self):\n"
        "        return self.v\nC().v\n"
    ),
    # enum: the functional API, the metaclass's own names, enum hooks
    "enum-functional-api": "import enum\nenum.Enum('Color', 'RED GREEN')\n",
    "enum-intenum-call": "import enum\nenum.IntEnum('M', {'A': 1})\n",
    "enum-class-functional": (
        "import enum\nclass E(enum.Enum):\n    A = 1\nE('X', 'a b')\n"
    ),
    "enum-class-keywords": "import enum\nclass E(enum.Enum):\n    A = 1\nE(value=1)\n",
    "enum-memberless-base": "import enum\nclass Base(enum.Enum):\n    def f(self):\n        return 1\n",
    "enum-new-member": "import enum\nclass E(enum.Enum):\n    A = 1\nE._new_member_\n",
    "enum-member-new-member": "import enum\nclass E(enum.Enum):\n    A = 1\nE.A._new_member_\n",
    "enum-member-type": "import enum\nclass E(enum.Enum):\n    A = 1\nE._member_type_\n",
    "enum-value-map": "import enum\nclass E(enum.Enum):\n    A = 1\nE._value2member_map_\n",
    "enum-member-value-private": "import enum\nclass E(enum.Enum):\n    A = 1\nE.A._value_\n",
    "enum-getattr-new-member": (
        "import enum\nclass E(enum.Enum):\n    A = 1\ngetattr(E.A, '_new_member_')\n"
    ),
    "enum-members-dunder": "import enum\nclass E(enum.Enum):\n    A = 1\nE.__members__\n",
    "enum-missing-hook": (
        "import enum\nclass E(enum.Enum):\n    A = 1\n    def _missing_(cls, v):\n        return print\n"
    ),
    "enum-next-value-hook": (
        "import enum\nclass E(enum.Enum):\n    def _generate_next_value_(name, start, count, last):\n"
        "        return print\n    A = enum.auto()\n"
    ),
    "enum-ignore": "import enum\nclass E(enum.Enum):\n    _ignore_ = ['x']\n    A = 1\n",
    "enum-init": (
        "import enum\nclass E(enum.Enum):\n    A = 1\n    def __init__(self, v):\n        self.x = v\n"
    ),
    "enum-callable-member": "import enum\nclass E(enum.Enum):\n    A = print\n",
    "enum-nested-class": (
        "import enum\nclass E(enum.Enum):\n    A = 1\n    class Inner:\n        pass\n"
    ),
    "enum-tensor-base": "import enum\nclass E(torch.Tensor, enum.Enum):\n    A = 1\n",
    "enum-list-mixin": "import enum\nclass E(list, enum.Enum):\n    A = [1]\n",
    "enum-dataclass": (
        "import enum\nfrom dataclasses import dataclass\n@dataclass\nclass E(enum.Enum):\n    A = 1\n"
    ),
    "enum-unique-not-enum": "import enum\nenum.unique(int)\n",
    "enum-unique-plain-class": "import enum\n@enum.unique\nclass C:\n    a = 1\n",
    "enum-mro": "import enum\nclass E(enum.Enum):\n    A = 1\ntype(E.A).mro()\n",
    "enum-set-class-hook": (
        "import enum\nclass E(enum.Enum):\n    A = 1\ndef f(cls, v):\n    return 1\n"
        "setattr(E, '_missing_', f)\n"
    ),
    "enum-vars-member": "import enum\nclass E(enum.Enum):\n    A = 1\nvars(E.A)\n",
    "enum-base-passed": "import enum\nlist(map(enum.Enum, ['X'], ['a b']))\n",
    # functools.lru_cache: the wrapper's insides, the real wrapper type, unbounded caches
    "cache-interp": "import functools\n@functools.cache\ndef f(x):\n    return x\nf.interp\n",
    "cache-fn": "import functools\n@functools.cache\ndef f(x):\n    return x\nf.fn\n",
    "cache-entries": "import functools\n@functools.cache\ndef f(x):\n    return x\nf.entries\n",
    "cache-getattr-interp": (
        "import functools\n@functools.cache\ndef f(x):\n    return x\ngetattr(f, 'interp')\n"
    ),
    "cache-wrapped": "import functools\n@functools.cache\ndef f(x):\n    return x\nf.__wrapped__\n",
    "cache-real-wrapper-type": (
        "import functools\n@functools.cache\ndef f(x):\n    return x\n"
        "type(f)(print, None, False, tuple)\n"
    ),
    "cache-of-ndarray": "import functools\nfunctools.lru_cache(maxsize=None)(np.ndarray)\n",
    "cache-of-type": "import functools\nfunctools.cache(type(print))\n",
    "cache-of-module": "import functools\nfunctools.cache(torch)\n",
    "cache-info-private": (
        "import functools\n@functools.cache\ndef f(x):\n    return x\nf.cache_info()._asdict()\n"
    ),
    "cache-recursion": (
        "import functools\n@functools.cache\ndef f(n):\n    return f(n + 1)\nf(0)\n"
    ),
    "cache-hook-returns-refused": (
        "import functools\n@functools.cache\ndef h(g):\n    return np.ndarray\n"
        "x = torch.ones(2, requires_grad=True)\nx.register_hook(h)\nx.sum().backward()\n"
    ),
    "cache-unbounded-growth": (
        "import functools\n@functools.cache\ndef f(n):\n    return n\n"
        "for i in range(10**8):\n    f(i)\n"
    ),
    # optimizer state: read-only, the optimizer's kernels trust it
    "state-wrong-shape": (
        "p = torch.nn.Parameter(torch.ones(2))\nopt = torch.optim.Adam([p])\np.grad = torch.ones(2)\n"
        "opt.step()\nopt.state[p]['exp_avg'] = torch.ones(10**6)\nopt.step()\n"
    ),
    "state-wrong-dtype": (
        "p = torch.nn.Parameter(torch.ones(2))\nopt = torch.optim.Adam([p])\np.grad = torch.ones(2)\n"
        "opt.step()\nopt.state[p]['exp_avg'] = torch.ones(2, dtype=torch.float64)\n"
    ),
    "state-step-not-tensor": (
        "p = torch.nn.Parameter(torch.ones(2))\nopt = torch.optim.Adam([p])\np.grad = torch.ones(2)\n"
        "opt.step()\nopt.state[p]['step'] = 10**9\n"
    ),
    "state-new-key": (
        "p = torch.nn.Parameter(torch.ones(2))\nopt = torch.optim.SGD([p], lr=0.1, momentum=0.9)\n"
        "opt.state[p]['momentum_buffer'] = torch.ones(2)\n"
    ),
    "state-replace-dict": (
        "p = torch.nn.Parameter(torch.ones(2))\nopt = torch.optim.Adam([p])\nopt.state[p] = {}\n"
    ),
    "state-update": (
        "p = torch.nn.Parameter(torch.ones(2))\nopt = torch.optim.Adam([p])\n"
        "opt.state[p].update(exp_avg=torch.ones(9))\n"
    ),
    "state-setdefault": (
        "p = torch.nn.Parameter(torch.ones(2))\nopt = torch.optim.Adam([p])\n"
        "opt.state[p].setdefault('exp_avg', torch.ones(9))\n"
    ),
    "state-pop": (
        "p = torch.nn.Parameter(torch.ones(2))\nopt = torch.optim.Adam([p])\np.grad = torch.ones(2)\n"
        "opt.step()\nopt.state[p].pop('exp_avg')\n"
    ),
    "state-clear-outer": (
        "p = torch.nn.Parameter(torch.ones(2))\nopt = torch.optim.Adam([p])\nopt.state.clear()\n"
    ),
    "state-del": (
        "p = torch.nn.Parameter(torch.ones(2))\nopt = torch.optim.Adam([p])\np.grad = torch.ones(2)\n"
        "opt.step()\ndel opt.state[p]['exp_avg']\n"
    ),
    "state-ior": (
        "p = torch.nn.Parameter(torch.ones(2))\nopt = torch.optim.Adam([p])\ns = opt.state[p]\n"
        "s |= {'exp_avg': torch.ones(9)}\n"
    ),
    "state-bound-method-first": (
        "p = torch.nn.Parameter(torch.ones(2))\nopt = torch.optim.Adam([p])\ns = opt.state\n"
        "u = s[p].update\n"
    ),
    "state-through-copy": (
        "import copy\np = torch.nn.Parameter(torch.ones(2))\nopt = torch.optim.Adam([p])\n"
        "p.grad = torch.ones(2)\nopt.step()\nc = copy.copy(opt.state)\n"
        "c[p]['exp_avg'] = torch.ones(9)\n"
    ),
    "state-augassign-wrong": (
        "p = torch.nn.Parameter(torch.ones(2))\nopt = torch.optim.Adam([p])\np.grad = torch.ones(2)\n"
        "opt.step()\nopt.state[p]['exp_avg'] += torch.ones(3, 2)\n"
    ),
    "state-resize": (
        "p = torch.nn.Parameter(torch.ones(2))\nopt = torch.optim.Adam([p])\np.grad = torch.ones(2)\n"
        "opt.step()\nopt.state[p]['exp_avg'].resize_(10**6)\n"
    ),
    "state-data-swap": (
        "p = torch.nn.Parameter(torch.ones(2))\nopt = torch.optim.Adam([p])\np.grad = torch.ones(2)\n"
        "opt.step()\nopt.state[p]['exp_avg'].data = torch.ones(10**6)\n"
    ),
    "state-set-attribute": (
        "p = torch.nn.Parameter(torch.ones(2))\nopt = torch.optim.Adam([p])\nopt.state = {}\n"
    ),
    "state-dict-method": (
        "p = torch.nn.Parameter(torch.ones(2))\nopt = torch.optim.Adam([p])\nopt.state_dict()\n"
    ),
    "state-default-factory-set": (
        "p = torch.nn.Parameter(torch.ones(2))\nopt = torch.optim.Adam([p])\n"
        "opt.state.default_factory = print\n"
    ),
    "param-group-foreach": (
        "p = torch.nn.Parameter(torch.ones(2))\nopt = torch.optim.Adam([p])\np.grad = torch.ones(2)\n"
        "opt.param_groups[0]['foreach'] = True\nopt.step()\n"
    ),
    "param-group-fused": (
        "p = torch.nn.Parameter(torch.ones(2))\nopt = torch.optim.Adam([p])\np.grad = torch.ones(2)\n"
        "opt.param_groups[0]['fused'] = True\nopt.step()\n"
    ),
    # parametrize: unsafe registrations, the class torch makes, shape changes through set_
    "parametrize-unsafe": (
        "import torch.nn.utils.parametrize as P\nclass Id(torch.nn.Module):\n"
        "    def forward(self, x):\n        return x\n"
        "P.register_parametrization(torch.nn.Linear(2, 2), 'weight', Id(), unsafe=True)\n"
    ),
    "parametrize-dunder-name": (
        "import torch.nn.utils.parametrize as P\nclass Id(torch.nn.Module):\n"
        "    def forward(self, x):\n        return x\n"
        "P.register_parametrization(torch.nn.Linear(2, 2), '__class__', Id())\n"
    ),
    "parametrize-class-call": (
        "import torch.nn.utils.parametrize as P\nclass Id(torch.nn.Module):\n"
        "    def forward(self, x):\n        return x\nl = torch.nn.Linear(2, 2)\n"
        "P.register_parametrization(l, 'weight', Id())\ntype(l)(2, 2)\n"
    ),
    "parametrize-property-object": (
        "import torch.nn.utils.parametrize as P\nclass Id(torch.nn.Module):\n"
        "    def forward(self, x):\n        return x\nl = torch.nn.Linear(2, 2)\n"
        "P.register_parametrization(l, 'weight', Id())\ntype(l).weight.fget\n"
    ),
    "parametrize-private-table": (
        "import torch.nn.utils.parametrize as P\nclass Id(torch.nn.Module):\n"
        "    def forward(self, x):\n        return x\nl = torch.nn.Linear(2, 2)\n"
        "P.register_parametrization(l, 'weight', Id())\nl._parameters\n"
    ),
    "parametrize-setter-changes-shape": (
        "import torch.nn.utils.parametrize as P\nclass Grow(torch.nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n        self.big = False\n"
        "    def forward(self, x):\n        return x\n"
        "    def right_inverse(self, a):\n        return torch.ones(50, 50) if self.big else a\n"
        "l = torch.nn.Linear(2, 2)\nopt = torch.optim.Adam(l.parameters())\ng = Grow()\n"
        "P.register_parametrization(l, 'weight', g)\ng.big = True\nl.weight = torch.ones(2, 2)\n"
    ),
    "parametrize-remove-changes-shape": (
        "import torch.nn.utils.parametrize as P\nclass Flip(torch.nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n        self.big = False\n"
        "    def forward(self, x):\n        return torch.ones(40, 40) if self.big else x\n"
        "l = torch.nn.Linear(2, 2)\nf = Flip()\nP.register_parametrization(l, 'weight', f)\n"
        "f.big = True\nP.remove_parametrizations(l, 'weight')\n"
    ),
    "parametrize-setter-fails-midway": (
        "import torch.nn.utils.parametrize as P\nclass Two(torch.nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n        self.bad = False\n"
        "    def forward(self, a, b):\n        return a + b\n"
        "    def right_inverse(self, w):\n"
        "        return [torch.ones(50, 50), 'x'] if self.bad else [w, torch.zeros_like(w)]\n"
        "l = torch.nn.Linear(2, 2)\nt = Two()\nP.register_parametrization(l, 'weight', t)\n"
        "t.bad = True\nl.weight = torch.ones(2, 2)\n"
    ),
    "parametrize-returns-refused-callable": (
        "import torch.nn.utils.parametrize as P\nclass Flip(torch.nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n        self.bad = False\n"
        "    def forward(self, x):\n        return np.ndarray if self.bad else x\n"
        "l = torch.nn.Linear(2, 2)\nf = Flip()\nP.register_parametrization(l, 'weight', f)\n"
        "f.bad = True\nw = l.weight\nw((2,), dtype=object)\n"
    ),
    "parametrize-type-before": (
        "import torch.nn.utils.parametrize as P\nP.type_before_parametrizations\n"
    ),
    "parametrize-cached-generator": (
        "import torch.nn.utils.parametrize as P\nc = P.cached()\nc.inner\n"
    ),
    # transforms: torch's own classes only, never the script's callables
    "transform-callable-in-list": (
        "from torch.distributions import Normal, TransformedDistribution\n"
        "TransformedDistribution(Normal(0.0, 1.0), [print])\n"
    ),
    "transform-ndarray-in-list": (
        "from torch.distributions import Normal, TransformedDistribution\n"
        "TransformedDistribution(Normal(0.0, 1.0), [np.ndarray])\n"
    ),
    "transform-subclass": (
        "from torch.distributions.transforms import ExpTransform\n"
        "class T(ExpTransform):\n    def _call(self, x):\n        return x\n"
    ),
    "transform-base-class": "from torch.distributions.transforms import Transform\n",
    "transform-shared-identity": (
        "from torch.distributions.transforms import identity_transform\n"
    ),
    "transform-inverse-class-call": (
        "from torch.distributions.transforms import ExpTransform\ntype(ExpTransform().inv)(print)\n"
    ),
    "transform-private-inv": (
        "from torch.distributions.transforms import ExpTransform\nExpTransform().inv._inv\n"
    ),
    "transform-private-call": (
        "from torch.distributions.transforms import ExpTransform\nExpTransform()._call\n"
    ),
    "transform-private-cache": (
        "from torch.distributions.transforms import ExpTransform\nt = ExpTransform(cache_size=1)\n"
        "t(torch.ones(1))\nt._cached_x_y\n"
    ),
    "transform-domain-check": (
        "from torch.distributions.transforms import ExpTransform\nExpTransform().domain.check\n"
    ),
    "transform-compose-huge": (
        "from torch.distributions.transforms import ComposeTransform, ExpTransform\n"
        "ComposeTransform([ExpTransform()] * 10**8)\n"
    ),
    "transform-set-attribute": (
        "from torch.distributions.transforms import AffineTransform\nt = AffineTransform(0.0, 1.0)\n"
        "t.loc = print\n"
    ),
    "transform-affine-loc-callable": (
        "from torch.distributions.transforms import AffineTransform\nAffineTransform(print, 1.0)\n"
    ),
    "transformed-transforms-write": (
        "from torch.distributions import Normal, TransformedDistribution\n"
        "from torch.distributions.transforms import ExpTransform\n"
        "d = TransformedDistribution(Normal(0.0, 1.0), [ExpTransform()])\nd.transforms = [print]\n"
    ),
    # functorch's make_functional: the copy it makes is an nn.Module like any other
    "make-functional-of-callable": "import functorch\nfunctorch.make_functional(print)\n",
    "make-functional-params-callable": (
        "import functorch\nf, p = functorch.make_functional(torch.nn.Linear(2, 2))\n"
        "f([print, print], torch.ones(1, 2))\n"
    ),
    "make-functional-wrong-shapes": (
        "import functorch\nf, p = functorch.make_functional(torch.nn.Linear(2, 2))\n"
        "f([torch.ones(99, 99), torch.ones(3)], torch.ones(1, 2))\n"
    ),
    "make-functional-names-map": (
        "import functorch\nf, p = functorch.make_functional(torch.nn.Linear(2, 2))\n"
        "f.names_map\n"
    ),
    "make-functional-private": (
        "import functorch\nf, p = functorch.make_functional(torch.nn.Linear(2, 2))\n"
        "f.stateless_model._parameters\n"
    ),
    # argparse sub-commands: the same parser checks, nothing of argparse's insides
    "subparsers-parser-class": (
        "import argparse\np = argparse.ArgumentParser()\np.add_subparsers(parser_class=type(print))\n"
    ),
    "subparsers-action": (
        "import argparse\np = argparse.ArgumentParser()\np.add_subparsers(action=print)\n"
    ),
    "subparsers-positional": "import argparse\np = argparse.ArgumentParser()\np.add_subparsers('x')\n",
    "subparsers-private-dest": (
        "import argparse\np = argparse.ArgumentParser()\np.add_subparsers(dest='_gradviz')\n"
    ),
    "subparsers-map": (
        "import argparse\np = argparse.ArgumentParser()\ns = p.add_subparsers()\ns._name_parser_map\n"
    ),
    "subparsers-choices": (
        "import argparse\np = argparse.ArgumentParser()\ns = p.add_subparsers()\ns.choices\n"
    ),
    "subparsers-parser-class-attr": (
        "import argparse\np = argparse.ArgumentParser()\ns = p.add_subparsers()\ns._parser_class\n"
    ),
    "add-parser-formatter": (
        "import argparse\np = argparse.ArgumentParser()\ns = p.add_subparsers()\n"
        "s.add_parser('t', formatter_class=type(print))\n"
    ),
    "add-parser-fromfile": (
        "import argparse\np = argparse.ArgumentParser()\ns = p.add_subparsers()\n"
        "s.add_parser('t', fromfile_prefix_chars='@')\n"
    ),
    "add-parser-parents": (
        "import argparse\np = argparse.ArgumentParser()\ns = p.add_subparsers()\n"
        "s.add_parser('t', parents=[1])\n"
    ),
    "add-parser-aliases": (
        "import argparse\np = argparse.ArgumentParser()\ns = p.add_subparsers()\n"
        "s.add_parser('t', aliases=print)\n"
    ),
    "subparsers-required-callable": (
        "import argparse\np = argparse.ArgumentParser()\ns = p.add_subparsers()\ns.required = print\n"
    ),
    "subparsers-set-other": (
        "import argparse\np = argparse.ArgumentParser()\ns = p.add_subparsers()\ns._parser_class = print\n"
    ),
    "subparser-exit": (
        "import argparse\np = argparse.ArgumentParser()\ns = p.add_subparsers()\n"
        "s.add_parser('t').exit(0)\n"
    ),
    "subparser-help": (
        "import argparse\np = argparse.ArgumentParser()\ns = p.add_subparsers()\ns.add_parser('t')\n"
        "p.parse_args(['t', '-h'])\n"
    ),
    "subparser-unknown-command": (
        "import argparse\np = argparse.ArgumentParser()\ns = p.add_subparsers(required=True)\n"
        "s.add_parser('t')\np.parse_args(['nope'])\n"
    ),
    "subparser-defaults-refused": (
        "import argparse\np = argparse.ArgumentParser()\ns = p.add_subparsers()\n"
        "s.add_parser('t').set_defaults(func=np.ndarray)\n"
    ),
    "subparser-argument-type": (
        "import argparse\np = argparse.ArgumentParser()\ns = p.add_subparsers()\n"
        "s.add_parser('t').add_argument('--x', type=type(print))\n"
    ),
}


@pytest.mark.parametrize("name", list(ATTACKS))
def test_attack_is_refused_cleanly(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _refused("import numpy as np\n" + ATTACKS[name], also=ORDINARY)
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("name", ["property-getter-loops", "property-getter-recurses",
                                  "cache-recursion", "cache-unbounded-growth",
                                  "transform-compose-huge"])
def test_unbounded_work_ends_in_a_limit_not_a_hang(name):
    _, failure = _refused("import numpy as np\n" + ATTACKS[name])
    assert failure.error.type in REFUSALS, failure.error


def test_a_refused_state_write_leaves_the_state_as_it_was():
    session, _, failure = _restricted(
        "p = torch.nn.Parameter(torch.ones(2))\nopt = torch.optim.Adam([p])\np.grad = torch.ones(2)\n"
        "opt.step()\nbefore = opt.state[p]['exp_avg'].clone()\n"
        "opt.state[p]['exp_avg'] = torch.ones(9)\n"
    )
    assert failure is not None and failure.error.type == "SandboxError"
    state = session.globals["opt"].state[session.globals["p"]]
    assert torch.equal(state["exp_avg"], session.globals["before"])


def test_a_refused_parametrization_keeps_its_original():
    session, _, failure = _restricted("import numpy as np\n" + ATTACKS["parametrize-setter-changes-shape"])
    assert failure is not None and failure.error.type == "SandboxError"
    layer = session.globals["l"]
    assert layer.parametrizations.weight.original.shape == (2, 2)
    assert layer(torch.ones(1, 2)).shape == (1, 2)
    session, _, failure = _restricted("import numpy as np\n" + ATTACKS["parametrize-remove-changes-shape"])
    assert failure is not None and failure.error.type == "SandboxError"
    assert session.globals["l"].weight.shape == (2, 2)
    session, _, failure = _restricted("import numpy as np\n" + ATTACKS["parametrize-setter-fails-midway"])
    assert failure is not None and failure.error.type == "SandboxError"
    plist = session.globals["l"].parametrizations.weight
    assert plist.original0.shape == plist.original1.shape == (2, 2)


def test_the_script_never_holds_the_real_cache_wrapper_or_property():
    session, _, failure = _restricted(
        "import functools, enum\n"
        "@functools.lru_cache(maxsize=None)\ndef f(x):\n    return x\n"
        "class C:\n    @property\n    def v(self):\n        return 7\n"
        "class E(enum.Enum):\n    A = 1\n"
        "got = [f, f(1), C().v, E.A, E.A.value, type(f)]\n"
    )
    assert failure is None, failure.error.message
    got = session.globals["got"]
    assert not isinstance(got[0], functools_wrapper_type())
    assert got[1:5] == [1, 7, session.globals["E"].A, 1]
    assert all(not isinstance(v, property) for v in session.globals.values())


def functools_wrapper_type() -> type:
    import functools

    return functools._lru_cache_wrapper


def test_a_cached_function_as_a_hook_gives_the_gradient_of_the_plain_function():
    """Hooks take a cached function (capture never runs it: HookNotRun). Plain Python
    cannot be the reference here: on torch 2.13 the engine calling CPython's C
    lru_cache wrapper as a tensor hook stops with "SystemError: bad argument to
    internal function"; the reference is the same script with the plain function."""
    body = (
        "def double(g):\n"
        "    return g * 2\n"
        "x = torch.ones(3, requires_grad=True)\n"
        "x.register_hook(double)\n"
        "y = (x * 3).sum()\n"
        "y.backward()\n"
        "print(x.grad, y.grad_fn)\n"
    )
    _, output, failure = _restricted("import functools\n@functools.cache\n" + body)
    assert failure is None, failure.error.message
    assert _ADDRESS.sub("0x?", output) == _ADDRESS.sub("0x?", _plain(body))


# --- through the real, confined kernel ----------------------------------------------

KERNEL_ATTACKS = (
    "import functools, enum, argparse\n"
    "import torch.nn.utils.parametrize as P\n"
    "from torch.distributions.transforms import ExpTransform\n"
    "class C:\n    @property\n    def v(self):\n        return self.v\n"
    "C().v\n"
    "@functools.cache\ndef f(n):\n    return f(n + 1)\n"
    "f(0)\n"
    "enum.Enum('X', 'a b')\n"
    "p = torch.nn.Parameter(torch.ones(2))\nopt = torch.optim.Adam([p])\np.grad = torch.ones(2)\n"
    "opt.step()\n"
    "opt.state[p]['exp_avg'] = torch.ones(10**6)\n"
    "class Grow(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
    "        self.big = False\n    def forward(self, x):\n        return x\n"
    "    def right_inverse(self, a):\n        return torch.ones(50, 50) if self.big else a\n"
    "l = torch.nn.Linear(2, 2)\ng = Grow()\nP.register_parametrization(l, 'weight', g)\n"
    "g.big = True\nl.weight = torch.ones(2, 2)\n"
    "type(ExpTransform().inv)(print)\n"
    "ap = argparse.ArgumentParser()\nsp = ap.add_subparsers()\nsp.add_parser('t')\n"
    "ap.parse_args(['t', '-h'])\n"
    "opt.step()\n"
    "print('alive', l(torch.ones(1, 2)).shape, opt.state[p]['exp_avg'].shape)\n"
)


def test_attacks_through_the_real_kernel_leave_it_alive(tmp_path):
    statements = run_attacks_in_kernel(tmp_path, KERNEL_ATTACKS)
    failed = [s for s in statements if not s["ok"]]
    assert len(failed) >= 7, [(s.get("line"), s.get("error")) for s in statements]
    for s in failed:
        assert s["error"]["type"] in REFUSALS + ORDINARY, s["error"]
    last = statements[-1]
    assert last["ok"] and "alive torch.Size([1, 2]) torch.Size([2])" in last.get("output", ""), last
    assert sorted(os.listdir(tmp_path)) == ["attacks.py"]


def test_printed_output_has_no_addresses_of_gradviz_objects():
    session, output, failure = _restricted(
        "import functools\n@functools.cache\ndef f(x):\n    return x\nprint(f, repr(f))\n"
    )
    assert failure is None
    assert [m.group() for m in _ADDRESS.finditer(output)] == ["0x000000000000"] * 2
    assert "Interpreter" not in output and "ScriptFunction" not in output


@pytest.mark.parametrize("limit", [50])
def test_a_cache_counts_toward_the_sequence_limit(limit):
    session = Session(
        "import functools\n@functools.cache\ndef f(n):\n    return n\n"
        "for i in range(200):\n    f(i)\n",
        limits=Limits(max_statement_seconds=20, max_sequence_length=limit),
    )
    results = session.run_to_end(keep_going=False)
    failed = [r for r in results if not r.ok]
    assert failed and failed[0].error.type == "LimitExceeded", [r.error for r in failed]
    after = Session("x = 1 + 1\nprint(x)")
    assert after.run_to_end()[-1].output == "2\n"
