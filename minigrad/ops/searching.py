"""Searching, counting and index generation: ``bincount``, ``searchsorted``, ``bucketize``, ``isin``,
``tril_indices``, ``triu_indices``.

Every result holds integers or bools, so nothing here is differentiable:
the functions read the arrays with the tensor's array module (NumPy or
CuPy) and wrap the result in a tensor that does not require grad.

``searchsorted`` runs one binary search per value, all values at once: each
step compares every value with the middle element of its remaining range and
halves the range, so ``n`` sorted elements take ``n.bit_length()`` vectorized
steps whatever the number of rows. Each step moves right exactly when
PyTorch's search does (``not (middle >= value)``, or ``>`` for the right
side), so a NaN value, or a sequence holding NaN, lands where PyTorch puts it.

Mixed dtypes compare in ``torch.result_type`` of the two inputs (see
``minigrad.promotion``): an int64 sequence searched for ``5.5`` compares in
float32, and a Python int beside a uint8 tensor wraps around to uint8, as in
PyTorch.
"""

from __future__ import annotations

import math

import numpy as np

from minigrad import backend
from minigrad.factory import _resolve_dtype
from minigrad.ops._util import expect_flag, expect_tensor
from minigrad.promotion import result_type
from minigrad.tensor import Tensor

__all__ = ["bincount", "searchsorted", "bucketize", "isin", "tril_indices", "triu_indices"]

_NUMBER_TYPES = (bool, int, float, complex, np.bool_, np.number)


# -- argument checks -----------------------------------------------------------------------------------------


def _expect_tensor_or_number(value, fn: str, name: str) -> None:
    if not isinstance(value, (Tensor, *_NUMBER_TYPES)):
        raise TypeError(f"{fn}(): argument '{name}' must be a Tensor or a number, got {type(value).__name__}")


def _int_arg(value, fn: str, name: str) -> int:
    """``value`` (an int, or a 0-d integer tensor as PyTorch takes) as an int; TypeError otherwise (bool too)."""
    if isinstance(value, Tensor) and value.ndim == 0 and value.dtype.kind in "iu":
        return int(value.item())
    if not isinstance(value, (int, np.integer)) or isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{fn}(): argument '{name}' must be an int, got {type(value).__name__}")
    return int(value)


def _dtype_of(value) -> np.dtype:
    """The dtype of a Tensor, or the dtype a Python or NumPy number stands for."""
    return value.dtype if isinstance(value, Tensor) else result_type(value)


def _as_array(value, dtype, xp):
    """A Tensor's array, or a number as a 0-d array, in ``dtype`` (integers out of range wrap, as in PyTorch)."""
    if isinstance(value, Tensor):
        return value.array.astype(dtype, copy=False)
    return xp.asarray(np.asarray(value).astype(dtype))


def _no_grad_tensor(array) -> Tensor:
    return Tensor._make(array, False, None, 0)


# -- bincount ------------------------------------------------------------------------------------------------


def bincount(input, weights=None, minlength=0):  # noqa: A002  (PyTorch's names)
    """How often each value ``0 .. max(input)`` occurs in the 1-D integer tensor ``input``.

    The result has ``max(max(input) + 1, minlength)`` elements; it is int64, or
    with ``weights`` (a 1-D tensor of ``input``'s length) the sum of the
    weights at each value: float32 for float32 weights and float64 for any
    other dtype, as in PyTorch. As PyTorch does, an empty ``input`` gives
    int64 zeros of length ``minlength`` even with ``weights``. The result does
    not require grad.

    Raises:
        TypeError: ``input`` or ``weights`` is not a Tensor, ``minlength`` not an int.
        NotImplementedError: ``input`` is not of an integer dtype (bool and floats included).
        RuntimeError: ``minlength`` is negative, ``input`` is not 1-D or holds a negative value,
            or ``weights`` is not 1-D of ``input``'s length.
    """
    expect_tensor(input, "bincount", "input")
    if weights is not None:
        expect_tensor(weights, "bincount", "weights")
    minlength = _int_arg(minlength, "bincount", "minlength")
    if input.dtype.kind not in "iu":
        raise NotImplementedError(f"bincount(): input must have an integer dtype, got {input.dtype}")
    if minlength < 0:
        raise RuntimeError(f"bincount(): minlength must be >= 0, got {minlength}")
    data = input.array
    xp = backend.get_array_module(data)
    if input.ndim != 1:
        raise RuntimeError(f"bincount(): input must be 1-D with non-negative values, got shape {input.shape}")
    with backend.device_context(backend.device_of(data)):
        if data.size == 0:
            return _no_grad_tensor(xp.zeros(minlength, dtype=np.int64))
        if data.dtype.kind == "i" and bool((data < 0).any()):
            raise RuntimeError(f"bincount(): input must hold non-negative values, found the minimum {int(data.min())}")
        data = data.astype(np.int64, copy=False)
        if weights is None:
            return _no_grad_tensor(xp.bincount(data, minlength=minlength).astype(np.int64, copy=False))
        if weights.shape != input.shape:
            raise RuntimeError(
                f"bincount(): weights must be 1-D with input's length {input.shape[0]}, got shape {weights.shape}"
            )
        backend.get_array_module(data, weights.array)  # RuntimeError for weights on another device
        out_dtype = np.float32 if weights.dtype == np.float32 else np.float64
        w = weights.array.real if weights.dtype.kind == "c" else weights.array
        counts = xp.bincount(data, weights=w.astype(np.float64, copy=False), minlength=minlength)
        return _no_grad_tensor(counts.astype(out_dtype, copy=False))


# -- searchsorted and bucketize ------------------------------------------------------------------------------


def _binary_search(sequence, values, right: bool, xp):
    """int64 positions of ``values`` in ``sequence`` (searched along its last axis), with PyTorch's comparisons.

    ``sequence`` is 1-D, or ``(..., n)`` with ``values`` of shape ``(..., m)``
    and the same leading dimensions. Every value keeps a range ``[lo, hi)``
    and all ranges halve at once; a range that is empty stays as it is.
    """
    n = sequence.shape[-1]
    lo = xp.zeros(values.shape, dtype=np.int64)
    hi = xp.full(values.shape, n, dtype=np.int64)
    if sequence.ndim > 1:
        rows = sequence.reshape(math.prod(sequence.shape[:-1]), n)
        shape = (rows.shape[0], values.shape[-1])
    for _ in range(n.bit_length()):
        mid = (lo + hi) >> 1
        probe_at = xp.minimum(mid, n - 1)  # an empty range may sit at n: read anything, it is not used
        if sequence.ndim == 1:
            probe = sequence[probe_at]
        else:
            probe = xp.take_along_axis(rows, probe_at.reshape(shape), axis=1).reshape(values.shape)
        stays_left = (probe > values) if right else (probe >= values)
        active = lo < hi
        lo = xp.where(active & ~stays_left, mid + 1, lo)
        hi = xp.where(active & stays_left, mid, hi)
    return lo


def _check_sorter(sorter, sequence) -> None:
    if sorter.shape != sequence.shape:
        raise RuntimeError(
            f"searchsorted(): sorter must have the shape of sorted_sequence {sequence.shape}, got {sorter.shape}"
        )
    if sorter.dtype != np.int64:
        raise RuntimeError(f"searchsorted(): sorter must be an int64 (long) tensor, got {sorter.dtype}")


def _check_dims(sequence, input) -> None:  # noqa: A002
    if sequence.ndim == 0:
        raise RuntimeError("searchsorted(): sorted_sequence must have at least 1 dimension, got a 0-d tensor")
    if sequence.ndim == 1:
        return
    if not isinstance(input, Tensor) or input.ndim == 0:
        raise RuntimeError(
            f"searchsorted(): a scalar input needs a 1-D sorted_sequence, got shape {sequence.shape}; "
            "give input the leading dimensions of sorted_sequence"
        )
    if input.shape[:-1] != sequence.shape[:-1]:
        raise RuntimeError(
            f"searchsorted(): sorted_sequence of shape {sequence.shape} must be 1-D or have the leading dimensions "
            f"of input (shape {input.shape}): {sequence.shape[:-1]} != {input.shape[:-1]}"
        )


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None):  # noqa: A002
    """Where each value of ``input`` would go in ``sorted_sequence`` to keep it sorted (along its last dim).

    A 1-D ``sorted_sequence`` serves every value; an N-D one holds one sorted
    row per position of its leading dims, which ``input`` must share
    (``(..., n)`` and ``(..., m)``). ``input`` may be a number (with a 1-D
    sequence), giving a 0-d result. Left side (the default): the first
    position ``i`` with ``value <= sequence[i]``; ``right=True`` or
    ``side="right"``: the first with ``value < sequence[i]``. ``sorter``
    (int64, the shape of ``sorted_sequence``) gives the order that sorts an
    unsorted sequence, as ``argsort`` returns it. The result has ``input``'s
    shape and is int64, or int32 with ``out_int32=True``.

    Raises:
        TypeError: ``sorted_sequence`` or ``sorter`` is not a Tensor, ``input`` neither a Tensor nor a
            number, a flag not a bool, ``side`` not a str.
        RuntimeError: ``side`` is not "left"/"right" or contradicts ``right``; ``sorter``'s shape,
            dtype or values are wrong; ``sorted_sequence`` is 0-d; the leading dims differ.
        NotImplementedError: the common dtype is bool or complex.
    """
    expect_tensor(sorted_sequence, "searchsorted", "sorted_sequence")
    _expect_tensor_or_number(input, "searchsorted", "input")
    out_int32 = expect_flag(out_int32, "searchsorted", "out_int32")
    right = expect_flag(right, "searchsorted", "right")
    if side is not None and not isinstance(side, str):
        raise TypeError(f"searchsorted(): argument 'side' must be a str, got {type(side).__name__}")
    if sorter is not None:
        expect_tensor(sorter, "searchsorted", "sorter")
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"searchsorted(): side must be 'left' or 'right', got {side!r}")
        if right and side == "left":
            raise RuntimeError("searchsorted(): side='left' contradicts right=True; give only one of them")
        right = side == "right"
    if sorter is not None:
        _check_sorter(sorter, sorted_sequence)
    _check_dims(sorted_sequence, input)
    dtype = result_type(sorted_sequence, input)
    if dtype.kind in "bc":
        raise NotImplementedError(
            f"searchsorted(): cannot search {dtype} values (sorted_sequence {sorted_sequence.dtype}, "
            f"input {_dtype_of(input)}); use a real, non-bool dtype"
        )
    data = sorted_sequence.array
    xp = backend.get_array_module(data, input.array if isinstance(input, Tensor) else None)
    with backend.device_context(backend.device_of(data)):
        if sorter is not None:
            order = sorter.array
            backend.get_array_module(data, order)  # RuntimeError for a sorter on another device
            if order.size and bool(((order < 0) | (order >= data.shape[-1])).any()):
                raise RuntimeError(
                    f"searchsorted(): sorter values must lie in [0, {data.shape[-1]}), the size of the last dim"
                )
            data = xp.take_along_axis(data, order, axis=-1)
        positions = _binary_search(data.astype(dtype, copy=False), _as_array(input, dtype, xp), right, xp)
        return _no_grad_tensor(positions.astype(np.int32) if out_int32 else positions)


def bucketize(input, boundaries, *, out_int32=False, right=False):  # noqa: A002
    """The index of the bucket of each value of ``input``, the buckets being bounded by the 1-D ``boundaries``.

    The same as ``searchsorted(boundaries, input, right=right)``: with the
    default ``right=False``, ``boundaries[i-1] < value <= boundaries[i]``;
    with ``right=True``, ``boundaries[i-1] <= value < boundaries[i]``.
    ``input`` may be a number (0-d result). int64 result, int32 with ``out_int32``.

    Raises:
        TypeError: ``boundaries`` is not a Tensor, ``input`` neither a Tensor nor a number, a flag not a bool.
        RuntimeError: ``boundaries`` is not 1-D.
        NotImplementedError: the common dtype is bool or complex.
    """
    _expect_tensor_or_number(input, "bucketize", "input")
    expect_tensor(boundaries, "bucketize", "boundaries")
    out_int32 = expect_flag(out_int32, "bucketize", "out_int32")
    right = expect_flag(right, "bucketize", "right")
    if boundaries.ndim != 1:
        raise RuntimeError(
            f"bucketize(): boundaries must be 1-D, got shape {boundaries.shape}; for one row of boundaries per "
            "input row use searchsorted"
        )
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


# -- isin ----------------------------------------------------------------------------------------------------


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """A bool tensor of ``elements``' shape: whether each element occurs in ``test_elements``.

    Either argument (not both) may be a number; a number ``elements`` gives
    a 0-d result. ``invert=True`` gives the opposite. The two compare in
    their common dtype (``torch.result_type``). NaN is in nothing.
    ``assume_unique`` (a promise that each input holds distinct values) is
    accepted and not needed: the answer is the same either way.

    Raises:
        TypeError: an argument is neither a Tensor nor a number, both are numbers, a flag is not a bool.
        RuntimeError: an input is bool or complex (PyTorch supports neither).
    """
    _expect_tensor_or_number(elements, "isin", "elements")
    _expect_tensor_or_number(test_elements, "isin", "test_elements")
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError("isin(): elements and test_elements are both numbers; at least one must be a Tensor")
    expect_flag(assume_unique, "isin", "assume_unique")
    invert = expect_flag(invert, "isin", "invert")
    for name, value in (("elements", elements), ("test_elements", test_elements)):
        if _dtype_of(value).kind in "bc":
            raise RuntimeError(
                f"isin(): {name} of dtype {_dtype_of(value)} is not supported; use a real, non-bool dtype"
            )
    dtype = result_type(elements, test_elements)
    arrays = [v.array for v in (elements, test_elements) if isinstance(v, Tensor)]
    xp = backend.get_array_module(*arrays)
    with backend.device_context(backend.device_of(arrays[0])):
        found = xp.isin(_as_array(elements, dtype, xp), _as_array(test_elements, dtype, xp).ravel(), invert=invert)
        return _no_grad_tensor(xp.asarray(found, dtype=np.bool_))


# -- tril_indices and triu_indices ---------------------------------------------------------------------------


def _triangle_indices(fn: str, lower: bool, row, col, offset, dtype, device, layout) -> Tensor:
    """The ``(2, N)`` row and column indices of a triangle of a ``row x col`` matrix, in row-major order.

    Row ``i`` holds the columns ``[first_i, last_i)``: ``[0, i + offset + 1)``
    below the diagonal, ``[i + offset, col)`` above it, clipped to the matrix.
    The k-th index overall belongs to the row whose cumulative count first
    exceeds k, so no Python loop and no ``row x col`` mask is needed.
    """
    row, col = _int_arg(row, fn, "row"), _int_arg(col, fn, "col")
    offset = _int_arg(offset, fn, "offset")
    if row < 0:
        raise RuntimeError(f"{fn}(): row must be non-negative, got {row}")
    if col < 0:
        raise RuntimeError(f"{fn}(): col must be non-negative, got {col}")
    dtype = np.dtype(np.int64) if dtype is None else _resolve_dtype(dtype)
    if dtype not in (np.int64, np.int32):
        raise NotImplementedError(f"{fn}(): dtype must be int64 (long) or int32, got {dtype}")
    if layout is not None:
        raise NotImplementedError(
            f"{fn}(): minigrad tensors are dense (strided) only, got layout={layout!r}; leave layout out"
        )
    device = backend.normalize_device(device)
    xp = backend.module_for_device(device)
    with backend.device_context(device):
        i = xp.arange(row, dtype=np.int64)
        if lower:
            first = xp.zeros(row, dtype=np.int64)
            last = xp.clip(i + offset + 1, 0, col)
        else:
            first = xp.clip(i + offset, 0, col)
            last = xp.full(row, col, dtype=np.int64)
        counts = last - first
        ends = xp.cumsum(counts)
        total = int(ends[-1]) if row else 0
        k = xp.arange(total, dtype=np.int64)
        rows = xp.searchsorted(ends, k, side="right")
        cols = first[rows] + k - (ends - counts)[rows]
        return _no_grad_tensor(xp.stack([rows, cols]).astype(dtype, copy=False))


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The indices of the lower triangle of a ``row x col`` matrix: a ``(2, N)`` tensor, rows then columns.

    The triangle holds the positions ``(i, j)`` with ``j - i <= offset``
    (``offset=0``: the main diagonal and below; positive offsets add
    diagonals above, negative ones remove some), listed row by row as in
    PyTorch. An offset beyond the matrix gives every position, or none.
    ``dtype`` is int64 (``None``, the default) or int32; ``device=None`` is
    the default device; ``layout`` is accepted only as ``None`` (dense).

    Raises:
        TypeError: ``row``, ``col`` or ``offset`` is not an int.
        RuntimeError: ``row`` or ``col`` is negative.
        NotImplementedError: ``dtype`` is neither int64 nor int32, or a ``layout`` is given.
    """
    return _triangle_indices("tril_indices", True, row, col, offset, dtype, device, layout)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The indices of the upper triangle of a ``row x col`` matrix: a ``(2, N)`` tensor, rows then columns.

    The triangle holds the positions ``(i, j)`` with ``j - i >= offset``
    (``offset=0``: the main diagonal and above), listed row by row as in
    PyTorch; otherwise as ``tril_indices``.

    Raises:
        as ``tril_indices``.
    """
    return _triangle_indices("triu_indices", False, row, col, offset, dtype, device, layout)
