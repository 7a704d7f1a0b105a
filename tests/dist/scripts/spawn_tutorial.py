"""Run by test_launch.py as a plain ``python spawn_tutorial.py MODE OUTDIR`` (no mpiexec), as PyTorch's tutorials do.

Modes:
  spawn     mp.spawn(train, args=(world,), nprocs=3): every rank all-reduces and passes a token around a ring
  process   one mp.Process per rank, each calling init_process_group(rank=..., world_size=...)
  failures  a rank that raises, one that calls sys.exit(3), a lambda, join=False with pids()
The parent writes OUTDIR/result.json; ranks write OUTDIR/rank-R.json.
"""

from __future__ import annotations

import json
import os
import sys

import numpy as np

import minigrad as mg
import minigrad_dist as dist
import minigrad_dist.multiprocessing as mp


def train(rank, world_size, outdir):
    """A tutorial-style rank: init, all_reduce, a ring of send/recv, then a report."""
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = "12355"
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    t = mg.ones(2) * (rank + 1)
    dist.all_reduce(t, op=dist.ReduceOp.SUM)
    token = np.zeros(1)
    if rank == 0:
        token[0] = 1.0
        dist.send(token, dst=1)
        dist.recv(token, src=world_size - 1)
    else:
        dist.recv(token, src=rank - 1)
        token += 1
        dist.send(token, dst=(rank + 1) % world_size)
    report = {"rank": rank, "mpi_world": dist.get_world_size(), "sum": t.array.tolist(), "token": float(token[0]),
              "pid": os.getpid()}
    with open(os.path.join(outdir, f"rank-{rank}.json"), "w") as f:
        json.dump(report, f)
    dist.destroy_process_group()


def init_process(rank, size, fn, outdir, backend="gloo"):
    """The tutorial's per-process setup."""
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = "29500"
    dist.init_process_group(backend, rank=rank, world_size=size)
    fn(rank, size, outdir)


def run(rank, size, outdir):
    tensor = mg.zeros(1)
    if rank == 0:
        tensor += 1
        dist.send(tensor=tensor, dst=1)
    else:
        dist.recv(tensor=tensor, src=0)
    with open(os.path.join(outdir, f"rank-{rank}.json"), "w") as f:
        json.dump({"rank": rank, "tensor": tensor.array.tolist()}, f)


def fail_on_one(rank, world_size):
    """Rank 1 raises while the others wait for it in a collective (they would wait forever)."""
    dist.init_process_group("gloo")
    if rank == 1:
        raise ValueError("rank 1 cannot go on")
    dist.all_reduce(np.ones(1))


def exit_three(rank):
    if rank == 0:
        sys.exit(3)


def napping(rank, seconds):
    import time  # noqa: PLC0415

    time.sleep(seconds)


def failures(outdir):
    result = {}
    try:
        mp.spawn(fail_on_one, args=(3,), nprocs=3)
    except mp.ProcessRaisedException as error:
        result["raised"] = {"index": error.error_index, "pid": error.error_pid, "msg": str(error)}
    try:
        mp.spawn(exit_three, nprocs=2)
    except mp.ProcessExitedException as error:
        result["exited"] = {"index": error.error_index, "code": error.exit_code, "msg": str(error)}
    try:
        mp.spawn(lambda rank: None, nprocs=2)
    except Exception as error:  # noqa: BLE001  (the type is compared with Python's own pickling error)
        result["lambda"] = {"type": type(error).__name__, "notes": getattr(error, "__notes__", [])}
    context = mp.spawn(napping, args=(1.0,), nprocs=2, join=False)
    pids = context.pids()
    result["context"] = {"pids": len(set(pids)), "early": context.join(timeout=0.01), "final": context.join()}
    p = mp.Process(target=fail_on_one, args=(1, 1))  # a lone process raising: exitcode 1
    p.start()
    p.join()
    result["process_exitcode"] = p.exitcode
    return result


def main(mode, outdir):
    if mode == "spawn":
        mp.spawn(train, args=(3, outdir), nprocs=3, join=True)
        result = {"ok": True}
    elif mode == "process":
        size = 2
        mp.set_start_method("spawn")
        processes = []
        for rank in range(size):
            p = mp.Process(target=init_process, args=(rank, size, run, outdir))
            p.start()
            processes.append(p)
        for p in processes:
            p.join()
        result = {"exitcodes": [p.exitcode for p in processes], "alive": [p.is_alive() for p in processes]}
    else:
        result = failures(outdir)
    with open(os.path.join(outdir, "result.json"), "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
