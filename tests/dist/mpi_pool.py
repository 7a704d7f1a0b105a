"""The tests' import path for the MPI pool, which lives in ``minigrad_dist.testing.pool``.

``run_script`` here runs scripts from the repository root, as the tests expect.
"""

from __future__ import annotations

from pathlib import Path

from minigrad_dist.testing import pool as _pool
from minigrad_dist.testing.pool import MPIPool, PoolTimeout, RankFailure, mpi_env, mpiexec

ROOT = Path(__file__).resolve().parents[2]

__all__ = ["MPIPool", "PoolTimeout", "RankFailure", "ROOT", "mpi_env", "mpiexec", "run_script"]


def run_script(path, world_size: int, args=(), timeout: float = 120.0, env=None):
    """``minigrad_dist.testing.pool.run_script`` with the repository root as working directory."""
    return _pool.run_script(path, world_size, args, timeout=timeout, env=env, cwd=ROOT)
