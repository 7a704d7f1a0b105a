# ruff: noqa: N803  (the cases take the library module as ``L``: torch or minigrad)
"""Statistics, products, integration and determinants against PyTorch: ``aminmax``, ``nanmedian``,
``nanquantile``, ``cov``, ``corrcoef``, ``histc``, ``inner``, ``vdot``, ``trapezoid``,
``cumulative_trapezoid``, ``det``, ``logdet``, ``slogdet``, ``matrix_power``.

Values, dtypes and shapes on drawn inputs, gradients in float64 (and
gradcheck for the determinant ops, which are ops of their own), and the
exception classes of bad calls. The names are reached through ``fn(L, name)``
until they are wired into ``minigrad``'s namespace.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minigrad as mg
from minigrad import math_forms
from minigrad.ops import determinants, integration, products, statistics
from tests.error_classes import assert_same_class_as_torch

_MODULES = (statistics, products, integration, determinants, math_forms)


def fn(L, name):
    """``L.<name>``: torch's function, or minigrad's from the module that defines it."""
    if L is torch:
        return getattr(torch, name)
    for module in _MODULES:
        if name in getattr(module, "__all__", ()) or (module is math_forms and name == "nanquantile"):
            return getattr(module, name)
    return getattr(mg, name)


def _np(t):
    return np.asarray(t.detach().numpy())


def _same(a, b, rtol=1e-12, atol=1e-12):
    """Equal values (NaN where NaN), shapes and dtypes."""
    assert str(a.dtype).replace("torch.", "") == str(b.dtype), (a.dtype, b.dtype)
    assert tuple(a.shape) == tuple(b.shape), (a.shape, b.shape)
    np.testing.assert_allclose(_np(a).astype(np.float64), _np(b).astype(np.float64), rtol=rtol, atol=atol)


def _is_float(t) -> bool:
    return t.dtype.is_floating_point if isinstance(t, torch.Tensor) else t.dtype.kind == "f"


def _run_both(program, *arrays, dtype="float64", grad=True):
    """``program(L, *tensors)`` in torch and minigrad; returns (outputs, input gradients) of each.

    The gradients are those of a weighted sum of the float outputs (NaN outputs left out).
    """
    results = []
    for L in (torch, mg):
        xs = [L.tensor(a, dtype=getattr(L, dtype), requires_grad=grad) for a in arrays]
        out = program(L, *xs)
        outs = out if isinstance(out, tuple) else (out,)
        grads = None
        if grad:
            floats = [o for o in outs if _is_float(o) and o.requires_grad]
            weights = [L.tensor(np.arange(1.0, o.numel() + 1).reshape(tuple(o.shape)), dtype=o.dtype) for o in floats]
            loss = sum(((o * w).nan_to_num().sum() for o, w in zip(floats, weights)), L.zeros((), dtype=L.float64))
            grads = L.autograd.grad(loss, xs, allow_unused=True) if floats else [None] * len(xs)
        results.append((outs, grads))
    return results


def _compare(program, *arrays, rtol=1e-12, atol=1e-12, grad=True, dtype="float64"):
    (touts, tgrads), (mouts, mgrads) = _run_both(program, *arrays, dtype=dtype, grad=grad)
    assert len(touts) == len(mouts)
    for a, b in zip(touts, mouts):
        _same(a, b, rtol, atol)
    if grad:
        for a, b in zip(tgrads, mgrads):
            if a is None:
                assert b is None or not _np(b).any()
            else:
                np.testing.assert_allclose(_np(b), _np(a), rtol=rtol, atol=atol)


@st.composite
def arrays_with_nan(draw, min_dims=1, max_dims=3, ties=True):
    shape = draw(hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=1, max_side=5))
    if ties and draw(st.booleans()):
        data = draw(hnp.arrays(np.float64, shape, elements=st.sampled_from([-2.0, -0.5, 0.0, 1.0, 3.0])))
    else:
        data = np.array(draw(st.permutations(range(int(np.prod(shape)))))).reshape(shape) * 0.5 - 3.0
    for _ in range(draw(st.integers(0, 3))):
        data.flat[draw(st.integers(0, data.size - 1))] = np.nan
    if draw(st.booleans()) and data.ndim > 1:
        data[0] = np.nan  # a slice of NaN only
    return data


# -- aminmax ---------------------------------------------------------------------------------------------


@settings(max_examples=40, deadline=None, derandomize=True)
@given(arrays_with_nan(min_dims=0), st.data())
def test_aminmax_matches_pytorch(data, draw):
    dim = draw.draw(st.one_of(st.none(), st.integers(-max(data.ndim, 1), max(data.ndim, 1) - 1)))
    keepdim = draw.draw(st.booleans())
    _compare(lambda L, x: tuple(fn(L, "aminmax")(x, dim=dim, keepdim=keepdim)), data)


def test_aminmax_names_and_dtypes():
    for L in (torch, mg):
        result = fn(L, "aminmax")(L.tensor([[3, 1], [2, 5]]), dim=1)
        assert result.min.tolist() == [1, 2] and result.max.tolist() == [3, 5]
        assert str(result.max.dtype).endswith("int64")
        assert fn(L, "aminmax")(L.tensor([True, False])).max.item() is True
        assert tuple(fn(L, "aminmax")(L.ones(0, 3), dim=1).min.shape) == (0,)


# -- nanmedian and nanquantile -------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None, derandomize=True)
@given(arrays_with_nan(min_dims=0), st.data())
def test_nanmedian_matches_pytorch(data, draw):
    dim = draw.draw(st.one_of(st.none(), st.integers(-max(data.ndim, 1), max(data.ndim, 1) - 1)))
    keepdim = draw.draw(st.booleans()) and dim is not None

    def program(L, x):
        if dim is None:
            return fn(L, "nanmedian")(x)
        values, indices = fn(L, "nanmedian")(x, dim, keepdim)
        return values, indices

    (touts, tgrads), (mouts, mgrads) = _run_both(program, data)
    for a, b in zip(touts, mouts):
        _same(a, b)  # the indices too: PyTorch's choice among ties and in slices of NaN
    np.testing.assert_allclose(_np(mgrads[0]), _np(tgrads[0]), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 9, 16, 33, 100])
def test_nanmedian_index_of_an_all_nan_slice_is_pytorchs(n):
    assert (statistics.nanmedian(mg.full((2, n), np.nan), 1).indices.tolist()
            == torch.nanmedian(torch.full((2, n), np.nan), 1).indices.tolist())


@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "uint8", "float32"])
def test_nanmedian_of_integers_and_of_nothing(dtype):
    for values in ([3, 1, 2, 4], [5], []):
        a = torch.nanmedian(torch.tensor(values, dtype=getattr(torch, dtype)))
        b = statistics.nanmedian(mg.tensor(values, dtype=getattr(mg, dtype)))
        _same(a, b)


MODES = ["linear", "lower", "higher", "midpoint", "nearest"]


@settings(max_examples=60, deadline=None, derandomize=True)
@given(arrays_with_nan(), st.data())
def test_nanquantile_matches_pytorch(data, draw):
    dim = draw.draw(st.one_of(st.none(), st.integers(-data.ndim, data.ndim - 1)))
    keepdim = draw.draw(st.booleans())
    mode = draw.draw(st.sampled_from(MODES))
    qs = draw.draw(st.lists(st.sampled_from([0.0, 0.1, 0.25, 0.5, 0.625, 0.9, 1.0]), min_size=1, max_size=3))
    scalar = draw.draw(st.booleans())

    def program(L, x):
        q = qs[0] if scalar else L.tensor(qs, dtype=L.float64)
        return fn(L, "nanquantile")(x, q, dim=dim, keepdim=keepdim, interpolation=mode)

    finite = data[~np.isnan(data)]
    (touts, tgrads), (mouts, mgrads) = _run_both(program, data)
    _same(touts[0], mouts[0])
    if np.unique(finite).size == finite.size:  # with ties PyTorch's unstable sort picks among equal elements
        np.testing.assert_allclose(_np(mgrads[0]), _np(tgrads[0]), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ["quantile", "nanquantile"])
def test_quantiles_of_a_0d_tensor(name):
    for kwargs in ({}, {"dim": 0}, {"dim": -1, "keepdim": True}, {"keepdim": True}):
        _compare(lambda L, x, kwargs=kwargs: getattr(L if L is torch else math_forms, name)(
            x, L.tensor([0.5, 0.2], dtype=L.float64), **kwargs), np.array(3.0))


def test_nanquantile_in_float32_and_out():
    x = np.array([[1.0, np.nan, 3.0, 0.5], [2.0, 2.5, np.nan, 1.0]], dtype=np.float32)
    a = torch.nanquantile(torch.tensor(x), 0.3, dim=1)
    b = math_forms.nanquantile(mg.tensor(x), 0.3, dim=1)
    _same(a, b, rtol=0, atol=0)
    out = mg.empty(2)
    assert math_forms.nanquantile(mg.tensor(x), 0.3, dim=1, out=out) is out
    _same(a, out, rtol=0, atol=0)


# -- cov and corrcoef ---------------------------------------------------------------------------------------


@settings(max_examples=50, deadline=None, derandomize=True)
@given(hnp.array_shapes(min_dims=1, max_dims=2, min_side=1, max_side=5), st.data())
def test_cov_and_corrcoef_match_pytorch(shape, draw):  # 0-d inputs: test_cov_dtypes (PyTorch's cov of a 0-d
    # tensor that requires grad fails)
    data = draw.draw(hnp.arrays(np.float64, shape, elements=st.floats(-3, 3, width=16)))
    n = 1 if len(shape) == 0 else shape[-1]
    correction = draw.draw(st.integers(-1, 2))
    fweights = draw.draw(st.one_of(st.none(), hnp.arrays(np.int64, (n,), elements=st.integers(0, 3))))
    aweights = draw.draw(st.one_of(st.none(), hnp.arrays(np.float64, (n,), elements=st.floats(0, 2, width=16))))
    weighted = (fweights if fweights is not None else 1) * (aweights if aweights is not None else 1)
    if np.sum(weighted) == 0:
        return  # both raise; the error table has this case

    def program(L, x, aw):
        f = None if fweights is None else L.tensor(fweights)
        return fn(L, "cov")(x, correction=correction, fweights=f, aweights=None if aweights is None else aw)

    # no degrees of freedom: PyTorch zeroes its divisor in place, which fails for inputs that require grad
    w_sum = np.sum(weighted) if fweights is not None or aweights is not None else n
    dof = w_sum - correction * (np.sum(weighted * aweights) / w_sum if aweights is not None else 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        aw_data = aweights if aweights is not None else np.ones(n)
        try:
            _compare(program, data, aw_data, rtol=1e-10, atol=1e-10, grad=bool(dof > 0))
        except RuntimeError as error:  # PyTorch writes in place into a view of a 1-D input that requires grad
            if "leaf Variable" not in str(error):
                raise
            _compare(program, data, aw_data, rtol=1e-10, atol=1e-10, grad=False)
        _compare(lambda L, x: fn(L, "corrcoef")(x), data, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("dtype", ["int64", "int32", "float32", "float16"])
@pytest.mark.filterwarnings("ignore:cov\\(\\). degrees of freedom")
def test_cov_dtypes(dtype):
    for data in ([[1, 2, 4], [3, 1, 0]], [[1, 2, 5]], [3, 1, 2], 3):
        a = torch.cov(torch.tensor(data, dtype=getattr(torch, dtype)))
        b = statistics.cov(mg.tensor(data, dtype=getattr(mg, dtype)))
        _same(a, b, rtol=1e-3 if dtype == "float16" else 1e-6)
        _same(torch.corrcoef(torch.tensor(data, dtype=getattr(torch, dtype))),
              statistics.corrcoef(mg.tensor(data, dtype=getattr(mg, dtype))), rtol=1e-3, atol=1e-3)


def test_cov_with_no_degrees_of_freedom_warns_and_divides_by_zero():
    with pytest.warns(UserWarning, match="degrees of freedom"):
        b = statistics.cov(mg.tensor([[1.0, 2.0, 4.0], [3.0, 1.0, 0.0]]), correction=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _same(torch.cov(torch.tensor([[1.0, 2.0, 4.0], [3.0, 1.0, 0.0]]), correction=3), b)
        for shape in ((0,), (2, 0), (0, 3), (2, 1), (1, 1)):
            _same(torch.cov(torch.ones(shape)), statistics.cov(mg.ones(*shape)))


# -- histc --------------------------------------------------------------------------------------------------


@settings(max_examples=80, deadline=None, derandomize=True)
@given(st.data())
def test_histc_matches_pytorch(draw):
    dtype = draw.draw(st.sampled_from(["float32", "float64"]))
    shape = draw.draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=6))
    step = draw.draw(st.sampled_from([0.1, 0.25, 1 / 3, 0.7, 1.0]))
    data = draw.draw(hnp.arrays(np.int64, shape, elements=st.integers(-12, 12))) * step
    if draw.draw(st.booleans()):
        data = np.where(data > 1, np.nan, data) if data.size else data
    bins = draw.draw(st.integers(1, 12))
    lo = draw.draw(st.sampled_from([0.0, -1.0, 0.3, -2.5]))
    hi = lo + draw.draw(st.sampled_from([0.0, 0.5, 1.0, 2.2, 3.0]))
    if np.isnan(data).any() and lo == hi and data.size:
        return  # the range comes from the data and is NaN: an error (the table has it)
    a = torch.histc(torch.tensor(data, dtype=getattr(torch, dtype)), bins=bins, min=lo, max=hi)
    b = statistics.histc(mg.tensor(data, dtype=getattr(mg, dtype)), bins=bins, min=lo, max=hi)
    _same(a, b, rtol=0, atol=0)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_histc_elements_on_bin_edges_land_as_in_pytorch(dtype):
    """Each bin from ``(x - min) * bins / (max - min)``: other roundings move elements on the edges."""
    for bins, lo, hi in ((37, 0.6, 1.8), (10, 0.0, 1.0), (7, -0.4, 2.2), (23, -5 / 3, 1.25), (49, 0.125, 0.9)):
        edges = (lo + np.arange(bins + 1) * ((hi - lo) / bins)).astype(dtype)
        a = torch.histc(torch.tensor(edges), bins, lo, hi)
        _same(a, statistics.histc(mg.tensor(edges), bins, lo, hi), rtol=0, atol=0)


def test_histc_is_not_differentiable_and_writes_out():
    x = mg.tensor([1.0, 2.0, 2.5], requires_grad=True)
    result = statistics.histc(x, 4)
    assert not result.requires_grad
    assert result.tolist() == torch.histc(torch.tensor([1.0, 2.0, 2.5]), 4).tolist()
    out = mg.empty(3)
    assert statistics.histc(x.detach(), 3, 0, 3, out=out) is out
    assert out.tolist() == [0.0, 1.0, 2.0]


# -- inner and vdot -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("a", "b"), [((2, 3), (4, 3)), ((3,), (3,)), ((), (4, 3)), ((2, 3, 4), (5, 4)),
                                      ((2, 0), (3, 0)), ((4,), ()), ((1, 2, 3), (3,))])
def test_inner_matches_pytorch(a, b):
    rng = np.random.default_rng(len(a) * 10 + len(b))
    _compare(lambda L, x, y: fn(L, "inner")(x, y), rng.normal(size=a), rng.normal(size=b))


@pytest.mark.parametrize("n", [0, 1, 5])
def test_vdot_matches_pytorch(n):
    rng = np.random.default_rng(n)
    _compare(lambda L, x, y: fn(L, "vdot")(x, y), rng.normal(size=n), rng.normal(size=n))
    for dtype in ("int8", "int64", "float32"):
        left, right = np.arange(n) * 50, np.arange(n) + 3
        expected = torch.vdot(*(torch.tensor(v, dtype=getattr(torch, dtype)) for v in (left, right)))
        _same(expected, products.vdot(*(mg.tensor(v, dtype=getattr(mg, dtype)) for v in (left, right))))


# -- trapezoid and cumulative_trapezoid ----------------------------------------------------------------------


@settings(max_examples=60, deadline=None, derandomize=True)
@given(hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=4), st.data())
def test_trapezoid_family_matches_pytorch(shape, draw):
    y = draw.draw(hnp.arrays(np.float64, shape, elements=st.floats(-4, 4, width=16)))
    dim = draw.draw(st.integers(-len(shape), len(shape) - 1))
    kind = draw.draw(st.sampled_from(["none", "dx", "x1", "xfull", "xtail"]))
    dx = draw.draw(st.sampled_from([0.5, 2, -1.25]))
    axis = dim % len(shape)
    if kind == "x1":
        x = np.cumsum(np.arange(1.0, shape[axis] + 1))
    elif kind == "xfull":
        x = draw.draw(hnp.arrays(np.float64, shape, elements=st.floats(-4, 4, width=16)))
    else:
        x = draw.draw(hnp.arrays(np.float64, shape[1:] or (1,), elements=st.floats(-4, 4, width=16)))
    for name in ("trapezoid", "cumulative_trapezoid"):
        def program(L, values, points, name=name):
            if kind == "none":
                return fn(L, name)(values, dim=dim)
            if kind == "dx":
                return fn(L, name)(values, dx=dx, dim=dim)
            return fn(L, name)(values, points, dim=dim)

        try:
            expected = program(torch, torch.tensor(y), torch.tensor(x))
        except RuntimeError:
            with pytest.raises(RuntimeError):
                program(mg, mg.tensor(y), mg.tensor(x))
            continue
        assert expected is not None
        _compare(program, y, x, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dtype", ["int64", "int32", "float32", "bool"])
def test_trapezoid_dtypes(dtype):
    for name in ("trapezoid", "cumulative_trapezoid"):
        for kwargs in ({}, {"dx": 3}, {"dx": 2.5}):
            for values in ([1, 2, 4], [], [[1, 0], [0, 1]]):
                def call(L, kwargs=kwargs, values=values, name=name):
                    return fn(L, name)(L.tensor(values, dtype=getattr(L, dtype)), **kwargs)

                try:
                    expected = call(torch)
                except RuntimeError:
                    with pytest.raises(RuntimeError):
                        call(mg)
                    continue
                _same(expected, call(mg), rtol=1e-6)


# -- det, logdet, slogdet, matrix_power ---------------------------------------------------------------------


@st.composite
def square_batches(draw):
    n = draw(st.integers(0, 4))
    batch = draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=1, max_side=3))
    seed = draw(st.integers(0, 2**16))
    data = np.random.default_rng(seed).normal(size=batch + (n, n))
    if draw(st.booleans()) and n > 1:  # a singular matrix in the batch
        data.reshape((-1, n, n))[0, -1] = data.reshape((-1, n, n))[0, 0]
    return data


@settings(max_examples=50, deadline=None, derandomize=True)
@given(square_batches(), st.integers(-4, 6))
def test_determinants_and_powers_match_pytorch(data, power):
    n = data.shape[-1]
    singular = n > 1 and np.any(np.abs(np.linalg.det(data)) < 1e-9)
    # A numerically singular matrix: NumPy's LU may leave a tiny pivot where PyTorch's leaves an exact 0,
    # and det's gradient is then the adjugate here but 0 there (an exactly singular one: the test below).
    _compare(lambda L, a: fn(L, "det")(a), data, rtol=1e-9, atol=1e-9, grad=not singular)
    if not singular:
        _compare(lambda L, a: fn(L, "logdet")(a), data, rtol=1e-9, atol=1e-9)
        _compare(lambda L, a: tuple(fn(L, "slogdet")(a)), data, rtol=1e-9, atol=1e-9)
    if not singular or power >= 0:
        _compare(lambda L, a: fn(L, "matrix_power")(a, power), data, rtol=1e-8, atol=1e-8)


def test_det_gradient_at_a_singular_matrix_is_zero_as_pytorch():
    for L in (torch, mg):
        a = L.tensor([[1.0, 2.0], [2.0, 4.0]], dtype=L.float64, requires_grad=True)
        fn(L, "det")(a).backward()
        assert not _np(a.grad).any()


def test_slogdet_result_and_logdet_of_negative_determinant():
    for L in (torch, mg):
        result = fn(L, "slogdet")(L.tensor([[0.0, 1.0], [1.0, 0.0]]))
        assert (result.sign.item(), result.logabsdet.item()) == (-1.0, 0.0)
        assert np.isnan(fn(L, "logdet")(L.tensor([[0.0, 1.0], [1.0, 0.0]])).item())
        assert fn(L, "logdet")(L.tensor([[1.0, 2.0], [2.0, 4.0]])).item() == -np.inf


def test_determinant_ops_pass_gradcheck():
    rng = np.random.default_rng(1)
    a = mg.tensor(rng.normal(size=(2, 3, 3)) + 3 * np.eye(3), dtype=mg.float64, requires_grad=True)
    for f in (determinants.det, determinants.logdet, lambda t: determinants.slogdet(t).logabsdet,
              lambda t: determinants.matrix_power(t, -3), lambda t: determinants.matrix_power(t, 5)):
        assert mg.autograd.gradcheck(f, (a,))
        assert mg.autograd.gradcheck(lambda t, f=f: mg.autograd.grad(f(t).sum(), t, create_graph=True)[0], (a,))


@pytest.mark.parametrize("dtype", ["int64", "uint8", "bool", "float16", "float32"])
def test_matrix_power_of_other_dtypes(dtype):
    for power in (0, 1, 2, 3, 5, -1):
        def call(L, power=power):
            return fn(L, "matrix_power")(L.tensor([[1, 2], [3, 4]], dtype=getattr(L, dtype)), power)

        try:
            expected = call(torch)
        except (RuntimeError, NotImplementedError) as error:
            with pytest.raises(NotImplementedError if isinstance(error, NotImplementedError) else RuntimeError):
                call(mg)
            continue
        _same(expected, call(mg), rtol=1e-3)


# -- errors -------------------------------------------------------------------------------------------------

ERRORS = [
    ("aminmax_empty", lambda L: fn(L, "aminmax")(L.ones(0))),
    ("aminmax_empty_dim", lambda L: fn(L, "aminmax")(L.ones(0, 3), dim=0)),
    ("aminmax_dim_range", lambda L: fn(L, "aminmax")(L.ones(2, 3), dim=2)),
    ("aminmax_dim_tuple", lambda L: fn(L, "aminmax")(L.ones(2, 3), dim=(0, 1))),
    ("aminmax_keepdim_int", lambda L: fn(L, "aminmax")(L.ones(2, 3), keepdim=1)),
    ("aminmax_not_tensor", lambda L: fn(L, "aminmax")([1, 2])),
    ("nanmedian_bool", lambda L: fn(L, "nanmedian")(L.tensor([True, False]))),
    ("nanmedian_empty_dim", lambda L: fn(L, "nanmedian")(L.ones(0, 3), 0)),
    ("nanmedian_dim_range", lambda L: fn(L, "nanmedian")(L.ones(2, 3), 2)),
    ("nanmedian_dim_float", lambda L: fn(L, "nanmedian")(L.ones(2, 3), 1.5)),
    ("nanquantile_int", lambda L: fn(L, "nanquantile")(L.tensor([1, 2]), 0.5)),
    ("nanquantile_q_range", lambda L: fn(L, "nanquantile")(L.ones(3), 1.5)),
    ("nanquantile_empty", lambda L: fn(L, "nanquantile")(L.ones(0), 0.5)),
    ("nanquantile_mode", lambda L: fn(L, "nanquantile")(L.ones(3), 0.5, interpolation="cubic")),
    ("nanquantile_q_str", lambda L: fn(L, "nanquantile")(L.ones(3), "half")),
    ("cov_3d", lambda L: fn(L, "cov")(L.ones(2, 3, 4))),
    ("cov_bool", lambda L: fn(L, "cov")(L.tensor([[True, False]]))),
    ("cov_correction_float", lambda L: fn(L, "cov")(L.ones(2, 3), correction=1.5)),
    ("cov_correction_bool", lambda L: fn(L, "cov")(L.ones(2, 3), correction=True)),
    ("cov_fweights_float", lambda L: fn(L, "cov")(L.ones(2, 3), fweights=L.ones(3))),
    ("cov_fweights_negative", lambda L: fn(L, "cov")(L.ones(2, 3), fweights=L.tensor([1, -2, 1]))),
    ("cov_fweights_length", lambda L: fn(L, "cov")(L.ones(2, 3), fweights=L.tensor([1, 2]))),
    ("cov_fweights_2d", lambda L: fn(L, "cov")(L.ones(2, 3), fweights=L.tensor([[1, 2, 1]]))),
    ("cov_fweights_list", lambda L: fn(L, "cov")(L.ones(2, 3), fweights=[1, 2, 1])),
    ("cov_aweights_int", lambda L: fn(L, "cov")(L.ones(2, 3), aweights=L.tensor([1, 2, 1]))),
    ("cov_aweights_negative", lambda L: fn(L, "cov")(L.ones(2, 3), aweights=L.tensor([1.0, -2.0, 1.0]))),
    ("cov_weights_sum_zero", lambda L: fn(L, "cov")(L.ones(2, 3), aweights=L.zeros(3))),
    ("corrcoef_3d", lambda L: fn(L, "corrcoef")(L.ones(2, 3, 4))),
    ("histc_int", lambda L: fn(L, "histc")(L.tensor([1, 2, 5]), bins=3)),
    ("histc_bool", lambda L: fn(L, "histc")(L.tensor([True, False]), bins=3)),
    ("histc_bins_zero", lambda L: fn(L, "histc")(L.ones(3), bins=0)),
    ("histc_bins_float", lambda L: fn(L, "histc")(L.ones(3), bins=2.5)),
    ("histc_min_above_max", lambda L: fn(L, "histc")(L.ones(3), bins=3, min=3, max=0)),
    ("histc_infinite_range", lambda L: fn(L, "histc")(L.ones(3), bins=3, min=0, max=float("inf"))),
    ("histc_nan_data", lambda L: fn(L, "histc")(L.tensor([1.0, float("nan")]), bins=3)),
    ("histc_min_none", lambda L: fn(L, "histc")(L.ones(3), bins=3, min=None, max=2)),
    ("histc_min_complex", lambda L: fn(L, "histc")(L.ones(3), bins=3, min=1j, max=2)),
    ("histc_max_overflows", lambda L: fn(L, "histc")(L.ones(3), bins=3, min=0, max=1e39)),
    ("histc_out_dtype", lambda L: fn(L, "histc")(L.ones(3), bins=3, out=L.empty(3, dtype=L.float64))),
    ("inner_last_dims", lambda L: fn(L, "inner")(L.ones(2, 3), L.ones(3, 2))),
    ("inner_dtypes", lambda L: fn(L, "inner")(L.ones(3), L.ones(3, dtype=L.float64))),
    ("inner_bool", lambda L: fn(L, "inner")(L.tensor([True]), L.tensor([True]))),
    ("inner_number", lambda L: fn(L, "inner")(L.ones(3), 2.0)),
    ("vdot_2d", lambda L: fn(L, "vdot")(L.ones(2, 3), L.ones(2, 3))),
    ("vdot_sizes", lambda L: fn(L, "vdot")(L.ones(3), L.ones(4))),
    ("vdot_dtypes", lambda L: fn(L, "vdot")(L.ones(3, dtype=L.int64), L.ones(3))),
    ("vdot_bool", lambda L: fn(L, "vdot")(L.tensor([True]), L.tensor([True]))),
    ("trapezoid_0d", lambda L: fn(L, "trapezoid")(L.tensor(3.0))),
    ("trapezoid_dim_range", lambda L: fn(L, "trapezoid")(L.ones(2, 3), dim=2)),
    ("trapezoid_x_length", lambda L: fn(L, "trapezoid")(L.ones(2, 3), L.ones(3), dim=0)),
    ("trapezoid_x_and_dx", lambda L: fn(L, "trapezoid")(L.ones(3), L.ones(3), dx=2)),
    ("trapezoid_bool", lambda L: fn(L, "trapezoid")(L.tensor([True, False]))),
    ("trapezoid_bool_x", lambda L: fn(L, "trapezoid")(L.ones(2), L.tensor([True, False]))),
    ("trapezoid_dx_bool", lambda L: fn(L, "trapezoid")(L.ones(3), dx=True)),
    ("trapezoid_dx_complex", lambda L: fn(L, "trapezoid")(L.ones(3), dx=1j)),
    ("trapezoid_dx_str", lambda L: fn(L, "trapezoid")(L.ones(3), dx="a")),
    ("trapezoid_x_list", lambda L: fn(L, "trapezoid")(L.ones(3), x=[1.0, 2.0, 3.0])),
    ("trapezoid_x_shape", lambda L: fn(L, "trapezoid")(L.ones(2, 3), L.ones(3, 2))),
    ("cumulative_trapezoid_0d", lambda L: fn(L, "cumulative_trapezoid")(L.tensor(3.0))),
    ("cumulative_trapezoid_bool", lambda L: fn(L, "cumulative_trapezoid")(L.tensor([True, False]))),
    ("cumulative_trapezoid_x_length", lambda L: fn(L, "cumulative_trapezoid")(L.ones(3), L.ones(2))),
    ("cumulative_trapezoid_dim_float", lambda L: fn(L, "cumulative_trapezoid")(L.ones(3), dim=0.5)),
    ("det_1d", lambda L: fn(L, "det")(L.ones(3))),
    ("det_not_square", lambda L: fn(L, "det")(L.ones(2, 3))),
    ("det_int", lambda L: fn(L, "det")(L.ones(2, 2, dtype=L.int64))),
    ("det_half", lambda L: fn(L, "det")(L.ones(2, 2, dtype=L.float16))),
    ("logdet_half", lambda L: fn(L, "logdet")(L.ones(2, 2, dtype=L.float16))),
    ("logdet_bool", lambda L: fn(L, "logdet")(L.ones(2, 2, dtype=L.bool))),
    ("slogdet_0d", lambda L: fn(L, "slogdet")(L.tensor(3.0))),
    ("slogdet_not_square", lambda L: fn(L, "slogdet")(L.ones(3, 2))),
    ("matrix_power_1d", lambda L: fn(L, "matrix_power")(L.ones(3), 2)),
    ("matrix_power_not_square", lambda L: fn(L, "matrix_power")(L.ones(2, 3), 0)),
    ("matrix_power_float_n", lambda L: fn(L, "matrix_power")(L.ones(2, 2), 2.0)),
    ("matrix_power_bool_n", lambda L: fn(L, "matrix_power")(L.ones(2, 2), True)),
    ("matrix_power_singular_inverse", lambda L: fn(L, "matrix_power")(L.tensor([[1.0, 2.0], [2.0, 4.0]]), -1)),
    ("matrix_power_int_inverse", lambda L: fn(L, "matrix_power")(L.tensor([[1, 2], [3, 4]]), -2)),
    ("matrix_power_bool_square", lambda L: fn(L, "matrix_power")(L.tensor([[True, False], [True, True]]), 2)),
    ("matrix_power_huge_n", lambda L: fn(L, "matrix_power")(L.ones(2, 2), 10**20)),
]


@pytest.mark.parametrize(("name", "call"), ERRORS, ids=[n for n, _ in ERRORS])
def test_bad_calls_raise_pytorchs_class(name, call):
    assert_same_class_as_torch(name, call)
