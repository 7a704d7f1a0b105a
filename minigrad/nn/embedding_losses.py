"""Losses on distances between embeddings: the triplet margin loss (with the p-norm distance or any
distance function) and the hinge embedding loss, as functions and as modules.

Names, defaults, results and error types mirror PyTorch's
``F.triplet_margin_loss``, ``F.triplet_margin_with_distance_loss``,
``F.hinge_embedding_loss`` and ``nn.TripletMarginLoss``,
``nn.TripletMarginWithDistanceLoss``, ``nn.HingeEmbeddingLoss``. The arguments
after PyTorch's deprecated ``size_average``/``reduce`` are keyword-only here.
Each loss is a composition of registered ops, so its gradient comes from theirs:

    triplet:  max(0, margin + d(a, p) - d(a, n))      d: ``pairwise_distance`` or the given function
    hinge:    x where y = 1,  max(0, margin - x) where y = -1
"""

from __future__ import annotations

import math

import numpy as np

from minigrad import backend
from minigrad.nn.distance import PairwiseDistance, pairwise_distance
from minigrad.nn.loss_base import _Loss
from minigrad.nn.loss_utils import (
    broadcast_shape,
    check_reduction,
    expect_same_device,
    expect_tensor,
    mask,
    reduce_loss,
)
from minigrad.ops import elementwise
from minigrad.ops.math import minimum
from minigrad.tensor import Tensor

__all__ = ["triplet_margin_loss", "triplet_margin_with_distance_loss", "hinge_embedding_loss",
           "TripletMarginLoss", "TripletMarginWithDistanceLoss", "HingeEmbeddingLoss"]


def real_number(fn: str, name: str, value) -> float:
    """``value`` as a float, as PyTorch reads a float argument: a real number, a bool or a 0-d Tensor.

    Raises:
        TypeError: anything else (a string, None, a complex number, a Tensor of
            another shape, an array).
    """
    if isinstance(value, Tensor) and value.ndim == 0 and value.dtype.kind in "biuf":
        return float(value.item())
    if isinstance(value, (bool, int, float, np.bool_, np.integer, np.floating)):
        return float(value)
    shape = f" of shape {tuple(value.shape)}" if isinstance(value, Tensor) else ""
    raise TypeError(f"{fn}(): argument '{name}' must be a real number, got {type(value).__name__}{shape}")


def _positive_margin(fn: str, margin) -> float:
    """The triplet losses' ``margin`` as a float; ValueError unless it is > 0 (NaN passes, as in PyTorch)."""
    value = real_number(fn, "margin", margin)
    if value <= 0:
        raise ValueError(f"{fn}(): margin must be greater than 0, got {margin}")
    return value


def _same_ndim(fn: str, anchor: Tensor, positive: Tensor, negative: Tensor) -> None:
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise RuntimeError(f"{fn}(): the anchor, positive and negative tensors must have the same number of "
                           f"dimensions, got anchor {anchor.ndim}D, positive {positive.ndim}D and negative "
                           f"{negative.ndim}D inputs")


def _p_distance(fn: str, x1: Tensor, x2: Tensor, p: float, eps: float) -> Tensor:
    """``pairwise_distance(x1, x2, p, eps)``, with PyTorch's RuntimeError for an inf norm of empty vectors."""
    shape = broadcast_shape(fn, ("x1", x1), ("x2", x2))
    if math.isinf(p) and shape and shape[-1] == 0:
        raise RuntimeError(f"{fn}(): the {p} norm of vectors with no elements is undefined (the maximum of "
                           f"nothing); the inputs' last dimension is empty (shape {shape})")
    return pairwise_distance(x1, x2, p, eps)


def _hinge(margin: float, dist_pos: Tensor, dist_neg: Tensor, reduction: str) -> Tensor:
    return reduce_loss(elementwise.clamp(margin + dist_pos - dist_neg, min=0.0), reduction)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, *, reduction="mean"):
    """Triplet loss max(0, margin + d(anchor, positive) - d(anchor, negative)), reduced.

    d is ``pairwise_distance(x1, x2, p, eps)``: the p-norm of x1 - x2 + eps
    along the last dimension. With ``swap``, d(anchor, negative) is replaced by
    d(positive, negative) where that is smaller (the "distance swap" of Balntas
    et al.).

    Args:
        anchor, positive, negative: (N, D) or (D,) (any shapes with the same
            number of dimensions that broadcast together); dtypes promote, and
            integer inputs give the default float dtype.
        margin: > 0.
        p: the norm's exponent. eps: added to the differences.
        swap: a bool.
        reduction: 'mean' (default), 'sum' or 'none' (then the shape of the distances).

    Raises:
        TypeError: an input is not a Tensor, or margin, p, eps or swap has the wrong type.
        ValueError: an unknown reduction, margin <= 0, or p is NaN.
        RuntimeError: the numbers of dimensions differ, shapes that do not
            broadcast, bool inputs, p = +-inf with an empty last dimension, or
            devices that differ.
    """
    fn = "triplet_margin_loss"
    check_reduction(fn, reduction)
    margin = _positive_margin(fn, margin)
    for name, t in (("anchor", anchor), ("positive", positive), ("negative", negative)):
        expect_tensor(fn, name, t)
    p = real_number(fn, "p", p)
    eps = real_number(fn, "eps", eps)
    if not isinstance(swap, (bool, np.bool_)):
        raise TypeError(f"{fn}(): argument 'swap' must be bool, not {type(swap).__name__}")
    _same_ndim(fn, anchor, positive, negative)
    dist_pos = _p_distance(fn, anchor, positive, p, eps)
    dist_neg = _p_distance(fn, anchor, negative, p, eps)
    if swap:
        dist_neg = minimum(dist_neg, _p_distance(fn, positive, negative, p, eps))
    return _hinge(margin, dist_pos, dist_neg, reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin=1.0,
                                      swap=False, reduction="mean"):
    """Triplet loss max(0, margin + d(anchor, positive) - d(anchor, negative)) with any distance d, reduced.

    Args:
        anchor, positive, negative: Tensors with the same number of dimensions,
            of the shapes ``distance_function`` accepts.
        distance_function: a callable (x1, x2) -> Tensor of non-negative
            distances (a function or a Module); default ``pairwise_distance``
            (Euclidean, eps 1e-6).
        margin: > 0.
        swap: if true, d(anchor, negative) is replaced by d(positive, negative)
            where that is smaller.
        reduction: 'mean' (default), 'sum' or 'none'.

    Raises:
        TypeError: an input is not a Tensor, ``distance_function`` is not
            callable or returns something that is not a Tensor, or ``margin``
            is not a number.
        ValueError: an unknown reduction or margin <= 0.
        RuntimeError: the numbers of dimensions differ (and whatever
            ``distance_function`` raises).
    """
    fn = "triplet_margin_with_distance_loss"
    check_reduction(fn, reduction)
    margin = _positive_margin(fn, margin)
    for name, t in (("anchor", anchor), ("positive", positive), ("negative", negative)):
        expect_tensor(fn, name, t)
    _same_ndim(fn, anchor, positive, negative)
    if distance_function is None:
        distance_function = pairwise_distance
    elif not callable(distance_function):
        raise TypeError(f"{fn}(): distance_function must be callable (x1, x2) -> Tensor, "
                        f"got {type(distance_function).__name__}")

    def distance(x1, x2):
        result = distance_function(x1, x2)
        if not isinstance(result, Tensor):
            raise TypeError(f"{fn}(): distance_function must return a Tensor, returned {type(result).__name__}")
        return result

    dist_pos = distance(anchor, positive)
    dist_neg = distance(anchor, negative)
    if swap:
        dist_neg = minimum(dist_neg, distance(positive, negative))
    return _hinge(margin, dist_pos, dist_neg, reduction)


def _fill_value(fn: str, margin: float, dtype: np.dtype):
    """``margin`` as a value of ``dtype``, converted as PyTorch fills a tensor (integers truncate toward 0).

    Raises:
        RuntimeError: the value does not fit ``dtype`` (NaN or infinity into an integer dtype,
            beyond the dtype's range).
    """
    if dtype.kind in "iu":
        limits = np.iinfo(dtype)
        fits = math.isfinite(margin) and limits.min <= margin <= limits.max
    else:
        fits = not math.isfinite(margin) or abs(margin) <= float(np.finfo(dtype).max)
    if not fits:
        raise RuntimeError(f"{fn}(): margin {margin} cannot be converted to the input's dtype {dtype} "
                           "without overflow")
    return int(margin) if dtype.kind in "iu" else margin


def hinge_embedding_loss(input, target, margin=1.0, *, reduction="mean"):  # noqa: A002  (PyTorch's names)
    """Hinge loss for similar (target 1) and dissimilar (target -1) pairs, reduced.

    ``input`` is usually a distance between the pair's embeddings: the loss is
    ``input`` where the target is 1, max(0, margin - input) where it is -1
    (PyTorch's formula adds both where the target is neither). ``input`` and
    ``target`` broadcast together.

    The result has the input's dtype, the margin first converted to it as
    PyTorch does (an integer input truncates the margin toward 0 and gives an
    integer loss, which 'mean' refuses). Differentiable in ``input``.

    Raises:
        TypeError: an input is not a Tensor, or ``margin`` is not a number.
        ValueError: an unknown reduction.
        RuntimeError: a bool input, a margin that does not fit the input's
            dtype, 'mean' of an integer loss, shapes that do not broadcast, or
            devices that differ.
    """
    fn = "hinge_embedding_loss"
    check_reduction(fn, reduction)
    expect_tensor(fn, "input", input)
    expect_tensor(fn, "target", target)
    margin = real_number(fn, "margin", margin)
    expect_same_device(fn, input, "input", target, "target")
    broadcast_shape(fn, ("input", input), ("target", target))
    if input.dtype.kind == "b":
        raise RuntimeError(f"{fn}(): a bool input is not supported (margin - input subtracts a bool tensor); "
                           "convert it with .float()")
    if input.dtype.kind != "f" and reduction == "mean":
        raise RuntimeError(f"{fn}(): reduction 'mean' needs a floating point input, got {input.dtype}; "
                           "convert it with .float() or use reduction='sum'")
    xp = backend.get_array_module(input.array)
    filled = Tensor._make(xp.asarray(_fill_value(fn, margin, input.dtype), dtype=input.dtype), False, None, 0)
    labels = target.array
    below_margin = elementwise.clamp(filled - input, min=0)
    loss = elementwise.where(mask(labels != 1), below_margin, 0) + elementwise.where(mask(labels != -1), input, 0)
    return reduce_loss(loss, reduction)


# -- modules ---------------------------------------------------------------------------------------


class TripletMarginLoss(_Loss):
    """max(0, margin + d(anchor, positive) - d(anchor, negative)) with the p-norm distance: see
    ``triplet_margin_loss``.

    Args:
        margin: > 0 (default 1). p: the norm's exponent (default 2).
        eps: added to the differences (default 1e-6). swap: use the distance swap.
        reduction: 'mean' (default), 'sum' or 'none'.

    Raises:
        ValueError: an unknown reduction or margin <= 0.
        TypeError: ``margin`` is not a number.
    """

    def __init__(self, margin: float = 1.0, p: float = 2.0, eps: float = 1e-6, swap: bool = False, *,
                 reduction: str = "mean"):
        super().__init__(reduction=reduction)
        _positive_margin(type(self).__name__, margin)
        self.margin = margin
        self.p = p
        self.eps = eps
        self.swap = swap

    def forward(self, anchor, positive, negative):
        """The loss of the triplets (``anchor``, ``positive``, ``negative``)."""
        return triplet_margin_loss(anchor, positive, negative, self.margin, self.p, self.eps, self.swap,
                                   reduction=self.reduction)


class TripletMarginWithDistanceLoss(_Loss):
    """The triplet margin loss with any distance: see ``triplet_margin_with_distance_loss``.

    Args (keyword-only, as in PyTorch):
        distance_function: a callable (x1, x2) -> Tensor; default a
            ``PairwiseDistance()`` child module (shown in the repr).
        margin: > 0 (default 1). swap: use the distance swap.
        reduction: 'mean' (default), 'sum' or 'none'.

    Raises:
        ValueError: an unknown reduction or margin <= 0.
        TypeError: ``margin`` is not a number.
    """

    def __init__(self, *, distance_function=None, margin: float = 1.0, swap: bool = False,
                 reduction: str = "mean"):
        super().__init__(reduction=reduction)
        _positive_margin(type(self).__name__, margin)
        self.distance_function = distance_function if distance_function is not None else PairwiseDistance()
        self.margin = margin
        self.swap = swap

    def forward(self, anchor, positive, negative):
        """The loss of the triplets (``anchor``, ``positive``, ``negative``)."""
        return triplet_margin_with_distance_loss(anchor, positive, negative, distance_function=self.distance_function,
                                                 margin=self.margin, swap=self.swap, reduction=self.reduction)


class HingeEmbeddingLoss(_Loss):
    """x for similar pairs (target 1), max(0, margin - x) for dissimilar ones (-1): see ``hinge_embedding_loss``.

    Raises:
        ValueError: an unknown reduction.
    """

    def __init__(self, margin: float = 1.0, *, reduction: str = "mean"):
        super().__init__(reduction=reduction)
        self.margin = margin

    def forward(self, input, target):  # noqa: A002
        """The loss of the distances ``input`` labelled by ``target``."""
        return hinge_embedding_loss(input, target, self.margin, reduction=self.reduction)
