"""PyTorch's top-level functions of the ops (``mg.exp(t)``, ``mg.cat([...])``), as in ``torch``.

A Tensor method (``t.exp()``) and its function (``mg.exp(t)``) apply the same op class of
``minigrad/ops/``. Most functions are written beside their op (``ops/math.py``,
``ops/sorting.py``, ``ops/structure.py``, ...) and only collected here; the one-input
functions below are made by ``_unary`` from their op class. Like PyTorch's, the functions
take Tensors: anything else raises TypeError naming the function.
"""

from __future__ import annotations

from minigrad import math_forms
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

__all__ = [
    "abs", "cat", "clamp", "exp", "log", "matmul", "max", "mean", "min", "relu", "sigmoid", "sqrt", "stack",
    "sum", "tanh", "where",
    # the ops of PyTorch's tutorials: minigrad/ops/{math,sorting,scan,gather,einsum,structure}.py
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


def _unary(op: type, name: str, doc: str):
    """The function ``name(input, *, out=None)``: ``op()(input)`` for a Tensor, else TypeError naming ``name``."""

    def function(input, *, out=None):  # noqa: A002  (PyTorch's name)
        expect_tensor(input, name)
        result = op()(input)
        return result if out is None else math_forms.write_out(result, out, name)

    return _named(function, name, doc)


def _unary_of_t(op: type, name: str, doc: str):
    """``_unary`` for the first functions (``exp`` ... ``abs``), whose argument has always been called ``t``."""

    def function(t, *, out=None):
        expect_tensor(t, name)
        result = op()(t)
        return result if out is None else math_forms.write_out(result, out, name)

    return _named(function, name, doc)


def _named(function, name: str, doc: str):
    """``function`` under the public ``name``, with ``doc`` as its docstring (for help(), tracebacks, the reference)."""
    function.__name__ = function.__qualname__ = name
    function.__module__ = __name__
    function.__doc__ = doc
    return function


exp = _unary_of_t(elementwise.Exp, "exp", "Elementwise e**t.")
log = _unary_of_t(elementwise.Log, "log", "Elementwise natural logarithm.")
sqrt = _unary_of_t(elementwise.Sqrt, "sqrt", "Elementwise square root.")
tanh = _unary_of_t(elementwise.Tanh, "tanh", "Elementwise hyperbolic tangent.")
sigmoid = _unary_of_t(elementwise.Sigmoid, "sigmoid", "Elementwise logistic function.")
relu = _unary_of_t(elementwise.ReLU, "relu", "Elementwise max(t, 0).")
abs = _unary_of_t(elementwise.Abs, "abs", "Elementwise absolute value.")  # noqa: A001


def matmul(a, b, *, out=None):
    """Matrix product ``a @ b`` (1-D and batched operands as in NumPy); ``out=`` as PyTorch's (``write_out``)."""
    result = linalg.MatMul()(a, b)
    return result if out is None else math_forms.write_out(result, out, "matmul")


# -- the ops of PyTorch's tutorials (see minigrad/ops/math.py and the modules imported above) ----------

sin = _unary(_math.Sin, "sin", "Elementwise sine (integer tensors give the default float dtype).")
cos = _unary(_math.Cos, "cos", "Elementwise cosine.")
tan = _unary(_math.Tan, "tan", "Elementwise tangent.")
asin = _unary(_math.Asin, "asin", "Elementwise arcsine (NaN outside [-1, 1]).")
acos = _unary(_math.Acos, "acos", "Elementwise arccosine (NaN outside [-1, 1]).")
atan = _unary(_math.Atan, "atan", "Elementwise arctangent.")
sinh = _unary(_math.Sinh, "sinh", "Elementwise hyperbolic sine.")
cosh = _unary(_math.Cosh, "cosh", "Elementwise hyperbolic cosine.")
asinh = _unary(_math.Asinh, "asinh", "Elementwise inverse hyperbolic sine.")
acosh = _unary(_math.Acosh, "acosh", "Elementwise inverse hyperbolic cosine (NaN below 1).")
atanh = _unary(_math.Atanh, "atanh", "Elementwise inverse hyperbolic tangent (NaN outside [-1, 1]).")
arcsin, arccos, arctan = asin, acos, atan
arcsinh, arccosh, arctanh = asinh, acosh, atanh
exp2 = _unary(_math.Exp2, "exp2", "Elementwise 2**x.")
expm1 = _unary(_math.Expm1, "expm1", "Elementwise e**x - 1 (accurate near 0).")
log2 = _unary(_math.Log2, "log2", "Elementwise base-2 logarithm.")
log10 = _unary(_math.Log10, "log10", "Elementwise base-10 logarithm.")
log1p = _unary(_math.Log1p, "log1p", "Elementwise log(1 + x) (accurate near 0).")
rsqrt = _unary(_math.Rsqrt, "rsqrt", "Elementwise 1 / sqrt(x) (inf at 0, NaN below).")
reciprocal = _unary(_math.Reciprocal, "reciprocal", "Elementwise 1 / x (integer tensors give the default float dtype).")
square = _unary(_math.Square, "square", "Elementwise x * x (integer tensors stay integer; bool gives int64).")
erf = _unary(_math.Erf, "erf", "Elementwise error function.")
erfinv = _unary(_math.Erfinv, "erfinv", "Elementwise inverse error function (+-inf at +-1, NaN outside [-1, 1]).")
sign = _unary(_math.Sign, "sign", "Elementwise -1, 0 or 1 (0 for NaN); the gradient is zero, as in PyTorch.")
floor = _unary(_math.Floor, "floor", "Elementwise largest integer <= x (zero gradient). "
               "Raises NotImplementedError for bool tensors.")
ceil = _unary(_math.Ceil, "ceil", "Elementwise smallest integer >= x (zero gradient). "
              "Raises NotImplementedError for bool tensors.")
trunc = _unary(_math.Trunc, "trunc", "Elementwise rounding toward zero (zero gradient). "
               "Raises NotImplementedError for bool tensors.")
fix = trunc
arctan2 = atan2
not_equal, less, less_equal, greater, greater_equal = ne, lt, le, gt, ge


def flatten(input, start_dim=0, end_dim=-1):  # noqa: A002
    """``input`` with dimensions ``start_dim`` to ``end_dim`` merged into one (a 0-d tensor becomes 1-D).

    Raises:
        TypeError: ``input`` is not a Tensor. IndexError: a dim is out of range.
        RuntimeError: ``start_dim`` comes after ``end_dim``, as PyTorch.
    """
    expect_tensor(input, "flatten")
    return _shape.flatten(input, start_dim, end_dim)

