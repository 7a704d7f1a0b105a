# ruff: noqa: N803, N806  (the cases take the library module as ``L`` and PyTorch's matrix names ``A``)
"""``minigrad.linalg.norms`` against ``torch.linalg``: ``vector_norm``, ``matrix_norm``, ``norm``, ``cross``,
``vecdot``, ``multi_dot``, ``det``, ``slogdet``, ``matrix_power``.

Values, shapes and dtypes on drawn and hand-picked inputs, first and second
derivatives in float64 against PyTorch's (and ``gradcheck``), gradients at
zero, and the exception classes of bad calls. The names are reached through
``lin(L)`` (``torch.linalg`` or the module under test) until ``mg.linalg`` is wired.
"""

from __future__ import annotations

import math
import types

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minigrad as mg
from minigrad.linalg import LinAlgError, norms
from tests.error_classes import assert_same_class_as_torch

INF = math.inf
MATRIX_ORDS = ["fro", "nuc", 2, -2, 1, -1, INF, -INF]
VECTOR_ORDS = [2, 1, 0, 3, 0.5, -1, -2.5, INF, -INF]

_OURS = types.SimpleNamespace(**{name: getattr(norms, name) for name in norms.__all__}, LinAlgError=LinAlgError)


def lin(L):
    """``torch.linalg``, or the functions under test under the same names."""
    return torch.linalg if L is torch else _OURS


def _pair(array, requires_grad=False):
    return (
        mg.tensor(array, requires_grad=requires_grad),
        torch.tensor(array, requires_grad=requires_grad),
    )


def _same(ours, theirs, rtol=1e-5, atol=1e-6):
    assert isinstance(ours, mg.Tensor)
    assert ours.shape == tuple(theirs.shape)
    assert str(ours.dtype) == str(theirs.dtype).replace("torch.", "")
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=rtol, atol=atol)


def _grads_match(make, arrays, rtol=1e-6, atol=1e-8, second=True):
    """First (and, when ``second``, second) derivatives of ``make(L, *tensors)`` (a scalar) match PyTorch's."""
    results = {}
    for L in (torch, mg):
        tensors = [L.tensor(a, dtype=L.float64, requires_grad=True) for a in arrays]
        out = make(L, *tensors)
        grads = L.autograd.grad(out, tensors, create_graph=second)
        results[L] = [g.detach().numpy() for g in grads]
        if second:
            weights = [L.tensor(np.cos(np.arange(a.size)).reshape(a.shape)) for a in arrays]
            total = sum((g * w).sum() for g, w in zip(grads, weights))
            results[(L, 2)] = [g.detach().numpy() for g in L.autograd.grad(total, tensors, allow_unused=True)]
    for ours, theirs in zip(results[mg], results[torch]):
        np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=atol)
    if second:
        for ours, theirs in zip(results[(mg, 2)], results[(torch, 2)]):
            np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-7)


# -- vector_norm ----------------------------------------------------------------------------------------

_float_arrays = hnp.arrays(
    st.sampled_from([np.float32, np.float64]),
    hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=4),
    elements=st.floats(-5, 5, width=32),
)


@settings(max_examples=40, deadline=None)
@given(array=_float_arrays, order=st.sampled_from(VECTOR_ORDS), keepdim=st.booleans(), data=st.data())
def test_vector_norm_matches_torch(array, order, keepdim, data):
    if array.ndim:
        axes = st.integers(-array.ndim, array.ndim - 1)
        dims = data.draw(st.lists(axes, max_size=array.ndim, unique_by=lambda d: d % array.ndim))
        dim = data.draw(st.sampled_from([None, tuple(dims)] + ([dims[0]] if dims else [])))
    else:
        dim = data.draw(st.sampled_from([None, 0, -1]))
    ours, theirs = _pair(array)
    expected = torch.linalg.vector_norm(theirs, order, dim, keepdim)
    _same(norms.vector_norm(ours, order, dim, keepdim), expected, rtol=1e-4)


def test_vector_norm_dtype_and_edges():
    x, t = _pair(np.arange(6, dtype=np.float32).reshape(2, 3) - 2)
    _same(norms.vector_norm(x, dtype=mg.float64), torch.linalg.vector_norm(t, dtype=torch.float64))
    _same(norms.vector_norm(x, 3, dim=[0, 1], keepdim=True), torch.linalg.vector_norm(t, 3, dim=[0, 1], keepdim=True))
    _same(norms.vector_norm(x, torch.tensor(1.0).item()), torch.linalg.vector_norm(t, 1))
    _same(norms.vector_norm(x, mg.tensor(3.0)), torch.linalg.vector_norm(t, torch.tensor(3.0)))
    _same(norms.vector_norm(x, True), torch.linalg.vector_norm(t, True))
    _same(norms.vector_norm(x.half()), torch.linalg.vector_norm(t.half()), rtol=1e-3)
    assert math.isnan(norms.vector_norm(x, math.nan).item())
    for shape, order, dim in [((0,), 2, None), ((2, 0), INF, 0), ((2, 0), -1, 0), ((0, 3), 1, 0), ((2, 0), 0, 1)]:
        e, te = _pair(np.zeros(shape))
        _same(norms.vector_norm(e, order, dim), torch.linalg.vector_norm(te, order, dim))
    z, tz = _pair(np.array([0.0, 1.0]))
    _same(norms.vector_norm(z, -0.5), torch.linalg.vector_norm(tz, -0.5))


def test_vector_norm_out():
    x, t = _pair(np.array([3.0, 4.0]))
    out = mg.zeros(())
    assert norms.vector_norm(x, out=out) is out
    assert out.item() == torch.linalg.vector_norm(t).item() == 5.0


@pytest.mark.parametrize("order", [2, 1, 3, 0.5, -1.5, INF, -INF])
def test_vector_norm_gradients(order):
    rng = np.random.default_rng(0)
    a = rng.normal(size=(3, 4))
    _grads_match(lambda L, x: lin(L).vector_norm(x, order, dim=1).pow(2).sum(), [a], second=abs(order) != INF)
    assert mg.autograd.gradcheck(lambda x: norms.vector_norm(x, order, (0, 1)), (mg.tensor(a, requires_grad=True),))


@pytest.mark.parametrize("order", [2, 1, 3, 0.5, INF, -1, -INF])
def test_vector_norm_gradient_at_zero_is_zero_as_torch(order):
    for L in (torch, mg):
        x = L.zeros(3, dtype=L.float64, requires_grad=True)
        (g,) = L.autograd.grad(lin(L).vector_norm(x, order), x)
        np.testing.assert_array_equal(g.numpy(), np.zeros(3))


# -- matrix_norm ----------------------------------------------------------------------------------------


@settings(max_examples=30, deadline=None)
@given(
    shape=hnp.array_shapes(min_dims=2, max_dims=4, min_side=1, max_side=4),
    order=st.sampled_from(MATRIX_ORDS),
    keepdim=st.booleans(),
    dtype=st.sampled_from([np.float32, np.float64]),
    data=st.data(),
)
def test_matrix_norm_matches_torch(shape, order, keepdim, dtype, data):
    ndim = len(shape)
    first = data.draw(st.integers(-ndim, ndim - 1))
    second = data.draw(st.integers(-ndim, ndim - 1).filter(lambda d: d % ndim != first % ndim))
    array = np.random.default_rng(len(shape)).normal(size=shape).astype(dtype)
    ours, theirs = _pair(array)
    _same(
        norms.matrix_norm(ours, order, (first, second), keepdim),
        torch.linalg.matrix_norm(theirs, order, (first, second), keepdim),
        rtol=1e-4,
        atol=1e-5,
    )


@pytest.mark.parametrize("order", MATRIX_ORDS)
def test_matrix_norm_empty_and_dtype(order):
    for shape in [(0, 3), (3, 0), (2, 0, 0), (0, 3, 3)]:
        for L in (torch, mg):
            try:
                result = lin(L).matrix_norm(L.zeros(shape), order)
            except IndexError:
                result = IndexError
            if L is torch:
                expected = result
        if expected is IndexError:
            assert result is IndexError, (shape, order)
        else:
            _same(result, expected)
    x, t = _pair(np.arange(6, dtype=np.float32).reshape(2, 3))
    _same(norms.matrix_norm(x, order, dtype=mg.float64), torch.linalg.matrix_norm(t, order, dtype=torch.float64))


@pytest.mark.parametrize("order", MATRIX_ORDS)
def test_matrix_norm_gradients(order):
    a = np.random.default_rng(1).normal(size=(2, 3, 4))
    _grads_match(lambda L, A: (lin(L).matrix_norm(A, order) ** 2).sum(), [a])
    assert mg.autograd.gradcheck(lambda A: norms.matrix_norm(A, order, dim=(0, 2)), (mg.tensor(a, requires_grad=True),))


@pytest.mark.parametrize("order", MATRIX_ORDS)
def test_matrix_norm_gradient_at_zero_matrix_as_torch(order):
    grads = []
    for L in (torch, mg):
        A = L.zeros(2, 2, dtype=L.float64, requires_grad=True)
        grads.append(L.autograd.grad(lin(L).matrix_norm(A, order), A)[0].numpy())
    np.testing.assert_allclose(grads[1], grads[0])


def test_matrix_norm_ties_share_the_gradient():
    for order in (1, INF, 2):
        tied = np.array([[1.0, -1.0], [1.0, 1.0]])
        _grads_match(lambda L, A, order=order: lin(L).matrix_norm(A, order), [tied], second=False)


def test_matrix_norm_of_nonfinite_matrix_raises_linalg_error_for_svd_orders():
    bad = np.array([[np.nan, 1.0], [1.0, 2.0]])
    for order in ("nuc", 2, -2):
        with pytest.raises(LinAlgError):
            norms.matrix_norm(mg.tensor(bad), order)
    assert math.isnan(norms.matrix_norm(mg.tensor(bad), 1).item())


# -- norm -----------------------------------------------------------------------------------------------

NORM_CALLS = [
    (shape, order, dim, keepdim)
    for shape in [(), (3,), (2, 3), (2, 3, 4)]
    for order in [None, "fro", "nuc", 2, 1, -1, INF, 0, 3]
    for dim in [None, 0, (1,), (0, 1), (2, 0), (), (0, 1, 2)]
    for keepdim in [False, True]
]


def test_norm_dispatches_as_torch():
    rng = np.random.default_rng(2)
    checked = 0
    for shape, order, dim, keepdim in NORM_CALLS:
        array = rng.normal(size=shape)
        ours, theirs = _pair(array)
        try:
            expected = torch.linalg.norm(theirs, order, dim, keepdim)
        except Exception as error:  # noqa: BLE001
            with pytest.raises(type(error).__mro__[1] if type(error).__name__.startswith("_") else type(error)):
                norms.norm(ours, order, dim, keepdim)
            continue
        _same(norms.norm(ours, order, dim, keepdim), expected)
        checked += 1
    assert checked > 100


def test_norm_dtype_and_gradient():
    x, t = _pair(np.arange(6, dtype=np.float32).reshape(2, 3))
    _same(norms.norm(x, dtype=mg.float64), torch.linalg.norm(t, dtype=torch.float64))
    _same(norms.norm(x, "nuc", dtype=mg.float64), torch.linalg.norm(t, "nuc", dtype=torch.float64))
    a = np.random.default_rng(3).normal(size=(3, 4))
    _grads_match(lambda L, A: lin(L).norm(A, 2) + lin(L).norm(A) + lin(L).norm(A, 3, dim=1).sum(), [a])


# -- cross, vecdot, multi_dot ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "shapes, dim",
    [
        (((3,), (3,)), -1),
        (((2, 3), (1, 3)), -1),
        (((4, 1, 3), (1, 5, 3)), 2),
        (((3, 2), (3, 2)), 0),
        (((0, 3), (0, 3)), -1),
    ],
)
def test_cross_matches_torch(shapes, dim):
    rng = np.random.default_rng(4)
    a, b = (rng.normal(size=s) for s in shapes)
    expected = torch.linalg.cross(torch.tensor(a), torch.tensor(b), dim=dim)
    _same(norms.cross(mg.tensor(a), mg.tensor(b), dim=dim), expected)
    ints = [np.arange(np.prod(s), dtype=np.int64).reshape(s) for s in shapes]
    _same(norms.cross(*map(mg.tensor, ints), dim=dim), torch.linalg.cross(*map(torch.tensor, ints), dim=dim))
    if a.size:
        _grads_match(lambda L, x, y: (lin(L).cross(x, y, dim=dim) ** 2).sum(), [a, b])


@pytest.mark.parametrize(
    "shapes, dim",
    [
        (((3,), (3,)), -1),
        (((3,), (3,)), 5),
        (((2, 3), (3,)), -1),
        (((1, 4), (3, 1)), 0),
        (((), ()), 0),
        (((2, 0), (2, 0)), 1),
    ],
)
def test_vecdot_matches_torch(shapes, dim):
    rng = np.random.default_rng(5)
    a, b = (rng.normal(size=s) for s in shapes)
    for dtype in (np.float32, np.float64):
        _same(
            norms.vecdot(mg.tensor(a.astype(dtype)), mg.tensor(b.astype(dtype)), dim=dim),
            torch.linalg.vecdot(torch.tensor(a.astype(dtype)), torch.tensor(b.astype(dtype)), dim=dim),
        )
    if a.size:
        _grads_match(lambda L, x, y: (lin(L).vecdot(x, y, dim=dim) ** 2).sum(), [a, b])


@pytest.mark.parametrize(
    "shapes",
    [
        [(3,), (3,)],
        [(3,), (3, 4), (4,)],
        [(3,), (3, 4)],
        [(2, 3), (3,)],
        [(2, 30), (30, 1), (1, 40)],
        [(40, 1), (1, 30), (30, 2)],
        [(5, 2), (2, 7), (7, 3), (3, 9), (9, 1)],
        [(2, 0), (0, 2)],
    ],
)
def test_multi_dot_matches_torch(shapes):
    rng = np.random.default_rng(6)
    arrays = [rng.normal(size=s) for s in shapes]
    for dtype in (np.float32, np.float64):
        ours = norms.multi_dot([mg.tensor(a.astype(dtype)) for a in arrays])
        theirs = torch.linalg.multi_dot(tuple(torch.tensor(a.astype(dtype)) for a in arrays))
        _same(ours, theirs, rtol=1e-6 if dtype == np.float64 else 1e-5)
    ints = [np.arange(np.prod(s), dtype=np.int64).reshape(s) % 5 for s in shapes]
    _same(norms.multi_dot([mg.tensor(a) for a in ints]), torch.linalg.multi_dot([torch.tensor(a) for a in ints]))
    if all(a.size for a in arrays):
        _grads_match(lambda L, *ts: (lin(L).multi_dot(list(ts)) ** 2).sum(), arrays)


def test_multi_dot_chooses_the_cheap_order():
    # (10x1)(1x10)(10x10)(10x1): left to right builds a 10x10 product; the cheap order never does
    calls = []
    original = mg.Tensor.__matmul__

    def spy(a, b):
        calls.append((a.shape, b.shape))
        return original(a, b)

    mg.Tensor.__matmul__ = spy
    try:
        norms.multi_dot([mg.ones(10, 1), mg.ones(1, 10), mg.ones(10, 10), mg.ones(10, 1)])
    finally:
        mg.Tensor.__matmul__ = original
    assert ((10, 1), (1, 10)) not in calls and len(calls) == 3


# -- det, slogdet, matrix_power -------------------------------------------------------------------------


def test_determinants_under_linalg_names():
    a = np.random.default_rng(7).normal(size=(2, 3, 3))
    ours, theirs = _pair(a)
    _same(norms.det(A=ours), torch.linalg.det(A=theirs))
    sign, logabsdet = norms.slogdet(ours)
    result = torch.linalg.slogdet(theirs)
    _same(sign, result.sign)
    _same(norms.slogdet(ours).logabsdet, result.logabsdet)
    _same(logabsdet, result[1])
    _same(norms.matrix_power(ours, -2), torch.linalg.matrix_power(theirs, -2))
    _same(norms.matrix_power(input=ours, n=3), torch.linalg.matrix_power(input=theirs, n=3))
    outs = (mg.zeros(2), mg.zeros(2))
    assert norms.slogdet(ours, out=outs).sign is outs[0]
    _grads_match(lambda L, A: lin(L).det(A).sum() + lin(L).slogdet(A).logabsdet.sum(), [a])
    with pytest.raises(LinAlgError):
        norms.matrix_power(mg.zeros(2, 2), -1)
    assert norms.det(mg.zeros(2, 2)).item() == 0.0


# -- exception classes ----------------------------------------------------------------------------------


def _f(L, *shape, dtype=None):
    return L.ones(*shape, dtype=dtype or L.float32)


ERROR_CASES = {
    "vector_norm int": lambda L: lin(L).vector_norm(L.arange(3)),
    "vector_norm bool": lambda L: lin(L).vector_norm(L.tensor([True])),
    "vector_norm list": lambda L: lin(L).vector_norm([1.0, 2.0]),
    "vector_norm order str": lambda L: lin(L).vector_norm(_f(L, 3), "fro"),
    "vector_norm order None": lambda L: lin(L).vector_norm(_f(L, 3), None),
    "vector_norm dim dup": lambda L: lin(L).vector_norm(_f(L, 2, 3), dim=(0, 0)),
    "vector_norm dim oob": lambda L: lin(L).vector_norm(_f(L, 2, 3), dim=2),
    "vector_norm dim float": lambda L: lin(L).vector_norm(_f(L, 2, 3), dim=1.0),
    "vector_norm dim bool": lambda L: lin(L).vector_norm(_f(L, 2, 3), dim=True),
    "vector_norm keepdim None": lambda L: lin(L).vector_norm(_f(L, 3), keepdim=None),
    "vector_norm dtype int": lambda L: lin(L).vector_norm(_f(L, 3), dtype=L.int64),
    "vector_norm dtype narrowing": lambda L: lin(L).vector_norm(_f(L, 3, dtype=L.float64), dtype=L.float32),
    "vector_norm empty inf": lambda L: lin(L).vector_norm(_f(L, 0), INF),
    "vector_norm empty -1": lambda L: lin(L).vector_norm(_f(L, 0), -1),
    "vector_norm empty dim inf": lambda L: lin(L).vector_norm(_f(L, 2, 0), INF, dim=1),
    "matrix_norm 1-D": lambda L: lin(L).matrix_norm(_f(L, 3)),
    "matrix_norm int": lambda L: lin(L).matrix_norm(L.ones(3, 3, dtype=L.int64)),
    "matrix_norm order 3": lambda L: lin(L).matrix_norm(_f(L, 2, 3), 3),
    "matrix_norm order nan": lambda L: lin(L).matrix_norm(_f(L, 2, 3), math.nan),
    "matrix_norm order str": lambda L: lin(L).matrix_norm(_f(L, 2, 3), "foo"),
    "matrix_norm order None": lambda L: lin(L).matrix_norm(_f(L, 2, 3), None),
    "matrix_norm dim same": lambda L: lin(L).matrix_norm(_f(L, 2, 3), dim=(0, -2)),
    "matrix_norm dim 1": lambda L: lin(L).matrix_norm(_f(L, 2, 3), dim=(0,)),
    "matrix_norm dim 3": lambda L: lin(L).matrix_norm(_f(L, 2, 2, 2), dim=(0, 1, 2)),
    "matrix_norm dim int": lambda L: lin(L).matrix_norm(_f(L, 2, 3), dim=0),
    "matrix_norm dim oob": lambda L: lin(L).matrix_norm(_f(L, 2, 3), dim=(0, 2)),
    "matrix_norm half nuc": lambda L: lin(L).matrix_norm(_f(L, 2, 2, dtype=L.float16), "nuc"),
    "matrix_norm half 2": lambda L: lin(L).matrix_norm(_f(L, 2, 2, dtype=L.float16), 2),
    "matrix_norm dtype narrowing": lambda L: lin(L).matrix_norm(_f(L, 2, 2, dtype=L.float64), dtype=L.float32),
    "matrix_norm dtype int": lambda L: lin(L).matrix_norm(_f(L, 2, 2), 1, dtype=L.int64),
    "matrix_norm -2 empty": lambda L: lin(L).matrix_norm(_f(L, 0, 3), -2),
    "matrix_norm nan 2": lambda L: lin(L).matrix_norm(L.full((2, 2), math.nan), 2),
    "norm dim ()": lambda L: lin(L).norm(_f(L, 2, 3), dim=()),
    "norm dim 3": lambda L: lin(L).norm(_f(L, 2, 3, 4), dim=(0, 1, 2)),
    "norm order 3-D": lambda L: lin(L).norm(_f(L, 2, 3, 4), 2),
    "norm order 0-D": lambda L: lin(L).norm(L.tensor(3.0), 2),
    "norm fro 1-D": lambda L: lin(L).norm(_f(L, 3), "fro"),
    "norm nuc dim int": lambda L: lin(L).norm(_f(L, 2, 3), "nuc", 0),
    "norm matrix order 0": lambda L: lin(L).norm(_f(L, 2, 3), 0),
    "norm int": lambda L: lin(L).norm(L.arange(3)),
    "cross ndim": lambda L: lin(L).cross(_f(L, 2, 3), _f(L, 3)),
    "cross size": lambda L: lin(L).cross(_f(L, 2, 2), _f(L, 2, 2)),
    "cross bool": lambda L: lin(L).cross(L.ones(3, dtype=L.bool), L.ones(3, dtype=L.bool)),
    "cross dtypes": lambda L: lin(L).cross(_f(L, 3), _f(L, 3, dtype=L.float64)),
    "cross broadcast": lambda L: lin(L).cross(_f(L, 2, 3), _f(L, 4, 3)),
    "cross dim oob": lambda L: lin(L).cross(_f(L, 3), _f(L, 3), dim=1),
    "cross 0-d": lambda L: lin(L).cross(L.tensor(1.0), L.tensor(2.0)),
    "cross dim float": lambda L: lin(L).cross(_f(L, 3), _f(L, 3), dim=0.0),
    "cross positional dim": lambda L: lin(L).cross(_f(L, 3), _f(L, 3), 0),
    "cross list": lambda L: lin(L).cross(_f(L, 3), [1.0, 2.0, 3.0]),
    "vecdot int": lambda L: lin(L).vecdot(L.arange(2), L.arange(2)),
    "vecdot dtypes": lambda L: lin(L).vecdot(_f(L, 2), _f(L, 2, dtype=L.float64)),
    "vecdot lengths": lambda L: lin(L).vecdot(_f(L, 2), _f(L, 3)),
    "vecdot broadcast": lambda L: lin(L).vecdot(_f(L, 2), _f(L, 2, 3)),
    "vecdot dim oob": lambda L: lin(L).vecdot(_f(L, 2, 3), _f(L, 2, 3), dim=2),
    "vecdot dim tuple": lambda L: lin(L).vecdot(_f(L, 2, 3), _f(L, 2, 3), dim=(0,)),
    "vecdot list": lambda L: lin(L).vecdot(_f(L, 3), [1.0, 2.0, 3.0]),
    "multi_dot one": lambda L: lin(L).multi_dot([_f(L, 2, 3)]),
    "multi_dot none": lambda L: lin(L).multi_dot([]),
    "multi_dot 3-D first": lambda L: lin(L).multi_dot([_f(L, 2, 3, 3), _f(L, 3, 3)]),
    "multi_dot 3-D last": lambda L: lin(L).multi_dot([_f(L, 2, 2), _f(L, 2, 2, 2)]),
    "multi_dot 1-D middle": lambda L: lin(L).multi_dot([_f(L, 2, 3), _f(L, 3), _f(L, 3, 2)]),
    "multi_dot 0-D": lambda L: lin(L).multi_dot([L.tensor(2.0), _f(L, 2, 2)]),
    "multi_dot shapes": lambda L: lin(L).multi_dot([_f(L, 2, 3), _f(L, 4, 2)]),
    "multi_dot dtypes": lambda L: lin(L).multi_dot([_f(L, 2, 3), _f(L, 3, 2, dtype=L.float64)]),
    "multi_dot bool": lambda L: lin(L).multi_dot([L.ones(2, 2, dtype=L.bool), L.ones(2, 2, dtype=L.bool)]),
    "multi_dot tensor": lambda L: lin(L).multi_dot(_f(L, 2, 3, 3)),
    "multi_dot non-tensor": lambda L: lin(L).multi_dot([_f(L, 2, 2), 3]),
    "det int": lambda L: lin(L).det(L.ones(2, 2, dtype=L.int64)),
    "det half": lambda L: lin(L).det(_f(L, 2, 2, dtype=L.float16)),
    "det not square": lambda L: lin(L).det(_f(L, 2, 3)),
    "slogdet int": lambda L: lin(L).slogdet(L.ones(2, 2, dtype=L.int64)),
    "slogdet half": lambda L: lin(L).slogdet(_f(L, 2, 2, dtype=L.float16)),
    "matrix_power 1-D": lambda L: lin(L).matrix_power(_f(L, 2), 2),
    "matrix_power float n": lambda L: lin(L).matrix_power(_f(L, 2, 2), 2.0),
    "matrix_power singular": lambda L: lin(L).matrix_power(L.zeros(2, 2), -1),
}


@pytest.mark.parametrize("name", sorted(ERROR_CASES))
def test_error_classes_match_torch(name):
    assert_same_class_as_torch(name, ERROR_CASES[name])


def test_singular_matrix_power_raises_linalg_error_in_both():
    for L in (torch, mg):
        with pytest.raises(lin(L).LinAlgError):
            lin(L).matrix_power(L.zeros(2, 2), -1)
