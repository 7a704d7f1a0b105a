"""``Conv1d``, ``ConvTranspose1d``, ``ConvTranspose2d`` (and their functions) against PyTorch.

Modules are built with both libraries, minigrad's loaded with PyTorch's
weights, and run on the same data: outputs, input and parameter gradients
(float64), ``state_dict`` keys, ``repr`` and exception types must agree; the
default initialization must draw from PyTorch's distributions. A DCGAN
generator and discriminator (pytorch/examples) run end to end. The
functions' gradchecks and oracle cases over random geometries live in
``tests/minigrad/ops/cases_conv_transpose.py``.
"""

# ruff: noqa: N803  (programs take the functional module as ``F``, as in ``import ... as F``)
from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import nn as mnn

LIBS = {"minigrad": (mg, mnn, F), "torch": (torch, torch.nn, torch.nn.functional)}


def _copy(module, torch_module):
    module.load_state_dict({k: v.detach().numpy() for k, v in torch_module.state_dict().items()})
    return module


def _run_both(build, shape, seed=0, call=lambda m, x: m(x), rtol=1e-10):
    """Build the module in both libraries (float64), share the weights, compare outputs and gradients."""
    theirs = build(torch.nn).double()
    mine = _copy(build(mnn).double(), theirs)
    x = np.random.default_rng(seed).standard_normal(shape)
    xm, xt = mg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    out, expected = call(mine, xm), call(theirs, xt)
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=rtol, atol=1e-12)
    g = np.random.default_rng(seed + 1).standard_normal(tuple(expected.shape))
    out.backward(mg.tensor(g))
    expected.backward(torch.tensor(g))
    np.testing.assert_allclose(xm.grad.numpy(), xt.grad.numpy(), rtol=rtol, atol=1e-12)
    for (name, p), (_, q) in zip(mine.named_parameters(), theirs.named_parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=rtol, atol=1e-12, err_msg=name)
    assert list(mine.state_dict()) == list(theirs.state_dict())
    return out


MODULES = [
    (lambda nn: nn.Conv1d(4, 6, 3), (2, 4, 7)),
    (lambda nn: nn.Conv1d(4, 6, 3, stride=2, padding=2, dilation=2, groups=2, bias=False), (2, 4, 9)),
    (lambda nn: nn.Conv1d(3, 2, 4, padding="same"), (2, 3, 6)),
    (lambda nn: nn.Conv1d(3, 2, 3, padding="valid"), (3, 5)),
    (lambda nn: nn.Conv1d(2, 2, 3, padding=2, padding_mode="reflect"), (1, 2, 5)),
    (lambda nn: nn.Conv1d(2, 2, 3, padding=1, padding_mode="replicate"), (1, 2, 5)),
    (lambda nn: nn.Conv1d(2, 2, 3, padding=2, padding_mode="circular"), (1, 2, 5)),
    (lambda nn: nn.Conv1d(2, 3, 4, padding="same", padding_mode="reflect"), (2, 2, 6)),
    (lambda nn: nn.ConvTranspose1d(4, 6, 3), (2, 4, 5)),
    (lambda nn: nn.ConvTranspose1d(4, 6, 3, stride=3, padding=1, output_padding=2, groups=2, dilation=2), (2, 4, 5)),
    (lambda nn: nn.ConvTranspose1d(2, 3, 2, bias=False), (2, 4)),
    (lambda nn: nn.ConvTranspose2d(100, 8, 4, 1, 0, bias=False), (2, 100, 1, 1)),
    (lambda nn: nn.ConvTranspose2d(8, 4, 4, 2, 1, bias=False), (2, 8, 4, 4)),
    (lambda nn: nn.ConvTranspose2d(4, 6, (3, 2), stride=(2, 3), padding=(1, 0), output_padding=(1, 2),
                                   groups=2, dilation=(1, 2)), (2, 4, 3, 4)),
    (lambda nn: nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1, output_padding=1), (2, 4, 3)),
]


@pytest.mark.filterwarnings("ignore:Using padding='same'")  # PyTorch's note on its own speed
@pytest.mark.parametrize(("build", "shape"), MODULES, ids=range(len(MODULES)))
def test_module_matches_pytorch(build, shape):
    _run_both(build, shape)
    assert repr(build(mnn)) == repr(build(torch.nn))


@pytest.mark.parametrize("output_size", [(9, 9), [2, 3, 10, 10], (10, 9)])
def test_conv_transpose2d_output_size_picks_the_output_padding(output_size):
    out = _run_both(lambda nn: nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1), (2, 3, 5, 5),
                    call=lambda m, x: m(x, output_size=output_size))
    assert out.shape[-2:] == tuple(output_size[-2:])


def test_conv_transpose1d_output_size():
    _run_both(lambda nn: nn.ConvTranspose1d(3, 2, 3, stride=3), (2, 3, 4), call=lambda m, x: m(x, output_size=[12]))


@settings(max_examples=15, deadline=None)
@given(st.data())
def test_conv1d_matches_pytorch_over_random_geometries(data):
    groups = data.draw(st.integers(1, 2))
    c_in, c_out = groups * data.draw(st.integers(1, 2)), groups * data.draw(st.integers(1, 2))
    k, stride, dilation = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3)), data.draw(st.integers(1, 2))
    padding = data.draw(st.integers(0, 2))
    length = data.draw(st.integers(max(1, dilation * (k - 1) + 1 - 2 * padding), 8))
    mode = data.draw(st.sampled_from(["zeros", "reflect", "replicate", "circular"]))
    if mode == "reflect":
        length = max(length, padding + 1)
    if mode == "circular":
        length = max(length, padding)
    _run_both(lambda nn: nn.Conv1d(c_in, c_out, k, stride, padding, dilation, groups, padding_mode=mode),
              (data.draw(st.integers(1, 2)), c_in, length))


def _dcgan(nn, nz=8, ngf=4, ndf=4, nc=3):
    """pytorch/examples' DCGAN generator and discriminator (64x64 images), at small widths."""
    generator = nn.Sequential(
        nn.ConvTranspose2d(nz, ngf * 8, 4, 1, 0, bias=False), nn.BatchNorm2d(ngf * 8), nn.ReLU(True),
        nn.ConvTranspose2d(ngf * 8, ngf * 4, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf * 4), nn.ReLU(True),
        nn.ConvTranspose2d(ngf * 4, ngf * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf * 2), nn.ReLU(True),
        nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf), nn.ReLU(True),
        nn.ConvTranspose2d(ngf, nc, 4, 2, 1, bias=False), nn.Tanh(),
    )
    discriminator = nn.Sequential(
        nn.Conv2d(nc, ndf, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, inplace=True),
        nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(ndf * 2), nn.LeakyReLU(0.2, inplace=True),
        nn.Conv2d(ndf * 2, ndf * 4, 4, 2, 1, bias=False), nn.BatchNorm2d(ndf * 4), nn.LeakyReLU(0.2, inplace=True),
        nn.Conv2d(ndf * 4, ndf * 8, 4, 2, 1, bias=False), nn.BatchNorm2d(ndf * 8), nn.LeakyReLU(0.2, inplace=True),
        nn.Conv2d(ndf * 8, 1, 4, 1, 0, bias=False), nn.Sigmoid(),
    )
    return nn.Sequential(generator, discriminator)


def test_dcgan_generator_and_discriminator_match_pytorch():
    out = _run_both(_dcgan, (3, 8, 1, 1), rtol=1e-9)
    assert out.shape == (3, 1, 1, 1)
    generator = _dcgan(mnn)[0]
    assert generator(mg.randn(2, 8, 1, 1)).shape == (2, 3, 64, 64)


@pytest.mark.parametrize("build", [
    lambda nn: nn.ConvTranspose2d(16, 8, 3),
    lambda nn: nn.ConvTranspose2d(16, 8, (2, 5), groups=4),
    lambda nn: nn.ConvTranspose1d(6, 10, 3, groups=2),
    lambda nn: nn.Conv1d(12, 8, 5, groups=4),
])
def test_default_initialization_is_pytorchs(build):
    """kaiming_uniform_(a=sqrt(5)) on the fan in (the weight's dimension 1 times the kernel): U(-b, b),
    b = 1/sqrt(fan_in); the bias U(-b, b) too."""
    mg.manual_seed(0)
    module = build(mnn)
    fan_in = module.weight.shape[1] * math.prod(module.weight.shape[2:])
    bound = 1 / math.sqrt(fan_in)
    for values in (module.weight.detach().numpy(), module.bias.detach().numpy()):
        assert values.dtype == np.float32
        assert np.abs(values).max() <= bound
    weights = module.weight.detach().numpy().ravel()
    if weights.size >= 200:  # uniform: spread over the whole interval, mean near 0
        assert np.abs(weights).max() > 0.9 * bound and abs(weights.mean()) < 0.2 * bound
    assert tuple(module.weight.shape) == tuple(build(torch.nn).weight.shape)
    module.reset_parameters()


def _x(lib, *shape):
    return lib.zeros(*shape, dtype=lib.float64)


ERRORS = [
    lambda lib, nn, F: F.conv_transpose2d(_x(lib, 1, 2, 3), _x(lib, 2, 3, 2, 2)),  # 3D weight-rank mismatch
    lambda lib, nn, F: F.conv_transpose2d(_x(lib, 3, 3), _x(lib, 3, 2, 2, 2)),
    lambda lib, nn, F: F.conv_transpose2d(_x(lib, 1, 3, 3, 3), _x(lib, 2, 2, 2, 2)),
    lambda lib, nn, F: F.conv_transpose2d(_x(lib, 1, 3, 3, 3), _x(lib, 3, 2, 2, 2), groups=2),
    lambda lib, nn, F: F.conv_transpose2d(_x(lib, 1, 2, 3, 3), _x(lib, 2, 2, 2, 2), stride=2, output_padding=2),
    lambda lib, nn, F: F.conv_transpose2d(_x(lib, 1, 2, 1, 1), _x(lib, 2, 2, 1, 1), padding=1),
    lambda lib, nn, F: F.conv_transpose2d(_x(lib, 1, 2, 3, 3), _x(lib, 2, 2, 2, 2), _x(lib, 3)),
    lambda lib, nn, F: F.conv_transpose2d(_x(lib, 1, 2, 3, 3), lib.zeros(2, 2, 2, 2)),
    lambda lib, nn, F: F.conv_transpose1d(_x(lib, 1, 2, 3, 3), _x(lib, 2, 2, 2)),
    lambda lib, nn, F: F.conv_transpose1d(_x(lib, 1, 2, 3), _x(lib, 2, 2, 2), stride=0),
    lambda lib, nn, F: F.conv1d(_x(lib, 1, 2, 3, 3), _x(lib, 2, 2, 2)),
    lambda lib, nn, F: F.conv1d(_x(lib, 1, 3, 5), _x(lib, 2, 2, 2)),
    lambda lib, nn, F: F.conv1d(_x(lib, 1, 2, 2), _x(lib, 2, 2, 3)),
    lambda lib, nn, F: F.conv1d(_x(lib, 1, 2, 5), _x(lib, 2, 2, 3), padding="full"),
    lambda lib, nn, F: F.conv1d(_x(lib, 1, 2, 5), _x(lib, 2, 2, 3), padding="same", stride=2),
    lambda lib, nn, F: F.conv1d(_x(lib, 1, 2, 5), _x(lib, 2, 2, 3), _x(lib, 3)),
    lambda lib, nn, F: nn.Conv1d(3, 2, 3, groups=2),
    lambda lib, nn, F: nn.Conv1d(2, 3, 3, groups=2),
    lambda lib, nn, F: nn.Conv1d(2, 2, 3, groups=0),
    lambda lib, nn, F: nn.Conv1d(2, 2, 3, padding_mode="mirror"),
    lambda lib, nn, F: nn.Conv1d(2, 2, 3, stride=2, padding="same"),
    lambda lib, nn, F: nn.ConvTranspose2d(2, 2, 3, padding_mode="reflect"),
    lambda lib, nn, F: nn.ConvTranspose2d(3, 2, 3, groups=2),
    lambda lib, nn, F: nn.ConvTranspose2d(2, 2, 3, stride=2)(lib.zeros(1, 2, 4, 4), output_size=(20, 20)),
    lambda lib, nn, F: nn.ConvTranspose2d(2, 2, 3, stride=2)(lib.zeros(1, 2, 4, 4), output_size=(9,)),
]


@pytest.mark.parametrize("program", ERRORS, ids=range(len(ERRORS)))
def test_errors_match_pytorch(program):
    with pytest.raises(Exception) as expected:
        program(*LIBS["torch"])
    with pytest.raises(expected.type):
        program(*LIBS["minigrad"])
