"""PyTorch's top-level functions of the ops (``mg.exp(t)``, ``mg.cat([...])``), as in ``torch``.

A Tensor method (``t.exp()``) and its function (``mg.exp(t)``) apply the same op class of
``minigrad/ops/``. Most functions are written beside their op (``ops/math.py``,
``ops/sorting.py``, ``ops/structure.py``, ...) and only collected here; the one-input
functions below are made by ``_unary`` from their op class. Like PyTorch's, the functions
take Tensors: anything else raises TypeError naming the function.
"""

from __future__ import annotations

from minigrad import math_forms
from minigrad.linalg.decompositions import pinverse
from minigrad.linalg.solvers import inverse
from minigrad.linalg.solvers import legacy_cholesky as cholesky
from minigrad.nn.channel_shuffle import channel_shuffle
from minigrad.nn.inplace_activations import relu_, threshold_
from minigrad.nn.pointwise_activations import celu_, selu_
from minigrad.nn.rrelu import rrelu_
from minigrad.ops import elementwise, linalg
from minigrad.ops import math as _math
from minigrad.ops import shape as _shape
from minigrad.ops._util import expect_tensor
from minigrad.ops.assembly import atleast_1d, atleast_2d, atleast_3d, cartesian_prod, combinations, row_stack, vander
from minigrad.ops.cumulative import cummax, cummin, logcumsumexp
from minigrad.ops.determinants import det, logdet, matrix_power, slogdet
from minigrad.ops.diagonal_forms import block_diag, diag_embed, diagflat
from minigrad.ops.differences import diff
from minigrad.ops.einsum import einsum
from minigrad.ops.elementwise import clamp, where
from minigrad.ops.gather import gather, index_select, scatter, scatter_add
from minigrad.ops.index_updates import index_copy, index_fill, index_put, index_put_, masked_scatter, scatter_reduce
from minigrad.ops.integration import cumulative_trapezoid, trapezoid
from minigrad.ops.math import (
    allclose,
    atan2,
    bitwise_and,
    bitwise_not,
    bitwise_or,
    bitwise_xor,
    eq,
    equal,
    erfc,
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
    logit,
    lt,
    maximum,
    minimum,
    ne,
    remainder,
    round,  # noqa: A004
)
from minigrad.ops.products import inner, vdot
from minigrad.ops.reduce import max, mean, min, sum  # noqa: A004
from minigrad.ops.scan import cumprod, cumsum
from minigrad.ops.searching import bincount, bucketize, isin, searchsorted, tril_indices, triu_indices
from minigrad.ops.shape import cat, stack
from minigrad.ops.sorting import argsort, kthvalue, sort, topk
from minigrad.ops.splitting import dsplit, hsplit, tensor_split, vsplit
from minigrad.ops.statistics import aminmax, corrcoef, cov, histc, nanmedian
from minigrad.ops.structure import chunk, diagonal, flip, roll, split, tile, tril, triu, unbind, unflatten
from minigrad.ops.take_along import take_along_dim
from minigrad.tensor import Tensor

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
    # Tensor methods that PyTorch also spells as functions (torch.argmax(x, 1), torch.reshape(x, s), ...)
    "argmax", "argmin", "all", "any", "reshape", "ravel", "squeeze", "unsqueeze", "transpose", "permute",
    "clone", "pow", "masked_fill", "index_add", "fliplr", "flipud", "msort", "sgn", "isposinf", "isneginf",
    # searching, counting and index generation: minigrad/ops/searching.py
    "bincount", "searchsorted", "bucketize", "isin", "tril_indices", "triu_indices",
    # scans beside cumsum/cumprod (ops/cumulative.py), differences (ops/differences.py), ops/math.py
    "cummax", "cummin", "logcumsumexp", "diff", "logit", "erfc",
    # splitting, gathering along a dim, diagonals and assembling: minigrad/ops/{splitting,take_along,
    # diagonal_forms,assembly}.py
    "tensor_split", "hsplit", "vsplit", "dsplit", "take_along_dim", "diag_embed", "diagflat", "block_diag",
    "atleast_1d", "atleast_2d", "atleast_3d", "row_stack", "cartesian_prod", "combinations", "vander",
    # torch.channel_shuffle (minigrad/nn/channel_shuffle.py)
    "channel_shuffle",
    # writes at indices: minigrad/ops/index_updates.py
    "index_fill", "index_copy", "masked_scatter", "scatter_reduce", "index_put", "index_put_",
    # statistics, products, integration, determinants: minigrad/ops/{statistics,products,integration,determinants}.py
    "aminmax", "nanmedian", "cov", "corrcoef", "histc", "inner", "vdot", "trapezoid", "cumulative_trapezoid",
    "det", "logdet", "slogdet", "matrix_power", "relu_", "selu_", "celu_", "threshold_", "rrelu_",
    "inverse", "cholesky", "pinverse",
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



# -- Tensor methods that PyTorch also spells as functions ---------------------------------------------
#
# Each is the method of the same name (one op, one gradient); the function only checks that it got a
# Tensor, so that torch.argmax(x, 1) and x.argmax(1) behave alike in a ported program.


def argmax(input, dim=None, keepdim=False):  # noqa: A002
    """Indices of the maxima of ``input`` (of all elements, flattened, or along ``dim``): ``Tensor.argmax``."""
    expect_tensor(input, "argmax")
    return input.argmax(dim, keepdim)


def argmin(input, dim=None, keepdim=False):  # noqa: A002
    """Indices of the minima of ``input`` (of all elements, flattened, or along ``dim``): ``Tensor.argmin``."""
    expect_tensor(input, "argmin")
    return input.argmin(dim, keepdim)


def all(input, dim=None, keepdim=False):  # noqa: A001, A002
    """True where every element of ``input`` is nonzero (over all, or along ``dim``): ``Tensor.all``."""
    expect_tensor(input, "all")
    return input.all(dim, keepdim)


def any(input, dim=None, keepdim=False):  # noqa: A001, A002
    """True where any element of ``input`` is nonzero (over all, or along ``dim``): ``Tensor.any``."""
    expect_tensor(input, "any")
    return input.any(dim, keepdim)


def reshape(input, shape):  # noqa: A002
    """``input`` with the same elements in ``shape`` (one entry may be -1): ``Tensor.reshape``."""
    expect_tensor(input, "reshape")
    return input.reshape(shape)


def ravel(input):  # noqa: A002
    """``input`` as a 1-D tensor (a view when its layout allows, else a copy)."""
    expect_tensor(input, "ravel")
    return input.reshape(-1)


def squeeze(input, dim=None):  # noqa: A002
    """``input`` without its size-1 dimensions (all, or only ``dim``): ``Tensor.squeeze``."""
    expect_tensor(input, "squeeze")
    return input.squeeze(dim)


def unsqueeze(input, dim):  # noqa: A002
    """``input`` with a size-1 dimension inserted at ``dim``: ``Tensor.unsqueeze``."""
    expect_tensor(input, "unsqueeze")
    return input.unsqueeze(dim)


def transpose(input, dim0, dim1):  # noqa: A002
    """``input`` with dimensions ``dim0`` and ``dim1`` swapped (a view): ``Tensor.transpose``."""
    expect_tensor(input, "transpose")
    return input.transpose(dim0, dim1)


def permute(input, dims):  # noqa: A002
    """``input`` with its dimensions reordered as ``dims`` (a view): ``Tensor.permute``."""
    expect_tensor(input, "permute")
    return input.permute(*dims)


def clone(input, *, memory_format=None):  # noqa: A002
    """A copy of ``input`` with its own memory, differentiable (``memory_format`` is accepted and ignored)."""
    expect_tensor(input, "clone")
    return input.clone()


def pow(input, exponent, *, out=None):  # noqa: A001, A002
    """``input ** exponent``, elementwise; either may be a number (``pow(2, t)``), not both.

    Raises:
        TypeError: neither argument is a Tensor.
    """
    if isinstance(input, Tensor):
        result = input.pow(exponent)
    elif isinstance(exponent, Tensor):
        result = exponent.__rpow__(input)
    else:
        raise TypeError(f"pow(): expects a Tensor base or exponent, got {type(input).__name__} and "
                        f"{type(exponent).__name__}")
    return result if out is None else math_forms.write_out(result, out, "pow")


def masked_fill(input, mask, value):  # noqa: A002
    """``input`` with ``value`` where the bool ``mask`` (broadcast) is true: ``Tensor.masked_fill``."""
    expect_tensor(input, "masked_fill")
    return input.masked_fill(mask, value)


def index_add(input, dim, index, source, *, alpha=1):  # noqa: A002
    """A copy of ``input`` with ``alpha * source`` added into the rows ``index`` along ``dim``: ``index_add_``."""
    expect_tensor(input, "index_add")
    return input.clone().index_add_(dim, index, source, alpha=alpha)


def fliplr(input):  # noqa: A002
    """``input`` with its columns (dim 1) in reverse order.

    Raises:
        RuntimeError: ``input`` has fewer than 2 dimensions, as PyTorch.
    """
    expect_tensor(input, "fliplr")
    if input.ndim < 2:
        raise RuntimeError(f"fliplr(): input must be >= 2-d, got shape {tuple(input.shape)}")
    return input.flip(1)


def flipud(input):  # noqa: A002
    """``input`` with its rows (dim 0) in reverse order.

    Raises:
        RuntimeError: ``input`` is 0-d, as PyTorch.
    """
    expect_tensor(input, "flipud")
    if input.ndim < 1:
        raise RuntimeError("flipud(): input must be >= 1-d, got a 0-d tensor")
    return input.flip(0)


def msort(input):  # noqa: A002
    """``input`` sorted along dim 0 (the values of ``sort(input, dim=0)``)."""
    expect_tensor(input, "msort")
    return input.sort(dim=0).values


def sgn(input):  # noqa: A002
    """The sign of each element of a real ``input`` (``sign``; minigrad's tensors are real here)."""
    expect_tensor(input, "sgn")
    if input.dtype.kind == "c":
        raise NotImplementedError("sgn(): complex inputs (x / |x|) are not supported by minigrad")
    return input.sign()


def isposinf(input):  # noqa: A002
    """True where ``input`` is +inf (a bool tensor; all False for integers)."""
    expect_tensor(input, "isposinf")
    return input.isinf() & (input > 0)


def isneginf(input):  # noqa: A002
    """True where ``input`` is -inf (a bool tensor; all False for integers)."""
    expect_tensor(input, "isneginf")
    return input.isinf() & (input < 0)
