"""A Session: one script, a cursor, a device, and everything observed so far.

The session runs top-level statements one at a time through the sandboxed
:class:`~gradviz.core.sandbox.Interpreter`. After each statement it captures
the autograd graph, memory figures and leaf gradients; every backward call is
recorded node by node. Stepping back replays from the start with the same
seed: cheap for teaching-size scripts, and it keeps side effects honest.

Nothing here touches Qt; a snapshot is plain JSON-able data so the window
can run the session in a separate kernel process.
"""

from __future__ import annotations

import ast
import math
import re
import time
import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from functools import partial
from typing import Any

import numpy as np
import torch

from gradviz.graph.explain import explain
from gradviz.graph.results import ErrorInfo, MemoryFigures

from .backward import BackwardPass, _WithTrace, record_backward
from .capture import (
    CaptureCache,
    GraphDelta,
    IdRegistry,
    NodeNames,
    capture,
    graph_to_json,
    named_tensors,
    read_saved,
    storage_nbytes,
    storage_ptr,
    tensor_value,
)
from .debugger import Debugger, Pause
from .errors import LimitExceeded, SandboxError
from .guards import MUTATIONS, AllocationCounter, Limits, OpGuard, paused
from .modules import CallTagger, ModuleTags, tagging
from .pyengine import PythonEngine
from .sandbox import Interpreter, _check_tree, scrub_addresses

SNAPSHOT_VERSION = 1
#: --trace stops recording (and refuses) past this many statements
MAX_TRACE_STEPS = 200_000
_NAME_ERROR = re.compile(r"name '([A-Za-z_][A-Za-z0-9_]*)' is not defined$")


def _bound_names(node: ast.stmt) -> list[str]:
    """The names a top-level class, def, import or assignment binds."""
    if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
        return [node.name]
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return [(a.asname or a.name).split(".")[0] for a in node.names]
    targets: list[ast.expr] = []
    if isinstance(node, ast.Assign):
        targets = list(node.targets)
    elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
        targets = [node.target]
    elif isinstance(node, (ast.For, ast.With)):
        targets = [node.target] if isinstance(node, ast.For) else [
            i.optional_vars for i in node.items if i.optional_vars is not None
        ]
    names: list[str] = []
    for t in targets:
        names.extend(n.id for n in ast.walk(t) if isinstance(n, ast.Name))
    return names


def _describe_binding(node: ast.stmt, name: str) -> str:
    if isinstance(node, ast.ClassDef):
        return f"class {name}"
    if isinstance(node, ast.FunctionDef):
        return f"def {name}"
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return f"the import of {name}"
    return f"the assignment to {name}"

#: called as progress(done, total) after each statement of a run or a replay
Progress = Callable[[int, int], None]
MAX_VALUE_REPR = 2_000


class DeviceUnavailable(ValueError):
    """The requested device cannot be used on this machine."""


def cuda_unavailable_reason() -> str | None:
    """Why cuda cannot be picked here, or None when it can."""
    if not torch.backends.cuda.is_built():
        return "this PyTorch build has no CUDA support (CPU-only build)"
    if not torch.cuda.is_available():
        return "torch.cuda.is_available() is False: no CUDA device or driver on this machine"
    return None


def check_device(device: str) -> torch.device:
    if device not in ("cpu", "cuda"):
        raise DeviceUnavailable(f"unknown device '{device}': pick cpu or cuda")
    if device == "cuda":
        reason = cuda_unavailable_reason()
        if reason:
            raise DeviceUnavailable(f"cuda is unavailable: {reason}")
    return torch.device(device)


@dataclass
class Statement:
    index: int
    line: int
    end_line: int
    source: str
    node: ast.stmt = field(repr=False)
    check_error: SandboxError | None = field(default=None, repr=False)


@dataclass
class StatementResult:
    index: int
    line: int
    end_line: int
    source: str
    ok: bool
    error: ErrorInfo | None
    warnings: list[str]
    output: str
    value: str | None
    allocated_bytes: int
    memory: MemoryFigures
    duration_s: float
    passes: list[int] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class GradEvent:
    """A leaf's .grad after a backward pass, a zero_() or an assignment."""

    kind: str  # "backward", "zero", "set", "none"
    statement: int
    value: Any
    pass_index: int | None = None


def _memory_row(result: StatementResult) -> dict[str, Any]:
    """A statement's row of the Memory panel."""
    return {"index": result.index, "line": result.line, **asdict(result.memory)}


class Emitter:
    """A tiny callback registry: the core's events, bridged to Qt signals by the UI."""

    def __init__(self) -> None:
        self._callbacks: dict[str, list[Callable[..., None]]] = {}

    def connect(self, event: str, callback: Callable[..., None]) -> None:
        self._callbacks.setdefault(event, []).append(callback)

    def emit(self, event: str, *args: Any) -> None:
        for cb in list(self._callbacks.get(event, [])):
            cb(*args)


#: seconds a restricted statement's graph capture may always read, even when the run's
#: budget is spent (see Session._capture_deadline)
CAPTURE_FLOOR_S = 3.0
#: a saved tensor of more elements keeps only its shape in a backward step's record
SAVED_VALUE_ELEMENTS = 4096
#: trusted mode: backward passes of one statement recorded node by node when nobody
#: is stepping inside it (a 2,000-iteration training loop run with F5)
MAX_RECORDED_PASSES = 8


class Session:
    """Statements, a cursor and a device; step, run, step back, reset, snapshot."""

    def __init__(
        self,
        source: str | bytes = "",
        device: str = "cpu",
        *,
        seed: int = 0,
        limits: Limits | None = None,
        capture_saved: bool = True,
        trusted: bool = False,
        filename: str | None = None,
    ):
        #: trusted: the script runs as real Python (gradviz.core.pyengine), no limits;
        #: restricted (the default here): the allowlist interpreter and its guards
        self.trusted = trusted
        #: the script's file, for tracebacks and the debugger (trusted mode)
        self.filename = filename
        #: trusted mode: called with (text, line) as the running statement prints
        self.output_hook: Callable[[str, int | None], None] | None = None
        #: the most graph nodes a capture reads (None: capture's own MAX_CAPTURE_NODES);
        #: a headless report of a shared script reads fewer (see kernel_server)
        self.capture_max_nodes: int | None = None
        self.limits = limits or Limits()
        self.seed = seed
        self.device = check_device(device)
        self.capture_saved = capture_saved
        self.events = Emitter()
        self.source = ""
        self.statements: list[Statement] = []
        self.parse_error: ErrorInfo | None = None
        #: cursors at which the Zero-grad button was pressed: a replay (step back,
        #: a restarted kernel) presses it again at the same point
        self.zero_points: set[int] = set()
        self._fresh_state()
        self.set_source(source)

    # --- state ------------------------------------------------------------------

    def _fresh_state(self) -> None:
        if self.trusted:
            engine = PythonEngine(self.limits, seed=self.seed, filename=self.filename)
            engine.module_enter_hook = self._enter_module
            engine.on_output = self._on_output
            if getattr(self, "source", ""):
                engine.parse_module(self.source)  # its line index, for the debugger
            self.interpreter: Any = engine
        else:
            self.interpreter = Interpreter(self.limits, seed=self.seed)
        self.interpreter.globals["dev"] = self.device
        self.interpreter.call_hook = self._on_interpreter_backward
        self.interpreter.module_hook = self._on_module_call
        #: graph node id -> qualified name of the module whose forward built it
        #: which module built which node, by the node's birth (holds no node alive)
        self.module_tags = ModuleTags()
        self.registry = IdRegistry()
        #: what capture read of each grad_fn node, reused while nothing could change it
        self._capture_cache = CaptureCache()
        self.cursor = 0
        self.results: list[StatementResult] = []
        self.passes: list[BackwardPass] = []
        #: (graph, node id -> JSON, edge -> JSON) as the last snapshot sent them, the
        #: changes captured since (None: rebuild), and what the last snapshot changed
        self._json_store: tuple[Any, dict[str, Any], dict[Any, Any]] | None = None
        #: a snapshot that is not ``live`` handed out the store's dicts: they are never
        #: changed again (a glow going off copies the dict), until the store is rebuilt
        self._json_lent = False
        self._pending_changes: GraphDelta | None = None
        self._unsent: GraphDelta | None = None
        #: id -> (result, backward pass, grad event or memory figures, its JSON) as the
        #: last snapshot made it
        self._json_made: dict[int, tuple[Any, Any]] = {}
        self.grad_events: dict[str, list[GradEvent]] = {}
        self._grad_enabled = True
        #: --trace: one entry per executed statement at any depth, in order
        self.trace_steps: list[dict[str, Any]] | None = None
        #: the debugger running a statement on its worker thread, when one is paused
        self.debugger: Debugger | None = None
        #: names a failed statement would have bound -> (its line, what it was)
        self._failed_names: dict[str, tuple[int, str]] = {}
        #: make_dot calls: {label, line, statement, roots, params}, roots kept alive so
        #: the canvas draws their graphs like torchviz would
        self.dot_graphs: list[dict[str, Any]] = []
        #: the default device and dtype the script set (None: the process's)
        self._default_device: torch.device | None = None
        self._default_dtype: torch.dtype | None = None
        self._current_index: int | None = None
        self._current_passes: list[int] = []
        #: trusted mode: backward passes of the running statement past MAX_RECORDED_PASSES
        self._unrecorded_passes = 0
        #: id(module) -> (module, the name the script knows it by), for this statement
        self._module_names: dict[int, tuple[torch.nn.Module, dict[int, Any] | None]] = {}
        self._last_graph_nodes: set[str] = set()
        self._last_graph_edges: set[tuple[str, str]] = set()
        self._capture: Any = None
        self._last_leaf_grads: dict[str, Any] = {}
        torch.manual_seed(self.seed)
        np.random.seed(self.seed)

    @property
    def _reads_saved(self) -> bool:
        """Whether gradviz reads saved tensors. Not once a trusted script has used
        saved_tensors_hooks: reading a saved tensor runs its unpack hook, real Python
        there, and gradviz looking must not run the script's code (a hook that prints
        or counts would print or count twice)."""
        return self.capture_saved and not getattr(self.interpreter, "saved_hooks_used", False)

    @property
    def globals(self) -> dict[str, Any]:
        return self.interpreter.globals

    def set_source(self, source: str | bytes) -> None:
        """Replace the script; state is reset (call run_to/step to re-run)."""
        self.parse_error = None
        self.statements = []
        self.zero_points = set()
        try:
            body = self.interpreter.parse_module(source)
        except SandboxError as exc:
            self.source = source if isinstance(source, str) else source.decode("utf-8", "replace")
            self.parse_error = ErrorInfo(
                type=type(exc).__name__, message=str(exc), line=exc.line, limit=exc.limit
            )
            self.reset()
            return
        self.source = self.interpreter.last_text
        lines = self.source.splitlines()
        for i, node in enumerate(body):
            end = getattr(node, "end_lineno", node.lineno) or node.lineno
            text = "\n".join(lines[node.lineno - 1 : end])
            check_error = None
            try:
                if not self.trusted:
                    _check_tree(node, self.limits)
            except SandboxError as exc:
                check_error = exc
            self.statements.append(Statement(i, node.lineno, end, text, node, check_error))
        self.reset()

    def set_device(self, device: str) -> None:
        """Switch device; the caller re-runs (state on the old device is dropped)."""
        self.device = check_device(device)
        self.reset()

    def reset(self) -> None:
        self.close()
        self._fresh_state()
        self.events.emit("reset")

    def close(self) -> None:
        """End a paused statement, if one is, and its worker thread: a session reset or
        dropped while paused otherwise keeps that thread waiting for ever, holding the
        paused frame (the old run's tensors and graph) and, in trusted mode, keeping
        line events on for every later statement in the process."""
        if getattr(self, "debugger", None) is None:
            return
        try:
            self.stop_debugging()
        except Exception:  # noqa: BLE001 - the statement's own error: it is dropped anyway
            self.debugger = None

    # --- running ----------------------------------------------------------------

    @property
    def at_end(self) -> bool:
        return self.cursor >= len(self.statements)

    @property
    def failed(self) -> bool:
        return bool(self.results) and not self.results[-1].ok

    def step(self) -> StatementResult | None:
        """Run the statement at the cursor. A failing statement still advances nothing."""
        if self.at_end:
            return None
        result = self._execute(self.cursor)
        if result.ok:
            self.cursor += 1
            if self.cursor in self.zero_points:
                self._zero_leaf_grads()
        self.events.emit("statement_executed", result)
        return result

    def skip_failed(self) -> None:
        """Move past a failed statement (``--keep-going``)."""
        if self.results and not self.results[-1].ok and not self.at_end:
            self.cursor += 1

    def skip_current(self) -> None:
        """Move past the statement at the cursor without running it (after a Stop)."""
        if not self.at_end:
            self.cursor += 1

    def run_to_end(self, keep_going: bool = False, progress: Progress | None = None) -> list[StatementResult]:
        return self._run_until(len(self.statements), keep_going, progress)

    def run_to(self, index: int, progress: Progress | None = None) -> list[StatementResult]:
        """Run until ``index`` statements have run (the cursor reaches ``index``).

        A target behind the cursor resets and replays from the start.
        """
        if index < self.cursor:
            self.reset()
        return self._run_until(index, False, progress)

    def _run_until(
        self, index: int, keep_going: bool, progress: Progress | None
    ) -> list[StatementResult]:
        """Step until the cursor reaches ``index``; stop at a failure unless ``keep_going``."""
        out: list[StatementResult] = []
        total = min(index, len(self.statements))
        while self.cursor < total:
            result = self.step()
            assert result is not None
            out.append(result)
            if progress is not None:
                progress(self.cursor, total)
            if not result.ok:
                if not keep_going:
                    break
                self.skip_failed()
        return out

    def run_to_line(self, line: int, progress: Progress | None = None) -> list[StatementResult]:
        """Run every statement that starts before ``line`` (run to cursor)."""
        target = sum(1 for s in self.statements if s.line < line)
        for s in self.statements:
            if s.line <= line <= s.end_line:
                target = s.index + 1
        return self.run_to(target, progress)

    def step_back(self, progress: Progress | None = None) -> list[StatementResult]:
        """Undo the last statement by replaying all before it from a fresh start."""
        target = max(self.cursor - 1, 0)
        self.reset()
        return self.run_to(target, progress)

    def _execute(self, index: int) -> StatementResult:
        stmt = self.statements[index]
        interp = self.interpreter
        budget_error: LimitExceeded | None = None
        try:
            interp.begin_statement()
        except LimitExceeded as exc:  # the run's budget is spent: this statement is refused
            budget_error = exc
        counter = AllocationCounter()
        # Trusted: no guard at all. Building one installs process-wide offset checks
        # below the dispatcher (guards.install_offset_checks) that real Python must not
        # meet; and any dispatch mode would change the graph autograd records.
        guard = None if self.trusted else OpGuard(self.limits, counter, interp.deadline)
        interp.format_guard = guard
        self._current_index = index
        self._current_passes = []
        self._unrecorded_passes = 0
        self._module_names = {}
        error: BaseException | None = None
        value: Any = None
        host_grad_mode = torch.is_grad_enabled()
        cuda = self.device.type == "cuda"
        if cuda:
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
        # The kernel forwards phases to its parent, whose watchdog stops a phase
        # that outlives the time limit whatever it is doing (C code included).
        self.events.emit("phase", "statement", {"index": index, "line": stmt.line})
        start = time.perf_counter()
        storages_before: dict[int, int] = {}
        caught = _WarningLog()
        with warnings.catch_warnings():
            warnings.simplefilter("always")
            warnings.showwarning = caught.add  # restored by catch_warnings
            # as in a plain script: deprecations inside torch's own code are not the
            # learner's (forward_ad trips torch.jit's), the ones their calls trigger are
            warnings.filterwarnings("ignore", category=DeprecationWarning, module=r"torch\.")
            torch.set_grad_enabled(self._grad_enabled)
            host_defaults = self._enter_script_defaults()
            try:
                if stmt.check_error is not None:
                    raise stmt.check_error
                if budget_error is not None:
                    raise budget_error
                if self.trusted:
                    # real Python, as python runs it: no dispatch mode (it would
                    # change the graph autograd records), no limits
                    storages_before = _live_storages(self.globals)
                    value = interp.execute(stmt.node)
                else:
                    assert guard is not None  # restricted statements run under one
                    with guard:
                        value = interp.execute(stmt.node)
            except _WithTrace as exc:
                error = exc.original
            except RecursionError:
                error = LimitExceeded(
                    "refused: the statement recursed too deeply (gradviz limit max_call_depth)",
                    limit="max_call_depth",
                )
            except MemoryError:
                error = LimitExceeded("refused: out of memory", limit="max_op_bytes")
            except Exception as exc:  # noqa: BLE001 - the user's error is the result
                error = exc
            finally:
                self._leave_script_defaults(host_defaults)
                self._grad_enabled = torch.is_grad_enabled()
                torch.set_grad_enabled(host_grad_mode)
        duration = time.perf_counter() - start
        if self.trusted:
            # what the statement left alive on new storages (temporaries it freed
            # itself are not seen without a dispatch mode)
            counter.allocated_bytes = sum(
                n for ptr, n in _live_storages(self.globals).items()
                if ptr not in storages_before
            )
        cuda_figures: dict[str, int] = {}
        if cuda:
            torch.cuda.synchronize()
            cuda_figures = {
                "cuda_allocated": torch.cuda.memory_allocated(),
                "cuda_max_allocated": torch.cuda.max_memory_allocated(),
                "cuda_reserved": torch.cuda.memory_reserved(),
            }

        value_repr = None
        # torch.manual_seed(0) returns the generator: its repr (an address) says nothing
        if (
            error is None and value is not None and isinstance(stmt.node, ast.Expr)
            and not isinstance(value, torch.Generator)
        ):
            with paused(guard):
                try:
                    # torch's reprs can call a script class's methods (a ModuleList
                    # subclass's __iter__): no script code runs outside its statement
                    interp.capturing = True
                    try:
                        shown = repr(value)[:MAX_VALUE_REPR]
                        # real Python shows real addresses; a shared script learns none
                        value_repr = shown if self.trusted else scrub_addresses(shown)
                    finally:
                        interp.capturing = False
                except Exception as exc:  # noqa: BLE001
                    value_repr = f"<unprintable: {exc}>"

        self.events.emit("phase", "capture", {"index": index, "line": stmt.line})
        self._take_dot_requests(index)
        cap = self._capture_graph(index, self._capture_deadline(time.perf_counter() - start))
        memory = MemoryFigures(
            allocated_bytes=counter.allocated_bytes, saved_bytes=cap.saved_bytes,
            live_bytes=cap.live_bytes, **cuda_figures,
        )
        self._track_grad_changes(index)
        interp.end_statement()

        result = StatementResult(
            index=index,
            line=stmt.line,
            end_line=stmt.end_line,
            source=stmt.source,
            ok=error is None,
            error=self._error_info(error, stmt) if error is not None else None,
            warnings=_format_warnings(caught) + ([f"gradviz: {cap.cut}"] if cap.cut else []) + (
                [
                    f"gradviz: recorded the first {len(self._current_passes)} of "
                    f"{len(self._current_passes) + self._unrecorded_passes:,} backward passes "
                    "of this statement node by node; the rest ran unrecorded (step into the "
                    "loop to record the passes it reaches)"
                ] if self._unrecorded_passes else []
            ),
            output=interp.output.text(),
            value=value_repr,
            allocated_bytes=counter.allocated_bytes,
            memory=memory,
            duration_s=duration,
            passes=list(self._current_passes),
        )
        self.results.append(result)
        self._current_index = None
        return result

    def _error_info(self, error: BaseException, stmt: Statement) -> ErrorInfo:
        message = str(error)
        line = getattr(error, "line", None) or self.interpreter.current_line or stmt.line
        if isinstance(error, NameError):
            missing = _NAME_ERROR.match(message)
            failed = self._failed_names.get(missing.group(1)) if missing else None
            if failed is not None:
                # one clear error at the refused class or def; its users say they depend on it
                message = (
                    f"{message}: it depends on line {failed[0]} ({failed[1]}), which failed; "
                    "fix that line first"
                )
        for name in _bound_names(stmt.node):
            self._failed_names.setdefault(name, (stmt.line, _describe_binding(stmt.node, name)))
        return ErrorInfo(
            type=type(error).__name__,
            message=message,
            explanation=explain(message),
            line=line,
            limit=getattr(error, "limit", None),
        )

    # --- torchviz.make_dot ------------------------------------------------------------

    def _take_dot_requests(self, index: int) -> None:
        requests = self.interpreter.dot_requests
        self.interpreter.dot_requests = []
        for line, roots, params in requests:
            label = f"make_dot@{line}" if len(roots) == 1 else None
            entry = {
                "line": line,
                "statement": index,
                "labels": [
                    label or f"make_dot@{line}[{i}]" for i in range(len(roots))
                ],
                "roots": roots,
                "params": params,
            }
            # a later make_dot on the same line (a loop) replaces the earlier one
            self.dot_graphs = [d for d in self.dot_graphs if d["line"] != line] + [entry]

    def _capture_variables(self) -> dict[str, Any]:
        """The script's globals, plus the roots make_dot asked for (often temporaries
        such as ``y.mean()`` that no variable holds)."""
        local = self.frame_locals()
        if not self.dot_graphs and not local:
            return self.globals
        merged = dict(self.globals)
        merged.update(local)
        for d in self.dot_graphs:
            for label, root in zip(d["labels"], d["roots"]):
                merged[label] = root
        return merged

    def _dot_json(self, d: dict[str, Any]) -> dict[str, Any]:
        def node_of(root: torch.Tensor) -> str | None:
            fn = root.grad_fn
            return self.registry.node_id(fn, None)[0] if fn is not None else None

        return {
            "line": d["line"],
            "statement": d["statement"],
            "roots": list(d["labels"]),
            "root_nodes": [node_of(root) for root in d["roots"]],
            "params": {
                name: self.registry.tensor_id(t, None)[0] for name, t in d["params"].items()
            },
        }

    # --- process-wide defaults a script may set ------------------------------------

    def _enter_script_defaults(self) -> tuple[torch.device, torch.dtype]:
        """Apply the default device and dtype this script set in earlier statements;
        return the process's, to give back after the statement."""
        host = (torch.get_default_device(), torch.get_default_dtype())
        if self._default_device is not None:
            torch.set_default_device(self._default_device)
        if self._default_dtype is not None:
            torch.set_default_dtype(self._default_dtype)
        return host

    def _leave_script_defaults(self, host: tuple[torch.device, torch.dtype]) -> None:
        """Keep what the statement set as the script's, and give the process its own
        defaults back (another script, gradviz's own code, capture and a host program
        using the library API never see them)."""
        device, dtype = torch.get_default_device(), torch.get_default_dtype()
        if self._default_device is not None or device != host[0]:
            self._default_device = device
            # cpu is torch's own default: unset it rather than install a device mode
            torch.set_default_device(None if host[0].type == "cpu" else host[0])
        if self._default_dtype is not None or dtype != host[1]:
            self._default_dtype = dtype
            torch.set_default_dtype(host[1])

    # --- graph, gradients ---------------------------------------------------------

    def _saved_values(self, fn: Any) -> list[dict[str, Any]] | None:
        """A node's saved tensors as its backward step is about to use them (the
        inspector shows them once the pass freed them). Like capture, this reads them
        without running the script's unpack hooks; big tensors keep their shape only."""
        self.interpreter.capturing = True
        try:
            tensors, _, freed = read_saved(fn)
        except Exception:  # noqa: BLE001 - a node gradviz cannot read is left unrecorded
            return None
        finally:
            self.interpreter.capturing = False
        if freed or not tensors:
            return None
        out = []
        for name, t in tensors.items():
            if not isinstance(t, torch.Tensor):
                continue
            try:  # a value gradviz cannot read is left out; the pass itself must run
                value = tensor_value(t) if t.numel() <= SAVED_VALUE_ELEMENTS else None
                out.append({"label": name, "value": value, "shape": list(t.shape), "vars": []})
            except Exception:  # noqa: BLE001
                continue
        return out or None

    def _capture_deadline(self, worked_s: float) -> float | None:
        """When the capture after a restricted statement must stop reading the graph:
        what is left of the run's budget once this statement's work is counted, and
        never less than CAPTURE_FLOOR_S (the picture of what was read is still shown,
        cut, with why). A statement that used its whole time on a 400,000-node chain
        was followed by a capture of 20 s more, outside any budget. Trusted: none."""
        if self.trusted:
            return None
        interp = self.interpreter
        total = getattr(interp, "max_run_seconds", None)
        if total is None:
            return None
        left = float(total) - float(getattr(interp, "run_seconds", 0.0)) - worked_s
        return time.monotonic() + max(left, CAPTURE_FLOOR_S)

    def _capture_graph(self, index: int | None, deadline: float | None = None) -> Any:
        # reading saved tensors must not run the script's unpack hooks: gradviz is
        # looking, the script is not (a hook that prints would print twice)
        self.interpreter.capturing = True
        births = getattr(self.interpreter, "line_births", None)
        self.registry.line_of = births.line_of if births is not None else None
        try:
            cap = capture(
                self._capture_variables(),
                self.registry,
                statement=index,
                previous_nodes=self._last_graph_nodes,
                previous_edges=self._last_graph_edges,
                include_saved=self._reads_saved,
                cache=self._capture_cache,
                token=self._capture_token(),
                module_tags=self.module_tags,
                frame_prefixes=self._frame_prefixes(),
                deadline=deadline,
                max_nodes=self.capture_max_nodes,
            )
        finally:
            self.interpreter.capturing = False
        self._note_changes(cap)
        self.module_tags.settle()  # the calls' ranges were read into tags by birth
        delta = cap.changes
        if delta is None:
            self.module_tags.keep_only(cap.node_objects.values())
            self._last_graph_nodes = set(cap.graph.nodes)
            self._last_graph_edges = set(cap.graph.edges)
        else:  # updated in place: only tensor nodes went, and what was added came
            self._last_graph_nodes.difference_update(delta.removed)
            self._last_graph_nodes.update(delta.nodes)
            self._last_graph_edges.difference_update(delta.removed_edges)
            self._last_graph_edges.update(delta.edges)
        self._capture = cap
        return cap

    def _frame_prefixes(self) -> tuple[str, ...]:
        """How the paused frame's locals are named (``Net.forward.``), as frame_locals names them."""
        frames = self.interpreter._frames
        if self.debugger is None or not frames:
            return ()
        return (f"{frames[-1][0].name}.",)

    def _capture_token(self) -> tuple[Any, ...]:
        """Changes whenever a saved tensor may have changed since the last capture: a
        mutating op (in-place, out=, an optimizer's step), a backward pass (it frees
        saved tensors), a ``.data``/``.grad`` write."""
        return (MUTATIONS.count, len(self.passes), self.interpreter.tensor_writes, self._reads_saved)

    def _leaf_grads(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, t in named_tensors(self.globals).items():
            if t.is_leaf and t.requires_grad:
                out[name] = tensor_value(t.grad)
        return out

    def _track_grad_changes(self, index: int) -> None:
        """Record grads changed outside backward: zero_(), ``x.grad = None``, ``-=``."""
        current = self._leaf_grads()
        for name, value in current.items():
            before = self._last_leaf_grads.get(name)
            if value == before or name not in self._last_leaf_grads and value is None:
                continue
            if self._current_passes and self._pass_explains(name, value):
                continue
            if value is None:
                kind = "none"
            elif _all_zero(value):
                kind = "zero"
            else:
                kind = "set"
            self.grad_events.setdefault(name, []).append(GradEvent(kind, index, value))
        self._last_leaf_grads = current

    def _pass_explains(self, name: str, value: Any) -> bool:
        last = self.passes[self._current_passes[-1]]
        return last.leaf_grads.get(name) == value

    # --- stepping inside statements ------------------------------------------------------

    def enable_trace(self) -> None:
        """Record every statement at any depth (``gradviz run --trace``)."""
        self.trace_steps = []
        self._update_statement_hook()

    def _update_statement_hook(self) -> None:
        wanted = self.trace_steps is not None or self.debugger is not None
        self.interpreter.statement_hook = self._on_statement if wanted else None

    def _on_statement(self, stmt: ast.stmt, scope: Any) -> dict[str, Any] | None:
        interp = self.interpreter
        loop = interp.loop_iteration()
        frames = interp.frame_names()
        entry = {
            "line": stmt.lineno,
            "depth": interp.block_depth,
            "iteration": loop[0] if loop else None,
            "frame": frames[-1] if frames else None,
            "ok": True,
        }
        if self.trace_steps is not None:
            if len(self.trace_steps) >= MAX_TRACE_STEPS:
                raise LimitExceeded(
                    f"refused: the trace passed {MAX_TRACE_STEPS:,} statements "
                    "(gradviz limit on --trace)",
                    limit="max_iterations",
                )
            self.trace_steps.append(entry)
        debugger = self.debugger
        if debugger is not None and debugger.should_pause(stmt, interp.block_depth):
            debugger.park(
                Pause(
                    statement=self._current_index if self._current_index is not None else -1,
                    line=stmt.lineno,
                    depth=interp.block_depth,
                    iteration=loop[0] if loop else None,
                    iterations=loop[1] if loop else None,
                    frames=frames,
                    call_lines=list(interp.call_lines),
                )
            )
        return entry

    def debug(self, mode: str, breakpoints: frozenset[int] = frozenset()) -> Pause | StatementResult | None:
        """Step inside the statement at the cursor (or the paused one): a Pause while
        it is in the middle, its StatementResult once it ends (None at the end)."""
        if self.debugger is None:
            if self.at_end:
                return None
            self.debugger = Debugger(self)
            self._update_statement_hook()
        try:
            outcome = self.debugger.resume(mode, breakpoints)
        except BaseException:
            self._end_debugging()
            raise
        if not isinstance(outcome, Pause):
            self._end_debugging()
        return outcome

    def stop_debugging(self) -> StatementResult | None:
        """End a paused statement where it stands: the state so far is kept and the
        statement is marked stopped (Step runs it again from its start)."""
        if self.debugger is None:
            return None
        try:
            return self.debugger.stop()
        finally:
            self._end_debugging()

    def _end_debugging(self) -> None:
        self.debugger = None
        self._update_statement_hook()

    def capture_pause(self) -> None:
        """Capture the graph and tensors as they stand at a pause, the paused frame's
        locals beside the globals: the next :meth:`snapshot` shows them."""
        self._capture_graph(self._current_index)

    def pause_snapshot(self) -> dict[str, Any]:
        """The state at a pause (:meth:`capture_pause`, then :meth:`snapshot`)."""
        self.capture_pause()
        return self.snapshot()

    @property
    def paused(self) -> Pause | None:
        return self.debugger.pause if self.debugger is not None else None

    def frame_locals(self) -> dict[str, Any]:
        """The paused frame's local variables, named ``Function.name`` (empty at the top)."""
        frames = self.interpreter._frames
        if self.debugger is None or not frames:
            return {}
        fn, scope = frames[-1]
        return {f"{fn.name}.{k}": v for k, v in scope.names.items()}

    def _on_interpreter_backward(
        self, func: Any, args: tuple, kwargs: dict, run: Callable[[], Any]
    ) -> Any:
        if self.trusted and self.debugger is None and (
            len(self._current_passes) >= MAX_RECORDED_PASSES
        ):
            # a training loop run as Python: its first passes are recorded node by node,
            # the rest run as they would without gradviz (each recording costs a Python
            # hook per node); stepping inside the loop records every pass it reaches
            self._unrecorded_passes += 1
            return run()
        names = NodeNames()  # tensors by id (the namespace holds them), nodes held
        for name, t in named_tensors(self.globals).items():
            names.setdefault(id(t), []).append(name)
            if t.grad_fn is not None:
                names.add(t.grad_fn, name)
        try:
            result, trace = record_backward(
                func, args, kwargs, self._unguarded(run, _backward_roots(func, args, kwargs)),
                self.registry, names,
                self._current_index,
                read_saved_values=self._saved_values if self._reads_saved else None,
            )
        except _WithTrace as exc:
            self._place_pass(exc.trace)
            self.passes.append(exc.trace)
            self._current_passes.append(len(self.passes) - 1)
            raise
        if trace.kind == "backward":
            trace.leaf_grads = self._leaf_grads()
            pass_index = len(self.passes)
            for name in sorted(self._touched_leaves(trace)):
                if name in trace.leaf_grads:
                    self.grad_events.setdefault(name, []).append(
                        GradEvent("backward", self._current_index or 0, trace.leaf_grads[name], pass_index)
                    )
            self._last_leaf_grads = dict(trace.leaf_grads)
        self._place_pass(trace)
        self.passes.append(trace)
        self._current_passes.append(len(self.passes) - 1)
        return result

    def _place_pass(self, trace: BackwardPass) -> None:
        interp = self.interpreter
        trace.line = interp.current_line
        loop = interp.loop_iteration()
        trace.iteration = loop[0] if loop else None

    def _unguarded(self, run: Callable[[], Any], roots: list[Any]) -> Callable[[], Any]:
        """Run the autograd engine outside the op guard.

        With any dispatch mode active the engine sums gradients out of place, so
        ``x.grad._version`` would read 0 where PyTorch gives 2: gradviz must not
        change what autograd does. Script code the engine calls back (hooks,
        autograd.Function.backward) runs under the guard again (see
        Interpreter.call_script_function); the statement's allocation figure
        counts the gradient storage the pass created.
        """
        interp = self.interpreter
        guard = interp.format_guard
        if guard is None or not isinstance(guard, OpGuard):
            return run

        def call() -> Any:
            self._check_gradient_sizes(roots)
            before = self._grad_storages()
            guard.__exit__(None, None, None)
            interp.unguarded = guard
            try:
                result = run()
            finally:
                interp.unguarded = None
                guard.__enter__()
            seen = set(before)
            fresh = 0
            outputs = result if isinstance(result, (tuple, list)) else [result]
            grads = [t for t in outputs if isinstance(t, torch.Tensor)]
            grads += [g for g in self._readable_grads() if g is not None]
            for g in grads:
                ptr = g.untyped_storage().data_ptr() if g.device.type != "meta" else 0
                if ptr and ptr not in seen:
                    seen.add(ptr)
                    fresh += g.untyped_storage().nbytes()
            guard.counter.allocated_bytes += fresh
            return result

        return call

    def _check_gradient_sizes(self, roots: list[Any]) -> None:
        """The guard does not see the engine's ops, so size what they will make first:
        each node receives gradients shaped like its forward outputs (an expanded view
        of 10**9 elements gets a dense gradient of 10**9 elements)."""
        limit = self.limits.max_op_elements
        # the nodes seen are held: an id alone could be a later node's (its object made
        # at a freed one's address), and that node would go unchecked
        seen: dict[int, Any] = {}
        stack = [t.grad_fn for t in roots if isinstance(t, torch.Tensor) and t.grad_fn is not None]
        while stack:
            node = stack.pop()
            if node is None or id(node) in seen:
                continue
            seen[id(node)] = node
            for meta in getattr(node, "_input_metadata", ()):
                try:
                    numel = math.prod(int(d) for d in meta.shape)
                except (TypeError, ValueError, AttributeError):
                    continue
                if numel > limit:
                    raise LimitExceeded(
                        f"refused: backward would make a {numel:,}-element gradient for "
                        f"{type(node).__name__}; the limit is {limit:,} (gradviz limit "
                        "max_op_elements)",
                        limit="max_op_elements",
                    )
            stack.extend(fn for fn, _ in node.next_functions if fn is not None)

    def _readable_grads(self) -> list[Any]:
        """``.grad`` of the tensors that keep one (leaves, retain_grad): reading it on any
        other tensor makes PyTorch warn, and gradviz must not add warnings of its own."""
        return [
            t.grad for t in named_tensors(self.globals).values()
            if t.is_leaf or (t.requires_grad and t.retains_grad)
        ]

    def _grad_storages(self) -> set[int]:
        out: set[int] = set()
        for g in self._readable_grads():
            if g is not None and g.device.type != "meta":
                out.add(g.untyped_storage().data_ptr())
        return out

    def _on_module_call(self, module: torch.nn.Module, run: Callable[[], Any]) -> Any:
        """Tag the nodes a module's forward builds with its name (``model.0.linear``)."""
        name = self._module_name(module)
        if name is None:
            return run()
        with tagging(module, self.module_tags.tag, prefix=name):
            return run()

    def _on_output(self, text: str) -> None:
        hook = self.output_hook
        if hook is not None:
            hook(text, self.interpreter.current_line)

    def _enter_module(self, module: torch.nn.Module) -> CallTagger | None:
        """The trusted engine's root module call starts: what tags the nodes it and
        its submodules build, as _on_module_call does around a call."""
        known = self._module_names.get(id(module))
        if known is not None and known[0] is module:
            names = known[1]  # a loop calls the same model again: one lookup a statement
        else:
            name = self._module_name(module)
            names = CallTagger.names_under(module, name) if name is not None else None
            self._module_names[id(module)] = (module, names)
        return None if names is None else CallTagger(names, self.module_tags)

    def _module_name(self, module: torch.nn.Module) -> str | None:
        for name, value in self.globals.items():
            if value is module:
                return name
        for name, value in self.globals.items():
            if isinstance(value, torch.nn.Module):
                for qualname, sub in torch.nn.Module.named_modules(value):
                    if sub is module and qualname:
                        return f"{name}.{qualname}"
        return None

    def _touched_leaves(self, trace: BackwardPass) -> set[str]:
        touched: set[str] = set()
        for step in trace.steps:
            if step.label == "AccumulateGrad":
                touched.update(step.vars)
        return touched

    # --- snapshot -----------------------------------------------------------------

    def grad_history(self) -> dict[str, list[Any]]:
        """Leaf name -> its .grad after every backward pass (the accumulation panel)."""
        return {
            name: [e.value for e in events if e.kind == "backward"]
            for name, events in self.grad_events.items()
            if any(e.kind == "backward" for e in events)
        }

    def snapshot(self, live: bool = False) -> dict[str, Any]:
        """Everything the panels show, as JSON-able data (no torch objects).

        ``live``: for a caller that is done with the snapshot before the session runs
        on (the kernel sends it at once): its graph's node and edge dicts are the
        session's own, and a later step turns their "new" glow off in place (the step
        after a run: 20,000 flags flipped, not 20,000 dicts copied). Otherwise the
        snapshot never changes after it is made."""
        cap = self._capture if self._capture is not None else self._capture_graph(None)
        executed = {r.index: r for r in self.results}
        dot_graphs = [self._dot_json(d) for d in self.dot_graphs]
        statements = []
        for s in self.statements:
            r = executed.get(s.index)
            statements.append(
                {
                    "index": s.index,
                    "line": s.line,
                    "end_line": s.end_line,
                    "source": s.source,
                    "ran": r is not None,
                }
            )
        totals = {
            "allocated_bytes": sum(r.allocated_bytes for r in self.results),
            "saved_bytes": cap.saved_bytes,
            "live_bytes": cap.live_bytes,
        }
        if self.device.type == "cuda":
            totals["cuda_allocated"] = torch.cuda.memory_allocated()
            totals["cuda_max_allocated"] = torch.cuda.max_memory_allocated()
            totals["cuda_reserved"] = torch.cuda.memory_reserved()
        kept, made = self._json_maker()
        snap = {
            "version": SNAPSHOT_VERSION,
            "device": str(self.device),
            "cursor": self.cursor,
            "parse_error": asdict(self.parse_error) if self.parse_error else None,
            "statements": statements,
            "results": [made(r, r.to_json) for r in self.results],
            "tensors": {name: info.to_json() for name, info in cap.tensors.items()},
            "graph": self._graph_json(cap, live),
            # a pass is complete when it joins self.passes: its JSON is made once
            "backward_passes": [made(p, p.to_json) for p in self.passes],
            "make_dot": dot_graphs,
            "paused": self.paused.to_json() if self.paused is not None else None,
            "frame_locals": sorted(self.frame_locals()),
            "grad_history": self.grad_history(),
            "grad_events": {
                name: [made(e, partial(asdict, e)) for e in events]
                for name, events in self.grad_events.items()
            },
            "memory": {
                "statements": [made(r.memory, partial(_memory_row, r)) for r in self.results],
                "totals": totals,
            },
        }
        self._json_made = kept
        return snap

    def _json_maker(self) -> tuple[dict[int, tuple[Any, Any]], Callable[[Any, Callable[[], Any]], Any]]:
        """A result's, a backward pass's, a grad event's or a memory row's JSON, made
        once: they never change once made (asdict deep-copies the values, the most of a
        lesson step's snapshot). What the snapshot uses is kept for the next one, the
        rest let go."""
        before = self._json_made
        kept: dict[int, tuple[Any, Any]] = {}

        def made(obj: Any, make: Callable[[], Any]) -> Any:
            known = before.get(id(obj))
            if known is None or known[0] is not obj:
                known = (obj, make())
            kept[id(obj)] = known
            return known[1]

        return kept, made

    def _graph_json(self, cap: Any, live: bool = False) -> dict[str, Any]:
        """The graph as JSON lists, kept between snapshots: after captures that updated
        the graph in place only their changed nodes and edges are rewritten (those whose
        glow alone went off: their flag, in place, unless a snapshot lent them out); what
        they added comes last, in the order it came (:meth:`take_graph_changes` says
        what changed since the kernel last asked)."""
        store = self._json_store
        pending = self._pending_changes
        if store is None or store[0] is not cap.graph or pending is None:
            data = graph_to_json(cap.graph)
            nodes = {n["id"]: n for n in data["nodes"]}
            edges = {(e["source"], e["target"]): e for e in data["edges"]}
            self._json_store = (cap.graph, nodes, edges)
            self._json_lent = False
            self._unsent = None
        else:
            _, nodes, edges = store
            node_data, succ = cap.graph._node, cap.graph._succ
            for n in pending.removed:
                nodes.pop(n, None)
            for n in pending.nodes:
                nodes[n] = {"id": n, **node_data[n]}
            for key in pending.removed_edges:
                edges.pop(key, None)
            for u, v in pending.edges:
                edges[(u, v)] = {"source": u, "target": v, **succ[u][v]}
            if self._json_lent:
                for n in pending.renewed:
                    nodes[n] = {"id": n, **node_data[n]}
                for u, v in pending.renewed_edges:
                    edges[(u, v)] = {"source": u, "target": v, **succ[u][v]}
            else:
                # a renewal is a glow turned off (GraphDelta.renewed): the flag alone
                for n in pending.renewed:
                    node = nodes.get(n)
                    if node is None:
                        nodes[n] = {"id": n, **node_data[n]}
                    else:
                        node["new"] = False
                for key in pending.renewed_edges:
                    edge = edges.get(key)
                    if edge is None:
                        u, v = key
                        edges[key] = {"source": u, "target": v, **succ[u][v]}
                    else:
                        edge["new"] = False
            if self._unsent is not None:
                self._unsent.merge(pending)
        self._json_lent = self._json_lent or not live
        self._pending_changes = GraphDelta()
        return {"nodes": list(nodes.values()), "edges": list(edges.values())}

    def take_graph_changes(self) -> GraphDelta | None:
        """What the snapshots since the last call changed in the graph's JSON (None:
        they rebuilt it whole), for the kernel's delta to the state it sent last."""
        out, self._unsent = self._unsent, GraphDelta()
        return out

    def _note_changes(self, cap: Any) -> None:
        """Add a capture's changes to those the next snapshot will apply."""
        delta = cap.changes
        pending = self._pending_changes
        if delta is None or pending is None:
            self._pending_changes = None  # built whole: the next snapshot rebuilds too
            return
        pending.merge(delta)

    @property
    def graph(self) -> Any:
        cap = self._capture if self._capture is not None else self._capture_graph(None)
        return cap.graph

    def zero_grad(self) -> list[str]:
        """Zero every leaf's .grad (the Zero-grad button); recorded as a zero event.

        The press is remembered at this cursor, so stepping back (which replays
        from the start) gives the same gradients as before.
        """
        if self.cursor > 0:
            self.zero_points.add(self.cursor)
        return self._zero_leaf_grads()

    def _zero_leaf_grads(self) -> list[str]:
        zeroed = []
        for name, t in named_tensors(self.globals).items():
            if t.is_leaf and t.requires_grad and t.grad is not None:
                with torch.no_grad():
                    t.grad.zero_()
                MUTATIONS.count += 1
                zeroed.append(name)
        index = max(self.cursor - 1, 0)
        self._track_grad_changes(index)
        self._capture_graph(index)
        return zeroed


def _backward_roots(func: Any, args: tuple, kwargs: dict) -> list[Any]:
    """The tensors a backward()/autograd.backward/autograd.grad call starts from."""
    owner = getattr(func, "__self__", None)
    if isinstance(owner, torch.Tensor):
        return [owner]
    first = kwargs.get("outputs", kwargs.get("tensors", args[0] if args else None))
    if isinstance(first, torch.Tensor):
        return [first]
    if isinstance(first, (list, tuple)):
        return [t for t in first if isinstance(t, torch.Tensor)]
    return []


def _all_zero(value: Any) -> bool:
    if isinstance(value, list):
        return all(_all_zero(v) for v in value)
    return value == 0


def _live_storages(variables: dict[str, Any]) -> dict[int, int]:
    """Storage address -> bytes of every tensor the script's names hold."""
    out: dict[int, int] = {}
    for t in named_tensors(variables).values():
        held = [t]
        if t.is_leaf and t.grad is not None:  # .grad of anything else warns when read
            held.append(t.grad)
        for h in held:
            ptr = storage_ptr(h)
            if ptr:
                out[ptr] = max(out.get(ptr, 0), storage_nbytes(h))
    return out


class _WarningLog:
    """A statement's warnings, each distinct text once, at most :attr:`MAX` of them: a
    loop warning 900,000 times kept 900,000 records (1.1 GB) under ``record=True``."""

    MAX = 100
    #: characters kept of one warning's text
    MAX_TEXT = 2000

    def __init__(self) -> None:
        self.texts: dict[str, None] = {}
        self.more = 0

    def add(self, message: Any, category: type[Warning], *args: Any, **kwargs: Any) -> None:
        text = f"{category.__name__}: {str(message)[:self.MAX_TEXT]}"
        if text in self.texts:
            return
        if len(self.texts) >= self.MAX:
            self.more += 1
            return
        self.texts[text] = None


def _format_warnings(caught: _WarningLog) -> list[str]:
    out = list(caught.texts)
    if caught.more:
        out.append(f"gradviz: {caught.more:,} more warnings of other texts not kept "
                   f"(the first {caught.MAX} are above)")
    return out
