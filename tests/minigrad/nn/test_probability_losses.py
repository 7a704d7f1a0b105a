"""Binary cross-entropy (probabilities and logits) and KL divergence against PyTorch.

Values and gradients in float64 over reductions, weights and shapes;
saturated inputs (probabilities of exactly 0 and 1, logits of +-1000);
dtype rules; error types; the modules' buffers and reprs.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import nn
from tests.minigrad.nn.torch_compare import assert_close, run_both, same_error

REDUCTIONS = ["mean", "sum", "none"]
shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)


def rng(seed=0):
    return np.random.default_rng(seed)


# -- binary_cross_entropy ---------------------------------------------------------------------------


@settings(max_examples=20, deadline=None)
@given(shape=shapes, reduction=st.sampled_from(REDUCTIONS), weighted=st.booleans(), seed=st.integers(0, 99))
def test_bce_matches_torch(shape, reduction, weighted, seed):
    r = rng(seed)
    x, y = r.uniform(0.01, 0.99, shape), r.uniform(0, 1, shape)
    w = r.uniform(0.5, 2, shape[-1:]) if weighted else None

    def program(lib, F, x, y):  # noqa: N803
        weight = None if w is None else lib.tensor(w)
        return F.binary_cross_entropy(x, y, weight, reduction=reduction)

    run_both(program, x, y)


def test_bce_clamps_log_at_minus_100_and_uses_torch_gradient_at_0_and_1():
    x = [0.0, 1e-50, 0.3, 1.0, 1.0, 0.0]
    y = [1.0, 0.0, 0.5, 0.0, 1.0, 0.0]
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # the target's infinite gradient comes without a warning
        out, _ = run_both(lambda lib, F, x, y: F.binary_cross_entropy(x, y, reduction="none"), x, y,  # noqa: N803
                          rtol=1e-8)  # gradients of 1e11 (x (1 - x) floored at 1e-12), rounded in another order
    assert out.tolist()[0] == 100.0 and out.tolist()[3] == 100.0


def test_bce_float32_and_weight_of_other_dtype_matches_torch():
    r = rng(1)
    x, y, w = r.uniform(0.1, 0.9, (3, 4)), r.uniform(0, 1, (3, 4)), r.uniform(0.5, 2, (3, 1))
    out = F.binary_cross_entropy(mg.tensor(x, dtype=mg.float32), mg.tensor(y, dtype=mg.float32), mg.tensor(w))
    tout = torch.nn.functional.binary_cross_entropy(torch.tensor(x, dtype=torch.float32),
                                                    torch.tensor(y, dtype=torch.float32), torch.tensor(w))
    assert_close(out, tout, rtol=1e-6, atol=1e-6)


def test_bce_empty_mean_is_nan():
    assert np.isnan(F.binary_cross_entropy(mg.zeros(0), mg.zeros(0)).item())


@pytest.mark.parametrize(
    ("x", "y", "kwargs", "match"),
    [
        ([1.5, 0.5], [1.0, 0.0], {}, "input should be between 0 and 1"),
        ([float("nan"), 0.5], [1.0, 0.0], {}, "input should be between 0 and 1"),
        ([0.5, 0.5], [1.0, -0.5], {}, "target should be between 0 and 1"),
        ([0.5, 0.5], [1.0], {}, "target size"),
        ([0.5, 0.5], [1.0, 0.0], {"reduction": "avg"}, "reduction"),
    ],
)
def test_bce_errors_match_torch(x, y, kwargs, match):
    same_error(lambda lib, F, x, y: F.binary_cross_entropy(x, y, **kwargs), x, y, match=match)  # noqa: N803


def test_bce_dtype_and_weight_errors_match_torch():
    x, y = np.array([0.5, 0.2]), np.array([1.0, 0.0])
    same_error(lambda lib, F, x, y: F.binary_cross_entropy(x.float(), y), x, y)  # noqa: N803  dtype mismatch
    same_error(lambda lib, F, x, y: F.binary_cross_entropy(x.long(), y.long()), x, y)  # noqa: N803  integer input
    same_error(lambda lib, F, x, y: F.binary_cross_entropy(x, y, lib.ones(3, dtype=x.dtype)), x, y)  # noqa: N803
    same_error(  # a weight that would need the input broadcast
        lambda lib, F, x, y: F.binary_cross_entropy(x[:1], y[:1], lib.ones(2, dtype=x.dtype)), x, y)  # noqa: N803
    same_error(  # weight is not differentiable
        lambda lib, F, x, y: F.binary_cross_entropy(x, y, lib.ones(2, dtype=x.dtype, requires_grad=True)),  # noqa: N803
        x, y, match="weight")
    with pytest.raises(TypeError, match="'target' must be a Tensor"):
        F.binary_cross_entropy(mg.tensor(x), y)


# -- binary_cross_entropy_with_logits -------------------------------------------------------------------


@settings(max_examples=20, deadline=None)
@given(shape=shapes, reduction=st.sampled_from(REDUCTIONS), weighted=st.booleans(), positive=st.booleans(),
       seed=st.integers(0, 99))
def test_bce_with_logits_matches_torch(shape, reduction, weighted, positive, seed):
    r = rng(seed)
    x, y = r.normal(0, 3, shape), r.uniform(0, 1, shape)
    w = r.uniform(0.5, 2, shape) if weighted else None
    pw = r.uniform(0.5, 3, shape[-1:]) if positive else None

    def program(lib, F, x, y):  # noqa: N803
        weight = None if w is None else lib.tensor(w)
        pos_weight = None if pw is None else lib.tensor(pw)
        return F.binary_cross_entropy_with_logits(x, y, weight, reduction=reduction, pos_weight=pos_weight)

    run_both(program, x, y)


def test_bce_with_logits_is_stable_for_huge_logits():
    x, y = [-1000.0, -800.0, 0.0, 800.0, 1000.0], [0.2, 1.0, 0.5, 0.0, 1.0]
    out, _ = run_both(lambda lib, F, x, y: F.binary_cross_entropy_with_logits(  # noqa: N803
        x, y, reduction="none", pos_weight=lib.tensor([2.0, 1.0, 3.0, 1.0, 0.5], dtype=x.dtype)), x, y)
    assert np.isfinite(out.tolist()).all()
    # float32: log-sigmoid stays finite where log(sigmoid(x)) would be -inf
    big = F.binary_cross_entropy_with_logits(mg.tensor([-200.0]), mg.tensor([1.0]))
    assert big.item() == pytest.approx(200.0)


def test_bce_with_logits_result_has_the_targets_dtype_like_torch():
    x, y = rng(2).normal(size=(2, 3)), rng(3).uniform(size=(2, 3))
    for xd, yd in ((torch.float32, torch.float64), (torch.float64, torch.float32)):
        tout = torch.nn.functional.binary_cross_entropy_with_logits(torch.tensor(x, dtype=xd),
                                                                    torch.tensor(y, dtype=yd))
        mine = F.binary_cross_entropy_with_logits(mg.tensor(x, dtype=str(xd).split(".")[1]),
                                                  mg.tensor(y, dtype=str(yd).split(".")[1]))
        assert_close(mine, tout, rtol=1e-6, atol=1e-6)


def test_bce_with_logits_errors_match_torch():
    x, y = np.array([[0.5, 0.2]]), np.array([[3.0, -2.0]])
    bce = "binary_cross_entropy_with_logits"
    same_error(lambda lib, F, x, y: getattr(F, bce)(x, y[:, :1]), x, y)  # noqa: N803  shape
    same_error(lambda lib, F, x, y: getattr(F, bce)(x, y.long()), x, y)  # noqa: N803  integer target
    same_error(lambda lib, F, x, y: getattr(F, bce)(x.long(), y), x, y)  # noqa: N803  integer logits
    same_error(lambda lib, F, x, y: getattr(F, bce)(x, y, reduction="x"), x, y)  # noqa: N803
    same_error(lambda lib, F, x, y: getattr(F, bce)(x, y, pos_weight=lib.ones(3, dtype=x.dtype)), x, y)  # noqa: N803
    same_error(lambda lib, F, x, y: getattr(F, bce)(x, y, lib.ones(3, dtype=x.dtype)), x, y)  # noqa: N803
    for name in ("weight", "pos_weight"):
        same_error(lambda lib, F, x, y, name=name: getattr(F, bce)(  # noqa: N803
            x, y, **{name: lib.ones(2, dtype=x.dtype, requires_grad=True)}), x, y, match=name)


# -- kl_div ------------------------------------------------------------------------------------------


@settings(max_examples=20, deadline=None)
@given(shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=4),
       reduction=st.sampled_from(REDUCTIONS + ["batchmean"]), log_target=st.booleans(), seed=st.integers(0, 99))
def test_kl_div_matches_torch(shape, reduction, log_target, seed):
    r = rng(seed)
    x, p = np.log(r.uniform(0.05, 1, shape)), r.uniform(0.05, 1, shape)
    y = np.log(p) if log_target else p
    run_both(lambda lib, F, x, y: F.kl_div(x, y, reduction=reduction, log_target=log_target), x, y)  # noqa: N803


def test_kl_div_zero_target_contributes_zero_and_broadcasts():
    x, y = np.log([[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]]), np.array([0.0, 0.5, 0.5])
    mine, theirs = run_both(lambda lib, F, x, y: F.kl_div(x, y.detach(), reduction="none"), x, y)  # noqa: N803
    assert mine.tolist()[0][0] == 0.0


def test_kl_div_mean_warns_and_errors_match_torch():
    x = mg.tensor([[-1.0, -2.0]])
    with pytest.warns(UserWarning, match="batchmean"):
        F.kl_div(x, x.exp())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.kl_div(x, x.exp(), reduction="batchmean")
    same_error(lambda lib, F, x, y: F.kl_div(x, y, reduction="foo"), [1.0], [1.0])  # noqa: N803
    same_error(lambda lib, F, x, y: F.kl_div(x, y.long(), reduction="sum"), [1.0], [1.0])  # noqa: N803
    same_error(lambda lib, F, x, y: F.kl_div(x, y, reduction="sum"), [1.0, 2.0], [1.0, 2.0, 3.0])  # noqa: N803


# -- modules -------------------------------------------------------------------------------------------


def test_loss_modules_match_torch_and_keep_weights_as_buffers():
    r = rng(4)
    x, y = r.normal(size=(3, 2)), r.uniform(size=(3, 2))
    w, pw = r.uniform(0.5, 2, (2,)), r.uniform(0.5, 2, (2,))
    pairs = [
        (nn.BCELoss(mg.tensor(w), reduction="sum"), torch.nn.BCELoss(torch.tensor(w), reduction="sum"), True),
        (nn.BCEWithLogitsLoss(pos_weight=mg.tensor(pw)), torch.nn.BCEWithLogitsLoss(pos_weight=torch.tensor(pw)),
         False),
        (nn.KLDivLoss(reduction="batchmean", log_target=True),
         torch.nn.KLDivLoss(reduction="batchmean", log_target=True), False),
    ]
    for mine, theirs, probabilities in pairs:
        xi = 1 / (1 + np.exp(-x)) if probabilities else x
        assert_close(mine(mg.tensor(xi), mg.tensor(y)), theirs(torch.tensor(xi), torch.tensor(y)))
        assert repr(mine) == repr(theirs)
        assert sorted(dict(mine.named_buffers())) == sorted(dict(theirs.named_buffers()))
    with pytest.raises(ValueError, match="reduction"):
        nn.KLDivLoss(reduction="avg")
    with pytest.raises(ValueError, match="reduction"):
        nn.BCELoss(reduction="avg")
