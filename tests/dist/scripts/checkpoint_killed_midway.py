"""Rank 0 is killed while writing a checkpoint over a good one; run by test_reliability.py under mpiexec.

Usage: checkpoint_killed_midway.py CHECKPOINT_PATH EXPECTED_PARAMS_PATH

Trains 2 steps and saves a checkpoint (step 2) to CHECKPOINT_PATH, with the
parameters also written to EXPECTED_PARAMS_PATH (an .npz) for the test to
compare; trains 2 more steps and saves again, but rank 0 SIGKILLs itself
after the first array of the new checkpoint reached the disk.
"""

from __future__ import annotations

import os
import signal
import sys

import numpy as np

import minigrad_dist as dist
from minigrad import serialization
from tests.dist import programs_reliability as programs


def kill_after_first_array():
    original = serialization._write_array

    def write_then_die(archive, entry, array):
        original(archive, entry, array)
        archive.fp.flush()
        os.kill(os.getpid(), signal.SIGKILL)

    serialization._write_array = write_then_die


def main() -> None:
    path, expected_path = sys.argv[1], sys.argv[2]
    dist.init_process_group(backend="mpi")
    rank = dist.get_rank()
    model, ddp, opt, sampler = programs.build_training(0, rank)
    data = programs.dataset()
    programs.train_steps(ddp, opt, sampler, 0, 2, data)
    dist.save_checkpoint(path, ddp, opt, sampler, step=2, extra={"marker": "good"})
    if rank == 0:
        np.savez(expected_path, **programs.params_of(model))
    programs.train_steps(ddp, opt, sampler, 2, 4, data)
    if rank == 0:
        kill_after_first_array()
    dist.save_checkpoint(path, ddp, opt, sampler, step=4, extra={"marker": "never"})
    print(f"save survived on rank {rank}", flush=True)


if __name__ == "__main__":
    main()
