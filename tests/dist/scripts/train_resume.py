"""Train, or train part of the way and checkpoint, or resume; run by test_reliability.py under mpiexec.

Usage: train_resume.py PHASE CHECKPOINT_PATH OUTPUT_PREFIX TOTAL_STEPS STOP_AT

PHASE ``straight`` trains TOTAL_STEPS steps; ``first`` trains STOP_AT steps
and saves a checkpoint; ``resume`` starts from other weights and generator
seeds, loads the checkpoint and trains to TOTAL_STEPS. Each rank writes its
final parameters to OUTPUT_PREFIX + ``.rank<R>.npz``.
"""

from __future__ import annotations

import sys

import numpy as np

import minigrad as mg
import minigrad_dist as dist
from tests.dist import programs_reliability as programs


def main() -> None:
    phase, path, prefix = sys.argv[1], sys.argv[2], sys.argv[3]
    total, stop_at = int(sys.argv[4]), int(sys.argv[5])
    dist.init_process_group(backend="mpi")
    rank = dist.get_rank()
    data = programs.dataset()
    if phase == "resume":
        model, ddp, opt, sampler = programs.build_training(1, rank + 50)
        mg.manual_seed(12345)
        start = dist.load_checkpoint(path, ddp, opt, sampler).step
    else:
        model, ddp, opt, sampler = programs.build_training(0, rank)
        start = 0
    stop = stop_at if phase == "first" else total
    programs.train_steps(ddp, opt, sampler, start, stop, data)
    if phase == "first":
        dist.save_checkpoint(path, ddp, opt, sampler, step=stop)
    np.savez(f"{prefix}.rank{rank}.npz", **programs.params_of(model))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
