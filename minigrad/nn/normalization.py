"""Batch normalization (``F.batch_norm``, ``BatchNorm1d/2d/3d``) and channel-wise dropout (``Dropout1d/2d/3d``).

Names, signatures, defaults and semantics mirror ``torch.nn.functional``
and ``torch.nn``; the functions are re-exported by
``minigrad.nn.functional``. Channel-wise dropout sits here beside batch
normalization as ``minigrad.nn.functional`` groups regularization with
normalization.

Batch normalization keeps PyTorch's bookkeeping: in training mode the
batch's mean and biased variance normalize, and the running statistics
(when given) are updated in place with the *unbiased* variance::

    running_mean = (1 - momentum) * running_mean + momentum * batch_mean
    running_var  = (1 - momentum) * running_var  + momentum * batch_var * n / (n - 1)

where n is the number of values per channel. In evaluation mode the
running statistics normalize. The modules count training batches in
``num_batches_tracked`` (int64) and, with ``momentum=None``, use the
cumulative average (momentum 1 / num_batches_tracked).
"""

from __future__ import annotations

import warnings

import numpy as np

from minigrad import backend, views
from minigrad.grad_mode import no_grad
from minigrad.nn import alpha_dropout as _masks
from minigrad.nn.loss_utils import expect_floating_tensor
from minigrad.nn.module import Module
from minigrad.nn.parameter import Parameter
from minigrad.ops import normalization as ops
from minigrad.promotion import get_default_dtype
from minigrad.tensor import Tensor

__all__ = ["batch_norm", "dropout1d", "dropout2d", "dropout3d", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d",
           "Dropout1d", "Dropout2d", "Dropout3d"]


# -- batch normalization --------------------------------------------------------------------------


def _check_channel_tensor(name: str, t, channels: int, x) -> None:
    if not isinstance(t, Tensor):
        raise TypeError(f"batch_norm(): argument '{name}' must be a Tensor or None, got {type(t).__name__}")
    if t.numel() != channels:
        raise RuntimeError(
            f"batch_norm(): {name} should contain {channels} elements (the channels of input of shape "
            f"{x.shape}), not {t.numel()}"
        )
    if t.dtype != x.dtype:
        raise RuntimeError(
            f"batch_norm(): {name} has dtype {t.dtype} but input has dtype {x.dtype}; all inputs must share "
            "one dtype (convert with .to(dtype))"
        )
    if t.device != x.device:
        raise RuntimeError(f"batch_norm(): {name} is on {t.device} but input is on {x.device}")


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,  # noqa: A002
               momentum=0.1, eps=1e-5):
    """Normalize each channel (dimension 1) of ``input`` by its mean and variance, then scale and shift.

    y = (x - mean) / sqrt(var + eps) * weight + bias, per channel.

    Args:
        input: float Tensor (N, C, *).
        running_mean, running_var: Tensors (C,) or both None. In training
            mode they are updated in place (see the module docstring); in
            evaluation mode they are the statistics used.
        weight, bias: optional Tensors (C,).
        training: use (and record) the batch's statistics.
        momentum: weight of the batch in the running-statistics update.
        eps: added to the variance.

    Returns:
        Tensor of the input's shape.

    Raises:
        TypeError: an argument has the wrong type.
        NotImplementedError: the input is not floating point.
        ValueError: only one of the running statistics is given, a single
            value per channel in training mode, or a non-positive ``eps`` in training.
        RuntimeError: fewer than 2 dimensions, statistics or parameters that
            are not C long or differ in dtype or device, or evaluation mode
            without running statistics.
    """
    fn = "batch_norm"
    expect_floating_tensor(fn, input)
    if input.ndim < 2:
        raise RuntimeError(f"{fn}(): expected an input (N, C, *) of at least 2 dimensions, got shape {input.shape}")
    if not isinstance(momentum, (int, float, np.floating)) or isinstance(momentum, bool):
        raise TypeError(f"{fn}(): momentum must be a float, got {type(momentum).__name__}")
    if not isinstance(eps, (int, float, np.floating)) or isinstance(eps, bool):
        raise TypeError(f"{fn}(): eps must be a float, got {type(eps).__name__}")
    if training:
        values = input.numel() // input.shape[1] if input.shape[1] else 0
        if values == 1:
            raise ValueError(
                f"Expected more than 1 value per channel when training, got input size {input.shape}"
            )
        if (running_mean is None) != (running_var is None):
            raise ValueError(f"{fn}(): running_mean and running_var must either both be None or neither be None")
        if eps <= 0:
            raise ValueError(f"{fn}(): eps must be positive during training, but got {eps}")
    else:
        for name, stat in (("running_mean", running_mean), ("running_var", running_var)):
            if stat is None:
                raise RuntimeError(f"{fn}(): {name} must be defined in evaluation mode")
    channels = input.shape[1]
    for name, t in (("weight", weight), ("bias", bias), ("running_mean", running_mean),
                    ("running_var", running_var)):
        if t is not None:
            _check_channel_tensor(name, t, channels, input)
    if input.numel() == 0:  # nothing to normalize, nothing to learn from
        return input * 1.0
    if not training:
        op = ops.BatchNorm(float(eps), (running_mean.array.reshape(-1), running_var.array.reshape(-1)))
        return op(input, weight, bias)
    op = ops.BatchNorm(float(eps))
    out = op(input, weight, bias)
    if running_mean is not None:
        n = input.numel() // channels
        _update_running(running_mean, op.batch_mean, momentum)
        _update_running(running_var, op.batch_var * (n / (n - 1)), momentum)
    return out


def _update_running(stat: Tensor, batch, momentum) -> None:
    """stat <- (1 - momentum) * stat + momentum * batch, in place (a new version of ``stat``)."""
    data = stat.array
    new = momentum * batch.reshape(data.shape) + (1 - momentum) * data
    data[...] = new
    views.bump_version(stat)


class _BatchNorm(Module):
    """Shared body of ``BatchNorm1d/2d/3d``; subclasses say which input ranks they accept.

    Args:
        num_features: C, the number of channels (dimension 1 of the input).
        eps: added to the variance (default 1e-5).
        momentum: weight of each batch in the running statistics (default
            0.1); None for the cumulative average over all batches seen.
        affine: learn ``weight`` (ones) and ``bias`` (zeros), each (C,).
        track_running_stats: keep ``running_mean`` (zeros), ``running_var``
            (ones) and ``num_batches_tracked`` (int64 0) buffers and use them
            in evaluation mode; without them batch statistics are used in
            both modes.
        bias: with ``affine``, also learn the bias (keyword-only, default True).

    ``state_dict`` keys are PyTorch's: weight, bias, running_mean,
    running_var, num_batches_tracked.

    Raises:
        TypeError: ``num_features`` is not an int (constructor).
        RuntimeError: ``num_features`` is negative (constructor).
        ValueError: the input has the wrong number of dimensions (forward; see also ``batch_norm``).
    """

    _ranks: tuple = ()
    _rank_text = ""

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device=None, dtype=None, *, bias: bool = True):
        super().__init__()
        name = type(self).__name__
        # PyTorch's types: TypeError for a size that is not an int, RuntimeError for a negative one.
        if not isinstance(num_features, (int, np.integer)) or isinstance(num_features, bool):
            raise TypeError(f"{name}: num_features must be an int, got {type(num_features).__name__}")
        if num_features < 0:
            raise RuntimeError(f"{name}: num_features must be non-negative, got {num_features}")
        self.num_features = int(num_features)
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        device = backend.normalize_device(device)
        dtype = get_default_dtype() if dtype is None else np.dtype(dtype)
        xp = backend.module_for_device(device)

        def new(fill, kind=dtype, shape=(self.num_features,)):
            with backend.device_context(device):
                return xp.full(shape, fill, dtype=kind)

        if affine:
            self.weight = Parameter(new(1))
            if bias:
                self.bias = Parameter(new(0))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", Tensor(new(0)))
            self.register_buffer("running_var", Tensor(new(1)))
            self.register_buffer("num_batches_tracked", Tensor(new(0, np.int64, ())))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def reset_running_stats(self) -> None:
        """Running mean to zeros, variance to ones, batch count to 0 (in place)."""
        if self.track_running_stats:
            with no_grad():
                self.running_mean.zero_()
                self.running_var.fill_(1)
                self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        """Reset the running statistics, the weight to ones and the bias to zeros."""
        self.reset_running_stats()
        with no_grad():
            if self.weight is not None:
                self.weight.fill_(1)
            if self.bias is not None:
                self.bias.zero_()

    def _check_input_dim(self, x) -> None:
        if not isinstance(x, Tensor):
            raise TypeError(f"{type(self).__name__}: input must be a Tensor, got {type(x).__name__}")
        if x.ndim not in self._ranks:
            raise ValueError(f"{type(self).__name__}: expected {self._rank_text} input (got {x.ndim}D input)")

    def forward(self, input):  # noqa: A002
        """Normalize ``input`` with batch statistics (training) or running statistics (evaluation)."""
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            counter = self.num_batches_tracked
            counter.array[...] += 1
            views.bump_version(counter)
            if self.momentum is None:  # cumulative moving average
                factor = 1.0 / float(counter.array)
        use_batch = self.training or (self.running_mean is None and self.running_var is None)
        track = not self.training or self.track_running_stats
        return batch_norm(
            input,
            self.running_mean if track else None,
            self.running_var if track else None,
            self.weight, self.bias, use_batch, factor, self.eps,
        )

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """Batch normalization of (N, C) or (N, C, L) inputs over N (and L); see ``_BatchNorm`` for the arguments."""

    _ranks = (2, 3)
    _rank_text = "2D or 3D"


class BatchNorm2d(_BatchNorm):
    """Batch normalization of (N, C, H, W) inputs over N, H and W; see ``_BatchNorm`` for the arguments."""

    _ranks = (4,)
    _rank_text = "4D"


class BatchNorm3d(_BatchNorm):
    """Batch normalization of (N, C, D, H, W) inputs over N, D, H and W; see ``_BatchNorm`` for the arguments."""

    _ranks = (5,)
    _rank_text = "5D"


# -- channel-wise dropout ---------------------------------------------------------------------------


def dropout2d(input, p=0.5, training=True, inplace=False):  # noqa: A002
    """Zero whole channels: each (sample, channel) plane with probability ``p``, the rest scaled by 1 / (1 - p).

    Meant for (N, C, H, W) or (C, H, W) inputs. As in PyTorch, a 3-D input
    is taken as (N, C, L) (channel-wise 1-D dropout) with a warning, and other
    ranks drop entries of the first two dimensions with a deprecation warning.
    The mask comes from the generator of the input's device (``mg.manual_seed``).
    Returns ``input`` itself when not ``training`` or ``p`` is 0; ``inplace``
    writes the result into ``input``. The checks are ``dropout3d``'s.

    Raises:
        TypeError: ``p`` is not a number, ``input`` not a Tensor, ``training`` not a bool.
        ValueError: ``p`` is not in [0, 1].
        RuntimeError: ``p`` is NaN; fewer than 2 dimensions; in training, an input that is not floating point.
    """
    fn = "dropout2d"
    p = _masks.check_probability(fn, p)
    _masks.check_call(fn, input, p, training)
    if input.ndim not in (3, 4):
        warnings.warn(
            f"dropout2d: Received a {input.ndim}-D input to dropout2d, which is deprecated and will result in an "
            "error in a future release. Use dropout instead; dropout2d exists to provide channel-wise dropout "
            "on inputs with 2 spatial dimensions, a channel dimension, and an optional batch dimension "
            "(i.e. 3D or 4D inputs).",
            UserWarning, stacklevel=2,
        )
    if input.ndim == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout behavior is "
            "desired - input is interpreted as shape (N, C, L), where C is the channel dim. Use dropout1d for "
            "that behavior.",
            UserWarning, stacklevel=2,
        )
    if input.ndim < 2:
        raise RuntimeError(f"{fn}(): feature dropout requires at least 2 dimensions in the input, got {input.shape}")
    return _masks.masked_noise(fn, input, p, training, inplace, 2, alpha=False)


def dropout1d(input, p=0.5, training=True, inplace=False):  # noqa: A002
    """Zero whole channels of (N, C, L) or (C, L) inputs, each with probability ``p``; see ``dropout2d``.

    Raises:
        TypeError, ValueError: as ``dropout2d``.
        RuntimeError: ``p`` is NaN; the input is not 2-D or 3-D; in training, not floating point.
    """
    fn = "dropout1d"
    p = _masks.check_probability(fn, p)
    _masks.check_call(fn, input, p, training)
    if input.ndim not in (2, 3):
        raise RuntimeError(f"{fn}(): expected a 2D or 3D input, but received a {input.ndim}D input "
                           f"(shape {input.shape}); dropout1d drops channels of (N, C, L) or (C, L)")
    # (N, C, L): one draw per (sample, channel); (C, L): one per channel
    return _masks.masked_noise(fn, input, p, training, inplace, input.ndim - 1, alpha=False)


class Dropout2d(_masks.DropoutModule):
    """Channel-wise dropout of (N, C, H, W) or (C, H, W) inputs in training mode: see ``dropout2d``.

    ``p`` is checked when built as in ``Dropout3d``.
    """

    def forward(self, input):  # noqa: A002
        """Apply channel-wise dropout (training) or return ``input`` (eval)."""
        return dropout2d(input, self.p, self.training, self.inplace)


class Dropout1d(_masks.DropoutModule):
    """Channel-wise dropout of (N, C, L) or (C, L) inputs in training mode: see ``dropout1d``.

    ``p`` is checked when built as in ``Dropout3d``.
    """

    def forward(self, input):  # noqa: A002
        """Apply channel-wise dropout (training) or return ``input`` (eval)."""
        return dropout1d(input, self.p, self.training, self.inplace)


def dropout3d(input, p=0.5, training=True, inplace=False):  # noqa: A002
    """Zero whole channels of (N, C, D, H, W) or (C, D, H, W) inputs, each with probability ``p``.

    Each (sample, channel) volume is kept (scaled by 1 / (1 - p)) or zeroed
    as a whole. As in PyTorch, an input that is not 5-D is taken as one
    unbatched sample whose first dimension is the channel (a warning is
    given unless it is 4-D). The mask comes from the generator of the
    input's device (``mg.manual_seed``); the gradient goes through the same mask.

    Arguments, result and errors as ``F.alpha_dropout``'s (``p`` is the probability of zeroing a
    channel; ``training`` defaults to True), and RuntimeError for a 0-d input in training with 0 < p < 1.
        NotImplementedError: a complex input in training with 0 < p < 1.
    """
    fn = "dropout3d"
    p = _masks.check_probability(fn, p)
    if isinstance(input, Tensor) and input.ndim not in (4, 5):
        warnings.warn(
            f"dropout3d: Received a {input.ndim}-D input to dropout3d, which is deprecated and will result in an "
            "error in a future release. To retain the behavior and silence this warning, please use dropout "
            "instead. Note that dropout3d exists to provide channel-wise dropout on inputs with 3 spatial "
            "dimensions, a channel dimension, and an optional batch dimension (i.e. 4D or 5D inputs).",
            UserWarning, stacklevel=2,
        )
    _masks.check_call(fn, input, p, training)
    # a 5-D input is (N, C, ...): one draw per (sample, channel); any other is one sample (C, ...)
    mask_dims = 2 if input.ndim == 5 else 1
    return _masks.masked_noise(fn, input, p, training, inplace, mask_dims, alpha=False)


class Dropout3d(_masks.DropoutModule):
    """Channel-wise dropout of (N, C, D, H, W) or (C, D, H, W) inputs in training mode: see ``dropout3d``.

    As in PyTorch, ``p`` is checked when built (TypeError if not a number,
    ValueError outside [0, 1]) except NaN, which ``dropout3d`` refuses when called.
    """

    def forward(self, input):  # noqa: A002
        """Apply channel-wise dropout (training) or return ``input`` (eval)."""
        return dropout3d(input, self.p, self.training, self.inplace)
