"""GraphCanvas: the view that holds the scene, places nodes and edges, and answers the mouse."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

from PySide6.QtCore import QEvent, QPoint, QPointF, QRect, QRectF, Qt, Signal
from PySide6.QtGui import (
    QBrush,
    QContextMenuEvent,
    QKeyEvent,
    QMouseEvent,
    QPainter,
    QPainterPath,
    QResizeEvent,
    QShowEvent,
    QWheelEvent,
)
from PySide6.QtWidgets import QGraphicsItem, QGraphicsScene, QGraphicsView, QLabel, QWidget

from gradviz.graph.delta import GraphChanges
from gradviz.graph.gcpause import paused_gc
from gradviz.graph.records import Edge, Node, edge_dicts, node_dicts
from gradviz.graph.routing import (
    ARROW_LEN,
    CLEARANCE,
    Obstacles,
    edge_geometries,
    storage_link_pairs,
)
from gradviz.graph.style import LIGHT, Theme
from gradviz.ui import theme
from gradviz.ui.i18n import translate
from gradviz.ui.text import plain_label

from ._common import (
    _NODE_MARGIN,
    BULK_EDGE_THRESHOLD,
    EDGE_BAND,
    EMPTY_HINT,
    LAZY_NODE_THRESHOLD,
    MAX_LIVE_ITEMS,
    NODE_TILE,
    REGION_BAND,
    TEXT_LOD,
    Z_EDGE,
    Z_EDGE_NEW,
    EdgeKey,
    _nodes_union,
    _only_new_differs,
    _Scene,
)
from .backward import BackwardOverlay
from .edges import (
    _add_geometry,
    _Edge,
    _EdgeBand,
    _EdgeItem,
    _EdgeLabelItem,
    _EdgeStyle,
    _Kinds,
    _PathItem,
    _style_for,
)
from .legend import _Legend, _legend_rows
from .navigation import Navigation
from .nodes import (
    _HOT,
    _SELECTED,
    Geometry,
    NodeItem,
    _Node,
    _NodeTile,
    _search_text,
)
from .storage import _StorageLinks


class GraphCanvas(Navigation, BackwardOverlay, QGraphicsView):
    """The autograd graph, updated in place each step; stepping backward lights it up.

    Signals:
        node_selected(str): a node was clicked (not emitted by :meth:`select_node`).
        node_activated(str): a node was double-clicked (show the statement that made it).
        node_menu_requested(str, QPoint): a right-click on a node, at this global position.
        view_changed(): the zoom or the visible region changed.
    """

    node_selected = Signal(str)
    node_activated = Signal(str)
    node_menu_requested = Signal(str, QPoint)
    view_changed = Signal()

    def __init__(self, parent: QWidget | None = None):
        scene = _Scene()
        # Items rarely move (only when a full re-layout happens), so a BSP index pays off.
        scene.setItemIndexMethod(QGraphicsScene.ItemIndexMethod.BspTreeIndex)
        super().__init__(scene, parent)
        scene.setParent(self)
        self._scene = scene
        #: node id -> the node (graph order); it has an item on a small graph, or when
        #: on screen or asked for on a big one (see LAZY_NODE_THRESHOLD)
        self._nodes: dict[str, _Node] = {}
        self._edges: dict[EdgeKey, _Edge] = {}
        self._bulk = False
        #: the bands painting the edges in bulk, by index, and those to redo
        self._bands: dict[int, _EdgeBand] = {}
        self._bands_dirty: set[int] = set()
        self._band_x: tuple[float, float] | None = None
        #: a big graph: nodes drawn by tiles, items only for some (see _sync_items)
        self._lazy = False
        self._tiles: dict[tuple[int, int], _NodeTile] = {}
        self._tiles_dirty: set[tuple[int, int]] = set()
        #: the nodes of a big graph that have an item, and the scene rectangle whose
        #: nodes all have one (None: to be found again)
        self._live: dict[str, _Node] = {}
        self._synced: QRectF | None = None
        #: node items not painted since they were made (see _cache_items)
        self._uncached: list[NodeItem] = []
        #: the tallest box (how far below its ends an edge may dip)
        self._max_h = 0.0
        #: node id -> the keys of its edges (which edges a moved node bends)
        self._adj: dict[str, list[EdgeKey]] = {}
        #: the kernel state the canvas shows (GraphChanges.seq), for applying a delta
        self._graph_seq: int | None = None
        #: the rectangle the nodes occupy (see graph_rect)
        self._node_bounds = QRectF()
        self._storage = _StorageLinks()
        scene.addItem(self._storage)
        self._carry: dict[EdgeKey, tuple[_PathItem, _EdgeLabelItem | None, str | None]] = {}
        self._backward: tuple[int, int, Sequence[Any]] | None = None
        self._marked: set[str] = set()
        self._selected: str | None = None
        self._groups: dict[str, list[_Node]] = {}
        #: node id -> its storage group, and group -> its node ids (tensor and saved nodes)
        self._storage_of: dict[str, str] = {}
        self._member_ids: dict[str, list[str]] = {}
        self._links: list[tuple[str, str, str]] = []
        self._fitted_once = False
        self._press_on_node = False
        self._pending_fit = False
        #: the view shows the graph as fit_to_view left it (no zoom or pan since): a
        #: resize (the guide above growing, the window shrinking) fits it again
        self._fitted = False
        #: the boxes edges route around, and each edge's region (what can change its route)
        self._obstacles = Obstacles(REGION_BAND)
        self._region_of: dict[EdgeKey, tuple[float, float, float, float]] = {}
        self._region_bands: dict[int, set[EdgeKey]] = {}
        #: how many nodes of each style key, and "new" / "freed" / "stale" (the legend)
        self._counts: Counter[str] = Counter()
        #: the rectangle of the nodes the last update made new (fit_to_view centres there)
        self._newest = QRectF()
        #: the graph data last given to set_graph (its edge order, for the SVG export)
        self._graph_data: Mapping[str, Any] = {"nodes": [], "edges": []}
        self._fresh: list[_Node] = []
        self._theme: Theme = LIGHT
        self._legend_on = True
        self._legend_h = 0
        #: the viewport is being resized by the legend strip's margin (see resizeEvent)
        self._margin_resize = False
        self._fit_whole = False

        self.setRenderHints(
            QPainter.RenderHint.Antialiasing
            | QPainter.RenderHint.TextAntialiasing
            | QPainter.RenderHint.SmoothPixmapTransform
        )
        self.setViewportUpdateMode(QGraphicsView.ViewportUpdateMode.MinimalViewportUpdate)
        self.setCacheMode(QGraphicsView.CacheModeFlag.CacheBackground)
        self.setOptimizationFlag(QGraphicsView.OptimizationFlag.DontAdjustForAntialiasing, True)
        self.setDragMode(QGraphicsView.DragMode.ScrollHandDrag)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.NoAnchor)
        self.setResizeAnchor(QGraphicsView.ViewportAnchor.AnchorViewCenter)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setBackgroundBrush(QBrush(theme.qcolor(theme.BACKGROUND)))
        self.setFrameShape(QGraphicsView.Shape.NoFrame)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setMinimumSize(200, 150)

        self._hint = plain_label(QLabel(translate("Canvas", EMPTY_HINT), self))
        self._hint.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self._hint.setWordWrap(True)
        self._hint.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self._legend = _Legend(self)
        self._follow_palette(force=True)

    # --- public API: the graph ---------------------------------------------------

    def set_graph(
        self,
        graph: Mapping[str, Any],
        positions: Mapping[str, Sequence[float]],
        changes: GraphChanges | None = None,
    ) -> None:
        """Show ``graph`` ({nodes, edges} as the kernel sends it) at ``positions``.

        Updates in place: items whose ids persist are kept (moved and restyled
        when needed), new ones are added and gone ones removed.  Nodes and
        edges flagged ``new`` glow until the next call.  Backward highlighting
        and the selection are kept for the nodes that remain.

        ``changes`` (from :class:`gradviz.graph.delta.StateDecoder`) says what
        differs from the graph shown now; when it was computed against exactly
        that graph only the items it names (and the edges next to them) are
        touched, which keeps a step on a 2,000-node graph to a few milliseconds.

        The canvas keeps the node dicts it is given (it reads them until the next
        call) and never changes them. On a big graph (more than
        LAZY_NODE_THRESHOLD nodes) nodes get an item only when they are on screen
        and readable, or asked for (:meth:`node_item`); tiles paint the others, and
        edges are routed when first painted.
        """
        # A big graph makes ~10 objects a node: the cyclic collector, run every few
        # thousand of them, would walk the whole heap again and again (seconds at 100k).
        with paused_gc():
            self._set_graph(graph, positions, changes)

    def _set_graph(
        self,
        graph: Mapping[str, Any],
        positions: Mapping[str, Sequence[float]],
        changes: GraphChanges | None,
    ) -> None:
        self._graph_data = graph
        self._fresh = []  # nodes this update made or restyled (for _newest)
        stepped = (
            changes is not None
            and self._graph_seq is not None
            and changes.base == self._graph_seq
            and bool(self._nodes)
        )
        if stepped:
            assert changes is not None
            grown = self._apply_changes(graph, positions, changes)
            if grown:
                # a node that went may leave the rectangle a little larger than needed
                self._node_bounds = self._node_bounds.united(_nodes_union(grown, 0.0))
        else:
            self._set_graph_whole(graph, positions)
            self._node_bounds = self._nodes_rect()
        self._graph_seq = changes.seq if changes is not None else None
        newest = _nodes_union(
            [n for n in self._fresh if n.rec.new and self._nodes.get(n.node_id) is n],
            _NODE_MARGIN,
        )
        if not newest.isEmpty():
            self._newest = newest
        elif not self._nodes:
            self._newest = QRectF()
        self._fresh = []
        if not self._lazy:
            for node in self._nodes.values():
                if node.item is None:
                    self._materialize(node)
        self._flush_tiles()
        self._flush_bands()
        self._update_scene_rect()
        self._apply_backward()
        self._update_legend()
        # a step keeps the legend's height (see _update_overlays); a new graph fits it
        self._update_overlays(shrink=not stepped)
        self._synced = None
        if self._nodes and not self._fitted_once:
            # The first graph is fitted to the view, once the view has its real size.
            self._fitted_once = True
            if self.isVisible():
                self.fit_to_view()
            else:
                self._pending_fit = True
        elif not self._nodes:
            self._fitted_once = False
        self._sync_items()

    def _set_mode(self, count: int) -> None:
        """Items for every node (a small graph) or tiles and items on demand (a big one)."""
        lazy = count > LAZY_NODE_THRESHOLD
        if lazy == self._lazy:
            return
        self._lazy = lazy
        if lazy:
            for node in self._nodes.values():
                self._place(node)
                if node.item is not None:
                    self._live[node.node_id] = node
        else:
            # every node gets its item at the end of the update
            for tile in self._tiles.values():
                self._scene.removeItem(tile)
            self._tiles.clear()
            self._tiles_dirty.clear()
            self._live.clear()
            for node in self._nodes.values():
                node.tile = None

    def _set_graph_whole(
        self, graph: Mapping[str, Any], positions: Mapping[str, Sequence[float]]
    ) -> None:
        data = node_dicts(graph)
        self._set_mode(len(data))
        old = self._nodes
        nodes: dict[str, _Node] = {}
        fresh = self._fresh
        lazy = self._lazy
        moved = False  # a box came, went, moved or changed size: routes change
        max_h = self._max_h
        counts, tiles = self._counts, self._tiles
        for attrs in data:
            node_id = str(attrs["id"])
            pos = positions.get(node_id)
            node = old.get(node_id)
            if node is None:
                node = _Node(node_id, attrs)
                if pos is not None:
                    node.cx, node.cy = float(pos[0]), float(pos[1])
                key = node.key
                counts[key] += 1
                rec = node.rec
                if rec.new:
                    counts["new"] += 1
                if rec.freed:
                    counts["freed"] += 1
                if rec.stale:
                    counts["stale"] += 1
                fresh.append(node)
                if lazy:
                    cell = (math.floor(node.cx / NODE_TILE), math.floor(node.cy / NODE_TILE))
                    tile = tiles.get(cell)
                    if tile is None:
                        tile = self._new_tile(cell)
                    tile.members[node_id] = node
                    node.tile = tile
                moved = True
                if node.height > max_h:
                    max_h = node.height
            else:
                if node.attrs is not attrs and node.attrs != attrs:
                    moved = self._restyle(node, attrs) or moved
                    if node.height > max_h:
                        max_h = node.height
                if pos is not None:
                    x, y = float(pos[0]), float(pos[1])
                    if x != node.cx or y != node.cy:
                        self._move(node, x, y)
                        moved = True
            nodes[node_id] = node
        self._max_h = max_h
        obstacles = self._obstacles
        for node_id, node in old.items():
            if node_id not in nodes:
                self._drop(node)
                obstacles.remove(node_id)
                moved = True
        # Graph order, for node_ids() and deterministic drawing.
        self._nodes = nodes
        if moved:
            obstacles.set_many((n, b.cx, b.cy, b.width, b.height) for n, b in nodes.items())
        self._update_storage()
        self._update_edges(edge_dicts(graph), keep_routes=not moved)

    def _count(self, node: _Node, sign: int) -> None:
        counts = self._counts
        attrs = node.attrs
        counts[node.key] += sign
        for name in ("new", "freed", "stale"):
            if attrs.get(name):
                counts[name] += sign

    def _restyle(self, node: _Node, attrs: Mapping[str, Any]) -> bool:
        """Give ``node`` these (different) attributes; True when its box changed size."""
        if _only_new_differs(node.attrs, attrs):
            self._renew(node, attrs)
            return False
        self._count(node, -1)
        resized = node.set_attrs(attrs)
        self._count(node, 1)
        self._fresh.append(node)
        if node.item is not None:
            node.item.refresh()
        if node.tile is not None:
            if resized:
                self._tiles_dirty.add(node.tile.key)
            else:
                node.tile.restyled(node)
        return resized

    def _renew(
        self, node: _Node, attrs: Mapping[str, Any], tiles: set[_NodeTile] | None = None
    ) -> None:
        """``attrs`` differ from the node's only in the "new" flag: no text, size, tooltip
        or route to redo (every node, the step after a run). ``tiles``: collect the
        node's tile there, to be drawn again whole once (see _restyle_tiles), instead of
        asking it to redraw this node's box."""
        was = node.rec.new
        node.attrs = attrs
        now = node.rec.new
        if was != now:
            counts = self._counts
            counts["new"] += (1 if now else -1)
        if now:
            self._fresh.append(node)
        if node.item is not None:
            node.item.refresh(tooltip=False)
        tile = node.tile
        if tile is not None:
            if tiles is None:
                tile.restyled(node)
            else:
                tiles.add(tile)

    def _renew_many(
        self, keys: Collection[str], index: Mapping[str, Mapping[str, Any]],
        tiles: set[_NodeTile],
    ) -> list[str]:
        """:meth:`_renew` for each of ``keys`` (the decoder says only their "new" flag
        changed), in one lean loop: the step after a run turns 10,000 glows off. Their
        tiles are collected in ``tiles``. Returns the keys whose dicts say more changed
        (for the general path)."""
        nodes, fresh = self._nodes, self._fresh
        others: list[str] = []
        lit = 0
        last: _NodeTile | None = None
        if len(keys) * 4 > len(nodes):
            # most nodes (the step after a run): in the canvas's order, the order their
            # records were made in, not the set's
            wanted = keys if isinstance(keys, (set, frozenset, dict)) else set(keys)
            pairs: Iterable[tuple[str, _Node | None]] = (
                (n, node) for n, node in nodes.items() if n in wanted
            )
        else:
            pairs = ((n, nodes.get(n)) for n in keys)
        for node_id, node in pairs:
            attrs = index.get(node_id)
            if node is None or attrs is None:
                continue
            rec = node.rec
            old = rec.attrs
            if old is attrs:
                continue
            if len(old) != len(attrs):
                others.append(node_id)
                continue
            now = bool(attrs.get("new"))
            lit += now - bool(old.get("new"))
            rec.attrs = attrs  # the canvas's own record (node.attrs = attrs, no new one)
            if now:
                fresh.append(node)
            item = node.item
            if item is not None:
                item.refresh(tooltip=False)
            tile = node.tile
            if tile is not None and tile is not last:
                tiles.add(tile)  # neighbours in the graph's order share a tile
                last = tile
        self._counts["new"] += lit
        return others

    @staticmethod
    def _restyle_tiles(tiles: set[_NodeTile]) -> None:
        """Tiles whose members' looks changed (not their places or sizes): drawn again
        whole, once each (10,000 glows going off asked for 10,000 small updates)."""
        for tile in tiles:
            tile.recolour()

    def _move(self, node: _Node, x: float, y: float) -> None:
        node.cx, node.cy = x, y
        if node.item is not None:
            node.item.setPos(x, y)
        if self._lazy:
            self._place(node)

    def _place(self, node: _Node) -> None:
        """Put a node of a big graph into the tile its centre lies in."""
        key = (math.floor(node.cx / NODE_TILE), math.floor(node.cy / NODE_TILE))
        tile = node.tile
        if tile is not None:
            if tile.key == key:
                self._tiles_dirty.add(key)
                return
            tile.members.pop(node.node_id, None)
            self._tiles_dirty.add(tile.key)
        tile = self._tiles.get(key)
        if tile is None:
            tile = self._new_tile(key)
        tile.members[node.node_id] = node
        node.tile = tile
        self._tiles_dirty.add(key)

    def _new_tile(self, key: tuple[int, int]) -> _NodeTile:
        tile = self._tiles[key] = _NodeTile(key)
        self._scene.addItem(tile)
        self._tiles_dirty.add(key)
        return tile

    def _flush_tiles(self) -> None:
        tiles = self._tiles
        for key in self._tiles_dirty:
            tile = tiles.get(key)
            if tile is None:
                continue
            if tile.members:
                tile.refresh()
            else:
                self._scene.removeItem(tile)
                del tiles[key]
        self._tiles_dirty.clear()

    def _materialize(self, node: _Node) -> NodeItem:
        """The node's item, made (and put in the scene) when it has none."""
        item = node.item
        if item is None:
            item = NodeItem(node.node_id, node=node)
            self._scene.addItem(item)
            self._uncached.append(item)
            if len(self._uncached) > MAX_LIVE_ITEMS:  # a canvas that is not painted
                self._cache_items()
            if node.tile is not None:
                self._live[node.node_id] = node
                node.tile.restyled(node)  # the item draws it from now on
        return item

    def _release(self, node: _Node) -> None:
        """Take a big graph's node item out of the scene; its tile draws it again."""
        item = node.item
        if item is None:
            return
        self._scene.removeItem(item)
        node.item = None
        self._live.pop(node.node_id, None)
        if node.tile is not None:
            node.tile.restyled(node)

    def _drop(self, node: _Node) -> None:
        """A node leaves the graph."""
        node_id = node.node_id
        self._count(node, -1)
        if node.item is not None:
            self._scene.removeItem(node.item)
            node.item = None
            self._live.pop(node_id, None)
        tile = node.tile
        if tile is not None:
            tile.members.pop(node_id, None)
            self._tiles_dirty.add(tile.key)
            node.tile = None
        self._marked.discard(node_id)
        if node_id == self._selected:
            self._selected = None

    def _drop_node(self, node_id: str) -> None:
        node = self._nodes.pop(node_id, None)
        if node is not None:
            self._drop(node)

    def _set_flag(self, node: _Node, bit: int, on: bool) -> None:
        if bool(node.flags & bit) == on:
            return
        node.flags = node.flags | bit if on else node.flags & ~bit
        if node.item is not None:
            node.item.refresh(tooltip=False)
        if node.tile is not None:
            node.tile.restyled(node)

    def _set_badge(self, node: _Node, group: str | None) -> None:
        if group == node.badge:
            return
        node.badge = group
        if node.item is not None:
            node.item.update()
        if node.tile is not None:
            node.tile.restyled(node)

    def _apply_changes(
        self,
        graph: Mapping[str, Any],
        positions: Mapping[str, Sequence[float]],
        changes: GraphChanges,
    ) -> list[_Node]:
        """The delta path of :meth:`set_graph`: touch only what ``changes`` names.
        Returns the nodes added, moved or resized."""
        data = node_dicts(graph)
        self._set_mode(len(data))
        index = changes.node_attrs
        if len(index) != len(data):  # not the decoder's index of this graph
            index = {str(a["id"]): a for a in data}
        nodes = self._nodes
        dirty: set[str] = set()
        storage = False
        touched: list[str] = []
        for node_id in changes.removed:
            node = nodes.get(node_id)
            if node is not None:
                storage = storage or node.kind in ("tensor", "saved")
                self._drop_node(node_id)
                dirty.add(node_id)
                touched.append(node_id)
        # new nodes in the state's order, so the canvas keeps the graph's order
        lazy = self._lazy
        for node_id in [*changes.added, *(n for n in changes.nodes if n not in nodes)]:
            if node_id in nodes or node_id not in index:
                continue
            node = _Node(node_id, index[node_id])
            pos = positions.get(node_id)
            if pos is not None:
                node.cx, node.cy = float(pos[0]), float(pos[1])
            nodes[node_id] = node
            self._count(node, 1)
            self._fresh.append(node)
            self._max_h = max(self._max_h, node.height)
            if lazy:
                self._place(node)
            dirty.add(node_id)
            touched.append(node_id)
            storage = storage or node.kind in ("tensor", "saved")
        renewed = changes.renewed
        renewed_tiles: set[_NodeTile] = set()
        changed = changes.nodes
        if renewed:
            # the decoder says: only "new" changed (the step after a run: every node)
            changed = changed - renewed
            changed.update(self._renew_many(renewed, index, renewed_tiles))
        for node_id in changed:
            node = nodes.get(node_id)
            attrs = index.get(node_id)
            if node is None or attrs is None or node.attrs is attrs:
                continue
            if node.attrs == attrs:
                continue
            if _only_new_differs(node.attrs, attrs):
                self._renew(node, attrs, renewed_tiles)
                continue
            storage = storage or node.rec.is_tensor_like or Node(attrs).is_tensor_like
            if self._restyle(node, attrs):
                dirty.add(node_id)
                self._max_h = max(self._max_h, node.height)
            touched.append(node_id)
        self._restyle_tiles(renewed_tiles)
        for node_id in [*changes.moved, *changes.added]:
            node = nodes.get(node_id)
            pos = positions.get(node_id)
            if node is not None and pos is not None:
                x, y = float(pos[0]), float(pos[1])
                if x != node.cx or y != node.cy:
                    self._move(node, x, y)
                    dirty.add(node_id)
        if changes.reordered or len(nodes) != len(data):
            # graph order, as the whole path keeps it
            self._nodes = nodes = {str(a["id"]): nodes[str(a["id"])] for a in data}
        if storage:
            self._update_storage(touched)
        elif dirty and self._groups:
            self._update_storage_links()  # a moved member moves its links
        edge_attrs: dict[EdgeKey, Mapping[str, Any]] = {}
        if changes.edges:
            eindex = changes.edge_attrs
            if len(eindex) != len(edge_dicts(graph)):
                eindex = {(str(e["source"]), str(e["target"])): e for e in edge_dicts(graph)}
            keys = changes.edges
            if changes.renewed_edges:
                keys = keys - changes.renewed_edges
                keys.update(self._renew_edges(changes.renewed_edges, eindex))
            edge_attrs = {k: eindex[k] for k in keys if k in eindex}
        grown = [nodes[n] for n in dirty if n in nodes]
        self._update_edges_changed(
            edge_dicts(graph), edge_attrs, set(changes.removed_edges), dirty
        )
        return grown

    def clear(self) -> None:
        """Remove every node and edge (the empty-graph hint shows)."""
        self._backward = None
        self.set_graph({"nodes": [], "edges": []}, {})

    def set_empty_hint(self, text: str) -> None:
        """Text shown in the middle of the canvas while the graph is empty."""
        self._hint.setText(text)
        self._update_overlays()

    @property
    def empty_hint(self) -> QLabel:
        """The label over an empty canvas (visible only while there are no nodes)."""
        return self._hint

    @property
    def bulk_edges(self) -> bool:
        """True when edges are painted in bulk (more than BULK_EDGE_THRESHOLD of them)."""
        return self._bulk

    # --- public API: selection and search -------------------------------------------

    def select_node(self, node_id: str | None, center: bool = True) -> None:
        """Select ``node_id`` (None clears) and centre the view on it; emits nothing."""
        self._set_selected(node_id if node_id in self._nodes else None)
        if center and self._selected is not None:
            node = self._nodes[self._selected]
            self.centerOn(QPointF(node.cx, node.cy))
            self._sync_items()

    def selected_node(self) -> str | None:
        return self._selected

    def search(self, text: str) -> list[str]:
        """Ids of nodes whose label, variable names or shape contain ``text`` (any case)."""
        needle = text.strip().lower()
        if not needle:
            return []
        return [n for n, node in self._nodes.items() if needle in _search_text(node.attrs)]

    # --- public API: test helpers -----------------------------------------------------

    def node_ids(self) -> list[str]:
        """Ids of the nodes on the canvas, in graph order."""
        return list(self._nodes)

    def node_item(self, node_id: str) -> NodeItem | None:
        """The item drawing ``node_id`` (its ``state`` property tells how it is shown); on
        a big graph a node off screen gets its item now."""
        node = self._nodes.get(node_id)
        return None if node is None else self._materialize(node)

    def edge_state(self, source: str, target: str) -> set[str]:
        """Among {"new", "carrying"} for the edge ``source -> target``."""
        out: set[str] = set()
        edge = self._edges.get((source, target))
        if edge is not None and edge.new:
            out.add("new")
        if (source, target) in self._carry:
            out.add("carrying")
        return out

    def edge_label(self, source: str, target: str) -> str | None:
        """The gradient text on a carrying edge, else None."""
        entry = self._carry.get((source, target))
        return entry[2] if entry is not None else None

    def storage_links(self) -> list[tuple[str, str, str]]:
        """(storage group, node id, node id) for each dotted shared-memory link drawn."""
        return list(self._links)

    def legend_items(self) -> list[tuple[str, str]]:
        """(what, colour) for each row the legend shows now, e.g. ("op (grad_fn)", fill):
        the kinds of node on the canvas and the states some node is in."""
        return [(text, colour) for _, colour, _, text in self._legend.rows]

    def legend_rect(self) -> QRect:
        """Where the legend strip is, in the view's coordinates (empty when hidden)."""
        legend = self._legend
        return legend.geometry() if legend.isVisible() else QRect()

    def set_legend_visible(self, visible: bool) -> None:
        """Show or hide the colour key, a strip under the graph (key L toggles it)."""
        self._legend_on = bool(visible)
        self._update_overlays()

    def legend_visible(self) -> bool:
        return self._legend_on

    def _update_legend(self) -> None:
        present = {k for k, n in self._counts.items() if n > 0}
        if self._marked:
            present.add("backward")
        if self._groups:
            present.add("storage")
        if self._legend.set_rows(_legend_rows(self._theme, present), self._theme):
            self._update_overlays(shrink=False)

    # --- public API: theme ----------------------------------------------------------------

    def current_theme(self) -> Theme:
        """The theme the canvas draws with (dark when its palette is dark)."""
        return self._theme

    def set_theme(self, t: Theme) -> None:
        """Draw with ``t``; the canvas picks one itself from its palette, and again
        whenever the palette changes."""
        if t is self._theme:
            return
        self._apply_theme(t)

    def _apply_theme(self, t: Theme) -> None:
        self._theme = t
        self._scene.theme = t
        self.setBackgroundBrush(QBrush(theme.qcolor(t.background)))
        self._hint.setStyleSheet(f"color: {t.hint_text}; font-size: 15px; background: transparent;")
        for node in self._nodes.values():
            if node.item is not None:
                node.item.update()  # drops its cached pixmap
        for tile in self._tiles.values():
            tile.recolour()
        for band in self._bands.values():
            band.update()
        self.resetCachedContent()
        self._scene.update()
        self._update_legend()
        self._legend.update()

    def _follow_palette(self, force: bool = False) -> None:
        t = theme.palette_theme(self.palette())
        if force:
            self._apply_theme(t)
        else:
            self.set_theme(t)

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 (Qt API)
        super().changeEvent(event)
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange):
            self._follow_palette()

    # --- public API: export (gradviz.ui.canvas.export does it) ---------------------------

    def to_svg(self) -> str:
        """The graph on the canvas as an SVG document (:func:`.export.canvas_svg`)."""
        from .export import canvas_svg

        return canvas_svg(self)

    def export_image(self, path: str) -> None:
        """Write the whole graph to ``path``, SVG or PNG (:func:`.export.export_canvas`)."""
        from .export import export_canvas

        export_canvas(self, path)

    def picture(self) -> tuple[list[Any], list[Any], dict[str, tuple[float, float]]]:
        """What the canvas shows, as the one renderer reads a graph: ``(node id, attrs)``
        pairs, ``(source, target, {"kind"})`` edges in the graph's order, and places."""
        nodes = [(node_id, node.attrs) for node_id, node in self._nodes.items()]
        keys: dict[EdgeKey, None] = {}
        for e in edge_dicts(self._graph_data):
            key = (str(e["source"]), str(e["target"]))
            if key in self._edges:
                keys[key] = None
        keys.update(dict.fromkeys(self._edges))
        edges = [(s, t, {"kind": self._edges[(s, t)].kind}) for s, t in keys]
        positions = {node_id: (node.cx, node.cy) for node_id, node in self._nodes.items()}
        return nodes, edges, positions

    # --- internals: graph --------------------------------------------------------------

    def _update_storage(self, touched: Iterable[str] | None = None) -> None:
        """Badges on nodes that share a storage group, and the dotted links between them.

        ``touched``: only these nodes changed (added, restyled or removed); the
        groups they were or are in are redone, not every group of the graph."""
        storage_of, member_ids = self._storage_of, self._member_ids
        nodes = self._nodes
        if touched is None:
            # every node: sort them into groups in one pass
            storage_of.clear()
            member_ids.clear()
            self._groups.clear()
            for node_id, node in nodes.items():
                rec = node.rec
                group = rec.storage
                if group is None or not rec.is_tensor_like:
                    if node.badge is not None:
                        self._set_badge(node, None)
                    continue
                group = str(group)
                storage_of[node_id] = group
                ids = member_ids.get(group)
                if ids is None:
                    member_ids[group] = [node_id]  # most groups have one member
                else:
                    ids.append(node_id)
            for group, ids in member_ids.items():
                if len(ids) == 1:
                    self._set_badge(nodes[ids[0]], None)
                    continue
                members = [nodes[n] for n in ids]  # graph order already
                self._groups[group] = members
                for member in members:
                    self._set_badge(member, group)
            self._update_storage_links()
            return
        affected: set[str] = set()
        for node_id in touched:
            old = storage_of.pop(node_id, None)
            if old is not None:
                affected.add(old)
                ids = member_ids[old]
                if node_id in ids:
                    ids.remove(node_id)
            found = nodes.get(node_id)
            if found is None:
                continue
            rec = found.rec
            group = rec.storage if rec.is_tensor_like else None
            if group is None:
                if found.badge is not None:
                    self._set_badge(found, None)
                continue
            group = str(group)
            storage_of[node_id] = group
            member_ids.setdefault(group, []).append(node_id)
            affected.add(group)
        if not affected:
            self._update_storage_links()
            return
        order: dict[str, int] | None = None
        for group in affected:
            ids = member_ids.get(group)
            if not ids:
                member_ids.pop(group, None)
                self._groups.pop(group, None)
                continue
            if len(ids) == 1:
                self._groups.pop(group, None)
                self._set_badge(nodes[ids[0]], None)
                continue
            if order is None:
                order = {n: i for i, n in enumerate(nodes)}
            ids.sort(key=order.__getitem__)
            members = [nodes[n] for n in ids]
            self._groups[group] = members
            for member in members:
                self._set_badge(member, group)
        self._update_storage_links()

    def _update_storage_links(self) -> None:
        # Each group linked as gradviz.graph.routing.storage_link_pairs says (a star, or a
        # chain in a big group); the badges still tell, and selecting a node draws all
        # of its links.
        links: list[tuple[str, _Node, _Node, bool]] = [
            (group, a, b, False)
            for group, a, b in storage_link_pairs(
                self._groups, lambda m: m.kind, lambda m: (m.cx, m.cy)
            )
        ]
        selected = self._nodes.get(self._selected) if self._selected else None
        if selected is not None and selected.badge in self._groups:
            # The selection's group is drawn as a bold star from the selected node.
            group = str(selected.badge)
            members = self._groups[group]
            in_group = {id(m) for m in members}
            links = [link for link in links if id(link[1]) not in in_group]
            links += [(group, selected, m, True) for m in members if m is not selected]
        self._links = [(group, a.node_id, b.node_id) for group, a, b, _ in links]
        self._storage.set_links(links)

    def _update_edges(self, edges: Sequence[Mapping[str, Any]], keep_routes: bool = False) -> None:
        """Every edge again (the whole path). ``keep_routes``: no box came, went, moved or
        changed size, so an edge that stays keeps its route when its set of neighbours
        is the same."""
        nodes = self._nodes
        wanted: dict[EdgeKey, _Edge] = {}
        adj: dict[str, list[EdgeKey]] = {}
        for e in edges:
            s, t = str(e["source"]), str(e["target"])
            if s == t or s not in nodes or t not in nodes:
                continue
            key = (s, t)
            if key not in wanted:
                if s in adj:
                    adj[s].append(key)
                else:
                    adj[s] = [key]
                if t in adj:
                    adj[t].append(key)
                else:
                    adj[t] = [key]
            rec = Edge(e)
            wanted[key] = _Edge(rec.kind.value, rec.new)
        old = self._edges
        keep = keep_routes and len(wanted) == len(old) and all(k in old for k in wanted)
        bulk = len(wanted) > BULK_EDGE_THRESHOLD
        scene = self._scene
        if keep and bulk == self._bulk:
            # same boxes, same edges: the routes stand; only colours may change
            for key, edge in wanted.items():
                was = old[key]
                if was.kind == edge.kind:
                    edge.geometry = was.geometry
                else:
                    self._set_region(key, None)  # its arrowhead changes
                edge.item, edge.band = was.item, was.band
                if (was.kind, was.new) != (edge.kind, edge.new) and was.band is not None:
                    self._bands_dirty.add(was.band.index)
            self._edges = wanted
            if bulk:
                for edge in wanted.values():
                    if edge.geometry is None and edge.band is not None:
                        self._bands_dirty.add(edge.band.index)
            else:
                todo = [k for k, e in wanted.items() if e.geometry is None]
                if todo:
                    self._compute_geometry(todo, wanted)
                self._restyle_items(wanted)
            return
        self._adj = adj
        self._region_of.clear()
        self._region_bands.clear()
        if bulk:
            for edge in old.values():
                if edge.item is not None:
                    scene.removeItem(edge.item)
            self._edges = wanted
            self._refill_bands()
        else:
            self._clear_bands()
            self._compute_geometry(wanted, wanted)
            for key, was in old.items():
                if key not in wanted and was.item is not None:
                    scene.removeItem(was.item)
            for key, edge in wanted.items():
                kept = old.get(key)
                edge.item = kept.item if kept is not None else None
            self._edges = wanted
            self._restyle_items(wanted)
        self._bulk = bulk

    def _restyle_items(self, keys: Iterable[EdgeKey]) -> None:
        """Give the per-edge items of ``keys`` their geometry and style (no bulk)."""
        scene = self._scene
        for key in keys:
            edge = self._edges[key]
            if edge.item is None:
                edge.item = _EdgeItem(edge.kind, edge.new, edge.geometry or ())
                scene.addItem(edge.item)
            else:
                edge.item.set_geometry(edge.geometry or ())
                edge.item.set_style(_style_for(edge.kind, edge.new))
                edge.item.setZValue(Z_EDGE_NEW if edge.new else Z_EDGE)

    def _renew_edges(
        self, keys: Collection[EdgeKey], attrs: Mapping[EdgeKey, Mapping[str, Any]]
    ) -> list[EdgeKey]:
        """Edges whose only change is their "new" flag (the decoder says so): their glow
        set, their band or item drawn again; no route to look at. Returns those the
        canvas does not hold as they are (for the whole delta path)."""
        edges, bulk = self._edges, self._bulk
        others: list[EdgeKey] = []
        bands = self._bands_dirty
        pairs: Iterable[tuple[EdgeKey, _Edge | None]]
        if len(keys) * 4 > len(edges):
            # most edges (the step after a run): in the canvas's order (see _renew_many)
            wanted = keys if isinstance(keys, (set, frozenset, dict)) else set(keys)
            pairs = [(k, edge) for k, edge in edges.items() if k in wanted]
            if len(pairs) < len(wanted):
                others.extend(k for k in wanted if k not in edges)
        else:
            pairs = ((k, edges.get(k)) for k in keys)
        for key, edge in pairs:
            e = attrs.get(key)
            if edge is None or e is None:
                others.append(key)
                continue
            kind = e.get("kind")
            if kind != edge.kind and Edge(e).kind.value != edge.kind:
                others.append(key)
                continue
            new = bool(e.get("new"))  # Edge(e).new, without a record per edge
            if edge.new == new:
                continue
            edge.new = new
            if bulk:
                if edge.band is not None:
                    bands.add(edge.band.index)
            elif edge.item is not None:
                edge.item.set_style(_style_for(edge.kind, new))
                edge.item.setZValue(Z_EDGE_NEW if new else Z_EDGE)
        return others

    def _update_edges_changed(
        self,
        all_edges: Sequence[Mapping[str, Any]],
        changed: Mapping[EdgeKey, Mapping[str, Any]],
        removed: set[EdgeKey],
        dirty: set[str],
    ) -> None:
        """The delta path for edges: the changed and removed ones, and those whose
        ends moved or resized (with their neighbours, which share border ports)."""
        nodes, edges, adj, scene = self._nodes, self._edges, self._adj, self._scene
        # The boxes that came, went, moved or resized: the router's obstacles follow them,
        # and every edge whose route they can touch is routed again.
        obstacles = self._obstacles
        boxes: list[tuple[float, float, float, float]] = []
        for n in dirty:
            old_box = obstacles.get(n)
            node = nodes.get(n)
            if node is None:
                obstacles.remove(n)
            else:
                obstacles.set(n, node.cx, node.cy, node.width, node.height)
            new_box = obstacles.get(n)
            if old_box is not None:
                boxes.append(old_box)
            if new_box is not None and new_box != old_box:
                boxes.append(new_box)
        crossed = self._edges_meeting(boxes)
        gone: list[EdgeKey] = []
        for key in list(removed) + [k for n in dirty if n not in nodes for k in adj.get(n, ())]:
            edge = edges.pop(key, None)
            if edge is None:
                continue
            gone.append(key)
            self._set_region(key, None)
            for end in key:
                keys = adj.get(end)
                if keys is not None:
                    if key in keys:
                        keys.remove(key)
                    if not keys:
                        del adj[end]
            if edge.item is not None:
                scene.removeItem(edge.item)
            if edge.band is not None:
                self._band_remove(key, edge)
            dirty.update(key)
        touched: set[EdgeKey] = set()
        restyled: list[EdgeKey] = []
        for key, e in changed.items():
            s, t = key
            if s == t or s not in nodes or t not in nodes:
                continue
            rec = Edge(e)
            kind, new = rec.kind.value, rec.new
            old = edges.get(key)
            if old is not None:
                # the same two boxes: only its own arrowhead may change (ports spread by
                # where the other ends are, not by kind), or only its colour
                if old.kind != kind:
                    touched.add(key)
                elif old.new != new:
                    restyled.append(key)
                old.kind, old.new = kind, new
                continue
            edges[key] = _Edge(kind, new)
            adj.setdefault(s, []).append(key)
            adj.setdefault(t, []).append(key)
            touched.add(key)
            dirty.update(key)
        bulk = len(edges) > BULK_EDGE_THRESHOLD
        if bulk != self._bulk:
            self._update_edges(all_edges)  # crossing the bulk threshold: redo them all
            return
        # Edges at a dirty node, and at its neighbours (their ports order by the far end).
        near = set(dirty)
        for n in dirty:
            for s, t in adj.get(n, ()):
                near.add(s)
                near.add(t)
        affected = {k for n in near for k in adj.get(n, ())}
        affected.update(touched)
        affected.update(k for k in crossed if k in edges)
        if bulk:
            # routed again when their band is next painted
            for key in affected:
                edge = edges[key]
                if edge.geometry is not None:
                    edge.geometry = None
                    self._set_region(key, None)
                self._band_place(key, edge)
            for key in restyled:
                edge = edges[key]
                if edge.band is not None:
                    self._bands_dirty.add(edge.band.index)
        else:
            if affected:
                self._compute_geometry(affected, edges)
            self._restyle_items(affected.union(restyled))

    def _compute_geometry(self, keys: Iterable[EdgeKey], every: Mapping[EdgeKey, _Edge]) -> None:
        """Give each edge of ``keys`` its path (:func:`gradviz.graph.routing.edge_geometries`:
        ports spread along shared borders, routes around the boxes in the way); ``every``
        is the whole edge set, ``self._adj`` its index by node."""
        keys = keys if isinstance(keys, (list, dict, set)) else list(keys)
        # every edge (a whole update) reads faster from a plain dict; a step, from a view
        kinds: Mapping[EdgeKey, str] = (
            {k: e.kind for k, e in every.items()} if len(keys) * 4 > len(every) else _Kinds(every)
        )
        result = edge_geometries(keys, kinds, self._adj, self._nodes, self._obstacles)
        for key, (geometry, region) in result.items():
            every[key].geometry = geometry
            self._set_region(key, region)

    def _geometry(self, key: EdgeKey) -> Geometry:
        """The route of edge ``key`` (found now when it has none yet)."""
        edge = self._edges[key]
        if edge.geometry is None:
            self._compute_geometry([key], self._edges)
        assert edge.geometry is not None
        return edge.geometry

    def edge_geometry(self, source: str, target: str) -> Geometry | None:
        """The route of the edge ``source -> target`` as :mod:`gradviz.graph.routing` gives
        it (routed now if its band was never painted), or None when there is no such edge."""
        key = (source, target)
        return self._geometry(key) if key in self._edges else None

    def _set_region(self, key: EdgeKey, region: tuple[float, float, float, float] | None) -> None:
        """Index edge ``key`` by the region its route depends on (None: forget it)."""
        bands = self._region_bands
        old = self._region_of.pop(key, None)
        if old is not None:
            for b in range(math.floor(old[2] / REGION_BAND), math.floor(old[3] / REGION_BAND) + 1):
                keys = bands.get(b)
                if keys is not None:
                    keys.discard(key)
                    if not keys:
                        del bands[b]
        if region is None:
            return
        self._region_of[key] = region
        for b in range(math.floor(region[2] / REGION_BAND), math.floor(region[3] / REGION_BAND) + 1):
            bands.setdefault(b, set()).add(key)

    def _edges_meeting(self, boxes: Iterable[tuple[float, float, float, float]]) -> set[EdgeKey]:
        """Edges whose route a box (left, right, top, bottom) can change."""
        found: set[EdgeKey] = set()
        bands, region_of = self._region_bands, self._region_of
        for left, right, top, bottom in boxes:
            for b in range(math.floor(top / REGION_BAND), math.floor(bottom / REGION_BAND) + 1):
                for key in bands.get(b, ()):
                    r = region_of[key]
                    if r[0] < right and r[1] > left and r[2] < bottom and r[3] > top:
                        found.add(key)
        return found

    # --- internals: the edge bands of a big graph ---------------------------------------

    def _band_index(self, key: EdgeKey) -> int:
        a, b = self._nodes[key[0]], self._nodes[key[1]]
        top = min(a.cy - a.height / 2, b.cy - b.height / 2)
        return math.floor(top / EDGE_BAND)

    def _band_place(self, key: EdgeKey, edge: _Edge) -> None:
        """Put ``edge`` in the band of its upper end (to be drawn again)."""
        index = self._band_index(key)
        band = edge.band
        if band is not None:
            band.extent = None  # its ends may have moved
            if band.index == index:
                self._bands_dirty.add(index)
                return
            self._band_remove(key, edge)
        band = self._bands.get(index)
        if band is None:
            band = self._bands[index] = _EdgeBand(index, self._build_band)
            self._scene.addItem(band)
        band.keys[key] = None
        band.extent = None
        edge.band = band
        self._bands_dirty.add(index)

    def _band_remove(self, key: EdgeKey, edge: _Edge) -> None:
        band = edge.band
        if band is not None:
            band.keys.pop(key, None)
            band.extent = None
            self._bands_dirty.add(band.index)
            edge.band = None

    def _refill_bands(self) -> None:
        """Every edge into its band again, none routed (the whole path of a big graph)."""
        bands, nodes = self._bands, self._nodes
        extents: dict[int, list[float]] = {}
        for emptied in bands.values():
            emptied.keys = {}
        for key, edge in self._edges.items():
            a, b = nodes[key[0]], nodes[key[1]]
            a_top, b_top = a.cy - a.height / 2, b.cy - b.height / 2
            top = a_top if a_top < b_top else b_top
            bottom = max(a.cy + a.height / 2, b.cy + b.height / 2)
            index = math.floor(top / EDGE_BAND)
            band = bands.get(index)
            if band is None:
                band = bands[index] = _EdgeBand(index, self._build_band)
                self._scene.addItem(band)
            band.keys[key] = None
            edge.band = band
            extent = extents.get(index)
            if extent is None:
                extents[index] = [top, bottom]
            else:
                if top < extent[0]:
                    extent[0] = top
                if bottom > extent[1]:
                    extent[1] = bottom
        for index, band in bands.items():
            extent = extents.get(index)
            band.extent = (extent[0], extent[1]) if extent is not None else None
        self._bands_dirty.update(bands)

    def _clear_bands(self) -> None:
        for band in self._bands.values():
            self._scene.removeItem(band)
        self._bands.clear()
        self._bands_dirty.clear()
        self._band_x = None
        for edge in self._edges.values():
            edge.band = None

    def _flush_bands(self) -> None:
        """New bounds for the bands whose edges changed; their paths are made again when
        they are next painted. A band spans the graph's width: a route may pass any gap
        of the rows between its ends."""
        bands = self._bands
        if not bands:
            self._bands_dirty.clear()
            return
        rect = self._node_bounds
        x = (rect.left() - 2 * CLEARANCE - 20, rect.right() + 2 * CLEARANCE + 20)
        dirty = self._bands_dirty
        wider = x != self._band_x  # every band spans the new width (its paths stand)
        self._band_x = x
        nodes, scene = self._nodes, self._scene
        below = self._max_h + 2 * ARROW_LEN + 40  # a U under a row dips below its ends
        for index in list(bands) if wider else dirty:
            band = bands.get(index)
            if band is None:
                continue
            if not band.keys:
                scene.removeItem(band)
                del bands[index]
                continue
            if band.extent is None:
                top, bottom = math.inf, -math.inf
                for s, t in band.keys:
                    for node in (nodes[s], nodes[t]):
                        h = node.height / 2
                        if node.cy - h < top:
                            top = node.cy - h
                        if node.cy + h > bottom:
                            bottom = node.cy + h
                band.extent = (top, bottom)
            top, bottom = band.extent
            band.set_bounds(QRectF(x[0], top - 20, x[1] - x[0], bottom - top + 20 + below))
            if index in dirty:
                band.paths = None
                band.update()
        self._bands_dirty = set()

    def _build_band(self, band: _EdgeBand) -> None:
        """Route the band's edges that have no route yet and make its paths, one per style
        ("new" edges last, above the others)."""
        edges = self._edges
        todo = [k for k in band.keys if edges[k].geometry is None]
        if todo:
            self._compute_geometry(todo, edges)
        by_style: dict[_EdgeStyle, tuple[QPainterPath, QPainterPath]] = {}
        for key in band.keys:
            edge = edges[key]
            style = _style_for(edge.kind, edge.new)
            paths = by_style.get(style)
            if paths is None:
                paths = by_style[style] = (QPainterPath(), QPainterPath())
            _add_geometry(paths[0], paths[1] if style.arrow else None, edge.geometry or ())
        band.paths = sorted(
            ((style, p, a) for style, (p, a) in by_style.items()),
            key=lambda entry: entry[0].role == "new",
        )

    def _nodes_rect(self) -> QRectF:
        return _nodes_union(self._nodes.values(), 0.0)

    def graph_rect(self) -> QRectF:
        """The scene rectangle the nodes occupy (kept up to date by each set_graph)."""
        return QRectF(self._node_bounds)

    def _update_scene_rect(self) -> None:
        rect = self._node_bounds
        if rect.isEmpty():
            self._scene.setSceneRect(QRectF(0, 0, 1, 1))
            return
        # Room to pan a little past the graph and to zoom around its corners.
        margin = 400.0
        self._scene.setSceneRect(rect.adjusted(-margin, -margin, margin, margin))

    # --- internals: items on demand (a big graph) -----------------------------------------

    def _sync_items(self) -> None:
        """On a big graph, give the nodes on screen and around it their items once the
        view is zoomed in enough to read them (tiles draw them alike before; the items
        add tooltips, clicks and a cached picture), and let far ones go past
        MAX_LIVE_ITEMS."""
        if not self._lazy or not self._nodes or not self.isVisible():
            return
        if self.zoom_level() < TEXT_LOD:
            return
        visible = self.mapToScene(self.viewport().rect()).boundingRect()
        synced = self._synced
        if synced is not None and synced.contains(visible):
            return
        w, h = visible.width() / 2, visible.height() / 2
        area = visible.adjusted(-w, -h, w, h)
        nodes = self._nodes
        x0, x1, y0, y1 = area.left(), area.right(), area.top(), area.bottom()
        for entry in self._obstacles.query(x0, x1, y0, y1):
            node = nodes.get(entry[4])
            if node is not None and node.item is None:
                self._materialize(node)
        self._synced = area
        if len(self._live) > MAX_LIVE_ITEMS:
            for node in list(self._live.values()):
                if node.flags & _HOT:
                    continue
                left, top, right, bottom = node.box()
                if right < x0 or left > x1 or bottom < y0 or top > y1:
                    self._release(node)

    # --- internals: selection ------------------------------------------------

    def _set_selected(self, node_id: str | None) -> None:
        if node_id == self._selected:
            return
        old = self._nodes.get(self._selected) if self._selected else None
        if old is not None:
            self._set_flag(old, _SELECTED, False)
        self._selected = node_id
        if node_id is not None:
            self._set_flag(self._nodes[node_id], _SELECTED, True)
        self._update_storage_links()

    def _node_at(self, pos: Any) -> NodeItem | None:
        """The item of the node under ``pos`` (view coordinates); on a big graph the node
        there gets its item now when it has none."""
        for item in self.items(pos):
            while item is not None and not isinstance(item, NodeItem):
                item = item.parentItem()
            if isinstance(item, NodeItem):
                return item
        if not self._lazy:
            return None
        p = self.mapToScene(pos)
        x, y = p.x(), p.y()
        for entry in self._obstacles.query(x - 0.5, x + 0.5, y - 0.5, y + 0.5):
            node = self._nodes.get(entry[4])
            if node is None or node.item is not None:
                continue
            item = self._materialize(node)
            if item.contains(item.mapFromScene(p)):
                return item
        return None

    # --- internals: overlays -------------------------------------------------------

    def _update_overlays(self, shrink: bool = True) -> None:
        """Place the legend strip and the empty-graph hint.

        ``shrink=False`` (a row of the legend came or went while the graph stays, as
        the "new" row does every other step) lets the strip grow but not shrink: a
        strip that changed its height each step resized the viewport, which refitted
        the view (the graph jumped) and repainted all of it. A new graph, a resize or
        the legend's toggle fit the strip to its rows again."""
        legend = self._legend
        h = legend.height_for(self.width()) if self._legend_on and self._nodes else 0
        if not shrink and 0 < h < self._legend_h:
            h = self._legend_h
        if h != self._legend_h:
            # the strip takes its room from the viewport: it never covers the graph
            self._legend_h = h
            self._margin_resize = True  # the viewport's resize comes inside this call
            try:
                self.setViewportMargins(0, 0, 0, h)
            finally:
                self._margin_resize = False
        legend.setGeometry(0, self.height() - h, self.width(), h)
        legend.setVisible(h > 0)
        vp = self.viewport().geometry()
        self._hint.setVisible(not self._nodes)
        self._hint.setGeometry(vp.adjusted(20, 20, -20, -20))

    # --- Qt events -------------------------------------------------------------------------

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802 (Qt API)
        if event.button() == Qt.MouseButton.LeftButton:
            item = self._node_at(event.position().toPoint())
            if item is not None:
                # A press on a node selects it; only the background pans.
                self._press_on_node = True
                self.setFocus(Qt.FocusReason.MouseFocusReason)
                self._set_selected(item.node_id)
                self.node_selected.emit(item.node_id)
                event.accept()
                return
        self._press_on_node = False
        super().mousePressEvent(event)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:  # noqa: N802 (Qt API)
        if not self._press_on_node and event.button() == Qt.MouseButton.LeftButton:
            self._fitted = False  # the user panned
        if self._press_on_node and event.button() == Qt.MouseButton.LeftButton:
            self._press_on_node = False
            event.accept()
            return
        super().mouseReleaseEvent(event)

    def mouseDoubleClickEvent(self, event: QMouseEvent) -> None:  # noqa: N802 (Qt API)
        if event.button() == Qt.MouseButton.LeftButton:
            item = self._node_at(event.position().toPoint())
            if item is not None:
                self._press_on_node = True
                if item.node_id != self._selected:  # the press before it selected it already
                    self._set_selected(item.node_id)
                    self.node_selected.emit(item.node_id)
                self.node_activated.emit(item.node_id)
                event.accept()
                return
        super().mouseDoubleClickEvent(event)

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:  # noqa: N802 (Qt API)
        item = self._node_at(event.pos())
        if item is None:
            super().contextMenuEvent(event)
            return
        if item.node_id != self._selected:
            self._set_selected(item.node_id)
            self.node_selected.emit(item.node_id)
        self.node_menu_requested.emit(item.node_id, event.globalPos())
        event.accept()

    def wheelEvent(self, event: QWheelEvent) -> None:  # noqa: N802 (Qt API)
        delta = event.angleDelta().y() or event.angleDelta().x()
        if not delta:
            delta = event.pixelDelta().y()
        if not delta:
            event.ignore()
            return
        self._zoom_by(1.0015**delta, event.position())
        event.accept()

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 (Qt API)
        key = Qt.Key(event.key())
        ctrl = bool(event.modifiers() & Qt.KeyboardModifier.ControlModifier)
        if key in (Qt.Key.Key_Plus, Qt.Key.Key_Equal):
            self.zoom_in()
        elif key in (Qt.Key.Key_Minus, Qt.Key.Key_Underscore):
            self.zoom_out()
        elif key == Qt.Key.Key_Home or (key == Qt.Key.Key_F and not ctrl):
            self.fit_to_view()
        elif key == Qt.Key.Key_0 and ctrl:
            self.reset_zoom()
        elif key == Qt.Key.Key_L and not ctrl:
            self.set_legend_visible(not self.legend_visible())
        elif key == Qt.Key.Key_W and not ctrl:
            self.fit_whole()
        else:
            super().keyPressEvent(event)
            return
        event.accept()

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt API)
        super().resizeEvent(event)
        self._update_overlays()
        if (self._pending_fit or self._fitted) and self.isVisible() and self._nodes:
            # a legend row that came at a step shrinks the viewport: a fitted view keeps
            # its place while the newest nodes stay in sight; a window resized, or a
            # first fit, fits afresh
            follow = self._margin_resize and not self._pending_fit
            self._pending_fit = False
            self.fit_to_view(self._fit_whole, follow=follow)
        self._view_changed()

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 (Qt API)
        super().showEvent(event)
        if self._pending_fit:
            self._pending_fit = False
            self.fit_to_view()
        self._sync_items()

    def scrollContentsBy(self, dx: int, dy: int) -> None:  # noqa: N802 (Qt API)
        super().scrollContentsBy(dx, dy)
        self._view_changed()

    def viewportEvent(self, event: QEvent) -> bool:  # noqa: N802 (Qt API)
        kind = event.type()
        if kind == QEvent.Type.ToolTip and self._lazy:
            # the node under the pointer gets its item, whose tooltip Qt then shows
            self._node_at(event.pos())  # type: ignore[attr-defined]
        handled = super().viewportEvent(event)
        if kind == QEvent.Type.Paint and self._uncached:
            self._cache_items()
        return handled

    def _cache_items(self) -> None:
        """Node items made since the last paint keep their picture from now on: their
        first paint went straight to the screen (filling a fresh pixmap per item cost a
        tenth of a small graph's first picture), and a cached picture only pays off when
        they are painted again (a step next to them, a scroll)."""
        cache = QGraphicsItem.CacheMode.DeviceCoordinateCache
        for item in self._uncached:
            if item.scene() is self._scene:
                item.setCacheMode(cache)
        self._uncached = []

    def _view_changed(self) -> None:
        self._sync_items()
        self.view_changed.emit()
