"""Train an MLP, a small CNN and a LeNet-style CNN with BatchNorm on scikit-learn's digits data (no download).

    python examples/train_digits.py               # all three models
    python examples/train_digits.py --model lenet --epochs 10

The 8x8 digit images ship inside scikit-learn. Prints a progress bar per
epoch and the final test accuracy of each model (the LeNet is evaluated in
eval mode, so its BatchNorm layers use their running statistics).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from tqdm import tqdm

import minigrad as mg
from minigrad import nn
from minigrad.nn import functional as F


def load_data(seed: int):
    """Digits scaled to [0, 1]: (x_train, x_test, y_train, y_test) as NumPy arrays."""
    digits = load_digits()
    x = (digits.images / 16.0).astype(np.float32)
    y = digits.target.astype(np.int64)
    return train_test_split(x, y, test_size=0.25, random_state=seed, stratify=y)


def make_mlp() -> nn.Module:
    """64 -> 128 -> 64 -> 10 with ReLU."""
    return nn.Sequential(
        nn.Flatten(),
        nn.Linear(64, 128),
        nn.ReLU(),
        nn.Linear(128, 64),
        nn.ReLU(),
        nn.Linear(64, 10),
    )


def make_cnn() -> nn.Module:
    """Two 3x3 convolutions (the second with stride 2) and a linear classifier."""
    return nn.Sequential(
        nn.Conv2d(1, 8, kernel_size=3, padding=1),
        nn.ReLU(),
        nn.Conv2d(8, 16, kernel_size=3, stride=2, padding=1),
        nn.ReLU(),
        nn.Flatten(),
        nn.Linear(16 * 4 * 4, 10),
    )


def make_lenet() -> nn.Module:
    """Conv-BatchNorm-ReLU-MaxPool twice, then two linear layers (LeNet's shape at 8x8)."""
    return nn.Sequential(
        nn.Conv2d(1, 16, kernel_size=3, padding=1),
        nn.BatchNorm2d(16),
        nn.ReLU(),
        nn.MaxPool2d(2),  # 8x8 -> 4x4
        nn.Conv2d(16, 32, kernel_size=3, padding=1),
        nn.BatchNorm2d(32),
        nn.ReLU(),
        nn.MaxPool2d(2),  # 4x4 -> 2x2
        nn.Flatten(),
        nn.Linear(32 * 2 * 2, 64),
        nn.ReLU(),
        nn.Dropout(0.2),
        nn.Linear(64, 10),
    )


MODELS = {"mlp": make_mlp, "cnn": make_cnn, "lenet": make_lenet}


def accuracy(model: nn.Module, x: np.ndarray, y: np.ndarray) -> float:
    """Fraction of ``x`` classified as ``y`` (evaluation mode, no graph)."""
    model.eval()
    with mg.no_grad():
        predictions = model(mg.tensor(x)).argmax(dim=1).numpy()
    model.train()
    return float((predictions == y).mean())


def train(model, data, epochs: int, batch_size: int, lr: float, seed: int, name: str) -> float:
    """Adam on mini-batches; returns the test accuracy."""
    x_train, x_test, y_train, y_test = data
    if name != "mlp":
        x_train, x_test = x_train[:, None], x_test[:, None]
    optimizer = mg.optim.Adam(model.parameters(), lr=lr)
    rng = np.random.default_rng(seed)
    for epoch in range(epochs):
        order = rng.permutation(len(x_train))
        batches = range(0, len(order), batch_size)
        bar = tqdm(batches, desc=f"{name} epoch {epoch + 1}/{epochs}", leave=False)
        for start in bar:
            idx = order[start : start + batch_size]
            loss = F.cross_entropy(model(mg.tensor(x_train[idx])), mg.tensor(y_train[idx]))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            bar.set_postfix(loss=f"{loss.item():.3f}", refresh=False)
    return accuracy(model, x_test, y_test)


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", choices=[*MODELS, "all"], default="all")
    parser.add_argument("--epochs", type=int, default=15)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    mg.manual_seed(args.seed)
    data = load_data(args.seed)
    results = {}
    names = list(MODELS) if args.model == "all" else [args.model]
    for name in names:
        model = MODELS[name]()
        start = time.perf_counter()
        acc = train(model, data, args.epochs, args.batch_size, args.lr, args.seed, name)
        elapsed = time.perf_counter() - start
        print(f"{name}: test accuracy {acc:.2%} after {args.epochs} epochs ({elapsed:.1f} s)")
        results[name] = acc
    return results


if __name__ == "__main__":
    main()
