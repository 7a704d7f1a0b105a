"""Collectives on real MPI ranks (world sizes 1 to 4), through the test pool: one test per collective.

Each rank program checks its collective against the definition on every rank
and returns the rank. The other collectives have their own files:
point-to-point in test_p2p.py, all_to_all in test_all_to_all.py, groups and
init_process_group in test_process_group.py, the teaching ring in
test_ring_allreduce.py.
"""

from __future__ import annotations

import pytest

from tests.dist.collectives import programs_collectives as programs

pytestmark = pytest.mark.timeout(300)


def test_all_reduce(pool):
    assert pool.run(programs.check_all_reduce) == list(range(pool.world_size))


def test_all_reduce_async(pool):
    assert pool.run(programs.check_all_reduce_async) == list(range(pool.world_size))


def test_broadcast(pool):
    assert pool.run(programs.check_broadcast) == list(range(pool.world_size))


def test_all_gather(pool):
    assert pool.run(programs.check_all_gather) == list(range(pool.world_size))


def test_reduce_scatter(pool):
    assert pool.run(programs.check_reduce_scatter) == list(range(pool.world_size))


def test_async_collectives_keep_their_buffers_until_complete(pool2):
    assert pool2.run(programs.check_async_collectives_keep_their_buffers) == [0, 1]


def test_reduce(pool):
    assert pool.run(programs.check_reduce) == list(range(pool.world_size))


def test_gather(pool):
    assert pool.run(programs.check_gather) == list(range(pool.world_size))


def test_scatter(pool):
    assert pool.run(programs.check_scatter) == list(range(pool.world_size))


def test_all_gather_object(pool):
    assert pool.run(programs.check_all_gather_object) == list(range(pool.world_size))


def test_broadcast_object_list(pool):
    assert pool.run(programs.check_broadcast_object_list) == list(range(pool.world_size))


def test_barrier(pool):
    assert pool.run(programs.check_barrier) == list(range(pool.world_size))


def test_bad_arguments_raise_clear_errors(pool2):
    messages = pool2.run(programs.bad_arguments)[0]
    assert all(m is not None for m in messages), messages
    assert messages[0].startswith("TypeError") and "Tensor or a NumPy/CuPy array" in messages[0]
    assert messages[1].startswith("ValueError") and "src=2 is not a rank" in messages[1]
    assert messages[2].startswith("TypeError") and "ReduceOp" in messages[2]
    # The classes PyTorch's process groups raise for a list that does not fit, and for AVG of integers:
    assert messages[3].startswith("RuntimeError") and "one tensor per rank" in messages[3]
    assert messages[4].startswith("RuntimeError") and "shape" in messages[4]
    assert messages[5].startswith("ValueError") and "contiguous" in messages[5]
    assert messages[6].startswith("RuntimeError") and "AVG" in messages[6]


@pytest.mark.parametrize("fn", ["gather", "scatter"])
@pytest.mark.parametrize("problem", ["shape", "list"])
def test_a_rooted_call_that_does_not_fit_raises_on_every_rank(pool2, fn, problem):
    messages = pool2.run(programs.rooted_mismatch, {"fn": fn, "problem": problem})
    assert all(m is not None for m in messages), messages  # no rank returns normally, none hangs
    assert len(set(messages)) == 1
    if problem == "shape":  # found by comparing the ranks' tensors
        assert messages[0].startswith("ValueError") and "shape (3,) and dtype float32, but the root's" in messages[0]
    else:  # the root's list: PyTorch's process groups raise RuntimeError
        assert messages[0].startswith("RuntimeError") and "one tensor per rank" in messages[0]
