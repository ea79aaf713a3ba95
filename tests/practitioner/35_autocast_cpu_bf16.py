# source: pytorch/pytorch torch/amp/autocast_mode.py, the torch.autocast docstring examples
#         ("CPU Training Example", "CPU Inference Example", the decorator and autocast(enabled=False)
#         examples) (https://pytorch.org/docs/stable/amp.html#torch.autocast)
# shrunk: the docstrings' placeholder Net/loss_fn/data made concrete: a 2-layer MLP on torch.randn
#         batches (4 batches of 8, fixed seed), nn.CrossEntropyLoss, 2 epochs of SGD; CUDA examples
#         rewritten with device_type="cpu", dtype=torch.bfloat16.
# ruff: noqa
import torch
import torch.nn as nn
import torch.optim as optim

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.fc2 = nn.Linear(32, 4)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


class AutocastModel(Net):
    @torch.autocast(device_type="cpu", dtype=torch.bfloat16)
    def forward(self, input):
        return super().forward(input)


data = [(torch.randn(8, 16), torch.randint(0, 4, (8,))) for _ in range(4)]
loss_fn = nn.CrossEntropyLoss()
epochs = range(2)

# CPU Training Example
# Creates model and optimizer in default precision
model = Net()
optimizer = optim.SGD(model.parameters(), lr=0.1)

for epoch in epochs:
    for input, target in data:
        optimizer.zero_grad()

        # Runs the forward pass with autocasting.
        with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
            output = model(input)
            loss = loss_fn(output, target)

        loss.backward()
        optimizer.step()

print(output.dtype, loss.dtype, model.fc1.weight.grad.dtype)

# CPU Inference Example
# Creates model in default precision
model.eval()

with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
    for input, _ in data:
        # Runs the forward pass with autocasting.
        inference_output = model(input)

# Floating-point Tensors produced in an autocast-enabled region may be lower precision.
# After returning to an autocast-disabled region, cast them back before mixing dtypes.
a_float32 = torch.rand((8, 8))
b_float32 = torch.rand((8, 8))
c_float32 = torch.rand((8, 8))
d_float32 = torch.rand((8, 8))

with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
    # torch.mm is on autocast's list of ops that should run in lower precision.
    e_bf16 = torch.mm(a_float32, b_float32)
    # Also handles mixed input types
    f_bf16 = torch.mm(d_float32, e_bf16)

# After exiting autocast, calls f_bf16.float() to use with d_float32
g_float32 = torch.mm(d_float32, f_bf16.float())

# autocast(enabled=False) subregions can be nested in autocast-enabled regions.
with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
    e_bf16 = torch.mm(a_float32, b_float32)
    with torch.autocast(device_type="cpu", enabled=False):
        # Calls e_bf16.float() to ensure float32 execution
        # (necessary because e_bf16 was created in an autocasted region)
        f_float32 = torch.mm(c_float32, e_bf16.float())

    # No manual casts are required when re-entering the autocast-enabled region.
    # torch.mm again runs in bfloat16 and produces bfloat16 output, regardless of input types.
    g_bf16 = torch.mm(d_float32, f_float32)

# autocast as a decorator on forward
model2 = AutocastModel()
optimizer2 = optim.SGD(model2.parameters(), lr=0.1)
input, target = data[0]
output2 = model2(input)
loss2 = loss_fn(output2.float(), target)
optimizer2.zero_grad()
loss2.backward()
optimizer2.step()
