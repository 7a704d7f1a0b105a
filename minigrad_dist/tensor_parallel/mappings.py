"""The communication of tensor parallelism: Megatron's conjugate operators f and g, and gather/split.

Inside a tensor-parallel group every rank holds the same activations where
the model is *replicated* and one slice each where it is *split*. Four maps
move between those regions; each is a small autograd ``Function`` whose
backward is its conjugate (its adjoint when the loss is computed once, on the
replicated output, as in Megatron-LM):

| map | forward | backward |
| --- | --- | --- |
| **f** ``copy_to_tensor_parallel_region`` | identity | all-reduce (sum) |
| **g** ``reduce_from_tensor_parallel_region`` | all-reduce (sum) | identity |
| ``gather_from_tensor_parallel_region`` | all-gather along the last dim | keep this rank's slice |
| ``scatter_to_tensor_parallel_region`` | keep this rank's slice of the last dim | all-gather along the last dim |
| ``gather_from_sequence_parallel_region`` | all-gather along ``dim`` | reduce-scatter (sum) along ``dim`` |
| ``reduce_scatter_to_sequence_parallel_region`` | reduce-scatter (sum) along ``dim`` | all-gather along ``dim`` |

The last two are sequence parallelism's (Korthikanti et al. 2022): where
the model is replicated (LayerNorm, dropout, residual adds) each rank keeps
only its slice of the sequence. They take f's and g's places: the
all-gather before a column-parallel layer gives every rank the whole
sequence, and its backward sums the ranks' partial gradients and hands each
rank its slice; the reduce-scatter after a row-parallel layer sums the
partials and keeps this rank's slice. An all-reduce is a reduce-scatter
followed by an all-gather, so the communication is the same as f and g's.

Why f's backward sums: f hands the same input to every rank's slice of the
model, so the input's gradient is the sum of the gradients that come back
through each slice. Why g's backward is the identity: after g every rank
holds the same sum and computes the same loss; the gradient of the sum with
respect to each rank's partial is that output gradient itself. f and g are
each other's backward, so ``create_graph=True`` (double backward) works.

Warning:
    These are collectives over ``group``: every rank of the group must call
    the same maps in the same order, on tensors of one shape and dtype, and
    backpropagate through them. Unlike ``minigrad_dist.nn.functional``, they
    do not compare the ranks' shapes on every call (that costs a message per
    call on the hot path of every layer): a rank with another batch size gets
    MPI's truncation error. Run with ``MINIGRAD_DIST_DEBUG=detail`` to have
    every collective checked across ranks, with an error naming both shapes.
"""

from __future__ import annotations

from minigrad import backend
from minigrad.autograd import Function
from minigrad.tensor import Tensor
from minigrad_dist import collectives
from minigrad_dist.nn.functional import _on_copy, _wrap

__all__ = [
    "copy_to_tensor_parallel_region",
    "reduce_from_tensor_parallel_region",
    "gather_from_tensor_parallel_region",
    "scatter_to_tensor_parallel_region",
    "gather_from_sequence_parallel_region",
    "reduce_scatter_to_sequence_parallel_region",
]


# Each map's forward as ``(x, dim, group) -> Tensor`` (``dim`` unused by f and g).


def _identity(x: Tensor, dim, group) -> Tensor:
    return _on_copy(None, x)


def _all_reduce(x: Tensor, dim, group) -> Tensor:
    return _on_copy(collectives.all_reduce, x, collectives.ReduceOp.SUM, group)


def _all_gather_along(x: Tensor, dim: int, group) -> Tensor:
    """Every rank's ``x`` concatenated along ``dim``, in group-rank order."""
    xp = backend.get_array_module(x.array)
    parts = [xp.empty_like(x.array) for _ in range(collectives.get_world_size(group))]
    collectives.all_gather(parts, xp.ascontiguousarray(x.array), group=group)
    return _wrap(xp.concatenate(parts, axis=dim))


def _reduce_scatter_along(x: Tensor, dim: int, group) -> Tensor:
    """The sum over the ranks of ``x``'s slice ``rank`` along ``dim`` (equal slices)."""
    xp = backend.get_array_module(x.array)
    size = collectives.get_world_size(group)
    parts = [xp.ascontiguousarray(part) for part in xp.split(x.array, size, axis=dim)]
    result = xp.empty_like(parts[0])
    collectives.reduce_scatter(result, parts, group=group)
    return _wrap(result)


def _own_slice_along(x: Tensor, dim: int, group) -> Tensor:
    """This rank's equal slice of ``dim`` (a copy)."""
    xp = backend.get_array_module(x.array)
    slices = xp.split(x.array, collectives.get_world_size(group), axis=dim)
    return _wrap(xp.ascontiguousarray(slices[collectives.get_rank(group)]))


class _RegionMap(Function):
    """One map of the table above: ``run`` is its forward; its backward applies ``conjugate``, the map it pairs with."""

    run = None
    conjugate = None

    @classmethod
    def forward(cls, ctx, group, dim, x):
        ctx.group, ctx.dim = group, dim
        return cls.run(x, dim, group)

    @classmethod
    def backward(cls, ctx, grad):
        return None, None, cls.conjugate.apply(ctx.group, ctx.dim, grad)


def _region_map(name: str, run) -> type:
    doc = f"Forward: {run.__name__.strip('_')}; backward: the conjugate map (the module's table)."
    return type(name, (_RegionMap,), {"run": staticmethod(run), "__doc__": doc, "__module__": __name__})


# The maps of the module's table, by their forwards.
_CopyToRegion = _region_map("_CopyToRegion", _identity)  # f
_ReduceFromRegion = _region_map("_ReduceFromRegion", _all_reduce)  # g
_GatherFromRegion = _region_map("_GatherFromRegion", _all_gather_along)  # along the last dim
_ScatterToRegion = _region_map("_ScatterToRegion", _own_slice_along)  # of the last dim
_GatherFromSequenceRegion = _region_map("_GatherFromSequenceRegion", _all_gather_along)  # along dim
_ReduceScatterToSequenceRegion = _region_map("_ReduceScatterToSequenceRegion", _reduce_scatter_along)  # along dim

# The conjugate pairs: each map's backward is the other map of its pair.
_CopyToRegion.conjugate, _ReduceFromRegion.conjugate = _ReduceFromRegion, _CopyToRegion
_GatherFromRegion.conjugate, _ScatterToRegion.conjugate = _ScatterToRegion, _GatherFromRegion
_GatherFromSequenceRegion.conjugate = _ReduceScatterToSequenceRegion
_ReduceScatterToSequenceRegion.conjugate = _GatherFromSequenceRegion


def _checked(x, fn: str) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}: input must be a Tensor, got {type(x).__name__}")
    return x


def copy_to_tensor_parallel_region(x, group=None) -> Tensor:
    """Megatron's **f**: the identity forward, an all-reduce (sum) of the gradients over ``group`` backward.

    Put it where a replicated activation enters the split part of a block
    (before a ``ColumnParallelLinear``).

    Args:
        x (Tensor): the replicated activation (the same on every rank of the group).
        group (ProcessGroup, optional): the tensor-parallel group (default: the world).

    Returns:
        Tensor: a copy of ``x``.

    Raises:
        TypeError: ``x`` is not a Tensor.
    """
    return _CopyToRegion.apply(group, None, _checked(x, "copy_to_tensor_parallel_region"))


def reduce_from_tensor_parallel_region(x, group=None) -> Tensor:
    """Megatron's **g**: an all-reduce (sum) over ``group`` forward, the identity backward.

    Put it where the split part of a block ends in partial sums (after a
    ``RowParallelLinear``'s matmul): every rank gets the full sum.

    Args:
        x (Tensor): this rank's partial sum (same shape and dtype on every rank).
        group (ProcessGroup, optional): the tensor-parallel group (default: the world).

    Returns:
        Tensor: the sum over the group's ranks, identical on each.

    Raises:
        TypeError: ``x`` is not a Tensor.
    """
    return _ReduceFromRegion.apply(group, None, _checked(x, "reduce_from_tensor_parallel_region"))


def gather_from_tensor_parallel_region(x, group=None) -> Tensor:
    """All-gather the ranks' slices along the last dimension (forward); backward keeps this rank's slice.

    Args:
        x (Tensor): this rank's slice ``(*, n)`` (same shape on every rank).
        group (ProcessGroup, optional): the tensor-parallel group (default: the world).

    Returns:
        Tensor: ``(*, n * group size)``, the slices in group-rank order.

    Raises:
        TypeError: ``x`` is not a Tensor. ValueError: ``x`` has no dimension.
    """
    x = _checked(x, "gather_from_tensor_parallel_region")
    if x.ndim == 0:
        raise ValueError("gather_from_tensor_parallel_region: x must have at least one dimension to gather along")
    return _GatherFromRegion.apply(group, -1, x)


def scatter_to_tensor_parallel_region(x, group=None) -> Tensor:
    """Keep this rank's equal slice of the last dimension (forward); backward all-gathers the gradients.

    Args:
        x (Tensor): the replicated tensor ``(*, n)``; ``n`` divisible by the group size.
        group (ProcessGroup, optional): the tensor-parallel group (default: the world).

    Returns:
        Tensor: ``(*, n / group size)``, slice ``rank`` (in group-rank order).

    Raises:
        TypeError: ``x`` is not a Tensor.
        ValueError: ``x`` has no dimension, or its last one does not divide by the group size.
    """
    x = _checked(x, "scatter_to_tensor_parallel_region")
    size = collectives.get_world_size(group)
    if x.ndim == 0 or x.shape[-1] % size:
        raise ValueError(
            f"scatter_to_tensor_parallel_region: the last dimension of x {tuple(x.shape)} must divide by the "
            f"group size {size}"
        )
    return _ScatterToRegion.apply(group, -1, x)


def _sequence_dim(x: Tensor, dim, fn: str) -> int:
    """``dim`` as a non-negative dimension of ``x``."""
    if not isinstance(dim, int) or isinstance(dim, bool) or not -x.ndim <= dim < x.ndim:
        raise ValueError(f"{fn}: dim must be a dimension of x {tuple(x.shape)}, got {dim!r}")
    return dim % x.ndim


def gather_from_sequence_parallel_region(x, dim: int, group=None) -> Tensor:
    """All-gather the ranks' slices of the sequence along ``dim`` (forward); backward reduce-scatters (sums).

    Takes f's place before a column-parallel layer under sequence parallelism.

    Args:
        x (Tensor): this rank's slice of the sequence (same shape on every rank).
        dim (int): the sequence dimension.
        group (ProcessGroup, optional): the tensor-parallel group (default: the world).

    Returns:
        Tensor: ``x``'s shape with ``dim`` times the group size, slices in group-rank order.

    Raises:
        TypeError: ``x`` is not a Tensor. ValueError: ``dim`` is not a dimension of ``x``.
    """
    fn = "gather_from_sequence_parallel_region"
    x = _checked(x, fn)
    return _GatherFromSequenceRegion.apply(group, _sequence_dim(x, dim, fn), x)


def reduce_scatter_to_sequence_parallel_region(x, dim: int, group=None) -> Tensor:
    """Sum over the ranks and keep this rank's slice along ``dim`` (forward); backward all-gathers.

    Takes g's place after a row-parallel layer under sequence parallelism.

    Args:
        x (Tensor): this rank's partial sum over the whole sequence (same shape on every rank).
        dim (int): the sequence dimension; its size must divide by the group size.
        group (ProcessGroup, optional): the tensor-parallel group (default: the world).

    Returns:
        Tensor: slice ``rank`` of the sum, ``dim`` divided by the group size.

    Raises:
        TypeError: ``x`` is not a Tensor.
        ValueError: ``dim`` is not a dimension of ``x``, or its size does not divide by the group size.
    """
    fn = "reduce_scatter_to_sequence_parallel_region"
    x = _checked(x, fn)
    dim = _sequence_dim(x, dim, fn)
    size = collectives.get_world_size(group)
    if x.shape[dim] % size:
        raise ValueError(
            f"{fn}: dimension {dim} of x {tuple(x.shape)} must divide by the group size {size} (the sequence "
            "length must be a multiple of the tensor-parallel size)"
        )
    return _ReduceScatterToSequenceRegion.apply(group, dim, x)
