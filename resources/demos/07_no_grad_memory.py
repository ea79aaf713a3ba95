# title: no_grad and memory
# about: Outside no_grad the graph keeps tensors alive for backward; inside it nothing is recorded or saved.
import torch

x = torch.randn(1000, 1000, requires_grad=True, device=dev)
#> ExpBackward0 saves its result (4,000,000 bytes): the memory panel shows the graph holding it.
y = torch.exp(x)
z = y.sum()
#> Dropping the names drops the graph and what it saved.
del y, z
#> The same lines under no_grad: no grad_fn, no saved tensors, the graph holds 0 bytes.
with torch.no_grad():
    y = torch.exp(x)
    z = y.sum()
print("grad_fn under no_grad:", z.grad_fn)
