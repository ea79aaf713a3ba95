# title: Shared storage: views, detach, numpy
# about: Some operations share memory with their input (views, detach, from_numpy); clone copies.
import torch
import numpy as np

a = np.ones(4)
#> from_numpy shares a's memory: changing b changes a.
b = torch.from_numpy(a)
b.add_(1)
print("a =", a)
x = torch.tensor([1., 2., 3., 4.])
y = torch.zeros(4)
y_before = y
#> y + x makes a new tensor: y_before keeps the old one.
y = y + x
#> These write into y's memory (y_before stays apart from the new y).
y[:] = y + x
y += x
y.add_(x)
torch.add(x, y, out=y)
#> view, [:], detach and numpy share x's storage (same storage group); clone does not.
v = x.view(2, 2)
s = x[:]
d = x.detach()
n = x.numpy()
c = x.clone()
#> index_select, masked_select and gather return copies.
i = torch.index_select(x, 0, torch.tensor([0, 1]))
A = torch.tensor([1., 2.], requires_grad=True)
B = A.detach()
#> B shares A's memory: writing B[0] visibly changes A.
B[0] = 3
print("A =", A)
