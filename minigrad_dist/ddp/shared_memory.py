"""Bucket reduction through MPI shared memory, inside a node, and across nodes in two levels.

MPICH's ``Allreduce`` moves a large message between processes of one node
through small shared-memory cells: several copies per byte. When the ranks
of a node can map each other's memory (an MPI-3 shared window), a bucket
can be reduced with far less traffic. ``benchmarks/bench_ddp.py`` measures
the difference on one node (``minigrad.throughput`` in
``benchmarks/results/ddp.json``), ``benchmarks/bench_topology.py`` across
simulated nodes (``benchmarks/results/topology.json``).

Each rank owns a *staging* copy of every bucket inside the node's window;
the Reducer's hooks write the raw gradients there, *not* divided by the
world size: the division happens once, in step 2, on the summed slice.
Every bucket is cut into ``parts`` contiguous slices; node rank ``r`` of a
node with ``n`` ranks owns the slices ``s`` with ``s % n == r`` (on one node
``parts == n``: one slice each). A bucket is reduced in these steps, the
first, third and fourth announced with a flag in shared memory (an
iteration number, so flags never need resetting):

1. ``READY``: this rank's staging copy holds this iteration's undivided
   gradients (often computed right there by the op, see
   ``minigrad.engine.set_grad_destination``);
2. once every rank of the node is ready, each rank sums its own slices
   over all the node's staging copies and multiplies them by ``scale``
   (``1 / world size`` averages), in place in its own staging copy;
3. ``REDUCED``: on one node, at once. When the group spans nodes
   (``minigrad_dist.topology.Hierarchy``), each rank first allreduces each
   of its slices, in place, with the ranks that own the same slice on the
   other nodes (one nonblocking ``Iallreduce`` per slice on that slice's
   communicator), and announces ``REDUCED`` once they complete. Every rank
   starts these in the order the buckets were launched, as MPI requires of
   the collectives of one communicator;
4. ``COPIED``: once every rank of the node has reduced its slices, each
   rank gathers all reduced slices into its private output buffer (the one
   ``.grad`` views) and says so; a rank overwrites its staging copy in the
   next iteration only after every rank of the node has copied from it.

Each slice is summed by one rank per node in a fixed order, so every rank
ends with the same bits. ``MPI_Win_sync`` orders the memory accesses
around each flag. Nothing blocks inside MPI: ``start_reduction`` announces
step 1 and returns a Future that does what it can of steps 2-4 (for every
reduction in flight, in launch order) each time it is tested (the Reducer
tests it from its hooks, ``SharedMemoryStrategy`` in
``reduction_strategies.py``) and waits politely, with a timeout, when waited for.
"""

from __future__ import annotations

import os

import numpy as np

from minigrad_dist import waiting
from minigrad_dist.futures import Future
from minigrad_dist.mpi import load_mpi
from minigrad_dist.topology import Hierarchy, Topology, owned_slices

READY, REDUCED, COPIED = 0, 1, 2
_ALIGN = 64
_CHUNK = 1 << 16  # elements summed and scaled at a time

# Waits for flags: the other ranks of the node are computing gradients or summing their slices, and a slice
# crossing nodes needs this rank to keep testing its request, so yield for 2 ms, then mostly yield and
# sometimes sleep 50 us; after 20 ms the others are computing: only sleep, up to 1 ms, so a long wait leaves
# the CPU to the ranks that still work (the schedule of process_group.COLLECTIVE_BACKOFF, for the same reasons).
FLAG_BACKOFF = waiting.Backoff(
    yield_window=2e-3, first_sleep=5e-5, longest_sleep=5e-5, yields_per_sleep=63, patience=2e-2, idle_sleep=1e-3
)

# Local reduction of a slice (NumPy) and its MPI counterpart across nodes, by ``ReduceOp`` value.
_UFUNCS = {"sum": np.add, "product": np.multiply, "min": np.minimum, "max": np.maximum}


def shared_memory_comm(comm, wanted: bool = True):
    """A communicator of the same ranks, in the same order, if they all share one node's memory; else None.

    Collective over ``comm``. ``wanted``: this rank can use shared memory (its
    buckets are on the CPU); every rank must agree. Set ``MINIGRAD_DDP_SHM=0``
    to never use shared memory (DDP then reduces with ``Iallreduce``).
    """
    hierarchy = node_hierarchy(comm, wanted and shared_memory_enabled(), two_levels=False)
    if hierarchy is None:
        return None
    return hierarchy.node_comm


def shared_memory_enabled(environ=None) -> bool:
    """False when ``MINIGRAD_DDP_SHM=0`` (DDP never reduces through shared memory)."""
    environ = os.environ if environ is None else environ
    return environ.get("MINIGRAD_DDP_SHM", "1").strip() != "0"


def node_hierarchy(comm, wanted: bool, two_levels: bool, topology: Topology | None = None):
    """The ``Hierarchy`` to reduce through shared memory over ``comm``, or None when the ranks cannot.

    Collective over ``comm``. One node: a hierarchy with no cross-node level.
    Several nodes: one when ``two_levels`` (the caller's setting), else None.
    Every rank must be able to (``wanted``: e.g. its buffers are on the CPU);
    the ranks agree with one allreduce.

    Args:
        comm: the group's communicator (of size >= 2 for anything but None).
        wanted: this rank can and may use shared memory.
        two_levels: reduce across nodes in two levels when the group spans nodes.
        topology: ``Topology.of(comm)`` when the caller has it (else computed here).
    """
    if comm.Get_size() < 2:
        return None
    MPI = load_mpi()
    topology = topology if topology is not None else Topology.of(comm)
    usable = wanted and (not topology.spans_nodes or two_levels)
    # Every rank must decide the same way (a rank whose buffers are on a GPU says no for all).
    if not comm.allreduce(int(usable), op=MPI.MIN):
        return None
    return Hierarchy.split(comm, topology)


class SharedBuckets:
    """Staging copies of the buckets in one shared window per node, and the reduction protocol over them.

    Args:
        hierarchy: from ``node_hierarchy`` (the caller frees it, after ``free()``).
        flats: one array per bucket, shaped like its flat buffer (its size and
            dtype size the staging copy; a reduction may view a copy as
            another dtype or fewer elements, see ``start_reduction``).
    """

    def __init__(self, hierarchy: Hierarchy, flats):
        MPI = load_mpi()
        comm = hierarchy.node_comm
        self.hierarchy = hierarchy
        self.comm = comm
        self.rank = comm.Get_rank()
        self.size = comm.Get_size()
        self.parts = hierarchy.parts
        self.cross = hierarchy.cross
        self.owned = owned_slices(self.parts, self.size, self.rank)
        self.shapes = [(flat.dtype, flat.size) for flat in flats]
        layout, total = _layout([flat.nbytes for flat in flats])
        self.window = MPI.Win.Allocate_shared(total, 1, comm=comm)
        self.window.Lock_all(MPI.MODE_NOCHECK)  # a passive epoch for the whole life: Win_sync needs one
        self.flags = []
        self.regions = []  # regions[rank][bucket index] -> that rank's staging bytes
        for rank in range(self.size):
            memory, _ = self.window.Shared_query(rank)
            raw = np.frombuffer(memory, dtype=np.uint8, count=total)
            flags = raw[: len(flats) * 3 * 8].view(np.int64).reshape(len(flats), 3)
            if rank == self.rank:
                flags[...] = 0
            self.flags.append(flags)
            self.regions.append([raw[start : start + nbytes] for start, nbytes in layout])
        self._in_flight = []  # reductions started and not yet copied out, in launch order
        self.comm.Barrier()  # every rank's flags are zero before anyone reads them

    def staging_view(self, index: int, dtype=None, count: int | None = None):
        """This rank's staging copy of bucket ``index``, flat (default: the dtype and size of its flat array)."""
        own_dtype, own_count = self.shapes[index]
        dtype = own_dtype if dtype is None else dtype
        return self._view(self.rank, index, dtype, own_count if count is None else count)

    def wait_until_writable(self, index: int, iteration: int, timeout) -> None:
        """Wait until every rank copied this rank's staging copy of the previous iteration."""
        self._wait(lambda: self.writable(index, iteration), index, "finish the previous reduction", timeout)

    def writable(self, index: int, iteration: int) -> bool:
        """Whether every rank of the node copied out iteration ``iteration - 1`` of bucket ``index``."""
        return self._all_at_least(index, COPIED, iteration - 1)

    def mark_ready(self, index: int, iteration: int) -> None:
        """Step 1: this rank's staging copy of bucket ``index`` holds iteration ``iteration``."""
        self._announce(index, READY, iteration)

    def release_staging(self, index: int, iteration: int) -> None:
        """This rank reduced bucket ``index`` another way this iteration: its staging copy may be reused.

        Only ``COPIED`` is announced, so a rank still expecting a shared-memory
        reduction waits (and times out) instead of reading unreduced data.
        """
        self._announce(index, COPIED, iteration)

    def start_reduction(self, index: int, iteration: int, out, scale: float = 1.0, op: str = "sum") -> Future:
        """Step 1 for bucket ``index`` now; the returned Future does steps 2-4 when tested or waited for.

        Args:
            index, iteration: the bucket, and how many reductions of it were started (this one included).
            out: a flat CPU array: the staging copies are read as its dtype and
                size (at most the bucket's capacity); it receives the result.
            scale: multiplies the node's sum of each slice (``1 / world size`` averages).
            op: ``"sum"``, ``"product"``, ``"min"`` or ``"max"`` (a ``ReduceOp`` value).

        The Future's value is ``out``. ``wait(timeout)`` raises TimeoutError
        when some rank does not reach this bucket in time.
        """
        reduction = _Reduction(index, iteration, out, scale, op,
                               [self._view(rank, index, out.dtype, out.size) for rank in range(self.size)],
                               _cut(out.size, self.parts))
        self.mark_ready(index, iteration)
        self._in_flight.append(reduction)

        # The Future calls these only while it is not done.
        def poll() -> None:
            if self._progress(reduction):
                future.set_result(out)

        def block(timeout) -> None:
            self._wait(lambda: self._progress(reduction), index, "reduce it", timeout, iteration)
            future.set_result(out)

        future = Future(poll=poll, block=block)
        return future

    def free(self) -> None:
        """Release the window (collective over the node)."""
        self._in_flight = []
        self.window.Unlock_all()
        self.window.Free()

    # -- the steps -------------------------------------------------------------------------

    def progress(self) -> None:
        """Advance every reduction in flight as far as it can go now (their Futures complete when tested)."""
        self._progress(None)

    def _progress(self, target) -> bool:
        """Advance the reductions in flight, in launch order, up to ``target`` (None: all); True once it is copied."""
        may_cross = True  # every earlier reduction started its cross-node step: this one may start its own
        for reduction in self._in_flight:
            # On one node there is no cross-node step to keep in order: buckets advance independently.
            may_cross = self._advance(reduction, may_cross) or not self.cross
            if reduction is target:
                break
        self._in_flight = [r for r in self._in_flight if not r.copied]
        return target is None or target.copied

    def _advance(self, r, may_cross: bool) -> bool:
        """Do what can be done now of steps 2-4 for ``r``; returns whether its cross-node step has started."""
        if not r.summed:
            if not self._all_at_least(r.index, READY, r.iteration):
                return False
            self._sum_my_slices(r)
            r.summed = True
        if r.requests is None:
            if not may_cross:
                return False
            r.requests = self._start_crossing(r)
        if not r.reduced:
            if r.requests and not load_mpi().Request.Testall(r.requests):
                return True
            r.requests = []
            self._announce(r.index, REDUCED, r.iteration)
            r.reduced = True
        if not self._all_at_least(r.index, REDUCED, r.iteration):
            return True
        self._gather(r)
        self._announce(r.index, COPIED, r.iteration)
        r.copied = True
        return True

    def _sum_my_slices(self, r) -> None:
        self.window.Sync()
        ufunc = _UFUNCS[r.op]
        mine = r.copies[self.rank]
        for part in self.owned:
            start, stop = r.slices[part]
            # Chunk by chunk, so that the partial results stay in cache while they are scaled.
            for begin in range(start, stop, _CHUNK):
                end = min(begin + _CHUNK, stop)
                total = mine[begin:end]
                for rank, copy in enumerate(r.copies):
                    if rank != self.rank:
                        ufunc(total, copy[begin:end], out=total)
                if r.scale != 1.0:
                    np.multiply(total, r.scale, out=total)

    def _start_crossing(self, r) -> list:
        """Step 3 across nodes: one ``Iallreduce`` per owned slice, in place (none on one node)."""
        if not self.cross:
            return []
        MPI = load_mpi()
        mpi_op = {"sum": MPI.SUM, "product": MPI.PROD, "min": MPI.MIN, "max": MPI.MAX}[r.op]
        mine = r.copies[self.rank]
        requests = []
        for part in self.owned:
            start, stop = r.slices[part]
            requests.append(self.cross[part].Iallreduce(MPI.IN_PLACE, mine[start:stop], mpi_op))
        return requests

    def _gather(self, r) -> None:
        self.window.Sync()
        for part, (start, stop) in enumerate(r.slices):
            r.out[start:stop] = r.copies[part % self.size][start:stop]

    def _view(self, rank: int, index: int, dtype, count: int):
        dtype = np.dtype(dtype)
        region = self.regions[rank][index]
        nbytes = count * dtype.itemsize
        if nbytes > region.nbytes:
            raise ValueError(
                f"bucket {index}: {count} elements of {dtype} ({nbytes} bytes) do not fit its "
                f"{region.nbytes}-byte staging copy"
            )
        return region[:nbytes].view(dtype)

    def _announce(self, index: int, step: int, iteration: int) -> None:
        self.window.Sync()  # the data written before this flag is visible before the flag
        self.flags[self.rank][index, step] = iteration
        self.window.Sync()

    def _all_at_least(self, index: int, step: int, iteration: int) -> bool:
        self.window.Sync()
        return all(flags[index, step] >= iteration for flags in self.flags)

    def _wait(self, condition, index, what, timeout, iteration=None) -> None:
        if waiting.wait_until(condition, timeout, FLAG_BACKOFF):
            return
        late = [r for r, f in enumerate(self.flags) if iteration is not None and f[index, READY] < iteration]
        raise TimeoutError(
            f"DistributedDataParallel: bucket {index} could not {what} within {timeout:.1f} s"
            + (f"; node ranks {late} never finished their gradients for it" if late else "")
            + (" (or a rank on another node did not reach it)" if self.cross else "")
            + " (a diverged or dead rank?)"
        )


class _Reduction:
    """One bucket's reduction in flight: its buffers and which of steps 2-4 are done."""

    __slots__ = ("index", "iteration", "out", "scale", "op", "copies", "slices", "summed", "requests", "reduced",
                 "copied")

    def __init__(self, index, iteration, out, scale, op, copies, slices):
        if op not in _UFUNCS:
            raise ValueError(f"shared-memory reduction: op must be one of {sorted(_UFUNCS)}, got {op!r}")
        self.index, self.iteration, self.out, self.scale, self.op = index, iteration, out, scale, op
        self.copies = copies  # each node rank's staging copy, viewed as ``out``'s dtype and size
        self.slices = slices
        self.summed = False
        self.requests = None  # the cross-node requests once started ([] on one node or once complete)
        self.reduced = False
        self.copied = False


def _layout(capacities):
    """Byte offsets and sizes of each bucket's staging copy after the flags (64-byte aligned), and the total."""
    offset = _round_up(len(capacities) * 3 * 8)
    layout = []
    for nbytes in capacities:
        layout.append((offset, nbytes))
        offset += _round_up(nbytes)
    return layout, max(offset, _ALIGN)


def _round_up(n: int) -> int:
    return (n + _ALIGN - 1) // _ALIGN * _ALIGN


def _cut(n: int, parts: int):
    """``parts`` contiguous ``(start, stop)`` ranges covering ``range(n)``, sizes differing by at most one."""
    bounds = [n * i // parts for i in range(parts + 1)]
    return list(zip(bounds[:-1], bounds[1:]))
