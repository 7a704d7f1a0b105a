"""Batch normalization as one op, forward beside backward.

Arguments are validated by ``minigrad.nn.normalization.batch_norm``; the op
assumes valid input (a non-empty x). The channel dimension is 1; the
statistics are taken over every other dimension (the batch and the spatial
ones).

The op keeps the input and the per-channel statistics (mean and inverse
standard deviation), not the normalized input: a first-order backward
centers the input again, in a buffer it then reuses for the input's
gradient, which costs one pass over the data and saves holding a copy of the
activations until the backward. When the backward is itself recorded
(``create_graph``) the statistics are recomputed from the saved input with
Tensor ops, so that they are differentiable too (as in
``minigrad.ops.nn.LayerNorm``).

Per-channel sums are einsum contractions over a (N, C, L) view: one pass,
without the temporaries of a reduction over several axes.
"""

from __future__ import annotations

from minigrad.function import FunctionNode
from minigrad.grad_mode import _state as _grad_state
from minigrad.tensor import Tensor


def _constant(array) -> Tensor:
    """``array`` as a Tensor outside any graph."""
    return Tensor._make(array, False, None, 0)


def _channel_sum(xp, a, b=None, dtype=None):
    """Per-channel sum of ``a`` (or of ``a * b``), both (N, C, ...): an array (C,) of ``dtype``.

    ``dtype`` (default: a's) is the accumulation type; float16 arrays are summed in float32.
    """
    n, c = a.shape[:2]
    a = a.reshape(n, c, -1)
    if dtype is not None and a.dtype != dtype:
        a = a.astype(dtype)
        b = None if b is None else b.astype(dtype)
    if b is None:
        return xp.einsum("ncl->c", a)
    return xp.einsum("ncl,ncl->c", a, b.reshape(n, c, -1))


class BatchNorm(FunctionNode):
    """(x - mean) / sqrt(var + eps) * weight + bias per channel of x (N, C, *)

    Training mode (``running`` is None): mean and biased variance of the
    batch, over every dimension but 1; they are kept in ``batch_mean`` and
    ``batch_var`` (arrays of shape (C,), float32 for a float16 x) for the
    caller's running-statistics update. Evaluation mode: ``running`` is the
    pair of arrays (mean, var), each (C,), used as constants. ``weight`` and
    ``bias`` are (C,) or None.
    """

    def __init__(self, eps, running=None):
        self.eps = eps
        self.running = running

    def forward(self, x, weight, bias):
        self.retain_inputs((0, 1))
        xp = self.xp
        self.axes = (0,) + tuple(range(2, x.ndim))
        self.channel_shape = (1, x.shape[1]) + (1,) * (x.ndim - 2)
        if self.running is None:
            # float16 statistics are accumulated in float32, as PyTorch does.
            count = x.size // x.shape[1]
            acc = xp.float32 if x.dtype == xp.float16 else x.dtype
            mean = _channel_sum(xp, x, dtype=acc) / count
            centered = x - mean.astype(x.dtype, copy=False).reshape(self.channel_shape)
            var = _channel_sum(xp, centered, centered, dtype=acc) / count
            self.batch_mean, self.batch_var = mean, var
        else:
            mean, var = self.running
            centered = x - mean.reshape(self.channel_shape)
        self.mean = mean.astype(x.dtype, copy=False)
        self.rstd = (1.0 / xp.sqrt(var + self.eps)).astype(x.dtype, copy=False)  # (C,)
        scale = self.rstd if weight is None else self.rstd * weight
        centered *= scale.reshape(self.channel_shape)  # in place: the centered array is ours
        if bias is not None:
            centered += bias.reshape(self.channel_shape)
        return centered

    def backward(self, g):
        x, weight = self.saved_inputs
        if not _grad_state.enabled:
            return self._backward_arrays(g.array, x.array, None if weight is None else weight.array)
        need_x, need_w, need_b = self.needs_input_grad
        axes, channels = self.axes, self.channel_shape
        training = self.running is None
        if training:
            centered = x - x.mean(axes, keepdim=True)
            rstd = 1.0 / ((centered * centered).mean(axes, keepdim=True) + self.eps).sqrt()
        else:
            rstd = _constant(self.rstd.reshape(channels))
            centered = x - _constant(self.running[0].reshape(channels))
        xhat = centered * rstd
        sum_g = g.sum(axes, keepdim=True) if need_b or (need_x and training) else None
        sum_gx = (g * xhat).sum(axes, keepdim=True) if need_w or (need_x and training) else None
        grad_x = None
        if need_x:
            scale = rstd if weight is None else rstd * weight.reshape(channels)
            if training:
                # d/dx of the normalized batch: the batch mean and variance depend on x too.
                count = xhat.numel() // xhat.shape[1]
                grad_x = scale * (g - sum_g / count - xhat * (sum_gx / count))
            else:  # the statistics are constants: an affine map of x
                grad_x = g * scale
        return (grad_x, sum_gx.reshape(-1) if need_w else None, sum_g.reshape(-1) if need_b else None)

    def _backward_arrays(self, g, x, weight):
        """The first-order backward above on arrays, in place where it can (no graph to record).

        With xc = x - mean and s = rstd * weight per channel, the training gradient is
        ``s * (g - sum(g) / n) - xc * (s * rstd**2 * sum(g * xc) / n)``.
        """
        xp, rstd, shape = self.xp, self.rstd, self.channel_shape
        need_x, need_w, need_b = self.needs_input_grad
        training = self.running is None
        scale = rstd if weight is None else rstd * weight
        acc = xp.float32 if x.dtype == xp.float16 else None
        sum_g = _channel_sum(xp, g, dtype=acc) if need_b or (need_x and training) else None
        centered = sum_gx = None
        if need_w or (need_x and training):
            centered = x - self.mean.reshape(shape)
            sum_gx = _channel_sum(xp, g, centered, dtype=acc) * rstd  # sum(g * xhat)
        grad_x = None
        if need_x:
            if training:
                count = x.size // x.shape[1]
                grad_x = centered  # reused: the gradient is written over the centered input
                grad_x *= (-(scale * rstd) * (sum_gx / count)).astype(x.dtype, copy=False).reshape(shape)
                grad_x -= (scale * (sum_g / count)).astype(x.dtype, copy=False).reshape(shape)
                grad_x += g * scale.reshape(shape)
            else:
                grad_x = g * scale.reshape(shape)
        cast = x.dtype
        return (
            None if grad_x is None else _constant(grad_x),
            _constant(sum_gx.astype(cast, copy=False)) if need_w else None,
            _constant(sum_g.astype(cast, copy=False)) if need_b else None,
        )


OPS = {
    "batch_norm": BatchNorm,
}
