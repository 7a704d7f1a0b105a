"""Programs run on every rank of a pool by test_process_group.py: subgroups, round-robin groups, init checks."""

from __future__ import annotations

import os

import numpy as np

import minigrad as mg
import minigrad_dist as dist
from tests.dist.programs_common import ensure_init, message_of

# -- groups -------------------------------------------------------------------------------------------


def subgroup_collectives():
    """new_group of the even ranks: members reduce among themselves, others get NON_GROUP_MEMBER."""
    r, n = ensure_init()
    evens = list(range(0, n, 2))
    group = dist.new_group(evens)
    if r % 2:
        assert group is dist.NON_GROUP_MEMBER
        return None
    t = np.array([float(r)])
    dist.all_reduce(t, group=group)
    b = np.array([float(r)])
    dist.broadcast(b, src=evens[-1], group=group)
    dist.destroy_process_group(group)
    return float(t[0]), float(b[0])


def round_robin_allreduce():
    """A round-robin group spreads consecutive allreduces over its channels."""
    r, n = ensure_init()
    group = dist.RoundRobinProcessGroup(dist.get_default_group().comm, num_channels=3)
    works = [group.allreduce(np.full(4, float(i + r)), async_op=True) for i in range(6)]
    values = [w.result()[0][0] for w in works]
    group.destroy()
    return values


# -- init_process_group's checks -----------------------------------------------------------


def _reinit(**kwargs):
    if dist.is_initialized():
        dist.destroy_process_group()
    return message_of(lambda: dist.init_process_group(**kwargs))


def init_checks():
    """rank/world_size/RANK checks (every rank raises together), backend names, get_backend; restores the group."""
    r, n = ensure_init()
    out = {}
    out["rank_wrong_on_last"] = _reinit(backend="gloo", rank=(r + 1) % n if r == n - 1 else r, world_size=n)
    out["world_size_wrong"] = _reinit(backend="gloo", world_size=n + 1)
    os.environ["RANK"] = str(r + 1)
    try:
        out["env_rank_wrong"] = _reinit(backend="mpi")
    finally:
        del os.environ["RANK"]
    out["unknown_backend"] = _reinit(backend="smoke-signals")
    out["bad_init_method"] = _reinit(backend="gloo", init_method="carrier-pigeon://x")
    out["rank_not_int"] = _reinit(rank="0")
    out["nccl_without_gpu"] = _reinit(backend="nccl") if not mg.backend.cuda_is_available() else None
    os.environ["RANK"], os.environ["WORLD_SIZE"] = str(r), str(n)
    try:
        out["ok_gloo"] = _reinit(backend="GLOO", init_method="env://", rank=r, world_size=n)
    finally:
        del os.environ["RANK"], os.environ["WORLD_SIZE"]
    out["gloo_backend"] = str(dist.get_backend())
    t = np.ones(1)
    dist.all_reduce(t)
    out["gloo_allreduce"] = float(t[0])
    out["ok_pair"] = _reinit(backend="cpu:gloo,cuda:nccl", init_method="tcp://127.0.0.1:29500")
    out["pair_backend"] = dist.get_backend()
    _reinit()
    out["default_backend"] = dist.get_backend()
    out["reduce_op_alias"] = dist.reduce_op.SUM is dist.ReduceOp.SUM
    return out
