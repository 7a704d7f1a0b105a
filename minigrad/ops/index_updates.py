"""Writes at indices: ``index_fill``, ``index_copy``, ``masked_scatter``, ``scatter_reduce`` and ``index_put``,
each with its in-place ``_`` form.

Every function here is PyTorch's, with PyTorch's argument names, result
dtypes and exception classes. The in-place forms go through
``inplace.apply_inplace`` (version counter, leaf checks, views written
through to their base); the out-of-place forms are a copy written in place,
so the two never disagree::

    index_fill(t, 1, [0, 2], v)       t[:, [0, 2]] = v        (v: a number or a 0-d tensor)
    index_copy(t, 1, [0, 2], s)       t[:, [0, 2]] = s        (s: t's shape with 2 along dim 1)
    masked_scatter(t, mask, s)        t[mask] = s.flatten()[:mask.sum()]
    index_put(t, (i, j), v)           t[i, j] = v             (accumulate=True: t[i, j] += v, repeats add up)
    scatter_reduce(t, 1, idx, s, r)   t[i][idx[i][j]] = r(t[i][idx[i][j]], s[i][j], ...)

The first four are recorded as ``inplace.IndexPut`` (the written region gets
the value's gradient, the rest the old value's) or, for ``accumulate``, as
an addition of ``indexing.IndexScatter``. ``scatter_reduce`` is its own op,
``ScatterReduce``, with PyTorch's gradients for every reduction: ``sum``,
``mean`` (each contributor gets ``g / count``), ``amax``/``amin`` (shared
evenly among the contributors equal to the result, as PyTorch shares it,
including a self that is not part of the reduction when ``include_self`` is
False) and ``prod`` (the product of the other contributors, exact with
zeros). As in PyTorch the second derivative of ``prod`` is refused where two
or more zeros of ``src`` meet at one position.
"""

from __future__ import annotations

import numpy as np

from minigrad import backend
from minigrad import inplace as _inplace
from minigrad.function import FunctionNode
from minigrad.grad_mode import _state as _grad_state
from minigrad.ops import elementwise as _ew
from minigrad.ops import gather as _gather
from minigrad.ops import indexing as _indexing
from minigrad.ops import shape as _shape
from minigrad.ops._util import expect_flag, expect_tensor
from minigrad.tensor import Tensor

__all__ = [
    "ScatterReduce",
    "index_copy",
    "index_copy_",
    "index_fill",
    "index_fill_",
    "index_put",
    "index_put_",
    "masked_scatter",
    "masked_scatter_",
    "scatter_reduce",
    "scatter_reduce_",
]

_NUMBERS = (int, float, complex, np.number, np.bool_)


def _constant(array) -> Tensor:
    """An array as a Tensor that needs no gradient (masks, counts)."""
    return Tensor._make(array, False, None, 0)


def _index_array(index, tensor):
    """``index``'s array on ``tensor``'s device (a CPU index may address a CUDA tensor, as in PyTorch)."""
    return backend.to_device(index.array, tensor.device)


def _bounds(index_array, size: int, axis: int, fn: str, negatives: bool) -> None:
    """IndexError (PyTorch's class) unless every entry addresses one of ``size`` positions along ``axis``."""
    if index_array.size == 0:
        return
    low, high = int(index_array.min()), int(index_array.max())
    floor = -size if negatives else 0
    bad = low if low < floor else high if high >= size else None
    if bad is not None:
        raise IndexError(f"{fn}(): index {bad} is out of bounds for dimension {axis} with size {size}")


def _not_complex(dtype, value_dtype, fn: str) -> None:
    if value_dtype.kind == "c" and dtype.kind != "c":
        raise RuntimeError(
            f"{fn}(): a complex value cannot be written into a tensor of dtype {dtype} (its imaginary part "
            "would be lost); use a complex tensor, or pass value.real"
        )


def _expect_same_dtype(tensor, other, fn: str, name: str) -> None:
    if other.dtype != tensor.dtype:
        raise RuntimeError(
            f"{fn}(): self and {name} must have the same dtype, got {tensor.dtype} and {other.dtype}; "
            f"convert {name} with .to({tensor.dtype})"
        )


def _put(tensor, fn: str, where, value):
    """``tensor[where] = value`` in place, recorded as ``inplace.IndexPut``; returns ``tensor``.

    ``value`` is a number or a Tensor that broadcasts to the region. A 0-d
    ``tensor`` is written as the 1-element vector it is (``where`` indexes that).
    """
    scalar = tensor.ndim == 0
    value_data = value.array if isinstance(value, Tensor) else value

    def update(data):
        (data.reshape(1) if scalar else data)[where] = value_data

    def compute(old):
        if scalar:
            return _inplace.IndexPut(where)(old.reshape(1), value).reshape(())
        return _inplace.IndexPut(where)(old, value)

    return _inplace.apply_inplace(tensor, fn, update, compute, (value,))


# -- index_fill ---------------------------------------------------------------------------------------


def _fill_value(tensor, value, fn: str):
    """``value`` ready to write into ``tensor``: a number it can hold, or a 0-d Tensor of its dtype and device.

    Raises:
        TypeError: ``value`` is neither a number nor a Tensor.
        RuntimeError: a Tensor that is not 0-d, a complex value for a real tensor, a number the dtype
            cannot hold (300 in uint8, nan in int64), or a value that requires grad for an integer tensor.
    """
    dtype = tensor.dtype
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError(f"{fn}(): value must be a number or a 0-d tensor, got a tensor of shape "
                               f"{tuple(value.shape)}")
        _not_complex(dtype, value.dtype, fn)
        if value.requires_grad and _grad_state.enabled and dtype.kind not in "fc":
            raise RuntimeError(f"{fn}(): a value that requires grad cannot fill a tensor of dtype {dtype} "
                               "(autograd needs floating point); detach the value or use a float tensor")
        if value.device != tensor.device:
            value = value.to(tensor.device)
        return value if value.dtype == dtype else _ew.Cast(dtype)(value)
    if not isinstance(value, _NUMBERS):
        raise TypeError(f"{fn}(): argument 'value' must be a number or a 0-d Tensor, got {type(value).__name__}")
    value = value.item() if isinstance(value, np.generic) else value
    if isinstance(value, complex):
        _not_complex(dtype, np.dtype(complex), fn)
    return _inplace.storable(value, dtype, fn)


def index_fill_(input, dim, index, value):  # noqa: A002  (PyTorch's names)
    """Set the slices at positions ``index`` along ``dim`` to ``value``, in place; returns ``input``.

    ``index`` is a 0-d or 1-D int64 tensor; negative positions count from
    the end and repeats are allowed. ``value`` is a number (converted to the
    tensor's dtype, 2.7 filling an integer tensor with 2) or a 0-d tensor,
    which receives the sum of the gradient over the filled slices (each
    position once). Recorded for autograd like every in-place op.

    Raises:
        TypeError: ``input``/``index`` is not a Tensor, ``dim`` not an int, ``value`` not a number or Tensor.
        IndexError: ``dim`` is out of range, ``index`` is not int64, or an entry is outside
            ``[-size, size)`` (PyTorch's classes).
        RuntimeError: ``index`` has more than one dimension, or ``value`` does not fit (see ``_fill_value``).
    """
    fn = "index_fill_"
    expect_tensor(input, fn)
    axis = _gather._dim(input, dim, fn)
    expect_tensor(index, fn, "index")
    if index.dtype != np.int64:
        raise IndexError(f"{fn}(): expected an int64 index, got dtype {index.dtype}; convert it with .long()")
    if index.ndim > 1:
        raise RuntimeError(f"{fn}(): index must be a vector or a scalar, got shape {tuple(index.shape)}")
    value = _fill_value(input, value, fn)
    size = input.shape[axis] if input.ndim else 1
    index_array = _index_array(index, input).reshape(-1)
    _bounds(index_array, size, axis, fn, negatives=True)
    # Each position once: a 0-d value's gradient then sums the filled slices without counting a repeat twice.
    rows = backend.get_array_module(index_array).unique(index_array % max(size, 1))
    return _put(input, fn, (slice(None),) * axis + (rows,), value)


def index_fill(input, dim, index, value):  # noqa: A002
    """A copy of ``input`` with the slices at ``index`` along ``dim`` set to ``value``; see ``index_fill_``."""
    expect_tensor(input, "index_fill")
    return index_fill_(input.clone(), dim, index, value)


# -- index_copy ---------------------------------------------------------------------------------------


def _check_index_copy(tensor, axis, index, source, fn: str) -> int:
    """PyTorch's checks of ``index_copy_``, in its order (so a call with two faults raises its class).

    Returns the number of positions. Raises IndexError or RuntimeError as documented at ``index_copy_``.
    """
    if index.ndim > 1:
        raise IndexError(f"{fn}(): index must have 0 or 1 dimensions, got shape {tuple(index.shape)}")
    count = index.numel()
    if source.ndim == 0 and count != 1:
        raise IndexError(f"{fn}(): a 0-d source needs an index of one element, got {count}")
    if source.ndim != tensor.ndim and source.ndim != 0 and tensor.ndim != 0:
        raise IndexError(f"{fn}(): source must have the tensor's {tensor.ndim} dimensions, got {source.ndim} "
                         f"(source shape {tuple(source.shape)}, tensor shape {tuple(tensor.shape)})")
    if index.dtype != np.int64:
        raise RuntimeError(f"{fn}(): expected an int64 index, got dtype {index.dtype}; convert it with .long()")
    _expect_same_dtype(tensor, source, fn, "source")
    kept = [n for d, n in enumerate(tensor.shape) if d != axis]
    source_kept = [n for d, n in enumerate(source.shape) if d != axis]
    if kept != source_kept:
        raise RuntimeError(
            f"{fn}(): source of shape {tuple(source.shape)} must have the tensor's shape {tuple(tensor.shape)} "
            f"apart from dimension {axis}"
        )
    if source.ndim and source.shape[axis] != count:
        raise IndexError(f"{fn}(): index has {count} positions but source has {source.shape[axis]} along "
                         f"dimension {axis}; they must be equal")
    return count


def index_copy_(input, dim, index, source):  # noqa: A002
    """Copy the slices of ``source`` into ``input`` at positions ``index`` along ``dim``, in place.

    ``input[..., index[k], ...] = source[..., k, ...]``. ``index`` is a 0-d or
    1-D int64 tensor of positions in ``[0, size)``; ``source`` has
    ``input``'s dtype and shape with ``len(index)`` along ``dim`` (or is 0-d
    for a single position). Where ``index`` repeats a position, the later
    slice wins. Differentiable in both tensors: ``source`` gets the gradient
    of the positions it was copied to (a repeated one gets it each time).

    Raises:
        TypeError: ``input``, ``index`` or ``source`` is not a Tensor, or ``dim`` is not an int.
        IndexError: ``dim`` is out of range, ``index`` has 2 or more dimensions, a position is out of
            range, or ``source`` has another number of dimensions or of slices than ``index`` (PyTorch's class).
        RuntimeError: ``index`` is not int64, ``source`` has another dtype or another slice shape.
    """
    fn = "index_copy_"
    expect_tensor(input, fn)
    expect_tensor(index, fn, "index")
    expect_tensor(source, fn, "source")
    axis = _gather._dim(input, dim, fn)
    count = _check_index_copy(input, axis, index, source, fn)
    index_array = _index_array(index, input).reshape(-1)
    size = input.shape[axis] if input.ndim else 1
    _bounds(index_array, size, axis, fn, negatives=False)
    if source.device != input.device:
        raise RuntimeError(f"{fn}(): source is on {source.device} but the tensor on {input.device}; move it "
                           f"with .to('{input.device}')")
    block = tuple(count if d == axis else n for d, n in enumerate(input.shape)) if input.ndim else (count,)
    source = source if source.shape == block else _shape.reshape(source, block)
    return _put(input, fn, (slice(None),) * axis + (index_array,), source)


def index_copy(input, dim, index, source):  # noqa: A002
    """A copy of ``input`` with ``source``'s slices at positions ``index`` along ``dim``; see ``index_copy_``."""
    expect_tensor(input, "index_copy")
    return index_copy_(input.clone(), dim, index, source)


# -- masked_scatter -----------------------------------------------------------------------------------


def _mask_array(mask, fn: str):
    expect_tensor(mask, fn, "mask")
    if mask.dtype != np.bool_:
        raise RuntimeError(f"{fn}(): mask must be a bool tensor, got dtype {mask.dtype}; use mask.bool()")
    return mask.array


def masked_scatter_(input, mask, source):  # noqa: A002
    """Write ``source``'s first elements, in row-major order, where ``mask`` is true, in place.

    ``mask`` is a bool tensor that broadcasts to ``input``'s shape;
    ``source`` has ``input``'s dtype, any shape and at least as many
    elements as ``mask`` has true entries (the rest are unused).
    Differentiable in both: ``source``'s used elements get the gradient at
    the positions they were written to, the unused ones zero.

    Raises:
        TypeError: ``input``, ``mask`` or ``source`` is not a Tensor.
        RuntimeError: ``mask`` is not bool or does not broadcast to ``input``'s shape, ``source`` has
            another dtype or too few elements (PyTorch's class for all four).
    """
    fn = "masked_scatter_"
    expect_tensor(input, fn)
    mask_data = _mask_array(mask, fn)
    expect_tensor(source, fn, "source")
    _expect_same_dtype(input, source, fn, "source")
    try:
        fits = np.broadcast_shapes(input.shape, mask.shape) == input.shape
    except ValueError:
        fits = False
    if not fits:
        raise RuntimeError(f"{fn}(): mask of shape {tuple(mask.shape)} does not broadcast to the tensor's "
                           f"shape {tuple(input.shape)}")
    xp = backend.get_array_module(input.array)
    mask_data = xp.broadcast_to(backend.to_device(mask_data, input.device), input.shape)
    count = int(xp.count_nonzero(mask_data))
    if source.numel() < count:
        raise RuntimeError(f"{fn}(): source has {source.numel()} elements but the mask selects {count}; give a "
                           "source with at least as many elements as the mask has true entries")
    if source.device != input.device:
        raise RuntimeError(f"{fn}(): source is on {source.device} but the tensor on {input.device}; move it "
                           f"with .to('{input.device}')")
    used = _shape.reshape(source, (-1,))
    if used.shape[0] != count:
        used = _indexing.index(used, slice(0, count))
    used_data = used.array

    def update(data):
        data[mask_data] = used_data

    return _inplace.apply_inplace(input, fn, update, lambda old: _inplace.IndexPut(mask_data)(old, used), (used,))


def masked_scatter(input, mask, source):  # noqa: A002
    """A copy of ``input`` with ``source``'s elements written where ``mask`` is true; see ``masked_scatter_``.

    Unlike the in-place form, ``input`` and ``mask`` broadcast together: the
    result has their broadcast shape, as in PyTorch.

    Raises:
        TypeError: a non-Tensor argument. RuntimeError: see ``masked_scatter_``; the shapes do not broadcast.
    """
    fn = "masked_scatter"
    expect_tensor(input, fn)
    _mask_array(mask, fn)
    try:
        shape = np.broadcast_shapes(input.shape, mask.shape)
    except ValueError:
        raise RuntimeError(f"{fn}(): mask of shape {tuple(mask.shape)} does not broadcast with the tensor's "
                           f"shape {tuple(input.shape)}") from None
    base = input if shape == input.shape else _shape.expand(input, shape)
    return masked_scatter_(base.clone(), mask, source)


# -- index_put ----------------------------------------------------------------------------------------


def _put_index(tensor, indices, fn: str):
    """``indices`` as an index of arrays on ``tensor``'s device, and the shape of ``tensor[index]``.

    Raises:
        TypeError: ``indices`` is not a tuple or list of Tensors.
        IndexError: an index is not an integer or bool tensor, a position is out of range, a mask does
            not match the dimensions it indexes, the indices do not broadcast together, or there are more
            of them than dimensions (PyTorch's class for each).
        RuntimeError: ``indices`` is empty, or an index is uint8 (PyTorch refuses byte masks here).
    """
    if not isinstance(indices, (tuple, list)):
        raise TypeError(f"{fn}(): argument 'indices' must be a tuple of Tensors, got {type(indices).__name__}")
    for i, item in enumerate(indices):
        if not isinstance(item, Tensor):
            raise TypeError(f"{fn}(): argument 'indices' must be a tuple of Tensors, got {type(item).__name__} "
                            f"at position {i}")
    if not indices:
        raise RuntimeError(f"{fn}(): indices must hold at least one index tensor")
    start = 0  # the first dimension the next index addresses
    for item in indices:
        if item.dtype != np.bool_ and item.dtype.kind not in "iu":
            raise IndexError(f"{fn}(): index tensors must be integer or bool tensors, got dtype {item.dtype}")
        if item.dtype == np.uint8:  # PyTorch reads it as a mask, then refuses it
            if tuple(item.shape) != tuple(tensor.shape[start : start + item.ndim]):
                raise IndexError(f"{fn}(): a uint8 index is read as a mask, and its shape {tuple(item.shape)} "
                                 f"does not match the dimensions {start}.. of the tensor's {tuple(tensor.shape)}")
            raise RuntimeError(f"{fn}(): uint8 masks are not supported; use a bool mask (mask.bool())")
        start += item.ndim if item.dtype == np.bool_ else 1
    if tensor.ndim == 0:
        raise IndexError(f"{fn}(): too many indices for a 0-d tensor (got {len(indices)})")
    index = tuple(_index_array(item, tensor) for item in indices)
    xp = backend.get_array_module(tensor.array)
    probe = xp.broadcast_to(xp.zeros((), dtype=bool), tensor.shape)  # zero strides: no memory of tensor's size
    try:
        shape = probe[index].shape
    except IndexError as error:
        raise IndexError(f"{fn}(): indices {_describe(indices)} do not fit a tensor of shape "
                         f"{tuple(tensor.shape)}: {error}") from None
    return index, shape


def _describe(indices) -> str:
    return "(" + ", ".join(f"<{item.dtype} tensor of shape {tuple(item.shape)}>" for item in indices) + ")"


def index_put_(input, indices, values, accumulate=False):  # noqa: A002
    """``input[indices] = values`` in place (``+=`` with ``accumulate=True``); returns ``input``.

    ``indices`` is a tuple (or list) of integer or bool tensors, one per
    leading dimension indexed, as in ``input[i, j]``; negative positions count
    from the end. ``values`` has ``input``'s dtype and broadcasts to the
    indexed shape. Without ``accumulate`` a repeated position gets one of its
    values; with it every value is added. Differentiable in ``input`` and
    ``values``.

    Raises:
        TypeError: ``input``/``values`` is not a Tensor, ``indices`` not a tuple of Tensors,
            ``accumulate`` not a bool.
        IndexError: see ``_put_index`` (bad index dtype, position out of range, shapes that do not fit).
        RuntimeError: ``values`` has another dtype or does not broadcast to the indexed shape; empty
            ``indices``; a uint8 index.
    """
    fn = "index_put_"
    expect_tensor(input, fn)
    expect_tensor(values, fn, "values")
    accumulate = expect_flag(accumulate, fn, "accumulate")
    index, shape = _put_index(input, indices, fn)
    if values.dtype != input.dtype:
        raise RuntimeError(f"{fn}(): values must have the tensor's dtype {input.dtype}, got {values.dtype}; "
                           f"convert them with .to({input.dtype})")
    try:
        fits = np.broadcast_shapes(shape, values.shape) == shape
    except ValueError:
        fits = False
    if not fits:
        raise RuntimeError(f"{fn}(): values of shape {tuple(values.shape)} cannot be broadcast to the indexed "
                           f"shape {shape}")
    if values.device != input.device:
        raise RuntimeError(f"{fn}(): values are on {values.device} but the tensor on {input.device}; move them "
                           f"with .to('{input.device}')")
    values_data = values.array
    if accumulate:

        def update(data):
            backend.scatter_add(data, index, values_data)

        def compute(old):
            spread = values if values.shape == shape else _shape.expand(values, shape)
            return old + _indexing.IndexScatter(index, old.shape)(spread)

    else:

        def update(data):
            data[index] = values_data

        def compute(old):
            return _inplace.IndexPut(index)(old, values)

    return _inplace.apply_inplace(input, fn, update, compute, (values,))


def index_put(input, indices, values, accumulate=False):  # noqa: A002
    """A copy of ``input`` with ``values`` written (or added) at ``indices``; see ``index_put_``."""
    expect_tensor(input, "index_put")
    return index_put_(input.clone(), indices, values, accumulate)


# -- scatter_reduce -----------------------------------------------------------------------------------

REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")
_ALIASES = {"max": "amax", "min": "amin"}  # PyTorch accepts these too
_UFUNCS = {"prod": "multiply", "amax": "maximum", "amin": "minimum"}

PROD_DOUBLE_BACKWARD_MESSAGE = (
    "scatter_reduce(): the second derivative of reduce='prod' is not supported where two or more zeros of "
    "src are scattered to the same position (as in PyTorch); keep zeros apart or take first derivatives only"
)


def _identity(reduce: str, dtype):
    """The value a reduction starts from when ``include_self`` is False."""
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    largest = reduce == "amin"
    if dtype.kind == "b":
        return largest
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return info.max if largest else info.min
    return np.inf if largest else -np.inf


def _apply_at(target, where, values, name: str) -> None:
    """``target[where] = ufunc(target[where], values)`` with every repeated position applied (``ufunc.at``).

    A device whose ufunc lacks ``at`` for this ufunc or dtype applies the
    values in rounds: the k-th occurrence of every position in round k, so
    each round writes each position once.
    """
    xp = backend.get_array_module(target)
    ufunc = getattr(xp, name)
    at = getattr(ufunc, "at", None)
    if at is not None:
        try:
            with np.errstate(invalid="ignore"):  # NaN meeting NaN in maximum/minimum: it propagates, as in PyTorch
                at(target, where, values)
            return
        except (NotImplementedError, TypeError):
            pass  # this device's ufunc.at lacks the ufunc or the dtype: the rounds below
    _gather.apply_at_in_rounds(target, where, values, ufunc)


def _scatter_reduced(xp, a, index_array, src, axis, reduce, include_self):
    """``(out, hit, counts)``: ``a`` reduced with ``src`` at ``index_array`` along ``axis`` (a new array).

    ``hit`` marks the positions some index entry reaches (None when
    ``include_self``); ``counts`` the number of contributors of each
    position, at least 1 (``mean`` only, else None).
    """
    where = _gather.positions(xp, index_array, axis)
    block = src[_gather._leading_block(index_array.shape)]
    out = a.copy()
    hit = None
    if not include_self:
        hit = xp.zeros(a.shape, dtype=bool)
        hit[where] = True
        out[hit] = _identity(reduce, a.dtype)
    if reduce in ("sum", "mean"):
        backend.scatter_add(out, where, block)
    else:
        _apply_at(out, where, block, _UFUNCS[reduce])
    counts = None
    if reduce == "mean":
        counts = xp.full(a.shape, 1 if include_self else 0, dtype=np.int64)
        backend.scatter_add(counts, where, xp.ones(index_array.shape, dtype=np.int64))
        counts = xp.maximum(counts, 1)
        if a.dtype.kind in "iu":
            out = xp.floor_divide(out, counts).astype(a.dtype)  # PyTorch rounds an integer mean down
        else:
            out = (out / counts).astype(a.dtype)
    return out, hit, counts


class ScatterReduce(FunctionNode):
    """a reduced with ``src`` at ``index`` along ``axis`` (inputs: a, index, src); see ``scatter_reduce``

    Backward, as PyTorch's: ``sum``: ``g`` and ``g`` gathered; ``mean``: the
    same divided by each position's count; ``amax``/``amin``: ``g`` shared
    evenly by every contributor equal to the result; ``prod``: ``g`` times the
    product of the other contributors. Without ``include_self`` the reached
    positions of ``a`` get no gradient.
    """

    def __init__(self, axis, reduce, include_self):
        self.axis = axis
        self.reduce = reduce
        self.include_self = include_self

    def forward(self, a, index_array, src):
        xp = self.xp
        reduce = self.reduce
        if reduce == "prod":
            self.retain_inputs((0, 1, 2))
            self.retain_outputs((0,))
        else:
            self.retain_inputs((1,))
        self.src_shape = src.shape
        out, self.hit, counts = _scatter_reduced(xp, a, index_array, src, self.axis, reduce, self.include_self)
        if reduce == "mean":
            self.counts = counts
        elif reduce in ("amax", "amin"):
            # Who shares the gradient: every contributor equal to the result (PyTorch's rule, self included
            # by comparison even without include_self). Comparisons have no gradient: kept as constants.
            where = _gather.positions(xp, index_array, self.axis)
            self.self_is = (a == out).astype(a.dtype)
            self.src_is = (src[_gather._leading_block(index_array.shape)] == out[where]).astype(a.dtype)
            shares = self.self_is.copy()
            backend.scatter_add(shares, where, self.src_is)
            self.shares = shares
        return out

    def backward(self, g):
        need_a, _, need_src = self.needs_input_grad
        reduce, axis = self.reduce, self.axis
        if reduce == "prod":
            a_t, index_t, src_t = self.saved_inputs
            (result,) = self.saved_outputs
            grad_a, grad_block = self._prod_grads(g, a_t, index_t, src_t, result, need_a, need_src)
        else:
            (index_t,) = self.saved_inputs
            if reduce == "mean":
                g = g / _constant(self.counts.astype(g.dtype))
            elif reduce in ("amax", "amin"):
                g = g / _constant(self.shares)
            grad_a = g if need_a else None
            grad_block = _gather.Gather(axis)(g, index_t) if need_src else None
            if reduce in ("amax", "amin"):
                grad_a = grad_a * _constant(self.self_is) if need_a else None
                grad_block = grad_block * _constant(self.src_is) if need_src else None
        if need_a and self.hit is not None:
            grad_a = _ew.where(self.hit, 0, grad_a)
        grad_src = None
        if need_src:
            grad_src = grad_block
            if grad_src.shape != tuple(self.src_shape):  # src larger than the index: its unused part gets zero
                block = _gather._leading_block(grad_src.shape)
                grad_src = _indexing.IndexScatter(block, tuple(self.src_shape))(grad_src)
        return grad_a, None, grad_src

    def _prod_grads(self, g, a_t, index_t, src_t, result, need_a, need_src):
        """The gradients of ``prod``: each contributor gets ``g`` times the product of the others.

        ``result / x`` gives that product unless ``x`` is 0; a zero ``a`` is
        replaced by 1 before the product is taken again, and so is a zero of
        ``src`` when it is its position's only zero in ``src`` (with two,
        every exclusive product is 0 already).
        """
        axis, include_self, xp = self.axis, self.include_self, self.xp
        op = ScatterReduce(axis, "prod", include_self)
        grad_a = grad_block = None
        if need_a:
            safe_a = _ew.masked_fill(a_t, a_t.array == 0, 1)
            grad_a = g * op(safe_a, index_t, src_t) / safe_a
        if need_src:
            lead = _gather._leading_block(index_t.shape)
            where = _gather.positions(xp, index_t.array, axis)
            block_zero = src_t.array[lead] == 0
            zeros = xp.zeros(a_t.shape, dtype=np.int64)
            backend.scatter_add(zeros, where, block_zero.astype(np.int64))
            zeros_here = zeros[where]
            single = block_zero & (zeros_here == 1)
            single_full = xp.zeros(src_t.shape, dtype=bool)
            single_full[lead] = single
            without_it = op(a_t, index_t, _ew.masked_fill(src_t, single_full, 1))
            block = src_t if src_t.shape == index_t.shape else _indexing.index(src_t, lead)
            grad_block = _ew.where(
                single,
                _gather.Gather(axis)(g * without_it, index_t),
                _gather.Gather(axis)(g * result, index_t) / _ew.masked_fill(block, block_zero, 1),
            )
            if bool((zeros_here > 1).any()):
                grad_block = _RefuseSecondDerivative(PROD_DOUBLE_BACKWARD_MESSAGE)(grad_block)
        return grad_a, grad_block


class _RefuseSecondDerivative(FunctionNode):
    """Identity whose backward raises ``message``: a first derivative that is right but has no derivative."""

    def __init__(self, message):
        self.message = message

    def forward(self, x):
        return x

    def backward(self, g):
        raise RuntimeError(self.message)


def _scatter_reduce_args(fn, input, dim, index, src, reduce, include_self):  # noqa: A002
    """Check ``scatter_reduce``'s arguments; return ``(axis, reduce)`` with an alias spelled out.

    Raises: as documented at ``scatter_reduce``.
    """
    expect_tensor(input, fn)
    expect_tensor(src, fn, "src")
    if not isinstance(reduce, str):
        raise TypeError(f"{fn}(): argument 'reduce' must be str, got {type(reduce).__name__}")
    include_self = expect_flag(include_self, fn, "include_self")
    axis, _ = _gather._scatter_args(fn, input, dim, index, src)
    reduce = _ALIASES.get(reduce, reduce)
    if reduce not in REDUCTIONS:
        raise RuntimeError(f"{fn}(): reduce must be one of {', '.join(REDUCTIONS)}, got {reduce!r}")
    kind = input.dtype.kind
    if (reduce == "mean" and kind == "b") or (reduce in ("amax", "amin") and kind == "c"):
        raise NotImplementedError(f"{fn}(): reduce={reduce!r} is not implemented for dtype {input.dtype}")
    return axis, reduce, include_self


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):  # noqa: A002
    """A copy of ``input`` where each position ``index`` reaches along ``dim`` holds a reduction.

    For ``dim == 1`` every ``src[i][j]`` joins the reduction at
    ``out[i][index[i][j]]``; ``reduce`` is ``"sum"``, ``"prod"``, ``"mean"``,
    ``"amax"`` or ``"amin"`` (``"max"``/``"min"`` are accepted as PyTorch
    accepts them). With ``include_self`` (the default) the input's own value
    joins too; without it a reached position holds the reduction of ``src``
    alone. Positions no index reaches keep the input's value. An integer
    ``mean`` rounds down; ``sum``/``prod``/``amax``/``amin`` of bools are
    or/and/or/and. ``index`` (int64 or int32) and ``src`` (``input``'s dtype)
    follow ``scatter``'s shape rules. Differentiable in ``input`` and ``src``
    (see ``ScatterReduce``).

    Raises:
        TypeError: ``input``/``index``/``src`` is not a Tensor, ``dim`` not an int, ``reduce`` not a str,
            ``include_self`` not a bool.
        IndexError: ``dim`` is out of range.
        RuntimeError: an unknown ``reduce``; ``index`` of another dtype, rank or a larger size, or a
            position out of range; ``src`` of another dtype (PyTorch's classes).
        NotImplementedError: ``mean`` of bools, ``amax``/``amin`` of complex numbers (as PyTorch).
    """
    fn = "scatter_reduce"
    axis, reduce, include_self = _scatter_reduce_args(fn, input, dim, index, src, reduce, include_self)
    if input.ndim == 0:
        flat = ScatterReduce(0, reduce, include_self)(input.reshape(1), index.reshape(1), _gather._as_1d(src))
        return flat.reshape(())
    return ScatterReduce(axis, reduce, include_self)(input, index, src)


def scatter_reduce_(input, dim, index, src, reduce, *, include_self=True):  # noqa: A002
    """``scatter_reduce`` written into ``input``'s memory; returns ``input`` (recorded like every in-place op)."""
    fn = "scatter_reduce_"
    axis, reduce, include_self = _scatter_reduce_args(fn, input, dim, index, src, reduce, include_self)
    scalar = input.ndim == 0
    if scalar:
        index, src = index.reshape(1), _gather._as_1d(src)
    index_data = index.array
    src_data = src.array

    def update(data):
        target = data.reshape(1) if scalar else data
        xp = backend.get_array_module(data)
        target[...] = _scatter_reduced(xp, target, index_data, src_data, axis, reduce, include_self)[0]

    def compute(old):
        if scalar:
            return ScatterReduce(0, reduce, include_self)(old.reshape(1), index, src).reshape(())
        return ScatterReduce(axis, reduce, include_self)(old, index, src)

    return _inplace.apply_inplace(input, fn, update, compute, (src,))


OPS = {"scatter_reduce": ScatterReduce}
