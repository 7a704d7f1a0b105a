"""Bad input raises an error whose message names the problem (shapes, dims, dtypes, devices)."""

from __future__ import annotations

import types

import numpy as np
import pytest

import minigrad as mg
from minigrad import backend


def _t(*shape, device="cpu"):
    return mg.ones(*shape, dtype=mg.float64, device=device)


# -- shapes -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "shape_a, shape_b",
    [((2, 3), (4, 5)), ((3,), (4,)), ((3,), (4, 2)), ((2, 3), (2,)), ((5, 2, 3), (4, 3, 2))],
)
def test_matmul_shape_mismatch_names_both_shapes(shape_a, shape_b, device):
    with pytest.raises(RuntimeError) as info:  # PyTorch's class (test_error_classes_core checks it against torch)
        _t(*shape_a, device=device) @ _t(*shape_b, device=device)
    assert str(shape_a) in str(info.value) and str(shape_b) in str(info.value)


def test_matmul_of_a_0d_tensor_names_the_problem(device):
    with pytest.raises(RuntimeError, match="at least 1 dimension"):
        mg.matmul(_t(device=device), _t(3, device=device))


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "pow", "where"])
def test_non_broadcastable_shapes_name_both_shapes(op, device):
    a, b = _t(2, 3, device=device), _t(4, device=device)
    run = {
        "add": lambda: a + b,
        "sub": lambda: a - b,
        "mul": lambda: a * b,
        "div": lambda: a / b,
        "pow": lambda: a**b,
        "where": lambda: mg.where(a > 0, a, b),
    }[op]
    with pytest.raises(RuntimeError) as info:
        run()
    assert "(2, 3)" in str(info.value) and "(4,)" in str(info.value)


@pytest.mark.parametrize("target", [(4, 2), (5, -1), (-1, -1), (7,)])
def test_reshape_to_an_incompatible_shape_names_both_shapes(target, device):
    with pytest.raises(RuntimeError) as info:
        _t(2, 3, device=device).reshape(*target)
    assert str(target) in str(info.value) and "(2, 3)" in str(info.value)


def test_view_to_an_incompatible_shape_names_both_shapes(device):
    with pytest.raises(RuntimeError, match=r"\(4, 4\).*\(2, 3\)"):
        _t(2, 3, device=device).view(4, 4)


def test_reshape_rejects_non_integer_sizes():
    with pytest.raises(TypeError, match="shape entries must be ints"):
        _t(2, 3).reshape(2.0, 3)


@pytest.mark.parametrize("target", [(3, 3), (2, 4), (3,)])
def test_expand_to_an_incompatible_shape_names_both_shapes(target, device):
    with pytest.raises(RuntimeError) as info:  # PyTorch's type (test_shape_forms checks it against torch)
        _t(2, 3, device=device).expand(*target)
    assert str(target) in str(info.value) and "(2, 3)" in str(info.value)


def test_expand_rejects_minus_one_for_a_new_dimension():
    with pytest.raises(RuntimeError, match="-1"):
        _t(3).expand(-1, 3)


def test_cat_of_mismatched_shapes_names_them(device):
    with pytest.raises(RuntimeError) as info:
        mg.cat([_t(2, 3, device=device), _t(2, 4, device=device)], dim=0)
    assert "(2, 3)" in str(info.value) and "(2, 4)" in str(info.value)


def test_cat_of_different_ranks_names_the_shapes(device):
    with pytest.raises(RuntimeError, match=r"\(2, 3\).*\(3,\)"):
        mg.cat([_t(2, 3, device=device), _t(3, device=device)])


def test_stack_of_mismatched_shapes_names_them(device):
    with pytest.raises(RuntimeError, match=r"\(2, 3\).*\(3, 2\)"):
        mg.stack([_t(2, 3, device=device), _t(3, 2, device=device)])


@pytest.mark.parametrize("join, error", [(mg.cat, ValueError), (mg.stack, RuntimeError)])  # PyTorch's classes
def test_joining_nothing_says_so(join, error):
    with pytest.raises(error, match="non-empty"):
        join([])


def test_bad_boolean_mask_names_both_shapes(device):
    with pytest.raises(IndexError, match=r"\(3,\).*\(2, 3\)"):
        _t(2, 3, device=device)[mg.tensor([True, False, True], device=device)]


def test_out_of_range_index_names_the_shape(device):
    with pytest.raises(IndexError, match=r"\(2, 3\)"):
        _t(2, 3, device=device)[2]


# -- dims ----------------------------------------------------------------------------------------

OUT_OF_RANGE = {
    "sum": lambda t: t.sum(2),
    "sum_tuple": lambda t: t.sum((0, -3)),
    "mean": lambda t: t.mean(-3),
    "max": lambda t: t.max(2),
    "min": lambda t: t.min(dim=-3),
    "argmax": lambda t: t.argmax(2),
    "unsqueeze": lambda t: t.unsqueeze(3),
    "squeeze": lambda t: t.squeeze(2),
    "transpose": lambda t: t.transpose(0, 2),
    "permute": lambda t: t.permute(0, 2),
    "flatten": lambda t: t.flatten(0, 5),
    "cat": lambda t: mg.cat([t, t], dim=2),
    "stack": lambda t: mg.stack([t, t], dim=3),
}


@pytest.mark.parametrize("op", OUT_OF_RANGE)
def test_dim_out_of_range_names_the_dim(op, device):
    with pytest.raises(IndexError, match="out of range"):
        OUT_OF_RANGE[op](_t(2, 3, device=device))


def test_repeated_dim_is_rejected(device):
    with pytest.raises(RuntimeError, match="more than once"):
        _t(2, 3, device=device).sum((1, -1))


def test_permute_needs_a_permutation(device):
    with pytest.raises(RuntimeError, match=r"not a permutation.*\(2, 3\)"):
        _t(2, 3, device=device).permute(0, 0)


def test_max_takes_a_single_dim(device):
    with pytest.raises(TypeError, match="single int"):
        _t(2, 3, device=device).max((0, 1))


def test_dim_and_axis_together_are_rejected(device):
    with pytest.raises(TypeError, match="either dim or axis"):
        _t(2, 3, device=device).sum(dim=0, axis=1)


# -- dtypes and arguments -----------------------------------------------------------------------------


def test_requires_grad_on_an_integer_tensor_names_the_dtype():
    with pytest.raises(RuntimeError, match="floating point.*int64"):
        mg.tensor([1, 2], requires_grad=True)
    with pytest.raises(RuntimeError, match="floating point.*int64"):
        mg.tensor([1, 2]).requires_grad_()


def test_mean_of_an_integer_tensor_names_the_dtype(device):
    with pytest.raises(RuntimeError, match="floating point.*int64"):
        mg.tensor([1, 2], device=device).mean()


def test_where_needs_a_boolean_condition(device):
    a = _t(2, device=device)
    with pytest.raises(RuntimeError, match="boolean.*float64"):  # a tensor of another dtype: PyTorch's class
        mg.where(a, a, a)
    with pytest.raises(TypeError, match="boolean.*float"):  # not a tensor at all
        mg.where(1.0, a, a)


def test_clamp_needs_a_bound(device):
    with pytest.raises(RuntimeError, match="min and max"):
        _t(2, device=device).clamp()


def test_clamp_bounds_must_be_numbers(device):
    a = _t(2, device=device)
    with pytest.raises(TypeError, match="min must be a number"):
        a.clamp(min=a)


# -- devices -------------------------------------------------------------------------------------------


def test_mixing_devices_names_both():
    if backend.cuda_device_count() < 1:
        pytest.skip(backend.cuda_unavailable_reason())
    with pytest.raises(RuntimeError, match="cpu.*cuda:0|cuda:0.*cpu"):
        _t(2) + _t(2, device="cuda:0")


class _FakeDevice:
    def __init__(self, index):
        self.id = index


class _FakeCudaArray:
    """Stands in for a CuPy array on a given device: all get_array_module looks at."""

    def __init__(self, index):
        self.device = _FakeDevice(index)


@pytest.fixture
def fake_cupy(monkeypatch):
    """``backend`` with a stand-in CuPy module whose arrays are ``_FakeCudaArray``."""
    fake = types.SimpleNamespace(ndarray=_FakeCudaArray)
    monkeypatch.setattr(backend, "_cupy", fake)
    return fake


def test_get_array_module_picks_the_module_of_the_arrays(fake_cupy):
    assert backend.get_array_module(np.ones(2), 1.5, None, np.float32(2)) is np
    assert backend.get_array_module() is np
    assert backend.get_array_module(2, _FakeCudaArray(0), None) is fake_cupy
    assert backend.get_array_module(_FakeCudaArray(1), _FakeCudaArray(1)) is fake_cupy


@pytest.mark.parametrize(
    "arrays, first, second",
    [
        ((np.ones(2), _FakeCudaArray(0)), "cpu", "cuda:0"),
        ((_FakeCudaArray(0), np.ones(2)), "cuda:0", "cpu"),
        ((_FakeCudaArray(0), 3.0, _FakeCudaArray(1)), "cuda:0", "cuda:1"),
    ],
)
def test_get_array_module_names_both_devices_when_they_differ(fake_cupy, arrays, first, second):
    with pytest.raises(RuntimeError, match=f"same device, found {first} and {second}"):
        backend.get_array_module(*arrays)
