# ruff: noqa: N803  (every program takes PyTorch's conventional name F for nn.functional)
"""Op cases for gather/scatter (``minigrad.ops.gather``), the sorting functions that read their values
with ``gather`` (``minigrad.ops.sorting``), and the structural ops (``minigrad.ops.structure``).

Index tensors are drawn with the shapes: ``problem_case`` draws an input
shape, an index within PyTorch's rules (no larger than the input except along
``dim``) and the source shape of a scatter together. A plain ``scatter``
draws indices without repeated positions (which of two writes wins is
unspecified in PyTorch); ``scatter_add`` and ``gather`` draw repeats. Sort,
topk and kthvalue run on distinct values (the order of ties is unspecified).
Programs named ``*_double_backward`` return first-order gradients taken with
``create_graph=True``.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from tests.minigrad.ops.cases_core import const, dim_of, one, shapes
from tests.minigrad.ops.cases_math import grads_of, problem_case
from tests.minigrad.ops.op_cases import case

# -- gather and scatter ----------------------------------------------------------------------------


@st.composite
def index_along(draw, shape, unique=False, max_len=4):
    """``(dim, index)``: a dim of ``shape`` and an int64 index no larger than ``shape`` except along it.

    ``unique``: no position repeats along the dim (each line of the index is
    the start of a permutation).
    """
    ndim = len(shape)
    dim = draw(st.integers(-ndim, ndim - 1))
    axis = dim % ndim
    n = shape[axis]
    index_shape = tuple(
        draw(st.integers(1, n if unique else max_len)) if d == axis else draw(st.integers(1, m))
        for d, m in enumerate(shape)
    )
    if unique:
        full = index_shape[:axis] + (n,) + index_shape[axis + 1 :]
        keys = draw(hnp.arrays(np.float64, full, elements=st.floats(0, 1)))
        order = np.argsort(keys, axis=axis, kind="stable")
        index = np.take(order, np.arange(index_shape[axis]), axis=axis)
    else:
        index = draw(hnp.arrays(np.int64, index_shape, elements=st.integers(0, n - 1)))
    return dim, index.tolist()


@st.composite
def gather_problem(draw, unique=False, weights=False):
    """((input shape[, weights shape]), (dim, index)); the weights have the index's shape."""
    shape = draw(shapes(1, 3))
    dim, index = draw(index_along(shape, unique))
    index_shape = np.shape(index)
    return ((shape, index_shape) if weights else (shape,)), (dim, index)


@st.composite
def scatter_problem(draw, unique=False):
    """((input shape, source shape), (dim, index)); the source has the index's shape."""
    shape = draw(shapes(1, 3))
    dim, index = draw(index_along(shape, unique))
    return (shape, np.shape(index)), (dim, index)


def _gather(lib, a, params):
    dim, index = params
    return a.gather(dim, const(lib, a, index))


problem_case("gather", "gather", gather_problem(),
             lambda lib, F, a, params: _gather(lib, a, params) + lib.gather(a, params[0], const(lib, a, params[1])))
problem_case("gather_adjoint", "gather_double_backward", gather_problem(weights=True),
             lambda lib, F, a, w, params: grads_of(lib, lambda: (_gather(lib, a, params) ** 2 * w).sum(), a)[0])
problem_case("scatter", "scatter", scatter_problem(unique=True),
             lambda lib, F, a, src, params: a.scatter(params[0], const(lib, a, params[1]), src)
             + lib.scatter(a, params[0], const(lib, a, params[1]), 2.5) * src.sum())
problem_case("scatter", "scatter_double_backward", scatter_problem(unique=True),
             lambda lib, F, a, src, params: grads_of(
                 lib, lambda: (a.scatter(params[0], const(lib, a, params[1]), src * src) ** 2).sum(), (a, src)))
problem_case("scatter_add", "scatter_add", scatter_problem(),
             lambda lib, F, a, src, params: a.scatter_add(params[0], const(lib, a, params[1]), src)
             + lib.scatter_add(a, params[0], const(lib, a, params[1]), src * 2))
problem_case("scatter_add", "scatter_add_double_backward", scatter_problem(),
             lambda lib, F, a, src, params: grads_of(
                 lib, lambda: (a.scatter_add(params[0], const(lib, a, params[1]), src * src) ** 2).sum(), (a, src)))


def _index_select(lib, a, params):
    dim, index = params
    return a.index_select(dim, const(lib, a, index)) + lib.index_select(a, dim, const(lib, a, index))


def index_vector(drawn):
    """``(dim, index)``: a dim of the input and a 1-D index with repeats."""
    shape = drawn[0]
    return st.integers(-len(shape), len(shape) - 1).flatmap(
        lambda d: st.tuples(st.just(d), st.lists(st.integers(0, shape[d] - 1), min_size=1, max_size=4))
    )


case("index", lambda lib, F, a, params: _index_select(lib, a, params), one(1), extra={"params": index_vector},
     name="index_select")

# -- sorting: the values are gathered --------------------------------------------------------------------


def _sort(lib, a, params):
    dim, descending = params
    values, indices = a.sort(dim, descending=descending)
    by_function = lib.sort(a, dim=dim, descending=descending, stable=True)
    return values * 2 + by_function.values, indices


def dim_and_flag(drawn):
    ndim = len(drawn[0])
    return st.tuples(st.integers(-max(ndim, 1), max(ndim, 1) - 1), st.booleans())


@st.composite
def _k_and_dim(draw, shape, low=0):
    ndim = len(shape)
    dim = draw(st.integers(-max(ndim, 1), max(ndim, 1) - 1))
    size = shape[dim] if ndim else 1
    return draw(st.integers(low, size)), dim, draw(st.booleans())


case("gather", lambda lib, F, a, params: _sort(lib, a, params), one(), distinct=True,
     extra={"params": dim_and_flag}, name="sort")
case("gather", lambda lib, F, a, params: tuple(a.topk(params[0], params[1], largest=params[2]))
     + tuple(lib.topk(a * 2, k=params[0], dim=params[1], largest=not params[2], sorted=True)), one(1),
     distinct=True, extra={"params": lambda drawn: _k_and_dim(drawn[0])}, name="topk")
case("gather", lambda lib, F, a, params: tuple(a.kthvalue(params[0], params[1], keepdim=params[2])), one(1),
     distinct=True, extra={"params": lambda drawn: _k_and_dim(drawn[0], low=1)}, name="kthvalue")
case("gather", lambda lib, F, a, w, params: grads_of(lib, lambda: (a.sort(params)[0] ** 2 * w).sum(), a)[0],
     shapes(1).map(lambda s: (s, s)), distinct=True, extra={"params": dim_of()}, name="sort_double_backward")

# -- structure -------------------------------------------------------------------------------------------


@st.composite
def _repeats(draw, ndim, fewer=False):
    """Repeat counts (0 to 2): one per dimension and up to 2 more (``fewer``: maybe fewer, at least one)."""
    count = draw(st.integers(1 if fewer else max(ndim, 1), ndim + 2))
    return tuple(draw(st.integers(0, 2)) for _ in range(count))


case("repeat", lambda lib, F, a, params: a.repeat(*params) + a.repeat(params), one(),
     extra={"params": lambda drawn: _repeats(len(drawn[0]))}, name="repeat")
case("repeat", lambda lib, F, a, params: a.tile(params) + lib.tile(a, params), one(),
     extra={"params": lambda drawn: _repeats(len(drawn[0]), fewer=True)}, name="tile")
def _triangles(lib, a, k):
    return a.tril(k) + lib.triu(a, diagonal=k) * 2 + lib.tril(a, -k).exp()


case("tril", lambda lib, F, a, params: _triangles(lib, a, params), one(2, 3),
     extra={"params": lambda drawn: st.integers(-3, 3)})


def distinct_dims(drawn):
    ndim = len(drawn[0])
    return st.lists(st.integers(0, ndim - 1), min_size=1, max_size=ndim, unique=True).flatmap(
        lambda dims: st.lists(st.booleans(), min_size=len(dims), max_size=len(dims)).map(
            lambda negative: tuple(d - ndim if neg else d for d, neg in zip(dims, negative))
        )
    )


case("flip", lambda lib, F, a, params: a.flip(*params) * a + lib.flip(a, params) + a.flip(dims=params).exp(), one(1),
     extra={"params": distinct_dims})


def roll_args(drawn):
    ndim = len(drawn[0])
    return st.lists(st.tuples(st.integers(-4, 4), st.integers(-ndim, ndim - 1)), min_size=1, max_size=3)


case("roll", lambda lib, F, a, params: a.roll(tuple(s for s, _ in params), tuple(d for _, d in params)) * a
     + lib.roll(a, params[0][0]) + a.roll(params[0][0], params[0][1]), one(1), extra={"params": roll_args})


def diagonal_args(drawn):
    ndim = len(drawn[0])
    return st.tuples(st.integers(-3, 3), st.integers(-ndim, ndim - 1), st.integers(-ndim, ndim - 1)).filter(
        lambda p: p[1] % ndim != p[2] % ndim
    )


case("diagonal", lambda lib, F, a, params: a.diagonal(*params) * 2 + lib.diagonal(a, params[0], params[1],
                                                                                   params[2]).exp(),
     one(2), extra={"params": diagonal_args})
case("diagonal_scatter", lambda lib, F, a, w, params: grads_of(
         lib, lambda: (a.diagonal(*params) ** 2 * w.diagonal(*params)).sum(), a)[0],
     shapes(2).map(lambda s: (s, s)), extra={"params": diagonal_args}, name="diagonal_double_backward")

# -- views by slicing: chunk, split, unbind (Index), unflatten and view_as (Reshape) -----------------------


def _weighted_cat(lib, pieces, dim):
    return lib.cat([p * (i + 1) for i, p in enumerate(pieces)], dim)


def chunk_args(drawn):
    ndim = len(drawn[0])
    return st.tuples(st.integers(1, 4), st.integers(-ndim, ndim - 1))


def split_args(drawn):
    """``(split_size or sections, dim)``: a size, or sections cut at sorted points (empty ones included)."""
    shape = drawn[0]
    ndim = len(shape)

    def sections(dim):
        size = shape[dim]
        return st.lists(st.integers(0, size), max_size=3).map(
            lambda cuts: [b - a for a, b in zip([0, *sorted(cuts)], [*sorted(cuts), size])]
        )

    return st.integers(-ndim, ndim - 1).flatmap(
        lambda dim: st.tuples(st.integers(1, 4) | sections(dim), st.just(dim))
    )


case("index", lambda lib, F, a, params: _weighted_cat(lib, a.chunk(*params), params[1]), one(1),
     extra={"params": chunk_args}, name="chunk")
case("index", lambda lib, F, a, params: _weighted_cat(lib, lib.split(a, *params), params[1])
     + _weighted_cat(lib, a.split(*params), params[1]), one(1), extra={"params": split_args}, name="split")
case("index", lambda lib, F, a, params: lib.stack([p * (i + 1) for i, p in enumerate(a.unbind(params))], params),
     one(1), extra={"params": dim_of()}, name="unbind")
case("reshape", lambda lib, F, a, b: a.unflatten(-1, (1, -1)).exp().flatten(-2) + a.reshape(-1).view_as(b) * b,
     shapes(1).map(lambda s: (s, s)), name="unflatten_view_as")
