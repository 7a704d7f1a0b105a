"""Freeing the communicators and windows of objects dropped without ``close()``, collectively and in order.

Freeing an MPI communicator or window is a collective call: every rank of
its group must free the same object, in the same order as the others free
theirs. A finalizer (``weakref.finalize``, ``__del__``) runs whenever the
garbage collector reaches the object, which differs from rank to rank and
may happen on any thread, in the middle of another collective. So a
finalizer never frees; this module defers the freeing to a point that every
rank of the group reaches in the same order:

1. **Register** (``begin(group)``, then ``defer_release``). An owner of
   collective resources (a ``DistributedDataParallel``) is built by a
   collective call over ``group``, in the same order on every rank. At that
   call every rank gets the same *serial* for the new owner (step 4), and
   ``defer_release`` attaches a finalizer to the owner.
2. **Drop.** When the owner is collected without ``close()``, its finalizer
   runs ``on_drop`` (local work only: removing hooks) and puts ``release``
   (the collective freeing) into the group's pending table under the serial.
   It calls no MPI function, so it can run at any time on any thread.
3. **Agree.** At the next ``begin(group)`` (the next construction over the
   group) every rank sends the serials it holds pending, and its next
   serial, in one ``allgather`` over ``group``; this is a collective call
   at a point every rank of the group reaches in the same order.
4. **Free.** Every rank runs the releases of the serials pending on *every*
   rank, in ascending serial (creation) order; a serial still alive on some
   rank stays pending until a later ``begin`` where all ranks dropped it. The
   new owner's serial is the largest next serial sent, on every rank.

Why this cannot deadlock: the only blocking calls are the allgather of step
3, which every rank of the group makes at the same collective point (the
owner's construction is collective already), and the frees of step 4. Serial
``s`` names the same owner on every rank (step 4 hands out equal serials at
equal points), every rank frees exactly the same set of serials (the
intersection of the same gathered lists), in the same order, and each
release frees its owner's objects in a fixed order. So the k-th free on one
rank meets the k-th free on every other rank. Nothing collective runs inside
a finalizer.

Before agreeing, a rank that holds many owners alive (``GC_THRESHOLD``)
runs the cyclic garbage collector, so owners that sit in reference cycles
are finalized and the number of live communicators stays bounded.

``finish(group)`` (called by ``ProcessGroup.destroy``, a collective call
too) is the last agreement over a group that held owners: it runs the
cyclic collector, agrees on the pending serials with one nonblocking
all-reduce of a pending-flag per serial (every rank numbers serials alike,
so the arrays are equally long), confirms with a nonblocking barrier that
every rank has the agreement, frees those pending everywhere, in serial
order, and drops the group's table. Each wait is bounded
(``FINISH_TIMEOUT``): a rank that destroys the group alone (its peers
failed, or come much later) warns and leaks instead of hanging, and a peer
arriving after it gave up finds no barrier partner and gives up too. Owners still alive then keep
their communicators until MPI finalizes; ``close()`` frees them at once.
"""

from __future__ import annotations

import gc
import threading
import warnings
import weakref

import numpy as np

from minigrad_dist import waiting
from minigrad_dist.mpi import load_mpi

# Owners alive (registered, not yet freed) on one group above which ``begin`` first runs the cyclic collector.
GC_THRESHOLD = 128
# Seconds ``finish`` waits for the other ranks to agree before it gives up (and leaks) rather than hang.
FINISH_TIMEOUT = 30.0


class _GroupLedger:
    """The owners registered over one process group: the next serial, the live count and the pending releases."""

    def __init__(self):
        self.next_serial = 0
        self.live = 0
        self.gc_threshold = GC_THRESHOLD
        self.pending = {}  # serial -> release, filled by finalizers (any thread), emptied by begin()
        self.lock = threading.Lock()

    def dropped(self, serial: int, release) -> None:
        with self.lock:
            self.pending[serial] = release

    def released(self) -> None:
        with self.lock:
            self.live -= 1


_ledgers = weakref.WeakKeyDictionary()  # ProcessGroup -> _GroupLedger


def _ledger(group) -> _GroupLedger:
    ledger = _ledgers.get(group)
    if ledger is None:
        ledger = _ledgers[group] = _GroupLedger()
    return ledger


def begin(group) -> int:
    """Free what dropped owners over ``group`` left pending on every rank; return the new owner's serial.

    Collective over ``group`` (one ``allgather_obj``): call it on every rank,
    at a point all ranks reach in the same order (inside a collective
    constructor). Steps 3 and 4 of the module docstring.
    """
    ledger = _ledger(group)
    collected = ledger.live >= ledger.gc_threshold
    if collected:
        gc.collect()  # owners in reference cycles are finalized only by the cyclic collector
    with ledger.lock:
        mine = sorted(ledger.pending)
    everyone = group.allgather_obj((ledger.next_serial, mine))
    common = set(mine)
    for _, theirs in everyone:
        common.intersection_update(theirs)
    for serial in sorted(common):
        with ledger.lock:
            release = ledger.pending.pop(serial)
        _run_release(release, serial)
        ledger.released()
    if collected:  # owners still alive after a collection are kept on purpose: collect again when they double
        ledger.gc_threshold = max(GC_THRESHOLD, 2 * ledger.live)
    serial = max(next_serial for next_serial, _ in everyone)
    ledger.next_serial = serial + 1
    return serial


def _run_release(release, serial: int) -> None:
    try:
        release()
    except Exception as error:  # one failed free must not skip the frees after it: ranks would fall out of step
        warnings.warn(
            f"freeing the resources of dropped object #{serial} failed: {error!r}", ResourceWarning, stacklevel=3
        )


def defer_release(owner, group, serial: int, release, on_drop=None) -> weakref.finalize:
    """Arrange for ``release()`` to run collectively once ``owner`` is collected (step 1-2).

    Args:
        owner: the object whose collection triggers the release; ``release``
            and ``on_drop`` must not refer to it (or it is never collected).
        group: the ``ProcessGroup`` ``begin`` was called over.
        serial: what ``begin(group)`` returned for this owner.
        release: frees the owner's communicators and windows (collective
            over ``group``); run by a later ``begin(group)`` on every rank.
        on_drop: local cleanup run by the finalizer itself (no MPI call).

    Returns:
        The ``weakref.finalize``; an owner closed explicitly calls its
        ``detach()`` and then ``closed(group)``.
    """
    ledger = _ledger(group)
    with ledger.lock:
        ledger.live += 1
    finalizer = weakref.finalize(owner, _on_owner_dropped, ledger, serial, release, on_drop)
    finalizer.atexit = False  # at exit MPI frees everything; a finalizer must not run MPI calls then
    return finalizer


def _on_owner_dropped(ledger: _GroupLedger, serial: int, release, on_drop) -> None:
    if on_drop is not None:
        on_drop()
    ledger.dropped(serial, release)


def closed(group) -> None:
    """An owner registered over ``group`` was closed explicitly (its finalizer detached): one fewer alive."""
    ledger = _ledgers.get(group)
    if ledger is not None:
        ledger.released()


def live_count(group) -> int:
    """Owners registered over ``group`` whose resources are not freed yet (alive, or dropped and pending)."""
    ledger = _ledgers.get(group)
    return 0 if ledger is None else ledger.live


def pending_count(group) -> int:
    """Owners over ``group`` dropped on this rank whose release waits for the next ``begin``."""
    ledger = _ledgers.get(group)
    if ledger is None:
        return 0
    with ledger.lock:
        return len(ledger.pending)


def finish(group) -> None:
    """Free what owners over ``group`` left pending on every rank, then forget the group (it is being destroyed).

    Collective over ``group`` when some owner was registered over it (the
    same on every rank); call it before the group's communicator is freed.
    Warns (``ResourceWarning``) instead of hanging when the other ranks do
    not take part within ``FINISH_TIMEOUT`` seconds.
    """
    ledger = _ledgers.pop(group, None)
    if ledger is None or ledger.live == 0:
        return
    gc.collect()  # the group's last chance: finalize owners that sit in reference cycles
    with ledger.lock:
        flags = np.zeros(ledger.next_serial, dtype=np.uint8)
        flags[sorted(ledger.pending)] = 1
    MPI = load_mpi()
    # Agree on the serials, then confirm that every rank got the agreement in time: a rank that gave up after
    # the first step posts no barrier, so a late peer gives up too instead of waiting in a window's free.
    agreed = _wait(group.comm.Iallreduce(MPI.IN_PLACE, flags, MPI.MIN)) and _wait(group.comm.Ibarrier())
    if not agreed:
        return
    for serial in np.flatnonzero(flags).tolist():
        with ledger.lock:
            release = ledger.pending.pop(serial)
        _run_release(release, serial)


def _wait(request) -> bool:
    """Wait for ``request`` at most ``FINISH_TIMEOUT`` seconds; warn when it did not complete."""
    if waiting.wait_until(request.Test, FINISH_TIMEOUT):
        return True
    warnings.warn(
        f"destroying a process group: the other ranks did not agree within {FINISH_TIMEOUT} s on which dropped "
        "DDP models to free; their communicators stay allocated until MPI finalizes",
        ResourceWarning,
        stacklevel=4,
    )
    return False
