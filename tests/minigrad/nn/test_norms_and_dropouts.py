"""RMS norm, local response norm, alpha dropout and 3-D channel dropout against PyTorch.

The normalizations (``F.rms_norm``, ``nn.RMSNorm``, ``F.local_response_norm``,
``nn.LocalResponseNorm``) are deterministic: values, dtypes and float64
gradients are compared with PyTorch's on the same data. The dropouts
(``F.alpha_dropout``, ``F.feature_alpha_dropout``, ``F.dropout3d`` and their
modules) draw from minigrad's generator, so their tests check structure and
statistics instead of values: each output element is either the "kept" or the
"dropped" value of the formula, masks are constant over a channel, the
gradient uses the forward pass's mask, and the degenerate cases (eval mode,
p = 0, p = 1, empty inputs) equal PyTorch's results. Exception classes of bad
calls are compared with PyTorch's through ``tests/error_classes.py``.

The names are not wired into ``minigrad.nn`` yet, so the tests reach them
through ``fn(L, name)``.
"""

# ruff: noqa: N803  (bad calls are written once in PyTorch's idiom as ``call(L)``, L the library)
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad as mg
from minigrad.nn import alpha_dropout as alpha_module
from minigrad.nn import local_response_norm as lrn_module
from minigrad.nn import normalization as normalization_module
from minigrad.nn import rms_norm as rms_module
from tests.error_classes import assert_same_class_as_torch

OURS = {
    "rms_norm": rms_module.rms_norm,
    "RMSNorm": rms_module.RMSNorm,
    "local_response_norm": lrn_module.local_response_norm,
    "LocalResponseNorm": lrn_module.LocalResponseNorm,
    "alpha_dropout": alpha_module.alpha_dropout,
    "feature_alpha_dropout": alpha_module.feature_alpha_dropout,
    "AlphaDropout": alpha_module.AlphaDropout,
    "FeatureAlphaDropout": alpha_module.FeatureAlphaDropout,
    "dropout3d": normalization_module.dropout3d,
    "Dropout3d": normalization_module.Dropout3d,
}
SELU_ALPHA = 1.7580993408473766


def fn(L, name):
    """PyTorch's ``F.name`` / ``nn.Name`` when ``L`` is torch, ours when it is minigrad."""
    if L is torch:
        return getattr(torch.nn.functional, name, None) or getattr(torch.nn, name)
    return OURS[name]


def both(x, requires_grad=False):
    """The same data as a minigrad and a torch tensor."""
    return mg.tensor(x, requires_grad=requires_grad), torch.tensor(x, requires_grad=requires_grad)


def close(a, b, rtol=1e-10, atol=1e-12):
    np.testing.assert_allclose(np.asarray(a.detach().numpy(), dtype=np.complex128),
                               np.asarray(b.detach().numpy(), dtype=np.complex128), rtol=rtol, atol=atol)


def same_dtype(a, b):
    assert str(a.dtype) == str(b.dtype).removeprefix("torch."), (a.dtype, b.dtype)


# -- rms_norm ---------------------------------------------------------------------------------------


def _backward_both(rng, shape, out, expected):
    """Backward the same drawn gradient of ``shape`` through minigrad's ``out`` and PyTorch's ``expected``."""
    g = rng.standard_normal(shape)
    out.backward(mg.tensor(g))
    expected.backward(torch.tensor(g))


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(0, 4), min_size=1, max_size=4), st.integers(1, 3), st.booleans(),
       st.sampled_from([None, 1e-5, 0.5]), st.integers(0, 2**31))
def test_rms_norm_matches_pytorch_with_gradients(shape, trailing, with_weight, eps, seed):
    trailing = min(trailing, len(shape))
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape) * 3
    normalized = tuple(shape[len(shape) - trailing:])
    w = rng.standard_normal(normalized) if with_weight else None
    xm, xt = both(x, True)
    wm, wt = both(w, True) if with_weight else (None, None)
    out, expected = fn(mg, "rms_norm")(xm, normalized, wm, eps), fn(torch, "rms_norm")(xt, normalized, wt, eps)
    same_dtype(out, expected)
    close(out, expected)
    _backward_both(rng, shape, out, expected)
    close(xm.grad, xt.grad, rtol=1e-8, atol=1e-10)
    if with_weight:
        close(wm.grad, wt.grad, rtol=1e-8, atol=1e-10)


def test_rms_norm_gradcheck():
    rng = np.random.default_rng(1)
    x = mg.tensor(rng.standard_normal((3, 2, 4)), requires_grad=True)
    w = mg.tensor(rng.standard_normal((2, 4)), requires_grad=True)
    assert mg.autograd.gradcheck(lambda a, b: rms_module.rms_norm(a, [2, 4], b, 1e-3), (x, w))


@pytest.mark.parametrize(("dtype", "weight_dtype", "rtol"), [
    ("float32", "float32", 1e-6), ("float32", None, 1e-6), ("float16", "float16", 1e-3),
    ("float16", "float32", 1e-3), ("float32", "float64", 1e-6), ("float64", "float32", 1e-12),
    ("complex64", "complex64", 1e-5), ("complex128", None, 1e-12), ("float32", "int64", 1e-6),
])
def test_rms_norm_dtypes_match_pytorch(dtype, weight_dtype, rtol):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((3, 4, 5)) + (1j * rng.standard_normal((3, 4, 5)) if "complex" in dtype else 0)
    x = x.astype(dtype)
    w = None if weight_dtype is None else (rng.standard_normal((5,)) * 3).astype(weight_dtype)
    xm, xt = both(x)
    wm, wt = both(w) if w is not None else (None, None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch's "cannot dispatch to fused implementation" for mixed dtypes
        expected = fn(torch, "rms_norm")(xt, (5,), wt)
    out = fn(mg, "rms_norm")(xm, (5,), wm)
    same_dtype(out, expected)
    close(out, expected, rtol=rtol, atol=rtol)


def test_rms_norm_default_eps_is_the_computation_dtypes_epsilon():
    # values so small that eps decides the result: float16 computes in float32, so float32's eps applies
    for dtype, eps in (("float16", np.finfo(np.float32).eps), ("float32", np.finfo(np.float32).eps),
                       ("float64", np.finfo(np.float64).eps)):
        x = np.full((2, 3), 1e-4, dtype=dtype)
        out = rms_module.rms_norm(mg.tensor(x), (3,))
        expected = (x.astype(np.float64) / np.sqrt(x.astype(np.float64) ** 2 + eps)).astype(dtype)
        np.testing.assert_allclose(out.numpy(), expected, rtol=1e-3 if dtype == "float16" else 1e-6)
        close(out, fn(torch, "rms_norm")(torch.tensor(x), (3,)), rtol=1e-3, atol=0)


def test_rms_norm_mixed_weight_dtype_keeps_each_gradient_dtype():
    xm, xt = both(np.random.default_rng(3).standard_normal((2, 4)).astype(np.float32), True)
    wm, wt = both(np.linspace(-1, 1, 4), True)  # float64
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fn(torch, "rms_norm")(xt, [4], wt).sum().backward()
    fn(mg, "rms_norm")(xm, [4], wm).sum().backward()
    same_dtype(xm.grad, xt.grad)
    same_dtype(wm.grad, wt.grad)
    close(wm.grad, wt.grad, rtol=1e-6, atol=1e-6)


def test_rms_norm_empty_inputs():
    for shape, normalized in (((0, 4), (4,)), ((2, 0), (0,)), ((3, 0, 2), (0, 2))):
        x = np.ones(shape, dtype=np.float32)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no NumPy warning about an empty mean
            out = fn(mg, "rms_norm")(mg.tensor(x), normalized)
        assert out.shape == fn(torch, "rms_norm")(torch.tensor(x), normalized).shape


def test_rms_norm_module_matches_pytorch():
    rng = np.random.default_rng(4)
    for args, kwargs, shape in (((4,), {}, (3, 4)), (([2, 3],), {"eps": 1e-2}, (2, 2, 3)),
                                ((3,), {"elementwise_affine": False}, (5, 3))):
        mine, theirs = fn(mg, "RMSNorm")(*args, **kwargs), fn(torch, "RMSNorm")(*args, **kwargs)
        assert repr(mine) == repr(theirs)
        assert list(mine.state_dict()) == list(theirs.state_dict())
        mine, theirs = mine.double(), theirs.double()
        if theirs.weight is not None:
            w = rng.standard_normal(tuple(theirs.weight.shape))
            with torch.no_grad():
                theirs.weight.copy_(torch.tensor(w))
            mine.load_state_dict({"weight": w})
        xm, xt = both(rng.standard_normal(shape), True)
        out, expected = mine(xm), theirs(xt)
        close(out, expected)
        out.sum().backward()
        expected.sum().backward()
        close(xm.grad, xt.grad, rtol=1e-9)
        if theirs.weight is not None:
            close(mine.weight.grad, theirs.weight.grad, rtol=1e-9)
            mine.weight.grad = None
            mine.reset_parameters()
            np.testing.assert_array_equal(mine.weight.detach().numpy(), np.ones(tuple(theirs.weight.shape)))


def test_rms_norm_module_weight_dtype():
    assert fn(mg, "RMSNorm")(3, dtype=mg.float64).weight.dtype == np.float64
    assert fn(mg, "RMSNorm")(3).weight.dtype == np.float32


# -- local_response_norm ----------------------------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 3), st.integers(1, 6), st.lists(st.integers(1, 3), min_size=1, max_size=3),
       st.integers(1, 9), st.sampled_from([(1e-4, 0.75, 1.0), (0.5, 0.6, 2.0), (2.0, 1.5, 0.5)]),
       st.integers(0, 2**31))
def test_local_response_norm_matches_pytorch_with_gradients(n, c, spatial, size, constants, seed):
    rng = np.random.default_rng(seed)
    shape = (n, c, *spatial)
    xm, xt = both(rng.standard_normal(shape) * 2, True)
    alpha, beta, k = constants
    out = fn(mg, "local_response_norm")(xm, size, alpha, beta, k)
    expected = fn(torch, "local_response_norm")(xt, size, alpha, beta, k)
    same_dtype(out, expected)
    close(out, expected)
    _backward_both(rng, shape, out, expected)
    close(xm.grad, xt.grad, rtol=1e-8, atol=1e-10)


def test_local_response_norm_gradcheck():
    x = mg.tensor(np.random.default_rng(5).standard_normal((2, 5, 3)), requires_grad=True)
    assert mg.autograd.gradcheck(lambda a: lrn_module.local_response_norm(a, 3, 0.4, 0.8, 1.2), (x,))


@pytest.mark.parametrize("shape", [(2, 5, 4), (2, 5, 3, 2)])
@pytest.mark.parametrize("dtype", ["float32", "float16", "int64"])
def test_local_response_norm_dtypes_match_pytorch(shape, dtype):
    rng = np.random.default_rng(6)
    x = rng.integers(-9, 9, shape).astype(dtype) if dtype == "int64" else (rng.standard_normal(shape) * 3).astype(dtype)
    out = fn(mg, "local_response_norm")(mg.tensor(x), 3, 0.3, 0.9, 1.5)
    # PyTorch's CPU average pooling has no float16 kernel in 3-D: compare that case with its float32 result
    t = torch.tensor(x)
    upcast = dtype == "float16" and len(shape) > 3
    expected = fn(torch, "local_response_norm")(t.float() if upcast else t, 3, 0.3, 0.9, 1.5)
    expected = expected.half() if upcast else expected
    same_dtype(out, expected)
    # float16 results may differ by one unit in the last place
    close(out, expected, rtol=2e-3 if dtype == "float16" else 1e-6, atol=1e-6)


def test_local_response_norm_integer_windows_divide_as_integers():
    x = np.array([1, 2, 3, 1]).reshape(1, 4, 1)
    out = fn(mg, "local_response_norm")(mg.tensor(x), 3, alpha=1.0, beta=1.0, k=0.0)
    # window sums of squares 5, 14, 14, 10 over 3 channels: integer means 1, 4, 4, 3
    np.testing.assert_allclose(out.numpy().ravel(), [1 / 1, 2 / 4, 3 / 4, 1 / 3], rtol=1e-6)


def test_local_response_norm_empty_input_is_returned():
    for shape in ((0, 3, 4), (2, 0, 4), (2, 3, 0, 1)):
        x = mg.zeros(*shape)
        assert fn(mg, "local_response_norm")(x, 2) is x


def test_local_response_norm_module_matches_pytorch():
    mine, theirs = fn(mg, "LocalResponseNorm")(3, 0.2, 0.5, 2.0), fn(torch, "LocalResponseNorm")(3, 0.2, 0.5, 2.0)
    assert repr(mine) == repr(theirs)
    assert repr(fn(mg, "LocalResponseNorm")(2)) == repr(fn(torch, "LocalResponseNorm")(2))
    xm, xt = both(np.random.default_rng(7).standard_normal((2, 4, 3, 3)))
    close(mine(xm), theirs(xt))


# -- dropouts: shared structure checks --------------------------------------------------------------


def alpha_constants(p):
    a = 1.0 / math.sqrt((SELU_ALPHA**2 * p + 1) * (1 - p))
    return a, SELU_ALPHA * a * p


def kept_mask(name, x, out, p):
    """Which elements of ``out`` were kept, checking every element is the kept or the dropped value."""
    if "alpha" in name:
        a, b = alpha_constants(p)
        kept_value, dropped_value = a * x + b, np.full_like(x, -SELU_ALPHA * a + b)
    else:
        kept_value, dropped_value = x / (1 - p), np.zeros_like(x)
    kept = np.isclose(out, kept_value, rtol=1e-5, atol=1e-6)
    dropped = np.isclose(out, dropped_value, rtol=1e-5, atol=1e-6)
    assert np.all(kept | dropped), "an element is neither the kept nor the dropped value"
    return kept


# (function, input shape, the leading dims the mask is drawn over: the rest share one draw)
MASKED = [
    ("alpha_dropout", (30, 40), 2),
    ("alpha_dropout", (5, 6, 7), 3),
    ("feature_alpha_dropout", (20, 30, 4), 2),
    ("feature_alpha_dropout", (10, 12, 2, 3), 2),
    ("dropout3d", (8, 10, 2, 3, 2), 2),  # batched: one draw per (sample, channel)
    ("dropout3d", (40, 2, 3, 2), 1),  # unbatched: one draw per channel
]


@pytest.mark.parametrize(("name", "shape", "mask_dims"), MASKED)
def test_dropout_masks_values_and_gradients(name, shape, mask_dims):
    mg.manual_seed(11)
    p = 0.3
    x = np.random.default_rng(8).standard_normal(shape).astype(np.float64)
    xm = mg.tensor(x, requires_grad=True)
    out = fn(mg, name)(xm, p, True)
    assert out.shape == shape and out.dtype == np.float64
    kept = kept_mask(name, x, out.detach().numpy(), p)
    # a channel-wise mask is the same over the dimensions after ``mask_dims``
    per_draw = kept.reshape(shape[:mask_dims] + (-1,))
    assert np.all(per_draw == per_draw[..., :1])
    draws = per_draw[..., 0]
    assert abs(1 - draws.mean() - p) < 4 * math.sqrt(p * (1 - p) / draws.size) + 1e-9
    # the gradient goes through the same mask: d out / d x is the kept scale or 0
    g = np.random.default_rng(9).standard_normal(shape)
    out.backward(mg.tensor(g))
    scale = alpha_constants(p)[0] if "alpha" in name else 1 / (1 - p)
    np.testing.assert_allclose(xm.grad.numpy(), g * kept * scale, rtol=1e-12)


@pytest.mark.parametrize("name", ["alpha_dropout", "feature_alpha_dropout"])
def test_alpha_dropout_keeps_zero_mean_and_unit_variance(name):
    mg.manual_seed(12)
    shape = (400, 500) if name == "alpha_dropout" else (400, 500, 1)
    for p in (0.1, 0.5):
        out = fn(mg, name)(mg.randn(*shape), p, True).numpy()
        assert abs(out.mean()) < 0.02 and abs(out.std() - 1) < 0.02


def test_dropout3d_scales_kept_channels():
    mg.manual_seed(13)
    out = fn(mg, "dropout3d")(mg.ones(50, 40, 1, 2, 2), 0.25).numpy()
    np.testing.assert_allclose(out[out != 0], 1 / 0.75, rtol=1e-7)
    assert abs(out.mean() - 1) < 0.05


@pytest.mark.parametrize("name", ["alpha_dropout", "feature_alpha_dropout", "dropout3d"])
def test_dropout_draws_follow_the_seed(name):
    x = mg.randn(3, 4, 2, 2, 2)
    mg.manual_seed(5)
    first = fn(mg, name)(x, 0.5, True).numpy()
    mg.manual_seed(5)
    np.testing.assert_array_equal(fn(mg, name)(x, 0.5, True).numpy(), first)
    assert not np.array_equal(fn(mg, name)(x, 0.5, True).numpy(), first)


@pytest.mark.parametrize("name", ["alpha_dropout", "feature_alpha_dropout", "dropout3d"])
def test_dropout_degenerate_cases_match_pytorch(name):
    x = np.random.default_rng(10).standard_normal((2, 3, 2, 2, 2)).astype(np.float32)
    for shape_x in (x, x[:0]):
        for p, training in ((0.5, False), (0.0, True), (1.0, True), (1, False)):
            xm, xt = both(shape_x)
            out, expected = fn(mg, name)(xm, p, training), fn(torch, name)(xt, p, training)
            same_dtype(out, expected)
            close(out, expected, rtol=0, atol=0)
            if p < 1 or not training or shape_x.size == 0:
                assert out is xm  # returned as is
    # p = 1 gives zeros of the input's dtype, integers too; its gradient is zero
    ints = np.arange(24).reshape(2, 3, 2, 2)
    out, expected = fn(mg, name)(mg.tensor(ints), 1.0, True), fn(torch, name)(torch.tensor(ints), 1.0, True)
    same_dtype(out, expected)
    close(out, expected, rtol=0, atol=0)
    xm = mg.ones(2, 3, 4, 5, requires_grad=True)
    fn(mg, name)(xm, 1.0, True).sum().backward()
    np.testing.assert_array_equal(xm.grad.numpy(), 0)


def test_training_defaults_match_pytorch():
    x = mg.ones(2, 3, 4, 5)
    assert fn(mg, "alpha_dropout")(x) is x  # training=False by default, as PyTorch's
    assert fn(mg, "feature_alpha_dropout")(x) is x
    mg.manual_seed(0)
    assert not np.array_equal(fn(mg, "dropout3d")(mg.ones(4, 8, 2, 2, 2)).numpy(), 1)  # training=True by default


@pytest.mark.parametrize("name", ["alpha_dropout", "feature_alpha_dropout", "dropout3d"])
def test_in_place_dropout(name):
    mg.manual_seed(14)
    x = mg.tensor(np.random.default_rng(11).standard_normal((4, 5, 2, 3)))
    before = x.numpy().copy()
    out = fn(mg, name)(x, 0.4, True, True)
    assert out is x
    kept_mask(name, before, x.numpy(), 0.4)
    assert not np.array_equal(x.numpy(), before)
    # on a graph it is recorded: the gradient reaches the leaf through the mask
    leaf = mg.tensor(before, requires_grad=True)
    h = leaf * 1.0
    fn(mg, name)(h, 0.4, True, True)
    h.sum().backward()
    kept = kept_mask(name, before, h.detach().numpy(), 0.4)
    scale = alpha_constants(0.4)[0] if "alpha" in name else 1 / 0.6
    np.testing.assert_allclose(leaf.grad.numpy(), kept * scale, rtol=1e-12)
    # in eval mode nothing is written, so a leaf is fine (as in PyTorch)
    assert fn(mg, name)(leaf, 0.4, False, True) is leaf


def test_dropout3d_warns_for_other_ranks():
    for L in (mg, torch):
        with pytest.warns(UserWarning, match="dropout3d"):
            fn(L, "dropout3d")(L.ones(3, 4, 5), 0.5, False)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            fn(L, "dropout3d")(L.ones(3, 4, 5, 6), 0.5, False)
            fn(L, "dropout3d")(L.ones(2, 3, 4, 5, 6), 0.5, False)


def test_dropout3d_low_ranks_drop_along_the_first_dimension():
    mg.manual_seed(15)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = fn(mg, "dropout3d")(mg.ones(200, 3), 0.5).numpy()
        assert np.all(out == out[:, :1]) and 0 < out.mean() < 2
        vector = fn(mg, "dropout3d")(mg.ones(100), 0.5).numpy()  # one draw per element
        assert set(np.unique(vector)) == {0.0, 2.0}


@pytest.mark.parametrize("name", ["AlphaDropout", "FeatureAlphaDropout", "Dropout3d"])
def test_dropout_modules(name):
    for args in ((), (0.2,), (0.3, True)):
        assert repr(fn(mg, name)(*args)) == repr(fn(torch, name)(*args))
    module = fn(mg, name)(0.5, inplace=True)
    x = mg.ones(4, 6, 2, 2, 2)
    mg.manual_seed(16)
    out = module(x)
    if name == "Dropout3d":
        assert out is x  # writes in place
    else:
        assert out is not x and np.array_equal(x.numpy(), np.ones(x.shape))  # PyTorch's modules ignore inplace
    module.eval()
    assert module(x) is x
    assert fn(mg, name)(float("nan")).p != fn(mg, name)(float("nan")).p  # NaN is accepted when built


# -- bad inputs: the exception classes PyTorch raises -----------------------------------------------


def _x(L, *shape, dtype=None):
    return L.ones(*shape, dtype=dtype or L.float32)


ERRORS = {
    # rms_norm
    "rms_norm int shape": lambda L: fn(L, "rms_norm")(_x(L, 2, 4), 4),
    "rms_norm float entry": lambda L: fn(L, "rms_norm")(_x(L, 2, 4), (4.0,)),
    "rms_norm bool entry": lambda L: fn(L, "rms_norm")(_x(L, 2, 4), (True,)),
    "rms_norm str shape": lambda L: fn(L, "rms_norm")(_x(L, 2, 4), "a"),
    "rms_norm empty shape": lambda L: fn(L, "rms_norm")(_x(L, 2, 4), ()),
    "rms_norm mismatch": lambda L: fn(L, "rms_norm")(_x(L, 2, 4), (3,)),
    "rms_norm negative": lambda L: fn(L, "rms_norm")(_x(L, 2, 4), (-4,)),
    "rms_norm too long": lambda L: fn(L, "rms_norm")(_x(L, 2, 4), (1, 2, 4)),
    "rms_norm 0-d": lambda L: fn(L, "rms_norm")(L.tensor(1.0), (1,)),
    "rms_norm weight shape": lambda L: fn(L, "rms_norm")(_x(L, 2, 4), (4,), _x(L, 3)),
    "rms_norm weight 0-d": lambda L: fn(L, "rms_norm")(_x(L, 2, 4), (4,), L.tensor(2.0)),
    "rms_norm weight list": lambda L: fn(L, "rms_norm")(_x(L, 2, 4), (4,), [1.0] * 4),
    "rms_norm eps str": lambda L: fn(L, "rms_norm")(_x(L, 2, 4), (4,), None, "a"),
    "rms_norm eps complex": lambda L: fn(L, "rms_norm")(_x(L, 2, 4), (4,), None, 1j),
    "rms_norm int input": lambda L: fn(L, "rms_norm")(_x(L, 2, 4, dtype=L.int64), (4,)),
    "rms_norm bool input": lambda L: fn(L, "rms_norm")(_x(L, 2, 4) > 0, (4,)),
    "rms_norm int too long": lambda L: fn(L, "rms_norm")(_x(L, 2, 4, dtype=L.int64), (1, 2, 4)),
    "rms_norm list input": lambda L: fn(L, "rms_norm")([1.0, 2.0], (2,)),
    "RMSNorm negative": lambda L: fn(L, "RMSNorm")(-1),
    "RMSNorm negative entry": lambda L: fn(L, "RMSNorm")((2, -1)),
    "RMSNorm str": lambda L: fn(L, "RMSNorm")("a"),
    "RMSNorm float": lambda L: fn(L, "RMSNorm")(2.5),
    "RMSNorm None": lambda L: fn(L, "RMSNorm")(None),
    "RMSNorm bool": lambda L: fn(L, "RMSNorm")(True),
    "RMSNorm int dtype": lambda L: fn(L, "RMSNorm")(3, dtype=L.int64),
    "RMSNorm device": lambda L: fn(L, "RMSNorm")(3, device="tpu"),
    "RMSNorm empty forward": lambda L: fn(L, "RMSNorm")(())(_x(L, 2)),
    "RMSNorm forward mismatch": lambda L: fn(L, "RMSNorm")(3)(_x(L, 2, 4)),
    "RMSNorm forward eps": lambda L: fn(L, "RMSNorm")(4, eps="a")(_x(L, 2, 4)),
    # local_response_norm
    "lrn 2-D": lambda L: fn(L, "local_response_norm")(_x(L, 2, 5), 2),
    "lrn size 0": lambda L: fn(L, "local_response_norm")(_x(L, 2, 5, 3), 0),
    "lrn size negative": lambda L: fn(L, "local_response_norm")(_x(L, 2, 5, 3, 2), -2),
    "lrn size float": lambda L: fn(L, "local_response_norm")(_x(L, 2, 5, 3), 2.0),
    "lrn size str": lambda L: fn(L, "local_response_norm")(_x(L, 2, 5, 3), "a"),
    "lrn size None": lambda L: fn(L, "local_response_norm")(_x(L, 2, 5, 3), None),
    "lrn size bool": lambda L: fn(L, "local_response_norm")(_x(L, 2, 5, 3), True),
    "lrn alpha str": lambda L: fn(L, "local_response_norm")(_x(L, 2, 5, 3), 2, "a"),
    "lrn alpha None": lambda L: fn(L, "local_response_norm")(_x(L, 2, 5, 3), 2, None),
    "lrn beta str": lambda L: fn(L, "local_response_norm")(_x(L, 2, 5, 3), 2, beta="a"),
    "lrn k None": lambda L: fn(L, "local_response_norm")(_x(L, 2, 5, 3), 2, k=None),
    "lrn bool input": lambda L: fn(L, "local_response_norm")(_x(L, 2, 5, 3) > 0, 2),
    "lrn int32 input": lambda L: fn(L, "local_response_norm")(_x(L, 2, 5, 3, dtype=L.int32), 2),
    "lrn complex input": lambda L: fn(L, "local_response_norm")(_x(L, 2, 5, 3, dtype=L.complex64), 2),
    "LocalResponseNorm forward": lambda L: fn(L, "LocalResponseNorm")(0)(_x(L, 2, 5, 3)),
    "LocalResponseNorm 2-D": lambda L: fn(L, "LocalResponseNorm")(2)(_x(L, 2, 5)),
}
for _name in ("alpha_dropout", "feature_alpha_dropout", "dropout3d"):
    ERRORS.update({
        f"{_name} p str": lambda L, n=_name: fn(L, n)(_x(L, 2, 3, 4), "a", True),
        f"{_name} p None": lambda L, n=_name: fn(L, n)(_x(L, 2, 3, 4), None, True),
        f"{_name} p complex": lambda L, n=_name: fn(L, n)(_x(L, 2, 3, 4), 1j, True),
        f"{_name} p above": lambda L, n=_name: fn(L, n)(_x(L, 2, 3, 4), 1.5, True),
        f"{_name} p below": lambda L, n=_name: fn(L, n)(_x(L, 2, 3, 4), -0.1, False),
        f"{_name} p inf": lambda L, n=_name: fn(L, n)(_x(L, 2, 3, 4), float("inf"), True),
        f"{_name} p nan": lambda L, n=_name: fn(L, n)(_x(L, 2, 3, 4), float("nan"), True),
        f"{_name} p nan eval": lambda L, n=_name: fn(L, n)(_x(L, 2, 3, 4), float("nan"), False),
        f"{_name} training int": lambda L, n=_name: fn(L, n)(_x(L, 2, 3, 4), 0.5, 1),
        f"{_name} training None": lambda L, n=_name: fn(L, n)(_x(L, 2, 3, 4), 0.5, None),
        f"{_name} int input": lambda L, n=_name: fn(L, n)(_x(L, 2, 3, 4, dtype=L.int64), 0.5, True),
        f"{_name} bool input": lambda L, n=_name: fn(L, n)(_x(L, 2, 3, 4) > 0, 0.5, True),
        f"{_name} complex input": lambda L, n=_name: fn(L, n)(_x(L, 2, 3, 4, dtype=L.complex64), 0.5, True),
        f"{_name} in place leaf": lambda L, n=_name: fn(L, n)(_x(L, 2, 3, 4).requires_grad_(), 0.5, True, True),
    })
ERRORS.update({
    "alpha_dropout list input": lambda L: fn(L, "alpha_dropout")([1.0], 0.5, True),
    "feature_alpha_dropout 1-D": lambda L: fn(L, "feature_alpha_dropout")(_x(L, 3), 0.5, True),
    "feature_alpha_dropout 0-d": lambda L: fn(L, "feature_alpha_dropout")(L.tensor(1.0), 0.5, True),
    "feature_alpha_dropout 1-D complex": lambda L: fn(L, "feature_alpha_dropout")(_x(L, 3, dtype=L.complex64),
                                                                                  0.5, True),
    "dropout3d 0-d": lambda L: fn(L, "dropout3d")(L.tensor(1.0), 0.5, True),
})
for _name in ("AlphaDropout", "FeatureAlphaDropout", "Dropout3d"):
    ERRORS.update({
        f"{_name} p str": lambda L, n=_name: fn(L, n)("a"),
        f"{_name} p None": lambda L, n=_name: fn(L, n)(None),
        f"{_name} p above": lambda L, n=_name: fn(L, n)(1.5),
        f"{_name} p nan forward": lambda L, n=_name: fn(L, n)(float("nan"))(_x(L, 2, 3, 4, 5)),
        f"{_name} p nan forward eval": lambda L, n=_name: fn(L, n)(float("nan")).eval()(_x(L, 2, 3, 4, 5)),
        f"{_name} int input": lambda L, n=_name: fn(L, n)()(_x(L, 2, 3, 4, 5, dtype=L.int64)),
    })


@pytest.mark.parametrize("name", list(ERRORS))
def test_bad_inputs_raise_pytorchs_classes(name):
    assert_same_class_as_torch(name, ERRORS[name])


@pytest.mark.parametrize("name, shape", [("dropout1d", (2, 3, 5)), ("dropout2d", (2, 3, 4, 4))])
def test_channel_dropouts_check_and_write_in_place_as_pytorch(name, shape):
    """dropout1d/2d share dropout3d's checks and masks: NaN p refused at the call, ``inplace`` honoured."""
    from tests.error_classes import assert_same_class_as_torch  # noqa: PLC0415

    assert_same_class_as_torch(f"{name} p=nan", lambda L: getattr(L.nn.functional, name)(L.ones(*shape), float("nan")))
    getattr(mg.nn, name.capitalize())(float("nan"))  # built, as in PyTorch (nn.Dropout1d, nn.Dropout2d)
    x = mg.ones(*shape)
    out = getattr(mg.nn.functional, name)(x, 0.5, True, True)
    assert out is x
    values = set(np.unique(x.array).tolist())
    assert values <= {0.0, 2.0} and len(values) == 2
    per_channel = x.array.reshape(shape[0], shape[1], -1)
    assert (per_channel == per_channel[..., :1]).all(), "one draw per (sample, channel)"
