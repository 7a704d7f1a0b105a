"""Pooling ops over the three trailing (spatial) dimensions of (N, C, D, H, W) arrays.

The 3-D counterparts of ``minigrad.ops.pooling``, with the same conventions:
arguments are validated by the public functions in ``minigrad.nn.pooling3d``;
geometry arguments are triples (depth, height, width); windows are visited one
kernel offset at a time (kd * kh * kw strided slices of the whole batch), never
one voxel at a time.

Max pooling keeps, per output element, the flat index (z * H * W + y * W + x)
of its pick, as PyTorch's ``return_indices``: the first maximum of the window
in (depth, row, column) order, or the last NaN; a maximum equal to the padding
value picks the first position at or past the padding. Its gradient is the
2-D ops' ``MaxPoolScatter`` over a (D * H, W) plane, whose flat indices are
these, so gradients of every order come for free.
"""

from __future__ import annotations

from dataclasses import dataclass

from minigrad.function import FunctionNode
from minigrad.ops.pooling import (
    AvgPool2d,
    AvgPool2dGrad,
    AvgPoolGeometry,
    MaxPoolScatter,
    _first_real,
    _lowest,
    adaptive_bounds,
    padded_to,
    pick_maximum,
)

# -- max pooling ----------------------------------------------------------------------------------


class MaxPool3d(FunctionNode):
    """Max over each window of an (N, C, D, H, W) array; the flat index of each pick is kept in ``indices``

    ``indices`` (int64, the output's shape) is read by ``F.max_pool3d`` for
    ``return_indices``. The maximum is a chain of elementwise maxima over the
    kernel offsets; the pick is the first offset equal to it, or the last NaN.
    """

    def __init__(self, kernel, stride, padding, dilation, out_size):
        self.kernel, self.stride, self.padding = kernel, stride, padding
        self.dilation, self.out_size = dilation, out_size

    def _windows(self, x):
        """``(tables, values)``: ``tables[a]`` (out, k) is the input position offset k of each window reads
        along spatial axis ``a`` (negative or past the end in the padding); ``values`` holds one
        (N, C, Do, Ho, Wo) array per kernel offset, in (depth, row, column) order."""
        xp = self.xp
        tables = [(xp.arange(o) * s - p)[:, None] + xp.arange(k) * d
                  for o, k, s, p, d in zip(self.out_size, self.kernel, self.stride, self.padding, self.dilation)]
        covered = [s * (o - 1) + d * (k - 1) + 1
                   for o, k, s, d in zip(self.out_size, self.kernel, self.stride, self.dilation)]
        padded = padded_to(xp, x, self.padding, covered, _lowest(xp, x.dtype))
        (kd, kh, kw), (sd, sh, sw), (dd, dh, dw) = self.kernel, self.stride, self.dilation
        do, ho, wo = self.out_size
        values = [padded[:, :, i * dd : i * dd + sd * (do - 1) + 1 : sd, j * dh : j * dh + sh * (ho - 1) + 1 : sh,
                         m * dw : m * dw + sw * (wo - 1) + 1 : sw]
                  for i in range(kd) for j in range(kh) for m in range(kw)]
        return tables, values

    def forward(self, x):
        xp = self.xp
        d, h, w = x.shape[2:]
        self.in_shape, self.keep = x.shape, None
        tables, values = self._windows(x)
        best, choice = pick_maximum(xp, values)
        kh, kw = tables[1].shape[1], tables[2].shape[1]
        choice = choice.astype(xp.int64)
        od, oh, ow = (xp.arange(n).reshape(shape) for n, shape in
                      zip(best.shape[2:], ((-1, 1, 1), (1, -1, 1), (1, 1, -1))))
        indices = (tables[0][od, choice // (kh * kw)] * (h * w) + tables[1][oh, (choice // kw) % kh] * w
                   + tables[2][ow, choice % kw])
        at_lowest = best == _lowest(xp, x.dtype)
        if bool(at_lowest.any()):
            # A maximum equal to the padding value picks, as PyTorch does, the first position at or past
            # the padding: never the padding itself.
            fd, fh, fw = (_first_real(xp, t) for t in tables)
            first = fd[:, None, None] * (h * w) + fh[None, :, None] * w + fw[None, None, :]
            indices = xp.where(at_lowest, first, indices)
            # A window of padding only has no element to pass a gradient to (PyTorch's index lies outside).
            hollow = (fd >= d)[:, None, None] | (fh >= h)[None, :, None] | (fw >= w)[None, None, :]
            if bool(hollow.any()):
                self.keep = ~hollow
        self.indices = indices
        return best

    def _disjoint(self) -> bool:
        """Whether no two windows share an input element (then the gradient scatter is an assignment)."""
        return all(s >= d * (k - 1) + 1 for s, d, k in zip(self.stride, self.dilation, self.kernel))

    def backward(self, g):
        n, c, d, h, w = self.in_shape
        scatter = MaxPoolScatter(self.indices, (n, c, d * h, w), self._disjoint(), self.keep)
        return scatter(g).reshape(self.in_shape)


class AdaptiveMaxPool3d(MaxPool3d):
    """Max over PyTorch's adaptive windows, along each of three dims as ``AdaptiveMaxPool2d`` along two"""

    def __init__(self, out_size):
        self.out_size = out_size

    def _windows(self, x):
        xp = self.xp
        if 0 in self.out_size:  # an empty output: one empty offset
            return ([xp.zeros((o, 1), dtype=xp.int64) for o in self.out_size],
                    [xp.empty(x.shape[:2] + tuple(self.out_size), dtype=x.dtype)])
        tables = []
        for n, o in zip(x.shape[2:], self.out_size):
            start, end = adaptive_bounds(xp, n, o)
            tables.append(xp.minimum(start[:, None] + xp.arange(int((end - start).max())), end[:, None] - 1))
        values = []
        for i in range(tables[0].shape[1]):
            depth = xp.take(x, tables[0][:, i], axis=2)
            for j in range(tables[1].shape[1]):
                rows = xp.take(depth, tables[1][:, j], axis=3)
                values += [xp.take(rows, tables[2][:, m], axis=4) for m in range(tables[2].shape[1])]
        return tables, values

    def _disjoint(self) -> bool:
        sizes = self.in_shape[2:]
        return 0 in self.out_size or all(n % o == 0 for n, o in zip(sizes, self.out_size))


# -- average pooling ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class AvgPool3dGeometry(AvgPoolGeometry):
    """``AvgPoolGeometry`` with triples (depth, height, width): where the windows lie and each one's divisor.

    ``in_shape`` is (N, C, D, H, W); the divisor (``window_divisor``) is an int or an int array (Do, Ho, Wo).
    """


class AvgPool3d(AvgPool2d):
    """Sum over each window of an (N, C, D, H, W) array divided by its divisor (``AvgPool3dGeometry``)

    ``AvgPool2d``'s computation, which runs over any number of spatial dimensions; its own node
    so that the graph names it and its backward is ``AvgPool3dGrad``.
    """

    def backward(self, g):
        return AvgPool3dGrad(self.geometry)(g)


class AvgPool3dGrad(AvgPool2dGrad):
    """The backward of ``AvgPool3d``: each gradient divided by its window's divisor, spread over the window"""

    def backward(self, gg):
        return AvgPool3d(self.geometry)(gg)


OPS = {
    "max_pool3d": MaxPool3d,
    "adaptive_max_pool3d": AdaptiveMaxPool3d,
    "avg_pool3d": AvgPool3d,
    "avg_pool3d_grad": AvgPool3dGrad,
}
