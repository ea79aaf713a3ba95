# title: A custom autograd.Function
# about: MyPow writes its own forward and backward; its node MyPowBackward runs your backward during the pass.
import torch


class MyPow(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a ** b

    @staticmethod
    def backward(ctx, grad_output):
        a, b = ctx.saved_tensors
        grad_a = grad_output * b * a ** (b - 1)
        grad_b = grad_output * a ** b * torch.log(a)
        return grad_a, grad_b


q = torch.tensor(3.0, requires_grad=True)
x = torch.tensor(5.0, requires_grad=True)
#> MyPowBackward saved both inputs (5 and 3): see them on the canvas and in the inspector.
y = MyPow.apply(x, q)
z = torch.log(y)
#> MyPowBackward receives grad_output = 0.008 and returns 0.6 (for x) and 1.6094 (for q).
z.backward()
print("x.grad =", x.grad, " q.grad =", q.grad)
