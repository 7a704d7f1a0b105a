"""``Bernoulli``: 0/1 outcomes with probability ``probs`` of a 1 (``torch.distributions.Bernoulli``)."""

from __future__ import annotations

import numbers

from minigrad import backend
from minigrad.distributions import constraints
from minigrad.distributions.distribution import (
    Distribution,
    _as_shape,
    broadcast_all,
    draw,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
)
from minigrad.nn import functional as F
from minigrad.tensor import Tensor


class Bernoulli(Distribution):
    """A 0/1 outcome that is 1 with probability ``probs`` (or ``sigmoid(logits)``).

    The parameter (number or Tensor) is the batch: ``batch_shape = param.shape``,
    ``event_shape = ()``. Samples are floats (0.0 / 1.0) in the parameter's
    dtype. ``log_prob`` and ``entropy`` are computed from the logits through a
    numerically stable ``binary_cross_entropy_with_logits`` and are
    differentiable in the parameter.

    Args:
        probs: probability of a 1, in [0, 1].
        logits: log-odds of a 1.
        validate_args: see ``Distribution``.

    Raises:
        ValueError: both or neither of ``probs``/``logits`` given, or (with validation) a
            probability outside [0, 1], or a value other than 0/1 in ``log_prob``.
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            is_scalar = isinstance(probs, numbers.Number)
            (self.probs,) = broadcast_all(probs)
        else:
            is_scalar = isinstance(logits, numbers.Number)
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        super().__init__(() if is_scalar else tuple(self._param.shape), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """This distribution with its parameter expanded to ``batch_shape``."""
        new = self._get_checked_instance(Bernoulli, _instance)
        self._expand_parameters(new, _as_shape(batch_shape, "batch_shape"), ("probs", "logits"))
        new._param = new.logits if "logits" in self.__dict__ else new.probs
        return new

    @lazy_property
    def logits(self) -> Tensor:
        """Log-odds ``log(p) - log(1 - p)`` of the clamped probabilities."""
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        """``sigmoid(logits)``."""
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self) -> tuple:
        """The shape of the parameter."""
        return tuple(self._param.shape)

    @property
    def mean(self) -> Tensor:
        """``probs``."""
        return self.probs

    @property
    def mode(self) -> Tensor:
        """1 where ``probs > 1/2``, 0 where below, NaN at exactly 1/2."""
        probs = self.probs
        mode = (probs >= 0.5).to(probs.dtype)
        return mode.masked_fill(probs == 0.5, float("nan"))

    @property
    def variance(self) -> Tensor:
        """``probs * (1 - probs)``."""
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=()) -> Tensor:
        """0/1 floats of shape ``sample_shape + batch_shape``; no gradient flows."""
        shape = self._extended_shape(sample_shape)
        probs = self.probs.detach()
        u = draw("random", shape, probs)
        return (u < probs.expand(*shape)).to(probs.dtype)

    def log_prob(self, value: Tensor) -> Tensor:
        """``value * log(p) + (1 - value) * log(1 - p)``, computed stably from the logits."""
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -F.binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self) -> Tensor:
        """``-p log p - (1 - p) log(1 - p)``."""
        return F.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand: bool = True) -> Tensor:
        """``[0., 1.]`` along a new leading dimension, expanded over the batch unless ``expand=False``."""
        xp = backend.get_array_module(self._param.array)
        with backend.device_context(self._param.device):
            values = Tensor(xp.arange(2, dtype=self._param.dtype))
        values = values.reshape(2, *(1,) * len(self._batch_shape))
        if expand:
            values = values.expand(2, *self._batch_shape)
        return values

