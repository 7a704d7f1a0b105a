"""GLU, PReLU and Softmax2d against PyTorch: values, float64 gradients (the PReLU slope's too), errors, modules."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad as mg
from minigrad import nn
from tests.minigrad.nn.torch_compare import assert_close, run_both, same_error


def rng(seed=0):
    return np.random.default_rng(seed)


@settings(max_examples=20, deadline=None)
@given(sizes=st.lists(st.integers(1, 3), min_size=1, max_size=3), data=st.data(), seed=st.integers(0, 99))
def test_glu_matches_torch(sizes, data, seed):
    dim = data.draw(st.integers(-len(sizes), len(sizes) - 1))
    shape = list(sizes)
    shape[dim] *= 2
    run_both(lambda lib, F, x: F.glu(x, dim), rng(seed).normal(size=shape))  # noqa: N803


def test_glu_errors_match_torch():
    same_error(lambda lib, F, x: F.glu(x), np.ones((2, 3)), match="Halving dimension must be even")  # noqa: N803
    same_error(lambda lib, F, x: F.glu(x), np.ones(()), match="scalars")  # noqa: N803
    same_error(lambda lib, F, x: F.glu(x, 2), np.ones((2, 4)))  # noqa: N803


@settings(max_examples=20, deadline=None)
@given(lead=st.lists(st.integers(1, 3), min_size=0, max_size=4), per_channel=st.booleans(), seed=st.integers(0, 99))
def test_prelu_matches_torch(lead, per_channel, seed):
    r = rng(seed)
    x = r.normal(size=lead)
    x.flat[:1] = 0.0  # the kink: PyTorch's gradient there is the slope
    channels = lead[1] if per_channel and len(lead) >= 2 else 1
    run_both(lambda lib, F, x, w: F.prelu(x, w), x, r.uniform(0.05, 0.5, channels))  # noqa: N803


def test_prelu_scalar_weight_and_errors_match_torch():
    run_both(lambda lib, F, x, w: F.prelu(x, w), [-1.0, 2.0], np.array(0.3))  # noqa: N803
    same_error(lambda lib, F, x, w: F.prelu(x, w), np.ones((2, 4)), np.ones(3), match="Mismatch")  # noqa: N803
    same_error(lambda lib, F, x, w: F.prelu(x, w), np.ones(4), np.ones(4), match="channel size = 1")  # noqa: N803
    same_error(lambda lib, F, x, w: F.prelu(x, w), np.ones((2, 4)), np.ones((2, 2)), match="1D")  # noqa: N803


def test_prelu_module_learns_its_slopes_like_torch():
    x = rng(1).normal(size=(4, 3, 2))
    mine, theirs = nn.PReLU(3, 0.1, dtype=mg.float64), torch.nn.PReLU(3, 0.1, dtype=torch.float64)
    assert repr(mine) == repr(theirs) == "PReLU(num_parameters=3)"
    assert [n for n, _ in mine.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    out, tout = mine(mg.tensor(x)), theirs(torch.tensor(x))
    assert_close(out, tout)
    out.sum().backward()
    tout.sum().backward()
    assert_close(mine.weight.grad, theirs.weight.grad)
    assert nn.PReLU().weight.dtype == mg.float32 and nn.PReLU().weight.tolist() == [0.25]
    mine.weight.grad = None
    with mg.no_grad():
        mine.weight.fill_(0.7)
    mine.reset_parameters()
    assert mine.weight.tolist() == pytest.approx([0.1] * 3)
    for count in (0, -1):  # PyTorch: RuntimeError when called (0) or when allocating (-1)
        with pytest.raises(RuntimeError, match="at least 1"):
            nn.PReLU(count)


def test_glu_and_softmax2d_modules_match_torch():
    x = rng(2).normal(size=(2, 4, 3, 2))
    modules = ((nn.GLU(1), torch.nn.GLU(1)), (nn.GLU(), torch.nn.GLU()), (nn.Softmax2d(), torch.nn.Softmax2d()))
    for mine, theirs in modules:
        assert_close(mine(mg.tensor(x)), theirs(torch.tensor(x)))
        assert repr(mine) == repr(theirs)
    assert_close(nn.Softmax2d()(mg.tensor(x[0])), torch.nn.Softmax2d()(torch.tensor(x[0])))  # (C, H, W)
    with pytest.raises(ValueError, match="3D or 4D"):
        nn.Softmax2d()(mg.ones(2, 3))
    run_both(lambda lib, F, x: (lib.nn.Softmax2d()(x) * lib.arange(24.0).reshape(2, 3, 2, 2)).sum(),  # noqa: N803
             rng(3).normal(size=(2, 3, 2, 2)))
