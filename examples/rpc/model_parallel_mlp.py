"""Model parallelism with RPC: an MLP split into two stages on two workers, trained on the digits data.

    mpiexec -n 3 python examples/rpc/model_parallel_mlp.py [--epochs 10]
    mpiexec -n 2 python examples/rpc/model_parallel_mlp.py     # the driver also holds stage 1

With 3 ranks, worker0 is the driver (it holds the data, computes the loss
and runs the training loop), worker1 owns stage 1 (Linear 64-128, ReLU) and
worker2 stage 2 (Linear 128-64, ReLU, Linear 64-10). With 2 ranks, the
driver also owns stage 1.

The stages are modules created on their workers with ``rpc.remote``; the
driver only holds RRefs to them. One forward pass:

1. the driver wraps the input in a local ``RRef`` and asks stage 1 for
   ``stage1.remote().forward(x_rref)``: an RRef to the hidden activations,
   which stay on stage 1's worker;
2. stage 2 runs ``stage2.rpc_sync().forward(h_rref)``: it fetches the
   activations straight from stage 1 (``to_here``, which attaches a
   send/recv pair) and returns the logits to the driver.

The backward (``dist_autograd.backward``) follows the pairs in reverse:
driver -> stage 2 -> stage 1; each stage's parameter gradients land in its
own context, and ``DistributedOptimizer`` steps an SGD optimizer on each
stage's worker.

Before training, a float64 copy of the model takes one step on one batch and
its gradients (and updated weights) are compared with the same MLP run
locally in one process: they agree to float64 rounding.
"""

from __future__ import annotations

import argparse
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
from minigrad_dist.optim import DistributedOptimizer

SPLIT = 2  # modules [0, SPLIT) of make_mlp() form stage 1, the rest stage 2


def load_data(seed: int):
    """Digits scaled to [0, 1] and flattened: (x_train, x_test, y_train, y_test), float32 / int64."""
    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)
    y = digits.target.astype(np.int64)
    return train_test_split(x, y, test_size=0.25, random_state=seed, stratify=y)


def make_mlp(dtype=mg.float32) -> nn.Sequential:
    """The whole model, 64 -> 128 -> 64 -> 10 with ReLU (what the two stages split)."""
    return nn.Sequential(nn.Linear(64, 128, dtype=dtype), nn.ReLU(), nn.Linear(128, 64, dtype=dtype), nn.ReLU(),
                         nn.Linear(64, 10, dtype=dtype))


class Stage(nn.Module):
    """Modules ``[start, stop)`` of ``make_mlp(dtype)``, created on the worker that owns the stage.

    Args:
        start, stop: which modules of the MLP this stage runs.
        state: initial weights, ``{name: array}`` as in the slice's ``state_dict()``.
        dtype: the parameters' dtype.
    """

    def __init__(self, start: int, stop: int, state: dict, dtype):
        super().__init__()
        self.net = make_mlp(dtype)[start:stop]
        self.net.load_state_dict(state)

    def forward(self, x_rref):
        """Fetch the input from wherever it lives (an RRef) and run this stage on it."""
        return self.net(x_rref.to_here())

    def parameter_rrefs(self) -> list:
        """An ``RRef`` to each parameter (for the driver's ``DistributedOptimizer``)."""
        return [rpc.RRef(p) for p in self.parameters()]

    def gradients(self, context_id: int) -> list:
        """This stage's parameter gradients accumulated in a distributed autograd context (or None)."""
        grads = dist_autograd.get_gradients(context_id)
        return [grads.get(p) for p in self.parameters()]

    def weights(self) -> list:
        """Copies of the current parameter values."""
        return [p.detach().numpy().copy() for p in self.parameters()]


class DistributedMLP:
    """The driver's view of the two-stage model: RRefs to the stages and the forward that chains them.

    Args:
        local: an MLP built by ``make_mlp`` whose weights the stages start from.
        workers: the names of the workers that own stage 1 and stage 2.
    """

    def __init__(self, local: nn.Sequential, workers):
        dtype = local[0].weight.dtype
        states = [_state(local[:SPLIT]), _state(local[SPLIT:])]
        self.stage1 = rpc.remote(workers[0], Stage, args=(0, SPLIT, states[0], dtype))
        self.stage2 = rpc.remote(workers[1], Stage, args=(SPLIT, len(local), states[1], dtype))

    def __call__(self, x):
        """Logits ``(batch, 10)`` for ``x`` ``(batch, 64)``; the hidden activations never visit the driver."""
        hidden_rref = self.stage1.remote().forward(rpc.RRef(x))
        return self.stage2.rpc_sync().forward(hidden_rref)

    def parameter_rrefs(self) -> list:
        """RRefs to every parameter, stage 1's first (the order of ``make_mlp().parameters()``)."""
        return self.stage1.rpc_sync().parameter_rrefs() + self.stage2.rpc_sync().parameter_rrefs()

    def gradients(self, context_id: int) -> list:
        """Every parameter's gradient in ``context_id``, in the order of ``parameter_rrefs``."""
        return self.stage1.rpc_sync().gradients(context_id) + self.stage2.rpc_sync().gradients(context_id)

    def weights(self) -> list:
        """Copies of every parameter's current value, in the order of ``parameter_rrefs``."""
        return self.stage1.rpc_sync().weights() + self.stage2.rpc_sync().weights()


def _state(module) -> dict:
    return {name: value.detach().numpy().copy() for name, value in module.state_dict().items()}


def check_against_local(x, y, workers, seed: int, lr: float) -> float:
    """One float64 SGD step of the split model vs the same MLP in this process; returns the worst difference."""
    mg.manual_seed(seed)
    local = make_mlp(mg.float64)
    model = DistributedMLP(local, workers)
    optimizer = DistributedOptimizer(mg.optim.SGD, model.parameter_rrefs(), lr=lr)
    inputs, targets = mg.tensor(x.astype(np.float64)), mg.tensor(y)
    with dist_autograd.context() as context_id:
        loss = F.cross_entropy(model(inputs), targets)
        dist_autograd.backward(context_id, [loss])
        distributed = [g.numpy() for g in model.gradients(context_id)]
        optimizer.step(context_id)
    stepped = model.weights()

    local_loss = F.cross_entropy(local(inputs), targets)
    local_loss.backward()
    reference = [p.grad.numpy() for p in local.parameters()]
    mg.optim.SGD(local.parameters(), lr=lr).step()
    grad_error = max(float(np.abs(a - b).max()) for a, b in zip(distributed, reference))
    weight_error = max(float(np.abs(a - p.detach().numpy()).max()) for a, p in zip(stepped, local.parameters()))
    print(f"float64 check, first step on {len(x)} samples: loss {loss.item():.12f} (local {local_loss.item():.12f})")
    print(f"  max |distributed grad - local grad| over {len(reference)} parameters: {grad_error:.2e}")
    print(f"  max |weights after DistributedOptimizer step - local SGD step|: {weight_error:.2e}")
    worst = max(grad_error, weight_error, abs(loss.item() - local_loss.item()))
    if worst > 1e-12:
        raise SystemExit("the split model's gradients differ from the local MLP beyond float64 rounding")
    print("  gradients and updated weights equal the local MLP's (float64 rounding)")
    return worst


def accuracy(model, x, y) -> float:
    """Test accuracy through the split model."""
    predictions = model(mg.tensor(x)).argmax(dim=1).numpy()
    return float((predictions == y).mean())


def train(args, data, workers) -> float:
    """Train the split model (float32) with distributed autograd and DistributedOptimizer."""
    x_train, x_test, y_train, y_test = data
    mg.manual_seed(args.seed)
    model = DistributedMLP(make_mlp(), workers)
    optimizer = DistributedOptimizer(mg.optim.SGD, model.parameter_rrefs(), lr=args.lr, momentum=0.9)
    rng = np.random.default_rng(args.seed)
    start = time.perf_counter()
    for epoch in range(args.epochs):
        order = rng.permutation(len(x_train))
        losses = []
        for begin in range(0, len(order), args.batch_size):
            idx = order[begin : begin + args.batch_size]
            with dist_autograd.context() as context_id:
                loss = F.cross_entropy(model(mg.tensor(x_train[idx])), mg.tensor(y_train[idx]))
                dist_autograd.backward(context_id, [loss])
                optimizer.step(context_id)
            losses.append(loss.item())
        print(f"epoch {epoch + 1}/{args.epochs}: mean loss {np.mean(losses):.4f}, "
              f"test accuracy {accuracy(model, x_test, y_test):.2%}", flush=True)
    acc = accuracy(model, x_test, y_test)
    print(f"model parallel MLP ({workers[0]}: stage 1, {workers[1]}: stage 2): test accuracy {acc:.2%} "
          f"after {args.epochs} epochs ({time.perf_counter() - start:.1f} s)")
    return acc


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    comm = MPI.COMM_WORLD
    rank, world = comm.Get_rank(), comm.Get_size()
    if world not in (2, 3):
        raise SystemExit(f"run with 2 or 3 ranks (got {world}): mpiexec -n 3 python examples/rpc/model_parallel_mlp.py")
    rpc.init_rpc(f"worker{rank}")
    result = None
    if rank == 0:
        workers = (f"worker{world - 2}", f"worker{world - 1}")
        data = load_data(args.seed)
        check_against_local(data[0][: args.batch_size], data[2][: args.batch_size], workers, args.seed, args.lr)
        result = train(args, data, workers)
    rpc.shutdown()
    return result


if __name__ == "__main__":
    main()
