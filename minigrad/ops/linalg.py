"""Matrix products: ``a @ b`` with NumPy's 1-D and batched (broadcast) rules."""

from __future__ import annotations

from minigrad.function import FunctionNode
from minigrad.ops._util import unbroadcast


class MatMul(FunctionNode):
    """a @ b: 1-D operands are promoted to matrices, leading dimensions broadcast"""

    def forward(self, a, b):
        if a.ndim == 0 or b.ndim == 0:
            raise ValueError(f"matmul: both operands need at least 1 dimension, got shapes {a.shape} and {b.shape}")
        k_a = a.shape[-1]
        k_b = b.shape[-2] if b.ndim > 1 else b.shape[0]
        if k_a != k_b:
            raise ValueError(
                f"matmul: shapes {tuple(a.shape)} and {tuple(b.shape)} cannot be multiplied "
                f"({k_a} columns vs {k_b} rows)"
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
