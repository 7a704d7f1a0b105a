"""``ring_allreduce`` on real ranks, compared with MPI's own allreduce (notebook 02).

    mpiexec -n 3 python examples/notebooks/scripts/ring_check.py [--timing-elements 1000000]

Every rank builds the same cases from its rank (``rank``-seeded values), reduces
one copy with ``minigrad_dist.algorithms.ring_allreduce`` and another with
mpi4py's ``Allreduce`` (MPI picks its own algorithm), and compares:

* ``max_abs_diff``: the largest difference between the two results (floats may
  differ in the last bits: the additions happen in another order);
* ``exact``: the two are bitwise equal;
* ``same_on_every_rank``: the ring's result has the same bits on every rank.

Then it times both on a float32 buffer of ``--timing-elements`` elements.
Rank 0 prints one line ``RESULT <json>``:
``{"world_size": 3, "cases": [{"dtype", "elements", "op", ...}], "timing_ms": {"ring": .., "mpi": ..}}``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np
from mpi4py import MPI

import minigrad_dist as dist
from minigrad_dist.algorithms import ring_allreduce

CASES = [  # (dtype, elements, op)
    ("float64", 10, "SUM"),
    ("float64", 2, "SUM"),  # fewer elements than ranks (with 3 ranks): some chunks are empty
    ("float32", 1001, "SUM"),
    ("int64", 1000, "SUM"),
    ("float64", 257, "MAX"),
]
MPI_OPS = {"SUM": MPI.SUM, "MAX": MPI.MAX}


def values(dtype: str, elements: int, rank: int) -> np.ndarray:
    """This rank's input: integers for int64, standard normal values for floats."""
    rng = np.random.default_rng(100 + rank)
    if dtype == "int64":
        return rng.integers(-1000, 1000, size=elements).astype(np.int64)
    return rng.standard_normal(elements).astype(dtype)


def check(case, comm) -> dict:
    """Reduce one case both ways; describe how the results compare."""
    dtype, elements, op = case
    data = values(dtype, elements, comm.Get_rank())
    ring = data.copy()
    ring_allreduce(ring, op=getattr(dist.ReduceOp, op))
    reference = data.copy()
    comm.Allreduce(MPI.IN_PLACE, reference, op=MPI_OPS[op])
    every_rank = comm.allgather(ring.tobytes())
    return {
        "dtype": dtype, "elements": elements, "op": op,
        "max_abs_diff": float(np.max(np.abs(ring.astype(np.float64) - reference))) if elements else 0.0,
        "exact": bool(np.array_equal(ring, reference)),
        "same_on_every_rank": all(b == every_rank[0] for b in every_rank),
    }


def median_ms(fn, comm, repeat: int = 5) -> float:
    """Median milliseconds of ``fn()`` over ``repeat`` runs, all ranks starting together."""
    samples = []
    for _ in range(repeat + 1):
        comm.Barrier()
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1e3)
    return statistics.median(samples[1:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timing-elements", type=int, default=1_000_000)
    args = parser.parse_args()
    dist.init_process_group()
    comm = dist.get_default_group().comm
    cases = [check(case, comm) for case in CASES]
    buffer = np.ones(args.timing_elements, dtype=np.float32)
    timing = {
        "elements": args.timing_elements,
        "ring": median_ms(lambda: ring_allreduce(buffer), comm),
        "mpi": median_ms(lambda: comm.Allreduce(MPI.IN_PLACE, buffer, op=MPI.SUM), comm),
    }
    if comm.Get_rank() == 0:
        print("RESULT " + json.dumps({"world_size": comm.Get_size(), "cases": cases, "timing_ms": timing}), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
