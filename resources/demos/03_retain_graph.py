# title: retain_graph and accumulation
# about: backward() adds into .grad; the graph's saved tensors are freed after a backward unless retain_graph=True.
import torch

x = torch.tensor(5.0, requires_grad=True)
y = x ** 3
z = torch.log(y)
#> dz/dx = 3/x = 0.6. retain_graph keeps PowBackward0's saved x for another pass.
z.backward(retain_graph=True)
print("x.grad =", x.grad)
#> The second pass ADDS 0.6 to x.grad: the accumulation panel shows 0.6, 1.2. The graph is then freed.
z.backward()
print("x.grad =", x.grad)
#> The saved tensors are gone: PyTorch refuses a third pass.
z.backward()
#> Reset the accumulation (the Zero-grad button does the same).
x.grad.zero_()
print("x.grad =", x.grad)
