"""Script classes (class Net(nn.Module), plain helpers) against plain PyTorch."""

from __future__ import annotations

import torch

from gradviz.core.capture import named_tensors

from .helpers import run_plain, run_script

NET = """
import torch.nn as nn
import torch.nn.functional as F

class Block(nn.Module):
    def __init__(self, n_in, n_out):
        super().__init__()
        self.lin = nn.Linear(n_in, n_out)

    def forward(self, x):
        return F.relu(self.lin(x))

class Net(nn.Module):
    scale = 2.0

    def __init__(self, hidden=4, *, bias_shift=None):
        super().__init__()
        self.fc1 = Block(3, hidden)
        self.fc2 = nn.Linear(hidden, 1)
        self.hidden = hidden
        self.act = F.relu
        self.shift = bias_shift

    def body(self, x):
        return self.act(self.fc1(x))

    def forward(self, x):
        return self.fc2(self.body(x)) * self.scale

class Scaled(nn.Linear):
    def forward(self, x):
        return super().forward(x) * 0.5

class Meter:
    def __init__(self):
        self.values = []

    def add(self, v):
        self.values.append(v)

torch.manual_seed(0)
net = Net()
head = Scaled(1, 1)
opt = torch.optim.SGD(list(net.parameters()) + list(head.parameters()), lr=0.1)
meter = Meter()
x = torch.randn(5, 3)
y = torch.randn(5, 1)
for step in range(3):
    opt.zero_grad()
    loss = F.mse_loss(head(net(x)), y)
    loss.backward()
    opt.step()
    meter.add(loss.item())
"""


def test_script_module_classes_train_like_plain_pytorch():
    session = run_script(NET, keep_going=False)
    assert all(r.ok for r in session.results), [r.error for r in session.results if not r.ok]
    plain = run_plain(NET)
    ours = session.globals
    assert ours["meter"].values == plain["meter"].values
    mine = named_tensors({"net": ours["net"], "head": ours["head"]})
    theirs = named_tensors({"net": plain["net"], "head": plain["head"]})
    assert list(mine) == list(theirs)
    assert "net.fc1.lin.weight" in mine
    for name, t in theirs.items():
        assert torch.equal(mine[name], t), name
        assert torch.equal(mine[name].grad, t.grad), name
        assert mine[name].requires_grad == t.requires_grad and mine[name].is_leaf == t.is_leaf
    assert type(ours["loss"].grad_fn).__name__ == type(plain["loss"].grad_fn).__name__
    assert ours["net"].hidden == 4 and ours["net"].shift is None


def test_parameters_are_labelled_by_qualified_name_on_the_graph():
    session = run_script(NET)
    labels = {data.get("label") for _, data in session.graph.nodes(data=True)}
    assert "net.fc1.lin.weight" in labels and "net.fc2.bias" in labels
    assert session.snapshot()["tensors"]["net.fc2.weight"]["is_leaf"] is True


def test_keyword_only_argument_with_none_default():
    session = run_script("def f(a, *, b=None):\n    return b\nr = f(1)\n")
    assert session.results[-1].ok and session.globals["r"] is None
    session = run_script("def f(a, *, b):\n    return b\nr = f(1)\n")
    assert not session.results[-1].ok
    assert "missing keyword-only argument 'b'" in session.results[-1].error.message
