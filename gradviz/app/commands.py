"""Which of the window's commands make sense right now: one rule, read-only included.

The window's actions (menus, toolbar, shortcuts) are enabled from
:func:`enabled_commands`; a read-only snapshot is one input to it, not a
branch in every handler. Qt-free, so the rule is tested on its own.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["FORWARD_COMMANDS", "CommandContext", "enabled_commands"]

#: commands that run script statements (none of them exists for a read-only snapshot)
FORWARD_COMMANDS = (
    "step",
    "step_into",
    "step_out",
    "run_to_backward",
    "run_to_end",
    "run_to_cursor",
    "step_back",
    "reset",
    "zero_grad",
    "stop",
)


@dataclass(frozen=True)
class CommandContext:
    """What the enabled commands depend on (plain flags the window reads off its state)."""

    read_only: bool = False
    #: the kernel process is running (or restarting)
    alive: bool = True
    #: the editor's text differs from what the kernel has, or a load is under way
    changed: bool = False
    has_state: bool = False
    at_end: bool = False
    failed_here: bool = False
    paused: bool = False
    has_statements: bool = False
    #: something ran, the cursor moved, or a past timeline step exists
    can_step_back: bool = False
    backward_available: bool = False
    #: a backward step is highlighted (F7 past the last step ends the replay)
    backward_shown: bool = False
    #: some leaf has a .grad
    has_grad: bool = False
    #: the kernel is busy with a request Stop can end (after a short delay)
    stoppable: bool = False
    #: the kernel is working on a request
    busy: bool = False


def enabled_commands(ctx: CommandContext) -> dict[str, bool]:
    """Command name -> enabled. Names are the window's action table keys."""
    bw = ctx.backward_available
    bw_step = bw or ctx.backward_shown
    if ctx.read_only:
        # A snapshot has no statements: only the recorded backward passes replay.
        out = {name: False for name in FORWARD_COMMANDS}
        out.update(bw_step=bw_step, bw_end=bw, save=False, save_as=False, device=False)
        return out
    alive = ctx.alive
    changed = ctx.changed
    paused = ctx.paused and not changed
    can_forward = alive and (
        changed or (ctx.has_state and (not ctx.at_end or ctx.failed_here)) or paused
    )
    return {
        "step": can_forward,
        "step_into": can_forward,
        "step_out": alive and paused,
        "run_to_backward": can_forward,
        "run_to_end": can_forward,
        "run_to_cursor": alive and (changed or (ctx.has_state and ctx.has_statements)),
        "step_back": alive and (changed or ctx.can_step_back),
        "reset": True,
        "bw_step": bw_step,
        "bw_end": bw,
        # a paused statement would be stopped by any other command: zero grad waits
        "zero_grad": alive and ctx.has_grad and not paused,
        "stop": ctx.stoppable or (paused and not ctx.busy),
        "save": True,
        "save_as": True,
        "device": True,
    }
