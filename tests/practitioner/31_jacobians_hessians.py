# source: pytorch/tutorials/intermediate_source/jacobians_hessians.py
#         (https://github.com/pytorch/tutorials/blob/main/intermediate_source/jacobians_hessians.py)
# shrunk: the torch.utils.benchmark Timer comparisons are dropped; sizes Dout 2048 -> 64,
#         Din 2048 -> 64, hessian Din 512 -> 24, batch_size 64 -> 4, hvp vectors 2048 -> 32.
# ruff: noqa
import torch
import torch.nn.functional as F
from functools import partial
_ = torch.manual_seed(0)

# Let's start with a function that we'd like to compute the jacobian of.
# This is a simple linear function with non-linear activation.

def predict(weight, bias, x):
    return F.linear(x, weight, bias).tanh()

# Let's add some dummy data: a weight, a bias, and a feature vector x.

D = 16
weight = torch.randn(D, D)
bias = torch.randn(D)
x = torch.randn(D)  # feature vector

# PyTorch Autograd computes vector-Jacobian products. In order to compute the full
# Jacobian of this R^D -> R^D function, we would have to compute it row-by-row
# by using a different unit vector each time.

def compute_jac(xp):
    jacobian_rows = [torch.autograd.grad(predict(weight, bias, xp), xp, vec)[0]
                     for vec in unit_vectors]
    return torch.stack(jacobian_rows)

xp = x.clone().requires_grad_()
unit_vectors = torch.eye(D)

jacobian = compute_jac(xp)

print(jacobian.shape)
print(jacobian[0])  # show first row

from torch.func import vmap, vjp

_, vjp_fn = vjp(partial(predict, weight, bias), x)

ft_jacobian, = vmap(vjp_fn)(unit_vectors)

# let's confirm both methods compute the same result
assert torch.allclose(ft_jacobian, jacobian)

from torch.func import jacrev

ft_jacobian = jacrev(predict, argnums=2)(weight, bias, x)

# confirm
assert torch.allclose(ft_jacobian, jacobian)

# note the change in input via argnums params of 0,1 to map to weight and bias
ft_jac_weight, ft_jac_bias = jacrev(predict, argnums=(0, 1))(weight, bias, x)

# reverse-mode Jacobian (jacrev) vs forward-mode Jacobian (jacfwd)
from torch.func import jacrev, jacfwd

Din = 32
Dout = 64
weight = torch.randn(Dout, Din)

bias = torch.randn(Dout)
x = torch.randn(Din)

# remember the general rule about taller vs wider... here we have a taller matrix:
print(weight.shape)

jac_fwd = jacfwd(predict, argnums=2)(weight, bias, x)
jac_rev = jacrev(predict, argnums=2)(weight, bias, x)
assert torch.allclose(jac_fwd, jac_rev, atol=1e-6)

# and now the reverse - more outputs (M) than inputs (N):

Din = 64
Dout = 32
weight = torch.randn(Dout, Din)
bias = torch.randn(Dout)
x = torch.randn(Din)

jac_fwd = jacfwd(predict, argnums=2)(weight, bias, x)
jac_rev = jacrev(predict, argnums=2)(weight, bias, x)

# Hessian computation with functorch.hessian
from torch.func import hessian

# lets reduce the size in order not to blow out colab. Hessians require
# significant memory:
Din = 24
Dout = 32
weight = torch.randn(Dout, Din)
bias = torch.randn(Dout)
x = torch.randn(Din)

hess_api = hessian(predict, argnums=2)(weight, bias, x)
hess_fwdfwd = jacfwd(jacfwd(predict, argnums=2), argnums=2)(weight, bias, x)
hess_revrev = jacrev(jacrev(predict, argnums=2), argnums=2)(weight, bias, x)

# Let's verify we have the same result regardless of using hessian api or
# using jacfwd(jacfwd())

torch.allclose(hess_api, hess_fwdfwd)

# Batch Jacobian and Batch Hessian
batch_size = 4
Din = 31
Dout = 33

weight = torch.randn(Dout, Din)
print(f"weight shape = {weight.shape}")

bias = torch.randn(Dout)

x = torch.randn(batch_size, Din)

compute_batch_jacobian = vmap(jacrev(predict, argnums=2), in_dims=(None, None, 0))
batch_jacobian0 = compute_batch_jacobian(weight, bias, x)

def predict_with_output_summed(weight, bias, x):
    return predict(weight, bias, x).sum(0)

batch_jacobian1 = jacrev(predict_with_output_summed, argnums=2)(weight, bias, x).movedim(1, 0)
assert torch.allclose(batch_jacobian0, batch_jacobian1)

compute_batch_hessian = vmap(hessian(predict, argnums=2), in_dims=(None, None, 0))

batch_hess = compute_batch_hessian(weight, bias, x)
batch_hess.shape

# Computing Hessian-vector products
from torch.func import jvp, grad, vjp

def hvp(f, primals, tangents):
  return jvp(grad(f), primals, tangents)[1]

# Here's some sample usage.

def f(x):
  return x.sin().sum()

x = torch.randn(32)
tangent = torch.randn(32)

result = hvp(f, (x,), (tangent,))

# If PyTorch forward-AD does not have coverage for your operations, then we can
# instead compose reverse-mode AD with reverse-mode AD:

def hvp_revrev(f, primals, tangents):
  _, vjp_fn = vjp(grad(f), *primals)
  return vjp_fn(*tangents)

result_hvp_revrev = hvp_revrev(f, (x,), (tangent,))
assert torch.allclose(result, result_hvp_revrev[0])
