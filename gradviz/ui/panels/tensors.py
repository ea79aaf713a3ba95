"""The Tensors panel: one row per script variable holding a tensor."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from PySide6.QtCore import QEvent
from PySide6.QtGui import QColor, QResizeEvent, QShowEvent
from PySide6.QtWidgets import QHeaderView, QTableWidgetItem, QVBoxLayout, QWidget

from ...app.models import AppState, TensorInfo
from ...graph.fmt import fmt_shape, fmt_value
from ...i18n import QT_TRANSLATE_NOOP
from .. import theme
from ..i18n import translate
from ..text import plain_tooltip
from ._common import CHANGED, LOCAL_TEXT, _FittedTable, _hint, _item, _table, content_width, share

#: what the learner reads first (value, grad, shape) comes first; the less used after
TENSOR_COLUMNS = (
    "name",
    "value",
    "grad",
    "shape",
    "grad_fn",
    "requires_grad",
    "is_leaf",
    "retains_grad",
    "dtype",
    "device",
    "version",
    "storage",
)

#: the column headers a learner reads in their language (PyTorch's own attribute
#: names, requires_grad, is_leaf, grad_fn, dtype…, stay as PyTorch spells them)
_HEADER_WORDS = (
    QT_TRANSLATE_NOOP("Panels", "name"),
    QT_TRANSLATE_NOOP("Panels", "value"),
    QT_TRANSLATE_NOOP("Panels", "shape"),
    QT_TRANSLATE_NOOP("Panels", "version"),
    QT_TRANSLATE_NOOP("Panels", "storage"),
    QT_TRANSLATE_NOOP("Panels", "leaf"),
    QT_TRANSLATE_NOOP("Panels", "after"),
    QT_TRANSLATE_NOOP("Panels", "line"),
    QT_TRANSLATE_NOOP("Panels", "module"),
    QT_TRANSLATE_NOOP("Panels", "nodes"),
)

#: widest a fitted column gets before its text is elided (the tooltip has it whole)
TENSOR_CAPS = {"name": 220, "shape": 110, "grad_fn": 170, "storage": 200}
OTHER_CAP = 150


class _Cell(NamedTuple):
    """What one cell shows: its text, tooltip and marks (equal cells: nothing to set)."""

    text: str
    tip: str | None
    #: the name column (bold); ``frame``: the paused frame it is a local of
    name: bool
    frame: str | None
    #: tinted: it changed since the last state
    changed: bool
    #: the storage group it shares with another tensor (coloured)
    storage: str | None


class TensorsPanel(QWidget):
    """One row per script variable holding a tensor; leaves first; changes in yellow."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setAccessibleName(translate("Panels", "Tensors"))
        self.table = _table(TENSOR_COLUMNS, translate("Panels", "Tensors table"))
        self.table.setObjectName("tensorsTable")
        self.table.setAccessibleDescription(
            translate(
                "Panels",
                "One row per variable holding a tensor: value, .grad, shape, grad_fn and flags",
            )
        )
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        self._needs = {}
        self._widest: dict[int, int] = {}
        self._fitter = _FittedTable(self.table, self._fit_columns)
        self._previous: Mapping[str, TensorInfo] = {}
        self._rows: dict[str, int] = {}
        self._changed: set[tuple[str, str]] = set()
        self.hint = _hint(
            translate("Panels", "No tensors yet: step (F10) through a script to create some."),
            translate("Panels", "Tensors hint"),
        )
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.hint)
        layout.addWidget(self.table)

    def set_state(self, state: AppState | Mapping[str, Any] | None) -> None:
        st = AppState.of(state)
        tensors = st.tensors
        order = list(tensors)
        position = {n: i for i, n in enumerate(order)}
        # a paused statement's frame: its locals (``Net.forward.x``) come first, marked
        frame_locals = list(st.frame_locals)
        self._locals = {
            n for n in order if any(n == f or n.startswith(f + ".") for f in frame_locals)
        }
        # the frame's own names (x, h) before paths through them (self.fc1.weight)
        names = sorted(
            order,
            key=lambda n: (
                n not in self._locals,
                n.count(".") if n in self._locals else 0,
                not tensors[n].is_leaf,
                position[n],
            ),
        )
        groups: dict[str, list[str]] = {}
        for name in names:
            group = tensors[name].storage
            if group:
                groups.setdefault(group, []).append(name)
        self._changed = set()
        self._rows = {}
        cells: list[tuple[_Cell, ...]] = []
        texts_of: dict[str, tuple[TensorInfo, tuple[str, ...], dict[str, tuple[str, str]]]] = {}
        for row, name in enumerate(names):
            info = tensors[name]
            before = self._previous.get(name)
            self._rows[name] = row
            sharing = tuple(groups.get(info.storage or "", ())) if info.storage else ()
            # a tensor the step left alone (the delta-decoded state shares its
            # TensorInfo) keeps its texts: formatting values is most of a rebuild
            known = self._texts_of.get(name)
            if known is not None and known[1] == sharing and (
                known[0] is info or known[0] == info
            ):
                texts = known[2]
            else:
                texts = self._texts(info, groups)
            texts_of[name] = (info, sharing, texts)
            frame = (
                next(f for f in frame_locals if name == f or name.startswith(f + "."))
                if name in self._locals else None
            )
            row_cells: list[_Cell] = []
            for key in TENSOR_COLUMNS:
                text, tip = texts[key]
                changed = before is None or (
                    before is not info and self._cell_changed(key, before, info)
                )
                if changed and self._has_previous:
                    self._changed.add((name, key))
                shared = key == "storage" and len(groups.get(info.storage or "", [])) > 1
                row_cells.append(_Cell(
                    text, tip or (text if len(text) > 30 else None),
                    name=key == "name", frame=frame,
                    changed=changed and self._has_previous,
                    storage=info.storage or "" if shared else None,
                ))  # fmt: skip
            cells.append(tuple(row_cells))
        self._texts_of = texts_of
        # a rebuild waits to be drawn whole; a few changed cells are each redrawn (turning
        # updates back on would redraw the whole table)
        rebuild = self.table.rowCount() != len(names)
        if rebuild:
            self.table.setUpdatesEnabled(False)
            self.table.setRowCount(len(names))
            self._needs = {}
        shown = self._cells
        texts_changed = len(cells) != len(shown)
        for row, new_cells in enumerate(cells):
            was: tuple[_Cell, ...] = shown[row] if row < len(shown) else ()
            for col, cell in enumerate(new_cells):
                # a cell whose text and marks are what it shows keeps its item
                if col < len(was) and was[col] == cell and self.table.item(row, col) is not None:
                    continue
                texts_changed = texts_changed or col >= len(was) or was[col].text != cell.text
                self.table.setItem(row, col, self._cell_item(cell))
                self._needs.pop(col, None)
        self._cells = cells
        if rebuild:
            self.table.setUpdatesEnabled(True)
        if names and not set(names) & set(self._sized_for):
            # another script's tensors: start at the name column (a scroll to the right
            # kept from the last script hid it)
            self.table.horizontalScrollBar().setValue(0)
        if names != self._sized_for:
            self._widest = {}  # other rows: columns fit their texts afresh
        if names and (texts_changed or names != self._sized_for):
            # refit when rows come or go or a value grows (a user's own widths survive
            # value changes until the rows change); the same texts fit as they did
            self._fitter.refit(rows_changed=names != self._sized_for)
            self._sized_for = list(names)
        if not names:
            self._sized_for = []
        self.hint.setVisible(not names)
        self._previous = tensors
        self._has_previous = True

    _has_previous = False
    _sized_for: list[str] = []
    #: each column's content_width while none of its cells was set since (__init__)
    _needs: dict[int, int]
    #: what each cell shows (row by row), so a step sets only the cells that changed
    _cells: list[tuple[_Cell, ...]] = []
    #: each tensor's texts and the TensorInfo (and storage sharers) they were made from
    _texts_of: dict[str, tuple[TensorInfo, tuple[str, ...], dict[str, tuple[str, str]]]] = {}

    @staticmethod
    def _cell_item(cell: _Cell) -> QTableWidgetItem:
        item = _item(cell.text, cell.tip)
        if cell.name:
            font = item.font()
            font.setBold(True)
            item.setFont(font)
            if cell.frame is not None:
                # the table's style sheet paints cell backgrounds itself: mark by text
                item.setForeground(QColor(LOCAL_TEXT))
                font.setItalic(True)
                item.setFont(font)
                item.setToolTip(plain_tooltip(
                    translate(
                        "Panels",
                        "{name}: a local variable of the paused frame ({frame}), "
                        "listed before the script's globals",
                    ).format(name=cell.text, frame=cell.frame.rsplit(".", 1)[0])
                ))  # fmt: skip
        if cell.changed:
            item.setBackground(QColor(CHANGED))
        if cell.storage is not None:
            item.setForeground(QColor(theme.storage_colour(cell.storage)))
            font = item.font()
            font.setBold(True)
            item.setFont(font)
        return item

    def _fit_columns(self) -> None:
        """Name, value, grad and shape in the viewport's width when they can be: value and
        grad share what name and shape leave; the rest take their content's width."""
        table = self.table
        col = {key: i for i, key in enumerate(TENSOR_COLUMNS)}
        need = {key: self._column_need(i) for key, i in col.items()}
        widths = {
            key: min(need[key], TENSOR_CAPS.get(key, OTHER_CAP)) for key in TENSOR_COLUMNS
        }
        room = table.viewport().width() - widths["name"] - widths["shape"]
        widths["value"], widths["grad"] = share(
            [need["value"], need["grad"]], max(room, 0), floor=90
        )
        for key, width in widths.items():
            table.setColumnWidth(col[key], width)

    def _column_need(self, col: int) -> int:
        """content_width of column ``col``, measured again only after one of its cells
        was set (shaping text is the most of a refit; a step changes a few columns)."""
        need = self._needs.get(col)
        if need is None:
            need = self._needs[col] = content_width(self.table, col)
        # While the rows stay, a column never asks for less than it had: a loop's
        # .grad comes (backward) and goes (zero_grad) every few steps, and value and
        # grad traded their room each time (the columns jumped, and the whole table and
        # its scroll bar were drawn again, 2-3 ms of a lesson step)
        widest = self._widest.get(col, 0)
        if need > widest:
            self._widest[col] = need
        return max(need, widest)

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt override
        if event.type() in (QEvent.Type.FontChange, QEvent.Type.StyleChange):
            self._needs = {}  # the texts measure differently now
            self._widest = {}
        super().changeEvent(event)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        self._fitter.refit()

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt override
        super().showEvent(event)
        self._fitter.refit()

    def reset_changes(self) -> None:
        """Forget the previous state (after a load): nothing is highlighted next time."""
        self._previous = {}
        self._has_previous = False

    @staticmethod
    def _cell_changed(key: str, before: TensorInfo, after: TensorInfo) -> bool:
        if key == "name":
            return False
        return getattr(before, key) != getattr(after, key)

    @staticmethod
    def _texts(info: TensorInfo, groups: dict[str, list[str]]) -> dict[str, tuple[str, str]]:
        name = info.name
        group = info.storage or ""
        sharing = [n for n in groups.get(group, []) if n != name]
        storage = group
        tip = ""
        if sharing:
            storage = f"{group} ⇄ {', '.join(sharing)}"
            tip = translate(
                "Panels", "{name} shares memory with {others}: writing one changes the other"
            ).format(name=name, others=", ".join(sharing))
        value, value_tip = _value_texts(info.value, name)
        grad, grad_tip = _value_texts(info.grad, f"{name}.grad")
        return {
            "name": (name, ""),
            "shape": (fmt_shape(info.shape), f"shape {list(info.shape or ())}"),
            "dtype": (info.dtype, ""),
            "device": (info.device, ""),
            "requires_grad": (str(info.requires_grad), ""),
            "is_leaf": (str(info.is_leaf), ""),
            "retains_grad": (str(info.retains_grad), ""),
            "grad_fn": (info.grad_fn or "None", ""),
            "grad": (grad, grad_tip),
            "version": (
                "—" if info.version is None else str(info.version),
                translate(
                    "Panels", "t._version: in-place writes bump it (inference tensors keep none)"
                ),
            ),
            "storage": (storage, tip),
            "value": (value, value_tip),
        }

    # test and inspector helpers
    def names(self) -> list[str]:
        return sorted(self._rows, key=self._rows.__getitem__)

    def is_local(self, name: str) -> bool:
        """True for a local of the paused frame (listed first, tinted blue)."""
        return name in self._locals

    _locals: set[str] = set()

    def cell(self, name: str, column: str) -> str:
        item = self.item(name, column)
        return item.text() if item else ""

    def item(self, name: str, column: str) -> QTableWidgetItem | None:
        return self.table.item(self._rows[name], TENSOR_COLUMNS.index(column))

    def is_highlighted(self, name: str, column: str) -> bool:
        return (name, column) in self._changed


def _value_texts(value: Any, name: str) -> tuple[str, str]:
    """A value's cell text (up to 200 characters) and its tooltip: the whole value (up to
    2,000), unless the cell is short."""
    whole = fmt_value(value, 2000)
    shown = whole if len(whole) <= 200 else fmt_value(value, 200)
    if value is None or len(whole) <= 12:
        return shown, ""
    return shown, f"{name} = {whole}"


# --- a small plot -------------------------------------------------------------------------
