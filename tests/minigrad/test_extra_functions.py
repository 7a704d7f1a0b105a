# ruff: noqa: N803  (the error cases take the library module as L, as tests/error_classes.py does)
"""``cummax``/``cummin``, ``logcumsumexp``, ``logit``, ``erfc`` and ``diff`` against PyTorch on fixed inputs.

Values, result dtypes, gradients and exception classes, including the corners
the op cases (``tests/minigrad/ops/cases_extra_functions.py``) cannot draw:
ties, NaN, infinities, integer and bool tensors, eps beyond the clamp, n past
the length. Each runs as ``mg.<name>`` beside ``torch.<name>``.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import minigrad as mg
from tests.error_classes import assert_same_class_as_torch

NAN, INF = float("nan"), float("inf")



def _both(values, dtype, requires_grad=False):
    """The same data as a minigrad and a torch tensor (``dtype``: a NumPy dtype name)."""
    array = np.array(values, dtype=dtype)
    return (mg.tensor(array, requires_grad=requires_grad), torch.tensor(array, requires_grad=requires_grad))


def _assert_same(mine, theirs, rtol=1e-12, atol=0.0):
    """Equal values (NaN where NaN) and equal dtypes."""
    expected = theirs.detach().numpy()
    got = mine.detach().numpy()
    assert str(got.dtype) == str(expected.dtype), (got.dtype, expected.dtype)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    if got.dtype.kind in "biu":
        np.testing.assert_array_equal(got, expected)
    else:
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol, equal_nan=True)


# -- cummax / cummin ---------------------------------------------------------------------------------------

RUNNING_INPUTS = [
    ([1.0, 3.0, 3.0, 2.0, 3.0, 0.5, 3.0], "float64"),  # ties: the later index
    ([2.0, NAN, 1.0, NAN, 5.0, -INF, INF], "float64"),  # NaN wins from where it appears, each NaN takes the index
    ([[4.0, 1.0, 4.0], [0.0, 4.0, 4.0], [4.0, -1.0, 2.0]], "float32"),
    ([3, 1, 3, -2, 3, 7], "int64"),
    ([2, 0, 2, 9], "uint8"),
    ([True, False, True, False, True], "bool"),
    ([], "float32"),
]


@pytest.mark.parametrize("name", ["cummax", "cummin"])
@pytest.mark.parametrize("values, dtype", RUNNING_INPUTS)
def test_running_extremum_matches_torch(name, values, dtype):
    m, t = _both(values, dtype)
    for dim in range(-m.ndim, m.ndim) if m.ndim else [0]:
        mine, theirs = getattr(mg, name)(m, dim), getattr(torch, name)(t, dim)
        _assert_same(mine.values, theirs.values)
        _assert_same(mine.indices, theirs.indices)
        assert mine.values is mine[0] and mine.indices is mine[1]


@pytest.mark.parametrize("name", ["cummax", "cummin"])
def test_running_extremum_of_a_0d_tensor(name):
    m, t = _both(4.5, "float32")
    for dim in (0, -1):
        mine, theirs = getattr(mg, name)(m, dim), getattr(torch, name)(t, dim)
        _assert_same(mine.values, theirs.values)
        _assert_same(mine.indices, theirs.indices)


@pytest.mark.parametrize("name", ["cummax", "cummin"])
@pytest.mark.parametrize("values", [[1.0, 3.0, 3.0, 2.0, 3.0, -1.0], [2.0, NAN, 1.0, NAN, 5.0]])
def test_running_extremum_gradient_goes_to_the_chosen_index(name, values):
    m, t = _both(values, "float64", requires_grad=True)
    weights = np.arange(1.0, len(values) + 1.0)
    (getattr(mg, name)(m, 0).values * mg.tensor(weights)).sum().backward()
    (getattr(torch, name)(t, 0).values * torch.tensor(weights)).sum().backward()
    _assert_same(m.grad, t.grad)


# -- logcumsumexp -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "values, dtype",
    [
        ([0.0, 1000.0, -INF, INF, 1.0], "float64"),  # stable past exp's range; inf stays inf
        ([-INF, -INF, 0.0], "float64"),
        ([1.0, NAN, 2.0], "float32"),
        ([[-800.0, 3.0, 0.5], [2.0, -2.0, 700.0]], "float64"),
        ([[0.25, -1.0], [3.0, 0.5]], "float16"),
    ],
)
def test_logcumsumexp_matches_torch(values, dtype):
    m, t = _both(values, dtype)
    rtol = 1e-3 if dtype == "float16" else 1e-6 if dtype == "float32" else 1e-13
    for dim in range(-m.ndim, m.ndim):
        _assert_same(mg.logcumsumexp(m, dim), torch.logcumsumexp(t, dim), rtol=rtol)


def test_logcumsumexp_gradient_matches_torch_far_apart_inputs():
    values = [[-700.0, 5.0, 600.0, 601.0], [0.5, 0.25, -3.0, 2.0]]
    m, t = _both(values, "float64", requires_grad=True)
    weights = np.array([[1.0, -2.0, 0.5, 3.0], [0.0, 1.0, -1.0, 2.0]])
    (mg.logcumsumexp(m, 1) * mg.tensor(weights)).sum().backward()
    (torch.logcumsumexp(t, 1) * torch.tensor(weights)).sum().backward()
    _assert_same(m.grad, t.grad, atol=1e-300)


def test_logcumsumexp_second_derivative_where_the_gradient_is_zero():
    # d/dw of d/dx sum(logcumsumexp(x) * w) is exp(x_i - y_j) (j >= i), also at w = 0
    # (where PyTorch's log-space formula gives NaN).
    x = mg.tensor([0.0, 1.0, -1.0], dtype=mg.float64, requires_grad=True)
    w = mg.tensor([0.0, 2.0, 0.0], dtype=mg.float64, requires_grad=True)
    (gx,) = mg.autograd.grad((mg.logcumsumexp(x, 0) * w).sum(), x, create_graph=True)
    (gw,) = mg.autograd.grad(gx.sum(), w)
    xs = x.detach().numpy()
    ys = np.logaddexp.accumulate(xs)
    expected = [np.exp(xs[: j + 1] - ys[j]).sum() for j in range(3)]
    np.testing.assert_allclose(gw.numpy(), expected, rtol=1e-13)


def test_logcumsumexp_third_derivative_by_gradcheck():
    x = mg.tensor([[0.3, -1.2, 2.0], [1.0, 0.0, -0.5]], dtype=mg.float64, requires_grad=True)
    w = mg.tensor([[1.0, -0.5, 2.0], [0.0, 1.5, -1.0]], dtype=mg.float64, requires_grad=True)

    def second(x, w):
        (gx,) = mg.autograd.grad((mg.logcumsumexp(x, 1) * w).sum(), x, create_graph=True)
        return mg.autograd.grad((gx * gx).sum(), (x, w), create_graph=True)

    assert mg.autograd.gradcheck(second, (x, w))


# -- logit and erfc --------------------------------------------------------------------------------------------

LOGIT_INPUTS = [0.05, 0.1, 0.25, 0.5, 0.9, 0.95, 0.0, 1.0, 2.0, -1.0]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("eps", [None, 0.1, 0.7, -0.1, 0])
def test_logit_values_and_gradient_match_torch(dtype, eps):
    m, t = _both(LOGIT_INPUTS, dtype, requires_grad=True)
    mine, theirs = mg.logit(m, eps), torch.logit(t, eps)
    rtol = 1e-6 if dtype == "float32" else 1e-13
    _assert_same(mine, theirs, rtol=rtol)
    mine.sum().backward()
    theirs.sum().backward()
    _assert_same(m.grad, t.grad, rtol=rtol)  # 0 outside the clamp, its bounds inside; NaN outside [0, 1] without eps


@pytest.mark.parametrize("values, dtype", [([0, 1, 2], "int64"), ([True, False], "bool"), ([0, 3], "uint8")])
@pytest.mark.parametrize("eps", [None, 0.25])
def test_logit_of_integers_gives_the_default_float(values, dtype, eps):
    m, t = _both(values, dtype)
    _assert_same(mg.logit(m, eps), torch.logit(t, eps), rtol=1e-6)


def test_logit_eps_as_a_one_element_tensor():
    m, t = _both(LOGIT_INPUTS, "float64")
    _assert_same(mg.logit(m, mg.tensor(0.2)), torch.logit(t, torch.tensor(0.2)))


ERFC_INPUTS = [
    -30.0,
    -6.0,
    -1.0,
    -0.46875,
    -0.3,
    0.0,
    0.2,
    0.46875,
    0.47,
    1.0,
    3.9,
    4.0,
    4.1,
    10.0,
    26.0,
    26.5,
    27.0,
    30.0,
    INF,
    -INF,
    NAN,
]


@pytest.mark.parametrize("dtype, rtol, atol", [("float64", 1e-14, 0.0), ("float32", 2e-6, 1e-44)])
def test_erfc_matches_torch_into_the_tail(dtype, rtol, atol):
    m, t = _both(ERFC_INPUTS, dtype)
    _assert_same(mg.erfc(m), torch.erfc(t), rtol=rtol, atol=atol)


@pytest.mark.parametrize("values, dtype", [([0, 1, 2], "int64"), ([True, False], "bool")])
def test_erfc_of_integers_gives_the_default_float(values, dtype):
    m, t = _both(values, dtype)
    _assert_same(mg.erfc(m), torch.erfc(t), rtol=1e-6)


def test_erfc_gradient_matches_torch():
    m, t = _both([-2.0, -0.3, 0.0, 0.7, 5.0], "float64", requires_grad=True)
    mg.erfc(m).sum().backward()
    torch.erfc(t).sum().backward()
    _assert_same(m.grad, t.grad, rtol=1e-14)


# -- diff --------------------------------------------------------------------------------------------------------

DIFF_MATRIX = [[1.0, 4.0, 9.0, 16.0, 25.0], [2.0, 3.0, 5.0, 7.0, 11.0]]


@pytest.mark.parametrize("n", [0, 1, 2, 4, 5, 7])
@pytest.mark.parametrize("dim", [-1, 0, 1])
def test_diff_orders_and_dims_match_torch(n, dim):
    m, t = _both(DIFF_MATRIX, "float32")
    _assert_same(mg.diff(m, n, dim), torch.diff(t, n, dim))


@pytest.mark.parametrize(
    "values, dtype",
    [
        ([1, 5, 2, 2], "int64"),
        ([1, 5, 2, 2], "uint8"),  # wraps around, as in PyTorch
        ([1, 5, -2, 2], "int8"),
        ([True, False, False, True, True], "bool"),  # exclusive or
        ([], "float64"),
    ],
)
@pytest.mark.parametrize("n", [1, 2])
def test_diff_keeps_integer_and_bool_dtypes(values, dtype, n):
    m, t = _both(values, dtype)
    _assert_same(mg.diff(m, n), torch.diff(t, n))


def test_diff_of_an_empty_dimension():
    m, t = _both(np.ones((3, 0)), "float32")
    _assert_same(mg.diff(m, dim=0), torch.diff(t, dim=0))


@pytest.mark.parametrize("edge_dtype", ["float32", "float64", "int64"])
def test_diff_prepend_append_promote_like_torch(edge_dtype):
    m, t = _both(DIFF_MATRIX, "float32")
    mp, tp = _both([[0.0], [1.0]], edge_dtype)
    ma, ta = _both([[5.0, -1.0], [2.0, 2.0]], edge_dtype)
    for n in (1, 3):
        _assert_same(mg.diff(m, n, -1, mp, ma), torch.diff(t, n, -1, tp, ta))
        _assert_same(mg.diff(m, n, prepend=mp), torch.diff(t, n, prepend=tp))
    mi, ti = _both([[1, 2, 4], [0, 0, 3]], "int64")
    _assert_same(mg.diff(mi, append=mp), torch.diff(ti, append=tp))


def test_diff_n0_is_a_new_tensor():
    m = mg.tensor([1.0, 2.0])
    out = mg.diff(m, 0)
    assert out is not m
    out[0] = 5.0
    assert m.numpy()[0] == 1.0


def test_diff_gradient_reaches_input_prepend_and_append():
    m, t = _both(DIFF_MATRIX, "float64", requires_grad=True)
    mp, tp = _both([[0.5], [1.0]], "float64", requires_grad=True)
    ma, ta = _both([[5.0, -1.0], [2.0, 2.0]], "float64", requires_grad=True)
    weights = np.arange(12.0).reshape(2, 6) ** 2
    (mg.diff(m, 2, 1, mp, ma) * mg.tensor(weights)).sum().backward()
    (torch.diff(t, 2, 1, tp, ta) * torch.tensor(weights)).sum().backward()
    for mine, theirs in ((m, t), (mp, tp), (ma, ta)):
        _assert_same(mine.grad, theirs.grad)


# -- exception classes --------------------------------------------------------------------------------------


ERROR_CASES = [
    ("cummax of a list", lambda L: L.cummax([1.0, 2.0], 0)),
    ("cummax float dim", lambda L: L.cummax(L.ones(3), 1.0)),
    ("cummax bool dim", lambda L: L.cummax(L.ones(3), True)),
    ("cummax dim out of range", lambda L: L.cummax(L.ones(2, 3), 2)),
    ("cummin dim out of range", lambda L: L.cummin(L.ones(2, 3), -3)),
    ("cummax 0-d dim 1", lambda L: L.cummax(L.tensor(3.0), 1)),
    ("logcumsumexp of integers", lambda L: L.logcumsumexp(L.tensor([1, 2, 3]), 0)),
    ("logcumsumexp of bools", lambda L: L.logcumsumexp(L.tensor([True, False]), 0)),
    ("logcumsumexp dim out of range", lambda L: L.logcumsumexp(L.ones(2), 1)),
    ("logcumsumexp float dim", lambda L: L.logcumsumexp(L.ones(2), 0.0)),
    ("logcumsumexp without dim", lambda L: L.logcumsumexp(L.ones(2))),
    ("logit of a float", lambda L: L.logit(0.5)),
    ("logit eps a string", lambda L: L.logit(L.ones(2), eps="a")),
    ("erfc of a float", lambda L: L.erfc(1.0)),
    ("diff of a list", lambda L: L.diff([1.0, 2.0])),
    ("diff of a 0-d tensor", lambda L: L.diff(L.tensor(3.0))),
    ("diff negative n", lambda L: L.diff(L.ones(3), -1)),
    ("diff float n", lambda L: L.diff(L.ones(3), 1.0)),
    ("diff bool n", lambda L: L.diff(L.ones(3), True)),
    ("diff dim out of range", lambda L: L.diff(L.ones(2, 3), dim=2)),
    ("diff bool dim", lambda L: L.diff(L.ones(3), dim=True)),
    ("diff prepend a float", lambda L: L.diff(L.ones(3), prepend=1.0)),
    ("diff prepend 0-d", lambda L: L.diff(L.ones(3), prepend=L.tensor(0.0))),
    ("diff prepend more dims", lambda L: L.diff(L.ones(2, 3), prepend=L.zeros(2, 1, 1))),
    ("diff prepend fewer dims", lambda L: L.diff(L.ones(2, 3), prepend=L.zeros(1))),
    ("diff append other shape", lambda L: L.diff(L.ones(2, 3), append=L.zeros(3, 1))),
]


@pytest.mark.parametrize("name, call", ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
def test_error_class_matches_torch(name, call):
    assert_same_class_as_torch(name, call)
