# tutorial: beginner_source/examples_autograd/polynomial_autograd.py
# ruff: noqa  (tutorial code, kept in the tutorial's own style)
# The cubic fit again, now with autograd computing the gradients.
# (The tutorial's current reset line `a.grad, ... = 0., ...` raises TypeError in
# PyTorch 2.13: .grad must be a tensor or None; its commented-out `= None` form is used.)
import torch
import math

torch.manual_seed(0)

dtype = torch.float
device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
print(f"Using {device} device")
torch.set_default_device(device)

x = torch.linspace(-math.pi, math.pi, 2000, dtype=dtype)
y = torch.sin(x)

# four scalar weights that autograd tracks
a = torch.randn((), dtype=dtype, requires_grad=True)
b = torch.randn((), dtype=dtype, requires_grad=True)
c = torch.randn((), dtype=dtype, requires_grad=True)
d = torch.randn((), dtype=dtype, requires_grad=True)

learning_rate = 1e-6
for t in range(20):
    y_pred = a + b * x + c * x ** 2 + d * x ** 3

    loss = (y_pred - y).pow(2).sum()
    if t % 5 == 4:
        print(t, loss.item())

    loss.backward()

    # update outside autograd, then clear the grads
    with torch.no_grad():
        a -= learning_rate * a.grad
        b -= learning_rate * b.grad
        c -= learning_rate * c.grad
        d -= learning_rate * d.grad

        a.grad = None
        b.grad = None
        c.grad = None
        d.grad = None

print(f'Result: y = {a.item()} + {b.item()} x + {c.item()} x^2 + {d.item()} x^3')
