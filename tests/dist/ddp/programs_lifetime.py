"""Programs run on every rank by test_lifetime.py: DDP models built and dropped without ``close()``."""

from __future__ import annotations

import gc
import time

import numpy as np

import minigrad as mg
import minigrad_dist as dist
from minigrad import nn
from minigrad_dist import resources
from tests.dist.programs_common import ensure_init


def _hook_count(model) -> int:
    return sum(len(p._post_accumulate_hooks or ()) for p in model.parameters())


def _train_step(model, ddp, rank: int):
    """One forward-backward through ``ddp`` on rank-dependent data; the averaged gradient of the weight."""
    x = mg.tensor(np.arange(4.0).reshape(2, 2) + rank)
    for p in model.parameters():
        p.grad = None
    ddp(x).sum().backward()
    return model.weight.grad.numpy().copy()


def constructions_dropped(spec):
    """Build ``spec["n"]`` DDP models of one tiny model, dropping each without ``close()``.

    Returns the largest number of DDP models whose resources were not freed
    yet (live or pending) seen during the loop, the hooks left on the model
    at the end, whether the last model still averages gradients, and the time.
    """
    rank, world = ensure_init()
    mg.manual_seed(0)
    model = nn.Linear(2, 2).double()
    group = dist.DistributedDataParallel(model).process_group
    gc.collect()
    start = time.perf_counter()
    most_alive = 0
    for _ in range(spec["n"]):
        # Rebinding drops the previous model (refcount): its finalizer unhooks it and queues its release.
        ddp = dist.DistributedDataParallel(model)
        most_alive = max(most_alive, resources.live_count(group))
    elapsed = time.perf_counter() - start
    grad = _train_step(model, ddp, rank)
    hooks = _hook_count(model)
    ddp.close()
    gc.collect()
    dist.DistributedDataParallel(model).close()  # frees whatever earlier models left pending on every rank
    # d(sum(x W^T + b))/dW has every row equal to x summed over the batch; DDP averages it over the ranks.
    expected = np.mean([np.tile((np.arange(4.0).reshape(2, 2) + r).sum(axis=0), (2, 1)) for r in range(world)], axis=0)
    return {
        "most_alive": most_alive,
        "hooks_on_last": hooks,
        "left_alive": resources.live_count(group),
        "grad": grad,
        "expected": expected,
        "seconds": elapsed,
    }


def hierarchical_constructions_dropped(spec):
    """``constructions_dropped`` on a pool whose ranks span simulated nodes: the models use two levels.

    Also reports the strategy's class, so the test knows the hierarchical
    path (node windows and cross-node communicators) was the one dropped.
    """
    ensure_init()
    mg.manual_seed(0)
    probe = dist.DistributedDataParallel(nn.Linear(2, 2).double())
    strategy = type(probe.reducer.strategy).__name__
    del probe
    out = constructions_dropped(spec)
    out["strategy"] = strategy
    return out


def drops_at_different_times(spec):
    """Rank 0 keeps the first ``spec["held"]`` models alive for ``spec["later"]`` more constructions; others drop them.

    The other ranks then hold those models' releases pending (they cannot
    free alone: freeing is collective) until rank 0 drops its references;
    the next construction after that frees them on every rank, in creation
    order. Returns, per phase, the pending and live counts.
    """
    rank, _ = ensure_init()
    model = nn.Linear(2, 2).double()
    group = dist.get_default_group()
    dist.DistributedDataParallel(model).close()  # frees what earlier programs on this pool left pending
    held = [dist.DistributedDataParallel(model) for _ in range(spec["held"])]
    if rank != 0:
        held.clear()
    phases = {}
    for _ in range(spec["later"]):
        dist.DistributedDataParallel(model)
    phases["while_held"] = (resources.pending_count(group), resources.live_count(group))
    held.clear()
    dist.DistributedDataParallel(model).close()
    phases["after_release"] = (resources.pending_count(group), resources.live_count(group))
    return phases


def constructions_in_reference_cycles(spec):
    """``spec["n"]`` DDP models each in a reference cycle, dropped with the automatic collector off.

    Only the cyclic collector finalizes them; ``resources.begin`` runs it once
    too many are alive. Returns the most models alive at once and those left.
    """
    ensure_init()
    model = nn.Linear(2, 2).double()
    group = dist.get_default_group()
    dist.DistributedDataParallel(model).close()
    gc.disable()
    try:
        most_alive = 0
        for _ in range(spec["n"]):
            ddp = dist.DistributedDataParallel(model)
            ddp.cycle = [ddp]  # reachable from itself: freed by the cyclic collector only
            most_alive = max(most_alive, resources.live_count(group))
        del ddp
    finally:
        gc.enable()
    gc.collect()
    dist.DistributedDataParallel(model).close()
    return {"most_alive": most_alive, "left_alive": resources.live_count(group)}


def zero_overlapped_constructions_dropped(spec):
    """``spec["n"]`` DDP models with ZeRO's overlapped step hook (its own all-gather group), each dropped.

    ZeRO-1 (``shard_gradients`` False) or ZeRO-2 by ``spec["zero2"]``. The
    hook's strategy holds the all-gather communicator; the DDP model's
    release frees it with the rest. Returns the most models alive at once.
    """
    from minigrad_dist.algorithms.ddp_comm_hooks import allreduce_hook
    from minigrad_dist.algorithms.ddp_zero_hook import hook_with_zero_step
    from minigrad_dist.optim import ZeroRedundancyOptimizer

    ensure_init()
    mg.manual_seed(0)
    model = nn.Linear(2, 2).double()
    group = dist.get_default_group()
    dist.DistributedDataParallel(model).close()
    most_alive = 0
    for _ in range(spec["n"]):
        ddp = dist.DistributedDataParallel(model)
        zero = ZeroRedundancyOptimizer(ddp.parameters(), mg.optim.SGD, overlap_with_ddp=True, lr=0.1)
        ddp.register_comm_hook(None, hook_with_zero_step(allreduce_hook, ddp, zero, shard_gradients=spec["zero2"]))
        most_alive = max(most_alive, resources.live_count(group))
    del ddp, zero
    gc.collect()
    dist.DistributedDataParallel(model).close()
    return {"most_alive": most_alive, "left_alive": resources.live_count(group)}


def init_destroy_rounds(spec):
    """``spec["n"]`` rounds of init_process_group, one DDP model dropped, destroy_process_group.

    Each dropped model's release is pending when the group is destroyed;
    ``destroy_process_group`` frees it (``resources.finish``). Also checks,
    through a Reducer kept aside, that the release really ran.
    """
    ensure_init()
    model = nn.Linear(2, 2).double()
    for _ in range(spec["n"]):
        dist.destroy_process_group()
        dist.init_process_group(backend="mpi")
        dist.DistributedDataParallel(model)  # dropped at once: its release waits for the group's destruction
    reducer = dist.DistributedDataParallel(model).reducer  # the model is dropped, its Reducer kept to look at
    control_before = reducer.control is not None
    dist.destroy_process_group()
    dist.init_process_group(backend="mpi")
    return {"control_before": control_before, "control_after": reducer.control is not None, "hooks": _hook_count(model)}


def destroy_alone_then_late(spec):
    """Rank 0 destroys the group while rank 1 is still busy: both give up freeing (warn), neither hangs.

    ``resources.FINISH_TIMEOUT`` is lowered to ``spec["timeout"]`` for the
    case; rank 1 reaches ``destroy_process_group`` ``spec["late"]`` seconds
    later. Afterwards both re-initialize and a DDP model averages again.
    """
    import warnings

    rank, world = ensure_init()
    model = nn.Linear(2, 2).double()
    dist.DistributedDataParallel(model)  # dropped: pending when the group is destroyed
    saved = resources.FINISH_TIMEOUT
    resources.FINISH_TIMEOUT = spec["timeout"]
    try:
        if rank != 0:
            time.sleep(spec["late"])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            start = time.perf_counter()
            dist.destroy_process_group()
            seconds = time.perf_counter() - start
    finally:
        resources.FINISH_TIMEOUT = saved
    dist.init_process_group(backend="mpi")
    ddp = dist.DistributedDataParallel(model)
    grad = _train_step(model, ddp, rank)
    ddp.close()
    return {"warned": any(issubclass(w.category, ResourceWarning) for w in caught), "seconds": seconds, "grad": grad}
