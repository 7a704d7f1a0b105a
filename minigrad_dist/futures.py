"""``Future``: a value that arrives later, from an MPI request or from another thread.

The class is ``minigrad.futures.Future`` (re-exported here with ``collect_all``
and ``wait_all``): one Future for the whole library. Two kinds of sources
complete one:

* an MPI request (``Work.get_future()``): nothing completes it in the
  background (MPICH progresses only inside MPI calls), so the Future is built
  with ``poll``/``block`` callables: ``done()`` polls the request and
  ``wait()`` blocks on it;
* another thread (the RPC agent's listener): it calls ``set_result`` or
  ``set_exception`` and waiters wake up.

``then(callback)`` chains a Future that completes with ``callback(parent)``
once the parent completes, like ``torch.futures.Future.then``.
"""

from __future__ import annotations

from minigrad.futures import Future, collect_all, wait_all

__all__ = ["Future", "collect_all", "completed_future", "wait_all"]


def completed_future(value) -> Future:
    """A Future that already holds ``value`` (what a comm hook returns when it reduced in place)."""
    future = Future()
    future.set_result(value)
    return future
