"""``Tensor.data``: a tensor sharing memory but not history or version counter, checked against PyTorch."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import minigrad as mg


@pytest.fixture(params=["minigrad", "torch"])
def lib(request):
    return mg if request.param == "minigrad" else torch


def _leaf(lib, values=(1.0, 2.0, 3.0)):
    return lib.tensor(list(values), dtype=lib.float64, requires_grad=True)


def test_data_is_an_untracked_tensor_sharing_memory(lib):
    w = _leaf(lib)
    d = w.data
    assert isinstance(d, lib.Tensor)
    assert d.is_leaf and not d.requires_grad and d.grad_fn is None
    d.add_(1.0)  # in grad mode, on memory a requires-grad leaf owns: allowed through .data
    np.testing.assert_array_equal(w.detach().numpy(), [2.0, 3.0, 4.0])


def test_writes_through_data_do_not_bump_the_version(lib):
    w = _leaf(lib)
    before = w._version
    w.data.mul_(3.0)
    assert w._version == before
    w.detach().mul_(2.0)  # detach shares the counter
    assert w._version == before + 1


def test_a_saved_value_changed_through_data_is_not_detected(lib):
    w = _leaf(lib)
    loss = (w * w).sum()
    w.data.fill_(10.0)  # silently changes what MulBackward saved, in PyTorch as here
    loss.backward()
    np.testing.assert_array_equal(w.grad.numpy(), [20.0, 20.0, 20.0])


def test_the_same_change_through_detach_is_detected(lib):
    w = _leaf(lib)
    loss = (w * w).sum()
    w.detach().fill_(10.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()


def test_grad_data_zero_clears_the_gradient(lib):
    w = _leaf(lib)
    (w * 2.0).sum().backward()
    w.grad.data.zero_()
    np.testing.assert_array_equal(w.grad.numpy(), [0.0, 0.0, 0.0])


def test_sgd_step_through_data_matches_pytorch():
    rng = np.random.default_rng(0)
    start, grad = rng.normal(size=(4, 3)), rng.normal(size=(4, 3))
    results = []
    for lib in (mg, torch):
        p = lib.tensor(start, requires_grad=True)
        (p * lib.tensor(grad)).sum().backward()
        p.data.add_(p.grad, alpha=-0.1)
        p.data.clamp_(-0.5, 0.5)
        results.append(p.detach().numpy().copy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-15, atol=1e-16)


def test_assigning_data_replaces_values_and_keeps_autograd_state(lib):
    w = _leaf(lib)
    new = lib.tensor([[5.0, 6.0]], dtype=lib.float64)
    w.data = new
    assert tuple(w.shape) == (1, 2) and w.requires_grad and w.is_leaf
    new.add_(1.0)  # memory is shared with the assigned tensor
    np.testing.assert_array_equal(w.detach().numpy(), [[6.0, 7.0]])
    (w * 3.0).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [[3.0, 3.0]])


def test_assigning_something_not_a_tensor_raises_type_error(lib):
    w = _leaf(lib)
    with pytest.raises(TypeError):
        w.data = np.zeros(3)
    with pytest.raises(TypeError):
        w.data = [1.0, 2.0, 3.0]


def test_assigning_integers_to_a_tensor_that_requires_grad_raises(lib):
    w = _leaf(lib)
    with pytest.raises(RuntimeError, match="floating point"):
        w.data = lib.tensor([1, 2, 3])
    plain = lib.tensor([1.0, 2.0])
    plain.data = lib.tensor([1, 2])
    assert plain.dtype == lib.int64


def test_data_of_a_non_leaf_is_a_leaf(lib):
    y = _leaf(lib) * 2.0
    d = y.data
    assert d.is_leaf and d.grad_fn is None and not d.requires_grad
    np.testing.assert_array_equal(d.numpy(), [2.0, 4.0, 6.0])


def test_array_is_the_raw_array():
    t = mg.tensor([1.0, 2.0])
    assert isinstance(t.array, np.ndarray)
    assert np.shares_memory(t.array, t.data.array)


def test_nbytes_and_itemsize_match_pytorch():
    for dtype in ("float32", "float64", "int64", "bool"):
        mine = mg.zeros(3, 4, dtype=getattr(mg, dtype))
        theirs = torch.zeros(3, 4, dtype=getattr(torch, dtype))
        assert (mine.nbytes, mine.itemsize) == (theirs.nbytes, theirs.itemsize)
        assert (mine.data.nbytes, mine[1:].nbytes) == (theirs.data.nbytes, theirs[1:].nbytes)
