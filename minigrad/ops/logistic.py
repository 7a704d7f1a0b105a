"""Ops of the logistic (Bernoulli) family: a stable log-sigmoid and the binary cross-entropy.

Both are fused because composing them from ``log`` and ``sigmoid`` loses
precision or produces NaN exactly where these functions are used most:

* ``log(sigmoid(x))`` underflows to ``-inf`` for x below about -100
  (float64; -17 in float32) although the true value, about x, is finite.
  ``LogSigmoid`` computes ``min(x, 0) - log1p(exp(-|x|))``, finite everywhere.
* The binary cross-entropy clamps its logarithms at -100 (PyTorch's rule, so
  that a prediction of exactly 0 or 1 costs 100, not infinity). A clamped
  ``log`` would hand NaN (infinity times a zero mask) to the backward at
  x = 0 or 1; ``BinaryCrossEntropy`` uses PyTorch's closed-form gradient
  ``(x - y) / max(x (1 - x), 1e-12)`` instead.

Each backward is written with Tensor ops, so gradients of every order exist.
Arguments are validated by ``minigrad.nn.probability_losses``.
"""

from __future__ import annotations

import numpy as np

from minigrad.function import FunctionNode
from minigrad.grad_mode import _state as _grad_state
from minigrad.tensor import Tensor

# PyTorch's floor for log(x) and log(1 - x) in the binary cross-entropy, and the smallest
# x (1 - x) its gradient divides by.
LOG_FLOOR = -100.0
GRAD_EPS = 1e-12


def _constant(array) -> Tensor:
    return Tensor._make(array, False, None, 0)


class LogSigmoid(FunctionNode):
    """log(1 / (1 + exp(-x))) = min(x, 0) - log1p(exp(-|x|)), finite for every finite x

    The gradient is sigmoid(-x), recorded as Tensor ops (``Neg``, ``Sigmoid``).
    """

    def forward(self, x):
        self.retain_inputs((0,))
        xp = self.xp
        return (xp.minimum(x, 0) - xp.log1p(xp.exp(-xp.abs(x)))).astype(x.dtype, copy=False)

    def backward(self, g):
        (x,) = self.saved_inputs
        return g * (-x).sigmoid()


class BinaryCrossEntropy(FunctionNode):
    """-weight * (y * max(log x, -100) + (1 - y) * max(log(1 - x), -100)), reduced

    Inputs are the probabilities ``x`` and the targets ``y`` (same shape and
    dtype, both differentiable); ``weight`` is a constant array broadcastable
    to x's shape, or None. ``reduction`` is 'none', 'sum' or 'mean'.

    Gradients (PyTorch's): d/dx = weight (x - y) / max(x (1 - x), 1e-12),
    d/dy = weight (log(1 - x) - log x) (unclamped, so infinite at x = 0 or 1).
    """

    def __init__(self, weight=None, reduction="mean"):
        self.weight = weight
        self.reduction = reduction

    def forward(self, x, y):
        self.retain_inputs((0, 1))  # x and y have one shape (and the weight broadcasts to it)
        xp = self.xp
        with np.errstate(divide="ignore"):  # log(0) = -inf, floored below
            log_x = xp.maximum(xp.log(x), LOG_FLOOR)
            log_not_x = xp.maximum(xp.log1p(-x), LOG_FLOOR)
        loss = -(y * log_x + (1 - y) * log_not_x)
        if self.weight is not None:
            loss = loss * self.weight
        loss = loss.astype(x.dtype, copy=False)
        self.size = loss.size
        if self.reduction == "none":
            return loss
        if self.reduction == "sum":
            return loss.sum()
        if loss.size == 0:
            return xp.asarray(xp.nan, dtype=x.dtype)  # the mean of nothing, as PyTorch
        return loss.mean()

    def backward(self, g):
        x, y = self.saved_inputs
        need_x, need_y = self.needs_input_grad
        if self.reduction == "mean":
            g = g / max(self.size, 1)  # (empty: no element to scale)
        if not _grad_state.enabled:  # first order: arrays, and no warning for the infinite d/dy at 0 and 1
            return self._first_order(g.array, x.array, y.array, need_x, need_y)
        scale = g
        if self.weight is not None:
            scale = scale * _constant(self.weight.astype(x.dtype, copy=False))
        grad_x = grad_y = None
        if need_x:
            grad_x = scale * ((x - y) / (x * (1 - x)).clamp(min=GRAD_EPS))
        if need_y:
            grad_y = scale * ((-x).log1p() - x.log())
        return grad_x, grad_y

    def _first_order(self, g, x, y, need_x, need_y):
        xp = self.xp
        scale = g if self.weight is None else g * self.weight.astype(x.dtype, copy=False)
        grad_x = grad_y = None
        if need_x:
            grad_x = _constant((scale * ((x - y) / xp.maximum(x * (1 - x), GRAD_EPS))).astype(x.dtype, copy=False))
        if need_y:
            with np.errstate(divide="ignore"):
                grad_y = _constant((scale * (xp.log1p(-x) - xp.log(x))).astype(y.dtype, copy=False))
        return grad_x, grad_y


OPS = {"log_sigmoid": LogSigmoid, "binary_cross_entropy": BinaryCrossEntropy}
