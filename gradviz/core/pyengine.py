"""The trusted engine: the user's own script runs as real CPython.

Restricted mode (:mod:`gradviz.core.sandbox`) interprets a shared script under an
allowlist. A script the user trusts needs none of that: this engine compiles each
top-level statement with the script's own file name and runs it with ``exec`` in
one ``__main__`` namespace, so everything ``python script.py`` does works (imports
of the standard library and of installed packages, generators, classes, closures,
``id``, ``getattr``, ``eval``, file reads).

It offers the :class:`~gradviz.core.session.Session` the same surface as the
sandbox's ``Interpreter`` (``globals``, ``output``, ``execute``, the hooks), so the
session's graph capture, backward recording, module tagging, timeline and memory
figures work the same in both modes:

* **Backward passes** are recorded through ``call_hook``: ``Tensor.backward``,
  ``torch.autograd.backward`` and ``torch.autograd.grad`` are wrapped once per
  process; a wrapper hands a call made by the script's own code (its file, any
  depth) to the running engine and passes every other call (torch's own, a call
  inside a recorded pass) straight through.
* **Modules** are tagged through ``module_hook`` from a global forward pre-hook:
  the outermost call of a module the script named (``model(x)``).
* **Stepping**: line events in the script's own frames become the same
  ``statement_hook(stmt, scope)`` calls the interpreter makes; the depth is the
  block nesting of each script frame's line plus the calls between them. On Python
  3.12+ the events come from ``sys.monitoring`` (PEP 669), as debuggers built for it
  do: a code object outside the script is disabled at its first start and costs
  nothing after, and only the script's code objects get line events. Before 3.12, or
  when another tool holds the debugger's monitoring id, ``sys.settrace`` on the
  thread that runs the statement does the same (each library call then costs one
  call of the tracer). ``GRADVIZ_TRACER=settrace`` forces the fallback.
* **Stop** raises :class:`~gradviz.core.errors.Stopped` at the script's next line
  (every statement is traced in the script's own frames; library frames are not).

No resource limit applies: the user runs their own code, as with ``python``. The
kernel that runs it is a separate process all the same (a crash, a hang or Stop
leaves the window alive).
"""

from __future__ import annotations

import ast
import atexit
import builtins
import functools
import io
import linecache
import os
import sys
import threading
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from .errors import ScriptSyntaxError, Stopped
from .modules import CallTagger, LineBirths

#: the name a script typed into the window runs under (tracebacks, linecache)
WINDOW_FILENAME = "<gradviz>"

_COMPOUND: tuple[type, ...] = (
    ast.For, ast.AsyncFor, ast.While, ast.If, ast.With, ast.AsyncWith, ast.Try,
    ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Match,
)
if sys.version_info >= (3, 11):
    _COMPOUND = (*_COMPOUND, ast.TryStar)


class StreamedOutput(io.TextIOBase):
    """``print`` output of the running statement: kept for the statement's result and
    handed to ``on_write`` as it is written (the window's Output panel streams it)."""

    def __init__(self, on_write: Callable[[str], None] | None = None) -> None:
        super().__init__()
        self.parts: list[str] = []
        self.size = 0
        self.on_write = on_write

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:  # type: ignore[override]
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        self.parts.append(text)
        self.size += len(text)
        if self.on_write is not None and text:
            self.on_write(text)
        return len(text)

    def text(self) -> str:
        return "".join(self.parts)


@dataclass
class FrameName:
    """A running script function, as the debugger strip names it."""

    name: str


@dataclass
class FrameScope:
    """A paused frame's local variables (what the Tensors panel lists)."""

    names: dict[str, Any] = field(default_factory=dict)


# --- line events: sys.monitoring on 3.12+, sys.settrace before ------------------------


class _Monitor:
    """The process's one ``sys.monitoring`` tool (PEP 669) for the trusted engine.

    Events are on only while a statement runs (:meth:`enable` / :meth:`disable`). A
    code object of any other file is disabled at its first ``PY_START`` (it never
    calls back again, in any later statement); a script's code object gets ``LINE``
    events of its own, which go to the engine running on the calling thread as the
    settrace tracer's line events do."""

    TOOL = 0  # sys.monitoring.DEBUGGER_ID
    NAME = "gradviz"

    def __init__(self) -> None:
        self.ready = False
        self.failed: str | None = None
        #: the files of the statements running now, each with how many run (a paused
        #: statement's worker keeps its file here until it ends)
        self.files: dict[str, int] = {}

    def start(self) -> bool:
        """Claim the debugger's tool id once; False (settrace is used) when it is taken."""
        if self.ready:
            return True
        if self.failed is not None:
            return False
        mon = sys.monitoring  # type: ignore[attr-defined]
        holder = mon.get_tool(self.TOOL)
        if holder not in (None, self.NAME):
            self.failed = f"sys.monitoring's debugger id is held by {holder!r}"
            return False
        if holder is None:
            mon.use_tool_id(self.TOOL, self.NAME)
        mon.register_callback(self.TOOL, mon.events.PY_START, self._on_start)
        mon.register_callback(self.TOOL, mon.events.LINE, self._on_line)
        mon.register_callback(self.TOOL, mon.events.PY_RETURN, self._on_return)
        atexit.register(self.stop)  # before the interpreter tears its modules down
        self.ready = True
        return True

    def stop(self) -> None:
        """Turn every event off and give the tool id back."""
        if not self.ready:
            return
        mon = sys.monitoring  # type: ignore[attr-defined]
        mon.set_events(self.TOOL, 0)
        mon.register_callback(self.TOOL, mon.events.PY_START, None)
        mon.register_callback(self.TOOL, mon.events.LINE, None)
        mon.register_callback(self.TOOL, mon.events.PY_RETURN, None)
        mon.free_tool_id(self.TOOL)
        self.ready = False
        self.files.clear()

    def enable(self, filename: str) -> None:
        self.files[filename] = self.files.get(filename, 0) + 1
        sys.monitoring.set_events(self.TOOL, sys.monitoring.events.PY_START)  # type: ignore[attr-defined]

    def disable(self, filename: str) -> None:
        left = self.files.get(filename, 0) - 1
        if left > 0:
            self.files[filename] = left
        else:
            self.files.pop(filename, None)
        if not self.files and self.ready:
            sys.monitoring.set_events(self.TOOL, 0)  # type: ignore[attr-defined]

    def _on_start(self, code: types.CodeType, offset: int) -> Any:
        if code.co_filename not in self.files:
            return sys.monitoring.DISABLE  # type: ignore[attr-defined]  # library code: never again
        engine = _engine()
        if engine is None or engine.filename != code.co_filename or not engine.monitored:
            return None  # the script's code on another thread (or traced by settrace)
        events = sys.monitoring.events  # type: ignore[attr-defined]
        sys.monitoring.set_local_events(  # type: ignore[attr-defined]
            self.TOOL, code, events.LINE | events.PY_RETURN
        )
        # a new call: a frame freed before may have had this id
        frame = sys._getframe(1)
        engine._last_line.pop(id(frame), None)
        engine._last_start.pop(id(frame), None)
        return None

    def _on_return(self, code: types.CodeType, offset: int, value: Any) -> Any:
        engine = _engine()
        if engine is None or engine._thread_id != threading.get_ident() or not engine.monitored:
            return None
        engine._returned(sys._getframe(1))
        return None

    def _on_line(self, code: types.CodeType, line: int) -> Any:
        engine = _engine()
        if engine is None or engine._thread_id != threading.get_ident() or not engine.monitored:
            return None
        engine._trace_line(sys._getframe(1), "line", None)
        return None


_MONITOR = _Monitor()


def _use_monitoring() -> bool:
    if sys.version_info < (3, 12) or os.environ.get("GRADVIZ_TRACER") == "settrace":
        return False
    return _MONITOR.start()


# --- backward calls and module calls, routed to the running engine ---------------------

_ACTIVE = threading.local()


def _engine() -> PythonEngine | None:
    return getattr(_ACTIVE, "engine", None)


_ORIGINALS: dict[str, Any] = {}


def _from_script(engine: PythonEngine, depth: int = 2) -> bool:
    """Whether the caller ``depth`` frames up is the script's own code."""
    frame = sys._getframe(depth)
    return frame.f_code.co_filename == engine.filename


def _install_wrappers() -> None:
    """Wrap the three backward entry points once per process (idempotent). Outside a
    running trusted statement, or called from anything but the script, they are the
    functions torch made, called straight through."""
    if _ORIGINALS:
        return
    tensor_backward = torch.Tensor.backward
    autograd_backward = torch.autograd.backward
    autograd_grad = torch.autograd.grad
    _ORIGINALS.update(tensor_backward=tensor_backward, backward=autograd_backward,
                      grad=autograd_grad)

    def routed(original: Any, method: bool) -> Any:
        """``original``, handing a call made by the script's own code to the running
        engine (as a bound method when ``method``: what record_backward reads)."""

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            engine = _engine()
            if engine is None or engine.in_pass or not _from_script(engine):
                return original(*args, **kwargs)
            func = types.MethodType(original, args[0]) if method else original
            return engine.record(func, args[1:] if method else args, kwargs,
                                 lambda: original(*args, **kwargs))

        return functools.update_wrapper(wrapper, original)

    torch.Tensor.backward = routed(tensor_backward, method=True)  # type: ignore[method-assign]
    torch.autograd.backward = routed(autograd_backward, method=False)
    torch.autograd.grad = routed(autograd_grad, method=False)

    # Module calls reach the engine through nn.Module.__call__, not through global
    # forward hooks: any global hook sends every module call of the process down
    # torch's slow path (_call_impl's hook loops), which cost a training loop more
    # than the tagging itself.
    module_call = torch.nn.Module.__call__

    def call(self: torch.nn.Module, *args: Any, **kwargs: Any) -> Any:
        engine = _engine()
        if engine is None:
            return module_call(self, *args, **kwargs)
        engine.module_entered(self)
        # settrace (Python 3.10/3.11): a library module's forward runs untraced, as
        # its frames are stepped over anyway; a trace function slows every Python
        # call under it (a small MLP's forward 0.09 -> 0.32 ms). The script's own
        # modules, and any module with hooks (the script's functions), run traced.
        previous: Any = None
        switched = False
        if not engine.monitored and engine._thread_id == threading.get_ident():
            previous = sys.gettrace()
            wanted = engine.traces_module(self)
            if wanted != (previous is not None):
                sys.settrace(engine._trace if wanted else None)
                switched = True
        output = None
        try:
            output = module_call(self, *args, **kwargs)
            return output
        finally:
            if switched:
                sys.settrace(previous)
            engine.module_left(self, args, output)

    _ORIGINALS["module_call"] = module_call
    torch.nn.Module.__call__ = functools.update_wrapper(call, module_call)  # type: ignore[method-assign]

    hooks_enter = torch.autograd.graph.saved_tensors_hooks.__enter__

    def saved_hooks_enter(self: Any) -> Any:
        engine = _engine()
        if engine is not None:
            engine.saved_hooks_used = True
        return hooks_enter(self)

    torch.autograd.graph.saved_tensors_hooks.__enter__ = saved_hooks_enter  # type: ignore[method-assign]



# --- the engine ----------------------------------------------------------------------------


class PythonEngine:
    """Runs a trusted script's top-level statements as real Python, one at a time."""

    trusted = True

    def __init__(self, limits: Any = None, seed: int = 0, filename: str | None = None):
        _install_wrappers()
        self.limits = limits
        self.seed = seed
        self.filename = filename or WINDOW_FILENAME
        self.globals: dict[str, Any] = {
            "__name__": "__main__",
            "__builtins__": builtins,
            "__file__": self.filename if filename else None,
            "__doc__": None,
            "__spec__": None,
            "__package__": None,
            "__loader__": None,
        }
        if filename is None:
            del self.globals["__file__"]
        # as in restricted mode (and the window's lessons): torch is there without an
        # import; the session adds ``dev``, the device picked in the window
        self.globals["torch"] = torch
        self.output = StreamedOutput()
        #: sys.argv while the script runs, as ``python script.py`` would set it
        self.argv: list[str] = [self.filename if filename else ""]
        #: called with each piece of print output as it is written
        self.on_output: Callable[[str], None] | None = None
        # the Session's hooks (see gradviz.core.sandbox.Interpreter for their meaning)
        self.call_hook: Callable[[Any, tuple, dict, Callable[[], Any]], Any] | None = None
        self.module_hook: Callable[[torch.nn.Module, Callable[[], Any]], Any] | None = None
        #: called when the outermost module call starts; returns what ends its tagging
        #: a root module call starts: what tags the nodes its calls build (or None)
        self.module_enter_hook: Callable[[torch.nn.Module], CallTagger | None] | None = None
        self.statement_hook: Callable[[Any, Any], Any] | None = None
        self.format_guard: Any = None
        self.unguarded: Any = None
        self.capturing = False
        self.tensor_writes = 0
        self.dot_requests: list[Any] = []
        self.stop_requested = False
        self.deadline: float | None = None
        self.current_line: int | None = None
        self.block_depth = 0
        self.loops: list[list[Any]] = []
        self.call_lines: list[int] = []
        self._frames: list[tuple[FrameName, FrameScope]] = []
        self.last_text = ""
        self.in_pass = False
        #: the script entered saved_tensors_hooks: gradviz stops reading saved tensors
        #: (that would run the script's unpack hooks; see Session._reads_saved)
        self.saved_hooks_used = False
        self._thread_id: int | None = None
        #: whether the running statement gets its line events from sys.monitoring (the
        #: settrace tracer otherwise: a statement left paused by another session keeps
        #: monitoring on, and its events must not reach this engine twice)
        self.monitored = False
        #: module class -> whether its forward is the script's (see traces_module)
        self._traced_classes: dict[type, bool] = {}
        #: which line of the running statement made which autograd node
        self.line_births = LineBirths()
        #: line -> (block nesting, innermost statement there), from the parsed script
        self._lines: dict[int, tuple[int, ast.stmt]] = {}
        #: line -> the innermost loop around it in its own frame
        self._loops: dict[int, ast.stmt] = {}
        #: line -> the first line of the statement it belongs to
        self._starts: dict[int, int] = {}
        #: frame -> the statement its last paused line belonged to
        self._last_start: dict[int, int] = {}
        #: (frame, loop line) -> [iteration, length or None]; the last line per frame
        self._loop_counts: dict[tuple[int, int], list[Any]] = {}
        self._last_line: dict[int, int] = {}
        self._iteration: tuple[int, int | None] | None = None
        #: modules being called, outermost first, with the exit of their tagging
        #: the tagger of each module call running (the root's, shared by nested calls)
        self._module_stack: list[CallTagger | None] = []

    # --- source ----------------------------------------------------------------------

    def parse_module(self, source: str | bytes) -> list[ast.stmt]:
        if isinstance(source, bytes):
            try:
                text = source.decode("utf-8-sig")
            except UnicodeDecodeError as exc:
                raise ScriptSyntaxError(f"the script is not valid UTF-8: {exc}") from None
        else:
            text = source
        self.last_text = text
        try:
            tree = ast.parse(text, filename=self.filename)
        except SyntaxError as exc:
            raise ScriptSyntaxError(f"{exc.msg} (line {exc.lineno})", line=exc.lineno) from None
        # tracebacks and inspect read the source by file name, as for an imported module
        linecache.cache[self.filename] = (len(text), None, text.splitlines(True), self.filename)
        self._index_lines(tree)
        return list(tree.body)

    def _index_lines(self, tree: ast.Module) -> None:
        """Each line's block nesting and statement (the debugger's depth and 'run to
        backward' read them), iteratively: deep trees must not recurse."""
        lines: dict[int, tuple[int, ast.stmt]] = {}
        loops: dict[int, ast.stmt] = {}
        starts: dict[int, int] = {}
        stack: list[tuple[ast.AST, int, ast.stmt | None]] = [(s, 0, None) for s in tree.body]
        while stack:
            node, depth, loop = stack.pop()
            if isinstance(node, ast.stmt):
                # the lines a statement spans report as that statement (a compound
                # one: its header only); CPython's line events land on any of them
                body = getattr(node, "body", None)
                last = (body[0].lineno - 1 if isinstance(node, _COMPOUND) and body
                        else getattr(node, "end_lineno", None) or node.lineno)
                for covered in range(node.lineno, max(last, node.lineno) + 1):
                    starts[covered] = node.lineno
                if node.lineno not in lines or lines[node.lineno][0] < depth:
                    lines[node.lineno] = (depth, node)
                    if loop is not None:
                        loops[node.lineno] = loop
                    else:
                        loops.pop(node.lineno, None)
            inner_loop: ast.stmt | None
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                inner_loop = None  # a function's body runs in its own frame
            elif isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
                inner_loop = node
            else:
                inner_loop = loop
            for name in ("body", "orelse", "finalbody", "handlers", "cases"):
                for child in getattr(node, name, ()) or ():
                    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        inner = 1  # a call runs the body one block below its caller
                    else:
                        inner = depth + 1 if isinstance(node, _COMPOUND) or name == "handlers" else depth
                    child_loop = inner_loop if name == "body" else loop
                    if isinstance(child, (ast.ExceptHandler, ast.match_case)):
                        stack.extend((c, inner, child_loop) for c in child.body)
                    else:
                        stack.append((child, inner, child_loop))
        self._lines = lines
        self._loops = loops
        self._starts = starts

    # --- statements --------------------------------------------------------------------

    def begin_statement(self) -> None:
        self.line_births.reset()
        self._loop_counts = {}
        self._last_line = {}
        self._last_start = {}
        self._iteration = None
        self.output = StreamedOutput(self.on_output)
        self.block_depth = 0
        self.loops = []
        self.call_lines = []
        self._frames = []
        self.stop_requested = False

    def end_statement(self) -> None:
        self._thread_id = None

    def discount_pause(self, seconds: float) -> None:
        """Pauses cost nothing here: no limit counts time."""

    def loop_iteration(self) -> tuple[int, int | None] | None:
        return self._iteration

    def frame_names(self) -> list[str]:
        return [f.name for f, _ in self._frames]

    def place(self) -> str:
        """Where the running statement is, for a learner: ``line 24, iteration 2 of 3``."""
        where = f"line {self.current_line}" if self.current_line else "the statement"
        loop = self.loop_iteration()
        if loop is not None:
            where += f", iteration {loop[0]}" + (f" of {loop[1]}" if loop[1] else "")
        return where

    def execute(self, stmt: ast.stmt) -> Any:
        """Run one top-level statement as Python; return an expression statement's value."""
        self.current_line = stmt.lineno
        # a ''''text'''' block is a comment in a script (python echoes nothing)
        echoed = isinstance(stmt, ast.Expr) and not (
            isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)
        )
        if echoed:
            assert isinstance(stmt, ast.Expr)
            code = compile(ast.Expression(stmt.value), self.filename, "eval")
        else:
            code = compile(ast.Module([stmt], type_ignores=[]), self.filename, "exec")
        previous = getattr(_ACTIVE, "engine", None)
        _ACTIVE.engine = self
        self._thread_id = threading.get_ident()
        out, err, argv = sys.stdout, sys.stderr, sys.argv
        sys.stdout = self.output
        sys.argv = list(self.argv)  # argparse reads the script's arguments, not gradviz's
        # Always traced, but only the script's own frames get line events: the loop
        # iteration and line of each backward pass, Stop at the next line. Library
        # frames cost nothing with sys.monitoring, one call of _trace each with settrace.
        monitored = self.monitored = _use_monitoring()
        old_trace = sys.gettrace()
        try:
            if monitored:
                _MONITOR.enable(self.filename)
            else:
                sys.settrace(self._trace)
            if echoed:
                return eval(code, self.globals)  # noqa: S307 - the user's own trusted code
            exec(code, self.globals)  # noqa: S102 - the user's own trusted code
            return None
        except BaseException as exc:
            self.current_line = self._failing_line(exc) or stmt.lineno
            raise
        finally:
            if monitored:
                _MONITOR.disable(self.filename)
            else:
                sys.settrace(old_trace)
            sys.stdout, sys.stderr, sys.argv = out, err, argv
            _ACTIVE.engine = previous
            self._module_stack.clear()  # a forward that raised: its tagging ends too

    def _failing_line(self, exc: BaseException) -> int | None:
        """The line of the script's innermost frame in the traceback (of the error
        itself when gradviz's backward recording wrapped it)."""
        exc = getattr(exc, "original", None) or exc
        line = None
        tb = exc.__traceback__
        while tb is not None:
            if tb.tb_frame.f_code.co_filename == self.filename:
                line = tb.tb_lineno
            tb = tb.tb_next
        if line is None and isinstance(exc, SyntaxError) and exc.filename == self.filename:
            return exc.lineno
        return line

    # --- stepping --------------------------------------------------------------------------

    def _returned(self, frame: types.FrameType) -> None:
        """A script frame returns: what its caller's line makes next is that line's."""
        back = frame.f_back
        while back is not None and back.f_code.co_filename != self.filename:
            back = back.f_back  # library frames between (nn.Module.__call__)
        if back is not None:
            self.line_births.at(back.f_lineno)

    def _trace(self, frame: types.FrameType, event: str, arg: Any) -> Any:
        if frame.f_code.co_filename != self.filename:
            return None  # library frames run untraced (stepped over)
        # a new call: a frame freed before may have had this id
        self._last_line.pop(id(frame), None)
        self._last_start.pop(id(frame), None)
        return self._trace_line

    def _trace_line(self, frame: types.FrameType, event: str, arg: Any) -> Any:
        if event != "line":
            if event == "return":
                self._returned(frame)
            return self._trace_line
        if self.stop_requested:
            self.stop_requested = False
            self.current_line = frame.f_lineno
            raise Stopped(f"stopped at {self.place()}: what the statement did so far is kept")
        self._count_iteration(frame)
        self.current_line = frame.f_lineno
        self.line_births.at(frame.f_lineno)
        hook = self.statement_hook
        if hook is None:
            return self._trace_line
        # once a statement: CPython reports a statement spread over lines at each of
        # them, and again at its first line when the expression comes back to it
        start = self._starts.get(frame.f_lineno, frame.f_lineno)
        if self._last_start.get(id(frame)) == start:
            return self._trace_line
        self._last_start[id(frame)] = start
        stack = self._script_frames(frame)
        depth = 0
        names: list[tuple[FrameName, FrameScope]] = []
        call_lines: list[int] = []
        for i, f in enumerate(stack):
            # each frame's line, counted in blocks as the interpreter counts them: a
            # loop or if body one deeper, a called function's body one below its caller
            depth += self._lines.get(self._starts.get(f.f_lineno, f.f_lineno), (0, None))[0]
            if i:
                names.append((FrameName(f.f_code.co_qualname if hasattr(f.f_code, "co_qualname")
                                        else f.f_code.co_name), FrameScope(dict(f.f_locals))))
                call_lines.append(stack[i - 1].f_lineno)
        self.block_depth = depth
        self._frames = names
        self.call_lines = call_lines
        node = self._lines.get(start, (0, None))[1]
        hook(node if node is not None else ast.Pass(lineno=start, col_offset=0), None)
        return self._trace_line

    def _count_iteration(self, frame: types.FrameType) -> None:
        """Keep each running loop's iteration: CPython reports a ``for``/``while``
        header's line on entry and again at every pass back to it."""
        key = id(frame)
        line = frame.f_lineno
        last = self._last_line.get(key)
        self._last_line[key] = line
        info = self._lines.get(line)
        node = info[1] if info else None
        if isinstance(node, (ast.For, ast.While)) and node.lineno == line:
            end = getattr(node, "end_lineno", line) or line
            counts = self._loop_counts.get((key, line))
            if counts is None or last is None or not (line <= last <= end):
                self._loop_counts[(key, line)] = [1, self._loop_length(node, frame)]
            else:
                counts[0] += 1
        loop = self._loops.get(line)
        counts = self._loop_counts.get((key, loop.lineno)) if loop is not None else None
        if counts is not None:
            self._iteration = (counts[0], counts[1])
        else:  # a frame without a loop of its own: the nearest caller's running loop
            self._iteration = self._outer_iteration(frame.f_back)

    def _outer_iteration(self, frame: types.FrameType | None) -> tuple[int, int | None] | None:
        while frame is not None:
            if frame.f_code.co_filename == self.filename:
                loop = self._loops.get(frame.f_lineno)
                if loop is not None:
                    counts = self._loop_counts.get((id(frame), loop.lineno))
                    if counts is not None:
                        return (counts[0], counts[1])
            frame = frame.f_back
        return None

    @staticmethod
    def _loop_length(node: ast.stmt, frame: types.FrameType) -> int | None:
        """How many times a ``for`` loop runs, where reading it has no side effect: the
        iterable is a name or a ``range``/``len`` of names and numbers."""
        if not isinstance(node, ast.For):
            return None
        for part in ast.walk(node.iter):
            if isinstance(part, ast.Call):
                if not (isinstance(part.func, ast.Name) and part.func.id in ("range", "len")
                        and not part.keywords):
                    return None
            elif not isinstance(part, (ast.Name, ast.Constant, ast.Load, ast.expr_context,
                                       ast.UnaryOp, ast.USub, ast.BinOp, ast.operator)):
                return None
        try:
            code = compile(ast.Expression(node.iter), "<gradviz loop>", "eval")
            value = eval(code, frame.f_globals, dict(frame.f_locals))  # noqa: S307 - names only
            return len(value) if isinstance(value, (range, list, tuple, dict, str)) or (
                isinstance(value, torch.Tensor) and value.dim() > 0
            ) else None
        except Exception:  # noqa: BLE001 - no length: the strip shows the iteration only
            return None

    def _script_frames(self, frame: types.FrameType) -> list[types.FrameType]:
        """The script's frames on the stack, outermost first (library frames between
        them are skipped: a forward called through nn.Module.__call__ is one call)."""
        out: list[types.FrameType] = []
        f: types.FrameType | None = frame
        while f is not None:
            if f.f_code.co_filename == self.filename:
                out.append(f)
            f = f.f_back
        out.reverse()
        return out

    def interrupt(self) -> bool:
        """Stop: the running statement ends with Stopped at the script's next line
        (its work so far kept), as the interpreter ends at its next iteration. A long
        native op or library code with no script line in it does not see this: the
        window kills the kernel when no reply comes back promptly. False when nothing
        runs."""
        self.stop_requested = True
        return self._thread_id is not None

    # --- what the wrappers hand over ---------------------------------------------------

    def record(self, func: Any, args: tuple, kwargs: dict, run: Callable[[], Any]) -> Any:
        hook = self.call_hook
        if hook is None:
            return run()
        self.in_pass = True
        try:
            return hook(func, args, kwargs, run)
        finally:
            self.in_pass = False

    def traces_module(self, module: torch.nn.Module) -> bool:
        """Whether a call of ``module`` runs under the line tracer: its forward is the
        script's own, or hooks (which may be) are registered on it or globally."""
        cls = type(module)
        own = self._traced_classes.get(cls)
        if own is None:
            code = getattr(getattr(cls, "forward", None), "__code__", None)
            own = code is not None and code.co_filename == self.filename
            self._traced_classes[cls] = own
        if own:
            return True
        hooks = torch.nn.modules.module
        return bool(
            module._forward_hooks or module._forward_pre_hooks or module._backward_hooks
            or module._backward_pre_hooks or hooks._global_forward_hooks
            or hooks._global_forward_pre_hooks or hooks._global_backward_hooks
            or hooks._global_backward_pre_hooks
        )

    def module_entered(self, module: torch.nn.Module) -> None:
        """A module's forward starts: the outermost one gets its tagger from
        ``module_enter_hook``; nested calls share it."""
        stack = self._module_stack
        if stack:
            tagger = stack[-1]
            stack.append(tagger)
            if tagger is not None:
                tagger.entered()
            return
        if self.in_pass or self.module_enter_hook is None:
            return
        stack.append(self.module_enter_hook(module))

    def module_left(self, module: torch.nn.Module, inputs: Any, output: Any) -> None:
        """A module's forward ended (inner calls first); the root's end tags its nodes."""
        if self._module_stack:
            tagger = self._module_stack.pop()
            if tagger is not None:
                tagger.left(module, output)
