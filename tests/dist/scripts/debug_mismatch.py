"""Ranks all-reduce tensors of different shapes; run by test_reliability.py with MINIGRAD_DIST_DEBUG set.

Usage: debug_mismatch.py [skip]

Without arguments, rank r all-reduces a float32 tensor of shape (3 + r,)
and prints ``rank R caught: <message>`` for the error it gets. With
``skip``, the last rank hangs instead of calling the all_reduce (run with a
collective timeout): the others' checks raise TimeoutError, uncaught, which
aborts the job.
"""

from __future__ import annotations

import sys
import time

import numpy as np

import minigrad_dist as dist


def say(line: str) -> None:
    """One write per line, so that the ranks' lines do not interleave in mpiexec's output."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def main() -> None:
    dist.init_process_group(backend="mpi")
    rank, world = dist.get_rank(), dist.get_world_size()
    say(f"rank {rank} debug level {dist.get_debug_level().name}")
    if sys.argv[1:] == ["skip"]:
        if rank == world - 1:
            time.sleep(3600)
        dist.all_reduce(np.ones(3, dtype=np.float32))
        return
    try:
        dist.all_reduce(np.ones(3 + rank, dtype=np.float32))
    except RuntimeError as error:
        say(f"rank {rank} caught: {error}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
