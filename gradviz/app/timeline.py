"""The timeline: every step the user took, with the state it left (Qt-free).

The widget under the canvas (:class:`gradviz.ui.timeline.TimelineBar`) draws it.

Each step keeps the state the kernel sent for it, so clicking a past step shows
that moment at once, with no request to the kernel. Memory is capped: at most
``MAX_STEPS`` steps are listed, and the states of the oldest steps past
``MAX_KEPT_STATES``, or of graphs over ``MAX_KEPT_NODES`` nodes, are dropped;
such a step is shown by replaying to it. Each step also keeps how the kernel
got there (the top-level statement count and the debug requests since it
started), which is what a replay needs to continue running from that moment.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

MAX_STEPS = 500
MAX_KEPT_STATES = 200
MAX_KEPT_NODES = 2_000


@dataclass
class TimelineStep:
    """One step the user took and the state it left."""

    label: str
    tip: str
    #: the kernel's state after the step (None once dropped to cap memory)
    state: dict[str, Any] | None
    #: top-level statements run when the step's statement started (its cursor)
    cursor: int
    #: debug requests sent since that statement started ((mode, breakpoints) each);
    #: empty when the step ended at the top level
    path: tuple[tuple[str, tuple[int, ...]], ...] = ()
    paused: bool = False
    nodes: int = 0


@dataclass
class Timeline:
    """The steps, oldest first (plain Python: the widget only renders it)."""

    steps: list[TimelineStep] = field(default_factory=list)

    def add(self, step: TimelineStep) -> None:
        if step.nodes > MAX_KEPT_NODES:
            step.state = None
        self.steps.append(step)
        if len(self.steps) > MAX_STEPS:
            del self.steps[: len(self.steps) - MAX_STEPS]
        kept = [s for s in self.steps if s.state is not None]
        for old in kept[: max(0, len(kept) - MAX_KEPT_STATES)]:
            old.state = None

    def truncate(self, index: int) -> None:
        """Forget the steps after ``index`` (the run continues from there)."""
        del self.steps[index + 1 :]

    def clear(self) -> None:
        self.steps.clear()

    def __len__(self) -> int:
        return len(self.steps)


def describe_step(state: dict[str, Any]) -> tuple[str, str]:
    """A short label and a tooltip for the moment ``state`` shows."""
    paused = state.get("paused")
    if isinstance(paused, dict):
        label = f"line {paused.get('line')}"
        tip = f"paused before line {paused.get('line')}"
        if paused.get("iteration") is not None:
            label += f" · it {paused['iteration']}"
            tip += f", iteration {paused['iteration']}"
            if paused.get("iterations") is not None:
                tip += f" of {paused['iterations']}"
        frames = paused.get("frames") or []
        if frames:
            inner = str(frames[-1].get("name", ""))
            label += f" · {inner.rpartition('.')[2]}"
            tip += f", in {inner}"
        return label, tip
    new = state.get("new_results") or []
    cursor = int(state.get("cursor", 0))
    if new:
        last = new[-1]
        error = last.get("error") or {}
        if not last.get("ok"):
            verb = "stopped" if error.get("type") == "DebugStopped" else "failed"
            return f"✕ line {last['line']}", f"line {last['line']} {verb}: {error.get('message', '')}"
        if len(new) == 1:
            return f"ran {last['line']}", f"ran line {last['line']}; {cursor} statements run"
        return (
            f"ran {new[0]['line']}–{last['line']}",
            f"ran lines {new[0]['line']}–{last['line']}; {cursor} statements run",
        )
    if cursor == 0:
        return "start", "nothing has run yet"
    return f"at {cursor}", f"{cursor} statements run"
