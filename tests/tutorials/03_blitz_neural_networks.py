# tutorial: beginner_source/blitz/neural_networks_tutorial.py
# ruff: noqa  (tutorial code, kept in the tutorial's own style)
# LeNet on one random 32x32 image: forward, a loss, backward, one SGD step.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Net(nn.Module):

    def __init__(self):
        super(Net, self).__init__()
        # 1 input channel, 6 output channels, 5x5 kernels
        self.conv1 = nn.Conv2d(1, 6, 5)
        self.conv2 = nn.Conv2d(6, 16, 5)
        # affine layers y = Wx + b
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        # 2x2 max pooling
        x = F.max_pool2d(F.relu(self.conv1(x)), (2, 2))
        # a square window can be given as one number
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = x.view(-1, self.num_flat_features(x))
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = self.fc3(x)
        return x

    def num_flat_features(self, x):
        size = x.size()[1:]  # everything but the batch dimension
        num_features = 1
        for s in size:
            num_features *= s
        return num_features


net = Net()
print(net)

params = list(net.parameters())
print(len(params))
print(params[0].size())  # conv1's weight

input = torch.randn(1, 1, 32, 32)
out = net(input)
print(out)

# zero the gradient buffers, then backprop a random gradient
net.zero_grad()
out.backward(torch.randn(1, 10))

output = net(input)
target = torch.arange(1, 11)  # a made-up target
target = target.view(1, -1)  # same shape as output
criterion = nn.MSELoss()

loss = criterion(output, target)
print(loss)

# walk a few steps back through the graph
print(loss.grad_fn)  # MSELoss
print(loss.grad_fn.next_functions[0][0])  # Linear
print(loss.grad_fn.next_functions[0][0].next_functions[0][0])  # ReLU

net.zero_grad()

print('conv1.bias.grad before backward')
print(net.conv1.bias.grad)

loss.backward()

print('conv1.bias.grad after backward')
print(net.conv1.bias.grad)

# the plain-Python update rule, then the same with torch.optim
learning_rate = 0.01
for f in net.parameters():
    f.data.sub_(f.grad.data * learning_rate)

import torch.optim as optim

optimizer = optim.SGD(net.parameters(), lr=0.01)

optimizer.zero_grad()
output = net(input)
loss = criterion(output, target)
loss.backward()
optimizer.step()
