"""Function spellings of Tensor methods (``mg.exp(t)``, ``mg.cat([...])``), as in ``torch``.

Like PyTorch's, they take Tensors: anything else raises TypeError naming the function.
"""

from __future__ import annotations

from minigrad.ops import elementwise, linalg
from minigrad.ops import math as _math
from minigrad.ops import shape as _shape
from minigrad.ops._util import expect_tensor
from minigrad.ops.einsum import einsum
from minigrad.ops.elementwise import clamp, where
from minigrad.ops.gather import gather, index_select, scatter, scatter_add
from minigrad.ops.math import (
    allclose,
    atan2,
    bitwise_and,
    bitwise_not,
    bitwise_or,
    bitwise_xor,
    eq,
    equal,
    floor_divide,
    fmod,
    ge,
    gt,
    isclose,
    isfinite,
    isinf,
    isnan,
    le,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    lt,
    maximum,
    minimum,
    ne,
    remainder,
    round,  # noqa: A004
)
from minigrad.ops.reduce import max, mean, min, sum  # noqa: A004
from minigrad.ops.scan import cumprod, cumsum
from minigrad.ops.shape import cat, stack
from minigrad.ops.sorting import argsort, kthvalue, sort, topk
from minigrad.ops.structure import chunk, diagonal, flip, roll, split, tile, tril, triu, unbind, unflatten

__all__ = ["abs", "cat", "clamp", "exp", "log", "matmul", "max", "mean", "min", "relu",
           "sigmoid", "sqrt", "stack", "sum", "tanh", "where"]

# The ops of PyTorch's tutorials (elementwise math, comparisons, sorting, scans, gather/scatter,
# einsum, structure): defined in minigrad/ops/{math,sorting,scan,gather,einsum,structure}.py.
__all__ += [
    "sin", "cos", "tan", "asin", "acos", "atan", "arcsin", "arccos", "arctan", "sinh", "cosh", "asinh",
    "acosh", "atanh", "arcsinh", "arccosh", "arctanh", "exp2", "expm1", "log2", "log10", "log1p", "rsqrt",
    "reciprocal", "square", "erf", "erfinv", "sign", "floor", "ceil", "trunc", "fix", "round", "maximum",
    "minimum", "atan2", "arctan2", "remainder", "fmod", "floor_divide", "eq", "ne", "lt", "le", "gt", "ge",
    "not_equal", "less", "less_equal", "greater", "greater_equal", "equal", "isclose", "allclose", "isnan",
    "isinf", "isfinite", "logical_and", "logical_or", "logical_xor", "logical_not", "bitwise_and",
    "bitwise_or", "bitwise_xor", "bitwise_not", "sort", "argsort", "topk", "kthvalue", "cumsum", "cumprod",
    "gather", "scatter", "scatter_add", "index_select", "einsum", "tril", "triu", "chunk", "split", "unbind",
    "flip", "roll", "diagonal", "unflatten", "tile", "flatten",
]


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


# -- the ops of PyTorch's tutorials (see minigrad/ops/math.py and the modules imported above) ----------


def sin(input):  # noqa: A002  (PyTorch's names)
    """Elementwise sine (integer tensors give the default float dtype)."""
    expect_tensor(input, "sin")
    return _math.Sin()(input)


def cos(input):  # noqa: A002
    """Elementwise cosine."""
    expect_tensor(input, "cos")
    return _math.Cos()(input)


def tan(input):  # noqa: A002
    """Elementwise tangent."""
    expect_tensor(input, "tan")
    return _math.Tan()(input)


def asin(input):  # noqa: A002
    """Elementwise arcsine (NaN outside [-1, 1])."""
    expect_tensor(input, "asin")
    return _math.Asin()(input)


def acos(input):  # noqa: A002
    """Elementwise arccosine (NaN outside [-1, 1])."""
    expect_tensor(input, "acos")
    return _math.Acos()(input)


def atan(input):  # noqa: A002
    """Elementwise arctangent."""
    expect_tensor(input, "atan")
    return _math.Atan()(input)


def sinh(input):  # noqa: A002
    """Elementwise hyperbolic sine."""
    expect_tensor(input, "sinh")
    return _math.Sinh()(input)


def cosh(input):  # noqa: A002
    """Elementwise hyperbolic cosine."""
    expect_tensor(input, "cosh")
    return _math.Cosh()(input)


def asinh(input):  # noqa: A002
    """Elementwise inverse hyperbolic sine."""
    expect_tensor(input, "asinh")
    return _math.Asinh()(input)


def acosh(input):  # noqa: A002
    """Elementwise inverse hyperbolic cosine (NaN below 1)."""
    expect_tensor(input, "acosh")
    return _math.Acosh()(input)


def atanh(input):  # noqa: A002
    """Elementwise inverse hyperbolic tangent (NaN outside [-1, 1])."""
    expect_tensor(input, "atanh")
    return _math.Atanh()(input)


arcsin, arccos, arctan = asin, acos, atan
arcsinh, arccosh, arctanh = asinh, acosh, atanh


def exp2(input):  # noqa: A002
    """Elementwise 2**x."""
    expect_tensor(input, "exp2")
    return _math.Exp2()(input)


def expm1(input):  # noqa: A002
    """Elementwise e**x - 1 (accurate near 0)."""
    expect_tensor(input, "expm1")
    return _math.Expm1()(input)


def log2(input):  # noqa: A002
    """Elementwise base-2 logarithm."""
    expect_tensor(input, "log2")
    return _math.Log2()(input)


def log10(input):  # noqa: A002
    """Elementwise base-10 logarithm."""
    expect_tensor(input, "log10")
    return _math.Log10()(input)


def log1p(input):  # noqa: A002
    """Elementwise log(1 + x) (accurate near 0)."""
    expect_tensor(input, "log1p")
    return _math.Log1p()(input)


def rsqrt(input):  # noqa: A002
    """Elementwise 1 / sqrt(x) (inf at 0, NaN below)."""
    expect_tensor(input, "rsqrt")
    return _math.Rsqrt()(input)


def reciprocal(input):  # noqa: A002
    """Elementwise 1 / x (integer tensors give the default float dtype)."""
    expect_tensor(input, "reciprocal")
    return _math.Reciprocal()(input)


def square(input):  # noqa: A002
    """Elementwise x * x (integer tensors stay integer; bool gives int64)."""
    expect_tensor(input, "square")
    return _math.Square()(input)


def erf(input):  # noqa: A002
    """Elementwise error function."""
    expect_tensor(input, "erf")
    return _math.Erf()(input)


def erfinv(input):  # noqa: A002
    """Elementwise inverse error function (+-inf at +-1, NaN outside [-1, 1])."""
    expect_tensor(input, "erfinv")
    return _math.Erfinv()(input)


def sign(input):  # noqa: A002
    """Elementwise -1, 0 or 1 (0 for NaN); the gradient is zero, as in PyTorch."""
    expect_tensor(input, "sign")
    return _math.Sign()(input)


def floor(input):  # noqa: A002
    """Elementwise largest integer <= x (zero gradient). Raises NotImplementedError for bool tensors."""
    expect_tensor(input, "floor")
    return _math.Floor()(input)


def ceil(input):  # noqa: A002
    """Elementwise smallest integer >= x (zero gradient). Raises NotImplementedError for bool tensors."""
    expect_tensor(input, "ceil")
    return _math.Ceil()(input)


def trunc(input):  # noqa: A002
    """Elementwise rounding toward zero (zero gradient). Raises NotImplementedError for bool tensors."""
    expect_tensor(input, "trunc")
    return _math.Trunc()(input)


fix = trunc
arctan2 = atan2
not_equal, less, less_equal, greater, greater_equal = ne, lt, le, gt, ge


def flatten(input, start_dim=0, end_dim=-1):  # noqa: A002
    """``input`` with dimensions ``start_dim`` to ``end_dim`` merged into one (a 0-d tensor becomes 1-D).

    Raises:
        TypeError: ``input`` is not a Tensor. IndexError: a dim is out of range.
        ValueError: ``start_dim`` comes after ``end_dim``.
    """
    expect_tensor(input, "flatten")
    return _shape.flatten(input, start_dim, end_dim)

