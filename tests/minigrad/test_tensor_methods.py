"""Tensor methods and ``mg.`` functions of PyTorch's tutorials, with PyTorch as the oracle.

Every check runs one program on minigrad and on PyTorch (their APIs mirror
each other) and compares the outcome: values (NaN where PyTorch has NaN),
shapes and dtypes, or that both raised the same exception type. Inputs are
drawn by hypothesis over shapes, dtypes (bool, integer, float16/32/64) and
values, special ones (0, -0.0, +-inf, NaN) included.

The op suite (``ops/cases_math.py``, ``ops/cases_gather.py``) checks the
gradients of the same ops by finite differences and against PyTorch; here
are the dtypes, the errors, in-place forms, views, and the gradients at
ties, zeros and integer points that finite differences cannot reach.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minigrad as mg
from minigrad import backend

SETTINGS = settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])

DTYPES = {
    "bool": (np.bool_, torch.bool),
    "int32": (np.int32, torch.int32),
    "int64": (np.int64, torch.int64),
    "float16": (np.float16, torch.float16),
    "float32": (np.float32, torch.float32),
    "float64": (np.float64, torch.float64),
}
SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, np.inf, -np.inf, np.nan]


# -- running a program on both libraries ---------------------------------------------------------


class Raised:
    """What a program raised (compared by type: messages are our own)."""

    def __init__(self, error):
        self.error = error

    def __repr__(self):
        return f"Raised({type(self.error).__name__}: {self.error})"


def run(program, lib, *args):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return program(lib, *args)
    except (RuntimeError, TypeError, ValueError, IndexError, NotImplementedError, ZeroDivisionError) as error:
        return Raised(error)


def as_numpy(x):
    if isinstance(x, torch.Tensor):
        return x.detach().numpy()
    if isinstance(x, mg.Tensor):
        return backend.to_numpy(x.array)
    return np.asarray(x)


def tolerance(dtype):
    if dtype == np.float16:
        return 2e-3
    if dtype == np.float32:
        return 4e-6
    return 1e-12


def assert_same(mine, theirs, what="result"):
    """Equal outcomes: both raised the same exception type, or equal values, shapes and dtypes."""
    if isinstance(theirs, Raised) or isinstance(mine, Raised):
        assert isinstance(mine, Raised) and isinstance(theirs, Raised), f"{what}: minigrad {mine!r}, PyTorch {theirs!r}"
        assert type(mine.error) is type(theirs.error), f"{what}: minigrad {mine!r}, PyTorch {theirs!r}"
        return
    if isinstance(theirs, (tuple, list)):
        assert isinstance(mine, (tuple, list)) and len(mine) == len(theirs), f"{what}: {mine!r} vs {theirs!r}"
        for k, (m, t) in enumerate(zip(mine, theirs)):
            assert_same(m, t, f"{what}[{k}]")
        return
    if isinstance(theirs, (bool, int, float)):
        assert type(mine) is type(theirs) and mine == theirs, f"{what}: minigrad {mine!r}, PyTorch {theirs!r}"
        return
    m, t = as_numpy(mine), as_numpy(theirs)
    assert m.shape == t.shape, f"{what}: shape {m.shape}, PyTorch {t.shape}"
    assert m.dtype == t.dtype, f"{what}: dtype {m.dtype}, PyTorch {t.dtype}"
    if t.dtype.kind in "fc":
        rtol = tolerance(t.dtype)
        np.testing.assert_allclose(m, t, rtol=rtol, atol=rtol, equal_nan=True, err_msg=what)
    else:
        np.testing.assert_array_equal(m, t, err_msg=what)


def both(program, *arrays, requires_grad=False):
    """``program`` on minigrad and PyTorch tensors of ``arrays``; returns the two outcomes and the inputs."""
    mine = [mg.tensor(a, requires_grad=requires_grad) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=requires_grad) for a in arrays]
    return run(program, mg, *mine), run(program, torch, *theirs), mine, theirs


def check(program, *arrays):
    mine, theirs, _, _ = both(program, *arrays)
    assert_same(mine, theirs)


@st.composite
def arrays_of(draw, dtype_name, shape=None, low=-3, high=3, special=True):
    dtype = DTYPES[dtype_name][0]
    if shape is None:
        shape = draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=3))
    if dtype == np.bool_:
        elements = st.booleans()
    elif np.dtype(dtype).kind == "i":
        elements = st.integers(low, high)
    else:
        width = {np.float16: 16, np.float32: 32, np.float64: 64}[dtype]
        elements = st.floats(low, high, width=width)
        if special:
            elements = elements | st.sampled_from(SPECIAL).map(lambda v: np.dtype(dtype).type(v).item())
    return draw(hnp.arrays(dtype, shape, elements=elements))


# -- one-input math ----------------------------------------------------------------------------------

UNARY = ["sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "exp2", "expm1",
         "log2", "log10", "log1p", "rsqrt", "reciprocal", "square", "erf", "erfinv", "sign", "floor", "ceil",
         "trunc", "round", "isnan", "isinf", "isfinite", "logical_not", "bitwise_not"]


@pytest.mark.parametrize("name", UNARY)
@SETTINGS
@given(data=st.data())
def test_unary_method_and_function_match_torch(name, data):
    dtype = data.draw(st.sampled_from(list(DTYPES)), label="dtype")
    x = data.draw(arrays_of(dtype), label="x")
    check(lambda lib, t: (getattr(t, name)(), getattr(lib, name)(t)), x)


@SETTINGS
@given(data=st.data())
def test_round_with_decimals_matches_torch(data):
    dtype = data.draw(st.sampled_from(["float32", "float64", "int64"]), label="dtype")
    x = data.draw(arrays_of(dtype, low=-2000, high=2000), label="x")
    decimals = data.draw(st.integers(-3, 3), label="decimals")
    check(lambda lib, t: (t.round(decimals=decimals), lib.round(t, decimals=decimals)), x)


@pytest.mark.parametrize("name", ["sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "exp2", "expm1",
                                  "log2", "log10", "log1p", "rsqrt", "reciprocal", "square", "erf", "erfinv",
                                  "sign", "floor", "ceil", "trunc", "round"])
@SETTINGS
@given(data=st.data())
def test_unary_inplace_matches_torch(name, data):
    """``t.sin_()`` and friends: the values, the same object, a version bump; or PyTorch's error (``int.sin_()``)."""
    dtype = data.draw(st.sampled_from(["int64", "float32", "float64"]), label="dtype")
    x = data.draw(arrays_of(dtype), label="x")

    def program(lib, t):
        out = getattr(t, name + "_")()
        assert out is t
        return t, t._version

    check(program, x)


def test_unary_functions_refuse_non_tensors():
    for name in UNARY:
        with pytest.raises(TypeError, match=name):
            getattr(mg, name)([1.0, 2.0])


# -- two-input math ----------------------------------------------------------------------------------------

BINARY = {
    "maximum": lambda lib, a, b: (lib.maximum(a, b), a.maximum(b)),
    "minimum": lambda lib, a, b: (lib.minimum(a, b), a.minimum(b)),
    "atan2": lambda lib, a, b: (lib.atan2(a, b), a.atan2(b)),
    "remainder": lambda lib, a, b: (lib.remainder(a, b), a % b, a.remainder(b)),
    "fmod": lambda lib, a, b: (lib.fmod(a, b), a.fmod(b)),
    "floor_divide": lambda lib, a, b: (lib.floor_divide(a, b), a // b, a.floor_divide(b)),
    "eq": lambda lib, a, b: (lib.eq(a, b), a.eq(b), a.ne(b), lib.ne(a, b)),
    "lt": lambda lib, a, b: (lib.lt(a, b), a.le(b), lib.gt(a, b), a.ge(b), a.greater(b), lib.less_equal(a, b)),
    "logical": lambda lib, a, b: (lib.logical_and(a, b), a.logical_or(b), lib.logical_xor(a, b)),
    "bitwise": lambda lib, a, b: (a & b, a | b, a ^ b, lib.bitwise_and(a, b), a.bitwise_xor(b)),
    "isclose": lambda lib, a, b: (lib.isclose(a, b), a.isclose(b, rtol=0.1, atol=0.5, equal_nan=True),
                                  lib.allclose(a, b), a.allclose(b, equal_nan=True), lib.equal(a, b)),
}


@st.composite
def broadcast_pair(draw):
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=3))
    shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, base_shape=shape, max_dims=3))
    return shapes.input_shapes


@pytest.mark.parametrize("name", BINARY)
@settings(SETTINGS, max_examples=15)
@given(data=st.data())
def test_binary_functions_match_torch(name, data):
    """Values and PyTorch's result dtype, or the same exception (bool or integer division by zero, bitwise floats)."""
    dtype_a = data.draw(st.sampled_from(list(DTYPES)), label="dtype a")
    dtype_b = data.draw(st.sampled_from([dtype_a, *DTYPES]), label="dtype b")
    shape_a, shape_b = data.draw(broadcast_pair(), label="shapes")
    a = data.draw(arrays_of(dtype_a, shape_a), label="a")
    b = data.draw(arrays_of(dtype_b, shape_b), label="b")
    check(BINARY[name], a, b)


SCALAR_FORMS = {
    "remainder": lambda lib, t, s: (t % s, s % t, lib.remainder(t, s), t.remainder(s)),
    "fmod": lambda lib, t, s: (lib.fmod(t, s), t.fmod(s)),
    "floor_divide": lambda lib, t, s: (t // s, s // t, lib.floor_divide(t, s)),
    "compare": lambda lib, t, s: (t.eq(s), lib.ne(t, s), t.lt(s), lib.ge(t, s)),
    "bitwise": lambda lib, t, s: (t & s, s | t, t ^ s, lib.bitwise_and(t, s)),
}


@pytest.mark.parametrize("name", SCALAR_FORMS)
@SETTINGS
@given(data=st.data())
def test_binary_with_python_numbers_match_torch(name, data):
    dtype = data.draw(st.sampled_from(list(DTYPES)), label="dtype")
    t = data.draw(arrays_of(dtype), label="t")
    scalar = data.draw(st.sampled_from([0, 2, -3, True, 1.5, -0.75]), label="scalar")
    check(lambda lib, x: SCALAR_FORMS[name](lib, x, scalar), t)


def test_two_tensor_functions_refuse_numbers_as_pytorch_does():
    for program in (lambda lib, t: lib.maximum(t, 1.0), lambda lib, t: lib.atan2(t, 2.0),
                    lambda lib, t: lib.logical_and(t, 1), lambda lib, t: lib.isclose(t, 1.0),
                    lambda lib, t: lib.equal(t, [1.0]), lambda lib, t: lib.fmod(2.0, t),
                    lambda lib, t: ~t, lambda lib, t: lib.bitwise_not(t)):
        check(program, np.array([1.0, 2.0], dtype=np.float32))


def test_non_broadcastable_shapes_raise_naming_both_shapes():
    # RuntimeError, as PyTorch raises for shapes that do not broadcast.
    programs = (
        lambda lib, a, b: lib.maximum(a, b),
        lambda lib, a, b: a % b,
        lambda lib, a, b: lib.eq(a, b),
        lambda lib, a, b: lib.logical_or(a, b),
        lambda lib, a, b: a == b,
        lambda lib, a, b: a < b,
    )
    for program in programs:
        with pytest.raises(RuntimeError):
            program(torch, torch.ones(2, 3), torch.ones(4))
        with pytest.raises(RuntimeError, match=r"\(2, 3\).*\(4,\)"):
            program(mg, mg.ones(2, 3), mg.ones(4))


BINARY_INPLACE = {
    "remainder_": lambda t, o: t.remainder_(o),
    "imod": lambda t, o: t.__imod__(o),
    "fmod_": lambda t, o: t.fmod_(o),
    "floor_divide_": lambda t, o: t.floor_divide_(o),
    "ifloordiv": lambda t, o: t.__ifloordiv__(o),
    "iand": lambda t, o: t.__iand__(o),
    "ior": lambda t, o: t.__ior__(o),
    "bitwise_xor_": lambda t, o: t.bitwise_xor_(o),
}


@pytest.mark.parametrize("name", BINARY_INPLACE)
@SETTINGS
@given(data=st.data())
def test_binary_inplace_matches_torch(name, data):
    """In place: the values, the same object, one version bump; or PyTorch's error (a result that does not fit)."""
    dtype = data.draw(st.sampled_from(["bool", "int64", "float32", "float64"]), label="dtype")
    t = data.draw(arrays_of(dtype, special=False), label="t")
    other = data.draw(st.sampled_from([2, -3, 1.5, True]) | arrays_of("int64", t.shape[1:], low=1, high=4)
                      | arrays_of("bool", t.shape[1:]), label="other")

    def program(lib, x):
        y = lib.tensor(other) if isinstance(other, np.ndarray) else other
        assert BINARY_INPLACE[name](x, y) is x
        return x, x._version

    check(program, t)


def test_inplace_remainder_is_recorded_like_pytorch():
    def program(lib, a, b):
        x = a * 1
        x %= b
        y = a * 2
        y.remainder_(1.5)
        ((x + y) * lib.arange(3)).sum().backward()
        return x, y, a.grad, b.grad

    a, b = np.array([5.5, -2.25, 7.0]), np.array([2.0, 1.5, -3.0])
    mine, theirs, _, _ = both(program, a, b, requires_grad=True)
    assert_same(mine, theirs)


def test_floor_divide_is_recorded_but_its_backward_raises_as_in_pytorch():
    def program(lib, a):
        y = a // 2
        assert y.requires_grad
        y.sum().backward()

    mine, theirs, _, _ = both(program, np.array([3.5, -1.0]), requires_grad=True)
    assert_same(mine, theirs)
    assert isinstance(mine, Raised) and "floor_divide" in str(mine.error)


def test_remainder_with_a_number_first_is_differentiated():
    # PyTorch records 2.5 % b without a derivative; minigrad differentiates it: d/db (a % b) = -floor(a / b).
    b = mg.tensor([0.75, -1.1, 2.0], dtype=mg.float64, requires_grad=True)
    (2.5 % b).sum().backward()
    np.testing.assert_allclose(b.grad.numpy(), -np.floor(2.5 / b.detach().numpy()))
    assert mg.autograd.gradcheck(lambda x: 2.5 % x, (b,))


# -- gradients at ties, zeros and integer points ---------------------------------------------------------

KINKS = {
    "maximum_ties": (lambda lib, a, b: lib.maximum(a, b) * lib.arange(1, 5), [1.0, 2.0, 3.0, 3.0],
                     [1.0, 0.0, 3.0, 5.0]),
    "minimum_ties": (lambda lib, a, b: a.minimum(b) * lib.arange(1, 5), [1.0, 2.0, 3.0, -1.0], [1.0, 0.0, 3.0, 5.0]),
    "maximum_nan": (lambda lib, a, b: lib.maximum(a, b), [np.nan, 1.0, np.nan], [1.0, np.nan, np.nan]),
    "rounding_at_integers": (lambda lib, a, b: a.floor() + a.ceil() + a.round() + a.trunc() + a.sign() * b,
                             [0.0, 1.0, -2.0, 2.5], [1.0, 1.0, 1.0, 1.0]),
    "remainder_at_multiples": (lambda lib, a, b: a % b, [3.0, -4.0, 0.0, 1.0], [1.5, 2.0, 2.0, -0.5]),
    "fmod_at_multiples": (lambda lib, a, b: lib.fmod(a, b), [3.0, -4.0, 0.0, 1.0], [1.5, 2.0, 2.0, -0.5]),
    "atan2_axes": (lambda lib, a, b: lib.atan2(a, b), [0.0, 1.0, -1.0, 0.0], [1.0, 0.0, 0.0, -1.0]),
}


@pytest.mark.parametrize("name", KINKS)
def test_gradients_at_kinks_match_torch(name):
    program, a, b = KINKS[name]

    def run_backward(lib, x, y):
        out = program(lib, x, y)
        out.sum().backward()
        return out, x.grad, y.grad

    mine, theirs, _, _ = both(run_backward, np.array(a), np.array(b), requires_grad=True)
    assert_same(mine, theirs)


@st.composite
def with_zeros(draw):
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4))
    # Exact zeros, or values at least 0.1 away: without zeros the backward divides by the input (in both
    # libraries), and the second derivative of that cancels terms of size 1/x.
    values = st.sampled_from([0.0, 0.0, 1.5, -0.5, 2.0]) | st.floats(0.1, 2) | st.floats(-2, -0.1)
    return draw(hnp.arrays(np.float64, shape, elements=values)), draw(st.integers(-len(shape), len(shape) - 1))


@settings(SETTINGS, max_examples=20)
@given(problem=with_zeros(), double=st.booleans())
def test_cumprod_gradient_with_zeros_matches_torch(problem, double):
    """First and second order, zeros anywhere (PyTorch's formulas are exact there too)."""
    x, dim = problem
    weights = np.linspace(-1.0, 2.0, x.size).reshape(x.shape)

    def program(lib, a):
        loss = (a.cumprod(dim) * lib.tensor(weights)).sum()
        if double:
            (grad,) = lib.autograd.grad(loss, a, create_graph=True)
            loss = (grad * grad).sum()
        loss.backward()
        return loss, a.grad

    mine, theirs, _, _ = both(program, x, requires_grad=True)
    assert_same(mine, theirs)


# -- scans: dtypes ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
@SETTINGS
@given(data=st.data())
def test_scans_match_torch(name, data):
    dtype = data.draw(st.sampled_from(list(DTYPES)), label="dtype")
    x = data.draw(arrays_of(dtype, low=-2, high=2), label="x")
    dim = data.draw(st.integers(-max(x.ndim, 1) - 1, max(x.ndim, 1)), label="dim")
    out_dtype = data.draw(st.sampled_from([None, "float64", "int64"]), label="dtype=")
    kwargs = {} if out_dtype is None else {"dtype": DTYPES[out_dtype]}

    def program(lib, t):
        dt = kwargs.get("dtype", (None, None))[lib is torch]
        return getattr(t, name)(dim, dtype=dt), getattr(lib, name)(t, dim=dim)

    check(program, x)


@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_long_scans_round_once_as_pytorch_cpu(name, dtype):
    """PyTorch's CPU scans accumulate float32 in float64 (float16 in float32): the same bits, not a drift."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((3, 4000)).astype(dtype)
    if name == "cumprod":
        x = (1 + x * 1e-3).astype(dtype)
    for dim in (1, 0):
        expected = getattr(torch, name)(torch.from_numpy(x), dim).numpy()
        np.testing.assert_array_equal(getattr(mg, name)(mg.tensor(x), dim).array, expected)
    t, m = torch.from_numpy(x).requires_grad_(), mg.tensor(x, requires_grad=True)
    getattr(t, name)(1).sum().backward()
    getattr(m, name)(1).sum().backward()
    np.testing.assert_array_equal(m.grad.array, t.grad.numpy())


# -- sorting ------------------------------------------------------------------------------------------------


@settings(SETTINGS, max_examples=20)
@given(data=st.data())
def test_sort_and_argsort_match_torch_stable(data):
    """Ties (stable order, also descending) and NaN (the largest value) as PyTorch's stable sort."""
    dtype = data.draw(st.sampled_from(["bool", "int64", "float32", "float64"]), label="dtype")
    x = data.draw(arrays_of(dtype, low=-2, high=2), label="x")
    dim = data.draw(st.integers(-max(x.ndim, 1), max(x.ndim, 1) - 1), label="dim")
    descending = data.draw(st.booleans(), label="descending")

    def program(lib, t):
        return (tuple(t.sort(dim=dim, descending=descending, stable=True)),
                tuple(lib.sort(t, dim=dim, descending=descending, stable=True)),
                t.argsort(dim=dim, descending=descending, stable=True))

    check(program, x)


@st.composite
def distinct_values(draw, min_dims=0):
    shape = draw(hnp.array_shapes(min_dims=min_dims, max_dims=3, min_side=1, max_side=4))
    return draw(hnp.arrays(np.float64, shape, elements=st.floats(-100, 100), unique=True))


@settings(SETTINGS, max_examples=20)
@given(x=distinct_values(), data=st.data())
def test_topk_and_kthvalue_match_torch(x, data):
    dim = data.draw(st.integers(-max(x.ndim, 1), max(x.ndim, 1) - 1), label="dim")
    size = x.shape[dim] if x.ndim else 1
    k = data.draw(st.integers(-1, size + 1), label="k")
    largest, keepdim = data.draw(st.booleans(), label="largest"), data.draw(st.booleans(), label="keepdim")

    def program(lib, t):
        top = t.topk(k, dim, largest=largest)
        assert top.values is top[0] and top.indices is top[1]
        kth = lib.kthvalue(t, k, dim, keepdim)
        return tuple(top), tuple(kth), tuple(lib.topk(t, k, dim=dim, largest=largest))

    check(program, x)


def test_sorting_errors_match_torch():
    x = np.arange(6.0).reshape(2, 3)
    for program in (lambda lib, t: t.topk(1.5), lambda lib, t: t.topk(2, dim=2), lambda lib, t: t.sort(dim=-3),
                    lambda lib, t: t.kthvalue(0), lambda lib, t: lib.argsort(t, 0, False, True),
                    lambda lib, t: t.sort(0, True, True), lambda lib, t: t.topk(4)):
        check(program, x)


def test_max_and_min_with_dim_return_named_values_and_indices():
    x = np.array([[1.0, 5.0, 2.0], [7.0, 0.0, 3.0]])
    check(lambda lib, t: (t.max(1).values, t.max(1).indices, lib.min(t, dim=0).values, t.min(0).indices), x)


# -- gather, scatter, index_select ---------------------------------------------------------------------------



GATHER_PROGRAMS = {
    "gather": lambda lib, t: (t.gather(1, lib.tensor([[0, 2], [1, 1]])), lib.gather(t, 0, lib.tensor([[1, 0, 1]]))),
    "gather_int32": lambda lib, t: t.gather(1, lib.tensor([[2]], dtype=lib.int32)),
    "gather_longer_index": lambda lib, t: t.gather(1, lib.tensor([[0, 1, 2, 2, 0]])),
    "gather_0d": lambda lib, t: lib.gather(t[0, 0], 0, lib.tensor(0)),
    "gather_negative": lambda lib, t: t.gather(1, lib.tensor([[-1]])),
    "gather_out_of_bounds": lambda lib, t: t.gather(1, lib.tensor([[3]])),
    "gather_float_index": lambda lib, t: t.gather(1, lib.tensor([[1.0]])),
    "gather_index_ndim": lambda lib, t: t.gather(1, lib.tensor([1])),
    "gather_index_too_big": lambda lib, t: t.gather(1, lib.zeros(3, 1, dtype=lib.int64)),
    "gather_dim": lambda lib, t: t.gather(2, lib.tensor([[1]])),
    "scatter_src": lambda lib, t: t.scatter(1, lib.tensor([[2, 0], [1, 1]]), lib.ones(2, 3, dtype=t.dtype)),
    "scatter_value": lambda lib, t: (t.scatter(1, lib.tensor([[2, 0]]), 7.5), lib.scatter(t, 0, lib.tensor([[1]]), 3)),
    "scatter_value_kw": lambda lib, t: t.scatter(0, lib.tensor([[1, 0]]), value=-1.0),
    "scatter_multiply": lambda lib, t: t.scatter(1, lib.tensor([[0, 0, 1]]), lib.full((1, 3), 2.0, dtype=t.dtype),
                                                 reduce="multiply"),
    "scatter_add_reduce": lambda lib, t: t.scatter(1, lib.tensor([[0, 0, 1]]), 2.0, reduce="add"),
    "scatter_bad_reduce": lambda lib, t: t.scatter(1, lib.tensor([[0]]), 2.0, reduce="max"),
    "scatter_dtype": lambda lib, t: t.scatter(1, lib.tensor([[0]]), lib.ones(1, 1, dtype=lib.float32)),
    "scatter_src_too_small": lambda lib, t: t.scatter(1, lib.tensor([[0, 1]]), lib.ones(1, 1, dtype=t.dtype)),
    "scatter_add": lambda lib, t: lib.scatter_add(t, 1, lib.tensor([[0, 0, 0], [2, 1, 2]]),
                                                  lib.arange(6, dtype=t.dtype).reshape(2, 3)),
    "scatter_add_number": lambda lib, t: t.scatter_add(1, lib.tensor([[0]]), 2.0),
    "scatter_add_out_of_bounds": lambda lib, t: t.scatter_add(0, lib.tensor([[2]]), lib.ones(1, 1, dtype=t.dtype)),
    "index_select": lambda lib, t: (t.index_select(1, lib.tensor([2, 0, 2])), lib.index_select(t, 0, lib.tensor(1))),
    "index_select_int32": lambda lib, t: t.index_select(-1, lib.tensor([1], dtype=lib.int32)),
    "index_select_2d": lambda lib, t: t.index_select(1, lib.tensor([[1]])),
    "index_select_float": lambda lib, t: t.index_select(1, lib.tensor([1.0])),
    "index_select_list": lambda lib, t: lib.index_select(t, 1, [1]),
    "index_select_out_of_bounds": lambda lib, t: t.index_select(1, lib.tensor([3])),
    "index_select_negative": lambda lib, t: t.index_select(1, lib.tensor([-1])),
    "index_select_0d": lambda lib, t: lib.index_select(t[1, 1], 0, lib.tensor([0])),
}


@pytest.mark.parametrize("name", GATHER_PROGRAMS)
@pytest.mark.parametrize("dtype", ["int64", "float64"])
def test_gather_scatter_index_select_match_torch(name, dtype):
    check(GATHER_PROGRAMS[name], np.arange(6).reshape(2, 3).astype(dtype))


@settings(SETTINGS, max_examples=15)
@given(data=st.data())
def test_inplace_scatter_is_recorded_like_pytorch(data):
    """``scatter_``/``scatter_add_`` into a non-leaf (and through a view): values, versions and gradients."""
    rows, cols = data.draw(st.integers(1, 3), label="rows"), data.draw(st.integers(1, 3), label="cols")
    index = data.draw(hnp.arrays(np.int64, (rows, data.draw(st.integers(1, 4))), elements=st.integers(0, cols - 1)),
                      label="index")
    base = data.draw(arrays_of("float64", (rows, cols), special=False), label="base")
    src = data.draw(arrays_of("float64", index.shape, special=False), label="src")
    add = data.draw(st.booleans(), label="add")
    through_view = data.draw(st.booleans(), label="through a view")
    if not add:  # one write per position: which of two writes wins is unspecified
        index = np.stack([np.argsort(np.argsort(row))[: min(index.shape[1], cols)] for row in index])
        src = src[:, : index.shape[1]]

    def program(lib, a, s):
        x = a * 1
        target = x[:] if through_view else x
        idx = lib.tensor(index)
        out = target.scatter_add_(1, idx, s * s) if add else target.scatter_(1, idx, s * s)
        assert out is target
        (x * x).sum().backward()
        return x, x._version, a.grad, s.grad

    mine, theirs, _, _ = both(program, base, src, requires_grad=True)
    assert_same(mine, theirs)


def test_scatter_source_larger_than_index_gets_a_padded_gradient():
    # PyTorch's backward returns the index-shaped block and then fails its own shape check; minigrad pads with zeros.
    src = mg.tensor(np.arange(9.0).reshape(3, 3), requires_grad=True)
    index = mg.tensor([[0, 1], [2, 0]])
    for op in (mg.scatter_add, mg.scatter):
        src.grad = None
        (op(mg.zeros(3, 4, dtype=mg.float64), 1, index, src) * mg.arange(12.0).reshape(3, 4)).sum().backward()
        expected = np.zeros((3, 3))
        expected[:2, :2] = np.take_along_axis(np.arange(12.0).reshape(3, 4)[:2], index.numpy(), 1)
        np.testing.assert_array_equal(src.grad.numpy(), expected)
    assert mg.autograd.gradcheck(lambda s: mg.zeros(3, 4, dtype=mg.float64).scatter_add(1, index, s), (src,))


# -- einsum ------------------------------------------------------------------------------------------------

EINSUM_ERRORS = [
    ("i,i->", [(2,)]), ("i,i->", [(2,), (3,)]), ("ij,i->", [(2,), (3,)]), ("i->ii", [(2,)]), ("i->j", [(2,)]),
    ("i1->i", [(2,)]), ("ii->i", [(2, 3)]), ("......->", [(2, 3)]), ("i.j", [(2, 3)]), ("ij->i", [(2, 3), (3,)]),
]


@pytest.mark.parametrize("equation, shapes", EINSUM_ERRORS)
def test_einsum_errors_match_torch(equation, shapes):
    arrays = [np.ones(s) for s in shapes]
    check(lambda lib, *ts: lib.einsum(equation, *ts), *arrays)


@pytest.mark.parametrize("sublists", [
    ([0, 1], [1, 2], [0, 2]), ([0, 1], [1, 2]), ([Ellipsis, 1], [1, 2], [Ellipsis, 2]), ([0, 1], [1, 52]),
    ([0, 1], [1, -1]), ([0, 1], ["a", 1]), ([0, 1], [1, 0], [3]),
])
def test_einsum_sublist_form_matches_torch(sublists):
    def run(lib, a, b):
        return lib.einsum(a, sublists[0], b, *sublists[1:])

    check(run, np.arange(6.0).reshape(2, 3), np.arange(12.0).reshape(3, 4) if sublists[1][-1] != 0 else np.ones((3, 2)))


def test_einsum_dtypes_match_torch():
    check(lambda lib, a, b: lib.einsum("i,i->", a, b), np.ones(2), np.ones(2, dtype=np.float32))
    check(lambda lib, a, b: lib.einsum("i,i->", a, b), np.arange(3), np.arange(3))
    check(lambda lib, a: lib.einsum("ba,Ab", a, a.T), np.arange(6.0).reshape(2, 3))
    with pytest.raises(ValueError, match="operand"):
        mg.einsum("->")


def test_einsum_result_does_not_alias_its_operand():
    x = mg.arange(9.0).reshape(3, 3)
    for equation in ("ij->ji", "ii->i", "ij->ij"):
        y = mg.einsum(equation, x)
        y.mul_(0)
        assert x.sum().item() == 36.0


# -- structure ------------------------------------------------------------------------------------------

STRUCTURE_PROGRAMS = {
    "repeat": lambda lib, t: (t.repeat(2, 1, 3), t.repeat((1, 2)), t.repeat([0, 2])),
    "repeat_too_few": lambda lib, t: t.repeat(2),
    "repeat_negative": lambda lib, t: t.repeat(-1, 1),
    "tile": lambda lib, t: (t.tile(2), t.tile((2, 1, 2)), lib.tile(t, (3,)), t.tile(dims=(1, 2)), t.tile(2, 1)),
    "tile_negative": lambda lib, t: t.tile(-2),
    "tril_triu": lambda lib, t: (t.tril(), lib.triu(t, 1), lib.tril(t, diagonal=-1), t.triu(-5)),
    "tril_1d": lambda lib, t: lib.tril(t[0]),
    "chunk": lambda lib, t: (t.chunk(2, 1), lib.chunk(t, 4, dim=-1), t.chunk(5)),
    "chunk_zero": lambda lib, t: t.chunk(0),
    "chunk_0d": lambda lib, t: t[0, 0].chunk(1),
    "split": lambda lib, t: (t.split(2, 1), lib.split(t, [1, 0, 2], dim=1), t.split(1)),
    "split_bad_sections": lambda lib, t: t.split([1, 1], 1),
    "split_zero": lambda lib, t: t.split(0),
    "split_negative": lambda lib, t: t.split(-1),
    "unbind": lambda lib, t: (t.unbind(), lib.unbind(t, 1), t.unbind(-1)),
    "unbind_0d": lambda lib, t: t[0, 0].unbind(),
    "flip": lambda lib, t: (t.flip(0), t.flip(0, 1), lib.flip(t, (-1,)), t.flip([1, 0]), lib.flip(t, dims=[0])),
    "flip_twice": lambda lib, t: t.flip(0, 0),
    "flip_no_dims": lambda lib, t: t.flip(),
    "roll": lambda lib, t: (t.roll(1), t.roll(-2, 1), lib.roll(t, (1, 5), (0, 1)), t.roll(7)),
    "roll_mismatch": lambda lib, t: t.roll((1, 2), 0),
    "roll_no_dims": lambda lib, t: t.roll((1, 2)),
    "diagonal": lambda lib, t: (t.diagonal(), t.diagonal(1), lib.diagonal(t, -1, 1, 0), t.diagonal(5)),
    "diagonal_same_dims": lambda lib, t: t.diagonal(0, 1, 1),
    "unflatten": lambda lib, t: (t.unflatten(1, (3, 1)), t.unflatten(-1, [1, -1]), lib.unflatten(t, 0, (1, 2))),
    "unflatten_bad": lambda lib, t: t.unflatten(1, (2, -1)),
    "unflatten_empty": lambda lib, t: t.unflatten(1, ()),
    "view_as": lambda lib, t: t.view_as(lib.zeros(3, 2)),
    "flatten": lambda lib, t: (lib.flatten(t), lib.flatten(t, 1)),
}


@pytest.mark.parametrize("name", STRUCTURE_PROGRAMS)
def test_structure_matches_torch(name):
    check(STRUCTURE_PROGRAMS[name], np.arange(6.0).reshape(2, 3))


@pytest.mark.parametrize("make", [lambda t: t.chunk(2, 1)[0], lambda t: t.split([1, 2], 1)[1],
                                  lambda t: t.unbind(1)[2], lambda t: t.diagonal(), lambda t: t.unflatten(1, (1, 3))])
def test_pieces_are_views_like_pytorch(make):
    """Writing into a piece writes into the tensor (one shared version counter), as in PyTorch."""

    def program(lib, t):
        piece = make(t)
        piece.mul_(10)
        return t, t._version, piece._version

    check(program, np.arange(6.0).reshape(2, 3))


def test_flip_and_roll_copy_like_pytorch():
    def program(lib, t):
        flipped, rolled = t.flip(0), t.roll(1)
        flipped.add_(1)
        rolled.add_(1)
        return t, t._version

    check(program, np.arange(6.0).reshape(2, 3))


def test_write_through_a_diagonal_is_recorded():
    def program(lib, a):
        x = a * 1
        x.diagonal().mul_(3)
        (x * x).sum().backward()
        return x, a.grad

    mine, theirs, _, _ = both(program, np.arange(6.0).reshape(2, 3), requires_grad=True)
    assert_same(mine, theirs)


def test_chunk_gradients_reach_their_regions():
    def program(lib, a):
        first, second = a.chunk(2, dim=1)
        (first.sum() * 2 + second.exp().sum()).backward()
        return a.grad

    mine, theirs, _, _ = both(program, np.arange(8.0).reshape(2, 4) / 8, requires_grad=True)
    assert_same(mine, theirs)


@pytest.mark.parametrize("name", ["sin_", "tan_", "square_", "log1p_", "floor_", "round_", "erfinv_", "tril_"])
def test_recorded_unary_inplace_through_a_view_matches_torch(name):
    """In grad mode, on a view of a non-leaf: recorded on the base (CopySlices), saved values kept apart."""

    def program(lib, a):
        x = a * 1
        view = x[1:]
        getattr(view, name)()
        (x * x).sum().backward()
        return x, x._version, a.grad

    values = np.array([[0.25, 0.5, -0.75], [0.1, -0.2, 0.3], [0.6, 0.7, -0.8]])
    mine, theirs, _, _ = both(program, values, requires_grad=True)
    assert_same(mine, theirs)
