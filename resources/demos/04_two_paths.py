# title: Two paths into one leaf (a stem)
# about: x reaches z along two paths; autograd sums both contributions into x.grad: 0.008*75 + 0.1*10 = 1.6.
import torch

x = torch.tensor(5.0, requires_grad=True)
y = x ** 3
w = x ** 2
#> AddBackward0 at the root joins the two paths.
z = torch.log(y) + torch.sqrt(w)
y.retain_grad(); w.retain_grad(); z.retain_grad()
#> Step the backward pass: both PowBackward0 nodes send a gradient into x's AccumulateGrad.
z.backward()
print("z.grad =", z.grad, " y.grad =", y.grad, " w.grad =", w.grad)
print("x.grad =", x.grad, "=", 1 * y.grad * 75 + 1 * w.grad * 10)
