"""What each rank holds under DDP, ZeRO-1, ZeRO-2 and FSDP, and that all four train the same model alike.

    mpiexec -n 4 python examples/notebooks/scripts/sharded_memory.py [--steps 2] [--widths 256,1024,1024,256]
                                                                     [--dtype float64]

One MLP, 256 -> 1024 -> 1024 -> 256 in float64 (about 1.6 million parameters;
``--widths`` and ``--dtype`` pick another, e.g. the benchmarks' large MLP
``1024,4096,4096,1024`` in float32), trained with Adam on the same data in four ways:

* ``ddp``: ``DistributedDataParallel``, every rank keeps everything;
* ``zero1``: DDP + ``ZeroRedundancyOptimizer`` (optimizer state sharded);
* ``zero2``: DDP whose buckets are reduce-scattered and whose shards are
  stepped during the backward (``hook_with_zero_step(..., shard_gradients=True)``);
* ``fsdp``: ``fully_shard`` on every Linear and on the model (parameters sharded too).

Each rank measures what it holds with ``minigrad_dist.memory.memory_report``
just after the last backward (gradients as they are before the step, the
optimizer state of the earlier steps, the peak of gathered parameters during
that iteration). Rank 0 prints one line ``RESULT <json>``::

    {"world_size": 4, "num_parameters": ..., "reports": {mode: [report of rank 0, rank 1, ...]},
     "max_difference_from_ddp": {mode: largest |parameter - DDP's parameter| after training}}
"""

from __future__ import annotations

import argparse
import json

import numpy as np

import minigrad as mg
import minigrad_dist as dist
from minigrad import nn
from minigrad_dist import memory
from minigrad_dist.algorithms.ddp_comm_hooks import allreduce_hook
from minigrad_dist.algorithms.ddp_zero_hook import hook_with_zero_step
from minigrad_dist.fsdp import fully_shard
from minigrad_dist.optim import ZeroRedundancyOptimizer

WIDTHS = (256, 1024, 1024, 256)
LR = 1e-3


def build_model(widths, dtype):
    """The MLP, from the same seed on every rank and for every mode."""
    mg.manual_seed(0)
    layers = []
    for i, (a, b) in enumerate(zip(widths[:-1], widths[1:])):
        layers.append(nn.Linear(a, b))
        if i < len(widths) - 2:
            layers.append(nn.Tanh())
    return nn.Sequential(*layers).to(dtype)


def build(mode, widths, dtype):
    """``(model, optimizer)`` for one mode."""
    if mode == "fsdp":
        model = build_model(widths, dtype)
        for layer in model:
            if isinstance(layer, nn.Linear):
                fully_shard(layer)
        fully_shard(model)
        return model, mg.optim.Adam(model.parameters(), lr=LR)
    model = dist.DistributedDataParallel(build_model(widths, dtype))
    if mode == "ddp":
        return model, mg.optim.Adam(model.parameters(), lr=LR)
    if mode == "zero1":
        return model, ZeroRedundancyOptimizer(model.parameters(), optimizer_class=mg.optim.Adam, lr=LR)
    zero = ZeroRedundancyOptimizer(model.parameters(), optimizer_class=mg.optim.Adam, overlap_with_ddp=True, lr=LR)
    model.register_comm_hook(None, hook_with_zero_step(allreduce_hook, model, zero, shard_gradients=True))
    return model, zero


def train(mode, steps, x, y, widths, dtype):
    """Train ``steps`` steps; return the memory report taken after the last backward, and the full parameters."""
    model, optimizer = build(mode, widths, dtype)
    for step in range(steps):
        optimizer.zero_grad()
        if step == steps - 1:
            memory.reset_peaks()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        if step == steps - 1:
            report = memory.memory_report(model, optimizer)
        optimizer.step()
    state = model.state_dict()  # FSDP: the full state dict, gathered (collective); DDP: "module." names
    full = {name.removeprefix("module."): value.array.copy() for name, value in state.items()}
    model.close() if hasattr(model, "close") else None
    return report, full


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--widths", default=",".join(map(str, WIDTHS)))
    parser.add_argument("--dtype", default="float64", choices=["float64", "float32"])
    args = parser.parse_args()
    widths = tuple(int(w) for w in args.widths.split(","))
    dtype = getattr(mg, args.dtype)
    dist.init_process_group()
    rank, world = dist.get_rank(), dist.get_world_size()
    rng = np.random.default_rng(rank)
    x = mg.tensor(rng.standard_normal((8, widths[0]))).to(dtype)
    y = mg.tensor(rng.standard_normal((8, widths[-1]))).to(dtype)
    reports, parameters = {}, {}
    for mode in ("ddp", "zero1", "zero2", "fsdp"):
        report, parameters[mode] = train(mode, args.steps, x, y, widths, dtype)
        reports[mode] = dist.get_default_group().allgather_obj(report)
    differences = {
        mode: max(float(np.abs(parameters[mode][name] - value).max()) for name, value in parameters["ddp"].items())
        for mode in ("zero1", "zero2", "fsdp")
    }
    if rank == 0:
        count = sum(value.size for value in parameters["ddp"].values())
        print("RESULT " + json.dumps({"world_size": world, "num_parameters": int(count), "reports": reports,
                                      "max_difference_from_ddp": differences}))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
