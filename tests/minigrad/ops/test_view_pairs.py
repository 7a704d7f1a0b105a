"""The view ops given by named parameters (``ParamsView``) and their adjoints (``ParamsNode``):
Diagonal/DiagonalScatter and UnfoldWindows/FoldWindows."""

from __future__ import annotations

import numpy as np
import pytest

import minigrad as mg
from minigrad.ops.structure import Diagonal, DiagonalScatter
from minigrad.ops.windows import FoldWindows, UnfoldWindows

PAIRS = [(Diagonal, DiagonalScatter, (1, 0, 2)), (UnfoldWindows, FoldWindows, (1, 2, 1))]


@pytest.mark.parametrize(("view", "adjoint", "params"), PAIRS)
def test_parameters_are_stored_by_name_and_fresh_rebuilds_the_view(view, adjoint, params):
    op = view(*params)
    assert op.param_values() == params
    assert all(getattr(op, name) == value for name, value in zip(view.params, params))
    again = op.fresh()
    assert type(again) is view and again is not op and again.param_values() == params
    scatter = adjoint(*params, (2, 3, 4))
    assert scatter.params == (*view.params, "shape") and scatter.shape == (2, 3, 4)


@pytest.mark.parametrize(("view", "adjoint", "params"), PAIRS)
def test_a_wrong_number_of_parameters_is_a_type_error(view, adjoint, params):
    with pytest.raises(TypeError, match=view.__name__):
        view(*params[:-1])
    with pytest.raises(TypeError, match=adjoint.__name__):
        adjoint(*params)


@pytest.mark.parametrize(("view", "adjoint", "params"), PAIRS)
def test_backward_applies_the_adjoint_and_its_backward_the_view(view, adjoint, params):
    x = mg.tensor(np.arange(24.0).reshape(2, 3, 4), requires_grad=True)
    y = view(*params)(x)
    assert type(y.grad_fn) is view and y.grad_fn.in_shape == (2, 3, 4)
    g = mg.ones(y.shape, requires_grad=True)
    (gx,) = mg.autograd.grad(y, x, g, create_graph=True)
    assert type(gx.grad_fn) is adjoint and gx.shape == x.shape
    (gg,) = mg.autograd.grad(gx.sum(), g)
    np.testing.assert_array_equal(gg.numpy(), np.ones(y.shape))
