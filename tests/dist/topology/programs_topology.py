"""Programs run on every rank by test_topology.py, on pools whose MPI simulates several nodes."""

from __future__ import annotations

import numpy as np

import minigrad as mg
import minigrad_dist as dist
from minigrad import nn
from minigrad_dist.ddp.bucket import Bucket
from minigrad_dist.ddp.reduction_strategies import HierarchicalStrategy
from minigrad_dist.ddp.shared_memory import node_hierarchy
from minigrad_dist.testing.oracles import environment
from tests.dist.programs_common import ensure_init, message_of, polite_barrier

_OPS = {
    "sum": dist.ReduceOp.SUM,
    "avg": dist.ReduceOp.AVG,
    "max": dist.ReduceOp.MAX,
    "min": dist.ReduceOp.MIN,
    "product": dist.ReduceOp.PRODUCT,
}


def describe_topology(spec):
    """What this rank knows of where it sits, in the world and in the subgroup ``spec["subgroup"]``."""
    ensure_init()
    world = dist.get_topology()
    result = {
        "node_of": world.node_of,
        "local_rank_of": world.local_rank_of,
        "node_id": world.node_id,
        "local_rank": dist.get_local_rank(),
        "local_world_size": dist.get_local_world_size(),
        "num_nodes": world.num_nodes,
        "leaders": world.leaders,
        "two_level": dist.get_default_group().two_level is not None,
    }
    group = dist.new_group(spec["subgroup"])
    if group is not dist.NON_GROUP_MEMBER:
        sub = dist.get_topology(group)
        result["subgroup"] = {
            "node_of": sub.node_of,
            "local_rank_of": sub.local_rank_of,
            "two_level": group.two_level is not None,
        }
        dist.destroy_process_group(group)
    return result


def strategy_chosen(spec):
    """The name of the reduction strategy DDP picks under the environment ``spec["env"]``."""
    ensure_init()
    with environment(spec["env"]):
        ddp = dist.DistributedDataParallel(nn.Linear(3, 2).double())
    name = type(ddp.reducer.strategy).__name__
    ddp.close()
    return name


def progress_completes_without_waiting(spec):
    """Two buckets launched through ``HierarchicalStrategy``, then only ``progress()`` calls between barriers.

    Each step of the protocol needs the other ranks to have taken the
    previous one, and a barrier between progress calls guarantees that, so
    the buckets complete within a few rounds without anyone waiting on them.
    Returns, per round, whether each bucket's Future is done, and the values.
    """
    rank, world = ensure_init()
    group = dist.get_default_group()
    params = [mg.zeros(3, dtype=mg.float64), mg.zeros(5, dtype=mg.float64)]
    buckets = [Bucket(0, params[:1], [0]), Bucket(1, params[1:], [1])]
    strategy = HierarchicalStrategy(group, node_hierarchy(group.comm, True, True, group.topology), 30.0)
    strategy.use_buckets(buckets)
    for bucket in buckets:
        strategy.copy_gradient(bucket, 0, np.full(bucket.params[0].shape, float(rank + 1)))
        bucket.future = strategy.launch(bucket)
    rounds = []
    for _ in range(spec["rounds"]):
        polite_barrier()
        strategy.progress(buckets)
        rounds.append([bucket.future.done() for bucket in buckets])
    values = [bucket.future.value().copy() if bucket.future.done() else None for bucket in buckets]
    for bucket in buckets:
        bucket.future.wait(30.0)  # a failed check must not leave ranks behind in the protocol
    strategy.close()
    return {"rounds": rounds, "values": values}


def bad_setting_is_refused(spec):
    """The error (type, message) of building DDP, then a group, with ``MINIGRAD_DIST_HIERARCHICAL=spec["value"]``."""
    ensure_init()
    with environment({"MINIGRAD_DIST_HIERARCHICAL": spec["value"]}):
        return [message_of(lambda: dist.DistributedDataParallel(nn.Linear(3, 2))), message_of(dist.new_group)]


def all_reduce_two_levels_vs_flat(spec):
    """Each case of ``spec["cases"]`` reduced by a two-level group and by a flat one, on ``spec["ranks"]``.

    Cases run in order (a larger buffer after a smaller one regrows the
    window); with ``spec["async"]`` they are all started before any is
    waited for. Returns per case the two results, or None off the group.
    """
    rank, _ = ensure_init()
    with environment({"MINIGRAD_DIST_HIERARCHICAL": "1"}):
        two_level = dist.new_group(spec["ranks"])
    with environment({"MINIGRAD_DIST_HIERARCHICAL": "0"}):
        flat = dist.new_group(spec["ranks"])
    if two_level is dist.NON_GROUP_MEMBER:
        return None
    assert two_level.two_level is not None and flat.two_level is None
    member = two_level.rank()
    arrays = []
    for case in spec["cases"]:
        rng = np.random.default_rng(case["seed"] + member)
        values = rng.standard_normal(case["size"]) * 4
        values = values.astype(case["dtype"])
        arrays.append((values.copy(), values.copy()))
    works = []
    for case, (mine, theirs) in zip(spec["cases"], arrays):
        op = _OPS[case["op"]]
        works.append(dist.all_reduce(mine, op=op, group=two_level, async_op=spec["async"]))
        dist.all_reduce(theirs, op=op, group=flat)
    for work in works:
        if work is not None:
            work.wait(60.0)
    dist.destroy_process_group(two_level)
    dist.destroy_process_group(flat)
    return [{"two_level": a, "flat": b} for a, b in arrays]


def all_reduce_waits_time_out(spec):
    """Every rank but the last starts a two-level all_reduce and waits ``spec["timeout"]`` s; the last comes later.

    Returns the TimeoutError message (None on the last rank) and the
    results once the last rank joined: the group recovers.
    """
    rank, world = ensure_init()
    with environment({"MINIGRAD_DIST_HIERARCHICAL": "1"}):
        group = dist.new_group()
    values = np.full(spec["size"], float(rank + 1))
    message = None
    if rank != world - 1:
        work = dist.all_reduce(values, group=group, async_op=True)
        try:
            work.wait(spec["timeout"])
        except TimeoutError as error:
            message = str(error)
        dist.barrier()  # tells the last rank that the others timed out
        work.wait(60.0)
    else:
        dist.barrier()
        dist.all_reduce(values, group=group)
    dist.destroy_process_group(group)
    return {"message": message, "total": float(values[0])}


def ddp_on_unequal_nodes(spec):
    """DDP over ranks 0, 1, 2 (nodes of 2 and 1 ranks under cliques), one bucket per parameter, three steps.

    Rank r feeds one row of ``r + 1``: the averaged weight gradient of
    ``out.sum()`` is 2 everywhere, the bias gradient 1. Returns the strategy
    and each step's gradients (None off the group).
    """
    rank, _ = ensure_init()
    group = dist.new_group([0, 1, 2])
    if group is dist.NON_GROUP_MEMBER:
        return None
    model = nn.Linear(3, 2).double()
    ddp = dist.DistributedDataParallel(model, process_group=group, bucket_cap_mb=1e-6, first_bucket_cap_mb=1e-6)
    grads = []
    for _ in range(3):
        model.zero_grad()
        ddp(mg.tensor(np.ones((1, 3)) * (rank + 1))).sum().backward()
        grads.append((model.weight.grad.array.copy(), model.bias.grad.array.copy()))
    result = {"strategy": type(ddp.reducer.strategy).__name__, "buckets": len(ddp.reducer.buckets), "grads": grads}
    ddp.close()
    dist.destroy_process_group(group)
    return result
