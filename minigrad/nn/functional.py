"""The functional neural-network API, ``import minigrad.nn.functional as F``.

Names, signatures, defaults and semantics mirror ``torch.nn.functional``.
These functions validate their arguments (errors name the function, the
argument, what was expected and what was given) and apply the ops of
``minigrad.ops.nn``.

Where PyTorch takes deprecated positional arguments (``size_average``,
``reduce``, ``_stacklevel``) minigrad has none, so the arguments that follow
them in PyTorch are keyword-only here: a call that relies on PyTorch's
positions fails loudly instead of binding the wrong parameter.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from minigrad import backend
from minigrad.ops import elementwise
from minigrad.ops import nn as ops
from minigrad.promotion import promote_types
from minigrad.tensor import Tensor

__all__ = [
    "linear", "conv2d", "unfold", "fold", "relu", "gelu", "tanh", "sigmoid", "softmax", "log_softmax",
    "nll_loss", "cross_entropy", "mse_loss", "dropout", "layer_norm", "embedding",
]
# Re-exported from the modules that define them (the imports at the end of this file).
__all__ += [
    "elu", "hardtanh", "leaky_relu", "relu6", "silu", "softmin", "scaled_dot_product_attention",
    "embedding_bag", "batch_norm", "dropout1d", "dropout2d", "adaptive_avg_pool1d", "adaptive_avg_pool2d",
    "adaptive_max_pool1d", "adaptive_max_pool2d", "avg_pool1d", "avg_pool2d", "max_pool1d", "max_pool2d",
]

_REDUCTIONS = ("none", "mean", "sum")


# -- argument checks --------------------------------------------------------------


def _expect_tensor(fn: str, name: str, value) -> None:
    if not isinstance(value, Tensor):
        raise TypeError(f"{fn}(): argument '{name}' must be a Tensor, got {type(value).__name__}")


def _expect_float(fn: str, name: str, t: Tensor) -> None:
    """PyTorch's NotImplementedError (its kernels have no integer version) unless ``t`` is floating point."""
    if t.dtype.kind != "f":
        raise NotImplementedError(
            f"{fn}(): not implemented for dtype {t.dtype}: argument '{name}' must be a floating point tensor"
        )


def _expect_same(fn: str, t: Tensor, name: str, other: Tensor, other_name: str) -> None:
    """``t`` and ``other`` share dtype and device (PyTorch does not promote here either); RuntimeError if not."""
    if t.dtype != other.dtype:
        raise RuntimeError(
            f"{fn}(): '{name}' has dtype {t.dtype} but '{other_name}' has dtype {other.dtype}; "
            "they must match (convert one with .to(dtype))"
        )
    if t.device != other.device:
        raise RuntimeError(
            f"{fn}(): '{name}' is on {t.device} but '{other_name}' is on {other.device}; "
            "they must be on the same device"
        )


def _expect_same_device(fn: str, t: Tensor, name: str, other: Tensor, other_name: str) -> None:
    if t.device != other.device:
        raise RuntimeError(
            f"{fn}(): '{name}' is on {t.device} but '{other_name}' is on {other.device}; "
            "they must be on the same device"
        )


def _expect_reduction(fn: str, reduction) -> None:
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{fn}(): reduction must be one of 'none', 'mean', 'sum', got {reduction!r}")


def _is_int(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def _pair(fn: str, name: str, value, minimum: int) -> tuple:
    """An int or a pair of ints as a pair, each at least ``minimum``."""
    pair = (value, value) if isinstance(value, (int, np.integer)) else value
    if not isinstance(pair, (tuple, list)) or not all(map(_is_int, pair)):
        raise TypeError(f"{fn}(): {name} must be an int or a pair of ints, got {value!r}")
    if len(pair) != 2:  # PyTorch's kernels check the length: RuntimeError
        raise RuntimeError(f"{fn}(): {name} must be an int or a pair of ints, got {len(pair)} values: {value!r}")
    if min(pair) < minimum:  # PyTorch's type for an out-of-range window argument
        raise RuntimeError(f"{fn}(): {name} must be at least {minimum}, got {value!r}")
    return int(pair[0]), int(pair[1])


# -- linear and convolution ----------------------------------------------------------


def linear(input, weight, bias=None):  # noqa: A002  (PyTorch's names)
    """Affine map ``input @ weight.T + bias``.

    Args:
        input: Tensor of shape (..., in_features).
        weight: Tensor of shape (out_features, in_features).
        bias: optional Tensor of shape (out_features,).

    Returns:
        Tensor of shape (..., out_features).

    Raises:
        TypeError: an argument is not a Tensor.
        RuntimeError (PyTorch's type): the shapes do not fit (names them), or the dtypes differ.
    """
    _expect_tensor("linear", "input", input)
    _expect_tensor("linear", "weight", weight)
    if weight.ndim != 2:
        raise RuntimeError(f"linear(): weight must be 2-D (out_features, in_features), got {weight.shape}")
    if input.ndim == 0 or input.shape[-1] != weight.shape[1]:
        raise RuntimeError(
            f"linear(): input of shape {input.shape} does not end in {weight.shape[1]} features, "
            f"as weight of shape {weight.shape} expects"
        )
    _expect_same("linear", input, "input", weight, "weight")
    if bias is not None:
        _expect_tensor("linear", "bias", bias)
        if bias.shape != (weight.shape[0],):
            raise RuntimeError(f"linear(): bias must have shape ({weight.shape[0]},), got {bias.shape}")
        _expect_same("linear", input, "input", bias, "bias")
    return ops.Linear()(input, weight, bias)


def _conv_padding(fn, padding, kernel, stride, dilation) -> tuple:
    """``padding`` (int, pair, 'valid' or 'same') as (top, bottom, left, right)."""
    if isinstance(padding, str):
        if padding == "valid":
            return (0, 0, 0, 0)
        if padding != "same":
            raise RuntimeError(f"{fn}(): padding must be 'valid', 'same', an int or a pair, got {padding!r}")
        if stride != (1, 1):
            raise RuntimeError(f"{fn}(): padding='same' is not supported for strided convolutions ({stride=})")
        pads = []
        for k, d in zip(kernel, dilation):
            total = d * (k - 1)
            pads += [total // 2, total - total // 2]  # the odd one out goes at the end, like PyTorch
        return tuple(pads)
    ph, pw = _pair(fn, "padding", padding, 0)
    return (ph, ph, pw, pw)


def _check_output_size(fn, size, kernel, stride, pads, dilation) -> tuple:
    (h, w), (kh, kw) = size, kernel
    ho = ops.conv_output_size(h, kh, stride[0], pads[0] + pads[1], dilation[0])
    wo = ops.conv_output_size(w, kw, stride[1], pads[2] + pads[3], dilation[1])
    if ho < 1 or wo < 1:
        raise RuntimeError(
            f"{fn}(): the padded input is {h + pads[0] + pads[1]}x{w + pads[2] + pads[3]} but the "
            f"dilated kernel is {dilation[0] * (kh - 1) + 1}x{dilation[1] * (kw - 1) + 1}; "
            "the kernel can't be larger than the input"
        )
    return ho, wo


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):  # noqa: A002
    """2-D convolution (cross-correlation, like PyTorch) over an image batch.

    Args:
        input: Tensor (N, C, H, W), or (C, H, W) for a single image.
        weight: Tensor (O, C / groups, kh, kw).
        bias: optional Tensor (O,).
        stride, dilation: int or (h, w) pair, at least 1.
        padding: int or (h, w) pair of zeros added on both sides, or 'valid'
            (none) or 'same' (output size = input size; stride must be 1).
        groups: split input and output channels into this many groups
            convolved separately.

    Returns:
        Tensor (N, O, Ho, Wo) (or (O, Ho, Wo)), Ho = (H + 2 ph - dh (kh - 1) - 1) // sh + 1.

    Raises:
        TypeError: an argument has the wrong type.
        RuntimeError (PyTorch's type): dtypes that differ, wrong numbers of dimensions, channel
            counts or a bias that do not fit (names both), a kernel larger than the padded input, a stride or
            dilation below 1, negative padding, groups below 1, padding='same' with a stride,
            or a weight with a kernel of size 0.
    """
    fn = "conv2d"
    _expect_tensor(fn, "input", input)
    _expect_tensor(fn, "weight", weight)
    if input.ndim not in (3, 4):
        raise RuntimeError(f"conv2d(): expected a 3-D (C, H, W) or 4-D (N, C, H, W) input, got {input.shape}")
    if weight.ndim != 4:
        raise RuntimeError(f"conv2d(): weight must be 4-D (out, in / groups, kh, kw), got shape {weight.shape}")
    _expect_same(fn, input, "input", weight, "weight")
    if not _is_int(groups):
        raise TypeError(f"conv2d(): groups must be a positive int, got {groups!r}")
    if groups < 1:
        raise RuntimeError(f"conv2d(): groups must be a positive int, got {groups!r}")
    channels, out_channels = input.shape[-3], weight.shape[0]
    if channels != weight.shape[1] * groups:
        raise RuntimeError(
            f"conv2d(): input has {channels} channels (shape {input.shape}) but weight of shape "
            f"{weight.shape} with groups={groups} expects {weight.shape[1] * groups}"
        )
    if out_channels % groups:
        raise RuntimeError(f"conv2d(): {out_channels} output channels are not divisible by groups={groups}")
    if bias is not None:
        _expect_tensor(fn, "bias", bias)
        if bias.shape != (out_channels,):
            raise RuntimeError(f"conv2d(): bias must have shape ({out_channels},), got {bias.shape}")
        _expect_same(fn, input, "input", bias, "bias")
    kernel = weight.shape[2:]
    if min(kernel) < 1:  # else a kernel of no elements gives an output of zeros (PyTorch's type and words)
        raise RuntimeError(
            f"conv2d(): kernel size should be greater than zero, but got kernel_height: {kernel[0]} "
            f"kernel_width: {kernel[1]} (weight of shape {weight.shape})"
        )
    stride = _pair(fn, "stride", stride, 1)
    dilation = _pair(fn, "dilation", dilation, 1)
    pads = _conv_padding(fn, padding, kernel, stride, dilation)
    _check_output_size(fn, input.shape[-2:], kernel, stride, pads, dilation)
    op = ops.Conv2d(stride, pads, dilation, int(groups))
    if input.ndim == 3:
        return op(input.unsqueeze(0), weight, bias).squeeze(0)
    return op(input, weight, bias)


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):  # noqa: A002
    """Extract sliding local blocks (im2col): (N, C, H, W) -> (N, C * kh * kw, L).

    Column ``l`` holds the input patch under the kernel at output position
    ``l`` (row-major over the Ho x Wo positions), channels outermost, as in
    ``torch.nn.functional.unfold``. A 3-D input (C, H, W) gives (C * kh * kw, L).

    Raises:
        IndexError (PyTorch's type): fewer than 3 dimensions.
        RuntimeError (PyTorch's type): more than 4 dimensions, a kernel larger than the padded
            input, a kernel size, stride or dilation below 1, or negative padding.
    """
    fn = "unfold"
    _expect_tensor(fn, "input", input)
    if input.ndim not in (3, 4):
        kind = IndexError if input.ndim < 3 else RuntimeError  # PyTorch's types for too few and too many
        raise kind(f"unfold(): expected a 3-D or 4-D input, got shape {input.shape}")
    kernel, dilation, stride, pads = _window(fn, kernel_size, dilation, stride, padding)
    _check_output_size(fn, input.shape[-2:], kernel, stride, pads, dilation)
    op = ops.Unfold(kernel, stride, pads, dilation)
    if input.ndim == 3:
        return op(input.unsqueeze(0)).squeeze(0)
    return op(input)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):  # noqa: A002
    """Combine sliding local blocks into an image (col2im), summing overlaps: the adjoint of ``unfold``.

    Args:
        input: Tensor (N, C * kh * kw, L) (or (C * kh * kw, L)).
        output_size: (H, W) of the image.

    Returns:
        Tensor (N, C, H, W) (or (C, H, W)).

    Raises:
        RuntimeError (PyTorch's type): not 2-D or 3-D, input dimension 1 not a multiple of
            kh * kw, L not the number of kernel positions in the output (names both), an output
            size, kernel size, stride or dilation below 1, or negative padding.
    """
    fn = "fold"
    _expect_tensor(fn, "input", input)
    if input.ndim not in (2, 3):
        raise RuntimeError(f"fold(): expected a 2-D or 3-D input, got shape {input.shape}")
    size = _pair(fn, "output_size", output_size, 1)
    kernel, dilation, stride, pads = _window(fn, kernel_size, dilation, stride, padding)
    ho, wo = _check_output_size(fn, size, kernel, stride, pads, dilation)
    rows, blocks = input.shape[-2:]
    if rows % (kernel[0] * kernel[1]):
        raise RuntimeError(
            f"fold(): input dimension {input.ndim - 2} ({rows}) must be a multiple of kh * kw = "
            f"{kernel[0] * kernel[1]}"
        )
    if blocks != ho * wo:
        raise RuntimeError(
            f"fold(): input has {blocks} blocks (last dimension of shape {input.shape}) but "
            f"output_size {size} with this kernel, stride, padding and dilation gives {ho} x {wo} = {ho * wo}"
        )
    op = ops.Fold(size, kernel, stride, pads, dilation)
    if input.ndim == 2:
        return op(input.unsqueeze(0)).squeeze(0)
    return op(input)


def _window(fn: str, kernel_size, dilation, stride, padding):
    """The sliding window of ``unfold``/``fold`` as pairs: kernel, dilation, stride, and the padding
    as ``(top, bottom, left, right)``; TypeError or RuntimeError naming ``fn`` and the argument (``_pair``)."""
    kernel = _pair(fn, "kernel_size", kernel_size, 1)
    dilation = _pair(fn, "dilation", dilation, 1)
    stride = _pair(fn, "stride", stride, 1)
    ph, pw = _pair(fn, "padding", padding, 0)
    return kernel, dilation, stride, (ph, ph, pw, pw)


# -- activations ------------------------------------------------------------------------


def relu(input, inplace=False):  # noqa: A002
    """Elementwise max(input, 0) (gradient 0 at 0).

    ``inplace=True`` overwrites ``input`` and returns it, as ``relu_`` (recorded for autograd).

    Raises:
        TypeError: ``input`` is not a Tensor.
        RuntimeError: ``inplace`` on a leaf that requires grad (in grad mode).
    """
    if inplace:
        return relu_(input)
    _expect_tensor("relu", "input", input)
    return elementwise.ReLU()(input)


def gelu(input, approximate="none"):  # noqa: A002
    """Gaussian error linear unit: input * Phi(input), Phi the standard normal CDF.

    Args:
        approximate: 'none' (exact, with erf) or 'tanh'
            (0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))).

    Raises:
        RuntimeError (PyTorch's type): ``approximate`` is neither 'none' nor 'tanh'.
        NotImplementedError: the input is not floating point.
    """
    _expect_tensor("gelu", "input", input)
    if approximate not in ("none", "tanh"):
        raise RuntimeError(f"gelu(): approximate must be 'none' or 'tanh', got {approximate!r}")
    _expect_float("gelu", "input", input)
    return ops.GELU(approximate)(input)


def tanh(input):  # noqa: A002
    """Elementwise hyperbolic tangent."""
    _expect_tensor("tanh", "input", input)
    return elementwise.Tanh()(input)


def sigmoid(input):  # noqa: A002
    """Elementwise logistic function 1 / (1 + exp(-input))."""
    _expect_tensor("sigmoid", "input", input)
    return elementwise.Sigmoid()(input)


# -- softmax ------------------------------------------------------------------------------


def _softmax_args(fn, x, dim, dtype):
    """(x cast to dtype, non-negative dim), choosing PyTorch's legacy dim when dim is None."""
    _expect_tensor(fn, "input", x)
    if dtype is not None:
        x = x.to(dtype=dtype)  # by keyword: a bad dtype is a TypeError, not taken for a device
    _expect_float(fn, "input", x)
    ndim = x.ndim
    if dim is None:
        dim = 0 if ndim in (0, 1, 3) else 1
        warnings.warn(
            f"Implicit dimension choice for {fn} has been deprecated. Change the call to include "
            f"dim=X as an argument (using dim={dim}).",
            UserWarning,
            stacklevel=3,
        )
    if not isinstance(dim, (int, np.integer)) or isinstance(dim, bool):
        raise TypeError(f"{fn}(): dim must be an int, got {dim!r}")
    if not -max(ndim, 1) <= dim < max(ndim, 1):
        raise IndexError(f"{fn}(): dim {dim} is out of range for a tensor of shape {x.shape}")
    return x, int(dim) % max(ndim, 1)


def softmax(input, dim=None, *, dtype=None):  # noqa: A002
    """exp(x) / sum(exp(x)) along ``dim``; stable for huge inputs (the max is subtracted first).

    Args:
        dim: the dimension that sums to 1. Omitting it picks PyTorch's legacy
            choice (0 for 0-, 1- and 3-D inputs, else 1) with a warning.
        dtype: cast the input to this dtype first.

    Raises:
        NotImplementedError: the input is not floating point (PyTorch's type).
        TypeError: ``dim`` is not an int.
        IndexError: ``dim`` is out of range.
    """
    x, dim = _softmax_args("softmax", input, dim, dtype)
    if x.ndim == 0:
        return ops.Softmax(0)(x.reshape(1)).reshape(())
    return ops.Softmax(dim)(x)


def log_softmax(input, dim=None, *, dtype=None):  # noqa: A002
    """log(softmax(x)) along ``dim``, computed as x - max - log(sum(exp(x - max))).

    Arguments and errors as in ``softmax``.
    """
    x, dim = _softmax_args("log_softmax", input, dim, dtype)
    if x.ndim == 0:
        return ops.LogSoftmax(0)(x.reshape(1)).reshape(())
    return ops.LogSoftmax(dim)(x)


# -- losses ---------------------------------------------------------------------------------


# PyTorch's classification losses take class indices of these dtypes only.
_CLASS_INDEX_DTYPES = (np.dtype(np.int64), np.dtype(np.uint8))


def _class_targets(fn, x, target, weight):
    """Validate (input ``x``, integer target, weight) of a classification loss.

    Returns (target array, weight array or None), with the target of a 1-D
    (unbatched) input already given a batch dimension.
    """
    _expect_tensor(fn, "input", x)
    _expect_float(fn, "input", x)
    if x.ndim == 0:
        raise ValueError(f"{fn}(): input must have a class dimension, got a 0-d tensor")
    target_data = target.array if isinstance(target, Tensor) else target
    if not backend.is_array(target_data):
        raise TypeError(f"{fn}(): target must be an integer Tensor of class indices, "
                        f"got {type(target).__name__}")
    if target_data.dtype not in _CLASS_INDEX_DTYPES:
        raise RuntimeError(
            f"{fn}(): target must be an integer tensor of class indices (int64, or uint8 as PyTorch "
            f"also accepts), got dtype {target_data.dtype}"
        )
    target_device = backend.device_of(target_data)
    if target_device != x.device:
        raise RuntimeError(f"{fn}(): target is on {target_device} but input is on {x.device}")
    expected = x.shape[:1] + x.shape[2:] if x.ndim > 1 else ()
    if target_data.shape != expected:
        raise ValueError(
            f"{fn}(): target of shape {target_data.shape} does not match input of shape {x.shape}: "
            f"expected target shape {expected} (the input without its class dimension)"
        )
    weight_data = None
    if weight is not None:
        _expect_tensor(fn, "weight", weight)
        classes = x.shape[1] if x.ndim > 1 else x.shape[0]
        if weight.shape != (classes,):
            raise RuntimeError(f"{fn}(): weight must be of shape ({classes},) (per class), got {weight.shape}")
        if weight.device != x.device:
            raise RuntimeError(f"{fn}(): weight is on {weight.device} but input is on {x.device}")
        if weight.dtype != x.dtype:  # PyTorch does not promote the class weights either
            raise RuntimeError(
                f"{fn}(): weight has dtype {weight.dtype} but input has dtype {x.dtype}; "
                "they must match (convert one with .to(dtype))"
            )
        weight_data = weight.array
    if x.ndim == 1:
        target_data = target_data.reshape(1)
    return target_data, weight_data


def nll_loss(input, target, weight=None, *, ignore_index=-100, reduction="mean"):  # noqa: A002
    """Negative log-likelihood loss: -input[n, target[n]] * weight[target[n]], reduced.

    Args:
        input: log-probabilities (N, C), (N, C, d1, ...), or (C,) for one sample.
        target: integer class indices (N,), (N, d1, ...), or () for a (C,) input.
        weight: optional per-class weights (C,). They are constants: no
            gradient flows to ``weight`` (PyTorch raises if one is asked for).
        ignore_index: targets equal to it contribute neither loss nor weight.
        reduction: 'mean' (sum divided by the total weight of the non-ignored
            targets; NaN when all are ignored, like PyTorch), 'sum' or 'none'
            (per-sample losses of the target's shape).

    Raises:
        TypeError: the target is not a tensor.
        RuntimeError (PyTorch's type): the target is not an int64 (or uint8) tensor, or
            ``weight`` is not (C,) or has another dtype than the input.
        NotImplementedError (PyTorch's type): the input is not floating point.
        ValueError: target and input shapes do not fit (names both), bad ``reduction``.
        IndexError: a target is neither in [0, C) nor ``ignore_index`` (names it).
    """
    _expect_reduction("nll_loss", reduction)
    target_data, weight_data = _class_targets("nll_loss", input, target, weight)
    if input.ndim == 1:
        loss = ops.NLLLoss(target_data, weight_data, ignore_index, reduction)(input.unsqueeze(0))
        return loss.reshape(()) if reduction == "none" else loss
    return ops.NLLLoss(target_data, weight_data, ignore_index, reduction)(input)


def cross_entropy(input, target, weight=None, *, ignore_index=-100, reduction="mean",  # noqa: A002
                  label_smoothing=0.0):
    """Cross-entropy between softmax(input) over the class dimension and the target.

    ``log_softmax`` followed by ``nll_loss`` for class-index targets.

    Args:
        input: unnormalized logits (N, C), (N, C, d1, ...), or (C,).
        target: either integer class indices of the input's shape without the
            class dimension (see ``nll_loss``), or class probabilities, a float
            tensor of the input's shape (differentiable). Probabilities of
            another float dtype promote with the input (float32 logits with
            float64 probabilities give a float64 loss, as in PyTorch).
        weight: optional per-class weights (C,), constants (see ``nll_loss``).
            With class indices they must have the input's dtype; with
            probabilities they take part in promotion.
        ignore_index: for class-index targets only.
        reduction: 'mean', 'sum' or 'none' as in ``nll_loss``; with
            probability targets 'mean' divides by the number of samples N * d1 * ...
        label_smoothing: in [0, 1]: the target becomes a mixture of itself
            (weight 1 - label_smoothing) and the uniform distribution, exactly
            as in PyTorch.

    Raises:
        TypeError: the target is not a tensor, or ``label_smoothing`` is not a number.
        RuntimeError (PyTorch's type): the target is neither an int64 (or uint8) tensor nor
            a float tensor of the input's shape, class weights that are not (C,) or (with
            class indices) of another dtype, ``label_smoothing`` outside [0, 1], or
            ``ignore_index`` given with probability targets.
        NotImplementedError (PyTorch's type): the input is not floating point.
        ValueError: target and input shapes do not fit, or a bad ``reduction``.
        IndexError: a class index is out of range.
    """
    fn = "cross_entropy"
    _expect_tensor(fn, "input", input)
    _expect_reduction(fn, reduction)
    if not isinstance(label_smoothing, (int, float, np.integer, np.floating)):
        raise TypeError(f"cross_entropy(): label_smoothing must be a float, got {type(label_smoothing).__name__}")
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"cross_entropy(): label_smoothing must be in [0.0, 1.0], got {label_smoothing!r}")
    class_dim = 0 if input.ndim == 1 else 1
    # As in PyTorch, a target of the input's shape holds probabilities, any other class indices.
    if isinstance(target, Tensor) and (target.shape == input.shape or target.dtype.kind == "f"):
        if target.shape != input.shape or target.dtype.kind != "f":
            raise RuntimeError(
                f"cross_entropy(): target of dtype {target.dtype} and shape {target.shape} is neither class "
                f"indices (an int64 tensor of the input's shape without the class dimension) nor class "
                f"probabilities (a float tensor of the input's shape {input.shape})"
            )
        return _cross_entropy_probabilities(input, target, weight, ignore_index, reduction, label_smoothing)
    _class_targets(fn, input, target, weight)  # fail on bad targets before computing anything
    log_probs = log_softmax(input, class_dim)
    loss = nll_loss(log_probs, target, weight, ignore_index=ignore_index, reduction=reduction)
    if label_smoothing == 0.0:
        return loss
    target_data, weight_data = _class_targets(fn, input, target, weight)
    smooth = _smoothing_term(log_probs, target_data, weight_data, ignore_index, reduction, class_dim)
    return (1.0 - label_smoothing) * loss + smooth * (label_smoothing / input.shape[class_dim])


def _smoothing_term(log_probs, target, weight, ignore_index, reduction, class_dim):
    """PyTorch's label-smoothing loss: -sum_c weight_c * log_probs_c per sample, reduced."""
    xp = backend.get_array_module(log_probs.array)
    dtype = log_probs.dtype
    if weight is not None:
        shape = [1] * log_probs.ndim
        shape[class_dim] = -1
        log_probs = log_probs * weight.astype(dtype, copy=False).reshape(shape)
    per_sample = -log_probs.sum(class_dim)
    valid = target != ignore_index  # shape (N, d1, ...): a 1-D input's target has a batch dim
    per_sample = elementwise.where(valid.reshape(per_sample.shape), per_sample, 0.0)
    if reduction == "none":
        return per_sample
    if reduction == "sum":
        return per_sample.sum()
    if weight is None:
        total = valid.sum(dtype=dtype)
    else:
        picked = weight.astype(dtype, copy=False)[xp.where(valid, target, 0)]
        total = xp.where(valid, picked, 0).sum(dtype=dtype)
    return per_sample.sum() / xp.asarray(total, dtype=dtype)


def _cross_entropy_probabilities(x, target, weight, ignore_index, reduction, label_smoothing):
    """Cross-entropy of logits ``x`` against class probabilities ``target`` (PyTorch's formula)."""
    fn = "cross_entropy"
    _expect_float(fn, "input", x)
    _expect_same_device(fn, x, "input", target, "target")
    if ignore_index >= 0:
        raise RuntimeError("cross_entropy(): ignore_index is not supported with class-probability targets")
    class_dim = 0 if x.ndim == 1 else 1
    classes = x.shape[class_dim]
    log_probs = log_softmax(x, class_dim)
    if label_smoothing > 0.0:
        target = target * (1.0 - label_smoothing) + label_smoothing / classes
    product = log_probs * target
    if weight is not None:
        _expect_tensor(fn, "weight", weight)
        if weight.shape != (classes,):
            raise RuntimeError(f"cross_entropy(): weight must have shape ({classes},), got {weight.shape}")
        _expect_same_device(fn, x, "input", weight, "weight")
        shape = [1] * x.ndim
        shape[class_dim] = classes
        product = product * weight.detach().reshape(shape)  # a constant, promoted like any operand
    if reduction == "none":
        return -product.sum(class_dim)
    if reduction == "sum":
        return -product.sum()
    samples = x.numel() // classes if classes else 0
    return -product.sum() / (samples if samples else math.nan)


def mse_loss(input, target, *, reduction="mean"):  # noqa: A002
    """Mean squared error (input - target)**2, reduced by 'mean', 'sum' or 'none'.

    Both input and target are differentiable. Shapes that differ are
    broadcast, with a warning, as PyTorch does. Dtypes that differ are
    promoted as two tensors of the broadcast shape are (``promote_types``):
    a float32 input with an int64 target gives a float32 loss, with a float64
    target (even a 0-d one) a float64 loss; each gradient has its input's dtype.

    Raises:
        TypeError: an argument is not a Tensor.
        NotImplementedError (PyTorch's type): the promoted dtype is not floating point.
        ValueError: bad ``reduction``.
        RuntimeError: shapes that do not broadcast (names both), or input and target on
            different devices.
    """
    fn = "mse_loss"
    _expect_tensor(fn, "input", input)
    _expect_tensor(fn, "target", target)
    _expect_reduction(fn, reduction)
    _expect_same_device(fn, input, "input", target, "target")
    dtype = promote_types(input.dtype, target.dtype)
    if dtype.kind != "f":
        raise NotImplementedError(
            f"mse_loss(): input of dtype {input.dtype} and target of dtype {target.dtype} promote to "
            f"{dtype}; the loss needs a floating point dtype (convert one with .to(dtype))"
        )
    if input.shape != target.shape:
        try:
            np.broadcast_shapes(input.shape, target.shape)
        except ValueError:  # NumPy's; PyTorch's type for shapes that do not broadcast is RuntimeError
            raise RuntimeError(
                f"mse_loss(): input of shape {input.shape} and target of shape {target.shape} "
                "cannot be broadcast together"
            ) from None
        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size ({input.shape}). "
            "This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size.",
            UserWarning,
            stacklevel=2,
        )
    return ops.MSELoss(reduction, dtype)(input, target)


# -- regularization, normalization, embedding ----------------------------------------------


def dropout(input, p=0.5, training=True, inplace=False):  # noqa: A002
    """Zero each element with probability ``p`` and scale the others by 1 / (1 - p).

    The mask is drawn from the generator of the input's device, so
    ``mg.manual_seed`` makes it reproducible (the draws differ from PyTorch's).
    Returns ``input`` itself when ``training`` is False or ``p`` is 0; zeros
    when ``p`` is 1. ``inplace=True`` writes the result into ``input`` and
    returns it (recorded for autograd).

    Raises:
        TypeError: ``p`` is not a number.
        ValueError: ``p`` is not in [0, 1].
        RuntimeError (PyTorch's type): dropout in training of an input that is not floating point;
            ``inplace`` in training with p > 0 on a leaf that requires grad (in grad mode).
    """
    _expect_tensor("dropout", "input", input)
    if not isinstance(p, (int, float, np.integer, np.floating)):
        raise TypeError(f"dropout(): dropout probability must be a number, got {type(p).__name__}")
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout(): dropout probability has to be between 0 and 1, but got {p!r}")
    if not training or p == 0:
        return input
    if input.dtype.kind != "f":  # the scaled result can't be stored in the input's dtype
        raise RuntimeError(f"dropout(): input must be floating point, got dtype {input.dtype}")
    if inplace:
        return _in_place("dropout_", input, ops.Dropout(float(p)))
    return ops.Dropout(float(p))(input)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):  # noqa: A002
    """Normalize over the trailing ``normalized_shape`` dims, then scale by ``weight``, shift by ``bias``.

    y = (x - mean) / sqrt(var + eps) * weight + bias, with the mean and the
    biased variance taken over the last ``len(normalized_shape)`` dimensions.

    Args:
        input: Tensor (*, *normalized_shape).
        normalized_shape: int or tuple of ints.
        weight, bias: optional Tensors of shape ``normalized_shape``.

    Raises:
        TypeError: ``normalized_shape`` is not an int or a tuple of ints, or ``eps`` is not a number.
        NotImplementedError (PyTorch's type): the input is not floating point.
        RuntimeError (PyTorch's type): the input does not end in ``normalized_shape``, or
            weight/bias have another shape or dtype (names both).
    """
    fn = "layer_norm"
    _expect_tensor(fn, "input", input)
    if _is_int(normalized_shape):
        shape = (normalized_shape,)
    elif isinstance(normalized_shape, (tuple, list)) and all(_is_int(n) for n in normalized_shape):
        shape = tuple(normalized_shape)
    else:
        raise TypeError(
            f"layer_norm(): normalized_shape must be an int or a tuple of ints, got {normalized_shape!r:.60}"
        )
    shape = tuple(int(n) for n in shape)
    if not shape or input.ndim < len(shape) or input.shape[input.ndim - len(shape):] != shape:
        raise RuntimeError(
            f"layer_norm(): normalized_shape {shape} must be a non-empty suffix of the input's shape "
            f"{input.shape} (expected input of shape (*, {', '.join(map(str, shape))}))"
        )
    for name, param in (("weight", weight), ("bias", bias)):
        if param is not None:
            _expect_tensor(fn, name, param)
            if param.shape != shape:
                raise RuntimeError(
                    f"layer_norm(): {name} must have shape {shape} (normalized_shape), got {param.shape}"
                )
            _expect_same(fn, input, "input", param, name)
    _expect_float(fn, "input", input)  # after the parameters' dtypes, as in PyTorch
    if not isinstance(eps, (int, float, np.floating)) or isinstance(eps, bool):
        raise TypeError(f"layer_norm(): eps must be a number, got {type(eps).__name__}")
    return ops.LayerNorm(len(shape), float(eps))(input, weight, bias)


def embedding(input, weight, padding_idx=None):  # noqa: A002
    """Look up rows of ``weight`` (num_embeddings, dim) at the integer indices ``input``.

    Returns a Tensor of shape input.shape + (dim,). The gradient of a row is
    the sum of the gradients of its lookups; the row ``padding_idx`` (negative
    counts from the end) gets none. PyTorch's max_norm, scale_grad_by_freq and
    sparse options are not provided.

    Raises:
        TypeError: the indices are not a tensor, or ``padding_idx`` is not an int.
        RuntimeError (PyTorch's type): the indices are not int64 or int32, or ``weight`` is not 2-D.
        AssertionError (PyTorch's type): ``padding_idx`` is out of range.
        IndexError: an index is out of range (names it).
    """
    fn = "embedding"
    _expect_tensor(fn, "weight", weight)
    indices = input.array if isinstance(input, Tensor) else input
    if not backend.is_array(indices):
        raise TypeError(f"embedding(): input must be an integer tensor of indices, got {type(input).__name__}")
    if indices.dtype not in (np.int64, np.int32):  # PyTorch's index dtypes
        raise RuntimeError(
            f"embedding(): input must be an integer tensor of indices (int64 or int32), got {indices.dtype}"
        )
    if weight.ndim != 2:
        raise RuntimeError(f"embedding(): weight must be 2-D (num_embeddings, dim), got shape {weight.shape}")
    indices_device = backend.device_of(indices)
    if indices_device != weight.device:
        raise RuntimeError(f"embedding(): input is on {indices_device} but weight is on {weight.device}")
    count = weight.shape[0]
    if padding_idx is not None:
        if not _is_int(padding_idx):
            raise TypeError(
                f"embedding(): padding_idx must be an int or None, got {type(padding_idx).__name__}"
            )
        if not -count <= padding_idx < count:
            raise AssertionError(f"embedding(): padding_idx {padding_idx} must be within num_embeddings {count}")
        padding_idx = int(padding_idx) % count
    if indices.size:
        low, high = int(indices.min()), int(indices.max())
        if low < 0 or high >= count:
            raise IndexError(
                f"embedding(): index {low if low < 0 else high} is out of range for {count} embeddings "
                f"(weight shape {weight.shape})"
            )
    return ops.Embedding(indices, padding_idx)(weight)

from minigrad.nn.activation import elu, hardtanh, leaky_relu, relu6, silu, softmin  # noqa: E402, F401
from minigrad.nn.attention import scaled_dot_product_attention  # noqa: E402, F401  (attention builds on F)
from minigrad.nn.channel_activations import glu, prelu  # noqa: E402, F401
from minigrad.nn.conv import conv1d, conv3d, conv_transpose1d, conv_transpose2d, conv_transpose3d  # noqa: E402, F401
from minigrad.nn.distance import cosine_similarity, normalize, pairwise_distance, pdist  # noqa: E402, F401
from minigrad.nn.embedding_bag import embedding_bag  # noqa: E402, F401
from minigrad.nn.encoding import one_hot  # noqa: E402, F401
from minigrad.nn.group_norm import group_norm, instance_norm  # noqa: E402, F401
from minigrad.nn.inplace_activations import elu_, hardtanh_, leaky_relu_, relu_, threshold_  # noqa: E402, F401
from minigrad.nn.margin_losses import (  # noqa: E402, F401
    cosine_embedding_loss,
    margin_ranking_loss,
    soft_margin_loss,
)
from minigrad.nn.normalization import batch_norm, dropout1d, dropout2d, dropout3d  # noqa: E402, F401
from minigrad.nn.padding import pad  # noqa: E402, F401
from minigrad.nn.pointwise_activations import (  # noqa: E402, F401
    celu,
    celu_,
    hardshrink,
    hardsigmoid,
    hardswish,
    logsigmoid,
    mish,
    selu,
    selu_,
    softplus,
    softshrink,
    softsign,
    tanhshrink,
    threshold,
)
from minigrad.nn.pointwise_activations import in_place as _in_place  # noqa: E402  (dropout's inplace=True)
from minigrad.nn.pooling import (  # noqa: E402, F401
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    adaptive_max_pool1d,
    adaptive_max_pool2d,
    avg_pool1d,
    avg_pool2d,
    max_pool1d,
    max_pool2d,
)
from minigrad.nn.probability_losses import (  # noqa: E402, F401
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    kl_div,
)
from minigrad.nn.regression_losses import (  # noqa: E402, F401
    gaussian_nll_loss,
    huber_loss,
    l1_loss,
    poisson_nll_loss,
    smooth_l1_loss,
)
from minigrad.nn.upsampling import interpolate, pixel_shuffle, pixel_unshuffle, upsample  # noqa: E402, F401

__all__ += ["conv1d", "conv_transpose1d", "conv_transpose2d", "group_norm", "instance_norm", "pad", "interpolate",
            "pixel_shuffle", "pixel_unshuffle", "upsample"]
__all__ += [
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div", "l1_loss", "smooth_l1_loss", "huber_loss",
    "gaussian_nll_loss", "poisson_nll_loss", "soft_margin_loss", "margin_ranking_loss", "cosine_embedding_loss",
    "softplus", "logsigmoid", "softsign", "hardsigmoid", "hardswish", "selu", "celu", "mish", "threshold",
    "hardshrink", "softshrink", "tanhshrink", "glu", "prelu", "relu_", "leaky_relu_", "elu_", "hardtanh_",
    "threshold_", "celu_", "selu_", "one_hot", "normalize", "cosine_similarity", "pairwise_distance",
]

# 3-D convolution and pooling, LP pooling, unpooling (minigrad/nn/conv.py, pooling3d.py, lp_pooling.py, unpooling.py)
from minigrad.nn.lp_pooling import lp_pool1d, lp_pool2d  # noqa: E402, F401
from minigrad.nn.pooling3d import adaptive_avg_pool3d, adaptive_max_pool3d, avg_pool3d, max_pool3d  # noqa: E402, F401
from minigrad.nn.unpooling import max_unpool1d, max_unpool2d  # noqa: E402, F401

__all__ += [
    "conv3d", "conv_transpose3d", "max_pool3d", "avg_pool3d", "adaptive_avg_pool3d", "adaptive_max_pool3d",
    "lp_pool1d", "lp_pool2d", "max_unpool1d", "max_unpool2d",
]

# RMS and local response normalization, alpha dropout (minigrad/nn/rms_norm.py, local_response_norm.py,
# alpha_dropout.py; dropout3d beside dropout1d/2d in normalization.py)
from minigrad.nn.alpha_dropout import alpha_dropout, feature_alpha_dropout  # noqa: E402, F401
from minigrad.nn.local_response_norm import local_response_norm  # noqa: E402, F401
from minigrad.nn.rms_norm import rms_norm  # noqa: E402, F401

__all__ += ["rms_norm", "local_response_norm", "alpha_dropout", "feature_alpha_dropout", "dropout3d"]

# Embedding (triplet, hinge) and multi-class margin losses (minigrad/nn/embedding_losses.py, multiclass_losses.py)
from minigrad.nn.embedding_losses import (  # noqa: E402, F401
    hinge_embedding_loss,
    triplet_margin_loss,
    triplet_margin_with_distance_loss,
)
from minigrad.nn.multiclass_losses import (  # noqa: E402, F401
    multi_margin_loss,
    multilabel_margin_loss,
    multilabel_soft_margin_loss,
)

__all__ += [
    "triplet_margin_loss", "triplet_margin_with_distance_loss", "hinge_embedding_loss", "multi_margin_loss",
    "multilabel_margin_loss", "multilabel_soft_margin_loss",
]

# Bilinear, channel shuffle, randomized leaky ReLU, Gumbel-softmax (minigrad/nn/bilinear.py, channel_shuffle.py,
# rrelu.py, gumbel.py); pdist beside pairwise_distance in distance.py
from minigrad.nn.bilinear import bilinear  # noqa: E402, F401
from minigrad.nn.channel_shuffle import channel_shuffle  # noqa: E402, F401
from minigrad.nn.gumbel import gumbel_softmax  # noqa: E402, F401
from minigrad.nn.rrelu import rrelu, rrelu_  # noqa: E402, F401

__all__ += ["bilinear", "channel_shuffle", "pdist", "gumbel_softmax", "rrelu", "rrelu_"]

# Connectionist temporal classification (minigrad/nn/ctc_loss.py; the op in minigrad/ops/ctc.py)
from minigrad.nn.ctc_loss import ctc_loss  # noqa: E402, F401

__all__ += ["ctc_loss"]
