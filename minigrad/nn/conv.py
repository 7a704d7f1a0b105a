"""1-D and 3-D convolutions and transposed convolutions: ``F.conv1d``, ``F.conv3d``, ``F.conv_transpose1d``,
``F.conv_transpose2d``, ``F.conv_transpose3d`` and the modules ``Conv1d``, ``Conv3d``, ``ConvTranspose1d``,
``ConvTranspose2d``, ``ConvTranspose3d``.

``conv1d`` is ``conv2d`` over images one row high (``minigrad.ops.nn.Conv2d``).
``conv3d`` is one ``conv2d`` too: ``Unfold`` along the depth (the depth seen as
the width of an image one row high) gives, for every output depth, the
``kd`` input slices its kernel meets, stacked beside the channels; those
become the channels of a batch of N * D_out images, convolved in 2-D with the
weight reshaped to (C_out, C_in / groups * kd, kh, kw).
``conv_transpose3d`` runs the other way: a 2-D transposed convolution of every
input depth slice, with the kernel's depth offsets as extra output channels,
and ``Fold`` along the depth adds each offset's result ``stride`` apart.

A transposed convolution is the gradient of a convolution with respect to
its input: every input value scatters a copy of the kernel, scaled by it,
into the output, ``stride`` apart, and the overlaps add up. Here it is two
registered ops: a matmul gives, for every input position, the
``(C_out / groups) * kh * kw`` values it contributes (the columns
``weight^T @ input``, one matmul per group), and ``Fold`` (col2im) adds them
into the output image. The output is that full scatter with ``padding``
positions cut from both ends of each spatial dimension and
``output_padding`` positions given back at the end; its length is::

    (L_in - 1) * stride - 2 * padding + dilation * (kernel - 1) + output_padding + 1

Gradients of every order come from the matmul and fold/unfold ops.
"""

from __future__ import annotations

import numpy as np

from minigrad.nn import functional as F
from minigrad.nn.layers import _empty_parameter, _reset_weight_and_bias
from minigrad.nn.module import Module
from minigrad.nn.padding import pad as _pad
from minigrad.ops import nn as nn_ops
from minigrad.ops.padding import ConstantPad
from minigrad.tensor import Tensor

__all__ = ["conv1d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "Conv1d", "Conv3d",
           "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"]

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


def _is_int(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def _ntuple(fn: str, name: str, value, count: int, minimum: int) -> tuple:
    """An int or a sequence of ``count`` ints as a tuple of ``count`` ints, each at least ``minimum``.

    A sequence of one int stands for ``count`` copies of it, as in PyTorch.

    Raises:
        TypeError: not an int or a sequence of ints.
        RuntimeError: a sequence of another length than 1 or ``count``, or an entry below ``minimum``.
    """
    values = (value,) * count if _is_int(value) else value
    if not isinstance(values, (tuple, list)) or not all(map(_is_int, values)):
        kind = "an int" if count == 1 else f"an int or a tuple of {count} ints"
        raise TypeError(f"{fn}(): {name} must be {kind}, got {value!r}")
    if len(values) == 1:
        values = tuple(values) * count
    if len(values) != count:
        raise RuntimeError(f"{fn}(): expected {name} to be a single int or a list of {count} ints, got {value!r}")
    if min(values) < minimum:
        raise RuntimeError(f"{fn}(): {name} must be at least {minimum}, got {value!r}")
    return tuple(int(v) for v in values)


def _check_tensors(fn, input, weight, bias, dims):  # noqa: A002
    """Types, ranks, dtypes and devices shared by the convolutions over ``dims`` spatial dimensions."""
    for name, value in (("input", input), ("weight", weight)):
        if not isinstance(value, Tensor):
            raise TypeError(f"{fn}(): argument '{name}' must be a Tensor, got {type(value).__name__}")
    if input.ndim not in (dims + 1, dims + 2):
        raise RuntimeError(
            f"Expected {dims + 1}D (unbatched) or {dims + 2}D (batched) input to {fn}, but got input of size: "
            f"{list(input.shape)}"
        )
    if weight.ndim != dims + 2:
        raise RuntimeError(f"{fn}(): weight must be {dims + 2}-D, got shape {list(weight.shape)}")
    tensors = [("weight", weight)]
    if bias is not None:
        if not isinstance(bias, Tensor):
            raise TypeError(f"{fn}(): argument 'bias' must be a Tensor or None, got {type(bias).__name__}")
        tensors.append(("bias", bias))
    for name, value in tensors:
        if value.dtype != input.dtype:
            raise RuntimeError(
                f"{fn}(): input type ({input.dtype}) and {name} type ({value.dtype}) should be the same"
            )
        if value.device != input.device:
            raise RuntimeError(f"{fn}(): input is on {input.device} but {name} is on {value.device}")
    if input.dtype.kind == "b":  # PyTorch has no bool convolution kernel
        raise NotImplementedError(f"{fn}(): not implemented for dtype bool; convert the input to a float dtype")
    if input.dtype.kind not in "fc":
        raise RuntimeError(f"{fn}(): expected a floating point input, got dtype {input.dtype}")
    if min(weight.shape[2:]) < 1:  # else a kernel of no elements gives zeros (PyTorch's type)
        raise RuntimeError(f"{fn}(): kernel size should be greater than zero, but got weight of shape "
                           f"{list(weight.shape)}")


def _check_groups(fn, groups) -> int:
    if not _is_int(groups) or groups < 1:
        raise RuntimeError(f"{fn}(): non-positive groups is not supported, got groups={groups!r}")
    return int(groups)


# -- conv1d -----------------------------------------------------------------------------------------


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):  # noqa: A002  (PyTorch's names)
    """1-D convolution (cross-correlation) over a batch of sequences.

    Args:
        input: Tensor (N, C_in, L), or (C_in, L) for one sequence.
        weight: Tensor (C_out, C_in / groups, k).
        bias: optional Tensor (C_out,).
        stride, dilation: an int or a 1-tuple, at least 1.
        padding: an int or 1-tuple of zeros on both sides, ``"valid"`` (none)
            or ``"same"`` (output length = input length; stride must be 1).
        groups: split the channels into this many independent convolutions.

    Returns:
        Tensor (N, C_out, L_out) (or (C_out, L_out)),
        L_out = (L + 2 * padding - dilation * (k - 1) - 1) // stride + 1.

    Raises:
        TypeError: an argument of the wrong type.
        RuntimeError: wrong ranks, dtypes or devices; channels that do not fit
            the weight and groups (names both shapes); a bias of the wrong
            size; a kernel larger than the padded input; an invalid padding
            string, or ``"same"`` with a stride (PyTorch's types).
    """
    fn = "conv1d"
    _check_tensors(fn, input, weight, bias, 1)
    groups = _check_groups(fn, groups)
    stride = _ntuple(fn, "stride", stride, 1, 1)
    dilation = _ntuple(fn, "dilation", dilation, 1, 1)
    if isinstance(padding, str):
        if padding not in ("valid", "same"):
            raise RuntimeError(f"{fn}(): invalid padding string {padding!r}, should be one of 'valid', 'same'")
        if padding == "same" and stride != (1,):
            raise RuntimeError(f"{fn}(): padding='same' is not supported for strided convolutions")
        pad2d = padding
    else:
        pad2d = (0, _ntuple(fn, "padding", padding, 1, 0)[0])
    channels, out_channels = input.shape[-2], weight.shape[0]
    if channels != weight.shape[1] * groups or out_channels % groups:
        raise RuntimeError(
            f"Given groups={groups}, weight of size {list(weight.shape)}, expected input{list(input.shape)} to have "
            f"{weight.shape[1] * groups} channels, but got {channels} channels instead"
            + ("" if out_channels % groups == 0 else f" (and {out_channels} output channels not divisible by groups)")
        )
    if bias is not None and bias.shape != (out_channels,):
        raise RuntimeError(f"{fn}(): bias must have shape ({out_channels},), got {list(bias.shape)}")
    length, span = input.shape[-1], dilation[0] * (weight.shape[2] - 1) + 1
    padded = length + (0 if isinstance(pad2d, str) else 2 * pad2d[1])
    if pad2d != "same" and padded < span:
        raise RuntimeError(
            f"{fn}(): calculated padded input size per channel: ({padded}). Kernel size: ({span}). Kernel size "
            "can't be greater than actual input size"
        )
    out = F.conv2d(input.unsqueeze(-2), weight.unsqueeze(2), bias, (1, stride[0]), pad2d, (1, dilation[0]), groups)
    return out.squeeze(-2)


# -- conv3d -----------------------------------------------------------------------------------------


def _check_channels(input, weight, groups) -> None:  # noqa: A002
    """The input's channels are the weight's second dimension times ``groups``, which divides the outputs."""
    dims = weight.ndim - 2
    channels, out_channels = input.shape[-dims - 1], weight.shape[0]
    if channels != weight.shape[1] * groups or out_channels % groups:
        raise RuntimeError(
            f"Given groups={groups}, weight of size {list(weight.shape)}, expected input{list(input.shape)} to have "
            f"{weight.shape[1] * groups} channels, but got {channels} channels instead"
            + ("" if out_channels % groups == 0 else f" (and {out_channels} output channels not divisible by groups)")
        )


def _same_or_explicit(fn, padding, kernel, stride, dilation, dims) -> tuple:
    """``padding`` (int, tuple, 'valid' or 'same') as (before, after) pairs, one per spatial dimension.

    'same' puts the odd one out at the end, as PyTorch does.
    """
    if isinstance(padding, str):
        if padding not in ("valid", "same"):
            raise RuntimeError(f"{fn}(): invalid padding string {padding!r}, should be one of 'valid', 'same'")
        if padding == "valid":
            return ((0, 0),) * dims
        if any(s != 1 for s in stride):
            raise RuntimeError(f"{fn}(): padding='same' is not supported for strided convolutions ({stride=})")
        return tuple((d * (k - 1) // 2, d * (k - 1) - d * (k - 1) // 2) for k, d in zip(kernel, dilation))
    return tuple((p, p) for p in _ntuple(fn, "padding", padding, dims, 0))


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):  # noqa: A002  (PyTorch's names)
    """3-D convolution (cross-correlation) over a batch of volumes.

    Args:
        input: Tensor (N, C_in, D, H, W), or (C_in, D, H, W) for one volume.
        weight: Tensor (C_out, C_in / groups, kd, kh, kw).
        bias: optional Tensor (C_out,).
        stride, dilation: an int or a 3-tuple (a 1-tuple stands for three), at least 1.
        padding: an int or 3-tuple of zeros added on both sides, ``"valid"``
            (none) or ``"same"`` (output size = input size; stride must be 1).
        groups: split the channels into this many independent convolutions.

    Returns:
        Tensor (N, C_out, D_out, H_out, W_out) (or without N), each size
        (size + 2 * padding - dilation * (k - 1) - 1) // stride + 1.

    Raises:
        TypeError: an argument of the wrong type.
        RuntimeError: wrong ranks, dtypes or devices; channels that do not fit
            the weight and groups (names both shapes); a bias of the wrong
            size; a tuple of another length than 1 or 3; a stride or dilation
            below 1, a negative padding; a kernel larger than the padded
            input; an empty volume; an invalid padding string, or ``"same"``
            with a stride (PyTorch's types).
    """
    fn = "conv3d"
    _check_tensors(fn, input, weight, bias, 3)
    groups = _check_groups(fn, groups)
    stride = _ntuple(fn, "stride", stride, 3, 1)
    dilation = _ntuple(fn, "dilation", dilation, 3, 1)
    kernel = weight.shape[2:]
    pads = _same_or_explicit(fn, padding, kernel, stride, dilation, 3)
    _check_channels(input, weight, groups)
    out_channels = weight.shape[0]
    if bias is not None and bias.shape != (out_channels,):
        raise RuntimeError(f"{fn}(): bias must have shape ({out_channels},), got {list(bias.shape)}")
    if 0 in input.shape[-3:]:
        raise RuntimeError(f"{fn}(): only inputs with an empty batch are supported, got shape {list(input.shape)}")
    padded = [n + a + b for n, (a, b) in zip(input.shape[-3:], pads)]
    spans = [d * (k - 1) + 1 for k, d in zip(kernel, dilation)]
    if any(p < k for p, k in zip(padded, spans)):
        raise RuntimeError(
            f"{fn}(): calculated padded input size per channel: {tuple(padded)}. Kernel size: {tuple(spans)}. "
            "Kernel size can't be greater than actual input size"
        )
    batched = input.ndim == 5
    x = input if batched else input.unsqueeze(0)
    out = _conv3d(x, weight, bias, stride, pads, dilation, groups)
    return out if batched else out.squeeze(0)


def _conv3d(x, weight, bias, stride, pads, dilation, groups):
    """x (N, C, D, H, W), weight (O, C / groups, kd, kh, kw), checked; pads (before, after) per dimension."""
    n, c, d, h, w = x.shape
    out_channels, per_group, kd, kh, kw = weight.shape
    d_out = nn_ops.conv_output_size(d, kd, stride[0], sum(pads[0]), dilation[0])
    # The depth slices under every kernel depth offset: depth as the width of an image one row high,
    # (N, C*H*W, 1, D) -> (N, C*H*W*kd, D_out), entry (c, h, w, i) at output depth z reading depth
    # z * stride + i * dilation - pad.
    rows = x.permute(0, 1, 3, 4, 2).reshape(n, c * h * w, 1, d)
    cols = nn_ops.Unfold((1, kd), (1, stride[0]), (0, 0, *pads[0]), (1, dilation[0]))(rows)
    # (N, C, H, W, kd, D_out) -> (N * D_out, C * kd, H, W): the kd slices become channels, group by group.
    images = cols.reshape(n, c, h, w, kd, d_out).permute(0, 5, 1, 4, 2, 3).reshape(n * d_out, c * kd, h, w)
    flat_weight = weight.reshape(out_channels, per_group * kd, kh, kw)
    conv = nn_ops.Conv2d(tuple(stride[1:]), (*pads[1], *pads[2]), tuple(dilation[1:]), groups)
    out = conv(images, flat_weight, bias)  # (N * D_out, O, H_out, W_out)
    return out.reshape(n, d_out, *out.shape[1:]).permute(0, 2, 1, 3, 4)


# -- transposed convolutions ------------------------------------------------------------------------


def _transpose_output_size(fn, size, kernel, stride, padding, output_padding, dilation) -> tuple:
    out = tuple((n - 1) * s - 2 * p + d * (k - 1) + o + 1
                for n, k, s, p, o, d in zip(size, kernel, stride, padding, output_padding, dilation))
    if min(out) < 1:
        raise RuntimeError(
            f"{fn}(): given input size per channel {tuple(size)}, the calculated output size per channel "
            f"{out} is too small"
        )
    return out


def _conv_transpose(fn, dims, input, weight, bias, stride, padding, output_padding, groups, dilation):  # noqa: A002
    """Validate, then the transposed convolution over ``dims`` (1, 2 or 3) spatial dimensions."""
    _check_tensors(fn, input, weight, bias, dims)
    groups = _check_groups(fn, groups)
    stride = _ntuple(fn, "stride", stride, dims, 1)
    padding = _ntuple(fn, "padding", padding, dims, 0)
    output_padding = _ntuple(fn, "output_padding", output_padding, dims, 0)
    dilation = _ntuple(fn, "dilation", dilation, dims, 1)
    for o, s, d in zip(output_padding, stride, dilation):
        if o >= s and o >= d:
            raise RuntimeError(
                f"{fn}(): output padding must be smaller than either stride or dilation, but got "
                f"output_padding={output_padding}, stride={stride}, dilation={dilation}"
            )
    channels = input.shape[-dims - 1]
    if channels != weight.shape[0] or channels % groups:
        raise RuntimeError(
            f"Given transposed=1, weight of size {list(weight.shape)}, expected input{list(input.shape)} to have "
            f"{weight.shape[0]} channels, but got {channels} channels instead"
            + ("" if channels % groups == 0 else f" (not divisible by groups={groups})")
        )
    out_channels = weight.shape[1] * groups
    if bias is not None and bias.shape != (out_channels,):
        raise RuntimeError(f"{fn}(): bias must have shape ({out_channels},), got {list(bias.shape)}")
    kernel = weight.shape[2:]
    out_size = _transpose_output_size(fn, input.shape[-dims:], kernel, stride, padding, output_padding, dilation)
    batched = input.ndim == dims + 2
    x = input if batched else input.unsqueeze(0)
    if dims == 3:
        out = _conv_transpose3d(x, weight, bias, stride, padding, output_padding, groups, dilation, out_size)
        return out if batched else out.squeeze(0)
    if dims == 1:  # rows one high
        x, weight = x.unsqueeze(2), weight.unsqueeze(2)
        kernel, out_size = (1, *kernel), (1, *out_size)
        stride, padding, output_padding, dilation = ((1, *stride), (0, *padding), (0, *output_padding),
                                                     (1, *dilation))
    out = _conv_transpose2d(x, weight, bias, stride, padding, output_padding, groups, dilation, out_size)
    if dims == 1:
        out = out.squeeze(2)
    return out if batched else out.squeeze(0)


def _conv_transpose2d(x, weight, bias, stride, padding, output_padding, groups, dilation, out_size):
    """x (N, C_in, H, W), weight (C_in, C_out / groups, kh, kw), checked -> (N, C_out, *out_size)."""
    n, c_in, h, w = x.shape
    _, out_per_group, kh, kw = weight.shape
    k = out_per_group * kh * kw
    # The columns: what every input position adds under each kernel offset. One matrix product per group
    # over all samples at once, (G, k, C_in/G) @ (G, C_in/G, N*H*W): several times faster than a product per
    # sample, whose H*W columns are few in the first layers of a generator. Then (N, G*k, H*W) for Fold.
    per_group = c_in // groups
    w_groups = weight.reshape(groups, per_group, k)
    x_groups = x.reshape(n, groups, per_group, h * w).permute(1, 2, 0, 3).reshape(groups, per_group, n * h * w)
    cols = (w_groups.mT @ x_groups).reshape(groups, k, n, h * w).permute(2, 0, 1, 3).reshape(n, groups * k, h * w)
    # Fold adds them into the image; as the adjoint of a convolution with these pads it cuts ``padding``
    # from the start of each dimension and ``padding - output_padding`` from the end. Where output_padding
    # exceeds padding, the positions past the full scatter get nothing: zeros, added afterwards.
    extra = [max(o - p, 0) for o, p in zip(output_padding, padding)]
    pads = []
    for p, o in zip(padding, output_padding):
        pads += [p, max(p - o, 0)]
    size = (out_size[0] - extra[0], out_size[1] - extra[1])
    out = nn_ops.Fold(size, (kh, kw), stride, tuple(pads), dilation)(cols)
    if any(extra):
        out = ConstantPad(((0, 0), (0, 0), (0, extra[0]), (0, extra[1])), 0)(out)
    if bias is not None:
        out = out + bias.reshape(1, -1, 1, 1)
    return out


def _conv_transpose3d(x, weight, bias, stride, padding, output_padding, groups, dilation, out_size):
    """x (N, C_in, D, H, W), weight (C_in, C_out / groups, kd, kh, kw), checked -> (N, C_out, *out_size).

    Every input depth slice is transposed-convolved in 2-D with the kernel's depth offsets as extra output
    channels; ``Fold`` along the depth then adds offset i of input depth j into output depth
    j * stride + i * dilation, cutting ``padding`` and giving back ``output_padding`` as the 2-D case does.
    """
    n, c_in, d, h, w = x.shape
    _, out_per_group, kd, kh, kw = weight.shape
    slices = x.permute(0, 2, 1, 3, 4).reshape(n * d, c_in, h, w)
    flat_weight = weight.reshape(c_in, out_per_group * kd, kh, kw)  # output channel (o, i), group by group
    planes = _conv_transpose2d(slices, flat_weight, None, stride[1:], padding[1:], output_padding[1:], groups,
                               dilation[1:], out_size[1:])  # (N * D, C_out * kd, H_out, W_out)
    c_out, (h_out, w_out) = out_per_group * groups, out_size[1:]
    # (N, D, C_out, kd, H_out, W_out) -> (N, C_out*H_out*W_out*kd, D): Fold's columns along a row one high.
    cols = planes.reshape(n, d, c_out, kd, h_out, w_out).permute(0, 2, 4, 5, 3, 1)
    cols = cols.reshape(n, c_out * h_out * w_out * kd, d)
    p, o = padding[0], output_padding[0]
    extra = max(o - p, 0)
    depth = nn_ops.Fold((1, out_size[0] - extra), (1, kd), (1, stride[0]), (0, 0, p, max(p - o, 0)),
                        (1, dilation[0]))(cols)  # (N, C_out*H_out*W_out, 1, D_out - extra)
    if extra:
        depth = ConstantPad(((0, 0), (0, 0), (0, 0), (0, extra)), 0)(depth)
    out = depth.reshape(n, c_out, h_out, w_out, out_size[0]).permute(0, 1, 4, 2, 3)
    if bias is not None:
        out = out + bias.reshape(1, -1, 1, 1, 1)
    return out


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,  # noqa: A002
                     dilation=1):
    """1-D transposed convolution (the gradient of ``conv1d`` with respect to its input).

    Args:
        input: Tensor (N, C_in, L), or (C_in, L).
        weight: Tensor (C_in, C_out / groups, k).
        bias: optional Tensor (C_out,).
        stride, dilation: an int or 1-tuple, at least 1.
        padding: an int or 1-tuple: positions cut from both ends of the output.
        output_padding: an int or 1-tuple added to the end of the output
            (below the stride or the dilation): picks one of the input lengths
            that a strided ``conv1d`` maps to L.
        groups: split the channels into this many independent convolutions.

    Returns:
        Tensor (N, C_out, L_out) (or (C_out, L_out)), L_out =
        (L - 1) * stride - 2 * padding + dilation * (k - 1) + output_padding + 1.

    Raises:
        TypeError: an argument of the wrong type.
        RuntimeError: wrong ranks, dtypes or devices; input channels that are not
            the weight's first dimension or not divisible by groups; an
            output_padding not below the stride or the dilation; an output
            of no positions; a bias of the wrong size.
    """
    return _conv_transpose("conv_transpose1d", 1, input, weight, bias, stride, padding, output_padding, groups,
                           dilation)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,  # noqa: A002
                     dilation=1):
    """2-D transposed convolution (the gradient of ``conv2d`` with respect to its input), DCGAN's upsampler.

    Args:
        input: Tensor (N, C_in, H, W), or (C_in, H, W).
        weight: Tensor (C_in, C_out / groups, kh, kw).
        bias: optional Tensor (C_out,).
        stride, dilation: an int or (h, w) pair, at least 1.
        padding: an int or pair: positions cut from both ends of each output dimension.
        output_padding: an int or pair added at the end of each output
            dimension (each below the stride or the dilation).
        groups: split the channels into this many independent convolutions.

    Returns:
        Tensor (N, C_out, H_out, W_out) (or (C_out, H_out, W_out)), H_out =
        (H - 1) * sh - 2 * ph + dh * (kh - 1) + output_padding_h + 1, W_out alike.

    Raises:
        TypeError, RuntimeError: as ``conv_transpose1d``, for each spatial dimension.
    """
    return _conv_transpose("conv_transpose2d", 2, input, weight, bias, stride, padding, output_padding, groups,
                           dilation)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,  # noqa: A002
                     dilation=1):
    """3-D transposed convolution (the gradient of ``conv3d`` with respect to its input).

    Args:
        input: Tensor (N, C_in, D, H, W), or (C_in, D, H, W).
        weight: Tensor (C_in, C_out / groups, kd, kh, kw).
        bias: optional Tensor (C_out,).
        stride, dilation: an int or 3-tuple, at least 1.
        padding: an int or 3-tuple: positions cut from both ends of each output dimension.
        output_padding: an int or 3-tuple added at the end of each output
            dimension (each below the stride or the dilation).
        groups: split the channels into this many independent convolutions.

    Returns:
        Tensor (N, C_out, D_out, H_out, W_out) (or without N), each size
        (size - 1) * stride - 2 * padding + dilation * (k - 1) + output_padding + 1.

    Raises:
        TypeError, RuntimeError: as ``conv_transpose1d``, for each spatial dimension.
    """
    return _conv_transpose("conv_transpose3d", 3, input, weight, bias, stride, padding, output_padding, groups,
                           dilation)


# -- modules ----------------------------------------------------------------------------------------


class _ConvNd(Module):
    """Shared constructor, checks, initialization and repr of the convolution modules."""

    _dims = 1
    _transposed = False

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                 padding_mode, output_padding, device, dtype):
        super().__init__()
        name, dims = type(self).__name__, self._dims
        for label, value in (("in_channels", in_channels), ("out_channels", out_channels)):
            if not _is_int(value):
                raise TypeError(f"{name}: {label} must be an int, got {value!r}")
            if value < 0:  # PyTorch fails allocating the weight: a RuntimeError
                raise RuntimeError(f"{name}: {label} must be non-negative, got {value!r}")
        if not _is_int(groups) or groups <= 0:
            raise ValueError(f"{name}: groups must be a positive integer, got {groups!r}")
        if in_channels % groups:
            raise ValueError(f"{name}: in_channels ({in_channels}) must be divisible by groups ({groups})")
        if out_channels % groups:
            raise ValueError(f"{name}: out_channels ({out_channels}) must be divisible by groups ({groups})")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(
                f"padding_mode must be one of {list(_PADDING_MODES)}, but got padding_mode={padding_mode!r}"
            )
        if self._transposed and padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {name}')
        self.in_channels, self.out_channels = int(in_channels), int(out_channels)
        # Checked here, at construction: PyTorch accepts these and only its forward fails (with the
        # RuntimeError or TypeError raised here).
        self.kernel_size = self._tuple("kernel_size", kernel_size, minimum=1)
        self.stride = self._tuple("stride", stride, minimum=1)
        self.dilation = self._tuple("dilation", dilation, minimum=1)
        if isinstance(padding, str):
            if self._transposed:
                raise TypeError(f"{name}: padding must be an int or a tuple of {dims} ints, got {padding!r} "
                                "(transposed convolutions take no padding string)")
            if padding not in ("valid", "same"):
                raise ValueError(f"{name}: invalid padding string {padding!r}, should be one of 'valid', 'same'")
            if padding == "same" and any(s != 1 for s in self.stride):
                raise ValueError(f"{name}: padding='same' is not supported for strided convolutions")
            self.padding = padding
        else:
            self.padding = self._tuple("padding", padding, minimum=0)
        self.output_padding = self._tuple("output_padding", output_padding, minimum=0)
        self.groups = int(groups)
        self.padding_mode = padding_mode
        self.transposed = self._transposed
        if self._transposed:
            shape = (self.in_channels, self.out_channels // self.groups, *self.kernel_size)
        else:
            shape = (self.out_channels, self.in_channels // self.groups, *self.kernel_size)
        self.weight = _empty_parameter(shape, device, dtype)
        if bias:
            self.bias = _empty_parameter((self.out_channels,), device, dtype)
        else:
            self.register_parameter("bias", None)
        self._reversed_padding_repeated_twice = self._input_padding(dims)
        self.reset_parameters()

    def _tuple(self, label, value, minimum) -> tuple:
        """``value`` as a tuple of ``_dims`` ints, each at least ``minimum``.

        Raises:
            TypeError: not an int or a tuple of ints.
            RuntimeError: a tuple of ints of another length than ``_dims``, or an entry below ``minimum``.
        """
        name = type(self).__name__
        if _is_int(value):
            values = (int(value),) * self._dims
        elif isinstance(value, (tuple, list)) and all(map(_is_int, value)):
            values = tuple(int(v) for v in value)
        else:
            raise TypeError(f"{name}: {label} must be an int or a tuple of {self._dims} ints, got {value!r}")
        if len(values) != self._dims:
            raise RuntimeError(f"{name}: {label} must be an int or a tuple of {self._dims} ints, got {value!r}")
        if min(values) < minimum:
            raise RuntimeError(f"{name}: {label} must be at least {minimum}, got {value!r}")
        return values

    def _input_padding(self, dims) -> tuple:
        """The padding of the input for non-zero padding modes, in ``F.pad``'s order (last dimension first)."""
        if self.padding == "valid":
            return (0, 0) * dims
        amounts = []
        for k in reversed(range(dims)):
            if self.padding == "same":
                total = self.dilation[k] * (self.kernel_size[k] - 1)
                amounts += [total // 2, total - total // 2]
            else:
                amounts += [self.padding[k]] * 2
        return tuple(amounts)

    def reset_parameters(self) -> None:
        """Re-draw weight and bias from PyTorch's defaults: kaiming_uniform_(a=sqrt(5)) on the weight's fan in
        (its dimension 1 times the kernel size), bias U(-1/sqrt(fan_in), 1/sqrt(fan_in))."""
        _reset_weight_and_bias(self.weight, self.bias)

    def extra_repr(self) -> str:
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * self._dims:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * self._dims:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * self._dims:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class _Conv(_ConvNd):
    """What ``Conv1d`` and ``Conv3d`` share: PyTorch's ``Conv*d`` signature, and a forward through the
    subclass's functional form (``_convolve``: ``conv1d`` or ``conv3d``) after any non-zero padding mode."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, 0, device, dtype)

    def forward(self, input):  # noqa: A002
        """Convolve ``input`` (N, C_in, *spatial) into (N, C_out, *spatial_out) (or without N)."""
        if self.padding_mode != "zeros":
            padded = _pad(input, self._reversed_padding_repeated_twice, self.padding_mode)
            return self._convolve(padded, self.weight, self.bias, self.stride, 0, self.dilation, self.groups)
        return self._convolve(input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)


class Conv1d(_Conv):
    """1-D convolution over an input (N, C_in, L) or (C_in, L).

    Args:
        in_channels, out_channels: channels of input and output.
        kernel_size, stride, dilation: an int or a 1-tuple.
        padding: an int or 1-tuple, ``"valid"`` or ``"same"`` (stride 1 only).
        groups: split the channels into this many independent convolutions
            (both channel counts divisible by it).
        bias: learn a per-output-channel bias (default True).
        padding_mode: ``"zeros"`` (default), ``"reflect"``, ``"replicate"``
            or ``"circular"``: how the input is padded.

    ``weight`` (out_channels, in_channels / groups, k) and ``bias``
    (out_channels,) are initialized like PyTorch's.

    Raises:
        ValueError: groups below 1 or not dividing the channel counts; a bad padding string or padding mode.
        RuntimeError: a negative channel count; kernel_size, stride or dilation below 1, a negative padding,
            or a tuple of another length than 1.
        TypeError: sizes that are not ints (or tuples of ints).
    """

    _dims = 1
    _convolve = staticmethod(conv1d)


class Conv3d(_Conv):
    """3-D convolution over an input (N, C_in, D, H, W) or (C_in, D, H, W): see ``F.conv3d``.

    Arguments as ``Conv1d``'s, with 3-tuples where it takes 1-tuples; ``weight`` is
    (out_channels, in_channels / groups, kd, kh, kw), initialized like PyTorch's.

    Raises:
        ValueError, RuntimeError, TypeError: as ``Conv1d``.
    """

    _dims = 3
    _convolve = staticmethod(conv3d)


class _ConvTransposeNd(_ConvNd):
    """Shared constructor (PyTorch's ``ConvTranspose*d`` signature), forward and ``output_size`` handling."""

    _transposed = True

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, output_padding, device, dtype)

    def forward(self, input, output_size=None):  # noqa: A002
        """Transposed-convolve ``input`` (N, C_in, *spatial) or (C_in, *spatial); ``output_size`` (the spatial
        sizes, or the whole shape) picks the output padding that gives it."""
        output_padding = self._output_padding(input, output_size)
        dims = self._dims
        return _conv_transpose(f"conv_transpose{dims}d", dims, input, self.weight, self.bias, self.stride,
                               self.padding, output_padding, self.groups, self.dilation)

    def _output_padding(self, input, output_size) -> tuple:  # noqa: A002
        """``output_padding``, or the one that gives ``output_size`` (the spatial sizes, or the whole shape).

        Raises:
            ValueError: ``output_size`` has the wrong length or is not reachable from this input.
        """
        if output_size is None:
            return self.output_padding
        dims = self._dims
        size = list(output_size)
        if len(size) not in (dims, dims + 1, dims + 2):
            raise ValueError(
                f"ConvTranspose{dims}D: for {input.ndim}D input, output_size must have {dims} or "
                f"{input.ndim} elements (got {len(size)})"
            )
        size = size[-dims:]
        smallest = [self._smallest(input, k) for k in range(dims)]
        largest = [low + stride - 1 for low, stride in zip(smallest, self.stride)]
        if any(not low <= n <= high for low, n, high in zip(smallest, size, largest)):
            raise ValueError(
                f"requested an output size of {size}, but valid sizes range from {smallest} to {largest} "
                f"(for an input of {list(input.shape[-dims:])})"
            )
        return tuple(n - low for n, low in zip(size, smallest))

    def _smallest(self, input, k) -> int:  # noqa: A002
        """The output length along spatial dimension ``k`` with no output padding."""
        n = input.shape[input.ndim - self._dims + k]
        return (n - 1) * self.stride[k] - 2 * self.padding[k] + self.dilation[k] * (self.kernel_size[k] - 1) + 1


class ConvTranspose1d(_ConvTransposeNd):
    """1-D transposed convolution over an input (N, C_in, L) or (C_in, L): see ``F.conv_transpose1d``.

    Args:
        in_channels, out_channels: channels of input and output.
        kernel_size, stride, padding, output_padding, dilation: an int or a 1-tuple.
        groups: split the channels into this many independent convolutions.
        bias: learn a per-output-channel bias (default True).
        padding_mode: only ``"zeros"``, as in PyTorch.

    ``weight`` is (in_channels, out_channels / groups, k); it and ``bias``
    are initialized like PyTorch's (the fan in is out_channels / groups * k).
    ``forward(input, output_size=None)``: ``output_size`` picks the output
    padding that gives that length.

    Raises:
        ValueError: groups below 1 or not dividing the channel counts; a padding mode other than "zeros"; an
            unreachable ``output_size``.
        RuntimeError: a negative channel count; kernel_size, stride or dilation below 1, a negative padding
            or output_padding, or a tuple of the wrong length.
        TypeError: sizes that are not ints (or tuples of ints), or a padding string.
    """

    _dims = 1


class ConvTranspose2d(_ConvTransposeNd):
    """2-D transposed convolution over an input (N, C_in, H, W) or (C_in, H, W): see ``F.conv_transpose2d``.

    Args:
        in_channels, out_channels: channels of input and output.
        kernel_size, stride, padding, output_padding, dilation: an int or an (h, w) pair.
        groups: split the channels into this many independent convolutions.
        bias: learn a per-output-channel bias (default True).
        padding_mode: only ``"zeros"``, as in PyTorch.

    ``weight`` is (in_channels, out_channels / groups, kh, kw); it and
    ``bias`` are initialized like PyTorch's (the fan in is
    out_channels / groups * kh * kw). ``forward(input, output_size=None)``:
    ``output_size`` picks the output padding that gives that size.

    Raises:
        ValueError, RuntimeError, TypeError: as ``ConvTranspose1d`` (with pairs where it takes 1-tuples).
    """

    _dims = 2


class ConvTranspose3d(_ConvTransposeNd):
    """3-D transposed convolution over an input (N, C_in, D, H, W) or (C_in, D, H, W): see ``F.conv_transpose3d``.

    Arguments, ``forward(input, output_size=None)`` and errors as ``ConvTranspose1d``'s, with 3-tuples where
    it takes 1-tuples; ``weight`` is (in_channels, out_channels / groups, kd, kh, kw), initialized like PyTorch's.
    """

    _dims = 3
