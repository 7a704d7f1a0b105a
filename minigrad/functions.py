"""Function spellings of Tensor methods (``mg.exp(t)``, ``mg.cat([...])``), as in ``torch``."""

from __future__ import annotations

from minigrad.ops import elementwise, linalg
from minigrad.ops.elementwise import clamp, where
from minigrad.ops.reduce import max, mean, min, sum  # noqa: A004
from minigrad.ops.shape import cat, stack

__all__ = ["abs", "cat", "clamp", "exp", "log", "matmul", "max", "mean", "min", "relu",
           "sigmoid", "sqrt", "stack", "sum", "tanh", "where"]


def exp(t):
    """Elementwise e**t."""
    return elementwise.Exp()(t)


def log(t):
    """Elementwise natural logarithm."""
    return elementwise.Log()(t)


def sqrt(t):
    """Elementwise square root."""
    return elementwise.Sqrt()(t)


def tanh(t):
    """Elementwise hyperbolic tangent."""
    return elementwise.Tanh()(t)


def sigmoid(t):
    """Elementwise logistic function."""
    return elementwise.Sigmoid()(t)


def relu(t):
    """Elementwise max(t, 0)."""
    return elementwise.ReLU()(t)


def abs(t):  # noqa: A001
    """Elementwise absolute value."""
    return elementwise.Abs()(t)


def matmul(a, b):
    """Matrix product ``a @ b`` (1-D and batched operands as in NumPy)."""
    return linalg.MatMul()(a, b)



