"""Per-sample normalizations: group normalization (``F.group_norm``, ``nn.GroupNorm``) and instance
normalization (``F.instance_norm``, ``nn.InstanceNorm1d/2d/3d``).

Both normalize each sample on its own, so the result does not depend on the
batch:

* group norm splits the C channels of a sample into ``num_groups`` groups
  and normalizes each group over its channels and spatial positions: the
  layer-norm op (``minigrad.ops.nn.LayerNorm``) over a (N, groups, rest)
  view, then a per-channel scale and shift;
* instance norm normalizes every channel of every sample over its spatial
  positions (group norm with one channel per group). As in PyTorch it is
  batch normalization of the input viewed as one sample with N * C
  channels (the batch-norm op, ``minigrad.ops.normalization.BatchNorm``),
  so with ``track_running_stats`` the running statistics are the batch-norm
  updates averaged over the samples, and in evaluation mode the running
  statistics normalize.

Names, signatures, defaults (instance norm: ``affine=False``,
``track_running_stats=False``; group norm: ``affine=True``), errors and
state-dict keys mirror PyTorch's.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from minigrad import backend, views
from minigrad._checks import expect_ints
from minigrad.grad_mode import no_grad
from minigrad.nn.loss_utils import expect_floating_tensor
from minigrad.nn.module import Module
from minigrad.nn.normalization import _BatchNorm, batch_norm
from minigrad.nn.parameter import Parameter
from minigrad.ops import nn as nn_ops
from minigrad.promotion import get_default_dtype
from minigrad.tensor import Tensor

__all__ = ["group_norm", "instance_norm", "GroupNorm", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"]


def _check_input(fn: str, input) -> None:  # noqa: A002
    expect_floating_tensor(fn, input)
    if input.ndim < 2:
        raise RuntimeError(f"{fn}(): expected at least 2 dimensions (N, C, *) for input, but got shape {input.shape}")


def _check_channel_vector(fn, name, t, input) -> None:  # noqa: A002
    if not isinstance(t, Tensor):
        raise TypeError(f"{fn}(): argument '{name}' must be a Tensor or None, got {type(t).__name__}")
    if t.ndim != 1 or t.shape[0] != input.shape[1]:
        raise RuntimeError(
            f"{fn}(): expected {name} to be a vector of size equal to the number of channels in input, but got "
            f"{name} of shape {list(t.shape)} and input of shape {list(input.shape)}"
        )
    if t.dtype != input.dtype:
        raise RuntimeError(f"{fn}(): {name} has dtype {t.dtype} but input has dtype {input.dtype}")
    if t.device != input.device:
        raise RuntimeError(f"{fn}(): {name} is on {t.device} but input is on {input.device}")


def _check_eps(fn, eps) -> float:
    if not isinstance(eps, (int, float, np.integer, np.floating)) or isinstance(eps, bool):
        raise TypeError(f"{fn}(): eps must be a number, got {type(eps).__name__}")
    return float(eps)


# -- group norm -------------------------------------------------------------------------------------


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):  # noqa: A002  (PyTorch's names)
    """Normalize each group of channels of each sample, then scale and shift per channel.

    y = (x - mean) / sqrt(var + eps) * weight + bias, the mean and biased
    variance taken over the channels of a group and all spatial positions,
    separately for each sample.

    Args:
        input: float Tensor (N, C, *).
        num_groups: G, dividing C; channels [k * C / G, (k + 1) * C / G) form group k.
        weight, bias: optional Tensors (C,).
        eps: added to the variance.

    Returns:
        Tensor of the input's shape.

    Raises:
        TypeError: wrong argument types.
        NotImplementedError: a non-floating input.
        ValueError: N * C / G times the spatial size is 1 (PyTorch applies batch norm's check to that view).
        RuntimeError: fewer than 2 dimensions, C not divisible by G, or a
            weight/bias that is not a vector of C values of the input's dtype and device.
    """
    fn = "group_norm"
    _check_input(fn, input)
    if not isinstance(num_groups, (int, np.integer)) or isinstance(num_groups, bool):
        raise TypeError(f"{fn}(): num_groups must be an int, got {type(num_groups).__name__}")
    channels = input.shape[1]
    if num_groups <= 0 or channels % num_groups:
        raise RuntimeError(
            "Expected number of channels in input to be divisible by num_groups, but got input of shape "
            f"{list(input.shape)} and num_groups={num_groups}"
        )
    grouped = [input.shape[0] * channels // num_groups, int(num_groups), *input.shape[2:]]
    if grouped[0] * math.prod(grouped[2:]) == 1:  # PyTorch's check (batch norm's on this view), kept for parity
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {grouped}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None:
            _check_channel_vector(fn, name, t, input)
    eps = _check_eps(fn, eps)
    n = input.shape[0]
    if input.numel() == 0:
        out = input * 1.0
    else:
        grouped = input.reshape(n, int(num_groups), input.numel() // (n * int(num_groups)))
        out = nn_ops.LayerNorm(1, eps)(grouped, None, None).reshape(input.shape)
    channel_shape = (1, channels) + (1,) * (input.ndim - 2)
    if weight is not None:
        out = out * weight.reshape(channel_shape)
    if bias is not None:
        out = out + bias.reshape(channel_shape)
    return out


class GroupNorm(Module):
    """Group normalization of (N, C, *) inputs (see ``F.group_norm``).

    Args:
        num_groups: G, dividing ``num_channels``.
        num_channels: C.
        eps: added to the variance (default 1e-5).
        affine: learn ``weight`` (ones) and ``bias`` (zeros), each (C,) (default True).
        bias: with ``affine``, also learn the bias (default True).

    Raises:
        ValueError: ``num_channels`` not divisible by ``num_groups``.
        RuntimeError: negative ``num_channels``.
    """

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True,
                 bias: bool = True, device=None, dtype=None):
        super().__init__()
        expect_ints("GroupNorm", num_groups=num_groups, num_channels=num_channels)
        if num_channels < 0:
            raise RuntimeError(f"GroupNorm: num_channels must be non-negative, got {num_channels}")
        if num_groups <= 0 or num_channels % num_groups:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups ({num_groups})")
        self.num_groups, self.num_channels = int(num_groups), int(num_channels)
        self.eps = eps
        self.affine = affine
        device = backend.normalize_device(device)
        dtype = get_default_dtype() if dtype is None else np.dtype(dtype)
        xp = backend.module_for_device(device)

        def new(fill):
            with backend.device_context(device):
                return Parameter(xp.full((self.num_channels,), fill, dtype=dtype))

        if affine:
            self.weight = new(1)
        else:
            self.register_parameter("weight", None)
        if affine and bias:
            self.bias = new(0)
        else:
            self.register_parameter("bias", None)

    def reset_parameters(self) -> None:
        """Weight to ones, bias to zeros (in place)."""
        with no_grad():
            if self.weight is not None:
                self.weight.fill_(1)
            if self.bias is not None:
                self.bias.zero_()

    def forward(self, input):  # noqa: A002
        """Normalize ``input`` (N, C, *)."""
        return group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


# -- instance norm ----------------------------------------------------------------------------------


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,  # noqa: A002
                  use_input_stats=True, momentum=0.1, eps=1e-5):
    """Normalize each channel of each sample over its spatial positions, then scale and shift per channel.

    Args:
        input: float Tensor (N, C, *spatial).
        running_mean, running_var: optional Tensors (C,). With
            ``use_input_stats`` they are updated in place, like batch norm's,
            with the samples' statistics averaged over the batch (unbiased
            variance); without it they are the statistics used.
        weight, bias: optional Tensors (C,).
        use_input_stats: normalize by each instance's own mean and variance (default True).
        momentum: weight of the new statistics in the running update.
        eps: added to the variance.

    Returns:
        Tensor of the input's shape.

    Raises:
        TypeError, NotImplementedError: as ``group_norm`` (wrong argument types, a non-floating input).
        ValueError: one spatial element per channel with ``use_input_stats`` (a
            1-D input has one, as in PyTorch).
        RuntimeError: no running statistics without ``use_input_stats``;
            statistics or parameters that are not C long or differ in dtype or device.
        IndexError: fewer than 2 dimensions without ``use_input_stats`` (PyTorch's type).
    """
    fn = "instance_norm"
    expect_floating_tensor(fn, input)
    # PyTorch's order of checks, so that each bad input raises its type.
    if use_input_stats and math.prod(input.shape[2:]) == 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size {input.shape}")
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError("Expected running_mean and running_var to be defined when use_input_stats is false")
    if input.ndim < 2:
        raise IndexError(f"{fn}(): expected at least 2 dimensions (N, C, *) for input, but got shape {input.shape}")
    for name, t in (("weight", weight), ("bias", bias), ("running_mean", running_mean), ("running_var", running_var)):
        if t is not None:
            _check_channel_vector(fn, name, t, input)
    n, channels = input.shape[:2]
    stacked = input.reshape(1, n * channels, *input.shape[2:])
    weight = None if weight is None else weight.repeat(n)
    bias = None if bias is None else bias.repeat(n)
    stats = [None if s is None else Tensor(s.array.reshape(1, channels).repeat(n, axis=0).reshape(-1))
             for s in (running_mean, running_var)]
    out = batch_norm(stacked, stats[0], stats[1], weight, bias, bool(use_input_stats), momentum, eps)
    if use_input_stats and n > 0:
        for running, updated in zip((running_mean, running_var), stats):
            if running is not None and updated is not None:
                running.array[...] = updated.array.reshape(n, channels).mean(axis=0)
                views.bump_version(running)
    return out.reshape(input.shape)


class _InstanceNorm(_BatchNorm):
    """Shared body of ``InstanceNorm1d/2d/3d``: the parameters and buffers of batch norm, other defaults.

    Args:
        num_features: C.
        eps: added to the variance (default 1e-5).
        momentum: weight of each batch in the running statistics (default 0.1; None means 0).
        affine: learn ``weight`` (ones) and ``bias`` (zeros) (default False).
        track_running_stats: keep ``running_mean``, ``running_var`` and
            ``num_batches_tracked`` buffers, update them in training and
            normalize with them in evaluation mode (default False).

    Raises:
        ValueError: an input of the wrong rank; with ``affine``, a channel
            count other than ``num_features`` (without it, a warning).
    """

    _spatial = 1

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = False,
                 track_running_stats: bool = False, device=None, dtype=None, *, bias: bool = True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)

    def forward(self, input):  # noqa: A002
        """Normalize ``input`` (N, C, *spatial) or, unbatched, (C, *spatial)."""
        unbatched = self._spatial + 1
        if not isinstance(input, Tensor):
            raise TypeError(f"{type(self).__name__}: input must be a Tensor, got {type(input).__name__}")
        if input.ndim not in (unbatched, unbatched + 1):
            raise ValueError(f"expected {unbatched}D or {unbatched + 1}D input (got {input.ndim}D input)")
        feature_dim = input.ndim - unbatched
        if input.shape[feature_dim] != self.num_features:
            if self.affine:
                raise ValueError(
                    f"expected input's size at dim={feature_dim} to match num_features ({self.num_features}), "
                    f"but got: {input.shape[feature_dim]}."
                )
            warnings.warn(
                f"input's size at dim={feature_dim} does not match num_features. You can silence this warning by "
                "not passing in num_features, which is not used because affine=False",
                UserWarning, stacklevel=2,
            )
        x = input.unsqueeze(0) if input.ndim == unbatched else input
        out = instance_norm(
            x, self.running_mean, self.running_var, self.weight, self.bias,
            self.training or not self.track_running_stats,
            0.0 if self.momentum is None else self.momentum, self.eps,
        )
        return out.squeeze(0) if input.ndim == unbatched else out


class InstanceNorm1d(_InstanceNorm):
    """Instance normalization of (N, C, L) or (C, L) inputs; see ``_InstanceNorm`` for the arguments."""

    _spatial = 1


class InstanceNorm2d(_InstanceNorm):
    """Instance normalization of (N, C, H, W) or (C, H, W) inputs; see ``_InstanceNorm`` for the arguments."""

    _spatial = 2


class InstanceNorm3d(_InstanceNorm):
    """Instance normalization of (N, C, D, H, W) or (C, D, H, W) inputs; see ``_InstanceNorm`` for the arguments."""

    _spatial = 3
