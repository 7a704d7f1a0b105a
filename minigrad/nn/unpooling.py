"""Max unpooling, the partial inverse of max pooling: ``F.max_unpool1d``, ``F.max_unpool2d`` and the modules
``MaxUnpool1d``, ``MaxUnpool2d``.

Given the values and the ``return_indices`` indices of a max pooling, the
unpooling writes each value back at its index in a zero output: every
position that no window picked stays 0. Indices are flat within each
channel's plane (row * W + col), as max pooling returns them. The output
size is by default the size the pooling came from,
(size - 1) * stride - 2 * padding + kernel_size per dimension, or any
``output_size`` strictly within ``stride`` of it. The scatter is a
differentiable Tensor op: the input's gradient is the output's gradient
gathered at the indices.
"""

from __future__ import annotations

import math

from minigrad.factory import zeros
from minigrad.nn.module import Module
from minigrad.nn.pooling import _is_int
from minigrad.nn.pooling import _sizes as _pool_sizes
from minigrad.ops._util import expect_tensor

__all__ = ["max_unpool1d", "max_unpool2d", "MaxUnpool1d", "MaxUnpool2d"]


def _sizes(fn, name, value, dims) -> tuple:
    """An int or a sequence of 1 or ``dims`` ints as a tuple of ``dims`` ints (``pooling._sizes``).

    Raises:
        TypeError: not an int or a sequence of ints.
        ValueError: a sequence of another length (PyTorch has no class of its own here: its unpooling
            indexes the sequences, so a long kernel raises IndexError and a long stride is ignored).
    """
    return _pool_sizes(fn, name, value, dims, ValueError)


def _output_size(fn, input, kernel, stride, padding, output_size) -> tuple:  # noqa: A002
    """The spatial output size: the default, or ``output_size`` (spatial sizes, or with two leading sizes)
    checked to lie strictly within ``stride`` of the default.

    Raises:
        TypeError: ``output_size`` not a sequence of ints.
        ValueError: ``output_size`` of the wrong length or out of range, or a negative size.
    """
    dims = len(kernel)
    spatial = input.shape[-dims:]
    default = [(n - 1) * s - 2 * p + k for n, k, s, p in zip(spatial, kernel, stride, padding)]
    if output_size is None:
        size = default
    else:
        if not isinstance(output_size, (tuple, list)) or not all(map(_is_int, output_size)):
            raise TypeError(f"{fn}(): output_size must be a sequence of ints, got {output_size!r}")
        size = [int(n) for n in output_size]
        if len(size) == dims + 2:
            size = size[2:]
        if len(size) != dims:
            raise ValueError(
                f"{fn}(): output_size must hold {dims} or {dims + 2} sizes, got {len(size)} ({output_size!r})"
            )
        for d, (n, low, s) in enumerate(zip(size, default, stride)):
            if not low - s < n < low + s:
                raise ValueError(
                    f"{fn}(): invalid output_size {tuple(output_size)!r}: dimension {d} must be between "
                    f"{low - s} and {low + s} (exclusive) for this input, kernel_size and stride"
                )
    for d, n in enumerate(size):
        if n < 0:
            raise ValueError(f"{fn}(): the output size must be non-negative, got {n} in dimension {d}")
    return tuple(size)


def _unpool(fn, dims, input, indices, kernel_size, stride, padding, output_size):  # noqa: A002
    """Validate, then scatter ``input`` into zeros of the output's shape at ``indices``."""
    for name, value in (("input", input), ("indices", indices)):
        expect_tensor(value, fn, name)
    kernel = _sizes(fn, "kernel_size", kernel_size, dims)
    stride = kernel if stride is None else _sizes(fn, "stride", stride, dims)
    padding = _sizes(fn, "padding", padding, dims)
    if input.ndim not in (dims + 1, dims + 2):
        raise RuntimeError(
            f"{fn}(): expected a {dims + 1}-D or {dims + 2}-D (batched) input, got shape {list(input.shape)}"
        )
    size = _output_size(fn, input, kernel, stride, padding, output_size)
    if indices.dtype.kind not in "iu" or indices.dtype.itemsize != 8:
        raise RuntimeError(f"{fn}(): indices must be int64 (as max pooling returns them), got {indices.dtype}")
    if indices.shape != input.shape:
        raise RuntimeError(
            f"{fn}(): indices must have the input's shape {list(input.shape)}, got {list(indices.shape)}"
        )
    if input.dtype.kind != "f":
        raise NotImplementedError(f"{fn}(): not implemented for dtype {input.dtype}; use a floating point input")
    batched = input.ndim == dims + 2
    x, idx = (input, indices) if batched else (input.unsqueeze(0), indices.unsqueeze(0))
    n, c = x.shape[:2]
    plane = math.prod(size)
    out = zeros((n, c, plane), dtype=input.dtype, device=input.device)
    if plane and x.numel():
        flat = idx.reshape(n, c, -1)
        low, high = int(flat.min().item()), int(flat.max().item())
        if low < 0 or high >= plane:
            bad = low if low < 0 else high
            raise RuntimeError(
                f"{fn}(): found an invalid max index {bad}: the output planes {tuple(size)} hold {plane} elements"
            )
        out = out.scatter(2, flat, x.reshape(n, c, -1))
    out = out.reshape(n, c, *size)
    return out if batched else out.squeeze(0)


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):  # noqa: A002
    """The partial inverse of ``max_pool1d``: each value written back at its index, zeros elsewhere.

    Args:
        input: float Tensor (N, C, L_in) or (C, L_in), the pooled values.
        indices: int64 Tensor of the input's shape, from ``max_pool1d(..., return_indices=True)``.
        kernel_size, stride, padding: the pooling's (an int or a 1-tuple; stride None means kernel_size).
        output_size: the output length (a sequence (L,) or (N, C, L)); by default
            (L_in - 1) * stride - 2 * padding + kernel_size.

    Returns:
        Tensor (N, C, L) (or (C, L)). Where two indices coincide, which value is kept is unspecified (as in
        PyTorch).

    Raises:
        TypeError: a non-Tensor input or indices, or sizes that are not ints.
        ValueError: an ``output_size`` of the wrong length or not within ``stride`` of the default, or a
            negative output size (PyTorch's type).
        RuntimeError: wrong number of dimensions, indices not int64 or not of the input's shape, or an
            index outside the output.
        NotImplementedError: an integer or bool input.
    """
    return _unpool("max_unpool1d", 1, input, indices, kernel_size, stride, padding, output_size)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):  # noqa: A002
    """The partial inverse of ``max_pool2d``: each value written back at its flat index, zeros elsewhere.

    Args:
        input: float Tensor (N, C, H_in, W_in) or (C, H_in, W_in), the pooled values.
        indices: int64 Tensor of the input's shape, from ``max_pool2d(..., return_indices=True)``
            (row * W + col within each plane).
        kernel_size, stride, padding: the pooling's (an int or a pair; stride None means kernel_size).
        output_size: (H, W) or (N, C, H, W); by default
            (size - 1) * stride - 2 * padding + kernel_size per dimension.

    Returns:
        Tensor (N, C, H, W) (or (C, H, W)).

    Raises:
        TypeError, ValueError, RuntimeError, NotImplementedError: as ``max_unpool1d``.
    """
    return _unpool("max_unpool2d", 2, input, indices, kernel_size, stride, padding, output_size)


class _MaxUnpoolNd(Module):
    """Shared constructor of the unpooling modules: ``kernel_size``, ``stride`` (None: the kernel size) and
    ``padding`` of the pooling being undone."""

    _dims = 1

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        fn = type(self).__name__
        self.kernel_size = _sizes(fn, "kernel_size", kernel_size, self._dims)
        self.stride = _sizes(fn, "stride", stride if stride is not None else kernel_size, self._dims)
        self.padding = _sizes(fn, "padding", padding, self._dims)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """Undo ``MaxPool1d`` (N, C, L_in) -> (N, C, L): see ``max_unpool1d``;
    ``forward(input, indices, output_size=None)``."""

    _dims = 1

    def forward(self, input, indices, output_size=None):  # noqa: A002
        """Unpool ``input`` with the pooling's ``indices``."""
        return max_unpool1d(input, indices, self.kernel_size, self.stride, self.padding, output_size)


class MaxUnpool2d(_MaxUnpoolNd):
    """Undo ``MaxPool2d`` (N, C, H_in, W_in) -> (N, C, H, W): see ``max_unpool2d``;
    ``forward(input, indices, output_size=None)``."""

    _dims = 2

    def forward(self, input, indices, output_size=None):  # noqa: A002
        """Unpool ``input`` with the pooling's ``indices``."""
        return max_unpool2d(input, indices, self.kernel_size, self.stride, self.padding, output_size)
