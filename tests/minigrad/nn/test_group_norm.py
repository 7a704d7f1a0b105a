"""``GroupNorm`` and ``InstanceNorm1d/2d/3d`` (and ``F.group_norm``, ``F.instance_norm``) against PyTorch.

Modules are built with both libraries and run on the same data over several
training steps and then in evaluation mode: outputs, input and parameter
gradients, running statistics, ``state_dict`` keys, ``repr``, warnings and
exception types must agree. Gradchecks and oracle cases of the functions
live in ``tests/minigrad/ops/cases_group_norm.py``.
"""

# ruff: noqa: N803  (programs take the functional module as ``F``, as in ``import ... as F``)
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import nn as mnn

LIBS = {"minigrad": (mg, mnn, F), "torch": (torch, torch.nn, torch.nn.functional)}


def _steps(build, shape, steps=3, eval_steps=1):
    """Train-mode steps then eval-mode steps on fresh data; compare everything after each."""
    theirs = build(torch.nn).double()
    mine = build(mnn).double()
    assert list(mine.state_dict()) == list(theirs.state_dict())
    assert repr(mine) == repr(theirs)
    rng = np.random.default_rng(0)
    with torch.no_grad():
        for p in theirs.parameters():  # not the default ones and zeros, so a swapped weight and bias shows
            p.copy_(torch.tensor(rng.standard_normal(tuple(p.shape))))
    mine.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    for step in range(steps + eval_steps):
        if step == steps:
            mine.eval()
            theirs.eval()
        x = rng.standard_normal(shape) * 2 + 1
        xm, xt = mg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        out, expected = mine(xm), theirs(xt)
        np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=1e-10, atol=1e-12)
        g = rng.standard_normal(shape)
        out.backward(mg.tensor(g))
        expected.backward(torch.tensor(g))
        np.testing.assert_allclose(xm.grad.numpy(), xt.grad.numpy(), rtol=1e-9, atol=1e-12)
        for (name, p), (_, q) in zip(mine.named_parameters(), theirs.named_parameters()):
            np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-9, atol=1e-12, err_msg=name)
        for (name, b), (_, c) in zip(mine.named_buffers(), theirs.named_buffers()):
            np.testing.assert_allclose(b.numpy(), c.numpy(), rtol=1e-12, atol=1e-14, err_msg=name)


MODULES = [
    (lambda nn: nn.GroupNorm(2, 4), (3, 4, 5)),
    (lambda nn: nn.GroupNorm(3, 6, eps=1e-3), (2, 6, 2, 3)),
    (lambda nn: nn.GroupNorm(1, 3, affine=False), (2, 3, 4)),
    (lambda nn: nn.GroupNorm(4, 4, bias=False), (2, 4)),
    (lambda nn: nn.GroupNorm(2, 2), (2, 2, 1, 2, 3)),
    (lambda nn: nn.InstanceNorm1d(3), (2, 3, 5)),
    (lambda nn: nn.InstanceNorm1d(3, affine=True), (3, 4)),
    (lambda nn: nn.InstanceNorm1d(3, track_running_stats=True), (2, 3, 5)),
    (lambda nn: nn.InstanceNorm2d(2, affine=True, track_running_stats=True, momentum=0.3), (3, 2, 3, 4)),
    (lambda nn: nn.InstanceNorm2d(2, affine=True, track_running_stats=True), (2, 3, 4)),
    (lambda nn: nn.InstanceNorm2d(3, track_running_stats=True, momentum=None), (2, 3, 2, 2)),
    (lambda nn: nn.InstanceNorm3d(2, affine=True), (2, 2, 2, 3, 2)),
]


@pytest.mark.parametrize(("build", "shape"), MODULES, ids=range(len(MODULES)))
def test_module_matches_pytorch(build, shape):
    _steps(build, shape)


@settings(max_examples=15, deadline=None)
@given(st.sampled_from([1, 2, 3, 6]), st.integers(1, 3), st.lists(st.integers(1, 3), max_size=2),
       st.booleans())
def test_group_norm_matches_pytorch_over_shapes(groups, n, spatial, affine):
    if n * int(np.prod(spatial)) == 1:
        n = 2
    _steps(lambda nn: nn.GroupNorm(groups, 6, affine=affine), (n, 6, *spatial), steps=1, eval_steps=0)


def test_instance_norm_warns_when_channels_differ_without_affine():
    x = np.zeros((2, 4, 5))
    with pytest.warns(UserWarning, match="does not match num_features"):
        mnn.InstanceNorm1d(3)(mg.tensor(x))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mnn.InstanceNorm1d(4)(mg.tensor(x))


def test_instance_norm_leaves_the_batch_counter_alone():
    for lib, nn, _ in LIBS.values():
        m = nn.InstanceNorm1d(2, track_running_stats=True)
        m(lib.ones(2, 2, 3))
        assert int(m.num_batches_tracked) == 0


def _x(lib, *shape, dtype=None):
    return lib.zeros(*shape, dtype=dtype or lib.float32)


ERRORS = [
    lambda lib, nn, F: nn.GroupNorm(3, 4),
    lambda lib, nn, F: F.group_norm(_x(lib, 2, 4, 3), 3),
    lambda lib, nn, F: F.group_norm(_x(lib, 4), 2),
    lambda lib, nn, F: F.group_norm(_x(lib, 1, 2), 2),
    lambda lib, nn, F: F.group_norm(_x(lib, 1, 3, 1), 3),
    lambda lib, nn, F: F.group_norm(_x(lib, 2, 4, 3), 2, _x(lib, 3)),
    lambda lib, nn, F: F.group_norm(_x(lib, 2, 4, 3), 2, None, _x(lib, 5)),
    lambda lib, nn, F: F.group_norm(_x(lib, 2, 4, 3, dtype=lib.int64), 2),
    lambda lib, nn, F: nn.InstanceNorm1d(3, affine=True)(_x(lib, 2, 4, 5)),
    lambda lib, nn, F: nn.InstanceNorm1d(3)(_x(lib, 2, 3, 1)),
    lambda lib, nn, F: nn.InstanceNorm1d(3)(_x(lib, 3)),
    lambda lib, nn, F: nn.InstanceNorm2d(3)(_x(lib, 3, 4)),
    lambda lib, nn, F: F.instance_norm(_x(lib, 2, 3, 4), use_input_stats=False),
    lambda lib, nn, F: F.instance_norm(_x(lib, 2, 3)),
    lambda lib, nn, F: F.instance_norm(_x(lib, 2, 3, 4), weight=_x(lib, 4)),
    lambda lib, nn, F: F.instance_norm(_x(lib, 2, 3, 4), _x(lib, 2), _x(lib, 3)),
]


@pytest.mark.parametrize("program", ERRORS, ids=range(len(ERRORS)))
def test_errors_match_pytorch(program):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as expected:
            program(*LIBS["torch"])
        with pytest.raises(expected.type):
            program(*LIBS["minigrad"])
