"""ZeRO stages 1 and 2 on real MPI ranks, compared with one process on the full batch and with DDP.

Hypothesis draws each case here (model, data, bucket cap, optimizer) and
ships it to a pool of ranks (``tests/dist/zero/programs_zero.py``); the
comparison happens in this process. Every mode must train exactly like
local full-batch training with the plain optimizer (float64, rtol 1e-10)
and like DDP with the plain optimizer, rank for rank.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import minigrad as mg
from minigrad.nn import functional as F
from minigrad_dist.testing import strategies
from minigrad_dist.testing.models import mlp_from_spec
from tests.dist.conftest import get_pool
from tests.dist.zero import programs_zero as programs

pytestmark = pytest.mark.timeout(400)

OPTIMIZERS = [("SGD", {"lr": 0.1, "momentum": 0.9}), ("Adam", {"lr": 0.05})]
MODES = ["standalone", "overlap", "zero2"]
EXAMPLES = {1: 3, 2: 5, 3: 2, 4: 2}


def _settings(world_size):
    return settings(max_examples=EXAMPLES[world_size], deadline=None, derandomize=True,
                    suppress_health_check=list(HealthCheck))


def train_locally(spec, steps=None, start_params=None, state_dict=None):
    """One process, full batches, the plain optimizer: the parameters after each step."""
    mg.manual_seed(spec["seed"])
    model = mlp_from_spec(spec["model"])
    if start_params is not None:
        for p, value in zip(model.parameters(), start_params):
            p.array[...] = value
    optimizer = getattr(mg.optim, spec["optimizer"])(model.parameters(), **spec["optimizer_kwargs"])
    if state_dict is not None:
        optimizer.load_state_dict(state_dict)
    scheduler = mg.optim.lr_scheduler.StepLR(optimizer, 1, gamma=0.5) if spec.get("scheduler") else None
    history = []
    for step in steps if steps is not None else range(len(spec["x"])):
        optimizer.zero_grad()
        F.cross_entropy(model(mg.tensor(spec["x"][step])), mg.tensor(spec["y"][step])).backward()
        optimizer.step()
        if scheduler is not None:
            scheduler.step()
        history.append([p.array.copy() for p in model.parameters()])
    return history, optimizer


def assert_histories_close(actual, expected, what, rtol=1e-10, atol=1e-12):
    assert len(actual) == len(expected), what
    for step, (got, want) in enumerate(zip(actual, expected)):
        for i, (a, b) in enumerate(zip(got, want)):
            np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=f"{what}: step {step}, parameter {i}")


@st.composite
def zero_cases(draw, world_size, mode):
    """A drawn ``programs.train`` spec; overlapped modes need every parameter used (no unused branch)."""
    specs = strategies.model_specs(unused_branch=False if mode != "standalone" else None)
    case = draw(strategies.ddp_cases(world_size, specs=specs))
    name, kwargs = draw(st.sampled_from(OPTIMIZERS))
    spec = {"model": case.spec, "x": case.data[0], "y": case.data[1], "seed": case.seed, "mode": mode,
            "ddp_kwargs": case.ddp_kwargs, "optimizer": name, "optimizer_kwargs": kwargs}
    if mode == "standalone":
        spec["partition"] = draw(st.sampled_from(["flat", "parameters"]))
        spec["scheduler"] = draw(st.booleans())
    else:
        spec["interleaved"] = draw(st.booleans())
        spec["shard_buckets"] = mode == "zero2" or draw(st.booleans())
    return spec


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("world_size", [1, 2, 3, 4])
def test_zero_trains_like_local_full_batch_and_like_ddp(world_size, mode):
    """ZeRO-1 standalone (flat or by parameters, with an LR scheduler or not), ZeRO-1 overlapped with DDP's
    backward (interleaved or not, flat or whole buckets), and ZeRO-2, with SGD-momentum and Adam."""

    @_settings(world_size)
    @given(spec=zero_cases(world_size, mode))
    def check(spec):
        results = get_pool(world_size).run(programs.train, spec, timeout=120)
        local, _ = train_locally(spec)
        for rank, result in enumerate(results):
            assert_histories_close(result["zero"], local, f"{mode} on rank {rank} vs local")
            assert_histories_close(result["zero"], result["ddp"], f"{mode} on rank {rank} vs DDP", rtol=1e-12)
            for mine, first in zip(result["zero"][-1], results[0]["zero"][-1]):
                assert np.array_equal(mine, first), "replicas must hold the same bits"

    check()


def _round_trip_spec(mode, optimizer, world_size=2):
    rng = np.random.default_rng(3)
    steps, batch = 4, 4 * world_size
    model = {"in_features": 3, "hidden": [5, 4], "classes": 3, "activation": "tanh", "unused_branch": False}
    name, kwargs = optimizer
    return {"model": model, "x": rng.standard_normal((steps, batch, 3)), "y": rng.integers(0, 3, (steps, batch)),
            "seed": 5, "mode": mode, "ddp_kwargs": {"bucket_cap_mb": 1e-4, "first_bucket_cap_mb": 1e-4},
            "optimizer": name, "optimizer_kwargs": kwargs, "split": 2, "to": world_size - 1,
            "shard_buckets": True}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("optimizer", OPTIMIZERS, ids=[name for name, _ in OPTIMIZERS])
def test_state_dict_consolidates_to_the_plain_layout_and_resumes(mode, optimizer):
    """consolidate_state_dict -> state_dict equals the plain optimizer's; loaded into a plain optimizer, or back
    into a fresh ZeRO (every rank slicing its shard), training continues exactly as if never interrupted."""
    spec = _round_trip_spec(mode, optimizer)
    results = get_pool(2).run(programs.state_dict_round_trip, spec, timeout=120)
    uninterrupted, plain = train_locally(spec)
    reference = plain.state_dict()
    _, at_split_optimizer = train_locally(spec, steps=range(spec["split"]))
    expected = at_split_optimizer.state_dict()
    full = results[0]["full"]
    assert full["param_groups"] == expected["param_groups"]
    assert sorted(full["state"]) == sorted(expected["state"])
    for index, values in expected["state"].items():
        assert sorted(full["state"][index]) == sorted(values)
        for name, value in values.items():
            np.testing.assert_allclose(full["state"][index][name], value.array, rtol=1e-10, atol=1e-12)
    resumed_plain, _ = train_locally(spec, steps=range(spec["split"], len(spec["x"])),
                                     start_params=results[0]["at_split"], state_dict=full)
    assert_histories_close(resumed_plain, uninterrupted[spec["split"]:], "plain optimizer loaded from ZeRO")
    for rank, result in enumerate(results):
        assert_histories_close(result["resumed"], uninterrupted[spec["split"]:], f"ZeRO reloaded, rank {rank}")
        assert result["before"][0] == "RuntimeError" and "consolidate_state_dict" in result["before"][1]
    assert results[0]["elsewhere"][0] == "RuntimeError" and "rank 1" in results[0]["elsewhere"][1]
    assert results[1]["elsewhere"] is None
    final = results[1]["final_state"]
    for index, values in reference["state"].items():
        for name, value in values.items():
            np.testing.assert_allclose(final["state"][index][name], value.array, rtol=1e-10, atol=1e-12)


def test_add_param_group_and_lbfgs_by_parameters():
    """A group added later (own lr) trains like the plain optimizer; LBFGS runs with partition="parameters"."""
    results = get_pool(2).run(programs.add_param_group_and_lbfgs, {}, timeout=60)
    for result in results:
        for a, b in zip(result["zero"], result["plain"]):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
        assert result["lbfgs_losses"][-1] < result["lbfgs_losses"][0]
        for a, b in zip(result["lbfgs_params"], results[0]["lbfgs_params"]):
            assert np.array_equal(a, b), "LBFGS replicas must agree"


def test_bad_use_raises_clear_errors_on_every_rank():
    results = get_pool(2).run(programs.errors, {}, timeout=60)
    for found in results:
        kind, message = found["mismatch"]
        assert kind == "ValueError" and "rank 1" in message and "'0.weight'" in message, message
        kind, message = found["lbfgs_flat"]
        assert kind == "ValueError" and "LBFGS" in message and "partition='parameters'" in message
        assert found["not_a_class"][0] == "TypeError" and "Optimizer" in found["not_a_class"][1]
        assert found["empty"][0] == "ValueError" and "empty" in found["empty"][1]
        assert found["partition"][0] == "ValueError" and "'rows'" in found["partition"][1]
        assert found["bad_lr"][0] == "ValueError" and "lr" in found["bad_lr"][1]
        assert found["no_hook"][0] == "RuntimeError" and "register_comm_hook" in found["no_hook"][1]
        assert found["wrong_hook"][0] == "ValueError" and "allreduce_hook" in found["wrong_hook"][1]
        kind, message = found["step_before_backward"]
        assert kind == "RuntimeError" and "no backward" in message, message
        kind, message = found["forward_without_step"]
        assert kind == "RuntimeError" and "zero.step() was not called" in message, message
        assert found["state_dict_unconsolidated"][0] == "RuntimeError"
        assert found["consolidate_bad_rank"][0] == "ValueError"
        assert found["find_unused"][0] == "ValueError" and "find_unused_parameters" in found["find_unused"][1]
        assert found["other_params"][0] == "ValueError" and "exactly ddp's parameters" in found["other_params"][1]


@functools.cache
def _memory_report():
    return get_pool(4).run(programs.memory_per_rank, {}, timeout=200)


def test_optimizer_state_and_gradients_per_rank_are_one_nth():
    """4 ranks, a 1.6 M-parameter float64 MLP with Adam: ZeRO-1 and ZeRO-2 hold 1/4 of the plain optimizer
    state (within 2%), ZeRO-2 1/4 of DDP's gradient bytes after backward (within 2%); parameters stay whole."""
    for rank, report in enumerate(_memory_report()):
        ddp, zero1, zero2 = report["ddp"], report["zero1"], report["zero2"]
        quarter_state = ddp["optimizer_state"] / 4
        for name, zero in (("ZeRO-1", zero1), ("ZeRO-2", zero2)):
            assert abs(zero["optimizer_state"] - quarter_state) <= 0.02 * quarter_state, (rank, name, report)
            assert zero["parameters"] == ddp["parameters"]
        assert zero1["gradients"] == ddp["gradients"]
        quarter_grads = ddp["gradients"] / 4
        assert abs(zero2["gradients"] - quarter_grads) <= 0.02 * quarter_grads, (rank, report)
        assert 0 < zero2["peak_buckets"]


@pytest.mark.parametrize("zero2", [False, True], ids=["zero1", "zero2"])
@pytest.mark.parametrize("interleaved", [True, False], ids=["interleaved", "after_last_bucket"])
def test_shards_are_stepped_during_backward_in_bucket_order(interleaved, zero2, tmp_path):
    """Every bucket's shard is stepped once, in bucket order, before backward ends; the interleaved hook steps
    the first buckets while later ones are still unlaunched, the other only after the last launch."""
    spec = {"interleaved": interleaved, "zero2": zero2, "dir": str(tmp_path)}
    for events in get_pool(2).run(programs.steps_during_backward, spec, timeout=60):
        assert [segment for segment, *_ in events] == list(range(6)), events
        assert not any(returned for *_, returned in events), "steps must run inside loss.backward()"
        _, all_launched, in_hook, _ = events[0]
        if interleaved:
            assert in_hook and not all_launched, events
        else:
            assert all_launched, events
