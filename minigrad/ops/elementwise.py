"""Elementwise ops with NumPy broadcasting and PyTorch's type promotion.

Each op's forward works on arrays; its backward, on Tensors, sits right
below it and undoes broadcasting with ``unbroadcast``.

Binary ops compute in ``minigrad.promotion``'s result dtype (PyTorch's, not
NumPy's: ``float32 + int64`` is float32). ``promote_operands`` returns None
in the common case of one dtype on both sides (Add and Sub check for two
arrays of one dtype first, inline: their forward is the cheapest); otherwise
the forward uses the converted operands and keeps the inputs' dtypes
(``in_dtypes``), and the backward casts each input's gradient back to its
dtype. The floating functions (exp, log, sqrt, tanh, sigmoid) of integer or
bool tensors give the default float dtype, as in PyTorch: they are
``_FloatingFunction``s, like the rest of that family in ``math.py``.
"""

from __future__ import annotations

import numpy as np

from minigrad import backend
from minigrad.function import FunctionNode
from minigrad.ops._util import expect_tensor, shape_of, unbroadcast
from minigrad.ops.math import _FloatingFunction
from minigrad.promotion import promote_operands, result_type
from minigrad.tensor import Tensor

_ndarray = np.ndarray

# -- arithmetic ---------------------------------------------------------------


class Add(FunctionNode):
    """a + b"""

    in_dtypes = (None, None)  # the inputs' dtypes when promotion changed them (see the module docstring)

    def forward(self, a, b):
        if type(a) is _ndarray and type(b) is _ndarray and a.dtype is b.dtype:  # the hot path
            self.shapes = (a.shape, b.shape)
            return a + b
        self.shapes = (shape_of(a), shape_of(b))
        promoted = promote_operands(a, b)
        if promoted is not None:
            a, b, self.in_dtypes = promoted
        return a + b

    def backward(self, g):
        need_a, need_b = self.needs_input_grad
        (shape_a, shape_b), (dtype_a, dtype_b) = self.shapes, self.in_dtypes
        return (
            unbroadcast(g, shape_a, dtype_a) if need_a else None,
            unbroadcast(g, shape_b, dtype_b) if need_b else None,
        )


def _bool_sub_error() -> RuntimeError:
    # PyTorch's class (its kernel refuses the operands); a message that says what to use instead.
    return RuntimeError(
        "subtraction with a bool operand is not supported (as in PyTorch); "
        "use logical_xor or ~ for masks, or convert with .to(dtype)"
    )


class Sub(FunctionNode):
    """a - b (like PyTorch, not defined when either side is bool)"""

    in_dtypes = (None, None)

    def forward(self, a, b):
        if type(a) is _ndarray and type(b) is _ndarray and a.dtype is b.dtype:  # the hot path
            self.shapes = (a.shape, b.shape)
            try:
                return a - b
            except TypeError:  # NumPy refuses bool - bool
                raise _bool_sub_error() from None
        self.shapes = (shape_of(a), shape_of(b))
        promoted = promote_operands(a, b)
        if promoted is not None:
            if _is_bool(a) or _is_bool(b):
                raise _bool_sub_error()
            a, b, self.in_dtypes = promoted
        return a - b

    def backward(self, g):
        need_a, need_b = self.needs_input_grad
        (shape_a, shape_b), (dtype_a, dtype_b) = self.shapes, self.in_dtypes
        return (
            unbroadcast(g, shape_a, dtype_a) if need_a else None,
            unbroadcast(-g, shape_b, dtype_b) if need_b else None,
        )


class Mul(FunctionNode):
    """a * b"""

    in_dtypes = (None, None)

    def forward(self, a, b):
        self.retain_inputs((0, 1))
        promoted = promote_operands(a, b)
        if promoted is not None:
            a, b, self.in_dtypes = promoted
        return a * b

    def backward(self, g):
        a, b = self.saved_inputs
        need_a, need_b = self.needs_input_grad
        dtype_a, dtype_b = self.in_dtypes
        return (
            unbroadcast(g * b, shape_of(a), dtype_a) if need_a else None,
            unbroadcast(g * a, shape_of(b), dtype_b) if need_b else None,
        )


class Div(FunctionNode):
    """a / b (true division: integer operands give the default float dtype, as in PyTorch)"""

    in_dtypes = (None, None)

    def forward(self, a, b):
        self.retain_inputs((0, 1))
        promoted = promote_operands(a, b, True)  # true division
        if promoted is not None:
            a, b, self.in_dtypes = promoted
        return a / b

    def backward(self, g):
        a, b = self.saved_inputs
        need_a, need_b = self.needs_input_grad
        dtype_a, dtype_b = self.in_dtypes
        grad_a = g / b
        return (
            unbroadcast(grad_a, shape_of(a), dtype_a) if need_a else None,
            unbroadcast(-grad_a * a / b, shape_of(b), dtype_b) if need_b else None,
        )


class Pow(FunctionNode):
    """a ** b (either may be a Python number; for bools only ``mask ** True/False``, as in PyTorch).

    Like PyTorch, no gradient flows to the base where the exponent is 0, nor
    to the exponent where the base is 0 and the exponent >= 0 (where the
    formulas would give 0 * inf = nan); the same masks shape the second
    derivative.
    """

    in_dtypes = (None, None)

    def forward(self, a, b):
        self.retain_inputs((0, 1))
        if not isinstance(b, (int, float)):
            self.retain_outputs((0,))  # d(a**b)/db = a**b * log(a)
        promoted = promote_operands(a, b)
        if promoted is not None:
            a, b, self.in_dtypes = promoted
        out = a**b
        if out.dtype is _INT8 and _is_bool(a) and _is_bool(b):  # NumPy's bool ** bool is int8
            if type(b) is not bool:
                raise NotImplementedError(  # PyTorch's class
                    "pow is not implemented for bool operands (as in PyTorch); convert one with .to(dtype)"
                )
            out = a.copy() if b else self.xp.ones_like(a)  # PyTorch's mask ** True is mask, mask ** False ones
        return out

    def backward(self, g):
        a, b = self.saved_inputs
        need_a, need_b = self.needs_input_grad
        dtype_a, dtype_b = self.in_dtypes
        grad_a = grad_b = None
        if need_a:
            if isinstance(b, (int, float)):
                grad_a = g * 0 if b == 0 else g * (b * a ** (b - 1))
                grad_a = unbroadcast(grad_a, shape_of(a), dtype_a)
            else:
                with np.errstate(divide="ignore", invalid="ignore"):  # masked out below
                    grad = g * b * a ** (b - 1)
                grad_a = unbroadcast(where(self._mask(_data(b) == 0), 0.0, grad), shape_of(a), dtype_a)
        if need_b:
            (out,) = self.saved_outputs
            with np.errstate(divide="ignore", invalid="ignore"):  # masked out below
                grad = g * out * _log_of(a)
            zero_base = self._mask((_data(a) == 0) & (_data(b) >= 0))
            grad_b = unbroadcast(where(zero_base, 0.0, grad), shape_of(b), dtype_b)
        return grad_a, grad_b

    def _mask(self, cond):
        """``cond`` as a boolean array (it is a Python bool when both sides were numbers)."""
        return self.xp.asarray(cond, dtype=bool)


_INT8 = np.dtype(np.int8)


def _is_bool(x) -> bool:
    """True for a bool array or a Python/NumPy bool."""
    return isinstance(x, (bool, np.bool_)) or getattr(x, "dtype", None) == np.bool_


def _data(x):
    return x.array if isinstance(x, Tensor) else x


def _log_of(a):
    if isinstance(a, Tensor):
        return a.log()
    return float(np.log(a))


class Neg(FunctionNode):
    """-a"""

    def forward(self, a):
        try:
            return -a
        except TypeError:  # NumPy refuses -bool; PyTorch's class is RuntimeError
            raise RuntimeError(
                "negation, the - operator, is not supported for bool tensors (as in PyTorch); "
                "use ~ or logical_not to invert a mask"
            ) from None

    def backward(self, g):
        return -g


# -- pointwise functions --------------------------------------------------------


class Exp(_FloatingFunction, function="exp", of_output=True):
    """e ** a"""

    def derivative(self, g, y):
        return g * y


class Log(_FloatingFunction, function="log"):
    """natural logarithm"""

    def derivative(self, g, a):
        return g / a


class Sqrt(_FloatingFunction, function="sqrt", of_output=True):
    """square root"""

    def derivative(self, g, y):
        return g / (2 * y)


class Tanh(_FloatingFunction, function="tanh", of_output=True):
    """hyperbolic tangent"""

    def derivative(self, g, y):
        return g * (1 - y * y)


class Sigmoid(_FloatingFunction, of_output=True):
    """1 / (1 + e**-a), computed without overflow"""

    def compute(self, a):
        xp = self.xp
        # exp of a non-positive number never overflows.
        e = xp.exp(-xp.abs(a))
        return xp.where(a >= 0, 1 / (1 + e), e / (1 + e)).astype(a.dtype, copy=False)

    def derivative(self, g, y):
        return g * y * (1 - y)


class ReLU(FunctionNode):
    """max(a, 0) as PyTorch computes it: +0 where a < 0 (``a * (a > 0)`` would give -0, and 1/x -inf), NaN kept;
    the gradient passes where a is not <= 0 (so through NaN, not at 0). One difference: -0 gives +0
    (PyTorch keeps -0; NumPy's masked writes that would keep it cost 10x here)."""

    def forward(self, a):
        if a.dtype == bool:
            raise RuntimeError("relu: Boolean inputs are not supported (as in PyTorch); convert with .to(dtype)")
        self.mask = ~(a <= 0)
        return self.xp.maximum(a, a.dtype.type(0))

    def backward(self, g):
        return g * self.mask


class Abs(FunctionNode):
    """|a| (gradient 0 at 0, like PyTorch)"""

    def forward(self, a):
        try:
            self.sign = self.xp.sign(a)
        except TypeError:  # NumPy has no sign for bool; PyTorch's class for a dtype without a kernel
            raise NotImplementedError(
                "abs: not implemented for bool tensors (as in PyTorch); convert with .to(dtype)"
            ) from None
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
    Python numbers: PyTorch's tensor bounds are not supported. The result has
    the promoted dtype of ``a`` and the bounds (an integer tensor clamped with
    a float bound gives the default float dtype).

    Raises:
        RuntimeError: both bounds are None, as PyTorch.
        TypeError: ``a`` is not a Tensor or a bound is not a number.
    """
    expect_tensor(a, "clamp")
    if min is None and max is None:
        raise RuntimeError("clamp: at least one of min and max must be given")
    for name, bound in (("min", min), ("max", max)):
        if bound is not None and not isinstance(bound, (int, float, np.number)):
            raise TypeError(f"clamp: {name} must be a number or None, got {type(bound).__name__}")
    if a.dtype.kind not in "fc":  # an integer tensor with a float bound is clamped as a float, as in PyTorch
        dtype = result_type(a, *(bound for bound in (min, max) if bound is not None))
        if dtype != a.dtype:
            a = Cast(dtype)(a)
    return Clamp(min, max)(a)


class Where(FunctionNode):
    """cond ? a : b (cond is not differentiated); a and b promoted like the operands of a + b"""

    in_dtypes = (None, None)

    def forward(self, cond, a, b):
        self.cond = cond
        self.shapes = (shape_of(a), shape_of(b))
        promoted = promote_operands(a, b)
        if promoted is not None:
            a, b, self.in_dtypes = promoted
        return self.xp.where(cond, a, b)

    def backward(self, g):
        _, need_a, need_b = self.needs_input_grad
        (shape_a, shape_b), (dtype_a, dtype_b) = self.shapes, self.in_dtypes
        zero = self.xp.zeros((), dtype=g.dtype)
        return (
            None,
            unbroadcast(where(self.cond, g, zero), shape_a, dtype_a) if need_a else None,
            unbroadcast(where(self.cond, zero, g), shape_b, dtype_b) if need_b else None,
        )


def where(condition, a, b):
    """Elementwise ``a`` where ``condition`` is true, else ``b`` (broadcasting).

    The result has ``minigrad.result_type(a, b)``, as in PyTorch: a Python
    number beside a tensor counts by its category only
    (``where(c, float16 tensor, 0.0)`` is float16, ``where(c, int tensor, 0.5)``
    the default float dtype), and two numbers give their own promoted dtype.

    Raises:
        TypeError: ``condition`` is not a tensor, or ``a``/``b`` is neither a
            Tensor (or array) nor a number.
        RuntimeError: ``condition`` is a tensor that is not boolean, or the
            shapes do not broadcast, as PyTorch.
    """
    cond = condition.array if isinstance(condition, Tensor) else condition
    if getattr(cond, "dtype", None) is None or cond.dtype != np.bool_:
        cond_dtype = getattr(cond, "dtype", None)
        kind = TypeError if cond_dtype is None or not backend.is_array(cond) else RuntimeError
        raise kind(f"where: condition must be a boolean tensor, got {cond_dtype or type(cond).__name__}")
    for name, value in (("input", a), ("other", b)):
        if not isinstance(value, (Tensor, int, float, complex, np.number, np.bool_)) and not backend.is_array(value):
            raise TypeError(f"where: {name} must be a Tensor or a number, got {type(value).__name__}")
    return Where()(cond, _python_number(a), _python_number(b))


def masked_fill(input, mask, value):  # noqa: A002  (PyTorch's name)
    """``input`` with ``value`` where the boolean ``mask`` is true, in ``input``'s dtype (PyTorch's masked_fill).

    Unlike ``where``, nothing is promoted: ``value`` is converted to the
    input's dtype first, as PyTorch does (0.7 fills an integer tensor with 0,
    a float64 0-d tensor fills a float32 one in float32). A 0-d Tensor value
    receives a gradient.

    Raises:
        TypeError: ``input`` is not a Tensor, or ``value`` is neither a number nor a Tensor.
        RuntimeError: ``mask`` is a tensor that is not boolean, its shape does not broadcast,
            a Tensor ``value`` is not 0-d, or the value does not fit
            the input's dtype (PyTorch's overflow error: 300 into int8, nan into int64).
    """
    expect_tensor(input, "masked_fill")
    dtype = input.dtype
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError(f"masked_fill: value must be a 0-d tensor, got one of shape {value.shape}")
        if value.dtype != dtype:
            value = Cast(dtype)(value)
    elif isinstance(value, (int, float, complex, np.number, np.bool_)):
        value = _number_in(value, dtype)
    else:
        raise TypeError(f"masked_fill: value must be a number or a 0-d Tensor, got {type(value).__name__}")
    return where(mask, value, input)


def _number_in(value, dtype: np.dtype):
    """The number ``value`` converted to ``dtype`` as PyTorch converts a fill value (see ``masked_fill``)."""
    value = complex(value) if isinstance(value, (complex, np.complexfloating)) else value
    if dtype.kind == "b":
        return bool(value)
    if isinstance(value, complex):
        if dtype.kind != "c" and value.imag != 0:
            raise RuntimeError(f"masked_fill: value {value} cannot be converted to {dtype} without overflow")
        value = value if dtype.kind == "c" else value.real
    if dtype.kind in "iu":
        limit = np.iinfo(dtype)
        low = -int(limit.max) if dtype.kind == "u" else int(limit.min)  # PyTorch lets -1 wrap into uint8
        fits = np.isfinite(value) and low <= value <= int(limit.max)
    elif dtype.kind == "f":
        fits = not np.isfinite(value) or abs(value) <= float(np.finfo(dtype).max)
    else:
        fits = True
    if not fits:
        raise RuntimeError(f"masked_fill: value {value} cannot be converted to {dtype} without overflow")
    return np.asarray(value).astype(dtype)[()].item()


def _python_number(value):
    """A NumPy scalar given by the user as the Python number it counts as in promotion (see ``promotion``)."""
    return value.item() if isinstance(value, np.generic) else value


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
