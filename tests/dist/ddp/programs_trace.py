"""Programs for test_trace.py: DDP training with the timeline switched on."""

from __future__ import annotations

import numpy as np

import minigrad as mg
import minigrad_dist as dist
from minigrad import nn
from minigrad.nn import functional as F
from tests.dist.programs_common import ensure_init


def traced_training(spec):
    """A few traced DDP steps with several buckets; rank 0 writes the trace and the Gantt PNG."""
    rank, world = ensure_init()
    mg.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(), nn.Linear(64, 4))
    ddp = dist.DistributedDataParallel(model, bucket_cap_mb=0.0005, first_bucket_cap_mb=0.0005, trace=True)
    opt = mg.optim.SGD(ddp.parameters(), lr=0.1)
    rng = np.random.default_rng(rank)
    for _ in range(spec["steps"]):
        opt.zero_grad()
        x = mg.tensor(rng.standard_normal((8, 16)).astype(np.float32))
        y = mg.tensor(rng.integers(0, 4, 8))
        F.cross_entropy(ddp(x), y).backward()
        opt.step()
    written = ddp.save_trace(spec["path"])
    buckets = len(ddp.reducer.buckets)
    ddp.close()
    return {"written": None if written is None else [str(p) if p else None for p in written], "buckets": buckets}
