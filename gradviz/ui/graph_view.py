"""What the canvas shows: the captured graph grouped, laid out and searched.

:class:`GraphView` turns the state's graph into the picture on the canvas:
modules and linear chains collapsed as the user asked (:mod:`gradviz.app.display`),
laid out on the GUI thread or, for big graphs, on the layout worker; the search
box's hits; node clicks, double-clicks and the right-click menu; a backward
pass drawn on its own graph when the state no longer holds it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

import networkx as nx
from PySide6.QtCore import (
    QEvent,
    QObject,
    QPoint,
    Qt,
)
from PySide6.QtGui import (
    QKeyEvent,
)
from PySide6.QtWidgets import (
    QFileDialog,
    QMenu,
)

from gradviz.app.display import (
    ASYNC_LAYOUT_NODES,
    Display,
    build_display,
    is_chain,
    lay_out_plain,
    map_passes,
)
from gradviz.app.models import PassInfo
from gradviz.graph.delta import GraphChanges
from gradviz.graph.graphdata import graph_from_json
from gradviz.graph.grouping import module_tree_of_nodes, search
from gradviz.graph.records import Node, node_dicts

from . import theme
from .canvas.export import export_canvas
from .dialogs import show_error
from .display import LayoutRunner
from .i18n import translate
from .passes_panel import pass_graph
from .text import (
    add_menu_action,
)


class GraphView(QObject):
    """The canvas's picture of the state's graph, and everything that changes it."""

    def __init__(self, window: Any):
        super().__init__(window)
        self.w = window
        # What the canvas shows: the captured graph, grouped (modules, chains), laid out.
        self.raw_graph_data: Mapping[str, Any] = {}
        self._raw_graph_cache: nx.DiGraph | None = None
        self.collapsed: set[str] = set()
        self.display: Display | None = None
        #: what the state being applied changed (the kernel's delta), for the canvas
        self.state_changes: GraphChanges | None = None
        #: (state seq, module tree) of the graph shown: kept while a delta touches no module
        self._modules_cache: tuple[int | None, Any] | None = None
        self._canvas_passes_cache: list[Any] | None = None
        self._after_display: Callable[[], None] | None = None
        self._layout_nodes = 0
        self._layout_fit = False
        #: the pass whose own graph the canvas shows (its nodes are gone from the state's)
        self.pass_graph_shown: int | None = None
        #: graphs with more nodes than this are grouped and laid out on a worker thread
        self.async_layout_nodes = ASYNC_LAYOUT_NODES
        self.layout_runner = LayoutRunner(self)
        self.layout_runner.finished.connect(self._on_layout_runner_finished)
        self.layout_runner.failed.connect(self._on_layout_runner_failed)
        self._search_hits: list[str] = []
        self._search_index = -1
        w = window
        w.canvas.node_selected.connect(self.on_node_selected)
        w.canvas.node_activated.connect(self.on_node_activated)
        w.canvas.node_menu_requested.connect(self._on_canvas_node_menu_requested)
        w.modules_panel.collapsed_changed.connect(self._on_modules_panel_collapsed_changed)
        w.search_box.textChanged.connect(self._on_search_box_text_changed)
        w.search_box.returnPressed.connect(self.search_next)
        w.search_box.installEventFilter(self)

    def forget(self) -> None:
        """Drop the picture (another script or snapshot is coming): nothing collapsed."""
        self.collapsed = set()
        self.display = None
        self.layout_runner.invalidate()
        self.w.layout_label.hide()

    def shown_id(self, node_id: str) -> str:
        """The id on the canvas that shows ``node_id`` (its group when it is collapsed)."""
        return self.display.shown(node_id) if self.display is not None else node_id

    def on_node_selected(self, node_id: str) -> None:
        self.w.inspector_panel.focus_pass = self.w.replay.player.focus_pass
        self.w.inspector_panel.show_node(node_id)
        self.w.inspector_dock.raise_()

    def on_node_activated(self, node_id: str) -> None:
        if self.display is not None and node_id in self.display.groups:
            self.expand_group(node_id)
            return
        node = self.w.model.record(node_id)
        if node is None or node.statement is None:
            return
        s = self.w.model.statement(node.statement)
        if s is not None:
            # the line that made it when the kernel knows it (a loop's body line, a line
            # of a forward the statement called), else the statement's lines
            made_at = node.line
            if made_at is not None and made_at > 0:
                self.w.editor.select_lines(made_at, made_at)
            else:
                made_at = s.line
                self.w.editor.select_lines(s.line, s.end_line)
            self.w.set_status(
                translate("GraphView", "{node} was created by line {line}").format(
                    node=node.label, line=made_at
                )
            )

    def _on_canvas_node_menu_requested(self, node_id: str, pos: QPoint) -> None:
        menu = self.node_menu(node_id)
        if menu.actions():
            menu.exec(pos)
        menu.deleteLater()

    def node_menu(self, node_id: str) -> QMenu:
        """The right-click menu of a node: collapse its module(s), or expand a group."""
        menu = QMenu(self.w)
        display = self.display
        if display is not None and node_id in display.groups:
            label = Node(display.groups[node_id]).label_or(node_id)
            act = add_menu_action(menu, translate("GraphView", "Expand {name}").format(name=label))
            act.triggered.connect(lambda _=False: self.expand_group(node_id))
            return menu
        raw = self.raw_graph
        module = Node(raw.nodes[node_id]).module if node_id in raw else None
        if module:
            parts = module.split(".")
            # innermost first: the module that built the op, then the blocks around it
            for i in range(len(parts), 0, -1):
                name = ".".join(parts[:i])
                act = add_menu_action(
                    menu, translate("GraphView", "Collapse module {name}").format(name=name)
                )
                act.triggered.connect(lambda _=False, m=name: self.collapse_module(m))
        return menu

    def collapse_module(self, module: str) -> None:
        """Draw every node of ``module`` (and its submodules) as one box."""
        self.collapsed.add(module)
        gid = f"g:{module}"
        self.refresh_display(after=lambda: self._focus_node(gid))

    def expand_group(self, group_id: str) -> None:
        """Show a group's nodes again (a module group; a chain turns chain collapsing off)."""
        display = self.display
        if display is None or group_id not in display.groups:
            return
        group = Node(display.groups[group_id])
        members = group.members
        if is_chain(group_id):
            self.w.set_status(
                translate("GraphView", "Linear chains expanded (View › Collapse linear chains)")
            )
            self.w.act_chains.setChecked(False)  # refreshes the display
        else:
            self.collapsed.discard(group.module or "")
            self.refresh_display()
            self.w.set_status(
                translate("GraphView", "Expanded {name}: {n} nodes").format(
                    name=group.label_or(group_id), n=len(members)
                )
            )
        first = members[0] if members else None
        if first is not None:
            self._after_display = lambda: self._focus_node(first, select=False)
            if not self.layout_runner.pending:
                self._run_after_display()

    def expand_all(self) -> None:
        self.collapsed = set()
        self.refresh_display(fit=True)

    def _on_modules_panel_collapsed_changed(self, modules: list[str]) -> None:
        added = set(modules) - self.collapsed
        self.collapsed = set(modules)
        if len(added) == 1:
            gid = f"g:{next(iter(added))}"
            self.refresh_display(after=lambda: self._focus_node(gid))
        else:
            self.refresh_display(fit=True)

    def _on_chains_toggled(self, on: bool) -> None:
        box = self.w.modules_panel.chains_box
        if box.isChecked() != on:
            box.blockSignals(True)
            box.setChecked(on)
            box.blockSignals(False)
        if self.w.state is not None:
            self.refresh_display(fit=True)

    def _focus_node(self, node_id: str, select: bool = True) -> None:
        """Bring ``node_id`` (or the group hiding it) into view, readable."""
        if self.display is not None:
            node_id = self.display.shown(node_id)
        item = self.w.canvas.node_item(node_id)
        if item is None:
            return
        if select:
            self.w.canvas.select_node(node_id, center=True)
            self.on_node_selected(node_id)
        if self.w.canvas.zoom_level() < 0.5:
            self.w.canvas.set_zoom(0.8)  # a dot on a zoomed-out canvas says nothing
        self.w.canvas.centerOn(item)

    @property
    def layout_pending(self) -> bool:
        """True while a big graph is being grouped and laid out on the worker thread."""
        return self.layout_runner.pending

    def displayed_graph(self) -> nx.DiGraph:
        """The graph on the canvas (groups in place of collapsed modules and chains)."""
        return self.display.graph if self.display is not None else self.raw_graph

    def set_raw_graph(self, data: Mapping[str, Any]) -> None:
        self.raw_graph_data = data
        self._raw_graph_cache = None

    @property
    def raw_graph(self) -> nx.DiGraph:
        """The captured graph as networkx, built on first use: a plain step that
        needs no grouping or search never pays for it (the step-latency budget)."""
        if self._raw_graph_cache is None:
            self._raw_graph_cache = graph_from_json(self.raw_graph_data)
        return self._raw_graph_cache

    def refresh_display(self, fit: bool = False, after: Callable[[], None] | None = None) -> None:
        """Group the state's graph as the user asked, lay it out, and show it.

        Graphs of more than ``async_layout_nodes`` nodes are grouped and laid
        out on the worker thread; the canvas keeps the old picture until the
        result comes (a newer request makes an older one's result stale).
        """
        nodes = node_dicts(self.raw_graph_data)
        delta = self.state_changes
        cached = self._modules_cache
        if (
            delta is not None
            and cached is not None
            and cached[0] == delta.base
            and not delta.modules_changed
        ):
            modules = cached[1]  # no node joined, left or changed a module: the same tree
        else:
            modules = module_tree_of_nodes(nodes)
        self._modules_cache = (delta.seq if delta is not None else None, modules)
        self.collapsed &= set(modules)
        collapsed = frozenset(self.collapsed)
        chains = self.w.act_chains.isChecked()
        self.w.modules_panel.set_modules(modules, collapsed)
        given = None if self.w.read_only else (self.w.model.positions or None)
        count = len(nodes)
        if delta is not None and given:
            # the kernel sent a position with every node it added (a node whose glow
            # alone changed had one: the step after a run names every node so)
            placed = len(given) == len(nodes) and all(
                n in given for n in (delta.nodes - delta.renewed if delta.renewed else delta.nodes)
            )
        else:
            placed = given is not None and all(n["id"] in given for n in nodes)
        if not collapsed and not chains and placed and given is not None:
            # The kernel laid it out already and nothing is grouped: no graph work here.
            self.layout_runner.invalidate()
            changes, self.state_changes = self.state_changes, None
            self._show_display(
                Display.plain(self.raw_graph_data, given, lambda: self.raw_graph), fit, changes
            )
            return
        self.state_changes = None
        previous = None
        if self.display is not None and not fit:
            previous = dict(self.display.positions)
        if not collapsed and not chains and previous is None and not given:
            # a fresh picture of the whole graph: laid out from the JSON data
            raw_data = self.raw_graph_data
            job = functools.partial(lay_out_plain, raw_data, lambda: self.raw_graph)
            needs_layout = True
        else:
            raw = self.raw_graph
            job = functools.partial(
                build_display, raw, self.raw_graph_data, collapsed, chains, previous, given
            )
            needs_layout = bool(
                collapsed or chains or not given or any(n not in given for n in raw)
            )
        self._after_display = after
        if needs_layout and count > self.async_layout_nodes:
            self.layout_runner.submit(job)
            self._layout_nodes = count
            self._layout_fit = fit
            self.w.layout_label.setText(
                translate("GraphView", "Laying out {n} nodes…").format(n=f"{count:,}")
            )
            self.w.layout_label.show()
            return
        self.layout_runner.invalidate()  # anything still running is out of date now
        self._show_display(job(), fit)

    def _on_layout_runner_finished(self, request: int, display: Display) -> None:
        if self.w.closing:
            return
        self._show_display(display, self._layout_fit)
        shown = len(node_dicts(display.data))  # (display.graph may not be built)
        boxes = translate("GraphView", "{n} nodes").format(n=f"{shown:,}")
        if display.groups:
            boxes = translate("GraphView", "{n} boxes for {total} nodes").format(
                n=f"{shown:,}", total=f"{self._layout_nodes:,}"
            )
        self.w.set_status(
            translate("GraphView", "Laid out {what} in {seconds} s (on a worker thread)").format(
                what=boxes, seconds=f"{display.seconds:.2f}"
            )
        )

    def _on_layout_runner_failed(self, request: int, message: str) -> None:
        self.w.layout_label.hide()
        self.w.set_status(
            translate("GraphView", "Could not lay out the graph: {message}").format(message=message)
        )
        self.w.output_panel.add_note(
            translate("GraphView", "Layout failed: {message}").format(message=message),
            kind="error",
        )

    _layout_fit = False

    def _show_display(
        self, display: Display, fit: bool, changes: GraphChanges | None = None
    ) -> None:
        first = self.display is None
        self.display = display
        self._canvas_passes_cache = None
        self.w.layout_label.hide()
        self.w.canvas.set_graph(display.data, display.positions, changes)
        self.w.inspector_panel.set_groups(display.groups)
        player = self.w.replay.player
        if player.step_index is not None:
            # group ids changed: redraw the step with the ids now on the canvas
            self.w.canvas.show_backward_step(
                player.pass_index, player.step_index, self.canvas_passes()
            )
        if fit and not first:
            self.w.canvas.fit_to_view()
        else:
            self.keep_graph_in_view()
        self.update_search_hits(keep=True)
        self._run_after_display()

    def _run_after_display(self) -> None:
        after, self._after_display = self._after_display, None
        if after is not None:
            after()

    def canvas_passes(self) -> list[Any]:
        """The backward passes in the ids drawn on the canvas (a hidden node -> its group)."""
        if self._canvas_passes_cache is None:
            owner = self.display.owner if self.display is not None else {}
            passes = [p.raw for p in self.w.replay.passes()]
            self._canvas_passes_cache = map_passes(passes, owner)
        return self._canvas_passes_cache

    def focus_search(self) -> None:
        """Ctrl+F: put the cursor in the search box."""
        self.w.search_box.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.w.search_box.selectAll()

    def find_node(self, text: str | None = None) -> None:
        """Search for ``text`` and jump to the first hit (no text: focus the search box)."""
        if text is None:
            self.focus_search()
            return
        self.w.search_box.setText(text)
        self.search_next()

    def search_hits(self) -> list[str]:
        """Ids on the canvas that match the search text (a group stands for its members)."""
        return list(self._search_hits)

    def _on_search_box_text_changed(self, text: str) -> None:
        self._search_index = -1
        self.w.inspector_panel.search_text = text
        self.update_search_hits()

    def update_search_hits(self, keep: bool = False) -> None:
        text = self.w.search_box.text()
        current = (
            self._search_hits[self._search_index]
            if keep and 0 <= self._search_index < len(self._search_hits)
            else None
        )
        hits: list[str] = []
        if text.strip():
            display = self.display
            shown = display.graph if display is not None else self.raw_graph
            found = set(search(self.raw_graph, text, limit=max(1, len(self.raw_graph))))
            if display is not None:
                found = {display.shown(n) for n in found}
                if display.groups:
                    group_hits = search(shown, text, limit=len(shown))
                    found |= {n for n in group_hits if n in display.groups}
            hits = [n for n in shown.nodes if n in found]
        self._search_hits = hits
        self._search_index = hits.index(current) if current in hits else -1
        self._update_search_label()

    def _update_search_label(self) -> None:
        text = self.w.search_box.text().strip()
        n = len(self._search_hits)
        if not text:
            self.w.search_label.setText("")
        elif not n:
            self.w.search_label.setText(translate("GraphView", "no match"))
        elif self._search_index < 0:
            self.w.search_label.setText(translate("GraphView", "{n} found").format(n=n))
        else:
            self.w.search_label.setText(
                translate("GraphView", "{n} of {total}").format(n=self._search_index + 1, total=n)
            )
        colour = theme.BACKWARD if text and not n else theme.MUTED_TEXT
        sheet = f"color: {colour}; padding: 0 6px;"
        if self.w.search_label.styleSheet() != sheet:
            # set only when it changes: every call repolishes the label and lays out
            # the toolbar again (each step refreshes the search)
            self.w.search_label.setStyleSheet(sheet)
        self.w.search_label_action.setVisible(bool(text))

    def search_next(self, step: int = 1) -> None:
        """Enter in the search box: select the next hit on the canvas and inspect it."""
        hits = self._search_hits
        text = self.w.search_box.text().strip()
        if not hits:
            if text:
                self.w.set_status(
                    translate("GraphView", "No node matches '{text}'").format(text=text)
                )
            return
        if self._search_index < 0:
            self._search_index = 0 if step > 0 else len(hits) - 1
        else:
            self._search_index = (self._search_index + step) % len(hits)
        target = hits[self._search_index]
        self._focus_node(target)
        self._update_search_label()
        groups = self.display.groups if self.display is not None else {}
        where = translate("GraphView", "{n} of {total}").format(
            n=self._search_index + 1, total=len(hits)
        )
        if target in groups:
            self.w.set_status(
                translate(
                    "GraphView",
                    "'{text}' ({where}) is inside the collapsed {group}: double-click it to expand",
                ).format(text=text, where=where, group=Node(groups[target]).label_or(target))
            )
        else:
            raw = self.raw_graph
            label = Node(raw.nodes[target]).label_or(target) if target in raw else target
            self.w.set_status(f"'{text}': {where} — {label}")

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if watched is self.w.search_box and event.type() == QEvent.Type.KeyPress:
            assert isinstance(event, QKeyEvent)
            key = event.key()
            shift = bool(event.modifiers() & Qt.KeyboardModifier.ShiftModifier)
            if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and shift:
                self.search_next(-1)
                return True
            if key == Qt.Key.Key_Escape:
                self.w.canvas.setFocus()
                return True
        return super().eventFilter(watched, event)

    def export_graph(self) -> None:
        path, _ = QFileDialog.getSaveFileName(
            self.w,
            translate("GraphView", "Export graph"),
            "graph.png",
            translate("GraphView", "PNG image (*.png);;SVG (*.svg)"),
        )
        if not path:
            return
        try:
            export_canvas(self.w.canvas, path)
        except (OSError, ValueError) as exc:
            show_error(self.w, translate("GraphView", "Export failed"), str(exc))
            return
        self.w.set_status(translate("GraphView", "Graph written to {path}").format(path=path))

    def keep_graph_in_view(self) -> None:
        """After a step: the canvas's rule (a fitted view is fitted again; a view the
        user zoomed or panned only scrolls to the newest nodes when they are off screen)."""
        self.w.canvas.keep_graph_in_view()

    def keep_in_view(self, node_id: str) -> None:
        """Scroll to ``node_id`` when it is off screen (a big graph's executing node)."""
        item = self.w.canvas.node_item(node_id)
        if item is None:
            return
        visible = self.w.canvas.mapToScene(self.w.canvas.viewport().rect()).boundingRect()
        if not visible.contains(item.sceneBoundingRect()):
            self.w.canvas.centerOn(item)

    def show_pass_graph(self, index: int) -> None:
        """Draw pass ``index``'s own graph (the one it ran over) instead of the state's."""
        bpass = self.w.replay.passes()[index]
        data = pass_graph(bpass)
        raw = graph_from_json(data)
        display = build_display(raw, data)
        self.pass_graph_shown = index
        self.display = display
        self._canvas_passes_cache = None
        self.layout_runner.invalidate()
        self.w.canvas.set_graph(display.data, display.positions)
        self.w.canvas.fit_to_view()
        self.w.inspector_panel.set_groups({})
        self.w.inspector_panel.set_state({**(self.w.state or {}), "graph": data})

    def pass_needs_own_graph(self, bpass: PassInfo) -> bool:
        """True when some node the pass ran over is not in the graph the state shows (a
        later iteration built a new graph): the pass is then drawn on its own graph."""
        nodes = set(bpass.nodes)
        if not nodes:
            return False
        shown = {str(n["id"]) for n in node_dicts(self.raw_graph_data)}
        return not nodes <= shown
