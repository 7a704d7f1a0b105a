# ruff: noqa: N803, A006  (PyTorch's argument names A, B, input)
"""Fuzz-table cases of ``minigrad/linalg/solvers.py``: ``linalg.inv``, ``inv_ex``, ``solve``, ``solve_ex``,
``cholesky``, ``cholesky_ex``, ``solve_triangular``, and the top-level ``inverse`` and (deprecated)
``cholesky``.

Rules and helpers as in ``tests/test_fuzz_public_api.py``. NotImplementedError
is PyTorch's class for a dtype a kernel lacks (float16 LU, Cholesky and
triangular solves; integer triangular solves) and ours for complex matrices.
"""

from __future__ import annotations

from minigrad.linalg import solvers
from tests.test_fuzz_public_api import NOT_TENSORS, Fresh, case, ft, it

NOT_IMPLEMENTED = (NotImplementedError,)
BAD_FLAGS = ["yes", 2.5, None, ft(2)]
WORDS = ("square", "dimensions", "floating", "dtype", "shapes", "singular", "positive-definite", "batch",
         "supported", "implemented", "vector")


def square(n=3, batch=(), dtype=None, kind="general"):
    """A fresh float tensor of ``batch + (n, n)``: well conditioned, positive or negative definite, or singular."""
    import numpy as np  # noqa: PLC0415

    import minigrad as mg  # noqa: PLC0415

    def make():
        base = np.eye(n) * 3 + np.arange(n * n).reshape(n, n) % 3 * 0.25
        if kind == "spd":
            base = base @ base.T
        elif kind == "negative":
            base = -(base @ base.T)
        elif kind == "singular":
            base = np.ones((n, n))
        return mg.tensor(np.broadcast_to(base, batch + (n, n)).copy(), dtype=dtype or mg.float32)

    return Fresh(f"{kind}{batch + (n, n)}", make)


BAD_MATRICES = NOT_TENSORS + [ft(3), ft(2, 3), it([[1, 2], [3, 4]]), ft(2, 2, dtype="float16"),
                              square(3, kind="singular")]

CASES = [
    case("linalg.inv", solvers.inv, dict(A=square(3, (2,))), dict(A=BAD_MATRICES), extra=NOT_IMPLEMENTED,
         names=("inv", "A", *WORDS)),
    case("linalg.inv_ex", lambda A, check_errors: solvers.inv_ex(A, check_errors=check_errors),
         dict(A=square(3, (2,)), check_errors=False),
         dict(A=BAD_MATRICES[:-1], check_errors=BAD_FLAGS), extra=NOT_IMPLEMENTED,
         names=("inv_ex", "A", "check_errors", *WORDS)),
    case("linalg.solve", lambda A, B, left: solvers.solve(A, B, left=left),
         dict(A=square(3, (2,)), B=ft(2, 3, 4), left=True),
         dict(A=BAD_MATRICES, B=NOT_TENSORS + [ft(4), ft(), ft(5, 3, 1), ft(2, 3, 4, dtype="float64")],
              left=BAD_FLAGS), extra=NOT_IMPLEMENTED, names=("solve", "A", "B", "left", *WORDS)),
    case("linalg.solve_ex", lambda A, B, left, check_errors: solvers.solve_ex(A, B, left=left,
                                                                             check_errors=check_errors),
         dict(A=square(3), B=ft(3), left=True, check_errors=True),
         dict(A=BAD_MATRICES, B=NOT_TENSORS + [ft(4), ft(), it([1, 2, 3])], left=[*BAD_FLAGS, False],
              check_errors=BAD_FLAGS), extra=NOT_IMPLEMENTED,
         names=("solve_ex", "A", "B", "left", "check_errors", *WORDS)),
    case("linalg.cholesky", lambda A, upper: solvers.cholesky(A, upper=upper),
         dict(A=square(3, (2,), kind="spd"), upper=True),
         dict(A=[*BAD_MATRICES, square(3, kind="negative")], upper=BAD_FLAGS), extra=NOT_IMPLEMENTED,
         names=("cholesky", "A", "upper", *WORDS)),
    case("linalg.cholesky_ex", lambda A, upper, check_errors: solvers.cholesky_ex(A, upper=upper,
                                                                                  check_errors=check_errors),
         dict(A=square(3, kind="spd"), upper=False, check_errors=True),
         dict(A=[*BAD_MATRICES, square(3, kind="negative")], upper=BAD_FLAGS, check_errors=BAD_FLAGS),
         extra=NOT_IMPLEMENTED,
         names=("cholesky_ex", "A", "upper", "check_errors", *WORDS)),
    case("linalg.solve_triangular",
         lambda A, B, upper, left, unitriangular: solvers.solve_triangular(A, B, upper=upper, left=left,
                                                                           unitriangular=unitriangular),
         dict(A=square(3, (2, 1)), B=ft(3, 3, 2), upper=True, left=True, unitriangular=False),
         dict(A=NOT_TENSORS + [ft(3), ft(2, 3), it([[1, 2], [3, 4]]), ft(3, 3, dtype="float16")],
              B=NOT_TENSORS + [ft(3), ft(4, 2), ft(3, 1, 3, 2)], upper=BAD_FLAGS, left=[*BAD_FLAGS, False],
              unitriangular=BAD_FLAGS),
         extra=NOT_IMPLEMENTED, names=("solve_triangular", "A", "B", "upper", "left", "unitriangular", *WORDS)),
    case("mg.inverse", solvers.inverse, dict(input=square(2, (3,))), dict(input=BAD_MATRICES), extra=NOT_IMPLEMENTED,
         names=("inverse", "inv", "input", *WORDS)),
    case("mg.cholesky", lambda input, upper: solvers.legacy_cholesky(input, upper),
         dict(input=square(3, kind="spd"), upper=False),
         dict(input=[*BAD_MATRICES, square(3, kind="negative")], upper=BAD_FLAGS), extra=NOT_IMPLEMENTED,
         names=("cholesky", "input", "upper", *WORDS)),
]
