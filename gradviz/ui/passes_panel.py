"""The list of backward passes, and each pass's own graph.

Every ``backward()`` call keeps the graph it ran over (the kernel's
``backward_passes[k]``: ``nodes``, ``labels``, ``edges``, ``names``, captured
when the pass started). In a training loop each iteration builds a new graph,
so pass 1's nodes are gone from the graph drawn after iteration 3: replaying
pass 1 draws :func:`pass_graph` instead, labelled with the script's names.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QLabel, QListWidget, QListWidgetItem, QVBoxLayout, QWidget

from . import theme
from .panels import fmt_value


def pass_title(index: int, bpass: dict[str, Any], statements: Sequence[dict[str, Any]]) -> str:
    """``#2 · line 24 · iteration 2 · loss``: which call, where, and its root's name."""
    parts = [f"#{index + 1}"]
    line = bpass.get("line")
    if line is None and bpass.get("statement") is not None and bpass["statement"] < len(statements):
        line = statements[bpass["statement"]]["line"]
    if line is not None:
        parts.append(f"line {line}")
    if bpass.get("iteration") is not None:
        parts.append(f"iteration {bpass['iteration']}")
    parts.append(root_name(bpass))
    if bpass.get("kind") == "grad":
        parts.append("autograd.grad")
    if bpass.get("error"):
        parts.append("failed")
    return " · ".join(parts)


def root_name(bpass: dict[str, Any]) -> str:
    """The script's name for the pass's root (``loss``), else its op's class name."""
    names = bpass.get("names") or {}
    labels = dict(zip(bpass.get("nodes") or [], bpass.get("labels") or []))
    roots = [str(r) for r in bpass.get("root") or []]
    shown = []
    for root in roots:
        own = names.get(root) or []
        if own:
            shown.append(str(own[0]))
        elif root in labels:
            shown.append(labels[root])
    if not shown:
        steps = bpass.get("steps") or []
        if steps and steps[0].get("vars"):
            shown.append(str(steps[0]["vars"][0]))
        elif steps:
            shown.append(str(steps[0].get("label", "root")))
    return ", ".join(shown) or "root"


def pass_graph(bpass: dict[str, Any]) -> dict[str, Any]:
    """The graph ``bpass`` ran over, as canvas data: one node per grad_fn, named as the
    script names it (an op with no name of its own shows its class name only)."""
    names = bpass.get("names") or {}
    nodes = []
    seen: set[str] = set()
    for node_id, label in zip(bpass.get("nodes") or [], bpass.get("labels") or []):
        if node_id in seen:
            continue
        seen.add(node_id)
        accumulate = label == "AccumulateGrad"
        nodes.append(
            {
                "id": node_id,
                "kind": "accumulate_grad" if accumulate else "grad_fn",
                "label": label,
                "vars": [str(v) for v in names.get(node_id) or []],
            }
        )
    edges = [
        {"source": u, "target": v, "kind": "grad"}
        for u, v in bpass.get("edges") or []
        if u in seen and v in seen
    ]
    return {"nodes": nodes, "edges": edges}


class PassesPanel(QWidget):
    """One row per backward pass; picking a row replays that pass (``pass_picked(k)``)."""

    pass_picked = Signal(int)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.list = QListWidget()
        self.list.setObjectName("passesList")
        self.list.itemClicked.connect(self._on_list_item_clicked)
        self.list.itemActivated.connect(self._on_list_item_clicked)
        self.hint = QLabel("No backward pass yet: each backward() call is listed here.")
        self.hint.setWordWrap(True)
        self.hint.setStyleSheet(f"color: {theme.MUTED_TEXT}; padding: 8px;")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        self.detail = QLabel()
        self.detail.setObjectName("passDetail")
        self.detail.setTextFormat(Qt.TextFormat.PlainText)
        self.detail.setWordWrap(True)
        self.detail.setStyleSheet(
            f"color: {theme.TEXT}; padding: 6px 8px; border-top: 1px solid #e3e7ee;"
        )
        self.detail.hide()
        layout.addWidget(self.hint)
        layout.addWidget(self.list, 1)
        layout.addWidget(self.detail)

    def set_passes(
        self, passes: Sequence[dict[str, Any]], statements: Sequence[dict[str, Any]], current: int | None
    ) -> None:
        self.list.blockSignals(True)
        self.list.clear()
        for index, bpass in enumerate(passes):
            item = QListWidgetItem(pass_title(index, bpass, statements))
            item.setToolTip(
                f"{len(bpass.get('steps') or [])} engine steps over "
                f"{len(set(bpass.get('nodes') or []))} nodes; click to replay this pass (F7 steps it)"
            )
            self.list.addItem(item)
        if current is not None and 0 <= current < len(passes):
            self.list.setCurrentRow(current)
        self.list.blockSignals(False)
        self.hint.setVisible(not passes)
        self.show_grads(passes[current] if current is not None and 0 <= current < len(passes) else None)

    def show_grads(self, bpass: dict[str, Any] | None) -> None:
        """Under the list: each leaf's .grad right after the picked pass (not the final one)."""
        grads = (bpass or {}).get("leaf_grads") or {}
        if not grads:
            self.detail.hide()
            return
        rows = [f"{name}.grad = {fmt_value(value, 90)}" for name, value in grads.items()]
        self.detail.setText(".grad right after this pass:\n" + "\n".join(rows))
        self.detail.show()

    def grads_text(self) -> str:
        return "" if self.detail.isHidden() else self.detail.text()

    def titles(self) -> list[str]:
        return [self.list.item(i).text() for i in range(self.list.count())]

    def _on_list_item_clicked(self, item: QListWidgetItem) -> None:
        self.pass_picked.emit(self.list.row(item))
