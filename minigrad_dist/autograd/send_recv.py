"""Send and recv nodes: the graph nodes an RPC adds on each side of the wire.

When a message carrying Tensors that require grad leaves a worker inside a
distributed autograd context:

* the sender records a ``SendNode`` whose edges point at those Tensors'
  gradient edges; in the backward pass it receives, over RPC, the gradients
  of the recv side and passes them on into the local graph;
* the receiver records a ``RecvNode`` whose outputs are the rebuilt Tensors;
  in the backward pass its ``run_backward`` sends their gradients to the
  sender, naming the context and the pair's ``autograd_message_id``.

Both are ordinary graph nodes: the local executor (``minigrad.engine``)
runs them like any op. A recv node reaches the distributed backward pass
that runs it through its context (``DistAutogradContext.running_backward``).
"""

from __future__ import annotations

from minigrad.function import Node, _sequence
from minigrad_dist.autograd.context import id_text, registry


class _PairNode(Node):
    """What both ends of a send/recv pair record: the pair's id and one output per Tensor of the message."""

    def __init__(self, message_id: int, tensors, next_edges):
        self.message_id = message_id
        self.next_edges = next_edges
        self.num_outputs = len(tensors)
        self.output_meta = [(t.shape, t.dtype) for t in tensors]
        self.priority = -next(_sequence)
        self._pre_hooks = None


class SendNode(_PairNode):
    """The sender's end of a send/recv pair (a root of the sender's backward).

    Attributes:
        message_id: the pair's autograd_message_id.
        dst: the worker id the tensors were sent to.
    """

    def __init__(self, message_id: int, dst: int, tensors):
        super().__init__(message_id, tensors, tuple(t._gradient_edge() for t in tensors))
        self.dst = dst

    def name(self) -> str:
        return f"SendRpcBackward[{id_text(self.message_id)}]"

    def run_backward(self, grads, create_graph):
        # The gradients that came over RPC for the tensors sent go on into the local graph, unchanged.
        return tuple(grads)


class RecvNode(_PairNode):
    """The receiver's end of a send/recv pair; its outputs are the received Tensors.

    Attributes:
        message_id: the pair's autograd_message_id.
        src: the worker id the tensors came from (where gradients go back to).
        context_id: the distributed autograd context of the pass.
    """

    # Runs even when no gradient reached it, to tell the sender so (FAST/SMART bookkeeping).
    runs_without_gradient = True

    def __init__(self, message_id: int, src: int, context_id: int, tensors):
        super().__init__(message_id, tensors, ())
        self.src = src
        self.context_id = context_id

    def name(self) -> str:
        return f"RecvRpcBackward[{id_text(self.message_id)}]"

    def run_backward(self, grads, create_graph):
        context = registry.find(self.context_id)
        backward = None if context is None else context.running_backward()
        if backward is None:
            raise RuntimeError(
                "a tensor received over RPC inside a distributed autograd context can only be differentiated "
                "with dist_autograd.backward(context_id, roots), not with .backward()"
            )
        backward.send_gradients(self, None if grads is None else list(grads))
        return ()
