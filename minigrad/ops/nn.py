"""Neural-network ops: linear, activations, softmax, losses, normalization, embedding,
dropout and 2-D convolution (with its im2col pair, unfold and fold).

Each op's forward works on arrays and its backward, on Tensors, sits right
below it. Arguments are validated by the public functions in
``minigrad.nn.functional``; the ops assume valid input.

Some backwards need intermediate values of the forward (layer norm's
normalized input, the difference in the MSE loss). The forward keeps them as
arrays, and a first-order backward uses them as constants. When the backward
is itself being recorded (``create_graph``) those values must be
differentiable functions of the inputs, so they are recomputed from the saved
inputs with Tensor ops instead (``_recording``). The convolution keeps no
intermediate: its columns would outweigh the input several times, so its
backward builds them again (see the convolution section).
"""

from __future__ import annotations

import math

import numpy as np

from minigrad import backend
from minigrad.destinations import matmul_into, sum_into
from minigrad.function import FunctionNode
from minigrad.grad_mode import _state as _grad_state
from minigrad.ops._util import shape_of, unbroadcast
from minigrad.ops.indexing import IndexScatter
from minigrad.tensor import Tensor


def _recording() -> bool:
    """True while a backward is recorded for higher-order gradients (``create_graph=True``)."""
    return _grad_state.enabled


def _constant(array) -> Tensor:
    """``array`` as a Tensor outside any graph."""
    return Tensor._make(array, False, None, 0)


# -- linear ---------------------------------------------------------------------


class Linear(FunctionNode):
    """x @ weight.T + bias, x of shape (..., in), weight (out, in), bias (out,) or None"""

    uses_grad_destinations = True

    def forward(self, x, weight, bias):
        self.retain_inputs((0, 1))
        out = x @ weight.T
        if bias is not None:
            out += bias  # the product is a fresh array
        return out

    def backward(self, g):
        # With the leading dimensions of g and x flattened (g2, x2): grad_w = g2^T x2, grad_b = sum of g2's rows.
        # matmul_into / sum_into write them into memory offered for them, or add them into .grad
        # (minigrad.destinations).
        x, weight = self.saved_inputs
        need_x, need_w, need_b = self.needs_input_grad
        g2 = _as_matrix(g)
        grad_x = g @ weight if need_x else None
        grad_w = matmul_into(self, 1, g2.mT, _as_matrix(x)) if need_w else None
        grad_b = sum_into(self, 2, g2) if need_b else None
        return grad_x, grad_w, grad_b


def _as_matrix(t):
    """``t`` with its leading dimensions flattened: shape (..., n) -> (prod(...), n)."""
    return t if t.ndim == 2 else t.reshape(-1, t.shape[-1])


# -- activations ------------------------------------------------------------------

_SQRT_HALF = 0.7071067811865476  # 1 / sqrt(2)
_INV_SQRT_2PI = 0.3989422804014327  # 1 / sqrt(2 pi)
_TANH_SCALE = 0.7978845608028654  # sqrt(2 / pi)
_TANH_CUBIC = 0.044715


def _normal_cdf(x):
    """Phi(x) = (1 + erf(x / sqrt(2))) / 2, the standard normal CDF, elementwise on an array."""
    cdf = backend.erf(x * _SQRT_HALF)
    cdf += 1.0
    cdf *= 0.5
    return cdf


class GELU(FunctionNode):
    """x * Phi(x) (Phi: the standard normal CDF), or its tanh approximation"""

    def __init__(self, approximate="none"):
        self.approximate = approximate

    def forward(self, x):
        self.retain_inputs((0,))
        if self.approximate == "tanh":
            # Kept for the backward: tanh(sqrt(2/pi) * (x + 0.044715 x^3)).
            self.cached = self.xp.tanh(_TANH_SCALE * (x + _TANH_CUBIC * x * x * x))
            return 0.5 * x * (1.0 + self.cached)
        self.cached = _normal_cdf(x)
        return x * self.cached

    def backward(self, g):
        (x,) = self.saved_inputs
        return g * GELUGrad(self.approximate, self.cached)(x)


class GELUGrad(FunctionNode):
    """d gelu(x) / dx, an op of its own so that gelu has higher-order gradients

    ``cached`` is what GELU's forward kept (Phi(x), or the tanh term), so the
    first-order backward does not evaluate erf or tanh again.
    """

    def __init__(self, approximate="none", cached=None):
        self.approximate = approximate
        self.cached = cached

    def forward(self, x):
        self.retain_inputs((0,))
        xp = self.xp
        if self.approximate == "tanh":
            t = self.cached
            if t is None:
                t = xp.tanh(_TANH_SCALE * (x + _TANH_CUBIC * x * x * x))
            du = _TANH_SCALE * (1.0 + 3.0 * _TANH_CUBIC * x * x)
            return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * du
        cdf = self.cached if self.cached is not None else _normal_cdf(x)
        # Phi(x) + x * pdf(x), in place on one fresh array: on a GELU layer's
        # activations each pass costs about as much as its arithmetic.
        slope = xp.square(x, out=xp.empty_like(x))  # an array also for 0-d x, where x * x is a NumPy scalar
        slope *= -0.5
        xp.exp(slope, out=slope)
        slope *= _INV_SQRT_2PI
        slope *= x
        slope += cdf
        return slope

    def backward(self, gg):
        (x,) = self.saved_inputs
        if self.approximate == "tanh":
            t = (_TANH_SCALE * (x + _TANH_CUBIC * x * x * x)).tanh()
            s = 1.0 - t * t
            du = _TANH_SCALE * (1.0 + 3.0 * _TANH_CUBIC * x * x)
            d2u = (_TANH_SCALE * 6.0 * _TANH_CUBIC) * x
            return gg * (s * du + 0.5 * x * s * (d2u - 2.0 * t * du * du))
        pdf = _INV_SQRT_2PI * (-0.5 * x * x).exp()
        return gg * (pdf * (2.0 - x * x))


# -- softmax ------------------------------------------------------------------------


class _SoftmaxBase(FunctionNode):
    """Softmax and LogSoftmax: the ``axis`` they normalize along, and the input shifted by its max along it."""

    def __init__(self, axis):
        self.axis = axis

    def shifted(self, x):
        """``x - max(x)`` along ``axis`` (an array): its exp is at most 1, so it never overflows."""
        if x.shape[self.axis] == 0:  # nothing to normalize: an empty result, as PyTorch gives
            return x.copy()
        return x - x.max(axis=self.axis, keepdims=True)


class Softmax(_SoftmaxBase):
    """exp(x) / sum(exp(x)) along ``axis``, computed as exp(x - max) to avoid overflow"""

    def forward(self, x):
        self.retain_outputs((0,))
        e = self.xp.exp(self.shifted(x))
        e /= e.sum(axis=self.axis, keepdims=True)
        return e

    def backward(self, g):
        (y,) = self.saved_outputs
        gy = g * y
        return gy - y * gy.sum(self.axis, keepdim=True)


class LogSoftmax(_SoftmaxBase):
    """x - log(sum(exp(x))) along ``axis``, computed with the max subtracted first"""

    def forward(self, x):
        self.retain_outputs((0,))
        xp = self.xp
        z = self.shifted(x)
        if z.size:
            z -= xp.log(xp.exp(z).sum(axis=self.axis, keepdims=True))
        return z

    def backward(self, g):
        (y,) = self.saved_outputs
        return g - y.exp() * g.sum(self.axis, keepdim=True)


# -- losses -------------------------------------------------------------------------


class NLLLoss(FunctionNode):
    """-x[n, target[n], ...] weighted by class, reduced; x of shape (N, C, d1, ...)

    ``target`` (N, d1, ...) integer array and ``weight`` (C,) array or None are
    constants of the op; targets equal to ``ignore_index`` contribute nothing.

    Raises:
        IndexError: a target is outside [0, C) and is not ``ignore_index``.
    """

    def __init__(self, target, weight=None, ignore_index=-100, reduction="mean"):
        self.target = target
        self.weight = weight
        self.ignore_index = ignore_index
        self.reduction = reduction

    def forward(self, x):
        xp = self.xp
        classes = x.shape[1]
        target = self.target
        valid = target != self.ignore_index
        _check_class_range(target, valid, classes, self.ignore_index)
        safe = xp.where(valid, target, 0)
        if self.weight is None:
            coef = valid.astype(x.dtype)
        else:
            coef = xp.where(valid, self.weight.astype(x.dtype, copy=False)[safe], 0).astype(x.dtype)
        picked = xp.take_along_axis(x, safe[:, None], axis=1)[:, 0]
        # Zeroed, not just weighted by 0: an ignored entry gives 0 even where x is -inf.
        losses = -xp.where(valid, picked, 0).astype(x.dtype, copy=False) * coef
        self.safe, self.num_classes = safe, classes
        if self.reduction == "none":
            self.scale = -coef
            return losses
        if self.reduction == "sum":
            self.scale = -coef
            return losses.sum()
        total = coef.sum()
        with np.errstate(invalid="ignore", divide="ignore"):  # all ignored: nan, like PyTorch
            out = losses.sum() / total
        # All targets ignored: PyTorch's gradient is zero, not 0/0.
        self.scale = -coef / xp.where(total == 0, 1, total).astype(x.dtype)
        return out

    def backward(self, g):
        xp = self.xp
        safe = self.safe
        classes = xp.arange(self.num_classes).reshape((1, -1) + (1,) * (safe.ndim - 1))
        dense = (classes == safe[:, None]) * self.scale[:, None]
        if self.reduction == "none":
            g = g.unsqueeze(1)
        return g * dense


def _check_class_range(target, valid, classes, ignore_index) -> None:
    bad = valid & ((target < 0) | (target >= classes))
    if bad.any():
        value = int(target[bad].ravel()[0])
        raise IndexError(
            f"nll_loss: target {value} is out of bounds: expected a class index in [0, {classes - 1}] "
            f"or ignore_index={ignore_index}"
        )


class MSELoss(FunctionNode):
    """(input - target)**2, reduced by mean, sum or not at all ('none'); broadcasting

    Computed in ``dtype`` (the promoted dtype of the two, chosen by
    ``F.mse_loss``); each input's gradient is cast back to its own dtype.
    """

    in_dtypes = (None, None)  # set by forward when the inputs were promoted

    def __init__(self, reduction="mean", dtype=None):
        self.reduction = reduction
        self.dtype = dtype

    def forward(self, x, target):
        self.retain_inputs((0, 1))
        dtype = self.dtype
        if dtype is not None and (x.dtype != dtype or target.dtype != dtype):
            self.in_dtypes = (x.dtype, target.dtype)
            x, target = x.astype(dtype, copy=False), target.astype(dtype, copy=False)
        diff = x - target
        self.diff = diff
        square = diff * diff
        if self.reduction == "none":
            return square
        if self.reduction == "sum":
            return square.sum()
        return square.mean()

    def backward(self, g):
        x, target = self.saved_inputs
        need_x, need_t = self.needs_input_grad
        if _recording():
            dtype = self.dtype
            diff = x - target if dtype is None else x.to(dtype) - target.to(dtype)
        else:
            diff = _constant(self.diff)
        scale = 2.0 / diff.array.size if self.reduction == "mean" else 2.0
        grad = g * (diff * scale)
        dtype_x, dtype_t = self.in_dtypes
        return (
            unbroadcast(grad, shape_of(x), dtype_x) if need_x else None,
            unbroadcast(-grad, shape_of(target), dtype_t) if need_t else None,
        )


# -- normalization ------------------------------------------------------------------


class LayerNorm(FunctionNode):
    """(x - mean) / sqrt(var + eps) * weight + bias over the last ``normalized_ndim`` dims

    Mean and (biased) variance are taken over those dims; weight and bias
    (either may be None) have their shape.
    """

    def __init__(self, normalized_ndim, eps=1e-5):
        self.normalized_ndim = normalized_ndim
        self.eps = eps

    def forward(self, x, weight, bias):
        self.retain_inputs((0, 1))
        self.axes = tuple(range(x.ndim - self.normalized_ndim, x.ndim))
        xp = self.xp
        centered = x - x.mean(axis=self.axes, keepdims=True)
        var = (centered * centered).mean(axis=self.axes, keepdims=True)
        self.rstd = 1.0 / xp.sqrt(var + self.eps)
        self.xhat = centered * self.rstd
        out = self.xhat if weight is None else self.xhat * weight
        if bias is not None:
            out = out + bias
        return out

    def _statistics(self, x):
        """(xhat, rstd): constants, or recomputed from ``x`` with Tensor ops when recording."""
        if not _recording():
            return _constant(self.xhat), _constant(self.rstd)
        centered = x - x.mean(self.axes, keepdim=True)
        rstd = 1.0 / ((centered * centered).mean(self.axes, keepdim=True) + self.eps).sqrt()
        return centered * rstd, rstd

    def backward(self, g):
        x, weight = self.saved_inputs
        need_x, need_w, need_b = self.needs_input_grad
        xhat, rstd = self._statistics(x)
        lead = tuple(range(x.ndim - self.normalized_ndim))
        grad_x = grad_w = grad_b = None
        if need_w:
            grad_w = _sum_over(g * xhat, lead)
        if need_b:
            grad_b = _sum_over(g, lead)
        if need_x:
            gxhat = g if weight is None else g * weight
            axes = self.axes
            grad_x = rstd * (
                gxhat - gxhat.mean(axes, keepdim=True) - xhat * (gxhat * xhat).mean(axes, keepdim=True)
            )
        return grad_x, grad_w, grad_b


def _sum_over(t, axes):
    return t.sum(axes) if axes else t


# -- embedding and dropout ----------------------------------------------------------


class Embedding(FunctionNode):
    """rows of ``weight`` picked by the integer array ``indices``: shape indices.shape + (dim,)

    The row ``padding_idx`` (if not None) gets no gradient.
    """

    def __init__(self, indices, padding_idx=None):
        self.indices = indices
        self.padding_idx = padding_idx

    def forward(self, weight):
        self.weight_shape = weight.shape
        return self.xp.take(weight, self.indices, axis=0)

    def backward(self, g):
        if self.padding_idx is not None:
            g = g * (self.indices != self.padding_idx)[..., None].astype(g.dtype)
        return IndexScatter(self.indices, self.weight_shape)(g)


class Dropout(FunctionNode):
    """x with each element zeroed with probability p, the rest scaled by 1 / (1 - p)

    The mask comes from the random generator of x's device (``backend.generator``).
    """

    def __init__(self, p):
        self.p = p

    def forward(self, x):
        draw_dtype = x.dtype if x.dtype in (np.float32, np.float64) else np.float32
        uniform = backend.generator(backend.device_of(x)).random(x.shape, dtype=draw_dtype)
        mask = (uniform >= self.p).astype(x.dtype)
        if self.p < 1:
            mask *= 1.0 / (1.0 - self.p)
        self.mask = mask
        return x * mask

    def backward(self, g):
        return g * self.mask


# -- convolution --------------------------------------------------------------------
#
# Geometry arguments are tuples: kernel (kh, kw), stride (sh, sw), dilation
# (dh, dw), and pads (top, bottom, left, right) so that padding="same" with an
# even kernel can pad one more row or column at the end, as PyTorch does.
#
# im2col is a copy of a strided view of the zero-padded input that holds the
# patch under every kernel offset (``_windows``): no loop over pixels, and
# none over kernel offsets either. The column matrix comes in two layouts:
#
# * sample-major, (N, C, kh, kw, Ho, Wo): torch's unfold layout; a matmul per
#   sample gives the output in (N, O, Ho, Wo) order directly, but the copy
#   moves runs of only Wo contiguous elements.
# * batch-last, (C, kh, kw, Ho, Wo, N): the input is first transposed to
#   (C, H, W, N), so the copy moves runs of Wo * N elements and the
#   convolution is a single matmul (O, K) @ (K, Ho*Wo*N); the output and its
#   gradient then pay for one transposing copy each.
#
# Short output rows make the sample-major copy slow, large outputs make the
# transposes costly: ``_use_batch_last`` weighs the two. Either way the
# columns are built a chunk at a time (samples, or output rows), each chunk
# small enough to stay in cache while its matmul reads it; the whole matrix,
# often several times the size of the input, never exists at once.


def conv_output_size(size, kernel, stride, pad_total, dilation) -> int:
    """Output length of a convolution along one spatial dimension."""
    return (size + pad_total - dilation * (kernel - 1) - 1) // stride + 1


def _out_size(size, kernel, stride, pads, dilation) -> tuple:
    """(Ho, Wo) of a convolution of an input of spatial ``size`` (H, W)."""
    top, bottom, left, right = pads
    return (conv_output_size(size[0], kernel[0], stride[0], top + bottom, dilation[0]),
            conv_output_size(size[1], kernel[1], stride[1], left + right, dilation[1]))


def _offsets(i, dilation, stride, count):
    """The input positions kernel offset ``i`` meets, as a slice of the padded input."""
    start = i * dilation
    return slice(start, start + stride * (count - 1) + 1, stride)


def _pad_sample_major(xp, x, pads):
    """(N, C, H, W) -> (N, C, top + H + bottom, left + W + right), zeros around x (x itself without padding)."""
    n, c, h, w = x.shape
    top, bottom, left, right = pads
    if not (top or bottom or left or right):
        return x
    padded = xp.zeros((n, c, h + top + bottom, w + left + right), dtype=x.dtype)
    padded[:, :, top : top + h, left : left + w] = x
    return padded


def _pad_batch_last(xp, x, pads):
    """(N, C, H, W) -> (C, top + H + bottom, left + W + right, N): x transposed, zeros around it."""
    n, c, h, w = x.shape
    top, bottom, left, right = pads
    if not (top or bottom or left or right):
        return xp.ascontiguousarray(x.transpose(1, 2, 3, 0))
    padded = xp.zeros((c, h + top + bottom, w + left + right, n), dtype=x.dtype)
    padded[:, top : top + h, left : left + w] = x.transpose(1, 2, 3, 0)
    return padded


def _windows(xp, padded, lead, kernel, stride, dilation, out_size):
    """Every patch of ``padded`` (spatial axes at ``lead`` and ``lead + 1``) as a strided view, no copy.

    Shape ``padded.shape[:lead] + (kh, kw, Ho, Wo) + padded.shape[lead + 2:]``; element
    ``[..., i, j, y, x, ...]`` is ``padded[..., y * sh + i * dh, x * sw + j * dw, ...]``.
    The view's elements overlap: read it, never write to it.
    """
    strides = padded.strides
    row, col = strides[lead], strides[lead + 1]
    shape = padded.shape[:lead] + tuple(kernel) + tuple(out_size) + padded.shape[lead + 2 :]
    steps = (row * dilation[0], col * dilation[1], row * stride[0], col * stride[1])
    return xp.lib.stride_tricks.as_strided(padded, shape, strides[:lead] + steps + strides[lead + 2 :])


def _add_patches(padded, cols, lead, kernel_rows, stride, dilation) -> None:
    """The adjoint of im2col: add ``cols`` (kernel rows ``kernel_rows`` of the windows) into ``padded`` in place.

    ``cols`` has the shape of ``_windows`` with ``len(kernel_rows)`` kernel rows; patches that
    overlap are summed.
    """
    ho, wo = cols.shape[lead + 2 : lead + 4]
    head = (slice(None),) * lead
    for r, i in enumerate(kernel_rows):
        rows = _offsets(i, dilation[0], stride[0], ho)
        for j in range(cols.shape[lead + 1]):
            # The positions of one offset are distinct, so += on the slice is exact.
            padded[head + (rows, _offsets(j, dilation[1], stride[1], wo))] += cols[head + (r, j)]


def _im2col(xp, x, kernel, stride, pads, dilation):
    """(N, C, H, W) -> (N, C, kh, kw, Ho, Wo): the input patch under every kernel offset."""
    out_size = _out_size(x.shape[2:], kernel, stride, pads, dilation)
    return xp.ascontiguousarray(_windows(xp, _pad_sample_major(xp, x, pads), 2, kernel, stride, dilation, out_size))


def _col2im(xp, cols, size, stride, pads, dilation):
    """The adjoint of ``_im2col``: (N, C, kh, kw, Ho, Wo) -> (N, C, H, W), overlaps summed."""
    n, c, kh = cols.shape[:3]
    (h, w), (top, bottom, left, right) = size, pads
    padded = xp.zeros((n, c, h + top + bottom, w + left + right), dtype=cols.dtype)
    _add_patches(padded, cols, 2, range(kh), stride, dilation)
    return padded[:, :, top : top + h, left : left + w]


def _use_batch_last(in_shape, weight_shape, out_size, backward: bool) -> bool:
    """Whether the batch-last layout is the cheaper one for this convolution (see the section comment).

    Measured with NumPy on one core: the sample-major copies cost about one unit per run of Wo
    elements (N*C*kh*kw*Ho runs); the batch-last transposes (input and output, or the output's
    gradient and the input's) about one unit per 4 elements in the forward, per 16 in the
    backward, whose col2im runs are slower still.
    """
    n, c, h, w = in_shape
    o, _, kh, kw = weight_shape
    ho, wo = out_size
    runs = n * c * kh * kw * ho
    return runs * (16 if backward else 4) > n * (o * ho * wo + c * h * w)


# Bytes of columns built at once: chunks of about this size stay in cache between the copy
# that builds them and the matmul that reads them.
_CHUNK_BYTES = 1 << 20


def _chunks(count, unit_bytes):
    """Consecutive ranges covering ``range(count)``, each ``_CHUNK_BYTES`` of ``unit_bytes`` units or one unit."""
    step = max(1, _CHUNK_BYTES // max(1, unit_bytes))
    return [range(start, min(count, start + step)) for start in range(0, count, step)]


class Unfold(FunctionNode):
    """im2col: (N, C, H, W) -> (N, C*kh*kw, L), one column per output position (torch's unfold)"""

    def __init__(self, kernel, stride, pads, dilation):
        self.kernel, self.stride, self.pads, self.dilation = kernel, stride, pads, dilation

    def forward(self, x):
        self.size = x.shape[2:]
        cols = _im2col(self.xp, x, self.kernel, self.stride, self.pads, self.dilation)
        n, c, kh, kw, ho, wo = cols.shape
        return cols.reshape(n, c * kh * kw, ho * wo)

    def backward(self, g):
        return Fold(self.size, self.kernel, self.stride, self.pads, self.dilation)(g)


class Fold(FunctionNode):
    """col2im: (N, C*kh*kw, L) -> (N, C, H, W), overlapping values summed (torch's fold)"""

    def __init__(self, size, kernel, stride, pads, dilation):
        self.size, self.kernel, self.stride, self.pads, self.dilation = size, kernel, stride, pads, dilation

    def forward(self, cols):
        kh, kw = self.kernel
        ho, wo = _out_size(self.size, self.kernel, self.stride, self.pads, self.dilation)
        n, ckk, _ = cols.shape
        cols = cols.reshape(n, ckk // (kh * kw), kh, kw, ho, wo)
        return _col2im(self.xp, cols, self.size, self.stride, self.pads, self.dilation)

    def backward(self, g):
        return Unfold(self.kernel, self.stride, self.pads, self.dilation)(g)


class Conv2d(FunctionNode):
    """2-D cross-correlation: x (N, C, H, W), weight (O, C/groups, kh, kw), bias (O,) or None

    im2col in the layout ``_use_batch_last`` picks, a chunk at a time, each
    chunk multiplied by the weight (one matmul per group; per sample and
    group in the sample-major layout). The column matrix is not kept for the
    backward: the weight's gradient builds it again from the saved input,
    chunk by chunk, which costs less than holding it in memory. The input's
    gradient multiplies the output's by the transposed weight a kernel row
    at a time and adds the columns back (col2im); it is skipped when the
    input needs no gradient.
    """

    def __init__(self, stride, pads, dilation, groups):
        self.stride, self.pads, self.dilation, self.groups = stride, pads, dilation, groups

    def forward(self, x, weight, bias):
        self.retain_inputs((0, 1))
        xp, groups = self.xp, self.groups
        (n, c), (out_channels, _, kh, kw) = x.shape[:2], weight.shape
        ho, wo = _out_size(x.shape[2:], (kh, kw), self.stride, self.pads, self.dilation)
        k = c // groups * kh * kw
        w_groups = weight.reshape(groups, out_channels // groups, k)  # (G, O/G, K)
        out = xp.empty((n, out_channels, ho, wo), dtype=xp.result_type(x.dtype, weight.dtype))
        if _use_batch_last(x.shape, weight.shape, (ho, wo), backward=False):
            windows = _windows(xp, _pad_batch_last(xp, x, self.pads), 1, (kh, kw), self.stride, self.dilation,
                               (ho, wo))  # (C, kh, kw, Ho, Wo, N)
            out_last = out.transpose(1, 2, 3, 0)  # (O, Ho, Wo, N), a view of out
            for rows in _chunks(ho, c * kh * kw * wo * n * x.itemsize):
                size = len(rows) * wo * n
                cols = xp.ascontiguousarray(windows[:, :, :, rows.start : rows.stop]).reshape(groups, k, size)
                prod = xp.matmul(w_groups, cols)  # (G, O/G, rows*Wo*N)
                if bias is not None:
                    prod += bias.reshape(groups, out_channels // groups, 1)
                out_last[:, rows.start : rows.stop] = prod.reshape(out_channels, len(rows), wo, n)
            return out
        windows = _windows(xp, _pad_sample_major(xp, x, self.pads), 2, (kh, kw), self.stride, self.dilation,
                           (ho, wo))  # (N, C, kh, kw, Ho, Wo)
        out_groups = out.reshape(n, groups, out_channels // groups, ho * wo)
        for samples in _chunks(n, c * kh * kw * ho * wo * x.itemsize):
            cols = xp.ascontiguousarray(windows[samples.start : samples.stop])
            cols = cols.reshape(len(samples), groups, k, ho * wo)
            xp.matmul(w_groups, cols, out=out_groups[samples.start : samples.stop])  # (N, G, O/G, L)
        if bias is not None:
            out += bias.reshape(1, out_channels, 1, 1)
        return out

    def backward(self, g):
        x, weight = self.saved_inputs
        if not _recording():
            grads = self._backward_arrays(g.array, x.array, weight.array)
            return tuple(None if grad is None else _constant(grad) for grad in grads)
        # create_graph: Tensor ops, so that the gradients are differentiable (the columns too, through Unfold).
        need_x, need_w, need_b = self.needs_input_grad
        (n, c), groups = x.shape[:2], self.groups
        out_channels, kernel = weight.shape[0], weight.shape[2:]
        size = c // groups * kernel[0] * kernel[1], g.shape[2] * g.shape[3]  # (K, L)
        g_groups = g.reshape(n, groups, out_channels // groups, size[1])  # (N, G, O/G, L)
        grad_x = grad_w = grad_b = None
        if need_x:
            w_groups = weight.reshape(groups, out_channels // groups, size[0])  # (G, O/G, K)
            grad_cols = (w_groups.mT @ g_groups).reshape(n, groups * size[0], size[1])
            grad_x = Fold(x.shape[2:], kernel, self.stride, self.pads, self.dilation)(grad_cols)
        if need_w:
            cols = Unfold(kernel, self.stride, self.pads, self.dilation)(x)
            grad_w = (g_groups @ cols.reshape(n, groups, *size).mT).sum(0).reshape(weight.shape)
        if need_b:
            grad_b = g.sum((0, 2, 3))
        return grad_x, grad_w, grad_b

    def _backward_arrays(self, g, x, weight):
        """The first-order backward on arrays (no graph to record): (grad_x, grad_w, grad_b)."""
        xp, groups, stride, dilation = self.xp, self.groups, self.stride, self.dilation
        need_x, need_w, need_b = self.needs_input_grad
        (n, c, h, w), (out_channels, _, kh, kw) = x.shape, weight.shape
        ho, wo = out_size = g.shape[2:]
        k, o_g = c // groups * kh * kw, out_channels // groups
        batch_last = _use_batch_last(x.shape, weight.shape, out_size, backward=True)
        lead = 1 if batch_last else 2  # axes before the spatial ones: (C,) or (N, C)
        if batch_last:
            pad = _pad_batch_last
            g_mat = xp.ascontiguousarray(g.transpose(1, 2, 3, 0)).reshape(groups, o_g, ho, wo * n)
            g_cols = g_mat.reshape(groups, o_g, ho * wo * n)  # the output's gradient, (G, O/G, Ho*Wo*N)
            row_shape = (c, 1, kw, ho, wo, n)  # one kernel row of the columns
        else:
            pad = _pad_sample_major
            g_mat = g_cols = g.reshape(n, groups, o_g, ho * wo)  # (N, G, O/G, L)
            row_shape = (n, c, 1, kw, ho, wo)
        grad_x = grad_w = grad_b = None
        if need_w:
            grad_w = xp.zeros((groups, o_g, k), dtype=g.dtype)
            windows = _windows(xp, pad(xp, x, self.pads), lead, (kh, kw), stride, dilation, out_size)
            if batch_last:  # chunks of output rows: (C, kh, kw, rows, Wo, N) against (G, O/G, rows*Wo*N)
                for rows in _chunks(ho, c * kh * kw * wo * n * g.itemsize):
                    size = len(rows) * wo * n
                    cols = xp.ascontiguousarray(windows[:, :, :, rows.start : rows.stop]).reshape(groups, k, size)
                    grad_w += xp.matmul(g_mat[:, :, rows.start : rows.stop].reshape(groups, o_g, size), cols.mT)
            else:  # chunks of samples: (samples, C, kh, kw, Ho, Wo) against (samples, G, O/G, L)
                for samples in _chunks(n, c * kh * kw * ho * wo * g.itemsize):
                    cols = xp.ascontiguousarray(windows[samples.start : samples.stop])
                    cols = cols.reshape(len(samples), groups, k, ho * wo)
                    grad_w += xp.matmul(g_mat[samples.start : samples.stop], cols.mT).sum(axis=0)
            grad_w = grad_w.reshape(weight.shape)
        if need_x:
            top, bottom, left, right = self.pads
            spatial = (h + top + bottom, w + left + right)
            grad_padded = xp.zeros((c, *spatial, n) if batch_last else (n, c, *spatial), dtype=g.dtype)
            # Kernel rows a block at a time: (G, C/G*rows*kw, O/G) @ the output's gradient.
            for rows in _chunks(kh, math.prod(row_shape) * g.itemsize):
                w_rows = weight[:, :, rows.start : rows.stop].reshape(groups, o_g, c // groups * len(rows) * kw)
                block_shape = list(row_shape)
                block_shape[lead] = len(rows)
                grad_cols = xp.matmul(w_rows.mT, g_cols).reshape(block_shape)
                _add_patches(grad_padded, grad_cols, lead, rows, stride, dilation)
            inner = grad_padded[(slice(None),) * lead + (slice(top, top + h), slice(left, left + w))]
            if batch_last:
                grad_x = xp.empty((n, c, h, w), dtype=g.dtype)
                grad_x.transpose(1, 2, 3, 0)[...] = inner
            else:
                grad_x = inner
        if need_b:
            grad_b = g_cols.sum(axis=2).reshape(-1) if batch_last else g.sum(axis=(0, 2, 3))
        return grad_x, grad_w, grad_b


OPS = {
    "linear": Linear,
    "gelu": GELU,
    "gelu_grad": GELUGrad,
    "softmax": Softmax,
    "log_softmax": LogSoftmax,
    "nll_loss": NLLLoss,
    "mse_loss": MSELoss,
    "layer_norm": LayerNorm,
    "embedding": Embedding,
    "dropout": Dropout,
    "unfold": Unfold,
    "fold": Fold,
    "conv2d": Conv2d,
}
