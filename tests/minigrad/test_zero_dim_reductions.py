"""A 0-d tensor takes ``dim=0`` or ``dim=-1`` in reductions and ``flip``, as in PyTorch (nothing to reduce);
any other dim is an IndexError. These raised before: NumPy has no axis 0 on a 0-d array.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import minigrad as mg

CALLS = {
    "sum": lambda t, d: t.sum(d),
    "sum_keepdim": lambda t, d: t.sum(d, keepdim=True),
    "mean": lambda t, d: t.mean(d),
    "mean_tuple": lambda t, d: t.mean((d,)),
    "any": lambda t, d: t.any(d),
    "all": lambda t, d: t.all(d),
    "flip": lambda t, d: t.flip(d),
    "flip_tuple": lambda t, d: t.flip((d,)),
    "prod": lambda t, d: t.prod(d),
    "amax": lambda t, d: t.amax(d),
    "logsumexp": lambda t, d: t.logsumexp(d),
}


@pytest.mark.parametrize("name", sorted(CALLS))
@pytest.mark.parametrize("dim", [0, -1])
def test_dim_0_or_minus_1_of_a_0d_tensor_works_as_in_pytorch(name, dim):
    call = CALLS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = call(torch.tensor(2.5), dim)
    ours = call(mg.tensor(2.5), dim)
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert np.array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("name", ["sum", "mean", "any", "flip"])
def test_other_dims_of_a_0d_tensor_are_index_errors_as_in_pytorch(name):
    with pytest.raises(IndexError):
        CALLS[name](torch.tensor(2.5), 1)
    with pytest.raises(IndexError):
        CALLS[name](mg.tensor(2.5), 1)


def test_gradients_through_0d_reductions_match_pytorch():
    grads = []
    for lib in (torch, mg):
        t = lib.tensor(1.5, dtype=lib.float64, requires_grad=True)
        (t.sum(0) * 3 + t.mean(-1, keepdim=True).sum() + t.flip(0) ** 2).backward()
        grads.append(float(t.grad.item()))
    assert grads[0] == grads[1]
