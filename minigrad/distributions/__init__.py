"""Probability distributions (``mg.distributions``), as ``torch.distributions``.

``Categorical``, ``Bernoulli``, ``Normal``, ``Uniform``, ``Gamma`` and ``Beta``, with
``sample``/``rsample`` (drawn from the global generator that ``mg.manual_seed``
seeds), differentiable ``log_prob``/``entropy``/``cdf``/``icdf``, argument
validation with PyTorch's messages, and ``kl_divergence`` for the pairs
Normal-Normal, Categorical-Categorical, Bernoulli-Bernoulli and Uniform-Uniform.
The policy-gradient idiom ports unchanged::

    from minigrad.distributions import Categorical
    m = Categorical(policy(state))
    action = m.sample()
    loss = -m.log_prob(action) * reward
    loss.backward()

Samples come from NumPy's/CuPy's generators, so their values differ from
PyTorch's for the same seed; their distribution, shapes and dtypes agree.
"""

from minigrad.distributions import constraints
from minigrad.distributions.bernoulli import Bernoulli
from minigrad.distributions.categorical import Categorical
from minigrad.distributions.distribution import Distribution
from minigrad.distributions.gamma import Beta, Gamma
from minigrad.distributions.kl import kl_divergence, register_kl
from minigrad.distributions.normal import Normal, Uniform

__all__ = [
    "Bernoulli", "Beta", "Categorical", "Distribution", "Gamma", "Normal", "Uniform", "constraints", "kl_divergence",
    "register_kl",
]
