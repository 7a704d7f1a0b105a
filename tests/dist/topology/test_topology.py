"""Topology and two-level reduction on simulated nodes (MPICH's cliques), compared with flat and local runs.

MPICH can pretend that the ranks of one machine sit on several nodes:
``MPIR_CVAR_NUM_CLIQUES=2`` makes ``Split_type(COMM_TYPE_SHARED)`` see 4
ranks as two nodes of 2 (round-robin: ranks 0,2 and 1,3), ``MPIR_CVAR_NOLOCAL=1``
one node per rank. These variables must be set when ``mpiexec`` starts, so
this module starts its own pools with them (the shared pools of
``tests/dist/conftest.py`` are one node). The DDP cases go through the
testing kit's oracle, pointed at those pools.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from minigrad_dist.testing import MPIPool, assert_ddp_matches_local, oracles, strategies
from minigrad_dist.topology import Topology, hierarchical_setting
from tests.dist.topology import programs_topology as programs

pytestmark = pytest.mark.timeout(300)

SETTINGS = settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
CLIQUES = {"MPIR_CVAR_NUM_CLIQUES": "2"}
NOLOCAL = {"MPIR_CVAR_NOLOCAL": "1"}


@pytest.fixture(scope="module")
def simulated():
    """Two 4-rank pools: ``"cliques"`` (2 nodes of 2 ranks) and ``"nolocal"`` (4 nodes of 1 rank)."""
    pools = {"cliques": MPIPool(4, env=CLIQUES), "nolocal": MPIPool(4, env=NOLOCAL)}
    yield pools
    for pool in pools.values():
        pool.close()


# -- topology ------------------------------------------------------------------------------------------


def test_topology_from_leaders_numbers_nodes_by_leader():
    topology = Topology.from_leaders(2, leader_of=[0, 1, 0, 1, 4], local_rank_of=[0, 0, 1, 1, 0])
    assert topology.node_of == (0, 1, 0, 1, 2)
    assert (topology.node_id, topology.local_rank, topology.local_size) == (0, 1, 2)
    assert topology.leaders == (0, 1, 4) and topology.local_sizes == (2, 2, 1)
    assert topology.ranks_on(1) == [1, 3]
    assert topology.wants_two_levels("auto") and topology.wants_two_levels("1")
    assert not topology.wants_two_levels("0")
    with pytest.raises(ValueError, match="leader"):
        Topology.from_leaders(0, leader_of=[1, 1], local_rank_of=[0, 1])


def test_two_levels_only_pay_when_the_group_spans_nodes_that_share_memory():
    one_node = Topology.from_leaders(0, [0, 0], [0, 1])
    one_rank_per_node = Topology.from_leaders(0, [0, 1], [0, 0])
    assert not one_node.wants_two_levels("1")
    assert not one_rank_per_node.wants_two_levels("auto") and one_rank_per_node.wants_two_levels("1")


def test_hierarchical_setting_reads_the_variable_and_refuses_nonsense():
    assert hierarchical_setting({}) == "auto"
    assert hierarchical_setting({"MINIGRAD_DIST_HIERARCHICAL": " On "}) == "1"
    assert hierarchical_setting({"MINIGRAD_DIST_HIERARCHICAL": "0"}) == "0"
    with pytest.raises(ValueError, match="MINIGRAD_DIST_HIERARCHICAL='sometimes'"):
        hierarchical_setting({"MINIGRAD_DIST_HIERARCHICAL": "sometimes"})


def test_nodes_and_local_ranks_under_cliques(simulated):
    results = simulated["cliques"].run(programs.describe_topology, {"subgroup": [0, 1, 2]}, timeout=120)
    for rank, result in enumerate(results):
        assert result["node_of"] == (0, 1, 0, 1) and result["local_rank_of"] == (0, 0, 1, 1)
        assert result["node_id"] == rank % 2 and result["local_rank"] == rank // 2
        assert result["local_world_size"] == 2 and result["num_nodes"] == 2 and result["leaders"] == (0, 1)
        assert result["two_level"]
    # Ranks 0, 1, 2: node 0 holds group ranks 0 and 2, node 1 only group rank 1 (nodes of unequal size).
    for result in results[:3]:
        assert result["subgroup"] == {"node_of": (0, 1, 0), "local_rank_of": (0, 0, 1), "two_level": True}
    assert "subgroup" not in results[3]


def test_every_rank_is_a_node_under_nolocal(simulated):
    results = simulated["nolocal"].run(programs.describe_topology, {"subgroup": [1, 3]}, timeout=120)
    for result in results:
        assert result["node_of"] == (0, 1, 2, 3) and result["local_rank"] == 0
        assert result["local_world_size"] == 1 and result["leaders"] == (0, 1, 2, 3)
        assert not result["two_level"], "one rank per node: two levels only add steps"


@pytest.mark.parametrize(
    ("pool", "env", "expected"),
    [
        ("cliques", {}, "HierarchicalStrategy"),
        ("cliques", {"MINIGRAD_DIST_HIERARCHICAL": "0"}, "IallreduceStrategy"),
        ("cliques", {"MINIGRAD_DDP_SHM": "0"}, "IallreduceStrategy"),
        ("nolocal", {}, "IallreduceStrategy"),
        ("nolocal", {"MINIGRAD_DIST_HIERARCHICAL": "1"}, "HierarchicalStrategy"),
    ],
)
def test_ddp_picks_two_levels_when_the_group_spans_nodes(simulated, pool, env, expected):
    assert simulated[pool].run(programs.strategy_chosen, {"env": env}, timeout=120) == [expected] * 4


def test_a_bad_setting_is_refused_on_every_rank(simulated):
    for errors in simulated["cliques"].run(programs.bad_setting_is_refused, {"value": "maybe"}, timeout=120):
        for kind, message in errors:
            assert kind == "ValueError" and "MINIGRAD_DIST_HIERARCHICAL='maybe' is not a valid setting" in message


# -- DDP through two levels equals local training ---------------------------------------------------------


def drawn_ddp_case_matches_local(case, world_size, env, timeout):
    """A drawn ``strategies.ddp_cases`` case: DDP with SGD and momentum equals one process (float64, 1e-10)."""
    assert_ddp_matches_local(
        case.model_fn,
        case.data,
        world_size=world_size,
        rtol=1e-10,
        atol=1e-12,
        optimizer="SGD",
        optimizer_kwargs={"lr": 0.1, "momentum": 0.9},
        ddp_kwargs=case.ddp_kwargs,
        seed=case.seed,
        env=env,
        timeout=timeout,
    )


@pytest.mark.parametrize(
    ("pool", "env"),
    [
        ("cliques", {}),  # two levels
        ("nolocal", {"MINIGRAD_DIST_HIERARCHICAL": "1"}),  # two levels with one rank per node
        ("cliques", {"MINIGRAD_DIST_HIERARCHICAL": "0"}),  # flat Iallreduce across simulated nodes
        ("nolocal", {}),  # flat Iallreduce through the network module
    ],
)
def test_ddp_through_two_levels_equals_local(simulated, monkeypatch, pool, env):
    """Drawn models, data and bucket caps: gradients and parameters equal one process's (float64, 1e-10)."""
    monkeypatch.setattr(oracles, "get_pool", lambda world_size: simulated[pool])

    @SETTINGS
    @given(case=strategies.ddp_cases(4, max_steps=2, max_batch_per_rank=2))
    def check(case):
        drawn_ddp_case_matches_local(case, 4, env, timeout=120)

    check()


def test_ddp_over_nodes_of_unequal_size_averages_over_its_members(simulated):
    results = simulated["cliques"].run(programs.ddp_on_unequal_nodes, {}, timeout=120)
    assert results[3] is None
    for result in results[:3]:
        assert result["strategy"] == "HierarchicalStrategy" and result["buckets"] == 2
        for weight, bias in result["grads"]:
            np.testing.assert_array_equal(weight, np.full((2, 3), 2.0))
            np.testing.assert_array_equal(bias, np.ones(2))


def test_progress_alone_completes_two_level_buckets(simulated):
    """The mechanism of overlap: the hooks' ``progress()`` calls finish a reduction without any wait.

    Four steps, each needing the others' previous one: 3 rounds at best; 8 leave MPI's own progress room.
    """
    results = simulated["cliques"].run(programs.progress_completes_without_waiting, {"rounds": 8}, timeout=120)
    for result in results:
        assert result["rounds"][-1] == [True, True], result["rounds"]
        assert [value.tolist() for value in result["values"]] == [[2.5] * 3, [2.5] * 5]  # the mean of 1, 2, 3, 4


# -- all_reduce through two levels equals flat -----------------------------------------------------------------

CASES = [
    {"size": 300_001, "dtype": "float64", "op": "sum", "seed": 1},
    {"size": 70_000, "dtype": "float64", "op": "avg", "seed": 2},  # smaller: stays flat (under 1 MiB)
    {"size": 600_000, "dtype": "float32", "op": "max", "seed": 3},
    {"size": 800_003, "dtype": "float64", "op": "min", "seed": 4},  # 4 chunks through the 2 MiB regions
    {"size": 300_000, "dtype": "int64", "op": "sum", "seed": 5},
    {"size": 140_000, "dtype": "float64", "op": "avg", "seed": 6},
]


@pytest.mark.parametrize("asynchronous", [False, True])
@pytest.mark.parametrize("ranks", [[0, 1, 2, 3], [0, 1, 2]], ids=["2x2 ranks", "2+1 ranks"])
def test_two_level_all_reduce_equals_flat(simulated, ranks, asynchronous):
    spec = {"ranks": ranks, "cases": CASES, "async": asynchronous}
    results = simulated["cliques"].run(programs.all_reduce_two_levels_vs_flat, spec, timeout=120)
    members = [results[r] for r in ranks]
    assert all(result is None for r, result in enumerate(results) if r not in ranks)
    for index, case in enumerate(CASES):
        first = members[0][index]["two_level"]
        for member in members:
            two_level, flat = member[index]["two_level"], member[index]["flat"]
            assert two_level.tobytes() == first.tobytes(), f"case {index}: ranks disagree"
            if case["dtype"] == "int64" or case["op"] in ("max", "min"):
                np.testing.assert_array_equal(two_level, flat, err_msg=f"case {index}")
            else:
                np.testing.assert_allclose(two_level, flat, rtol=1e-12, atol=1e-12, err_msg=f"case {index}")


def test_a_missing_rank_times_out_instead_of_hanging_and_the_group_recovers(simulated):
    results = simulated["cliques"].run(
        programs.all_reduce_waits_time_out, {"size": 1 << 18, "timeout": 0.5}, timeout=120
    )
    for result in results[:3]:
        assert "all_reduce did not complete within 0.5 s" in result["message"]
    assert results[3]["message"] is None
    assert [result["total"] for result in results] == [10.0] * 4
