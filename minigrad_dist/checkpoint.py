"""Checkpoint and resume data-parallel training: ``save_checkpoint`` and ``load_checkpoint``.

A training checkpoint holds everything a run needs to continue exactly where
it stopped: the model's state dict (of the wrapped module when given a
``DistributedDataParallel``), the optimizer's state dict (moment estimates,
step counts, hyper-parameters), the ``DistributedSampler``'s epoch and seed,
the step, the random generator states of **every** rank (minigrad's, NumPy's
global one and Python's ``random``; ranks usually draw different dropout
masks, so each rank's state is kept), and optional ``extra`` data. Resuming
a run with the same number of ranks, the same model, optimizer and data
order then reproduces the uninterrupted run bit for bit.

Sharded training. A model or optimizer that holds only a shard of its state
(``FullyShardedDataParallel`` and ``fully_shard`` models,
``ZeroRedundancyOptimizer``) needs every rank to produce its checkpoint
state. Such objects follow a small protocol, which these functions call on
every rank when the object's class defines it (anything else is asked for
``state_dict()`` on the first rank only, as before):

- ``checkpoint_state(sharded=False)`` (collective) returns the state to save,
  at least on the group's first rank; ``load_checkpoint_state(state, ...,
  sharded=False)`` restores this rank's share of it. ``FullyShardedDataParallel``
  gives the unwrapped model's full state dict, ``ZeroRedundancyOptimizer``
  its consolidated state (the wrapped optimizer's layout).
- ``optim_checkpoint_state(optimizer, sharded=False)`` and
  ``load_optim_checkpoint_state(optimizer, state, sharded=False)`` on the
  *model*: the state of a plain optimizer over the model's shards, which only
  the model can convert. ``FullyShardedDataParallel`` saves it as full
  tensors keyed by parameter name (``optim_state_dict``).

The default (full) format is independent of the number of ranks: a full FSDP
checkpoint loads into the unwrapped model with ``minigrad.load`` and
``load_state_dict``, and any number of ranks loads it with
``restore_rng=False`` (the generator states are per rank). ``sharded=True``
writes a folder of one file per rank instead, each rank's own shards,
without gathering anything; it loads only with the same number of ranks and
the same sharding (the same units, the same ZeRO partition).

Writing, in this order:

1. Check the arguments (the same on every rank, so every rank raises alike).
2. Collect the model's and optimizer's state: objects of the protocol on
   every rank, others on the first rank (full format) or on each rank (sharded).
3. Full format: gather the ranks' generator states on the group's first
   rank, which alone writes the file through ``minigrad.save``: to a
   temporary file in the same directory, fsynced, then renamed over
   ``path``, so a crash or an error during the write leaves the previous
   checkpoint at ``path`` intact. Sharded format: the first rank draws a
   token that every rank writes into its own file ``path/rank<R>.ckpt`` (the
   same atomic write), beside its own generator states.
4. Agree: if any rank failed, every rank raises.

The file is readable by ``minigrad.load`` and never unpickled. A process
killed during the write leaves its temporary file (``.NAME.<hex>.tmp`` next
to the file) behind; it is never read and can be deleted.

Reading, in this order:

1. Every rank reads ``path`` (or its own ``path/rank<R>.ckpt``), which must
   therefore be on a file system that every rank sees; malicious or corrupt
   files (pickles, object arrays, malformed archives) are refused with
   ``minigrad.serialization.CheckpointError``.
2. Sharded format: the ranks compare their files' tokens, so shards of two
   different saves (a save interrupted half-way) are refused.
3. Every rank restores the model, optimizer, sampler and its generator
   states (objects of the protocol through ``load_checkpoint_state``).
4. Agree: if any rank failed, every rank raises.

Not reproduced: the state of CUDA random generators (``backend.get_rng_state``
covers the CPU generator only), so dropout on GPU tensors does not resume
bit for bit.

Without an initialized process group both functions work in the single
process. Every rank of the group must call them (they communicate), and a
collective timeout set with ``init_process_group(timeout=...)`` must leave
the first rank enough time to write the file.
"""

from __future__ import annotations

import os
import random
from typing import Any, NamedTuple

import numpy as np

from minigrad import backend
from minigrad.nn.module import Module
from minigrad.optim.optimizer import Optimizer
from minigrad.serialization import CheckpointError, load, save
from minigrad_dist import collectives
from minigrad_dist.ddp.distributed import DistributedDataParallel
from minigrad_dist.process_group import ProcessGroup, ReduceOp

__all__ = ["LoadedCheckpoint", "load_checkpoint", "save_checkpoint"]

FORMAT = "minigrad_dist-training-checkpoint"
VERSION = 1
_KEYS = ("format", "version", "step", "world_size", "model", "optimizer", "sampler", "rng", "extra")


class LoadedCheckpoint(NamedTuple):
    """What ``load_checkpoint`` returns besides the restored state."""

    step: int
    extra: Any


def save_checkpoint(
    path, model, optimizer, sampler=None, step: int = 0, extra=None, group=None, *, sharded: bool = False
) -> None:
    """Save a training checkpoint to ``path`` (see the module docstring). Called by every rank.

    Args:
        path: file path (str or ``os.PathLike``); written atomically by the
            group's first rank. With ``sharded=True``, a folder (made if
            missing) in which every rank writes ``rank<R>.ckpt``.
        model: the ``Module`` or ``DistributedDataParallel`` being trained;
            a ``FullyShardedDataParallel`` (or ``fully_shard``) root saves its
            full state dict (original names).
        optimizer: its optimizer, or None. A ``ZeroRedundancyOptimizer`` is
            consolidated; a plain optimizer over an FSDP model's shards is
            saved as full tensors keyed by parameter name.
        sampler: the ``DistributedSampler`` (its epoch and seed are saved), or None.
        step: the number of steps done (returned by ``load_checkpoint``), an int >= 0.
        extra: anything ``minigrad.save`` can store (dicts, lists, numbers,
            strings, arrays...), returned by ``load_checkpoint``.
        group: the process group (default: the world, or the single process
            when no group is initialized).
        sharded: every rank writes its own shards (``FullyShardedDataParallel``'s
            ``SHARDED_STATE_DICT``, a ``ZeroRedundancyOptimizer``'s local state;
            objects without shards are written whole by each rank) instead of
            one full file; nothing is gathered, and only the same number of
            ranks, sharded the same way, can load it.

    Raises:
        TypeError: a wrong argument type, or ``extra`` holds something
            ``minigrad.save`` cannot store.
        ValueError: a negative ``step``.
        OSError: writing failed (on the rank that failed; the others raise RuntimeError).
        RuntimeError: on the other ranks, when a rank failed to write; or the
            first rank got no state from a sharded object (its process group
            does not start at the checkpoint group's first rank).
    """
    # Step 1: arguments.
    _check_path(path, "save_checkpoint")
    module = _unwrap(model, "save_checkpoint")
    _check_optimizer(optimizer, "save_checkpoint")
    _check_sampler(sampler, "save_checkpoint")
    if isinstance(step, bool) or not isinstance(step, (int, np.integer)):
        raise TypeError(f"save_checkpoint: step must be an int, got {type(step).__name__}")
    if step < 0:
        raise ValueError(f"save_checkpoint: step must be >= 0, got {step}")
    if not isinstance(sharded, bool):
        raise TypeError(f"save_checkpoint: sharded must be a bool, got {type(sharded).__name__}")
    g = _resolve_group(group)
    # Step 2: the state of sharded objects needs every rank.
    writes = sharded or _rank(g) == 0
    model_state, model_format = _model_state(module, sharded, writes)
    optimizer_state, optimizer_format = _optimizer_state(module, optimizer, sharded, writes)
    # Step 3: write.
    payload = {
        "format": FORMAT,
        "version": VERSION,
        "step": int(step),
        "world_size": _size(g),
        "model": model_state,
        "model_format": model_format,
        "optimizer": optimizer_state,
        "optimizer_format": optimizer_format,
        "sampler": {"epoch": sampler.epoch, "seed": sampler.seed} if sampler is not None else None,
        "extra": extra,
        "sharded": sharded,
    }
    if sharded:
        payload.update(rank=_rank(g), token=_shared_token(g), rng=[_rng_state()])
        target = _shard_file(path, _rank(g))
    else:
        payload["rng"] = _gather_rng_states(g)
        target = path
    error = None
    if writes:
        try:
            _check_collected(payload, optimizer, module)
            if sharded:
                os.makedirs(path, exist_ok=True)
            save(payload, target)
        except Exception as exc:  # noqa: BLE001  (re-raised below, after telling the other ranks)
            error = exc
    # Step 4: every rank raises if one failed.
    _agree(g, error, "save_checkpoint", path)


def load_checkpoint(
    path, model, optimizer=None, sampler=None, *, restore_rng: bool = True, strict: bool = True, group=None
) -> LoadedCheckpoint:
    """Restore a checkpoint written by ``save_checkpoint`` on every rank. Called by every rank.

    Restores the model's parameters and buffers (copied into the existing
    arrays, so a ``DistributedDataParallel`` wrapper and its optimizer keep
    working), the optimizer state, the sampler's epoch, and this rank's
    random generator states. Sharded objects (``FullyShardedDataParallel``,
    ``ZeroRedundancyOptimizer``) keep this rank's share of a full checkpoint,
    whatever the number of ranks that saved it. A folder written with
    ``save_checkpoint(..., sharded=True)`` is read as a sharded checkpoint:
    every rank its own file.

    Args:
        path: the checkpoint file (or sharded folder), readable by every rank.
        model: the ``Module``, ``DistributedDataParallel`` or ``FullyShardedDataParallel`` to restore.
        optimizer: the optimizer to restore, or None to skip its state.
        sampler: the ``DistributedSampler`` to restore, or None.
        restore_rng: restore each rank's generator states (needs the same
            number of ranks as when saving).
        strict: the model's state dict keys must match exactly (as ``Module.load_state_dict``).
        group: the process group (default: the world, or the single process).

    Returns:
        ``LoadedCheckpoint(step, extra)``: the saved step and extra data.

    Raises:
        CheckpointError (a RuntimeError and a ValueError): the file is not a checkpoint written
            by ``save_checkpoint``, or is unsafe (a pickle, object arrays),
            malformed or corrupt; or the shards of a sharded checkpoint come
            from different saves.
        FileNotFoundError: no file at ``path``.
        ValueError: the checkpoint lacks optimizer or sampler state that was
            asked for, its sampler seed differs from ``sampler.seed``, it was
            saved by a different number of ranks and ``restore_rng`` is True
            (or it is sharded), or its model or optimizer state has another
            format than this model and optimizer take (say, sharded state
            into an unsharded model, or an FSDP optimizer state keyed by
            parameter name into a plain optimizer).
        RuntimeError: the model's state dict does not match; or, on the
            ranks that succeeded, some other rank failed (its error is quoted).
    """
    # Step 1: every rank reads its file.
    _check_path(path, "load_checkpoint")
    module = _unwrap(model, "load_checkpoint")
    _check_optimizer(optimizer, "load_checkpoint")
    _check_sampler(sampler, "load_checkpoint")
    g = _resolve_group(group)
    sharded = os.path.isdir(path)
    error, payload = None, None
    try:
        payload = _read(_own_shard_file(path, g) if sharded else path, sharded)
        if sharded:
            _check_shard(payload, path, g)
    except Exception as exc:  # noqa: BLE001  (re-raised below, after telling the other ranks)
        error = exc
    _agree(g, error, "load_checkpoint", path)
    # Step 2: the shards must come from one save.
    if sharded:
        _check_same_save(payload["token"], path, g)
    # Steps 3 and 4: restore, then agree.
    result = None
    try:
        result = _restore(payload, path, module, optimizer, sampler, restore_rng, strict, g)
    except Exception as exc:  # noqa: BLE001  (re-raised below, after telling the other ranks)
        error = exc
    _agree(g, error, "load_checkpoint", path)
    return result


# -- the checkpoint protocol: sharded objects produce and take their state on every rank ----------


def _has(obj, method: str) -> bool:
    """Whether ``obj``'s class defines ``method`` (on the class: a module's attributes could shadow it)."""
    return callable(getattr(type(obj), method, None))


def _model_state(module, sharded: bool, writes: bool):
    """``(state, format)``: the model's state where this rank writes it (None elsewhere), "full" or "sharded"."""
    if _has(module, "checkpoint_state"):
        return module.checkpoint_state(sharded=sharded), "sharded" if sharded else "full"
    return (module.state_dict() if writes else None), "full"


def _optimizer_state(module, optimizer, sharded: bool, writes: bool):
    """``(state, format)``; format: "by_index" (a plain optimizer's layout), "by_name" (FSDP) or "sharded"."""
    if optimizer is None:
        return None, None
    if _has(optimizer, "checkpoint_state"):
        return optimizer.checkpoint_state(sharded=sharded), "sharded" if sharded else "by_index"
    if _has(module, "optim_checkpoint_state"):
        return module.optim_checkpoint_state(optimizer, sharded=sharded), "sharded" if sharded else "by_name"
    return (optimizer.state_dict() if writes else None), "by_index"


def _expected_formats(module, optimizer, sharded: bool):
    """The formats this model and optimizer would save in (what they can load)."""
    model = "sharded" if sharded and _has(module, "load_checkpoint_state") else "full"
    if optimizer is None:
        return model, None
    if _has(optimizer, "load_checkpoint_state"):
        return model, "sharded" if sharded else "by_index"
    if _has(module, "load_optim_checkpoint_state"):
        return model, "sharded" if sharded else "by_name"
    return model, "by_index"


def _load_model_state(module, state, strict: bool, sharded: bool) -> None:
    if _has(module, "load_checkpoint_state"):
        module.load_checkpoint_state(state, strict=strict, sharded=sharded)
    else:
        module.load_state_dict(state, strict=strict)


def _load_optimizer_state(module, optimizer, state, sharded: bool) -> None:
    if _has(optimizer, "load_checkpoint_state"):
        optimizer.load_checkpoint_state(state, sharded=sharded)
    elif _has(module, "load_optim_checkpoint_state"):
        module.load_optim_checkpoint_state(optimizer, state, sharded=sharded)
    else:
        optimizer.load_state_dict(state)


def _check_collected(payload, optimizer, module) -> None:
    """On a writing rank: every requested state must be there (a sharded object may give it to another rank)."""
    if payload["model"] is None:
        raise RuntimeError(
            f"save_checkpoint: {type(module).__name__}.checkpoint_state() returned None on this "
            "rank, which writes the checkpoint; its process group must start at the checkpoint "
            "group's first rank (pass group=... to save_checkpoint)"
        )
    if optimizer is not None and payload["optimizer"] is None:
        raise RuntimeError(
            f"save_checkpoint: {type(optimizer).__name__}.checkpoint_state() returned None on this "
            "rank, which writes the checkpoint; its process group must start at the checkpoint "
            "group's first rank (pass group=... to save_checkpoint)"
        )


_FORMAT_NAMES = {
    "full": "a full state dict",
    "sharded": "per-rank shards",
    "by_index": "keyed by parameter index (a plain optimizer's, or a consolidated ZeroRedundancyOptimizer's)",
    "by_name": "keyed by parameter name (an optimizer over a FullyShardedDataParallel model's shards)",
}


def _check_formats(payload, name, module, optimizer, sharded: bool) -> None:
    model_expected, optimizer_expected = _expected_formats(module, optimizer, sharded)
    saved_model = payload.get("model_format", "full")
    if saved_model != model_expected:
        raise ValueError(
            f"load_checkpoint: {name} holds the model state as {_FORMAT_NAMES.get(saved_model)}, but "
            f"{type(module).__name__} loads {_FORMAT_NAMES[model_expected]}; load it into the kind "
            "of model that saved it"
        )
    saved_optimizer = payload.get("optimizer_format", "by_index")
    if optimizer is not None and saved_optimizer != optimizer_expected:
        raise ValueError(
            f"load_checkpoint: {name} holds the optimizer state {_FORMAT_NAMES.get(saved_optimizer)}, but this "
            f"{type(optimizer).__name__} (with a {type(module).__name__} model) loads it "
            f"{_FORMAT_NAMES[optimizer_expected]}; load it with the kind of model and optimizer that saved it"
        )


# -- sharded checkpoints: a folder of one file per rank ---------------------------------------------------


def _shard_file(path, rank: int) -> str:
    return os.path.join(os.fspath(path), f"rank{rank}.ckpt")


def _own_shard_file(path, g) -> str:
    """This rank's file of a sharded checkpoint; a ValueError when the save had fewer ranks."""
    own = _shard_file(path, _rank(g))
    if not os.path.exists(own):
        count = sum(1 for f in os.listdir(path) if f.startswith("rank") and f.endswith(".ckpt"))
        raise ValueError(
            f"load_checkpoint: {os.fspath(path)} is a sharded checkpoint with {count} shard files but this is rank "
            f"{_rank(g)} of {_size(g)}; sharded checkpoints load only with the number of ranks that saved them. "
            "Load it with that many ranks and save it again with sharded=False (the full format loads with any number)"
        )
    return own


def _shared_token(g) -> str:
    """A random token drawn on the first rank and shared: it marks every shard file of one save."""
    token = [os.urandom(16).hex() if _rank(g) == 0 else None]
    if g is not None:
        collectives.broadcast_object_list(token, src=g.world_ranks[0], group=g)
    return token[0]


def _check_shard(payload, path, g) -> None:
    """This rank's shard file must come from a save with this many ranks, by this rank."""
    name = os.fspath(path)
    if not payload.get("sharded") or not isinstance(payload.get("token"), str):
        raise CheckpointError(f"{name}: malformed sharded checkpoint, {_shard_file(name, _rank(g))} is not a shard")
    if payload["world_size"] != _size(g):
        raise ValueError(
            f"load_checkpoint: {name} is a sharded checkpoint saved by {payload['world_size']} ranks but "
            f"{_size(g)} are loading it; sharded checkpoints load only with the same number of ranks. Load "
            "it with that many ranks and save it again with sharded=False (the full format loads with any number)"
        )
    if payload.get("rank") != _rank(g):
        raise CheckpointError(
            f"{name}: malformed sharded checkpoint, {_shard_file(name, _rank(g))} holds the shard "
            f"of rank {payload.get('rank')!r}"
        )


def _check_same_save(token, path, g) -> None:
    """Every rank compares the tokens, so all raise alike when the files come from different saves."""
    if g is None:
        return
    tokens = [None] * g.size()
    collectives.all_gather_object(tokens, token, group=g)
    if len(set(tokens)) != 1:
        differing = [r for r, t in zip(g.world_ranks, tokens) if t != tokens[0]]
        raise CheckpointError(
            f"{os.fspath(path)}: the shard files come from different saves (ranks {differing} differ from rank "
            f"{g.world_ranks[0]}); a save was interrupted half-way, so this folder cannot be resumed from"
        )


# -- argument checks -------------------------------------------------------------------


def _check_path(path, fn):
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"{fn}: path must be a str or os.PathLike, got {type(path).__name__}")


def _unwrap(model, fn) -> Module:
    if isinstance(model, DistributedDataParallel):
        return model.module
    if not isinstance(model, Module):
        raise TypeError(
            f"{fn}: model must be a minigrad.nn.Module or DistributedDataParallel, got {type(model).__name__}"
        )
    return model


def _check_optimizer(optimizer, fn):
    if optimizer is not None and not isinstance(optimizer, Optimizer):
        raise TypeError(f"{fn}: optimizer must be a minigrad.optim.Optimizer or None, got {type(optimizer).__name__}")


def _check_sampler(sampler, fn):
    if sampler is not None and not (hasattr(sampler, "set_epoch") and hasattr(sampler, "seed")):
        raise TypeError(
            f"{fn}: sampler must be a DistributedSampler (with set_epoch and seed) or None, "
            f"got {type(sampler).__name__}"
        )


# -- communication (none without a group) --------------------------------------------------


def _resolve_group(group):
    if group is not None:
        if not isinstance(group, ProcessGroup):
            raise TypeError(f"group must be a ProcessGroup from new_group(), got {type(group).__name__}")
        return group
    return collectives.get_default_group() if collectives.is_initialized() else None


def _rank(g) -> int:
    return 0 if g is None else g.rank()


def _size(g) -> int:
    return 1 if g is None else g.size()


def _gather_rng_states(g):
    """Every rank's generator states, as a list indexed by group rank on the first rank (None elsewhere)."""
    mine = _rng_state()
    if g is None:
        return [mine]
    gathered = [None] * g.size() if g.rank() == 0 else None
    collectives.gather_object(mine, gathered, dst=g.world_ranks[0], group=g)
    return gathered


def _agree(g, error, fn, path) -> None:
    """Raise on every rank if any rank failed: its own error where it failed, a RuntimeError elsewhere."""
    if g is not None:
        flag = np.array([0 if error is None else 1], dtype=np.int64)
        collectives.all_reduce(flag, op=ReduceOp.MAX, group=g)
        if flag[0]:
            messages = [None] * g.size()
            own = None if error is None else f"{type(error).__name__}: {error}"
            collectives.all_gather_object(messages, own, group=g)
            if error is None:
                failed = "; ".join(f"rank {r}: {m}" for r, m in zip(g.world_ranks, messages) if m is not None)
                raise RuntimeError(f"{fn}({os.fspath(path)!r}) failed on another rank: {failed}")
    if error is not None:
        raise error


# -- reading and restoring -----------------------------------------------------------------


def _read(path, sharded: bool = False) -> dict:
    payload = load(path)
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise CheckpointError(
            f"{os.fspath(path)} is a minigrad checkpoint but not a training checkpoint written by "
            "save_checkpoint; read it with minigrad.load"
        )
    if payload.get("version") != VERSION:
        raise CheckpointError(
            f"{os.fspath(path)}: unsupported training checkpoint version "
            f"{payload.get('version')!r} (this minigrad_dist reads version {VERSION})"
        )
    missing = [k for k in _KEYS if k not in payload]
    if missing:
        raise CheckpointError(f"{os.fspath(path)}: malformed training checkpoint, missing {missing}")
    if not isinstance(payload["step"], int) or not isinstance(payload["world_size"], int):
        raise CheckpointError(f"{os.fspath(path)}: malformed training checkpoint, step and world_size must be ints")
    states = 1 if sharded else payload["world_size"]  # a shard file holds its own rank's states
    if not isinstance(payload["rng"], list) or len(payload["rng"]) != states:
        raise CheckpointError(
            f"{os.fspath(path)}: malformed training checkpoint, expected one generator state per rank ({states})"
        )
    return payload


def _restore(payload, path, module, optimizer, sampler, restore_rng, strict, g) -> LoadedCheckpoint:
    name = os.fspath(path)
    if restore_rng and payload["world_size"] != _size(g):
        raise ValueError(
            f"load_checkpoint: {name} was saved by {payload['world_size']} ranks but {_size(g)} are "
            "loading it, "
            "so the per-rank random generator states cannot be restored; pass restore_rng=False to "
            "load everything else"
        )
    if optimizer is not None and payload["optimizer"] is None:
        raise ValueError(f"load_checkpoint: {name} holds no optimizer state (saved with optimizer=None)")
    if sampler is not None:
        _check_sampler_state(payload["sampler"], sampler, name)
    sharded = bool(payload.get("sharded", False))
    _check_formats(payload, name, module, optimizer, sharded)
    _load_model_state(module, payload["model"], strict, sharded)
    if optimizer is not None:
        _load_optimizer_state(module, optimizer, payload["optimizer"], sharded)
    if sampler is not None:
        sampler.set_epoch(payload["sampler"]["epoch"])
    if restore_rng:
        _set_rng_state(payload["rng"][0 if sharded else _rank(g)], name)
    return LoadedCheckpoint(payload["step"], payload["extra"])


def _check_sampler_state(state, sampler, name) -> None:
    if state is None:
        raise ValueError(f"load_checkpoint: {name} holds no sampler state (saved with sampler=None)")
    if not isinstance(state, dict) or not isinstance(state.get("epoch"), int):
        raise CheckpointError(f"{name}: malformed training checkpoint, bad sampler state {state!r}"[:200])
    if state.get("seed") != sampler.seed:
        raise ValueError(
            f"load_checkpoint: {name} was saved with sampler seed {state.get('seed')!r} but the sampler's "
            f"seed is {sampler.seed!r}; the data order would differ from the interrupted run"
        )


# -- random generator states ---------------------------------------------------------------


def _rng_state() -> dict:
    return {"minigrad": backend.get_rng_state(), "numpy": np.random.get_state(), "python": random.getstate()}


def _set_rng_state(state, name) -> None:
    if not isinstance(state, dict) or not {"minigrad", "numpy", "python"} <= state.keys():
        raise CheckpointError(f"{name}: malformed training checkpoint, bad random generator state")
    try:
        backend.set_rng_state(state["minigrad"])
        np.random.set_state(state["numpy"])
        random.setstate(state["python"])
    except (TypeError, ValueError, KeyError) as error:
        raise CheckpointError(f"{name}: malformed training checkpoint, bad random generator state ({error})") from None
