"""Fit a cubic to sin(x) with raw tensors and a hand-written SGD step (``-=`` under no_grad)."""

import json
import math

import torch

x = torch.linspace(-math.pi, math.pi, 500, dtype=torch.float64)
y = torch.sin(x)
weights = [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in (0.3, -0.4, 0.2, 0.05)]
learning_rate = 2e-6
history = []
for step in range(400):
    a, b, c, d = weights
    prediction = a + b * x + c * x**2 + d * x**3
    loss = (prediction - y).pow(2).sum()
    loss.backward()
    with torch.no_grad():
        for w in weights:
            w -= learning_rate * w.grad
            w.grad = None
    if step % 50 == 0:
        history.append(loss.item())

print(json.dumps({"loss": history, "weights": [w.item() for w in weights],
                  "tolerance": {"rtol": 1e-9}}))
