"""``F.batch_norm`` (``minigrad.ops.normalization.BatchNorm``) against PyTorch, path by path.

The op's first-order backward works on arrays and computes only what the
inputs that need a gradient ask for; its recorded backward (``create_graph``)
uses Tensor ops. These tests draw which of input, weight and bias exist and
need a gradient, training or evaluation mode, the rank of the input, float32
or float64 and inputs far from zero mean (where centering must happen before
any product), and compare the output, every gradient and the running
statistics with PyTorch; then float16 and second-order gradients.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad as mg
import minigrad.nn.functional as F

LIBS = ((mg, F), (torch, torch.nn.functional))


@st.composite
def batch_norm_problems(draw):
    """Arrays and flags of one batch-norm call (see the module docstring)."""
    spatial = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))
    n, c = draw(st.integers(2, 4)), draw(st.integers(1, 3))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    offset = draw(st.sampled_from([0.0, 100.0]))
    x = rng.standard_normal((n, c) + spatial) * draw(st.sampled_from([0.5, 3.0])) + offset
    weight = rng.standard_normal(c) if draw(st.booleans()) else None
    bias = rng.standard_normal(c) if draw(st.booleans()) else None
    training = draw(st.booleans())
    running = (rng.standard_normal(c) + offset, rng.random(c) + 0.5) if not training or draw(st.booleans()) else None
    needs = [draw(st.booleans()), weight is not None and draw(st.booleans()), bias is not None and draw(st.booleans())]
    dtype = draw(st.sampled_from(["float32", "float64"]))
    return x, weight, bias, running, training, needs, dtype


def _run(lib, functional, problem):
    x, weight, bias, running, training, needs, dtype = problem
    dt = getattr(lib, dtype)
    leaves = [None if a is None else lib.tensor(a, dtype=dt, requires_grad=need)
              for a, need in zip((x, weight, bias), needs)]
    stats = [None, None] if running is None else [lib.tensor(a, dtype=dt) for a in running]
    out = functional.batch_norm(leaves[0], stats[0], stats[1], leaves[1], leaves[2], training=training,
                                momentum=0.3, eps=1e-4)
    if out.requires_grad:
        upstream = np.random.default_rng(5).standard_normal(tuple(out.shape))
        out.backward(lib.tensor(upstream, dtype=dt))
    grads = [None if t is None or t.grad is None else t.grad.numpy() for t in leaves]
    return out.detach().numpy(), grads, [None if s is None else s.numpy() for s in stats]


def _float32_tolerance(problem) -> dict:
    """2e-4, widened for inputs whose float32 rounding is large next to their channel's spread.

    Far from zero mean (offset 100) two close values keep only a few digits of
    their difference after rounding to float32 (ulp 7.6e-6 at 100), and any two
    correct implementations then differ by that rounding over the channel's std.
    """
    x, training = problem[0], problem[4]
    axes = (0,) + tuple(range(2, x.ndim))
    spread = np.sqrt(x.var(axis=axes).min() + 1e-4) if training else 1.0
    condition = np.abs(x).max() / spread
    tolerance = 2e-4 + 16 * np.finfo(np.float32).eps * condition
    return {"rtol": tolerance, "atol": tolerance}


@settings(max_examples=40, deadline=None)
@given(problem=batch_norm_problems())
def test_batch_norm_matches_pytorch_for_every_combination_of_inputs(problem):
    mine, theirs = (_run(lib, functional, problem) for lib, functional in LIBS)
    tol = {"rtol": 1e-9, "atol": 1e-9} if problem[-1] == "float64" else _float32_tolerance(problem)
    assert mine[0].dtype == theirs[0].dtype
    np.testing.assert_allclose(mine[0], theirs[0], **tol)
    for name, got, expected in zip(("input", "weight", "bias"), mine[1], theirs[1]):
        assert (got is None) == (expected is None), name
        if expected is not None:
            assert got.dtype == expected.dtype, name
            np.testing.assert_allclose(got, expected, **tol, err_msg=name)
    for got, expected in zip(mine[2], theirs[2]):
        if expected is not None:
            np.testing.assert_allclose(got, expected, **tol)


@pytest.mark.parametrize("training", [True, False])
def test_float16_batch_norm_follows_pytorch(training):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((6, 3, 4, 4)) * 2 + 5).astype(np.float16)
    weight, bias = rng.standard_normal(3).astype(np.float16), rng.standard_normal(3).astype(np.float16)
    results = []
    for lib, functional in LIBS:
        xt, wt, bt = (lib.tensor(a, requires_grad=True) for a in (x, weight, bias))
        mean, var = lib.tensor(np.full(3, 4.0, np.float16)), lib.tensor(np.full(3, 3.0, np.float16))
        out = functional.batch_norm(xt, mean, var, wt, bt, training=training)
        (out * lib.tensor(np.linspace(-1, 1, out.numel()).reshape(out.shape).astype(np.float16))).sum().backward()
        results.append([out.detach().numpy(), xt.grad.numpy(), wt.grad.numpy(), bt.grad.numpy(), mean.numpy(),
                        var.numpy()])
    for got, expected in zip(*results):
        assert got.dtype == expected.dtype == np.float16
        np.testing.assert_allclose(got.astype(np.float64), expected.astype(np.float64), rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_second_order_gradients_match_pytorch(training):
    rng = np.random.default_rng(2)
    arrays = (rng.standard_normal((3, 2, 3)) * 2 + 1, rng.standard_normal(2), rng.standard_normal(2))
    upstream = rng.standard_normal((3, 2, 3))
    results = []
    for lib, functional in LIBS:
        x, w, b = (lib.tensor(a, dtype=lib.float64, requires_grad=True) for a in arrays)
        mean, var = lib.tensor(np.array([0.5, -1.0])), lib.tensor(np.array([2.0, 0.7]))
        out = functional.batch_norm(x, mean, var, w, b, training=training)
        grads = lib.autograd.grad((out * lib.tensor(upstream)).sum(), (x, w), create_graph=True)
        second = lib.autograd.grad((grads[0] ** 2).sum() + (grads[1] ** 3).sum(), (x, w, b), allow_unused=True)
        results.append([g.detach().numpy() for g in grads] + [None if g is None else g.numpy() for g in second])
    for got, expected in zip(*results):
        if expected is None:  # the bias does not reach the gradients it is differentiated through
            assert got is None or not np.any(got)
        else:
            np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-9)
