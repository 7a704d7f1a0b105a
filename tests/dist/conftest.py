"""Fixtures for multi-process tests: one persistent MPI pool per world size."""

from __future__ import annotations

import pytest

from tests.dist.mpi_pool import MPIPool

_pools: dict[int, MPIPool] = {}


def get_pool(world_size: int) -> MPIPool:
    """The shared pool of ``world_size`` ranks (started on first use)."""
    pool = _pools.get(world_size)
    if pool is None:
        pool = _pools[world_size] = MPIPool(world_size)
    return pool


@pytest.fixture(scope="session", autouse=True)
def _close_pools():
    yield
    for pool in _pools.values():
        pool.close()


@pytest.fixture(params=[1, 2, 3, 4], ids=lambda n: f"world{n}")
def pool(request):
    """A pool for each world size 1 to 4 (4 ranks oversubscribe 2 cores: slower, still correct)."""
    return get_pool(request.param)


@pytest.fixture
def pool2():
    """The 2-rank pool."""
    return get_pool(2)
