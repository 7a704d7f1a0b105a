"""minigrad.math_forms against PyTorch: values, dtypes, float64 gradients, errors and ``out=``.

Most checks are rows of a table: a program written once against the API minigrad shares with
PyTorch, and its input arrays. ``run_both`` runs the program in both libraries on the same data
and compares every output (value, shape, dtype, requires_grad) and, for a random upstream
gradient, the gradient of every floating input.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad as mg
from minigrad import math_forms

RNG = np.random.default_rng(0)
NAN, INF = math.nan, math.inf


def r(*shape, low=-2.0, high=2.0, dtype=np.float64):
    """A random array of ``shape``."""
    return RNG.uniform(low, high, shape).astype(dtype)


def _outputs(result) -> list:
    if isinstance(result, (tuple, list)):
        return [x for item in result for x in _outputs(item)]
    return [result]


def _numpy(t) -> np.ndarray:
    if isinstance(t, torch.Tensor):
        return t.detach().numpy()
    return np.asarray(t.detach().numpy())


def _assert_close(mine, theirs, rtol, atol, what):
    m, t = _numpy(mine), _numpy(theirs)
    assert m.shape == t.shape, f"{what}: shape {m.shape}, PyTorch {t.shape}"
    assert m.dtype == t.dtype, f"{what}: dtype {m.dtype}, PyTorch {t.dtype}"
    if t.dtype.kind in "fc":
        np.testing.assert_allclose(m, t, rtol=rtol, atol=atol, equal_nan=True, err_msg=what)
    else:
        np.testing.assert_array_equal(m, t, err_msg=what)


def run_both(program, *arrays, grad=True, rtol=1e-10, atol=1e-12, grad_rtol=1e-8):
    """Run ``program(lib, *tensors)`` in minigrad and PyTorch and compare outputs and input gradients."""
    def wants(a):
        return grad and a.dtype.kind == "f"

    mine = [mg.tensor(a, requires_grad=wants(a)) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=wants(a)) for a in arrays]
    m_out, t_out = _outputs(program(mg, *mine)), _outputs(program(torch, *theirs))
    assert len(m_out) == len(t_out)
    for k, (m, t) in enumerate(zip(m_out, t_out)):
        _assert_close(m, t, rtol, atol, f"output {k}")
        assert m.requires_grad == t.requires_grad, f"output {k}: requires_grad differs"
    pairs = [(m, t) for m, t in zip(m_out, t_out) if t.requires_grad]
    if not pairs:
        return m_out
    seeds = [RNG.uniform(-1, 1, tuple(t.shape)) for _, t in pairs]
    torch.autograd.backward([t for _, t in pairs], [torch.tensor(s, dtype=t.dtype) for s, (_, t) in zip(seeds, pairs)])
    mg.autograd.backward([m for m, _ in pairs], [mg.tensor(s, dtype=m.dtype) for s, (m, _) in zip(seeds, pairs)])
    for i, (m, t) in enumerate(zip(mine, theirs)):
        if t.grad is None:
            assert m.grad is None, f"input {i}: PyTorch computes no gradient, minigrad does"
        else:
            assert m.grad is not None, f"input {i}: minigrad computes no gradient, PyTorch does"
            _assert_close(m.grad, t.grad, grad_rtol, 1e-11, f"gradient of input {i}")
    return m_out


# -- the table ----------------------------------------------------------------------------------------

ROWS = [
    # 1. arithmetic: method and function spellings
    ("add_alpha", lambda lib, a, b: lib.add(a, b, alpha=2) + a.add(b, alpha=-0.5) + a.add(3.0), (r(2, 3), r(3))),
    ("sub_alpha", lambda lib, a, b: lib.sub(a, b, alpha=3) + a.sub(b) + lib.subtract(b, a, alpha=0.25), (r(2, 3), r(2,
        1))),
    ("mul", lambda lib, a, b: lib.mul(a, b) + a.mul(2.0) + lib.multiply(a, b) + a.multiply(b), (r(2, 3), r(3))),
    ("div", lambda lib, a, b: lib.div(a, b) + a.div(4.0) + lib.divide(a, b) + a.true_divide(b) + lib.true_divide(a, b),
     (r(2, 3), r(3, low=0.5, high=2.0))),
    ("div_rounded", lambda lib, a, b: lib.div(a, b, rounding_mode="floor") * a + a.div(b, rounding_mode="trunc")
     + a.divide(-0.3, rounding_mode="floor"), (r(4, 3, low=-5, high=5), r(3, low=0.3, high=2.0))),
    ("div_rounded_int", lambda lib, a, b: (lib.div(a, b, rounding_mode="trunc"), a.div(b, rounding_mode="floor"),
                                         lib.div(a, 3, rounding_mode="trunc"), lib.div(a, b)),
     (np.array([7, -7, 6, -6, 0, 5], dtype=np.int64), np.array([2, 2, -4, -4, 3, -1], dtype=np.int64))),
    ("div_rounded_float32", lambda lib, a: lib.div(a, 0.7, rounding_mode="floor"), (r(5, dtype=np.float32),)),
    ("neg", lambda lib, a: lib.neg(a) + a.neg() + lib.negative(a) + a.negative(), (r(2, 2),)),
    ("matmul_method", lambda lib, a, b: a.matmul(b), (r(2, 3, 4), r(4, 2))),
    ("where_method", lambda lib, a, b: a.where(a > 0, b) + a.where(a < 0, 1.5), (r(3, 4), r(4))),
    ("softmax", lambda lib, a: lib.softmax(a, 1) + a.softmax(-1) + a.log_softmax(0) + lib.log_softmax(a, dim=1),
     (r(3, 4),)),
    ("softmax_dtype", lambda lib, a: a.softmax(0, dtype=lib.float64), (r(3, dtype=np.float32),)),
    # 2. reductions
    ("var_std", lambda lib, a: (lib.var(a), a.var(1), a.var(0, keepdim=True), lib.std(a, (0, 2)), a.std(correction=0),
                              a.var(1, unbiased=False), lib.var(a, False), a.std(dim=-1, correction=2, keepdim=True)),
     (r(3, 4, 2),)),
    ("var_std_constant", lambda lib, a: (a.std(), a.std(0), a.var(1)), (np.full((3, 2), 1.5),)),
    ("var_std_float32", lambda lib, a: (a.var(0), a.std()), (r(4, 3, dtype=np.float32),)),
    ("var_mean_std_mean", lambda lib, a: (lib.var_mean(a, 1), lib.std_mean(a, dim=(0,), keepdim=True),
                                        lib.std_mean(a, correction=0)), (r(3, 4),)),
    ("var_zero_dim", lambda lib, a: (a.var(correction=0), lib.std(a, 0, correction=0)), (np.array(2.5),)),
    ("prod", lambda lib, a: (a.prod(), lib.prod(a, 1), a.prod(0, keepdim=True), lib.prod(a, -1, dtype=lib.float32)),
     (r(3, 4),)),
    ("prod_one_zero", lambda lib, a: (a.prod(), a.prod(1), a.prod(0)), (np.array([[1.5, 0.0, 2.0], [3.0, -1.0,
        0.5]]),)),
    ("prod_two_zeros", lambda lib, a: (a.prod(), a.prod(1)), (np.array([[0.0, 2.0, 0.0], [0.0, 0.0, 0.0]]),)),
    ("prod_int", lambda lib, a: (a.prod(), lib.prod(a, 0), a.prod(dtype=lib.float64)), (np.array([[2, 3], [4, -1]],
        np.int32),)),
    ("prod_bool", lambda lib, a: (a.prod(), a.prod(0)), (np.array([[True, False], [True, True]]),)),
    ("norm", lambda lib, a: (a.norm(), lib.norm(a, 1), a.norm(3), a.norm(0.5), a.norm(INF), lib.norm(a, -INF),
                           a.norm(0), lib.norm(a, "fro", dim=(0, 1)), a.norm(dim=1, keepdim=True), a.norm(2, dim=(1,
                               2)),
                           a.norm(p=4, dim=-1)),
     (r(2, 3, 4),)),
    ("norm_at_zero", lambda lib, a: (a.norm(), a.norm(3), a.norm(1.5), a.norm(1), a.norm(dim=1), a.norm(0.5, dim=1)),
     (np.array([[0.0, 0.0], [0.0, 1.0]]),)),
    ("norm_inf_ties", lambda lib, a: (a.norm(INF), a.norm(INF, dim=1), a.norm(-INF, dim=0)),
     (np.array([[2.0, -2.0, 1.0], [-3.0, 0.5, 3.0]]),)),
    ("norm_dtype", lambda lib, a: (a.norm(dtype=lib.float64), lib.norm(a, 2, dim=0)), (r(3, 2, dtype=np.float32),)),
    ("dist", lambda lib, a, b: (lib.dist(a, b), a.dist(b, 1), a.dist(b, INF), lib.dist(a, b, 0.5)), (r(3, 4), r(4))),
    ("dist_equal", lambda lib, a, b: (a.dist(b), lib.dist(a, b, 3)), (np.ones((2, 2)), np.ones((2, 2)))),
    ("logsumexp", lambda lib, a: (lib.logsumexp(a, 1), a.logsumexp((0, 2), keepdim=True), a.logsumexp(-1)), (r(3, 4,
        2),)),
    ("logsumexp_extreme", lambda lib, a: (a.logsumexp(1), lib.logsumexp(a, 0)),
     (np.array([[1000.0, 1000.0, -1000.0], [-INF, -INF, -INF]]),)),
    ("logsumexp_int", lambda lib, a: lib.logsumexp(a, 0), (np.array([1, 2, 3]),)),
    ("amax_amin", lambda lib, a: (a.amax(), lib.amin(a), a.amax(1), lib.amax(a, (0, 2), keepdim=True), a.amin(-1)),
     (r(3, 4, 2),)),
    ("amax_ties", lambda lib, a: (a.amax(), a.amax(1), lib.amin(a, 0), a.amin(dim=(0, 1))),
     (np.array([[3.0, 3.0, 1.0], [3.0, 0.0, 0.0]]),)),
    ("amax_int", lambda lib, a: (a.amax(0), a.amin()), (np.array([[1, 5], [7, -2]]),)),
    ("median", lambda lib, a: (a.median(), lib.median(a, 1), a.median(0, keepdim=True), a.median(dim=-1)), (r(4, 5),)),
    ("median_ties", lambda lib, a: (a.median(), lib.median(a)), (np.array([3.0, 2.0, 2.0, 1.0, 3.0, 1.0]),)),
    ("median_ties_dim", lambda lib, a: lib.median(a, 0), (np.array([3.0, 2.0, 2.0, 1.0, 3.0, 1.0]),)),
    ("median_nan", lambda lib, a: (a.median(1).values, a.median(1).indices, a.median()),
     (np.array([[3.0, NAN, 2.0], [1.0, 2.0, 0.0]]),)),
    ("median_empty", lambda lib, a: lib.median(a), (np.zeros((0, 2)),)),
    ("median_int", lambda lib, a: (a.median(), a.median(0)), (np.array([[4, 1, 3], [2, 2, 9]]),)),
    ("mode", lambda lib, a: (a.mode(), lib.mode(a, 0), a.mode(1, keepdim=True)),
     (np.array([[1.0, 2.0, 2.0, 1.0, 3.0], [3.0, 2.0, 2.0, 1.0, 3.0], [5.0, 4.0, 3.0, 2.0, 1.0]]),)),
    ("mode_int", lambda lib, a: lib.mode(a), (np.array([[3, 2, 2, 1, 3, 1]]),)),
    ("mode_zero_dim", lambda lib, a: lib.mode(a), (np.array(3.0),)),
    ("count_nonzero", lambda lib, a: (lib.count_nonzero(a), a.count_nonzero(0), lib.count_nonzero(a, dim=(0, 1))),
     (np.array([[0.0, 1.0, 2.0], [0.0, 0.0, -1.0]]),)),
    ("nansum_nanmean", lambda lib, a: (lib.nansum(a), a.nansum(1), a.nanmean(), lib.nanmean(a, 0, keepdim=True),
                                     a.nanmean(1)),
     (np.array([[1.0, NAN, 2.0], [NAN, NAN, NAN], [0.5, -1.0, 4.0]]),)),
    ("nansum_int", lambda lib, a: (lib.nansum(a), a.nansum(0)), (np.array([[1, 2], [3, 4]], np.int32),)),
    # 3. linear algebra
    ("mm_bmm_mv_dot", lambda lib, a, b, c, v: (lib.mm(a, b), a.mm(b), lib.bmm(c, c.mT), c.bmm(c.mT), lib.mv(a, v[:3]),
                                             a.mv(v[:3]), lib.dot(v, v), v.dot(v)),
     (r(2, 3), r(3, 4), r(2, 3, 4), r(4))),
    ("outer", lambda lib, a, b: (lib.outer(a, b), a.outer(b)), (r(3), r(4))),
    ("cross", lambda lib, a, b: (lib.cross(a, b, dim=1), a.cross(b, dim=-1), lib.cross(a.mT, b.mT, 0)), (r(2, 3), r(1,
        3))),
    ("tensordot", lambda lib, a, b: (lib.tensordot(a, b, 1), lib.tensordot(a, b.mT, dims=([1, 2], [0, 1])),
                                   lib.tensordot(a, b, dims=0), lib.tensordot(a, b, dims=([2], [0]))),
     (r(2, 3, 4), r(4, 3))),
    ("kron", lambda lib, a, b, c: (lib.kron(a, b), a.kron(c), lib.kron(c, a)), (r(2, 3), r(2, 2), r(3))),
    ("trace", lambda lib, a: (lib.trace(a), a.trace(), a.mT.trace()), (r(3, 4),)),
    ("trace_int", lambda lib, a: a.trace(), (np.array([[1, 2], [3, 4]], np.int32),)),
    ("addmm", lambda lib, i, a, b: (lib.addmm(i, a, b), i.addmm(a, b, beta=0.5, alpha=-2), lib.addmm(i[0], a, b,
        beta=2)),
     (r(2, 4), r(2, 3), r(3, 4))),
    ("addmm_beta_zero", lambda lib, i, a, b: lib.addmm(i, a, b, beta=0), (np.array([[NAN, 1.0], [INF, 2.0]]), r(2, 3),
                                                                      r(3, 2))),
    ("addmv", lambda lib, i, a, v: (lib.addmv(i, a, v), i.addmv(a, v, beta=3, alpha=0.5), lib.addmv(i, a, v, beta=0)),
     (r(2), r(2, 3), r(3))),
    ("baddbmm", lambda lib, i, a, b: (lib.baddbmm(i, a, b), i.baddbmm(a, b, alpha=2, beta=0.25), lib.baddbmm(i[0], a,
        b)),
     (r(2, 3, 4), r(2, 3, 5), r(2, 5, 4))),
    ("addcmul_addcdiv", lambda lib, i, a, b: (lib.addcmul(i, a, b), i.addcmul(a, b, value=-0.5), lib.addcdiv(i, a, b),
                                            i.addcdiv(a, b, value=2)), (r(2, 3), r(3), r(2, 1, low=0.5))),
    ("addcmul_int_float_value", lambda lib, a: lib.addcmul(a, a, a, value=0.5), (np.array([1, 2, 3]),)),
    ("lerp_mixed_weight", lambda lib, a, b, w: lib.lerp(a, b, w), (r(3, dtype=np.float32), r(3, dtype=np.float32),
                                                                    np.array(0.25))),
    ("lerp", lambda lib, a, b, w: (lib.lerp(a, b, 0.3), a.lerp(b, w), lib.lerp(a, b, w[0]), a.lerp(b, 0.8)),
     (r(2, 3), r(3), r(2, 1, low=0, high=1))),
    ("cdist", lambda lib, a, b: (lib.cdist(a, b), lib.cdist(a, b, p=1), lib.cdist(a, b, p=INF), lib.cdist(a, b, 3.0)),
     (r(2, 4, 3), r(2, 5, 3))),
    ("cdist_broadcast", lambda lib, a, b: lib.cdist(a, b), (r(2, 1, 4, 3), r(3, 5, 3))),
    ("cdist_zero_distance", lambda lib, a, b: (lib.cdist(a, b), lib.cdist(a, b, p=1)),
     (np.array([[1.0, 2.0], [0.0, 0.0]]), np.array([[1.0, 2.0], [3.0, -1.0]]))),
    # 4. elementwise extras
    ("frac", lambda lib, a: (lib.frac(a), a.frac()), (r(3, 4, low=-5, high=5),)),
    ("fmax_fmin", lambda lib, a, b: (lib.fmax(a, b), a.fmin(b), a.fmax(b)),
     (np.array([1.0, NAN, 2.0, NAN, 3.0, 4.0]), np.array([1.0, 1.0, NAN, NAN, 2.0, 5.0]))),
    ("fmax_int", lambda lib, a, b: (lib.fmax(a, b), lib.fmin(a, b)), (np.array([1, 5, 3]), np.array([2, 2, 3]))),
    ("hypot", lambda lib, a, b: (lib.hypot(a, b), a.hypot(b)), (r(2, 3), r(3))),
    ("hypot_large", lambda lib, a, b: lib.hypot(a, b), (np.array([1e200, 3e-200]), np.array([1e200, 4e-200]))),
    ("deg_rad", lambda lib, a: (lib.deg2rad(a), a.rad2deg(), lib.rad2deg(a), a.deg2rad()), (r(3, 2, low=-400,
        high=400),)),
    ("deg_rad_bool", lambda lib, a: (lib.deg2rad(a > 0), (a > 0).rad2deg()), (r(3),)),
    ("deg_rad_int", lambda lib, a: (lib.deg2rad(a), a.rad2deg()), (np.array([0, 90, 180]),)),
    ("heaviside", lambda lib, a, v: (lib.heaviside(a.detach(), v.detach()), a.detach().heaviside(v[0].detach())),
     (np.array([-1.0, 0.0, 2.0, 0.0]), np.array([0.5, 0.25, 0.5, 7.0]))),
    ("signbit", lambda lib, a: (lib.signbit(a), a.signbit()), (np.array([-0.0, 0.0, -1.0, 2.0, -INF]),)),
    ("signbit_int", lambda lib, a: lib.signbit(a), (np.array([-1, 0, 3]),)),
    ("copysign", lambda lib, a, b: (lib.copysign(a, b), a.copysign(-1.0), a.copysign(b), lib.copysign(a, 0.0)),
     (np.array([1.0, -2.0, 0.0, 3.0, -0.5]), np.array([-1.0, 2.0, -3.0, -0.0, 0.0]))),
    ("copysign_int", lambda lib, a, b: lib.copysign(a, b), (np.array([1, -2, 3]), np.array([-1, 1, -1]))),
    ("clamp_min_max", lambda lib, a, lo: (lib.clamp_min(a, 0.5), a.clamp_max(-0.25), lib.clamp_min(a, lo),
                                        a.clamp_max(lo), a.clamp_min(lo[0])), (r(3, 4), r(4))),
    ("clamp_min_int", lambda lib, a: (lib.clamp_min(a, 2), a.clamp_max(1.5)), (np.array([1, 2, 3]),)),
    ("nan_to_num", lambda lib, a: (lib.nan_to_num(a), a.nan_to_num(1.0, 2.0, -3.0), a.nan_to_num(posinf=9.0)),
     (np.array([NAN, INF, -INF, 1.5, -2.0]),)),
    ("nan_to_num_float32", lambda lib, a: lib.nan_to_num(a), (np.array([NAN, INF, -INF, 1.0], np.float32),)),
    ("nan_to_num_int", lambda lib, a: lib.nan_to_num(a), (np.array([1, 2]),)),
    ("float_power", lambda lib, a, b: (lib.float_power(a, 2), a.float_power(b), lib.float_power(2.0, b),
        a.float_power(0.5)),
     (r(2, 3, low=0.5, high=2.0, dtype=np.float32), r(3, low=-1, high=1))),
    ("float_power_int", lambda lib, a: (lib.float_power(a, 3), lib.float_power(a, -1)), (np.array([1, 2, 3],
        np.int32),)),
    ("gcd", lambda lib, a, b: (lib.gcd(a, b), a.gcd(b)), (np.array([4, -6, 0, 7, 0]), np.array([6, 9, 5, -14, 0]))),
    ("absolute_clip", lambda lib, a: (lib.absolute(a), a.absolute(), lib.clip(a, -0.5, 0.5), lib.clip(a, min=0.1)),
     (r(3, 4),)),
    ("logaddexp", lambda lib, a, b: (lib.logaddexp(a, b), a.logaddexp2(b), lib.logaddexp(a * 800, b * 800),
                                     lib.logaddexp2(a, b)), (r(2, 3), r(3))),
    ("logaddexp_infinite", lambda lib, a, b: (lib.logaddexp(a, b), lib.logaddexp2(a, b)),
     (np.array([-INF, INF, 1.0, -INF]), np.array([-INF, INF, -INF, 2.0]))),
    ("xlogy", lambda lib, a, b: (lib.xlogy(a, b), a.xlogy(b), lib.xlogy(a, 2.0), lib.xlogy(3.0, b)),
     (np.array([0.0, 1.0, 2.0, 0.0, -1.5, 0.0]), np.array([0.0, 0.0, 3.0, NAN, 0.5, 2.0]))),
    ("xlogy_int", lambda lib, a, b: lib.xlogy(a, b), (np.array([0, 1, 2]), np.array([0, 2, 3]))),
    ("lcm", lambda lib, a, b: (lib.lcm(a, b), a.lcm(b)), (np.array([4, -6, 0, 7]), np.array([6, 9, 5, -14]))),
    ("sinc", lambda lib, a: (lib.sinc(a), a.sinc()), (np.array([0.0, 0.5, -1.0, 2.25, 1e-9, -3.7]),)),
    ("sinc_int", lambda lib, a: lib.sinc(a), (np.array([0, 1, 2]),)),
    ("lgamma_digamma", lambda lib, a: (lib.lgamma(a), a.lgamma(), lib.digamma(a), a.digamma()), (r(3, 4, low=0.05,
        high=20),)),
    ("lgamma_digamma_negative", lambda lib, a: (lib.lgamma(a), lib.digamma(a)), (r(10, low=-30, high=-0.01),)),
    ("gamma_poles", lambda lib, a: (lib.lgamma(a), lib.digamma(a)), (np.array([0.0, -1.0, -2.0, -30.0, INF, -INF,
        NAN]),)),
    ("gamma_extremes", lambda lib, a: (lib.lgamma(a), lib.digamma(a)), (np.array([1e-300, 1e-10, 1e10, 1e300, 0.5,
        1.0, 2.0]),)),
    ("gamma_float32_int", lambda lib, a, b: (lib.lgamma(a), lib.digamma(a), lib.lgamma(b), lib.digamma(b)),
     (r(4, low=0.1, high=5, dtype=np.float32), np.array([1, 2, 5]))),
    ("polygamma", lambda lib, a: (lib.polygamma(2, a), a.polygamma(3), lib.polygamma(0, a)), (r(3, low=0.1, high=8),)),
]

# PyTorch's own float32 reductions and gamma functions differ from NumPy's in the last bits.
LOOSE = {"var_std_float32": 1e-6, "norm_dtype": 1e-6, "softmax_dtype": 1e-6, "gamma_float32_int": 1e-6,
         "float_power": 1e-9, "div_rounded_float32": 1e-6, "gamma_extremes": 1e-13, "prod": 1e-6,
         "logsumexp_int": 1e-6}


@pytest.mark.parametrize("name,program,arrays", ROWS, ids=[row[0] for row in ROWS])
def test_matches_torch(name, program, arrays):
    rtol = LOOSE.get(name, 1e-10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # degrees of freedom <= 0 and the like: both libraries warn
        run_both(program, *arrays, rtol=rtol, atol=1e-12 if rtol < 1e-9 else rtol, grad_rtol=max(1e-8, 10 * rtol))


def test_gamma_functions_accurate_over_a_wide_range():
    # SciPy (a test dependency through scikit-learn) as the reference: PyTorch's digamma loses digits
    # near the poles (checked with mpmath below), and its trigamma is off by ~1e-9 relative.
    special = pytest.importorskip("scipy.special")
    x = np.concatenate([np.geomspace(1e-8, 1e8, 300), -np.geomspace(1e-3, 60, 200) + 1e-7])
    x = x[(x > 0) | (np.abs(x - np.round(x)) > 1e-3)]  # SciPy too loses digits right next to a pole
    m = mg.tensor(x)
    np.testing.assert_allclose(mg.lgamma(m).numpy(), special.gammaln(x), rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(mg.digamma(m).numpy(), special.psi(x), rtol=1e-11, atol=1e-12)
    for n in (1, 2, 3):
        np.testing.assert_allclose(mg.polygamma(n, m[:300]).numpy(), special.polygamma(n, x[:300]), rtol=1e-12)
    away = x[np.abs(x - np.round(x)) > 0.01]  # PyTorch agrees away from the poles
    np.testing.assert_allclose(mg.lgamma(mg.tensor(away)).numpy(), torch.lgamma(torch.tensor(away)).numpy(),
                               rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(mg.digamma(mg.tensor(away)).numpy(), torch.digamma(torch.tensor(away)).numpy(),
                               rtol=1e-10, atol=1e-12)


def test_digamma_near_a_pole_is_exact():
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 40
    for x in (-60 + 1e-7, -3 - 1e-9, -0.5, 1e-8):
        np.testing.assert_allclose(mg.digamma(mg.tensor(x, dtype=mg.float64)).item(), float(mpmath.digamma(x)),
                                   rtol=1e-13)
        np.testing.assert_allclose(mg.lgamma(mg.tensor(x, dtype=mg.float64)).item(),
                                   float(mpmath.log(abs(mpmath.gamma(x)))), rtol=1e-13)


def test_trigamma_exact_values():
    # PyTorch's trigamma is off by up to ~1e-9 relative; compare with closed forms instead (and with it loosely).
    x = mg.tensor([1.0, 0.5, 2.0, 1.5, -0.5], dtype=mg.float64)
    pi2 = math.pi**2
    exact = [pi2 / 6, pi2 / 2, pi2 / 6 - 1, pi2 / 2 - 4, pi2 / 2 + 4]
    np.testing.assert_allclose(mg.polygamma(1, x).numpy(), exact, rtol=1e-13)
    np.testing.assert_allclose(mg.polygamma(1, x).numpy(), torch.polygamma(1, torch.tensor(x.numpy())).numpy(),
                               rtol=1e-8)
    # the derivative of digamma is trigamma: the gradient agrees with a finite difference
    assert mg.autograd.gradcheck(lambda v: mg.digamma(v), (mg.tensor([0.7, 3.0, -1.3], requires_grad=True,
                                                                     dtype=mg.float64),))


@settings(max_examples=20, deadline=None)
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3), data=st.data())
def test_reductions_over_drawn_dims(shape, data):
    ndim = len(shape)
    dims = tuple(data.draw(st.lists(st.integers(-ndim, ndim - 1), min_size=1, max_size=ndim,
                                    unique_by=lambda d: d % ndim)))
    dim = data.draw(st.integers(-ndim, ndim - 1))
    keepdim = data.draw(st.booleans())
    correction = data.draw(st.sampled_from([0, 1]))
    a = r(*shape)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        run_both(lambda lib, x: (x.var(dims, keepdim=keepdim, correction=correction),
                               lib.std(x, dims, keepdim=keepdim, correction=correction),
                               x.norm(2, dim=dims, keepdim=keepdim), lib.norm(x, 3, dims, keepdim),
                               x.logsumexp(dims, keepdim), lib.amax(x, dims, keepdim), x.amin(dims, keepdim),
                               x.prod(dim, keepdim), x.median(dim, keepdim), lib.nansum(x, dims, keepdim),
                               x.nanmean(dims, keepdim), x.count_nonzero(dims)), a)


# -- method and function spellings agree -----------------------------------------------------------------

SPELLINGS = [
    ("std", (1,)), ("var", ()), ("prod", (0,)), ("norm", (3,)), ("logsumexp", (1,)), ("amax", (0,)),
    ("amin", ()), ("nansum", ()), ("nanmean", (1,)), ("count_nonzero", ()), ("frac", ()), ("deg2rad", ()),
    ("rad2deg", ()), ("signbit", ()), ("lgamma", ()), ("nan_to_num", ()), ("clamp_min", (0.1,)),
    ("clamp_max", (0.1,)), ("neg", ()), ("negative", ()), ("softmax", (0,)), ("log_softmax", (1,)),
    ("trace", ()), ("add", (2.0,)), ("mul", (3.0,)), ("div", (2.0,)), ("sub", (1.0,)), ("copysign", (-1.0,)),
    ("float_power", (2,)),
]


@pytest.mark.parametrize("name,args", SPELLINGS, ids=[s[0] for s in SPELLINGS])
def test_method_and_function_agree(name, args):
    a = mg.tensor(r(3, 4, low=0.1))
    method, function = getattr(a, name)(*args), getattr(mg, name)(a, *args)
    np.testing.assert_array_equal(method.numpy(), function.numpy())
    assert method.dtype == function.dtype


def test_median_and_mode_method_function_agree():
    a = mg.tensor(r(3, 5))
    for name in ("median", "mode"):
        values, indices = getattr(a, name)(1)
        values2, indices2 = getattr(mg, name)(a, 1)
        np.testing.assert_array_equal(values.numpy(), values2.numpy())
        np.testing.assert_array_equal(indices.numpy(), indices2.numpy())


def test_every_installed_name_exists_in_torch():
    for name in math_forms.__all__:
        assert hasattr(torch, name), name
        assert getattr(mg, name) is getattr(math_forms, name)
    for name in (*math_forms._METHODS, *math_forms._INPLACE):
        assert hasattr(torch.Tensor, name), name
        assert getattr(mg.Tensor, name) is not None


# -- in-place spellings ---------------------------------------------------------------------------------

INPLACE = [
    ("addcmul_", lambda t, lib, a, b: t.addcmul_(a, b, value=0.5), (r(2, 3), r(3))),
    ("addcdiv_", lambda t, lib, a, b: t.addcdiv_(a, b.abs() + 1), (r(2, 3), r(3))),
    ("lerp_", lambda t, lib, a, b: t.lerp_(a, 0.25).lerp_(a, b[0].sigmoid()), (r(2, 3), r(3))),
    ("addmm_", lambda t, lib, a, b: t.addmm_(a, b.reshape(2, 1) * b, beta=0.5), (r(3, 2), r(2))),
    ("clamp_min_", lambda t, lib, a, b: lib.clamp_min_(t, 0.1).clamp_max_(a), (r(2, 3), r(3))),
    ("frac_deg_rad_", lambda t, lib, a, b: lib.rad2deg_(lib.deg2rad_(t.frac_())) * a, (r(2, 3), r(3))),
    ("copysign_hypot_", lambda t, lib, a, b: t.clone().copysign_(b) * t.clone().hypot_(a), (r(2, 3), r(3))),
    ("lgamma_digamma_", lambda t, lib, a, b: (t.abs() + 0.5).lgamma_() + (t.abs() + 0.5).digamma_()
     + (t.abs() + 0.5).polygamma_(2), (r(2, 3), r(3))),
    ("nan_to_num_", lambda t, lib, a, b: lib.nan_to_num_(t / a.abs().round()), (r(2, 3), r(3))),
    ("float_power_", lambda t, lib, a, b: t.float_power_(2), (r(2, 3), r(3))),
    ("xlogy_sinc_absolute_", lambda t, lib, a, b: lib.xlogy_(t.clone(), b.abs()) + lib.sinc_(t.clone())
     + (t - 1).absolute_(), (r(2, 3), r(3))),
]


@pytest.mark.parametrize("name,program,arrays", INPLACE, ids=[row[0] for row in INPLACE])
def test_inplace_matches_torch(name, program, arrays):
    base = r(*arrays[0].shape, low=0.2, high=2.0)

    def run(lib, x, *rest):
        t = x * 1.0  # a non-leaf, so the in-place op is recorded
        out = program(t, lib, *rest)
        return out

    run_both(run, base, *arrays)


def test_inplace_refuses_results_that_do_not_fit():
    i = mg.tensor([1, 2, 3])
    with pytest.raises(RuntimeError):
        i.deg2rad_()
    with pytest.raises(RuntimeError):
        torch.tensor([1, 2, 3]).deg2rad_()
    f = mg.tensor([1.0, 2.0])
    with pytest.raises(RuntimeError, match="float_power_"):
        f.float_power_(2)
    with pytest.raises(RuntimeError):
        torch.tensor([1.0, 2.0]).float_power_(2)
    leaf = mg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf"):
        leaf.lerp_(mg.tensor([0.0, 0.0]), 0.5)


# -- out= -----------------------------------------------------------------------------------------------


def test_out_writes_in_place_and_returns_out():
    a, b = r(2, 3), r(2, 3)
    out = mg.empty(2, 3, dtype=mg.float64)
    version = out._version
    result = mg.add(mg.tensor(a), mg.tensor(b), alpha=2, out=out)
    assert result is out and out._version > version
    np.testing.assert_allclose(out.numpy(), torch.add(torch.tensor(a), torch.tensor(b), alpha=2).numpy())
    for fn, args in ((mg.mul, (a, b)), (mg.sub, (a, b)), (mg.div, (a, b)), (mg.mm, (a, b.T)), (mg.std, (a,)),
                     (mg.logsumexp, (a, 1)), (mg.lgamma, (a,)), (mg.addcmul, (a, a, b))):
        mine_out, torch_out = mg.empty(0, dtype=mg.float64), torch.empty(0, dtype=torch.float64)
        fn(*map(mg.tensor, args[:3] if fn is not mg.logsumexp else args[:1]), *(args[1:] if fn is mg.logsumexp else ()),
           out=mine_out)
        getattr(torch, fn.__name__)(*map(torch.tensor, args[:3] if fn is not mg.logsumexp else args[:1]),
                                    *(args[1:] if fn is mg.logsumexp else ()), out=torch_out)
        # atol: near its zeros at 1 and 2, lgamma is accurate to about 1e-14 absolute, not relative (math_forms.py)
        np.testing.assert_allclose(mine_out.numpy(), torch_out.numpy(), rtol=1e-12, atol=1e-14, err_msg=fn.__name__)


def test_out_resize_warns_like_torch():
    a = mg.tensor([1.0, 2.0, 3.0])
    out = mg.zeros(2)
    with pytest.warns(UserWarning, match="resized"):
        mg.mul(a, a, out=out)
    assert out.shape == (3,)
    np.testing.assert_array_equal(out.numpy(), [1.0, 4.0, 9.0])
    empty = mg.zeros(0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mg.mul(a, a, out=empty)  # an empty out is resized silently
    assert empty.shape == (3,)


def test_out_errors_match_torch():
    a, ta = mg.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0])
    with pytest.raises(RuntimeError, match="can't be cast"):
        mg.add(a, a, out=mg.zeros(2, dtype=mg.int64))
    with pytest.raises(RuntimeError):
        torch.add(ta, ta, out=torch.zeros(2, dtype=torch.int64))
    g, tg = mg.tensor([1.0, 2.0], requires_grad=True), torch.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        mg.mul(g, a, out=mg.zeros(2))
    with pytest.raises(RuntimeError):
        torch.mul(tg, ta, out=torch.zeros(2))
    with mg.no_grad():
        out = mg.zeros(2)
        mg.mul(g, a, out=out)  # allowed without grad mode
    np.testing.assert_array_equal(out.numpy(), [1.0, 4.0])
    with pytest.raises(TypeError):
        a.add(a, out=mg.zeros(2))  # methods take no out=, as in PyTorch
    with pytest.raises(TypeError):
        ta.add(ta, out=torch.zeros(2))
    with pytest.raises(TypeError):
        mg.add(a, a, out=[0.0, 0.0])


# -- errors: the same exception types as PyTorch --------------------------------------------------------------

f2 = r(2, 3)
i2 = np.array([[1, 2], [3, 4]])
ERRORS = [
    # 1
    ("add_float_alpha_int", lambda lib, a: lib.add(a, a, alpha=0.5), (i2,)),
    ("div_bad_mode", lambda lib, a: lib.div(a, a, rounding_mode="round"), (f2,)),
    ("div_int_by_zero", lambda lib, a: lib.div(a, 0, rounding_mode="floor"), (i2,)),
    ("add_not_tensor", lambda lib, a: lib.add([1.0], a), (f2,)),
    # 2
    ("var_int", lambda lib, a: lib.var(a), (i2,)),
    ("std_dim_out_of_range", lambda lib, a: a.std(5), (f2,)),
    ("var_both_unbiased_and_correction", lambda lib, a: lib.var(a, 0, True, correction=0), (f2,)),
    ("norm_int", lambda lib, a: a.norm(), (i2,)),
    ("prod_dim_tuple", lambda lib, a: lib.prod(a, (0, 1)), (f2,)),
    ("prod_dim_out_of_range", lambda lib, a: a.prod(2), (f2,)),
    ("nanmean_int", lambda lib, a: a.nanmean(), (i2,)),
    ("amax_dim_repeated", lambda lib, a: a.amax((0, 0)), (f2,)),
    ("median_dim_out_of_range", lambda lib, a: a.median(3), (f2,)),
    ("mode_dim_type", lambda lib, a: a.mode(0.5), (f2,)),
    ("logsumexp_dim_out_of_range", lambda lib, a: lib.logsumexp(a, -3), (f2,)),
    # 3
    ("mm_vector", lambda lib, a: lib.mm(a[0], a), (f2,)),
    ("mm_sizes", lambda lib, a: lib.mm(a, a), (f2,)),
    ("bmm_batch", lambda lib, a: lib.bmm(a.reshape(1, 2, 3), a.reshape(2, 3, 1)), (f2,)),
    ("mv_sizes", lambda lib, a: lib.mv(a, a[0, :2]), (f2,)),
    ("dot_dtype", lambda lib, a: lib.dot(a[0], a[0].float()), (f2,)),
    ("dot_size", lambda lib, a: lib.dot(a[0], a[1, :2]), (f2,)),
    ("dot_matrix", lambda lib, a: lib.dot(a, a), (f2,)),
    ("cross_size", lambda lib, a: lib.cross(a, a, dim=0), (f2,)),
    ("tensordot_sizes", lambda lib, a: lib.tensordot(a, a, dims=([0], [1])), (f2,)),
    ("tensordot_negative", lambda lib, a: lib.tensordot(a, a, dims=-1), (f2,)),
    ("trace_3d", lambda lib, a: lib.trace(a.reshape(1, 2, 3)), (f2,)),
    ("addcdiv_int", lambda lib, a: lib.addcdiv(a, a, a), (i2,)),
    ("cdist_columns", lambda lib, a: lib.cdist(a, a[:, :2]), (f2,)),
    ("cdist_1d", lambda lib, a: lib.cdist(a[0], a), (f2,)),
    ("lerp_dtype", lambda lib, a: lib.lerp(a, a.float(), 0.5), (f2,)),
    ("addmm_input_shape", lambda lib, a: lib.addmm(a, a, a.mT), (f2,)),
    # 4
    ("frac_int", lambda lib, a: lib.frac(a), (i2,)),
    ("frac_bool", lambda lib, a: lib.frac(a > 1), (i2,)),
    ("hypot_int", lambda lib, a: lib.hypot(a, a), (i2,)),
    ("lerp_int", lambda lib, a: lib.lerp(a, a, 0.5), (i2,)),
    ("trace_bool", lambda lib, a: lib.trace(a > 1), (i2,)),
    ("cdist_int", lambda lib, a: lib.cdist(a, a), (i2,)),
    ("fmax_complex", lambda lib, a: lib.fmax(a * 1j, a * 1j), (f2,)),
    ("logsumexp_no_dim", lambda lib, a: lib.logsumexp(a), (f2,)),
    ("float_power_numbers", lambda lib, a: lib.float_power(2, 3), (f2,)),
    ("count_nonzero_dim_repeated", lambda lib, a: lib.count_nonzero(a, dim=(0, 0)), (f2,)),
    ("mode_empty_dim", lambda lib, a: lib.mode(a[:, :0], 1), (f2,)),
    ("amax_empty_dim", lambda lib, a: a[:0].amax(0), (f2,)),
    ("gcd_float", lambda lib, a: lib.gcd(a, a), (f2,)),
    ("lcm_bool", lambda lib, a: lib.lcm(a > 1, a > 1), (i2,)),
    ("xlogy_numbers", lambda lib, a: lib.xlogy(2.0, 3.0), (f2,)),
    ("logaddexp_number", lambda lib, a: lib.logaddexp(a, 1.0), (f2,)),
    ("logaddexp_int", lambda lib, a: lib.logaddexp(a, a), (i2,)),
    ("heaviside_dtype", lambda lib, a: lib.heaviside(a, a.float()), (f2,)),
    ("polygamma_negative_n", lambda lib, a: lib.polygamma(-1, a), (f2,)),
    ("fmax_not_tensor", lambda lib, a: lib.fmax(a, 1.0), (f2,)),
]


@pytest.mark.parametrize("name,program,arrays", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_match_torch(name, program, arrays):
    with pytest.raises(Exception) as theirs:
        program(torch, *map(torch.tensor, arrays))
    with pytest.raises(Exception) as mine:
        program(mg, *map(mg.tensor, arrays))
    assert isinstance(mine.value, theirs.type), f"minigrad raised {mine.type.__name__}, PyTorch {theirs.type.__name__}"


def test_non_differentiable_ops_match_torch():
    x = mg.tensor([-1.0, 0.0, 2.0], requires_grad=True)
    h = mg.heaviside(x, mg.tensor([0.5, 0.5, 0.5]))
    assert h.requires_grad  # recorded, as PyTorch records it
    with pytest.raises(RuntimeError, match="heaviside"):
        h.sum().backward()
    assert not mg.signbit(x).requires_grad and not mg.count_nonzero(x).requires_grad
    # rounded division is recorded with a zero gradient
    y = mg.div(x, 2.0, rounding_mode="floor")
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0, 0.0])


def test_warnings_match_torch():
    a, ta = mg.tensor(r(3)), torch.tensor(r(3))
    with pytest.warns(UserWarning, match="degrees of freedom"):
        a.var(correction=3)
    with pytest.warns(UserWarning, match="degrees of freedom"):
        ta.var(correction=3)
    b, tb = mg.tensor(r(2, 3)), torch.tensor(r(2, 3))
    with pytest.warns(UserWarning, match="dim"):
        mine = mg.cross(b, b * 2)
    with pytest.warns(UserWarning, match="dim"):
        theirs = torch.cross(tb, tb * 2)
    np.testing.assert_allclose(mine.numpy(), theirs.numpy(), atol=1e-12)


def test_double_backward_through_std_and_logsumexp():
    a = r(3, 4)

    def program(lib, x):
        with lib.enable_grad():
            y = (x.std(1) * x.logsumexp(1) * x.norm(dim=0).sum()).sum()
            (g,) = lib.autograd.grad(y, x, create_graph=True)
        return g

    run_both(program, a)


@pytest.mark.parametrize("p", [2, 3, 0.5, math.inf, 1])
@pytest.mark.parametrize("dim", [None, -1])
def test_a_norm_over_one_element_is_its_magnitude_even_where_its_square_underflows(p, dim):
    # As PyTorch: squaring 8e-186 gives 0 in float64, so the plain formula returned a norm of 0.
    for values in ([8.1851109e-186], [[-8.1851109e-186]], [-3.0]):
        mine = mg.tensor(values, dtype=mg.float64).norm(p, dim=dim)
        theirs = torch.tensor(values, dtype=torch.float64).norm(p, dim=dim)
        np.testing.assert_array_equal(mine.numpy(), theirs.numpy())
        assert mine.numpy().max() == abs(np.ravel(values)[0])
    param = mg.tensor([1.0], dtype=mg.float64, requires_grad=True)
    param.grad = mg.tensor([8.1851109e-186], dtype=mg.float64)
    assert mg.nn.utils.clip_grad_norm_([param], 2.0).item() == 8.1851109e-186
