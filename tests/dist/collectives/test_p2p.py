"""Point-to-point calls (send/recv, isend/irecv, batch_isend_irecv) on real MPI ranks (through the test pool).

Exception types are compared with PyTorch's (a one-process gloo group in
this process is the oracle: the ``torch_errors`` fixture of conftest.py),
except where PyTorch's error is accidental (an ``IndexError`` for an empty
batch): ours is ``ValueError`` there.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.dist.collectives import programs_p2p as programs
from tests.dist.conftest import get_pool

pytestmark = pytest.mark.timeout(120)


@pytest.mark.parametrize("world_size", [2, 3])
def test_send_recv_tags_order_batches_and_groups(world_size):
    seen = get_pool(world_size).run(programs.p2p_exchanges, timeout=60)
    last = world_size - 1
    for k in range(1, world_size):
        assert seen[k]["from_zero"] == (0, [[float(k)] * 3] * 2)
    assert seen[0]["any_source"] == [(k, k) for k in range(1, world_size)]
    assert seen[0]["tags"] == (7.0, 5.0)
    assert seen[0]["order"] == (1, 2, True, last)
    for r in range(world_size):
        assert seen[r]["ring"] == [float((r - 1) % world_size)] * 3
    assert seen[last]["group"] == (0, [0.0, 1.0, 2.0])
    assert seen[1]["dtypes"] == [True, True, True]


def test_mismatched_receive_raises_and_the_channel_still_works(pool2):
    messages = pool2.run(programs.p2p_mismatches, timeout=60)[0]
    kinds = [m[0] for m in messages[:4]]
    assert kinds == ["RuntimeError"] * 4
    assert "rank 1 sent a tensor of shape (3,) and dtype float32" in messages[0][1]
    assert "receiving tensor has shape (4,)" in messages[0][1]
    assert "shape (5,)" in messages[1][1], "a longer message (cut by MPI) still names what was sent"
    assert "dtype int32" in messages[2][1] and "dtype float32" in messages[2][1]
    assert "shape (2, 3)" in messages[3][1] and "shape (3, 2)" in messages[3][1]
    assert messages[4] == [9.0, 9.0]


def test_argument_errors_match_pytorch(pool2, torch_errors):
    errors = pool2.run(programs.p2p_bad_arguments, timeout=60)[0]
    for name in ("no_dst", "send_to_self", "negative_tag", "bad_op"):
        assert errors[name][0] == torch_errors[name], (name, errors[name])
    assert errors["recv_from_self"][0] == "ValueError" and "own rank" in errors["recv_from_self"][1]
    assert errors["dst_out_of_range"][0] == "ValueError" and "dst=5" in errors["dst_out_of_range"][1]
    assert errors["both_dst"][0] == "ValueError" and "not both" in errors["both_dst"][1]
    assert errors["not_contiguous"][0] == "ValueError" and "contiguous" in errors["not_contiguous"][1]
    assert errors["not_a_tensor"][0] == "TypeError"
    assert errors["empty_batch"][0] == "ValueError" and "non-empty list of P2POp" in errors["empty_batch"][1]


@settings(max_examples=12, deadline=None)
@given(
    shape=st.lists(st.integers(0, 4), min_size=0, max_size=3).map(tuple),
    dtype=st.sampled_from(["float32", "float64", "int64", "int8", "bool", "complex64"]),
    tag=st.integers(0, 1000),
    seed=st.integers(0, 2**16),
)
def test_drawn_tensors_round_trip(shape, dtype, tag, seed):
    values = np.asarray(np.random.default_rng(seed).standard_normal(shape) * 10).astype(dtype)
    results = get_pool(2).run(programs.p2p_roundtrip, {"values": values, "tag": tag}, timeout=20)
    source, back = results[0]
    got_source, got = results[1]
    assert source == 1 and got_source == 0
    np.testing.assert_array_equal(got, values)
    np.testing.assert_array_equal(back, values * 2 if values.dtype != np.bool_ else values)
    assert back.dtype == values.dtype and back.shape == values.shape


@pytest.mark.parametrize("nbytes", [64 << 10, 4 << 20])
def test_a_message_arrives_while_its_sender_computes_without_mpi_calls(pool2, nbytes):
    # One contiguous message: MPI moves it while the sender sleeps (before: a header-and-data datatype went in
    # small pieces, each waiting for a sender's MPI call, so the receive ended only at the sender's wait()).
    waited, intact = pool2.run(programs.p2p_arrives_while_the_sender_computes, {"nbytes": nbytes, "sleep": 2.0},
                               timeout=30)[0]
    assert intact
    assert waited < 1.0, f"the receive of {nbytes} bytes waited {waited:.2f} s for the sleeping sender"
