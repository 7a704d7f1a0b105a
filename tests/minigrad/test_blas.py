"""``blas.add_matmul``: ``out += a @ b`` in place, fused into one gemm, for every layout and dtype."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minigrad import blas

LAYOUTS = ("C", "F", "transposed", "strided")


def _array(rng, shape, dtype, layout):
    """A (shape) array of ``dtype`` laid out as ``layout``: C order, Fortran order, a transposed view, or a slice."""
    if layout == "transposed":
        return np.ascontiguousarray(rng.standard_normal(shape[::-1])).astype(dtype).T
    if layout == "strided":
        return rng.standard_normal((shape[0], 2 * shape[1])).astype(dtype)[:, ::2]
    return np.asarray(rng.standard_normal(shape), dtype=dtype, order=layout)


@settings(max_examples=150, deadline=None)
@given(
    m=st.integers(0, 9), k=st.integers(0, 9), n=st.integers(0, 9),
    dtype=st.sampled_from([np.float32, np.float64, np.int64, np.complex128]),
    layouts=st.tuples(*[st.sampled_from(LAYOUTS)] * 3),
    seed=st.integers(0, 2**32 - 1),
)  # fmt: skip
def test_adds_the_product_in_place(m, k, n, dtype, layouts, seed):
    rng = np.random.default_rng(seed)
    out = _array(rng, (m, n), dtype, layouts[0])
    a, b = _array(rng, (m, k), dtype, layouts[1]), _array(rng, (k, n), dtype, layouts[2])
    expected = out + a @ b
    memory = out.__array_interface__["data"][0]
    blas.add_matmul(out, a, b)
    assert out.__array_interface__["data"][0] == memory
    tolerance = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(out, expected, rtol=tolerance, atol=tolerance)


def test_scipy_makes_it_one_gemm():
    pytest.importorskip("scipy")  # the fallback is tested below either way
    assert blas.fused()


def test_without_scipy_the_product_is_added(monkeypatch):
    monkeypatch.setattr(blas, "_routines", {})
    out, a, b = np.ones((3, 2), np.float32), np.full((3, 4), 0.5, np.float32), np.ones((4, 2), np.float32)
    blas.add_matmul(out, a, b)
    assert not blas.fused()
    np.testing.assert_array_equal(out, np.full((3, 2), 3.0, np.float32))


@settings(max_examples=100, deadline=None)
@given(
    shape=st.lists(st.integers(0, 6), min_size=0, max_size=3).map(tuple),
    dtype=st.sampled_from([np.float32, np.float64, np.int64]),
    layouts=st.tuples(st.sampled_from(["C", "F"]), st.sampled_from(["C", "F"])),
    alpha=st.floats(-3, 3),
    seed=st.integers(0, 2**32 - 1),
)  # fmt: skip
def test_add_scaled_adds_in_place_or_declines_untouched(shape, dtype, layouts, alpha, seed):
    rng = np.random.default_rng(seed)
    out = np.asarray(rng.standard_normal(shape), dtype=dtype, order=layouts[0])
    x = np.asarray(rng.standard_normal(shape), dtype=dtype, order=layouts[1])
    before = out.copy()
    done = blas.add_scaled(out, x, alpha)
    contiguous = out.flags.c_contiguous and x.flags.c_contiguous
    qualifies = blas.fused() and dtype != np.int64 and out.size > 0 and contiguous
    assert done == qualifies
    if done:
        tolerance = 1e-6 if dtype == np.float32 else 1e-15
        np.testing.assert_allclose(out, before + dtype(alpha) * x, rtol=tolerance, atol=tolerance)
    else:
        np.testing.assert_array_equal(out, before)


def test_an_out_that_overlaps_an_operand_gets_the_product_of_the_old_values():
    """gemm writing into memory it still reads would mix old and new values: the product is taken first."""
    out = np.arange(16.0).reshape(4, 4)
    expected = out + out @ out.T
    blas.add_matmul(out, out, out.T)
    np.testing.assert_allclose(out, expected, rtol=1e-12)
