"""Ring allreduce written out with point-to-point messages, for teaching.

MPI's ``Allreduce`` hides the algorithm; this module spells out the one
from the lecture (and from NCCL, Horovod and Baidu's allreduce): N ranks
stand in a ring, each sends only to its right neighbour and receives only
from its left one, and the flat buffer is cut into N chunks.

Worked example, N = 3 ranks holding ``a``, ``b``, ``c``, each cut into
chunks 0, 1, 2 (``a0`` is chunk 0 of rank 0's buffer)::

    start                 rank 0: a0 a1 a2    rank 1: b0 b1 b2    rank 2: c0 c1 c2

    Phase 1, reduce-scatter (N-1 = 2 steps). At step s, rank r sends chunk
    (r - s) mod N to rank r+1 and adds the chunk (r - s - 1) mod N it
    receives from rank r-1 into its own copy:

    step 0  0→1: a0  1→2: b1  2→0: c2
                          rank 0: a0 a1 a2+c2  rank 1: a0+b0 b1 b2  rank 2: c0 b1+c1 c2
    step 1  0→1: a2+c2  1→2: a0+b0  2→0: b1+c1
                          rank 0: a0 Σ1 a2+c2  rank 1: a0+b0 b1 Σ2  rank 2: Σ0 b1+c1 c2

    Now rank r holds the complete sum Σ of chunk (r + 1) mod N.

    Phase 2, all-gather (N-1 = 2 steps). At step s, rank r sends chunk
    (r + 1 - s) mod N, which is complete, to rank r+1, and *overwrites* the
    chunk (r - s) mod N it receives:

    step 0  0→1: Σ1  1→2: Σ2  2→0: Σ0
    step 1  0→1: Σ0  1→2: Σ1  2→0: Σ2
                          every rank: Σ0 Σ1 Σ2

Why it is the algorithm of choice for large buffers: every rank sends and
receives 2(N-1)/N times the buffer, independently of N, so the time is
bounded by the bandwidth of one link rather than growing with the number
of ranks; the price is 2(N-1) message latencies, so small buffers are
faster with tree algorithms (recursive doubling), which MPI picks for them.

Details this implementation takes care of:

* Uneven sizes: chunks are ``numpy.array_split``'s (sizes differ by at
  most one element; with fewer elements than ranks some chunks are empty
  and their messages carry nothing).
* Each step is one ``Sendrecv`` (send right and receive left at once), so
  no ordering of sends and receives around the ring can deadlock.
* The reduction happens here, in NumPy or CuPy, not in MPI: messages are
  raw bytes (``MPI.BYTE``), so any dtype works, float16 included.
* The result is bitwise identical on every rank (the all-gather copies
  one rank's sum to all). It can differ from MPI ``Allreduce`` in the last
  bits for floats, because the additions happen in another order; integer
  sums are exact either way.
"""

from __future__ import annotations

from minigrad import backend
from minigrad.tensor import Tensor
from minigrad_dist.futures import completed_future
from minigrad_dist.mpi import finish_buffer, load_mpi, mpi_buffer
from minigrad_dist.process_group import ProcessGroup, ReduceOp

__all__ = ["RING_TAG", "chunk_bounds", "ring_allreduce", "ring_allreduce_hook"]

# Tag of the ring's messages, apart from other point-to-point traffic on the communicator
# (MPI guarantees tags up to 32767 only).
RING_TAG = 0x5249

_COMBINE = {ReduceOp.SUM: "add", ReduceOp.AVG: "add", ReduceOp.PRODUCT: "multiply",
            ReduceOp.MIN: "minimum", ReduceOp.MAX: "maximum"}


def chunk_bounds(length: int, world_size: int) -> list:
    """``[(start, stop)]`` of the ``world_size`` chunks of a flat buffer of ``length`` elements.

    The first ``length % world_size`` chunks have one element more than the
    others (``numpy.array_split``'s rule); chunks may be empty.
    """
    base, extra = divmod(length, world_size)
    bounds, start = [], 0
    for i in range(world_size):
        stop = start + base + (1 if i < extra else 0)
        bounds.append((start, stop))
        start = stop
    return bounds


def ring_allreduce(array, group: ProcessGroup | None = None, op: ReduceOp = ReduceOp.SUM):
    """Reduce ``array`` across the ranks of ``group`` in place, with the ring algorithm.

    Every rank of the group must call it, with arrays of the same shape and dtype.

    Args:
        array: a contiguous NumPy or CuPy array, or a Tensor (its data is
            reduced); any shape, reduced elementwise.
        group: the process group (default: the default group).
        op: ``SUM``, ``AVG`` (the sum divided by the group size; floats only),
            ``PRODUCT``, ``MIN`` or ``MAX``.

    Returns:
        ``array``, which now holds the reduction on every rank.

    Raises:
        TypeError: ``array`` is not an array or Tensor, ``op`` is not a
            ``ReduceOp``, or ``group`` is not a ProcessGroup.
        ValueError: ``array`` is not contiguous.
        RuntimeError: AVG of a non-float array (PyTorch's class: the mean
            cannot be cast back), or no ``group`` given and the default
            group is not initialized.
    """
    data = array.array if isinstance(array, Tensor) else array
    if not backend.is_array(data):
        raise TypeError(
            f"ring_allreduce: expected a NumPy/CuPy array or a Tensor, got {type(array).__name__}"
        )
    if not isinstance(op, ReduceOp):
        raise TypeError(f"ring_allreduce: op must be a ReduceOp, got {op!r}")
    if not data.flags.c_contiguous:
        raise ValueError("ring_allreduce: the array must be contiguous (make a contiguous copy first)")
    if op is ReduceOp.AVG and data.dtype.kind not in "fc":
        raise RuntimeError(f"ring_allreduce: ReduceOp.AVG needs a floating point array, got dtype {data.dtype}")
    group = _resolve_group(group)
    _reduce(data, group, op)
    return array


def ring_allreduce_hook(process_group, bucket):
    """DDP comm hook: average the bucket with ``ring_allreduce`` (register with ``register_comm_hook``).

    The buffer is divided by the world size first (as ``allreduce_hook``
    does), then summed around the ring. The ring runs to completion inside
    the hook, so unlike the built-in hooks it does not overlap with the rest
    of the backward pass: this hook is for learning and comparison.

    Args:
        process_group: the group to average over (None: the default group).
        bucket: the ``GradBucket`` to reduce.

    Returns:
        A completed ``Future`` holding the averaged flat buffer.
    """
    group = _resolve_group(process_group)
    buffer = bucket.buffer().array
    xp = backend.get_array_module(buffer)
    xp.divide(buffer, group.size(), out=buffer)
    ring_allreduce(buffer, group, ReduceOp.SUM)
    return completed_future(buffer)


def _resolve_group(group):
    if group is None:
        from minigrad_dist import collectives  # noqa: PLC0415  (collectives imports the algorithms package)

        return collectives.get_default_group()
    if not isinstance(group, ProcessGroup):
        raise TypeError(f"expected a ProcessGroup or None, got {type(group).__name__}")
    return group


def _reduce(array, group, op) -> None:
    """Run the ring on ``array`` (staged through the host if MPI cannot read it), then divide for AVG."""
    world = group.size()
    if world > 1 and array.size > 0:
        staged = mpi_buffer(array)  # a host copy when MPI cannot read device memory
        _ring(staged.reshape(-1), group.comm, group.rank(), world, _COMBINE[op])
        finish_buffer(array, staged)
    if op is ReduceOp.AVG:
        xp = backend.get_array_module(array)
        xp.divide(array, world, out=array)


def _ring(flat, comm, rank: int, world: int, combine: str) -> None:
    """The two phases of the module docstring on the 1-D array ``flat``, in place."""
    MPI = load_mpi()
    xp = backend.get_array_module(flat)
    reduce_into = getattr(xp, combine)
    bounds = chunk_bounds(flat.size, world)
    largest = bounds[0][1] - bounds[0][0]
    incoming = xp.empty(largest, dtype=flat.dtype)
    right, left = (rank + 1) % world, (rank - 1) % world

    def exchange(send_index, recv_index):
        """Send chunk ``send_index`` right; return (own chunk ``recv_index``, its copy from the left)."""
        send_start, send_stop = bounds[send_index]
        recv_start, recv_stop = bounds[recv_index]
        received = incoming[: recv_stop - recv_start]
        backend.synchronize(flat)  # MPI reads device memory without waiting for the stream
        comm.Sendrecv([flat[send_start:send_stop], MPI.BYTE], dest=right, sendtag=RING_TAG,
                      recvbuf=[received, MPI.BYTE], source=left, recvtag=RING_TAG)
        return flat[recv_start:recv_stop], received

    for step in range(world - 1):  # reduce-scatter
        mine, received = exchange((rank - step) % world, (rank - step - 1) % world)
        reduce_into(mine, received, out=mine)
    for step in range(world - 1):  # all-gather
        mine, received = exchange((rank + 1 - step) % world, (rank - step) % world)
        mine[...] = received
