"""Point-to-point ring: each of three ranks passes a tensor to its right neighbour with isend/irecv, three times."""

import json
import os
import tempfile

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def ring(rank, world_size, out_path):
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29534")
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    value = torch.arange(4, dtype=torch.float64) + 10.0 * rank
    received = torch.zeros(4, dtype=torch.float64)
    history = []
    for _ in range(3):
        send = dist.isend(value, dst=(rank + 1) % world_size)
        recv = dist.irecv(received, src=(rank - 1) % world_size)
        send.wait()
        recv.wait()
        value = received * 2 + 1
        history.append(value.tolist())
    if rank == 0:
        peer = torch.zeros(1)
        sender = dist.recv(peer)  # from whichever rank sends first
        with open(out_path, "w") as f:
            json.dump({"history": history, "peer_value": peer.item(), "sender": sender,
                       "library": torch.__name__}, f)
    elif rank == 1:
        dist.send(torch.tensor([7.0]), dst=0)
    dist.destroy_process_group()


if __name__ == "__main__":
    out = os.path.join(tempfile.mkdtemp(), "result.json")
    mp.spawn(ring, args=(3, out), nprocs=3)
    with open(out) as f:
        print(json.dumps(json.load(f)))
