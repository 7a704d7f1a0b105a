"""Programs run on every rank of a pool by test_reliability.py, and helpers for its scripts.

Each program takes a plain-data ``spec`` and returns plain data (messages,
timings, parameters) for the test to check in the pytest process.
"""

from __future__ import annotations

import time

import numpy as np

import minigrad as mg
import minigrad_dist as dist
from minigrad import nn, serialization
from minigrad.nn import functional as F
from tests.dist.programs_common import ensure_init

# -- a small model whose training draws random numbers (dropout, noise) ------------------


class DropoutMLP(nn.Module):
    """4 -> 16 -> 3 with dropout: the random generator state matters for exact resume."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 16)
        self.drop = nn.Dropout(0.3)
        self.fc2 = nn.Linear(16, 3)

    def forward(self, x):
        return self.fc2(self.drop(self.fc1(x).tanh()))


DATASET_SIZE = 24
BATCH = 4


def dataset():
    """A fixed classification data set of DATASET_SIZE samples."""
    rng = np.random.default_rng(42)
    return rng.standard_normal((DATASET_SIZE, 4)), rng.integers(0, 3, size=DATASET_SIZE)


def build_training(model_seed: int, rank: int):
    """Model, DDP wrapper, Adam optimizer and DistributedSampler; seeds the per-rank generators."""
    mg.manual_seed(model_seed)
    model = DropoutMLP().double()
    ddp = dist.DistributedDataParallel(model)
    opt = mg.optim.Adam(ddp.parameters(), lr=0.05)
    sampler = dist.DistributedSampler(DATASET_SIZE, shuffle=True, seed=7)
    mg.manual_seed(100 + rank)  # different dropout masks on each rank
    np.random.seed(200 + rank)  # the noise added to the inputs (NumPy's global generator)
    return model, ddp, opt, sampler


def train_steps(ddp, opt, sampler, start: int, stop: int, data, on_step=None):
    """Steps ``start`` to ``stop - 1``; each step takes its batch from the sampler's epoch order."""
    x, y = data
    steps_per_epoch = len(sampler) // BATCH
    for step in range(start, stop):
        epoch, i = divmod(step, steps_per_epoch)
        sampler.set_epoch(epoch)
        idx = sampler.indices()[i * BATCH : (i + 1) * BATCH]
        noisy = x[idx] + 0.01 * np.random.standard_normal((len(idx), 4))
        opt.zero_grad()
        F.cross_entropy(ddp(mg.tensor(noisy)), mg.tensor(y[idx])).backward()
        opt.step()
        if on_step is not None:
            on_step(step)


def params_of(model) -> dict:
    return {n: p.array.copy() for n, p in model.named_parameters()}


# -- checkpoint and resume ------------------------------------------------------------------


def resume_equals_uninterrupted(spec):
    """Train ``total`` steps straight; train ``stop_at`` steps, save, resume in fresh objects, finish.

    Returns this rank's final parameters of both runs, and the loaded step and extra.
    """
    rank, world = ensure_init()
    data = dataset()
    model, ddp, opt, sampler = build_training(0, rank)
    train_steps(ddp, opt, sampler, 0, spec["total"], data)
    straight = params_of(model)

    model, ddp, opt, sampler = build_training(0, rank)
    train_steps(ddp, opt, sampler, 0, spec["stop_at"], data)
    dist.save_checkpoint(spec["path"], ddp, opt, sampler, step=spec["stop_at"], extra={"note": "mid-epoch"})

    # A fresh process would start from other weights, an empty optimizer and other generator states.
    mg.manual_seed(999)
    np.random.seed(999)
    model2, ddp2, opt2, sampler2 = build_training(1, rank + 50)
    loaded = dist.load_checkpoint(spec["path"], ddp2, opt2, sampler2)
    epoch_after_load = sampler2.epoch
    train_steps(ddp2, opt2, sampler2, loaded.step, spec["total"], data)

    # The same resume without the generator states: shows that they matter here.
    model3, ddp3, opt3, sampler3 = build_training(1, rank + 60)
    dist.load_checkpoint(spec["path"], ddp3, opt3, sampler3, restore_rng=False)
    train_steps(ddp3, opt3, sampler3, loaded.step, spec["total"], data)
    return {"straight": straight, "resumed": params_of(model2), "resumed_without_rng": params_of(model3),
            "step": loaded.step, "extra": loaded.extra, "epoch_after_load": epoch_after_load}


def save_fails_midway(spec):
    """A good checkpoint, then a save whose write fails on the first rank: errors and what loads after."""
    rank, world = ensure_init()
    model, ddp, opt, sampler = build_training(0, rank)
    dist.save_checkpoint(spec["path"], ddp, opt, sampler, step=1, extra={"marker": "good"})
    good = params_of(model)
    train_steps(ddp, opt, sampler, 0, 1, dataset())

    original = serialization._write_array
    written = []

    def failing_write(archive, entry, array):
        if written:
            raise OSError(28, "No space left on device (injected)")
        written.append(entry)
        original(archive, entry, array)

    serialization._write_array = failing_write
    try:
        dist.save_checkpoint(spec["path"], ddp, opt, sampler, step=2, extra={"marker": "bad"})
        error = None
    except (OSError, RuntimeError) as exc:
        error = f"{type(exc).__name__}: {exc}"
    finally:
        serialization._write_array = original

    fresh, fresh_ddp, fresh_opt, fresh_sampler = build_training(3, rank)
    loaded = dist.load_checkpoint(spec["path"], fresh_ddp, fresh_opt, fresh_sampler)
    same = all(np.array_equal(fresh_p, good[n]) for n, fresh_p in params_of(fresh).items())
    return {"error": error, "step": loaded.step, "extra": loaded.extra, "params_equal_good": same}


def load_refused(spec):
    """load_checkpoint of an unsafe or foreign file: the error each rank raises."""
    ensure_init()
    model, ddp, opt, sampler = build_training(0, dist.get_rank())
    try:
        dist.load_checkpoint(spec["path"], ddp, opt, sampler)
    except (ValueError, RuntimeError) as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


# -- timeouts -------------------------------------------------------------------------------


def _call(op: str, rank: int, world: int):
    if op == "all_reduce":
        dist.all_reduce(np.ones(3, dtype=np.float32))
    elif op == "broadcast":
        dist.broadcast(np.ones(3), src=0)
    elif op == "barrier":
        dist.barrier()
    elif op == "all_gather":
        dist.all_gather([np.zeros(2) for _ in range(world)], np.full(2, float(rank)))
    else:
        raise ValueError(f"unknown op {op!r}")


def skipped_collective(spec):
    """Rank ``late`` reaches ``op`` only after the others' timeout: they raise TimeoutError.

    The late rank then calls it, which completes the requests the others
    abandoned, and a final barrier shows the group is still consistent.
    Returns, per rank, the error message (or None) and the seconds waited.
    """
    if dist.is_initialized():
        dist.destroy_process_group()
    dist.init_process_group(timeout=spec["timeout"])
    rank, world = dist.get_rank(), dist.get_world_size()
    try:
        start = time.monotonic()
        message = None
        if rank == spec["late"]:
            time.sleep(spec["timeout"] + 0.5)
            _call(spec["op"], rank, world)
        else:
            try:
                _call(spec["op"], rank, world)
            except TimeoutError as exc:
                message = str(exc)
        waited = time.monotonic() - start
        # Untimed: the late rank may still be on its way (it completes the abandoned requests).
        dist.get_default_group().barrier(async_op=True).wait(30)
        return {"message": message, "waited": waited}
    finally:
        dist.destroy_process_group()


# -- debug mode -----------------------------------------------------------------------------


def _mismatched_call(case: str, rank: int):
    if case == "shape":
        dist.all_reduce(np.ones(3 + rank, dtype=np.float32))
    elif case == "dtype":
        dist.all_reduce(np.ones(3, dtype=np.float32 if rank == 0 else np.float64))
    elif case == "operation":
        if rank == 0:
            dist.broadcast(np.ones(3, dtype=np.float32), src=0)
        else:
            dist.all_reduce(np.ones(3, dtype=np.float32))
    elif case == "root":
        dist.broadcast(np.ones(2), src=min(rank, 1))
    elif case == "reduce_op":
        dist.all_reduce(np.ones(2), op=dist.ReduceOp.SUM if rank == 0 else dist.ReduceOp.MAX)
    elif case == "matching":
        dist.all_reduce(np.ones(3, dtype=np.float32))
        dist.broadcast(np.ones(2), src=0)
        dist.all_gather([np.zeros(2) for _ in range(dist.get_world_size())], np.ones(2))
        dist.barrier()
    else:
        raise ValueError(f"unknown case {case!r}")


def debug_mismatch(spec):
    """In DETAIL mode, ranks make the ``case`` mismatch; returns each rank's error (None if none)."""
    rank, world = ensure_init()
    dist.set_debug_level("detail")
    try:
        _mismatched_call(spec["case"], rank)
    except RuntimeError as exc:
        return str(exc)
    finally:
        dist.set_debug_level(dist.DebugLevel.OFF)
    return None


def debug_ddp(spec):
    """DDP training in DETAIL mode: matched ranks train as without it; a stray collective is caught.

    With ``stray``, rank 0 all-reduces its loss before backward while the
    other ranks go straight to backward, whose first bucket allreduce meets
    rank 0's stray all_reduce in the check.
    """
    rank, world = ensure_init()
    data = dataset()
    model, ddp, opt, sampler = build_training(0, rank)
    train_steps(ddp, opt, sampler, 0, 2, data)
    plain = params_of(model)
    dist.set_debug_level("detail")
    try:
        model, ddp, opt, sampler = build_training(0, rank)
        train_steps(ddp, opt, sampler, 0, 2, data)
        checked = params_of(model)
        error = None
        if spec["stray"]:
            try:
                loss = ddp(mg.tensor(data[0][:BATCH])).sum()
                if rank == 0:
                    dist.all_reduce(mg.tensor(np.array([loss.item()])))
                loss.backward()
            except RuntimeError as exc:
                error = str(exc)
            dist.destroy_process_group()  # the DDP model and the group are unusable now
    finally:
        dist.set_debug_level(dist.DebugLevel.OFF)
    same = all(np.array_equal(plain[n], checked[n]) for n in plain)
    return {"same_as_without_debug": same, "error": error}
