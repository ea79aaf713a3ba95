"""The interactive HTML view (gradviz.html_view): the page as data, then in a real browser.

The pure tests check what ``render_html`` writes: one self-contained document,
no network reference, every name a script chose escaped or JSON-encoded so it
can neither close the data's ``<script>`` element nor become markup.

The browser tests load the page in headless Chromium (Debian's ``chromium``
and ``chromium-driver``, driven by selenium) and use it as a person would:
click a node, press the arrow keys and the pass buttons, drag and wheel, and
read what the panels show. Expected numbers come from plain PyTorch run in
this process. They skip, saying why, where no Chromium is installed;
``bash scripts/setup.sh --test`` installs it, so CI runs them.
"""

from __future__ import annotations

import ast
import contextlib
import html
import io
import json
import math
import re
import shutil
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

import gradviz  # noqa: E402
from gradviz.app.demos import find_demo  # noqa: E402
from gradviz.graph.graphdata import graph_from_json  # noqa: E402
from gradviz.graph.grouping import collapse_modules, module_tree, top_blocks  # noqa: E402
from gradviz.html_view import (  # noqa: E402
    SnapshotShapeError,
    _open_one,
    _owners,
    notebook_html,
    page_model,
    render_html,
)

ROOT = Path(__file__).resolve().parents[1]
LOAD_LIMIT_S = 60.0
"""How long a page may take to be ready; generous because CI machines are shared."""


# --------------------------------------------------------------------------- plain PyTorch


def _plain(snap) -> dict:
    """A snapshot as the plain dict the page takes (gradviz.snapshot may wrap it)."""
    return snap.to_dict() if hasattr(snap, "to_dict") else dict(snap)


def retain_graph_grads() -> list[float]:
    """x.grad after each backward() of the retain_graph demo, run by plain exec."""
    source = find_demo("retain_graph").source
    namespace: dict = {}
    grads: list[float] = []
    for stmt in ast.parse(source).body:
        code = compile(ast.Module(body=[stmt], type_ignores=[]), "<demo>", "exec")
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                exec(code, namespace)  # noqa: S102 - the project's own demo
        except RuntimeError:
            continue  # the third backward fails on purpose
        if ".backward(" in ast.unparse(stmt):
            grads.append(float(namespace["x"].grad))
    return grads


def encoder_snapshot(layers: int = 24):
    """A recorded backward pass through an nn.TransformerEncoder (as benchmarks/bench_scale.py)."""
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        layer = torch.nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128)
        model = torch.nn.TransformerEncoder(layer, num_layers=layers)
    with gradviz.record(model) as rec:
        loss = model(torch.randn(8, 2, 64)).sum()
        loss.backward()
    return _plain(gradviz.snapshot(loss, model=model, recorder=rec)), model


def chain_snapshot(ops: int):
    """A long chain whose saved tensors are kept (retain_graph): about 2 * ops nodes."""
    x = torch.tensor(1.0, requires_grad=True)
    with gradviz.record() as rec:
        y = x
        for i in range(ops):
            y = y.sin() if i % 2 else y.cos()
        y.backward(retain_graph=True)
    return _plain(gradviz.snapshot(y, names={"x": x}, recorder=rec)), x


def small_snapshot(names: dict | None = None):
    x = torch.tensor(5.0, requires_grad=True)
    with gradviz.record() as rec:
        y = x**3
        z = torch.log(y)
        z.backward(retain_graph=True)
        z.backward()
    return _plain(gradviz.snapshot(z, names=names or {"x": x, "y": y}, recorder=rec)), x


def data_block(page: str) -> str:
    match = re.search(r'<script type="application/json" class="gvz-data">(.*?)</script>', page, re.S)
    assert match, "the page carries its data in one JSON script element"
    return match.group(1)


def strict_json(text: str):
    def refuse(name):
        raise ValueError(f"not JSON: {name}")

    return json.loads(text, parse_constant=refuse)


# --------------------------------------------------------------------------- the page as data


def test_page_is_one_self_contained_document():
    snap, _ = small_snapshot()
    page = render_html(snap)
    assert page.startswith("<!DOCTYPE html>")
    assert page.count("<script") == 2  # the data and the code, both inline
    assert not re.search(r"https?://", page)
    for fetch in (" src=", " href=", "@import", "url(", "fetch(", "XMLHttpRequest", "<link", "<iframe"):
        assert fetch not in page, fetch
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    model = strict_json(data_block(page))
    assert model == strict_json(json.dumps(page_model(snap)))
    assert [p["title"] for p in model["passes"]] == ["backward #1", "backward #2"]


def test_names_from_scripts_cannot_become_markup():
    evil = "</script><script>window.__pwned=1</script><img src=x onerror=alert(1)>&amp;\u2028"
    x = torch.tensor(5.0, requires_grad=True)
    with gradviz.record() as rec:
        y = (x * 2).sum()
        y.backward()
    snap = _plain(gradviz.snapshot(y, names={evil: x}, recorder=rec, root_names=["<b>loss</b>"]))
    page = render_html(snap, title="<title>" + evil)
    assert page.count("<script") == 2 and page.count("</script>") == 2
    assert "<img" not in page and "<b>" not in page
    assert "\u2028" not in data_block(page)  # a line break to old JavaScript parsers
    assert f"<title>{html.escape('<title>' + evil)}</title>" in page
    model = strict_json(data_block(page))
    assert evil in model["tensors"]
    assert any(evil in (n.get("vars") or []) for n in model["nodes"].values())
    assert model["title"] == "<title>" + evil


def test_nan_and_infinite_gradients_stay_valid_json():
    x = torch.tensor([1.0, 0.0, -1.0], requires_grad=True)
    with gradviz.record() as rec:
        y = (x.log() * x.sqrt()).sum()
        y.backward()
    assert not torch.isfinite(x.grad).all()  # PyTorch's own NaN and inf
    page = render_html(_plain(gradviz.snapshot(y, names={"x": x}, recorder=rec)))
    model = strict_json(data_block(page))
    values = model["leaves"][0]["changes"][0][1]
    assert values == [g if math.isfinite(g) else str(g) for g in x.grad.tolist()]


def test_malformed_snapshots_get_a_clear_error():
    with pytest.raises(SnapshotShapeError, match="JSON object"):
        render_html(["not", "a", "snapshot"])  # type: ignore[arg-type]
    with pytest.raises(SnapshotShapeError, match="graph"):
        render_html({"graph": "nodes"})
    with pytest.raises(SnapshotShapeError, match="target 'nowhere' is not a node id"):
        render_html({"graph": {"nodes": [{"id": "a"}], "edges": [{"source": "a", "target": "nowhere"}]}})
    with pytest.raises(SnapshotShapeError, match=r"backward_passes\[0\]\['steps'\] should be a list"):
        render_html({"graph": {"nodes": [], "edges": []}, "backward_passes": [{"steps": 3}]})


def test_leaf_history_follows_the_passes():
    snap, x = small_snapshot()
    model = page_model(snap)
    # two passes of three steps: positions 0..3 and 4..7, then the end (8)
    assert model["offsets"] == [0, 4, 8]
    (leaf,) = [leaf for leaf in model["leaves"] if leaf["name"] == "x"]
    steps = [s["label"] for s in model["passes"][0]["steps"]]
    after_acc = steps.index("AccumulateGrad") + 1
    assert [c[0] for c in leaf["changes"]] == [after_acc, 4 + after_acc]
    assert leaf["changes"][-1][1] == pytest.approx(float(x.grad))
    assert [p["y"] for p in leaf["points"]] == pytest.approx([float(x.grad) / 2, float(x.grad)])
    assert leaf["acc"] and model["nodes"][leaf["acc"]]["kind"] == "accumulate_grad"

    # a file from before passes carried leaf_grads, recorded before its leaves had names:
    # the steps are matched to the leaf through the graph, the values come from grad_history
    old = json.loads(json.dumps(snap))
    for p in old["backward_passes"]:
        p.pop("leaf_grads", None)
        for step in p["steps"]:
            step["vars"] = []
    old["grad_history"] = {"x": [c[1] for c in leaf["changes"]]}
    (again,) = [leaf for leaf in page_model(old)["leaves"] if leaf["name"] == "x"]
    assert again["changes"] == leaf["changes"]


def test_big_models_open_on_their_blocks():
    snap, model_ = encoder_snapshot(layers=4)
    graph = graph_from_json(snap["graph"])
    model = page_model(snap)
    keys = [v["key"] for v in model["views"]]
    assert keys[:2] == ["all", "modules"]
    assert model["open"] == [f"layers.{i}" for i in range(4)]  # made by the page when asked
    for view in model["views"]:
        n = len(view["ids"])
        assert len(view["x"]) == len(view["y"]) == len(view["w"]) == len(view["h"]) == n
        assert all(0 <= e[0] < n and 0 <= e[1] < n and len(e) == 3 for e in view["edges"])
    modules = model["views"][1]
    assert sorted(i for i in modules["ids"] if i.startswith("g:")) == [f"g:layers.{i}" for i in range(4)]
    assert sum(model["groups"][f"g:layers.{i}"]["count"] for i in range(4)) < graph.number_of_nodes()
    assert model["default_view"] == 0  # small enough to open expanded


def test_one_open_block_is_the_grouping_of_the_others():
    snap, _ = encoder_snapshot(layers=3)
    graph = graph_from_json(snap["graph"])
    blocks = top_blocks(module_tree(graph))
    collapsed = collapse_modules(graph, blocks)
    owners = _owners(collapsed)
    for block in blocks:
        fast = _open_one(graph, collapsed, owners, "g:" + block)
        slow = collapse_modules(graph, [b for b in blocks if b != block])
        assert set(fast.nodes) == set(slow.nodes)
        assert set(fast.edges) == set(slow.edges)
        assert all(fast.edges[e].get("kind") == slow.edges[e].get("kind") for e in fast.edges)


def test_notebook_frame_holds_the_same_page():
    snap, _ = small_snapshot()
    frame = notebook_html(snap, height=500)
    srcdoc = re.fullmatch(
        r'<style>\.(gvz-untrusted-\w+)\{display:none\}</style><div class="\1">[^<]*</div>'
        r'<iframe srcdoc="([^"]*)" .*></iframe>', frame, re.S
    )
    assert srcdoc and html.unescape(srcdoc.group(2)) == render_html(snap)
    assert 'sandbox="allow-scripts"' in frame and "height:500px" in frame


def test_export_writes_the_page(tmp_path):
    from gradviz.export import SUPPORTED_SUFFIXES, export_graph

    snap, _ = small_snapshot()
    assert ".html" in SUPPORTED_SUFFIXES
    out = tmp_path / "graph.html"
    export_graph(graph_from_json(snap["graph"]), out)
    model = strict_json(data_block(out.read_text(encoding="utf-8")))
    assert len(model["nodes"]) == len(snap["graph"]["nodes"]) and model["passes"] == []


# --------------------------------------------------------------------------- names of Object.prototype

PROTOTYPE_NAMES = [
    "constructor", "__proto__", "toString", "hasOwnProperty", "valueOf", "__defineGetter__",
    "isPrototypeOf", "propertyIsEnumerable", "toLocaleString",
]


def prototype_snapshot() -> dict:
    """A snapshot (as a shared file could hold it) whose node ids, module names, variable
    names and tensor keys are all names of ``Object.prototype``'s members: in a plain
    JavaScript object ``groups["constructor"]`` finds ``Object`` itself, so a page that
    looks ids up in objects breaks on it. Two modules (``constructor``, ``__proto__``),
    a four-op chain, a saved tensor, one backward pass."""

    def fn(node_id, label, module, vars_=()):
        return {"id": node_id, "kind": "grad_fn", "label": label, "vars": list(vars_), "module": module,
                "saved": {"constructor": 1, "__proto__": [2]}, "freed": False, "statement": 0}

    nodes = [
        {"id": "toString", "kind": "tensor", "label": "toString", "vars": ["toString"], "shape": [],
         "dtype": "float32", "is_leaf": False, "requires_grad": True, "statement": 0},
        fn("constructor", "SumBackward0", "constructor", ["toString"]),
        fn("__proto__", "MulBackward0", "constructor", ["__proto__"]),
        {"id": "propertyIsEnumerable", "kind": "saved", "label": "self", "shape": [3], "dtype": "float32"},
        fn("isPrototypeOf", "AddBackward0", "__proto__", ["constructor"]),
        fn("__defineGetter__", "ExpBackward0", "__proto__.constructor", ["hasOwnProperty"]),
        fn("toLocaleString", "NegBackward0", "__proto__.constructor"),
        {"id": "hasOwnProperty", "kind": "accumulate_grad", "label": "AccumulateGrad", "vars": ["valueOf"]},
        {"id": "valueOf", "kind": "tensor", "label": "valueOf", "vars": ["valueOf"], "shape": [3],
         "dtype": "float32", "is_leaf": True, "requires_grad": True},
    ]
    edges = [
        ("toString", "constructor", "output"), ("constructor", "__proto__", "grad"),
        ("__proto__", "propertyIsEnumerable", "saved"), ("__proto__", "isPrototypeOf", "grad"),
        ("isPrototypeOf", "__defineGetter__", "grad"), ("__defineGetter__", "toLocaleString", "grad"),
        ("toLocaleString", "hasOwnProperty", "grad"), ("hasOwnProperty", "valueOf", "leaf"),
    ]
    order = ["constructor", "__proto__", "isPrototypeOf", "__defineGetter__", "toLocaleString", "hasOwnProperty"]
    steps = []
    for i, node in enumerate(order):
        last = node == "hasOwnProperty"
        steps.append({
            "node": node, "label": "AccumulateGrad" if last else "Backward",
            "grad_outputs": [[1.0, 2.0, 3.0]], "grad_inputs": [] if last else [[0.5, 1.5, 2.5]],
            "targets": [] if last else [order[i + 1]], "vars": ["valueOf"] if last else [],
        })
    value = {"value": [1.0, 2.0, 3.0], "grad": [0.5, 1.5, 2.5], "grad_fn": None, "version": 0, "dtype": "float32"}
    return {
        "graph": {"nodes": nodes, "edges": [{"source": u, "target": v, "kind": k} for u, v, k in edges]},
        "backward_passes": [{"root": ["toString"], "kind": "backward", "statement": 1, "steps": steps,
                             "leaf_grads": {"valueOf": [0.5, 1.5, 2.5], "__proto__": 1.0}}],
        "tensors": {name: value for name in ("valueOf", "toString", "__proto__", "constructor")},
        "grad_events": {"constructor": [{"kind": "zero", "statement": 0, "value": 0.0}]},
        "grad_history": {"toString": [1.0]},
        "statements": [{"index": 0, "line": 1, "source": "toString = constructor(valueOf)"},
                       {"index": 1, "line": 2, "source": "toString.backward()"}],
    }


NODE_HARNESS = r""""use strict";
// Runs gradviz's page script in node with a minimal DOM, drives it, prints a JSON report.
const fs = require("fs");
const vm = require("vm");
const [scriptPath, dataPath] = process.argv.slice(2);
const source = fs.readFileSync(scriptPath, "utf8");
const dataText = fs.readFileSync(dataPath, "utf8");
const SVG_NS = "http://www.w3.org/2000/svg";

class Elem {
  constructor(tag, cls) {
    this.tagName = String(tag || "div").toUpperCase();
    this.className = cls || "";
    this.children = [];
    this.listeners = new Map();
    this.own = "";
    this.dataset = {};
    this.style = {};
    this.attrs = new Map();
    this.value = "";
    this.title = "";
    this.namespaceURI = null;
    const classes = new Set();
    this.classList = {
      add: (c) => classes.add(c), remove: (c) => classes.delete(c),
      toggle: (c, on) => ((on === undefined ? !classes.has(c) : on) ? classes.add(c) : classes.delete(c)),
      contains: (c) => classes.has(c),
    };
  }
  get firstChild() { return this.children[0] || null; }
  appendChild(c) { this.children.push(c); return c; }
  removeChild(c) { this.children.splice(this.children.indexOf(c), 1); return c; }
  set textContent(t) { this.children = []; this.own = String(t); }
  get textContent() { return this.own + this.children.map((c) => c.textContent).join(""); }
  set innerHTML(h) {
    this.children = [];
    if (/^<svg/.test(h)) { const svg = new Elem("svg"); svg.namespaceURI = SVG_NS; this.appendChild(svg); }
  }
  addEventListener(type, fn) {
    if (!this.listeners.has(type)) this.listeners.set(type, []);
    this.listeners.get(type).push(fn);
  }
  dispatch(type, extra) {
    const ev = Object.assign({ type, target: this, preventDefault() {}, shiftKey: false, ctrlKey: false,
      metaKey: false, altKey: false, button: 0, pointerId: 1, clientX: 0, clientY: 0 }, extra || {});
    for (const fn of this.listeners.get(type) || []) fn(ev);
  }
  setAttribute(k, v) { this.attrs.set(k, String(v)); }
  focus() {}
  blur() {}
  click() { this.dispatch("click"); }
  setPointerCapture() {}
  getBoundingClientRect() { return { left: 0, top: 0, width: 1000, height: 700 }; }
  getContext() {
    return new Proxy({}, {
      get: (t, k) => (k === "measureText" ? (s) => ({ width: String(s).length * 7 }) : k in t ? t[k] : () => {}),
      set: (t, k, v) => { t[k] = v; return true; },
    });
  }
  walk(out) { out.push(this); for (const c of this.children) c.walk(out); return out; }
}

const ACTS = ["fit", "zoom-in", "zoom-out", "start", "pass-back", "step-back", "step", "pass", "end"];
const buttons = ACTS.map((act) => { const b = new Elem("button"); b.dataset.act = act; return b; });
const parts = new Map();
const root = new Elem("div", "gvz-root");
root.closest = () => root;
root.querySelector = (sel) => {
  if (!parts.has(sel)) {
    const e = new Elem(sel.startsWith("canvas") ? "canvas" : "div", sel.replace(/^.*\./, ""));
    if (sel === "script.gvz-data") e.own = dataText;
    if (sel === ".gvz-stage") { e.clientWidth = 1000; e.clientHeight = 700; }
    parts.set(sel, e);
  }
  return parts.get(sel);
};
root.querySelectorAll = (sel) =>
  sel === ".gvz-controls button" ? buttons.filter((b) => !["fit", "zoom-in", "zoom-out"].includes(b.dataset.act)) : buttons;

const docKeys = [];
const frames = [];
const errors = [];
const sandbox = {
  console, performance,
  Node: Elem,
  ResizeObserver: class { observe() {} },
  requestAnimationFrame: (fn) => frames.push(fn),
  document: {
    currentScript: root,
    createElement: (tag) => new Elem(tag),
    createElementNS: (ns, tag) => { const e = new Elem(tag); e.namespaceURI = ns; return e; },
    createTextNode: (t) => { const e = new Elem("#text"); e.own = String(t); return e; },
    addEventListener: (type, fn) => { if (type === "keydown") docKeys.push(fn); },
  },
};
sandbox.window = sandbox;
sandbox.devicePixelRatio = 1;
vm.createContext(sandbox);

function flush() {
  for (let i = 0; i < 50 && frames.length; i++) frames.splice(0).forEach((fn) => fn());
}
function attempt(what, fn) {
  try { fn(); flush(); } catch (e) { errors.push(what + ": " + (e && e.stack ? e.stack.split("\n").slice(0, 3).join(" | ") : e)); }
}

attempt("load", () => vm.runInContext(source, sandbox, { filename: "html_view.js" }));
const api = sandbox.gradviz;
// lists of [key, value] pairs: a name such as "__proto__" is no key for a plain object
const report = { errors, views: [], selected: [], inspector: [], status: [], search: [] };
if (api) {
  const $ = (sel) => root.querySelector(sel);
  const canvas = $(".gvz-canvas");
  const key = (k) => attempt("key " + k, () => docKeys.forEach((fn) => fn({ key: k, target: {}, preventDefault() {},
    shiftKey: false, ctrlKey: false, metaKey: false, altKey: false })));
  const views = $(".gvz-view").children.map((o) => o.value);
  for (const view of views) {
    attempt("view " + view, () => { $(".gvz-view").value = view; $(".gvz-view").dispatch("change"); });
    report.views.push(api.view());
    for (const id of api.ids().slice(0, 60)) {
      attempt("click " + id, () => {
        api.centerOn(id, 1);
        flush();
        const at = api.screenOf(id);
        canvas.dispatch("pointerdown", { clientX: at.x, clientY: at.y });
        canvas.dispatch("pointerup", { clientX: at.x, clientY: at.y });
      });
      report.selected.push([view, id, api.selected()]);
      report.inspector.push([view, id, $(".gvz-insp-body").textContent]);
      for (const k of ["ArrowRight", "ArrowRight", "End", "ArrowLeft", "Home"]) key(k);
    }
    for (const id of api.ids().slice(0, 60)) {
      attempt("double-click " + id, () => {
        if (api.view() !== view) { $(".gvz-view").value = view; $(".gvz-view").dispatch("change"); flush(); }
        api.centerOn(id, 1);
        flush();
        const at = api.screenOf(id);
        if (at) canvas.dispatch("dblclick", { clientX: at.x, clientY: at.y });
      });
    }
  }
  for (const b of buttons) attempt("button " + b.dataset.act, () => b.click());
  key("End");
  report.status.push($(".gvz-status").textContent);
  for (const row of $(".gvz-module-body").walk([])) {
    if (row.listeners.has("click")) attempt("module row " + row.textContent, () => row.click());
  }
  report.modules = $(".gvz-module-body").textContent;
  for (const text of (JSON.parse(process.argv[4] || "[]"))) {
    attempt("search " + text, () => { $(".gvz-search").value = text; $(".gvz-search").dispatch("keydown", { key: "Enter" }); });
    report.search.push([text, api.selected()]);
  }
  report.grads = $(".gvz-grad-table").textContent;
  report.legend = $(".gvz-legend").textContent;
  report.hud = $(".gvz-hud").textContent;
  report.ready = Boolean(api.ready);
  if (process.argv[5] === "pictures") {
    report.pictures = [];
    for (const view of api.pictures()) {
      attempt("picture " + view, () => { $(".gvz-view").value = view; $(".gvz-view").dispatch("change"); });
      report.pictures.push(api.picture());
    }
  }
}
process.stdout.write(JSON.stringify(report));
"""
"""Runs the page's script in node with the least DOM it needs, uses it as a person would
(every picture, a click on each node, the arrow keys, the buttons, the Modules rows,
the search box) and prints what the page showed, and every error it threw, as JSON."""


def run_page_in_node(
    page: str, tmp_path: Path, searches: list[str] = (), pictures: bool = False
) -> dict:
    """The page's own script and data, run and driven by :data:`NODE_HARNESS`; with
    ``pictures``, the report holds every picture's boxes and routed edges too."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("no node here: the page's script is run in node (or in Chromium) to check it")
    script = re.search(r"<script>(.*?)</script>", page, re.S)
    assert script
    (tmp_path / "harness.js").write_text(NODE_HARNESS, encoding="utf-8")
    (tmp_path / "page.js").write_text(script.group(1), encoding="utf-8")
    (tmp_path / "data.json").write_text(data_block(page), encoding="utf-8")
    proc = subprocess.run(
        [node, str(tmp_path / "harness.js"), str(tmp_path / "page.js"), str(tmp_path / "data.json"),
         json.dumps(list(searches)), "pictures" if pictures else ""],
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_prototype_names_are_ordinary_names_in_the_model():
    model = page_model(prototype_snapshot())
    assert set(model["nodes"]) == {n["id"] for n in prototype_snapshot()["graph"]["nodes"]}
    keys = [v["key"] for v in model["views"]]
    assert keys == ["all", "modules", "chains"]
    assert model["open"] == ["__proto__", "constructor"]  # the page makes these pictures
    assert {"g:constructor", "g:__proto__"} <= set(model["groups"])
    assert {"__proto__", "constructor", "toString", "valueOf"} <= set(model["tensors"])


def test_page_script_looks_names_up_in_maps_only():
    """Static half of the check: no id-keyed plain object is indexed in the page's script."""
    source = (ROOT / "gradviz" / "html_view.js").read_text(encoding="utf-8")
    for name in ("nodes", "shown", "groups", "tensors", "RADIUS", "legendText"):
        assert not re.search(rf"(?<![.\w]){name}\[", source), f"{name}[...] indexes a plain object"
        assert not re.search(rf"\bin {name}\b", source), f"'in {name}' asks a plain object"


def test_prototype_names_run_in_node(tmp_path):
    """The page built from a snapshot whose ids are Object.prototype's names works: every
    picture loads, a click selects the node clicked, the pass replays, search finds them."""
    report = run_page_in_node(render_html(prototype_snapshot()), tmp_path, PROTOTYPE_NAMES)
    assert report["errors"] == []
    assert report["ready"]
    assert report["views"] == ["all", "modules", "open:__proto__", "open:constructor", "chains"]
    clicked = [(view, node, selected) for view, node, selected in report["selected"]]
    assert len(clicked) >= 9 + 3 + 6 + 6 + 4
    assert all(node == selected for _, node, selected in clicked), clicked
    inspector = {(view, node): text for view, node, text in report["inspector"]}
    assert inspector[("all", "constructor")].startswith("SumBackward0")
    assert "collapsed module" in inspector[("modules", "g:constructor")]
    assert inspector[("all", "valueOf")].startswith("valueOf")
    assert "after pass 1 of 1" in report["status"][0]
    assert "valueOf[0.5, 1.5, 2.5]backward #1" in report["grads"]
    assert "constructor" in report["modules"] and "__proto__" in report["modules"]
    found = dict((text, hit) for text, hit in report["search"])
    assert found["toLocaleString"] == "toLocaleString" and found["isPrototypeOf"] == "isPrototypeOf"


# --------------------------------------------------------------------------- in a real browser


def _chromium() -> tuple[str, str] | None:
    browser = next(
        (p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None
    )
    driver = shutil.which("chromedriver")
    return (browser, driver) if browser and driver else None


@pytest.fixture(scope="module")
def chromium():
    found = _chromium()
    if found is None:
        pytest.skip(
            "no Chromium here (chromium + chromedriver): `bash scripts/setup.sh --test` installs "
            "Debian's chromium and chromium-driver, which the browser tests need"
        )
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = found[0]
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1400,900", "--force-device-scale-factor=1"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(found[1]), options=options)
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": 1400, "height": 900, "deviceScaleFactor": 1, "mobile": False},
    )
    # what the page fetches: nothing
    driver.execute_cdp_cmd("Network.enable", {})
    yield driver
    driver.quit()


@pytest.fixture
def browser(chromium):
    """The shared headless Chromium; a test fails if its page logged a JavaScript error."""
    chromium.get_log("browser")  # drop what earlier tests left
    yield chromium
    errors = [e["message"] for e in chromium.get_log("browser") if e["level"] == "SEVERE"]
    assert not errors, errors


def open_page(driver, path: Path) -> dict:
    """Load ``path`` and wait for the first frame; returns the page's own load figures."""
    started = time.perf_counter()
    driver.get(path.as_uri())
    ready = None
    while time.perf_counter() - started < LOAD_LIMIT_S:
        ready = driver.execute_script("return window.gradviz && window.gradviz.ready")
        if ready:
            break
        time.sleep(0.05)
    assert ready, f"the page did not draw within {LOAD_LIMIT_S} s"
    ready["wall_s"] = time.perf_counter() - started
    assert driver.execute_script("return performance.getEntriesByType('resource').length") == 0
    return ready


def js(driver, expr: str, *args):
    return driver.execute_script(f"return ({expr});", *args)


def wait_js(driver, expr: str) -> None:
    """Until ``expr`` is true in the page (at most LOAD_LIMIT_S)."""
    deadline = time.perf_counter() + LOAD_LIMIT_S
    while not js(driver, expr) and time.perf_counter() < deadline:
        time.sleep(0.05)


@contextlib.contextmanager
def in_the_frame(driver):
    """Inside the notebook output's iframe, once its page has drawn its first frame."""
    driver.switch_to.frame(driver.find_element("css selector", "iframe"))
    try:
        wait_js(driver, "window.gradviz && window.gradviz.ready")
        yield
    finally:
        driver.switch_to.default_content()


def text(driver, selector: str) -> str:
    return driver.find_element("css selector", selector).text


def click_node(driver, node_id: str) -> None:
    """A real mouse click on the node's box on the canvas."""
    from selenium.webdriver import ActionChains

    canvas = driver.find_element("css selector", ".gvz-canvas")
    at = js(driver, "window.gradviz.screenOf(arguments[0])", node_id)
    assert at is not None, f"{node_id} is not drawn in this picture"
    size = canvas.size
    assert 0 <= at["x"] <= size["width"] and 0 <= at["y"] <= size["height"], f"{node_id} is off-screen"
    ActionChains(driver).move_to_element_with_offset(
        canvas, int(at["x"] - size["width"] / 2), int(at["y"] - size["height"] / 2)
    ).click().perform()
    assert js(driver, "window.gradviz.selected()") == node_id


def press(driver, *keys: str) -> None:
    from selenium.webdriver import ActionChains

    chain = ActionChains(driver)
    for key in keys:
        chain.send_keys(key)
    chain.perform()


def click_button(driver, act: str) -> None:
    driver.find_element("css selector", f'.gvz-controls button[data-act="{act}"]').click()


def number_in(text_: str) -> float:
    match = re.search(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?", text_)
    assert match, f"no number in {text_!r}"
    return float(match.group(0))


def grad_now(driver, leaf: str) -> str:
    return driver.find_element(
        "css selector", f'.gvz-grad-table tr[data-leaf="{leaf}"] .gvz-grad-now'
    ).text


@pytest.fixture(scope="module")
def retain_graph_page(tmp_path_factory):
    """``gradviz export --demo retain_graph -o graph.html``, as a user runs it."""
    out = tmp_path_factory.mktemp("html") / "retain_graph.html"
    proc = subprocess.run(
        [sys.executable, "-m", "gradviz", "export", "--demo", "retain_graph", "-o", str(out)],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )
    assert out.is_file(), proc.stderr
    assert "wrote" in proc.stdout
    return out


def test_retain_graph_lesson_steps_pass_1_then_pass_2(browser, retain_graph_page):
    first, second = retain_graph_grads()  # 0.6 and 1.2, from plain PyTorch
    open_page(browser, retain_graph_page)
    model = strict_json(data_block(retain_graph_page.read_text(encoding="utf-8")))
    acc = next(i for i, n in model["nodes"].items() if n["kind"] == "accumulate_grad")
    pow_fn = next(i for i, n in model["nodes"].items() if n["label"] == "PowBackward0")
    assert "pass 1 of 3 · step 0 of 3" in text(browser, ".gvz-status")
    assert grad_now(browser, "x") == "None"

    click_node(browser, acc)
    inspector = text(browser, ".gvz-insp-body")
    assert inspector.startswith("AccumulateGrad") and "runs at step 3" in inspector

    # pass 1, step by step with the arrow key
    press(browser, "\ue014", "\ue014")  # Right, Right: LogBackward0, then PowBackward0
    assert "step 2 of 3" in text(browser, ".gvz-status")
    labels = js(browser, "window.gradviz.edgeLabels()")
    sent = [lab for lab in labels if lab["source"] == pow_fn and lab["target"] == acc]
    assert sent and sent[0]["current"] and number_in(sent[0]["text"]) == pytest.approx(first, rel=1e-4)
    assert grad_now(browser, "x") == "None"  # AccumulateGrad has not run yet
    press(browser, "\ue014")
    assert number_in(grad_now(browser, "x")) == pytest.approx(first, rel=1e-4)
    inspector = text(browser, ".gvz-insp-body")
    assert "running now (step 3)" in inspector
    assert number_in(inspector.split("grad in")[1]) == pytest.approx(first, rel=1e-4)
    assert len(browser.find_elements("css selector", ".gvz-plot circle.gvz-reached")) == 1

    # pass 2 in one go with the pass button
    click_button(browser, "pass")
    status = text(browser, ".gvz-status")
    assert "pass 2 of 3 · step 3 of 3" in status and "retain_graph=False" in status
    assert number_in(grad_now(browser, "x")) == pytest.approx(second, rel=1e-4)
    assert number_in(status.split("x.grad =")[1]) == pytest.approx(second, rel=1e-4)
    assert len(browser.find_elements("css selector", ".gvz-plot circle.gvz-reached")) == 2

    # the third backward: PyTorch refused it
    press(browser, "\ue014")
    assert "Trying to backward through the graph a second time" in text(browser, ".gvz-status")
    # and back: Left undoes a step, Home goes before everything
    press(browser, "\ue012")
    assert number_in(grad_now(browser, "x")) == pytest.approx(second, rel=1e-4)
    press(browser, "\ue011")
    assert grad_now(browser, "x") == "None" and js(browser, "window.gradviz.edgeLabels()") == []

    # jump to pass 2 from the list: it starts from the .grad pass 1 left, and the keys step it
    from selenium.webdriver.support.ui import Select

    Select(browser.find_element("css selector", ".gvz-pass")).select_by_value("1")
    assert "pass 2 of 3 · step 0 of 3" in text(browser, ".gvz-status")
    assert number_in(grad_now(browser, "x")) == pytest.approx(first, rel=1e-4)
    press(browser, "\ue014")
    assert "pass 2 of 3 · step 1 of 3" in text(browser, ".gvz-status")


def test_a_training_loops_earlier_pass_names_its_nodes_not_their_ids(browser, tmp_path):
    """Pass 1 of a loop ran on its own iteration's graph; the page shows the last one.
    Stepping pass 1 once said "fn20 received ...": it names the pass's own recorded ops."""
    script = tmp_path / "loop.py"
    script.write_text(
        "import torch\n"
        "w = torch.ones(3, requires_grad=True)\n"
        "for i in range(3):\n"
        "    loss = (w * (i + 1)).sin().sum()\n"
        "    loss.backward()\n",
        encoding="utf-8",
    )
    page = tmp_path / "loop.html"
    proc = subprocess.run(
        [sys.executable, "-m", "gradviz", "export", str(script), "-o", str(page)],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )
    assert page.is_file(), proc.stderr
    from selenium.webdriver.support.ui import Select

    open_page(browser, page)
    Select(browser.find_element("css selector", ".gvz-pass")).select_by_value("0")
    model = strict_json(data_block(page.read_text(encoding="utf-8")))
    first = model["passes"][0]["steps"]
    for k in range(len(first)):
        press(browser, "\ue014")
        now = text(browser, ".gvz-now")
        assert not re.search(r"\b(fn|t)\d+\b", now), now
        assert now.startswith(first[k]["label"]), (now, first[k]["label"])


def test_page_numbers_read_like_the_window(browser, retain_graph_page):
    """The page's formatters are ports of the window's; they must agree."""
    pytest.importorskip("PySide6")
    from gradviz.graph.fmt import fmt_number
    from gradviz.ui.canvas import format_value

    open_page(browser, retain_graph_page)
    values = [0.6000000238418579, 1.2000000476837158, 0.008, 1.6094379, 14.0, 0.0, -2.5e-7,
              123456.789, 3.0e12, 1e-4, 0.00012345, -0.5, 1e20, 2.0 / 3.0]
    page = js(browser, "arguments[0].map((v) => window.gradviz.fmtNumber(v))", values)
    assert page == [fmt_number(v) for v in values]
    small = [[0.5, -1.25e-5, 3.0], [[1.0, 2.0], [3.0, 4.0]], 0.1234567, -0.0]
    page = js(browser, "arguments[0].map((v) => window.gradviz.formatValue(v))", small)
    assert page == [format_value(v) for v in small]


def test_names_are_text_in_the_browser(browser, tmp_path):
    evil = "<img src=x onerror=\"window.__pwned=1\">"
    closing = "</script><script>window.__pwned=2</script>"
    x = torch.tensor(2.0, requires_grad=True)
    with gradviz.record() as rec:
        y = x * 3
        y.backward()
    snap = _plain(gradviz.snapshot(y, names={evil: x}, recorder=rec, root_names=[closing]))
    page = tmp_path / "names.html"
    page.write_text(render_html(snap), encoding="utf-8")
    open_page(browser, page)
    assert js(browser, "window.__pwned === undefined")
    assert js(browser, "document.querySelectorAll('img').length") == 0
    leaf_node = next(n["id"] for n in snap["graph"]["nodes"] if evil in (n.get("vars") or []))
    click_node(browser, leaf_node)
    assert text(browser, ".gvz-insp-body h3").startswith(evil)
    assert evil in text(browser, ".gvz-grad-table")


def test_pan_and_zoom_with_the_mouse(browser, retain_graph_page):
    from selenium.webdriver import ActionChains
    from selenium.webdriver.common.actions.wheel_input import ScrollOrigin

    open_page(browser, retain_graph_page)
    canvas = browser.find_element("css selector", ".gvz-canvas")
    before = js(browser, "window.gradviz.camera()")
    ActionChains(browser).scroll_from_origin(ScrollOrigin.from_element(canvas), 0, 300).perform()
    zoomed = js(browser, "window.gradviz.camera()")
    assert zoomed["s"] < before["s"]
    ActionChains(browser).move_to_element_with_offset(canvas, 200, 200).click_and_hold().move_by_offset(
        -120, -60
    ).release().perform()
    panned = js(browser, "window.gradviz.camera()")
    assert panned["tx"] == pytest.approx(zoomed["tx"] - 120, abs=2)
    assert panned["ty"] == pytest.approx(zoomed["ty"] - 60, abs=2)
    assert js(browser, "window.gradviz.selected()") is None  # a drag is not a click


def test_24_layer_encoder(browser, tmp_path):
    snap, model = encoder_snapshot(layers=24)
    nodes = len(snap["graph"]["nodes"])
    page = tmp_path / "encoder.html"
    started = time.perf_counter()
    page.write_text(render_html(snap), encoding="utf-8")
    render_s = time.perf_counter() - started
    ready = open_page(browser, page)
    print(f"\n24-layer encoder: {nodes} nodes, page {page.stat().st_size / 1e6:.1f} MB, "
          f"render {render_s:.2f} s, first frame {ready['ms']:.0f} ms after navigation")

    # big: it opens on its 24 blocks, each one box
    assert js(browser, "window.gradviz.view()") == "modules"
    groups = [i for i in js(browser, "window.gradviz.ids()") if i.startswith("g:")]
    assert sorted(groups) == sorted(f"g:layers.{i}" for i in range(24))
    rows = browser.find_elements("css selector", ".gvz-module-body .gvz-mod")
    assert len(rows) == 24

    # open one block from the Modules panel; the rest stay collapsed
    browser.find_element("css selector", '.gvz-mod[data-module="layers.23"]').click()
    assert js(browser, "window.gradviz.view()") == "open:layers.23"
    shown = js(browser, "window.gradviz.ids()")
    assert "g:layers.23" not in shown and "g:layers.22" in shown

    # find a parameter's AccumulateGrad by name, then click it on the canvas
    search = browser.find_element("css selector", ".gvz-search")
    search.send_keys("AccumulateGrad")
    search.send_keys("\ue007")
    name = "layers.23.linear2.bias"
    acc = next(
        n["id"] for n in snap["graph"]["nodes"]
        if n["kind"] == "accumulate_grad" and n.get("vars") == [name]
    )
    js(browser, "window.gradviz.centerOn(arguments[0], 1.0)", acc)
    click_node(browser, acc)
    assert name in text(browser, ".gvz-insp-body")

    # step the pass: the engine starts at the loss, gradients show on the edges
    steps = len(snap["backward_passes"][0]["steps"])
    press(browser, "\ue014", "\ue014", "\ue014")
    assert f"step 3 of {steps}" in text(browser, ".gvz-status")
    assert len(js(browser, "window.gradviz.edgeLabels()")) >= 1
    click_button(browser, "pass")
    assert f"step {steps} of {steps}" in text(browser, ".gvz-status")
    expected = model.layers[23].linear2.bias.grad.flatten()[0].item()  # plain PyTorch's .grad
    # the page shows 4 decimals (the window's fmt_number)
    assert number_in(grad_now(browser, name)[1:]) == pytest.approx(expected, rel=1e-3, abs=5e-5)
    inspector = text(browser, ".gvz-insp-body")
    assert "ran at step" in inspector
    grad_in = inspector.split("grad in")[1].lstrip(" \t\n[")
    assert number_in(grad_in) == pytest.approx(expected, rel=1e-3, abs=5e-5)

    # everything expanded: every node drawn, and stepping stays quick
    browser.find_element("css selector", ".gvz-module-body").find_element(
        "xpath", ".//button[text()='Expand all']"
    ).click()
    assert js(browser, "window.gradviz.view()") == "all"
    assert len(js(browser, "window.gradviz.ids()")) == nodes
    click_button(browser, "start")
    elapsed = js(browser, """(() => { const b = document.querySelector('[data-act="step"]');
        const t = performance.now(); for (let i = 0; i < 200; i++) b.click();
        return performance.now() - t; })()""")
    assert "step 200 of" in text(browser, ".gvz-status")
    print(f"200 steps at {nodes} nodes: {elapsed:.0f} ms")


def test_ten_thousand_nodes_load_and_respond(browser, tmp_path):
    snap, x = chain_snapshot(ops=5000)
    nodes = len(snap["graph"]["nodes"])
    assert nodes >= 10_000
    page = tmp_path / "chain.html"
    started = time.perf_counter()
    page.write_text(render_html(snap), encoding="utf-8")
    render_s = time.perf_counter() - started
    ready = open_page(browser, page)
    print(f"\n{nodes} nodes: page {page.stat().st_size / 1e6:.1f} MB, render {render_s:.2f} s, "
          f"first frame {ready['ms']:.0f} ms after navigation ({ready['wall_s']:.2f} s wall)")
    assert ready["nodes"] == nodes
    assert ready["ms"] < LOAD_LIMIT_S * 1000
    # the whole graph at once, then a frame after a zoom: both drawn, timed by the page
    browser.find_element("css selector", '[data-act="fit"]').click()
    frame_ms = js(browser, """(() => { const t = performance.now();
        document.querySelector('[data-act="zoom-in"]').click();
        return new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(
          () => done(performance.now() - t)))); })()""")
    print(f"zoom to next frame at {nodes} nodes: {frame_ms:.0f} ms")
    assert "zoom in for labels" in text(browser, ".gvz-hud")
    click_button(browser, "end")
    assert number_in(grad_now(browser, "x")) == pytest.approx(float(x.grad), rel=1e-4, abs=1e-12)


def test_the_notebook_frame_runs(browser, tmp_path):
    snap, x = small_snapshot()
    page = tmp_path / "notebook.html"
    page.write_text("<!DOCTYPE html><body>" + notebook_html(snap) + "</body>", encoding="utf-8")
    browser.get(page.as_uri())
    with in_the_frame(browser):
        click_button(browser, "end")
        assert number_in(grad_now(browser, "x")) == pytest.approx(float(x.grad), rel=1e-4)


def test_an_untrusted_notebook_output_says_why_it_is_empty(browser, tmp_path):
    """JupyterLab sanitizes an untrusted output: no iframe, no <style>. What is left must
    say why the box is empty; a trusted output shows the graph and not the note."""
    snap, _ = small_snapshot()
    output = notebook_html(snap)
    trusted = tmp_path / "trusted.html"
    trusted.write_text("<!DOCTYPE html><body>" + output + "</body>", encoding="utf-8")
    browser.get(trusted.as_uri())
    note = browser.find_element("css selector", "div[class^=gvz-untrusted-]")
    assert not note.is_displayed()
    assert browser.find_element("css selector", "iframe").is_displayed()
    sanitized = re.sub(r"<style>.*?</style>|<iframe.*?</iframe>", "", output, flags=re.S)
    untrusted = tmp_path / "untrusted.html"
    untrusted.write_text("<!DOCTYPE html><body>" + sanitized + "</body>", encoding="utf-8")
    browser.get(untrusted.as_uri())
    note = browser.find_element("css selector", "div[class^=gvz-untrusted-]")
    assert note.is_displayed() and "Trust the notebook" in note.text


def test_a_view_loaded_hidden_is_placed_when_first_shown(browser, tmp_path):
    """A notebook output collapsed at load gives the page a 0x0 stage: it once fitted
    there and stayed at zoom 0% when shown. It is placed when it first gets a size."""
    snap, _ = small_snapshot()
    page = tmp_path / "hidden.html"
    page.write_text(
        '<!DOCTYPE html><body><div id="box" style="display:none">' + notebook_html(snap)
        + "</div></body>", encoding="utf-8",
    )
    browser.get(page.as_uri())
    with in_the_frame(browser):
        assert js(browser, "window.gradviz.camera().s") == 0  # laid out while hidden
    browser.execute_script("document.getElementById('box').style.display = 'block'")
    with in_the_frame(browser):
        wait_js(browser, "window.gradviz.camera().s !== 0")
        camera = js(browser, "window.gradviz.camera()")
        assert camera["s"] > 0.1, camera
        ids = js(browser, "window.gradviz.picture().ids")
        at = js(browser, "window.gradviz.screenOf(arguments[0])", ids[0])
        size = browser.find_element("css selector", ".gvz-canvas").size
        assert 0 <= at["x"] <= size["width"] and 0 <= at["y"] <= size["height"]


def test_a_graph_without_backward_passes(browser, tmp_path):
    w = torch.ones(3, requires_grad=True)
    loss = (w * 2).sum()  # never backward()
    page = tmp_path / "forward.html"
    page.write_text(render_html(_plain(gradviz.snapshot(loss, names={"w": w}))), encoding="utf-8")
    open_page(browser, page)
    assert "No backward pass was recorded" in text(browser, ".gvz-status")
    assert all(
        b.get_attribute("disabled") for b in browser.find_elements("css selector", ".gvz-controls button")
    )
    press(browser, "\ue014", "\ue010")  # Right and End do nothing
    assert js(browser, "window.gradviz.cursor().position") == 0
    model = strict_json(data_block(page.read_text(encoding="utf-8")))
    fn = next(i for i, n in model["nodes"].items() if n["kind"] == "grad_fn")
    click_node(browser, fn)
    assert "SumBackward0" in text(browser, ".gvz-insp-body h3")

    empty = tmp_path / "empty.html"
    empty.write_text(render_html({"graph": {"nodes": [], "edges": []}}), encoding="utf-8")
    open_page(browser, empty)
    assert js(browser, "window.gradviz.ids()") == []


def test_prototype_names_in_the_browser(browser, tmp_path):
    """Ids, modules and variables named like Object.prototype's members, in Chromium: every
    picture, a click on every node, the pass, the Modules panel and search raise nothing
    (the ``browser`` fixture fails the test on any JavaScript error)."""
    from selenium.webdriver import ActionChains
    from selenium.webdriver.support.ui import Select

    page = tmp_path / "prototype.html"
    page.write_text(render_html(prototype_snapshot()), encoding="utf-8")
    open_page(browser, page)
    for key in ["all", "modules", "open:__proto__", "open:constructor", "chains"]:
        Select(browser.find_element("css selector", ".gvz-view")).select_by_value(key)
        assert js(browser, "window.gradviz.view()") == key
        for node_id in js(browser, "window.gradviz.ids()"):
            js(browser, "window.gradviz.centerOn(arguments[0], 1.0)", node_id)
            click_node(browser, node_id)  # asserts the click selected this very node
            press(browser, "\ue014")
    # a double-click on the collapsed "constructor" module opens it
    Select(browser.find_element("css selector", ".gvz-view")).select_by_value("modules")
    js(browser, "window.gradviz.centerOn(arguments[0], 1.0)", "g:constructor")
    click_node(browser, "g:constructor")
    assert "collapsed module" in text(browser, ".gvz-insp-body")
    canvas = browser.find_element("css selector", ".gvz-canvas")
    at = js(browser, "window.gradviz.screenOf(arguments[0])", "g:constructor")
    ActionChains(browser).move_to_element_with_offset(
        canvas, int(at["x"] - canvas.size["width"] / 2), int(at["y"] - canvas.size["height"] / 2)
    ).double_click().perform()
    assert js(browser, "window.gradviz.view()") == "open:constructor"
    browser.find_element("css selector", '.gvz-mod[data-module="__proto__"]').click()
    assert js(browser, "window.gradviz.view()") == "open:__proto__"
    click_button(browser, "end")
    assert "after pass 1 of 1" in text(browser, ".gvz-status")
    assert "[0.5, 1.5, 2.5]" in grad_now(browser, "valueOf")
    search = browser.find_element("css selector", ".gvz-search")
    for name in ("toLocaleString", "hasOwnProperty"):
        search.clear()
        search.send_keys(name, "\ue007")
    assert js(browser, "window.gradviz.selected()") in {"hasOwnProperty", "__defineGetter__", "g:__proto__"}


LOOP = (
    "import torch\n"
    "w = torch.ones(3, requires_grad=True)\n"
    "for i in range(3):\n"
    "    loss = (w * (i + 1)).sin().sum()\n"
    "    loss.backward()\n"
)


def test_an_earlier_pass_of_a_loop_is_replayed_on_the_graph_it_ran_over(browser, tmp_path):
    """Pass 1 and 2 of a training loop ran over their own iteration's graph, freed before
    the last one was built: the page drew them on the last graph (their steps lit nothing
    but the AccumulateGrad both share). Each is now drawn from what it recorded, says so,
    and is named by its backward() line and iteration; the last pass stays on the graph."""
    script = tmp_path / "loop.py"
    script.write_text(LOOP, encoding="utf-8")
    page = tmp_path / "loop.html"
    proc = subprocess.run(
        [sys.executable, "-m", "gradviz", "export", str(script), "-o", str(page)],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )
    assert page.is_file(), proc.stderr
    model = strict_json(data_block(page.read_text(encoding="utf-8")))
    drawn = set(model["nodes"])
    from selenium.webdriver.support.ui import Select

    open_page(browser, page)
    assert js(browser, "window.gradviz.view()") == "all"
    picker = Select(browser.find_element("css selector", ".gvz-pass"))
    assert [o.text for o in picker.options][:3] == [
        f"backward #{k}: loss.backward() (line 5, iteration {k})" for k in (1, 2, 3)
    ]
    for k in (0, 1):
        steps = model["passes"][k]["steps"]
        assert not {s["node"] for s in steps[:3]} & set(model["views"][0]["ids"])  # not the last graph's
        if k:
            picker.select_by_value(str(k))
            assert js(browser, "window.gradviz.view()") == f"pass:{k}"
        for step in steps:
            press(browser, "\ue014")  # (pass 1 is "ready" on the page's opening picture)
            assert js(browser, "window.gradviz.view()") == f"pass:{k}"
            assert js(browser, "window.gradviz.executing()") == step["node"]
            assert text(browser, ".gvz-now").startswith(step["label"])
            assert "Drawn from what this pass recorded" in text(browser, ".gvz-status")
        ids = set(js(browser, "window.gradviz.ids()"))
        assert {s["node"] for s in steps} <= ids <= drawn  # every node the pass ran over
        assert any(model["nodes"][i]["kind"] == "tensor" and model["nodes"][i]["vars"] == ["w"]
                   for i in ids)  # and the leaf its AccumulateGrad fills
    picker.select_by_value("2")  # the last pass ran over the graph drawn
    assert js(browser, "window.gradviz.view()") == "all"
    press(browser, "\ue014")
    assert js(browser, "window.gradviz.executing()") == model["passes"][2]["steps"][0]["node"]
    assert "Drawn from" not in text(browser, ".gvz-status")
    # a pass's picture picked from the pictures goes to that pass
    Select(browser.find_element("css selector", ".gvz-view")).select_by_value("pass:1")
    assert js(browser, "window.gradviz.cursor().k") == 1
    assert js(browser, "window.gradviz.view()") == "pass:1"


def test_an_earlier_pass_past_the_pages_budget_says_what_it_is_shown_on(tmp_path):
    from gradviz.html_view import PageLimits

    script = tmp_path / "loop.py"
    script.write_text(LOOP, encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "gradviz", "run", str(script), "--json"],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )
    report = json.loads(proc.stdout)
    model = page_model(report)
    assert [(p["foreign"], p["view"]) for p in model["passes"]] == [
        (True, "pass:0"), (True, "pass:1"), (False, None)
    ]
    tight = page_model(report, limits=PageLimits(extra_floor=0, extra_factor=0.0))
    assert [(p["foreign"], p["view"]) for p in tight["passes"]] == [
        (True, None), (True, None), (False, None)
    ]
    assert "pass:0" not in [v["key"] for v in tight["views"]]
