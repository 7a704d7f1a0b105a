"""float32 erf: one rational function fitted for ``minigrad/backend.py``, its accuracy, and the fit itself.

``fit_erf_rational`` is how ``backend._ERF32_P`` / ``_ERF32_Q`` were made; the
last test runs it again, so the constants can be checked and regenerated.
"""

import math

import numpy as np
import pytest

from minigrad import backend

FLOAT32_BOUND = 4e-7  # relative to erf, about 6 float32 ulp just below 1


def reference(x):
    return np.array([math.erf(float(v)) for v in np.ravel(x)]).reshape(np.shape(x))


def fit_erf_rational(num_degree=6, den_degree=4, clip=backend._ERF32_CLIP, points=20001, iterations=60):
    """Coefficients of erf(x) ~ x * P(x^2) / Q(x^2), Q(0) = 1, on [0, clip], lowest degree first.

    Loeb's linearisation (fit x P - erf Q, weighted by 1 / (erf Q_previous))
    makes each round a linear least-squares problem in the relative error;
    Lawson's reweighting (weights times |error|) moves the fit toward the
    minimax. Returns ``(p, q, max_relative_error)`` in float64 arithmetic.
    """
    x = np.linspace(1e-4, clip, points)
    f, t = reference(x), x * x
    powers = t[:, None] ** np.arange(max(num_degree, den_degree) + 1)
    numerator, denominator = x[:, None] * powers[:, : num_degree + 1], -f[:, None] * powers[:, 1 : den_degree + 1]
    columns = np.concatenate([numerator, denominator], axis=1)
    scale = np.abs(columns).max(axis=0)
    weights, q_previous = np.ones_like(x), np.ones_like(x)
    for round_ in range(iterations):
        row_scale = np.sqrt(weights) / (f * q_previous)
        solution, *_ = np.linalg.lstsq(columns / scale * row_scale[:, None], f * row_scale, rcond=None)
        solution /= scale
        p, q = solution[: num_degree + 1], np.concatenate([[1.0], solution[num_degree + 1 :]])
        q_previous = np.polynomial.polynomial.polyval(t, q)
        error = x * np.polynomial.polynomial.polyval(t, p) / q_previous / f - 1
        if round_ >= 5:  # a few plain rounds first, so the weights start from a sensible fit
            weights = weights * np.abs(error)
            weights /= weights.sum()
    return p, q, float(np.abs(error).max())


def test_float32_erf_is_within_its_bound_of_math_erf():
    grid = np.concatenate([np.linspace(0, 6, 200001), np.logspace(-38, 0.6, 20000)]).astype(np.float32)
    x = np.concatenate([grid, -grid])
    out = backend.erf(x)
    assert out.dtype == np.float32
    expected = reference(x)
    rel = np.abs(out.astype(np.float64) - expected) / np.maximum(np.abs(expected), np.finfo(np.float64).tiny)
    assert rel.max() < FLOAT32_BOUND


def test_float32_erf_special_values_shapes_and_sign():
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 3.925, 100.0, -100.0, 1e-30], dtype=np.float32)
    out = backend.erf(x)
    np.testing.assert_array_equal(out[[0, 1, 2, 3, 5, 6, 7]], [0.0, -0.0, 1.0, -1.0, 1.0, 1.0, -1.0])
    assert np.signbit(out[1]) and not np.signbit(out[0]) and np.isnan(out[4])
    assert out[8] == pytest.approx(2 / math.sqrt(math.pi) * 1e-30, rel=1e-6)
    assert backend.erf(np.zeros((0, 3), dtype=np.float32)).shape == (0, 3)
    grid = np.linspace(-5, 5, 24, dtype=np.float32).reshape(2, 3, 4)
    np.testing.assert_array_equal(backend.erf(grid), -backend.erf(-grid))  # odd, exactly
    np.testing.assert_array_equal(backend.erf(grid[:, ::2].T), backend.erf(grid)[:, ::2].T)  # views


def test_float32_erf_does_not_write_into_its_input():
    x = np.linspace(-5, 5, 101, dtype=np.float32)
    before = x.copy()
    backend.erf(x)
    np.testing.assert_array_equal(x, before)


def test_the_stored_coefficients_are_what_the_fit_gives():
    p, q, error = fit_erf_rational()
    assert error < 6e-8  # below half a float32 ulp of erf near 1: rounding in float32 dominates
    np.testing.assert_allclose(p, backend._ERF32_P, rtol=1e-4)
    np.testing.assert_allclose(q, backend._ERF32_Q, rtol=1e-4)
    x = np.linspace(1e-4, backend._ERF32_CLIP, 20001)
    polyval, t = np.polynomial.polynomial.polyval, x * x
    stored = x * polyval(t, backend._ERF32_P) / polyval(t, backend._ERF32_Q)
    assert np.abs(stored / reference(x) - 1).max() < 6e-8
