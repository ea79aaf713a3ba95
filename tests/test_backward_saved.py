"""Each recorded backward step keeps the saved tensors it used (the inspector shows them
after the pass freed them), compared with plain PyTorch; reading them runs no script hook."""

from __future__ import annotations

import torch

from gradviz.app.demos import find_demo
from gradviz.core.backward import SAVED_VALUES_NODES
from gradviz.core.session import Session


def plain(source: str) -> dict:
    env: dict = {"torch": torch, "dev": "cpu"}
    exec(compile(source, "plain", "exec"), env)  # noqa: S102 - the comparison run
    return env


def steps_of(source: str) -> list[dict]:
    session = Session(source)
    session.run_to_end(keep_going=True)
    return session.snapshot()["backward_passes"][0]["steps"]


def test_a_custom_function_step_keeps_what_it_saved():
    source = find_demo("custom_function").source
    env = plain(source)
    step = next(s for s in steps_of(source) if s["label"] == "MyPowBackward")
    values = [s["value"] for s in step["saved"]]
    # MyPow.forward saved (a, b) = (x, q)
    assert values == [env["x"].item(), env["q"].item()]
    assert [s["shape"] for s in step["saved"]] == [list(env["x"].shape), list(env["q"].shape)]


def test_a_builtin_node_keeps_its_saved_input():
    source = "x = torch.tensor([1.5, -2.0], requires_grad=True)\ny = (x ** 3).sum()\ny.backward()\n"
    env = plain(source)
    step = next(s for s in steps_of(source) if s["label"] == "PowBackward0")
    saved = {s["label"]: s for s in step["saved"]}
    assert saved["self"]["value"] == env["x"].tolist()


def test_reading_saved_tensors_runs_no_unpack_hook():
    source = (
        "x = torch.ones(3, requires_grad=True)\n"
        "def pack(t):\n    return t\n"
        "def unpack(t):\n    print('unpack')\n    return t\n"
        "with torch.autograd.graph.saved_tensors_hooks(pack, unpack):\n    y = x * x\n"
        "y.sum().backward()\n"
    )
    session = Session(source)
    results = session.run_to_end()
    assert results[-1].output.count("unpack") == 2  # the engine's own two unpacks only
    step = next(
        s for s in session.snapshot()["backward_passes"][0]["steps"] if s["label"] == "MulBackward0"
    )
    assert step["saved"] is None  # behind the script's hook: not read, not recorded


def test_a_big_pass_records_no_saved_values():
    n = SAVED_VALUES_NODES + 10
    source = f"x = torch.tensor(1.0, requires_grad=True)\ny = x\nfor i in range({n}):\n    y = y * 1.0\ny.backward()\n"
    steps = steps_of(source)
    assert len(steps) > SAVED_VALUES_NODES
    assert all(s["saved"] is None for s in steps)
