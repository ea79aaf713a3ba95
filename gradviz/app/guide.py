"""What the guide strip and the status bar say, as data.

The guide over the canvas has a title (the demo or file and a hint) and a note:
a coloured tag (``Next · line 7``) followed by parts (plain text, code, bold
text, an error line). These functions decide the words; the window only turns a
:class:`GuideNote` into rich text, so every sentence here is testable without Qt
and translated (each literal is one whole sentence or phrase, looked up with
:func:`gradviz.i18n.translate` in the language the window speaks).

Leaves are named by their variable everywhere (``0.6 → x.grad``), never by an
internal node id.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gradviz.graph.fmt import fmt_value
from gradviz.graph.statements import calls_backward
from gradviz.i18n import translate

from .models import AppState, ErrorInfo, PassInfo, ResultInfo, StatementInfo, StoppedStatement

__all__ = [
    "STOPPED_TYPES",
    "GuideContext",
    "GuideNote",
    "GuideTitle",
    "Tag",
    "backward_step_note",
    "backward_step_status",
    "first_line",
    "guide_note",
    "guide_title",
    "note_for",
    "position_text",
    "read_only_banner",
    "read_only_note",
    "reply_status",
    "statements_before_backward",
    "top_level_backward",
]

#: error types of a statement the learner stopped, paused (gradviz.core.debugger.DebugStopped)
#: or running (gradviz.core.errors.Stopped): its work is kept, Step skips the rest of it
STOPPED_TYPES = frozenset({"DebugStopped", "Stopped"})


@dataclass(frozen=True)
class Tag:
    """The coloured label that starts a note; ``role`` names its colour in the theme
    (``timeline``, ``paused``, ``error``, ``stopped``, ``note``, ``just_ran``, ``next``,
    ``end``, ``snapshot``, ``backward``)."""

    text: str
    role: str


@dataclass(frozen=True)
class GuideNote:
    """A tag and the parts after it: ``("text", …)``, ``("code", …)``, ``("bold", …)``,
    ``("error", …)`` (an error line of its own)."""

    tag: Tag | None
    parts: tuple[tuple[str, str], ...] = ()

    def plain(self) -> str:
        """The note as plain text (tests, accessibility)."""
        head = f"{self.tag.text}: " if self.tag else ""
        return head + "".join(text if kind != "error" else f"\n{text}" for kind, text in self.parts)


@dataclass(frozen=True)
class GuideTitle:
    title: str
    subtitle: str = ""


@dataclass
class GuideContext:
    """What the guide's note depends on (all plain data)."""

    statements: Sequence[StatementInfo] = ()
    cursor: int = 0
    #: the failed result at the cursor, if the last statement that ran failed
    failed: ResultInfo | None = None
    parse_error: ErrorInfo | None = None
    pause: Any = None
    #: the text of the line the pause is on
    paused_code: str = ""
    #: a statement the user (or the time limit) stopped: index, line, seconds, message
    stopped: StoppedStatement | None = None
    #: the demo's ``#>`` notes (line -> text) when its own text is in the editor
    notes: Mapping[int, str] = field(default_factory=dict)
    #: (shown step, number of steps) when a past timeline step is shown
    timeline: tuple[int, int] | None = None
    backward_available: bool = False
    has_passes: bool = False
    #: a syntax error of edited text that was not sent (line, message)
    syntax_error: tuple[int, str] | None = None


def first_line(text: Any) -> str:
    text = str(text or "").strip()
    first = text.splitlines()[0] if text else ""
    return first if len(first) <= 120 else first[:117] + "…"


def note_for(notes: Mapping[int, str], statement: StatementInfo | None) -> str | None:
    if statement is None or not notes:
        return None
    for line in range(statement.line, statement.end_line + 1):
        if line in notes:
            return translate("Demos", notes[line])  # a demo's note, in the window's language
    return None


def error_line_inside(result: ResultInfo) -> int | None:
    """The error's own line when it lies inside the failed statement (a loop body's
    line), else None."""
    line = result.error.line if result.error is not None else None
    if line is not None and result.line <= line <= result.end_line:
        return line
    return None


def failed_line(result: ResultInfo) -> int:
    """The line a failed statement failed on: the error's own line when it lies inside
    the statement, else the statement's first line."""
    return error_line_inside(result) or result.line


def _strip_line_prefix(message: str, line: Any) -> str:
    """``line 11: invalid syntax`` -> ``invalid syntax`` (the tag already says the line)."""
    for prefix in (f"line {line}: ", f"line {line}, ", f"Line {line}: "):
        if message.startswith(prefix):
            return message[len(prefix) :]
    return message


def _count(n: int, one: str, many: str) -> str:
    """``one`` or ``many`` (already translated templates with ``{n}``) for ``n``."""
    return (one if n == 1 else many).format(n=n)


# --- the title ------------------------------------------------------------------------------


def guide_title(demo: Any = None, name: str | None = None) -> GuideTitle:
    """A demo's title and what it is about, or the file's name and how to start."""
    if demo is not None:
        return GuideTitle(
            translate("Guide", "Demo: {title}").format(title=translate("Demos", demo.title)),
            translate("Demos", demo.about),
        )
    return GuideTitle(
        name or translate("Guide", "untitled script"),
        translate(
            "Guide",
            "F10 steps over, F11 steps into, F7 steps the backward pass; click a node to inspect it",
        ),
    )


def read_only_banner(name: str | None, nodes: int, passes: int) -> str:
    """``Read-only snapshot of run.gradviz.json: 136 nodes · 1 backward pass — …``."""
    return translate(
        "Guide", "Read-only snapshot of {name}: {nodes} · {passes} — open a script to step"
    ).format(
        name=name,
        nodes=_count(nodes, translate("Guide", "{n} node"), translate("Guide", "{n} nodes")),
        passes=_count(
            passes,
            translate("Guide", "{n} backward pass"),
            translate("Guide", "{n} backward passes"),
        ),
    )


def read_only_note(backward_available: bool) -> GuideNote:
    if backward_available:
        text = translate(
            "Guide",
            "press F7 to replay the recorded backward pass one engine step at a time. "
            "Click a node to inspect it; collapse modules in the Modules panel; "
            "Ctrl+F finds a node.",
        )
    else:
        text = translate(
            "Guide",
            "click a node to inspect it; collapse modules in the Modules panel; "
            "Ctrl+F finds a node. Open a script (Ctrl+O) or a demo to step again.",
        )
    return GuideNote(Tag(translate("Guide", "Snapshot"), "snapshot"), (("text", text),))


# --- the note -------------------------------------------------------------------------------


def guide_note(ctx: GuideContext) -> GuideNote:
    """What the learner should know right now, most urgent first."""
    statements = ctx.statements
    cursor = ctx.cursor
    failed = ctx.failed
    if ctx.syntax_error is not None:
        line, message = ctx.syntax_error
        return GuideNote(
            Tag(translate("Guide", "Fix · line {line}").format(line=line), "error"),
            (
                (
                    "text",
                    translate(
                        "Guide",
                        "{message}. Nothing ran and the state is kept: fix this line and Step "
                        "again.",
                    ).format(message=message),
                ),
            ),
        )
    if ctx.timeline is not None:
        shown, total = ctx.timeline
        return GuideNote(
            Tag(
                translate("Guide", "Timeline · step {n} of {total}").format(
                    n=shown + 1, total=total
                ),
                "timeline",
            ),
            (
                (
                    "text",
                    translate(
                        "Guide",
                        "a kept snapshot of that moment. Step, Run or Step into continue from "
                        "here (the kernel replays to it); click the last step to come back.",
                    ),
                ),
            ),
        )
    pause = ctx.pause
    if pause is not None:
        where = translate("Guide", "Paused · line {line}").format(line=pause.line)
        if pause.iteration_text:
            where += f" · {iteration_text(pause)}"
        return GuideNote(
            Tag(where, "paused"),
            (
                ("code", ctx.paused_code),
                (
                    "text",
                    translate(
                        "Guide",
                        " runs next. F10 steps over it, F11 steps into it, Shift+F11 finishes the "
                        "loop or call, F5 runs to the next breakpoint, Shift+F5 stops here.",
                    ),
                ),
            ),
        )
    if ctx.parse_error is not None:
        pe = ctx.parse_error
        message = _strip_line_prefix(pe.message, pe.line)
        kind = pe.type or "SyntaxError"
        return GuideNote(
            Tag(
                translate("Guide", "Fix · line {line}").format(line=pe.line)
                if pe.line
                else translate("Guide", "Fix"),
                "error",
            ),
            (
                (
                    "text",
                    translate(
                        "Guide", "{kind}: {message}. Nothing ran: fix this line and Step again."
                    ).format(kind=kind, message=message),
                ),
            ),
        )
    err = failed.error if failed is not None else None
    if failed is not None and err is not None and err.type in STOPPED_TYPES:
        return GuideNote(
            Tag(
                translate("Guide", "Stopped · line {line}").format(line=failed_line(failed)),
                "stopped",
            ),
            (
                (
                    "text",
                    translate(
                        "Guide",
                        "{message}. Nothing was rewound. Step skips the rest of this "
                        "statement; edit it and Step to run it again.",
                    ).format(message=translate("Errors", first_line(err.message))),
                ),
            ),
        )
    if failed is not None:
        why = (
            translate("Explain", err.explanation)
            if err is not None and err.explanation
            else first_line(err.message)
            if err is not None
            else translate("Guide", "it failed")
        )
        return GuideNote(
            Tag(translate("Guide", "Line {line} failed").format(line=failed_line(failed)), "error"),
            (("text", why),),
        )
    stopped = ctx.stopped
    if stopped is not None and stopped.index == cursor and cursor < len(statements):
        who = (
            translate(
                "Guide", "it ran past the {seconds} s time limit and gradviz stopped it"
            ).format(seconds=f"{stopped.seconds:g}")
            if stopped.message
            else translate("Guide", "you stopped it after {seconds} s").format(
                seconds=f"{stopped.seconds:.1f}"
            )
        )
        return GuideNote(
            Tag(
                translate("Guide", "Stopped · line {line}").format(line=statements[cursor].line),
                "stopped",
            ),
            (
                (
                    "text",
                    translate(
                        "Guide",
                        "{who}; everything before it is kept. Step skips it; edit it first to "
                        "run it again.",
                    ).format(who=who),
                ),
            ),
        )
    notes = ctx.notes
    if cursor < len(statements):
        s = statements[cursor]
        note = note_for(notes, s)
        if note:
            return GuideNote(Tag(_next_tag(s.line), "note"), (("text", note),))
        prev = statements[cursor - 1] if cursor > 0 else None
        prev_note = note_for(notes, prev) if prev else None
        if prev and prev_note:
            return GuideNote(Tag(_just_ran_tag(prev.line), "just_ran"), (("text", prev_note),))
        return GuideNote(Tag(_next_tag(s.line), "next"), (("code", first_line(s.source)),))
    if statements:
        prev_note = note_for(notes, statements[-1])
        if ctx.backward_available:
            return GuideNote(
                Tag(translate("Guide", "End"), "end"),
                (
                    (
                        "text",
                        translate(
                            "Guide",
                            "every statement ran. Press F7 to step through the backward pass, "
                            "one engine step at a time (pick any pass in the Backward passes "
                            "panel).",
                        ),
                    ),
                ),
            )
        if prev_note:
            return GuideNote(
                Tag(_just_ran_tag(statements[-1].line), "just_ran"), (("text", prev_note),)
            )
        text = (
            translate("Guide", "every statement ran.")
            if ctx.has_passes
            else translate("Guide", "every statement ran. Reset (Ctrl+R) to start over.")
        )
        return GuideNote(Tag(translate("Guide", "End"), "end"), (("text", text),))
    return GuideNote(
        None,
        (("text", translate("Guide", "Type PyTorch code in the editor, then press Step (F10).")),),
    )


def _next_tag(line: int) -> str:
    return translate("Guide", "Next · line {line}").format(line=line)


def _just_ran_tag(line: int) -> str:
    return translate("Guide", "Just ran · line {line}").format(line=line)


def iteration_text(pause: Any) -> str:
    """``iteration 2 of 3`` (``iteration 4`` when the loop's length is unknown), in the
    current language."""
    if getattr(pause, "iteration", None) is None:
        return str(getattr(pause, "iteration_text", "") or "")
    iterations = getattr(pause, "iterations", None)
    if iterations is None:
        return translate("Guide", "iteration {n}").format(n=pause.iteration)
    return translate("Guide", "iteration {n} of {total}").format(n=pause.iteration, total=iterations)


# --- the status bar -------------------------------------------------------------------------


def reply_status(cmd: str, state: AppState, pause: Any = None) -> str:
    """The status bar's line after the kernel answered ``cmd`` with ``state``."""
    new = state.new_results
    failed = [r for r in new if not r.ok]
    if state.parse_error is not None:
        pe = state.parse_error
        return translate("Guide", "The script does not parse (line {line}): {message}").format(
            line=pe.line, message=_strip_line_prefix(pe.message, pe.line)
        )
    if pause is not None:
        where = translate("Guide", "Paused before line {line}").format(line=pause.line)
        if pause.iteration_text:
            where += f" ({iteration_text(pause)})"
        if pause.frame:
            where += translate("Guide", " in {frame}").format(frame=pause.frame)
        return where + translate(
            "Guide", ": F10 over, F11 into, Shift+F11 out, F5 continue, Shift+F5 stop"
        )
    if failed:
        r = failed[-1]
        err = r.error or ErrorInfo("Error", "")
        if err.type in STOPPED_TYPES:
            return translate("Guide", "{message}; Step skips the rest of line {line}").format(
                message=translate("Errors", first_line(err.message)), line=r.line
            )
        return translate("Guide", "Line {line} failed: {type}: {message}").format(
            line=failed_line(r), type=err.type, message=first_line(err.message)
        )
    if cmd == "zero_grad":
        zeroed = state.zeroed or ()
        return (
            translate("Guide", "Zeroed .grad of {names}").format(names=", ".join(zeroed))
            if zeroed
            else translate("Guide", "No leaf has a .grad to zero")
        )
    if cmd == "reset":
        return translate("Guide", "Reset: nothing has run yet. Step (F10) runs the first statement.")
    if cmd == "load" and not new:
        return translate(
            "Guide", "Loaded: nothing has run yet. Step (F10) runs the first statement."
        )
    if len(new) == 1:
        if new[0].passes:
            return translate(
                "Guide", "Ran line {line} — backward() ran: press F7 to step through it"
            ).format(line=new[0].line)
        return translate("Guide", "Ran line {line}").format(line=new[0].line)
    if new:
        return translate("Guide", "Ran {n} statements (lines {first}–{last})").format(
            n=len(new), first=new[0].line, last=new[-1].line
        )
    if state.at_end:
        return translate("Guide", "At the end of the script")
    return translate("Guide", "Ready")


def position_text(statements: int, cursor: int, pause: Any = None) -> str:
    """``statement 3 of 8 run`` / ``paused at line 9, iteration 2 of 3``."""
    if pause is not None:
        return translate("Guide", "paused at line {line}").format(line=pause.line) + (
            f", {iteration_text(pause)}" if pause.iteration_text else ""
        )
    return (
        translate("Guide", "statement {n} of {total} run").format(
            n=min(cursor, statements), total=statements
        )
        if statements
        else translate("Guide", "no statements")
    )


# --- the backward replay --------------------------------------------------------------------


def node_titles(bpass: PassInfo, graph_nodes: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """Node id -> what the guide calls it: its op and the script's names for it;
    an AccumulateGrad is its leaf's ``.grad`` (``x.grad``), never an internal id.
    (``graph_nodes`` are the graph's node attribute dicts, as the canvas draws them.)"""
    titles: dict[str, str] = {}
    for n in graph_nodes:
        label = str(n.get("label", ""))
        names = [str(v) for v in n.get("vars") or [] if str(v) != label]
        titles[str(n["id"])] = _title(label, names)
    for node_id, label in zip(bpass.nodes, bpass.labels):
        titles.setdefault(node_id, _title(label, bpass.names.get(node_id) or ()))
    return titles


def _title(label: str, names: Sequence[str]) -> str:
    if label == "AccumulateGrad" and names:
        return translate("Guide", " and ").join(f"{n}.grad" for n in names)
    return f"{label} ({', '.join(names)})" if names else label


def backward_step_note(
    bpass: PassInfo,
    pass_index: int,
    shown: int,
    graph_nodes: Sequence[Mapping[str, Any]],
    statements: Sequence[StatementInfo] = (),
    last: bool = False,
) -> GuideNote:
    """The note for engine step ``shown`` (1-based) of backward pass ``pass_index``:
    what the node receives and where it passes gradients on, by the script's names.
    ``last``: no step of any pass comes after it."""
    steps = bpass.steps
    step = steps[shown - 1]
    titles = node_titles(bpass, graph_nodes)
    received = ", ".join(fmt_value(g, 60) for g in step.grad_outputs)
    sent = [
        f"{fmt_value(g, 60)} → {titles.get(t, t)}"
        for g, t in zip(step.grad_inputs, step.targets)
        if t is not None
    ]
    name = step.label or step.node
    if step.vars:
        name += f" ({', '.join(step.vars)})"
    line = bpass.line
    if line is None and bpass.statement is not None and bpass.statement < len(statements):
        line = statements[bpass.statement].line
    where = []
    if line:
        where.append(translate("Guide", "line {line}").format(line=line))
    if bpass.iteration is not None:
        where.append(translate("Guide", "iteration {n}").format(n=bpass.iteration))
    place = f" ({', '.join(where)})" if where else ""
    parts: list[tuple[str, str]] = [
        ("bold", name),
        ("text", translate("Guide", " receives {grads}").format(grads=received or "–")),
    ]
    if sent:
        parts.append(("text", translate("Guide", " and passes {sent}").format(sent="; ".join(sent))))
    elif step.is_accumulate:
        into = ", ".join(f"{v}.grad" for v in step.vars) or ".grad"
        parts.append(("text", translate("Guide", " and adds it into {into}").format(into=into)))
    if shown == len(steps) and bpass.error:
        parts.append(("error", translate("Errors", first_line(bpass.error))))
    elif last:
        parts.append(
            ("text", translate("Guide", ". That was the last recorded step: F7 ends the replay."))
        )
    tag = Tag(
        translate("Guide", "Backward #{n}{place} · step {step} of {total}").format(
            n=pass_index + 1, place=place, step=shown, total=len(steps)
        ),
        "backward",
    )
    return GuideNote(tag, tuple(parts))


def backward_step_status(bpass: PassInfo, pass_index: int, shown: int) -> str:
    steps = bpass.steps
    label = steps[shown - 1].label if 0 < shown <= len(steps) else ""
    return translate("Guide", "Backward pass #{n}: step {step} of {total} ({label})").format(
        n=pass_index + 1, step=shown, total=len(steps), label=label
    )


# --- reading scripts ------------------------------------------------------------------------


def statements_before_backward(source: str) -> int | None:
    """How many top-level statements come before the first one that calls backward()."""
    try:
        body = ast.parse(source).body
    except SyntaxError:
        return None
    for index, stmt in enumerate(body):
        if calls_backward(stmt):
            return index
    return None


def top_level_backward(source: str) -> bool:
    """Whether a top-level statement's text calls backward() itself (the core's rule)."""
    try:
        body = ast.parse(source).body
    except SyntaxError:
        return False
    return bool(body) and calls_backward(body[0])
