"""The backward executor: graph shapes, hooks, callbacks, retained graphs, errors."""

from __future__ import annotations

import gc

import numpy as np
import pytest
import torch

import minigrad as mg
from minigrad import engine
from minigrad.function import AccumulateGrad


def leaf(values, dtype=mg.float64):
    return mg.tensor(values, dtype=dtype, requires_grad=True)


def torch_leaf(t):
    return torch.tensor(t.array, requires_grad=True)


def test_diamond_sums_both_paths():
    x = leaf([1.0, 2.0, 3.0])
    a = x * 2
    b = x.exp()
    (a * b).sum().backward()
    tx = torch_leaf(x)
    ((tx * 2) * tx.exp()).sum().backward()
    np.testing.assert_allclose(x.grad.array, tx.grad.numpy(), rtol=1e-12)


def test_shared_subexpression_runs_once_with_summed_gradient():
    x = leaf([0.5, -1.5])
    shared = x.tanh()
    calls = []
    shared.register_hook(lambda g: calls.append(g.array.copy()))
    (shared * 3 + shared * shared).sum().backward()
    assert len(calls) == 1, "a node reached by two paths must run once, with the gradients summed"
    expected = 3 + 2 * np.tanh(x.array)
    np.testing.assert_allclose(calls[0], expected, rtol=1e-12)


def test_leaf_used_100_times_accumulates_once():
    x = leaf([1.0, -2.0])
    fired = []
    x.register_post_accumulate_grad_hook(lambda p: fired.append(p.grad.array.copy()))
    total = x * 0
    for i in range(100):
        total = total + x * float(i)
    total.sum().backward()
    assert len(fired) == 1
    np.testing.assert_allclose(x.grad.array, [sum(range(100))] * 2)


def test_gradients_accumulate_across_backwards():
    x = leaf([1.0, 2.0])
    (x * x).sum().backward()
    (x * 3).sum().backward()
    np.testing.assert_allclose(x.grad.array, 2 * x.array + 3)


def _accumulate_twice(lib, first, second, **backward):
    """``.grad`` after one pass, the same leaf's ``.grad`` after a second, and the first's values now."""
    x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
    first(x).sum().backward(**backward)
    kept = x.grad
    second(x).sum().backward(**backward)
    return kept, x.grad


def test_later_passes_add_into_the_same_grad_tensor_as_pytorch():
    for lib in (mg, torch):
        kept, grad = _accumulate_twice(lib, lambda x: x * 2, lambda x: x * 3)
        assert kept is grad, lib.__name__
        assert kept._version == 1, lib.__name__  # the in-place add is counted
        np.testing.assert_array_equal(np.asarray(kept.tolist()), [5.0, 5.0])


@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")
def test_create_graph_sums_into_a_new_recorded_grad_as_pytorch():
    for lib in (mg, torch):
        kept, grad = _accumulate_twice(lib, lambda x: x * x, lambda x: x * x, create_graph=True)
        assert kept is not grad and grad.grad_fn is not None, lib.__name__
        np.testing.assert_array_equal(np.asarray(kept.tolist()), [2.0, 4.0])  # the first pass's value, unchanged


def test_a_graph_that_saved_grad_fails_after_accumulating_into_it():
    for lib in (mg, torch):
        x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        (x * 2).sum().backward()
        uses_grad = (x.grad * x).sum()  # the product saves .grad for x's gradient
        (x * 3).sum().backward()
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            uses_grad.backward()


def test_read_only_grad_is_replaced_by_the_sum():
    # PyTorch refuses to add into an expanded .grad; minigrad, with no memory to add into, stores the sum anew.
    x = leaf([1.0, 2.0])
    x.grad = mg.tensor([1.0], dtype=mg.float64).expand(2)  # a broadcast view: no memory to add into
    (x * 3).sum().backward()
    np.testing.assert_array_equal(x.grad.array, [4.0, 4.0])


def test_retain_graph_allows_second_backward():
    x = leaf([1.0, 2.0])
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.array, 4 * x.array)


def test_second_backward_without_retain_graph_raises_clearly():
    x = leaf([1.0, 2.0])
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time.*retain_graph=True"):
        y.backward()


def test_saved_values_are_freed_after_backward():
    x = leaf(np.ones(4))
    y = x.exp()
    node = y.grad_fn
    y.sum().backward()
    assert node._saved_outputs is None and node._saved_inputs is None


def test_no_grad_records_nothing():
    x = leaf([1.0])
    with mg.no_grad():
        y = x * 2
        assert not mg.is_grad_enabled()
    assert mg.is_grad_enabled()
    assert y.grad_fn is None and not y.requires_grad
    with mg.no_grad():
        with mg.enable_grad():
            z = x * 2
    assert z.requires_grad and z.grad_fn is not None


def test_no_grad_as_decorator():
    @mg.no_grad()
    def f(t):
        return t * 2

    assert f(leaf([1.0])).grad_fn is None


def test_detach_cuts_the_graph():
    x = leaf([1.0, 2.0])
    y = x * 3
    d = y.detach()
    assert d.grad_fn is None and not d.requires_grad and d.array is y.array
    (y * d).sum().backward()
    np.testing.assert_allclose(x.grad.array, 3 * d.array)


def test_hook_order_tensor_hook_then_accumulate_then_post_hook():
    x = leaf([1.0, 2.0])
    events = []

    def tensor_hook(g):
        events.append(("tensor_hook", None if x.grad is None else x.grad.array.copy()))
        return g * 10

    def post_hook(p):
        events.append(("post_accumulate", p.grad.array.copy()))

    x.register_hook(tensor_hook)
    x.register_post_accumulate_grad_hook(post_hook)
    (x * 2).sum().backward()
    assert [e[0] for e in events] == ["tensor_hook", "post_accumulate"]
    assert events[0][1] is None, "the tensor hook must run before accumulation"
    np.testing.assert_allclose(events[1][1], [20.0, 20.0])
    np.testing.assert_allclose(x.grad.array, [20.0, 20.0])


def test_non_leaf_hook_replaces_gradient_flowing_on():
    x = leaf([1.0, 2.0])
    y = x * 2
    y.register_hook(lambda g: g * 0.5)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.array, [1.0, 1.0])


def test_hook_handle_remove():
    x = leaf([1.0])
    handle = x.register_hook(lambda g: g * 100)
    handle.remove()
    (x * 1).sum().backward()
    np.testing.assert_allclose(x.grad.array, [1.0])


def test_retain_grad_keeps_non_leaf_gradient():
    x = leaf([1.0, 2.0])
    y = x * 3
    y.retain_grad()
    (y * y).sum().backward()
    np.testing.assert_allclose(y.grad.array, 2 * y.array)


def test_final_callbacks_run_after_all_accumulation():
    x = leaf([1.0])
    w = leaf([2.0])
    seen = []

    def post_hook(p):
        engine.queue_callback(lambda: seen.append((x.grad.array.copy(), w.grad.array.copy())))

    x.register_post_accumulate_grad_hook(post_hook)
    (x * w).sum().backward()
    assert len(seen) == 1
    np.testing.assert_allclose(seen[0][0], [2.0])
    np.testing.assert_allclose(seen[0][1], [1.0])


def test_callbacks_queued_by_callbacks_run_too():
    x = leaf([1.0])
    order = []

    def first():
        order.append("first")
        engine.queue_callback(lambda: order.append("second"))

    x.register_hook(lambda g: engine.queue_callback(first))
    (x * 1).sum().backward()
    assert order == ["first", "second"]


def test_queue_callback_outside_backward_raises():
    with pytest.raises(RuntimeError, match="during a backward pass"):
        engine.queue_callback(lambda: None)


def test_ten_thousand_op_chain_no_recursion():
    x = leaf([1.0, 2.0])
    y = x
    for _ in range(10_000):
        y = y * 1.0001
    y.sum().backward()
    np.testing.assert_allclose(x.grad.array, [1.0001**10_000] * 2, rtol=1e-9)


def test_backward_on_non_scalar_needs_gradient():
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match=r"scalar outputs.*shape \(2,\)"):
        (x * 2).backward()
    (x * 2).backward(mg.tensor([1.0, 0.5], dtype=mg.float64))
    np.testing.assert_allclose(x.grad.array, [2.0, 1.0])


def test_backward_gradient_shape_mismatch():
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match=r"shape \(3,\).*shape \(2,\)"):
        (x * 2).backward(mg.ones(3, dtype=mg.float64))


def test_backward_on_tensor_without_grad():
    with pytest.raises(RuntimeError, match="does not require grad"):
        mg.ones(2).sum().backward()


def test_backward_error_names_the_node():
    class Broken(mg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            raise ValueError("boom")

    x = leaf([1.0])
    with pytest.raises(ValueError, match="boom") as info:
        Broken.apply(x).sum().backward()
    assert any("BrokenBackward" in note for note in info.value.__notes__)


def test_autograd_grad_returns_without_accumulating():
    x = leaf([1.0, 2.0])
    w = leaf([3.0, 4.0])
    (gx,) = mg.autograd.grad((x * w).sum(), [x])
    np.testing.assert_allclose(gx.array, w.array)
    assert x.grad is None and w.grad is None


def test_autograd_grad_unused_input():
    x = leaf([1.0])
    unused = leaf([1.0])
    with pytest.raises(RuntimeError, match="allow_unused=True"):
        mg.autograd.grad((x * 2).sum(), [x, unused])
    gx, gu = mg.autograd.grad((x * 2).sum(), [x, unused], allow_unused=True)
    assert gu is None
    np.testing.assert_allclose(gx.array, [2.0])


def test_autograd_grad_of_intermediate():
    x = leaf([1.0, 2.0])
    y = x * 3
    (gy,) = mg.autograd.grad((y * y).sum(), [y])
    np.testing.assert_allclose(gy.array, 2 * y.array)


def test_backward_inputs_limits_accumulation():
    x = leaf([1.0])
    w = leaf([2.0])
    (x * w).sum().backward(inputs=[w])
    assert x.grad is None
    np.testing.assert_allclose(w.grad.array, [1.0])


def test_second_order_tanh_vs_torch():
    x = leaf([0.3, -1.2, 2.0])
    (g,) = mg.autograd.grad(x.tanh().sum(), x, create_graph=True)
    (gg,) = mg.autograd.grad(g.sum(), x)
    tx = torch_leaf(x)
    (tg,) = torch.autograd.grad(tx.tanh().sum(), tx, create_graph=True)
    (tgg,) = torch.autograd.grad(tg.sum(), tx)
    np.testing.assert_allclose(gg.array, tgg.numpy(), rtol=1e-10)


def test_third_order_tanh_vs_torch():
    x = leaf([0.3, -1.2])
    tx = torch_leaf(x)
    g, tg = x.tanh().sum(), tx.tanh().sum()
    for _ in range(3):
        (g,) = mg.autograd.grad(g, x, create_graph=True)
        (tg,) = torch.autograd.grad(tg, tx, create_graph=True)
        g, tg = g.sum(), tg.sum()
    np.testing.assert_allclose(g.item(), tg.item(), rtol=1e-10)


def test_higher_order_small_mlp_vs_torch():
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s) for s in [(5, 3), (3, 4), (4,), (4, 1)]]
    xs, w1, b1, w2 = (leaf(a) for a in arrays)
    txs, tw1, tb1, tw2 = (torch.tensor(a, requires_grad=True) for a in arrays)

    def mlp(lib_tanh, x, a, b, c):
        return lib_tanh(x @ a + b) @ c

    out = mlp(mg.tanh, xs, w1, b1, w2).sum()
    tout = mlp(torch.tanh, txs, tw1, tb1, tw2).sum()
    grads = mg.autograd.grad(out, [w1, b1], create_graph=True)
    tgrads = torch.autograd.grad(tout, [tw1, tb1], create_graph=True)
    penalty = sum((g * g).sum() for g in grads)
    tpenalty = sum((g * g).sum() for g in tgrads)
    penalty.backward()
    tpenalty.backward()
    for p, tp in [(w1, tw1), (b1, tb1), (w2, tw2), (xs, txs)]:
        np.testing.assert_allclose(p.grad.array, tp.grad.numpy(), rtol=1e-9, atol=1e-12)


def test_user_function_forward_backward_and_double_backward():
    class Cube(mg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x * x

    x = leaf([1.0, -2.0])
    y = Cube.apply(x)
    assert y.grad_fn.name() == "CubeBackward"
    (g,) = mg.autograd.grad(y.sum(), x, create_graph=True)
    np.testing.assert_allclose(g.array, 3 * x.array**2)
    g.sum().backward()
    np.testing.assert_allclose(x.grad.array, 6 * x.array)
    assert mg.autograd.gradcheck(Cube.apply, (leaf([0.5, 1.5]),))


def test_user_function_wrong_gradient_shape_is_reported():
    class Bad(mg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.sum()

        @staticmethod
        def backward(ctx, g):
            return g.reshape(1)

    with pytest.raises(RuntimeError, match=r"shape \(1,\).*expected \(3,\)"):
        Bad.apply(leaf([1.0, 2.0, 3.0])).backward()


def test_gradcheck_catches_a_wrong_gradient():
    class WrongExp(mg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.exp()

        @staticmethod
        def backward(ctx, g):
            return g * 2

    with pytest.raises(mg.autograd.GradcheckError, match="mismatch"):
        mg.autograd.gradcheck(WrongExp.apply, (leaf([0.1, 0.2]),))


def test_gradcheck_requires_float64():
    with pytest.raises(TypeError, match="float64"):
        mg.autograd.gradcheck(lambda t: t * 2, (mg.tensor([1.0], requires_grad=True),))


def test_executor_with_extra_roots_and_grad_map():
    """What distributed autograd does: start from a chosen node, accumulate into a map."""
    x = leaf([1.0, 2.0])
    y = x * 3
    grad_map = {}
    node, _ = y._gradient_edge()
    task = engine.GraphTask([node], grad_map=grad_map)
    task.feed(node, mg.tensor([1.0, 1.0], dtype=mg.float64))
    task.finish()
    assert x.grad is None, "with a grad map, .grad must stay untouched"
    np.testing.assert_allclose(grad_map[x].array, [3.0, 3.0])


def test_executor_reports_nodes_that_never_became_ready():
    x = leaf([1.0])
    a = x * 2
    b = x * 3
    node_a, node_b = a.grad_fn, b.grad_fn
    task = engine.GraphTask([node_a, node_b])
    task.feed(node_a, mg.tensor([1.0], dtype=mg.float64))
    unready = task.unready_nodes()
    assert len(unready) == 1 and isinstance(unready[0], AccumulateGrad)
    task.feed(node_b, mg.tensor([1.0], dtype=mg.float64))
    assert task.unready_nodes() == []
    np.testing.assert_allclose(x.grad.array, [5.0])


def test_accumulate_nodes_run_before_other_ready_nodes():
    """Leaf gradients are delivered as soon as they are complete (DDP relies on it)."""
    w1 = leaf(np.ones((3, 3)))
    w2 = leaf(np.ones((3, 3)))
    x = mg.tensor(np.ones((2, 3)), dtype=mg.float64)
    order = []
    w1.register_post_accumulate_grad_hook(lambda p: order.append("w1"))
    w2.register_post_accumulate_grad_hook(lambda p: order.append("w2"))
    h = (x @ w1).tanh()
    out = (h @ w2).tanh().sum()
    out.backward()
    assert order == ["w2", "w1"], "the later layer's gradient is ready first"


def test_graph_is_freed_when_outputs_die():
    x = leaf(np.ones(3))
    y = (x * 2).exp()
    node = y.grad_fn
    import weakref

    ref = weakref.ref(node)
    del y, node
    gc.collect()
    assert ref() is None


def test_requires_grad_on_integer_tensor_raises():
    with pytest.raises(RuntimeError, match="floating point"):
        mg.tensor([1, 2], requires_grad=True)


def test_anomaly_mode_names_the_op_whose_backward_made_nan_or_inf():
    x = leaf([1.0, 0.0, 2.0])
    with np.errstate(divide="ignore", invalid="ignore"), mg.autograd.detect_anomaly():
        y = x.log()  # the line the error must point at
        with pytest.raises(RuntimeError, match=r"'LogBackward' returned inf .* input 0") as info:
            y.sum().backward()
    assert "y = x.log()" in str(info.value)
    assert not mg.autograd.is_anomaly_enabled()


def test_without_anomaly_mode_nan_gradients_pass_silently():
    x = leaf([0.0])
    with np.errstate(divide="ignore"):
        x.log().sum().backward()
    assert np.isinf(x.grad.array).all()


def test_leaf_gradients_never_share_memory_with_other_gradients_or_the_caller():
    a, b = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    seed = mg.tensor([1.0, 1.0], dtype=mg.float64)
    (a + b).backward(seed)
    assert not np.shares_memory(a.grad.array, b.grad.array)
    assert not np.shares_memory(a.grad.array, seed.array)
    x = leaf([1.0, 2.0])
    y = x * 1
    y.retain_grad()
    (y + 0).sum().backward()
    assert not np.shares_memory(x.grad.array, y.grad.array)
    z = leaf([[1.0, 2.0], [3.0, 4.0]])
    z.sum().backward()  # the gradient arrives as a read-only broadcast view
    z.grad.array *= 2  # must be writable
    np.testing.assert_allclose(z.grad.array, 2.0)


def _linear_setup():
    mg.manual_seed(0)
    layer = mg.nn.Linear(3, 4)
    x = mg.tensor(np.arange(6.0, dtype=np.float32).reshape(2, 3))
    return layer, x


def test_grad_destination_receives_the_gradient_without_a_copy():
    from minigrad import engine

    layer, x = _linear_setup()
    layer(x).sum().backward()
    expected = layer.weight.grad.array.copy(), layer.bias.grad.array.copy()
    layer.zero_grad()
    places = {"w": np.full((4, 3), np.nan, np.float32), "b": np.full(4, np.nan, np.float32)}
    calls = []
    handles = [engine.set_grad_destination(layer.weight, lambda: calls.append("w") or places["w"]),
               engine.set_grad_destination(layer.bias, lambda: calls.append("b") or places["b"])]
    try:
        layer(x).sum().backward()
    finally:
        for handle in handles:
            handle.remove()
    assert sorted(calls) == ["b", "w"]
    assert np.shares_memory(layer.weight.grad.array, places["w"])
    assert np.shares_memory(layer.bias.grad.array, places["b"])
    np.testing.assert_array_equal(places["w"], expected[0])
    np.testing.assert_array_equal(places["b"], expected[1])


def test_grad_destination_is_not_offered_when_the_gradient_would_not_be_stored_as_is():
    from minigrad import engine

    layer, x = _linear_setup()
    calls = []
    handle = engine.set_grad_destination(layer.weight, lambda: calls.append(1) or np.zeros((4, 3), np.float32))
    try:
        layer(x).sum().backward()  # first backward: offered
        assert calls == [1]
        layer(x).sum().backward()  # .grad exists: accumulation, no offer
        assert calls == [1]
        layer.zero_grad()
        layer.weight.register_hook(lambda g: g * 2)
        layer(x).sum().backward()  # a tensor hook may change the gradient: no offer
        assert calls == [1]
    finally:
        handle.remove()


def test_grad_destination_of_the_wrong_shape_or_dtype_is_ignored():
    from minigrad import engine

    layer, x = _linear_setup()
    wrong = np.zeros((3, 4), np.float32)
    handle = engine.set_grad_destination(layer.weight, lambda: wrong)
    try:
        layer(x).sum().backward()
    finally:
        handle.remove()
    assert not np.shares_memory(layer.weight.grad.array, wrong)
    assert not wrong.any()
