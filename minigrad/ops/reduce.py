"""Reductions: sum, mean, max, min (and the non-differentiable argmax/argmin).

Every reduction accepts PyTorch's ``dim``/``keepdim`` and NumPy's
``axis``/``keepdims`` spellings. The gradient of a reduction is the output
gradient broadcast back over the reduced dimensions.
"""

from __future__ import annotations

from collections import namedtuple

from minigrad import backend
from minigrad.function import FunctionNode
from minigrad.ops._util import expect_flag, expect_tensor, normalize_axis, pick_axis
from minigrad.tensor import Tensor

MaxMinResult = namedtuple("MaxMinResult", ["values", "indices"])


class _Reduction(FunctionNode):
    """A reduction over ``axes`` (None: all); a subclass's forward keeps the input's shape as ``in_shape``."""

    def __init__(self, axes=None, keepdims=False):
        self.axes = axes
        self.keepdims = keepdims

    def expand_back(self, g):
        """Broadcast the output gradient ``g`` back to the input's shape."""
        if self.axes is not None and not self.keepdims:
            kept = list(g.shape)
            for a in sorted(self.axes):
                kept.insert(a, 1)
            g = g.reshape(tuple(kept))
        elif self.axes is None and not self.keepdims:
            g = g.reshape((1,) * len(self.in_shape))
        return g.broadcast_to(self.in_shape)


class Sum(_Reduction):
    """sum over ``axes`` (None: all)"""

    def forward(self, a):
        self.in_shape = a.shape
        return a.sum(axis=self.axes, keepdims=self.keepdims)

    def backward(self, g):
        return self.expand_back(g)


class Mean(_Reduction):
    """mean over ``axes`` (None: all)"""

    def forward(self, a):
        self.in_shape = a.shape
        out = a.mean(axis=self.axes, keepdims=self.keepdims)
        self.count = a.size // out.size if a.size and out.size else 1
        return out.astype(a.dtype, copy=False)

    def backward(self, g):
        return self.expand_back(g / self.count)


class MaxAll(FunctionNode):
    """max (or min) over all elements; ties share the gradient equally"""

    def __init__(self, largest=True):
        self.largest = largest

    def forward(self, a):
        if a.size == 0:
            raise RuntimeError("max(): expected a non-empty tensor (reduction over zero elements)")
        out = a.max() if self.largest else a.min()
        mask = a == out
        self.weights = mask / mask.sum(dtype=a.dtype)
        return out

    def backward(self, g):
        return g * self.weights


class MaxDim(FunctionNode):
    """max (or min) along one axis: returns values; the gradient goes to the chosen index"""

    def __init__(self, axis, keepdims=False, largest=True):
        self.axis = axis
        self.keepdims = keepdims
        self.largest = largest

    def forward(self, a):
        xp = self.xp
        if a.shape[self.axis] == 0:
            name = "max" if self.largest else "min"
            raise IndexError(f"{name}(): cannot reduce over dim {self.axis} of size 0")  # PyTorch's class
        idx = a.argmax(axis=self.axis) if self.largest else a.argmin(axis=self.axis)
        idx_kept = xp.expand_dims(idx, self.axis)
        values = xp.take_along_axis(a, idx_kept, axis=self.axis)
        positions = xp.arange(a.shape[self.axis]).reshape(
            (-1,) + (1,) * (a.ndim - self.axis - 1)
        )
        self.onehot = positions == idx_kept
        self.indices = idx_kept if self.keepdims else idx
        return values if self.keepdims else values.squeeze(self.axis)

    def backward(self, g):
        if not self.keepdims:
            g = g.unsqueeze(self.axis)
        return g * self.onehot


def _reduced_axes(dim, ndim, op):
    """``dim`` normalized; an empty tuple or list means every dim, as in PyTorch.

    A 0-d tensor takes dim 0 or -1 as PyTorch does, and reduces over no axis (``()``).
    """
    if isinstance(dim, (tuple, list)) and not dim:
        return None
    axes = normalize_axis(dim, ndim, op)
    if axes is not None and len(set(axes)) != len(axes):
        raise RuntimeError(f"{op}(): dim {dim!r} names a dimension more than once")
    return () if ndim == 0 and axes is not None else axes


def sum(a, dim=None, keepdim=False, *, axis=None, keepdims=None):  # noqa: A001
    """Sum of ``a`` over ``dim`` (int, tuple, or None for every element).

    An empty ``dim`` tuple reduces every dimension, as in PyTorch.

    Raises:
        TypeError: ``a`` is not a Tensor or a dim is not an int.
        IndexError: a dim is out of range.
        RuntimeError: a dim is named twice, as PyTorch.
    """
    expect_tensor(a, "sum")
    dim, keepdim = pick_axis(dim, axis, keepdim, keepdims, "sum")
    return Sum(_reduced_axes(dim, a.ndim, "sum"), keepdim)(a)


def mean(a, dim=None, keepdim=False, *, axis=None, keepdims=None):
    """Mean of ``a`` over ``dim`` (int, tuple, or None for every element).

    An empty ``dim`` tuple reduces every dimension, as in PyTorch.

    Raises:
        TypeError: ``a`` is not a Tensor or a dim is not an int.
        RuntimeError: ``a`` is not floating point (like PyTorch).
        IndexError: a dim is out of range.
        RuntimeError: a dim is named twice, as PyTorch.
    """
    expect_tensor(a, "mean")
    dim, keepdim = pick_axis(dim, axis, keepdim, keepdims, "mean")
    if a.dtype.kind not in "fc":
        raise RuntimeError(f"mean(): expected a floating point tensor, got dtype {a.dtype}")
    return Mean(_reduced_axes(dim, a.ndim, "mean"), keepdim)(a)


def _extremum(a, dim, keepdim, axis, keepdims, largest):
    name = "max" if largest else "min"
    expect_tensor(a, name)
    dim, keepdim = pick_axis(dim, axis, keepdim, keepdims, name)
    if dim is None:
        return MaxAll(largest)(a)
    if not isinstance(dim, int):
        raise TypeError(f"{name}(): dim must be a single int, got {dim!r}")
    (axis_,) = normalize_axis(dim, a.ndim, name)
    if a.ndim == 0:
        # PyTorch treats a 0-d tensor as having one dim of size 1: dim 0 (or -1) is the element itself.
        values, indices = _extremum(a.reshape(1), 0, False, None, None, largest)
        return MaxMinResult(values.reshape(()), indices.reshape(()))
    node = MaxDim(axis_, keepdim, largest)
    values = node(a)
    indices = Tensor._make(node.indices, False, None, 0)
    return MaxMinResult(values, indices)


def max(a, dim=None, keepdim=False, *, axis=None, keepdims=None):  # noqa: A001
    """Largest element of ``a``; with ``dim``, ``(values, indices)`` along it like PyTorch."""
    return _extremum(a, dim, keepdim, axis, keepdims, True)


def min(a, dim=None, keepdim=False, *, axis=None, keepdims=None):  # noqa: A001
    """Smallest element of ``a``; with ``dim``, ``(values, indices)`` along it like PyTorch."""
    return _extremum(a, dim, keepdim, axis, keepdims, False)


def argmax(a, dim=None, keepdim=False):
    """Index of the largest element (flattened when ``dim`` is None); not differentiable."""
    return _arg(a, dim, keepdim, True)


def argmin(a, dim=None, keepdim=False):
    """Index of the smallest element (flattened when ``dim`` is None); not differentiable."""
    return _arg(a, dim, keepdim, False)


def _arg(a, dim, keepdim, largest):
    data = a.array
    name = "argmax" if largest else "argmin"
    keepdim = expect_flag(keepdim, name, "keepdim")
    if dim is None:
        if data.size == 0:
            raise IndexError(f"{name}(): the tensor of shape {a.shape} is empty; give a dim of non-zero size")
        idx = data.argmax() if largest else data.argmin()
        return Tensor._make(idx, False, None, 0)
    if not isinstance(dim, int):
        raise TypeError(f"{name}(): dim must be a single int, got {dim!r}")
    (axis,) = normalize_axis(dim, a.ndim, name)
    if a.ndim == 0:
        return Tensor._make(backend.get_array_module(data).zeros((), dtype="int64"), False, None, 0)
    if a.shape[axis] == 0:
        raise IndexError(f"{name}(): cannot reduce over dim {dim} of size 0 (shape {a.shape})")
    idx = data.argmax(axis=axis, keepdims=keepdim) if largest else data.argmin(axis=axis, keepdims=keepdim)
    return Tensor._make(idx, False, None, 0)
