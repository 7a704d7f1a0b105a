"""Process groups over MPI: a communicator plus collectives named like PyTorch's.

A ``ProcessGroup`` owns an MPI communicator duplicated from the one it was
built from, so our messages never interleave with the user's own MPI calls.
Each collective works in place on a NumPy or CuPy array and returns a
``Work``: already completed for blocking calls, or wrapping an MPI request
for ``async_op=True`` (MPI's nonblocking collectives).

MPICH advances nonblocking requests only inside MPI calls (see
MPI_NOTES.md), so whoever waits for overlap must call ``Work.is_completed()``
now and then; the DDP Reducer does this from its gradient hooks.

Blocking calls are MPI's blocking collectives, which spin while they wait:
the fastest wait when every rank has a core of its own. Where a node holds
more ranks than cores (``Topology.oversubscribed``), a group starts the nonblocking
collective instead and waits politely (``wait_politely``), so waiting ranks
leave the cores to the ranks that still work (``ProcessGroup.polite_blocking``).

Ranks passed to ProcessGroup methods are ranks *within the group*; the
module-level API in ``collectives.py`` translates PyTorch's global ranks.

A group knows where its ranks sit (``topology``, ``minigrad_dist.topology``).
When it spans several nodes, ``allreduce`` of a large CPU buffer goes through
two levels (``TwoLevelAllreduce``): each node sums through its shared memory,
each rank allreduces its slice with its peers on the other nodes, and each
node gathers the slices back. ``MINIGRAD_DIST_HIERARCHICAL`` (``auto``, ``1``,
``0``), read when the group is built, decides whether it may.
"""

from __future__ import annotations

import collections
import enum

import numpy as np

from minigrad import backend
from minigrad_dist import debug, resources, waiting
from minigrad_dist.ddp.shared_memory import FLAG_BACKOFF, SharedBuckets
from minigrad_dist.futures import Future
from minigrad_dist.mpi import finish_buffer, load_mpi, mpi_buffer
from minigrad_dist.topology import Hierarchy, Topology, hierarchical_setting

# How a collective's wait pauses (waiting.py). It yields first: a large message crosses shared memory in chunks,
# each needing both ranks to poll, so a sleeping rank would stretch every chunk. After 2 ms most polls still
# yield, and one in 64 sleeps 50 us. After 20 ms the peer is computing, not moving chunks: only sleeps, up to
# 1 ms, so a long wait leaves the CPU to the ranks that still work (with ranks outnumbering the cores, 15 ranks
# yielding while one computed took half of the two cores; idle, a tenth).
COLLECTIVE_BACKOFF = waiting.Backoff(
    yield_window=2e-3, first_sleep=5e-5, longest_sleep=5e-5, yields_per_sleep=63, patience=2e-2, idle_sleep=1e-3
)


# All-reduces of at least this many bytes go through two levels when the group spans nodes; smaller ones stay
# one flat MPI call: their cost is latency, and two levels add a few flag round trips
# (benchmarks/bench_topology.py measures both sides of this line).
TWO_LEVEL_MIN_BYTES = 1 << 20
# The staging window of two-level all-reduces: regions of this size, several in flight (TwoLevelAllreduce).
TWO_LEVEL_REGIONS = 4
TWO_LEVEL_REGION_BYTES = 2 << 20
_TWO_LEVEL_DTYPES = (np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.int32), np.dtype(np.int64))


def wait_politely(done, timeout: float | None) -> bool:
    """Call ``done()`` until it returns True, yielding the CPU in between; False if ``timeout`` passed.

    ``waiting.wait_until`` with the collectives' schedule (``COLLECTIVE_BACKOFF``).
    """
    return waiting.wait_until(done, timeout, COLLECTIVE_BACKOFF)


class ReduceOp(enum.Enum):
    """Reduction operations for ``all_reduce``, ``reduce`` and ``reduce_scatter``."""

    SUM = "sum"
    PRODUCT = "product"
    MIN = "min"
    MAX = "max"
    AVG = "avg"


def _mpi_op(op: ReduceOp):
    MPI = load_mpi()
    return {
        ReduceOp.SUM: MPI.SUM,
        ReduceOp.AVG: MPI.SUM,  # divided by the group size on completion
        ReduceOp.PRODUCT: MPI.PROD,
        ReduceOp.MIN: MPI.MIN,
        ReduceOp.MAX: MPI.MAX,
    }[op]


class Work:
    """Handle of a collective; ``wait()`` blocks until it is done.

    ``on_complete`` runs exactly once when the request is seen complete
    (copying staged buffers back, dividing for AVG). With ``spin`` (the
    group's ``spin_wait``), a ``wait()`` without timeout blocks inside MPI.
    """

    __slots__ = ("_request", "_on_complete", "_done", "_result", "op_name", "_future", "_spin", "_buffers")

    def __init__(self, request=None, on_complete=None, result=None, op_name="collective", spin=False, buffers=None):
        self._request = request
        self._on_complete = on_complete
        self._done = request is None
        self._result = result
        self.op_name = op_name
        self._future = None
        self._spin = spin
        # The memory MPI reads and writes until the request completes: mpi4py keeps it alive for some
        # nonblocking calls but not all (not the send buffer of Ireduce_scatter_block), so the Work does.
        self._buffers = buffers
        if self._done and on_complete is not None:
            on_complete()
            self._on_complete = None

    def is_completed(self) -> bool:
        """Test the request (this also drives MPI's progress) and report completion."""
        if not self._done and self._request.Test():
            self._complete()
        return self._done

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the collective is done; returns True.

        Waits politely (``wait_politely``): it tests the request and yields
        the CPU between tests instead of spinning inside MPI, because on a
        machine where ranks share cores a spinning rank slows down the rank
        it is waiting for. Blocks inside MPI instead when built with ``spin``
        and ``timeout`` is None (``MINIGRAD_DIST_WAIT=spin``).

        Args:
            timeout: seconds to wait at most (None: forever).

        Raises:
            TimeoutError: not complete within ``timeout`` (names the operation).
        """
        if self._done:
            return True
        request = self._request
        if self._spin and timeout is None:
            request.Wait()
            self._complete()
            return True
        if not wait_politely(request.Test, timeout):
            raise TimeoutError(
                f"{self.op_name} did not complete within {timeout:.1f} s: some rank of the group "
                "has not called the matching collective (a diverged or dead rank?)"
            )
        self._complete()
        return True

    def result(self):
        """The arrays the collective wrote (in place), once complete."""
        self.wait()
        return self._result

    def get_future(self) -> Future:
        """A ``Future`` completed with ``result()`` when this collective completes."""
        if self._future is None:
            self._future = Future(poll=self.is_completed, block=self.wait)
            if self._done:
                self._future.set_result(self._result)
        return self._future

    def _complete(self):
        self._done = True
        self._buffers = None
        if self._on_complete is not None:
            callback, self._on_complete = self._on_complete, None
            callback()
        if self._future is not None:
            self._future.set_result(self._result)


def _check_buffer(array, fn: str):
    if not array.flags.c_contiguous:
        raise ValueError(f"{fn}: the tensor must be contiguous (call .contiguous() first)")


def _avg_divider(array, size):
    if array.dtype.kind not in "fc":
        raise RuntimeError(f"ReduceOp.AVG needs a floating point tensor, got dtype {array.dtype}; use SUM")

    xp = backend.get_array_module(array)

    def divide():
        xp.divide(array, size, out=array)

    return divide


def _chain(*callbacks):
    callbacks = [c for c in callbacks if c is not None]
    if not callbacks:
        return None
    if len(callbacks) == 1:
        return callbacks[0]

    def run():
        for c in callbacks:
            c()

    return run


class ProcessGroup:
    """A group of MPI ranks that run collectives together.

    Every collective first calls the debug checker when the debug level is
    ``DETAIL`` (``debug.py``: all ranks must make the same call).

    Args:
        comm: an mpi4py communicator; the group duplicates it.
        world_ranks: the global rank of each member, in group-rank order.
        allow_two_level: False for the library's internal groups that only
            carry small control messages (a Reducer's agreement, ZeRO's
            all-gathers): no two-level all-reduce, its communicators or window.
            Every rank must pass the same value.

    Attributes:
        spin_wait: untimed waits block inside MPI instead of polling politely
            (``MINIGRAD_DIST_WAIT=spin``, read when the group is built).
        polite_blocking: blocking collectives (``async_op=False``) start the
            nonblocking MPI call and wait politely, because some node holds
            more ranks of the group than its ranks may use cores
            (``Topology.oversubscribed``) and ``MINIGRAD_DIST_WAIT`` is not ``spin``:
            MPI's blocking calls spin, and a spinning rank takes the core of
            a rank that still works. Every rank makes the same choice (MPI
            matches a blocking collective only with blocking ones).
        topology: where the ranks sit (``minigrad_dist.topology.Topology``).
        two_level: the ``TwoLevelAllreduce`` large all-reduces go through, or
            None (the group is one node, or ``MINIGRAD_DIST_HIERARCHICAL``
            said no when the group was built).

    Raises:
        ValueError: ``MINIGRAD_DIST_HIERARCHICAL`` holds an unknown value.
    """

    def __init__(self, comm, world_ranks=None, *, allow_two_level: bool = True):
        setting = hierarchical_setting()  # first: a bad value raises before any communicator exists
        self.comm = comm.Dup()
        self._rank = self.comm.Get_rank()
        self._size = self.comm.Get_size()
        self.world_ranks = list(world_ranks) if world_ranks is not None else list(range(self._size))
        self.spin_wait = waiting.spin_requested()
        self.debug_checker = None  # made by the first collective checked in debug mode (debug.verify)
        self.topology = Topology.of(self.comm)
        # The topology is the same on every rank; the spin setting may not be: agree (MPI matches a
        # blocking collective only with blocking ones).
        polite = self.topology.oversubscribed and not self.spin_wait
        self.polite_blocking = bool(self.comm.allreduce(int(polite), op=load_mpi().MAX))
        self.two_level = None
        if allow_two_level:
            wanted = self.topology.wants_two_levels(setting)
            # Every rank must decide alike: a rank that alone built the communicators would wait forever.
            agreed = self.comm.allreduce(int(wanted), op=load_mpi().MIN)
            self.two_level = TwoLevelAllreduce(self.comm, self.topology) if agreed else None

    def rank(self) -> int:
        """This process's rank within the group."""
        return self._rank

    def size(self) -> int:
        """Number of ranks in the group."""
        return self._size

    def _next_comm(self):
        """The communicator for the next operation (round-robin groups rotate)."""
        return self.comm

    def destroy(self) -> None:
        """Free the duplicated communicator(s), the two-level ones, and the debug checker's.

        First frees, on every rank, what DDP models over this group dropped
        without ``close()`` left pending (``minigrad_dist.resources.finish``:
        collective when such models were built; bounded wait). Models still
        alive keep their communicators until MPI finalizes: close them first.
        """
        if self.comm is not None:
            resources.finish(self)
        if self.two_level is not None:
            self.two_level.free()
            self.two_level = None
        if self.debug_checker is not None:
            self.debug_checker.free()
            self.debug_checker = None
        if self.comm is not None:
            self.comm.Free()
            self.comm = None

    @staticmethod
    def _started(work: Work, async_op: bool) -> Work:
        """A nonblocking collective's ``work``, waited for here unless the caller asked for ``async_op``."""
        if not async_op:
            work.wait()
        return work

    # -- collectives on arrays ---------------------------------------------------

    def allreduce(self, array, op=ReduceOp.SUM, async_op=False) -> Work:
        """Reduce ``array`` across the group, in place on every rank.

        A CPU buffer of ``TWO_LEVEL_MIN_BYTES`` or more (float32/64, int32/64)
        goes through two levels when the group has a ``two_level``; the
        result is the same, up to the order of the additions.
        """
        _check_buffer(array, "all_reduce")
        if debug.checking():
            debug.verify(self, f"all_reduce({debug.tensor_text(array)}, {op.name})")
        MPI = load_mpi()
        divide = _avg_divider(array, self._size) if op is ReduceOp.AVG else None
        if self.two_level is not None and self.two_level.handles(array):
            request = self.two_level.allreduce(array, "sum" if op is ReduceOp.AVG else op.value)
            work = Work(request, divide, [array], "all_reduce", self.spin_wait)
            if not async_op:
                work.wait()
            return work
        buf = mpi_buffer(array)
        comm = self._next_comm()
        copy_back = None if buf is array else (lambda: finish_buffer(array, buf))
        done = _chain(copy_back, divide)
        if async_op or self.polite_blocking:
            request = comm.Iallreduce(MPI.IN_PLACE, buf, _mpi_op(op))
            return self._started(Work(request, done, [array], "all_reduce", self.spin_wait), async_op)
        comm.Allreduce(MPI.IN_PLACE, buf, _mpi_op(op))
        return Work(None, done, [array], "all_reduce")

    def broadcast(self, array, src: int, async_op=False) -> Work:
        """Copy ``array`` from group rank ``src`` to every rank (in place)."""
        _check_buffer(array, "broadcast")
        if debug.checking():
            debug.verify(self, f"broadcast({debug.tensor_text(array)}, src={self.world_ranks[src]})")
        buf = mpi_buffer(array)
        comm = self._next_comm()
        done = None if buf is array else (lambda: finish_buffer(array, buf))
        if async_op or self.polite_blocking:
            return self._started(Work(comm.Ibcast(buf, root=src), done, [array], "broadcast", self.spin_wait), async_op)
        comm.Bcast(buf, root=src)
        return Work(None, done, [array], "broadcast")

    def allgather(self, outputs, array, async_op=False) -> Work:
        """Every rank's ``array`` into ``outputs[r]`` on every rank."""
        _check_buffer(array, "all_gather")
        if debug.checking():
            debug.verify(self, f"all_gather({debug.tensor_text(array)})")
        xp_empty = _empty_like_stacked(array, self._size)
        send = mpi_buffer(array)
        recv = mpi_buffer(xp_empty)
        comm = self._next_comm()

        def unpack():
            finish_buffer(xp_empty, recv)
            for r, out in enumerate(outputs):
                out[...] = xp_empty[r]

        if async_op or self.polite_blocking:
            request = comm.Iallgather(send, recv)
            work = Work(request, unpack, outputs, "all_gather", self.spin_wait, buffers=(send, recv))
            return self._started(work, async_op)
        comm.Allgather(send, recv)
        return Work(None, unpack, outputs, "all_gather")

    def reduce_scatter(self, output, inputs, op=ReduceOp.SUM, async_op=False) -> Work:
        """Reduce ``inputs[r]`` across ranks; rank r receives the result of slot r in ``output``."""
        _check_buffer(output, "reduce_scatter")
        if debug.checking():
            debug.verify(self, f"reduce_scatter({debug.tensor_text(output)}, inputs={len(inputs)}, {op.name})")
        stacked = _stack(inputs)
        divide = _avg_divider(output, self._size) if op is ReduceOp.AVG else None
        send = mpi_buffer(stacked)
        recv = mpi_buffer(output)
        comm = self._next_comm()
        copy_back = None if recv is output else (lambda: finish_buffer(output, recv))
        done = _chain(copy_back, divide)
        if async_op or self.polite_blocking:
            request = comm.Ireduce_scatter_block(send, recv, _mpi_op(op))
            work = Work(request, done, [output], "reduce_scatter", self.spin_wait, buffers=(send, recv))
            return self._started(work, async_op)
        comm.Reduce_scatter_block(send, recv, _mpi_op(op))
        return Work(None, done, [output], "reduce_scatter")

    def reduce(self, array, dst: int, op=ReduceOp.SUM, async_op=False) -> Work:
        """Reduce ``array`` across ranks into ``array`` on group rank ``dst``."""
        _check_buffer(array, "reduce")
        if debug.checking():
            debug.verify(self, f"reduce({debug.tensor_text(array)}, {op.name}, dst={self.world_ranks[dst]})")
        MPI = load_mpi()
        is_root = self._rank == dst
        divide = _avg_divider(array, self._size) if op is ReduceOp.AVG and is_root else None
        buf = mpi_buffer(array)
        comm = self._next_comm()
        copy_back = None if buf is array or not is_root else (lambda: finish_buffer(array, buf))
        done = _chain(copy_back, divide)
        send = MPI.IN_PLACE if is_root else buf
        recv = buf if is_root else None
        if async_op or self.polite_blocking:
            request = comm.Ireduce(send, recv, _mpi_op(op), root=dst)
            work = Work(request, done, [array], "reduce", self.spin_wait, buffers=(send, recv))
            return self._started(work, async_op)
        comm.Reduce(send, recv, _mpi_op(op), root=dst)
        return Work(None, done, [array], "reduce")

    def gather(self, array, outputs, dst: int, async_op=False) -> Work:
        """Every rank's ``array`` into ``outputs[r]`` on group rank ``dst`` (``outputs`` ignored elsewhere)."""
        _check_buffer(array, "gather")
        if debug.checking():
            debug.verify(self, f"gather({debug.tensor_text(array)}, dst={self.world_ranks[dst]})")
        is_root = self._rank == dst
        stacked = _empty_like_stacked(array, self._size) if is_root else None
        send = mpi_buffer(array)
        recv = mpi_buffer(stacked) if is_root else None
        comm = self._next_comm()

        def unpack():
            if is_root:
                finish_buffer(stacked, recv)
                for r, out in enumerate(outputs):
                    out[...] = stacked[r]

        if async_op or self.polite_blocking:
            request = comm.Igather(send, recv, root=dst)
            work = Work(request, unpack, outputs, "gather", self.spin_wait, buffers=(send, recv))
            return self._started(work, async_op)
        comm.Gather(send, recv, root=dst)
        return Work(None, unpack, outputs, "gather")

    def scatter(self, array, inputs, src: int, async_op=False) -> Work:
        """``inputs[r]`` on group rank ``src`` into ``array`` on rank r."""
        _check_buffer(array, "scatter")
        if debug.checking():
            debug.verify(self, f"scatter({debug.tensor_text(array)}, src={self.world_ranks[src]})")
        is_root = self._rank == src
        send = mpi_buffer(_stack(inputs)) if is_root else None
        recv = mpi_buffer(array)
        comm = self._next_comm()
        done = None if recv is array else (lambda: finish_buffer(array, recv))
        if async_op or self.polite_blocking:
            request = comm.Iscatter(send, recv, root=src)
            work = Work(request, done, [array], "scatter", self.spin_wait, buffers=(send, recv))
            return self._started(work, async_op)
        comm.Scatter(send, recv, root=src)
        return Work(None, done, [array], "scatter")

    def barrier(self, async_op=False) -> Work:
        """Wait until every rank of the group reached the barrier."""
        if debug.checking():
            debug.verify(self, "barrier()")
        comm = self._next_comm()
        if async_op or self.polite_blocking:
            return self._started(Work(comm.Ibarrier(), None, None, "barrier", self.spin_wait), async_op)
        comm.Barrier()
        return Work(None, None, None, "barrier")

    # -- collectives on picklable objects ------------------------------------------

    def allgather_obj(self, obj) -> list:
        """Every rank's ``obj`` as a list indexed by group rank (pickled: trusted job only)."""
        if debug.checking():
            debug.verify(self, "all_gather_object()")
        return self._next_comm().allgather(obj)

    def bcast_obj(self, obj, src: int):
        """``obj`` from group rank ``src``, returned on every rank."""
        if debug.checking():
            debug.verify(self, f"broadcast_object_list(src={self.world_ranks[src]})")
        return self._next_comm().bcast(obj, root=src)

    def gather_obj(self, obj, dst: int):
        """Every rank's ``obj`` as a list on ``dst`` (None elsewhere)."""
        if debug.checking():
            debug.verify(self, f"gather_object(dst={self.world_ranks[dst]})")
        return self._next_comm().gather(obj, root=dst)

    def scatter_obj(self, objs, src: int):
        """``objs[r]`` from ``src`` to rank r."""
        if debug.checking():
            debug.verify(self, f"scatter_object_list(src={self.world_ranks[src]})")
        return self._next_comm().scatter(objs, root=src)


class TwoLevelAllreduce:
    """All-reduces of a group that spans nodes, in two levels through each node's shared memory.

    The protocol is ``minigrad_dist.ddp.shared_memory``'s (steps 1-4), over a
    window of ``TWO_LEVEL_REGIONS`` staging regions of
    ``TWO_LEVEL_REGION_BYTES`` per rank, made with the group: an all_reduce
    then never waits inside a collective allocation (which has no timeout).
    A buffer goes through the regions in chunks, in call order, round-robin:
    a chunk starts once every rank of the node has copied the previous
    result out of its region, so while one chunk crosses nodes the next is
    being summed. Steps 2-4 run as the calls' ``Work`` is tested.

    Args:
        comm: the group's communicator.
        topology: its ``Topology``.
    """

    def __init__(self, comm, topology: Topology):
        self.hierarchy = Hierarchy.split(comm, topology)
        region = np.empty(TWO_LEVEL_REGION_BYTES, dtype=np.uint8)
        self.shared = SharedBuckets(self.hierarchy, [region] * TWO_LEVEL_REGIONS)
        self.rounds = [0] * TWO_LEVEL_REGIONS  # chunks started through each region
        self.next_region = 0
        self.waiting = collections.deque()  # (request, start, stop): chunks not started yet, in call order

    def handles(self, array) -> bool:
        """Whether ``array`` goes through two levels (a large CPU buffer of a supported dtype)."""
        return (
            array.nbytes >= TWO_LEVEL_MIN_BYTES
            and array.dtype in _TWO_LEVEL_DTYPES
            and backend.device_of(array) == "cpu"
        )

    def allreduce(self, array, op: str) -> _TwoLevelRequest:
        """Queue the in-place reduction of ``array`` by ``op`` (a ``ReduceOp`` value, not AVG): an MPI-like request."""
        flat = array.reshape(-1)
        step = TWO_LEVEL_REGION_BYTES // flat.itemsize
        bounds = list(range(0, flat.size, step))
        request = _TwoLevelRequest(self, flat, op, len(bounds))
        self.waiting.extend((request, start, min(start + step, flat.size)) for start in bounds)
        self.start_due()
        return request

    def start_due(self) -> None:
        """Advance the chunks in flight; start, in order, the waiting chunks whose region is free everywhere."""
        self.shared.progress()
        while self.waiting:
            region = self.next_region
            iteration = self.rounds[region] + 1
            if not self.shared.writable(region, iteration):
                return
            request, start, stop = self.waiting.popleft()
            piece = request.flat[start:stop]
            self.shared.staging_view(region, piece.dtype, piece.size)[...] = piece
            request.futures.append(self.shared.start_reduction(region, iteration, piece, 1.0, request.op))
            self.rounds[region] = iteration
            self.next_region = (region + 1) % TWO_LEVEL_REGIONS

    def free(self) -> None:
        """Free the window and the communicators (collective over the group)."""
        self.shared.free()
        self.hierarchy.free()


class _TwoLevelRequest:
    """One queued two-level all-reduce, with the ``Test``/``Wait`` of an MPI request (for ``Work``)."""

    def __init__(self, owner: TwoLevelAllreduce, flat, op: str, chunks: int):
        self.owner = owner
        self.flat = flat
        self.op = op
        self.chunks = chunks
        self.futures = []  # one per chunk started

    def Test(self) -> bool:  # noqa: N802  (the MPI request's name, which Work calls)
        """Advance every queued or started two-level reduction; True once this one's result is in the array."""
        self.owner.start_due()
        return len(self.futures) == self.chunks and all(future.done() for future in self.futures)

    def Wait(self) -> None:  # noqa: N802
        """Test politely until complete (no timeout: ``Work.wait(timeout)`` is the timed wait)."""
        waiting.wait_until(self.Test, None, FLAG_BACKOFF)


class RoundRobinProcessGroup(ProcessGroup):
    """A process group that spreads consecutive collectives over several duplicate communicators.

    The VLDB DDP paper's evaluation uses this to let independent bucket
    allreduces proceed on separate communication channels.

    Args:
        comm: the communicator to duplicate.
        num_channels: how many duplicates to rotate through.
    """

    def __init__(self, comm, world_ranks=None, num_channels: int = 2):
        if num_channels < 1:
            raise ValueError(f"num_channels must be >= 1, got {num_channels}")
        super().__init__(comm, world_ranks)
        self.channels = [self.comm] + [self.comm.Dup() for _ in range(num_channels - 1)]
        self._turn = 0

    def _next_comm(self):
        comm = self.channels[self._turn]
        self._turn = (self._turn + 1) % len(self.channels)
        return comm

    def destroy(self) -> None:
        for comm in self.channels[1:]:
            comm.Free()
        self.channels = []
        super().destroy()


def _empty_like_stacked(array, n):
    xp = backend.get_array_module(array)
    return xp.empty((n,) + array.shape, dtype=array.dtype)


def _stack(arrays):
    arrays = list(arrays)
    xp = backend.get_array_module(*arrays)
    return xp.ascontiguousarray(xp.stack(arrays)) if arrays else np.empty(0)
