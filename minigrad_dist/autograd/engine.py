"""The distributed backward pass: the design note's FAST mode, SMART mode, and what the note leaves out.

FAST mode, in the design note's steps (each names the code that does it):

1. The backward starts on the worker that holds the roots; all roots must
   be local (``backward``).
2. It looks up all send nodes of the current context on this worker
   (``WorkerBackward.__init__``).
3. It computes dependencies locally, starting from the roots and all those
   send nodes: the local executor's ``GraphTask`` with the send nodes as
   extra roots (``WorkerBackward.__init__``).
4. It kicks off the local executor with the roots (``WorkerBackward.run``).
5. When the executor runs a recv node, the node sends its gradients by RPC
   to the worker the tensors came from, with the ``autograd_context_id``
   and the pair's ``autograd_message_id`` (``RecvNode.run_backward`` in
   ``send_recv.py`` calls ``WorkerBackward.send_gradients``).
6. On that worker the two ids look up the send node (``receive_gradients``,
   ``_send_node_seeds``).
7. The first time the worker hears of this backward, it computes its
   dependencies as in steps 1-3 (``receive_gradients`` makes its
   ``WorkerBackward``).
8. The send node is enqueued on that worker's local executor, which runs
   it and what becomes ready after it, sending gradients on as in step 5
   (``WorkerBackward.run``).
9. Leaf gradients accumulate in the context, not in ``.grad``: a map
   ``leaf Tensor -> gradient`` (the task's ``grad_map``) that
   ``get_gradients`` returns.

FAST mode assumes every send node receives a gradient. When an RPC's result
does not reach the loss (the note's "computing dependencies" example), some
node on the sending side waits for a gradient that never comes, and the
gradients it did receive are lost. Upstream hangs there; here the pass ends
and raises an error that names those nodes and suggests SMART mode.

SMART mode (proposed by the note, never built upstream) first computes the
true dependencies across workers: a walk of the graph from the roots finds
the recv nodes they reach; each such node's sender walks from the paired
send node, and so on, breadth first, until no new pair is found. Only the
send nodes found this way ("live") are roots in step 3. Cost: one round of
RPCs per level of send/recv nesting, plus a walk on every worker involved,
before the backward starts.

Beyond the note (the last section of this file)
-----------------------------------------------
The note does not say how the initiator learns that the pass is over, nor
how FAST mode's unmet dependencies are found. Here:

* **Completion.** A gradient RPC returns only when all the work it caused is
  done, so once the RPCs sent from the initiator have returned, the pass is
  over everywhere. Before replying, each worker runs the end-of-backward
  callbacks its share of the work queued.
* **Reply piggyback.** Gradients bound for the worker whose gradient RPC is
  being served right now ride back on that RPC's reply instead of a new RPC:
  the caller waits for the reply anyway and runs them as in steps 6-8. One
  round trip less per hop back (what a round trip costs: ``"no tensor"`` in
  ``benchmarks/results/rpc.json``).
* **Versioned snapshots.** Each reply carries a snapshot of its worker's
  nodes that received only part of their gradients, numbered by a version
  that grows with each reply of that worker; replies pass on the snapshots
  of the calls they made, so the initiator ends up with every worker's
  newest snapshot without another round of messages. Any node listed there
  is FAST mode's error above.
* **Forgetting.** A finished pass's state on the other workers is dropped by
  the next gradient RPC of the context to them, or when the context is
  released.
"""

from __future__ import annotations

import itertools
from collections import defaultdict

from minigrad import backend
from minigrad.engine import GraphTask
from minigrad.function import AccumulateGrad
from minigrad.graph import walk
from minigrad.tensor import Tensor
from minigrad_dist.autograd.context import id_text, make_global_id, registry
from minigrad_dist.autograd.send_recv import RecvNode
from minigrad_dist.futures import wait_all

MODES = ("fast", "smart")
_backward_ids = itertools.count(1)


def _agent():
    from minigrad_dist.rpc import api  # noqa: PLC0415  (rpc builds on this package)

    return api.current_agent()


# == The design note's algorithm, steps 1-9 =======================================================


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
    root_nodes, seeds = _check_roots(roots)  # step 1
    context = registry.get(context_id)
    backward_id = make_global_id(_agent().rank, _backward_ids)
    if mode == "smart":
        _discover_live_sends(context, backward_id, root_nodes)
    with context.lock:
        local = context.backwards[backward_id] = WorkerBackward(context, backward_id, mode, retain_graph, root_nodes)
        futures = local.run(seeds)  # step 4
    _wait_for_the_pass(context, local, futures)


def _check_roots(roots):
    """Step 1: the roots' graph nodes, and the seeds ``(node, output_nr, ones)`` of the backward."""
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


class WorkerBackward:
    """One worker's share of one distributed backward pass: its ``GraphTask`` and where its gradients go.

    Args:
        context: the worker's ``DistAutogradContext``.
        backward_id: the pass's globally unique id.
        mode: ``"fast"`` or ``"smart"``.
        retain_graph: keep the graph for another backward.
        root_nodes: the roots' graph nodes (on the initiator only).
    """

    def __init__(self, context, backward_id, mode, retain_graph, root_nodes=()):
        self.context = context
        self.backward_id = backward_id
        self.mode = mode
        self.retain_graph = retain_graph
        # Step 2: the context's send nodes on this worker (in SMART mode only the live ones).
        if mode == "smart":
            sends = [context.send_nodes[m] for m in sorted(context.live_sends.get(backward_id, ()))]
        else:
            sends = list(context.send_nodes.values())
        # Steps 3 and 9: dependencies counted from the roots and the send nodes; leaf gradients go to the context.
        roots = list(dict.fromkeys([*root_nodes, *sends]))
        self.task = GraphTask(roots, retain_graph=retain_graph, grad_map=context.grad_map)
        self.reply = _Reply()
        self._futures = []

    def run(self, seeds, reply_to=None) -> list:
        """Steps 4 and 8: deliver ``[(node, output_nr, grad or None)]`` and run all that becomes ready.

        Called with ``context.lock`` held. Returns the futures of the gradient
        RPCs sent meanwhile (step 5): callers wait for them outside the lock.
        ``reply_to``: the worker whose gradient RPC this thread serves (None on
        the initiator); gradients for it go back on the reply.
        """
        self.reply.serving = reply_to
        self.task.seed(seeds)
        self.task.run_ready()
        futures, self._futures = self._futures, []
        return futures

    def send_gradients(self, recv: RecvNode, grads) -> None:
        """Step 5: ``recv`` ran; send its gradients (None: it received none) to the worker its tensors came from."""
        if self.reply.keeps(recv, grads):  # bound for the worker being served: they ride back on its reply
            return
        agent = _agent()
        forget = self.context.finished_backwards.pop(recv.src, ())
        args = (recv.context_id, recv.message_id, grads, self.backward_id, self.mode, self.retain_graph,
                agent.rank, forget)
        self._futures.append(agent.request(recv.src, receive_gradients, args, timeout=0))

    def take_returned(self, caller) -> list:
        """The ``(message_id, grads)`` kept for ``caller``'s reply and not yet returned to it."""
        return self.reply.take(caller)

    def partial_nodes(self) -> list:
        """Nodes that got some but not all of their gradients (FAST mode's failure case)."""
        return [node for node, _, _ in self.task.partial_nodes()]


def receive_gradients(context_id, message_id, grads, backward_id, mode, retain_graph, caller, forget=()):
    """Steps 6-8 on the worker that sent the tensors of ``message_id`` (an RPC from worker ``caller``).

    ``forget``: ids of earlier, finished backward passes of this context whose state can go.
    Returns the reply ``(snapshots, gradients for the caller)``, see the end of the module docstring.
    """
    context = registry.get(context_id)
    with context.lock:
        for old in forget:
            _drop_backward(context, old)
        backward = context.backwards.get(backward_id)
        if backward is None:  # step 7: the first this worker hears of this backward
            backward = context.backwards[backward_id] = WorkerBackward(context, backward_id, mode, retain_graph)
        futures = backward.run(_send_node_seeds(context, message_id, grads), reply_to=caller)  # steps 6 and 8
    return _reply(context, backward, futures, caller)


def _send_node_seeds(context, message_id, grads) -> list:
    """Step 6: the seeds ``(send node, output_nr, grad)`` for the gradients of the pair ``message_id``."""
    send = context.send_nodes.get(message_id)
    if send is None:
        raise RuntimeError(f"no send node for autograd message {id_text(message_id)} in context "
                           f"{id_text(context.context_id)} (was the context released during the backward?)")
    if grads is None:
        return [(send, 0, None)]
    return [(send, i, g) for i, g in enumerate(grads)]


# == SMART mode: which send nodes the roots really depend on =======================================


def _discover_live_sends(context, backward_id, root_nodes) -> None:
    """Mark, on every worker, the send nodes whose gradients the roots need (breadth first over workers)."""
    from minigrad_dist.rpc import api  # noqa: PLC0415

    me = _agent().rank
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
    for node in walk(nodes):
        if isinstance(node, RecvNode):
            found[node.src].append(node.message_id)
    return dict(found)


# == Beyond the note: completion, reply piggyback, versioned snapshots ==============================


class _Reply:
    """What one worker's share of a pass sends back on the replies to gradient RPCs."""

    def __init__(self):
        self.serving = None  # the worker whose gradient RPC the running thread serves (None on the initiator)
        self.gradients = defaultdict(list)  # caller -> [(message_id, grads)]; threads serving callers share it
        self.version = 0

    def keeps(self, recv, grads) -> bool:
        """Keep ``recv``'s gradients for the reply if they are bound for the worker being served."""
        if recv.src != self.serving:
            return False
        self.gradients[recv.src].append((recv.message_id, grads))
        return True

    def take(self, caller) -> list:
        """The ``(message_id, grads)`` kept for ``caller`` (and forget them)."""
        return self.gradients.pop(caller, [])

    def snapshot(self, task) -> tuple:
        """``(version, descriptions)`` of the task's nodes that received only part of their gradients."""
        self.version += 1
        return self.version, _describe_partial(task)


def _reply(context, backward, futures, caller) -> tuple:
    """Wait for the work a gradient RPC caused; return its reply ``(snapshots, gradients for the caller)``."""
    snapshots = {}
    _drive(context, backward, futures, snapshots, caller)
    with context.lock:
        backward.task.finish()  # the callbacks this share of the work queued
        snapshot = backward.reply.snapshot(backward.task)
        returned = backward.reply.take(caller)
    snapshots[_agent().rank] = snapshot
    return snapshots, returned


def _drive(context, backward, futures, snapshots, reply_to) -> None:
    """Wait for the gradient RPCs ``futures``; run the gradients their replies carried back, until none are left."""
    while futures:
        returned = _merge_snapshots(wait_all(futures), snapshots)
        if not returned:
            return
        with context.lock:
            seeds = [seed for message_id, grads in returned for seed in _send_node_seeds(context, message_id, grads)]
            futures = backward.run(seeds, reply_to)


def _merge_snapshots(replies, into: dict) -> list:
    """Keep, per worker, the newest ``(version, partial nodes)`` among the ``replies``.

    Returns the gradients the replies carried back for this worker, ``[(message_id, grads)]``.
    """
    returned = []
    for snapshots, grads_back in replies:
        returned.extend(grads_back)
        for worker, (version, partial) in snapshots.items():
            if worker not in into or into[worker][0] < version:
                into[worker] = (version, partial)
    return returned


def _wait_for_the_pass(context, local, futures) -> None:
    """On the initiator: wait until the pass is over everywhere, then raise if some node missed gradients."""
    agent = _agent()
    snapshots = {}
    try:
        _drive(context, local, futures, snapshots, reply_to=None)
    finally:
        with context.lock:
            _drop_backward(context, local.backward_id)
            local.task.finish()
            snapshots[agent.rank] = (float("inf"), _describe_partial(local.task))
            # The other workers forget this pass with the next gradient RPC sent to them (or at release).
            for worker in snapshots:
                if worker != agent.rank:
                    context.finished_backwards.setdefault(worker, []).append(local.backward_id)
    problems = [(worker, text) for worker, (_, items) in sorted(snapshots.items()) for text in items]
    if not problems:
        return
    lines = "\n".join(f"  worker {agent.workers[w].name!r}: {text}" for w, text in problems[:10])
    if local.mode == "fast":
        raise RuntimeError(
            "distributed backward (FAST mode) finished with nodes that received only part of their "
            f"gradients:\n{lines}\nSome tensor sent by RPC in this context never reached the roots, so FAST "
            "mode waited for gradients that never come and these gradients would be wrong. Use "
            "dist_autograd.backward(context_id, roots, mode='smart')."
        )
    raise RuntimeError(f"distributed backward finished with nodes that did not get all gradients:\n{lines}")


def _drop_backward(context, backward_id) -> None:
    """Forget a finished backward's state on this worker (caller holds ``context.lock``)."""
    context.backwards.pop(backward_id, None)
    context.live_sends.pop(backward_id, None)


def _describe_partial(task) -> list:
    """One line per node of ``task`` that received only part of its gradients."""
    lines = []
    for node, received, expected in task.partial_nodes():
        what = node.name()
        if isinstance(node, AccumulateGrad) and node.variable is not None:
            what = f"AccumulateGrad of a leaf of shape {tuple(node.variable.shape)}"
        lines.append(f"{what} (received {received} of {expected} gradients)")
    return lines
