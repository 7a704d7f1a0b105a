"""Activation modules and functions: ``Softmax``, ``LogSoftmax``, ``Softmin``, ``LeakyReLU``, ``ELU``,
``SiLU``, ``Hardtanh``, ``ReLU6``, and ``Unflatten``.

Names, signatures, defaults and semantics (gradients at kinks included)
mirror ``torch.nn``; the functions (``leaky_relu``, ``elu``, ``silu``,
``hardtanh``, ``relu6``, ``softmin``) are re-exported by
``minigrad.nn.functional``. They are compositions of registered ops
(``where``, ``clamp``, ``exp``...), so their gradients of every order come
from those ops.

``Unflatten``, a reshaping layer used beside activations in ``Sequential``
models, lives here too.
"""

from __future__ import annotations

import numpy as np

from minigrad.nn import functional as F
from minigrad.nn.loss_utils import expect_floating_tensor, expect_number
from minigrad.nn.module import Module
from minigrad.nn.pointwise_activations import _checked_parameter, _ELUBase, _inplace_repr, _InplaceActivation
from minigrad.ops import elementwise
from minigrad.ops.shape import reshape
from minigrad.tensor import Tensor

__all__ = [
    "leaky_relu", "elu", "silu", "hardtanh", "relu6", "softmin", "Softmax", "LogSoftmax", "Softmin",
    "LeakyReLU", "ELU", "SiLU", "Hardtanh", "ReLU6", "Unflatten",
]


# -- functions ---------------------------------------------------------------------------------


def leaky_relu(input, negative_slope=0.01, inplace=False):  # noqa: A002  (PyTorch's names)
    """x where x > 0, else ``negative_slope`` * x; the gradient at 0 is ``negative_slope``, as in PyTorch.

    ``inplace=True`` is accepted but does not modify ``input``.

    Raises:
        TypeError: ``input`` is not a Tensor, or ``negative_slope`` is not a number.
        NotImplementedError: the input is not floating point.
    """
    slope = _checked_parameter("leaky_relu", input, "negative_slope", negative_slope)
    return elementwise.where(input.array > 0, input, input * slope)


def elu(input, alpha=1.0, inplace=False):  # noqa: A002
    """x where x > 0, else ``alpha`` * (exp(x) - 1) (computed as expm1); the gradient at 0 is ``alpha``.

    ``inplace=True`` is accepted but does not modify ``input``.

    Raises:
        TypeError: ``input`` is not a Tensor, or ``alpha`` is not a number.
        NotImplementedError: the input is not floating point.
    """
    alpha = _checked_parameter("elu", input, "alpha", alpha)
    # Clamped first: exp of the (unused) large positive values would overflow, and inf * 0 in the
    # backward of the branch not taken would give NaN.
    negative = elementwise.clamp(input, max=0.0).expm1() * alpha
    return elementwise.where(input.array > 0, input, negative)


def silu(input, inplace=False):  # noqa: A002
    """x * sigmoid(x) (also called swish).

    Raises:
        TypeError: ``input`` is not a Tensor. NotImplementedError: the input is not floating point.
    """
    expect_floating_tensor("silu", input)
    return input * input.sigmoid()


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):  # noqa: A002
    """x clipped into [min_val, max_val]; the gradient is 1 strictly inside and 0 at or beyond the bounds.

    (That is PyTorch's hardtanh gradient; ``clamp`` instead passes the gradient at the bounds.)

    Raises:
        TypeError: a bound is not a number. ValueError: ``max_val`` < ``min_val``.
        NotImplementedError: the input is not floating point.
    """
    fn = "hardtanh"
    expect_floating_tensor(fn, input)
    low, high = expect_number(fn, "min_val", min_val), expect_number(fn, "max_val", max_val)
    if high < low:
        raise ValueError(f"{fn}(): max_val ({high}) cannot be less than min_val ({low})")
    inside = (input.array > low) & (input.array < high)
    return elementwise.where(inside, input, elementwise.clamp(input.detach(), low, high))


def relu6(input, inplace=False):  # noqa: A002
    """min(max(x, 0), 6): ``hardtanh(x, 0, 6)``.

    Raises:
        TypeError: ``input`` is not a Tensor. NotImplementedError: the input is not floating point.
    """
    return hardtanh(input, 0.0, 6.0)


def softmin(input, dim=None, *, dtype=None):  # noqa: A002
    """softmax(-x) along ``dim`` (see ``F.softmax`` for ``dim=None`` and ``dtype``).

    Raises:
        TypeError: the input is not a floating point Tensor. IndexError: ``dim`` is out of range.
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"softmin(): argument 'input' must be a Tensor, got {type(input).__name__}")
    if dtype is not None:
        input = input.to(dtype)  # noqa: A001
    return F.softmax(-input, dim)


# -- modules -----------------------------------------------------------------------------------


class _SoftmaxBase(Module):
    """Shared constructor: the dimension ``dim`` that sums to 1 (None: PyTorch's legacy choice, with a warning)."""

    def __init__(self, dim: int | None = None):
        super().__init__()
        self.dim = dim

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmax(_SoftmaxBase):
    """exp(x) / sum(exp(x)) along ``dim``: see ``F.softmax``."""

    def forward(self, input):  # noqa: A002
        """Apply softmax along ``dim``."""
        return F.softmax(input, self.dim)


class LogSoftmax(_SoftmaxBase):
    """log(softmax(x)) along ``dim``, computed stably: see ``F.log_softmax``."""

    def forward(self, input):  # noqa: A002
        """Apply log-softmax along ``dim``."""
        return F.log_softmax(input, self.dim)


class Softmin(_SoftmaxBase):
    """softmax(-x) along ``dim``: see ``softmin``."""

    def forward(self, input):  # noqa: A002
        """Apply softmin along ``dim``."""
        return softmin(input, self.dim)


class LeakyReLU(_InplaceActivation):
    """x where x > 0, else ``negative_slope`` * x (default 0.01): see ``leaky_relu``."""

    def __init__(self, negative_slope: float = 1e-2, inplace: bool = False):
        super().__init__(inplace)
        self.negative_slope = negative_slope

    def forward(self, input):  # noqa: A002
        """Apply the leaky ReLU."""
        return leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        return _inplace_repr(self.inplace, f"negative_slope={self.negative_slope}")


class ELU(_ELUBase):
    """x where x > 0, else ``alpha`` * (exp(x) - 1) (default alpha 1): see ``elu``."""

    def forward(self, input):  # noqa: A002
        """Apply the ELU."""
        return elu(input, self.alpha, self.inplace)


class SiLU(_InplaceActivation):
    """x * sigmoid(x): see ``silu``."""

    def forward(self, input):  # noqa: A002
        """Apply the SiLU."""
        return silu(input, self.inplace)

    def extra_repr(self) -> str:
        return _inplace_repr(self.inplace)


class Hardtanh(_InplaceActivation):
    """x clipped into [min_val, max_val] (default [-1, 1]): see ``hardtanh``.

    Raises:
        TypeError: a bound is not a number.
        AssertionError: ``max_val`` <= ``min_val`` (PyTorch's class: it asserts this; the functional
            ``hardtanh`` accepts equal bounds and raises ValueError for reversed ones).
    """

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False):
        super().__init__(inplace)
        low, high = expect_number("Hardtanh", "min_val", min_val), expect_number("Hardtanh", "max_val", max_val)
        if high <= low:
            raise AssertionError(f"Hardtanh: max_val ({max_val}) must be greater than min_val ({min_val})")
        self.min_val = min_val
        self.max_val = max_val

    def forward(self, input):  # noqa: A002
        """Apply the hardtanh."""
        return hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        return _inplace_repr(self.inplace, f"min_val={self.min_val}, max_val={self.max_val}")


class ReLU6(Hardtanh):
    """min(max(x, 0), 6): see ``relu6``."""

    def __init__(self, inplace: bool = False):
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self) -> str:
        return _inplace_repr(self.inplace)


class Unflatten(Module):
    """Split dimension ``dim`` of the input into ``unflattened_size`` (a tuple or list of ints, one may be -1).

    The inverse of ``Flatten``: ``Unflatten(1, (C, H, W))`` turns (N, C*H*W)
    into (N, C, H, W). The output is a view of the input when the memory allows.

    Raises:
        TypeError: ``dim`` is not an int, or ``unflattened_size`` is not a
            tuple/list of ints (constructor).
        IndexError: ``dim`` is out of range for the input (forward).
        RuntimeError: the sizes do not multiply to the size of ``dim`` (forward).
    """

    def __init__(self, dim: int, unflattened_size):
        super().__init__()
        if not isinstance(dim, (int, np.integer)) or isinstance(dim, bool):
            raise TypeError(f"Unflatten: dim must be an int, got {type(dim).__name__}")
        if not isinstance(unflattened_size, (tuple, list)):
            raise TypeError(
                f"unflattened_size must be a tuple of ints, but found type {type(unflattened_size).__name__}"
            )
        for i, n in enumerate(unflattened_size):
            if not isinstance(n, (int, np.integer)) or isinstance(n, bool):
                raise TypeError(
                    f"unflattened_size must be tuple of ints, but found element of type {type(n).__name__} "
                    f"at pos {i}"
                )
        self.dim = int(dim)
        self.unflattened_size = unflattened_size

    def forward(self, input):  # noqa: A002
        """Reshape dimension ``dim`` of ``input`` into ``unflattened_size``."""
        if not isinstance(input, Tensor):
            raise TypeError(f"Unflatten: input must be a Tensor, got {type(input).__name__}")
        ndim = input.ndim
        if not -max(ndim, 1) <= self.dim < max(ndim, 1):
            raise IndexError(
                f"Unflatten: dimension {self.dim} is out of range for an input of shape {input.shape} "
                f"(expected to be in range of [{-max(ndim, 1)}, {max(ndim, 1) - 1}])"
            )
        axis = self.dim % max(ndim, 1)
        sizes = [int(n) for n in self.unflattened_size]
        size = input.shape[axis] if ndim else 1
        free = sizes.count(-1)
        known = int(np.prod([n for n in sizes if n != -1], dtype=np.int64))
        if not sizes or free > 1 or any(n < -1 for n in sizes) or (free == 0 and known != size) or \
                (free == 1 and (known == 0 or size % known)):
            raise RuntimeError(
                f"unflatten: Provided sizes {sizes} don't multiply up to the size of dim {self.dim} ({size}) "
                f"in the input tensor of shape {input.shape}"
            )
        if free:
            sizes = [size // known if n == -1 else n for n in sizes]
        return reshape(input, tuple(input.shape[:axis]) + tuple(sizes) + tuple(input.shape[axis + 1 :]))

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
