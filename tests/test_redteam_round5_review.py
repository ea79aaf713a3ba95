"""Red-team review of restricted mode's round-5 constructs (@property, classmethod,
functools caches, enum, optimizer state, parametrize, transforms, argparse
sub-commands, functorch's make_functional): the attacks of the review that are refused
today, kept as regressions. Each ends in a refusal (or an ordinary Python error) with
the interpreter alive and no file written, as in ``test_restricted_round5``.
"""

from __future__ import annotations

import os

import pytest

from tests.test_restricted_python import ORDINARY, REFUSALS, _refused

ATTACKS = {
    # a library-owned transform list takes no foreign callable through its methods
    "compose-parts-append": (
        "from torch.distributions.transforms import ComposeTransform, ExpTransform\n"
        "c = ComposeTransform([ExpTransform()])\n"
        "c.parts.append(np.ndarray)\n"
        "c(torch.tensor(2))\n"
    ),
    "transformed-transforms-append": (
        "from torch.distributions import Normal, TransformedDistribution\n"
        "from torch.distributions.transforms import ExpTransform\n"
        "d = TransformedDistribution(Normal(0.0, 1.0), [ExpTransform()])\n"
        "d.transforms.append(np.ndarray)\n"
        "d.sample()\n"
    ),
    "transformed-own-list-append": (
        "from torch.distributions import Normal, TransformedDistribution\n"
        "from torch.distributions.transforms import ExpTransform\n"
        "L = [ExpTransform()]\n"
        "d = TransformedDistribution(Normal(0.0, 1.0), L)\n"
        "L.append(np.ndarray)\n"
        "d.sample()\n"
    ),
    "cat-transform-append": (
        "from torch.distributions.transforms import CatTransform, ExpTransform\n"
        "L = [ExpTransform(), ExpTransform()]\n"
        "c = CatTransform(L, 0, [1, 1])\n"
        "L.append(np.ndarray)\n"
    ),
    # a script-made base distribution's values come back as the script's own values
    "transformed-script-base-launders": (
        "from torch.distributions import TransformedDistribution\n"
        "class B:\n    batch_shape = torch.Size()\n    event_shape = torch.Size()\n"
        "    def sample(self, shape=torch.Size()):\n        return np.ndarray\n"
        "    def expand(self, shape):\n        return self\n"
        "d = TransformedDistribution(B(), [], validate_args=False)\n"
        "f = d.sample()\n"
        "f((2,), 'O')\n"
    ),
    # a deep chain of composed transforms ends in the depth limit, the kernel alive
    "compose-nested-deep": (
        "from torch.distributions.transforms import ComposeTransform, ExpTransform\n"
        "c = ExpTransform()\n"
        "for i in range(20000):\n    c = ComposeTransform([c])\n"
        "c(torch.ones(1))\n"
    ),
    "transform-domain-setattr": (
        "from torch.distributions.transforms import ExpTransform\n"
        "ExpTransform().domain.event_dim = 5\n"
    ),
    "transform-cache-size-setattr": (
        "from torch.distributions.transforms import ExpTransform\n"
        "t = ExpTransform(cache_size=1)\nt.cache_size = 5\n"
    ),
    "distributions-biject-to": "from torch.distributions import biject_to\n",
    "distributions-kl-module": "from torch.distributions.kl import register_kl\n",
    "distributions-register-kl": "import torch.distributions as D\nD.register_kl\n",
    "distributions-identity-transform": "import torch.distributions as D\nD.identity_transform\n",
    # a str-mixin enum member is not a str whose format walks attributes
    "str-enum-format": (
        "import enum\nclass E(str, enum.Enum):\n    A = '{0.__class__.__mro__}'\n"
        "E.A.format(E.A)\n"
    ),
    "strenum-format": (
        "import enum\nclass E(enum.StrEnum):\n    A = '{0.__class__}'\nE.A.format(1)\n"
    ),
    # a str-mixin member whose class overrides startswith is no way past the name rules
    "str-enum-name-getattr": (
        "import enum\nclass E(str, enum.Enum):\n    A = '__globals__'\n"
        "    def startswith(self, *a):\n        return False\n"
        "class U:\n    @staticmethod\n    def g(x):\n        return x\n"
        "getattr(U.g, E.A)\n"
    ),
    "str-enum-name-hasattr": (
        "import enum\nclass E(str, enum.Enum):\n    A = '__globals__'\n"
        "    def startswith(self, *a):\n        return False\n"
        "class U:\n    @staticmethod\n    def g(x):\n        return x\n"
        "hasattr(U.g, E.A)\n"
    ),
    "str-enum-name-print-self": (
        "import enum\nclass E(str, enum.Enum):\n    A = '__self__'\n"
        "    def startswith(self, *a):\n        return False\n"
        "getattr(print, E.A)\n"
    ),
    "str-enum-name-setattr": (
        "import enum\nclass E(str, enum.Enum):\n    A = '_parameters'\n"
        "    def startswith(self, *a):\n        return False\n"
        "setattr(torch.nn.Linear(2, 2), E.A, {})\n"
    ),
    "enum-class-keyword": "import enum\nclass E(enum.Enum, boundary=None):\n    A = 1\n",
    # enum's alias search is quadratic for unhashable values: none can be a member
    "enum-unhashable-members": (
        "import enum\nL1 = [0] * 1000\nL2 = [0] * 1000\n"
        "class E(enum.Enum):\n    m0 = (L1, 0)\n    m1 = (L2, 1)\n"
    ),
    # recursion through C slots and library callers ends at the call-depth limit
    "getitem-property-recurses": (
        "class C:\n    @property\n    def __getitem__(self):\n        return self.get\n"
        "    def get(self, k):\n        return self[k]\n"
        "C()[0]\n"
    ),
    "cached-property-call-recurses": (
        "import functools\n"
        "class C:\n    @functools.cached_property\n    def __call__(self):\n"
        "        return self.go\n"
        "    def go(self, n):\n        return sorted([1, 2], key=self)\n"
        "C()(0)\n"
    ),
    "lru-method-recurses-through-map": (
        "import functools\n"
        "class C:\n    @functools.lru_cache(maxsize=None)\n    def go(self, n):\n"
        "        return list(map(self.go, [n + 1]))\n"
        "C().go(0)\n"
    ),
    # what a script class's static and class methods are stays the script's
    "staticmethod-globals": (
        "class U:\n    @staticmethod\n    def g(x):\n        return x\nU.g.__globals__\n"
    ),
    "classmethod-as-callback": (
        "class U:\n    @classmethod\n    def g(cls, x):\n        return x\n"
        "list(map(U.g, [1]))\n"
    ),
    "property-call-impl": (
        "class M(torch.nn.Module):\n    @property\n    def _call_impl(self):\n"
        "        return np.ndarray\n"
    ),
    # optimizer state: replacement buffers of another layout or device end in an error
    "state-sparse-buffer": (
        "p = torch.nn.Parameter(torch.ones(2))\nopt = torch.optim.Adam([p])\n"
        "p.grad = torch.ones(2)\nopt.step()\n"
        "opt.state[p]['exp_avg'] = torch.zeros(2).to_sparse()\nopt.step()\n"
    ),
    "state-expanded-buffer": (
        "p = torch.nn.Parameter(torch.ones(2))\nopt = torch.optim.Adam([p])\n"
        "p.grad = torch.ones(2)\nopt.step()\n"
        "opt.state[p]['exp_avg'] = torch.zeros(1).expand(2)\nopt.step()\n"
    ),
    "state-meta-buffer": (
        "p = torch.nn.Parameter(torch.ones(2))\nopt = torch.optim.Adam([p])\n"
        "p.grad = torch.ones(2)\nopt.step()\n"
        "opt.state[p]['exp_avg'] = torch.zeros(2, device='meta')\nopt.step()\n"
    ),
    # functorch: buffers are vetted like parameters
    "make-functional-buffers-callable": (
        "import functorch\n"
        "f, ps, bs = functorch.make_functional_with_buffers(torch.nn.BatchNorm1d(2))\n"
        "f(ps, [print, print, print], torch.ones(3, 2))\n"
    ),
    "make-functional-buffers-shape": (
        "import functorch\n"
        "f, ps, bs = functorch.make_functional_with_buffers(torch.nn.BatchNorm1d(2))\n"
        "f(ps, [torch.ones(100), torch.ones(1), torch.tensor(0.5)], torch.ones(3, 2))\n"
    ),
    # argparse sub-parsers stop the statement as the top parser does
    "subparser-exit-on-error-false": (
        "import argparse\np = argparse.ArgumentParser()\ns = p.add_subparsers(dest='cmd')\n"
        "q = s.add_parser('t', exit_on_error=False)\nq.add_argument('--n', type=int)\n"
        "p.parse_args(['t', '--n', 'x'])\n"
    ),
}


@pytest.mark.parametrize("name", list(ATTACKS))
def test_review_attack_is_refused_cleanly(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _, failure = _refused("import numpy as np\n" + ATTACKS[name], also=ORDINARY)
    assert failure.error.type in REFUSALS + ORDINARY
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("name", ["getitem-property-recurses", "cached-property-call-recurses",
                                  "lru-method-recurses-through-map"])
def test_recursion_through_new_constructs_ends_in_a_limit(name):
    _, failure = _refused("import numpy as np\n" + ATTACKS[name])
    if "property" in name:  # a property on a name Python calls is refused at the class now
        assert failure.error.type == "SandboxError" and "property" in failure.error.message
    else:
        assert failure.error.type == "LimitExceeded", failure.error


# --- the review's findings, closed -------------------------------------------------------
#
# FINDING 1: a property (or cached_property) on a name Python or torch calls (__call__,
# __getitem__, __init__, forward...) handed the getter's result to CPython, which called
# it with the script's arguments: np.ndarray forged objects and reached real exec.
HEADER = "import numpy as np\nimport torch\nimport torch.nn as nn\n"
PROPERTY_ON_CALLED_NAMES = {
    f"{deco}-{name}": (
        ("import functools\n" if "functools" in deco else "")
        + ("class G(nn.Module):\n" if name == "forward" else "class G:\n")
        + f"    @{deco}\n    def {name}(self):\n        return np.ndarray\n"
        + "g = G()\n"
    )
    for deco in ("property", "functools.cached_property")
    for name in ("__call__", "__getitem__", "__init__", "__post_init__", "__len__",
                 "__iter__", "forward")
}
PROPERTY_ON_CALLED_NAMES["setter-on-call"] = (
    "class G:\n"
    "    @property\n    def x(self):\n        return 1\n"
    "    @x.setter\n    def __call__(self, v):\n        pass\n"
)


@pytest.mark.parametrize("source", PROPERTY_ON_CALLED_NAMES.values(),
                         ids=list(PROPERTY_ON_CALLED_NAMES))
def test_a_property_on_a_name_python_calls_is_refused(source):
    _, failure = _refused(HEADER + source)
    assert "property" in failure.error.message


# FINDING 2: torch's own transform lists (c.parts, d.transforms) and the list a script
# passed in were torch's state: a subscript or in-place write put np.ndarray where torch
# calls it. FINDING 3: a distribution's arg_constraints is torch's class-wide dict.
LIBRARY_CONTAINERS = {
    "compose-parts-item": (
        "from torch.distributions.transforms import ComposeTransform, ExpTransform\n"
        "c = ComposeTransform([ExpTransform()])\n"
        "c.parts[0] = np.ndarray\n"
    ),
    "compose-parts-iadd": (
        "from torch.distributions.transforms import ComposeTransform, ExpTransform\n"
        "c = ComposeTransform([ExpTransform()])\n"
        "p = c.parts\n"
        "p += [np.ndarray]\n"
    ),
    "transformed-transforms-item": (
        "from torch.distributions import Normal, TransformedDistribution\n"
        "from torch.distributions.transforms import ExpTransform\n"
        "d = TransformedDistribution(Normal(0.0, 1.0), [ExpTransform()])\n"
        "d.transforms[0] = np.ndarray\n"
    ),
}


@pytest.mark.parametrize("source", LIBRARY_CONTAINERS.values(), ids=list(LIBRARY_CONTAINERS))
def test_torchs_own_transform_lists_cannot_be_written(source):
    _refused(HEADER + source, also=("TypeError",))


def test_a_list_handed_to_torch_is_not_torchs_state_afterwards():
    """The script rewrites its own list after TransformedDistribution and
    ComposeTransform took it: torch holds a copy, so sampling and calling run only
    the transforms that were checked at the call."""
    from tests.test_restricted_python import _restricted

    session, _, failure = _restricted(
        HEADER
        + "from torch.distributions import Normal, TransformedDistribution\n"
        "from torch.distributions.transforms import ComposeTransform, ExpTransform\n"
        "ts = [ExpTransform()]\n"
        "d = TransformedDistribution(Normal(0.0, 1.0), ts)\n"
        "c = ComposeTransform(ts)\n"
        "ts[0] = np.ndarray\n"
        "s = d.sample((3,))\n"
        "y = c(torch.zeros(2))\n"
        "n = len(d.transforms)\n"
    )
    assert failure is None, failure and failure.error
    g = session.globals
    assert bool((g["s"] > 0).all()) and g["y"].tolist() == [1.0, 1.0] and g["n"] == 1


def test_arg_constraints_writes_never_reach_torchs_class_dict():
    from torch.distributions import Normal, TransformedDistribution

    from tests.test_restricted_python import _restricted

    before = dict(TransformedDistribution.arg_constraints), dict(Normal.arg_constraints)
    _, _, failure = _restricted(
        HEADER
        + "from torch.distributions import Normal, TransformedDistribution\n"
        "from torch.distributions.transforms import ExpTransform\n"
        "d = TransformedDistribution(Normal(0.0, 1.0), [ExpTransform()])\n"
        "d.arg_constraints['loc'] = 1.5\n"
        "Normal(0.0, 1.0).arg_constraints['extra'] = 2.5\n"
        "e = Normal(0.0, 1.0, validate_args=True)\n"
    )
    assert failure is None, failure and failure.error
    assert (dict(TransformedDistribution.arg_constraints), dict(Normal.arg_constraints)) == before
