"""RPC's rows of the distributed API fuzz tests (test_fuzz_rpc.py).

The rank side (``DistCase``, the values, ``run_calls``) is ``tests/dist/fuzz_ranks.py``.
"""

from __future__ import annotations

import minigrad as mg
import minigrad_dist.rpc as rpc
from tests.dist.fuzz_ranks import INF, NAN, DistCase, Make
from tests.dist.fuzz_ranks import ODD_VALUES as ODD_VALUES  # the tests read programs.ODD_VALUES


def add(a, b):
    """Called remotely."""
    return a + b


def _rref_to_peer():
    return Make("rpc.remote(peer, ones)", lambda env: rpc.remote(env.peer, mg.ones, args=(2,)))


def _rpc_cases():
    call_bad = dict(
        to=["nobody", 7, -1, 1.5, None, object()],
        func=[5, None, "abc", Make("lambda", lambda env: lambda a, b: a)],
        args=[5, "ab", None],
        kwargs=[[], "ab", 5],
        timeout=["a", -1, NAN, -INF],
    )
    valid = dict(to=Make("peer", lambda env: env.peer), func=add, args=(1, 2), kwargs=None, timeout=5)
    names = ("to", "func", "args", "kwargs", "timeout", "worker", "pickle", "callable")
    return [
        DistCase("rpc_sync", lambda env, **kw: rpc.rpc_sync(**kw), valid, call_bad, setup="rpc", names=names),
        DistCase(
            "rpc_async",
            lambda env, **kw: rpc.rpc_async(**kw).wait(),
            valid,
            call_bad,
            setup="rpc",
            names=names,
        ),
        DistCase(
            "remote", lambda env, **kw: rpc.remote(**kw).to_here(), valid, call_bad, setup="rpc", names=names
        ),
        DistCase(
            "get_worker_info",
            lambda env, **kw: rpc.get_worker_info(**kw),
            dict(worker_name=None),
            dict(worker_name=["nobody", 5, object()]),
            setup="rpc",
            names=("worker",),
        ),
        DistCase(
            "RRef.to_here",
            lambda env, rref, timeout: rref.to_here(timeout=timeout),
            dict(rref=_rref_to_peer(), timeout=5),
            dict(timeout=["a", -1, NAN]),
            setup="rpc",
            names=("timeout",),
            fixed=("rref",),
        ),
        DistCase(
            "init_rpc",
            _init_rpc,
            dict(
                name=Make("worker<rank>", lambda env: f"worker{env.rank}"),
                rank=None,
                world_size=None,
                rpc_timeout=60.0,
            ),
            dict(
                name=["", None, 5, "same"],
                rank=[7, -2, "a"],
                world_size=[7, 0, "a"],
                rpc_timeout=[-1, NAN, "a", None],
            ),
            setup="no_rpc",
            names=("name", "rank", "world_size", "rpc_timeout", "unique"),
            # rank=1 is right on rank 1 only: rank 0 raises and rank 1 waits in the agent's
            # start-up allgather forever (reported), so the odd-values test leaves both alone.
            fixed=("rank", "world_size"),
        ),
    ]


def _init_rpc(env, **kwargs):
    rpc.init_rpc(**kwargs)
    rpc.shutdown()


CASES = _rpc_cases()
BY_NAME = {c.name: c for c in CASES}
