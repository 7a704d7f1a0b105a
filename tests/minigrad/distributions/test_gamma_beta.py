"""``Gamma`` and ``Beta`` against ``torch.distributions`` (scores, moments, gradients) and the reparameterized
sampler's gradient against PyTorch's ``_standard_gamma_grad`` and against finite differences of SciPy's
regularized incomplete gamma function (the exact implicit gradient)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.distributions as TD
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special, stats

import minigrad as mg
import minigrad.distributions as D
from minigrad.distributions.gamma import _standard_gamma_grad_array
from tests.minigrad.distributions.test_distributions import batch_shapes, compare_scalar_program, to_np

SETTINGS = settings(max_examples=15, deadline=None)
# The entropies' gradients go through trigamma (digamma's derivative); PyTorch's CPU trigamma is off by up to
# 6e-10 on [1.2, 10] against SciPy's (minigrad's by 7e-16), so gradients agree to about 1e-9 absolute.
TRIGAMMA_ATOL = 3e-9


@SETTINGS
@given(batch=batch_shapes, seed=st.integers(0, 2**16))
def test_gamma_matches_torch(batch, seed):
    rng = np.random.default_rng(seed)
    c, rate = rng.uniform(0.3, 5.0, batch), rng.uniform(0.3, 3.0, batch)
    value = rng.uniform(0.05, 4.0, (2, *batch))

    def build(lib, c, rate, value):
        m = lib.Gamma(c, rate)
        return m.log_prob(value).sum(0) + m.entropy() + m.mean + m.variance + m.mode * 0.5

    compare_scalar_program(build, (c, rate, value), rtol=1e-9, atol=TRIGAMMA_ATOL)


@SETTINGS
@given(batch=batch_shapes, seed=st.integers(0, 2**16))
def test_beta_matches_torch(batch, seed):
    rng = np.random.default_rng(seed)
    a, b = rng.uniform(1.2, 5.0, batch), rng.uniform(1.2, 5.0, batch)
    value = rng.uniform(0.02, 0.98, (2, *batch))

    def build(lib, a, b, value):
        m = lib.Beta(a, b)
        return m.log_prob(value).sum(0) + m.entropy() + m.mean + m.variance + m.mode

    compare_scalar_program(build, (a, b, value), rtol=1e-9, atol=TRIGAMMA_ATOL)


def test_log_prob_at_the_support_edges_matches_torch():
    c, value = np.array([1.0, 2.0, 0.5]), np.array([0.0, 0.0, 1.5])
    mine, theirs = D.Gamma(mg.tensor(c), mg.tensor(1.5)), TD.Gamma(torch.tensor(c), torch.tensor(1.5))
    np.testing.assert_allclose(to_np(mine.log_prob(mg.tensor(value))), to_np(theirs.log_prob(torch.tensor(value))),
                               atol=1e-12)
    a, x = np.array([1.0, 1.0, 2.0]), np.array([0.0, 1.0, 0.5])
    mine_b, theirs_b = D.Beta(mg.tensor(a), mg.tensor(1.0)), TD.Beta(torch.tensor(a), torch.tensor(1.0))
    np.testing.assert_allclose(to_np(mine_b.log_prob(mg.tensor(x))), to_np(theirs_b.log_prob(torch.tensor(x))),
                               atol=1e-12)


@pytest.mark.parametrize("alpha", [0.05, 0.5, 1.0, 3.0, 40.0, 600.0])
def test_standard_gamma_gradient_is_the_implicit_derivative(alpha):
    rng = np.random.default_rng(0)
    a = np.full(300, alpha)
    x = rng.standard_gamma(a)
    x = x[stats.gamma.pdf(x, alpha) > 1e-250]  # finite differences need a density above underflow
    a = a[: x.size]
    mine = _standard_gamma_grad_array(a, x)
    h = 1e-5 * alpha
    exact = -(special.gammainc(a + h, x) - special.gammainc(a - h, x)) / (2 * h) / stats.gamma.pdf(x, a)
    np.testing.assert_allclose(mine, exact, rtol=2e-6)
    theirs = torch._standard_gamma_grad(torch.tensor(a), torch.tensor(x)).numpy()
    np.testing.assert_allclose(mine, theirs, rtol=2e-3)  # PyTorch's is an approximation of the same derivative


def test_gamma_rsample_statistics_and_pathwise_gradients():
    mg.manual_seed(0)
    c = mg.tensor([0.5, 2.0, 9.0], dtype=mg.float64, requires_grad=True)
    rate = mg.tensor([1.0, 2.0, 0.5], dtype=mg.float64, requires_grad=True)
    x = D.Gamma(c, rate).rsample((40000,))
    assert x.shape == (40000, 3) and x.dtype == np.float64 and (to_np(x) > 0).all()
    assert x.shape == tuple(TD.Gamma(torch.ones(3), torch.ones(3)).rsample((40000,)).shape)
    np.testing.assert_allclose(to_np(x).mean(0), [0.5, 1.0, 18.0], rtol=0.03)
    np.testing.assert_allclose(to_np(x).var(0), [0.5, 0.5, 36.0], rtol=0.05)
    x.mean(0).sum().backward()  # d E[x] / dc = 1 / rate, d E[x] / d rate = -c / rate^2
    np.testing.assert_allclose(to_np(c.grad), [1.0, 0.5, 2.0], rtol=0.03)
    np.testing.assert_allclose(to_np(rate.grad), [-0.5, -0.5, -36.0], rtol=0.03)
    assert not D.Gamma(c, rate).sample().requires_grad
    assert D.Gamma(1.0, 1.0).sample().dtype == np.float32


def test_beta_rsample_statistics_and_pathwise_gradients():
    mg.manual_seed(1)
    a = mg.tensor([0.5, 2.0, 5.0], dtype=mg.float64, requires_grad=True)
    b = mg.tensor([0.5, 3.0, 1.0], dtype=mg.float64, requires_grad=True)
    x = D.Beta(a, b).rsample((40000,))
    arr = to_np(x)
    assert x.shape == (40000, 3) and ((arr >= 0) & (arr <= 1)).all()
    mean = np.array([0.5, 0.4, 5 / 6])
    np.testing.assert_allclose(arr.mean(0), mean, rtol=0.02)
    x.mean(0).sum().backward()  # d E[x] / da = b / (a + b)^2
    np.testing.assert_allclose(to_np(a.grad), [0.5, 3 / 25, 1 / 36], rtol=0.05)
    np.testing.assert_allclose(to_np(b.grad), [-0.5, -2 / 25, -5 / 36], rtol=0.05)


def test_errors_and_expand():
    with pytest.raises(ValueError, match=r"concentration .* GreaterThan\(lower_bound=0.0\)"):
        D.Gamma(mg.tensor([1.0, -1.0]), 1.0)
    with pytest.raises(ValueError, match="within the support"):
        D.Gamma(1.0, 1.0).log_prob(mg.tensor(-1.0))
    with pytest.raises(ValueError, match="within the support"):
        D.Beta(1.0, 1.0).log_prob(mg.tensor(1.5))
    assert repr(D.Gamma(1.0, 2.0)) == repr(TD.Gamma(1.0, 2.0))
    assert D.Beta(mg.tensor([2.0]), mg.tensor([3.0])).expand((4,)).rsample((2,)).shape == (2, 4)
    assert D.Gamma(mg.tensor([2.0]), mg.tensor([3.0])).expand((4,)).batch_shape == (4,)


def test_trigamma_reference_accuracy():
    """The reason for ``TRIGAMMA_ATOL``: minigrad's trigamma matches SciPy's to 1e-14, PyTorch's only to ~1e-9."""
    x = np.linspace(1.2, 10, 500)
    exact = special.polygamma(1, x)
    np.testing.assert_allclose(to_np(mg.polygamma(1, mg.tensor(x))), exact, rtol=0, atol=1e-14)
    assert np.abs(torch.polygamma(1, torch.tensor(x)).numpy() - exact).max() < TRIGAMMA_ATOL
