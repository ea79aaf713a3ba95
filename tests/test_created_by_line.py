"""A node made in a loop or a called function is named by the line that made it
(issue 22: "created by line 25: for epoch in range(3): optimizer..." named the whole
loop). Both engines note, line by line, the counter torch numbers new autograd nodes
with (gradviz.core.modules.LineBirths)."""

from __future__ import annotations

import pytest

from gradviz.core.session import Session

SCRIPT = """\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 1)

    def forward(self, x):
        h = torch.tanh(self.fc(x))
        return h * 2


net = Net()
x = torch.ones(4, 3, requires_grad=True)
for step in range(2):
    y = x * 3
    z = y.sin()
    out = net(z).sum()
w = out + 1
"""


def _line(text: str) -> int:
    return next(i for i, line in enumerate(SCRIPT.splitlines(), 1) if line.strip() == text)


@pytest.fixture(params=["restricted", "trusted"])
def session(request):
    s = Session(SCRIPT, trusted=request.param == "trusted")
    results = s.run_to_end()
    assert all(r.ok for r in results), [r.error for r in results if not r.ok]
    return s


def test_each_node_is_named_by_the_line_that_made_it(session):
    made = {d["label"]: d.get("line") for _, d in session.graph.nodes(data=True)
            if d.get("kind") == "grad_fn"}
    assert made["MulBackward0"] in (_line("y = x * 3"), _line("return h * 2"))
    assert made["SinBackward0"] == _line("z = y.sin()")
    assert made["TanhBackward0"] == _line("h = torch.tanh(self.fc(x))")  # inside forward
    assert made["AddmmBackward0"] == _line("h = torch.tanh(self.fc(x))")
    assert made["SumBackward0"] == _line("out = net(z).sum()")  # after forward returned
    assert made["AddBackward0"] == _line("w = out + 1")
    # the statement stays the loop's: the timeline and the guide step by statements
    loop = next(s.index for s in session.statements if s.source.startswith("for "))
    sin = next(d for _, d in session.graph.nodes(data=True) if d.get("label") == "SinBackward0")
    assert sin["statement"] == loop


def test_the_inspector_and_the_editor_show_the_inner_line(qtbot, session):
    from gradviz.ui.panels import InspectorPanel

    state = session.snapshot()
    sin = next(n for n in state["graph"]["nodes"] if n["label"] == "SinBackward0")
    panel = InspectorPanel()
    qtbot.addWidget(panel)
    panel.set_state(state)
    panel.show_node(sin["id"])
    assert f"line {_line('z = y.sin()')}: z = y.sin()" in panel.text()
    tanh = next(n for n in state["graph"]["nodes"] if n["label"] == "TanhBackward0")
    panel.show_node(tanh["id"])
    assert f"line {_line('h = torch.tanh(self.fc(x))')}: h = torch.tanh(self.fc(x))" in panel.text()


NESTED = """\
import torch
import torch.nn as nn


class Block(nn.Module):
    def forward(self, x):
        h = x.exp()
        return h + 1


def double(module, inputs, output):
    return output * 2


lin = nn.Linear(2, 2)
lin.register_forward_hook(double)
model = nn.Sequential(lin, nn.Sequential(Block()))
y = model(torch.ones(1, 2)).sum()
"""


def _nested_line(text: str) -> int:
    return next(i for i, line in enumerate(NESTED.splitlines(), 1) if line.strip() == text)


@pytest.mark.parametrize("engine", ["restricted", "trusted"])
def test_script_code_inside_library_modules_is_still_traced(engine):
    """Under settrace a library module's forward runs untraced (speed); the script's
    own module nested in library containers, and a hook the script put on a library
    module, still run under the tracer: their lines name the nodes they make, and
    the debugger stops inside them."""
    from gradviz.core.debugger import Pause

    session = Session(NESTED, trusted=engine == "trusted")
    results = session.run_to_end()
    assert all(r.ok for r in results), [r.error for r in results if not r.ok]
    made = {d["label"]: d.get("line") for _, d in session.graph.nodes(data=True)
            if d.get("kind") == "grad_fn"}
    assert made["ExpBackward0"] == _nested_line("h = x.exp()")
    assert made["MulBackward0"] == _nested_line("return output * 2")
    assert made["AddBackward0"] == _nested_line("return h + 1")
    # the debugger steps into the nested script forward and into the hook
    session = Session(NESTED, trusted=engine == "trusted")
    last = next(s.index for s in session.statements if s.source.startswith("y = "))
    session.run_to(last)
    lines = []
    outcome = session.debug("into")
    while isinstance(outcome, Pause) and len(lines) < 20:
        lines.append(outcome.line)
        outcome = session.debug("into")
    assert _nested_line("return output * 2") in lines, lines
    assert _nested_line("h = x.exp()") in lines, lines
