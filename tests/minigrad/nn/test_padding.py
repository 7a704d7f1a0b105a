"""``F.pad`` and the padding modules against PyTorch: values (every mode, negative amounts), gradients,
dtypes, ``repr`` and exception types. Gradchecks and oracle cases over random amounts live in
``tests/minigrad/ops/cases_padding.py``.
"""

# ruff: noqa: N803  (programs take the functional module as ``F``, as in ``import ... as F``)
from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import nn as mnn

LIBS = {"minigrad": (mg, mnn, F), "torch": (torch, torch.nn, torch.nn.functional)}


def _both(program, x):
    """Run ``program(lib, nn, F, x)`` in both libraries (float64 leaves); compare output and input gradient."""
    xm, xt = mg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    out, expected = program(mg, mnn, F, xm), program(torch, torch.nn, torch.nn.functional, xt)
    np.testing.assert_array_equal(out.detach().numpy(), expected.detach().numpy())
    g = np.random.default_rng(1).standard_normal(tuple(expected.shape))
    out.backward(mg.tensor(g))
    expected.backward(torch.tensor(g))
    np.testing.assert_allclose(xm.grad.numpy(), xt.grad.numpy(), rtol=1e-12, atol=1e-12)


MODULES = [
    (lambda nn: nn.ZeroPad1d(2), (2, 3, 4)),
    (lambda nn: nn.ZeroPad2d((1, 2, 0, 3)), (2, 3, 4, 2)),
    (lambda nn: nn.ZeroPad2d((-1, 2, 1, -2)), (1, 4, 4)),
    (lambda nn: nn.ZeroPad3d(1), (1, 2, 2, 2, 2)),
    (lambda nn: nn.ConstantPad1d((3, 1), 2.5), (2, 4)),
    (lambda nn: nn.ConstantPad2d(1, -1.0), (1, 2, 3, 3)),
    (lambda nn: nn.ConstantPad3d((1, 0, 0, 1, 2, 0), 0.5), (2, 2, 2, 2)),
    (lambda nn: nn.ReflectionPad1d(3), (2, 3, 4)),
    (lambda nn: nn.ReflectionPad1d((2, 0)), (3, 5)),
    (lambda nn: nn.ReflectionPad2d((1, 2, 2, 1)), (2, 1, 3, 4)),
    (lambda nn: nn.ReflectionPad3d(1), (1, 1, 2, 3, 2)),
    (lambda nn: nn.ReplicationPad1d((3, 1)), (2, 2, 3)),
    (lambda nn: nn.ReplicationPad2d(2), (1, 2, 2, 3)),
    (lambda nn: nn.ReplicationPad3d((1, 2, 0, 1, 1, 0)), (2, 2, 2, 2)),
    (lambda nn: nn.CircularPad1d(2), (2, 2, 3)),
    (lambda nn: nn.CircularPad2d((1, 0, 2, 1)), (1, 2, 3, 3)),
    (lambda nn: nn.CircularPad3d(1), (1, 1, 2, 2, 2)),
]


@pytest.mark.parametrize(("build", "shape"), MODULES, ids=range(len(MODULES)))
def test_module_matches_pytorch(build, shape):
    x = np.random.default_rng(0).standard_normal(shape)
    _both(lambda lib, nn, F, t: build(nn)(t), x)
    assert repr(build(mnn)) == repr(build(torch.nn))
    assert build(mnn).padding == build(torch.nn).padding


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_negative_amounts_crop_like_pytorch(mode, data):
    size = data.draw(st.integers(2, 5))
    before, after = data.draw(st.integers(-1, size - 1)), data.draw(st.integers(-1, size - 1))
    kept = size + min(before, 0) + min(after, 0)
    if mode == "circular":
        before, after = min(before, kept), min(after, kept)
    if kept < 1 or size + before + after < 1:
        return
    x = np.arange(2.0 * size).reshape(1, 2, size)
    _both(lambda lib, nn, F, t: F.pad(t, (before, after), mode=mode), x)


@pytest.mark.parametrize(("dtype", "value"), [("int64", 2.7), ("float32", 1.5), ("bool", 1)])
def test_constant_padding_keeps_the_dtype(dtype, value):
    x = np.arange(6).reshape(2, 3).astype(dtype)
    out = F.pad(mg.tensor(x), (1, 2), value=value)
    expected = torch.nn.functional.pad(torch.tensor(x), (1, 2), value=value)
    assert out.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(out.numpy(), expected.numpy())


def test_zero_amounts_give_a_new_tensor():
    x = mg.ones(2, 3)
    out = F.pad(x, (0, 0))
    out.array[0, 0] = 5
    assert x.array[0, 0] == 1


ERRORS = [
    lambda lib, nn, F: F.pad(lib.zeros(1, 2, 3), (1,)),
    lambda lib, nn, F: F.pad(lib.zeros(1, 2, 3), (1,) * 8),
    lambda lib, nn, F: F.pad(lib.zeros(1, 2, 3), (3, 3), mode="reflect"),
    lambda lib, nn, F: F.pad(lib.zeros(1, 2, 3), (4, 2), mode="circular"),
    lambda lib, nn, F: F.pad(lib.zeros(1, 2, 3), (1, 1, 1, 1, 1, 1), mode="replicate"),
    lambda lib, nn, F: F.pad(lib.zeros(3), (1, 1), mode="reflect"),
    lambda lib, nn, F: F.pad(lib.zeros(2, 3, 4, 5, 6, 7), (1, 1), mode="reflect"),
    lambda lib, nn, F: F.pad(lib.zeros(2, 3), (1, 1, 1, 1), mode="reflect"),
    lambda lib, nn, F: F.pad(lib.zeros(1, 2, 3), (1, 1), mode="foo"),
    lambda lib, nn, F: F.pad(lib.zeros(1, 2, 3), (1, 1), mode="reflect", value=2),
    lambda lib, nn, F: F.pad(lib.zeros(1, 2, 3), (-2, -2)),
    lambda lib, nn, F: F.pad(lib.zeros(1, 2, 3), (1.5, 1)),
    lambda lib, nn, F: F.pad(lib.zeros(1, 0, 3), (1, 1), mode="reflect"),
    lambda lib, nn, F: nn.ReflectionPad1d(2)(lib.zeros(1, 3, 3, 3)),
    lambda lib, nn, F: nn.ZeroPad2d(2)(lib.zeros(3)),
]


@pytest.mark.parametrize("program", ERRORS, ids=range(len(ERRORS)))
def test_errors_match_pytorch(program):
    with pytest.raises(Exception) as expected:
        program(*LIBS["torch"])
    with pytest.raises(expected.type):
        program(*LIBS["minigrad"])
