"""3-D pooling: ``F.max_pool3d``, ``F.avg_pool3d``, ``F.adaptive_max_pool3d``, ``F.adaptive_avg_pool3d`` and
their modules ``MaxPool3d``, ``AvgPool3d``, ``AdaptiveMaxPool3d``, ``AdaptiveAvgPool3d``.

Names, signatures, defaults and semantics mirror ``torch.nn.functional`` and
``torch.nn``. Inputs are (N, C, D, H, W) or unbatched (C, D, H, W). The
functions validate their arguments with PyTorch's rules (and exception types)
and apply the ops of ``minigrad.ops.pooling3d``; the adaptive average is three
matrix products with averaging matrices, one per spatial dimension.
"""

from __future__ import annotations

from minigrad import backend
from minigrad.nn.pooling import (
    _adaptive_size,
    _AdaptiveMaxPool,
    _AdaptivePool,
    _avg_pool_flags,
    _AvgPoolNd,
    _batched,
    _check_window,
    _expect_bool,
    _expect_input,
    _geometry,
    _max_result,
    _MaxPoolNd,
)
from minigrad.ops import pooling3d as ops
from minigrad.ops.pooling import adaptive_bounds
from minigrad.tensor import Tensor

__all__ = [
    "max_pool3d", "avg_pool3d", "adaptive_max_pool3d", "adaptive_avg_pool3d", "MaxPool3d", "AvgPool3d",
    "AdaptiveMaxPool3d", "AdaptiveAvgPool3d",
]


# -- max pooling --------------------------------------------------------------------------------


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,  # noqa: A002
               return_indices=False):
    """Maximum over sliding windows of a batch of volumes.

    Args:
        input: Tensor (N, C, D, H, W) or (C, D, H, W); float or integer.
        kernel_size: int or (kd, kh, kw).
        stride: int or triple; None (or empty) means ``kernel_size``.
        padding: implicit -inf added on both sides, at most half the kernel size.
        dilation: spacing between the window's elements.
        ceil_mode: round the output size up (a window may run past the input).
        return_indices: also return, per output element, the flat index
            (z * H * W + y * W + x) of the element picked within its (D, H, W) volume.

    Ties go to the first maximum of the window (depth, row, column order), NaN
    to the last NaN; the gradient flows to that element only (summed where
    windows share it).

    Returns:
        Tensor (N, C, Do, Ho, Wo) (or without N); with ``return_indices`` the
        pair (values, int64 indices of the same shape).

    Raises:
        TypeError: a geometry argument is not an int or a tuple of ints, or a flag is not a bool.
        RuntimeError: wrong number of dimensions or an empty volume, a tuple
            of another length than 1 or 3, non-positive kernel, stride or
            dilation, negative or too large padding, or an empty output.
        NotImplementedError: bool or complex input.
    """
    fn = "max_pool3d"
    _expect_input(fn, input, 3)
    geometry = _geometry(fn, 3, kernel_size, stride, padding, dilation)
    _expect_bool(fn, "ceil_mode", ceil_mode)
    _expect_bool(fn, "return_indices", return_indices)
    out_size = _check_window(fn, input, *geometry, ceil_mode)
    return _max_result(ops.MaxPool3d(*geometry, out_size), input, return_indices, 3)


def adaptive_max_pool3d(input, output_size, return_indices=False):  # noqa: A002
    """Maximum over the windows that split (D, H, W) into ``output_size`` nearly equal parts.

    Output index i along a dimension of size n covers floor(i * n / o) to
    ceil((i + 1) * n / o) - 1 (PyTorch's windows).

    Args:
        input: float Tensor (N, C, D, H, W) or (C, D, H, W).
        output_size: int or (Do, Ho, Wo); an entry None keeps the input's size.
        return_indices: also return the flat index of each pick, as ``max_pool3d``.

    Raises:
        TypeError: ``output_size`` is not an int or a triple of ints/None, or ``return_indices`` not a bool.
        RuntimeError: wrong number of dimensions or an empty volume, a size tuple of another length, or a
            negative size.
        NotImplementedError: an integer, bool or complex input.
    """
    fn = "adaptive_max_pool3d"
    _expect_input(fn, input, 3, integers=False)
    _expect_bool(fn, "return_indices", return_indices)
    out_size = _adaptive_size(fn, input, output_size, 3)
    return _max_result(ops.AdaptiveMaxPool3d(out_size), input, return_indices, 3)


# -- average pooling ----------------------------------------------------------------------------


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,  # noqa: A002
               divisor_override=None):
    """Mean over sliding windows of a batch of volumes: ``avg_pool2d`` with triples (kd, kh, kw) for pairs.

    Args:
        input: Tensor (N, C, D, H, W) or (C, D, H, W); float32/float64 or integer
            (integer means truncate toward zero, as in PyTorch).
        kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override: as ``avg_pool2d``'s.

    Returns:
        Tensor (N, C, Do, Ho, Wo) (or without N).

    Raises:
        TypeError: a geometry argument is not an int or a tuple of ints, a flag
            is not a bool, or ``divisor_override`` is not an int.
        RuntimeError: wrong number of dimensions or an empty volume, non-positive
            kernel or stride, negative or too large padding, a volume smaller than
            the kernel (padding not counted, as in PyTorch), an empty output, or a zero divisor.
        NotImplementedError: float16, bool or complex input (as in PyTorch).
    """
    fn = "avg_pool3d"
    _expect_input(fn, input, 3)
    if input.dtype.kind == "f" and input.dtype.itemsize < 4:
        raise NotImplementedError(f"{fn}(): not implemented for dtype {input.dtype}; cast to float32 first")
    kernel, stride, padding, _ = _geometry(fn, 3, kernel_size, stride, padding)
    divisor_override = _avg_pool_flags(fn, ceil_mode, count_include_pad, divisor_override)
    if any(n < k for n, k in zip(input.shape[-3:], kernel)):  # PyTorch's 3-D average pooling checks this
        raise RuntimeError(f"{fn}(): input of size {tuple(input.shape[-3:])} is smaller than the kernel {kernel} "
                           "(padding not counted)")
    out_size = _check_window(fn, input, kernel, stride, padding, (1, 1, 1), ceil_mode)
    x, added = _batched(input, 3)
    geometry = ops.AvgPool3dGeometry(tuple(x.shape), kernel, stride, padding, out_size, bool(count_include_pad),
                                     divisor_override)
    out = ops.AvgPool3d(geometry)(x)
    return out.squeeze(0) if added else out


def _averaging(x, size, out) -> Tensor:
    """(out, size) matrix whose row i averages positions floor(i*size/out) .. ceil((i+1)*size/out) - 1."""
    xp = backend.get_array_module(x.array)
    start, end = adaptive_bounds(xp, size, out)
    positions = xp.arange(size)
    inside = (positions >= start[:, None]) & (positions < end[:, None])
    return Tensor._make((inside / (end - start)[:, None]).astype(x.dtype), False, None, 0)


def adaptive_avg_pool3d(input, output_size):  # noqa: A002
    """Mean over the windows that split (D, H, W) into ``output_size`` nearly equal parts.

    Output index i along a dimension of size n averages floor(i * n / o) to
    ceil((i + 1) * n / o) - 1 (PyTorch's windows); ``output_size=1`` is global
    average pooling.

    Args:
        input: float Tensor (N, C, D, H, W) or (C, D, H, W).
        output_size: int or (Do, Ho, Wo); an entry None keeps the input's size.

    Raises:
        TypeError: ``output_size`` is not an int or a triple of ints/None.
        RuntimeError: wrong number of dimensions or an empty volume, a size tuple of another length, or a
            negative size.
        NotImplementedError: an integer, bool or complex input.
    """
    fn = "adaptive_avg_pool3d"
    _expect_input(fn, input, 3, integers=False)
    do, ho, wo = _adaptive_size(fn, input, output_size, 3)
    *lead, d, h, w = input.shape
    if (do, ho, wo) == (1, 1, 1):  # global average pooling
        return input.mean((-3, -2, -1), keepdim=True)
    # Windows are boxes, so the mean is separable: average the columns, the rows, then the depths.
    out = _averaging(input, h, ho) @ (input @ _averaging(input, w, wo).mT)  # (..., D, Ho, Wo)
    out = _averaging(input, d, do) @ out.reshape(*lead, d, ho * wo)
    return out.reshape(*lead, do, ho, wo)


# -- modules ------------------------------------------------------------------------------------


class MaxPool3d(_MaxPoolNd):
    """Max pooling over (N, C, D, H, W) or (C, D, H, W): see ``max_pool3d`` (``stride`` defaults to
    ``kernel_size``); ``forward`` returns (values, indices) with ``return_indices``."""

    def forward(self, input):  # noqa: A002
        """Pool ``input``; a pair (values, indices) with ``return_indices``."""
        return max_pool3d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                          ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class AvgPool3d(_AvgPoolNd):
    """Average pooling over (N, C, D, H, W) or (C, D, H, W): see ``avg_pool3d`` (``stride`` defaults to
    ``kernel_size``)."""

    def forward(self, input):  # noqa: A002
        """Pool ``input``."""
        return avg_pool3d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                          self.count_include_pad, self.divisor_override)


class AdaptiveAvgPool3d(_AdaptivePool):
    """Adaptive average pooling to ``output_size`` (int or triple, None keeps a size): see
    ``adaptive_avg_pool3d``."""

    def forward(self, input):  # noqa: A002
        """Pool ``input`` (N, C, D, H, W) or (C, D, H, W)."""
        return adaptive_avg_pool3d(input, self.output_size)


class AdaptiveMaxPool3d(_AdaptiveMaxPool):
    """Adaptive max pooling to ``output_size``: see ``adaptive_max_pool3d``; ``return_indices`` as there."""

    def forward(self, input):  # noqa: A002
        """Pool ``input`` (N, C, D, H, W) or (C, D, H, W)."""
        return adaptive_max_pool3d(input, self.output_size, self.return_indices)
