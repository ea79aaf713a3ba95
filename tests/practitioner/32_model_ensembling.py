# source: pytorch/tutorials/intermediate_source/ensembling.py
#         (https://github.com/pytorch/tutorials/blob/main/intermediate_source/ensembling.py)
# shrunk: device 'cuda' -> 'cpu'; num_models 10 -> 4; dummy data (100, 64, 1, 28, 28) -> (4, 8, 1, 28, 28);
#         the torch.utils.benchmark Timer section is dropped; added at the end: a cross-entropy loss on
#         the vmapped predictions and backward() into the stacked parameters.
# ruff: noqa
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)

# Here's a simple MLP
class SimpleMLP(nn.Module):
    def __init__(self):
        super(SimpleMLP, self).__init__()
        self.fc1 = nn.Linear(784, 128)
        self.fc2 = nn.Linear(128, 128)
        self.fc3 = nn.Linear(128, 10)

    def forward(self, x):
        x = x.flatten(1)
        x = self.fc1(x)
        x = F.relu(x)
        x = self.fc2(x)
        x = F.relu(x)
        x = self.fc3(x)
        return x

device = 'cpu'
num_models = 4

data = torch.randn(4, 8, 1, 28, 28, device=device)
targets = torch.randint(10, (32,), device=device)

models = [SimpleMLP().to(device) for _ in range(num_models)]

# Option 1: different minibatch for each model

minibatches = data[:num_models]
predictions_diff_minibatch_loop = [model(minibatch) for model, minibatch in zip(models, minibatches)]

# Option 2: Same minibatch

minibatch = data[0]
predictions2 = [model(minibatch) for model in models]

from torch.func import stack_module_state

params, buffers = stack_module_state(models)

from torch.func import functional_call
import copy

# Construct a "stateless" version of one of the models. It is "stateless" in
# the sense that the parameters are meta Tensors and do not have storage.
base_model = copy.deepcopy(models[0])
base_model = base_model.to('meta')

def fmodel(params, buffers, x):
    return functional_call(base_model, (params, buffers), (x,))

print([p.size(0) for p in params.values()]) # show the leading 'num_models' dimension

assert minibatches.shape == (num_models, 8, 1, 28, 28) # verify minibatch has leading dimension of size 'num_models'

from torch import vmap

predictions1_vmap = vmap(fmodel)(params, buffers, minibatches)

# verify the vmap predictions match the
assert torch.allclose(predictions1_vmap, torch.stack(predictions_diff_minibatch_loop), atol=1e-3, rtol=1e-5)

predictions2_vmap = vmap(fmodel, in_dims=(0, 0, None))(params, buffers, minibatch)

assert torch.allclose(predictions2_vmap, torch.stack(predictions2), atol=1e-3, rtol=1e-5)

# (not in the tutorial) train the whole ensemble at once through the stacked parameters
loss = F.cross_entropy(predictions1_vmap.flatten(0, 1), targets)
loss.backward()
print(params['fc1.weight'].grad.shape)
