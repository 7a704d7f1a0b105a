"""A parameter server and two trainers over RPC: distributed autograd and a DistributedOptimizer.

The trainers take turns (a turn counter on the server), so the updates land
in the same order in every run and the final weights can be compared.
"""

import json
import os
import tempfile
import threading
import time

import numpy as np
import torch
import torch.distributed.autograd as dist_autograd
import torch.distributed.rpc as rpc
import torch.multiprocessing as mp
import torch.nn as nn
from torch.distributed.optim import DistributedOptimizer


class ParameterServer:
    def __init__(self):
        self.model = nn.Linear(4, 1).double()
        with torch.no_grad():
            self.model.weight.copy_(torch.tensor([[0.5, -0.25, 0.1, 0.0]], dtype=torch.float64))
            self.model.bias.fill_(0.2)
        self.turn = 0
        self.lock = threading.Lock()


SERVER = None


def forward(x):
    return SERVER.model(x)


def parameter_rrefs():
    return [rpc.RRef(p) for p in SERVER.model.parameters()]


def current_turn():
    return SERVER.turn


def advance_turn():
    with SERVER.lock:
        SERVER.turn += 1


def weights():
    return [p.detach().reshape(-1).tolist() for p in SERVER.model.parameters()]


def trainer(index, steps=5):
    rng = np.random.default_rng(index)
    optimizer = DistributedOptimizer(torch.optim.SGD, rpc.rpc_sync("ps", parameter_rrefs), lr=0.1)
    losses = []
    for step in range(steps):
        while rpc.rpc_sync("ps", current_turn) != 2 * step + index:
            time.sleep(0.002)
        x = torch.from_numpy(rng.standard_normal((8, 4)))
        y = x.sum(dim=1, keepdim=True)
        with dist_autograd.context() as context_id:
            loss = ((rpc.rpc_sync("ps", forward, args=(x,)) - y) ** 2).mean()
            dist_autograd.backward(context_id, [loss])
            optimizer.step(context_id)
        losses.append(loss.item())
        rpc.rpc_sync("ps", advance_turn)
    return losses


def run(rank, world_size, out_path):
    global SERVER
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29535")
    if rank == 0:
        SERVER = ParameterServer()
        rpc.init_rpc("ps", rank=rank, world_size=world_size)
    else:
        rpc.init_rpc(f"trainer{rank}", rank=rank, world_size=world_size)
        losses = trainer(rank - 1)
        with open(f"{out_path}.{rank}", "w") as f:
            json.dump(losses, f)
    rpc.shutdown()
    if rank == 0:
        with open(out_path, "w") as f:
            json.dump({"weights": weights(), "library": torch.__name__}, f)


if __name__ == "__main__":
    out = os.path.join(tempfile.mkdtemp(), "result.json")
    mp.spawn(run, args=(3, out), nprocs=3)
    result = {}
    with open(out) as f:
        result.update(json.load(f))
    for rank in (1, 2):
        with open(f"{out}.{rank}") as f:
            result[f"trainer{rank}_losses"] = json.load(f)
    result["tolerance"] = {"rtol": 1e-10}
    print(json.dumps(result))
