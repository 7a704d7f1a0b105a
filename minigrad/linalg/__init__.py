"""``minigrad.linalg``: PyTorch's ``torch.linalg``, on NumPy's (or CuPy's) LAPACK.

Every function takes batches of matrices ``(..., m, n)`` as PyTorch's do, returns PyTorch's
dtypes and named tuples, and is differentiable to every order: the decompositions and solvers
are graph nodes whose backward (beside the forward) is written with recorded ops.

- ``norms.py``: ``vector_norm``, ``matrix_norm``, ``norm``, ``cross``, ``vecdot``, ``multi_dot``,
  and ``det``, ``slogdet``, ``matrix_power`` (whose ops are in ``minigrad/ops/determinants.py``);
- ``solvers.py``: ``inv``, ``solve``, ``solve_triangular``, ``cholesky`` and their ``_ex`` forms,
  which return an ``info`` tensor instead of raising;
- ``decompositions.py``: ``svd``, ``svdvals``, ``eigh``, ``eigvalsh``, ``qr``, ``pinv``, ``matrix_rank``.

A matrix these cannot factor or invert raises ``LinAlgError``, a RuntimeError as PyTorch's is.
Complex matrices are not supported (NotImplementedError).
"""

from __future__ import annotations

from minigrad.linalg import decompositions, solvers
from minigrad.linalg.decompositions import (
    EighResult,
    QRResult,
    SVDResult,
    eigh,
    eigvalsh,
    matrix_rank,
    pinv,
    qr,
    svd,
    svdvals,
)
from minigrad.linalg.norms import (
    SlogdetResult,
    cross,
    det,
    matrix_norm,
    matrix_power,
    multi_dot,
    norm,
    slogdet,
    vecdot,
    vector_norm,
)
from minigrad.linalg.solvers import (
    CholeskyExResult,
    InvExResult,
    SolveExResult,
    cholesky,
    cholesky_ex,
    inv,
    inv_ex,
    solve,
    solve_ex,
    solve_triangular,
)
from minigrad.ops import REGISTRY
from minigrad.ops.determinants import LinAlgError

# Their graph nodes join the op registry, which the op tests enumerate (this package builds on
# minigrad.ops, so it adds them itself).
REGISTRY.update(solvers.OPS)  # linalg_inv, linalg_solve, linalg_solve_triangular, linalg_cholesky
REGISTRY.update(decompositions.OPS)  # svd, eigh, qr, pinv

__all__ = [
    "LinAlgError",
    "vector_norm", "matrix_norm", "norm", "cross", "vecdot", "multi_dot", "det", "slogdet", "matrix_power",
    "inv", "inv_ex", "solve", "solve_ex", "solve_triangular", "cholesky", "cholesky_ex",
    "svd", "svdvals", "eigh", "eigvalsh", "qr", "pinv", "matrix_rank",
    "SlogdetResult", "InvExResult", "SolveExResult", "CholeskyExResult", "SVDResult", "EighResult", "QRResult",
]
