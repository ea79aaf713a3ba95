"""torchviz.make_dot in scripts, and one clear error at a refused definition."""

from __future__ import annotations

import torch

from gradviz.core.session import Session

MAKE_DOT = """\
import torch
import torch.nn as nn
from torchviz import make_dot
model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
x = torch.randn(2, 3)
yhat = model(x)
dot = make_dot(yhat.mean(), params=dict(model.named_parameters()))
dot.format = "png"
path = dot.render("graph")
"""


def test_make_dot_draws_the_root_it_was_given(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    session = Session(MAKE_DOT)
    results = session.run_to_end()
    assert all(r.ok for r in results), [r.error for r in results if not r.ok]
    snap = session.snapshot()
    (entry,) = snap["make_dot"]
    assert entry["line"] == 7 and entry["roots"] == ["make_dot@7"]
    # the root is the temporary yhat.mean(): its node is on the canvas, named by the line
    graph_nodes = {n["id"]: n for n in snap["graph"]["nodes"]}
    root_node = graph_nodes[entry["root_nodes"][0]]
    plain = {}
    exec(MAKE_DOT.split("from torchviz")[0] + "\n".join(MAKE_DOT.splitlines()[3:6]), plain)  # noqa: S102
    assert root_node["label"] == type(plain["yhat"].mean().grad_fn).__name__
    assert "make_dot@7" in snap["tensors"]
    # params name the model's parameters, as torchviz labels them
    assert sorted(entry["params"]) == sorted(n for n, _ in plain["model"].named_parameters())
    assert set(entry["params"].values()) <= {t["node"] for t in snap["tensors"].values()}
    # render writes nothing and says so; it returns the path torchviz would write
    assert session.globals["path"] == "graph.png"
    assert any("nothing was written" in w for w in results[-1].warnings)
    assert list(tmp_path.iterdir()) == []


def test_make_dot_refuses_what_is_not_a_tensor():
    session = Session("from torchviz import make_dot\nd = make_dot(print)\n")
    results = session.run_to_end(keep_going=True)
    assert not results[1].ok and results[1].error.type in ("TypeError", "SandboxError")
    session = Session("from torchviz import make_dot\nd = make_dot(torch.ones(1), params={'a': print})\n")
    results = session.run_to_end(keep_going=True)
    assert not results[1].ok


def test_make_dot_graph_object_is_closed():
    for tail in ("d.roots", "d.render.__self__", "d.format = print", "d.view('/etc/x')"):
        source = f"from torchviz import make_dot\nd = make_dot(torch.ones(1, requires_grad=True) * 2)\n{tail}\n"
        results = Session(source).run_to_end(keep_going=True)
        if tail.startswith("d.view"):
            assert results[2].ok  # returns a path and writes nothing
        else:
            assert not results[2].ok, tail


def test_a_refused_class_gives_one_error_and_its_users_say_they_depend_on_it():
    source = (
        "import torch\n"
        "class Net(torch.nn.Module):\n"
        "    def __repr__(self):\n"
        "        return 'net'\n"
        "net = Net()\n"
        "out = net(torch.ones(1))\n"
    )
    results = Session(source).run_to_end(keep_going=True)
    assert "__repr__" in results[1].error.message
    assert results[2].error.type == "NameError"
    assert "depends on line 2 (class Net), which failed" in results[2].error.message
    # and the chain goes on: 'net' was never made either
    assert "depends on line 5 (the assignment to net)" in results[3].error.message


def test_a_plain_name_error_stays_plain():
    results = Session("y = undefined_name + 1\n").run_to_end(keep_going=True)
    assert results[0].error.message == "name 'undefined_name' is not defined"
    assert torch.is_grad_enabled()
