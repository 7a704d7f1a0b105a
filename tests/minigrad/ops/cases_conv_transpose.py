"""Op cases for ``F.conv1d``, ``F.conv_transpose1d`` and ``F.conv_transpose2d`` (``minigrad.nn.conv``).

conv1d records the ``conv2d`` op; the transposed convolutions record a
``matmul`` (the columns) and a ``fold`` (col2im), plus ``constant_pad``
when ``output_padding`` exceeds ``padding``. Geometries are drawn over
strides, paddings, output paddings (below the stride or the dilation) and
dilations, grouped or not, batched or not; every drawn geometry gives an
output of at least one position. Each case is checked by gradcheck and
against PyTorch; ``*_double_backward`` checks second-order gradients.
"""

# ruff: noqa: N803  (programs take the functional module as ``F``, as in ``import ... as F``)
from __future__ import annotations

import warnings

from hypothesis import strategies as st

from tests.minigrad.ops.op_cases import case


def grads_of(lib, loss_fn, inputs):
    """d loss / d inputs with ``create_graph=True`` (grad mode forced on: gradcheck may run under no_grad)."""
    with lib.enable_grad():
        return lib.autograd.grad(loss_fn(), inputs, create_graph=True)


@st.composite
def transpose_shapes(draw, dims, bias=True, batched=True):
    """x ([N,] C_in, *spatial), weight (C_in, C_out / groups, *kernel)[, bias (C_out,)]; groups 1 or 2."""
    groups = draw(st.integers(1, 2))
    c_in, out_per_group = groups * draw(st.integers(1, 2)), draw(st.integers(1, 2))
    spatial = tuple(draw(st.lists(st.integers(1, 3), min_size=dims, max_size=dims)))
    kernel = tuple(draw(st.lists(st.integers(1, 3), min_size=dims, max_size=dims)))
    x = ((draw(st.integers(1, 2)),) if batched else ()) + (c_in,) + spatial
    shapes = (x, (c_in, out_per_group) + kernel)
    return shapes + (((groups * out_per_group,),) if bias else ())


@st.composite
def _transpose_geometry(draw, x_shape, w_shape, dims):
    """stride, padding, output_padding and dilation, one entry per spatial dim, the output non-empty."""
    stride, padding, output_padding, dilation = [], [], [], []
    for size, k in zip(x_shape[-dims:], w_shape[2:]):
        s, d = draw(st.integers(1, 3 if dims == 1 else 2)), draw(st.integers(1, 2))  # 2-D outputs stay small
        o = draw(st.integers(0, max(s, d) - 1))
        full = (size - 1) * s + d * (k - 1) + o + 1
        p = draw(st.integers(0, min(2, (full - 1) // 2)))
        stride.append(s)
        padding.append(p)
        output_padding.append(o)
        dilation.append(d)
    return {"stride": tuple(stride), "padding": tuple(padding), "output_padding": tuple(output_padding),
            "dilation": tuple(dilation)}


def transpose_geometry(dims):
    return lambda drawn: _transpose_geometry(drawn[0], drawn[1], dims)


def _transpose(dims):
    """The transposed convolution with a bias; its groups are C_out / (the weight's dimension 1)."""
    def program(lib, F, x, w, b, params):
        fn = F.conv_transpose1d if dims == 1 else F.conv_transpose2d
        return fn(x, w, b, groups=b.shape[0] // w.shape[1], **params)
    return program


def _transpose_no_bias(lib, F, x, w, params):
    """Without a bias, every drawn shape is valid with one group."""
    return F.conv_transpose2d(x, w, None, **params)


case("fold", _transpose(2), transpose_shapes(2), extra={"params": transpose_geometry(2)}, name="conv_transpose2d")
case("matmul", _transpose(2), transpose_shapes(2, batched=False), extra={"params": transpose_geometry(2)},
     name="conv_transpose2d_unbatched")
case("fold", _transpose_no_bias, transpose_shapes(2, bias=False),
     extra={"params": transpose_geometry(2)}, name="conv_transpose2d_no_bias")
case("fold", _transpose(1), transpose_shapes(1), extra={"params": transpose_geometry(1)}, name="conv_transpose1d")
case("fold",
     lambda lib, F, x, w, b, params: grads_of(lib, lambda: (_transpose(2)(lib, F, x, w, b, params) ** 2).sum(),
                                              (x, w, b)),
     transpose_shapes(2).filter(lambda s: s[0][0] * s[0][1] <= 2), extra={"params": transpose_geometry(2)},
     name="conv_transpose2d_double_backward")


@st.composite
def conv1d_shapes(draw, batched=True):
    """x ([N,] C, L), weight (O, C / groups, k), bias (O,); groups 1 or 2, k <= L."""
    groups = draw(st.integers(1, 2))
    per_in, per_out = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    k = draw(st.integers(1, 3))
    x = ((draw(st.integers(1, 2)),) if batched else ()) + (groups * per_in, draw(st.integers(k, 6)))
    return x, (groups * per_out, per_in, k), (groups * per_out,)


def conv1d_geometry(drawn):
    return st.fixed_dictionaries({
        "stride": st.integers(1, 2), "padding": st.sampled_from([0, 1, "valid"]), "dilation": st.just(1),
        "groups": st.just(drawn[0][-2] // drawn[1][1]),
    })


case("conv2d", lambda lib, F, x, w, b, params: F.conv1d(x, w, b, **params), conv1d_shapes(),
     extra={"params": conv1d_geometry}, name="conv1d")
def _conv1d_same(lib, F, x, w, b, params):
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Using padding='same'")  # PyTorch's note on its own speed
        return F.conv1d(x, w, b, padding="same", groups=params["groups"])


case("conv2d", _conv1d_same, conv1d_shapes(batched=False), extra={"params": conv1d_geometry},
     name="conv1d_same_unbatched")
