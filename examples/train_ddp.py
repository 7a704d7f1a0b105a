"""Data-parallel training on the bundled digits data with DistributedDataParallel.

    mpiexec -n 2 python examples/train_ddp.py [--epochs 10] [--batch-size 32]

Each rank trains on its own shard (DistributedSampler), DDP averages the
gradients during backward, and every replica stays equal. At the end rank 0
replays the same training in a single process on the same global batches
and shows that the final weights match within float32 rounding.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from tqdm import tqdm

import minigrad as mg
import minigrad_dist as dist
from minigrad import nn
from minigrad.nn import functional as F


def load_data(seed: int):
    """Digits scaled to [0, 1] and flattened: (x_train, x_test, y_train, y_test)."""
    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)
    y = digits.target.astype(np.int64)
    return train_test_split(x, y, test_size=0.25, random_state=seed, stratify=y)


def make_model(seed: int) -> nn.Module:
    """The same MLP on every rank (DDP would broadcast rank 0's weights anyway)."""
    mg.manual_seed(seed)
    return nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, 10))


def batches_of(sampler, batch_size):
    """This rank's index batches for the sampler's current epoch."""
    indices = sampler.indices()
    return [indices[i : i + batch_size] for i in range(0, len(indices), batch_size)]


def accuracy(model, x, y) -> float:
    """Test accuracy (evaluation mode, no graph)."""
    model.eval()
    with mg.no_grad():
        predictions = model(mg.tensor(x)).argmax(dim=1).numpy()
    model.train()
    return float((predictions == y).mean())


def train_ddp(args, data):
    """The distributed run: returns the trained (unwrapped) model."""
    rank, world = dist.get_rank(), dist.get_world_size()
    x_train, _, y_train, _ = data
    model = make_model(args.seed)
    ddp = dist.DistributedDataParallel(model)
    optimizer = mg.optim.SGD(ddp.parameters(), lr=args.lr, momentum=0.9)
    sampler = dist.DistributedSampler(len(x_train), num_replicas=world, rank=rank, seed=args.seed)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        batches = batches_of(sampler, args.batch_size)
        bar = tqdm(batches, desc=f"epoch {epoch + 1}/{args.epochs}", disable=rank != 0, leave=False)
        for idx in bar:
            loss = F.cross_entropy(ddp(mg.tensor(x_train[idx])), mg.tensor(y_train[idx]))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            bar.set_postfix(loss=f"{loss.item():.3f}", refresh=False)
    return model


def train_single_process(args, data, world):
    """The same training in one process: each step uses the union of the ranks' batches."""
    x_train, _, y_train, _ = data
    model = make_model(args.seed)
    optimizer = mg.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    samplers = [dist.DistributedSampler(len(x_train), world, r, seed=args.seed) for r in range(world)]
    for epoch in range(args.epochs):
        for s in samplers:
            s.set_epoch(epoch)
        per_rank = [batches_of(s, args.batch_size) for s in samplers]
        for step in range(len(per_rank[0])):
            idx = np.concatenate([batches[step] for batches in per_rank])
            loss = F.cross_entropy(model(mg.tensor(x_train[idx])), mg.tensor(y_train[idx]))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    return model


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--batch-size", type=int, default=32, help="per rank")
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--skip-check", action="store_true", help="skip the single-process comparison")
    args = parser.parse_args(argv)

    dist.init_process_group(backend="mpi")
    rank, world = dist.get_rank(), dist.get_world_size()
    data = load_data(args.seed)
    start = time.perf_counter()
    model = train_ddp(args, data)
    elapsed = time.perf_counter() - start
    acc = accuracy(model, data[1], data[3])
    result = {"accuracy": acc}
    if rank == 0:
        print(f"DDP on {world} ranks: test accuracy {acc:.2%} after {args.epochs} epochs ({elapsed:.1f} s)")
        if not args.skip_check:
            reference = train_single_process(args, data, world)
            diffs = [
                float(np.abs(p.array - q.array).max() / (np.abs(q.array).max() + 1e-12))
                for p, q in zip(model.parameters(), reference.parameters())
            ]
            result["max_relative_difference"] = max(diffs)
            print(f"single process, same global batches: max relative weight difference {max(diffs):.2e}")
            if max(diffs) > 1e-4:
                raise SystemExit("DDP and single-process weights differ by more than float32 rounding")
            print("final weights equal the single-process run within float32 rounding")
    dist.destroy_process_group()
    return result


if __name__ == "__main__":
    main()
