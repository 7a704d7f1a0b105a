"""Soft margin, margin ranking and cosine embedding losses against PyTorch (values, float64 gradients, errors)."""

from __future__ import annotations

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


def rng(seed=0):
    return np.random.default_rng(seed)


def signs(r, shape):
    return np.where(r.uniform(size=shape) < 0.5, -1.0, 1.0)


@settings(max_examples=20, deadline=None)
@given(shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4),
       reduction=st.sampled_from(REDUCTIONS), seed=st.integers(0, 99))
def test_soft_margin_matches_torch(shape, reduction, seed):
    r = rng(seed)
    run_both(lambda lib, F, x, y: F.soft_margin_loss(x, y.detach(), reduction=reduction),  # noqa: N803
             r.normal(0, 3, shape), signs(r, shape))
    same_error(lambda lib, F, x, y: F.soft_margin_loss(x, y.requires_grad_()), [1.0], [1.0], match="target")  # noqa: N803


def test_soft_margin_is_finite_for_huge_inputs():
    out = F.soft_margin_loss(mg.tensor([-1000.0, 1000.0]), mg.tensor([1.0, -1.0]), reduction="none")
    np.testing.assert_allclose(out.tolist(), [1000.0, 1000.0])


@settings(max_examples=20, deadline=None)
@given(shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=4),
       reduction=st.sampled_from(REDUCTIONS), margin=st.sampled_from([0.0, 0.5]), seed=st.integers(0, 99))
def test_margin_ranking_matches_torch(shape, reduction, margin, seed):
    r = rng(seed)
    x1, x2 = r.normal(size=shape), r.normal(size=shape)
    run_both(lambda lib, F, a, b, y: F.margin_ranking_loss(a, b, y, margin, reduction=reduction),  # noqa: N803
             x1, x2, signs(r, shape))


def test_margin_ranking_errors_and_integer_target_match_torch():
    a = np.ones((2, 3))
    same_error(lambda lib, F, a, b, y: F.margin_ranking_loss(a, b, y), a, a, np.ones(3), match="same dimension")  # noqa: N803
    same_error(lambda lib, F, a, b, y: F.margin_ranking_loss(a, b, y), a, a, np.ones((2, 4)))  # noqa: N803
    same_error(lambda lib, F, a, b, y: F.margin_ranking_loss(a, b, y, reduction="x"), a, a, a)  # noqa: N803
    run_both(lambda lib, F, a, b, y: F.margin_ranking_loss(a, b, y, 0.1),  # noqa: N803
             rng(1).normal(size=(2, 3)), rng(2).normal(size=(2, 3)), np.array([[1, -1, 1], [-1, 1, 1]]))


@settings(max_examples=20, deadline=None)
@given(batched=st.booleans(), n=st.integers(1, 4), d=st.integers(1, 4), reduction=st.sampled_from(REDUCTIONS),
       margin=st.sampled_from([0.0, -0.5, 0.5]), seed=st.integers(0, 99))
def test_cosine_embedding_matches_torch(batched, n, d, reduction, margin, seed):
    r = rng(seed)
    shape = (n, d) if batched else (d,)
    target = r.choice([-1.0, 1.0, 0.0], size=(n,) if batched else ())
    run_both(lambda lib, F, a, b: F.cosine_embedding_loss(a, b, lib.tensor(target), margin,  # noqa: N803
                                                          reduction=reduction),
             r.normal(size=shape), r.normal(size=shape))


def test_cosine_embedding_zero_vector_and_integer_target_match_torch():
    run_both(lambda lib, F, a, b: F.cosine_embedding_loss(a, b, lib.tensor([1, -1])),  # noqa: N803
             np.zeros((2, 3)), np.ones((2, 3)), rtol=1e-7)


def test_cosine_embedding_errors_match_torch():
    a = np.ones((3, 4))
    ce = "cosine_embedding_loss"
    same_error(lambda lib, F, a, b, y: getattr(F, ce)(a, b, y), a, a, np.ones((3, 1)), match="multi-target")  # noqa: N803
    same_error(lambda lib, F, a, b, y: getattr(F, ce)(a[0], b[0], y), a, a, np.ones(3), match="2D input")  # noqa: N803
    same_error(lambda lib, F, a, b, y: getattr(F, ce)(a, b, y[0]), a, a, np.ones(3), match="1D input")  # noqa: N803
    same_error(lambda lib, F, a, b, y: getattr(F, ce)(a, b, y), a, a, np.ones(2))  # noqa: N803
    same_error(lambda lib, F, a, b, y: getattr(F, ce)(a, b[:, :3], y), a, a, np.ones(3))  # noqa: N803


def test_margin_loss_modules_match_torch():
    r = rng(3)
    a, b, y = r.normal(size=(4, 3)), r.normal(size=(4, 3)), signs(r, (4,))
    cases = [
        (nn.SoftMarginLoss(reduction="sum"), torch.nn.SoftMarginLoss(reduction="sum"), (a, signs(r, (4, 3)))),
        (nn.MarginRankingLoss(0.2), torch.nn.MarginRankingLoss(0.2), (a[:, 0], b[:, 0], y)),
        (nn.CosineEmbeddingLoss(0.1, reduction="none"), torch.nn.CosineEmbeddingLoss(0.1, reduction="none"),
         (a, b, y)),
    ]
    for mine, theirs, args in cases:
        assert_close(mine(*map(mg.tensor, args)), theirs(*map(torch.tensor, args)))
        assert repr(mine) == repr(theirs)
    for cls in (nn.SoftMarginLoss, nn.MarginRankingLoss, nn.CosineEmbeddingLoss):
        with pytest.raises(ValueError, match="reduction"):
            cls(reduction="avg")
    same_error(lambda lib, F, x, y: F.soft_margin_loss(x.long(), y), [1.0], [1.0])  # noqa: N803
