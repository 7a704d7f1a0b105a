"""Op cases for the pooling ops (``minigrad.ops.pooling``) and batch normalization (``minigrad.ops.normalization``).

Each case is one program ``fn(lib, F, *inputs, params=...)`` run by the
gradcheck and PyTorch-oracle runners (see ``op_cases.py``). Window
geometries are drawn as functions of the drawn input shape, so every
window holds input elements and every output is non-empty.

Max pooling inputs are ``distinct`` (no ties, and gaps far above the
finite-difference step, so the picks do not move under perturbation);
batch-norm inputs too (the variance stays away from 0).

Programs named ``*_double_backward`` return first-order gradients taken with
``create_graph=True`` (so the gradient ops, ``max_pool_scatter`` and
``avg_pool2d_grad``, are recorded and checked); ``max_pool_gather`` is the
gradient of that gradient, recorded by a second-order program.
"""

# ruff: noqa: N803  (programs take the functional module as ``F``, as in ``import ... as F``)
from __future__ import annotations

from hypothesis import assume
from hypothesis import strategies as st

from minigrad.ops.pooling import pool_output_size
from tests.minigrad.ops.cases_nn import const, grads_of
from tests.minigrad.ops.op_cases import case

# -- shape and geometry strategies ---------------------------------------------------------------


def images(max_side=6, batched=True):
    """One input shape (N, C, H, W) (or (C, H, W) unbatched)."""
    image = (st.integers(1, 2), st.integers(1, max_side), st.integers(1, max_side))
    shape = st.tuples(st.integers(1, 2), *image) if batched else st.tuples(*image)
    return shape.map(lambda s: (s,))


def sequences():
    """One input shape (N, C, L)."""
    return st.tuples(st.integers(1, 2), st.integers(1, 2), st.integers(1, 7)).map(lambda s: (s,))


def _spelled(values):
    """An int when the entries agree (PyTorch accepts both spellings), else the tuple."""
    return values[0] if len(set(values)) == 1 else tuple(values)


@st.composite
def _max_geometry(draw, sizes):
    """kernel_size, stride, padding, dilation, ceil_mode for spatial ``sizes``: PyTorch accepts them."""
    kernel, stride, padding, dilation = [], [], [], []
    for size in sizes:
        k, d = draw(st.integers(1, 3)), draw(st.integers(1, 2))
        if -(-(d * (k - 1) + 1 - size) // 2) > k // 2:
            d = 1  # the dilated kernel would not fit even with the most padding allowed
        # At most half the kernel (PyTorch's rule), at least what the dilated window needs to fit.
        p = draw(st.integers(max(0, -(-(d * (k - 1) + 1 - size) // 2)), k // 2))
        kernel.append(k)
        dilation.append(d)
        padding.append(p)
        stride.append(draw(st.integers(1, 3)))
    geometry = {"kernel_size": _spelled(kernel), "padding": _spelled(padding), "dilation": _spelled(dilation),
                "ceil_mode": draw(st.booleans())}
    if draw(st.booleans()):
        geometry["stride"] = _spelled(stride)
    else:  # PyTorch's default
        stride = kernel
    # A dilated window may cover padding only (its max is -inf): finite differences can't check that.
    assume(not any(_hollow(*args, geometry["ceil_mode"]) for args in zip(sizes, kernel, stride, padding, dilation)))
    return geometry


def _hollow(size, kernel, stride, padding, dilation, ceil_mode) -> bool:
    """Whether some window along one dimension holds no input position."""
    count = pool_output_size(size, kernel, stride, padding, dilation, ceil_mode)
    return any(
        not any(0 <= o * stride - padding + i * dilation < size for i in range(kernel)) for o in range(count)
    )


@st.composite
def _avg_geometry(draw, sizes, override=True):
    """kernel_size, stride, padding, ceil_mode, count_include_pad (and maybe divisor_override)."""
    kernel, stride, padding = [], [], []
    for size in sizes:
        k = draw(st.integers(1, 3))
        kernel.append(k)
        padding.append(draw(st.integers(max(0, -(-(k - size) // 2)), k // 2)))
        stride.append(draw(st.integers(1, 3)))
    geometry = {"kernel_size": _spelled(kernel), "stride": _spelled(stride), "padding": _spelled(padding),
                "ceil_mode": draw(st.booleans()), "count_include_pad": draw(st.booleans())}
    if override and draw(st.booleans()):
        geometry["divisor_override"] = draw(st.integers(1, 3))
    return geometry


def max_geometry(drawn):
    return _max_geometry(drawn[0][-2:])


def max_geometry_1d(drawn):
    return _max_geometry(drawn[0][-1:])


def avg_geometry(drawn):
    return _avg_geometry(drawn[0][-2:])


def avg_geometry_1d(drawn):
    return _avg_geometry(drawn[0][-1:], override=False)


def adaptive_sizes(drawn):
    """An output size: an int, or a pair whose entries may be None (keep the input's size)."""
    entry = st.integers(1, 5)
    return st.one_of(entry, st.tuples(st.one_of(entry, st.none()), st.one_of(entry, st.none())))


# -- max pooling ---------------------------------------------------------------------------------------

case("max_pool2d", lambda lib, F, x, params: F.max_pool2d(x, **params), images(), distinct=True,
     extra={"params": max_geometry})
case("max_pool2d", lambda lib, F, x, params: F.max_pool2d(x, **params), images(batched=False), distinct=True,
     extra={"params": max_geometry}, name="max_pool2d_unbatched")
case("max_pool2d", lambda lib, F, x, params: F.max_pool1d(x, **params), sequences(), distinct=True,
     extra={"params": max_geometry_1d}, name="max_pool1d")
case("max_pool2d", lambda lib, F, x: (F.max_pool2d(x, 2, stride=1), F.max_pool2d(x, (2, 1), stride=(1, 1))),
     st.tuples(st.integers(1, 2), st.integers(1, 2), st.integers(2, 4), st.integers(2, 4)).map(lambda s: (s,)),
     distinct=True, name="max_pool2d_overlapping")
case("adaptive_max_pool2d", lambda lib, F, x, params: F.adaptive_max_pool2d(x, params), images(), distinct=True,
     extra={"params": adaptive_sizes})
case("adaptive_max_pool2d", lambda lib, F, x, params: F.adaptive_max_pool1d(x, params), sequences(),
     distinct=True, extra={"params": lambda s: st.integers(1, 8)}, name="adaptive_max_pool1d")
case("max_pool_scatter",
     lambda lib, F, x, params: grads_of(lib, lambda: (F.max_pool2d(x, **params) ** 2).sum(), x)[0],
     images(), distinct=True, extra={"params": max_geometry}, name="max_pool2d_double_backward")
case("max_pool_scatter",
     lambda lib, F, x, params: grads_of(lib, lambda: (F.adaptive_max_pool2d(x, params) ** 2).sum(), x)[0],
     images(), distinct=True, extra={"params": adaptive_sizes}, name="adaptive_max_pool2d_double_backward")


def _max_pool_second_order(lib, F, x, params):
    """d/dx of |d/dx sum(max_pool(x)**2)|**2: the backward of the recorded scatter is the gather."""
    def first():
        return grads_of(lib, lambda: (F.max_pool2d(x, **params) ** 2).sum(), x)[0]
    return grads_of(lib, lambda: (first() ** 2).sum(), x)[0]


case("max_pool_gather", _max_pool_second_order, images(), distinct=True, extra={"params": max_geometry})

# -- average pooling ------------------------------------------------------------------------------------

case("avg_pool2d", lambda lib, F, x, params: F.avg_pool2d(x, **params), images(), extra={"params": avg_geometry})
case("avg_pool2d", lambda lib, F, x, params: F.avg_pool2d(x, **params), images(batched=False),
     extra={"params": avg_geometry}, name="avg_pool2d_unbatched")
case("avg_pool2d", lambda lib, F, x, params: F.avg_pool1d(x, **params), sequences(),
     extra={"params": avg_geometry_1d}, name="avg_pool1d")
case("avg_pool2d_grad",
     lambda lib, F, x, params: grads_of(lib, lambda: (F.avg_pool2d(x, **params) ** 3).sum(), x)[0],
     images(), extra={"params": avg_geometry}, name="avg_pool2d_double_backward")
case("adaptive_avg_pool2d", lambda lib, F, x, params: F.adaptive_avg_pool2d(x, params), images(),
     extra={"params": adaptive_sizes})
case("adaptive_avg_pool2d", lambda lib, F, x, params: F.adaptive_avg_pool1d(x, params), sequences(),
     extra={"params": lambda s: st.integers(1, 8)}, name="adaptive_avg_pool1d")
case("adaptive_avg_pool2d",
     lambda lib, F, x, params: grads_of(lib, lambda: (F.adaptive_avg_pool2d(x, params) ** 3).sum(), x)[0],
     images(), extra={"params": adaptive_sizes}, name="adaptive_avg_pool2d_double_backward")

# -- batch normalization ----------------------------------------------------------------------------------


@st.composite
def batch_norm_shapes(draw, count=3):
    """x (N, C, *spatial) with more than one value per channel, then (C,) for weight and bias."""
    spatial = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))
    n = draw(st.integers(1 if spatial and max(spatial) > 1 else 2, 3))
    channels = draw(st.integers(1, 3))
    return ((n, channels) + spatial,) + ((channels,),) * (count - 1)


def running_stats(drawn):
    """Running mean and (positive) variance for the channels of ``drawn``, and a momentum."""
    channels = drawn[0][1]
    return st.fixed_dictionaries({
        "mean": st.lists(st.floats(-1, 1), min_size=channels, max_size=channels),
        "var": st.lists(st.floats(0.25, 2.0), min_size=channels, max_size=channels),
        "momentum": st.sampled_from([0.1, 0.5, 1.0]),
    })


def _batch_norm_train(lib, F, x, w, b, params):
    """Normalized output and the running statistics it updated (compared, not differentiated)."""
    mean, var = const(lib, x, params["mean"], float_dtype=True), const(lib, x, params["var"], float_dtype=True)
    out = F.batch_norm(x, mean, var, w, b, training=True, momentum=params["momentum"])
    return out, mean, var


def _batch_norm_eval(lib, F, x, w, b, params):
    mean, var = const(lib, x, params["mean"], float_dtype=True), const(lib, x, params["var"], float_dtype=True)
    return F.batch_norm(x, mean, var, w, b, training=False, eps=1e-3)


case("batch_norm", _batch_norm_train, batch_norm_shapes(), distinct=True, extra={"params": running_stats})
case("batch_norm", lambda lib, F, x: F.batch_norm(x, None, None, training=True), batch_norm_shapes(1),
     distinct=True, name="batch_norm_plain")
case("batch_norm", _batch_norm_eval, batch_norm_shapes(), distinct=True, extra={"params": running_stats},
     name="batch_norm_eval")
case("batch_norm",
     lambda lib, F, x, w, b: grads_of(
         lib, lambda: (F.batch_norm(x, None, None, w, b, training=True) ** 3).sum(), (x, w, b)),
     batch_norm_shapes(), distinct=True, name="batch_norm_double_backward")
case("batch_norm",
     lambda lib, F, x, w, b, params: grads_of(lib, lambda: (_batch_norm_eval(lib, F, x, w, b, params) ** 3).sum(),
                                              (x, w, b)),
     batch_norm_shapes(), distinct=True, extra={"params": running_stats}, name="batch_norm_eval_double_backward")
