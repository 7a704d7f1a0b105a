"""``take_along_dim``: NumPy's ``take_along_axis``, a ``gather`` whose input and indices broadcast.

With a ``dim``, ``input`` and ``indices`` have the same number of
dimensions and broadcast against each other in every dimension but
``dim``; the result has the broadcast shape, with ``indices``' size along
``dim``::

    input (3, 1, 5), indices (1, 4, 2), dim=2  ->  out (3, 4, 2)
    out[i][j][k] = input[i][0][indices[0][j][k]]

As in PyTorch, indices along ``dim`` wrap around modulo its size (``-1`` is
the last element, and so is ``size - 1 + size``). Without a ``dim`` the
input is read flattened, ``out = input.reshape(-1)[indices.reshape(-1)]``,
and indices must lie in ``[0, input.numel())``.

The function is composed of ``expand`` (a view) and ``gather``, so its
gradient needs nothing new: ``gather``'s scatter-add, summed over the
broadcast dimensions by ``expand``'s backward.
"""

from __future__ import annotations

import numpy as np

from minigrad import backend
from minigrad._checks import is_int
from minigrad.ops._util import expect_tensor, normalize_axis
from minigrad.ops.gather import gather
from minigrad.tensor import Tensor

__all__ = ["take_along_dim"]


def _broadcast_size(a: int, b: int, d: int) -> int:
    if a != b and 1 not in (a, b):
        raise RuntimeError(f"take_along_dim(): the size of input ({a}) must match the size of indices ({b}) "
                           f"at non-singleton dimension {d}")
    return b if a == 1 else a


def take_along_dim(input, indices, dim=None):  # noqa: A002  (PyTorch's names)
    """The elements of ``input`` at ``indices`` along ``dim`` (see the module docstring).

    Args:
        input: any tensor.
        indices: an int64 tensor. With ``dim``: as many dimensions as
            ``input``, broadcastable with it outside ``dim``; entries wrap
            modulo ``input.size(dim)``. Without: any shape, entries in
            ``[0, input.numel())``.
        dim: the dimension to select along, or None for the flattened input.

    Returns:
        a tensor of ``input``'s dtype: the broadcast shape (with ``indices``'
        size along ``dim``), or 1-D with ``indices.numel()`` elements when
        ``dim`` is None. Differentiable in ``input``.

    Raises:
        TypeError: ``input`` or ``indices`` is not a Tensor, or ``dim`` is neither None nor an int.
        RuntimeError: ``indices`` is not int64; with ``dim``: the dimension counts differ, the shapes do not
            broadcast, or ``dim`` has size 0 while there are indices; without: an index is out of range.
        IndexError: ``dim`` is out of range (any ``dim`` for a 0-d input).
    """
    expect_tensor(input, "take_along_dim")
    expect_tensor(indices, "take_along_dim", "indices")
    if dim is not None and not is_int(dim):
        raise TypeError(f"take_along_dim(): argument 'dim' must be an int or None, got {type(dim).__name__}")
    if dim is None:
        if indices.dtype != np.int64:
            raise RuntimeError(f"take_along_dim(): indices must have dtype int64, got {indices.dtype}")
        flat = input.reshape(-1)
        if indices.numel():
            low, high = int(indices.array.min()), int(indices.array.max())
            bad = low if low < 0 else high if high >= flat.shape[0] else None
            if bad is not None:
                raise RuntimeError(f"take_along_dim(): index {bad} is out of range for the flattened input of "
                                   f"{flat.shape[0]} elements (without dim, indices must be in [0, numel))")
        return gather(flat, 0, indices.reshape(-1))
    if input.ndim != indices.ndim:
        raise RuntimeError(f"take_along_dim(): input and indices must have the same number of dimensions, got "
                           f"{input.ndim} for input {tuple(input.shape)} and {indices.ndim} for indices "
                           f"{tuple(indices.shape)}")
    if indices.dtype != np.int64:
        raise RuntimeError(f"take_along_dim(): indices must have dtype int64, got {indices.dtype}")
    if input.ndim == 0:
        raise IndexError(f"take_along_dim(): dim {dim} is out of range for a 0-d input")
    (axis,) = normalize_axis(int(dim), input.ndim, "take_along_dim")
    shape = [n if d == axis else _broadcast_size(n, m, d) for d, (n, m) in enumerate(zip(input.shape, indices.shape))]
    size = input.shape[axis]
    source_shape = tuple(shape[:axis]) + (size,) + tuple(shape[axis + 1 :])
    index_shape = tuple(shape[:axis]) + (indices.shape[axis],) + tuple(shape[axis + 1 :])
    index_array = indices.array
    if size == 0:
        if index_array.size:
            raise RuntimeError(f"take_along_dim(): dimension {axis} of input {tuple(input.shape)} is empty, so no "
                               "index can select from it")
    else:
        index_array = index_array % size  # wraps negative and large indices, as PyTorch
    xp = backend.get_array_module(index_array)
    index = Tensor(xp.ascontiguousarray(xp.broadcast_to(index_array, index_shape)))
    return gather(input.expand(*source_shape), axis, index)
