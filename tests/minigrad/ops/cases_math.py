# ruff: noqa: N803  (every program takes PyTorch's conventional name F for nn.functional)
"""Op cases for the elementwise math of ``minigrad.ops.math``, the scans of ``minigrad.ops.scan``
and ``einsum``.

Each case is one program ``fn(lib, F, *inputs, params=...)`` run by gradcheck
and against PyTorch (see ``op_cases.py``). Input ranges keep the functions
smooth: inside their domains, and ``away_from`` the jumps of the rounding
ops and the branch points of ``atan2``, ``remainder`` and ``fmod`` (whose
operands are mapped into a band where the quotient has no integer inside).
Programs named ``*_double_backward`` return first-order gradients taken with
``create_graph=True``, so their check is a check of each backward.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from tests.minigrad.ops.cases_core import broadcastable, dim_of, one, shapes
from tests.minigrad.ops.op_cases import case


def grads_of(lib, loss_fn, inputs):
    """d loss / d inputs with ``create_graph=True`` (grad mode forced on: gradcheck may run under no_grad)."""
    with lib.enable_grad():
        return lib.autograd.grad(loss_fn(), inputs, create_graph=True)


pair = broadcastable(2)
same2 = shapes().map(lambda s: (s, s))  # an input and the weights of its double-backward loss

# -- trigonometric and hyperbolic functions ---------------------------------------------------------

case("sin", lambda lib, F, a: a.sin() + lib.sin(a), one())
case("cos", lambda lib, F, a: a.cos() + lib.cos(a), one())
case("tan", lambda lib, F, a: a.tan() + lib.tan(a), one(), low=-1.2, high=1.2)
case("asin", lambda lib, F, a: a.asin() + lib.asin(a) + a.arcsin(), one(), low=-0.9, high=0.9)
case("acos", lambda lib, F, a: a.acos() + lib.acos(a), one(), low=-0.9, high=0.9)
case("atan", lambda lib, F, a: a.atan() + lib.atan(a) + lib.arctan(a), one(), low=-3.0, high=3.0)
case("sinh", lambda lib, F, a: a.sinh() + lib.sinh(a), one())
case("cosh", lambda lib, F, a: a.cosh() + lib.cosh(a), one())
case("asinh", lambda lib, F, a: a.asinh() + lib.asinh(a), one(), low=-3.0, high=3.0)
case("acosh", lambda lib, F, a: a.acosh() + lib.acosh(a), one(), low=1.2, high=4.0)
case("atanh", lambda lib, F, a: a.atanh() + lib.atanh(a), one(), low=-0.9, high=0.9)
case("sin", lambda lib, F, a, w: grads_of(lib, lambda: ((a.sin() + a.cos() + a.tan() + a.atan()) * w).sum(), a)[0],
     same2, low=-1.2, high=1.2, name="trig_double_backward")
case("asin", lambda lib, F, a, w: grads_of(lib, lambda: ((a.asin() + a.acos() + a.atanh()) * w).sum(), a)[0],
     same2, low=-0.8, high=0.8, name="arc_double_backward")
case("sinh", lambda lib, F, a, w: grads_of(lib, lambda: ((a.sinh() + a.cosh() + a.asinh() + a.acosh()) * w).sum(),
                                           a)[0],
     same2, low=1.2, high=3.0, name="hyperbolic_double_backward")

# -- exponentials, logarithms, powers ----------------------------------------------------------------------

case("exp2", lambda lib, F, a: a.exp2() + lib.exp2(a), one())
case("expm1", lambda lib, F, a: a.expm1() + lib.expm1(a * 1e-3), one())
case("log2", lambda lib, F, a: a.log2() + lib.log2(a), one(), low=0.2, high=3.0)
case("log10", lambda lib, F, a: a.log10() + lib.log10(a), one(), low=0.2, high=3.0)
case("log1p", lambda lib, F, a: a.log1p() + lib.log1p(a * 1e-3), one(), low=-0.5, high=2.0)
case("rsqrt", lambda lib, F, a: a.rsqrt() + lib.rsqrt(a), one(), low=0.2, high=3.0)
case("reciprocal", lambda lib, F, a: a.reciprocal() + lib.reciprocal(a), one(), away_from=(0.0,), margin=0.4)
case("square", lambda lib, F, a: a.square() + lib.square(a), one())
case("erf", lambda lib, F, a: a.erf() + lib.erf(a * 3), one())
case("erfinv", lambda lib, F, a: a.erfinv() + lib.erfinv(a * 0.5), one(), low=-0.9, high=0.9)
case("exp2", lambda lib, F, a, w: grads_of(lib, lambda: ((a.exp2() + a.expm1() + a.square() + a.erf()) * w).sum(),
                                           a)[0],
     same2, name="exp_double_backward")
case("log2", lambda lib, F, a, w: grads_of(lib, lambda: ((a.log2() + a.log10() + a.log1p() + a.rsqrt()
                                                          + a.reciprocal() + a.erfinv()) * w).sum(), a)[0],
     same2, low=0.2, high=0.9, name="log_double_backward")

# -- rounding and sign: zero gradients, inputs away from the jumps --------------------------------------------

integers = tuple(float(k) for k in range(-2, 3))
halves = (-1.5, -0.5, 0.5, 1.5)
tenths = tuple(k / 10 + 0.05 for k in range(-21, 20))  # the jumps of round(x, decimals=1)
case("sign", lambda lib, F, a: a.sign() * a + lib.sign(a), one(), away_from=(0.0,))
case("floor", lambda lib, F, a: a.floor() * a + lib.floor(a), one(), away_from=integers)
case("ceil", lambda lib, F, a: a.ceil() * a + lib.ceil(a), one(), away_from=integers)
case("trunc", lambda lib, F, a: a.trunc() * a + lib.trunc(a) + a.fix(), one(), away_from=integers)
case("round", lambda lib, F, a: a.round() * a + lib.round(a), one(), away_from=halves)
case("round", lambda lib, F, a: a.round(decimals=1) * a + lib.round(a * 100, decimals=-1), one(),
     away_from=tenths, margin=0.01, name="round_decimals")

# -- binary functions ----------------------------------------------------------------------------------------

def _apart(lib, b):
    """``b`` moved into +-[2.8, 3.2], the sign alternating by element: never near a value in [-2, 2]
    (finite differences straddling a tie would see a kink), so either operand wins somewhere."""
    signs = ((-1.0) ** np.arange(b.numel())).reshape(tuple(b.shape)).tolist()
    return (b * 0.1 + 3.0) * lib.tensor(signs, dtype=b.dtype, device=b.device)


case("maximum", lambda lib, F, a, b: lib.maximum(a, _apart(lib, b)) + _apart(lib, b).maximum(a), pair)
case("minimum", lambda lib, F, a, b: lib.minimum(a, _apart(lib, b)) + _apart(lib, b).minimum(a), pair)
case("atan2", lambda lib, F, a, b: lib.atan2(a, b) + a.atan2(b * 2), pair, away_from=(0.0,), margin=0.3)


def _band(a, b):
    """Operands with divisor in [1.5, 2.5] and quotient in [2.1, 2.9] (no integer inside: smooth)."""
    divisor = b * 0.25 + 2.0
    return divisor * (2.5 + 0.4 * a), divisor


def _signed(op, x, y):
    """``op`` at every sign combination of its operands."""
    return op(x, y) + op(-x, y) + op(x, -y) + op(-x, -y)


case("remainder", lambda lib, F, a, b: _signed(lambda x, y: x % y, *_band(a, b)) + lib.remainder(*_band(a, b)),
     pair, low=-1.0, high=1.0)
case("remainder", lambda lib, F, a: a % 1.5 + a.remainder(-1.5), one(), away_from=(-1.5, 0.0, 1.5),
     name="remainder_scalar")
case("fmod", lambda lib, F, a, b: _signed(lib.fmod, *_band(a, b)), pair, low=-1.0, high=1.0)
case("fmod", lambda lib, F, a: a.fmod(1.5) + lib.fmod(a, -1.5), one(), away_from=(-1.5, 0.0, 1.5),
     name="fmod_scalar")

# -- scans -------------------------------------------------------------------------------------------------


def _grad_of_scan(lib, x, w, op, dim):
    return grads_of(lib, lambda: (op(x, dim) * w).sum(), x)[0]


case("cumsum", lambda lib, F, a, params: a.cumsum(params) + lib.cumsum(a, dim=params), one(1),
     extra={"params": dim_of()})
case("cumsum", lambda lib, F, a, w, params: _grad_of_scan(lib, a, w, lambda x, d: x.cumsum(d) ** 2, params),
     shapes(1).map(lambda s: (s, s)), extra={"params": dim_of()}, name="cumsum_double_backward")
case("cumprod", lambda lib, F, a, params: a.cumprod(params) + lib.cumprod(a, dim=params), one(1),
     extra={"params": dim_of()})
# Away from 0: without zeros the backward divides by the input (as PyTorch's), and its own derivative
# cancels two terms of size 1/x; near 0 that loses every digit in both libraries.
case("cumprod", lambda lib, F, a, w, params: _grad_of_scan(lib, a, w, lambda x, d: x.cumprod(d), params),
     shapes(1).map(lambda s: (s, s)), away_from=(0.0,), margin=0.2, extra={"params": dim_of()},
     name="cumprod_double_backward")


def _with_zeros(lib, z):
    """Blocks 1.5, 0, -0.5, 0, 2 (+ z, drawn as 0.0): a first zero, a zero-free stretch, a second zero."""
    return lib.cat([z + 1.5, z, z * 3 - 0.5, z, 2 + z], dim=-1)


# Inputs are drawn as 0.0 only: the cumulative product is smooth everywhere, so finite differences
# check the gradient right at its zeros (before, at and after the first and second zero).
case("cumprod", lambda lib, F, z: _with_zeros(lib, z).cumprod(-1), one(1), low=0.0, high=0.0,
     name="cumprod_at_zeros")
case("cumprod", lambda lib, F, z, w: grads_of(
         lib, lambda: (_with_zeros(lib, z).cumprod(-1) * (_with_zeros(lib, w) + 0.25)).sum(), z)[0],
     shapes(1).map(lambda s: (s, s)), low=0.0, high=0.0, name="cumprod_at_zeros_double_backward")

# -- einsum --------------------------------------------------------------------------------------------------


@st.composite
def einsum_problem(draw, max_operands=3):
    """(shapes, equation): random subscripts with shared, repeated, summed and broadcast (size-1) letters."""
    letters = draw(st.lists(st.sampled_from("abcdeXY"), min_size=1, max_size=4, unique=True))
    sizes = {c: draw(st.integers(1, 3)) for c in letters}
    terms, operand_shapes = [], []
    for _ in range(draw(st.integers(1, max_operands))):
        term = "".join(draw(st.lists(st.sampled_from(letters), min_size=0, max_size=3)))
        terms.append(term)
        operand_shapes.append(tuple(1 if term.count(c) == 1 and draw(st.booleans()) else sizes[c] for c in term))
    if draw(st.booleans()):
        return tuple(operand_shapes), ",".join(terms)  # implicit output
    used = sorted(set("".join(terms)))
    output = "".join(draw(st.permutations(used))[: draw(st.integers(0, len(used)))])
    return tuple(operand_shapes), ",".join(terms) + "->" + output


def problem_case(op, name, problems, fn, **kwargs):
    """A case whose input shapes and ``params`` are drawn together: ``problems`` draws ``(shapes, params)``.

    (Cases draw their shapes first and their params from the shapes; a shared
    strategy hands both halves of one drawn problem to the two draws.)
    """
    shared = st.shared(problems, key=name)
    case(op, fn, shared.map(lambda p: p[0]), extra={"params": lambda drawn: shared.map(lambda p: p[1])},
         name=name, **kwargs)


problem_case("einsum", "einsum_random", einsum_problem(), lambda lib, F, *xs, params: lib.einsum(params, *xs))
problem_case("einsum", "einsum_double_backward",
             st.sampled_from([
                 (((2, 3), (3, 2), (2, 2)), "ij,jk->ik"),
                 (((3, 3), (3,), (3,)), "ii,i->i"),
                 (((2, 3), (1,), ()), "ij,j->"),
                 (((2,), (3,), (2, 3)), "i,j"),
                 (((2, 1, 3), (4, 3), (2, 4)), "...j,...j->..."),
             ]),
             lambda lib, F, a, b, w, params: grads_of(lib, lambda: (lib.einsum(params, a, b) ** 2 * w).sum(), (a, b)))
case("einsum", lambda lib, F, a, b: lib.einsum("...ij,...j->...i", a, b) + lib.einsum("...ij,...j", a, b),
     st.tuples(shapes(0, 2, 1, 2), st.integers(1, 3), st.integers(1, 3))
     .map(lambda s: (s[0] + (s[1], s[2]), (s[2],))), name="einsum_ellipsis")
case("einsum", lambda lib, F, a, b: lib.einsum(" i j , j k -> i k ", [a, b]) + lib.einsum("ij,ij->ij", a[:, :1], a) @ b,
     st.tuples(st.integers(1, 3), st.integers(1, 3), st.integers(1, 3)).map(lambda s: ((s[0], s[1]), (s[1], s[2]))),
     name="einsum_list_spaces_broadcast")
case("einsum",
     lambda lib, F, a, b: lib.einsum(a, [0, 27], b, [27, 51], [51, 0]) + lib.einsum(a, [Ellipsis, 1], b, [1, 2]).T,
     st.tuples(st.integers(1, 3), st.integers(1, 3), st.integers(1, 3)).map(lambda s: ((s[0], s[1]), (s[1], s[2]))),
     name="einsum_sublists")
