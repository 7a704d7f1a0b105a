"""Determinants and matrix powers of (batches of) square matrices: ``det``, ``logdet``, ``slogdet``,
``matrix_power``.

Three ops, forward beside backward, on the array module's ``linalg``
(NumPy's or CuPy's LU-based routines):

* ``Det``: ``d det(A) = det(A) * inv(A)^T``. Where a matrix is exactly
  singular (``det == 0``) its gradient is 0, as PyTorch's LU-based backward
  gives there (it solves with the zero pivots nudged and scales by ``det``).
* ``SlogDet``: ``(sign, log|det|)``; ``d log|det(A)| = inv(A)^T``, and the sign
  is piecewise constant (no gradient). At a singular matrix that gradient is
  not finite (NaN here; PyTorch's LU solve gives inf or NaN).
* ``Inverse``: ``d inv(A) = -inv(A)^T g inv(A)^T``, used by the two backwards
  and by ``matrix_power`` with a negative power.

Each backward is written with recorded ops (``Inverse``, products, ``where``),
so gradients of any order follow. A matrix holding NaN gives NaN (and sign 0),
as in PyTorch, where LAPACK would call it singular. Complex matrices are not
supported.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from minigrad import backend
from minigrad.function import FunctionNode
from minigrad.math_forms import write_out
from minigrad.ops import elementwise as _ew
from minigrad.ops._util import expect_tensor
from minigrad.tensor import Tensor

__all__ = ["Det", "Inverse", "LinAlgError", "SlogDet", "SlogdetResult", "det", "logdet", "matrix_power", "slogdet"]

SlogdetResult = namedtuple("SlogdetResult", ["sign", "logabsdet"])


class LinAlgError(RuntimeError):
    """A singular, not positive-definite or otherwise unusable matrix (PyTorch's ``torch.linalg.LinAlgError``).

    A RuntimeError, as PyTorch's is, so a ported ``except RuntimeError:`` catches it. Raised here and by
    ``minigrad.linalg`` (which exports it as ``mg.linalg.LinAlgError``).
    """

_INT64_MAX = np.iinfo(np.int64).max


def _const(xp, array) -> Tensor:
    return Tensor._make(xp.asarray(array), False, None, 0)


def _with_nan(xp, a, value, fill):
    """``value`` with ``fill`` for the matrices of ``a`` that hold a NaN."""
    has_nan = xp.isnan(a).any(axis=(-2, -1))
    if not bool(has_nan.any()):
        return value
    return xp.where(has_nan, xp.asarray(fill, dtype=value.dtype), value)


def _inverse_array(xp, a, strict: bool, fn: str):
    """The inverses of the matrices of ``a``.

    A singular matrix raises LinAlgError (PyTorch's class, a RuntimeError) when ``strict``,
    else its inverse is NaN; a matrix holding NaN gets NaN either way.
    """
    try:
        return xp.linalg.inv(a)
    except np.linalg.LinAlgError:
        pass
    flat = a.reshape((-1,) + a.shape[-2:])
    out = xp.empty_like(flat)
    for i, matrix in enumerate(flat):
        try:
            out[i] = xp.linalg.inv(matrix)
        except np.linalg.LinAlgError:
            if strict and not bool(xp.isnan(matrix).any()):
                where = f" (batch element {i})" if a.ndim > 2 else ""
                raise LinAlgError(
                    f"{fn}: the input matrix is singular{where}, so it has no inverse; check the input or use a "
                    "pseudo-inverse"
                ) from None
            out[i] = np.nan
    return out.reshape(a.shape)


class Inverse(FunctionNode):
    """inv(A) of each square matrix; backward: ``-inv^T g inv^T``"""

    def __init__(self, strict: bool = True, fn: str = "linalg.inv"):
        self.strict = strict
        self.fn = fn

    def forward(self, a):
        self.retain_outputs((0,))
        return _inverse_array(self.xp, a, self.strict, self.fn)

    def backward(self, g):
        (inv,) = self.saved_outputs
        inv_t = inv.mT
        return -(inv_t @ g @ inv_t)


class Det(FunctionNode):
    """det(A) of each square matrix; backward: ``g * det * inv(A)^T`` (0 for a singular matrix)"""

    def forward(self, a):
        self.retain_inputs((0,))
        self.retain_outputs((0,))
        with np.errstate(invalid="ignore"):
            value = self.xp.asarray(self.xp.linalg.det(a), dtype=a.dtype)
        return _with_nan(self.xp, a, value, np.nan)

    def backward(self, g):
        (a,), (d,) = self.saved_inputs, self.saved_outputs
        xp = self.xp
        singular = _const(xp, (d.array == 0)[..., None, None])
        eye = _const(xp, xp.eye(a.shape[-1], dtype=a.dtype))
        inv = Inverse(strict=False)(_ew.where(singular, eye, a))  # a singular matrix: 0 * inv(I)
        return (g * d)[..., None, None] * inv.mT


class SlogDet(FunctionNode):
    """(sign, log|det|) of each square matrix; backward: ``g_logabsdet * inv(A)^T`` (the sign has none)"""

    def forward(self, a):
        self.retain_inputs((0,))
        xp = self.xp
        with np.errstate(invalid="ignore", divide="ignore"):
            sign, logabs = xp.linalg.slogdet(a)
        sign = _with_nan(xp, a, xp.asarray(sign, dtype=a.dtype), 0)
        logabs = _with_nan(xp, a, xp.asarray(logabs, dtype=a.dtype), np.nan)
        return sign, logabs

    def backward(self, g_sign, g_logabs):
        (a,) = self.saved_inputs
        return g_logabs[..., None, None] * Inverse(strict=False)(a).mT


def check_square_matrices(A, fn: str, name: str = "A", low_precision=RuntimeError) -> None:  # noqa: N803
    """PyTorch's checks of a batch of square float matrices ``A`` (shape ``(*, n, n)``) given to ``fn``.

    Raises:
        TypeError: not a Tensor.
        RuntimeError: fewer than 2 dims, not square, not floating point.
        NotImplementedError: complex (not supported here).
        low_precision: float16 (the class PyTorch's kernel raises; None: float16 is accepted).
    """
    expect_tensor(A, fn.split(".")[-1])
    if A.ndim < 2:
        raise RuntimeError(f"{fn}: The input tensor {name} must have at least 2 dimensions, got shape {list(A.shape)}")
    rows, cols = A.shape[-2:]
    if rows != cols:
        raise RuntimeError(f"{fn}: {name} must be batches of square matrices, but they are {rows} by {cols} matrices")
    if A.dtype.kind == "c":
        raise NotImplementedError(f"{fn}: complex matrices are not supported here; use float32 or float64")
    if A.dtype.kind != "f":
        raise RuntimeError(f"{fn}: Expected a floating point tensor as input. Got {A.dtype}; convert with .double()")
    if A.dtype == np.float16 and low_precision is not None:
        raise low_precision(f"{fn}: Low precision dtypes not supported. Got {A.dtype}; use float32 or float64")


def det(input):  # noqa: A002  (PyTorch's name)
    """The determinant of each square matrix in ``input`` (shape ``(*, n, n)``), shape ``(*)``.

    Differentiable (see the module docstring; 0 at a singular matrix, as PyTorch).

    Raises:
        TypeError: ``input`` is not a Tensor.
        RuntimeError: fewer than 2 dims, matrices not square, not floating point.
        NotImplementedError: float16 (as PyTorch's LU), or complex (not supported here).
    """
    check_square_matrices(input, "linalg.det", low_precision=None)
    if input.dtype == np.float16:
        raise NotImplementedError("linalg.det: the LU decomposition is not implemented for float16; use float32")
    return Det()(input)


def slogdet(input):  # noqa: A002
    """``(sign, logabsdet)`` of the determinant of each square matrix in ``input``: ``det = sign * exp(logabsdet)``.

    ``sign`` is -1, 0 or 1 (0 for a singular matrix, whose ``logabsdet`` is
    -inf); both have shape ``(*)`` and ``input``'s dtype. ``logabsdet`` is
    differentiable; ``sign`` carries no gradient.

    Raises:
        TypeError: ``input`` is not a Tensor.
        RuntimeError: fewer than 2 dims, matrices not square, not floating point, float16.
        NotImplementedError: complex (not supported here).
    """
    check_square_matrices(input, "linalg.slogdet")
    return SlogdetResult(*SlogDet()(input))


def logdet(input):  # noqa: A002
    """``log(det)`` of each square matrix in ``input``: -inf for a singular matrix, NaN where ``det < 0``.

    Differentiable (``inv(A)^T``; 0 where the result is NaN for a negative determinant).

    Raises:
        As ``slogdet``.
    """
    check_square_matrices(input, "logdet")
    sign, logabs = SlogDet()(input)
    xp = backend.get_array_module(logabs.array)
    negative = _const(xp, sign.array == -1)
    return _ew.where(negative, _const(xp, xp.asarray(np.nan, dtype=logabs.dtype)), logabs)


def _power(value, fn: str) -> int:
    if isinstance(value, Tensor) and value.ndim == 0 and value.dtype.kind in "iu":
        value = value.item()
    if not isinstance(value, (int, np.integer)) or isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{fn}(): argument 'n' must be int, not {type(value).__name__}")
    if abs(int(value)) > _INT64_MAX:
        raise ValueError(f"{fn}(): n={value} does not fit in a 64-bit integer")
    return int(value)


def matrix_power(input, n, *, out=None):  # noqa: A002
    """``input`` (a batch of square matrices) to the integer power ``n``, by repeated squaring.

    ``n = 0`` gives identity matrices (gradient 0), ``n = 1`` a copy, and a
    negative ``n`` the power ``-n`` of the inverse. The products are taken in
    PyTorch's order (square the running power, multiply by it for each set bit
    from the lowest), so results round as PyTorch's. Integer matrices work for
    ``n >= 0``. Differentiable.

    Raises:
        TypeError: ``input`` is not a Tensor, ``n`` not an int. ValueError: ``n`` beyond 64 bits.
        RuntimeError: fewer than 2 dims, matrices not square; ``n < 0`` with a matrix that is not
            float32/float64 or is singular.
        NotImplementedError: bool matrices with ``|n| >= 2`` (as PyTorch), or complex ones (not supported here).
    """
    expect_tensor(input, "matrix_power")
    n = _power(n, "matrix_power")
    if input.ndim < 2:
        raise RuntimeError(
            f"linalg.matrix_power: The input tensor A must have at least 2 dimensions, got shape {list(input.shape)}"
        )
    rows, cols = input.shape[-2:]
    if rows != cols:
        raise RuntimeError(
            f"linalg.matrix_power: A must be batches of square matrices, but they are {rows} by {cols} matrices"
        )
    if input.dtype.kind == "c":
        raise NotImplementedError("matrix_power(): complex matrices are not supported here")
    xp = backend.get_array_module(input.array)
    if n == 0:
        keep = _const(xp, xp.ones((1, 1), dtype=bool))
        eye = _const(xp, xp.eye(rows, dtype=input.dtype))
        return write_out(_ew.where(keep, eye, input), out, "matrix_power")
    if n == 1:
        return write_out(input.clone(), out, "matrix_power")
    if n < 0:
        check_square_matrices(input, "linalg.inv")
        base = Inverse(strict=True)(input)
        if n == -1:
            return write_out(base, out, "matrix_power")
        n = -n
    else:
        base = input
    if input.dtype.kind == "b":
        raise NotImplementedError("matrix_power(): matrix products of bool tensors are not implemented")
    if n == 2:
        return write_out(base @ base, out, "matrix_power")
    if n == 3:
        return write_out((base @ base) @ base, out, "matrix_power")
    square = result = None
    while n > 0:
        bit, n = n % 2, n // 2
        square = base if square is None else square @ square
        if bit:
            result = square if result is None else result @ square
    return write_out(result, out, "matrix_power")


# the ops of this module, for minigrad.ops.REGISTRY (each has gradcheck and PyTorch cases in tests/minigrad/ops/)
OPS = {
    "det": Det,
    "slogdet": SlogDet,
    "inverse": Inverse,
}
