"""The window's files: new, open, save, recent files, demos, autosave, snapshots.

What a file on disk is, the recent list and whether an autosave is worth
offering are decided in :mod:`gradviz.app.files`; :class:`Files` asks the
user (dialogs), puts the text in the editor and tells the kernel. What the
editor holds (a path, a demo, or a read-only snapshot) is the window's
:class:`~gradviz.app.files.Document`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QTimer
from PySide6.QtWidgets import QFileDialog, QMessageBox

from gradviz.app.autosave import Autosave, find_orphans
from gradviz.app.demos import Demo, DemosMissing, list_demos
from gradviz.app.files import (
    APP_NAME,
    Document,
    RecentFiles,
    read_path,
    refuse_to_overwrite,
    restore_plan,
    write_text_atomically,
)
from gradviz.app.guide import statements_before_backward
from gradviz.app.snapshot import SnapshotError, parse_snapshot, snapshot_state
from gradviz.graph.gcpause import paused_gc

from . import dialogs
from .i18n import translate
from .text import add_menu_action, plain_tooltip, title_text

FIRST_DEMO = "first_backward"
AUTOSAVE_INTERVAL_MS = 3000


def _to_bool(value: Any) -> bool:
    if isinstance(value, str):
        return value.lower() in ("1", "true", "yes")
    return bool(value)


class Files(QObject):
    """Everything that replaces or saves the editor's text."""

    def __init__(self, window: Any, data_dir: Path, autosave_interval_ms: int):
        super().__init__(window)
        self.w = window
        self.doc: Document = window.doc
        self.recent = RecentFiles(window.settings)
        self.autosave = Autosave(data_dir)
        self.data_dir = data_dir
        self._last_autosave_text: str | None = None
        try:
            self.demos = list_demos()
            self.demos_missing: str | None = None
        except DemosMissing as exc:  # a broken install: the window still opens
            self.demos = []
            self.demos_missing = str(exc)
        self.autosave_timer = QTimer(self)
        self.autosave_timer.setInterval(autosave_interval_ms)
        self.autosave_timer.timeout.connect(self.autosave_now)
        self.autosave_timer.start()

    # --- the first screen ---------------------------------------------------------------

    def open_initial(
        self,
        file: str | None = None,
        demo: str | None = None,
        snapshot: dict[str, Any] | None = None,
    ) -> None:
        """What the first screen shows: the given snapshot/file/demo, else the last script/a demo.

        ``snapshot`` (from ``gradviz.show()``) opens read-only.
        """
        w = self.w
        if snapshot is not None:
            try:
                parse_snapshot(snapshot, "the snapshot")
            except SnapshotError as exc:
                dialogs.show_error(w, translate("Files", "Cannot show the snapshot"), str(exc))
            else:
                self.open_snapshot(snapshot, "gradviz.show()")
                return
        if self.offer_autosave():
            return
        if file and self.open_path(Path(file), ask=False):
            return
        if demo:
            found = self.find_demo(demo)
            if found is not None:
                self.load_demo(found, ask=False)
                return
            known = ", ".join(d.name for d in self.demos)
            w.output_panel.add_note(
                translate("Files", "No demo named '{demo}'; the demos are: {known}").format(
                    demo=demo, known=known
                )
            )
        last = str(w.settings.value("file/last", "") or "")
        last_demo = str(w.settings.value("file/last_demo", "") or "")
        launched = _to_bool(w.settings.value("launched"))
        if last and Path(last).is_file() and self.open_path(Path(last), ask=False):
            return
        if last_demo or not launched:
            found = self.find_demo(last_demo or FIRST_DEMO) or self.find_demo(FIRST_DEMO)
            if found is not None:
                # The very first screen should teach: run the lesson up to its first
                # backward(), so the graph is already drawn and the guide says what's next.
                run_to = None if launched else statements_before_backward(found.source)
                self.load_demo(found, ask=False, run_to=run_to)
                return
        self.set_text("", None, None)
        w.apply_trust(w.trust.decide(None))
        w.stepper.load_into_kernel()

    def find_demo(self, name: str) -> Demo | None:
        for d in self.demos:
            if name in (d.name, d.path.stem, d.path.name):
                return d
        return None

    # --- replacing the text -------------------------------------------------------------

    def maybe_save(self) -> bool:
        """True when it is fine to drop the editor's text (saved, discarded or unchanged)."""
        if not self.w.editor.document().isModified():
            return True
        answer = dialogs.ask_unsaved_changes(self.w, self.doc.name())
        if answer == QMessageBox.StandardButton.Save:
            return self.save()
        return answer == QMessageBox.StandardButton.Discard

    def new_file(self) -> None:
        if not self.maybe_save():
            return
        self.remove_autosave()
        self.set_text("", None, None)
        self.w.apply_trust(self.w.trust.decide(None))  # written here: the user's own
        self.w.stepper.load_into_kernel(None, status=translate("Files", "New script"))
        self.w.editor.setFocus()

    def load_demo(self, demo: Demo, ask: bool = True, run_to: int | None = None) -> None:
        """Put a demo's text in the editor and reset (or run its first ``run_to`` statements:
        the very first screen runs a lesson up to its first backward())."""
        if ask and not self.maybe_save():
            return
        self.remove_autosave()
        self.set_text(demo.source, None, demo)
        self.w.apply_trust(self.w.trust.decide(None, demo=True))  # demos are trusted
        if run_to:
            said = (
                translate(
                    "Files",
                    "Demo '{title}': ran its first {n} statements, up to its first "
                    "backward(); Step (F10) runs that one",
                ).format(title=translate("Demos", demo.title), n=run_to)
            )
        else:
            said = translate(
                "Files", "Demo '{title}' loaded: press Step (F10) to run it statement by statement"
            ).format(title=translate("Demos", demo.title))
        self.w.stepper.load_into_kernel(run_to, status=said)
        self.w.set_status(said)

    def open_file_dialog(self) -> None:
        if not self.maybe_save():
            return
        where = self.doc.path or self.doc.snapshot_path
        start = str(where.parent) if where else str(Path.home())
        path, _ = QFileDialog.getOpenFileName(
            self.w,
            translate("Files", "Open script or snapshot"),
            start,
            translate(
                "Files",
                "Scripts and snapshots (*.py *.json);;Python scripts (*.py);;"
                "gradviz snapshots (*.gradviz.json *.json);;All files (*)",
            ),
        )
        if path:
            self.open_path(Path(path), ask=False)

    def open_path(self, path: Path, ask: bool = True) -> bool:
        """Open a script, the statements a report saved, or a snapshot (read-only)."""
        if ask and not self.maybe_save():
            return False
        opened = read_path(path)
        if opened.kind == "refused":
            if opened.unreadable:
                self.w.set_status(opened.message)
                self.recent.forget(path)
                self.update_recent_menu()
                return False
            # what the window shows stays as it was
            self.w.set_status(opened.message)
            dialogs.show_error(
                self.w,
                translate("Files", "Cannot open file"),
                f"{opened.message}\n\n" + translate("Files", "Nothing was changed."),
            )
            return False
        self.remove_autosave()
        if opened.kind == "snapshot":
            assert opened.data is not None
            self.open_snapshot(opened.data, path.name, path.resolve())
            self.add_recent(path.resolve())
            return True
        # a file from disk runs as Python only when its folder is trusted; else in
        # restricted mode, and the banner asks (nothing runs as Python before that)
        decision = self.w.trust.decide(path)
        if opened.kind == "statements":
            self.set_text(opened.text, None, None)
            self.w.apply_trust(decision, None)
            self.w.editor.document().setModified(True)
            self.update_title()
            self.w.stepper.load_into_kernel(None)
            self.w.set_status(
                translate("Files", "Opened the statements saved in {name}: step to re-run them")
                .format(name=path.name)
            )  # fmt: skip
            return True
        self.set_text(opened.text, path.resolve(), None)
        self.w.apply_trust(decision, path.resolve())
        self.add_recent(path.resolve())
        self.w.stepper.load_into_kernel(
            None, status=translate("Files", "Opened {name}").format(name=path.name)
        )
        self.w.set_status(
            (
                translate("Files", "Opened {path}: press Step (F10) to run it as Python")
                if decision.trusted
                else translate("Files", "Opened {path}: press Step (F10) to run it in restricted mode")
            ).format(path=path)
        )
        return True

    def set_text(self, text: str, path: Path | None, demo: Demo | None) -> None:
        """Put ``text`` in the editor as a fresh document: nothing run, no marks."""
        w = self.w
        if self.doc.read_only:
            w.leave_read_only()
        self.doc.path = path
        self.doc.demo = demo
        editor = w.editor
        editor.blockSignals(True)
        editor.setPlainText(text)
        editor.blockSignals(False)
        editor.document().setModified(False)
        editor.set_statement_marks(None)
        editor.clear_error()
        editor.set_notes(demo.notes if demo else {})
        editor.set_breakpoints([])
        editor.set_paused_line(None)
        w.replay.reset()
        w.output_panel.clear_notes()
        w.tensors_panel.reset_changes()
        w.stepper.forget_history()
        self._last_autosave_text = None
        self.update_title()

    # --- read-only snapshots --------------------------------------------------------------

    def open_snapshot(self, data: dict[str, Any], name: str, path: Path | None = None) -> None:
        """Show a snapshot with no statements read-only: all panels, F7 replays its passes."""
        with paused_gc():  # its state and the panels' rows: bulk work, nothing cyclic
            self._open_snapshot(data, name, path)

    def _open_snapshot(self, data: dict[str, Any], name: str, path: Path | None) -> None:
        w = self.w
        state = snapshot_state(data)
        w.stepper.forget_history()
        self.doc.open_snapshot(name, path)
        w.replay.reset()
        w.editor.set_paused_line(None)
        w.graph_view.forget()
        w.canvas.clear()
        w.output_panel.clear_notes()
        w.tensors_panel.reset_changes()
        nodes = len(state["graph"]["nodes"])
        passes = len(state["backward_passes"])
        what = _counts(nodes, passes)
        w.editor.blockSignals(True)
        w.editor.setPlainText(
            translate(
                "Files",
                "# Read-only snapshot: {name}\n"
                "# saved by gradviz (source: {source}) with no script to step.\n"
                "# {what} · device {device}\n"
                "#\n"
                "# F7 / Shift+F7 replay the recorded backward pass on the graph.\n"
                "# Collapse modules in the Modules panel; Ctrl+F finds a node.\n"
                "# Open a script (Ctrl+O) or a demo to step forward again.\n",
            ).format(
                name=name, source=state.get("source", "api"), what=what, device=state["device"]
            )
        )
        w.editor.blockSignals(False)
        w.editor.setReadOnly(True)
        w.editor.document().setModified(False)
        sizes = w.splitter.sizes()
        if len(sizes) == 2 and sum(sizes) > 0 and sizes[0] > 0.3 * sum(sizes):
            # Nothing to edit: the graph gets the room (given back when a script opens)
            total = sum(sizes)
            if w.editor_share_before_snapshot is None:
                w.editor_share_before_snapshot = sizes[0] / total
            w.splitter.setSizes([int(total * 0.24), total - int(total * 0.24)])
        w.editor.set_statement_marks(None)
        w.editor.clear_error()
        w.editor.set_notes({})
        w.apply_state(state)
        w.output_panel.add_note(
            translate(
                "Files", "Opened the snapshot {name}: {what}, device {device} (read-only)"
            ).format(name=name, what=_counts(nodes, passes, ", "), device=state["device"])
        )
        self.update_title()
        if w.replay.available():
            w.set_status(
                translate(
                    "Files", "Read-only snapshot {name}: press F7 to replay its backward pass"
                ).format(name=name)
            )
        else:
            w.set_status(translate("Files", "Read-only snapshot {name}").format(name=name))
        if w.modules_panel.modules():
            w.modules_dock.raise_()

    # --- saving ---------------------------------------------------------------------------

    def save(self) -> bool:
        if self.doc.path is None:
            return self.save_as()
        return self._write(self.doc.path)

    def save_as(self, path: str | Path | None = None) -> bool:
        if path is None:
            doc = self.doc
            start = (
                str(doc.path)
                if doc.path
                else str(Path.home() / (f"{doc.demo.name}.py" if doc.demo else "script.py"))
            )
            chosen, _ = QFileDialog.getSaveFileName(
                self.w,
                translate("Files", "Save script"),
                start,
                translate("Files", "Python scripts (*.py)"),
            )
            if not chosen:
                return False
            path = chosen
        return self._write(Path(path))

    def _write(self, path: Path) -> bool:
        refused = refuse_to_overwrite(path)
        if refused is not None:
            dialogs.show_error(self.w, translate("Files", "Not saved"), refused)
            self.w.set_status(refused)
            return False
        try:
            write_text_atomically(path, self.w.editor.toPlainText())
        except OSError as exc:
            dialogs.show_error(
                self.w,
                translate("Files", "Save failed"),
                translate("Files", "Could not write {path}:\n{error}").format(path=path, error=exc),
            )
            return False
        self.doc.path = path.resolve()
        self.w.editor.document().setModified(False)
        self.remove_autosave()
        self.add_recent(self.doc.path)
        self.update_title()
        self.w.set_status(translate("Files", "Saved {path}").format(path=path))
        return True

    # --- recent files and the title -------------------------------------------------------

    def add_recent(self, path: Path) -> None:
        self.recent.add(path)
        self.update_recent_menu()

    def update_recent_menu(self) -> None:
        menu = self.w.recent_menu
        menu.clear()
        recent = self.recent.items()
        for p in recent:
            act = add_menu_action(menu, Path(p).name, tooltip=p)
            act.setStatusTip(p)
            act.triggered.connect(lambda _=False, path=p: self.open_path(Path(path)))
        if not recent:
            empty = menu.addAction(translate("Files", "(none yet)"))
            empty.setEnabled(False)
        menu.setToolTipsVisible(True)

    def update_title(self) -> None:
        w = self.w
        name = display_name(self.doc)
        modified = w.editor.document().isModified()
        w.setWindowTitle(title_text(f"{name}{'*' if modified else ''} — {APP_NAME}"))
        w.editor_header.setText(f"{name}{' •' if modified else ''}")
        w.editor_header.setToolTip(plain_tooltip(self.doc.path) if self.doc.path else "")

    # --- autosave -------------------------------------------------------------------------

    def autosave_now(self) -> None:
        """Write the editor's text to this window's autosave when it changed since."""
        if not self.w.editor.document().isModified():
            return
        text = self.w.editor.toPlainText()
        if text == self._last_autosave_text:
            return
        meta = {
            "file": str(self.doc.path) if self.doc.path else None,
            "demo": self.doc.demo.name if self.doc.demo else None,
        }
        try:
            self.autosave.write(text, meta)
        except OSError:
            return
        self._last_autosave_text = text

    def remove_autosave(self) -> None:
        """Forget this window's autosave; other windows' stay as they are."""
        self.autosave.remove()
        self._last_autosave_text = None

    def offer_autosave(self) -> bool:
        """Offer the text of a window that crashed. True when it was restored.

        Only autosaves no running window holds are offered (a live window keeps its
        autosave locked); declined ones are deleted, and once one is restored the
        rest wait for the next window.
        """
        titles = {d.name: d.title for d in self.demos}
        restored = False
        for orphan in find_orphans(self.data_dir):
            if restored:
                orphan.release()
                continue
            try:
                text, meta = orphan.read()
            except OSError:
                orphan.release()
                continue
            plan = restore_plan(text, meta, titles)
            if plan is None:
                orphan.discard()  # the file itself is newer: nothing was lost
                continue
            if not dialogs.ask_restore_autosave(self.w, plan.name, plan.when):
                orphan.discard()
                continue
            demo = self.find_demo(plan.demo_name) if plan.demo_name else None
            self.set_text(plan.text, plan.file, demo)
            self.w.editor.document().setModified(True)
            self.update_title()
            self.autosave_now()  # the text lives in this window's autosave before the old one goes
            orphan.discard()
            self.w.stepper.load_into_kernel(
                None, status=translate("Files", "Restored the autosaved text")
            )
            self.w.set_status(
                translate(
                    "Files", "Restored {name} as autosaved before gradviz stopped (not saved yet)"
                ).format(name=plan.name)
            )
            restored = True
        return restored


def _counts(nodes: int, passes: int, sep: str = " · ") -> str:
    """``136 nodes · 1 backward pass`` in the window's language."""
    return (
        (translate("Files", "{n} node") if nodes == 1 else translate("Files", "{n} nodes"))
        .format(n=nodes)
        + sep
        + (
            translate("Files", "{n} backward pass")
            if passes == 1
            else translate("Files", "{n} backward passes")
        ).format(n=passes)
    )  # fmt: skip


def display_name(doc: Document) -> str:
    """What the title bar and the editor's header call the text shown (the window's
    words for :meth:`gradviz.app.files.Document.name`)."""
    if doc.read_only:
        return translate("Files", "{name} (read-only)").format(name=doc.snapshot_name)
    if doc.path:
        return doc.path.name
    if doc.demo:
        return translate("Files", "demo: {name}.py").format(name=doc.demo.name)
    return translate("Files", "untitled.py")
