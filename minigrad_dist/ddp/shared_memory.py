"""Bucket reduction through MPI shared memory, for groups whose ranks all sit on one node.

MPICH's ``Allreduce`` moves a large message between processes of one node
through small shared-memory cells: several copies per byte. When every
rank of the group can map every other rank's memory (an MPI-3 shared
window), a bucket can be reduced with far less traffic.
``benchmarks/bench_ddp.py`` measures the difference: ``minigrad.throughput``
in ``benchmarks/results/ddp.json`` holds the Reducer's throughput on this
path beside a raw ``Allreduce`` of the same bytes.

Each rank owns a *staging* copy of every bucket inside the window; the
Reducer's hooks write the raw gradients there, *not* divided by the world
size: the division happens once, in step 2, on the summed slice. A bucket
is reduced in three steps, each announced with a flag in shared memory (an
iteration number, so flags never need resetting):

1. ``READY``: this rank's staging copy holds this iteration's undivided
   gradients (often computed right there by the op, see
   ``minigrad.engine.set_grad_destination``);
2. ``REDUCED``: once every rank is ready, each rank sums its own slice
   (the bucket cut into one contiguous slice per rank) over all ranks'
   staging copies and multiplies it by ``1 / world size``, in place in its
   own staging copy;
3. ``COPIED``: once every rank has reduced its slice, each rank gathers
   all reduced slices into its private bucket buffer (the one ``.grad``
   views) and says so; a rank overwrites its staging copy in the next
   iteration only after every rank has copied from it.

Each slice is summed by one rank only, so every rank ends with the same
bits. ``MPI_Win_sync`` orders the memory accesses around each flag.
Nothing blocks inside MPI: ``start_reduction`` announces step 1 and returns
a Future that does what it can of steps 2-3 each time it is tested (the
Reducer tests it from its hooks, ``SharedMemoryStrategy`` in
``reduction_strategies.py``) and waits politely, with a timeout, when waited for.
"""

from __future__ import annotations

import os

import numpy as np

from minigrad_dist.futures import Future
from minigrad_dist.mpi import load_mpi
from minigrad_dist.process_group import wait_politely

READY, REDUCED, COPIED = 0, 1, 2
_ALIGN = 64
_CHUNK = 1 << 16  # elements summed and scaled at a time


def shared_memory_comm(comm, wanted: bool = True):
    """A communicator of the same ranks, in the same order, if they all share one node's memory; else None.

    Collective over ``comm``. ``wanted``: this rank can use shared memory (its
    buckets are on the CPU); every rank must agree. Set ``MINIGRAD_DDP_SHM=0``
    to never use shared memory (DDP then reduces with ``Iallreduce``).
    """
    if comm.Get_size() < 2:
        return None
    wanted = wanted and os.environ.get("MINIGRAD_DDP_SHM", "1").strip() != "0"
    MPI = load_mpi()
    node = comm.Split_type(MPI.COMM_TYPE_SHARED, key=comm.Get_rank())
    usable = wanted and node.Get_size() == comm.Get_size()
    # Every rank must decide the same way (a node split differs between ranks on different nodes).
    if not comm.allreduce(int(usable), op=MPI.MIN):
        node.Free()
        return None
    return node


class SharedBuckets:
    """Staging copies of the buckets in one shared window, and the reduction protocol over them.

    Args:
        comm: from ``shared_memory_comm`` (the caller frees it, after ``free()``).
        buckets: the Reducer's buckets (flat buffers on the CPU).
    """

    def __init__(self, comm, buckets):
        MPI = load_mpi()
        self.comm = comm
        self.rank = comm.Get_rank()
        self.size = comm.Get_size()
        layout, flags_bytes, total = _layout(buckets)
        self.window = MPI.Win.Allocate_shared(total, 1, comm=comm)
        self.window.Lock_all(MPI.MODE_NOCHECK)  # a passive epoch for the whole life: Win_sync needs one
        self.flags = []
        self.staging = []  # staging[rank][bucket index] -> flat array
        for rank in range(self.size):
            memory, _ = self.window.Shared_query(rank)
            raw = np.frombuffer(memory, dtype=np.uint8, count=total)
            flags = raw[: len(buckets) * 3 * 8].view(np.int64).reshape(len(buckets), 3)
            if rank == self.rank:
                flags[...] = 0
            self.flags.append(flags)
            self.staging.append([raw[start : start + nbytes].view(dtype) for start, nbytes, dtype in layout])
        self.slices = [_cut(b.buffer.size, self.size) for b in buckets]
        self.comm.Barrier()  # every rank's flags are zero before anyone reads them

    def staging_view(self, index: int):
        """This rank's staging copy of bucket ``index`` (flat)."""
        return self.staging[self.rank][index]

    def wait_until_writable(self, index: int, iteration: int, timeout) -> None:
        """Wait until every rank copied this rank's staging copy of the previous iteration."""
        self._wait(lambda: self._all_at_least(index, COPIED, iteration - 1), index, "finish the previous reduction",
                   timeout)

    def mark_ready(self, index: int, iteration: int) -> None:
        """Step 1: this rank's staging copy of bucket ``index`` holds iteration ``iteration``."""
        self._announce(index, READY, iteration)

    def release_staging(self, index: int, iteration: int) -> None:
        """This rank reduced bucket ``index`` another way this iteration: its staging copy may be reused.

        Only ``COPIED`` is announced, so a rank still expecting a shared-memory
        reduction waits (and times out) instead of reading unreduced data.
        """
        self._announce(index, COPIED, iteration)

    def start_reduction(self, index: int, iteration: int, out, scale: float) -> Future:
        """Step 1 for bucket ``index`` now; the returned Future does steps 2-3 when tested or waited for.

        The Future's value is ``out``, holding the sum over ranks times ``scale``.
        ``wait(timeout)`` raises TimeoutError as ``wait`` does.
        """
        self.mark_ready(index, iteration)

        def poll() -> None:
            if self.advance(index, iteration, out, scale):
                future.set_result(out)

        def block(timeout) -> None:
            self.wait(index, iteration, out, scale, timeout)
            if not future.done():
                future.set_result(out)

        future = Future(poll=poll, block=block)
        return future

    def advance(self, index: int, iteration: int, out, scale: float = 1.0) -> bool:
        """Do what can be done now for bucket ``index``; True once ``out`` holds the reduced bucket.

        The sum over ranks is multiplied by ``scale`` (``1 / world size`` averages).
        """
        mine = self.flags[self.rank][index]
        if mine[REDUCED] < iteration:
            if not self._all_at_least(index, READY, iteration):
                return False
            self._reduce_my_slice(index, scale)
            self._announce(index, REDUCED, iteration)
        if mine[COPIED] < iteration:
            if not self._all_at_least(index, REDUCED, iteration):
                return False
            self._gather(index, out)
            self._announce(index, COPIED, iteration)
        return True

    def wait(self, index: int, iteration: int, out, scale: float, timeout) -> None:
        """Advance bucket ``index`` until it is reduced into ``out`` (see ``advance``).

        Raises:
            TimeoutError: some rank did not reach this bucket within ``timeout`` seconds.
        """
        self._wait(lambda: self.advance(index, iteration, out, scale), index, "reduce it", timeout, iteration)

    def free(self) -> None:
        """Release the window (collective)."""
        self.window.Unlock_all()
        self.window.Free()

    # -- the steps -------------------------------------------------------------------------

    def _reduce_my_slice(self, index: int, scale: float) -> None:
        self.window.Sync()
        start, stop = self.slices[index][self.rank]
        copies = [self.staging[rank][index] for rank in range(self.size)]
        mine = copies[self.rank]
        # Chunk by chunk, so that the partial sums stay in cache while they are scaled.
        for begin in range(start, stop, _CHUNK):
            end = min(begin + _CHUNK, stop)
            total = mine[begin:end]
            for rank, copy in enumerate(copies):
                if rank != self.rank:
                    np.add(total, copy[begin:end], out=total)
            if scale != 1.0:
                np.multiply(total, scale, out=total)

    def _gather(self, index: int, out) -> None:
        self.window.Sync()
        for rank, (start, stop) in enumerate(self.slices[index]):
            out[start:stop] = self.staging[rank][index][start:stop]

    def _announce(self, index: int, step: int, iteration: int) -> None:
        self.window.Sync()  # the data written before this flag is visible before the flag
        self.flags[self.rank][index, step] = iteration
        self.window.Sync()

    def _all_at_least(self, index: int, step: int, iteration: int) -> bool:
        self.window.Sync()
        return all(flags[index, step] >= iteration for flags in self.flags)

    def _wait(self, condition, index, what, timeout, iteration=None) -> None:
        if wait_politely(condition, timeout):
            return
        late = [r for r, f in enumerate(self.flags) if iteration is not None and f[index, READY] < iteration]
        raise TimeoutError(
            f"DistributedDataParallel: bucket {index} could not {what} within {timeout:.1f} s"
            + (f"; ranks {late} never finished their gradients for it" if late else "")
            + " (a diverged or dead rank?)"
        )


def _layout(buckets):
    """Byte offsets of each bucket's staging copy after the flags, each aligned to 64 bytes."""
    flags_bytes = _round_up(len(buckets) * 3 * 8)
    layout, offset = [], flags_bytes
    for bucket in buckets:
        nbytes = bucket.buffer.nbytes
        layout.append((offset, nbytes, bucket.buffer.dtype))
        offset += _round_up(nbytes)
    return layout, flags_bytes, max(offset, _ALIGN)


def _round_up(n: int) -> int:
    return (n + _ALIGN - 1) // _ALIGN * _ALIGN


def _cut(n: int, parts: int):
    """``parts`` contiguous ``(start, stop)`` ranges covering ``range(n)``, sizes differing by at most one."""
    bounds = [n * i // parts for i in range(parts + 1)]
    return list(zip(bounds[:-1], bounds[1:]))
