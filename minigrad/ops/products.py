# ruff: noqa: A002  (PyTorch's parameter names: input)
"""Inner products: ``inner`` (over the last dims, any ranks) and ``vdot`` (two vectors).

Both are compositions of recorded ops (``tensordot``/``dot``, or ``*`` with a
0-d operand), so their gradients come from those. As in PyTorch there is no
type promotion except with a 0-d operand: the dtypes must match.
"""

from __future__ import annotations

from minigrad.math_forms import dot, tensordot, write_out
from minigrad.ops._util import expect_tensor

__all__ = ["inner", "vdot"]


def _refuse_bool(input, other, fn: str) -> None:
    if input.dtype.kind == "b" or other.dtype.kind == "b":
        raise NotImplementedError(f"{fn}(): not implemented for bool tensors; convert them with .int() or .float()")


def _refuse_complex(input, other, fn: str) -> None:
    if input.dtype.kind == "c" or other.dtype.kind == "c":
        raise NotImplementedError(f"{fn}(): complex tensors are not supported here; only real dtypes are")


def inner(input, other, *, out=None):
    """The inner product over the last dims: ``result[i..., j...] = sum_k input[i..., k] * other[j..., k]``.

    The result has shape ``input.shape[:-1] + other.shape[:-1]`` (two vectors: a
    0-d tensor). A 0-d operand multiplies the other one elementwise (with type
    promotion). Differentiable.

    Raises:
        TypeError: an argument is not a Tensor.
        RuntimeError: the last dims differ; the dtypes differ.
        NotImplementedError: bool tensors (as PyTorch), or complex ones (not supported here).
    """
    expect_tensor(input, "inner")
    expect_tensor(other, "inner", "other")
    _refuse_complex(input, other, "inner")
    if input.ndim == 0 or other.ndim == 0:
        return write_out(input * other, out, "inner")
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(
            f"inner(): the last dimension must match on both input tensors but got shapes {list(input.shape)} "
            f"and {list(other.shape)}"
        )
    if input.dtype != other.dtype:
        raise RuntimeError(
            f"inner(): both inputs should have same dtype, got {input.dtype} and {other.dtype} "
            "(convert one with .to(dtype))"
        )
    _refuse_bool(input, other, "inner")
    return write_out(tensordot(input, other, ([input.ndim - 1], [other.ndim - 1])), out, "inner")


def vdot(input, other, *, out=None):
    """The dot product of two 1-D tensors of one size and dtype (for the real dtypes supported here it is
    ``dot``; PyTorch would conjugate a complex ``input``). Differentiable.

    Raises:
        TypeError: an argument is not a Tensor.
        RuntimeError: not 1-D, the sizes or the dtypes differ.
        NotImplementedError: bool tensors (as PyTorch), or complex ones (not supported here).
    """
    expect_tensor(input, "vdot")
    expect_tensor(other, "vdot", "other")
    _refuse_complex(input, other, "vdot")
    if input.ndim == 1 and other.ndim == 1 and input.dtype == other.dtype and input.shape == other.shape:
        _refuse_bool(input, other, "vdot")
    try:
        return dot(input, other, out=out)
    except RuntimeError as error:
        raise RuntimeError(f"vdot(): {error}") from error
