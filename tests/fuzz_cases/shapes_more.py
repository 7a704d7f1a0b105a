# ruff: noqa: A006  (the table's lambdas take PyTorch's argument names, ``input`` included: messages name them)
"""Fuzz-table cases of splitting, ``take_along_dim``, the diagonal forms and the assembled tensors.

``minigrad/ops/splitting.py``, ``take_along.py``, ``diagonal_forms.py`` and
``assembly.py``; rules and helpers as in ``tests/test_fuzz_public_api.py``.
"""

from __future__ import annotations

from minigrad.ops import assembly, diagonal_forms, splitting, take_along
from tests.test_fuzz_public_api import NOT_TENSORS, Fresh, case, ft, it

BAD_DIMS = [2, -3, 7, 1.5, "0", None]  # for a (2, 3) input
NAMES = ("input", "tensor")


def _split_case(name, fn, input_, valid_arg, bad_args):
    return case(
        f"mg.{name}",
        lambda input, indices_or_sections: fn(input, indices_or_sections),
        dict(input=input_, indices_or_sections=valid_arg),
        dict(input=NOT_TENSORS + [ft()], indices_or_sections=bad_args),
        names=NAMES + ("indices_or_sections", "sections", "divisible", "dimension"),
    )


BAD_SECTIONS = [0, -1, 1.5, "a", None, [1.5], [None], it([[1]]), ft(2), 2**63, [True]]

CASES = [
    case(
        "mg.tensor_split",
        splitting.tensor_split,
        dict(input=ft(2, 6), indices_or_sections=3, dim=1),
        dict(input=NOT_TENSORS + [ft()], indices_or_sections=BAD_SECTIONS, dim=BAD_DIMS),
        names=NAMES + ("indices_or_sections", "sections", "dim"),
    ),
    _split_case("hsplit", splitting.hsplit, ft(2, 6), [1, 4], BAD_SECTIONS + [4, it([1])]),
    _split_case("vsplit", splitting.vsplit, ft(4, 3), 2, BAD_SECTIONS + [3, it([1])]),
    _split_case("dsplit", splitting.dsplit, ft(2, 3, 4), (1, 3), BAD_SECTIONS + [3, it([1])]),
    case(
        "mg.take_along_dim",
        take_along.take_along_dim,
        dict(input=ft(2, 3), indices=it([[0], [-1]]), dim=1),
        dict(
            input=NOT_TENSORS + [ft(), ft(3, 3), ft(2, 0)],
            indices=NOT_TENSORS + [it([0]), ft(2, 1), it([[0, 1], [1, 0], [0, 0]])],
            dim=[2, -3, 1.5, "0", True],
        ),
        names=NAMES + ("indices", "dim"),
    ),
    case(
        "mg.take_along_dim(dim=None)",
        take_along.take_along_dim,
        dict(input=ft(2, 3), indices=it([0, 5, 3]), dim=None),
        dict(indices=[it([6]), it([-1]), ft(2), None]),
        names=NAMES + ("indices",),
    ),
    case(
        "mg.diag_embed",
        diagonal_forms.diag_embed,
        dict(input=ft(2, 3), offset=1, dim1=-2, dim2=-1),
        dict(input=NOT_TENSORS, offset=[1.5, "a", None, True], dim1=[3, -4, 1.5, None, -1], dim2=[3, -4, "a"]),
        names=NAMES + ("offset", "dim1", "dim2", "dim"),
    ),
    case(
        "mg.diagflat",
        diagonal_forms.diagflat,
        dict(input=ft(2, 2), offset=-1),
        dict(input=NOT_TENSORS, offset=[1.5, "a", None]),
        names=NAMES + ("offset",),
    ),
    case(
        "mg.block_diag",
        lambda a, b: diagonal_forms.block_diag(a, b),
        dict(a=ft(2, 3), b=ft()),
        dict(a=NOT_TENSORS + [ft(2, 2, 2)], b=NOT_TENSORS + [ft(1, 1, 1)]),
        names=NAMES + ("dimensions",),
    ),
    *[
        case(
            f"mg.{fn.__name__}",
            lambda a, b, fn=fn: fn(a, b),
            dict(a=ft(), b=ft(2, 3)),
            dict(a=NOT_TENSORS, b=NOT_TENSORS + [[ft(2)]]),
            names=NAMES,
        )
        for fn in (assembly.atleast_1d, assembly.atleast_2d, assembly.atleast_3d)
    ],
    case(
        "mg.row_stack",
        assembly.row_stack,
        dict(tensors=Fresh("[t(3), t(2, 3)]", lambda: [ft(3).make(), ft(2, 3).make()])),
        dict(tensors=[[], None, "abc", 3, ft(3), Fresh("[t(3), t(2)]", lambda: [ft(3).make(), ft(2).make()])]),
        names=("tensors",),
    ),
    case(
        "mg.cartesian_prod",
        lambda a, b: assembly.cartesian_prod(a, b),
        dict(a=ft(3), b=ft(2)),
        dict(a=NOT_TENSORS + [ft(), ft(2, 2)], b=NOT_TENSORS + [it([1, 2]), ft(2, dtype="float64")]),
        names=NAMES + ("dtype", "1-d"),
    ),
    case(
        "mg.combinations",
        assembly.combinations,
        dict(input=ft(4), r=2, with_replacement=False),
        dict(input=NOT_TENSORS + [ft(), ft(2, 2)], r=[-1, 1.5, "a", None, True], with_replacement=[1, None, "yes"]),
        names=NAMES + ("r", "with_replacement"),
    ),
    case(
        "mg.vander",
        assembly.vander,
        dict(x=ft(4), N=3, increasing=True),
        dict(x=NOT_TENSORS + [ft(), ft(2, 2)], N=[-1, 1.5, "a", True, it([2])], increasing=[1, None, "yes"]),
        names=("x", "N", "increasing"),
    ),
]
