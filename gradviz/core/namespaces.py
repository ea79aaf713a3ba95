"""The names a script can see: curated torch, numpy and builtins namespaces.

Everything here is an allowlist. torch re-exports ``os``, ``builtins`` and
``importlib`` and has many functions that reach files or native code
(``torch.load``, ``torch.from_file``, ``torch.hub``, ``torch.ops``,
``torch.compile``); a denylist would always miss one, so each name a script
may reach is listed by hand.
"""

from __future__ import annotations

import builtins
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F  # noqa: N812  (the name scripts use)


@dataclass
class SafeModule:
    """A module-like namespace holding only allowlisted members."""

    name: str
    members: dict[str, Any] = field(default_factory=dict)

    def __repr__(self) -> str:
        return f"<module '{self.name}' (gradviz sandbox)>"


# --- torch ---------------------------------------------------------------

TORCH_FUNCTIONS = """
tensor as_tensor from_numpy zeros ones empty full eye arange linspace logspace rand randn randint
randperm rand_like randn_like zeros_like ones_like empty_like full_like manual_seed seed initial_seed
abs neg exp exp2 expm1 log log2 log10 log1p sqrt rsqrt sin cos tan asin acos atan atan2 sinh cosh
tanh sigmoid relu relu_ sigmoid_ tanh_ exp_ pow square sign floor ceil round trunc frac clamp clip
clamp_min clamp_max reciprocal erf lerp maximum minimum fmod remainder
add sub mul div true_divide floor_divide matmul mm bmm mv dot outer addmm einsum cross
sum mean prod std var max min amax amin argmax argmin cumsum cumprod norm logsumexp softmax
log_softmax all any allclose isclose equal eq ne lt le gt ge where masked_select index_select gather
scatter stack cat concat chunk split reshape flatten squeeze unsqueeze transpose permute t
narrow select flip roll tril triu diag diagonal trace kron tile broadcast_to expand_copy
is_tensor is_floating_point numel clone detach topk sort argsort unique nonzero count_nonzero
is_grad_enabled no_grad enable_grad inference_mode set_grad_enabled is_inference_mode_enabled
dropout mean softplus square_ sgn cosine_similarity cdist dist
""".split()

TORCH_DTYPES = """
float16 float32 float64 bfloat16 half float double int8 int16 int32 int64 uint8 long int short bool
complex64 complex128 cfloat cdouble
""".split()

NN_LAYERS = """
Linear Bilinear Identity Conv1d Conv2d ConvTranspose2d MaxPool2d AvgPool2d AdaptiveAvgPool2d
BatchNorm1d BatchNorm2d LayerNorm GroupNorm Dropout Embedding
ReLU LeakyReLU GELU SiLU ELU Sigmoid Tanh Softmax LogSoftmax Softplus Flatten Unflatten
Sequential ModuleList ModuleDict
MSELoss L1Loss CrossEntropyLoss NLLLoss BCELoss BCEWithLogitsLoss HuberLoss SmoothL1Loss
RNN LSTM GRU MultiheadAttention TransformerEncoderLayer TransformerEncoder
""".split()

NN_FUNCTIONAL = """
relu relu_ leaky_relu gelu silu elu sigmoid tanh softmax log_softmax softplus dropout linear
mse_loss l1_loss cross_entropy nll_loss binary_cross_entropy binary_cross_entropy_with_logits
smooth_l1_loss huber_loss normalize pad one_hot conv1d conv2d max_pool2d avg_pool2d layer_norm
embedding cosine_similarity conv_transpose1d conv_transpose2d
""".split()

NN_INIT = """
zeros_ ones_ constant_ normal_ uniform_ xavier_uniform_ xavier_normal_ kaiming_uniform_
kaiming_normal_ eye_
""".split()

OPTIMIZERS = "SGD Adam AdamW RMSprop Adagrad Adadelta".split()
SCHEDULERS = "StepLR MultiStepLR ExponentialLR CosineAnnealingLR LambdaLR LinearLR".split()


def _pick(module: Any, names: list[str]) -> dict[str, Any]:
    members: dict[str, Any] = {}
    for name in names:
        if hasattr(module, name):
            members[name] = getattr(module, name)
    return members


def build_torch_namespace() -> SafeModule:
    """The ``torch`` a script sees.

    ``torch.cuda`` holds only availability and memory counters, ``torch.autograd``
    only ``grad``, ``backward`` and ``Function`` (subclassed by a ``class``
    statement the interpreter handles itself).
    """
    members = _pick(torch, TORCH_FUNCTIONS)
    members.update(_pick(torch, TORCH_DTYPES))
    members["Tensor"] = torch.Tensor
    members["device"] = torch.device
    members["dtype"] = torch.dtype
    members["Size"] = torch.Size
    members["pi"] = math.pi
    members["e"] = math.e
    members["inf"] = math.inf
    members["nan"] = math.nan

    nn_members = _pick(torch.nn, NN_LAYERS)
    nn_members["Module"] = torch.nn.Module
    nn_members["Parameter"] = torch.nn.Parameter
    nn_members["functional"] = SafeModule("torch.nn.functional", _pick(F, NN_FUNCTIONAL))
    nn_members["init"] = SafeModule("torch.nn.init", _pick(torch.nn.init, NN_INIT))
    members["nn"] = SafeModule("torch.nn", nn_members)

    optim_members = _pick(torch.optim, OPTIMIZERS)
    optim_members["lr_scheduler"] = SafeModule(
        "torch.optim.lr_scheduler", _pick(torch.optim.lr_scheduler, SCHEDULERS)
    )
    members["optim"] = SafeModule("torch.optim", optim_members)
    import torch.utils.data as tud

    members["utils"] = SafeModule(
        "torch.utils",
        {
            "data": SafeModule(
                "torch.utils.data",
                {"TensorDataset": tud.TensorDataset, "DataLoader": tud.DataLoader},
            )
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
            ],
        ),
    )
    members["linalg"] = SafeModule(
        "torch.linalg", _pick(torch.linalg, ["norm", "vector_norm", "matrix_norm", "inv", "det"])
    )
    members["special"] = SafeModule(
        "torch.special", _pick(torch.special, ["expit", "logit", "erf", "softmax"])
    )
    return SafeModule("torch", members)


# --- numpy -----------------------------------------------------------------

NUMPY_FUNCTIONS = """
array asarray zeros ones full empty arange linspace eye zeros_like ones_like exp log sqrt sin cos
tanh abs sum mean max min maximum minimum allclose isclose array_equal shares_memory may_share_memory
float32 float64 int32 int64 bool_ ndarray round sign square add subtract multiply divide
""".split()

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
    members["random"] = SafeModule(
        "numpy.random", {"rand": np.random.rand, "randn": np.random.randn, "seed": np.random.seed}
    )
    return SafeModule("numpy", members)


# --- builtins ----------------------------------------------------------------

SAFE_BUILTIN_NAMES = """
len range abs min max sum round float int bool str list tuple dict set isinstance enumerate zip
reversed sorted any all map filter True False None repr iter next divmod hash
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

TENSOR_ATTRIBUTES = frozenset(
    """
shape dtype device requires_grad is_leaf grad grad_fn data T mT H ndim is_cuda retains_grad
_version names layout is_sparse itemsize nbytes real imag
size dim numel element_size item tolist numpy detach detach_ clone contiguous is_contiguous
requires_grad_ retain_grad backward register_hook zero_ fill_ copy_ to cpu cuda float double half
long int bool type_as view view_as reshape reshape_as expand expand_as flatten squeeze unsqueeze
squeeze_ unsqueeze_ transpose transpose_ permute t t_ narrow select unbind chunk split repeat flip
type
abs abs_ neg neg_ exp exp_ log log_ log2 log10 log1p sqrt sqrt_ rsqrt sin sin_ cos cos_ tan tanh
tanh_ sigmoid sigmoid_ relu relu_ pow pow_ square clamp clamp_ clip clamp_min clamp_max reciprocal
sign floor ceil round trunc frac erf lerp maximum minimum softmax log_softmax
add add_ sub sub_ mul mul_ div div_ true_divide matmul mm bmm mv dot outer addmm
sum mean prod std var max min amax amin argmax argmin cumsum cumprod norm logsumexp all any
eq ne lt le gt ge equal allclose isclose where masked_fill masked_fill_ masked_select index_select
gather scatter scatter_ index_add_ index_fill_ nonzero topk sort argsort unique tril triu diag
diagonal trace is_floating_point is_set_to data_ptr storage_offset stride
new_zeros new_ones new_full new_tensor new_empty zero_ uniform_ normal_ bernoulli_ random_
fill_diagonal_ count_nonzero isnan isinf isfinite nan_to_num
""".split()
)

# Methods that take a callable, or reach memory behind a tensor's back.
TENSOR_CALLBACK_METHODS = frozenset({"register_hook"})

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
""".split()
)
# (the hook methods and apply take callables: Interpreter._host_value lets only the
# script's own functions, and modules, through)

OPTIMIZER_ATTRIBUTES = frozenset({"step", "zero_grad", "param_groups"})
DATALOADER_ATTRIBUTES = frozenset({"dataset", "batch_size", "drop_last"})
SCHEDULER_ATTRIBUTES = frozenset({"step", "get_last_lr", "last_epoch"})
TENSOR_DATASET_ATTRIBUTES = frozenset({"tensors"})
#: what a DataLoader may be given: single-process loading, the script's own collate_fn
DATALOADER_KEYWORDS = frozenset({"dataset", "batch_size", "shuffle", "drop_last", "collate_fn",
                                 "num_workers"})

DEVICE_ATTRIBUTES = frozenset({"type", "index"})
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
LIST_METHODS = frozenset("append extend pop index count insert reverse copy clear remove".split())
DICT_METHODS = frozenset("items keys values get update pop copy clear setdefault".split())
TUPLE_METHODS = frozenset({"index", "count"})
SET_METHODS = frozenset("add discard remove union intersection difference copy".split())
NUMBER_ATTRIBUTES = frozenset({"real", "imag", "is_integer", "conjugate"})
SIZE_METHODS = frozenset({"numel", "index", "count"})
