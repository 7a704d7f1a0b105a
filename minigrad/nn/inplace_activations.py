"""The in-place functional activations of ``torch.nn.functional``: ``relu_``, ``leaky_relu_``, ``elu_``,
``hardtanh_`` and ``threshold_``.

Each overwrites its input's memory with the activation and returns the
input, through ``minigrad.inplace`` with PyTorch's rules: the write is
recorded for autograd when the input is part of a graph (its ``grad_fn``
becomes the activation's node, views of it see the new values, and a node
that saved the old values raises if its backward runs), and in grad mode a
leaf that requires grad, or a view of one, raises PyTorch's RuntimeError.
"""

from __future__ import annotations

from minigrad.nn import activation
from minigrad.nn.pointwise_activations import in_place
from minigrad.nn.pointwise_activations import threshold as _threshold
from minigrad.ops import elementwise
from minigrad.tensor import Tensor

__all__ = ["relu_", "leaky_relu_", "elu_", "hardtanh_", "threshold_"]


def _write_into(fn: str, input, op) -> Tensor:  # noqa: A002
    """``op(input)`` written into ``input`` through ``in_place``; TypeError unless ``input`` is a Tensor."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{fn}(): argument 'input' must be a Tensor, got {type(input).__name__}")
    return in_place(fn, input, op)


def relu_(input):  # noqa: A002  (PyTorch's names)
    """max(x, 0) written into ``input``; returns ``input``.

    Raises:
        TypeError: not a Tensor.
        RuntimeError: in grad mode, ``input`` is a leaf that requires grad (or a view of one).
    """
    return _write_into("relu_", input, lambda x: elementwise.ReLU()(x))


def leaky_relu_(input, negative_slope=0.01):  # noqa: A002
    """``F.leaky_relu`` written into ``input``; returns ``input``.

    Raises ``F.leaky_relu``'s errors (TypeError, NotImplementedError) and ``relu_``'s RuntimeError.
    """
    return _write_into("leaky_relu_", input, lambda x: activation.leaky_relu(x, negative_slope))


def elu_(input, alpha=1.0):  # noqa: A002
    """``F.elu`` written into ``input``; returns ``input``.

    Raises ``F.elu``'s errors (TypeError, NotImplementedError) and ``relu_``'s RuntimeError.
    """
    return _write_into("elu_", input, lambda x: activation.elu(x, alpha))


def hardtanh_(input, min_val=-1.0, max_val=1.0):  # noqa: A002
    """``F.hardtanh`` written into ``input``; returns ``input``.

    Raises:
        TypeError: not a Tensor, or a bound not a number. ValueError: ``max_val`` < ``min_val``.
        NotImplementedError: not floating point.
        RuntimeError: in grad mode, ``input`` is a leaf that requires grad (or a view of one).
    """
    return _write_into("hardtanh_", input, lambda x: activation.hardtanh(x, min_val, max_val))


def threshold_(input, threshold, value):  # noqa: A002
    """``F.threshold`` written into ``input`` (integer inputs allowed); returns ``input``.

    Raises:
        TypeError: not a Tensor, or the numbers are not numbers.
        RuntimeError: in grad mode, ``input`` is a leaf that requires grad (or a view of one).
    """
    return _threshold(input, threshold, value, inplace=True)
