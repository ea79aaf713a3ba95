"""Scale benchmark: big autograd graphs from capture to paint, against Graphviz `dot`.

Run:  QT_QPA_PLATFORM=offscreen python3 benchmarks/bench_scale.py [--layers 24 96] [--no-dot]
          [--big 10000 50000 100000] [--repeat 1]

For a 5,000-op chain and 24/96-layer nn.TransformerEncoder backward graphs it
prints capture, layout, scene build, first paint, full-view and zoomed paint
times, and `dot -Tsvg` on the same graph in the same run (where Graphviz is
installed) as a ratio; then the step latency (a statement adding ~10 nodes to
a ~2,000-node graph, from Step to repaint).

Then big graphs in the window (issue 12): for chains of about 10k, 50k and 100k
nodes saved as snapshots, a fresh process opens each in the real window
(``MainWindow.open_path``) and reports the seconds from opening to the first
paint of the canvas with the graph on it (split into reading the file, the
layout, and the canvas's ``set_graph``) and the window process's peak RSS. The
canvas alone (``set_graph`` of the laid-out graph, then its first paint) is
timed in this process too. Figures, not assertions: machines are noisy.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

import gradviz  # noqa: E402
from gradviz.core.capture import graph_from_json  # noqa: E402
from gradviz.export import graph_to_dot  # noqa: E402
from gradviz.graph.layout import layout  # noqa: E402


def chain_graph(n: int = 5000) -> tuple[torch.Tensor, dict]:
    x = torch.tensor(1.0, requires_grad=True)
    y = x
    for i in range(n):
        y = y.sin() if i % 2 else y.cos()
    return y, {"x": x}


def transformer_graph(layers: int) -> tuple[torch.Tensor, torch.nn.Module]:
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        layer = torch.nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128)
        enc = torch.nn.TransformerEncoder(layer, num_layers=layers)
    out = enc(torch.randn(8, 2, 64)).sum()
    return out, enc


def timed(fn, repeat: int = 1):
    best, result = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t)
    return best, result


def paint_ms(canvas, app) -> float:
    from PySide6.QtGui import QImage, QPainter

    image = QImage(canvas.viewport().size(), QImage.Format.Format_ARGB32_Premultiplied)
    times = []
    for _ in range(5):
        painter = QPainter(image)
        t = time.perf_counter()
        canvas.render(painter)
        painter.end()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1000


def bench_graph(name: str, make, app, use_dot: bool, dot_timeout: float) -> dict:
    from gradviz.ui.canvas import GraphCanvas

    root, extra = make()
    kwargs = {"model": extra} if isinstance(extra, torch.nn.Module) else {"names": extra}
    capture_s, snap = timed(lambda: gradviz.snapshot(root, **kwargs))
    graph = graph_from_json(snap["graph"])
    layout_s, positions = timed(lambda: layout(graph), repeat=2)
    pos = {k: [float(x), float(y)] for k, (x, y) in positions.items()}

    canvas = GraphCanvas()
    canvas.resize(1400, 900)
    scene_s, _ = timed(lambda: canvas.set_graph(snap["graph"], pos))
    canvas.show()
    t = time.perf_counter()
    app.processEvents()
    canvas.viewport().repaint()
    first_paint_s = time.perf_counter() - t
    canvas.fit_to_view()
    app.processEvents()
    full_ms = paint_ms(canvas, app)
    canvas.reset_zoom()
    app.processEvents()
    zoomed_ms = paint_ms(canvas, app)
    canvas.close()
    canvas.deleteLater()
    app.processEvents()

    dot_s = None
    if use_dot and shutil.which("dot"):
        source = graph_to_dot(graph)
        t = time.perf_counter()
        try:
            subprocess.run(
                ["dot", "-Tsvg", "-o", os.devnull], input=source, text=True, check=True,
                timeout=dot_timeout,
            )
            dot_s = time.perf_counter() - t
        except subprocess.TimeoutExpired:
            dot_s = float("inf")
    ours = capture_s + layout_s + scene_s
    return {
        "graph": name,
        "nodes": graph.number_of_nodes(),
        "edges": graph.number_of_edges(),
        "capture_s": capture_s,
        "layout_s": layout_s,
        "scene_s": scene_s,
        "first_paint_s": first_paint_s,
        "paint_full_ms": full_ms,
        "paint_zoomed_ms": zoomed_ms,
        "ours_s": ours,
        "dot_s": dot_s,
        "ratio": (dot_s / ours) if dot_s else None,
    }


WINDOW_PROBE = r"""
import json, os, sys, tempfile, time
from pathlib import Path
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
from PySide6.QtCore import QSettings
from gradviz.ui.app import create_application
from gradviz.ui.main_window import MainWindow
app = create_application([])
tmp = tempfile.mkdtemp()
w = MainWindow(settings=QSettings(f"{tmp}/s.ini", QSettings.Format.IniFormat), data_dir=tmp)
w.resize(1400, 900); w.show()
for _ in range(20):
    app.processEvents(); time.sleep(0.01)
canvas = w.canvas
spent = [0.0]
set_graph = canvas.set_graph
def timed_set_graph(*args, **kwargs):
    t = time.perf_counter()
    try:
        return set_graph(*args, **kwargs)
    finally:
        spent[0] += time.perf_counter() - t
canvas.set_graph = timed_set_graph
t0 = time.perf_counter()
w.open_path(Path(sys.argv[1]), ask=False)
opened = time.perf_counter() - t0
end = time.time() + 600
while time.time() < end and len(canvas.node_ids()) == 0:
    app.processEvents(); time.sleep(0.001)
canvas.viewport().repaint()
first_paint = time.perf_counter() - t0
for _ in range(20):
    app.processEvents(); time.sleep(0.01)
nodes = len(canvas.node_ids())
status = {l.split(":")[0]: int(l.split()[1]) / 1024 for l in open("/proc/self/status")
          if l.startswith(("VmHWM", "VmRSS"))}
# VmHWM, not ru_maxrss: after fork the child's ru_maxrss starts at the parent's size.
print(json.dumps({"open_s": opened, "first_paint_s": first_paint, "canvas_s": spent[0],
                  "peak_mb": status["VmHWM"], "rss_mb": status["VmRSS"],
                  "torch_loaded": "torch" in sys.modules, "nodes": nodes}))
w.close()
"""


def chain_snapshot(nodes: int) -> dict:
    """A sin/cos chain's snapshot with about ``nodes`` nodes (two per op: the grad_fn and
    its saved tensor)."""
    root, names = chain_graph(max(1, (nodes - 3) // 2))
    return gradviz.snapshot(root, names=names)


def window_open(snap: dict) -> dict:
    """Open ``snap`` in the real window, in a fresh process: seconds to its first paint
    and the process's peak RSS."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.gradviz.json"
        gradviz.save(snap, path)
        proc = subprocess.run(
            [sys.executable, "-c", WINDOW_PROBE, str(path)], capture_output=True, text=True,
            cwd=Path(__file__).resolve().parents[1], timeout=900,
        )
    if proc.returncode != 0:
        return {"error": proc.stderr[-500:]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def canvas_only(snap: dict, app) -> dict:
    """The canvas alone, in this process: set_graph of the laid-out graph, then the first
    paint of a 1400x900 view (as the window shows it: fitted, readable)."""
    import gc

    from gradviz.ui.canvas import GraphCanvas

    positions = layout(graph_from_json(snap["graph"]))
    pos = {k: [float(x), float(y)] for k, (x, y) in positions.items()}
    gc.collect()
    canvas = GraphCanvas()
    canvas.resize(1400, 900)
    canvas.show()
    app.processEvents()
    t = time.perf_counter()
    canvas.set_graph(snap["graph"], pos)
    scene_s = time.perf_counter() - t
    app.processEvents()
    canvas.viewport().repaint()
    first_paint_s = time.perf_counter() - t
    canvas.close()
    canvas.deleteLater()
    app.processEvents()
    return {"scene_s": scene_s, "first_paint_s": first_paint_s}


def big_graphs(sizes: list[int], app, repeat: int) -> None:
    print("\nbig graphs in the window (issue 12: 100k nodes open in under 5 s, under 600 MB)")
    head = (f"{'nodes':>8}{'canvas s':>10}{'canvas 1st paint s':>20}{'window open s':>15}"
            f"{'window canvas s':>17}{'window 1st paint s':>20}{'window RSS MB':>15}")
    print(head)
    print("-" * len(head))
    for n in sizes:
        snap = chain_snapshot(n)
        runs = [canvas_only(snap, app) for _ in range(repeat)]
        wins = [window_open(snap) for _ in range(repeat)]
        nodes = len(snap["graph"]["nodes"])
        del snap
        bad = next((w for w in wins if "error" in w), None)
        if bad is not None:
            print(f"{nodes:>8,}  window probe failed: {bad['error']}")
            continue
        print(f"{nodes:>8,}{min(r['scene_s'] for r in runs):>10.2f}"
              f"{min(r['first_paint_s'] for r in runs):>20.2f}"
              f"{min(w['open_s'] for w in wins):>15.2f}{min(w['canvas_s'] for w in wins):>17.2f}"
              f"{min(w['first_paint_s'] for w in wins):>20.2f}"
              f"{min(w['peak_mb'] for w in wins):>15.0f}", flush=True)
    print("canvas: set_graph and the first paint in this process; window: a fresh process "
          "opens the saved snapshot (open: reading and checking the file; canvas: its "
          "set_graph calls; 1st paint: from opening to the canvas painted with the graph, "
          "the layout on the window's worker included); RSS: the window process's peak "
          f"(VmHWM). Best of {repeat}.")


def fmt(v, unit=""):
    if v is None:
        return "-"
    if v == float("inf"):
        return "timeout"
    return f"{v:.3f}{unit}" if unit == "" else f"{v:.1f}{unit}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, nargs="*", default=[24, 96])
    parser.add_argument("--no-dot", action="store_true")
    parser.add_argument("--dot-timeout", type=float, default=300)
    parser.add_argument("--big", type=int, nargs="*", default=[10_000, 50_000, 100_000],
                        help="node counts of the chains opened in the window")
    parser.add_argument("--repeat", type=int, default=1, help="runs per big graph (best kept)")
    args = parser.parse_args()

    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([])
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"torch {torch.__version__}, Qt offscreen")
    rows = [bench_graph("chain 5,000 ops", lambda: chain_graph(5000), app, not args.no_dot, args.dot_timeout)]
    for n in args.layers:
        rows.append(bench_graph(f"TransformerEncoder x{n}", lambda n=n: transformer_graph(n), app,
                                not args.no_dot, args.dot_timeout))
    head = (f"{'graph':<24}{'nodes':>7}{'edges':>7}{'capture s':>10}{'layout s':>10}{'scene s':>9}"
            f"{'1st paint s':>12}{'full ms':>9}{'zoom ms':>9}{'total s':>9}{'dot s':>9}{'dot/ours':>9}")
    print(head)
    print("-" * len(head))
    for r in rows:
        ratio = f"{r['ratio']:.1f}x" if r["ratio"] else "-"
        print(f"{r['graph']:<24}{r['nodes']:>7}{r['edges']:>7}{r['capture_s']:>10.3f}{r['layout_s']:>10.3f}"
              f"{r['scene_s']:>9.3f}{r['first_paint_s']:>12.3f}{r['paint_full_ms']:>9.1f}"
              f"{r['paint_zoomed_ms']:>9.1f}{r['ours_s']:>9.3f}{fmt(r['dot_s']):>9}{ratio:>9}")
    # the same window driver as bench_steps.py (which adds p90, other sizes, plain Python)
    from bench_steps import CHAIN_STEP, chain_setup, window_steps

    times, nodes = window_steps(app, chain_setup(990), CHAIN_STEP, 20)
    print(f"\nstep latency, the real window and kernel process (Step to repaint, {nodes:,} "
          f"nodes): median {statistics.median(times):.1f} ms")
    if args.big:
        big_graphs(args.big, app, args.repeat)


if __name__ == "__main__":
    main()
