"""Local response normalization across channels: ``F.local_response_norm`` and ``nn.LocalResponseNorm``.

Each value is divided by a power of the mean square of its neighbours along
the channel dimension (dimension 1), as in AlexNet (Krizhevsky et al., 2012)::

    y[n, c, ...] = x[n, c, ...] / (k + alpha * mean(x[n, c', ...] ** 2 for c' in window(c))) ** beta

where ``window(c)`` is ``size`` channels, ``c - size // 2`` to
``c + (size - 1) // 2``, channels beyond the edges counting as zeros (so the
mean always divides by ``size``). The function is a composition of recorded
ops (squares, a zero padding along the channels, a sum of ``size`` shifted
slices, the power), so autograd gives the gradient; the slice sum touches
each element at most ``min(size, 2 * C - 1)`` times.

As in PyTorch, int64 inputs are allowed: their window mean is an integer
division (PyTorch's integer average pooling) and the result has the default
float dtype. Names, defaults and exception classes mirror PyTorch's.
"""

from __future__ import annotations

import numpy as np

from minigrad.nn.loss_utils import expect_tensor
from minigrad.nn.module import Module
from minigrad.nn.padding import pad
from minigrad.tensor import Tensor

__all__ = ["local_response_norm", "LocalResponseNorm"]

# The input dtypes PyTorch's average pooling (on which its local response norm rests) accepts.
_SUPPORTED = (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.int64))


def _size_argument(fn: str, size) -> int:
    """``size`` as an int (a one-element integer tensor is read); TypeError otherwise."""
    if isinstance(size, Tensor) and size.numel() == 1 and size.dtype.kind in "iu":
        return int(size.array.reshape(()))
    if not isinstance(size, (int, np.integer)) or isinstance(size, bool):
        raise TypeError(f"{fn}(): argument 'size' must be an int (a number of channels), got {type(size).__name__}")
    return int(size)


def _scalar_argument(fn: str, name: str, value):
    """``value`` if it is a number or a Tensor (PyTorch accepts both); TypeError otherwise."""
    if not isinstance(value, (Tensor, int, float, complex, np.number)):
        raise TypeError(f"{fn}(): argument '{name}' must be a number, got {type(value).__name__}")
    return value


def _window_mean_square(x: Tensor, size: int) -> Tensor:
    """The mean of x ** 2 over a window of ``size`` channels around each channel (zeros past the edges)."""
    n, c = x.shape[:2]
    square = (x * x).reshape(n, c, -1)
    if square.dtype == np.float16:  # PyTorch's pooling adds half values in float32
        square = square.to(np.float32)
    before, after = min(size // 2, c - 1), min((size - 1) // 2, c - 1)  # reach past these is all padding
    padded = pad(square, (0, 0, before, after))
    total = padded[:, 0:c, :]
    for shift in range(1, before + after + 1):
        total = total + padded[:, shift:shift + c, :]
    if total.dtype.kind == "i":  # PyTorch's integer average pooling divides as integers
        return (total // size).reshape(x.shape)
    return (total / size).to(x.dtype).reshape(x.shape)


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):  # noqa: A002  (PyTorch's names)
    """Normalize each value by its neighbours across channels: x / (k + alpha * mean of squares) ** beta.

    Args:
        input: Tensor (N, C, *) with at least one spatial dimension:
            float16, float32, float64 or int64.
        size: the number of channels in each window (positive).
        alpha: scale of the window's mean square (default 1e-4).
        beta: exponent (default 0.75).
        k: additive constant (default 1.0).

    Returns:
        Tensor of the input's shape: of the input's dtype, or the default
        float dtype for an int64 input. An empty input is returned as is.

    Raises:
        TypeError: ``input`` is not a Tensor, ``size`` is not an int, or
            ``alpha``, ``beta`` or ``k`` is not a number.
        ValueError: the input has fewer than 3 dimensions (PyTorch's class).
        RuntimeError: ``size`` is not positive.
        NotImplementedError: a dtype PyTorch's average pooling lacks (bool,
            other integer widths, complex).
    """
    fn = "local_response_norm"
    expect_tensor(fn, "input", input)
    if input.ndim < 3:
        raise ValueError(
            f"{fn}(): expected an input (N, C, *) of 3 or more dimensions, got {input.ndim} dimensions "
            f"(shape {list(input.shape)})"
        )
    if input.numel() == 0:
        return input
    size = _size_argument(fn, size)
    if size <= 0:
        raise RuntimeError(f"{fn}(): size (the channels in a window) must be greater than zero, but got {size}")
    if input.dtype not in _SUPPORTED:
        raise NotImplementedError(
            f"{fn}(): not implemented for dtype {input.dtype} (float16, float32, float64 or int64 input; "
            "convert it with .float())"
        )
    alpha = _scalar_argument(fn, "alpha", alpha)
    k = _scalar_argument(fn, "k", k)
    beta = _scalar_argument(fn, "beta", beta)
    return input / (_window_mean_square(input, size) * alpha + k) ** beta


class LocalResponseNorm(Module):
    """Local response normalization across channels of (N, C, *) inputs (see ``F.local_response_norm``).

    Args:
        size: channels per window.
        alpha: scale of the window's mean square (default 1e-4).
        beta: exponent (default 0.75).
        k: additive constant (default 1.0).

    As in PyTorch the arguments are stored as given and checked when the module is called.

    Raises:
        (forward) the errors of ``F.local_response_norm``.
    """

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0):
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input):  # noqa: A002
        """Normalize ``input`` (N, C, *)."""
        return local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
