"""Sorting and selection along one dimension: ``sort``, ``argsort``, ``topk``, ``kthvalue``.

Each computes the sorting indices on the arrays (not differentiable), then
reads the values with ``gather``: the values' gradient flows back to the
positions they came from through ``Gather``'s backward, so no op of its own
is needed.

Sorting is always stable (ties keep their order; descending sorts keep it
too), which is one valid result of PyTorch's unstable sort. NaN counts as
the largest value, as in PyTorch.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from minigrad import backend
from minigrad.ops._util import expect_flag, expect_tensor, normalize_axis
from minigrad.ops.gather import Gather
from minigrad.tensor import Tensor

SortResult = namedtuple("SortResult", ["values", "indices"])
TopKResult = namedtuple("TopKResult", ["values", "indices"])
KthValueResult = namedtuple("KthValueResult", ["values", "indices"])


def sorted_indices(data, axis: int, descending: bool):
    """int64 indices that sort the array ``data`` stably along ``axis`` (NaN last ascending, first descending).

    A stable descending order sorts the reversed array ascending, reverses
    that order and maps positions back: ties then keep their original order.
    """
    xp = backend.get_array_module(data)
    if not descending:
        order = xp.argsort(data, axis=axis, kind="stable")
    else:
        flipped = xp.argsort(xp.flip(data, axis), axis=axis, kind="stable")
        order = (data.shape[axis] - 1) - xp.flip(flipped, axis)
    return order.astype(np.int64, copy=False)


def _axis(input, dim, fn: str) -> int:  # noqa: A002  (PyTorch's names)
    if not isinstance(dim, (int, np.integer)) or isinstance(dim, bool):
        raise TypeError(f"{fn}(): argument 'dim' must be an int, got {type(dim).__name__}")
    (axis,) = normalize_axis(int(dim), input.ndim, fn)
    return axis


def sort(input, dim=-1, descending=False, *, stable=False):  # noqa: A002
    """``(values, indices)``: ``input`` sorted along ``dim``, and where each value came from.

    ``values`` is differentiable; ``indices`` is int64. The sort is always
    stable, so ``stable`` (PyTorch's keyword) only documents the intent.
    A 0-d tensor sorts to itself with index 0.

    Raises:
        TypeError: ``input`` is not a Tensor, ``dim`` not an int, a flag not a bool.
        IndexError: ``dim`` is out of range.
    """
    expect_tensor(input, "sort")
    axis = _axis(input, dim, "sort")
    expect_flag(descending, "sort", "descending")
    expect_flag(stable, "sort", "stable")
    if input.ndim == 0:
        values, indices = sort(input.reshape(1), 0, descending)
        return SortResult(values.reshape(()), indices.reshape(()))
    order = sorted_indices(input.array, axis, bool(descending))
    indices = Tensor._make(order, False, None, 0)
    return SortResult(Gather(axis)(input, indices), indices)


def argsort(input, dim=-1, descending=False, *, stable=False):  # noqa: A002
    """The int64 indices that sort ``input`` along ``dim`` (``sort(...).indices``; always stable).

    Raises:
        as ``sort``.
    """
    expect_tensor(input, "argsort")
    axis = _axis(input, dim, "argsort")
    expect_flag(descending, "argsort", "descending")
    expect_flag(stable, "argsort", "stable")
    if input.ndim == 0:
        return Tensor._make(backend.get_array_module(input.array).zeros((), dtype=np.int64), False, None, 0)
    return Tensor._make(sorted_indices(input.array, axis, bool(descending)), False, None, 0)


def _count(value, fn: str, name: str) -> int:
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool):
        raise TypeError(f"{fn}(): argument '{name}' must be an int, got {type(value).__name__}")
    return int(value)


def topk(input, k, dim=-1, largest=True, sorted=True):  # noqa: A002
    """``(values, indices)`` of the ``k`` largest (``largest=False``: smallest) elements along ``dim``.

    The results are always in sorted order (largest first, or smallest first);
    ties keep their original order. ``values`` is differentiable.

    Raises:
        TypeError: ``input`` is not a Tensor, ``k``/``dim`` not ints, a flag not a bool.
        IndexError: ``dim`` is out of range.
        RuntimeError: ``k`` is negative or larger than the size of ``dim``.
    """
    expect_tensor(input, "topk")
    k = _count(k, "topk", "k")
    axis = _axis(input, dim, "topk")
    expect_flag(largest, "topk", "largest")
    expect_flag(sorted, "topk", "sorted")
    size = input.shape[axis] if input.ndim else 1
    if not 0 <= k <= size:
        raise RuntimeError(f"topk(): k={k} is out of range for dimension {dim} of size {size}")
    if input.ndim == 0:
        values, indices = topk(input.reshape(1), k, 0, largest)
        return TopKResult(values.reshape(()), indices.reshape(())) if k else TopKResult(values, indices)
    order = sorted_indices(input.array, axis, bool(largest))
    order = order[(slice(None),) * axis + (slice(0, k),)]
    indices = Tensor._make(order, False, None, 0)
    return TopKResult(Gather(axis)(input, indices), indices)


def kthvalue(input, k, dim=-1, keepdim=False):  # noqa: A002
    """``(values, indices)`` of the ``k``-th smallest element (``k`` counts from 1) along ``dim``.

    Raises:
        TypeError: ``input`` is not a Tensor, ``k``/``dim`` not ints, ``keepdim`` not a bool.
        IndexError: ``dim`` is out of range, or it has size 0 (as PyTorch).
        RuntimeError: ``k`` is outside ``[1, size of dim]``.
    """
    expect_tensor(input, "kthvalue")
    k = _count(k, "kthvalue", "k")
    axis = _axis(input, dim, "kthvalue")
    expect_flag(keepdim, "kthvalue", "keepdim")
    size = input.shape[axis] if input.ndim else 1
    if size == 0:
        raise IndexError(f"kthvalue(): dimension {dim} has size 0, there is no k-th value (shape {input.shape})")
    if not 1 <= k <= size:
        raise RuntimeError(f"kthvalue(): k={k} is out of range for dimension {dim} of size {size}")
    if input.ndim == 0:
        values, indices = kthvalue(input.reshape(1), k, 0)
        return KthValueResult(values, indices)
    order = sorted_indices(input.array, axis, False)
    order = order[(slice(None),) * axis + (slice(k - 1, k),)]
    indices = Tensor._make(order, False, None, 0)
    values = Gather(axis)(input, indices)
    if not keepdim:
        values = values.squeeze(axis)
        indices = Tensor._make(order.squeeze(axis), False, None, 0)
    return KthValueResult(values, indices)
