"""The Reducer's reduction strategies and its observer, through their own interfaces on real MPI ranks."""

from __future__ import annotations

import numpy as np
import pytest

from tests.dist.conftest import get_pool
from tests.dist.ddp import programs_reduction as programs

pytestmark = pytest.mark.timeout(300)

STRATEGIES = ["Iallreduce", "shared memory", "comm hook"]


@pytest.mark.parametrize("world_size", [2, 3])
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_each_strategy_averages_its_buckets_round_after_round(strategy, world_size):
    """slot/copy_gradient/launch/progress/close: every round's buffers hold the mean over ranks on every rank."""
    results = get_pool(world_size).run(programs.strategy_averages_buckets, {"strategy": strategy})
    mean = (world_size + 1) / 2
    for result in results:
        assert result["staging_detached"]
        for round_, buffers in enumerate(result["rounds"]):
            assert [b.size for b in buffers] == [11, 4]
            for buffer in buffers:
                np.testing.assert_allclose(buffer, mean * (round_ + 1), rtol=1e-15)
    for result in results[1:]:
        for mine, theirs in zip(result["rounds"], results[0]["rounds"]):
            for a, b in zip(mine, theirs):
                assert np.array_equal(a, b), "ranks must hold the same bits"


def test_shared_memory_wait_honours_the_timeout_given_to_the_strategy():
    results = get_pool(2).run(programs.shared_memory_wait_times_out, {"timeout": 0.3})
    assert results[1] is None
    assert "bucket 0" in results[0] and "within 0.3 s" in results[0], results[0]
    assert "ranks [1]" in results[0], results[0]


@pytest.mark.parametrize("shm", ["1", "0"])
def test_reducer_reports_the_algorithm_to_its_observer(shm):
    """Every gradient, then each bucket ready before its launch, launches in bucket order, one final wait."""
    results = get_pool(2).run(programs.reducer_reports_to_its_observer, {"shm": shm, "timeout": 42.0})
    for result in results:
        assert result["strategy"] == ("SharedMemoryStrategy" if shm == "1" else "IallreduceStrategy")
        assert result["timeout"] == 42.0
        assert result["tracer"] is None
        assert result["wrapped"] == [result["names"]], "the gradient work is wrapped once, at construction"
        buckets = result["buckets"]
        assert buckets == 4
        for events in result["events"]:
            gradients = [e[1] for e in events if e[0] == "gradient"]
            assert sorted(gradients) == sorted(result["names"])
            launches = [e[1] for e in events if e[0] == "launching"]
            assert launches == list(range(buckets))
            for k in range(buckets):
                ready = events.index(("ready", k))
                launching = events.index(("launching", k))
                assert ready < launching < events.index(("launched", k, True))
            assert events[-2:] == [("waiting",), ("waited",)]
    for mine, theirs in zip(results[0]["grads"], results[1]["grads"]):
        assert np.array_equal(mine, theirs)


@pytest.mark.parametrize("shm", ["1", "0"])
def test_register_comm_hook_replaces_the_chosen_strategy(shm):
    results = get_pool(2).run(programs.comm_hook_replaces_strategy, {"shm": shm})
    expected = "SharedMemoryStrategy" if shm == "1" else "IallreduceStrategy"
    for result in results:
        assert result["chosen"] == result["before"] == expected
        assert result["after"] == "CommHookStrategy"
        assert not result["shared_after"]
    np.testing.assert_allclose(results[0]["grad"], np.full((2, 3), 2 * 1.5))
    assert np.array_equal(results[0]["grad"], results[1]["grad"])


def test_a_bucket_sees_every_array_made_from_the_views_it_lent():
    """has_outside_views: True while a lent view, or any view or Tensor made from it, exists; False after."""
    import gc

    import minigrad as mg
    from minigrad.tensor import Tensor
    from minigrad_dist.ddp.bucket import Bucket

    params = [mg.zeros(2, 3, dtype=mg.float64), mg.zeros(4, dtype=mg.float64)]
    bucket = Bucket(0, params, [0, 1])
    assert not bucket.has_outside_views()
    views = bucket.lend_views()
    assert [v.shape for v in views] == [(2, 3), (4,)]
    assert all(np.shares_memory(v, bucket.buffer) for v in views)
    views[1][...] = 7.0
    np.testing.assert_array_equal(bucket.buffer[6:], 7.0)
    grad = Tensor._make(views[0], False, None, 0)
    derived = [grad[0].array[1:], views[1].reshape(2, 2).T[0], grad.data]
    del views, grad
    gc.collect()
    while derived:
        assert bucket.has_outside_views()
        derived.pop()
        gc.collect()
    assert not bucket.has_outside_views()
    bucket.lend_views()  # lent and dropped at once
    assert not bucket.has_outside_views()
    held = bucket.lend_views()
    old = bucket.buffer
    bucket.replace_buffer()
    assert bucket.buffer is not old and bucket.buffer.shape == old.shape and not bucket.has_outside_views()
    assert np.shares_memory(held[0], old)
