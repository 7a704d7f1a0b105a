"""Integration by the trapezoidal rule: ``trapezoid`` and ``cumulative_trapezoid``.

Both are compositions of recorded ops (slices, sums, ``cumsum``), written in
the order of PyTorch's formulas, so that the dtypes (integer samples give the
default float dtype) and the roundings follow PyTorch's:

* spacing ``dx`` (a number): ``(sum(y) - (y[0] + y[-1]) * 0.5) * dx``, and
  ``cumsum(dx / 2 * (y[:-1] + y[1:]))`` for the running integral;
* sample points ``x`` (a tensor): ``sum((y[:-1] + y[1:]) * diff(x)) / 2``,
  and its ``cumsum``. A 1-D ``x`` lies along ``dim``; an ``x`` of fewer dims
  than ``y`` gets leading dims of size 1, and the differences of ``x`` then
  broadcast against those of ``y`` (NumPy's rule).
"""

from __future__ import annotations

import numpy as np

from minigrad import backend
from minigrad.ops._util import expect_tensor, normalize_axis
from minigrad.tensor import Tensor

__all__ = ["cumulative_trapezoid", "trapezoid"]

_NUMBERS = (int, float, np.number, np.bool_)


def _slice(t: Tensor, axis: int, start, stop) -> Tensor:
    return t[(slice(None),) * axis + (slice(start, stop),)]


def _spacing(x, dx, fn: str):
    """``(x, dx)`` checked: ``x`` a Tensor or None; ``dx`` a real number (None: 1) when ``x`` is None."""
    if x is not None:
        if not isinstance(x, Tensor):
            raise TypeError(f"{fn}(): argument 'x' must be a Tensor or None, not {type(x).__name__}")
        if dx is not None:
            raise TypeError(f"{fn}(): pass either the sample points x or the spacing dx, not both")
        return x, None
    if dx is None:
        return None, 1.0
    if isinstance(dx, Tensor) and dx.ndim == 0:
        dx = dx.item()
    if not isinstance(dx, (*_NUMBERS, complex)):
        raise TypeError(f"{fn}(): argument 'dx' must be a number, not {type(dx).__name__}")
    return None, dx


def _real(dx, fn: str) -> float:
    """``dx`` as a float; RuntimeError (PyTorch's class) for a bool or complex one."""
    if isinstance(dx, (bool, np.bool_, complex, np.complexfloating)):
        raise RuntimeError(f"{fn}(): Currently, we only support dx as a real number, got {dx!r}")
    return float(dx)


def _axis(y, dim, fn: str) -> int:
    if not isinstance(dim, (int, np.integer)) or isinstance(dim, (bool, np.bool_)):
        raise TypeError(f"{fn}(): argument 'dim' must be int, not {type(dim).__name__}")
    if y.ndim == 0:
        raise IndexError(f"{fn}(): dim {dim} given but y is 0-d; y needs a dimension to integrate along")
    return normalize_axis(int(dim), y.ndim, f"{fn}()")[0]


def _differences(y, x, axis: int, fn: str) -> Tensor:
    """``x[1:] - x[:-1]`` along ``axis``, with ``x`` shaped against ``y`` as PyTorch does."""
    if x.dtype.kind == "b" or y.dtype.kind == "b":
        raise RuntimeError(f"{fn}(): received a bool input for `x` or `y`, but bool is not supported")
    if x.ndim == 1:
        if x.shape[0] != y.shape[axis]:
            raise RuntimeError(
                f"{fn}(): There must be one `x` value for each sample point (x has {x.shape[0]}, y has "
                f"{y.shape[axis]} along dim {axis})"
            )
        x = x.reshape(tuple(x.shape[0] if i == axis else 1 for i in range(y.ndim)))
    elif x.ndim < y.ndim:
        x = x.reshape((1,) * (y.ndim - x.ndim) + tuple(x.shape))
    return _slice(x, axis, 1, None) - _slice(x, axis, 0, -1)


def _check_y(y, fn: str) -> None:
    expect_tensor(y, fn, "y")


def _refuse_bool_y(y, fn: str) -> None:
    if y.dtype.kind == "b":
        raise RuntimeError(f"{fn}(): received a bool input for `y`, but bool is not supported")


def _pair_sums(y, axis: int) -> Tensor:
    return _slice(y, axis, 0, -1) + _slice(y, axis, 1, None)


def _weighted_pairs(y, x, axis: int, fn: str) -> Tensor:
    """``(y[:-1] + y[1:]) * diff(x)`` along ``axis``; RuntimeError naming ``fn`` when they do not broadcast."""
    steps = _differences(y, x, axis, fn)
    pairs = _pair_sums(y, axis)
    try:
        return pairs * steps
    except RuntimeError as error:
        raise RuntimeError(
            f"{fn}(): the spacings of x (shape {list(steps.shape)}) do not broadcast with the sample pairs of y "
            f"(shape {list(pairs.shape)}): {error}"
        ) from error


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The integral of the samples ``y`` along ``dim`` by the trapezoidal rule.

    Args:
        y: the sample values.
        x: the sample points (a tensor; see the module docstring for its shapes), or None.
        dx: the spacing of evenly spaced samples when ``x`` is None (None: 1). Not both.
        dim: the dimension to integrate along.

    Returns:
        ``y`` with ``dim`` removed; zeros (of ``y``'s dtype) for no samples, as PyTorch and NumPy.

    Raises:
        TypeError: ``y`` or ``x`` is not a Tensor, ``dx`` not a number, ``dim`` not an int, or both ``x`` and ``dx``.
        IndexError: ``dim`` is out of range (a 0-d ``y`` has none).
        RuntimeError: bool samples, a bool or complex ``dx``, an ``x`` of the wrong length or shape.
    """
    _check_y(y, "trapezoid")
    x, dx = _spacing(x, dx, "trapezoid")
    axis = _axis(y, dim, "trapezoid")
    if y.shape[axis] == 0:
        xp = backend.get_array_module(y.array)
        return Tensor._make(xp.zeros(y.shape[:axis] + y.shape[axis + 1:], dtype=y.dtype), False, None, 0)
    if x is not None:
        return _weighted_pairs(y, x, axis, "trapezoid").sum(axis) / 2.0
    _refuse_bool_y(y, "trapezoid")
    dx = _real(dx, "trapezoid")
    ends = y.select(axis, 0) + y.select(axis, -1)
    return (y.sum(axis) - ends * 0.5) * dx


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """The running integral of ``y`` along ``dim`` by the trapezoidal rule: entry i integrates samples 0..i+1.

    Arguments as ``trapezoid``. The result has one element fewer than ``y`` along ``dim``.

    Raises:
        As ``trapezoid`` (a 0-d ``y``: IndexError).
    """
    _check_y(y, "cumulative_trapezoid")
    x, dx = _spacing(x, dx, "cumulative_trapezoid")
    axis = _axis(y, dim, "cumulative_trapezoid")
    if x is not None:
        return _weighted_pairs(y, x, axis, "cumulative_trapezoid").cumsum(axis) / 2.0
    _refuse_bool_y(y, "cumulative_trapezoid")
    dx = _real(dx, "cumulative_trapezoid")
    return (dx / 2.0 * _pair_sums(y, axis)).cumsum(axis)
