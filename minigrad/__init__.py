"""minigrad: a small, readable, tape-based autograd engine on NumPy (CPU) and CuPy (GPU).

The public API mirrors PyTorch's names and behaviour::

    import minigrad as mg
    x = mg.randn(3, 4, requires_grad=True)
    y = (x @ x.T).tanh().sum()
    y.backward()
    x.grad  # dy/dx
"""

from minigrad.tensor import Tensor  # noqa: I001  (must come first: the modules below build on it)
from minigrad import backend
from minigrad.backend import manual_seed
from minigrad.factory import (
    arange,
    as_tensor,
    bool_,
    empty,
    float16,
    float32,
    float64,
    from_numpy,
    full,
    full_like,
    int32,
    int64,
    linspace,
    long,
    ones,
    ones_like,
    rand,
    randint,
    randn,
    randperm,
    tensor,
    zeros,
    zeros_like,
)
from minigrad.grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from minigrad.promotion import get_default_dtype, promote_types, result_type
from minigrad.functions import (
    abs,
    cat,
    clamp,
    exp,
    log,
    matmul,
    max,
    mean,
    min,
    relu,
    sigmoid,
    sqrt,
    stack,
    sum,
    tanh,
    where,
)
from minigrad.functions import (  # the ops of PyTorch's tutorials: ops/math.py, sorting.py, scan.py, ...
    acos,
    acosh,
    allclose,
    arccos,
    arccosh,
    arcsin,
    arcsinh,
    arctan,
    arctan2,
    arctanh,
    argsort,
    asin,
    asinh,
    atan,
    atan2,
    atanh,
    bitwise_and,
    bitwise_not,
    bitwise_or,
    bitwise_xor,
    ceil,
    chunk,
    cos,
    cosh,
    cumprod,
    cumsum,
    diagonal,
    einsum,
    eq,
    equal,
    erf,
    erfinv,
    exp2,
    expm1,
    fix,
    flatten,
    flip,
    floor,
    floor_divide,
    fmod,
    gather,
    ge,
    greater,
    greater_equal,
    gt,
    index_select,
    isclose,
    isfinite,
    isinf,
    isnan,
    kthvalue,
    le,
    less,
    less_equal,
    log10,
    log1p,
    log2,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    lt,
    maximum,
    minimum,
    ne,
    not_equal,
    reciprocal,
    remainder,
    roll,
    round,
    rsqrt,
    scatter,
    scatter_add,
    sign,
    sin,
    sinh,
    sort,
    split,
    square,
    tan,
    tile,
    topk,
    tril,
    triu,
    trunc,
    unbind,
    unflatten,
)
from minigrad import autograd, engine, ops
from minigrad import nn, optim
from minigrad.serialization import load, save
from minigrad.generator import Generator
from minigrad import utils
from minigrad.promotion import set_default_dtype
from minigrad.device import device, get_default_device, set_default_device
from minigrad.dtypes import (  # PyTorch's dtype names (NumPy dtypes): mg.float, mg.long, mg.cfloat, ...
    bool,
    cdouble,
    cfloat,
    complex64,
    complex128,
    double,
    dtype,
    finfo,
    float,
    half,
    iinfo,
    int,
    int8,
    int16,
    is_complex,
    is_floating_point,
    short,
    uint8,
    uint16,
    uint32,
    uint64,
)
from minigrad.legacy_tensors import (
    BoolTensor,
    ByteTensor,
    CharTensor,
    DoubleTensor,
    FloatTensor,
    HalfTensor,
    IntTensor,
    LongTensor,
    ShortTensor,
)
from minigrad import accelerator, cuda, futures

__version__ = "0.1.0"

__all__ = [
    "Tensor", "backend", "manual_seed", "tensor", "as_tensor", "zeros", "ones", "empty", "full",
    "zeros_like", "ones_like", "full_like", "randn", "rand", "randint", "randperm", "arange",
    "linspace", "float16", "float32", "float64", "int32", "int64", "long", "bool_", "no_grad",
    "enable_grad", "is_grad_enabled", "set_grad_enabled", "abs", "cat", "clamp", "exp", "log",
    "matmul", "max", "mean", "min", "relu", "sigmoid", "sqrt", "stack", "sum", "tanh", "where",
    "autograd", "engine", "ops", "nn", "optim", "save", "load", "get_default_dtype", "promote_types",
    "result_type",
    "Generator", "utils", "from_numpy",
]

# The ops of PyTorch's tutorials (minigrad/functions.py, second part).
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

# Devices, dtypes and PyTorch's other everyday names (device.py, dtypes.py, legacy_tensors.py, cuda.py, ...).
__all__ += [
    "device", "get_default_device", "set_default_device", "set_default_dtype", "dtype", "float", "double",
    "half", "bool", "int", "short", "int8", "int16", "uint8", "uint16", "uint32", "uint64", "complex64",
    "complex128", "cfloat", "cdouble", "finfo", "iinfo", "is_floating_point", "is_complex", "FloatTensor",
    "DoubleTensor", "HalfTensor", "LongTensor", "IntTensor", "ShortTensor", "CharTensor", "ByteTensor",
    "BoolTensor", "accelerator", "cuda", "futures",
]
