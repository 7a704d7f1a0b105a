# ruff: noqa: N803  (the table's lambdas take PyTorch's argument names: messages name them)
"""Fuzz-table cases of ``minigrad/linalg/decompositions.py``: ``svd``, ``svdvals``, ``eigh``, ``eigvalsh``,
``qr``, ``pinv``, ``matrix_rank``; rules and helpers as in ``tests/test_fuzz_public_api.py``.

NotImplementedError is PyTorch's class for a dtype the LAPACK kernels lack
(float16 decompositions, integer ``eigh``) and minigrad's for complex input.
LinAlgError (a RuntimeError) is raised for NaN input to the SVD-based names.
"""

from __future__ import annotations

from minigrad.linalg import decompositions
from tests.test_fuzz_public_api import NOT_TENSORS, Fresh, case, ft, it

NOT_IMPLEMENTED = (NotImplementedError,)
BAD_FLAGS = ["yes", 2.5, None, 1]
BAD_MATRICES = NOT_TENSORS + [ft(), ft(3), it([[1, 2], [3, 4]])]


def square(n=3, batch=()):
    """A fresh symmetric, well-conditioned float32 tensor of ``batch + (n, n)``."""
    import numpy as np  # noqa: PLC0415

    import minigrad as mg  # noqa: PLC0415

    def make():
        base = np.arange(n * n).reshape(n, n) % 3 * 0.25
        data = np.broadcast_to(np.eye(n) * 3 + base + base.T, batch + (n, n))
        return mg.tensor(data, dtype=mg.float32)

    return Fresh(f"square{batch + (n, n)}", make)


CASES = [
    case(
        "linalg.svd",
        lambda A, full_matrices, driver: decompositions.svd(A, full_matrices, driver=driver),
        dict(A=ft(2, 3, 4), full_matrices=True, driver=None),
        dict(A=BAD_MATRICES + [ft(2, 2, dtype="float16")], full_matrices=BAD_FLAGS, driver=["gesvd", 3]),
        extra=NOT_IMPLEMENTED,
        names=("A", "svd", "dimensions", "driver"),
    ),
    case(
        "linalg.svdvals",
        lambda A, driver: decompositions.svdvals(A, driver=driver),
        dict(A=ft(3, 2), driver=None),
        dict(A=BAD_MATRICES, driver=["gesvd", 3, 2.5]),
        extra=NOT_IMPLEMENTED,
        names=("A", "svd", "dimensions", "driver"),
    ),
    case(
        "linalg.eigh",
        decompositions.eigh,
        dict(A=square(3, (2,)), UPLO="L"),
        dict(A=BAD_MATRICES + [ft(2, 3)], UPLO=["X", "lower", 1, None]),
        extra=NOT_IMPLEMENTED,
        names=("A", "eigh", "square", "dimensions", "UPLO"),
    ),
    case(
        "linalg.eigvalsh",
        decompositions.eigvalsh,
        dict(A=square(2), UPLO="U"),
        dict(A=BAD_MATRICES + [ft(2, 3)], UPLO=["X", 1, None]),
        extra=NOT_IMPLEMENTED,
        names=("A", "eigvalsh", "square", "dimensions", "UPLO"),
    ),
    case(
        "linalg.qr",
        decompositions.qr,
        dict(A=ft(2, 4, 3), mode="reduced"),
        dict(A=BAD_MATRICES, mode=["x", "full", 1, None]),
        extra=NOT_IMPLEMENTED,
        names=("A", "qr", "dimensions", "mode"),
    ),
    case(
        "linalg.pinv",
        lambda A, atol, rtol, hermitian: decompositions.pinv(A, atol=atol, rtol=rtol, hermitian=hermitian),
        dict(A=square(3, (2,)), atol=None, rtol=1e-5, hermitian=True),
        dict(A=BAD_MATRICES, atol=["a", [1.0], ft(5)], rtol=["a", ft(4)], hermitian=BAD_FLAGS),
        extra=NOT_IMPLEMENTED,
        names=("A", "pinv", "dimensions", "tolerances", "float32"),
    ),
    case(
        "linalg.pinv(rcond)",
        lambda A, rcond: decompositions.pinv(A, rcond),
        dict(A=ft(2, 3), rcond=1e-3),
        dict(A=BAD_MATRICES, rcond=["a", object()]),
        extra=NOT_IMPLEMENTED,
        names=("A", "pinv", "dimensions", "float32"),
    ),
    case(
        "mg.pinverse",
        lambda input, rcond: decompositions.pinverse(input, rcond),  # noqa: A006  (PyTorch's name)
        dict(input=ft(3, 2), rcond=1e-15),
        dict(input=BAD_MATRICES, rcond=["a", object()]),
        extra=NOT_IMPLEMENTED,
        names=("A", "input", "pinv", "dimensions", "float32"),
    ),
    case(
        "linalg.matrix_rank",
        lambda A, atol, rtol, hermitian: decompositions.matrix_rank(A, atol=atol, rtol=rtol, hermitian=hermitian),
        dict(A=ft(2, 3, 4), atol=0.1, rtol=None, hermitian=False),
        dict(A=BAD_MATRICES, atol=["a", ft(3)], rtol=["a", [0.1]], hermitian=BAD_FLAGS),
        extra=NOT_IMPLEMENTED,
        names=("A", "matrix_rank", "dimensions", "tolerances", "float32"),
    ),
    case(
        "linalg.matrix_rank(tol)",
        lambda A, tol: decompositions.matrix_rank(A, tol),
        dict(A=ft(3, 3), tol=0.5),
        dict(A=BAD_MATRICES, tol=["a", [0.5]]),
        extra=NOT_IMPLEMENTED,
        names=("A", "matrix_rank", "dimensions", "float32"),
    ),
]
