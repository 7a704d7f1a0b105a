"""The backward executor: dependency counting and a ready queue.

One ``GraphTask`` is one backward pass:

1. **Count dependencies.** A walk from the root nodes (``graph.walk``)
   counts, for every reachable node, how many edges of reachable nodes point
   at it: that is how many gradients it must wait for.
2. **Seed the roots.** Each root receives its initial gradient
   (``GraphTask.seed``); a node whose count is zero is pushed on the ready
   queue.
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

A leaf keeps the memory of its first gradient without a copy only when no
one else holds it (``GraphTask.owned``): a sum the executor made, or a new
array a built-in op's backward made for that input alone. Anything else (the
caller's seed, a gradient passed through unchanged or as a view, one a user
``Function`` returned) is copied, so ``.grad`` never aliases another tensor.

Distributed autograd (``minigrad_dist.autograd.engine``) drives the same
class: one task per worker and backward pass, whose roots are the loss
nodes and the context's send nodes. It delivers gradients that arrive over
RPC with ``seed`` and runs them with ``run_ready``, accumulates leaf
gradients into the context's map (``grad_map``), asks ``partial_nodes`` which
nodes got only part of their gradients (FAST mode's failure case), and calls
``finish``. Its recv nodes find their backward pass through the context and
``current_task``.

Gradient destinations (memory offered for a leaf's gradient: a DDP bucket's
slot through ``set_grad_destination``, or ``.grad`` to add into) live in
``minigrad.destinations``; the executor's part is one call there.
"""

from __future__ import annotations

import heapq
import threading
import time
from collections import defaultdict

import numpy as np

from minigrad import destinations
from minigrad.anomaly import _mode as _anomaly
from minigrad.anomaly import check_gradients
from minigrad.destinations import set_grad_destination
from minigrad.function import AccumulateGrad, add_gradients
from minigrad.grad_mode import _state as _grad_state
from minigrad.graph import walk
from minigrad.tensor import Tensor

__all__ = [
    "GraphTask", "run_backward", "queue_callback", "current_task", "set_grad_destination",
    "add_node_observer", "remove_node_observer",
]

_ndarray = np.ndarray


class _TaskStack(threading.local):
    def __init__(self):
        self.tasks = []


_current = _TaskStack()


_observers = []


def add_node_observer(observer) -> None:
    """Call ``observer(node, start, end)`` (``time.perf_counter`` seconds) after each node runs.

    For timelines (DDP tracing). While no observer is registered the
    executor's loop does not read the clock.
    """
    _observers.append(observer)


def remove_node_observer(observer) -> None:
    """Stop calling ``observer`` (no error if it was not registered)."""
    if observer in _observers:
        _observers.remove(observer)


def queue_callback(callback) -> None:
    """Run ``callback()`` once the backward pass that is running now finishes.

    Must be called from inside a backward pass (for example from a hook).

    Raises:
        RuntimeError: no backward pass is running in this thread.
    """
    task = current_task()
    if task is None:
        raise RuntimeError("queue_callback can only be called during a backward pass (from a hook)")
    task.callbacks.append(callback)


def current_task():
    """The ``GraphTask`` whose nodes (or final callbacks) this thread is running now, the innermost one; or None."""
    tasks = _current.tasks
    return tasks[-1] if tasks else None


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

    Attributes:
        dependencies: ``{node: count}``, how many gradients each reachable
            node still waits for (step 1, counted down as they arrive).
        owned: the accumulate-grad nodes whose pending gradient is memory
            this pass made and nobody else holds; their leaf stores it as it
            is instead of a copy.
    """

    def __init__(self, roots, *, retain_graph=False, create_graph=False, grad_map=None, capture=None):
        self.roots = list(roots)
        self.retain_graph = retain_graph
        self.create_graph = create_graph
        self.grad_map = grad_map
        self.capture = capture
        self.callbacks = []
        self.buffers = {}
        self.ready = []
        self.owned = set()
        self.dependencies = _count_dependencies(self.roots)
        self.needed = _nodes_leading_to(self.roots, capture) if capture is not None else None
        self.offers_destinations = not create_graph and grad_map is None and capture is None
        self._expected = None  # the counts of step 1, recounted when partial_nodes() first needs them

    # -- the interface of a pass (local and distributed) --------------------

    def seed(self, seeds) -> None:
        """Deliver gradients from outside the graph and queue the nodes that become ready.

        Args:
            seeds: ``(node, output_nr, grad)`` triples: the gradient of output
                ``output_nr`` of ``node``, given by the caller of ``backward``
                or received from another worker. ``grad`` may be None: nothing
                is delivered, but ``node`` is queued all the same when it
                waits for nothing else (a send node whose receiver got no
                gradient still runs, to release what it waits on).

        Each node whose dependency count is zero is queued once; ``run_ready``
        runs them.
        """
        dependencies = self.dependencies
        queued = set()
        for node, output_nr, grad in seeds:
            if grad is not None:
                self._add_to_buffer(node, output_nr, grad)
            if dependencies.get(node, 0) == 0 and node not in queued:
                queued.add(node)
                heapq.heappush(self.ready, (node.priority, node))

    def feed(self, node, grad, output_nr=0) -> None:
        """Deliver ``grad`` for output ``output_nr`` of ``node`` and run all that becomes ready."""
        self.seed([(node, output_nr, grad)])
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

    def partial_nodes(self) -> list:
        """``[(node, received, expected)]`` for the nodes that got some, but not all, of their gradients.

        Empty after a pass that ran to its end. Distributed autograd's FAST
        mode reports these nodes when the result of an RPC never reached the
        roots: they waited for a gradient that never came.
        """
        if self._expected is None:
            self._expected = _count_dependencies(self.roots)
        expected = self._expected
        return [
            (node, expected[node] - count, expected[node])
            for node, count in self.dependencies.items()
            if 0 < count < expected[node]
        ]

    # -- step 3 ----------------------------------------------------------------

    def _run_node(self, node):
        grads = self.buffers.pop(node, None)
        if node._pre_hooks is not None and grads is not None:
            _run_pre_hooks(node, grads)
        if self.capture is not None:
            self._capture(node, grads)
        if type(node) is AccumulateGrad:
            if grads is not None and grads[0] is not None and self.capture is None:
                keep = node in self.owned
                self.owned.discard(node)  # a gradient arriving later (fed again) is judged afresh
                node.accumulate(grads[0], self.create_graph, self.grad_map, keep=keep)
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
                if target in buffers or target.num_outputs > 1:
                    self._add_to_buffer(target, edge[1], grad)
                else:
                    buffers[target] = [grad]
                    if type(target) is AccumulateGrad and node.fresh_gradients and _made_for(grad, grads, input_grads):
                        self.owned.add(target)
            count = dependencies[target] - 1
            dependencies[target] = count
            if count == 0:
                heapq.heappush(self.ready, (target.priority, target))

    def _add_to_buffer(self, node, output_nr, grad):
        buffers = self.buffers
        slots = buffers.get(node)
        if slots is None:
            slots = buffers[node] = [None] * node.num_outputs
        old = slots[output_nr]
        if old is None:
            slots[output_nr] = grad
            return
        slots[output_nr] = add_gradients(old, grad, self.create_graph)
        if type(node) is AccumulateGrad:
            self.owned.add(node)  # the sum is new memory

    def _call_backward(self, node, grads):
        if node.num_outputs > 1 and any(g is None for g in grads):
            grads = _materialize_missing(node, grads)
        try:
            if self.offers_destinations and node.uses_grad_destinations:
                result = destinations.run_backward(node, grads, self)
            else:
                result = node.run_backward(grads, self.create_graph)
        except Exception as error:
            error.add_note(f"(raised in the backward of {node.name()})")
            raise
        if _anomaly.enabled:
            check_gradients(node, result)
        return result

    def _capture(self, node, grads):
        """Store the gradients arriving for captured ``(node, output_nr)`` keys."""
        capture = self.capture
        for output_nr in range(node.num_outputs):
            key = (node, output_nr)
            if key in capture and grads is not None and grads[output_nr] is not None:
                old = capture[key]
                grad = grads[output_nr]
                capture[key] = grad if old is None else add_gradients(old, grad, self.create_graph)


def _made_for(grad, received, returned) -> bool:
    """Whether ``grad``, one of the gradients a node's backward ``returned``, is new memory for that input alone.

    Asked only of backwards that promise fresh memory (``Node.fresh_gradients``).
    True for a writable NumPy array that is not a view: not one of the
    gradients the node ``received`` passed through, and not returned for two inputs.
    """
    data = grad.array
    if type(data) is not _ndarray or data.base is not None or not data.flags.writeable:
        return False
    if received is not None:
        for g in received:
            if g is not None and g.array is data:
                return False
    uses = 0
    for g in returned:  # plain loops: cheaper than any()/sum() over generators for the one to three gradients here
        if g is not None and g.array is data:
            uses += 1
    return uses == 1


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
    """For each node reachable from ``roots``: how many reachable edges point at it (roots included, at 0 or more)."""
    dependencies = dict.fromkeys(roots, 0)
    count = dependencies.get
    for node in walk(roots):
        for edge in node.next_edges:
            if edge is not None:
                target = edge[0]
                dependencies[target] = count(target, 0) + 1
    return dependencies


def _nodes_leading_to(roots, capture) -> set:
    """The nodes reachable from ``roots`` from which some captured node can be reached."""
    consumers = defaultdict(list)  # node -> the reachable nodes with an edge to it
    for node in walk(roots):
        for edge in node.next_edges:
            if edge is not None:
                consumers[edge[0]].append(node)
    reachable = set(consumers).union(roots)
    needed = set()
    stack = [node for node, _ in capture if node in reachable]
    while stack:  # backwards along the edges, from the captured nodes
        node = stack.pop()
        if node not in needed:
            needed.add(node)
            stack.extend(consumers.get(node, ()))
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
    task.seed((node, output_nr, grad) for (node, output_nr), grad in zip(roots, grads))
    task.run_ready()
    task.finish()
    return task
