# ruff: noqa: N803  (the error cases take the library module as ``L``, as tests/error_classes.py does)
"""``inplace=True`` of the activations and dropout (functions and modules), and the ``_`` functions, against PyTorch.

With ``inplace=True`` PyTorch overwrites the input and returns that same
tensor; inside a graph the write is recorded (gradients flow through it), and
on a leaf that requires grad it raises. (The ``_`` functions relu_, elu_,
leaky_relu_, hardtanh_ and threshold_ have their own views-and-graphs tests
in ``test_inplace_activations.py``.)
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import minigrad as mg
import minigrad.nn.functional as F
from tests.error_classes import assert_same_class_as_torch
from tests.minigrad.nn.torch_compare import assert_close, to_np

X = np.array([-7.0, -2.5, -1.0, -0.25, 0.0, 0.75, 1.0, 3.0, 6.5])
SEED = np.linspace(-1.0, 1.5, X.size)

# (function name, positional arguments after the input) for F.name(x, *args, inplace=True)
FUNCTIONS = [
    ("relu", ()), ("leaky_relu", ()), ("leaky_relu", (0.2,)), ("elu", ()), ("elu", (0.5,)), ("silu", ()),
    ("hardtanh", ()), ("hardtanh", (-0.5, 2.0)), ("relu6", ()),
]

# (module name, constructor arguments before inplace)
MODULES = [
    ("ReLU", ()), ("LeakyReLU", (0.2,)), ("ELU", (0.5,)), ("SiLU", ()), ("Hardtanh", (-2.0, 2.0)), ("ReLU6", ()),
]

# (name, positional arguments after the input) of the ``_`` functions of torch.nn.functional
UNDERSCORE = [
    ("relu_", ()), ("elu_", (0.5,)), ("leaky_relu_", (0.2,)), ("hardtanh_", (-0.5, 2.0)),
    ("threshold_", (0.5, -3.0)), ("celu_", ()), ("celu_", (2.0,)), ("selu_", ()), ("rrelu_", (0.1, 0.3)),
]


def _both(values=X, requires_grad=False):
    """The same float64 values as a minigrad and a torch tensor."""
    mine = mg.tensor(values.copy(), requires_grad=requires_grad)
    return mine, torch.tensor(values.copy(), requires_grad=requires_grad)


@pytest.mark.parametrize(("name", "args"), FUNCTIONS, ids=str)
def test_functional_overwrites_and_returns_the_input(name, args):
    x, tx = _both()
    y = getattr(F, name)(x, *args, inplace=True)
    ty = getattr(torch.nn.functional, name)(tx, *args, inplace=True)
    assert ty is tx
    assert y is x
    assert_close(x, tx)


@pytest.mark.parametrize(("name", "args"), FUNCTIONS, ids=str)
def test_functional_in_a_graph_gives_torchs_gradient(name, args):
    a, ta = _both(requires_grad=True)
    b, tb = a * 1.5, ta * 1.5
    out = getattr(F, name)(b, *args, inplace=True)
    tout = getattr(torch.nn.functional, name)(tb, *args, inplace=True)
    assert out is b
    assert_close(b, tb)
    (b * mg.tensor(SEED)).sum().backward()
    (tb * torch.tensor(SEED)).sum().backward()
    assert_close(a.grad, ta.grad)
    assert_close(out, tout)


@pytest.mark.parametrize(("name", "args"), MODULES, ids=str)
def test_modules_with_inplace_overwrite_the_input_and_give_torchs_gradient(name, args):
    module, tmodule = getattr(mg.nn, name)(*args, inplace=True), getattr(torch.nn, name)(*args, inplace=True)
    assert repr(module) == repr(tmodule)
    x, tx = _both()
    assert module(x) is x
    assert tmodule(tx) is tx
    assert_close(x, tx)
    a, ta = _both(requires_grad=True)
    b, tb = a * 0.75, ta * 0.75
    module(b)
    tmodule(tb)
    (b * mg.tensor(SEED)).sum().backward()
    (tb * torch.tensor(SEED)).sum().backward()
    assert_close(a.grad, ta.grad)


@pytest.mark.parametrize(("name", "args"), MODULES, ids=str)
def test_modules_without_inplace_leave_the_input_alone(name, args):
    x = mg.tensor(X.copy())
    y = getattr(mg.nn, name)(*args)(x)
    assert y is not x
    np.testing.assert_array_equal(to_np(x), X)


@pytest.mark.parametrize(("name", "args"), [*FUNCTIONS, ("dropout", (0.5,))], ids=str)
def test_a_leaf_that_requires_grad_raises_torchs_error(name, args):
    def call(L):
        getattr(L.nn.functional, name)(L.tensor(X.tolist(), requires_grad=True), *args, inplace=True)

    assert_same_class_as_torch(f"{name}(inplace=True) on a leaf", call)


def test_a_module_with_inplace_on_a_leaf_raises_torchs_error():
    for name, args in MODULES:
        def call(L, name=name, args=args):
            getattr(L.nn, name)(*args, inplace=True)(L.tensor(X.tolist(), requires_grad=True))

        assert_same_class_as_torch(f"{name}(inplace=True) on a leaf", call)


def test_overwriting_a_value_saved_for_backward_raises_when_backward_runs():
    def call(L):
        a = L.tensor(X.tolist(), requires_grad=True)
        b = a * 2.0
        c = b * b  # saves b
        L.nn.functional.relu(b, inplace=True)
        c.sum().backward()

    assert_same_class_as_torch("backward through a value overwritten in place", call)


def test_dropout_inplace_writes_the_scaled_mask_into_the_input():
    x = mg.tensor(np.arange(1.0, 201.0))
    before = to_np(x).copy()
    y = F.dropout(x, 0.25, training=True, inplace=True)
    assert y is x
    after = to_np(x)
    kept = after != 0
    assert 0 < kept.sum() < x.numel()
    np.testing.assert_allclose(after[kept], before[kept] / 0.75)


def test_dropout_inplace_is_the_same_draw_as_out_of_place():
    mg.manual_seed(3)
    expected = to_np(F.dropout(mg.tensor(X), 0.4, training=True))
    mg.manual_seed(3)
    x = mg.tensor(X.copy())
    F.dropout(x, 0.4, training=True, inplace=True)
    np.testing.assert_array_equal(to_np(x), expected)


def test_dropout_inplace_gradient_is_the_mask_scale():
    a = mg.tensor(np.arange(1.0, 101.0), requires_grad=True)
    b = a * 1.0
    assert F.dropout(b, 0.5, training=True, inplace=True) is b
    b.sum().backward()
    kept = to_np(b) != 0
    np.testing.assert_array_equal(to_np(a.grad), np.where(kept, 2.0, 0.0))


@pytest.mark.parametrize(("p", "training"), [(0.0, True), (0.5, False), (1.0, True)])
def test_dropout_inplace_p0_eval_and_p1_as_torch(p, training):
    for requires_grad in (False, True):
        x, tx = _both(requires_grad=requires_grad)
        if requires_grad and p == 1.0:  # a real write on a leaf: both refuse
            assert_same_class_as_torch(
                "dropout p=1 in place on a leaf",
                lambda L: L.nn.functional.dropout(L.tensor(X.tolist(), requires_grad=True), 1.0, True, True))
            continue
        assert F.dropout(x, p, training, inplace=True) is x
        assert torch.nn.functional.dropout(tx, p, training, inplace=True) is tx
        assert_close(x, tx)


def test_dropout_module_with_inplace():
    module, tmodule = mg.nn.Dropout(0.3, inplace=True), torch.nn.Dropout(0.3, inplace=True)
    assert repr(module) == repr(tmodule)
    x = mg.tensor(np.arange(1.0, 101.0))
    assert module(x) is x
    assert (to_np(x) == 0).any()
    module.eval()
    z = mg.tensor(X.copy())
    assert module(z) is z
    np.testing.assert_array_equal(to_np(z), X)


@pytest.mark.parametrize(("name", "args"), UNDERSCORE, ids=str)
def test_underscore_functions_write_in_place_and_return_the_input(name, args):
    x, tx = _both()
    assert getattr(F, name)(x, *args) is x
    assert getattr(torch.nn.functional, name)(tx, *args) is tx
    assert_close(x, tx)
    a, ta = _both(requires_grad=True)
    b, tb = a * 1.25, ta * 1.25
    assert getattr(F, name)(b, *args) is b
    getattr(torch.nn.functional, name)(tb, *args)
    (b * mg.tensor(SEED)).sum().backward()
    (tb * torch.tensor(SEED)).sum().backward()
    assert_close(a.grad, ta.grad)
    assert_same_class_as_torch(
        f"{name} on a leaf", lambda L: getattr(L.nn.functional, name)(L.tensor(X.tolist(), requires_grad=True), *args))


REPR_CASES = [  # the modules built on the shared bases, with default and other arguments
    ("ReLU", ()), ("ReLU", (True,)), ("LeakyReLU", ()), ("LeakyReLU", (0.2, True)), ("ELU", ()), ("ELU", (0.5, True)),
    ("CELU", (2.0,)), ("SELU", (True,)), ("SiLU", ()), ("Mish", (True,)), ("Hardtanh", ()), ("Hardtanh", (-2, 3, True)),
    ("ReLU6", ()), ("ReLU6", (True,)), ("Hardsigmoid", (True,)), ("Hardswish", (True,)), ("Threshold", (0.1, 2.0)),
    ("Threshold", (0.1, 2.0, True)), ("Hardshrink", ()), ("Softshrink", (0.3,)), ("RReLU", ()),
    ("RReLU", (0.1, 0.2, True)),
    ("MaxPool3d", (2,)), ("MaxPool3d", (3, 1, 1, 2, True, True)), ("AvgPool3d", ((2, 1, 2), 1, 1, True, False, 2)),
    ("AvgPool2d", (3, 2, 1)), ("AdaptiveAvgPool3d", ((2, None, 3),)), ("AdaptiveMaxPool3d", (2, True)),
    ("MaxUnpool2d", ((2, 3), 1, 1)),
]


@pytest.mark.parametrize(("name", "args"), REPR_CASES, ids=str)
def test_repr_matches_torch(name, args):
    assert repr(getattr(mg.nn, name)(*args)) == repr(getattr(torch.nn, name)(*args))


@pytest.mark.parametrize(("name", "args"), [("max_unpool1d", ((2, 2),)), ("max_pool2d", ((2, 2, 2),))], ids=str)
def test_a_size_tuple_of_the_wrong_length_keeps_its_class(name, args):
    """Pooling raises PyTorch's RuntimeError; unpooling keeps its ValueError (PyTorch's own is an IndexError)."""
    x = mg.tensor(np.arange(16.0).reshape(1, 1, 4, 4))
    if name == "max_pool2d":
        with pytest.raises(RuntimeError, match="kernel_size must either be a single int, or a tuple of 2 ints"):
            F.max_pool2d(x, *args)
    else:
        values, indices = F.max_pool1d(x[0], 2, return_indices=True)
        with pytest.raises(ValueError, match="kernel_size must either be a single int, or a tuple of 1 ints"):
            F.max_unpool1d(values, indices, *args)
