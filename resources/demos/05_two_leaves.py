# title: Two leaves
# about: With a tensor exponent, x ** q becomes PowBackward1, which sends gradients to both x and q.
import torch

q = torch.tensor(3.0, requires_grad=True)
x = torch.tensor(5.0, requires_grad=True)
#> PowBackward1 (tensor exponent), not PowBackward0: it has two inputs.
y = x ** q
z = torch.log(y)
#> q.grad = 0.008 * 125 * ln 5 = 1.6094; x.grad = 0.6.
z.backward()
print("q.grad =", q.grad, " x.grad =", x.grad)
