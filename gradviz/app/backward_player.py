"""The backward player: which engine step of which recorded backward pass is shown.

``backward()`` runs in the kernel; what its engine did is recorded as passes of
steps. F7 shows the next step, Shift+F7 the whole pass, a pick in the passes
list restarts a pass. The player only counts; the window draws what it says.

Highlights belong to the moment they were shown: any new state (a forward step,
Zero grad, Step back, a timeline pick) hides them (``visible`` turns False), as
does pressing F7 past the last step. The position is kept, so F7 goes on from
where the replay was.
"""

from __future__ import annotations

from collections.abc import Sequence

from .models import PassInfo, StepInfo

__all__ = ["BackwardPlayer"]

Passes = Sequence[PassInfo]


def _steps(p: PassInfo) -> Sequence[StepInfo]:
    return p.steps


class BackwardPlayer:
    """Position in the recorded passes: ``pass_index`` and ``shown`` (steps shown, 1-based)."""

    def __init__(self) -> None:
        self.pass_index: int | None = None
        self.shown = 0
        #: how many passes the last state had (new passes start a new replay)
        self.known = 0
        #: whether the canvas should show the highlight of (pass_index, shown)
        self.visible = False

    def reset(self) -> None:
        self.pass_index, self.shown, self.known, self.visible = None, 0, 0, False

    @property
    def step_index(self) -> int | None:
        """The 0-based step shown, or None when nothing is highlighted."""
        return (
            self.shown - 1 if self.visible and self.shown and self.pass_index is not None else None
        )

    @property
    def focus_pass(self) -> int | None:
        """The pass the inspector should describe nodes in (None: the state's own)."""
        return self.pass_index if self.visible and self.shown else None

    def sync(self, passes: Passes) -> None:
        """A new state arrived: new passes start a replay at the first one with steps;
        fewer passes (a step back, a reset) move the position back. Highlights hide."""
        self.visible = False
        n = len(passes)
        if n > self.known:
            self.pass_index = next((i for i in range(self.known, n) if _steps(passes[i])), n - 1)
            self.shown = 0
        elif n < self.known or not passes:
            self.pass_index = None if not passes else min(self.pass_index or 0, n - 1)
            self.shown = 0
        self.known = n

    def available(self, passes: Passes) -> bool:
        """Whether F7 has a step to show."""
        if self.pass_index is None or not passes or self.pass_index >= len(passes):
            return False
        if self.shown < len(_steps(passes[self.pass_index])):
            return True
        return any(_steps(p) for p in passes[self.pass_index + 1 :])

    def _current_steps(self, passes: Passes) -> int:
        """Steps of the pass being shown, moving on to the next pass once it is all shown."""
        assert self.pass_index is not None
        if self.shown >= len(_steps(passes[self.pass_index])):
            self.pass_index = next(
                i for i in range(self.pass_index + 1, len(passes)) if _steps(passes[i])
            )
            self.shown = 0
        return len(_steps(passes[self.pass_index]))

    def step(self, passes: Passes) -> bool:
        """F7: one more engine step. False (and highlights hidden) when the replay is over."""
        if not self.available(passes):
            self.visible = False
            return False
        self._current_steps(passes)
        self.shown += 1
        self.visible = True
        return True

    def to_end(self, passes: Passes) -> bool:
        """Shift+F7: the whole pass (the next one, when this one is all shown)."""
        if not self.available(passes):
            self.visible = False
            return False
        self.shown = self._current_steps(passes)
        self.visible = True
        return True

    def pick(self, passes: Passes, index: int) -> bool:
        """A pass picked in the list: its first step (True), or False when it recorded none."""
        if not 0 <= index < len(passes):
            return False
        self.pass_index = index
        if not _steps(passes[index]):
            self.shown = 0
            self.visible = False
            return False
        self.shown = 1
        self.visible = True
        return True

    def hide(self) -> None:
        self.visible = False
