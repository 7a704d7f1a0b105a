# ruff: noqa: N803  (every program takes PyTorch's conventional name F for nn.functional)
"""Op cases for the decompositions of ``minigrad.linalg.decompositions``: ``SVD``, ``Eigh``, ``QR`` and ``PInv``.

Each case runs by gradcheck and against PyTorch (see ``op_cases.py``). The
functions are reached through ``_linalg(lib)`` (``torch.linalg``, or the
minigrad module that defines them) until ``minigrad.linalg`` is wired.
Decompositions are unique only up to signs, so every program returns
gauge-invariant quantities: singular values and eigenvalues, projectors onto
singular/eigen vectors (``u u^T``), reconstructions, ``Q R`` and ``|R|``-free
products. Inputs are ``0.1 * a + D`` with ``D`` a diagonal of 1, 3, 5, ...: the
singular values (eigenvalues) stay apart and ``R`` invertible, where the
gradients are defined. Programs named ``*_double_backward`` return first-order
gradients taken with ``create_graph=True``.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from minigrad.linalg import decompositions
from tests.minigrad.ops.cases_math import grads_of
from tests.minigrad.ops.op_cases import case


def _linalg(lib):
    return lib.linalg if lib.__name__ == "torch" else decompositions


def _spread(lib, a, symmetric=False):
    """``0.1 * a + D`` (``0.05 * (a + a^T)`` when ``symmetric``), ``D`` diagonal with 1, 3, 5, ..."""
    m, n = a.shape[-2:]
    d = np.zeros((m, n))
    np.fill_diagonal(d, 1.0 + 2.0 * np.arange(min(m, n)))
    base = (a + a.mT) * 0.05 if symmetric else a * 0.1
    return base + lib.tensor(d, dtype=a.dtype, device=a.device)


def _matrices(square=False, min_side=1):
    """One shape ``(*batch, m, n)``: batch of at most one dim, sides up to 3 (``m == n`` when ``square``)."""
    batch = st.lists(st.integers(1, 2), max_size=1)
    side = st.integers(min_side, 3)
    if square:
        return st.builds(lambda b, n: ((*b, n, n),), batch, side)
    return st.builds(lambda b, m, n: ((*b, m, n),), batch, side, side)


def _first_projector(vectors, axis):
    """``v v^T`` of the first column (axis -1) or row (axis -2) of ``vectors``: independent of its sign."""
    v = vectors[..., :, :1] if axis == -1 else vectors[..., :1, :].mT
    return v @ v.mT


def _svd_program(lib, a, full_matrices):
    U, S, Vh = _linalg(lib).svd(_spread(lib, a), full_matrices=full_matrices)
    k = S.shape[-1]
    Uk, Vhk = U[..., :, :k], Vh[..., :k, :]
    return S, _first_projector(U, -1), _first_projector(Vh, -2), (Uk * S[..., None, :]) @ Vhk


case(
    "svd",
    lambda lib, F, a, params: _svd_program(lib, a, params),
    _matrices(),
    extra={"params": lambda s: st.booleans()},
)
case("svd", lambda lib, F, a: _linalg(lib).svdvals(_spread(lib, a)), _matrices(), name="svdvals")


def _svd_grad(lib, a, w):
    def loss():
        U, S, Vh = _linalg(lib).svd(_spread(lib, a), full_matrices=False)
        return (S**2).sum() + (_first_projector(U, -1) * w[..., :, :1]).sum() + (_first_projector(Vh, -2)).sum()

    return grads_of(lib, loss, a)[0]


case(
    "svd",
    lambda lib, F, a, w: _svd_grad(lib, a, w),
    _matrices(min_side=2).map(lambda s: (s[0], s[0][:-1] + (s[0][-2],))),
    name="svd_double_backward",
)


def _eigh_program(lib, a, uplo):
    L, V = _linalg(lib).eigh(_spread(lib, a, symmetric=True), UPLO=uplo)
    return L, _first_projector(V, -1), _first_projector(V[..., :, -1:], -1)


case(
    "eigh",
    lambda lib, F, a, params: _eigh_program(lib, a, params),
    _matrices(square=True),
    extra={"params": lambda s: st.sampled_from(["L", "U"])},
)
# (a non-symmetric input gets PyTorch's symmetric gradient, which finite differences do not see: checked
# against PyTorch in tests/minigrad/linalg/test_decompositions.py)
case(
    "eigh",
    lambda lib, F, a: _linalg(lib).eigvalsh(_spread(lib, a, symmetric=True), UPLO="U") ** 3,
    _matrices(square=True),
    name="eigvalsh",
)


def _eigh_grad(lib, a):
    def loss():
        L, V = _linalg(lib).eigh(_spread(lib, a, symmetric=True))
        return (L**3).sum() + (_first_projector(V, -1) ** 2 * lib.arange(1.0, a.shape[-1] + 1, dtype=a.dtype)).sum()

    return grads_of(lib, loss, a)[0]


case("eigh", lambda lib, F, a: _eigh_grad(lib, a), _matrices(square=True), name="eigh_double_backward")


def _qr_program(lib, a, mode):
    m, n = a.shape[-2:]
    if mode == "complete" and m > n:
        mode = "reduced"  # not differentiable there (checked in tests/minigrad/linalg/test_decompositions.py)
    Q, R = _linalg(lib).qr(_spread(lib, a), mode=mode)
    # LAPACK flips the signs where a column is already triangular: only sign-free quantities are smooth
    return Q @ Q.mT, R**2, Q[..., :, :1] @ R[..., :1, :], Q @ R


case(
    "qr",
    lambda lib, F, a, params: _qr_program(lib, a, params),
    _matrices(),
    extra={"params": lambda s: st.sampled_from(["reduced", "complete"])},
)


def _qr_grad(lib, a, w):
    def loss():
        Q, R = _linalg(lib).qr(_spread(lib, a))
        return ((Q @ Q.mT) * w).sum() + (R**3).abs().sum()

    return grads_of(lib, loss, a)[0]


case(
    "qr",
    lambda lib, F, a, w: _qr_grad(lib, a, w),
    _matrices().map(lambda s: (s[0], s[0][:-1] + (s[0][-2],))),
    name="qr_double_backward",
)


def _pinv_program(lib, a, hermitian):
    return _linalg(lib).pinv(_spread(lib, a, symmetric=hermitian), hermitian=hermitian)


case(
    "pinv",
    lambda lib, F, a, params: _pinv_program(lib, a, params),
    _matrices(square=True),
    extra={"params": lambda s: st.booleans()},
)
case("pinv", lambda lib, F, a: _linalg(lib).pinv(_spread(lib, a)), _matrices(), name="pinv_rectangular")
# a rank-1 input: PyTorch's formula (not the SVD's) keeps the gradient finite at repeated (zero) singular values
case(
    "pinv",
    # An outer product u v^T (entries kept away from 0): its other singular values are rounding noise far below
    # the cutoff, so the pseudo-inverse is v u^T / (|u|^2 |v|^2), smooth in ``a``. (``u v^T + 3`` was rank two,
    # near-singular for some draws, and its gradients there were noise of either sign.)
    lambda lib, F, a: _linalg(lib).pinv((a[..., :, :1] + 3.0) @ (a[..., :1, :] + 3.0), rtol=1e-6),
    _matrices(min_side=2),
    name="pinv_rank_one",
    low=0.5,
)


def _pinv_grad(lib, a, w):
    return grads_of(lib, lambda: (_linalg(lib).pinv(_spread(lib, a)) * w).sum() ** 2, a)[0]


case(
    "pinv",
    lambda lib, F, a, w: _pinv_grad(lib, a, w),
    _matrices().map(lambda s: (s[0], s[0][:-2] + (s[0][-1], s[0][-2]))),
    name="pinv_double_backward",
)
