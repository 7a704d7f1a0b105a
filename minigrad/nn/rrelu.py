"""The randomized leaky ReLU: ``rrelu``, ``rrelu_`` (``torch.nn.functional``) and the layer ``RReLU``.

x where x > 0, else a * x. In training each element draws its own slope a
from U(lower, upper) (minigrad's generator of the input's device, so
``mg.manual_seed`` makes it reproducible; the draws differ from PyTorch's),
and the gradient uses the slopes drawn; in evaluation a = (lower + upper) / 2
for every element, as ``leaky_relu`` with that slope (gradient a at 0).
Compositions of registered ops (a product with the drawn slopes, or
``where``), so gradients of every order come from them.
"""

from __future__ import annotations

import math

import numpy as np

from minigrad import backend
from minigrad.nn.loss_utils import mask
from minigrad.nn.pointwise_activations import _InplaceActivation, in_place
from minigrad.ops import elementwise
from minigrad.ops._util import expect_flag, expect_tensor
from minigrad.tensor import Tensor

__all__ = ["rrelu", "rrelu_", "RReLU"]


def _bound(fn: str, name: str, value) -> float:
    """A slope bound as a float: a real number or a 0-d real Tensor (as PyTorch's Number), else TypeError."""
    if isinstance(value, Tensor) and value.ndim == 0 and value.dtype.kind in "biuf":
        return float(value.item())
    if not isinstance(value, (int, float, np.integer, np.floating, np.bool_)):
        raise TypeError(f"{fn}(): argument '{name}' must be a real number, got {type(value).__name__}")
    return float(value)


def _slopes(fn: str, input, lower, upper, training) -> tuple:  # noqa: A002
    """Check the arguments in PyTorch's order; returns (lower, upper, training) as floats and a bool.

    Raises:
        TypeError: ``input`` is not a Tensor, a bound is not a number, ``training`` is not a bool.
        RuntimeError: a bound is not finite or does not fit the input's dtype, or ``lower`` > ``upper``.
        NotImplementedError: the input is not floating point.
    """
    expect_tensor(input, fn, "input")
    lower, upper = _bound(fn, "lower", lower), _bound(fn, "upper", upper)
    training = expect_flag(training, fn, "training")
    for name, value in (("lower", lower), ("upper", upper)):
        if not math.isfinite(value):
            raise RuntimeError(f"{fn}(): the {name} bound must be finite, got {value}")
    if lower > upper:
        raise RuntimeError(f"{fn}(): the lower bound must be at most the upper bound, got lower={lower}, upper={upper}")
    if input.dtype.kind != "f":
        raise NotImplementedError(f"{fn}(): not implemented for dtype {input.dtype} (floating point input only)")
    largest = float(np.finfo(input.dtype).max)
    for name, value in (("lower", lower), ("upper", upper)):
        if abs(value) > largest:
            raise RuntimeError(f"{fn}(): {name}={value} cannot be converted to {input.dtype} without overflow")
    return lower, upper, training


def _activation(x: Tensor, lower: float, upper: float, training: bool):
    """The function x -> rrelu(x) for tensors shaped like ``x``, its random slopes drawn now (once)."""
    if not training:
        slope = (lower + upper) / 2
        return lambda t: elementwise.where(mask(t.array > 0), t, t * slope)
    xp = backend.get_array_module(x.array)
    draw_dtype = x.dtype if x.dtype in (np.float32, np.float64) else np.float32
    uniform = backend.generator(backend.device_of(x.array)).random(x.shape, dtype=draw_dtype)
    slopes = (lower + (upper - lower) * uniform).astype(x.dtype, copy=False)
    # Positive elements keep slope 1 (NaN too, as in PyTorch, whose test is x <= 0).
    noise = Tensor._make(xp.where(x.array <= 0, slopes, xp.ones((), dtype=x.dtype)), False, None, 0)
    return lambda t: t * noise


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):  # noqa: A002  (PyTorch's names)
    """x where x > 0, else a * x: a drawn from U(lower, upper) per element in training, (lower + upper) / 2 in eval.

    Args:
        input: a floating point Tensor of any shape.
        lower, upper: the range of the random slopes (default 1/8 and 1/3).
        training: draw random slopes (True) or use their mean (False, the default).
        inplace: overwrite ``input`` (through ``minigrad.inplace``, recorded for autograd) and return it.

    Returns:
        A Tensor of ``input``'s shape and dtype (``input`` itself when ``inplace``).

    Raises:
        TypeError: ``input`` is not a Tensor, a bound is not a number, or ``training`` is not a bool.
        RuntimeError: a bound is not finite or too large for the dtype, ``lower`` > ``upper``, or
            ``inplace`` on a leaf that requires grad (in grad mode).
        NotImplementedError (PyTorch's type): the input is not floating point.
    """
    fn = "rrelu_" if inplace else "rrelu"
    lower, upper, training = _slopes(fn, input, lower, upper, training)
    op = _activation(input, lower, upper, training)
    return in_place(fn, input, op) if inplace else op(input)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):  # noqa: A002
    """``rrelu`` written into ``input``; returns ``input``.

    Raises ``rrelu``'s errors; RuntimeError in grad mode when ``input`` is a leaf that
    requires grad (or a view of one).
    """
    return rrelu(input, lower, upper, training, inplace=True)


class RReLU(_InplaceActivation):
    """The randomized leaky ReLU: random slopes in U(lower, upper) in training, their mean in eval.

    Args:
        lower, upper: the range of the slopes (default 1/8 and 1/3); checked when called, as in PyTorch.
        inplace: overwrite the input (default False).

    Shapes: any; the output has the input's shape. See ``rrelu``.
    """

    _settings = ("lower", "upper")

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3, inplace: bool = False):
        super().__init__(inplace)
        self.lower = lower
        self.upper = upper

    def forward(self, input):  # noqa: A002
        """``rrelu(input, lower, upper, self.training, inplace)``."""
        return rrelu(input, self.lower, self.upper, self.training, self.inplace)
