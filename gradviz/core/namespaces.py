"""The names a script can see: curated torch, numpy and builtins namespaces.

Everything here is an allowlist. torch re-exports ``os``, ``builtins`` and
``importlib`` and has many functions that reach files or native code
(``torch.load``, ``torch.from_file``, ``torch.hub``, ``torch.ops``,
``torch.compile``), so a script never sees a real torch module: it sees
SafeModules holding the operators derived from PyTorch's registries and
reviewed (:mod:`gradviz.core.surface`, pinned per torch version), plus the few
hand-listed entry points below (dtypes, ``cuda`` counters, ``autograd``).
"""

from __future__ import annotations

import builtins
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from gradviz.core import surface


@dataclass
class SafeModule:
    """A module-like namespace holding only allowlisted members."""

    name: str
    members: dict[str, Any] = field(default_factory=dict)

    def __repr__(self) -> str:
        return f"<module '{self.name}' (gradviz sandbox)>"

    def __copy__(self) -> SafeModule:
        raise TypeError("cannot pickle 'module' object")  # what copying a module raises

    def __deepcopy__(self, memo: dict) -> SafeModule:
        raise TypeError("cannot pickle 'module' object")


# --- torch ---------------------------------------------------------------

TORCH_DTYPES = """
float16 float32 float64 bfloat16 half float double int8 int16 int32 int64 uint8 long int short bool
complex64 complex128 cfloat cdouble
""".split()


def _pick(module: Any, names: list[str]) -> dict[str, Any]:
    members: dict[str, Any] = {}
    for name in names:
        if hasattr(module, name):
            members[name] = getattr(module, name)
    return members


def _derived(namespace: str, extra: dict[str, Any] | None = None) -> SafeModule:
    """A namespace of the derived, reviewed API (see :mod:`gradviz.core.surface`)."""
    members = _pick(surface.owner_of(namespace), surface.allowed(namespace))
    members.update(extra or {})
    return SafeModule(namespace, members)


#: the modules a script may import, by dotted name (filled by build_torch_namespace)
def importable_modules(torch_ns: SafeModule) -> dict[str, SafeModule]:
    """Dotted name -> namespace, for every SafeModule reachable from ``torch``."""
    out: dict[str, SafeModule] = {}

    def walk(module: SafeModule) -> None:
        out[module.name] = module
        for value in module.members.values():
            if isinstance(value, SafeModule) and value.name.startswith(module.name + "."):
                walk(value)

    walk(torch_ns)
    return out


_LEGACY_CTORS = {
    "FloatTensor": torch.float32, "DoubleTensor": torch.float64, "HalfTensor": torch.float16,
    "BFloat16Tensor": torch.bfloat16, "LongTensor": torch.int64, "IntTensor": torch.int32,
    "ShortTensor": torch.int16, "CharTensor": torch.int8, "ByteTensor": torch.uint8,
    "BoolTensor": torch.bool,
}


def _legacy_ctor(name: str, dtype: torch.dtype) -> Any:
    """``torch.<name>(data)`` or ``torch.<name>(*sizes)`` as PyTorch's legacy constructor
    reads them, on the cpu: data (a list, tuple or number sequence) through
    ``torch.tensor``, sizes (ints or a ``torch.Size``) through ``torch.empty``. A
    tensor, a storage, a buffer or any keyword is refused: those alias memory."""

    def construct(*args: Any, **kwargs: Any) -> torch.Tensor:
        if kwargs:
            raise TypeError(f"torch.{name}() takes no keyword arguments in gradviz scripts")
        if not args:
            return torch.empty(0, dtype=dtype)
        if len(args) == 1 and isinstance(args[0], torch.Size):
            args = tuple(args[0])
        if all(isinstance(a, int) and not isinstance(a, bool) for a in args):
            return torch.empty(*args, dtype=dtype)
        if len(args) == 1 and isinstance(args[0], (list, tuple)):
            return torch.tensor(args[0], dtype=dtype)
        raise TypeError(
            f"torch.{name}() takes data (a list or tuple) or sizes (ints) in gradviz "
            f"scripts; for a tensor write t.to({dtype})"
        )

    construct.__name__ = construct.__qualname__ = name
    construct.__module__ = "torch"
    return construct


class ParametrizeCached:
    """``torch.nn.utils.parametrize.cached()`` as a script writes it, in a ``with``:
    parametrized tensors are computed once inside the block. torch's own context
    manager, held here so that 'with' accepts this one and no other generator-made
    context manager."""

    __slots__ = ("inner",)

    def __init__(self) -> None:
        import torch.nn.utils.parametrize as parametrize

        self.inner = parametrize.cached()

    def __enter__(self) -> None:
        self.inner.__enter__()

    def __exit__(self, *exc: Any) -> None:
        self.inner.__exit__(*exc)


def build_torch_namespace() -> SafeModule:
    """The ``torch`` a script sees.

    The operator namespaces are derived from PyTorch's registries and pinned in a
    reviewed file (:mod:`gradviz.core.surface`). ``torch.cuda`` holds only
    availability and memory counters; ``torch.autograd`` its documented entry
    points (``Function`` is subclassed by a ``class`` statement the interpreter
    handles itself).
    """
    import torch.utils.data as tud

    members = _pick(torch, surface.allowed("torch"))
    members.update(_pick(torch, TORCH_DTYPES))
    members["Tensor"] = torch.Tensor
    members["device"] = torch.device
    members["dtype"] = torch.dtype
    members["Size"] = torch.Size
    #: a random generator object (its manual_seed, seed, initial_seed; no raw state)
    members["Generator"] = torch.Generator
    #: mixed precision on cpu or cuda, as a 'with' or a decorator (arguments vetted)
    members["autocast"] = torch.autocast
    members["amp"] = SafeModule(
        "torch.amp", {"autocast": torch.autocast, "GradScaler": torch.amp.GradScaler}
    )

    # the legacy typed constructors older tutorials call (torch.LongTensor(pad_list)):
    # data or sizes only, made by torch.tensor / torch.empty under the op guard
    for name, dtype in _LEGACY_CTORS.items():
        members[name] = _legacy_ctor(name, dtype)

    members["pi"] = math.pi
    members["e"] = math.e
    members["inf"] = math.inf
    members["nan"] = math.nan

    import torch.nn.utils.parametrizations as parametrizations
    import torch.nn.utils.parametrize as parametrize

    nn_utils = _derived(
        "torch.nn.utils",
        {
            "rnn": _derived("torch.nn.utils.rnn"),
            # a tensor of a module computed by a module (the script's or torch's) each
            # time it is read; the sandbox checks what a registration may take
            "parametrize": SafeModule(
                "torch.nn.utils.parametrize",
                _pick(parametrize, ["register_parametrization", "remove_parametrizations",
                                    "is_parametrized"]) | {"cached": ParametrizeCached},
            ),
            "parametrizations": SafeModule(
                "torch.nn.utils.parametrizations",
                _pick(parametrizations, ["weight_norm", "orthogonal", "spectral_norm"]),
            ),
        },
    )
    members["nn"] = _derived(
        "torch.nn",
        {
            "functional": _derived("torch.nn.functional"),
            "init": _derived("torch.nn.init"),
            "utils": nn_utils,
            # imported by scripts that use DataParallel only with several GPUs
            # (pytorch/examples' dcgan); nothing in it is available
            "parallel": SafeModule("torch.nn.parallel", {}),
        },
    )
    members["optim"] = _derived(
        "torch.optim", {"lr_scheduler": _derived("torch.optim.lr_scheduler")}
    )
    members["utils"] = SafeModule(
        "torch.utils",
        {
            "data": SafeModule(
                "torch.utils.data",
                {
                    "TensorDataset": tud.TensorDataset,
                    "DataLoader": tud.DataLoader,
                    "Dataset": tud.Dataset,
                    # index samplers (makemore's infinite loader draws with replacement)
                    "RandomSampler": tud.RandomSampler,
                    "SequentialSampler": tud.SequentialSampler,
                    # the module DataLoader is defined in (makemore imports it from there)
                    "dataloader": SafeModule(
                        "torch.utils.data.dataloader", {"DataLoader": tud.DataLoader}
                    ),
                },
            ),
            "checkpoint": _derived("torch.utils.checkpoint"),
        },
    )
    members["autograd"] = SafeModule(
        "torch.autograd",
        {
            "grad": torch.autograd.grad,
            "backward": torch.autograd.backward,
            "Function": torch.autograd.Function,
            "gradcheck": torch.autograd.gradcheck,
            "gradgradcheck": torch.autograd.gradgradcheck,
            "function": SafeModule(
                "torch.autograd.function",
                {
                    "once_differentiable": torch.autograd.function.once_differentiable,
                    "Function": torch.autograd.Function,
                },
            ),
            "functional": _derived("torch.autograd.functional"),
            "graph": SafeModule(
                "torch.autograd.graph",
                {
                    "saved_tensors_hooks": torch.autograd.graph.saved_tensors_hooks,
                    "save_on_cpu": torch.autograd.graph.save_on_cpu,
                    "Node": torch.autograd.graph.Node,
                },
            ),
            "forward_ad": SafeModule(
                "torch.autograd.forward_ad",
                _pick(torch.autograd.forward_ad, ["dual_level", "make_dual", "unpack_dual"]),
            ),
            # anomaly mode as a 'with' (or turned on for the run): checks backward for nan
            "detect_anomaly": torch.autograd.detect_anomaly,
            "set_detect_anomaly": torch.autograd.set_detect_anomaly,
            "profiler": SafeModule(
                "torch.autograd.profiler", {"profile": torch.autograd.profiler.profile}
            ),
        },
    )
    members["cuda"] = SafeModule(
        "torch.cuda",
        _pick(
            torch.cuda,
            [
                "is_available",
                "device_count",
                "memory_allocated",
                "max_memory_allocated",
                "memory_reserved",
                "max_memory_reserved",
                "reset_peak_memory_stats",
                "synchronize",
                "empty_cache",
                "manual_seed",
                "manual_seed_all",
            ],
        ),
    )
    members["accelerator"] = SafeModule(
        "torch.accelerator",
        _pick(torch.accelerator, ["is_available", "current_accelerator", "device_count"]),
    ) if hasattr(torch, "accelerator") else SafeModule("torch.accelerator", {})
    for name in ("linalg", "fft", "special", "func"):
        members[name] = _derived(f"torch.{name}")
    import torch.distributions as D

    transforms = _pick(D.transforms, TRANSFORM_NAMES)
    members["distributions"] = _derived(
        "torch.distributions",
        {
            # the transforms are torch's own classes (a script cannot derive from them):
            # their instances are callable and may be handed to TransformedDistribution
            "TransformedDistribution": D.TransformedDistribution,
            "transforms": SafeModule("torch.distributions.transforms", transforms),
            **transforms,
        },
    )
    return SafeModule("torch", members)


#: torch.distributions.transforms a script may make (not the Transform base: a
#: transform's code is torch's own; not identity_transform, one object torch shares
#: process-wide whose parts list a script could grow)
TRANSFORM_NAMES = """
AbsTransform AffineTransform CatTransform ComposeTransform CorrCholeskyTransform ExpTransform
IndependentTransform LowerCholeskyTransform PositiveDefiniteTransform PowerTransform
ReshapeTransform SigmoidTransform SoftplusTransform TanhTransform SoftmaxTransform
StackTransform StickBreakingTransform
""".split()


def transform_types() -> frozenset[type]:
    """The exact classes of the transform objects a script may hold: those it makes, and
    the inverse and composed transforms torch makes of them (t.inv)."""
    import torch.distributions.transforms as T

    kinds = {getattr(T, n) for n in TRANSFORM_NAMES if isinstance(getattr(T, n, None), type)}
    return frozenset(kinds | {T._InverseTransform})


#: what a script may read or call on a transform
TRANSFORM_ATTRIBUTES = frozenset(
    """
inv sign domain codomain bijective event_dim log_abs_det_jacobian forward_shape inverse_shape
with_cache parts loc scale exponent base_transform reinterpreted_batch_ndims in_shape out_shape
dim lengths transforms cache_size
""".split()
)


# --- numpy -----------------------------------------------------------------

NUMPY_FUNCTIONS = """
array asarray zeros ones full empty arange linspace eye zeros_like ones_like exp log sqrt sin cos
tanh abs sum mean max min maximum minimum allclose isclose array_equal shares_memory may_share_memory
float32 float64 int32 int64 bool_ ndarray round sign square add subtract multiply divide
dot matmul where vstack hstack stack concatenate argmax argmin clip log1p expm1 power outer
cumsum prod std var tanh floor ceil sort argsort unique finfo iinfo float16 uint8 int8 int16
isnan isinf isfinite nan inf e newaxis transpose reshape mean median percentile uint16 uint32
uint64
""".split()

#: numpy.random's functions a script may call (the global generator, seeded by the run),
#: each with where its size argument is: (position, keyword)
NUMPY_RANDOM_SIZES: dict[str, int | None] = {
    "rand": None, "randn": None, "randint": 2, "normal": 2, "uniform": 2, "choice": 1,
    "binomial": 2, "random": 0, "random_sample": 0, "permutation": 0, "shuffle": None,
    "seed": None, "standard_normal": 0, "exponential": 1, "poisson": 1, "beta": 2,
    "multinomial": 2, "integers": 2,
}

#: types a script may name (``isinstance(a, np.ndarray)``) but never call: the
#: ndarray constructor builds an array over any buffer, with any dtype and strides
TYPES_NOT_CALLABLE: frozenset[type] = frozenset({np.ndarray})

#: numpy dtype kinds a script may hold: bool, signed, unsigned, float, complex.
#: Object ("O") arrays can forge references from raw memory; structured ("V"),
#: string ("S", "U") and datetime kinds serve no autograd lesson.
NUMERIC_DTYPE_KINDS = frozenset("biufc")

#: keyword arguments of numpy calls that alias or reinterpret memory
NUMPY_REFUSED_KEYWORDS = frozenset({"buffer", "offset", "strides", "like", "subok"})


def build_numpy_namespace() -> SafeModule:
    """A small numpy for the shared-memory lessons; no file I/O (save, load, fromfile...)."""
    members = _pick(np, NUMPY_FUNCTIONS)
    members["pi"] = math.pi
    random_members = _pick(np.random, list(NUMPY_RANDOM_SIZES))
    random_members["RandomState"] = np.random.RandomState
    # a Generator object: its draws are the names above, sized the same way
    random_members["default_rng"] = np.random.default_rng
    members["random"] = SafeModule("numpy.random", random_members)
    return SafeModule("numpy", members)


# --- builtins ----------------------------------------------------------------

SAFE_BUILTIN_NAMES = """
len range abs min max sum round float int bool str list tuple dict set isinstance enumerate zip
reversed sorted any all map filter True False None repr iter next divmod hash slice ord chr pow
frozenset issubclass format bin hex oct
""".split()

#: exceptions a script may name, raise and catch; what it catches is always a fresh
#: exception of one of these types holding only the message (no traceback, no objects)
SCRIPT_EXCEPTIONS: dict[str, type[BaseException]] = {
    e.__name__: e
    for e in (
        Exception, ValueError, RuntimeError, TypeError, IndexError, KeyError, ZeroDivisionError,
        AssertionError, AttributeError, NotImplementedError, StopIteration, ArithmeticError,
        LookupError, NameError, OverflowError, UserWarning,
    )
}
EXCEPTION_ATTRIBUTES = frozenset({"args"})


def safe_builtins() -> dict[str, Any]:
    """The builtins a script may call (``print`` and ``range`` are the interpreter's own)."""
    names: dict[str, Any] = {}
    for name in SAFE_BUILTIN_NAMES:
        if name in ("True", "False", "None"):
            continue
        names[name] = getattr(builtins, name)
    names.update(SCRIPT_EXCEPTIONS)
    return names


#: the names of ``random`` a script may use; bound to one generator seeded with the run's seed
RANDOM_NAMES = "random randint randrange uniform gauss normalvariate choice shuffle sample seed".split()


def build_random_namespace(seed: int) -> SafeModule:
    """``import random`` in a script: its own generator, seeded like torch, so a replay
    (step back, a restarted kernel) draws the same numbers."""
    import random as _random

    generator = _random.Random(seed)
    return SafeModule("random", {name: getattr(generator, name) for name in RANDOM_NAMES})


# --- attributes --------------------------------------------------------------

#: what a script may read or call on a tensor: the derived Tensor API, plus
#: ``names`` (an instance property) and the version counter
TENSOR_ATTRIBUTES = frozenset(surface.allowed("Tensor")) | {"names", "_version"}

# Methods that take a callable, or reach memory behind a tensor's back.
TENSOR_CALLBACK_METHODS = frozenset({"register_hook", "register_post_accumulate_grad_hook"})

NDARRAY_ATTRIBUTES = frozenset(
    """
shape dtype ndim size T sum mean max min copy reshape tolist item astype fill flatten ravel
transpose squeeze any all argmax argmin std var
""".split()
)

#: what a script may read on an nn.Module through its class (methods, properties).
#: Parameters, buffers, submodules and plain instance data are resolved as
#: Python would (see Interpreter._module_attribute), never by name alone.
MODULE_ATTRIBUTES = frozenset(
    """
parameters named_parameters children named_children modules named_modules zero_grad
train eval to cpu cuda float double requires_grad_ forward
register_forward_hook register_forward_pre_hook register_full_backward_hook
register_full_backward_pre_hook apply
state_dict load_state_dict named_buffers buffers register_buffer register_parameter add_module
get_submodule get_parameter
""".split()
)
# (the hook methods and apply take callables: Interpreter._host_value lets only the
# script's own functions, and modules, through)

def _distribution_attributes() -> frozenset[str]:
    """Public methods and properties of the allowed distribution classes."""
    import torch.distributions as D

    names: set[str] = set()
    for cls_name in surface.allowed("torch.distributions"):
        cls = getattr(D, cls_name)
        if isinstance(cls, type):
            names.update(n for n in dir(cls) if not n.startswith("_"))
    return frozenset(n for n in names if surface.denial_reason(n, "torch.distributions") is None)


DISTRIBUTION_ATTRIBUTES = _distribution_attributes()

#: .state is read-only (see Interpreter._is_optimizer_state)
OPTIMIZER_ATTRIBUTES = frozenset({"step", "zero_grad", "param_groups", "state"})
DATALOADER_ATTRIBUTES = frozenset({"dataset", "batch_size", "drop_last"})
SCHEDULER_ATTRIBUTES = frozenset({"step", "get_last_lr", "last_epoch"})
TENSOR_DATASET_ATTRIBUTES = frozenset({"tensors"})
#: what a DataLoader may be given: single-process loading, the script's own collate_fn
#: what the autograd profiler may be given (no traces written, no stacks recorded)
PROFILER_KEYWORDS = frozenset({"enabled", "use_cuda", "record_shapes", "profile_memory"})
DATALOADER_KEYWORDS = frozenset({"dataset", "batch_size", "shuffle", "drop_last", "collate_fn",
                                 "sampler",
                                 "num_workers", "pin_memory", "persistent_workers",
                                 "prefetch_factor"})
#: what the kernel takes out of a DataLoader call and loads without: worker processes and
#: pinned (page-locked, driver-made) memory. The batches are the same tensors.
DATALOADER_IN_PROCESS = ("pin_memory", "persistent_workers", "prefetch_factor")

DEVICE_ATTRIBUTES = frozenset({"type", "index"})
GENERATOR_ATTRIBUTES = frozenset({"manual_seed", "seed", "initial_seed", "device"})
GRAD_SCALER_ATTRIBUTES = frozenset({"scale", "step", "update", "unscale_", "is_enabled",
                                    "get_scale"})
SLICE_ATTRIBUTES = frozenset({"start", "stop", "step", "indices"})
DTYPE_ATTRIBUTES = frozenset({"is_floating_point", "is_complex", "itemsize"})
GRAD_FN_ATTRIBUTES = frozenset(
    {"next_functions", "name", "metadata", "variable", "register_hook", "register_prehook"}
)
CTX_ATTRIBUTES = frozenset(
    {
        "save_for_backward",
        "saved_tensors",
        "needs_input_grad",
        "mark_dirty",
        "mark_non_differentiable",
        "set_materialize_grads",
    }
)

STR_METHODS = frozenset(
    """
upper lower strip lstrip rstrip split join replace startswith endswith ljust rjust center
zfill title capitalize count find isdigit isalpha format isspace splitlines rfind index
""".split()
)
LIST_METHODS = frozenset(
    "append extend pop index count insert reverse copy clear remove sort".split()
)
DEQUE_METHODS = frozenset(
    "append appendleft pop popleft extend extendleft clear rotate maxlen count index insert "
    "remove reverse copy".split()
)
#: Counter.elements is left out: it repeats each key by its count, in C, unbounded
COUNTER_METHODS = frozenset({"most_common", "subtract", "total"})
#: what a script may call on an argparse parser or argument group
ARGPARSE_PARSER_ATTRIBUTES = frozenset(
    """
add_argument add_argument_group add_mutually_exclusive_group parse_args parse_known_args
set_defaults get_default print_help print_usage format_help format_usage description prog
epilog add_subparsers
""".split()
)
#: what a script may use of add_subparsers()' result
ARGPARSE_SUBPARSERS_ATTRIBUTES = frozenset({"add_parser", "required", "dest"})
FINFO_ATTRIBUTES = frozenset({"eps", "max", "min", "tiny", "resolution", "bits", "dtype",
                              "smallest_normal"})
DICT_METHODS = frozenset("items keys values get update pop copy clear setdefault".split())
#: the dict methods that write (refused on dicts the library owns)
DICT_WRITE_METHODS = frozenset("update pop clear setdefault popitem".split())
TUPLE_METHODS = frozenset({"index", "count"})
SET_METHODS = frozenset("add discard remove union intersection difference copy".split())
NUMBER_ATTRIBUTES = frozenset({"real", "imag", "is_integer", "conjugate"})
SIZE_METHODS = frozenset({"numel", "index", "count"})
