"""DistributedDataParallel on real MPI ranks, compared with one process on the full batch.

How the property tests avoid deadlocks: hypothesis draws each example here,
in the pytest process, and ships it to a persistent pool of ranks (see
``tests/dist/mpi_pool.py``); every rank runs the same example, results come back to
this process, and the comparison (and any shrinking) happens here. A task
that does not answer in time kills the pool and fails the test.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from minigrad_dist.testing import assert_ddp_matches_local, strategies
from tests.dist.conftest import get_pool
from tests.dist.ddp import programs_ddp as programs

pytestmark = pytest.mark.timeout(600)

SETTINGS = settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)


def assert_close(a, b, rtol=1e-10, atol=1e-12, what=""):
    assert (a is None) == (b is None), f"{what}: one gradient is None"
    if a is not None:
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=what)


@pytest.mark.parametrize("reduction", ["shared memory", "Iallreduce"])
@pytest.mark.parametrize("world_size", [1, 2, 3, 4])
def test_ddp_gradients_and_training_equal_local(world_size, reduction):
    """Drawn models, data and DDP options, through the testing kit's oracle.

    After every step, every rank's gradients equal one process's on the full
    batch within 1e-10 relative (float64), its parameters likewise, and the
    parameters are bitwise identical across ranks. Both ways of reducing
    buckets are tested: through MPI shared memory (the default when all ranks
    share a node, as here) and with MPI's ``Iallreduce``.
    """
    env = {"MINIGRAD_DDP_SHM": "1" if reduction == "shared memory" else "0"}

    @SETTINGS
    @given(case=strategies.ddp_cases(world_size))
    def check(case):
        assert_ddp_matches_local(
            case.model_fn, case.data, world_size=world_size, rtol=1e-10, atol=1e-12,
            optimizer="SGD", optimizer_kwargs={"lr": 0.1, "momentum": 0.9},
            ddp_kwargs=case.ddp_kwargs, seed=case.seed, env=env,
        )

    check()


@pytest.mark.parametrize("shm", ["1", "0"])
def test_hooks_drive_launched_reductions_forward_during_backward(shm, tmp_path):
    for result in get_pool(2).run(programs.progress_during_backward, {"shm": shm, "dir": str(tmp_path)}):
        assert result["shared"] == (shm == "1")
        assert result["done_before_end"] == [True, True], "reductions must progress before the end of backward"


def test_ddp_on_a_subgroup_averages_over_its_members_only():
    results = get_pool(3).run(programs.ddp_on_subgroup, {})
    assert results[1] is None
    for result in (results[0], results[2]):
        assert result["shared"]
        # Inputs of ones times 1 and 3: the weight gradient is their mean, 2, everywhere.
        np.testing.assert_array_equal(result["grad"], np.full((2, 3), 2.0))


@pytest.mark.parametrize("enabled", [True, False])
def test_shared_memory_reduction_is_used_when_all_ranks_share_a_node(enabled):
    for used in get_pool(3).run(programs.shared_memory_in_use, {"shm": "1" if enabled else "0"}):
        assert used == enabled


@given(micro=st.integers(2, 4), cap=st.sampled_from([1e-6, 25.0]))
@settings(max_examples=4, deadline=None, derandomize=True)
def test_no_sync_accumulates_then_averages(micro, cap):
    spec = {"in_features": 3, "hidden": [5], "classes": 3, "activation": "tanh", "batch_per_rank": 2,
            "data_seed": 3, "model_seed": 4, "bucket_cap_mb": cap, "micro_batches": micro}
    results = get_pool(2).run(programs.no_sync_accumulation, spec)
    for res in results:
        assert res["reductions_during_no_sync"] == [0] * (micro - 1), "no_sync must not communicate"
        assert res["reductions"] == 1
        for name, want in results[0]["local"].items():
            # Each rank's micro-batch mean loss gives 1/world of a global mean: the local sum of
            # micro-batch full-batch means equals DDP's averaged accumulated gradients.
            assert_close(res["grads"][name], want, what=name)


BASE = {"in_features": 4, "hidden": [16], "classes": 3, "activation": "tanh", "batch_per_rank": 8,
        "data_seed": 0, "model_seed": 1, "bucket_cap_mb": 25.0}


def test_allreduce_hook_equals_default():
    spec = dict(BASE, hook="allreduce", steps=2)
    results = get_pool(2).run(programs.comm_hook_run, spec)
    for name, want in results[0]["exact_first_grads"].items():
        for res in results:
            assert_close(res["first_grads"][name], want, what=name)


def test_fp16_hook_error_is_bounded():
    spec = dict(BASE, hook="fp16", steps=1)
    results = get_pool(2).run(programs.comm_hook_run, spec)
    for name, want in results[0]["exact_first_grads"].items():
        got = results[1]["first_grads"][name]
        # float16 keeps 11 significant bits: relative error <= 2**-10 per value, plus underflow near 0.
        np.testing.assert_allclose(got, want, rtol=2e-3, atol=1e-4, err_msg=name)


def test_powersgd_converges_on_a_small_problem():
    """Rank-2 compression with error feedback fits a fixed batch nearly as well as exact averaging."""
    spec = dict(BASE, hidden=[32, 32], hook="powersgd", steps=60, data_batches=1, start=2, rank=2, lr=0.2)
    results = get_pool(2).run(programs.comm_hook_run, spec)
    exact = get_pool(2).run(programs.comm_hook_run, dict(spec, hook="allreduce"))
    losses, exact_losses = results[0]["losses"], exact[0]["losses"]
    assert losses[-1] < 0.3 * losses[0], f"PowerSGD did not reduce the loss: {losses[0]:.3f} -> {losses[-1]:.3f}"
    assert losses[-1] < 2 * exact_losses[-1] + 0.05, (losses[-1], exact_losses[-1])
    for name in results[0]["params"]:
        assert results[0]["params"][name].tobytes() == results[1]["params"][name].tobytes()


@pytest.mark.parametrize("world_size", [2, 3])
def test_join_with_uneven_inputs_equals_training_on_the_union(world_size):
    spec = dict(BASE, batches=[4, 2, 3], batch_per_rank=3)
    results = get_pool(world_size).run(programs.join_uneven, spec)
    for res in results:
        for name, want in results[0]["local"].items():
            np.testing.assert_allclose(res["params"][name], want, rtol=1e-9, atol=1e-12, err_msg=name)
            assert res["params"][name].tobytes() == results[0]["params"][name].tobytes()


def test_bucket_rebuild_uses_observed_order_and_keeps_results():
    results = get_pool(2).run(programs.bucket_rebuild, {})
    res = results[0]
    names = res["names"]
    assert res["before"] != res["after"], "buckets should follow the order gradients arrived in"
    # Observed order: head first, then 'late', then 'early' (reverse of use in forward).
    flat_after = [names[i] for bucket in res["after"] for i in bucket]
    assert flat_after.index("head.weight") < flat_after.index("late.weight") < flat_after.index("early.weight")
    assert results[1]["after"] == res["after"], "every rank must build the same buckets"
    for step in range(3):
        for name, want in res["local"][step].items():
            for r in results:
                assert_close(r["grads"][step][name], want, what=f"step {step} {name}")


def test_find_unused_parameters_globally_unused_grad_untouched():
    results = get_pool(2).run(programs.unused_parameters, {"find_unused": True, "use_extra": [False]})
    for res in results:
        assert res["grads"]["extra.weight"] is None and res["grads"]["extra.bias"] is None
        assert res["grads"]["main.weight"] is not None


def test_find_unused_parameters_locally_unused_gets_average():
    results = get_pool(2).run(programs.unused_parameters, {"find_unused": True, "use_extra": [True, False]})
    # Rank 0 used ``extra`` with input 1.0, rank 1 did not: the average is half of rank 0's gradient.
    for res in results:
        np.testing.assert_allclose(res["grads"]["extra.weight"], np.full((2, 3), 0.5 * 2 * 1.0))
    assert results[0]["grads"]["main.weight"].tobytes() == results[1]["grads"]["main.weight"].tobytes()


@pytest.mark.parametrize("first_uses_extra", [[True, True], [True, False], [False, True]])
def test_a_parameter_used_only_under_no_sync_is_averaged_by_the_synced_backward(first_uses_extra):
    # ``extra`` gets gradients in the no_sync pass only (input rank + 1 on 2 rows: 2 (rank + 1) per element),
    # then the synced pass leaves it unused. Its accumulated gradient must still be averaged, as PyTorch
    # does: unused in *this* backward is not unused in the accumulation.
    results = get_pool(2).run(programs.unused_after_no_sync, {"first_uses_extra": first_uses_extra})
    extra = sum(2.0 * (rank + 1) for rank, used in enumerate(first_uses_extra) if used) / 2
    main = sum(2 * 2.0 * (rank + 1) for rank in range(2)) / 2
    for res in results:
        np.testing.assert_allclose(res["extra.weight"], np.full((2, 3), extra))
        np.testing.assert_allclose(res["main.weight"], np.full((2, 3), main))


def test_unused_parameter_without_flag_is_a_clear_error_not_a_hang():
    results = get_pool(2).run(programs.unused_parameters, {"find_unused": False, "use_extra": [False]})
    for res in results:
        assert "extra.weight" in res["error"] and "find_unused_parameters=True" in res["error"]


def test_unused_on_one_rank_only_errors_on_every_rank():
    results = get_pool(2).run(programs.unused_parameters, {"find_unused": False, "use_extra": [True, False]})
    assert "find_unused_parameters=True" in results[0]["error"]
    assert "extra.weight" in results[1]["error"]


@pytest.mark.parametrize("extra_width,extra_layer", [(1, False), (0, True)])
def test_model_differing_across_ranks_is_a_clear_error(extra_width, extra_layer):
    spec = {"extra_width": extra_width, "extra_layer": extra_layer}
    messages = get_pool(2).run(programs.mismatched_models, spec)
    for message in messages:
        assert message is not None and "ranks hold different models" in message
        assert "rank 1" in message


@pytest.mark.parametrize("broadcast", [True, False])
def test_broadcast_buffers(broadcast):
    results = get_pool(2).run(programs.buffers_broadcast, {"broadcast": broadcast})
    if broadcast:
        for step in range(2):
            assert results[0][step].tobytes() == results[1][step].tobytes(), "buffers must follow rank 0"
    else:
        assert results[0][0].tobytes() != results[1][0].tobytes()


def test_gradient_as_bucket_view_grads_are_views():
    for views in get_pool(2).run(programs.bucket_view_grads, {}):
        assert views and all(views)


def test_bucket_buffers_are_reused_only_when_no_grad_views_them():
    for result in get_pool(2).run(programs.bucket_buffer_reuse, {}):
        assert result == {"reused": True, "held_grads_kept": True, "fresh_while_held": True}


def test_find_unused_warns_once_when_nothing_is_unused():
    for messages in get_pool(2).run(programs.warn_when_nothing_unused, {}):
        assert len(messages) == 1


def test_unfinished_reduction_keeps_failing_clearly():
    for messages in get_pool(2).run(programs.previous_backward_unfinished, {}):
        assert len(messages) == 2
        assert "extra.weight" in messages[0]
        assert "cannot continue" in messages[1]
