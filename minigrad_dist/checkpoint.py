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

Writing: the ranks' generator states are gathered on the group's first rank,
which alone writes the file through ``minigrad.save``: to a temporary file in
the same directory, fsynced, then renamed over ``path``, so a crash or an
error during the write leaves the previous checkpoint at ``path`` intact.
The other ranks wait until the write is done; if it failed, every rank
raises. The file is readable by ``minigrad.load`` and never unpickled. A
process killed during the write leaves its temporary file
(``.NAME.<hex>.tmp`` next to ``path``) behind; it is never read and can be
deleted.

Reading: every rank reads ``path`` (which must therefore be on a file system
that every rank sees) and restores the state; malicious or corrupt files
(pickles, object arrays, malformed archives) are refused with
``minigrad.serialization.CheckpointError``. If any rank fails, every rank
raises.

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


def save_checkpoint(path, model, optimizer, sampler=None, step: int = 0, extra=None, group=None) -> None:
    """Save a training checkpoint to ``path`` (see the module docstring). Called by every rank.

    Args:
        path: file path (str or ``os.PathLike``); written atomically by the group's first rank.
        model: the ``Module`` or ``DistributedDataParallel`` being trained.
        optimizer: its optimizer, or None.
        sampler: the ``DistributedSampler`` (its epoch and seed are saved), or None.
        step: the number of steps done (returned by ``load_checkpoint``), an int >= 0.
        extra: anything ``minigrad.save`` can store (dicts, lists, numbers,
            strings, arrays...), returned by ``load_checkpoint``.
        group: the process group (default: the world, or the single process
            when no group is initialized).

    Raises:
        TypeError: a wrong argument type, or ``extra`` holds something
            ``minigrad.save`` cannot store.
        ValueError: a negative ``step``.
        OSError: writing failed (on the first rank; the others raise RuntimeError).
        RuntimeError: on the other ranks, when the first rank failed to write.
    """
    _check_path(path, "save_checkpoint")
    module = _unwrap(model, "save_checkpoint")
    _check_optimizer(optimizer, "save_checkpoint")
    _check_sampler(sampler, "save_checkpoint")
    if isinstance(step, bool) or not isinstance(step, (int, np.integer)):
        raise TypeError(f"save_checkpoint: step must be an int, got {type(step).__name__}")
    if step < 0:
        raise ValueError(f"save_checkpoint: step must be >= 0, got {step}")
    g = _resolve_group(group)
    rng_states = _gather_rng_states(g)
    error = None
    if _rank(g) == 0:
        payload = {
            "format": FORMAT,
            "version": VERSION,
            "step": int(step),
            "world_size": _size(g),
            "model": module.state_dict(),
            "optimizer": optimizer.state_dict() if optimizer is not None else None,
            "sampler": {"epoch": sampler.epoch, "seed": sampler.seed} if sampler is not None else None,
            "rng": rng_states,
            "extra": extra,
        }
        try:
            save(payload, path)
        except Exception as exc:  # noqa: BLE001  (re-raised below, after telling the other ranks)
            error = exc
    _agree(g, error, "save_checkpoint", path)


def load_checkpoint(path, model, optimizer=None, sampler=None, *, restore_rng: bool = True,
                    strict: bool = True, group=None) -> LoadedCheckpoint:
    """Restore a checkpoint written by ``save_checkpoint`` on every rank. Called by every rank.

    Restores the model's parameters and buffers (copied into the existing
    arrays, so a ``DistributedDataParallel`` wrapper and its optimizer keep
    working), the optimizer state, the sampler's epoch, and this rank's
    random generator states.

    Args:
        path: the checkpoint file, readable by every rank.
        model: the ``Module`` or ``DistributedDataParallel`` to restore.
        optimizer: the optimizer to restore, or None to skip its state.
        sampler: the ``DistributedSampler`` to restore, or None.
        restore_rng: restore each rank's generator states (needs the same
            number of ranks as when saving).
        strict: the model's state dict keys must match exactly (as ``Module.load_state_dict``).
        group: the process group (default: the world, or the single process).

    Returns:
        ``LoadedCheckpoint(step, extra)``: the saved step and extra data.

    Raises:
        CheckpointError (a ValueError): the file is not a checkpoint written
            by ``save_checkpoint``, or is unsafe (a pickle, object arrays),
            malformed or corrupt.
        FileNotFoundError: no file at ``path``.
        ValueError: the checkpoint lacks optimizer or sampler state that was
            asked for, its sampler seed differs from ``sampler.seed``, or it
            was saved by a different number of ranks and ``restore_rng`` is True.
        RuntimeError: the model's state dict does not match; or, on the
            ranks that succeeded, some other rank failed (its error is quoted).
    """
    _check_path(path, "load_checkpoint")
    module = _unwrap(model, "load_checkpoint")
    _check_optimizer(optimizer, "load_checkpoint")
    _check_sampler(sampler, "load_checkpoint")
    g = _resolve_group(group)
    error, result = None, None
    try:
        payload = _read(path)
        result = _restore(payload, path, module, optimizer, sampler, restore_rng, strict, g)
    except Exception as exc:  # noqa: BLE001  (re-raised below, after telling the other ranks)
        error = exc
    _agree(g, error, "load_checkpoint", path)
    return result


# -- argument checks -------------------------------------------------------------------


def _check_path(path, fn):
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"{fn}: path must be a str or os.PathLike, got {type(path).__name__}")


def _unwrap(model, fn) -> Module:
    if isinstance(model, DistributedDataParallel):
        return model.module
    if not isinstance(model, Module):
        raise TypeError(f"{fn}: model must be a minigrad.nn.Module or DistributedDataParallel, "
                        f"got {type(model).__name__}")
    return model


def _check_optimizer(optimizer, fn):
    if optimizer is not None and not isinstance(optimizer, Optimizer):
        raise TypeError(
            f"{fn}: optimizer must be a minigrad.optim.Optimizer or None, got {type(optimizer).__name__}"
        )


def _check_sampler(sampler, fn):
    if sampler is not None and not (hasattr(sampler, "set_epoch") and hasattr(sampler, "seed")):
        raise TypeError(f"{fn}: sampler must be a DistributedSampler (with set_epoch and seed) or None, "
                        f"got {type(sampler).__name__}")


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


def _read(path) -> dict:
    payload = load(path)
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise CheckpointError(
            f"{os.fspath(path)} is a minigrad checkpoint but not a training checkpoint written by "
            "save_checkpoint; read it with minigrad.load"
        )
    if payload.get("version") != VERSION:
        raise CheckpointError(f"{os.fspath(path)}: unsupported training checkpoint version "
                              f"{payload.get('version')!r} (this minigrad_dist reads version {VERSION})")
    missing = [k for k in _KEYS if k not in payload]
    if missing:
        raise CheckpointError(f"{os.fspath(path)}: malformed training checkpoint, missing {missing}")
    if not isinstance(payload["step"], int) or not isinstance(payload["world_size"], int):
        raise CheckpointError(
            f"{os.fspath(path)}: malformed training checkpoint, step and world_size must be ints"
        )
    if not isinstance(payload["rng"], list) or len(payload["rng"]) != payload["world_size"]:
        raise CheckpointError(f"{os.fspath(path)}: malformed training checkpoint, expected one generator "
                              f"state per rank ({payload['world_size']})")
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
    module.load_state_dict(payload["model"], strict=strict)
    if optimizer is not None:
        optimizer.load_state_dict(payload["optimizer"])
    if sampler is not None:
        sampler.set_epoch(payload["sampler"]["epoch"])
    if restore_rng:
        _set_rng_state(payload["rng"][_rank(g)], name)
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
        raise CheckpointError(
            f"{name}: malformed training checkpoint, bad random generator state ({error})"
        ) from None
