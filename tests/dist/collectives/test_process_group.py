"""Process groups on real MPI ranks (through the test pool): subgroups, round-robin groups, init_process_group's checks.

init_process_group's exception types are compared with PyTorch's (a
one-process gloo group in this process is the oracle: the ``torch_errors``
fixture of conftest.py), except where PyTorch's error is accidental (an
``AssertionError`` for an unknown backend): ours is ``ValueError`` there.
"""

from __future__ import annotations

import pytest

from tests.dist.collectives import programs_process_group as programs
from tests.dist.conftest import get_pool

pytestmark = pytest.mark.timeout(120)


@pytest.mark.timeout(300)
def test_subgroups(pool):
    results = pool.run(programs.subgroup_collectives)
    evens = list(range(0, pool.world_size, 2))
    for rank, result in enumerate(results):
        if rank % 2:
            assert result is None
        else:
            assert result == (float(sum(evens)), float(evens[-1]))


@pytest.mark.timeout(300)
def test_round_robin_group(pool2):
    results = pool2.run(programs.round_robin_allreduce)
    assert results[0] == [float(2 * i + 1) for i in range(6)] == results[1]


def test_init_process_group_checks_ranks_backends_and_environment(torch_errors):
    results = get_pool(3).run(programs.init_checks, timeout=90)
    for rank, out in enumerate(results):
        # rank is wrong on the last rank only, yet every rank raises (none waits alone in a collective)
        kind, text = out["rank_wrong_on_last"]
        assert kind == "ValueError"
        assert ("rank=0 but MPI says rank is 2" in text) if rank == 2 else ("failed on another rank" in text)
        assert out["world_size_wrong"][0] == "ValueError" and "world_size=4 but MPI says world_size is 3" in (
            out["world_size_wrong"][1]
        )
        assert out["env_rank_wrong"][0] == "ValueError" and f"RANK={rank + 1}" in out["env_rank_wrong"][1]
        assert out["unknown_backend"][0] == "ValueError" and "smoke-signals" in out["unknown_backend"][1]
        assert out["bad_init_method"][0] == torch_errors["bad_init_method"] == "RuntimeError"
        assert out["rank_not_int"][0] == torch_errors["rank_not_int"] == "RuntimeError"
        if out["nccl_without_gpu"] is not None:
            assert out["nccl_without_gpu"][0] == "RuntimeError" and "CUDA" in out["nccl_without_gpu"][1]
        assert out["ok_gloo"] is None and out["gloo_backend"] == "gloo" and out["gloo_allreduce"] == 3.0
        assert out["ok_pair"] is None and out["pair_backend"] == "cpu:gloo,cuda:nccl"
        assert out["default_backend"] == "mpi"
        assert out["reduce_op_alias"]
