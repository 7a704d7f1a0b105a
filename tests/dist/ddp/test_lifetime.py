"""DDP models dropped without ``close()`` free their communicators and windows (``minigrad_dist.resources``).

MPICH gives a process about 2,000 communicators; every DDP model makes
several (its control group, its node and cross-node communicators) and a
shared-memory window. Thousands of models built and dropped in one process
must work, and the number of models whose resources are still held must stay small.
"""

from __future__ import annotations

import numpy as np
import pytest

from minigrad_dist.testing import MPIPool
from tests.dist.conftest import get_pool
from tests.dist.ddp import programs_lifetime as programs

pytestmark = pytest.mark.timeout(300)


def test_5000_dropped_ddp_models_free_their_communicators():
    results = get_pool(2).run(programs.constructions_dropped, {"n": 5000}, timeout=280)
    for out in results:
        assert out["most_alive"] <= 3, "dropped models' communicators must be freed at the next construction"
        assert out["hooks_on_last"] == 2, "only the live model's hooks remain on the parameters"
        assert out["left_alive"] == 0
        np.testing.assert_allclose(out["grad"], out["expected"], rtol=1e-10)
    print("seconds per rank:", [round(out["seconds"], 2) for out in results])


def test_dropped_hierarchical_ddp_models_on_two_simulated_nodes_free_their_windows():
    # 4 ranks as 2 nodes: each model holds a node window, cross-node communicators and a two-level control
    # group (5 communicators, 2 windows); 500 of them leaked would exceed MPICH's communicators.
    pool = MPIPool(4, env={"MPIR_CVAR_NUM_CLIQUES": "2"})
    try:
        results = pool.run(programs.hierarchical_constructions_dropped, {"n": 500}, timeout=280)
    finally:
        pool.close()
    for out in results:
        assert out["strategy"] == "HierarchicalStrategy"
        assert out["most_alive"] <= 3 and out["left_alive"] == 0 and out["hooks_on_last"] == 2
        np.testing.assert_allclose(out["grad"], out["expected"], rtol=1e-10)
    print("seconds per rank:", [round(out["seconds"], 2) for out in results])


def test_models_dropped_at_different_times_on_different_ranks_are_freed_once_all_dropped_them():
    results = get_pool(2).run(programs.drops_at_different_times, {"held": 5, "later": 4}, timeout=60)
    # Both ranks dropped the last of the 4 later models (pending until the next construction). Rank 1 dropped
    # the 5 held ones too, but frees nothing alone; rank 0 still holds them: not pending there.
    assert results[1]["while_held"] == (5 + 1, 5 + 1) and results[0]["while_held"] == (1, 5 + 1)
    for out in results:
        assert out["after_release"] == (0, 0)


def test_models_in_reference_cycles_are_collected_before_too_many_are_alive():
    from minigrad_dist.resources import GC_THRESHOLD

    results = get_pool(2).run(programs.constructions_in_reference_cycles, {"n": 600}, timeout=120)
    for out in results:
        assert out["most_alive"] <= GC_THRESHOLD + 1 and out["left_alive"] == 0


@pytest.mark.parametrize("zero2", [False, True], ids=["zero1", "zero2"])
def test_dropped_ddp_models_with_zero_overlap_free_the_all_gather_group(zero2):
    # Each model holds 3 communicators (control, node, ZeRO's all-gather): 1,000 leaked would exceed MPICH's.
    results = get_pool(2).run(programs.zero_overlapped_constructions_dropped, {"n": 1000, "zero2": zero2}, timeout=120)
    for out in results:
        assert out["most_alive"] <= 3 and out["left_alive"] == 0


def test_destroy_process_group_frees_the_models_dropped_since_the_last_construction():
    # 1,100 rounds with one model each: leaked, their 2 communicators per round would exceed MPICH's.
    results = get_pool(2).run(programs.init_destroy_rounds, {"n": 1100}, timeout=200)
    for out in results:
        assert out == {"control_before": True, "control_after": False, "hooks": 0}


def test_a_rank_destroying_the_group_alone_warns_instead_of_hanging_and_so_does_the_late_one():
    results = get_pool(2).run(programs.destroy_alone_then_late, {"timeout": 0.5, "late": 1.5}, timeout=60)
    for out in results:
        assert out["warned"] and out["seconds"] < 5
    np.testing.assert_allclose(results[0]["grad"], results[1]["grad"], rtol=1e-12)
