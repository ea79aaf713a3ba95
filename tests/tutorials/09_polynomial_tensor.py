# tutorial: beginner_source/examples_tensor/polynomial_tensor.py
# ruff: noqa  (tutorial code, kept in the tutorial's own style)
# The same cubic fit with torch tensors, still no autograd: gradients by hand.
import math
import torch

torch.manual_seed(0)

dtype = torch.float
device = torch.device("cpu")

x = torch.linspace(-math.pi, math.pi, 2000, device=device, dtype=dtype)
y = torch.sin(x)

a = torch.randn((), device=device, dtype=dtype)
b = torch.randn((), device=device, dtype=dtype)
c = torch.randn((), device=device, dtype=dtype)
d = torch.randn((), device=device, dtype=dtype)

learning_rate = 1e-6
for t in range(20):
    y_pred = a + (b * x) + (c * x.pow(2)) + (d * x.pow(3))

    loss = (y_pred - y).pow(2).sum().item()
    if t % 5 == 4:
        print(t, loss)

    # gradients of the loss with respect to a, b, c, d
    grad_y_pred = -2.0 * (y - y_pred)
    grad_a = grad_y_pred.sum()
    grad_b = torch.matmul(input=grad_y_pred, other=x).sum()
    grad_c = torch.matmul(input=grad_y_pred, other=x.pow(2)).sum()
    grad_d = torch.matmul(input=grad_y_pred, other=x.pow(3)).sum()

    a -= learning_rate * grad_a
    b -= learning_rate * grad_b
    c -= learning_rate * grad_c
    d -= learning_rate * grad_d

print(f'Result: y = {a.item()} + {b.item()} x + {c.item()} x^2 + {d.item()} x^3')
