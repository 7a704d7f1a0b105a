"""In-place ops, views and version counters, with PyTorch as the oracle.

* PyTorch's errors: an in-place op on a leaf that requires grad (or a view of
  one), a saved input or output overwritten before backward, a result dtype
  that does not fit, an expanded (overlapping) destination.
* The silent failures of the issue: ``p -= lr * p.grad`` must update the
  parameter itself (the manual SGD loop), ``+=`` keeps the object.
* Random programs: a small interpreter runs the same drawn sequence of view
  creations, in-place writes (through the tensor or a view) and
  out-of-place ops in minigrad and in PyTorch, then compares values, the
  leaves' gradients and ``_version``, or that both raised.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import minigrad as mg
from minigrad import nn

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# -- PyTorch's errors ---------------------------------------------------------------------


def test_inplace_on_leaf_that_requires_grad_raises_pytorch_error():
    w = mg.randn(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        w += 1
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
        w[0].mul_(2)
    with mg.no_grad():
        w -= 1  # allowed, as in PyTorch
    assert w._version == 1


def test_saved_input_overwritten_raises_with_versions():
    x = mg.randn(2, 1, 3, 3, requires_grad=True)
    y = x * 1
    z = y * y
    for _ in range(8):
        y.add_(0)
    with pytest.raises(RuntimeError, match=r"\[float32 \(2, 1, 3, 3\)\].*is at version 8; expected version 0"):
        z.sum().backward()


def test_saved_output_overwritten_raises():
    x = mg.randn(4, requires_grad=True)
    y = x.sigmoid()
    y.add_(1)
    with pytest.raises(RuntimeError, match="output 0 of SigmoidBackward, is at version 1; expected version 0"):
        y.sum().backward()


def test_optimizer_step_between_forward_and_backward_raises():
    model = nn.Linear(3, 2)
    optimizer = mg.optim.SGD(model.parameters(), lr=0.1)
    x = mg.randn(4, 3, requires_grad=True)
    out = model(x)
    model(x).sum().backward()
    optimizer.step()  # writes the weight that ``out``'s graph saved
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()


def test_custom_function_saved_tensor_overwritten_raises():
    class Cube(mg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * 3 * x * x

    y = mg.randn(3, requires_grad=True) * 1
    out = Cube.apply(y)
    y.mul_(2)
    with pytest.raises(RuntimeError, match="saved tensor 0 of CubeBackward, is at version 1; expected version 0"):
        out.sum().backward()


def test_write_through_a_view_is_seen_by_the_saved_base():
    x = mg.randn(3, 4, requires_grad=True)
    y = x * 1
    z = y.exp() * y  # Mul saves y
    y[1:, 0].zero_()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


def test_version_counter_is_shared_by_views_and_detach():
    a = mg.zeros(3, 4)
    v, d, r = a[0], a.detach(), a.reshape(12)
    v.add_(1)
    d.mul_(2)
    r[3] = 5.0
    assert a._version == v._version == d._version == r._version == 3
    assert a.tolist()[0] == [2.0, 2.0, 2.0, 5.0]
    c = a.T.reshape(12)  # NumPy copies here, so it is no view: its own counter
    c.add_(1)
    assert a._version == 3 and c._version == 1


def test_results_that_do_not_fit_raise_like_pytorch():
    i = mg.zeros(3, dtype=mg.int64)
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
        i += 1.5
    f = mg.zeros(3)
    with pytest.raises(RuntimeError, match=r"output with shape \[3\] doesn't match the broadcast shape \[2, 3\]"):
        f.add_(mg.ones(2, 3))
    f += mg.ones(3, dtype=mg.float64)  # same kind: cast back, as in PyTorch
    assert f.dtype == np.float32
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        mg.zeros(2, 3).expand(2, 2, 3).add_(1)


def test_assigning_a_wrong_grad_raises_like_pytorch():
    t = mg.zeros(3)
    with pytest.raises(TypeError, match="assigned grad expected to be a Tensor or None but got grad of type float"):
        t.grad = 0.0
    with pytest.raises(RuntimeError, match="size"):
        t.grad = mg.zeros(4)
    with pytest.raises(RuntimeError, match="dtype"):
        t.grad = mg.zeros(3, dtype=mg.float64)
    t.grad = mg.ones(3)
    t.grad = None
    assert t.grad is None


# -- the silent failures ------------------------------------------------------------------


def test_manual_sgd_with_isub_updates_the_model():
    mg.manual_seed(0)
    model = nn.Linear(4, 2)
    weight = model.weight
    before, version = weight.detach().clone(), weight._version
    x, y = mg.randn(8, 4), mg.randn(8, 2)
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    with mg.no_grad():
        for p in model.parameters():
            p -= 0.1 * p.grad
    assert model.weight is weight
    np.testing.assert_allclose(weight.array, before.array - 0.1 * weight.grad.array, rtol=1e-6)
    assert weight._version == version + 1


def test_augmented_assignment_keeps_the_object_and_its_views():
    t = mg.ones(2, 3)
    row = t[0]
    keep = t
    t += 1
    t *= 3
    t /= 2
    t **= 2
    assert t is keep
    np.testing.assert_array_equal(row.array, np.full(3, 9.0, np.float32))


def test_concurrent_accumulation_into_a_grad_loses_no_update():
    for _ in range(100):
        p = mg.zeros(1000)
        p.grad = mg.zeros(1000)
        grad = p.grad
        g = mg.ones(1000)

        def add(p=p, g=g):
            for _ in range(20):
                p.grad += g

        threads = [threading.Thread(target=add) for _ in range(2)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        assert p.grad is grad
        assert float(p.grad.array.min()) == 40.0  # no whole update lost


def test_leaf_kept_alive_only_by_the_graph_gets_its_hooks_run():
    seen = []

    def make_loss():
        w = mg.randn(3, requires_grad=True)  # nothing outside keeps w
        w.register_hook(lambda g: seen.append(("tensor hook", g.shape)))
        w.register_post_accumulate_grad_hook(lambda p: seen.append(("post accumulate", p.grad.shape)))
        return (w * 2).sum()

    make_loss().backward()
    assert seen == [("tensor hook", (3,)), ("post accumulate", (3,))]


# -- random programs against PyTorch ------------------------------------------------------

SHAPE = (3, 4)

# (name, needs a view target?) -> how to run it on a library ``lib`` over tensors of that library
INPLACE_OPS = ["add_", "sub_", "mul_", "div_", "iadd", "imul", "zero_", "fill_", "copy_", "clamp_", "exp_",
               "tanh_", "masked_fill_", "setitem_slice", "setitem_mask", "neg_", "pow_"]
VIEWS = ["row", "col", "T", "flat", "slice", "elem"]


def _view(lib, t, kind):
    if t.ndim != 2:
        return t.reshape(-1)[1:] if kind in ("row", "slice") else t.reshape(-1)
    if kind == "row":
        return t[-1]
    if kind == "col":
        return t[:, -1]
    if kind == "T":
        return t.transpose(0, 1)
    if kind == "flat":
        return t.reshape(-1)
    if kind == "slice":
        return t[1:, ::2]
    return t[-1, -1]


def _inplace(lib, t, op, other, scalar):
    """Apply one in-place op to ``t`` (``other``: a tensor broadcastable to ``t``)."""
    if op == "add_":
        t.add_(other, alpha=scalar)
    elif op == "sub_":
        t.sub_(other)
    elif op == "mul_":
        t.mul_(other)
    elif op == "div_":
        t.div_(other.abs() + 1)
    elif op == "iadd":
        t += other
    elif op == "imul":
        t *= scalar
    elif op == "zero_":
        t.zero_()
    elif op == "fill_":
        t.fill_(scalar)
    elif op == "copy_":
        t.copy_(other)
    elif op == "clamp_":
        t.clamp_(-0.5, 0.5)
    elif op == "exp_":
        t.tanh_().exp_()
    elif op == "tanh_":
        t.tanh_()
    elif op == "masked_fill_":
        t.masked_fill_(other > 0, scalar)
    elif op == "neg_":
        t.neg_()
    elif op == "pow_":
        t.pow_(2)
    elif op == "setitem_slice":
        if t.ndim:
            t[0] = other[0] if other.ndim else other
        else:
            t.copy_(other)
    elif op == "setitem_mask":
        t[other > 0] = scalar


def _program(lib, leaves, steps):
    """Run the drawn steps; returns (values, leaves) for the comparison."""
    a, b = leaves
    y = a * 1.0
    pool = [y]
    for kind, view, op, which, scalar in steps:
        target = pool[which % len(pool)]
        if kind == "view":
            pool.append(_view(lib, target, view))
            continue
        if kind == "use":  # an out-of-place op that saves its input
            pool.append(target * target.tanh())
            continue
        other = b if target.shape == b.shape else b.reshape(-1)[: target.numel()].reshape(target.shape)
        _inplace(lib, target, op, other, scalar)
    loss = sum((t * (i + 1.0)).sum() for i, t in enumerate(pool))
    loss.backward()
    return [t.detach() for t in pool], [t._version for t in pool]


_steps = st.lists(
    st.tuples(
        st.sampled_from(["view", "inplace", "inplace", "use"]),
        st.sampled_from(VIEWS),
        st.sampled_from(INPLACE_OPS),
        st.integers(0, 20),
        st.sampled_from([0.5, -2.0, 3.0]),
    ),
    min_size=1,
    max_size=8,
)


@SETTINGS
@given(steps=_steps, seed=st.integers(0, 2**16))
def test_random_inplace_programs_match_pytorch(steps, seed):
    rng = np.random.default_rng(seed)
    a0, b0 = rng.standard_normal(SHAPE), rng.standard_normal(SHAPE)
    results = {}
    for name, lib, make in (
        ("minigrad", mg, lambda v: mg.tensor(v, requires_grad=True)),
        ("torch", torch, lambda v: torch.tensor(v, requires_grad=True)),
    ):
        leaves = (make(a0), make(b0))
        try:
            values, versions = _program(lib, leaves, steps)
            results[name] = ("ok", values, versions, [leaf.grad for leaf in leaves])
        except RuntimeError as error:
            results[name] = ("error", _error_kind(str(error)))
    mine, theirs = results["minigrad"], results["torch"]
    assert mine[0] == theirs[0], f"minigrad: {mine[:2]}, PyTorch: {theirs[:2]}"
    if mine[0] == "error":
        assert mine[1] == theirs[1]
        return
    for m, t in zip(mine[1], theirs[1]):
        np.testing.assert_allclose(m.array, t.numpy(), rtol=1e-10, atol=1e-12)
    assert mine[2] == theirs[2], "versions differ"
    for m, t in zip(mine[3], theirs[3]):
        assert (m is None) == (t is None)
        if m is not None:
            np.testing.assert_allclose(m.array, t.numpy(), rtol=1e-9, atol=1e-12)


def _error_kind(message: str) -> str:
    if "modified by an inplace operation" in message:
        return "version"
    if "leaf Variable" in message:
        return "leaf"
    if "more than one element" in message or "unsupported operation" in message:
        return "overlap"
    return message
