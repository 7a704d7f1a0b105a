"""DistributedSampler: disjoint shards that cover the data set, reshuffled per epoch."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minigrad_dist import DistributedSampler


@given(length=st.integers(0, 50), replicas=st.integers(1, 5), shuffle=st.booleans(), drop_last=st.booleans())
@settings(max_examples=60, deadline=None)
def test_shards_cover_the_data_once(length, replicas, shuffle, drop_last):
    samplers = [DistributedSampler(length, replicas, r, shuffle=shuffle, drop_last=drop_last) for r in range(replicas)]
    shards = [list(s) for s in samplers]
    assert len({len(s) for s in shards}) == 1, "every rank gets the same number of samples"
    assert all(len(s) == len(samplers[0]) for s in shards)
    union = [i for shard in shards for i in shard]
    if drop_last:
        assert len(set(union)) == len(union) == (length // replicas) * replicas
    else:
        assert set(union) == set(range(length))


def test_set_epoch_reshuffles_identically_on_every_rank():
    a, b = DistributedSampler(20, 2, 0, seed=3), DistributedSampler(20, 2, 1, seed=3)
    first = list(a) + list(b)
    a.set_epoch(1)
    b.set_epoch(1)
    second = list(a) + list(b)
    assert sorted(first) == sorted(second) == list(range(20))
    assert first != second
    c = DistributedSampler(20, 2, 0, seed=3)
    c.set_epoch(1)
    assert list(c) == list(a)


def test_bad_rank_is_rejected():
    with pytest.raises(ValueError, match=r"rank must be in \[0, 2\)"):
        DistributedSampler(10, num_replicas=2, rank=2)
