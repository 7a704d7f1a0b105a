"""Programs run on every rank of a pool by test_collectives.py: one per collective, and argument checks."""

from __future__ import annotations

import numpy as np

import minigrad as mg
import minigrad_dist as dist
from tests.dist.programs_common import ensure_init

# -- one program per collective: each checks it against its definition and returns the rank ---------------


def check_all_reduce():
    """all_reduce with SUM (the default), AVG, MAX, MIN and PRODUCT."""
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
    return r


def check_all_reduce_async():
    """all_reduce with ``async_op=True``: the Work completes."""
    r, n = ensure_init()
    work = dist.all_reduce(mg.ones(1000), async_op=True)
    work.wait()
    assert work.is_completed()
    return r


def check_broadcast():
    r, n = ensure_init()
    t = mg.ones(2) * r
    dist.broadcast(t, src=n - 1)
    assert np.allclose(t.array, n - 1)
    return r


def check_all_gather():
    r, n = ensure_init()
    outs = [mg.zeros(2) for _ in range(n)]
    dist.all_gather(outs, mg.ones(2) * r)
    assert [o.array[0] for o in outs] == list(range(n))
    return r


def check_reduce_scatter():
    r, n = ensure_init()
    out = mg.zeros(2)
    dist.reduce_scatter(out, [mg.ones(2) * i for i in range(n)])
    assert np.allclose(out.array, r * n)
    return r


def check_async_collectives_keep_their_buffers():
    """A nonblocking collective's Work holds the memory MPI reads and writes until it completes.

    MPI requires the buffers to stay valid until the request completes;
    mpi4py keeps them alive for some calls but not for the stacked send
    buffer that ``reduce_scatter`` makes, which nothing else refers to.
    (MPICH happens to copy that buffer when the call is posted, so a freed
    buffer would not show as wrong numbers here: the test checks the holding.)
    """
    import gc
    import time
    import weakref

    r, n = ensure_init()
    if r == n - 1:
        time.sleep(0.2)  # the others post first and must keep their buffers until this rank joins
    group = dist.get_default_group()
    out = np.zeros(4)
    work = group.reduce_scatter(out, [np.full(4, float(i + 1)) for i in range(n)], async_op=True)
    held = [weakref.ref(buffer) for buffer in work._buffers if buffer is not None]
    gc.collect()
    assert held and all(ref() is not None for ref in held), "the stacked send buffer was freed before completion"
    work.wait()
    assert work._buffers is None
    assert np.all(out == n * (r + 1))
    return r


def check_reduce():
    r, n = ensure_init()
    t = mg.ones(2) * (r + 1)
    dist.reduce(t, dst=0)
    assert r != 0 or np.allclose(t.array, n * (n + 1) / 2)
    return r


def check_gather():
    r, n = ensure_init()
    gathered = [mg.zeros(2) for _ in range(n)] if r == 0 else None
    dist.gather(mg.ones(2) * r, gathered, dst=0)
    assert r != 0 or [g.array[0] for g in gathered] == list(range(n))
    return r


def check_scatter():
    r, n = ensure_init()
    t = mg.zeros(2)
    dist.scatter(t, [mg.ones(2) * i for i in range(n)] if r == 0 else None, src=0)
    assert np.allclose(t.array, r)
    return r


def check_all_gather_object():
    r, n = ensure_init()
    objs = [None] * n
    dist.all_gather_object(objs, {"rank": r})
    assert objs == [{"rank": i} for i in range(n)]
    return r


def check_broadcast_object_list():
    r, n = ensure_init()
    lst = [r, "payload"]
    dist.broadcast_object_list(lst, src=0)
    assert lst == [0, "payload"]
    return r


def check_barrier():
    r, n = ensure_init()
    dist.barrier()
    return r


# -- argument checks ------------------------------------------------------------------------------------


def bad_arguments():
    """Wrong inputs raise clear errors before any communication: ``"Class: message"`` per call."""
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
        except (TypeError, ValueError, RuntimeError) as error:
            messages.append(f"{type(error).__name__}: {error}")
        else:
            messages.append(None)
    return messages


def rooted_mismatch(case):
    """A gather or scatter whose tensors (``case`` "shape") or root list ("list") do not fit: every rank's error."""
    r, n = ensure_init()
    fn = case["fn"]
    size = 3 if case["problem"] == "shape" and r == n - 1 else 2
    tensor = mg.zeros(size)
    tensors = [mg.zeros(2) for _ in range(n - (case["problem"] == "list"))] if r == 0 else None
    try:
        if fn == "gather":
            dist.gather(tensor, tensors, dst=0)
        else:
            dist.scatter(tensor, tensors, src=0)
    except (ValueError, RuntimeError) as error:
        return f"{type(error).__name__}: {error}"
    return None
