"""Inverses, linear solves and the Cholesky factorization of (batches of) square matrices, as ``torch.linalg``'s:
``inv``, ``inv_ex``, ``solve``, ``solve_ex``, ``cholesky``, ``cholesky_ex``, ``solve_triangular``.

Four ops, forward beside backward, on the array module's ``linalg``:

* ``Inv``: ``X = A^-1``; ``dA = -X^T g X^T``.
* ``Solve``: ``X = A^-1 B`` (batch dimensions broadcast); ``dB = solve(A^T, g)``,
  ``dA = -dB X^T`` (each summed back to its input's shape). Its transposed
  form ``X = A^-T B`` (for ``left=False``) factors ``A`` itself, as LAPACK's.
* ``SolveTriangular``: as ``Solve`` with only one triangle of ``A`` read (and
  not its diagonal when ``unitriangular``); ``dA`` is kept to that triangle.
* ``Cholesky``: ``A = L L^T`` from ``A``'s lower triangle; with ``P = L^T g``
  kept to its lower triangle and its diagonal halved,
  ``dA = L^-T P L^-1``, symmetrized (``(dA + dA^T) / 2``), as PyTorch's.

Each backward is written with recorded ops (these four, products, ``tril``), so
gradients of any order follow. ``left=False`` (``X A = B``: the transposed
``Solve``), ``upper=True`` and vector right-hand sides are built from these
with transposes and ``unsqueeze``.

Failures follow LAPACK as PyTorch uses it: a matrix whose LU factorization
meets an exactly zero pivot is singular (``info`` is that pivot's 1-based
index); ``inv``/``solve`` raise ``LinAlgError`` for it and the ``_ex`` forms
return the inf/NaN values the triangular solves give. Cholesky reports the
order of the first leading minor that is not positive definite (a NaN counts).
``solve_triangular`` never fails: a zero on the diagonal gives inf/NaN.
Complex matrices are not supported.

Also here: PyTorch's top-level ``inverse`` and its deprecated ``cholesky``
(``legacy_cholesky``), which ``TOP_LEVEL`` lists.
"""

from __future__ import annotations

import warnings
from collections import namedtuple

import numpy as np

from minigrad import backend
from minigrad.function import FunctionNode
from minigrad.math_forms import write_out
from minigrad.ops._util import expect_flag, expect_tensor, unbroadcast
from minigrad.ops.determinants import LinAlgError, check_square_matrices
from minigrad.ops.structure import tril, triu
from minigrad.tensor import Tensor

__all__ = [
    "CholeskyExResult",
    "InvExResult",
    "SolveExResult",
    "cholesky",
    "cholesky_ex",
    "inv",
    "inv_ex",
    "solve",
    "solve_ex",
    "solve_triangular",
]

# not torch.linalg names: PyTorch's top-level torch.inverse and torch.cholesky (and their Tensor methods)
TOP_LEVEL = ["inverse", "legacy_cholesky"]

InvExResult = namedtuple("InvExResult", ["inverse", "info"])
SolveExResult = namedtuple("SolveExResult", ["result", "info"])
CholeskyExResult = namedtuple("CholeskyExResult", ["L", "info"])


def _const(xp, array) -> Tensor:
    return Tensor._make(xp.asarray(array), False, None, 0)


def _is_numpy(xp) -> bool:
    return xp is np


# -- array routines ------------------------------------------------------------------------------------------------


def _lu_factor(xp, a):
    """LAPACK's getf2 on one square matrix: ``(lu, swaps, info)``.

    Partial pivoting (the first largest magnitude); a zero pivot is skipped, as
    LAPACK does, and ``info`` is the 1-based index of the first one (0: none).
    """
    lu = a.copy()
    n = lu.shape[0]
    swaps = []
    info = 0
    for j in range(n):
        p = j + int(xp.argmax(xp.abs(lu[j:, j])))
        if bool(lu[p, j] != 0):
            if p != j:
                lu[[j, p]] = lu[[p, j]]
            swaps.append(p)
            lu[j + 1 :, j] /= lu[j, j]
        else:
            swaps.append(j)
            if info == 0:
                info = j + 1
        lu[j + 1 :, j + 1 :] -= xp.outer(lu[j + 1 :, j], lu[j, j + 1 :])
    return lu, swaps, info


def _lu_solve(xp, lu, swaps, b, transpose: bool = False):
    """getrs: ``A x = b`` (``A^T x = b`` when ``transpose``) for ``b`` (n, k), with the factors of ``_lu_factor``.

    A zero pivot gives inf/NaN, as LAPACK's triangular solves do.
    """
    x = b.copy()
    n = lu.shape[0]
    if not transpose:
        for j, p in enumerate(swaps):
            if p != j:
                x[[j, p]] = x[[p, j]]
        for j in range(n):
            x[j + 1 :] -= xp.outer(lu[j + 1 :, j], x[j])
        for j in range(n - 1, -1, -1):
            x[j] /= lu[j, j]
            x[:j] -= xp.outer(lu[:j, j], x[j])
        return x
    for j in range(n):  # U^T z = b
        x[j] = (x[j] - lu[:j, j] @ x[:j]) / lu[j, j]
    for j in range(n - 1, -1, -1):  # L^T w = z (unit diagonal)
        x[j] -= lu[j + 1 :, j] @ x[j + 1 :]
    for j in range(n - 1, -1, -1):
        p = swaps[j]
        if p != j:
            x[[j, p]] = x[[p, j]]
    return x


def _solve_arrays(xp, a, b, transpose: bool = False):
    """``(x, info)``: ``a x = b`` (``a^T x = b`` when ``transpose``) for ``a`` (*ba, n, n), ``b`` (*bb, n, k).

    ``info`` has shape ``ba``: 0, or the 1-based index of the first zero pivot
    of ``a``'s LU factorization (whose solutions hold inf/NaN).
    """
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    n = a.shape[-1]
    a_full = xp.broadcast_to(a, batch + (n, n))
    if transpose:
        a_full = xp.swapaxes(a_full, -1, -2)
    b_full = xp.broadcast_to(b, batch + b.shape[-2:])
    info = xp.zeros(a.shape[:-2], dtype=np.int32)
    with np.errstate(all="ignore"):
        try:
            x = xp.linalg.solve(a_full, b_full)
            if _is_numpy(xp) or bool(xp.isfinite(x).all()) or not bool(xp.isfinite(a).all()):
                return x.astype(a.dtype, copy=False), info
        except np.linalg.LinAlgError:
            pass
        # some matrix is singular: factor each one as LAPACK does, to find which and give its inf/NaN values
        a_flat = a.reshape((-1, n, n))
        factors = [_lu_factor(xp, matrix) for matrix in a_flat]
        info = xp.asarray([f[2] for f in factors], dtype=np.int32).reshape(a.shape[:-2])
        which = np.broadcast_to(np.arange(a_flat.shape[0]).reshape(a.shape[:-2]), batch).reshape(-1)
        b_flat = b_full.reshape((-1,) + b.shape[-2:])
        x = xp.empty(b_flat.shape, dtype=a.dtype)
        for i, k in enumerate(which):
            lu, swaps, failed = factors[k]
            if not failed:
                try:
                    x[i] = xp.linalg.solve(a_flat[k].T if transpose else a_flat[k], b_flat[i])
                    continue
                except np.linalg.LinAlgError:  # NaN entries: LAPACK and our factorization may disagree
                    pass
            x[i] = _lu_solve(xp, lu, swaps, b_flat[i], transpose)
    return x.reshape(batch + b.shape[-2:]), info


def _cholesky_one(xp, a):
    """LAPACK's potf2 (lower) on one matrix: ``(L, info)``; on failure the column reached holds the bad pivot."""
    n = a.shape[0]
    out = xp.tril(a).copy()
    for j in range(n):
        ajj = out[j, j] - out[j, :j] @ out[j, :j]
        if not bool(ajj > 0):
            out[j, j] = ajj
            return out, j + 1
        out[j, j] = xp.sqrt(ajj)
        out[j + 1 :, j] = (out[j + 1 :, j] - out[j + 1 :, :j] @ out[j, :j]) / out[j, j]
    return out, 0


def _cholesky_arrays(xp, a):
    """``(L, info)`` for each matrix of ``a`` (its lower triangle is read)."""
    info = xp.zeros(a.shape[:-2], dtype=np.int32)
    with np.errstate(all="ignore"):
        if bool(xp.isfinite(a).all()):
            try:
                out = xp.linalg.cholesky(a)
                if bool(xp.isfinite(out).all()):
                    return out, info
            except np.linalg.LinAlgError:
                pass
        flat = a.reshape((-1,) + a.shape[-2:])
        out = xp.empty_like(flat)
        codes = []
        for i, matrix in enumerate(flat):
            out[i], code = _cholesky_one(xp, matrix)
            codes.append(code)
    return out.reshape(a.shape), xp.asarray(codes, dtype=np.int32).reshape(a.shape[:-2])


def _triangular_arrays(xp, a, b, upper: bool, unit: bool):
    """``x`` with ``T x = b``, ``T`` the upper or lower triangle of ``a`` (unit diagonal when ``unit``)."""
    n = a.shape[-1]
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    t = xp.triu(a) if upper else xp.tril(a)
    if unit:
        t = t.copy()
        diagonal = xp.arange(n)
        t[..., diagonal, diagonal] = 1
    if not upper:  # reverse rows and columns: the lower triangle becomes an upper one
        t = t[..., ::-1, ::-1]
        b = b[..., ::-1, :]
    t = xp.broadcast_to(t, batch + (n, n))
    b = xp.broadcast_to(b, batch + b.shape[-2:])
    with np.errstate(all="ignore"):
        diagonal = xp.diagonal(t, axis1=-2, axis2=-1)
        if bool((diagonal != 0).all()) and bool(xp.isfinite(diagonal).all()):
            # LU of an upper triangle never swaps rows, so this is back substitution
            x = xp.linalg.solve(t, b)
        else:
            x = xp.empty(b.shape, dtype=a.dtype)
            for i in range(n - 1, -1, -1):  # back substitution, inf/NaN where the diagonal is 0
                rest = (t[..., i : i + 1, i + 1 :] @ x[..., i + 1 :, :])[..., 0, :]
                x[..., i, :] = (b[..., i, :] - rest) / t[..., i, i][..., None]
    if not upper:
        x = x[..., ::-1, :]
    return xp.ascontiguousarray(x.astype(a.dtype, copy=False))


# -- ops ---------------------------------------------------------------------------------------------------------------


class Inv(FunctionNode):
    """inv(A) of each square matrix (``info`` kept on the node); backward: ``-X^T g X^T``"""

    def forward(self, a):
        self.retain_outputs((0,))
        n = a.shape[-1]
        eye = self.xp.eye(n, dtype=a.dtype)
        x, self.info = _solve_arrays(self.xp, a, eye)
        return x.reshape(a.shape)

    def backward(self, g):
        (x,) = self.saved_outputs
        x_t = x.mT
        return -(x_t @ g @ x_t)


class Solve(FunctionNode):
    """X = A^-1 B (``A^-T B`` when ``transpose``) with broadcast batch dims (``info`` kept on the node); backward:
    ``dB = solve(A^T, g)``, ``dA = -dB X^T`` (transposed for ``A^T``)"""

    def __init__(self, transpose: bool = False):
        self.transpose = transpose

    def forward(self, a, b):
        self.retain_inputs((0,))
        self.retain_outputs((0,))
        self.shapes = (a.shape, b.shape)
        x, self.info = _solve_arrays(self.xp, a, b, self.transpose)
        return x

    def backward(self, g):
        (a,), (x,) = self.saved_inputs, self.saved_outputs
        a_shape, b_shape = self.shapes
        g_b = Solve(not self.transpose)(a, g)
        g_a = None
        if self.needs_input_grad[0]:
            g_a = unbroadcast(-(x @ g_b.mT) if self.transpose else -(g_b @ x.mT), a_shape)
        return g_a, unbroadcast(g_b, b_shape) if self.needs_input_grad[1] else None


class SolveTriangular(FunctionNode):
    """X = T^-1 B, T one triangle of A; backward: ``dB = solve_triangular(A^T, g)``, ``dA = -dB X^T`` on T's
    triangle"""

    def __init__(self, upper: bool, unitriangular: bool = False):
        self.upper = upper
        self.unitriangular = unitriangular

    def forward(self, a, b):
        self.retain_inputs((0,))
        self.retain_outputs((0,))
        self.shapes = (a.shape, b.shape)
        return _triangular_arrays(self.xp, a, b, self.upper, self.unitriangular)

    def backward(self, g):
        (a,), (x,) = self.saved_inputs, self.saved_outputs
        a_shape, b_shape = self.shapes
        g_b = SolveTriangular(not self.upper, self.unitriangular)(a.mT, g)
        g_a = None
        if self.needs_input_grad[0]:
            offset = 1 if self.unitriangular else 0
            full = -(g_b @ x.mT)
            g_a = unbroadcast(triu(full, offset) if self.upper else tril(full, -offset), a_shape)
        return g_a, unbroadcast(g_b, b_shape) if self.needs_input_grad[1] else None


class Cholesky(FunctionNode):
    """L with A = L L^T from A's lower triangle (``info`` kept on the node); backward: PyTorch's symmetrized
    ``L^-T Phi(L^T g) L^-1``"""

    def forward(self, a):
        self.retain_outputs((0,))
        out, self.info = _cholesky_arrays(self.xp, a)
        return out

    def backward(self, g):
        (low,) = self.saved_outputs
        xp = backend.get_array_module(low.array)
        n = low.shape[-1]
        eye = _const(xp, xp.eye(n, dtype=low.dtype))
        half_diagonal = _const(xp, xp.tril(xp.ones((n, n), dtype=low.dtype)) - 0.5 * xp.eye(n, dtype=low.dtype))
        low_inv = SolveTriangular(upper=False)(low, eye)
        phi = (low.mT @ g) * half_diagonal
        grad = low_inv.mT @ phi @ low_inv
        return (grad + grad.mT) * 0.5


# -- checks ------------------------------------------------------------------------------------------------------------


def _check_system(A, B, left: bool, fn: str) -> None:  # noqa: N803
    """RuntimeError unless the matrices ``B`` fit the square ``A`` in ``AX = B`` (``XA = B`` when not ``left``):
    as many rows (columns) as ``A``, and batch dims that broadcast with ``A``'s."""
    n = A.shape[-1]
    if (B.shape[-2] if left else B.shape[-1]) != n:
        equation = "AX = B" if left else "XA = B"
        raise RuntimeError(
            f"{fn}: Incompatible shapes of A and B for the equation {equation} ({n}x{n} and "
            f"{B.shape[-2]}x{B.shape[-1]}); B needs {n} {'rows' if left else 'columns'}"
        )
    _batch_shape(A.shape[:-2], B.shape[:-2], fn)


def _batch_shape(a_batch, b_batch, fn: str) -> tuple:
    try:
        return np.broadcast_shapes(tuple(a_batch), tuple(b_batch))
    except ValueError:
        raise RuntimeError(
            f"{fn}: the batch dimensions of A {list(a_batch)} and B {list(b_batch)} do not broadcast; "
            "make them equal or 1"
        ) from None


def _raise_for_info(info, fn: str, problem: str) -> None:
    """LinAlgError naming the first failed matrix of ``info`` (an int array, 0 where it succeeded)."""
    flat = backend.to_numpy(info).reshape(-1)
    bad = np.flatnonzero(flat)
    if bad.size == 0:
        return
    where = f"(batch element {int(bad[0])}): " if np.ndim(info) > 0 else ""
    raise LinAlgError(f"{fn}: {where}{problem.format(code=int(flat[bad[0]]))}")


def _info_tensor(xp, info) -> Tensor:
    return _const(xp, xp.asarray(info, dtype=np.int32))


_SINGULAR = "the matrix is singular (pivot {code} of its LU factorization is zero), so {what}; check the input"


# -- public functions --------------------------------------------------------------------------------------------------


def inv_ex(A, *, check_errors=False):  # noqa: N803  (PyTorch's names)
    """``(inverse, info)``: the inverse of each square matrix of ``A`` (shape ``(*, n, n)``) and an int32 ``info``
    of shape ``(*)``.

    ``info`` is 0 where the inverse exists, else the 1-based index of the zero
    pivot LAPACK's LU met; that matrix's ``inverse`` then holds inf/NaN (no
    error unless ``check_errors``). Differentiable in ``inverse``.

    Raises:
        TypeError: ``A`` is not a Tensor.
        RuntimeError: fewer than 2 dims, matrices not square, not floating point, float16.
        LinAlgError (a RuntimeError): a singular matrix with ``check_errors=True``.
        NotImplementedError: complex matrices (not supported here).
    """
    check_square_matrices(A, "linalg.inv_ex")
    check_errors = expect_flag(check_errors, "linalg.inv_ex", "check_errors")
    node = Inv()
    out = node(A)
    if check_errors:
        _raise_for_info(node.info, "linalg.inv_ex", _SINGULAR.replace("{what}", "it has no inverse"))
    return InvExResult(out, _info_tensor(backend.get_array_module(out.array), node.info))


def inv(A, *, out=None):  # noqa: N803
    """The inverse of each square matrix of ``A`` (shape ``(*, n, n)``), same shape and dtype. Differentiable.

    Raises:
        TypeError: ``A`` is not a Tensor.
        RuntimeError: fewer than 2 dims, matrices not square, not floating point, float16.
        LinAlgError (a RuntimeError): a matrix is singular (use ``linalg.pinv`` or ``inv_ex`` to go on).
        NotImplementedError: complex matrices (not supported here).
    """
    check_square_matrices(A, "linalg.inv")
    node = Inv()
    result = node(A)
    _raise_for_info(node.info, "linalg.inv", _SINGULAR.replace("{what}", "it has no inverse"))
    return write_out(result, out, "linalg.inv")


def _vector_rhs(A, B) -> bool:  # noqa: N803
    """PyTorch's rule: ``B`` is a vector (or batch of vectors) when it is 1-D or has ``A``'s batch shape plus n."""
    return B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))


def _solve(A, B, left, fn: str):  # noqa: N803
    """``(X, info)`` for ``solve`` and ``solve_ex`` after PyTorch's checks."""
    expect_tensor(B, fn.split(".")[-1])
    check_square_matrices(A, fn, low_precision=NotImplementedError)
    left = expect_flag(left, fn, "left")
    if B.ndim < 1:
        raise RuntimeError(f"{fn}: The input tensor B must have at least 2 dimensions (or 1 for a vector)")
    if B.dtype != A.dtype:
        raise RuntimeError(
            f"{fn}: Expected A and B to have the same dtype, but found A of type {A.dtype} and B of type {B.dtype}; "
            "convert one with .to()"
        )
    vector = _vector_rhs(A, B)
    if vector and not left:
        raise RuntimeError(
            f"{fn}: a vector B is not supported with left=False (X A = B needs a row per equation); "
            "pass B.unsqueeze(-2) or use B / A.squeeze(-1)"
        )
    rhs = B.unsqueeze(-1) if vector else B
    if rhs.ndim < 2:
        raise RuntimeError(f"{fn}: The input tensor B must have at least 2 dimensions")
    _check_system(A, rhs, left, fn)
    node = Solve(transpose=not left)  # X A = B is A^T X^T = B^T, solved with A's factorization as LAPACK's
    x = node(A, rhs) if left else node(A, rhs.mT).mT
    if vector:
        x = x.squeeze(-1)
    return x, node.info


def solve_ex(A, B, *, left=True, check_errors=False):  # noqa: N803
    """``(result, info)``: the solution of ``A X = B`` (``X A = B`` when ``left=False``) and an int32 ``info``.

    Shapes as ``solve``. ``info`` has ``A``'s batch shape: 0 where ``A`` is
    invertible, else the 1-based index of the zero LU pivot, whose
    solution holds inf/NaN (no error unless ``check_errors``).

    Raises:
        As ``solve``; LinAlgError (a RuntimeError) only with ``check_errors=True``.
    """
    check_errors = expect_flag(check_errors, "linalg.solve_ex", "check_errors")
    x, info = _solve(A, B, left, "linalg.solve_ex")
    if check_errors:
        _raise_for_info(info, "linalg.solve_ex", _SINGULAR.replace("{what}", "the system has no unique solution"))
    return SolveExResult(x, _info_tensor(backend.get_array_module(x.array), info))


def solve(A, B, *, left=True, out=None):  # noqa: N803
    """The solution ``X`` of ``A X = B`` (``X A = B`` when ``left=False``) for square ``A`` (``(*, n, n)``).

    ``B`` is ``(*, n, k)`` (``(*, k, n)`` when ``left=False``), or a vector
    ``(n,)`` / ``(*, n)`` when it is 1-D or has exactly ``A``'s batch shape plus
    ``n`` (with ``left=True`` only); batch dimensions broadcast. ``A`` and ``B`` must share a dtype.
    Differentiable in both.

    Raises:
        TypeError: ``A`` or ``B`` is not a Tensor, ``left`` not a bool.
        RuntimeError: fewer than 2 dims in ``A``, ``A`` not square or not floating point, dtypes differ, ``B``'s
            size does not fit ``A``, batch dims do not broadcast.
        LinAlgError (a RuntimeError): a matrix of ``A`` is singular.
        NotImplementedError: float16 (as PyTorch's LU), complex (not supported here).
    """
    x, info = _solve(A, B, left, "linalg.solve")
    _raise_for_info(info, "linalg.solve", _SINGULAR.replace("{what}", "the system has no unique solution"))
    return write_out(x, out, "linalg.solve")


_NOT_PD = (
    "the input is not positive-definite (its leading minor of order {code} is not); "
    "pass a symmetric positive-definite matrix, or use cholesky_ex to check without raising"
)


def cholesky_ex(A, *, upper=False, check_errors=False):  # noqa: N803
    """``(L, info)``: the Cholesky factor of each symmetric positive-definite matrix of ``A`` and an int32 ``info``.

    ``L`` is lower triangular with ``A = L L^T``, read from ``A``'s lower
    triangle (``upper=True``: the upper factor ``U = L^T``, read from ``A``'s
    upper triangle). ``info`` (shape ``(*)``) is 0 on success, else the order of
    the first leading minor that is not positive definite; ``L`` then holds the
    part factored so far. Differentiable (PyTorch's symmetrized gradient).

    Raises:
        TypeError: ``A`` is not a Tensor, a flag not a bool.
        RuntimeError: fewer than 2 dims, matrices not square, not floating point.
        LinAlgError (a RuntimeError): a matrix not positive definite, with ``check_errors=True``.
        NotImplementedError: float16 (as PyTorch), complex (not supported here).
    """
    check_square_matrices(A, "linalg.cholesky_ex", low_precision=NotImplementedError)
    upper = expect_flag(upper, "linalg.cholesky_ex", "upper")
    check_errors = expect_flag(check_errors, "linalg.cholesky_ex", "check_errors")
    node = Cholesky()
    low = node(A.mT) if upper else node(A)
    if check_errors:
        _raise_for_info(node.info, "linalg.cholesky_ex", _NOT_PD)
    return CholeskyExResult(low.mT if upper else low, _info_tensor(backend.get_array_module(low.array), node.info))


def cholesky(A, *, upper=False, out=None):  # noqa: N803
    """The Cholesky factor ``L`` (lower, ``A = L L^T``) of each symmetric positive-definite matrix of ``A``.

    Only ``A``'s lower triangle is read (the upper one with ``upper=True``,
    which returns ``U = L^T``). Shape and dtype of ``A``. Differentiable: the
    gradient is symmetric, as PyTorch's.

    Raises:
        TypeError: ``A`` is not a Tensor, ``upper`` not a bool.
        RuntimeError: fewer than 2 dims, matrices not square, not floating point.
        LinAlgError (a RuntimeError): a matrix is not positive definite.
        NotImplementedError: float16 (as PyTorch), complex (not supported here).
    """
    check_square_matrices(A, "linalg.cholesky", low_precision=NotImplementedError)
    upper = expect_flag(upper, "linalg.cholesky", "upper")
    node = Cholesky()
    low = node(A.mT) if upper else node(A)
    _raise_for_info(node.info, "linalg.cholesky", _NOT_PD)
    return write_out(low.mT if upper else low, out, "linalg.cholesky")


def solve_triangular(A, B, *, upper, left=True, unitriangular=False, out=None):  # noqa: N803
    """The solution ``X`` of ``T X = B`` (``X T = B`` when ``left=False``), ``T`` the upper (``upper=True``) or
    lower triangle of each square matrix of ``A``.

    ``A`` is ``(*, n, n)``, ``B`` ``(*, n, k)`` (``(*, k, n)`` when
    ``left=False``; no vector form); batch dims broadcast. The other triangle
    is never read, nor the diagonal when ``unitriangular`` (taken as ones). A
    zero on the diagonal gives inf/NaN, never an error. The result has ``A``'s
    dtype (``B`` is converted). Differentiable; ``A``'s gradient lies in ``T``.

    Raises:
        TypeError: ``A`` or ``B`` not a Tensor, a flag not a bool (``upper`` is required).
        RuntimeError: fewer than 2 dims, ``A`` not square, ``B``'s size does not fit, batch dims do not broadcast.
        NotImplementedError: ``A`` not float32/float64 (as PyTorch's kernel), or complex.
    """
    fn = "linalg.solve_triangular"
    expect_tensor(A, "solve_triangular")
    expect_tensor(B, "solve_triangular")
    upper = expect_flag(upper, fn, "upper")
    left = expect_flag(left, fn, "left")
    unitriangular = expect_flag(unitriangular, fn, "unitriangular")
    for name, t in (("A", A), ("B", B)):
        if t.ndim < 2:
            raise RuntimeError(f"{fn}: The input tensor {name} must have at least 2 dimensions, got {list(t.shape)}")
    rows, cols = A.shape[-2:]
    if rows != cols:
        raise RuntimeError(f"{fn}: A must be batches of square matrices, but they are {rows} by {cols} matrices")
    if A.dtype.kind == "c" or B.dtype.kind == "c":
        raise NotImplementedError(f"{fn}: complex matrices are not supported here; use float32 or float64")
    if A.dtype not in (np.float32, np.float64):
        raise NotImplementedError(f"{fn}: not implemented for {A.dtype} matrices A; use float32 or float64")
    _check_system(A, B, left, fn)
    if B.dtype != A.dtype:
        B = B.to(A.dtype)  # noqa: N806
    if left:
        x = SolveTriangular(upper, unitriangular)(A, B)
    else:
        x = SolveTriangular(not upper, unitriangular)(A.mT, B.mT).mT
    return write_out(x, out, fn)


def inverse(input, *, out=None):  # noqa: A002  (PyTorch's name)
    """``torch.inverse``: the same as ``linalg.inv`` with PyTorch's argument name ``input``.

    Raises:
        As ``linalg.inv`` (LinAlgError, a RuntimeError, for a singular matrix).
    """
    expect_tensor(input, "inverse")
    return inv(input, out=out)


_LEGACY_CHOLESKY_WARNED: list = []  # holds True once legacy_cholesky has warned


def legacy_cholesky(input, upper=False, *, out=None):  # noqa: A002
    """``torch.cholesky`` (deprecated in PyTorch in favour of ``linalg.cholesky``, which it equals; it warns).

    Reads the lower triangle (the upper one with ``upper=True``, returning
    ``U`` with ``A = U^T U``), as ``linalg.cholesky``.

    Warns:
        UserWarning: the function is deprecated (once per process, as PyTorch's); use ``linalg.cholesky``.

    Raises:
        As ``linalg.cholesky`` (LinAlgError, a RuntimeError, for a matrix not positive definite), but
        NotImplementedError for integer and bool matrices, as PyTorch's kernel.
    """
    if not _LEGACY_CHOLESKY_WARNED:
        _LEGACY_CHOLESKY_WARNED.append(True)  # once per process, as PyTorch's
        warnings.warn(
            "torch.cholesky is deprecated in favor of linalg.cholesky; use linalg.cholesky(A) (or "
            "linalg.cholesky(A, upper=True)) instead",
            UserWarning,
            stacklevel=2,
        )
    expect_tensor(input, "cholesky")
    if input.ndim >= 2 and input.shape[-1] == input.shape[-2] and input.dtype.kind in "biu":
        raise NotImplementedError(f"cholesky: not implemented for {input.dtype} matrices; use float32 or float64")
    return cholesky(input, upper=upper, out=out)


# the ops of this module, for minigrad.ops.REGISTRY
OPS = {
    "linalg_inv": Inv,
    "linalg_solve": Solve,
    "linalg_solve_triangular": SolveTriangular,
    "linalg_cholesky": Cholesky,
}
