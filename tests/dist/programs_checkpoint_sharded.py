"""Programs run on every rank of a pool by test_checkpoint_sharded.py: checkpoints of sharded training.

Each program trains ``spec["cut"]`` steps, saves with ``save_checkpoint``
(the full format at ``<dir>/full.ckpt`` and the sharded one at
``<dir>/sharded``), trains on, and then resumes fresh models from each
checkpoint. It returns plain data: the full parameters at the save and at
the end of each run, error messages, and optimizer states as NumPy arrays.
"""

from __future__ import annotations

import os
import shutil

import minigrad as mg
import minigrad_dist as dist
from minigrad.tensor import Tensor
from minigrad_dist.fsdp import FSDP
from tests.dist.fsdp import programs_fsdp as fsdp_programs
from tests.dist.programs_common import ensure_init, message_of
from tests.dist.zero import programs_zero as zero_programs


def _paths(spec):
    return os.path.join(spec["dir"], "full.ckpt"), os.path.join(spec["dir"], "sharded")


def _numpy_state(optim_state):
    """An optimizer state dict with every Tensor as a NumPy array (to travel back to the test)."""
    return {
        key: {name: value.numpy().copy() if isinstance(value, Tensor) else value for name, value in values.items()}
        for key, values in optim_state["state"].items()
    }


# -- FullyShardedDataParallel with a plain optimizer over the shards -------------------------------------------


def _fsdp_window(spec, rank, world):
    rows = len(spec["x"][0]) // world
    return slice(rank * rows, (rank + 1) * rows)


def _fsdp_fresh(spec, seed):
    model = fsdp_programs.wrap(fsdp_programs.build_model(spec, seed), spec)
    return model, fsdp_programs.make_optimizer(model.parameters(), spec)


def fsdp_resume(spec):
    """Save full and sharded checkpoints after ``cut`` steps, train on; resume from each and train the same steps."""
    rank, world = ensure_init()
    window = _fsdp_window(spec, rank, world)
    total, cut = len(spec["x"]), spec["cut"]
    full_path, sharded_path = _paths(spec)
    model, optimizer = _fsdp_fresh(spec, spec["seed"])
    fsdp_programs._train_steps(model, optimizer, spec, range(cut), window)
    dist.save_checkpoint(full_path, model, optimizer, step=cut)
    dist.save_checkpoint(sharded_path, model, optimizer, step=cut, sharded=True)
    at_save = fsdp_programs.full_params(model)
    fsdp_programs._train_steps(model, optimizer, spec, range(cut, total), window)
    result = {"at_save": at_save, "straight": fsdp_programs.full_params(model)}
    model.close()
    for kind, path in (("via_full", full_path), ("via_sharded", sharded_path)):
        resumed, resumed_opt = _fsdp_fresh(spec, spec["seed"] + 1000)  # other weights until loaded
        loaded = dist.load_checkpoint(path, resumed, resumed_opt)
        fsdp_programs._train_steps(resumed, resumed_opt, spec, range(loaded.step, total), window)
        result[kind] = fsdp_programs.full_params(resumed)
        resumed.close()
    plain = fsdp_programs.build_model(spec, spec["seed"] + 3000)
    plain.load_state_dict(mg.load(full_path)["model"])  # the full checkpoint loads into the unwrapped model
    result["plain"] = {k: v.numpy().copy() for k, v in plain.state_dict().items()}
    result["sharded_into_plain"] = message_of(lambda: dist.load_checkpoint(sharded_path, plain))
    other_units, other_opt = _fsdp_fresh({**spec, "units": []}, spec["seed"])
    result["other_units"] = message_of(lambda: dist.load_checkpoint(sharded_path, other_units, other_opt))
    other_units.close()
    result["mixed_saves"] = _load_mixed_shards(spec, rank, model_and_optimizer=_fsdp_fresh(spec, spec["seed"]))
    return result


def _load_mixed_shards(spec, rank, model_and_optimizer):
    """Save a second sharded checkpoint; load a folder holding rank 0's shard of the first and rank 1's of it."""
    model, optimizer = model_and_optimizer
    _, sharded_path = _paths(spec)
    later = os.path.join(spec["dir"], "sharded_later")
    mixed = os.path.join(spec["dir"], "sharded_mixed")
    dist.save_checkpoint(later, model, optimizer, step=spec["cut"] + 1, sharded=True)
    if rank == 0:
        os.makedirs(mixed)
        shutil.copy(os.path.join(sharded_path, "rank0.ckpt"), mixed)
        shutil.copy(os.path.join(later, "rank1.ckpt"), mixed)
    dist.barrier()
    error = message_of(lambda: dist.load_checkpoint(mixed, model, optimizer))
    model.close()
    return error


def fsdp_save(spec):
    """Train ``cut`` steps, save both formats, train on: the state at the save and the final parameters."""
    rank, world = ensure_init()
    window = _fsdp_window(spec, rank, world)
    full_path, sharded_path = _paths(spec)
    model, optimizer = _fsdp_fresh(spec, spec["seed"])
    fsdp_programs._train_steps(model, optimizer, spec, range(spec["cut"]), window)
    dist.save_checkpoint(full_path, model, optimizer, step=spec["cut"])
    dist.save_checkpoint(sharded_path, model, optimizer, step=spec["cut"], sharded=True)
    result = {"at_save": fsdp_programs.full_params(model),
              "optim_state": _numpy_state(FSDP.optim_state_dict(model, optimizer))}
    fsdp_programs._train_steps(model, optimizer, spec, range(spec["cut"], len(spec["x"])), window)
    result["straight"] = fsdp_programs.full_params(model)
    model.close()
    return result


def fsdp_load_other_world(spec):
    """Load ``fsdp_save``'s checkpoints with another number of ranks: the full one works, the sharded one raises."""
    rank, world = ensure_init()
    full_path, sharded_path = _paths(spec)
    model, optimizer = _fsdp_fresh(spec, spec["seed"] + 1000)
    errors = {
        "sharded": message_of(lambda: dist.load_checkpoint(sharded_path, model, optimizer, restore_rng=False)),
        "rng": message_of(lambda: dist.load_checkpoint(full_path, model, optimizer)),
    }
    loaded = dist.load_checkpoint(full_path, model, optimizer, restore_rng=False)
    result = {"errors": errors, "at_load": fsdp_programs.full_params(model),
              "optim_state": _numpy_state(FSDP.optim_state_dict(model, optimizer))}
    window = _fsdp_window(spec, rank, world)
    fsdp_programs._train_steps(model, optimizer, spec, range(loaded.step, len(spec["x"])), window)
    result["final"] = fsdp_programs.full_params(model)
    model.close()
    return result


# -- DistributedDataParallel with a ZeroRedundancyOptimizer -----------------------------------------------------


def _zero_fresh(spec):
    model = zero_programs.build_model(spec)
    ddp = dist.DistributedDataParallel(model, **spec["ddp_kwargs"])
    return model, ddp, zero_programs.make_zero(spec, ddp)


def _module_params(model):
    return {k: v.numpy().copy() for k, v in model.state_dict().items()}


def zero_resume(spec):
    """As ``fsdp_resume``, for DDP + ZeRO (``spec["mode"]``: standalone or overlap)."""
    ensure_init()
    total, cut = len(spec["x"]), spec["cut"]
    full_path, sharded_path = _paths(spec)
    model, ddp, zero = _zero_fresh(spec)
    zero_programs._train(spec, ddp, model, zero, range(cut))
    dist.save_checkpoint(full_path, ddp, zero, step=cut)
    dist.save_checkpoint(sharded_path, ddp, zero, step=cut, sharded=True)
    result = {"at_save": _module_params(model)}
    zero_programs._train(spec, ddp, model, zero, range(cut, total))
    result["straight"] = _module_params(model)
    ddp.close()
    if spec["mode"] == "standalone":
        model, ddp, zero = _zero_fresh({**spec, "partition": "parameters"})
        result["other_partition"] = message_of(lambda: dist.load_checkpoint(sharded_path, ddp, zero))
        ddp.close()
    for kind, path in (("via_full", full_path), ("via_sharded", sharded_path)):
        model, ddp, zero = _zero_fresh({**spec, "seed": spec["seed"] + 1000})
        loaded = dist.load_checkpoint(path, ddp, zero)
        zero_programs._train(spec, ddp, model, zero, range(loaded.step, total))
        result[kind] = _module_params(model)
        ddp.close()
    return result


def zero_save(spec):
    """Train ``cut`` steps with ZeRO, save both formats: the parameters and the consolidated state at the save."""
    rank = ensure_init()[0]
    full_path, sharded_path = _paths(spec)
    model, ddp, zero = _zero_fresh(spec)
    zero_programs._train(spec, ddp, model, zero, range(spec["cut"]))
    dist.save_checkpoint(full_path, ddp, zero, step=spec["cut"])
    dist.save_checkpoint(sharded_path, ddp, zero, step=spec["cut"], sharded=True)
    state = _numpy_state(zero.state_dict()) if rank == 0 else None  # consolidated on rank 0 by the save
    ddp.close()
    return {"at_save": _module_params(model), "optim_state": state}


def zero_load_other_world(spec):
    """Load ``zero_save``'s checkpoints with another number of ranks; consolidate again."""
    rank = ensure_init()[0]
    full_path, sharded_path = _paths(spec)
    model, ddp, zero = _zero_fresh({**spec, "seed": spec["seed"] + 1000})
    errors = {"sharded": message_of(lambda: dist.load_checkpoint(sharded_path, ddp, zero, restore_rng=False))}
    dist.load_checkpoint(full_path, ddp, zero, restore_rng=False)
    zero.consolidate_state_dict(to=0)
    state = _numpy_state(zero.state_dict()) if rank == 0 else None
    ddp.close()
    return {"errors": errors, "at_load": _module_params(model), "optim_state": state}
