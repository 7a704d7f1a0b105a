"""Helpers shared by the rank programs of every area (``*/programs_*.py``): start a group or RPC, wait, catch."""

from __future__ import annotations

import time

import minigrad_dist as dist
from minigrad_dist.mpi import load_mpi


def ensure_init():
    """Initialize the default process group once per pool process."""
    if not dist.is_initialized():
        dist.init_process_group(backend="mpi")
    return dist.get_rank(), dist.get_world_size()


def message_of(call):
    """The exception ``call()`` raised, as ``(type name, message)``; None when it returned."""
    try:
        call()
    except Exception as error:  # noqa: BLE001  (the tests compare types with PyTorch's)
        return type(error).__name__, str(error)
    return None


def polite_barrier():
    """Wait for every rank of COMM_WORLD without spinning (a nonblocking barrier, tested every 0.1 ms)."""
    request = load_mpi().COMM_WORLD.Ibarrier()
    while not request.Test():
        time.sleep(1e-4)


def start_rpc():
    """``init_rpc("worker<rank>")`` on this rank; returns ``(rank, world size)``."""
    import minigrad_dist.rpc as rpc  # here: the collectives' programs need not load RPC

    comm = load_mpi().COMM_WORLD
    rank, world = comm.Get_rank(), comm.Get_size()
    rpc.init_rpc(f"worker{rank}")
    return rank, world
