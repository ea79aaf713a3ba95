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

from gradviz.i18n import translate

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
        line = paused.get("line")
        label = translate("Timeline", "line {line}").format(line=line)
        tip = translate("Timeline", "paused before line {line}").format(line=line)
        if paused.get("iteration") is not None:
            n = paused["iteration"]
            label += translate("Timeline", " · it {n}").format(n=n)
            if paused.get("iterations") is not None:
                tip += translate("Timeline", ", iteration {n} of {total}").format(
                    n=n, total=paused["iterations"]
                )
            else:
                tip += translate("Timeline", ", iteration {n}").format(n=n)
        frames = paused.get("frames") or []
        if frames:
            inner = str(frames[-1].get("name", ""))
            label += f" · {inner.rpartition('.')[2]}"
            tip += translate("Timeline", ", in {frame}").format(frame=inner)
        return label, tip
    new = state.get("new_results") or []
    cursor = int(state.get("cursor", 0))
    if new:
        last = new[-1]
        error = last.get("error") or {}
        if not last.get("ok"):
            tip = (
                translate("Timeline", "line {line} stopped: {message}")
                if error.get("type") == "DebugStopped"
                else translate("Timeline", "line {line} failed: {message}")
            )
            return (
                translate("Timeline", "✕ line {line}").format(line=last["line"]),
                tip.format(line=last["line"], message=error.get("message", "")),
            )
        if len(new) == 1:
            return (
                translate("Timeline", "ran {line}").format(line=last["line"]),
                translate("Timeline", "ran line {line}; {n} statements run").format(
                    line=last["line"], n=cursor
                ),
            )
        return (
            translate("Timeline", "ran {first}–{last}").format(
                first=new[0]["line"], last=last["line"]
            ),
            translate("Timeline", "ran lines {first}–{last}; {n} statements run").format(
                first=new[0]["line"], last=last["line"], n=cursor
            ),
        )
    if cursor == 0:
        return translate("Timeline", "start"), translate("Timeline", "nothing has run yet")
    # (a step back, a skip): where the script stands, as the editor marks it; a bare
    # count ("at 15") read as a line number
    run = (
        translate("Timeline", "1 statement run")
        if cursor == 1
        else translate("Timeline", "{n} statements run").format(n=cursor)
    )
    line = _line_of(state, cursor)
    if line is not None:
        return (
            translate("Timeline", "before line {line}").format(line=line),
            translate("Timeline", "{run}; line {line} runs next").format(run=run, line=line),
        )
    return (
        translate("Timeline", "after 1 statement")
        if cursor == 1
        else translate("Timeline", "after {n} statements").format(n=cursor),
        run,
    )


def _line_of(state: dict[str, Any], index: int) -> int | None:
    """The line of top-level statement ``index`` (the next to run), or None."""
    statements = state.get("statements")
    if not isinstance(statements, list) or not 0 <= index < len(statements):
        return None
    st = statements[index]
    line = st.get("line") if isinstance(st, dict) else None
    return line if isinstance(line, int) and not isinstance(line, bool) and line > 0 else None
