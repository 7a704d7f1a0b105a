"""Activation modules and functions: ``Softmax``, ``LogSoftmax``, ``Softmin``, ``LeakyReLU``, ``ELU``,
``SiLU``, ``Hardtanh``, ``ReLU6``, and ``Unflatten``.

Names, signatures, defaults and semantics (gradients at kinks included)
mirror ``torch.nn``; the functions (``leaky_relu``, ``elu``, ``silu``,
``hardtanh``, ``relu6``, ``softmin``) are re-exported by
``minigrad.nn.functional`` (``elu`` is written beside SELU and CELU in
``pointwise_activations.py``). They are compositions of registered ops
(``where``, ``clamp``, ``exp``...), so their gradients of every order come
from those ops.

``Unflatten``, a reshaping layer used beside activations in ``Sequential``
models, lives here too.
"""

from __future__ import annotations

import numpy as np

from minigrad.nn import functional as F
from minigrad.nn.loss_utils import expect_floating_tensor, expect_number, expect_tensor
from minigrad.nn.module import Module
from minigrad.nn.pointwise_activations import _checked_parameter, _ELUBase, _InplaceActivation, _maybe_in_place, elu
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

    ``inplace=True`` overwrites ``input`` (recorded for autograd) and returns it.

    Raises:
        TypeError: ``input`` is not a Tensor, or ``negative_slope`` is not a number.
        NotImplementedError: the input is not floating point.
        RuntimeError: ``inplace`` on a leaf that requires grad (in grad mode).
    """
    slope = _checked_parameter("leaky_relu", input, "negative_slope", negative_slope)
    return _maybe_in_place("leaky_relu", input, lambda x: elementwise.where(x.array > 0, x, x * slope), inplace)


def silu(input, inplace=False):  # noqa: A002
    """x * sigmoid(x) (also called swish); ``inplace=True`` overwrites ``input`` and returns it.

    Raises:
        TypeError: ``input`` is not a Tensor. NotImplementedError: the input is not floating point.
        RuntimeError: ``inplace`` on a leaf that requires grad (in grad mode).
    """
    expect_floating_tensor("silu", input)
    return _maybe_in_place("silu", input, lambda x: x * x.sigmoid(), inplace)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):  # noqa: A002
    """x clipped into [min_val, max_val]; the gradient is 1 strictly inside and 0 at or beyond the bounds.

    (That is PyTorch's hardtanh gradient; ``clamp`` instead passes the gradient at the bounds.)
    ``inplace=True`` overwrites ``input`` (recorded for autograd) and returns it.

    An integer input stays integer, clipped into the bounds truncated to ints, as in PyTorch.

    Raises:
        TypeError: ``input`` is not a Tensor, or a bound is not a number. ValueError: ``max_val`` < ``min_val``.
        RuntimeError: a bool input (PyTorch's class), a negative ``min_val`` for an unsigned one;
            ``inplace`` on a leaf that requires grad (in grad mode).
    """
    fn = "hardtanh"
    expect_tensor(fn, "input", input)
    if input.dtype == np.bool_:
        raise RuntimeError(f"{fn}(): Bool inputs are not supported; convert with .to(dtype)")
    low, high = expect_number(fn, "min_val", min_val), expect_number(fn, "max_val", max_val)
    if high < low:
        raise ValueError(f"{fn}(): max_val ({high}) cannot be less than min_val ({low})")
    if input.dtype.kind in "iu":  # no gradient to shape: PyTorch clamps to the truncated bounds
        low, high = int(low), int(high)
        if input.dtype.kind == "u" and low < 0:
            raise RuntimeError(f"{fn}(): an unsigned {input.dtype} input cannot take a negative min_val ({low})")

    def clip(x):
        inside = (x.array > low) & (x.array < high)
        return elementwise.where(inside, x, elementwise.clamp(x.detach(), low, high))

    return _maybe_in_place(fn, input, clip, inplace)


def relu6(input, inplace=False):  # noqa: A002
    """min(max(x, 0), 6): ``hardtanh(x, 0, 6)``, in place with ``inplace=True`` (as ``hardtanh_``).

    Raises:
        TypeError: ``input`` is not a Tensor.
        RuntimeError: a bool input; ``inplace`` on a leaf that requires grad (in grad mode).
    """
    return hardtanh(input, 0.0, 6.0, inplace)


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

    _settings = ("negative_slope",)

    def __init__(self, negative_slope: float = 1e-2, inplace: bool = False):
        super().__init__(inplace)
        self.negative_slope = negative_slope

    def forward(self, input):  # noqa: A002
        """Apply the leaky ReLU."""
        return leaky_relu(input, self.negative_slope, self.inplace)


class ELU(_ELUBase):
    """x where x > 0, else ``alpha`` * (exp(x) - 1) (default alpha 1): see ``elu``."""

    _function = staticmethod(elu)


class SiLU(_InplaceActivation):
    """x * sigmoid(x): see ``silu``."""

    _function = staticmethod(silu)


class Hardtanh(_InplaceActivation):
    """x clipped into [min_val, max_val] (default [-1, 1]): see ``hardtanh``.

    Raises:
        TypeError: a bound is not a number.
        AssertionError: ``max_val`` <= ``min_val`` (PyTorch's class: it asserts this; the functional
            ``hardtanh`` accepts equal bounds and raises ValueError for reversed ones).
    """

    _settings = ("min_val", "max_val")

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


class ReLU6(Hardtanh):
    """min(max(x, 0), 6): see ``relu6``. (PyTorch's repr shows only ``inplace``: no bounds.)"""

    _settings = ()

    def __init__(self, inplace: bool = False):
        super().__init__(0.0, 6.0, inplace)


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
