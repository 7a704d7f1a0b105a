"""one_hot, normalize, cosine_similarity and pairwise_distance (and their modules) against PyTorch:
values, float64 gradients (zero vectors and tied maxima included), dtypes, errors."""

from __future__ import annotations

import math

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

P_VALUES = [2.0, 1.0, 3.0, 0.5, math.inf, -math.inf, 0.0, -1.0]


def rng(seed=0):
    return np.random.default_rng(seed)


# -- one_hot -------------------------------------------------------------------------------------------


@settings(max_examples=20, deadline=None)
@given(indices=hnp.arrays(np.int64, hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=4),
                          elements=st.integers(0, 5)),
       extra=st.sampled_from([None, 0, 2]))
def test_one_hot_matches_torch(indices, extra):
    classes = -1 if extra is None else int(indices.max()) + 1 + extra
    out = F.one_hot(mg.tensor(indices), classes)
    expected = torch.nn.functional.one_hot(torch.tensor(indices), classes)
    assert_close(out, expected)
    assert not out.requires_grad


def test_one_hot_errors_match_torch():
    cases = [
        (np.array([0, -1]), -1, "non-negative"), (np.array([0, 5]), 3, "smaller than num_classes"),
        (np.array([1]), 0, "smaller than num_classes"), (np.zeros(0, np.int64), -1, "empty tensor"),
        (np.array([0.0, 1.0]), -1, "LongTensor"), (np.array([0, 1], np.int32), -1, "LongTensor"),
    ]
    for indices, classes, match in cases:
        same_error(lambda lib, F, t: F.one_hot(t, classes), indices, match=match)  # noqa: N803, B023
    assert F.one_hot(mg.zeros(0, dtype=mg.int64), 3).shape == (0, 3)


# -- normalize ------------------------------------------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4), p=st.sampled_from(P_VALUES[:5]),
       data=st.data(), seed=st.integers(0, 99))
def test_normalize_matches_torch(shape, p, data, seed):
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    x = rng(seed).normal(size=shape)
    run_both(lambda lib, F, x: F.normalize(x, p, dim), x, rtol=1e-9)  # noqa: N803


def test_normalize_zero_vectors_ties_and_zero_norm_match_torch():
    x = np.array([[3.0, 4.0, 0.0], [0.0, 0.0, 0.0], [1.0, -2.0, 2.0]])
    for p in (2.0, 1.0, math.inf, 0.0):
        run_both(lambda lib, F, x: F.normalize(x, p), x)  # noqa: N803, B023
    with pytest.raises(IndexError, match="out of range"):
        F.normalize(mg.ones(3))  # dim=1 of a 1-D tensor, as in PyTorch
    same_error(lambda lib, F, x: F.normalize(x.long(), dim=0), [3.0, 4.0])  # noqa: N803


def test_normalize_out_argument():
    x, out = mg.tensor([[3.0, 4.0]]), mg.zeros(1, 2)
    assert F.normalize(x, out=out) is out
    np.testing.assert_allclose(out.tolist(), [[0.6, 0.8]], rtol=1e-6)
    with pytest.raises(RuntimeError, match="automatic differentiation"):
        F.normalize(mg.tensor([[3.0, 4.0]], requires_grad=True), out=mg.zeros(1, 2))


# -- cosine_similarity --------------------------------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4), data=st.data(),
       seed=st.integers(0, 99))
def test_cosine_similarity_matches_torch(shape, data, seed):
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    squeeze = data.draw(st.sampled_from([None] + list(range(len(shape)))))
    shape2 = list(shape)
    if squeeze is not None:
        shape2[squeeze] = 1  # broadcast along one dimension
    r = rng(seed)
    run_both(lambda lib, F, a, b: F.cosine_similarity(a, b, dim), r.normal(size=shape), r.normal(size=shape2))  # noqa: N803


def test_cosine_similarity_zero_vectors_dtypes_and_errors_match_torch():
    run_both(lambda lib, F, a, b: F.cosine_similarity(a, b), np.zeros((2, 3)), np.ones((2, 3)), rtol=1e-7)  # noqa: N803
    assert_close(F.cosine_similarity(mg.ones(4, dtype=mg.int64), mg.ones(4), dim=0),
                 torch.nn.functional.cosine_similarity(torch.ones(4, dtype=torch.long), torch.ones(4), dim=0))
    assert_close(F.cosine_similarity(mg.ones(4, dtype=mg.float64), mg.ones(4), dim=0),
                 torch.nn.functional.cosine_similarity(torch.ones(4, dtype=torch.float64), torch.ones(4), dim=0))
    same_error(lambda lib, F, a, b: F.cosine_similarity(a, b), np.ones((3, 4)), np.ones((2, 4)))  # noqa: N803
    same_error(lambda lib, F, a, b: F.cosine_similarity(a, b), np.ones(4), np.ones(4))  # noqa: N803


# -- pairwise_distance -------------------------------------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=4), p=st.sampled_from(P_VALUES),
       keepdim=st.booleans(), drop_lead=st.booleans(), seed=st.integers(0, 99))
def test_pairwise_distance_matches_torch(shape, p, keepdim, drop_lead, seed):
    r = rng(seed)
    shape2 = shape[1:] if drop_lead and len(shape) > 1 else shape
    if not shape and keepdim:
        keepdim = False  # (PyTorch keeps no dimension of a 0-d result either way)
    run_both(lambda lib, F, a, b: F.pairwise_distance(a, b, p, keepdim=keepdim),  # noqa: N803
             r.normal(size=shape), r.normal(size=shape2), rtol=1e-9)


def test_pairwise_distance_of_equal_rows_is_finite_like_torch():
    run_both(lambda lib, F, a, b: F.pairwise_distance(a, b), np.zeros((2, 3)), np.zeros((2, 3)))  # noqa: N803
    same_error(lambda lib, F, a, b: F.pairwise_distance(a, b), np.ones((3, 4)), np.ones((2, 4)))  # noqa: N803


def test_distance_modules_match_torch():
    r = rng(7)
    a, b = r.normal(size=(3, 4)), r.normal(size=(3, 4))
    pairs = [(nn.CosineSimilarity(), torch.nn.CosineSimilarity()),
             (nn.CosineSimilarity(0), torch.nn.CosineSimilarity(0)),
             (nn.PairwiseDistance(), torch.nn.PairwiseDistance()),
             (nn.PairwiseDistance(1.0, keepdim=True), torch.nn.PairwiseDistance(1.0, keepdim=True))]
    for mine, theirs in pairs:
        assert_close(mine(mg.tensor(a), mg.tensor(b)), theirs(torch.tensor(a), torch.tensor(b)))
        assert repr(mine) == repr(theirs)


@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, -1.0, 0.5])
def test_a_nan_row_has_a_nan_distance_as_pytorch(p):
    """A NaN makes the norm NaN (it once gave 0: NaN > 0 is false), also through normalize and triplet loss."""
    rows = [[float("nan"), 1.0], [1.0, 2.0], [0.0, 0.0]]
    for lib in (mg, torch):
        x, y = lib.tensor(rows, dtype=lib.float64), lib.tensor([[0.0, 0.0]], dtype=lib.float64)
        F_ = lib.nn.functional
        got = [F_.pairwise_distance(x, y, p=p, eps=0.0), F_.normalize(x, p=p if p > 0 else 2.0),
               F_.triplet_margin_loss(x, y, y, p=p if p > 0 else 2.0, reduction="none")]
        if lib is mg:
            mine = [t.array for t in got]
        else:
            theirs = [t.numpy() for t in got]
    for m, t in zip(mine, theirs):
        np.testing.assert_allclose(m, t, rtol=1e-12, equal_nan=True)
