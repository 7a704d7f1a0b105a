"""``relu`` as PyTorch computes it, to the sign of zero: +0 (not -0) for negative inputs, NaN kept,
and a gradient that passes through NaN but not at 0.

``a * (a > 0)`` gave -0 for negative inputs, so ``1 / relu(x)`` was -inf where PyTorch gives inf. The one
difference left: an input of -0 gives +0 (PyTorch keeps -0), see ``ops.elementwise.ReLU``.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import minigrad as mg
import minigrad.nn.functional as F

SPECIAL = [-1.0, -0.0, 0.0, float("nan"), 2.0, -float("inf"), float("inf"), -1e-30, 1e-30]
APPLY = {
    "mg.relu": (lambda lib, x: lib.relu(x)),
    "F.relu": (lambda lib, x: (F if lib is mg else torch.nn.functional).relu(x)),
    "Tensor.relu": (lambda lib, x: x.relu()),
    "nn.ReLU": (lambda lib, x: lib.nn.ReLU()(x)),
}


def _same_bits(ours, theirs, inputs=None) -> bool:
    """Equal values (NaN where NaN) and equal signs, except where the input was -0 (there ours is +0)."""
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    signs = np.signbit(ours) == np.signbit(theirs)
    if inputs is not None:
        negative_zero = (np.asarray(inputs) == 0) & np.signbit(inputs)
        signs |= negative_zero & ~np.signbit(ours)
    return bool(np.array_equal(ours, theirs, equal_nan=True) and signs.all())


@pytest.mark.parametrize("form", sorted(APPLY))
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_values_and_signs_of_zero_match_pytorch(form, dtype):
    x = np.array(SPECIAL, dtype=dtype)
    ours = APPLY[form](mg, mg.tensor(x)).numpy()
    theirs = APPLY[form](torch, torch.tensor(x)).numpy()
    assert _same_bits(ours, theirs, x), (ours, theirs)
    negative = x < 0
    assert (1 / ours[negative].astype(np.float64) == np.inf).all()  # +0 there: inf, not -inf


def test_in_place_forms_match_pytorch():
    x = np.array(SPECIAL, dtype=np.float32)
    for ours, theirs in ((mg.tensor(x.copy()), torch.tensor(x.copy())),):
        ours.relu_()
        theirs.relu_()
        assert _same_bits(ours.numpy(), theirs.numpy(), x)
        ours, theirs = mg.tensor(x.copy()), torch.tensor(x.copy())
        F.relu(ours, inplace=True)
        torch.nn.functional.relu(theirs, inplace=True)
        assert _same_bits(ours.numpy(), theirs.numpy(), x)


def test_gradient_passes_through_nan_not_at_zero_as_pytorch():
    x = np.array(SPECIAL, dtype=np.float64)
    ours = mg.tensor(x, requires_grad=True)
    mg.relu(ours).sum().backward()
    theirs = torch.tensor(x, requires_grad=True)
    torch.relu(theirs).sum().backward()
    assert _same_bits(ours.grad.numpy(), theirs.grad.numpy())


@pytest.mark.parametrize("dtype", ["int8", "int32", "int64", "uint8"])
def test_integers_keep_their_dtype(dtype):
    x = np.array([-3, 0, 5], dtype=np.int64).astype(dtype)
    ours, theirs = mg.relu(mg.tensor(x)), torch.relu(torch.tensor(x))
    assert str(ours.dtype) == str(theirs.dtype).replace("torch.", "")
    assert np.array_equal(ours.numpy(), theirs.numpy())


def test_bool_input_raises_runtime_error_as_pytorch():
    with pytest.raises(RuntimeError):
        torch.relu(torch.tensor([True, False]))
    with pytest.raises(RuntimeError, match="Boolean"):
        mg.relu(mg.tensor([True, False]))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_long_arrays_keep_the_signs_of_zero(dtype):
    """NumPy takes vectorized paths on long arrays: the signs must still be PyTorch's there (but at -0)."""
    x = np.random.default_rng(0).standard_normal(10_000).astype(dtype)
    x[::7] = -0.0
    x[::11] = 0.0
    x[::13] = np.nan
    assert _same_bits(mg.relu(mg.tensor(x)).numpy(), torch.relu(torch.tensor(x)).numpy(), x)
