"""Names from scripts and snapshot files are shown as text, never as Qt markup.

A module named ``<img src="/dev/zero">`` used to become Qt rich text in node
and table tooltips: Qt read /dev/zero until memory ran out on hover. These
tests feed hostile names through the window the way a person does (a script
run in the editor; a snapshot file opened from File > Open), then walk every
widget, table and tree item, canvas item and text document, and hover the
places tooltips come from.

The audit runs before any hover: a regression fails the structural checks
instead of letting Qt's tooltip read /dev/zero.
"""

from __future__ import annotations

import json

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6 import (
    QtGui,  # noqa: E402
    QtWidgets,  # noqa: E402
)
from PySide6.QtCore import QEvent, QPoint, Qt, QTimer  # noqa: E402
from PySide6.QtGui import QHelpEvent  # noqa: E402
from PySide6.QtWidgets import (  # noqa: E402
    QAbstractButton,
    QApplication,
    QComboBox,
    QGraphicsView,
    QLabel,
    QMessageBox,
    QTableWidget,
    QTextEdit,
    QToolTip,
    QTreeWidget,
    QTreeWidgetItemIterator,
    QWidget,
)

from gradviz.ui import dialogs  # noqa: E402
from gradviz.ui.text import (  # noqa: E402
    SafeTextBrowser,
    SafeTextDocument,
    esc,
    menu_text,
    message_box,
    plain_tooltip,
    title_text,
)

TIMEOUT = 30_000

IMG = '<img src="/dev/zero">'
LINK = '<a href="file:///etc/passwd">x</a>'
BOLD = "<b>bold</b>"
RTL = "שלום_مرحبا"  # Hebrew + Arabic; the script decoder refuses bidi controls
RTL_VAR = "שלום"  # a right-to-left variable name (a valid identifier)
RTL_OVERRIDE = "שלום\u202eمرحبا"  # a snapshot file can carry U+202E anyway
LONG = "long" + "n" * 4996  # 5,000 characters
MARKUP = (IMG, LINK, BOLD)
#: the raw forms that must never reach Qt as rich text
RAW = ("<img", "<a href", "<a ", BOLD)


# --- what Qt would make of a string -----------------------------------------------------------


def _is_rich(text: str, fmt: Qt.TextFormat = Qt.TextFormat.AutoText) -> bool:
    if fmt == Qt.TextFormat.PlainText:
        return False
    if fmt == Qt.TextFormat.RichText:
        return True
    return bool(QtGui.Qt.mightBeRichText(text))


def _fragments(doc):
    block = doc.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            yield it.fragment()
            it += 1
        block = block.next()


def _document_problems(doc) -> list[str]:
    """Images or links in a rendered document: the app itself never makes either."""
    problems = []
    for frag in _fragments(doc):
        fmt = frag.charFormat()
        if fmt.isImageFormat():
            problems.append(f"image {fmt.toImageFormat().name()!r}")
        if fmt.isAnchor() or fmt.anchorHref():
            problems.append(f"link {fmt.anchorHref()!r}")
    html = doc.toHtml()
    if "<img" in html:
        problems.append("<img in toHtml()")
    if 'href="file:' in html:
        problems.append("file: href in toHtml()")
    return problems


def _render(text: str, fmt: Qt.TextFormat = Qt.TextFormat.AutoText) -> tuple[str, list[str]]:
    """(what a person reads, markup problems) for ``text`` shown with ``fmt``."""
    if not _is_rich(text, fmt):
        return text, []
    problems = [f"raw {raw!r}" for raw in RAW if raw in text]
    doc = SafeTextDocument()
    doc.setHtml(text)
    problems += _document_problems(doc)
    if doc.refused:
        problems.append(f"asked to load {doc.refused}")
    return doc.toPlainText(), problems


class Audit:
    """Everything the window shows as text: where, how Qt renders it, what it reads."""

    def __init__(self) -> None:
        self.shown: list[tuple[str, str]] = []  # (where, text as read)
        self.problems: list[str] = []
        self.labels: list[QLabel] = []
        self.browsers: list[QTextEdit] = []

    def add(self, where: str, text: str, fmt=Qt.TextFormat.AutoText) -> None:
        if not text:
            return
        read, problems = _render(text, fmt)
        self.shown.append((where, read))
        self.problems += [f"{where}: {p} in {text[:160]!r}" for p in problems]

    def text(self) -> str:
        return "\n".join(read for _, read in self.shown)

    def where(self, payload: str) -> set[str]:
        return {where for where, read in self.shown if payload in read}


def _name(w: QWidget) -> str:
    return f"{type(w).__name__}({w.objectName()!r})"


def audit_window(window) -> Audit:
    """Walk every widget, action, item, canvas item and document of the application."""
    QApplication.processEvents()
    audit = Audit()
    for w in QApplication.allWidgets():
        where = _name(w)
        audit.add(f"{where} tooltip", w.toolTip())
        audit.add(f"{where} whatsThis", w.whatsThis())
        for act in w.actions():
            audit.add(f"{where} action tooltip", act.toolTip())
            audit.add(f"{where} action", act.text().replace("&&", "&"), Qt.TextFormat.PlainText)
        if isinstance(w, QLabel):
            audit.labels.append(w)
            audit.add(f"{where} text", w.text(), w.textFormat())
        if isinstance(w, QAbstractButton):
            audit.add(f"{where} text", w.text(), Qt.TextFormat.PlainText)
        if isinstance(w, QComboBox):
            for i in range(w.count()):
                audit.add(f"{where} item tooltip", w.itemData(i, Qt.ItemDataRole.ToolTipRole) or "")
        if isinstance(w, QTableWidget):
            for r in range(w.rowCount()):
                for c in range(w.columnCount()):
                    item = w.item(r, c)
                    if item is not None:
                        audit.add(f"{where} cell tooltip", item.toolTip())
                        audit.add(f"{where} cell", item.text(), Qt.TextFormat.PlainText)
        if isinstance(w, QTreeWidget):
            it = QTreeWidgetItemIterator(w)
            while it.value() is not None:
                item = it.value()
                for c in range(w.columnCount()):
                    audit.add(f"{where} tree tooltip", item.toolTip(c))
                    audit.add(f"{where} tree item", item.text(c), Qt.TextFormat.PlainText)
                it += 1
        if isinstance(w, QTextEdit):
            audit.browsers.append(w)
            w.viewport().grab()  # lay out and paint: images would be loaded now
            doc = w.document()
            problems = _document_problems(doc)
            audit.problems += [f"{where} document: {p}" for p in problems]
            audit.shown.append((f"{where} document", doc.toPlainText()))
        if isinstance(w, QGraphicsView) and w.scene() is not None:
            for item in w.scene().items():
                audit.add(f"{where} {type(item).__name__} tooltip", item.toolTip())
    audit.add(
        "window title", window.windowTitle().replace("[*][*]", "[*]"), Qt.TextFormat.PlainText
    )
    return audit


def assert_safe(audit: Audit) -> None:
    assert not audit.problems, "markup reached Qt:\n" + "\n".join(audit.problems[:20])
    for label in audit.labels:
        text = label.text()
        if label.metaObject().className() == "QTipLabel":
            continue  # Qt's own tooltip label: its rich text was audited above
        if any(p in text for p in (*MARKUP, RTL, RTL_OVERRIDE, LONG)):
            # a name in a label: shown as plain text, or escaped into the app's own rich text
            assert label.textFormat() in (Qt.TextFormat.PlainText, Qt.TextFormat.RichText), (
                f"{_name(label)} shows a name with {label.textFormat()}"
            )
    for browser in audit.browsers:
        if isinstance(browser, SafeTextBrowser):
            doc = browser.document()
            assert isinstance(doc, SafeTextDocument)
            assert doc.refused == [], f"{_name(browser)} was asked to load {doc.refused}"
            assert not browser.openLinks() and not browser.openExternalLinks()
    # the panels' browsers are all safe ones
    assert sum(isinstance(b, SafeTextBrowser) for b in audit.browsers) >= 2


# --- what a person does ------------------------------------------------------------------------


def wait_idle(qtbot, window, condition=None) -> None:
    qtbot.waitUntil(
        lambda: (
            not window.busy
            and not window.layout_pending
            and (condition is None or bool(condition()))
        ),
        timeout=TIMEOUT,
    )


def _tip_labels() -> list[QLabel]:
    return [
        w
        for w in QApplication.topLevelWidgets()
        if w.metaObject().className() == "QTipLabel" and w.isVisible()
    ]


def hover(qtbot, widget: QWidget, pos: QPoint) -> str:
    """Rest the mouse on ``pos`` of ``widget`` (a tooltip event); the tooltip shown, if any.

    The last tooltip is hidden first, and waited for: Qt hides it on a timer, and one
    left showing (a widget's tooltip still up when the mouse moved to the canvas) would
    be read as this one's."""
    QToolTip.hideText()
    qtbot.waitUntil(lambda: not QToolTip.isVisible(), timeout=2000)
    qtbot.mouseMove(widget, pos)
    event = QHelpEvent(QEvent.Type.ToolTip, pos, widget.mapToGlobal(pos))
    QApplication.sendEvent(widget, event)
    QApplication.processEvents()
    if not QToolTip.isVisible():
        return ""
    assert [tip.text() for tip in _tip_labels()] == [QToolTip.text()]  # Qt shows this label
    return QToolTip.text()


def check_tooltip(text: str, *payloads: str) -> str:
    """The tooltip is safe rich text and reads as the payloads, literally."""
    assert text, "no tooltip was shown"
    read, problems = _render(text)
    assert not problems, problems
    for payload in payloads:
        assert payload in read, f"{payload[:60]!r} not in the tooltip {read[:200]!r}"
    for tip in _tip_labels():
        if tip.isVisible():
            shown, problems = _render(tip.text(), tip.textFormat())
            assert not problems, problems
    return read


def rich_plain(text: str) -> str:
    """What a person reads in the app's own rich text (the guide)."""
    doc = SafeTextDocument()
    doc.setHtml(text)
    return doc.toPlainText()


def node_with(window, text: str, kind: str | None = None) -> str:
    for node in window.state["graph"]["nodes"]:
        if text in str(node.get("label", "")) and (kind is None or node.get("kind") == kind):
            return node["id"]
    raise AssertionError(f"no node labelled with {text[:40]!r}")


def click_node(qtbot, window, node_id: str) -> QPoint:
    canvas = window.canvas
    node_id = window.graph_view.shown_id(node_id)
    item = canvas.node_item(node_id)
    assert item is not None
    canvas.centerOn(item)
    pos = canvas.mapFromScene(item.scenePos())
    qtbot.mouseClick(canvas.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    assert canvas.selected_node() == node_id
    return pos


def hover_node(qtbot, window, node_id: str, *payloads: str) -> str:
    click_node(qtbot, window, node_id)  # builds the inspector page
    QApplication.processEvents()  # the inspector dock comes up: the view may move
    canvas = window.canvas
    item = canvas.node_item(canvas.selected_node())
    canvas.centerOn(item)
    pos = canvas.mapFromScene(item.scenePos())
    return check_tooltip(hover(qtbot, canvas.viewport(), pos), *payloads)


def hover_table_cell(qtbot, table: QTableWidget, row: int, col: int, *payloads: str) -> str:
    item = table.item(row, col)
    table.scrollToItem(item)
    rect = table.visualItemRect(item)
    return check_tooltip(hover(qtbot, table.viewport(), rect.center()), *payloads)


def hover_module(qtbot, window, module: str, *payloads: str) -> str:
    tree = window.modules_panel.tree
    item = window.modules_panel.item(module)
    assert item is not None, module
    tree.scrollToItem(item)
    rect = tree.visualItemRect(item)
    return check_tooltip(hover(qtbot, tree.viewport(), rect.center()), *payloads)


def answer_message_box(button: QMessageBox.StandardButton, seen: list[dict]) -> None:
    """When the next message box opens, record its labels and press ``button``."""
    tries = {"n": 0}

    def check() -> None:
        box = QApplication.activeModalWidget()
        if not isinstance(box, QMessageBox):
            tries["n"] += 1
            if tries["n"] < 500:
                QTimer.singleShot(10, check)
            return
        labels = {lab.objectName(): lab for lab in box.findChildren(QLabel)}
        seen.append(
            {
                "title": box.windowTitle(),
                "formats": {
                    name: lab.textFormat()
                    for name, lab in labels.items()
                    if name in ("qt_msgbox_label", "qt_msgbox_informativelabel")
                },
                "text": box.text(),
                "audit": [_render(lab.text(), lab.textFormat()) for lab in labels.values()],
            }
        )
        box.button(button).click()

    QTimer.singleShot(0, check)


def assert_box_plain(seen: list[dict], *payloads: str) -> None:
    assert len(seen) == 1, "no message box was shown"
    box = seen[0]
    assert box["formats"]["qt_msgbox_label"] == Qt.TextFormat.PlainText
    for fmt in box["formats"].values():
        assert fmt == Qt.TextFormat.PlainText
    for _, problems in box["audit"]:
        assert not problems, problems
    for payload in payloads:
        assert payload in box["text"]


# --- the helpers themselves --------------------------------------------------------------------


def test_helpers_show_names_literally(qtbot):
    from gradviz.ui.app import create_application

    create_application()
    for payload in (*MARKUP, RTL, RTL_OVERRIDE, LONG, "a\n  b & <c>", "&lt;img&gt;"):
        tip = plain_tooltip(payload)
        assert QtGui.Qt.mightBeRichText(tip)  # Qt never guesses: it is rich text ...
        read, problems = _render(tip)
        assert not problems
        assert read == payload  # ... that reads exactly as the name, line breaks and all
        assert "<" not in esc(payload) and ">" not in esc(payload)
        doc = SafeTextDocument()
        doc.setHtml(f"<p title='{esc(payload)}'>{esc(payload)}</p>")
        assert doc.toPlainText() == " ".join(payload.split(" ")).replace("\n  ", " ")
        assert not _document_problems(doc)
    assert plain_tooltip("") == "" and plain_tooltip(None) == ""
    assert menu_text("a&b\tc") == "a&&b c"
    assert title_text("x[*].py") == "x[*][*].py"

    # even unescaped markup makes a safe browser load nothing and follow no link
    browser = SafeTextBrowser()
    qtbot.addWidget(browser)
    browser.resize(300, 200)
    browser.show()
    browser.setHtml(f"<p>{IMG}{LINK}<img src='file:///etc/passwd'></p>")
    browser.viewport().grab()
    assert "/dev/zero" in browser.document().refused
    assert not browser.openLinks() and not browser.openExternalLinks()
    with pytest.raises(TypeError):
        browser.setDocument(QtGui.QTextDocument())

    box = message_box(None, QMessageBox.Icon.Warning, IMG, LINK, informative=BOLD)
    try:
        labels = {lab.objectName(): lab for lab in box.findChildren(QLabel)}
        assert labels["qt_msgbox_label"].textFormat() == Qt.TextFormat.PlainText
        assert labels["qt_msgbox_informativelabel"].textFormat() == Qt.TextFormat.PlainText
        assert box.text() == LINK
    finally:
        box.deleteLater()


# --- (a) a script run in the window ---------------------------------------------------------------

NAMES = [IMG, LINK, BOLD, RTL, LONG]
SCRIPT = (
    "import torch\nfrom torch import nn\n"
    "m = nn.ModuleDict({" + ", ".join(f"{n!r}: nn.Linear(2, 2)" for n in NAMES) + "})\n"
    f"{RTL_VAR} = torch.ones(1, 2, requires_grad=True)\n"
    "loss = " + " + ".join(f"m[{n!r}]({RTL_VAR}).sum()" for n in NAMES) + "\n"
    "loss.backward()\n"
    f"print({IMG!r}, {LINK!r})\n"
    f"m[{LINK!r} + '!']\n"
)
FAILING_LINE = SCRIPT.count("\n")


def test_hostile_names_from_a_script_are_shown_as_text(qtbot, main_window):
    window = main_window(source=SCRIPT)
    window.activateWindow()
    window.editor.setFocus()
    qtbot.keyClick(window.editor, Qt.Key.Key_F5)  # run to end: the last line fails
    wait_idle(qtbot, window, lambda: any(not r.get("ok") for r in window.state["results"]))
    assert window.editor.error is not None

    # every hostile name reached the graph, the tensors, the modules and the output
    tensors = window.tensors_panel.names()
    for name in NAMES:
        assert f"m.{name}.weight" in tensors
        assert f"m.{name}" in window.modules_panel.modules()
    assert RTL_VAR in tensors

    audit = audit_window(window)
    assert_safe(audit)
    for payload in NAMES:
        assert payload in audit.text(), f"{payload[:40]!r} is shown nowhere"
    for payload in MARKUP:
        where = " ".join(audit.where(payload))
        assert "tensorsTable" in where  # the tensors panel, as text
        assert "modulesTree" in where  # the module tree
        assert "canvas" in where  # node tooltips
    assert IMG in window.output_panel.text() and LINK in window.output_panel.text()
    assert LINK in window.status_text()
    assert LINK in rich_plain(window.guide_note.text())  # "Line 8 failed" and why

    # the inspector, built by clicking each hostile node (and its AccumulateGrad)
    for name in NAMES:
        node = node_with(window, f"m.{name}.weight", "tensor")
        tip = hover_node(qtbot, window, node, f"m.{name}.weight")
        assert "variables:" in tip
        assert f"m.{name}.weight" in window.inspector_panel.text()
    acc = next(
        n["id"]
        for n in window.state["graph"]["nodes"]
        if n["kind"] == "accumulate_grad" and f"m.{IMG}.bias" in (n.get("vars") or [])
    )
    click_node(qtbot, window, acc)
    assert f"m.{IMG}.bias" in window.inspector_panel.text()

    # tooltips a person rests the mouse on: a table cell, a module, the failing line
    table = window.tensors_panel.table
    row = window.tensors_panel.names().index(f"m.{LONG}.weight")
    hover_table_cell(qtbot, table, row, 0, f"m.{LONG}.weight")  # long: the cell has a tooltip
    hover_module(qtbot, window, f"m.{IMG}", f"m.{IMG}")
    hover_module(qtbot, window, f"m.{LINK}", f"m.{LINK}")
    editor = window.editor
    block = editor.document().findBlockByNumber(FAILING_LINE - 1)
    rect = editor.blockBoundingGeometry(block).translated(editor.contentOffset()).toRect()
    check_tooltip(
        hover(qtbot, editor.viewport(), rect.center() - QPoint(rect.width() // 2 - 20, 0)), LINK
    )

    # collapse a hostile module: a group box on the canvas and in the inspector
    window.modules_panel.set_collapsed(f"m.{BOLD}", True)
    wait_idle(qtbot, window)
    gid = f"g:m.{BOLD}"
    assert gid in window.canvas.node_ids()
    hover_node(qtbot, window, gid, f"m.{BOLD}")
    assert f"module m.{BOLD}" in window.inspector_panel.text()
    menu = window.node_menu(gid)
    assert BOLD in menu.actions()[0].text()  # "Expand …": menu entries are plain text
    menu.deleteLater()
    addmm = next(
        n
        for n in window.state["graph"]["nodes"]
        if n["label"] == "AddmmBackward0" and n.get("module") == f"m.{IMG}"
    )
    menu = window.node_menu(addmm["id"])
    texts = [a.text().replace("&&", "&") for a in menu.actions()]
    assert f"Collapse module m.{IMG}" in texts
    menu.deleteLater()

    # search by a hostile name: the hit count, the status line, the group's matches
    qtbot.keyClicks(window.search_box, IMG)
    qtbot.keyClick(window.search_box, Qt.Key.Key_Return)
    wait_idle(qtbot, window)
    assert window.search_hits()
    assert IMG in window.status_text()

    audit = audit_window(window)
    assert_safe(audit)
    assert IMG in audit.text() and BOLD in audit.text()

    # a message box naming the script (Save / Discard / Cancel) shows the name as text
    seen: list[dict] = []
    answer_message_box(QMessageBox.StandardButton.Discard, seen)
    assert dialogs.ask_unsaved_changes(window, f"{IMG}.py") == QMessageBox.StandardButton.Discard
    assert_box_plain(seen, IMG)


# --- (b) a snapshot file opened read-only ---------------------------------------------------------

PLACEHOLDERS = {
    "PIMGX": IMG,
    "PLINKX": LINK,
    "PBOLDX": BOLD,
    "PRTLX": RTL_OVERRIDE,
    "PLONGX": LONG,
}
DEVICE = f"{IMG}cpu"
SNAPSHOT_NAME = "<img src=nothing-here> [*] a&b <u>u<u>.gradviz.json"


def _hostile_snapshot() -> dict:
    torch = pytest.importorskip("torch")
    import gradviz

    torch.manual_seed(0)
    model = torch.nn.ModuleDict({p: torch.nn.Linear(2, 2) for p in PLACEHOLDERS})
    x = torch.ones(1, 2, requires_grad=True)
    with gradviz.record(model) as rec:
        loss = sum(model[p](x).relu().sum() for p in PLACEHOLDERS)
        loss.backward()
    snap = gradviz.snapshot(loss, model=model, recorder=rec, names={"PRTLX": x})
    text = json.dumps(snap)
    # op names too: every op label carries markup
    for op, payload in (("AddmmBackward0", BOLD), ("ReluBackward0", LINK), ("SumBackward0", IMG)):
        text = text.replace(f'"{op}"', json.dumps(f"{payload}{op}"))
    for placeholder, payload in PLACEHOLDERS.items():
        text = text.replace(placeholder, json.dumps(payload)[1:-1])
    data = json.loads(text)
    data["device"] = DEVICE
    for info in data["tensors"].values():
        info["device"] = DEVICE
        info["dtype"] = f"float32{BOLD}"
    for node in data["graph"]["nodes"]:
        if "device" in node:
            node["device"] = DEVICE
        if "dtype" in node:
            node["dtype"] = f"float32{BOLD}"
    first_tensor = next(iter(data["tensors"].values()))
    first_tensor["value"] = f"tensor({IMG}{LINK} " + "9" * 80 + ")"  # a summary string
    bpass = data["backward_passes"][0]
    bpass["error"] = f"{LINK} failed"
    step = next(s for s in bpass["steps"] if any(t is not None for t in s.get("targets", [])))
    step["grad_inputs"] = [IMG for _ in step["grad_inputs"]]  # summary strings on the edges
    return data


def test_hostile_names_from_a_snapshot_file_are_shown_as_text(
    qtbot, main_window, monkeypatch, tmp_path
):
    path = tmp_path / SNAPSHOT_NAME
    path.write_text(json.dumps(_hostile_snapshot()), encoding="utf-8")
    window = main_window()
    monkeypatch.setattr(QtWidgets.QFileDialog, "getOpenFileName", lambda *a, **k: (str(path), "*.json"))
    window.act_open.trigger()
    wait_idle(qtbot, window)
    assert window.read_only

    audit = audit_window(window)
    assert_safe(audit)
    text = audit.text()
    for payload in (*PLACEHOLDERS.values(), DEVICE, SNAPSHOT_NAME):
        assert payload in text, f"{payload[:40]!r} is shown nowhere"
    # names, devices and the file name where a person looks for them
    assert f"{RTL_OVERRIDE}.weight" in window.tensors_panel.names()
    assert window.device_label.text() == f"device: {DEVICE}"
    assert window.device_label.textFormat() == Qt.TextFormat.PlainText
    assert SNAPSHOT_NAME in window.editor_header.text()
    assert window.editor_header.textFormat() == Qt.TextFormat.PlainText
    assert SNAPSHOT_NAME in rich_plain(window.guide_title.text())
    handle = window.windowHandle()
    assert handle is not None and SNAPSHOT_NAME in handle.title()  # "[*]" kept as text
    recent = [a for a in window.recent_menu.actions() if a.toolTip()]
    assert recent and recent[0].text().replace("&&", "&") == SNAPSHOT_NAME
    check_tooltip(recent[0].toolTip(), str(path.resolve()))
    for module in (IMG, LINK, BOLD, RTL_OVERRIDE, LONG):
        assert module in window.modules_panel.modules()

    # click and hover nodes: parameters (name, dtype, device) and ops
    for payload in (IMG, LINK, RTL_OVERRIDE, LONG):
        node = node_with(window, f"{payload}.weight", "tensor")
        hover_node(qtbot, window, node, f"{payload}.weight", f"float32{BOLD}")
        inspector = window.inspector_panel.text()
        assert f"{payload}.weight" in inspector
        assert f"float32{BOLD}" in inspector and DEVICE in inspector
    for op, payload in (("AddmmBackward0", BOLD), ("ReluBackward0", LINK), ("SumBackward0", IMG)):
        node = node_with(window, f"{payload}{op}", "grad_fn")
        hover_node(qtbot, window, node, f"{payload}{op}")
        assert f"{payload}{op}" in window.inspector_panel.text()
    table = window.tensors_panel.table
    names = window.tensors_panel.names()
    first = next(iter(json.loads(path.read_text())["tensors"]))
    hover_table_cell(qtbot, table, names.index(first), 1, IMG, LINK)  # the value's tooltip
    hover_module(qtbot, window, IMG, IMG)
    hover_module(qtbot, window, RTL_OVERRIDE, RTL_OVERRIDE)

    # F11 replays the pass: the edges carry hostile values, the guide names hostile ops
    steps = window.state["backward_passes"][0]["steps"]
    hostile = next(i for i, s in enumerate(steps) if IMG in s.get("grad_inputs", []))
    window.canvas.setFocus()
    for _ in range(hostile + 1):
        qtbot.keyClick(window.canvas, Qt.Key.Key_F7)
    edge_labels = [
        item for item in window.canvas.scene().items() if type(item).__name__ == "_EdgeLabelItem"
    ]
    assert edge_labels
    assert_safe(audit_window(window))
    for item in edge_labels:
        read, problems = _render(item.toolTip())
        assert not problems and IMG in read
        window.canvas.centerOn(item)
        qtbot.wait(100)  # the docks settle after the step (the view may move): as hover_node
        window.canvas.centerOn(item)
        pos = window.canvas.mapFromScene(item.scenePos())
        check_tooltip(hover(qtbot, window.canvas.viewport(), pos), IMG)
    guide = rich_plain(window.guide_note.text())
    assert f"step {hostile + 1} of" in guide and IMG in guide
    while window.replay.available():  # to the last step (one more F7 ends the replay)
        qtbot.keyClick(window.canvas, Qt.Key.Key_F7)
    assert f"{LINK} failed" in rich_plain(window.guide_note.text())
    assert_safe(audit_window(window))

    # collapse a hostile module, then search for a hostile name inside it
    window.modules_panel.set_collapsed(LINK, True)
    wait_idle(qtbot, window)
    gid = f"g:{LINK}"
    hover_node(qtbot, window, gid, LINK)
    window.find_node(LINK)
    wait_idle(qtbot, window)
    assert LINK in window.status_text()
    assert window.search_hits()
    assert f"Matches for '{LINK}'" in window.inspector_panel.text()
    audit = audit_window(window)
    assert_safe(audit)

    # a file that cannot be opened, named with markup: the error box shows the name as text
    bad = tmp_path / "<img src=nothing-here> bad.json"
    bad.write_text("{not json", encoding="utf-8")
    seen: list[dict] = []
    answer_message_box(QMessageBox.StandardButton.Ok, seen)
    assert window.open_path(bad, ask=False) is False
    assert_box_plain(seen, bad.name)
    assert bad.name in window.status_text() and window.read_only


def test_snapshot_with_a_hostile_node_id_and_storage(qtbot, main_window, tmp_path):
    """Ids and storage groups are names too: the inspector and tooltips show them as text."""
    data = _hostile_snapshot()
    node = next(n for n in data["graph"]["nodes"] if n["kind"] == "tensor")
    old, new = node["id"], f"t{IMG}"
    text = json.dumps(data).replace(json.dumps(old), json.dumps(new))
    data = json.loads(text)
    for n in data["graph"]["nodes"]:
        if n["id"] == new:
            n["storage"] = f"S{BOLD}"
    path = tmp_path / "ids.gradviz.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    window = main_window(file=str(path))
    wait_idle(qtbot, window)
    assert window.read_only and new in window.canvas.node_ids()
    assert_safe(audit_window(window))
    hover_node(qtbot, window, new, new, f"storage group S{BOLD}")
    assert f"id {new}" in window.inspector_panel.text()
    assert f"S{BOLD}" in window.inspector_panel.text()
    assert_safe(audit_window(window))


def test_recent_files_and_title_keep_names_as_text(qtbot, main_window, tmp_path):
    script = tmp_path / "<b>bold<b> [*] & more.py"
    script.write_text("import torch\nx = torch.ones(2, requires_grad=True)\n", encoding="utf-8")
    window = main_window(file=str(script))
    assert window.path == script.resolve()
    assert window.editor_header.text().startswith(script.name)
    assert window.editor_header.textFormat() == Qt.TextFormat.PlainText
    check_tooltip(window.editor_header.toolTip(), str(script.resolve()))
    handle = window.windowHandle()
    assert handle is not None and script.name in handle.title()
    act = window.recent_menu.actions()[0]
    assert act.text().replace("&&", "&") == script.name
    check_tooltip(act.toolTip(), str(script.resolve()))
    assert script.name in rich_plain(window.guide_title.text())
    assert_safe(audit_window(window))
