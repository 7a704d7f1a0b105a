"""Op cases for the two column layouts of ``conv2d`` (``minigrad.ops.nn.Conv2d``).

The convolution builds its im2col columns sample-major or batch-last, a
choice ``_use_batch_last`` makes from the shapes, separately for the forward
and the backward. The general cases of ``cases_nn.py`` draw shapes that may
land on either side; each case here draws only shapes (and geometries) that
land on a known side, so every layout pair is checked by gradcheck and
against PyTorch on every run. ``test_conv_layouts.py`` asserts that these
strategies do land where their names say.

* ``conv2d_batch_last``: a 3x3 kernel over narrow images; both passes batch-last.
* ``conv2d_sample_major``: a 1-row kernel over wide, short images; both passes sample-major.
* ``conv2d_mixed_layouts``: a 2x2 kernel over 2-row images of width 6 to 8;
  the forward sample-major, the backward batch-last.
"""

# ruff: noqa: N803  (programs take the functional module as ``F``, as in ``import ... as F``)
from __future__ import annotations

from hypothesis import strategies as st

from tests.minigrad.ops.op_cases import case


@st.composite
def batch_last_shapes(draw):
    """x (N, C, H, W) with H, W <= 5, weight (O, C/groups, 3, 3), bias (O,)."""
    groups, per_in, per_out = draw(st.integers(1, 2)), draw(st.integers(1, 2)), draw(st.integers(1, 2))
    x = (draw(st.integers(1, 2)), groups * per_in, draw(st.integers(1, 5)), draw(st.integers(1, 5)))
    return x, (groups * per_out, per_in, 3, 3), (groups * per_out,)


def batch_last_geometry(drawn):
    """Stride 1 or 2; dilation 1 with padding 1, or dilation 2 with padding 2 (the kernel always fits)."""
    return st.builds(lambda stride, dilation: {"stride": stride, "padding": dilation, "dilation": dilation,
                                               "groups": drawn[0][1] // drawn[1][1]},
                     st.integers(1, 2), st.integers(1, 2))


@st.composite
def sample_major_shapes(draw):
    """x (N, C, H <= 2, 18 <= W <= 22), weight (O, C/groups, 1, kw <= 2) with at least 2 output channels."""
    groups = draw(st.integers(1, 2))
    per_in, per_out = (1, 2) if groups == 2 else (draw(st.integers(1, 2)), draw(st.integers(2, 3)))
    x = (draw(st.integers(1, 2)), groups * per_in, draw(st.integers(1, 2)), draw(st.integers(18, 22)))
    return x, (groups * per_out, per_in, 1, draw(st.integers(1, 2))), (groups * per_out,)


def sample_major_geometry(drawn):
    """Stride 1, width padding 0 or 1, width dilation 1 or 2."""
    return st.builds(lambda pad, dilation: {"stride": 1, "padding": (0, pad), "dilation": (1, dilation),
                                            "groups": drawn[0][1] // drawn[1][1]},
                     st.integers(0, 1), st.integers(1, 2))


@st.composite
def mixed_layout_shapes(draw):
    """x (N, 1, 2, 6 <= W <= 8), weight (O <= 2, 1, 2, 2), bias (O,)."""
    out = draw(st.integers(1, 2))
    return (draw(st.integers(1, 3)), 1, 2, draw(st.integers(6, 8))), (out, 1, 2, 2), (out,)


def _conv(lib, F, x, w, b, params):
    return F.conv2d(x, w, b, **params)


case("conv2d", _conv, batch_last_shapes(), extra={"params": batch_last_geometry}, name="conv2d_batch_last")
case("conv2d", _conv, sample_major_shapes(), extra={"params": sample_major_geometry}, name="conv2d_sample_major")
case("conv2d", _conv, mixed_layout_shapes(), extra={"params": lambda drawn: st.just({})},
     name="conv2d_mixed_layouts")
