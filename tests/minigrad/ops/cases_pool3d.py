# ruff: noqa: N803  (programs take the functional module as ``F``, as in ``import ... as F``)
"""Op cases for the 3-D pooling ops (``minigrad.ops.pooling3d``).

Each case is one program ``fn(lib, F, *inputs, params=...)`` run by the
gradcheck and PyTorch-oracle runners (see ``op_cases.py``). Until the 3-D
pooling functions are wired into ``minigrad.nn.functional``, ``_fn`` takes
them from ``minigrad.nn.pooling3d`` (PyTorch's from its ``F``). Window
geometries are drawn from the input's shape so that every window holds input
elements (and, for average pooling, the kernel fits in the input); max
pooling inputs are ``distinct`` (no ties). Programs named ``*_double_backward``
return first-order gradients taken with ``create_graph=True``, so the gradient
ops are recorded and checked too.
"""

from __future__ import annotations

from hypothesis import strategies as st

from minigrad.nn import pooling3d
from tests.minigrad.ops.cases_nn import grads_of
from tests.minigrad.ops.cases_pooling import _max_geometry
from tests.minigrad.ops.op_cases import case


def _fn(F, name):
    """``F.<name>``, or minigrad's from ``minigrad.nn.pooling3d`` while ``F`` lacks it."""
    return getattr(F, name, None) or getattr(pooling3d, name)


def volumes(max_side=4, batched=True):
    """One input shape (N, C, D, H, W) (or (C, D, H, W) unbatched), small: 3-D windows are many."""
    volume = (st.integers(1, 2), st.integers(1, max_side), st.integers(1, max_side), st.integers(1, max_side))
    shape = st.tuples(st.integers(1, 2), *volume) if batched else st.tuples(*volume)
    return shape.map(lambda s: (s,))


def max_geometry(drawn):
    return _max_geometry(drawn[0][-3:])


@st.composite
def avg_geometry(draw, drawn):
    """kernel_size (at most the input's size: PyTorch's 3-D average pooling asks that), stride, padding,
    ceil_mode, count_include_pad and maybe divisor_override."""
    sizes = drawn[0][-3:]
    kernel = [draw(st.integers(1, min(3, n))) for n in sizes]
    geometry = {"kernel_size": tuple(kernel), "stride": draw(st.integers(1, 3)),
                "padding": tuple(draw(st.integers(0, k // 2)) for k in kernel),
                "ceil_mode": draw(st.booleans()), "count_include_pad": draw(st.booleans())}
    if draw(st.booleans()):
        geometry["divisor_override"] = draw(st.integers(1, 3))
    return geometry


def adaptive_sizes(drawn):
    """An output size: an int, or a triple whose entries may be None (keep the input's size)."""
    entry = st.integers(1, 4)
    maybe = st.one_of(entry, st.none())
    return st.one_of(entry, st.tuples(maybe, maybe, maybe))


def _max_pool(lib, F, x, params):
    return _fn(F, "max_pool3d")(x, **params)


def _adaptive_max(lib, F, x, params):
    return _fn(F, "adaptive_max_pool3d")(x, params)


def _avg_pool(lib, F, x, params):
    return _fn(F, "avg_pool3d")(x, **params)


def _adaptive_avg(lib, F, x, params):
    return _fn(F, "adaptive_avg_pool3d")(x, params)


case("max_pool3d", _max_pool, volumes(), distinct=True, extra={"params": max_geometry})
case("max_pool3d", _max_pool, volumes(batched=False), distinct=True, extra={"params": max_geometry},
     name="max_pool3d_unbatched")
case("max_pool3d",
     lambda lib, F, x, params: grads_of(lib, lambda: (_max_pool(lib, F, x, params) ** 2).sum(), x)[0],
     volumes(), distinct=True, extra={"params": max_geometry}, name="max_pool3d_double_backward")
case("adaptive_max_pool3d", _adaptive_max, volumes(), distinct=True, extra={"params": adaptive_sizes})
case("adaptive_max_pool3d",
     lambda lib, F, x, params: grads_of(lib, lambda: (_adaptive_max(lib, F, x, params) ** 2).sum(), x)[0],
     volumes(), distinct=True, extra={"params": adaptive_sizes}, name="adaptive_max_pool3d_double_backward")
case("avg_pool3d", _avg_pool, volumes(), extra={"params": avg_geometry})
case("avg_pool3d", _avg_pool, volumes(batched=False), extra={"params": avg_geometry}, name="avg_pool3d_unbatched")
case("avg_pool3d_grad",
     lambda lib, F, x, params: grads_of(lib, lambda: (_avg_pool(lib, F, x, params) ** 3).sum(), x)[0],
     volumes(), extra={"params": avg_geometry}, name="avg_pool3d_double_backward")
case("matmul", _adaptive_avg, volumes(), extra={"params": adaptive_sizes}, name="adaptive_avg_pool3d")
