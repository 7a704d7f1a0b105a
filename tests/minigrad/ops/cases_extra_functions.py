# ruff: noqa: N803  (every program takes PyTorch's conventional name F for nn.functional)
"""Op cases for ``cummax``/``cummin`` and ``logcumsumexp`` (``minigrad.ops.cumulative``), ``logit`` and
``erfc`` (``minigrad.ops.math``) and ``diff`` (``minigrad.ops.differences``, composed of slices and
subtractions, so its cases exercise the ``sub`` op).

Each case runs by gradcheck and against PyTorch (see ``op_cases.py``), calling
``lib.<name>`` with ``lib`` minigrad or torch.
Programs named ``*_double_backward`` return first-order gradients taken with
``create_graph=True``.
"""

from __future__ import annotations

from hypothesis import strategies as st

from tests.minigrad.ops.cases_core import dim_of, one, shapes
from tests.minigrad.ops.cases_math import grads_of
from tests.minigrad.ops.op_cases import case


def _running(lib, name, a, dim):
    """``cummax``/``cummin`` values plus the indices (as floats: the oracle compares them, gradcheck ignores them)."""
    result = getattr(lib, name)(a, dim)
    return result.values + result.indices.to(a.dtype)


same2 = shapes(1).map(lambda s: (s, s))  # an input and the weights of its double-backward loss

# -- cummax / cummin: distinct inputs, so a small perturbation never changes which element is chosen ------------

# With ``ties`` the input goes twice along dim (a perturbation moves both copies); the index (compared with
# PyTorch's) names the later copy.
for _name in ("cummax", "cummin"):
    for _ties in (False, True):
        case(
            "cummax",
            lambda lib, F, a, params, name=_name, ties=_ties: _running(
                lib, name, lib.cat([a, a], params) if ties else a, params
            ),
            one(1),
            distinct=True,
            extra={"params": dim_of()},
            name=f"{_name}_ties" if _ties else _name,
        )
case("cummax", lambda lib, F, a: _running(lib, "cummax", a.sum(), 0) * a, one(), distinct=True, name="cummax_0d")


def _cummax_grad(lib, a, w, dim):
    """d/da of ``sum(cummax(exp(a)).values * w)`` (exp keeps the inputs distinct)."""
    return grads_of(lib, lambda: (lib.cummax(a.exp(), dim).values * w).sum(), a)[0]


case(
    "cummax",
    lambda lib, F, a, w, params: _cummax_grad(lib, a, w, params),
    same2,
    distinct=True,
    extra={"params": dim_of()},
    name="cummax_double_backward",
)

# -- logcumsumexp ---------------------------------------------------------------------------------------------------

case(
    "logcumsumexp",
    lambda lib, F, a, params: lib.logcumsumexp(a, params),
    one(1),
    extra={"params": dim_of()},
)
# Inputs of size 600: exp overflows float64 there, the running logaddexp and its gradient do not.
case(
    "logcumsumexp",
    lambda lib, F, a, params: lib.logcumsumexp(a * 300.0, params) / 300.0,
    one(1),
    extra={"params": dim_of()},
    name="logcumsumexp_large",
)
case("logcumsumexp", lambda lib, F, a: lib.logcumsumexp(a.sum(), -1), one(), name="logcumsumexp_0d")


def _weighted_grad(lib, name, a, w, *args):
    """d/da of ``sum(name(a, *args) * w)``, with ``create_graph=True``."""
    return grads_of(lib, lambda: (getattr(lib, name)(a, *args) * w).sum(), a)[0]


# The weights' signs are mixed: the backward sums the positive and negative parts of g apart. Kept away
# from 0, where PyTorch's second derivative in the weights is NaN (minigrad's is right there: see
# tests/minigrad/test_extra_functions.py).
case(
    "logcumsumexp_backward",
    lambda lib, F, a, w, params: _weighted_grad(lib, "logcumsumexp", a, w, params),
    same2,
    away_from=(0.0,),
    margin=0.1,
    extra={"params": dim_of()},
    name="logcumsumexp_double_backward",
)

# -- logit and erfc --------------------------------------------------------------------------------------------------

case("logit", lambda lib, F, a: lib.logit(a), one(), low=0.05, high=0.95)
# With eps the input is clamped into [0.2, 0.8]; the gradient is 0 outside (kept away from the clamp's corners).
case(
    "logit",
    lambda lib, F, a: lib.logit(a, eps=0.2),
    one(),
    low=0.02,
    high=0.98,
    away_from=(0.2, 0.8),
    name="logit_eps",
)
case(
    "logit",
    lambda lib, F, a, w: _weighted_grad(lib, "logit", a, w, 0.1),
    one().map(lambda s: (s[0], s[0])),
    low=0.02,
    high=0.98,
    away_from=(0.1, 0.9),
    name="logit_double_backward",
)
case("erfc", lambda lib, F, a: lib.erfc(a), one(), low=-3.0, high=3.0)
case(
    "erfc",
    lambda lib, F, a, w: _weighted_grad(lib, "erfc", a, w),
    one().map(lambda s: (s[0], s[0])),
    low=-3.0,
    high=3.0,
    name="erfc_double_backward",
)

# -- diff (slices and subtractions) --------------------------------------------------------------------------------


@st.composite
def _diff_params(draw, drawn):
    """``(n, dim)`` for the first shape."""
    ndim = len(drawn[0])
    return draw(st.integers(0, 3)), draw(st.integers(-ndim, ndim - 1))


case(
    "sub",
    lambda lib, F, a, params: lib.diff(a, n=params[0], dim=params[1]),
    one(1),
    extra={"params": _diff_params},
    name="diff",
)


def _edges(draw_shapes):
    """A shape, and prepend/append shapes equal to it off the last dim."""
    return draw_shapes.flatmap(
        lambda s: st.tuples(st.integers(1, 2), st.integers(1, 3)).map(lambda k: (s, s[:-1] + (k[0],), s[:-1] + (k[1],)))
    )


case(
    "sub",
    lambda lib, F, a, p, q, params: lib.diff(a, params, -1, prepend=p, append=q),
    _edges(shapes(1)),
    extra={"params": lambda drawn: st.integers(1, 3)},
    name="diff_prepend_append",
)
