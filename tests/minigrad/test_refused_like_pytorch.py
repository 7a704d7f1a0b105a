# ruff: noqa: N803  (every case takes the library module as ``L``: torch or minigrad)
"""Inputs PyTorch refuses because the result would be silently wrong are refused here too.

Each of these once ran in minigrad and gave a number PyTorch never gives:
an integer tensor set to require grad got truncated gradients (2.5 -> 2), an
in-place ``clamp_``/``sigmoid_`` with a float result truncated it into an
integer tensor, ``uniform_``/``normal_`` filled integer tensors with truncated
samples, and ``tensor([300], dtype=uint8)`` wrapped around to 44. Each case
runs with PyTorch and minigrad and must fail with the same builtin class; the
nearby inputs PyTorch accepts must give PyTorch's values.
"""

from __future__ import annotations

import pytest
import torch

import minigrad
from tests.error_classes import assert_same_class_as_torch


def _leaf_and_product(L):
    x = L.ones(2, requires_grad=True)
    return x, x * 2


REFUSED = [
    # requires_grad: leaves only, bools only, floating point only
    ("int_tensor_set_to_require_grad", lambda L: setattr(L.tensor([1, 2]), "requires_grad", True)),
    ("int_tensor_requires_grad_", lambda L: L.tensor([1, 2]).requires_grad_()),
    ("requires_grad_set_on_a_non_leaf", lambda L: setattr(_leaf_and_product(L)[1], "requires_grad", True)),
    ("requires_grad_false_on_a_non_leaf", lambda L: _leaf_and_product(L)[1].requires_grad_(False)),
    ("requires_grad_set_to_a_str", lambda L: setattr(L.ones(2), "requires_grad", "yes")),
    ("requires_grad_set_to_an_int", lambda L: setattr(L.ones(2), "requires_grad", 1)),
    ("requires_grad__given_an_int", lambda L: L.ones(2).requires_grad_(1)),
    ("parameter_requires_grad_a_str", lambda L: L.nn.Parameter(L.ones(2), requires_grad="x")),
    # in-place results that an integer tensor cannot hold
    ("clamp__float_bounds_on_ints", lambda L: L.tensor([1, 5]).clamp_(0.5, 2.5)),
    ("sigmoid__on_ints", lambda L: L.tensor([1, 5]).sigmoid_()),
    ("uniform__on_ints", lambda L: L.zeros(3, dtype=L.int64).uniform_(0, 10)),
    ("normal__on_ints", lambda L: L.zeros(3, dtype=L.int64).normal_()),
    # numbers an integer dtype cannot hold
    ("tensor_300_as_uint8", lambda L: L.tensor([[1, 2], [3, 300]], dtype=L.uint8)),
    ("tensor_0d_300_as_uint8", lambda L: L.tensor(300, dtype=L.uint8)),
    ("tensor_minus_256_as_uint8", lambda L: L.tensor([-256], dtype=L.uint8)),
    ("tensor_128_as_int8", lambda L: L.tensor([128], dtype=L.int8)),
    ("tensor_300_5_as_uint8", lambda L: L.tensor([300.5], dtype=L.uint8)),
    ("tensor_1_5e19_as_int64", lambda L: L.tensor([1.5e19], dtype=L.int64)),
    ("full_300_as_uint8", lambda L: L.full((2,), 300, dtype=L.uint8)),
    ("fill__300_into_uint8", lambda L: L.zeros(2, dtype=L.uint8).fill_(300)),
    ("fill__1e6_into_float16", lambda L: L.zeros(2, dtype=L.float16).fill_(1e6)),
    ("fill__complex_into_int64", lambda L: L.zeros(2, dtype=L.int64).fill_(1 + 2j)),
]


@pytest.mark.parametrize(("name", "call"), REFUSED, ids=[name for name, _ in REFUSED])
def test_refused_with_pytorchs_class(name, call):
    assert_same_class_as_torch(name, call)


ACCEPTED = [
    ("int_tensor_requires_grad_false", lambda L: L.tensor([1, 2]).requires_grad_(False).requires_grad),
    ("requires_grad__true_on_a_non_leaf", lambda L: _leaf_and_product(L)[1].requires_grad_(True).requires_grad),
    ("clamp__int_bounds_on_ints", lambda L: L.tensor([1, 5]).clamp_(0, 2).tolist()),
    ("relu__on_ints", lambda L: L.tensor([1, -5]).relu_().tolist()),
    ("tensor_minus_1_as_uint8_wraps", lambda L: L.tensor([-1, 255], dtype=L.uint8).tolist()),
    ("tensor_2_5_as_uint8_truncates", lambda L: L.tensor([2.5], dtype=L.uint8).tolist()),
    ("tensor_int64_limits", lambda L: L.tensor([2**63 - 1, -(2**63)], dtype=L.int64).tolist()),
    ("full_minus_1_as_uint8_wraps", lambda L: L.full((1,), -1, dtype=L.uint8).tolist()),
    ("fill__minus_255_into_uint8_wraps", lambda L: L.zeros(1, dtype=L.uint8).fill_(-255).tolist()),
    ("fill__2_7_into_int64_truncates", lambda L: L.zeros(1, dtype=L.int64).fill_(2.7).tolist()),
    ("fill__real_complex_into_int64", lambda L: L.zeros(1, dtype=L.int64).fill_(1 + 0j).tolist()),
]


@pytest.mark.parametrize(("name", "call"), ACCEPTED, ids=[name for name, _ in ACCEPTED])
def test_accepted_with_pytorchs_values(name, call):
    assert call(minigrad) == call(torch), name


def test_a_float_leaf_still_gets_its_exact_gradient():
    """The guard on integer tensors leaves the float path as it was: d(sum(2.5 t))/dt = 2.5."""
    t = minigrad.tensor([1.0, 2.0])
    t.requires_grad = True
    (t * 2.5).sum().backward()
    assert t.grad.tolist() == [2.5, 2.5]
