"""A small Python interpreter over ``ast`` for tensor scripts people share.

Opening a script must never run arbitrary code, touch files or reach the
network, yet the scripts are ordinary PyTorch lessons. So gradviz walks the
syntax tree itself and only ever:

* evaluates node types on an explicit allowlist (:data:`ALLOWED_NODES`);
* reads names from the script's own scope or the curated namespaces in
  :mod:`gradviz.core.namespaces`;
* reads attributes that an allowlist names for the value's type;
* calls functions the script defined, allowlisted library functions, and
  methods reached through allowlisted attributes; a callable handed to a
  library function (a hook, a sort key) must be one the script defined.

Resource caps (int size, str/list size, loop iterations, call depth, wall
time) are checked here; tensor bytes and elements by :mod:`gradviz.core.guards`.
"""

from __future__ import annotations
import __future__

import argparse
import ast
import collections
import contextlib
import copy as copy_module
import dataclasses
import enum
import functools
import hashlib
import inspect
import itertools
import math
import operator
import os
import re
import secrets
import string
import sys
import time
import types
import typing
import warnings
import weakref
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
import torch.distributions.transforms
import torch.nn.utils.parametrizations
import torch.nn.utils.parametrize

from . import namespaces as ns
from . import suggest
from .errors import GradvizWarning, LimitExceeded, SandboxError, ScriptSyntaxError, Stopped
from .guards import PROCESS_SAMPLE_BYTES, Limits, OpGuard, metering
from .modules import LineBirths

ALLOWED_NODES: frozenset[type] = frozenset(
    {
        ast.Module, ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.If, ast.For,
        ast.While, ast.Break, ast.Continue, ast.Pass, ast.With, ast.withitem, ast.FunctionDef,
        ast.Return, ast.Yield, ast.ClassDef, ast.Import, ast.ImportFrom, ast.alias, ast.Assert, ast.Delete,
        ast.arguments, ast.arg, ast.keyword, ast.Constant, ast.Name, ast.Load, ast.Store,
        ast.Del, ast.Attribute, ast.Subscript, ast.Slice, ast.Tuple, ast.List, ast.Dict, ast.Set,
        ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.Call, ast.IfExp, ast.JoinedStr,
        ast.FormattedValue, ast.Lambda, ast.ListComp, ast.GeneratorExp, ast.DictComp,
        ast.SetComp, ast.comprehension, ast.Starred, ast.Try, ast.ExceptHandler, ast.Raise,
        ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.MatMult,
        ast.LShift, ast.RShift, ast.BitAnd, ast.BitOr, ast.BitXor,
        ast.UAdd, ast.USub, ast.Not, ast.Invert, ast.And, ast.Or,
        ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Is, ast.IsNot, ast.In, ast.NotIn,
    }
)

# Private attributes a script may read: the version counter is a lesson (scenario 9).
ALLOWED_PRIVATE_ATTRIBUTES = frozenset({"_version"})
#: special methods a script class may define, read as attributes only where the script
#: defined them on its own instance (d2l's Vocab calls self.__getitem__(token)); every
#: other dunder stays refused when the script is parsed
SCRIPT_DUNDERS = frozenset({"__getitem__", "__len__", "__iter__", "__call__"})

BIDI_CONTROLS = re.compile("[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]")
CODING_COOKIE = re.compile(r"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")

BINARY_OPERATORS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
    ast.Pow: operator.pow, ast.MatMult: operator.matmul, ast.LShift: operator.lshift,
    ast.RShift: operator.rshift, ast.BitAnd: operator.and_, ast.BitOr: operator.or_,
    ast.BitXor: operator.xor,
}
INPLACE_OPERATORS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.iadd, ast.Sub: operator.isub, ast.Mult: operator.imul,
    ast.Div: operator.itruediv, ast.FloorDiv: operator.ifloordiv, ast.Mod: operator.imod,
    ast.Pow: operator.ipow, ast.MatMult: operator.imatmul, ast.LShift: operator.ilshift,
    ast.RShift: operator.irshift, ast.BitAnd: operator.iand, ast.BitOr: operator.ior,
    ast.BitXor: operator.ixor,
}
COMPARE_OPERATORS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Is: operator.is_, ast.IsNot: operator.is_not,
    ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,
}
UNARY_OPERATORS: dict[type, Callable[[Any], Any]] = {
    ast.UAdd: operator.pos, ast.USub: operator.neg, ast.Not: operator.not_,
    ast.Invert: operator.invert,
}

GRAD_MODE_MANAGERS: tuple[type, ...] = (
    torch.no_grad, torch.enable_grad, torch.inference_mode, torch.set_grad_enabled,
)
#: what a 'with' statement accepts: grad modes, saved-tensors hooks (the script's own
#: pack/unpack functions), forward-mode AD levels and the autograd profiler; each
#: restores what it changed on exit, also when the block fails
CONTEXT_MANAGERS: tuple[type, ...] = GRAD_MODE_MANAGERS + (
    contextlib.nullcontext,
    torch.autocast,
    torch.autograd.detect_anomaly,
    torch.autograd.set_detect_anomaly,
    torch.autograd.graph.saved_tensors_hooks,
    torch.autograd.forward_ad.dual_level,
    torch.autograd.profiler.profile,
    ns.ParametrizeCached,
)

MATH_NAMES = (
    "log exp sqrt sin cos tan tanh atan2 pi e inf nan isclose floor ceil fabs log2 log10 "
    "hypot isfinite isnan"
).split()


class _Return(Exception):
    def __init__(self, value: Any):
        self.value = value


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


@dataclass
class Scope:
    """A function call's local names; module level uses the interpreter's globals."""

    names: dict[str, Any]
    parent: Scope | None = None
    #: the call's first positional argument as passed (what super() binds to,
    #: whatever the method later assigns to that name)
    first_arg: Any = field(default=None, repr=False)
    has_first_arg: bool = False


@dataclass
class ScriptFunction:
    """A function (or lambda) the script defined; only the interpreter runs it."""

    name: str
    args: ast.arguments
    body: list[ast.stmt] | ast.expr
    defaults: list[Any]
    kw_defaults: list[Any]
    closure: Scope | None
    interpreter: Interpreter = field(repr=False)
    #: the script class whose method this is (what a zero-argument super() needs)
    owner: type | None = field(default=None, repr=False)
    #: a grad-mode decorator (@torch.no_grad() ...): each call runs under a clone of it
    grad_mode: Any = field(default=None, repr=False)
    #: the body holds 'yield': a call runs it to the end and returns an iterator over
    #: what it yielded (gradviz runs generators eagerly; see README)
    is_generator: bool = False

    def __repr__(self) -> str:
        return f"<function {self.name}>"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # Library code (hooks, sort keys, autograd.Function) calls us as a plain callable.
        return self.interpreter.call_script_function(self, args, kwargs)

    def __copy__(self) -> Any:
        return self  # copies as itself, as Python's functions do (copy.deepcopy)

    def __deepcopy__(self, memo: dict) -> Any:
        return self


class SuperProxy:
    """What ``super()`` gives a method of a script class: attribute access is vetted."""

    __slots__ = ("cls", "obj")

    def __init__(self, cls: type, obj: Any):
        self.cls = cls
        self.obj = obj

    def __repr__(self) -> str:
        return f"<super: {self.cls.__name__}>"

    def __copy__(self) -> Any:
        return self  # copies as itself, as Python's functions do (copy.deepcopy)

    def __deepcopy__(self, memo: dict) -> Any:
        return self


class OptimizerStep:
    """``opt.step`` after an lr_scheduler wrapped it (torch stores a plain function on
    the optimizer): called like the bound method, with the same step checks."""

    __slots__ = ("__self__", "func")
    __name__ = "step"

    def __init__(self, optimizer: Any, func: Callable[..., Any]):
        self.__self__ = optimizer
        self.func = func

    def __copy__(self) -> Any:
        return self  # copies as itself, as Python's functions do (copy.deepcopy)

    def __deepcopy__(self, memo: dict) -> Any:
        return self

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.func(*args, **kwargs)


class BoundSuperCall:
    """``super().__init__`` or ``super().method`` of a script class, ready to call."""

    __slots__ = ("func", "name")

    def __init__(self, func: Callable[..., Any], name: str):
        self.func = func
        self.name = name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.func(*args, **kwargs)

    def __copy__(self) -> Any:
        return self  # copies as itself, as Python's functions do (copy.deepcopy)

    def __deepcopy__(self, memo: dict) -> Any:
        return self


class LibraryCallable:
    """A function library code made for the script: what a ``torch.func`` transform
    returns (``grad(f)``, ``vmap(f)``, the ``vjp_fn`` of ``vjp``), or a reviewed
    stand-in for a tensor method. The script may call it and hand it to another
    transform; it wraps only the script's own functions or reviewed torch code."""

    __slots__ = ("func", "name")

    def __init__(self, func: Callable[..., Any], name: str):
        self.func = func
        self.name = name

    def __repr__(self) -> str:
        return f"<function {self.name}>"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.func(*args, **kwargs)

    def __copy__(self) -> Any:
        return self  # copies as itself, as Python's functions do (copy.deepcopy)

    def __deepcopy__(self, memo: dict) -> Any:
        return self


class StdlibFunction(LibraryCallable):
    """A function of the Python standard library as gradviz gives it to scripts
    (``functools.reduce``, ``copy.deepcopy``, ``getattr``...): gradviz's own code,
    which takes the script's values as they are and vets what it does with them
    (callables it calls go through :meth:`Interpreter.call`)."""

    __slots__ = ()

    def __deepcopy__(self, memo: dict) -> StdlibFunction:
        return self


class ChainFunction(StdlibFunction):
    """``itertools.chain``, with its ``chain.from_iterable``."""

    __slots__ = ("from_iterable",)

    def __init__(self, func: Callable[..., Any], from_iterable: StdlibFunction):
        super().__init__(func, "chain")
        self.from_iterable = from_iterable


class TickingIterator:
    """An iterator made by library code for the script (itertools): each item counts as
    a loop iteration, also when C code (list(), sum(), sorted()) pulls it, so
    ``list(itertools.count())`` ends at the iteration limit instead of filling memory."""

    __slots__ = ("inner", "interp")

    def __init__(self, interp: Interpreter, inner: Iterator[Any]):
        self.inner = inner
        self.interp = interp

    def __iter__(self) -> TickingIterator:
        return self

    def __next__(self) -> Any:
        self.interp._tick()
        return next(self.inner)

    def __repr__(self) -> str:
        return scrub_addresses(repr(self.inner))

    def __copy__(self) -> TickingIterator:
        return TickingIterator(self.interp, copy_module.copy(self.inner))

    def __deepcopy__(self, memo: dict) -> TickingIterator:
        return TickingIterator(self.interp, copy_module.deepcopy(self.inner, memo))


class ScriptPartial:
    """``functools.partial(f, *args, **kwargs)``: calling it calls ``f`` through the
    interpreter, so ``f`` is vetted at each call as if the script called it."""

    __slots__ = ("func", "args", "keywords", "interp")
    func: Any
    args: tuple
    keywords: dict
    interp: Interpreter

    def __init__(self, interp: Interpreter, func: Any, args: tuple, keywords: dict):
        if isinstance(func, ScriptPartial):
            args = func.args + args
            keywords = {**func.keywords, **keywords}
            func = func.func
        self.func = func
        self.args = args
        self.keywords = keywords
        self.interp = interp

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # library code calling it (a hook, a transform): script code, not while gradviz
        # reads the graph
        if self.interp.capturing:
            raise HookNotRun("partial")
        return self.interp.call(self.func, self.args + args, {**self.keywords, **kwargs})

    def __repr__(self) -> str:
        parts = [repr(self.func), *map(repr, self.args)]
        parts += [f"{k}={v!r}" for k, v in self.keywords.items()]
        return f"functools.partial({', '.join(parts)})"

    def __copy__(self) -> ScriptPartial:
        return ScriptPartial(self.interp, self.func, self.args, dict(self.keywords))

    def __deepcopy__(self, memo: dict) -> ScriptPartial:
        return ScriptPartial(
            self.interp, self.func, copy_module.deepcopy(self.args, memo),
            copy_module.deepcopy(self.keywords, memo),
        )


class ScriptCache:
    """``functools.lru_cache`` / ``functools.cache`` on a script function: calls go
    through the interpreter (the function runs there, vetted as if the script called
    it); results are kept by Python's own key of the arguments, with Python's counts.
    Nothing of it but cache_info and cache_clear is readable."""

    __slots__ = ("fn", "maxsize", "typed", "entries", "hits", "misses", "interp")

    def __init__(self, interp: Interpreter, fn: Any, maxsize: int | None, typed: bool):
        self.fn = fn
        self.maxsize = maxsize
        self.typed = typed
        self.entries: collections.OrderedDict[Any, Any] = collections.OrderedDict()
        self.hits = 0
        self.misses = 0
        self.interp = interp

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # library code calling it (map, a sort key): script code, not while gradviz
        # reads the graph
        if self.interp.capturing:
            raise HookNotRun("lru_cache")
        return self.interp.call(self, args, kwargs)

    def cache_info(self) -> Any:
        return functools._CacheInfo(self.hits, self.misses, self.maxsize, len(self.entries))

    def cache_clear(self) -> None:
        self.entries.clear()
        self.hits = self.misses = 0

    def cache_parameters(self) -> dict[str, Any]:
        return {"maxsize": self.maxsize, "typed": self.typed}

    def __repr__(self) -> str:
        return "<functools._lru_cache_wrapper object at 0x000000000000>"

    def __copy__(self) -> ScriptCache:
        return self  # as Python's: copy and deepcopy give the wrapper itself

    def __deepcopy__(self, memo: dict) -> ScriptCache:
        return self


SCRIPT_CACHE_ATTRIBUTES = frozenset({"cache_info", "cache_clear", "cache_parameters"})


class FrameView:
    """What ``inspect.currentframe()`` gives a script: its own call stack, as data.
    ``f_back`` is the calling script frame, ``f_locals`` a copy of its names (d2l's
    save_hyperparameters); no code, globals or builtins of any real frame."""

    __slots__ = ("frames", "interp")

    def __init__(self, interp: Interpreter, frames: tuple[tuple[ScriptFunction, Scope], ...]):
        self.frames = frames
        self.interp = interp

    @property
    def f_back(self) -> FrameView | None:
        return FrameView(self.interp, self.frames[:-1]) if self.frames else None

    @property
    def f_locals(self) -> dict[str, Any]:
        if not self.frames:
            return dict(self.interp.globals)
        return dict(self.frames[-1][1].names)

    def __repr__(self) -> str:
        where = self.frames[-1][0].name if self.frames else "<module>"
        return f"<frame of {where}>"

    def __deepcopy__(self, memo: dict) -> FrameView:
        return self


class TorchvizGraph:
    """What ``torchviz.make_dot`` gives a script in gradviz: gradviz draws the graph
    on its canvas (and lists its roots in --json), so nothing is written to files.
    ``render``/``view``/``save`` return the path torchviz would have written and say
    that gradviz shows the graph instead."""

    __slots__ = ("roots", "params", "format", "filename", "directory", "graph_attr",
                 "node_attr", "edge_attr")

    def __init__(self, roots: list[torch.Tensor], params: dict[str, torch.Tensor]):
        self.roots = roots
        self.params = params
        self.format = "pdf"
        self.filename: str | None = None
        self.directory = ""
        self.graph_attr: dict[str, Any] = {}
        self.node_attr: dict[str, Any] = {}
        self.edge_attr: dict[str, Any] = {}

    def __repr__(self) -> str:
        return f"<make_dot graph of {len(self.roots)} root(s): drawn on gradviz's canvas>"

    def _path(self, filename: Any = None, directory: Any = None, format: Any = None) -> str:
        name = str(filename or self.filename or "Digraph.gv")
        folder = str(directory or self.directory or "")
        path = f"{folder}/{name}" if folder else name
        return f"{path}.{format or self.format}"

    def _note(self, path: str) -> str:
        warnings.warn(
            f"gradviz draws make_dot's graph on its canvas; nothing was written to {path!r}",
            UserWarning,
            stacklevel=2,
        )
        return path

    def render(self, filename: Any = None, directory: Any = None, view: bool = False,
               cleanup: bool = False, format: Any = None, **_: Any) -> str:
        return self._note(self._path(filename, directory, format))

    def save(self, filename: Any = None, directory: Any = None) -> str:
        return self._note(self._path(filename, directory, "gv").removesuffix(".gv"))

    def view(self, filename: Any = None, directory: Any = None, **_: Any) -> str:
        return self._note(self._path(filename, directory))


#: what a script may read or call on make_dot's result
TORCHVIZ_ATTRIBUTES = frozenset(
    {"render", "save", "view", "format", "filename", "directory", "graph_attr", "node_attr",
     "edge_attr"}
)
TORCHVIZ_SETTABLE = frozenset({"format", "filename", "directory"})


class HookNotRun(Exception):
    """A script hook that library code tried to call while gradviz, not the script,
    was reading the graph (a saved-tensors unpack hook during capture)."""


#: a per-process secret added to what ``Tensor.data_ptr()`` returns: equality and
#: differences of addresses read as in PyTorch, absolute addresses (which would
#: defeat ASLR for anyone probing for memory bugs) do not
_ADDRESS_SALT = secrets.randbits(40) << 12


#: print output a whole run may make, all statements together: each statement's
#: output is kept (the window shows it, the report carries it), so a per-statement
#: cap alone let 30 statements of 10 MB each hold 300 MB
MAX_RUN_OUTPUT_CHARS = 20_000_000
#: seconds of work a whole run may take, statements and their graph captures
#: together (time paused in the debugger is not work): each statement has its own
#: limit, but a script of many 24 s statements kept gradviz busy for hours
MAX_RUN_SECONDS = 300.0


class ScriptOutput:
    """``print`` output of the running statement."""

    def __init__(self, run_left: int | None = None) -> None:
        self.parts: list[str] = []
        self.size = 0
        #: characters the run may still print, this statement included (None: no cap)
        self.run_left = run_left

    def write(self, text: str, limit: int) -> None:
        self.size += len(text)
        if self.size > limit:
            raise LimitExceeded(
                "refused: print output of this statement passed the size limit "
                "(gradviz limit max_str_length)",
                limit="max_str_length",
            )
        if self.run_left is not None and self.size > self.run_left:
            raise LimitExceeded(
                f"refused: this script's print output passed {MAX_RUN_OUTPUT_CHARS:,} "
                "characters (gradviz limit max_run_output)",
                limit="max_run_output",
            )
        self.parts.append(text)

    def text(self) -> str:
        return "".join(self.parts)


def decode_source(source: str | bytes, limits: Limits) -> str:
    """Decode as strict UTF-8 and refuse what could hide code from a reader."""
    if isinstance(source, bytes):
        if len(source) > limits.max_source_bytes:
            raise LimitExceeded(
                f"refused: the script is {len(source):,} bytes; the limit is "
                f"{limits.max_source_bytes:,} (gradviz limit max_source_bytes)",
                limit="max_source_bytes",
            )
        try:
            text = source.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ScriptSyntaxError(f"the script is not valid UTF-8: {exc}") from None
    else:
        text = source
        if len(text.encode("utf-8", "surrogatepass")) > limits.max_source_bytes:
            raise LimitExceeded(
                f"refused: the script is larger than {limits.max_source_bytes:,} bytes "
                "(gradviz limit max_source_bytes)",
                limit="max_source_bytes",
            )
    text = text.removeprefix("\ufeff")
    for lineno, line in enumerate(text.splitlines()[:2], start=1):
        match = CODING_COOKIE.match(line)
        if match and match.group(1).lower().replace("_", "-") not in ("utf-8", "utf8"):
            raise ScriptSyntaxError(
                f"line {lineno}: coding declaration '{match.group(1)}' refused: gradviz "
                "reads scripts as UTF-8 only",
                line=lineno,
            )
    bidi = BIDI_CONTROLS.search(text)
    if bidi:
        lineno = text.count("\n", 0, bidi.start()) + 1
        raise ScriptSyntaxError(
            f"line {lineno}: bidirectional control character U+{ord(bidi.group()):04X} refused: "
            "it can make code read differently from how it runs",
            line=lineno,
        )
    if "\x00" in text:
        raise ScriptSyntaxError("the script contains a NUL character")
    return text


def _check_tree(tree: ast.AST, limits: Limits) -> None:
    """Static allowlist check over every node, iteratively (deep trees must not recurse)."""
    stack: list[tuple[ast.AST, int, bool]] = [(tree, 0, False)]
    while stack:
        node, depth, in_autograd_class = stack.pop()
        line = getattr(node, "lineno", None)
        where = f"line {line}: " if line else ""
        if depth > limits.max_ast_depth:
            raise LimitExceeded(
                f"{where}refused: the code is nested more than {limits.max_ast_depth} levels "
                "deep (gradviz limit max_ast_depth)",
                limit="max_ast_depth",
                line=line,
            )
        if type(node) not in ALLOWED_NODES:
            raise ScriptSyntaxError(
                f"{where}{_describe_node(node)} is not supported in gradviz scripts", line=line
            )
        if isinstance(node, ast.Attribute):
            if not (node.attr == "__init__" and _is_zero_arg_super(node.value)):
                _check_attribute_name(node.attr, line)
        elif isinstance(node, ast.Name):
            if node.id.startswith("__") and not (node.id == "__name__" and isinstance(node.ctx, ast.Load)):
                raise ScriptSyntaxError(f"{where}the name '{node.id}' is not allowed", line=line)
        elif isinstance(node, ast.FunctionDef):
            # '_name': the script's own helper (a private function or method); dunders
            # are special to Python and torch: a class may define those listed
            if node.name.startswith("__") and not (in_autograd_class and node.name in CLASS_DUNDERS):
                what = (
                    f"the method '{node.name}' is refused: a script class may define "
                    f"{', '.join(sorted(CLASS_DUNDERS))} and ordinary methods"
                    if in_autograd_class and node.name.startswith("__")
                    else "function names starting with '__' are not allowed"
                )
                raise ScriptSyntaxError(f"{where}{what}", line=line)
            for deco in node.decorator_list:
                target = deco.func if isinstance(deco, ast.Call) else deco
                if not isinstance(target, (ast.Name, ast.Attribute)):
                    raise ScriptSyntaxError(
                        f"{where}a decorator must be a name or a call such as @torch.no_grad()",
                        line=line,
                    )
        elif isinstance(node, ast.Try):
            for handler in node.handlers:
                if handler.type is None:
                    raise ScriptSyntaxError(
                        f"{where}a bare 'except:' is refused: name the exception "
                        "(except Exception:)",
                        line=handler.lineno,
                    )
        elif isinstance(node, ast.ClassDef):
            if node.keywords:
                raise ScriptSyntaxError(
                    f"{where}class keywords (such as metaclass=) are refused", line=line
                )
            for deco in node.decorator_list:
                target = deco.func if isinstance(deco, ast.Call) else deco
                if not isinstance(target, (ast.Name, ast.Attribute)):
                    raise ScriptSyntaxError(
                        f"{where}a class decorator must be a name or a call such as "
                        "@dataclass(frozen=True)",
                        line=line,
                    )
            if node.name.startswith("__"):
                raise ScriptSyntaxError(f"{where}class names starting with '__' are not allowed")
            for item in node.body:
                simple_assign = (
                    isinstance(item, ast.Assign)
                    and all(_is_name_target(t) for t in item.targets)
                ) or (isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name))
                if not (isinstance(item, (ast.FunctionDef, ast.Pass, ast.Expr, ast.ClassDef))
                        or simple_assign):
                    raise ScriptSyntaxError(
                        f"{where}a class body may hold methods, class attributes (name = value) "
                        "and a docstring",
                        line=line,
                    )
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            _check_import(node, line)
        elif isinstance(node, ast.arg) and node.arg.startswith("__"):
            raise ScriptSyntaxError(f"{where}the name '{node.arg}' is not allowed", line=line)
        elif isinstance(node, ast.keyword) and node.arg and node.arg.startswith("_"):
            # private keywords of library functions (fractional_max_pool's
            # _random_samples=) are internals, as through '**'
            raise ScriptSyntaxError(f"{where}the keyword '{node.arg}' is not allowed", line=line)
        child_in_class = isinstance(node, ast.ClassDef)
        for child in ast.iter_child_nodes(node):
            is_decorator = isinstance(node, ast.FunctionDef) and child in node.decorator_list
            stack.append((child, depth + 1, child_in_class or (in_autograd_class and is_decorator)))


#: the special methods a script class may define (everything else starting with '_' is refused)
#: the dunders a script class may define: construction, and the container protocol
#: datasets need (DataLoader calls len(ds) and ds[i]; a wrapper loader defines __iter__).
#: Each runs in the interpreter like any method. __repr__ is refused: gradviz formats
#: values outside the script's statements, where script code must not run.
#: __call__ makes instances callable (the script calls them; library code may too, and
#: the method runs in the interpreter); __post_init__ is what @dataclass's __init__ calls.
CLASS_DUNDERS = frozenset(
    {"__init__", "__len__", "__getitem__", "__iter__", "__call__", "__post_init__"}
)


#: the nn.Module names a script module class may define itself
_MODULE_OVERRIDABLE = frozenset({"forward", "__init__", "train", "eval", "parameters",
                                 "extra_repr"})
#: what a script class's extra_repr may return: one line or a few (torch's own are
#: shorter), so a module tree's text stays bounded by its number of modules
MAX_EXTRA_REPR = 10_000


def _is_zero_arg_super(node: ast.AST) -> bool:
    """``super()`` or the older ``super(Class, self)`` spelling (two plain names)."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "super"
        and not node.keywords
        and (not node.args or (len(node.args) == 2 and all(isinstance(a, ast.Name) for a in node.args)))
    )


def _check_attribute_name(attr: str, line: int | None) -> None:
    if attr.startswith("_saved_") and attr.isidentifier():
        return  # grad_fn._saved_self and friends: allowed on autograd nodes only, at run time
    if attr == "__name__":
        return  # type(x).__name__, f.__name__: read on classes and functions only, at run time
    if attr == "__class__":
        return  # x.__class__ reads as type(x); never assigned (see set_attribute)
    if attr.startswith("_") and not attr.startswith("__"):
        return  # '_name': the script's own objects only, decided at run time
    if attr in SCRIPT_DUNDERS:
        return  # the script's own methods on its own instances, decided at run time
    if attr.startswith("_") and attr not in ALLOWED_PRIVATE_ATTRIBUTES:
        where = f"line {line}: " if line else ""
        raise ScriptSyntaxError(
            f"{where}the attribute '{attr}' is not allowed (names starting with '_' are "
            "private or special)",
            line=line,
        )


def _describe_node(node: ast.AST) -> str:
    names = {
        ast.Global: "global", ast.Nonlocal: "nonlocal",
        ast.AsyncFunctionDef: "async def", ast.Await: "await", ast.Yield: "yield",
        ast.YieldFrom: "yield from", ast.NamedExpr: "the := operator", ast.Match: "match",
    }
    return names.get(type(node), f"the construct '{type(node).__name__}'")


#: the modules a script may import: torch's reviewed namespaces, numpy, math, random
SAFE_MODULE_PATHS = frozenset(ns.importable_modules(ns.build_torch_namespace())) | {
    "numpy", "math", "random", "torchviz",
    # the standard library as gradviz gives it (see python_modules)
    "__future__", "time", "collections", "functools", "itertools", "copy", "dataclasses",
    "types", "inspect", "argparse", "os", "os.path", "sys", "typing", "contextlib",
    "functorch", "re", "torch.jit", "unicodedata", "enum",
}
#: importable, but not listed when an import is refused (aliases of listed modules)
_UNLISTED_MODULES = frozenset({"torch.amp", "torch.utils.data.dataloader",
                               # submodules of listed ones (the message stays short)
                               "torch.nn.utils.parametrize", "torch.nn.utils.parametrizations",
                               "torch.distributions.transforms"})


def _check_import(node: ast.Import | ast.ImportFrom, line: int | None) -> None:
    where = f"line {line}: " if line else ""
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.name not in SAFE_MODULE_PATHS:
                raise SandboxError(
                    where + suggest.refused_import(
                        alias.name, sorted(SAFE_MODULE_PATHS - _UNLISTED_MODULES)
                    ),
                    line=line,
                )
    else:
        if node.level or node.module not in SAFE_MODULE_PATHS:
            raise SandboxError(
                where + suggest.refused_import(
                    ("." * node.level) + (node.module or ""),
                    sorted(SAFE_MODULE_PATHS - _UNLISTED_MODULES),
                ),
                line=line,
            )
        for alias in node.names:
            if alias.name == "*":
                raise SandboxError(f"{where}'from {node.module} import *' is not supported")


class Interpreter:
    """Runs parsed statements against a private namespace.

    The interpreter has no notion of sessions or snapshots; :class:`Session`
    owns one and wraps each statement with guards, warnings capture and
    recording. ``call_hook`` lets the session see ``backward``/``grad`` calls.
    """

    def __init__(self, limits: Limits | None = None, seed: int = 0):
        self.limits = limits or Limits()
        self.torch_ns = ns.build_torch_namespace()
        self.numpy_ns = ns.build_numpy_namespace()
        self.math_ns = ns.SafeModule("math", {n: getattr(math, n) for n in MATH_NAMES})
        self.modules: dict[str, ns.SafeModule] = {
            **ns.importable_modules(self.torch_ns),
            "numpy": self.numpy_ns,
            "math": self.math_ns,
            "random": ns.build_random_namespace(seed),
            "torchviz": ns.SafeModule("torchviz", {"make_dot": self._make_dot}),
        }
        #: (line, roots, params) of each make_dot call; the session takes them
        self.dot_requests: list[tuple[int | None, list[torch.Tensor], dict[str, Any]]] = []
        self.builtins: dict[str, Any] = ns.safe_builtins()
        self.builtins["print"] = self._print
        self.builtins["range"] = self._range
        self.builtins["super"] = self._super
        self.builtins["iter"] = self._iter
        self.builtins["type"] = self._type
        self.builtins["hash"] = self._hash
        self.builtins["pow"] = self._pow
        self.builtins["format"] = self._format
        #: (function, its local scope) of each script call in progress
        self._frames: list[tuple[ScriptFunction, Scope]] = []
        #: the exceptions being handled (what a bare 'raise' re-raises)
        self._handling: list[BaseException] = []
        #: called before each statement at any depth as hook(stmt, scope); it may
        #: return a dict the interpreter marks {"ok": False} if the statement fails
        self.statement_hook: Callable[[ast.stmt, Scope | None], dict | None] | None = None
        #: block nesting of the running statement: 0 at top level, +1 per body
        #: (a loop's, an if's, a called function's)
        self.block_depth = -1
        #: set (from a signal handler) when the learner presses Stop: the running
        #: statement ends at its next loop iteration or statement
        self.stop_requested = False
        #: .data / .grad / .requires_grad writes to tensors (a capture cache key)
        self.tensor_writes = 0
        #: the line each running script function was called from, aligned with _frames
        self.call_lines: list[int] = []
        #: [iteration, total] of each running loop, innermost last
        self.loops: list[list[Any]] = []
        #: (frame scope, values) of each generator call in progress
        self._yields: list[tuple[Scope, list[Any]]] = []
        #: id -> (wrapper, script function) for script functions handed to library code
        self._host_wrappers: dict[int, tuple[Callable[..., Any], ScriptFunction]] = {}
        #: torch.func transforms that make functions -> where those functions sit in
        #: what the transform returns (see _RETURNED_FUNCTIONS); functional_call and
        #: stack_module_state make none, so nothing they return is ever wrapped
        func_ns = self.torch_ns.members["func"].members
        self._transforms = {
            id(f): (f, _RETURNED_FUNCTIONS[name])
            for name, f in func_ns.items()
            if name in _RETURNED_FUNCTIONS
        }
        if "vmap" in self.torch_ns.members:
            vmap = self.torch_ns.members["vmap"]
            self._transforms[id(vmap)] = (vmap, _RETURNED_FUNCTIONS["vmap"])
        #: True while gradviz reads the graph: script hooks library code calls then
        #: (saved-tensors unpack hooks) are not run
        self.capturing = False
        #: builtins that only look at their arguments: autograd nodes (callable
        #: objects) may be passed to them as data
        self._data_sinks = {
            id(f): f
            for f in (self.builtins["print"], self.builtins["repr"], self.builtins["str"],
                      self.builtins["len"], self.builtins["isinstance"],
                      self.builtins["list"], self.builtins["tuple"], self.builtins["bool"])
        }
        self.globals: dict[str, Any] = {"torch": self.torch_ns}
        self.output = ScriptOutput()
        #: the whole run's budgets (see MAX_RUN_SECONDS, MAX_RUN_OUTPUT_CHARS)
        self.max_run_seconds = MAX_RUN_SECONDS
        self.run_seconds = 0.0
        self.run_output_left = MAX_RUN_OUTPUT_CHARS
        self._statement_started: float | None = None
        self._run_bounds_statement = False
        self.script_classes: set[type] = set()
        self.call_hook: Callable[[Any, tuple, dict, Callable[[], Any]], Any] | None = None
        #: called as module_hook(module, run) when the script calls an nn.Module
        self.module_hook: Callable[[torch.nn.Module, Callable[[], Any]], Any] | None = None
        self.format_guard: Any = None  # set by the session: pauses op counting while printing
        #: the op guard while the autograd engine runs outside it: script callbacks
        #: the engine makes (hooks, Function.backward) run under it again
        self.unguarded: Any = None
        #: bytes of numpy arrays written since resident memory was last read
        self._arrays_unsampled = 0
        self.iterations = 0
        self.depth = 0
        self.deadline: float | None = None
        self.current_line: int | None = None
        #: which line of the running statement made which autograd node
        self.line_births = LineBirths()
        self.last_text = ""
        self._allowed_callables: dict[int, Any] = {}
        self._allowed_types: set[type] = set()
        #: classes library code made for the script (namedtuple): callable, and their
        #: instances' fields readable
        self._made_types: set[type] = set()
        #: ids of the dataclasses.field(...) objects the script made (held by the class)
        self._fields_made: dict[int, dataclasses.Field] = {}
        #: optimizers whose .state the script read: their state dicts take no writes
        self._optimizers_read: weakref.WeakSet[torch.optim.Optimizer] = weakref.WeakSet()
        #: enum classes the script made -> the names its class statement wrote
        self._enum_names: dict[type, frozenset[str]] = {}
        #: the properties script class statements made (@property, @name.setter,
        #: @functools.cached_property): their getters and setters are script methods
        self._script_properties: dict[int, Any] = {}
        #: per-kernel key of what id() returns (see _id)
        self._id_key = secrets.token_bytes(16)
        self.modules.update(python_modules(self))
        self.builtins.update(
            getattr=StdlibFunction(self._getattr, "getattr"),
            hasattr=StdlibFunction(self._hasattr, "hasattr"),
            setattr=StdlibFunction(self._setattr, "setattr"),
            id=StdlibFunction(self._id, "id"),
            vars=StdlibFunction(self._vars, "vars"),
            callable=StdlibFunction(self._callable, "callable"),
            object=object,
            KeyboardInterrupt=KeyboardInterruptName,
            delattr=StdlibFunction(self._delattr, "delattr"),
            globals=StdlibFunction(self._globals, "globals"),
        )
        for module in self.modules.values():
            self._collect_allowed(module)
        for value in self.builtins.values():
            self._allow(value)
        self._allowed_types.discard(object)  # a base and an isinstance() type only
        self._allowed_callables.pop(id(object), None)
        # typing's names annotate; none of them is called (typing.List() would build
        # a list outside the checks)
        self.modules["typing"] = typing_module()
        # names for decorators only: calling them is refused like any other type
        self.builtins["staticmethod"] = staticmethod
        self.builtins["property"] = property
        self.builtins["classmethod"] = classmethod
        # enum's classes are bases only (their functional API, Enum('Name', 'a b'), makes
        # classes outside the class statement's checks); auto() marks a member's value
        self.modules["enum"] = enum_module(self)
        self._allow(enum.auto)
        if sys.getrecursionlimit() < 8000:
            sys.setrecursionlimit(8000)

    def __copy__(self) -> Interpreter:
        return self  # never copied along with a value that reaches it

    def __deepcopy__(self, memo: dict) -> Interpreter:
        return self

    # --- setup -------------------------------------------------------------

    def _allow(self, value: Any) -> None:
        if isinstance(value, type):
            self._allowed_types.add(value)
        if callable(value):
            self._allowed_callables[id(value)] = value

    def _collect_allowed(self, module: ns.SafeModule) -> None:
        for value in module.members.values():
            if isinstance(value, ns.SafeModule):
                self._collect_allowed(value)
            else:
                self._allow(value)

    # --- parsing -----------------------------------------------------------

    def parse(self, source: str | bytes) -> list[ast.stmt]:
        """Decode, parse and statically check a script; return its top-level statements."""
        body = self.parse_module(source)
        for stmt in body:
            _check_tree(stmt, self.limits)
        return body

    def parse_module(self, source: str | bytes) -> list[ast.stmt]:
        """Decode and parse a script; each statement is checked by the caller.

        Checking statement by statement lets the statements before a refused
        one run, so the learner keeps their state and sees where it stopped.
        """
        text = decode_source(source, self.limits)
        self.last_text = text
        try:
            tree = ast.parse(text, mode="exec")
        except SyntaxError as exc:
            raise ScriptSyntaxError(
                f"line {exc.lineno}: {exc.msg}", line=exc.lineno
            ) from None
        except (RecursionError, MemoryError):
            raise LimitExceeded(
                "refused: the code is nested too deeply to parse (gradviz limit max_ast_depth)",
                limit="max_ast_depth",
            ) from None
        return list(tree.body)

    # --- running -----------------------------------------------------------

    def begin_statement(self) -> None:
        self.line_births.reset()
        self.block_depth = -1
        self.loops = []
        self.output = ScriptOutput(max(self.run_output_left, 0))
        self.iterations = 0
        self.depth = 0
        now = time.monotonic()
        self._statement_started = now
        run_left = self.max_run_seconds - self.run_seconds
        if run_left <= 0:
            self.deadline = now
            raise LimitExceeded(
                f"refused: this script has worked {self.max_run_seconds:g} s in all, the "
                "most one run may (gradviz limit max_run_seconds)",
                limit="max_run_seconds",
            )
        self._run_bounds_statement = run_left < self.limits.max_statement_seconds
        self.deadline = now + min(self.limits.max_statement_seconds, run_left)

    def discount_pause(self, seconds: float) -> None:
        """Time the debugger held the statement paused is not work of the run."""
        if self._statement_started is not None:
            self._statement_started += seconds

    def end_statement(self) -> None:
        """Count the statement's work (its graph capture included) against the run."""
        if self._statement_started is not None:
            self.run_seconds += time.monotonic() - self._statement_started
            self._statement_started = None
        self.run_output_left -= self.output.size

    def execute(self, stmt: ast.stmt) -> Any:
        """Run one top-level statement; return an expression statement's value."""
        if isinstance(stmt, ast.Expr):
            self.current_line = stmt.lineno
            self.line_births.at(stmt.lineno)
            self.block_depth += 1
            try:
                value = self._hooked(stmt, None, self.eval, stmt.value, None)
                if isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str):
                    return None  # a '''text''' statement (a docstring, a note): not a value
                size = text_bound(value, self.limits.max_str_length)
                if size > self.limits.max_str_length:
                    # gradviz shows a value by its repr, built whole before it is cut:
                    # what it shows instead says why
                    return TooLongToShow(type(value).__name__)
                return value
            finally:
                self.block_depth -= 1
        self.exec_block([stmt], None)
        return None

    def _tick(self) -> None:
        self.iterations += 1
        if self.stop_requested:
            self._stop_now()
        if self.iterations > self.limits.max_iterations:
            raise LimitExceeded(
                f"refused: more than {self.limits.max_iterations:,} loop iterations in one "
                "statement (gradviz limit max_iterations)",
                limit="max_iterations",
            )
        if self.deadline is not None and (self.iterations & 255) == 0:
            self._check_deadline()
        if (self.iterations & 127) == 0:
            self._check_memory()

    def _check_memory(self, extra: int = 0) -> None:
        """Python objects (strings, lists) grow memory without any torch op; ``extra``:
        the bytes the caller is about to build."""
        check = getattr(self.format_guard, "_check_process_memory", None)
        if check is not None:
            check(extra)

    def _check_deadline(self) -> None:
        if self.deadline is not None and time.monotonic() > self.deadline:
            if self._run_bounds_statement:
                raise LimitExceeded(
                    f"refused: this script has worked {self.max_run_seconds:g} s in all, the "
                    "most one run may (gradviz limit max_run_seconds)",
                    limit="max_run_seconds",
                )
            raise LimitExceeded(
                f"refused: the statement ran longer than {self.limits.max_statement_seconds:g} s "
                "(gradviz limit max_statement_seconds)",
                limit="max_statement_seconds",
            )

    # --- statements --------------------------------------------------------

    def place(self) -> str:
        """Where the running statement is, for a learner: ``line 24, iteration 2 of 3``."""
        where = f"line {self.current_line}" if self.current_line else "the statement"
        loop = self.loop_iteration()
        if loop is not None:
            where += f", iteration {loop[0]}" + (f" of {loop[1]}" if loop[1] else "")
        return where

    def _stop_now(self) -> None:
        self.stop_requested = False
        raise Stopped(f"stopped at {self.place()}: what the statement did so far is kept")

    def exec_block(self, body: list[ast.stmt], scope: Scope | None) -> None:
        self.block_depth += 1
        outer = self.current_line
        births = self.line_births
        try:
            for stmt in body:
                if self.stop_requested:
                    self._stop_now()
                self.current_line = stmt.lineno
                births.at(stmt.lineno)
                method = getattr(self, "_exec_" + type(stmt).__name__)
                if self.statement_hook is None:
                    method(stmt, scope)  # the usual path: nobody is stepping or tracing
                else:
                    self._hooked(stmt, scope, method, stmt, scope)
            if outer:
                births.at(outer)  # what the enclosing line makes next is its own
        finally:
            self.block_depth -= 1

    def _hooked(self, stmt: ast.stmt, scope: Scope | None, run: Callable[..., Any],
                *args: Any) -> Any:
        """Run one statement as ``run(*args)`` after the statement hook (stepping,
        --trace) has seen it; the hook's entry is marked failed if it raises."""
        hook = self.statement_hook
        entry = hook(stmt, scope) if hook is not None else None
        try:
            return run(*args)
        except (_Break, _Continue, _Return):
            raise
        except BaseException:
            if entry is not None:
                entry["ok"] = False
            raise

    # --- where execution is (for stepping and --trace) ------------------------------

    def loop_iteration(self) -> tuple[int, int | None] | None:
        """(1-based iteration, total or None) of the innermost running loop."""
        if not self.loops:
            return None
        index, total = self.loops[-1]
        return index, total

    def frame_names(self) -> list[str]:
        """The script functions being run, outermost first."""
        return [fn.name for fn, _ in self._frames]

    def _exec_Expr(self, stmt: ast.Expr, scope: Scope | None) -> None:
        self.eval(stmt.value, scope)

    def _exec_Pass(self, stmt: ast.Pass, scope: Scope | None) -> None:
        pass

    def _exec_Break(self, stmt: ast.Break, scope: Scope | None) -> None:
        raise _Break()

    def _exec_Continue(self, stmt: ast.Continue, scope: Scope | None) -> None:
        raise _Continue()

    def _exec_Return(self, stmt: ast.Return, scope: Scope | None) -> None:
        if scope is None:
            raise SandboxError("'return' outside a function", line=stmt.lineno)
        raise _Return(self.eval(stmt.value, scope) if stmt.value is not None else None)

    def _exec_Assign(self, stmt: ast.Assign, scope: Scope | None) -> None:
        value = self.eval(stmt.value, scope)
        for target in stmt.targets:
            self.assign(target, value, scope)

    def _exec_AnnAssign(self, stmt: ast.AnnAssign, scope: Scope | None) -> None:
        if stmt.value is not None:
            self.assign(stmt.target, self.eval(stmt.value, scope), scope)

    def _exec_AugAssign(self, stmt: ast.AugAssign, scope: Scope | None) -> None:
        op = INPLACE_OPERATORS[type(stmt.op)]
        target = stmt.target
        rhs = self.eval(stmt.value, scope)
        if isinstance(target, ast.Name):
            current = self.lookup(target.id, scope)
            self.store(target.id, self._binary(op, current, rhs, type(stmt.op)), scope)
        elif isinstance(target, ast.Subscript):
            obj = self.eval(target.value, scope)
            index = self.eval(target.slice, scope)
            current = obj[index]
            result = self._binary(op, current, rhs, type(stmt.op))
            self._check_container_write(obj, index, result)
            obj[index] = result
            self._touch_arrays(obj)
        elif isinstance(target, ast.Attribute):
            obj = self.eval(target.value, scope)
            current = self.get_attribute(obj, target.attr)
            self.set_attribute(obj, target.attr, self._binary(op, current, rhs, type(stmt.op)))
        else:
            raise SandboxError("unsupported augmented assignment target", line=stmt.lineno)

    def _exec_Delete(self, stmt: ast.Delete, scope: Scope | None) -> None:
        for target in stmt.targets:
            if isinstance(target, ast.Name):
                names = scope.names if scope is not None else self.globals
                if target.id not in names:
                    raise NameError(f"name '{target.id}' is not defined")
                del names[target.id]
            elif isinstance(target, ast.Subscript):
                obj = self.eval(target.value, scope)
                self._check_container_write(obj)
                del obj[self.eval(target.slice, scope)]
            elif isinstance(target, ast.Attribute):
                # del obj.name: delattr's rules (the script's own attributes, a module's
                # parameters, buffers and submodules)
                self._delattr(self.eval(target.value, scope), target.attr)
            else:
                raise SandboxError("only names, items and attributes can be deleted", line=stmt.lineno)

    def _exec_If(self, stmt: ast.If, scope: Scope | None) -> None:
        if self.eval(stmt.test, scope):
            self.exec_block(stmt.body, scope)
        else:
            self.exec_block(stmt.orelse, scope)

    def _exec_For(self, stmt: ast.For, scope: Scope | None) -> None:
        iterable = self.eval(stmt.iter, scope)
        broke = False
        try:
            total: int | None = len(iterable) if isinstance(
                iterable, (list, tuple, range, dict, str, torch.Tensor, torch.utils.data.DataLoader)
            ) else None
        except TypeError:
            total = None
        loop: list[Any] = [0, total]
        self.loops.append(loop)
        try:
            for item in self._iterate(iterable):
                loop[0] += 1
                self.assign(stmt.target, item, scope)
                if self._loop_body(stmt.body, scope):
                    broke = True
                    break
        finally:
            self.loops.pop()
        if not broke:
            self.exec_block(stmt.orelse, scope)

    def _loop_body(self, body: list[ast.stmt], scope: Scope | None) -> bool:
        """Run a loop's body once; True when it ran ``break``."""
        try:
            self.exec_block(body, scope)
        except _Break:
            return True
        except _Continue:
            pass
        return False

    def _exec_While(self, stmt: ast.While, scope: Scope | None) -> None:
        broke = False
        loop: list[Any] = [0, None]
        self.loops.append(loop)
        try:
            while self.eval(stmt.test, scope):
                self._tick()
                loop[0] += 1
                if self._loop_body(stmt.body, scope):
                    broke = True
                    break
        finally:
            self.loops.pop()
        if not broke:
            self.exec_block(stmt.orelse, scope)

    def _exec_Assert(self, stmt: ast.Assert, scope: Scope | None) -> None:
        if not self.eval(stmt.test, scope):
            message = self.eval(stmt.msg, scope) if stmt.msg is not None else ""
            raise AssertionError(message)

    def _exec_With(self, stmt: ast.With, scope: Scope | None) -> None:
        managers: list[Any] = []
        try:
            for item in stmt.items:
                manager = self.eval(item.context_expr, scope)
                if not isinstance(manager, CONTEXT_MANAGERS):
                    raise SandboxError(
                        "'with' supports torch.no_grad(), torch.enable_grad(), "
                        "torch.inference_mode(), torch.set_grad_enabled(b), "
                        "torch.autograd.graph.saved_tensors_hooks(pack, unpack), "
                        "torch.autograd.forward_ad.dual_level(), "
                        "torch.autograd.profiler.profile(), torch.autocast(...) and "
                        "contextlib.nullcontext()",
                        line=stmt.lineno,
                    )
                value = manager.__enter__()  # type: ignore[attr-defined]
                managers.append(manager)
                if item.optional_vars is not None:
                    self.assign(item.optional_vars, value, scope)
            self.exec_block(stmt.body, scope)
        except BaseException as exc:
            # Grad mode is restored even when the block fails.
            for manager in reversed(managers):
                manager.__exit__(type(exc), exc, exc.__traceback__)
            managers = []
            raise
        finally:
            for manager in reversed(managers):
                manager.__exit__(None, None, None)

    def _exec_Import(self, stmt: ast.Import, scope: Scope | None) -> None:
        for alias in stmt.names:
            if alias.asname:
                self.store(alias.asname, self.modules[alias.name], scope)
            else:
                top = alias.name.split(".")[0]
                self.store(top, self.modules[top], scope)

    def _exec_ImportFrom(self, stmt: ast.ImportFrom, scope: Scope | None) -> None:
        module = self.modules[stmt.module or ""]
        for alias in stmt.names:
            if alias.name not in module.members:
                raise SandboxError(
                    suggest.refused_from_import(module, alias.name), line=stmt.lineno
                )
            self.store(alias.asname or alias.name, module.members[alias.name], scope)

    def _exec_FunctionDef(self, stmt: ast.FunctionDef, scope: Scope | None) -> None:
        value: Any = self._make_function(stmt.name, stmt.args, stmt.body, scope)
        for deco_node in reversed(stmt.decorator_list):
            value = self._apply_decorator(self.eval(deco_node, scope), value, stmt)
        self.store(stmt.name, value, scope)

    def _apply_decorator(self, deco: Any, value: Any, stmt: ast.FunctionDef) -> Any:
        """Decorators a script may use: its own functions and the grad-mode managers."""
        if deco in (torch.no_grad, torch.enable_grad, torch.inference_mode):
            deco = deco()  # @torch.no_grad without parentheses, as PyTorch allows
        if isinstance(deco, torch.autocast) and isinstance(value, ScriptFunction):
            return dataclasses.replace(value, grad_mode=_AutocastSpec(deco))
        if isinstance(deco, GRAD_MODE_MANAGERS) and isinstance(value, ScriptFunction):
            return dataclasses.replace(value, grad_mode=deco)
        if isinstance(deco, ScriptFunction):
            return self.call_script_function(deco, (value,), {})
        if type(deco) is StdlibFunction and deco.name in ("wraps", "cache", "lru_cache"):
            return self.call(deco, (value,), {})
        raise SandboxError(
            f"the decorator on '{stmt.name}' is refused: decorators may be functions the "
            "script defines, @torch.no_grad(), @torch.enable_grad(), @torch.inference_mode(), "
            "@staticmethod (in a class) and @once_differentiable (on an autograd.Function's "
            "backward)",
            line=stmt.lineno,
        )

    def _property_decorator(
        self, nodes: list[ast.expr], namespace: dict[str, Any], item: ast.FunctionDef,
        is_module: bool,
    ) -> tuple[str, property | None] | None:
        """``@property`` or ``@name.setter`` / ``@name.getter`` as the outermost decorator
        of a method: ("property", None) or (kind, the property it extends); None for any
        other decorator. ``name`` is read from the class body being built, as Python reads
        it from the class namespace, and must be a property this body made."""
        if not nodes:
            return None
        node = nodes[0]
        if isinstance(node, ast.Name) and node.id == "property":
            if self.lookup("property", None) is not property:
                return None
            found: tuple[str, property | None] = ("property", None)
        elif (
            isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
            and node.attr in ("setter", "getter", "deleter")
        ):
            base = namespace.get(node.value.id)
            if not isinstance(base, property) or self._script_properties.get(id(base)) is not base:
                return None
            if node.attr == "deleter":
                raise SandboxError(
                    f"a property's deleter is refused in gradviz scripts ('{item.name}')",
                    line=item.lineno,
                )
            found = (node.attr, base)
        else:
            return None
        if is_module and item.name in _MODULE_INSTANCE_NAMES:
            # nn.Module keeps these on every instance and torch and gradviz read them
            # (module.training) outside the script's statements
            raise SandboxError(
                f"a property named '{item.name}' is refused on a module: nn.Module keeps "
                "its own value under that name",
                line=item.lineno,
            )
        return found

    def _is_script_property(self, value: Any) -> bool:
        return isinstance(value, (property, functools.cached_property)) and (
            self._script_properties.get(id(value)) is value
        )

    def _method_decorators(self, item: ast.FunctionDef, scope: Scope | None) -> list[Any]:
        return [self.eval(d, scope) for d in item.decorator_list]

    def _exec_Try(self, stmt: ast.Try, scope: Scope | None) -> None:
        try:
            try:
                self.exec_block(stmt.body, scope)
            except (_Return, _Break, _Continue, SandboxError, RecursionError, MemoryError):
                raise  # control flow, refusals and limits are never the script's to catch
            except Exception as exc:  # noqa: BLE001 - matched against the handlers below
                original = getattr(exc, "original", exc) if type(exc).__name__ == "_WithTrace" else exc
                if isinstance(original, (SandboxError, RecursionError, MemoryError)):
                    raise
                for handler in stmt.handlers:
                    assert handler.type is not None  # the static check refuses a bare except
                    wanted = self.eval(handler.type, scope)
                    if not _is_exception_spec(wanted):
                        raise SandboxError(
                            "'except' names exception classes such as Exception, ValueError "
                            "or RuntimeError"
                        ) from None
                    if isinstance(original, wanted):
                        caught = script_exception(original)
                        if handler.name:
                            self.store(handler.name, caught, scope)
                        self._handling.append(caught)
                        try:
                            self.exec_block(handler.body, scope)
                        finally:
                            self._handling.pop()
                        break
                else:
                    raise
            else:
                self.exec_block(stmt.orelse, scope)
        finally:
            self.exec_block(stmt.finalbody, scope)

    def _exec_Raise(self, stmt: ast.Raise, scope: Scope | None) -> None:
        if stmt.exc is None:
            if not self._handling:
                raise RuntimeError("No active exception to reraise")
            raise self._handling[-1]
        exc = self.eval(stmt.exc, scope)
        if stmt.cause is not None:
            # 'raise X from err': the cause is evaluated (a name error shows) and not kept:
            # what a script catches is always a fresh exception holding only its message
            cause = self.eval(stmt.cause, scope)
            if cause is not None and not (
                isinstance(cause, BaseException)
                or (isinstance(cause, type) and cause in _SCRIPT_EXCEPTION_TYPES)
            ):
                raise TypeError("exception causes must derive from BaseException")
        if isinstance(exc, type) and exc in _SCRIPT_EXCEPTION_TYPES:
            exc = exc()
        if type(exc) not in _SCRIPT_EXCEPTION_TYPES:
            raise SandboxError(
                "a script may raise " + ", ".join(sorted(ns.SCRIPT_EXCEPTIONS)) + " exceptions"
            )
        # formatted now, under the guard: the report formats only a string later
        raise script_exception(exc)

    def _make_function(
        self, name: str, args: ast.arguments, body: Any, scope: Scope | None
    ) -> ScriptFunction:
        defaults = [self.eval(d, scope) for d in args.defaults]
        kw_defaults = [
            self.eval(d, scope) if d is not None else _NO_DEFAULT for d in args.kw_defaults
        ]
        fn = ScriptFunction(name, args, body, defaults, kw_defaults, scope, self)
        fn.is_generator = isinstance(body, list) and _yields_in(body)
        return fn

    def _exec_ClassDef(self, stmt: ast.ClassDef, scope: Scope | None) -> None:
        bases = [self.eval(b, scope) for b in stmt.bases]
        if bases != [torch.autograd.Function]:
            self._make_script_class(stmt, bases, scope)
            return
        if stmt.decorator_list:
            raise SandboxError(
                f"class {stmt.name}: an autograd.Function takes no class decorators",
                line=stmt.lineno,
            )
        methods: dict[str, Any] = {}
        for item in stmt.body:
            _check_class_body_item(item, stmt.name, nested=False)
            if isinstance(item, ast.FunctionDef):
                if item.name not in ("forward", "backward", "setup_context", "jvp"):
                    raise SandboxError(
                        f"an autograd.Function may define forward, backward, setup_context and jvp, "
                        f"not '{item.name}'",
                        line=item.lineno,
                    )
                fn = self._make_function(f"{stmt.name}.{item.name}", item.args, item.body, scope)
                host: Callable[..., Any] = _host_callable(fn)
                for deco in reversed(self._method_decorators(item, scope)):
                    if deco is staticmethod:
                        continue
                    if deco is torch.autograd.function.once_differentiable and item.name == "backward":
                        host = torch.autograd.function.once_differentiable(host)
                    elif isinstance(deco, GRAD_MODE_MANAGERS):
                        fn.grad_mode = deco
                    else:
                        raise SandboxError(
                            "an autograd.Function's methods take @staticmethod, and its "
                            "backward @once_differentiable",
                            line=item.lineno,
                        )
                methods[item.name] = staticmethod(host)
        if "forward" not in methods or not ({"backward", "jvp"} & set(methods)):
            raise SandboxError(
                f"class {stmt.name} needs forward and backward (or jvp, for forward mode)",
                line=stmt.lineno,
            )
        methods["__module__"] = "gradviz.script"
        cls = type(stmt.name, (torch.autograd.Function,), methods)
        self.script_classes.add(cls)
        self.store(stmt.name, cls, scope)

    def _make_script_class(self, stmt: ast.ClassDef, bases: list[Any], scope: Scope | None) -> None:
        """``class Net(nn.Module)`` or a plain helper class: methods run in this interpreter."""
        bases = [b for b in bases if b is not object]  # class X(object): Python 2's spelling
        decorators = [self.eval(d, scope) for d in stmt.decorator_list]
        for deco in decorators:
            if not (isinstance(deco, ScriptFunction) or getattr(deco, "name", None) in (
                    "dataclass", "unique") and isinstance(deco, StdlibFunction)):
                raise SandboxError(
                    f"the decorator on class {stmt.name} is refused: a class may take "
                    "@dataclass (dataclasses.dataclass(...)) and functions the script defines",
                    line=stmt.lineno,
                )
        is_enum = any(isinstance(b, enum.EnumMeta) for b in bases)
        for base in bases:
            allowed = base in self.script_classes or base is torch.utils.data.Dataset or (
                # class Color(Enum), class Mode(str, Enum): enum's bases and their mixins
                is_enum and any(base is b for b in _ENUM_BASES)
            ) or (
                isinstance(base, type)
                and issubclass(base, torch.nn.Module)
                and (base is torch.nn.Module or base in self._allowed_types)
            )
            if not allowed or (isinstance(base, type) and issubclass(base, torch.autograd.Function)):
                raise SandboxError(
                    f"class {stmt.name} may derive from torch.nn.Module, an nn layer, "
                    "torch.autograd.Function, torch.utils.data.Dataset or another script "
                    "class, not "
                    f"{_describe_callable(base)}",
                    line=stmt.lineno,
                )
        namespace: dict[str, Any] = {"__module__": "gradviz.script", "__qualname__": stmt.name}
        functions: list[ScriptFunction] = []
        is_module = any(isinstance(b, type) and issubclass(b, torch.nn.Module) for b in bases)
        library = [
            k for b in bases for k in getattr(b, "__mro__", ())
            if k not in self.script_classes and k not in (object, torch.utils.data.Dataset)
        ]
        for item in stmt.body:
            _check_class_body_item(item, stmt.name, nested=not is_enum)
            if is_enum:
                _check_enum_body_item(item, stmt.name)
            if isinstance(item, ast.FunctionDef) and item.name in ("__len__", "__getitem__",
                                                                   "__iter__"):
                owner = next((k for k in library if item.name in k.__dict__), None)
                if owner is not None:
                    # torch calls the base's protocol itself (ModuleList's repr iterates
                    # it) outside the script's statements
                    raise SandboxError(
                        f"class {stmt.name} may not redefine {owner.__name__}'s "
                        f"'{item.name}': torch calls it outside your code",
                        line=item.lineno,
                    )
            for name in _class_body_names(item):
                # train/eval too: only the script calls them (model.eval() calls self.train),
                # inside its statements; gradviz reads modules through nn.Module's own functions
                overridable = _MODULE_OVERRIDABLE if isinstance(item, ast.FunctionDef) else (
                    _MODULE_OVERRIDABLE - {"parameters", "extra_repr"})  # as methods only
                if is_module and name not in overridable and hasattr(torch.nn.Module, name):
                    # gradviz and torch call these on every module (capture walks
                    # named_parameters, printing calls extra_repr): outside the statement
                    raise SandboxError(
                        f"class {stmt.name} may not redefine nn.Module's '{name}': gradviz "
                        "and torch call it outside your code; pick another name",
                        line=getattr(item, "lineno", stmt.lineno),
                    )
            if isinstance(item, ast.FunctionDef):
                fn = self._make_function(f"{stmt.name}.{item.name}", item.args, item.body, scope)
                static = False
                bound_to_class = False
                value: Any = fn
                decorator_nodes = list(item.decorator_list)
                # @property / @name.setter: the outermost decorator, read from the class
                # body being built (Python's class namespace), never evaluated as a name
                prop = self._property_decorator(decorator_nodes[:1], namespace, item, is_module)
                if prop is not None:
                    decorator_nodes = decorator_nodes[1:]
                evaluated = [self.eval(d, scope) for d in decorator_nodes]
                cached = prop is None and bool(evaluated) and type(evaluated[0]) is StdlibFunction \
                    and evaluated[0].name == "cached_property"
                if (prop is not None or cached) and (
                    item.name.startswith("__") or item.name in CLASS_DUNDERS
                    or item.name in _MODULE_OVERRIDABLE
                ):
                    # Python and torch call what such a name holds (G()(...), m(x) calls
                    # forward, map, DataLoader): through a property, the getter's result
                    # would be called with the script's arguments, never vetted (a getter
                    # returning np.ndarray forged objects and reached real exec)
                    raise SandboxError(
                        f"a property named '{item.name}' is refused in gradviz scripts: "
                        "Python calls what that name holds; define it as a method",
                        line=item.lineno,
                    )
                if cached:
                    # computed once per instance by the script's method, then kept in the
                    # instance's own attributes (Python's cached_property)
                    evaluated = evaluated[1:]
                    if is_module and item.name in _MODULE_INSTANCE_NAMES:
                        raise SandboxError(
                            f"a cached_property named '{item.name}' is refused on a module: "
                            "nn.Module keeps its own value under that name",
                            line=item.lineno,
                        )
                for deco in reversed(evaluated):
                    if deco is staticmethod and prop is None and not bound_to_class:
                        static = True
                    elif deco is classmethod and prop is None and not static:
                        bound_to_class = True  # Config.from_dict(d): the class comes first
                    else:
                        value = self._apply_decorator(deco, value, item)
                if not isinstance(value, (ScriptFunction, ScriptCache)):
                    raise SandboxError(
                        f"the decorators on '{item.name}' must give back a function",
                        line=item.lineno,
                    )
                if cached and (static or bound_to_class):
                    raise SandboxError(
                        f"cached_property on '{item.name}' takes an ordinary method",
                        line=item.lineno,
                    )
                if isinstance(value, ScriptCache):
                    # @functools.lru_cache on a method: self is part of the key, as in Python
                    functions += [f for f in (value.fn, fn) if isinstance(f, ScriptFunction)]
                    if prop is None and not cached:
                        namespace[item.name] = (
                            staticmethod(value) if static
                            else classmethod(_host_cached_method(value)) if bound_to_class
                            else _host_cached_method(value)
                        )
                        continue
                else:
                    functions.append(value)  # the decorated one: super() needs its owner
                    if value is not fn:
                        functions.append(fn)
                if prop is not None or cached:
                    method = (_host_method(value) if isinstance(value, ScriptFunction)
                              else _host_cached_method(value))
                    made: Any
                    if cached:
                        made = functools.cached_property(method)
                    else:
                        assert prop is not None
                        kind, base = prop
                        made = (property(method) if base is None
                                else getattr(base, kind)(method))
                    self._script_properties[id(made)] = made
                    namespace[item.name] = made
                    continue
                assert isinstance(value, ScriptFunction)  # a cache or property went on above
                namespace[item.name] = (
                    staticmethod(_host_callable(value)) if static
                    else classmethod(_host_method(value)) if bound_to_class
                    else _host_method(value)
                )
                if is_module and item.name == "extra_repr" and not static:
                    namespace[item.name] = _bounded_extra_repr(namespace[item.name])
            elif isinstance(item, ast.ClassDef):
                # a nested class (gym's env.spec): made like any script class, kept as
                # a class attribute
                inner = Scope({}, scope)
                self._exec_ClassDef(item, inner)
                namespace[item.name] = inner.names[item.name]
            elif isinstance(item, (ast.Assign, ast.AnnAssign)) and item.value is not None:
                value = self.eval(item.value, scope)
                targets = item.targets if isinstance(item, ast.Assign) else [item.target]
                pairs: list[tuple[str, Any]] = []
                for target in targets:
                    if isinstance(target, ast.Tuple):
                        values = list(self._iterate(value))
                        if len(values) != len(target.elts):
                            raise ValueError(
                                f"cannot unpack {len(values)} values into {len(target.elts)} names"
                            )
                        pairs += [(e.id, v) for e, v in zip(target.elts, values)]  # type: ignore[attr-defined]
                    else:
                        assert isinstance(target, ast.Name)
                        pairs.append((target.id, value))
                for name, one in pairs:
                    if decorators and isinstance(one, dataclasses.Field) and id(one) in self._fields_made:
                        pass  # dataclasses.field(...) made by the script, its factory vetted
                    elif is_enum and isinstance(one, enum.auto):
                        pass  # a member's value, numbered by enum
                    elif not (_is_plain_data(one) or (isinstance(one, type) and one in self.script_classes)):
                        raise SandboxError(
                            "class attributes must be numbers, strings, tuples, tensors, dtypes, "
                            "devices or classes the script defines",
                            line=item.lineno,
                        )
                    namespace[name] = one
        # annotations as written (never evaluated): what @dataclass reads its fields from
        namespace["__annotations__"] = {
            item.target.id: ast.unparse(item.annotation)
            for item in stmt.body
            if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)
        }
        if is_enum:
            cls = self._make_enum_class(stmt.name, bases, namespace)
        else:
            cls = type(stmt.name, tuple(bases) or (object,), namespace)
        for fn in functions:
            fn.owner = cls
        self.script_classes.add(cls)
        result: Any = cls
        for node, deco in reversed(list(zip(stmt.decorator_list, decorators))):
            saved_line = self.current_line
            self.current_line = node.lineno  # an error is on the decorator's line, as in Python
            result = self.call(deco, (result,), {})
            self.current_line = saved_line
        if isinstance(result, type) and result in self.script_classes:
            result.__module__ = "__main__"  # print(type(x)): <class '__main__.Net'>, as in Python
        self.store(stmt.name, result, scope)

    def _make_enum_class(self, name: str, bases: list[Any], namespace: dict[str, Any]) -> type:
        """An enum class from what the class statement evaluated: enum's metaclass
        numbers auto() values and makes the members; what it writes into the class
        besides the script's names stays the library's (see _defined_by_script)."""
        meta = type(next(b for b in bases if isinstance(b, enum.EnumMeta)))
        classdict = meta.__prepare__(name, tuple(bases))
        for key, value in namespace.items():
            classdict[key] = value
        cls = meta(name, tuple(bases), classdict)
        if not len(cls):  # type: ignore[arg-type]
            # a member-less enum answers Enum's functional API (Base('X', 'a b'), which
            # library code could call in C: map(Base, ...)) by making a class
            raise SandboxError(f"enum class {name} needs members in gradviz scripts")
        self._enum_names[cls] = frozenset(
            k for k in namespace if k not in ("__module__", "__qualname__", "__annotations__")
        )
        return cls

    def _enum_unique(self, cls: Any) -> Any:
        """``@enum.unique`` on an enum class the script made."""
        if not self._is_script_enum(cls):
            raise SandboxError("@enum.unique decorates an enum class the script defines")
        return enum.unique(cls)

    def _is_script_instance(self, obj: Any) -> bool:
        return any(klass in self.script_classes for klass in type(obj).__mro__)

    def _defined_by_script(self, cls: type, name: str) -> bool | None:
        """True when the class that defines ``name`` first in ``cls``'s MRO is a script
        class, False when another class does, None when none does."""
        for klass in cls.__mro__:
            if name in klass.__dict__:
                # an enum's metaclass writes its own names (_new_member_, _member_map_)
                # into the script's class: those are the library's
                written = self._enum_names.get(klass)
                return klass in self.script_classes and (written is None or name in written)
        return None

    def _is_script_enum(self, value: Any) -> bool:
        return isinstance(value, enum.EnumMeta) and value in self._enum_names

    def _super(self, *args: Any) -> SuperProxy:
        if not self._frames or self._frames[-1][0].owner is None:
            raise SandboxError("super() works only inside a method of a script class")
        fn, local = self._frames[-1]
        first = local.first_arg
        assert fn.owner is not None
        if not local.has_first_arg or not isinstance(first, fn.owner) or isinstance(first, type):
            raise SandboxError("super() needs the method's first argument (self)")
        cls: type = fn.owner
        if args:
            # super(Net, self), as older tutorials write it: a script class of self's,
            # and the method's own self, nothing else
            if len(args) != 2 or args[1] is not first or args[0] not in self.script_classes:
                raise SandboxError(
                    "super(Class, self) takes a script class and the method's own self; "
                    "or write super()"
                )
            if not isinstance(first, args[0]):
                raise SandboxError("super(Class, self): self is not a Class")
            cls = args[0]
        return SuperProxy(cls, first)

    def _super_attribute(self, proxy: SuperProxy, name: str) -> Any:
        """``super().__init__`` / ``super().forward``: the next class in the MRO decides."""
        mro = type(proxy.obj).__mro__
        rest = mro[mro.index(proxy.cls) + 1 :] if proxy.cls in mro else ()
        if name != "__init__":
            _check_attribute_name(name, self.current_line)
            owner = next((k for k in rest if name in k.__dict__), None)
            allowed = owner is not None and (
                owner in self.script_classes
                or (isinstance(proxy.obj, torch.nn.Module) and name in ns.MODULE_ATTRIBUTES)
            )
            if not allowed:
                raise SandboxError(f"super().{name} is not available in gradviz scripts")
            assert owner is not None
            if self._is_script_property(owner.__dict__[name]):
                return getattr(super(proxy.cls, proxy.obj), name)  # the base's getter's value
        return BoundSuperCall(getattr(super(proxy.cls, proxy.obj), name), name)

    # --- names -------------------------------------------------------------

    def lookup(self, name: str, scope: Scope | None) -> Any:
        if name == "__name__":
            return "__main__"  # a script is always the main program
        s = scope
        while s is not None:
            if name in s.names:
                return s.names[name]
            s = s.parent
        if name in self.globals:
            return self.globals[name]
        if name in self.builtins:
            return self.builtins[name]
        import builtins as py_builtins

        if hasattr(py_builtins, name):
            raise SandboxError(f"'{name}' is not available in gradviz scripts")
        raise NameError(f"name '{name}' is not defined")

    def store(self, name: str, value: Any, scope: Scope | None) -> None:
        if scope is not None:
            scope.names[name] = value
        else:
            self.globals[name] = value

    def assign(self, target: ast.expr, value: Any, scope: Scope | None) -> None:
        if isinstance(target, ast.Name):
            self.store(target.id, value, scope)
        elif isinstance(target, (ast.Tuple, ast.List)):
            self._unpack(target.elts, value, scope)
        elif isinstance(target, ast.Subscript):
            obj = self.eval(target.value, scope)
            index = self.eval(target.slice, scope)
            self._check_container_write(obj, index, value)
            obj[index] = value
            self._touch_arrays(obj)
        elif isinstance(target, ast.Attribute):
            self.set_attribute(self.eval(target.value, scope), target.attr, value)
        else:
            raise SandboxError("unsupported assignment target")

    def _unpack(self, targets: list[ast.expr], value: Any, scope: Scope | None) -> None:
        items = list(self._iterate(value))
        starred = [i for i, t in enumerate(targets) if isinstance(t, ast.Starred)]
        if not starred:
            if len(items) != len(targets):
                raise ValueError(
                    f"cannot unpack {len(items)} values into {len(targets)} names"
                )
            for t, v in zip(targets, items):
                self.assign(t, v, scope)
            return
        i = starred[0]
        after = len(targets) - i - 1
        if len(items) < len(targets) - 1:
            raise ValueError(f"not enough values to unpack (got {len(items)})")
        for t, v in zip(targets[:i], items[:i]):
            self.assign(t, v, scope)
        star = targets[i]
        assert isinstance(star, ast.Starred)
        self.assign(star.value, items[i : len(items) - after], scope)
        for t, v in zip(targets[i + 1 :], items[len(items) - after :]):
            self.assign(t, v, scope)

    def _check_container_write(self, obj: Any, *item: Any) -> None:
        """``obj[index] = value`` (item: index, value), ``del obj[index]`` (no item)."""
        if isinstance(obj, (ns.SafeModule, type, types.ModuleType)):
            raise SandboxError(f"cannot assign items of {_type_name(obj)}")
        if self._is_optimizer_state(obj):
            # state[k] = v.cuda(), as scripts resuming on a GPU write it: a buffer may be
            # replaced by a tensor of its shape and dtype only
            index, value = item if item else (_NO_VALUE, _NO_VALUE)
            root = _optimizer_state_root(self._optimizers_read, obj)
            per_param = item and obj is not root and _is_hashable(index)
            current = obj.get(index, _NO_VALUE) if per_param else _NO_VALUE
            if not (
                isinstance(current, torch.Tensor) and isinstance(value, torch.Tensor)
                and type(value) is type(current)
                and value.shape == current.shape and value.dtype == current.dtype
            ):
                raise SandboxError(_OPTIMIZER_STATE_READ_ONLY)

    def _is_optimizer_state(self, obj: Any) -> bool:
        """Whether ``obj`` is an optimizer's ``state`` or one parameter's dict in it:
        the optimizer's kernels trust what they find there (a buffer of another shape,
        a step that is not a tensor), so a script reads them only."""
        if not isinstance(obj, dict) or not self._optimizers_read:
            return False
        for optimizer in list(self._optimizers_read):
            state = optimizer.state
            if obj is state or any(obj is per_param for per_param in state.values()):
                return True
        return False

    # --- expressions -------------------------------------------------------

    def eval(self, node: ast.expr, scope: Scope | None) -> Any:
        return getattr(self, "_eval_" + type(node).__name__)(node, scope)

    def _eval_Constant(self, node: ast.Constant, scope: Scope | None) -> Any:
        return node.value

    def _eval_Name(self, node: ast.Name, scope: Scope | None) -> Any:
        return self.lookup(node.id, scope)

    def _eval_Attribute(self, node: ast.Attribute, scope: Scope | None) -> Any:
        obj = self.eval(node.value, scope)
        if isinstance(obj, SuperProxy):
            return self._super_attribute(obj, node.attr)
        return self.get_attribute(obj, node.attr)

    def _eval_Subscript(self, node: ast.Subscript, scope: Scope | None) -> Any:
        obj = self.eval(node.value, scope)
        if isinstance(obj, (ns.SafeModule, type)) and obj is not torch.Tensor and not (
            self._is_script_enum(obj)  # Color['RED']: a member by name
        ):
            raise SandboxError(f"{_type_name(obj)} cannot be subscripted in gradviz scripts")
        return self._checked_value(obj[self.eval(node.slice, scope)])

    def _eval_Slice(self, node: ast.Slice, scope: Scope | None) -> slice:
        def part(n: ast.expr | None) -> Any:
            return None if n is None else self.eval(n, scope)

        return slice(part(node.lower), part(node.upper), part(node.step))

    def _eval_Tuple(self, node: ast.Tuple, scope: Scope | None) -> tuple:
        return tuple(self._eval_elements(node.elts, scope))

    def _eval_List(self, node: ast.List, scope: Scope | None) -> list:
        return self._eval_elements(node.elts, scope)

    def _eval_Set(self, node: ast.Set, scope: Scope | None) -> set:
        return set(self._eval_elements(node.elts, scope))

    def _eval_elements(self, elts: list[ast.expr], scope: Scope | None) -> list:
        out: list[Any] = []
        for e in elts:
            if isinstance(e, ast.Starred):
                out.extend(self._iterate(self.eval(e.value, scope)))
            else:
                out.append(self.eval(e, scope))
        self._check_length(len(out), 0)  # built: counted in what the process holds
        return out

    def _eval_Dict(self, node: ast.Dict, scope: Scope | None) -> dict:
        out: dict[Any, Any] = {}
        for k, v in zip(node.keys, node.values):
            if k is None:
                mapping = self.eval(v, scope)
                if not isinstance(mapping, dict):
                    raise TypeError("'**' needs a dict")
                out.update(mapping)
            else:
                out[self.eval(k, scope)] = self.eval(v, scope)
        return out

    def _eval_BoolOp(self, node: ast.BoolOp, scope: Scope | None) -> Any:
        value: Any = None
        for v in node.values:
            value = self.eval(v, scope)
            if isinstance(node.op, ast.And) and not value:
                return value
            if isinstance(node.op, ast.Or) and value:
                return value
        return value

    def _eval_UnaryOp(self, node: ast.UnaryOp, scope: Scope | None) -> Any:
        return UNARY_OPERATORS[type(node.op)](self.eval(node.operand, scope))

    def _eval_BinOp(self, node: ast.BinOp, scope: Scope | None) -> Any:
        left = self.eval(node.left, scope)
        right = self.eval(node.right, scope)
        return self._binary(BINARY_OPERATORS[type(node.op)], left, right, type(node.op))

    def _binary(self, op: Callable[[Any, Any], Any], left: Any, right: Any, kind: type) -> Any:
        if op is operator.ior and self._is_optimizer_state(left):
            raise SandboxError(_OPTIMIZER_STATE_READ_ONLY)
        self._precheck_binary(left, right, kind)
        result = op(left, right)
        self._touch_arrays(left, result)
        if isinstance(result, int) and result.bit_length() > self.limits.max_int_bits:
            raise self._int_limit()
        if isinstance(result, (str, list, tuple)):
            self._check_length(len(result), 0)  # built: counted in what the process holds
        return self._checked_value(result)

    def _int_limit(self) -> LimitExceeded:
        return LimitExceeded(
            f"refused: the integer would have more than {self.limits.max_int_bits:,} bits "
            "(gradviz limit max_int_bits)",
            limit="max_int_bits",
        )

    def _precheck_binary(self, left: Any, right: Any, kind: type) -> None:
        """Refuse Python-level arithmetic whose result would be huge, before computing it."""
        cap = self.limits.max_int_bits
        if _is_int(left) and _is_int(right):
            left, right = _index_value(left), _index_value(right)
            assert left is not None and right is not None
            lb, rb = abs(left).bit_length(), abs(right).bit_length()
            if kind in (ast.Pow,) and right > 0 and lb > 1 and right * (lb - 1) > cap:
                raise self._int_limit()
            if kind is ast.Mult and lb + rb > cap + 1:
                raise self._int_limit()
            if kind is ast.LShift and right > 0 and lb + right > cap:
                raise self._int_limit()
        if kind is ast.Mod and isinstance(left, (str, bytes)):
            text = left if isinstance(left, str) else left.decode("latin-1")
            self._check_format_widths(" ".join(_PERCENT_SPEC.findall(text)), right)
            self._check_text(left, right)
        if kind is ast.MatMult and isinstance(left, np.ndarray) and isinstance(right, np.ndarray):
            if left.ndim >= 1 and right.ndim >= 1:
                work = left.size * (right.shape[-1] if right.ndim > 1 else 1)
                if work > self.limits.max_op_macs:
                    raise LimitExceeded(
                        f"refused: this numpy matmul would take {work:,} multiply-adds; the "
                        f"limit is {self.limits.max_op_macs:,} (gradviz limit max_op_macs)",
                        limit="max_op_macs",
                    )
        if kind is ast.Mult:
            for seq, n in ((left, right), (right, left)):
                count = _index_value(n)
                if isinstance(seq, (str, list, tuple, bytes, collections.deque)) and count is not None:
                    self._check_length(
                        len(seq) * max(count, 0), 1 if isinstance(seq, (str, bytes)) else 8
                    )
        if isinstance(left, np.ndarray) or isinstance(right, np.ndarray):
            shapes = [np.shape(v) for v in (left, right) if isinstance(v, (np.ndarray, list))]
            try:
                size = math.prod(np.broadcast_shapes(*shapes)) if shapes else 0
            except ValueError:
                return
            if size > self.limits.max_op_elements:
                raise LimitExceeded(
                    f"refused: the numpy result would have {size:,} elements; the limit is "
                    f"{self.limits.max_op_elements:,} (gradviz limit max_op_elements)",
                    limit="max_op_elements",
                )

    def _check_length(self, n: int, item_bytes: int = 8) -> None:
        """``n`` items about to be built (or just built): under the item cap, and, for
        a big one, within the process's memory cap with ``n * item_bytes`` more (8: a
        list's pointer per item; 1: a string's or bytes' characters, at least)."""
        if n > 100_000:
            self._check_memory(item_bytes * n)
        if n > self.limits.max_sequence_length:
            raise LimitExceeded(
                f"refused: a sequence or string of {n:,} items; the limit is "
                f"{self.limits.max_sequence_length:,} (gradviz limit max_sequence_length)",
                limit="max_sequence_length",
            )

    def _eval_Compare(self, node: ast.Compare, scope: Scope | None) -> Any:
        left = self.eval(node.left, scope)
        result: Any = True
        for op, comp in zip(node.ops, node.comparators):
            right = self.eval(comp, scope)
            result = COMPARE_OPERATORS[type(op)](left, right)
            if len(node.ops) > 1 and not result:
                return result
            left = right
        return result

    def _eval_IfExp(self, node: ast.IfExp, scope: Scope | None) -> Any:
        return self.eval(node.body if self.eval(node.test, scope) else node.orelse, scope)

    def _eval_JoinedStr(self, node: ast.JoinedStr, scope: Scope | None) -> str:
        parts: list[str] = []
        total = 0
        for value in node.values:
            part = self.eval(value, scope)
            total += len(part)
            self._check_length(total, 1)  # before the next field is built
            parts.append(part)
        return "".join(parts)

    def _eval_FormattedValue(self, node: ast.FormattedValue, scope: Scope | None) -> str:
        value = self.eval(node.value, scope)
        spec = self.eval(node.format_spec, scope) if node.format_spec is not None else ""
        self._check_format_widths(spec)
        self._check_text(value)
        with self._formatting():
            if node.conversion == ord("r"):
                value = repr(value)
            elif node.conversion == ord("s"):
                value = str(value)
            elif node.conversion == ord("a"):
                value = ascii(value)
            return scrub_addresses(format(value, spec))

    def _safe_format(self, template: str, args: tuple, kwargs: dict) -> str:
        """``str.format`` without attribute or index traversal into its arguments."""
        interp = self

        class Formatter(string.Formatter):
            def get_field(self, field_name: str, a: Any, k: Any) -> Any:
                if not _FORMAT_FIELD.fullmatch(field_name):
                    raise SandboxError(
                        f"str.format field '{{{field_name[:40]}}}' is refused: a field may "
                        "name an argument ({0} or {name}), not its attributes or items; "
                        "use an f-string"
                    )
                return super().get_field(field_name, a, k)

            def format_field(self, value: Any, spec: str) -> str:
                interp._check_format_widths(spec)
                return format(value, spec)

        with self._formatting():
            text = Formatter().vformat(template, args, kwargs)
        self._check_length(len(text), 0)  # built: counted in what the process holds
        return text

    def _check_format_widths(self, spec: str, values: Any = ()) -> None:
        """Widths and precisions in a format spec or a %-format build the string before
        any length check could see it: refuse the big ones up front."""
        cap = self.limits.max_str_length
        spec = re.sub(r"\([^)]*\)", "", spec)  # %(name)d: the key is not a width
        for digits in _FORMAT_NUMBER.findall(spec):
            if len(digits) > 9 or int(digits) > cap:
                raise LimitExceeded(
                    f"refused: a format width or precision of {digits[:12]}"
                    f"{'...' if len(digits) > 12 else ''} is over the limit {cap:,} "
                    "(gradviz limit max_str_length)",
                    limit="max_str_length",
                )
        if "*" in spec:
            items = values if isinstance(values, tuple) else (values,)
            for item in items:
                v = _index_value(item)
                if v is not None and abs(v) > cap:
                    raise LimitExceeded(
                        f"refused: a '*' format width of {v:,} is over the limit {cap:,} "
                        "(gradviz limit max_str_length)",
                        limit="max_str_length",
                    )

    def _formatting(self) -> Any:
        from .guards import paused

        return paused(self.format_guard)

    def _eval_Lambda(self, node: ast.Lambda, scope: Scope | None) -> ScriptFunction:
        return self._make_function("<lambda>", node.args, node.body, scope)

    def _eval_Starred(self, node: ast.Starred, scope: Scope | None) -> Any:
        raise SandboxError("'*' is only allowed in calls, lists and assignments")

    def _comprehension(
        self, generators: list[ast.comprehension], scope: Scope | None, emit: Callable[[Scope], None]
    ) -> None:
        inner = Scope({}, scope)

        def loop(level: int) -> None:
            gen = generators[level]
            for item in self._iterate(self.eval(gen.iter, inner if level else scope)):
                self.assign(gen.target, item, inner)
                if all(self.eval(cond, inner) for cond in gen.ifs):
                    if level + 1 == len(generators):
                        emit(inner)
                    else:
                        loop(level + 1)

        loop(0)

    def _eval_ListComp(self, node: ast.ListComp, scope: Scope | None) -> list:
        out: list[Any] = []
        self._comprehension(node.generators, scope, lambda s: out.append(self.eval(node.elt, s)))
        return out

    _eval_GeneratorExp = _eval_ListComp

    def _eval_SetComp(self, node: ast.SetComp, scope: Scope | None) -> set:
        out: set[Any] = set()
        self._comprehension(node.generators, scope, lambda s: out.add(self.eval(node.elt, s)))
        return out

    def _eval_DictComp(self, node: ast.DictComp, scope: Scope | None) -> dict:
        out: dict[Any, Any] = {}

        def emit(s: Scope) -> None:
            out[self.eval(node.key, s)] = self.eval(node.value, s)

        self._comprehension(node.generators, scope, emit)
        return out

    def _iterate(self, iterable: Any) -> Iterator[Any]:
        if isinstance(iterable, (ns.SafeModule, type)) and not self._is_script_enum(iterable):
            raise SandboxError(f"{_type_name(iterable)} is not iterable in gradviz scripts")
        for item in iterable:
            self._tick()
            yield item

    # --- calls -------------------------------------------------------------

    def _eval_Call(self, node: ast.Call, scope: Scope | None) -> Any:
        func = self.eval(node.func, scope)
        args: list[Any] = []
        for a in node.args:
            if isinstance(a, ast.Starred):
                args.extend(self._iterate(self.eval(a.value, scope)))
            else:
                args.append(self.eval(a, scope))
        kwargs: dict[str, Any] = {}
        for kw in node.keywords:
            if kw.arg is None:
                mapping = self.eval(kw.value, scope)
                if not isinstance(mapping, dict) or not all(isinstance(k, str) for k in mapping):
                    raise TypeError("'**' needs a dict with string keys")
                if any(k.startswith("_") for k in mapping):
                    raise SandboxError("keyword names starting with '_' are not allowed")
                kwargs.update(mapping)
            else:
                kwargs[kw.arg] = self.eval(kw.value, scope)
        return self.call(func, tuple(args), kwargs)

    def call(self, func: Any, args: tuple, kwargs: dict) -> Any:
        """Call ``func`` if the sandbox allows it; script functions run here."""
        self._check_deadline()
        if isinstance(func, ScriptFunction):
            return self.call_script_function(func, args, kwargs)
        wrapped = self._host_wrappers.get(id(func))
        if wrapped is not None and wrapped[0] is func:
            return self.call_script_function(wrapped[1], args, kwargs)
        if isinstance(func, ScriptPartial):
            return self.call(func.func, func.args + args, {**func.keywords, **kwargs})
        if isinstance(func, ScriptCache):
            return self._call_cached(func, args, kwargs)
        if getattr(func, "__self__", None) is self and getattr(func, "__func__", None) is Interpreter._type:
            return self._type(*args, **kwargs)  # type(print): it only looks at its argument
        if type(func) in (StdlibFunction, ChainFunction):
            result = func.func(*args, **kwargs)
            if isinstance(result, (str, list, tuple, dict, set)):
                self._check_length(len(result), 0)
            return self._checked_value(result)
        if func is types.SimpleNamespace or func is argparse.Namespace:
            if args:
                raise TypeError(f"{func.__name__}() takes no positional arguments")
            for value in kwargs.values():
                self._check_storable(value)
            return func(**kwargs)
        if (
            not isinstance(func, (type, torch.nn.Module))
            and self._is_script_instance(func)
            and self._defined_by_script(type(func), "__call__")
        ):
            func = type(func).__call__.__get__(func)  # the script's own __call__
            host_args = tuple(self._host_value(a) for a in args)
            host_kwargs = {k: self._host_value(v) for k, v in kwargs.items()}
            return func(*host_args, **host_kwargs)
        if isinstance(func, enum.EnumMeta) and (len(args) != 1 or kwargs):
            # Color(value) looks a member up; Enum's functional API (names=, type=) makes
            # classes outside the class statement's checks
            raise SandboxError(
                f"an enum class takes one value in gradviz scripts: {func.__name__}(value)"
            )
        if isinstance(func, type) and func in _LIST_KEEPERS:
            # torch keeps the very list it is given (d.transforms, c.parts): it gets a
            # fresh one the script cannot reach, so what torch calls later is what the
            # call was checked with (the script's list rewritten with np.ndarray was
            # called by torch at d.sample())
            args = tuple(list(a) if type(a) in (list, tuple) else a for a in args)
            kwargs = {k: list(v) if type(v) in (list, tuple) else v for k, v in kwargs.items()}
        self._vet_callable(func)
        if func is isinstance and len(args) == 2 and not kwargs:
            return isinstance(args[0], _isinstance_types(args[1]))
        if id(func) in self._data_sinks and self._data_sinks[id(func)] is func:
            host_args = tuple(
                # nodes and classes are data to print, len, str: type(torch) prints
                a if isinstance(a, (torch.autograd.graph.Node, type)) else self._host_value(a)
                for a in args
            )
            host_kwargs = {k: self._host_value(v) for k, v in kwargs.items()}
            if (func is str or func is repr) and host_args:
                self._check_text(host_args[0])  # before the text is built
            with self._formatting():
                result = func(*host_args, **host_kwargs)
            if isinstance(result, (str, list, tuple)):
                self._check_length(len(result), 0)  # built: counted in what the process holds
            return scrub_addresses(result) if isinstance(result, str) else result
        owner = getattr(func, "__self__", None)
        if isinstance(owner, str) and getattr(func, "__name__", "") == "format":
            self._check_text(owner, *args, *kwargs.values())
            return scrub_addresses(self._safe_format(owner, args, kwargs))
        host_args = tuple(self._host_value(a) for a in args)
        key = kwargs.get("key")
        if (key is len or key is abs) and (
            func is sorted or func is min or func is max
            or (isinstance(owner, list) and getattr(func, "__name__", "") == "sort")
        ):
            kwargs = {k: v for k, v in kwargs.items() if k != "key"}  # sort(key=len): a measure
        else:
            key = None
        host_kwargs = {k: self._host_value(v) for k, v in kwargs.items()}
        if key is not None:
            host_kwargs["key"] = key
        self._precheck_call(func, host_args, host_kwargs)
        if func is torch.autograd.graph.saved_tensors_hooks:
            host_args, host_kwargs = _checked_saved_tensor_hooks(host_args, host_kwargs)
        if self.call_hook is not None and _is_backward_call(func):
            meter = self.format_guard if isinstance(self.format_guard, OpGuard) else None

            def engine() -> Any:
                # the session runs the engine outside the guard: its ops are metered
                with metering(meter):
                    return func(*host_args, **host_kwargs)

            return self.call_hook(func, host_args, host_kwargs, engine)
        if self.module_hook is not None and isinstance(func, torch.nn.Module):
            return self.module_hook(func, lambda: func(*host_args, **host_kwargs))
        shares_numpy = (func is torch.from_numpy or func is torch.as_tensor) and any(
            isinstance(a, np.ndarray) for a in host_args
        )
        guard = self.format_guard
        if shares_numpy and guard is not None:
            guard.lifting_shared = True
        kept = None
        if func is _PARAMETRIZE.remove_parametrizations:
            kept = _KeptGeometry(_originals(host_args[0], host_args[1] if len(host_args) > 1
                                            else host_kwargs.get("tensor_name")))
        try:
            result = func(*host_args, **host_kwargs)
        finally:
            if shares_numpy and guard is not None:
                guard.lifting_shared = False
            if kept is not None:
                kept.check()
        if any(func is f for f in _PARAMETRIZING) and host_args and isinstance(
            host_args[0], torch.nn.Module
        ) and _PARAMETRIZE.is_parametrized(host_args[0]):
            _PARAMETRIZED_CLASSES.add(type(host_args[0]))
        self._touch_arrays(owner, result, *host_args)
        transform = self._transforms.get(id(func))
        if transform is not None and transform[0] is func:
            result = _wrap_returned_functions(
                result, transform[1], getattr(func, "__name__", "function")
            )
        owner = getattr(func, "__self__", None)
        if isinstance(owner, (list, dict, set)):
            # extend/update/insert return None: the container itself is what grew
            self._check_length(len(owner), 0)
        if isinstance(result, (str, list, tuple, dict, set)):
            self._check_length(len(result), 0)  # built: counted in what the process holds
        return self._checked_value(result)

    def _touch_arrays(self, *values: Any) -> None:
        """numpy arrays an operation wrote or made: their pages become resident as they
        are written (``np.empty`` and ``np.zeros`` map memory that costs nothing until
        then), and no torch op sees it. Once they add up to PROCESS_SAMPLE_BYTES, the
        process's memory is read against its cap."""
        total = 0
        for value in values:
            if isinstance(value, np.ndarray):
                total += value.nbytes
        if not total:
            return
        self._arrays_unsampled += total
        if self._arrays_unsampled >= PROCESS_SAMPLE_BYTES:
            self._arrays_unsampled = 0
            self._check_memory()

    def _checked_value(self, value: Any) -> Any:
        """Refuse numpy values a script must never hold (see :func:`check_script_array`)."""
        if isinstance(value, (np.ndarray, np.generic)):
            check_script_array(value, self.limits)
        elif isinstance(value, tuple) and value and isinstance(value[0], np.ndarray):
            for v in value:
                if isinstance(v, (np.ndarray, np.generic)):
                    check_script_array(v, self.limits)
        return value

    def _vet_callable(self, func: Any) -> None:
        if _is_transform(func):
            return  # a transform object: torch's own code on tensors (some are unhashable)
        if func in ns.TYPES_NOT_CALLABLE:
            raise SandboxError(
                "np.ndarray(...) is refused: it builds an array over raw memory; make arrays "
                "with np.array, np.zeros, np.ones, np.arange or tensor.numpy()"
            )
        if id(func) in self._allowed_callables and self._allowed_callables[id(func)] is func:
            return
        if isinstance(func, (torch.nn.Module, BoundSuperCall, OptimizerStep, LibraryCallable,
                             ScriptPartial, ScriptCache)):
            return
        if func in self._made_types:
            return  # a namedtuple class the script made
        wrapped = self._host_wrappers.get(id(func))
        if wrapped is not None and wrapped[0] is func:
            return  # a script function, wrapped when it was handed to library code
        if func in self.script_classes and not issubclass(func, torch.autograd.Function):
            return  # instantiating a class the script defined runs its own __init__
        if isinstance(func, type):
            raise SandboxError(f"creating {func.__name__} objects is not allowed in gradviz scripts")
        owner = getattr(func, "__self__", None)
        name = getattr(func, "__name__", None)
        if owner is not None and isinstance(name, str) and not isinstance(owner, types.ModuleType):
            if isinstance(owner, type) and owner in self.script_classes and name == "apply":
                return
            if owner is not None and self._attribute_allowed(owner, name):
                return
        raise SandboxError(f"calling {_describe_callable(func)} is not allowed in gradviz scripts")

    def _host_value(self, value: Any) -> Any:
        """Check a value handed to library code: callables must be the script's own."""
        if isinstance(value, ScriptFunction):
            return _host_callable(value)
        if isinstance(value, (LibraryCallable, ScriptPartial, ScriptCache)):
            return value  # a partial calls through the interpreter, vetted each call
        if _is_transform(value):
            return value  # torch's own transform object (TransformedDistribution takes it)
        if not isinstance(value, (type, torch.nn.Module)) and self._is_script_instance(value):
            return value  # the script's object; its __call__ runs in the interpreter
        if (
            type(value) is types.MethodType
            and not isinstance(value.__self__, type)
            and self._is_script_instance(value.__self__)
            and self._defined_by_script(type(value.__self__), value.__name__)
            and getattr(type(value.__self__), value.__name__, None) is value.__func__
        ):
            return value  # self.init_weights: the script's method, run by the interpreter
        wrapped = self._host_wrappers.get(id(value))
        if wrapped is not None and wrapped[0] is value:
            return value
        owner = getattr(value, "__self__", None)
        if (
            isinstance(owner, type)
            and owner in self.script_classes
            and issubclass(owner, torch.autograd.Function)
            and getattr(value, "__name__", "") == "apply"
        ):
            return value  # MyFunction.apply: runs the script's own forward and backward
        if isinstance(value, (torch.Tensor, torch.nn.Module, np.ndarray, ns.SafeModule)):
            if isinstance(value, ns.SafeModule):
                raise SandboxError(f"{value!r} cannot be passed to a function")
            return value
        if isinstance(value, type):
            if value in ns.TYPES_NOT_CALLABLE:
                # library code could call it (a hook, a key): only isinstance may see it
                raise SandboxError(
                    f"passing the type {value.__name__} is refused outside isinstance()"
                )
            if value in self._allowed_types or value in self.script_classes:
                return value
            raise SandboxError(f"passing the type {value.__name__} is not allowed")
        if callable(value):
            raise SandboxError(
                f"passing {_describe_callable(value)} as a callback is refused: callbacks must "
                "be functions the script defines"
            )
        if isinstance(value, (list, tuple, dict)):
            items = value.values() if isinstance(value, dict) else value
            for item in items:
                if callable(item) and not isinstance(
                    item, (torch.nn.Module, ScriptFunction, LibraryCallable, torch.Tensor,
                           ScriptPartial, ScriptCache)
                ) and not _is_transform(item) and not (
                    not isinstance(item, type) and self._is_script_instance(item)
                ):
                    raise SandboxError(
                        f"passing {_describe_callable(item)} inside a "
                        f"{type(value).__name__} is refused"
                    )
        return value

    def _precheck_call(self, func: Any, args: tuple, kwargs: dict) -> None:
        if (func is str or func is repr or func is ascii or func is format) and args:
            self._check_text(args[0])
        owner = getattr(func, "__self__", None)
        max_len = self.limits.max_sequence_length
        if self._is_numpy_callable(func, owner):
            self._precheck_numpy(func, args, kwargs)
        if isinstance(owner, (np.random.RandomState, np.random.Generator)):
            self._precheck_numpy(func, args, kwargs)
            self._precheck_numpy_random(func, args, kwargs)
        if isinstance(owner, torch.Generator) and getattr(func, "__name__", "") in (
            "manual_seed",
        ) and args and not _is_int(args[0]):
            raise TypeError("manual_seed takes an integer")
        if func is torch.from_numpy or func is torch.as_tensor or func is torch.tensor:
            for a in args:
                if isinstance(a, (np.ndarray, np.generic)):
                    check_script_array(a, self.limits)
        self._precheck_sizes(func, owner, args, kwargs)
        if isinstance(func, type) and issubclass(func, torch.optim.Optimizer):
            _check_optimizer_options(kwargs)
        if func is torch.autograd.profiler.profile:
            extra = sorted(set(kwargs) - ns.PROFILER_KEYWORDS)
            if len(args) > 1 or extra:
                raise SandboxError(
                    "torch.autograd.profiler.profile takes only enabled, use_cuda, "
                    "record_shapes and profile_memory in gradviz scripts (it writes no traces)"
                )
        if func is torch.utils.data.DataLoader:
            _check_dataloader_arguments(args, kwargs, self.limits)
        if func is _PARAMETRIZE.register_parametrization:
            if kwargs.get("unsafe"):
                raise SandboxError(
                    "register_parametrization(unsafe=True) is refused in gradviz scripts: "
                    "torch then skips its checks of what the parametrization returns"
                )
            name = args[1] if len(args) > 1 else kwargs.get("tensor_name")
            if not isinstance(name, str) or name.startswith("__"):
                raise SandboxError("register_parametrization takes a parameter or buffer name")
        if func is _PARAMETRIZE.remove_parametrizations and args:
            name = args[1] if len(args) > 1 else kwargs.get("tensor_name")
            if not isinstance(name, str) or not isinstance(args[0], torch.nn.Module):
                raise SandboxError("remove_parametrizations takes a module and a tensor name")
        if func is torch.autocast:
            _check_autocast_arguments(args, kwargs)
        if func is torch.amp.GradScaler and (
            len(args) > 1 or set(kwargs) - {"enabled", "device"}
            or kwargs.get("enabled", True) is not False
            or (args[0] if args else kwargs.get("device", "cuda")) not in ("cpu", "cuda")
        ):
            raise SandboxError(
                "torch.amp.GradScaler is available disabled only (GradScaler(enabled=False), "
                "what float32 and bfloat16 training pass): its enabled step unscales and skips "
                "steps outside gradviz's checks"
            )
        if func is torch.utils.data.RandomSampler:
            generator = kwargs.get("generator")
            if generator is not None and not isinstance(generator, torch.Generator):
                raise SandboxError("RandomSampler(generator=...) takes a torch.Generator")
        stepped = owner
        if (
            isinstance(owner, torch.amp.GradScaler) and getattr(func, "__name__", "") == "step"
            and args
        ):
            # scaler.step(opt) calls opt.step() itself: the same checks first
            if not isinstance(args[0], torch.optim.Optimizer) or len(args) > 1 or kwargs:
                raise SandboxError("GradScaler.step takes the optimizer only in gradviz scripts")
            stepped, func = args[0], args[0].step
        if isinstance(stepped, torch.optim.Optimizer) and getattr(func, "__name__", "") == "step":
            for group in stepped.param_groups:
                _check_optimizer_options(group)
                for p in group.get("params", []):
                    if isinstance(p, torch.Tensor) and p.grad is not None and p.grad.shape != p.shape:
                        raise SandboxError(
                            "refused: a parameter's gradient has another shape than the "
                            "parameter; zero_grad() or set .grad to None first"
                        )
        # a str method's numbers are widths (ljust, center, zfill); a list method's are
        # items or indices (append([15, 5, 13]) is a list, not a shape)
        if isinstance(owner, str) or func in (
            self.numpy_ns.members.get("ones"),
            self.numpy_ns.members.get("zeros"),
            self.numpy_ns.members.get("full"),
            self.numpy_ns.members.get("empty"),
        ):
            for a in list(args) + list(kwargs.values()):
                size = _index_value(a)
                if size is not None and size > max_len:
                    raise LimitExceeded(
                        f"refused: size {size:,} is over the limit {max_len:,} (gradviz limit "
                        "max_sequence_length)",
                        limit="max_sequence_length",
                    )
                if isinstance(a, (tuple, list)) and all(_is_int(x) for x in a) and a:
                    if math.prod(_index_value(x) or 0 for x in a) > max_len:
                        raise LimitExceeded(
                            f"refused: shape {tuple(a)} is over the limit {max_len:,} "
                            "elements (gradviz limit max_sequence_length)",
                            limit="max_sequence_length",
                        )
        if owner is None or isinstance(owner, types.ModuleType):
            numpy_sized = {
                "arange": lambda a: (a[1] - a[0]) / (a[2] if len(a) > 2 else 1) if len(a) > 1 else a[0],
                "linspace": lambda a: a[2] if len(a) > 2 else kwargs.get("num", 50),
                "eye": lambda a: a[0] * (a[1] if len(a) > 1 else a[0]),
            }
            for name, size_of in numpy_sized.items():
                if func is self.numpy_ns.members.get(name) and args:
                    try:
                        elements = abs(float(size_of(args)))
                    except (TypeError, IndexError, ValueError):
                        continue
                    if elements > self.limits.max_op_elements:
                        raise LimitExceeded(
                            f"refused: numpy.{name} would create {elements:,.0f} elements "
                            "(gradviz limit max_op_elements)",
                            limit="max_op_elements",
                        )
            if func in (self.numpy_ns.members["random"].members["rand"],
                        self.numpy_ns.members["random"].members["randn"]):
                dims = [_index_value(a) or 0 for a in args]
                if all(_is_int(a) for a in args) and math.prod(dims) > self.limits.max_op_elements:
                    raise LimitExceeded(
                        "refused: numpy.random would create too many elements "
                        "(gradviz limit max_op_elements)",
                        limit="max_op_elements",
                    )

    def _precheck_numpy_random(self, func: Any, args: tuple, kwargs: dict) -> None:
        """numpy.random: the size of what a draw builds, before it is built."""
        name = getattr(func, "__name__", "")
        where = ns.NUMPY_RANDOM_SIZES.get(name)
        sizes = [kwargs.get("size")]
        if name in ("rand", "randn"):
            sizes = [tuple(args)]
        elif where is not None and len(args) > where:
            sizes.append(args[where])
        if name in ("choice", "permutation") and args and _is_int(args[0]):
            sizes.append(args[0])  # choice(n, replace=False) and permutation(n) build n items
        for size in sizes:
            if size is None:
                continue
            dims = size if isinstance(size, (tuple, list)) else (size,)
            if not all(_is_int(d) for d in dims):
                continue
            count = math.prod(max(_index_value(d) or 0, 0) for d in dims)
            if count > self.limits.max_op_elements:
                raise LimitExceeded(
                    f"refused: numpy.random.{name} would create {count:,} elements (gradviz "
                    "limit max_op_elements)",
                    limit="max_op_elements",
                )

    def _is_numpy_callable(self, func: Any, owner: Any) -> bool:
        if isinstance(owner, (np.ndarray, np.generic)):
            return True
        module = getattr(func, "__module__", None) or ""
        return isinstance(func, np.ufunc) or module == "numpy" or module.startswith("numpy.")

    def _precheck_numpy(self, func: Any, args: tuple, kwargs: dict) -> None:
        """numpy never passes the op guard: size its inputs and result here, and refuse
        the keywords that alias or reinterpret memory."""
        refused = sorted(ns.NUMPY_REFUSED_KEYWORDS & set(kwargs))
        if refused:
            raise SandboxError(
                f"numpy's '{refused[0]}=' is refused: it aliases or reinterprets memory the "
                "script did not allocate"
            )
        for a in [kwargs.get("dtype"), *args]:
            if isinstance(a, (str, type, np.dtype)):
                _check_dtype_argument(a)
        out = kwargs.get("out")
        if out is not None:
            # out= writes into an array: one the script holds (so numeric, writable and
            # owned, as every array it holds is), never anything else
            for target in out if isinstance(out, tuple) else (out,):
                if not isinstance(target, np.ndarray):
                    raise SandboxError("numpy's out= must be an array the script made")
                check_script_array(target, self.limits)
        shapes = []
        for a in list(args) + list(kwargs.values()):
            if isinstance(a, np.ndarray):
                check_script_array(a, self.limits)
                shapes.append(a.shape)
            elif isinstance(a, torch.Tensor):
                if a.numel() > self.limits.max_op_elements:
                    raise _elements_limit("numpy", a.numel(), self.limits)
                shapes.append(tuple(a.shape))
        owner = getattr(func, "__self__", None)
        if isinstance(owner, np.ndarray):
            shapes.append(owner.shape)
        name = getattr(func, "__name__", "")
        arrays = [a for a in args if isinstance(a, np.ndarray)]
        if name in ("dot", "matmul", "outer", "inner") and len(arrays) == 2:
            a, b = arrays
            work = a.size * b.size if name == "outer" else a.size * (
                b.shape[-1] if b.ndim > 1 else 1
            )
            if work > self.limits.max_op_macs or (name == "outer" and work > self.limits.max_op_elements):
                raise LimitExceeded(
                    f"refused: numpy.{name} would take {work:,} multiply-adds (gradviz limit "
                    "max_op_macs)",
                    limit="max_op_macs",
                )
        if name in ("vstack", "hstack", "stack", "concatenate") and args and isinstance(
            args[0], (list, tuple)
        ):
            total = 0
            for item in args[0]:
                if isinstance(item, np.ndarray):
                    check_script_array(item, self.limits)
                    total += item.size
                elif isinstance(item, torch.Tensor):
                    total += item.numel()
            if total > self.limits.max_op_elements:
                raise _elements_limit("numpy", total, self.limits)
        if len(shapes) > 1:
            try:
                size = math.prod(np.broadcast_shapes(*shapes))
            except ValueError:
                size = 0
            if size > self.limits.max_op_elements:
                raise _elements_limit("numpy", size, self.limits)

    def _precheck_sizes(self, func: Any, owner: Any, args: tuple, kwargs: dict) -> None:
        """Containers and strings: work out the size of what a call builds before it runs."""
        max_len = self.limits.max_sequence_length
        name = getattr(func, "__name__", "")
        if isinstance(owner, (argparse.ArgumentParser, argparse._ArgumentGroup)):
            if name == "add_argument":
                _check_argument(self, args, kwargs)
            elif name == "add_subparsers" and args:
                raise SandboxError("add_subparsers takes its settings by name (dest=..., title=...)")
            elif name in ("add_argument_group", "add_mutually_exclusive_group"):
                for value in list(args) + list(kwargs.values()):
                    if not isinstance(value, (str, bool, type(None))):
                        raise SandboxError(f"{name} takes a title, a description or required=")
        if isinstance(owner, argparse._SubParsersAction) and name == "add_parser":
            if len(args) != 1 or not isinstance(args[0], str) or len(args[0]) > 200:
                raise SandboxError("add_parser takes the sub-command's name, then keywords")
            aliases = kwargs.get("aliases", ())
            if not isinstance(aliases, (list, tuple)) or len(aliases) > 100 or not all(
                isinstance(a, str) and len(a) < 200 for a in aliases
            ):
                raise SandboxError("add_parser(aliases=...) takes a list of names")
            help_text = kwargs.get("help")
            if help_text is not None and (not isinstance(help_text, str) or len(help_text) > 10_000):
                raise SandboxError("add_parser(help=...) takes a string")
            _check_parser_keywords({k: v for k, v in kwargs.items() if k not in _ADD_PARSER_KEYWORDS})
        if func is collections.defaultdict and args:
            factory = args[0]
            if factory is not None and not (
                self._host_wrappers.get(id(factory), (None,))[0] is factory
                or isinstance(factory, ScriptPartial)
                or (isinstance(factory, type) and factory in self.script_classes)
                or any(factory is t for t in (list, dict, set, tuple, int, float, str, bool,
                                              collections.deque, collections.OrderedDict,
                                              collections.Counter, collections.defaultdict))
            ):
                raise SandboxError(
                    "defaultdict(factory) takes a function or class the script defines, or "
                    "list, dict, set, tuple, int, float, str, bool or a collections type"
                )
        if isinstance(owner, collections.deque) and name in ("extend", "extendleft") and args:
            if hasattr(args[0], "__len__"):
                self._check_length(len(owner) + len(args[0]))
        if isinstance(owner, list) and name in ("extend", "__iadd__") and args:
            if hasattr(args[0], "__len__"):
                self._check_length(len(owner) + len(args[0]))
        elif isinstance(owner, str):
            if name == "replace" and len(args) >= 2 and isinstance(args[0], str) and isinstance(args[1], str):
                old, new = args[0], args[1]
                count = len(owner) + 1 if old == "" else owner.count(old)
                if len(args) > 2 and _is_int(args[2]) and args[2] >= 0:
                    count = min(count, args[2])
                self._check_length(len(owner) + count * max(len(new) - len(old), 0), 1)
            elif name == "join" and args and isinstance(args[0], (list, tuple, str, dict, set)):
                items = list(args[0])
                total = sum(len(x) for x in items if isinstance(x, str))
                self._check_length(total + len(owner) * max(len(items) - 1, 0), 1)
        elif name == "sample" and len(args) >= 2 and _is_int(args[1]):
            self._check_length(args[1])  # random.sample(population, k) builds k items
        elif isinstance(owner, (torch.Tensor, np.ndarray)) and name == "tolist":
            n = owner.numel() if isinstance(owner, torch.Tensor) else owner.size
            if n > max_len:
                raise LimitExceeded(
                    f"refused: tolist() of {n:,} elements would build a list over the limit "
                    f"{max_len:,} (gradviz limit max_sequence_length)",
                    limit="max_sequence_length",
                )
        if func is sum and len(args) >= 2 and isinstance(args[1], (list, tuple)):
            parts: Any = args[0] if isinstance(args[0], (list, tuple)) else []
            total = len(args[1]) + sum(len(x) for x in parts if isinstance(x, (list, tuple)))
            self._check_length(total)
            # each step copies the list built so far: quadratic in the total
            if len(parts) * total > 20 * max_len:
                raise LimitExceeded(
                    "refused: sum() of lists copies the growing list at every step; use "
                    "a comprehension or list.extend (gradviz limit max_sequence_length)",
                    limit="max_sequence_length",
                )

    def call_script_function(self, fn: ScriptFunction, args: tuple, kwargs: dict) -> Any:
        if self.capturing:
            raise HookNotRun(fn.name)
        # A call counts like a loop iteration: library code (map, sorted, hooks)
        # can call a script function millions of times without a script loop.
        self._tick()
        self.depth += 1
        try:
            if self.depth > self.limits.max_call_depth:
                raise LimitExceeded(
                    f"refused: calls nested more than {self.limits.max_call_depth} deep "
                    "(gradviz limit max_call_depth)",
                    limit="max_call_depth",
                )
            local = Scope(self._bind_arguments(fn, args, kwargs), fn.closure)
            if args:
                local.first_arg, local.has_first_arg = args[0], True
            guard = self.unguarded
            if guard is not None:
                self.unguarded = None
                try:
                    with guard:
                        return self._run_frame(fn, local)
                finally:
                    self.unguarded = guard
            return self._run_frame(fn, local)
        finally:
            self.depth -= 1

    def _run_frame(self, fn: ScriptFunction, local: Scope) -> Any:
        guard = self.format_guard
        paused_by = getattr(guard, "paused", 0)
        if paused_by:
            # printing or formatting paused the guard, but script code (a map callback,
            # a method) it reaches is the script's work again
            guard.paused = 0
        try:
            self._frames.append((fn, local))
            self.call_lines.append(self.current_line or 0)
            if fn.grad_mode is not None:
                with fn.grad_mode.clone():
                    return self._run_body(fn, local)
            return self._run_body(fn, local)
        finally:
            if paused_by:
                guard.paused = paused_by
            if self._frames and self._frames[-1][0] is fn:
                self._frames.pop()
                self.call_lines.pop()

    def _run_body(self, fn: ScriptFunction, local: Scope) -> Any:
        if isinstance(fn.body, ast.expr):
            return self.eval(fn.body, local)
        saved_line = self.current_line
        if fn.is_generator:
            yielded: list[Any] = []
            self._yields.append((local, yielded))
        failed = False
        try:
            self.exec_block(fn.body, local)
        except _Return as ret:
            if not fn.is_generator:
                return ret.value
        except BaseException:
            # the error's line is where it was raised, deepest in the script (as in
            # Python's traceback), also when library code (backward) called the function
            failed = True
            raise
        finally:
            if not failed:
                self.current_line = saved_line
                if saved_line:
                    self.line_births.at(saved_line)  # back in the caller's line
            if fn.is_generator:
                self._yields.pop()
        return iter(yielded) if fn.is_generator else None

    def _eval_Yield(self, node: ast.Yield, scope: Scope | None) -> None:
        if not self._yields or not self._frames or self._yields[-1][0] is not self._frames[-1][1]:
            raise SandboxError("'yield' works only in the body of a def")
        yielded = self._yields[-1][1]
        yielded.append(None if node.value is None else self.eval(node.value, scope))
        self._tick()
        self._check_length(len(yielded), 0)  # built: counted in what the process holds

    def _bind_arguments(self, fn: ScriptFunction, args: tuple, kwargs: dict) -> dict[str, Any]:
        spec = fn.args
        positional = [a.arg for a in spec.posonlyargs + spec.args]
        bound: dict[str, Any] = {}
        for name, value in zip(positional, args):
            bound[name] = value
        extra = args[len(positional) :]
        if spec.vararg is not None:
            bound[spec.vararg.arg] = tuple(extra)
        elif extra:
            raise TypeError(
                f"{fn.name}() takes {len(positional)} positional arguments but {len(args)} were given"
            )
        kwonly = [a.arg for a in spec.kwonlyargs]
        rest: dict[str, Any] = {}
        for key, value in kwargs.items():
            if key in bound:
                raise TypeError(f"{fn.name}() got multiple values for argument '{key}'")
            if key in positional or key in kwonly:
                bound[key] = value
            elif spec.kwarg is not None:
                rest[key] = value
            else:
                raise TypeError(f"{fn.name}() got an unexpected keyword argument '{key}'")
        defaults = dict(zip(positional[len(positional) - len(fn.defaults) :], fn.defaults))
        for name in positional:
            if name not in bound:
                if name not in defaults:
                    raise TypeError(f"{fn.name}() missing required argument '{name}'")
                bound[name] = defaults[name]
        for name, default in zip(kwonly, fn.kw_defaults):
            if name not in bound:
                if default is _NO_DEFAULT:
                    raise TypeError(f"{fn.name}() missing keyword-only argument '{name}'")
                bound[name] = default
        if spec.kwarg is not None:
            bound[spec.kwarg.arg] = rest
        return bound

    # --- builtins with caps --------------------------------------------------

    def _check_text(self, *values: Any) -> None:
        """Refuse to make text of values whose text would pass max_str_length (see
        :func:`text_bound`), before any of it is built."""
        cap = self.limits.max_str_length
        total = 0
        for value in values:
            total += text_bound(value, cap - total)
            if total > cap:
                raise LimitExceeded(
                    f"refused: the text of this value would be over {cap:,} characters "
                    "(gradviz limit max_str_length); print a part of it",
                    limit="max_str_length",
                )

    def _print(self, *args: Any, sep: str = " ", end: str = "\n") -> None:
        self._check_text(sep, end, *args)
        with self._formatting():
            text = scrub_addresses(sep.join(str(a) for a in args) + end)
        self.output.write(text, self.limits.max_str_length)

    def _make_dot(self, var: Any, params: Any = None, show_attrs: bool = False,
                  show_saved: bool = False, max_attr_chars: int = 50) -> TorchvizGraph:
        """``torchviz.make_dot(y, params=dict(model.named_parameters()))``: gradviz draws
        the graph of ``y`` itself (the roots stay on the canvas, labelled with the
        line that asked for them)."""
        roots = list(var) if isinstance(var, (tuple, list)) else [var]
        if not roots or not all(isinstance(r, torch.Tensor) for r in roots):
            raise TypeError("make_dot takes a tensor or a tuple of tensors")
        named: dict[str, torch.Tensor] = {}
        if params is not None:
            if not isinstance(params, dict):
                raise TypeError("make_dot's params must be a dict of name -> tensor")
            for key, value in params.items():
                if not isinstance(key, str) or not isinstance(value, torch.Tensor):
                    raise TypeError("make_dot's params must be a dict of name -> tensor")
                named[key] = value
        self._check_length(len(self.dot_requests) + 1)
        self.dot_requests.append((self.current_line, roots, named))
        return TorchvizGraph(roots, named)

    # --- the standard library's functions, as gradviz gives them -----------------------

    def _sleep(self, seconds: Any) -> None:
        """``time.sleep``: really waits, within the statement's time limit, and Stop ends it."""
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
            raise TypeError("time.sleep() takes a number of seconds")
        if seconds < 0 or math.isnan(seconds):
            raise ValueError("sleep length must be non-negative")
        end = time.monotonic() + seconds
        if self.deadline is not None and end > self.deadline:
            raise LimitExceeded(
                f"refused: time.sleep({seconds:g}) would pass the statement's time limit of "
                f"{self.limits.max_statement_seconds:g} s (gradviz limit max_statement_seconds)",
                limit="max_statement_seconds",
            )
        while (left := end - time.monotonic()) > 0:
            if self.stop_requested:
                self._stop_now()
            time.sleep(min(left, 0.05))

    def _namedtuple(self, typename: Any, field_names: Any, *, rename: bool = False,
                    defaults: Any = None) -> type:
        """``collections.namedtuple``: the class namedtuple makes (its field names are
        checked identifiers), callable by the script; no module= (the class says
        __main__, as in a script)."""
        if isinstance(field_names, str):
            field_names = field_names.replace(",", " ").split()
        if not isinstance(typename, str) or not isinstance(field_names, (list, tuple)) or not all(
            isinstance(f, str) for f in field_names
        ):
            raise TypeError("namedtuple(typename, field_names) takes strings")
        if len(field_names) > 255 or len(typename) > 200 or any(len(f) > 200 for f in field_names):
            raise SandboxError("namedtuple takes at most 255 fields of short names")
        if len(self._made_types) >= _MAX_MADE_TYPES:
            raise LimitExceeded(
                f"refused: this script made {_MAX_MADE_TYPES:,} namedtuple classes "
                "(gradviz limit max_sequence_length)",
                limit="max_sequence_length",
            )
        if defaults is not None:
            defaults = tuple(self._iterate(defaults))
            for value in defaults:
                self._check_storable(value)
        make: Any = collections.namedtuple  # called with the script's values, not literals
        cls = make(
            typename, list(field_names), rename=bool(rename), defaults=defaults, module="__main__"
        )
        self._made_types.add(cls)
        self._allow(cls)
        return cls

    def _call_cached(self, cache: ScriptCache, args: tuple, kwargs: dict) -> Any:
        """A call of an lru_cache'd function: Python's key (hashing the arguments as
        Python's cache does: a list argument is a TypeError), then the stored result or
        a call through the interpreter."""
        key = functools._make_key(args, kwargs, cache.typed)
        if cache.maxsize == 0:
            cache.misses += 1
            return self.call(cache.fn, args, kwargs)
        entries = cache.entries
        if key in entries:
            cache.hits += 1
            if cache.maxsize is not None:
                entries.move_to_end(key)
            return entries[key]
        cache.misses += 1
        result = self.call(cache.fn, args, kwargs)
        entries[key] = result  # (a recursive call may have stored it first: same value)
        if cache.maxsize is not None:
            entries.move_to_end(key)
            while len(entries) > cache.maxsize:
                entries.popitem(last=False)
        self._check_length(len(entries), 0)  # built: counted in what the process holds
        return result

    def _cached_property(self, func: Any) -> Any:
        """``functools.cached_property`` works as a method's decorator in a class body
        (see _make_script_class); anywhere else it is refused."""
        raise SandboxError(
            "functools.cached_property decorates a method in a class body in gradviz scripts"
        )

    def _lru_cache(self, maxsize: Any = 128, typed: Any = False) -> Any:
        """``functools.lru_cache(maxsize=128, typed=False)``, ``lru_cache(f)``."""
        if isinstance(maxsize, int) and not isinstance(maxsize, bool):
            size: int | None = max(maxsize, 0)
        elif callable(maxsize) and isinstance(typed, bool):
            return self._make_cache(maxsize, 128, typed)
        elif maxsize is None:
            size = None
        else:
            raise TypeError("Expected first argument to be an integer, a callable, or None")
        return StdlibFunction(lambda fn: self._make_cache(fn, size, bool(typed)), "lru_cache")

    def _cache(self, fn: Any) -> ScriptCache:
        """``functools.cache``: lru_cache(maxsize=None)."""
        return self._make_cache(fn, None, False)

    def _make_cache(self, fn: Any, maxsize: int | None, typed: bool) -> ScriptCache:
        if not callable(fn):
            raise TypeError("the first argument must be callable")
        if isinstance(fn, (ns.SafeModule, types.ModuleType)):
            raise SandboxError("modules cannot be called")
        if not isinstance(fn, (ScriptFunction, ScriptPartial, ScriptCache)):
            self._vet_callable(fn)  # called through the interpreter, vetted again each call
        return ScriptCache(self, fn, maxsize, typed)

    def _partial(self, func: Any, /, *args: Any, **kwargs: Any) -> ScriptPartial:
        if not callable(func):
            raise TypeError("the first argument must be callable")
        if isinstance(func, (ns.SafeModule, types.ModuleType)):
            raise SandboxError("modules cannot be called")
        return ScriptPartial(self, func, args, kwargs)

    def _reduce(self, function: Any, iterable: Any, *initial: Any) -> Any:
        if len(initial) > 1:
            raise TypeError("reduce expected at most 3 arguments")
        items = self._iterate(iterable)
        if initial:
            acc = initial[0]
        else:
            try:
                acc = next(items)
            except StopIteration:
                raise TypeError("reduce() of empty iterable with no initial value") from None
        for item in items:
            acc = self.call(function, (acc, item), {})
        return acc

    def _wraps(self, wrapped: Any, *args: Any, **kwargs: Any) -> StdlibFunction:
        """``@functools.wraps(f)``: the wrapper keeps its own code and takes f's name."""

        def update(wrapper: Any) -> Any:
            if isinstance(wrapper, ScriptFunction) and isinstance(wrapped, ScriptFunction):
                wrapper.name = wrapped.name
            return wrapper

        return StdlibFunction(update, "wraps")

    def _copy(self, value: Any) -> Any:
        result = copy_module.copy(value)
        self._check_memory()
        return result

    def _deepcopy(self, value: Any, memo: Any = None) -> Any:
        """``copy.deepcopy(x)``: what the script holds, copied by Python's own copier.
        No memo= (its keys are real addresses). gradviz's own objects in ``x``
        (functions, the interpreter) copy as themselves, as Python's functions do."""
        if memo is not None:
            raise SandboxError("copy.deepcopy(x, memo) is refused: the memo is keyed by addresses")
        result = copy_module.deepcopy(value, {id(self): self})
        self._check_memory()
        return result

    def _dataclass(self, cls: Any = None, /, **options: Any) -> Any:
        """``@dataclass`` / ``@dataclass(frozen=True)`` on a class the script defines: the
        methods dataclasses generates (__init__, __repr__, __eq__) only store, format
        and compare the fields; default factories were vetted by field()."""
        allowed = {"init", "repr", "eq", "order", "frozen", "unsafe_hash", "kw_only", "match_args"}
        extra = sorted(set(options) - allowed)
        if extra:
            raise SandboxError(
                f"dataclass's '{extra[0]}=' is refused in gradviz scripts; it may take "
                + ", ".join(sorted(allowed))
            )
        if cls is None:
            return StdlibFunction(lambda c: self._dataclass(c, **options), "dataclass")
        if not (isinstance(cls, type) and cls in self.script_classes) or issubclass(
            cls, (torch.autograd.Function, torch.nn.Module, enum.Enum)
        ):
            raise SandboxError(
                "@dataclass decorates a class the script defines (not an nn.Module: torch "
                "keeps modules hashable and makes their __init__)"
            )
        return dataclasses.dataclass(cls, **options)

    def _field(self, **options: Any) -> dataclasses.Field:
        """``dataclasses.field(...)``: default_factory must be the script's own function
        or class, or a container or number type (list, dict, ...): the generated
        __init__ calls it."""
        allowed = {"default", "default_factory", "init", "repr", "compare", "hash", "kw_only"}
        extra = sorted(set(options) - allowed)
        if extra:
            raise SandboxError(
                f"field's '{extra[0]}=' is refused in gradviz scripts; it may take "
                + ", ".join(sorted(allowed))
            )
        factory = options.get("default_factory", dataclasses.MISSING)
        if factory is not dataclasses.MISSING:
            if isinstance(factory, ScriptFunction):
                factory = _host_callable(factory)
            elif isinstance(factory, ScriptPartial) or (
                isinstance(factory, type) and factory in self.script_classes
            ) or any(factory is t for t in (list, dict, set, tuple, int, float, str, bool,
                                            collections.deque, collections.OrderedDict,
                                            collections.Counter)):
                pass
            else:
                raise SandboxError(
                    "field(default_factory=...) takes a function or class the script defines, "
                    "or list, dict, set, tuple, int, float, str, bool, deque, OrderedDict, Counter"
                )
            options["default_factory"] = factory
        if "default" in options:
            self._check_storable(options["default"])
        made = dataclasses.field(**options)
        self._fields_made[id(made)] = made
        return made

    def _asdict(self, obj: Any) -> dict:
        if not (dataclasses.is_dataclass(obj) and not isinstance(obj, type)
                and self._is_script_instance(obj)):
            raise TypeError("asdict() should be called on dataclass instances")
        return {f.name: self._deepcopy(getattr(obj, f.name)) for f in dataclasses.fields(obj)}

    def _currentframe(self) -> FrameView:
        return FrameView(self, tuple(self._frames))

    def _getargvalues(self, frame: Any) -> inspect.ArgInfo:
        """``inspect.getargvalues(frame)`` of a script frame: the argument names and a
        copy of its local names."""
        if not isinstance(frame, FrameView):
            raise TypeError("getargvalues() takes a frame from inspect.currentframe()")
        if not frame.frames:
            return inspect.ArgInfo([], None, None, dict(self.globals))
        fn, local = frame.frames[-1]
        spec = fn.args
        names = [a.arg for a in spec.posonlyargs + spec.args + spec.kwonlyargs]
        return inspect.ArgInfo(
            names,
            spec.vararg.arg if spec.vararg else None,
            spec.kwarg.arg if spec.kwarg else None,
            dict(local.names),
        )

    def _signature(self, func: Any) -> inspect.Signature:
        """``inspect.signature`` of a library callable the script may call (its
        ``parameters`` can be searched by name)."""
        if isinstance(func, ScriptFunction):
            raise SandboxError("inspect.signature takes library functions and classes")
        self._vet_callable(func)
        return inspect.signature(func)

    def _sys_exit(self, status: Any = None) -> None:
        raise SandboxError(
            f"the script called sys.exit({'' if status is None else repr(status)[:80]}): gradviz "
            "stops the statement instead of ending the program"
        )

    def _getattr(self, obj: Any, name: Any, *default: Any) -> Any:
        """``getattr(obj, name[, default])``: the same rules as ``obj.name``."""
        if not isinstance(name, str):
            raise TypeError("attribute name must be string")
        if len(default) > 1:
            raise TypeError("getattr expected at most 3 arguments")
        if name.startswith("__") and name not in ("__name__", "__class__"):
            raise SandboxError(
                f"the attribute '{name[:60]}' is not allowed (names starting with '_' are "
                "private or special)"
            )
        try:
            if isinstance(obj, SuperProxy):
                return self._super_attribute(obj, name)
            try:
                return self.get_attribute(obj, name)
            except SandboxError:
                if isinstance(obj, ns.SafeModule) or _has_static(obj, name):
                    raise  # there, and refused: the refusal says why
                raise AttributeError(
                    f"'{type(obj).__name__}' object has no attribute '{name}'"
                ) from None
        except AttributeError:
            if default:
                return default[0]
            raise

    def _hasattr(self, obj: Any, name: Any) -> bool:
        try:
            self._getattr(obj, name)
        except AttributeError:
            return False
        except SandboxError:
            if isinstance(obj, ns.SafeModule) and isinstance(name, str) and not name.startswith("__"):
                return False  # hasattr(torch, 'compile'): not here, so the script's fallback runs
            raise
        return True

    def _setattr(self, obj: Any, name: Any, value: Any) -> None:
        """``setattr(obj, name, value)``: the same rules as ``obj.name = value``."""
        if not isinstance(name, str):
            raise TypeError("attribute name must be string")
        if name.startswith("__") or not name.isidentifier():
            raise SandboxError(f"cannot set the attribute '{name[:60]}'")
        self.set_attribute(obj, name, value)

    def _delattr(self, obj: Any, name: Any) -> None:
        """``delattr(obj, name)``: an attribute the script set on its own object or
        namespace, or a parameter, buffer or submodule of a module (the functional
        style: del the parameter, then set a plain tensor in its place)."""
        if not isinstance(name, str):
            raise TypeError("attribute name must be string")
        if name.startswith("__") or (name.startswith("_") and not self._private_allowed(obj, name)):
            raise SandboxError(f"cannot delete the attribute '{name[:60]}'")
        if isinstance(obj, torch.nn.Module):
            tables = (obj._parameters, obj._buffers, obj._modules)
            if any(name in t for t in tables) or (
                self._is_script_instance(obj) and name in obj.__dict__
                and _class_attribute(type(obj), name) is _MISSING
            ):
                delattr(obj, name)
                return
        elif isinstance(obj, (types.SimpleNamespace, argparse.Namespace,
                              torch.autograd.function.FunctionCtx)) or (
            not isinstance(obj, type) and self._is_script_instance(obj)
        ):
            # (ctx: what the Function stored on it, `del ctx.result`; never its API; a
            # cached_property's value, which Python computes again on the next read)
            if name in getattr(obj, "__dict__", {}) and (
                _class_attribute(type(obj), name) is _MISSING
                or (isinstance(_class_attribute(type(obj), name), functools.cached_property)
                    and self._script_property_of(obj, name))
            ):
                delattr(obj, name)
                return
            raise AttributeError(name)
        raise SandboxError(f"cannot delete the attribute '{name[:60]}' of {_type_name(obj)}")

    def _globals(self) -> dict[str, Any]:
        """``globals()``: a copy of the script's module-level names (nanoGPT lists its
        config this way); writing to it changes nothing."""
        return dict(self.globals)

    def _id(self, value: Any) -> int:
        """``id(x)``: a number that is the same for one object while it lives and
        differs between live objects, as Python's; a keyed hash of the real id, so it
        gives away no address."""
        digest = hashlib.blake2b(
            id(value).to_bytes(8, "little"), key=self._id_key, digest_size=7
        ).digest()
        return int.from_bytes(digest, "little")

    def _vars(self, obj: Any) -> dict:
        """``vars(x)`` of a namespace or the script's own object: a copy of its
        attributes (never library state)."""
        if isinstance(obj, (types.SimpleNamespace, argparse.Namespace)) or (
            not isinstance(obj, (type, torch.nn.Module)) and self._is_script_instance(obj)
            and _library_private(type(obj), "", self.script_classes) is not True
        ):
            return {k: v for k, v in obj.__dict__.items() if not k.startswith("__")}
        raise SandboxError("vars() takes a namespace or an object of a script class")

    def _pow(self, base: Any, exp: Any, mod: Any = None) -> Any:
        """pow(): the ** operator's size checks; the three-argument form within the
        integer limit (its work grows with the exponent's bits only)."""
        if mod is None:
            return self._binary(operator.pow, base, exp, ast.Pow)
        for value in (base, exp, mod):
            if _is_int(value) and abs(_index_value(value) or 0).bit_length() > self.limits.max_int_bits:
                raise self._int_limit()
        return pow(base, exp, mod)

    def _format(self, value: Any, spec: Any = "") -> str:
        if not isinstance(spec, str):
            raise TypeError("format() argument 2 must be str")
        self._check_format_widths(spec)
        self._check_text(value)
        with self._formatting():
            return scrub_addresses(format(value, spec))

    def _callable(self, value: Any) -> bool:
        return callable(value)

    def _hash(self, value: Any) -> int:
        """hash() of strings, numbers and tuples of them: other objects hash by their
        address, which would give away the memory layout."""
        def plain(v: Any) -> bool:
            if isinstance(v, tuple):
                return all(plain(i) for i in v)
            return v is None or isinstance(v, (str, bytes, int, float, complex, bool))

        if not plain(value):
            raise SandboxError(
                "hash() takes strings, numbers and tuples of them in gradviz scripts"
            )
        return hash(value)

    def _type(self, *args: Any) -> type:
        """type(x): the class of a value, to print or compare. The class a script gets
        is vetted like any name when it is called, read or passed on, so it opens
        nothing; the three-argument form (making classes) is refused."""
        if len(args) != 1:
            raise SandboxError("type() takes one value in gradviz scripts (write a class statement)")
        value = args[0]
        # gradviz's stand-ins print as what they stand for (<class 'function'>, ...)
        if isinstance(value, (ScriptFunction, LibraryCallable)):
            return types.FunctionType
        if isinstance(value, ns.SafeModule):
            return types.ModuleType
        if isinstance(value, ScriptPartial):
            return functools.partial
        if isinstance(value, ScriptCache):
            return functools._lru_cache_wrapper
        if isinstance(value, TickingIterator):
            return type(value.inner)
        if isinstance(value, FrameView):
            return types.FrameType
        if isinstance(value, types.MethodType) and value.__self__ is self:
            return types.BuiltinFunctionType  # print, range: Python's builtins
        return type(value)

    def _iter(self, *args: Any) -> Any:
        """iter(x) only: the two-argument form calls a callable until a sentinel, in C,
        with no loop count (iter(int, 1) never ends)."""
        if len(args) != 1:
            raise SandboxError("iter() takes one iterable in gradviz scripts (no sentinel form)")
        iterable = args[0]
        if isinstance(iterable, (ns.SafeModule, type)) and not self._is_script_enum(iterable):
            raise SandboxError(f"{_type_name(iterable)} is not iterable in gradviz scripts")
        return iter(iterable)

    def _range(self, *args: int) -> range:
        r = range(*args)
        self._check_length(len(r), 0)  # built: counted in what the process holds
        return r

    # --- attributes --------------------------------------------------------

    def get_attribute(self, obj: Any, name: str) -> Any:
        _check_attribute_name(name, self.current_line)
        if name == "__class__":
            return self._type(obj)  # what type(x) gives, vetted like it wherever it goes
        if name == "__name__":
            if isinstance(obj, ScriptCache):
                obj = obj.fn  # functools.wraps gives the wrapper its function's name
            if isinstance(obj, (type, ScriptFunction, LibraryCallable)):
                return obj.__name__ if isinstance(obj, type) else obj.name.rsplit(".", 1)[-1]
            raise SandboxError(
                f"'__name__' can be read on classes and functions, not on {_type_name(obj)}"
            )
        if isinstance(obj, ns.SafeModule):
            if name not in obj.members:
                raise SandboxError(suggest.unavailable_member(obj, name))
            return obj.members[name]
        if isinstance(obj, torch.nn.Module):
            value = self._module_attribute(obj, name)
        elif isinstance(obj, torch.autograd.function.FunctionCtx):
            value = self._ctx_attribute(obj, name)
        else:
            if not self._attribute_allowed(obj, name):
                if (
                    isinstance(obj, (types.SimpleNamespace, argparse.Namespace))
                    or (not isinstance(obj, type) and self._is_script_instance(obj))
                ) and _class_attribute(type(obj), name) is _MISSING and name not in getattr(
                    obj, "__dict__", {}
                ):
                    raise AttributeError(
                        f"'{type(obj).__name__}' object has no attribute '{name}'"
                    )
                if isinstance(obj, torch.Tensor) and not name.startswith("_"):
                    raise SandboxError(suggest.unavailable_tensor_attribute(name))
                raise SandboxError(
                    f"the attribute '{name}' of {_type_name(obj)} is not available in gradviz "
                    "scripts"
                )
            value = getattr(obj, name)
            if type(value) in (list, dict) and (
                _is_transform(obj) or isinstance(obj, torch.distributions.Distribution)
            ) and not self._is_script_instance(obj):
                # torch's own containers (c.parts, d.transforms, the class-wide
                # arg_constraints): a copy, so a write never reaches what torch calls
                # or what every later distribution reads
                value = tuple(value) if type(value) is list else dict(value)
            if isinstance(obj, torch.Tensor) and name == "data_ptr":
                value = LibraryCallable(
                    lambda t=obj: (t.data_ptr() + _ADDRESS_SALT) % (1 << 63), "data_ptr"
                )
            if (
                isinstance(obj, torch.optim.Optimizer)
                and name == "step"
                and value is not None
                and value is obj.__dict__.get("step")
                and getattr(value, "__wrapped__", None) is _class_attribute(type(obj), "step")
            ):
                value = OptimizerStep(obj, value)  # type: ignore[arg-type]  # not None: above
        if isinstance(value, types.ModuleType):
            raise SandboxError(f"the attribute '{name}' is a module; modules are not available")
        return self._checked_value(value)

    def _module_attribute(self, module: torch.nn.Module, name: str) -> Any:
        """Resolve ``module.name`` the way Python does, and decide on what it finds.

        Python looks in the class first (methods, properties), then the
        instance dict, then ``nn.Module.__getattr__`` (parameters, buffers,
        submodules). Deciding on the name alone would let an assignment that
        registers a submodule called ``register_forward_hook`` unlock the
        class's real method, so the decision is made on where lookup lands.
        """
        if _parametrized_tensor(module, name):
            return getattr(module, name)  # computed by its parametrizations, as in torch
        by_script = self._defined_by_script(type(module), name)
        if by_script is not None:
            if by_script or name in ns.MODULE_ATTRIBUTES:
                return getattr(module, name)
            raise SandboxError(
                f"the method '{name}' of {_type_name(module)} is not available in gradviz scripts"
            )
        inst = module.__dict__.get(name, _MISSING)
        if name.startswith("_") and not self._private_allowed(module, name):
            raise SandboxError(
                f"the attribute '{name}' of {_type_name(module)} is not available in gradviz "
                "scripts (names starting with '_' are the script's own only)"
            )
        if inst is not _MISSING:
            if _is_plain_data(inst) or self._is_script_instance(module):
                return inst  # a script class's own attributes were set by the script
            raise SandboxError(f"the attribute '{name}' of {_type_name(module)} is not data")
        for table in (module._parameters, module._buffers, module._modules):
            if name in table:
                return table[name]
        raise AttributeError(f"'{type(module).__name__}' object has no attribute '{name}'")

    def _ctx_attribute(self, ctx: Any, name: str) -> Any:
        """``ctx.name`` in an autograd.Function: its documented API, or data the script stored."""
        if name.startswith("_") and not name.startswith("_saved_"):
            # never private: the script cannot set one (set_attribute), torch may keep one
            raise SandboxError(f"the attribute '{name}' of ctx is not available in gradviz scripts")
        if _class_attribute(type(ctx), name) is not _MISSING:
            if name in ns.CTX_ATTRIBUTES:
                return getattr(ctx, name)
            raise SandboxError(f"the attribute '{name}' of ctx is not available in gradviz scripts")
        inst = getattr(ctx, "__dict__", {}).get(name, _MISSING)
        if inst is _MISSING:
            raise AttributeError(f"ctx has no attribute '{name}'")
        if callable(inst) and not isinstance(inst, torch.Tensor):
            raise SandboxError("only data can be stored on ctx")
        return inst

    def _attribute_allowed(self, obj: Any, name: str) -> bool:
        if name in SCRIPT_DUNDERS:
            return (not isinstance(obj, type) and self._is_script_instance(obj)
                    and self._defined_by_script(type(obj), name) is True)
        if isinstance(obj, torch.autograd.graph.Node) and name.startswith("_saved_"):
            return hasattr(obj, name)  # what the node saved for backward, as data
        if name.startswith("_") and name not in ALLOWED_PRIVATE_ATTRIBUTES:
            return self._private_allowed(obj, name)
        if isinstance(obj, (types.SimpleNamespace, argparse.Namespace)):
            return name in obj.__dict__
        if isinstance(obj, ScriptPattern):
            return name in SCRIPT_PATTERN_ATTRIBUTES
        if isinstance(obj, ScriptMatch):
            return name in SCRIPT_MATCH_ATTRIBUTES
        if isinstance(obj, dict) and name in ns.DICT_WRITE_METHODS and self._is_optimizer_state(obj):
            return False  # (a defaultdict, as optimizer.state is)
        if isinstance(obj, enum.Enum) and name in ("name", "value") and self._is_script_enum(type(obj)):
            return True  # a member's name and value (enum's own properties)
        if not isinstance(obj, (type, torch.nn.Module)) and self._is_script_instance(obj):
            by_script = self._defined_by_script(type(obj), name)
            if by_script is not None:
                return by_script
            return name in getattr(obj, "__dict__", {})
        if isinstance(obj, torch.Tensor):
            return name in ns.TENSOR_ATTRIBUTES
        if isinstance(obj, torch.nn.Module):
            try:
                self._module_attribute(obj, name)
            except (SandboxError, AttributeError):
                return False
            return True
        if isinstance(obj, torch.utils.data.DataLoader):
            return name in ns.DATALOADER_ATTRIBUTES
        if isinstance(obj, torch.utils.data.TensorDataset):
            return name in ns.TENSOR_DATASET_ATTRIBUTES
        if isinstance(obj, torch.optim.Optimizer):
            if name == "state":
                self._optimizers_read.add(obj)  # its state dicts are the library's: read-only
            return name in ns.OPTIMIZER_ATTRIBUTES
        if isinstance(obj, torch.optim.lr_scheduler.LRScheduler):
            return name in ns.SCHEDULER_ATTRIBUTES
        if isinstance(obj, np.ndarray):
            return name in ns.NDARRAY_ATTRIBUTES
        if isinstance(obj, np.generic):
            return name in ("item", "dtype", "shape", "real", "imag")
        if isinstance(obj, torch.device):
            return name in ns.DEVICE_ATTRIBUTES
        if isinstance(obj, torch.dtype):
            return name in ns.DTYPE_ATTRIBUTES
        if isinstance(obj, torch.autograd.function.FunctionCtx):
            try:
                self._ctx_attribute(obj, name)
            except (SandboxError, AttributeError):
                return False
            return True
        if isinstance(obj, torch.autograd.graph.Node):
            if name.startswith("_saved_"):
                return hasattr(obj, name)  # the values it saved for backward, as data
            return name in ns.GRAD_FN_ATTRIBUTES
        if isinstance(obj, BaseException):
            return name in ns.EXCEPTION_ATTRIBUTES
        if isinstance(obj, type) and obj in self.script_classes:
            # autograd.Function.apply, and the data a script class holds (Config.n_embd,
            # a nested class); its other class-level names (unbound methods, nn.Module's
            # own functions) stay out of reach
            if name == "apply" and issubclass(obj, torch.autograd.Function):
                return True
            value = _class_attribute(obj, name)
            return bool(self._defined_by_script(obj, name)) and (
                _is_plain_data(value) or (isinstance(value, type) and value in self.script_classes)
                or (self._is_script_enum(obj) and isinstance(value, obj))  # Color.RED
                # Config.from_dict, Util.helper: the script's own static and class methods
                # (its class statement made every staticmethod/classmethod in its dict)
                or isinstance(value, (staticmethod, classmethod))
            )
        if isinstance(obj, type) and obj in self._made_types:
            return False
        if type(obj) in self._made_types:  # a namedtuple the script made
            return name in type(obj)._fields or name in ns.TUPLE_METHODS
        if isinstance(obj, inspect.ArgInfo):
            return name in obj._fields
        if isinstance(obj, FrameView):
            return name in ("f_back", "f_locals")
        if isinstance(obj, ScriptPartial):
            return name in ("func", "args", "keywords")
        if isinstance(obj, ScriptCache):
            return name in SCRIPT_CACHE_ATTRIBUTES
        if type(obj) is functools._CacheInfo:
            return name in obj._fields or name in ns.TUPLE_METHODS
        if isinstance(obj, ChainFunction):
            return name == "from_iterable"
        if isinstance(obj, (argparse.ArgumentParser, argparse._ArgumentGroup)):
            return name in ns.ARGPARSE_PARSER_ATTRIBUTES
        if isinstance(obj, argparse._SubParsersAction):
            return name in ns.ARGPARSE_SUBPARSERS_ATTRIBUTES
        if isinstance(obj, inspect.Signature):
            return name == "parameters"
        if isinstance(obj, np.finfo | np.iinfo):
            return name in ns.FINFO_ATTRIBUTES
        if isinstance(obj, collections.deque):
            return name in ns.DEQUE_METHODS
        if isinstance(obj, torch.Generator):
            return name in ns.GENERATOR_ATTRIBUTES
        if isinstance(obj, torch.amp.GradScaler):
            return name in ns.GRAD_SCALER_ATTRIBUTES
        if isinstance(obj, slice):
            return name in ns.SLICE_ATTRIBUTES
        if isinstance(obj, (np.random.RandomState, np.random.Generator)):
            return name in ns.NUMPY_RANDOM_SIZES and hasattr(type(obj), name)
        if isinstance(obj, collections.Counter):
            return name in ns.DICT_METHODS or name in ns.COUNTER_METHODS
        if isinstance(obj, collections.OrderedDict):
            return name in ns.DICT_METHODS or name in ("move_to_end", "popitem")
        if isinstance(obj, collections.defaultdict):
            return name in ns.DICT_METHODS or name == "default_factory"
        if type(obj).__name__ == "RemovableHandle":
            return name == "remove"
        if isinstance(obj, torch.Size):
            return name in ns.SIZE_METHODS
        if isinstance(obj, tuple) and type(obj).__module__.startswith("torch."):
            # torch's named results: max(dim).values, PackedSequence.data, unpack_dual(...)
            fields = (getattr(type(obj), "_fields", None)
                      or getattr(type(obj), "__match_args__", None) or ())
            return name in fields or name in ns.TUPLE_METHODS
        if isinstance(obj, TorchvizGraph):
            return name in TORCHVIZ_ATTRIBUTES
        if isinstance(obj, torch.distributions.Distribution):
            if name in ns.DISTRIBUTION_ATTRIBUTES:
                return True
            inst = getattr(obj, "__dict__", {}).get(name, _MISSING)
            return inst is not _MISSING and (
                _is_plain_data(inst) or isinstance(inst, torch.distributions.Distribution)
                or (isinstance(inst, list) and all(_is_transform(t) for t in inst))
            )
        if _is_transform(obj):
            return name in ns.TRANSFORM_ATTRIBUTES
        if isinstance(obj, str):
            return name in ns.STR_METHODS
        if isinstance(obj, list):
            return name in ns.LIST_METHODS
        if isinstance(obj, dict):
            return name in ns.DICT_METHODS
        if isinstance(obj, tuple):
            return name in ns.TUPLE_METHODS
        if isinstance(obj, set):
            return name in ns.SET_METHODS
        if isinstance(obj, (int, float, complex)) and not isinstance(obj, bool):
            return name in ns.NUMBER_ATTRIBUTES
        return False

    def set_attribute(self, obj: Any, name: str, value: Any) -> None:
        _check_attribute_name(name, self.current_line)
        if name == "__class__":
            raise SandboxError("cannot set the attribute '__class__'")
        if name.startswith("_") and not self._private_allowed(obj, name):
            raise SandboxError(
                f"cannot set the attribute '{name}' (names starting with '_' may be set on "
                "the script's own objects only)"
            )
        if isinstance(obj, (types.SimpleNamespace, argparse.Namespace)):
            self._check_storable(value)
            setattr(obj, name, value)
            return
        if isinstance(obj, type) and obj in self.script_classes:
            self._set_class_attribute(obj, name, value)
            return
        if isinstance(obj, torch.Tensor) and name in ("data", "grad", "requires_grad"):
            if name == "data" and isinstance(value, torch.Tensor) and (
                value.shape != obj.shape or value.dtype != obj.dtype or value.device != obj.device
            ):
                # a parameter whose data changes shape under its optimizer state and
                # gradient lets fused kernels write out of bounds
                raise SandboxError(
                    f"x.data = ... must keep x's shape {tuple(obj.shape)}, dtype and device; "
                    "write x.data.copy_(value), or make a new tensor"
                )
            setattr(obj, name, value)
            self.tensor_writes += 1  # capture re-reads saved tensors (x.data swaps contents)
            return
        if isinstance(obj, torch.nn.Module) and _parametrized_tensor(obj, name):
            # layer.weight = X: torch runs the parametrizations' right_inverse (the
            # script's own methods) and rebinds the original
            kept = _KeptGeometry(_originals(obj, name))
            try:
                setattr(obj, name, value)
            finally:
                kept.check()  # also when torch stopped after rebinding some originals
            return
        if isinstance(obj, (torch.nn.Module, torch.autograd.function.FunctionCtx)):
            # Assigning to a name the class defines (a method, a property) would
            # shadow it for the allowlist while lookup still finds the class's own.
            if _class_attribute(type(obj), name) is not _MISSING and not (
                self._script_property_of(obj, name)
            ):
                raise SandboxError(
                    f"cannot assign to '{name}': it is a method or property of "
                    f"{type(obj).__name__}; pick another name"
                )
        if isinstance(obj, argparse._SubParsersAction) and type(obj) is argparse._SubParsersAction:
            # subparsers.required = True, as argparse's own docs write it
            if not (name == "required" and isinstance(value, bool)) and not (
                name == "dest" and isinstance(value, str) and not value.startswith("_")
                and len(value) < 200
            ):
                raise SandboxError("a subparsers object takes required (a bool) and dest (a name)")
            setattr(obj, name, value)
            return
        if isinstance(obj, TorchvizGraph):
            if name not in TORCHVIZ_SETTABLE or not isinstance(value, str):
                raise SandboxError(f"make_dot's graph takes a string for {', '.join(sorted(TORCHVIZ_SETTABLE))}")
            setattr(obj, name, value)
            return
        if isinstance(obj, torch.autograd.function.FunctionCtx):
            if callable(value) and not isinstance(value, torch.Tensor):
                raise SandboxError("only data can be stored on ctx")
            setattr(obj, name, value)
            return
        if isinstance(obj, torch.nn.Module) and isinstance(value, (torch.Tensor, torch.nn.Module)):
            setattr(obj, name, value)
            return
        if isinstance(obj, enum.Enum) and name in ("name", "value") and self._is_script_enum(type(obj)):
            setattr(obj, name, value)  # enum's read-only properties raise AttributeError
            return
        if not isinstance(obj, type) and self._is_script_instance(obj):
            if self._script_property_of(obj, name):
                if isinstance(_class_attribute(type(obj), name), functools.cached_property):
                    self._check_storable(value)  # kept in the instance, as its value
                setattr(obj, name, value)  # the script's own setter runs (or Python refuses)
                return
            if self._defined_by_script(type(obj), name) is not None and not (
                self._defined_by_script(type(obj), name)
                and _is_plain_data(_class_attribute(type(obj), name))
            ):
                # a method or a library class's name; a script class's data attribute
                # (a dataclass default, a counter) is shadowed per instance as in Python
                raise SandboxError(
                    f"cannot assign to '{name}': it is a method or class attribute of "
                    f"{type(obj).__name__}; pick another name"
                )
            self._check_storable(value)
            setattr(obj, name, value)
            return
        raise SandboxError(f"cannot set the attribute '{name}' of {_type_name(obj)}")

    def _script_property_of(self, obj: Any, name: str) -> bool:
        """Whether ``obj.name`` is a property a script class statement made."""
        return (
            not isinstance(obj, type)
            and bool(self._defined_by_script(type(obj), name))
            and self._is_script_property(_class_attribute(type(obj), name))
        )

    def _private_allowed(self, obj: Any, name: str) -> bool:
        """'_name' (never a dunder) on what the script made: its own instances and
        classes, and the namespaces it built; never on a library object, and never a
        name a library class in the object's MRO keeps (nn.Module's _parameters,
        _forward_hooks, ...)."""
        if name.startswith("__") or not name.startswith("_"):
            return False
        if isinstance(obj, (types.SimpleNamespace, argparse.Namespace)):
            return True
        if obj in self._made_types if isinstance(obj, type) else type(obj) in self._made_types:
            # a namedtuple's documented API (its generated code only builds tuples)
            return name in (("_make", "_fields", "_field_defaults") if isinstance(obj, type)
                            else ("_asdict", "_replace", "_fields"))
        if isinstance(obj, type):
            return obj in self.script_classes and not _library_private(obj, name, self.script_classes)
        if not self._is_script_instance(obj):
            return False
        if self._defined_by_script(type(obj), name):
            return True
        return not _library_private(type(obj), name, self.script_classes)

    def _set_class_attribute(self, cls: type, name: str, value: Any) -> None:
        """``setattr(Class, name, fn)`` on a script class (d2l's add_to_class): a script
        function becomes a method, plain data a class attribute; a name a library class
        in the MRO defines (a torch internal, nn.Module's API) stays the library's."""
        if name.startswith("__"):
            raise SandboxError(f"cannot set the attribute '{name}' of a class")
        library = [k for k in cls.__mro__ if k not in self.script_classes]
        # as in a class statement: a module may define forward (train, eval), nothing else
        # of nn.Module's
        if name not in _MODULE_OVERRIDABLE and (
            any(name in k.__dict__ for k in library)
            or (issubclass(cls, torch.nn.Module) and hasattr(torch.nn.Module, name))
        ):
            raise SandboxError(
                f"class {cls.__name__} may not redefine the library's '{name}'"
            )
        if issubclass(cls, torch.autograd.Function):
            raise SandboxError("an autograd.Function's methods are set in its class statement")
        if isinstance(value, ScriptFunction):
            fn = dataclasses.replace(value)
            fn.owner = cls
            setattr(cls, name, _host_method(fn))
            return
        if not _is_plain_data(value):
            raise SandboxError(
                "a class attribute set from outside the class must be a function the script "
                "defined or plain data (numbers, strings, tuples, tensors, dtypes, devices)"
            )
        setattr(cls, name, value)

    def _check_storable(self, value: Any) -> None:
        """What a script may keep on its own objects: what it could hold in a variable."""
        if isinstance(value, (ns.SafeModule, types.ModuleType, SuperProxy, BoundSuperCall)):
            raise SandboxError(f"{_type_name(value)} cannot be stored on an object")
        if isinstance(value, type):
            if value in self._allowed_types or value in self.script_classes:
                return
            raise SandboxError(f"the type {value.__name__} cannot be stored on an object")
        if callable(value) and not isinstance(value, (ScriptFunction, torch.nn.Module)):
            self._vet_callable(value)


_MISSING = object()
_NO_DEFAULT = object()
_NO_VALUE = object()


def _is_hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def _optimizer_state_root(optimizers: Any, obj: Any) -> Any:
    """The optimizer ``state`` dict that ``obj`` is, or None."""
    return next((o.state for o in list(optimizers) if o.state is obj), None)
_FORMAT_FIELD = re.compile(r"\d*|[A-Za-z][A-Za-z0-9_]*")
_SCRIPT_EXCEPTION_TYPES = frozenset(ns.SCRIPT_EXCEPTIONS.values())


class KeyboardInterruptName(Exception):  # noqa: N818 - named as the builtin it stands for
    """What ``KeyboardInterrupt`` names in a script: ``except KeyboardInterrupt:`` (a
    training loop's Ctrl-C exit) is accepted and catches nothing, since gradviz's Stop
    is not the script's to catch; a script cannot raise it."""


def _is_exception_spec(value: Any) -> bool:
    if isinstance(value, tuple):
        return bool(value) and all(_is_exception_spec(v) for v in value)
    return value in _SCRIPT_EXCEPTION_TYPES or value is KeyboardInterruptName


def script_exception(exc: BaseException) -> BaseException:
    """What ``except ... as e`` binds: a fresh exception of the nearest type a script may
    name, holding only the message: no traceback, no frames, no objects in ``args``."""
    for klass in type(exc).__mro__:
        if klass in _SCRIPT_EXCEPTION_TYPES:
            message = str(exc)
            if klass is KeyError and exc.args and isinstance(exc.args[0], str):
                message = exc.args[0]
            return klass(message[:2000])
    return Exception(str(exc)[:2000])
_FORMAT_NUMBER = re.compile(r"\d+")
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def scrub_addresses(text: str) -> str:
    """Hide object addresses in text a script can read (``<... object at 0x7f...>``):
    they would give away the memory layout, which ``data_ptr`` also hides."""
    return _ADDRESS.sub(" at 0x000000000000", text) if " at 0x" in text else text


_PERCENT_SPEC = re.compile(r"%(?:\([^)]*\))?[-+ #0]*(?:\d+|\*)?(?:\.(?:\d+|\*))?")


def _class_attribute(cls: type, name: str) -> Any:
    """``name`` as found in a class's MRO dicts (no descriptors run), or _MISSING."""
    for klass in cls.__mro__:
        if name in klass.__dict__:
            return klass.__dict__[name]
    return _MISSING


_LIBRARY_PRIVATE_CACHE: weakref.WeakKeyDictionary[type, frozenset[str] | None] = (
    weakref.WeakKeyDictionary()
)
#: the instance attributes nn.Module.__init__ makes (its hook tables, _parameters, ...)
_MODULE_INSTANCE_NAMES = frozenset(vars(torch.nn.Module()))


def _library_private(cls: type, name: str, script_classes: set[type]) -> bool:
    """Whether library code may keep ``name`` on instances of ``cls``: a library class
    in the MRO defines it, or nn.Module's __init__ makes it; on a class deriving from a
    library layer (whose __init__ keeps private state we do not list), every private
    instance name is the library's."""
    names = _LIBRARY_PRIVATE_CACHE.get(cls, _MISSING)
    if names is _MISSING:
        # (the class parametrize makes for a script module holds only torch's properties)
        library = [k for k in cls.__mro__ if k not in script_classes
                   and k not in _PARAMETRIZED_CLASSES]
        plain = {object, torch.nn.Module, torch.utils.data.Dataset, typing.Generic}
        if any(k not in plain for k in library):
            names = None
        else:
            found: set[str] = set()
            for k in library:
                found.update(k.__dict__)
            if issubclass(cls, torch.nn.Module):
                found.update(_MODULE_INSTANCE_NAMES)
            names = frozenset(found)
        _LIBRARY_PRIVATE_CACHE[cls] = names
    return names is None or name in names  # type: ignore[operator]


def _has_static(obj: Any, name: str) -> bool:
    """Whether ``obj`` has ``name``, found without running any of its code (no
    properties, no __getattr__)."""
    try:
        inspect.getattr_static(obj, name)
    except AttributeError:
        return False
    return True


#: the module script classes name while @dataclass makes their methods: an empty one
#: (dataclasses looks the class's module up in sys.modules for its globals)
_SCRIPT_MODULE = sys.modules.setdefault("gradviz.script", types.ModuleType("gradviz.script"))


def _is_plain_data(value: Any) -> bool:
    if isinstance(value, (bool, int, float, str, type(None), torch.dtype, torch.device)):
        return True
    if isinstance(value, torch.Tensor):
        return True
    if isinstance(value, tuple):
        return all(_is_plain_data(v) for v in value)
    return False


def check_script_array(value: Any, limits: Limits) -> None:
    """An array or numpy scalar a script may hold: numeric, writable, of bounded size.

    Scripts never get the ndarray constructor, buffers or strides, so every
    array they hold is one numpy or torch allocated for them; this check is
    the second line: it refuses object and structured dtypes (which can turn
    raw memory into Python references), read-only memory (a bytes constant, a
    numpy scalar) and zero-stride views of huge size before any numpy method
    runs over them.
    """
    kind = value.dtype.kind
    if kind not in ns.NUMERIC_DTYPE_KINDS:
        raise SandboxError(
            f"numpy arrays of dtype {value.dtype} are refused in gradviz scripts: only bool, "
            "integer, float and complex arrays"
        )
    if isinstance(value, np.ndarray):
        if value.size > limits.max_op_elements:
            raise _elements_limit("numpy", value.size, limits)
        if value.nbytes > limits.max_op_bytes and value.base is None:
            raise LimitExceeded(
                f"refused: a numpy array of {value.nbytes:,} bytes; the limit is "
                f"{limits.max_op_bytes:,} (gradviz limit max_op_bytes)",
                limit="max_op_bytes",
            )
        if not value.flags.writeable:
            raise SandboxError(
                "read-only numpy arrays are refused: this array views memory the script did "
                "not allocate; use .copy()"
            )


def _isinstance_types(spec: Any) -> Any:
    """The second argument of isinstance: a type or a tuple of types, nothing else."""
    if isinstance(spec, type):
        return spec
    if isinstance(spec, tuple) and all(isinstance(t, type) for t in spec):
        return spec
    raise TypeError("isinstance() arg 2 must be a type or tuple of types")


#: optimizer implementations that run multi-tensor native kernels without the op guard
_TRANSFORM_TYPES = ns.transform_types()
#: library classes that keep a list they are given as their own state
_LIST_KEEPERS = frozenset(
    getattr(torch.distributions.transforms, name)
    for name in ("ComposeTransform", "CatTransform", "StackTransform")
) | {torch.distributions.TransformedDistribution}


def _is_transform(value: Any) -> bool:
    """A transform object torch's own classes made (the script cannot derive from them)."""
    return type(value) in _TRANSFORM_TYPES


_PARAMETRIZE = torch.nn.utils.parametrize
#: the classes torch.nn.utils.parametrize made for modules a script parametrized
#: (ParametrizedLinear): a property per parametrized tensor and nothing of the script's
_PARAMETRIZED_CLASSES: weakref.WeakSet[type] = weakref.WeakSet()
#: the calls that parametrize a module (their first argument)
_PARAMETRIZING = (
    _PARAMETRIZE.register_parametrization,
    torch.nn.utils.parametrizations.weight_norm,
    torch.nn.utils.parametrizations.orthogonal,
    torch.nn.utils.parametrizations.spectral_norm,
)


def _parametrized_tensor(module: Any, name: str) -> bool:
    """Whether ``module.name`` is a tensor torch computes through parametrizations."""
    cls = type(module)
    return (
        cls in _PARAMETRIZED_CLASSES
        and isinstance(cls.__dict__.get(name), property)
        and _PARAMETRIZE.is_parametrized(module, name)
    )


class _KeptGeometry:
    """Tensors that torch rebinds with ``set_`` (a parametrization's original when the
    script assigns the parametrized tensor, or removes the parametrization): torch checks
    their dtype, not their shape, and an optimizer keeps state of the old shape. Each
    must keep its shape, dtype and device, or it is put back and the call refused."""

    def __init__(self, tensors: list[torch.Tensor]):
        self.kept = [(t, t.data) for t in tensors]

    def check(self) -> None:
        changed = [
            (t, old) for t, old in self.kept
            if t.shape != old.shape or t.dtype != old.dtype or t.device != old.device
        ]
        if not changed:
            return
        with torch.no_grad():
            for t, old in changed:
                t.set_(old)  # type: ignore[call-overload]  # set_(Tensor): torch's stubs lack it
        raise SandboxError(
            "refused: a parametrized tensor would change shape, dtype or device (torch "
            "rebinds the original with set_; its optimizer state keeps the old shape)"
        )


def _originals(module: Any, name: str | None = None) -> list[torch.Tensor]:
    """The original tensors behind a module's parametrized tensors (or one of them)."""
    lists = getattr(module, "parametrizations", None)
    if not isinstance(lists, torch.nn.ModuleDict):
        return []
    found: list[torch.Tensor] = []
    for key, plist in lists.items():
        if name is not None and key != name:
            continue
        found += [t for k, t in plist.named_parameters(recurse=False) if k.startswith("original")]
        found += [t for k, t in plist.named_buffers(recurse=False) if k.startswith("original")]
    return found


_OPTIMIZER_STATE_READ_ONLY = (
    "an optimizer's state is read-only in gradviz scripts: its step trusts the buffers it "
    "finds there (write to param_groups' lr, or make a new optimizer)"
)
_OPTIMIZER_KERNEL_OPTIONS = ("fused", "foreach", "capturable", "differentiable")


class _AutocastSpec:
    """``@torch.autocast(...)`` on a script function: each call enters a fresh autocast
    with the same settings (what autocast's own decorator does)."""

    __slots__ = ("device", "dtype", "enabled", "cache_enabled")

    def __init__(self, manager: torch.autocast):
        self.device = manager.device
        self.dtype = manager.fast_dtype
        self.enabled = manager._enabled
        self.cache_enabled = manager._cache_enabled

    def clone(self) -> torch.autocast:
        return torch.autocast(
            device_type=self.device, dtype=self.dtype, enabled=self.enabled,
            cache_enabled=self.cache_enabled,
        )


def _check_autocast_arguments(args: tuple, kwargs: dict) -> None:
    """torch.autocast on the devices gradviz runs (cpu, cuda), with a dtype and flags."""
    extra = sorted(set(kwargs) - {"device_type", "dtype", "enabled", "cache_enabled"})
    if extra or len(args) > 1:
        raise SandboxError(
            "torch.autocast takes device_type, dtype, enabled and cache_enabled in gradviz scripts"
        )
    device = args[0] if args else kwargs.get("device_type")
    if device not in ("cpu", "cuda"):
        raise SandboxError("torch.autocast(device_type=...) takes 'cpu' or 'cuda' in gradviz scripts")
    dtype = kwargs.get("dtype")
    if dtype is not None and not isinstance(dtype, torch.dtype):
        raise SandboxError("torch.autocast(dtype=...) takes a torch dtype")
    for key in ("enabled", "cache_enabled"):
        if kwargs.get(key) is not None and not isinstance(kwargs[key], bool):
            raise SandboxError(f"torch.autocast({key}=...) takes True or False")


def _check_optimizer_options(options: Any) -> None:
    for key in _OPTIMIZER_KERNEL_OPTIONS:
        if options.get(key):
            raise SandboxError(
                f"optimizer option {key}=True is refused in gradviz scripts: the plain "
                "implementation gives the same numbers and every op passes the guard"
            )


class _PackedMeta:
    """What a saved tensor was when the script's pack hook took it: its unpack hook must
    give back a tensor a backward kernel can read as that one."""

    __slots__ = ("shape", "dtype", "device", "layout", "dense")

    def __init__(self, t: torch.Tensor):
        self.shape = tuple(t.shape)
        self.dtype = t.dtype
        self.device = t.device
        self.layout = t.layout
        self.dense = t.layout == torch.strided and torch._debug_has_internal_overlap(t) == 0

    def check(self, out: Any) -> None:
        def refuse(what: str) -> SandboxError:
            return SandboxError(
                f"refused: the saved_tensors_hooks unpack hook returned {what}; it must "
                f"return the saved tensor's like (shape {list(self.shape)}, {self.dtype}, "
                f"{self.device}): backward kernels read what they saved without checking it"
            )

        if not isinstance(out, torch.Tensor):
            raise refuse(f"a {type(out).__name__}, not a tensor")
        if tuple(out.shape) != self.shape:
            raise refuse(f"a tensor of shape {list(out.shape)}")
        if out.dtype != self.dtype or out.device != self.device or out.layout != self.layout:
            raise refuse(f"a {out.dtype} {out.layout} tensor on {out.device}")
        if self.dense and torch._debug_has_internal_overlap(out) != 0:
            raise refuse("a view whose elements share memory (an expanded view)")


def _checked_saved_tensor_hooks(args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """saved_tensors_hooks(pack, unpack) with the script's hooks wrapped: pack notes what
    it was given, unpack's result is checked against it (:class:`_PackedMeta`). Kernels
    that index memory with saved integers are also checked when they run
    (guards.install_offset_checks); this is the general check, for every backward."""
    try:
        bound = inspect.signature(torch.autograd.graph.saved_tensors_hooks.__init__).bind(
            None, *args, **kwargs
        )
    except TypeError as exc:
        raise SandboxError(f"saved_tensors_hooks takes (pack_hook, unpack_hook): {exc}") from None
    pack, unpack = bound.arguments["pack_hook"], bound.arguments["unpack_hook"]

    def pack_hook(t: torch.Tensor) -> Any:
        return _PackedMeta(t), pack(t)

    def unpack_hook(packed: Any) -> torch.Tensor:
        meta, inner = packed
        out = unpack(inner)
        meta.check(out)
        return out

    return (pack_hook, unpack_hook), {}


def _check_dataloader_arguments(args: tuple, kwargs: dict, limits: Limits | None = None) -> None:
    """One process, the default sampler, and nothing that starts workers or pins memory.

    The worker and pinning options that pytorch/examples pass on a CUDA machine
    (``num_workers=1, pin_memory=True``) are taken out of ``kwargs`` in place: the
    loader runs in this process, as with ``num_workers=0``, on pageable memory, and
    gives the same batches (each batch is made here either way; the sampler's seed is
    drawn from the same generator). A note says so."""
    if len(args) > 3:
        raise SandboxError(
            "DataLoader takes dataset, batch_size and shuffle by position; name the rest"
        )
    extra = sorted(set(kwargs) - ns.DATALOADER_KEYWORDS)
    if extra:
        raise SandboxError(
            f"DataLoader's '{extra[0]}=' is refused in gradviz scripts: it may take "
            + ", ".join(sorted(ns.DATALOADER_KEYWORDS))
        )
    sampler = kwargs.get("sampler")
    if sampler is not None and type(sampler) not in (
        torch.utils.data.RandomSampler, torch.utils.data.SequentialSampler
    ):
        raise SandboxError(
            "DataLoader(sampler=...) takes a torch.utils.data.RandomSampler or SequentialSampler"
        )
    workers = kwargs.get("num_workers", 0)
    if not _is_int(workers) or isinstance(workers, bool) or (_index_value(workers) or 0) < 0:
        raise SandboxError("DataLoader(num_workers=...) takes a whole number, 0 or more")
    if "prefetch_factor" in kwargs and kwargs["prefetch_factor"] is not None and not _is_int(
        kwargs["prefetch_factor"]
    ):
        raise SandboxError("DataLoader(prefetch_factor=...) takes a whole number or None")
    for key in ("pin_memory", "persistent_workers"):
        if key in kwargs and not isinstance(kwargs[key], bool):
            raise SandboxError(f"DataLoader({key}=...) takes True or False")
    if kwargs.get("persistent_workers"):
        # kept workers draw the loader's base seed once; a loader without workers draws
        # it every epoch, so a shuffled second epoch would differ from PyTorch's
        raise SandboxError(
            "DataLoader(persistent_workers=True) is refused: gradviz loads in the kernel "
            "without worker processes, and the batches after the first epoch would differ"
        )
    asked = [f"num_workers={_index_value(workers)}"] if _index_value(workers) else []
    asked += ["pin_memory=True"] if kwargs.get("pin_memory") else []
    for key in ns.DATALOADER_IN_PROCESS:
        kwargs.pop(key, None)
    kwargs["num_workers"] = 0
    if asked:
        warnings.warn(
            f"gradviz loads this DataLoader's batches in the kernel itself ({', '.join(asked)} "
            "asked for): no worker processes, no pinned memory; the batches are the same",
            GradvizWarning,
            stacklevel=2,
        )
    batch = args[1] if len(args) > 1 else kwargs.get("batch_size", 1)
    cap = limits.max_sequence_length if limits is not None else 10_000_000
    if _is_int(batch) and (_index_value(batch) or 0) > cap:
        raise LimitExceeded(
            f"refused: batch_size {_index_value(batch):,} is over the limit of {cap:,} "
            "(gradviz limit max_sequence_length): the loader builds each batch as a list",
            limit="max_sequence_length",
        )


def _check_dtype_argument(dtype: Any) -> None:
    try:
        kind = np.dtype(dtype).kind
    except TypeError:
        return  # a torch dtype or something numpy rejects itself
    except Exception:  # noqa: BLE001 - numpy's own parse errors
        return
    if kind not in ns.NUMERIC_DTYPE_KINDS:
        raise SandboxError(
            f"numpy dtype {dtype!r} is refused in gradviz scripts: only bool, integer, float "
            "and complex"
        )


def _elements_limit(what: str, size: int, limits: Limits) -> LimitExceeded:
    return LimitExceeded(
        f"refused: the {what} operation would touch {size:,} elements; the limit is "
        f"{limits.max_op_elements:,} (gradviz limit max_op_elements)",
        limit="max_op_elements",
    )


def _is_name_target(target: ast.expr) -> bool:
    """``name`` or ``a, b`` (a class body's attributes)."""
    if isinstance(target, ast.Name):
        return True
    return isinstance(target, ast.Tuple) and all(isinstance(e, ast.Name) for e in target.elts)


def _check_class_body_item(item: ast.stmt, class_name: str, nested: bool = True) -> None:
    """A class body holds methods, class attributes, ``pass``, a docstring and (in a
    plain class) nested classes: other statements (a loop, a call, a yield) would run
    at class creation."""
    if isinstance(item, (ast.FunctionDef, ast.Assign, ast.AnnAssign, ast.Pass)):
        return
    if nested and isinstance(item, ast.ClassDef):
        return
    if isinstance(item, ast.Expr) and isinstance(item.value, ast.Constant):
        return
    raise SandboxError(
        f"the body of class {class_name} may hold methods, class attributes and a "
        f"docstring, not {_describe_node(item).removeprefix('the construct ')}",
        line=item.lineno,
    )


#: what an enum class statement may derive from: enum's classes and the mixins
#: members are commonly made of (class Mode(str, Enum))
_ENUM_BASES: tuple[type, ...] = (
    enum.Enum, enum.IntEnum, *((enum.StrEnum,) if hasattr(enum, "StrEnum") else ()), int, str,
    float,
)


def _class_body_names(item: ast.stmt) -> list[str]:
    """The names a class-body statement binds: a def's or a nested class's name, the
    plain names an assignment targets (tuple targets unpacked)."""
    if isinstance(item, (ast.FunctionDef, ast.ClassDef)):
        return [item.name]
    targets = (item.targets if isinstance(item, ast.Assign) else
               [item.target] if isinstance(item, ast.AnnAssign) else [])
    return [
        n.id
        for t in targets
        for n in (t.elts if isinstance(t, ast.Tuple) else [t])
        if isinstance(n, ast.Name)
    ]


def _check_enum_body_item(item: ast.stmt, class_name: str) -> None:
    """An enum body names members and methods; names starting with '_' (enum's
    _missing_, _generate_next_value_, _ignore_, and every special method) are enum's
    own hooks, which enum's machinery calls: refused."""
    names = [] if isinstance(item, ast.ClassDef) else _class_body_names(item)
    for name in names:
        if name.startswith("_"):
            raise SandboxError(
                f"enum class {class_name} may not define '{name}': names starting with '_' "
                "are enum's own hooks",
                line=item.lineno,
            )


def enum_module(interp: Interpreter) -> ns.SafeModule:
    """``enum``: Enum, IntEnum (and StrEnum) as bases of a class statement, auto() for
    member values, @unique; the functional API (Enum('Color', 'RED GREEN')) is refused."""
    members: dict[str, Any] = {
        "Enum": enum.Enum, "IntEnum": enum.IntEnum, "auto": enum.auto,
        "unique": StdlibFunction(interp._enum_unique, "unique"),
    }
    if hasattr(enum, "StrEnum"):
        members["StrEnum"] = enum.StrEnum
    return ns.SafeModule("enum", members)


def _yields_in(body: list[ast.stmt]) -> bool:
    """Whether a def's own body (not nested defs, lambdas or classes) yields."""
    todo: list[ast.AST] = list(body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Yield):
            return True
        if isinstance(node, (ast.FunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        todo.extend(ast.iter_child_nodes(node))
    return False


#: torch.func transforms that return functions torch made, and where: "self" (the
#: result is the function: grad(f), vmap(f)) or an index into the tuple returned
#: (vjp's vjp_fn). Everything else a transform returns (vjp's output and aux,
#: functional_call's forward output) came from script code and stays a plain value.
_RETURNED_FUNCTIONS: dict[str, tuple[str | int, ...]] = {
    "grad": ("self",),
    "grad_and_value": ("self",),
    "vmap": ("self",),
    "jacrev": ("self",),
    "jacfwd": ("self",),
    "hessian": ("self",),
    "vjp": (1,),
}

_TORCH_DIR = os.path.dirname(torch.__file__) + os.sep


def made_by_torch(value: Any) -> bool:
    """Whether ``value`` is a plain function whose code is torch's own: what a
    transform builds (its wrapper closure). A script's functions, numpy, builtins,
    bound methods, classes and callable objects are none of that, whatever a
    script function returned them through."""
    if type(value) is not types.FunctionType:
        return False
    return value.__code__.co_filename.startswith(_TORCH_DIR)


def _wrap_returned_functions(result: Any, where: tuple[str | int, ...], name: str) -> Any:
    """The functions a torch.func transform made, callable by the script.

    Only the positions ``where`` names are looked at, and only a function torch
    made there is wrapped as vetted: a value script code produced (a forward
    returning ``np.ndarray``, ``str.format`` or a builtin) is never laundered into
    a :class:`LibraryCallable`; it stays what it is and is vetted when called."""
    if "self" in where:
        return LibraryCallable(result, name) if made_by_torch(result) else result
    if type(result) is not tuple:
        return result
    items = list(result)
    for index in where:
        if isinstance(index, int) and index < len(items) and made_by_torch(items[index]):
            items[index] = LibraryCallable(items[index], name)
    return tuple(items)


def _bounded_extra_repr(method: Callable[..., Any]) -> Callable[..., Any]:
    """A script module's extra_repr: torch builds a module's repr from it (print(model)),
    so what it returns must be a str of at most MAX_EXTRA_REPR characters."""

    def extra_repr(self: Any) -> str:
        text = method(self)
        if not isinstance(text, str):
            raise TypeError(f"extra_repr must return a str, not {type(text).__name__}")
        if len(text) > MAX_EXTRA_REPR:
            raise LimitExceeded(
                f"refused: extra_repr returned {len(text):,} characters; a module's "
                f"description may have {MAX_EXTRA_REPR:,} (gradviz limit max_str_length)",
                limit="max_str_length",
            )
        return text

    extra_repr.__name__ = "extra_repr"
    extra_repr.__qualname__ = getattr(method, "__qualname__", "extra_repr")
    return extra_repr


def _host_method(fn: ScriptFunction) -> Callable[..., Any]:
    """A script method as a plain function, so Python binds ``self`` (torch calls
    ``forward`` this way from ``Module.__call__``)."""

    def method(*args: Any, **kwargs: Any) -> Any:
        return fn.interpreter.call_script_function(fn, args, kwargs)

    method.__name__ = fn.name.rsplit(".", 1)[-1]
    method.__qualname__ = fn.name
    return method


def _host_cached_method(cache: ScriptCache) -> Callable[..., Any]:
    """An lru_cache'd script method as a plain function, so Python binds ``self``."""

    def method(*args: Any, **kwargs: Any) -> Any:
        return cache(*args, **kwargs)

    name = cache.fn.name if isinstance(cache.fn, ScriptFunction) else "method"
    method.__name__ = name.rsplit(".", 1)[-1]
    method.__qualname__ = name
    return method


def _host_callable(fn: ScriptFunction) -> Callable[..., Any]:
    """Wrap a script function so torch can call it (hooks, autograd.Function).

    The wrapper is remembered, so when it comes back to the script (a function
    handed to a script class and stored on ``self``) calling it runs the script
    function again rather than being refused as a foreign callable.
    """

    def call(*args: Any, **kwargs: Any) -> Any:
        return fn.interpreter.call_script_function(fn, args, kwargs)

    call.__name__ = fn.name.rsplit(".", 1)[-1]
    call.__qualname__ = fn.name
    fn.interpreter._host_wrappers[id(call)] = (call, fn)
    return call


def _is_int(value: Any) -> bool:
    """An integer a size could come from: Python's, numpy's, or a one-element integer
    tensor (anything ``operator.index`` accepts), never a bool."""
    return _index_value(value) is not None


def _index_value(value: Any) -> int | None:
    if isinstance(value, (bool, np.bool_)):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, np.integer) or (
        isinstance(value, torch.Tensor) and value.numel() == 1 and not value.is_floating_point()
        and value.dtype is not torch.bool and not value.is_complex()
    ):
        try:
            return operator.index(value)
        except (TypeError, ValueError, RuntimeError):
            return None
    return None


def _is_backward_call(func: Any) -> bool:
    if func is torch.autograd.backward or func is torch.autograd.grad:
        return True
    return isinstance(getattr(func, "__self__", None), torch.Tensor) and getattr(
        func, "__name__", ""
    ) == "backward"


def _type_name(obj: Any) -> str:
    if isinstance(obj, ns.SafeModule):
        return f"module '{obj.name}'"
    if isinstance(obj, type):
        return f"type '{obj.__name__}'"
    return f"a '{type(obj).__name__}' object"


def _describe_callable(func: Any) -> str:
    if isinstance(getattr(func, "__self__", None), Interpreter):
        return f"'{func.__name__.lstrip('_')}'"  # the sandbox's own print/range
    name = getattr(func, "__qualname__", None) or getattr(func, "__name__", None)
    if name:
        return f"'{name}'"
    return _type_name(func)


def iter_statement_lines(stmt: ast.stmt) -> tuple[int, int]:
    """First and last line of a statement (1-based, inclusive)."""
    return stmt.lineno, getattr(stmt, "end_lineno", stmt.lineno) or stmt.lineno


# --- the Python standard library a script may use -----------------------------------
#
# Each module is a SafeModule of reviewed members. Functions that take callables or
# build things (functools.partial, copy.deepcopy, itertools, argparse) are gradviz's
# own wrappers (StdlibFunction): callables they are handed run through the
# interpreter or are refused, iterators they make tick the iteration limit, sizes
# are checked before anything is built.

#: argparse keywords: what a parser and an argument may be given
_PARSER_KEYWORDS = frozenset(
    {"prog", "usage", "description", "epilog", "formatter_class", "prefix_chars",
     "argument_default", "conflict_handler", "add_help", "allow_abbrev", "exit_on_error",
     "parents"}
)
_ARGUMENT_KEYWORDS = frozenset(
    {"action", "nargs", "const", "default", "type", "choices", "required", "help", "metavar",
     "dest", "version"}
)
_SUBPARSERS_KEYWORDS = frozenset(
    {"title", "description", "prog", "dest", "required", "help", "metavar"}
)
#: what add_parser takes besides an ArgumentParser's own keywords
_ADD_PARSER_KEYWORDS = frozenset({"help", "aliases"})
_ARGUMENT_ACTIONS = frozenset(
    {"store", "store_const", "store_true", "store_false", "append", "append_const", "count",
     "help", "version", "extend"}
)
_ARGUMENT_TYPES = (int, float, str, bool, complex)
_FORMATTERS = (
    argparse.HelpFormatter, argparse.ArgumentDefaultsHelpFormatter,
    argparse.RawTextHelpFormatter, argparse.RawDescriptionHelpFormatter,
    argparse.MetavarTypeHelpFormatter,
)
#: most items a combinatoric itertools call may hold at once (pools, r, repeat)
_ITERTOOLS_MAX_ITEMS = 1_000_000
#: most classes collections.namedtuple may make in one run
_MAX_MADE_TYPES = 100_000


class ScriptArgumentParser(argparse.ArgumentParser):
    """argparse as scripts use it: ``parse_args()`` reads no command line (gradviz's
    own argv is not the script's: an empty one, so the defaults apply), help and errors
    print to the script's output, and exiting (a bad argument, ``-h``) stops the
    statement with argparse's message instead of ending the process."""

    def __init__(self, interp: Interpreter, **kwargs: Any):
        self._gradviz = interp
        kwargs.setdefault("prog", "script.py")
        super().__init__(**kwargs)

    def _print_message(self, message: str, file: Any = None) -> None:
        if message:
            self._gradviz.output.write(message, self._gradviz.limits.max_str_length)

    def exit(self, status: int = 0, message: str | None = None) -> Any:
        if message:
            self._print_message(message)
        raise SandboxError(
            f"the script's argparse parser exited (status {status}): a script's parser ends "
            "the program here; gradviz stops the statement instead"
        )

    def error(self, message: str) -> Any:
        raise SandboxError(
            f"{self.prog}: error: {message} (argparse would exit the program here; gradviz "
            "stops the statement)"
        )

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        if args is None:
            args = []  # gradviz's own command line is not the script's
        if not isinstance(args, (list, tuple)) or not all(isinstance(a, str) for a in args):
            raise TypeError("parse_args takes a list of strings")
        if namespace is not None and type(namespace) is not argparse.Namespace:
            raise SandboxError("parse_args(namespace=...) takes an argparse.Namespace")
        return super().parse_known_args(list(args), namespace)

    def add_subparsers(self, **kwargs: Any) -> Any:
        """Sub-commands (``train``/``eval``): each sub-parser is a ScriptArgumentParser
        made with the same checks (argparse makes them through ``parser_class``)."""
        extra = sorted(set(kwargs) - _SUBPARSERS_KEYWORDS)
        if extra:
            raise SandboxError(
                f"add_subparsers' '{extra[0]}=' is refused in gradviz scripts; it may take "
                + ", ".join(sorted(_SUBPARSERS_KEYWORDS))
            )
        for key in ("title", "description", "prog", "dest", "help", "metavar"):
            value = kwargs.get(key)
            if value is not None and (not isinstance(value, str) or len(value) > 10_000):
                raise SandboxError(f"add_subparsers({key}=...) takes a string")
        if kwargs.get("dest", "x").startswith("_"):
            raise SandboxError("argument names starting with '_' are refused")
        interp = self._gradviz

        def make_parser(**options: Any) -> ScriptArgumentParser:
            _check_parser_keywords(options)
            return ScriptArgumentParser(interp, **options)

        # argparse calls parser_class(**options): any callable does (typeshed wants a type)
        return super().add_subparsers(parser_class=make_parser, **kwargs)  # type: ignore[call-overload]

    def print_help(self, file: Any = None) -> None:
        if file is not None:
            raise SandboxError("print_help() prints to the script's output only")
        super().print_help()

    def print_usage(self, file: Any = None) -> None:
        if file is not None:
            raise SandboxError("print_usage() prints to the script's output only")
        super().print_usage()

    def __deepcopy__(self, memo: dict) -> ScriptArgumentParser:
        return self


def _check_argument(interp: Interpreter, args: tuple, kwargs: dict) -> None:
    """``add_argument(...)`` of a parser or group: only what configures parsing."""
    if not all(isinstance(a, str) and len(a) < 200 for a in args):
        raise SandboxError("add_argument takes option strings such as '--lr'")
    extra = sorted(set(kwargs) - _ARGUMENT_KEYWORDS)
    if extra:
        raise SandboxError(
            f"add_argument's '{extra[0]}=' is refused in gradviz scripts; it may take "
            + ", ".join(sorted(_ARGUMENT_KEYWORDS))
        )
    action = kwargs.get("action", "store")
    if not (action in _ARGUMENT_ACTIONS or action is argparse.BooleanOptionalAction):
        raise SandboxError(
            "add_argument(action=...) takes one of " + ", ".join(sorted(_ARGUMENT_ACTIONS))
            + " or argparse.BooleanOptionalAction"
        )
    kind = kwargs.get("type")
    if kind is not None and not (
        kind in _ARGUMENT_TYPES
        or interp._host_wrappers.get(id(kind), (None,))[0] is kind
        or kind in interp.script_classes
    ):
        raise SandboxError(
            "add_argument(type=...) takes int, float, str, bool, complex or a function the "
            "script defines (argparse calls it on the command-line string)"
        )
    choices = kwargs.get("choices")
    if choices is not None and (
        not isinstance(choices, (list, tuple, set, frozenset, range, dict, str))
        or len(choices) > 10_000
    ):
        # argparse joins every choice into its usage and error messages, in C
        raise SandboxError("add_argument(choices=...) takes a list, tuple, set or range of up to 10,000")
    nargs = kwargs.get("nargs")
    if nargs is not None and nargs not in ("?", "*", "+") and not (
        _is_int(nargs) and 0 <= _index_value(nargs) <= 100  # type: ignore[operator]
    ):
        raise SandboxError("add_argument(nargs=...) takes '?', '*', '+' or a number up to 100")
    for key in ("help", "metavar", "dest", "version"):
        value = kwargs.get(key)
        if value is None:
            continue
        if key == "metavar" and isinstance(value, tuple):
            value = " ".join(map(str, value))
        if not isinstance(value, str) or len(value) > 10_000:
            raise SandboxError(f"add_argument({key}=...) takes a string")
        interp._check_format_widths(" ".join(_PERCENT_SPEC.findall(value)))
    dest = kwargs.get("dest")
    names = [dest] if dest else [a.lstrip("-").replace("-", "_") for a in args]
    if any(n.startswith("_") for n in names):
        raise SandboxError("argument names starting with '_' are refused")


def _check_parser_keywords(kwargs: dict) -> None:
    extra = sorted(set(kwargs) - _PARSER_KEYWORDS)
    if extra:
        raise SandboxError(
            f"ArgumentParser's '{extra[0]}=' is refused in gradviz scripts (fromfile_prefix_chars "
            "reads files); it may take " + ", ".join(sorted(_PARSER_KEYWORDS))
        )
    formatter = kwargs.get("formatter_class")
    if formatter is not None and formatter not in _FORMATTERS:
        raise SandboxError("ArgumentParser(formatter_class=...) takes one of argparse's formatters")
    for parent in kwargs.get("parents", ()):
        if not isinstance(parent, ScriptArgumentParser):
            raise SandboxError("ArgumentParser(parents=...) takes parsers the script made")
    for key in ("prog", "usage", "description", "epilog", "prefix_chars"):
        value = kwargs.get(key)
        if value is not None and (not isinstance(value, str) or len(value) > 100_000):
            raise SandboxError(f"ArgumentParser({key}=...) takes a string")
    if not kwargs.get("prefix_chars", "-"):
        raise SandboxError("ArgumentParser(prefix_chars=...) takes at least one character")


def _typing_names() -> dict[str, Any]:
    names = (
        "Any List Dict Tuple Set FrozenSet Optional Union Callable Iterable Iterator Sequence "
        "Mapping MutableMapping Type Literal Final ClassVar Generator Deque DefaultDict "
        "OrderedDict Counter NoReturn TYPE_CHECKING"
    ).split()
    return {n: getattr(typing, n) for n in names if hasattr(typing, n)}


def functorch_module() -> types.ModuleType:
    import functorch

    return functorch


def typing_module() -> ns.SafeModule:
    """``typing``: names for annotations (gradviz never evaluates annotations) and
    ``cast``, which gives back its value."""
    members = _typing_names()
    members["cast"] = StdlibFunction(lambda kind, value: value, "cast")
    return ns.SafeModule("typing", members)


def python_modules(interp: Interpreter) -> dict[str, ns.SafeModule]:
    """The standard-library modules a script may import, bound to ``interp``."""
    F = StdlibFunction

    def ticking(make: Callable[..., Any], name: str) -> StdlibFunction:
        def run(*args: Any, **kwargs: Any) -> TickingIterator:
            args = tuple(interp._host_value(a) for a in args)
            kwargs = {k: interp._host_value(v) for k, v in kwargs.items()}
            return TickingIterator(interp, make(*args, **kwargs))

        return F(run, name)

    def pools(args: tuple) -> list[tuple]:
        out = []
        total = 0
        for a in args:
            pool = tuple(interp._iterate(a))
            total += len(pool)
            interp._check_length(total)
            out.append(pool)
        return out

    def product(*args: Any, repeat: int = 1) -> TickingIterator:
        if not _is_int(repeat):
            raise TypeError("product() repeat must be an integer")
        items = pools(args)
        if len(items) * max(_index_value(repeat) or 0, 0) > _ITERTOOLS_MAX_ITEMS:
            raise LimitExceeded(
                f"refused: product() of {len(items)} iterables repeated {repeat} times is over "
                f"{_ITERTOOLS_MAX_ITEMS:,} per item (gradviz limit max_sequence_length)",
                limit="max_sequence_length",
            )
        return TickingIterator(interp, itertools.product(*items, repeat=repeat))

    def choose(make: Callable[..., Any], name: str) -> StdlibFunction:
        def run(iterable: Any, r: Any = None) -> TickingIterator:
            (pool,) = pools((iterable,))
            if r is not None and (not _is_int(r) or (_index_value(r) or 0) > _ITERTOOLS_MAX_ITEMS):
                raise LimitExceeded(
                    f"refused: {name}() with r={r!r} (at most {_ITERTOOLS_MAX_ITEMS:,}; gradviz "
                    "limit max_sequence_length)",
                    limit="max_sequence_length",
                )
            return TickingIterator(interp, make(pool) if r is None else make(pool, r))

        return F(run, name)

    def tee(iterable: Any, n: int = 2) -> tuple:
        if not _is_int(n) or not 0 <= (_index_value(n) or 0) <= 64:
            raise SandboxError("tee() makes at most 64 iterators in gradviz scripts")
        return tuple(TickingIterator(interp, t) for t in itertools.tee(iterable, n))

    chain_from = ticking(itertools.chain.from_iterable, "from_iterable")
    itertools_members: dict[str, Any] = {
        name: ticking(getattr(itertools, name), name)
        for name in (
            "accumulate compress count cycle dropwhile filterfalse groupby islice pairwise "
            "repeat starmap takewhile zip_longest"
        ).split()
    }
    itertools_members.update(
        chain=ChainFunction(ticking(itertools.chain, "chain").func, chain_from),
        product=F(product, "product"),
        permutations=choose(itertools.permutations, "permutations"),
        combinations=choose(itertools.combinations, "combinations"),
        combinations_with_replacement=choose(
            itertools.combinations_with_replacement, "combinations_with_replacement"
        ),
        tee=F(tee, "tee"),
    )

    def argument_parser(*args: Any, **kwargs: Any) -> ScriptArgumentParser:
        if args:
            raise SandboxError("ArgumentParser takes its settings by name (prog=..., description=...)")
        _check_parser_keywords(kwargs)
        kwargs["exit_on_error"] = True  # errors reach error(), which stops the statement
        return ScriptArgumentParser(interp, **kwargs)

    os_path = ns.SafeModule(
        "os.path",
        {name: getattr(os.path, name) for name in ("join", "basename", "dirname", "splitext", "split")}
        | {"sep": os.sep},
    )
    return {
        "__future__": ns.SafeModule(
            "__future__", {n: getattr(__future__, n) for n in __future__.all_feature_names}
        ),
        "time": ns.SafeModule(
            "time",
            {
                "time": time.time, "perf_counter": time.perf_counter, "monotonic": time.monotonic,
                "time_ns": time.time_ns, "perf_counter_ns": time.perf_counter_ns,
                "monotonic_ns": time.monotonic_ns, "process_time": time.process_time,
                "sleep": F(interp._sleep, "sleep"),
            },
        ),
        "collections": ns.SafeModule(
            "collections",
            {
                "namedtuple": F(interp._namedtuple, "namedtuple"),
                "deque": collections.deque, "Counter": collections.Counter,
                "defaultdict": collections.defaultdict, "OrderedDict": collections.OrderedDict,
            },
        ),
        "functools": ns.SafeModule(
            "functools",
            {
                "partial": F(interp._partial, "partial"), "reduce": F(interp._reduce, "reduce"),
                "wraps": F(interp._wraps, "wraps"),
                "lru_cache": F(interp._lru_cache, "lru_cache"), "cache": F(interp._cache, "cache"),
                "cached_property": F(interp._cached_property, "cached_property"),
            },
        ),
        "itertools": ns.SafeModule("itertools", itertools_members),
        "copy": ns.SafeModule(
            "copy", {"copy": F(interp._copy, "copy"), "deepcopy": F(interp._deepcopy, "deepcopy")}
        ),
        "dataclasses": ns.SafeModule(
            "dataclasses",
            {
                "dataclass": F(interp._dataclass, "dataclass"), "field": F(interp._field, "field"),
                "asdict": F(interp._asdict, "asdict"),
            },
        ),
        "types": ns.SafeModule("types", {"SimpleNamespace": types.SimpleNamespace}),
        "inspect": ns.SafeModule(
            "inspect",
            {
                "currentframe": F(interp._currentframe, "currentframe"),
                "getargvalues": F(interp._getargvalues, "getargvalues"),
                "signature": F(interp._signature, "signature"),
            },
        ),
        "argparse": ns.SafeModule(
            "argparse",
            {
                "ArgumentParser": F(argument_parser, "ArgumentParser"),
                "Namespace": argparse.Namespace,
                "BooleanOptionalAction": argparse.BooleanOptionalAction,
                "SUPPRESS": argparse.SUPPRESS,
                **{k.__name__: k for k in _FORMATTERS},
            },
        ),
        # os and sys: only string helpers and facts, so that a script importing them
        # for a path join or a version check opens; files, the environment and
        # processes stay out (each use says why)
        "os": ns.SafeModule("os", {"path": os_path, "sep": os.sep}),
        "os.path": os_path,
        "sys": ns.SafeModule(
            "sys",
            {
                "version": sys.version, "version_info": tuple(sys.version_info),
                "maxsize": sys.maxsize, "byteorder": sys.byteorder,
                "exit": F(interp._sys_exit, "exit"),
            },
        ),
        "typing": typing_module(),
        "contextlib": ns.SafeModule("contextlib", {"nullcontext": F(_nullcontext, "nullcontext")}),
        # functorch: torch.func's former name (the same transforms, vetted the same way)
        "functorch": ns.SafeModule(
            "functorch",
            dict(interp.torch_ns.members["func"].members)
            # functorch's module API (deprecated for torch.func.functional_call): a copy of
            # the module whose forward takes its parameters and buffers as arguments, an
            # nn.Module like any other
            | {name: getattr(functorch_module(), name)
               for name in ("make_functional", "make_functional_with_buffers")},
        ),
        "re": re_module(interp),
        "torch.jit": jit_module(),
        "unicodedata": unicodedata_module(interp),
    }


# --- re: regular expressions that cannot run away -------------------------------------
#
# Python's re backtracks: ``(a+)+$`` takes exponential time, ``a+b`` searched over n
# characters quadratic time, in C code no statement limit interrupts (the kernel serves
# requests on a thread signals do not reach). A script's pattern is parsed first and
# refused where its worst case is not bounded: backreferences, lookarounds, conditional
# groups, a repeat inside a repeat, an alternation of several characters inside a repeat,
# bounded repeats over 1,000. What is left backtracks at most n ** (k + 1) steps over n
# characters, k being its unbounded repeats that something after them can fail (a repeat
# at the end of the pattern never backtracks to fail); a call is refused where that is
# over RE_STEPS. Replacements are strings (group references allowed), and what sub,
# split and findall make is sized before it is built.

RE_STEPS = 2_000_000_000
RE_FLAGS = {"IGNORECASE": re.IGNORECASE, "I": re.IGNORECASE, "MULTILINE": re.MULTILINE,
            "M": re.MULTILINE, "DOTALL": re.DOTALL, "S": re.DOTALL, "ASCII": re.ASCII,
            "A": re.ASCII, "VERBOSE": re.VERBOSE, "X": re.VERBOSE}
MAX_PATTERN = 10_000


def _re_shape(items: Any, inside_repeat: bool) -> tuple[int, bool]:
    """(unbounded repeats that may backtrack, whether the sequence can match nothing
    more than a bounded amount); raises SandboxError on an unbounded construct."""
    from re import _constants as c  # type: ignore[attr-defined]  # noqa: PLC0415 - CPython's

    repeats = 0
    items = list(items)
    for index, (op, arg) in enumerate(items):
        last = index == len(items) - 1
        if op in (c.GROUPREF, c.GROUPREF_EXISTS):
            raise SandboxError("re: backreferences are refused in gradviz scripts (their "
                               "matching can take exponential time)")
        if op in (c.ASSERT, c.ASSERT_NOT):
            raise SandboxError("re: lookahead and lookbehind are refused in gradviz scripts")
        if op in (c.MAX_REPEAT, c.MIN_REPEAT, getattr(c, "POSSESSIVE_REPEAT", None)):
            low, high, body = arg
            if inside_repeat:
                raise SandboxError("re: a repeat inside a repeat ((a+)+, (a*b)*) is refused in "
                                   "gradviz scripts (its matching can take exponential time)")
            inner, _ = _re_shape(body, True)
            if high == c.MAXREPEAT:
                if not last:
                    repeats += 1
            elif high > 1_000:
                raise SandboxError("re: a bounded repeat over 1,000 ({m,n}) is refused in "
                                   "gradviz scripts")
            repeats += inner
        elif op == c.SUBPATTERN:
            inner, _ = _re_shape(arg[-1], inside_repeat)
            repeats += inner
        elif op == c.BRANCH:
            for alternative in arg[1]:
                if inside_repeat and len(list(alternative)) != 1:
                    raise SandboxError("re: an alternation of several characters inside a "
                                       "repeat ((ab|a)+) is refused in gradviz scripts")
                inner, _ = _re_shape(alternative, inside_repeat)
                repeats += inner
        elif op == c.ATOMIC_GROUP if hasattr(c, "ATOMIC_GROUP") else False:
            inner, _ = _re_shape(arg, inside_repeat)
            repeats += inner
    return repeats, True


class ScriptPattern:
    """A compiled pattern that passed the checks above: its methods as re's, sized."""

    __slots__ = ("_interp", "_compiled", "_repeats", "pattern", "flags", "groups")
    pattern: str
    flags: int

    def __init__(self, interp: Interpreter, pattern: Any, flags: int = 0):
        if isinstance(pattern, ScriptPattern):
            pattern, flags = pattern.pattern, pattern.flags | flags
        if not isinstance(pattern, str):
            raise TypeError("gradviz scripts use re with str patterns")
        if not isinstance(flags, int) or flags & ~sum(set(RE_FLAGS.values())):
            raise SandboxError("re flags: IGNORECASE, MULTILINE, DOTALL, ASCII, VERBOSE")
        if len(pattern) > MAX_PATTERN:
            raise LimitExceeded(f"refused: a pattern of {len(pattern):,} characters; the limit "
                                f"is {MAX_PATTERN:,}", limit="max_str_length")
        from re import _parser  # type: ignore[attr-defined]  # noqa: PLC0415 - CPython's

        parsed = _parser.parse(pattern, flags)
        self._repeats, _ = _re_shape(parsed, False)
        self._compiled = re.compile(pattern, flags)
        self._interp = interp
        self.pattern = pattern
        self.flags = self._compiled.flags
        self.groups = self._compiled.groups

    def __repr__(self) -> str:
        return repr(self._compiled)

    def _subject(self, text: Any, what: str = "string") -> str:
        if not isinstance(text, str):
            raise TypeError(f"expected a {what} (str), got {type(text).__name__}")
        steps = (len(text) + 1) ** (self._repeats + 1)
        if steps > RE_STEPS:
            raise LimitExceeded(
                f"refused: this pattern could backtrack about {steps:,} steps over "
                f"{len(text):,} characters (it has {self._repeats} repeat(s) that something "
                f"after them can fail); the limit is {RE_STEPS:,} (gradviz limit max_op_macs)",
                limit="max_op_macs",
            )
        return text

    def _count(self, text: str) -> int:
        count = 0
        for _ in self._compiled.finditer(text):
            count += 1
        return count

    def match(self, string: Any) -> ScriptMatch | None:
        m = self._compiled.match(self._subject(string))
        return ScriptMatch(m) if m else None

    def search(self, string: Any) -> ScriptMatch | None:
        m = self._compiled.search(self._subject(string))
        return ScriptMatch(m) if m else None

    def fullmatch(self, string: Any) -> ScriptMatch | None:
        m = self._compiled.fullmatch(self._subject(string))
        return ScriptMatch(m) if m else None

    def findall(self, string: Any) -> list[Any]:
        text = self._subject(string)
        self._interp._check_length(self._count(text))
        return self._compiled.findall(text)

    def finditer(self, string: Any) -> Iterator[ScriptMatch]:
        text = self._subject(string)
        self._interp._check_length(self._count(text))
        return iter([ScriptMatch(m) for m in self._compiled.finditer(text)])

    def split(self, string: Any, maxsplit: int = 0) -> list[Any]:
        text = self._subject(string)
        self._interp._check_length((self._count(text) + 1) * (self.groups + 1))
        return self._compiled.split(text, maxsplit=maxsplit)

    def sub(self, repl: Any, string: Any, count: int = 0) -> str:
        return self.subn(repl, string, count)[0]

    def subn(self, repl: Any, string: Any, count: int = 0) -> tuple[str, int]:
        if not isinstance(repl, str):
            raise SandboxError("re.sub in gradviz scripts takes the replacement as a string "
                               "(group references such as \\1 allowed), not a function")
        text = self._subject(string)
        matches = self._count(text)
        if count:
            matches = min(matches, count)
        references = len(re.findall(r"\\(?:\d+|g<[^>]*>)", repl))
        self._interp._check_length(len(text) + matches * len(repl) + references * len(text), 1)
        return self._compiled.subn(repl, text, count=count)


class ScriptMatch:
    """A match, read as re's Match objects are (group, groups, start, end, span)."""

    __slots__ = ("_m", "string", "pos", "endpos", "lastindex")

    def __init__(self, m: Any):
        self._m = m
        self.string = m.string
        self.pos = m.pos
        self.endpos = m.endpos
        self.lastindex = m.lastindex

    def group(self, *indices: Any) -> Any:
        return self._m.group(*indices)

    def groups(self, default: Any = None) -> tuple:
        return self._m.groups(default)

    def groupdict(self, default: Any = None) -> dict:
        return self._m.groupdict(default)

    def start(self, group: Any = 0) -> int:
        return self._m.start(group)

    def end(self, group: Any = 0) -> int:
        return self._m.end(group)

    def span(self, group: Any = 0) -> tuple[int, int]:
        return self._m.span(group)

    def __getitem__(self, group: Any) -> Any:
        return self._m[group]

    def __repr__(self) -> str:
        return repr(self._m)


SCRIPT_PATTERN_ATTRIBUTES = frozenset(
    "match search fullmatch findall finditer split sub subn pattern flags groups".split()
)
SCRIPT_MATCH_ATTRIBUTES = frozenset(
    "group groups groupdict start end span string pos endpos lastindex".split()
)


def re_module(interp: Interpreter) -> ns.SafeModule:
    F = StdlibFunction

    def compile_(pattern: Any, flags: int = 0) -> ScriptPattern:
        return ScriptPattern(interp, pattern, flags)

    def use(method: str) -> Any:
        def call(pattern: Any, *args: Any, flags: int = 0, **kwargs: Any) -> Any:
            return getattr(ScriptPattern(interp, pattern, flags), method)(*args, **kwargs)

        return F(call, method)

    members: dict[str, Any] = {
        "compile": F(compile_, "compile"),
        "escape": F(re.escape, "escape"),
        **{name: use(name) for name in
           ("match", "search", "fullmatch", "findall", "finditer", "split", "sub", "subn")},
        **RE_FLAGS,
    }
    return ns.SafeModule("re", members)


#: the most characters one character becomes under Unicode normalization (NFKC/NFKD of
#: U+FDFA is 18), so a normalized string is sized before it is built
NORMALIZE_GROWTH = 18


def unicodedata_module(interp: Interpreter) -> ns.SafeModule:
    """``unicodedata``: pure functions of characters (the chatbot tutorial strips accents
    with normalize('NFD', s) and category(c))."""
    import unicodedata  # noqa: PLC0415

    F = StdlibFunction

    def normalize(form: Any, text: Any) -> str:
        if not isinstance(form, str) or not isinstance(text, str):
            raise TypeError("normalize() takes two strings")
        if form not in ("NFC", "NFD", "NFKC", "NFKD"):
            raise ValueError("invalid normalization form")  # what unicodedata says
        interp._check_length(len(text) * NORMALIZE_GROWTH, 1)
        return unicodedata.normalize(form, text)  # type: ignore[arg-type]  # checked above

    members = {"normalize": F(normalize, "normalize"),
               **{name: F(getattr(unicodedata, name), name) for name in (
                   "category", "name", "lookup", "decimal", "digit", "numeric", "combining",
                   "east_asian_width", "mirrored", "bidirectional", "decomposition",
                   "is_normalized")},
               "unidata_version": unicodedata.unidata_version}
    return ns.SafeModule("unicodedata", members)


def jit_module() -> ns.SafeModule:
    """``torch.jit`` as model code meets it in eager mode: ``from torch.jit import
    script, trace`` imports (a chatbot tutorial imports them and never calls them),
    ``is_scripting()`` and ``is_tracing()`` are False as in eager mode; compiling
    (script, trace) is refused where it is called: it compiles and runs native code outside the
    interpreter."""
    F = StdlibFunction

    def refused(name: str) -> StdlibFunction:
        def call(*args: Any, **kwargs: Any) -> Any:
            raise SandboxError(
                f"torch.jit.{name} is refused in gradviz scripts: it compiles the code and "
                "runs it outside gradviz's interpreter (the eager code runs as it is)"
            )

        return F(call, name)

    return ns.SafeModule("torch.jit", {
        "script": refused("script"), "trace": refused("trace"),
        "trace_module": refused("trace_module"), "script_if_tracing": refused("script_if_tracing"),
        "is_scripting": F(lambda: False, "is_scripting"),
        "is_tracing": F(lambda: False, "is_tracing"),
    })


def _nullcontext(enter_result: Any = None) -> contextlib.nullcontext:
    """``contextlib.nullcontext()``: a 'with' that does nothing (nanoGPT's ctx on cpu)."""
    return contextlib.nullcontext(enter_result)


__all__ = [
    "Interpreter",
    "ScriptFunction",
    "decode_source",
    "iter_statement_lines",
    "inspect",
    "Iterable",
]


class TooLongToShow:
    """Shown in place of an expression statement's value whose text would pass
    max_str_length."""

    __slots__ = ("kind",)

    def __init__(self, kind: str):
        self.kind = kind

    def __repr__(self) -> str:
        return (f"<a {self.kind} whose text is over the length limit (gradviz limit "
                "max_str_length): not shown>")


#: containers and objects text_bound walks at most; past it a value is "too big to say"
TEXT_BOUND_STEPS = 5_000_000


def _leaf_text(v: Any) -> int | None:
    """Characters of a value that holds no other values; None for a container."""
    if isinstance(v, str):
        return len(v) + 2
    if isinstance(v, (bytes, bytearray)):
        return 4 * len(v) + 14
    if isinstance(v, bool) or v is None or isinstance(v, (float, complex)):
        return 24
    if isinstance(v, int):
        return v.bit_length() // 3 + 2
    if isinstance(v, (torch.Tensor, np.ndarray, np.generic)):
        n = v.numel() if isinstance(v, torch.Tensor) else int(np.size(v))
        # both summarize past 1,000 elements (print options are not the script's)
        return 16 * min(n, 1_000) + 8 * int(getattr(v, "ndim", 1)) + 96
    if isinstance(v, (list, tuple, set, frozenset, collections.deque, dict, types.SimpleNamespace)):
        return None
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return None
    if isinstance(v, torch.nn.Module):
        # each module's line: its name, class and extra_repr (a script's is bounded by
        # MAX_EXTRA_REPR, torch's own by its settings); read without running script code
        total = 0
        for name, m in torch.nn.Module.named_modules(v):
            script_repr = "extra_repr" in type(m).__dict__ and type(m).__module__ == "__main__"
            total += len(name) + 64 + (MAX_EXTRA_REPR if script_repr else 400)
            if total > 1 << 40:
                break
        return total
    return 200


def _parts(v: Any) -> tuple[int, list[Any]]:
    """(characters of its own, the values it shows) of a container."""
    if isinstance(v, dict):
        return 2 + 4 * len(v), [*v.keys(), *v.values()]
    if isinstance(v, types.SimpleNamespace):
        attrs = vars(v)
        return 20 + sum(len(k) + 3 for k in attrs), list(attrs.values())
    if isinstance(v, (list, tuple, set, frozenset, collections.deque)):
        named = 0 if type(v) in (list, tuple, set) else len(type(v).__name__) + 2
        return 2 + 2 * len(v) + named, list(v)
    fields = dataclasses.fields(v)
    return (len(type(v).__name__) + 2 + sum(len(f.name) + 3 for f in fields),
            [getattr(v, f.name, None) for f in fields])


def text_bound(value: Any, limit: int) -> int:
    """About how many characters ``str(value)`` or ``repr(value)`` makes, at least as
    many, read from the value without building it; past ``limit`` it stops (and says
    more than ``limit``). A list holding one 9 MB string 400 times costs the script 3 KB,
    its repr 3.6 GB: str, repr, print, f-strings and %-formatting build the whole text
    before any length check could see it. A container met again is counted again (its
    text is repeated), one met inside itself once (repr writes ``[...]``)."""
    own = _leaf_text(value)
    if own is not None:
        return own
    sizes: dict[int, int] = {}
    open_: set[int] = set()
    steps = 0
    stack: list[tuple[Any, bool]] = [(value, False)]
    while stack:
        v, done = stack.pop()
        steps += 1
        if steps > TEXT_BOUND_STEPS:
            return limit + 1
        if done:
            base, children = _parts(v)
            total = base
            for child in children:
                leaf = _leaf_text(child)
                total += leaf if leaf is not None else sizes.get(id(child), 5)
                steps += 1
            open_.discard(id(v))
            sizes[id(v)] = total
            if total > limit:
                return total
            continue
        if id(v) in sizes or id(v) in open_:
            continue
        open_.add(id(v))
        stack.append((v, True))
        for child in _parts(v)[1]:
            steps += 1
            if _leaf_text(child) is None and id(child) not in sizes and id(child) not in open_:
                stack.append((child, False))
        if steps > TEXT_BOUND_STEPS:
            return limit + 1
    return sizes.get(id(value), 0)
