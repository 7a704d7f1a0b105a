"""SyncBatchNorm on real MPI ranks against PyTorch's BatchNorm on the whole batch in one process.

N ranks each normalizing their shard must give, concatenated, the outputs
and input gradients of one BatchNorm over the full batch; the sum over ranks
of their weight and bias gradients is the full batch's; every rank ends with
the full batch's running statistics.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.dist.conftest import get_pool
from tests.dist.ddp import programs_sync_batchnorm as programs

pytestmark = pytest.mark.timeout(120)

torch = pytest.importorskip("torch")

LAYERS = {"1d": "BatchNorm1d", "2d": "BatchNorm2d", "3d": "BatchNorm3d"}


def torch_reference(spec):
    """PyTorch's BatchNorm on the full batches of ``spec``: per step (out, x grad, weight grad, bias grad, running)."""
    layer = getattr(torch.nn, LAYERS[spec["kind"]])(spec["x"].shape[2], dtype=torch.float64, **spec["kwargs"])
    with torch.no_grad():
        if layer.weight is not None:
            layer.weight.copy_(torch.from_numpy(spec["weight"]))
        if layer.bias is not None:
            layer.bias.copy_(torch.from_numpy(spec["bias"]))
    steps = []
    for x_full, g_full in zip(spec["x"], spec["g"]):
        x = torch.tensor(x_full, requires_grad=True)
        out = layer(x)
        (out * torch.from_numpy(g_full)).sum().backward()
        running = None
        if layer.running_mean is not None:
            running = (layer.running_mean.numpy().copy(), layer.running_var.numpy().copy(),
                       int(layer.num_batches_tracked))
        steps.append((out.detach().numpy(), x.grad.numpy(),
                      None if layer.weight is None else layer.weight.grad.numpy().copy(),
                      None if layer.bias is None else layer.bias.grad.numpy().copy(), running))
        layer.zero_grad()
    layer.eval()
    if layer.running_mean is None:
        # Without running statistics, evaluation normalizes with batch statistics, and PyTorch's SyncBatchNorm
        # does not synchronize in evaluation mode: each rank normalizes its shard alone.
        bounds = np.cumsum([0, *spec["rows"]])
        shards = [spec["x"][-1][a:b] for a, b in zip(bounds[:-1], bounds[1:])]
        evaluated = np.concatenate([layer(torch.from_numpy(s)).detach().numpy() for s in shards if len(s)])
    else:
        evaluated = layer(torch.from_numpy(spec["x"][-1])).detach().numpy()
    return steps, evaluated


def check(spec, world_size):
    results = get_pool(world_size).run(programs.sync_bn_steps, spec, timeout=60)
    expected, expected_eval = torch_reference(spec)
    close = dict(rtol=1e-9, atol=1e-10)
    assert all(r["type"] == "SyncBatchNorm" for r in results)
    for step, (out, x_grad, w_grad, b_grad, running) in enumerate(expected):
        got = [r["steps"][step] for r in results]
        np.testing.assert_allclose(np.concatenate([g["out"] for g in got]), out, **close, err_msg=f"out, step {step}")
        np.testing.assert_allclose(np.concatenate([g["x_grad"] for g in got]), x_grad, **close,
                                   err_msg=f"input gradient, step {step}")
        if w_grad is not None:
            np.testing.assert_allclose(sum(g["weight_grad"] for g in got), w_grad, **close)
        if b_grad is not None:
            np.testing.assert_allclose(sum(g["bias_grad"] for g in got), b_grad, **close)
        for g in got:
            if running is None:
                assert g["running"] is None
            else:
                np.testing.assert_allclose(g["running"][0], running[0], **close)
                np.testing.assert_allclose(g["running"][1], running[1], **close)
                assert g["running"][2] == running[2]
    np.testing.assert_allclose(np.concatenate([r["eval"] for r in results]), expected_eval, **close)


def make_spec(rows, channels, spatial, kind, kwargs, steps=2, seed=0, offset=0.0):
    rng = np.random.default_rng(seed)
    shape = (steps, sum(rows), channels, *spatial)
    return {
        "x": rng.standard_normal(shape) * 3 + offset,
        "g": rng.standard_normal(shape),
        "rows": rows,
        "kind": kind,
        "kwargs": kwargs,
        "weight": rng.standard_normal(channels),
        "bias": rng.standard_normal(channels),
    }


def test_two_ranks_match_one_batchnorm_on_the_full_batch():
    check(make_spec([3, 5], 4, (6,), "1d", {}), 2)


def test_three_ranks_with_an_empty_shard_and_a_large_mean():
    # A mean of 1e4 against a spread of 3: sums of squares would lose the variance; the stable merge does not.
    check(make_spec([4, 0, 2], 3, (2, 3), "2d", {"momentum": None}, offset=1e4), 3)


@settings(max_examples=10, deadline=None)
@given(
    rows=st.lists(st.integers(1, 4), min_size=2, max_size=2),
    channels=st.integers(1, 3),
    kind=st.sampled_from(["1d", "2d", "3d"]),
    momentum=st.sampled_from([0.1, 0.5, None]),
    affine=st.booleans(),
    track=st.booleans(),
    seed=st.integers(0, 1000),
)
def test_drawn_layers_match_pytorch(rows, channels, kind, momentum, affine, track, seed):
    spatial = {"1d": (2,), "2d": (2, 2), "3d": (1, 2, 2)}[kind]
    kwargs = {"momentum": momentum, "affine": affine, "track_running_stats": track}
    check(make_spec(rows, channels, spatial, kind, kwargs, seed=seed), 2)


def test_errors_match_pytorch():
    errors = get_pool(2).run(programs.sync_bn_errors, timeout=60)[0]
    layer = torch.nn.SyncBatchNorm(3)
    for name, call in {"one_dim": lambda: layer(torch.ones(3)),
                       "no_channels": lambda: torch.nn.SyncBatchNorm(0)(torch.ones(4, 0))}.items():
        with pytest.raises(Exception) as theirs:  # noqa: PT011  (the type is what we compare)
            call()
        assert errors[name][0] == type(theirs.value).__name__, (name, errors[name], theirs.value)
    with pytest.raises(ValueError, match="more than 1 value per channel") as theirs:
        torch.nn.BatchNorm1d(3)(torch.ones(1, 3))
    assert errors["one_value_per_channel"][0] == "ValueError"
    assert "over the whole group" in errors["one_value_per_channel"][1]
    assert errors["double_backward"][0] == "RuntimeError" and "double backward" in errors["double_backward"][1]


def test_statistics_stay_within_the_process_group():
    results = get_pool(3).run(programs.sync_bn_subgroup, timeout=60)
    x = [np.arange(8, dtype=np.float64).reshape(4, 2) + 10 * r for r in range(3)]
    pair = torch.nn.BatchNorm1d(2, dtype=torch.float64)
    expected_pair = pair(torch.from_numpy(np.concatenate(x[:2]))).detach().numpy()
    alone = torch.nn.BatchNorm1d(2, dtype=torch.float64)
    expected_alone = alone(torch.from_numpy(x[2])).detach().numpy()
    np.testing.assert_allclose(np.concatenate([results[0][0], results[1][0]]), expected_pair, rtol=1e-12)
    np.testing.assert_allclose(results[2][0], expected_alone, rtol=1e-12)
    np.testing.assert_allclose(results[0][1], pair.running_mean.numpy(), rtol=1e-12)
    np.testing.assert_allclose(results[2][1], alone.running_mean.numpy(), rtol=1e-12)
