"""``minigrad.distributions`` against ``torch.distributions`` as oracle.

Deterministic quantities (``log_prob``, ``entropy``, ``cdf``, ``icdf``,
moments, ``kl_divergence``) are compared in float64, values and gradients,
on the same parameters. Samples cannot match across libraries (different
generators), so their shapes and dtypes are compared with PyTorch's and their
statistics with the exact moments.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.distributions as TD
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad as mg
import minigrad.distributions as D

SETTINGS = settings(max_examples=15, deadline=None)


def to_np(t):
    return t.detach().numpy() if isinstance(t, torch.Tensor) else mg.backend.to_numpy(t.array)


def close(mine, theirs, rtol=1e-10, atol=1e-12):
    a, b = to_np(mine), to_np(theirs)
    assert a.shape == b.shape, (a.shape, b.shape)
    assert a.dtype == b.dtype, (a.dtype, b.dtype)
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True)


def leaves(*arrays):
    """float64 leaves requiring grad in both libraries (integer arrays as plain tensors)."""
    mine, theirs = [], []
    for a in arrays:
        a = np.asarray(a)
        grad = a.dtype.kind == "f"
        mine.append(mg.tensor(a, requires_grad=grad))
        theirs.append(torch.tensor(a, requires_grad=grad))
    return mine, theirs


def compare_scalar_program(build, arrays, rtol=1e-10, atol=1e-12):
    """``build(lib_distributions, *leaves)`` -> Tensor in each library: compare values and leaf gradients."""
    mine, theirs = leaves(*arrays)
    out, tout = build(D, *mine), build(TD, *theirs)
    close(out, tout, rtol, atol)
    g = np.random.default_rng(1).standard_normal(tuple(tout.shape))
    out.backward(mg.tensor(g))
    tout.backward(torch.tensor(g))
    for m, t in zip(mine, theirs):
        if t.requires_grad:
            close(m.grad, t.grad, rtol, atol)


batch_shapes = st.lists(st.integers(1, 3), min_size=0, max_size=2).map(tuple)


# -- Categorical ---------------------------------------------------------------------------------


@SETTINGS
@given(batch=batch_shapes, k=st.integers(1, 5), seed=st.integers(0, 2**16), use_logits=st.booleans())
def test_categorical_log_prob_entropy_match_torch(batch, k, seed, use_logits):
    rng = np.random.default_rng(seed)
    param = rng.standard_normal((*batch, k)) if use_logits else rng.uniform(0.05, 2.0, (*batch, k))
    value = rng.integers(0, k, (2, *batch))
    key = "logits" if use_logits else "probs"

    def build(lib, p, v):
        m = lib.Categorical(**{key: p})
        return m.log_prob(v).sum() * 3 + m.entropy().sum() + (m.probs * m.logits.exp()).sum()

    compare_scalar_program(build, (param, value))
    mine, theirs = D.Categorical(**{key: mg.tensor(param)}), TD.Categorical(**{key: torch.tensor(param)})
    assert mine.batch_shape == tuple(theirs.batch_shape) and mine.event_shape == ()
    assert mine.param_shape == tuple(theirs.param_shape)
    close(mine.probs, theirs.probs)
    close(mine.logits, theirs.logits)
    close(mine.mode, theirs.mode)
    close(mine.mean, theirs.mean)
    close(mine.variance, theirs.variance)
    close(mine.enumerate_support(), theirs.enumerate_support())
    close(mine.enumerate_support(expand=False), theirs.enumerate_support(expand=False))


def test_categorical_reinforce_idiom():
    """Policy gradient: the loss of a sampled action backpropagates into the network's weights."""
    mg.manual_seed(0)
    rng = np.random.default_rng(0)
    w, x = rng.standard_normal((4, 3)), rng.standard_normal((5, 4))
    mw, tw = mg.tensor(w, requires_grad=True), torch.tensor(w, requires_grad=True)
    probs = (mg.tensor(x) @ mw).softmax(-1)
    m = D.Categorical(probs)
    action = m.sample()
    assert action.dtype == np.int64 and action.shape == (5,)
    loss = (-m.log_prob(action) * 1.5).sum()
    loss.backward()
    tm = TD.Categorical((torch.tensor(x) @ tw).softmax(-1))
    (-tm.log_prob(torch.tensor(to_np(action))) * 1.5).sum().backward()
    close(mw.grad, tw.grad)


def test_categorical_sample_statistics_and_shapes():
    mg.manual_seed(0)
    probs = np.array([[0.1, 0.0, 0.6, 0.3], [0.25, 0.25, 0.25, 0.25]])
    m = D.Categorical(mg.tensor(probs))
    draws = m.sample((20000,))
    assert draws.shape == tuple(TD.Categorical(torch.tensor(probs)).sample((20000,)).shape) == (20000, 2)
    assert draws.dtype == np.int64 and not draws.requires_grad
    counts = np.stack([np.bincount(to_np(draws)[:, i], minlength=4) for i in range(2)]) / 20000
    np.testing.assert_allclose(counts, probs, atol=0.015)
    assert counts[0, 1] == 0  # a zero-probability category is never drawn
    assert m.sample().shape == (2,)
    assert m.sample((2, 3)).shape == (2, 3, 2)
    mg.manual_seed(5)
    first = to_np(m.sample((10,)))
    mg.manual_seed(5)
    np.testing.assert_array_equal(first, to_np(m.sample((10,))))  # the global generator decides


def test_categorical_logits_with_minus_inf_entropy():
    logits = np.array([0.0, -np.inf, 1.0])
    mine, theirs = D.Categorical(logits=mg.tensor(logits)), TD.Categorical(logits=torch.tensor(logits))
    close(mine.entropy(), theirs.entropy())
    close(mine.probs, theirs.probs)


def test_categorical_errors_match_torch():
    for args in ({}, {"probs": [0.5, 0.5], "logits": [0.0, 0.0]}, {"probs": 0.5}, {"logits": 0.0},
                 {"probs": [-0.5, 1.5]}):
        with pytest.raises(ValueError) as theirs:
            TD.Categorical(**{k: torch.tensor(v) for k, v in args.items()})
        with pytest.raises(ValueError) as mine:
            D.Categorical(**{k: mg.tensor(v) for k, v in args.items()})
        assert str(mine.value).split("(")[0] == str(theirs.value).split("(")[0]
    m = D.Categorical(mg.tensor([0.5, 0.5]))
    with pytest.raises(ValueError, match="within the support"):
        m.log_prob(mg.tensor(2))
    with pytest.raises(ValueError, match="must be a Tensor"):
        m.log_prob(1)
    with pytest.raises(ValueError, match="not broadcastable"):
        D.Categorical(mg.ones(2, 3)).log_prob(mg.tensor([0, 1, 2]))
    D.Categorical(mg.tensor([-0.5, 1.5]), validate_args=False)  # no check when told not to


# -- Normal --------------------------------------------------------------------------------------


@SETTINGS
@given(batch=batch_shapes, seed=st.integers(0, 2**16))
def test_normal_matches_torch(batch, seed):
    rng = np.random.default_rng(seed)
    loc, scale = rng.standard_normal(batch), rng.uniform(0.3, 2.0, batch)
    value, q = rng.standard_normal((3, *batch)), rng.uniform(0.02, 0.98, batch)

    def build(lib, loc, scale, value, q):
        m = lib.Normal(loc, scale)
        return (m.log_prob(value).sum(0) + m.entropy() * 2 + m.cdf(value).sum(0) + m.icdf(q)
                + m.variance + m.stddev + m.mean + m.mode)

    compare_scalar_program(build, (loc, scale, value, q))


def test_normal_rsample_is_reparameterized():
    mg.manual_seed(0)
    loc = mg.tensor([0.5, -1.0], dtype=mg.float64, requires_grad=True)
    scale = mg.tensor([2.0, 0.5], dtype=mg.float64, requires_grad=True)
    m = D.Normal(loc, scale)
    x = m.rsample((50000,))
    assert x.shape == (50000, 2) and x.dtype == np.float64 and x.requires_grad
    np.testing.assert_allclose(to_np(x).mean(0), [0.5, -1.0], atol=0.03)
    np.testing.assert_allclose(to_np(x).std(0), [2.0, 0.5], rtol=0.02)
    x.sum().backward()
    np.testing.assert_allclose(to_np(loc.grad), [50000, 50000])
    eps = (to_np(x) - [0.5, -1.0]) / [2.0, 0.5]
    np.testing.assert_allclose(to_np(scale.grad), eps.sum(0), rtol=1e-9, atol=1e-6)
    s = m.sample((3,))
    assert not s.requires_grad and s.shape == (3, 2)
    assert D.Normal(0.0, 1.0).sample().dtype == np.float32 == np.dtype(str(TD.Normal(0.0, 1.0).sample().dtype)[6:])
    assert D.Normal(0.0, 1.0).batch_shape == ()


def test_normal_errors_and_repr():
    with pytest.raises(ValueError) as mine:
        D.Normal(mg.zeros(2), mg.tensor([1.0, -1.0]))
    assert "to satisfy the constraint GreaterThan(lower_bound=0.0)" in str(mine.value)
    assert str(mine.value).startswith("Expected parameter scale (Tensor of shape (2,)) of distribution Normal(")
    m = D.Normal(mg.zeros(2), mg.ones(2))
    for value in (mg.zeros(3), mg.zeros(3, 1, 3)):
        with pytest.raises(ValueError, match="Value is not broadcastable with batch_shape"):
            m.log_prob(value)
    with pytest.raises(TypeError):
        m.sample(5)  # a sample shape must be a sequence, as torch.Size requires
    with pytest.raises(TypeError):
        TD.Normal(torch.zeros(2), torch.ones(2)).sample(5)
    assert repr(D.Normal(0.0, 1.0)) == repr(TD.Normal(0.0, 1.0))
    assert repr(m) == "Normal(loc: (2,), scale: (2,))"
    with pytest.raises(NotImplementedError):
        m.enumerate_support()
    unchecked = D.Normal(mg.zeros(2), mg.tensor([1.0, -1.0]), validate_args=False)  # no check when told not to
    assert to_np(unchecked.scale)[1] == -1.0


def test_default_validate_args_switch():
    try:
        D.Distribution.set_default_validate_args(False)
        D.Normal(0.0, -1.0)
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        D.Normal(0.0, -1.0)
    with pytest.raises(ValueError):
        D.Distribution.set_default_validate_args(1.5)


# -- Bernoulli -----------------------------------------------------------------------------------


@SETTINGS
@given(batch=batch_shapes, seed=st.integers(0, 2**16), use_logits=st.booleans())
def test_bernoulli_matches_torch(batch, seed, use_logits):
    rng = np.random.default_rng(seed)
    param = rng.standard_normal(batch) * 2 if use_logits else rng.uniform(0.05, 0.95, batch)
    value = rng.integers(0, 2, (2, *batch)).astype(np.float64)
    key = "logits" if use_logits else "probs"

    def build(lib, p, v):
        m = lib.Bernoulli(**{key: p})
        return m.log_prob(v).sum(0) + m.entropy() + m.mean * 2 + m.variance + m.logits + m.probs

    compare_scalar_program(build, (param, value))
    mine, theirs = D.Bernoulli(**{key: mg.tensor(param)}), TD.Bernoulli(**{key: torch.tensor(param)})
    close(mine.mode, theirs.mode)
    close(mine.enumerate_support(), theirs.enumerate_support())
    assert mine.batch_shape == tuple(theirs.batch_shape)


def test_bernoulli_sampling_and_errors():
    mg.manual_seed(1)
    m = D.Bernoulli(mg.tensor([0.2, 0.5, 0.9], dtype=mg.float64))
    draws = m.sample((20000,))
    assert draws.shape == (20000, 3) and draws.dtype == np.float64
    assert set(np.unique(to_np(draws))) <= {0.0, 1.0}
    np.testing.assert_allclose(to_np(draws).mean(0), [0.2, 0.5, 0.9], atol=0.015)
    assert D.Bernoulli(0.3).sample().dtype == np.float32 and D.Bernoulli(0.3).batch_shape == ()
    close(D.Bernoulli(mg.tensor([0.5, 0.7])).mode, TD.Bernoulli(torch.tensor([0.5, 0.7])).mode)
    with pytest.raises(ValueError, match="Either `probs` or `logits`"):
        D.Bernoulli()
    with pytest.raises(ValueError, match=r"Interval\(lower_bound=0.0, upper_bound=1.0\)"):
        D.Bernoulli(1.5)
    with pytest.raises(ValueError, match="within the support"):
        D.Bernoulli(0.3).log_prob(mg.tensor(0.5))
    with pytest.raises(ValueError, match="Input arguments must all be"):
        D.Bernoulli("0.3")


# -- Uniform -------------------------------------------------------------------------------------


@SETTINGS
@given(batch=batch_shapes, seed=st.integers(0, 2**16))
def test_uniform_matches_torch(batch, seed):
    rng = np.random.default_rng(seed)
    low = rng.standard_normal(batch)
    high = low + rng.uniform(0.5, 2.0, batch)
    value = low + (high - low) * rng.uniform(0.01, 0.99, (3, *batch))
    q = rng.uniform(0, 1, batch)

    def build(lib, low, high, value, q):
        m = lib.Uniform(low, high)
        return (m.log_prob(value).sum(0) + m.entropy() + m.cdf(value).sum(0) + m.icdf(q) + m.mean + m.variance
                + m.stddev)

    compare_scalar_program(build, (low, high, value, q))


def test_uniform_support_sampling_and_errors():
    m = D.Uniform(mg.tensor([0.0, 1.0], dtype=mg.float64), mg.tensor([2.0, 1.5], dtype=mg.float64),
                  validate_args=False)
    t = TD.Uniform(torch.tensor([0.0, 1.0], dtype=torch.float64), torch.tensor([2.0, 1.5], dtype=torch.float64),
                   validate_args=False)
    outside = np.array([2.5, 0.5])
    close(m.log_prob(mg.tensor(outside)), t.log_prob(torch.tensor(outside)))  # -inf outside
    close(m.cdf(mg.tensor(outside)), t.cdf(torch.tensor(outside)))
    close(m.mode, t.mode)
    mg.manual_seed(0)
    low = mg.tensor([0.0, 1.0], dtype=mg.float64, requires_grad=True)
    high = mg.tensor([2.0, 1.5], dtype=mg.float64, requires_grad=True)
    x = D.Uniform(low, high).rsample((40000,))
    arr = to_np(x)
    assert x.shape == (40000, 2) and ((arr >= [0, 1]) & (arr < [2, 1.5])).all()
    np.testing.assert_allclose(arr.mean(0), [1.0, 1.25], atol=0.02)
    x.sum().backward()
    u = (arr - [0.0, 1.0]) / [2.0, 0.5]
    np.testing.assert_allclose(to_np(high.grad), u.sum(0), rtol=1e-8)
    np.testing.assert_allclose(to_np(low.grad), (1 - u).sum(0), rtol=1e-8)
    assert repr(D.Uniform(0.0, 1.0)) == repr(TD.Uniform(0.0, 1.0))
    with pytest.raises(ValueError, match=r"to satisfy the constraint LessThan\(upper_bound=0.0\)"):
        D.Uniform(1.0, 0.0)
    with pytest.raises(ValueError, match="within the support"):
        D.Uniform(0.0, 1.0).log_prob(mg.tensor(2.0))


# -- kl_divergence, expand -----------------------------------------------------------------------


@SETTINGS
@given(seed=st.integers(0, 2**16))
def test_kl_divergence_matches_torch(seed):
    rng = np.random.default_rng(seed)
    compare_scalar_program(
        lambda lib, a, b, c, d: lib.kl_divergence(lib.Normal(a, b), lib.Normal(c, d)),
        (rng.standard_normal(3), rng.uniform(0.2, 2, 3), rng.standard_normal(3), rng.uniform(0.2, 2, 3)),
    )
    p, q = rng.uniform(0.0, 1.0, (2, 4)), rng.uniform(0.0, 1.0, (2, 4))
    p[0, 1] = 0.0  # 0 log 0 = 0
    compare_scalar_program(lambda lib, a, b: lib.kl_divergence(lib.Categorical(a), lib.Categorical(b)), (p, q))
    compare_scalar_program(
        lambda lib, a, b: lib.kl_divergence(lib.Bernoulli(a), lib.Bernoulli(b)),
        (rng.uniform(0.05, 0.95, 3), rng.uniform(0.05, 0.95, 3)),
    )
    compare_scalar_program(
        lambda lib, a, b: lib.kl_divergence(lib.Uniform(a, a + 1), lib.Uniform(b - 2, b + 2)),
        (rng.uniform(-1, 0, 3), rng.uniform(-0.5, 0.5, 3)),
    )


def test_kl_divergence_infinite_and_unregistered():
    p, q = np.array([0.5, 0.5, 0.0]), np.array([1.0, 0.0, 0.0])
    close(D.kl_divergence(D.Categorical(mg.tensor(p)), D.Categorical(mg.tensor(q))),
          TD.kl_divergence(TD.Categorical(torch.tensor(p)), TD.Categorical(torch.tensor(q))))
    close(D.kl_divergence(D.Uniform(mg.tensor(0.0), mg.tensor(2.0)), D.Uniform(mg.tensor(0.0), mg.tensor(1.0))),
          TD.kl_divergence(TD.Uniform(torch.tensor(0.0), torch.tensor(2.0)),
                           TD.Uniform(torch.tensor(0.0), torch.tensor(1.0))))
    with pytest.raises(NotImplementedError):
        D.kl_divergence(D.Normal(0.0, 1.0), D.Uniform(0.0, 1.0))

    class MyNormal(D.Normal):
        """A subclass still finds the Normal-Normal formula."""

    close(D.kl_divergence(MyNormal(mg.tensor(0.0), mg.tensor(1.0)), D.Normal(mg.tensor(1.0), mg.tensor(2.0))),
          TD.kl_divergence(TD.Normal(torch.tensor(0.0), torch.tensor(1.0)),
                           TD.Normal(torch.tensor(1.0), torch.tensor(2.0))))
    with pytest.raises(TypeError):
        D.register_kl(int, D.Normal)


def test_expand_matches_torch():
    loc, scale = np.array([0.0, 1.0]), np.array([1.0, 2.0])
    mine = D.Normal(mg.tensor(loc), mg.tensor(scale)).expand((3, 2))
    theirs = TD.Normal(torch.tensor(loc), torch.tensor(scale)).expand((3, 2))
    assert mine.batch_shape == tuple(theirs.batch_shape) == (3, 2)
    value = np.linspace(-1, 1, 6).reshape(3, 2)
    close(mine.log_prob(mg.tensor(value)), theirs.log_prob(torch.tensor(value)))
    cat = D.Categorical(logits=mg.tensor([[0.0, 1.0, 2.0]], dtype=mg.float64)).expand((4, 1))
    assert cat.batch_shape == (4, 1) and cat.sample((2,)).shape == (2, 4, 1)
    tcat = TD.Categorical(logits=torch.tensor([[0.0, 1.0, 2.0]], dtype=torch.float64)).expand((4, 1))
    close(cat.log_prob(mg.tensor([2])), tcat.log_prob(torch.tensor([2])))
    b = D.Bernoulli(mg.tensor([0.3])).expand((5,))
    assert b.sample().shape == (5,)
    u = D.Uniform(mg.tensor(0.0), mg.tensor(1.0)).expand((2,))
    assert u.rsample((3,)).shape == (3, 2)
    assert mg.distributions.Categorical is D.Categorical


# -- devices -------------------------------------------------------------------------------------


@pytest.fixture(params=("cpu", "cuda"))
def device(request) -> str:
    """The device a test runs on; "cuda" skips when no GPU can be used."""
    if request.param == "cuda" and not mg.backend.cuda_is_available():
        pytest.skip(mg.backend.cuda_unavailable_reason())
    return request.param


def test_distributions_on_device(device):
    """Samples stay on the parameters' device; scores and their gradients equal PyTorch's (computed on the CPU)."""
    rng = np.random.default_rng(0)
    logits, loc, scale = rng.standard_normal((3, 4)), rng.standard_normal(3), rng.uniform(0.5, 1.5, 3)
    p = rng.uniform(0.1, 0.9, 3)
    mine = {name: mg.tensor(a, device=device, requires_grad=True) for name, a in
            (("logits", logits), ("loc", loc), ("scale", scale), ("p", p))}
    theirs = {name: torch.tensor(a, requires_grad=True) for name, a in
              (("logits", logits), ("loc", loc), ("scale", scale), ("p", p))}

    def scores(lib, t, action, x, flips):
        cat, normal = lib.Categorical(logits=t["logits"]), lib.Normal(t["loc"], t["scale"])
        bern, unif = lib.Bernoulli(t["p"]), lib.Uniform(t["loc"] - 1, t["loc"] + t["scale"])
        total = (cat.log_prob(action) + cat.entropy() + normal.log_prob(x) + normal.cdf(x) + normal.entropy()
                 + bern.log_prob(flips) + bern.entropy() + unif.entropy() + unif.log_prob(t["loc"]))
        return total + lib.kl_divergence(normal, lib.Normal(t["loc"] * 0, t["scale"] * 2))

    mg.manual_seed(0)
    samples = [D.Categorical(logits=mine["logits"]).sample((2,)), D.Normal(mine["loc"], mine["scale"]).rsample(),
               D.Bernoulli(mine["p"]).sample((2,)), D.Uniform(mine["loc"] - 1, mine["loc"] + 1).sample()]
    for sample, shape, dtype in zip(samples, [(2, 3), (3,), (2, 3), (3,)], [np.int64, np.float64, np.float64,
                                                                            np.float64]):
        assert sample.device == mine["loc"].device and sample.shape == shape and sample.dtype == dtype
    action, x, flips = samples[0][0], samples[1].detach(), samples[2][0]
    out = scores(D, mine, action, x, flips)
    expected = scores(TD, theirs, *(torch.tensor(to_np(s)) for s in (action, x, flips)))
    close(out, expected)
    out.sum().backward()
    expected.sum().backward()
    for name in mine:
        close(mine[name].grad, theirs[name].grad)


def test_user_subclass_without_constraints_warns_as_torch():
    class Coin(D.Distribution):
        """A subclass that defines neither arg_constraints nor support."""

        def __init__(self):
            super().__init__(batch_shape=(2,))

        def log_prob(self, value):
            self._validate_sample(value)
            return value * 0

    with pytest.warns(UserWarning, match="does not define `arg_constraints`"):
        coin = Coin()
    assert coin.batch_shape == (2,) and coin.event_shape == ()
    with pytest.warns(UserWarning, match="does not define `support`"):
        coin.log_prob(mg.zeros(2))
    for method in (coin.sample, coin.rsample, coin.entropy):
        with pytest.raises(NotImplementedError):
            method()
    with pytest.raises(NotImplementedError):
        _ = coin.mean
