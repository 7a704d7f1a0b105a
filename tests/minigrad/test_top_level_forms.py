# ruff: noqa: N803  (every case takes the library module as ``L``: torch or minigrad)
"""PyTorch's function spellings of Tensor methods (``torch.argmax(x, 1)``, ``torch.reshape(x, s)``, ...).

Each case is written once in PyTorch's idiom and runs with ``L`` bound to
PyTorch and to minigrad: the values, dtypes and shapes must agree, and for the
differentiable ones so must the gradient of ``sum(out * w)`` for a fixed ``w``.
Bad calls raise PyTorch's exception class.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import minigrad
from tests.error_classes import assert_same_class_as_torch

X = [[3.0, -1.0, 2.0], [1.0, 2.0, -4.0]]


def _x(L):
    return L.tensor(X, dtype=L.float64, requires_grad=True)


VALUES = [
    ("argmax_all", lambda L, x: L.argmax(x)),
    ("argmax_dim", lambda L, x: L.argmax(x, 1)),
    ("argmin_dim_keepdim", lambda L, x: L.argmin(x, dim=0, keepdim=True)),
    ("all", lambda L, x: L.all(x > -5)),
    ("all_dim", lambda L, x: L.all(x > 0, dim=1)),
    ("any_dims_keepdim", lambda L, x: L.any(x > 2, dim=(0, 1), keepdim=True)),
    ("any_of_uint8_keeps_uint8", lambda L, x: L.any(L.tensor([[1, 0], [0, 0]], dtype=L.uint8), 1)),
    ("all_method_dim", lambda L, x: (x > 0).all(0)),
    ("isposinf", lambda L, x: L.isposinf(L.tensor([1.0, float("inf"), -float("inf")]))),
    ("isneginf", lambda L, x: L.isneginf(L.tensor([1.0, float("inf"), -float("inf")]))),
    ("isneginf_of_ints", lambda L, x: L.isneginf(L.tensor([1, 2]))),
    ("sgn", lambda L, x: L.sgn(x)),
]

DIFFERENTIABLE = [
    ("reshape", lambda L, x: L.reshape(x, (3, 2))),
    ("reshape_list_minus_one", lambda L, x: L.reshape(x, [-1])),
    ("ravel_of_a_transpose", lambda L, x: L.ravel(x.t())),
    ("squeeze", lambda L, x: L.squeeze(x.reshape(1, 2, 1, 3))),
    ("squeeze_dim", lambda L, x: L.squeeze(x.reshape(1, 2, 1, 3), 2)),
    ("unsqueeze", lambda L, x: L.unsqueeze(x, -1)),
    ("transpose", lambda L, x: L.transpose(x, 0, 1)),
    ("permute", lambda L, x: L.permute(x.reshape(1, 2, 3), (2, 0, 1))),
    ("clone", lambda L, x: L.clone(x)),
    ("pow_tensor_number", lambda L, x: L.pow(x, 2)),
    ("pow_number_tensor", lambda L, x: L.pow(2.0, x)),
    ("pow_tensor_tensor", lambda L, x: L.pow(x.abs(), x)),
    ("masked_fill", lambda L, x: L.masked_fill(x, x < 0, 0.5)),
    ("index_add", lambda L, x: L.index_add(x, 1, L.tensor([0, 2, 0]), x * 2, alpha=3)),
    ("fliplr", lambda L, x: L.fliplr(x)),
    ("flipud", lambda L, x: L.flipud(x)),
    ("msort", lambda L, x: L.msort(x)),
]


def _numpy(t):
    return t.detach().numpy() if isinstance(t, torch.Tensor) else np.asarray(t.detach().array)


@pytest.mark.parametrize(("name", "call"), VALUES + DIFFERENTIABLE, ids=[n for n, _ in VALUES + DIFFERENTIABLE])
def test_values_and_dtypes_match_pytorch(name, call):
    ours, theirs = call(minigrad, _x(minigrad)), call(torch, _x(torch))
    assert str(ours.dtype) == str(theirs.dtype).removeprefix("torch."), name
    np.testing.assert_array_equal(_numpy(ours), _numpy(theirs), err_msg=name)


@pytest.mark.parametrize(("name", "call"), DIFFERENTIABLE, ids=[n for n, _ in DIFFERENTIABLE])
def test_gradients_match_pytorch(name, call):
    grads = []
    for L in (minigrad, torch):
        x = _x(L)
        out = call(L, x)
        w = L.tensor(np.arange(1.0, out.numel() + 1).reshape(tuple(out.shape)), dtype=L.float64)
        (out * w).sum().backward()
        grads.append(_numpy(x.grad))
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12, err_msg=name)


ERRORS = [
    ("argmax_dim_out_of_range", lambda L: L.argmax(L.ones(2, 3), 2)),
    ("all_dim_out_of_range", lambda L: L.all(L.ones(2), dim=1)),
    ("reshape_wrong_size", lambda L: L.reshape(L.ones(2, 3), (4,))),
    ("transpose_dim_out_of_range", lambda L: L.transpose(L.ones(2, 3), 0, 2)),
    ("permute_not_a_permutation", lambda L: L.permute(L.ones(2, 3), (0, 0))),
    ("fliplr_of_1d", lambda L: L.fliplr(L.ones(3))),
    ("flipud_of_0d", lambda L: L.flipud(L.ones(()))),
    ("argmax_of_a_list", lambda L: L.argmax([1.0, 2.0])),
    ("argmax_keepdim_none", lambda L: L.argmax(L.ones(2, 3), 1, keepdim=None)),
    ("all_keepdim_a_str", lambda L: L.all(L.ones(2, 3), 1, keepdim="a")),
    ("pow_of_two_numbers", lambda L: L.pow(2, 3)),
]


@pytest.mark.parametrize(("name", "call"), ERRORS, ids=[n for n, _ in ERRORS])
def test_bad_calls_raise_pytorchs_class(name, call):
    assert_same_class_as_torch(name, call)
