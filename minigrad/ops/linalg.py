"""Matrix products: ``a @ b`` with NumPy's 1-D and batched (broadcast) rules."""

from __future__ import annotations

from minigrad.function import FunctionNode
from minigrad.ops._util import shape_of, unbroadcast


class MatMul(FunctionNode):
    """a @ b: 1-D operands are promoted to matrices, leading dimensions broadcast.

    Like PyTorch, and unlike the elementwise ops, no type promotion: both
    operands must have one dtype.

    Raises:
        RuntimeError: an operand is 0-d, the inner dimensions differ, or the
            batch dimensions do not broadcast (the message names both shapes),
            or the operands' dtypes differ (names both), as PyTorch.
    """

    def forward(self, a, b):
        _check_shapes(shape_of(a), shape_of(b))
        if a.dtype is not b.dtype and a.dtype != b.dtype:
            raise RuntimeError(
                f"matmul: expected both operands to have the same dtype, got {a.dtype} and {b.dtype} "
                "(convert one with .to(dtype))"
            )
        self.retain_inputs((0, 1))
        return a @ b

    def backward(self, g):
        a, b = self.saved_inputs
        need_a, need_b = self.needs_input_grad
        if a.ndim == 1 and b.ndim == 1:
            return (g * b if need_a else None, g * a if need_b else None)
        a2 = a.unsqueeze(0) if a.ndim == 1 else a
        b2 = b.unsqueeze(-1) if b.ndim == 1 else b
        if a.ndim == 1:
            g = g.unsqueeze(-2)
        if b.ndim == 1:
            g = g.unsqueeze(-1)
        grad_a = grad_b = None
        if need_a:
            grad_a = unbroadcast(g @ b2.mT, a2.shape).reshape(a.shape)
        if need_b:
            grad_b = unbroadcast(a2.mT @ g, b2.shape).reshape(b.shape)
        return grad_a, grad_b


def _check_shapes(shape_a, shape_b) -> None:
    """Raise RuntimeError (PyTorch's) naming both shapes unless ``a @ b`` is defined for them."""
    if not shape_a or not shape_b:
        raise RuntimeError(f"matmul: both operands need at least 1 dimension, got shapes {shape_a} and {shape_b}")
    k_a = shape_a[-1]
    k_b = shape_b[-2] if len(shape_b) > 1 else shape_b[0]
    if k_a != k_b:
        raise RuntimeError(f"matmul: shapes {shape_a} and {shape_b} cannot be multiplied ({k_a} columns vs {k_b} rows)")
    batch_a, batch_b = shape_a[:-2], shape_b[:-2]
    for m, n in zip(reversed(batch_a), reversed(batch_b)):
        if m != n and m != 1 and n != 1:
            raise RuntimeError(
                f"matmul: shapes {shape_a} and {shape_b} cannot be multiplied: batch dimensions "
                f"{batch_a} and {batch_b} are not broadcastable"
            )
