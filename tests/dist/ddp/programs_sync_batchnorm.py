"""Programs run on every rank of a pool by test_sync_batchnorm.py."""

from __future__ import annotations

import numpy as np

import minigrad as mg
import minigrad_dist as dist
from minigrad import nn
from tests.dist.programs_common import ensure_init


def _message(call):
    try:
        call()
    except Exception as error:  # noqa: BLE001  (the test compares types with PyTorch's)
        return type(error).__name__, str(error)
    return None


def sync_bn_steps(spec):
    """Train steps of a converted BatchNorm on this rank's shard; returns everything the test compares.

    ``spec``: ``x`` (steps, N, C, *) full batches, ``g`` the same shape (loss = sum(out * g)), ``rows``
    per rank, ``kind`` ("1d"/"2d"/"3d"), ``kwargs`` of the layer, ``weight``/``bias`` initial values.
    """
    r, n = ensure_init()
    layer = {"1d": nn.BatchNorm1d, "2d": nn.BatchNorm2d, "3d": nn.BatchNorm3d}[spec["kind"]]
    model = nn.Sequential(layer(spec["x"].shape[2], dtype=mg.float64, **spec["kwargs"]))
    if model[0].weight is not None:
        model[0].weight.array[...] = spec["weight"]
    if model[0].bias is not None:
        model[0].bias.array[...] = spec["bias"]
    model = dist.SyncBatchNorm.convert_sync_batchnorm(model)
    start = sum(spec["rows"][:r])
    shard = slice(start, start + spec["rows"][r])
    steps = []
    for x_full, g_full in zip(spec["x"], spec["g"]):
        x = mg.tensor(x_full[shard], requires_grad=True)
        out = model(x)
        (out * mg.tensor(g_full[shard])).sum().backward()
        bn = model[0]
        steps.append({
            "out": out.array.copy(),
            "x_grad": x.grad.array.copy(),
            "weight_grad": None if bn.weight is None else bn.weight.grad.array.copy(),
            "bias_grad": None if bn.bias is None else bn.bias.grad.array.copy(),
            "running": None if bn.running_mean is None else (bn.running_mean.array.copy(), bn.running_var.array.copy(),
                                                             int(bn.num_batches_tracked.array)),
        })
        model.zero_grad()
    model.eval()
    evaluated = model(mg.tensor(spec["x"][-1][shard])).array.copy()
    return {"steps": steps, "eval": evaluated, "type": type(model[0]).__name__}


def sync_bn_errors():
    """Errors of SyncBatchNorm: (type name, message) per call."""
    ensure_init()
    bn = dist.SyncBatchNorm(3)
    calls = {
        "one_dim": lambda: bn(mg.ones(3)),
        "no_channels": lambda: dist.SyncBatchNorm(0)(mg.ones(4, 0)),
        "one_value_per_channel": lambda: bn(mg.ones(1, 3)) if dist.get_rank() == 0 else bn(mg.ones(0, 3)),
    }
    out = {name: _message(call) for name, call in calls.items()}
    x = mg.randn(4, 3, dtype=mg.float64, requires_grad=True)
    y = dist.SyncBatchNorm(3, dtype=mg.float64)(x)
    out["double_backward"] = _message(lambda: mg.autograd.grad(y.pow(3).sum(), x, create_graph=True))
    return out


def sync_bn_subgroup():
    """A SyncBatchNorm on the group of ranks {0, 1} of 3: rank 2 normalizes alone, with its own process group."""
    r, n = ensure_init()
    group = dist.new_group([0, 1])
    solo = dist.new_group([2])
    bn = dist.SyncBatchNorm(2, dtype=mg.float64, process_group=group if r < 2 else solo)
    x = mg.tensor(np.arange(8, dtype=np.float64).reshape(4, 2) + 10 * r)
    out = bn(x).array
    for g in (group, solo):
        if g is not dist.NON_GROUP_MEMBER:
            dist.destroy_process_group(g)
    return out, bn.running_mean.array.copy()
