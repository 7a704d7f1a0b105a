"""Fixtures for multi-process tests: one persistent MPI pool per world size (shared with the testing kit)."""

from __future__ import annotations

import pytest

from minigrad_dist.testing.pool import close_pools, get_pool

__all__ = ["get_pool"]


@pytest.fixture(scope="session", autouse=True)
def _close_pools():
    yield
    close_pools()


@pytest.fixture(params=[1, 2, 3, 4], ids=lambda n: f"world{n}")
def pool(request):
    """A pool for each world size 1 to 4 (4 ranks oversubscribe 2 cores: slower, still correct)."""
    return get_pool(request.param)


@pytest.fixture
def pool2():
    """The 2-rank pool."""
    return get_pool(2)
