"""Scans along one dimension: ``cumsum`` and ``cumprod``.

dtypes follow PyTorch: integer and bool inputs accumulate in int64 unless a
``dtype`` is given; the gradient comes back in the input's dtype.

The gradient of a cumulative sum is the reversed cumulative sum of the
output gradient. The gradient of a cumulative product ``y`` of ``x`` is
``dx_i = sum_{j >= i} g_j * prod_{m <= j, m != i} x_m``; without zeros in ``x``
that is ``reverse_cumsum(g * y) / x``. Zeros need care (see ``Cumprod``).
"""

from __future__ import annotations

import numpy as np

from minigrad import backend
from minigrad.function import FunctionNode
from minigrad.grad_mode import is_grad_enabled
from minigrad.ops._util import expect_tensor, normalize_axis
from minigrad.ops.elementwise import where
from minigrad.tensor import Tensor, resolve_numeric_dtype

# PyTorch's CPU scans carry the running value in a wider type (its accumulate type) and round each
# output once: float32 in float64, float16 in float32. Accumulating in float32 instead drifts by an ulp
# or more at most positions of a long scan.
_CPU_ACCUMULATOR = {
    np.dtype(np.float16): np.float32,
    np.dtype(np.float32): np.float64,
    np.dtype(np.complex64): np.complex128,
}


def _accumulate(xp, ufunc_name: str, a, axis: int, reverse: bool, dtype):
    """``xp.cumsum``/``xp.cumprod`` of ``a`` along ``axis``; with ``reverse``, from the end backwards.

    On the CPU a float16/float32/complex64 result is accumulated in the next wider type and rounded
    once, as PyTorch's CPU kernels do (CuPy, like PyTorch on CUDA, accumulates in the result's type).
    """
    scan = getattr(xp, ufunc_name)
    result_dtype = a.dtype if dtype is None else np.dtype(dtype)
    wide = _CPU_ACCUMULATOR.get(result_dtype) if xp is np else None
    if reverse:
        a = xp.flip(a, axis)
    result = scan(a, axis=axis, dtype=wide or dtype)
    if wide is not None:
        result = result.astype(result_dtype)
    return xp.flip(result, axis) if reverse else result


class _Scan(FunctionNode):
    """A scan along ``axis`` that accumulates in ``dtype`` (None: the input's).

    A subclass's forward keeps the input's dtype as ``in_dtype``: the gradient comes back in it.
    """

    def __init__(self, axis, dtype=None):
        self.axis = axis
        self.dtype = dtype

    def in_input_dtype(self, grad):
        """``grad`` in the input's dtype."""
        return grad if grad.dtype == self.in_dtype else grad.to(self.in_dtype)


class Cumsum(_Scan):
    """running sum along ``axis`` (``reverse``: from the end); backward: the reversed running sum"""

    def __init__(self, axis, dtype=None, reverse=False):
        _Scan.__init__(self, axis, dtype)  # not super(): a direct call is cheaper, and this runs on every cumsum
        self.reverse = reverse

    def forward(self, a):
        self.in_dtype = a.dtype
        return _accumulate(self.xp, "cumsum", a, self.axis, self.reverse, self.dtype)

    def backward(self, g):
        return self.in_input_dtype(Cumsum(self.axis, None, not self.reverse)(g))


class Cumprod(_Scan):
    """running product along ``axis``

    Backward, for ``y = cumprod(x)``:

    * no zero in ``x``: ``reverse_cumsum(g * y) / x`` (recorded ops, so also
      right for second derivatives; as in PyTorch, whose formula this is, the
      second derivative loses accuracy for inputs very close to, but not at, 0,
      where it cancels two terms of size 1/x);
    * zeros, first order: with ``b`` = ``x`` with its zeros replaced by 1, ``B =
      cumprod(b)`` and ``Z`` = the running count of zeros, an element before the
      first zero gets ``reverse_cumsum(g * B)`` over the zero-free stretch,
      divided by ``b``; the first zero gets the same sum over the stretch up to
      the second zero; elements after the first zero get nothing (every product
      they enter holds that zero). O(n), computed on the arrays.
    * zeros, while recording the backward (``create_graph``): the defining sum
      itself, as recorded ops on an n x n expansion (O(n^2)), whose own
      derivative is the true second derivative at the zeros (PyTorch does the same).
    """

    def forward(self, a):
        self.retain_inputs((0,))
        self.retain_outputs((0,))
        self.in_dtype = a.dtype
        return _accumulate(self.xp, "cumprod", a, self.axis, False, self.dtype)

    def backward(self, g):
        (x,) = self.saved_inputs
        (y,) = self.saved_outputs
        if x.dtype != y.dtype:
            x = x.to(y.dtype)
        if x.shape[self.axis] <= 1:  # y = x: the gradient passes as it is (no dependence on x, as in PyTorch)
            grad = g
        elif not bool((x.array == 0).any()):
            grad = Cumsum(self.axis, None, reverse=True)(g * y) / x
        elif is_grad_enabled():
            grad = _cumprod_grad_quadratic(x, g, self.axis)
        else:
            grad = Tensor._make(_cumprod_grad_with_zeros(self.xp, x.array, g.array, self.axis), False, None, 0)
        return self.in_input_dtype(grad)


def _cumprod_grad_with_zeros(xp, x, g, axis):
    """The first-order cumprod gradient on arrays, exact where ``x`` has zeros (see ``Cumprod``)."""
    zero = x == 0
    count = xp.cumsum(zero, axis=axis)
    b = xp.where(zero, x.dtype.type(1), x)
    weighted = g * xp.cumprod(b, axis=axis)
    before_first, up_to_second = count == 0, count == 1
    before = _accumulate(xp, "cumsum", xp.where(before_first, weighted, 0), axis, True, None)
    at_first = _accumulate(xp, "cumsum", xp.where(up_to_second, weighted, 0), axis, True, None)
    return xp.where(before_first, before / b, xp.where(up_to_second & zero, at_first, 0)).astype(g.dtype)


def _cumprod_grad_quadratic(x, g, axis):
    """``dx_i = sum_{j >= i} g_j * prod_{m <= j, m != i} x_m`` as recorded ops (for double backward).

    Row i of an n x n expansion is ``x`` with ``x_i`` replaced by 1; its running
    product at column j is the product in the sum, kept where j >= i.
    """
    n = x.shape[axis]
    xp = backend.get_array_module(x.array)
    last = x.ndim - 1
    order = [d for d in range(x.ndim) if d != axis] + [axis]
    xt, gt = x.permute(*order), g.permute(*order)  # scanned dim last
    diagonal = Tensor._make(xp.eye(n, dtype=bool), False, None, 0)
    rows = where(diagonal, 1.0, xt.unsqueeze(-2))  # (..., i, m)
    later = Tensor._make(xp.triu(xp.ones((n, n), dtype=x.dtype)), False, None, 0)  # [i, j] = j >= i
    grad = (Cumprod(last + 1)(rows) * later * gt.unsqueeze(-2)).sum(-1)  # (..., i)
    inverse = [0] * x.ndim
    for i, d in enumerate(order):
        inverse[d] = i
    return grad.permute(*inverse)


# -- public functions ---------------------------------------------------------------------------------


def _scan_args(input, dim, dtype, fn: str):  # noqa: A002  (PyTorch's names)
    expect_tensor(input, fn)
    if not isinstance(dim, (int, np.integer)) or isinstance(dim, bool):
        raise TypeError(f"{fn}(): argument 'dim' must be an int, got {type(dim).__name__}")
    (axis,) = normalize_axis(int(dim), input.ndim, fn)
    if dtype is not None:
        dtype = resolve_numeric_dtype(dtype, f"{fn}(): dtype must be a dtype such as mg.float64, got {{given!r}}",
                                      f"{fn}(): dtype must be numeric, got {{resolved}}")
    elif input.dtype.kind in "biu":
        dtype = np.dtype(np.int64)  # integers and bools accumulate in int64, as in PyTorch
    if dtype is not None and dtype == input.dtype:
        dtype = None
    return axis, dtype


def cumsum(input, dim, *, dtype=None):  # noqa: A002
    """Running sum of ``input`` along ``dim``: ``out[i] = input[0] + ... + input[i]``.

    ``dtype`` casts first; integer and bool inputs give int64 by default.

    Raises:
        TypeError: ``input`` is not a Tensor, ``dim`` not an int, ``dtype`` not a numeric dtype.
        IndexError: ``dim`` is out of range.
    """
    axis, dtype = _scan_args(input, dim, dtype, "cumsum")
    if input.ndim == 0:
        return Cumsum(0, dtype)(input.reshape(1)).reshape(())
    return Cumsum(axis, dtype)(input)


def cumprod(input, dim, *, dtype=None):  # noqa: A002
    """Running product of ``input`` along ``dim``: ``out[i] = input[0] * ... * input[i]``.

    Differentiable, also where ``input`` has zeros. Arguments and errors as ``cumsum``.
    """
    axis, dtype = _scan_args(input, dim, dtype, "cumprod")
    if input.ndim == 0:
        return Cumprod(0, dtype)(input.reshape(1)).reshape(())
    return Cumprod(axis, dtype)(input)


OPS = {
    "cumsum": Cumsum,
    "cumprod": Cumprod,
}
