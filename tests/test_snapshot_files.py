"""Snapshot files against the schema shipped in the package: real ones pass, damaged ones are
refused with a message that says where (library, CLI and window), never a traceback."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import torch

import gradviz
from gradviz.graph.snapshot_file import SnapshotError, parse_snapshot, snapshot_schema

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def good() -> dict:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))
    with gradviz.record(model) as rec:
        loss = model(torch.randn(2, 3)).pow(2).mean()
        loss.backward(retain_graph=True)
        loss.backward()
    return json.loads(gradviz.snapshot(loss, model=model, recorder=rec).to_json())


def _set(data: dict, path: str, value) -> dict:
    out = copy.deepcopy(data)
    *parents, last = path.split("/")
    target = out
    for key in parents:
        target = target[int(key)] if isinstance(target, list) else target[key]
    if isinstance(target, list):
        target[int(last)] = value
    elif value is _DELETE:
        del target[last]
    else:
        target[last] = value
    return out


_DELETE = object()

#: each passes the checks the loader made before the schema (format, version, graph, tensors)
#: and once made the window raise TypeError/KeyError/AttributeError; "where" is in the message
DAMAGED = {
    "node_not_an_object": ("graph/nodes/0", 5, "graph.nodes[0]"),
    "node_without_id": ("graph/nodes/1/id", _DELETE, "graph.nodes[1]"),
    "node_id_a_number": ("graph/nodes/2/id", 17, "graph.nodes[2].id"),
    "node_kind_unknown": ("graph/nodes/0/kind", "banana", "graph.nodes[0].kind"),
    "node_vars_a_string": ("graph/nodes/0/vars", "loss", "graph.nodes[0].vars"),
    "edge_to_a_missing_node": ("graph/edges/0/target", "fn999999", "graph.edges[0].target"),
    "tensors_a_list": ("tensors", [], "tensors"),
    "tensor_shape_text": ("tensors/loss/shape", "2x3", "tensors.loss.shape"),
    "step_without_node": ("backward_passes/0/steps/0/node", _DELETE, "backward_passes[0].steps[0]"),
    "steps_an_object": ("backward_passes/1/steps", {"0": 1}, "backward_passes[1].steps"),
    "memory_a_list": ("memory", [1, 2], "memory"),
    "history_not_a_list": ("grad_history/0.bias", 0.5, "grad_history.0.bias"),
    "grad_event_a_number": ("grad_events", {"x": [3]}, "grad_events.x[0]"),
}


def damaged(good: dict, name: str) -> dict:
    path, value, _ = DAMAGED[name]
    return _set(good, path, value)


def write(tmp_path: Path, name: str, data) -> Path:
    path = tmp_path / f"{name}.gradviz.json"
    path.write_text(json.dumps(data))
    return path


def test_real_snapshots_pass_the_schema(good, tmp_path):
    assert parse_snapshot(good) is good
    # the window's session snapshots carry statements and results too
    session = {**good, "source": "session", "statements": [{"index": 0, "line": 1, "end_line": 1,
               "source": "x = 1", "ran": True}], "results": [{"ok": True}]}
    assert parse_snapshot(session) is session
    assert gradviz.load(write(tmp_path, "ok", good))["graph"] == good["graph"]


def test_the_schema_ships_in_the_package_and_the_format_doc_points_to_it():
    import fastjsonschema

    schema = snapshot_schema()
    assert schema["$schema"] == "http://json-schema.org/draft-07/schema#"
    assert schema["properties"]["format"] == {"const": "gradviz-snapshot"}
    check = fastjsonschema.compile(schema)  # a well-formed schema compiles
    with pytest.raises(fastjsonschema.JsonSchemaValueException):
        check({"format": "gradviz-snapshot", "version": 1, "graph": {}, "tensors": {}})
    doc = (REPO / "docs" / "snapshot-format.md").read_text()
    assert "gradviz/graph/snapshot.schema.json" in doc


def test_there_are_at_least_seven_damaged_files():
    assert len(DAMAGED) >= 7


@pytest.mark.parametrize("name", list(DAMAGED))
def test_load_says_what_is_wrong_where(good, tmp_path, name):
    path = write(tmp_path, name, damaged(good, name))
    with pytest.raises(SnapshotError) as err:
        gradviz.load(path)
    message = str(err.value)
    assert message.startswith(f"{path.name} is a damaged gradviz snapshot (at {DAMAGED[name][2]}")
    assert "docs/snapshot-format.md" in message


def test_duplicate_node_ids_and_deep_nesting_are_refused(good):
    twice = copy.deepcopy(good)
    twice["graph"]["nodes"].append(dict(twice["graph"]["nodes"][0]))
    with pytest.raises(SnapshotError, match="used twice"):
        parse_snapshot(twice)
    for depth in (150, sys.getrecursionlimit() + 100):  # past MAX_DEPTH; past Python's own limit
        deep: list = []
        for _ in range(depth):
            deep = [deep]
        with pytest.raises(SnapshotError, match=r"at root_values\[0\]\[0\].*nested more than 100"):
            parse_snapshot({**good, "root_values": [deep]})
    shallow: list = []
    for _ in range(20):
        shallow = [shallow]
    assert parse_snapshot({**good, "root_values": [shallow]})["root_values"] == [shallow]


def test_the_fast_nesting_check_draws_the_line_where_the_located_walk_does():
    """``_too_deep`` (containers level by level) must refuse exactly what a walk over
    every value with its depth refuses: nothing deeper than MAX_DEPTH levels."""
    from gradviz.graph.snapshot_file import MAX_DEPTH, _nesting_problem, _too_deep

    def walk_refuses(data):
        stack = [(data, 0)]
        while stack:
            value, depth = stack.pop()
            if depth > MAX_DEPTH:
                return True
            if isinstance(value, dict):
                stack += [(v, depth + 1) for v in value.values()]
            elif isinstance(value, list):
                stack += [(v, depth + 1) for v in value]
        return False

    def nest(n, leaf):
        for _ in range(n):
            leaf = [leaf]
        return leaf

    for n in range(MAX_DEPTH - 3, MAX_DEPTH + 4):
        for leaf in (1, None, [], {}, {"a": 1}, {"a": []}, "text"):
            for data in (nest(n, leaf), {"k": nest(n, leaf)}, [1, "x", {"y": nest(n, leaf)}]):
                refused = walk_refuses(data)
                assert _too_deep(data) is refused, (n, leaf)
                assert (_nesting_problem(data) is not None) is refused


def gradviz_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "gradviz", *args], capture_output=True, text=True, timeout=300,
        cwd=cwd, env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO)},
    )


def test_the_cli_refuses_damaged_files_with_a_message(good, tmp_path):
    for name in DAMAGED:
        path = write(tmp_path, name, damaged(good, name))
        for args in (("export", str(path), "-o", str(tmp_path / "x.svg")), ("run", str(path)),
                     ("open", str(path))):
            proc = gradviz_cli(*args, cwd=tmp_path)
            assert proc.returncode == 2, (name, args, proc.stderr)
            assert "Traceback" not in proc.stderr, proc.stderr
            assert f"at {DAMAGED[name][2]}" in proc.stderr, (name, args, proc.stderr)
    assert not (tmp_path / "x.svg").exists()


def test_export_draws_a_snapshot_file(good, tmp_path):
    path = write(tmp_path, "run", good)
    out = tmp_path / "x.svg"
    proc = gradviz_cli("export", str(path), "-o", str(out), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    svg = ET.parse(out).getroot()
    drawn = {g.get("id") for g in svg.iter("{http://www.w3.org/2000/svg}g") if g.get("id")}
    assert drawn == {n["id"] for n in good["graph"]["nodes"]}
    assert f"{len(drawn)} nodes" in proc.stdout


def test_run_on_a_snapshot_says_so_and_suggests_open(good, tmp_path):
    path = write(tmp_path, "run", good)
    proc = gradviz_cli("run", str(path), cwd=tmp_path)
    assert proc.returncode == 2
    assert "is a gradviz snapshot" in proc.stderr and f"gradviz open {path}" in proc.stderr
    assert proc.stdout == ""


# --- the window -------------------------------------------------------------------------------


def test_the_window_shows_a_dialog_for_each_damaged_file(good, tmp_path, qtbot, main_window,
                                                         monkeypatch):
    pytest.importorskip("PySide6")
    from gradviz.ui import dialogs

    errors: list[tuple[str, str]] = []
    monkeypatch.setattr(dialogs, "show_error", lambda parent, title, text: errors.append((title, text)))
    window = main_window(file=str(write(tmp_path, "good", good)))
    assert window.read_only
    shown = sorted(window.canvas.node_ids())
    for name in DAMAGED:
        before = len(errors)
        assert window.open_path(write(tmp_path, name, damaged(good, name)), ask=False) is False
        assert len(errors) == before + 1, name
        title, text = errors[-1]
        assert title == "Cannot open file" and f"at {DAMAGED[name][2]}" in text
        assert sorted(window.canvas.node_ids()) == shown  # what it showed stays
    # gradviz.show() hands a dict: the same check, the same dialog
    window.open_initial(snapshot=damaged(good, "tensors_a_list"))
    assert errors[-1][0] == "Cannot show the snapshot" and "at tensors" in errors[-1][1]
