"""Batch normalization as one op, forward beside backward.

Arguments are validated by ``minigrad.nn.normalization.batch_norm``; the op
assumes valid input. The channel dimension is 1; the statistics are taken
over every other dimension (the batch and the spatial ones).

In training mode the backward needs the normalized input and the inverse
standard deviation of the forward. A first-order backward uses them as
constants; when the backward is itself recorded (``create_graph``) they are
recomputed from the saved input with Tensor ops, so that they are
differentiable too (as in ``minigrad.ops.nn.LayerNorm``).
"""

from __future__ import annotations

from minigrad.function import FunctionNode
from minigrad.grad_mode import _state as _grad_state
from minigrad.tensor import Tensor


def _constant(array) -> Tensor:
    """``array`` as a Tensor outside any graph."""
    return Tensor._make(array, False, None, 0)


class BatchNorm(FunctionNode):
    """(x - mean) / sqrt(var + eps) * weight + bias per channel of x (N, C, *)

    Training mode (``running`` is None): mean and biased variance of the
    batch, over every dimension but 1; they are kept in ``batch_mean`` and
    ``batch_var`` (arrays of shape (C,)) for the caller's running-statistics
    update. Evaluation mode: ``running`` is the pair of arrays (mean, var),
    each (C,), used as constants. ``weight`` and ``bias`` are (C,) or None.
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
            mean = x.mean(axis=self.axes, keepdims=True, dtype=xp.float32 if x.dtype == xp.float16 else None)
            xhat = x - mean.astype(x.dtype, copy=False)
            var = xp.square(xhat).mean(axis=self.axes, keepdims=True, dtype=mean.dtype)
            self.batch_mean, self.batch_var = mean.reshape(-1), var.reshape(-1)
            var = var.astype(x.dtype, copy=False)
        else:
            mean, var = (a.reshape(self.channel_shape) for a in self.running)
            xhat = x - mean
        self.rstd = 1.0 / xp.sqrt(var + self.eps)
        xhat *= self.rstd  # in place: the centered array is ours
        self.xhat = xhat
        out = xhat * weight.reshape(self.channel_shape) if weight is not None else xhat.copy()
        if bias is not None:
            out += bias.reshape(self.channel_shape)
        return out

    def _statistics(self, x):
        """(xhat, rstd): constants, or recomputed from ``x`` with Tensor ops when recording."""
        if not _grad_state.enabled:
            return _constant(self.xhat), _constant(self.rstd)
        if self.running is None:
            centered = x - x.mean(self.axes, keepdim=True)
            rstd = 1.0 / ((centered * centered).mean(self.axes, keepdim=True) + self.eps).sqrt()
        else:
            rstd = _constant(self.rstd)
            centered = x - _constant(self.running[0].reshape(self.channel_shape))
        return centered * rstd, rstd

    def backward(self, g):
        x, weight = self.saved_inputs
        if not _grad_state.enabled:
            return self._backward_arrays(g.data, None if weight is None else weight.data)
        need_x, need_w, need_b = self.needs_input_grad
        xhat, rstd = self._statistics(x)
        axes, channels = self.axes, self.channel_shape
        training = self.running is None
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

    def _backward_arrays(self, g, weight):
        """The first-order backward above on arrays, in place where it can (no graph to record)."""
        xp, xhat, axes = self.xp, self.xhat, self.axes
        need_x, need_w, need_b = self.needs_input_grad
        training = self.running is None
        sum_g = g.sum(axis=axes, keepdims=True) if need_b or (need_x and training) else None
        sum_gx = None
        if need_w or (need_x and training):
            n, c = xhat.shape[:2]
            sum_gx = xp.einsum("ncl,ncl->c", g.reshape(n, c, -1), xhat.reshape(n, c, -1)).reshape(self.channel_shape)
        grad_x = None
        if need_x:
            scale = self.rstd if weight is None else self.rstd * weight.reshape(self.channel_shape)
            if training:
                count = xhat.size // xhat.shape[1]
                grad_x = xhat * (sum_gx / count)
                xp.subtract(g, grad_x, out=grad_x)
                grad_x -= sum_g / count
                grad_x *= scale
            else:
                grad_x = g * scale
        return (
            None if grad_x is None else _constant(grad_x),
            _constant(sum_gx.reshape(-1)) if need_w else None,
            _constant(sum_g.reshape(-1)) if need_b else None,
        )


OPS = {
    "batch_norm": BatchNorm,
}
