"""Programs run on every rank of a pool by test_collectives.py."""

from __future__ import annotations

import numpy as np

import minigrad as mg
import minigrad_dist as dist


def ensure_init():
    """Initialize the default process group once per pool process."""
    if not dist.is_initialized():
        dist.init_process_group(backend="mpi")
    return dist.get_rank(), dist.get_world_size()


def every_collective():
    """Each collective once, checked against its definition; returns the rank."""
    r, n = ensure_init()
    t = mg.ones(3) * (r + 1)
    dist.all_reduce(t)
    assert np.allclose(t.array, n * (n + 1) / 2)
    t = mg.ones(3, dtype=mg.float64) * (r + 1)
    dist.all_reduce(t, op=dist.ReduceOp.AVG)
    assert np.allclose(t.array, (n + 1) / 2)
    expectations = [(dist.ReduceOp.MAX, n), (dist.ReduceOp.MIN, 1), (dist.ReduceOp.PRODUCT, np.prod(range(1, n + 1)))]
    for op, expected in expectations:
        t = np.full(2, float(r + 1))
        dist.all_reduce(t, op=op)
        assert np.allclose(t, expected), (op, t)
    t = mg.ones(2) * r
    dist.broadcast(t, src=n - 1)
    assert np.allclose(t.array, n - 1)
    outs = [mg.zeros(2) for _ in range(n)]
    dist.all_gather(outs, mg.ones(2) * r)
    assert [o.array[0] for o in outs] == list(range(n))
    out = mg.zeros(2)
    dist.reduce_scatter(out, [mg.ones(2) * i for i in range(n)])
    assert np.allclose(out.array, r * n)
    t = mg.ones(2) * (r + 1)
    dist.reduce(t, dst=0)
    assert r != 0 or np.allclose(t.array, n * (n + 1) / 2)
    gathered = [mg.zeros(2) for _ in range(n)] if r == 0 else None
    dist.gather(mg.ones(2) * r, gathered, dst=0)
    assert r != 0 or [g.array[0] for g in gathered] == list(range(n))
    t = mg.zeros(2)
    dist.scatter(t, [mg.ones(2) * i for i in range(n)] if r == 0 else None, src=0)
    assert np.allclose(t.array, r)
    work = dist.all_reduce(mg.ones(1000), async_op=True)
    work.wait()
    assert work.is_completed()
    objs = [None] * n
    dist.all_gather_object(objs, {"rank": r})
    assert objs == [{"rank": i} for i in range(n)]
    lst = [r, "payload"]
    dist.broadcast_object_list(lst, src=0)
    assert lst == [0, "payload"]
    dist.barrier()
    return r


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


def bad_arguments():
    """Wrong inputs raise clear errors before any communication."""
    ensure_init()
    n = dist.get_world_size()
    messages = []
    for call in [
        lambda: dist.all_reduce([1.0, 2.0]),
        lambda: dist.broadcast(np.ones(2), src=n),
        lambda: dist.all_reduce(np.ones(2), op="sum"),
        lambda: dist.all_gather([np.ones(2)] * (n + 1), np.ones(2)),
        lambda: dist.all_gather([np.ones(3)] * n, np.ones(2)),
        lambda: dist.all_reduce(np.ones((4, 4))[:, 0]),
        lambda: dist.all_reduce(np.ones(2, dtype=np.int64), op=dist.ReduceOp.AVG),
    ]:
        try:
            call()
        except (TypeError, ValueError) as error:
            messages.append(str(error))
        else:
            messages.append(None)
    return messages
