# ruff: noqa: N803  (the error cases take the library module as L, as tests/error_classes.py does)
"""Writes at indices, sliding windows and ``reshape_as`` against PyTorch.

Covers ``minigrad/ops/index_updates.py`` (``index_fill``, ``index_copy``,
``masked_scatter``, ``scatter_reduce``, ``index_put`` and their in-place
forms) and ``minigrad/ops/windows.py`` (``Tensor.unfold``,
``Tensor.reshape_as``): values, dtypes, gradients in float64, the in-place
forms (same tensor, version counter, views, autograd through them) and the
exception classes of bad calls. Functions are reached through ``fn(L,
name)`` and methods through ``method(L, t, name, ...)``, which use the
installed ``Tensor``/``minigrad`` names once they exist and the modules'
functions until then.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad as mg
from minigrad.ops import index_updates, windows
from tests.error_classes import assert_same_class_as_torch

MINE = {name: getattr(module, name) for module in (index_updates, windows) for name in module.__all__
        if not name[0].isupper()}
TOP_LEVEL = ("index_fill", "index_copy", "masked_scatter", "scatter_reduce", "index_put", "index_put_")


def fn(L, name):
    """PyTorch's top-level ``name`` when ``L`` is torch, else minigrad's (from its module until it is wired)."""
    if L is torch:
        return getattr(torch, name)
    return getattr(mg, name) if hasattr(mg, name) else MINE[name]


def method(L, t, name, *args, **kwargs):
    """``t.name(*args, **kwargs)``; minigrad's module function until the method is installed."""
    if L is torch or hasattr(mg.Tensor, name):
        return getattr(t, name)(*args, **kwargs)
    return MINE[name](t, *args, **kwargs)


def _both(array, requires_grad=False):
    array = np.asarray(array)
    return mg.tensor(array, requires_grad=requires_grad), torch.tensor(array, requires_grad=requires_grad)


def _same(mine, theirs):
    expected = theirs.detach().numpy()
    got = mine.detach().numpy()
    assert str(got.dtype) == str(expected.dtype), (got.dtype, expected.dtype)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6) if got.dtype.kind in "fc" else (
        np.testing.assert_array_equal(got, expected))


def _run(call, *arrays):
    """``call(L, *tensors)`` in both libraries on the same arrays: values, shapes and dtypes agree."""
    mine = call(mg, *[mg.tensor(np.asarray(a)) for a in arrays])
    theirs = call(torch, *[torch.tensor(np.asarray(a)) for a in arrays])
    _same(mine, theirs)
    return mine


def _grads_match(call, *arrays):
    """The gradients of ``sum(call(L, *inputs) * w)`` w.r.t. the float64 ``arrays`` agree with PyTorch's."""
    mine_in = [mg.tensor(np.asarray(a, dtype=np.float64), requires_grad=True) for a in arrays]
    torch_in = [torch.tensor(np.asarray(a, dtype=np.float64), requires_grad=True) for a in arrays]
    mine_out, torch_out = call(mg, *mine_in), call(torch, *torch_in)
    _same(mine_out, torch_out)
    weights = np.random.default_rng(0).standard_normal(tuple(torch_out.shape))
    (mine_out * mg.tensor(weights)).sum().backward()
    (torch_out * torch.tensor(weights)).sum().backward()
    for m, t in zip(mine_in, torch_in):
        expected = np.zeros(tuple(t.shape)) if t.grad is None else t.grad.numpy()
        got = np.zeros(m.shape) if m.grad is None else m.grad.numpy()
        np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)


def _idx(L, values, dtype="int64"):
    return L.tensor(values, dtype=getattr(L, dtype))


# -- drawn problems ---------------------------------------------------------------------------------------

shapes = st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple)


@st.composite
def index_problem(draw, unique=False, negatives=False):
    """(shape, dim, positions): a 1-D list of positions along ``dim`` (maybe repeated, maybe negative)."""
    shape = draw(shapes)
    dim = draw(st.integers(-len(shape), len(shape) - 1))
    n = shape[dim]
    if unique:
        positions = draw(st.permutations(range(n)))[: draw(st.integers(0, n))]
    else:
        positions = draw(st.lists(st.integers(-n if negatives else 0, n - 1), max_size=5))
    return shape, dim, list(positions)


def _values(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(shape) > 0.5
    if dtype in ("int64", "uint8"):
        return rng.integers(0, 9, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


# -- index_fill -------------------------------------------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(index_problem(negatives=True), st.sampled_from(["float32", "int64", "bool"]),
       st.sampled_from([2.5, -1, True, "tensor"]))
def test_index_fill_matches_pytorch(problem, dtype, value):
    shape, dim, positions = problem

    def fill(L):
        return L.tensor(4.0, dtype=L.float64) if value == "tensor" else value

    _run(lambda L, t: method(L, t, "index_fill", dim, _idx(L, positions), fill(L)), _values(shape, dtype))
    _run(lambda L, t: fn(L, "index_fill")(t, dim, _idx(L, positions), fill(L)), _values(shape, dtype))


def test_index_fill_gradients_count_each_filled_position_once():
    x = np.arange(12.0).reshape(3, 4)
    value = np.array(2.0)
    for positions, dim in (([0, 0, 2], 1), ([2], 0), ([], 1)):  # (PyTorch's backward fails on negatives)
        _grads_match(lambda L, t, v, p=positions, d=dim: method(L, t, "index_fill", d, _idx(L, p), v), x, value)
    _grads_match(lambda L, t: method(L, t, "index_fill", 1, _idx(L, [1, 3]), 7.0), x)
    assert mg.autograd.gradcheck(
        lambda t, v: MINE["index_fill"](t, 0, mg.tensor([2, 0, 2]), v),
        (mg.tensor(x, requires_grad=True), mg.tensor(value, requires_grad=True)),
    )


def test_index_fill_of_a_0d_tensor_and_value_dtypes():
    _run(lambda L, t: method(L, t, "index_fill", -1, _idx(L, 0), 1.5), np.array(3.0, dtype=np.float32))
    _run(lambda L, t: method(L, t, "index_fill", 0, _idx(L, [0, 2]), 2.7), np.arange(4))  # truncated to 2
    _run(lambda L, t: method(L, t, "index_fill", 0, _idx(L, [1]), -1), np.zeros(3, dtype=np.uint8))  # wraps
    _run(lambda L, t: method(L, t, "index_fill", 0, _idx(L, [1]), L.tensor(2.5)), np.arange(3))
    grad_value = mg.tensor(1.0, dtype=mg.float64, requires_grad=True)
    out = MINE["index_fill"](mg.ones(2, 3), 1, mg.tensor([0]), grad_value)
    assert out.dtype == mg.float32
    out.sum().backward()
    assert grad_value.grad.dtype == mg.float64 and grad_value.grad.item() == 2.0


# -- index_copy -------------------------------------------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(index_problem(unique=True), st.sampled_from(["float32", "int64", "bool"]))
def test_index_copy_matches_pytorch(problem, dtype):
    shape, dim, positions = problem
    source_shape = tuple(len(positions) if d == dim % len(shape) else n for d, n in enumerate(shape))

    def call(L, t, source):
        out = method(L, t, "index_copy", dim, _idx(L, positions), source)
        return out if dtype == "bool" else out + fn(L, "index_copy")(t, dim, _idx(L, positions), source)

    _run(call, _values(shape, dtype), _values(source_shape, dtype, seed=1))


def test_index_copy_gradients_and_repeats():
    x, source = np.arange(6.0).reshape(2, 3), np.array([[10.0, 20.0], [30.0, 40.0]])
    for positions in ([2, 0], [0, 0]):  # a repeat: the later slice wins, both get the gradient
        _grads_match(lambda L, t, s, p=positions: method(L, t, "index_copy", 1, _idx(L, p), s), x, source)
    _run(lambda L, t: method(L, t, "index_copy", 0, _idx(L, [0, 0]), L.tensor([5.0, 6.0], dtype=L.float64)),
         np.array(3.0))
    _run(lambda L, t: method(L, t, "index_copy", 0, _idx(L, 1), L.tensor(5.0, dtype=L.float64)), np.zeros(3))
    _grads_match(lambda L, t, s: method(L, t, "index_copy", 1, _idx(L, 1), s), x, source[:, :1])


# -- masked_scatter ---------------------------------------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(shapes, st.integers(0, 2**16), st.integers(0, 3), st.sampled_from(["float32", "int64"]))
def test_masked_scatter_matches_pytorch(shape, seed, extra, dtype):
    rng = np.random.default_rng(seed)
    mask_shape = shape[rng.integers(0, len(shape) + 1):]  # a suffix: broadcasts to the shape
    mask = rng.random(mask_shape) > 0.5
    source = _values((int(np.broadcast_to(mask, shape).sum()) + extra,), dtype, seed)

    def call(L, t, m, s):
        return method(L, t, "masked_scatter", m, s) + fn(L, "masked_scatter")(t, m, s)

    _run(call, _values(shape, dtype), mask, source)
    _run(lambda L, t, m, s: method(L, t, "masked_scatter", m, s), _values(shape[1:], dtype), mask.reshape(
        (1,) * (len(shape) - len(mask_shape)) + mask_shape), source)  # the input broadcasts too


def test_masked_scatter_gradients():
    mask = np.array([[True, False, True], [False, True, False]])
    _grads_match(lambda L, t, s: method(L, t, "masked_scatter", L.tensor(mask), s), np.arange(6.0).reshape(2, 3),
                 np.arange(7.0))
    _grads_match(lambda L, t, s: method(L, t, "masked_scatter", L.tensor(mask), s), np.arange(3.0),
                 np.arange(6.0).reshape(2, 3))


# -- scatter_reduce ---------------------------------------------------------------------------------------


@st.composite
def scatter_problem(draw):
    """(shape, dim, index, source shape): ``index`` no larger than the input apart from ``dim``, nor the source."""
    shape = draw(shapes)
    dim = draw(st.integers(-len(shape), len(shape) - 1))
    axis = dim % len(shape)
    index_shape = tuple(draw(st.integers(0, 4)) if d == axis else draw(st.integers(1, n)) for d, n in enumerate(shape))
    index = np.array(draw(st.lists(st.integers(0, shape[axis] - 1), min_size=int(np.prod(index_shape)),
                                   max_size=int(np.prod(index_shape))))).reshape(index_shape).astype(np.int64)
    source_shape = tuple(n + draw(st.integers(0, 1)) for n in index_shape)
    return shape, dim, index, source_shape


@settings(max_examples=40, deadline=None)
@given(scatter_problem(), st.sampled_from(["sum", "prod", "mean", "amax", "amin"]), st.booleans(),
       st.sampled_from(["float64", "float32", "int64", "uint8", "bool"]))
def test_scatter_reduce_matches_pytorch(problem, reduce, include_self, dtype):
    shape, dim, index, source_shape = problem
    if dtype == "bool" and reduce == "mean":
        return  # NotImplementedError in both (test_bad_calls_raise_pytorchs_classes)

    def call(L, t, s, i):
        return method(L, t, "scatter_reduce", dim, i, s, reduce, include_self=include_self)

    out = _run(call, _values(shape, dtype), _values(source_shape, dtype, seed=1), index)
    _same(fn(mg, "scatter_reduce")(out, dim, mg.tensor(index), mg.tensor(_values(source_shape, dtype, 1)), reduce,
                                   include_self=include_self),
          torch.scatter_reduce(torch.tensor(out.numpy()), dim, torch.tensor(index),
                               torch.tensor(_values(source_shape, dtype, 1)), reduce, include_self=include_self))


@settings(max_examples=30, deadline=None)
@given(scatter_problem(), st.sampled_from(["sum", "prod", "mean", "amax", "amin"]), st.booleans())
def test_scatter_reduce_gradients_match_pytorch(problem, reduce, include_self):
    shape, dim, index, _ = problem
    source_shape = index.shape  # (with a larger source PyTorch's backward fails its own shape check)
    x = np.random.default_rng(1).standard_normal(shape)
    src = np.random.default_rng(2).standard_normal(source_shape)
    _grads_match(lambda L, t, s: method(L, t, "scatter_reduce", dim, L.tensor(index), s, reduce,
                                        include_self=include_self), x, src)


def test_0d_inputs():
    for reduce in ("sum", "prod", "amin"):
        _run(lambda L, t, s, r=reduce: method(L, t, "scatter_reduce", 0, L.tensor(0), s, r), np.array(2.0),
             np.array([3.0, 4.0]))
        _run(lambda L, t, s, r=reduce: fn(L, "scatter_reduce")(t, -1, L.tensor(0), s, r, include_self=False),
             np.array(2.0), np.array(3.0))
    _run(lambda L, t, s: method(L, t, "masked_scatter", L.tensor(True), s), np.array(1.0), np.array([5.0, 6.0]))
    _run(lambda L, t, s: method(L, t, "masked_scatter", L.tensor(False), s), np.array(1.0), np.zeros(0))
    for L in (mg, torch):
        t = L.tensor(2.0)
        assert method(L, t, "scatter_reduce_", 0, L.tensor(0), L.tensor(3.0), "prod") is t
        assert t.item() == 6.0 and t._version == 1


def test_scatter_reduce_gradients_at_ties_zeros_and_nan():
    index = [0, 0, 0]
    for reduce in ("amax", "amin", "prod"):
        for include_self in (True, False):
            for x, src in (([3.0, 5.0], [3.0, 3.0, 1.0]), ([0.0, 5.0], [0.0, 3.0, 2.0]), ([1.0, 2.0], [0.0, 0.0, 4.0]),
                           ([0.0, 1.0], [2.0, 3.0, 4.0]), ([3.0, 1.0], [float("nan"), 1.0, 2.0])):
                _grads_match(lambda L, t, s, r=reduce, k=include_self: method(
                    L, t, "scatter_reduce", 0, L.tensor(index), s, r, include_self=k), x, src)


def test_scatter_reduce_second_derivatives():
    x = mg.tensor([[1.5, -2.0, 0.5], [0.7, 1.1, -0.3]], dtype=mg.float64, requires_grad=True)
    src = mg.tensor([[0.4, 2.0], [-1.2, 0.9]], dtype=mg.float64, requires_grad=True)
    index = mg.tensor([[0, 0], [2, 1]])
    weights = mg.tensor([[1.0, -2.0, 0.5], [0.3, 1.7, -1.1]], dtype=mg.float64)
    for reduce in ("sum", "prod", "mean", "amax", "amin"):
        for include_self in (True, False):
            def first(a, s, r=reduce, k=include_self):
                out = MINE["scatter_reduce"](a, 1, index, s, r, include_self=k)
                return mg.autograd.grad((out * weights).sum(), (a, s), create_graph=True)

            assert mg.autograd.gradcheck(first, (x, src)), (reduce, include_self)


def test_prod_second_derivative_is_refused_where_two_source_zeros_meet():
    def call(L):
        a = L.tensor([1.0, 2.0], dtype=L.float64, requires_grad=True)
        s = L.tensor([0.0, 0.0], dtype=L.float64, requires_grad=True)
        out = method(L, a, "scatter_reduce", 0, L.tensor([0, 0]), s, "prod")
        (gs,) = L.autograd.grad(out.sum(), s, create_graph=True)
        gs.sum().backward()

    assert_same_class_as_torch("prod double backward with two zeros", call)


# -- index_put --------------------------------------------------------------------------------------------


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**16), st.booleans(), st.sampled_from(["float32", "int64", "bool"]),
       st.sampled_from(["ints", "ints2", "mask", "mask_then_int", "int32"]))
def test_index_put_matches_pytorch(seed, accumulate, dtype, kind):
    rng = np.random.default_rng(seed)
    x = _values((3, 4), dtype, seed)
    if kind == "mask":
        indices = [rng.random((3, 4)) > 0.5]
        shape = (int(indices[0].sum()),)
    elif kind == "mask_then_int":
        indices = [rng.random(3) > 0.5, rng.integers(-4, 4, 1)]
        shape = (int(indices[0].sum()),)
    else:
        count = int(rng.integers(0, 5))
        indices = [rng.integers(-3, 3, count)] + ([rng.integers(0, 4, count)] if kind == "ints2" else [])
        indices = [i.astype(np.int32) for i in indices] if kind == "int32" else indices
        shape = (count,) if kind == "ints2" else (count, 4)
    values = _values(shape[-1:] if rng.random() > 0.5 else shape, dtype, seed + 1)

    def call(L, t, v, *idx):
        return method(L, t, "index_put", tuple(idx), v, accumulate=accumulate)

    _run(call, x, values, *indices)
    mine = fn(mg, "index_put_")(mg.tensor(x), [mg.tensor(i) for i in indices], mg.tensor(values), accumulate)
    _same(mine, torch.index_put_(torch.tensor(x), [torch.tensor(i) for i in indices], torch.tensor(values),
                                 accumulate))


def test_index_put_gradients():
    x = np.arange(6.0).reshape(2, 3)
    for accumulate in (False, True):
        for indices, values in ((([0, 1, 1], [2, 0, 0]), [10.0, 20.0, 30.0]), (([0, 1, 1],), [1.0, 2.0, 3.0]),
                                (([1],), [[4.0]])):
            _grads_match(lambda L, t, v, i=indices, acc=accumulate: fn(L, "index_put")(
                t, tuple(L.tensor(p) for p in i), v, accumulate=acc), x, values)
        _grads_match(lambda L, t, v, acc=accumulate: method(L, t, "index_put", (L.tensor(x > 2),), v, acc), x,
                     [1.0, 2.0, 3.0])


# -- in-place forms ---------------------------------------------------------------------------------------

INPLACE = {
    "index_fill_": lambda L, t: method(L, t, "index_fill_", 0, L.tensor([0, 1]), 7.0),
    "index_copy_": lambda L, t: method(L, t, "index_copy_", 0, L.tensor([1]), L.ones(1, 3, dtype=L.float64) * 5),
    "masked_scatter_": lambda L, t: method(L, t, "masked_scatter_", L.tensor([True, False, True]),
                                           L.arange(9.0, dtype=L.float64)),
    "scatter_reduce_": lambda L, t: method(L, t, "scatter_reduce_", 0, L.tensor([[0, 0, 1]]),
                                           L.ones(1, 3, dtype=L.float64) * 2, "prod", include_self=False),
    "index_put_": lambda L, t: method(L, t, "index_put_", (L.tensor([0, 0]), L.tensor([1, 1])),
                                      L.tensor([1.0, 2.0], dtype=L.float64), accumulate=True),
}


@pytest.mark.parametrize("name", sorted(INPLACE))
def test_inplace_forms_write_the_tensor_bump_its_version_and_keep_autograd(name):
    call = INPLACE[name]
    data = np.arange(9.0).reshape(3, 3) + 1
    results = {}
    for L in (mg, torch):
        t = L.tensor(data)
        view = t[1:]
        before = t._version
        assert call(L, t) is t
        assert t._version == before + 1 and view._version == t._version
        results[L] = t
        with pytest.raises(RuntimeError):  # a leaf that requires grad may not be written in place
            call(L, L.tensor(data, requires_grad=True))
    _same(results[mg], results[torch])
    _grads_match(lambda L, a: call(L, a * 1), data)  # recorded on a non-leaf
    _grads_match(lambda L, a: (lambda b: (call(L, b[1:]), b)[1])(a * 1), data)  # through a view, to its base


def test_a_saved_tensor_written_in_place_is_caught():
    for L in (mg, torch):
        a = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
        b = a * 1
        out = b.exp()  # saves its output
        method(L, out, "index_fill_", 0, L.tensor([0]), 0.0)
        with pytest.raises(RuntimeError):  # exp saved its output, which the write changed
            out.sum().backward()


# -- unfold and reshape_as --------------------------------------------------------------------------------


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(0, 5), min_size=0, max_size=3).map(tuple), st.data())
def test_unfold_matches_pytorch(shape, data):
    ndim = max(len(shape), 1)
    dim = data.draw(st.integers(-ndim, ndim - 1))
    length = shape[dim] if shape else 1
    size = data.draw(st.integers(0, length))
    step = data.draw(st.integers(1, 4))
    x = np.arange(float(np.prod(shape))).reshape(shape)
    _run(lambda L, t: method(L, t, "unfold", dim, size, step), x)
    if x.size and size:
        _grads_match(lambda L, t: method(L, t, "unfold", dim, size, step) ** 2, x + 0.5)


def test_unfold_is_a_view_written_through_where_windows_do_not_overlap():
    for L in (mg, torch):
        base = L.zeros(6)
        windows_ = method(L, base, "unfold", 0, 2, 3)
        windows_.add_(1)
        assert base.tolist() == [1.0, 1.0, 0.0, 1.0, 1.0, 0.0]
        assert base._version == 1
    a = mg.tensor(np.arange(6.0), requires_grad=True)
    b = a * 1
    method(mg, b, "unfold", 0, 2, 2).mul_(3)
    b.sum().backward()
    assert a.grad.tolist() == [3.0] * 6
    assert mg.autograd.gradcheck(lambda t: method(mg, t, "unfold", 1, 3, 1).exp(),
                                 mg.tensor(np.random.default_rng(0).standard_normal((2, 5)), requires_grad=True))


def test_overlapping_windows_refuse_an_inplace_write():
    """PyTorch lets it add twice where windows share an element; minigrad refuses (RuntimeError) instead."""
    windows_ = method(mg, mg.zeros(6), "unfold", 0, 2, 1)
    with pytest.raises(RuntimeError, match="more than one element"):
        windows_.add_(1)


def test_a_source_larger_than_the_index_gets_zero_gradient_where_unused():
    """PyTorch's backward fails here (it returns the index's shape); minigrad pads with zeros, as for scatter."""
    x = mg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    src = mg.tensor([4.0, 5.0, 6.0, 7.0], requires_grad=True)
    method(mg, x, "scatter_reduce", 0, mg.tensor([2, 0]), src, "amax").sum().backward()
    assert src.grad.tolist() == [1.0, 1.0, 0.0, 0.0] and x.grad.tolist() == [0.0, 1.0, 0.0]


def test_reshape_as():
    _run(lambda L, t: method(L, t, "reshape_as", L.zeros(4, 3)), np.arange(12.0).reshape(3, 4))
    _grads_match(lambda L, t: method(L, t, "reshape_as", L.zeros(12)) ** 2, np.arange(12.0).reshape(3, 4))


# -- bad calls --------------------------------------------------------------------------------------------


def _x(L):
    return L.arange(6.0).reshape(2, 3)


BAD_CALLS = {
    "index_fill int32 index": lambda L: method(L, _x(L), "index_fill", 1, L.tensor([0], dtype=L.int32), 1.0),
    "index_fill 2-D index": lambda L: method(L, _x(L), "index_fill", 1, L.tensor([[0]]), 1.0),
    "index_fill position out of range": lambda L: method(L, _x(L), "index_fill", 1, L.tensor([3]), 1.0),
    "index_fill negative out of range": lambda L: method(L, _x(L), "index_fill", 1, L.tensor([-4]), 1.0),
    "index_fill dim out of range": lambda L: method(L, _x(L), "index_fill", 2, L.tensor([0]), 1.0),
    "index_fill 1-D value": lambda L: method(L, _x(L), "index_fill", 1, L.tensor([0]), L.tensor([1.0])),
    "index_fill complex value": lambda L: method(L, _x(L), "index_fill", 1, L.tensor([0]), 1j),
    "index_fill string value": lambda L: method(L, _x(L), "index_fill", 1, L.tensor([0]), "a"),
    "index_fill list index": lambda L: method(L, _x(L), "index_fill", 1, [0], 1.0),
    "index_fill overflow": lambda L: method(L, L.zeros(3, dtype=L.uint8), "index_fill", 0, L.tensor([0]), 300),
    "index_copy int32 index": lambda L: method(L, _x(L), "index_copy", 1, L.tensor([0], dtype=L.int32),
                                               L.ones(2, 1)),
    "index_copy negative": lambda L: method(L, _x(L), "index_copy", 1, L.tensor([-1]), L.ones(2, 1)),
    "index_copy 2-D index": lambda L: method(L, _x(L), "index_copy", 1, L.tensor([[0]]), L.ones(2, 1)),
    "index_copy slice shape": lambda L: method(L, _x(L), "index_copy", 1, L.tensor([0]), L.ones(1, 1)),
    "index_copy count": lambda L: method(L, _x(L), "index_copy", 1, L.tensor([0, 1]), L.ones(2, 3)),
    "index_copy ndim": lambda L: method(L, _x(L), "index_copy", 1, L.tensor([0]), L.ones(2)),
    "index_copy dtype": lambda L: method(L, _x(L), "index_copy", 1, L.tensor([0]), L.ones(2, 1, dtype=L.float64)),
    "index_copy number source": lambda L: method(L, _x(L), "index_copy", 1, L.tensor([0]), 1.0),
    "index_copy 0-d source, 2 positions": lambda L: method(L, L.zeros(3), "index_copy", 0, L.tensor([0, 1]),
                                                           L.tensor(1.0)),
    "masked_scatter float mask": lambda L: method(L, _x(L), "masked_scatter", L.ones(2, 3), L.ones(6)),
    "masked_scatter short source": lambda L: method(L, _x(L), "masked_scatter", L.ones(2, 3) > 0, L.ones(2)),
    "masked_scatter dtype": lambda L: method(L, _x(L), "masked_scatter", L.ones(2, 3) > 0, L.ones(6, dtype=L.int64)),
    "masked_scatter mask shape": lambda L: method(L, _x(L), "masked_scatter", L.ones(2) > 0, L.ones(6)),
    "masked_scatter_ larger mask": lambda L: method(L, L.zeros(3), "masked_scatter_", L.ones(2, 3) > 0, L.ones(6)),
    "masked_scatter number source": lambda L: method(L, _x(L), "masked_scatter", L.ones(2, 3) > 0, 1.0),
    "scatter_reduce unknown reduce": lambda L: method(L, _x(L), "scatter_reduce", 1, L.tensor([[0]]), _x(L), "add"),
    "scatter_reduce int reduce": lambda L: method(L, _x(L), "scatter_reduce", 1, L.tensor([[0]]), _x(L), 5),
    "scatter_reduce number src": lambda L: method(L, _x(L), "scatter_reduce", 1, L.tensor([[0]]), 2.0, "sum"),
    "scatter_reduce src dtype": lambda L: method(L, _x(L), "scatter_reduce", 1, L.tensor([[0]]),
                                                 _x(L).double(), "sum"),
    "scatter_reduce position out of range": lambda L: method(L, _x(L), "scatter_reduce", 1, L.tensor([[3]]), _x(L),
                                                             "sum"),
    "scatter_reduce index rank": lambda L: method(L, _x(L), "scatter_reduce", 1, L.tensor([0]), _x(L), "sum"),
    "scatter_reduce index too big": lambda L: method(L, _x(L), "scatter_reduce", 1, L.zeros(3, 1, dtype=L.int64),
                                                     _x(L), "sum"),
    "scatter_reduce float index": lambda L: method(L, _x(L), "scatter_reduce", 1, L.tensor([[0.0]]), _x(L), "sum"),
    "scatter_reduce 0-d input, 2-D src": lambda L: method(L, L.tensor(1.0), "scatter_reduce", 0, L.tensor(0),
                                                          L.ones(1, 2), "sum"),
    "scatter_reduce dim": lambda L: method(L, _x(L), "scatter_reduce", 2, L.tensor([[0]]), _x(L), "sum"),
    "scatter_reduce include_self": lambda L: method(L, _x(L), "scatter_reduce", 1, L.tensor([[0]]), _x(L), "sum",
                                                    include_self="a"),
    "scatter_reduce bool mean": lambda L: method(L, L.ones(2) > 0, "scatter_reduce", 0, L.tensor([0]),
                                                 L.ones(1) > 0, "mean"),
    "scatter_reduce complex amax": lambda L: method(L, L.ones(2, dtype=L.complex64), "scatter_reduce", 0,
                                                    L.tensor([0]), L.ones(1, dtype=L.complex64), "amax"),
    "index_put a tensor, not a tuple": lambda L: method(L, _x(L), "index_put", L.tensor([0]), L.tensor(1.0)),
    "index_put None index": lambda L: method(L, _x(L), "index_put", (None, L.tensor([0])), L.tensor(1.0)),
    "index_put float index": lambda L: method(L, _x(L), "index_put", (L.tensor([0.0]),), L.tensor(1.0)),
    "index_put uint8 index": lambda L: method(L, _x(L), "index_put", (L.tensor([1], dtype=L.uint8),), L.tensor(1.0)),
    "index_put uint8 mask": lambda L: method(L, _x(L), "index_put", (L.tensor([1, 0], dtype=L.uint8),),
                                             L.tensor(1.0)),
    "index_put out of range": lambda L: method(L, _x(L), "index_put", (L.tensor([2]),), L.tensor(1.0)),
    "index_put too many": lambda L: method(L, _x(L), "index_put", (L.tensor([0]),) * 3, L.tensor(1.0)),
    "index_put mask shape": lambda L: method(L, _x(L), "index_put", (L.ones(3) > 0,), L.tensor(1.0)),
    "index_put indices broadcast": lambda L: method(L, _x(L), "index_put", (L.tensor([0, 1]), L.tensor([0, 1, 2])),
                                                    L.tensor(1.0)),
    "index_put values dtype": lambda L: method(L, _x(L), "index_put", (L.tensor([0]),), L.tensor(1)),
    "index_put values shape": lambda L: method(L, _x(L), "index_put", (L.tensor([0]),), L.ones(2)),
    "index_put number values": lambda L: method(L, _x(L), "index_put", (L.tensor([0]),), 1.0),
    "index_put accumulate int": lambda L: method(L, _x(L), "index_put", (L.tensor([0]),), L.tensor(1.0), 1),
    "index_put empty indices": lambda L: method(L, _x(L), "index_put", (), L.tensor(1.0)),
    "index_put 0-d tensor": lambda L: method(L, L.tensor(1.0), "index_put", (L.tensor(0),), L.tensor(1.0)),
    "unfold size too big": lambda L: method(L, _x(L), "unfold", 1, 4, 1),
    "unfold negative size": lambda L: method(L, _x(L), "unfold", 1, -1, 1),
    "unfold zero step": lambda L: method(L, _x(L), "unfold", 1, 2, 0),
    "unfold dim out of range": lambda L: method(L, _x(L), "unfold", 2, 1, 1),
    "unfold float size": lambda L: method(L, _x(L), "unfold", 1, 2.0, 1),
    "unfold bool step": lambda L: method(L, _x(L), "unfold", 1, 2, True),
    "unfold string dim": lambda L: method(L, _x(L), "unfold", "a", 2, 1),
    "unfold empty dimension": lambda L: method(L, L.zeros(0, 3), "unfold", 0, 1, 1),
    "reshape_as count": lambda L: method(L, _x(L), "reshape_as", L.zeros(4)),
    "reshape_as not a tensor": lambda L: method(L, _x(L), "reshape_as", (3, 2)),
    "index_fill_ leaf": lambda L: method(L, L.zeros(3, requires_grad=True), "index_fill_", 0, L.tensor([0]), 1.0),
}


@pytest.mark.parametrize("name", sorted(BAD_CALLS))
def test_bad_calls_raise_pytorchs_classes(name):
    assert_same_class_as_torch(name, BAD_CALLS[name])
