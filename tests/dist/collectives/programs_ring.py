"""Programs run on every rank of a pool by test_ring_allreduce.py."""

from __future__ import annotations

import numpy as np

import minigrad as mg
import minigrad_dist as dist
from minigrad_dist.algorithms import ring_allreduce
from tests.dist.programs_common import ensure_init

OPS = {"sum": dist.ReduceOp.SUM, "avg": dist.ReduceOp.AVG, "product": dist.ReduceOp.PRODUCT,
       "min": dist.ReduceOp.MIN, "max": dist.ReduceOp.MAX}


def rank_data(case: dict, rank: int) -> np.ndarray:
    """Rank ``rank``'s input for ``case`` (the test rebuilds it to compute the exact answer)."""
    rng = np.random.default_rng([case["seed"], rank])
    dtype = np.dtype(case["dtype"])
    shape = case.get("shape", (case["length"],))
    if dtype.kind in "iu":
        return rng.integers(-50, 50, size=shape).astype(dtype)  # products of 4 fit in int32
    return rng.standard_normal(shape).astype(dtype)


def ring_and_mpi(cases: list) -> list:
    """For each case: ``(ring_allreduce result, MPI Allreduce result)`` on this rank."""
    rank, _ = ensure_init()
    group = dist.get_default_group()
    out = []
    for case in cases:
        op = OPS[case["op"]]
        data = rank_data(case, rank)
        ring = data.copy()
        returned = ring_allreduce(ring, group, op)
        assert returned is ring, "ring_allreduce works in place and returns its argument"
        reference = data.copy()
        if op is not dist.ReduceOp.AVG or data.dtype != np.float16:  # MPICH has no float16 sum
            group.allreduce(reference, op)
        out.append((ring, reference))
    return out


def ring_on_tensor_default_group(spec: dict):
    """A Tensor through the default group: the Tensor is returned and its data reduced."""
    rank, world = ensure_init()
    t = mg.tensor(np.full(spec["length"], float(rank + 1)))
    assert ring_allreduce(t) is t
    return t.array.copy()
