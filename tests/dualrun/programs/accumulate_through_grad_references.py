"""Accumulate gradients over micro-batches and step through references to ``.grad`` taken once.

Hand-written loops often keep ``grads = [p.grad for p in params]`` after the
first backward and zero those tensors in place each step: later backward
passes add into the same tensors, so the kept references see every micro-batch.
"""

import json

import torch

inputs = torch.linspace(-2.0, 2.0, 96, dtype=torch.float64).reshape(24, 4)
targets = (inputs * torch.tensor([0.5, -1.0, 2.0, 0.25], dtype=torch.float64)).sum(1, keepdim=True).sin()
model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1)).double()
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(torch.linspace(-0.5, 0.5, p.numel(), dtype=torch.float64).reshape(p.shape) * (-1) ** i)
params = list(model.parameters())

torch.nn.functional.mse_loss(model(inputs), targets).backward()
grads = [p.grad for p in params]
micro_batches = 4
history, same_objects = [], []
for _ in range(15):
    for g in grads:
        g.zero_()
    total = 0.0
    for xb, yb in zip(inputs.chunk(micro_batches), targets.chunk(micro_batches)):
        loss = torch.nn.functional.mse_loss(model(xb), yb) / micro_batches
        loss.backward()
        total += loss.item()
    same_objects.append(all(p.grad is g for p, g in zip(params, grads)))
    with torch.no_grad():
        for p, g in zip(params, grads):
            p -= 0.3 * g
    history.append(total)

print(json.dumps({"loss": history, "grads_kept": same_objects,
                  "grad_sums": [g.sum().item() for g in grads],
                  "weights": [p.sum().item() for p in params], "tolerance": {"rtol": 1e-9}}))
