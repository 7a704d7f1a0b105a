"""``F.interpolate``, ``nn.Upsample`` (and the ``Upsampling*2d`` shorthands), ``F.pixel_shuffle``,
``F.pixel_unshuffle`` and their modules against PyTorch.

Interpolation is compared over random modes, ranks, sizes and scale
factors (fractional ones included), in float32 and float64: the values
always, the gradients where PyTorch's backward agrees with its own forward.
With a scale factor that keeps a size or doubles it, PyTorch's backward of
1-D/3-D nearest and of bicubic interpolation uses other source positions
than its forward (``torch.autograd.gradcheck`` fails on it); there minigrad's
gradient is checked by gradcheck instead (it is the derivative of the
forward, which matches PyTorch's).
"""

# ruff: noqa: N803  (programs take the functional module as ``F``, as in ``import ... as F``)
from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import nn as mnn

LIBS = {"minigrad": (mg, mnn, F), "torch": (torch, torch.nn, torch.nn.functional)}
RANK = {"linear": 3, "bilinear": 4, "bicubic": 4, "trilinear": 5}
INTERPOLATING = ("linear", "bilinear", "bicubic", "trilinear")


@st.composite
def interpolations(draw):
    """(mode, input shape, keyword arguments of interpolate, dtype)."""
    mode = draw(st.sampled_from(["nearest", "nearest-exact", "area", *INTERPOLATING]))
    rank = RANK.get(mode) or draw(st.integers(3, 4 if mode == "area" else 5))
    side = {3: 6, 4: 4, 5: 3}[rank]
    shape = (draw(st.integers(1, 2)), draw(st.integers(1, 2))) + tuple(
        draw(st.lists(st.integers(1, side), min_size=rank - 2, max_size=rank - 2)))
    if draw(st.booleans()):
        size = tuple(draw(st.lists(st.integers(1, 2 * side), min_size=rank - 2, max_size=rank - 2)))
        kwargs = {"size": size if draw(st.booleans()) else size[0]}
    else:
        scales = [draw(st.sampled_from([0.5, 0.75, 1.0, 1.3, 1.5, 2.0, 2.1, 2.5, 3.0])) for _ in range(rank - 2)]
        if not draw(st.booleans()):
            scales = [scales[0]] * (rank - 2)
        if min(int(n * s) for n, s in zip(shape[2:], scales)) < 1:  # an empty output: an error, tested apart
            scales = [2.0] * (rank - 2)
        kwargs = {"scale_factor": tuple(scales) if len(set(scales)) > 1 else scales[0]}
        if draw(st.booleans()):
            kwargs["recompute_scale_factor"] = True
    if mode in INTERPOLATING:
        kwargs["align_corners"] = draw(st.sampled_from([None, False, True]))
    return mode, shape, kwargs, draw(st.sampled_from([np.float32, np.float64]))


def _torch_backward_is_consistent(mode, shape, kwargs) -> bool:
    """False where PyTorch's backward uses other positions than its forward (see the module docstring)."""
    factor = kwargs.get("scale_factor")
    if factor is None or kwargs.get("recompute_scale_factor"):
        return True
    factors = factor if isinstance(factor, tuple) else (factor,) * (len(shape) - 2)
    suspicious = any(int(n * f) in (n, 2 * n) and f not in (1.0, 2.0) for n, f in zip(shape[2:], factors))
    return not (suspicious and (mode == "bicubic" or (mode == "nearest" and len(shape) != 4)))


@settings(max_examples=25, deadline=None)
@given(interpolations())
def test_interpolate_matches_pytorch(example):
    mode, shape, kwargs, dtype = example
    x = np.random.default_rng(0).standard_normal(shape).astype(dtype)
    xm, xt = mg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    out = F.interpolate(xm, mode=mode, **kwargs)
    expected = torch.nn.functional.interpolate(xt, mode=mode, **kwargs)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    assert out.dtype == dtype and out.shape == tuple(expected.shape)
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=tol, atol=tol)
    if 0 in out.shape:
        return
    g = np.random.default_rng(1).standard_normal(out.shape).astype(dtype)
    out.backward(mg.tensor(g))
    if _torch_backward_is_consistent(mode, shape, kwargs):
        expected.backward(torch.tensor(g))
        np.testing.assert_allclose(xm.grad.numpy(), xt.grad.numpy(), rtol=tol, atol=tol)
    else:
        x64 = mg.tensor(x.astype(np.float64), requires_grad=True)
        assert mg.autograd.gradcheck(lambda t: F.interpolate(t, mode=mode, **kwargs), (x64,))


def test_pytorch_backward_disagrees_with_its_forward_where_we_skip_it():
    """The reason for ``_torch_backward_is_consistent``: if PyTorch fixes this, the skip can go."""
    x = torch.randn(1, 1, 5, dtype=torch.float64, requires_grad=True)
    with pytest.raises(RuntimeError, match="Jacobian mismatch"):
        torch.autograd.gradcheck(lambda t: torch.nn.functional.interpolate(t, scale_factor=2.1), (x,))


def test_upsample_modules_match_pytorch():
    x = np.random.default_rng(0).standard_normal((2, 3, 4, 5))
    for build in (
        lambda nn: nn.Upsample(scale_factor=2),
        lambda nn: nn.Upsample(size=(3, 7), mode="bilinear", align_corners=True),
        lambda nn: nn.Upsample(scale_factor=(1.5, 2), mode="bicubic"),
        lambda nn: nn.Upsample(size=6, mode="nearest-exact"),
        lambda nn: nn.UpsamplingNearest2d(scale_factor=3),
        lambda nn: nn.UpsamplingBilinear2d(size=(5, 5)),
        lambda nn: nn.PixelShuffle(2),
        lambda nn: nn.PixelUnshuffle(1),
    ):
        mine, theirs = build(mnn), build(torch.nn)
        assert repr(mine) == repr(theirs)
        xx = x.reshape(2, 12, 1, 5) if isinstance(mine, mnn.PixelShuffle) else x
        np.testing.assert_allclose(mine(mg.tensor(xx)).numpy(), theirs(torch.tensor(xx)).numpy(), rtol=1e-12)
    assert repr(mnn.Upsample(scale_factor=2, mode="linear").scale_factor) == "2.0"


@settings(max_examples=15, deadline=None)
@given(st.lists(st.integers(1, 2), max_size=2), st.integers(1, 3), st.integers(1, 2), st.integers(1, 3),
       st.integers(1, 3))
def test_pixel_shuffle_round_trip_matches_pytorch(lead, r, c, h, w):
    x = np.random.default_rng(0).standard_normal((*lead, c * r * r, h, w))
    xm, xt = mg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    out, expected = F.pixel_shuffle(xm, r), torch.nn.functional.pixel_shuffle(xt, r)
    np.testing.assert_array_equal(out.detach().numpy(), expected.detach().numpy())
    back = F.pixel_unshuffle(out, r)
    np.testing.assert_array_equal(back.detach().numpy(), x)
    (out * mg.tensor(np.arange(out.numel()).reshape(out.shape))).sum().backward()
    (expected * torch.arange(expected.numel()).reshape(expected.shape)).sum().backward()
    np.testing.assert_array_equal(xm.grad.numpy(), xt.grad.numpy())


def test_super_resolution_head():
    """pytorch/examples' super_resolution model: convolutions then a pixel shuffle, values and gradients."""

    def build(nn):
        return nn.Sequential(nn.Conv2d(1, 8, 5, 1, 2), nn.ReLU(), nn.Conv2d(8, 9, 3, 1, 1), nn.PixelShuffle(3))

    theirs = build(torch.nn).double()
    mine = build(mnn).double()
    mine.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((2, 1, 4, 5))
    out, expected = mine(mg.tensor(x)), theirs(torch.tensor(x))
    assert out.shape == (2, 1, 12, 15)
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=1e-10)
    out.sum().backward()
    expected.sum().backward()
    np.testing.assert_allclose(mine[0].weight.grad.numpy(), theirs[0].weight.grad.numpy(), rtol=1e-10)


ERRORS = [
    lambda lib, nn, F: F.interpolate(lib.zeros(1, 2, 3, 4)),
    lambda lib, nn, F: F.interpolate(lib.zeros(1, 2, 3, 4), size=3, scale_factor=2),
    lambda lib, nn, F: F.interpolate(lib.zeros(1, 2, 3, 4), size=(3, 4, 5)),
    lambda lib, nn, F: F.interpolate(lib.zeros(1, 2, 3, 4), scale_factor=(3, 4, 5)),
    lambda lib, nn, F: F.interpolate(lib.zeros(1, 2, 3, 4), size=3, align_corners=True),
    lambda lib, nn, F: F.interpolate(lib.zeros(2, 3, 4), size=3, mode="bilinear"),
    lambda lib, nn, F: F.interpolate(lib.zeros(1, 2, 3, 4), size=3, mode="linear"),
    lambda lib, nn, F: F.interpolate(lib.zeros(1, 2, 3, 4), size=3, mode="foo"),
    lambda lib, nn, F: F.interpolate(lib.zeros(3, 4), size=3),
    lambda lib, nn, F: F.interpolate(lib.zeros(1, 2, 3, 4), size=0),
    lambda lib, nn, F: F.interpolate(lib.zeros(1, 2, 3, 4), scale_factor=0.1),
    lambda lib, nn, F: F.interpolate(lib.zeros(1, 2, 3, 4, dtype=lib.int64), size=4, mode="bilinear"),
    lambda lib, nn, F: F.interpolate(lib.zeros(1, 2, 3, 4), size=4, recompute_scale_factor=True),
    lambda lib, nn, F: F.pixel_shuffle(lib.zeros(1, 2, 3, 4), 2),
    lambda lib, nn, F: F.pixel_shuffle(lib.zeros(3, 4), 2),
    lambda lib, nn, F: F.pixel_shuffle(lib.zeros(2, 8, 3, 3), 0),
    lambda lib, nn, F: F.pixel_unshuffle(lib.zeros(1, 2, 3, 4), 2),
    lambda lib, nn, F: F.pixel_unshuffle(lib.zeros(1, 2, 4, 3), 2),
    lambda lib, nn, F: F.pixel_unshuffle(lib.zeros(2, 8, 4, 4), 0),
    lambda lib, nn, F: nn.Upsample(scale_factor=2, mode="bilinear")(lib.zeros(2, 3, 4)),
]


@pytest.mark.parametrize("program", ERRORS, ids=range(len(ERRORS)))
def test_errors_match_pytorch(program):
    with pytest.raises(Exception) as expected:
        program(*LIBS["torch"])
    with pytest.raises(expected.type):
        program(*LIBS["minigrad"])
