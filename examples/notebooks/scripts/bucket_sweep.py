"""Step time of DistributedDataParallel for several bucket caps (notebook 02's bucket-size curve).

    mpiexec -n 2 python examples/notebooks/scripts/bucket_sweep.py [--caps 0.03,0.25,1,4,32] [--steps 8]

Every rank trains the same MLP (``--sizes``, float32) on its own random batch
of ``--batch`` rows with SGD. For each cap, DDP is built with
``bucket_cap_mb = first_bucket_cap_mb = cap`` (so the first bucket follows the
cap too), and the median time of ``--steps`` steps (forward, backward with the
overlapped allreduces, optimizer step) is measured after one warm-up step. The
same training without DDP on one rank gives the local step time for reference.

Rank 0 prints one line ``RESULT <json>``::

    {"world_size": 2, "params": 1321994, "local_ms": 31.0,
     "sweep": [{"cap_mb": 0.03, "buckets": 6, "step_ms": 40.1}, ...]}
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np

import minigrad as mg
import minigrad_dist as dist
from minigrad import nn
from minigrad.nn import functional as F


def mlp(sizes) -> nn.Module:
    """A ReLU MLP with the same initial weights on every rank."""
    mg.manual_seed(0)
    layers = []
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
        layers.append(nn.Linear(a, b))
        if i < len(sizes) - 2:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


def median_step_ms(runner, x, y, steps: int) -> float:
    """Median milliseconds of one SGD step of ``runner`` (a model or its DDP wrapper), after a warm-up step."""
    optimizer = mg.optim.SGD(runner.parameters(), lr=0.01)
    samples = []
    for i in range(steps + 1):
        dist.barrier()  # every rank starts the step together: the time includes waiting for the slowest
        start = time.perf_counter()
        optimizer.zero_grad()
        F.cross_entropy(runner(x), y).backward()
        optimizer.step()
        if i > 0:
            samples.append((time.perf_counter() - start) * 1e3)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="256,1024,1024,10", help="layer widths, comma-separated")
    parser.add_argument("--batch", type=int, default=64, help="rows per rank per step")
    parser.add_argument("--caps", default="0.03,0.25,1,4,32", help="bucket caps in MiB, comma-separated")
    parser.add_argument("--steps", type=int, default=8, help="timed steps per cap")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]

    dist.init_process_group()
    rank = dist.get_rank()
    rng = np.random.default_rng(rank)
    x = mg.tensor(rng.standard_normal((args.batch, sizes[0])).astype(np.float32))
    y = mg.tensor(rng.integers(0, sizes[-1], size=args.batch))

    local = mlp(sizes)
    result = {
        "world_size": dist.get_world_size(),
        "params": sum(p.numel() for p in local.parameters()),
        "local_ms": median_step_ms(local, x, y, args.steps),
        "sweep": [],
    }
    for cap in (float(c) for c in args.caps.split(",")):
        ddp = dist.DistributedDataParallel(mlp(sizes), bucket_cap_mb=cap, first_bucket_cap_mb=cap)
        step_ms = median_step_ms(ddp, x, y, args.steps)
        result["sweep"].append({"cap_mb": cap, "buckets": len(ddp.reducer.buckets), "step_ms": step_ms})
        ddp.close()
    if rank == 0:
        print("RESULT " + json.dumps(result), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
