"""An MLP on the digits data through TensorDataset and DataLoader, SGD with momentum and a StepLR schedule."""

import json

import numpy as np
import torch
import torch.nn as nn
from sklearn.datasets import load_digits
from torch.utils.data import DataLoader, TensorDataset

digits = load_digits()
images = torch.tensor(digits.data / 16.0, dtype=torch.float32)
labels = torch.tensor(digits.target, dtype=torch.long)
train = TensorDataset(images[:1400], labels[:1400])
test = TensorDataset(images[1400:], labels[1400:])
train_loader = DataLoader(train, batch_size=50, shuffle=False, drop_last=True)
test_loader = DataLoader(test, batch_size=128)

model = nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 10))
rng = np.random.default_rng(0)
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.from_numpy(rng.uniform(-0.2, 0.2, tuple(p.shape))))

optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)
criterion = nn.CrossEntropyLoss()
epoch_losses = []
for _epoch in range(3):
    model.train()
    total = 0.0
    for x, y in train_loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss.item()
    scheduler.step()
    epoch_losses.append(total / len(train_loader))

model.eval()
correct = 0
with torch.no_grad():
    for x, y in test_loader:
        prediction = model(x).argmax(dim=1)
        correct += prediction.eq(y).sum().item()

print(json.dumps({"epoch_losses": epoch_losses, "correct": correct, "lr": scheduler.get_last_lr(),
                  "tolerance": {"rtol": 1e-4}}))
