"""Activations that act along a dimension rather than element by element: the gated linear unit
(``glu``/``GLU``), the parametric ReLU with one learnable slope per channel (``prelu``/``PReLU``) and
the softmax over image channels (``Softmax2d``).

Names, signatures, defaults, values, gradients and error types mirror
PyTorch's. Each is a composition of registered ops.
"""

from __future__ import annotations

import numpy as np

from minigrad import factory
from minigrad.grad_mode import no_grad
from minigrad.nn import functional as F
from minigrad.nn.loss_utils import expect_number, mask
from minigrad.nn.module import Module
from minigrad.nn.parameter import Parameter
from minigrad.ops import elementwise
from minigrad.tensor import Tensor

__all__ = ["glu", "prelu", "GLU", "PReLU", "Softmax2d"]


def _expect_float_tensor(fn: str, name: str, x) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument '{name}' must be a Tensor, got {type(x).__name__}")
    if x.dtype.kind != "f":
        raise NotImplementedError(f"{fn}(): not implemented for dtype {x.dtype} (floating point {name} only)")


def glu(input, dim=-1):  # noqa: A002  (PyTorch's names)
    """Gated linear unit: a * sigmoid(b), where a and b are the two halves of ``input`` along ``dim``.

    Shapes: input (*, 2 n, *) gives (*, n, *).

    Raises:
        TypeError: not a Tensor, or ``dim`` not an int. NotImplementedError: not floating point.
        IndexError: ``dim`` out of range.
        RuntimeError: a 0-d input, or an odd size along ``dim``.
    """
    fn = "glu"
    _expect_float_tensor(fn, "input", input)
    if not isinstance(dim, (int, np.integer)) or isinstance(dim, bool):
        raise TypeError(f"glu(): dim must be an int, got {type(dim).__name__}")
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    if not -input.ndim <= dim < input.ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-input.ndim}, {input.ndim - 1}], "
                         f"but got {dim})")
    dim = int(dim) % input.ndim
    if input.shape[dim] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {dim} is size {input.shape[dim]}")
    first, second = input.chunk(2, dim)
    return first * second.sigmoid()


def prelu(input, weight):  # noqa: A002
    """x where x > 0, else weight * x, with one slope for all channels or one per channel (dimension 1).

    The gradient at 0 is the slope, as in PyTorch; ``weight`` receives x * grad where x <= 0.

    Args:
        input: Tensor (N, C, *) (or any shape with a single slope).
        weight: the slopes, 0-d or 1-D with 1 or C elements (C = 1 for inputs of fewer than 2 dimensions).

    Raises:
        TypeError: an argument is not a Tensor. NotImplementedError: not floating point.
        RuntimeError: ``weight`` has more than one dimension, or a number of
            elements other than 1 or C.
    """
    fn = "prelu"
    _expect_float_tensor(fn, "input", input)
    _expect_float_tensor(fn, "weight", weight)
    if weight.ndim > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.ndim}")
    channels = input.shape[1] if input.ndim >= 2 else 1
    count = weight.numel()
    if count != 1 and count != channels:
        raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found parameter numbers = {count} "
                           f"and channel size = {channels}.")
    if input.device != weight.device:
        raise RuntimeError(f"prelu(): input is on {input.device} but weight is on {weight.device}")
    if count == 1 and input.ndim < 2:
        slope = weight.reshape(())
    else:
        slope = weight.reshape((count,) + (1,) * (input.ndim - 2))
    return elementwise.where(mask(input.array > 0), input, slope * input)


class GLU(Module):
    """Gated linear unit along ``dim`` (default -1): see ``glu``."""

    def __init__(self, dim: int = -1):
        super().__init__()
        self.dim = dim

    def forward(self, input):  # noqa: A002
        """Apply the GLU."""
        return glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class PReLU(Module):
    """Parametric ReLU with a learnable slope: see ``prelu``.

    Args:
        num_parameters: 1 (one slope shared by all channels) or the number of
            channels C of the input (N, C, *).
        init: the initial slope (0.25).
        device, dtype: of the ``weight`` parameter (default float dtype).

    Attributes:
        weight: Parameter of shape (num_parameters,).

    Raises:
        TypeError: ``num_parameters`` is not an int or ``init`` not a number.
        RuntimeError: ``num_parameters`` is less than 1 (PyTorch's class: it fails allocating a negative
            count, and a module of 0 slopes fails when called).
    """

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device=None, dtype=None):
        super().__init__()
        if not isinstance(num_parameters, (int, np.integer)) or isinstance(num_parameters, bool):
            raise TypeError(f"PReLU: num_parameters must be an int, got {type(num_parameters).__name__}")
        if num_parameters < 1:
            raise RuntimeError(f"PReLU: num_parameters must be at least 1, got {num_parameters}")
        self.num_parameters = int(num_parameters)
        self.init = expect_number("PReLU", "init", init)
        self.weight = Parameter(factory.full((self.num_parameters,), self.init, dtype=dtype, device=device))

    def reset_parameters(self) -> None:
        """Set every slope back to ``init``."""
        with no_grad():
            self.weight.fill_(self.init)

    def forward(self, input):  # noqa: A002
        """Apply the PReLU with this module's slopes."""
        return prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class Softmax2d(Module):
    """Softmax over the channels of each position of an image: input (N, C, H, W) or (C, H, W), along C.

    Raises:
        ValueError: the input is neither 3-D nor 4-D.
    """

    def forward(self, input):  # noqa: A002
        """Apply softmax along the channel dimension (-3)."""
        if not isinstance(input, Tensor):
            raise TypeError(f"Softmax2d: input must be a Tensor, got {type(input).__name__}")
        if input.ndim not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.ndim}D instead")
        return F.softmax(input, -3)
