# tutorial: intermediate_source/visualizing_gradients_tutorial.py
# ruff: noqa  (tutorial code, kept in the tutorial's own style)
# Gradients of every layer's output, caught with forward hooks that register tensor
# hooks, for a sigmoid MLP with and without BatchNorm (no plot: the averages are printed).
import torch
import torch.nn as nn
import torch.optim as optim
import torch.nn.functional as F

torch.manual_seed(0)


def fc_layer(in_size, out_size, norm_layer):
    """linear -> norm -> sigmoid"""
    return nn.Sequential(nn.Linear(in_size, out_size), norm_layer(out_size), nn.Sigmoid())


class Net(nn.Module):
    """num_layers blocks of linear -> norm -> sigmoid, then a linear head"""
    def __init__(self, in_size=28*28, hidden_size=128,
                 out_size=10, num_layers=3, batchnorm=False):
        super().__init__()
        if batchnorm is False:
            norm_layer = nn.Identity
        else:
            norm_layer = nn.BatchNorm1d

        layers = []
        layers.append(fc_layer(in_size, hidden_size, norm_layer))

        for i in range(num_layers-1):
            layers.append(fc_layer(hidden_size, hidden_size, norm_layer))

        layers.append(nn.Linear(hidden_size, out_size))

        self.layers = nn.Sequential(*layers)

    def forward(self, x):
        x = torch.flatten(x, 1)
        return self.layers(x)


# dummy data
x = torch.randn(10, 28, 28)
y = torch.randint(10, (10, ))

model_bn = Net(batchnorm=True, num_layers=3)
model_nobn = Net(batchnorm=False, num_layers=3)

model_bn.train()
model_nobn.train()

optimizer_bn = optim.SGD(model_bn.parameters(), lr=0.01, momentum=0.9)
optimizer_nobn = optim.SGD(model_nobn.parameters(), lr=0.01, momentum=0.9)

print(model_bn.layers[0])
print(model_nobn.layers[0])


# closures carry the module name and the list the grads go to
def hook_forward(module_name, grads, hook_backward):
    def hook(module, args, output):
        """forward hook: put a backward hook on the layer's output"""
        output.register_hook(hook_backward(module_name, grads))
    return hook


def hook_backward(module_name, grads):
    def hook(grad):
        """tensor hook: keep the gradient"""
        grads.append((module_name, grad))
    return hook


def get_all_layers(model, hook_forward, hook_backward):
    """Hook every leaf module; return {module: name} and the list grads fill."""
    layers = dict()
    grads = []
    for name, layer in model.named_modules():
        # containers have children: skip them
        if any(layer.children()) is False:
            layers[layer] = name
            layer.register_forward_hook(hook_forward(name, grads, hook_backward))
    return layers, grads


layers_bn, grads_bn = get_all_layers(model_bn, hook_forward, hook_backward)
layers_nobn, grads_nobn = get_all_layers(model_nobn, hook_forward, hook_backward)

epochs = 3

for epoch in range(epochs):

    # the hooks append on every pass: start each epoch empty
    grads_bn.clear()
    grads_nobn.clear()

    optimizer_bn.zero_grad()
    optimizer_nobn.zero_grad()

    y_pred_bn = model_bn(x)
    y_pred_nobn = model_nobn(x)

    loss_bn = F.cross_entropy(y_pred_bn, y)
    loss_nobn = F.cross_entropy(y_pred_nobn, y)

    loss_bn.backward()
    loss_nobn.backward()

    optimizer_bn.step()
    optimizer_nobn.step()


def get_grads(grads):
    layer_idx = []
    avg_grads = []
    for idx, (name, grad) in enumerate(grads):
        if grad is not None:
            avg_grad = grad.abs().mean()
            avg_grads.append(avg_grad)
            # grads arrived in backward order: count depth from the end
            layer_idx.append(len(grads) - 1 - idx)
    return layer_idx, avg_grads


layer_idx_bn, avg_grads_bn = get_grads(grads_bn)
layer_idx_nobn, avg_grads_nobn = get_grads(grads_nobn)

# in place of the plot
print(layer_idx_bn, [round(g.item(), 6) for g in avg_grads_bn])
print(layer_idx_nobn, [round(g.item(), 6) for g in avg_grads_nobn])
