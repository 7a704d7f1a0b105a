# ruff: noqa: N803  (the error cases take the library module as ``L``: torch or minigrad)
"""``mg.quantile`` against PyTorch: values, shapes, gradients, NaN and errors, on drawn inputs."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minigrad as mg
from tests.error_classes import assert_same_class_as_torch

MODES = ["linear", "lower", "higher", "midpoint", "nearest"]


@st.composite
def programs(draw):
    """An input (float64, with ties and sometimes a NaN), q (a number, 0-d or 1-D), dim, keepdim, interpolation."""
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4))
    if draw(st.booleans()):  # distinct values: which of equal elements gets the gradient is PyTorch's sort's choice
        data = np.array(draw(st.permutations(range(int(np.prod(shape)))))).reshape(shape) * 0.5 - 3.0
    else:
        data = draw(hnp.arrays(np.float64, shape, elements=st.sampled_from([-2.0, -0.5, 0.0, 1.0, 1.5, 3.0])))
    if draw(st.booleans()) and data.size > 1:
        data.flat[draw(st.integers(0, data.size - 1))] = np.nan
    kind = draw(st.sampled_from(["number", "0-d", "1-d"]))
    qs = draw(st.lists(st.sampled_from([0.0, 0.1, 0.25, 0.375, 0.5, 0.625, 0.9, 1.0]), min_size=1, max_size=3))
    dim = draw(st.one_of(st.none(), st.integers(-len(shape), len(shape) - 1)))
    return data, kind, qs, dim, draw(st.booleans()), draw(st.sampled_from(MODES))


def _q(L, kind, qs):
    return qs[0] if kind == "number" else L.tensor(qs[0] if kind == "0-d" else qs, dtype=L.float64)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(programs())
def test_quantile_matches_pytorch(program):
    data, kind, qs, dim, keepdim, mode = program
    outs, grads = [], []
    for L in (mg, torch):
        x = L.tensor(data, dtype=L.float64, requires_grad=True)
        out = L.quantile(x, _q(L, kind, qs), dim=dim, keepdim=keepdim, interpolation=mode)
        weights = L.tensor(np.arange(1.0, out.numel() + 1).reshape(tuple(out.shape)), dtype=L.float64)
        (out * weights).nan_to_num().sum().backward()
        outs.append(out.detach().numpy())
        grads.append(x.grad.numpy())
    assert outs[0].shape == outs[1].shape
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-12, atol=1e-12)
    finite = data[~np.isnan(data)]
    if np.unique(finite).size == finite.size:  # with ties, PyTorch's unstable sort picks among equal elements
        np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12, atol=1e-12)


def test_quantile_is_a_tensor_method_too():
    x = mg.tensor([[3.0, 1.0], [2.0, 5.0]])
    assert x.quantile(0.5, dim=1).tolist() == torch.tensor([[3.0, 1.0], [2.0, 5.0]]).quantile(0.5, dim=1).tolist()


ERRORS = [
    ("integer_input", lambda L: L.quantile(L.tensor([1, 2]), 0.5)),
    ("q_above_1", lambda L: L.quantile(L.ones(3), 1.5)),
    ("q_below_0_in_a_tensor", lambda L: L.quantile(L.ones(3), L.tensor([0.5, -0.1]))),
    ("q_2d", lambda L: L.quantile(L.ones(3), L.ones(2, 2) * 0.5)),
    ("q_of_another_dtype", lambda L: L.quantile(L.ones(3, dtype=L.float64), L.tensor(0.5))),
    ("empty_input", lambda L: L.quantile(L.ones(0), 0.5)),
    ("unknown_interpolation", lambda L: L.quantile(L.ones(3), 0.5, interpolation="cubic")),
    ("dim_out_of_range", lambda L: L.quantile(L.ones(2, 3), 0.5, dim=2)),
    ("q_a_string", lambda L: L.quantile(L.ones(3), "half")),
]


@pytest.mark.parametrize(("name", "call"), ERRORS, ids=[n for n, _ in ERRORS])
def test_bad_calls_raise_pytorchs_class(name, call):
    assert_same_class_as_torch(name, call)
