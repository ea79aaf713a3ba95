"""What notebook and CLI users wait for: ``to_svg()``, ``to_html()``, the notebook's display,
``gradviz export``, against torchviz and against an older gradviz, in one run.

    python3 benchmarks/bench_export.py                      # this checkout and torchviz
    git worktree add /tmp/gv_ref <commit>                   # an older gradviz to compare with
    python3 benchmarks/bench_export.py --ref /tmp/gv_ref --cli

Every figure comes from a fresh process (``python -c``), and each repetition runs
the trees (and torchviz) in a rotating order, so a busy machine's load falls on all
of them alike; the tables show medians, and ratios of medians from the same run.
The models are benchmarks/bench_peers.py's (``--graphs``). What is timed, per tree:

- snapshot: ``gradviz.snapshot(root, names=params)``, no recorder (as bench_peers);
- svg: ``snap.to_svg()``; html: ``snap.to_html()`` (and the page's size);
- notebook: what IPython calls to display the snapshot: ``_repr_mimebundle_`` where
  the tree has one, else ``_repr_html_`` and ``_repr_svg_`` (IPython calls both), and
  the size of what it hands the notebook (nb MB: the framed page and the SVG);
- torchviz: ``make_dot(root, params=params)`` + ``dot -Tsvg`` (and the SVG's size).

``--cli`` adds ``gradviz export SCRIPT -o out.svg`` and ``-o out.html`` of a GPT-2
script (the model of bench_peers' ``gpt2``, written to a temporary folder), beside
``python SCRIPT`` itself, one process each, run by each tree's own gradviz.

``--browser`` opens this checkout's page of each model in headless Chromium (chromium,
chromedriver and selenium; skipped with a line when missing) and times, in the page,
what to_html() left to it: its script up to the first picture drawn (that picture's
edges routed there), then each picture of its list when first picked (routed then), and
an "open" picture (a block expanded in the collapsed one, made then). The minimum of
``--repeat`` loads, beside the same model's to_svg (Python lays out and routes it all).
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
MARK = "BENCH_EXPORT_RESULT "
DEFAULT_GRAPHS = ("gpt2", "llama16", "resnet50", "vit", "encoder24", "lstm", "unet")

CHILD = r"""
import sys, time, json, gc
sys.path.insert(0, {bench!r})
import bench_peers  # before the tree: it puts its own checkout first on sys.path
sys.path.insert(0, {tree!r})
import torch
import gradviz, gradviz.api, gradviz.export, gradviz.html_view
assert gradviz.__file__.startswith({tree!r}), gradviz.__file__
case = bench_peers.GRAPHS[{graph!r}][1]()
root, names = case.root(), case.names()
gc.collect()
out = {{}}
t = time.perf_counter(); snap = gradviz.snapshot(root, names=names); out["snapshot"] = time.perf_counter() - t
out["nodes"] = len(snap["graph"]["nodes"])
t = time.perf_counter(); svg = snap.to_svg(); out["svg"] = time.perf_counter() - t
out["svg_bytes"] = len(svg.encode())
t = time.perf_counter(); page = snap.to_html(); out["html"] = time.perf_counter() - t
out["html_bytes"] = len(page.encode())
t = time.perf_counter()
if hasattr(snap, "_repr_mimebundle_"):
    bundle = snap._repr_mimebundle_()
else:
    bundle = {{"text/html": snap._repr_html_(), "image/svg+xml": snap._repr_svg_()}}
out["notebook"] = time.perf_counter() - t
out["notebook_bytes"] = sum(len(v.encode()) for v in bundle.values())
print({mark!r} + json.dumps(out), flush=True)
"""

TORCHVIZ = r"""
import sys, time, json, subprocess
sys.path.insert(0, {bench!r})
import bench_peers
from torchviz import make_dot
sys.setrecursionlimit(1_000_000)
case = bench_peers.GRAPHS[{graph!r}][1]()
root, names = case.root(), case.names()
t = time.perf_counter()
source = make_dot(root, params=names).source
svg = subprocess.run(["dot", "-Tsvg"], input=source, capture_output=True, text=True, check=True).stdout
out = {{"torchviz": time.perf_counter() - t, "torchviz_bytes": len(svg.encode())}}
print({mark!r} + json.dumps(out), flush=True)
"""


PAGE = r"""
import sys
sys.path.insert(0, {bench!r})
import bench_peers
sys.path.insert(0, {tree!r})
import gradviz
case = bench_peers.GRAPHS[{graph!r}][1]()
snap = gradviz.snapshot(case.root(), names=case.names())
open({path!r}, "w", encoding="utf-8").write(snap.to_html(language="en"))
print({mark!r} + "{{}}", flush=True)
"""

# in the page: pick each picture of its list (not a pass's own: picking one moves the
# cursor), then the first block's "open" picture; each picked once, its edges routed then
PICK = r"""
const api = window.gradviz, sel = document.querySelector('.gvz-view');
const out = {};
const pick = (key, name) => {
  const t = performance.now();
  sel.value = key;
  sel.dispatchEvent(new Event('change'));
  const ms = performance.now() - t;
  out[name] = { ms, nodes: api.ids().length, straight: api.picture().straight };
};
const keys = Array.from(sel.options).map((o) => o.value);
for (const key of keys) {
  if (key.startsWith('pass:') || key.startsWith('open:') || key === api.view()) continue;
  pick(key, key);
}
const open = keys.find((k) => k.startsWith('open:'));
if (open) pick(open, 'open');
return out;
"""


def chromium_driver() -> tuple[Any, str]:
    """A headless Chromium (as tests/test_html_view.py starts it), or None and why not."""
    import shutil

    browser = next((p for p in map(shutil.which, ("chromium", "chromium-browser",
                                                  "google-chrome")) if p), None)
    driver = shutil.which("chromedriver")
    if not browser or not driver:
        return None, "no chromium + chromedriver here"
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        return None, "selenium is not installed"
    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1400,900", "--force-device-scale-factor=1"):
        options.add_argument(arg)
    return webdriver.Chrome(service=Service(driver), options=options), ""


def time_page(driver: Any, path: Path, timeout: float) -> dict[str, Any]:
    """One load of the page at ``path``: its script's time to the first picture drawn
    (``ready.scriptMs``), the default picture, and :data:`PICK`'s figures."""
    driver.get(path.as_uri())
    deadline = time.perf_counter() + timeout
    ready = None
    while ready is None and time.perf_counter() < deadline:
        ready = driver.execute_script("return window.gradviz && window.gradviz.ready")
        if not ready:
            ready = None
            time.sleep(0.02)
    if ready is None:
        return {"error": f"the page did not draw within {timeout:g} s"}
    first = driver.execute_script("return window.gradviz.view()")
    return {"first_ms": ready["scriptMs"], "first": first, "picks": driver.execute_script(PICK)}


def browser_table(graphs: list[str], svg_s: dict[str, float | None], repeat: int,
                  timeout: float) -> dict[str, list[dict[str, Any]]]:
    driver, why = chromium_driver()
    if driver is None:
        print(f"\n--browser: skipped ({why})")
        return {}
    results: dict[str, list[dict[str, Any]]] = {}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for g in graphs:
                path = Path(tmp) / f"{g}.html"
                made = run_child(PAGE.format(bench=str(HERE), tree=str(REPO), graph=g,
                                             path=str(path), mark=MARK), timeout)
                if "error" in made:
                    results[g] = [made]
                    continue
                results[g] = [time_page(driver, path, timeout) for _ in range(repeat)]
    finally:
        driver.quit()
    print("\nthe page in headless Chromium (this checkout), ms, minimum of "
          f"{repeat} loads; to_svg in Python (s, median above) for scale:")
    head = (f"{'graph':<10}{'to_svg s':>9}{'first picture':>20}{'first ms':>10}"
            f"{'picked later: ms (nodes)':>45}")
    print(head)
    print("-" * len(head))
    for g in graphs:
        runs = [r for r in results[g] if "error" not in r]
        if not runs:
            print(f"{g:<10}{'':>9}  {results[g][0].get('error')}")
            continue
        first = min(r["first_ms"] for r in runs)
        picks = []
        for key in runs[0]["picks"]:
            ms = min(r["picks"][key]["ms"] for r in runs if key in r["picks"])
            one = runs[0]["picks"][key]
            picks.append(f"{key} {ms:.0f} ({one['nodes']}"
                         + (", unrouted" if one["straight"] else "") + ")")
        svg = svg_s.get(g)
        print(f"{g:<10}{(f'{svg:.3f}' if svg else '-'):>9}{runs[0]['first']:>20}{first:>10.0f}"
              f"   {', '.join(picks)}")
    return results


def run_child(code: str, timeout: float) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "GRADVIZ_SETTINGS_DIR": tmp,
               "GRADVIZ_DATA_DIR": tmp}
        try:
            proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                  timeout=timeout, cwd=tmp, env=env)
        except subprocess.TimeoutExpired:
            return {"error": f"timeout after {timeout:g} s"}
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith(MARK):
            return json.loads(line[len(MARK):])
    tail = (proc.stderr.strip().splitlines() or ["?"])[-1]
    return {"error": tail[:300]}


def gpt2_script(folder: Path) -> Path:
    """bench_peers' GPT-2 as a script of its own (what `gradviz export` runs)."""
    sys.path.insert(0, str(HERE))
    import bench_peers as b

    source = "import math\nimport torch\nimport torch.nn.functional as F\nfrom torch import nn\n\n"
    for cls in (b.CausalSelfAttention, b.GPTBlock, b.GPT):
        source += inspect.getsource(cls) + "\n\n"
    source += (
        "torch.manual_seed(0)\nmodel = GPT()\nidx = torch.randint(0, 50257, (1, 16))\n"
        "targets = torch.randint(0, 50257, (1, 16))\nlogits = model(idx)\n"
        "loss = F.cross_entropy(logits.view(-1, 50257), targets.view(-1))\nloss.backward()\n"
    )
    path = folder / "gpt2_script.py"
    path.write_text(source, encoding="utf-8")
    return path


def time_command(cmd: list[str], env: dict[str, str], timeout: float) -> dict[str, Any]:
    t = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return {"error": f"timeout after {timeout:g} s"}
    seconds = time.perf_counter() - t
    if proc.returncode != 0:
        return {"error": (proc.stderr.strip().splitlines() or ["?"])[-1][:300]}
    return {"seconds": seconds, "stderr": proc.stderr}


def med(runs: list[dict[str, Any]], key: str) -> float | None:
    values = [r[key] for r in runs if key in r]
    return statistics.median(values) if values else None


def fmt(value: float | None, unit: str = "s") -> str:
    if value is None:
        return "-"
    if unit == "MB":
        return f"{value / 1e6:.2f}"
    return f"{value:.3f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graphs", default=",".join(DEFAULT_GRAPHS))
    parser.add_argument("--ref", help="an older gradviz checkout to compare with (git worktree)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--cli", action="store_true", help="also time `gradviz export` of GPT-2")
    parser.add_argument("--no-torchviz", action="store_true")
    parser.add_argument("--browser", action="store_true",
                        help="also time this checkout's pages in headless Chromium")
    parser.add_argument("--json", help="write every raw figure here")
    args = parser.parse_args(argv)

    graphs = [g.strip() for g in args.graphs.split(",") if g.strip()]
    trees = {"new": str(REPO)}
    if args.ref:
        trees = {"ref": str(Path(args.ref).resolve()), **trees}
    print(f"load average at the start {os.getloadavg()[0]:.2f}, {os.cpu_count()} cores; "
          f"trees: " + ", ".join(f"{k} = {v}" for k, v in trees.items()))
    print(f"{args.repeat} fresh processes per cell, rotating order; medians; ratios of medians")
    runs: dict[str, dict[str, list[dict[str, Any]]]] = {}
    tools = [*trees, *([] if args.no_torchviz else ["torchviz"])]
    for g in graphs:
        runs[g] = {t: [] for t in tools}
        for rep in range(args.repeat):
            order = tools[rep % len(tools):] + tools[: rep % len(tools)]
            for tool in order:
                template = TORCHVIZ if tool == "torchviz" else CHILD
                code = template.format(bench=str(HERE), tree=trees.get(tool, ""), graph=g, mark=MARK)
                r = run_child(code, args.timeout)
                runs[g][tool].append(r)
                what = r.get("error") or ", ".join(
                    f"{k} {v:.3f}" for k, v in r.items() if isinstance(v, float))
                print(f"  {g:<9} {tool:<8} {rep + 1}: {what}", flush=True)

    print()
    head = (f"{'graph':<10}{'nodes':>6}{'tree':>6}{'snapshot':>10}{'to_svg':>9}{'to_html':>9}"
            f"{'html/svg':>9}{'page MB':>9}{'notebook':>10}{'nb/svg':>8}{'nb MB':>7}"
            f"{'torchviz':>10}{'tv MB':>7}")
    print(head)
    print("-" * len(head))
    for g in graphs:
        tv = runs[g].get("torchviz", [])
        for tree in trees:
            rs = runs[g][tree]
            svg, page, nb = med(rs, "svg"), med(rs, "html"), med(rs, "notebook")
            nodes = next((r["nodes"] for r in rs if "nodes" in r), "-")
            print(f"{g:<10}{nodes:>6}{tree:>6}{fmt(med(rs, 'snapshot')):>10}{fmt(svg):>9}"
                  f"{fmt(page):>9}{(f'{page / svg:.2f}x' if page and svg else '-'):>9}"
                  f"{fmt(med(rs, 'html_bytes'), 'MB'):>9}{fmt(nb):>10}"
                  f"{(f'{nb / svg:.2f}x' if nb and svg else '-'):>8}"
                  f"{fmt(med(rs, 'notebook_bytes'), 'MB'):>7}"
                  f"{fmt(med(tv, 'torchviz')):>10}{fmt(med(tv, 'torchviz_bytes'), 'MB'):>7}")
        if "ref" in trees:
            a, b = runs[g]["ref"], runs[g]["new"]
            parts = []
            for key, name in (("html", "to_html"), ("notebook", "notebook"),
                              ("html_bytes", "page size")):
                x, y = med(a, key), med(b, key)
                if x and y:
                    parts.append(f"{name} {x / y:.1f}x smaller" if key.endswith("bytes")
                                 else f"{name} {x / y:.1f}x faster")
            print(f"{'':<10}ref -> new: " + ", ".join(parts))

    # issue 25's target: to_html() within 2x of to_svg() on every model (same run, medians)
    for tree in trees:
        ratios = {g: (med(runs[g][tree], "html"), med(runs[g][tree], "svg")) for g in graphs}
        over = [g for g, (h, s) in ratios.items() if h and s and h > 2 * s]
        worst = max(((h / s, g) for g, (h, s) in ratios.items() if h and s), default=None)
        if worst is not None:
            print(f"{tree}: to_html within 2x of to_svg on {len(graphs) - len(over)} of "
                  f"{len(graphs)} models (largest ratio {worst[0]:.2f}x, {worst[1]})"
                  + (f"; over 2x: {', '.join(over)}" if over else ""))

    cli: dict[str, dict[str, list[dict[str, Any]]]] = {}
    if args.cli:
        with tempfile.TemporaryDirectory() as tmp:
            script = gpt2_script(Path(tmp))
            print(f"\ngradviz export of a GPT-2 script ({script.name}); seconds per process:")
            jobs = [("python", [sys.executable, str(script)], None)]
            for tree, path in trees.items():
                for suffix in ("svg", "html"):
                    out = str(Path(tmp) / f"{tree}.{suffix}")
                    code = (f"import sys; sys.path.insert(0, {path!r}); import gradviz.cli as c; "
                            f"sys.exit(c.main(['export', {str(script)!r}, '-o', {out!r}]))")
                    jobs.append((f"{tree} .{suffix}", [sys.executable, "-c", code], path))
            for name, _, _ in jobs:
                cli[name] = {"runs": []}
            for rep in range(args.repeat):
                order = jobs[rep % len(jobs):] + jobs[: rep % len(jobs)]
                for name, cmd, _ in order:
                    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
                    r = time_command(cmd, env, args.timeout)
                    cli[name]["runs"].append(r)
                    what = r.get("error") or "{:.2f} s".format(r["seconds"])
                    print(f"  {name:<12} {rep + 1}: {what}", flush=True)
            base = med(cli["python"]["runs"], "seconds")
            for name, _, _ in jobs:
                m = med(cli[name]["runs"], "seconds")
                ratio = f"  ({m / base:.2f}x the script alone)" if m and base and name != "python" else ""
                print(f"  {name:<12} median {fmt(m)} s{ratio}")
    pages: dict[str, list[dict[str, Any]]] = {}
    if args.browser:
        pages = browser_table(graphs, {g: med(runs[g]["new"], "svg") for g in graphs},
                              args.repeat, args.timeout)
    print(f"\nload average at the end {os.getloadavg()[0]:.2f}")
    if args.json:
        Path(args.json).write_text(
            json.dumps({"trees": trees, "runs": runs, "cli": cli, "browser": pages}, indent=1),
            encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
