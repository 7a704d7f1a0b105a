"""Older PyTorch idioms built on ``.data``: init through it, an SGD step through it, clamping through it.

A two-layer tanh network regresses a smooth function. Weights are set
through ``.data`` (assignment and ``copy_``), each step updates with
``p.data.add_(p.grad, alpha=-lr)`` and clears with ``p.grad.data.zero_()``,
and a WGAN-style ``p.data.clamp_`` bounds the first layer.
"""

import json

import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(5)
inputs = torch.from_numpy(rng.uniform(-2.0, 2.0, (64, 3)))
targets = torch.sin(inputs.sum(dim=1, keepdim=True)) + 0.1 * inputs[:, :1] ** 2

model = nn.Sequential(nn.Linear(3, 16), nn.Tanh(), nn.Linear(16, 1)).double()
first, last = model[0], model[2]
first.weight.data = torch.from_numpy(rng.normal(0.0, 0.5, (16, 3)))
first.bias.data.zero_()
last.weight.data.copy_(torch.from_numpy(rng.normal(0.0, 0.3, (1, 16))))
last.bias.data.fill_(0.1)

lr, losses = 0.05, []
for step in range(60):
    loss = ((model(inputs) - targets) ** 2).mean()
    loss.backward()
    for p in model.parameters():
        p.data.add_(p.grad, alpha=-lr)
        p.grad.data.zero_()
    first.weight.data.clamp_(-0.8, 0.8)
    if step % 10 == 0:
        losses.append(loss.data.item())

print(json.dumps({
    "losses": losses,
    "weight_sums": [p.data.sum().item() for p in model.parameters()],
    "grads_zero": all(p.grad.abs().sum().item() == 0 for p in model.parameters()),
    "data_is_leaf": [first.weight.data.is_leaf, first.weight.data.requires_grad],
    "tolerance": {"rtol": 1e-9},
}))
