"""The derived torch API: pinned to the reviewed list, and never holding a denied name."""

from __future__ import annotations

import pytest
import torch

from gradviz.core import namespaces as ns
from gradviz.core import surface, surface_pinned
from gradviz.core.errors import SandboxError
from gradviz.core.sandbox import SAFE_MODULE_PATHS, Interpreter, jit_module


def _installed() -> str:
    return torch.__version__.split("+")[0]


def test_pinned_list_matches_what_the_installed_torch_derives():
    """Fails when a torch release brings (or drops) names nobody reviewed: review the
    new names against the denylist, then run `python -m gradviz.core.surface --write`."""
    derived = surface.derive()
    unreviewed = {
        namespace: sorted(set(names) - set(surface_pinned.ALLOWED.get(namespace, ())))
        for namespace, names in derived.items()
    }
    gone = {
        namespace: sorted(set(surface_pinned.ALLOWED.get(namespace, ())) - set(names))
        for namespace, names in derived.items()
    }
    assert not any(unreviewed.values()), (
        f"torch {_installed()} derives names the reviewed list (torch "
        f"{surface_pinned.TORCH_VERSION}) lacks: {({k: v for k, v in unreviewed.items() if v})}"
    )
    assert not any(gone.values()), f"pinned names this torch lacks: {gone}"
    assert set(surface_pinned.ALLOWED) == set(derived)


def test_pinned_file_is_what_the_generator_writes():
    path = surface_pinned.__file__
    with open(path, encoding="utf-8") as f:
        assert f.read() == surface.render_pinned(), "regenerate with --write and review the diff"


def test_no_allowed_name_is_denied_and_every_denial_says_why():
    for namespace, names in surface_pinned.ALLOWED.items():
        for name in names:
            assert surface.denial_reason(name, namespace) is None, (namespace, name)
            assert not name.startswith("_")
    for key, why in {**surface.DENIED, **surface.DENIED_PREFIXES}.items():
        assert why and why[0].islower(), key


def test_files_processes_and_raw_memory_stay_out():
    interp = Interpreter()
    torch_ns = interp.torch_ns.members
    for name in ("load", "save", "from_file", "frombuffer", "asarray", "hub", "jit", "compile",
                 "ops", "library", "package", "multiprocessing", "distributed", "_C", "fx",
                 "export", "set_num_threads", "set_printoptions", "as_strided",
                 "sparse_coo_tensor", "set_default_tensor_type", "set_rng_state"):
        assert name not in torch_ns, name
    for name in ("untyped_storage", "storage", "set_", "share_memory_", "pin_memory",
                 "as_strided", "apply_", "map_", "resize_", "new", "__reduce_ex__"):
        assert name not in ns.TENSOR_ATTRIBUTES, name
    # torch.jit is importable only as gradviz's stub (sandbox.jit_module): eager-mode
    # queries, and script/trace that refuse when called; never torch's own module
    assert not any(m.split(".")[1:2] in (["hub"], ["_C"]) for m in SAFE_MODULE_PATHS)
    assert [m for m in SAFE_MODULE_PATHS if m.split(".")[1:2] == ["jit"]] == ["torch.jit"]
    stub = jit_module()
    assert set(stub.members) == {"script", "trace", "trace_module", "script_if_tracing",
                                 "is_scripting", "is_tracing"}
    for name in ("script", "trace", "trace_module", "script_if_tracing"):
        with pytest.raises(SandboxError, match="refused"):
            stub.members[name](lambda t: t)


def test_the_names_real_code_uses_are_available():
    """Issue 8's list of names real code reached for and gradviz refused."""
    interp = Interpreter()
    torch_ns = interp.torch_ns
    nn = torch_ns.members["nn"]

    def member(path: str):
        obj = torch_ns
        for part in path.split("."):
            obj = obj.members[part]
        return obj

    for path in ("unbind", "roll", "repeat_interleave", "scatter_add", "index_add", "median",
                 "kthvalue", "cummax", "take_along_dim", "complex", "view_as_real",
                 "set_default_device", "linalg.svd", "linalg.solve", "fft.fft", "fft.rfft",
                 "nn.functional.kl_div", "nn.functional.scaled_dot_product_attention",
                 "nn.functional.interpolate", "nn.functional.adaptive_avg_pool2d",
                 "nn.functional.conv_transpose2d", "nn.LSTMCell", "utils.data.DataLoader",
                 "utils.data.Dataset", "optim.lr_scheduler.OneCycleLR",
                 "nn.utils.clip_grad_norm_", "nn.utils.rnn.pack_padded_sequence",
                 "autograd.gradcheck", "autograd.functional.jacobian",
                 "autograd.functional.hessian", "func.grad", "func.vmap", "func.jacrev",
                 "utils.checkpoint.checkpoint", "autograd.graph.saved_tensors_hooks",
                 "distributions.Normal", "distributions.kl_divergence", "special.xlogy"):
        assert member(path) is not None, path
    for name in ("roll", "repeat_interleave", "scatter_add", "index_add", "median", "kthvalue",
                 "cummax", "register_post_accumulate_grad_hook", "unbind"):
        assert name in ns.TENSOR_ATTRIBUTES, name
    for name in ("apply", "state_dict", "load_state_dict", "register_forward_hook",
                 "register_full_backward_hook"):
        assert name in ns.MODULE_ATTRIBUTES, name
    assert nn.name == "torch.nn"


def test_every_allowed_torch_callable_is_vetted_as_allowed():
    """What the namespaces hold is what the interpreter lets a script call."""
    interp = Interpreter()
    for name in surface.allowed("torch"):
        value = interp.torch_ns.members[name]
        if callable(value):
            interp._vet_callable(value)
