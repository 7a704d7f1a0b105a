"""Loss modules: thin wrappers that hold the options of ``minigrad.nn.functional`` losses.

``reduction`` is ``"mean"`` (default), ``"sum"`` or ``"none"`` as in PyTorch.
PyTorch's deprecated ``size_average``/``reduce`` arguments are not accepted.
"""

from __future__ import annotations

from minigrad.nn import functional as F
from minigrad.nn.module import Module
from minigrad.tensor import Tensor

__all__ = ["MSELoss", "CrossEntropyLoss", "NLLLoss"]

_REDUCTIONS = ("mean", "sum", "none")


def _check_reduction(reduction, loss):
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{loss}: reduction must be one of {_REDUCTIONS}, got {reduction!r}")
    return reduction


class _WeightedLoss(Module):
    """A loss with an optional per-class ``weight``, kept as a buffer (it moves with ``to()``)."""

    def __init__(self, weight, reduction, loss):
        super().__init__()
        if weight is not None and not isinstance(weight, Tensor):
            raise TypeError(f"{loss}: weight must be a Tensor or None, got {type(weight).__name__}")
        self.register_buffer("weight", weight)
        self.reduction = _check_reduction(reduction, loss)


class MSELoss(Module):
    """Mean squared error ``(input - target) ** 2``, reduced by ``reduction``.

    Shapes: ``input`` and ``target`` of the same shape; a scalar unless ``reduction="none"``.
    """

    def __init__(self, reduction: str = "mean"):
        super().__init__()
        self.reduction = _check_reduction(reduction, "MSELoss")

    def forward(self, input, target):  # noqa: A002  (PyTorch's name)
        """The loss between ``input`` and ``target``."""
        return F.mse_loss(input, target, reduction=self.reduction)


class CrossEntropyLoss(_WeightedLoss):
    """Cross entropy between logits and class indices (or class probabilities).

    Args:
        weight: a 1-D tensor of C per-class weights.
        ignore_index: target value that contributes nothing (nor to the mean's denominator).
        reduction: "mean" (weighted mean over non-ignored targets), "sum" or "none".
        label_smoothing: in [0, 1]; mixes the target with the uniform distribution.

    Shapes: ``input`` (N, C) or (N, C, d1, ...) or (C,); ``target`` (N) / (N, d1, ...)
    of class indices, or the input's shape of probabilities.

    Raises:
        ValueError: an unknown reduction.
        TypeError: ``label_smoothing`` is not a number.
        RuntimeError: ``label_smoothing`` outside [0, 1] (checked at construction; PyTorch's
            forward raises this type).
    """

    def __init__(self, weight=None, ignore_index: int = -100, reduction: str = "mean",
                 label_smoothing: float = 0.0):
        super().__init__(weight, reduction, "CrossEntropyLoss")
        if not isinstance(label_smoothing, (int, float)):
            raise TypeError(f"CrossEntropyLoss: label_smoothing must be a float, got {type(label_smoothing).__name__}")
        if not 0.0 <= label_smoothing <= 1.0:
            raise RuntimeError(f"CrossEntropyLoss: label_smoothing must be in [0, 1], got {label_smoothing!r}")
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input, target):  # noqa: A002
        """The loss of the logits ``input`` for ``target``."""
        return F.cross_entropy(input, target, weight=self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, label_smoothing=self.label_smoothing)


class NLLLoss(_WeightedLoss):
    """Negative log likelihood of class indices given log-probabilities (``-input[n, target[n]]``).

    Args:
        weight: a 1-D tensor of C per-class weights.
        ignore_index: target value that contributes nothing (nor to the mean's denominator).
        reduction: "mean" (weighted mean over non-ignored targets), "sum" or "none".

    Shapes: ``input`` (N, C) or (N, C, d1, ...) or (C,); ``target`` (N) / (N, d1, ...) / ().
    """

    def __init__(self, weight=None, ignore_index: int = -100, reduction: str = "mean"):
        super().__init__(weight, reduction, "NLLLoss")
        self.ignore_index = ignore_index

    def forward(self, input, target):  # noqa: A002
        """The loss of the log-probabilities ``input`` for ``target``."""
        return F.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction)
