"""Stepping the recorded backward pass on the canvas (F7, Shift+F7, a pass picked).

:class:`gradviz.app.backward_player.BackwardPlayer` counts the steps; this
draws them: the executing node and the gradients it passes on, the inspector's
node, and the guide's sentence (:func:`gradviz.app.guide.backward_step_note`).
Highlights go when the replay ends (F7 past the last step) and whenever a new
state is shown (a forward step, Zero grad, Step back, a timeline pick).
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject

from gradviz.app.backward_player import BackwardPlayer
from gradviz.app.guide import backward_step_note, backward_step_status
from gradviz.app.models import PassInfo

from .i18n import translate


class BackwardReplay(QObject):
    """The window's F7 / Shift+F7 and the Backward passes panel's picks."""

    def __init__(self, window: Any):
        super().__init__(window)
        self.w = window
        self.player = BackwardPlayer()

    def passes(self) -> tuple[PassInfo, ...]:
        return self.w.model.backward_passes

    def available(self) -> bool:
        """Whether F7 has a step to show."""
        return self.player.available(self.passes())

    def sync(self, passes: tuple[PassInfo, ...]) -> None:
        """A new state is shown: follow its passes and clear the highlights."""
        self.player.sync(passes)
        self.w.canvas.clear_backward()

    def reset(self) -> None:
        self.player.reset()
        self.w.canvas.clear_backward()

    def backward_step(self) -> None:
        """F7: show the next engine step; past the last one, the replay ends."""
        if not self.player.step(self.passes()):
            self._end()
            return
        self._show()

    def backward_to_end(self) -> None:
        """Shift+F7: show the whole pass (the next one, when this one is fully shown)."""
        if not self.player.to_end(self.passes()):
            self._end()
            return
        self._show()

    def pick(self, index: int) -> None:
        """A row of the pass list: replay that pass from its first engine step."""
        passes = self.passes()
        if not 0 <= index < len(passes):
            return
        if not self.player.pick(passes, index):
            self.w.canvas.clear_backward()
            self.w.graph_view.show_pass_graph(index)
            self.w.set_status(
                translate("BackwardReplay", "Backward pass #{n} recorded no engine step").format(
                    n=index + 1
                )
            )
            return
        self._show()

    def _end(self) -> None:
        """The replay is over: its highlights go, the guide says what comes next."""
        self.w.canvas.clear_backward()
        self.w.inspector_panel.focus_pass = None
        graph_view = self.w.graph_view
        if graph_view.pass_graph_shown is not None:
            graph_view.pass_graph_shown = None
            self.w.inspector_panel.set_state(self.w.state or {})
            graph_view.refresh_display(fit=True)
        if self.player.pass_index is not None:
            self.w.set_status(
                translate(
                    "BackwardReplay", "The backward replay is over: every recorded step was shown"
                )
            )
        self.w.update_guide()
        self.w.update_actions()

    def _show(self) -> None:
        passes = self.passes()
        player = self.player
        assert player.pass_index is not None
        pass_index, shown = player.pass_index, player.shown
        bpass = passes[pass_index]
        step = bpass.steps[shown - 1]
        graph_view = self.w.graph_view
        if graph_view.pass_needs_own_graph(bpass):
            if graph_view.pass_graph_shown != pass_index:
                graph_view.show_pass_graph(pass_index)
        elif graph_view.pass_graph_shown is not None:
            graph_view.pass_graph_shown = None
            self.w.inspector_panel.set_state(self.w.state or {})
            graph_view.refresh_display(fit=True)
        self.w.canvas.show_backward_step(pass_index, shown - 1, graph_view.canvas_passes())
        statements = self.w.statements()
        self.w.passes_panel.set_passes(passes, statements, pass_index)
        graph_view.keep_in_view(graph_view.shown_id(step.node))
        self.w.inspector_panel.focus_pass = pass_index
        self.w.inspector_panel.show_node(step.node)
        nodes = self.w.model.graph_nodes
        last = not player.available(passes)
        self.w.update_guide(backward_step_note(bpass, pass_index, shown, nodes, statements, last))
        self.w.set_status(backward_step_status(bpass, pass_index, shown))
        self.w.update_actions()
