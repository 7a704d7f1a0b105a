# ruff: noqa: N803  (every program takes PyTorch's conventional name F for nn.functional)
"""Op cases for the ops of ``minigrad.linalg.solvers``: ``Inv``, ``Solve`` (and its transposed form, for
``left=False``), ``SolveTriangular`` and ``Cholesky``.

Each case runs by gradcheck and against PyTorch (see ``op_cases.py``). The
functions are reached through ``_linalg(lib)`` (``torch.linalg``, or the
module that defines minigrad's) until ``minigrad.linalg`` is wired. Matrices
are shifted towards the identity (or made positive definite) where the op
needs them invertible. Programs named ``*_double_backward`` return
first-order gradients taken with ``create_graph=True``.
"""

from __future__ import annotations

from hypothesis import strategies as st

from minigrad.linalg import solvers
from tests.minigrad.ops.cases_math import grads_of
from tests.minigrad.ops.op_cases import case


def _linalg(lib):
    return lib.linalg if lib.__name__ == "torch" else solvers


def _invertible(lib, a):
    """``0.1 * a + I``: diagonally dominant for entries in [-2, 2] and n <= 3."""
    return a * 0.1 + lib.eye(a.shape[-1], dtype=a.dtype)


def _positive_definite(lib, a):
    return a @ a.mT + lib.eye(a.shape[-1], dtype=a.dtype)


_batch = st.lists(st.integers(1, 2), max_size=1).map(tuple)
square = st.builds(lambda batch, n: ((*batch, n, n),), _batch, st.integers(1, 3))
square_twice = st.builds(lambda batch, n: ((*batch, n, n),) * 2, _batch, st.integers(1, 3))
# A (batch, n, n) and B (batch', n, k) or, for left=False, (batch', k, n): batches broadcast
systems = st.builds(lambda b1, b2, n, k: ((*b1, n, n), (*b2, n, k)), _batch, _batch, st.integers(1, 3),
                    st.integers(1, 2))
# (B has 3 dims, so it is never taken for a vector, which left=False refuses)
systems_right = st.builds(lambda b1, b2, n, k: ((*b1, n, n), (b2, k, n)), _batch, st.integers(1, 2),
                          st.integers(1, 3), st.integers(1, 2))
systems_weighted = st.builds(lambda n, k: ((n, n), (n, k), (n, k)), st.integers(1, 3), st.integers(1, 2))

case("linalg_inv", lambda lib, F, a: _linalg(lib).inv(_invertible(lib, a)), square)
case("linalg_inv", lambda lib, F, a: _linalg(lib).inv_ex(_invertible(lib, a)).inverse, square, name="linalg_inv_ex")
case("linalg_inv", lambda lib, F, a, w: grads_of(
    lib, lambda: (_linalg(lib).inv(_invertible(lib, a)) * w).sum(), a)[0], square_twice,
    name="linalg_inv_double_backward")

case("linalg_solve", lambda lib, F, a, b: _linalg(lib).solve(_invertible(lib, a), b), systems)
case("linalg_solve", lambda lib, F, a, b: _linalg(lib).solve(_invertible(lib, a), b, left=False), systems_right,
     name="linalg_solve_left_false")
case("linalg_solve", lambda lib, F, a, b, w: lib.cat([g.flatten() for g in grads_of(
    lib, lambda: (_linalg(lib).solve(_invertible(lib, a), b) * w).sum(), (a, b))]), systems_weighted,
    name="linalg_solve_double_backward")

for _upper in (False, True):
    for _left in (False, True):
        for _unit in (False, True):
            case("linalg_solve_triangular",
                 lambda lib, F, a, b, upper=_upper, left=_left, unit=_unit: _linalg(lib).solve_triangular(
                     _invertible(lib, a), b, upper=upper, left=left, unitriangular=unit),
                 systems if _left else systems_right,
                 name=f"linalg_solve_triangular_{'upper' if _upper else 'lower'}_{'left' if _left else 'right'}"
                      f"{'_unit' if _unit else ''}")
case("linalg_solve_triangular", lambda lib, F, a, b, w: lib.cat([g.flatten() for g in grads_of(
    lib, lambda: (_linalg(lib).solve_triangular(_invertible(lib, a), b, upper=True) * w).sum(), (a, b))]),
    systems_weighted, name="linalg_solve_triangular_double_backward")

for _upper in (False, True):
    case("linalg_cholesky", lambda lib, F, a, upper=_upper: _linalg(lib).cholesky(_positive_definite(lib, a),
                                                                                  upper=upper),
         square, name=f"linalg_cholesky{'_upper' if _upper else ''}")
case("linalg_cholesky", lambda lib, F, a: _linalg(lib).cholesky_ex(_positive_definite(lib, a)).L, square,
     name="linalg_cholesky_ex")
case("linalg_cholesky", lambda lib, F, a, w: grads_of(
    lib, lambda: (_linalg(lib).cholesky(_positive_definite(lib, a)) * w).sum(), a)[0], square_twice,
    name="linalg_cholesky_double_backward")
