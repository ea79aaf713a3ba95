# source: pytorch/pytorch torch/autograd/anomaly_mode.py, the detect_anomaly docstring example
#         (https://pytorch.org/docs/stable/autograd.html#torch.autograd.detect_anomaly)
# shrunk: the doctest's two runs kept in one script: first a healthy backward through a working
#         custom Function with anomaly detection on (set_detect_anomaly as a context manager), then
#         the docstring's MyFunc, whose backward raises, under detect_anomaly(); the first,
#         anomaly-free failing out.backward() of the doctest is skipped so that the script fails
#         only at its end; fixed seed.
# expected: the LAST statement (the `with autograd.detect_anomaly():` block) raises
#         RuntimeError("Some error in backward"); anomaly mode also warns with the forward traceback.
# ruff: noqa
import torch
from torch import autograd

torch.manual_seed(0)


class MyHealthyFunc(autograd.Function):
    @staticmethod
    def forward(ctx, inp):
        return inp.clone()

    @staticmethod
    def backward(ctx, gO):
        return gO.clone()


class MyFunc(autograd.Function):
    @staticmethod
    def forward(ctx, inp):
        return inp.clone()

    @staticmethod
    def backward(ctx, gO):
        # Error during the backward pass
        raise RuntimeError("Some error in backward")
        return gO.clone()


def run_fn(a, fn=MyFunc):
    out = fn.apply(a)
    return out.sum()


with autograd.set_detect_anomaly(True):
    healthy_inp = torch.rand(10, 10, requires_grad=True)
    healthy_out = run_fn(healthy_inp, MyHealthyFunc)
    healthy_out.backward()

print(healthy_inp.grad.sum())

with autograd.detect_anomaly():
    inp = torch.rand(10, 10, requires_grad=True)
    out = run_fn(inp)
    out.backward()
