"""Gradient destinations (``minigrad.destinations``) and who owns a leaf's first gradient (``GraphTask.owned``)."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

import minigrad as mg
from minigrad import engine
from minigrad.function import FunctionNode


def leaf(values):
    return mg.tensor(np.asarray(values, dtype=np.float64), requires_grad=True)


class Twice(FunctionNode):
    """2a; remembers the arrays its backward made (a reference the executor must not care about)"""

    made = []

    def forward(self, a):
        return a * 2

    def backward(self, g):
        grad = g * 2
        Twice.made.append(grad.array)
        return grad


def test_a_new_array_from_a_built_in_backward_becomes_grad_without_a_copy():
    Twice.made.clear()
    x = leaf([1.0, 2.0])
    (Twice()(x) * 1.0).sum().backward()
    assert x.grad.array is Twice.made[0], "the leaf takes over the array the op made for it"


def test_a_user_function_gradient_is_copied_since_it_may_be_kept():
    kept = []

    class Keep(mg.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            kept.append(g * 2)
            return kept[-1]

    x = leaf([1.0, 2.0])
    Keep.apply(x).sum().backward()
    assert not np.shares_memory(x.grad.array, kept[0].array)
    np.testing.assert_allclose(x.grad.array, [2.0, 2.0])


def test_a_gradient_a_leaf_hook_saw_is_copied():
    seen = []
    x = leaf([1.0, 2.0])
    x.register_hook(lambda g: seen.append(g))
    (x * 3).sum().backward()
    assert not np.shares_memory(x.grad.array, seen[0].array)


def test_a_gradient_returned_for_two_inputs_is_not_shared_by_their_leaves():
    class Both(FunctionNode):
        def forward(self, a, b):
            return a + b

        def backward(self, g):
            grad = g * 1.0
            return grad, grad

    a, b = leaf([1.0]), leaf([2.0])
    Both()(a, b).sum().backward()
    assert not np.shares_memory(a.grad.array, b.grad.array)


def test_the_provider_lives_on_the_leafs_node_and_dropping_the_handle_withdraws_it():
    x = leaf(np.ones((2, 2)))
    node = x._gradient_edge()[0]
    handle = engine.set_grad_destination(x, lambda: None)
    assert node.destination is not None
    del handle
    gc.collect()
    assert node.destination is None


def test_nothing_keeps_a_leaf_alive_once_its_destination_is_removed():
    x = leaf(np.ones((2, 2)))
    ref = weakref.ref(x)
    handle = engine.set_grad_destination(x, lambda: None)
    handle.remove()
    handle.remove()  # twice is fine
    del x
    gc.collect()
    assert ref() is None


def test_a_later_destination_replaces_the_earlier_one_and_removing_the_earlier_keeps_it():
    x = leaf(np.ones(2))
    first = engine.set_grad_destination(x, lambda: None)
    second_provider = lambda: None  # noqa: E731
    second = engine.set_grad_destination(x, second_provider)
    first.remove()
    assert x._gradient_edge()[0].destination is second_provider
    second.remove()
    assert x._gradient_edge()[0].destination is None


def test_linear_computes_into_offers_and_plain_tensors_without_them():
    mg.manual_seed(0)
    layer = mg.nn.Linear(3, 2).double()
    x = mg.tensor(np.arange(12.0).reshape(2, 2, 3))  # leading dimensions are flattened
    layer(x).sum().backward()
    expected_w, expected_b = layer.weight.grad.array.copy(), layer.bias.grad.array.copy()
    layer.zero_grad(set_to_none=True)
    w_place, b_place = np.empty((2, 3)), np.empty(2)
    handles = [engine.set_grad_destination(layer.weight, lambda: w_place),
               engine.set_grad_destination(layer.bias, lambda: b_place)]
    layer(x).sum().backward()
    assert layer.weight.grad.array is w_place and layer.bias.grad.array is b_place
    np.testing.assert_allclose(w_place, expected_w)
    np.testing.assert_allclose(b_place, expected_b)
    for handle in handles:
        handle.remove()


# -- adding into .grad (AddInto): each micro-batch's weight gradient added as the GEMM computes it ---------------


def _micro_batches(layer, x, passes=3):
    """Backward ``passes`` micro-batches of ``x`` through ``layer``; the weight's .grad array id after each."""
    arrays = []
    for part in x.chunk(passes):
        (layer(part) ** 2).sum().backward()
        arrays.append(layer.weight.grad.array)
    return arrays


def _torch_micro_batches(layer, x, passes=3):
    import torch  # noqa: PLC0415

    t_layer = torch.nn.Linear(layer.in_features, layer.out_features).double()
    with torch.no_grad():
        t_layer.weight.copy_(torch.from_numpy(layer.weight.array))
        t_layer.bias.copy_(torch.from_numpy(layer.bias.array))
    for part in torch.from_numpy(x.array).chunk(passes):
        (t_layer(part) ** 2).sum().backward()
    return t_layer.weight.grad.numpy(), t_layer.bias.grad.numpy()


def _double_linear():
    mg.manual_seed(1)
    layer = mg.nn.Linear(5, 7).double()
    x = mg.tensor(np.random.default_rng(0).standard_normal((12, 5)))
    return layer, x


def test_later_micro_batches_add_their_weight_gradient_into_grad_as_pytorch():
    layer, x = _double_linear()
    arrays = _micro_batches(layer, x)
    assert arrays[0] is arrays[1] is arrays[2], "the first gradient's memory takes every later one"
    assert layer.weight.grad._version == 2
    weight, bias = _torch_micro_batches(layer, x)
    np.testing.assert_allclose(layer.weight.grad.array, weight, rtol=1e-12)
    np.testing.assert_allclose(layer.bias.grad.array, bias, rtol=1e-12)


def test_the_weight_gradient_is_added_by_one_fused_product(monkeypatch):
    from minigrad import blas  # noqa: PLC0415

    calls = []
    real = blas.add_matmul
    monkeypatch.setattr(blas, "add_matmul", lambda out, a, b: calls.append(out.shape) or real(out, a, b))
    layer, x = _double_linear()
    _micro_batches(layer, x)
    assert calls == [(7, 5), (7, 5)], "passes 2 and 3 add into .grad; pass 1 computes it"


@pytest.mark.parametrize("case", ["tensor hook", "used twice", "create_graph", "read-only grad", "transposed grad"])
def test_adding_into_grad_is_refused_or_laid_out_as_needed(case, monkeypatch):
    from minigrad import blas  # noqa: PLC0415

    calls = []
    real = blas.add_matmul
    monkeypatch.setattr(blas, "add_matmul", lambda out, a, b: calls.append(1) or real(out, a, b))
    layer, x = _double_linear()
    (layer(x) ** 2).sum().backward()
    expected = layer.weight.grad.array * 2
    if case == "tensor hook":
        layer.weight.register_hook(lambda g: g)
    elif case == "read-only grad":
        layer.weight.grad = mg.tensor(layer.weight.grad.array[:1]).expand(7, 5)
        expected = layer.weight.grad.array[:1] + expected / 2
    elif case == "transposed grad":
        layer.weight.grad = mg.tensor(np.ascontiguousarray(layer.weight.grad.array.T)).T
    if case == "used twice":  # the weight's two gradients are summed first: nothing is offered
        out = mg.nn.functional.linear(x, layer.weight, layer.bias) + mg.nn.functional.linear(x, layer.weight)
        (out**2).sum().backward()
        assert calls == []
        return
    (layer(x) ** 2).sum().backward(create_graph=case == "create_graph")
    assert calls == ([1] if case == "transposed grad" else [])
    np.testing.assert_allclose(layer.weight.grad.detach().array, expected, rtol=1e-12)
