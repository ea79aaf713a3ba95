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
    def __init__(self, n_in, n_out):
        super(Scaled, self).__init__(n_in, n_out)

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


LANGUAGE = """
import math
from torch.autograd.function import once_differentiable
x = torch.tensor([1., 2.], requires_grad=True)
y = (x * x).sum()
print(y.grad_fn.name(), len(y.grad_fn.next_functions))
saved = y.grad_fn.next_functions[0][0]._saved_self
print(saved)
it = iter([1, 2, 3])
print(next(it), next(it), repr('a'))
print("{} and {name:>5} {:.2f}".format(1.5, 2.25, name="ab"))
try:
    z = torch.ones(2) @ torch.ones(3)
except (KeyError, RuntimeError) as e:
    print("caught", str(e))
else:
    print("no error")
finally:
    print("finally")
try:
    raise ValueError("mine")
except ValueError as e:
    print("caught", e)
@torch.no_grad()
def double(t):
    return t * 2
@torch.no_grad
def triple(t):
    return t * 3
print(double(x).requires_grad, triple(x).requires_grad)
def twice(f):
    def g(a):
        return f(f(a))
    return g
@twice
def inc(a):
    return a + 1
print(inc(1), math.sqrt(16))
class MyExp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, i):
        r = i.exp()
        ctx.save_for_backward(r)
        return r
    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        r, = ctx.saved_tensors
        return g * r
o = MyExp.apply(x).sum()
o.backward()
print(x.grad)
if __name__ == "__main__":
    print("main")
"""


def test_language_features_print_what_plain_python_prints():
    import contextlib
    import io

    session = run_script(LANGUAGE, keep_going=False)
    assert all(r.ok for r in session.results), [r.error for r in session.results if not r.ok]
    ours = "".join(r.output for r in session.results)
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        exec(compile(LANGUAGE, "<plain>", "exec"), {"torch": torch, "__name__": "__main__"})  # noqa: S102
    assert ours == buffer.getvalue()


VERSION_COUNTER = """
x = torch.ones(3, requires_grad=True)
y = (x * 2 + x * 3 + x * 4).sum()
y.backward()
v = x.grad._version
w = torch.ones(2, requires_grad=True)
h = w.register_hook(lambda g: g * 2)
z = (w * w).sum()
z.backward()
"""


def test_backward_under_the_guard_behaves_like_plain_pytorch():
    """The engine runs outside the op guard, so a gradient summed from three paths
    is accumulated in place as in PyTorch (its version counter reads the same),
    while a script hook the engine calls still runs (under the guard)."""
    session = run_script(VERSION_COUNTER, keep_going=False)
    assert all(r.ok for r in session.results), [r.error for r in session.results if not r.ok]
    plain = run_plain(VERSION_COUNTER)
    assert session.globals["v"] == plain["v"] == plain["x"].grad._version
    assert torch.equal(session.globals["x"].grad, plain["x"].grad)
    assert torch.equal(session.globals["w"].grad, plain["w"].grad)
    backward = [r for r in session.results if r.source == "y.backward()"][0]
    assert backward.allocated_bytes == plain["x"].grad.untyped_storage().nbytes()


def test_hooks_called_by_the_engine_are_still_guarded():
    session = run_script(
        "w = torch.ones(2, requires_grad=True)\n"
        "h = w.register_hook(lambda g: torch.empty(10**12))\n"
        "z = (w * w).sum()\n"
        "z.backward()\n"
    )
    last = session.results[-1]
    assert not last.ok and last.error.limit in ("max_op_elements", "max_op_bytes")


def test_backward_adds_no_warning_of_gradviz_s_own():
    """PyTorch warns when .grad of a non-leaf is read; gradviz must not read it for you."""
    session = run_script(
        "x = torch.ones(2, requires_grad=True)\ny = x * 2\nz = y.sum()\nz.backward()\n"
    )
    assert all(r.ok and not r.warnings for r in session.results), [
        (r.source, r.warnings) for r in session.results
    ]


MODULE_HOOKS = """
import torch.nn as nn
torch.manual_seed(0)
net = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
seen = []
def remember(module, inputs, output):
    seen.append(tuple(output.shape))
def scale_input(module, inputs):
    return (inputs[0] * 2,)
def clip_grad(module, grad_input, grad_output):
    return (grad_input[0].clamp(-0.1, 0.1),)
def init_weights(m):
    if isinstance(m, nn.Linear):
        nn.init.constant_(m.weight, 0.5)
net.apply(init_weights)
h1 = net[0].register_forward_hook(remember)
h2 = net[2].register_forward_pre_hook(scale_input)
h3 = net[2].register_full_backward_hook(clip_grad)
x = torch.randn(5, 3, requires_grad=True)
loss = net(x).sum()
loss.backward()
h1.remove()
out = net(x).sum()
"""


def test_module_hooks_and_apply_with_script_functions_match_plain_pytorch():
    session = run_script(MODULE_HOOKS, keep_going=False)
    assert all(r.ok for r in session.results), [r.error for r in session.results if not r.ok]
    plain = run_plain(MODULE_HOOKS)
    ours = session.globals
    assert ours["seen"] == plain["seen"]
    assert torch.equal(ours["loss"], plain["loss"]) and torch.equal(ours["out"], plain["out"])
    assert torch.equal(ours["x"].grad, plain["x"].grad)
    for (name, p), (_, q) in zip(ours["net"].named_parameters(), plain["net"].named_parameters()):
        assert torch.equal(p, q) and torch.equal(p.grad, q.grad), name


DATA_LOADING = """
import torch.nn as nn
from torch.utils.data import TensorDataset, DataLoader
torch.manual_seed(0)
x = torch.randn(12, 3)
y = torch.randn(12, 1)
ds = TensorDataset(x, y)
dl = DataLoader(ds, batch_size=5, shuffle=True)
model = nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
sizes = []
for epoch in range(2):
    for xb, yb in dl:
        loss = ((model(xb) - yb) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        sizes.append(xb.shape[0])
first = ds[0]
xd = x.type(torch.float64)
"""


def test_tensor_dataset_and_dataloader_match_plain_pytorch():
    session = run_script(DATA_LOADING, keep_going=False)
    assert all(r.ok for r in session.results), [r.error for r in session.results if not r.ok]
    plain = run_plain(DATA_LOADING)
    ours = session.globals
    assert ours["sizes"] == plain["sizes"] == [5, 5, 2, 5, 5, 2]
    assert torch.equal(ours["loss"], plain["loss"])
    assert torch.equal(ours["model"].weight, plain["model"].weight)
    assert torch.equal(ours["model"].weight.grad, plain["model"].weight.grad)
    assert ours["xd"].dtype == plain["xd"].dtype == torch.float64


def test_script_functions_stored_on_objects_stay_callable():
    src = (
        "import torch.nn as nn\n"
        "class Lambda(nn.Module):\n"
        "    def __init__(self, func):\n"
        "        super().__init__()\n"
        "        self.func = func\n"
        "    def forward(self, x):\n"
        "        return self.func(x)\n"
        "def flatten(x):\n"
        "    return x.view(x.size(0), -1)\n"
        "m = nn.Sequential(Lambda(flatten), nn.Linear(4, 1), Lambda(lambda t: t * 2))\n"
        "x = torch.ones(3, 2, 2)\n"
        "y = m(x)\n"
        "seen = []\n"
        "h = x.requires_grad_().register_hook(m[0].func)\n"
    )
    session = run_script(src, keep_going=False)
    assert all(r.ok for r in session.results), [r.error for r in session.results if not r.ok]
    assert session.globals["y"].shape == (3, 1)
