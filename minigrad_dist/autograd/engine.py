"""The distributed backward pass: FAST mode (the design note's algorithm) and SMART mode.

FAST mode, step by step (numbers as in the design note):

1. The backward starts on the worker that holds the roots (all roots local).
2. It looks up all send nodes of the context on this worker.
3. It counts dependencies locally from the roots *and* every send node
   (``minigrad.engine.GraphTask`` with the send nodes as extra roots).
4. It runs the local executor from the roots; leaf gradients accumulate
   into the context's gradient map, never into ``.grad``.
5. When the executor runs a recv node, the node sends its gradients by RPC
   to the worker that sent the tensors, with the context id and the pair's
   autograd_message_id. (Gradients bound for the worker whose gradient RPC
   is being served right now ride back on that RPC's reply instead: the
   caller is waiting for the reply anyway and runs them as in steps 6-8,
   which saves a round trip per hop back; see ``WorkerBackward.reply_to``.)
6. That worker looks up the send node by the message id;
7. the first time it hears of this backward it counts its dependencies
   from all of its send nodes (steps 2-3);
8. it feeds the gradients to the send node and runs its executor, which
   may send gradients further (step 5).
9. Every RPC returns only when all the work it caused is done, so when the
   calls made by step 4 have returned, the whole distributed pass is over.
   Each gradient RPC, before it returns, runs the end-of-backward callbacks
   its work queued and replies with a versioned snapshot of its worker's
   nodes that received only part of their gradients; replies carry the
   snapshots of the calls they made in turn, so the initiator ends up with
   every worker's newest snapshot without another round of messages. A
   finished backward's state on the other workers is dropped by the next
   gradient RPC of the context to them, or when the context is released.

FAST mode assumes every send node will receive a gradient. When an RPC's
result does not reach the loss (the note's "computing dependencies"
example), some node on the sending side waits for a gradient that never
comes and the gradients it did receive are lost. Upstream hangs there;
here step 9 detects those nodes and raises an error that suggests SMART mode.

SMART mode (proposed by the note, never built upstream) first computes the
true dependencies across workers: a traversal from the roots finds the
recv nodes they reach; each such node's sender is asked to traverse from
the paired send node, and so on, breadth first, until no new pair is
found. Only the send nodes found this way ("live") become roots in step 3.
Cost: one round of RPCs per level of send/recv nesting, plus a graph
traversal on every worker involved, before the backward starts.
"""

from __future__ import annotations

import heapq
import itertools
from collections import defaultdict

from minigrad import backend
from minigrad.engine import GraphTask
from minigrad.function import AccumulateGrad
from minigrad.tensor import Tensor
from minigrad_dist.autograd import send_recv
from minigrad_dist.autograd.context import id_text, make_global_id, registry
from minigrad_dist.autograd.send_recv import RecvNode
from minigrad_dist.futures import wait_all

MODES = ("fast", "smart")
_backward_ids = itertools.count(1)


def _agent():
    from minigrad_dist.rpc import api  # noqa: PLC0415  (rpc builds on this package)

    return api.current_agent()


class WorkerBackward:
    """One worker's share of one distributed backward pass (its GraphTask and bookkeeping)."""

    def __init__(self, context, backward_id, mode, retain_graph, root_nodes=()):
        self.backward_id = backward_id
        self.mode = mode
        self.retain_graph = retain_graph
        if mode == "smart":
            live = context.live_sends.get(backward_id, set())
            sends = [context.send_nodes[m] for m in sorted(live)]
        else:
            sends = list(context.send_nodes.values())
        roots = list(dict.fromkeys(list(root_nodes) + sends))
        self.context = context
        self.task = GraphTask(roots, retain_graph=retain_graph, grad_map=context.grad_map)
        self.initial = dict(self.task.dependencies)
        self.contacted = set()
        self.version = 0
        self._futures = []
        # The worker whose gradient RPC this thread is serving (None on the initiator): gradients
        # for it are returned in the reply rather than sent as a new RPC (it waits for the reply).
        self.reply_to = None
        self.returned = defaultdict(list)  # caller -> [(message_id, grads)] (threads serving callers share it)

    def run(self, seeds, reply_to=None):
        """Deliver ``[(node, output_nr, grad or None)]`` and run all that becomes ready.

        Returns the futures of the gradient RPCs sent meanwhile (callers wait
        for them *outside* the context lock). Gradients for ``reply_to`` are
        collected in ``self.returned[reply_to]`` instead of being sent.
        """
        self.reply_to = reply_to
        task = self.task
        pushed = []
        for node, output_nr, grad in seeds:
            if grad is not None:
                task._add_to_buffer(node, output_nr, grad)
            if node not in pushed and task.dependencies.get(node, 0) == 0:
                pushed.append(node)
        previous = send_recv.active.backward
        send_recv.active.backward = self
        self._futures = []
        try:
            for node in pushed:
                heapq.heappush(task.ready, (node.priority, node))
            task.run_ready()
        finally:
            send_recv.active.backward = previous
        futures, self._futures = self._futures, []
        return futures

    def send_gradients(self, recv: RecvNode, grads) -> None:
        """Step 5: a recv node ran; ship its gradients to the sender (or return them to the caller)."""
        if recv.src == self.reply_to:
            self.returned[recv.src].append((recv.message_id, grads))
            return
        self.contacted.add(recv.src)
        agent = _agent()
        forget = self.context.finished_backwards.pop(recv.src, ())
        args = (recv.context_id, recv.message_id, grads, self.backward_id, self.mode, self.retain_graph,
                agent.rank, forget)
        self._futures.append(agent.request(recv.src, receive_gradients, args, timeout=0))

    def take_returned(self, caller) -> list:
        """The ``(message_id, grads)`` collected for ``caller`` and not yet returned to it."""
        return self.returned.pop(caller, [])

    def partial_nodes(self) -> list:
        """Nodes that got some but not all of their gradients (FAST mode's failure case)."""
        return [n for n, count in self.task.dependencies.items() if 0 < count < self.initial.get(n, 0)]


def _merge_reports(results, into: dict) -> list:
    """Keep, per worker, the newest ``(version, partial nodes)`` report among the replies ``results``.

    Returns the gradients the replies carried back for this worker, ``[(message_id, grads)]``.
    """
    returned = []
    for report, grads_back in results:
        returned.extend(grads_back)
        for worker, (version, partial) in report.items():
            if worker not in into or into[worker][0] < version:
                into[worker] = (version, partial)
    return returned


def _send_node_seeds(context, message_id, grads) -> list:
    """Step 6: the seeds ``(send node, output_nr, grad)`` for gradients of the pair ``message_id``."""
    send = context.send_nodes.get(message_id)
    if send is None:
        raise RuntimeError(f"no send node for autograd message {id_text(message_id)} in context "
                           f"{id_text(context.context_id)} (was the context released during the backward?)")
    if grads is None:
        return [(send, 0, None)]
    return [(send, i, g) for i, g in enumerate(grads)]


def _drive(context, backward, futures, reports, reply_to) -> None:
    """Wait for the gradient RPCs ``futures``; run the gradients their replies carried back, until done."""
    while futures:
        returned = _merge_reports(wait_all(futures), reports)
        if not returned:
            return
        with context.lock:
            seeds = [seed for message_id, grads in returned for seed in _send_node_seeds(context, message_id, grads)]
            futures = backward.run(seeds, reply_to)


def _worker_backward(context, backward_id, mode, retain_graph) -> WorkerBackward:
    backward = context.backwards.get(backward_id)
    if backward is None:
        backward = context.backwards[backward_id] = WorkerBackward(context, backward_id, mode, retain_graph)
    return backward


# -- RPC handlers (run on the workers that take part) ------------------------------------------


def receive_gradients(context_id, message_id, grads, backward_id, mode, retain_graph, caller, forget=()):
    """Steps 6-8 on the worker that sent the tensors of ``message_id`` (called by worker ``caller``).

    ``forget``: ids of earlier, finished backward passes of this context whose state can go.
    Returns ``(reports, gradients for the caller)``, see the module docstring.
    """
    context = registry.get(context_id)
    with context.lock:
        for old in forget:
            _drop_backward(context, old)
        backward = _worker_backward(context, backward_id, mode, retain_graph)
        futures = backward.run(_send_node_seeds(context, message_id, grads), reply_to=caller)
    reports = {}
    _drive(context, backward, futures, reports, caller)
    with context.lock:
        # Step 9 for this share of the work: callbacks queued by it run now, and the reply
        # carries a snapshot of this worker's unmet dependencies (the newest version wins).
        backward.task.finish()
        backward.version += 1
        partial = [_describe(node, backward) for node in backward.partial_nodes()]
        returned = backward.take_returned(caller)
    reports[_agent().rank] = (backward.version, partial)
    return reports, returned


def _drop_backward(context, backward_id) -> None:
    """Forget a finished backward's state on this worker (caller holds ``context.lock``)."""
    context.backwards.pop(backward_id, None)
    context.live_sends.pop(backward_id, None)


def smart_traverse(context_id, backward_id, message_ids):
    """SMART discovery on one worker: mark these send nodes live, return the recv pairs they reach."""
    context = registry.get(context_id)
    with context.lock:
        context.live_sends.setdefault(backward_id, set()).update(message_ids)
        starts = [context.send_nodes[m] for m in message_ids if m in context.send_nodes]
    return _reachable_recv_pairs(starts)


def _reachable_recv_pairs(nodes) -> dict:
    """``{sender worker: [message ids]}`` of the recv nodes reachable from ``nodes``."""
    found = defaultdict(list)
    seen = set()
    stack = list(nodes)
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        if isinstance(node, RecvNode):
            found[node.src].append(node.message_id)
        for edge in node.next_edges:
            if edge is not None and edge[0] not in seen:
                stack.append(edge[0])
    return dict(found)


def _describe(node, backward) -> str:
    got = backward.initial[node] - backward.task.dependencies[node]
    what = node.name()
    if isinstance(node, AccumulateGrad) and node.variable is not None:
        what = f"AccumulateGrad of a leaf of shape {tuple(node.variable.shape)}"
    return f"{what} (received {got} of {backward.initial[node]} gradients)"


# -- the initiator --------------------------------------------------------------------------------


def backward(context_id: int, roots, retain_graph: bool = False, mode: str = "fast") -> None:
    """Run the distributed backward pass of ``roots`` in context ``context_id``.

    Args:
        context_id: from ``with dist_autograd.context() as context_id``.
        roots: scalar Tensors on this worker (the losses).
        retain_graph: keep the graph (on every worker) for another backward.
        mode: ``"fast"`` (the design note's algorithm; assumes every RPC
            result is used) or ``"smart"`` (computes the true dependencies
            across workers first; see the module docstring for the cost).

    Returns when every worker has finished its part. Gradients accumulate in
    each worker's context (``get_gradients``), not in ``.grad``.

    Raises:
        ValueError: unknown mode. TypeError / RuntimeError: roots that are not
            scalar Tensors requiring grad; an error on any worker (re-raised
            here with its remote traceback); FAST mode's unmet-dependency case
            (the message suggests ``mode="smart"``).
    """
    if mode not in MODES:
        raise ValueError(f"dist_autograd.backward: mode must be 'fast' or 'smart', got {mode!r}")
    root_nodes, seeds = _check_roots(roots)
    context = registry.get(context_id)
    agent = _agent()
    backward_id = make_global_id(agent.rank, _backward_ids)
    if mode == "smart":
        _discover_live_sends(context, backward_id, root_nodes, agent.rank)
    with context.lock:
        local = WorkerBackward(context, backward_id, mode, retain_graph, root_nodes)
        context.backwards[backward_id] = local
        futures = local.run(seeds)
    reports = {}
    try:
        _drive(context, local, futures, reports, reply_to=None)
    finally:
        with context.lock:
            _drop_backward(context, backward_id)
            local.task.finish()
            reports[agent.rank] = (float("inf"), [_describe(n, local) for n in local.partial_nodes()])
            # The other workers forget this pass with the next gradient RPC sent to them (or at release).
            for worker in reports:
                if worker != agent.rank:
                    context.finished_backwards.setdefault(worker, []).append(backward_id)
    problems = [(worker, text) for worker, (_, items) in sorted(reports.items()) for text in items]
    if problems:
        lines = "\n".join(f"  worker {agent.workers[w].name!r}: {text}" for w, text in problems[:10])
        if mode == "fast":
            raise RuntimeError(
                "distributed backward (FAST mode) finished with nodes that received only part of their "
                f"gradients:\n{lines}\nSome tensor sent by RPC in this context never reached the roots, so FAST "
                "mode waited for gradients that never come and these gradients would be wrong. Use "
                "dist_autograd.backward(context_id, roots, mode='smart')."
            )
        raise RuntimeError(f"distributed backward finished with nodes that did not get all gradients:\n{lines}")


def _check_roots(roots):
    if isinstance(roots, Tensor):
        roots = [roots]
    root_nodes, seeds = [], []
    for i, root in enumerate(roots):
        if not isinstance(root, Tensor):
            raise TypeError(f"dist_autograd.backward: root {i} must be a Tensor, got {type(root).__name__}")
        if not root.requires_grad:
            raise RuntimeError(f"dist_autograd.backward: root {i} does not require grad")
        if root.array.size != 1:
            raise RuntimeError(f"dist_autograd.backward: roots must be scalars, root {i} has shape {root.shape}")
        node, output_nr = root._gradient_edge()
        grad = Tensor._make(backend.get_array_module(root.array).ones_like(root.array), False, None, 0)
        root_nodes.append(node)
        seeds.append((node, output_nr, grad))
    if not seeds:
        raise ValueError("dist_autograd.backward: roots is empty")
    return root_nodes, seeds


def _discover_live_sends(context, backward_id, root_nodes, me):
    """SMART mode: breadth-first discovery of the send nodes the roots really depend on."""
    from minigrad_dist.rpc import api  # noqa: PLC0415

    visited = set()
    frontier = _reachable_recv_pairs(root_nodes)
    while frontier:
        next_frontier = defaultdict(list)
        for worker, message_ids in frontier.items():
            new = [m for m in message_ids if (worker, m) not in visited]
            visited.update((worker, m) for m in new)
            if not new:
                continue
            if worker == me:
                found = smart_traverse(context.context_id, backward_id, new)
            else:
                found = api.rpc_sync(worker, smart_traverse, (context.context_id, backward_id, new), timeout=0)
            for w, ids in found.items():
                next_frontier[w].extend(ids)
        frontier = next_frontier
