"""``Categorical``: one of ``K`` categories drawn with given probabilities (``torch.distributions.Categorical``)."""

from __future__ import annotations

import numpy as np

from minigrad import backend
from minigrad.distributions import constraints
from minigrad.distributions.distribution import (
    Distribution,
    _as_shape,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
)
from minigrad.shape_forms import broadcast_tensors
from minigrad.tensor import Tensor


class Categorical(Distribution):
    """A distribution over the integers ``0 .. K-1``, parameterized by ``probs`` or ``logits``.

    The last dimension of the parameter indexes the ``K`` categories, the
    others are the batch: ``batch_shape = param.shape[:-1]``, ``event_shape = ()``.
    ``probs`` need not sum to 1 (they are divided by their sum); ``logits`` are
    unnormalized log-probabilities (``logsumexp`` is subtracted). The other
    parameterization is computed on first use, differentiably.

    Samples are int64 category indices drawn with the global generator of the
    parameter's device; ``log_prob`` and ``entropy`` are differentiable in the
    parameter, so REINFORCE reads as in PyTorch::

        m = Categorical(probs)
        action = m.sample()
        loss = -m.log_prob(action) * reward
        loss.backward()

    Args:
        probs: non-negative weights, shape ``(*batch, K)`` with ``K >= 1``.
        logits: unnormalized log-probabilities, shape ``(*batch, K)``.
        validate_args: see ``Distribution``.

    Raises:
        ValueError: both or neither of ``probs``/``logits`` given, a 0-d parameter, or (with
            validation) negative or non-finite probabilities, or a value out of range in ``log_prob``.
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(constraints.real, 1)}
    has_enumerate_support = True

    def __init__(self, probs: Tensor | None = None, logits: Tensor | None = None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            if not isinstance(probs, Tensor):
                raise TypeError(f"Categorical: probs must be a Tensor, got {type(probs).__name__}")
            if probs.ndim < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            if not isinstance(logits, Tensor):
                raise TypeError(f"Categorical: logits must be a Tensor, got {type(logits).__name__}")
            if logits.ndim < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(-1, keepdim=True)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.shape[-1]
        super().__init__(tuple(self._param.shape[:-1]), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """This distribution with ``probs``/``logits`` expanded to ``batch_shape + (K,)``."""
        new = self._get_checked_instance(Categorical, _instance)
        self._expand_parameters(new, tuple(batch_shape), ("probs", "logits"), (self._num_events,))
        new._param = new.logits if "logits" in self.__dict__ else new.probs
        new._num_events = self._num_events
        return new

    @lazy_property
    def logits(self) -> Tensor:
        """Normalized log-probabilities (``log`` of the clamped probabilities when given ``probs``)."""
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self) -> Tensor:
        """Normalized probabilities (``softmax`` of the logits when given ``logits``)."""
        return logits_to_probs(self.logits)

    @property
    def param_shape(self) -> tuple:
        """The shape of the parameter: ``batch_shape + (K,)``."""
        return tuple(self._param.shape)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        """The integers ``0 .. K-1``."""
        return constraints.integer_interval(0, self._num_events - 1)

    @property
    def mean(self) -> Tensor:
        """NaN: the categories are labels, not numbers (as PyTorch)."""
        return self._full_nan()

    @property
    def variance(self) -> Tensor:
        """NaN, as ``mean``."""
        return self._full_nan()

    def _full_nan(self) -> Tensor:
        xp = backend.get_array_module(self._param.array)
        with backend.device_context(self._param.device):
            return Tensor(xp.full(self._extended_shape(), np.nan, dtype=self._param.dtype))

    @property
    def mode(self) -> Tensor:
        """The most probable category (the first one on ties), int64."""
        return self.probs.argmax(-1)

    def sample(self, sample_shape=()) -> Tensor:
        """Category indices (int64) of shape ``sample_shape + batch_shape``; no gradient flows."""
        shape = self._extended_shape(sample_shape)
        probs = self.probs.detach().array
        xp = backend.get_array_module(probs)
        with backend.device_context(self._param.device):
            rows = probs.reshape(-1, self._num_events).astype(np.float64)
            cdf = xp.cumsum(rows, axis=-1)
            count = int(np.prod(_as_shape(sample_shape), dtype=np.int64))
            u = backend.generator(self._param.device).random((count, rows.shape[0])) * cdf[:, -1]
            # the first category whose cumulative probability exceeds u (a zero-probability one never does)
            index = (cdf[None, :, :] <= u[:, :, None]).sum(-1)
            index = xp.minimum(index, self._num_events - 1).astype(np.int64)
            return Tensor(index.reshape(shape))

    def log_prob(self, value: Tensor) -> Tensor:
        """``log(probs[..., value])``, broadcasting ``value`` against the batch; differentiable in the parameter."""
        if self._validate_args:
            self._validate_sample(value)
        index = value.long().unsqueeze(-1)
        index, log_pmf = broadcast_tensors(index, self.logits)
        return log_pmf.gather(-1, index[..., :1]).squeeze(-1)

    def entropy(self) -> Tensor:
        """``-sum(p * log p)`` over the categories (categories with p = 0 add 0)."""
        logits = self.logits.clamp(min=float(np.finfo(self.logits.dtype).min))
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        """``0 .. K-1`` along a new leading dimension, expanded over the batch unless ``expand=False``."""
        xp = backend.get_array_module(self._param.array)
        with backend.device_context(self._param.device):
            values = Tensor(xp.arange(self._num_events, dtype=np.int64))
        values = values.reshape(self._num_events, *(1,) * len(self._batch_shape))
        if expand:
            values = values.expand(self._num_events, *self._batch_shape)
        return values
