"""``Normal`` and ``Uniform``: the continuous distributions with location/scale or bounds."""

from __future__ import annotations

import math

from minigrad.distributions import constraints
from minigrad.distributions.distribution import _BroadcastDistribution, draw
from minigrad.ops.elementwise import where
from minigrad.tensor import Tensor

_LOG_SQRT_2PI = math.log(math.sqrt(2 * math.pi))


class Normal(_BroadcastDistribution, parameters=("loc", "scale")):
    """The normal (Gaussian) distribution with mean ``loc`` and standard deviation ``scale``.

    ``loc`` and ``scale`` (numbers or Tensors) broadcast to the batch shape;
    ``event_shape = ()``. ``rsample`` draws ``loc + scale * eps`` with
    ``eps ~ N(0, 1)`` from the global generator, so it is differentiable in
    ``loc`` and ``scale``; ``log_prob``, ``entropy``, ``cdf`` and ``icdf`` are
    differentiable too.

    Args:
        loc: the mean.
        scale: the standard deviation (> 0).
        validate_args: see ``Distribution``.

    Raises:
        ValueError: (with validation) NaN in ``loc``, ``scale <= 0``, or a value of the wrong shape.
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real

    def __init__(self, loc, scale, validate_args=None):
        super().__init__(loc, scale, validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        """``loc``."""
        return self.loc

    @property
    def mode(self) -> Tensor:
        """``loc``."""
        return self.loc

    @property
    def stddev(self) -> Tensor:
        """``scale``."""
        return self.scale

    @property
    def variance(self) -> Tensor:
        """``scale ** 2``."""
        return self.scale.pow(2)

    def rsample(self, sample_shape=()) -> Tensor:
        """``loc + scale * eps`` of shape ``sample_shape + batch_shape``, differentiable in ``loc`` and ``scale``."""
        shape = self._extended_shape(sample_shape)
        eps = draw("standard_normal", shape, self.loc)
        return self.loc + eps * self.scale

    def log_prob(self, value: Tensor) -> Tensor:
        """``-(value - loc)^2 / (2 scale^2) - log(scale) - log(sqrt(2 pi))``."""
        if self._validate_args:
            self._validate_sample(value)
        var = self.scale**2
        return -((value - self.loc) ** 2) / (2 * var) - self.scale.log() - _LOG_SQRT_2PI

    def cdf(self, value: Tensor) -> Tensor:
        """``(1 + erf((value - loc) / (scale sqrt 2))) / 2``."""
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + ((value - self.loc) * self.scale.reciprocal() / math.sqrt(2)).erf())

    def icdf(self, value: Tensor) -> Tensor:
        """The quantile at probability ``value``: ``loc + scale * sqrt(2) * erfinv(2 value - 1)``."""
        return self.loc + self.scale * (2 * value - 1).erfinv() * math.sqrt(2)

    def entropy(self) -> Tensor:
        """``1/2 + log(sqrt(2 pi)) + log(scale)``."""
        return 0.5 + _LOG_SQRT_2PI + self.scale.log()


class Uniform(_BroadcastDistribution, parameters=("low", "high")):
    """The continuous uniform distribution on the half-open interval ``[low, high)``.

    ``low`` and ``high`` (numbers or Tensors) broadcast to the batch shape.
    ``rsample`` draws ``low + u * (high - low)`` with ``u`` uniform in [0, 1),
    differentiable in both bounds. ``log_prob`` is ``-log(high - low)`` inside
    the interval and ``-inf`` outside (when validation is off; with it on, a
    value outside raises ValueError).

    Args:
        low: lower bound (inclusive).
        high: upper bound (exclusive); ``low < high`` everywhere.
        validate_args: see ``Distribution``.

    Raises:
        ValueError: (with validation) ``low >= high`` somewhere, or a value outside ``[low, high]``.
    """

    def __init__(self, low, high, validate_args=None):
        super().__init__(low, high, validate_args=validate_args)

    @property
    def arg_constraints(self) -> dict:
        """``low < high`` and ``high > low``, elementwise."""
        return {"low": constraints.less_than(self.high), "high": constraints.greater_than(self.low)}

    def __repr__(self):
        parts = []
        for name in ("low", "high"):
            value = self.__dict__[name]
            parts.append(f"{name}: {value.item() if value.numel() == 1 else tuple(value.shape)}")
        return f"Uniform({', '.join(parts)})"

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        """The interval ``[low, high]``."""
        return constraints.interval(self.low, self.high)

    @property
    def mean(self) -> Tensor:
        """``(low + high) / 2``."""
        return (self.high + self.low) / 2

    @property
    def mode(self) -> Tensor:
        """NaN: every point of the interval is a mode."""
        return self.high * float("nan")

    @property
    def stddev(self) -> Tensor:
        """``(high - low) / sqrt(12)``."""
        return (self.high - self.low) / 12**0.5

    @property
    def variance(self) -> Tensor:
        """``(high - low)^2 / 12``."""
        return (self.high - self.low).pow(2) / 12

    def rsample(self, sample_shape=()) -> Tensor:
        """``low + u * (high - low)`` with ``u`` uniform in [0, 1); differentiable in both bounds."""
        shape = self._extended_shape(sample_shape)
        u = draw("random", shape, self.low)
        return self.low + u * (self.high - self.low)

    def log_prob(self, value: Tensor) -> Tensor:
        """``-log(high - low)`` for ``low <= value < high``, ``-inf`` elsewhere."""
        if self._validate_args:
            self._validate_sample(value)
        inside = (self.low <= value) & (self.high > value)
        outside_penalty = where(inside, self.low.new_zeros(()), self.low.new_full((), -math.inf))
        return outside_penalty - (self.high - self.low).log()

    def cdf(self, value: Tensor) -> Tensor:
        """``(value - low) / (high - low)`` clamped to [0, 1]."""
        if self._validate_args:
            self._validate_sample(value)
        return ((value - self.low) / (self.high - self.low)).clamp(0, 1)

    def icdf(self, value: Tensor) -> Tensor:
        """``low + value * (high - low)``."""
        return value * (self.high - self.low) + self.low

    def entropy(self) -> Tensor:
        """``log(high - low)``."""
        return (self.high - self.low).log()
