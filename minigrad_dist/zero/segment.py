"""One segment of a sharded optimizer: its parameters, its layout, this rank's pieces, and its all-gather.

A ``Segment`` (a parameter group of one dtype, or one DDP bucket) does, in
the order a step needs them:

1. **Pieces as tensors.** Each piece this rank owns (``flat_shard.Piece``)
   becomes a leaf Tensor that *views* the parameter's memory, so the local
   optimizer updates the parameters in place and nothing goes stale when
   someone else writes them (DDP's broadcast, ``load_state_dict``).
2. **Gradients.** The pieces' ``.grad`` become views of the parameters'
   ``.grad`` (standalone), of a reduced DDP bucket buffer (ZeRO-1
   overlapped) or of this rank's reduce-scattered shard (ZeRO-2).
3. **All-gather.** After the local step, this rank's pieces are packed into
   one shard of ``k`` elements, one collective brings every rank's shard,
   and the other ranks' pieces are written into the parameters (their
   version counters bumped, as an in-place optimizer step does). A segment
   with a single owner is broadcast from it instead.

The flat collectives at the bottom hand MPI the shard buffers directly
(``ProcessGroup.reduce_scatter`` takes a list and stacks it, a copy ZeRO-2
cannot afford on every bucket).
"""

from __future__ import annotations

from minigrad import backend
from minigrad.tensor import Tensor
from minigrad.views import bump_version
from minigrad_dist import debug
from minigrad_dist.mpi import finish_buffer, mpi_buffer
from minigrad_dist.process_group import ProcessGroup, ReduceOp, Work, _mpi_op
from minigrad_dist.zero.flat_shard import ShardLayout


class Segment:
    """The parameters of one segment and this rank's share of them (see the module docstring).

    Args:
        params: the segment's parameters (one dtype and device, contiguous), in flat order.
        layout: the ``ShardLayout`` of their concatenation.
        rank: this rank (its pieces are ``layout.pieces[rank]``).
        own_params: the pieces are whole parameters and the local optimizer
            should hold the parameters themselves (``partition="parameters"``:
            a closure that recomputes ``.grad``, as LBFGS's, then reaches it).

    Attributes:
        pieces: this rank's ``Piece`` list.
        local: one leaf Tensor per piece, viewing the parameter's memory
            (shaped like the parameter when the piece is whole, else 1-D);
            with ``own_params``, the parameters themselves.
        param_offsets: where each parameter starts in the concatenation.
    """

    def __init__(self, params, layout: ShardLayout, rank: int, own_params: bool = False):
        self.params = list(params)
        self.layout = layout
        self.rank = rank
        self.pieces = layout.pieces[rank]
        first = self.params[0]
        self.dtype, self.device = first.dtype, first.device
        self.xp = backend.module_for_device(first.device)
        self.param_offsets = []
        total = 0
        for p in self.params:
            self.param_offsets.append(total)
            total += p.array.size
        self.own_params = own_params
        if own_params:
            self.local = [self.params[piece.param] for piece in self.pieces]
        else:
            self.local = [Tensor._make(self._piece_view(piece), False, None, 0) for piece in self.pieces]
        self._bases = [p.array for p in self.params]

    # -- step 1: pieces as tensors ------------------------------------------------------

    def _piece_view(self, piece):
        array = self.params[piece.param].array
        if piece.numel == array.size:
            return array
        return array.reshape(-1)[piece.start : piece.stop]

    def refresh_views(self) -> None:
        """Re-point the piece tensors at the parameters' arrays if someone replaced an array (``p.data = ...``)."""
        if self.own_params or all(p.array is base for p, base in zip(self.params, self._bases)):
            return
        for piece, tensor in zip(self.pieces, self.local):
            tensor.array = self._piece_view(piece)
        self._bases = [p.array for p in self.params]

    # -- step 2: gradients ----------------------------------------------------------------

    def grads_from_params(self) -> bool:
        """Point each piece's ``.grad`` at its run of the parameter's ``.grad`` (None where that is None).

        Returns whether any piece got a gradient.
        """
        if self.own_params:
            return any(p.grad is not None for p in self.local)
        any_grad = False
        for piece, tensor in zip(self.pieces, self.local):
            grad = self.params[piece.param].grad
            if grad is None:
                tensor.grad = None
                continue
            array = grad.array
            if piece.numel != array.size:
                array = array.reshape(-1)[piece.start : piece.stop]
            tensor.grad = Tensor._make(array.reshape(tensor.array.shape), False, None, 0)
            any_grad = True
        return any_grad

    def grads_from_concatenation(self, flat) -> None:
        """Piece gradients as views of ``flat``, the whole segment's reduced gradient (a DDP bucket buffer)."""
        for piece, tensor in zip(self.pieces, self.local):
            begin = self.param_offsets[piece.param] + piece.start
            view = flat[begin : begin + piece.numel].reshape(tensor.array.shape)
            tensor.grad = Tensor._make(view, False, None, 0)

    def grads_from_shard(self, shard) -> None:
        """Piece gradients as views of ``shard``, this rank's reduce-scattered shard (``k`` elements)."""
        for piece, tensor in zip(self.pieces, self.local):
            view = shard[piece.offset : piece.offset + piece.numel].reshape(tensor.array.shape)
            tensor.grad = Tensor._make(view, False, None, 0)

    def clear_grads(self) -> None:
        """Drop the pieces' gradients (they view memory that is not ours to keep alive)."""
        if self.own_params:
            return
        for tensor in self.local:
            tensor.grad = None

    # -- step 3: all-gather ----------------------------------------------------------------

    def gather(self, group: ProcessGroup, async_op: bool = False) -> Work | None:
        """Bring every rank's updated pieces into the parameters; None when the segment is empty.

        One ``Iallgather`` of ``k`` elements per rank (one ``Ibcast`` when a
        single rank owns everything); the parameters are written, and their
        versions bumped, when the returned ``Work`` completes.
        """
        owners = self.layout.owners()
        k = self.layout.shard_numel
        if not owners:
            return None
        with backend.device_context(self.device):
            if len(owners) == 1:
                buffer = self.xp.empty(k, dtype=self.dtype)
                if owners[0] == self.rank:
                    self._pack(buffer)
                work = broadcast_flat(group, buffer, owners[0], lambda: self._unpack_from(owners[0], buffer))
            else:
                shard = self.xp.zeros(k, dtype=self.dtype)
                self._pack(shard)
                gathered = self.xp.empty((self.layout.world_size, k), dtype=self.dtype)
                work = allgather_flat(group, shard, gathered, lambda: self._unpack_all(gathered))
        if not async_op:
            work.wait()
        return work

    def _pack(self, shard) -> None:
        for piece, tensor in zip(self.pieces, self.local):
            shard[piece.offset : piece.offset + piece.numel] = tensor.array.reshape(-1)

    def _unpack_from(self, rank, shard) -> None:
        if rank != self.rank:
            for piece in self.layout.pieces[rank]:
                flat = self.params[piece.param].array.reshape(-1)
                flat[piece.start : piece.stop] = shard[piece.offset : piece.offset + piece.numel]
        self._bump_versions()

    def _unpack_all(self, gathered) -> None:
        for rank in range(self.layout.world_size):
            if rank == self.rank:
                continue
            for piece in self.layout.pieces[rank]:
                flat = self.params[piece.param].array.reshape(-1)
                flat[piece.start : piece.stop] = gathered[rank, piece.offset : piece.offset + piece.numel]
        self._bump_versions()

    def _bump_versions(self) -> None:
        for p in self.params:
            bump_version(p)


# -- flat collectives ------------------------------------------------------------------------


def _after(array, buffer, then, send):
    """The completion callback: copy a staged result back, run ``then``; holds ``send`` until then.

    MPI reads the send buffer until the collective completes, and mpi4py
    keeps no reference to it: this closure is what keeps it alive (the
    ``Work`` drops the closure once it has run, freeing the buffer).
    """

    def done():
        finish_buffer(array, buffer)
        then()
        del send[:]

    return done


def allgather_flat(group: ProcessGroup, shard, gathered, then) -> Work:
    """``Iallgather`` of ``shard`` (k elements) into ``gathered`` (N x k); ``then()`` runs on completion."""
    if debug.checking():
        debug.verify(group, f"all_gather({debug.tensor_text(shard)})")
    send, recv = mpi_buffer(shard), mpi_buffer(gathered)
    request = group.comm.Iallgather(send, recv)
    return Work(request, _after(gathered, recv, then, [shard, send]), [gathered], "all_gather", group.spin_wait)


def broadcast_flat(group: ProcessGroup, buffer, src: int, then) -> Work:
    """``Ibcast`` of ``buffer`` from group rank ``src``; ``then()`` runs on completion."""
    if debug.checking():
        debug.verify(group, f"broadcast({debug.tensor_text(buffer)}, src={group.world_ranks[src]})")
    send = mpi_buffer(buffer)
    request = group.comm.Ibcast(send, root=src)
    return Work(request, _after(buffer, send, then, [buffer]), [buffer], "broadcast", group.spin_wait)


def reduce_scatter_flat(group: ProcessGroup, flat, shard) -> Work:
    """``Ireduce_scatter_block`` (sum) of ``flat`` (N*k elements): rank r gets elements ``[r*k, (r+1)*k)``."""
    if debug.checking():
        debug.verify(group, f"reduce_scatter({debug.tensor_text(flat)}, SUM)")
    send, recv = mpi_buffer(flat), mpi_buffer(shard)
    request = group.comm.Ireduce_scatter_block(send, recv, _mpi_op(ReduceOp.SUM))
    return Work(request, _after(shard, recv, _nothing, [flat, send]), [shard], "reduce_scatter", group.spin_wait)


def _nothing() -> None:
    """No follow-up: the reduce-scatter's caller chains its work to the Future."""
