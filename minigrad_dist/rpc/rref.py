"""``RRef``: a reference to a value owned by one worker, usable from any worker.

Reference counting protocol (ours, simpler than upstream's fork protocol):

1. The owner keeps a table ``rref_id -> entry``; an entry holds the value (a
   Future: ``remote()`` returns before the value exists) and a count of the
   live ``RRef`` objects that refer to it, anywhere.
2. Every RRef object holds exactly one count, and gives it back when it is
   garbage collected: directly on the owner, otherwise with a one-way
   message sent by the agent's listener (safe from ``__del__``).
3. ``remote()``: the caller creates its RRef (one count) and first sends a
   one-way *register* message, then the request that computes the value.
   One-way messages are handled in arrival order by the owner's listener,
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

from minigrad_dist.futures import Future
from minigrad_dist.rpc import api


class _OwnerTable:
    """The values this worker owns, with their reference counts."""

    def __init__(self):
        self.lock = threading.RLock()
        self.entries = {}

    def add(self, rref_id, count):
        with self.lock:
            entry = self.entries.get(rref_id)
            if entry is None:
                entry = self.entries[rref_id] = [Future(), 0]
            entry[1] += count
            if entry[1] <= 0:
                del self.entries[rref_id]
            return entry[0]

    def value_future(self, rref_id) -> Future:
        with self.lock:
            entry = self.entries.get(rref_id)
        if entry is None:
            raise RuntimeError(f"RRef {_id_text(rref_id)} is not known on its owner (it was already released)")
        return entry[0]

    def __len__(self):
        with self.lock:
            return len(self.entries)

    def clear(self) -> None:
        """Drop every owned value (RPC shut down: no RRef can be used any more)."""
        with self.lock:
            self.entries.clear()


_table = _OwnerTable()
_ids = itertools.count(1)


def _new_id(agent) -> int:
    return (agent.rank << 48) | next(_ids)


def _id_text(rref_id) -> str:
    return f"{rref_id >> 48}:{rref_id & (2**48 - 1)}"


def release_all_owned() -> None:
    """Called by ``rpc.shutdown``: free every value this worker owns."""
    _table.clear()


def owned_count() -> int:
    """How many values this worker owns for live RRefs (for leak tests)."""
    return len(_table)


# -- owner-side handlers (run through RPC) ---------------------------------------------------


def _register(rref_id, count):
    _table.add(rref_id, count)


def _release(rref_id):
    _table.add(rref_id, -1)


def _compute(rref_id, func, args, kwargs):
    with _table.lock:
        entry = _table.entries.get(rref_id)
    future = entry[0] if entry is not None else Future()  # released already: compute, then drop
    try:
        future.set_result(func(*args, **kwargs))
    except BaseException as error:  # noqa: BLE001  (re-raised by to_here)
        future.set_exception(error)


def _fetch(rref_id):
    return _table.value_future(rref_id).wait()


def _call_method(rref_id, method, args, kwargs):
    value = _table.value_future(rref_id).wait()
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
        self._rref_id = _new_id(agent)
        self._owner_id = agent.rank
        _table.add(self._rref_id, 1).set_result(value)

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
        return _table.value_future(self._rref_id).wait()

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
            _table.add(self._rref_id, 1)
        else:
            api.rpc_sync(self._owner_id, _register, (self._rref_id, 1))
        return RRef._existing, (self._rref_id, self._owner_id)

    def __del__(self):
        agent = api._state.agent
        if agent is None:
            return
        try:
            if agent.rank == self._owner_id:
                _table.add(self._rref_id, -1)
            else:
                agent.oneway_later(self._owner_id, _release, (self._rref_id,))
        except Exception:  # noqa: BLE001  (interpreter shutdown: nothing left to release)
            pass

    def __repr__(self):
        return f"RRef(id={_id_text(self._rref_id)}, owner={self._owner_id})"


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


def create_remote(worker, func, args, kwargs, timeout):
    """``rpc.remote``: register, then compute on the owner; return the RRef at once."""
    agent = api.current_agent()
    rref_id = _new_id(agent)
    rref = RRef._existing(rref_id, worker.id)
    if worker.id == agent.rank:
        _table.add(rref_id, 1)
        agent.request(worker.id, _compute, (rref_id, func, args, kwargs), timeout=timeout or 0)
        return rref
    agent.oneway(worker.id, _register, (rref_id, 1))
    agent.request(worker.id, _compute, (rref_id, func, args, kwargs), timeout=timeout or 0)
    return rref
