# ruff: noqa: N803  (``L`` is the library module, torch or minigrad, as in tests/error_classes.py)
"""Triplet, hinge embedding, multi-margin, multi-label margin and multi-label soft margin losses against
PyTorch: values, dtypes, float64 gradients, modules and the exception classes of bad inputs.

The names are not wired into ``minigrad.nn.functional`` / ``minigrad.nn`` yet, so the tests reach them
through ``loss(L, name)`` and ``module(L, name)``: PyTorch's for ``torch``, ours for ``minigrad``.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad as mg
from minigrad.nn import embedding_losses, multiclass_losses
from minigrad.nn.distance import PairwiseDistance
from tests.error_classes import assert_same_class_as_torch
from tests.minigrad.nn.torch_compare import assert_close, run_both

REDUCTIONS = ["mean", "sum", "none"]
OURS = {name: getattr(m, name) for m in (embedding_losses, multiclass_losses) for name in m.__all__}


def loss(L, name):
    """The loss function ``name``: torch.nn.functional's, or ours."""
    return getattr(torch.nn.functional, name) if L is torch else OURS[name]


def module(L, name):
    """The loss module class ``name``: torch.nn's, or ours."""
    return getattr(torch.nn, name) if L is torch else OURS[name]


def both_tensors(L, *arrays):
    return [L.tensor(np.asarray(a)) for a in arrays]


# -- triplet losses ---------------------------------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(shape=st.sampled_from([(4, 3), (3,), (), (2, 2, 3), (0, 3), (3, 0)]),
       p=st.sampled_from([1, 2, 3, 1.5, math.inf]), swap=st.booleans(), margin=st.sampled_from([0.5, 1.0, 2]),
       reduction=st.sampled_from(REDUCTIONS), seed=st.integers(0, 99))
def test_triplet_margin_loss_matches_torch(shape, p, swap, margin, reduction, seed):
    r = np.random.default_rng(seed)
    if math.isinf(p) and shape and shape[-1] == 0:
        p = 2  # the inf norm of empty vectors is an error (a case of the error table)
    run_both(lambda L, F, a, b, c: loss(L, "triplet_margin_loss")(a, b, c, margin, p, 1e-6, swap,
                                                                  reduction=reduction),
             *(r.normal(size=shape) for _ in range(3)))


def test_triplet_margin_loss_broadcasts_promotes_and_keeps_half():
    r = np.random.default_rng(1)
    a, b, c = r.normal(size=(4, 3)), r.normal(size=(1, 3)), r.normal(size=(4, 3))
    run_both(lambda L, F, a, b, c: loss(L, "triplet_margin_loss")(a, b, c, reduction="none"), a, b, c)
    for dtypes in [(np.int64, np.int64, np.int64), (np.float32, np.int64, np.float32),
                   (np.float32, np.float64, np.float32), (np.float16,) * 3]:
        args = [x.astype(dt) * 3 for x, dt in zip((a, r.normal(size=(4, 3)), c), dtypes)]
        mine = loss(mg, "triplet_margin_loss")(*both_tensors(mg, *args), reduction="none")
        theirs = loss(torch, "triplet_margin_loss")(*both_tensors(torch, *args), reduction="none")
        assert_close(mine, theirs, rtol=1e-3 if np.float16 in dtypes else 1e-6, atol=1e-3)


@settings(max_examples=15, deadline=None)
@given(distance=st.sampled_from(["default", "cosine", "module"]), swap=st.booleans(),
       reduction=st.sampled_from(REDUCTIONS), seed=st.integers(0, 99))
def test_triplet_margin_with_distance_loss_matches_torch(distance, swap, reduction, seed):
    r = np.random.default_rng(seed)

    def program(L, F, a, b, c):
        fn = {"default": None, "cosine": lambda x, y: 1.0 - F.cosine_similarity(x, y),
              "module": (torch.nn.PairwiseDistance if L is torch else PairwiseDistance)(p=1.0)}[distance]
        return loss(L, "triplet_margin_with_distance_loss")(a, b, c, distance_function=fn, margin=0.7, swap=swap,
                                                            reduction=reduction)

    run_both(program, *(r.normal(size=(5, 4)) for _ in range(3)))


def test_triplet_gradient_at_ties_matches_torch():
    # the loss exactly at its hinge, and the swap distance equal to d(anchor, negative): gradients as PyTorch's
    a, b = np.array([[0.0, 0.0]]), np.array([[3.0, 4.0]])
    run_both(lambda L, F, a, p, n: loss(L, "triplet_margin_loss")(a, p, n, 1.0, 2, 0.0, True),
             a, a + np.array([[0.0, 1.0]]), b)
    run_both(lambda L, F, a, p, n: loss(L, "triplet_margin_loss")(a, p, n, 1.0, 2, 0.0, True),
             a, a, b + np.array([[0.0, 1.0]]))


# -- hinge embedding loss ----------------------------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(shapes=st.sampled_from([((3, 4), (3, 4)), ((3, 4), (4,)), ((4,), (3, 4)), ((), ()), ((0, 2), (0, 2))]),
       margin=st.sampled_from([1.0, 0.0, -0.5, 2]), reduction=st.sampled_from(REDUCTIONS), seed=st.integers(0, 99))
def test_hinge_embedding_loss_matches_torch(shapes, margin, reduction, seed):
    r = np.random.default_rng(seed)
    x = r.normal(0, 2, size=shapes[0])
    y = r.choice([-1.0, 1.0, 0.0, 2.0], size=shapes[1])
    run_both(lambda L, F, x, y: loss(L, "hinge_embedding_loss")(x, y.detach(), margin, reduction=reduction),
             x, y)


def test_hinge_embedding_loss_kink_dtypes_and_integer_inputs_match_torch():
    # inputs exactly at the margin (the clamp passes the gradient there, as PyTorch's)
    run_both(lambda L, F, x: loss(L, "hinge_embedding_loss")(x, L.tensor([-1.0, 0.0, -1.0, 1.0]), reduction="sum"),
             np.array([1.0, 1.0, 0.5, 2.0]))
    cases = [
        (np.array([1, 2, -3]), np.array([1, -1, -1]), 1.5, "none"),
        (np.array([1, 2, -3], dtype=np.int8), np.array([1, -1, -1]), -2.7, "sum"),
        (np.array([1, 2, 3], dtype=np.uint8), np.array([1, -1, -1]), 2.7, "none"),  # wraps like PyTorch's
        (np.array([1, 2, 3], dtype=np.int32), np.array([1, -1, 0]), 1, "sum"),
        (np.array([0.5, 2.0], dtype=np.float16), np.array([1.0, -1.0]), 3.0, "none"),
        (np.array([0.5, 2.0], dtype=np.float64), np.array([1.0, -1.0], dtype=np.float32), 3.0, "mean"),
        (np.array([0.5, 2.0], dtype=np.float32), np.array([True, False]), 3.0, "none"),
        (np.array([0.5, 2.0], dtype=np.float32), np.array([1, -1]), np.float32(3.0), "none"),
    ]
    for x, y, margin, reduction in cases:
        mine = loss(mg, "hinge_embedding_loss")(*both_tensors(mg, x, y), margin, reduction=reduction)
        theirs = loss(torch, "hinge_embedding_loss")(*both_tensors(torch, x, y), margin, reduction=reduction)
        assert_close(mine, theirs)


# -- multi-class margin loss --------------------------------------------------------------------------


@settings(max_examples=30, deadline=None)
@given(rows=st.integers(0, 4), classes=st.integers(1, 5), layout=st.sampled_from(["2d", "1d", "1d-0d-target", "0d"]),
       p=st.sampled_from([1, 2]), margin=st.sampled_from([1.0, 0.3, -0.5]), weighted=st.booleans(),
       reduction=st.sampled_from(REDUCTIONS), seed=st.integers(0, 99))
def test_multi_margin_loss_matches_torch(rows, classes, layout, p, margin, weighted, reduction, seed):
    r = np.random.default_rng(seed)
    if layout == "2d":
        x, y = r.normal(size=(rows, classes)), r.integers(0, classes, size=rows)
    elif layout == "0d":
        classes, x, y = 1, r.normal(size=()), np.zeros(1, dtype=np.int64)
    else:
        x, y = r.normal(size=classes), r.integers(0, classes, size=(1,) if layout == "1d" else ())
    if layout == "2d" and rows == 0 and reduction != "none":
        reduction = "none"  # PyTorch returns uninitialized memory for a reduced empty batch
    w = r.uniform(0.2, 2.0, size=classes) if weighted else None

    def program(L, F, x):
        weight = None if w is None else L.tensor(w)
        return loss(L, "multi_margin_loss")(x, L.tensor(y), p, margin, weight, reduction=reduction)

    run_both(program, x)


def test_multi_margin_loss_kinks_nan_and_empty_batch():
    w = np.array([1.0, 2.0, 3.0, 0.5])
    x = np.array([[1.0, 0.0, 2.0, -5.0], [0.5, 0.5, 0.5, 0.5]])  # z == 0 at [0, 1]; every z == margin in row 1
    for p in (1, 2):
        run_both(lambda L, F, x, p=p: loss(L, "multi_margin_loss")(x, L.tensor([0, 2]), p, 1.0, L.tensor(w),
                                                              reduction="none"), x)
    with_nan = np.array([[1.0, np.nan, 2.0, -5.0]])
    for target in ([0], [1]):
        run_both(lambda L, F, x, target=target: loss(L, "multi_margin_loss")(x, L.tensor(target), reduction="none"),
                 with_nan, backward=False)
    empty = mg.zeros(0, 3)
    target = mg.tensor(np.zeros(0, dtype=np.int64))
    assert loss(mg, "multi_margin_loss")(empty, target, reduction="sum").item() == 0.0
    assert math.isnan(loss(mg, "multi_margin_loss")(empty, target).item())


def test_multi_margin_loss_gradcheck():
    r = np.random.default_rng(4)
    x = mg.tensor(r.normal(size=(3, 4)), requires_grad=True)
    target, weight = mg.tensor([0, 3, 1]), mg.tensor(r.uniform(size=4))
    for p in (1, 2):
        assert mg.autograd.gradcheck(
            lambda t, p=p: OURS["multi_margin_loss"](t, target, p, 0.9, weight, reduction="none"), (x,))


# -- multi-label margin loss -------------------------------------------------------------------------


@st.composite
def label_lists(draw, rows, classes):
    """Rows of class indices ended by -1 (duplicates allowed, anything after the -1 in range)."""
    out = []
    for _ in range(rows):
        row = draw(st.lists(st.integers(-1, classes - 1), min_size=classes, max_size=classes))
        out.append(row)
    return np.array(out, dtype=np.int64).reshape(rows, classes)


@settings(max_examples=30, deadline=None)
@given(data=st.data(), rows=st.integers(0, 4), classes=st.integers(1, 5), layout=st.sampled_from(["2d", "1d", "0d"]),
       reduction=st.sampled_from(REDUCTIONS), seed=st.integers(0, 99))
def test_multilabel_margin_loss_matches_torch(data, rows, classes, layout, reduction, seed):
    r = np.random.default_rng(seed)
    if layout == "0d":
        x, y = r.normal(size=()), np.array(data.draw(st.sampled_from([0, -1])))
    elif layout == "1d":
        x, y = r.normal(size=classes), data.draw(label_lists(1, classes))[0]
    else:
        x, y = r.normal(size=(rows, classes)), data.draw(label_lists(rows, classes))
        if rows == 0 and reduction != "none":
            reduction = "none"  # PyTorch returns uninitialized memory for a reduced empty batch
    run_both(lambda L, F, x: loss(L, "multilabel_margin_loss")(x, L.tensor(y), reduction=reduction), x)


def test_multilabel_margin_loss_kinks_nan_and_gradcheck():
    x = np.array([[1.0, 0.0, 2.0, -5.0]])  # z == 0 for the pair (0, 1)
    run_both(lambda L, F, x: loss(L, "multilabel_margin_loss")(x, L.tensor([[0, 3, -1, 2]]), reduction="sum"),
             x)
    run_both(lambda L, F, x: loss(L, "multilabel_margin_loss")(x, L.tensor([[0, -1, 0, 0]]), reduction="none"),
             np.array([[1.0, np.nan, 2.0, -5.0]]), backward=False)
    r = np.random.default_rng(5)
    t = mg.tensor(r.normal(size=(2, 4)), requires_grad=True)
    target = mg.tensor([[2, 0, -1, 1], [3, 3, 1, -1]])
    assert mg.autograd.gradcheck(lambda t: OURS["multilabel_margin_loss"](t, target, reduction="none"), (t,))


# -- multi-label soft margin loss --------------------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(shapes=st.sampled_from([((3, 4), (3, 4), (4,)), ((4,), (4,), (4,)), ((2, 3, 4), (3, 4), (1, 4)),
                               ((3, 4), (4,), (3, 4)), ((3, 4), (3, 4), None), ((2, 3), (2, 3), (5, 2, 3)),
                               ((0, 3), (0, 3), (3,))]),
       reduction=st.sampled_from(REDUCTIONS), seed=st.integers(0, 99))
def test_multilabel_soft_margin_loss_matches_torch(shapes, reduction, seed):
    r = np.random.default_rng(seed)
    x = r.normal(0, 3, size=shapes[0])
    y = r.uniform(size=shapes[1]).round()
    arrays = (x, y) if shapes[2] is None else (x, y, r.uniform(0.5, 2.0, size=shapes[2]))
    run_both(lambda L, F, *a: loss(L, "multilabel_soft_margin_loss")(*a, reduction=reduction), *arrays)


def test_multilabel_soft_margin_loss_dtypes_and_number_targets_match_torch():
    r = np.random.default_rng(6)
    x = r.normal(size=(3, 4))
    labels = (x > 0).astype(np.float32)
    cases = [(x.astype(np.float16), labels, None),  # a float16 input with a float32 target gives float32
             (x.astype(np.float32), labels.astype(np.int64), None),
             (x.astype(np.float32), labels.astype(np.float64), np.ones(4, dtype=np.int64)),
             (x.astype(np.float32), 0.25, 2.0),  # numbers as target and weight, as PyTorch's arithmetic allows
             (x[:, :0].astype(np.float32), labels[:, :0], None)]  # no classes: NaN per row
    for inp, target, weight in cases:
        def call(L, inp=inp, target=target, weight=weight):
            t, w = (L.tensor(v) if isinstance(v, np.ndarray) else v for v in (target, weight))
            return loss(L, "multilabel_soft_margin_loss")(L.tensor(inp), t, w, reduction="none")

        assert_close(call(mg), call(torch), rtol=1e-3, atol=1e-3)


# -- modules ------------------------------------------------------------------------------------------


def test_modules_match_torch_values_repr_and_buffers():
    r = np.random.default_rng(7)
    a, b, c = (r.normal(size=(4, 3)) for _ in range(3))
    cases = [
        ("TripletMarginLoss", dict(margin=0.5, p=1.0, swap=True), {}, (a, b, c)),
        ("TripletMarginWithDistanceLoss", dict(margin=0.5, swap=True), {}, (a, b, c)),
        ("HingeEmbeddingLoss", dict(margin=0.3), {}, (a, np.sign(b))),
        ("MultiMarginLoss", dict(p=2, margin=0.5), {"weight": r.uniform(size=3)}, (a, np.array([0, 2, 1, 1]))),
        ("MultiLabelMarginLoss", {}, {}, (a, np.array([[0, -1, 2]] * 4))),
        ("MultiLabelSoftMarginLoss", {}, {"weight": r.uniform(size=3)}, (a, (b > 0).astype(np.float64))),
    ]
    for name, kwargs, tensors, inputs in cases:
        for reduction in REDUCTIONS:
            mods = [module(L, name)(**kwargs, **{k: L.tensor(v) for k, v in tensors.items()}, reduction=reduction)
                    for L in (mg, torch)]
            assert repr(mods[0]) == repr(mods[1])
            assert_close(mods[0](*both_tensors(mg, *inputs)), mods[1](*both_tensors(torch, *inputs)))
            if tensors:
                assert list(mods[0].state_dict()) == list(mods[1].state_dict()) == ["weight"]
    custom = module(mg, "TripletMarginWithDistanceLoss")(distance_function=lambda x, y: (x - y).abs().sum(-1))
    assert repr(custom) == "TripletMarginWithDistanceLoss()"
    assert custom(*both_tensors(mg, a, a, a)).item() == 1.0


def test_module_constructor_errors_match_torch():
    bad = [
        ("TripletMarginLoss", dict(margin=0.0)),
        ("TripletMarginLoss", dict(margin=-1)),
        ("TripletMarginLoss", dict(margin="a")),
        ("TripletMarginWithDistanceLoss", dict(margin=-0.5)),
        ("MultiMarginLoss", dict(p=3)),
        ("MultiMarginLoss", dict(weight=[1.0, 2.0])),
    ]
    for name, kwargs in bad:
        assert_same_class_as_torch(name, lambda L, name=name, kwargs=kwargs: module(L, name)(**kwargs))
    assert_same_class_as_torch("MultiMarginLoss(weight 2-D)",
                               lambda L: module(L, "MultiMarginLoss")(weight=L.ones(2, 2)))
    for name in ("TripletMarginLoss", "HingeEmbeddingLoss", "MultiMarginLoss", "MultiLabelMarginLoss",
                 "MultiLabelSoftMarginLoss", "TripletMarginWithDistanceLoss"):
        with pytest.raises(ValueError, match="reduction"):
            module(mg, name)(reduction="avg")


# -- bad inputs: the exception classes are PyTorch's -------------------------------------------------


def _f32(L, *shape):
    return L.ones(*shape)


ERROR_CASES = {
    # triplet_margin_loss
    "triplet: margin 0": lambda L: loss(L, "triplet_margin_loss")(_f32(L, 2, 3), _f32(L, 2, 3), _f32(L, 2, 3), 0.0),
    "triplet: margin str": lambda L: loss(L, "triplet_margin_loss")(_f32(L, 2, 3), _f32(L, 2, 3), _f32(L, 2, 3), "a"),
    "triplet: p None": lambda L: loss(L, "triplet_margin_loss")(_f32(L, 2, 3), _f32(L, 2, 3), _f32(L, 2, 3), p=None),
    "triplet: eps str": lambda L: loss(L, "triplet_margin_loss")(_f32(L, 2, 3), _f32(L, 2, 3), _f32(L, 2, 3), eps="a"),
    "triplet: swap int": lambda L: loss(L, "triplet_margin_loss")(_f32(L, 2, 3), _f32(L, 2, 3), _f32(L, 2, 3), swap=1),
    "triplet: reduction": lambda L: loss(L, "triplet_margin_loss")(_f32(L, 2, 3), _f32(L, 2, 3), _f32(L, 2, 3),
                                                                  reduction="avg"),
    "triplet: anchor list": lambda L: loss(L, "triplet_margin_loss")([1.0], _f32(L, 2, 3), _f32(L, 2, 3)),
    "triplet: ndim": lambda L: loss(L, "triplet_margin_loss")(_f32(L, 2, 3), _f32(L, 3), _f32(L, 2, 3)),
    "triplet: broadcast": lambda L: loss(L, "triplet_margin_loss")(_f32(L, 2, 3), _f32(L, 2, 2), _f32(L, 2, 3)),
    "triplet: bool": lambda L: loss(L, "triplet_margin_loss")(*(L.ones(2, 3) > 0 for _ in range(3))),
    "triplet: inf norm of empty vectors": lambda L: loss(L, "triplet_margin_loss")(
        *(_f32(L, 2, 0) for _ in range(3)), p=math.inf),
    "triplet: margin complex": lambda L: loss(L, "triplet_margin_loss")(*(_f32(L, 2) for _ in range(3)), margin=1j),
    # triplet_margin_with_distance_loss
    "twd: margin -1": lambda L: loss(L, "triplet_margin_with_distance_loss")(*(_f32(L, 2, 3) for _ in range(3)),
                                                                             margin=-1.0),
    "twd: margin None": lambda L: loss(L, "triplet_margin_with_distance_loss")(*(_f32(L, 2, 3) for _ in range(3)),
                                                                               margin=None),
    "twd: reduction None": lambda L: loss(L, "triplet_margin_with_distance_loss")(*(_f32(L, 2, 3) for _ in range(3)),
                                                                                  reduction=None),
    "twd: ndim": lambda L: loss(L, "triplet_margin_with_distance_loss")(_f32(L, 2, 3), _f32(L, 3), _f32(L, 2, 3)),
    "twd: distance not callable": lambda L: loss(L, "triplet_margin_with_distance_loss")(
        *(_f32(L, 2, 3) for _ in range(3)), distance_function="a"),
    "twd: distance returns a float": lambda L: loss(L, "triplet_margin_with_distance_loss")(
        *(_f32(L, 2, 3) for _ in range(3)), distance_function=lambda x, y: 1.5),
    "twd: positional distance": lambda L: loss(L, "triplet_margin_with_distance_loss")(
        *(_f32(L, 2, 3) for _ in range(3)), None),
    # hinge_embedding_loss
    "hinge: margin str": lambda L: loss(L, "hinge_embedding_loss")(_f32(L, 3), _f32(L, 3), "a"),
    "hinge: margin 1-D tensor": lambda L: loss(L, "hinge_embedding_loss")(_f32(L, 3), _f32(L, 3), L.ones(1)),
    "hinge: target float": lambda L: loss(L, "hinge_embedding_loss")(_f32(L, 3), 1.0),
    "hinge: broadcast": lambda L: loss(L, "hinge_embedding_loss")(_f32(L, 3, 4), _f32(L, 3, 2)),
    "hinge: bool input": lambda L: loss(L, "hinge_embedding_loss")(L.ones(2) > 0, _f32(L, 2)),
    "hinge: int mean": lambda L: loss(L, "hinge_embedding_loss")(L.tensor([1, 2]), L.tensor([1, -1])),
    "hinge: int margin nan": lambda L: loss(L, "hinge_embedding_loss")(L.tensor([1, 2]), L.tensor([1, -1]), math.nan,
                                                                      reduction="sum"),
    "hinge: uint8 margin -1": lambda L: loss(L, "hinge_embedding_loss")(L.tensor([1, 2], dtype=L.uint8),
                                                                       L.tensor([1, -1]), -1, reduction="sum"),
    "hinge: float16 margin 1e5": lambda L: loss(L, "hinge_embedding_loss")(L.ones(2, dtype=L.float16),
                                                                          L.tensor([1, -1]), 1e5),
    "hinge: reduction": lambda L: loss(L, "hinge_embedding_loss")(_f32(L, 3), _f32(L, 3), reduction="x"),
    # multi_margin_loss
    "multi: p 3": lambda L: loss(L, "multi_margin_loss")(_f32(L, 2, 3), L.tensor([0, 1]), p=3),
    "multi: p str": lambda L: loss(L, "multi_margin_loss")(_f32(L, 2, 3), L.tensor([0, 1]), p="a"),
    "multi: weight 2-D": lambda L: loss(L, "multi_margin_loss")(_f32(L, 2, 3), L.tensor([0, 1]), weight=L.ones(1, 3)),
    "multi: weight size": lambda L: loss(L, "multi_margin_loss")(_f32(L, 2, 3), L.tensor([0, 1]), weight=L.ones(2)),
    "multi: weight dtype": lambda L: loss(L, "multi_margin_loss")(_f32(L, 2, 3), L.tensor([0, 1]),
                                                                 weight=L.ones(3, dtype=L.float64)),
    "multi: weight requires grad": lambda L: loss(L, "multi_margin_loss")(
        _f32(L, 2, 3), L.tensor([0, 1]), weight=L.ones(3, requires_grad=True)),
    "multi: margin str": lambda L: loss(L, "multi_margin_loss")(_f32(L, 2, 3), L.tensor([0, 1]), margin="a"),
    "multi: margin complex": lambda L: loss(L, "multi_margin_loss")(_f32(L, 2, 3), L.tensor([0, 1]), margin=1j),
    "multi: 3-D input": lambda L: loss(L, "multi_margin_loss")(_f32(L, 1, 2, 3), L.tensor([0, 1])),
    "multi: no classes": lambda L: loss(L, "multi_margin_loss")(_f32(L, 2, 0), L.tensor([0, 1])),
    "multi: target size": lambda L: loss(L, "multi_margin_loss")(_f32(L, 2, 3), L.tensor([0])),
    "multi: target 2-D": lambda L: loss(L, "multi_margin_loss")(_f32(L, 2, 3), L.tensor([[0], [1]])),
    "multi: target float": lambda L: loss(L, "multi_margin_loss")(_f32(L, 2, 3), L.tensor([0.0, 1.0])),
    "multi: target int32": lambda L: loss(L, "multi_margin_loss")(_f32(L, 2, 3), L.tensor([0, 1], dtype=L.int32)),
    "multi: target out of range": lambda L: loss(L, "multi_margin_loss")(_f32(L, 2, 3), L.tensor([0, 3])),
    "multi: target negative": lambda L: loss(L, "multi_margin_loss")(_f32(L, 2, 3), L.tensor([-1, 0])),
    "multi: int input": lambda L: loss(L, "multi_margin_loss")(L.ones(2, 3, dtype=L.int64), L.tensor([0, 1])),
    "multi: half input": lambda L: loss(L, "multi_margin_loss")(L.ones(2, 3, dtype=L.float16), L.tensor([0, 1])),
    "multi: input None": lambda L: loss(L, "multi_margin_loss")(None, L.tensor([0, 1])),
    "multi: reduction": lambda L: loss(L, "multi_margin_loss")(_f32(L, 2, 3), L.tensor([0, 1]), reduction="x"),
    # multilabel_margin_loss
    "multilabel: 3-D input": lambda L: loss(L, "multilabel_margin_loss")(_f32(L, 1, 2, 3), L.zeros(1, 2, 3).long()),
    "multilabel: no classes": lambda L: loss(L, "multilabel_margin_loss")(_f32(L, 2, 0), L.zeros(2, 0).long()),
    "multilabel: target shape": lambda L: loss(L, "multilabel_margin_loss")(_f32(L, 2, 3), L.zeros(2, 2).long()),
    "multilabel: 1-D input, 2-D target": lambda L: loss(L, "multilabel_margin_loss")(_f32(L, 3), L.zeros(1, 3).long()),
    "multilabel: 2-D input, 1-D target": lambda L: loss(L, "multilabel_margin_loss")(_f32(L, 1, 3), L.zeros(3).long()),
    "multilabel: target float": lambda L: loss(L, "multilabel_margin_loss")(_f32(L, 2, 3), L.zeros(2, 3)),
    "multilabel: target out of range": lambda L: loss(L, "multilabel_margin_loss")(_f32(L, 1, 3),
                                                                                  L.tensor([[0, 3, -1]])),
    "multilabel: target below -1 after the end": lambda L: loss(L, "multilabel_margin_loss")(
        _f32(L, 1, 3), L.tensor([[0, -1, -2]])),
    "multilabel: int input": lambda L: loss(L, "multilabel_margin_loss")(L.ones(2, 3).long(), L.zeros(2, 3).long()),
    "multilabel: target None": lambda L: loss(L, "multilabel_margin_loss")(_f32(L, 2, 3), None),
    "multilabel: reduction": lambda L: loss(L, "multilabel_margin_loss")(_f32(L, 2, 3), L.zeros(2, 3).long(),
                                                                        reduction=None),
    # multilabel_soft_margin_loss
    "soft: 0-d input": lambda L: loss(L, "multilabel_soft_margin_loss")(L.tensor(1.0), L.tensor(1.0)),
    "soft: int input": lambda L: loss(L, "multilabel_soft_margin_loss")(L.ones(2, 3).long(), _f32(L, 2, 3)),
    "soft: bool target": lambda L: loss(L, "multilabel_soft_margin_loss")(_f32(L, 2, 3), L.ones(2, 3) > 0),
    "soft: broadcast": lambda L: loss(L, "multilabel_soft_margin_loss")(_f32(L, 2, 3), _f32(L, 2, 2)),
    "soft: weight broadcast": lambda L: loss(L, "multilabel_soft_margin_loss")(_f32(L, 2, 3), _f32(L, 2, 3),
                                                                              L.ones(2)),
    "soft: input None": lambda L: loss(L, "multilabel_soft_margin_loss")(None, _f32(L, 2, 3)),
    "soft: target None": lambda L: loss(L, "multilabel_soft_margin_loss")(_f32(L, 2, 3), None),
    "soft: reduction str": lambda L: loss(L, "multilabel_soft_margin_loss")(_f32(L, 2, 3), _f32(L, 2, 3),
                                                                           reduction="x"),
    "soft: reduction None": lambda L: loss(L, "multilabel_soft_margin_loss")(_f32(L, 2, 3), _f32(L, 2, 3),
                                                                            reduction=None),
}


@pytest.mark.parametrize("name", list(ERROR_CASES))
def test_bad_inputs_raise_pytorchs_exception_classes(name):
    assert_same_class_as_torch(name, ERROR_CASES[name])


def test_error_messages_name_the_problem():
    with pytest.raises(RuntimeError, match="out of range"):
        OURS["multi_margin_loss"](mg.ones(2, 3), mg.tensor([0, 3]))
    with pytest.raises(ValueError, match="margin must be greater than 0"):
        OURS["triplet_margin_loss"](mg.ones(2), mg.ones(2), mg.ones(2), margin=0)
    with pytest.raises(TypeError, match="distance_function must return a Tensor"):
        OURS["triplet_margin_with_distance_loss"](mg.ones(2), mg.ones(2), mg.ones(2), distance_function=print)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no NumPy warning from an empty class dimension
        assert math.isnan(OURS["multilabel_soft_margin_loss"](mg.ones(2, 0), mg.ones(2, 0), reduction="sum").item())
