"""Elementwise math beyond ``elementwise.py``: trigonometric, hyperbolic, exponential and
logarithmic functions, rounding, ``maximum``/``minimum``, ``atan2``, ``remainder``, ``fmod`` and
``floor_divide``; and the comparisons, logical and bitwise ops, which record nothing.

Each op's forward works on arrays; its backward, on Tensors, sits right below it and is written
with recorded ops, so second derivatives come for free.

dtypes follow PyTorch:

* the floating functions (``sin`` ... ``erfinv``, ``reciprocal``, ``rsqrt``) of integer or bool
  tensors give the default float dtype;
* ``square``, ``sign`` and the rounding ops keep integer dtypes (``sign`` of a bool tensor is
  itself; rounding a bool tensor raises NotImplementedError, as in PyTorch);
* binary ops compute in ``promotion``'s result dtype (``atan2`` of integers in the default float
  dtype), and each input's gradient comes back in that input's dtype.

The rounding ops and ``sign`` are recorded with a zero gradient, as PyTorch records them;
``floor_divide`` is recorded too, and its backward raises, as PyTorch's does.
"""

from __future__ import annotations

import math

import numpy as np

from minigrad import backend
from minigrad.function import FunctionNode
from minigrad.inplace import check_castable
from minigrad.ops._util import expect_tensor, shape_of, unbroadcast
from minigrad.promotion import get_default_dtype, promote_operands, result_type
from minigrad.tensor import Tensor

_LN2 = math.log(2.0)
_LN10 = math.log(10.0)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_SQRT_PI_OVER_TWO = math.sqrt(math.pi) / 2.0


def _floating(a):
    """``a`` as the array a floating function computes on: integers and bools become the default float dtype."""
    kind = a.dtype.kind
    if kind == "f" or kind == "c":
        return a
    return a.astype(get_default_dtype())


def _const(xp, array) -> Tensor:
    """A constant (unrecorded) Tensor wrapping ``array``."""
    return Tensor._make(xp.asarray(array), False, None, 0)


# -- floating functions of one tensor --------------------------------------------------------


class _FloatingFunction(FunctionNode):
    """A function of one tensor computed in floating point (integers and bools give the default float dtype).

    A subclass names its NumPy/CuPy ufunc in the class statement and writes
    ``derivative(g, x)``: the gradient for ``g``, with recorded ops, where
    ``x`` is the saved input (the output with ``of_output=True``)::

        class Sin(_FloatingFunction, function="sin"):
            def derivative(self, g, a):
                return g * Cos()(a)

    ``partial=True``: outside its domain the function is NaN or -inf,
    silently, as in PyTorch. A subclass may override ``compute(a)`` where
    the value is not a single ufunc call.
    """

    function = ""
    of_output = False
    partial = False

    def __init_subclass__(cls, function: str | None = None, of_output: bool | None = None,
                          partial: bool | None = None, **kwargs):
        super().__init_subclass__(**kwargs)
        # What the class statement leaves out is inherited (``class Log10(Log2, function="log10")``).
        if function is not None:
            cls.function = function
        if of_output is not None:
            cls.of_output = of_output
        if partial is not None:
            cls.partial = partial

    def forward(self, a):
        if self.of_output:
            self.retain_outputs((0,))
        else:
            self.retain_inputs((0,))
        if self.partial:
            with np.errstate(divide="ignore", invalid="ignore"):
                return self.compute(_floating(a))
        return self.compute(_floating(a))

    def compute(self, a):
        """The function's value on the floating array ``a``."""
        return getattr(self.xp, self.function)(a)

    def backward(self, g):
        (x,) = self.saved_outputs if self.of_output else self.saved_inputs
        return self.derivative(g, x)

    def derivative(self, g, x):
        """The gradient of the input for the output gradient ``g`` (``x``: the saved input or output)."""
        raise NotImplementedError(f"{type(self).__name__} must define derivative(g, x)")


class Sin(_FloatingFunction, function="sin"):
    """sin(a)"""

    def derivative(self, g, a):
        return g * Cos()(a)


class Cos(_FloatingFunction, function="cos"):
    """cos(a)"""

    def derivative(self, g, a):
        return -(g * Sin()(a))


class Tan(_FloatingFunction, function="tan", of_output=True):
    """tan(a); d/da = 1 + tan(a)**2"""

    def derivative(self, g, y):
        return g * (1 + y * y)


class Asin(_FloatingFunction, function="arcsin", partial=True):
    """arcsin(a); d/da = 1 / sqrt(1 - a**2)"""

    def derivative(self, g, a):
        return g * Rsqrt()(1 - a * a)


class Acos(_FloatingFunction, function="arccos", partial=True):
    """arccos(a); d/da = -1 / sqrt(1 - a**2)"""

    def derivative(self, g, a):
        return -(g * Rsqrt()(1 - a * a))


class Atan(_FloatingFunction, function="arctan"):
    """arctan(a); d/da = 1 / (1 + a**2)"""

    def derivative(self, g, a):
        return g / (1 + a * a)


class Sinh(_FloatingFunction, function="sinh"):
    """sinh(a)"""

    def derivative(self, g, a):
        return g * Cosh()(a)


class Cosh(_FloatingFunction, function="cosh"):
    """cosh(a)"""

    def derivative(self, g, a):
        return g * Sinh()(a)


class Asinh(_FloatingFunction, function="arcsinh"):
    """arsinh(a); d/da = 1 / sqrt(a**2 + 1)"""

    def derivative(self, g, a):
        return g * Rsqrt()(a * a + 1)


class Acosh(_FloatingFunction, function="arccosh", partial=True):
    """arcosh(a) (NaN below 1); d/da = 1 / sqrt(a**2 - 1)"""

    def derivative(self, g, a):
        return g * Rsqrt()(a * a - 1)


class Atanh(_FloatingFunction, function="arctanh", partial=True):
    """artanh(a) (NaN outside [-1, 1]); d/da = 1 / (1 - a**2)"""

    def derivative(self, g, a):
        return g / (1 - a * a)


# -- exponentials, logarithms, powers ---------------------------------------------------------


class Exp2(_FloatingFunction, function="exp2", of_output=True):
    """2 ** a"""

    def derivative(self, g, y):
        return g * y * _LN2


class Expm1(_FloatingFunction, function="expm1", of_output=True):
    """e ** a - 1, accurate for small a"""

    def derivative(self, g, y):
        return g * (y + 1)


class Log2(_FloatingFunction, function="log2", partial=True):
    """base-2 logarithm; d/da = 1 / (a ln 2)"""

    ln_base = _LN2

    def derivative(self, g, a):
        return g / (a * self.ln_base)


class Log10(Log2, function="log10"):
    """base-10 logarithm; d/da = 1 / (a ln 10)"""

    ln_base = _LN10


class Log1p(_FloatingFunction, function="log1p", partial=True):
    """log(1 + a), accurate for small a"""

    def derivative(self, g, a):
        return g / (a + 1)


class Rsqrt(_FloatingFunction, of_output=True, partial=True):
    """1 / sqrt(a) (inf at 0 and NaN below, as in PyTorch); d/da = -y**3 / 2"""

    def compute(self, a):
        return 1 / self.xp.sqrt(a)

    def derivative(self, g, y):
        return g * (y * y * y) * -0.5


class Reciprocal(_FloatingFunction, of_output=True, partial=True):
    """1 / a; d/da = -y**2"""

    def compute(self, a):
        return 1 / a

    def derivative(self, g, y):
        return -(g * (y * y))


class Square(FunctionNode):
    """a * a (integer tensors stay integer; bool gives int64, as in PyTorch)"""

    def forward(self, a):
        self.retain_inputs((0,))
        if a.dtype.kind == "b":
            a = a.astype(np.int64)
        return a * a

    def backward(self, g):
        (a,) = self.saved_inputs
        return g * (2 * a)


class Erf(_FloatingFunction):
    """the error function; d/da = 2 / sqrt(pi) * exp(-a**2)"""

    def compute(self, a):
        return backend.erf(a)

    def derivative(self, g, a):
        return g * _TWO_OVER_SQRT_PI * (-(a * a)).exp()


class Erfinv(_FloatingFunction, of_output=True):
    """the inverse error function (+-inf at +-1, NaN outside [-1, 1]); d/dy = sqrt(pi) / 2 * exp(x**2)"""

    def compute(self, a):
        return erfinv_array(a)

    def derivative(self, g, x):
        return g * _SQRT_PI_OVER_TWO * (x * x).exp()


_WINITZKI = 0.147  # the constant of Winitzki's closed-form approximation of erfinv


def erfinv_array(y):
    """The inverse error function of a float array (NumPy or CuPy), in ``y``'s dtype.

    Computed in float64: Winitzki's closed form (relative error about 2e-3)
    refined by three Halley steps on ``erf(x) = y``, each of which cubes the
    relative error, so the result is exact to rounding except within about
    1e-6 of +-1, where ``erf`` itself saturates.
    """
    xp = backend.get_array_module(y)
    y64 = y.astype(np.float64)
    inside = xp.abs(y64) < 1
    yc = xp.where(inside, y64, 0.0)
    log_term = xp.log1p(-yc * yc)
    t = 2 / (math.pi * _WINITZKI) + log_term / 2
    x = xp.sign(yc) * xp.sqrt(xp.sqrt(t * t - log_term / _WINITZKI) - t)
    for _ in range(3):
        u = (backend.erf(x) - yc) / (_TWO_OVER_SQRT_PI * xp.exp(-x * x))
        x = x - u / (1 + x * u)
    edge = xp.where(xp.abs(y64) == 1, xp.copysign(np.inf, y64), np.nan)  # NaN input stays NaN
    return xp.where(inside, x, edge).astype(y.dtype, copy=False)


# -- rounding and sign: recorded with a zero gradient, as in PyTorch ------------------------------


class _ZeroGradient(FunctionNode):
    """A piecewise-constant function: its gradient is zero (where it exists), as PyTorch records it."""

    def backward(self, g):
        return _const(self.xp, self.xp.zeros_like(g.array))


def _no_bool(a, fn: str) -> None:
    if a.dtype.kind == "b":
        raise NotImplementedError(f"{fn}: not implemented for bool tensors (as in PyTorch); convert with .to(dtype)")


class Sign(_ZeroGradient):
    """-1, 0 or 1 by the sign of a (0 for NaN, as in PyTorch; a bool tensor is its own sign)"""

    def forward(self, a):
        kind = a.dtype.kind
        if kind == "b":
            return a.copy()
        if kind in "iu":
            return self.xp.sign(a)
        return self.xp.where(self.xp.isnan(a), 0, self.xp.sign(a))


class Floor(_ZeroGradient):
    """the largest integer <= a (integer tensors are copied)"""

    def forward(self, a):
        _no_bool(a, "floor")
        return a.copy() if a.dtype.kind in "iu" else self.xp.floor(a)


class Ceil(_ZeroGradient):
    """the smallest integer >= a (integer tensors are copied)"""

    def forward(self, a):
        _no_bool(a, "ceil")
        return a.copy() if a.dtype.kind in "iu" else self.xp.ceil(a)


class Trunc(_ZeroGradient):
    """a rounded toward zero (integer tensors are copied)"""

    def forward(self, a):
        _no_bool(a, "trunc")
        return a.copy() if a.dtype.kind in "iu" else self.xp.trunc(a)


class Round(_ZeroGradient):
    """a rounded to ``decimals`` decimal places, halves to even (PyTorch's rule and its arithmetic)"""

    def __init__(self, decimals=None):
        self.decimals = decimals  # None: not given (PyTorch rounds integer tensors only then)

    def forward(self, a):
        _no_bool(a, "round")
        xp, decimals = self.xp, self.decimals
        if a.dtype.kind in "iu":
            if decimals is not None:
                raise NotImplementedError("round: decimals is not implemented for integer tensors (as in PyTorch)")
            return a.copy()
        if not decimals:
            return xp.rint(a)
        # Like PyTorch: scale by 10**|decimals| (in the tensor's dtype), round to even, scale back. A scale
        # past the dtype's range is inf, which gives NaN (PyTorch's result too), not an OverflowError.
        with np.errstate(over="ignore", invalid="ignore"):
            scale = a.dtype.type(np.power(10.0, float(abs(decimals))))
            if decimals > 0:
                return xp.rint(a * scale) / scale
            return xp.rint(a / scale) * scale


# -- binary functions ------------------------------------------------------------------------------------


def _promote(node, a, b, true_divide=False):
    """The operands of ``node`` converted to PyTorch's result dtype (``node.in_dtypes`` set when cast)."""
    promoted = promote_operands(a, b, true_divide)
    if promoted is None:
        return a, b
    a, b, node.in_dtypes = promoted
    return a, b


def _dtype_of(a, b) -> np.dtype:
    """The dtype of ``a op b`` once the operands are promoted (one of them is an array)."""
    dtype = getattr(a, "dtype", None)
    return dtype if dtype is not None else b.dtype


def _data(x):
    return x.array if isinstance(x, Tensor) else x


def _promoted_arrays(a, b, true_divide=False):
    """The arrays (or numbers) ``a`` and ``b`` converted to PyTorch's result dtype of ``a op b``."""
    promoted = promote_operands(a, b, true_divide)
    if promoted is None:
        return a, b
    return promoted[0], promoted[1]


def _check_division(fn: str, a, b) -> None:
    """PyTorch's errors for integer division-like ops (on promoted operands)."""
    kind = _dtype_of(a, b).kind
    if kind == "b":
        raise NotImplementedError(f"{fn}: not implemented for bool tensors (as in PyTorch); convert with .to(dtype)")
    if getattr(a, "size", 1) == 0 or getattr(b, "size", 1) == 0:
        return  # an empty result divides nothing
    if kind in "iu" and bool((b == 0).any() if hasattr(b, "any") else b == 0):
        raise RuntimeError(f"ZeroDivisionError: {fn} of integers by zero")


class Maximum(FunctionNode):
    """the larger of a and b, elementwise (NaN where either is NaN); ties split the gradient in halves"""

    in_dtypes = (None, None)
    _largest = True

    def forward(self, a, b):
        self.shapes = (shape_of(a), shape_of(b))
        a, b = _promote(self, a, b)
        xp = self.xp
        out = xp.maximum(a, b) if self._largest else xp.minimum(a, b)
        if out.dtype.kind in "fc":
            # PyTorch's rule: an input gets the whole gradient where it wins (or either is NaN),
            # half where they tie, nothing where it loses.
            lose_a, lose_b = (a < b, a > b) if self._largest else (a > b, a < b)
            tie = a == b
            dtype = out.dtype
            self.weights = (
                xp.where(tie, dtype.type(0.5), xp.where(lose_a, dtype.type(0), dtype.type(1))),
                xp.where(tie, dtype.type(0.5), xp.where(lose_b, dtype.type(0), dtype.type(1))),
            )
        return out

    def backward(self, g):
        need_a, need_b = self.needs_input_grad
        (shape_a, shape_b), (dtype_a, dtype_b) = self.shapes, self.in_dtypes
        weight_a, weight_b = self.weights
        return (
            unbroadcast(g * _const(self.xp, weight_a), shape_a, dtype_a) if need_a else None,
            unbroadcast(g * _const(self.xp, weight_b), shape_b, dtype_b) if need_b else None,
        )


class Minimum(Maximum):
    """the smaller of a and b, elementwise (NaN where either is NaN); ties split the gradient in halves"""

    _largest = False


class Atan2(FunctionNode):
    """the angle of the point (b, a): arctan(a / b) in the right quadrant (integers give the default float dtype)"""

    in_dtypes = (None, None)

    def forward(self, a, b):
        self.retain_inputs((0, 1))
        a, b = _promote(self, a, b, true_divide=True)
        return self.xp.arctan2(a, b)

    def backward(self, g):
        a, b = self.saved_inputs
        need_a, need_b = self.needs_input_grad
        dtype_a, dtype_b = self.in_dtypes
        scale = g / (a * a + b * b)
        return (
            unbroadcast(scale * b, shape_of(a), dtype_a) if need_a else None,
            unbroadcast(-(scale * a), shape_of(b), dtype_b) if need_b else None,
        )


class Remainder(FunctionNode):
    """a mod b with the sign of b (Python's %); d/da = 1, d/db = -floor(a / b)

    Either operand may be a Python number (``t % 2``, ``2 % t``).
    """

    in_dtypes = (None, None)
    function = "remainder"  # the NumPy/CuPy ufunc, and the name in error messages

    def forward(self, a, b):
        self.retain_inputs((0, 1))
        self.shapes = (shape_of(a), shape_of(b))
        a, b = _promote(self, a, b)
        _check_division(self.function, a, b)
        with np.errstate(divide="ignore", invalid="ignore"):  # float % 0 is NaN, as in PyTorch
            return getattr(self.xp, self.function)(a, b)

    def backward(self, g):
        need_a, need_b = self.needs_input_grad
        (shape_a, shape_b), (dtype_a, dtype_b) = self.shapes, self.in_dtypes
        grad_b = None
        if need_b:
            a, b = self.saved_inputs
            grad_b = unbroadcast(g * -self._quotient(_data(a), _data(b)), shape_b, dtype_b)
        return unbroadcast(g, shape_a, dtype_a) if need_a else None, grad_b

    def _quotient(self, a, b) -> Tensor:
        """floor(a / b) as PyTorch's ``div(rounding_mode="floor")`` computes it (a constant)."""
        a, b = _promoted_arrays(a, b)
        with np.errstate(divide="ignore", invalid="ignore"):
            return _const(self.xp, self.xp.floor_divide(a, b))


class Fmod(Remainder):
    """a mod b with the sign of a (C's fmod); d/da = 1, d/db = -trunc(a / b)"""

    function = "fmod"

    def _quotient(self, a, b) -> Tensor:
        """trunc(a / b) (a constant)."""
        a, b = _promoted_arrays(a, b, true_divide=True)
        with np.errstate(divide="ignore", invalid="ignore"):
            return _const(self.xp, self.xp.trunc(a / b))


FLOOR_DIVIDE_GRAD_MESSAGE = (
    "the derivative of floor_divide is not implemented (as in PyTorch: it is zero wherever it exists); "
    "compute it on detached tensors, or use (a / b).floor() for a recorded zero gradient"
)


class FloorDivide(FunctionNode):
    """floor(a / b) (Python's //); recorded like PyTorch's, whose backward raises"""

    def forward(self, a, b):
        a, b = _promote(self, a, b)
        _check_division("floor_divide", a, b)
        with np.errstate(divide="ignore", invalid="ignore"):  # float // 0 is +-inf or NaN, as in PyTorch
            return self.xp.floor_divide(a, b)

    def backward(self, g):
        raise RuntimeError(FLOOR_DIVIDE_GRAD_MESSAGE)


class InplaceUfunc:
    """A NumPy ufunc preceded by PyTorch's checks: the update of ``inplace.binary`` for ``%=``, ``//=``, ``&=``, ...

    ``inplace.binary`` calls ``ufunc(data, other, out=data, casting="same_kind")``
    when nothing is recorded. As in PyTorch, a result dtype that cannot be
    stored in ``data`` raises first (RuntimeError), then the op's own checks
    run (``check(data, other)``: bool operands, integer division by zero).
    """

    def __init__(self, ufunc, fn: str, check):
        self.ufunc = ufunc
        self.fn = fn
        self.check = check

    def __call__(self, a, b, out=None, casting="same_kind"):
        target = a if out is None else out
        check_castable(result_type(a, b), target.dtype, self.fn)
        self.check(a, b)
        with np.errstate(divide="ignore", invalid="ignore"):
            return self.ufunc(a, b, out=out, casting=casting)


def _division_check(fn: str):
    def check(a, b):
        _check_division(fn, *_promoted_arrays(a, b))

    return check


remainder_ufunc = InplaceUfunc(np.remainder, "remainder_", _division_check("remainder_"))
fmod_ufunc = InplaceUfunc(np.fmod, "fmod_", _division_check("fmod_"))
floor_divide_ufunc = InplaceUfunc(np.floor_divide, "floor_divide_", _division_check("floor_divide_"))


# -- comparisons, logical and bitwise ops (not differentiable: they record nothing) -----------------


def _operand_data(value, fn: str, name: str, numbers: bool):
    """The array (or number, when ``numbers``) behind an argument, or TypeError naming ``fn`` and ``name``."""
    if isinstance(value, Tensor):
        return value.array
    if numbers and isinstance(value, (int, float, bool, np.number, np.bool_)):
        return value.item() if isinstance(value, np.generic) else value
    wanted = "a Tensor or a number" if numbers else "a Tensor"
    raise TypeError(f"{fn}(): argument '{name}' must be {wanted}, got {type(value).__name__}")


def _elementwise(fn: str, ufunc, a, b, promote=True):
    """``ufunc(a, b)`` on broadcast arrays as an unrecorded Tensor; RuntimeError (PyTorch's) naming both shapes."""
    xp = backend.get_array_module(a, b)
    if promote:
        a, b = _promoted_arrays(a, b)
    try:
        out = ufunc(a, b)
    except ValueError:  # NumPy's
        raise RuntimeError(
            f"{fn}: shapes {tuple(shape_of(a))} and {tuple(shape_of(b))} are not broadcastable"
        ) from None
    return Tensor._make(xp.asarray(out), False, None, 0)


def _comparison(fn: str, ufunc, input, other):  # noqa: A002  (PyTorch's names)
    expect_tensor(input, fn)
    return _elementwise(fn, ufunc, input.array, _operand_data(other, fn, "other", numbers=True))


def _binary_predicate(check_and_apply, name: str, ufunc, doc: str):
    """The public function ``name(input, other)``: ``check_and_apply(name, ufunc, input, other)``, with ``doc``."""

    def predicate(input, other):  # noqa: A002
        return check_and_apply(name, ufunc, input, other)

    predicate.__name__ = predicate.__qualname__ = name
    predicate.__doc__ = doc
    return predicate


_SEE_EQ = "a bool tensor (see ``eq`` for arguments and errors)."
eq = _binary_predicate(
    _comparison, "eq", np.equal,
    """``input == other`` elementwise, a bool tensor (``other``: a Tensor or a number; broadcast).

    Raises:
        TypeError: ``input`` is not a Tensor or ``other`` is neither a Tensor nor a number.
        RuntimeError: the shapes do not broadcast.
    """,
)
ne = _binary_predicate(_comparison, "ne", np.not_equal, f"``input != other`` elementwise, {_SEE_EQ}")
lt = _binary_predicate(_comparison, "lt", np.less, f"``input < other`` elementwise, {_SEE_EQ}")
le = _binary_predicate(_comparison, "le", np.less_equal, f"``input <= other`` elementwise, {_SEE_EQ}")
gt = _binary_predicate(_comparison, "gt", np.greater, f"``input > other`` elementwise, {_SEE_EQ}")
ge = _binary_predicate(_comparison, "ge", np.greater_equal, f"``input >= other`` elementwise, {_SEE_EQ}")


def equal(input, other) -> bool:  # noqa: A002
    """True when both tensors have one shape and equal elements (compared after type promotion; NaN != NaN).

    Raises:
        TypeError: either argument is not a Tensor.
        RuntimeError: the tensors live on different devices.
    """
    expect_tensor(input, "equal")
    expect_tensor(other, "equal", "other")
    a, b = input.array, other.array
    backend.get_array_module(a, b)
    return a.shape == b.shape and bool((a == b).all())


def _check_tolerances(fn: str, input, other, rtol, atol, equal_nan) -> None:  # noqa: A002
    expect_tensor(input, fn)
    expect_tensor(other, fn, "other")
    for name, value in (("rtol", rtol), ("atol", atol)):
        if not isinstance(value, (int, float, np.integer, np.floating)) or isinstance(value, bool):
            raise TypeError(f"{fn}(): argument '{name}' must be a float, got {type(value).__name__}")
    if not isinstance(equal_nan, (bool, np.bool_)):
        raise TypeError(f"{fn}(): argument 'equal_nan' must be a bool, got {type(equal_nan).__name__}")
    if input.dtype != other.dtype:
        raise RuntimeError(
            f"{fn}: input has dtype {input.dtype} but other has {other.dtype}; convert one with .to(dtype)"
        )
    if not (rtol >= 0 and atol >= 0):  # NaN fails too, as in PyTorch
        raise RuntimeError(f"{fn}: rtol and atol must be >= 0, got rtol={rtol}, atol={atol}")


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):  # noqa: A002
    """Elementwise ``|input - other| <= atol + rtol * |other|`` (or equal), a bool tensor.

    Infinities are close only to themselves; NaN is close to NaN only with
    ``equal_nan``. Integer and bool tensors are compared as float64.

    Raises:
        TypeError: either argument is not a Tensor, a tolerance is not a number, ``equal_nan`` not a bool.
        RuntimeError: the dtypes differ (as in PyTorch), or a tolerance is negative.
        RuntimeError: the shapes do not broadcast.
    """
    return _isclose("isclose", input, other, rtol, atol, equal_nan)


def _isclose(fn: str, input, other, rtol, atol, equal_nan):  # noqa: A002
    _check_tolerances(fn, input, other, rtol, atol, equal_nan)
    a, b = input.array, other.array
    xp = backend.get_array_module(a, b)
    if a.dtype.kind in "biu":
        a, b = a.astype(np.float64), b.astype(np.float64)

    def close(a, b):
        with np.errstate(invalid="ignore", over="ignore"):
            error = xp.abs(a - b)
            result = (a == b) | (xp.isfinite(error) & (error <= atol + rtol * xp.abs(b)))
        if equal_nan:
            result |= xp.isnan(a) & xp.isnan(b)
        return result

    return _elementwise(fn, close, a, b, promote=False)


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:  # noqa: A002
    """True when every element of ``input`` is close to ``other``'s (see ``isclose``; same errors)."""
    return bool(_isclose("allclose", input, other, rtol, atol, equal_nan).array.all())


def _unary_test(fn: str, ufunc, input, integer_value: bool):  # noqa: A002
    expect_tensor(input, fn)
    data = input.array
    xp = backend.get_array_module(data)
    if data.dtype.kind in "biu":  # integers are never NaN or infinite
        return Tensor._make(xp.full(data.shape, integer_value), False, None, 0)
    return Tensor._make(xp.asarray(ufunc(data)), False, None, 0)


def isnan(input):  # noqa: A002
    """A bool tensor: True where ``input`` is NaN."""
    return _unary_test("isnan", np.isnan, input, False)


def isinf(input):  # noqa: A002
    """A bool tensor: True where ``input`` is +inf or -inf."""
    return _unary_test("isinf", np.isinf, input, False)


def isfinite(input):  # noqa: A002
    """A bool tensor: True where ``input`` is neither NaN nor infinite."""
    return _unary_test("isfinite", np.isfinite, input, True)


def _logical(fn: str, ufunc, input, other):  # noqa: A002
    # Truth is taken in the promoted dtype, as PyTorch: a 0-d float64 1e-300 beside a float32 tensor is 0.
    expect_tensor(input, fn)
    expect_tensor(other, fn, "other")
    return _elementwise(fn, ufunc, input.array, other.array)


logical_and = _binary_predicate(
    _logical, "logical_and", np.logical_and,
    """Elementwise ``input and other`` (nonzero counts as true), a bool tensor.

    Raises:
        TypeError: either argument is not a Tensor (as in PyTorch).
        RuntimeError: the shapes do not broadcast.
    """,
)
logical_or = _binary_predicate(
    _logical, "logical_or", np.logical_or,
    "Elementwise ``input or other`` (nonzero counts as true), a bool tensor (errors as ``logical_and``).",
)
logical_xor = _binary_predicate(
    _logical, "logical_xor", np.logical_xor,
    "Elementwise exclusive or of the truth values, a bool tensor (errors as ``logical_and``).",
)


def logical_not(input):  # noqa: A002
    """Elementwise ``not input`` (nonzero counts as true), a bool tensor."""
    expect_tensor(input, "logical_not")
    data = input.array
    return Tensor._make(backend.get_array_module(data).asarray(np.logical_not(data)), False, None, 0)


def _check_bitwise(fn: str, dtype) -> None:
    if dtype.kind not in "biu":
        raise NotImplementedError(
            f"{fn}: only defined for integer and bool tensors (as in PyTorch), got {dtype}"
        )


def _bitwise_check(fn: str):
    def check(a, b):
        _check_bitwise(fn, result_type(a, b))

    return check


class _Bitwise(FunctionNode):
    """A bitwise op on integer or bool operands (never recorded: such tensors cannot require grad)."""

    name_ = ""
    ufunc = None

    def forward(self, a, b):
        a, b = _promote(self, a, b)
        _check_bitwise(self.name_, _dtype_of(a, b))
        return self.ufunc(a, b)

    def backward(self, g):
        raise RuntimeError(f"{self.name_} is not differentiable")


class BitwiseAnd(_Bitwise):
    """a & b on integer or bool operands"""

    name_ = "bitwise_and"
    ufunc = staticmethod(np.bitwise_and)


class BitwiseOr(_Bitwise):
    """a | b on integer or bool operands"""

    name_ = "bitwise_or"
    ufunc = staticmethod(np.bitwise_or)


class BitwiseXor(_Bitwise):
    """a ^ b on integer or bool operands"""

    name_ = "bitwise_xor"
    ufunc = staticmethod(np.bitwise_xor)


bitwise_and_ufunc = InplaceUfunc(np.bitwise_and, "bitwise_and_", _bitwise_check("bitwise_and_"))
bitwise_or_ufunc = InplaceUfunc(np.bitwise_or, "bitwise_or_", _bitwise_check("bitwise_or_"))
bitwise_xor_ufunc = InplaceUfunc(np.bitwise_xor, "bitwise_xor_", _bitwise_check("bitwise_xor_"))


def _bitwise(op, fn: str, input, other):  # noqa: A002
    expect_tensor(input, fn)
    return op()(input, _operand_data(other, fn, "other", numbers=True))


def bitwise_and(input, other):  # noqa: A002
    """Elementwise ``input & other`` (``other``: a Tensor or a number), for integer and bool tensors.

    Raises:
        TypeError: ``input`` is not a Tensor or ``other`` is neither a Tensor nor a number.
        NotImplementedError: the promoted dtype is floating (as in PyTorch).
        RuntimeError: the shapes do not broadcast.
    """
    return _bitwise(BitwiseAnd, "bitwise_and", input, other)


def bitwise_or(input, other):  # noqa: A002
    """Elementwise ``input | other`` for integer and bool tensors (see ``bitwise_and``)."""
    return _bitwise(BitwiseOr, "bitwise_or", input, other)


def bitwise_xor(input, other):  # noqa: A002
    """Elementwise ``input ^ other`` for integer and bool tensors (see ``bitwise_and``)."""
    return _bitwise(BitwiseXor, "bitwise_xor", input, other)


def bitwise_not(input):  # noqa: A002
    """Elementwise ``~input``: bitwise not of integers, logical not of bools.

    Raises:
        TypeError: ``input`` is not a Tensor.
        NotImplementedError: ``input`` is floating (as in PyTorch).
    """
    expect_tensor(input, "bitwise_not")
    _check_bitwise("bitwise_not", input.dtype)
    data = input.array
    return Tensor._make(backend.get_array_module(data).asarray(np.invert(data)), False, None, 0)


# -- public functions of the differentiable ops ----------------------------------------------------


def _tensor_pair(op, fn: str, input, other):  # noqa: A002
    """``op()(input, other)`` for the ops PyTorch defines on two Tensors only (maximum, atan2)."""
    expect_tensor(input, fn)
    expect_tensor(other, fn, "other")
    return op()(input, other)


def _number_pair(op, fn: str, input, other):  # noqa: A002
    """``op()(input, other)`` where either may be a number, but not both."""
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise TypeError(f"{fn}(): expected at least one Tensor argument, got {type(input).__name__} and "
                        f"{type(other).__name__}")
    a = _operand_data(input, fn, "input", numbers=True) if not isinstance(input, Tensor) else input
    b = _operand_data(other, fn, "other", numbers=True) if not isinstance(other, Tensor) else other
    return op()(a, b)


def maximum(input, other):  # noqa: A002
    """The elementwise maximum of two tensors (broadcast; NaN propagates; ties split the gradient).

    Raises:
        TypeError: either argument is not a Tensor (as in PyTorch, numbers are refused).
        RuntimeError: the shapes do not broadcast.
    """
    return _tensor_pair(Maximum, "maximum", input, other)


def minimum(input, other):  # noqa: A002
    """The elementwise minimum of two tensors (see ``maximum``)."""
    return _tensor_pair(Minimum, "minimum", input, other)


def atan2(input, other):  # noqa: A002
    """Elementwise arctan(input / other) in the quadrant of (other, input); two tensors, broadcast.

    Raises:
        TypeError: either argument is not a Tensor. RuntimeError: the shapes do not broadcast.
    """
    return _tensor_pair(Atan2, "atan2", input, other)


def remainder(input, other):  # noqa: A002
    """Python's ``input % other`` elementwise (the result has the sign of ``other``).

    Either argument may be a number. Differentiable in both (d/d other = -floor(input / other)).

    Raises:
        TypeError: neither argument is a Tensor, or one is not a number.
        RuntimeError: integer division by zero. NotImplementedError: bool operands.
    """
    return _number_pair(Remainder, "remainder", input, other)


def fmod(input, other):  # noqa: A002
    """C's ``fmod(input, other)`` elementwise (the result has the sign of ``input``); ``other`` may be a number.

    Raises:
        TypeError: ``input`` is not a Tensor (as in PyTorch) or ``other`` is not a number.
        RuntimeError: integer division by zero. NotImplementedError: bool operands.
    """
    expect_tensor(input, "fmod")
    return _number_pair(Fmod, "fmod", input, other)


def floor_divide(input, other):  # noqa: A002
    """Python's ``input // other`` elementwise; either may be a number. Not differentiable (backward raises).

    Raises:
        TypeError: neither argument is a Tensor. RuntimeError: integer division by zero.
        NotImplementedError: bool operands.
    """
    return _number_pair(FloorDivide, "floor_divide", input, other)


def round(input, decimals=None):  # noqa: A001, A002
    """``input`` rounded half to even, to ``decimals`` decimal places (negative: tens, hundreds, ...).

    Integer tensors are returned as they are (a copy), but only without
    ``decimals``: like PyTorch, an integer tensor with ``decimals`` (even 0) raises.

    Raises:
        TypeError: ``input`` is not a Tensor or ``decimals`` is not an int.
        NotImplementedError: a bool tensor, or ``decimals`` with an integer tensor (as in PyTorch).
    """
    expect_tensor(input, "round")
    if decimals is not None:
        if not isinstance(decimals, (int, np.integer)) or isinstance(decimals, bool):
            raise TypeError(f"round(): argument 'decimals' must be an int, got {type(decimals).__name__}")
        decimals = int(decimals)
    return Round(decimals)(input)


OPS = {
    "sin": Sin, "cos": Cos, "tan": Tan, "asin": Asin, "acos": Acos, "atan": Atan,
    "sinh": Sinh, "cosh": Cosh, "asinh": Asinh, "acosh": Acosh, "atanh": Atanh,
    "exp2": Exp2, "expm1": Expm1, "log2": Log2, "log10": Log10, "log1p": Log1p,
    "rsqrt": Rsqrt, "reciprocal": Reciprocal, "square": Square, "erf": Erf, "erfinv": Erfinv,
    "sign": Sign, "floor": Floor, "ceil": Ceil, "trunc": Trunc, "round": Round,
    "maximum": Maximum,
    "minimum": Minimum,
    "atan2": Atan2,
    "remainder": Remainder,
    "fmod": Fmod,
}


# -- logit and erfc (appended: both are floating functions of one tensor) ---------------------------------


class Logit(_FloatingFunction, partial=True):
    """log(a / (1 - a)); with ``eps`` (>= 0), ``a`` first clamped into [eps, 1 - eps].

    d/da = 1 / (a (1 - a)) inside the clamp, 0 outside it (as PyTorch; its
    bounds themselves count as inside). Without ``eps`` (or a negative one)
    nothing is clamped: -inf at 0, inf at 1, NaN outside [0, 1], and the
    gradient is NaN there too, as in PyTorch.
    """

    def __init__(self, eps=None):
        self.eps = None if eps is None or eps < 0 else eps  # NaN stays: it clamps nothing, as in PyTorch

    def bounds(self, dtype):
        """The clamp ``(eps, 1 - eps)`` in ``dtype``."""
        low = dtype.type(self.eps)
        return low, dtype.type(1) - low

    def compute(self, a):
        if self.eps is not None:
            low, high = self.bounds(a.dtype)
            a = self.xp.where(a < low, low, self.xp.where(a > high, high, a))  # below first, as PyTorch
        return self.xp.log(a / (1 - a))

    def derivative(self, g, a):
        if self.eps is None:  # NaN outside [0, 1], like the logit itself (as PyTorch)
            outside = _const(self.xp, (a.array < 0) | (a.array > 1))
            return (g / (a * (1 - a))).masked_fill(outside, math.nan)
        low, high = self.bounds(a.dtype)
        outside = _const(self.xp, (a.array < low) | (a.array > high))  # NaN counts as inside: its gradient is NaN
        safe = a.masked_fill(outside, 0.5)  # no 1/0 outside: its gradient would be 0 * inf = NaN in double backward
        return (g / (safe * (1 - safe))).masked_fill(outside, 0.0)


class Erfc(_FloatingFunction):
    """the complementary error function 1 - erf(a), accurate where it is tiny; d/da = -2 / sqrt(pi) * exp(-a**2)"""

    def compute(self, a):
        return erfc_array(a)

    def derivative(self, g, a):
        return -(g * _TWO_OVER_SQRT_PI * (-(a * a)).exp())


def erfc_array(x):
    """The complementary error function of a float array (NumPy or CuPy), in ``x``'s dtype.

    Computed in float64 with Cody's approximations (``backend``'s
    coefficients): 1 - erf below |x| = 0.46875; above, erfc(|x|) as
    ``exp(-x**2) * R(|x|)`` with ``exp(-x**2)`` split as Cody does
    (``x**2 = r**2 + (x - r)(x + r)``, ``r`` = x rounded to 1/16) so that
    the relative accuracy holds far in the tail (erfc(26) ~ 1e-296);
    erfc(-x) = 2 - erfc(x). NaN stays NaN; erfc(inf) = 0, erfc(-inf) = 2.
    """
    xp = backend.get_array_module(x)
    x64 = x.astype(np.float64)
    y = xp.abs(x64)
    small = 1.0 - xp.copysign(backend._erf_small(xp.minimum(y, 0.46875)), x64)
    yc = xp.clip(y, 0.46875, 27.0)  # erfc underflows to 0 in float64 before 27
    num, den = backend._cody_terms(yc, backend._ERF_C, backend._ERF_D)
    middle = num / den
    inverse_square = 1.0 / (yc * yc)
    num, den = backend._cody_terms(inverse_square, backend._ERF_P, backend._ERF_Q)
    large = (backend._INV_SQRT_PI - inverse_square * num / den) / yc
    rounded = xp.trunc(yc * 16.0) / 16.0
    gaussian = xp.exp(-rounded * rounded) * xp.exp(-(yc - rounded) * (yc + rounded))
    upper = xp.where(y > 27.0, 0.0, gaussian * xp.where(yc <= 4.0, middle, large))  # erfc(|x|); NaN stays
    out = xp.where(y <= 0.46875, small, xp.where(x64 < 0, 2.0 - upper, upper))
    return out.astype(x.dtype, copy=False)


def _eps_value(eps):
    """``eps`` of ``logit`` as a float (a number or a one-element tensor), or None."""
    if eps is None:
        return None
    if isinstance(eps, Tensor) and eps.numel() == 1 and eps.dtype.kind in "biuf":
        return float(eps.item())
    if isinstance(eps, bool) or not isinstance(eps, (int, float, np.integer, np.floating)):
        raise TypeError(f"logit(): argument 'eps' must be a float, got {type(eps).__name__}")
    return float(eps)


def logit(input, eps=None):  # noqa: A002  (PyTorch's names)
    """Elementwise log(input / (1 - input)), the inverse of ``sigmoid``; integer and bool tensors give floats.

    With ``eps`` (>= 0), ``input`` is first clamped into [eps, 1 - eps] and the
    gradient is zero outside that range, as in PyTorch; a negative ``eps``
    clamps nothing.

    Raises:
        TypeError: ``input`` is not a Tensor or ``eps`` is not a number.
    """
    expect_tensor(input, "logit")
    return Logit(_eps_value(eps))(input)


def erfc(input):  # noqa: A002
    """Elementwise complementary error function 1 - erf(input), accurate in the tail (integers give floats).

    Raises:
        TypeError: ``input`` is not a Tensor.
    """
    expect_tensor(input, "erfc")
    return Erfc()(input)


OPS.update({"logit": Logit, "erfc": Erfc})
