"""minigrad_dist.nn.functional: the differentiable collectives, on 1 to 4 real MPI ranks.

For each collective, hypothesis draws shapes, values (by a seed), roots, op
and a loss that differs on each rank; the ranks run the collective, their
loss and its backward. Their gradients must equal, to 1e-10 in float64, the
gradient of the total loss (the sum of every rank's loss) computed in this
process on every rank's inputs with local ops (``programs.reference``), and
finite differences of the all-reduced total loss, taken by moving one
rank's inputs, must agree too.
"""

from __future__ import annotations

import pickle
import socket

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, event, given, settings
from hypothesis import strategies as st

from tests.dist.collectives import programs_differentiable as programs
from tests.dist.conftest import get_pool

pytestmark = pytest.mark.timeout(300)

# No shrinking: a failing case restarts the pool (seconds each), and the drawn cases are small already.
PHASES = [Phase.explicit, Phase.reuse, Phase.generate]

COLLECTIVES = [
    "all_reduce", "broadcast", "reduce", "all_gather", "reduce_scatter", "gather", "scatter", "all_to_all",
    "all_to_all_single",
]
ROOTED = ("broadcast", "reduce", "gather", "scatter")
WITH_OP = ("all_reduce", "reduce", "reduce_scatter")


@st.composite
def cases(draw, collective, world_sizes):
    """A case of ``collective`` (see programs_differentiable) on one of ``world_sizes`` ranks."""
    n = draw(st.sampled_from(world_sizes))
    case = {
        "collective": collective,
        "world_size": n,
        "seed": draw(st.integers(0, 2**32 - 1)),
        "loss": draw(st.sampled_from(programs.LOSS_KINDS)),
        "fd_rank": draw(st.integers(0, n - 1)),
    }
    square = st.lists(st.lists(st.integers(0, 3), min_size=n, max_size=n), min_size=n, max_size=n)
    if collective == "all_to_all":
        case["sizes"] = draw(square)
    elif collective == "all_to_all_single":
        case["explicit_splits"] = draw(st.booleans())
        rows = draw(st.integers(0, 2))
        case["splits"] = draw(square) if case["explicit_splits"] else [[rows] * n for _ in range(n)]
        case["width"] = draw(st.integers(1, 2))
    else:
        case["shape"] = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))
    if collective in ROOTED:
        case["root"] = draw(st.integers(0, n - 1))
    if collective in WITH_OP:
        case["op"] = draw(st.sampled_from(sorted(programs.OPS)))
    if collective in ("broadcast", "scatter"):
        case["others_need_grad"] = draw(st.booleans())
    return case


def check_against_reference(case):
    """Run ``case`` on the ranks; compare losses, gradients and finite differences with the local reference."""
    results = get_pool(case["world_size"]).run(programs.gradients, case, timeout=120)
    losses, grads = programs.reference(case)
    for r, (loss, rank_grads, _) in enumerate(results):
        assert loss == pytest.approx(losses[r], rel=1e-10, abs=1e-12), (r, case)
        for got, want in zip(rank_grads, grads[r]):
            if got is None:  # an input that did not require grad: nothing may depend on it
                assert not programs.needs_grad(case, r)
                np.testing.assert_array_equal(want, 0)
            else:
                np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12, err_msg=f"rank {r}, {case}")
    fd_rank = case["fd_rank"]
    differences = results[fd_rank][2]
    assert len(differences) == min(programs.FD_ENTRIES, sum(a.size for a in programs.rank_inputs(case, fd_rank)))
    for (t, i), numeric in differences:
        analytic = grads[fd_rank][t].reshape(-1)[i]
        assert numeric == pytest.approx(analytic, rel=1e-6, abs=1e-6), (fd_rank, t, i, case)


@pytest.mark.parametrize("collective", COLLECTIVES)
@settings(max_examples=40, deadline=None, derandomize=True, phases=PHASES, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_gradients_match_local_reference_on_one_and_two_ranks(collective, data):
    case = data.draw(cases(collective, [1, 2]))
    event(f"{case['world_size']} ranks")
    check_against_reference(case)


@pytest.mark.parametrize("collective", COLLECTIVES)
@settings(max_examples=10, deadline=None, derandomize=True, phases=PHASES, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_gradients_match_local_reference_on_three_and_four_ranks(collective, data):
    case = data.draw(cases(collective, [3, 4]))
    event(f"{case['world_size']} ranks")
    check_against_reference(case)


@pytest.mark.parametrize("collective", ["broadcast", "scatter"])
def test_ranks_whose_inputs_need_no_grad_still_take_part_in_the_backward(collective):
    """The other ranks' placeholders do not require grad, yet their losses' gradients reach the root."""
    case = {
        "collective": collective, "world_size": 2, "seed": 5, "loss": "square", "fd_rank": 0, "shape": (2,),
        "root": 1, "others_need_grad": False,
    }
    check_against_reference(case)


@pytest.mark.parametrize("collective", ["all_reduce", "all_gather", "all_to_all_single", "scatter"])
@settings(max_examples=5, deadline=None, derandomize=True, phases=PHASES)
@given(data=st.data())
def test_double_backward_matches_local_reference(collective, data):
    case = data.draw(cases(collective, [2]))
    case["loss"] = "tanh"  # each rank's kind is shifted from it: nonlinear on both ranks, so the Hessian is not zero
    case["others_need_grad"] = True
    got = get_pool(2).run(programs.double_backward, case, timeout=120)
    want = programs.reference_double_backward(case)
    for r in range(2):
        for g, w in zip(got[r], want[r]):
            np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12, err_msg=f"rank {r}, {case}")


def test_errors_raise_on_every_rank_and_hang_nobody():
    results = get_pool(3).run(programs.bad_calls, timeout=120)
    assert [check for _, check in results] == [3.0, 3.0, 3.0]
    expected = {
        "shape_across_ranks": ("ValueError", "rank 1 passed shape=(4,)"),
        "dtype_across_ranks": ("ValueError", "dtype=float32"),
        "src_across_ranks": ("ValueError", "every rank must pass the same shape, dtype and src"),
        "src_outside_group_on_one_rank": ("ValueError", "src=8 is not a rank of the group"),
        "not_a_tensor": ("TypeError", "all_reduce: tensor must be a Tensor, got ndarray"),
        "list_length_on_one_rank": ("RuntimeError", "input_list must hold one Tensor per rank of the group (3), got 2"),
        "scatter_shapes_in_list": ("RuntimeError", "tensors[2] has shape (2,)"),
        "all_to_all_counts": ("ValueError", "rank 2 sends rank 0 2 elements but rank 0 expects 3 from it"),
        "all_to_all_single_split_sum": ("RuntimeError", "input_split_sizes [2, 1, 1] sum to 4"),
        "grad_mode_across_ranks": ("RuntimeError", "rank 0 records gradients but rank 1 runs under no_grad"),
        "max_backward": ("RuntimeError", "no gradient for ReduceOp.MAX"),
        "leaf_output_on_one_rank": ("RuntimeError", "output receives the result in place"),
    }
    for rank, (errors, _) in enumerate(results):
        for name, (kind, text) in expected.items():
            assert errors[name] is not None, (rank, name)
            assert errors[name][0] == kind and text in errors[name][1], (rank, name, errors[name])
    # The rank that found a local problem says so; the others name it.
    assert "found on rank 2" in results[0][0]["src_outside_group_on_one_rank"][1]
    assert "found on rank" not in results[2][0]["src_outside_group_on_one_rank"][1]


def test_inputs_are_not_written_and_given_outputs_are_filled_differentiably():
    results = get_pool(2).run(programs.inputs_untouched_and_outputs_filled, timeout=60)
    for r, result in enumerate(results):
        assert result["input_untouched"] and result["new_tensor"] and result["filled"], result
        np.testing.assert_array_equal(result["received"], [2 * r, 2 * r + 1, 2 * r + 1, 2 * r + 2])
        np.testing.assert_array_equal(result["grad"], 2 * (np.arange(4.0) + r))


def test_subgroup_with_global_roots():
    """On the group of global ranks 0 and 2: rank r's loss weighs the outputs by r + 1 (and slot i by i + 1)."""
    results = get_pool(3).run(programs.subgroup_gradients, timeout=60)
    assert results[1] is None
    # broadcast from global rank 2 (x = 3): its gradient sums both losses' weights, 1 + 3.
    assert results[0]["broadcast"] == (3.0, 0.0) and results[2]["broadcast"] == (3.0, 4.0)
    # all_gather: slot 0 holds rank 0's x, slot 1 rank 2's; the gradient of slot i is (1 + 3) * (i + 1).
    assert results[0]["all_gather"] == ([1.0, 3.0], 4.0) and results[2]["all_gather"] == ([1.0, 3.0], 8.0)
    # reduce to global rank 2: only its loss (weight 3) sees the sum; rank 0's output is zero.
    assert results[0]["reduce"] == (0.0, 3.0) and results[2]["reduce"] == (4.0, 3.0)


def _case(collective, seed, loss, **fields):
    return {"collective": collective, "world_size": 2, "seed": seed, "loss": loss, "fd_rank": 0, **fields}


TORCH_CASES = [
    _case("all_reduce", 1, "tanh", shape=(2, 3), op="SUM"),
    _case("broadcast", 2, "square", shape=(3,), root=1, others_need_grad=True),
    _case("reduce", 3, "sin", shape=(2, 2), root=0, op="SUM"),
    _case("all_gather", 4, "linear", shape=(3,)),
    _case("reduce_scatter", 5, "square", shape=(2,), op="SUM"),
    _case("gather", 6, "tanh", shape=(2,), root=1),
    _case("scatter", 7, "sin", shape=(2,), root=0, others_need_grad=True),
    _case("all_to_all", 8, "square", sizes=[[2, 2], [2, 2]]),  # gloo: one size for all
    _case("all_to_all_single", 9, "tanh", splits=[[1, 2], [0, 1]], width=2, explicit_splits=True),
    _case("all_to_all_single", 10, "sin", splits=[[1, 1], [1, 1]], width=3, explicit_splits=False),
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_gradients_match_pytorch(tmp_path):
    """The same programs with PyTorch's torch.distributed.nn.functional (two gloo processes): the same gradients."""
    torch_mp = pytest.importorskip("torch.multiprocessing")
    torch_mp.spawn(programs.torch_gradients, args=(2, _free_port(), TORCH_CASES, str(tmp_path)), nprocs=2)
    theirs = [pickle.loads((tmp_path / f"{r}.pkl").read_bytes()) for r in range(2)]
    ours = get_pool(2).run(programs.minigrad_gradients, TORCH_CASES, timeout=60)
    for r in range(2):
        for case, mine, torch_grads in zip(TORCH_CASES, ours[r], theirs[r]):
            for got, want in zip(mine, torch_grads):
                np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12, err_msg=f"rank {r}, {case}")
