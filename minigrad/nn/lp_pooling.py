"""Power-average pooling: ``F.lp_pool1d``, ``F.lp_pool2d`` and the modules ``LPPool1d``, ``LPPool2d``.

Each window gives (sum of x ** p over the window) ** (1 / p): the average
pooling of ``x ** p``, times the window's size, to the power 1 / p. With p = 1
that is the window's sum; as p grows it nears the window's maximum (of
non-negative values). As in PyTorch, no padding is added; a negative power
sum (an odd p over negative values) gives NaN, and p = 0 raises
ZeroDivisionError; p = inf gives each window's largest magnitude, -inf its
smallest. Composed of differentiable Tensor ops, so gradients of
every order come from them.
"""

from __future__ import annotations

import numbers

from minigrad.nn.module import Module
from minigrad.nn.pooling import _is_int, avg_pool1d, avg_pool2d, max_pool1d, max_pool2d
from minigrad.ops._util import expect_tensor
from minigrad.ops.elementwise import where
from minigrad.tensor import Tensor

__all__ = ["lp_pool1d", "lp_pool2d", "LPPool1d", "LPPool2d"]


def _power(fn, norm_type):
    """``norm_type`` as a Python number (a 0-d Tensor is read out).

    Raises:
        TypeError: not a real number.
        ZeroDivisionError: 0, whose root 1 / p PyTorch fails to take (its type).
    """
    if isinstance(norm_type, Tensor) and norm_type.ndim == 0:
        norm_type = norm_type.item()
    if not isinstance(norm_type, numbers.Real):
        raise TypeError(f"{fn}(): norm_type must be an int or a float, got {type(norm_type).__name__}")
    if norm_type == 0:
        raise ZeroDivisionError(f"{fn}(): norm_type must not be 0 (the result is a 1 / norm_type root)")
    return norm_type


def _root(pooled, norm_type, window):
    """(window sum of powers) ** (1 / p) from the average pooling ``pooled`` of the powers."""
    # PyTorch's sign(x) * relu(|x|) is x itself, with a gradient of 0 where x is 0 (where the root's is
    # infinite): ``where`` keeps that zero, as PyTorch's relu backward does.
    total = where(pooled != 0, pooled, 0).mul(window)
    return total.pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):  # noqa: A002
    """Power-average pooling over sliding windows of a sequence batch.

    Args:
        input: Tensor (N, C, L) or (C, L).
        norm_type: the power p (int or float, not 0).
        kernel_size: the window length, an int.
        stride: an int; None means ``kernel_size``.
        ceil_mode: round the output length up (a window may run past the input).

    Returns:
        Tensor (N, C, L_out) (or (C, L_out)) holding (sum of x ** p over each
        window) ** (1 / p); integer inputs give floats, as in PyTorch.

    Raises:
        TypeError: ``norm_type`` not a number, ``kernel_size`` not an int, or a bad stride or flag.
        ZeroDivisionError: ``norm_type`` 0 (as in PyTorch).
        RuntimeError: wrong number of dimensions, non-positive kernel or stride, or an empty output.
    """
    fn = "lp_pool1d"
    norm_type = _power(fn, norm_type)
    if not _is_int(kernel_size):
        raise TypeError(f"{fn}(): kernel_size must be an int, got {kernel_size!r}")
    return _lp_pool(fn, input, norm_type, kernel_size, stride, ceil_mode, kernel_size, max_pool1d, avg_pool1d)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):  # noqa: A002
    """Power-average pooling over sliding windows of an image batch.

    Args:
        input: Tensor (N, C, H, W) or (C, H, W).
        norm_type: the power p (int or float, not 0).
        kernel_size: an int or (kh, kw).
        stride: an int or pair; None means ``kernel_size``.
        ceil_mode: round the output size up (a window may run past the input).

    Returns:
        Tensor (N, C, Ho, Wo) (or (C, Ho, Wo)) holding (sum of x ** p over each
        window) ** (1 / p); integer inputs give floats, as in PyTorch.

    Raises:
        TypeError: ``norm_type`` not a number, ``kernel_size`` not an int or a pair of ints, or a bad stride or flag.
        ValueError: ``kernel_size`` a tuple of another length than 2 (as in PyTorch).
        ZeroDivisionError: ``norm_type`` 0 (as in PyTorch).
        IndexError: fewer than 3 dimensions (as in PyTorch).
        RuntimeError: more than 4 dimensions, non-positive kernel or stride, or an empty output.
    """
    fn = "lp_pool2d"
    norm_type = _power(fn, norm_type)
    if _is_int(kernel_size):
        kh = kw = int(kernel_size)
    elif isinstance(kernel_size, (tuple, list)) and all(map(_is_int, kernel_size)):
        if len(kernel_size) != 2:
            raise ValueError(f"{fn}(): kernel_size must be an int or a pair of ints, got {kernel_size!r}")
        kh, kw = kernel_size
    else:
        raise TypeError(f"{fn}(): kernel_size must be an int or a pair of ints, got {kernel_size!r}")
    return _lp_pool(fn, input, norm_type, kernel_size, stride, ceil_mode, kh * kw, max_pool2d, avg_pool2d)


def _lp_pool(fn, input, norm_type, kernel_size, stride, ceil_mode, window, max_pool, avg_pool):  # noqa: A002
    """(sum of x ** p over each window of ``window`` elements) ** (1 / p) through ``avg_pool``; for
    p = +-inf the largest (smallest) magnitude through ``max_pool``."""
    expect_tensor(input, fn, "input")
    if abs(norm_type) == float("inf"):
        sign = 1 if norm_type > 0 else -1
        return sign * max_pool(sign * input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    pooled = avg_pool(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return _root(pooled, norm_type, window)


class _LPPoolNd(Module):
    """Shared constructor of the power-average pooling modules: ``norm_type``, ``kernel_size``, ``stride``
    (None: the kernel size) and ``ceil_mode``, checked when called."""

    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode: bool = False):
        super().__init__()
        self.norm_type, self.kernel_size, self.stride, self.ceil_mode = norm_type, kernel_size, stride, ceil_mode

    def extra_repr(self) -> str:
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, stride={self.stride}, "
                f"ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPoolNd):
    """Power-average pooling over (N, C, L) or (C, L): see ``lp_pool1d``."""

    def forward(self, input):  # noqa: A002
        """Pool ``input``."""
        return lp_pool1d(input, self.norm_type, self.kernel_size, self.stride, self.ceil_mode)


class LPPool2d(_LPPoolNd):
    """Power-average pooling over (N, C, H, W) or (C, H, W): see ``lp_pool2d``."""

    def forward(self, input):  # noqa: A002
        """Pool ``input``."""
        return lp_pool2d(input, self.norm_type, self.kernel_size, self.stride, self.ceil_mode)
