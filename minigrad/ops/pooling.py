"""Pooling ops over the two trailing (spatial) dimensions of (N, C, H, W) arrays.

Each op's forward works on arrays and its backward, on Tensors, sits right
below it. Arguments are validated by the public functions in
``minigrad.nn.pooling``; the ops assume geometry PyTorch accepts (the
padding at most half the kernel, so that only a dilated max-pooling window
can lie in the padding entirely).

Geometry arguments are pairs (height, width): ``kernel``, ``stride``,
``padding`` (added on both sides), ``dilation`` and the output size
``out_size``. With ``ceil_mode`` the last window may run past the bottom or
right padding; those positions count as padding too.

Windows are visited one kernel offset at a time (a loop over the kh * kw
offsets, each a strided slice of the whole batch): no loop over pixels.

Max pooling remembers, per output element, the flat index (row * W + col) of
the element it picked, as PyTorch's ``return_indices`` does: the first
maximum of the window in row-major order, or the last NaN when the window
holds NaN (a window of padding only gives -inf and PyTorch's index, the
first position past the padding, which lies outside the input). The
gradient flows to the picked element only (``MaxPoolScatter``), and
the gradient of that scatter is the matching gather (``MaxPoolGather``), so
max pooling has gradients of every order.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from minigrad.function import FunctionNode
from minigrad.tensor import Tensor


def _constant(array) -> Tensor:
    """``array`` as a Tensor outside any graph."""
    return Tensor._make(array, False, None, 0)


def pool_output_size(size, kernel, stride, padding, dilation, ceil_mode) -> int:
    """Output length of a pooling window along one dimension, PyTorch's formula.

    With ``ceil_mode`` the division rounds up, but a last window that would
    start in the right padding is dropped.
    """
    span = size + 2 * padding - dilation * (kernel - 1) - 1
    out = (span + (stride - 1 if ceil_mode else 0)) // stride + 1
    if ceil_mode and (out - 1) * stride >= size + padding:
        out -= 1
    return out


def adaptive_bounds(xp, size, out):
    """Start and end (exclusive) of each of ``out`` adaptive windows over ``size``: floor and ceil of i*size/out."""
    i = xp.arange(out)
    return (i * size) // out, ((i + 1) * size + out - 1) // out


def _padded(xp, x, padding, out_size, span, fill):
    """``x`` with ``padding`` rows/columns of ``fill`` before and as many after as ``span`` windows need."""
    return padded_to(xp, x, padding, [span(axis, out) for axis, out in enumerate(out_size)], fill)


def padded_to(xp, x, padding, covered, fill):
    """``x`` (N, C, *spatial) with ``padding`` of ``fill`` before each spatial dimension and enough after it
    to reach the ``covered`` length (the padded length the windows read)."""
    before = padding
    after = [max(0, need - p - n) for need, p, n in zip(covered, padding, x.shape[2:])]
    if not any(before) and not any(after):
        return x
    shape = x.shape[:2] + tuple(b + n + a for b, n, a in zip(before, x.shape[2:], after))
    out = xp.full(shape, fill, dtype=x.dtype)
    out[(slice(None), slice(None)) + tuple(slice(b, b + n) for b, n in zip(before, x.shape[2:]))] = x
    return out


def divide_truncating(xp, total, divisor, dtype):
    """``total / divisor`` for integer arrays as PyTorch's C++ kernels divide: rounded toward zero, in ``dtype``."""
    quotient = xp.abs(total) // xp.abs(divisor)
    return (quotient * (xp.sign(total) * xp.sign(divisor))).astype(dtype, copy=False)


def _lowest(xp, dtype):
    """The value below every other of ``dtype``: -inf for floats, the minimum for integers."""
    return -xp.inf if dtype.kind == "f" else xp.iinfo(dtype).min


# -- max pooling ----------------------------------------------------------------------------------


class MaxPool2d(FunctionNode):
    """Max over each window of an (N, C, H, W) array; the flat index of each pick is kept in ``indices``

    ``indices`` (int64, the output's shape) is read by ``F.max_pool2d`` for
    ``return_indices``. The maximum is a chain of elementwise maxima over the
    kernel offsets; the pick is then the first offset equal to it (a second
    pass of comparisons), or the last NaN when the window holds NaN.
    """

    def __init__(self, kernel, stride, padding, dilation, out_size):
        self.kernel, self.stride, self.padding = kernel, stride, padding
        self.dilation, self.out_size = dilation, out_size

    def _span(self, axis, count):
        """Padded length that ``count`` windows along ``axis`` cover."""
        return self.stride[axis] * (count - 1) + self.dilation[axis] * (self.kernel[axis] - 1) + 1

    def _windows(self, x):
        """The windows as kernel offsets: ``(rows, cols, values)``.

        ``rows`` (Ho, kh) and ``cols`` (Wo, kw) give the input row/column that
        offset (i, j) of window (oh, ow) reads (negative or past the end in
        the padding); ``values`` holds one (N, C, Ho, Wo) array per offset, in
        row-major order (padding reads the lowest value of the dtype).
        """
        xp = self.xp
        (kh, kw), (sh, sw), (ph, pw), (dh, dw) = self.kernel, self.stride, self.padding, self.dilation
        ho, wo = self.out_size
        rows = (xp.arange(ho) * sh - ph)[:, None] + xp.arange(kh) * dh
        cols = (xp.arange(wo) * sw - pw)[:, None] + xp.arange(kw) * dw
        padded = _padded(xp, x, self.padding, self.out_size, self._span, _lowest(xp, x.dtype))
        values = [padded[:, :, i * dh : i * dh + sh * (ho - 1) + 1 : sh, j * dw : j * dw + sw * (wo - 1) + 1 : sw]
                  for i in range(kh) for j in range(kw)]
        return rows, cols, values

    def forward(self, x):
        xp = self.xp
        h, w = x.shape[2:]
        self.in_shape, self.keep = x.shape, None
        rows, cols, values = self._windows(x)
        best, choice = pick_maximum(xp, values)
        indices = self._flat_indices(rows, cols, choice, w)
        at_lowest = best == _lowest(xp, x.dtype)
        if bool(at_lowest.any()):
            # A maximum equal to the padding value (all -inf, or a window of padding only) picks, as PyTorch
            # does, the first position at or past the padding: never the padding itself.
            first_row, first_col = _first_real(xp, rows), _first_real(xp, cols)
            indices = xp.where(at_lowest, first_row[:, None] * w + first_col[None, :], indices)
            # A window of padding only has no element to pass a gradient to (PyTorch's index lies outside).
            hollow = (first_row >= h)[:, None] | (first_col >= w)[None, :]
            if bool(hollow.any()):
                self.keep = ~hollow
        self.indices = indices
        return best

    def _flat_indices(self, rows, cols, choice, w):
        """The flat index ``rows[oh, i] * w + cols[ow, j]`` of each pick, (i, j) = divmod(choice, kw).

        The windows of a regular pooling are translates of one another: the index is the window's
        first position plus the offset's displacement, an addition and a lookup in a table of kh*kw.
        """
        xp = self.xp
        (kh, kw), (dh, dw) = self.kernel, self.dilation
        displacement = ((xp.arange(kh) * (dh * w))[:, None] + xp.arange(kw) * dw).reshape(-1)  # (kh*kw,)
        indices = xp.take(displacement, choice)
        indices += rows[:, :1] * w + cols[:, 0]
        return indices

    def _disjoint(self, h, w) -> bool:
        """Whether no two windows share an input element (then the gradient scatter is an assignment)."""
        return all(s >= d * (k - 1) + 1 for s, d, k in zip(self.stride, self.dilation, self.kernel))

    def backward(self, g):
        return MaxPoolScatter(self.indices, self.in_shape, self._disjoint(*self.in_shape[2:]), self.keep)(g)


def _move_to(xp, choice, step, k, hit) -> None:
    """choice <- k where ``hit``, in place (integer arithmetic: faster than a masked copy)."""
    xp.subtract(k, choice, out=step)
    step *= hit
    choice += step


def pick_maximum(xp, values):
    """``(best, choice)``: the elementwise maximum of the window arrays ``values`` (one per kernel offset) and
    the offset each maximum came from, as PyTorch picks it: the first offset equal to the maximum, or the
    last NaN (NaN propagates)."""
    best = values[0].copy()
    for v in values[1:]:
        xp.maximum(best, v, out=best)
    # Later offsets first, so that earlier ones overwrite: the first equal to the maximum wins.
    choice = xp.full(best.shape, -1, dtype=xp.int8 if len(values) < 128 else xp.int32)
    step = xp.empty_like(choice)
    for k in range(len(values) - 1, -1, -1):
        _move_to(xp, choice, step, k, values[k] == best)
    if best.dtype.kind == "f" and bool(xp.isnan(best).any()):
        for k in range(len(values)):  # PyTorch's scan takes every NaN it meets: the last NaN wins
            _move_to(xp, choice, step, k, xp.isnan(values[k]))
    return best, choice


def _first_real(xp, table):
    """Per window (row of ``table``), its first position at or past the padding (possibly past the input's end)."""
    return xp.take_along_axis(table, (table >= 0).argmax(axis=1)[:, None], axis=1)[:, 0]


class AdaptiveMaxPool2d(MaxPool2d):
    """Max over PyTorch's adaptive windows: output row i covers rows floor(i*H/Ho) to ceil((i+1)*H/Ho)

    Windows differ in size by at most one; shorter ones repeat their last
    element for the missing offsets, which never changes the pick.
    """

    def __init__(self, out_size):
        self.out_size = out_size

    def _windows(self, x):
        xp = self.xp
        h, w = x.shape[2:]
        ho, wo = self.out_size
        if ho == 0 or wo == 0:  # an empty output: one empty offset
            return (xp.zeros((ho, 1), dtype=xp.int64), xp.zeros((wo, 1), dtype=xp.int64),
                    [xp.empty(x.shape[:2] + (ho, wo), dtype=x.dtype)])
        row_start, row_end = adaptive_bounds(xp, h, ho)
        col_start, col_end = adaptive_bounds(xp, w, wo)
        rows = xp.minimum(row_start[:, None] + xp.arange(int((row_end - row_start).max())), row_end[:, None] - 1)
        cols = xp.minimum(col_start[:, None] + xp.arange(int((col_end - col_start).max())), col_end[:, None] - 1)
        values = []
        for i in range(rows.shape[1]):
            picked_rows = xp.take(x, rows[:, i], axis=2)  # (N, C, Ho, W)
            values += [xp.take(picked_rows, cols[:, j], axis=3) for j in range(cols.shape[1])]
        return rows, cols, values

    def _flat_indices(self, rows, cols, choice, w):
        # Adaptive windows are clamped at their ends: not translates of one another, so look up both tables.
        xp = self.xp
        kw = cols.shape[1]
        return rows[xp.arange(rows.shape[0])[:, None], choice // kw] * w + cols[xp.arange(cols.shape[0]), choice % kw]

    def _disjoint(self, h, w) -> bool:
        ho, wo = self.out_size
        return ho * wo == 0 or (h % ho == 0 and w % wo == 0)


def _kept(xp, indices, values, keep):
    """``indices`` and ``values`` with the entries of windows outside ``keep`` (Ho, Wo) moved to 0 and zeroed."""
    if keep is None:
        return indices, values
    return xp.where(keep, indices, 0), xp.where(keep, values, 0)


class MaxPoolScatter(FunctionNode):
    """Zeros of the input's shape (N, C, H, W) with ``g`` (N, C, Ho, Wo) added at the picked ``indices``

    The backward of max pooling; indices picked by several windows sum their
    gradients. Windows outside ``keep`` (a (Ho, Wo) mask, or None for all)
    picked nothing and pass no gradient.
    """

    def __init__(self, indices, in_shape, disjoint=False, keep=None):
        self.indices, self.in_shape, self.disjoint, self.keep = indices, in_shape, disjoint, keep

    def forward(self, g):
        xp = self.xp
        n, c, h, w = self.in_shape
        plane = h * w
        indices, g = _kept(xp, self.indices, g, self.keep)
        flat = (indices.reshape(n * c, -1) + (xp.arange(n * c) * plane)[:, None]).ravel()
        values = g.reshape(-1)
        if self.disjoint and self.keep is None:  # no two windows share an element, so no two picks coincide
            out = xp.zeros(n * c * plane, dtype=g.dtype)
            out[flat] = values
        else:
            out = xp.bincount(flat, weights=values, minlength=n * c * plane).astype(g.dtype, copy=False)
        return out.reshape(self.in_shape)

    def backward(self, gg):
        return MaxPoolGather(self.indices, self.disjoint, self.keep)(gg)


class MaxPoolGather(FunctionNode):
    """The elements of ``x`` (N, C, H, W) at the flat plane ``indices`` (N, C, Ho, Wo): the adjoint of the scatter

    Windows outside ``keep`` give 0.
    """

    def __init__(self, indices, disjoint=False, keep=None):
        self.indices, self.disjoint, self.keep = indices, disjoint, keep

    def forward(self, x):
        xp = self.xp
        self.in_shape = x.shape
        n, c = x.shape[:2]
        indices, _ = _kept(xp, self.indices, 0, self.keep)
        picked = xp.take_along_axis(x.reshape(n, c, -1), indices.reshape(n, c, -1), axis=2)
        picked = picked.reshape(self.indices.shape)
        return picked if self.keep is None else xp.where(self.keep, picked, 0).astype(x.dtype, copy=False)

    def backward(self, g):
        return MaxPoolScatter(self.indices, self.in_shape, self.disjoint, self.keep)(g)


# -- average pooling ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class AvgPoolGeometry:
    """Where average pooling's windows lie (one entry per spatial dimension: pairs (height, width) for 2-D
    pooling) and what each window's sum is divided by.

    Attributes:
        in_shape: (N, C, H, W) of the input.
        kernel, stride, padding, out_size: the windows (zeros pad the input).
        count_include_pad: divide by the window's size clipped to the padded
            input (the extra positions of ``ceil_mode`` do not count), or else
            by the number of input elements in the window.
        divisor_override: a non-zero int every sum is divided by instead, or None.
    """

    in_shape: tuple
    kernel: tuple
    stride: tuple
    padding: tuple
    out_size: tuple
    count_include_pad: bool = True
    divisor_override: int | None = None

    def span(self, axis, count):
        """Padded length that ``count`` windows along ``axis`` cover."""
        return self.stride[axis] * (count - 1) + self.kernel[axis]

    def covered(self):
        """The padded length the windows read along each spatial dimension."""
        return [self.span(axis, out) for axis, out in enumerate(self.out_size)]

    def slices(self):
        """Index tuples of the padded input (N, C, *spatial), one per kernel offset: the elements it meets."""
        strided = [
            [slice(i, i + s * (o - 1) + 1, s) for i in range(k)]
            for k, s, o in zip(self.kernel, self.stride, self.out_size)
        ]
        for spatial in itertools.product(*strided):
            yield (slice(None), slice(None)) + spatial

    def divisor(self, xp):
        """The divisor of every window: an int, or an int array (Ho, Wo) (PyTorch's rule)."""
        return window_divisor(xp, self)


def window_divisor(xp, geometry):
    """What each average-pooling window's sum is divided by, for a geometry of any number of spatial dims.

    ``geometry.divisor_override`` when set; else the product over the spatial
    axes of each window's length clipped to the padded input (or, without
    ``count_include_pad``, to the input itself): an int array of shape ``out_size``.
    """
    if geometry.divisor_override is not None:
        return geometry.divisor_override
    divisor, rank = 1, len(geometry.kernel)
    for axis, (size, kernel, stride, padding, out) in enumerate(
        zip(geometry.in_shape[2:], geometry.kernel, geometry.stride, geometry.padding, geometry.out_size)
    ):
        start = xp.arange(out) * stride - padding
        end = xp.minimum(start + kernel, size + padding)
        if not geometry.count_include_pad:
            start, end = xp.maximum(start, 0), xp.minimum(end, size)
        divisor = divisor * (end - start).reshape([out if a == axis else 1 for a in range(rank)])
    return divisor


class AvgPool2d(FunctionNode):
    """Sum over each window of an (N, C, H, W) array (or any number of spatial dims) divided by its divisor

    Zeros pad the input. Integer arrays divide with truncation toward zero,
    as PyTorch does; float16 sums are accumulated in float32.
    """

    def __init__(self, geometry):
        self.geometry = geometry

    def forward(self, x):
        xp, geometry = self.xp, self.geometry
        padded = padded_to(xp, x, geometry.padding, geometry.covered(), 0)
        accumulate = xp.float32 if x.dtype == xp.float16 else x.dtype
        total = None
        for where in geometry.slices():
            window = padded[where]
            if total is None:
                total = window.astype(accumulate, copy=True)
            else:
                total += window
        if x.dtype.kind == "f":
            total /= xp.asarray(geometry.divisor(xp), dtype=accumulate)
            return total.astype(x.dtype, copy=False)
        return divide_truncating(xp, total, xp.asarray(geometry.divisor(xp), dtype=x.dtype), x.dtype)

    def backward(self, g):
        return AvgPool2dGrad(self.geometry)(g)


class AvgPool2dGrad(FunctionNode):
    """The backward of ``AvgPool2d``: each gradient divided by its window's divisor, spread over the window"""

    def __init__(self, geometry):
        self.geometry = geometry

    def forward(self, g):
        xp, geometry = self.xp, self.geometry
        size, padding = geometry.in_shape[2:], geometry.padding
        shape = tuple(max(c, p + n) for c, p, n in zip(geometry.covered(), padding, size))
        out = xp.zeros(geometry.in_shape[:2] + shape, dtype=g.dtype)
        share = g / xp.asarray(geometry.divisor(xp), dtype=g.dtype)
        for where in geometry.slices():
            out[where] += share  # the positions of one offset are distinct, so += on the slice is exact
        return out[(slice(None), slice(None)) + tuple(slice(p, p + n) for p, n in zip(padding, size))]

    def backward(self, gg):
        return AvgPool2d(self.geometry)(gg)


def _adaptive_matrix(xp, size, out, dtype):
    """(out, size): row i averages input positions floor(i*size/out) .. ceil((i+1)*size/out) - 1."""
    start, end = adaptive_bounds(xp, size, out)
    positions = xp.arange(size)
    inside = (positions >= start[:, None]) & (positions < end[:, None])
    return (inside / (end - start)[:, None]).astype(dtype)


class AdaptiveAvgPool2d(FunctionNode):
    """Mean over PyTorch's adaptive windows of an (N, C, H, W) array, to (N, C, Ho, Wo)

    The windows are rectangles, so the mean is separable: A_h @ x @ A_w.T
    with A (out, in) averaging matrices, two matrix products.
    """

    def __init__(self, out_size):
        self.out_size = out_size

    def forward(self, x):
        xp = self.xp
        h, w = x.shape[2:]
        self.rows = _adaptive_matrix(xp, h, self.out_size[0], x.dtype)  # (Ho, H)
        self.cols = _adaptive_matrix(xp, w, self.out_size[1], x.dtype)  # (Wo, W)
        if self.out_size == (1, 1):  # global average pooling
            return x.mean(axis=(2, 3), keepdims=True)
        return xp.matmul(self.rows, xp.matmul(x, self.cols.T))

    def backward(self, g):
        if self.out_size == (1, 1):
            h, w = self.rows.shape[1], self.cols.shape[1]
            return g.expand(g.shape[:2] + (h, w)) / (h * w)
        return _constant(self.rows.T) @ g @ _constant(self.cols)


OPS = {
    "max_pool2d": MaxPool2d,
    "adaptive_max_pool2d": AdaptiveMaxPool2d,
    "max_pool_scatter": MaxPoolScatter,
    "max_pool_gather": MaxPoolGather,
    "avg_pool2d": AvgPool2d,
    "avg_pool2d_grad": AvgPool2dGrad,
    "adaptive_avg_pool2d": AdaptiveAvgPool2d,
}
