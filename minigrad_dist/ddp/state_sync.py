"""Keeping replicas equal: checking that ranks hold the same parameters, and coalesced broadcasts."""

from __future__ import annotations

from minigrad import backend
from minigrad_dist.process_group import ProcessGroup


def verify_same_parameters(group: ProcessGroup, module) -> None:
    """Raise on every rank if the ranks' parameter lists differ (count, names, shapes, dtypes)."""
    signature = [(name, tuple(p.shape), str(p.dtype)) for name, p in module.named_parameters()]
    everyone = group.allgather_obj(signature)
    reference = everyone[0]
    for rank, other in enumerate(everyone[1:], start=1):
        if len(other) != len(reference):
            raise RuntimeError(
                "DistributedDataParallel: ranks hold different models: rank 0 has "
                f"{len(reference)} parameters, rank {rank} has {len(other)}. Build the same model on every rank."
            )
        for i, (mine, theirs) in enumerate(zip(reference, other)):
            if mine != theirs:
                raise RuntimeError(
                    f"DistributedDataParallel: ranks hold different models: parameter {i} is "
                    f"{mine[0]!r} {mine[1]} {mine[2]} on rank 0 but {theirs[0]!r} {theirs[1]} {theirs[2]} "
                    f"on rank {rank}. Build the same model on every rank."
                )


def broadcast_coalesced(group: ProcessGroup, arrays, src: int = 0, timeout=None) -> None:
    """Broadcast ``arrays`` from group rank ``src``: one flat message per dtype and device."""
    by_kind = {}
    for a in arrays:
        by_kind.setdefault((a.dtype, backend.device_of(a)), []).append(a)
    for (dtype, device), members in by_kind.items():
        xp = backend.module_for_device(device)
        with backend.device_context(device):
            flat = xp.concatenate([m.reshape(-1) for m in members]) if members else xp.empty(0, dtype)
        work = group.broadcast(flat, src, async_op=timeout is not None)
        if timeout is not None:
            work.wait(timeout)
        start = 0
        for m in members:
            m[...] = flat[start : start + m.size].reshape(m.shape)
            start += m.size
