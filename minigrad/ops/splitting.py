"""Splitting at indices or into near-equal sections: ``tensor_split`` and NumPy's ``hsplit``, ``vsplit``, ``dsplit``.

``split`` and ``chunk`` (``ops/structure.py``) cut by piece size; these cut by
*count* or *position*, as NumPy's ``array_split``::

    tensor_split(t, 3)        # 3 pieces, sizes differing by at most one (the first ones larger)
    tensor_split(t, [2, 5])   # t[:2], t[2:5], t[5:]: the indices are slice bounds

Indices behave as Python slice bounds: negative ones count from the end,
ones past the end clamp to it, and a bound below the previous one gives an
empty piece. Every piece is a view made by basic indexing, so writing into a
piece writes into the tensor and each piece's gradient flows back to its own
region. ``hsplit``/``vsplit``/``dsplit`` split along dimension 1 (0 for 1-D
inputs), 0 and 2, and refuse a section count that does not divide the size.
"""

from __future__ import annotations

import numpy as np

from minigrad._checks import is_int
from minigrad.ops import indexing as _indexing
from minigrad.ops._util import expect_tensor, normalize_axis
from minigrad.tensor import Tensor

__all__ = ["dsplit", "hsplit", "method_arguments", "tensor_split", "vsplit"]

_INT64 = (-(2**63), 2**63 - 1)


def _in_int64(value: int, fn: str, name: str, error: type[Exception]) -> int:
    if not _INT64[0] <= value <= _INT64[1]:
        raise error(f"{fn}(): {name} {value} does not fit in an int64")
    return value


def _index_value(item, fn: str, position: int) -> int:
    """One entry of an index list: an int, or an integer tensor of one element (PyTorch takes both)."""
    if isinstance(item, Tensor) and item.numel() == 1:
        if item.dtype.kind == "b":
            raise RuntimeError(f"{fn}(): index {position} is a bool tensor; give integer indices")
        if item.dtype.kind in "iu":
            return int(item.item())
    if not is_int(item):
        raise TypeError(f"{fn}(): argument 'indices' must be a tuple of ints, got {type(item).__name__} "
                        f"at position {position}")
    return _in_int64(int(item), fn, "index", TypeError)


def _sections_or_indices(indices_or_sections, fn: str):
    """``(sections, None)`` for a count or ``(None, indices)`` for a list of slice bounds.

    Raises:
        TypeError: neither an int, a sequence of ints nor an int64 tensor.
        RuntimeError: a tensor that is not int64, or has more than one dimension.
    """
    value = indices_or_sections
    if isinstance(value, Tensor):
        if value.dtype != np.int64:
            raise RuntimeError(f"{fn}(): a tensor indices_or_sections must have dtype int64, got {value.dtype}")
        if value.ndim > 1:
            raise RuntimeError(f"{fn}(): a tensor indices_or_sections must be 0-d (a count) or 1-D (indices), "
                               f"got shape {tuple(value.shape)}")
        if value.ndim == 0:
            return int(value.item()), None
        return None, [int(v) for v in value.tolist()]
    if is_int(value):
        return _in_int64(int(value), fn, "sections", ValueError), None
    if isinstance(value, (list, tuple)):
        return None, [_index_value(item, fn, k) for k, item in enumerate(value)]
    raise TypeError(f"{fn}(): argument 'indices_or_sections' must be an int, a tuple of ints or an int64 tensor, "
                    f"got {type(value).__name__}")


def _pieces(input, axis: int, bounds) -> tuple:  # noqa: A002  (PyTorch's names)
    """The views ``input[..., a:b, ...]`` (along ``axis``) for consecutive ``bounds`` ``a, b``."""
    lead = (slice(None),) * axis
    return tuple(_indexing.index(input, lead + (slice(a, b),)) for a, b in zip(bounds, bounds[1:]))


def _split(input, sections, indices, axis: int, fn: str) -> tuple:  # noqa: A002
    size = input.shape[axis]
    if indices is None:
        if sections <= 0:
            raise RuntimeError(f"{fn}(): the number of sections must be larger than 0, got {sections}")
        # The first ``size % sections`` pieces get one element more.
        small, extra = divmod(size, sections)
        bounds = [k * small + min(k, extra) for k in range(sections + 1)]
    else:
        # Python's slice rules per bound (negative: from the end; clamped to [0, size]), as PyTorch.
        bounds = [0, *(slice(i, None).indices(size)[0] for i in indices), size]
    return _pieces(input, axis, bounds)


def tensor_split(input, indices_or_sections, dim=0):  # noqa: A002
    """``input`` cut along ``dim`` into views, by count or at indices (NumPy's ``array_split``).

    ``indices_or_sections`` is either a count ``n`` (an int, or a 0-d int64
    tensor): ``n`` pieces whose sizes differ by at most one, the first
    ``size % n`` of them one larger (pieces past the end are empty); or slice
    bounds (a list/tuple of ints, or a 1-D int64 tensor) ``[i, j, ...]``:
    pieces ``[:i]``, ``[i:j]``, ..., ``[last:]``, with Python's slice rules.

    Returns:
        a tuple of views of ``input``; differentiable.

    Raises:
        TypeError: ``input`` is not a Tensor, ``indices_or_sections`` is of another kind, or ``dim`` not an int.
        RuntimeError: ``input`` is 0-d, a count is < 1, or a tensor argument is not int64 or has 2+ dims.
        IndexError: ``dim`` is out of range.
    """
    expect_tensor(input, "tensor_split")
    sections, indices = _sections_or_indices(indices_or_sections, "tensor_split")
    if not is_int(dim):
        raise TypeError(f"tensor_split(): argument 'dim' must be an int, got {type(dim).__name__}")
    if input.ndim == 0:
        raise RuntimeError("tensor_split(): expects a tensor with at least 1 dimension, got a 0-d tensor")
    (axis,) = normalize_axis(int(dim), input.ndim, "tensor_split")
    return _split(input, sections, indices, axis, "tensor_split")


def _numpy_split(input, indices_or_sections, fn: str, min_ndim: int, axis: int) -> tuple:  # noqa: A002
    """``hsplit``/``vsplit``/``dsplit``: ``tensor_split`` along ``axis``, an int count having to divide the size."""
    expect_tensor(input, fn)
    value = indices_or_sections
    if isinstance(value, Tensor):  # only a 0-d integer tensor, standing for a count
        if value.ndim != 0 or value.dtype.kind not in "iu":
            raise TypeError(f"{fn}(): argument 'indices_or_sections' must be an int or a tuple of ints; a tensor "
                            f"must be a 0-d integer count, got shape {tuple(value.shape)} {value.dtype}")
        value = int(value.item())
    sections, indices = _sections_or_indices(value, fn)
    if input.ndim < min_ndim:
        raise RuntimeError(f"{fn}() requires a tensor with at least {min_ndim} dimension(s), got {input.ndim}")
    size = input.shape[axis]
    if indices is None and (sections == 0 or size % sections):
        raise RuntimeError(f"{fn}(): the size {size} of dimension {axis} is not divisible by the number of "
                           f"sections {sections}; give a divisor or a list of indices")
    return _split(input, sections, indices, axis, fn)


def hsplit(input, indices_or_sections):  # noqa: A002
    """``input`` split horizontally: ``tensor_split`` along dimension 1 (dimension 0 for a 1-D input).

    ``indices_or_sections`` is a count (an int or a 0-d integer tensor) that
    must divide the size of that dimension, or a list/tuple of indices.

    Raises:
        TypeError: ``input`` is not a Tensor, or ``indices_or_sections`` is of another kind.
        RuntimeError: ``input`` is 0-d, or the count does not divide the size (or is < 1).
    """
    expect_tensor(input, "hsplit")
    return _numpy_split(input, indices_or_sections, "hsplit", 1, 1 if input.ndim > 1 else 0)


def vsplit(input, indices_or_sections):  # noqa: A002
    """``input`` split vertically: ``tensor_split`` along dimension 0 of a tensor with at least 2 dimensions.

    Arguments as ``hsplit``.

    Raises:
        TypeError: as ``hsplit``. RuntimeError: fewer than 2 dimensions, or the count does not divide the size.
    """
    return _numpy_split(input, indices_or_sections, "vsplit", 2, 0)


def dsplit(input, indices_or_sections):  # noqa: A002
    """``input`` split in depth: ``tensor_split`` along dimension 2 of a tensor with at least 3 dimensions.

    Arguments as ``hsplit``.

    Raises:
        TypeError: as ``hsplit``. RuntimeError: fewer than 3 dimensions, or the count does not divide the size.
    """
    return _numpy_split(input, indices_or_sections, "dsplit", 3, 2)


def method_arguments(values: tuple):
    """What ``t.hsplit(...)``, ``t.vsplit(...)`` and ``t.dsplit(...)`` pass on as ``indices_or_sections``.

    The methods take their indices as varargs too: ``t.hsplit(1, 4)`` is
    ``t.hsplit([1, 4])``; one value stands as it is, except a one-element 1-D
    integer tensor, which PyTorch's method reads as one index (``[i]``), not
    as a count.
    """
    if len(values) != 1:
        return tuple(values)
    (value,) = values
    if isinstance(value, Tensor) and value.ndim == 1 and value.numel() == 1 and value.dtype.kind in "iu":
        return (value,)
    return value
