"""Margin losses for targets of +1 / -1: soft margin, margin ranking and cosine embedding,
as functions and as modules.

Names, defaults, results and error types mirror PyTorch's
``F.soft_margin_loss``, ``F.margin_ranking_loss``, ``F.cosine_embedding_loss``
and ``nn.SoftMarginLoss``, ``nn.MarginRankingLoss``, ``nn.CosineEmbeddingLoss``.
The arguments after PyTorch's deprecated ``size_average``/``reduce`` are
keyword-only here. Each is a composition of registered ops (the soft margin
uses the stable log-sigmoid, so it is finite for any finite input).
"""

from __future__ import annotations

from minigrad.nn.loss_base import _Loss
from minigrad.nn.loss_utils import (
    broadcast_shape,
    check_reduction,
    expect_float_input,
    expect_no_grad,
    expect_number,
    expect_same_device,
    expect_tensor,
    mask,
    reduce_loss,
)
from minigrad.ops import elementwise
from minigrad.ops.logistic import LogSigmoid

__all__ = ["soft_margin_loss", "margin_ranking_loss", "cosine_embedding_loss", "SoftMarginLoss",
           "MarginRankingLoss", "CosineEmbeddingLoss"]

# Added to the squared norms in the cosine embedding loss, as PyTorch does, so zero vectors give no NaN.
_NORM_EPS = 1e-12


def soft_margin_loss(input, target, *, reduction="mean"):  # noqa: A002  (PyTorch's names)
    """Two-class logistic loss log(1 + exp(-target * input)), reduced.

    The result has the input's dtype; the target (usually +1 / -1, any shape
    that broadcasts with the input) is converted to it.

    Differentiable in ``input`` only, as in PyTorch.

    Raises:
        TypeError: an argument is not a Tensor.
        ValueError: an unknown reduction.
        RuntimeError: an integer input, a target that requires grad (in grad
            mode), shapes that do not broadcast, or devices that differ.
    """
    fn = "soft_margin_loss"
    expect_tensor(fn, "input", input)
    expect_tensor(fn, "target", target)
    check_reduction(fn, reduction)
    expect_float_input(fn, input)
    expect_no_grad(fn, "target", target)
    expect_same_device(fn, input, "input", target, "target")
    broadcast_shape(fn, ("input", input), ("target", target))
    if target.dtype != input.dtype:
        target = target.to(input.dtype)
    return reduce_loss(-LogSigmoid()(target * input), reduction)


def margin_ranking_loss(input1, input2, target, margin=0.0, *, reduction="mean"):
    """Ranking hinge loss max(0, -target * (input1 - input2) + margin), reduced.

    ``target`` is 1 where ``input1`` should rank higher, -1 where ``input2``
    should. All three must have the same number of dimensions (PyTorch's
    rule) and broadcast together; dtypes promote.

    Raises:
        TypeError: an argument has the wrong type.
        ValueError: an unknown reduction.
        RuntimeError: the numbers of dimensions differ, shapes that do not
            broadcast, or devices that differ.
    """
    fn = "margin_ranking_loss"
    for name, t in (("input1", input1), ("input2", input2), ("target", target)):
        expect_tensor(fn, name, t)
    margin = expect_number(fn, "margin", margin)
    check_reduction(fn, reduction)
    if not input1.ndim == input2.ndim == target.ndim:
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
                           f"input1: {input1.shape}, input2: {input2.shape}, target: {target.shape}")
    expect_same_device(fn, input1, "input1", input2, "input2")
    expect_same_device(fn, input1, "input1", target, "target")
    broadcast_shape(fn, ("input1", input1), ("input2", input2), ("target", target))
    return reduce_loss(elementwise.clamp(-target * (input1 - input2) + margin, min=0.0), reduction)


def cosine_embedding_loss(input1, input2, target, margin=0.0, *, reduction="mean"):
    """Loss on the cosine similarity of pairs: 1 - cos where target is 1, max(0, cos - margin) where it is -1.

    cos = <x1, x2> / sqrt((|x1|^2 + 1e-12) (|x2|^2 + 1e-12)) over the last
    dimension. Entries whose target is neither 1 nor -1 contribute 0.

    Args:
        input1, input2: (N, D) with a target (N,), or (D,) with a 0-d target.
        target: +1 / -1 per pair.
        margin: in [-1, 1]; 0 to 0.5 is typical.

    Raises:
        TypeError: an argument has the wrong type.
        ValueError: an unknown reduction.
        RuntimeError: the target is not 0-d or 1-D, the inputs do not have the
            matching number of dimensions (2 for a 1-D target, 1 for a 0-d one),
            shapes that do not broadcast, or devices that differ.
    """
    fn = "cosine_embedding_loss"
    for name, t in (("input1", input1), ("input2", input2), ("target", target)):
        expect_tensor(fn, name, t)
    margin = expect_number(fn, "margin", margin)
    check_reduction(fn, reduction)
    if target.ndim not in (0, 1):
        raise RuntimeError(f"{fn}(): 0D or 1D target tensor expected, multi-target not supported "
                           f"(target of shape {target.shape})")
    wanted = 2 if target.ndim == 1 else 1
    if input1.ndim != wanted or input2.ndim != wanted:
        raise RuntimeError(f"{target.ndim}D target tensor expects {wanted}D input tensors, but found inputs with "
                           f"sizes {input1.shape} and {input2.shape}.")
    expect_same_device(fn, input1, "input1", input2, "input2")
    expect_same_device(fn, input1, "input1", target, "target")
    broadcast_shape(fn, ("input1", input1), ("input2", input2))
    dim = target.ndim
    dot = (input1 * input2).sum(dim)
    norms = ((input1 * input1).sum(dim) + _NORM_EPS) * ((input2 * input2).sum(dim) + _NORM_EPS)
    cos = dot / norms.sqrt()
    broadcast_shape(fn, ("cosine", cos), ("target", target))
    labels = target.array
    loss = elementwise.where(mask(labels == 1), 1 - cos, 0.0) + elementwise.where(
        mask(labels == -1), elementwise.clamp(cos - margin, min=0.0), 0.0
    )
    return reduce_loss(loss, reduction)


# -- modules ---------------------------------------------------------------------------------------


class SoftMarginLoss(_Loss):
    """log(1 + exp(-target * input)): see ``soft_margin_loss``.

    Raises:
        ValueError: an unknown reduction.
    """

    def forward(self, input, target):  # noqa: A002
        """The loss of ``input`` for the +1 / -1 ``target``."""
        return soft_margin_loss(input, target, reduction=self.reduction)


class _MarginLoss(_Loss):
    """What MarginRankingLoss and CosineEmbeddingLoss share: a ``margin`` (default 0) and the ``reduction``."""

    def __init__(self, margin: float = 0.0, *, reduction: str = "mean"):
        super().__init__(reduction=reduction)
        self.margin = margin


class MarginRankingLoss(_MarginLoss):
    """max(0, -target * (input1 - input2) + margin): see ``margin_ranking_loss``.

    Raises:
        ValueError: an unknown reduction.
    """

    def forward(self, input1, input2, target):
        """The loss of ranking ``input1`` against ``input2`` as ``target`` says."""
        return margin_ranking_loss(input1, input2, target, self.margin, reduction=self.reduction)


class CosineEmbeddingLoss(_MarginLoss):
    """1 - cos for similar pairs, max(0, cos - margin) for dissimilar ones: see ``cosine_embedding_loss``.

    Raises:
        ValueError: an unknown reduction.
    """

    def forward(self, input1, input2, target):
        """The loss of the pairs (``input1``, ``input2``) labelled by ``target``."""
        return cosine_embedding_loss(input1, input2, target, self.margin, reduction=self.reduction)
