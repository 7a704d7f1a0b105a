"""``save_checkpoint`` / ``load_checkpoint`` with sharded training: FSDP and ZeroRedundancyOptimizer.

Each case trains ``cut`` steps on a pool of ranks, saves (the full format
and ``sharded=True``), and trains on; fresh models loaded from each
checkpoint must then train to the same bits. The full format must load into
the unwrapped model and with another number of ranks (state equal bit for
bit at the load, training on equal within rtol 1e-10, as the ranks average
in another order); the sharded one must refuse another number of ranks.
"""

from __future__ import annotations

import numpy as np
import pytest

import minigrad as mg
import minigrad_dist as dist
from tests.dist import programs_checkpoint_sharded as programs
from tests.dist.conftest import get_pool
from tests.dist.fsdp import programs_fsdp

pytestmark = pytest.mark.timeout(240)

SGD = ("SGD", {"lr": 0.1, "momentum": 0.9})
ADAM = ("Adam", {"lr": 0.05})
MODEL = {"in_features": 3, "hidden": [5, 4], "classes": 3, "activation": "tanh", "unused_branch": False}


def _data(steps=4, batch=6):
    rng = np.random.default_rng(11)
    return rng.standard_normal((steps, batch, 3)), rng.integers(0, 3, (steps, batch))


def fsdp_spec(optimizer, front, directory):
    x, y = _data()
    return {"spec": MODEL, "units": ["body.2", "body.0"], "front": front, "optimizer": optimizer[0],
            "optimizer_kwargs": optimizer[1], "seed": 4, "x": x, "y": y, "cut": 2, "dir": str(directory)}


def zero_spec(optimizer, mode, directory):
    x, y = _data()
    return {"model": MODEL, "x": x, "y": y, "seed": 5, "mode": mode, "optimizer": optimizer[0],
            "optimizer_kwargs": optimizer[1], "ddp_kwargs": {"bucket_cap_mb": 1e-4, "first_bucket_cap_mb": 1e-4},
            "shard_buckets": True, "cut": 2, "dir": str(directory)}


def assert_bitwise(actual, expected, what):
    assert actual.keys() == expected.keys(), what
    for name, value in expected.items():
        assert actual[name].dtype == value.dtype and actual[name].tobytes() == value.tobytes(), f"{what}: {name}"


def assert_close(actual, expected, what):
    assert actual.keys() == expected.keys(), what
    for name, value in expected.items():
        np.testing.assert_allclose(actual[name], value, rtol=1e-10, atol=1e-12, err_msg=f"{what}: {name}")


def assert_states_bitwise(actual, expected, what):
    assert actual.keys() == expected.keys(), what
    for key, values in expected.items():
        assert actual[key].keys() == values.keys(), f"{what}: {key}"
        for name, value in values.items():
            assert np.asarray(actual[key][name]).tobytes() == np.asarray(value).tobytes(), f"{what}: {key}.{name}"


@pytest.mark.parametrize(("optimizer", "front"), [(SGD, "wrapper"), (ADAM, "fully_shard")],
                         ids=["SGD-FullyShardedDataParallel", "Adam-fully_shard"])
def test_fsdp_checkpoint_resumes_bitwise_and_loads_into_the_unwrapped_model(optimizer, front, tmp_path):
    """FSDP model + plain optimizer over its shards: both formats resume bit for bit; the full one is the
    unwrapped model's state dict, equal to the gathered parameters; a plain optimizer refuses its optimizer state."""
    spec = fsdp_spec(optimizer, front, tmp_path)
    results = get_pool(2).run(programs.fsdp_resume, spec, timeout=120)
    for rank, result in enumerate(results):
        assert_bitwise(result["via_full"], result["straight"], f"rank {rank}, full checkpoint")
        assert_bitwise(result["via_sharded"], result["straight"], f"rank {rank}, sharded checkpoint")
        assert_bitwise(result["plain"], result["at_save"], f"rank {rank}, unwrapped model")
        kind, message = result["sharded_into_plain"]
        assert kind == "ValueError" and "model state as per-rank shards" in message, message
        kind, message = result["other_units"]
        assert kind == "RuntimeError" and "_flat_param" in message, message
        kind, message = result["mixed_saves"]
        assert kind == "CheckpointError" and "different saves" in message, message
    assert_bitwise(results[1]["straight"], results[0]["straight"], "ranks agree")

    plain = programs_fsdp.build_model(spec, 99)
    plain_opt = getattr(mg.optim, optimizer[0])(plain.parameters(), **optimizer[1])
    path = tmp_path / "full.ckpt"
    with pytest.raises(ValueError, match="keyed by parameter name"):
        dist.load_checkpoint(path, plain, plain_opt, restore_rng=False)
    dist.load_checkpoint(path, plain, restore_rng=False)  # the model alone loads, in one process
    assert_bitwise({k: v.numpy() for k, v in plain.state_dict().items()}, results[0]["at_save"], "one process")
    with pytest.raises(ValueError, match="sharded checkpoint saved by 2 ranks but 1 are loading it"):
        dist.load_checkpoint(tmp_path / "sharded", plain, restore_rng=False)


def test_fsdp_full_checkpoint_loads_with_another_world_size(tmp_path):
    """2 ranks save; 3 ranks load the full checkpoint (parameters and optimizer state bit for bit, training on
    as the 2-rank run did) and refuse the sharded one and the 2 ranks' generator states."""
    spec = fsdp_spec(ADAM, "wrapper", tmp_path)
    saved = get_pool(2).run(programs.fsdp_save, spec, timeout=120)[0]
    for rank, result in enumerate(get_pool(3).run(programs.fsdp_load_other_world, spec, timeout=120)):
        assert_bitwise(result["at_load"], saved["at_save"], f"rank {rank}, parameters at the load")
        assert_states_bitwise(result["optim_state"], saved["optim_state"], f"rank {rank}, optimizer state")
        assert_close(result["final"], saved["straight"], f"rank {rank}, trained on with 3 ranks")
        kind, message = result["errors"]["sharded"]
        assert kind in ("ValueError", "RuntimeError") and "sharded checkpoint" in message and "2" in message
        kind, message = result["errors"]["rng"]
        assert kind == "ValueError" and "restore_rng=False" in message


@pytest.mark.parametrize("mode", ["standalone", "overlap", "zero2"])
@pytest.mark.parametrize("optimizer", [SGD, ADAM], ids=["SGD", "Adam"])
def test_zero_checkpoint_resumes_bitwise(optimizer, mode, tmp_path):
    """DDP + ZeroRedundancyOptimizer (standalone, overlap_with_ddp, ZeRO-2): both formats resume bit for bit."""
    spec = zero_spec(optimizer, mode, tmp_path)
    results = get_pool(2).run(programs.zero_resume, spec, timeout=120)
    for rank, result in enumerate(results):
        assert_bitwise(result["via_full"], result["straight"], f"rank {rank}, full checkpoint")
        assert_bitwise(result["via_sharded"], result["straight"], f"rank {rank}, sharded checkpoint")
        if mode == "standalone":
            kind, message = result["other_partition"]
            assert kind == "ValueError" and "other pieces" in message and "sharded=False" in message, message
    assert_bitwise(results[1]["straight"], results[0]["straight"], "ranks agree")
    payload = mg.load(tmp_path / "full.ckpt")  # the consolidated state: a plain optimizer's layout
    plain = getattr(mg.optim, optimizer[0])(programs_fsdp.build_model({"spec": MODEL}, 0).parameters(),
                                            **optimizer[1])
    plain.load_state_dict(payload["optimizer"])


def test_zero_full_checkpoint_loads_with_another_world_size(tmp_path):
    """2 ranks save with ZeRO; 3 ranks load the full checkpoint: consolidating again gives the same bits."""
    spec = zero_spec(ADAM, "standalone", tmp_path)
    saved = get_pool(2).run(programs.zero_save, spec, timeout=120)[0]
    results = get_pool(3).run(programs.zero_load_other_world, spec, timeout=120)
    assert_states_bitwise(results[0]["optim_state"], saved["optim_state"], "consolidated state")
    for rank, result in enumerate(results):
        assert_bitwise(result["at_load"], saved["at_save"], f"rank {rank}, parameters at the load")
        kind, message = result["errors"]["sharded"]
        assert kind in ("ValueError", "RuntimeError") and "sharded checkpoint" in message
