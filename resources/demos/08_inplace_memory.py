# title: In-place versus out-of-place memory
# about: torch.relu(t) allocates a new 400,000,000-byte tensor; torch.relu_(t) writes into t and allocates nothing.
import torch

t = torch.randn(10000, 10000, device=dev)
#> Out of place: a new 10000x10000 float32 tensor, 400,000,000 bytes (381.5 MiB).
out = torch.relu(t)
#> In place: relu_ overwrites t, 0 bytes allocated (and t's version counter goes up).
torch.relu_(t)
print("same memory as t:", out.data_ptr() == t.data_ptr())
