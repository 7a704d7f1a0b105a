"""The executor's interface shared by local and distributed backward: seed, partial_nodes, current_task; walk(skip=)."""

from __future__ import annotations

import numpy as np

import minigrad as mg
from minigrad import engine
from minigrad.function import AccumulateGrad, FunctionNode
from minigrad.graph import walk


def leaf(values):
    return mg.tensor(np.asarray(values, dtype=np.float64), requires_grad=True)


def ones(n):
    return mg.tensor(np.ones(n), dtype=mg.float64)


class Pair(FunctionNode):
    """(2a, 3a): one node with two outputs"""

    def forward(self, a):
        return a * 2, a * 3

    def backward(self, g0, g1):
        return g0 * 2 + g1 * 3


def test_seed_queues_a_node_once_and_run_ready_runs_it():
    x = leaf([1.0, 2.0])
    a, _ = Pair()(x)
    node = a.grad_fn
    task = engine.GraphTask([node])
    task.seed([(node, 0, ones(2)), (node, 1, ones(2))])
    assert len(task.ready) == 1, "a node seeded for two outputs is queued once"
    task.run_ready()
    task.finish()
    np.testing.assert_allclose(x.grad.array, [5.0, 5.0])


def test_seed_without_a_gradient_still_runs_a_node_that_waits_for_nothing():
    x = leaf([1.0])
    y = x * 2
    task = engine.GraphTask([y.grad_fn])
    task.seed([(y.grad_fn, 0, None)])
    task.run_ready()
    assert x.grad is None, "no gradient was delivered, so none arrives at the leaf"
    assert task.unready_nodes() == [], "but the node ran and released what waited on it"


def test_partial_nodes_names_received_and_expected_counts():
    x = leaf([1.0])
    a, b = x * 2, x * 3
    task = engine.GraphTask([a.grad_fn, b.grad_fn])
    assert task.partial_nodes() == []
    task.feed(a.grad_fn, ones(1))
    [(node, received, expected)] = task.partial_nodes()
    assert isinstance(node, AccumulateGrad) and node.variable is x
    assert (received, expected) == (1, 2)
    task.feed(b.grad_fn, ones(1))
    assert task.partial_nodes() == []


def test_current_task_is_the_running_pass():
    x = leaf([1.0])
    seen = []
    x.register_hook(lambda g: seen.append(engine.current_task()))
    assert engine.current_task() is None
    y = x * 2
    task = engine.run_backward([(y.grad_fn, 0)], [ones(1)])
    assert seen == [task]
    assert engine.current_task() is None


def test_walk_skip_stops_at_a_node_and_what_only_it_reaches():
    x = leaf([1.0])
    y = x.exp()
    z = y * 2 + y.sin()
    skipped = y.grad_fn
    names = {node.name() for node in walk([z.grad_fn], skip=lambda node: node is skipped)}
    assert "ExpBackward" not in names and "AccumulateGrad" not in names
    assert {"AddBackward", "MulBackward", "SinBackward"} <= names
