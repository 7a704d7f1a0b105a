"""When FSDP's all-gathers and reduce-scatters run, and ZeRO-2's bucket reductions, as DDP-format timelines.

    mpiexec -n 2 python examples/notebooks/scripts/sharded_timeline.py OUT_FOLDER

Two iterations of an MLP 64 -> 256 -> 256 -> 256 -> 8 (float64) under

* FSDP: ``fully_shard`` on each Linear and on the model, its ``timeline``
  a ``ddp.trace.Tracer``: every all-gather (``gather``, or ``prefetch`` of
  the next unit), unit forward, pre-backward, reshard and reduce-scatter is
  an instant on its lane, and ``tracer.start()`` adds every backward graph node;
* ZeRO-2: DDP with ``trace=True`` and ``hook_with_zero_step(...,
  shard_gradients=True)``: the Reducer's own lanes (hooks, ready buckets,
  the bucket reductions, which are reduce-scatters here).

Rank 0 writes ``OUT_FOLDER/fsdp_trace.json`` (+ ``.png``) and
``OUT_FOLDER/zero2_trace.json`` (+ ``.png``), Chrome trace JSON you can open in
https://ui.perfetto.dev, and prints one line ``RESULT <json>``::

    {"fsdp_events": [[lane, name] of rank 0's second iteration, in time order],
     "zero2_reductions": number of bucket reductions rank 0 saw in its trace}
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

import minigrad as mg
import minigrad_dist as dist
from minigrad import nn
from minigrad_dist.algorithms.ddp_comm_hooks import allreduce_hook
from minigrad_dist.algorithms.ddp_zero_hook import hook_with_zero_step
from minigrad_dist.ddp.trace import Tracer, plot_gantt, write_trace
from minigrad_dist.fsdp import fully_shard
from minigrad_dist.optim import ZeroRedundancyOptimizer

WIDTHS = (64, 256, 256, 256, 8)


def build_model():
    mg.manual_seed(0)
    layers = []
    for i, (a, b) in enumerate(zip(WIDTHS[:-1], WIDTHS[1:])):
        layers.append(nn.Linear(a, b))
        if i < len(WIDTHS) - 2:
            layers.append(nn.Tanh())
    return nn.Sequential(*layers).double()


def fsdp_events(x, y):
    """Two FSDP iterations recorded by a Tracer; returns the tracer and where the second iteration starts."""
    model = build_model()
    for layer in model:
        if isinstance(layer, nn.Linear):
            fully_shard(layer)
    fully_shard(model)
    optimizer = mg.optim.SGD(model.parameters(), lr=0.1)
    tracer = Tracer(dist.get_rank())
    model.timeline = tracer
    tracer.start()
    second = 0
    for iteration in range(2):
        if iteration == 1:
            second = len(tracer.events)
        optimizer.zero_grad()
        ((model(x) - y) ** 2).mean().backward()
        optimizer.step()
    tracer.stop()
    model.close()
    return tracer, second


def zero2_trace(x, y, path):
    """Two ZeRO-2 iterations of DDP with tracing on; saves the trace (collective) and returns rank 0's events."""
    ddp = dist.DistributedDataParallel(build_model(), trace=True, bucket_cap_mb=0.25, first_bucket_cap_mb=0.25)
    zero = ZeroRedundancyOptimizer(ddp.parameters(), optimizer_class=mg.optim.SGD, overlap_with_ddp=True, lr=0.1)
    ddp.register_comm_hook(None, hook_with_zero_step(allreduce_hook, ddp, zero, shard_gradients=True))
    for _ in range(2):
        zero.zero_grad()
        ((ddp(x) - y) ** 2).mean().backward()
        zero.step()
    ddp.save_trace(path)
    events = list(ddp._tracer.events)
    ddp.close()
    return events


def main():
    out = Path(sys.argv[1])
    dist.init_process_group()
    rank = dist.get_rank()
    rng = np.random.default_rng(rank)
    x, y = mg.tensor(rng.standard_normal((16, WIDTHS[0]))), mg.tensor(rng.standard_normal((16, WIDTHS[-1])))
    tracer, second = fsdp_events(x, y)
    gathered = dist.get_default_group().gather_obj((rank, tracer.events), 0)
    if rank == 0:
        json_path = write_trace(out / "fsdp_trace.json", gathered)
        plot_gantt(json_path, gathered, title="FSDP: all-gathers, unit compute and reduce-scatters per rank")
    zero_events = zero2_trace(x, y, out / "zero2_trace.json")
    if rank == 0:
        ordered = sorted(tracer.events[second:], key=lambda event: event[3])
        print("RESULT " + json.dumps({
            "fsdp_events": [[lane, name] for _, lane, name, *_ in ordered if lane != "backward"],
            "zero2_reductions": sum(1 for event in zero_events if event[1] == "allreduce"),
        }))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
