"""The window's actions as one table: text, keys, tip, icon, handler, where they appear.

:data:`ACTIONS` declares every command once; :func:`build_actions` makes the
QActions (``window.act_<key>``), :func:`build_menus` and :func:`build_toolbar`
place them as :data:`MENUS` and :data:`TOOLBAR` say, and the Help › Keyboard
shortcuts table is generated from the same rows (:func:`shortcut_rows`), so a
key shown there is the key that works. Which actions are enabled is decided by
:func:`gradviz.app.commands.enabled_commands`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import (
    QComboBox,
    QLabel,
    QLineEdit,
    QMainWindow,
    QMenu,
    QSizePolicy,
    QToolBar,
    QToolButton,
    QWidget,
)

from gradviz import i18n
from gradviz.i18n import QT_TRANSLATE_NOOP

from .i18n import translate
from .icons import icon
from .text import menu_text, plain_label, plain_tooltip

__all__ = ["ACTIONS", "MENUS", "SEARCH_MIN_WIDTH", "TOOLBAR", "ActionSpec", "build_actions"]

SEARCH_MIN_WIDTH = 130


@dataclass(frozen=True)
class ActionSpec:
    """One command. ``slot`` is a path from the window (``stepper.step``); a checkable
    action's slot gets the new checked state. ``keys`` may name a standard key
    (``std:Open``). ``help`` is its row in the shortcuts table (default: its tip)."""

    key: str
    text: str
    slot: str
    keys: tuple[str, ...] = ()
    tip: str = ""
    icon: str | None = None
    icon_text: str | None = None
    checkable: bool = False
    checked: bool = False
    help: str | None = None


A = ActionSpec
ACTIONS: tuple[ActionSpec, ...] = (
    A("step", QT_TRANSLATE_NOOP("Actions", "Step over"), "stepper.step", ("F10",),
      QT_TRANSLATE_NOOP("Actions", "Run the next statement (inside a paused loop or call: the next one at this level)"),
      "step", icon_text=QT_TRANSLATE_NOOP("Actions", "Step"),
      help=QT_TRANSLATE_NOOP("Actions", "Step over (the next statement at this level)")),
    A("step_into", QT_TRANSLATE_NOOP("Actions", "Step into"), "stepper.step_into", ("F11",),
      QT_TRANSLATE_NOOP("Actions", "Stop at the next statement at any depth: loop and if bodies, script functions, a module's forward"),
      "into",
      help=QT_TRANSLATE_NOOP("Actions", "Step into (loop, if, with and try bodies; script functions, forward)")),
    A("step_out", QT_TRANSLATE_NOOP("Actions", "Step out"), "stepper.step_out", ("Shift+F11",),
      QT_TRANSLATE_NOOP("Actions", "Finish the current loop or call and stop in the code around it"), "out"),
    A("run_to_end", QT_TRANSLATE_NOOP("Actions", "Run"), "stepper.continue_run", ("F5",),
      QT_TRANSLATE_NOOP("Actions", "Run to the next breakpoint (to the end when there is none)"), "run",
      help=QT_TRANSLATE_NOOP("Actions", "Run / continue to the next breakpoint (to the end when there is none)")),
    A("run_to_backward", QT_TRANSLATE_NOOP("Actions", "Run to backward()"), "stepper.run_to_backward", ("Ctrl+F11",),
      QT_TRANSLATE_NOOP("Actions", "Run until just before the next statement that calls backward()"), "tobw"),
    A("toggle_breakpoint", QT_TRANSLATE_NOOP("Actions", "Toggle breakpoint"), "stepper.toggle_breakpoint", ("F9",),
      QT_TRANSLATE_NOOP("Actions", "Set or clear a breakpoint on the editor's cursor line"),
      help=QT_TRANSLATE_NOOP("Actions", "Toggle a breakpoint on the cursor line (or click the line number)")),
    A("run_to_cursor", QT_TRANSLATE_NOOP("Actions", "Run to cursor"), "stepper.run_to_cursor", ("Ctrl+F10",),
      QT_TRANSLATE_NOOP("Actions", "Run through the statement on the editor's cursor line"), "cursor"),
    A("step_back", QT_TRANSLATE_NOOP("Actions", "Step back"), "stepper.step_back", ("Shift+F10",),
      QT_TRANSLATE_NOOP("Actions", "Undo the last statement (replays the ones before it)"), "back",
      help=QT_TRANSLATE_NOOP("Actions", "Step back (the previous step on the timeline)")),
    A("reset", QT_TRANSLATE_NOOP("Actions", "Reset"), "stepper.reset", ("Ctrl+R", "Ctrl+Shift+F5"),
      QT_TRANSLATE_NOOP("Actions", "Back to before the first statement"), "reset"),
    A("bw_step", QT_TRANSLATE_NOOP("Actions", "Backward step"), "replay.backward_step", ("F7",),
      QT_TRANSLATE_NOOP("Actions", "Show the next engine step of the backward pass"), "bwstep"),
    A("bw_end", QT_TRANSLATE_NOOP("Actions", "Backward to end"), "replay.backward_to_end", ("Shift+F7",),
      QT_TRANSLATE_NOOP("Actions", "Show the backward pass to its last step"), "bwend"),
    A("zero_grad", QT_TRANSLATE_NOOP("Actions", "Zero grad"), "stepper.zero_grad", ("Ctrl+Shift+G",),
      QT_TRANSLATE_NOOP("Actions", "Set every leaf's .grad to zero"), "zero"),
    A("stop", QT_TRANSLATE_NOOP("Actions", "Stop"), "stepper.stop", ("Shift+F5",),
      QT_TRANSLATE_NOOP("Actions", "Stop the statement that is running or paused (its work so far is kept)"),
      "stop",
      help=QT_TRANSLATE_NOOP("Actions", "Stop (the statement ends where it stands and keeps its work; one stuck in native code is killed)")),
    A("new", QT_TRANSLATE_NOOP("Actions", "&New"), "files.new_file", ("std:New",),
      QT_TRANSLATE_NOOP("Actions", "Start an empty script")),
    A("open", QT_TRANSLATE_NOOP("Actions", "&Open…"), "files.open_file_dialog", ("std:Open",),
      QT_TRANSLATE_NOOP("Actions", "Open a script or a gradviz snapshot")),
    A("save", QT_TRANSLATE_NOOP("Actions", "&Save"), "files.save", ("std:Save",),
      QT_TRANSLATE_NOOP("Actions", "Save the script")),
    A("save_as", QT_TRANSLATE_NOOP("Actions", "Save &As…"), "files.save_as", ("Ctrl+Shift+S",),
      QT_TRANSLATE_NOOP("Actions", "Save the script as a new file")),
    A("export", QT_TRANSLATE_NOOP("Actions", "Export graph image…"), "graph_view.export_graph", (),
      QT_TRANSLATE_NOOP("Actions", "Write the graph as PNG or SVG")),
    A("quit", QT_TRANSLATE_NOOP("Actions", "&Quit"), "close", ("Ctrl+Q",),
      QT_TRANSLATE_NOOP("Actions", "Quit gradviz")),
    A("zoom_in", QT_TRANSLATE_NOOP("Actions", "Zoom in"), "canvas.zoom_in", ("Ctrl++", "Ctrl+="),
      QT_TRANSLATE_NOOP("Actions", "Zoom the graph in")),
    A("zoom_out", QT_TRANSLATE_NOOP("Actions", "Zoom out"), "canvas.zoom_out", ("Ctrl+-",),
      QT_TRANSLATE_NOOP("Actions", "Zoom the graph out")),
    A("fit", QT_TRANSLATE_NOOP("Actions", "Fit graph"), "canvas.fit_to_view", ("Ctrl+0",),
      QT_TRANSLATE_NOOP("Actions", "Show the graph at a readable zoom (all of it when it fits)")),
    A("fit_whole", QT_TRANSLATE_NOOP("Actions", "Show whole graph"), "canvas.fit_whole", ("Ctrl+Shift+0",),
      QT_TRANSLATE_NOOP("Actions", "Zoom out until the whole graph is in view, however small")),
    A("find", QT_TRANSLATE_NOOP("Actions", "Find node…"), "graph_view.focus_search", ("Ctrl+F",),
      QT_TRANSLATE_NOOP("Actions", "Find a node by name, op, shape or module")),
    A("chains", QT_TRANSLATE_NOOP("Actions", "Collapse linear chains"), "graph_view._on_chains_toggled", (),
      QT_TRANSLATE_NOOP("Actions", "Draw each run of three or more one-to-one ops as one box"), checkable=True),
    A("collapse_all", QT_TRANSLATE_NOOP("Actions", "Collapse all modules"), "modules_panel.collapse_all", (),
      QT_TRANSLATE_NOOP("Actions", "Draw every top-level module as one box")),
    A("expand_all", QT_TRANSLATE_NOOP("Actions", "Expand all"), "graph_view.expand_all", (),
      QT_TRANSLATE_NOOP("Actions", "Show every node again")),
    A("legend", QT_TRANSLATE_NOOP("Actions", "Show legend"), "canvas.set_legend_visible", (),
      QT_TRANSLATE_NOOP("Actions", "What the node colours and shapes mean"), checkable=True, checked=True),
    A("reset_layout", QT_TRANSLATE_NOOP("Actions", "Reset panel layout"), "reset_layout", (),
      QT_TRANSLATE_NOOP("Actions", "Put every panel back where it started")),
    A("shortcuts", QT_TRANSLATE_NOOP("Actions", "Keyboard shortcuts"), "show_shortcuts", ("F1",),
      QT_TRANSLATE_NOOP("Actions", "List every shortcut")),
    A("about", QT_TRANSLATE_NOOP("Actions", "About gradviz"), "show_about", (),
      QT_TRANSLATE_NOOP("Actions", "What gradviz is")),
)  # fmt: skip
del A

#: menu title -> action keys; "-" is a separator, "@name" a submenu the window fills
MENUS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (QT_TRANSLATE_NOOP("Actions", "&File"), ("new", "open", "@recent", "save", "save_as", "-", "export", "-", "quit")),
    (QT_TRANSLATE_NOOP("Actions", "&Run"), ("step", "step_into", "step_out", "run_to_end", "run_to_backward", "run_to_cursor",
              "step_back", "reset", "toggle_breakpoint", "-", "bw_step", "bw_end", "zero_grad",
              "-", "stop", "@device")),
    (QT_TRANSLATE_NOOP("Actions", "&Demos"), ("@demos",)),
    (QT_TRANSLATE_NOOP("Actions", "&View"), ("zoom_in", "zoom_out", "fit", "fit_whole", "find", "legend", "-", "chains", "collapse_all",
               "expand_all", "-", "@docks", "reset_layout", "-", "@language")),
    (QT_TRANSLATE_NOOP("Actions", "&Help"), ("shortcuts", "about")),
)  # fmt: skip

#: the toolbar, left to right: "!key" is an icon-only button, "@device" and "@search" widgets
TOOLBAR: tuple[str, ...] = (
    "@device", "-", "step", "!step_into", "!step_out", "run_to_end", "!run_to_backward",
    "!run_to_cursor", "step_back", "reset", "-", "bw_step", "bw_end", "zero_grad", "-", "stop",
    "@spacer", "@search",
)  # fmt: skip

#: shortcuts that are not actions (the search box's own keys)
EXTRA_SHORTCUTS = (
    (QT_TRANSLATE_NOOP("Actions", "Next / previous search hit (in the search box)"),
     "Enter / Shift+Enter"),
)  # fmt: skip


def _resolve(window: Any, path: str) -> Callable[..., Any]:
    target = window
    for part in path.split("."):
        target = getattr(target, part)
    return target


def _keys(spec: ActionSpec) -> list[QKeySequence]:
    out = []
    for k in spec.keys:
        if k.startswith("std:"):
            out.extend(QKeySequence.keyBindings(getattr(QKeySequence.StandardKey, k[4:]))[:1])
        else:
            out.append(QKeySequence(k))
    return out


def build_actions(window: QMainWindow) -> dict[str, QAction]:
    """Make every action of :data:`ACTIONS` as ``window.act_<key>``; returns them by key."""
    actions: dict[str, QAction] = {}
    for spec in ACTIONS:
        action = QAction(translate("Actions", spec.text), window)
        action.setObjectName(f"act_{spec.key}")
        keys = _keys(spec)
        if keys:
            action.setShortcuts(keys)
            action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        if spec.tip:
            tip = translate("Actions", spec.tip)
            shown = action.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
            action.setToolTip(f"{tip} ({shown})" if shown else tip)
            action.setStatusTip(tip)
        if spec.icon:
            action.setIcon(icon(spec.icon))
        if spec.icon_text:
            action.setIconText(translate("Actions", spec.icon_text))
        if spec.checkable:
            action.setCheckable(True)
            action.setChecked(spec.checked)
            action.toggled.connect(lambda on, p=spec.slot: _resolve(window, p)(on))
        else:
            action.triggered.connect(lambda *_, p=spec.slot: _resolve(window, p)())
        window.addAction(action)
        setattr(window, f"act_{spec.key}", action)
        actions[spec.key] = action
    return actions


def shortcut_rows(actions: dict[str, QAction]) -> list[tuple[str, str]]:
    """The shortcuts table: every action with keys, in table order, with its keys as shown."""
    rows = []
    for spec in ACTIONS:
        if not spec.keys:
            continue
        keys = " / ".join(
            s.toString(QKeySequence.SequenceFormat.NativeText)
            for s in actions[spec.key].shortcuts()
        )
        rows.append((translate("Actions", spec.help or spec.tip), keys))
    return rows + [(translate("Actions", text), keys) for text, keys in EXTRA_SHORTCUTS]


def build_menus(window: Any, actions: dict[str, QAction]) -> None:
    """The menu bar as :data:`MENUS` says; fills the device, demos, recent and docks submenus."""
    bar = window.menuBar()
    for title, keys in MENUS:
        menu = bar.addMenu(translate("Actions", title))
        menu.setObjectName(f"menu{title.strip('&')}")
        for key in keys:
            if key == "-":
                menu.addSeparator()
            elif key == "@recent":
                window.recent_menu = menu.addMenu(translate("Actions", "Open &recent"))
            elif key == "@device":
                _device_menu(window, menu.addMenu(translate("Actions", "Device")))
            elif key == "@demos":
                window.demos_menu = menu
                _demos_menu(window, menu)
            elif key == "@docks":
                for dock in window.docks:
                    menu.addAction(dock.toggleViewAction())
            elif key == "@language":
                _language_menu(window, menu.addMenu(translate("Actions", "&Language")))
            else:
                menu.addAction(actions[key])


def _device_menu(window: Any, menu: QMenu) -> None:
    window.device_actions = QActionGroup(window)
    for name in ("cpu", "cuda"):
        act = QAction(name, window, checkable=True)
        act.setChecked(name == "cpu")
        act.triggered.connect(lambda _=False, n=name: window.stepper.set_device(n))
        window.device_actions.addAction(act)
        menu.addAction(act)


def _language_menu(window: Any, menu: QMenu) -> None:
    """View › Language: follow the system, or one of gradviz's languages (each in its own
    name); the choice is saved and applies to the next window opened."""
    window.language_actions = QActionGroup(window)
    window.language_actions.setExclusive(True)
    choices = [("", translate("Actions", "System language"))] + list(i18n.LANGUAGES.items())
    for code, name in choices:
        act = QAction(name, window, checkable=True)
        act.setData(code)
        act.triggered.connect(lambda _=False, c=code: window.choose_language(c))
        window.language_actions.addAction(act)
        menu.addAction(act)
    window.language_menu = menu


def _demos_menu(window: Any, menu: QMenu) -> None:
    window.demo_actions = {}
    for number, demo in enumerate(window.files.demos, start=1):
        title, about = i18n.translate("Demos", demo.title), i18n.translate("Demos", demo.about)
        act = QAction(menu_text(f"{number}. {title}"), window)
        act.setToolTip(plain_tooltip(about))
        act.setStatusTip(about)
        act.setData(demo.name)
        act.triggered.connect(lambda _=False, d=demo: window.files.load_demo(d))
        menu.addAction(act)
        window.demo_actions[demo.name] = act
    if window.files.demos_missing:
        missing = menu.addAction(translate("Actions", "(no demos found)"))
        missing.setEnabled(False)
        missing.setStatusTip(window.files.demos_missing)
    menu.setToolTipsVisible(True)


def build_toolbar(window: Any, actions: dict[str, QAction]) -> QToolBar:
    """The debug toolbar as :data:`TOOLBAR` says, with the device box and the search box."""
    tb = QToolBar(translate("Actions", "Debug"))
    tb.setObjectName("debugToolbar")
    tb.setAccessibleName(translate("Actions", "Debug toolbar"))
    tb.setMovable(False)
    tb.setIconSize(QSize(20, 20))
    tb.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
    window.addToolBar(Qt.ToolBarArea.TopToolBarArea, tb)
    window.toolbar = tb
    #: actions drawn as icon-only buttons -> their button
    window.icon_buttons = {}
    for key in TOOLBAR:
        if key == "-":
            tb.addSeparator()
        elif key == "@device":
            tb.addWidget(QLabel(translate("Actions", "Device")))
            combo = QComboBox()
            combo.setObjectName("deviceCombo")
            combo.setAccessibleName(translate("Actions", "Device"))
            combo.addItems(["cpu", "cuda"])
            combo.setToolTip(
                translate("Actions", "Where tensors made with device=dev live (dev is this choice)")
            )
            combo.setMinimumWidth(80)
            combo.currentTextChanged.connect(lambda text: window.stepper.set_device(text))
            tb.addWidget(combo)
            window.device_combo = combo
            # the mode beside the device: how the script in the editor runs
            badge = QLabel()
            badge.setObjectName("modeBadge")
            badge.setAccessibleName(translate("Actions", "Mode"))
            badge.setContentsMargins(8, 0, 4, 0)
            tb.addWidget(badge)
            window.mode_badge = badge
        elif key == "@spacer":
            spacer = QWidget()
            spacer.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
            tb.addWidget(spacer)
        elif key == "@search":
            _search_box(window, tb)
        elif key.startswith("!"):
            action = actions[key[1:]]
            button = QToolButton(tb)
            button.setDefaultAction(action)
            button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonIconOnly)
            button.setAutoRaise(True)
            button.setIconSize(tb.iconSize())
            # named in English whatever the language (tests and scripts find it by name)
            spec = next(s for s in ACTIONS if s.key == key[1:])
            english = (spec.icon_text or spec.text).replace("&", "").replace("…", "")
            button.setObjectName(f"{english.replace(' ', '')}Button")
            button.setAccessibleName(action.text())
            tb.addWidget(button)
            window.icon_buttons[action] = button
        else:
            tb.addAction(actions[key])
    window.toolbar_text_width = tb.sizeHint().width()  # the search hits' room included
    window.search_label_action.setVisible(False)
    return tb


def _search_box(window: Any, tb: QToolBar) -> None:
    box = QLineEdit()
    box.setObjectName("searchBox")
    box.setAccessibleName(translate("Actions", "Find node"))
    box.setPlaceholderText(translate("Actions", "Find node  (Ctrl+F)"))
    box.setClearButtonEnabled(True)
    box.setMinimumWidth(SEARCH_MIN_WIDTH)
    box.setMaximumWidth(360)
    box.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
    box.setToolTip(
        translate(
            "Actions",
            "Search the graph by name, op, shape or module; Enter jumps to the next hit,"
            " Shift+Enter to the previous",
        )
    )
    tb.addWidget(box)
    label = plain_label(QLabel(""))
    label.setObjectName("searchHits")
    label.setAccessibleName(translate("Actions", "Search hits"))
    label.setFixedWidth(72)
    window.search_box = box
    window.search_label = label
    #: shown while the box holds a search (GraphView); hidden, its room takes the mode
    #: badge, so the toolbar keeps its texts beside the badge
    window.search_label_action = tb.addWidget(label)


def fit_toolbar(window: Any, width: int) -> None:
    """Text beside icons when there is room, else icons only, so the search box stays.

    The room left over goes to the search box first (names like
    layers.1.self_attn.in_proj_weight are long), then to the spacer before it.
    """
    wide = width >= window.toolbar_text_width
    style = (
        Qt.ToolButtonStyle.ToolButtonTextBesideIcon
        if wide
        else Qt.ToolButtonStyle.ToolButtonIconOnly
    )
    spare = max(0, width - window.toolbar_text_width - 12) if wide else 0
    minimum = min(360, SEARCH_MIN_WIDTH + spare)
    if window.search_box.minimumWidth() != minimum:
        window.search_box.setMinimumWidth(minimum)
        window.toolbar.layout().invalidate()  # before the toolbar is laid out for this size
    if window.toolbar.toolButtonStyle() != style:
        window.toolbar.setToolButtonStyle(style)
