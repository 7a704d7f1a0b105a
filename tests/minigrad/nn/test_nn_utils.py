"""``minigrad.nn.utils`` against ``torch.nn.utils``: gradient clipping and parameter/vector conversion.

The same gradients are given to minigrad and PyTorch parameters; the
returned norms, the clipped gradients (rewritten in place, in their own
dtype), the errors and their types must agree.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minigrad as mg
from minigrad import backend
from minigrad.nn.utils import (
    clip_grad_norm_,
    clip_grad_value_,
    clip_grads_with_norm_,
    get_total_norm,
    parameters_to_vector,
    vector_to_parameters,
)

SETTINGS = settings(max_examples=20, deadline=None)


def _numpy(t):
    return t.detach().numpy() if isinstance(t, torch.Tensor) else backend.to_numpy(t.detach().array)


def _twins(grads, dtype=np.float64):
    """minigrad and torch parameters with the given gradient arrays (None: no gradient)."""
    mine, theirs = [], []
    for g in grads:
        shape = (3,) if g is None else g.shape
        p = mg.nn.Parameter(mg.zeros(*shape, dtype=dtype))
        tp = torch.nn.Parameter(torch.zeros(shape, dtype=getattr(torch, np.dtype(dtype).name)))
        if g is not None:
            p.grad = mg.tensor(g.astype(dtype))
            tp.grad = torch.tensor(g.astype(dtype))
        mine.append(p)
        theirs.append(tp)
    return mine, theirs


def _assert_grads_equal(mine, theirs, rtol=1e-12):
    for p, tp in zip(mine, theirs):
        if tp.grad is None:
            assert p.grad is None
        else:
            assert p.grad.dtype == np.dtype(str(tp.grad.dtype).removeprefix("torch."))
            np.testing.assert_allclose(_numpy(p.grad), tp.grad.numpy(), rtol=rtol, atol=1e-300)


gradients = st.lists(
    st.one_of(st.none(), hnp.arrays(np.float64, hnp.array_shapes(max_dims=3, max_side=4),
                                    elements=st.floats(-10, 10))),
    min_size=1, max_size=4,
)


@SETTINGS
@given(grads=gradients, max_norm=st.floats(0.01, 20.0), norm_type=st.sampled_from([2.0, 1.0, 3, 0.5, "inf",
                                                                                   float("inf"), 0]))
def test_clip_grad_norm_matches_pytorch(grads, max_norm, norm_type):
    mine, theirs = _twins(grads)
    total = clip_grad_norm_(mine, max_norm, norm_type)
    expected = torch.nn.utils.clip_grad_norm_(theirs, max_norm, norm_type)
    assert isinstance(total, mg.Tensor) and total.shape == ()
    assert total.dtype == np.dtype(str(expected.dtype).removeprefix("torch."))  # float64, or float32 for no grads
    np.testing.assert_allclose(_numpy(total), expected.numpy(), rtol=1e-12)
    _assert_grads_equal(mine, theirs)


def test_clip_grad_norm_rewrites_each_gradient_in_place_and_bumps_its_version():
    mine, _ = _twins([np.full((2, 2), 3.0), np.full(4, -4.0)], np.float32)
    held = [p.grad for p in mine]
    versions = [g._version for g in held]
    total = clip_grad_norm_(iter(mine), 1.0)  # any iterable, consumed once
    assert total.dtype == np.float32 and float(total.item()) == pytest.approx(10.0)
    for p, g, version in zip(mine, held, versions):
        assert p.grad is g and g._version > version and g.dtype == np.float32
    np.testing.assert_allclose(np.concatenate([_numpy(g).ravel() for g in held]) * 10.0,
                               [3.0] * 4 + [-4.0] * 4, rtol=1e-5)


def test_clip_grad_norm_below_max_norm_leaves_gradients_and_handles_edge_cases():
    p = mg.nn.Parameter(mg.ones(3))
    p.grad = mg.tensor([0.1, 0.2, 0.2])
    total = clip_grad_norm_(p, 10.0, foreach=True)  # one Tensor, foreach accepted
    assert float(total.item()) == pytest.approx(0.3)
    np.testing.assert_allclose(_numpy(p.grad), [0.1, 0.2, 0.2], rtol=1e-6)
    assert float(clip_grad_norm_([], 1.0).item()) == 0.0
    assert float(clip_grad_norm_([mg.nn.Parameter(mg.ones(2))], 1.0).item()) == 0.0  # no gradients
    expected = torch.nn.utils.clip_grad_norm_([], 1.0)
    assert clip_grad_norm_([], 1.0).dtype == np.dtype(str(expected.dtype).removeprefix("torch."))


def test_clip_grad_norm_of_mixed_dtypes_promotes_the_total_like_pytorch():
    mine32, theirs32 = _twins([np.full(3, 2.0)], np.float32)
    mine64, theirs64 = _twins([np.full(2, 1.5)], np.float64)
    total = clip_grad_norm_(mine32 + mine64, 1.0)
    expected = torch.nn.utils.clip_grad_norm_(theirs32 + theirs64, 1.0)
    assert total.dtype == np.dtype(str(expected.dtype).removeprefix("torch."))
    np.testing.assert_allclose(_numpy(total), expected.numpy(), rtol=1e-7)
    _assert_grads_equal(mine32 + mine64, theirs32 + theirs64, rtol=1e-6)


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_clip_grad_norm_non_finite(bad):
    grads = [np.array([1.0, bad, 2.0]), np.array([1.0])]
    mine, theirs = _twins(grads)
    with pytest.raises(RuntimeError, match="non-finite") as raised:
        clip_grad_norm_(mine, 1.0, error_if_nonfinite=True)
    with pytest.raises(RuntimeError):
        torch.nn.utils.clip_grad_norm_(theirs, 1.0, error_if_nonfinite=True)
    assert "error_if_nonfinite=False" in str(raised.value)
    _assert_grads_equal(mine, theirs)  # untouched by the refused call
    total = clip_grad_norm_(mine, 1.0)  # scales by the non-finite norm anyway, as PyTorch does
    expected = torch.nn.utils.clip_grad_norm_(theirs, 1.0)
    np.testing.assert_array_equal(_numpy(total), expected.numpy())
    for p, tp in zip(mine, theirs):
        np.testing.assert_array_equal(_numpy(p.grad), tp.grad.numpy())


@SETTINGS
@given(grads=gradients.filter(lambda gs: any(g is not None for g in gs)), clip_value=st.floats(0.0, 5.0))
def test_clip_grad_value_matches_pytorch(grads, clip_value):
    # (PyTorch fails with an internal error when no parameter has a gradient; minigrad does nothing.)
    mine, theirs = _twins(grads)
    held = [p.grad for p in mine]
    assert clip_grad_value_(mine, clip_value) is None
    torch.nn.utils.clip_grad_value_(theirs, clip_value)
    _assert_grads_equal(mine, theirs)
    assert all(p.grad is g for p, g in zip(mine, held))


def test_get_total_norm_and_clip_grads_with_norm_match_pytorch():
    arrays = [np.array([3.0, -4.0]), np.array([[1.0, 2.0], [0.5, -2.5]])]
    for norm_type in (2.0, 1.0, float("inf")):
        total = get_total_norm([mg.tensor(a) for a in arrays], norm_type)
        expected = torch.nn.utils.get_total_norm([torch.tensor(a) for a in arrays], norm_type)
        np.testing.assert_allclose(_numpy(total), expected.numpy(), rtol=1e-12)
        mine, theirs = _twins(arrays)
        clip_grads_with_norm_(mine, 2.0, total)
        torch.nn.utils.clip_grads_with_norm_(theirs, 2.0, expected)
        _assert_grads_equal(mine, theirs)


def test_clipping_errors_name_the_problem():
    # Numbers are converted with float(), as PyTorch does: its ValueError for a string, TypeError for None.
    with pytest.raises(ValueError, match="norm_type"):
        clip_grad_norm_([mg.nn.Parameter(mg.ones(2))], 1.0, norm_type="two")
    with pytest.raises(TypeError, match="norm_type"):
        clip_grad_norm_([mg.nn.Parameter(mg.ones(2))], 1.0, norm_type=None)
    with pytest.raises(ValueError, match="max_norm"):
        clip_grad_norm_([mg.nn.Parameter(mg.ones(2))], "one")
    with pytest.raises(TypeError, match="Tensor"):
        clip_grad_norm_([np.ones(2)], 1.0)
    with pytest.raises(ValueError, match="clip_value"):
        clip_grad_value_([mg.nn.Parameter(mg.ones(2))], "one")
    with pytest.raises(TypeError, match="clip_value"):
        clip_grad_value_([mg.nn.Parameter(mg.ones(2))], None)


def test_clipping_inside_a_training_step():
    torch.manual_seed(0)
    reference = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2)).double()
    model = mg.nn.Sequential(mg.nn.Linear(4, 8), mg.nn.Tanh(), mg.nn.Linear(8, 2)).double()
    model.load_state_dict({k: v.numpy() for k, v in reference.state_dict().items()})
    optimizer = mg.optim.SGD(model.parameters(), lr=0.5)
    data = np.random.default_rng(0).standard_normal((16, 4)) * 5
    for _ in range(3):
        loss = (model(mg.tensor(data)) ** 2).mean()
        expected = (reference(torch.tensor(data)) ** 2).mean()
        optimizer.zero_grad()
        reference.zero_grad()
        loss.backward()
        expected.backward()
        total = mg.nn.utils.clip_grad_norm_(model.parameters(), 0.1)
        torch_total = torch.nn.utils.clip_grad_norm_(reference.parameters(), 0.1)
        np.testing.assert_allclose(_numpy(total), torch_total.numpy(), rtol=1e-10)
        optimizer.step()
        with torch.no_grad():  # plain SGD (torch.optim is slow to import)
            for p in reference.parameters():
                p -= 0.5 * p.grad
    for key, value in reference.state_dict().items():
        np.testing.assert_allclose(_numpy(model.state_dict()[key]), value.numpy(), rtol=1e-10, err_msg=key)


# -- parameters <-> vector ------------------------------------------------------------------------------


def test_parameters_to_vector_is_a_differentiable_copy():
    a, b = mg.nn.Parameter(mg.tensor([[1.0, 2.0], [3.0, 4.0]])), mg.nn.Parameter(mg.tensor([5.0]))
    vec = parameters_to_vector([a, b])
    assert vec.tolist() == [1.0, 2.0, 3.0, 4.0, 5.0] and vec.requires_grad
    (vec * mg.arange(5, dtype=mg.float32)).sum().backward()
    assert a.grad.tolist() == [[0.0, 1.0], [2.0, 3.0]] and b.grad.tolist() == [4.0]
    assert parameters_to_vector(b).tolist() == [5.0]  # a single Tensor
    with pytest.raises(ValueError, match="at least one"):
        parameters_to_vector([])


def test_vector_to_parameters_writes_in_place_and_bumps_versions():
    a, b = mg.nn.Parameter(mg.zeros(2, 2)), mg.nn.Parameter(mg.zeros(1, dtype=mg.float64))
    versions = (a._version, b._version)
    data = a.array
    vec = mg.arange(6, dtype=mg.float32) * 1.5  # one more element than needed: ignored, as in PyTorch
    vector_to_parameters(vec, iter([a, b]))
    assert a.tolist() == [[0.0, 1.5], [3.0, 4.5]] and b.tolist() == [6.0]
    assert a.array is data and b.dtype == np.float64 and a.requires_grad
    assert a._version > versions[0] and b._version > versions[1]


def test_vector_to_parameters_matches_pytorch_and_its_errors():
    torch.manual_seed(0)
    reference = torch.nn.Linear(3, 2).double()
    model = mg.nn.Linear(3, 2, dtype=mg.float64)
    values = np.random.default_rng(1).standard_normal(8)
    vector_to_parameters(mg.tensor(values), model.parameters())
    torch.nn.utils.vector_to_parameters(torch.tensor(values), reference.parameters())
    np.testing.assert_array_equal(_numpy(parameters_to_vector(model.parameters())),
                                  torch.nn.utils.parameters_to_vector(reference.parameters()).detach().numpy())
    with pytest.raises(TypeError, match="expected torch.Tensor, but got: list"):
        vector_to_parameters([1.0], model.parameters())
    with pytest.raises(TypeError):
        torch.nn.utils.vector_to_parameters([1.0], reference.parameters())
    with pytest.raises(RuntimeError):
        vector_to_parameters(mg.ones(7, dtype=mg.float64), model.parameters())
    with pytest.raises(RuntimeError):
        torch.nn.utils.vector_to_parameters(torch.ones(7, dtype=torch.float64), reference.parameters())


def test_nn_utils_is_reachable_like_torch_nn_utils():
    import minigrad.nn.utils as utils  # noqa: PLC0415

    assert mg.nn.utils is utils
    for name in ("clip_grad_norm_", "clip_grad_value_", "parameters_to_vector", "vector_to_parameters",
                 "get_total_norm", "clip_grads_with_norm_"):
        assert callable(getattr(mg.nn.utils, name)) and hasattr(torch.nn.utils, name)
