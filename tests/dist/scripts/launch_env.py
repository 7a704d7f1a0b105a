"""Run by test_launch.py through ``python -m minigrad_dist.run``: report torchrun's variables, then exit as asked.

Usage: launch_env.py --report-dir DIR [--fail-rank R] [--exit-code C] [--raise-on R] [--backend NAME] [more...]
Each rank writes ``DIR/rank-<RANK>.json`` (files, not stdout: the launcher may interleave the ranks' lines).
"""

from __future__ import annotations

import json
import os
import sys

import numpy as np

import minigrad_dist as dist


def main(argv):
    backend = argv[argv.index("--backend") + 1] if "--backend" in argv else "gloo"
    dist.init_process_group(backend=backend)  # RANK and WORLD_SIZE from the launcher are checked against MPI
    rank = dist.get_rank()
    total = np.array([float(rank)])
    dist.all_reduce(total)
    names = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "GROUP_RANK", "MASTER_ADDR", "MASTER_PORT",
             "OMP_NUM_THREADS")
    report = {name: os.environ.get(name) for name in names}
    report.update(argv=argv, name=__name__, total=float(total[0]), backend=str(dist.get_backend()),
                  path0=sys.path[0])
    directory = argv[argv.index("--report-dir") + 1]
    with open(os.path.join(directory, f"rank-{rank}.json"), "w") as f:
        json.dump(report, f)
    dist.barrier()
    if "--raise-on" in argv and rank == int(argv[argv.index("--raise-on") + 1]):
        raise KeyError("launch_env was asked to fail here")
    if "--fail-rank" in argv and rank == int(argv[argv.index("--fail-rank") + 1]):
        sys.exit(int(argv[argv.index("--exit-code") + 1]))
    dist.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1:])
