# title: Devices
# about: A tensor lives on one device; operations need their inputs on the same one, and .to() makes a copy.
import torch

print("cuda available:", torch.cuda.is_available())
#> `dev` is the device picked in the toolbar. On cuda, `a` lives on the GPU and `b` on the cpu.
a = torch.tensor([[1, 2], [3, 4]], device=dev)
b = torch.tensor([[5, 6], [7, 8]])
#> On cuda this fails: "Expected all tensors to be on the same device". On cpu both agree.
c = a + b
#> .to() returns a NEW tensor on cuda; b itself stays where it was. On cpu nothing moves, so .to() returns b itself: b_moved IS b (one node, both names).
b_moved = b.to(dev)
print(b.device, b_moved.device)
c = a + b_moved
t = torch.tensor([1., 2.], requires_grad=True, device=dev)
#> numpy() refuses a tensor that requires grad: NumPy cannot track gradients.
t.numpy()
#> Detach it from the graph (and copy it to the cpu) first.
t.detach().to('cpu').numpy()
