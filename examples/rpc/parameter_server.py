"""Parameter-server training on the bundled digits data with RPC, RRefs and distributed autograd.

    mpiexec -n 3 python examples/rpc/parameter_server.py [--epochs 10] [--batch-size 32]

Any number of ranks >= 2 works: rank 0 is the parameter server ("ps"),
every other rank a trainer ("trainer1", "trainer2", ...).

* The server owns the model (an MLP 64-128-64-10). Trainers reach it
  through an ``RRef`` obtained with ``rpc.remote("ps", get_parameter_server)``
  (the server object is created once, whoever asks first).
* Each trainer takes its own shard of the training set (``DistributedSampler``)
  and, per batch, inside a distributed autograd context:

  1. runs the forward on the server: ``ps_rref.rpc_sync().forward(x)``; the
     logits come back with a recv node attached to them;
  2. computes the cross-entropy loss locally and runs
     ``dist_autograd.backward``, which sends the gradient of the logits back
     to the server, where the backward through the model finishes and the
     parameter gradients accumulate in that context (never in ``.grad``);
  3. calls ``DistributedOptimizer.step(context_id)``: the server steps its
     SGD optimizer with the gradients of that context.

Trainers work concurrently, so this is asynchronous SGD with stale
gradients: another trainer's step may update the parameters between a
trainer's forward and its backward. The forward therefore computes with
clones of the parameters (the gradient flows through the clones to the
parameters): the values the backward needs are never overwritten. Using the
parameters themselves would make that backward fail with "modified by an
inplace operation", as in PyTorch, since a step writes them in place. Steps
themselves are serialized by the distributed optimizer's lock on the server. When every trainer reported
that it finished, the server evaluates the model on the test set.
"""

from __future__ import annotations

import argparse
import threading
import time

import numpy as np
from mpi4py import MPI
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

import minigrad as mg
import minigrad_dist.autograd as dist_autograd
import minigrad_dist.rpc as rpc
from minigrad import nn
from minigrad.nn import functional as F
from minigrad_dist import DistributedSampler
from minigrad_dist.optim import DistributedOptimizer

SERVER = "ps"


def load_data(seed: int):
    """Digits scaled to [0, 1] and flattened: (x_train, x_test, y_train, y_test), float32 / int64."""
    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)
    y = digits.target.astype(np.int64)
    return train_test_split(x, y, test_size=0.25, random_state=seed, stratify=y)


class ParameterServer:
    """Lives on rank 0: owns the model, runs forwards for trainers, counts who finished.

    Args:
        seed: seed of the model's initialization.
        num_trainers: how many trainers will report ``trainer_done``.
    """

    def __init__(self, seed: int, num_trainers: int):
        mg.manual_seed(seed)
        self.model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, 10))
        self._lock = threading.Lock()
        self._remaining = num_trainers
        self._all_done = threading.Event()
        self.steps = {}

    def forward(self, x):
        """Logits ``(batch, 10)`` for ``x`` ``(batch, 64)``; runs inside the caller's autograd context.

        Computes with clones of the weights taken now (see the module docstring).
        """
        layers = [m for m in self.model if isinstance(m, nn.Linear)]
        h = x
        for i, layer in enumerate(layers):
            h = F.linear(h, layer.weight.clone(), layer.bias.clone())
            if i < len(layers) - 1:
                h = F.relu(h)
        return h

    def parameter_rrefs(self) -> list:
        """An ``RRef`` to each model parameter (for the trainers' ``DistributedOptimizer``)."""
        return [rpc.RRef(p) for p in self.model.parameters()]

    def trainer_done(self, trainer: str, steps: int) -> None:
        """A trainer finished after ``steps`` optimizer steps."""
        with self._lock:
            self.steps[trainer] = steps
            self._remaining -= 1
            if self._remaining == 0:
                self._all_done.set()

    def wait_for_trainers(self) -> None:
        """Block (without using the CPU) until every trainer called ``trainer_done``."""
        self._all_done.wait()

    def accuracy(self, x, y) -> float:
        """Fraction of ``x`` classified as ``y``, without recording a graph.

        The model has no dropout or normalization, so it is not switched to
        eval mode: that switch would affect trainers' forwards running meanwhile.
        """
        with mg.no_grad():
            predictions = self.model(mg.tensor(x)).argmax(dim=1).numpy()
        return float((predictions == y).mean())


class _ServerHolder:
    """The one ParameterServer of this process, created on first request."""

    lock = threading.Lock()
    server = None


def get_parameter_server(seed: int, num_trainers: int) -> ParameterServer:
    """Run on rank 0 (by RPC from trainers, and locally): the server, created on the first call."""
    with _ServerHolder.lock:
        if _ServerHolder.server is None:
            _ServerHolder.server = ParameterServer(seed, num_trainers)
        return _ServerHolder.server


def run_trainer(args, rank: int, world: int, data) -> None:
    """One trainer's loop over its shard of the training set."""
    x_train, _, y_train, _ = data
    name = f"trainer{rank}"
    ps_rref = rpc.remote(SERVER, get_parameter_server, args=(args.seed, world - 1))
    param_rrefs = ps_rref.rpc_sync().parameter_rrefs()
    optimizer = DistributedOptimizer(mg.optim.SGD, param_rrefs, lr=args.lr, momentum=0.9)
    sampler = DistributedSampler(len(x_train), num_replicas=world - 1, rank=rank - 1, seed=args.seed)
    steps = 0
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        indices = sampler.indices()
        losses = []
        for start in range(0, len(indices), args.batch_size):
            idx = indices[start : start + args.batch_size]
            with dist_autograd.context() as context_id:
                logits = ps_rref.rpc_sync().forward(mg.tensor(x_train[idx]))
                loss = F.cross_entropy(logits, mg.tensor(y_train[idx]))
                dist_autograd.backward(context_id, [loss])
                optimizer.step(context_id)
            losses.append(loss.item())
            steps += 1
        print(f"{name} epoch {epoch + 1}/{args.epochs}: mean loss {np.mean(losses):.4f}", flush=True)
    ps_rref.rpc_sync().trainer_done(name, steps)


def run_server(args, world: int, data) -> float:
    """Rank 0: create the server, wait for the trainers, report the test accuracy."""
    _, x_test, _, y_test = data
    start = time.perf_counter()
    server = get_parameter_server(args.seed, world - 1)
    server.wait_for_trainers()
    elapsed = time.perf_counter() - start
    acc = server.accuracy(x_test, y_test)
    total = sum(server.steps.values())
    print(f"parameter server: {total} updates from {world - 1} trainer(s) "
          f"({', '.join(f'{k}: {v}' for k, v in sorted(server.steps.items()))}) in {elapsed:.1f} s")
    print(f"parameter server: test accuracy {acc:.2%}")
    return acc


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=0.03)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    comm = MPI.COMM_WORLD
    rank, world = comm.Get_rank(), comm.Get_size()
    if world < 2:
        raise SystemExit("run with at least 2 ranks: mpiexec -n 3 python examples/rpc/parameter_server.py")
    data = load_data(args.seed)
    rpc.init_rpc(SERVER if rank == 0 else f"trainer{rank}")
    accuracy = run_server(args, world, data) if rank == 0 else None
    if rank != 0:
        run_trainer(args, rank, world, data)
    rpc.shutdown()
    return accuracy


if __name__ == "__main__":
    main()
