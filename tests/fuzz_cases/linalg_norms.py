# ruff: noqa: A002, A006, N803  (the table's lambdas take PyTorch's argument names: input, ord, A)
"""Fuzz-table cases of ``minigrad/linalg/norms.py``: ``linalg.vector_norm``, ``matrix_norm``, ``norm``,
``cross``, ``vecdot``, ``multi_dot``, ``det``, ``slogdet``, ``matrix_power``.

Rules and helpers as in ``tests/test_fuzz_public_api.py``. NotImplementedError
is PyTorch's class for a dtype a kernel lacks (bool products, float16 LU).
"""

from __future__ import annotations

from minigrad.linalg import norms
from tests.test_fuzz_public_api import INF, NAN, NOT_TENSORS, Fresh, case, ft, it

NOT_IMPLEMENTED = (NotImplementedError,)
BAD_FLAGS = ["yes", 2.5, None]


def bools(*shape):
    import minigrad as mg  # noqa: PLC0415

    return Fresh(f"bool_tensor{shape}", lambda: mg.ones(*shape) > 0)


def square(n=3, batch=()):
    """A fresh well-conditioned float tensor of ``batch + (n, n)``: identity plus small values."""
    import numpy as np  # noqa: PLC0415

    import minigrad as mg  # noqa: PLC0415

    def make():
        data = np.broadcast_to(np.eye(n) * 3, batch + (n, n)) + np.arange(n * n).reshape(n, n) % 3 * 0.25
        return mg.tensor(data, dtype=mg.float32)

    return Fresh(f"square{batch + (n, n)}", make)


def chain(*shapes):
    """A fresh list of float tensors of ``shapes`` (multi_dot's argument)."""
    makers = [ft(*shape) for shape in shapes]
    return Fresh(f"chain{shapes}", lambda: [m.make() for m in makers])


CASES = [
    case(
        "linalg.vector_norm",
        lambda x, ord, dim, keepdim, dtype: norms.vector_norm(x, ord, dim, keepdim, dtype=dtype),
        dict(x=ft(2, 3), ord=3, dim=(0, 1), keepdim=False, dtype=None),
        dict(
            x=NOT_TENSORS + [it([1, 2]), bools(2), ft(0)],
            ord=[None, "fro", [2]],
            dim=[2, -3, 1.5, "0", (0, 0), True],
            keepdim=BAD_FLAGS,
            dtype=["abc", "int64", "float16"],
        ),
        names=("vector_norm", "ord", "dim", "keepdim", "dtype", "identity"),
    ),
    case(
        "linalg.matrix_norm",
        lambda A, ord, dim, keepdim, dtype: norms.matrix_norm(A, ord, dim, keepdim, dtype=dtype),
        dict(A=ft(2, 3, 4), ord="nuc", dim=(0, 2), keepdim=True, dtype=None),
        dict(
            A=NOT_TENSORS + [ft(3), it([[1, 2]]), ft(2, 2, dtype="float16")],
            ord=[None, "foo", 3, 0, NAN, -INF * 0, [2]],
            dim=[0, (0,), (0, 1, 2), (0, 3), (0, -3), (1.5, 0), None],
            keepdim=BAD_FLAGS,
            dtype=["abc", "int64", "float16"],
        ),
        names=("matrix_norm", "ord", "dim", "keepdim", "dtype", "order", "precision"),
    ),
    case(
        "linalg.norm",
        lambda input, ord, dim, keepdim: norms.norm(input, ord, dim, keepdim),
        dict(input=ft(2, 3), ord=INF, dim=(1, 0), keepdim=False),
        dict(
            input=NOT_TENSORS + [it([[1, 2]]), ft(3)],
            ord=["foo", 3, 0, NAN, [2]],
            dim=[(), (0, 1, 2), (0, 2), (0, 0), 1.5, "0"],
            keepdim=BAD_FLAGS,
        ),
        names=("norm", "ord", "dim", "keepdim", "order"),
    ),
    case(
        "linalg.cross",
        lambda input, other, dim: norms.cross(input, other, dim=dim),
        dict(input=ft(2, 3), other=ft(1, 3), dim=-1),
        dict(
            input=NOT_TENSORS + [ft(3), ft(2, 2), ft(2, 3, dtype="float64"), bools(2, 3)],
            other=NOT_TENSORS + [ft(4, 3), it([[1, 2, 3]])],
            dim=[0, 2, -3, 1.5, "0", None],
        ),
        extra=NOT_IMPLEMENTED,
        names=("cross", "dim", "dimension", "dtype"),
    ),
    case(
        "linalg.vecdot",
        lambda x, y, dim: norms.vecdot(x, y, dim=dim),
        dict(x=ft(2, 3), y=ft(3), dim=-1),
        dict(
            x=NOT_TENSORS + [it([1, 2, 3]), ft(4, 2), ft(3, dtype="float64")],
            y=NOT_TENSORS + [ft(4), it([1, 2, 3])],
            dim=[2, -3, 1.5, "0", None, (0,)],
        ),
        names=("vecdot", "dim", "dtype"),
    ),
    case(
        "linalg.multi_dot",
        lambda tensors: norms.multi_dot(tensors),
        dict(tensors=chain((3,), (3, 4), (4, 2), (2,))),
        dict(tensors=NOT_TENSORS + [[], chain((2, 3)), chain((2, 3), (4, 2)), chain((2, 3, 3), (3, 3)), ft(2, 2)]),
        names=("multi_dot", "tensors", "tensor"),
    ),
    case(
        "linalg.det",
        lambda A: norms.det(A),
        dict(A=square(3, (2,))),
        dict(A=NOT_TENSORS + [ft(3), ft(2, 3), it([[1, 2], [3, 4]])]),
        extra=NOT_IMPLEMENTED,
        names=("det", "matrices", "dimensions"),
    ),
    case(
        "linalg.slogdet",
        lambda A: norms.slogdet(A),
        dict(A=square(3)),
        dict(A=NOT_TENSORS + [ft(3), ft(2, 3), it([[1, 2], [3, 4]])]),
        names=("slogdet", "matrices", "dimensions"),
    ),
    case(
        "linalg.matrix_power",
        lambda input, n: norms.matrix_power(input, n),
        dict(input=square(3), n=-2),
        dict(input=NOT_TENSORS + [ft(3), ft(2, 3)], n=[1.5, "2", None, 2**70]),
        names=("matrix_power", "matrices", "dimensions"),
    ),
]
