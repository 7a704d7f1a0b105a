"""The in-place functional activations (relu_, leaky_relu_, elu_, hardtanh_, threshold_) against PyTorch.

Each must write the input's own memory (views see it), return the input,
be recorded for autograd inside a graph, and raise PyTorch's error on a leaf
that requires grad.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import minigrad as mg
import minigrad.nn.functional as F
from tests.minigrad.nn.torch_compare import assert_close, same_error

CALLS = [
    ("relu_", ()), ("leaky_relu_", ()), ("leaky_relu_", (0.2,)), ("elu_", ()), ("elu_", (0.5,)),
    ("hardtanh_", ()), ("hardtanh_", (-0.5, 2.0)), ("threshold_", (0.5, -3.0)),
]
X = np.array([-2.5, -1.0, -0.25, 0.0, 0.75, 1.0, 3.0])


@pytest.mark.parametrize(("name", "args"), CALLS, ids=str)
def test_writes_the_input_memory_and_views_see_it(name, args):
    x = mg.tensor(X.copy())
    view = x[1:]
    version = x._version
    out = getattr(F, name)(x, *args)
    expected = getattr(torch.nn.functional, name)(torch.tensor(X), *args)
    assert out is x
    assert_close(x, expected)
    assert_close(view, expected[1:])
    assert x._version > version


@pytest.mark.parametrize(("name", "args"), CALLS, ids=str)
def test_inside_a_graph_the_gradient_matches_torch(name, args):
    a, ta = mg.tensor(X, requires_grad=True), torch.tensor(X, requires_grad=True)
    b, tb = a * 2.0, ta * 2.0
    getattr(F, name)(b, *args)
    getattr(torch.nn.functional, name)(tb, *args)
    assert b.grad_fn is not None
    seed = np.linspace(-1, 1, X.size)
    (b * mg.tensor(seed)).sum().backward()
    (tb * torch.tensor(seed)).sum().backward()
    assert_close(a.grad, ta.grad)


@pytest.mark.parametrize(("name", "args"), CALLS, ids=str)
def test_on_a_view_the_base_is_updated_and_differentiated(name, args):
    a, ta = mg.tensor(X, requires_grad=True), torch.tensor(X, requires_grad=True)
    b, tb = a * 1.0, ta * 1.0
    getattr(F, name)(b[2:], *args)
    getattr(torch.nn.functional, name)(tb[2:], *args)
    assert_close(b, tb)
    (b * b).sum().backward()
    (tb * tb).sum().backward()
    assert_close(a.grad, ta.grad)


@pytest.mark.parametrize(("name", "args"), CALLS, ids=str)
def test_leaf_that_requires_grad_raises_like_torch(name, args):
    same_error(lambda lib, F, x: getattr(F, name)(x.requires_grad_(), *args), X, match="leaf Variable")  # noqa: N803
    x = mg.tensor(X, requires_grad=True)
    with mg.no_grad():
        getattr(F, name)(x, *args)  # allowed without grad mode, as in PyTorch
    assert_close(x.detach(), getattr(torch.nn.functional, name)(torch.tensor(X), *args))


def test_saved_value_overwritten_in_place_raises_at_backward():
    a = mg.tensor(X, requires_grad=True)
    b = a * 1.0
    c = b.exp()  # Exp saves its output, not b; b * b saves b
    d = b * b
    F.relu_(b)
    (c.sum()).backward()  # unaffected
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        d.sum().backward()


def test_integer_inputs_like_torch():
    for name, args in (("relu_", ()), ("threshold_", (2, 7))):
        x, tx = mg.tensor([-1, 2, 5]), torch.tensor([-1, 2, 5])
        getattr(F, name)(x, *args)
        getattr(torch.nn.functional, name)(tx, *args)
        assert_close(x, tx)
    with pytest.raises(TypeError, match="must be a Tensor"):
        F.relu_(np.ones(2))
