# ruff: noqa: N803  (every error case takes the library module as ``L``: torch or minigrad)
"""``bincount``, ``searchsorted``, ``bucketize``, ``isin``, ``tril_indices``, ``triu_indices`` against PyTorch.

Each result is compared with PyTorch's for values, shape and dtype, on fixed
inputs (the edge cases: empty inputs, scalars, mixed dtypes, NaN, offsets
beyond the matrix) and on hypothesis-drawn ones; the bad inputs raise
PyTorch's exception classes.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad as mg
from minigrad.ops import searching
from tests.error_classes import assert_same_class_as_torch

FEW = settings(max_examples=25, deadline=None, derandomize=True)


def assert_like_torch(got, expected) -> None:
    """``got`` (minigrad) has ``expected``'s (PyTorch's) dtype, shape and values; floats to rounding."""
    assert isinstance(got, mg.Tensor)
    assert got.dtype.name == str(expected.dtype).removeprefix("torch."), (got.dtype, expected.dtype)
    assert got.shape == tuple(expected.shape), (got.shape, tuple(expected.shape))
    assert not got.requires_grad
    if expected.dtype.is_floating_point:
        np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-6, atol=1e-6)
    else:
        np.testing.assert_array_equal(got.numpy(), expected.numpy())


def both(array):
    """The same data as a minigrad tensor and a PyTorch tensor."""
    array = np.asarray(array)
    return mg.tensor(array), torch.tensor(array)


def op(L, name: str):
    """``L.<name>``: the function of PyTorch or minigrad."""
    return getattr(L, name)


# -- bincount --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("values", "weights", "minlength"),
    [
        ([0, 1, 1, 3], None, 0),
        ([0, 1, 1, 3], None, 7),
        ([5], None, 2),
        (np.array([2, 0, 2], dtype=np.uint8), None, 0),
        (np.array([2, 0, 2], dtype=np.int32), np.array([0.5, 1.0, 2.0], dtype=np.float32), 0),
        ([0, 1, 1, 3], np.array([1.0, 2.0, 3.0, 4.0], dtype=np.float64), 5),
        ([0, 1, 1, 3], np.array([1, 2, 3, 4], dtype=np.int64), 0),
        ([0, 1, 1, 3], np.array([1.0, 2.0, 3.0, 4.0], dtype=np.float16), 0),
        ([0, 1, 1, 3], np.array([True, False, True, True]), 0),
        (np.array([], dtype=np.int64), None, 0),
        (np.array([], dtype=np.int64), None, 3),
        (np.array([], dtype=np.int64), np.array([], dtype=np.float32), 3),  # PyTorch: int64 zeros all the same
    ],
)
def test_bincount_matches_torch(values, weights, minlength):
    x, tx = both(values)
    w, tw = both(weights) if weights is not None else (None, None)
    assert_like_torch(searching.bincount(x, w, minlength), torch.bincount(tx, tw, minlength))


def test_bincount_takes_keywords_and_a_0d_minlength():
    x, tx = both([1, 4])
    w, tw = both(np.array([2.0, 3.0], dtype=np.float32))
    assert_like_torch(
        searching.bincount(x, weights=w, minlength=mg.tensor(6)), torch.bincount(tx, weights=tw, minlength=6)
    )


@FEW
@given(
    st.lists(st.integers(0, 12), max_size=20),
    st.integers(0, 15),
    st.sampled_from([None, np.float32, np.float64, np.int64]),
)
def test_bincount_drawn(values, minlength, weight_dtype):
    x, tx = both(np.array(values, dtype=np.int64))
    w = tw = None
    if weight_dtype is not None:
        w, tw = both((np.arange(len(values)) * 0.75 - 2).astype(weight_dtype))
    assert_like_torch(searching.bincount(x, w, minlength=minlength), torch.bincount(tx, tw, minlength=minlength))


# -- searchsorted and bucketize ------------------------------------------------------------------------------


SIDES = [dict(), dict(right=True), dict(side="left"), dict(side="right"), dict(side="right", right=True)]


@pytest.mark.parametrize("flags", [*SIDES, dict(out_int32=True), dict(out_int32=True, side="right")])
@pytest.mark.parametrize(
    ("sequence", "values"),
    [
        ([1, 3, 5, 7, 9], [[3, 6, 9], [0, 10, 5]]),
        ([1, 3, 3, 3, 9], [3, 2, 4]),
        ([[1, 3, 5], [2, 4, 6]], [[3, 4], [3, 4]]),
        ([[[1.0, 2.0], [0.0, 0.5]]], [[[1.5, 2.0, 3.0], [0.5, 0.5, -1.0]]]),
        ([1.0, 2.0, float("nan")], [float("nan"), 2.0, 5.0]),
        ([1.0, float("nan"), 2.0], [1.5, float("nan")]),
        (np.zeros(0), [1.0, 2.0]),
        ([1.0], np.zeros(0)),
        (np.zeros((2, 0)), np.zeros((2, 3))),
        (np.zeros((0, 3)), np.zeros((0, 2))),
        ([1, 3, 5], 3),  # a 0-d tensor input
    ],
)
def test_searchsorted_matches_torch(sequence, values, flags):
    s, ts = both(sequence)
    v, tv = both(values)
    assert_like_torch(searching.searchsorted(s, v, **flags), torch.searchsorted(ts, tv, **flags))


@pytest.mark.parametrize("value", [5, 5.5, -2, 100, True])
@pytest.mark.parametrize("flags", SIDES)
def test_searchsorted_of_a_number(value, flags):
    s, ts = both([1, 3, 5, 7, 9])
    assert_like_torch(searching.searchsorted(s, value, **flags), torch.searchsorted(ts, value, **flags))


@pytest.mark.parametrize(
    ("sequence", "values"),
    [
        # compared in torch.result_type: float32, where float64 would tell 1.00000001 from 1.0
        (np.array([1.0, 1.0000001192092896], dtype=np.float32), np.array(1.00000001)),
        (np.array([1.0, 1.0000001192092896], dtype=np.float32), np.array([1.00000001])),
        (np.array([1, 3, 5]), np.array([2.5, 5.5], dtype=np.float32)),
        (np.array([0, 1], dtype=np.uint8), np.array([-255])),
        (np.array([0, 1], dtype=np.uint8), np.array(-255)),  # a 0-d int64 tensor wraps around to uint8
        (np.array([True, False]), np.array([1])),
    ],
)
def test_searchsorted_compares_in_the_promoted_dtype(sequence, values):
    s, ts = both(sequence)
    v, tv = both(values)
    assert_like_torch(searching.searchsorted(s, v), torch.searchsorted(ts, tv))


def test_searchsorted_number_beside_uint8_wraps_around():
    s, ts = both(np.array([0, 1], dtype=np.uint8))
    assert_like_torch(searching.searchsorted(s, -255), torch.searchsorted(ts, -255))


@pytest.mark.parametrize("flags", SIDES)
def test_searchsorted_with_sorter(flags):
    data = np.array([[5, 3, 1, 3], [0, 9, 4, 2]])
    s, ts = both(data)
    order, torder = both(np.argsort(data, axis=-1, kind="stable"))
    v, tv = both([[3, 0, 6], [4, 9, 10]])
    expected = torch.searchsorted(ts, tv, sorter=torder, **flags)
    assert_like_torch(searching.searchsorted(s, v, sorter=order, **flags), expected)
    assert_like_torch(searching.searchsorted(s[0], v[0], sorter=order[0], **flags), expected[0])


@FEW
@given(
    st.integers(0, 3),
    st.lists(st.integers(-5, 5), max_size=9),
    st.lists(st.sampled_from([-6.0, -1.5, 0.0, 1.0, 2.5, 5.0, 7.0, float("nan")]), max_size=6),
    st.booleans(),
    st.booleans(),
)
def test_searchsorted_drawn(rows, row, values, right, use_sorter):
    rng = np.random.default_rng(len(row) * 7 + len(values))
    data = np.sort(np.array([rng.permutation(row) for _ in range(rows)], dtype=np.float64).reshape(rows, len(row)))
    queries = np.tile(np.array(values, dtype=np.float64), (rows, 1))
    flags = dict(right=right)
    if use_sorter:
        data = np.array([rng.permutation(r) for r in data]).reshape(data.shape)
        order, torder = both(np.argsort(data, axis=-1, kind="stable"))
        flags_mg, flags_torch = dict(flags, sorter=order), dict(flags, sorter=torder)
    else:
        flags_mg = flags_torch = flags
    s, ts = both(data)
    v, tv = both(queries)
    assert_like_torch(searching.searchsorted(s, v, **flags_mg), torch.searchsorted(ts, tv, **flags_torch))
    if rows:
        one_mg = {k: (val[0] if k == "sorter" else val) for k, val in flags_mg.items()}
        one_torch = {k: (val[0] if k == "sorter" else val) for k, val in flags_torch.items()}
        assert_like_torch(searching.searchsorted(s[0], v, **one_mg), torch.searchsorted(ts[0], tv, **one_torch))


@pytest.mark.parametrize("flags", [dict(), dict(right=True), dict(out_int32=True)])
@pytest.mark.parametrize("values", [[[3, 6, 9], [3, 6, 9]], [1, 0, 10], 5, 5.5, np.zeros(0, dtype=np.int64)])
def test_bucketize_matches_torch(values, flags):
    b, tb = both([1, 3, 5, 7, 9])
    if isinstance(values, (int, float)):
        v = tv = values
    else:
        v, tv = both(values)
    assert_like_torch(searching.bucketize(v, b, **flags), torch.bucketize(tv, tb, **flags))


# -- isin ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("flags", [dict(), dict(invert=True), dict(assume_unique=True)])
@pytest.mark.parametrize(
    ("elements", "tests"),
    [
        ([[1, 2], [3, 4]], [2, 3]),
        ([1, 1, 2], [1, 1]),
        ([1.0, 2.5, float("nan")], [2.5, float("nan")]),
        ([1.0, 2.5], [2, 3]),
        (np.zeros(0), [1.0]),
        ([1.0], np.zeros(0)),
        (1.0, [1.0]),  # a 0-d tensor
        (np.array([1], dtype=np.uint8), np.array([-255])),
        (np.array([1], dtype=np.uint8), np.array(-255)),  # 0-d int64 beside uint8: wraps around
        (np.array(16777217), np.array([16777216.0], dtype=np.float32)),
        (np.array([1.00000001]), np.array(1.0, dtype=np.float32)),
    ],
)
def test_isin_matches_torch(elements, tests, flags):
    e, te = both(elements)
    t, tt = both(tests)
    assert_like_torch(searching.isin(e, t, **flags), torch.isin(te, tt, **flags))


@pytest.mark.parametrize("invert", [False, True])
@pytest.mark.parametrize("number", [2, 2.0, 2.5, -255, 257])
def test_isin_with_a_number(number, invert):
    e, te = both(np.array([[1, 2], [3, 1]], dtype=np.uint8))
    assert_like_torch(searching.isin(e, number, invert=invert), torch.isin(te, number, invert=invert))
    t, tt = both([2, 3])
    assert_like_torch(searching.isin(number, t, invert=invert), torch.isin(number, tt, invert=invert))


@FEW
@given(
    st.lists(st.integers(-4, 4), max_size=12),
    st.lists(st.integers(-4, 4), max_size=6),
    st.booleans(),
    st.sampled_from([np.int64, np.int32, np.float32, np.float64]),
)
def test_isin_drawn(elements, tests, invert, test_dtype):
    e, te = both(np.array(elements, dtype=np.int64))
    t, tt = both(np.array(tests, dtype=test_dtype) / 2)
    assert_like_torch(searching.isin(e, t, invert=invert), torch.isin(te, tt, invert=invert))


# -- tril_indices and triu_indices ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["tril_indices", "triu_indices"])
@pytest.mark.parametrize(
    ("row", "col", "offset"),
    [(3, 3, 0), (3, 4, 1), (4, 3, -1), (3, 3, 10), (3, 3, -10), (0, 3, 0), (3, 0, 0), (0, 0, 0), (1, 1, 0)],
)
def test_triangle_indices_match_torch(name, row, col, offset):
    assert_like_torch(getattr(searching, name)(row, col, offset), getattr(torch, name)(row, col, offset))


@pytest.mark.parametrize("name", ["tril_indices", "triu_indices"])
def test_triangle_indices_dtype_and_device(name):
    ours = getattr(searching, name)(4, 5, -2, dtype=mg.int32, device="cpu")
    assert_like_torch(ours, getattr(torch, name)(4, 5, -2, dtype=torch.int32, device="cpu"))
    assert_like_torch(getattr(searching, name)(mg.tensor(3), 3, dtype=mg.long), getattr(torch, name)(3, 3))
    with pytest.raises(NotImplementedError, match="dense"):
        getattr(searching, name)(3, 3, layout="sparse_coo")


@FEW
@given(st.integers(0, 7), st.integers(0, 7), st.integers(-9, 9), st.sampled_from(["tril_indices", "triu_indices"]))
def test_triangle_indices_drawn(row, col, offset, name):
    assert_like_torch(getattr(searching, name)(row, col, offset), getattr(torch, name)(row, col, offset))


# -- bad inputs raise PyTorch's classes ------------------------------------------------------------------------

ERROR_CASES = [
    ("bincount of a list", lambda L: op(L, "bincount")([1, 2])),
    ("bincount weights a list", lambda L: op(L, "bincount")(L.tensor([1]), [1.0])),
    ("bincount float minlength", lambda L: op(L, "bincount")(L.tensor([1]), minlength=2.0)),
    ("bincount bool minlength", lambda L: op(L, "bincount")(L.tensor([1]), minlength=True)),
    ("bincount negative minlength", lambda L: op(L, "bincount")(L.tensor([1]), minlength=-1)),
    ("bincount float input", lambda L: op(L, "bincount")(L.tensor([1.0]))),
    ("bincount bool input", lambda L: op(L, "bincount")(L.tensor([True]))),
    ("bincount negative value", lambda L: op(L, "bincount")(L.tensor([1, -1]))),
    ("bincount 2-D input", lambda L: op(L, "bincount")(L.tensor([[1, 2]]))),
    ("bincount 0-d input", lambda L: op(L, "bincount")(L.tensor(1))),
    ("bincount weights too short", lambda L: op(L, "bincount")(L.tensor([0, 1]), L.tensor([1.0]))),
    ("bincount weights 2-D", lambda L: op(L, "bincount")(L.tensor([0, 1]), L.tensor([[1.0, 2.0]]))),
    ("searchsorted of a list", lambda L: op(L, "searchsorted")([1, 2], L.tensor([1]))),
    ("searchsorted input a list", lambda L: op(L, "searchsorted")(L.tensor([1, 2]), [1])),
    ("searchsorted input a str", lambda L: op(L, "searchsorted")(L.tensor([1, 2]), "a")),
    ("searchsorted right an int", lambda L: op(L, "searchsorted")(L.tensor([1, 2]), L.tensor([1]), right=1)),
    ("searchsorted out_int32 an int", lambda L: op(L, "searchsorted")(L.tensor([1]), L.tensor([1]), out_int32=1)),
    ("searchsorted side an int", lambda L: op(L, "searchsorted")(L.tensor([1, 2]), L.tensor([1]), side=3)),
    ("searchsorted sorter a list", lambda L: op(L, "searchsorted")(L.tensor([1, 2]), L.tensor([1]), sorter=[0, 1])),
    ("searchsorted bad side", lambda L: op(L, "searchsorted")(L.tensor([1, 2]), L.tensor([1]), side="middle")),
    (
        "searchsorted side contradicts right",
        lambda L: op(L, "searchsorted")(L.tensor([1, 2]), L.tensor([1]), side="left", right=True),
    ),
    ("searchsorted 0-d sequence", lambda L: op(L, "searchsorted")(L.tensor(1), L.tensor([1]))),
    (
        "searchsorted leading dims differ",
        lambda L: op(L, "searchsorted")(L.tensor([[1, 3], [2, 4]]), L.tensor([[3], [3], [1]])),
    ),
    (
        "searchsorted input of fewer dims",
        lambda L: op(L, "searchsorted")(L.tensor([[1, 3], [2, 4]]), L.tensor([3, 4])),
    ),
    ("searchsorted number for N-D", lambda L: op(L, "searchsorted")(L.tensor([[1, 3], [2, 4]]), 3)),
    ("searchsorted 0-d for N-D", lambda L: op(L, "searchsorted")(L.tensor([[1, 3], [2, 4]]), L.tensor(3))),
    (
        "searchsorted sorter of another size",
        lambda L: op(L, "searchsorted")(L.tensor([5, 3, 1]), L.tensor([3]), sorter=L.tensor([2, 1])),
    ),
    (
        "searchsorted int32 sorter",
        lambda L: op(L, "searchsorted")(L.tensor([5, 3]), L.tensor([3]), sorter=L.tensor([1, 0], dtype=L.int32)),
    ),
    (
        "searchsorted sorter out of range",
        lambda L: op(L, "searchsorted")(L.tensor([5, 3, 1]), L.tensor([3]), sorter=L.tensor([2, 1, 3])),
    ),
    (
        "searchsorted negative sorter",
        lambda L: op(L, "searchsorted")(L.tensor([5, 3, 1]), L.tensor([3]), sorter=L.tensor([2, 1, -1])),
    ),
    ("searchsorted bool", lambda L: op(L, "searchsorted")(L.tensor([False, True]), L.tensor([True]))),
    ("searchsorted complex", lambda L: op(L, "searchsorted")(L.tensor([1.0, 2.0]), 1j)),
    ("bucketize of a list", lambda L: op(L, "bucketize")([1], L.tensor([1, 2]))),
    ("bucketize boundaries a list", lambda L: op(L, "bucketize")(L.tensor([1]), [1, 2])),
    ("bucketize right an int", lambda L: op(L, "bucketize")(L.tensor([1]), L.tensor([1, 2]), right=1)),
    ("bucketize 2-D boundaries", lambda L: op(L, "bucketize")(L.tensor([1]), L.tensor([[1, 2]]))),
    ("bucketize 0-d boundaries", lambda L: op(L, "bucketize")(L.tensor([1]), L.tensor(1))),
    ("bucketize bool", lambda L: op(L, "bucketize")(L.tensor([True]), L.tensor([False, True]))),
    ("isin two numbers", lambda L: op(L, "isin")(2, 3)),
    ("isin of a list", lambda L: op(L, "isin")([1], L.tensor([1]))),
    ("isin test a list", lambda L: op(L, "isin")(L.tensor([1]), [1])),
    ("isin invert an int", lambda L: op(L, "isin")(L.tensor([1]), L.tensor([1]), invert=1)),
    ("isin assume_unique an int", lambda L: op(L, "isin")(L.tensor([1]), L.tensor([1]), assume_unique=1)),
    ("isin bool elements", lambda L: op(L, "isin")(L.tensor([True]), L.tensor([1]))),
    ("isin bool test", lambda L: op(L, "isin")(L.tensor([1]), True)),
    ("isin complex", lambda L: op(L, "isin")(L.tensor([1.0]), L.tensor([1j]))),
]
for _name in ("tril_indices", "triu_indices"):
    ERROR_CASES += [
        (f"{_name} float row", lambda L, n=_name: op(L, n)(3.0, 3)),
        (f"{_name} bool row", lambda L, n=_name: op(L, n)(True, 3)),
        (f"{_name} float offset", lambda L, n=_name: op(L, n)(3, 3, 1.0)),
        (f"{_name} negative row", lambda L, n=_name: op(L, n)(-1, 3)),
        (f"{_name} negative col", lambda L, n=_name: op(L, n)(3, -1)),
        (f"{_name} int16", lambda L, n=_name: op(L, n)(3, 3, dtype=L.int16)),
        (f"{_name} float32", lambda L, n=_name: op(L, n)(3, 3, dtype=L.float32)),
    ]


@pytest.mark.parametrize(("name", "call"), ERROR_CASES, ids=[name for name, _ in ERROR_CASES])
def test_bad_input_raises_torch_class(name, call):
    assert_same_class_as_torch(name, call)
