"""Programs run on every rank of a pool by test_rpc.py: RPC calls, futures, graceful shutdown, RRefs.

Each program starts RPC, works, and shuts RPC down (graceful shutdown is
collective, so every rank takes part even when only rank 0 calls).
"""

from __future__ import annotations

import gc
import time

import numpy as np

import minigrad as mg
import minigrad_dist.rpc as rpc
from minigrad_dist.rpc import rref as rref_module
from tests.dist.programs_common import start_rpc

# -- functions called remotely --------------------------------------------------------------------


def add(a, b):
    return a + b


def mul(a, b):
    return a * b


def scaled_sum(values, scale=1.0):
    return sum(values) * scale


def fail(message):
    raise KeyError(message)


def sleep_then(seconds, value):
    time.sleep(seconds)
    return value


def random_tensor():
    return mg.rand(3, 3, requires_grad=True)


def big_array(n):
    return np.arange(n, dtype=np.float64)


def echo(x):
    return x


def owned_count():
    gc.collect()
    return rref_module.owned_count()


class Counter:
    """A stateful object living on an owner (for RRef proxies)."""

    def __init__(self):
        self.total = 0

    def add(self, value):
        self.total += value
        return self.total


def fetch_twice(rref):
    return rref.to_here() * 2


# -- programs ---------------------------------------------------------------------------------------


def rpc_basics(spec):
    rank, world = start_rpc()
    out = {}
    if rank == 0:
        peer = f"worker{world - 1}"
        out["sync"] = rpc.rpc_sync(peer, add, args=(mg.ones(2), mg.ones(2))).tolist()
        out["kwargs"] = rpc.rpc_sync(peer, scaled_sum, args=([1.0, 2.0],), kwargs={"scale": 3.0})
        fut = rpc.rpc_async(peer, mul, args=(mg.full((2,), 3.0), 2.0))
        chained = fut.then(lambda f: f.value().sum().item())
        out["async"] = fut.wait().tolist()
        out["then"] = chained.wait()
        out["done"] = fut.done()
        try:
            rpc.rpc_sync(peer, fail, args=("missing key",))
        except KeyError as error:
            out["remote_error"] = str(error)
        try:
            rpc.rpc_sync(peer, sleep_then, args=(2.0, 1), timeout=0.2)
        except rpc.RpcTimeoutError as error:
            out["timeout"] = str(error)
        payload = rpc.rpc_sync(peer, big_array, args=(spec["n"],))
        out["big_ok"] = bool(payload[-1] == spec["n"] - 1 and payload.dtype == np.float64)
        t = mg.randn(spec["n"] // 8, 8, dtype=mg.float64)
        back = rpc.rpc_sync(peer, echo, args=(t,))
        out["echo_ok"] = bool(np.array_equal(back.array, t.array))
        out["worker_info"] = tuple(rpc.get_worker_info(peer))
        for bad in [lambda: rpc.rpc_sync("nobody", add, args=(1, 2)), lambda: rpc.rpc_sync(peer, 42)]:
            try:
                bad()
            except (ValueError, TypeError) as error:
                out.setdefault("bad_input", []).append(str(error))
    rpc.shutdown()
    return out


def graceful_shutdown_loses_nothing(spec):
    """Rank 0 fires many async calls and shuts down at once: every call still completes."""
    rank, world = start_rpc()
    futures = []
    if rank == 0:
        futures = [rpc.rpc_async(f"worker{1 + i % (world - 1)}", sleep_then, args=(0.001, i)) for i in range(spec["n"])]
    rpc.shutdown()
    return sorted(f.wait() for f in futures)


def rref_basics(spec):
    rank, world = start_rpc()
    out = {}
    if rank == 0:
        peer = f"worker{world - 1}"
        rref = rpc.remote(peer, add, args=(mg.ones(2), mg.ones(2)))
        out["to_here"] = rref.to_here().tolist()
        out["owner"] = rref.owner_name()
        out["is_owner"] = rref.is_owner()
        try:
            rref.local_value()
        except RuntimeError as error:
            out["local_value_error"] = str(error)
        counter = rpc.remote(peer, Counter)
        counter.rpc_sync().add(5)
        out["proxy_async"] = counter.rpc_async().add(2).wait()
        out["proxy_remote"] = counter.remote().add(1).to_here()
        failing = rpc.remote(peer, fail, args=("late",))
        try:
            failing.to_here()
        except KeyError as error:
            out["remote_error"] = str(error)
        local = rpc.RRef(mg.full((2,), 7.0))
        out["local"] = (local.is_owner(), local.to_here().tolist())
        # Hand an RRef owned by the peer to a third worker (or back to the owner with 2 ranks).
        third = f"worker{1 % world}"
        out["forwarded"] = rpc.rpc_sync(third, fetch_twice, args=(rref,)).tolist()
        del rref, counter, failing
    rpc.shutdown()
    return out


def rref_memory_flat(spec):
    """Create and drop many RRefs: the owner's table returns to where it started."""
    rank, world = start_rpc()
    counts = None
    if rank == 0:
        peer = f"worker{world - 1}"
        before = rpc.rpc_sync(peer, owned_count)
        for _ in range(spec["n"]):
            r = rpc.remote(peer, random_tensor)
            del r
        for _ in range(200):
            after = rpc.rpc_sync(peer, owned_count)
            if after == before:
                break
            time.sleep(0.01)
        counts = (before, after)
    rpc.shutdown()
    return counts
