"""Elementwise ops with NumPy broadcasting: arithmetic and pointwise functions.

Each op's forward works on arrays; its backward, on Tensors, sits right
below it and undoes broadcasting with ``unbroadcast``.
"""

from __future__ import annotations

import numpy as np

from minigrad import backend
from minigrad.function import FunctionNode
from minigrad.ops._util import expect_tensor, shape_of, unbroadcast
from minigrad.tensor import Tensor

# -- arithmetic ---------------------------------------------------------------


class Add(FunctionNode):
    """a + b"""

    def forward(self, a, b):
        self.shapes = (shape_of(a), shape_of(b))
        return a + b

    def backward(self, g):
        need_a, need_b = self.needs_input_grad
        return (
            unbroadcast(g, self.shapes[0]) if need_a else None,
            unbroadcast(g, self.shapes[1]) if need_b else None,
        )


class Sub(FunctionNode):
    """a - b"""

    def forward(self, a, b):
        self.shapes = (shape_of(a), shape_of(b))
        return a - b

    def backward(self, g):
        need_a, need_b = self.needs_input_grad
        return (
            unbroadcast(g, self.shapes[0]) if need_a else None,
            unbroadcast(-g, self.shapes[1]) if need_b else None,
        )


class Mul(FunctionNode):
    """a * b"""

    def forward(self, a, b):
        self.retain_inputs((0, 1))
        return a * b

    def backward(self, g):
        a, b = self.saved_inputs
        need_a, need_b = self.needs_input_grad
        return (
            unbroadcast(g * b, shape_of(a)) if need_a else None,
            unbroadcast(g * a, shape_of(b)) if need_b else None,
        )


class Div(FunctionNode):
    """a / b"""

    def forward(self, a, b):
        self.retain_inputs((0, 1))
        return a / b

    def backward(self, g):
        a, b = self.saved_inputs
        need_a, need_b = self.needs_input_grad
        grad_a = g / b
        return (
            unbroadcast(grad_a, shape_of(a)) if need_a else None,
            unbroadcast(-grad_a * a / b, shape_of(b)) if need_b else None,
        )


class Pow(FunctionNode):
    """a ** b (either may be a Python number).

    Like PyTorch, no gradient flows to the base where the exponent is 0, nor
    to the exponent where the base is 0 and the exponent >= 0 (where the
    formulas would give 0 * inf = nan); the same masks shape the second
    derivative.
    """

    def forward(self, a, b):
        self.retain_inputs((0, 1))
        if not isinstance(b, (int, float)):
            self.retain_outputs((0,))  # d(a**b)/db = a**b * log(a)
        return a**b

    def backward(self, g):
        a, b = self.saved_inputs
        need_a, need_b = self.needs_input_grad
        grad_a = grad_b = None
        if need_a:
            if isinstance(b, (int, float)):
                grad_a = g * 0 if b == 0 else g * (b * a ** (b - 1))
            else:
                with np.errstate(divide="ignore", invalid="ignore"):  # masked out below
                    grad = g * b * a ** (b - 1)
                grad_a = unbroadcast(where(self._mask(_data(b) == 0), 0.0, grad), shape_of(a))
        if need_b:
            (out,) = self.saved_outputs
            with np.errstate(divide="ignore", invalid="ignore"):  # masked out below
                grad = g * out * _log_of(a)
            zero_base = self._mask((_data(a) == 0) & (_data(b) >= 0))
            grad_b = unbroadcast(where(zero_base, 0.0, grad), shape_of(b))
        return grad_a, grad_b

    def _mask(self, cond):
        """``cond`` as a boolean array (it is a Python bool when both sides were numbers)."""
        return self.xp.asarray(cond, dtype=bool)


def _data(x):
    return x.data if isinstance(x, Tensor) else x


def _log_of(a):
    if isinstance(a, Tensor):
        return a.log()
    return float(np.log(a))


class Neg(FunctionNode):
    """-a"""

    def forward(self, a):
        return -a

    def backward(self, g):
        return -g


# -- pointwise functions --------------------------------------------------------


class Exp(FunctionNode):
    """e ** a"""

    def forward(self, a):
        self.retain_outputs((0,))
        return self.xp.exp(a)

    def backward(self, g):
        (y,) = self.saved_outputs
        return g * y


class Log(FunctionNode):
    """natural logarithm"""

    def forward(self, a):
        self.retain_inputs((0,))
        return self.xp.log(a)

    def backward(self, g):
        (a,) = self.saved_inputs
        return g / a


class Sqrt(FunctionNode):
    """square root"""

    def forward(self, a):
        self.retain_outputs((0,))
        return self.xp.sqrt(a)

    def backward(self, g):
        (y,) = self.saved_outputs
        return g / (2 * y)


class Tanh(FunctionNode):
    """hyperbolic tangent"""

    def forward(self, a):
        self.retain_outputs((0,))
        return self.xp.tanh(a)

    def backward(self, g):
        (y,) = self.saved_outputs
        return g * (1 - y * y)


class Sigmoid(FunctionNode):
    """1 / (1 + e**-a), computed without overflow"""

    def forward(self, a):
        self.retain_outputs((0,))
        xp = self.xp
        # exp of a non-positive number never overflows.
        e = xp.exp(-xp.abs(a))
        return xp.where(a >= 0, 1 / (1 + e), e / (1 + e)).astype(a.dtype, copy=False)

    def backward(self, g):
        (y,) = self.saved_outputs
        return g * y * (1 - y)


class ReLU(FunctionNode):
    """max(a, 0)"""

    def forward(self, a):
        self.mask = a > 0
        return a * self.mask

    def backward(self, g):
        return g * self.mask


class Abs(FunctionNode):
    """|a| (gradient 0 at 0, like PyTorch)"""

    def forward(self, a):
        self.sign = self.xp.sign(a)
        return self.xp.abs(a)

    def backward(self, g):
        return g * self.sign


class Clamp(FunctionNode):
    """a clipped into [low, high]; gradient passes where low <= a <= high"""

    def __init__(self, low, high):
        self.low = low
        self.high = high

    def forward(self, a):
        xp = self.xp
        mask = None
        if self.low is not None:
            mask = a >= self.low
        if self.high is not None:
            upper = a <= self.high
            mask = upper if mask is None else mask & upper
        self.mask = mask
        return xp.clip(a, self.low, self.high).astype(a.dtype, copy=False)

    def backward(self, g):
        return g * self.mask


def clamp(a, min=None, max=None):  # noqa: A002  (PyTorch's names)
    """Clip ``a`` into [min, max] (either bound may be None).

    The gradient passes where ``min <= a <= max``, as in PyTorch. Bounds are
    Python numbers: PyTorch's tensor bounds are not supported.

    Raises:
        ValueError: both bounds are None.
        TypeError: ``a`` is not a Tensor or a bound is not a number.
    """
    expect_tensor(a, "clamp")
    if min is None and max is None:
        raise ValueError("clamp: at least one of min and max must be given")
    for name, bound in (("min", min), ("max", max)):
        if bound is not None and not isinstance(bound, (int, float, np.number)):
            raise TypeError(f"clamp: {name} must be a number or None, got {type(bound).__name__}")
    return Clamp(min, max)(a)


class Where(FunctionNode):
    """cond ? a : b (cond is not differentiated)"""

    def forward(self, cond, a, b):
        self.cond = cond
        self.shapes = (shape_of(a), shape_of(b))
        out = self.xp.where(cond, a, b)
        return out

    def backward(self, g):
        _, need_a, need_b = self.needs_input_grad
        zero = self.xp.zeros((), dtype=g.dtype)
        return (
            None,
            unbroadcast(where(self.cond, g, zero), self.shapes[0]) if need_a else None,
            unbroadcast(where(self.cond, zero, g), self.shapes[1]) if need_b else None,
        )


def where(condition, a, b):
    """Elementwise ``a`` where ``condition`` is true, else ``b`` (broadcasting).

    Raises:
        TypeError: ``condition`` is not boolean, or ``a``/``b`` is neither a
            Tensor (or array) nor a number.
    """
    cond = condition.data if isinstance(condition, Tensor) else condition
    if getattr(cond, "dtype", None) is None or cond.dtype != np.bool_:
        cond_dtype = getattr(cond, "dtype", type(cond).__name__)
        raise TypeError(f"where: condition must be a boolean tensor, got {cond_dtype}")
    for name, value in (("input", a), ("other", b)):
        if not isinstance(value, (Tensor, int, float, np.number, np.bool_)) and not backend.is_array(value):
            raise TypeError(f"where: {name} must be a Tensor or a number, got {type(value).__name__}")
    if not isinstance(a, Tensor) and isinstance(b, Tensor):
        a = _scalar_like(a, b)
    elif not isinstance(b, Tensor) and isinstance(a, Tensor):
        b = _scalar_like(b, a)
    return Where()(cond, a, b)


def _scalar_like(value, like):
    if isinstance(value, (int, float)):
        return like.data.dtype.type(value)
    return value


class Cast(FunctionNode):
    """a converted to another dtype; the gradient is converted back"""

    def __init__(self, dtype):
        self.dtype = np.dtype(dtype)

    def forward(self, a):
        self.in_dtype = a.dtype
        return a.astype(self.dtype)

    def backward(self, g):
        return Cast(self.in_dtype)(g)


class Clone(FunctionNode):
    """a copy of a with its own memory"""

    def forward(self, a):
        return a.copy()

    def backward(self, g):
        return g
