"""A network whose forward discards the results of its in-place activations and keeps using their inputs.

``nn.ReLU(inplace=True)``, ``F.relu(h, inplace=True)`` and
``F.leaky_relu(h, 0.1, inplace=True)`` are called for their effect only: the
next layer reads ``h`` itself, so the program is right only when the input is
overwritten (a library that returned a new tensor would feed the layers
pre-activation values and train another function). ``nn.Dropout(p=1.0,
inplace=True)`` zeroes a branch the same way. Gradients flow back through
the in-place writes into the weights; the losses, weight sums and the
checks of identity are compared.
"""

import json

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

rng = np.random.default_rng(17)
inputs = torch.from_numpy(rng.uniform(-2.0, 2.0, (48, 4)))
targets = torch.cos(inputs[:, :2].sum(dim=1, keepdim=True)) + 0.2 * inputs[:, 2:3]


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 12)
        self.fc2 = nn.Linear(12, 12)
        self.fc3 = nn.Linear(12, 8)
        self.out = nn.Linear(8, 1)
        self.act = nn.ReLU(inplace=True)
        self.drop_branch = nn.Dropout(p=1.0, inplace=True)

    def forward(self, x):
        h = self.fc1(x)
        self.act(h)  # result discarded: h itself now holds relu(fc1(x))
        g = self.fc2(h)
        F.relu(g, inplace=True)
        k = self.fc3(g)
        F.leaky_relu(k, 0.1, inplace=True)
        branch = self.fc3(h)
        self.drop_branch(branch)  # zeroed in place: adds nothing, passes no gradient
        return self.out(k + branch)


model = Net().double()
for layer in (model.fc1, model.fc2, model.fc3, model.out):
    layer.weight.data.copy_(torch.from_numpy(rng.normal(0.0, 0.5, tuple(layer.weight.shape))))
    layer.bias.data.copy_(torch.from_numpy(rng.normal(0.0, 0.1, tuple(layer.bias.shape))))

optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
losses = []
for step in range(40):
    optimizer.zero_grad()
    loss = ((model(inputs) - targets) ** 2).mean()
    loss.backward()
    optimizer.step()
    if step % 8 == 0:
        losses.append(loss.item())

probe = model.fc1(inputs[:5])
returned = F.relu(probe, inplace=True)
module_input = torch.linspace(-1.0, 1.0, 7, dtype=torch.float64)
module_output = nn.ReLU(inplace=True)(module_input)

print(json.dumps({
    "losses": losses,
    "weight_sums": [p.detach().sum().item() for p in model.parameters()],
    "functional_returns_input": returned is probe,
    "probe_overwritten": bool((probe >= 0).all().item()),
    "module_returns_input": module_output is module_input,
    "module_input": module_input.tolist(),
    "tolerance": {"rtol": 1e-9},
}))
