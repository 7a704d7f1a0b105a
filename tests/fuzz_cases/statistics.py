# ruff: noqa: A006  (the table's lambdas take PyTorch's argument names, ``input`` included: messages name them)
"""Fuzz-table cases of the statistics, products, integration and determinant functions.

``minigrad/ops/statistics.py`` (``aminmax``, ``nanmedian``, ``cov``,
``corrcoef``, ``histc``), ``math_forms.nanquantile``, ``ops/products.py``
(``inner``, ``vdot``), ``ops/integration.py`` (``trapezoid``,
``cumulative_trapezoid``) and ``ops/determinants.py`` (``det``, ``logdet``,
``slogdet``, ``matrix_power``); rules and helpers as in
``tests/test_fuzz_public_api.py``. NotImplementedError is PyTorch's class for
a dtype a kernel lacks (bool or complex tensors, integer ``histc``).
"""

from __future__ import annotations

from minigrad import math_forms
from minigrad.ops import determinants, integration, products, statistics
from tests.test_fuzz_public_api import INF, NAN, NOT_TENSORS, Fresh, case, ft, it

NOT_IMPLEMENTED = (NotImplementedError,)
BAD_DIMS = [2, -3, 7, 1.5, "0"]  # for a (2, 3) input
BAD_FLAGS = ["yes", 2.5, None]


def bools(*shape):
    import minigrad as mg  # noqa: PLC0415

    return Fresh(f"bool_tensor{shape}", lambda: mg.ones(*shape) > 0)


def square(n=3, batch=(), dtype=None):
    """A fresh well-conditioned float tensor of ``batch + (n, n)``: identity plus small values."""
    import numpy as np  # noqa: PLC0415

    import minigrad as mg  # noqa: PLC0415

    def make():
        data = np.broadcast_to(np.eye(n) * 3, batch + (n, n)) + np.arange(n * n).reshape(n, n) % 3 * 0.25
        return mg.tensor(data, dtype=dtype or mg.float32)

    return Fresh(f"square{batch + (n, n)}", make)


CASES = [
    case(
        "mg.aminmax",
        lambda input, dim, keepdim: statistics.aminmax(input, dim=dim, keepdim=keepdim),
        dict(input=ft(2, 3), dim=1, keepdim=False),
        dict(input=NOT_TENSORS + [ft(0)], dim=BAD_DIMS + [(0, 1)], keepdim=BAD_FLAGS),
        extra=NOT_IMPLEMENTED,
        names=("input", "dim", "keepdim", "aminmax"),
    ),
    case(
        "mg.nanmedian",
        statistics.nanmedian,
        dict(input=ft(2, 3), dim=1, keepdim=True),
        dict(input=NOT_TENSORS + [bools(2, 3), ft(2, 0)], dim=BAD_DIMS + [(0,)], keepdim=BAD_FLAGS),
        extra=NOT_IMPLEMENTED,
        names=("input", "dim", "keepdim"),
    ),
    case(
        "mg.nanquantile",
        math_forms.nanquantile,
        dict(input=ft(2, 3), q=0.25, dim=1, keepdim=False, interpolation="linear"),
        dict(
            input=NOT_TENSORS + [it([1, 2]), ft(0)],
            q=[NAN, 1.5, -0.1, "a", None, ft(2, 2), it([0])],
            dim=BAD_DIMS,
            keepdim=BAD_FLAGS,
            interpolation=["cubic", None, 3],
        ),
        names=("input", "q", "dim", "keepdim", "interpolation", "quantile"),
    ),
    case(
        "mg.cov",
        lambda input, correction, fweights, aweights: statistics.cov(
            input, correction=correction, fweights=fweights, aweights=aweights
        ),
        dict(input=ft(2, 3), correction=1, fweights=it([1, 2, 1]), aweights=ft(3)),
        dict(
            input=NOT_TENSORS + [ft(2, 3, 4), bools(2, 3)],
            correction=[1.5, True, None, "a"],
            fweights=["a", [1, 2, 1], ft(3), it([1, 2]), it([[1, 2, 1]]), it([1, -2, 1])],
            aweights=["a", it([1, 2, 1]), ft(2), ft(1, 3)],
        ),
        extra=NOT_IMPLEMENTED,
        names=("input", "correction", "fweights", "aweights", "cov"),
    ),
    case(
        "mg.corrcoef",
        statistics.corrcoef,
        dict(input=ft(2, 3)),
        dict(input=NOT_TENSORS + [ft(2, 3, 4), bools(2, 3)]),
        extra=NOT_IMPLEMENTED,
        names=("input", "corrcoef", "cov"),
    ),
    case(
        "mg.histc",
        statistics.histc,
        dict(input=ft(2, 3), bins=4, min=0, max=3),
        dict(
            input=NOT_TENSORS + [it([1, 2])],
            bins=[0, -1, 2.5, True, "a", None],
            min=[NAN, INF, "a", None, 5],
            max=[NAN, INF, "a", None, -1, 1e39],
        ),
        extra=NOT_IMPLEMENTED,
        names=("input", "bins", "min", "max", "range"),
    ),
    case(
        "mg.inner",
        products.inner,
        dict(input=ft(2, 3), other=ft(4, 3)),
        dict(input=NOT_TENSORS + [ft(2, 2)], other=NOT_TENSORS + [ft(3, 2), it([1, 2, 3]), bools(3)]),
        extra=NOT_IMPLEMENTED,
        names=("input", "other", "inner", "dimension", "dtype"),
    ),
    case(
        "mg.vdot",
        products.vdot,
        dict(input=ft(3), other=ft(3)),
        dict(input=NOT_TENSORS + [ft(2, 3), ft()], other=NOT_TENSORS + [ft(4), it([1, 2, 3]), bools(3)]),
        extra=NOT_IMPLEMENTED,
        names=("input", "other", "vdot", "1d", "size", "dtype"),
    ),
    *[
        case(
            f"mg.{name}",
            lambda y, x, dim, f=f: f(y, x, dim=dim),
            dict(y=ft(2, 3), x=ft(3), dim=-1),
            dict(y=NOT_TENSORS + [ft(), bools(2, 3)], x=["a", 2.0, [1.0, 2.0, 3.0], ft(2), ft(3, 2)], dim=BAD_DIMS),
            names=("y", "x", "dim", "trapezoid", "sample", "size"),
        )
        for name, f in (("trapezoid", integration.trapezoid),
                        ("cumulative_trapezoid", integration.cumulative_trapezoid))
    ],
    *[
        case(
            f"mg.{name}(dx)",
            lambda y, dx, dim, f=f: f(y, dx=dx, dim=dim),
            dict(y=ft(2, 3), dx=dx, dim=dim),
            dict(dx=[True, 1j, "a", [1.0], ft(2)], dim=BAD_DIMS),
            names=("y", "dx", "dim", "trapezoid"),
        )
        for name, f, dx, dim in (("trapezoid", integration.trapezoid, 0.5, 0),
                                 ("cumulative_trapezoid", integration.cumulative_trapezoid, 2, 1))
    ],
    case(
        "mg.det",
        determinants.det,
        dict(input=square(3, (2,))),
        dict(input=NOT_TENSORS + [ft(3), ft(2, 3), it([[1, 2], [3, 4]]), bools(2, 2)]),
        extra=NOT_IMPLEMENTED,
        names=("input", "det", "square", "dimensions"),
    ),
    case(
        "mg.logdet",
        determinants.logdet,
        dict(input=square(2)),
        dict(input=NOT_TENSORS + [ft(3), ft(2, 3), it([[1, 2], [3, 4]]), ft(2, 2, dtype="float16")]),
        extra=NOT_IMPLEMENTED,
        names=("input", "logdet", "square", "dimensions"),
    ),
    case(
        "mg.slogdet",
        determinants.slogdet,
        dict(input=square(3, (2, 1))),
        dict(input=NOT_TENSORS + [ft(), ft(2, 3), it([[1, 2], [3, 4]])]),
        extra=NOT_IMPLEMENTED,
        names=("input", "slogdet", "square", "dimensions"),
    ),
    case(
        "mg.matrix_power",
        determinants.matrix_power,
        dict(input=square(3), n=-2),
        dict(
            input=NOT_TENSORS + [ft(3), ft(2, 3), it([[1, 2], [3, 4]]), ft(3, 3)],
            n=[2.0, True, None, "a", 10**20],
        ),
        extra=NOT_IMPLEMENTED,
        names=("input", "n", "matrix_power", "inv", "square", "singular", "dimensions"),
    ),
]
