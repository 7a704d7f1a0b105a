"""DDP training in which one rank fails at some step; run by test_reliability.py under mpiexec.

Usage: ddp_failure.py MODE FAILING_RANK FAIL_STEP

MODE: ``raise`` (an uncaught exception in the main thread), ``thread`` (an
uncaught exception in a helper thread while the main thread trains on),
``sigkill`` (the rank kills itself), ``hang`` (the rank sleeps forever; the
others must time out: run with MINIGRAD_DIST_TIMEOUT). Without the failure
handling, every mode but ``sigkill`` leaves the job running forever (or, for
``thread``, ends it normally). Prints ``finished rank R`` on normal completion.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

import minigrad_dist as dist
from tests.dist import programs_reliability as programs

STEPS = 20000  # far more than the failure needs (a step takes about 1 ms): the job must end because of it


def fail(mode: str, rank: int, step: int) -> None:
    if mode == "raise":
        raise RuntimeError(f"injected failure on rank {rank} at step {step}")
    if mode == "thread":
        def broken():
            raise RuntimeError(f"injected failure in a thread of rank {rank} at step {step}")

        threading.Thread(target=broken, name="broken-helper").start()
    elif mode == "sigkill":
        os.kill(os.getpid(), signal.SIGKILL)
    elif mode == "hang":
        time.sleep(3600)
    else:
        raise ValueError(f"unknown mode {mode!r}")


def main() -> None:
    mode, failing_rank, fail_step = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    dist.init_process_group(backend="mpi")
    rank = dist.get_rank()
    model, ddp, opt, sampler = programs.build_training(0, rank)

    def on_step(step):
        if rank == failing_rank and step == fail_step:
            fail(mode, rank, step)

    programs.train_steps(ddp, opt, sampler, 0, STEPS, programs.dataset(), on_step=on_step)
    print(f"finished rank {rank}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
