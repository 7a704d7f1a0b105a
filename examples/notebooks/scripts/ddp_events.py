"""The order of DDP's events on every rank: gradients ready, buckets launched, backward done.

    mpiexec -n 2 python examples/notebooks/scripts/ddp_events.py [--model sequential|shuffled]
                                                                 [--cap-bytes 256] [--iterations 2]

Two float64 models of three ``Linear`` layers (8 -> 16 -> 16 -> 4):

* ``sequential``: the layers are registered in the order the forward uses
  them, so gradients become ready in reverse registration order, the order
  DDP's buckets are built in;
* ``shuffled``: the same layers registered in the opposite order (``last``
  first), so the gradients arrive in the order *opposite* to the buckets
  until DDP rebuilds its buckets after the first iteration.

The cap (``bucket_cap_mb`` and ``first_bucket_cap_mb``) is ``--cap-bytes``:
256 bytes puts each layer's weight and bias in a bucket of their own.

What is recorded, per rank and iteration, with milliseconds since the
iteration's backward started:

* ``["grad", name, ms]``: a post-accumulate-grad hook registered on each
  parameter *before* DDP wraps the model (so it runs before the Reducer's own
  hook): that parameter's gradient is ready;
* ``["launch", bucket index, [names], ms]``: a comm hook that records the
  bucket and then averages it like DDP's default (``allreduce_hook``);
* ``["done", ms]``: ``loss.backward()`` returned (every bucket reduced
  and written back to ``.grad``).

Rank 0 prints one line ``RESULT <json>``::

    {"buckets": [[[names of bucket 0], ...] before iteration 0, ... after the last],
     "events": [[[events of iteration 0], [events of iteration 1]] for each rank],
     "grads_equal_across_ranks": true}
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

import minigrad as mg
import minigrad_dist as dist
from minigrad import nn
from minigrad.nn import functional as F
from minigrad_dist.algorithms.ddp_comm_hooks import allreduce_hook


class Sequential3(nn.Module):
    """``first -> tanh -> middle -> tanh -> last``, registered in the order used."""

    def __init__(self):
        super().__init__()
        self.first = nn.Linear(8, 16)
        self.middle = nn.Linear(16, 16)
        self.last = nn.Linear(16, 4)

    def forward(self, x):
        return self.last(self.middle(self.first(x).tanh()).tanh())


class Shuffled3(nn.Module):
    """The same computation with the layers registered last to first."""

    def __init__(self):
        super().__init__()
        self.last = nn.Linear(16, 4)
        self.middle = nn.Linear(16, 16)
        self.first = nn.Linear(8, 16)

    def forward(self, x):
        return self.last(self.middle(self.first(x).tanh()).tanh())


MODELS = {"sequential": Sequential3, "shuffled": Shuffled3}


class Recorder:
    """Collects ``[kind, what, ms]`` events of the current iteration."""

    def __init__(self):
        self.start = time.perf_counter()
        self.events = []

    def restart(self) -> None:
        self.start = time.perf_counter()
        self.events = []

    def add(self, *fields) -> None:
        """Record ``[*fields, ms]``."""
        self.events.append([*fields, round((time.perf_counter() - self.start) * 1e3, 3)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=sorted(MODELS), default="sequential")
    parser.add_argument("--cap-bytes", type=int, default=256)
    parser.add_argument("--iterations", type=int, default=2)
    args = parser.parse_args()

    dist.init_process_group()
    rank = dist.get_rank()
    mg.manual_seed(0)
    model = MODELS[args.model]().double()
    names = {id(p): n for n, p in model.named_parameters()}
    recorder = Recorder()
    for name, param in model.named_parameters():
        param.register_post_accumulate_grad_hook(lambda p, name=name: recorder.add("grad", name))

    def recording_hook(state, bucket):
        recorder.add("launch", bucket.index(), [names[id(p)] for p in bucket.parameters()])
        return allreduce_hook(state, bucket)

    cap_mb = args.cap_bytes / 2**20
    ddp = dist.DistributedDataParallel(model, bucket_cap_mb=cap_mb, first_bucket_cap_mb=cap_mb)
    ddp.register_comm_hook(None, recording_hook)
    optimizer = mg.optim.SGD(ddp.parameters(), lr=0.1)
    rng = np.random.default_rng(rank)
    param_names = [n for n, _ in model.named_parameters()]

    def bucket_names():
        return [[param_names[i] for i in bucket] for bucket in ddp.reducer.bucket_order()]

    buckets, iterations = [bucket_names()], []
    for _ in range(args.iterations):
        x = mg.tensor(rng.standard_normal((6, 8)))
        y = mg.tensor(rng.integers(0, 4, size=6))
        optimizer.zero_grad()
        loss = F.cross_entropy(ddp(x), y)
        recorder.restart()
        loss.backward()
        recorder.add("done")
        iterations.append(recorder.events)
        buckets.append(bucket_names())
        optimizer.step()

    grads = np.concatenate([p.grad.numpy().ravel() for p in model.parameters()])
    all_events = dist.get_default_group().gather_obj(iterations, 0)
    all_grads = dist.get_default_group().gather_obj(grads, 0)
    if rank == 0:
        result = {
            "buckets": buckets,
            "events": all_events,
            "grads_equal_across_ranks": all(np.array_equal(g, all_grads[0]) for g in all_grads),
        }
        print("RESULT " + json.dumps(result), flush=True)
    ddp.close()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
