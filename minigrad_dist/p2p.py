"""Point-to-point communication, as ``torch.distributed``: ``send``, ``recv``, ``isend``, ``irecv``, batches.

Ranks are global ranks (``dst``/``src``), or ranks within ``group``
(``group_dst``/``group_src``), as in PyTorch. Each group made by
``init_process_group``/``new_group`` has a communicator of its own for
these messages (``collectives.p2p_comm``), so user tags never meet the
collectives' traffic.

The wire format: one contiguous MPI message per tensor, a small header
(magic number, the sender's group rank, dtype, shape) followed by the
tensor's bytes. Each side copies the tensor once (into the message, out of
it): a derived datatype over the header and the tensor where they lie
would spare the copies, but MPICH moves such a message in small pieces,
each waiting for an MPI call of the sender, so a receiver waited for
the sender's next ``wait()`` however early the send was posted. MPI's own
matching rules order messages (same source, same tag: first sent, first
received; ``src=None`` receives from any source). The
receiver reads the header to learn the sender's rank, and checks the
sender's shape and dtype against its own tensor: a mismatch raises a
``RuntimeError`` naming both instead of leaving garbage behind (a longer
message is cut by MPI, a shorter or differently typed one is caught by
the header).

Waits are polite (``Work.wait``: test, yield, sleep; see ``waiting``), not a
core-spinning blocking MPI call (unless ``MINIGRAD_DIST_WAIT=spin``, see
``ProcessGroup.spin_wait``). GPU tensors are staged through host memory.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from minigrad import backend
from minigrad_dist import collectives
from minigrad_dist.mpi import load_mpi
from minigrad_dist.process_group import Work

__all__ = ["P2POp", "P2PWork", "batch_isend_irecv", "irecv", "isend", "recv", "send"]

_MAGIC = 0x6D67_7032  # "mgp2"
_MAX_DIMS = 32
_HEADER_LEN = 4 + _MAX_DIMS  # magic, sender's group rank, dtype code, ndim, shape


class P2PWork(Work):
    """The handle of an ``isend``/``irecv``: ``wait()``, ``is_completed()``, and the sender's rank.

    ``wait()`` raises the receive's error (a size or dtype mismatch) every
    time it is called once the message has arrived. ``spin``: as for ``Work``.
    """

    __slots__ = ("_error", "_source")

    def __init__(self, request, on_complete, result, op_name, spin=False, buffers=None):
        self._error = None
        self._source = None
        super().__init__(request, on_complete, result, op_name, spin, buffers)

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until the message is sent or received (see ``Work.wait``); returns True.

        Raises:
            RuntimeError: the received message does not fit the tensor.
            TimeoutError: not complete within ``timeout`` seconds.
        """
        super().wait(timeout)
        if self._error is not None:
            raise self._error
        return True

    def source_rank(self) -> int:
        """The global rank that sent the message (for ``irecv``, after ``wait()``).

        Raises:
            RuntimeError: called on a send, or before the message arrived.
        """
        if self._source is None:
            raise RuntimeError("source_rank(): only a completed irecv knows its sender; call wait() first")
        return self._source


class _CheckedRequest:
    """An MPI receive request whose error (MPI_ERR_TRUNCATE: the message was longer) is kept, not raised."""

    __slots__ = ("request", "error")

    def __init__(self, request):
        self.request = request
        self.error = None

    def Test(self) -> bool:  # noqa: N802  (the name Work calls, after mpi4py's)
        try:
            return self.request.Test()
        except load_mpi().Exception as error:
            self.error = error
            return True

    def Wait(self) -> None:  # noqa: N802
        try:
            self.request.Wait()
        except load_mpi().Exception as error:
            self.error = error


def isend(tensor, dst=None, group=None, tag=0, group_dst=None) -> P2PWork:
    """Start sending ``tensor`` to global rank ``dst`` (or to ``group_dst`` within ``group``).

    Do not write to ``tensor`` until the returned work is complete.

    Raises:
        TypeError: ``tensor`` is not a Tensor/array, or a rank or tag is not an int.
        ValueError: no destination, both ``dst`` and ``group_dst``, a rank
            outside the group, this process's own rank, a non-contiguous
            tensor, or more than 32 dimensions.
        RuntimeError: a negative tag, or a group not made by ``init_process_group``/``new_group``.
    """
    g = collectives._group(group)
    peer = _peer(g, dst, group_dst, "isend", "dst")
    comm = collectives.p2p_comm(g)
    _check_tag(tag, "isend", comm)
    array = _contiguous(tensor, "isend")
    message = _message_for(array)
    header, data = _parts(message, array)
    header[:4] = (_MAGIC, g.rank(), collectives.dtype_code(array.dtype, "isend"), array.ndim)
    header[4 : 4 + array.ndim] = array.shape
    data[...] = array if backend.device_of(array) == "cpu" else _staged_copy(array)
    request = comm.Isend(message, peer, tag)
    return P2PWork(request, None, [array], "isend", g.spin_wait, buffers=(message,))


def irecv(tensor, src=None, group=None, tag=0, group_src=None) -> P2PWork:
    """Start receiving into ``tensor`` from global rank ``src`` (any rank when both ``src`` and ``group_src`` are None).

    ``work.source_rank()`` is the sender's global rank once ``wait()`` returned.

    Raises:
        TypeError, ValueError, RuntimeError: as ``isend``; ``wait()`` raises
            ``RuntimeError`` when the message's shape or dtype differs from ``tensor``'s.
    """
    g = collectives._group(group)
    peer = _peer(g, src, group_src, "irecv", "src", any_source=True)
    comm = collectives.p2p_comm(g)
    _check_tag(tag, "irecv", comm)
    array = _contiguous(tensor, "irecv")
    message = _message_for(array)
    header, data = _parts(message, array)
    header[0] = 0  # a message shorter than a header leaves no magic number behind
    request = _CheckedRequest(comm.Irecv(message, peer, tag))

    def check():
        problem = _receive_problem(header, array, request.error, g, tag)
        if problem is not None:
            work._error = RuntimeError(problem)
            return
        if backend.device_of(array) == "cpu":
            array[...] = data
        else:
            array[...] = backend.to_device(data, backend.device_of(array))
        work._source = g.world_ranks[int(header[1])]

    work = P2PWork(request, check, [array], "irecv", g.spin_wait, buffers=(message,))
    return work


def send(tensor, dst=None, group=None, tag=0, group_dst=None) -> None:
    """Send ``tensor`` to global rank ``dst`` (or ``group_dst``); returns once it is sent.

    Honours the collective timeout (``init_process_group(timeout=...)``).

    Raises:
        As ``isend``; ``TimeoutError`` when the receiver does not take the
        message within the timeout.
    """
    isend(tensor, dst, group, tag, group_dst).wait(collectives._world.timeout)


def recv(tensor, src=None, group=None, tag=0, group_src=None) -> int:
    """Receive into ``tensor`` from global rank ``src`` (any rank when None); returns the sender's global rank.

    Raises:
        As ``irecv``; ``RuntimeError`` when the sender's tensor has another
        shape or dtype, ``TimeoutError`` after the collective timeout.
    """
    work = irecv(tensor, src, group, tag, group_src)
    work.wait(collectives._world.timeout)
    return work.source_rank()


@dataclasses.dataclass(eq=False, repr=False)
class P2POp:
    """One operation of a ``batch_isend_irecv``: ``P2POp(dist.isend, tensor, peer)`` or with ``dist.irecv``.

    Args:
        op: ``isend`` or ``irecv`` (of this module / ``minigrad_dist``).
        tensor: the tensor to send or to receive into.
        peer: the other side's global rank (or ``group_peer`` within ``group``).
        group, tag: as for ``isend``/``irecv``.

    Raises:
        ValueError: ``op`` is neither ``isend`` nor ``irecv``.
    """

    op: object
    tensor: object
    peer: int | None = None
    group: object = None
    tag: int = 0
    group_peer: int | None = None

    def __post_init__(self):
        if self.op is not isend and self.op is not irecv:
            raise ValueError(f"P2POp: op must be minigrad_dist.isend or minigrad_dist.irecv, got {self.op!r}")

    def __repr__(self):
        return f"P2POp({self.op.__name__}, peer={self.peer}, group_peer={self.group_peer}, tag={self.tag})"


def batch_isend_irecv(p2p_op_list) -> list:
    """Start every operation of ``p2p_op_list`` (in order) and return their works.

    Sends and receives of a batch may pair up in any order between ranks
    (e.g. every rank sends to its right and receives from its left): all are
    posted before any is waited for.

    Raises:
        ValueError: the list is empty or holds something other than ``P2POp``.
    """
    ops = list(p2p_op_list) if isinstance(p2p_op_list, (list, tuple)) else None
    if not ops or not all(isinstance(op, P2POp) for op in ops):
        raise ValueError(
            f"batch_isend_irecv: p2p_op_list must be a non-empty list of P2POp, got {p2p_op_list!r}"
        )
    return [op.op(op.tensor, op.peer, op.group, op.tag, op.group_peer) for op in ops]


# -- helpers ------------------------------------------------------------------------


def _peer(group, rank, group_rank, fn, what, any_source=False) -> int:
    """The peer's rank within ``group`` (MPI.ANY_SOURCE for an open receive)."""
    if rank is not None and group_rank is not None:
        raise ValueError(f"{fn}: pass {what} (a global rank) or group_{what} (a rank in the group), not both")
    if rank is None and group_rank is None:
        if any_source:
            return load_mpi().ANY_SOURCE
        raise ValueError(f"{fn}: pass {what} (a global rank) or group_{what} (a rank in the group)")
    if group_rank is not None:
        if not collectives._is_rank_like(group_rank):
            raise TypeError(f"{fn}: group_{what} must be an int, got {type(group_rank).__name__}")
        if not 0 <= group_rank < group.size():
            raise ValueError(f"{fn}: group_{what}={group_rank} is out of range for a group of {group.size()} ranks")
        peer = int(group_rank)
    else:
        peer = collectives._group_rank(group, rank, fn, what)
    if peer == group.rank():
        side = "destination" if what == "dst" else "source"
        raise ValueError(
            f"{fn}: invalid {side} rank: {what} is this process's own rank ({group.world_ranks[peer]}); "
            "a rank cannot send to or receive from itself"
        )
    return peer


def _check_tag(tag, fn, comm) -> None:
    if not collectives._is_rank_like(tag):
        raise TypeError(f"{fn}: tag must be an int, got {type(tag).__name__}")
    if tag < 0:
        raise RuntimeError(f"{fn}: tag must be nonnegative, got {tag}")
    upper = comm.Get_attr(load_mpi().TAG_UB)
    if upper is not None and tag > upper:
        raise ValueError(f"{fn}: tag {tag} is above the MPI library's limit (MPI_TAG_UB = {upper})")


def _contiguous(tensor, fn):
    array = collectives._array(tensor, fn)
    if not array.flags.c_contiguous:
        raise ValueError(f"{fn}: the tensor must be contiguous (call .contiguous() first)")
    if array.ndim > _MAX_DIMS:
        raise ValueError(f"{fn}: tensors of more than {_MAX_DIMS} dimensions are not supported, got {array.ndim}")
    return array


def _staged_copy(array):
    backend.synchronize(array)
    return backend.to_numpy(array)


def _message_for(array):
    """A host buffer for the message of ``array``: the int64 header, then room for ``array``'s bytes."""
    return np.empty(_HEADER_LEN * 8 + array.nbytes, dtype=np.uint8)


def _parts(message, array):
    """The header (int64) and the tensor's place (``array``'s shape and dtype) inside ``message``, as views."""
    header = message[: _HEADER_LEN * 8].view(np.int64)
    data = message[_HEADER_LEN * 8 :].view(array.dtype).reshape(array.shape)
    return header, data


def _receive_problem(header, array, error, group, tag):
    """Why the message received into ``header`` + ``array`` is not a match (None when it is)."""
    MPI = load_mpi()
    if error is not None and error.Get_error_class() != MPI.ERR_TRUNCATE:
        return f"irecv: MPI failed to receive (tag {tag}): {error}"
    if header[0] != _MAGIC:
        return f"irecv: the message (tag {tag}) is not a minigrad_dist tensor message"
    sender = group.world_ranks[int(header[1])]
    dtype = collectives.dtype_of_code(int(header[2]))
    shape = tuple(int(d) for d in header[4 : 4 + int(header[3])])
    if shape != array.shape or dtype != array.dtype:
        return (
            f"irecv: rank {sender} sent a tensor of shape {shape} and dtype {dtype} (tag {tag}), but the "
            f"receiving tensor has shape {tuple(array.shape)} and dtype {array.dtype}; receive into a tensor "
            "of the sent shape and dtype"
        )
    return None
