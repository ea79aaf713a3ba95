"""What a long export says it is doing (gradviz.export.Progress and the progress hooks)."""

from __future__ import annotations

import io
import time

import networkx as nx

from gradviz.export import Progress, export_graph, export_snapshot


def chain(n: int) -> nx.DiGraph:
    g = nx.DiGraph()
    for i in range(n):
        g.add_node(f"fn{i}", kind="grad_fn", label="SinBackward0")
    for i in range(n - 1):
        g.add_edge(f"fn{i}", f"fn{i + 1}", kind="grad")
    return g


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_exports_say_each_step(tmp_path):
    said: list[str] = []
    export_graph(chain(30), tmp_path / "a.svg", progress=said.append)
    assert said == ["laying out and drawing 30 nodes and 29 edges (svg)"]
    said.clear()
    snap = {"graph": {"nodes": [{"id": "a", "kind": "grad_fn"}], "edges": []}}
    export_snapshot(snap, tmp_path / "a.html", progress=said.append)
    assert said == ["building the interactive page of 1 nodes, 0 edges and 0 backward passes"]
    assert (tmp_path / "a.html").stat().st_size > 0


def test_progress_is_quiet_for_a_quick_export_and_speaks_for_a_slow_one():
    quick = Terminal()
    with Progress(quick, after=5.0) as progress:
        progress("drawing")
    assert quick.getvalue() == ""

    slow = Terminal()
    with Progress(slow, after=0.05) as progress:
        progress("running the script")
        deadline = time.monotonic() + 5
        while "running" not in slow.getvalue() and time.monotonic() < deadline:
            time.sleep(0.01)  # the step under way is shown once the export is slow
        progress("drawing 3 nodes")
        progress("drawing 3 nodes")  # the same words again: no second line
    lines = slow.getvalue().splitlines()
    assert [line.split(" (")[0] for line in lines] == [
        "gradviz: running the script", "gradviz: drawing 3 nodes",
    ]
    assert all(line.endswith(" s)") for line in lines)


def test_progress_writes_nothing_to_a_pipe():
    pipe = io.StringIO()  # not a terminal: a --json run's stderr, a log
    with Progress(pipe, after=0.0) as progress:
        progress("drawing")
    assert pipe.getvalue() == ""
    with Progress(pipe, after=0.0, always=True) as progress:
        progress("drawing")
    assert pipe.getvalue().startswith("gradviz: drawing (")
