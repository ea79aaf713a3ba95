# title: In-place dangers
# about: In-place changes to a leaf, or to a tensor a backward node saved, break gradient computation.
import torch

a = torch.tensor([0., 1.], requires_grad=True)
#> A leaf that requires grad cannot be changed in place.
a[0] = 3
b = a.sigmoid()
#> SigmoidBackward0 saved its result b (version 0). mul_ changes b in place: its version becomes 1.
b.mul_(2)
print("b._version =", b._version)
#> The saved b is stale (version 1, expected 0): backward refuses.
b.sum().backward()
#> The out-of-place version keeps the saved tensor intact.
b = a.sigmoid()
c = b * 2
c.sum().backward()
print("a.grad =", a.grad)
