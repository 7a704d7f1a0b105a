# ruff: noqa: N803, N806  (PyTorch's names A, B, L)
"""``minigrad.linalg.solvers`` against PyTorch: ``inv``, ``inv_ex``, ``solve``, ``solve_ex``, ``cholesky``,
``cholesky_ex``, ``solve_triangular``.

Values, shapes and dtypes on drawn batched inputs, the ``info`` codes and
inf/NaN values of singular and not positive-definite matrices, gradients
(first and second order) in float64 against torch and by gradcheck, and the
exception classes of bad calls. The names are reached through
``fn(L, name)`` until ``minigrad.linalg`` is wired.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad as mg
from minigrad.linalg import LinAlgError, solvers
from tests.error_classes import assert_same_class_as_torch


class _Linalg:
    """``L.linalg`` for minigrad: this module's functions."""

    def __getattr__(self, name):
        return getattr(solvers, name)


_TOP_LEVEL = {"inverse": solvers.inverse, "cholesky": solvers.legacy_cholesky}


class _MG:
    """``L`` for minigrad: ``L.linalg.<fn>`` from the module under test, everything else from ``minigrad``."""

    linalg = _Linalg()

    def __getattr__(self, name):
        return _TOP_LEVEL[name] if name in _TOP_LEVEL else getattr(mg, name)


MG = _MG()


def fn(L, name):
    """``L.linalg.<name>`` for torch or minigrad."""
    return getattr(torch.linalg, name) if L is torch else getattr(solvers, name)


def _pair(array, requires_grad=False):
    t = torch.tensor(array, requires_grad=requires_grad)
    m = mg.tensor(array, requires_grad=requires_grad)
    return t, m


def _close(m, t, rtol=None, atol=None):
    got = np.asarray(m.detach().numpy() if hasattr(m, "detach") else m)
    want = t.detach().numpy()
    assert got.shape == want.shape, (got.shape, want.shape)
    assert str(got.dtype) == str(want.dtype).replace("torch.", ""), (got.dtype, want.dtype)
    if rtol is None:
        rtol, atol = (1e-4, 1e-4) if want.dtype == np.float32 else (1e-9, 1e-9)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)


def _well_conditioned(rng, shape, dtype):
    n = shape[-1]
    return (rng.standard_normal(shape) + 3 * n * np.eye(n)).astype(dtype) / n


def _spd(rng, shape, dtype):
    x = rng.standard_normal(shape)
    return (x @ np.swapaxes(x, -1, -2) + shape[-1] * np.eye(shape[-1])).astype(dtype)


batches = st.lists(st.integers(1, 3), min_size=0, max_size=2).map(tuple)
sizes = st.integers(1, 4)
dtypes = st.sampled_from([np.float32, np.float64])


# -- values ------------------------------------------------------------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(batches, sizes, dtypes, st.integers(0, 2**31))
def test_inv_and_inv_ex_match_torch(batch, n, dtype, seed):
    a = _well_conditioned(np.random.default_rng(seed), batch + (n, n), dtype)
    t, m = _pair(a)
    _close(solvers.inv(m), torch.linalg.inv(t))
    got, want = solvers.inv_ex(m), torch.linalg.inv_ex(t)
    _close(got.inverse, want.inverse)
    assert got.info.dtype == mg.int32 and tuple(got.info.shape) == tuple(want.info.shape)
    assert not got.info.numpy().any()


@settings(max_examples=30, deadline=None)
@given(batches, batches, sizes, st.integers(1, 3), dtypes, st.booleans(), st.integers(0, 2**31))
def test_solve_matches_torch_with_broadcast_batches(batch_a, batch_b, n, k, dtype, left, seed):
    rng = np.random.default_rng(seed)
    a = _well_conditioned(rng, batch_a + (n, n), dtype)
    b = rng.standard_normal(batch_b + ((n, k) if left else (k, n))).astype(dtype)
    (ta, ma), (tb, mb) = _pair(a), _pair(b)
    try:
        want = torch.linalg.solve(ta, tb, left=left)
    except RuntimeError:
        with pytest.raises(RuntimeError):
            solvers.solve(ma, mb, left=left)
        return
    _close(solvers.solve(ma, mb, left=left), want)
    got_ex, want_ex = solvers.solve_ex(ma, mb, left=left), torch.linalg.solve_ex(ta, tb, left=left)
    _close(got_ex.result, want_ex.result)
    assert tuple(got_ex.info.shape) == tuple(want_ex.info.shape)


@pytest.mark.parametrize(
    ("a_shape", "b_shape"), [((3, 3), (3,)), ((4, 3, 3), (3,)), ((4, 3, 3), (4, 3)), ((2, 4, 3, 3), (2, 4, 3))]
)
def test_solve_vector_right_hand_sides(a_shape, b_shape):
    rng = np.random.default_rng(0)
    (ta, ma), (tb, mb) = _pair(_well_conditioned(rng, a_shape, np.float64)), _pair(rng.standard_normal(b_shape))
    _close(solvers.solve(ma, mb), torch.linalg.solve(ta, tb))


@settings(max_examples=25, deadline=None)
@given(batches, sizes, dtypes, st.booleans(), st.integers(0, 2**31))
def test_cholesky_matches_torch(batch, n, dtype, upper, seed):
    a = _spd(np.random.default_rng(seed), batch + (n, n), dtype)
    unread = np.tril(np.ones((n, n)), -1) if upper else np.triu(np.ones((n, n)), 1)
    a = a + 5 * unread.astype(dtype)  # the triangle that is not read: results must not change
    t, m = _pair(a)
    _close(solvers.cholesky(m, upper=upper), torch.linalg.cholesky(t, upper=upper))
    got_ex, want_ex = solvers.cholesky_ex(m, upper=upper), torch.linalg.cholesky_ex(t, upper=upper)
    _close(got_ex.L, want_ex.L)
    np.testing.assert_array_equal(got_ex.info.numpy(), want_ex.info.numpy())


@settings(max_examples=30, deadline=None)
@given(batches, batches, sizes, st.integers(1, 3), dtypes, st.booleans(), st.booleans(), st.booleans(),
       st.integers(0, 2**31))
def test_solve_triangular_matches_torch(batch_a, batch_b, n, k, dtype, upper, left, unit, seed):
    rng = np.random.default_rng(seed)
    a = _well_conditioned(rng, batch_a + (n, n), dtype)  # both triangles filled: only one may be read
    b = rng.standard_normal(batch_b + ((n, k) if left else (k, n))).astype(dtype)
    (ta, ma), (tb, mb) = _pair(a), _pair(b)
    kw = {"upper": upper, "left": left, "unitriangular": unit}
    try:
        want = torch.linalg.solve_triangular(ta, tb, **kw)
    except RuntimeError:
        with pytest.raises(RuntimeError):
            solvers.solve_triangular(ma, mb, **kw)
        return
    _close(solvers.solve_triangular(ma, mb, **kw), want)


def test_solve_triangular_result_takes_the_dtype_of_A():
    a, b = np.triu(np.ones((2, 2))) + np.eye(2), np.ones((2, 2))
    for a_dtype, b_dtype in ((np.float32, np.float64), (np.float64, np.float32), (np.float32, np.int64)):
        (ta, ma), (tb, mb) = _pair(a.astype(a_dtype)), _pair(b.astype(b_dtype))
        _close(solvers.solve_triangular(ma, mb, upper=True), torch.linalg.solve_triangular(ta, tb, upper=True))


def test_empty_matrices():
    for shape, b_shape in (((0, 0), (0, 3)), ((3, 0, 0), (3, 0, 2)), ((0, 2, 2), (0, 2, 1))):
        (ta, ma), (tb, mb) = _pair(np.ones(shape)), _pair(np.ones(b_shape))
        _close(solvers.inv(ma), torch.linalg.inv(ta))
        _close(solvers.solve(ma, mb), torch.linalg.solve(ta, tb))
        _close(solvers.solve_triangular(ma, mb, upper=False), torch.linalg.solve_triangular(ta, tb, upper=False))
        if shape[-1] == 0:
            _close(solvers.cholesky(ma), torch.linalg.cholesky(ta))


def test_top_level_inverse_and_deprecated_cholesky():
    rng = np.random.default_rng(7)
    t, m = _pair(_well_conditioned(rng, (2, 3, 3), np.float64))
    _close(solvers.inverse(m), torch.inverse(t))
    s_t, s_m = _pair(_spd(rng, (3, 3), np.float64) + 4 * np.triu(np.ones((3, 3)), 1))
    solvers._LEGACY_CHOLESKY_WARNED.clear()
    with pytest.warns(UserWarning, match="deprecated"):  # the first call warns, as PyTorch's
        solvers.legacy_cholesky(s_m)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # later calls do not
        got = [solvers.legacy_cholesky(s_m, upper) for upper in (False, True)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = [torch.cholesky(s_t, upper) for upper in (False, True)]
    for g, w in zip(got, want):
        _close(g, w)
    with pytest.raises(LinAlgError):
        solvers.legacy_cholesky(-m)


# -- failures: info codes and inf/NaN values ------------------------------------------------------------------------


SINGULAR = np.stack(
    [np.eye(3), np.zeros((3, 3)), [[1.0, 2, 3], [2, 4, 6], [1, 0, 1]], [[1.0, 2, 3], [0, 0, 5], [0, 0, 7]]]
)


def test_inv_ex_and_solve_ex_of_singular_matrices_match_torch():
    t, m = _pair(SINGULAR)
    got, want = solvers.inv_ex(m), torch.linalg.inv_ex(t)
    _close(got.inverse, want.inverse, rtol=1e-12, atol=0)
    np.testing.assert_array_equal(got.info.numpy(), want.info.numpy())
    (tb, mb) = _pair(np.arange(6.0).reshape(3, 2))
    got, want = solvers.solve_ex(m, mb), torch.linalg.solve_ex(t, tb)
    _close(got.result, want.result, rtol=1e-12, atol=0)
    np.testing.assert_array_equal(got.info.numpy(), want.info.numpy())


def test_solve_ex_left_false_of_singular_matrices_factors_A_as_torch():
    a = np.array([[[0.0, 0], [1, 1]], [[1.0, 2], [3, 6]], [[0.0, 1], [0, 2]]])
    (ta, ma), (tb, mb) = _pair(a), _pair(np.array([[1.0, 2], [3, 4]]))
    for left in (True, False):
        got, want = solvers.solve_ex(ma, mb, left=left), torch.linalg.solve_ex(ta, tb, left=left)
        _close(got.result, want.result, rtol=1e-12, atol=0)
        np.testing.assert_array_equal(got.info.numpy(), want.info.numpy())


def test_singular_matrices_raise_linalg_error():
    _, m = _pair(SINGULAR)
    for call in (
        lambda: solvers.inv(m),
        lambda: solvers.solve(m, mg.ones(3, dtype=mg.float64)),
        lambda: solvers.inv_ex(m, check_errors=True),
        lambda: solvers.solve_ex(m, mg.ones(3, dtype=mg.float64), check_errors=True),
    ):
        with pytest.raises(LinAlgError, match="batch element 1"):
            call()
    assert issubclass(LinAlgError, RuntimeError)


def test_nan_matrices_give_nan_without_error_as_torch():
    a = np.array([[np.nan, 1.0], [1.0, 1.0]])
    t, m = _pair(a)
    _close(solvers.inv(m), torch.linalg.inv(t))
    got, want = solvers.solve_ex(m, mg.ones(2, dtype=mg.float64)), torch.linalg.solve_ex(t, torch.ones(2).double())
    _close(got.result, want.result)
    assert int(got.info.item()) == int(want.info.item())


def test_cholesky_ex_of_matrices_that_are_not_positive_definite_matches_torch():
    a = np.stack([np.eye(3), -np.eye(3), np.diag([1.0, 1, -1]), [[1.0, 2, 0], [2, 1, 0], [0, 0, 1]],
                  [[np.nan, 0, 0], [0, 1, 0], [0, 0, 1]]])
    t, m = _pair(a)
    got, want = solvers.cholesky_ex(m), torch.linalg.cholesky_ex(t)
    np.testing.assert_array_equal(got.info.numpy(), want.info.numpy())
    _close(got.L, want.L)
    with pytest.raises(LinAlgError, match="batch element 1"):
        solvers.cholesky(m)
    with pytest.raises(LinAlgError):
        solvers.cholesky_ex(m, check_errors=True)


INF = float("inf")


@pytest.mark.parametrize("a", [
    [[1.0, 0], [0, INF]], [[INF, 0.0], [0, 1]], [[4.0, 0], [INF, 1]], [[4.0, INF], [0, 1]],
    [[1.0, 0, 0], [0, 1, 0], [INF, 0, 1]], [[1.0, 0, 0], [0, INF, 0], [0, 0, 1]],
])
def test_cholesky_ex_of_matrices_with_infinities_matches_torch(a):
    t, m = _pair(np.array(a))
    got, want = solvers.cholesky_ex(m), torch.linalg.cholesky_ex(t)
    assert int(got.info.item()) == int(want.info.item())
    _close(got.L, want.L)


def test_solve_triangular_with_zero_on_the_diagonal_gives_infinities_as_torch():
    a = np.array([[2.0, 5, 1], [0, 0, 3], [0, 0, 4]])
    for upper in (True, False):
        (ta, ma), (tb, mb) = _pair(a if upper else a.T.copy()), _pair(np.ones((3, 2)))
        _close(solvers.solve_triangular(ma, mb, upper=upper), torch.linalg.solve_triangular(ta, tb, upper=upper))


# -- gradients ------------------------------------------------------------------------------------------------------


def _grads_match(build_torch, build_mg, arrays, second_order=True):
    """First (and second) derivatives of ``sum(w * f(...))`` in float64 against torch."""
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    ms = [mg.tensor(a, requires_grad=True) for a in arrays]
    out_t, out_m = build_torch(*ts), build_mg(*ms)
    weights = np.random.default_rng(1).standard_normal(tuple(out_t.shape))
    loss_t = (out_t * torch.tensor(weights)).sum()
    loss_m = (out_m * mg.tensor(weights)).sum()
    grads_t = torch.autograd.grad(loss_t, ts, create_graph=True)
    grads_m = mg.autograd.grad(loss_m, ms, create_graph=True)
    for gm, gt in zip(grads_m, grads_t):
        _close(gm, gt, rtol=1e-8, atol=1e-10)
    if second_order:
        second_t = torch.autograd.grad(sum((g * g).sum() for g in grads_t), ts)
        second_m = mg.autograd.grad(sum((g * g).sum() for g in grads_m), ms)
        for gm, gt in zip(second_m, second_t):
            _close(gm, gt, rtol=1e-7, atol=1e-9)


def test_inv_gradients():
    a = _well_conditioned(np.random.default_rng(2), (2, 3, 3), np.float64)
    _grads_match(torch.linalg.inv, solvers.inv, [a])
    _grads_match(lambda x: torch.linalg.inv_ex(x).inverse, lambda x: solvers.inv_ex(x).inverse, [a])


@pytest.mark.parametrize(("a_shape", "b_shape", "left"), [
    ((3, 3), (3, 2), True), ((2, 3, 3), (3, 2), True), ((3, 3), (2, 1, 3, 2), True), ((2, 3, 3), (2, 3), True),
    ((2, 3, 3), (4, 3), False), ((1, 3, 3), (2, 2, 3), False), ((3, 3), (3,), True),
])
def test_solve_gradients(a_shape, b_shape, left):
    rng = np.random.default_rng(3)
    a, b = _well_conditioned(rng, a_shape, np.float64), rng.standard_normal(b_shape)
    _grads_match(lambda x, y: torch.linalg.solve(x, y, left=left), lambda x, y: solvers.solve(x, y, left=left), [a, b])


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_gradients(upper):
    a = _spd(np.random.default_rng(4), (2, 3, 3), np.float64)
    a[..., 0, 2] += 0.3  # not symmetric: the gradient must still be PyTorch's symmetrized one
    _grads_match(lambda x: torch.linalg.cholesky(x, upper=upper), lambda x: solvers.cholesky(x, upper=upper), [a])
    _grads_match(lambda x: torch.linalg.cholesky_ex(x, upper=upper).L,
                 lambda x: solvers.cholesky_ex(x, upper=upper).L, [a])


@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("left", [False, True])
@pytest.mark.parametrize("unit", [False, True])
def test_solve_triangular_gradients(upper, left, unit):
    rng = np.random.default_rng(5)
    a, b = _well_conditioned(rng, (2, 3, 3), np.float64), rng.standard_normal((1, 3, 3))
    kw = {"upper": upper, "left": left, "unitriangular": unit}
    _grads_match(lambda x, y: torch.linalg.solve_triangular(x, y, **kw),
                 lambda x, y: solvers.solve_triangular(x, y, **kw), [a, b])


def test_gradcheck():
    rng = np.random.default_rng(6)
    a = mg.tensor(_well_conditioned(rng, (2, 3, 3), np.float64), requires_grad=True)
    b = mg.tensor(rng.standard_normal((3, 2)), requires_grad=True)
    s = mg.tensor(_spd(rng, (3, 3), np.float64), requires_grad=True)
    assert mg.autograd.gradcheck(solvers.inv, (a,))
    assert mg.autograd.gradcheck(solvers.solve, (a, b))
    assert mg.autograd.gradcheck(lambda x: solvers.cholesky(x + x.mT), (s,))
    assert mg.autograd.gradcheck(lambda x, y: solvers.solve_triangular(x, y, upper=True), (a, b))


# -- bad inputs -----------------------------------------------------------------------------------------------------


def _t(L, *shape, dtype=None):
    x = L.eye(shape[-1]).expand(*shape).clone() if len(shape) >= 2 and shape[-1] == shape[-2] else L.ones(*shape)
    return x if dtype is None else x.to(dtype)


BAD = {
    "inv 1-D": lambda L: L.linalg.inv(L.ones(3)),
    "inv not square": lambda L: L.linalg.inv(L.ones(2, 3)),
    "inv int": lambda L: L.linalg.inv(_t(L, 2, 2, dtype=L.int64)),
    "inv bool": lambda L: L.linalg.inv(_t(L, 2, 2, dtype=L.bool)),
    "inv float16": lambda L: L.linalg.inv(_t(L, 2, 2, dtype=L.float16)),
    "inv singular": lambda L: L.linalg.inv(L.zeros(2, 2)),
    "inv batch singular": lambda L: L.linalg.inv(L.stack([L.eye(2), L.zeros(2, 2)])),
    "inv list": lambda L: L.linalg.inv([[1.0, 0.0], [0.0, 1.0]]),
    "inv_ex check_errors": lambda L: L.linalg.inv_ex(L.zeros(2, 2), check_errors=True),
    "inv_ex int": lambda L: L.linalg.inv_ex(_t(L, 2, 2, dtype=L.int64)),
    "inverse singular": lambda L: L.inverse(L.zeros(2, 2)),
    "inverse int": lambda L: L.inverse(_t(L, 2, 2, dtype=L.int64)),
    "inverse 1-D": lambda L: L.inverse(L.ones(2)),
    "cholesky (deprecated) not PD": lambda L: L.cholesky(-L.eye(2)),
    "cholesky (deprecated) int": lambda L: L.cholesky(_t(L, 2, 2, dtype=L.int64)),
    "cholesky (deprecated) bool": lambda L: L.cholesky(_t(L, 2, 2, dtype=L.bool)),
    "cholesky (deprecated) float16": lambda L: L.cholesky(_t(L, 2, 2, dtype=L.float16)),
    "cholesky (deprecated) not square": lambda L: L.cholesky(L.ones(2, 3)),
    "cholesky (deprecated) upper not bool": lambda L: L.cholesky(L.eye(2), upper="yes"),
    "solve singular": lambda L: L.linalg.solve(L.zeros(2, 2), L.ones(2)),
    "solve dtypes differ": lambda L: L.linalg.solve(L.eye(2), L.ones(2, dtype=L.float64)),
    "solve int B": lambda L: L.linalg.solve(L.eye(2), L.ones(2, dtype=L.int64)),
    "solve int": lambda L: L.linalg.solve(_t(L, 2, 2, dtype=L.int64), L.ones(2, dtype=L.int64)),
    "solve float16": lambda L: L.linalg.solve(_t(L, 2, 2, dtype=L.float16), L.ones(2, 1, dtype=L.float16)),
    "solve wrong rows": lambda L: L.linalg.solve(L.eye(3), L.ones(4, 2)),
    "solve wrong vector": lambda L: L.linalg.solve(L.eye(3), L.ones(4)),
    "solve batch vector not matching": lambda L: L.linalg.solve(_t(L, 4, 3, 3), L.ones(5, 3)),
    "solve left=False wrong": lambda L: L.linalg.solve(L.eye(3), L.ones(3), left=False),
    "solve left=False batched vector": lambda L: L.linalg.solve(_t(L, 3, 1, 1), L.ones(1), left=False),
    "solve 1x1 vector left=False": lambda L: L.linalg.solve(L.ones(1, 1), L.ones(1), left=False),
    "solve 0-d B": lambda L: L.linalg.solve(L.eye(3), L.tensor(1.0)),
    "solve A 1-D": lambda L: L.linalg.solve(L.ones(3), L.ones(3)),
    "solve batch mismatch": lambda L: L.linalg.solve(_t(L, 2, 3, 3), L.ones(4, 3, 1)),
    "solve B list": lambda L: L.linalg.solve(L.eye(2), [1.0, 2.0]),
    "solve_ex check_errors": lambda L: L.linalg.solve_ex(L.zeros(3, 1, 1), L.ones(1, 1), check_errors=True),
    "cholesky not PD": lambda L: L.linalg.cholesky(-L.eye(2)),
    "cholesky NaN": lambda L: L.linalg.cholesky(L.tensor([[float("nan"), 0.0], [0.0, 1.0]])),
    "cholesky upper reads upper": lambda L: L.linalg.cholesky(L.tensor([[2.0, 5.0], [0.0, 2.0]]), upper=True),
    "cholesky int": lambda L: L.linalg.cholesky(_t(L, 2, 2, dtype=L.int64)),
    "cholesky float16": lambda L: L.linalg.cholesky(_t(L, 2, 2, dtype=L.float16)),
    "cholesky not square": lambda L: L.linalg.cholesky(L.ones(2, 3)),
    "cholesky 1-D": lambda L: L.linalg.cholesky(L.ones(2)),
    "cholesky_ex check_errors": lambda L: L.linalg.cholesky_ex(-L.eye(2), check_errors=True),
    "cholesky_ex int": lambda L: L.linalg.cholesky_ex(_t(L, 2, 2, dtype=L.int64)),
    "solve_triangular no upper": lambda L: L.linalg.solve_triangular(L.eye(2), L.ones(2, 1)),
    "solve_triangular vector B": lambda L: L.linalg.solve_triangular(L.eye(2), L.ones(2), upper=True),
    "solve_triangular 1-D A": lambda L: L.linalg.solve_triangular(L.ones(2), L.ones(2, 2), upper=True),
    "solve_triangular not square": lambda L: L.linalg.solve_triangular(L.ones(2, 3), L.ones(2, 2), upper=True),
    "solve_triangular wrong rows": lambda L: L.linalg.solve_triangular(L.eye(2), L.ones(3, 2), upper=True),
    "solve_triangular wrong cols": lambda L: L.linalg.solve_triangular(L.eye(2), L.ones(2, 3), upper=True,
                                                                       left=False),
    "solve_triangular int": lambda L: L.linalg.solve_triangular(_t(L, 2, 2, dtype=L.int64),
                                                                L.ones(2, 2, dtype=L.int64), upper=True),
    "solve_triangular float16": lambda L: L.linalg.solve_triangular(_t(L, 2, 2, dtype=L.float16),
                                                                    L.ones(2, 2, dtype=L.float16), upper=True),
    "solve_triangular batch mismatch": lambda L: L.linalg.solve_triangular(_t(L, 2, 2, 2), L.ones(3, 2, 1),
                                                                           upper=True),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_inputs_raise_torchs_classes(name):
    call = BAD[name]
    assert_same_class_as_torch(name, lambda L: call(MG if L is mg else L))
