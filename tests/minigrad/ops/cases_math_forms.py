# ruff: noqa: N803  (every program takes PyTorch's conventional name F for nn.functional)
"""Op cases for the ops of ``minigrad.math_forms``: prod, the vector norm, amax/amin, the median of all
elements, hypot, copysign, rounded division and the gamma functions.

Each program is run by gradcheck (float64) and against PyTorch (see ``op_cases.py``). Ranges keep
the functions smooth: away from the kinks of norms at 0, from the poles of the gamma functions,
and (``distinct``) from ties of max/median. Programs named ``*_double_backward`` return
first-order gradients taken with ``create_graph=True``, so their check is a check of each backward.
"""

from __future__ import annotations

import math

from hypothesis import strategies as st

from tests.minigrad.ops.cases_core import broadcastable, dim_and_keepdim, dims_and_keepdim, one, shapes
from tests.minigrad.ops.op_cases import case

same2 = shapes().map(lambda s: (s, s))


def grads_of(lib, loss_fn, inputs):
    """d loss / d inputs with ``create_graph=True`` (grad mode forced on: gradcheck may run under no_grad)."""
    with lib.enable_grad():
        return lib.autograd.grad(loss_fn(), inputs, create_graph=True)


# -- prod ----------------------------------------------------------------------------------------

case("prod", lambda lib, F, a: a.prod() + lib.prod(a * 2), one(), name="prod_all")
case("prod", lambda lib, F, a, params: a.prod(params[0], keepdim=params[1]), one(1),
     extra={"params": dim_and_keepdim}, name="prod_dim")
case("prod", lambda lib, F, a, w: grads_of(lib, lambda: (a.prod(-1) * w.sum(-1)).sum(), a)[0],
     shapes(1, 3, 2, 3).map(lambda s: (s, s)), away_from=(0.0,), margin=0.1, name="prod_double_backward")

# -- vector norms ----------------------------------------------------------------------------------

case("vector_norm", lambda lib, F, a: a.norm() + lib.norm(a, 3) + a.norm(p=1.5), one(), away_from=(0.0,),
     margin=0.1, name="norm_all")
case("vector_norm", lambda lib, F, a, params: lib.norm(a, 2, dim=params[0], keepdim=params[1]), one(1),
     away_from=(0.0,), margin=0.1, extra={"params": dims_and_keepdim}, name="norm_dims")
case("vector_norm", lambda lib, F, a, params: a.norm(1, dim=params[0]) + a.norm(0.5, dim=params[0]), one(1),
     away_from=(0.0,), margin=0.1, extra={"params": dim_and_keepdim}, name="norm_p_below_2")
# exp(a) - 3: distinct drawn values never tie in absolute value (a tie such as -0.7, 0.7 is a kink of the norm)
case("vector_norm", lambda lib, F, a: (a.exp() - 3.0).norm(math.inf) + lib.norm(a.exp() - 3.0, -math.inf), one(),
     distinct=True, away_from=(math.log(3.0),), margin=0.1, name="norm_inf")
case("vector_norm", lambda lib, F, a, b: lib.dist(a, b + 5.0) + a.dist(b - 5.0, 3), broadcastable(2), name="dist")
case("vector_norm", lambda lib, F, a: lib.std(a) + a.std(-1, keepdim=True).sum() + lib.std(a, correction=0),
     shapes(1, 3, 2, 3).map(lambda s: (s,)), distinct=True, name="std")
case("vector_norm", lambda lib, F, a, b: lib.cdist(a, b + 5.0) + lib.cdist(a, b - 5.0, p=1.0),
     st.tuples(st.integers(1, 3), st.integers(1, 3), st.integers(1, 3)).map(lambda s: ((s[0], s[2]), (s[1], s[2]))),
     name="cdist")
case("vector_norm", lambda lib, F, a, w: grads_of(lib, lambda: (a.norm(dim=-1) * w.sum(-1)
                                                               + a.norm(3, dim=-1) * w.mean(-1)).sum(), a)[0],
     shapes(1).map(lambda s: (s, s)), away_from=(0.0,), margin=0.1, name="norm_double_backward")

# -- amax / amin / median ------------------------------------------------------------------------------

case("amax", lambda lib, F, a: a.amax() + lib.amin(a) * 2, one(), distinct=True, name="amax_all")
case("amax", lambda lib, F, a, params: lib.amax(a, params[0], keepdim=params[1])
     - a.amin(dim=params[0], keepdim=params[1]), one(1), distinct=True, extra={"params": dims_and_keepdim},
     name="amax_dims")
case("median_all", lambda lib, F, a: a.median() + lib.median(a * a), one(), distinct=True, low=0.1,
     name="median_all")

case("nansum", lambda lib, F, a, params: lib.nansum(a, params[0], keepdim=params[1]) + a.nanmean(params[0]).sum()
     + a.nansum(), one(1), extra={"params": dims_and_keepdim}, name="nansum")

# -- elementwise ops of their own ----------------------------------------------------------------------

case("hypot", lambda lib, F, a, b: lib.hypot(a, b) + a.hypot(b * 2), broadcastable(2), away_from=(0.0,),
     margin=0.2)
case("hypot", lambda lib, F, a, b: grads_of(lib, lambda: lib.hypot(a, b).sum(), (a, b))[0],
     same2, away_from=(0.0,), margin=0.2, name="hypot_double_backward")
case("copysign", lambda lib, F, a, b: lib.copysign(a, b) + a.copysign(-1.0), broadcastable(2),
     away_from=(0.0,), margin=0.1)
case("xlogy", lambda lib, F, a, b: lib.xlogy(a, b) + a.xlogy(2.0) + lib.xlogy(3.0, b), broadcastable(2), low=0.1,
     high=3.0)
case("xlogy", lambda lib, F, a, b: grads_of(lib, lambda: lib.xlogy(a, b).sum(), (a, b))[1], same2, low=0.1,
     high=3.0, name="xlogy_double_backward")
integers_and_halves = tuple(k / 2 for k in range(-6, 7))
case("rounded_div", lambda lib, F, a: lib.div(a, 0.5, rounding_mode="floor") * a
     + a.div(2.0, rounding_mode="trunc") + a, one(), away_from=integers_and_halves, margin=0.05, name="rounded_div")

# -- gamma functions ------------------------------------------------------------------------------------

poles = tuple(float(k) for k in range(-4, 1))
case("lgamma", lambda lib, F, a: a.lgamma() + lib.lgamma(a * 3), one(), low=0.1, high=4.0, name="lgamma")
case("lgamma", lambda lib, F, a: lib.lgamma(a), one(), low=-3.5, high=-0.1, away_from=poles, margin=0.1,
     name="lgamma_negative")
case("digamma", lambda lib, F, a: a.digamma() + lib.digamma(a * 5), one(), low=0.1, high=4.0, name="digamma")
case("digamma", lambda lib, F, a: lib.digamma(a), one(), low=-3.5, high=-0.1, away_from=poles, margin=0.1,
     name="digamma_negative")
# PyTorch's trigamma (polygamma(1, x)) is off by up to ~1e-9 relative, more than the oracle's forward
# tolerance: it is compared as digamma's gradient here (tolerance 1e-8) and with exact values in
# tests/minigrad/test_math_forms.py.
case("polygamma", lambda lib, F, a: a.polygamma(2) + lib.polygamma(3, a * 4), one(), low=0.2, high=4.0,
     name="polygamma")
case("polygamma", lambda lib, F, a: lib.polygamma(2, a), one(), low=-2.5, high=-0.1, away_from=poles, margin=0.1,
     name="polygamma_negative")
case("lgamma", lambda lib, F, a, w: grads_of(lib, lambda: (a.lgamma() * w).sum(), a)[0],
     same2, low=0.2, high=3.0, name="gamma_double_backward")
