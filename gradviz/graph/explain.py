"""One plain sentence on the cause of the well-known autograd errors.

PyTorch's own message is always shown; these sentences sit beside it for a
learner who does not yet know what "saved intermediate values" means.
"""

from __future__ import annotations

import re

from gradviz.i18n import QT_TRANSLATE_NOOP

#: (pattern, sentence): the sentence in English, the key the window and the CLI translate
#: it by (context ``Explain``); the kernel and ``--json`` always carry the English
_EXPLANATIONS: list[tuple[re.Pattern[str], str]] = [
    (
        re.compile(r"backward through the graph a second time|saved tensors after they have already been freed"),
        QT_TRANSLATE_NOOP(
            "Explain",
            "An earlier backward() without retain_graph=True freed the values this graph saved "
            "for computing gradients; pass retain_graph=True to every backward() but the last "
            "one to walk it again.",
        ),
    ),
    # the view-of-a-leaf message contains the leaf message: it must come first
    (
        re.compile(r"a view of a leaf Variable that requires grad is being used in an in-place"),
        QT_TRANSLATE_NOOP(
            "Explain",
            "Writing into a view of a leaf that requires grad would corrupt the leaf's gradient; "
            "do it inside torch.no_grad().",
        ),
    ),
    (
        re.compile(r"leaf Variable that requires grad is being used in an in-place operation"),
        QT_TRANSLATE_NOOP(
            "Explain",
            "Changing a leaf that requires grad in place would corrupt the gradient PyTorch must "
            "compute for it; change it inside torch.no_grad() or change a clone instead.",
        ),
    ),
    (
        re.compile(r"modified by an inplace operation"),
        QT_TRANSLATE_NOOP(
            "Explain",
            "An in-place operation changed a tensor after an operation saved it for backward "
            "(its version counter moved on), so the saved value is stale; use the out-of-place "
            "version (b = b * 2 instead of b.mul_(2)).",
        ),
    ),
    (
        re.compile(r"Expected all tensors to be on the same device"),
        QT_TRANSLATE_NOOP(
            "Explain",
            "An operation mixed tensors on two devices; move them to one device with .to(dev) first.",
        ),
    ),
    (
        re.compile(r"Can't call numpy\(\) on Tensor that requires grad"),
        QT_TRANSLATE_NOOP(
            "Explain",
            "NumPy cannot track gradients, so PyTorch refuses to hand over a tensor that is part of "
            "a graph; call .detach() first (and .to('cpu') for a cuda tensor).",
        ),
    ),
    (
        re.compile(r"can't convert cuda.*to numpy|Use Tensor.cpu\(\) to copy the tensor to host"),
        QT_TRANSLATE_NOOP(
            "Explain",
            "NumPy arrays live in CPU memory; copy the tensor to the cpu with .to('cpu') first.",
        ),
    ),
    (
        re.compile(r"does not require grad and does not have a grad_fn"),
        QT_TRANSLATE_NOOP(
            "Explain",
            "This tensor was not built from anything that requires grad (or was built under "
            "no_grad), so there is no graph to run backward through.",
        ),
    ),
    (
        re.compile(r"grad can be implicitly created only for scalar outputs"),
        QT_TRANSLATE_NOOP(
            "Explain",
            "backward() with no argument needs a single number; reduce the tensor first "
            "(for example .sum() or .mean()) or pass a gradient of the same shape.",
        ),
    ),
    (
        re.compile(
            r"size of tensor a \(\d+\) must match|shapes cannot be multiplied|mat1 and mat2 shapes"
            r"|must match the size|The size of tensor|inconsistent tensor size|size mismatch"
            r"|is invalid for input of size|Expected size"
        ),
        QT_TRANSLATE_NOOP(
            "Explain",
            "The shapes of the operands do not fit this operation; check them with .shape.",
        ),
    ),
    (
        re.compile(r"Inference tensors cannot be saved for backward"),
        QT_TRANSLATE_NOOP(
            "Explain",
            "Tensors made under inference_mode can never join an autograd graph; make them "
            "outside inference_mode, or clone them first.",
        ),
    ),
    (
        re.compile(r"One of the differentiated Tensors appears to not have been used in the graph"),
        QT_TRANSLATE_NOOP(
            "Explain",
            "autograd.grad was asked for the gradient of a tensor the output does not depend on.",
        ),
    ),
    (
        re.compile(
            r"only Tensors of floating point and complex dtype can require gradients",
            re.IGNORECASE,
        ),
        QT_TRANSLATE_NOOP(
            "Explain",
            "Gradients need real-valued (floating point) numbers; create the tensor with a float "
            "dtype, for example torch.tensor([1., 2.]).",
        ),
    ),
    (
        re.compile(r"CUDA is not available|Torch not compiled with CUDA enabled|no CUDA GPUs"),
        QT_TRANSLATE_NOOP(
            "Explain",
            "This machine has no CUDA device, so tensors can only live on the cpu here.",
        ),
    ),
    (
        re.compile(r"can't allocate memory|out of memory|Cannot allocate memory", re.IGNORECASE),
        QT_TRANSLATE_NOOP(
            "Explain",
            "The kernel hit its memory limit (60% of this machine's memory by default), so "
            "gradviz refused the allocation; use smaller tensors or fewer of them.",
        ),
    ),
]


def explain(message: str) -> str | None:
    """Return a one-sentence explanation for a known autograd error, else None."""
    for pattern, sentence in _EXPLANATIONS:
        if pattern.search(message):
            return sentence
    return None
