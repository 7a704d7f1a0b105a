"""Gradient destinations: an op computes a leaf's gradient straight into memory provided for it.

DDP keeps each parameter's gradient in a slot of a flat bucket. Normally an
op computes the gradient into new memory and the parameter's
post-accumulate-grad hook copies it into the slot. With a destination, the
op writes the gradient into the slot itself and ``leaf.grad`` views that
memory: the copy disappears. Three parties take part, with one call each:

1. **The owner of the memory** (DDP's Reducer) calls
   ``set_grad_destination(leaf, provider)``. The provider is kept on the
   leaf's accumulate-grad node (``AccumulateGrad.destination``) for as long
   as the returned handle lives; no table in this module holds it.
2. **The executor** runs a node's backward through ``run_backward`` while
   some destination is set and the pass stores gradients as they are (no
   ``create_graph``, no gradient map, no capture). Each input whose
   gradient goes to a leaf with a provider, and will become that leaf's
   ``.grad`` unchanged (``.grad`` is None, the leaf has no tensor hooks,
   this is its only gradient in the pass), is offered ``provider()``.
3. **The op**'s backward computes such a gradient with ``matmul_into`` or
   ``sum_into`` in place of ``@`` or ``sum``: into the offered array when
   there is one of the result's shape and dtype, as the ordinary Tensor op
   otherwise. Ops that do not call them simply ignore the offer.

A gradient computed into an offered array is handed to its leaf as it is
(``GraphTask.owned``): ``leaf.grad`` then views the provider's memory.
"""

from __future__ import annotations

from minigrad.function import AccumulateGrad
from minigrad.tensor import Tensor


class DestinationHandle:
    """Returned by ``set_grad_destination``; ``remove()`` withdraws the offer.

    The handle keeps the leaf's accumulate-grad node (and so the provider)
    alive between backward passes, when no graph refers to the node.
    """

    # Handles not yet removed, in the whole process: while there are none the
    # executor skips the search for offers (a plain count, it refers to nothing).
    live = 0

    def __init__(self, node, provider):
        self._node = node
        self._provider = provider
        node.destination = provider
        DestinationHandle.live += 1

    def remove(self) -> None:
        """Stop offering the destination (no error if it is gone already)."""
        node = self._node
        if node is None:
            return
        if node.destination is self._provider:  # a later set_grad_destination may have replaced it
            node.destination = None
        self._node = self._provider = None
        DestinationHandle.live -= 1

    def __del__(self):
        self.remove()


def set_grad_destination(leaf, provider) -> DestinationHandle:
    """Let the op that computes ``leaf``'s gradient write it straight into ``provider()``.

    Before a node whose backward produces the gradient of ``leaf`` runs, the
    executor calls ``provider()`` when that gradient will become ``leaf.grad``
    as it is: ``leaf.grad`` is None, the leaf has no tensor hooks, this is its
    only gradient in the pass, and no graph is being built for higher-order
    gradients. ``provider`` returns an array shaped like ``leaf`` (or None for
    no offer); ops that support it (``Linear``) then compute the gradient into
    it, and ``leaf.grad`` ends up viewing that memory. This is how DDP has
    gradients land in its buckets without a copy. Other ops ignore the offer.
    A second call for the same leaf replaces the first provider.

    Returns a handle whose ``remove()`` withdraws the offer (so does dropping
    the handle).
    """
    return DestinationHandle(leaf._gradient_edge()[0], provider)


def run_backward(node, grads, task) -> tuple:
    """Run ``node``'s backward (first order) with destinations offered for the leaf gradients it computes.

    The executor's one call into this module. ``task`` is the running
    ``GraphTask``: its dependency counts and buffers tell whether a leaf's
    gradient will be stored as it is, and its ``owned`` set learns the leaves
    whose gradient was computed into an offered array.
    """
    offers = None
    for index, edge in enumerate(node.next_edges):
        target = None if edge is None else edge[0]
        if type(target) is not AccumulateGrad or target.destination is None:
            continue
        leaf = target.variable
        if task.dependencies.get(target) != 1 or target in task.buffers or leaf.grad is not None or leaf._hooks:
            continue
        array = target.destination()
        if array is not None:
            offers = offers or {}
            offers[index] = array
    if offers is None:
        return node.run_backward(grads, False)
    node._grad_destinations = offers  # read by FunctionNode.grad_destination
    try:
        result = node.run_backward(grads, False)
    finally:
        node._grad_destinations = None
    for index, array in offers.items():
        if result[index] is not None and result[index].array is array:
            task.owned.add(node.next_edges[index][0])
    return result


def matmul_into(node, index, a, b) -> Tensor:
    """``a @ b`` (2-D Tensors) as the gradient of ``node``'s input ``index``: into its offered destination if any."""
    out = node.grad_destination(index, (a.shape[0], b.shape[1]), node.xp.result_type(a.dtype, b.dtype))
    if out is None:
        return a @ b
    node.xp.matmul(a.array, b.array, out=out)
    return Tensor._make(out, False, None, 0)


def sum_into(node, index, a) -> Tensor:
    """``a.sum(0)`` as the gradient of ``node``'s input ``index``: into its offered destination if any."""
    out = node.grad_destination(index, a.shape[1:], a.dtype)
    if out is None:
        return a.sum(0)
    a.array.sum(0, out=out)
    return Tensor._make(out, False, None, 0)
