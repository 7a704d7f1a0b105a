"""``minigrad.optim.updates`` and the step helpers of ``minigrad.optim.optimizer``.

The optimizers' oracle tests (test_optim.py, test_more_optimizers*.py) cover
these through every update rule; here each helper is checked on its own,
against the formula it states.
"""

from __future__ import annotations

import numpy as np

import minigrad as mg
from minigrad.nn import Parameter
from minigrad.optim.optimizer import init_state, params_with_grad, zeros_state
from minigrad.optim.updates import add_divided_, decay_square_average_, lerp_, regularized_grad


class _Scratch:
    """A stand-in for the step's scratch buffers: a fresh array per request."""

    def like(self, array, slot: int = 0):
        return np.empty_like(array)


def test_decay_square_average_():
    rng = np.random.default_rng(0)
    average, x = rng.random(5), rng.standard_normal(5)
    expected = 0.9 * average + (1 - 0.9) * x * x
    decay_square_average_(np, average, x, 0.9, np.empty(5))
    np.testing.assert_allclose(average, expected, rtol=1e-15)


def test_add_divided_():
    rng = np.random.default_rng(1)
    param, num, den = rng.standard_normal(4), rng.standard_normal(4), rng.random(4) + 1
    expected = param + (-0.1 * num) / den
    add_divided_(np, param, num, den, -0.1, np.empty(4))
    np.testing.assert_array_equal(param, expected)


def test_regularized_grad_and_lerp_():
    param, grad = np.array([1.0, -2.0]), np.array([0.5, 0.25])
    np.testing.assert_allclose(regularized_grad(np, param, grad, 0.1, True, _Scratch()), -grad + 0.1 * param)
    assert regularized_grad(np, param, grad, 0, False, _Scratch()) is grad
    start = np.array([0.0, 1.0])
    lerp_(np, start, np.array([2.0, 3.0]), 0.25, np.empty(2))
    np.testing.assert_allclose(start, [0.5, 1.5])


def test_params_with_grad_skips_params_without_grad():
    a, b = Parameter(mg.ones(2)), Parameter(mg.zeros(3))
    b.grad = mg.ones(3)
    found = list(params_with_grad({"params": [a, b]}))
    assert len(found) == 1
    p, param, grad, xp = found[0]
    assert p is b and param is b.array and xp is np
    np.testing.assert_array_equal(grad, np.ones(3))


def test_init_state_and_zeros_state():
    param = np.ones((2, 3), dtype=np.float32)
    state = {}
    init_state(state, param, "exp_avg", "exp_avg_sq")
    assert list(state) == ["step", "exp_avg", "exp_avg_sq"]
    assert state["step"].dtype == np.float32 and state["step"].shape == () and float(state["step"].array) == 0
    for name in ("exp_avg", "exp_avg_sq"):
        assert state[name].shape == (2, 3) and state[name].dtype == np.float32
        assert not state[name].array.any()
    assert state["exp_avg"] is not state["exp_avg_sq"]
    assert zeros_state(param).array.dtype == np.float32
