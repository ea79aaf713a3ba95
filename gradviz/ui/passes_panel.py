"""The list of backward passes, and each pass's own graph.

Every ``backward()`` call keeps the graph it ran over (the kernel's
``backward_passes[k]``: ``nodes``, ``labels``, ``edges``, ``names``, captured
when the pass started). In a training loop each iteration builds a new graph,
so pass 1's nodes are gone from the graph drawn after iteration 3: replaying
pass 1 draws :func:`pass_graph` instead, labelled with the script's names.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QFrame,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QScrollArea,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from ..app.models import PassInfo, StatementInfo
from ..graph.fmt import fmt_value
from ..graph.records import EdgeKind, NodeKind
from . import theme
from .i18n import translate

PassLike = PassInfo | Mapping[str, Any]
StatementLike = StatementInfo | Mapping[str, Any]


def as_pass(bpass: PassLike) -> PassInfo:
    """A backward pass as the typed model (a wire dict is decoded, once per dict)."""
    return PassInfo.of(bpass)


def _line_of(statement: StatementLike) -> int | None:
    if isinstance(statement, StatementInfo):
        return statement.line
    line = statement.get("line")
    return line if isinstance(line, int) else None


def pass_line(bpass: PassLike, statements: Sequence[StatementLike] = ()) -> int | None:
    """The line of the pass's call: its own (inside loops and functions too), else its
    statement's."""
    p = as_pass(bpass)
    if p.line is not None:
        return p.line
    if p.statement is not None and 0 <= p.statement < len(statements):
        return _line_of(statements[p.statement])
    return None


def pass_title(index: int, bpass: PassLike, statements: Sequence[StatementLike] = ()) -> str:
    """``#2 · line 24 · iteration 2 · loss``: which call, where, and its root's name."""
    p = as_pass(bpass)
    parts = [f"#{index + 1}"]
    line = pass_line(p, statements)
    if line is not None:
        parts.append(translate("Passes", "line {line}").format(line=line))
    if p.iteration is not None:
        parts.append(translate("Passes", "iteration {n}").format(n=p.iteration))
    parts.append(root_name(p))
    if p.kind == "grad":
        parts.append("autograd.grad")
    if p.error:
        parts.append(translate("Passes", "failed"))
    return " · ".join(parts)


def root_name(bpass: PassLike) -> str:
    """The script's name for the pass's root (``loss``), else its op's class name."""
    p = as_pass(bpass)
    labels = dict(zip(p.nodes, p.labels, strict=False))
    shown = []
    for root in p.root:
        own = p.names.get(root) or ()
        if own:
            shown.append(str(own[0]))
        elif root in labels:
            shown.append(labels[root])
    if not shown and p.steps:
        first = p.steps[0]
        shown.append(first.vars[0] if first.vars else (first.label or "root"))
    return ", ".join(shown) or "root"


def pass_graph(bpass: PassLike) -> dict[str, Any]:
    """The graph ``bpass`` ran over, as canvas data: one node per grad_fn, named as the
    script names it (an op with no name of its own shows its class name only)."""
    p = as_pass(bpass)
    nodes = []
    seen: set[str] = set()
    for node_id, label in zip(p.nodes, p.labels, strict=False):
        if node_id in seen:
            continue
        seen.add(node_id)
        accumulate = label == "AccumulateGrad"
        nodes.append(
            {
                "id": node_id,
                "kind": (NodeKind.ACCUMULATE_GRAD if accumulate else NodeKind.GRAD_FN).value,
                "label": label,
                "vars": [str(v) for v in p.names.get(node_id) or ()],
            }
        )
    edges = [
        {"source": u, "target": v, "kind": EdgeKind.GRAD.value}
        for u, v in p.edges
        if u in seen and v in seen
    ]
    return {"nodes": nodes, "edges": edges}


class PassesPanel(QWidget):
    """One row per backward pass; picking a row replays that pass (``pass_picked(k)``)."""

    pass_picked = Signal(int)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setAccessibleName(translate("Passes", "Backward passes"))
        self.list = QListWidget()
        self.list.setObjectName("passesList")
        self.list.setAccessibleName(translate("Passes", "Backward passes list"))
        self.list.setAccessibleDescription(
            translate("Passes", "One row per backward() call; pick one to replay it on the graph")
        )
        self.list.itemClicked.connect(self._on_list_item_clicked)
        self.list.itemActivated.connect(self._on_list_item_clicked)
        self.hint = QLabel(
            translate("Passes", "No backward pass yet: each backward() call is listed here.")
        )
        self.hint.setWordWrap(True)
        self.hint.setStyleSheet(f"color: {theme.MUTED_TEXT}; padding: 8px;")
        self.hint.setAccessibleName(translate("Passes", "Backward passes hint"))
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        self.detail = QLabel()
        self.detail.setObjectName("passDetail")
        self.detail.setAccessibleName(translate("Passes", "Gradients right after the picked pass"))
        self.detail.setTextFormat(Qt.TextFormat.PlainText)
        self.detail.setWordWrap(True)
        self.detail.setStyleSheet(f"color: {theme.TEXT}; padding: 6px 8px;")
        self.detail.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self.detail.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.detail.hide()
        # A model's pass lists one .grad per leaf (a 2-layer transformer: 30 lines): the
        # lines scroll, so the dock never asks the window for their height (it grew the
        # window past a 768-px screen).
        self.detail_area = QScrollArea()
        self.detail_area.setObjectName("passDetailArea")
        self.detail_area.setWidget(self.detail)
        self.detail_area.setWidgetResizable(True)
        self.detail_area.setFrameShape(QFrame.Shape.NoFrame)
        self.detail_area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.detail_area.setStyleSheet(
            "QScrollArea#passDetailArea { border-top: 1px solid palette(midlight); }"
        )
        # nor for their width: the dock keeps the width the user gave it when a pass is
        # picked (a wider dock would narrow and re-fit the canvas under the pointer)
        self.detail_area.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Ignored)
        self.detail_area.hide()
        layout.addWidget(self.hint)
        layout.addWidget(self.list, 2)
        layout.addWidget(self.detail_area, 1)

    #: the passes, their titles and the current one the list shows (see set_passes)
    _shown_key: Any = None

    def set_passes(
        self,
        passes: Sequence[PassLike],
        statements: Sequence[StatementLike],
        current: int | None,
    ) -> None:
        """The passes (typed or wire dicts) and the one being replayed (None: none)."""
        passes = [as_pass(p) for p in passes]
        titles = [pass_title(index, bpass, statements) for index, bpass in enumerate(passes)]
        # the same passes under the same titles: the list (and its scroll, its
        # selection) stands (tuples compare their items by identity first: a
        # delta-decoded state shares the passes a step left alone)
        key = (tuple(passes), tuple(titles), current)
        if key == self._shown_key:
            return
        self._shown_key = key
        self.list.blockSignals(True)
        self.list.clear()
        for index, bpass in enumerate(passes):
            info = as_pass(bpass)
            item = QListWidgetItem(titles[index])
            item.setToolTip(
                translate(
                    "Passes",
                    "{steps} engine steps over {nodes} nodes; click to replay this pass "
                    "(F7 steps it)",
                ).format(steps=len(info.steps), nodes=len(set(info.nodes)))
            )
            self.list.addItem(item)
        if current is not None and 0 <= current < len(passes):
            self.list.setCurrentRow(current)
        self.list.blockSignals(False)
        self.hint.setVisible(not passes)
        self.show_grads(passes[current] if current is not None and 0 <= current < len(passes) else None)

    def show_grads(self, bpass: PassLike | None) -> None:
        """Under the list: each leaf's .grad right after the picked pass (not the final one)."""
        grads = as_pass(bpass).leaf_grads if bpass is not None else {}
        if not grads:
            self.detail.hide()
            self.detail_area.hide()
            return
        rows = [f"{name}.grad = {fmt_value(value, 90)}" for name, value in grads.items()]
        self.detail.setText(
            translate("Passes", ".grad right after this pass:") + "\n" + "\n".join(rows)
        )
        self.detail.show()
        self.detail_area.show()

    def grads_text(self) -> str:
        return "" if self.detail.isHidden() else self.detail.text()

    def titles(self) -> list[str]:
        return [self.list.item(i).text() for i in range(self.list.count())]

    def _on_list_item_clicked(self, item: QListWidgetItem) -> None:
        self.pass_picked.emit(self.list.row(item))
