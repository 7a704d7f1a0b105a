"""Distributed autograd: backward passes across RPC boundaries.

    import minigrad_dist.autograd as dist_autograd
    with dist_autograd.context() as context_id:
        loss = rpc.rpc_sync("worker1", f, args=(x,)).sum()
        dist_autograd.backward(context_id, [loss])
        grads = dist_autograd.get_gradients(context_id)

Three public functions, as upstream: ``context``, ``backward``,
``get_gradients``. The algorithm is in ``engine.py``; send/recv nodes in
``send_recv.py``; per-pass state in ``context.py``.
"""

from __future__ import annotations

import contextlib

from minigrad_dist.autograd.context import DistAutogradContext, id_text, registry
from minigrad_dist.autograd.engine import backward

__all__ = ["backward", "context", "get_gradients", "DistAutogradContext"]


@contextlib.contextmanager
def context():
    """A distributed autograd context; yields its globally unique id.

    Forward passes (RPCs, ``to_here``) and ``backward`` that belong together
    must run inside it. On exit the context is released on every worker
    that took part, and the exit waits for that.

    Raises:
        RuntimeError: RPC is not initialized, or contexts are nested in one thread.
    """
    from minigrad_dist.rpc import api  # noqa: PLC0415  (rpc builds on this package)

    agent = api.current_agent()
    if registry.current.context_id is not None:
        raise RuntimeError(
            f"a distributed autograd context ({id_text(registry.current.context_id)}) is already active in this "
            "thread; contexts cannot be nested"
        )
    ctx = registry.new_context(agent.rank)
    registry.current.context_id = ctx.context_id
    try:
        yield ctx.context_id
    finally:
        registry.current.context_id = None
        _release_everywhere(ctx.context_id, agent)


def _release_context(context_id):
    """RPC handler: forget the context here; return the workers it knew."""
    ctx = registry.release(context_id)
    if ctx is None:
        return []
    with ctx.lock:
        known = sorted(ctx.known_workers)
        ctx.backwards.clear()  # drop graph state now rather than when the last reference goes
        ctx.live_sends.clear()
    return known


# Runs in the RPC listener itself (a dict lookup: no need for a worker thread).
_release_context.rpc_inline = True


def _release_everywhere(context_id, agent) -> None:
    from minigrad_dist.rpc import api  # noqa: PLC0415

    released = {agent.rank}
    to_visit = [w for w in _release_context(context_id) if w != agent.rank]
    while to_visit:
        worker = to_visit.pop()
        if worker in released:
            continue
        released.add(worker)
        known = api.rpc_sync(worker, _release_context, (context_id,), timeout=0)
        to_visit.extend(w for w in known if w not in released)


def get_gradients(context_id: int) -> dict:
    """``{leaf Tensor: gradient Tensor}`` accumulated on this worker in context ``context_id``.

    Raises:
        RuntimeError: no such context on this worker.
    """
    ctx = registry.get(context_id)
    with ctx.lock:
        return dict(ctx.grad_map)


def live_context_count() -> int:
    """Contexts alive on this worker (for leak tests)."""
    return len(registry)
