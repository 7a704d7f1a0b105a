# ruff: noqa: N803  (every program takes PyTorch's conventional name F for nn.functional)
"""Op cases for ``scatter_reduce`` (``minigrad.ops.index_updates.ScatterReduce``) and ``Tensor.unfold``
(``minigrad.ops.windows``: ``UnfoldWindows`` and its adjoint ``FoldWindows``).

The programs reach minigrad's functions through ``_scatter_reduce`` and
``_unfold``, which use the Tensor methods once they are installed and the
modules' functions until then. ``amax``/``amin`` run on distinct values (a
tie shares the gradient, where finite differences see a kink); ``prod`` on
values away from zero.
"""

from __future__ import annotations

from hypothesis import strategies as st

import minigrad as mg
from minigrad.ops import index_updates, windows
from tests.minigrad.ops.cases_core import const, one
from tests.minigrad.ops.cases_gather import scatter_problem
from tests.minigrad.ops.cases_math import grads_of, problem_case
from tests.minigrad.ops.op_cases import case


def _scatter_reduce(lib, a, dim, index, src, reduce, include_self):
    if lib is mg and not hasattr(mg.Tensor, "scatter_reduce"):
        return index_updates.scatter_reduce(a, dim, index, src, reduce, include_self=include_self)
    return a.scatter_reduce(dim, index, src, reduce, include_self=include_self)


def _unfold(a, dimension, size, step):
    if isinstance(a, mg.Tensor) and not hasattr(mg.Tensor, "unfold"):
        return windows.unfold(a, dimension, size, step)
    return a.unfold(dimension, size, step)


@st.composite
def reduce_problem(draw, reduces=index_updates.REDUCTIONS):
    """((input shape, source shape), (dim, index, reduce, include_self)), repeats in the index included."""
    shapes, (dim, index) = draw(scatter_problem())
    return shapes, (dim, index, draw(st.sampled_from(reduces)), draw(st.booleans()))


def _reduced(lib, a, src, params):
    dim, index, reduce, include_self = params
    if reduce in ("amax", "amin"):
        src = src * 0.9 + 0.3137  # inputs are distinct each; this keeps a and src from tying too
    return _scatter_reduce(lib, a, dim, const(lib, a, index), src, reduce, include_self)


for _reduce in index_updates.REDUCTIONS:
    _distinct = _reduce in ("amax", "amin")
    _range = {"low": 0.5, "high": 2.0} if _reduce == "prod" else {}
    _source = (lambda src: src * 1.0) if _distinct else (lambda src: src * src)  # squares may tie
    problem_case("scatter_reduce", f"scatter_reduce_{_reduce}", reduce_problem((_reduce,)),
                 lambda lib, F, a, src, params: _reduced(lib, a, src, params), distinct=_distinct, **_range)
    problem_case("scatter_reduce", f"scatter_reduce_{_reduce}_double_backward", reduce_problem((_reduce,)),
                 lambda lib, F, a, src, params, source=_source: grads_of(
                     lib, lambda: (_reduced(lib, a, source(src), params) ** 2).sum(), (a, src)),
                 distinct=_distinct, **_range)


@st.composite
def _window(draw, shape):
    """(dimension, size, step) for ``shape``: a size from 0 to the dimension's length."""
    ndim = len(shape)
    dim = draw(st.integers(-ndim, ndim - 1))
    return dim, draw(st.integers(0, shape[dim])), draw(st.integers(1, 3))


def _windows(a, params):
    return _unfold(a, *params)


case("unfold_windows", lambda lib, F, a, params: _windows(a, params) * 2 + _windows(a.exp(), params), one(1),
     extra={"params": lambda drawn: _window(drawn[0])})
case("fold_windows", lambda lib, F, a, params: grads_of(lib, lambda: (_windows(a, params) ** 3).sum(), a)[0],
     one(1), extra={"params": lambda drawn: _window(drawn[0])}, name="unfold_double_backward")
case("unfold_windows", lambda lib, F, a, params: _windows(a.flip(-1), params), one(1),
     extra={"params": lambda drawn: _window(drawn[0])}, name="unfold_of_a_flipped_view")
