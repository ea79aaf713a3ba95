# title: requires_grad, retain_grad and a first backward
# about: z = mean((w**3) + 3): step forward to grow the graph, then backward to send dz/dw = 3w**2/4 into w.grad.
import torch

w = torch.tensor([[1., 2.], [3., 2.]], requires_grad=True)
#> PowBackward0 appears: it saved w to compute 3*w**2 later.
x = w ** 3
y = x + 3
z = y.mean()
#> x is not a leaf: without retain_grad its .grad is None and PyTorch warns.
x.grad
x.retain_grad(); y.retain_grad()
#> Watch the gradient flow: MeanBackward0 -> AddBackward0 -> PowBackward0 -> AccumulateGrad -> w.
z.backward()
print("y.grad =", y.grad)
print("x.grad =", x.grad)
print("w.grad =", w.grad)
#> The same lines under no_grad: no grad_fn, no graph.
with torch.no_grad():
    xn = w ** 3
    yn = xn + 3
    zn = yn.mean()
print("zn =", zn, "grad_fn =", zn.grad_fn)
#> Nothing to backward through: PyTorch refuses.
zn.backward()
