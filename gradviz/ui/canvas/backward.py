"""The backward overlay: one engine step of a backward pass drawn on the canvas.

The node the engine runs glows red, the nodes the pass already ran are tinted, and
each gradient it passes on is drawn as a red "carry" edge labelled with its value. A
mixin of :class:`gradviz.ui.canvas.view.GraphCanvas`; the window's F7 / Shift+F7 (and
a pass picked in the Backward passes panel) call :meth:`BackwardOverlay.show_backward_step`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

from PySide6.QtGui import QPainterPath
from PySide6.QtWidgets import QGraphicsView

from gradviz.graph.routing import Box, Obstacles, edge_path

from ._common import Z_CARRY, EdgeKey, _get, _Scene, format_value
from .edges import _EDGE_STYLES, _add_geometry, _Edge, _EdgeLabelItem, _midpoint, _PathItem
from .nodes import _EXECUTED, _EXECUTING, Geometry, _Node


class BackwardOverlay(QGraphicsView):
    """Highlights a backward pass's step on the graph (and clears it)."""

    if TYPE_CHECKING:  # kept by the canvas (view.py)
        _nodes: dict[str, _Node]
        _edges: dict[EdgeKey, _Edge]
        _obstacles: Obstacles
        _scene: _Scene
        #: the shown step: (pass index, step index, the passes)
        _backward: tuple[int, int, Sequence[Any]] | None
        #: the nodes tinted as run or running
        _marked: set[str]
        #: the carry edges drawn: (source, target) -> (path, label, text)
        _carry: dict[EdgeKey, tuple[_PathItem, _EdgeLabelItem | None, str | None]]

        def _set_flag(self, node: _Node, bit: int, on: bool) -> None: ...
        def _geometry(self, key: EdgeKey) -> Geometry: ...
        def _update_legend(self) -> None: ...

    def show_backward_step(
        self, pass_index: int | None, step_index: int | None, passes: Sequence[Any]
    ) -> None:
        """Highlight step ``step_index`` of backward pass ``pass_index``.

        The executing node turns red, the nodes this pass already ran get a
        light "done" tint, and the edges from the executing node to its
        ``targets`` are drawn red with the gradient they carry.  ``None`` for
        either index (or an index out of range) clears the highlighting.
        """
        if pass_index is None or step_index is None:
            self._backward = None
        else:
            self._backward = (pass_index, step_index, passes)
        self._apply_backward()
        self._update_legend()

    def clear_backward(self) -> None:
        """Remove all backward-pass highlighting."""
        self.show_backward_step(None, None, [])


    def _apply_backward(self) -> None:
        nodes = self._nodes
        for node_id in self._marked:
            node = nodes.get(node_id)
            if node is not None:
                self._set_flag(node, _EXECUTING, False)
                self._set_flag(node, _EXECUTED, False)
        self._marked = set()
        for path_item, label_item, _ in self._carry.values():
            self._scene.removeItem(path_item)
            if label_item is not None:
                self._scene.removeItem(label_item)
        self._carry = {}
        if self._backward is None:
            return
        pass_index, step_index, passes = self._backward
        if not 0 <= pass_index < len(passes):
            return
        steps = _get(passes[pass_index], "steps") or []
        if not 0 <= step_index < len(steps):
            return
        for step in steps[:step_index]:
            node = nodes.get(str(_get(step, "node")))
            if node is not None:
                self._set_flag(node, _EXECUTED, True)
                self._marked.add(node.node_id)
        step = steps[step_index]
        node_id = str(_get(step, "node"))
        source = nodes.get(node_id)
        if source is None:
            return
        self._set_flag(source, _EXECUTED, False)
        self._set_flag(source, _EXECUTING, True)
        self._marked.add(node_id)

        grads = list(_get(step, "grad_inputs") or [])
        values: dict[str, list[Any]] = {}
        for i, target in enumerate(_get(step, "targets") or []):
            if target is None or i >= len(grads) or grads[i] is None:
                continue
            values.setdefault(str(target), []).append(grads[i])
        for target, vals in values.items():
            if target not in nodes or target == node_id:
                continue
            key = (node_id, target)
            # a _Node reads as the router's Box (cx, cy, width, height, span)
            source_box, target_box = cast(Box, nodes[node_id]), cast(Box, nodes[target])
            geometry = (
                self._geometry(key)
                if key in self._edges
                else edge_path(source_box, target_box, 0.0, 0.0, True, self._obstacles, key)[0]
            )
            path, arrows = QPainterPath(), QPainterPath()
            _add_geometry(path, arrows, geometry)
            path_item = _PathItem(_EDGE_STYLES["carry"], Z_CARRY)
            path_item.set_paths(path, arrows)
            self._scene.addItem(path_item)
            text = " + ".join(format_value(v) for v in vals)
            label = _EdgeLabelItem(text, _midpoint(geometry))
            self._scene.addItem(label)
            self._carry[key] = (path_item, label, text)
