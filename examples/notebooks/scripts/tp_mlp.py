"""Megatron's tensor-parallel MLP on the ranks of a ``tp`` mesh: equal to the full MLP, and its all-reduces counted.

    mpiexec -n 2 python examples/notebooks/scripts/tp_mlp.py

Every rank builds the same full MLP ``fc2(GELU(fc1(x)))`` (6 -> 16 -> 10,
float64, weights from a fixed seed) and the same batch, then

1. cuts it with ``TensorParallelMLP.from_linears`` over ``mesh["tp"]``
   (fc1 by columns of its output, fc2 by rows of its input);
2. runs one forward and one backward of the block and of the full MLP,
   recording every ``collectives.all_reduce`` call (the only collective f
   and g use) with the phase it happened in;
3. compares the block's output, input gradient and parameter gradients with
   the full MLP's (this rank's slices of them).

Rank 0 prints one line ``RESULT <json>``::

    {"world_size": p,
     "ranks": [per rank: {"shapes": {parameter: shape}, "all_reduces": [[phase, shape], ...],
               "max_difference": {"output"|"input grad"|parameter grad: largest |tp - full|}}]}
"""

from __future__ import annotations

import json

import numpy as np

import minigrad as mg
import minigrad_dist as dist
from minigrad import nn
from minigrad_dist import collectives
from minigrad_dist.device_mesh import init_device_mesh
from minigrad_dist.tensor_parallel import TensorParallelMLP

IN, HIDDEN, OUT, BATCH = 6, 16, 10, 4


def full_mlp():
    """``(fc1, fc2)``: the full layers, the same on every rank (seeded)."""
    rng = np.random.default_rng(0)
    fc1 = nn.Linear(IN, HIDDEN, dtype=mg.float64)
    fc2 = nn.Linear(HIDDEN, OUT, dtype=mg.float64)
    with mg.no_grad():
        for p in [*fc1.parameters(), *fc2.parameters()]:
            p.copy_(mg.tensor(rng.standard_normal(p.shape) * 0.5))
    return fc1, fc2


def recording_all_reduces(log, phase):
    """Wrap ``collectives.all_reduce`` so every call appends ``[phase[0], shape]`` to ``log``; returns the original."""
    original = collectives.all_reduce

    def recorded(tensor, *args, **kwargs):
        log.append([phase[0], list(tensor.shape)])
        return original(tensor, *args, **kwargs)

    collectives.all_reduce = recorded
    return original


def main():
    dist.init_process_group()
    mesh = init_device_mesh("cpu", (dist.get_world_size(),), mesh_dim_names=("tp",))
    group = mesh["tp"].get_group()
    rank, size = dist.get_rank(), dist.get_world_size()
    fc1, fc2 = full_mlp()
    block = TensorParallelMLP.from_linears(fc1, nn.GELU(), fc2, process_group=group)
    x = np.random.default_rng(1).standard_normal((BATCH, IN))
    target = np.random.default_rng(2).standard_normal((BATCH, OUT))

    x_full = mg.tensor(x, requires_grad=True)
    y_full = fc2(nn.GELU()(fc1(x_full)))
    ((y_full - mg.tensor(target)) ** 2).mean().backward()

    log, phase = [], ["forward"]
    original = recording_all_reduces(log, phase)
    x_tp = mg.tensor(x, requires_grad=True)
    y_tp = block(x_tp)
    phase[0] = "backward"
    ((y_tp - mg.tensor(target)) ** 2).mean().backward()
    collectives.all_reduce = original

    width = HIDDEN // size
    own = slice(rank * width, (rank + 1) * width)  # this rank's hidden units: rows of fc1, columns of fc2
    pairs = {
        "output": (y_tp, y_full),
        "input grad": (x_tp.grad, x_full.grad),
        "fc1.weight grad": (block.fc1.weight.grad, fc1.weight.grad[own]),
        "fc1.bias grad": (block.fc1.bias.grad, fc1.bias.grad[own]),
        "fc2.weight grad": (block.fc2.weight.grad, fc2.weight.grad[:, own]),
        "fc2.bias grad": (block.fc2.bias.grad, fc2.bias.grad),
    }
    report = {
        "shapes": {name: list(p.shape) for name, p in block.named_parameters()},
        "all_reduces": log,
        "max_difference": {
            k: float(np.abs(a.detach().numpy() - b.detach().numpy()).max()) for k, (a, b) in pairs.items()
        },
    }
    gathered = dist.get_default_group().gather_obj(report, 0)
    if rank == 0:
        print("RESULT " + json.dumps({"world_size": size, "ranks": gathered}))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
