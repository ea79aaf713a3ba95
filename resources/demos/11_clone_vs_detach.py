# title: clone versus detach
# about: clone() copies and stays in the graph (CloneBackward0); detach() shares memory and leaves the graph.
import torch

a = torch.tensor(1.0, requires_grad=True)
b = a.clone()
c = a.detach()
#> a.data changes a without autograd noticing; c shares a's memory, so c = 3 too.
a.data *= 3
b += 1
print("a =", a, " b =", b, " c =", c)
#> Gradient through a clone.
a = torch.tensor(1.0, requires_grad=True)
a_ = a.clone()
y = a ** 2
z = a ** 2 + a_ * 3
y.backward()
#> a_ is not a leaf: its .grad stays None. a.grad accumulates 2, then 2 + 3 = 5 more.
z.backward()
print("a.grad =", a.grad)
#> Clone of a tensor without grad: only the clone becomes a leaf that requires grad.
a = torch.tensor(1.0)
a_ = a.clone()
a_.requires_grad_()
(a_ ** 2).backward()
print("a_.grad =", a_.grad, " a.grad =", a.grad)
torch.manual_seed(0)
x = torch.tensor([1., 2.], requires_grad=True)
f = torch.nn.Linear(2, 1)
f(x).backward()
print("x.grad =", x.grad)
print(x.clone().requires_grad, x.detach().requires_grad, x.clone().detach().requires_grad)
