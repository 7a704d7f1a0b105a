"""A small Transformer encoder classifying token sequences (is the sequence sorted?), dropout off."""

import json

import numpy as np
import torch
import torch.nn as nn


class Classifier(nn.Module):
    def __init__(self, vocab=10, d_model=16, heads=4, length=6):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        self.position = nn.Parameter(torch.zeros(1, length, d_model))
        layer = nn.TransformerEncoderLayer(d_model, heads, dim_feedforward=32, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=2)
        self.head = nn.Linear(d_model, 2)

    def forward(self, tokens):
        h = self.encoder(self.embed(tokens) + self.position)
        return self.head(h.mean(dim=1))


rng = np.random.default_rng(3)
tokens = rng.integers(0, 10, size=(64, 6))
tokens[::2] = np.sort(tokens[::2], axis=1)
labels = (np.diff(tokens, axis=1) >= 0).all(axis=1).astype(np.int64)
x, y = torch.tensor(tokens), torch.tensor(labels)

model = Classifier().double()
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.from_numpy(rng.uniform(-0.2, 0.2, tuple(p.shape))))
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
losses = []
for _step in range(15):
    optimizer.zero_grad()
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())

print(json.dumps({"losses": losses, "tolerance": {"rtol": 1e-7}}))
