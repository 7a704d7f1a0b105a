"""Function spellings of Tensor methods (``mg.exp(t)``, ``mg.cat([...])``), as in ``torch``.

Like PyTorch's, they take Tensors: anything else raises TypeError naming the function.
"""

from __future__ import annotations

from minigrad.ops import elementwise, linalg
from minigrad.ops._util import expect_tensor
from minigrad.ops.elementwise import clamp, where
from minigrad.ops.reduce import max, mean, min, sum  # noqa: A004
from minigrad.ops.shape import cat, stack

__all__ = ["abs", "cat", "clamp", "exp", "log", "matmul", "max", "mean", "min", "relu",
           "sigmoid", "sqrt", "stack", "sum", "tanh", "where"]


def exp(t):
    """Elementwise e**t."""
    expect_tensor(t, "exp")
    return elementwise.Exp()(t)


def log(t):
    """Elementwise natural logarithm."""
    expect_tensor(t, "log")
    return elementwise.Log()(t)


def sqrt(t):
    """Elementwise square root."""
    expect_tensor(t, "sqrt")
    return elementwise.Sqrt()(t)


def tanh(t):
    """Elementwise hyperbolic tangent."""
    expect_tensor(t, "tanh")
    return elementwise.Tanh()(t)


def sigmoid(t):
    """Elementwise logistic function."""
    expect_tensor(t, "sigmoid")
    return elementwise.Sigmoid()(t)


def relu(t):
    """Elementwise max(t, 0)."""
    expect_tensor(t, "relu")
    return elementwise.ReLU()(t)


def abs(t):  # noqa: A001
    """Elementwise absolute value."""
    expect_tensor(t, "abs")
    return elementwise.Abs()(t)


def matmul(a, b):
    """Matrix product ``a @ b`` (1-D and batched operands as in NumPy)."""
    return linalg.MatMul()(a, b)



