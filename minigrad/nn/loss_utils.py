"""Argument checks and the final reduction shared by the pointwise losses.

Used by ``regression_losses``, ``probability_losses`` and ``margin_losses`` (the argument
checks by the activations and normalizations too);
error types and messages follow PyTorch's (a bad ``reduction`` is a
ValueError, shapes that do not broadcast a RuntimeError).
"""

from __future__ import annotations

import warnings

import numpy as np

from minigrad import backend
from minigrad.grad_mode import _state as _grad_state
from minigrad.tensor import Tensor

REDUCTIONS = ("none", "mean", "sum")


def expect_tensor(fn: str, name: str, value) -> None:
    """Raise TypeError unless ``value`` is a Tensor."""
    if not isinstance(value, Tensor):
        raise TypeError(f"{fn}(): argument '{name}' must be a Tensor, got {type(value).__name__}")


def expect_floating_tensor(fn: str, x) -> None:
    """TypeError unless ``x`` (the argument 'input') is a Tensor; PyTorch's NotImplementedError unless it is float."""
    expect_tensor(fn, "input", x)
    if x.dtype.kind != "f":
        raise NotImplementedError(f"{fn}(): not implemented for dtype {x.dtype} (floating point input only)")


def expect_number(fn: str, name: str, value) -> float:
    """``value`` as a float; TypeError unless it is a real number (bools excluded)."""
    if not isinstance(value, (int, float, np.integer, np.floating)) or isinstance(value, bool):
        raise TypeError(f"{fn}(): argument '{name}' must be a number, got {type(value).__name__}")
    return float(value)


def check_reduction(fn: str, reduction, extra=()) -> str:
    """``reduction`` if it is 'none', 'mean', 'sum' (or one of ``extra``), else PyTorch's ValueError."""
    if reduction not in REDUCTIONS + tuple(extra):
        raise ValueError(f"{fn}(): {reduction!r} is not a valid value for reduction "
                         f"(expected one of {', '.join(map(repr, REDUCTIONS + tuple(extra)))})")
    return reduction


def mask(condition):
    """A boolean comparison result as an array (NumPy gives a scalar for 0-d operands), for ``where``."""
    if backend.is_array(condition):
        return condition
    return np.asarray(condition)


def reduce_loss(loss: Tensor, reduction: str) -> Tensor:
    """The elementwise ``loss`` itself ('none'), its sum ('sum') or its mean ('mean'; NaN when empty)."""
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    if loss.numel() == 0:
        return loss.sum() * float("nan")  # PyTorch's mean of nothing, without NumPy's warning
    return loss.mean()


def expect_same_device(fn: str, a: Tensor, a_name: str, b: Tensor, b_name: str) -> None:
    """RuntimeError naming both devices when ``a`` and ``b`` live on different ones."""
    if a.device != b.device:
        raise RuntimeError(f"{fn}(): '{a_name}' is on {a.device} but '{b_name}' is on {b.device}; "
                           "they must be on the same device")


def broadcast_shape(fn: str, *named) -> tuple:
    """The broadcast shape of ``(name, tensor)`` pairs, or PyTorch's RuntimeError naming every shape."""
    try:
        return tuple(np.broadcast_shapes(*(t.shape for _, t in named)))
    except ValueError:
        shapes = ", ".join(f"{name} of shape {tuple(t.shape)}" for name, t in named)
        raise RuntimeError(f"{fn}(): the shapes do not broadcast together: {shapes}") from None


def warn_if_target_size_differs(input: Tensor, target: Tensor, stacklevel: int = 3) -> None:  # noqa: A002
    """PyTorch's warning when a pointwise loss broadcasts a target of another shape."""
    if input.shape != target.shape:
        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size ({input.shape}). "
            "This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size.",
            UserWarning,
            stacklevel=stacklevel + 1,
        )


def expect_no_grad(fn: str, name: str, t: Tensor) -> None:
    """PyTorch's RuntimeError for an argument the loss is not differentiable in that requires grad (in grad mode)."""
    if t.requires_grad and _grad_state.enabled:
        raise RuntimeError(f"The function '{fn}' is not differentiable with respect to argument '{name}'. "
                           "This input cannot have requires_grad True.")


def expect_float_input(fn: str, input: Tensor) -> None:  # noqa: A002
    """PyTorch's RuntimeError for a loss whose result keeps the input's dtype, given an integer input."""
    if input.dtype.kind != "f":
        raise RuntimeError(f"{fn}(): input of dtype {input.dtype} is not supported: the loss is computed in "
                           "the input's dtype, which must be floating point (convert it with .float())")
