"""DDP started with mp.spawn: two ranks train a small MLP on their shards; rank 0 reports the result."""

import json
import os
import sys
import tempfile

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: N817  (the tutorials' spelling)


def train(rank, world_size, out_path):
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29533")
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    rng = np.random.default_rng(0)
    x_all = rng.standard_normal((64, 5))
    y_all = x_all @ rng.standard_normal((5, 1)) + 0.1
    model = nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 1)).double()
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.from_numpy(rng.uniform(-0.5, 0.5, tuple(p.shape))))
    ddp = DDP(model)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.05)
    shard = slice(rank * 32, (rank + 1) * 32)
    x, y = torch.from_numpy(x_all[shard]), torch.from_numpy(y_all[shard])
    losses = []
    for _ in range(20):
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(ddp(x), y)
        loss.backward()
        optimizer.step()
        total = loss.detach().clone()
        dist.all_reduce(total)
        losses.append(total.item() / world_size)
    if rank == 0:
        weights = [p.detach().sum().item() for p in model.parameters()]
        with open(out_path, "w") as f:
            json.dump({"losses": losses, "weights": weights, "library": torch.__name__}, f)
    dist.destroy_process_group()


if __name__ == "__main__":
    out = os.path.join(tempfile.mkdtemp(), "result.json")
    mp.spawn(train, args=(2, out), nprocs=2, join=True)
    with open(out) as f:
        result = json.load(f)
    result["tolerance"] = {"rtol": 1e-9}
    print(json.dumps(result))
    sys.stdout.flush()
