# tutorial: beginner_source/examples_nn/polynomial_nn.py
# ruff: noqa  (tutorial code, kept in the tutorial's own style)
# The cubic as nn.Sequential(Linear(3, 1), Flatten(0, 1)) over the features (x, x^2, x^3).
import torch
import math

torch.manual_seed(0)

x = torch.linspace(-math.pi, math.pi, 2000)
y = torch.sin(x)

# broadcasting (2000, 1) against (3,) gives the (2000, 3) feature matrix
p = torch.tensor([1, 2, 3])
xx = x.unsqueeze(-1).pow(p)

model = torch.nn.Sequential(
    torch.nn.Linear(3, 1),
    torch.nn.Flatten(0, 1)
)

loss_fn = torch.nn.MSELoss(reduction='sum')

learning_rate = 1e-6
for t in range(20):
    y_pred = model(xx)

    loss = loss_fn(y_pred, y)
    if t % 5 == 4:
        print(t, loss.item())

    model.zero_grad()

    loss.backward()

    # plain gradient descent over every parameter
    with torch.no_grad():
        for param in model.parameters():
            param -= learning_rate * param.grad

# the Linear layer is the Sequential's first item
linear_layer = model[0]

print(f'Result: y = {linear_layer.bias.item()} + {linear_layer.weight[:, 0].item()} x + {linear_layer.weight[:, 1].item()} x^2 + {linear_layer.weight[:, 2].item()} x^3')
