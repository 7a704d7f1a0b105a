# ruff: noqa: N803  (cases take the library module as ``L`` and nn.functional as ``F``, torch's or minigrad's)
"""bilinear/Bilinear, Fold/Unfold, channel_shuffle/ChannelShuffle, rrelu/rrelu_/RReLU, pdist and
gumbel_softmax against PyTorch: values, float64 gradients, dtypes, in-place variants, random draws
(ranges, reproducibility, the gradient of the drawn slopes), and the exception classes of bad inputs."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad as mg
from minigrad.autograd import gradcheck
from minigrad.nn.bilinear import Bilinear, bilinear
from minigrad.nn.channel_shuffle import ChannelShuffle, channel_shuffle
from minigrad.nn.distance import pdist
from minigrad.nn.fold import Fold, Unfold
from minigrad.nn.gumbel import gumbel_softmax
from minigrad.nn.rrelu import RReLU, rrelu, rrelu_
from tests.error_classes import assert_same_class_as_torch
from tests.minigrad.nn.torch_compare import assert_close, run_both, to_np

MINE = {
    "bilinear": bilinear, "channel_shuffle": channel_shuffle, "rrelu": rrelu, "rrelu_": rrelu_, "pdist": pdist,
    "gumbel_softmax": gumbel_softmax, "Bilinear": Bilinear, "Fold": Fold, "Unfold": Unfold,
    "ChannelShuffle": ChannelShuffle, "RReLU": RReLU,
}


def fn(L, name):
    """``name`` in library ``L``: torch.nn.functional's (torch.nn's) for torch, this suite's modules' for minigrad."""
    if L is torch:
        return getattr(torch.nn, name) if name[0].isupper() else getattr(torch.nn.functional, name)
    return MINE[name]


def rng(seed=0):
    return np.random.default_rng(seed)


# -- bilinear ------------------------------------------------------------------------------------------


@settings(max_examples=15, deadline=None)
@given(lead=st.lists(st.integers(0, 3), max_size=2), sizes=st.tuples(*[st.integers(1, 4)] * 3),
       with_bias=st.booleans(), seed=st.integers(0, 99))
def test_bilinear_matches_torch(lead, sizes, with_bias, seed):
    in1, in2, out = sizes
    r = rng(seed)
    arrays = [r.normal(size=(*lead, in1)), r.normal(size=(*lead, in2)), r.normal(size=(out, in1, in2))]
    if with_bias:
        arrays.append(r.normal(size=out))
    mine, theirs = run_both(lambda L, F, *t: fn(L, "bilinear")(*t), *arrays)
    assert mine.shape == (*lead, out)


def test_bilinear_dtypes_and_gradcheck():
    x1, x2, w = (mg.tensor(rng(s).normal(size=shape)) for s, shape in ((1, (2, 3)), (2, (2, 4)), (3, (5, 3, 4))))
    assert bilinear(x1.float(), x2.float(), w.float()).dtype == mg.float32
    ints = bilinear(mg.ones(2, 3, dtype=mg.int64), mg.ones(2, 4, dtype=mg.int64), mg.ones(5, 3, 4, dtype=mg.int64),
                    mg.ones(5, dtype=mg.int64))
    assert ints.dtype == mg.int64 and ints.tolist() == [[13] * 5] * 2
    leaves = [t.detach().requires_grad_() for t in (x1, x2, w, mg.tensor(rng(4).normal(size=5)))]
    assert gradcheck(bilinear, leaves)


def test_bilinear_layer_initializes_like_torch():
    mg.manual_seed(0)
    layer = Bilinear(4, 5, 6)
    assert layer.weight.shape == (6, 4, 5) and layer.bias.shape == (6,) and layer.weight.dtype == mg.float32
    assert layer.weight.requires_grad and layer.bias.requires_grad
    for p in (layer.weight, layer.bias):  # U(-1/2, 1/2) for in1_features = 4, and spread over it
        values = to_np(p.detach())
        assert np.abs(values).max() <= 0.5 and np.abs(values).max() > 0.3
    mg.manual_seed(0)
    again = Bilinear(4, 5, 6)
    assert np.array_equal(to_np(again.weight.detach()), to_np(layer.weight.detach()))
    assert repr(layer) == repr(torch.nn.Bilinear(4, 5, 6))
    assert repr(Bilinear(2, 3, 4, bias=False)) == repr(torch.nn.Bilinear(2, 3, 4, bias=False))
    assert Bilinear(2, 3, 4, bias=False).bias is None
    assert Bilinear(2, 3, 4, dtype=mg.float64).weight.dtype == mg.float64
    assert Bilinear(2, 0, 3).weight.shape == (3, 2, 0)  # accepted, as in PyTorch
    x1, x2 = mg.randn(7, 4), mg.randn(7, 5)
    expected = torch.nn.functional.bilinear(*(torch.tensor(to_np(t)) for t in (x1, x2, layer.weight.detach(),
                                                                              layer.bias.detach())))
    assert_close(layer(x1, x2), expected, rtol=1e-5, atol=1e-6)
    out = layer(x1, x2)
    out.sum().backward()
    assert layer.weight.grad.shape == (6, 4, 5) and layer.bias.grad.shape == (6,)


def _ones(L, *shape):
    return L.ones(*shape) if shape else L.tensor(1.0)


BILINEAR_ERRORS = {
    "0-d inputs": lambda L: fn(L, "bilinear")(_ones(L), _ones(L), _ones(L, 6, 1, 1)),
    "dims differ": lambda L: fn(L, "bilinear")(_ones(L, 2, 3, 4), _ones(L, 3, 5), _ones(L, 6, 4, 5)),
    "no broadcasting": lambda L: fn(L, "bilinear")(_ones(L, 1, 4), _ones(L, 3, 5), _ones(L, 6, 4, 5)),
    "in1 size": lambda L: fn(L, "bilinear")(_ones(L, 3, 3), _ones(L, 3, 5), _ones(L, 6, 4, 5)),
    "in2 size": lambda L: fn(L, "bilinear")(_ones(L, 3, 4), _ones(L, 3, 3), _ones(L, 6, 4, 5)),
    "1-d weight": lambda L: fn(L, "bilinear")(_ones(L, 3, 4), _ones(L, 3, 5), _ones(L, 6)),
    "2-d weight": lambda L: fn(L, "bilinear")(_ones(L, 3, 4), _ones(L, 3, 5), _ones(L, 6, 4)),
    "2-d weight, sizes off": lambda L: fn(L, "bilinear")(_ones(L, 3, 4), _ones(L, 3, 5), _ones(L, 4, 5)),
    "4-d weight": lambda L: fn(L, "bilinear")(_ones(L, 3, 4), _ones(L, 3, 5), _ones(L, 6, 4, 5, 1)),
    "0-d bias": lambda L: fn(L, "bilinear")(_ones(L, 3, 4), _ones(L, 3, 5), _ones(L, 6, 4, 5), _ones(L)),
    "2-d bias": lambda L: fn(L, "bilinear")(_ones(L, 3, 4), _ones(L, 3, 5), _ones(L, 6, 4, 5), _ones(L, 6, 1)),
    "bias size": lambda L: fn(L, "bilinear")(_ones(L, 3, 4), _ones(L, 3, 5), _ones(L, 6, 4, 5), _ones(L, 5)),
    "dtypes": lambda L: fn(L, "bilinear")(_ones(L, 3, 4).double(), _ones(L, 3, 5), _ones(L, 6, 4, 5)),
    "bias dtype": lambda L: fn(L, "bilinear")(_ones(L, 3, 4), _ones(L, 3, 5), _ones(L, 6, 4, 5), _ones(L, 6).long()),
    "bools": lambda L: fn(L, "bilinear")(_ones(L, 3, 4) > 0, _ones(L, 3, 5) > 0, _ones(L, 6, 4, 5) > 0),
    "no in1 features": lambda L: fn(L, "bilinear")(_ones(L, 3, 0), _ones(L, 3, 5), _ones(L, 6, 0, 5)),
    "no in2 features": lambda L: fn(L, "bilinear")(_ones(L, 0, 4), _ones(L, 0, 0), _ones(L, 6, 4, 0)),
    "None input": lambda L: fn(L, "bilinear")(None, _ones(L, 3, 5), _ones(L, 6, 4, 5)),
    "list bias": lambda L: fn(L, "bilinear")(_ones(L, 3, 4), _ones(L, 3, 5), _ones(L, 6, 4, 5), [1.0] * 6),
    "layer in1 0": lambda L: fn(L, "Bilinear")(0, 2, 3),
    "layer negative": lambda L: fn(L, "Bilinear")(2, -2, 3),
    "layer float size": lambda L: fn(L, "Bilinear")(2, 2.5, 3),
    "layer int dtype": lambda L: fn(L, "Bilinear")(2, 2, 3, dtype=L.int64),
    "layer forward": lambda L: fn(L, "Bilinear")(2, 3, 4)(_ones(L, 5, 2), _ones(L, 5, 4)),
}


@pytest.mark.parametrize("name", list(BILINEAR_ERRORS))
def test_bilinear_errors_match_torch(name):
    assert_same_class_as_torch(name, BILINEAR_ERRORS[name])


# -- Fold / Unfold -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("settings_", [dict(), dict(dilation=(1, 2), padding=1, stride=(2, 1)), dict(stride=2)])
def test_fold_and_unfold_layers_match_torch(settings_):
    x = rng(1).normal(size=(2, 3, 6, 7))
    out, _ = run_both(lambda L, F, t: fn(L, "Unfold")((2, 3), **settings_)(t), x)
    blocks = to_np(out.detach())
    run_both(lambda L, F, t: fn(L, "Fold")((6, 7), (2, 3), **settings_)(t), blocks)
    run_both(lambda L, F, t: fn(L, "Unfold")(2, **settings_)(t), x[0])  # (unbatched)


def test_fold_and_unfold_reprs_and_attributes_match_torch():
    for args, kwargs in [((3, 2), {}), (((3, 4), [2, 2]), dict(dilation=(1, 1), padding=1, stride=2))]:
        mine, theirs = Fold(*args, **kwargs), torch.nn.Fold(*args, **kwargs)
        assert repr(mine) == repr(theirs)
        assert (mine.output_size, mine.kernel_size, mine.dilation, mine.padding, mine.stride) == (
            theirs.output_size, theirs.kernel_size, theirs.dilation, theirs.padding, theirs.stride)
        assert repr(Unfold(*args[1:], **kwargs)) == repr(torch.nn.Unfold(*args[1:], **kwargs))


FOLD_ERRORS = {
    "Unfold 2-d input": lambda L: fn(L, "Unfold")(2)(L.ones(3, 3)),
    "Unfold kernel too large": lambda L: fn(L, "Unfold")(4)(L.ones(1, 2, 3, 3)),
    "Unfold negative kernel": lambda L: fn(L, "Unfold")(-1)(L.ones(1, 2, 3, 3)),
    "Unfold string kernel": lambda L: fn(L, "Unfold")("a")(L.ones(1, 2, 3, 3)),
    "Fold blocks": lambda L: fn(L, "Fold")(3, 2)(L.ones(1, 8, 5)),
    "Fold rows": lambda L: fn(L, "Fold")(3, 2)(L.ones(1, 7, 4)),
    "Fold string size": lambda L: fn(L, "Fold")("a", 2)(L.ones(1, 8, 4)),
    "Fold 4-d input": lambda L: fn(L, "Fold")(3, 2)(L.ones(1, 1, 8, 4)),
}


@pytest.mark.parametrize("name", list(FOLD_ERRORS))
def test_fold_errors_match_torch(name):
    assert_same_class_as_torch(name, FOLD_ERRORS[name])


# -- channel_shuffle -------------------------------------------------------------------------------------


@settings(max_examples=20, deadline=None)
@given(n=st.integers(0, 2), groups=st.integers(1, 4), per_group=st.integers(1, 3),
       rest=st.lists(st.integers(1, 3), min_size=1, max_size=3), seed=st.integers(0, 99))
def test_channel_shuffle_matches_torch(n, groups, per_group, rest, seed):
    x = rng(seed).normal(size=(n, groups * per_group, *rest))
    run_both(lambda L, F, t: fn(L, "channel_shuffle")(t, groups), x)
    assert_close(channel_shuffle(mg.tensor(x), groups), torch.channel_shuffle(torch.tensor(x), groups))


def test_channel_shuffle_keeps_dtype_and_returns_a_new_tensor():
    x = np.arange(24).reshape(1, 6, 2, 2)
    for array in (x, x % 2 == 0, x.astype(np.float32)):
        for groups in (1, 2, 3, 6):
            assert_close(channel_shuffle(mg.tensor(array), groups), torch.channel_shuffle(torch.tensor(array), groups))
    assert channel_shuffle(mg.ones(2, 0, 3), 2).shape == (2, 0, 3)  # no channels (PyTorch's backward fails there)
    for groups in (1, 6):  # the identity permutations are copies too
        t = mg.tensor(x)
        out = channel_shuffle(t, groups)
        out[0, 0, 0, 0] = 100
        assert t[0, 0, 0, 0].item() == 0
    layer = ChannelShuffle(3)
    assert repr(layer) == repr(torch.nn.ChannelShuffle(3))
    assert_close(layer(mg.tensor(x)), torch.nn.ChannelShuffle(3)(torch.tensor(x)))


CHANNEL_SHUFFLE_ERRORS = {
    "2-d input": lambda L: fn(L, "channel_shuffle")(L.ones(2, 6), 3),
    "groups 0": lambda L: fn(L, "channel_shuffle")(L.ones(1, 6, 2), 0),
    "negative groups": lambda L: fn(L, "channel_shuffle")(L.ones(1, 6, 2), -2),
    "not divisible": lambda L: fn(L, "channel_shuffle")(L.ones(1, 6, 2), 4),
    "float groups": lambda L: fn(L, "channel_shuffle")(L.ones(1, 6, 2), 2.0),
    "bool groups": lambda L: fn(L, "channel_shuffle")(L.ones(1, 6, 2), True),
    "None groups": lambda L: fn(L, "channel_shuffle")(L.ones(1, 6, 2), None),
    "list input": lambda L: fn(L, "channel_shuffle")([1.0], 2),
    "layer groups 0": lambda L: fn(L, "ChannelShuffle")(0)(L.ones(1, 6, 2)),
}


@pytest.mark.parametrize("name", list(CHANNEL_SHUFFLE_ERRORS))
def test_channel_shuffle_errors_match_torch(name):
    assert_same_class_as_torch(name, CHANNEL_SHUFFLE_ERRORS[name])


# -- rrelu ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("bounds", [(1 / 8, 1 / 3), (0.1, 0.3), (0.2, 0.2), (-0.5, 2.0)])
def test_rrelu_in_evaluation_matches_torch(bounds):
    x = np.array([-2.0, -1.0, -0.0, 0.0, 0.5, 3.0, -7.5])
    run_both(lambda L, F, t: fn(L, "rrelu")(t, *bounds), x)  # (gradient at 0 is the slope)
    run_both(lambda L, F, t: fn(L, "rrelu")(t * 1, *bounds, False, True), x)  # (in place)
    assert rrelu(mg.tensor(x, dtype=mg.float32), *bounds).dtype == mg.float32


@pytest.mark.parametrize("dtype", [mg.float32, mg.float64])
def test_rrelu_in_training_draws_slopes_and_differentiates_through_them(dtype):
    x = mg.tensor(np.concatenate([-np.linspace(0.5, 3, 500), [0.0], np.linspace(0.5, 3, 20)]), dtype=dtype,
                  requires_grad=True)
    mg.manual_seed(5)
    out = rrelu(x, 0.1, 0.4, training=True)
    assert out.dtype == dtype
    out.sum().backward()
    values, grads, inputs = to_np(out.detach()), to_np(x.grad), to_np(x.detach())
    negative = inputs < 0
    slopes = values[negative] / inputs[negative]
    assert slopes.min() >= 0.1 - 1e-6 and slopes.max() <= 0.4 + 1e-6
    assert slopes.std() > 0.05  # drawn per element, spread over the range
    np.testing.assert_allclose(grads[negative], slopes, rtol=1e-5)  # the gradient uses the drawn slopes
    assert 0.1 <= grads[inputs == 0][0] <= 0.4  # 0 draws a slope too (PyTorch's test is x <= 0)
    assert np.array_equal(values[inputs > 0], inputs[inputs > 0]) and (grads[inputs > 0] == 1).all()
    mg.manual_seed(5)
    again = rrelu(x.detach(), 0.1, 0.4, training=True)
    assert np.array_equal(to_np(again), values)
    x64 = mg.tensor([-1.0, -2.0, 3.0], dtype=mg.float64, requires_grad=True)  # not at the kink 0

    def seeded(t):  # the same slopes at every call, so finite differences see one function
        mg.manual_seed(1)
        return rrelu(t, 0.1, 0.4, True)

    assert gradcheck(seeded, [x64])


def test_rrelu_in_place_variants_and_layer():
    x = mg.tensor([-2.0, 0.0, 3.0])
    assert rrelu_(x, 0.2, 0.4) is x and x.tolist() == pytest.approx([-0.6, 0.0, 3.0])
    x = mg.tensor([-2.0, 0.0, 3.0])
    assert rrelu(x, 0.2, 0.4, False, True) is x and x.tolist() == pytest.approx([-0.6, 0.0, 3.0])
    x = mg.tensor([-2.0, -1.0, 3.0])
    rrelu_(x, 0.2, 0.4, True)
    assert -0.8 <= x[0].item() <= -0.4 and x[2].item() == 3.0
    leaf = mg.tensor([-1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf"):
        rrelu_(leaf)
    base = leaf * 2  # recorded in place: the gradient goes through the drawn slopes
    mg.manual_seed(2)
    out = rrelu(base, 0.1, 0.3, True, True)
    assert out is base
    out.sum().backward()
    slope = -out[0].item() / 2
    assert 0.1 <= slope <= 0.3 and leaf.grad.tolist() == pytest.approx([2 * slope, 2.0])
    layer = RReLU(0.1, 0.3)
    assert layer.training and repr(layer) == repr(torch.nn.RReLU(0.1, 0.3))
    assert repr(RReLU(inplace=True)) == repr(torch.nn.RReLU(inplace=True))
    layer.eval()
    assert layer(mg.tensor([-1.0])).tolist() == pytest.approx([-0.2])
    layer.train()
    assert -0.3 <= layer(mg.tensor([-1.0])).item() <= -0.1


RRELU_ERRORS = {
    "lower > upper": lambda L: fn(L, "rrelu")(L.ones(3), 0.5, 0.1),
    "lower > upper, training": lambda L: fn(L, "rrelu")(L.ones(3), 0.5, 0.1, True),
    "nan bound": lambda L: fn(L, "rrelu")(L.ones(3), math.nan, 0.1),
    "infinite bound": lambda L: fn(L, "rrelu")(L.ones(3), 0.1, math.inf, True),
    "bound overflows float32": lambda L: fn(L, "rrelu")(L.ones(3), 1e39, 1e39),
    "string bound": lambda L: fn(L, "rrelu")(L.ones(3), "a", 0.1),
    "None bound": lambda L: fn(L, "rrelu")(L.ones(3), 0.1, None),
    "1-d tensor bound": lambda L: fn(L, "rrelu")(L.ones(3), L.ones(1), 0.5),
    "int training": lambda L: fn(L, "rrelu")(L.ones(3), 0.1, 0.2, 1),
    "string training": lambda L: fn(L, "rrelu_")(L.ones(3), 0.1, 0.2, "a"),
    "integer input": lambda L: fn(L, "rrelu")(L.ones(3).long()),
    "integer input, training": lambda L: fn(L, "rrelu")(L.ones(3).long(), training=True),
    "bool input": lambda L: fn(L, "rrelu")(L.ones(3) > 0),
    "integer input in place": lambda L: fn(L, "rrelu_")(L.ones(3).long()),
    "list input": lambda L: fn(L, "rrelu")([1.0]),
    "in place on a leaf": lambda L: fn(L, "rrelu_")(L.ones(3, requires_grad=True)),
    "layer bounds": lambda L: fn(L, "RReLU")(0.5, 0.1)(L.ones(3)),
}


@pytest.mark.parametrize("name", list(RRELU_ERRORS))
def test_rrelu_errors_match_torch(name):
    assert_same_class_as_torch(name, RRELU_ERRORS[name])


# -- pdist --------------------------------------------------------------------------------------------------


P_VALUES = [2.0, 1.0, 0.0, math.inf, 0.5, 1.5, 3.0, 2]


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 6), m=st.integers(0, 4), p=st.sampled_from(P_VALUES), rounded=st.booleans(),
       seed=st.integers(0, 99))
def test_pdist_matches_torch(n, m, p, rounded, seed):
    x = rng(seed).normal(size=(n, m)) * 2
    if rounded:  # repeated rows, zero differences and tied largest differences
        x = np.round(x)
    run_both(lambda L, F, t: fn(L, "pdist")(t, p), x)


def test_pdist_gradients_at_ties_and_zeros_match_torch():
    cases = [
        [[0.0, 0.0], [1.0, 1.0], [2.0, 0.0]],  # every inf-norm pair has tied largest differences
        [[0.0, 0.0], [0.0, 0.0], [1.0, -1.0]],  # coinciding rows
        [[0.0, 0.0], [0.0, 1.0]],  # a zero difference beside a nonzero one (p < 1 too)
    ]
    for x in cases:
        for p in P_VALUES:
            run_both(lambda L, F, t: fn(L, "pdist")(t, p), x)  # noqa: B023
    x = mg.tensor(rng(3).normal(size=(4, 3)), requires_grad=True)
    for p in (2.0, 1.5, 3.0):
        assert gradcheck(lambda t: pdist(t, p), [x])  # noqa: B023


def test_pdist_dtypes_and_special_values_match_torch():
    x = rng(0).normal(size=(4, 3)).astype(np.float32)
    for p in P_VALUES:
        assert_close(pdist(mg.tensor(x), p), torch.pdist(torch.tensor(x), p), rtol=1e-5, atol=1e-6)
    special = np.array([[np.nan, 0.0], [1.0, 1.0], [np.inf, 0.0], [np.inf, 2.0]])
    with np.errstate(invalid="ignore"):
        for p in P_VALUES:
            assert_close(pdist(mg.tensor(special), p), torch.pdist(torch.tensor(special), p))
    assert pdist(mg.ones(3, 2), True).tolist() == [0.0] * 3
    assert pdist(mg.ones(0, 3)).shape == (0,)  # (PyTorch's backward crashes on no rows: compared without it)
    empty = pdist(mg.ones(1, 3, requires_grad=True))
    assert empty.shape == (0,) and empty.requires_grad


PDIST_ERRORS = {
    "1-d": lambda L: fn(L, "pdist")(L.ones(3)),
    "3-d": lambda L: fn(L, "pdist")(L.ones(2, 3, 4)),
    "0-d": lambda L: fn(L, "pdist")(L.tensor(1.0)),
    "integer input": lambda L: fn(L, "pdist")(L.ones(3, 2).long()),
    "bool input": lambda L: fn(L, "pdist")(L.ones(3, 2) > 0),
    "negative p": lambda L: fn(L, "pdist")(L.ones(3, 2), -1),
    "-inf p": lambda L: fn(L, "pdist")(L.ones(3, 2), -math.inf),
    "nan p": lambda L: fn(L, "pdist")(L.ones(3, 2), math.nan),
    "string p": lambda L: fn(L, "pdist")(L.ones(3, 2), "a"),
    "None p": lambda L: fn(L, "pdist")(L.ones(3, 2), None),
    "complex p": lambda L: fn(L, "pdist")(L.ones(3, 2), 1j),
    "1-d with negative p": lambda L: fn(L, "pdist")(L.ones(3), -1),
    "integer with negative p": lambda L: fn(L, "pdist")(L.ones(3, 2).long(), -1),
    "list input": lambda L: fn(L, "pdist")([[1.0, 2.0]]),
}


@pytest.mark.parametrize("name", list(PDIST_ERRORS))
def test_pdist_errors_match_torch(name):
    assert_same_class_as_torch(name, PDIST_ERRORS[name])


# -- gumbel_softmax ---------------------------------------------------------------------------------------------


def test_gumbel_softmax_samples_follow_the_softmax():
    logits = mg.tensor(np.log([[0.1, 0.2, 0.7]] * 4000), dtype=mg.float64)
    mg.manual_seed(0)
    hard = to_np(gumbel_softmax(logits, hard=True))
    assert set(np.unique(hard)) == {0.0, 1.0} and (hard.sum(1) == 1).all()
    np.testing.assert_allclose(hard.mean(0), [0.1, 0.2, 0.7], atol=0.03)  # the Gumbel-max trick's law
    soft = to_np(gumbel_softmax(logits, tau=0.5))
    np.testing.assert_allclose(soft.sum(1), 1.0, rtol=1e-12)
    assert (soft > 0).all() and soft.std(0).min() > 0.1  # random, not the softmax of the logits itself
    mg.manual_seed(0)
    assert np.array_equal(to_np(gumbel_softmax(logits, hard=True)), hard)  # reproducible


def test_gumbel_softmax_hard_is_straight_through():
    x = rng(1).normal(size=(3, 5))
    for dim, tau in ((-1, 1.0), (0, 0.3)):
        a, b = mg.tensor(x, requires_grad=True), mg.tensor(x, requires_grad=True)
        weights = mg.tensor(rng(2).normal(size=(3, 5)))
        mg.manual_seed(4)
        hard = gumbel_softmax(a, tau=tau, hard=True, dim=dim)
        mg.manual_seed(4)
        soft = gumbel_softmax(b, tau=tau, dim=dim)
        expected_hard = np.zeros_like(x)
        winners = np.expand_dims(np.argmax(to_np(soft.detach()), axis=dim), dim)
        np.put_along_axis(expected_hard, winners, 1.0, axis=dim)
        np.testing.assert_allclose(to_np(hard.detach()), expected_hard, atol=1e-7)
        (hard * weights).sum().backward()
        (soft * weights).sum().backward()
        np.testing.assert_allclose(to_np(a.grad), to_np(b.grad), rtol=1e-9, atol=1e-12)
        assert hard.dtype == mg.float64


def test_gumbel_softmax_shapes_dtypes_and_eps_warning_match_torch():
    shapes = [((), -1, False), ((), 0, True), ((0, 3), 1, True), ((3, 0), 1, False), ((2, 3, 4), 1, True)]
    for shape, dim, hard in shapes:
        for dtype in (np.float32, np.float64, np.float16):
            x = np.zeros(shape, dtype=dtype)
            mine, theirs = gumbel_softmax(mg.tensor(x), hard=hard, dim=dim), torch.nn.functional.gumbel_softmax(
                torch.tensor(x), hard=hard, dim=dim)
            assert mine.shape == tuple(theirs.shape) and to_np(mine).dtype == to_np(theirs).dtype
    for eps, warns in ((1e-10, False), (1e-3, True)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            gumbel_softmax(mg.ones(2, 3), eps=eps)
        assert bool(caught) is warns and all("eps" in str(w.message) for w in caught)
    assert_close(gumbel_softmax(mg.tensor([[0.0, 1000.0]]), hard=True), torch.tensor([[0.0, 1.0]]))
    for tau in (mg.tensor(2.0, dtype=mg.float64), mg.ones(3, dtype=mg.float64)):  # a 0-d tensor does not promote
        expected = torch.nn.functional.gumbel_softmax(torch.ones(2, 3), tau=torch.tensor(to_np(tau))).dtype
        assert to_np(gumbel_softmax(mg.ones(2, 3), tau=tau)).dtype == to_np(torch.ones(1, dtype=expected)).dtype


GUMBEL_ERRORS = {
    "integer logits": lambda L: fn(L, "gumbel_softmax")(L.ones(2, 3).long()),
    "bool logits": lambda L: fn(L, "gumbel_softmax")(L.ones(2, 3) > 0),
    "dim out of range": lambda L: fn(L, "gumbel_softmax")(L.ones(2, 3), dim=2),
    "dim out of range, hard": lambda L: fn(L, "gumbel_softmax")(L.ones(2, 3), hard=True, dim=-3),
    "float dim": lambda L: fn(L, "gumbel_softmax")(L.ones(2, 3), dim=1.5),
    "None dim": lambda L: fn(L, "gumbel_softmax")(L.ones(2, 3), dim=None),
    "string tau": lambda L: fn(L, "gumbel_softmax")(L.ones(2, 3), tau="a"),
    "None tau": lambda L: fn(L, "gumbel_softmax")(L.ones(2, 3), tau=None),
    "hard over no categories": lambda L: fn(L, "gumbel_softmax")(L.ones(3, 0), hard=True),
    "list logits": lambda L: fn(L, "gumbel_softmax")([1.0, 2.0]),
}


@pytest.mark.parametrize("name", list(GUMBEL_ERRORS))
def test_gumbel_softmax_errors_match_torch(name):
    assert_same_class_as_torch(name, GUMBEL_ERRORS[name])
