# tutorial: beginner_source/blitz/autograd_tutorial.py
# ruff: noqa  (tutorial code, kept in the tutorial's own style)
# Autograd basics: grad_fn, backward of a scalar, vector-Jacobian products, no_grad.
import torch

torch.manual_seed(0)

x = torch.ones(2, 2, requires_grad=True)
print(x)

y = x + 2
print(y)
print(y.grad_fn)

z = y * y * 3
out = z.mean()
print(z, out)

# requires_grad_ flips the flag in place
a = torch.randn(2, 2)
a = ((a * 3) / (a - 1))
print(a.requires_grad)
a.requires_grad_(True)
print(a.requires_grad)
b = (a * a).sum()
print(b.grad_fn)

# out is a scalar, so backward() needs no argument; d(out)/dx is 4.5 everywhere
out.backward()
print(x.grad)

# a data-dependent loop: keep doubling until the norm passes 1000
x = torch.randn(3, requires_grad=True)
y = x * 2
while y.data.norm() < 1000:
    y = y * 2
print(y)

# y is not a scalar: hand backward the vector v of v^T J
gradients = torch.tensor([0.1, 1.0, 0.0001], dtype=torch.float)
y.backward(gradients)
print(x.grad)

print(x.requires_grad)
print((x ** 2).requires_grad)

with torch.no_grad():
    print((x ** 2).requires_grad)
