# tutorial: beginner_source/blitz/tensor_tutorial.py
# ruff: noqa  (tutorial code, kept in the tutorial's own style)
# "What is PyTorch?": making tensors, a few operations, and the NumPy bridge.
import torch

torch.manual_seed(0)

# an uninitialised 5x3 matrix: its values are whatever memory held, so only
# its shape is printed
x = torch.empty(5, 3)
print(x.shape)

x = torch.rand(5, 3)
print(x)

x = torch.zeros(5, 3, dtype=torch.long)
print(x)

x = torch.tensor([5.5, 3])
print(x)

# new_* keeps dtype/device of x unless told otherwise
x = x.new_ones(5, 3, dtype=torch.double)
print(x)

x = torch.randn_like(x, dtype=torch.float)
print(x)
print(x.size())

# three ways to add
y = torch.rand(5, 3)
print(x + y)
print(torch.add(x, y))

result = torch.empty(5, 3)
torch.add(x, y, out=result)
print(result)

# in place: y changes
y.add_(x)
print(y)

print(x[:, 1])

# reshaping with view
x = torch.randn(4, 4)
y = x.view(16)
z = x.view(-1, 8)
print(x.size(), y.size(), z.size())

x = torch.randn(1)
print(x)
print(x.item())

# tensor -> numpy: they share memory
a = torch.ones(5)
print(a)
b = a.numpy()
print(b)
a.add_(1)
print(a)
print(b)

# numpy -> tensor: shared as well
import numpy as np

a = np.ones(5)
b = torch.from_numpy(a)
np.add(a, 1, out=a)
print(a)
print(b)

if torch.cuda.is_available():
    device = torch.device("cuda")
    y = torch.ones_like(x, device=device)
    x = x.to(device)
    z = x + y
    print(z)
    print(z.to("cpu", torch.double))
