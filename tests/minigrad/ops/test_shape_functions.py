# ruff: noqa: N803  (the error cases take the library module as L, as tests/error_classes.py does)
"""Splitting, ``take_along_dim``, diagonal forms and assembled tensors against PyTorch.

Covers ``minigrad/ops/splitting.py`` (``tensor_split``, ``hsplit``, ``vsplit``,
``dsplit``), ``take_along.py`` (``take_along_dim``), ``diagonal_forms.py``
(``diag_embed``, ``diagflat``, ``block_diag``) and ``assembly.py``
(``atleast_1d/2d/3d``, ``row_stack``, ``cartesian_prod``, ``combinations``,
``vander``): values, shapes, dtypes, views, gradients in float64 and the
exception classes of bad calls. The functions are reached through ``fn(L,
name)`` (PyTorch's function for ``torch``, ours otherwise), and the Tensor
methods through ``method(L, t, name, ...)``, which uses ``Tensor.<name>``
once it is installed and the method's one-line body until then.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad as mg
from minigrad.ops import assembly, diagonal_forms, splitting, take_along
from tests.error_classes import assert_same_class_as_torch

MODULES = (splitting, take_along, diagonal_forms, assembly)
MINE = {name: getattr(module, name) for module in MODULES for name in module.__all__}


def fn(L, name):
    """PyTorch's ``name`` when ``L`` is torch, else minigrad's (from its module until it is wired)."""
    return getattr(torch, name) if L is torch else MINE[name]


def _method_body(self, name, *args, **kwargs):
    """The Tensor methods' bodies as the wiring adds them (hsplit & co. take indices as varargs too)."""
    if name in ("hsplit", "vsplit", "dsplit"):
        return MINE[name](self, splitting.method_arguments(args))
    return MINE[name](self, *args, **kwargs)


def method(L, t, name, *args, **kwargs):
    if L is torch or hasattr(mg.Tensor, name):
        return getattr(t, name)(*args, **kwargs)
    return _method_body(t, name, *args, **kwargs)


def _both(array, requires_grad=False):
    array = np.asarray(array)
    return mg.tensor(array, requires_grad=requires_grad), torch.tensor(array, requires_grad=requires_grad)


def _same(mine, theirs):
    """Equal values, shape and dtype (a tuple of tensors compared piece by piece)."""
    if isinstance(theirs, (tuple, list)):
        assert isinstance(mine, tuple), type(mine)
        assert len(mine) == len(theirs), (len(mine), len(theirs))
        for m, t in zip(mine, theirs):
            _same(m, t)
        return
    expected = theirs.detach().numpy()
    got = mine.detach().numpy()
    assert str(got.dtype) == str(expected.dtype), (got.dtype, expected.dtype)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    np.testing.assert_array_equal(got, expected)


def _outputs(result):
    return list(result) if isinstance(result, (tuple, list)) else [result]


def _grads_match(call, *arrays):
    """``call(L, *inputs)`` in both libraries: the gradients of ``sum(out_k * w_k)`` w.r.t. float64 inputs agree."""
    rng = np.random.default_rng(0)
    mine_in = [mg.tensor(a, requires_grad=True) for a in arrays]
    torch_in = [torch.tensor(a, requires_grad=True) for a in arrays]
    mine_out, torch_out = _outputs(call(mg, *mine_in)), _outputs(call(torch, *torch_in))
    weights = [rng.standard_normal(tuple(t.shape)) for t in torch_out]
    sum(((m * mg.tensor(w)).sum() for m, w in zip(mine_out, weights)), mg.tensor(0.0)).backward()
    sum(((t * torch.tensor(w)).sum() for t, w in zip(torch_out, weights)), torch.tensor(0.0)).backward()
    for m, t in zip(mine_in, torch_in):
        expected = np.zeros(t.shape) if t.grad is None else t.grad.numpy()
        got = np.zeros(m.shape) if m.grad is None else m.grad.numpy()
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


# -- tensor_split, hsplit, vsplit, dsplit --------------------------------------------------------------------------


@settings(max_examples=40, deadline=None, derandomize=True)
@given(
    shape=st.lists(st.integers(0, 5), min_size=1, max_size=3),
    data=st.data(),
)
def test_tensor_split_matches_torch(shape, data):
    m, t = _both(np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape))
    dim = data.draw(st.integers(-len(shape), len(shape) - 1), label="dim")
    sections = data.draw(st.integers(1, 8), label="sections")
    indices = data.draw(st.lists(st.integers(-8, 8), max_size=4), label="indices")
    _same(fn(mg, "tensor_split")(m, sections, dim), torch.tensor_split(t, sections, dim))
    _same(fn(mg, "tensor_split")(m, indices, dim), torch.tensor_split(t, indices, dim))
    _same(fn(mg, "tensor_split")(m, tuple(indices), dim=dim), torch.tensor_split(t, tuple(indices), dim=dim))
    as_tensor = np.array(indices, dtype=np.int64)
    _same(fn(mg, "tensor_split")(m, mg.tensor(as_tensor), dim),
          torch.tensor_split(t, torch.tensor(as_tensor), dim))
    _same(fn(mg, "tensor_split")(m, mg.tensor(sections), dim), torch.tensor_split(t, torch.tensor(sections), dim))
    _same(method(mg, m, "tensor_split", indices, dim), method(torch, t, "tensor_split", indices, dim))


def test_tensor_split_accepts_numpy_ints_and_one_element_tensors_as_indices():
    m, t = _both(np.arange(10.0))
    _same(fn(mg, "tensor_split")(m, [np.int64(3), mg.tensor(7), mg.tensor([8])]),
          torch.tensor_split(t, [np.int64(3), torch.tensor(7), torch.tensor([8])]))
    _same(fn(mg, "tensor_split")(m, np.int64(4)), torch.tensor_split(t, np.int64(4)))
    _same(fn(mg, "tensor_split")(m, [2**62, -(2**62)]), torch.tensor_split(t, [2**62, -(2**62)]))


def test_tensor_split_pieces_are_views_with_their_own_gradients():
    m = mg.zeros(7)
    first, second = fn(mg, "tensor_split")(m, [3])
    second[0] = 5.0
    assert m.numpy().tolist() == [0, 0, 0, 5, 0, 0, 0]
    _grads_match(lambda L, a: fn(L, "tensor_split")(a, 3, 1), np.arange(24.0).reshape(2, 6, 2))
    _grads_match(lambda L, a: fn(L, "tensor_split")(a, [4, 1, -1], 0), np.arange(6.0))


@pytest.mark.parametrize("name", ["hsplit", "vsplit", "dsplit"])
@pytest.mark.parametrize("shape", [(6,), (4, 6), (4, 6, 8), (2, 4, 6, 2)])
@pytest.mark.parametrize("arg", [2, 1, [1, 3], (2,), [], [-1, 9]])
def test_numpy_style_splits_match_torch(name, shape, arg):
    m, t = _both(np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape))
    try:
        expected = getattr(torch, name)(t, arg)
    except RuntimeError:
        with pytest.raises(RuntimeError):
            fn(mg, name)(m, arg)
        return
    _same(fn(mg, name)(m, arg), expected)
    _same(method(mg, m, name, arg), method(torch, t, name, arg))
    _grads_match(lambda L, a: fn(L, name)(a, arg), np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape))


@pytest.mark.parametrize("name", ["hsplit", "vsplit", "dsplit"])
def test_numpy_style_splits_take_a_0d_count_and_varargs_methods(name):
    m, t = _both(np.zeros((4, 6, 8), dtype=np.float32))
    _same(fn(mg, name)(m, mg.tensor(2)), getattr(torch, name)(t, torch.tensor(2)))
    _same(fn(mg, name)(m, mg.tensor(2, dtype=mg.int32)), getattr(torch, name)(t, torch.tensor(2, dtype=torch.int32)))
    _same(method(mg, m, name, 1, 2), method(torch, t, name, 1, 2))
    _same(method(mg, m, name, mg.tensor(1), mg.tensor(3)), method(torch, t, name, torch.tensor(1), torch.tensor(3)))
    _same(method(mg, m, name, mg.tensor([3])), method(torch, t, name, torch.tensor([3])))  # one index, not a count
    _same(method(mg, m, name, [1, 3]), method(torch, t, name, [1, 3]))
    for bad in (torch.tensor([1, 2]), torch.tensor([2.0]), torch.tensor(2.0)):
        with pytest.raises(TypeError):
            method(torch, t, name, bad)
        with pytest.raises(TypeError):
            method(mg, m, name, mg.tensor(bad.numpy()))


# -- take_along_dim ------------------------------------------------------------------------------------------------


@settings(max_examples=40, deadline=None, derandomize=True)
@given(data=st.data())
def test_take_along_dim_matches_torch_with_broadcasting(data):
    ndim = data.draw(st.integers(1, 3), label="ndim")
    dim = data.draw(st.integers(-ndim, ndim - 1), label="dim")
    axis = dim % ndim
    common = data.draw(st.lists(st.integers(1, 4), min_size=ndim, max_size=ndim), label="common")
    in_shape = [n if data.draw(st.booleans()) else 1 for n in common]
    index_shape = [n if data.draw(st.booleans()) else 1 for n in common]
    in_shape[axis] = data.draw(st.integers(1, 4), label="size")
    index_shape[axis] = data.draw(st.integers(0, 4), label="taken")
    values = np.arange(int(np.prod(in_shape)), dtype=np.float64).reshape(in_shape)
    index = data.draw(st.lists(st.integers(-9, 9), min_size=int(np.prod(index_shape)),
                               max_size=int(np.prod(index_shape))), label="index")
    index = np.array(index, dtype=np.int64).reshape(index_shape)
    (m, t), (mi, ti) = _both(values), _both(index)
    _same(fn(mg, "take_along_dim")(m, mi, dim), torch.take_along_dim(t, ti, dim))
    _same(method(mg, m, "take_along_dim", mi, dim=dim), method(torch, t, "take_along_dim", ti, dim=dim))
    _grads_match(lambda L, a: fn(L, "take_along_dim")(a, _both(index)[L is torch], dim), values)


def test_take_along_dim_flattened_and_other_dtypes():
    a = np.arange(12).reshape(3, 4)
    index = np.array([[0, 5], [11, 1]])
    for values in (a.astype(np.float32), a, a > 4, a.astype(np.int32)):
        (m, t), (mi, ti) = _both(values), _both(index)
        _same(fn(mg, "take_along_dim")(m, mi), torch.take_along_dim(t, ti))
        (mr, tr) = _both(np.array([[0], [3], [-1]]))
        _same(fn(mg, "take_along_dim")(m, mr, 1), torch.take_along_dim(t, tr, 1))
    (m, t), (mi, ti) = _both(np.float32(5.0)), _both(np.int64(0))
    _same(fn(mg, "take_along_dim")(m, mi), torch.take_along_dim(t, ti))
    (m, t), (mi, ti) = _both(np.zeros((3, 0))), _both(np.zeros((3, 0), dtype=np.int64))
    _same(fn(mg, "take_along_dim")(m, mi, 1), torch.take_along_dim(t, ti, 1))
    _grads_match(lambda L, a: fn(L, "take_along_dim")(a * 2, _both(index)[L is torch]), a.astype(np.float64))
    # PyTorch refuses to flatten a transposed input here (it views instead of reshaping); minigrad reads it.
    (m, t), (mi, ti) = _both(a), _both(index)
    _same(fn(mg, "take_along_dim")(m.t(), mi), torch.take_along_dim(t.t().contiguous(), ti))


# -- diag_embed, diagflat, block_diag ------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(3,), (2, 3), (2, 1, 2), (2, 0)])
@pytest.mark.parametrize("offset", [0, 1, -2])
def test_diag_embed_matches_torch(shape, offset):
    values = np.arange(1.0, 1.0 + int(np.prod(shape))).reshape(shape)
    ndim = len(shape) + 1
    for dim1 in range(-ndim, ndim):
        for dim2 in range(-ndim, ndim):
            if dim1 % ndim == dim2 % ndim:
                continue
            m, t = _both(values)
            _same(fn(mg, "diag_embed")(m, offset, dim1, dim2), torch.diag_embed(t, offset, dim1, dim2))
    _same(method(mg, m, "diag_embed", offset=offset), method(torch, t, "diag_embed", offset=offset))
    _grads_match(lambda L, a: fn(L, "diag_embed")(a, offset, 0, -1), values)


def test_diag_embed_keeps_integer_and_bool_dtypes():
    for values in (np.array([1, 2, 3]), np.array([True, False]), np.array([1.5, 2.5], dtype=np.float16)):
        m, t = _both(values)
        _same(fn(mg, "diag_embed")(m, 1), torch.diag_embed(t, 1))


@pytest.mark.parametrize("values", [np.float32(5.0), np.arange(3.0), np.arange(6).reshape(2, 3), np.zeros(0)])
@pytest.mark.parametrize("offset", [0, 2, -1])
def test_diagflat_matches_torch(values, offset):
    m, t = _both(values)
    _same(fn(mg, "diagflat")(m, offset), torch.diagflat(t, offset))
    _same(method(mg, m, "diagflat", offset=offset), method(torch, t, "diagflat", offset=offset))
    _grads_match(lambda L, a: fn(L, "diagflat")(a, offset), np.asarray(values, dtype=np.float64))


BLOCKS = [
    [np.ones((2, 2)), np.array([[5.0, 6.0, 7.0]]), np.float64(9.0), np.array([1.0, 2.0])],
    [np.zeros((0, 2)), np.ones((1, 1))],
    [np.zeros(0), np.ones((2, 1))],
    [np.arange(6.0).reshape(3, 2)],
]


@pytest.mark.parametrize("blocks", BLOCKS)
def test_block_diag_matches_torch(blocks):
    pairs = [_both(b) for b in blocks]
    _same(fn(mg, "block_diag")(*[m for m, _ in pairs]), torch.block_diag(*[t for _, t in pairs]))
    inputs = tuple(mg.tensor(b, requires_grad=True) for b in blocks)
    assert mg.autograd.gradcheck(lambda *xs: fn(mg, "block_diag")(*xs), inputs)
    if not any(np.ndim(b) == 1 and np.size(b) == 0 for b in blocks):
        # PyTorch's backward misplaces the gradients after an empty 1-D block (it counts it as no row,
        # its forward as one): there gradcheck above is the reference.
        _grads_match(lambda L, *xs: fn(L, "block_diag")(*xs), *blocks)


@pytest.mark.parametrize("dtypes", [("float32", "float64"), ("int32", "int64"), ("float16", "int64"),
                                    ("bool", "int32"), ("int64", "float32"), ("uint8", "int8")])
def test_block_diag_promotes_as_torch(dtypes):
    for shapes in [((2, 2), ()), ((2, 2), (1, 1)), ((), ())]:
        pairs = [_both(np.ones(s, dtype=d)) for s, d in zip(shapes, dtypes)]
        _same(fn(mg, "block_diag")(*[m for m, _ in pairs]), torch.block_diag(*[t for _, t in pairs]))


def test_block_diag_gradients_come_back_in_each_block_dtype():
    a = mg.ones(2, 2, dtype=mg.float32, requires_grad=True)
    b = mg.ones(1, 1, dtype=mg.float64, requires_grad=True)
    fn(mg, "block_diag")(a, b).sum().backward()
    assert a.grad.dtype == np.float32 and b.grad.dtype == np.float64
    _same(fn(mg, "block_diag")(), torch.block_diag())


# -- atleast_Nd, row_stack -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["atleast_1d", "atleast_2d", "atleast_3d"])
def test_atleast_matches_torch_and_its_return_conventions(name):
    shapes = [(), (3,), (2, 3), (2, 3, 4), (0,), (1, 2, 3, 4)]
    pairs = [_both(np.arange(int(np.prod(s)), dtype=np.float32).reshape(s)) for s in shapes]
    for m, t in pairs:
        mine, theirs = fn(mg, name)(m), getattr(torch, name)(t)
        _same(mine, theirs)
        assert (mine is m) == (theirs is t)
    ms, ts = [m for m, _ in pairs], [t for _, t in pairs]
    _same(fn(mg, name)(*ms), getattr(torch, name)(*ts))
    _same(fn(mg, name)(ms), getattr(torch, name)(ts))
    _same(fn(mg, name)(tuple(ms[:1])), getattr(torch, name)(tuple(ts[:1])))
    assert fn(mg, name)() == () == getattr(torch, name)()
    assert fn(mg, name)([]) == () == getattr(torch, name)([])
    m = mg.zeros(3)
    fn(mg, name)(m)[..., 0] = 1.0  # a view
    assert m.numpy()[0] == 1.0
    _grads_match(lambda L, a, b: fn(L, name)(a, b), np.float64(2.0), np.arange(3.0))


def test_row_stack_is_vstack():
    parts = [np.arange(3.0), np.ones((2, 3)), np.zeros((1, 3))]
    pairs = [_both(p.astype(np.float32)) for p in parts]
    _same(fn(mg, "row_stack")([m for m, _ in pairs]), torch.row_stack([t for _, t in pairs]))
    mixed = [_both(np.arange(3)), _both(np.ones(3, dtype=np.float32))]
    _same(fn(mg, "row_stack")(tuple(m for m, _ in mixed)), torch.row_stack(tuple(t for _, t in mixed)))
    _grads_match(lambda L, a, b: fn(L, "row_stack")([a, b]), np.arange(3.0), np.ones((2, 3)))


# -- cartesian_prod, combinations, vander --------------------------------------------------------------------------


@pytest.mark.parametrize("lengths", [(3,), (3, 2), (2, 0), (2, 3, 2), (1, 1, 1, 1)])
def test_cartesian_prod_matches_torch(lengths):
    arrays = [np.arange(float(n)) + 10 * k for k, n in enumerate(lengths)]
    pairs = [_both(a) for a in arrays]
    mine = fn(mg, "cartesian_prod")(*[m for m, _ in pairs])
    _same(mine, torch.cartesian_prod(*[t for _, t in pairs]))
    if len(lengths) == 1:
        assert mine is pairs[0][0]
    else:
        _grads_match(lambda L, *xs: fn(L, "cartesian_prod")(*xs), *arrays)
    ints = [_both(np.arange(n)) for n in lengths]
    _same(fn(mg, "cartesian_prod")(*[m for m, _ in ints]), torch.cartesian_prod(*[t for _, t in ints]))


@pytest.mark.parametrize("n", [0, 1, 2, 4, 5])
@pytest.mark.parametrize("r", [0, 1, 2, 3, 6])
@pytest.mark.parametrize("with_replacement", [False, True])
def test_combinations_match_torch(n, r, with_replacement):
    values = np.arange(1.0, n + 1.0) * 1.5
    m, t = _both(values)
    _same(fn(mg, "combinations")(m, r, with_replacement), torch.combinations(t, r, with_replacement))
    _same(fn(mg, "combinations")(m, r=r, with_replacement=with_replacement),
          torch.combinations(t, r=r, with_replacement=with_replacement))
    if n and r:
        _grads_match(lambda L, a: fn(L, "combinations")(a, r, with_replacement), values)


def test_combinations_of_integers_bools_and_the_default_r():
    for values in (np.array([3, 1, 2]), np.array([True, False, True]), np.arange(4, dtype=np.float16)):
        m, t = _both(values)
        _same(fn(mg, "combinations")(m), torch.combinations(t))
        _same(fn(mg, "combinations")(m, with_replacement=True), torch.combinations(t, with_replacement=True))


def test_combinations_beyond_the_length_are_empty_without_building_n_to_the_r():
    # PyTorch builds all n**r tuples first and fails here ("numel: integer multiplication overflow").
    result = fn(mg, "combinations")(mg.arange(4.0), 1000)
    assert result.shape == (0, 1000)
    with pytest.raises(RuntimeError, match="too many"):
        fn(mg, "combinations")(mg.arange(4.0), 1000, True)


@pytest.mark.parametrize("N", [None, 0, 1, 2, 3, 6])
@pytest.mark.parametrize("increasing", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "int8", "uint8", "bool", "float16"])
def test_vander_matches_torch(N, increasing, dtype):
    values = np.array([1.1, 0.3, -2.0, 0.0, 7.7]) if dtype.startswith("float") else np.array([1, 0, 3, 2, 1])
    m, t = _both(values.astype(dtype))
    _same(fn(mg, "vander")(m, N, increasing), torch.vander(t, N, increasing))
    _same(fn(mg, "vander")(m, N=N, increasing=increasing), torch.vander(x=t, N=N, increasing=increasing))


def test_vander_wraps_int64_and_takes_a_0d_count():
    m, t = _both(np.array([3]))
    _same(fn(mg, "vander")(m, 45), torch.vander(t, 45))
    m, t = _both(np.array([1.0, 2.0, 3.0], dtype=np.float32))
    _same(fn(mg, "vander")(m, mg.tensor(2)), torch.vander(t, torch.tensor(2)))
    _same(fn(mg, "vander")(mg.zeros(0), 2), torch.vander(torch.zeros(0), 2))
    _same(fn(mg, "vander")(mg.tensor([1j, 2.0])), torch.vander(torch.tensor([1j, 2.0])))


@pytest.mark.parametrize("N", [2, 3, 5])
@pytest.mark.parametrize("increasing", [False, True])
def test_vander_gradient(N, increasing):
    # PyTorch's own vander fails in backward (it writes into a saved tensor), so the reference is its
    # definition written out in PyTorch: [1, x, x*x, ...] by a running product.
    values = np.array([0.0, 2.0, -3.0, 0.5])
    x = torch.tensor(values, requires_grad=True)
    reference = torch.cat([torch.ones(4, 1, dtype=x.dtype), torch.cumprod(x[:, None].expand(4, N - 1), 1)], 1)
    reference = reference if increasing else reference.flip(1)
    weights = np.random.default_rng(1).standard_normal((4, N))
    (reference * torch.tensor(weights)).sum().backward()
    m = mg.tensor(values, requires_grad=True)
    mine = fn(mg, "vander")(m, N, increasing)
    np.testing.assert_allclose(mine.detach().numpy(), reference.detach().numpy(), rtol=0, atol=0)
    (mine * mg.tensor(weights)).sum().backward()
    np.testing.assert_allclose(m.grad.numpy(), x.grad.numpy(), rtol=1e-12)
    assert mg.autograd.gradcheck(lambda a: fn(mg, "vander")(a, N, increasing), (mg.tensor(values, requires_grad=True),))


def test_vander_of_one_column_holds_no_gradient_as_in_torch():
    m, t = _both(np.arange(3.0), requires_grad=True)
    for N in (0, 1):
        assert fn(mg, "vander")(m, N).requires_grad == torch.vander(t, N).requires_grad


# -- errors: the exception classes of PyTorch ----------------------------------------------------------------------

ERRORS = {
    "tensor_split: 0-d input": lambda L: fn(L, "tensor_split")(L.tensor(1.0), 2),
    "tensor_split: 0 sections": lambda L: fn(L, "tensor_split")(L.ones(4), 0),
    "tensor_split: negative sections": lambda L: fn(L, "tensor_split")(L.ones(4), -2),
    "tensor_split: dim out of range": lambda L: fn(L, "tensor_split")(L.ones(4), 2, 1),
    "tensor_split: dim a float": lambda L: fn(L, "tensor_split")(L.ones(4), 2, 0.0),
    "tensor_split: dim a bool": lambda L: fn(L, "tensor_split")(L.ones(4, 4), 2, True),
    "tensor_split: dim None": lambda L: fn(L, "tensor_split")(L.ones(4), 2, None),
    "tensor_split: sections a float": lambda L: fn(L, "tensor_split")(L.ones(4), 2.0),
    "tensor_split: sections a bool": lambda L: fn(L, "tensor_split")(L.ones(4), True),
    "tensor_split: sections None": lambda L: fn(L, "tensor_split")(L.ones(4), None),
    "tensor_split: sections a string": lambda L: fn(L, "tensor_split")(L.ones(4), "a"),
    "tensor_split: sections too big for int64": lambda L: fn(L, "tensor_split")(L.ones(4), 2**63),
    "tensor_split: a float index": lambda L: fn(L, "tensor_split")(L.ones(4), [1.5]),
    "tensor_split: a bool index": lambda L: fn(L, "tensor_split")(L.ones(4), [True]),
    "tensor_split: a None index": lambda L: fn(L, "tensor_split")(L.ones(4), [1, None]),
    "tensor_split: a nested index": lambda L: fn(L, "tensor_split")(L.ones(4), [[1]]),
    "tensor_split: an index too big for int64": lambda L: fn(L, "tensor_split")(L.ones(4), [2**63]),
    "tensor_split: a float tensor index": lambda L: fn(L, "tensor_split")(L.ones(4), [L.tensor(1.0)]),
    "tensor_split: a bool tensor index": lambda L: fn(L, "tensor_split")(L.ones(4), [L.tensor(True)]),
    "tensor_split: a float tensor": lambda L: fn(L, "tensor_split")(L.ones(4), L.tensor([1.0])),
    "tensor_split: an int32 tensor": lambda L: fn(L, "tensor_split")(L.ones(4), L.tensor([1], dtype=L.int32)),
    "tensor_split: a 2-D tensor": lambda L: fn(L, "tensor_split")(L.ones(4), L.tensor([[1]])),
    "tensor_split: a 0-d count of 0": lambda L: fn(L, "tensor_split")(L.ones(4), L.tensor(0)),
    "tensor_split: not a tensor": lambda L: fn(L, "tensor_split")([1.0, 2.0], 2),
    "hsplit: 0-d input": lambda L: fn(L, "hsplit")(L.tensor(1.0), 1),
    "hsplit: count not dividing": lambda L: fn(L, "hsplit")(L.ones(2, 5), 2),
    "hsplit: count 0": lambda L: fn(L, "hsplit")(L.ones(2, 0), 0),
    "hsplit: negative count": lambda L: fn(L, "hsplit")(L.ones(2, 4), -2),
    "hsplit: a 1-D tensor": lambda L: fn(L, "hsplit")(L.ones(2, 4), L.tensor([1])),
    "hsplit: a float 0-d tensor": lambda L: fn(L, "hsplit")(L.ones(2, 4), L.tensor(2.0)),
    "hsplit: a float": lambda L: fn(L, "hsplit")(L.ones(2, 4), 2.0),
    "hsplit: None": lambda L: fn(L, "hsplit")(L.ones(2, 4), None),
    "hsplit: not a tensor": lambda L: fn(L, "hsplit")([1.0], 1),
    "vsplit: 1-D input": lambda L: fn(L, "vsplit")(L.ones(4), 2),
    "vsplit: count not dividing": lambda L: fn(L, "vsplit")(L.ones(3, 2), 2),
    "vsplit: a float index": lambda L: fn(L, "vsplit")(L.ones(3, 2), [1.5]),
    "dsplit: 2-D input": lambda L: fn(L, "dsplit")(L.ones(2, 4), [1]),
    "dsplit: count not dividing": lambda L: fn(L, "dsplit")(L.ones(2, 2, 3), 2),
    "take_along_dim: dims differ": lambda L: fn(L, "take_along_dim")(L.ones(3, 4), L.tensor([0]), 1),
    "take_along_dim: int32 indices": lambda L: fn(L, "take_along_dim")(L.ones(3, 4), L.tensor([[0]], dtype=L.int32), 1),
    "take_along_dim: float indices": lambda L: fn(L, "take_along_dim")(L.ones(3, 4), L.tensor([[0.0]]), 1),
    "take_along_dim: bool indices, flat": lambda L: fn(L, "take_along_dim")(L.ones(3, 4), L.tensor([True])),
    "take_along_dim: no broadcast": lambda L: fn(L, "take_along_dim")(
        L.ones(3, 4), L.zeros(2, 2, dtype=L.int64), 1),
    "take_along_dim: dim out of range": lambda L: fn(L, "take_along_dim")(L.ones(3, 4), L.tensor([[0]]), 2),
    "take_along_dim: dim of a 0-d input": lambda L: fn(L, "take_along_dim")(L.tensor(1.0), L.tensor(0), 0),
    "take_along_dim: dim a float": lambda L: fn(L, "take_along_dim")(L.ones(3, 4), L.tensor([[0]]), 1.0),
    "take_along_dim: dim a bool": lambda L: fn(L, "take_along_dim")(L.ones(3, 4), L.tensor([[0]]), True),
    "take_along_dim: flat index out of range": lambda L: fn(L, "take_along_dim")(L.ones(3, 4), L.tensor([12])),
    "take_along_dim: flat negative index": lambda L: fn(L, "take_along_dim")(L.ones(3, 4), L.tensor([-1])),
    "take_along_dim: empty dim": lambda L: fn(L, "take_along_dim")(L.ones(3, 0), L.zeros(3, 1, dtype=L.int64), 1),
    "take_along_dim: indices a list": lambda L: fn(L, "take_along_dim")(L.ones(3, 4), [[0]], 1),
    "take_along_dim: input a list": lambda L: fn(L, "take_along_dim")([1.0], L.tensor([0])),
    "diag_embed: 0-d input": lambda L: fn(L, "diag_embed")(L.tensor(3.0)),
    "diag_embed: dim out of range": lambda L: fn(L, "diag_embed")(L.ones(2, 3), 0, 0, 3),
    "diag_embed: dim too negative": lambda L: fn(L, "diag_embed")(L.ones(2, 3), 0, -4, 1),
    "diag_embed: same dims": lambda L: fn(L, "diag_embed")(L.ones(2, 3), 0, 1, -2),
    "diag_embed: offset a float": lambda L: fn(L, "diag_embed")(L.ones(2), 1.0),
    "diag_embed: offset a bool": lambda L: fn(L, "diag_embed")(L.ones(2), True),
    "diag_embed: dim a float": lambda L: fn(L, "diag_embed")(L.ones(2), 0, 0.0, 1),
    "diag_embed: not a tensor": lambda L: fn(L, "diag_embed")([1.0, 2.0]),
    "diagflat: offset a float": lambda L: fn(L, "diagflat")(L.ones(2), 1.0),
    "diagflat: not a tensor": lambda L: fn(L, "diagflat")([1.0, 2.0]),
    "block_diag: 3-D": lambda L: fn(L, "block_diag")(L.ones(2, 2, 2)),
    "block_diag: a list": lambda L: fn(L, "block_diag")([L.ones(1, 1)]),
    "block_diag: a number": lambda L: fn(L, "block_diag")(L.ones(1, 1), 3),
    "atleast_1d: a number": lambda L: fn(L, "atleast_1d")(3),
    "atleast_2d: None": lambda L: fn(L, "atleast_2d")(None),
    "atleast_3d: a number among tensors": lambda L: fn(L, "atleast_3d")(L.ones(1), 3),
    "atleast_1d: a number in a list": lambda L: fn(L, "atleast_1d")([L.ones(1), 3]),
    "atleast_2d: a list among tensors": lambda L: fn(L, "atleast_2d")([L.ones(1)], L.ones(1)),
    "atleast_3d: a string": lambda L: fn(L, "atleast_3d")("ab"),
    "row_stack: empty": lambda L: fn(L, "row_stack")([]),
    "row_stack: a tensor": lambda L: fn(L, "row_stack")(L.ones(3)),
    "row_stack: a number": lambda L: fn(L, "row_stack")(3),
    "row_stack: widths differ": lambda L: fn(L, "row_stack")([L.ones(3), L.ones(2)]),
    "cartesian_prod: none": lambda L: fn(L, "cartesian_prod")(),
    "cartesian_prod: 0-d": lambda L: fn(L, "cartesian_prod")(L.tensor(1.0), L.ones(2)),
    "cartesian_prod: one 2-D": lambda L: fn(L, "cartesian_prod")(L.ones(2, 2)),
    "cartesian_prod: dtypes differ": lambda L: fn(L, "cartesian_prod")(L.ones(2), L.tensor([1, 2])),
    "cartesian_prod: a list": lambda L: fn(L, "cartesian_prod")([L.ones(2), L.ones(2)]),
    "cartesian_prod: a number": lambda L: fn(L, "cartesian_prod")(L.ones(2), 3),
    "combinations: 0-d": lambda L: fn(L, "combinations")(L.tensor(1.0)),
    "combinations: 2-D": lambda L: fn(L, "combinations")(L.ones(2, 2)),
    "combinations: negative r": lambda L: fn(L, "combinations")(L.ones(3), -1),
    "combinations: r a float": lambda L: fn(L, "combinations")(L.ones(3), 2.0),
    "combinations: r a bool": lambda L: fn(L, "combinations")(L.ones(3), True),
    "combinations: with_replacement an int": lambda L: fn(L, "combinations")(L.ones(3), 2, 1),
    "combinations: with_replacement None": lambda L: fn(L, "combinations")(L.ones(3), 2, None),
    "combinations: not a tensor": lambda L: fn(L, "combinations")([1.0, 2.0]),
    "vander: 0-d": lambda L: fn(L, "vander")(L.tensor(2.0)),
    "vander: 2-D": lambda L: fn(L, "vander")(L.ones(2, 2)),
    "vander: negative N": lambda L: fn(L, "vander")(L.ones(3), -1),
    "vander: N a float": lambda L: fn(L, "vander")(L.ones(3), 2.0),
    "vander: N a bool": lambda L: fn(L, "vander")(L.ones(3), True),
    "vander: N a string": lambda L: fn(L, "vander")(L.ones(3), "a"),
    "vander: increasing an int": lambda L: fn(L, "vander")(L.ones(3), 2, 1),
    "vander: increasing None": lambda L: fn(L, "vander")(L.ones(3), 2, None),
    "vander: not a tensor": lambda L: fn(L, "vander")([1.0, 2.0]),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_bad_calls_raise_the_class_torch_raises(name):
    assert_same_class_as_torch(name, ERRORS[name])
