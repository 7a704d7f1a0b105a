"""Pooling: ``F.max_pool2d``, ``F.avg_pool2d``, ``F.adaptive_avg_pool2d`` and friends, and their modules.

Names, signatures, defaults and semantics mirror ``torch.nn.functional``
and ``torch.nn``; the functions are re-exported by
``minigrad.nn.functional``. They validate their arguments with PyTorch's
rules (and exception types) and apply the ops of ``minigrad.ops.pooling``.

The 2-D functions take (N, C, H, W) or unbatched (C, H, W) inputs, the 1-D
ones (N, C, L) or (C, L); a 1-D pooling is the 2-D one over a height of 1.
"""

from __future__ import annotations

import numpy as np

from minigrad.nn.module import Module
from minigrad.ops import pooling as ops
from minigrad.tensor import Tensor

__all__ = [
    "max_pool1d", "max_pool2d", "avg_pool1d", "avg_pool2d", "adaptive_max_pool1d", "adaptive_max_pool2d",
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "MaxPool1d", "MaxPool2d", "AvgPool1d", "AvgPool2d",
    "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d",
]


# -- argument checks ----------------------------------------------------------------------------


def _is_int(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def _sizes(fn: str, name: str, value, count: int, wrong_length: type[Exception] = RuntimeError) -> tuple:
    """``value`` (an int, or a tuple/list of 1 or ``count`` ints) as a tuple of ``count`` ints.

    ``wrong_length`` is the class raised for a sequence of another length:
    RuntimeError for pooling (PyTorch's class), ValueError for unpooling (see
    ``unpooling.py``).

    Raises:
        TypeError: not an int or a sequence of ints.
        wrong_length: a sequence of another length.
    """
    if _is_int(value):
        return (int(value),) * count
    if not isinstance(value, (tuple, list)) or not all(map(_is_int, value)):
        raise TypeError(f"{fn}(): argument '{name}' must be an int or a tuple of {count} ints, got {value!r}")
    if len(value) == 1:
        return (int(value[0]),) * count
    if len(value) != count:
        raise wrong_length(f"{fn}(): {name} must either be a single int, or a tuple of {count} ints, got {value!r}")
    return tuple(int(v) for v in value)


def _expect_bool(fn: str, name: str, value) -> None:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{fn}(): argument '{name}' must be a bool, got {type(value).__name__}")


def _expect_input(fn: str, x, spatial: int, integers: bool = True) -> None:
    """``x`` is a Tensor of ``spatial + 1`` or ``spatial + 2`` dimensions, non-empty but for the batch."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument 'input' must be a Tensor, got {type(x).__name__}")
    if x.ndim not in (spatial + 1, spatial + 2) or 0 in x.shape[x.ndim - spatial - 1 :]:
        raise RuntimeError(
            f"{fn}(): expected a {spatial + 1}-D or {spatial + 2}-D (batch mode) input with non-zero sizes "
            f"but for the optional batch dimension, got shape {x.shape}"
        )
    kind = x.dtype.kind
    if kind == "b" or kind == "c" or (kind in "iu" and not integers):
        raise NotImplementedError(f"{fn}(): not implemented for dtype {x.dtype}")


def _geometry(fn, spatial, kernel_size, stride, padding, dilation=1) -> tuple:
    """(kernel, stride, padding, dilation) as tuples of ``spatial`` ints; a None (or empty) stride is the kernel."""
    kernel = _sizes(fn, "kernel_size", kernel_size, spatial)
    if stride is None or (isinstance(stride, (tuple, list)) and not stride):
        stride = kernel
    else:
        stride = _sizes(fn, "stride", stride, spatial)
    return kernel, stride, _sizes(fn, "padding", padding, spatial), _sizes(fn, "dilation", dilation, spatial)


def _as_window_2d(geometry) -> tuple:
    """A 1-D geometry (1-tuples) as the 2-D one over a height of 1."""
    kernel, stride, padding, dilation = geometry
    return (1,) + kernel, (1,) + stride, (0,) + padding, (1,) + dilation


def _check_window(fn, x, kernel, stride, padding, dilation, ceil_mode, spatial=None) -> tuple:
    """Validate a pooling window over ``x``'s last ``len(kernel)`` dimensions; return the output size.

    The padding may be at most half the kernel size (PyTorch's limit, for
    dilated max pooling too). Messages show the last ``spatial`` dimensions
    (default all; a 1-D pooling runs as a 2-D one over a height of 1).
    """
    rank = len(kernel)
    shown = slice(rank - (rank if spatial is None else spatial), None)
    kernel_, stride_, padding_, dilation_ = kernel[shown], stride[shown], padding[shown], dilation[shown]
    if min(kernel) <= 0:
        raise RuntimeError(f"{fn}(): kernel_size must be greater than zero, got {kernel_}")
    if min(stride) <= 0:
        raise RuntimeError(f"{fn}(): stride must be greater than zero, got {stride_}")
    if min(dilation) <= 0:
        raise RuntimeError(f"{fn}(): dilation must be greater than zero, got {dilation_}")
    if min(padding) < 0:
        raise RuntimeError(f"{fn}(): padding must be non-negative, got {padding_}")
    if any(p > k // 2 for p, k in zip(padding, kernel)):
        raise RuntimeError(f"{fn}(): padding {padding_} must be at most half of kernel_size {kernel_}")
    size = x.shape[-rank:]
    out = tuple(ops.pool_output_size(*args, ceil_mode) for args in zip(size, kernel, stride, padding, dilation))
    if min(out) < 1:
        raise RuntimeError(
            f"{fn}(): input of size {tuple(size)[shown]} gives an output of size {out[shown]}: the output is too "
            f"small (kernel_size={kernel_}, stride={stride_}, padding={padding_}, dilation={dilation_})"
        )
    return out


def _batched(x, spatial: int):
    """``x`` with a batch dimension, and whether one was added."""
    if x.ndim == spatial + 1:
        return x.unsqueeze(0), True
    return x, False


def _as_2d(x):
    """A 1-D pooling input (N, C, L) or (C, L) as (N, C, 1, L)."""
    return (x if x.ndim == 3 else x.unsqueeze(0)).unsqueeze(2)


def _from_2d(out, like):
    """Undo ``_as_2d`` on an output (N, C, 1, Lo), or on each of a pair (values, indices)."""
    if isinstance(out, tuple):
        return tuple(_from_2d(o, like) for o in out)
    out = out.squeeze(2)
    return out if like.ndim == 3 else out.squeeze(0)


def _index_tensor(indices) -> Tensor:
    return Tensor._make(indices, False, None, 0)


# -- max pooling --------------------------------------------------------------------------------


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,  # noqa: A002
               return_indices=False):
    """Maximum over sliding windows of an image batch.

    Args:
        input: Tensor (N, C, H, W) or (C, H, W); float or integer.
        kernel_size: int or (kh, kw).
        stride: int or pair; None (or empty) means ``kernel_size``.
        padding: implicit -inf added on both sides, at most half the kernel size.
        dilation: spacing between the window's elements.
        ceil_mode: round the output size up (a window may run past the input).
        return_indices: also return, per output element, the flat index
            (row * W + col) of the element picked within its (H, W) plane.

    Ties go to the first maximum of the window (row-major), NaN to the last
    NaN; the gradient flows to that element only (summed where windows share it).

    Returns:
        Tensor (N, C, Ho, Wo) (or (C, Ho, Wo)); with ``return_indices`` the pair
        (values, int64 indices of the same shape).

    Raises:
        TypeError: a geometry argument is not an int or a tuple of ints, or a flag is not a bool.
        RuntimeError: wrong number of dimensions, non-positive kernel, stride
            or dilation, negative or too large padding, or an empty output.
        NotImplementedError: bool or complex input.
    """
    fn = "max_pool2d"
    _expect_input(fn, input, 2)
    geometry = _geometry(fn, 2, kernel_size, stride, padding, dilation)
    return _max_pool(fn, input, geometry, ceil_mode, return_indices, 2)


def _max_pool(fn, x, geometry, ceil_mode, return_indices, spatial):
    """Max pooling of a 3-D or 4-D ``x`` with a 2-D ``geometry``; messages as for ``spatial`` dimensions."""
    _expect_bool(fn, "ceil_mode", ceil_mode)
    _expect_bool(fn, "return_indices", return_indices)
    out_size = _check_window(fn, x, *geometry, ceil_mode, spatial)
    return _max_result(ops.MaxPool2d(*geometry, out_size), x, return_indices)


def _max_result(op, x, return_indices, spatial=2):
    """``op`` (a max pooling over ``spatial`` dims) applied to ``x`` (batched or not), and its picks if asked for."""
    batched, added = _batched(x, spatial)
    out = op(batched)
    indices = _index_tensor(op.indices)
    if added:
        out, indices = out.squeeze(0), indices.squeeze(0)
    return (out, indices) if return_indices else out


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,  # noqa: A002
               return_indices=False):
    """Maximum over sliding windows of a sequence batch (N, C, L) or (C, L).

    Arguments as in ``max_pool2d``, each an int or a 1-tuple; indices are
    positions along L.

    Raises:
        TypeError, RuntimeError, NotImplementedError: as ``max_pool2d``.
    """
    fn = "max_pool1d"
    _expect_input(fn, input, 1)
    geometry = _as_window_2d(_geometry(fn, 1, kernel_size, stride, padding, dilation))
    return _from_2d(_max_pool(fn, _as_2d(input), geometry, ceil_mode, return_indices, 1), input)


def _adaptive_size(fn, x, output_size, spatial) -> tuple:
    """``output_size`` as a tuple of ``spatial`` ints; in 2-D and 3-D an entry None means the input's size.

    Raises:
        TypeError: not an int or a sequence of ints (or None in 2-D and 3-D).
        RuntimeError: a sequence of another length, or a negative size.
    """
    allowed = (lambda n: _is_int(n) or n is None) if spatial >= 2 else _is_int
    if allowed(output_size):
        sizes = (output_size,) * spatial
    elif isinstance(output_size, (tuple, list)) and all(map(allowed, output_size)):
        if len(output_size) != spatial:
            raise RuntimeError(f"{fn}(): output_size must hold {spatial} sizes, got {output_size!r}")
        sizes = tuple(output_size)
    else:
        kind = "ints or None" if spatial >= 2 else "an int"
        raise TypeError(f"{fn}(): output_size must be an int or a tuple of {kind}, got {output_size!r}")
    if any(n is not None and n < 0 for n in sizes):
        raise RuntimeError(f"{fn}(): elements of output_size must be >= 0, got {output_size!r}")
    return tuple(x.shape[x.ndim - spatial + i] if n is None else int(n) for i, n in enumerate(sizes))


def adaptive_max_pool2d(input, output_size, return_indices=False):  # noqa: A002
    """Maximum over the windows that split (H, W) into ``output_size`` nearly equal parts.

    Output row i covers input rows floor(i * H / Ho) to ceil((i + 1) * H / Ho) - 1
    (PyTorch's windows), likewise for columns.

    Args:
        input: float Tensor (N, C, H, W) or (C, H, W).
        output_size: int or (Ho, Wo); an entry None keeps the input's size.
        return_indices: also return the flat index of each pick, as ``max_pool2d``.

    Raises:
        TypeError: ``output_size`` is not an int or a pair of ints/None, or ``return_indices`` not a bool.
        RuntimeError: wrong number of dimensions, or a negative size.
        NotImplementedError: an integer, bool or complex input.
    """
    fn = "adaptive_max_pool2d"
    _expect_input(fn, input, 2, integers=False)
    _expect_bool(fn, "return_indices", return_indices)
    out_size = _adaptive_size(fn, input, output_size, 2)
    return _max_result(ops.AdaptiveMaxPool2d(out_size), input, return_indices)


def adaptive_max_pool1d(input, output_size, return_indices=False):  # noqa: A002
    """``adaptive_max_pool2d`` along L of a sequence batch (N, C, L) or (C, L); ``output_size`` an int."""
    fn = "adaptive_max_pool1d"
    _expect_input(fn, input, 1, integers=False)
    _expect_bool(fn, "return_indices", return_indices)
    (size,) = _adaptive_size(fn, input, output_size, 1)
    return _from_2d(_max_result(ops.AdaptiveMaxPool2d((1, size)), _as_2d(input), return_indices), input)


# -- average pooling ----------------------------------------------------------------------------


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,  # noqa: A002
               divisor_override=None):
    """Mean over sliding windows of an image batch.

    Args:
        input: Tensor (N, C, H, W) or (C, H, W); float or integer (integer
            means truncate toward zero, as in PyTorch).
        kernel_size: int or (kh, kw).
        stride: int or pair; None (or empty) means ``kernel_size``.
        padding: zeros added on both sides, at most half the kernel.
        ceil_mode: round the output size up (a window may run past the input).
        count_include_pad: divide by the window's size including the zero
            padding (not the extra positions of ``ceil_mode``); otherwise by
            the number of input elements in the window.
        divisor_override: divide every window's sum by this non-zero int instead.

    Returns:
        Tensor (N, C, Ho, Wo) (or (C, Ho, Wo)).

    Raises:
        TypeError: a geometry argument is not an int or a tuple of ints, or
            ``divisor_override`` is not an int.
        IndexError: fewer than 3 dimensions (PyTorch's type).
        RuntimeError: more than 4 dimensions, non-positive kernel or stride, negative or
            too large padding, an empty output, or a zero divisor.
        NotImplementedError: bool or complex input.
    """
    fn = "avg_pool2d"
    if isinstance(input, Tensor) and input.ndim < 3:
        raise IndexError(f"{fn}(): expected a 3-D or 4-D (batch mode) input, got shape {input.shape}")
    _expect_input(fn, input, 2)
    geometry = _geometry(fn, 2, kernel_size, stride, padding)
    return _avg_pool(fn, input, geometry, ceil_mode, count_include_pad, divisor_override, 2)


def _avg_pool_flags(fn, ceil_mode, count_include_pad, divisor_override):
    """Check average pooling's flags; return ``divisor_override`` as an int (or None).

    Raises:
        TypeError: a flag is not a bool, or ``divisor_override`` not an int. RuntimeError: it is zero.
    """
    _expect_bool(fn, "ceil_mode", ceil_mode)
    _expect_bool(fn, "count_include_pad", count_include_pad)
    if divisor_override is None:
        return None
    if not _is_int(divisor_override):
        raise TypeError(f"{fn}(): divisor_override must be an int, got {type(divisor_override).__name__}")
    if divisor_override == 0:
        raise RuntimeError(f"{fn}(): divisor_override must not be zero")
    return int(divisor_override)


def _avg_pool(fn, x, geometry, ceil_mode, count_include_pad, divisor_override, spatial):
    """Average pooling of a 3-D or 4-D ``x`` with a 2-D ``geometry``; messages as for ``spatial`` dimensions."""
    divisor_override = _avg_pool_flags(fn, ceil_mode, count_include_pad, divisor_override)
    out_size = _check_window(fn, x, *geometry, ceil_mode, spatial)
    kernel, stride, padding, _ = geometry
    batched, added = _batched(x, 2)
    pool = ops.AvgPoolGeometry(tuple(batched.shape), kernel, stride, padding, out_size, bool(count_include_pad),
                               divisor_override)
    out = ops.AvgPool2d(pool)(batched)
    return out.squeeze(0) if added else out


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,  # noqa: A002
               count_include_pad=True):
    """Mean over sliding windows of a sequence batch (N, C, L) or (C, L).

    Arguments as in ``avg_pool2d``, each an int or a 1-tuple.

    Raises:
        TypeError, RuntimeError, NotImplementedError: as ``avg_pool2d``.
    """
    fn = "avg_pool1d"
    _expect_input(fn, input, 1)
    geometry = _as_window_2d(_geometry(fn, 1, kernel_size, stride, padding))
    return _from_2d(_avg_pool(fn, _as_2d(input), geometry, ceil_mode, count_include_pad, None, 1), input)


def adaptive_avg_pool2d(input, output_size):  # noqa: A002
    """Mean over the windows that split (H, W) into ``output_size`` nearly equal parts.

    Output row i averages input rows floor(i * H / Ho) to ceil((i + 1) * H / Ho) - 1
    (PyTorch's windows), likewise for columns; ``output_size=1`` is global average pooling.

    Args:
        input: float Tensor (N, C, H, W) or (C, H, W).
        output_size: int or (Ho, Wo); an entry None keeps the input's size.

    Raises:
        TypeError: ``output_size`` is not an int or a pair of ints/None.
        RuntimeError: wrong number of dimensions, or a negative size.
        NotImplementedError: an integer, bool or complex input.
    """
    fn = "adaptive_avg_pool2d"
    _expect_input(fn, input, 2, integers=False)
    out_size = _adaptive_size(fn, input, output_size, 2)
    x, added = _batched(input, 2)
    out = ops.AdaptiveAvgPool2d(out_size)(x)
    return out.squeeze(0) if added else out


def adaptive_avg_pool1d(input, output_size):  # noqa: A002
    """``adaptive_avg_pool2d`` along L of a sequence batch (N, C, L) or (C, L); ``output_size`` an int."""
    fn = "adaptive_avg_pool1d"
    _expect_input(fn, input, 1, integers=False)
    (size,) = _adaptive_size(fn, input, output_size, 1)
    return _from_2d(adaptive_avg_pool2d(_as_2d(input), (1, size)), input)


# -- modules ------------------------------------------------------------------------------------


class _PoolNd(Module):
    """The window every max and average pooling module has: ``kernel_size``, ``stride`` (None: the
    kernel size) and ``padding``."""

    def __init__(self, kernel_size, stride, padding):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class _MaxPoolNd(_PoolNd):
    """Shared constructor of the max-pooling modules, 1-D to 3-D (arguments as in ``max_pool2d``)."""

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices: bool = False,
                 ceil_mode: bool = False):
        super().__init__(kernel_size, stride, padding)
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool2d(_MaxPoolNd):
    """Max pooling over (N, C, H, W) or (C, H, W): see ``max_pool2d`` (``stride`` defaults to ``kernel_size``)."""

    def forward(self, input):  # noqa: A002
        """Pool ``input``; a pair (values, indices) with ``return_indices``."""
        return max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                          ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class MaxPool1d(_MaxPoolNd):
    """Max pooling over (N, C, L) or (C, L): see ``max_pool1d``."""

    def forward(self, input):  # noqa: A002
        """Pool ``input``; a pair (values, indices) with ``return_indices``."""
        return max_pool1d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                          ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class _AvgPoolNd(_PoolNd):
    """Shared constructor of the 2-D and 3-D average-pooling modules (arguments as in ``avg_pool2d``)."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
                 count_include_pad: bool = True, divisor_override=None):
        super().__init__(kernel_size, stride, padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override


class AvgPool2d(_AvgPoolNd):
    """Average pooling over (N, C, H, W) or (C, H, W): see ``avg_pool2d`` (``stride`` defaults to ``kernel_size``)."""

    def forward(self, input):  # noqa: A002
        """Pool ``input``."""
        return avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                          self.count_include_pad, self.divisor_override)


class AvgPool1d(_PoolNd):
    """Average pooling over (N, C, L) or (C, L): see ``avg_pool1d``; sizes are kept as 1-tuples, as in PyTorch."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
                 count_include_pad: bool = True):
        super().__init__(_sizes("AvgPool1d", "kernel_size", kernel_size, 1),
                         _sizes("AvgPool1d", "stride", stride if stride is not None else kernel_size, 1),
                         _sizes("AvgPool1d", "padding", padding, 1))
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input):  # noqa: A002
        """Pool ``input``."""
        return avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                          self.count_include_pad)


class _AdaptivePool(Module):
    """Shared constructor of the adaptive pooling modules, 1-D to 3-D: the target ``output_size``."""

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool2d(_AdaptivePool):
    """Adaptive average pooling to ``output_size`` (int or pair, None keeps a size): see ``adaptive_avg_pool2d``."""

    def forward(self, input):  # noqa: A002
        """Pool ``input`` (N, C, H, W) or (C, H, W)."""
        return adaptive_avg_pool2d(input, self.output_size)


class AdaptiveAvgPool1d(_AdaptivePool):
    """Adaptive average pooling of (N, C, L) or (C, L) to length ``output_size``: see ``adaptive_avg_pool1d``."""

    def forward(self, input):  # noqa: A002
        """Pool ``input``."""
        return adaptive_avg_pool1d(input, self.output_size)


class _AdaptiveMaxPool(_AdaptivePool):
    """Shared constructor of the adaptive max pooling modules: ``output_size`` and ``return_indices``."""

    def __init__(self, output_size, return_indices: bool = False):
        super().__init__(output_size)
        self.return_indices = return_indices


class AdaptiveMaxPool2d(_AdaptiveMaxPool):
    """Adaptive max pooling to ``output_size``: see ``adaptive_max_pool2d``; ``return_indices`` as there."""

    def forward(self, input):  # noqa: A002
        """Pool ``input`` (N, C, H, W) or (C, H, W)."""
        return adaptive_max_pool2d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool1d(_AdaptiveMaxPool):
    """Adaptive max pooling of (N, C, L) or (C, L) to length ``output_size``: see ``adaptive_max_pool1d``."""

    def forward(self, input):  # noqa: A002
        """Pool ``input``."""
        return adaptive_max_pool1d(input, self.output_size, self.return_indices)
