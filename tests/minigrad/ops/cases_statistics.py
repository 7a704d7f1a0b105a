# ruff: noqa: N803  (every program takes PyTorch's conventional name F for nn.functional)
"""Op cases for the determinant ops (``Det``, ``SlogDet``, ``Inverse`` of ``minigrad.ops.determinants``) and
``NanMedianAll`` (``minigrad.ops.statistics``).

Each case runs by gradcheck and against PyTorch (see ``op_cases.py``). The
functions are reached through ``_fn(lib, name)`` (torch's, or minigrad's from
the module that defines it) until they are wired into ``minigrad``'s namespace.
Matrices are shifted towards the identity (or made positive definite) where
the op needs them invertible. Programs named ``*_double_backward`` return
first-order gradients taken with ``create_graph=True``.
"""

from __future__ import annotations

from hypothesis import strategies as st

from minigrad.ops import determinants, statistics
from tests.minigrad.ops.cases_core import one
from tests.minigrad.ops.cases_math import grads_of
from tests.minigrad.ops.op_cases import case


def _fn(lib, name):
    if lib.__name__ == "torch":
        return getattr(lib, name)
    return getattr(statistics if name == "nanmedian" else determinants, name)


square = st.builds(lambda batch, n: ((*batch, n, n),), st.lists(st.integers(1, 2), max_size=1), st.integers(1, 3))
# (PyTorch's second derivative of a 1 x 1 det is no gradient at all, where minigrad's is 0)
square_twice = st.builds(lambda batch, n: ((*batch, n, n),) * 2, st.lists(st.integers(1, 2), max_size=1),
                         st.integers(2, 3))


def _invertible(lib, a):
    """``0.1 * a + I``: diagonally dominant for entries in [-2, 2] and n <= 3."""
    return a * 0.1 + lib.eye(a.shape[-1], dtype=a.dtype)


def _positive_definite(lib, a):
    return a @ a.mT + lib.eye(a.shape[-1], dtype=a.dtype)


# det's gradient at an exactly singular matrix is 0 by convention (PyTorch's), not its limit: invertible inputs
case("det", lambda lib, F, a: _fn(lib, "det")(_invertible(lib, a) * 2), square)
case("det", lambda lib, F, a: _fn(lib, "det")(-_positive_definite(lib, a)), square, name="det_of_any_sign")
case("det", lambda lib, F, a, w: grads_of(
    lib, lambda: (_fn(lib, "det")(_invertible(lib, a)) * w.sum((-2, -1))).sum(), a)[0],
    square_twice, name="det_double_backward")
case("slogdet", lambda lib, F, a: _fn(lib, "slogdet")(_positive_definite(lib, a)).logabsdet, square)
case("slogdet", lambda lib, F, a: _fn(lib, "logdet")(_positive_definite(lib, a)), square, name="logdet")
case("slogdet", lambda lib, F, a: _fn(lib, "slogdet")(_invertible(lib, a)).logabsdet, square,
     name="slogdet_of_any_sign")
case("inverse", lambda lib, F, a: _fn(lib, "matrix_power")(_invertible(lib, a), -1), square)
case("inverse", lambda lib, F, a: _fn(lib, "matrix_power")(_invertible(lib, a), -3), square,
     name="matrix_power_negative")
case("inverse", lambda lib, F, a, w: grads_of(
    lib, lambda: (_fn(lib, "matrix_power")(_invertible(lib, a), -2) * w).sum(), a)[0],
    square_twice, name="inverse_double_backward")
case("nanmedian_all", lambda lib, F, a: _fn(lib, "nanmedian")(a), one(), distinct=True)
