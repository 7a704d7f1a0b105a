"""A character-level LSTM language model on the Zen of Python (shipped with Python), with gradient clipping."""

import codecs
import json
import this

import numpy as np
import torch
import torch.nn as nn

text = codecs.decode(this.s, "rot13")
vocabulary = sorted(set(text))
index = {ch: i for i, ch in enumerate(vocabulary)}
data = torch.tensor([index[ch] for ch in text], dtype=torch.long)


class CharLM(nn.Module):
    def __init__(self, vocab, embed=16, hidden=32, layers=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, embed)
        self.lstm = nn.LSTM(embed, hidden, num_layers=layers, batch_first=True)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, x, state=None):
        out, state = self.lstm(self.embed(x), state)
        return self.head(out), state


model = CharLM(len(vocabulary)).double()
rng = np.random.default_rng(2)
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.from_numpy(rng.uniform(-0.1, 0.1, tuple(p.shape))))

optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
criterion = nn.CrossEntropyLoss()
sequence, batch = 24, 8
losses = []
for step in range(12):
    starts = [(step * 97 + 131 * b) % (len(data) - sequence - 1) for b in range(batch)]
    x = torch.stack([data[s:s + sequence] for s in starts])
    y = torch.stack([data[s + 1:s + sequence + 1] for s in starts])
    logits, _ = model(x)
    loss = criterion(logits.reshape(-1, len(vocabulary)), y.reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    losses.append([loss.item(), float(norm)])

print(json.dumps({"losses": losses, "tolerance": {"rtol": 1e-7}}))
