"""``kl_divergence(p, q)``: the Kullback-Leibler divergence between two distributions, by registered formulas.

Formulas are registered per pair of types with ``register_kl``; a lookup
picks the most specific registered pair for ``(type(p), type(q))`` (by
method resolution order) and caches it. Pairs without a formula raise
NotImplementedError, as in PyTorch.
"""

from __future__ import annotations

import math

from minigrad.distributions.bernoulli import Bernoulli
from minigrad.distributions.categorical import Categorical
from minigrad.distributions.distribution import Distribution
from minigrad.distributions.normal import Normal, Uniform
from minigrad.nn import functional as F
from minigrad.ops.elementwise import where
from minigrad.tensor import Tensor

_KL_REGISTRY: dict = {}
_KL_MEMO: dict = {}


def register_kl(type_p: type, type_q: type):
    """Decorator registering ``fn(p, q)`` as the KL divergence of a ``type_p`` from a ``type_q``.

    Raises:
        TypeError: a type is not a subclass of ``Distribution``.
    """
    for cls in (type_p, type_q):
        if not (isinstance(cls, type) and issubclass(cls, Distribution)):
            raise TypeError(f"register_kl expects subclasses of Distribution, but got {cls!r}")

    def decorator(fn):
        _KL_REGISTRY[type_p, type_q] = fn
        _KL_MEMO.clear()
        return fn

    return decorator


def _dispatch(type_p: type, type_q: type):
    """The formula registered for the most specific pair of supertypes of ``(type_p, type_q)``, or None."""
    matches = [
        (type_p.__mro__.index(p), type_q.__mro__.index(q), fn)
        for (p, q), fn in _KL_REGISTRY.items()
        if issubclass(type_p, p) and issubclass(type_q, q)
    ]
    if not matches:
        return None
    return min(matches, key=lambda m: (m[0], m[1]))[2]


def kl_divergence(p: Distribution, q: Distribution) -> Tensor:
    """``KL(p || q) = E_p[log p(x) - log q(x)]``, batched (shape: the broadcast batch shape).

    Raises:
        NotImplementedError: no formula is registered for ``(type(p), type(q))``.
    """
    key = (type(p), type(q))
    if key not in _KL_MEMO:
        _KL_MEMO[key] = _dispatch(*key)
    fn = _KL_MEMO[key]
    if fn is None:
        raise NotImplementedError(
            f"No KL(p || q) is implemented for p type {type(p).__name__} and q type {type(q).__name__}"
        )
    return fn(p, q)


def _inf_like(t: Tensor, sign: float = 1.0) -> Tensor:
    return t.new_full((), sign * math.inf)


@register_kl(Normal, Normal)
def _kl_normal_normal(p: Normal, q: Normal) -> Tensor:
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p: Categorical, q: Categorical) -> Tensor:
    terms = p.probs * (p.logits - q.logits)
    terms = where((q.probs == 0).expand_as(terms), _inf_like(terms), terms)  # mass where q has none
    terms = where((p.probs == 0).expand_as(terms), terms.new_zeros(()), terms)  # 0 log 0 = 0
    return terms.sum(-1)


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p: Bernoulli, q: Bernoulli) -> Tensor:
    t1 = p.probs * (F.softplus(-q.logits) - F.softplus(-p.logits))
    t1 = where(q.probs == 0, _inf_like(t1), t1)
    t1 = where(p.probs == 0, t1.new_zeros(()), t1)
    t2 = (1 - p.probs) * (F.softplus(q.logits) - F.softplus(p.logits))
    t2 = where(q.probs == 1, _inf_like(t2), t2)
    t2 = where(p.probs == 1, t2.new_zeros(()), t2)
    return t1 + t2


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p: Uniform, q: Uniform) -> Tensor:
    result = ((q.high - q.low) / (p.high - p.low)).log()
    outside = (q.low > p.low) | (q.high < p.high)  # p puts mass where q has none
    return where(outside, _inf_like(result), result)

