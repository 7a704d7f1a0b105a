"""RPC and distributed autograd on 4 ranks spread over simulated nodes (MPICH cliques, and NOLOCAL).

The programs and hypothesis strategies are those of ``tests/dist/rpc`` and
``tests/dist/autograd``, run here on pools started with
``MPIR_CVAR_NUM_CLIQUES=2`` (two nodes of two ranks: 0,2 and 1,3) and
``MPIR_CVAR_NOLOCAL=1`` (every rank its own node, all traffic through the
network module), so that RPC's messages and distributed backward cross node
boundaries. Few examples each: the full property runs are in those folders.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from minigrad_dist.testing import MPIPool
from tests.dist.autograd import programs_autograd
from tests.dist.autograd.test_dist_autograd import check, program_strategy
from tests.dist.rpc import programs_rpc
from tests.dist.topology import programs_topology

pytestmark = pytest.mark.timeout(300)

WORLD = 4
SETTINGS = settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
TOPOLOGIES = {"cliques": {"MPIR_CVAR_NUM_CLIQUES": "2"}, "nolocal": {"MPIR_CVAR_NOLOCAL": "1"}}
NODES = {"cliques": 2, "nolocal": 4}


@pytest.fixture(scope="module", params=sorted(TOPOLOGIES))
def pool(request):
    """A 4-rank pool whose MPI sees the ranks on several nodes."""
    simulated = MPIPool(WORLD, env=TOPOLOGIES[request.param])
    simulated.expected_nodes = NODES[request.param]
    yield simulated
    simulated.close()


def test_the_pool_spans_simulated_nodes(pool):
    described = pool.run(programs_topology.describe_topology, {"subgroup": [0, 1]}, timeout=60)
    assert all(out["num_nodes"] == pool.expected_nodes for out in described)


def test_rpc_and_rrefs_across_nodes(pool):
    out = pool.run(programs_rpc.rpc_basics, {"n": 1 << 17}, timeout=120)[0]
    assert out["sync"] == [2.0, 2.0] and out["kwargs"] == 9.0
    assert out["async"] == [6.0, 6.0] and out["then"] == 12.0 and out["done"]
    assert "missing key" in out["remote_error"] and "Remote traceback" in out["remote_error"]
    assert out["big_ok"] and out["echo_ok"]
    assert out["worker_info"] == (f"worker{WORLD - 1}", WORLD - 1)
    rrefs = pool.run(programs_rpc.rref_basics, {}, timeout=120)[0]
    assert rrefs["to_here"] == [2.0, 2.0] and rrefs["owner"] == f"worker{WORLD - 1}"
    assert rrefs["proxy_async"] == 7 and rrefs["proxy_remote"] == 8 and rrefs["forwarded"] == [4.0, 4.0]


@pytest.mark.parametrize("mode", ["fast", "smart"])
def test_distributed_autograd_across_nodes_matches_local(pool, mode):
    @SETTINGS
    @given(spec=program_strategy(WORLD, unused_outputs=mode == "smart"))
    def run(spec):
        check(pool.run(programs_autograd.dist_autograd_vs_local, dict(spec, mode=mode), timeout=120))

    run()


def test_nested_and_concurrent_distributed_backwards_across_nodes(pool):
    results = pool.run(programs_autograd.nested_rpcs, {"seed": 3}, timeout=120)
    for got, want in zip(results[0]["result"]["dist"], results[0]["result"]["local"]):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    assert all(r["contexts_left"] == 0 for r in results)
    results = pool.run(programs_autograd.concurrent_contexts, {"n": 20}, timeout=120)
    assert [r["mismatches"] for r in results] == [0] * WORLD
    assert all(r["contexts_left"] == 0 and r["owned_left"] == 0 for r in results), results


def test_distributed_optimizer_across_nodes(pool):
    for delta in pool.run(programs_autograd.distributed_optimizer, {"lr": 0.05}, timeout=120):
        np.testing.assert_allclose(delta, np.full((3, 3), 0.05), rtol=1e-6)
