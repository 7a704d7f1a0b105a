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
from minigrad import autograd, engine, ops
from minigrad import nn, optim
from minigrad.serialization import load, save
from minigrad.generator import Generator
from minigrad import utils

__version__ = "0.1.0"

__all__ = [
    "Tensor", "backend", "manual_seed", "tensor", "as_tensor", "zeros", "ones", "empty", "full",
    "zeros_like", "ones_like", "full_like", "randn", "rand", "randint", "randperm", "arange",
    "linspace", "float16", "float32", "float64", "int32", "int64", "long", "bool_", "no_grad",
    "enable_grad", "is_grad_enabled", "set_grad_enabled", "abs", "cat", "clamp", "exp", "log",
    "matmul", "max", "mean", "min", "relu", "sigmoid", "sqrt", "stack", "sum", "tanh", "where",
    "autograd", "engine", "ops", "nn", "optim", "save", "load",
    "Generator", "utils",
]
