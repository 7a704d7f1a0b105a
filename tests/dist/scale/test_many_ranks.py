"""8 and 16 ranks on this 2-core machine: DDP, a parameter server, distributed autograd, and polite waiting.

Every case runs on real MPI ranks (oversubscribed: up to 8 ranks per
core), through the testing kit's pools, and compares with one process:

* DDP equals one process on the full batch (float64, rtol 1e-10) through
  each way of reducing buckets: shared memory, ``Iallreduce``, and two
  levels on simulated nodes (``MPIR_CVAR_NUM_CLIQUES=2``: two nodes of
  ``n/2`` ranks); the testing kit's oracle runs the ranks' side;
* a parameter server with 8 and 15 trainers ends with the parameters of the
  same updates computed serially;
* a distributed backward through a chain of nested RPCs that visits every
  worker, then a fan-out to all of them, gives local autograd's gradients;
* ranks waiting for a busy rank leave it the CPU, in every kind of wait;
  blocking collectives avoid MPI's spinning calls only where ranks
  outnumber the cores.

The larger pools are closed when this module is done: an idle 16-rank pool
still wakes each rank up to 1000 times a second.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from minigrad_dist.testing import MPIPool, oracles, strategies
from tests.dist.conftest import get_pool
from tests.dist.scale import programs_many_ranks as programs
from tests.dist.topology.programs_topology import strategy_chosen
from tests.dist.topology.test_topology import drawn_ddp_case_matches_local

pytestmark = pytest.mark.timeout(240)

SETTINGS = settings(max_examples=2, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
TASK_TIMEOUT = 150.0
CLIQUES = {"MPIR_CVAR_NUM_CLIQUES": "2"}
REDUCTIONS = {
    "shared memory": ({"MINIGRAD_DDP_SHM": "1"}, "SharedMemoryStrategy"),
    "Iallreduce": ({"MINIGRAD_DDP_SHM": "0"}, "IallreduceStrategy"),
}


@pytest.fixture(scope="module", autouse=True)
def _close_large_pools():
    yield
    for world_size in (8, 9, 16):
        get_pool(world_size).close()


@pytest.fixture(scope="module")
def two_node_pools():
    """Pools of 8 and 16 ranks whose MPI sees two nodes (ranks alternate between them)."""
    pools = {n: MPIPool(n, env=CLIQUES) for n in (8, 16)}
    yield pools
    for pool in pools.values():
        pool.close()


def check_ddp_equals_local(world_size, env):
    """Drawn models, data and DDP options: every rank's gradients and parameters equal one process's."""

    @SETTINGS
    @given(case=strategies.ddp_cases(world_size, max_steps=2, max_batch_per_rank=2))
    def check(case):
        drawn_ddp_case_matches_local(case, world_size, env, timeout=TASK_TIMEOUT)

    check()


@pytest.mark.parametrize("reduction", sorted(REDUCTIONS))
@pytest.mark.parametrize("world_size", [8, 16])
def test_ddp_equals_local_on_many_ranks(world_size, reduction):
    env, expected = REDUCTIONS[reduction]
    chosen = get_pool(world_size).run(strategy_chosen, {"env": env}, timeout=TASK_TIMEOUT)
    assert chosen == [expected] * world_size
    check_ddp_equals_local(world_size, env)


@pytest.mark.parametrize("world_size", [8, 16])
def test_ddp_through_two_levels_equals_local_on_two_simulated_nodes(two_node_pools, monkeypatch, world_size):
    pool = two_node_pools[world_size]
    assert pool.run(strategy_chosen, {"env": {}}, timeout=TASK_TIMEOUT) == ["HierarchicalStrategy"] * world_size
    monkeypatch.setattr(oracles, "get_pool", lambda n: pool)
    check_ddp_equals_local(world_size, {})


@st.composite
def parameter_server_specs(draw, trainers):
    """A model, rounds and per-trainer batches for ``programs.parameter_server_rounds``."""
    model = draw(strategies.model_specs(max_depth=2, max_width=8, unused_branch=False))
    rounds, batch = draw(st.integers(2, 3)), draw(st.integers(1, 3))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    return {
        "model": model,
        "model_seed": draw(st.integers(0, 2**16)),
        "lr": 0.1,
        "momentum": 0.9,
        "x": rng.standard_normal((rounds, trainers, batch, model["in_features"])),
        "y": rng.integers(0, model["classes"], size=(rounds, trainers, batch)),
    }


@pytest.mark.parametrize("world_size", [9, 16], ids=["8 trainers", "15 trainers"])
def test_parameter_server_ends_with_the_serial_updates(world_size):
    """Each round every trainer computes its gradient from the same weights, then steps its own SGD on the server.

    Serially: the same gradients by local autograd, then one SGD (with its
    own momentum) per trainer stepping the same parameters.
    """
    pool = get_pool(world_size)

    @SETTINGS
    @given(spec=parameter_server_specs(world_size - 1))
    def check(spec):
        results = pool.run(programs.parameter_server_rounds, spec, timeout=TASK_TIMEOUT)
        serial = programs.parameter_server_serially(spec)
        for name, want in serial["params"].items():
            np.testing.assert_allclose(results[0][name], want, rtol=1e-10, atol=1e-12, err_msg=name)
        np.testing.assert_allclose(results[1:], serial["losses"], rtol=1e-10, atol=1e-12)

    check()


@pytest.mark.parametrize("mode", ["fast", "smart"])
@pytest.mark.parametrize("world_size", [8, 16])
def test_distributed_backward_through_every_worker_equals_local(world_size, mode):
    pool = get_pool(world_size)

    @SETTINGS
    @given(chain=st.permutations(range(world_size)), n=st.integers(1, 3), seed=st.integers(0, 2**16))
    def check(chain, n, seed):
        spec = {"chain": list(chain), "n": n, "seed": seed, "mode": mode}
        results = pool.run(programs.chain_through_every_worker, spec, timeout=TASK_TIMEOUT)
        result = results[0]["result"]
        np.testing.assert_allclose(*result["loss"], rtol=1e-12)
        assert len(result["dist"]) == 1 + 2 * world_size
        for index, (got, want) in enumerate(zip(result["dist"], result["local"])):
            np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12, err_msg=f"leaf {index}")
        assert [r["contexts_left"] for r in results] == [0] * world_size, "contexts must be released everywhere"

    check()


# The CPU that 15 waiting ranks may take together, as a share of rank 0's wall time while it computes (2.0: both
# cores). Spinning or yielding waiters took 1.0-1.6 in every mode below. Medians measured on this machine (busy
# with other jobs) once the waits learned to idle (waiting.Backoff's patience, polite blocking collectives when
# ranks outnumber the cores, RPC pollers that stand by), over several runs: pool wait 0.24-0.26; barrier,
# blocking barrier and DDP 0.24-0.39; RPC 0.39-0.51 (a caller's poll costs about 30 us). The bounds leave 1.5-2
# times that for CI noise, and stay well under what the old waits took.
WAITERS_SHARE = {
    "pool wait": 0.5,
    "barrier": 0.6,
    "blocking barrier": 0.6,
    "DDP shared memory": 0.6,
    "DDP Iallreduce": 0.6,
    "RPC": 0.9,
}


def waiters_share(mode) -> tuple:
    """Rank 0 computes about 0.3 s of CPU while 15 ranks wait in ``mode``: (the waiters' CPU / rank 0's wall, wall)."""
    results = get_pool(16).run(
        programs.ranks_wait_while_one_computes, {"mode": mode, "iterations": 200}, timeout=TASK_TIMEOUT
    )
    busy, waiters = results[0], results[1:]
    assert all(w["wall"] >= 0.5 * busy["wall"] for w in waiters), "the waiters must wait for rank 0"
    return sum(w["cpu"] for w in waiters) / busy["wall"], busy["wall"]


@pytest.mark.parametrize("mode", list(WAITERS_SHARE))
def test_ranks_waiting_among_16_leave_the_cpu_to_the_rank_that_works(mode):
    """15 ranks wait for rank 0 in ``mode`` (see ``programs.ranks_wait_while_one_computes``) while it computes.

    Spinning waiters would take nearly both cores (15 of 16 runnable
    processes); polite ones wake at most about 1000 times a second each once
    their wait has lasted 20 ms. A second measurement is taken only when the
    first is over the bound: a burst of other load on the machine can
    inflate one, a waiter that spins inflates both.
    """
    share, wall = waiters_share(mode)
    if share >= WAITERS_SHARE[mode]:
        share, wall = min((share, wall), waiters_share(mode))
    assert share < WAITERS_SHARE[mode], (
        f"15 ranks waiting in {mode!r} used {share:.2f} s of CPU per second while rank 0 computed for {wall:.2f} s"
    )


@pytest.mark.parametrize("world_size", [2, 16])
def test_blocking_collectives_wait_politely_only_when_ranks_outnumber_the_cores(world_size):
    """MPI's blocking calls spin: a group uses them only when each rank can have a core, or spinning was asked for."""
    results = get_pool(world_size).run(programs.blocking_collectives_wait, {}, timeout=TASK_TIMEOUT)
    total = [float(sum(range(world_size)))] * 3
    for result in results:
        assert result["oversubscribed"] == (world_size > os.cpu_count())
        assert result["default"] == (result["oversubscribed"], total)
        assert result["spin"] == (False, total), "MINIGRAD_DIST_WAIT=spin keeps MPI's blocking calls"
