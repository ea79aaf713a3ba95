"""The Modules panel: the nn.Module tree, collapse by module, search."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QHeaderView,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ...graph.records import Node
from .. import theme
from ..i18n import translate
from ..text import plain_tooltip
from ._common import _hint


class ModulesPanel(QWidget):
    """The model's module tree with node counts; a ticked module is collapsed into one box.

    Signals:
        collapsed_changed(list): the modules to collapse, after a tick, double-click or button.
    """

    collapsed_changed = Signal(list)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setAccessibleName(translate("Panels", "Modules"))
        self.hint = _hint(
            translate(
                "Panels",
                "Tick a module (or double-click it) to collapse its nodes into one box. "
                "Module names come from gradviz.record(model).",
            ),
            translate("Panels", "Modules hint"),
        )
        self.tree = QTreeWidget()
        self.tree.setObjectName("modulesTree")
        self.tree.setAccessibleName(translate("Panels", "Module tree"))
        self.tree.setColumnCount(2)
        self.tree.setHeaderLabels([translate("Panels", "module"), translate("Panels", "nodes")])
        self.tree.setExpandsOnDoubleClick(False)
        self.tree.setUniformRowHeights(True)
        self.tree.setStyleSheet("QTreeWidget { background: palette(base); border: none; }")
        header = self.tree.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        self.chains_box = QCheckBox(translate("Panels", "Collapse linear chains"))
        self.chains_box.setObjectName("chainsBox")
        self.chains_box.setAccessibleName(translate("Panels", "Collapse linear chains"))
        self.chains_box.setToolTip(
            translate("Panels", "Draw each run of three or more one-to-one ops as one box")
        )
        self.collapse_all_button = QPushButton(translate("Panels", "Collapse all"))
        self.collapse_all_button.setAccessibleName(translate("Panels", "Collapse all modules"))
        self.collapse_all_button.setToolTip(
            translate(
                "Panels", "Collapse the top-level blocks (layers.0, layers.1, …) into one box each"
            )
        )
        self.expand_all_button = QPushButton(translate("Panels", "Expand all"))
        self.expand_all_button.setAccessibleName(translate("Panels", "Expand all modules"))
        buttons = QHBoxLayout()
        buttons.setContentsMargins(6, 4, 6, 4)
        buttons.addWidget(self.collapse_all_button)
        buttons.addWidget(self.expand_all_button)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.hint)
        layout.addLayout(buttons)
        chains_row = QHBoxLayout()
        chains_row.setContentsMargins(8, 0, 6, 4)
        chains_row.addWidget(self.chains_box)
        layout.addLayout(chains_row)
        layout.addWidget(self.tree, 1)
        self._counts: dict[str, int] = {}
        self._items: dict[str, QTreeWidgetItem] = {}
        self._collapsed: set[str] = set()
        self.tree.itemChanged.connect(self._on_tree_item_changed)
        self.tree.itemDoubleClicked.connect(self._on_tree_item_double_clicked)
        self.collapse_all_button.clicked.connect(self.collapse_all)
        self.expand_all_button.clicked.connect(self.expand_all)
        self._update_enabled()

    # --- what the window tells us -----------------------------------------------------------

    def set_modules(self, counts: Mapping[str, int], collapsed: Iterable[str]) -> None:
        """Show the module tree (path -> node count) with ``collapsed`` ticked; emits nothing."""
        counts = dict(counts)
        self._collapsed = set(collapsed) & set(counts)
        self.tree.blockSignals(True)
        if counts != self._counts:
            self._counts = counts
            self._rebuild()
        self._sync_checks()
        self.tree.blockSignals(False)
        self._update_enabled()

    # --- what a person does ----------------------------------------------------------------

    def modules(self) -> list[str]:
        return list(self._items)

    def collapsed(self) -> set[str]:
        return set(self._collapsed)

    def item(self, module: str) -> QTreeWidgetItem | None:
        return self._items.get(module)

    def set_collapsed(self, module: str, collapsed: bool) -> None:
        """Tick or untick ``module`` as a click on its box does (emits collapsed_changed)."""
        item = self._items.get(module)
        if item is None:
            return
        state = Qt.CheckState.Checked if collapsed else Qt.CheckState.Unchecked
        item.setCheckState(0, state)  # itemChanged does the rest

    def collapse_all(self) -> None:
        from gradviz.app.display import model_blocks

        # one box per layer of each model variable, as gradviz export and the library
        # give (a second module variable beside the model made it one box)
        self._collapsed = set(model_blocks(self._counts))
        self._changed()

    def expand_all(self) -> None:
        self._collapsed = set()
        self._changed()

    # --- internals -------------------------------------------------------------------------

    def _rebuild(self) -> None:
        self.tree.clear()
        self._items = {}
        for module in sorted(self._counts, key=lambda m: [_natural(p) for p in m.split(".")]):
            parent_name = module.rsplit(".", 1)[0] if "." in module else None
            parent = self._items.get(parent_name) if parent_name else None
            item = QTreeWidgetItem([module.rsplit(".", 1)[-1], str(self._counts[module])])
            item.setData(0, Qt.ItemDataRole.UserRole, module)
            item.setToolTip(0, plain_tooltip(module))
            item.setFlags(
                Qt.ItemFlag.ItemIsEnabled
                | Qt.ItemFlag.ItemIsSelectable
                | Qt.ItemFlag.ItemIsUserCheckable
            )
            item.setCheckState(0, Qt.CheckState.Unchecked)
            item.setTextAlignment(1, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            if parent is None:
                self.tree.addTopLevelItem(item)
            else:
                parent.addChild(item)
            self._items[module] = item
        # Two levels open: "layers" and its blocks, not every Linear inside.
        for module, item in self._items.items():
            if module.count(".") < 1:
                item.setExpanded(True)

    def _sync_checks(self) -> None:
        for module, item in self._items.items():
            checked = module in self._collapsed
            item.setCheckState(0, Qt.CheckState.Checked if checked else Qt.CheckState.Unchecked)
            hidden_by = next(
                (c for c in self._collapsed if module != c and module.startswith(c + ".")), None
            )
            colour = QColor(theme.HINT_TEXT if hidden_by else theme.TEXT)
            item.setForeground(0, colour)
            item.setForeground(1, colour)
            item.setToolTip(
                0,
                plain_tooltip(
                    translate("Panels", "{module} (inside collapsed {group})").format(
                        module=module, group=hidden_by
                    )
                    if hidden_by
                    else module
                ),
            )

    def _update_enabled(self) -> None:
        has = bool(self._items)
        self.collapse_all_button.setEnabled(has)
        self.expand_all_button.setEnabled(has and bool(self._collapsed))
        self.tree.setVisible(has)
        self.hint.setText(
            translate("Panels", "Tick a module (or double-click it) to collapse its nodes into one box.")
            if has
            else translate("Panels", "No modules in this graph yet. Nodes built by an nn.Module the script calls "
            "(or one recorded with gradviz.record(model)) are tagged with its name and can "
            "be collapsed here.")
        )  # fmt: skip

    def _changed(self) -> None:
        self.tree.blockSignals(True)
        self._sync_checks()
        self.tree.blockSignals(False)
        self._update_enabled()
        self.collapsed_changed.emit(sorted(self._collapsed))

    def _on_tree_item_changed(self, item: QTreeWidgetItem, column: int) -> None:
        if column != 0:
            return
        module = str(item.data(0, Qt.ItemDataRole.UserRole))
        checked = item.checkState(0) == Qt.CheckState.Checked
        if checked == (module in self._collapsed):
            return
        if checked:
            self._collapsed.add(module)
        else:
            self._collapsed.discard(module)
        self._changed()

    def _on_tree_item_double_clicked(self, item: QTreeWidgetItem, column: int) -> None:
        module = str(item.data(0, Qt.ItemDataRole.UserRole))
        self.set_collapsed(module, module not in self._collapsed)


def _search_text(attrs: Mapping[str, Any]) -> str:
    """What the window's search looks at (grouping.search): id, label, names, module, shape."""
    node = Node(attrs)
    shape = node.shape
    fields = [
        node.id,
        node.label,
        *node.vars,
        node.module or "",
        "x".join(map(str, shape)) if shape else "",
        str(list(shape)) if shape is not None else "",
    ]
    return "\n".join(fields).lower()


def _natural(part: str) -> tuple[int, int | str]:
    """Sort key so that layers.2 comes before layers.10."""
    return (0, int(part)) if part.isdigit() else (1, part)


# --- inspector ------------------------------------------------------------------------------
