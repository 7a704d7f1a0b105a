"""Where RPC messages meet distributed autograd (called by the RPC agent).

* ``outgoing_meta()``: when the sending thread is inside a context, the
  message carries ``(context_id, autograd_message_id)``;
* ``attach_send`` / ``attach_recv``: record the send node on the sender and
  the recv node on the receiver when the message carried Tensors that
  require grad;
* ``serving(meta)``: a worker thread running a request (and sending its
  reply) works inside the caller's context.
"""

from __future__ import annotations

import contextlib

from minigrad_dist.autograd.context import registry
from minigrad_dist.autograd.send_recv import RecvNode, SendNode


def outgoing_meta(rank: int):
    """``(context_id, message_id)`` for a message sent by worker ``rank`` from a thread inside a context."""
    context_id = registry.current.context_id
    if context_id is None:
        return None
    return (context_id, registry.new_message_id(rank))


def attach_send(meta, dst: int, tensors) -> None:
    """Record a send node for ``tensors`` leaving for worker ``dst``."""
    context_id, message_id = meta
    context = registry.get_or_create(context_id)
    with context.lock:
        context.send_nodes[message_id] = SendNode(message_id, dst, tensors)
        context.known_workers.add(dst)


def attach_recv(meta, src: int, tensors) -> None:
    """Make ``tensors`` (just received from ``src``) outputs of a new recv node."""
    context_id, message_id = meta
    context = registry.get_or_create(context_id)
    node = RecvNode(message_id, src, context_id, tensors)
    for i, t in enumerate(tensors):
        t.grad_fn = node
        t._output_nr = i
    with context.lock:
        context.recv_nodes[message_id] = node
        context.known_workers.add(src)


@contextlib.contextmanager
def serving(meta):
    """Run a request (and send its reply) inside the caller's context, if it had one."""
    if meta is None:
        yield
        return
    context_id = meta[0]
    context = registry.get_or_create(context_id)
    previous = registry.current.context_id
    registry.current.context_id = context.context_id
    try:
        yield
    finally:
        registry.current.context_id = previous
