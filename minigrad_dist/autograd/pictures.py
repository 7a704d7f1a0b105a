"""Pictures of a distributed autograd context: one cluster per worker, send/recv pairs joined.

Each worker describes its share of a context (``describe_context``, plain
picklable data: call it through RPC on the others), and one process draws
them all with ``context_dot``::

    parts = [describe_context(cid, roots=[loss])] + [
        rpc.rpc_sync(w, describe_context, args=(cid,)) for w in others]
    dot = context_dot(parts, show_dependencies=True)

Send and recv nodes are labelled with their ``autograd_message_id``; a
dashed edge goes from each recv node to the send node of the same id (the
way its gradients travel in the backward pass). With
``show_dependencies`` the counts are FAST mode's, as in the design note's
figures.
"""

from __future__ import annotations

from minigrad import viz
from minigrad_dist.autograd.context import id_text, registry


def describe_context(context_id: int, roots=(), params=None, show_dependencies: bool = True):
    """This worker's share of context ``context_id`` as a ``(GraphPart, recv pairs)`` tuple.

    Args:
        context_id: a context alive on this worker.
        roots: the loss tensors, on the worker that runs the backward.
        params: optional ``{name: tensor}`` to label leaves.
        show_dependencies: compute FAST-mode dependency counts.
    """
    from minigrad_dist.rpc import api  # noqa: PLC0415  (rpc builds on this package)

    context = registry.get(context_id)
    with context.lock:
        named = {f"send {id_text(m)}": n for m, n in context.send_nodes.items()}
        named.update({f"recv {id_text(m)}": n for m, n in context.recv_nodes.items()})
        recvs = sorted(context.recv_nodes)
    worker = viz.WorkerGraph(api.current_agent().info.name, list(roots), named)
    part = viz.describe(worker, params=params, show_dependencies=show_dependencies)
    return part, recvs


def context_dot(described, **options) -> str:
    """DOT text of a whole context from every worker's ``describe_context`` result."""
    parts = [part for part, _ in described]
    cross = [
        viz.CrossEdge(f"recv {id_text(m)}", f"send {id_text(m)}", f"autograd_message_id={id_text(m)}")
        for _, recvs in described
        for m in recvs
    ]
    return viz.dot_from_parts(parts, cross, **options)
