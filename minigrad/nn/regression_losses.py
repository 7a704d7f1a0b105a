"""Regression losses: L1, smooth L1, Huber, and the Gaussian and Poisson negative log-likelihoods,
as functions and as modules.

Names, defaults, results, dtypes and error types mirror PyTorch's
``F.l1_loss``, ``F.smooth_l1_loss``, ``F.huber_loss``, ``F.gaussian_nll_loss``,
``F.poisson_nll_loss`` and ``nn.L1Loss``, ``nn.SmoothL1Loss``, ``nn.HuberLoss``,
``nn.GaussianNLLLoss``, ``nn.PoissonNLLLoss``. Where PyTorch has the
deprecated ``size_average``/``reduce`` arguments, the arguments after them
are keyword-only here. Each loss is a composition of registered ops, so it
is differentiable in every tensor argument (to every order).
"""

from __future__ import annotations

import math

from minigrad import backend
from minigrad.nn.loss_base import _Loss
from minigrad.nn.loss_utils import (
    broadcast_shape,
    check_reduction,
    expect_float_input,
    expect_number,
    expect_same_device,
    expect_tensor,
    mask,
    reduce_loss,
    warn_if_target_size_differs,
)
from minigrad.ops import elementwise
from minigrad.promotion import promote_types
from minigrad.tensor import Tensor

__all__ = [
    "l1_loss", "smooth_l1_loss", "huber_loss", "gaussian_nll_loss", "poisson_nll_loss", "L1Loss", "SmoothL1Loss",
    "HuberLoss", "GaussianNLLLoss", "PoissonNLLLoss",
]

_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def _pair(fn: str, input, target, reduction, warn: bool = True):  # noqa: A002  (PyTorch's names)
    """Check a pointwise loss's (input, target, reduction); return the broadcast shape."""
    expect_tensor(fn, "input", input)
    expect_tensor(fn, "target", target)
    check_reduction(fn, reduction)
    expect_same_device(fn, input, "input", target, "target")
    if warn:
        warn_if_target_size_differs(input, target, stacklevel=3)
    return broadcast_shape(fn, ("input", input), ("target", target))


def _expect_float_result(fn: str, input, target, error=NotImplementedError) -> None:  # noqa: A002
    """``error`` (PyTorch's type for ``fn``) unless input and target promote to a floating point dtype."""
    dtype = promote_types(input.dtype, target.dtype)
    if dtype.kind != "f":
        raise error(f"{fn}(): input of dtype {input.dtype} and target of dtype {target.dtype} promote to "
                        f"{dtype}; the loss needs a floating point dtype (convert one with .float())")


def _abs_error(input, target):  # noqa: A002
    """|input - target| with the gradient 0 where they are equal (PyTorch's sign convention)."""
    return (input - target).abs()


def _weighted(fn: str, loss, input, weight):  # noqa: A002
    """(loss * weight, weight) after PyTorch's check that ``weight`` has the input's shape."""
    expect_tensor(fn, "weight", weight)
    if weight.shape != input.shape:
        raise ValueError(f"Weights and input must have the same size. ({fn}(): weight of shape {weight.shape}, "
                         f"input of shape {input.shape})")
    expect_same_device(fn, input, "input", weight, "weight")
    return loss * weight


# -- functions -------------------------------------------------------------------------------------


def l1_loss(input, target, *, reduction="mean", weight=None):  # noqa: A002
    """Mean absolute error |input - target|, reduced.

    Shapes that differ broadcast, with PyTorch's warning; dtypes promote
    (a float32 input with a float64 target gives float64). The gradient is 0
    where input equals target.

    Args:
        weight: optional per-element weights of the input's shape; then 'mean'
            is the weighted mean sum(w |d|) / sum(w), as in PyTorch.
        reduction: 'mean' (default), 'sum' or 'none'.

    Raises:
        TypeError: an argument is not a Tensor.
        ValueError: an unknown reduction, or a weight of another shape than the input.
        RuntimeError: both are integer tensors (PyTorch's type, from its mean), shapes that
            do not broadcast, or tensors on different devices.
    """
    fn = "l1_loss"
    _pair(fn, input, target, reduction)
    _expect_float_result(fn, input, target, RuntimeError)
    loss = _abs_error(input, target)
    if weight is None:
        return reduce_loss(loss, reduction)
    loss = _weighted(fn, loss, input, weight)
    if reduction == "mean":
        return loss.sum() / weight.sum()
    return reduce_loss(loss, reduction)


def smooth_l1_loss(input, target, *, reduction="mean", beta=1.0):  # noqa: A002
    """Smooth L1: 0.5 d**2 / beta where |d| < beta, else |d| - 0.5 beta (d = input - target), reduced.

    ``beta=0`` is the L1 loss. Broadcasting and dtypes as in ``l1_loss``.

    Raises:
        TypeError: an argument is not a Tensor, or ``beta`` is not a number.
        ValueError: an unknown reduction.
        NotImplementedError: both are integer tensors (PyTorch's type).
        RuntimeError: ``beta`` is negative, shapes that do not broadcast, devices differ.
    """
    fn = "smooth_l1_loss"
    _pair(fn, input, target, reduction)
    beta = expect_number(fn, "beta", beta)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    _expect_float_result(fn, input, target)
    d = _abs_error(input, target)
    if beta == 0:
        return reduce_loss(d, reduction)
    # d * d / beta on the far side of beta is discarded by where (gradient 0 there).
    loss = elementwise.where(mask(d.array < beta), (0.5 / beta) * (d * d), d - 0.5 * beta)
    return reduce_loss(loss, reduction)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):  # noqa: A002
    """Huber loss: 0.5 d**2 where |d| < delta, else delta (|d| - 0.5 delta) (d = input - target), reduced.

    As in PyTorch, the loss has the input's dtype (the target is converted),
    and a weight (the input's shape) multiplies each element before the plain
    'mean' or 'sum'. Shapes that differ broadcast, with a warning.

    Raises:
        TypeError: an argument is not a Tensor, or ``delta`` is not a number.
        ValueError: an unknown reduction, or a weight of another shape.
        NotImplementedError: both are integer tensors (PyTorch's type).
        RuntimeError: ``delta`` is not positive, an integer input with a float target,
            shapes that do not broadcast, or devices that differ.
    """
    fn = "huber_loss"
    _pair(fn, input, target, reduction)
    delta = expect_number(fn, "delta", delta)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    _expect_float_result(fn, input, target)
    expect_float_input(fn, input)
    if target.dtype != input.dtype:
        target = target.to(input.dtype)
    d = _abs_error(input, target)
    loss = elementwise.where(mask(d.array < delta), 0.5 * (d * d), delta * (d - 0.5 * delta))
    if weight is not None:
        loss = _weighted(fn, loss, input, weight)
    return reduce_loss(loss, reduction)


def _var_shape(fn: str, input, var):  # noqa: A002
    """``var`` shaped to broadcast with ``input`` by PyTorch's homoscedastic rules, or ValueError."""
    if var.shape == input.shape:
        return var
    if var.shape == input.shape[:-1]:
        return var.unsqueeze(-1)  # one variance per sample, shared by its last dimension
    if var.ndim == input.ndim and sum(v for i, v in zip(input.shape, var.shape) if i != v) == 1:
        return var  # one mismatched dimension, of size 1 in var: broadcast along it
    raise ValueError(f"var is of incorrect size ({fn}(): var of shape {var.shape} for input of shape "
                     f"{input.shape}; expected the input's shape, the input's shape without its last dimension, "
                     "or the input's shape with one dimension of size 1)")


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):  # noqa: A002
    """Negative log-likelihood of ``target`` under normal distributions of mean ``input`` and variance ``var``.

    loss = 0.5 (log(max(var, eps)) + (input - target)**2 / max(var, eps)),
    plus 0.5 log(2 pi) when ``full``. As in PyTorch, the clamp at ``eps`` is
    not differentiated: ``var`` receives the gradient as if it were unclamped.

    Args:
        input: expected values (N, *) or (*).
        target: samples, the input's shape (or broadcastable).
        var: variances (non-negative): the input's shape (heteroscedastic),
            the input's shape without its last dimension or with one dimension
            of size 1 (homoscedastic), or a float (the same for every element).
        full: add the constant term.
        eps: the floor of the variance.
        reduction: 'mean' (default), 'sum' or 'none'.

    Raises:
        TypeError: an argument has the wrong type.
        ValueError: a negative variance, ``var`` of an unusable shape, or an unknown reduction.
    """
    fn = "gaussian_nll_loss"
    expect_tensor(fn, "input", input)
    expect_tensor(fn, "target", target)
    eps = expect_number(fn, "eps", eps)
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = Tensor._make(backend.get_array_module(input.array).full(input.shape, var, dtype=input.dtype),
                           False, None, 0)
    else:
        expect_tensor(fn, "var", var)
        if bool((var.array < 0).any()):
            raise ValueError("var has negative entry/entries")
    var = _var_shape(fn, input, var)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not valid ({fn}(): reduction must be 'none', 'mean' or 'sum')")
    expect_same_device(fn, input, "input", target, "target")
    expect_same_device(fn, input, "input", var, "var")
    broadcast_shape(fn, ("input", input), ("target", target), ("var", var))
    floor = var.detach()
    var = var + (elementwise.clamp(floor, min=eps) - floor)  # clamped value, unclamped gradient
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + _HALF_LOG_2PI
    return reduce_loss(loss, reduction)


def poisson_nll_loss(input, target, log_input=True, full=False, *, eps=1e-8, reduction="mean"):  # noqa: A002
    """Negative log-likelihood of ``target`` counts under Poisson distributions of rate ``input``.

    loss = exp(input) - target * input with ``log_input`` (input is the log
    rate), else input - target * log(input + eps). With ``full``, Stirling's
    approximation of log(target!) (target log target - target + 0.5 log(2 pi target))
    is added where target > 1.

    Raises:
        TypeError: an argument has the wrong type.
        ValueError: an unknown reduction.
        RuntimeError: shapes that do not broadcast, or devices that differ.
    """
    fn = "poisson_nll_loss"
    _pair(fn, input, target, reduction, warn=False)
    eps = expect_number(fn, "eps", eps)
    _expect_float_result(fn, input, target, TypeError)  # PyTorch computes a float loss of integer tensors
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        big = mask(target.array > 1)
        safe = elementwise.where(big, target, 1.0)  # log of 1 where the term is not used
        stirling = safe * safe.log() - safe + 0.5 * (2 * math.pi * safe).log()
        loss = loss + elementwise.where(big, stirling, 0.0)
    return reduce_loss(loss, reduction)


# -- modules ---------------------------------------------------------------------------------------


class L1Loss(_Loss):
    """Mean absolute error: see ``l1_loss``. Shapes: input and target (*); a scalar unless reduction='none'."""

    def forward(self, input, target):  # noqa: A002
        """The loss between ``input`` and ``target``."""
        return l1_loss(input, target, reduction=self.reduction)


class SmoothL1Loss(_Loss):
    """Squared error below ``beta``, absolute error above: see ``smooth_l1_loss``.

    Raises:
        ValueError: an unknown reduction.
    """

    def __init__(self, *, reduction: str = "mean", beta: float = 1.0):
        super().__init__(reduction=reduction)
        self.beta = beta

    def forward(self, input, target):  # noqa: A002
        """The loss between ``input`` and ``target``."""
        return smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    """Squared error below ``delta``, ``delta``-scaled absolute error above: see ``huber_loss``.

    Raises:
        ValueError: an unknown reduction.
    """

    def __init__(self, reduction: str = "mean", delta: float = 1.0):
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input, target):  # noqa: A002
        """The loss between ``input`` and ``target``."""
        return huber_loss(input, target, self.reduction, self.delta)


class GaussianNLLLoss(_Loss):
    """Gaussian negative log-likelihood: see ``gaussian_nll_loss``; called as ``loss(input, target, var)``.

    Raises:
        ValueError: an unknown reduction.
    """

    def __init__(self, *, full: bool = False, eps: float = 1e-6, reduction: str = "mean"):
        super().__init__(reduction=reduction)
        self.full = full
        self.eps = eps

    def forward(self, input, target, var):  # noqa: A002
        """The negative log-likelihood of ``target`` under N(input, var)."""
        return gaussian_nll_loss(input, target, var, full=self.full, eps=self.eps, reduction=self.reduction)


class PoissonNLLLoss(_Loss):
    """Poisson negative log-likelihood: see ``poisson_nll_loss``.

    Raises:
        ValueError: an unknown reduction.
    """

    def __init__(self, log_input: bool = True, full: bool = False, *, eps: float = 1e-8, reduction: str = "mean"):
        super().__init__(reduction=reduction)
        self.log_input = log_input
        self.full = full
        self.eps = eps

    def forward(self, log_input, target):
        """The negative log-likelihood of the counts ``target`` given the (log) rates."""
        return poisson_nll_loss(log_input, target, self.log_input, self.full, eps=self.eps, reduction=self.reduction)
