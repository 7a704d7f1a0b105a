# ruff: noqa: N803  (every program takes PyTorch's conventional name F for nn.functional)
"""Op cases for the core (non-neural-network) ops of ``minigrad.ops.REGISTRY``.

Each case is one small program ``fn(lib, F, *inputs, params=...)`` written
once against the API minigrad shares with PyTorch; the runners check it by
gradcheck and against PyTorch (see ``op_cases.py``). Where PyTorch lacks a
spelling minigrad has (negative slice steps), the program uses PyTorch's
equivalent when ``lib`` is torch.

Shapes, and the index arrays, masks, dims and target shapes a case needs
(``extra["params"]``, a function of the drawn shapes returning a strategy),
are drawn by hypothesis. Size-1 dimensions are drawn often, since they are
where broadcasting and squeezing go wrong.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from tests.minigrad.ops.op_cases import case

# -- shape strategies ---------------------------------------------------------------


def shapes(min_dims=0, max_dims=3, min_side=1, max_side=3):
    """A single shape."""
    return st.lists(st.integers(min_side, max_side), min_size=min_dims, max_size=max_dims).map(tuple)


@st.composite
def broadcastable(draw, num=2, min_dims=0, max_dims=3, max_side=3):
    """``num`` mutually broadcastable shapes.

    Draws the broadcast result, then for each operand keeps a suffix of it
    (NumPy aligns shapes on the right) with some entries turned into 1.
    """
    result = draw(shapes(min_dims, max_dims, 1, max_side))
    out = []
    for _ in range(num):
        ndim = draw(st.integers(min(min_dims, len(result)), len(result)))
        tail = result[len(result) - ndim :]
        ones = draw(st.lists(st.booleans(), min_size=ndim, max_size=ndim))
        out.append(tuple(1 if one else n for one, n in zip(ones, tail)))
    return tuple(out)


def one(min_dims=0, max_dims=3, min_side=1, max_side=3):
    """A tuple holding one shape (for one-input cases)."""
    return shapes(min_dims, max_dims, min_side, max_side).map(lambda s: (s,))


@st.composite
def joinable(draw, max_inputs=3):
    """Shapes of 1 to ``max_inputs`` tensors that differ at most along one dimension (for cat)."""
    base = draw(shapes(1, 3))
    axis = draw(st.integers(0, len(base) - 1))
    sizes = draw(st.lists(st.integers(1, 3), min_size=1, max_size=max_inputs))
    return tuple(base[:axis] + (n,) + base[axis + 1 :] for n in sizes)


@st.composite
def batched_matrices(draw):
    """Shapes ``(*batch_a, n, k)`` and ``(*batch_b, k, m)`` with broadcastable batches."""
    n, k, m = draw(st.tuples(*[st.integers(1, 3)] * 3))
    batch_a, batch_b = draw(broadcastable(2, max_dims=2, max_side=2))
    return batch_a + (n, k), batch_b + (k, m)


# -- params strategies (functions of the drawn shapes) -----------------------------


def dim_of(shape_index=0, new_dim=False):
    """A dim of the input's shape, negative spellings included (``new_dim``: one more)."""

    def strategy(drawn):
        ndim = len(drawn[shape_index]) + (1 if new_dim else 0)
        return st.integers(-ndim, ndim - 1)

    return strategy


def dim_and_keepdim(drawn):
    ndim = len(drawn[0])
    return st.tuples(st.integers(-ndim, ndim - 1), st.booleans())


def dims_and_keepdim(drawn):
    ndim = len(drawn[0])
    return st.tuples(st.lists(st.integers(0, ndim - 1), min_size=1, unique=True).map(tuple), st.booleans())


def permutation(drawn):
    return st.permutations(range(len(drawn[0]))).map(tuple)


def two_dims(drawn):
    ndim = len(drawn[0])
    return st.tuples(st.integers(-ndim, ndim - 1), st.integers(-ndim, ndim - 1))


@st.composite
def _expand_target(draw, shape):
    lead = draw(shapes(0, 2, 1, 3))
    body = tuple(draw(st.integers(1, 3)) if n == 1 else draw(st.sampled_from([n, -1])) for n in shape)
    return lead + body


def expand_target(drawn):
    """A shape the input broadcasts to: new leading dims, size-1 dims stretched, -1 entries."""
    return _expand_target(drawn[0])


def new_shape(drawn):
    """A shape with the input's element count (a shuffled factorization, maybe one -1)."""
    size = math.prod(drawn[0])
    factors = [p for p in (2, 3) for _ in range(_multiplicity(size, p))]

    @st.composite
    def build(draw):
        order = draw(st.permutations(factors)) if factors else []
        cuts = sorted(draw(st.lists(st.integers(0, len(order)), max_size=3)))
        bounds = [0, *cuts, len(order)]
        shape = [math.prod(order[a:b]) for a, b in zip(bounds, bounds[1:])]
        if draw(st.booleans()):
            shape[draw(st.integers(0, len(shape) - 1))] = -1
        return tuple(shape)

    return build()


def _multiplicity(n, p):
    count = 0
    while n % p == 0 and n > 1:
        n //= p
        count += 1
    return count


def cat_dim(drawn):
    """A dim along which the drawn shapes may be concatenated (they agree elsewhere)."""
    first = drawn[0]
    ok = [
        d for d in range(len(first))
        if all(s[:d] + s[d + 1 :] == first[:d] + first[d + 1 :] for s in drawn)
    ]
    return st.sampled_from(ok + [d - len(first) for d in ok])


def int_index(drawn):
    """An integer index list into dim 0, with a repeat of its first entry."""
    n = drawn[0][0]
    return st.lists(st.integers(-n, n - 1), min_size=1, max_size=4).map(lambda ix: ix + ix[:1])


def int_index_pair(drawn):
    """Two integer index lists (dims 0 and 1) of broadcastable lengths k x 1 and 1 x j."""
    n0, n1 = drawn[0][:2]
    return st.tuples(
        st.lists(st.integers(0, n0 - 1), min_size=1, max_size=3),
        st.lists(st.integers(-n1, n1 - 1), min_size=1, max_size=3),
    )


def bool_mask(drawn):
    """A boolean mask over the leading 1 or 2 dims of the input."""
    shape = drawn[0]
    return st.integers(1, min(2, len(shape))).flatmap(lambda k: hnp.arrays(np.bool_, shape[:k]))


# -- helpers used inside programs -------------------------------------------------------


def is_torch(lib) -> bool:
    return lib.__name__ == "torch"


def const(lib, like, values):
    """A constant tensor (index array, mask) on ``like``'s device."""
    return lib.tensor(values, device=like.device)


# -- elementwise arithmetic -----------------------------------------------------------------

pair = broadcastable(2)

case("add", lambda lib, F, a, b: a + b, pair, name="add_broadcast")
case("add", lambda lib, F, a: 1.5 + a + 2, one(), name="add_scalar")
case("sub", lambda lib, F, a, b: a - b, pair, name="sub_broadcast")
case("sub", lambda lib, F, a: 3 - a - 0.5, one(), name="sub_scalar")
case("mul", lambda lib, F, a, b: a * b, pair, name="mul_broadcast")
case("mul", lambda lib, F, a: 2 * a * 0.5 * a, one(), name="mul_scalar_and_self")
case("div", lambda lib, F, a, b: a / b, pair, low=0.5, high=2.0, name="div_positive")
case("div", lambda lib, F, a, b: a / b, pair, away_from=(0.0,), margin=0.5, name="div_signed")
case("div", lambda lib, F, a: 2.0 / a / 4, one(), away_from=(0.0,), margin=0.5, name="div_scalar")
case("pow", lambda lib, F, a: a**2 + a**3, one(), name="pow_int_exponent")
case("pow", lambda lib, F, a: a**0.5 + a**-1.5 + a.pow(2.5), one(), low=0.3, name="pow_float_exponent")
case("pow", lambda lib, F, a: a**0 + a**1, one(), name="pow_zero_exponent")
case("pow", lambda lib, F, a, b: a**b, pair, low=0.3, name="pow_tensor_tensor")
case("pow", lambda lib, F, a: 2.0**a + 0.5**a, one(), name="pow_scalar_base")
case("neg", lambda lib, F, a: -a, one())

# -- pointwise functions ------------------------------------------------------------------------

case("exp", lambda lib, F, a: a.exp() + lib.exp(a), one())
case("log", lambda lib, F, a: a.log() + lib.log(a), one(), low=0.2, high=3.0)
case("sqrt", lambda lib, F, a: a.sqrt() + lib.sqrt(a), one(), low=0.2, high=3.0)
case("tanh", lambda lib, F, a: a.tanh() + lib.tanh(a), one(), low=-3.0, high=3.0)
case("sigmoid", lambda lib, F, a: a.sigmoid() + lib.sigmoid(a), one(), low=-6.0, high=6.0)
case("sigmoid", lambda lib, F, a: (a * 200).sigmoid(), one(), low=-6.0, high=6.0, name="sigmoid_saturated")
case("relu", lambda lib, F, a: a.relu() + lib.relu(a), one(), away_from=(0.0,))
case("abs", lambda lib, F, a: a.abs() + lib.abs(a) + abs(a), one(), away_from=(0.0,))
case("clamp", lambda lib, F, a: a.clamp(-0.5, 1.0), one(), away_from=(-0.5, 1.0), name="clamp_both")
case("clamp", lambda lib, F, a: a.clamp(min=0.25) + lib.clamp(a, max=-0.25), one(),
     away_from=(-0.25, 0.25), name="clamp_one_sided")
case("clamp", lambda lib, F, a: a.clip(-1.0, 1.0), one(), away_from=(-1.0, 1.0), name="clip")
case("where", lambda lib, F, c, a, b: lib.where(c > 0, a, b), broadcastable(3), away_from=(0.0,),
     name="where_broadcast")
case("where", lambda lib, F, a: lib.where(a > 0, a, 0.0) + lib.where(a < 0, 2.0, a * a), one(),
     away_from=(0.0,), name="where_scalar")
case("where", lambda lib, F, a: a.masked_fill(a > 0.5, 0.25), one(), away_from=(0.5,), name="masked_fill")
# float32 rounds the finite differences: a wide step keeps them exact (the op is linear).
case("cast", lambda lib, F, a: a.to(lib.float32).to(lib.float64) + a.float().double(), one(),
     extra={"gradcheck": {"eps": 1e-2}})
case("clone", lambda lib, F, a: a.clone() * a, one())

# -- reductions -------------------------------------------------------------------------------------

case("sum", lambda lib, F, a: a.sum() + lib.sum(a), one(), name="sum_all")
case("sum", lambda lib, F, a, params: a.sum(params[0], keepdim=params[1]), one(1),
     extra={"params": dim_and_keepdim}, name="sum_dim")
case("sum", lambda lib, F, a, params: a.sum(dim=params[0], keepdim=params[1]), one(1),
     extra={"params": dims_and_keepdim}, name="sum_dims")
case("sum", lambda lib, F, a, params: a.sum(axis=params[0], keepdims=params[1]), one(1),
     extra={"params": dims_and_keepdim}, name="sum_axis_spelling")
case("sum", lambda lib, F, a: a.sum(dim=()), one(), name="sum_empty_dims")
case("mean", lambda lib, F, a: a.mean() + lib.mean(a), one(), name="mean_all")
case("mean", lambda lib, F, a, params: a.mean(params[0], keepdim=params[1]), one(1),
     extra={"params": dim_and_keepdim}, name="mean_dim")
case("mean", lambda lib, F, a, params: a.mean(axis=params[0], keepdims=params[1]), one(1),
     extra={"params": dims_and_keepdim}, name="mean_dims")
case("max", lambda lib, F, a: a.max() + lib.max(a), one(), distinct=True, name="max_all")
case("max", lambda lib, F, a: a.min() + lib.min(a), one(), distinct=True, name="min_all")
case("max_dim", lambda lib, F, a, params: a.max(params[0], keepdim=params[1]), one(1), distinct=True,
     extra={"params": dim_and_keepdim}, name="max_dim")
case("max_dim", lambda lib, F, a, params: lib.min(a, dim=params[0], keepdim=params[1]), one(1),
     distinct=True, extra={"params": dim_and_keepdim}, name="min_dim")
case("max_dim", lambda lib, F, a, params: a.max(params).values * a.min(params).values, one(1),
     distinct=True, extra={"params": dim_of()}, name="max_min_dim_values")
case("max_dim", lambda lib, F, a: a.max(0)[0] + a.min(dim=0)[0], one(0, 0), name="max_dim_0d")

# -- shape ---------------------------------------------------------------------------------------------

case("reshape", lambda lib, F, a, params: a.reshape(params), one(), extra={"params": new_shape},
     name="reshape")
case("reshape", lambda lib, F, a, params: a.view(*params) * 2, one(), extra={"params": new_shape}, name="view")
case("reshape", lambda lib, F, a: a.reshape(-1) + a.flatten(), one(), name="reshape_flat")
case("reshape", lambda lib, F, a, params: a.unsqueeze(params), one(), extra={"params": dim_of(new_dim=True)},
     name="unsqueeze")
case("reshape", lambda lib, F, a: a.squeeze(), one(max_side=2), name="squeeze_all")
case("reshape", lambda lib, F, a, params: a.squeeze(params), one(1, max_side=2), extra={"params": dim_of()},
     name="squeeze_dim")
case("reshape", lambda lib, F, a, params: a.squeeze(tuple(params)), one(1, max_side=2),
     extra={"params": lambda s: st.lists(st.integers(0, len(s[0]) - 1), unique=True)}, name="squeeze_dims")
case("permute", lambda lib, F, a, params: a.permute(*params) + 0, one(1), extra={"params": permutation},
     name="permute")
case("permute", lambda lib, F, a, params: a.permute(params).exp(), one(), extra={"params": permutation},
     name="permute_tuple")
case("permute", lambda lib, F, a, params: a.transpose(*params).exp(), one(1), extra={"params": two_dims},
     name="transpose")
case("permute", lambda lib, F, a: a.T * 2, one(2, 2), name="T")
case("permute", lambda lib, F, a: a.mT.exp(), one(2), name="mT")
case("expand", lambda lib, F, a, params: a.expand(params), one(max_side=2), extra={"params": expand_target},
     name="expand")
case("expand", lambda lib, F, a, params: a.expand(*params).exp(), one(1, max_side=2),
     extra={"params": expand_target}, name="expand_args")
case("expand", lambda lib, F, a, b: a.expand_as(b * 0 + a) * b, pair, name="expand_as")
case("cat", lambda lib, F, *xs, params: lib.cat(list(xs), params), joinable(),
     extra={"params": cat_dim}, name="cat")
case("cat", lambda lib, F, a: lib.cat([a, a * 2, a], dim=-1), one(1), name="cat_same_input")
case("stack", lambda lib, F, *xs, params: lib.stack(xs, params),
     st.tuples(shapes(), st.integers(1, 3)).map(lambda sn: (sn[0],) * sn[1]),
     extra={"params": dim_of(new_dim=True)}, name="stack")
case("to_device", lambda lib, F, a: (a.to("cpu") * a.to("cpu", lib.float64)).to(a.device), one(),
     extra={"records_on_cpu": False})

# -- indexing --------------------------------------------------------------------------------------------


def _reversed(lib, a, step):
    """``a[::-step]``; PyTorch has no negative slice steps, so it flips instead."""
    return a.flip(0)[::step] if is_torch(lib) else a[::-step]


case("index", lambda lib, F, a: a[1:, ::2] * 2, one(2), name="index_slices")
case("index", lambda lib, F, a: a[0] + a[-1], one(1), name="index_int")
case("index", lambda lib, F, a: a[-1, 1:] * a[0, :-1].sum(), one(2), name="index_int_slice")
case("index", lambda lib, F, a: a[None, ..., None, 0], one(1), name="index_none_ellipsis")
case("index", lambda lib, F, a: a[..., -1] * a[...].sum(), one(1), name="index_ellipsis")
case("index", lambda lib, F, a: _reversed(lib, a, 1) * a, one(1), name="index_negative_step")
case("index", lambda lib, F, a: _reversed(lib, a, 2), one(1), name="index_negative_step_2")
case("index", lambda lib, F, a, params: a[const(lib, a, params)], one(1), extra={"params": int_index},
     name="index_int_array_repeats")
case("index", lambda lib, F, a, params: a[params] * 3, one(1), extra={"params": int_index},
     name="index_int_list")
case("index", lambda lib, F, a, params: a[:, const(lib, a, params[1])][const(lib, a, params[0])],
     one(2), extra={"params": int_index_pair}, name="index_slice_then_array")
case("index", lambda lib, F, a, params: a[const(lib, a, params[0])[:, None], const(lib, a, params[1])],
     one(2), extra={"params": int_index_pair}, name="index_broadcast_arrays")
case("index", lambda lib, F, a, params: a[const(lib, a, params)], one(1), extra={"params": bool_mask},
     name="index_bool_mask")
case("index", lambda lib, F, a: a[a > 0] * 2, one(), away_from=(0.0,), name="index_value_mask")


def _index_grad(lib, a, w, index):
    """d/da sum(a[index]**2 * w[index]) with create_graph: the scatter of the backward is recorded."""
    with lib.enable_grad():
        loss = (a[index] ** 2 * w[index]).sum()
        (grad_a,) = lib.autograd.grad(loss, a, create_graph=True)
    return grad_a


case("index_scatter", lambda lib, F, a, w, params: _index_grad(lib, a, w, const(lib, a, params)),
     one(1).map(lambda s: s * 2), extra={"params": int_index}, name="index_scatter_repeats")
case("index_scatter", lambda lib, F, a, w: _index_grad(lib, a, w, (slice(1, None), 0)),
     one(2).map(lambda s: s * 2), name="index_scatter_basic")
case("index_scatter", lambda lib, F, a, w: _index_grad(lib, a, w, a.detach() > 0),
     one().map(lambda s: s * 2), away_from=(0.0,), name="index_scatter_mask")

# -- linear algebra ------------------------------------------------------------------------------------

side = st.integers(1, 4)
case("matmul", lambda lib, F, a, b: a @ b, side.map(lambda k: ((k,), (k,))), name="matmul_1d_1d")
case("matmul", lambda lib, F, a, b: lib.matmul(a, b),
     st.tuples(side, side).map(lambda km: ((km[0],), km)), name="matmul_1d_2d")
case("matmul", lambda lib, F, a, b: a @ b,
     st.tuples(side, side).map(lambda nk: (nk, (nk[1],))), name="matmul_2d_1d")
case("matmul", lambda lib, F, a, b: a @ b,
     st.tuples(side, side, side).map(lambda s: (s[:2], s[1:])), name="matmul_2d_2d")
case("matmul", lambda lib, F, a, b: a @ b, batched_matrices(), name="matmul_batched")
case("matmul", lambda lib, F, a, b: a @ b,
     st.tuples(shapes(1, 2, 1, 2), side, side).map(lambda s: ((s[1],), s[0] + (s[1], s[2]))),
     name="matmul_1d_batched")
case("matmul", lambda lib, F, a, b: a @ b,
     st.tuples(shapes(1, 2, 1, 2), side, side).map(lambda s: (s[0] + (s[2], s[1]), (s[1],))),
     name="matmul_batched_1d")
