"""FullyShardedDataParallel on real MPI ranks, compared with one process training on the full batch.

Hypothesis draws each case here (model, which layers are units, data,
optimizer, FSDP options) and ships it to a pool of ranks; the local
reference runs in this process. Parameters are compared in float64 with
rtol 1e-10 after every optimizer step, and each rank's shard gradient with
its slice of the local full-batch gradient.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from minigrad_dist.testing import strategies
from minigrad_dist.testing.models import mlp_from_spec
from minigrad_dist.testing.pool import RankFailure
from tests.dist.conftest import get_pool
from tests.dist.fsdp import programs_fsdp as programs

pytestmark = pytest.mark.timeout(300)

RTOL, ATOL = 1e-10, 1e-12
EXAMPLES = {1: 5, 2: 15, 3: 6, 4: 5}
OPTIMIZERS = [("SGD", {"lr": 0.1, "momentum": 0.9}), ("Adam", {"lr": 0.05})]


def settings_for(world_size):
    return settings(max_examples=EXAMPLES[world_size], deadline=None, derandomize=True,
                    suppress_health_check=list(HealthCheck))


@st.composite
def fsdp_cases(draw, world_size, unused_branch=None):
    """A model spec, the layers that become units (deepest first), data, optimizer and FSDP options."""
    spec = draw(strategies.model_specs(max_depth=3, max_width=6, unused_branch=unused_branch))
    x, y = draw(strategies.training_data(spec, world_size, max_steps=3, max_batch_per_rank=3))
    candidates = programs.linear_paths(mlp_from_spec(spec)) + ["body"]
    units = [p for p in candidates if draw(st.booleans())]
    units.sort(key=lambda p: -p.count("."))
    name, kwargs = draw(st.sampled_from(OPTIMIZERS))
    fsdp_kwargs = {
        "reshard_after_forward": draw(st.booleans()),
        "forward_prefetch": draw(st.booleans()),
        "backward_prefetch": draw(st.booleans()),
        "sync_module_states": draw(st.booleans()),
    }
    front = draw(st.sampled_from(["FullyShardedDataParallel", "fully_shard"]))
    return {"spec": spec, "x": x, "y": y, "units": units, "optimizer": name, "optimizer_kwargs": kwargs,
            "fsdp_kwargs": fsdp_kwargs, "seed": draw(st.integers(0, 2**16)), "ddp": True, "front": front}


def assert_params_match(got, want, what):
    assert got.keys() == want.keys(), f"{what}: keys {sorted(got)} != {sorted(want)}"
    for name, value in want.items():
        np.testing.assert_allclose(got[name], value, rtol=RTOL, atol=ATOL, err_msg=f"{what}: {name}")


def assert_shard_grads_match(shards, local_grads, rank, what):
    """Each unit's shard gradient equals this rank's slice of the local gradients, flattened the same way."""
    for prefix, (shard, layout) in shards.items():
        pieces, any_grad = [], False
        for name, shape in layout["params"]:
            grad = local_grads[prefix + name]
            any_grad |= grad is not None
            pieces.append(np.zeros(int(np.prod(shape))) if grad is None else grad.reshape(-1))
        if not any_grad:
            assert shard is None, f"{what}: unit {prefix!r} got a gradient but no parameter of it did locally"
            continue
        flat = np.zeros(layout["padded_numel"])
        flat[: layout["numel"]] = np.concatenate(pieces)
        size = layout["padded_numel"] // layout["world_size"]
        assert shard is not None, f"{what}: unit {prefix!r} has no gradient"
        np.testing.assert_allclose(shard, flat[rank * size: (rank + 1) * size], rtol=RTOL, atol=ATOL,
                                   err_msg=f"{what}: shard gradient of unit {prefix!r}")


def check_against_local(case, results):
    local = programs.train_local(case)
    for step in range(len(case["x"])):
        for rank, result in enumerate(results):
            what = f"step {step} rank {rank}"
            assert_params_match(result["params"][step], local["params"][step], what)
            assert_shard_grads_match(result["grads"][step], local["grads"][step], rank, what)
            for name, value in result["params"][step].items():
                assert value.tobytes() == results[0]["params"][step][name].tobytes(), f"{what}: {name} drifts"
            if case["ddp"]:
                assert_params_match(result["params"][step], result["ddp_params"][step], f"{what} (vs DDP)")


@pytest.mark.parametrize("world_size", [1, 2, 3, 4])
def test_fsdp_training_equals_local_and_ddp(world_size):
    """Drawn MLPs, unit wrappings (nested too), data, SGD-momentum or Adam, FSDP options."""

    @settings_for(world_size)
    @given(case=fsdp_cases(world_size))
    def check(case):
        check_against_local(case, get_pool(world_size).run(programs.train_fsdp, case, timeout=120))

    check()


def test_flat_shards_are_what_the_optimizer_sees():
    case = {"spec": {"in_features": 3, "hidden": [5], "classes": 2, "activation": "tanh", "unused_branch": True},
            "units": ["body.0"], "optimizer": "SGD", "optimizer_kwargs": {"lr": 0.1}, "seed": 1,
            "x": np.random.default_rng(0).standard_normal((1, 6, 3)), "y": np.zeros((1, 6), dtype=np.int64)}
    results = get_pool(3).run(programs.train_fsdp, case)
    for result in results:
        assert result["names"] == ["_flat_param", "body.0._flat_param"]
        layout = result["grads"][0][""][1]
        assert layout["numel"] == 20 and layout["padded_numel"] == 21, "20 parameters padded to 3 shards of 7"
    check_against_local(dict(case, ddp=False), results)


def test_a_wider_model_wrapped_by_size_on_4_ranks():
    """Hundreds of parameters per unit, units chosen by size_based_auto_wrap_policy, Adam, 3 steps."""
    rng = np.random.default_rng(11)
    case = {"spec": {"in_features": 16, "hidden": [33, 31], "classes": 5, "activation": "gelu",
                     "unused_branch": False},
            "min_num_params": 500, "optimizer": "Adam", "optimizer_kwargs": {"lr": 0.01}, "seed": 5, "ddp": True,
            "x": rng.standard_normal((3, 16, 16)), "y": rng.integers(0, 5, (3, 16))}
    results = get_pool(4).run(programs.train_fsdp, case)
    # body.0 (561) and body.2 (1054) are units; body.4 (160) stays in the root.
    assert results[0]["names"] == ["_flat_param", "body.0._flat_param", "body.2._flat_param"]
    check_against_local(case, results)


@settings(max_examples=4, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(micro=st.integers(2, 3), reshard=st.booleans(), sync_every=st.booleans(), seed=st.integers(0, 100))
def test_gradient_accumulation_equals_local(micro, reshard, sync_every, seed):
    """``micro`` backward passes before one step equal the local sum of micro-batch gradients.

    Under ``no_sync`` the first ``micro - 1`` keep full gradients and only the
    last reduces; without it every backward reduce-scatters and adds to the
    shard's existing ``.grad`` (as PyTorch accumulates).
    """
    rng = np.random.default_rng(seed)
    spec = {"spec": {"in_features": 3, "hidden": [4, 5], "classes": 3, "activation": "tanh",
                     "unused_branch": False},
            "units": ["body.2", "body.0"], "optimizer": "SGD", "optimizer_kwargs": {"lr": 0.1, "momentum": 0.9},
            "fsdp_kwargs": {"reshard_after_forward": reshard}, "seed": seed, "sync_every": sync_every,
            "x": rng.standard_normal((micro, 4, 3)), "y": rng.integers(0, 3, (micro, 4))}
    results = get_pool(2).run(programs.no_sync_accumulation, spec)
    local = programs.local_accumulation(spec)
    units = 3
    for rank, result in enumerate(results):
        if sync_every:
            assert result["during"] == units * (micro - 1) and result["held_during"] == 0
        else:
            assert result["during"] == 0, "no_sync must not reduce-scatter"
            assert result["held_during"] > 0, "no_sync keeps the full gradients"
        assert result["after"] == result["during"] + units, "the synced backward reduces every unit once"
        assert_shard_grads_match(result["grads"], local["grads"], rank, f"rank {rank}")
        assert_params_match(result["params"], local["params"], f"rank {rank}")


@pytest.mark.parametrize("world_size", [2, 3])
def test_unit_used_twice_and_unit_never_used(world_size):
    """``shared`` runs twice per forward (one gather serves both uses); ``spare`` never runs (grad stays None)."""
    rng = np.random.default_rng(world_size)
    case = {"model": "twice", "units": ["shared", "spare", "head"], "optimizer": "Adam",
            "optimizer_kwargs": {"lr": 0.05}, "seed": 3, "ddp": False, "fsdp_kwargs": {},
            "x": rng.standard_normal((3, 2 * world_size, 3)), "y": rng.integers(0, 3, (3, 2 * world_size))}
    results = get_pool(world_size).run(programs.train_fsdp, case)
    check_against_local(case, results)
    for result in results:
        for step in result["grads"]:
            assert step["spare."][0] is None


@pytest.mark.parametrize("reduce_dtype", ["float32", None])
def test_mixed_precision_gathers_half_and_keeps_float32_masters(reduce_dtype):
    """float16 gathers over float32 shards match a local float16-compute reference.

    The reference computes on float16 copies of the float32 masters over the
    full batch; FSDP computes on half batches and averages the float16
    gradients in float32. The two differ only by float16 rounding inside the
    forward and backward (about 1e-3 relative per value), so after 3 small
    steps the parameters agree within rtol 1e-2, atol 1e-3 (measured: about
    1e-4). With ``reduce_dtype=None`` the reduction is in float16 too, one
    more float16 rounding of each averaged gradient. That the gathers really
    are float16 is checked through the dtypes the layer sees.
    """
    rng = np.random.default_rng(5)
    spec = {"spec": {"in_features": 4, "hidden": [8], "classes": 3, "activation": "tanh", "unused_branch": False},
            "dtype": "float32", "units": ["body.0"], "optimizer": "SGD", "optimizer_kwargs": {"lr": 0.05},
            "seed": 2, "param_dtype": "float16", "reduce_dtype": reduce_dtype, "probe": "body.0",
            "x": rng.standard_normal((3, 8, 4)), "y": rng.integers(0, 3, (3, 8))}
    results = get_pool(2).run(programs.mixed_precision_run, spec)
    reference = programs.local_half_gather(spec)
    for result in results:
        assert result["seen"]["weight"] == "float16" and result["seen"]["output"] == "float16"
        assert result["seen"]["shard"] == "float32" and result["seen"]["shard_grad"] == ["float32"]
        for step, want in enumerate(reference["params"]):
            for name, value in want.items():
                assert result["params"][step][name].dtype == np.float32
                np.testing.assert_allclose(result["params"][step][name], value, rtol=1e-2, atol=1e-3,
                                           err_msg=f"step {step}: {name}")


@pytest.mark.parametrize("optimizer", OPTIMIZERS, ids=[o[0] for o in OPTIMIZERS])
def test_checkpoint_resume_is_bitwise(optimizer, tmp_path):
    """save_checkpoint (full state dict) and per-rank sharded state dicts both resume bit for bit."""
    rng = np.random.default_rng(7)
    spec = {"spec": {"in_features": 3, "hidden": [5, 4], "classes": 3, "activation": "tanh",
                     "unused_branch": False},
            "units": ["body.2", "body.0"], "optimizer": optimizer[0], "optimizer_kwargs": optimizer[1], "seed": 4,
            "x": rng.standard_normal((4, 6, 3)), "y": rng.integers(0, 3, (4, 6)), "cut": 2, "dir": str(tmp_path)}
    for result in get_pool(3).run(programs.checkpoint_resume, spec):
        for name, value in result["straight"].items():
            assert result["via_full"][name].tobytes() == value.tobytes(), f"full checkpoint: {name}"
            assert result["via_sharded"][name].tobytes() == value.tobytes(), f"sharded state dict: {name}"
        assert result["plain"].keys() == result["straight"].keys()


def test_gathered_memory_stays_within_one_unit_plus_prefetch_on_4_ranks():
    """Peak gathered bytes <= largest unit + prefetched unit; the shards hold full/N (+ padding)."""
    result = get_pool(4).run(programs.memory_peaks, {"widths": [16, 32, 32, 32, 8]})[0]
    largest = max(result["unit_bytes"])
    bound = 2 * largest
    assert result["peaks"][1] <= bound, f"peak {result['peaks']} > largest unit + prefetch ({bound})"
    assert result["peaks"][1] > largest, "the second step prefetches: two units gathered at once"
    assert result["peaks"][0] <= bound
    assert result["live_after"] == 0, "every gathered buffer is freed after the step"
    padding = 4 * 4 * len(result["unit_bytes"])  # at most N - 1 float32 elements per unit
    assert result["full_bytes"] / 4 <= result["report"]["parameters"] <= result["full_bytes"] / 4 + padding
    assert result["report"]["gradients"] == result["report"]["parameters"]
    assert result["report"]["peak"]["gathered_parameters"] == result["peaks"][1]
    # Inside layer 2's forward: layer 2 gathered and layer 4 prefetched; no gradient held (zero_grad freed them).
    assert result["during_forward"]["gathered"] == result["unit_bytes"][1] + result["unit_bytes"][2]
    assert result["during_forward"]["shard_grads"] == 0


def test_prefetch_starts_the_next_gather_before_the_current_unit_computes():
    """The timeline's order: the overlap exists in the mechanism (2 cores cannot show it in time)."""
    result = get_pool(2).run(programs.timeline_run, {})[0]
    first, second = (result["timeline"][a:b] for a, b in zip(result["marks"], result["marks"][1:] + [None]))
    # The first forward records the order and prefetches nothing; the backward already can.
    first_forward = first[: first.index(("reshard", 3))]
    assert not any(event == "prefetch" for event, _ in first_forward)
    # From the second forward on, unit i+1's gather starts before unit i computes.
    for unit in (1, 2):
        assert second.index(("prefetch", unit + 1)) < second.index(("forward", unit))
    assert ("gather", 2) not in second and ("gather", 3) not in second[: second.index(("forward", 3))]
    # Backward: the unit expected next is gathered before the current one computes its gradients.
    for timeline in (first, second):
        assert timeline.index(("prefetch", 2)) < timeline.index(("pre_backward", 3))
        assert timeline.index(("prefetch", 1)) < timeline.index(("pre_backward", 2))
        assert timeline[-1] == ("wait", 0)


def test_auto_wrap_policies():
    result = get_pool(2).run(programs.wrapping_structure, {"min_num_params": 45})[0]
    assert result["by_type"]["units"] == ["", "0", "2.0", "2.1"]
    assert result["by_type"]["params"] == ["0._flat_param", "2.0._flat_param", "2.1._flat_param"]
    # 3*20+20 = 80 >= 45 wraps layer 0; "2" holds 42+6 = 48 >= 45 but neither of its Linears does: "2" is a unit.
    assert result["by_size"]["units"] == ["", "0", "2"]
    expected_keys = ["0.weight", "0.bias", "2.0.weight", "2.0.bias", "2.1.weight", "2.1.bias"]
    assert result["by_type"]["keys"] == expected_keys and result["by_size"]["keys"] == expected_keys
    # fully_shard in place (FSDP2's front): the same units and names, and the root is still a Sequential.
    assert result["in_place"] == result["by_type"]
    assert result["in_place_is_sequential"] == "FSDPSequential"


def test_misuse_raises_clear_errors():
    found = get_pool(2).run(programs.errors, {})[0]
    for key in ("resharded_use", "resharded_matmul"):
        assert found[key][0] == "RuntimeError", found[key]
        assert "used 'weight' while it is resharded" in found[key][1] and "summon_full_params" in found[key][1]
    assert found["nested_no_sync"][0] == "RuntimeError" and "root" in found["nested_no_sync"][1]
    assert found["wrap_twice"][0] == "ValueError"
    assert found["not_module"][0] == "TypeError"
    assert found["mixed_dtypes"][0] == "ValueError" and "dtype" in found["mixed_dtypes"][1]
    assert found["shared_across_units"][0] == "ValueError" and "'1.weight'" in found["shared_across_units"][1]
    assert found["wrong_layout"][0] == "RuntimeError" and "layout" in found["wrong_layout"][1]
    assert found["wrong_shape"][0] == "RuntimeError" and "size mismatch for 0.weight" in found["wrong_shape"][1]
    assert found["missing_key"][0] == "RuntimeError" and "Missing key(s)" in found["missing_key"][1]
    assert found["bad_policy"][0] == "TypeError"
    kind, message = found["ranks_differ"]
    assert kind == "ValueError" and "rank 1 has parameter ('weight', (3, 2)" in message
    assert found["forward_in_summon"][0] == "RuntimeError"
    assert np.isfinite(found["summoned_weight_sum"])


def test_ranks_whose_backward_reached_different_units_all_raise():
    with pytest.raises(RankFailure) as failure:
        get_pool(2).run(programs.divergent_backward, {}, timeout=60)
    message = str(failure.value)
    assert "failed on rank(s) [0, 1]" in message
    assert message.count("the ranks' backward passes reached different units: ['right']") == 2
    assert "rank 0 had them for ['right']" in message and "rank 1 had them for none of them" in message


def test_needs_a_process_group():
    from minigrad import nn
    from minigrad_dist import is_initialized
    from minigrad_dist.fsdp import FSDP

    if is_initialized():
        pytest.skip("a process group is initialized in this process")
    with pytest.raises(RuntimeError, match="init_process_group"):
        FSDP(nn.Linear(2, 2))
