"""Gradient destinations: an op computes a leaf's gradient straight into memory provided for it.

Two kinds of memory are offered for a leaf's gradient, both so that a large
gradient is written once instead of computed, then copied or added:

* **A provider's array**, while the leaf has no ``.grad`` yet. DDP keeps each
  parameter's gradient in a slot of a flat bucket. Normally an op computes
  the gradient into new memory and the parameter's post-accumulate-grad hook
  copies it into the slot. With a destination, the op writes the gradient
  into the slot itself and ``leaf.grad`` views that memory: the copy
  disappears.
* **The leaf's ``.grad``**, once it has one (``AddInto``). A later pass adds
  its gradient into ``.grad`` in place, as PyTorch does; an op that can add
  as it computes (a Linear layer's weight gradient, one ``gemm`` with
  ``beta = 1``: ``minigrad.blas``) skips the temporary and the second pass.
  This is how each micro-batch of a pipeline schedule, or of gradient
  accumulation, adds its weight gradients.

Three parties take part, with one call each:

1. **The owner of the memory** (DDP's Reducer) calls
   ``set_grad_destination(leaf, provider)``. The provider is kept on the
   leaf's accumulate-grad node (``AccumulateGrad.destination``) for as long
   as the returned handle lives; no table in this module holds it. A leaf's
   ``.grad`` needs no provider.
2. **The executor** runs the backward of a node that can use offers
   (``FunctionNode.uses_grad_destinations``) through ``run_backward`` when
   the pass stores gradients as they are (no ``create_graph``, no gradient
   map, no capture). Each input whose gradient goes to a leaf, and is that
   leaf's only gradient in the pass with no tensor hooks to see it, is
   offered ``provider()`` (``.grad`` is None) or its ``.grad`` to add into.
3. **The op**'s backward computes such a gradient with ``matmul_into`` or
   ``sum_into`` in place of ``@`` or ``sum``: into the offered memory when
   it has the result's shape and dtype, as the ordinary Tensor op otherwise.
   Ops that do not call them simply ignore the offer.

A gradient computed into an offered array is handed to its leaf as it is
(``GraphTask.owned``): ``leaf.grad`` then views the provider's memory, or is
the same ``.grad``, already holding the sum.
"""

from __future__ import annotations

from minigrad import blas
from minigrad.function import AccumulateGrad, can_add_into
from minigrad.tensor import Tensor


class DestinationHandle:
    """Returned by ``set_grad_destination``; ``remove()`` withdraws the offer.

    The handle keeps the leaf's accumulate-grad node (and so the provider)
    alive between backward passes, when no graph refers to the node.
    """

    def __init__(self, node, provider):
        self._node = node
        self._provider = provider
        node.destination = provider

    def remove(self) -> None:
        """Stop offering the destination (no error if it is gone already)."""
        node = self._node
        if node is None:
            return
        if node.destination is self._provider:  # a later set_grad_destination may have replaced it
            node.destination = None
        self._node = self._provider = None

    def __del__(self):
        self.remove()


class AddInto:
    """The offer of a leaf's existing ``.grad``: add this pass's gradient into it, in place."""

    __slots__ = ("grad",)

    def __init__(self, grad):
        self.grad = grad


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
    whose gradient was computed into offered memory.
    """
    offers = None
    for index, edge in enumerate(node.next_edges):
        target = None if edge is None else edge[0]
        if type(target) is not AccumulateGrad:
            continue
        if task.dependencies.get(target) != 1 or target in task.buffers or target.variable._hooks:
            continue
        offer = _offer_for(target)
        if offer is not None:
            offers = offers or {}
            offers[index] = offer
    if offers is None:
        return node.run_backward(grads, False)
    node._grad_destinations = offers  # read by _offer
    try:
        result = node.run_backward(grads, False)
    finally:
        node._grad_destinations = None
    for index, offer in offers.items():
        if result[index] is not None and result[index].array is _memory(offer):
            task.owned.add(node.next_edges[index][0])
    return result


def _offer_for(target):
    """What to offer for the gradient of ``target``'s leaf: its provider's array, its ``.grad``, or None."""
    grad = target.variable._grad
    if grad is None:
        return None if target.destination is None else target.destination()
    return AddInto(grad) if can_add_into(grad) else None  # else AccumulateGrad replaces .grad by a sum


def _memory(offer):
    """The array an offer's gradient is computed into."""
    return offer.grad.array if type(offer) is AddInto else offer


def _offer(node, index, shape, dtype):
    """The offer for ``node``'s input ``index`` if its memory has exactly ``shape`` and ``dtype``, else None."""
    offers = node._grad_destinations
    offer = None if offers is None else offers.get(index)
    if offer is None:
        return None
    array = _memory(offer)
    return offer if array.shape == tuple(shape) and array.dtype == dtype else None


def matmul_into(node, index, a, b) -> Tensor:
    """``a @ b`` (2-D Tensors) as the gradient of ``node``'s input ``index``: into its offered memory if any."""
    offer = _offer(node, index, (a.shape[0], b.shape[1]), node.xp.result_type(a.dtype, b.dtype))
    if offer is None:
        return a @ b
    if type(offer) is AddInto:
        blas.add_matmul(offer.grad.array, a.array, b.array)
        return offer.grad
    node.xp.matmul(a.array, b.array, out=offer)
    return Tensor._make(offer, False, None, 0)


def sum_into(node, index, a) -> Tensor:
    """``a.sum(0)`` as the gradient of ``node``'s input ``index``: into its offered memory if any."""
    offer = _offer(node, index, a.shape[1:], a.dtype)
    if offer is None:
        return a.sum(0)
    if type(offer) is AddInto:
        offer.grad.array += a.array.sum(0)
        return offer.grad
    a.array.sum(0, out=offer)
    return Tensor._make(offer, False, None, 0)
