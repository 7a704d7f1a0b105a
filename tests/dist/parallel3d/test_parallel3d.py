"""Data parallel replicas of a pipeline (dp x pp), with tensor-parallel stages (dp x pp x tp), against one process.

Hypothesis draws each case here; every rank of a pool runs it
(``programs_parallel3d.py``), and the gradients and parameters of every rank
are compared with one process training the same model on the whole batch
(float64, rtol 1e-10). 4 and 8 ranks oversubscribe 2 cores: few examples.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.dist.conftest import get_pool
from tests.dist.parallel3d import programs_parallel3d as programs
from tests.dist.pipelining.programs_pipelining import train_locally

pytestmark = pytest.mark.timeout(240)


def settings_for(examples):
    return settings(max_examples=examples, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)


def assert_close(actual, expected, what):
    np.testing.assert_allclose(actual, expected, rtol=1e-10, atol=1e-12, err_msg=what)


@st.composite
def dp_pp_cases(draw, kind, dp=2, pp=2):
    """An MLP cut into stages, a microbatch count and DDP's bucket settings for a ``dp x pp`` mesh."""
    v = 2 if kind == "interleaved" else 1
    num_stages = pp * v
    depth = draw(st.integers(num_stages, num_stages + 1))
    widths = draw(st.lists(st.integers(1, 5), min_size=depth + 1, max_size=depth + 1))
    widths[-1] = max(widths[-1], 2)
    m = pp * draw(st.integers(1, 2)) if kind == "interleaved" else draw(st.integers(1, 4))
    linear_starts = draw(st.permutations(range(1, depth)))[: num_stages - 1]
    return {
        "schedule": kind,
        "stages_per_rank": v,
        "dp": dp,
        "pp": pp,
        "widths": widths,
        "n_microbatches": m,
        "batch": dp * m * draw(st.integers(1, 2)),
        "seed": draw(st.integers(0, 2**16)),
        "split_points": sorted(2 * i for i in linear_starts),
        "steps": 3,
        "lr": 0.1,
        "momentum": 0.9,
        # One parameter per bucket (tiny cap) or all in one; .grad as a view of the bucket or a copy.
        "bucket_cap_mb": draw(st.sampled_from([1e-6, 25.0])),
        "bucket_view": draw(st.booleans()),
    }


@pytest.mark.parametrize("kind", ["gpipe", "1f1b", "interleaved"])
def test_data_parallel_pipeline_equals_local_full_batch_training(kind):
    """dp=2 x pp=2 (4 ranks): each stage in DDP over the mesh's "dp" group. Gradients of every step and the
    parameters after 3 SGD-momentum steps equal one process on the whole batch; the replicas hold equal values;
    each stage's Reducer averaged exactly once per step (in its last backward), never per microbatch."""

    @settings_for(4)
    @given(spec=dp_pp_cases(kind))
    def check(spec):
        results = get_pool(4).run(programs.train_dp_pp, spec, timeout=180)
        local = train_locally(spec)
        for result in results:
            assert result["averagings"] == [spec["steps"]] * spec["stages_per_rank"]
            for step in range(spec["steps"]):
                for name, grad in result["grads"][step].items():
                    assert_close(grad, local["grads"][step][name], f"{result['coordinate']} step {step} {name}")
            for name, value in result["params"].items():
                assert_close(value, local["params"][name], f"{result['coordinate']} parameter {name}")
        for pp_rank in range(spec["pp"]):  # the two replicas of a pipeline rank cover the same parameters
            a, b = (r for r in results if r["coordinate"][1] == pp_rank)
            assert sorted(a["params"]) == sorted(b["params"])
        covered = {name for r in results for name in r["params"]}
        assert covered == set(local["params"]), "every parameter lives in some stage"
        for result in results:
            if result["coordinate"][1] == (spec["pp"] * spec["stages_per_rank"] - 1) % spec["pp"]:
                # Each replica's losses are its own rows'; their mean over replicas is the batch's loss.
                assert len(result["losses"][0]) == spec["n_microbatches"]
        last_stage_rank = (spec["pp"] * spec["stages_per_rank"] - 1) % spec["pp"]
        step_means = [
            np.mean([np.mean(r["losses"][step]) for r in results if r["coordinate"][1] == last_stage_rank])
            for step in range(spec["steps"])
        ]
        np.testing.assert_allclose(step_means, local["losses"], rtol=1e-10)

    check()


def test_only_the_last_backward_of_a_step_averages_and_it_overlaps_that_backward():
    """DDP's timeline (trace=True, one parameter per bucket) beside the schedule's: every gradient hook, bucket
    launch and the final wait of a step fall inside the stage's last backward action; the first bucket is
    launched before the last gradient is taken (communication overlaps the backward); the other
    microbatches' backwards take no gradient at all (no_sync)."""
    spec = {"dp": 2, "pp": 2, "widths": [3, 5, 4, 2], "seed": 7, "steps": 2, "batch": 12, "lr": 0.1}
    spec.update(schedule="1f1b", n_microbatches=3)
    for result in get_pool(4).run(programs.averaging_timeline, spec, timeout=60):
        assert result["buckets"] == result["params"] >= 2
        for step in result["steps"]:
            assert [mb for mb, _, _ in step["backwards"]] == [0, 1, 2]
            _, last_start, last_end = step["backwards"][-1]
            hooks = [e for e in step["reducer"] if e[0] == "hooks"]
            launches = [e for e in step["reducer"] if e[0] == "buckets"]
            finalize = [e for e in step["reducer"] if e[0] == "finalize"]
            assert len(hooks) == result["params"] and len(launches) == result["buckets"] and len(finalize) == 1
            for lane, name, start, end in step["reducer"]:
                if lane != "allreduce":  # an allreduce span ends when a later test or wait sees it done
                    assert last_start <= start <= end <= last_end, (lane, name)
            assert min(e[2] for e in launches) < max(e[2] for e in hooks)


@settings_for(1)
@given(
    spec=st.fixed_dictionaries(
        {
            "dp": st.just(2),
            "pp": st.just(2),
            "tp": st.just(2),
            "widths": st.lists(st.integers(1, 4), min_size=3, max_size=3),
            "hidden": st.sampled_from([2, 4]),
            "n_microbatches": st.integers(1, 3),
            "seed": st.integers(0, 2**16),
            "steps": st.just(3),
            "lr": st.just(0.05),
        }
    ).map(lambda s: {**s, "batch": s["dp"] * s["n_microbatches"] * 2})
)
def test_dp_pp_tp_on_eight_ranks_equals_local_full_batch_training(spec):
    """dp=2 x pp=2 x tp=2: stage s is MLP block s as a TensorParallelMLP over mesh["tp"], in DDP over
    mesh["dp"], run by Schedule1F1B over mesh["pp"], 3 Adam steps. Every rank's shards and their gradients
    equal the slices of one process training the full blocks on the whole batch."""
    results = get_pool(8).run(programs.train_3d, spec, timeout=220)
    local = programs.local_3d(spec)
    share = spec["hidden"] // spec["tp"]
    for result in results:
        _, block, tp_rank = result["coordinate"]
        assert result["averagings"] == spec["steps"]
        own = slice(tp_rank * share, (tp_rank + 1) * share)
        # [fc1.weight rows, fc1.bias, fc2.weight columns, fc2.bias (whole)]: Megatron's column and row splits.
        pieces = [(own,), (own,), (slice(None), own), ()]
        for step in range(spec["steps"]):
            for i, (cut, grad) in enumerate(zip(pieces, result["grads"][step])):
                assert_close(grad, local["grads"][step][block][i][cut], f"{result['coordinate']} step {step} #{i}")
        for i, (cut, value) in enumerate(zip(pieces, result["params"])):
            assert_close(value, local["params"][block][i][cut], f"{result['coordinate']} parameter #{i}")


UNUSED = {"dp": 2, "pp": 2, "widths": [3, 4, 2], "seed": 5, "steps": 1, "batch": 8, "n_microbatches": 2}


def test_find_unused_parameters_in_a_stage():
    """A stage with a parameter no forward uses: with find_unused_parameters=True the step averages the others
    and leaves it without gradient; without it, DDP names the parameter instead of hanging, and the stage
    before (waiting for the gradient) times out naming what it waited for."""
    spec = dict(UNUSED, schedule="1f1b", timeout=2.0, find_unused=True)
    local = programs.local_partly_used(spec)
    for grads in get_pool(4).run(programs.unused_parameters, spec, timeout=60):
        for name, grad in grads.items():
            if name.startswith("2.unused"):
                assert grad is None, name
            else:
                assert_close(grad, local[name], name)
    errors = get_pool(4).run(programs.unused_parameters, dict(spec, find_unused=False), timeout=60)
    last_stage, first_stage = [errors[1], errors[3]], [errors[0], errors[2]]
    for kind, message in last_stage:
        assert kind == "RuntimeError"
        assert "received no gradient: 0.unused.weight, 0.unused.bias" in message
        assert "find_unused_parameters=True" in message
    for kind, message in first_stage:
        assert kind == "TimeoutError" and "the gradient of microbatch 1 from stage 1" in message


def test_a_replica_that_does_not_average_makes_the_others_time_out_with_a_clear_error():
    """Replica 1 steps under no_sync; replica 0's last stage waits for it in its averaging and raises a
    TimeoutError naming the stage and the data-parallel ranks (DDP's timeout, from init_process_group)."""
    spec = {"dp": 2, "pp": 2, "widths": [3, 4, 2], "seed": 2, "steps": 1, "batch": 4, "lr": 0.1}
    spec.update(schedule="1f1b", n_microbatches=2, timeout=2.0)
    errors = get_pool(4).run(programs.replica_times_out, spec, timeout=60)
    assert errors[2] is None and errors[3] is None, "replica 1 never communicates with replica 0"
    kind, message = errors[1]
    assert kind == "TimeoutError"
    assert "pipeline stage 1: averaging its gradients over the data-parallel replicas (world ranks [1, 3])" in message
    assert "timed out" in message and "Did a replica fail first" in message
    kind, message = errors[0]
    assert kind == "TimeoutError" and "the gradient of microbatch 1 from stage 1" in message


@pytest.mark.parametrize(
    ("case", "stages_per_rank", "message"),
    [
        ("pp_group", 1, "which run other stages of its pipeline"),
        ("order", 2, "must build the same stage"),
    ],
)
def test_a_ddp_group_that_does_not_match_the_mesh_is_refused_on_every_rank(case, stages_per_rank, message):
    spec = {"dp": 2, "pp": 2, "seed": 0, "case": case, "stages_per_rank": stages_per_rank}
    errors = get_pool(4).run(programs.wrong_groups, spec, timeout=60)
    for error in errors:
        assert error is not None and error[0] == "ValueError" and message in error[1], errors
    assert 'process_group=mesh["dp"].get_group()' in errors[0][1] or "same stage_index" in errors[0][1]
