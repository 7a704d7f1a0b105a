"""Elementwise activations (softplus ... tanhshrink) against PyTorch: values, float64 gradients
(at the kinks too), second-order gradients, stability, dtypes, errors, in-place mode and modules."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import nn
from tests.minigrad.nn.torch_compare import assert_close, run_both, same_error

# (name, kwargs): every function with its options.
FUNCTIONS = [
    ("softplus", {}), ("softplus", {"beta": 2.0, "threshold": 3.0}), ("softplus", {"beta": 0.5}),
    ("logsigmoid", {}), ("softsign", {}), ("hardsigmoid", {}), ("hardswish", {}), ("selu", {}),
    ("celu", {}), ("celu", {"alpha": 0.5}), ("mish", {}), ("threshold", {"threshold": 0.5, "value": -2.0}),
    ("hardshrink", {}), ("hardshrink", {"lambd": 1.0}), ("softshrink", {}), ("softshrink", {"lambd": 0.0}),
    ("tanhshrink", {}),
]
# PyTorch multiplies hardsigmoid's gradient by 1/6 rounded to float32, even in float64.
GRAD_RTOL = {"hardsigmoid": 1e-7}
# The kinks and switch points of the functions above (gradients there follow PyTorch's conventions).
KINKS = [-3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5, 3.0, 10.0]


def call(F, name, x, kwargs):  # noqa: N803
    if name == "threshold":
        return F.threshold(x, kwargs["threshold"], kwargs["value"])
    return getattr(F, name)(x, **kwargs)


@pytest.mark.parametrize(("name", "kwargs"), FUNCTIONS, ids=lambda v: str(v))
@settings(max_examples=10, deadline=None)
@given(x=hnp.arrays(np.float64, hnp.array_shapes(min_dims=0, max_dims=3, max_side=4),
                    elements=st.floats(-6, 6, allow_subnormal=False)))
def test_activation_matches_torch(name, kwargs, x):
    run_both(lambda lib, F, x: call(F, name, x, kwargs), x, rtol=GRAD_RTOL.get(name, 1e-9), atol=1e-12)  # noqa: N803


@pytest.mark.parametrize(("name", "kwargs"), FUNCTIONS, ids=lambda v: str(v))
def test_activation_values_and_gradients_at_kinks_match_torch(name, kwargs):
    run_both(lambda lib, F, x: call(F, name, x, kwargs), KINKS, rtol=GRAD_RTOL.get(name, 1e-9), atol=1e-12)  # noqa: N803


@pytest.mark.parametrize(("name", "kwargs"), FUNCTIONS, ids=lambda v: str(v))
def test_activation_second_order_gradients_match_torch(name, kwargs):
    x = [-2.2, -0.7, 0.3, 1.7, 2.6]

    def program(lib, F, x):  # noqa: N803
        with lib.enable_grad():
            (g,) = lib.autograd.grad((call(F, name, x, kwargs) ** 2).sum(), x, create_graph=True)
        return g

    if name == "hardsigmoid":  # PyTorch has no second derivative here; inside (-3, 3) d/dx 2 h h' = 2 h'^2 = 1/18
        leaf = mg.tensor(x, dtype=mg.float64, requires_grad=True)
        g = program(mg, F, leaf)
        np.testing.assert_allclose(g.tolist(), [2 * (v / 6 + 0.5) / 6 for v in x])
        (gg,) = mg.autograd.grad(g.sum(), leaf)
        np.testing.assert_allclose(gg.tolist(), [1 / 18] * len(x))
        return
    run_both(program, x, rtol=GRAD_RTOL.get(name, 1e-9), atol=1e-12)


def test_stability_for_huge_inputs():
    big = mg.tensor([-1000.0, 1000.0], requires_grad=True)
    for name in ("softplus", "logsigmoid", "mish", "selu", "celu"):
        out = getattr(F, name)(big)
        assert np.isfinite(out.tolist()).all(), name
        out.sum().backward()
        assert np.isfinite(big.grad.tolist()).all(), name
        big.grad = None
    assert F.logsigmoid(mg.tensor([-200.0])).item() == pytest.approx(-200.0)  # float32: log(sigmoid) is -inf


def test_float32_matches_torch():
    x = np.linspace(-5, 5, 41)
    for name, kwargs in FUNCTIONS:
        assert_close(call(F, name, mg.tensor(x, dtype=mg.float32), kwargs),
                     call(torch.nn.functional, name, torch.tensor(x, dtype=torch.float32), kwargs), 1e-5, 1e-6)


def test_threshold_keeps_integer_dtype_like_torch():
    assert_close(F.threshold(mg.tensor([1, 5]), 2, 7.5), torch.nn.functional.threshold(torch.tensor([1, 5]), 2, 7.5))


def test_errors_match_torch():
    for name in ("softplus", "logsigmoid", "hardsigmoid", "mish", "selu", "softshrink"):
        same_error(lambda lib, F, x: getattr(F, name)(x.long()), [1.0, 2.0])  # noqa: N803, B023
    same_error(lambda lib, F, x: F.celu(x, 0.0), [1.0], match="alpha cannot be 0")  # noqa: N803
    same_error(lambda lib, F, x: F.softshrink(x, -1.0), [1.0], match="lambda")  # noqa: N803
    with pytest.raises(TypeError, match="must be a Tensor"):
        F.softplus(np.ones(2))
    with pytest.raises(TypeError, match="beta"):
        F.softplus(mg.ones(2), beta="2")


@pytest.mark.parametrize("name", ["hardsigmoid", "hardswish", "selu", "celu", "mish"])
def test_inplace_option_overwrites_the_input_and_records_the_graph(name):
    x = np.array([-4.0, -1.0, 0.5, 2.0, 4.0])
    a, ta = mg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    b, tb = a * 1.0, ta * 1.0
    out = getattr(F, name)(b, inplace=True)
    getattr(torch.nn.functional, name)(tb, inplace=True)
    assert out is b
    assert_close(b, tb)
    (b * b).sum().backward()
    (tb * tb).sum().backward()
    assert_close(a.grad, ta.grad, rtol=GRAD_RTOL.get(name, 1e-10))
    same_error(lambda lib, F, x: getattr(F, name)(x.requires_grad_(), inplace=True), x, match="leaf")  # noqa: N803
    plain = mg.tensor(x)
    getattr(F, name)(plain, inplace=True)
    assert_close(plain, getattr(torch.nn.functional, name)(torch.tensor(x)))


def test_modules_match_torch_and_their_reprs():
    x = np.linspace(-4, 4, 17)
    pairs = [
        (nn.Softplus(), torch.nn.Softplus()), (nn.Softplus(2, 10), torch.nn.Softplus(2, 10)),
        (nn.LogSigmoid(), torch.nn.LogSigmoid()), (nn.Softsign(), torch.nn.Softsign()),
        (nn.Hardsigmoid(), torch.nn.Hardsigmoid()), (nn.Hardswish(), torch.nn.Hardswish()),
        (nn.SELU(), torch.nn.SELU()), (nn.CELU(2.0), torch.nn.CELU(2.0)), (nn.Mish(), torch.nn.Mish()),
        (nn.Threshold(0.1, 20), torch.nn.Threshold(0.1, 20)), (nn.Hardshrink(), torch.nn.Hardshrink()),
        (nn.Softshrink(0.3), torch.nn.Softshrink(0.3)), (nn.Tanhshrink(), torch.nn.Tanhshrink()),
    ]
    for mine, theirs in pairs:
        assert_close(mine(mg.tensor(x)), theirs(torch.tensor(x)))
        assert repr(mine) == repr(theirs)
    for mine, theirs in ((nn.SELU(True), torch.nn.SELU(True)), (nn.CELU(2.0, True), torch.nn.CELU(2.0, True)),
                         (nn.Mish(True), torch.nn.Mish(True)), (nn.Threshold(0.1, 20, True),
                                                               torch.nn.Threshold(0.1, 20, True))):
        assert repr(mine) == repr(theirs)


def test_module_classes_are_related_as_in_pytorch():
    import torch  # noqa: PLC0415

    pairs = [("Mish", "SELU"), ("Hardswish", "Hardsigmoid"), ("Softshrink", "Hardshrink"), ("SELU", "Mish")]
    for child, parent in pairs:
        theirs = isinstance(getattr(torch.nn, child)(), getattr(torch.nn, parent))
        assert isinstance(getattr(mg.nn, child)(), getattr(mg.nn, parent)) == theirs
