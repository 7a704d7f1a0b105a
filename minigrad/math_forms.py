# ruff: noqa: A001, A002  (PyTorch's parameter names: input, min, max)
"""PyTorch's math in both spellings: ``torch.std(t, 0)`` and ``t.std(0)``.

Each op is written once, as a function whose first parameter is the input
tensor (PyTorch's parameter names; keyword-only where PyTorch's are). The
bottom of this module installs it twice:

* as a Tensor method, where ``torch.Tensor`` has that method (``_METHODS``);
  a method never replaces an existing Tensor attribute (checked at import);
* as a function of ``minigrad``, where ``torch`` has that function
  (``__all__``, exported by ``minigrad/__init__.py``).

The families:

1. method spellings of arithmetic (``add``, ``sub`` with ``alpha``, ``div``
   with ``rounding_mode``, ``neg``, ``matmul``, ``where``, ``softmax``) and
   PyTorch's aliases (``subtract``, ``multiply``, ``divide``, ...);
2. reductions: ``var``/``std`` (``correction`` or legacy ``unbiased``),
   ``prod``, ``norm``, ``dist``, ``logsumexp``, ``amax``/``amin``, ``median``, ``quantile``/``nanquantile``,
   ``mode``, ``count_nonzero``, ``nansum``, ``nanmean``;
3. linear algebra: ``mm``, ``bmm``, ``mv``, ``dot``, ``outer``, ``cross``,
   ``tensordot``, ``kron``, ``trace``, ``addmm``, ``addmv``, ``baddbmm``,
   ``addcmul``, ``addcdiv``, ``lerp``, ``cdist``;
4. elementwise extras: ``frac``, ``fmax``/``fmin``, ``hypot``,
   ``deg2rad``/``rad2deg``, ``heaviside``, ``signbit``, ``copysign``,
   ``clamp_min``/``clamp_max``, ``nan_to_num``, ``float_power``, ``gcd``,
   ``lgamma``, ``digamma``, ``polygamma``, ``logaddexp``/``logaddexp2``, ``xlogy``, ``lcm``,
   ``sinc``, and the aliases ``absolute`` and ``clip``.

Most are compositions of recorded ops, so their gradients (of every order)
come from those ops. A few are ops of their own (``OPS``, registered in
``minigrad.ops.REGISTRY``) where a composition would be wrong at edge points
or lose precision: ``Prod`` (exact gradients with zeros in the input), ``NanSum``,
``VectorNorm`` (gradient 0 at the zero vector; ties of the inf-norm share the
gradient), ``AMax``/``MedianAll`` (ties share the gradient evenly),
``Hypot`` (no overflow), ``Copysign``, ``Xlogy``, ``RoundedDiv`` (zero gradient, as
PyTorch records it) and the gamma functions, whose values NumPy lacks.

``out=``: the function spellings that PyTorch gives an ``out`` argument take
one too (``write_out``): the result is copied into ``out`` (its dtype must hold
the result's, as in-place ops require), an ``out`` of another shape is resized
(with PyTorch's UserWarning unless it was empty), and in grad mode an input
or ``out`` that requires grad raises RuntimeError, as in PyTorch.
"""

from __future__ import annotations

import functools
import math
import warnings
from collections import namedtuple

import numpy as np

from minigrad import backend, inplace, views
from minigrad.function import FunctionNode
from minigrad.grad_mode import is_grad_enabled, no_grad
from minigrad.ops import elementwise as _ew
from minigrad.ops import linalg as _linalg
from minigrad.ops import math as _math
from minigrad.ops._util import expect_flag, expect_tensor, normalize_axis, shape_of, unbroadcast
from minigrad.ops.gather import Gather
from minigrad.ops.math import _FloatingFunction
from minigrad.ops.scan import cumprod as _cumprod
from minigrad.ops.shape import cat as _cat
from minigrad.ops.sorting import sorted_indices
from minigrad.ops.structure import diagonal as _diagonal
from minigrad.ops.structure import flip as _flip
from minigrad.promotion import get_default_dtype, result_type
from minigrad.tensor import Tensor

MedianResult = namedtuple("MedianResult", ["values", "indices"])
ModeResult = namedtuple("ModeResult", ["values", "indices"])

_NUMBERS = (int, float, np.number, np.bool_)
_F64 = np.dtype(np.float64)


# -- shared helpers ----------------------------------------------------------------------------------


def _const(xp, array) -> Tensor:
    """A constant (unrecorded) Tensor wrapping ``array``."""
    return Tensor._make(xp.asarray(array), False, None, 0)


def _is_number(value) -> bool:
    return isinstance(value, _NUMBERS) and not isinstance(value, Tensor)


def _check_float(input, fn: str, what: str = "a floating point") -> None:
    if input.dtype.kind not in "fc":
        raise RuntimeError(f"{fn}(): expected {what} tensor, got dtype {input.dtype}")


def _as_float(input) -> Tensor:
    """``input`` itself when floating, else cast to the default float dtype (recorded)."""
    if input.dtype.kind in "fc":
        return input
    return input.to(get_default_dtype())


def _axes(dim, ndim: int, fn: str):
    """``dim`` (None, an int, or a tuple/list; empty means all) as a tuple of axes, or None for all."""
    if dim is None or (isinstance(dim, (tuple, list)) and not dim):
        return None
    if isinstance(dim, bool):
        raise TypeError(f"{fn}(): argument 'dim' must be an int or a tuple of ints, got bool")
    axes = normalize_axis(dim, ndim, f"{fn}()")
    if len(set(axes)) != len(axes):
        raise RuntimeError(f"{fn}(): dim {dim!r} appears multiple times in the list of dims")
    return axes if ndim else None  # a 0-d tensor's dim 0 is the tensor itself


def _one_axis(dim, ndim: int, fn: str) -> int:
    if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)):
        raise TypeError(f"{fn}(): argument 'dim' must be an int, got {type(dim).__name__}")
    return normalize_axis(int(dim), ndim, f"{fn}()")[0]


def _kept_shape(in_shape, axes) -> tuple:
    """The shape of a reduction over ``axes`` (None: all) with the reduced dims kept as 1."""
    if axes is None:
        return (1,) * len(in_shape)
    return tuple(1 if i in axes else n for i, n in enumerate(in_shape))


def _restore(t: Tensor, in_shape, axes, keepdims) -> Tensor:
    """A reduction's output (or its gradient) reshaped with the reduced dims kept as 1 (broadcasts to the input)."""
    return t if keepdims else t.reshape(_kept_shape(in_shape, axes))


def write_out(result: Tensor, out, fn: str) -> Tensor:
    """``result``, or a copy of it written into ``out`` (PyTorch's ``out=`` rules; see the module docstring).

    Raises:
        TypeError: ``out`` is not a Tensor.
        RuntimeError: in grad mode, the result or ``out`` requires grad; the
            result's dtype cannot be stored in ``out``'s.
    """
    if out is None:
        return result
    if not isinstance(out, Tensor):
        raise TypeError(f"{fn}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if is_grad_enabled() and (result.requires_grad or out.requires_grad):
        raise RuntimeError(
            f"{fn}(): functions with out=... arguments don't support automatic differentiation, "
            "but one of the arguments requires grad."
        )
    inplace.check_castable(result.dtype, out.dtype, fn)
    if out.shape != result.shape:
        if out.array.size != 0:
            warnings.warn(
                f"{fn}(): an output with one or more elements was resized since it had shape "
                f"{list(out.shape)}, which does not match the required output shape {list(result.shape)}. "
                "Resize it to zero elements first to reuse it without this warning.",
                UserWarning,
                stacklevel=3,
            )
        xp = backend.get_array_module(out.array)
        out.array = xp.empty(result.shape, dtype=out.dtype)
        views.bump_version(out)
    with no_grad():
        out.copy_(result)
    return out


def _method(function, name: str):
    """``function`` as a Tensor method: the same, but refusing ``out=`` as PyTorch's methods do."""

    @functools.wraps(function)
    def method(self, *args, **kwargs):
        if "out" in kwargs:
            raise TypeError(f"{name}() got an unexpected keyword argument 'out'")
        return function(self, *args, **kwargs)

    return method


def _inplace_method(name: str, function):
    """The in-place method ``name`` (``lerp_``): ``self`` overwritten with ``function(self, *args)``.

    Recorded for autograd as PyTorch records in-place ops; the result must
    keep ``self``'s shape and fit its dtype (RuntimeError otherwise).
    """

    def method(self, *args, **kwargs):
        expect_tensor(self, name)

        def compute(old):
            return function(old, *args, **kwargs)

        def update(data):
            with no_grad():
                new = compute(Tensor._make(data, False, None, 0))
            if new.shape != data.shape:
                raise RuntimeError(
                    f"{name}: output with shape {list(data.shape)} doesn't match the broadcast shape {list(new.shape)}"
                )
            inplace.check_castable(new.dtype, data.dtype, name)
            data[...] = new.array

        operands = tuple(v for v in (*args, *kwargs.values()) if isinstance(v, Tensor))
        return inplace.apply_inplace(self, name, update, compute, operands)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"In-place ``{function.__name__}``: ``self`` overwritten with ``{function.__name__}(self, ...)``."
    return method


# == 1. arithmetic in method and function spellings ====================================================


def _scaled(other, alpha, input, fn: str, name: str = "alpha"):
    """``alpha * other`` for ``add``/``sub`` (PyTorch's checks on ``alpha``, the argument ``name``)."""
    if alpha == 1 and not isinstance(alpha, bool):
        return other
    if not _is_number(alpha):
        raise TypeError(f"{fn}(): argument '{name}' must be a Number, not {type(alpha).__name__}")
    if not isinstance(other, Tensor) and not _is_number(other):
        raise TypeError(f"{fn}(): argument 'other' must be a Tensor or a Number, not {type(other).__name__}")
    kinds = {input.dtype.kind, getattr(other, "dtype", np.dtype(type(other))).kind}
    if kinds <= set("biu") and isinstance(alpha, (float, np.floating)):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")
    return other * alpha


def add(input, other, *, alpha=1, out=None):
    """``input + alpha * other`` (broadcast, PyTorch's type promotion).

    Raises:
        TypeError: ``input`` is not a Tensor, ``alpha`` is not a number.
        RuntimeError: a float ``alpha`` with integer tensors.
    """
    expect_tensor(input, "add")
    return write_out(_ew.Add()(input, _scaled(other, alpha, input, "add")), out, "add")


def sub(input, other, *, alpha=1, out=None):
    """``input - alpha * other`` (broadcast; bool operands raise as for ``-``). Errors as ``add``."""
    expect_tensor(input, "sub")
    return write_out(_ew.Sub()(input, _scaled(other, alpha, input, "sub")), out, "sub")


def mul(input, other, *, out=None):
    """``input * other`` elementwise (broadcast). Raises TypeError when ``input`` is not a Tensor."""
    expect_tensor(input, "mul")
    return write_out(_ew.Mul()(input, other), out, "mul")


class RoundedDiv(FunctionNode):
    """a / b rounded toward zero ("trunc") or down ("floor"); integer operands stay integers.

    The gradient is zero, as PyTorch records it. Division by zero: floats give
    inf/NaN; integers raise RuntimeError (PyTorch's ZeroDivisionError).
    """

    in_dtypes = (None, None)

    def __init__(self, mode: str):
        self.mode = mode

    def forward(self, a, b):
        self.shapes = (shape_of(a), shape_of(b))
        a, b = _math._promote(self, a, b)
        _math._check_division("div", a, b)
        xp = self.xp
        with np.errstate(divide="ignore", invalid="ignore"):
            if self.mode == "floor":
                return xp.floor_divide(a, b)
            if _math._dtype_of(a, b).kind in "fc":
                return xp.trunc(a / b)
            quotient = xp.floor_divide(a, b)  # integers: floor, then one up where the exact quotient was negative
            inexact = (a - quotient * b) != 0
            return quotient + (inexact & ((xp.asarray(a) < 0) != (xp.asarray(b) < 0)))

    def backward(self, g):
        need_a, need_b = self.needs_input_grad
        (shape_a, shape_b), (dtype_a, dtype_b) = self.shapes, self.in_dtypes
        zero = g * 0.0
        return (
            unbroadcast(zero, shape_a, dtype_a) if need_a else None,
            unbroadcast(zero, shape_b, dtype_b) if need_b else None,
        )


def div(input, other, *, rounding_mode=None, out=None):
    """``input / other``: true division (``rounding_mode=None``), or rounded: ``"trunc"`` or ``"floor"``.

    True division of integers gives the default float dtype; rounded division
    keeps integer dtypes and has a zero gradient, as in PyTorch.

    Raises:
        TypeError: ``input`` is not a Tensor.
        RuntimeError: an unknown ``rounding_mode``; integer division by zero (rounded modes).
    """
    expect_tensor(input, "div")
    if rounding_mode is None:
        result = _ew.Div()(input, other)
    elif rounding_mode in ("trunc", "floor"):
        result = RoundedDiv(rounding_mode)(input, other)
    else:
        raise RuntimeError(
            f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found {rounding_mode!r}"
        )
    return write_out(result, out, "div")


def true_divide(input, other, *, out=None):
    """``div(input, other)`` (true division); PyTorch's alias."""
    return div(input, other, out=out)


def neg(input, *, out=None):
    """``-input`` elementwise. Raises TypeError when ``input`` is not a Tensor."""
    expect_tensor(input, "neg")
    return write_out(_ew.Neg()(input), out, "neg")


def _matmul_method(input, other):
    """``input @ other`` (1-D and batched operands as in ``minigrad.matmul``)."""
    return _linalg.MatMul()(input, other)


def _where_method(input, condition, other):
    """``where(condition, input, other)``: PyTorch's method spelling ``t.where(cond, y)``."""
    return _ew.where(condition, input, other)


def softmax(input, dim, dtype=None):
    """``nn.functional.softmax(input, dim, dtype=dtype)``; ``dim`` is required, as in ``torch.softmax``."""
    from minigrad.nn import functional as F  # noqa: PLC0415  (nn imports the ops this module builds on)

    expect_tensor(input, "softmax")
    return F.softmax(input, dim, dtype=dtype)


def log_softmax(input, dim, dtype=None):
    """``nn.functional.log_softmax(input, dim, dtype=dtype)``; ``dim`` is required."""
    from minigrad.nn import functional as F  # noqa: PLC0415

    expect_tensor(input, "log_softmax")
    return F.log_softmax(input, dim, dtype=dtype)


# == 2. reductions ========================================================================================


def _var_args(input, dim, unbiased, keepdim, correction, fn: str):
    """(axes, keepdim, correction) from PyTorch's overloads of var/std (``var(t, True)`` means unbiased)."""
    expect_tensor(input, fn)
    if isinstance(dim, bool):  # var(input, unbiased)
        if unbiased is not None:
            raise TypeError(f"{fn}(): got the flag 'unbiased' twice")
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise TypeError(f"{fn}(): give either 'unbiased' or 'correction', not both")
    if unbiased is not None:
        if not isinstance(unbiased, (bool, np.bool_)):
            raise TypeError(f"{fn}(): argument 'unbiased' must be bool, not {type(unbiased).__name__}")
        correction = 1 if unbiased else 0
    elif correction is None:
        correction = 1
    elif not _is_number(correction) or isinstance(correction, (bool, np.bool_)):
        raise TypeError(f"{fn}(): argument 'correction' must be a number, not {type(correction).__name__}")
    if input.dtype.kind not in "fc":
        raise RuntimeError("std and var only support floating point and complex dtypes")
    return _axes(dim, input.ndim, fn), bool(keepdim), correction


def _dof_scale(input, axes, correction) -> float:
    """1 / max(0, N - correction) for N reduced elements (inf when <= 0, with PyTorch's warning)."""
    count = input.array.size if axes is None else math.prod(input.shape[a] for a in axes)
    dof = count - correction
    if dof <= 0:
        warnings.warn(
            "var(): degrees of freedom is <= 0. Correction should be strictly less than the reduction factor "
            "(input numel divided by output numel).",
            UserWarning,
            stacklevel=4,
        )
        return math.inf
    return 1.0 / dof


def _centered(input, axes):
    return input - input.mean(axes if axes is not None else None, keepdim=True)


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    """The variance over ``dim`` (None or ``()``: all): sum((x - mean)**2) / (N - correction).

    ``correction`` defaults to 1 (Bessel's); the legacy ``unbiased`` flag
    means correction 1 (True) or 0 (False), also as ``var(t, False)``. When
    N - correction <= 0 the result is inf or NaN, with PyTorch's warning.

    Raises:
        TypeError: ``input`` is not a Tensor, a dim or flag of the wrong type; both ``unbiased`` and
            ``correction`` given.
        RuntimeError: ``input`` is not floating point.
        IndexError: a dim is out of range.
    """
    axes, keepdim, correction = _var_args(input, dim, unbiased, keepdim, correction, "var")
    d = _centered(input, axes)
    result = (d * d).sum(axes, keepdim=keepdim) * _dof_scale(input, axes, correction)
    return write_out(result, out, "var")


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    """The standard deviation: ``sqrt(var(...))`` (arguments and errors as ``var``).

    The gradient is 0 where the deviation is 0 (a constant input), as in PyTorch.
    """
    axes, keepdim, correction = _var_args(input, dim, unbiased, keepdim, correction, "std")
    scale = math.sqrt(_dof_scale(input, axes, correction))
    result = VectorNorm(2.0, axes, keepdim)(_centered(input, axes)) * scale
    return write_out(result, out, "std")


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    """``(var(input, ...), mean(input, dim, keepdim))``; arguments and errors as ``var``."""
    axes, keepdim_, _ = _var_args(input, dim, unbiased, keepdim, correction, "var_mean")
    if out is not None:
        raise TypeError("var_mean(): out= is not supported by minigrad; assign the two results instead")
    return var(input, dim, unbiased, keepdim, correction=correction), input.mean(axes, keepdim=keepdim_)


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    """``(std(input, ...), mean(input, dim, keepdim))``; arguments and errors as ``var``."""
    axes, keepdim_, _ = _var_args(input, dim, unbiased, keepdim, correction, "std_mean")
    if out is not None:
        raise TypeError("std_mean(): out= is not supported by minigrad; assign the two results instead")
    return std(input, dim, unbiased, keepdim, correction=correction), input.mean(axes, keepdim=keepdim_)


class Prod(FunctionNode):
    """product over one axis (None: all elements); exact gradients where the input has zeros

    The gradient of each element is the product of the others, computed as
    an exclusive cumulative product from the left times one from the right
    (no division), so one zero in a slice gives its position the product of
    the rest, and two zeros give zero everywhere, as in PyTorch.
    """

    def __init__(self, axis, keepdims):
        self.axis = axis
        self.keepdims = keepdims

    def forward(self, a):
        self.retain_inputs((0,))
        self.in_shape = a.shape
        return a.prod(axis=self.axis, keepdims=self.keepdims)

    def backward(self, g):
        (x,) = self.saved_inputs
        axis = self.axis
        if axis is None:
            others = _products_of_others(x.reshape(-1), 0).reshape(self.in_shape)
            return g.reshape((1,) * len(self.in_shape)) * others
        if not self.keepdims:
            g = g.unsqueeze(axis)
        return g * _products_of_others(x, axis)


def _products_of_others(x: Tensor, axis: int) -> Tensor:
    """For each element of ``x``, the product of the other elements of its slice along ``axis`` (recorded)."""
    n = x.shape[axis]
    xp = backend.get_array_module(x.array)
    if n <= 1:
        return _const(xp, xp.ones(x.shape, dtype=x.dtype))  # a constant: no second-order term, as in PyTorch
    head = (slice(None),) * axis
    ones = _const(xp, xp.ones(_kept_shape(x.shape, (axis,)), dtype=x.dtype))
    left = _cat([ones, _cumprod(x[head + (slice(0, n - 1),)], axis)], axis)
    reversed_x = _flip(x, (axis,))
    right = _flip(_cat([ones, _cumprod(reversed_x[head + (slice(0, n - 1),)], axis)], axis), (axis,))
    return left * right


def prod(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """The product of all elements, or along the one dim ``dim``; integers and bools give int64, as in PyTorch.

    ``dtype`` casts the input first. Gradients are exact with zeros in the input.

    Raises:
        TypeError: ``input`` is not a Tensor, ``dim`` is not an int.
        IndexError: ``dim`` is out of range.
    """
    expect_tensor(input, "prod")
    if dtype is not None:
        input = input.to(dtype)
    elif input.dtype.kind in "biu":
        input = input.to(np.int64)
    if dim is None:
        if keepdim:
            raise TypeError("prod(): keepdim needs a dim")
        return write_out(Prod(None, False)(input), out, "prod")
    axis = _one_axis(dim, input.ndim, "prod")
    if input.ndim == 0:
        return write_out(Prod(None, False)(input), out, "prod")
    return write_out(Prod(axis, bool(keepdim))(input), out, "prod")


def _reduces_one_element(shape, axes) -> bool:
    """Whether a reduction of an array of ``shape`` over ``axes`` (None: all) reads one element per result."""
    reduced = shape if axes is None else [shape[a] for a in (axes if isinstance(axes, tuple) else (axes,))]
    return math.prod(reduced) == 1


class VectorNorm(FunctionNode):
    """the p-norm (sum |x|**p)**(1/p) over ``axes`` (None: all); p may be 0, +-inf or any float

    Backward, as PyTorch: zero where the norm is 0 (so the zero vector gets a
    zero gradient, not NaN); the inf-norm's gradient is shared evenly by the
    elements whose magnitude equals the norm.
    """

    def __init__(self, ord, axes, keepdims):
        self.ord = float(ord)
        self.axes = axes
        self.keepdims = keepdims

    def forward(self, a):
        xp, p, axes, keep = self.xp, self.ord, self.axes, self.keepdims
        self.retain_inputs((0,))
        self.retain_outputs((0,))
        self.in_shape = a.shape
        magnitude = xp.abs(a)
        if p == math.inf or p == -math.inf:
            if a.size == 0:
                raise RuntimeError("linalg.vector_norm(): cannot compute the inf-norm of an empty tensor")
            out = magnitude.max(axis=axes, keepdims=keep) if p > 0 else magnitude.min(axis=axes, keepdims=keep)
        elif p == 0:
            out = (a != 0).sum(axis=axes, keepdims=keep).astype(magnitude.dtype)
        elif p == 1 or _reduces_one_element(a.shape, axes):
            # Over one element the norm is that element's magnitude, as PyTorch gives it: squaring first
            # would underflow to 0 for a magnitude below about 1e-154 (float64).
            out = magnitude.sum(axis=axes, keepdims=keep)
        elif p == 2:
            out = xp.sqrt((magnitude * magnitude).sum(axis=axes, keepdims=keep))
        else:
            with np.errstate(divide="ignore"):
                out = ((magnitude**p).sum(axis=axes, keepdims=keep)) ** (1.0 / p)
        return xp.asarray(out, dtype=magnitude.dtype)

    def backward(self, g):
        (x,) = self.saved_inputs
        (norm,) = self.saved_outputs
        xp, p = self.xp, self.ord
        g = _restore(g, self.in_shape, self.axes, self.keepdims)
        norm = _restore(norm, self.in_shape, self.axes, self.keepdims)
        if p == 0:
            return x * 0.0 * g
        if p == 1:
            return g * x.sign()
        norm_zero = _const(xp, norm.array == 0)
        if p == math.inf or p == -math.inf:
            magnitude = xp.abs(x.array)
            mask = (magnitude == norm.array) | xp.isnan(magnitude)
            count = mask.sum(axis=self.axes, keepdims=True).astype(x.dtype)
            return x.sign() * g * _const(xp, mask / count)
        safe_norm = _ew.where(norm_zero, 1.0, norm)
        if p == 2:
            return x * _ew.where(norm_zero, 0.0, g / safe_norm)
        zero = _const(xp, x.array == 0)
        safe_abs = _ew.where(zero, 1.0, x.abs())
        if p < 1:
            scaled = _ew.where(zero, 0.0, x.sign() * safe_abs ** (p - 1))
            return scaled * g * norm ** (1 - p)
        scaled = x.sign() * safe_abs ** (p - 1) if p < 2 else x * safe_abs ** (p - 2)
        return scaled * _ew.where(norm_zero, 0.0, g / safe_norm ** (p - 1))


def _vector_norm(input, p, dim, keepdim, dtype, fn: str):
    if dtype is not None:
        input = input.to(dtype)
    if input.dtype.kind not in "fc":
        raise RuntimeError(
            f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got {input.dtype}"
        )
    if isinstance(p, bool) or not _is_number(p):
        raise RuntimeError(f"{fn}(): the order p must be a number, 'fro' or inf, got {p!r}")
    return VectorNorm(p, _axes(dim, input.ndim, fn), bool(keepdim))(input)


def norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    """The p-norm of ``input`` over ``dim`` (None: every element), as ``torch.norm``.

    ``p``: a number (0, 1, 2, inf, -inf or any float) or ``"fro"`` (the 2-norm
    over ``dim``, at most two dims). The gradient is 0 at the zero vector.

    Raises:
        TypeError: ``input`` is not a Tensor.
        RuntimeError: ``input`` is not floating point; ``p`` is not supported
            (``"nuc"`` needs singular values: NotImplementedError); ``"fro"``
            over more than two dims.
        IndexError: a dim is out of range.
    """
    expect_tensor(input, "norm")
    if isinstance(p, str):
        if p == "nuc":
            raise NotImplementedError("norm(): the nuclear norm ('nuc') is not implemented in minigrad")
        if p != "fro":
            raise RuntimeError(f"norm(): unsupported string order p={p!r} (expected 'fro' or 'nuc')")
        if dim is not None and isinstance(dim, (tuple, list)) and len(dim) > 2:
            raise RuntimeError(f"norm(): 'fro' expects at most two dims, got {dim!r}")
        p = 2.0
    elif p is None:
        p = 2.0
    return write_out(_vector_norm(input, p, dim, keepdim, dtype, "norm"), out, "norm")


def dist(input, other, p=2):
    """``norm(input - other, p)`` over every element (broadcast); the gradient is 0 where they are equal.

    Raises:
        TypeError: an argument is not a Tensor. RuntimeError: not floating point.
    """
    expect_tensor(input, "dist")
    expect_tensor(other, "dist", "other")
    return _vector_norm(input - other, p, None, False, None, "dist")


def logsumexp(input, dim, keepdim=False, *, out=None):
    """log(sum(exp(input))) over ``dim`` (int or tuple), stable: the (detached) max is subtracted first.

    Integer inputs give the default float dtype. An all--inf slice gives -inf.

    Raises:
        TypeError: ``input`` is not a Tensor. IndexError: a dim is out of range.
    """
    expect_tensor(input, "logsumexp")
    expect_flag(keepdim, "logsumexp", "keepdim")
    x = _as_float(input)
    axes = _axes(dim, x.ndim, "logsumexp")
    xp = backend.get_array_module(x.array)
    if x.array.size == 0:
        return write_out((x.exp().sum(axes, keepdim=keepdim)).log(), out, "logsumexp")
    shift = x.array.max(axis=axes, keepdims=True)
    shift = _const(xp, xp.where(xp.isfinite(shift), shift, 0).astype(x.dtype))
    result = (x - shift).exp().sum(axes, keepdim=True).log() + shift
    if not keepdim:
        result = result.reshape(tuple(n for i, n in enumerate(x.shape) if axes is not None and i not in axes))
    return write_out(result, out, "logsumexp")


class AMax(FunctionNode):
    """max (or min) over ``axes`` (None: all); ties share the gradient evenly, as PyTorch's amax/amin

    A NaN result gives NaN gradients to its slice, as in PyTorch.
    """

    nan_shares = False

    def __init__(self, axes, keepdims, largest):
        self.axes = axes
        self.keepdims = keepdims
        self.largest = largest

    def select(self, a):
        """The reduced value with the reduced dims kept."""
        return a.max(axis=self.axes, keepdims=True) if self.largest else a.min(axis=self.axes, keepdims=True)

    def forward(self, a):
        self.in_shape = a.shape
        out = self.select(a)
        mask = a == out
        if self.nan_shares and a.dtype.kind in "fc":
            mask = mask | (self.xp.isnan(a) & self.xp.isnan(out))  # a NaN median: the NaNs share the gradient
        self.weights = mask / mask.sum(axis=self.axes, keepdims=True)
        if self.keepdims:
            return out
        return out.reshape(tuple(n for i, n in enumerate(a.shape) if self.axes is not None and i not in self.axes))

    def backward(self, g):
        g = _restore(g, self.in_shape, self.axes, self.keepdims)
        return g * _const(self.xp, self.weights.astype(g.dtype, copy=False))


def _amax(input, dim, keepdim, out, largest: bool):
    fn = "amax" if largest else "amin"
    expect_tensor(input, fn)
    expect_flag(keepdim, fn, "keepdim")
    axes = _axes(dim, input.ndim, fn)
    reduced = input.array.size if axes is None else math.prod(input.shape[a] for a in axes)
    if reduced == 0 and input.ndim:
        # PyTorch: RuntimeError when reducing everything, IndexError for a named dim of size 0.
        kind = RuntimeError if axes is None else IndexError
        raise kind(f"{fn}(): Expected reduction dim to have non-zero size (got shape {list(input.shape)})")
    return write_out(AMax(axes, bool(keepdim), largest)(input), out, fn)


def amax(input, dim=(), keepdim=False, *, out=None):
    """The maximum over ``dim`` (int or tuple; ``()``: all); ties share the gradient evenly.

    Raises:
        TypeError: ``input`` is not a Tensor. IndexError: a dim is out of range, or a named dim has size 0.
        RuntimeError: every dim is reduced and the tensor is empty (as PyTorch).
    """
    return _amax(input, dim, keepdim, out, True)


def amin(input, dim=(), keepdim=False, *, out=None):
    """The minimum over ``dim`` (see ``amax``)."""
    return _amax(input, dim, keepdim, out, False)


class MedianAll(AMax):
    """the lower median of all elements (NaN if any is NaN); ties (or the NaNs) share the gradient evenly,
    as in PyTorch"""

    nan_shares = True

    def __init__(self):
        super().__init__(None, False, True)

    def select(self, a):
        xp = self.xp
        flat = xp.sort(a.reshape(-1))
        value = flat[(flat.size - 1) // 2]
        if a.dtype.kind in "fc":
            value = xp.where(xp.isnan(flat).any(), xp.asarray(np.nan, dtype=a.dtype), value)
        return xp.asarray(value, dtype=a.dtype).reshape((1,) * a.ndim)


def median(input, dim=None, keepdim=False):
    """The lower median: of all elements (``dim=None``; a 0-d tensor), else ``(values, indices)`` along ``dim``.

    NaN propagates (a slice with NaN has median NaN at its first NaN). Along
    ``dim`` the gradient goes to the chosen index; over all elements it is
    shared by the elements equal to the median, as in PyTorch.

    Raises:
        TypeError: ``input`` is not a Tensor, ``dim`` not an int.
        IndexError: ``dim`` is out of range or empty; an empty integer tensor (an empty float one gives NaN).
    """
    expect_tensor(input, "median")
    if dim is None:
        if input.array.size == 0:
            if input.dtype.kind not in "fc":
                raise IndexError("median(): cannot compute the median of an empty integer tensor")
            xp = backend.get_array_module(input.array)
            return input.sum() + _const(xp, xp.asarray(np.nan, dtype=input.dtype))  # NaN, as in PyTorch
        return MedianAll()(input)
    return _select_along(input, dim, keepdim, "median", _median_index, MedianResult)


_QUANTILE_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):  # noqa: A002
    """The ``q``-th quantiles of ``input``: of all elements (``dim=None``) or along ``dim``.

    PyTorch's algorithm: sort, then read the sorted values at rank
    ``q * (n - 1)`` (computed in ``input``'s dtype), between neighbours by
    ``interpolation``: ``"linear"`` (lerp by the fractional part), ``"lower"``,
    ``"higher"``, ``"midpoint"`` or ``"nearest"`` (half to even). A slice
    holding NaN gives NaN. Differentiable (through the sort and the lerp).

    Args:
        q: a number in [0, 1], or a 0-d or 1-D Tensor of them of ``input``'s dtype.
            A 1-D ``q`` of length k puts a leading dimension of size k on the result.
        dim: the dimension to reduce (None: every element, flattened).
        keepdim: keep the reduced dimension(s) with size 1.

    Raises:
        TypeError: ``input`` is not a Tensor, ``q`` neither a number nor a Tensor, ``keepdim`` not a bool.
        RuntimeError: ``input`` is not floating point or is empty; ``q`` is outside [0, 1], has more
            than one dimension or another dtype; ``interpolation`` is unknown (PyTorch's classes).
        IndexError: ``dim`` is out of range.
    """
    return _quantile(input, q, dim, keepdim, interpolation, out, "quantile")


def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):  # noqa: A002
    """``quantile`` of the values that are not NaN: each slice's ranks are ``q * (m - 1)`` for its ``m``
    non-NaN values (a slice of NaN only gives NaN). Arguments, result and errors as ``quantile``.
    """
    return _quantile(input, q, dim, keepdim, interpolation, out, "nanquantile")


def _quantile(input, q, dim, keepdim, interpolation, out, fn: str):  # noqa: A002
    """``quantile`` (``fn="quantile"``: NaN propagates) or ``nanquantile`` (NaN ignored), as PyTorch computes them."""
    expect_tensor(input, fn)
    expect_flag(keepdim, fn, "keepdim")
    qs, scalar_q = _quantile_ranks(input, q, interpolation, fn)
    x = input.reshape(-1) if dim is None or input.ndim == 0 else input  # a 0-d input: its one element
    (axis,) = normalize_axis(0 if dim is None else dim, x.ndim, fn)
    ordered = x.movedim(axis, -1).sort(-1).values  # NaN last, as PyTorch sorts
    xp = backend.get_array_module(ordered.array)
    last = ordered.shape[-1] - 1
    if fn == "nanquantile":  # ranks per slice, from its count of non-NaN values (0 where there is none)
        count = (~xp.isnan(ordered.array)).sum(axis=-1, keepdims=True).astype(input.dtype)
        ranks = qs * (count - 1)
        ranks = xp.where(ranks < 0, xp.zeros((), dtype=ranks.dtype), ranks)
    else:  # one rank for every slice; a slice holding NaN reads its last (NaN) value
        ranks = xp.broadcast_to(qs * last, ordered.shape[:-1] + qs.shape)
        ranks = xp.where(xp.isnan(ordered.array[..., -1:]), xp.asarray(last, dtype=ranks.dtype), ranks)
    if interpolation == "lower":
        ranks = xp.floor(ranks)
    elif interpolation == "higher":
        ranks = xp.ceil(ranks)
    elif interpolation == "nearest":
        ranks = xp.round(ranks)  # half to even, as PyTorch's round
    below_index = ranks.astype(np.int64)
    result = Gather(ordered.ndim - 1)(ordered, _const(xp, below_index))
    if interpolation in ("linear", "midpoint"):
        weights = xp.full_like(ranks, 0.5) if interpolation == "midpoint" else ranks - below_index
        above = Gather(ordered.ndim - 1)(ordered, _const(xp, xp.ceil(ranks).astype(np.int64)))
        result = lerp(result, above, _const(xp, weights.astype(input.dtype, copy=False)))
    result = result.movedim(-1, 0)
    if keepdim:
        result = result.reshape((len(qs),) + ((1,) * input.ndim if dim is None else _kept(input.shape, axis)))
    result = result.squeeze(0) if scalar_q else result
    return write_out(result, out, fn)


def _kept(shape, axis) -> tuple:
    return tuple(1 if i == axis else n for i, n in enumerate(shape))


def _quantile_ranks(input, q, interpolation, fn: str = "quantile"):
    """``(q as a 1-D array in input's dtype, whether q was a scalar)``, after PyTorch's checks."""
    if input.dtype.kind != "f":
        raise RuntimeError(f"{fn}(): input tensor must be either float or double dtype, got {input.dtype}")
    if input.numel() == 0:
        raise RuntimeError(f"{fn}(): input tensor must be non-empty")
    if interpolation not in _QUANTILE_INTERPOLATIONS:
        raise RuntimeError(f"{fn}(): interpolation must be one of {', '.join(_QUANTILE_INTERPOLATIONS)}, "
                           f"got {interpolation!r}")
    xp = backend.get_array_module(input.array)
    if isinstance(q, Tensor):
        if q.ndim > 1:
            raise RuntimeError(f"{fn}(): q must be a scalar or 1D tensor, got shape {tuple(q.shape)}")
        if q.dtype != input.dtype:
            raise RuntimeError(f"{fn}(): q tensor must be same dtype as the input tensor ({input.dtype}), "
                               f"got {q.dtype}")
        values, scalar = xp.asarray(q.array).reshape(-1), q.ndim == 0
    elif _is_number(q) and not isinstance(q, (bool, complex)):
        values, scalar = xp.asarray([q], dtype=input.dtype), True
    else:
        raise TypeError(f"{fn}(): q must be a number or a Tensor, got {type(q).__name__}")
    if not bool(((values >= 0) & (values <= 1)).all()):
        raise RuntimeError(f"{fn}(): q must be in the range [0, 1], got {backend.to_numpy(values).tolist()}")
    return values, scalar


def _median_index(data, axis):
    """The index of the lower median along ``axis`` (kept), or of the first NaN where there is one."""
    xp = backend.get_array_module(data)
    order = sorted_indices(data, axis, False)
    k = (data.shape[axis] - 1) // 2
    index = order[(slice(None),) * axis + (slice(k, k + 1),)]
    if data.dtype.kind in "fc":
        nan = xp.isnan(data)
        first_nan = xp.expand_dims(nan.argmax(axis=axis), axis)
        index = xp.where(xp.expand_dims(nan.any(axis=axis), axis), first_nan, index)
    return index.astype(np.int64, copy=False)


def _mode_index(data, axis):
    """The index (kept) of the last occurrence of the most frequent value along ``axis`` (smallest among ties).

    Computed with NumPy on the host (a device array makes a round trip).
    """
    host = np.moveaxis(backend.to_numpy(data), axis, -1)
    rows = host.reshape(-1, host.shape[-1])
    order = np.argsort(rows, axis=-1, kind="stable")
    ordered = np.take_along_axis(rows, order, axis=-1)
    positions = np.arange(rows.shape[-1])
    starts = np.ones(ordered.shape, dtype=bool)
    starts[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    run_start = np.maximum.accumulate(np.where(starts, positions, 0), axis=-1)
    best = np.argmax(positions - run_start + 1, axis=-1)  # first position reaching the largest count
    index = np.take_along_axis(order, best[:, None], axis=-1).reshape(host.shape[:-1] + (1,))
    return backend.to_device(np.moveaxis(index, -1, axis).astype(np.int64), backend.device_of(data))


def mode(input, dim=-1, keepdim=False):
    """``(values, indices)``: the most frequent value along ``dim`` (the smallest among equally frequent ones)
    and the index of its last occurrence, as PyTorch on the CPU. The gradient goes to that index.

    Raises:
        TypeError: ``input`` is not a Tensor, ``dim`` not an int.
        IndexError: ``dim`` is out of range or the dim is empty.
    """
    expect_tensor(input, "mode")
    return _select_along(input, dim, keepdim, "mode", _mode_index, ModeResult)


def _select_along(input, dim, keepdim, fn: str, pick, result_type_):
    """``(values, indices)`` of the element ``pick(data, axis)`` chooses in each slice along ``dim``."""
    expect_flag(keepdim, fn, "keepdim")
    axis = _one_axis(dim, input.ndim, fn)
    if input.ndim == 0:
        values, indices = _select_along(input.reshape(1), 0, False, fn, pick, result_type_)
        return result_type_(values.reshape(()), indices.reshape(()))
    if input.shape[axis] == 0:
        raise IndexError(f"{fn}(): Expected reduction dim {dim} to have non-zero size")
    index = pick(input.array, axis)
    values = Gather(axis)(input, Tensor._make(index, False, None, 0))
    if not keepdim:
        values = values.squeeze(axis)
        index = index.squeeze(axis)
    return result_type_(values, Tensor._make(index, False, None, 0))


def count_nonzero(input, dim=None):
    """The number of nonzero elements over ``dim`` (int, tuple or None: all), as int64 (not differentiable).

    Raises:
        TypeError: ``input`` is not a Tensor. IndexError: a dim is out of range.
    """
    expect_tensor(input, "count_nonzero")
    axes = _axes(dim, input.ndim, "count_nonzero")
    data = input.array
    counts = (data != 0).sum(axis=axes).astype(np.int64)
    return Tensor._make(backend.get_array_module(data).asarray(counts), False, None, 0)


class NanSum(FunctionNode):
    """sum over ``axes`` (None: all) counting NaN as zero; the gradient is ``g`` times the not-NaN mask

    (so an infinite output gradient gives NaN at the NaNs, as PyTorch's ``g * ~isnan(x)``).
    """

    def __init__(self, axes, keepdims):
        self.axes = axes
        self.keepdims = keepdims

    def forward(self, a):
        self.in_shape = a.shape
        self.kept = ~self.xp.isnan(a)
        return self.xp.nansum(a, axis=self.axes, keepdims=self.keepdims)

    def backward(self, g):
        return _restore(g, self.in_shape, self.axes, self.keepdims) * _const(self.xp, self.kept)


def nansum(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """The sum over ``dim`` treating NaN as zero (NaN elements get a zero gradient); integers give int64.

    Raises:
        TypeError: ``input`` is not a Tensor. IndexError: a dim is out of range.
    """
    expect_tensor(input, "nansum")
    if dtype is not None:
        input = input.to(dtype)
    axes = _axes(dim, input.ndim, "nansum")
    if input.dtype.kind in "fc":
        return write_out(NanSum(axes, bool(keepdim))(input), out, "nansum")
    if input.dtype.kind in "biu":
        input = input.to(np.int64)
    return write_out(input.sum(axes, keepdim=bool(keepdim)), out, "nansum")


def nanmean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """The mean over ``dim`` of the non-NaN elements (NaN where all are NaN).

    Raises:
        TypeError: ``input`` is not a Tensor.
        RuntimeError: ``input`` is not floating point. IndexError: a dim is out of range.
    """
    expect_tensor(input, "nanmean")
    if dtype is not None:
        input = input.to(dtype)
    if input.dtype.kind not in "fc":
        raise RuntimeError(
            f"nanmean(): expected input to have floating point or complex dtype but got {input.dtype}"
        )
    axes = _axes(dim, input.ndim, "nanmean")
    xp = backend.get_array_module(input.array)
    count = (~xp.isnan(input.array)).sum(axis=axes, keepdims=bool(keepdim)).astype(input.dtype)
    total = nansum(input, dim, keepdim)
    with np.errstate(divide="ignore", invalid="ignore"):
        return write_out(total / _const(xp, count), out, "nanmean")


# == 3. linear algebra ====================================================================================


def _need_dims(t, ndim: int, fn: str, name: str) -> None:
    if t.ndim != ndim:
        what = {1: "a vector", 2: "a matrix", 3: "a 3D tensor"}[ndim]
        raise RuntimeError(f"{fn}(): {name} must be {what}, got a {t.ndim}-D tensor of shape {list(t.shape)}")


def _same_dtype(a, b, fn: str) -> None:
    if a.dtype != b.dtype:
        raise RuntimeError(f"{fn}(): expected both tensors to have the same dtype, but got {a.dtype} and {b.dtype}")


def _check_operands(fn: str, input, other, other_arg: str, ranks: tuple) -> None:
    """``fn``'s two arguments are Tensors (TypeError) of the ranks ``ranks = ((ndim, name), (ndim, name))``
    (RuntimeError; ``name`` is the argument's name in the message)."""
    expect_tensor(input, fn)
    expect_tensor(other, fn, other_arg)
    for t, (ndim, name) in zip((input, other), ranks, strict=True):
        _need_dims(t, ndim, fn, name)


def _check_inner_size(fn: str, matrix, other) -> None:
    """RuntimeError, in PyTorch's words for ``mm`` or ``mv``, when ``matrix``'s columns are not ``other``'s rows."""
    if matrix.shape[1] == other.shape[0]:
        return
    (n, m), k = matrix.shape, other.shape[0]
    if fn == "mm":
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({n}x{m} and {k}x{other.shape[1]})")
    raise RuntimeError(f"size mismatch, got input ({n}), mat ({n}x{m}), vec ({k})")


def _checked_matmul(input, other, fn: str, out) -> Tensor:
    """``input @ other`` once ``fn`` has checked the shapes: the dtypes must match (RuntimeError)."""
    _same_dtype(input, other, fn)
    return write_out(_linalg.MatMul()(input, other), out, fn)


def mm(input, mat2, *, out=None):
    """The matrix product of two 2-D tensors (no broadcasting).

    Raises:
        TypeError: an argument is not a Tensor.
        RuntimeError: not matrices, inner sizes differ, or the dtypes differ.
    """
    _check_operands("mm", input, mat2, "mat2", ((2, "self"), (2, "mat2")))
    _check_inner_size("mm", input, mat2)
    return _checked_matmul(input, mat2, "mm", out)


def bmm(input, mat2, *, out=None):
    """Batched matrix products of (b, n, k) and (b, k, m) tensors (no broadcasting).

    Raises:
        TypeError: an argument is not a Tensor.
        RuntimeError: not 3-D, the batch or inner sizes differ, or the dtypes differ.
    """
    _check_operands("bmm", input, mat2, "mat2", ((3, "batch1"), (3, "batch2")))
    b, n, k = input.shape
    if mat2.shape[:2] != (b, k):
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: [{b}, {k}] but got: "
            f"[{mat2.shape[0]}, {mat2.shape[1]}]."
        )
    return _checked_matmul(input, mat2, "bmm", out)


def mv(input, vec, *, out=None):
    """The product of a matrix (n, m) and a vector (m,).

    Raises:
        TypeError: an argument is not a Tensor. RuntimeError: wrong dims or sizes, or the dtypes differ.
    """
    _check_operands("mv", input, vec, "vec", ((2, "input"), (1, "vec")))
    _check_inner_size("mv", input, vec)
    return _checked_matmul(input, vec, "mv", out)


def dot(input, tensor, *, out=None):
    """The inner product of two 1-D tensors of one size and one dtype.

    Raises:
        TypeError: an argument is not a Tensor. RuntimeError: not 1-D, sizes or dtypes differ.
    """
    expect_tensor(input, "dot")
    expect_tensor(tensor, "dot", "tensor")
    if input.ndim != 1 or tensor.ndim != 1:
        raise RuntimeError(
            f"1D tensors expected, but got {input.ndim}D and {tensor.ndim}D tensors"
        )
    if input.dtype != tensor.dtype:
        raise RuntimeError(
            f"dot : expected both vectors to have same dtype, but found {input.dtype} and {tensor.dtype}"
        )
    if input.shape[0] != tensor.shape[0]:
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{input.shape[0]}] and src [{tensor.shape[0]}] to have "
            f"the same number of elements, but got {input.shape[0]} and {tensor.shape[0]} elements respectively"
        )
    return write_out(_linalg.MatMul()(input, tensor), out, "dot")


def outer(input, vec2, *, out=None):
    """The outer product of two 1-D tensors: ``input[i] * vec2[j]`` (dtypes promoted).

    Raises:
        TypeError: an argument is not a Tensor. RuntimeError: an argument is not 1-D.
    """
    _check_operands("outer", input, vec2, "vec2", ((1, "input"), (1, "vec2")))
    return write_out(input.reshape((-1, 1)) * vec2.reshape((1, -1)), out, "outer")


def cross(input, other, dim=None, *, out=None):
    """The cross product of 3-vectors along ``dim`` (broadcast).

    Without ``dim``, the first dim of size 3 is used, with PyTorch's deprecation warning.

    Raises:
        TypeError: an argument is not a Tensor.
        RuntimeError: ``dim`` does not have size 3 in both; the shapes do not broadcast.
        IndexError: ``dim`` is out of range.
    """
    expect_tensor(input, "cross")
    expect_tensor(other, "cross", "other")
    if input.ndim != other.ndim:
        raise RuntimeError(
            f"linalg.cross: inputs must have the same number of dimensions, got {input.ndim} and {other.ndim}"
        )
    if dim is None:
        warnings.warn(
            "Using torch.cross without specifying the dim arg is deprecated. Please either pass the dim "
            "explicitly or simply use torch.linalg.cross.",
            UserWarning,
            stacklevel=2,
        )
        sizes = [i for i, n in enumerate(input.shape) if n == 3]
        if not sizes:
            raise RuntimeError(f"no dimension of size 3 in input of shape {list(input.shape)}")
        dim = sizes[0]
    axis = _one_axis(dim, input.ndim, "cross")
    if input.shape[axis] != 3 or other.shape[axis] != 3:
        raise RuntimeError(
            f"linalg.cross: inputs dimension {dim} must have length 3. Got {input.shape[axis]} and "
            f"{other.shape[axis]}"
        )
    try:
        np.broadcast_shapes(input.shape, other.shape)
    except ValueError:
        raise RuntimeError(
            f"linalg.cross: shapes {list(input.shape)} and {list(other.shape)} are not broadcastable"
        ) from None
    head = (slice(None),) * axis

    def part(t, i):
        return t[head + (slice(i, i + 1),)]

    a0, a1, a2 = (part(input, i) for i in range(3))
    b0, b1, b2 = (part(other, i) for i in range(3))
    result = _cat([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis)
    return write_out(result, out, "cross")


def _dims_list(dims, ndim: int, fn: str, name: str) -> list:
    out = []
    for d in dims:
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)):
            raise TypeError(f"{fn}(): dims must be ints, got {type(d).__name__}")
        if not -ndim <= d < ndim:
            raise IndexError(f"{fn}(): dim {d} of {name} is out of range for a tensor with {ndim} dimension(s)")
        out.append(int(d) % ndim)
    return out


def tensordot(a, b, dims=2, out=None):
    """Contract ``a`` and ``b`` over ``dims``: an int n (the last n of ``a`` with the first n of ``b``) or a
    pair of dim lists ``([dims of a], [dims of b])``.

    Raises:
        TypeError: an argument is not a Tensor, or ``dims`` is neither an int nor a pair of lists.
        RuntimeError: a negative ``dims``, contracted sizes differ, or the dtypes differ.
        IndexError: a dim is out of range.
    """
    expect_tensor(a, "tensordot", "a")
    expect_tensor(b, "tensordot", "b")
    if isinstance(dims, (int, np.integer)) and not isinstance(dims, bool):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(a.ndim, b.ndim):
            raise RuntimeError(f"tensordot(): dims={dims} exceeds the dimensions of a ({a.ndim}) or b ({b.ndim})")
        dims_a, dims_b = list(range(a.ndim - dims, a.ndim)), list(range(int(dims)))
    elif isinstance(dims, (tuple, list)) and len(dims) == 2:
        first, second = ([d] if isinstance(d, int) else list(d) for d in dims)
        dims_a = _dims_list(first, a.ndim, "tensordot", "a")
        dims_b = _dims_list(second, b.ndim, "tensordot", "b")
    else:
        raise TypeError(f"tensordot(): dims must be an int or a pair of lists of dims, got {dims!r}")
    if len(dims_a) != len(dims_b):
        raise RuntimeError("both dimension lists should have same length")
    for i, j in zip(dims_a, dims_b):
        if a.shape[i] != b.shape[j]:
            raise RuntimeError(
                f"contracted dimensions need to match, but first has size {a.shape[i]} in dim {i} and second has "
                f"size {b.shape[j]} in dim {j}"
            )
    _same_dtype(a, b, "tensordot")
    free_a = [i for i in range(a.ndim) if i not in dims_a]
    free_b = [j for j in range(b.ndim) if j not in dims_b]
    size = math.prod(a.shape[i] for i in dims_a)
    left = a.permute(*free_a, *dims_a).reshape((math.prod(a.shape[i] for i in free_a), size))
    right = b.permute(*dims_b, *free_b).reshape((size, math.prod(b.shape[j] for j in free_b)))
    result = (left @ right).reshape(tuple(a.shape[i] for i in free_a) + tuple(b.shape[j] for j in free_b))
    return write_out(result, out, "tensordot")


def kron(input, other, *, out=None):
    """The Kronecker product: blocks ``input[i...] * other`` (the lower-dim operand gets leading 1s).

    Raises:
        TypeError: an argument is not a Tensor.
    """
    expect_tensor(input, "kron")
    expect_tensor(other, "kron", "other")
    ndim = max(input.ndim, other.ndim)
    shape_a = (1,) * (ndim - input.ndim) + input.shape
    shape_b = (1,) * (ndim - other.ndim) + other.shape
    a = input.reshape(tuple(x for n in shape_a for x in (n, 1)))
    b = other.reshape(tuple(x for n in shape_b for x in (1, n)))
    return write_out((a * b).reshape(tuple(m * n for m, n in zip(shape_a, shape_b))), out, "kron")


def trace(input):
    """The sum of the main diagonal of a 2-D tensor (integers give int64, as ``sum``).

    Raises:
        TypeError: ``input`` is not a Tensor. RuntimeError: ``input`` is not 2-D.
        NotImplementedError: a bool tensor, as in PyTorch.
    """
    expect_tensor(input, "trace")
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim}")
    if input.dtype.kind == "b":
        raise NotImplementedError('"trace" is not implemented for bool tensors (as in PyTorch)')
    if input.dtype.kind in "iu":
        input = input.to(np.int64)
    return _diagonal(input).sum()


def _scaled_sum(input, product, beta, alpha, fn: str):
    """``beta * input + alpha * product``; with ``beta == 0`` the input's values are ignored (NaN included)
    and it gets a zero gradient, as in PyTorch."""
    for name, value in (("beta", beta), ("alpha", alpha)):
        if not _is_number(value):
            raise TypeError(f"{fn}(): argument '{name}' must be a Number, not {type(value).__name__}")
    if product.dtype.kind in "biu" and (isinstance(beta, float) or isinstance(alpha, float)):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")
    scaled = product if alpha == 1 else product * alpha
    if beta == 0:
        xp = backend.get_array_module(scaled.array)
        return _ew.where(_const(xp, xp.ones((), dtype=bool)), scaled, input)
    return (input if beta == 1 else input * beta) + scaled


def _check_input_broadcasts(input, shape, fn: str) -> None:
    try:
        if np.broadcast_shapes(input.shape, shape) != tuple(shape):
            raise ValueError
    except ValueError:
        raise RuntimeError(
            f"{fn}(): the input of shape {list(input.shape)} does not broadcast to the product's shape {list(shape)}"
        ) from None


def addmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * (mat1 @ mat2)`` for matrices; ``input`` broadcasts (ignored when ``beta == 0``).

    Raises:
        TypeError: a tensor argument is not a Tensor, ``alpha``/``beta`` not numbers.
        RuntimeError: as ``mm``; ``input`` does not broadcast to the product.
    """
    expect_tensor(input, "addmm")
    product = mm(mat1, mat2)
    _check_input_broadcasts(input, product.shape, "addmm")
    return write_out(_scaled_sum(input, product, beta, alpha, "addmm"), out, "addmm")


def addmv(input, mat, vec, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * (mat @ vec)``; arguments and errors as ``addmm``."""
    expect_tensor(input, "addmv")
    product = mv(mat, vec)
    _check_input_broadcasts(input, product.shape, "addmv")
    return write_out(_scaled_sum(input, product, beta, alpha, "addmv"), out, "addmv")


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * bmm(batch1, batch2)``; arguments and errors as ``addmm``/``bmm``."""
    expect_tensor(input, "baddbmm")
    product = bmm(batch1, batch2)
    _check_input_broadcasts(input, product.shape, "baddbmm")
    return write_out(_scaled_sum(input, product, beta, alpha, "baddbmm"), out, "baddbmm")


def addcmul(input, tensor1, tensor2, *, value=1, out=None):
    """``input + value * tensor1 * tensor2`` (broadcast).

    Raises:
        TypeError: a tensor argument is not a Tensor or ``value`` not a number.

    With integer tensors a float ``value`` is truncated to an integer, as PyTorch does.
    """
    for name, t in (("input", input), ("tensor1", tensor1), ("tensor2", tensor2)):
        expect_tensor(t, "addcmul", name)
    product = tensor1 * tensor2
    if product.dtype.kind in "biu" and input.dtype.kind in "biu" and isinstance(value, (float, np.floating)):
        value = int(value)  # PyTorch converts the value to the tensors' integer type
    return write_out(input + _scaled(product, value, input, "addcmul", "value"), out, "addcmul")


def addcdiv(input, tensor1, tensor2, *, value=1, out=None):
    """``input + value * tensor1 / tensor2`` (broadcast; true division).

    Raises:
        TypeError: a tensor argument is not a Tensor or ``value`` not a number.
        RuntimeError: ``tensor1`` and ``tensor2`` are both integer (as PyTorch, which refuses integer division).
    """
    for name, t in (("input", input), ("tensor1", tensor1), ("tensor2", tensor2)):
        expect_tensor(t, "addcdiv", name)
    if tensor1.dtype.kind in "biu" and tensor2.dtype.kind in "biu":
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future release addcdiv will perform "
            "a true division of tensor1 and tensor2. Use addcdiv on floating point tensors instead."
        )
    quotient = tensor1 / tensor2
    return write_out(input + _scaled(quotient, value, input, "addcdiv", "value"), out, "addcdiv")


def lerp(input, end, weight, *, out=None):
    """``input + weight * (end - input)``; ``weight`` is a number or a Tensor (broadcast). Floating only.

    Raises:
        TypeError: ``input``/``end`` not Tensors, ``weight`` neither a number nor a Tensor.
        RuntimeError: ``input`` and ``end`` dtypes differ.
        NotImplementedError: integer or bool tensors, as in PyTorch.
    """
    expect_tensor(input, "lerp")
    expect_tensor(end, "lerp", "end")
    if not isinstance(weight, Tensor) and not _is_number(weight):
        raise TypeError(f"lerp(): argument 'weight' must be a Number or a Tensor, not {type(weight).__name__}")
    if input.dtype != end.dtype:
        raise RuntimeError(f"expected dtype {input.dtype} for `end` but got dtype {end.dtype}")
    if input.dtype.kind not in "fc":
        raise NotImplementedError(f'"lerp" is not implemented for {input.dtype} tensors (as in PyTorch)')
    return write_out(input + weight * (end - input), out, "lerp")


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """Pairwise p-norm distances between the rows of ``x1`` (..., P, M) and ``x2`` (..., R, M): (..., P, R).

    Batch dims broadcast. Computed exactly (never through the matrix-product
    shortcut ``compute_mode`` allows), so the gradient at a zero distance is 0.

    Raises:
        TypeError: an argument is not a Tensor.
        RuntimeError: fewer than 2 dims, the column counts differ, ``p`` is negative, not floating point.
    """
    expect_tensor(x1, "cdist", "x1")
    expect_tensor(x2, "cdist", "x2")
    if compute_mode not in (
        "use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist"
    ):
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    if x1.ndim < 2 or x2.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {x1.ndim}D, X2 got: {x2.ndim}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(
            f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}"
        )
    if _is_number(p) and p < 0:
        raise RuntimeError(f"cdist only supports non-negative p values, got {p}")
    for t in (x1, x2):
        _check_float(t, "cdist", "a floating point")
    diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    return _vector_norm(diff, p, -1, False, None, "cdist")


# == 4. elementwise extras ===============================================================================


def frac(input, *, out=None):
    """``input - trunc(input)`` (the sign of ``input``); gradient 1.

    Raises:
        TypeError: ``input`` is not a Tensor. NotImplementedError: integer or bool input, as in PyTorch.
    """
    expect_tensor(input, "frac")
    if input.dtype.kind not in "fc":
        raise NotImplementedError(f'"frac" is not implemented for {input.dtype} tensors (as in PyTorch)')
    return write_out(input - input.trunc(), out, "frac")


def _not_broadcastable(fn: str, input, other) -> RuntimeError:
    """PyTorch's error for two tensors whose shapes do not broadcast (NumPy raises ValueError)."""
    return RuntimeError(f"{fn}(): shapes {tuple(input.shape)} and {tuple(other.shape)} are not broadcastable")


def _compared(fn: str, input, other, greater: bool):
    """The array ``input >= other`` (``<=`` unless ``greater``), or PyTorch's RuntimeError naming both shapes."""
    a, b = input.array, other.array
    try:
        return (a >= b) if greater else (a <= b)
    except ValueError:  # NumPy's, for shapes that do not broadcast
        raise _not_broadcastable(fn, input, other) from None


def _nan_max(input, other, fn: str, largest: bool, out):
    expect_tensor(input, fn)
    expect_tensor(other, fn, "other")
    if input.dtype.kind == "c" or other.dtype.kind == "c":
        raise RuntimeError(f"{fn}() is not implemented for complex tensors")
    a, b = input.array, other.array
    xp = backend.get_array_module(a, b)
    wins = _compared(fn, input, other, largest)
    if b.dtype.kind in "fc":
        wins = wins | xp.isnan(b)
    return write_out(_ew.where(_const(xp, wins), input, other), out, fn)


def fmax(input, other, *, out=None):
    """The elementwise maximum ignoring NaN (NaN only where both are NaN); ties give ``input`` the gradient.

    Raises:
        TypeError: an argument is not a Tensor. RuntimeError: the shapes do not broadcast.
    """
    return _nan_max(input, other, "fmax", True, out)


def fmin(input, other, *, out=None):
    """The elementwise minimum ignoring NaN (see ``fmax``)."""
    return _nan_max(input, other, "fmin", False, out)


class Hypot(FunctionNode):
    """sqrt(a**2 + b**2) without overflow; d/da = a / out, d/db = b / out (NaN at the origin, as PyTorch)"""

    in_dtypes = (None, None)

    def forward(self, a, b):
        a, b = _math._promote(self, a, b)
        self.retain_inputs((0, 1))
        self.retain_outputs((0,))
        return self.xp.hypot(a, b)

    def backward(self, g):
        a, b = self.saved_inputs
        (out,) = self.saved_outputs
        need_a, need_b = self.needs_input_grad
        dtype_a, dtype_b = self.in_dtypes
        scale = g / out
        return (
            unbroadcast(scale * a, shape_of(a), dtype_a) if need_a else None,
            unbroadcast(scale * b, shape_of(b), dtype_b) if need_b else None,
        )


def hypot(input, other, *, out=None):
    """sqrt(input**2 + other**2) elementwise (broadcast), floating point only.

    Raises:
        TypeError: an argument is not a Tensor.
        NotImplementedError: integer inputs (PyTorch has no integer hypot).
    """
    expect_tensor(input, "hypot")
    expect_tensor(other, "hypot", "other")
    if result_type(input, other).kind not in "f":
        raise NotImplementedError(f'"hypot" is not implemented for {result_type(input, other)} tensors')
    return write_out(Hypot()(input, other), out, "hypot")


def deg2rad(input, *, out=None):
    """Degrees to radians (integers and bools give the default float dtype).

    Raises:
        TypeError: ``input`` is not a Tensor.
    """
    expect_tensor(input, "deg2rad")
    return write_out(_as_float(input) * (math.pi / 180.0), out, "deg2rad")


def rad2deg(input, *, out=None):
    """Radians to degrees (integers and bools give the default float dtype). Errors as ``deg2rad``."""
    expect_tensor(input, "rad2deg")
    return write_out(_as_float(input) * (180.0 / math.pi), out, "rad2deg")


HEAVISIDE_GRAD_MESSAGE = "the derivative for 'heaviside' is not implemented."


class Heaviside(FunctionNode):
    """0 below zero, 1 above, ``values`` at zero; recorded like PyTorch's, whose backward raises"""

    def forward(self, a, values):
        xp = self.xp
        zero = xp.zeros((), dtype=a.dtype)
        one = xp.ones((), dtype=a.dtype)
        return xp.where(a == 0, values, xp.where(a > 0, one, zero)).astype(a.dtype, copy=False)

    def backward(self, g):
        raise RuntimeError(HEAVISIDE_GRAD_MESSAGE)


def heaviside(input, values, *, out=None):
    """The step function: 0 where ``input < 0``, 1 where ``> 0``, ``values`` (broadcast) where ``== 0``.

    Not differentiable: its backward raises, as in PyTorch.

    Raises:
        TypeError: an argument is not a Tensor.
        RuntimeError: the dtypes differ, or a complex input.
    """
    expect_tensor(input, "heaviside")
    expect_tensor(values, "heaviside", "values")
    if input.dtype != values.dtype:
        raise RuntimeError(
            f"heaviside is not yet implemented for tensors with different dtypes ({input.dtype} and {values.dtype})"
        )
    if input.dtype.kind == "c":
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")
    return write_out(Heaviside()(input, values), out, "heaviside")


def signbit(input, *, out=None):
    """Whether the sign bit is set (True for -0.0 and negative numbers), as a bool tensor (no gradient).

    Raises:
        TypeError: ``input`` is not a Tensor. RuntimeError: a complex tensor.
    """
    expect_tensor(input, "signbit")
    if input.dtype.kind == "c":
        raise RuntimeError("signbit is not implemented for complex tensors.")
    data = input.array
    xp = backend.get_array_module(data)
    result = xp.signbit(data) if data.dtype.kind in "fiu" else xp.zeros(data.shape, dtype=bool)
    return write_out(Tensor._make(xp.asarray(result), False, None, 0), out, "signbit")


class Copysign(FunctionNode):
    """|a| with the sign (bit) of b; d/da = copysign(1, a) * copysign(1, b) (0 where a == 0), d/db = 0"""

    in_dtypes = (None, None)

    def forward(self, a, b):
        self.shapes = (shape_of(a), shape_of(b))
        a, b = _math._promote(self, a, b, true_divide=True)
        xp = self.xp
        out = xp.copysign(a, b)
        with np.errstate(invalid="ignore", divide="ignore"):
            self.ratio = xp.where(a == 0, xp.zeros((), out.dtype), out / a)
        return out

    def backward(self, g):
        need_a, need_b = self.needs_input_grad
        (shape_a, shape_b), (dtype_a, dtype_b) = self.shapes, self.in_dtypes
        return (
            unbroadcast(g * _const(self.xp, self.ratio), shape_a, dtype_a) if need_a else None,
            unbroadcast(g * 0.0, shape_b, dtype_b) if need_b else None,
        )


def copysign(input, other, *, out=None):
    """``|input|`` with the sign of ``other`` (a Tensor or a number; -0.0 counts as negative).

    Integers give the default float dtype. The gradient of ``other`` is zero.

    Raises:
        TypeError: ``input`` is not a Tensor, ``other`` neither a Tensor nor a number.
    """
    expect_tensor(input, "copysign")
    if not isinstance(other, Tensor) and not _is_number(other):
        raise TypeError(f"copysign(): argument 'other' must be a Tensor or a Number, not {type(other).__name__}")
    return write_out(Copysign()(input, other), out, "copysign")


def _clamp_one(input, bound, fn: str, lower: bool):
    expect_tensor(input, fn)
    if isinstance(bound, Tensor):
        a, b = input.array, bound.array
        xp = backend.get_array_module(a, b)
        keep = _compared(fn, input, bound, lower)
        if a.dtype.kind in "fc":
            keep = keep | xp.isnan(a)
        return _ew.where(_const(xp, keep), input, bound)
    if not _is_number(bound):
        raise TypeError(f"{fn}(): argument '{'min' if lower else 'max'}' must be a Number or a Tensor, "
                        f"not {type(bound).__name__}")
    return _ew.clamp(input, bound, None) if lower else _ew.clamp(input, None, bound)


def clamp_min(input, min, *, out=None):
    """``max(input, min)`` elementwise: ``min`` a number or a Tensor (broadcast); NaN input stays NaN.

    The gradient goes to ``input`` where ``input >= min``, else to a Tensor ``min``.

    Raises:
        TypeError: ``input`` is not a Tensor, ``min`` neither a Tensor nor a number.
        RuntimeError: a Tensor ``min`` does not broadcast with ``input``.
    """
    return write_out(_clamp_one(input, min, "clamp_min", True), out, "clamp_min")


def clamp_max(input, max, *, out=None):
    """``min(input, max)`` elementwise (see ``clamp_min``)."""
    return write_out(_clamp_one(input, max, "clamp_max", False), out, "clamp_max")


def nan_to_num(input, nan=0.0, posinf=None, neginf=None, *, out=None):
    """``input`` with NaN, +inf and -inf replaced (defaults: 0, the dtype's largest and lowest values).

    Non-finite elements get a zero gradient. Integer tensors are returned as a copy.

    Raises:
        TypeError: ``input`` is not a Tensor, a replacement is not a number.
    """
    expect_tensor(input, "nan_to_num")
    for name, value in (("nan", nan), ("posinf", posinf), ("neginf", neginf)):
        if value is not None and not _is_number(value):
            raise TypeError(f"nan_to_num(): argument '{name}' must be a Number, not {type(value).__name__}")
    if input.dtype.kind not in "fc":
        return write_out(input.clone(), out, "nan_to_num")
    data = input.array
    xp = backend.get_array_module(data)
    info = np.finfo(data.dtype)
    posinf = info.max if posinf is None else posinf
    neginf = info.min if neginf is None else neginf
    with np.errstate(over="ignore"):
        replaced = xp.where(xp.isnan(data), data.dtype.type(nan),
                            xp.where(data > 0, data.dtype.type(posinf), data.dtype.type(neginf)))
    result = _ew.where(_const(xp, xp.isfinite(data)), input, _const(xp, replaced.astype(data.dtype)))
    return write_out(result, out, "nan_to_num")


def float_power(input, exponent, *, out=None):
    """``input ** exponent`` computed in float64 (complex128 for complex operands); either may be a number.

    Raises:
        TypeError: neither argument is a Tensor, or one is neither a Tensor nor a number.
    """
    if not isinstance(input, Tensor) and not isinstance(exponent, Tensor):
        raise TypeError("float_power(): expected at least one Tensor argument")
    complex_ = any((isinstance(v, Tensor) and v.dtype.kind == "c") or isinstance(v, complex)
                   for v in (input, exponent))
    dtype = np.dtype(np.complex128 if complex_ else np.float64)

    def widen(v, name):
        if isinstance(v, Tensor):
            return v.to(dtype)
        if not _is_number(v) and not isinstance(v, complex):
            raise TypeError(f"float_power(): argument '{name}' must be a Tensor or a Number, not {type(v).__name__}")
        return complex(v) if complex_ else float(v)

    base, power = widen(input, "input"), widen(exponent, "exponent")
    return write_out(_ew.Pow()(base, power), out, "float_power")


def _integer_binary(input, other, fn: str, out):
    """``xp.<fn>`` (``gcd`` or ``lcm``) of two integer tensors in their promoted dtype, with no gradient."""
    expect_tensor(input, fn)
    expect_tensor(other, fn, "other")
    dtype = result_type(input, other)
    if dtype.kind not in "iu":
        raise NotImplementedError(f'"{fn}" is not implemented for {dtype} tensors (integers only)')
    xp = backend.get_array_module(input.array, other.array)
    try:
        result = getattr(xp, fn)(input.array.astype(dtype, copy=False), other.array.astype(dtype, copy=False))
    except ValueError:
        raise _not_broadcastable(fn, input, other) from None
    return write_out(Tensor._make(xp.asarray(result), False, None, 0), out, fn)


def gcd(input, other, *, out=None):
    """The greatest common divisor elementwise (integer tensors; non-negative; gcd(0, 0) = 0). No gradient.

    Raises:
        TypeError: an argument is not a Tensor. RuntimeError: the shapes do not broadcast.
        NotImplementedError: floating, complex or bool tensors, as in PyTorch.
    """
    return _integer_binary(input, other, "gcd", out)


def absolute(input, *, out=None):
    """``abs(input)``: PyTorch's alias. Raises TypeError when ``input`` is not a Tensor."""
    expect_tensor(input, "absolute")
    return write_out(_ew.Abs()(input), out, "absolute")


def clip(input, min=None, max=None, *, out=None):
    """``clamp(input, min, max)``: PyTorch's alias (number bounds; see ``minigrad.clamp``)."""
    expect_tensor(input, "clip")
    return write_out(_ew.clamp(input, min, max), out, "clip")


def _logaddexp(input, other, fn: str, base2: bool, out):
    expect_tensor(input, fn)
    expect_tensor(other, fn, "other")
    if result_type(input, other).kind not in "fc":
        raise NotImplementedError(f'"{fn}" is not implemented for {result_type(input, other)} tensors')
    a, b = input, other
    xp = backend.get_array_module(a.array, b.array)
    with np.errstate(invalid="ignore"):
        try:
            shift = xp.maximum(a.array, b.array)
        except ValueError:
            raise _not_broadcastable(fn, input, other) from None
    shift = _const(xp, xp.where(xp.isfinite(shift), shift, 0).astype(result_type(a, b)))
    if base2:
        total = (2.0 ** (a - shift) + 2.0 ** (b - shift)).log2()
    else:
        total = ((a - shift).exp() + (b - shift).exp()).log()
    return write_out(total + shift, out, fn)


def logaddexp(input, other, *, out=None):
    """log(exp(input) + exp(other)) elementwise, without overflow (the larger one is factored out).

    Raises:
        TypeError: an argument is not a Tensor. RuntimeError: the shapes do not broadcast.
        NotImplementedError: integer or bool tensors, as in PyTorch.
    """
    return _logaddexp(input, other, "logaddexp", False, out)


def logaddexp2(input, other, *, out=None):
    """log2(2**input + 2**other) elementwise, without overflow. Errors as ``logaddexp``."""
    return _logaddexp(input, other, "logaddexp2", True, out)


class Xlogy(FunctionNode):
    """x * log(y), and 0 where x == 0 (unless y is NaN); d/dx = log(y) (0 where x == y == 0), d/dy = x / y,
    as in PyTorch"""

    in_dtypes = (None, None)

    def forward(self, x, y):
        self.retain_inputs((0, 1))
        x, y = _math._promote(self, x, y, true_divide=True)
        xp = self.xp
        zero = (x == 0) & ~xp.isnan(y)
        with np.errstate(divide="ignore", invalid="ignore"):
            log_y = xp.log(y)
            self.dx = xp.where((x == 0) & (y == 0), xp.zeros((), log_y.dtype), log_y)
            return xp.where(zero, xp.zeros((), log_y.dtype), x * xp.where(zero, 1, log_y))

    def backward(self, g):
        x, y = self.saved_inputs
        need_x, need_y = self.needs_input_grad
        dtype_x, dtype_y = self.in_dtypes
        return (
            unbroadcast(g * _const(self.xp, self.dx), shape_of(x), dtype_x) if need_x else None,
            unbroadcast(g * x / y, shape_of(y), dtype_y) if need_y else None,
        )


def xlogy(input, other, *, out=None):
    """``input * log(other)`` elementwise, 0 where ``input`` is 0 (unless ``other`` is NaN).

    Either argument may be a number (not both); integers give the default float dtype.

    Raises:
        TypeError: neither argument is a Tensor, or one is neither a Tensor nor a number.
    """
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise TypeError("xlogy(): expected at least one Tensor argument")
    for name, value in (("input", input), ("other", other)):
        if not isinstance(value, Tensor) and not _is_number(value):
            raise TypeError(f"xlogy(): argument '{name}' must be a Tensor or a Number, not {type(value).__name__}")
    return write_out(Xlogy()(input, other), out, "xlogy")


def lcm(input, other, *, out=None):
    """The least common multiple elementwise (integer tensors; non-negative; 0 if either is 0). No gradient.

    Errors as ``gcd``.
    """
    return _integer_binary(input, other, "lcm", out)


def sinc(input, *, out=None):
    """sin(pi x) / (pi x) elementwise, 1 at 0 (with gradient 0 there); integers give the default float dtype.

    Raises:
        TypeError: ``input`` is not a Tensor.
    """
    expect_tensor(input, "sinc")
    x = _as_float(input)
    xp = backend.get_array_module(x.array)
    zero = _const(xp, x.array == 0)
    scaled = _ew.where(zero, 1.0, x) * math.pi
    return write_out(_ew.where(zero, 1.0, scaled.sin() / scaled), out, "sinc")


# -- the gamma function family: lgamma, digamma, polygamma ------------------------------------------------
#
# NumPy has none of them. Each is computed with array ops only (so CuPy runs the same code):
# positive arguments are shifted up by the recurrence (Gamma(x + 1) = x Gamma(x), and its
# derivatives) until they reach _ASYMPTOTIC, where the Stirling/asymptotic series is exact to
# about 1e-16 relative; negative ones use the reflection formulas. Lower precisions are computed in
# float64 and rounded. Accuracy: about 1e-14 relative (absolute near the zeros of lgamma at 1 and 2
# and of digamma near 1.46).

_ASYMPTOTIC = 12.0
# B_2k / (2k (2k - 1)) for the Stirling series of lgamma, k = 1..8
_STIRLING = (1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188, -691 / 360360, 1 / 156, -3617 / 122400)
# B_2k for the asymptotic series of digamma and polygamma, k = 1..8
_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510)
_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def _sin_pi(xp, x):
    """|sin(pi x)| without the rounding of pi * x for large x (the fractional part is exact)."""
    f = x - xp.floor(x)
    return xp.sin(math.pi * xp.minimum(f, 1 - f))


def _tan_pi(xp, x):
    """tan(pi x), reduced exactly modulo 1 first."""
    f = x - xp.floor(x)
    return xp.tan(math.pi * xp.where(f > 0.5, f - 1, f))


def _shift_up(xp, x, terms):
    """(y, total): ``y = x + n`` with n the fewest steps making ``y >= _ASYMPTOTIC`` (x >= 0 assumed), and
    ``total`` the sum of ``terms(x + k)`` for k < n."""
    y = x
    total = xp.zeros_like(x)
    steps = int(max(0.0, math.ceil(_ASYMPTOTIC - float(x.min())))) if x.size else 0
    for _ in range(steps):
        low = y < _ASYMPTOTIC
        total = total + xp.where(low, terms(xp.where(low, y, 1.0)), 0.0)
        y = xp.where(low, y + 1.0, y)
    return y, total


def _by_reflection(x, positive, reflect, pole: float):
    """The skeleton that lgamma and digamma share, on a floating array ``x`` (computed in float64 inside:
    the shifts and series cancel digits).

    ``positive(xp, v)`` is the function at finite ``v >= 0``; it is called at ``1 - x`` where ``x`` is
    negative, then ``reflect(xp, x, value)`` turns that value into the one at ``x``. Infinite arguments give
    inf, negative integers ``pole``, NaN stays NaN.
    """
    xp = backend.get_array_module(x)
    dtype, x = x.dtype, x.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        negative = x < 0
        pos = xp.where(negative, 1.0 - x, x)
        pos = xp.where(xp.isnan(pos), 1.0, pos)  # NaN put back at the end
        finite = xp.isfinite(pos)
        value = xp.where(finite, positive(xp, xp.where(finite, pos, _ASYMPTOTIC)), xp.inf)
        is_pole = negative & (x == xp.floor(x))
        result = xp.where(negative, xp.where(is_pole, pole, reflect(xp, x, value)), value)
        return xp.where(xp.isnan(x), x, result).astype(dtype, copy=False)


def _lgamma_positive(xp, v):
    """log Gamma(v) for v >= 0: shifted up past ``_ASYMPTOTIC``, then Stirling's series."""
    y, log_prod = _shift_up(xp, v, lambda w: xp.log(w))
    inv = 1.0 / y
    inv2 = inv * inv
    series = xp.zeros_like(y)
    for c in reversed(_STIRLING):
        series = series * inv2 + c
    return (y - 0.5) * xp.log(y) - y + _HALF_LOG_2PI + series * inv - log_prod


def _lgamma_reflect(xp, x, value):
    """log|Gamma(x)| from log Gamma(1 - x): Gamma(x) Gamma(1 - x) = pi / sin(pi x)."""
    return math.log(math.pi) - xp.log(_sin_pi(xp, x)) - value


def lgamma_array(x):
    """log|Gamma(x)| of a floating array (inf at 0 and the negative integers)."""
    return _by_reflection(x, _lgamma_positive, _lgamma_reflect, math.inf)


def _digamma_positive(xp, v):
    """psi(v) for v >= 0 (-inf at 0): shifted up past ``_ASYMPTOTIC``, then the asymptotic series."""
    zero = v == 0
    y, shift = _shift_up(xp, xp.where(zero, 1.0, v), lambda w: 1.0 / w)
    inv2 = 1.0 / (y * y)
    series = xp.zeros_like(y)
    for k in range(len(_BERNOULLI), 0, -1):
        series = series * inv2 + _BERNOULLI[k - 1] / (2 * k)
    value = xp.log(y) - 0.5 / y - series * inv2 - shift
    return xp.where(zero, -xp.inf, value)


def _digamma_reflect(xp, x, value):
    """psi(x) from psi(1 - x): psi(1 - x) - psi(x) = pi / tan(pi x)."""
    return value - math.pi / _tan_pi(xp, x)


def digamma_array(x):
    """The digamma function psi(x) = d/dx log Gamma(x) of a floating array (-inf at 0, NaN at negative integers)."""
    return _by_reflection(x, _digamma_positive, _digamma_reflect, math.nan)


def _float_factorial(n: int) -> float:
    """``n!`` as a float: inf past the float64 range (large orders give inf or NaN, as in PyTorch)."""
    return float(math.factorial(n)) if n <= 170 else math.inf


def polygamma_array(n: int, x):
    """The n-th derivative of digamma (n >= 1) of a floating array (inf at 0 and the negative integers).

    Negative arguments are shifted up by the recurrence, term by term: the
    cost grows with |x| (about |x| vector operations for the most negative x).
    """
    xp = backend.get_array_module(x)
    dtype, x = x.dtype, x.astype(np.float64)
    sign = 1.0 if n % 2 == 1 else -1.0  # (-1)**(n + 1)
    factorial = _float_factorial(n)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        finite = xp.isfinite(x)
        work = xp.where(finite, x, _ASYMPTOTIC)
        y, shift = _shift_up(xp, work, lambda v: 1.0 / v ** (n + 1))
        inv = 1.0 / y
        inv2 = inv * inv
        series = xp.zeros_like(y)
        for k in range(len(_BERNOULLI), 0, -1):  # B_2k (2k + n - 1)! / (2k)! / y**(2k + n)
            coeff = _BERNOULLI[k - 1] * _float_factorial(2 * k + n - 1) / math.factorial(2 * k)
            series = series * inv2 + coeff
        tail = _float_factorial(n - 1) * inv**n + factorial * 0.5 * inv ** (n + 1) + series * inv2 * inv**n
        value = sign * (tail + factorial * shift)
        value = xp.where(finite, value, xp.where(x > 0, 0.0, xp.nan))
        return xp.where(xp.isnan(x), x, value).astype(dtype, copy=False)


class Lgamma(_FloatingFunction, partial=True):
    """log|Gamma(a)|; d/da = digamma(a)"""

    def compute(self, a):
        return lgamma_array(a)

    def derivative(self, g, a):
        return g * Digamma()(a)


class Digamma(_FloatingFunction, partial=True):
    """digamma(a) = d/da log Gamma(a); d/da = polygamma(1, a)"""

    def compute(self, a):
        return digamma_array(a)

    def derivative(self, g, a):
        return g * Polygamma(1)(a)


class Polygamma(_FloatingFunction, partial=True):
    """polygamma(n, a), the n-th derivative of digamma (n >= 1); d/da = polygamma(n + 1, a)"""

    def __init__(self, n: int):
        self.n = n

    def compute(self, a):
        return polygamma_array(self.n, a)

    def derivative(self, g, a):
        return g * Polygamma(self.n + 1)(a)


def lgamma(input, *, out=None):
    """log|Gamma(input)| elementwise (integers give the default float dtype; inf at the poles).

    Raises:
        TypeError: ``input`` is not a Tensor.
    """
    expect_tensor(input, "lgamma")
    return write_out(Lgamma()(input), out, "lgamma")


def digamma(input, *, out=None):
    """The digamma function (derivative of lgamma) elementwise; -inf at 0, NaN at the negative integers.

    Raises:
        TypeError: ``input`` is not a Tensor.
    """
    expect_tensor(input, "digamma")
    return write_out(Digamma()(input), out, "digamma")


def polygamma(n, input, *, out=None):
    """The ``n``-th derivative of digamma elementwise (``n = 0`` is digamma itself).

    Raises:
        TypeError: ``input`` is not a Tensor, ``n`` is not an int.
        RuntimeError: ``n`` is negative.
    """
    expect_tensor(input, "polygamma")
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"polygamma(): argument 'n' must be an int, not {type(n).__name__}")
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    result = Digamma()(input) if n == 0 else Polygamma(int(n))(input)
    return write_out(result, out, "polygamma")


def _polygamma_method(input, n):
    """``polygamma(n, self)``: PyTorch's method takes ``n`` after ``self``."""
    return polygamma(n, input)


def _float_power_in_place(input, exponent):
    """``float_power`` for ``float_power_``, whose tensor must already be float64 (complex128), as in PyTorch."""
    wanted = "complex128" if input.dtype.kind == "c" or isinstance(exponent, complex) else "float64"
    if input.dtype != np.dtype(wanted):
        raise RuntimeError(
            f"the base given to float_power_ has dtype {input.dtype} but the operation's result requires dtype "
            f"{wanted}"
        )
    return float_power(input, exponent)


# == installation =======================================================================================

OPS = {
    "prod": Prod,
    "vector_norm": VectorNorm,
    "amax": AMax,
    "median_all": MedianAll,
    "nansum": NanSum,
    "xlogy": Xlogy,
    "hypot": Hypot,
    "copysign": Copysign,
    "rounded_div": RoundedDiv,
    "lgamma": Lgamma,
    "digamma": Digamma,
    "polygamma": Polygamma,
}

# function name -> function: exported as minigrad.<name> (each one torch has at its top level)
_FUNCTIONS = {
    f.__name__: f
    for f in (
        add, sub, mul, div, true_divide, neg, softmax, log_softmax,
        var, std, var_mean, std_mean, prod, norm, dist, logsumexp, amax, amin, median, quantile, nanquantile, mode,
        count_nonzero,
        nansum, nanmean,
        mm, bmm, mv, dot, outer, cross, tensordot, kron, trace, addmm, addmv, baddbmm, addcmul, addcdiv, lerp,
        cdist,
        frac, fmax, fmin, hypot, deg2rad, rad2deg, heaviside, signbit, copysign, clamp_min, clamp_max,
        nan_to_num, float_power, gcd, lgamma, digamma, polygamma, absolute, clip, logaddexp, logaddexp2, xlogy,
        lcm, sinc,
    )
}
subtract, multiply, divide, negative = sub, mul, div, neg  # PyTorch's aliases
_FUNCTIONS.update(subtract=sub, multiply=mul, divide=div, negative=neg)

# method name -> function (each one torch.Tensor has)
_METHODS = {
    name: _FUNCTIONS[name]
    for name in (
        "add", "sub", "mul", "div", "true_divide", "neg", "softmax", "log_softmax", "subtract", "multiply",
        "divide", "negative",
        "var", "std", "prod", "norm", "dist", "logsumexp", "amax", "amin", "median", "quantile", "nanquantile",
        "mode",
        "count_nonzero", "nansum", "nanmean",
        "mm", "bmm", "mv", "dot", "outer", "cross", "kron", "trace", "addmm", "addmv", "baddbmm", "addcmul",
        "addcdiv", "lerp",
        "frac", "fmax", "fmin", "hypot", "deg2rad", "rad2deg", "heaviside", "signbit", "copysign", "clamp_min",
        "clamp_max", "nan_to_num", "float_power", "gcd", "lgamma", "digamma", "absolute", "logaddexp",
        "logaddexp2", "xlogy", "lcm", "sinc",
    )
}
_METHODS.update(matmul=_matmul_method, where=_where_method, polygamma=_polygamma_method)

_INPLACE = {
    "addcmul_": addcmul, "addcdiv_": addcdiv, "lerp_": lerp, "addmm_": addmm, "addmv_": addmv,
    "baddbmm_": baddbmm, "frac_": frac, "hypot_": hypot, "deg2rad_": deg2rad, "rad2deg_": rad2deg,
    "copysign_": copysign, "clamp_min_": clamp_min, "clamp_max_": clamp_max, "nan_to_num_": nan_to_num,
    "float_power_": _float_power_in_place, "gcd_": gcd, "lgamma_": lgamma, "digamma_": digamma, "heaviside_": heaviside,
    "polygamma_": _polygamma_method, "absolute_": absolute, "xlogy_": xlogy, "lcm_": lcm, "sinc_": sinc,
}

# the torch-level in-place functions that exist beside the methods
_INPLACE_FUNCTIONS = ("frac_", "deg2rad_", "rad2deg_", "clamp_min_", "clamp_max_", "nan_to_num_", "gcd_", "addmv_",
                      "xlogy_", "lcm_", "sinc_")


def _install() -> dict:
    """Put the methods on Tensor; return the in-place functions to export. Refuses to replace any attribute."""
    methods = {name: _method(fn, name) if "out" in _signature_names(fn) else fn for name, fn in _METHODS.items()}
    methods.update({name: _inplace_method(name, fn) for name, fn in _INPLACE.items()})
    taken = sorted(name for name in methods if hasattr(Tensor, name))
    if taken:
        raise ImportError(f"minigrad.math_forms would replace existing Tensor attributes: {taken}")
    for name, fn in methods.items():
        setattr(Tensor, name, fn)
    return {name: methods[name] for name in _INPLACE_FUNCTIONS}  # in the order of _INPLACE_FUNCTIONS


def _signature_names(fn) -> tuple:
    code = fn.__code__
    return code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]


frac_, deg2rad_, rad2deg_, clamp_min_, clamp_max_, nan_to_num_, gcd_, addmv_, xlogy_, lcm_, sinc_ = _install().values()

__all__ = sorted([*_FUNCTIONS, *_INPLACE_FUNCTIONS])
