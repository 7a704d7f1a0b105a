"""L1, smooth L1, Huber, Gaussian and Poisson NLL losses against PyTorch.

Values and float64 gradients over reductions, options and broadcasting;
dtype rules; warnings; error types; the modules.
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


@settings(max_examples=25, deadline=None)
@given(shape=shapes, reduction=st.sampled_from(REDUCTIONS), which=st.sampled_from(["l1", "smooth", "huber"]),
       width=st.sampled_from([0.0, 0.5, 1.0, 2.0]), weighted=st.booleans(), seed=st.integers(0, 99))
def test_l1_family_matches_torch(shape, reduction, which, width, weighted, seed):
    r = rng(seed)
    x, y = r.normal(0, 2, shape), r.normal(0, 2, shape)
    w = r.uniform(0.5, 2, shape)

    def program(lib, F, x, y):  # noqa: N803
        weight = lib.tensor(w) if weighted else None
        if which == "l1":
            return F.l1_loss(x, y, reduction=reduction, weight=weight)
        if which == "smooth":
            return F.smooth_l1_loss(x, y, reduction=reduction, beta=width)
        return F.huber_loss(x, y, reduction=reduction, delta=width or 1.0, weight=weight)

    if weighted and reduction == "mean" and which == "l1" and not np.prod(shape):
        return  # sum of no weights: 0 / 0 in both
    run_both(program, x, y)


def test_l1_family_gradient_where_input_equals_target_and_at_the_kink():
    x = [1.0, 2.0, -1.0, 0.5]
    y = [1.0, 1.0, 0.0, 0.0]  # equal; |d| = beta = delta = 1 (both sides of the switch agree); |d| = 0.5
    for program in (
        lambda lib, F, x, y: F.l1_loss(x, y, reduction="none"),  # noqa: N803
        lambda lib, F, x, y: F.smooth_l1_loss(x, y, reduction="none"),  # noqa: N803
        lambda lib, F, x, y: F.huber_loss(x, y, reduction="none", delta=1.0),  # noqa: N803
    ):
        run_both(program, x, y)


def test_l1_family_broadcast_with_torch_warning_and_promotion():
    x, y = rng(1).normal(size=(2, 3)), rng(2).normal(size=(3,))
    for name in ("l1_loss", "smooth_l1_loss", "huber_loss"):
        with pytest.warns(UserWarning, match="target size"):
            getattr(F, name)(mg.tensor(x), mg.tensor(y))
        run_both(lambda lib, F, x, y: getattr(F, name)(x, y), x, y)  # noqa: N803, B023
    # dtypes: l1 and smooth l1 promote; huber keeps the input's dtype
    x32, y64 = mg.tensor(x, dtype=mg.float32), mg.tensor(x + 1)
    tx32, ty64 = torch.tensor(x, dtype=torch.float32), torch.tensor(x + 1)
    for name in ("l1_loss", "smooth_l1_loss", "huber_loss"):
        assert_close(getattr(F, name)(x32, y64), getattr(torch.nn.functional, name)(tx32, ty64), 1e-6, 1e-6)
    assert_close(F.l1_loss(x32, mg.ones(2, 3, dtype=mg.int64)),
                 torch.nn.functional.l1_loss(tx32, torch.ones(2, 3, dtype=torch.int64)), 1e-6, 1e-6)


def test_l1_family_errors_match_torch():
    x, y = np.ones((2, 3)), np.zeros((2, 3))
    same_error(lambda lib, F, x, y: F.smooth_l1_loss(x, y, beta=-1.0), x, y, match="beta")  # noqa: N803
    same_error(lambda lib, F, x, y: F.huber_loss(x, y, delta=0.0), x, y, match="delta")  # noqa: N803
    same_error(lambda lib, F, x, y: F.huber_loss(x.long(), y), x, y)  # noqa: N803
    for name in ("l1_loss", "smooth_l1_loss", "huber_loss"):
        same_error(lambda lib, F, x, y: getattr(F, name)(x, y[:, :2]), x, y)  # noqa: N803, B023
        same_error(lambda lib, F, x, y: getattr(F, name)(x, y, reduction="avg"), x, y)  # noqa: N803, B023
    for name in ("l1_loss", "huber_loss"):
        same_error(lambda lib, F, x, y: getattr(F, name)(x, y, weight=lib.ones(3)), x, y, match="same size")  # noqa: N803, B023


# -- gaussian_nll_loss ----------------------------------------------------------------------------------


@settings(max_examples=20, deadline=None)
@given(lead=st.lists(st.integers(1, 3), min_size=1, max_size=2), last=st.integers(1, 3),
       var_kind=st.sampled_from(["same", "short", "one", "float"]), full=st.booleans(),
       reduction=st.sampled_from(REDUCTIONS), seed=st.integers(0, 99))
def test_gaussian_nll_matches_torch(lead, last, var_kind, full, reduction, seed):
    r = rng(seed)
    shape = tuple(lead) + (last,)
    x, y = r.normal(size=shape), r.normal(size=shape)
    var_shape = {"same": shape, "short": shape[:-1], "one": shape[:-1] + (1,), "float": ()}[var_kind]
    v = r.uniform(0.1, 2, var_shape)
    v.flat[0] = 1e-8  # below eps: clamped, yet differentiated as if not

    if var_kind == "float":
        def program(lib, F, x, y):  # noqa: N803
            return F.gaussian_nll_loss(x, y, 0.7, full, reduction=reduction)

        run_both(program, x, y)
    else:
        def program(lib, F, x, y, var):  # noqa: N803
            return F.gaussian_nll_loss(x, y, var, full, reduction=reduction)

        run_both(program, x, y, v, rtol=1e-9)


def test_gaussian_nll_errors_match_torch():
    x = np.ones((2, 3))
    same_error(lambda lib, F, x, v: F.gaussian_nll_loss(x, x, v), x, -np.ones((2, 3)), match="negative")  # noqa: N803
    same_error(lambda lib, F, x, v: F.gaussian_nll_loss(x, x, -1.0), x, x, match="negative")  # noqa: N803
    same_error(lambda lib, F, x, v: F.gaussian_nll_loss(x, x, v), x, np.ones((3, 2)), match="incorrect size")  # noqa: N803
    same_error(lambda lib, F, x, v: F.gaussian_nll_loss(x, x, v, reduction="x"), x, x)  # noqa: N803


# -- poisson_nll_loss ----------------------------------------------------------------------------------


@settings(max_examples=20, deadline=None)
@given(shape=shapes, log_input=st.booleans(), full=st.booleans(), reduction=st.sampled_from(REDUCTIONS),
       seed=st.integers(0, 99))
def test_poisson_nll_matches_torch(shape, log_input, full, reduction, seed):
    r = rng(seed)
    x = r.normal(size=shape) if log_input else r.uniform(0.1, 3, shape)
    y = r.poisson(2.0, shape).astype(np.float64)
    run_both(lambda lib, F, x, y: F.poisson_nll_loss(x, y.detach(), log_input, full, reduction=reduction), x, y)  # noqa: N803


def test_poisson_nll_errors_match_torch():
    same_error(lambda lib, F, x, y: F.poisson_nll_loss(x, y, reduction="x"), [1.0], [1.0])  # noqa: N803
    same_error(lambda lib, F, x, y: F.poisson_nll_loss(x, y), [1.0, 2.0], [1.0, 2.0, 3.0])  # noqa: N803


# -- modules ---------------------------------------------------------------------------------------------


def test_regression_loss_modules_match_torch():
    r = rng(5)
    x, y, v = r.normal(size=(4, 3)), r.normal(size=(4, 3)), r.uniform(0.5, 1, (4, 1))
    counts = r.poisson(1.5, (4, 3)).astype(np.float64)
    pairs = [
        (nn.L1Loss(reduction="sum"), torch.nn.L1Loss(reduction="sum"), (x, y)),
        (nn.SmoothL1Loss(beta=0.5), torch.nn.SmoothL1Loss(beta=0.5), (x, y)),
        (nn.HuberLoss("none", 0.5), torch.nn.HuberLoss("none", 0.5), (x, y)),
        (nn.GaussianNLLLoss(full=True), torch.nn.GaussianNLLLoss(full=True), (x, y, v)),
        (nn.PoissonNLLLoss(False, True, eps=1e-6), torch.nn.PoissonNLLLoss(False, True, eps=1e-6),
         (np.abs(x), counts)),
    ]
    for mine, theirs, args in pairs:
        assert_close(mine(*map(mg.tensor, args)), theirs(*map(torch.tensor, args)))
        assert repr(mine) == repr(theirs)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nn.L1Loss()(mg.tensor(x), mg.tensor(y))
    for cls in (nn.L1Loss, nn.SmoothL1Loss, nn.HuberLoss, nn.GaussianNLLLoss, nn.PoissonNLLLoss):
        with pytest.raises(ValueError, match="reduction"):
            cls(reduction="avg")
