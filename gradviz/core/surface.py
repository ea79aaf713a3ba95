"""The torch API a script may call, derived from PyTorch's own registries.

PyTorch has ~2,000 public operators; listing them by hand always misses the one
a tutorial uses. So the allowed names are *derived*: the native operators the
dispatcher exposes as ``torch.*`` (``torch._C._VariableFunctions``) and as
``Tensor`` methods, the Python-level ``torch.functional``,
``torch.nn.functional``, the ``nn`` module classes, ``linalg``, ``fft``,
``special``, ``distributions``, ``autograd.functional``, the ``func``
transforms, ``utils.checkpoint``, optimizers and schedulers, minus the short,
reviewed denylist below: what reaches files, processes, native libraries, raw
memory or interpreter state.

The derived list is pinned, per namespace, in :mod:`gradviz.core.surface_pinned`
for the torch version it was reviewed against. At run time a script sees only
names that are both pinned and present in the installed torch, so a new torch
release exposes nothing nobody reviewed; ``tests/test_surface.py`` fails when the
derivation and the pinned file disagree, and ``python -m gradviz.core.surface
--write`` regenerates the file for review (its diff is the review).

Every native op a script reaches runs under the op guard (a
``TorchDispatchMode`` in :mod:`gradviz.core.guards`), which sizes its output and
work before it runs; callables handed to torch must be the script's own
functions (:meth:`Interpreter._host_value`).
"""

from __future__ import annotations

import inspect
import sys
import types
from collections.abc import Callable
from typing import Any

import torch

# --- the denylist ------------------------------------------------------------
# name -> why. Checked against every namespace's derived names.

DENIED: dict[str, str] = {
    # files, processes, the network
    "load": "it reads files (pickle can run code)",
    "save": "it writes files",
    "from_file": "it maps a file into memory",
    "hub": "it downloads and runs code",
    "package": "it reads and writes archives of code",
    "multiprocessing": "it starts processes",
    "distributed": "it opens network connections",
    # compilers, native code, interpreter internals
    "compile": "it generates and loads native code",
    "jit": "it compiles and loads native code",
    "export": "it traces code into files",
    "fx": "it rewrites Python code",
    "ops": "it reaches every registered native kernel without argument checks",
    "library": "it registers native kernels",
    "classes": "it reaches TorchScript classes",
    "torch.cond": "it is a tracing higher-order op",
    "torch.while_loop": "it is a tracing higher-order op",
    "functionalize": "it traces code",
    "linearize": "it traces code",
    "debug_unwrap": "it reaches functorch internals",
    "rearrange": "it parses einops strings through a native extension",
    # raw memory and pointers
    "frombuffer": "it views memory the script does not own",
    "asarray": "it views memory the script does not own (write torch.tensor(...))",
    "from_dlpack": "it views memory from a raw capsule",
    "to_dlpack": "it exports a raw memory capsule",
    "storage": "storages are raw memory",
    "untyped_storage": "storages are raw memory",
    "storage_type": "storages are raw memory",
    "set_": "it points a tensor at any storage and offset",
    "as_strided": "it views memory through arbitrary strides (write view, expand or unfold)",
    "as_strided_": "it views memory through arbitrary strides",
    "as_strided_copy": "it reads memory through arbitrary strides",
    "as_strided_scatter": "it writes memory through arbitrary strides",
    "share_memory_": "it moves memory into files shared with other processes",
    "is_shared": "shared memory is not available",
    "pin_memory": "pinned memory is a driver resource",
    "is_pinned": "pinned memory is a driver resource",
    "record_stream": "it ties memory to CUDA streams, which are not available",
    "as_subclass": "it changes a tensor's class",
    "const_data_ptr": "it reads a raw pointer",
    "empty_quantized": "quantized tensors are not available",
    "fused_moving_avg_obs_fake_quant": "quantized tensors are not available",
    "dsmm": "it is for sparse tensors, which are not available",
    "hsmm": "it is for sparse tensors, which are not available",
    "spmm": "it is for sparse tensors, which are not available",
    "lstm": "it takes raw weight lists (write nn.LSTM)",
    "gru": "it takes raw weight lists (write nn.GRU)",
    "rnn_relu": "it takes raw weight lists (write nn.RNN)",
    "rnn_tanh": "it takes raw weight lists (write nn.RNN)",
    "lstm_cell": "it takes raw weights without checks (write nn.LSTMCell)",
    "gru_cell": "it takes raw weights without checks (write nn.GRUCell)",
    "rnn_relu_cell": "it takes raw weights without checks (write nn.RNNCell)",
    "rnn_tanh_cell": "it takes raw weights without checks (write nn.RNNCell)",
    "SyncBatchNorm": "it needs distributed processes (write nn.BatchNorm1d/2d/3d)",
    "scaled_mm": "it is an fp8 GPU kernel entry point",
    "scaled_grouped_mm": "it is an fp8 GPU kernel entry point",
    "grouped_mm": "it is a GPU kernel entry point",
    "index": "it builds first-class dimensions through functorch internals (write x[...])",
    "new": "the legacy constructor accepts storages (write new_tensor, new_zeros, ...)",
    "module_load": "it swaps a module's tensors without checks",
    # Python callables run per element, outside the interpreter
    "apply_": "it calls a Python function per element",
    "map_": "it calls a Python function per element",
    "map2_": "it calls a Python function per element",
    # process-wide state that would outlive the script
    "set_default_tensor_type": "it changes process-wide defaults",
    "set_num_threads": "it changes process-wide settings",
    "set_num_interop_threads": "it changes process-wide settings",
    "set_flush_denormal": "it changes process-wide settings",
    "set_printoptions": "it changes process-wide settings",
    "set_warn_always": "it changes process-wide settings",
    "use_deterministic_algorithms": "it changes process-wide settings",
    "set_deterministic_debug_mode": "it changes process-wide settings",
    "set_float32_matmul_precision": "it changes process-wide settings",
    "set_rng_state": "it loads generator state from raw bytes (write torch.manual_seed(n))",
    "set_default_validate_args": "it changes process-wide settings",
    "replace_all_batch_norm_modules_": "it rewrites modules in place without checks",
    "swap_in_optimizer_params_and_state": "it swaps optimizer internals",
    "register_kl": "it registers functions process-wide",
    # kept out of the derived surface: gradviz.core.namespaces adds it by name, with
    # the transform classes it may take (their objects are vetted there)
    "TransformedDistribution": "it takes transform objects (gradviz lists the ones it allows)",
    # TorchScript-era helpers of torch.nn.functional
    "handle_torch_function": "it dispatches to __torch_function__ overrides",
    "has_torch_function": "it inspects __torch_function__ overrides",
    "has_torch_function_unary": "it inspects __torch_function__ overrides",
    "has_torch_function_variadic": "it inspects __torch_function__ overrides",
    "boolean_dispatch": "it builds dispatching functions",
    "assert_int_or_pair": "it is an internal helper",
    # sparse-only accessors on dense tensors
    "indices": "it is for sparse tensors, which are not available",
    "values": "it is for sparse tensors, which are not available",
    "coalesce": "it is for sparse tensors, which are not available",
    "is_coalesced": "it is for sparse tensors, which are not available",
    "dense_dim": "it is for sparse tensors, which are not available",
    "sparse_dim": "it is for sparse tensors, which are not available",
    "smm": "it is for sparse tensors, which are not available",
    "sspaddmm": "it is for sparse tensors, which are not available",
    "hspmm": "it is for sparse tensors, which are not available",
    "saddmm": "it is for sparse tensors, which are not available",
    "to_padded_tensor": "nested tensors are not available",
    "int_repr": "quantized tensors are not available",
    "dequantize": "quantized tensors are not available",
    "qscheme": "quantized tensors are not available",
    "segment_reduce": "it trusts its lengths argument",
    "choose_qparams_optimized": "quantized tensors are not available",
}

#: prefixes of backend-specific or unchecked entry points: name prefix -> why
DENIED_PREFIXES: dict[str, str] = {
    "_": "private names reach PyTorch internals",
    "fbgemm_": "it calls a native backend directly, without argument checks",
    "mkldnn_": "it calls a native backend directly, without argument checks",
    "to_mkldnn": "it calls a native backend directly, without argument checks",
    "miopen_": "it calls a native backend directly, without argument checks",
    "cudnn_": "it calls a native backend directly, without argument checks",
    "quantize": "quantized tensors are not available",
    "quantized_": "quantized tensors are not available",
    "fake_quantize": "quantized tensors are not available",
    "q_": "quantized tensors are not available",
    "sparse": "sparse tensors are built without invariant checks",
    "to_sparse": "sparse tensors are not available",
    "nested": "nested tensors are not available",
    "resize": "it reallocates a tensor's storage behind its views",
    "unsafe_": "it skips autograd's checks (write chunk or split)",
    "sym_": "it is a symbolic-shape internal",
    "ccol_indices": "it is for sparse tensors, which are not available",
    "col_indices": "it is for sparse tensors, which are not available",
    "crow_indices": "it is for sparse tensors, which are not available",
    "row_indices": "it is for sparse tensors, which are not available",
    "indices_copy": "it is for sparse tensors, which are not available",
    "values_copy": "it is for sparse tensors, which are not available",
    "native_": "it is an internal entry point without its wrapper's size checks (write the "
    "function without native_, e.g. torch.batch_norm or F.layer_norm)",
    "grid_sampler": "it trusts its mode arguments (write F.grid_sample)",
    "batch_norm_": "it is a CUDA kernel entry point (write F.batch_norm)",
    "native_channel_shuffle": "it calls a native kernel directly",
    "set_autocast": "it changes process-wide settings",
    "is_autocast": "autocast is not available",
    "get_autocast": "autocast is not available",
    "clear_autocast": "autocast is not available",
}

def denial_reason(name: str, namespace: str = "") -> str | None:
    """Why ``namespace.name`` is refused, or None when it is not on the denylist.

    A key of DENIED is a bare name (refused in every namespace) or a qualified one.
    """
    reason = DENIED.get(f"{namespace}.{name}") or DENIED.get(name)
    if reason:
        return reason
    for prefix, why in DENIED_PREFIXES.items():
        if name.startswith(prefix):
            return why
    return None


# --- derivation ----------------------------------------------------------------


def _public(names: Any) -> list[str]:
    return sorted({n for n in names if not n.startswith("_")})


def _functions(module: Any, names: Any = None) -> list[str]:
    """Public functions of a module (Python or native), not re-exported types or modules."""
    out = []
    for name in _public(names if names is not None else dir(module)):
        obj = getattr(module, name, None)
        if isinstance(obj, (types.FunctionType, types.BuiltinFunctionType)):
            out.append(name)
    return out


def _classes(module: Any, names: Any, base: type) -> list[str]:
    out = []
    for name in _public(names):
        obj = getattr(module, name, None)
        if isinstance(obj, type) and issubclass(obj, base):
            out.append(name)
    return out


#: torch-level Python functions that are not native ops but belong to the tensor
#: API a lesson uses (grad mode, seeding, dtype queries, vmap). The defaults a
#: script sets (device, dtype) are its own: the session keeps them per script and
#: restores the process's around every statement, like grad mode.
TORCH_PYTHON_FUNCTIONS = """
is_tensor is_floating_point is_complex is_nonzero numel typename manual_seed seed initial_seed
get_rng_state get_default_dtype get_default_device is_grad_enabled is_inference_mode_enabled
no_grad enable_grad inference_mode set_grad_enabled vmap set_default_device set_default_dtype
""".split()

#: torch.nn.utils: gradient clipping, parameter vectors, and padding of sequences
NN_UTILS = "clip_grad_norm_ clip_grad_value_ parameters_to_vector vector_to_parameters".split()
NN_UTILS_RNN = """
pad_sequence pack_padded_sequence pad_packed_sequence pack_sequence unpad_sequence unpack_sequence
PackedSequence
""".split()

AUTOGRAD_FUNCTIONAL = "jacobian hessian vjp jvp hvp vhp".split()
FUNC_TRANSFORMS = """
grad grad_and_value vmap jacrev jacfwd hessian vjp jvp functional_call stack_module_state
""".split()
CHECKPOINT = ["checkpoint", "checkpoint_sequential"]


def _tensor_names() -> list[str]:
    """Public methods and properties of torch.Tensor (native and Python-level)."""
    return _public(dir(torch.Tensor))


def _torch_names() -> list[str]:
    import torch.functional as tf

    native = [n for n in _public(dir(torch._C._VariableFunctions)) if hasattr(torch, n)]
    return sorted(set(native) | set(tf.__all__) | set(TORCH_PYTHON_FUNCTIONS))


def _nn_names() -> list[str]:
    names = _classes(torch.nn, torch.nn.modules.__all__, torch.nn.Module)
    extra = ["Module", "Parameter", "Buffer", "ParameterList", "ParameterDict"]
    return sorted(set(names) | {n for n in extra if hasattr(torch.nn, n)})


def _distribution_names() -> list[str]:
    import torch.distributions as D

    names = _classes(D, D.__all__, D.Distribution)
    return sorted(set(names) | {"kl_divergence"})


def _scheduler_names() -> list[str]:
    import torch.optim.lr_scheduler as S

    base = getattr(S, "LRScheduler", object)
    names = _classes(S, S.__all__, base)
    if hasattr(S, "ReduceLROnPlateau"):
        names.append("ReduceLROnPlateau")
    return sorted(set(names))


#: namespace -> (owner object, how to derive its names)
def _sources() -> dict[str, tuple[Any, Callable[[], list[str]]]]:
    import torch.distributions as D
    import torch.nn.functional as F  # noqa: N812
    import torch.nn.utils.rnn as rnn
    import torch.utils.checkpoint as ckpt

    return {
        "torch": (torch, _torch_names),
        "Tensor": (torch.Tensor, _tensor_names),
        "torch.nn": (torch.nn, _nn_names),
        "torch.nn.functional": (F, lambda: _functions(F)),
        "torch.nn.init": (
            torch.nn.init,
            lambda: [
                n for n in _functions(torch.nn.init)
                if getattr(getattr(torch.nn.init, n), "__module__", "") == "torch.nn.init"
            ],
        ),
        "torch.nn.utils": (torch.nn.utils, lambda: list(NN_UTILS)),
        "torch.nn.utils.rnn": (rnn, lambda: list(NN_UTILS_RNN)),
        "torch.linalg": (torch.linalg, lambda: _functions(torch.linalg)),
        "torch.fft": (torch.fft, lambda: _functions(torch.fft)),
        "torch.special": (torch.special, lambda: _functions(torch.special)),
        "torch.distributions": (D, _distribution_names),
        "torch.autograd.functional": (torch.autograd.functional, lambda: list(AUTOGRAD_FUNCTIONAL)),
        "torch.func": (torch.func, lambda: list(FUNC_TRANSFORMS)),
        "torch.utils.checkpoint": (ckpt, lambda: list(CHECKPOINT)),
        "torch.optim": (
            torch.optim,
            lambda: _classes(torch.optim, torch.optim.__all__, torch.optim.Optimizer),
        ),
        "torch.optim.lr_scheduler": (torch.optim.lr_scheduler, _scheduler_names),
    }


def _registry_names() -> dict[str, list[str]]:
    """Namespace -> every name its registry gives that the installed torch has."""
    return {
        namespace: [n for n in names() if hasattr(owner, n)]
        for namespace, (owner, names) in _sources().items()
    }


def derive(registry: dict[str, list[str]] | None = None) -> dict[str, list[str]]:
    """Namespace -> the names PyTorch's registries give it, minus the denylist."""
    registry = _registry_names() if registry is None else registry
    return {
        namespace: [n for n in names if denial_reason(n, namespace) is None]
        for namespace, names in registry.items()
    }


def denied_names(registry: dict[str, list[str]] | None = None) -> dict[str, list[str]]:
    """Namespace -> the registry names the denylist takes out (for the review file)."""
    registry = _registry_names() if registry is None else registry
    return {
        namespace: [n for n in names if denial_reason(n, namespace)]
        for namespace, names in registry.items()
    }


def allowed(namespace: str) -> list[str]:
    """The names of ``namespace`` a script may use: pinned (reviewed) and installed."""
    from gradviz.core import surface_pinned

    owner = _sources()[namespace][0]
    return [n for n in surface_pinned.ALLOWED.get(namespace, ()) if hasattr(owner, n)]


def owner_of(namespace: str) -> Any:
    return _sources()[namespace][0]


def _torch_version() -> str:
    return torch.__version__.split("+")[0]


def render_pinned() -> str:
    """The text of surface_pinned.py for the installed torch."""
    registry = _registry_names()
    derived = derive(registry)
    denied = denied_names(registry)
    lines = [
        '"""Reviewed list of the torch API scripts may use (generated; review its diff).',
        "",
        "Regenerate with ``python -m gradviz.core.surface --write`` after reviewing new",
        "names against the denylist in :mod:`gradviz.core.surface`.",
        '"""',
        "",
        f'TORCH_VERSION = "{_torch_version()}"',
        "",
        "ALLOWED: dict[str, tuple[str, ...]] = {",
    ]
    for namespace, names in derived.items():
        lines.append(f'    "{namespace}": (')
        lines.extend(f'        "{n}",' for n in names)
        lines.append("    ),")
    lines.append("}")
    lines.append("")
    lines.append("#: registry names the denylist takes out, listed so a review sees them")
    lines.append("DENIED: dict[str, tuple[str, ...]] = {")
    for namespace, names in denied.items():
        lines.append(f'    "{namespace}": (')
        lines.extend(f'        "{n}",' for n in names)
        lines.append("    ),")
    lines.append("}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    text = render_pinned()
    if "--write" in argv:
        path = inspect.getsourcefile(sys.modules[__name__])
        assert path is not None
        target = path.replace("surface.py", "surface_pinned.py")
        with open(target, "w", encoding="utf-8") as f:
            f.write(text)
        print(f"wrote {target}")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
