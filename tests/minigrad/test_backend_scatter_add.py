"""``minigrad.backend.scatter_add``: ``target[indices] += values`` with repeated indices summed.

On the CPU a float target of two or more dimensions, with at least a
quarter as many values as elements, takes a ``np.bincount`` path instead of
``np.add.at``. These tests compare both paths with ``np.add.at`` (equal up
to float rounding, NaN, infinities and signed zeros included), check the
errors, and compare the public ops built on it with PyTorch.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import backend


@st.composite
def scatter_problems(draw):
    """(target, indices, values): every indexing kind ``scatter_add``'s callers use, values broadcastable."""
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, 5)) for _ in range(ndim))
    dtype = draw(st.sampled_from([np.float16, np.float32, np.float64, np.int64]))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    target = (rng.standard_normal(shape) * 4).astype(dtype)
    kind = draw(st.sampled_from(["rows", "rows_2d", "slice_then_array", "full_tuple", "mask"]))
    count = draw(st.integers(1, 30))
    if kind == "rows":  # negative indices included
        indices = (rng.integers(-shape[0], shape[0], count),)
    elif kind == "rows_2d":
        indices = (rng.integers(0, shape[0], (count, 2)),)
    elif kind == "slice_then_array" and ndim > 1:
        indices = (slice(None), rng.integers(0, shape[1], count))
    elif kind == "mask":
        indices = rng.random(shape) < 0.6
    else:
        indices = tuple(rng.integers(0, n, count) for n in shape)
    picked = np.zeros(shape)[indices].shape
    if picked and draw(st.booleans()):  # values broadcast along the leading axes
        picked = (1,) + picked[1:]
    values_dtype = draw(st.sampled_from([dtype, np.float64, np.int32]))
    values = (rng.standard_normal(picked) * 4).astype(values_dtype)
    return target, indices, values


@settings(max_examples=60, deadline=None)
@given(problem=scatter_problems())
def test_scatter_add_equals_add_at_up_to_rounding(problem):
    target, indices, values = problem
    expected = target.copy()
    np.add.at(expected, indices, values)
    got = target.copy()
    backend.scatter_add(got, indices, values)
    assert got.dtype == expected.dtype
    if target.dtype.kind == "i":
        np.testing.assert_array_equal(got, expected)
    else:
        # np.add.at rounds once per value added (values broadcast to target[indices]), each time by at most
        # an ulp of a partial sum no larger than ``scale``; the bincount path rounds once.
        added = np.zeros(target.shape)[indices].size
        scale = np.abs(target).max() + np.abs(values).max(initial=0) * added
        bound = np.finfo(target.dtype).eps * (added + 1) * scale
        np.testing.assert_allclose(got.astype(np.float64), expected.astype(np.float64), rtol=0, atol=bound)


def test_bincount_path_keeps_signed_zeros_nan_and_infinities():
    target = np.full((4, 3), -0.0, dtype=np.float32)
    target[1] = [np.nan, np.inf, -np.inf]
    values = np.ones((3, 3), dtype=np.float32)
    values[2, 1] = -np.inf
    indices = (np.array([1, 3, 1]),)
    expected = target.copy()
    with np.errstate(invalid="ignore"):  # inf + -inf, on both paths
        np.add.at(expected, indices, values)
        backend.scatter_add(target, indices, values)
    np.testing.assert_array_equal(target, expected)  # NaN where NaN (inf + -inf too), equal elsewhere
    np.testing.assert_array_equal(np.signbit(target), np.signbit(expected))  # untouched rows stay -0.0


def test_large_sums_are_rounded_once():
    """The bincount path sums in float64: many small float32 values add up without drift."""
    target = np.zeros((2, 2), dtype=np.float32)
    values = np.full((40000, 2), 0.1, dtype=np.float32)
    backend.scatter_add(target, (np.zeros(40000, dtype=np.int64),), values)
    np.testing.assert_allclose(target[0], np.float32(np.float64(np.float32(0.1)) * 40000), rtol=1e-7)
    assert not target[1].any()


@pytest.mark.parametrize("bad", [np.array([4]), np.array([-5])])
def test_out_of_bounds_index_raises_index_error(bad):
    with pytest.raises(IndexError, match="out of bounds"):
        backend.scatter_add(np.zeros((4, 3)), (bad,), np.ones((1, 3)))


def test_values_that_do_not_broadcast_raise_value_error():
    with pytest.raises(ValueError):
        backend.scatter_add(np.zeros((4, 3)), (np.array([0, 1]),), np.ones((3, 3)))


def test_non_contiguous_target_is_written_in_place():
    base = np.zeros((3, 4))
    view = base.T  # (4, 3), not C-contiguous
    backend.scatter_add(view, (np.array([0, 0, 3]),), np.arange(9.0).reshape(3, 3))
    np.testing.assert_array_equal(base[:, 0], [3.0, 5.0, 7.0])
    np.testing.assert_array_equal(base[:, 3], [6.0, 7.0, 8.0])


def test_index_add_and_embedding_gradient_match_pytorch():
    rng = np.random.default_rng(0)
    data, source = rng.standard_normal((5, 6)).astype(np.float32), rng.standard_normal((5, 20)).astype(np.float32)
    index = rng.integers(0, 6, 20)
    mine = mg.tensor(data).index_add_(1, mg.tensor(index), mg.tensor(source))
    theirs = torch.tensor(data).index_add_(1, torch.tensor(index), torch.tensor(source))
    np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-6, atol=1e-6)

    weight = rng.standard_normal((8, 4)).astype(np.float32)
    tokens = rng.integers(0, 8, (7, 5))
    upstream = rng.standard_normal((7, 5, 4)).astype(np.float32)
    grads = []
    for lib, functional in ((mg, F), (torch, torch.nn.functional)):
        w = lib.tensor(weight, requires_grad=True)
        functional.embedding(lib.tensor(tokens), w).backward(lib.tensor(upstream))
        grads.append(w.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-5, atol=1e-5)
