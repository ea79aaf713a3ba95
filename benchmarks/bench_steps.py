"""Step latency in the real window, beside the same statements run by plain Python.

Run:  QT_QPA_PLATFORM=offscreen python3 benchmarks/bench_steps.py [--steps 30] [--sizes lesson 2k 10k]

For each graph size it opens the real window (its kernel in its own process, as
a user runs it), runs the script up to the stepped statements, then presses Step
(F10) once per statement and times Step to repaint: the kernel runs the statement,
captures the graph, lays out the new nodes and sends what changed; the window
applies the graph to the canvas and paints it, then fills the side panels. The time
ends with the end of that canvas paint (a step that changes nothing on the canvas:
once the window has applied the whole state and repainted the canvas); ``--settled``
also times each step to the end of the last paint it caused in any widget, the side
panels' included. It prints the first step's time
(the step after the run, which turns the "new" glow of every node the run made
off), then the median, p90 and max of the others, and the median time plain
Python (``exec`` of the same
statement, in the same process as this script, no gradviz) takes for the same
statement, so the figures say what gradviz adds on top of the user's own code,
and the resident memory of the window process and of its kernel process after the
last step.

Sizes: ``lesson`` steps through a teaching-size training loop (a small nn.Module,
SGD, three iterations of zero_grad/forward/backward/step, unrolled so each
statement is one step); ``2k`` and ``10k`` add a few nodes per step to a chain
of about 2,000 and 10,000 nodes. Figures, not assertions: machines are noisy.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import statistics
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

LESSON_SETUP = """\
import torch.nn as nn
torch.manual_seed(0)
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 1)
    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))
net = Net()
opt = torch.optim.SGD(net.parameters(), lr=0.1)
x = torch.randn(16, 4)
target = torch.randn(16, 1)
"""
LESSON_STEP = [
    "opt.zero_grad()",
    "out = net(x)",
    "loss = ((out - target) ** 2).mean()",
    "loss.backward()",
    "opt.step()",
]


def chain_setup(base: int) -> str:
    return (
        "x = torch.tensor(1., requires_grad=True)\ny = x\n"
        f"for i in range({base}):\n    y = y * 1.0001\n"
    )


CHAIN_STEP = ["y = (y * 1.0001).sin().cos().exp().tanh()"]

SIZES = {
    "lesson": (LESSON_SETUP, LESSON_STEP),
    "2k": (chain_setup(990), CHAIN_STEP),
    "10k": (chain_setup(4950), CHAIN_STEP),
}


def plain_python_ms(setup: str, step: list[str], count: int) -> float:
    """Median ms of each stepped statement run by plain ``exec`` (no gradviz)."""
    namespace: dict = {"torch": torch}
    exec(compile(setup, "<setup>", "exec"), namespace)
    codes = [compile(s, "<step>", "exec") for s in step]
    times = []
    for i in range(count):
        code = codes[i % len(codes)]
        t = time.perf_counter()
        exec(code, namespace)
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1000


def _status_mb(pid: int | str) -> dict[str, float]:
    """VmRSS and VmHWM (peak) of a process, in MB (empty where /proc cannot tell)."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as fh:
            return {line.split(":")[0]: int(line.split()[1]) / 1024 for line in fh
                    if line.startswith(("VmHWM", "VmRSS"))}
    except (OSError, ValueError, IndexError):
        return {}


class _PaintWatch:
    """Notes when any widget of the application is about to paint (an application-wide
    event filter): the settled figure ends when the last paint a step caused is over."""

    def __init__(self, app) -> None:
        from PySide6.QtCore import QEvent, QObject

        paint = QEvent.Type.Paint
        watch = self

        class Filter(QObject):
            def eventFilter(self, obj, event):  # noqa: N802 - Qt API
                if event.type() == paint:
                    watch.painted = True
                return False

        self.painted = False
        self._filter = Filter()
        app.installEventFilter(self._filter)


class _CanvasPaints:
    """When each paint of the window's canvas ended, with the kernel cursor it showed.

    The window paints the canvas as soon as it has applied a step's graph, before the
    side panels take the state (MainWindow.apply_state); this notes the end of that
    paint. An event filter on the canvas's viewport hands each paint event to the
    canvas's own ``viewportEvent`` (where Qt's filter for scroll areas would hand it)
    and notes the time when it returns; nothing in gradviz is changed."""

    def __init__(self, window) -> None:
        from PySide6.QtCore import QEvent, QObject

        self.marks: list[tuple[float, int | None]] = []
        paint, marks, canvas = QEvent.Type.Paint, self.marks, window.canvas

        class Filter(QObject):
            def eventFilter(self, obj, event):  # noqa: N802 - Qt API
                if event.type() != paint:
                    return False
                canvas.viewportEvent(event)
                state = window.state
                marks.append((time.perf_counter(), state["cursor"] if state else None))
                return True

        self._viewport = canvas.viewport()
        self._filter = Filter()
        self._viewport.installEventFilter(self._filter)

    def first(self, cursor: int) -> float | None:
        """The end of the first paint that showed the state at ``cursor``."""
        return next((t for t, c in self.marks if c == cursor), None)

    def close(self) -> None:
        self._viewport.removeEventFilter(self._filter)


def settle(app, watch: _PaintWatch, quiet_s: float = 0.03) -> float:
    """Run the event loop until nothing has painted for ``quiet_s``; the perf_counter
    time at which the last paint was over (the window shows all the step did)."""
    last = time.perf_counter()
    while time.perf_counter() - last < quiet_s:
        watch.painted = False
        app.processEvents()
        if watch.painted:
            last = time.perf_counter()  # the processEvents that painted is over
        else:
            time.sleep(0.0005)
    return last


def window_steps(
    app, setup: str, step: list[str], count: int, memory: dict | None = None,
    trusted: bool = True, settled: list[float] | None = None,
) -> tuple[list[float], int]:
    """Step-to-repaint times (ms) for ``count`` steps in the real window; ``memory``
    (when given) gets the window's and its kernel's resident MB after the last step.

    ``settled`` (when given) asks for steps from an idle window, as a user presses F10
    (the window settled after the step before: nothing painted for 30 ms), and gets for
    each step the time from the press to the end of the last paint the step caused in
    any widget (the panels, the timeline, the guide, the status bar: what the canvas
    repaint leaves to the next turns of the event loop)."""
    from PySide6.QtCore import QSettings

    from gradviz.ui.main_window import MainWindow

    tmp = tempfile.mkdtemp()
    w = MainWindow(settings=QSettings(f"{tmp}/s.ini", QSettings.Format.IniFormat), data_dir=tmp)
    w.freeze_heap = True  # as the gradviz command runs it (gradviz.ui.app.run_app)
    w.resize(1400, 900)
    w.show()
    # text written in the window is trusted (real Python); restricted: the sandbox's kernel
    w.client.set_mode(trusted)
    setup_lines = setup.rstrip("\n").count("\n") + 1
    stepped = [step[i % len(step)] for i in range(count + 1)]
    w.editor.setPlainText(setup + "\n".join(stepped) + "\n")

    def wait(cond, seconds=600.0):
        end = time.time() + seconds
        while time.time() < end and not cond():
            app.processEvents()
            time.sleep(0.0002)
        if not cond():
            raise TimeoutError("the window did not answer")

    wait(lambda: w.client.pid() is not None and not w.busy)
    w.stepper._run_to_line(setup_lines)  # runs through the setup
    wait(lambda: w.state is not None and not w.busy
         and w.state["statements"][w.state["cursor"]]["line"] == setup_lines + 1)
    # the run's own picture is painted before the first Step, as a user sees it before
    # pressing F10 (without this, the first step's figure held the run-to's paint, 15-20
    # ms at 10,000 nodes, which was not the step's work)
    end = time.perf_counter() + 0.3
    while time.perf_counter() < end:
        app.processEvents()
        time.sleep(0.001)
    gc.collect()
    gc.freeze()
    watch = _PaintWatch(app) if settled is not None else None
    canvas_paints = _CanvasPaints(w)
    times = []
    for _ in range(count):
        if watch is not None:
            settle(app, watch)
        cursor = w.state["cursor"]
        canvas_paints.marks.clear()
        t = time.perf_counter()
        w.step()
        wait(lambda cursor=cursor: w.state["cursor"] == cursor + 1 and not w.busy)
        shown = canvas_paints.first(cursor + 1)
        if shown is None:
            # nothing on the canvas changed (it did not paint): the state applied, and a
            # repaint of the canvas, end the step
            w.canvas.viewport().repaint()
            shown = time.perf_counter()
        times.append((shown - t) * 1000)
        if watch is not None and settled is not None:
            settled.append((settle(app, watch) - t) * 1000)
        failed = [r for r in w.state.get("new_results") or [] if not r.get("ok")]
        if failed:
            raise RuntimeError(f"a stepped statement failed: {failed[-1].get('error')}")
    canvas_paints.close()
    nodes = len(w.canvas.node_ids())
    if memory is not None:
        kernel = _status_mb(w.client.pid()) if w.client.pid() is not None else {}
        memory.update(window_mb=_status_mb("self").get("VmRSS"),
                      kernel_mb=kernel.get("VmRSS"), kernel_peak_mb=kernel.get("VmHWM"))
    w.close()
    app.processEvents()
    return times, nodes


def p90(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(0.9 * (len(ordered) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=30, help="steps timed per size")
    parser.add_argument("--sizes", nargs="*", default=list(SIZES), choices=list(SIZES))
    parser.add_argument("--engines", nargs="*", default=["trusted", "restricted"],
                        choices=["trusted", "restricted"],
                        help="which engine runs the statements (both by default)")
    parser.add_argument("--settled", action="store_true",
                        help="also time each step from an idle window to the end of the "
                             "last paint it caused in any widget (two more columns)")
    args = parser.parse_args()

    from PySide6 import __version__ as qt_version
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([])
    print(f"{date.today()} · {platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}, torch {torch.__version__}, PySide6 {qt_version}, "
          "Qt offscreen, window 1400x900")
    head = (f"{'engine':<11}{'graph':<8}{'nodes':>7}{'steps':>7}{'first ms':>10}{'median ms':>11}{'p90 ms':>9}"
            f"{'max ms':>9}{'plain Python ms':>17}{'window MB':>11}{'kernel MB':>11}"
            + (f"{'settled median':>16}{'settled p90':>13}" if args.settled else ""))
    print(head)
    print("-" * len(head))
    for size in args.sizes:
        for engine in args.engines:
            setup, step = SIZES[size]
            memory: dict = {}
            settled: list[float] | None = [] if args.settled else None
            times, nodes = window_steps(
                app, setup, step, args.steps + 1, memory, trusted=engine == "trusted",
                settled=settled,
            )
            tail = ""
            if settled:
                calm = settled[1:]
                tail = f"{statistics.median(calm):>16.1f}{p90(calm):>13.1f}"
            first, rest = times[0], times[1:]
            plain = plain_python_ms(setup, step, args.steps)
            mb = [f"{memory[k]:>11.0f}" if memory.get(k) is not None else f"{'-':>11}"
                  for k in ("window_mb", "kernel_mb")]
            print(f"{engine:<11}{size:<8}{nodes:>7,}{len(rest):>7}{first:>10.1f}"
                  f"{statistics.median(rest):>11.1f}{p90(rest):>9.1f}{max(rest):>9.1f}"
                  f"{plain:>17.3f}{mb[0]}{mb[1]}{tail}", flush=True)
    print("\nStep to repaint: press Step, the kernel runs the statement and sends what "
          "changed, the window applies the graph and the canvas has painted it (the side "
          "panels are filled and painted after it; the settled columns wait for them). "
          "First: the step right "
          "after the run to the stepped statements (every node's glow goes off); the "
          "median, p90 and max are of the steps after it. Plain Python: the same "
          "statements by exec, without gradviz. Memory: resident MB after the last step, "
          "of the window process (this one: all sizes so far) and of that window's kernel "
          "process."
          + (" Settled (--settled): each step pressed in an idle window (nothing painted "
             "for 30 ms), timed to the end of the last paint it caused in any widget; the "
             "other columns then come from idle steps too." if args.settled else ""))


if __name__ == "__main__":
    main()
