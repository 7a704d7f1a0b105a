"""Pipeline schedules on real MPI ranks, compared with one process training the same model on the full batch.

Hypothesis draws each case here, in the pytest process, and every rank of a
pool runs it (``programs_pipelining.py``); the comparison happens here.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from minigrad_dist.pipelining import actions as A
from minigrad_dist.testing.pool import RankFailure
from tests.dist.conftest import get_pool
from tests.dist.pipelining import programs_pipelining as programs

pytestmark = pytest.mark.timeout(300)


def settings_for(examples):
    return settings(max_examples=examples, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)


@st.composite
def cases(draw, world):
    """A drawn MLP, batch, microbatch count and schedule for ``world`` ranks."""
    kind = draw(st.sampled_from(["gpipe", "1f1b", "interleaved"]))
    v = draw(st.integers(1, 2)) if kind == "interleaved" else 1
    num_stages = world * v
    depth = draw(st.integers(num_stages, num_stages + 2))
    widths = draw(st.lists(st.integers(1, 6), min_size=depth + 1, max_size=depth + 1))
    widths[-1] = max(widths[-1], 2)
    m = world * draw(st.integers(1, 3)) if kind == "interleaved" else draw(st.integers(1, 5))
    # Stages begin at Linear layers (even indices of the Sequential), so every stage has parameters.
    linear_starts = draw(st.permutations(range(1, depth)))[: num_stages - 1]
    return {
        "schedule": kind,
        "stages_per_rank": v,
        "widths": widths,
        "n_microbatches": m,
        "batch": m * draw(st.integers(1, 3)),
        "seed": draw(st.integers(0, 2**16)),
        "split_points": sorted(2 * i for i in linear_starts),
        "steps": 3,
        "lr": 0.1,
        "momentum": 0.9,
    }


def check_against_local(spec, world):
    results = get_pool(world).run(programs.train_pipelined, spec, timeout=120)
    local = programs.train_locally(spec)
    for step in range(spec["steps"]):
        grads = {}
        for result in results:
            grads.update(result["grads"][step])
        assert sorted(grads) == sorted(local["grads"][step]), "every parameter belongs to exactly one stage"
        for name, grad in grads.items():
            np.testing.assert_allclose(
                grad, local["grads"][step][name], rtol=1e-10, atol=1e-12, err_msg=f"step {step} gradient of {name}"
            )
    params = {}
    for result in results:
        params.update(result["params"])
    for name, value in params.items():
        np.testing.assert_allclose(value, local["params"][name], rtol=1e-10, atol=1e-12, err_msg=name)
    last = results[(world * spec["stages_per_rank"] - 1) % world]
    for step in range(spec["steps"]):
        # The loss averaged over the microbatches is the full batch's loss.
        assert np.mean(last["losses"][step]) == pytest.approx(local["losses"][step], rel=1e-10)
        assert len(last["losses"][step]) == spec["n_microbatches"]
    assert last["output_shape"] == (spec["batch"], spec["widths"][-1])
    return results


def check_runtime_against_schedule(spec, world, results):
    """Each rank ran its action list as printed, and held as many microbatches' activations as the simulation says."""
    num_stages = world * spec["stages_per_rank"]
    orders = A.pipeline_order(spec["schedule"], world, spec["n_microbatches"], spec["stages_per_rank"])
    full = {rank: A.with_communication(order, num_stages) for rank, order in orders.items()}
    simulation = A.validate_order(full, num_stages, spec["n_microbatches"])
    for rank, result in enumerate(results):
        assert result["executed"] == result["order"] == [str(a) for a in full[rank]]
        for stage, peak in result["peak"].items():
            assert peak == simulation.peak_live[stage], f"stage {stage}: live activations measured at run time"
            if spec["schedule"] == "gpipe":
                assert peak == spec["n_microbatches"]
            if spec["schedule"] == "1f1b":
                assert peak <= world


@pytest.mark.parametrize("world", [1, 2])
def test_pipeline_training_equals_local_training(world):
    """Drawn MLPs, microbatch counts and schedules: gradients, losses and parameters after 3 SGD-momentum steps
    equal one process on the full batch (float64, rtol 1e-10); the run follows the printed action lists."""

    @settings_for(25 if world == 2 else 8)
    @given(spec=cases(world))
    def check(spec):
        results = check_against_local(spec, world)
        check_runtime_against_schedule(spec, world, results)

    check()


@pytest.mark.parametrize("kind", ["gpipe", "1f1b", "interleaved"])
def test_four_stage_pipeline_equals_local_training(kind):
    """4 ranks (oversubscribing 2 cores: slow, so few examples per schedule)."""

    @settings_for(3)
    @given(spec=cases(4).filter(lambda s: s["schedule"] == kind))
    def check(spec):
        results = check_against_local(spec, 4)
        check_runtime_against_schedule(spec, 4, results)

    check()


BASE = {"widths": [3, 4, 4, 2], "seed": 0, "steps": 1, "batch": 6, "lr": 0.1, "momentum": 0.0}


def test_a_batch_that_does_not_divide_into_microbatches_is_refused():
    errors = get_pool(2).run(
        programs.construction_error, dict(BASE, num_stages=2, schedule="gpipe", n_microbatches=4), timeout=60
    )
    for error in errors:  # both ranks: rank 0 cuts the input, rank 1 the target
        assert error[0] == "ValueError"
        assert "does not divide into n_microbatches=4" in error[1]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"num_stages": 3, "schedule": "gpipe"}, "cannot be spread evenly over the group's 2 ranks"),
        ({"num_stages": 4, "schedule": "1f1b"}, "num_stages must equal the group size"),
        ({"num_stages": 2, "schedule": "gpipe", "stage": 0, "step": False}, "runs on group rank 0"),
        ({"num_stages": 4, "schedule": "interleaved"}, "put 2 stage(s) on each rank, but this rank gave 1"),
        ({"num_stages": 2, "schedule": "interleaved", "n_microbatches": 3}, "multiple of the number of ranks"),
    ],
)
def test_stage_count_and_placement_errors(spec, message):
    errors = get_pool(2).run(programs.construction_error, {**BASE, "n_microbatches": 2, **spec}, timeout=60)
    assert any(error is not None and message in error[1] for error in errors), errors


def test_shape_mismatch_raises_instead_of_hanging():
    """Stage 1 expects another activation shape: it names both shapes; stage 0 times out naming what it waited for."""
    spec = dict(BASE, n_microbatches=2, timeout=3.0)
    with pytest.raises(RankFailure) as failure:
        get_pool(2).run(programs.shape_mismatch, spec, timeout=60)
    text = str(failure.value)
    assert "stage 0 sends activations of shape (3, 4)" in text and "input_args say shape (3, 5)" in text
    assert "waited 3.0 s for the gradient of microbatch 0 from stage 1" in text


@pytest.mark.parametrize("kind", ["gpipe", "1f1b"])
def test_step_scales_gradients_and_reports_losses_as_pytorch_does(kind):
    """PyTorch's own ScheduleGPipe/Schedule1F1B (one process, gloo) is the oracle: gradients divided by
    n_microbatches (``scale_grads=True``), one unscaled loss per microbatch in ``losses``."""
    spec = {
        "widths": [5, 7, 6, 3],
        "seed": 1,
        "steps": 1,
        "batch": 8,
        "lr": 0.1,
        "momentum": 0.9,
        "schedule": kind,
        "n_microbatches": 4,
    }
    theirs = get_pool(1).run(programs.torch_pipeline_gradients, spec, timeout=120)[0]
    ours = get_pool(1).run(programs.train_pipelined, spec, timeout=60)[0]
    assert sorted(ours["grads"][0]) == sorted(theirs["grads"])
    for name, grad in theirs["grads"].items():
        np.testing.assert_allclose(ours["grads"][0][name], grad, rtol=1e-10, atol=1e-12, err_msg=name)
    np.testing.assert_allclose(ours["losses"][0], theirs["losses"], rtol=1e-12)


@pytest.mark.parametrize(("world", "kind"), [(2, "gpipe"), (2, "1f1b"), (1, "interleaved")])
def test_explicit_stage_modules_passing_a_tuple(world, kind):
    """Stages built by hand; the first returns two tensors, the second takes both (two messages per microbatch)."""
    spec = {"seed": 3, "n_in": 4, "n_hidden": 5, "n_out": 3, "batch": 6, "n_microbatches": 3, "schedule": kind}
    local = programs.two_way_training(dict(spec, pipelined=False))
    grads = {}
    for result in get_pool(world).run(programs.two_way_training, dict(spec, pipelined=True), timeout=60):
        grads.update(result)
    assert sorted(grads) == sorted(local)
    for name, grad in grads.items():
        np.testing.assert_allclose(grad, local[name], rtol=1e-10, atol=1e-12, err_msg=name)


def test_without_loss_fn_a_step_runs_forwards_only_and_returns_the_output():
    spec = {**BASE, "schedule": "1f1b", "n_microbatches": 3}
    results = get_pool(2).run(programs.forward_only, spec, timeout=60)
    assert results[0]["output"] is None
    np.testing.assert_allclose(results[1]["output"], results[1]["expected"], rtol=1e-12)
    for result in results:
        assert not any("B" in action for action in result["actions"])  # no B, SEND_B, RECV_B
        assert all(result["grads"])


@pytest.mark.parametrize(
    ("argument", "shape", "message"),
    [
        (
            "input_args",
            (2, 4),
            "stage 0's input microbatch is shape (2, 3) dtype float64, but input_args says shape (2, 4)",
        ),
        ("output_args", (3, 2), "stage 0's output is shape (2, 2) dtype float64, but output_args says shape (3, 2)"),
    ],
)
def test_example_args_that_disagree_with_the_data_are_named(argument, shape, message):
    spec = {**BASE, "n_microbatches": 3, "argument": argument, "example_shape": shape}
    (error,) = get_pool(1).run(programs.stage_shape_error, spec, timeout=60)
    assert error is not None and message in error, error


def test_two_pipelines_side_by_side_on_subgroups():
    """4 ranks, groups {0, 1} and {2, 3}: both pipelines give the local gradients (stage ranks are group ranks)."""
    spec = {
        "widths": [3, 5, 4, 2],
        "seed": 4,
        "steps": 1,
        "batch": 6,
        "lr": 0.1,
        "momentum": 0.9,
        "schedule": "1f1b",
        "n_microbatches": 3,
    }
    results = get_pool(4).run(programs.two_pipelines_on_subgroups, spec, timeout=120)
    local = programs.train_locally(spec)["grads"][0]
    for pipeline in (results[:2], results[2:]):
        grads = {**pipeline[0], **pipeline[1]}
        assert sorted(grads) == sorted(local)
        for name, grad in grads.items():
            np.testing.assert_allclose(grad, local[name], rtol=1e-10, atol=1e-12, err_msg=name)


@pytest.mark.parametrize("kind", ["gpipe", "1f1b"])
def test_large_activations_arrive_intact(kind):
    """Messages of 128 KB, beyond MPI's eager size: their headers and data must live until the send completes."""
    spec = {
        "widths": [256, 256, 256, 256],
        "seed": 5,
        "steps": 3,
        "batch": 256,
        "lr": 0.1,
        "momentum": 0.9,
        "schedule": kind,
        "n_microbatches": 4,
        "stages_per_rank": 1,
    }
    check_against_local(spec, 2)
