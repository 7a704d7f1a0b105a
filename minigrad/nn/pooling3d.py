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
from minigrad.nn.module import Module
from minigrad.nn.pooling import _expect_bool, _expect_input, _geometry, _index_tensor, _is_int
from minigrad.ops import pooling3d as ops
from minigrad.ops.pooling import adaptive_bounds, pool_output_size
from minigrad.tensor import Tensor

__all__ = [
    "max_pool3d", "avg_pool3d", "adaptive_max_pool3d", "adaptive_avg_pool3d", "MaxPool3d", "AvgPool3d",
    "AdaptiveMaxPool3d", "AdaptiveAvgPool3d",
]


def _check_window(fn, x, kernel, stride, padding, dilation, ceil_mode) -> tuple:
    """Validate a pooling window over ``x``'s last three dimensions; return the output size (Do, Ho, Wo).

    The padding may be at most half the kernel size (PyTorch's limit, for dilated max pooling too).
    """
    if min(kernel) <= 0:
        raise RuntimeError(f"{fn}(): kernel_size must be greater than zero, got {kernel}")
    if min(stride) <= 0:
        raise RuntimeError(f"{fn}(): stride must be greater than zero, got {stride}")
    if min(dilation) <= 0:
        raise RuntimeError(f"{fn}(): dilation must be greater than zero, got {dilation}")
    if min(padding) < 0:
        raise RuntimeError(f"{fn}(): padding must be non-negative, got {padding}")
    if any(p > k // 2 for p, k in zip(padding, kernel)):
        raise RuntimeError(f"{fn}(): padding {padding} must be at most half of kernel_size {kernel}")
    size = tuple(x.shape[-3:])
    out = tuple(pool_output_size(*args, ceil_mode) for args in zip(size, kernel, stride, padding, dilation))
    if min(out) < 1:
        raise RuntimeError(
            f"{fn}(): input of size {size} gives an output of size {out}: the output is too small "
            f"(kernel_size={kernel}, stride={stride}, padding={padding}, dilation={dilation})"
        )
    return out


def _batched(x):
    """``x`` with a batch dimension, and whether one was added."""
    return (x.unsqueeze(0), True) if x.ndim == 4 else (x, False)


def _max_result(op, x, return_indices):
    """``op`` (a 3-D max pooling) applied to ``x`` (4-D or 5-D), and the indices of its picks if asked for."""
    batched, added = _batched(x)
    out = op(batched)
    indices = _index_tensor(op.indices)
    if added:
        out, indices = out.squeeze(0), indices.squeeze(0)
    return (out, indices) if return_indices else out


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
    return _max_result(ops.MaxPool3d(*geometry, out_size), input, return_indices)


def _adaptive_size(fn, x, output_size) -> tuple:
    """``output_size`` as a tuple of 3 ints; an entry None means the input's size.

    Raises:
        TypeError: not an int or a sequence of ints or None.
        RuntimeError: a sequence of another length than 3, or a negative size.
    """
    def allowed(n):
        return _is_int(n) or n is None

    if allowed(output_size):
        sizes = (output_size,) * 3
    elif isinstance(output_size, (tuple, list)) and all(map(allowed, output_size)):
        if len(output_size) != 3:
            raise RuntimeError(f"{fn}(): output_size must hold 3 sizes, got {output_size!r}")
        sizes = tuple(output_size)
    else:
        raise TypeError(f"{fn}(): output_size must be an int or a tuple of 3 ints or None, got {output_size!r}")
    if any(n is not None and n < 0 for n in sizes):
        raise RuntimeError(f"{fn}(): elements of output_size must be >= 0, got {output_size!r}")
    return tuple(x.shape[x.ndim - 3 + i] if n is None else int(n) for i, n in enumerate(sizes))


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
    out_size = _adaptive_size(fn, input, output_size)
    return _max_result(ops.AdaptiveMaxPool3d(out_size), input, return_indices)


# -- average pooling ----------------------------------------------------------------------------


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,  # noqa: A002
               divisor_override=None):
    """Mean over sliding windows of a batch of volumes.

    Args:
        input: Tensor (N, C, D, H, W) or (C, D, H, W); float32/float64 or integer
            (integer means truncate toward zero, as in PyTorch).
        kernel_size: int or (kd, kh, kw).
        stride: int or triple; None (or empty) means ``kernel_size``.
        padding: zeros added on both sides, at most half the kernel.
        ceil_mode: round the output size up (a window may run past the input).
        count_include_pad: divide by the window's size including the zero
            padding (not the extra positions of ``ceil_mode``); otherwise by
            the number of input elements in the window.
        divisor_override: divide every window's sum by this non-zero int instead.

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
    _expect_bool(fn, "ceil_mode", ceil_mode)
    _expect_bool(fn, "count_include_pad", count_include_pad)
    if divisor_override is not None:
        if not _is_int(divisor_override):
            raise TypeError(f"{fn}(): divisor_override must be an int, got {type(divisor_override).__name__}")
        if divisor_override == 0:
            raise RuntimeError(f"{fn}(): divisor_override must not be zero")
        divisor_override = int(divisor_override)
    if any(n < k for n, k in zip(input.shape[-3:], kernel)):  # PyTorch's 3-D average pooling checks this
        raise RuntimeError(f"{fn}(): input of size {tuple(input.shape[-3:])} is smaller than the kernel {kernel} "
                           "(padding not counted)")
    out_size = _check_window(fn, input, kernel, stride, padding, (1, 1, 1), ceil_mode)
    x, added = _batched(input)
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
    do, ho, wo = _adaptive_size(fn, input, output_size)
    *lead, d, h, w = input.shape
    if (do, ho, wo) == (1, 1, 1):  # global average pooling
        return input.mean((-3, -2, -1), keepdim=True)
    # Windows are boxes, so the mean is separable: average the columns, the rows, then the depths.
    out = _averaging(input, h, ho) @ (input @ _averaging(input, w, wo).mT)  # (..., D, Ho, Wo)
    out = _averaging(input, d, do) @ out.reshape(*lead, d, ho * wo)
    return out.reshape(*lead, do, ho, wo)


# -- modules ------------------------------------------------------------------------------------


class MaxPool3d(Module):
    """Max pooling over (N, C, D, H, W) or (C, D, H, W): see ``max_pool3d`` (``stride`` defaults to
    ``kernel_size``); ``forward`` returns (values, indices) with ``return_indices``."""

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices: bool = False,
                 ceil_mode: bool = False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def forward(self, input):  # noqa: A002
        """Pool ``input``; a pair (values, indices) with ``return_indices``."""
        return max_pool3d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                          ceil_mode=self.ceil_mode, return_indices=self.return_indices)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class AvgPool3d(Module):
    """Average pooling over (N, C, D, H, W) or (C, D, H, W): see ``avg_pool3d`` (``stride`` defaults to
    ``kernel_size``)."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
                 count_include_pad: bool = True, divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def forward(self, input):  # noqa: A002
        """Pool ``input``."""
        return avg_pool3d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                          self.count_include_pad, self.divisor_override)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool3d(Module):
    """Adaptive average pooling to ``output_size`` (int or triple, None keeps a size): see
    ``adaptive_avg_pool3d``."""

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):  # noqa: A002
        """Pool ``input`` (N, C, D, H, W) or (C, D, H, W)."""
        return adaptive_avg_pool3d(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveMaxPool3d(Module):
    """Adaptive max pooling to ``output_size``: see ``adaptive_max_pool3d``; ``return_indices`` as there."""

    def __init__(self, output_size, return_indices: bool = False):
        super().__init__()
        self.output_size, self.return_indices = output_size, return_indices

    def forward(self, input):  # noqa: A002
        """Pool ``input`` (N, C, D, H, W) or (C, D, H, W)."""
        return adaptive_max_pool3d(input, self.output_size, self.return_indices)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"
