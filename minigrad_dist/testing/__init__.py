"""A kit for testing distributed training code on real MPI ranks, from pytest.

Three pieces:

* ``pool``: ``get_pool(n)`` is a persistent pool of ``n`` MPI ranks that
  runs a top-level function on every rank and returns the per-rank results
  (one ``mpiexec`` start per pool, not per test).
* ``oracles``: ``assert_ddp_matches_local`` trains a model with
  ``DistributedDataParallel`` on a pool and in one process on the full
  batches, and fails with a report naming the first step, rank and
  parameter that differ.
* ``strategies`` (needs ``hypothesis``): model specs, data, bucket caps,
  world sizes and worker placements to draw test cases from.

Worked example: testing your own comm hook
------------------------------------------

A DDP comm hook must return the *average* of the ranks' gradients. Here is
a correct hook and one with the classic bug, in a module of your project
(the ranks import both by name, so they must be top-level functions)::

    # myproject/hooks.py
    import minigrad_dist as dist
    from minigrad import nn
    from minigrad_dist.futures import completed_future

    def mean_hook(process_group, bucket):
        group = process_group if process_group is not None else dist.get_default_group()
        buffer = bucket.buffer().array
        group.allreduce(buffer)          # sum over the ranks, in place
        buffer /= group.size()           # ... then the mean
        return completed_future(buffer)

    def forgetful_hook(process_group, bucket):
        group = process_group if process_group is not None else dist.get_default_group()
        buffer = bucket.buffer().array
        group.allreduce(buffer)          # the sum: forgot to divide by the world size
        return completed_future(buffer)

    def small_model():
        return nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3)).double()

The tests: two training steps of 8 rows each (4 rows per rank on 2 ranks)::

    # tests/test_hooks.py
    import numpy as np
    import pytest
    from minigrad_dist.testing import assert_ddp_matches_local
    from myproject.hooks import forgetful_hook, mean_hook, small_model

    rng = np.random.default_rng(0)
    DATA = (rng.standard_normal((2, 8, 4)), rng.integers(0, 3, size=(2, 8)))

    def test_mean_hook_trains_like_one_process():
        assert_ddp_matches_local(small_model, DATA, comm_hook=mean_hook, world_size=2)

    def test_the_kit_catches_the_forgetful_hook():
        with pytest.raises(AssertionError, match="not divided by the world size"):
            assert_ddp_matches_local(small_model, DATA, comm_hook=forgetful_hook, world_size=2)

The forgetful hook fails like this (long lines wrapped)::

    DDP on 2 ranks (comm hook: myproject.hooks.forgetful_hook) differs from local training
    (rtol=1e-10, atol=1e-12).
    First difference: step 0, rank 0, gradient of '0.weight': max abs error 0.125 at index (2, 1)
    (DDP 0.250726, local 0.125363); DDP is 2x local everywhere: gradients were summed over the
    2 ranks but not divided by the world size
    32 differences in all; the first 8:
      step 0 rank 0 gradient of '0.weight': ...

Use ``world_size >= 2``: on one rank the sum is the mean and the bug hides.
To try many models instead of one, draw the cases::

    from hypothesis import given, settings
    from minigrad_dist.testing import strategies

    @settings(max_examples=10, deadline=None)
    @given(case=strategies.ddp_cases(world_size=2))
    def test_mean_hook_on_drawn_models(case):
        assert_ddp_matches_local(case.model_fn, case.data, comm_hook=mean_hook, world_size=2,
                                 ddp_kwargs=case.ddp_kwargs, seed=case.seed)

Notes:
    * Needs mpi4py and an MPI library (``pip install 'minigrad[mpi]'``).
    * The ranks run with this process's working directory and the project
      entries of its ``sys.path``, so they import what your tests import.
    * Pools are shared per world size and closed at interpreter exit; call
      ``close_pools()`` from a session fixture to close them earlier.
    * A task that hangs is killed after its timeout (the pool restarts on
      the next call), so a deadlocking hook fails the test instead of hanging it.
"""

from minigrad_dist.testing.models import SpecMLP, mlp_from_spec
from minigrad_dist.testing.oracles import DDPMatch, assert_ddp_matches_local
from minigrad_dist.testing.pool import MPIPool, PoolTimeout, RankFailure, close_pools, get_pool, run_script

__all__ = [
    "DDPMatch", "MPIPool", "PoolTimeout", "RankFailure", "SpecMLP", "assert_ddp_matches_local", "close_pools",
    "get_pool", "mlp_from_spec", "run_script",
]
