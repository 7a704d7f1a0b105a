"""Sliding windows as a view (``Tensor.unfold``), and ``Tensor.reshape_as``.

``t.unfold(dimension, size, step)`` replaces dimension ``dimension`` (length
``n``) by ``(n - size) // step + 1`` windows and appends a last dimension of
``size``: window ``w`` holds elements ``w * step ... w * step + size - 1``::

    t = [0, 1, 2, 3, 4]       t.unfold(0, 2, 1) = [[0, 1], [1, 2], [2, 3], [3, 4]]
                              t.unfold(0, 2, 2) = [[0, 1], [2, 3]]

The result shares the tensor's memory (strides only, no copy), as in
PyTorch. Where windows overlap (``step < size``) one element appears in
several places, so the view is read-only there: an in-place write raises
RuntimeError (PyTorch's class for writing to such memory) instead of
counting each element several times. Non-overlapping windows write through
to the tensor. The backward adds each window's gradient back into place
(``FoldWindows``); its own backward unfolds again.
"""

from __future__ import annotations

import numpy as np

from minigrad import backend
from minigrad.ops import indexing as _indexing
from minigrad.ops import shape as _shape
from minigrad.ops._util import expect_tensor, normalize_axis
from minigrad.ops._view_pairs import ParamsNode, ParamsView

__all__ = ["FoldWindows", "UnfoldWindows", "reshape_as", "unfold"]


def _strided_view(a, shape, strides):
    """A view of ``a``'s memory with ``shape`` and ``strides`` (bytes), whose ``base`` is ``a``'s memory owner.

    NumPy's ``as_strided`` hides the owner behind a helper object, so the
    result would not count as a view of ``a`` (``ViewNode``, ``views``); the
    ndarray constructor on the owner's buffer keeps it. Arrays whose owner
    offers no buffer (CuPy's, exotic ones) fall back to ``as_strided``.
    """
    owner = a if a.base is None else a.base
    if type(a) is np.ndarray and type(owner) is np.ndarray:
        offset = a.__array_interface__["data"][0] - owner.__array_interface__["data"][0]
        try:
            return np.ndarray(shape, a.dtype, buffer=owner, offset=offset, strides=strides)
        except (TypeError, ValueError, BufferError):
            pass  # an owner that is not one contiguous buffer: as_strided below
    return backend.get_array_module(a).lib.stride_tricks.as_strided(a, shape, strides)


class UnfoldWindows(ParamsView, params=("axis", "size", "step")):
    """a's windows of ``size`` every ``step`` along ``axis``, as a new last dimension (a view)"""

    def view_array(self, a):
        axis, size, step = self.axis, self.size, self.step
        count = (a.shape[axis] - size) // step + 1
        shape = a.shape[:axis] + (count,) + a.shape[axis + 1 :] + (size,)
        strides = a.strides[:axis] + (a.strides[axis] * step,) + a.strides[axis + 1 :] + (a.strides[axis],)
        out = _strided_view(a, shape, strides)
        if step < size and count > 1 and type(out) is np.ndarray:
            out.flags.writeable = False  # overlapping windows: an in-place write raises (inplace.apply_inplace)
        return out

    def backward(self, g):
        return FoldWindows(self.axis, self.size, self.step, self.in_shape)(g)


class FoldWindows(ParamsNode, params=("axis", "size", "step", "shape")):
    """zeros of ``shape`` with every window of ``g`` added back where ``UnfoldWindows`` took it (its adjoint)"""

    def forward(self, g):
        axis, size, step = self.axis, self.size, self.step
        out = self.xp.zeros(self.shape, dtype=g.dtype)
        count = g.shape[axis]
        lead = (slice(None),) * axis
        if size <= count:  # one strided slice per offset in the window: no position twice in a slice
            for k in range(size):
                out[lead + (slice(k, k + step * (count - 1) + 1, step),)] += g[..., k]
        else:  # one slice per window
            for w in range(count):
                out[lead + (slice(w * step, w * step + size),)] += self.xp.moveaxis(g[lead + (w,)], -1, axis)
        return out

    def backward(self, gg):
        return UnfoldWindows(self.axis, self.size, self.step)(gg).contiguous()


def _int(value, fn: str, name: str) -> int:
    if not isinstance(value, (int, np.integer)) or isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{fn}(): argument '{name}' must be int, not {type(value).__name__}")
    return int(value)


def unfold(input, dimension, size, step):  # noqa: A002  (PyTorch's names)
    """The windows of ``size`` elements every ``step`` along ``dimension``, as a view (see the module docstring).

    The result has ``input``'s shape with ``dimension`` replaced by the
    number of windows, ``(n - size) // step + 1``, and a last dimension of
    ``size``; a 0-d input counts as one element and gives shape ``(size,)``.
    Differentiable (an element in several windows sums their gradients).

    Raises:
        TypeError: ``dimension``, ``size`` or ``step`` is not an int.
        IndexError: ``dimension`` is out of range.
        RuntimeError: ``size`` is negative or larger than the dimension, or ``step`` is not positive
            (PyTorch's class).
    """
    fn = "unfold"
    expect_tensor(input, fn)
    dimension = _int(dimension, fn, "dimension")
    size = _int(size, fn, "size")
    step = _int(step, fn, "step")
    (axis,) = normalize_axis(dimension, input.ndim, fn)
    length = input.shape[axis] if input.ndim else 1
    if size > length:
        raise RuntimeError(f"{fn}(): size {size} is larger than dimension {dimension}, which has {length} elements")
    if size < 0:
        raise RuntimeError(f"{fn}(): size is {size} but must be >= 0")
    if step <= 0:
        raise RuntimeError(f"{fn}(): step is {step} but must be > 0")
    if input.ndim == 0:
        return _indexing.index(_shape.reshape(input, (1,)), slice(0, size))
    return UnfoldWindows(axis, size, step)(input)


def reshape_as(input, other):  # noqa: A002
    """``input`` reshaped to ``other``'s shape (a view when the memory allows, else a copy, as ``reshape``).

    Raises:
        TypeError: ``other`` is not a Tensor. RuntimeError: the element counts differ (as PyTorch).
    """
    expect_tensor(input, "reshape_as")
    expect_tensor(other, "reshape_as", "other")
    return _shape.reshape(input, other.shape)


OPS = {"unfold_windows": UnfoldWindows, "fold_windows": FoldWindows}
