"""The inspector's chain rule (gradviz.graph.chain_rule, no Qt): right totals, bounded work.

Issue 11: the old depth-first search walked every root→target path, so
``y = (y*y)*0.5`` in a 20-iteration loop (2**20 paths) froze the window on a
node click. The totals here are checked against plain PyTorch's ``x.grad``;
the work is checked with the module's own counter, never with a clock.
"""

from __future__ import annotations

import copy
import math

import pytest

from gradviz.graph.chain_rule import _compact, chain_rule, chain_rule_result

from .helpers import run_plain, run_script


def _scalar_pass(source: str) -> dict:
    snapshot = run_script(source).snapshot()
    passes = snapshot["backward_passes"]
    assert len(passes) == 1, passes
    return passes[0]


def _node_of(bpass: dict, name: str) -> str:
    """The AccumulateGrad node of the leaf called ``name``."""
    for step in bpass["steps"]:
        if step["label"] == "AccumulateGrad" and name in step.get("vars", []):
            return step["node"]
    raise AssertionError(f"no AccumulateGrad for {name}")


def _x_grad(source: str) -> float:
    return float(run_plain(source)["x"].grad)


def _loop(iterations: int) -> str:
    return (
        "import torch\n"
        "x = torch.tensor(2.0, requires_grad=True)\n"
        "y = x\n"
        f"for _ in range({iterations}):\n"
        "    y = (y * y) * 0.5\n"
        "z = y\n"
        "z.backward()\n"
    )


SINGLE = (
    "import torch\nx = torch.tensor(0.3, requires_grad=True)\nz = (x * 2).exp()\nz.backward()\n"
)
TWO = "import torch\nx = torch.tensor(0.7, requires_grad=True)\nz = x * x + x.sin()\nz.backward()\n"


def test_a_single_path_multiplies_to_x_grad():
    bpass = _scalar_pass(SINGLE)
    result = chain_rule_result(bpass, _node_of(bpass, "x"))
    expected = _x_grad(SINGLE)
    assert result is not None
    assert result.path_count == 1 and len(result.paths) == 1
    assert result.total == pytest.approx(expected, rel=1e-5)
    assert result.paths[0].product == pytest.approx(expected, rel=1e-5)
    assert result.lines[0].startswith("dz/dx = 1 × ")
    assert result.lines[0].endswith(f"= {round(expected, 4)}")
    assert chain_rule(bpass, _node_of(bpass, "x")) == result.lines


def test_two_paths_add_up_to_x_grad():
    bpass = _scalar_pass(TWO)
    result = chain_rule_result(bpass, _node_of(bpass, "x"))
    expected = _x_grad(TWO)
    assert result is not None
    # x * x reaches x twice (both operands), x.sin() once
    assert result.path_count == 3 and len(result.paths) == 3 and not result.truncated
    assert result.total == pytest.approx(expected, rel=1e-5)
    assert math.fsum(p.product for p in result.paths) == pytest.approx(expected, rel=1e-5)
    assert result.lines[-2].startswith("dz/dx = ")
    assert result.lines[-2].endswith(f"= {round(expected, 4)} (the paths add up)")
    assert not any("paths shown" in line for line in result.lines)


@pytest.mark.parametrize("iterations", [5, 22, 40])
def test_exponentially_many_paths_give_the_total_with_bounded_work(iterations):
    source = _loop(iterations)
    bpass = _scalar_pass(source)
    target = _node_of(bpass, "x")
    expected = _x_grad(source)
    assert expected == 2.0**iterations  # x = 2 is a fixed point of y*y/2 and dy/dy' = 2

    result = chain_rule_result(bpass, target, max_paths=6)
    assert result is not None
    assert result.path_count == 2**iterations
    assert result.total == pytest.approx(expected, rel=1e-6)
    assert len(result.paths) == min(6, 2**iterations)
    for path in result.paths:
        assert path.product == pytest.approx(expected / 2**iterations, rel=1e-6)
        assert len(path.factors) == 2 * iterations + 1  # the seed, then one per edge
    # O(nodes + edges + max_paths × path length), not O(paths)
    nodes = len(bpass["steps"])
    edges = sum(len(s.get("targets", [])) for s in bpass["steps"])
    path_length = 2 * iterations + 1
    assert result.work <= 8 * (nodes + edges) + 4 * 6 * path_length
    lines = chain_rule(bpass, target)
    assert lines == result.lines
    if iterations > 2:
        assert f"(6 of {2**iterations:,} paths shown; the total sums all of them)" in lines
        terms = " + ".join(_compact(p.product) for p in result.paths)
        assert (
            lines[-3] == f"d{result.of}/dx = {terms} + … = {_compact(expected)} (the paths add up)"
        )


def test_the_work_does_not_grow_with_the_path_count():
    """Doubling the paths 18 more times costs about the work of 18 more iterations."""
    small = chain_rule_result(*_loop_pass(22))
    large = chain_rule_result(*_loop_pass(40))
    assert small is not None and large is not None
    assert large.path_count == 2**18 * small.path_count
    assert large.work < 3 * small.work


def _loop_pass(iterations: int) -> tuple[dict, str]:
    bpass = _scalar_pass(_loop(iterations))
    return bpass, _node_of(bpass, "x")


def test_a_path_budget_of_one_or_zero_still_gives_the_total():
    bpass, target = _loop_pass(10)
    for budget in (0, 1):
        result = chain_rule_result(bpass, target, max_paths=budget)
        assert result is not None
        assert len(result.paths) == budget and result.path_count == 1024
        assert result.total == pytest.approx(1024.0)
        assert f"({budget} of 1,024 paths shown; the total sums all of them)" in result.lines


def test_nodes_off_the_way_to_the_target_are_not_walked():
    """A huge branch that never reaches x (it only feeds w) costs its edges once, not its paths."""
    source = (
        "import torch\n"
        "x = torch.tensor(0.5, requires_grad=True)\n"
        "w = torch.tensor(2.0, requires_grad=True)\n"
        "y = w\n"
        "for _ in range(30):\n"
        "    y = (y * y) * 0.5\n"
        "z = y + x.exp()\n"
        "z.backward()\n"
    )
    bpass = _scalar_pass(source)
    result = chain_rule_result(bpass, _node_of(bpass, "x"))
    assert result is not None
    assert result.path_count == 1
    assert result.total == pytest.approx(_x_grad(source), rel=1e-6)
    edges = sum(len(s.get("targets", [])) for s in bpass["steps"])
    assert result.work <= 4 * (len(bpass["steps"]) + edges)


def test_a_non_scalar_pass_has_no_chain_rule():
    source = (
        "import torch\n"
        "x = torch.tensor([1.0, 2.0], requires_grad=True)\n"
        "z = x * 3\n"
        "z.backward(torch.ones(2))\n"
    )
    snapshot = run_script(source).snapshot()
    bpass = snapshot["backward_passes"][0]
    assert chain_rule(bpass, _node_of(bpass, "x")) == []
    assert chain_rule_result(bpass, _node_of(bpass, "x")) is None


def test_a_made_up_pass_with_a_cycle_or_an_unknown_target_ends():
    bpass = {
        "root": ["a"],
        "steps": [
            {
                "node": "a",
                "label": "A",
                "grad_outputs": [1.0],
                "grad_inputs": [2.0],
                "targets": ["b"],
                "vars": ["z"],
            },
            {
                "node": "b",
                "label": "B",
                "grad_outputs": [2.0],
                "grad_inputs": [4.0, 6.0],
                "targets": ["a", "c"],
            },
            {
                "node": "c",
                "label": "C",
                "grad_outputs": [6.0],
                "grad_inputs": [],
                "targets": [],
                "vars": ["x"],
            },
        ],
    }
    result = chain_rule_result(copy.deepcopy(bpass), "c")
    assert result is not None and result.path_count == 1 and result.total == pytest.approx(6.0)
    assert result.lines[0] == "dz/dx = 1 × 2 × 3 = 6"
    assert chain_rule(bpass, "nowhere") == []


def test_a_ten_thousand_deep_chain_needs_no_recursion():
    depth = 10_000
    steps = [
        {
            "node": f"n{i}",
            "label": "MulBackward0",
            "grad_outputs": [1.0],
            "grad_inputs": [1.0],
            "targets": [f"n{i + 1}"],
            "vars": ["z"] if i == 0 else [],
        }
        for i in range(depth)
    ]
    steps.append(
        {"node": f"n{depth}", "label": "AccumulateGrad", "grad_outputs": [1.0], "vars": ["x"]}
    )
    result = chain_rule_result({"root": ["n0"], "steps": steps}, f"n{depth}")
    assert result is not None and result.path_count == 1 and result.total == 1.0
    assert len(result.paths[0].factors) == depth + 1
