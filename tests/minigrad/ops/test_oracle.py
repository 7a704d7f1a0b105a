"""minigrad against PyTorch as oracle, on the same float64 data.

Three kinds of checks:

* every op case: forward outputs (values, shapes, dtypes, requires_grad)
  within 1e-10 relative, every input gradient (for a drawn upstream
  gradient) within 1e-8;
* gradients at kinks and ties (abs and relu at 0, clamp at its bounds,
  max/min with equal elements), where finite differences cannot be used but
  PyTorch's conventions must be matched exactly;
* random programs: a small interpreter draws a sequence of ops over a pool of
  same-shape tensors, each op reading earlier results, sums everything to a
  scalar, and compares the gradients (optionally second order, through a
  backward recorded with ``create_graph=True``).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as torch_F
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minigrad as mg
import minigrad.nn.functional as mg_F
from minigrad import backend
from tests.minigrad.ops.op_cases import CASES, load_all_cases

FORWARD_RTOL = 1e-10
GRAD_RTOL = 1e-8
# Absolute slack for entries that cancel to about zero (x - mean(x), second-order terms):
# a few thousand ulps of the array's own scale, so a true zero computed as 1e-13 passes.
ATOL = 1e-11

load_all_cases()  # every cases_*.py module appends its cases to CASES

SETTINGS = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _outputs(result) -> tuple:
    """A program's result as a tuple of tensors (max/min with dim give two)."""
    return tuple(result) if isinstance(result, tuple) else (result,)


def _as_numpy(t):
    if isinstance(t, torch.Tensor):
        return t.detach().numpy()
    return backend.to_numpy(t.array)


def _assert_close(mine, theirs, rtol, what, atol=None):
    mine, theirs = _as_numpy(mine), _as_numpy(theirs)
    assert mine.shape == theirs.shape, f"{what}: shape {mine.shape}, PyTorch {theirs.shape}"
    assert mine.dtype == theirs.dtype, f"{what}: dtype {mine.dtype}, PyTorch {theirs.dtype}"
    scale = float(np.abs(theirs).max()) if theirs.size and theirs.dtype.kind in "fc" else 1.0
    atol = ATOL * max(1.0, scale) if atol is None else atol
    np.testing.assert_allclose(mine, theirs, rtol=rtol, atol=atol, err_msg=what)


def _assert_grads_match(mg_inputs, torch_inputs, atol=None):
    for i, (m, t) in enumerate(zip(mg_inputs, torch_inputs)):
        if t.grad is None:
            assert m.grad is None, f"input {i}: PyTorch computes no gradient, minigrad does"
        else:
            assert m.grad is not None, f"input {i}: minigrad computes no gradient, PyTorch does"
            _assert_close(m.grad, t.grad, GRAD_RTOL, f"gradient of input {i}", atol)


def _differentiable(outputs):
    return [o for o in outputs if o.requires_grad]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.label)
@SETTINGS
@given(data=st.data())
def test_case_matches_torch(case, device, examples, data):
    example = data.draw(examples(case), label="example")
    mg_inputs = example.minigrad_inputs(device)
    torch_inputs = example.torch_inputs()
    mg_out = _outputs(example.run(case, mg, mg_F, mg_inputs))
    torch_out = _outputs(example.run(case, torch, torch_F, torch_inputs))

    assert len(mg_out) == len(torch_out)
    for k, (m, t) in enumerate(zip(mg_out, torch_out)):
        _assert_close(m, t, FORWARD_RTOL, f"output {k}")
        assert m.requires_grad == t.requires_grad, f"output {k}: requires_grad differs from PyTorch"

    torch_diff = _differentiable(torch_out)
    if not torch_diff:
        return
    if all(t.numel() == 0 for t in torch_diff):
        # Nothing flows back from an empty output: every input gradient is zero. PyTorch's reflect-pad backward
        # returns uninitialized memory then (torch 2.13), so the answer is checked against zero, not PyTorch.
        mg.autograd.backward(_differentiable(mg_out), [mg.zeros(*t.shape, dtype=mg.float64, device=device)
                                                        for t in torch_diff])
        for i, m in enumerate(mg_inputs):
            if m.grad is not None:
                assert not np.any(_as_numpy(m.grad)), f"gradient of input {i}: not zero for an empty output"
        return
    seeds = [
        data.draw(hnp.arrays(np.float64, tuple(t.shape), elements=st.floats(-1, 1)), label=f"seed {k}")
        for k, t in enumerate(torch_diff)
    ]
    torch.autograd.backward(torch_diff, [torch.tensor(s) for s in seeds])
    mg.autograd.backward(
        _differentiable(mg_out), [mg.tensor(s, dtype=mg.float64, device=device) for s in seeds]
    )
    _assert_grads_match(mg_inputs, torch_inputs, case.grad_atol)


# -- kinks and ties: PyTorch's conventions -------------------------------------------------------

KINKS = {
    "abs_at_zero": (lambda lib, a: a.abs(), [-1.0, 0.0, 0.0, 2.0]),
    "relu_at_zero": (lambda lib, a: a.relu(), [-1.0, 0.0, 0.5]),
    "clamp_at_bounds": (lambda lib, a: a.clamp(-1.0, 1.0), [-2.0, -1.0, 0.0, 1.0, 3.0]),
    "clamp_min_at_bound": (lambda lib, a: a.clamp(min=0.0), [-1.0, 0.0, 1.0]),
    "max_all_ties": (lambda lib, a: a.max(), [[1.0, 3.0, 3.0], [3.0, 0.0, -1.0]]),
    "min_all_ties": (lambda lib, a: a.min(), [[1.0, -3.0, 3.0], [-3.0, 0.0, -3.0]]),
    "max_dim_ties": (lambda lib, a: a.max(1), [[2.0, 2.0, 1.0], [0.0, 5.0, 5.0]]),
    "min_dim_ties": (lambda lib, a: a.min(0, keepdim=True), [[2.0, 2.0, 1.0], [2.0, 5.0, 1.0]]),
    "where_equal": (lambda lib, a: lib.where(a >= 0, a, -a), [-1.0, 0.0, 1.0]),
    "pow_zero_base": (lambda lib, a: a**2 + a**3, [0.0, 1.0]),
    "pow_zero_exponent_tensor": (lambda lib, a: a ** (a - a.detach()), [0.0, 1.0, 2.0]),
    "pow_zero_base_tensor": (lambda lib, a: (a * 0) ** a + 0.0 ** a, [0.0, 1.0, 2.0]),
}


@pytest.mark.parametrize("name", KINKS)
def test_kink_gradient_matches_torch(name, device):
    program, values = KINKS[name]
    m = mg.tensor(values, dtype=mg.float64, device=device, requires_grad=True)
    t = torch.tensor(values, dtype=torch.float64, requires_grad=True)
    mg_out, torch_out = _outputs(program(mg, m)), _outputs(program(torch, t))
    for k, (mo, to) in enumerate(zip(mg_out, torch_out)):
        _assert_close(mo, to, 0, f"output {k}")
    mg_out[0].sum().backward()
    torch_out[0].sum().backward()
    _assert_close(m.grad, t.grad, 0, "gradient")


# -- random programs ------------------------------------------------------------------------------------


def _reduce_ops(ndim):
    """Ops that reduce along a dim and broadcast back, so values mix across elements."""
    ops = []
    for d in range(-ndim, ndim):
        ops += [
            (f"center{d}", 1, lambda lib, x, d=d: x - x.mean(d, keepdim=True)),
            (f"gate_sum{d}", 2, lambda lib, x, y, d=d: x * y.sum(d, keepdim=True).tanh()),
            (f"max{d}", 1, lambda lib, x, d=d: x.max(d, keepdim=True).values * x),
        ]
    return ops


PROGRAM_OPS = [
    ("neg", 1, lambda lib, x: -x),
    ("tanh", 1, lambda lib, x: x.tanh()),
    ("sigmoid", 1, lambda lib, x: lib.sigmoid(x)),
    ("relu", 1, lambda lib, x: x.relu()),
    ("abs", 1, lambda lib, x: x.abs()),
    ("exp_tanh", 1, lambda lib, x: x.tanh().exp()),
    ("log1p_sq", 1, lambda lib, x: (x * x + 1).log()),
    ("sqrt1p_sq", 1, lambda lib, x: (x * x + 1).sqrt()),
    ("square", 1, lambda lib, x: x**2),
    ("clamp", 1, lambda lib, x: x.clamp(-1.0, 1.0)),
    ("affine", 1, lambda lib, x: 0.5 * x - 1.5),
    ("add", 2, lambda lib, x, y: x + y),
    ("sub", 2, lambda lib, x, y: x - y),
    ("mul", 2, lambda lib, x, y: x * y),
    ("div", 2, lambda lib, x, y: x / (y * y + 1)),
    ("pow", 2, lambda lib, x, y: (x * x + 1) ** y.tanh()),
    ("where", 2, lambda lib, x, y: lib.where(x > y, x, y * 2)),
    ("mean_scale", 2, lambda lib, x, y: x * y.mean()),
    ("reshape", 1, lambda lib, x: x.reshape(-1).exp().reshape(x.shape)),
    ("unsqueeze_squeeze", 1, lambda lib, x: x.unsqueeze(0).squeeze(0) * 3),
]


@st.composite
def programs(draw):
    """A shape, input values, and steps ``(op name, arity, op, pool indices)``.

    Step k reads tensors from the pool of the inputs and the results of steps
    before it (recent ones preferred), so values are reused downstream.
    """
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=3))
    num_inputs = draw(st.integers(1, 3))
    values = [draw(hnp.arrays(np.float64, shape, elements=st.floats(-2, 2))) for _ in range(num_inputs)]
    ops = PROGRAM_OPS + _reduce_ops(len(shape))
    steps = []
    for k in range(draw(st.integers(1, 8))):
        pool = num_inputs + k
        name, arity, op = draw(st.sampled_from(ops))
        args = tuple(draw(st.integers(0, pool - 1)) for _ in range(arity))
        steps.append((name, op, args))
    double = draw(st.booleans())
    return values, steps, double


def _run_program(lib, inputs, steps, double):
    """Run the steps, sum every pool entry into a scalar, and return the value to backward.

    With ``double``, that value is the squared norm of the first-order
    gradients (taken with ``create_graph=True``), so backward goes through
    every op's backward a second time.
    """
    pool = list(inputs)
    for _, op, args in steps:
        pool.append(op(lib, *(pool[i] for i in args)))
    loss = sum(x.sum() for x in pool)
    if not double:
        return loss
    grads = lib.autograd.grad(loss, inputs, create_graph=True, allow_unused=True)
    return sum((g * g).sum() for g in grads if g is not None) + loss


@settings(SETTINGS, max_examples=40)
@given(program=programs())
def test_random_program_matches_torch(program, device):
    values, steps, double = program
    mg_inputs = [mg.tensor(v, dtype=mg.float64, device=device, requires_grad=True) for v in values]
    torch_inputs = [torch.tensor(v, requires_grad=True) for v in values]
    mg_loss = _run_program(mg, mg_inputs, steps, double)
    torch_loss = _run_program(torch, torch_inputs, steps, double)
    _assert_close(mg_loss, torch_loss, FORWARD_RTOL, f"loss of {[s[0] for s in steps]}")
    mg_loss.backward()
    torch_loss.backward()
    _assert_grads_match(mg_inputs, torch_inputs)
