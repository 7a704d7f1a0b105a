# ruff: noqa: N803, N806  (PyTorch's names A, U, S, Vh, Q, R, L)
"""``minigrad.linalg.decompositions`` against PyTorch: ``svd``, ``svdvals``, ``eigh``, ``eigvalsh``, ``qr``,
``pinv``, ``matrix_rank``.

Decompositions are unique only up to signs (LAPACK may pick others than
PyTorch's), so values are compared through gauge-invariant quantities:
singular values and eigenvalues, reconstructions, projectors ``U_k U_k^T``,
``|R|``; gradients are those of gauge-invariant functions, against torch in
float64 and by gradcheck (second order too). Also: shapes and dtypes of every
mode, empty and batched inputs, inf/NaN inputs, the non-finite gradients at
repeated singular values, the backward errors of ``qr``, and the exception
classes of bad calls. The names are reached through ``fn(L, name)`` until
``minigrad.linalg`` is wired.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad as mg
from minigrad.linalg import LinAlgError, decompositions
from tests.error_classes import assert_same_class_as_torch


def fn(L, name):
    """``L.linalg.<name>`` for torch or minigrad."""
    return getattr(torch.linalg, name) if L is torch else getattr(decompositions, name)


class _MG:
    """``L`` for minigrad in the error table: ``L.linalg.<fn>`` from this module, the rest from ``minigrad``."""

    class linalg:  # noqa: N801  (torch.linalg's spelling)
        def __getattr__(self, name):
            return getattr(decompositions, name)

    linalg = linalg()

    def __getattr__(self, name):
        return getattr(mg, name)


MG = _MG()


def _np(t):
    return t.detach().numpy() if isinstance(t, torch.Tensor) else np.asarray(t.numpy())


def _tol(dtype):
    return (2e-4, 2e-4) if np.dtype(dtype) == np.float32 else (1e-10, 1e-10)


def _close(got, want, dtype=np.float64):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    rtol, atol = _tol(dtype)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)


def _spread(rng, shape, dtype=np.float64, symmetric=False):
    """Random matrices with well-separated singular values (eigenvalues when ``symmetric``)."""
    m, n = shape[-2:]
    d = np.zeros((m, n))
    np.fill_diagonal(d, 1.0 + 2.0 * np.arange(min(m, n)))
    a = rng.uniform(-1, 1, shape)
    if symmetric:
        a = (a + np.swapaxes(a, -1, -2)) / 2
    return (0.2 * a + d).astype(dtype)


batches = st.lists(st.integers(1, 3), max_size=2).map(tuple)
sides = st.integers(1, 4)
dtypes = st.sampled_from([np.float32, np.float64])

# -- values ---------------------------------------------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(batch=batches, m=sides, n=sides, dtype=dtypes, full=st.booleans(), seed=st.integers(0, 2**16))
def test_svd_matches_torch_up_to_signs(batch, m, n, dtype, full, seed):
    a = _spread(np.random.default_rng(seed), batch + (m, n), dtype)
    U, S, Vh = fn(mg, "svd")(mg.tensor(a), full_matrices=full)
    tU, tS, tVh = torch.linalg.svd(torch.tensor(a), full_matrices=full)
    k = min(m, n)
    for mine, theirs in ((U, tU), (S, tS), (Vh, tVh)):
        assert mine.shape == tuple(theirs.shape) and str(mine.dtype) == str(theirs.dtype).split(".")[1]
    _close(S.numpy(), tS.numpy(), dtype)
    Un, Vn = U.numpy(), Vh.numpy()
    _close((Un[..., :k] * S.numpy()[..., None, :]) @ Vn[..., :k, :], a, dtype)
    proj = Un[..., :k] @ np.swapaxes(Un[..., :k], -1, -2)
    _close(proj, tU.numpy()[..., :k] @ np.swapaxes(tU.numpy()[..., :k], -1, -2), dtype)
    _close(np.swapaxes(Un, -1, -2) @ Un, np.broadcast_to(np.eye(Un.shape[-1]), batch + (Un.shape[-1],) * 2), dtype)
    _close(Vn @ np.swapaxes(Vn, -1, -2), np.broadcast_to(np.eye(Vn.shape[-2]), batch + (Vn.shape[-2],) * 2), dtype)
    _close(np.abs(Un[..., :k]), np.abs(tU.numpy()[..., :k]), dtype)
    vals = fn(mg, "svdvals")(mg.tensor(a))
    assert vals.dtype == S.dtype
    _close(vals.numpy(), tS.numpy(), dtype)
    assert isinstance(fn(mg, "svd")(mg.tensor(a)), decompositions.SVDResult)


@settings(max_examples=25, deadline=None)
@given(batch=batches, n=sides, dtype=dtypes, uplo=st.sampled_from(["L", "U", "l"]), seed=st.integers(0, 2**16))
def test_eigh_matches_torch_up_to_signs(batch, n, dtype, uplo, seed):
    a = np.random.default_rng(seed).standard_normal(batch + (n, n)).astype(dtype)  # not symmetric: one triangle
    L, V = fn(mg, "eigh")(mg.tensor(a), UPLO=uplo)
    tL, tV = torch.linalg.eigh(torch.tensor(a), UPLO=uplo)
    assert L.shape == tuple(tL.shape) and V.shape == tuple(tV.shape) and L.dtype == np.dtype(dtype)
    _close(L.numpy(), tL.numpy(), dtype)
    sym = (
        np.tril(a) + np.swapaxes(np.tril(a, -1), -1, -2)
        if uplo.upper() == "L"
        else (np.triu(a) + np.swapaxes(np.triu(a, 1), -1, -2))
    )
    Vn = V.numpy()
    _close((Vn * L.numpy()[..., None, :]) @ np.swapaxes(Vn, -1, -2), sym, dtype)
    _close(fn(mg, "eigvalsh")(mg.tensor(a), UPLO=uplo).numpy(), tL.numpy(), dtype)
    result = fn(mg, "eigh")(mg.tensor(a))
    assert result.eigenvalues is result[0] and result.eigenvectors is result[1]


@settings(max_examples=25, deadline=None)
@given(
    batch=batches,
    m=sides,
    n=sides,
    dtype=dtypes,
    mode=st.sampled_from(["reduced", "complete", "r"]),
    seed=st.integers(0, 2**16),
)
def test_qr_matches_torch_up_to_signs(batch, m, n, dtype, mode, seed):
    a = np.random.default_rng(seed).standard_normal(batch + (m, n)).astype(dtype)
    Q, R = fn(mg, "qr")(mg.tensor(a), mode=mode)
    tQ, tR = torch.linalg.qr(torch.tensor(a), mode=mode)
    assert Q.shape == tuple(tQ.shape) and R.shape == tuple(tR.shape)
    assert Q.dtype == R.dtype == np.dtype(dtype)
    Rn = R.numpy()
    _close(np.abs(Rn), np.abs(tR.numpy()), dtype)
    assert np.all(np.tril(Rn, -1) == 0)
    if mode != "r":
        _close(Q.numpy() @ Rn, a, dtype)
        _close(Q.numpy() @ np.swapaxes(Q.numpy(), -1, -2), tQ.numpy() @ np.swapaxes(tQ.numpy(), -1, -2), dtype)
    result = fn(mg, "qr")(mg.tensor(a))
    assert result.Q is result[0] and result.R is result[1]


PINV_KWARGS = [
    {},
    {"rcond": 1e-3},
    {"atol": 1e-9},
    {"atol": 1e-9, "rtol": 0.5},
    {"atol": -1.0},
    {"atol": 1},
    {"rtol": 0.2},
    {"hermitian": True},
    {"hermitian": True, "atol": 0.5},
]


@pytest.mark.parametrize("kwargs", PINV_KWARGS, ids=str)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_pinv_and_matrix_rank_match_torch(kwargs, dtype):
    rng = np.random.default_rng(3)
    a = rng.standard_normal((2, 4, 4))
    a[..., 3] = 1e-8 * a[..., 0]  # a tiny singular value the tolerances decide on
    a[0] = a[0] + a[0].T  # symmetric (for hermitian=True, which reads the lower triangle)
    a[1] = np.tril(a[1]) + np.tril(a[1], -1).T
    a = a.astype(dtype)
    got = fn(mg, "pinv")(mg.tensor(a), **kwargs)
    want = torch.linalg.pinv(torch.tensor(a), **kwargs)
    assert got.dtype == np.dtype(dtype)
    _close(got.numpy(), want.numpy(), dtype) if dtype == np.float64 else np.testing.assert_allclose(
        got.numpy(), want.numpy(), rtol=1e-3, atol=1e-3 * np.abs(want.numpy()).max()
    )
    rank_kwargs = {("tol" if k == "rcond" else k): v for k, v in kwargs.items()}
    rank = fn(mg, "matrix_rank")(mg.tensor(a), **rank_kwargs)
    want_rank = torch.linalg.matrix_rank(torch.tensor(a), **rank_kwargs)
    assert rank.dtype == np.int64 and rank.shape == tuple(want_rank.shape)
    assert np.array_equal(rank.numpy(), want_rank.numpy())


@pytest.mark.parametrize("shape", [(3, 5), (5, 3), (2, 1, 4)])
def test_pinv_of_rectangular_matrices_and_exact_cutoffs(shape):
    a = np.random.default_rng(0).standard_normal(shape)
    _close(fn(mg, "pinv")(mg.tensor(a)).numpy(), torch.linalg.pinv(torch.tensor(a)).numpy())
    # a singular value equal to atol is dropped (strictly greater ones are kept), as in PyTorch
    d = np.diag([1.0, 0.5])
    assert (
        fn(mg, "matrix_rank")(mg.tensor(d), atol=0.5).item()
        == torch.linalg.matrix_rank(torch.tensor(d), atol=0.5).item()
        == 1
    )
    _close(fn(mg, "pinv")(mg.tensor(d), atol=0.5).numpy(), torch.linalg.pinv(torch.tensor(d), atol=0.5).numpy())


def test_tolerance_tensors_broadcast_with_the_batch():
    a = np.ones((2, 2))
    for tol in (torch.tensor([0.0, 3.0]), torch.tensor([[0.1], [5.0]])):
        got = fn(mg, "matrix_rank")(mg.tensor(a), atol=mg.tensor(tol.numpy()))
        want = torch.linalg.matrix_rank(torch.tensor(a), atol=tol)
        assert np.array_equal(got.numpy(), want.numpy())
        got = fn(mg, "pinv")(mg.tensor(a), atol=mg.tensor(tol.numpy()))
        _close(got.numpy(), torch.linalg.pinv(torch.tensor(a), atol=tol).numpy())
    batch = np.stack([np.diag([1.0, 1e-3])] * 2)
    rtol = np.array([1e-4, 1e-2])
    _close(
        fn(mg, "pinv")(mg.tensor(batch), rtol=mg.tensor(rtol)).numpy(),
        torch.linalg.pinv(torch.tensor(batch), rtol=torch.tensor(rtol)).numpy(),
    )


@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (2, 0, 0), (0, 0)])
def test_empty_matrices(shape):
    a = np.ones(shape)
    for full in (True, False):
        got, want = fn(mg, "svd")(mg.tensor(a), full_matrices=full), torch.linalg.svd(torch.tensor(a), full)
        assert [g.shape for g in got] == [tuple(w.shape) for w in want]
    assert fn(mg, "svdvals")(mg.tensor(a)).shape == tuple(torch.linalg.svdvals(torch.tensor(a)).shape)
    for mode in ("reduced", "complete", "r"):
        got, want = fn(mg, "qr")(mg.tensor(a), mode=mode), torch.linalg.qr(torch.tensor(a), mode=mode)
        assert [g.shape for g in got] == [tuple(w.shape) for w in want]
    assert fn(mg, "pinv")(mg.tensor(a)).shape == tuple(torch.linalg.pinv(torch.tensor(a)).shape)
    assert np.array_equal(fn(mg, "matrix_rank")(mg.tensor(a)).numpy(), torch.linalg.matrix_rank(torch.tensor(a)))
    if shape[-1] == shape[-2]:
        got, want = fn(mg, "eigh")(mg.tensor(a)), torch.linalg.eigh(torch.tensor(a))
        assert [g.shape for g in got] == [tuple(w.shape) for w in want]
    x = mg.tensor(a, requires_grad=True)
    fn(mg, "svdvals")(x).sum().backward()
    assert x.grad.shape == shape and not np.any(x.grad.numpy())


def test_non_finite_inputs():
    # NaN: LinAlgError from the SVD; inf alone: NaN singular values (so pinv 0 and rank 0), as PyTorch
    inf = np.array([[np.inf, 1.0], [1.0, 1.0]])
    assert np.isnan(fn(mg, "svdvals")(mg.tensor(inf)).numpy()).all()
    assert np.isnan(torch.linalg.svdvals(torch.tensor(inf)).numpy()).all()
    assert np.isnan(fn(mg, "svd")(mg.tensor(inf)).S.numpy()).all()
    _close(fn(mg, "pinv")(mg.tensor(inf)).numpy(), torch.linalg.pinv(torch.tensor(inf)).numpy())
    assert fn(mg, "matrix_rank")(mg.tensor(inf)).item() == torch.linalg.matrix_rank(torch.tensor(inf)).item() == 0
    bad = np.array([[np.nan, 1.0], [1.0, 1.0]])
    for name in ("svd", "svdvals", "pinv", "matrix_rank"):
        with pytest.raises(LinAlgError):
            fn(mg, name)(mg.tensor(bad))
        with pytest.raises(torch.linalg.LinAlgError):
            fn(torch, name)(torch.tensor(bad))
    # eigh, pinv(hermitian=True) and qr return (NaN) values instead, as PyTorch does
    assert np.isnan(fn(mg, "eigvalsh")(mg.tensor(inf)).numpy()).all()
    assert np.isnan(torch.linalg.eigvalsh(torch.tensor(inf)).numpy()).all()
    assert np.isnan(fn(mg, "pinv")(mg.tensor(bad), hermitian=True).numpy()).all()
    assert np.isnan(fn(mg, "eigh")(mg.tensor(bad)).eigenvectors.numpy()).all()
    assert np.isnan(fn(mg, "qr")(mg.tensor(bad)).R.numpy()).any()
    good = np.stack([np.eye(2), inf])  # one bad matrix in a batch leaves the others alone
    _close(fn(mg, "eigvalsh")(mg.tensor(good)).numpy()[0], [1.0, 1.0])
    # eigh reads one triangle: a NaN in the other one changes nothing
    upper_nan = np.array([[2.0, np.nan], [1.0, 2.0]])
    _close(fn(mg, "eigvalsh")(mg.tensor(upper_nan)).numpy(), torch.linalg.eigvalsh(torch.tensor(upper_nan)).numpy())


# -- gradients --------------------------------------------------------------------------------------------


def _grads(L, program, a):
    x = (torch.tensor if L is torch else mg.tensor)(a, requires_grad=True)
    program(L, x).backward()
    return _np(x.grad)


def _compare_grads(program, a):
    _close(_grads(mg, program, a), _grads(torch, program, a))


def _weights(L, shape, seed):
    return (torch.tensor if L is torch else mg.tensor)(np.random.default_rng(seed).standard_normal(shape))


@pytest.mark.parametrize("shape", [(4, 3), (3, 5), (2, 3, 3), (3, 4, 2)])
@pytest.mark.parametrize("full", [True, False])
def test_svd_gradients_match_torch(shape, full):
    a = np.random.default_rng(1).standard_normal(shape)

    def program(L, A):
        U, S, Vh = fn(L, "svd")(A, full_matrices=full)
        k = S.shape[-1]
        Uk, Vk = U[..., :, :k], Vh[..., :k, :]
        rec = (Uk * S[..., None, :]) @ Vk
        P = Uk[..., :, :1] @ Uk[..., :, :1].mT
        Pv = Vk.mT @ Vk
        return (rec * _weights(L, shape, 2)).sum() + (P**3).sum() + (S**3).sum() + (Pv**3).sum()

    _compare_grads(program, a)
    _compare_grads(lambda L, A: (fn(L, "svdvals")(A) ** 2).sum(), a)


def test_svd_drops_the_gradient_of_the_completed_columns():
    a = np.random.default_rng(0).standard_normal((4, 2))
    _compare_grads(lambda L, A: (fn(L, "svd")(A).U[:, 2:] ** 2).sum() + fn(L, "svd")(A).S.sum(), a)


def test_repeated_singular_values_give_non_finite_vector_gradients_as_torch():
    def through_vectors(L, A):
        U, S, Vh = fn(L, "svd")(A, full_matrices=False)
        return (U @ Vh).sum()

    for a in (np.eye(3), np.zeros((3, 2))):
        mine, theirs = _grads(mg, through_vectors, a), _grads(torch, through_vectors, a)
        assert not np.isfinite(mine).all() and not np.isfinite(theirs).all()
    # the singular values alone stay differentiable there
    _compare_grads(lambda L, A: fn(L, "svdvals")(A).sum(), np.eye(3))


@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (1, 1)])
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh_gradients_match_torch(shape, uplo):
    a = np.random.default_rng(4).standard_normal(shape)  # not symmetric: PyTorch's symmetric gradient

    def program(L, A):
        vals, V = fn(L, "eigh")(A, UPLO=uplo)
        P = V[..., :, :1] @ V[..., :, :1].mT
        return (vals**3).sum() + ((P * _weights(L, shape, 5)).sum()) ** 2 + (V.abs() ** 3).sum()

    _compare_grads(program, a)
    _compare_grads(lambda L, A: (fn(L, "eigvalsh")(A, UPLO=uplo) ** 3).sum(), a)


@pytest.mark.parametrize("shape", [(4, 3), (3, 3), (3, 5), (2, 3, 4), (2, 5, 2)])
@pytest.mark.parametrize("mode", ["reduced", "complete"])
def test_qr_gradients_match_torch(shape, mode):
    if mode == "complete" and shape[-2] > shape[-1]:
        return
    a = np.random.default_rng(6).standard_normal(shape)

    def program(L, A):
        Q, R = fn(L, "qr")(A, mode=mode)
        return ((Q @ R) * _weights(L, shape, 7)).sum() + (R**2).sum() + ((Q @ Q.mT) ** 3).sum() + (Q**3).sum()

    _compare_grads(program, a)


def test_qr_backward_errors_match_torch():
    for L in (torch, mg):
        for mode, shape in (("r", (4, 3)), ("complete", (4, 3))):
            x = (torch.tensor if L is torch else mg.tensor)(np.ones(shape) + np.eye(*shape), requires_grad=True)
            _, R = fn(L, "qr")(x, mode=mode)
            with pytest.raises(RuntimeError):
                R.sum().backward()


@pytest.mark.parametrize("shape, hermitian", [((4, 3), False), ((3, 5), False), ((2, 3, 3), True), ((3, 3), False)])
def test_pinv_gradients_match_torch(shape, hermitian):
    a = np.random.default_rng(8).standard_normal(shape)
    if hermitian:
        a = a + np.swapaxes(a, -1, -2)
    out_shape = shape[:-2] + (shape[-1], shape[-2])
    _compare_grads(lambda L, A: ((fn(L, "pinv")(A, hermitian=hermitian) * _weights(L, out_shape, 9)) ** 2).sum(), a)
    # PyTorch's formula stays finite where singular values repeat
    _compare_grads(lambda L, A: (fn(L, "pinv")(A) ** 3).sum(), np.eye(3))


def _spread_mg(rng, shape, symmetric=False):
    return mg.tensor(_spread(rng, shape, symmetric=symmetric), requires_grad=True)


def test_gradcheck_first_and_second_order():
    rng = np.random.default_rng(10)
    for shape in ((3, 2), (2, 3), (2, 3, 3)):
        a = _spread_mg(rng, shape)

        def svd_program(A):
            U, S, Vh = decompositions.svd(A, full_matrices=False)
            return S, U[..., :, :1] @ U[..., :, :1].mT, Vh.mT @ Vh[..., :, :1] * Vh[..., :1, :1]

        assert mg.autograd.gradcheck(svd_program, [a])

        def svd_grad(A):
            with mg.enable_grad():
                U, S, Vh = decompositions.svd(A, full_matrices=False)
                loss = (S**3).sum() + ((U[..., :, :1] @ U[..., :, :1].mT) ** 2 * 1.5).sum()
                return mg.autograd.grad(loss, [A], create_graph=True)[0]

        assert mg.autograd.gradcheck(svd_grad, [a])

        def qr_grad(A):
            with mg.enable_grad():
                Q, R = decompositions.qr(A)
                loss = ((Q @ Q.mT) ** 2).sum() + (R**4).sum()
                return mg.autograd.grad(loss, [A], create_graph=True)[0]

        assert mg.autograd.gradcheck(qr_grad, [a])

        def pinv_grad(A):
            with mg.enable_grad():
                return mg.autograd.grad((decompositions.pinv(A) ** 3).sum(), [A], create_graph=True)[0]

        assert mg.autograd.gradcheck(pinv_grad, [a])
    # gradcheck perturbs one entry at a time: the input is symmetrized, as eigh reads one triangle
    s = _spread_mg(rng, (2, 3, 3), symmetric=True)

    def eigh_grad(A):
        with mg.enable_grad():
            vals, V = decompositions.eigh((A + A.mT) / 2)
            loss = (vals**3).sum() + ((V[..., :, :1] @ V[..., :, :1].mT) ** 2).sum()
            return mg.autograd.grad(loss, [A], create_graph=True)[0]

    assert mg.autograd.gradcheck(eigh_grad, [s])
    assert mg.autograd.gradcheck(lambda A: decompositions.eigvalsh((A + A.mT) / 2) ** 2, [s])


def test_second_derivatives_match_torch():
    a = _spread(np.random.default_rng(11), (3, 2))

    def program(L, A):
        g = (torch.autograd.grad if L is torch else mg.autograd.grad)(
            (fn(L, "svdvals")(A) ** 3).sum(), [A], create_graph=True
        )[0]
        return (g**2).sum()

    _compare_grads(program, a)


def test_results_without_grad_record_nothing():
    a = mg.tensor(np.eye(2))
    for name in ("svdvals", "eigvalsh", "pinv"):
        assert not fn(mg, name)(a).requires_grad
    x = mg.tensor(np.eye(2) + 1, requires_grad=True)
    assert fn(mg, "svdvals")(x).requires_grad and fn(mg, "eigh")(x).eigenvectors.requires_grad
    assert not fn(mg, "matrix_rank")(x).requires_grad


# -- exception classes --------------------------------------------------------------------------------------

ERRORS = {
    "svd_1d": lambda L: L.linalg.svd(L.ones(3)),
    "svd_int": lambda L: L.linalg.svd(L.ones(2, 2, dtype=L.int64)),
    "svd_bool": lambda L: L.linalg.svd(L.ones(2, 2, dtype=L.bool)),
    "svd_half": lambda L: L.linalg.svd(L.ones(2, 2, dtype=L.float16)),
    "svd_full_matrices_int": lambda L: L.linalg.svd(L.ones(2, 2), full_matrices=1),
    "svd_full_matrices_none": lambda L: L.linalg.svd(L.ones(2, 2), full_matrices=None),
    "svd_driver_on_cpu": lambda L: L.linalg.svd(L.ones(2, 2), driver="gesvd"),
    "svd_list": lambda L: L.linalg.svd([[1.0, 2.0]]),
    "svd_nan": lambda L: L.linalg.svd(L.tensor([[float("nan"), 1.0], [1.0, 1.0]])),
    "svdvals_driver_on_cpu": lambda L: L.linalg.svdvals(L.ones(2, 2), driver="gesvd"),
    "svdvals_driver_int": lambda L: L.linalg.svdvals(L.ones(2, 2), driver=3),
    "svdvals_0d": lambda L: L.linalg.svdvals(L.tensor(1.0)),
    "svdvals_int": lambda L: L.linalg.svdvals(L.ones(2, 2, dtype=L.int32)),
    "svdvals_half": lambda L: L.linalg.svdvals(L.ones(2, 2, dtype=L.float16)),
    "eigh_not_square": lambda L: L.linalg.eigh(L.ones(3, 2)),
    "eigh_1d": lambda L: L.linalg.eigh(L.ones(3)),
    "eigh_int": lambda L: L.linalg.eigh(L.ones(3, 3, dtype=L.int32)),
    "eigh_half": lambda L: L.linalg.eigh(L.ones(3, 3, dtype=L.float16)),
    "eigh_uplo": lambda L: L.linalg.eigh(L.ones(3, 3), UPLO="X"),
    "eigh_uplo_int": lambda L: L.linalg.eigh(L.ones(3, 3), UPLO=1),
    "eigvalsh_not_square": lambda L: L.linalg.eigvalsh(L.ones(2, 3)),
    "eigvalsh_uplo": lambda L: L.linalg.eigvalsh(L.ones(3, 3), UPLO="upper"),
    "qr_mode": lambda L: L.linalg.qr(L.eye(3), mode="x"),
    "qr_mode_int": lambda L: L.linalg.qr(L.eye(3), mode=1),
    "qr_int": lambda L: L.linalg.qr(L.ones(3, 3, dtype=L.int64)),
    "qr_half": lambda L: L.linalg.qr(L.ones(3, 3, dtype=L.float16)),
    "qr_1d": lambda L: L.linalg.qr(L.ones(3)),
    "pinv_int": lambda L: L.linalg.pinv(L.ones(2, 2, dtype=L.int64)),
    "pinv_half": lambda L: L.linalg.pinv(L.ones(2, 2, dtype=L.float16)),
    "pinv_1d": lambda L: L.linalg.pinv(L.ones(3)),
    "pinv_nan": lambda L: L.linalg.pinv(L.tensor([[float("nan"), 1.0], [1.0, 1.0]])),
    "pinv_hermitian_not_square": lambda L: L.linalg.pinv(L.ones(2, 3), hermitian=True),
    "pinv_hermitian_str": lambda L: L.linalg.pinv(L.ones(2, 2), hermitian="x"),
    "pinv_rcond_and_rtol": lambda L: L.linalg.pinv(L.ones(2, 2), 1e-3, rtol=0.1),
    "pinv_atol_str": lambda L: L.linalg.pinv(L.ones(2, 2), atol="a"),
    "pinv_atol_not_broadcasting": lambda L: L.linalg.pinv(L.ones(2, 2, 2), atol=L.ones(3)),
    "matrix_rank_int": lambda L: L.linalg.matrix_rank(L.ones(2, 2, dtype=L.int64)),
    "matrix_rank_half": lambda L: L.linalg.matrix_rank(L.ones(2, 2, dtype=L.float16)),
    "matrix_rank_1d": lambda L: L.linalg.matrix_rank(L.ones(3)),
    "matrix_rank_nan": lambda L: L.linalg.matrix_rank(L.tensor([[float("nan"), 1.0], [1.0, 1.0]])),
    "matrix_rank_hermitian_not_square": lambda L: L.linalg.matrix_rank(L.ones(2, 3), hermitian=True),
    "matrix_rank_tol_and_atol": lambda L: L.linalg.matrix_rank(L.ones(2, 2), 0.1, atol=0.1),
}


@pytest.mark.parametrize("name", ERRORS)
def test_bad_inputs_raise_torch_classes(name):
    call = ERRORS[name]
    assert_same_class_as_torch(name, lambda L: call(MG if L is mg else L))
