"""``minigrad.nn.functional`` beyond the op cases: options, errors, randomness, stability, dtypes.

The op cases (tests/minigrad/ops/cases_nn.py) check every op's values and
gradients against PyTorch and finite differences on small random inputs.
This file checks what those cannot: reduction modes and ignore_index edge
cases, error messages for bad arguments, dropout's statistics and modes,
convolution geometry over a grid of options, numerical stability with huge
logits, the float32 path, and ``backend.erf``.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import backend

DEVICES = ("cpu", "cuda")


@pytest.fixture(params=DEVICES)
def device(request) -> str:
    """The device the test runs on; "cuda" skips when no GPU can be used."""
    if request.param == "cuda" and not backend.cuda_is_available():
        pytest.skip(backend.cuda_unavailable_reason())
    return request.param


def pair(values, device="cpu", dtype=np.float64, requires_grad=True):
    """The same values as a minigrad leaf on ``device`` and a torch leaf."""
    array = np.asarray(values, dtype=dtype)
    return (
        mg.tensor(array, device=device, requires_grad=requires_grad),
        torch.tensor(array, requires_grad=requires_grad),
    )


def ints(values, device="cpu"):
    """The same integer values as a minigrad and a torch tensor."""
    return mg.tensor(values, device=device), torch.tensor(values)


def to_np(t):
    if isinstance(t, torch.Tensor):
        return t.detach().numpy()
    return backend.to_numpy(t.array)


def assert_close(mine, theirs, rtol=1e-10, atol=1e-12):
    mine, theirs = to_np(mine), to_np(theirs)
    assert mine.shape == theirs.shape
    np.testing.assert_allclose(mine, theirs, rtol=rtol, atol=atol)


def random(*shape, seed=0, scale=1.0):
    return np.random.default_rng(seed).standard_normal(shape) * scale


# -- backend.erf ---------------------------------------------------------------------------------


def test_erf_matches_math_erf_to_double_precision():
    x = np.concatenate([np.linspace(-7, 7, 20001), np.logspace(-300, 1, 400), -np.logspace(-300, 1, 400)])
    expected = np.array([math.erf(v) for v in x])
    rel = np.abs(backend.erf(x) - expected) / np.maximum(np.abs(expected), 1e-300)
    assert rel.max() < 2e-15


def test_erf_special_values_and_dtype():
    out = backend.erf(np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 30.0, -30.0]))
    np.testing.assert_array_equal(out[:4], [0.0, -0.0, 1.0, -1.0])
    assert np.signbit(out[1]) and np.isnan(out[4])
    np.testing.assert_array_equal(out[5:], [1.0, -1.0])
    assert backend.erf(np.ones((2, 3), dtype=np.float32)).dtype == np.float32
    assert backend.erf(np.zeros((0, 2))).shape == (0, 2)


# -- linear ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("x_shape", [(5,), (4, 5), (2, 3, 5)])
def test_linear_matches_torch(device, x_shape):
    (x, tx), (w, tw), (b, tb) = pair(random(*x_shape), device), pair(random(3, 5, seed=1), device), pair(
        random(3, seed=2), device
    )
    out, tout = F.linear(x, w, b), TF.linear(tx, tw, tb)
    assert_close(out, tout)
    seed = random(*tout.shape, seed=3)
    out.backward(mg.tensor(seed, device=device))
    tout.backward(torch.tensor(seed))
    for mine, theirs in ((x, tx), (w, tw), (b, tb)):
        assert_close(mine.grad, theirs.grad)


def test_linear_errors_name_the_shapes():
    x, w = mg.randn(4, 5), mg.randn(3, 6)
    with pytest.raises(RuntimeError, match=r"\(4, 5\).*6.*\(3, 6\)"):
        F.linear(x, w)
    with pytest.raises(RuntimeError, match=r"bias must have shape \(3,\), got \(4,\)"):
        F.linear(mg.randn(2, 6), w, mg.randn(4))
    with pytest.raises(RuntimeError, match="float32.*float64"):
        F.linear(mg.randn(2, 6), mg.randn(3, 6, dtype=mg.float64))
    with pytest.raises(TypeError, match="'weight' must be a Tensor"):
        F.linear(x, np.ones((3, 5)))


# -- losses: reductions, ignore_index, weights ---------------------------------------------------------


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy_with_ignore_index_and_weights_matches_torch(device, reduction, weighted):
    (x, tx) = pair(random(5, 4, 2), device)
    target, ttarget = ints([[0, 3], [-100, 2], [1, 1], [3, -100], [2, 0]], device)
    weight, tweight = pair([0.5, 1.0, 2.0, 0.25], device, requires_grad=False) if weighted else (None, None)
    for smoothing in (0.0, 0.2):
        out = F.cross_entropy(x, target, weight, reduction=reduction, label_smoothing=smoothing)
        tout = TF.cross_entropy(tx, ttarget, tweight, reduction=reduction, label_smoothing=smoothing)
        assert_close(out, tout)
        out.sum().backward()
        tout.sum().backward()
        assert_close(x.grad, tx.grad)


def test_nll_loss_ignore_index_can_be_a_real_class():
    x, tx = pair(random(4, 3))
    target, ttarget = ints([1, 2, 1, 0])
    out = F.nll_loss(x, target, ignore_index=1)
    tout = TF.nll_loss(tx, ttarget, ignore_index=1)
    assert_close(out, tout)
    out.backward()
    tout.backward()
    assert_close(x.grad, tx.grad)
    assert not x.grad.array[[0, 2]].any(), "rows whose target is ignored get no gradient"


def test_nll_loss_mean_over_only_ignored_targets_is_nan_with_zero_gradient():
    x = mg.tensor(random(3, 4), requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no RuntimeWarning from 0 / 0 either
        loss = F.nll_loss(x, mg.tensor([-100, -100, -100]))
        loss.backward()
    assert math.isnan(loss.item())
    assert torch.isnan(TF.nll_loss(torch.tensor(random(3, 4)), torch.tensor([-100, -100, -100])))
    np.testing.assert_array_equal(x.grad.array, 0.0)


def test_nll_loss_ignored_entry_at_minus_infinity_contributes_zero():
    scores = np.array([[-np.inf, 0.0], [0.0, -1.0]])
    x, tx = pair(scores)
    target, ttarget = ints([-100, 1])
    for reduction in ("sum", "none"):
        assert_close(F.nll_loss(x, target, reduction=reduction), TF.nll_loss(tx, ttarget, reduction=reduction))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_probability_targets_match_torch(reduction):
    (x, tx), (t, tt) = pair(random(3, 4, 2)), pair(np.abs(random(3, 4, 2, seed=1)))
    weight, tweight = pair([1.0, 0.5, 2.0, 1.5], requires_grad=False)
    out = F.cross_entropy(x, t, weight, reduction=reduction, label_smoothing=0.1)
    tout = TF.cross_entropy(tx, tt, tweight, reduction=reduction, label_smoothing=0.1)
    assert_close(out, tout)
    out.sum().backward()
    tout.sum().backward()
    assert_close(x.grad, tx.grad)
    assert_close(t.grad, tt.grad)


def test_class_target_errors():
    x = mg.randn(3, 4)
    with pytest.raises(RuntimeError, match="integer tensor of class indices.*float32"):
        F.nll_loss(x, mg.tensor([1.0, 0.0, 2.0]))
    with pytest.raises(RuntimeError, match="neither class indices.*class probabilities"):
        F.cross_entropy(x, mg.tensor([1.0, 0.0, 2.0]))
    with pytest.raises(ValueError, match=r"target of shape \(2,\).*input of shape \(3, 4\).*\(3,\)"):
        F.cross_entropy(x, mg.tensor([1, 0]))
    with pytest.raises(IndexError, match="target 7 is out of bounds.*0, 3"):
        F.cross_entropy(x, mg.tensor([1, 7, 0]))
    with pytest.raises(IndexError, match="target -1 is out of bounds"):
        F.nll_loss(x, mg.tensor([1, -1, 0]))
    with pytest.raises(ValueError, match="reduction must be one of.*'avg'"):
        F.cross_entropy(x, mg.tensor([1, 0, 2]), reduction="avg")
    with pytest.raises(RuntimeError, match="label_smoothing must be in"):
        F.cross_entropy(x, mg.tensor([1, 0, 2]), label_smoothing=1.5)
    with pytest.raises(RuntimeError, match=r"weight must be of shape \(4,\)"):
        F.nll_loss(x, mg.tensor([1, 0, 2]), mg.ones(3))
    with pytest.raises(RuntimeError, match="ignore_index is not supported"):
        F.cross_entropy(x, mg.rand(3, 4), ignore_index=1)


def test_losses_take_options_by_keyword_only():
    # PyTorch's third positional parameter after weight is the deprecated size_average.
    with pytest.raises(TypeError):
        F.cross_entropy(mg.randn(3, 4), mg.tensor([1, 0, 2]), None, -100)
    with pytest.raises(TypeError):
        F.mse_loss(mg.randn(3), mg.randn(3), "sum")


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_mse_loss_broadcasts_with_a_warning_like_torch(reduction):
    (x, tx), (t, tt) = pair(random(3, 1)), pair(random(3, seed=1))
    with pytest.warns(UserWarning, match="different to the input size"):
        out = F.mse_loss(x, t, reduction=reduction)
    with pytest.warns(UserWarning):
        tout = TF.mse_loss(tx, tt, reduction=reduction)
    assert_close(out, tout)
    out.sum().backward()
    tout.sum().backward()
    assert_close(x.grad, tx.grad)
    assert_close(t.grad, tt.grad)


def test_mse_loss_errors():
    with pytest.raises(RuntimeError, match=r"\(3,\).*\(4,\).*cannot be broadcast"):
        F.mse_loss(mg.randn(3), mg.randn(4))
    with pytest.raises(ValueError, match="reduction"):
        F.mse_loss(mg.randn(3), mg.randn(3), reduction="max")
    with pytest.raises(TypeError, match="'target' must be a Tensor"):
        F.mse_loss(mg.randn(3), np.zeros(3))


# -- numerical stability ------------------------------------------------------------------------------------


def test_softmax_family_is_stable_with_huge_logits():
    logits = np.array([[1e4, 0.0, -1e4], [1e4, 1e4 - 1.0, 3e4], [-1e4, -1e4, -1e4]])
    (x, tx) = pair(logits)
    target, ttarget = ints([0, 1, 2])
    results = [
        (F.softmax(x, 1), TF.softmax(tx, 1)),
        (F.log_softmax(x, 1), TF.log_softmax(tx, 1)),
        (F.cross_entropy(x, target), TF.cross_entropy(tx, ttarget)),
    ]
    for mine, theirs in results:
        assert np.isfinite(to_np(mine)).all()
        assert_close(mine, theirs)
    sum(m.sum() for m, _ in results).backward()
    sum(t.sum() for _, t in results).backward()
    assert np.isfinite(x.grad.array).all()
    assert_close(x.grad, tx.grad)


def test_softmax_of_masked_logits_gives_exact_zeros():
    logits = np.array([[0.5, -np.inf, 1.0], [-np.inf, 2.0, -np.inf]])
    (x, tx) = pair(logits)
    out = F.softmax(x, -1)
    assert_close(out, TF.softmax(tx, -1))
    assert out.array[0, 1] == 0.0 and out.array[1, 1] == 1.0


@pytest.mark.parametrize("shape, dim", [((2, 0), 1), ((0, 3), 1), ((2, 0, 3), 1)])
@pytest.mark.parametrize("name", ["softmax", "log_softmax", "softmin"])
def test_softmax_family_over_an_empty_tensor_is_empty_as_pytorch(name, shape, dim):
    x, tx = mg.zeros(*shape, requires_grad=True), torch.zeros(*shape, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no divide-by-zero warning from the log of an empty sum
        out = getattr(F, name)(x, dim)
    theirs = getattr(TF, name)(tx, dim)
    assert out.shape == tuple(theirs.shape)
    out.sum().backward()
    theirs.sum().backward()
    assert x.grad.shape == tuple(tx.grad.shape)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cross_entropy_with_huge_logits_has_finite_gradients(dtype):
    x = mg.tensor(random(4, 5, scale=1e4).astype(dtype), requires_grad=True)
    loss = F.cross_entropy(x, mg.tensor([0, 1, 2, 3]), label_smoothing=0.1)
    loss.backward()
    assert np.isfinite(loss.item()) and np.isfinite(x.grad.array).all()


# -- softmax arguments --------------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(4,), (2, 3), (2, 3, 4), (2, 3, 4, 2)])
def test_softmax_without_dim_warns_and_picks_torchs_legacy_dim(shape):
    x, tx = pair(random(*shape), requires_grad=False)
    with pytest.warns(UserWarning, match="Implicit dimension choice"):
        out = F.softmax(x)
    with pytest.warns(UserWarning):
        tout = TF.softmax(tx)
    assert_close(out, tout)


def test_softmax_dtype_argument_and_zero_dim_input():
    x = mg.randn(2, 3)
    assert F.log_softmax(x, 1, dtype=mg.float64).dtype == np.float64
    scalar, tscalar = pair(1.5)
    assert_close(F.softmax(scalar, 0), TF.softmax(tscalar, 0))
    assert_close(F.log_softmax(scalar, -1), TF.log_softmax(tscalar, -1))
    with pytest.raises(IndexError, match=r"dim 2 is out of range.*\(2, 3\)"):
        F.softmax(x, 2)
    with pytest.raises(NotImplementedError, match="floating point"):
        F.softmax(mg.tensor([1, 2]), 0)


# -- gelu ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_third_derivative_matches_torch(approximate):
    x, tx = pair(np.linspace(-6, 6, 25))
    grads = []
    for lib, fn, leaf in ((mg, F.gelu, x), (torch, TF.gelu, tx)):
        y = fn(leaf, approximate=approximate)
        (g1,) = lib.autograd.grad(y.sum(), leaf, create_graph=True)
        (g2,) = lib.autograd.grad(g1.sum(), leaf, create_graph=True)
        (g3,) = lib.autograd.grad(g2.sum(), leaf)
        grads.append((y, g1, g2, g3))
    for mine, theirs in zip(*grads):
        assert_close(mine, theirs, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(), (1,), (2, 3)])
def test_gelu_forward_and_backward_match_torch_for_every_rank(approximate, dtype, shape):
    values = random(*shape, seed=4, scale=2.0).astype(dtype)
    x, tx = mg.tensor(values, requires_grad=True), torch.tensor(values, requires_grad=True)
    out, tout = F.gelu(x, approximate=approximate), TF.gelu(tx, approximate=approximate)
    out.sum().backward()
    tout.sum().backward()
    rtol = 1e-6 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), rtol=rtol, atol=rtol)
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=rtol, atol=rtol)
    assert out.dtype == x.dtype and x.grad.shape == shape


@pytest.mark.parametrize(
    "call",
    [
        lambda lib, x, w: lib.nn.functional.conv2d(x, w, stride=0),
        lambda lib, x, w: lib.nn.functional.conv2d(x, w, stride=(1, -1)),
        lambda lib, x, w: lib.nn.functional.conv2d(x, w, dilation=0),
        lambda lib, x, w: lib.nn.functional.conv2d(x, w, padding=-1),
        lambda lib, x, w: lib.nn.functional.conv2d(x, w, groups=0),
        lambda lib, x, w: lib.nn.functional.conv2d(x, w, groups=1.5),
        lambda lib, x, w: lib.nn.functional.unfold(x, 2, stride=0),
        lambda lib, x, w: lib.nn.functional.unfold(x, 0),
        lambda lib, x, w: lib.nn.functional.unfold(x, 2, padding=-1),
        lambda lib, x, w: lib.nn.functional.fold(lib.ones(1, 4, 9), (4, 4), 2, stride=0),
        lambda lib, x, w: lib.nn.functional.fold(lib.ones(1, 4, 9), (0, 4), 2),
        lambda lib, x, w: lib.nn.functional.fold(lib.ones(1, 4, 8), (4, 4), 2),
        lambda lib, x, w: lib.nn.functional.fold(lib.ones(1, 5, 9), (4, 4), 2),
        lambda lib, x, w: lib.nn.functional.fold(x, (4, 4), 2),
        lambda lib, x, w: lib.nn.functional.unfold(x, 5),
    ],
)
def test_window_argument_errors_have_pytorchs_types(call):
    _same_error_type_as_torch(call)


@pytest.mark.parametrize(
    "call",
    [
        lambda lib, x, w: lib.nn.functional.conv2d(x, lib.ones(4, 2, 3, 3)),
        lambda lib, x, w: lib.nn.functional.conv2d(lib.ones(8, 8), w),
        lambda lib, x, w: lib.nn.functional.conv2d(x, lib.ones(1, 1, 3)),
        lambda lib, x, w: lib.nn.functional.conv2d(x, w, dilation=4),
        lambda lib, x, w: lib.nn.functional.conv2d(x, w, stride=2, padding="same"),
        lambda lib, x, w: lib.nn.functional.conv2d(x, w, padding="full"),
        lambda lib, x, w: lib.nn.functional.conv2d(x, w, lib.ones(3)),
        lambda lib, x, w: lib.nn.functional.conv2d(lib.ones(1, 2, 4, 4), lib.ones(3, 1, 2, 2), groups=2),
    ],
)
def test_conv2d_errors_have_pytorchs_types(call):
    _same_error_type_as_torch(call)


def _same_error_type_as_torch(call):
    with pytest.raises(Exception) as theirs:
        call(torch, torch.ones(1, 1, 4, 4), torch.ones(1, 1, 2, 2))
    with pytest.raises(theirs.type):
        call(mg, mg.ones(1, 1, 4, 4), mg.ones(1, 1, 2, 2))


def test_gelu_rejects_unknown_approximation():
    with pytest.raises(RuntimeError, match="approximate must be 'none' or 'tanh', got 'erf'"):
        F.gelu(mg.randn(3), approximate="erf")


# -- dropout ----------------------------------------------------------------------------------------------------


def test_dropout_statistics_and_scaling(device):
    mg.manual_seed(0)
    x = mg.ones(200_000, dtype=mg.float64, device=device)
    for p in (0.1, 0.5, 0.8):
        out = backend.to_numpy(F.dropout(x, p).array)
        kept = out != 0
        # 200k Bernoulli draws: the kept fraction is within 5 standard deviations of 1 - p.
        assert abs(kept.mean() - (1 - p)) < 5 * math.sqrt(p * (1 - p) / x.numel())
        np.testing.assert_allclose(out[kept], 1 / (1 - p), rtol=1e-15)


def test_dropout_backward_uses_the_forward_mask(device):
    x = mg.tensor(random(50, 40) + 5, requires_grad=True, device=device)
    out = F.dropout(x, 0.3)
    out.backward(mg.ones_like(out))
    expected = (backend.to_numpy(out.array) != 0) / 0.7
    np.testing.assert_allclose(backend.to_numpy(x.grad.array), expected, rtol=1e-15)


def test_dropout_is_reproducible_under_manual_seed(device):
    x = mg.randn(30, 30, device=device)
    mg.manual_seed(123)
    first = backend.to_numpy(F.dropout(x, 0.5).array)
    mg.manual_seed(123)
    np.testing.assert_array_equal(backend.to_numpy(F.dropout(x, 0.5).array), first)
    assert not np.array_equal(backend.to_numpy(F.dropout(x, 0.5).array), first)


def test_dropout_modes_and_bounds():
    x = mg.randn(4, 5, requires_grad=True)
    assert F.dropout(x, 0.5, training=False) is x
    assert F.dropout(x, 0.0) is x
    zeros = F.dropout(x, 1.0)
    np.testing.assert_array_equal(zeros.array, 0.0)
    zeros.sum().backward()
    np.testing.assert_array_equal(x.grad.array, 0.0)
    for p in (-0.1, 1.5):
        with pytest.raises(ValueError, match=f"between 0 and 1, but got {p}"):
            F.dropout(x, p)


# -- layer_norm and embedding -------------------------------------------------------------------------------


def test_layer_norm_over_two_dims_matches_torch(device):
    (x, tx), (w, tw), (b, tb) = (pair(random(2, 3, 4, 5), device), pair(random(4, 5, seed=1), device),
                                 pair(random(4, 5, seed=2), device))
    out, tout = F.layer_norm(x, (4, 5), w, b, eps=1e-6), TF.layer_norm(tx, (4, 5), tw, tb, eps=1e-6)
    assert_close(out, tout)
    seed = random(2, 3, 4, 5, seed=3)
    out.backward(mg.tensor(seed, device=device))
    tout.backward(torch.tensor(seed))
    for mine, theirs in ((x, tx), (w, tw), (b, tb)):
        assert_close(mine.grad, theirs.grad, rtol=1e-9)


def test_layer_norm_errors():
    x = mg.randn(2, 3)
    with pytest.raises(RuntimeError, match=r"normalized_shape \(4,\).*\(2, 3\)"):
        F.layer_norm(x, 4)
    with pytest.raises(RuntimeError, match=r"weight must have shape \(3,\).*\(4,\)"):
        F.layer_norm(x, 3, weight=mg.ones(4))


def test_embedding_padding_row_gets_no_gradient_like_torch(device):
    w, tw = pair(random(5, 3), device)
    idx, tidx = ints([[0, 2, 4], [2, 2, -0]], device)
    out, tout = F.embedding(idx, w, padding_idx=-3), TF.embedding(tidx, tw, padding_idx=-3)
    assert_close(out, tout)
    seed = random(2, 3, 3, seed=1)
    out.backward(mg.tensor(seed, device=device))
    tout.backward(torch.tensor(seed))
    assert_close(w.grad, tw.grad)
    assert not backend.to_numpy(w.grad.array)[2].any()


def test_embedding_errors():
    w = mg.randn(5, 3)
    with pytest.raises(RuntimeError, match=r"integer tensor of indices \(int64 or int32\), got float32"):
        F.embedding(mg.tensor([1.0, 2.0]), w)
    with pytest.raises(IndexError, match=r"index 5 is out of range for 5 embeddings"):
        F.embedding(mg.tensor([1, 5]), w)
    with pytest.raises(IndexError, match="index -1 is out of range"):
        F.embedding(mg.tensor([-1, 2]), w)
    with pytest.raises(AssertionError, match="padding_idx 5 must be within num_embeddings 5"):
        F.embedding(mg.tensor([1]), w, padding_idx=5)
    with pytest.raises(RuntimeError, match="weight must be 2-D"):
        F.embedding(mg.tensor([1]), mg.randn(5))


# -- conv2d ------------------------------------------------------------------------------------------------------

CONV_OPTIONS = [
    {},
    {"stride": 2},
    {"stride": (2, 1), "padding": (1, 2)},
    {"padding": 2, "dilation": 2},
    {"stride": 3, "padding": 1, "dilation": (1, 2)},
    {"padding": "same", "dilation": (2, 1)},
    {"padding": "valid"},
]


@pytest.mark.filterwarnings("ignore:Using padding='same'")  # PyTorch's note on its own speed
@pytest.mark.parametrize("options", CONV_OPTIONS, ids=str)
@pytest.mark.parametrize("groups", [1, 2])
def test_conv2d_matches_torch_over_geometries(device, options, groups):
    (x, tx) = pair(random(2, 4, 7, 6), device)
    (w, tw), (b, tb) = pair(random(6, 4 // groups, 3, 2, seed=1), device), pair(random(6, seed=2), device)
    out = F.conv2d(x, w, b, groups=groups, **options)
    tout = TF.conv2d(tx, tw, tb, groups=groups, **options)
    assert out.shape == tuple(tout.shape)
    assert_close(out, tout)
    seed = random(*tout.shape, seed=3)
    out.backward(mg.tensor(seed, device=device))
    tout.backward(torch.tensor(seed))
    for mine, theirs in ((x, tx), (w, tw), (b, tb)):
        assert_close(mine.grad, theirs.grad)


def test_conv2d_same_padding_with_even_kernel_pads_the_end_like_torch():
    (x, tx), (w, tw) = pair(random(1, 2, 5, 6)), pair(random(3, 2, 4, 2, seed=1))
    out, tout = F.conv2d(x, w, padding="same"), TF.conv2d(tx, tw, padding="same")
    assert out.shape == (1, 3, 5, 6)
    assert_close(out, tout)


def test_conv2d_depthwise_and_unbatched():
    (x, tx), (w, tw) = pair(random(3, 5, 5)), pair(random(6, 1, 3, 3, seed=1))
    assert_close(F.conv2d(x, w, groups=3, padding=1), TF.conv2d(tx, tw, groups=3, padding=1))


def test_conv2d_errors_name_what_does_not_fit():
    # RuntimeError throughout, as PyTorch's conv2d (test_conv2d_errors_have_pytorchs_types checks the types).
    x = mg.randn(2, 3, 8, 8)
    with pytest.raises(RuntimeError, match=r"input has 3 channels.*\(2, 3, 8, 8\).*\(4, 4, 3, 3\).*expects 4"):
        F.conv2d(x, mg.randn(4, 4, 3, 3))
    with pytest.raises(RuntimeError, match=r"groups=2 expects 4"):
        F.conv2d(x, mg.randn(4, 2, 3, 3), groups=2)
    with pytest.raises(RuntimeError, match="3-D .* or 4-D .* input, got \\(8, 8\\)"):
        F.conv2d(mg.randn(8, 8), mg.randn(4, 3, 3, 3))
    with pytest.raises(RuntimeError, match="weight must be 4-D"):
        F.conv2d(x, mg.randn(4, 3, 3))
    with pytest.raises(RuntimeError, match="padded input is 8x8 but the dilated kernel is 9x9"):
        F.conv2d(x, mg.randn(4, 3, 3, 3), dilation=4)
    with pytest.raises(RuntimeError, match="strided"):
        F.conv2d(x, mg.randn(4, 3, 3, 3), stride=2, padding="same")
    with pytest.raises(RuntimeError, match=r"bias must have shape \(4,\)"):
        F.conv2d(x, mg.randn(4, 3, 3, 3), mg.randn(3))
    with pytest.raises(RuntimeError, match="stride must be at least 1"):  # PyTorch's type
        F.conv2d(x, mg.randn(4, 3, 3, 3), stride=0)
    with pytest.raises(TypeError, match="padding must be an int or a pair"):
        F.conv2d(x, mg.randn(4, 3, 3, 3), padding=1.5)


def test_fold_is_the_adjoint_of_unfold():
    x = mg.tensor(random(2, 3, 6, 5))
    options = {"kernel_size": (3, 2), "stride": (2, 1), "padding": 1, "dilation": (1, 2)}
    cols = F.unfold(x, **options)
    y = mg.tensor(random(*cols.shape, seed=1))
    folded = F.fold(y, (6, 5), **options)
    np.testing.assert_allclose((cols.array * y.array).sum(), (x.array * folded.array).sum(), rtol=1e-12)
    with pytest.raises(RuntimeError, match=r"has 7 blocks.*gives"):
        F.fold(mg.randn(1, 12, 7), (6, 5), kernel_size=2)


def test_double_backward_of_conv2d_matches_torch():
    (x, tx), (w, tw) = pair(random(1, 2, 5, 5)), pair(random(3, 2, 3, 3, seed=1))
    results = []
    for lib, fn, a, k in ((mg, F.conv2d, x, w), (torch, TF.conv2d, tx, tw)):
        loss = (fn(a, k, stride=2, padding=1) ** 2).sum()
        gx, gw = lib.autograd.grad(loss, (a, k), create_graph=True)
        ((gx**2).sum() + (gw * gw).sum()).backward()
        results.append((gx, gw, a.grad, k.grad))
    for mine, theirs in zip(*results):
        assert_close(mine, theirs, rtol=1e-9)


# -- float32 path --------------------------------------------------------------------------------------------


def _float32_programs():
    x4 = mg.randn(2, 4, 5, 5, requires_grad=True)
    x2 = mg.randn(3, 4, requires_grad=True)
    w = mg.randn(4, 4, requires_grad=True)
    return [
        F.linear(x2, w, mg.randn(4)),
        F.conv2d(x4, mg.randn(2, 2, 3, 3), mg.randn(2), padding=1, groups=2),
        F.unfold(x4, 2),
        F.relu(x2), F.gelu(x2), F.gelu(x2, approximate="tanh"), F.tanh(x2), F.sigmoid(x2),
        F.softmax(x2, 1), F.log_softmax(x2, 0),
        F.cross_entropy(x2, mg.tensor([0, 3, 1]), label_smoothing=0.1),
        F.cross_entropy(x2, F.softmax(mg.randn(3, 4), 1)),
        F.nll_loss(x2, mg.tensor([0, 3, 1]), mg.rand(4)),
        F.mse_loss(x2, mg.randn(3, 4)),
        F.dropout(x2, 0.5),
        F.layer_norm(x2, 4, mg.ones(4), mg.zeros(4)),
        F.embedding(mg.tensor([1, 0]), w),
    ], (x4, x2, w)


def test_float32_inputs_give_float32_outputs_and_gradients():
    outputs, leaves = _float32_programs()
    for i, out in enumerate(outputs):
        assert out.dtype == np.float32, f"output {i} is {out.dtype}"
    sum(out.sum() for out in outputs).backward()
    for leaf in leaves:
        assert leaf.grad.dtype == np.float32
