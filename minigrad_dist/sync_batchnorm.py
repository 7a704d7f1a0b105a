"""``SyncBatchNorm``: batch normalization whose statistics span every rank of a process group.

Each rank holds a shard of the global batch. In training mode:

1. **Forward**: every rank computes, per channel, its count, mean and sum of
   squared deviations (M2), and one ``all_gather`` brings every rank's
   triple to every rank (in float64). The triples combine into the global
   mean and biased variance with Chan's parallel formula (stable even when
   the mean is large against the spread, unlike sums of squares), and the
   shard is normalized with them. The running statistics are updated with
   the global mean and the global *unbiased* variance, identically on every
   rank.
2. **Backward**: the input gradient needs two per-channel sums over the
   whole batch, ``sum(dy)`` and ``sum(dy * xhat)``: one ``all_reduce`` of
   both. The weight and bias gradients stay local sums over the shard, as
   in PyTorch (``DistributedDataParallel`` averages them like any other
   parameter gradient).

So N ranks each normalizing their shard produce the outputs and input
gradients of one ``BatchNorm`` over the full batch, and the sum over ranks
of their weight gradients is the full batch's. In evaluation mode (or
when the group has one rank, or no process group exists) it is exactly
``BatchNorm``, without communication.

Warning:
    Every rank of the group must run the forward (and the backward) of each
    ``SyncBatchNorm`` layer in the same order: each is a collective. A rank
    may hold an empty shard (zero rows); it still takes part.
"""

from __future__ import annotations

import numpy as np

from minigrad import backend, views
from minigrad.function import FunctionNode
from minigrad.grad_mode import _state as _grad_state
from minigrad.nn.normalization import _BatchNorm
from minigrad.tensor import Tensor
from minigrad_dist import collectives

__all__ = ["SyncBatchNorm"]


def _constant(array) -> Tensor:
    return Tensor._make(array, False, None, 0)


def _group_statistics(x, group):
    """Step 1: the global (mean, biased var, count) per channel of ``x`` (N, C, *) over every rank of ``group``.

    Each rank sends its (count, mean, M2) per channel in one ``all_gather``
    (float64), and every rank combines them the same way (``_combine``).
    """
    xp = backend.get_array_module(x)
    channels = x.shape[1]
    axes = (0,) + tuple(range(2, x.ndim))
    local = x.size // channels if channels else 0
    mine = xp.zeros(1 + 2 * channels, dtype=np.float64)
    if local:
        mean = x.mean(axis=axes, dtype=np.float64)
        mine[0] = local
        mine[1 : 1 + channels] = mean
        mine[1 + channels :] = xp.square(x - mean.reshape((1, channels) + (1,) * (x.ndim - 2))).sum(axis=axes)
    everyone = [xp.empty_like(mine) for _ in range(collectives.get_world_size(group))]
    collectives.all_gather(everyone, mine, group=group)
    return _combine(xp, everyone, channels)


class _SyncBatchNormOp(FunctionNode):
    """(x - mean) / sqrt(var + eps) * weight + bias per channel, with the group's ``mean`` and ``var`` (step 1).

    ``count`` is the number of values per channel over the whole group, which
    the backward's means divide by.
    """

    def __init__(self, eps: float, group, mean, var, count: int):
        self.eps = eps
        self.group = group
        self.mean, self.var, self.count = mean, var, count

    def forward(self, x, weight, bias):
        self.retain_inputs((1,))
        xp = self.xp
        self.axes = (0,) + tuple(range(2, x.ndim))
        self.channel_shape = (1, x.shape[1]) + (1,) * (x.ndim - 2)
        rstd = (1.0 / xp.sqrt(self.var + self.eps)).astype(x.dtype).reshape(self.channel_shape)
        self.rstd = rstd
        self.xhat = (x - self.mean.astype(x.dtype).reshape(self.channel_shape)) * rstd
        out = self.xhat * weight.reshape(self.channel_shape) if weight is not None else self.xhat.copy()
        if bias is not None:
            out += bias.reshape(self.channel_shape)
        return out

    def backward(self, g):
        if _grad_state.enabled:
            raise RuntimeError(
                "SyncBatchNorm does not support double backward (create_graph=True): its backward communicates "
                "with the other ranks; use BatchNorm for higher-order gradients"
            )
        (weight,) = self.saved_inputs
        xp, xhat, g = self.xp, self.xhat, g.array
        need_x, need_w, need_b = self.needs_input_grad
        sum_g = g.sum(axis=self.axes)
        sum_gx = (g * xhat).sum(axis=self.axes)
        grad_x = None
        if need_x:
            channels = sum_g.shape[0]
            totals = xp.concatenate([sum_g, sum_gx]).astype(np.float64)
            collectives.all_reduce(totals, group=self.group)
            mean_g = (totals[:channels] / self.count).astype(g.dtype).reshape(self.channel_shape)
            mean_gx = (totals[channels:] / self.count).astype(g.dtype).reshape(self.channel_shape)
            scale = self.rstd if weight is None else self.rstd * weight.array.reshape(self.channel_shape)
            grad_x = _constant(scale * (g - mean_g - xhat * mean_gx))
        return (
            grad_x,
            _constant(sum_gx) if need_w else None,
            _constant(sum_g) if need_b else None,
        )


def _combine(xp, triples, channels):
    """Global (mean, biased var, count) per channel from every rank's (count, mean, M2) (Chan et al.)."""
    stacked = xp.stack(triples)
    counts = stacked[:, 0]
    total = float(counts.sum())
    if total == 0:
        return xp.zeros(channels), xp.zeros(channels), 0
    means = stacked[:, 1 : 1 + channels]
    m2 = stacked[:, 1 + channels :]
    mean = (counts[:, None] * means).sum(axis=0) / total
    spread = m2.sum(axis=0) + (counts[:, None] * xp.square(means - mean)).sum(axis=0)
    return mean, spread / total, int(total)


class SyncBatchNorm(_BatchNorm):
    """Batch normalization over the batch of every rank of ``process_group`` (PyTorch's ``nn.SyncBatchNorm``).

    Takes inputs (N, C, *) of any rank >= 2; see the module docstring for
    what is synchronized and when.

    Args:
        num_features, eps, momentum, affine, track_running_stats, device,
            dtype, bias: as ``BatchNorm1d`` (momentum None: cumulative average).
        process_group: the group whose ranks share statistics (default: the world).

    Raises:
        ValueError: (forward) an input with fewer than 2 dimensions or no
            channels, or a single value per channel over the whole group in training.
        RuntimeError: (backward) ``create_graph=True``.
    """

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, process_group=None, device=None, dtype=None, *,
                 bias: bool = True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, x) -> None:
        if not isinstance(x, Tensor):
            raise TypeError(f"SyncBatchNorm: input must be a Tensor, got {type(x).__name__}")
        if x.ndim < 2:
            raise ValueError(f"expected at least 2D input (got {x.ndim}D input)")
        if x.shape[1] == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")

    def forward(self, input):  # noqa: A002
        """Normalize ``input`` with statistics over the group's whole batch (training) or running statistics."""
        self._check_input_dim(input)
        if not self._syncs():
            return super().forward(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.track_running_stats and self.num_batches_tracked is not None:
            counter = self.num_batches_tracked
            counter.array[...] += 1
            views.bump_version(counter)
            if self.momentum is None:
                factor = 1.0 / float(counter.array)
        if input.dtype.kind != "f":
            raise NotImplementedError(f"SyncBatchNorm: not implemented for dtype {input.dtype} (floating point only)")
        mean, var, count = _group_statistics(input.array, self.process_group)
        if count <= 1:  # PyTorch's check and class (ValueError), on every rank alike
            raise ValueError(
                f"Expected more than 1 value per channel when training, got input size {tuple(input.shape)} "
                f"({count} value(s) per channel over the whole group)"
            )
        out = _SyncBatchNormOp(float(self.eps), self.process_group, mean, var, count)(input, self.weight, self.bias)
        if self.track_running_stats:
            _update_running(self.running_mean, mean, factor)
            _update_running(self.running_var, var * (count / (count - 1)), factor)
        return out

    def _syncs(self) -> bool:
        """Training with batch statistics inside a process group of more than one rank."""
        if not self.training or not collectives.is_initialized():
            return False
        if self.process_group is collectives.NON_GROUP_MEMBER:
            raise RuntimeError("SyncBatchNorm: this rank is not a member of its process_group")
        return collectives.get_world_size(self.process_group) > 1

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """Replace every ``BatchNorm1d/2d/3d`` in ``module`` by a ``SyncBatchNorm`` sharing its state.

        The new layers share the old ones' parameters and buffers (the same
        Tensor objects) and training mode. Returns the converted module
        (a new object when ``module`` itself is a batch norm layer).
        """
        converted = module
        if isinstance(module, _BatchNorm):
            converted = cls(module.num_features, module.eps, module.momentum, module.affine,
                            module.track_running_stats, process_group, bias=module.bias is not None)
            for name in ("weight", "bias", "running_mean", "running_var", "num_batches_tracked"):
                setattr(converted, name, getattr(module, name))
            converted.training = module.training
        for name, child in module.named_children():
            converted.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return converted


def _update_running(stat: Tensor, batch, momentum) -> None:
    """stat <- (1 - momentum) * stat + momentum * batch, in place (a new version of ``stat``)."""
    data = stat.array
    data[...] = momentum * backend.get_array_module(data).asarray(batch, dtype=np.float64).astype(data.dtype) + (
        1 - momentum
    ) * data
    views.bump_version(stat)
