"""The Inspector: a clicked node's op, saved tensors, gradients and chain rule."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from PySide6.QtWidgets import QVBoxLayout, QWidget

from ...app.models import AppState, PassInfo, StepInfo, TensorInfo
from ...graph.chain_rule import chain_rule
from ...graph.delta import GraphChanges
from ...graph.fmt import fmt_shape, fmt_value
from ...graph.records import Edge, EdgeKind, Node, NodeKind
from ...i18n import QT_TRANSLATE_NOOP
from .. import theme
from ..i18n import translate
from ..text import SafeTextBrowser
from ._common import _esc, leaf_title
from .modules import _search_text

KIND_TEXT = {
    "grad_fn": QT_TRANSLATE_NOOP("Panels", "grad_fn: a backward op recorded by the forward pass"),
    "accumulate_grad": QT_TRANSLATE_NOOP(
        "Panels", "AccumulateGrad: adds the incoming gradient into a leaf's .grad"
    ),
    "tensor": QT_TRANSLATE_NOOP("Panels", "tensor bound to a variable"),
    "saved": QT_TRANSLATE_NOOP("Panels", "saved tensor: kept by a grad_fn for its backward formula"),
    "group": QT_TRANSLATE_NOOP(
        "Panels", "collapsed group: one box for many nodes (double-click it to expand)"
    ),
}

#: the inspector's row names a learner reads in their language (PyTorch's attribute
#: names, requires_grad, is_leaf, grad_fn, dtype…, stay as PyTorch spells them)
_ROW_WORDS = (
    QT_TRANSLATE_NOOP("Panels", "variables"),
    QT_TRANSLATE_NOOP("Panels", "stale"),
    QT_TRANSLATE_NOOP("Panels", "created by"),
    QT_TRANSLATE_NOOP("Panels", "of which"),
    QT_TRANSLATE_NOOP("Panels", "tensors"),
    QT_TRANSLATE_NOOP("Panels", "grad in"),
    QT_TRANSLATE_NOOP("Panels", "passes on"),
    QT_TRANSLATE_NOOP("Panels", "adds into"),
)




def _section(title: str) -> str:
    """A section heading of the inspector's page (``title`` already translated)."""
    return f"<div class='sec'>{_esc(title)}</div>"


@dataclass(frozen=True)
class _SeenSaved:
    """A node's saved tensors as a state showed them before backward freed them."""

    label: str
    statement: Any
    saved: tuple[Mapping[str, Any], ...]


class InspectorPanel(QWidget):
    """Everything about the node selected on the canvas, including its chain-rule product."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setAccessibleName(translate("Panels", "Inspector"))
        self.browser = SafeTextBrowser()
        self.browser.setObjectName("inspectorBrowser")
        self.browser.setAccessibleName(translate("Panels", "Inspector: the selected node"))
        self.browser.setStyleSheet(
            "QTextBrowser { background: palette(base); border: none; padding: 6px; }"
        )
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.browser)
        self.state: AppState = AppState.of(None)
        self.node_id: str | None = None
        #: the backward pass being stepped on the canvas (preferred over the latest one)
        self.focus_pass: int | None = None
        #: group nodes drawn on the canvas (collapsed modules and chains) -> their attributes
        self.groups: dict[str, dict[str, Any]] = {}
        #: the search text, so a group can say which of its members match
        self.search_text = ""
        #: grad_fn id -> its saved tensors as last seen alive (a replayed pass shows the
        #: values it used after backward freed them); forgotten when the script changes
        self._seen_saved: dict[str, _SeenSaved] = {}
        self._seen_graph: Any = None
        self._seen_script: tuple[str, ...] = ()
        #: the saved-tensor edges of the graph last seen, kept up to date from the
        #: window's deltas (a step on a 10,000-node graph reads what changed, not every
        #: edge): grad_fn id -> its saved nodes' ids in edge order, and each one's owner
        self._saved_of: dict[str, dict[str, None]] = {}
        self._owner_of: dict[str, str] = {}
        #: the kernel state (GraphChanges.seq) the index describes
        self._seen_seq: int | None = None
        #: what the next set_state's graph changed from the one before (see take_changes)
        self._changes: GraphChanges | None = None
        self._empty()

    def _empty(self) -> None:
        self.browser.setHtml(
            f"<p style='color:{theme.MUTED_TEXT}'>"
            + _esc(
                translate(
                    "Panels",
                    "Click a node on the graph to see its op, saved tensors, the gradients it "
                    "received and passed on, and the chain rule that produced them. "
                    "Double-click a node to find its statement.",
                )
            )
            + "</p>"
        )

    def text(self) -> str:
        return self.browser.toPlainText()

    def take_changes(self, changes: GraphChanges | None) -> None:
        """What the next :meth:`set_state`'s graph changed from the last one's (the
        window's delta), so only those nodes and edges are read again."""
        self._changes = changes

    def set_state(self, state: AppState | Mapping[str, Any] | None) -> None:
        self.state = AppState.of(state)
        changes, self._changes = self._changes, None
        self._remember_saved(self.state, changes)
        nodes = self.state.nodes_by_id
        if self.node_id and (self.node_id in nodes or self.node_id in self.groups):
            self.show_node(self.node_id)
        else:
            self.node_id = None
            self._empty()

    def _remember_saved(self, st: AppState, changes: GraphChanges | None = None) -> None:
        """Keep each grad_fn's saved tensors while they are alive: after backward frees
        them, a replay of that pass still shows the values it used.

        With ``changes`` made against the graph seen last, only the grad_fns they touch
        are read again (their nodes, their saved nodes or their saved edges); a node
        whose only change is its "new" glow is not (nothing here shows the glow)."""
        script = tuple(s.source for s in st.statements)
        if not script:
            # a read-only snapshot (or nothing run): no earlier state of it to remember,
            # its recorded passes carry what they used
            self._seen_saved, self._seen_script, self._seen_graph = {}, script, None
            return
        every = script != self._seen_script
        if every:
            self._seen_saved = {}
            self._seen_script = script
        if st.graph_data is self._seen_graph:
            return
        nodes = st.nodes_by_id
        if (
            changes is not None
            and self._seen_graph is not None
            and changes.base == self._seen_seq
            and not changes.edges_reordered
            and len(changes.node_attrs) == len(nodes)
        ):
            touched = self._index_changes(changes)
        else:
            self._index_all(st.graph_edges)
            every = True
        self._seen_graph = st.graph_data
        self._seen_seq = changes.seq if changes is not None else None
        for node_id in self._saved_of if every else touched:
            ids = self._saved_of.get(node_id)
            attrs = nodes.get(node_id)
            if not ids or attrs is None:
                continue
            node = Node(attrs, node_id)
            if node.freed:
                continue
            items = tuple(nodes[i] for i in ids if i in nodes)
            if items:
                self._seen_saved[node_id] = _SeenSaved(node.label, node.statement, items)

    def _index_all(self, edges: Sequence[Mapping[str, Any]]) -> None:
        """The saved-tensor edges of a whole graph."""
        saved_of: dict[str, dict[str, None]] = {}
        owner_of: dict[str, str] = {}
        for e in edges:
            edge = Edge(e)
            if edge.kind is EdgeKind.SAVED:
                source, target = edge.source, edge.target
                saved_of.setdefault(source, {})[target] = None
                owner_of[target] = source
        self._saved_of, self._owner_of = saved_of, owner_of

    def _index_changes(self, changes: GraphChanges) -> set[str]:
        """Bring the saved-edge index up to ``changes``; the grad_fns to read again."""
        saved_of, owner_of = self._saved_of, self._owner_of
        touched: set[str] = set()

        def drop(source: str, target: str) -> None:
            ids = saved_of.get(source)
            if ids is not None and target in ids:
                del ids[target]
                if not ids:
                    del saved_of[source]
                if owner_of.get(target) == source:
                    del owner_of[target]
                touched.add(source)

        for source, target in changes.removed_edges:
            drop(source, target)
        attrs = changes.edge_attrs
        for key in changes.edge_list:  # the renewed ones changed only their glow
            edge = attrs.get(key)
            source, target = key
            if edge is not None and Edge(edge).kind is EdgeKind.SAVED:
                ids = saved_of.setdefault(source, {})
                if target not in ids:
                    ids[target] = None
                    owner_of[target] = source
                    touched.add(source)
            else:
                drop(source, target)
        renewed = changes.renewed
        for node_id in changes.nodes if not renewed else changes.nodes - renewed:
            if node_id in saved_of:
                touched.add(node_id)
            owner = owner_of.get(node_id)
            if owner is not None:
                touched.add(owner)
        return touched

    def set_groups(self, groups: Mapping[str, dict[str, Any]]) -> None:
        """The group nodes now on the canvas; a shown group that is gone clears the page."""
        self.groups = dict(groups)
        if self.node_id and self.node_id.startswith(("g:", "c:")):
            if self.node_id in self.groups:
                self.show_node(self.node_id)
            else:
                self.node_id = None
                self._empty()

    def show_node(self, node_id: str | None) -> None:
        self.node_id = node_id
        if not node_id:
            self._empty()
            return
        nodes = self.state.nodes_by_id
        if node_id in self.groups:
            self.browser.setHtml(self._group_html(node_id, Node(self.groups[node_id]), nodes))
            return
        attrs = nodes.get(node_id)
        if attrs is None:
            self._empty()
            return
        self.browser.setHtml(self._html(Node(attrs, node_id), nodes, self.state.edge_records))

    # --- building the page ---------------------------------------------------------------

    def _html(
        self,
        node: Node,
        nodes: Mapping[str, Mapping[str, Any]],
        edges: Sequence[Edge],
    ) -> str:
        st = self.state
        kind = node.kind_text
        parts = [
            f"<style>h3{{margin:0 0 2px 0;}} .k{{color:{theme.MUTED_TEXT};}}"
            " .mono{font-family:'DejaVu Sans Mono';}"
            " td{padding:1px 8px 1px 0;vertical-align:top;}"
            f" .sec{{color:{theme.MUTED_TEXT};font-weight:600;"
            "margin-top:8px;}</style>"
        ]
        style = theme.NODE_STYLES.get(
            "leaf"
            if node.kind is NodeKind.TENSOR and node.is_leaf and node.requires_grad
            else kind,
            theme.NODE_STYLES["grad_fn"],
        )
        title = node.label_or(node.id)
        if node.kind is NodeKind.ACCUMULATE_GRAD and node.vars:
            title = leaf_title(node.vars, title)
        parts.append(
            f"<h3><span style='color:{style.stroke}'>■</span>"
            f" {_esc(title)}</h3>"
            f"<div class='k'>{_esc(translate('Panels', KIND_TEXT.get(kind, kind)))}"
            f" · id {_esc(node.id)}</div>"
        )
        rows: list[tuple[str, str]] = []
        if node.vars:
            rows.append(("variables", ", ".join(node.vars)))
        if "shape" in node.attrs:
            rows.append(("shape", fmt_shape(node.shape)))
        for key, value in (("dtype", node.dtype), ("device", node.device),
                           ("storage", node.storage)):
            if value:
                rows.append((key, str(value)))
        tensor = self._tensor_for(node)
        if tensor:
            rows.append(("requires_grad", str(tensor.requires_grad)))
            rows.append(("is_leaf", str(tensor.is_leaf)))
            rows.append(("retains_grad", str(tensor.retains_grad)))
            rows.append(("grad_fn", str(tensor.grad_fn)))
            rows.append(("version", str(tensor.version)))
            rows.append(("value", fmt_value(tensor.value, 400)))
            rows.append(("grad", fmt_value(tensor.grad, 400)))
        elif node.kind is NodeKind.SAVED and "value" in node.attrs:
            rows.append(("value", fmt_value(node.value, 400)))
        if node.kind is NodeKind.SAVED and node.stale_saved:
            rows.append(
                (
                    "stale",
                    translate(
                        "Panels",
                        "modified in place after it was saved: its version is {version}, the "
                        "saved one was {expected}; backward through this node fails",
                    ).format(version=node.version, expected=node.expected_version),
                )
            )
        idx = node.statement
        line = st.statement_line(idx)
        if line:
            # the line inside the statement that made it (a loop's body line) when known
            made_at = _source_line(st, node.line)
            rows.append(
                (
                    "created by",
                    translate("Panels", "line {line}: {source}").format(
                        line=made_at[0], source=made_at[1]
                    )
                    if made_at is not None
                    else translate("Panels", "line {line}: {source}").format(
                        line=line, source=st.statement_source(idx)
                    ),
                )
            )
        parts.append(self._rows(rows))

        target = self._autograd_node(node, edges)
        found = self._pass_step(target) if target is not None else None
        if node.kind is NodeKind.GRAD_FN:
            parts.extend(self._saved_html(node, nodes, edges, found))
        parts.extend(self._backward_html(target, found, nodes))
        return "".join(parts)

    def _saved_html(
        self,
        node: Node,
        nodes: Mapping[str, Mapping[str, Any]],
        edges: Sequence[Edge],
        found: tuple[int, PassInfo, StepInfo] | None,
    ) -> list[str]:
        """The node's saved tensors: alive now, or, once backward freed them, the values a
        replayed pass used (recorded by the pass, else as this window last saw them)."""
        out = [_section(translate("Panels", "Saved tensors"))]
        saved = [
            Node(nodes[e.target], e.target)
            for e in edges
            if e.source == node.id and e.kind is EdgeKind.SAVED and e.target in nodes
        ]
        replay = found if self.focus_pass is not None and found is not None else None
        if node.freed:
            recorded = replay[2].saved if replay is not None else None
            seen = self._seen_saved.get(node.id)
            if seen is not None and (seen.label != node.label or seen.statement != node.statement):
                seen = None
            if replay is not None and (recorded or seen is not None):
                pi = replay[0]
                if recorded:
                    srows = [
                        (s.label, f"{fmt_value(s.value, 400)}  {fmt_shape(s.shape)}"
                         + (f" — {', '.join(s.vars)}" if s.vars else ""))
                        for s in recorded
                    ]
                else:
                    assert seen is not None
                    srows = [self._saved_row(Node(s)) for s in seen.saved]
                out.append(
                    "<div class='k'>"
                    + _esc(
                        translate(
                            "Panels",
                            "as backward pass #{n} used them (freed after it, since it ran "
                            "without retain_graph=True)",
                        ).format(n=pi + 1)
                    )
                    + "</div>"
                )
                out.append(self._rows(srows))
            else:
                out.append(
                    f"<div style='color:{theme.FREED}'>"
                    + _esc(
                        translate(
                            "Panels",
                            "freed: backward() ran without retain_graph=True, so this node's "
                            "saved tensors are gone (a second backward fails)",
                        )
                    )
                    + "</div>"
                )
        elif saved:
            out.append(self._rows([self._saved_row(s) for s in saved]))
        else:
            out.append("<div class='k'>" + _esc(translate("Panels", "none")) + "</div>")
        scalars = node.saved
        if scalars:
            out.append(_section(translate("Panels", "Saved values")))
            out.append(self._rows([(k, fmt_value(v, 400)) for k, v in scalars.items()]))
        return out

    @staticmethod
    def _saved_row(s: Node) -> tuple[str, str]:
        owner = (
            translate("Panels", " — same memory as {names}").format(names=", ".join(s.vars))
            if s.vars
            else ""
        )
        if s.stale_saved:
            owner += translate("Panels", " — STALE (version {version}, saved at version {expected})").format(
                version=s.version, expected=s.expected_version
            )
        return (s.label, f"{fmt_value(s.value, 400)}  {fmt_shape(s.shape)}{owner}")

    def _group_html(
        self, group_id: str, group: Node, nodes: Mapping[str, Mapping[str, Any]]
    ) -> str:
        members = [Node(nodes[m], m) for m in group.members if m in nodes]
        chain = group_id.startswith("c:")
        style = theme.NODE_STYLES["group"]
        title = group.label_or(group_id)
        what = (
            translate("Panels", "collapsed linear chain of ops")
            if chain
            else translate("Panels", "collapsed module {name}").format(name=group.module or "")
        )
        parts = [
            f"<style>.k{{color:{theme.MUTED_TEXT};}} td{{padding:1px 8px 1px 0;"
            f"vertical-align:top;}} .sec{{color:{theme.MUTED_TEXT};font-weight:600;"
            "margin-top:8px;}</style>",
            f"<h3 style='margin:0 0 2px 0'><span style='color:{style.stroke}'>■</span>"
            f" {_esc(title)}</h3>",
            f"<div class='k'>{_esc(what)} · id {_esc(group_id)}</div>",
        ]
        kinds = Counter(m.kind_text or "?" for m in members)
        count = group.count
        rows = [("nodes", str(count if count is not None else len(members)))]
        if group.module:
            rows.insert(0, ("module", group.module))
        rows.append(("of which", ", ".join(f"{n} {k}" for k, n in kinds.most_common())))
        params = [v for m in members if m.kind is NodeKind.TENSOR for v in m.vars]
        if params:
            more = (
                translate("Panels", ", … ({n} in all)").format(n=len(params))
                if len(params) > 8
                else ""
            )
            shown = ", ".join(params[:8]) + more
            rows.append(("tensors", shown))
        parts.append(self._rows(rows))
        ops = Counter(m.label_or("?") for m in members if m.kind is NodeKind.GRAD_FN)
        if ops:
            parts.append(_section(translate("Panels", "Ops inside")))
            parts.append(self._rows([(op, f"× {n}") for op, n in ops.most_common(12)]))
            if len(ops) > 12:
                parts.append(
                    "<div class='k'>"
                    + _esc(
                        translate("Panels", "… and {n} more kinds of op").format(n=len(ops) - 12)
                    )
                    + "</div>"
                )
        needle = self.search_text.strip().lower()
        if needle:
            hits = [m for m in members if needle in _search_text(m.attrs)]
            if hits:
                parts.append(
                    "<div class='sec'>"
                    + _esc(translate("Panels", "Matches for '{text}'").format(text=self.search_text))
                    + "</div>"
                )
                parts.append(
                    self._rows([(m.label, m.id) for m in hits[:8]])
                )
        parts.append(
            "<p class='k'>"
            + _esc(
                translate(
                    "Panels", "Double-click the box (or right-click › Expand) to show these nodes."
                )
            )
            + "</p>"
        )
        return "".join(parts)

    @staticmethod
    def _rows(rows: list[tuple[str, str]]) -> str:
        body = "".join(
            f"<tr><td class='k'>{_esc(translate('Panels', k))}</td>"
            f"<td class='mono'>{_esc(v)}</td></tr>"
            for k, v in rows
        )
        return f"<table>{body}</table>"

    def _tensor_for(self, node: Node) -> TensorInfo | None:
        if node.kind is not NodeKind.TENSOR:
            return None
        tensors = self.state.tensors
        for name in node.vars or [node.label]:
            if name in tensors:
                return tensors[name]
        return None

    def _autograd_node(self, node: Node, edges: Sequence[Edge]) -> str | None:
        """The node the engine runs for ``node``.

        Itself, a tensor's grad_fn or a leaf's AccumulateGrad.
        """
        kind = node.kind
        if kind is NodeKind.GRAD_FN or kind is NodeKind.ACCUMULATE_GRAD:
            return node.id
        if kind is NodeKind.TENSOR:
            for e in edges:
                if e.kind is EdgeKind.OUTPUT and e.source == node.id:
                    return e.target
                if e.kind is EdgeKind.LEAF and e.target == node.id:
                    return e.source
        return None

    def _pass_step(self, target: str) -> tuple[int, PassInfo, StepInfo] | None:
        """The pass (the focused one first, else the latest) that ran ``target``, and its step."""
        passes = self.state.backward_passes
        order = list(range(len(passes) - 1, -1, -1))
        if self.focus_pass is not None and 0 <= self.focus_pass < len(passes):
            order.remove(self.focus_pass)
            order.insert(0, self.focus_pass)
        for pi in order:
            step = passes[pi].step_of(target)
            if step is not None:
                return pi, passes[pi], step
        return None

    def _target_title(self, bpass: PassInfo, target: str, nodes: Mapping[str, Mapping[str, Any]]) -> str:
        """What a gradient's target is called: ``x.grad (AccumulateGrad)`` for a leaf's
        accumulator, ``PowBackward0 (y)`` for an op, by the script's names."""
        node = Node(nodes.get(target) or {}, target)
        label = node.label
        names = node.vars
        if not label:
            label = next(
                (lab for n, lab in zip(bpass.nodes, bpass.labels, strict=False) if n == target),
                target,
            )
        if not names:
            names = list(bpass.names.get(target, ()))
        if label == "AccumulateGrad":
            return leaf_title(names, label)
        names = [n for n in names if n != label]
        return f"{label} ({', '.join(names)})" if names else label

    def _backward_html(
        self,
        target: str | None,
        found: tuple[int, PassInfo, StepInfo] | None,
        nodes: Mapping[str, Mapping[str, Any]],
    ) -> list[str]:
        passes = self.state.backward_passes
        if target is None:
            return []
        if not found:
            if passes:
                return [
                    _section(translate("Panels", "Backward"))
                    + "<div class='k'>"
                    + _esc(translate("Panels", "not run by any backward pass yet"))
                    + "</div>"
                ]
            return []
        pi, bpass, step = found
        # the call's own line (inside a loop body too), else its statement's
        line = bpass.where(self.state.statements)
        where = []
        if line:
            where.append(translate("Panels", "line {line}").format(line=line))
        if bpass.iteration is not None:
            where.append(translate("Panels", "iteration {n}").format(n=bpass.iteration))
        place = f" ({', '.join(where)})" if where else ""
        title = translate("Panels", "Backward pass #{n}").format(n=pi + 1)
        out = [f"<div class='sec'>{_esc(title + place)}</div>"]
        rows = [("grad in", ", ".join(fmt_value(g, 400) for g in step.grad_outputs) or "–")]
        for g, t in zip(step.grad_inputs, step.targets, strict=False):
            if t is None:
                continue
            rows.append(("passes on", f"{fmt_value(g, 400)} → {self._target_title(bpass, t, nodes)}"))
        if step.is_accumulate:
            rows.append(
                (
                    "adds into",
                    translate("Panels", " and ").join(f"{v}.grad" for v in step.vars) or ".grad",
                )
            )
        out.append(self._rows(rows))
        chain = chain_rule(bpass.raw, target) if bpass.raw else []
        if chain:
            out.append(_section(translate("Panels", "Chain rule")))
            out.append("<div class='mono'>" + "<br>".join(_esc(c) for c in chain) + "</div>")
        return out


# --- output ---------------------------------------------------------------------------------


def _source_line(st: Any, line: Any) -> tuple[int, str] | None:
    """``(line, its text)`` of the script's line ``line``, read from the statement that
    spans it; None when no statement does (or ``line`` is not a line number)."""
    if not isinstance(line, int) or isinstance(line, bool):
        return None
    for statement in st.statements:
        if statement.line <= line <= statement.end_line:
            lines = statement.source.splitlines()
            at = line - statement.line
            if 0 <= at < len(lines):
                return line, lines[at].strip()
    return None
