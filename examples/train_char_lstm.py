"""A character-level LSTM language model on Python's own documentation (ships with Python, no download).

    python examples/train_char_lstm.py                 # about two minutes on one core
    python examples/train_char_lstm.py --steps 100 --sample 200

The corpus is the text of a few topics from ``pydoc_data.topics`` (the help
texts behind ``help("for")``). Training uses truncated backpropagation through
time: the batch of streams carries its LSTM state from one window to the next,
detached from the previous window's graph, as word-level LM examples do. It
prints the validation loss (nats per character) before and after training and
a sample drawn from the model.
"""

from __future__ import annotations

import argparse
import math
import pydoc_data.topics
import time

import numpy as np

import minigrad as mg
from minigrad import nn
from minigrad.nn import functional as F

TOPICS = ("for", "while", "if", "try", "with", "function", "class", "assignment", "augassign", "lambda")


def load_corpus() -> str:
    """The help texts of ``TOPICS``, joined: about 60 KB of English and Python."""
    return "\n".join(pydoc_data.topics.topics[name] for name in TOPICS)


class CharLM(nn.Module):
    """Embedding -> multi-layer LSTM -> Linear over the vocabulary."""

    def __init__(self, vocab: int, embed: int, hidden: int, layers: int, dropout: float):
        super().__init__()
        self.embed = nn.Embedding(vocab, embed)
        self.lstm = nn.LSTM(embed, hidden, num_layers=layers, dropout=dropout)
        self.drop = nn.Dropout(dropout)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, tokens, state=None):
        """``tokens`` (time, batch) -> logits (time, batch, vocab) and the new LSTM state."""
        out, state = self.lstm(self.drop(self.embed(tokens)), state)
        return self.head(self.drop(out)), state


def batchify(ids: np.ndarray, batch: int) -> np.ndarray:
    """Cut the id stream into ``batch`` parallel streams: (length, batch)."""
    length = len(ids) // batch
    return ids[: length * batch].reshape(batch, length).T.copy()


def evaluate(model, streams, window) -> float:
    """Mean cross-entropy per character over ``streams`` (no dropout, no graph)."""
    model.eval()
    total, count, state = 0.0, 0, None
    with mg.no_grad():
        for start in range(0, len(streams) - 1, window):
            x = mg.tensor(streams[start : start + window])
            y = mg.tensor(streams[start + 1 : start + 1 + window])
            x = x[: len(y)]
            logits, state = model(x, state)
            total += F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1), reduction="sum").item()
            count += y.numel()
    model.train()
    return total / count


def sample(model, vocabulary, prompt: str, length: int, temperature: float) -> str:
    """Continue ``prompt`` by drawing characters from the model's softmax."""
    model.eval()
    index = {ch: i for i, ch in enumerate(vocabulary)}
    rng = np.random.default_rng(0)
    out, state = list(prompt), None
    with mg.no_grad():
        x = mg.tensor(np.array([[index[ch]] for ch in prompt]))
        for _ in range(length):
            logits, state = model(x, state)
            probs = F.softmax(logits[-1, 0] / temperature, dim=-1).numpy().astype(np.float64)
            choice = int(rng.choice(len(vocabulary), p=probs / probs.sum()))
            out.append(vocabulary[choice])
            x = mg.tensor(np.array([[choice]]))
    return "".join(out)


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=300, help="training windows")
    parser.add_argument("--window", type=int, default=48, help="characters per BPTT window")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--hidden", type=int, default=192)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--sample", type=int, default=160, help="characters to generate at the end")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    mg.manual_seed(args.seed)
    text = load_corpus()
    vocabulary = sorted(set(text))
    ids = np.array([vocabulary.index(ch) for ch in text], dtype=np.int64)
    split = int(0.9 * len(ids))
    train, valid = batchify(ids[:split], args.batch), batchify(ids[split:], 8)

    model = CharLM(len(vocabulary), embed=48, hidden=args.hidden, layers=2, dropout=0.1)
    optimizer = mg.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = mg.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.steps)
    before = evaluate(model, valid, args.window)
    print(f"corpus {len(text)} characters, vocabulary {len(vocabulary)}; validation loss {before:.3f} "
          f"(uniform: {math.log(len(vocabulary)):.3f})")

    start, state, position = time.perf_counter(), None, 0
    for step in range(1, args.steps + 1):
        if position + args.window + 1 > len(train):
            position, state = 0, None
        x = mg.tensor(train[position : position + args.window])
        y = mg.tensor(train[position + 1 : position + 1 + args.window])
        position += args.window
        if state is not None:  # truncated BPTT: keep the values, cut the graph
            state = tuple(s.detach() for s in state)
        logits, state = model(x, state)
        loss = F.cross_entropy(logits.reshape(-1, len(vocabulary)), y.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        if step % 100 == 0:
            print(f"step {step}: training loss {loss.item():.3f} ({time.perf_counter() - start:.1f} s)")

    after = evaluate(model, valid, args.window)
    print(f"validation loss {after:.3f} nats/char (perplexity {math.exp(after):.2f}) after {args.steps} steps")
    if args.sample:
        print(sample(model, vocabulary, "The ", args.sample, temperature=0.8))
    return {"before": before, "after": after}


if __name__ == "__main__":
    main()
