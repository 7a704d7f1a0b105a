"""``conv2d`` in each column layout and chunking, against PyTorch (``minigrad.ops.nn.Conv2d``).

The op picks a layout (sample-major or batch-last) for its forward and its
backward separately, and builds the columns in chunks of ``_CHUNK_BYTES``.
Small test shapes would always take one chunk and whatever layout their
shape implies, so these tests force each layout pair and tiny chunks (one
sample or one output row per chunk), and compare outputs and all
gradients with PyTorch in float64. They also check that the layout cases of
``cases_conv.py`` draw shapes on the side their names say.
"""

from __future__ import annotations

from unittest import mock

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad as mg
import minigrad.nn.functional as F
from minigrad.ops import nn as nn_ops
from tests.minigrad.ops import cases_conv


def _run_both(x, w, b, params, needs_x=True):
    """Output and gradients (x, w, b) of a conv2d with a fixed random upstream gradient, both libraries."""
    results = []
    for lib, functional in ((mg, F), (torch, torch.nn.functional)):
        leaves = [lib.tensor(a, dtype=lib.float64, requires_grad=(needs_x or i > 0)) if a is not None else None
                  for i, a in enumerate((x, w, b))]
        out = functional.conv2d(*leaves, **params)
        upstream = np.random.default_rng(3).standard_normal(tuple(out.shape))
        out.backward(lib.tensor(upstream, dtype=lib.float64))
        grads = [None if t is None or t.grad is None else t.grad.detach().numpy() for t in leaves]
        results.append((out.detach().numpy(), grads))
    return results


def _assert_same(mine, theirs):
    (out, grads), (expected_out, expected_grads) = mine, theirs
    np.testing.assert_allclose(out, expected_out, rtol=1e-10, atol=1e-10)
    for name, got, expected in zip(("x", "weight", "bias"), grads, expected_grads):
        if expected is None:
            assert got is None, name
        else:
            np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-10, err_msg=name)


@st.composite
def conv_problems(draw):
    """(x, weight, bias or None, params) of a valid convolution, the output non-empty."""
    groups = draw(st.integers(1, 2))
    per_in, per_out = draw(st.integers(1, 3)), draw(st.integers(1, 2))
    kh, kw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    stride = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    dilation = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    padding = (draw(st.integers(0, 2)), draw(st.integers(0, 2)))
    # The smallest input the dilated kernel fits in once padded.
    low_h = max(1, dilation[0] * (kh - 1) + 1 - 2 * padding[0])
    low_w = max(1, dilation[1] * (kw - 1) + 1 - 2 * padding[1])
    n = draw(st.integers(1, 3))
    h, w = draw(st.integers(low_h, low_h + 5)), draw(st.integers(low_w, low_w + 5))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    x = rng.standard_normal((n, groups * per_in, h, w))
    weight = rng.standard_normal((groups * per_out, per_in, kh, kw))
    bias = rng.standard_normal(groups * per_out) if draw(st.booleans()) else None
    params = {"stride": stride, "padding": padding, "dilation": dilation, "groups": groups}
    return x, weight, bias, params


@settings(max_examples=25, deadline=None)
@given(problem=conv_problems(), forward_last=st.booleans(), backward_last=st.booleans(),
       chunk_bytes=st.sampled_from([1, 200, nn_ops._CHUNK_BYTES]), needs_x=st.booleans())
def test_every_layout_and_chunking_matches_pytorch(problem, forward_last, backward_last, chunk_bytes, needs_x):
    x, w, b, params = problem
    layouts = {False: forward_last, True: backward_last}
    with (mock.patch.object(nn_ops, "_use_batch_last", lambda *shapes, backward: layouts[backward]),
          mock.patch.object(nn_ops, "_CHUNK_BYTES", chunk_bytes)):
        mine, theirs = _run_both(x, w, b, params, needs_x)
    _assert_same(mine, theirs)


def test_lenet_sized_convolutions_match_pytorch_in_their_chosen_layouts():
    """The shapes the LeNet benchmark uses (several chunks each), float64, as the heuristic picks them."""
    rng = np.random.default_rng(0)
    for x_shape, w_shape, padding in (((64, 1, 28, 28), (6, 1, 5, 5), 2), ((64, 6, 14, 14), (16, 6, 5, 5), 0)):
        x, w, b = rng.standard_normal(x_shape), rng.standard_normal(w_shape), rng.standard_normal(w_shape[0])
        mine, theirs = _run_both(x, w, b, {"padding": padding})
        _assert_same(mine, theirs)


@pytest.mark.parametrize("forward_last", [False, True])
def test_empty_batch_gives_empty_output_and_zero_weight_gradients(forward_last):
    x, w, b = np.zeros((0, 2, 5, 5)), np.ones((3, 2, 3, 3)), np.ones(3)
    with mock.patch.object(nn_ops, "_use_batch_last", lambda *shapes, backward: forward_last):
        mine, theirs = _run_both(x, w, b, {"padding": 1})
    assert mine[0].shape == (0, 3, 5, 5)
    _assert_same(mine, theirs)


def test_input_without_gradient_gets_none_and_weights_still_learn():
    rng = np.random.default_rng(1)
    mine, theirs = _run_both(rng.standard_normal((2, 3, 6, 6)), rng.standard_normal((4, 3, 3, 3)), None,
                             {"stride": 2}, needs_x=False)
    assert mine[1][0] is None
    _assert_same(mine, theirs)


def _layouts(x_shape, w_shape, params):
    """(forward, backward) layouts the heuristic picks for a conv2d call: True for batch-last."""
    stride, padding, dilation = (params.get(k, d) for k, d in (("stride", 1), ("padding", 0), ("dilation", 1)))
    (sh, sw), (ph, pw), (dh, dw) = (v if isinstance(v, tuple) else (v, v) for v in (stride, padding, dilation))
    out = (nn_ops.conv_output_size(x_shape[2], w_shape[2], sh, 2 * ph, dh),
           nn_ops.conv_output_size(x_shape[3], w_shape[3], sw, 2 * pw, dw))
    return tuple(nn_ops._use_batch_last(x_shape, w_shape, out, backward=b) for b in (False, True))


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_layout_cases_draw_shapes_on_their_side(data):
    """The shapes and geometries the layout cases of ``cases_conv.py`` draw get the layouts their names say."""
    for shapes, geometry, expected in ((cases_conv.batch_last_shapes(), cases_conv.batch_last_geometry, (True, True)),
                                       (cases_conv.sample_major_shapes(), cases_conv.sample_major_geometry,
                                        (False, False)),
                                       (cases_conv.mixed_layout_shapes(), lambda drawn: st.just({}), (False, True))):
        x, w, _ = data.draw(shapes)
        params = data.draw(geometry((x, w)))
        assert _layouts(x, w, params) == expected, (x, w, params)


def test_forward_keeps_no_column_matrix():
    """The backward rebuilds the columns; the graph holds only the inputs (memory of a training step)."""
    x = mg.randn(2, 3, 8, 8, requires_grad=True)
    w = mg.randn(4, 3, 3, 3, requires_grad=True)
    out = F.conv2d(x, w)
    node = out.grad_fn
    held = [v for v in vars(node).values() if isinstance(v, np.ndarray) and v.size >= 2 * 3 * 9 * 36]
    assert held == []
