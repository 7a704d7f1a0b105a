"""The two BLAS routines NumPy does not expose: ``out += a @ b`` (gemm) and ``out += alpha * x`` (axpy).

NumPy's ``matmul`` always writes its product to memory of its own, so adding a
product into an existing array costs a temporary and a second pass over
memory. BLAS's ``gemm`` computes ``C = alpha * A @ B + beta * C``: with
``beta = 1`` it adds the product into ``C`` as it computes it. Megatron-LM
calls this gradient-accumulation fusion (the weight-gradient GEMM of every
micro-batch accumulates straight into the gradient buffer); here it is how a
micro-batched step (pipeline schedules, gradient accumulation under DDP's
``no_sync``) adds each micro-batch's weight gradient into ``.grad``
(``add_matmul``, called from ``minigrad.destinations``).

``axpy`` adds ``alpha * x`` into ``y`` in one pass, with one rounding per
element (a fused multiply-add), as PyTorch's ``y.add_(x, alpha=alpha)`` does:
the SGD update (``add_scaled``, called from ``minigrad.optim.updates``).

SciPy exposes both (``scipy.linalg.blas``), for float32 and float64. Without
SciPy, and for anything else (CuPy arrays, other dtypes, empty arrays),
``add_matmul`` adds the product that ``matmul`` computed, and ``add_scaled``
declines so that its caller updates in NumPy: equal up to rounding.
"""

from __future__ import annotations

import numpy as np

_routines = None  # {(name, dtype): SciPy's routine}, found on first use; empty without SciPy


def _blas() -> dict:
    global _routines
    if _routines is None:
        try:
            from scipy.linalg import blas  # noqa: PLC0415  (optional, and slow to import: only when first needed)
        except ImportError:
            _routines = {}
        else:
            single, double = np.dtype(np.float32), np.dtype(np.float64)
            _routines = {
                ("gemm", single): blas.sgemm, ("gemm", double): blas.dgemm,
                ("axpy", single): blas.saxpy, ("axpy", double): blas.daxpy,
            }  # fmt: skip
    return _routines


def fused() -> bool:
    """Whether ``add_matmul`` and ``add_scaled`` of float32/float64 NumPy arrays are BLAS calls (SciPy is here)."""
    return bool(_blas())


def add_matmul(out, a, b) -> None:
    """Add the matrix product ``a @ b`` into ``out``, in place.

    Args:
        out: (m, n), written in place (C- or Fortran-contiguous for the fused path).
        a: (m, k). b: (k, n). Arrays of the same module and dtype as ``out``.

    One BLAS ``gemm`` with ``beta = 1`` for float32/float64 NumPy arrays when
    SciPy is installed and ``out`` shares no memory with ``a`` or ``b``;
    ``out += a @ b`` (the product first, then the add) otherwise.
    """
    gemm = _blas().get(("gemm", out.dtype)) if type(out) is np.ndarray else None
    if gemm is None or a.dtype != out.dtype or b.dtype != out.dtype or a.size == 0 or out.size == 0:
        out += a @ b
        return
    if np.may_share_memory(out, a) or np.may_share_memory(out, b):  # gemm would read what it already wrote
        out += a @ b
        return
    # BLAS reads and writes column-major (Fortran) arrays: a C-ordered ``out`` is the Fortran array
    # ``out.T``, and ``out += a @ b`` is ``out.T += b.T @ a.T``.
    if out.flags.f_contiguous:
        c, left, right = out, a, b
    elif out.flags.c_contiguous:
        c, left, right = out.T, b.T, a.T
    else:
        out += a @ b
        return
    left, trans_left = _operand(left)
    right, trans_right = _operand(right)
    result = gemm(1.0, left, right, beta=1.0, c=c, overwrite_c=1, trans_a=trans_left, trans_b=trans_right)
    if result.ctypes.data != c.ctypes.data:  # SciPy had to copy ``c`` (an unaligned array): write the sum back
        c[...] = result


def _operand(m):
    """``m`` as gemm takes it without a copy: ``(array, transpose_flag)`` with a Fortran-contiguous array."""
    if m.flags.f_contiguous:
        return m, 0
    if m.flags.c_contiguous:
        return m.T, 1  # m.T is m's memory read column-major; gemm transposes it back
    return np.asfortranarray(m), 0


def add_scaled(out, x, alpha) -> bool:
    """Add ``alpha * x`` into ``out`` in place with BLAS's ``axpy``, if it can take them.

    Args:
        out, x: NumPy arrays of one shape and dtype (float32 or float64), both C-contiguous.
        alpha: a Python number.

    Returns:
        True when done. False, with ``out`` untouched, when SciPy is missing
        or the arrays do not qualify: the caller then updates ``out`` itself.
    """
    axpy = _blas().get(("axpy", out.dtype)) if type(out) is np.ndarray and type(x) is np.ndarray else None
    if axpy is None or x.dtype != out.dtype or x.shape != out.shape or out.size == 0:
        return False
    if not (out.flags.c_contiguous and x.flags.c_contiguous and out.flags.writeable):
        return False
    flat = out.reshape(-1)
    result = axpy(x.reshape(-1), flat, a=alpha)
    if result.ctypes.data != flat.ctypes.data:  # SciPy had to copy (an unaligned array): write the sum back
        flat[...] = result
    return True
