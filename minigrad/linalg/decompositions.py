"""Matrix decompositions of ``torch.linalg``: ``svd``, ``svdvals``, ``eigh``, ``eigvalsh``, ``qr``, and the
two functions built on them, ``pinv`` and ``matrix_rank``.

Each decomposition is one ``FunctionNode`` whose forward calls the array
module's ``linalg`` (NumPy's or CuPy's LAPACK wrappers) on a batch
``(*, m, n)`` and whose backward is written with recorded Tensor ops, so
gradients of any order follow. The backwards (derived from the
differentials, as in PyTorch's notes):

* ``SVD``, ``A = U diag(S) Vh``, ``k = min(m, n)``: with ``E_ij = S_j^2 - S_i^2``
  and ``skew(X) = X - X^T``,
  ``gA = U [skew(U^T gU) / E * S_j + S_i * skew(Vh gVh^T) / E + diag(gS)] Vh``
  plus, when ``m > k``, ``(I - U U^T) gU diag(1/S) Vh`` and, when ``n > k``,
  ``U diag(1/S) gVh (I - V Vh)``. Only the first ``k`` columns of ``U`` (rows of
  ``Vh``) enter it, as in PyTorch: the rest of a full ``U`` or ``Vh`` is any
  orthonormal completion, so its gradient is dropped. Repeated (or, with a
  gradient on ``U``/``Vh`` of a non-square matrix, zero) singular values make
  ``E`` (or ``1/S``) infinite: the gradient is then NaN/inf, as PyTorch's.
  With a gradient on ``S`` only, it is ``U diag(gS) Vh``, finite everywhere.
* ``Eigh``, ``A = V diag(L) V^T``: ``gA = V [skew(V^T gV) / 2 / E + diag(gL)] V^T``
  with ``E_ij = L_j - L_i``: a symmetric matrix, as PyTorch's (only one triangle of
  ``A`` is read, but the gradient is that of the symmetric matrix it stands for).
* ``QR``, ``A = Q R`` (``m >= n``): with ``M = gR R^T - Q^T gQ``,
  ``gA = (gQ + Q (triu(M) + triu(M, 1)^T)) R^{-T}``. For ``m < n``, ``R = [X | Y]``:
  the square problem ``A[:, :m] = Q X`` with ``gQ + A[:, m:] gY^T``, and
  ``gA[:, m:] = Q gY``. ``R`` must be invertible (its square part).
* ``PInv``: ``gA = -P^T G P^T + (I - A P) G^T P P^T + P^T P G^T (I - P A)``
  with ``P = pinv(A)``; smooth where the rank is constant (PyTorch's formula,
  not the SVD's, so repeated singular values are fine).

Decompositions are unique only up to signs (and rotations within repeated
singular values or eigenvalues): NumPy's LAPACK may choose other signs than
PyTorch's for the same input. Complex matrices are not supported.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from minigrad import backend
from minigrad.function import FunctionNode
from minigrad.ops import shape as _shape
from minigrad.ops._util import expect_flag, expect_tensor
from minigrad.ops.determinants import Inverse, LinAlgError
from minigrad.tensor import Tensor

__all__ = [
    "pinverse",
    "SVD",
    "Eigh",
    "EighResult",
    "PInv",
    "QR",
    "QRResult",
    "SVDResult",
    "eigh",
    "eigvalsh",
    "matrix_rank",
    "pinv",
    "qr",
    "svd",
    "svdvals",
]

SVDResult = namedtuple("SVDResult", ["U", "S", "Vh"])
EighResult = namedtuple("EighResult", ["eigenvalues", "eigenvectors"])
QRResult = namedtuple("QRResult", ["Q", "R"])


# -- helpers ------------------------------------------------------------------


def _const(xp, array) -> Tensor:
    return Tensor._make(xp.asarray(array), False, None, 0)


def _check_matrix(A, fn: str, square: bool = False, integer_error=RuntimeError) -> None:  # noqa: N803
    """PyTorch's checks of a batch of float32/float64 matrices ``(*, m, n)``.

    Raises:
        TypeError: ``A`` is not a Tensor.
        RuntimeError: fewer than 2 dims, not square (when ``square``).
        ``integer_error``: integer or bool dtype (PyTorch's class differs by function).
        NotImplementedError: float16/bfloat16 (as PyTorch's LAPACK kernels), complex (not supported here).
    """
    expect_tensor(A, f"linalg_{fn}", "A")
    if A.ndim < 2:
        raise RuntimeError(
            f"linalg.{fn}: The input tensor A must have at least 2 dimensions, got shape {list(A.shape)}"
        )
    if square and A.shape[-1] != A.shape[-2]:
        raise RuntimeError(
            f"linalg.{fn}: A must be batches of square matrices, but they are {A.shape[-2]} by {A.shape[-1]} matrices"
        )
    kind = A.dtype.kind
    if kind == "c":
        raise NotImplementedError(f"linalg.{fn}: complex matrices are not supported here; use float32 or float64")
    if kind != "f" and str(A.dtype) != "bfloat16":
        raise integer_error(f"linalg.{fn}: Expected a floating point tensor as input. Got {A.dtype}; convert it first")
    if A.dtype.itemsize < 4:
        raise NotImplementedError(f"linalg.{fn}: not implemented for {A.dtype}; use float32 or float64")


def _svd_arrays(xp, a, fn: str, full_matrices: bool = False, compute_uv: bool = True):
    """``xp.linalg.svd`` of ``a`` with PyTorch's handling of non-finite matrices.

    A NaN anywhere raises LinAlgError (LAPACK's iterations cannot converge);
    a matrix holding inf (and no NaN) gets NaN singular values and the
    singular vectors of a zero matrix, as PyTorch returns NaN there without
    an error.
    """
    finite = xp.isfinite(a).all(axis=(-2, -1)) if a.size else xp.ones(a.shape[:-2], dtype=bool)
    any_bad = not bool(finite.all())
    if any_bad:
        if bool(xp.isnan(a).any()):
            raise LinAlgError(
                f"linalg.{fn}: The algorithm failed to converge because the input matrix contained non-finite "
                "values; remove the NaN entries first"
            )
        a = xp.where(finite[..., None, None], a, xp.zeros((), dtype=a.dtype))
    if not compute_uv:
        s = xp.linalg.svd(a, compute_uv=False).astype(a.dtype, copy=False)
        return xp.where(finite[..., None], s, xp.asarray(np.nan, dtype=a.dtype)) if any_bad else s
    u, s, vh = xp.linalg.svd(a, full_matrices=full_matrices)
    u, s, vh = u.astype(a.dtype, copy=False), s.astype(a.dtype, copy=False), vh.astype(a.dtype, copy=False)
    if any_bad:
        s = xp.where(finite[..., None], s, xp.asarray(np.nan, dtype=a.dtype))
    return u, s, vh


def _skew(x: Tensor) -> Tensor:
    return x - x.mT


def _off_diagonal_ratio(x: Tensor, e: Tensor, xp, k: int, dtype) -> Tensor:
    """``x / e`` off the diagonal, 0 on it (``e`` holds 0 on its diagonal)."""
    eye = xp.eye(k, dtype=bool)
    e = e + _const(xp, eye.astype(dtype))  # 1 on the diagonal: x is 0 there (skew) or masked below
    return (x / e) * _const(xp, (~eye).astype(dtype))


# -- SVD ------------------------------------------------------------------------


class SVD(FunctionNode):
    """``U, S, Vh`` of each matrix ``(*, m, n)``; backward: see the module docstring."""

    def __init__(self, full_matrices: bool = False):
        self.full_matrices = full_matrices

    def forward(self, a):
        self.retain_outputs((0, 1, 2))
        return _svd_arrays(self.xp, a, "svd", self.full_matrices)

    def backward(self, gU, gS, gVh):  # noqa: N803
        U, S, Vh = self.saved_outputs
        xp = self.xp
        m, n = U.shape[-2], Vh.shape[-1]
        k = S.shape[-1]
        if self.full_matrices:
            U, Vh = U[..., :, :k], Vh[..., :k, :]
        if k == 0:
            return _const(xp, xp.zeros(U.shape[:-1] + (n,), dtype=S.dtype))
        vectors = bool(xp.any(gU.array)) or bool(xp.any(gVh.array))
        if not vectors:
            return (U * gS[..., None, :]) @ Vh
        if self.full_matrices:
            gU, gVh = gU[..., :, :k], gVh[..., :k, :]
        s_row, s_col = S[..., None, :], S[..., :, None]
        s2 = S * S
        e = s2[..., None, :] - s2[..., :, None]
        UhgU = U.mT @ gU
        VhgV = Vh @ gVh.mT
        inner = _off_diagonal_ratio(_skew(UhgU), e, xp, k, S.dtype) * s_row
        inner = inner + s_col * _off_diagonal_ratio(_skew(VhgV), e, xp, k, S.dtype)
        inner = inner + gS[..., None, :] * _const(xp, xp.eye(k, dtype=S.dtype))
        ga = U @ inner @ Vh
        if m > k:
            ga = ga + ((gU - U @ UhgU) / s_row) @ Vh
        if n > k:
            ga = ga + U @ ((gVh - VhgV.mT @ Vh) / s_col)
        return ga


def _check_driver(driver, fn: str) -> None:
    """PyTorch's CPU rule: ``driver`` must be None (the cuSOLVER drivers exist on CUDA only)."""
    if driver is None:
        return
    if not isinstance(driver, str):
        raise TypeError(f"linalg_{fn}(): argument 'driver' must be str or None, not {type(driver).__name__}")
    raise RuntimeError(
        f"linalg.{fn}: keyword argument `driver=` is only supported on CUDA inputs with cuSOLVER; leave it out"
    )


def svd(A, full_matrices=True, *, driver=None):  # noqa: N803  (PyTorch's names)
    """The singular value decomposition ``A = U @ diag(S) @ Vh`` of each matrix of ``A`` (shape ``(*, m, n)``).

    Returns ``SVDResult(U, S, Vh)``: with ``k = min(m, n)``, ``U`` is ``(*, m, m)``
    and ``Vh`` ``(*, n, n)`` when ``full_matrices`` (the default), else ``(*, m, k)``
    and ``(*, k, n)``; ``S`` is ``(*, k)``, descending, non-negative. The signs of
    the singular vectors are LAPACK's choice (they may differ from PyTorch's).
    Differentiable (see the module docstring): the gradient through ``U``/``Vh`` is
    NaN/inf where singular values repeat, as PyTorch's.

    Raises:
        TypeError: ``A`` is not a Tensor; ``full_matrices`` is not a bool, ``driver`` not a str.
        RuntimeError: fewer than 2 dims, integer dtype, ``driver`` given (CUDA-only in PyTorch).
        LinAlgError: ``A`` holds inf or NaN.
        NotImplementedError: float16/bfloat16, complex.
    """
    _check_matrix(A, "svd")
    full_matrices = expect_flag(full_matrices, "linalg_svd", "full_matrices")
    _check_driver(driver, "svd")
    return SVDResult(*SVD(full_matrices)(A))


def svdvals(A, *, driver=None):  # noqa: N803
    """The singular values of each matrix of ``A`` (shape ``(*, m, n)``): shape ``(*, min(m, n))``, descending.

    Differentiable everywhere: the gradient is ``U @ diag(g) @ Vh`` (computed
    through ``svd``, so second derivatives follow; those are NaN/inf where
    singular values repeat).

    Raises:
        TypeError: ``A`` is not a Tensor, ``driver`` not a str.
        RuntimeError: fewer than 2 dims, integer dtype, ``driver`` given (CUDA-only in PyTorch).
        LinAlgError: ``A`` holds inf or NaN.
        NotImplementedError: float16/bfloat16, complex.
    """
    _check_matrix(A, "svdvals")
    _check_driver(driver, "svdvals")
    if A.requires_grad:
        return SVD(False)(A)[1]
    xp = backend.get_array_module(A.array)
    return Tensor._make(_svd_arrays(xp, A.array, "svdvals", compute_uv=False), False, None, 0)


# -- symmetric eigendecomposition -------------------------------------------------


def _eigh_arrays(xp, a, uplo: str, vectors: bool):
    """``xp.linalg.eigh``/``eigvalsh`` of ``a`` (one triangle read), NaN where that triangle holds inf or NaN."""
    n = a.shape[-1]
    read = xp.asarray(np.tril(np.ones((n, n), dtype=bool)) if uplo == "L" else np.triu(np.ones((n, n), dtype=bool)))
    bad = ~(xp.isfinite(a) | ~read).all(axis=(-2, -1)) if a.size else xp.zeros(a.shape[:-2], dtype=bool)
    any_bad = bool(bad.any())
    if any_bad:
        a = xp.where(bad[..., None, None], xp.zeros((), dtype=a.dtype), a)
    if vectors:
        w, v = xp.linalg.eigh(a, UPLO=uplo)
        w, v = w.astype(a.dtype, copy=False), v.astype(a.dtype, copy=False)
        if any_bad:
            w = xp.where(bad[..., None], xp.asarray(np.nan, dtype=a.dtype), w)
            v = xp.where(bad[..., None, None], xp.asarray(np.nan, dtype=a.dtype), v)
        return w, v
    w = xp.linalg.eigvalsh(a, UPLO=uplo).astype(a.dtype, copy=False)
    if any_bad:
        w = xp.where(bad[..., None], xp.asarray(np.nan, dtype=a.dtype), w)
    return w


class Eigh(FunctionNode):
    """``eigenvalues, eigenvectors`` of each symmetric matrix (one triangle read); backward: module docstring."""

    def __init__(self, uplo: str = "L"):
        self.uplo = uplo

    def forward(self, a):
        self.retain_outputs((0, 1))
        return _eigh_arrays(self.xp, a, self.uplo, True)

    def backward(self, gL, gV):  # noqa: N803
        L, V = self.saved_outputs
        xp = self.xp
        n = L.shape[-1]
        if n == 0:
            return _const(xp, xp.zeros(V.shape, dtype=V.dtype))
        eye = _const(xp, xp.eye(n, dtype=L.dtype))
        inner = gL[..., None, :] * eye
        if bool(xp.any(gV.array)):
            e = L[..., None, :] - L[..., :, None]
            inner = inner + _off_diagonal_ratio(_skew(V.mT @ gV) * 0.5, e, xp, n, L.dtype)
        return V @ inner @ V.mT


def _check_uplo(UPLO, fn: str) -> str:  # noqa: N803
    if not isinstance(UPLO, str):
        raise TypeError(f"linalg_{fn}(): argument 'UPLO' must be str, not {type(UPLO).__name__}")
    if UPLO.upper() not in ("L", "U"):
        raise RuntimeError(f"linalg.{fn}: Expected UPLO argument to be 'L' or 'U', but got {UPLO!r}")
    return UPLO.upper()


def eigh(A, UPLO="L"):  # noqa: N803  (PyTorch's names)
    """Eigenvalues and eigenvectors of each symmetric matrix of ``A`` (shape ``(*, n, n)``).

    Only the lower (``UPLO='L'``, the default) or upper (``'U'``) triangle is
    read; the other is taken to mirror it. Returns ``EighResult(eigenvalues,
    eigenvectors)``: eigenvalues ``(*, n)`` ascending, eigenvectors ``(*, n, n)``
    orthonormal columns, ``A = V @ diag(L) @ V.mT`` (signs are LAPACK's choice).
    A matrix holding inf or NaN gives NaN (no error, as PyTorch). Differentiable
    (module docstring); the gradient through the eigenvectors is NaN/inf where
    eigenvalues repeat, as PyTorch's.

    Raises:
        TypeError: ``A`` is not a Tensor, ``UPLO`` not a str.
        RuntimeError: fewer than 2 dims, not square, ``UPLO`` not 'L'/'U'.
        NotImplementedError: integer, float16/bfloat16 (as PyTorch), complex (not supported here).
    """
    _check_matrix(A, "eigh", square=True, integer_error=NotImplementedError)
    uplo = _check_uplo(UPLO, "eigh")
    return EighResult(*Eigh(uplo)(A))


def eigvalsh(A, UPLO="L"):  # noqa: N803
    """The eigenvalues of each symmetric matrix of ``A`` (shape ``(*, n, n)``): shape ``(*, n)``, ascending.

    Reads one triangle, as ``eigh``. Differentiable: the gradient is
    ``V @ diag(g) @ V.mT`` (through ``eigh``, so second derivatives follow).

    Raises:
        As ``eigh``.
    """
    _check_matrix(A, "eigvalsh", square=True, integer_error=NotImplementedError)
    uplo = _check_uplo(UPLO, "eigvalsh")
    if A.requires_grad:
        return Eigh(uplo)(A)[0]
    xp = backend.get_array_module(A.array)
    return Tensor._make(_eigh_arrays(xp, A.array, uplo, False), False, None, 0)


# -- QR -------------------------------------------------------------------------------


class QR(FunctionNode):
    """``Q, R`` of each matrix ``(*, m, n)``; backward: module docstring (mode 'reduced', or square/wide)."""

    def __init__(self, mode: str = "reduced"):
        self.mode = mode

    def forward(self, a):
        xp = self.xp
        self.retain_inputs((0,))
        self.retain_outputs((0, 1))
        if self.mode == "r":
            r = xp.linalg.qr(a, mode="r").astype(a.dtype, copy=False)
            return xp.zeros((0,), dtype=a.dtype), r
        q, r = xp.linalg.qr(a, mode=self.mode)
        return q.astype(a.dtype, copy=False), r.astype(a.dtype, copy=False)

    def backward(self, gQ, gR):  # noqa: N803
        (A,), (Q, R) = self.saved_inputs, self.saved_outputs
        m, n = A.shape[-2], A.shape[-1]
        if self.mode == "r":
            raise RuntimeError(
                "The derivative of linalg.qr depends on Q, which is not computed when mode='r'; use "
                "linalg.qr(A, mode='reduced') if you are going to differentiate through it"
            )
        if self.mode == "complete" and m > n:
            raise RuntimeError(
                "The QR decomposition is not differentiable when mode='complete' and nrows > ncols; use mode='reduced'"
            )
        xp = self.xp
        if min(m, n) == 0:
            return _const(xp, xp.zeros(A.shape, dtype=A.dtype))
        if m >= n:
            return _qr_square_backward(xp, Q, R, gQ, gR)
        gX, gY = gR[..., :, :m], gR[..., :, m:]
        g_left = _qr_square_backward(xp, Q, R[..., :, :m], gQ + A[..., :, m:] @ gY.mT, gX)
        return _shape.cat([g_left, Q @ gY], dim=-1)


def _qr_square_backward(xp, Q, R, gQ, gR):  # noqa: N803
    """``(gQ + Q (triu(M) + triu(M, 1)^T)) R^{-T}``, ``M = gR R^T - Q^T gQ`` (``R`` square, upper)."""
    n = R.shape[-1]
    M = gR @ R.mT - Q.mT @ gQ
    upper = _const(xp, np.triu(np.ones((n, n), dtype=bool)).astype(R.dtype))
    strict = _const(xp, np.triu(np.ones((n, n), dtype=bool), 1).astype(R.dtype))
    N = M * upper + (M * strict).mT
    B = gQ + Q @ N
    return B @ Inverse(strict=False, fn="linalg.qr")(R).mT


def qr(A, mode="reduced"):  # noqa: N803  (PyTorch's names)
    """The QR decomposition ``A = Q @ R`` of each matrix of ``A`` (shape ``(*, m, n)``), ``k = min(m, n)``.

    ``mode``: ``'reduced'`` (default) gives ``Q`` ``(*, m, k)`` with orthonormal
    columns and ``R`` ``(*, k, n)`` upper triangular; ``'complete'`` gives ``Q``
    ``(*, m, m)`` and ``R`` ``(*, m, n)``; ``'r'`` gives only ``R`` (``(*, k, n)``)
    and an empty ``Q`` (shape ``(0,)``). Returns ``QRResult(Q, R)``. Signs are
    LAPACK's (Householder) choice, as PyTorch's on the CPU. Differentiable for
    ``'reduced'``, and for ``'complete'`` when ``m <= n`` (module docstring);
    the gradient needs the square part of ``R`` invertible (NaN/inf otherwise).

    Raises:
        TypeError: ``A`` is not a Tensor, ``mode`` not a str.
        RuntimeError: fewer than 2 dims, integer dtype, unknown ``mode``; in backward, ``mode='r'``
            or ``mode='complete'`` with ``m > n`` (not differentiable, as PyTorch).
        NotImplementedError: float16/bfloat16, complex.
    """
    _check_matrix(A, "qr")
    if not isinstance(mode, str):
        raise TypeError(f"linalg_qr(): argument 'mode' must be str, not {type(mode).__name__}")
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(
            f"qr received unrecognized mode {mode!r} but expected one of 'reduced' (default), 'r', or 'complete'"
        )
    return QRResult(*QR(mode)(A))


# -- pseudo-inverse and rank --------------------------------------------------------------


def _tolerance_array(value, xp, dtype, fn: str, name: str):
    """``atol``/``rtol``/``rcond``/``tol`` as a float array (a Python number or a Tensor, PyTorch's types)."""
    if isinstance(value, Tensor):
        if value.dtype.kind == "c":
            raise NotImplementedError(f"linalg.{fn}: a complex {name} is not supported here")
        return xp.asarray(value.array, dtype=dtype)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"linalg_{fn}(): argument '{name}' must be a Tensor or a number, not {type(value).__name__}")
    return xp.asarray(float(value), dtype=dtype)


def _tolerances(A, atol, rtol, legacy, legacy_name, fn: str):  # noqa: N803
    """``(atol, rtol)`` arrays by PyTorch's rules.

    Neither given: ``rtol = eps * max(m, n)``, ``atol = 0``. ``atol > 0`` alone:
    ``rtol = 0``. The legacy positional argument is ``rtol`` for ``pinv``
    (``rcond``) and ``atol`` for ``matrix_rank`` (``tol``), the other 0.
    """
    xp = backend.get_array_module(A.array)
    dtype = A.dtype
    if legacy is not None:
        if atol is not None or rtol is not None:
            raise TypeError(
                f"linalg_{fn}(): pass either {legacy_name} (the legacy positional argument) or atol/rtol, not both"
            )
        value = _tolerance_array(legacy, xp, dtype, fn, legacy_name)
        zero = xp.zeros((), dtype=dtype)
        return (zero, value) if fn == "pinv" else (value, zero)
    a = xp.zeros((), dtype=dtype) if atol is None else _tolerance_array(atol, xp, dtype, fn, "atol")
    if rtol is not None:
        r = _tolerance_array(rtol, xp, dtype, fn, "rtol")
    elif atol is not None:
        default = np.finfo(dtype).eps * max(A.shape[-2], A.shape[-1])
        r = xp.where(a > 0, xp.zeros((), dtype=dtype), xp.asarray(default, dtype=dtype))
    else:
        r = xp.asarray(np.finfo(dtype).eps * max(A.shape[-2], A.shape[-1]), dtype=dtype)
    return a, r


def _kept(xp, values, atol, rtol):
    """Mask of the ``values`` (``(*, k)``, absolute) above ``max(atol, rtol * max(values))``."""
    biggest = values.max(axis=-1) if values.shape[-1] else xp.zeros(values.shape[:-1], dtype=values.dtype)
    tol = xp.maximum(atol, rtol * biggest)
    return values > tol[..., None]


def _broadcast_batch(A, atol, rtol, fn: str):  # noqa: N803
    """``A`` expanded to the batch shape it broadcasts to with the tolerances' shapes (PyTorch broadcasts)."""
    batch = A.shape[:-2]
    try:
        full = np.broadcast_shapes(batch, atol.shape, rtol.shape)
    except ValueError:
        raise RuntimeError(
            f"linalg.{fn}: the tolerances of shapes {list(atol.shape)} and {list(rtol.shape)} do not broadcast "
            f"with the batch shape {list(batch)} of A"
        ) from None
    return A if full == batch else A.expand(*full, *A.shape[-2:])


class PInv(FunctionNode):
    """Moore-Penrose pseudo-inverse of each matrix ``(*, m, n)`` -> ``(*, n, m)``; backward: module docstring."""

    def __init__(self, atol, rtol, hermitian: bool):
        self.atol, self.rtol, self.hermitian = atol, rtol, hermitian

    def forward(self, a):
        xp = self.xp
        self.retain_inputs((0,))
        self.retain_outputs((0,))
        if min(a.shape[-2:]) == 0:
            return xp.zeros(a.shape[:-2] + (a.shape[-1], a.shape[-2]), dtype=a.dtype)
        if self.hermitian:
            w, v = _eigh_arrays(xp, a, "L", True)
            keep = _kept(xp, xp.abs(w), self.atol, self.rtol)
            with np.errstate(divide="ignore"):
                w_inv = xp.where(keep, 1 / xp.where(keep, w, 1), 0).astype(a.dtype)
            return (v * w_inv[..., None, :]) @ xp.swapaxes(v, -1, -2)
        u, s, vh = _svd_arrays(xp, a, "pinv")
        keep = _kept(xp, s, self.atol, self.rtol)
        s_inv = xp.where(keep, 1 / xp.where(keep, s, 1), 0).astype(a.dtype)
        return ((xp.swapaxes(vh, -1, -2) * s_inv[..., None, :]) @ xp.swapaxes(u, -1, -2)).astype(a.dtype)

    def backward(self, g):
        (A,), (P,) = self.saved_inputs, self.saved_outputs
        xp = self.xp
        m, n = A.shape[-2], A.shape[-1]
        if min(m, n) == 0:
            return _const(xp, xp.zeros(A.shape, dtype=A.dtype))
        Pt, gt = P.mT, g.mT
        left = gt - (A @ (P @ gt))  # (I - A P) G^T
        right = gt - ((gt @ P) @ A)  # G^T (I - P A)
        return -(Pt @ g @ Pt) + left @ (P @ Pt) + (Pt @ P) @ right


def _check_pinv_input(A, fn: str) -> None:  # noqa: N803
    expect_tensor(A, f"linalg_{fn}", "A")
    if A.ndim < 2 or A.dtype.kind != "f" or A.dtype.itemsize < 4:
        if A.dtype.kind == "c" and A.ndim >= 2:
            raise NotImplementedError(f"linalg.{fn}: complex matrices are not supported here; use float32/float64")
        raise RuntimeError(
            f"linalg.{fn}: expected a tensor with 2 or more dimensions of float32 or float64, got shape "
            f"{list(A.shape)} and dtype {A.dtype}"
        )


def pinv(A, rcond=None, hermitian=False, *, atol=None, rtol=None):  # noqa: N803  (PyTorch's names)
    """The pseudo-inverse of each matrix of ``A`` (shape ``(*, m, n)``): shape ``(*, n, m)``.

    Singular values (absolute eigenvalues when ``hermitian``) at or below
    ``max(atol, rtol * largest)`` are treated as 0. ``atol``/``rtol`` are numbers
    or Tensors broadcasting with the batch ``(*)`` (the result takes the broadcast batch); by default ``rtol = eps *
    max(m, n)`` and ``atol = 0``, and ``rtol`` is 0 when only ``atol > 0`` is
    given. ``rcond`` (PyTorch's legacy positional form) is ``rtol`` with
    ``atol = 0``. ``hermitian=True`` reads only the lower triangle and uses
    ``eigh`` (a matrix holding inf/NaN then gives NaN, else LinAlgError).
    Differentiable with PyTorch's formula (module docstring), so repeated
    singular values are fine; the gradient is that of a fixed rank.

    Raises:
        TypeError: ``A`` is not a Tensor; a tolerance of another type; ``rcond`` with ``atol``/``rtol``.
        RuntimeError: fewer than 2 dims, not float32/float64; ``hermitian`` with non-square matrices.
        LinAlgError: ``A`` holds inf or NaN (not ``hermitian``).
    """
    _check_pinv_input(A, "pinv")
    hermitian = expect_flag(hermitian, "linalg_pinv", "hermitian")
    if hermitian and A.shape[-1] != A.shape[-2]:
        raise RuntimeError(
            f"linalg.eigh: A must be batches of square matrices, but they are {A.shape[-2]} by {A.shape[-1]} "
            "matrices; pinv(..., hermitian=True) needs square symmetric matrices"
        )
    a_tol, r_tol = _tolerances(A, atol, rtol, rcond, "rcond", "pinv")
    A = _broadcast_batch(A, a_tol, r_tol, "pinv")
    return PInv(a_tol, r_tol, hermitian)(A)


def matrix_rank(A, tol=None, hermitian=False, *, atol=None, rtol=None):  # noqa: N803
    """The numerical rank of each matrix of ``A`` (shape ``(*, m, n)``): an int64 Tensor of shape ``(*)``.

    Counts the singular values (absolute eigenvalues when ``hermitian``, which
    reads the lower triangle) above ``max(atol, rtol * largest)``, with the
    defaults of ``pinv``. ``tol`` (PyTorch's legacy positional form) is ``atol``
    with ``rtol = 0``. Not differentiable (an integer result).

    Raises:
        TypeError: ``A`` is not a Tensor; a tolerance of another type; ``tol`` with ``atol``/``rtol``.
        RuntimeError: fewer than 2 dims, not float32/float64; ``hermitian`` with non-square matrices.
        LinAlgError: ``A`` holds inf or NaN (not ``hermitian``).
    """
    expect_tensor(A, "linalg_matrix_rank", "A")
    if A.ndim < 2:
        raise RuntimeError(
            f"torch.linalg.matrix_rank: The input tensor input must have at least 2 dimensions, got shape "
            f"{list(A.shape)}"
        )
    if A.dtype.kind == "c":
        raise NotImplementedError("linalg.matrix_rank: complex matrices are not supported here; use float32/float64")
    if A.dtype.kind != "f" or A.dtype.itemsize < 4:
        raise RuntimeError(f"linalg.matrix_rank: only float32 and float64 matrices are handled, got {A.dtype}")
    hermitian = expect_flag(hermitian, "linalg_matrix_rank", "hermitian")
    a_tol, r_tol = _tolerances(A, atol, rtol, tol, "tol", "matrix_rank")
    A = _broadcast_batch(A, a_tol, r_tol, "matrix_rank")
    xp = backend.get_array_module(A.array)
    a = A.array
    if hermitian:
        if a.shape[-1] != a.shape[-2]:
            raise RuntimeError(
                f"linalg.eigvalsh: A must be batches of square matrices, but they are {a.shape[-2]} by "
                f"{a.shape[-1]} matrices; matrix_rank(..., hermitian=True) needs square symmetric matrices"
            )
        values = xp.abs(_eigh_arrays(xp, a, "L", False))
    else:
        values = _svd_arrays(xp, a, "matrix_rank", compute_uv=False)
    rank = _kept(xp, values, a_tol, r_tol).sum(axis=-1).astype(np.int64)
    return Tensor._make(xp.asarray(rank), False, None, 0)


# the graph nodes of this module, for minigrad.ops.REGISTRY (cases in tests/minigrad/ops/cases_decompositions.py)

def pinverse(input, rcond=1e-15):  # noqa: A002  (PyTorch's name)
    """``torch.pinverse`` (and ``Tensor.pinverse``): ``pinv`` keeping the singular values above ``rcond``
    times the largest, PyTorch's older spelling of the same pseudo-inverse."""
    return pinv(input, rcond=rcond)


OPS = {
    "svd": SVD,
    "eigh": Eigh,
    "qr": QR,
    "pinv": PInv,
}
