# title: Leaves
# about: A leaf is a tensor you created (or one that needs no grad); only leaves get .grad unless retain_grad() is called.
import torch


def get_tensor_info(tensor):
    info = []
    for name in ["requires_grad", "is_leaf", "retains_grad", "grad_fn", "grad"]:
        info.append(f"{name}({getattr_safe(tensor, name)})")
    info.append(f"tensor({tensor.detach()})")
    return " ".join(info)


def getattr_safe(tensor, name):
    if name == "requires_grad":
        return tensor.requires_grad
    if name == "is_leaf":
        return tensor.is_leaf
    if name == "retains_grad":
        return tensor.retains_grad
    if name == "grad_fn":
        return tensor.grad_fn
    if tensor.is_leaf or tensor.retains_grad:
        return tensor.grad
    return None


a = torch.tensor([1., 2.])
w = torch.tensor([3., 4.], requires_grad=True)
#> a needs no grad, so it is a leaf; w was created with requires_grad=True, so it is a leaf too.
h = a * w
h.retain_grad()
#> h is the result of an operation: not a leaf. retain_grad() asks for its .grad anyway.
loss = h.sum()
loss.backward()
print("a:", get_tensor_info(a))
print("w:", get_tensor_info(w))
print("h:", get_tensor_info(h))
print("loss:", get_tensor_info(loss))
