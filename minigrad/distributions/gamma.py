"""``Gamma`` and ``Beta``: the continuous distributions on (0, inf) and (0, 1) with shape parameters.

Both have reparameterized samplers. A Gamma sample ``x`` of shape ``a`` is
drawn by NumPy's/CuPy's generator; its gradient with respect to ``a`` is the
implicit reparameterization gradient ``dx/da = -(dP/da)(a, x) / p(x; a)``
(``P`` the regularized lower incomplete gamma function, ``p`` the density),
computed here from the power series of ``P``, which after the common factors
cancel reads::

    dx/da = -(x / a) * sum_n t_n * (log x - psi(a + n + 1)),   t_0 = 1,  t_n = t_{n-1} * x / (a + n)

It enters the graph as ``x + c * (a - a.detach())`` with ``c = dx/da`` held
constant: the value is ``x`` and the gradient ``c``, made of recorded ops
(like PyTorch's, this gradient is not differentiable again). A Beta sample is
``g1 / (g1 + g0)`` of two Gamma samples, so its gradient follows from theirs.
"""

from __future__ import annotations

import numpy as np

from minigrad import backend
from minigrad.distributions import constraints
from minigrad.distributions.distribution import _BroadcastDistribution
from minigrad.math_forms import digamma, digamma_array, lgamma
from minigrad.ops.elementwise import where
from minigrad.tensor import Tensor

_MAX_SERIES_TERMS = 100_000


def _standard_gamma_grad_array(alpha, x):
    """``dx/dalpha`` of standard Gamma samples ``x`` of shapes ``alpha`` (arrays of the same shape)."""
    xp = backend.get_array_module(alpha)
    a, x = alpha.astype(np.float64), x.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        log_x = xp.log(x)
        psi = digamma_array(a + 1.0)
        term = xp.ones_like(a)
        total = log_x - psi
        n = 0
        while n < _MAX_SERIES_TERMS:
            n += 1
            term = term * x / (a + n)
            psi = psi + 1.0 / (a + n)
            contribution = term * (log_x - psi)
            total = total + contribution
            # stop once the terms are decreasing and negligible everywhere
            if n > 8 and bool(xp.all((x < a + n) & (xp.abs(contribution) <= 1e-17 * xp.abs(total)))):
                break
        grad = -(x / a) * total
        grad = xp.where(x > 0, grad, 0.0)
    return grad.astype(alpha.dtype, copy=False)


def _standard_gamma(concentration: Tensor) -> Tensor:
    """Gamma(concentration, 1) samples of ``concentration``'s shape, reparameterized (see the module docstring)."""
    device = concentration.device
    alpha = concentration.detach().array
    dtype = alpha.dtype
    if dtype.kind != "f":
        # PyTorch's class: its sampling kernel is "not implemented" for integer dtypes.
        raise NotImplementedError(f"Gamma sampling: the concentration must be floating point, got {dtype}")
    with backend.device_context(device):
        xp = backend.get_array_module(alpha)
        draws = xp.asarray(backend.generator(device).standard_gamma(alpha.astype(np.float64))).astype(dtype)
        tiny = np.finfo(dtype).tiny
        draws = xp.maximum(draws, tiny)  # never exactly 0: log_prob stays finite
        sample = Tensor(draws)
        if not concentration.requires_grad:
            return sample
        slope = Tensor(_standard_gamma_grad_array(alpha, draws))
    return sample + slope * (concentration - concentration.detach())


def _xlogy(x: Tensor, y: Tensor) -> Tensor:
    """``x * log(y)``, 0 where ``x == 0`` (also when ``y == 0``), as ``torch.xlogy``."""
    zero = x == 0
    with np.errstate(divide="ignore"):  # log(0) = -inf is the answer at the support's edge, as PyTorch's
        return where(zero, x.new_zeros(()), x * where(zero, y.new_ones(()), y).log())


class Gamma(_BroadcastDistribution, parameters=("concentration", "rate")):
    """The Gamma distribution with shape ``concentration`` and inverse scale ``rate``.

    Density ``rate^c x^(c-1) exp(-rate x) / Gamma(c)`` on x > 0. ``rsample`` is
    differentiable in both parameters (implicit reparameterization, see the
    module docstring); ``log_prob`` and ``entropy`` are differentiable too.
    Not reproduced: ``cdf`` (PyTorch's uses ``torch.special.gammainc``).

    Args:
        concentration: shape ``c > 0``.
        rate: inverse scale ``rate > 0``.
        validate_args: see ``Distribution``.

    Raises:
        ValueError: (with validation) a non-positive parameter, or a negative value in ``log_prob``.
    """

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative

    def __init__(self, concentration, rate, validate_args=None):
        super().__init__(concentration, rate, validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        """``concentration / rate``."""
        return self.concentration / self.rate

    @property
    def mode(self) -> Tensor:
        """``(concentration - 1) / rate``, or 0 when ``concentration < 1``."""
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self) -> Tensor:
        """``concentration / rate^2``."""
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=()) -> Tensor:
        """Samples of shape ``sample_shape + batch_shape``, differentiable in both parameters."""
        shape = self._extended_shape(sample_shape)
        return _standard_gamma(self.concentration.expand(*shape)) / self.rate.expand(*shape)

    def log_prob(self, value: Tensor) -> Tensor:
        """``c log(rate) + (c - 1) log(value) - rate value - lgamma(c)``."""
        if self._validate_args:
            self._validate_sample(value)
        c, rate = self.concentration, self.rate
        return _xlogy(c, rate) + _xlogy(c - 1, value) - rate * value - lgamma(c)

    def entropy(self) -> Tensor:
        """``c - log(rate) + lgamma(c) + (1 - c) digamma(c)``."""
        c = self.concentration
        return c - self.rate.log() + lgamma(c) + (1.0 - c) * digamma(c)


class Beta(_BroadcastDistribution, parameters=("concentration1", "concentration0")):
    """The Beta distribution on (0, 1) with shapes ``concentration1`` (alpha) and ``concentration0`` (beta).

    Density ``x^(a-1) (1-x)^(b-1) / B(a, b)``. ``rsample`` draws ``g1 / (g1 + g0)``
    from two Gamma samples and is differentiable in both parameters; its
    per-sample gradients differ from PyTorch's (which differentiates the Beta
    CDF implicitly) while having the same expectation.

    Args:
        concentration1: alpha > 0.
        concentration0: beta > 0.
        validate_args: see ``Distribution``.

    Raises:
        ValueError: (with validation) a non-positive parameter, or a value outside [0, 1].
    """

    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval

    def __init__(self, concentration1, concentration0, validate_args=None):
        super().__init__(concentration1, concentration0, validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        """``a / (a + b)``."""
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self) -> Tensor:
        """``(a - 1) / (a + b - 2)`` (meaningful for a, b > 1)."""
        return (self.concentration1 - 1) / (self.concentration1 + self.concentration0 - 2)

    @property
    def variance(self) -> Tensor:
        """``a b / ((a + b)^2 (a + b + 1))``."""
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape=()) -> Tensor:
        """Samples in (0, 1) of shape ``sample_shape + batch_shape``, differentiable in both parameters."""
        shape = self._extended_shape(sample_shape)
        g1 = _standard_gamma(self.concentration1.expand(*shape))
        g0 = _standard_gamma(self.concentration0.expand(*shape))
        return g1 / (g1 + g0)

    def log_prob(self, value: Tensor) -> Tensor:
        """``(a-1) log x + (b-1) log(1-x) - lgamma(a) - lgamma(b) + lgamma(a+b)``."""
        if self._validate_args:
            self._validate_sample(value)
        a, b = self.concentration1, self.concentration0
        return (_xlogy(a - 1, value) + _xlogy(b - 1, 1 - value) + lgamma(a + b) - lgamma(a) - lgamma(b))

    def entropy(self) -> Tensor:
        """The differential entropy ``log B(a, b) - (a-1) psi(a) - (b-1) psi(b) + (a+b-2) psi(a+b)``."""
        a, b = self.concentration1, self.concentration0
        total = a + b
        log_beta = lgamma(a) + lgamma(b) - lgamma(total)
        return log_beta - (a - 1) * digamma(a) - (b - 1) * digamma(b) + (total - 2) * digamma(total)
