"""Helpers shared by the op families: gradient unbroadcasting, axis normalization."""

from __future__ import annotations

import numpy as np

from minigrad.tensor import Tensor


def unbroadcast(grad, shape, dtype=None):
    """Sum ``grad`` (a Tensor) down to ``shape``, undoing NumPy broadcasting.

    Broadcasting prepends dimensions and stretches size-1 ones; the gradient
    of an input is the sum of its output gradient over both. When ``dtype``
    is given (the input's dtype, where type promotion computed the output in
    another one), the result is cast to it: every input gets its gradient in
    its own dtype, as in PyTorch.
    """
    if grad.shape != shape:
        lead = grad.ndim - len(shape)
        axes = tuple(range(lead)) + tuple(
            lead + i for i, n in enumerate(shape) if n == 1 and grad.shape[lead + i] != 1
        )
        if axes:
            grad = grad.sum(axes)
        if grad.shape != shape:
            grad = grad.reshape(shape)
    if dtype is not None and grad.dtype != dtype:
        grad = grad.to(dtype)
    return grad


def shape_of(x) -> tuple:
    """The shape of an array, or () for a Python scalar."""
    return getattr(x, "shape", ())


def normalize_axis(axis, ndim: int, op: str):
    """``axis`` (None, int or tuple) as a tuple of non-negative ints, or None for all.

    Raises:
        IndexError: an axis is out of range for ``ndim`` dimensions.
    """
    if axis is None:
        return None
    if isinstance(axis, (int, np.integer)):
        axes = (axis,)
    elif isinstance(axis, (tuple, list)):
        axes = tuple(axis)
    else:
        raise TypeError(f"{op}: dim must be an int or a tuple of ints, got {type(axis).__name__}")
    out = []
    for a in axes:
        if not isinstance(a, (int, np.integer)):
            raise TypeError(f"{op}: dim must be an int or a tuple of ints, got {type(a).__name__}")
        if not -max(ndim, 1) <= a < max(ndim, 1):
            raise IndexError(f"{op}: dim {a} is out of range for a tensor with {ndim} dimension(s)")
        out.append(int(a) % max(ndim, 1))
    return tuple(out)


def expect_tensor(value, op: str, name: str = "input") -> None:
    """Raise TypeError naming ``op`` and ``name`` unless ``value`` is a Tensor."""
    if not isinstance(value, Tensor):
        raise TypeError(f"{op}(): argument '{name}' must be a Tensor, got {type(value).__name__}")


def expect_flag(value, fn: str, name: str) -> bool:
    """``value`` if it is a bool (Python's or NumPy's), else PyTorch's TypeError naming the argument."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{fn}(): argument '{name}' must be bool, not {type(value).__name__}")
    return bool(value)


def pick_axis(dim, axis, keepdim, keepdims, op: str):
    """Merge PyTorch's ``dim``/``keepdim`` and NumPy's ``axis``/``keepdims`` spellings."""
    if axis is not None:
        if dim is not None:
            raise TypeError(f"{op}: pass either dim or axis, not both")
        dim = axis
    if keepdims is not None:
        keepdim = keepdims
    return dim, bool(keepdim)
