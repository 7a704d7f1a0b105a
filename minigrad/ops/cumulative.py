"""Scans along one dimension that are neither sums nor products: ``cummax``, ``cummin`` and ``logcumsumexp``.

Each scan runs as ``ceil(log2 n)`` vectorized steps (``_inclusive_scan``), so
it needs nothing from NumPy or CuPy beyond elementwise functions.

* ``cummax``/``cummin`` return ``(values, indices)``, like ``max(dim)``. As in
  PyTorch, a tie moves the index to the later element and a NaN is the running
  value from where it appears (each later NaN taking the index). The gradient
  of ``values`` goes to the element each index names.
* ``logcumsumexp`` is ``log(cumsum(exp(x)))`` without overflow: a running
  ``logaddexp``. Its gradient, ``dx_i = sum_{j >= i} g_j exp(x_i - y_j)``, is
  a softmax of the earlier inputs for every output, summed in log space too
  (the positive and negative parts of ``g`` separately; ``LogCumsumExpBackward``),
  so it stays finite where the plain formula overflows.
"""

from __future__ import annotations

import numpy as np

from minigrad.function import FunctionNode
from minigrad.ops._util import expect_tensor, normalize_axis
from minigrad.ops.gather import GatherAdjoint
from minigrad.ops.reduce import MaxMinResult
from minigrad.tensor import Tensor

__all__ = ["Cummax", "LogCumsumExp", "LogCumsumExpBackward", "cummax", "cummin", "logcumsumexp"]


def _inclusive_scan(xp, combine, a, axis: int):
    """``out[i] = combine(a[0], ..., a[i])`` along ``axis`` for an associative, commutative elementwise ``combine``.

    Step k combines each element with the one ``2**k`` before it (Hillis and
    Steele), so ``ceil(log2 n)`` vectorized calls cover the whole axis.
    """
    out = xp.moveaxis(a, axis, -1).copy()
    n, shift = out.shape[-1], 1
    while shift < n:
        out[..., shift:] = combine(out[..., shift:], out[..., :-shift])  # the right side is a new array
        shift *= 2
    return xp.ascontiguousarray(xp.moveaxis(out, -1, axis))


def _positions(xp, n: int, axis: int, ndim: int):
    """``0, 1, ..., n - 1`` along ``axis`` of an ``ndim``-dimensional array (broadcastable)."""
    return xp.arange(n, dtype=np.int64).reshape((n,) + (1,) * (ndim - axis - 1))


class Cummax(FunctionNode):
    """running max (``largest=False``: min) along ``axis``; the node keeps ``indices``; backward: to those indices"""

    def __init__(self, axis: int, largest: bool = True):
        self.axis = axis
        self.largest = largest

    def forward(self, a):
        xp = self.xp
        self.in_shape = a.shape
        values = _inclusive_scan(xp, xp.maximum if self.largest else xp.minimum, a, self.axis)  # NaN propagates
        # An element is the running value where it equals it (ties included) or is NaN; the index is the
        # last such element so far, which is the element PyTorch's sequential scan picks.
        sets_value = (a == values) | (a != a)
        latest = xp.where(sets_value, _positions(xp, a.shape[self.axis], self.axis, a.ndim), 0)
        self.indices = _inclusive_scan(xp, xp.maximum, latest, self.axis)
        return values

    def backward(self, g):
        indices = Tensor._make(self.indices, False, None, 0)
        return GatherAdjoint(self.axis, self.in_shape)(g, indices)


def _logcumsumexp_array(xp, a, axis: int, reverse: bool = False):
    """``log(cumsum(exp(a)))`` along ``axis`` as a running ``logaddexp`` (``reverse``: from the end)."""
    with np.errstate(invalid="ignore"):  # NaN propagates silently, as in PyTorch
        if reverse:
            return xp.flip(_inclusive_scan(xp, xp.logaddexp, xp.flip(a, axis), axis), axis)
        return _inclusive_scan(xp, xp.logaddexp, a, axis)


class LogCumsumExp(FunctionNode):
    """``y = log(cumsum(exp(a)))`` along ``axis``, stably; backward: ``LogCumsumExpBackward`` of (g, a, y)"""

    def __init__(self, axis: int):
        self.axis = axis

    def forward(self, a):
        self.retain_inputs((0,))
        self.retain_outputs((0,))
        return _logcumsumexp_array(self.xp, a, self.axis)

    def backward(self, g):
        (x,), (y,) = self.saved_inputs, self.saved_outputs
        return LogCumsumExpBackward(self.axis, later=True)(g, x, y)


class LogCumsumExpBackward(FunctionNode):
    """The two sums of logcumsumexp's derivatives, for inputs ``(h, x, y)`` with ``y = logcumsumexp(x)``:

    * ``later=True``:  ``out_i = sum_{j >= i} h_j exp(x_i - y_j)`` (the gradient of ``x`` for ``h = g``);
    * ``later=False``: ``out_j = sum_{i <= j} h_i exp(x_i - y_j)`` (its transpose).

    Each is computed in log space, the positive and negative parts of ``h``
    apart: ``exp(x + reverse_logcumsumexp(log h - y))`` for the first,
    ``exp(logcumsumexp(log h + x) - y)`` for the second, finite where the
    plain sums overflow. Both are linear in ``h``, and each one's derivatives
    are the other (below), so derivatives of any order stay exact, also where
    ``h`` is 0.
    """

    def __init__(self, axis: int, later: bool):
        self.axis = axis
        self.later = later

    def forward(self, h, x, y):
        self.retain_inputs((0, 1, 2))
        self.retain_outputs((0,))
        xp, axis = self.xp, self.axis
        log_zero = np.finfo(h.dtype).min  # log of a masked-out part: finite, so that no difference is NaN
        out = None
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            for mask in (h > 0, h < 0):
                log_h = xp.where(mask, xp.log(xp.abs(xp.where(mask, h, 1))), log_zero)
                if self.later:
                    part = xp.exp(x + _logcumsumexp_array(xp, log_h - y, axis, reverse=True))
                else:
                    part = xp.exp(_logcumsumexp_array(xp, log_h + x, axis) - y)
                out = part if out is None else out - part
        return out

    def backward(self, gg):
        """For ``later``: dh = T(gg), dx = gg * out, dy = -h * T(gg) (T: the other sum); the transpose's mirror."""
        h, x, y = self.saved_inputs
        (out,) = self.saved_outputs
        other = LogCumsumExpBackward(self.axis, not self.later)(gg, x, y)
        if self.later:
            return other, gg * out, -(h * other)
        return other, h * other, -(gg * out)


# -- public functions ---------------------------------------------------------------------------------


def _scan_dim(input, dim, fn: str) -> int:  # noqa: A002  (PyTorch's names)
    """``dim`` of ``input`` as a non-negative axis (a 0-d tensor takes 0 or -1, as in PyTorch)."""
    expect_tensor(input, fn)
    if not isinstance(dim, (int, np.integer)) or isinstance(dim, bool):
        raise TypeError(f"{fn}(): argument 'dim' must be an int, got {type(dim).__name__}")
    (axis,) = normalize_axis(int(dim), input.ndim, fn)
    return axis


def _cumulative_extremum(input, dim, largest: bool, fn: str):  # noqa: A002
    axis = _scan_dim(input, dim, fn)
    if input.ndim == 0:
        values, indices = _cumulative_extremum(input.reshape(1), 0, largest, fn)
        return MaxMinResult(values.reshape(()), indices.reshape(()))
    node = Cummax(axis, largest)
    values = node(input)
    return MaxMinResult(values, Tensor._make(node.indices, False, None, 0))


def cummax(input, dim):  # noqa: A002
    """Running maximum of ``input`` along ``dim``: a named tuple ``(values, indices)`` (indices int64).

    ``values[i] = max(input[0], ..., input[i])``; ``indices[i]`` is where that
    value was taken, the LAST position among equal values, as in PyTorch. NaN
    wins from where it appears (its index moves to each later NaN). Works on
    integer and bool tensors; the gradient of ``values`` flows to the element
    ``indices`` names.

    Raises:
        TypeError: ``input`` is not a Tensor or ``dim`` is not an int.
        IndexError: ``dim`` is out of range.
    """
    return _cumulative_extremum(input, dim, True, "cummax")


def cummin(input, dim):  # noqa: A002
    """Running minimum of ``input`` along ``dim``: ``(values, indices)``; ties, NaN and errors as ``cummax``."""
    return _cumulative_extremum(input, dim, False, "cummin")


def logcumsumexp(input, dim):  # noqa: A002
    """``log(cumsum(exp(input)))`` along ``dim``, computed without overflow (a running ``logaddexp``).

    Real floating tensors only (PyTorch also takes complex ones). The gradient is, for each output, a
    softmax over the inputs it sums.

    Raises:
        TypeError: ``input`` is not a Tensor or ``dim`` is not an int.
        IndexError: ``dim`` is out of range.
        NotImplementedError: ``input`` is an integer or bool tensor (as in PyTorch), or complex.
    """
    axis = _scan_dim(input, dim, "logcumsumexp")
    if input.dtype.kind != "f":  # PyTorch refuses integers and bools too (it does take complex tensors)
        raise NotImplementedError(
            f"logcumsumexp: not implemented for {input.dtype} tensors; convert with .to(dtype) to a float dtype"
        )
    if input.ndim == 0:
        return LogCumsumExp(0)(input.reshape(1)).reshape(())
    return LogCumsumExp(axis)(input)


OPS = {
    "cummax": Cummax,
    "logcumsumexp": LogCumsumExp,
    "logcumsumexp_backward": LogCumsumExpBackward,
}
