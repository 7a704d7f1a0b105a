"""Programs run on every rank of a pool by test_hardening_rpc.py: calls with arguments that cannot be pickled.

Each program starts RPC, rank 0 makes the bad calls and then good ones (the
agent must keep working), and every rank shuts RPC down.
"""

from __future__ import annotations

import threading

import minigrad as mg
import minigrad_dist.rpc as rpc
from tests.dist.programs_common import start_rpc


def add(a, b):
    return a + b


def _error(call):
    """``(type name, message)`` of what ``call()`` raised; None when it returned."""
    try:
        call()
    except Exception as error:  # noqa: BLE001  (the test checks the type)
        return type(error).__name__, str(error)
    return None


def unpicklable_arguments(spec):
    rank, world = start_rpc()
    out = {}
    if rank == 0:
        peer = f"worker{world - 1}"
        lock = threading.Lock()
        out["positional"] = _error(lambda: rpc.rpc_sync(peer, add, args=(mg.ones(2), lock)))
        out["keyword"] = _error(lambda: rpc.rpc_sync(peer, add, args=(1,), kwargs={"b": lambda: 2}))
        out["nested"] = _error(lambda: rpc.rpc_async(peer, add, args=([1, {"x": lock}], 2)).wait())
        out["remote"] = _error(lambda: rpc.remote(peer, add, args=(lock, 1)).to_here())
        big = mg.randn(spec["n"], dtype=mg.float64)  # sent out of band: the failure comes after it is pickled
        out["after_big_tensor"] = _error(lambda: rpc.rpc_sync(peer, add, args=(big, lock)))
        out["still_works"] = rpc.rpc_sync(peer, add, args=(mg.ones(2), mg.ones(2))).tolist()
        out["remote_still_works"] = rpc.remote(peer, add, args=(3, 4)).to_here()
    rpc.shutdown()
    return out


def odd_calls(spec):
    """Odd values in every argument of rpc_sync: each raises on the caller, and the agent still works after."""
    rank, world = start_rpc()
    out = {}
    if rank == 0:
        peer = f"worker{world - 1}"
        calls = {
            "to=None": lambda: rpc.rpc_sync(None, add, args=(1, 2)),
            "to=-1": lambda: rpc.rpc_sync(-1, add, args=(1, 2)),
            "to=1.5": lambda: rpc.rpc_sync(1.5, add, args=(1, 2)),
            "func=None": lambda: rpc.rpc_sync(peer, None),
            "func=lambda": lambda: rpc.rpc_sync(peer, lambda: 1),
            "args=None": lambda: rpc.rpc_sync(peer, add, args=None),
            "args=1": lambda: rpc.rpc_sync(peer, add, args=1),
            "kwargs=[]": lambda: rpc.rpc_sync(peer, add, args=(1, 2), kwargs=[]),
            "kwargs int key": lambda: rpc.rpc_sync(peer, add, args=(1,), kwargs={1: 2}),
            "timeout=str": lambda: rpc.rpc_sync(peer, add, args=(1, 2), timeout="1"),
            "timeout=-1": lambda: rpc.rpc_sync(peer, add, args=(1, 2), timeout=-1),
            "timeout=nan": lambda: rpc.rpc_sync(peer, add, args=(1, 2), timeout=float("nan")),
            "wrong arity": lambda: rpc.rpc_sync(peer, add, args=(1,)),
            "generator arg": lambda: rpc.rpc_sync(peer, add, args=((x for x in range(2)), 1)),
        }
        out["errors"] = {name: _error(call) for name, call in calls.items()}
        out["still_works"] = rpc.rpc_sync(peer, add, args=(2, 3))
    rpc.shutdown()
    return out
