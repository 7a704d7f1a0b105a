"""The backward executor: dependency counting and a ready queue.

One ``GraphTask`` is one backward pass:

1. **Count dependencies.** An iterative walk from the root nodes counts, for
   every reachable node, how many edges of reachable nodes point at it: that
   is how many gradients it must wait for.
2. **Seed the roots.** Each root receives its initial gradient; a node whose
   count is zero is pushed on the ready queue.
3. **Drain the ready queue.** Pop the ready node with the highest priority
   (accumulate-grad nodes first, then op nodes newest first, as PyTorch
   does), run the tensor hooks on its gradients, run its backward, free what
   it saved (unless ``retain_graph``), and hand each input gradient to the
   node at the other end of the edge: gradients arriving at one node from
   several paths are summed, and a node whose count drops to zero is ready.
   An accumulate-grad node adds the gradient to its leaf's ``.grad`` (or to
   the task's gradient map) and runs the post-accumulate-grad hooks.
4. **Finish.** Run the callbacks queued during the pass (``queue_callback``),
   in order, including callbacks queued by callbacks.

The distributed autograd engine uses the same class: it builds a task with
extra root nodes (send nodes), feeds gradients as they arrive over RPC
(``feed``), accumulates leaf gradients into a per-context map, and asks
for nodes that never became ready (``unready_nodes``).
"""

from __future__ import annotations

import heapq
import threading
import time

from minigrad.anomaly import _mode as _anomaly
from minigrad.anomaly import check_gradients
from minigrad.function import AccumulateGrad, add_gradients
from minigrad.grad_mode import _state as _grad_state
from minigrad.tensor import Tensor


class _TaskStack(threading.local):
    def __init__(self):
        self.tasks = []


_current = _TaskStack()


_observers = []


def add_node_observer(observer) -> None:
    """Call ``observer(node, start, end)`` (``time.perf_counter`` seconds) after each node runs.

    For timelines (DDP tracing). Costs nothing while no observer is registered.
    """
    _observers.append(observer)


def remove_node_observer(observer) -> None:
    """Stop calling ``observer`` (no error if it was not registered)."""
    if observer in _observers:
        _observers.remove(observer)


# leaf Tensor -> provider() returning an array for its gradient, or None (see set_grad_destination)
_grad_destinations = {}


class _DestinationHandle:
    def __init__(self, leaf):
        self._leaf = leaf

    def remove(self) -> None:
        """Stop offering the destination (no error if it is gone already)."""
        _grad_destinations.pop(self._leaf, None)


def set_grad_destination(leaf, provider):
    """Let the op that computes ``leaf``'s gradient write it straight into ``provider()``.

    Before a node whose backward produces the gradient of ``leaf`` runs, the
    executor calls ``provider()`` when that gradient will become ``leaf.grad``
    as it is: ``leaf.grad`` is None, the leaf has no tensor hooks, this is its
    only gradient in the pass, and no graph is being built for higher-order
    gradients. ``provider`` returns an array shaped like ``leaf`` (or None for
    no offer); ops that support it (``Linear``) then compute the gradient into
    it, and ``leaf.grad`` ends up viewing that memory. This is how DDP has
    gradients land in its buckets without a copy. Other ops ignore the offer.

    Returns a handle whose ``remove()`` withdraws the offer.
    """
    _grad_destinations[leaf] = provider
    return _DestinationHandle(leaf)


def queue_callback(callback) -> None:
    """Run ``callback()`` once the backward pass that is running now finishes.

    Must be called from inside a backward pass (for example from a hook).

    Raises:
        RuntimeError: no backward pass is running in this thread.
    """
    if not _current.tasks:
        raise RuntimeError("queue_callback can only be called during a backward pass (from a hook)")
    _current.tasks[-1].callbacks.append(callback)


class GraphTask:
    """One backward pass over the graph reachable from ``roots``.

    Args:
        roots: graph nodes the pass starts from (``grad_fn`` of the outputs,
            and for distributed autograd, send nodes).
        retain_graph: keep saved values so the graph can be run again.
        create_graph: record the backward computation itself (higher order).
        grad_map: when given, leaf gradients are summed into this dict
            (leaf Tensor -> gradient) instead of ``.grad``; post-accumulate
            hooks do not run.
        capture: when given, a dict ``{(node, output_nr): None}``; the gradient
            arriving for each key is stored there instead of being
            accumulated, and only nodes leading to a key are run
            (``autograd.grad``).
    """

    def __init__(self, roots, *, retain_graph=False, create_graph=False, grad_map=None, capture=None):
        self.retain_graph = retain_graph
        self.create_graph = create_graph
        self.grad_map = grad_map
        self.capture = capture
        self.callbacks = []
        self.buffers = {}
        self.ready = []
        self.dependencies = _count_dependencies(roots)
        self.needed = _nodes_leading_to(roots, capture) if capture is not None else None
        self.offered = None  # id -> array written into a gradient destination (stored, never copied)

    def feed(self, node, grad, output_nr=0) -> None:
        """Deliver ``grad`` for output ``output_nr`` of ``node`` and run all that becomes ready."""
        self._add_to_buffer(node, output_nr, grad)
        if self.dependencies.get(node, 0) == 0:
            heapq.heappush(self.ready, (node.priority, node))
        self.run_ready()

    def run_ready(self) -> None:
        """Run nodes from the ready queue until it is empty."""
        _current.tasks.append(self)
        previous_mode = _grad_state.enabled
        _grad_state.enabled = self.create_graph
        try:
            ready = self.ready
            observers = _observers
            if not observers:
                while ready:
                    _, node = heapq.heappop(ready)
                    self._run_node(node)
            while ready:  # someone records a timeline: time every node
                _, node = heapq.heappop(ready)
                start = time.perf_counter()
                self._run_node(node)
                end = time.perf_counter()
                for observer in observers:
                    observer(node, start, end)
        finally:
            _grad_state.enabled = previous_mode
            _current.tasks.pop()

    def finish(self) -> None:
        """Run the queued final callbacks (callbacks may queue more)."""
        _current.tasks.append(self)
        try:
            i = 0
            while i < len(self.callbacks):
                self.callbacks[i]()
                i += 1
        finally:
            _current.tasks.pop()
            self.callbacks = []

    def unready_nodes(self) -> list:
        """Nodes that are still waiting for gradients (their count never reached zero)."""
        return [node for node, count in self.dependencies.items() if count > 0]

    # -- internals ---------------------------------------------------------

    def _add_to_buffer(self, node, output_nr, grad):
        buffers = self.buffers
        slots = buffers.get(node)
        if slots is None:
            slots = buffers[node] = [None] * node.num_outputs
        old = slots[output_nr]
        slots[output_nr] = grad if old is None else add_gradients(old, grad, self.create_graph)

    def _run_node(self, node):
        grads = self.buffers.pop(node, None)
        if node._pre_hooks is not None and grads is not None:
            _run_pre_hooks(node, grads)
        if self.capture is not None:
            self._capture(node, grads)
        if type(node) is AccumulateGrad:
            if grads is not None and grads[0] is not None and self.capture is None:
                offered = self.offered is not None and self.offered.pop(id(grads[0].array), None) is not None
                node.accumulate(grads[0], self.create_graph, self.grad_map, keep=offered)
            return
        edges = node.next_edges
        if (grads is None and not node.runs_without_gradient) or (
            self.needed is not None and node not in self.needed
        ):
            input_grads = (None,) * len(edges)
        elif grads is None:
            input_grads = node.run_backward(None, self.create_graph)  # e.g. a recv node telling its sender
        else:
            input_grads = self._call_backward(node, grads)
        if not self.retain_graph:
            node.release()
        dependencies = self.dependencies
        buffers = self.buffers
        for edge, grad in zip(edges, input_grads):
            if edge is None:
                continue
            target = edge[0]
            if grad is not None:
                slots = buffers.get(target)
                if slots is None and target.num_outputs == 1:
                    buffers[target] = [grad]
                else:
                    self._add_to_buffer(target, edge[1], grad)
            count = dependencies[target] - 1
            dependencies[target] = count
            if count == 0:
                heapq.heappush(self.ready, (target.priority, target))

    def _call_backward(self, node, grads):
        if node.num_outputs > 1 and any(g is None for g in grads):
            grads = _materialize_missing(node, grads)
        offers = self._destinations_for(node) if _grad_destinations and not self.create_graph else None
        if offers is not None:
            node._grad_destinations = offers
            self.offered = self.offered or {}
            self.offered.update((id(array), array) for array in offers.values())
        try:
            result = node.run_backward(grads, self.create_graph)
        except Exception as error:
            error.add_note(f"(raised in the backward of {node.name()})")
            raise
        finally:
            if offers is not None:
                node._grad_destinations = None
        if _anomaly.enabled:
            check_gradients(node, result)
        return result

    def _destinations_for(self, node):
        """``{input index: array}`` offered for leaf gradients this node computes (see set_grad_destination)."""
        if self.grad_map is not None or self.capture is not None:
            return None
        offers = None
        for i, edge in enumerate(node.next_edges):
            target = None if edge is None else edge[0]
            if type(target) is not AccumulateGrad or self.dependencies.get(target) != 1 or target in self.buffers:
                continue
            leaf = target.variable
            provider = None if leaf is None else _grad_destinations.get(leaf)
            if provider is None or leaf.grad is not None or leaf._hooks:
                continue
            array = provider()
            if array is not None:
                offers = offers or {}
                offers[i] = array
        return offers

    def _capture(self, node, grads):
        """Store the gradients arriving for captured ``(node, output_nr)`` keys."""
        capture = self.capture
        for output_nr in range(node.num_outputs):
            key = (node, output_nr)
            if key in capture and grads is not None and grads[output_nr] is not None:
                old = capture[key]
                grad = grads[output_nr]
                capture[key] = grad if old is None else add_gradients(old, grad, self.create_graph)


def _run_pre_hooks(node, grads):
    """Tensor hooks of non-leaf outputs: each may replace the gradient (in ``grads``)."""
    for output_nr, hook in node._pre_hooks:
        if grads[output_nr] is not None:
            new = hook(grads[output_nr])
            if new is not None:
                grads[output_nr] = new


def _materialize_missing(node, grads):
    """Zeros for outputs of a multi-output node that got no gradient."""
    shapes = node.output_meta
    return [
        g if g is not None else Tensor._make(node.xp.zeros(shape, dtype), False, None, 0)
        for g, (shape, dtype) in zip(grads, shapes)
    ]


def _count_dependencies(roots) -> dict:
    """For each node reachable from ``roots``: how many reachable edges point at it."""
    dependencies = {}
    seen = set(roots)
    stack = list(roots)
    while stack:
        node = stack.pop()
        for edge in node.next_edges:
            if edge is None:
                continue
            target = edge[0]
            dependencies[target] = dependencies.get(target, 0) + 1
            if target not in seen:
                seen.add(target)
                stack.append(target)
    for root in roots:
        dependencies.setdefault(root, 0)
    return dependencies


def _nodes_leading_to(roots, capture) -> set:
    """The nodes from which some captured node can be reached (iterative post-order)."""
    targets = {node for node, _ in capture}
    needed = set()
    done = set()
    stack = [(root, False) for root in roots]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            if node in targets or any(e is not None and e[0] in needed for e in node.next_edges):
                needed.add(node)
            continue
        if node in done:
            continue
        done.add(node)
        stack.append((node, True))
        for edge in node.next_edges:
            if edge is not None and edge[0] not in done:
                stack.append((edge[0], False))
    return needed


def run_backward(roots, grads, *, retain_graph=False, create_graph=False, grad_map=None, capture=None):
    """Run one complete backward pass.

    Args:
        roots: list of ``(node, output_nr)`` gradient edges of the outputs.
        grads: one gradient Tensor per root.
        retain_graph, create_graph, grad_map, capture: see ``GraphTask``.

    Returns:
        The finished ``GraphTask`` (its ``capture`` dict holds captured gradients).
    """
    nodes = list(dict.fromkeys(node for node, _ in roots))
    task = GraphTask(
        nodes, retain_graph=retain_graph, create_graph=create_graph, grad_map=grad_map, capture=capture
    )
    for (node, output_nr), grad in zip(roots, grads):
        task._add_to_buffer(node, output_nr, grad)
    for node in nodes:
        if task.dependencies[node] == 0:
            heapq.heappush(task.ready, (node.priority, node))
    task.run_ready()
    task.finish()
    return task
