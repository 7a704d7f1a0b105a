"""The teaching ring allreduce: equal to MPI's Allreduce, on uneven sizes too, and usable as a DDP hook."""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import minigrad_dist as dist
from minigrad_dist.algorithms import ring_allreduce, ring_allreduce_hook
from minigrad_dist.algorithms.ring_allreduce import chunk_bounds
from minigrad_dist.testing import assert_ddp_matches_local, mlp_from_spec
from tests.dist.collectives import programs_ring as programs
from tests.dist.conftest import get_pool

pytestmark = pytest.mark.timeout(300)

DTYPES = ["float64", "float32", "float16", "int64", "int32"]
SETTINGS = settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)


@st.composite
def cases(draw, world_size):
    """Lengths below, at and around multiples of the world size (0 included); every dtype and op."""
    dtype = draw(st.sampled_from(DTYPES))
    ops = ["sum", "product", "min", "max"] + (["avg"] if dtype.startswith("float") else [])
    length = draw(st.one_of(st.integers(0, 2 * world_size + 1), st.integers(0, 200)))
    op, seed = draw(st.sampled_from(ops)), draw(st.integers(0, 2**16))
    return {"length": length, "dtype": dtype, "op": op, "seed": seed}


def exact(case, world_size):
    """Every rank's input reduced exactly (math.fsum, Python ints), and the rounding bound for floats."""
    inputs = np.stack([programs.rank_data(case, r) for r in range(world_size)]).reshape(world_size, -1)
    dtype = inputs.dtype
    wide = inputs.astype(np.float64) if dtype.kind == "f" else inputs.astype(object)
    op = case["op"]
    if op in ("sum", "avg"):
        columns = [math.fsum(c) for c in wide.T] if dtype.kind == "f" else list(wide.sum(axis=0))
        value = np.array(columns, dtype=np.float64 if dtype.kind == "f" else object)
        if op == "avg":
            value = value / world_size
        magnitude = np.abs(wide).sum(axis=0)
    elif op == "product":
        value = np.prod(wide, axis=0)
        magnitude = np.abs(value)
    else:
        value = wide.min(axis=0) if op == "min" else wide.max(axis=0)
        magnitude = np.zeros(len(value))
    if dtype.kind != "f":
        return value, 0.0
    eps = np.finfo(dtype).eps
    # n-1 roundings of partial results no larger than the sum of magnitudes, plus AVG's division.
    bound = world_size * eps * np.asarray(magnitude, dtype=np.float64) / (world_size if op == "avg" else 1)
    return value.astype(np.float64), bound + np.finfo(dtype).smallest_subnormal * world_size


@pytest.mark.parametrize("world_size", [1, 2, 3, 4])
def test_ring_equals_allreduce_and_the_exact_reduction(world_size):
    pool = get_pool(world_size)

    @SETTINGS
    @given(drawn=st.lists(cases(world_size), min_size=1, max_size=6))
    def check(drawn):
        results = pool.run(programs.ring_and_mpi, drawn)
        for i, case in enumerate(drawn):
            want, bound = exact(case, world_size)
            ring0 = results[0][i][0]
            for rank, per_rank in enumerate(results):
                ring, mpi = per_rank[i]
                assert ring.dtype == np.dtype(case["dtype"]) and ring.shape == (case["length"],)
                assert ring.tobytes() == ring0.tobytes(), f"rank {rank} holds other bits than rank 0: {case}"
                if np.dtype(case["dtype"]).kind != "f":
                    assert ring.tolist() == list(want) and mpi.tolist() == list(want), case
                    continue
                error = np.abs(ring.astype(np.float64) - want)
                assert np.all(error <= bound), (case, error.max(), bound)
                if not (case["op"] == "avg" and case["dtype"] == "float16"):
                    assert np.all(np.abs(mpi.astype(np.float64) - want) <= bound), case

    check()


def test_large_uneven_buffer_on_three_ranks():
    case = {"length": 100_003, "dtype": "float64", "op": "sum", "seed": 7}
    results = get_pool(3).run(programs.ring_and_mpi, [case])
    want, bound = exact(case, 3)
    for per_rank in results:
        ring, mpi = per_rank[0]
        assert np.all(np.abs(ring - want) <= bound)
        np.testing.assert_allclose(ring, mpi, rtol=1e-13, atol=1e-15)


def test_multidimensional_arrays_reduce_elementwise():
    case = {"shape": (3, 5, 2), "length": 30, "dtype": "int64", "op": "sum", "seed": 1}
    results = get_pool(4).run(programs.ring_and_mpi, [case])
    expected = sum(programs.rank_data(case, r) for r in range(4))
    for per_rank in results:
        assert per_rank[0][0].shape == (3, 5, 2)
        np.testing.assert_array_equal(per_rank[0][0], expected)


def test_tensor_through_the_default_group():
    for out in get_pool(3).run(programs.ring_on_tensor_default_group, {"length": 4}):
        np.testing.assert_array_equal(out, np.full(4, 6.0))


@given(length=st.integers(0, 1000), world=st.integers(1, 16))
@settings(max_examples=100, deadline=None, derandomize=True)
def test_chunks_tile_the_buffer_evenly(length, world):
    bounds = chunk_bounds(length, world)
    assert len(bounds) == world and bounds[0][0] == 0 and bounds[-1][1] == length
    assert all(a[1] == b[0] for a, b in zip(bounds, bounds[1:]))
    sizes = [stop - start for start, stop in bounds]
    assert max(sizes) - min(sizes) <= 1 and sizes == sorted(sizes, reverse=True)
    assert sizes == [len(c) for c in np.array_split(np.arange(length), world)]


def test_argument_errors_before_any_communication():
    with pytest.raises(ValueError, match="must be contiguous"):
        ring_allreduce(np.ones((4, 4))[:, ::2])
    with pytest.raises(RuntimeError, match="AVG needs a floating point array, got dtype int64"):
        ring_allreduce(np.ones(3, dtype=np.int64), op=dist.ReduceOp.AVG)
    with pytest.raises(TypeError, match="op must be a ReduceOp"):
        ring_allreduce(np.ones(3), op="sum")
    with pytest.raises(TypeError, match="expected a NumPy/CuPy array or a Tensor, got list"):
        ring_allreduce([1.0, 2.0])
    with pytest.raises(TypeError, match="expected a ProcessGroup or None, got str"):
        ring_allreduce(np.ones(3), group="world")


# -- as a DDP comm hook ----------------------------------------------------------------------------

SPEC = {"in_features": 5, "hidden": [7, 3], "classes": 4, "activation": "tanh"}


@pytest.mark.parametrize("world_size", [1, 2, 3, 4])
def test_ddp_with_the_ring_hook_matches_local_training(world_size):
    """Tiny buckets: one parameter each, of sizes 35, 7, 21, 3, 12, 4 (rarely divisible by the world size)."""
    rng = np.random.default_rng(world_size)
    rows = 2 * world_size
    data = (rng.standard_normal((3, rows, 5)), rng.integers(0, 4, size=(3, rows)))
    assert_ddp_matches_local(functools.partial(mlp_from_spec, SPEC), data, comm_hook=ring_allreduce_hook,
                             world_size=world_size, optimizer_kwargs={"lr": 0.1, "momentum": 0.9},
                             ddp_kwargs={"bucket_cap_mb": 1e-6, "first_bucket_cap_mb": 1e-6})
