"""Point-to-point calls, all-to-all and init_process_group's checks on real MPI ranks (through the test pool).

Exception types are compared with PyTorch's (a one-process gloo group in
this process is the oracle), except where PyTorch's error is accidental
(an ``IndexError`` for an empty batch, an ``AssertionError`` for an unknown
backend): ours are ``ValueError`` there.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.dist import programs_p2p as programs
from tests.dist.conftest import get_pool

pytestmark = pytest.mark.timeout(120)

torch = pytest.importorskip("torch")
tdist = pytest.importorskip("torch.distributed")


@pytest.fixture(scope="module")
def torch_errors(tmp_path_factory):
    """The exception type names PyTorch raises for the calls we compare (one-process gloo group)."""
    store = tmp_path_factory.mktemp("torch_store") / "store"
    tdist.init_process_group("gloo", init_method=f"file://{store}", world_size=1, rank=0)
    try:
        calls = {
            "no_dst": lambda: tdist.send(torch.ones(2)),
            "send_to_self": lambda: tdist.send(torch.ones(2), dst=0),
            "negative_tag": lambda: tdist.isend(torch.ones(2), dst=1, tag=-1),
            "bad_op": lambda: tdist.P2POp(tdist.send, torch.ones(2), 0),
            "a2a_dtypes": lambda: tdist.all_to_all([torch.zeros(2)], [torch.zeros(2, dtype=torch.float64)]),
            "a2a_list_length": lambda: tdist.all_to_all([torch.zeros(2)] * 2, [torch.zeros(2)]),
            "single_split_sum": lambda: tdist.all_to_all_single(torch.zeros(1), torch.zeros(1), [1], [2]),
            "single_dtypes": lambda: tdist.all_to_all_single(torch.zeros(2), torch.zeros(2, dtype=torch.float64)),
        }
        errors = {name: programs._message(call) for name, call in calls.items()}
    finally:
        tdist.destroy_process_group()
    for name, kwargs in {
        "bad_init_method": dict(backend="gloo", init_method="carrier-pigeon://x", world_size=1, rank=0),
        "rank_not_int": dict(backend="gloo", init_method=f"file://{store}2", world_size=1, rank="0"),
    }.items():
        errors[name] = programs._message(lambda kwargs=kwargs: tdist.init_process_group(**kwargs))
        if tdist.is_initialized():
            tdist.destroy_process_group()
    return {name: error[0] for name, error in errors.items() if error is not None}


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


@pytest.mark.parametrize("world_size", [2, 3])
def test_all_to_all_and_all_to_all_single(world_size):
    assert get_pool(world_size).run(programs.all_to_all_exchanges, timeout=60) == list(range(world_size))


@settings(max_examples=10, deadline=None)
@given(data=st.data())
def test_all_to_all_single_drawn_splits(data):
    n = 3
    splits = data.draw(st.lists(st.lists(st.integers(0, 3), min_size=n, max_size=n), min_size=n, max_size=n))
    width = data.draw(st.integers(1, 3))
    outputs = get_pool(n).run(programs.all_to_all_single_splits, {"splits": splits, "width": width}, timeout=20)
    for r, y in enumerate(outputs):
        expected = np.concatenate(
            [np.full((splits[i][r], width), 100 * i + r, dtype=np.float32) for i in range(n)]
        )
        np.testing.assert_array_equal(y, expected)


def test_all_to_all_size_mismatch_fails_only_the_receiver_and_hangs_nobody():
    results = get_pool(3).run(programs.all_to_all_mismatch, timeout=60)
    problem, check = results[0]
    assert problem[0] == "RuntimeError"
    assert "rank 2 sent 16 bytes of float64, expected 24 bytes of float64" in problem[1]
    assert [r[0] for r in results[1:]] == [None, None]
    assert [r[1] for r in results] == [3.0, 3.0, 3.0]


def test_all_to_all_argument_errors_match_pytorch(pool2, torch_errors):
    errors = pool2.run(programs.all_to_all_bad_arguments, timeout=60)[0]
    for name in ("a2a_dtypes", "a2a_list_length", "single_split_sum", "single_dtypes"):
        assert errors[name][0] == torch_errors[name], (name, errors[name])
    assert errors["single_not_divisible"][0] == "RuntimeError" and "divide equally" in errors["single_not_divisible"][1]


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
