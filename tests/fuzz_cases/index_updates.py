# ruff: noqa: A006  (the table's lambdas take PyTorch's argument names, ``input`` included: messages name them)
"""Fuzz-table cases of the writes at indices, ``Tensor.unfold`` and ``Tensor.reshape_as``.

``minigrad/ops/index_updates.py`` and ``windows.py``; rules and helpers as in
``tests/test_fuzz_public_api.py``. ``scatter_reduce`` of a complex or bool
tensor raises NotImplementedError for some reductions, as PyTorch does.
"""

from __future__ import annotations

import minigrad as mg
from minigrad.ops import index_updates as iu
from minigrad.ops import windows
from tests.test_fuzz_public_api import NOT_TENSORS, Fresh, case, ft, it

BAD_DIMS = [2, -3, 7, 1.5, "0", None]  # for a (2, 3) input
NOT_IMPLEMENTED = (NotImplementedError,)


def _mask(*shape):
    return Fresh(f"mask{shape}", lambda: mg.arange(int(mg.tensor(shape).prod().item()) if shape else 1)
                 .reshape(shape) % 2 == 0)


def _indices(*items):
    """A fresh tuple of indices (its Fresh tensors built anew for every call)."""
    return Fresh(f"indices{items}", lambda: tuple(i.make() if isinstance(i, Fresh) else i for i in items))


def _method(name, fn, valid, bad, names=(), **kw):
    """A Tensor method: ``fn(self, **args)`` with ``self`` a fresh (2, 3) float tensor unless given."""
    valid = {"self": ft(2, 3), **valid}
    return case(f"Tensor.{name}", fn, valid, bad, names=("self", *names), args_free=("self",), **kw)


INDEX_FILL_BAD = dict(
    input=NOT_TENSORS,
    dim=BAD_DIMS,
    index=[ft(2), it([3]), it([-4]), it([[0]]), None, [0], "abc"],
    value=["abc", None, ft(2), 1j, object()],
)
INDEX_COPY_BAD = dict(
    input=NOT_TENSORS,
    dim=BAD_DIMS,
    index=[ft(2), it([3, 0]), it([-1, 0]), it([[0, 1]]), it([0]), None, "abc"],
    source=[ft(2, 2, dtype=mg.float64), ft(3, 2), ft(2, 3), ft(4), 1.0, None, "abc"],
)
MASKED_SCATTER_BAD = dict(
    input=NOT_TENSORS,
    mask=[ft(2, 3), _mask(4), it([1, 0, 1]), None, "abc"],
    source=[ft(2), ft(6, dtype=mg.float64), 1.0, None, "abc"],
)
SCATTER_REDUCE_BAD = dict(
    input=NOT_TENSORS,
    dim=BAD_DIMS,
    index=[ft(2, 2), it([[5, 0], [0, 0]]), it([[-1, 0], [0, 0]]), it([0, 1]), it([[0, 0, 0, 0]] * 3), None],
    src=[ft(2, 2, dtype=mg.float64), ft(1, 1), 2.0, None, "abc"],
    reduce=["add", "multiply", "", 5, None],
    include_self=["a", None, 1],
)
INDEX_PUT_BAD = dict(
    input=NOT_TENSORS,
    indices=[it([0]), (None,), _indices(ft(2)), _indices(it([2])), _indices(*(it([0]),) * 3), _indices(_mask(3)),
             _indices(it([0, 1]), it([0, 1, 2])), (), [0], None, "abc"],
    values=[ft(2, dtype=mg.float64), ft(5), 1.0, None, "abc"],
    accumulate=["a", None, 1],
)


def _index_updates():
    index_fill_valid = dict(input=ft(2, 3), dim=1, index=it([0, 2]), value=0.5)
    index_copy_valid = dict(input=ft(2, 3), dim=1, index=it([2, 0]), source=ft(2, 2))
    masked_scatter_valid = dict(input=ft(2, 3), mask=_mask(2, 3), source=ft(6))
    scatter_reduce_valid = dict(input=ft(2, 3), dim=1, index=it([[0, 2], [1, 1]]), src=ft(2, 2), reduce="amax",
                                include_self=True)
    index_put_valid = dict(input=ft(2, 3), indices=_indices(it([0, 1, 1]), it([2, 0, 0])), values=ft(3),
                           accumulate=False)
    return [
        case("mg.index_fill", iu.index_fill, index_fill_valid, INDEX_FILL_BAD,
             names=("input", "dim", "index", "value", "index_fill")),
        case("Tensor.index_fill_", iu.index_fill_, index_fill_valid, INDEX_FILL_BAD,
             names=("input", "dim", "index", "value", "index_fill")),
        case("mg.index_copy", iu.index_copy, index_copy_valid, INDEX_COPY_BAD,
             names=("input", "dim", "index", "source", "index_copy")),
        case("Tensor.index_copy_", iu.index_copy_, index_copy_valid, INDEX_COPY_BAD,
             names=("input", "dim", "index", "source", "index_copy")),
        case("mg.masked_scatter", iu.masked_scatter, masked_scatter_valid, MASKED_SCATTER_BAD,
             names=("input", "mask", "source", "masked_scatter")),
        case("Tensor.masked_scatter_", iu.masked_scatter_, masked_scatter_valid,
             {**MASKED_SCATTER_BAD, "mask": MASKED_SCATTER_BAD["mask"] + [_mask(3, 2, 3)]},
             names=("input", "mask", "source", "masked_scatter")),
        case("mg.scatter_reduce",
             lambda input, dim, index, src, reduce, include_self: iu.scatter_reduce(
                 input, dim, index, src, reduce, include_self=include_self),
             scatter_reduce_valid, SCATTER_REDUCE_BAD, extra=NOT_IMPLEMENTED,
             names=("input", "dim", "index", "src", "reduce", "include_self", "scatter_reduce")),
        case("Tensor.scatter_reduce_",
             lambda input, dim, index, src, reduce, include_self: iu.scatter_reduce_(
                 input, dim, index, src, reduce, include_self=include_self),
             {**scatter_reduce_valid, "reduce": "mean", "include_self": False}, SCATTER_REDUCE_BAD,
             extra=NOT_IMPLEMENTED,
             names=("input", "dim", "index", "src", "reduce", "include_self", "scatter_reduce")),
        case("mg.index_put", iu.index_put, index_put_valid, INDEX_PUT_BAD,
             names=("input", "indices", "values", "accumulate", "index_put")),
        case("mg.index_put_", iu.index_put_, {**index_put_valid, "accumulate": True}, INDEX_PUT_BAD,
             names=("input", "indices", "values", "accumulate", "index_put")),
    ]


CASES = _index_updates() + [
    _method("unfold", lambda self, dimension, size, step: windows.unfold(self, dimension, size, step),
            dict(dimension=1, size=2, step=1),
            dict(dimension=BAD_DIMS, size=[4, -1, 1.5, "a", None, True], step=[0, -1, 1.5, "a", None]),
            names=("dimension", "size", "step", "unfold")),
    _method("reshape_as", lambda self, other: windows.reshape_as(self, other), dict(other=ft(3, 2)),
            dict(other=NOT_TENSORS + [ft(4), ft()]), names=("other", "reshape")),
]
