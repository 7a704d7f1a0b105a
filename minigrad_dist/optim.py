"""``DistributedOptimizer``: one local optimizer per parameter owner, stepped with a context's gradients.

As in the design note:

1. It takes RRefs to the parameters to optimize (owned by any workers).
2. It groups them by owner and, on each distinct owner, creates an instance
   of the given local optimizer class over the owner's local values (over
   RPC; it keeps an RRef to each).
3. ``step(context_id)`` asks every owner concurrently to step its local
   optimizer with the gradients accumulated in that distributed autograd
   context on that owner.
4. Concurrent steps that update the same parameters on one worker are
   serialized by a lock.
"""

from __future__ import annotations

import threading
from collections import defaultdict

from minigrad_dist import autograd as dist_autograd
from minigrad_dist.futures import wait_all
from minigrad_dist.rpc import api
from minigrad_dist.rpc.rref import RRef
from minigrad_dist.zero.optimizer import ZeroRedundancyOptimizer as ZeroRedundancyOptimizer  # torch's name

_step_lock = threading.Lock()


class _LocalOptimizer:
    """Lives on a parameter owner: a local optimizer over the owner's parameters."""

    def __init__(self, optimizer_class, param_rrefs, args, kwargs):
        self.params = [rref.local_value() for rref in param_rrefs]
        try:
            self.optimizer = optimizer_class(self.params, *args, **kwargs)
        except TypeError as error:  # e.g. a callable that is no optimizer, or arguments it does not take
            raise TypeError(f"DistributedOptimizer: optimizer_class {optimizer_class!r} could not be built "
                            f"with these arguments: {error}") from error

    def built(self) -> bool:
        """Called by the constructor of DistributedOptimizer: the owner's optimizer exists."""
        return True

    def step(self, context_id):
        gradients = dist_autograd.get_gradients(context_id)
        with _step_lock:
            previous = [p.grad for p in self.params]
            try:
                for p in self.params:
                    p.grad = gradients.get(p)
                self.optimizer.step()
            finally:
                for p, g in zip(self.params, previous):
                    p.grad = g


def _new_local_optimizer(optimizer_class, param_rrefs, args, kwargs):
    return _LocalOptimizer(optimizer_class, param_rrefs, args, kwargs)


class DistributedOptimizer:
    """Steps parameters spread over workers with the gradients of a distributed autograd context.

    Args:
        optimizer_class: a local optimizer class, e.g. ``minigrad.optim.SGD``.
        params_rref: RRefs to the parameters (``RRef(param)`` for local ones).
        *args, **kwargs: passed to ``optimizer_class`` on every owner.

    Raises:
        TypeError: ``optimizer_class`` is not callable, or ``params_rref``
            holds something other than RRefs.
        ValueError: ``params_rref`` is empty.
        Whatever building an owner's optimizer raised (say, ``ValueError``
            for a negative ``lr``): like PyTorch's, the constructor waits until
            every owner has built its optimizer.
    """

    def __init__(self, optimizer_class, params_rref, *args, **kwargs):
        if not callable(optimizer_class):
            raise TypeError(f"DistributedOptimizer: optimizer_class must be a class, got {optimizer_class!r}")
        params_rref = list(params_rref)
        if not params_rref:
            raise ValueError("DistributedOptimizer: params_rref is empty")
        for i, r in enumerate(params_rref):
            if not isinstance(r, RRef):
                raise TypeError(f"DistributedOptimizer: params_rref[{i}] is a {type(r).__name__}, expected an RRef")
        by_owner = defaultdict(list)
        for r in params_rref:
            by_owner[r.owner().id].append(r)
        self.remote_optimizers = [
            api.remote(owner, _new_local_optimizer, (optimizer_class, rrefs, args, kwargs))
            for owner, rrefs in by_owner.items()
        ]
        wait_all([opt.rpc_async().built() for opt in self.remote_optimizers])

    def step(self, context_id: int) -> None:
        """Step every owner's optimizer concurrently with that owner's gradients in ``context_id``.

        Raises:
            Whatever a remote step raised (with its remote traceback).
        """
        wait_all([opt.rpc_async().step(context_id) for opt in self.remote_optimizers])

