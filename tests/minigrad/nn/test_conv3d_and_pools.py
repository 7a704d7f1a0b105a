# ruff: noqa: N803  (calls take the library module as ``L``: torch or minigrad, as in tests/error_classes.py)
"""3-D convolutions and poolings, power-average pooling and max unpooling, against PyTorch.

Every function runs in both libraries on the same data: outputs (values,
shapes, dtypes), input and parameter gradients (float64) and, for max
poolings, the indices must agree; modules are built in both, minigrad's
loaded with PyTorch's weights, and compared the same way (``state_dict``
keys, ``repr``). Bad inputs must raise PyTorch's exception classes. The names
are not wired into ``minigrad.nn`` yet, so they are taken from their modules
(``_mine``); the op-level gradchecks of the 3-D pooling ops live in
``tests/minigrad/ops/cases_pool3d.py``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad as mg
from minigrad.nn import conv, lp_pooling, pooling3d, unpooling
from tests.error_classes import assert_same_class_as_torch

_MODULES = (conv, pooling3d, lp_pooling, unpooling)


def _mine(name):
    """minigrad's ``name`` (a function or module class) from the module that defines it."""
    return next(getattr(m, name) for m in _MODULES if hasattr(m, name))


def fn(L, name):
    """``name`` from PyTorch's ``nn.functional`` / ``nn`` when ``L`` is torch, else minigrad's."""
    if L is torch:
        return getattr(torch.nn.functional, name, None) or getattr(torch.nn, name)
    return _mine(name)


def _arrays(shape, seed=0, low=None):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape) if low is None else rng.integers(low, -low, shape)


def run_both(name, inputs, *args, seed=1, grad=True, **kwargs):
    """``name(*inputs, *args, **kwargs)`` in both libraries on float64 copies of ``inputs`` (arrays):
    compare outputs (and indices), then the inputs' gradients for a random output gradient."""
    mine_in = [mg.tensor(a, requires_grad=grad and a.dtype.kind == "f") for a in inputs]
    theirs_in = [torch.tensor(a, requires_grad=grad and a.dtype.kind == "f") for a in inputs]
    out, expected = fn(mg, name)(*mine_in, *args, **kwargs), fn(torch, name)(*theirs_in, *args, **kwargs)
    if isinstance(expected, tuple):  # (values, indices)
        np.testing.assert_array_equal(out[1].numpy(), expected[1].numpy())
        assert out[1].dtype == mg.int64
        out, expected = out[0], expected[0]
    assert out.shape == tuple(expected.shape)
    assert str(out.dtype).split(".")[-1] == str(expected.dtype).split(".")[-1]
    rtol = 1e-10 if expected.dtype == torch.float64 else 1e-6
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=rtol, atol=1e-12)
    if grad:
        g = np.random.default_rng(seed).standard_normal(tuple(expected.shape))
        (out * mg.tensor(g)).sum().backward()
        (expected * torch.tensor(g)).sum().backward()
        for a, b in zip(mine_in, theirs_in):
            if b.requires_grad:
                np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-10, atol=1e-12)
    return out


# -- conv3d and conv_transpose3d -------------------------------------------------------------------


@st.composite
def conv_geometry(draw, transposed=False):
    """Input shape, weight shape, bias and keyword arguments of a small 3-D (transposed) convolution."""
    groups = draw(st.integers(1, 2))
    c_in, c_out = groups * draw(st.integers(1, 2)), groups * draw(st.integers(1, 2))
    kernel = tuple(draw(st.integers(1, 3)) for _ in range(3))
    stride = tuple(draw(st.integers(1, 2)) for _ in range(3))
    dilation = tuple(draw(st.integers(1, 2)) for _ in range(3))
    padding = tuple(draw(st.integers(0, 1)) for _ in range(3))
    spans = [d * (k - 1) + 1 for k, d in zip(kernel, dilation)]
    size = tuple(draw(st.integers(max(1, s - 2 * p), max(4, s - 2 * p))) for s, p in zip(spans, padding))
    kwargs = {"stride": stride, "padding": padding, "dilation": dilation, "groups": groups}
    if transposed:
        kwargs["output_padding"] = tuple(draw(st.integers(0, max(s, d) - 1)) for s, d in zip(stride, dilation))
        kwargs["padding"] = tuple(min(p, (n - 1) * s // 2) for p, n, s in zip(padding, size, stride))
        weight = (c_in, c_out // groups, *kernel)
    else:
        weight = (c_out, c_in // groups, *kernel)
    batch = draw(st.sampled_from([(), (1,), (2,)]))
    return (*batch, c_in, *size), weight, draw(st.booleans()), kwargs


@settings(max_examples=10, deadline=None)
@given(conv_geometry())
def test_conv3d_matches_torch(geometry):
    shape, weight, bias, kwargs = geometry
    inputs = [_arrays(shape), _arrays(weight, 1)] + ([_arrays(weight[0], 2)] if bias else [])
    run_both("conv3d", inputs, **kwargs)


@settings(max_examples=10, deadline=None)
@given(conv_geometry(transposed=True))
def test_conv_transpose3d_matches_torch(geometry):
    shape, weight, bias, kwargs = geometry
    inputs = [_arrays(shape), _arrays(weight, 1)] + ([_arrays(weight[1] * kwargs["groups"], 2)] if bias else [])
    run_both("conv_transpose3d", inputs, **kwargs)


@pytest.mark.parametrize("padding", ["same", "valid"])
def test_conv3d_padding_strings(padding):
    run_both("conv3d", [_arrays((2, 2, 4, 5, 3)), _arrays((3, 2, 2, 3, 2), 1)], padding=padding, dilation=(1, 2, 1))


def test_conv3d_float32_and_second_order():
    x = np.random.default_rng(0).standard_normal((1, 2, 3, 4, 3)).astype(np.float32)
    w = np.random.default_rng(1).standard_normal((2, 2, 2, 2, 2)).astype(np.float32)
    out = conv.conv3d(mg.tensor(x), mg.tensor(w), stride=(1, 2, 1))
    assert out.dtype == mg.float32
    np.testing.assert_allclose(out.numpy(), torch.nn.functional.conv3d(torch.tensor(x), torch.tensor(w),
                                                                       stride=(1, 2, 1)).numpy(), rtol=1e-5, atol=1e-5)
    # Gradients of gradients, through Unfold/Fold and the 2-D convolution.
    xs = mg.tensor(np.random.default_rng(2).standard_normal((1, 2, 3, 3, 3)), requires_grad=True)
    ws = mg.tensor(np.random.default_rng(3).standard_normal((2, 1, 2, 2, 1)), requires_grad=True)
    assert mg.autograd.gradcheck(lambda a, b: conv.conv3d(a, b, padding=1, groups=2), (xs, ws))

    def first_order(a, b):  # d/d(a, b) of sum(conv_transpose3d(a, b) ** 2), recorded
        out = conv.conv_transpose3d(a, b, stride=2, groups=2)
        return mg.autograd.grad((out ** 2).sum(), (a, b), create_graph=True)

    assert mg.autograd.gradcheck(first_order, (xs, ws))


def _copy(module, torch_module):
    module.load_state_dict({k: v.detach().numpy() for k, v in torch_module.state_dict().items()})
    return module


CONV_MODULES = [
    (lambda nn: nn.Conv3d(2, 4, 2), (2, 2, 3, 4, 3), {}),
    (lambda nn: nn.Conv3d(4, 2, (1, 2, 3), stride=(2, 1, 1), padding=1, dilation=(1, 2, 1), groups=2, bias=False),
     (1, 4, 3, 4, 5), {}),
    (lambda nn: nn.Conv3d(2, 2, 3, padding="same", padding_mode="reflect"), (2, 3, 4, 4), {}),
    (lambda nn: nn.Conv3d(2, 2, 2, padding=1, padding_mode="circular"), (1, 2, 3, 3, 3), {}),
    (lambda nn: nn.Conv3d(2, 2, 2, padding=(1, 0, 1), padding_mode="replicate"), (1, 2, 3, 3, 3), {}),
    (lambda nn: nn.ConvTranspose3d(2, 4, 2, stride=2, output_padding=(1, 0, 1), groups=2), (1, 2, 2, 3, 2), {}),
    (lambda nn: nn.ConvTranspose3d(3, 2, (2, 1, 3), stride=(1, 2, 2), padding=(0, 0, 1)), (3, 2, 2, 2),
     {"output_size": (3, 4, 4)}),
]


@pytest.mark.parametrize("build, shape, call", CONV_MODULES)
def test_conv_modules_match_torch(build, shape, call):
    theirs = build(torch.nn).double()
    mine = _copy(build(MINE).double(), theirs)
    assert repr(mine) == repr(theirs)
    assert list(mine.state_dict()) == list(theirs.state_dict())
    x = _arrays(shape)
    xm, xt = mg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    out, expected = mine(xm, **call), theirs(xt, **call)
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=1e-10, atol=1e-12)
    g = _arrays(tuple(expected.shape), 5)
    out.backward(mg.tensor(g))
    expected.backward(torch.tensor(g))
    np.testing.assert_allclose(xm.grad.numpy(), xt.grad.numpy(), rtol=1e-10, atol=1e-12)
    for (name, p), (_, q) in zip(mine.named_parameters(), theirs.named_parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-10, atol=1e-12, err_msg=name)


def test_conv_modules_initialize_like_torch():
    for module, fan_in in ((conv.Conv3d(4, 8, (2, 3, 3), groups=2), 2 * 18), (conv.ConvTranspose3d(4, 6, 2), 6 * 8)):
        bound = 1 / math.sqrt(fan_in)
        assert module.weight.shape == ((8, 2, 2, 3, 3) if isinstance(module, conv.Conv3d) else (4, 6, 2, 2, 2))
        weights, bias = module.weight.detach().numpy(), module.bias.detach().numpy()
        assert np.abs(weights).max() <= bound and np.abs(weights).max() > 0.8 * bound
        assert np.abs(bias).max() <= bound


# -- 3-D pooling --------------------------------------------------------------------------------------


MAX_POOLS = [
    dict(kernel_size=2),
    dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
    dict(kernel_size=(2, 3, 2), stride=(1, 2, 3), dilation=(2, 1, 2), padding=(1, 1, 0)),
    dict(kernel_size=2, stride=1),
    dict(kernel_size=[2], stride=(), dilation=[1]),
    dict(kernel_size=2, stride=2, padding=1, dilation=3),  # windows of padding only (PyTorch's indices)
]


@pytest.mark.parametrize("kwargs", MAX_POOLS)
def test_max_pool3d_matches_torch(kwargs):
    run_both("max_pool3d", [_arrays((2, 3, 5, 6, 7))], return_indices=True, **kwargs)
    run_both("max_pool3d", [_arrays((3, 5, 4, 4))], **kwargs)


def test_max_pool3d_ties_nan_inf_and_integers():
    x = np.round(_arrays((2, 2, 4, 4, 5)))  # many ties
    x[0, 0, 0, 0, :2], x[0, 0, 1, 1, 1], x[1, 1] = np.nan, np.nan, -np.inf
    values, indices = pooling3d.max_pool3d(mg.tensor(x), 3, 2, 1, return_indices=True)
    expected, expected_indices = torch.nn.functional.max_pool3d(torch.tensor(x), 3, 2, 1, return_indices=True)
    np.testing.assert_array_equal(indices.numpy(), expected_indices.numpy())
    np.testing.assert_array_equal(values.numpy(), expected.numpy())  # NaN in the same places
    run_both("max_pool3d", [np.round(_arrays((2, 2, 4, 4, 5)))], 2, 1, return_indices=True)
    run_both("max_pool3d", [_arrays((1, 2, 4, 3, 5), low=-50)], 3, 2, 1, ceil_mode=True, grad=False)


AVG_POOLS = [
    dict(kernel_size=2),
    dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
    dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
    dict(kernel_size=(2, 3, 2), stride=(1, 2, 3), padding=(1, 1, 0), divisor_override=5),
]


@pytest.mark.parametrize("kwargs", AVG_POOLS)
def test_avg_pool3d_matches_torch(kwargs):
    run_both("avg_pool3d", [_arrays((2, 3, 5, 6, 7))], **kwargs)
    run_both("avg_pool3d", [_arrays((3, 4, 4, 5))], **kwargs)
    run_both("avg_pool3d", [_arrays((2, 2, 4, 4, 5), low=-40)], grad=False, **kwargs)  # truncating division


@pytest.mark.parametrize("output_size", [1, 2, (3, 4, 5), (None, 2, 3), (5, 6, 7), (4, 1, 3), (0, 2, 2)])
def test_adaptive_pool3d_matches_torch(output_size):
    x = _arrays((2, 3, 5, 6, 7))
    grad = output_size != (0, 2, 2)  # PyTorch's backward fails on an empty output
    run_both("adaptive_max_pool3d", [x], output_size, return_indices=True, grad=grad)
    run_both("adaptive_avg_pool3d", [x], output_size, grad=grad)
    run_both("adaptive_avg_pool3d", [x[0]], output_size, grad=grad)


def test_adaptive_pool3d_float32_and_empty_batch():
    x = _arrays((0, 2, 3, 3, 3)).astype(np.float32)
    for name in ("adaptive_avg_pool3d", "adaptive_max_pool3d", "max_pool3d", "avg_pool3d"):
        out = fn(mg, name)(mg.tensor(x), 2)
        assert out.shape == (0, 2) + ((2, 2, 2) if name.startswith("adaptive") else (1, 1, 1))
        assert out.dtype == mg.float32


POOL_MODULES = [
    (lambda nn: nn.MaxPool3d(2, 1, 1, return_indices=True, ceil_mode=True), (2, 2, 3, 4, 3)),
    (lambda nn: nn.MaxPool3d((1, 2, 2), dilation=(1, 1, 2)), (2, 4, 4, 5)),
    (lambda nn: nn.AvgPool3d(2, 1, 1, count_include_pad=False, divisor_override=3), (2, 2, 3, 4, 3)),
    (lambda nn: nn.AvgPool3d(3, ceil_mode=True), (2, 4, 4, 5)),
    (lambda nn: nn.AdaptiveAvgPool3d((2, None, 3)), (2, 2, 3, 4, 5)),
    (lambda nn: nn.AdaptiveMaxPool3d(2, return_indices=True), (2, 2, 3, 4, 5)),
    (lambda nn: nn.LPPool1d(2, 3, 2), (2, 3, 8)),
    (lambda nn: nn.LPPool2d(1.5, (2, 3), ceil_mode=True), (2, 5, 7)),
]


@pytest.mark.parametrize("build, shape", POOL_MODULES)
def test_pool_modules_match_torch(build, shape):
    theirs, mine = build(torch.nn), build(MINE)
    assert repr(mine) == repr(theirs)
    x = np.abs(_arrays(shape))
    out, expected = mine(mg.tensor(x)), theirs(torch.tensor(x))
    if isinstance(expected, tuple):
        np.testing.assert_array_equal(out[1].numpy(), expected[1].numpy())
        out, expected = out[0], expected[0]
    np.testing.assert_allclose(out.numpy(), expected.numpy(), rtol=1e-10)


class _Classes:
    """``nn.<Class>`` lookups answered from the modules under test (not wired into ``minigrad.nn`` yet)."""

    def __getattr__(self, name):
        return _mine(name)


MINE = _Classes()


# -- LP pooling ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("args", [(2, 3), (1, 2), (3, 3, 2), (-1, 2), (float("inf"), 2), (-float("inf"), 3, 2, True),
                                  (2.5, 3, 1)])
def test_lp_pool1d_matches_torch(args):
    x = _arrays((2, 3, 9))
    run_both("lp_pool1d", [np.abs(x) if isinstance(args[0], float) and args[0] % 1 else x], *args)
    run_both("lp_pool1d", [x[0]], *args)


@pytest.mark.parametrize("args", [(2, 3), (1, (2, 3)), (3, 3, 2), (2, 3, (2, 1), True), (float("inf"), 2)])
def test_lp_pool2d_matches_torch(args):
    run_both("lp_pool2d", [_arrays((2, 3, 5, 7))], *args)
    run_both("lp_pool2d", [_arrays((3, 5, 7))], *args)


def test_lp_pool_integers_and_zero_windows():
    for p in (2, 3, 1.5):
        run_both("lp_pool1d", [_arrays((2, 3, 8), low=-5)], p, 2, grad=False)  # float32 results, like PyTorch
        run_both("lp_pool2d", [_arrays((2, 3, 2, 4), low=-5)], p, 2, grad=False)
    zeros = np.zeros((1, 1, 6))
    zeros[0, 0, 2:4] = 1.0
    run_both("lp_pool1d", [zeros], 2, 2)  # the gradient of an all-zero window is 0, not NaN


# -- max unpooling -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("pool, shapes", [
    # (dims, input shape): sizes that the pooling's output size maps back to
    (dict(kernel_size=2), ((1, (2, 3, 8)), (2, (2, 3, 4, 6)), (2, (3, 4, 6)))),
    (dict(kernel_size=3, stride=2, padding=1), ((1, (2, 3, 9)), (2, (2, 3, 5, 7)), (2, (3, 5, 7)))),
])
@pytest.mark.parametrize("grow", [0, 1])
def test_max_unpool_matches_torch(pool, shapes, grow):
    for dims, shape in shapes:
        values, indices = getattr(torch.nn.functional, f"max_pool{dims}d")(
            torch.tensor(_arrays(shape)), return_indices=True, **pool)
        default = [(n - 1) * pool.get("stride", pool["kernel_size"]) - 2 * pool.get("padding", 0)
                   + pool["kernel_size"] for n in values.shape[-dims:]]
        size = [n + grow for n in default]
        run_both(f"max_unpool{dims}d", [values.numpy(), indices.numpy()], output_size=size, **pool)
        module = unpooling.MaxUnpool1d if dims == 1 else unpooling.MaxUnpool2d
        torch_module = torch.nn.MaxUnpool1d if dims == 1 else torch.nn.MaxUnpool2d
        out = module(**pool)(mg.tensor(values.numpy()), mg.tensor(indices.numpy()))
        np.testing.assert_array_equal(out.numpy(), torch_module(**pool)(values, indices).numpy())
        assert repr(module(**pool)) == repr(torch_module(**pool))


# -- bad inputs: PyTorch's exception classes ------------------------------------------------------------------


def _vol(L, *shape, dtype=None):
    return L.ones(*shape, dtype=dtype or L.float32)


BAD_CALLS = {
    "conv3d 4-D weight": lambda L: fn(L, "conv3d")(_vol(L, 1, 2, 3, 3, 3), _vol(L, 2, 2, 2, 2)),
    "conv3d 3-D input": lambda L: fn(L, "conv3d")(_vol(L, 2, 3, 3), _vol(L, 2, 2, 2, 2, 2)),
    "conv3d channels": lambda L: fn(L, "conv3d")(_vol(L, 1, 3, 3, 3, 3), _vol(L, 2, 2, 2, 2, 2)),
    "conv3d groups": lambda L: fn(L, "conv3d")(_vol(L, 1, 4, 3, 3, 3), _vol(L, 6, 2, 2, 2, 2), groups=3),
    "conv3d stride 0": lambda L: fn(L, "conv3d")(_vol(L, 1, 2, 3, 3, 3), _vol(L, 2, 2, 2, 2, 2), stride=0),
    "conv3d stride pair": lambda L: fn(L, "conv3d")(_vol(L, 1, 2, 3, 3, 3), _vol(L, 2, 2, 2, 2, 2), stride=(1, 1)),
    "conv3d stride float": lambda L: fn(L, "conv3d")(_vol(L, 1, 2, 3, 3, 3), _vol(L, 2, 2, 2, 2, 2), stride=1.5),
    "conv3d padding -1": lambda L: fn(L, "conv3d")(_vol(L, 1, 2, 3, 3, 3), _vol(L, 2, 2, 2, 2, 2), padding=-1),
    "conv3d padding word": lambda L: fn(L, "conv3d")(_vol(L, 1, 2, 3, 3, 3), _vol(L, 2, 2, 2, 2, 2), padding="x"),
    "conv3d same strided": lambda L: fn(L, "conv3d")(_vol(L, 1, 2, 3, 3, 3), _vol(L, 2, 2, 2, 2, 2), padding="same",
                                                     stride=2),
    "conv3d kernel too big": lambda L: fn(L, "conv3d")(_vol(L, 1, 2, 1, 3, 3), _vol(L, 2, 2, 2, 2, 2)),
    "conv3d empty volume": lambda L: fn(L, "conv3d")(_vol(L, 1, 2, 0, 3, 3), _vol(L, 2, 2, 1, 1, 1)),
    "conv3d bias size": lambda L: fn(L, "conv3d")(_vol(L, 1, 2, 3, 3, 3), _vol(L, 2, 2, 2, 2, 2), _vol(L, 3)),
    "conv3d dtypes": lambda L: fn(L, "conv3d")(_vol(L, 1, 2, 3, 3, 3), _vol(L, 2, 2, 2, 2, 2, dtype=L.float64)),
    "conv3d bool": lambda L: fn(L, "conv3d")(_vol(L, 1, 2, 3, 3, 3) > 0, _vol(L, 2, 2, 2, 2, 2) > 0),
    "conv_transpose3d channels": lambda L: fn(L, "conv_transpose3d")(_vol(L, 1, 3, 2, 2, 2), _vol(L, 2, 2, 2, 2, 2)),
    "conv_transpose3d output_padding": lambda L: fn(L, "conv_transpose3d")(
        _vol(L, 1, 2, 2, 2, 2), _vol(L, 2, 2, 2, 2, 2), stride=2, output_padding=2),
    "conv_transpose3d padding word": lambda L: fn(L, "conv_transpose3d")(
        _vol(L, 1, 2, 2, 2, 2), _vol(L, 2, 2, 2, 2, 2), padding="same"),
    "conv_transpose3d too small": lambda L: fn(L, "conv_transpose3d")(
        _vol(L, 1, 2, 1, 1, 1), _vol(L, 2, 2, 1, 1, 1), padding=1),
    "Conv3d groups": lambda L: fn(L, "Conv3d")(3, 4, 2, groups=2),
    "Conv3d padding_mode": lambda L: fn(L, "Conv3d")(2, 4, 2, padding_mode="bogus"),
    "Conv3d same strided": lambda L: fn(L, "Conv3d")(2, 4, 2, stride=2, padding="same"),
    "ConvTranspose3d padding_mode": lambda L: fn(L, "ConvTranspose3d")(2, 4, 2, padding_mode="reflect"),
    "ConvTranspose3d output_size": lambda L: fn(L, "ConvTranspose3d")(2, 2, 2, stride=2)(
        _vol(L, 1, 2, 2, 2, 2), output_size=(9, 9, 9)),
    "max_pool3d 3-D input": lambda L: fn(L, "max_pool3d")(_vol(L, 3, 3, 3), 2),
    "max_pool3d empty volume": lambda L: fn(L, "max_pool3d")(_vol(L, 1, 2, 0, 3, 3), 2),
    "max_pool3d padding": lambda L: fn(L, "max_pool3d")(_vol(L, 1, 2, 4, 4, 4), 2, padding=2),
    "max_pool3d kernel pair": lambda L: fn(L, "max_pool3d")(_vol(L, 1, 2, 4, 4, 4), (2, 2)),
    "max_pool3d stride 0": lambda L: fn(L, "max_pool3d")(_vol(L, 1, 2, 4, 4, 4), 2, 0),
    "max_pool3d dilation 0": lambda L: fn(L, "max_pool3d")(_vol(L, 1, 2, 4, 4, 4), 2, dilation=0),
    "max_pool3d too small": lambda L: fn(L, "max_pool3d")(_vol(L, 1, 2, 4, 4, 4), 5),
    "max_pool3d ceil_mode int": lambda L: fn(L, "max_pool3d")(_vol(L, 1, 2, 4, 4, 4), 2, ceil_mode=1),
    "max_pool3d bool": lambda L: fn(L, "max_pool3d")(_vol(L, 1, 2, 4, 4, 4) > 0, 2),
    "avg_pool3d kernel over input": lambda L: fn(L, "avg_pool3d")(_vol(L, 1, 1, 1, 3, 3), 2, padding=1),
    "avg_pool3d divisor 0": lambda L: fn(L, "avg_pool3d")(_vol(L, 1, 2, 4, 4, 4), 2, divisor_override=0),
    "avg_pool3d divisor float": lambda L: fn(L, "avg_pool3d")(_vol(L, 1, 2, 4, 4, 4), 2, divisor_override=1.5),
    "avg_pool3d float16": lambda L: fn(L, "avg_pool3d")(_vol(L, 1, 2, 4, 4, 4, dtype=L.float16), 2),
    "avg_pool3d count_include_pad None": lambda L: fn(L, "avg_pool3d")(_vol(L, 1, 2, 4, 4, 4), 2,
                                                                       count_include_pad=None),
    "avg_pool3d 2-D input": lambda L: fn(L, "avg_pool3d")(_vol(L, 3, 3), 2),
    "adaptive_avg_pool3d pair": lambda L: fn(L, "adaptive_avg_pool3d")(_vol(L, 1, 2, 4, 4, 4), (2, 2)),
    "adaptive_avg_pool3d negative": lambda L: fn(L, "adaptive_avg_pool3d")(_vol(L, 1, 2, 4, 4, 4), -1),
    "adaptive_avg_pool3d integers": lambda L: fn(L, "adaptive_avg_pool3d")(_vol(L, 1, 2, 4, 4, 4, dtype=L.int64), 2),
    "adaptive_max_pool3d 3-D input": lambda L: fn(L, "adaptive_max_pool3d")(_vol(L, 4, 4, 4), 2),
    "adaptive_max_pool3d empty": lambda L: fn(L, "adaptive_max_pool3d")(_vol(L, 2, 0, 4, 4, 4), 2),
    "lp_pool1d norm 0": lambda L: fn(L, "lp_pool1d")(_vol(L, 2, 3, 8), 0, 2),
    "lp_pool1d norm word": lambda L: fn(L, "lp_pool1d")(_vol(L, 2, 3, 8), "2", 2),
    "lp_pool1d kernel tuple": lambda L: fn(L, "lp_pool1d")(_vol(L, 2, 3, 8), 2, (2,)),
    "lp_pool1d kernel 0": lambda L: fn(L, "lp_pool1d")(_vol(L, 2, 3, 8), 2, 0),
    "lp_pool1d 1-D input": lambda L: fn(L, "lp_pool1d")(_vol(L, 8), 2, 2),
    "lp_pool2d kernel triple": lambda L: fn(L, "lp_pool2d")(_vol(L, 2, 3, 4, 6), 2, (2, 3, 1)),
    "lp_pool2d 2-D input": lambda L: fn(L, "lp_pool2d")(_vol(L, 4, 6), 2, 2),
    "lp_pool2d ceil_mode int": lambda L: fn(L, "lp_pool2d")(_vol(L, 3, 4, 6), 2, 2, ceil_mode=1),
    "max_unpool1d output_size range": lambda L: fn(L, "max_unpool1d")(_vol(L, 2, 3, 4), L.zeros(2, 3, 4,
                                                                      dtype=L.int64), 2, output_size=(10,)),
    "max_unpool1d output_size length": lambda L: fn(L, "max_unpool1d")(_vol(L, 2, 3, 4), L.zeros(2, 3, 4,
                                                                       dtype=L.int64), 2, output_size=(1, 2, 3, 9)),
    "max_unpool1d index range": lambda L: fn(L, "max_unpool1d")(_vol(L, 2, 3, 4), L.full((2, 3, 4), 8), 2),
    "max_unpool1d negative index": lambda L: fn(L, "max_unpool1d")(_vol(L, 2, 3, 4), L.full((2, 3, 4), -1), 2),
    "max_unpool1d float indices": lambda L: fn(L, "max_unpool1d")(_vol(L, 2, 3, 4), _vol(L, 2, 3, 4), 2),
    "max_unpool1d int32 indices": lambda L: fn(L, "max_unpool1d")(_vol(L, 2, 3, 4), L.zeros(2, 3, 4,
                                                                  dtype=L.int32), 2),
    "max_unpool1d indices shape": lambda L: fn(L, "max_unpool1d")(_vol(L, 2, 3, 4), L.zeros(2, 3, 2,
                                                                  dtype=L.int64), 2),
    "max_unpool1d 1-D input": lambda L: fn(L, "max_unpool1d")(_vol(L, 4), L.zeros(4, dtype=L.int64), 2),
    "max_unpool1d integers": lambda L: fn(L, "max_unpool1d")(L.ones(2, 3, 4, dtype=L.int64),
                                                             L.zeros(2, 3, 4, dtype=L.int64), 2),
    "max_unpool1d negative size": lambda L: fn(L, "max_unpool1d")(_vol(L, 2, 3, 4), L.zeros(2, 3, 4,
                                                                  dtype=L.int64), -2),
    "max_unpool1d kernel word": lambda L: fn(L, "max_unpool1d")(_vol(L, 2, 3, 4), L.zeros(2, 3, 4,
                                                                dtype=L.int64), "a"),
    "max_unpool2d 5-D input": lambda L: fn(L, "max_unpool2d")(_vol(L, 1, 2, 3, 4, 4), L.zeros(1, 2, 3, 4, 4,
                                                              dtype=L.int64), 2),
    "max_unpool2d bool": lambda L: fn(L, "max_unpool2d")(_vol(L, 2, 3, 4) > 0, L.zeros(2, 3, 4, dtype=L.int64), 2),
}


@pytest.mark.parametrize("name", list(BAD_CALLS))
def test_bad_inputs_raise_torchs_classes(name):
    assert_same_class_as_torch(name, BAD_CALLS[name])
