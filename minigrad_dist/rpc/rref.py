"""``RRef``: a reference to a value owned by one worker, usable from any worker.

Reference counting protocol (ours, simpler than upstream's fork protocol):

1. The owner keeps a table ``rref_id -> entry`` (``OwnerTable``, on its
   RPC agent: ``agent.rrefs``); an entry holds the value (a Future:
   ``remote()`` returns before the value exists) and a count of the live
   ``RRef`` objects that refer to it, anywhere. RRef ids are global ids:
   the creating worker's id in the high bits.
2. Every RRef object holds exactly one count, and gives it back when it is
   garbage collected: directly on the owner, otherwise with a one-way
   message sent by the agent's next poller (safe from ``__del__``).
3. ``remote()``: the caller creates its RRef (one count) and first sends a
   one-way *register* message, then the request that computes the value.
   One-way messages are handled in arrival order by the owner's pollers,
   and MPI keeps messages from one sender in order, so a *release* from the
   caller can never overtake its *register*.
4. Sending an RRef to another worker (pickling it) first adds one count at
   the owner (a synchronous call unless the sender is the owner); the RRef
   rebuilt by the receiver owns that count. So the count can never reach
   zero while a copy is in flight.
5. When a count reaches zero the owner drops the entry and the value is
   freed. A loop creating and dropping RRefs therefore keeps memory flat.
"""

from __future__ import annotations

import itertools
import threading

from minigrad_dist.autograd.context import id_text, make_global_id
from minigrad_dist.futures import Future
from minigrad_dist.rpc import api

# RRef ids stay unique for the life of the process, across init_rpc/shutdown cycles: an RRef of an earlier
# agent that is collected late sends its release through the current one, and must not hit a newer RRef.
_ids = itertools.count(1)


class OwnerTable:
    """The values one worker owns for RRefs, with their reference counts (its agent's ``rrefs``).

    Args:
        rank: the owning worker's id (the high bits of the RRef ids it mints).
    """

    def __init__(self, rank: int):
        self.rank = rank
        self.lock = threading.RLock()
        self.entries = {}  # rref_id -> [value Future, count]

    def new_id(self) -> int:
        """A fresh RRef id, unique across workers (``autograd.context.make_global_id``)."""
        return make_global_id(self.rank, _ids)

    def add(self, rref_id, count) -> Future:
        """Add ``count`` (may be negative) to ``rref_id``'s count, creating the entry; its value Future.

        The entry is dropped (and its value freed) when the count reaches zero.
        """
        with self.lock:
            entry = self.entries.get(rref_id)
            if entry is None:
                entry = self.entries[rref_id] = [Future(), 0]
            entry[1] += count
            if entry[1] <= 0:
                del self.entries[rref_id]
            return entry[0]

    def value_future(self, rref_id) -> Future:
        """The Future of ``rref_id``'s value.

        Raises:
            RuntimeError: no RRef to it is left (it was released already).
        """
        with self.lock:
            entry = self.entries.get(rref_id)
        if entry is None:
            raise RuntimeError(f"RRef {id_text(rref_id)} is not known on its owner (it was already released)")
        return entry[0]

    def future_to_compute(self, rref_id) -> Future:
        """The Future to set ``rref_id``'s value in; a throwaway one if it was released already (compute, then drop)."""
        with self.lock:
            entry = self.entries.get(rref_id)
        return entry[0] if entry is not None else Future()

    def __len__(self):
        with self.lock:
            return len(self.entries)

    def clear(self) -> None:
        """Drop every owned value (RPC shut down: no RRef can be used any more)."""
        with self.lock:
            self.entries.clear()


def _owned() -> OwnerTable:
    """This worker's table of owned values (its agent's)."""
    return api.current_agent().rrefs


def release_all_owned() -> None:
    """Free every value this worker owns (``rpc.shutdown`` does it; nothing when RPC is not running)."""
    agent = api._state.agent
    if agent is not None:
        agent.rrefs.clear()


def owned_count() -> int:
    """How many values this worker owns for live RRefs (for leak tests; 0 when RPC is not running)."""
    agent = api._state.agent
    return 0 if agent is None else len(agent.rrefs)


# -- owner-side handlers (run through RPC) ---------------------------------------------------


def _register(rref_id, count):
    _owned().add(rref_id, count)


def _release(rref_id):
    _owned().add(rref_id, -1)


def _compute(rref_id, func, args, kwargs):
    future = _owned().future_to_compute(rref_id)
    try:
        future.set_result(func(*args, **kwargs))
    except BaseException as error:  # noqa: BLE001  (re-raised by to_here)
        future.set_exception(error)


def _fetch(rref_id):
    return _owned().value_future(rref_id).wait()


def _call_method(rref_id, method, args, kwargs):
    value = _owned().value_future(rref_id).wait()
    return getattr(value, method)(*args, **kwargs)


# -- the RRef class ---------------------------------------------------------------------------


class RRef:
    """A reference to a value owned by some worker (PyTorch's ``rpc.RRef``).

    ``RRef(value)`` makes this worker the owner of ``value``. ``rpc.remote``
    returns RRefs owned by other workers. RRefs can be passed in RPC
    arguments and results; the owner frees the value once no RRef to it is
    left anywhere (see the module docstring).
    """

    __slots__ = ("_rref_id", "_owner_id", "__weakref__")

    def __init__(self, value):
        agent = api.current_agent()
        self._rref_id = agent.rrefs.new_id()
        self._owner_id = agent.rank
        agent.rrefs.add(self._rref_id, 1).set_result(value)

    @classmethod
    def _existing(cls, rref_id, owner_id):
        """An RRef object for an id whose count the caller already holds."""
        rref = object.__new__(cls)
        rref._rref_id = rref_id
        rref._owner_id = owner_id
        return rref

    def owner(self):
        """The ``WorkerInfo`` of the owner."""
        return api.current_agent().workers[self._owner_id]

    def owner_name(self) -> str:
        """The owner's worker name."""
        return self.owner().name

    def is_owner(self) -> bool:
        """True on the owner."""
        return api.current_agent().rank == self._owner_id

    def local_value(self):
        """The value itself (owner only; waits if it is still being computed).

        Raises:
            RuntimeError: called on a worker that is not the owner.
        """
        if not self.is_owner():
            raise RuntimeError(
                f"local_value() can only be called on the owner ({self.owner_name()!r}); use to_here() elsewhere"
            )
        return _owned().value_future(self._rref_id).wait()

    def to_here(self, timeout=api._UNSET):
        """A copy of the value on this worker (the value itself on the owner).

        Inside a distributed autograd context, Tensors that require grad are
        connected to the owner's graph by a send/recv pair.
        """
        if self.is_owner():
            return self.local_value()
        return api.rpc_sync(self._owner_id, _fetch, (self._rref_id,), timeout=timeout)

    def rpc_sync(self, timeout=api._UNSET):
        """A proxy: ``rref.rpc_sync().method(*args)`` runs the method on the owner and returns its result."""
        return _Proxy(self, "sync", timeout)

    def rpc_async(self, timeout=api._UNSET):
        """A proxy whose method calls return Futures."""
        return _Proxy(self, "async", timeout)

    def remote(self, timeout=api._UNSET):
        """A proxy whose method calls return RRefs to their results (owned by this RRef's owner)."""
        return _Proxy(self, "remote", timeout)

    def __reduce__(self):
        agent = api.current_agent()
        if agent.rank == self._owner_id:
            agent.rrefs.add(self._rref_id, 1)
        else:
            api.rpc_sync(self._owner_id, _register, (self._rref_id, 1))
        return RRef._existing, (self._rref_id, self._owner_id)

    def __del__(self):
        agent = api._state.agent
        if agent is None:
            return
        try:
            if agent.rank == self._owner_id:
                agent.rrefs.add(self._rref_id, -1)
            else:
                agent.oneway_later(self._owner_id, _release, (self._rref_id,))
        except Exception:  # noqa: BLE001  (interpreter shutdown: nothing left to release)
            pass

    def __repr__(self):
        return f"RRef(id={id_text(self._rref_id)}, owner={self._owner_id})"


class _Proxy:
    """``rref.rpc_sync()`` and friends: attribute access gives a method caller."""

    def __init__(self, rref, kind, timeout):
        self._rref = rref
        self._kind = kind
        self._timeout = timeout

    def __getattr__(self, method):
        rref, kind, timeout = self._rref, self._kind, self._timeout

        def call(*args, **kwargs):
            call_args = (rref._rref_id, method, args, kwargs)
            if kind == "sync":
                return api.rpc_sync(rref._owner_id, _call_method, call_args, timeout=timeout)
            if kind == "async":
                return api.rpc_async(rref._owner_id, _call_method, call_args, timeout=timeout)
            return api.remote(rref._owner_id, _call_method, call_args, timeout=timeout)

        return call


def create_remote(worker, func, args, kwargs, timeout, compute=_compute):
    """``rpc.remote``: register, then compute on the owner; return the RRef at once.

    ``compute(rref_id, func, args, kwargs)`` runs on the owner and sets the
    value (``_compute``; ``functions`` passes its own for ``async_execution``
    functions). The compute request has no timeout unless ``timeout`` is a
    positive number of seconds.
    """
    agent = api.current_agent()
    rref = RRef._existing(agent.rrefs.new_id(), worker.id)
    if worker.id == agent.rank:
        agent.rrefs.add(rref._rref_id, 1)
    else:
        agent.oneway(worker.id, _register, (rref._rref_id, 1))
    agent.request(worker.id, compute, (rref._rref_id, func, args, kwargs), timeout=timeout or 0)
    return rref
