"""The interactive HTML page in Korean: the same catalog as the window (context ``HtmlView``).

The page's script (``gradviz/html_view.js``) shows a text only through ``tr("English")``,
and every such text is listed in ``gradviz/i18n/html_texts.py`` (where lupdate reads it)
with a Korean entry in ``gradviz_ko.ts``; ``html_view.py`` looks its own words up in the
same table. The page carries its language's messages as JSON. The language: ``language=``,
else the program's choice (``gradviz export``), else ``GRADVIZ_LANG`` and the locale.

The browser test renders Korean pages in headless Chromium (as tests/test_html_view.py
does; it skips where there is none), visits every panel in every state, and reads what a
person sees: Korean, and no English word that is not a name (the snapshot's, PyTorch's).
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from gradviz import i18n
from gradviz.i18n.html_texts import CONTEXT, TEXTS, page_messages, page_text

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "gradviz" / "html_view.js"
PAGE = ROOT / "gradviz" / "html_view.py"
HANGUL = re.compile(r"[\uac00-\ud7a3]")
PLACEHOLDER = re.compile(r"\{\w+\}")


# --------------------------------------------------------------------------- the script's texts


def js_strings(source: str) -> list[tuple[int, str, str]]:
    """Every string literal of a script: (line, its value, how it is used: ``"tr"`` when
    it is the whole first argument of ``tr(...)``, else ``""``). Comments and regular
    expression literals are skipped; a template literal fails (it would hide words)."""
    out: list[tuple[int, str, str]] = []
    i, n, prev = 0, len(source), ""
    while i < n:
        c = source[i]
        if source.startswith("//", i):
            i = source.index("\n", i)
            continue
        if source.startswith("/*", i):
            i = source.index("*/", i) + 2
            continue
        if c == "`":
            line = source.count("\n", 0, i) + 1
            raise AssertionError(f"html_view.js:{line}: a template literal: use tr() instead")
        if c in "\"'":
            j, raw = i + 1, []
            while source[j] != c:
                raw.append(source[j : j + 2] if source[j] == "\\" else source[j])
                j += 2 if source[j] == "\\" else 1
            text = "".join(raw)
            if c == "'":
                text = text.replace("\\'", "'").replace('"', '\\"')
            value = json.loads('"' + text + '"')
            before = source[:i].rstrip()
            after = source[j + 1 :].lstrip()
            called = re.search(r"(?<![\w.$])tr\($", before) and after[:1] in (",", ")")
            out.append((source.count("\n", 0, i) + 1, value, "tr" if called else ""))
            i, prev = j + 1, c
            continue
        if c == "/" and prev in "(,=:[!&|?{};+-*%<>~^":
            j, in_class = i + 1, False  # a regular expression literal
            while source[j] != "/" or in_class:
                in_class = (in_class or source[j] == "[") and source[j] != "]"
                j += 2 if source[j] == "\\" else 1
            i, prev = j + 1, "/"
            continue
        if not c.isspace():
            prev = c
        i += 1
    return out


#: the script's literals that are code, not words a person reads: DOM, SVG and CSS names,
#: events and keys, the snapshot's keys and kinds, and names that are the same in every
#: language (Python's True/False/None, PyTorch's attributes). A new literal with words in
#: it fails below until it is shown through tr() or, when it is code, listed here.
CODE = {
    "use strict", "2d", "en-US", "nan", "inf", "-inf", "boolean", "number", "object", "string",
    "div", "span", "table", "tr", "th", "td", "button", "option", "h3", "b", "i", "svg", "line",
    "text", "path", "circle", "title", "INPUT", "SELECT", "TEXTAREA", "text-anchor",
    "stroke-width", "data-y", "middle", "center", "end", "none", "bold ", "button[data-act]",
    "click", "dblclick", "change", "keydown", "wheel", "pointerdown", "pointermove", "pointerup",
    "ArrowLeft", "ArrowRight", "PageUp", "PageDown", "Home", "End", "Enter", "Escape",
    "all", "modules", "chains", "open:", "start", "pass-back", "step-back", "zoom-in",
    "zoom-out", "group", "saved", "tensor", "backward", "AccumulateGrad",
    "True", "False", "None", "grad_fn", "requires_grad", "is_leaf", "_version", "dtype",
    "device", "shape", " \u00b7 retain_graph=", ".grad = ",
}  # fmt: skip
CODE_PATTERN = re.compile(
    r"[\W\d_]*"  # punctuation, numbers
    r"|(?:script)?\.?gvz-[\w-]+(?: gvz-[\w-]+)*(?: button)?"  # the page's classes
    r"|#[0-9a-f]{6}|\d+px |rgba\([\d,.]+\)|<svg [^<]*</svg>"  # colours, fonts, markup
    r'|"DejaVu Sans Mono",[\w ",]+'  # the canvas's fonts
)


def _shown_words(text: str) -> bool:
    return bool(re.search(r"[A-Za-z]{2,}", text))


def test_every_text_the_script_shows_goes_through_tr():
    strings = js_strings(SCRIPT.read_text(encoding="utf-8"))
    assert len(strings) > 300
    raw = [
        f"html_view.js:{line}: {value!r}"
        for line, value, use in strings
        if use != "tr" and _shown_words(value)
        and value not in CODE and not CODE_PATTERN.fullmatch(value)
    ]  # fmt: skip
    assert not raw, (
        "shown without tr() (wrap it: tr(\"English {name}\", {name}), and list it in "
        "gradviz/i18n/html_texts.py), or code that belongs in CODE here:\n" + "\n".join(raw)
    )


def _script_texts() -> dict[str, int]:
    return {v: line for line, v, use in js_strings(SCRIPT.read_text(encoding="utf-8")) if use}


def _python_texts() -> dict[str, int]:
    """html_view.py's own words: ``_t(language, "text")`` and, in the page's frame,
    ``t("text")``."""
    out = {}
    for node in ast.walk(ast.parse(PAGE.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            args = node.args[1:] if node.func.id == "_t" else node.args if node.func.id == "t" else []
            if args and isinstance(args[0], ast.Constant) and isinstance(args[0].value, str):
                out[args[0].value] = node.lineno
    return out


def test_every_text_is_in_the_table_with_korean():
    table = set(TEXTS)
    used = {**_python_texts(), **_script_texts()}
    assert len(used) > 100
    missing = [f"line {line}: {text!r}" for text, line in used.items() if text not in table]
    assert not missing, "not in gradviz/i18n/html_texts.py's TEXTS:\n" + "\n".join(missing)
    catalog = i18n.catalog("ko")
    untranslated = []
    for text in TEXTS:
        korean = catalog.get((CONTEXT, text, ""))
        words = [w for w in re.findall(r"[A-Za-z]{2,}", PLACEHOLDER.sub("", text)) if w != "grad"]
        if korean is None or (words and not HANGUL.search(korean)):
            untranslated.append(f"{text!r}: {korean!r}")
        elif sorted(PLACEHOLDER.findall(text)) != sorted(PLACEHOLDER.findall(korean)):
            untranslated.append(f"placeholders differ: {text!r}: {korean!r}")
    assert not untranslated, (
        "run python -m gradviz.i18n.build --update, translate the HtmlView messages in "
        "gradviz/i18n/gradviz_ko.ts, then python -m gradviz.i18n.build:\n" + "\n".join(untranslated)
    )
    assert len(set(TEXTS)) == len(TEXTS), "a text listed twice"
    # and no text stays in the table after the page stopped showing it
    constants = {
        node.value
        for node in ast.walk(ast.parse(PAGE.read_text(encoding="utf-8")))
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    }
    unused = [t for t in TEXTS if t not in used and t not in constants]
    assert not unused, "listed in html_texts.py but shown nowhere:\n" + "\n".join(unused)


def test_page_messages():
    assert page_messages("en") == {}
    ko = page_messages("ko")
    assert set(ko) == set(TEXTS)
    assert ko["Backward passes"] == "역전파 기록" and ko["Inspector"] == "노드 정보"
    assert page_text("ko", "{n} nodes", n="1,234") == "노드 1,234개"
    assert page_text("en", "{n} nodes", n=3) == "3 nodes"


# --------------------------------------------------------------------------- which language


@pytest.fixture
def unchosen(monkeypatch):
    """A library or a notebook: nobody called set_language."""
    monkeypatch.setattr(i18n, "_chosen", False)
    monkeypatch.setattr(i18n, "_current", "en")
    for var in ("LC_ALL", "LC_MESSAGES", "LANG", "LANGUAGE", i18n.ENV_VAR):
        monkeypatch.delenv(var, raising=False)
    return monkeypatch


def test_the_language_follows_the_cli_choice(unchosen):
    assert i18n.resolve_language() == "en"
    unchosen.setenv("LANG", "ko_KR.UTF-8")
    assert i18n.resolve_language() == "ko"
    unchosen.setenv(i18n.ENV_VAR, "en")  # the variable beats the locale
    assert i18n.resolve_language() == "en"
    assert i18n.resolve_language("ko_KR") == "ko"  # an explicit argument beats both
    unchosen.setenv(i18n.ENV_VAR, "ko")
    i18n.set_language("en")  # a program that chose (gradviz export, the window) is obeyed
    try:
        assert i18n.resolve_language() == "en"
    finally:
        i18n.set_language("en")
    with pytest.raises(ValueError, match="no language 'fr'"):
        i18n.resolve_language("fr")


# --------------------------------------------------------------------------- the page's data

torch = pytest.importorskip("torch")

import gradviz  # noqa: E402
from gradviz.html_view import (  # noqa: E402
    PageLimits,
    PageTooBig,
    notebook_html,
    page_model,
    render_html,
)
from tests import test_html_view  # noqa: E402
from tests.test_export_limits import chain_with_blocks  # noqa: E402
from tests.test_html_view import (  # noqa: E402
    click_button,
    click_node,
    data_block,
    js,
    open_page,
    small_snapshot,
    strict_json,
)

# the headless Chromium of tests/test_html_view.py (one per module), as fixtures here
chromium = test_html_view.chromium
browser = test_html_view.browser


def test_page_model_in_korean():
    snap, _ = small_snapshot()
    english, korean = page_model(snap, language="en"), page_model(snap, language="ko")
    assert english["language"] == "en" and english["messages"] == {}
    assert korean["language"] == "ko" and korean["messages"] == page_messages("ko")
    assert [p["title"] for p in english["passes"]] == ["backward #1", "backward #2"]
    assert [p["title"] for p in korean["passes"]] == ["역전파 #1", "역전파 #2"]
    assert english["title"] == "autograd graph, 6 nodes" and korean["title"] == "autograd 계산 그래프, 노드 6개"
    assert [v["title"] for v in korean["views"]] == ["모두 펼침"]
    (leaf,) = [leaf for leaf in korean["leaves"] if leaf["name"] == "x"]
    assert [c[2] for c in leaf["changes"]] == ["역전파 #1", "역전파 #2"]
    assert [p["short"] for p in leaf["points"]] == ["#1", "#2"]
    assert korean["style"]["legend"]["grad_fn"] == "연산 (grad_fn)"
    # what is data stays as it is: the graph, the values, the positions
    for key in ("nodes", "offsets", "tensors", "statements", "counts"):
        assert korean[key] == english[key], key
    assert [v["x"] for v in korean["views"]] == [v["x"] for v in english["views"]]
    page = render_html(snap, language="ko")
    assert '<html lang="ko">' in page and ">맞춤</button>" in page and "<h2>노드 정보</h2>" in page
    assert render_html(snap, language="en") == render_html(snap)  # the tests' default


def test_notes_and_groups_in_korean():
    one = page_model(chain_with_blocks(40, 1).to_dict(), language="ko")
    assert any("최상위 블록 하나를 접어도" in note for note in one["notes"]), one["notes"]
    two = page_model(chain_with_blocks(40, 2).to_dict(), language="ko")
    assert any("최상위 블록 2개를 접어도" in note for note in two["notes"]), two["notes"]
    assert [v["title"] for v in two["views"]] == ["모두 펼침", "일렬 연산 접음"]
    late = page_model(chain_with_blocks(40, 6, ops=4).to_dict(), language="ko",
                      limits=PageLimits(seconds=0.0))  # fmt: skip
    assert any("묶은 그림 2개를 뺐습니다" in note for note in late["notes"]), late["notes"]
    # a collapsed block's box says how many nodes it hides, in Korean, and is sized for it
    blocks = page_model(chain_with_blocks(10, 3, ops=6).to_dict(), language="ko")
    modules = next(v for v in blocks["views"] if v["key"] == "modules")
    i = modules["ids"].index("g:0")
    assert blocks["shown"]["g:0"]["lines"] == ["0", "노드 6개"]
    english = page_model(chain_with_blocks(10, 3, ops=6).to_dict(), language="en")
    j = next(v for v in english["views"] if v["key"] == "modules")["ids"].index("g:0")
    assert english["shown"]["g:0"]["lines"] == ["0", "6 nodes"]
    assert modules["w"][i] >= next(v for v in english["views"] if v["key"] == "modules")["w"][j]


def test_too_big_a_graph_is_refused_in_korean():
    snap = {"graph": {"nodes": [{"id": "a"}, {"id": "b"}], "edges": [{"source": "a", "target": "b"}]}}
    with pytest.raises(PageTooBig, match="HTML 페이지 하나에 담을 수 있는 양"):
        page_model(snap, limits=PageLimits(max_elements=2), language="ko")
    with pytest.raises(PageTooBig, match="more than an HTML page takes"):
        page_model(snap, limits=PageLimits(max_elements=2), language="en")


def test_notebook_output_in_korean():
    snap, _ = small_snapshot()
    frame = notebook_html(snap, language="ko")
    note = re.search(r'<div class="gvz-untrusted-\w+">([^<]*)</div>', frame)
    assert note and note.group(1).startswith("gradviz: 이 노트북은 신뢰할 수 없는 상태라서")
    assert 'title="gradviz 대화형 계산 그래프"' in frame
    assert "lang=&quot;ko&quot;" in frame


def test_snapshot_to_html_follows_gradviz_lang(unchosen):
    x = torch.tensor(2.0, requires_grad=True)
    y = x * x
    y.backward()
    snap = gradviz.snapshot(y, names={"x": x})
    assert '<html lang="en">' in snap.to_html()
    unchosen.setenv(i18n.ENV_VAR, "ko")
    assert '<html lang="ko">' in snap.to_html()
    assert '<html lang="en">' in snap.to_html(language="en")
    assert "신뢰할 수 없는" in snap._repr_html_()
    bundle = snap._repr_mimebundle_()
    assert "신뢰할 수 없는" in bundle["text/html"]


def test_export_html_in_korean(tmp_path):
    """``gradviz export`` writes the page in the language it speaks (GRADVIZ_LANG)."""
    out = tmp_path / "retain_graph.html"
    env = {**os.environ, i18n.ENV_VAR: "ko"}
    proc = subprocess.run(
        [sys.executable, "-m", "gradviz", "export", "--demo", "retain_graph", "-o", str(out)],
        capture_output=True, text=True, timeout=300, cwd=ROOT, env=env,
    )  # fmt: skip
    assert out.is_file(), proc.stderr
    page = out.read_text(encoding="utf-8")
    assert '<html lang="ko">' in page
    model = strict_json(data_block(page))
    assert model["language"] == "ko" and model["passes"][0]["title"] == "역전파 #1"

    from gradviz.export import export_graph, export_snapshot
    from gradviz.graph.graphdata import graph_from_json

    alone = tmp_path / "graph.html"
    export_graph(graph_from_json(model_graph(model)), alone, language="ko")
    assert '<html lang="ko">' in alone.read_text(encoding="utf-8")
    snap, _ = small_snapshot()
    said: list[str] = []
    i18n.set_language("ko")  # as gradviz export does: its progress lines speak Korean too
    try:
        export_snapshot(snap, tmp_path / "snap.html", progress=said.append)
        export_snapshot(snap, tmp_path / "snap.svg", progress=said.append)
    finally:
        i18n.set_language("en")
    assert "역전파 #1" in (tmp_path / "snap.html").read_text(encoding="utf-8")
    assert said == [
        "노드 6개, 간선 5개, 역전파 2번으로 대화형 페이지를 만드는 중",
        "노드 6개와 간선 5개를 배치하고 그리는 중 (svg)",
    ], said


def model_graph(model: dict) -> dict:
    """A page's graph as node-link data again (its nodes carry their attributes)."""
    nodes = [{"id": i, **attrs} for i, attrs in model["nodes"].items()]
    ids = model["views"][0]["ids"]
    edges = [{"source": ids[s], "target": ids[t], "kind": k} for s, t, k in model["views"][0]["edges"]]
    return {"nodes": nodes, "edges": edges}


# --------------------------------------------------------------------------- in a real browser

#: every text a person can read on the page: text on screen, options, tooltips, placeholders
COLLECT = """
const root = document.querySelector('.gvz-root');
const out = [];
const walk = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
while (walk.nextNode()) {
  const node = walk.currentNode, parent = node.parentElement;
  const t = node.textContent.trim();
  if (!t || !parent || parent.closest('script')) continue;
  if (parent.closest('option, title') || parent.getClientRects().length)
    out.push([parent.tagName.toLowerCase() + '.' + (parent.getAttribute('class') || ''), t]);
}
for (const e of root.querySelectorAll('[title], [placeholder]')) {
  if (e.getAttribute('title')) out.push([e.tagName.toLowerCase() + ' title', e.getAttribute('title')]);
  if (e.getAttribute('placeholder')) out.push([e.tagName.toLowerCase() + ' placeholder', e.getAttribute('placeholder')]);
}
out.push(['document title', document.title]);
return out;
"""

#: names that stay English in every language (PyTorch's and Python's, keys, menus named
#: as the notebook names them)
AS_IS = {
    "gradviz", "autograd", "grad", "grad_fn", "requires_grad", "is_leaf", "retain_graph",
    "True", "False", "None", "_version", "dtype", "device", "shape", "AccumulateGrad",
    "accumulate_grad", "backward", "Home", "End", "Shift", "Page", "Up", "Down", "Enter",
    "File", "Trust", "Notebook", "SVG",
}  # fmt: skip


def data_strings(model: dict) -> set[str]:
    """Every text the snapshot itself carries (names, sources, values, PyTorch's errors)."""
    found: set[str] = set()

    def walk(value, key=None):
        if isinstance(value, str) and key != "kind":
            found.add(value)
        elif isinstance(value, dict):
            for k, v in value.items():
                walk(k)
                walk(v, k)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    for key in ("nodes", "tensors", "statements", "groups"):
        walk(model[key])
    for p in model["passes"]:
        walk([p["steps"], p["error"], p["statement"], p["root"]])
    walk([leaf["name"] for leaf in model["leaves"]])
    return found


def english_left(texts: list[list[str]], model: dict) -> list[str]:
    """Texts with an English word that is neither a name nor the snapshot's own; and
    texts where an English text of the table is still shown as it is."""
    data = sorted((d for d in data_strings(model) if len(d) > 1), key=len, reverse=True)
    allowed = AS_IS | {w for d in data for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", d)}
    left, cleaned = [], []
    for where, shown in texts:
        text = shown
        for d in data:
            if len(d) > 12 and d in text:
                text = text.replace(d, " ")  # a PyTorch error, a source line, a value
        words = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text)
        cleaned.append((where, text))
        strange = [w for w in words if len(w) > 1 and w not in allowed]
        if strange:
            left.append(f"{where}: {text!r} ({', '.join(strange)})")
    for source in TEXTS:
        if page_text("ko", source) == source:
            continue
        pieces = [p for p in PLACEHOLDER.split(source) if re.search(r"[A-Za-z]{3,}", p)]
        for where, text in cleaned:
            if text == source.strip() or any(len(p.strip()) > 8 and p in text for p in pieces):
                left.append(f"{where}: {text!r} is the English of {source!r}")
    return left


def visit(driver, model: dict, seen: list, sample: bool = False) -> None:
    """What the page shows now, and with each node of the picture selected in turn (a
    ``sample``: every box and one node of each kind and label)."""
    seen.extend(driver.execute_script(COLLECT))
    ids = js(driver, "window.gradviz.ids()")
    if sample:
        first: dict = {}
        for i in ids:
            attrs = model["nodes"].get(i, {})
            first.setdefault((attrs.get("kind"), attrs.get("label")) if attrs else i, i)
        ids = list(first.values())
    for node_id in ids:
        js(driver, "window.gradviz.centerOn(arguments[0], 1.0)", node_id)
        click_node(driver, node_id)
        seen.extend(driver.execute_script(COLLECT))


def not_cut(driver) -> list[str]:
    """The page's own words that do not fit their box (names and values, which the page
    clips with an ellipsis on purpose, are not checked)."""
    return driver.execute_script("""
      const out = [];
      const sel = 'h2, button, th, .gvz-hud, .gvz-status div, .gvz-sub, .gvz-kind, .gvz-legend span, '
        + '.gvz-plot-title, .gvz-note, .gvz-insp-body > .gvz-muted';
      for (const e of document.querySelectorAll(sel)) {
        if (!e.getClientRects().length) continue;
        if (e.scrollWidth > e.clientWidth + 1 || e.scrollHeight > e.clientHeight + 1 && getComputedStyle(e).overflowY !== 'visible')
          out.push(e.tagName + '.' + e.className + ': ' + e.textContent.slice(0, 80));
        const r = e.getBoundingClientRect();
        if (r.right > window.innerWidth + 1) out.push('off-screen ' + e.tagName + ': ' + e.textContent.slice(0, 80));
      }
      return out;""")


def encoder_snapshot(layers: int = 2):
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        layer = torch.nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16)
        model = torch.nn.TransformerEncoder(layer, num_layers=layers)
    with gradviz.record(model) as rec:
        loss = model(torch.randn(3, 2, 8)).sum()
        loss.backward()
    return gradviz.snapshot(loss, model=model, recorder=rec)


@pytest.fixture(scope="module")
def korean_pages(tmp_path_factory):
    """The retain_graph lesson as ``GRADVIZ_LANG=ko gradviz export`` writes it, and a
    two-layer encoder's page (modules, chains, open blocks) from ``to_html(language="ko")``."""
    folder = tmp_path_factory.mktemp("korean")
    lesson = folder / "retain_graph.html"
    env = {**os.environ, i18n.ENV_VAR: "ko"}
    subprocess.run(
        [sys.executable, "-m", "gradviz", "export", "--demo", "retain_graph", "-o", str(lesson)],
        capture_output=True, text=True, timeout=300, cwd=ROOT, env=env,
    )  # fmt: skip
    encoder = folder / "encoder.html"
    encoder.write_text(encoder_snapshot().to_html(language="ko"), encoding="utf-8")
    return lesson, encoder


def resize(driver, width: int, height: int) -> None:
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
    )


@pytest.mark.parametrize("size", [(1400, 900), (1024, 700)], ids=["1400x900", "1024x700"])
def test_the_lesson_page_in_korean(browser, korean_pages, size):
    """Every panel at every step of the retain_graph lesson, each node clicked: Korean,
    no English left but names, and none of the page's words cut at either size."""
    lesson, _ = korean_pages
    resize(browser, *size)
    try:
        open_page(browser, lesson)
        model = strict_json(data_block(lesson.read_text(encoding="utf-8")))
        heads = [h.text for h in browser.find_elements("css selector", ".gvz-side h2") if h.text]
        assert heads == ["역전파 기록", "노드 정보", "리프 텐서의 .grad"], heads
        assert "준비됨" in browser.find_element("css selector", ".gvz-status").text
        seen: list = []
        cut: list = []
        ends = [0, 1, 2, *[o - 1 for o in model["offsets"][1:]], model["offsets"][-1]]
        for position in ends:
            click_button(browser, "start")
            for _ in range(position):
                click_button(browser, "step")
            visit(browser, model, seen)
            cut += not_cut(browser)
        search = browser.find_element("css selector", ".gvz-search")
        search.send_keys("없는이름", "\ue007")
        seen.extend(browser.execute_script(COLLECT))
        assert "“없는이름”와(과) 맞는 노드가 없습니다" in browser.find_element("css selector", ".gvz-hud").text
        texts = [t for _, t in seen]
        assert any("받아 보냅니다" in t for t in texts)  # a step's sentence
        assert any(t.startswith("실패: ") for t in texts)  # the third pass fails
        assert any(t.endswith("retain_graph=True를 넘기세요.") for t in texts)  # and why, in Korean
        assert any("역전파 #3" in t and "(실패)" in t for t in texts)  # and the list says so
        assert any("해제됨" in t for t in texts)  # saved tensors freed by backward
        assert not english_left(seen, model), "\n".join(sorted(set(english_left(seen, model))))
        assert not cut, "\n".join(sorted(set(cut)))
    finally:
        resize(browser, 1400, 900)


@pytest.mark.parametrize("size", [(1400, 900), (1024, 700)], ids=["1400x900", "1024x700"])
def test_the_modules_page_in_korean(browser, korean_pages, size):
    from selenium.webdriver.support.ui import Select

    _, encoder = korean_pages
    resize(browser, *size)
    try:
        open_page(browser, encoder)
        model = strict_json(data_block(encoder.read_text(encoding="utf-8")))
        seen: list = []
        cut: list = []
        for _ in range(40):
            click_button(browser, "step")
        for key in js(browser, "window.gradviz.pictures()"):
            Select(browser.find_element("css selector", ".gvz-view")).select_by_value(key)
            visit(browser, model, seen, sample=True)
            cut += not_cut(browser)
        options = [o.text for o in browser.find_elements("css selector", ".gvz-view option")]
        assert options[:3] == ["모두 펼침", "모듈 접음", "layers.0 펼침"], options
        modules = browser.find_element("css selector", ".gvz-modules").text
        assert "모두 접기" in modules and "노드 " in modules, modules
        texts = [t for _, t in seen]
        assert "접힌 모듈" in texts and "일렬 연산" in texts
        assert not english_left(seen, model), "\n".join(sorted(set(english_left(seen, model))))
        assert not cut, "\n".join(sorted(set(cut)))
    finally:
        resize(browser, 1400, 900)


def test_an_english_page_has_no_korean(browser, tmp_path):
    snap, _ = small_snapshot()
    page = tmp_path / "en.html"
    page.write_text(render_html(snap, language="en"), encoding="utf-8")
    open_page(browser, page)
    texts = browser.execute_script(COLLECT)
    assert not [t for _, t in texts if HANGUL.search(t)]
    assert js(browser, "document.querySelector('.gvz-side h2').textContent") == "Backward passes"
