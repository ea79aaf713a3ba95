"""Scale benchmark: big autograd graphs from capture to paint, against Graphviz `dot`.

Run:  QT_QPA_PLATFORM=offscreen python3 benchmarks/bench_scale.py [--layers 24 96] [--no-dot]

For a 5,000-op chain and 24/96-layer nn.TransformerEncoder backward graphs it
prints capture, layout, scene build, first paint, full-view and zoomed paint
times, and `dot -Tsvg` on the same graph in the same run (where Graphviz is
installed) as a ratio; then the step latency (a statement adding ~10 nodes to
a ~2,000-node graph, from Step to repaint) and the memory of a process holding
a 10,000-node graph in the canvas. Figures, not assertions: machines are noisy.
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
from gradviz.core.layout import layout  # noqa: E402
from gradviz.export import graph_to_dot  # noqa: E402


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


MEMORY_PROBE = r"""
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
w.open_path(Path(sys.argv[1]), ask=False)
end = time.time() + 120
while time.time() < end and len(w.canvas.node_ids()) == 0:
    app.processEvents(); time.sleep(0.01)
for _ in range(20):
    app.processEvents(); time.sleep(0.01)
w.canvas.viewport().repaint()
nodes = len(w.canvas.node_ids())
# VmHWM, not ru_maxrss: after fork the child's ru_maxrss starts at the parent's size.
hwm = [l for l in open("/proc/self/status") if l.startswith("VmHWM")][0].split()[1]
print(json.dumps({"rss_mb": int(hwm) / 1024, "torch_loaded": "torch" in sys.modules,
                  "nodes": nodes}))
w.close()
"""


def window_memory() -> dict:
    root, names = chain_graph(5000)
    snap = gradviz.snapshot(root, names=names)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.gradviz.json"
        gradviz.save(snap, path)
        proc = subprocess.run(
            [sys.executable, "-c", MEMORY_PROBE, str(path)], capture_output=True, text=True,
            cwd=Path(__file__).resolve().parents[1], timeout=600,
        )
    if proc.returncode != 0:
        return {"error": proc.stderr[-500:]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


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
    mem = window_memory()
    if "error" in mem:
        print(f"window memory probe failed: {mem['error']}")
    else:
        print(f"window with a {mem['nodes']:,}-node snapshot open: peak RSS {mem['rss_mb']:.0f} MB "
              f"(torch imported: {mem['torch_loaded']})")


if __name__ == "__main__":
    main()
