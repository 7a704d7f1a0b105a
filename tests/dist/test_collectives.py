"""Collectives on real MPI ranks (world sizes 1 to 4), through the test pool."""

from __future__ import annotations

import pytest

from tests.dist import programs_collectives as programs

pytestmark = pytest.mark.timeout(300)


def test_every_collective(pool):
    assert pool.run(programs.every_collective) == list(range(pool.world_size))


def test_subgroups(pool):
    results = pool.run(programs.subgroup_collectives)
    evens = list(range(0, pool.world_size, 2))
    for rank, result in enumerate(results):
        if rank % 2:
            assert result is None
        else:
            assert result == (float(sum(evens)), float(evens[-1]))


def test_round_robin_group(pool2):
    results = pool2.run(programs.round_robin_allreduce)
    assert results[0] == [float(2 * i + 1) for i in range(6)] == results[1]


def test_bad_arguments_raise_clear_errors(pool2):
    messages = pool2.run(programs.bad_arguments)[0]
    assert all(m is not None for m in messages), messages
    assert "Tensor or a NumPy/CuPy array" in messages[0]
    assert "src=2 is not a rank" in messages[1]
    assert "ReduceOp" in messages[2]
    assert "one tensor per rank" in messages[3]
    assert "shape" in messages[4]
    assert "contiguous" in messages[5]
    assert "AVG" in messages[6]
