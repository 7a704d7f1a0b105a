"""Losses between probability distributions: binary cross-entropy (on probabilities or on logits)
and the Kullback-Leibler divergence, as functions and as modules.

Names, signatures, defaults, results and error types mirror PyTorch's
``F.binary_cross_entropy``, ``F.binary_cross_entropy_with_logits``,
``F.kl_div`` and ``nn.BCELoss``, ``nn.BCEWithLogitsLoss``, ``nn.KLDivLoss``.
PyTorch's deprecated ``size_average``/``reduce`` arguments do not exist
here, so the arguments after them are keyword-only.

The binary cross-entropy on probabilities is the fused op
``minigrad.ops.logistic.BinaryCrossEntropy`` (its logarithms are clamped at
-100); the one on logits is composed from the stable ``LogSigmoid`` op, so it
is finite for any finite logit; ``kl_div`` is composed from registered ops.
"""

from __future__ import annotations

import warnings

import numpy as np

from minigrad.nn.loss import _WeightedLoss
from minigrad.nn.loss_utils import (
    broadcast_shape,
    check_reduction,
    expect_no_grad,
    expect_same_device,
    expect_tensor,
    mask,
    reduce_loss,
)
from minigrad.nn.module import Module
from minigrad.ops import elementwise
from minigrad.ops.logistic import BinaryCrossEntropy, LogSigmoid
from minigrad.promotion import promote_types
from minigrad.tensor import Tensor

__all__ = ["binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div", "BCELoss", "BCEWithLogitsLoss",
           "KLDivLoss"]


def _constant_weight(fn: str, name: str, weight, input: Tensor, dtype) -> Tensor:  # noqa: A002
    """``weight`` checked (a Tensor that broadcasts to the input's shape and needs no gradient), cast to ``dtype``.

    Raises:
        TypeError: not a Tensor.
        RuntimeError: it requires grad in grad mode (PyTorch's loss is not
            differentiable in it), it does not broadcast to the input's shape, or
            it lives on another device.
    """
    expect_tensor(fn, name, weight)
    expect_no_grad(fn, name, weight)
    expect_same_device(fn, input, "input", weight, name)
    return weight.detach().to(dtype) if weight.dtype != dtype else weight.detach()


def _broadcasts_to(fn: str, name: str, t: Tensor, shape) -> None:
    """RuntimeError unless ``t`` broadcasts to exactly ``shape`` (the input's)."""
    try:
        fits = np.broadcast_shapes(t.shape, shape) == tuple(shape)
    except ValueError:
        fits = False
    if not fits:
        raise RuntimeError(f"{fn}(): {name} of shape {tuple(t.shape)} does not broadcast to the input's shape "
                           f"{tuple(shape)}")


# -- functions -----------------------------------------------------------------------------------


def binary_cross_entropy(input, target, weight=None, *, reduction="mean"):  # noqa: A002  (PyTorch's names)
    """Binary cross-entropy between probabilities ``input`` and targets ``target``.

    loss = -weight * (target * log(input) + (1 - target) * log(1 - input)),
    each logarithm clamped at -100 (so a confident wrong prediction costs 100,
    not infinity), then reduced. Differentiable in ``input`` and ``target``
    (with PyTorch's gradients: ``(input - target) / max(input (1 - input), 1e-12)``
    for the input).

    Args:
        input: probabilities in [0, 1], any shape, floating point.
        target: the same shape and dtype, values in [0, 1].
        weight: optional Tensor broadcastable to the input's shape (rescales
            each element's loss); a constant, cast to the input's dtype.
        reduction: 'mean' (default; NaN for an empty input), 'sum' or 'none'.

    Returns:
        A scalar, or a Tensor of the input's shape with reduction='none'.

    Raises:
        TypeError: an argument is not a Tensor.
        ValueError: target and input shapes differ, or an unknown reduction.
        NotImplementedError: the input is not floating point.
        RuntimeError: target's dtype differs from input's, a value lies outside
            [0, 1] (NaN included), the weight does not broadcast to the input's
            shape or requires grad, or the tensors are on different devices.
    """
    fn = "binary_cross_entropy"
    expect_tensor(fn, "input", input)
    expect_tensor(fn, "target", target)
    check_reduction(fn, reduction)
    if target.shape != input.shape:
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input size "
                         f"({input.shape}) is deprecated. Please ensure they have the same size.")
    if input.dtype.kind != "f":
        raise NotImplementedError(f"\"{fn}\" not implemented for dtype {input.dtype} (floating point input only)")
    if target.dtype != input.dtype:
        raise RuntimeError(f"{fn}(): found target of dtype {target.dtype} but expected {input.dtype} "
                           "(the input's dtype)")
    expect_same_device(fn, input, "input", target, "target")
    weight_data = None
    if weight is not None:
        weight = _constant_weight(fn, "weight", weight, input, input.dtype)
        _broadcasts_to(fn, "weight", weight, input.shape)
        weight_data = weight.array
    for name, t in (("input", input), ("target", target)):
        data = t.array
        if data.size and not bool(((data >= 0) & (data <= 1)).all()):
            raise RuntimeError(f"{fn}(): all elements of {name} should be between 0 and 1")
    return BinaryCrossEntropy(weight_data, reduction)(input, target)


def binary_cross_entropy_with_logits(input, target, weight=None, *, reduction="mean",  # noqa: A002
                                     pos_weight=None):
    """Binary cross-entropy between sigmoid(``input``) and ``target``, computed stably from the logits.

    loss = -weight * (pos_weight * target * log sigmoid(x) + (1 - target) * log sigmoid(-x)),
    evaluated as ``(1 - target) * x - (1 + (pos_weight - 1) * target) * logsigmoid(x)``
    with a log-sigmoid that is finite for every finite x. Differentiable in
    ``input`` and ``target``; ``weight`` and ``pos_weight`` are constants.

    Args:
        input: logits, any shape, floating point.
        target: the input's shape, floating point (soft labels allowed). The
            result has the target's dtype, as in PyTorch (computed in the
            promoted dtype of input and target, then cast).
        weight: optional rescaling of each element's loss, broadcast with it.
        pos_weight: optional weight of the positive term, broadcast along the
            last dimension (one per class for multi-label data).
        reduction: 'mean' (default), 'sum' or 'none'.

    Raises:
        TypeError: an argument is not a Tensor.
        ValueError: target and input shapes differ, or an unknown reduction.
        NotImplementedError: the input is not floating point.
        RuntimeError: the target is not floating point, weight or pos_weight
            require grad or do not broadcast, or devices differ.
    """
    fn = "binary_cross_entropy_with_logits"
    expect_tensor(fn, "input", input)
    expect_tensor(fn, "target", target)
    check_reduction(fn, reduction)
    if target.shape != input.shape:
        raise ValueError(f"Target size ({target.shape}) must be the same as input size ({input.shape})")
    if input.dtype.kind != "f":
        raise NotImplementedError(f"{fn}(): not implemented for dtype {input.dtype} (floating point logits only)")
    if target.dtype.kind != "f":
        raise RuntimeError(f"{fn}(): target of dtype {target.dtype} must be floating point "
                           "(the loss can't be cast to an integer dtype)")
    expect_same_device(fn, input, "input", target, "target")
    dtype = promote_types(input.dtype, target.dtype)
    if pos_weight is None:
        loss = (1 - target) * input - LogSigmoid()(input)
    else:
        pos_weight = _constant_weight(fn, "pos_weight", pos_weight, input, dtype)
        broadcast_shape(fn, ("target", target), ("pos_weight", pos_weight))
        log_weight = 1 + (pos_weight - 1) * target
        loss = (1 - target) * input - log_weight * LogSigmoid()(input)
    if weight is not None:
        weight = _constant_weight(fn, "weight", weight, input, dtype)
        broadcast_shape(fn, ("loss", loss), ("weight", weight))
        loss = loss * weight
    if loss.dtype != target.dtype:
        loss = loss.to(target.dtype)  # PyTorch accumulates in the target's memory: the result has its dtype
    return reduce_loss(loss, reduction)


def kl_div(input, target, *, reduction="mean", log_target=False):  # noqa: A002
    """Kullback-Leibler divergence of ``target`` from the distribution whose log-probabilities are ``input``.

    Pointwise loss: target * (log(target) - input) (0 where target is 0), or,
    with ``log_target=True`` (target given as log-probabilities),
    exp(target) * (target - input). Differentiable in both.

    Args:
        input: log-probabilities, any shape.
        target: probabilities (or log-probabilities), broadcastable with the input.
        reduction: 'mean' (the mean over every element, with PyTorch's warning
            that it is not the KL divergence), 'batchmean' (the sum divided by
            the batch size input.shape[0]: the true KL divergence), 'sum' or 'none'.
        log_target: whether ``target`` holds log-probabilities.

    Raises:
        TypeError: an argument is not a Tensor.
        ValueError: an unknown reduction.
        RuntimeError: an integer input or target, shapes that do not broadcast,
            or tensors on different devices.
    """
    fn = "kl_div"
    expect_tensor(fn, "input", input)
    expect_tensor(fn, "target", target)
    check_reduction(fn, reduction, extra=("batchmean",))
    if input.dtype.kind != "f" or target.dtype.kind != "f":
        raise RuntimeError(f"kl_div: Integral inputs not supported (input {input.dtype}, target {target.dtype}).")
    expect_same_device(fn, input, "input", target, "target")
    broadcast_shape(fn, ("input", input), ("target", target))
    if reduction == "mean":
        warnings.warn(
            "reduction: 'mean' divides the total loss by both the batch size and the support size."
            "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
            "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
            UserWarning,
            stacklevel=2,
        )
    if log_target:
        loss = target.exp() * (target - input)
    else:
        # target * log(target) with the 0 * log(0) = 0 convention; log of 1 where target is 0
        # keeps the forward (and its gradient) free of 0 * -inf.
        zero = mask(target.array == 0)
        entropy_term = elementwise.where(zero, 0.0, target * elementwise.where(zero, 1.0, target).log())
        loss = entropy_term - target * input
    if reduction == "batchmean":
        total = loss.sum()
        return total / input.shape[0] if input.ndim else total
    return reduce_loss(loss, reduction)


# -- modules -------------------------------------------------------------------------------------


class BCELoss(_WeightedLoss):
    """Binary cross-entropy between probabilities and targets: see ``binary_cross_entropy``.

    Args:
        weight: optional Tensor broadcastable to the input's shape (a buffer).
        reduction: 'mean' (default), 'sum' or 'none'.

    Shapes: input and target (*), the same; output scalar, or (*) with 'none'.
    """

    def __init__(self, weight=None, *, reduction: str = "mean"):
        super().__init__(weight, reduction, "BCELoss")

    def forward(self, input, target):  # noqa: A002
        """The loss of the probabilities ``input`` for ``target``."""
        return binary_cross_entropy(input, target, self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(_WeightedLoss):
    """Sigmoid and binary cross-entropy in one stable step: see ``binary_cross_entropy_with_logits``.

    Args:
        weight: optional Tensor broadcast with the loss (a buffer).
        reduction: 'mean' (default), 'sum' or 'none'.
        pos_weight: optional weight of positive examples, one per class along
            the last dimension (a buffer).

    Raises:
        TypeError: ``weight`` or ``pos_weight`` is neither a Tensor nor None.
    """

    def __init__(self, weight=None, *, reduction: str = "mean", pos_weight=None):
        super().__init__(weight, reduction, "BCEWithLogitsLoss")
        if pos_weight is not None and not isinstance(pos_weight, Tensor):
            raise TypeError(f"BCEWithLogitsLoss: pos_weight must be a Tensor or None, got {type(pos_weight).__name__}")
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input, target):  # noqa: A002
        """The loss of the logits ``input`` for ``target``."""
        return binary_cross_entropy_with_logits(input, target, self.weight, reduction=self.reduction,
                                                pos_weight=self.pos_weight)


class KLDivLoss(Module):
    """Kullback-Leibler divergence of ``target`` from ``exp(input)``: see ``kl_div``.

    Args:
        reduction: 'mean' (default, with a warning), 'batchmean' (the true KL
            divergence), 'sum' or 'none'.
        log_target: whether targets are given as log-probabilities.

    Raises:
        ValueError: an unknown reduction.
    """

    def __init__(self, *, reduction: str = "mean", log_target: bool = False):
        super().__init__()
        self.reduction = check_reduction("KLDivLoss", reduction, extra=("batchmean",))
        self.log_target = log_target

    def forward(self, input, target):  # noqa: A002
        """The divergence of ``target`` from the log-probabilities ``input``."""
        return kl_div(input, target, reduction=self.reduction, log_target=self.log_target)
