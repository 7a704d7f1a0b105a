"""``minigrad.graph.walk``: every reachable node once, roots included, deep graphs without recursion."""

from __future__ import annotations

import minigrad as mg
from minigrad.function import AccumulateGrad
from minigrad.graph import walk


def test_walk_yields_each_reachable_node_once():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    y = x * x  # both inputs of MulBackward reach the same accumulator
    z = (y + y).sum()
    nodes = list(walk([z.grad_fn]))
    assert len(nodes) == len(set(nodes))
    names = sorted(type(n).__name__ for n in nodes)
    assert names.count("AccumulateGrad") == 1
    assert z.grad_fn in nodes and y.grad_fn in nodes
    assert any(type(n) is AccumulateGrad and n.variable is x for n in nodes)


def test_walk_skips_none_roots_and_constant_inputs():
    x = mg.tensor([1.0], requires_grad=True)
    y = x * mg.tensor([3.0])  # the constant input has no edge
    assert len(list(walk([None, y.grad_fn]))) == 2


def test_walk_handles_graphs_deeper_than_the_recursion_limit():
    x = mg.tensor([1.0], requires_grad=True)
    y = x
    for _ in range(5000):
        y = y + 1.0
    assert len(list(walk([y.grad_fn]))) == 5001
