"""Resizing: ``F.interpolate`` with ``nn.Upsample`` (and ``UpsamplingNearest2d``/``UpsamplingBilinear2d``),
and the sub-pixel rearrangements ``F.pixel_shuffle``/``F.pixel_unshuffle`` with
``nn.PixelShuffle``/``nn.PixelUnshuffle``.

Interpolation is separable: each spatial dimension in turn is resampled
along its own axis, every output position a weighted sum of a few input
positions ("taps") gathered with an integer index (the ``Index`` op, whose
gradient sums back into the input), times constant weights:

* ``nearest``: one tap, input ``floor(out * scale)`` (on 4-D input,
  ``out`` itself for the same size and ``out // 2`` for twice the size, as
  PyTorch's 2-D kernel does);
  ``nearest-exact``: ``floor((out + 0.5) * scale)``; both computed in float32, as PyTorch does;
* ``linear``/``bilinear``/``trilinear``: two taps around the source
  coordinate ``(out + 0.5) * scale - 0.5`` (clamped at 0), or
  ``out * (in - 1) / (out_size - 1)`` with ``align_corners=True``;
* ``bicubic``: four taps with the cubic convolution kernel (a = -0.75),
  indices clamped at the borders;
* ``area``: adaptive average pooling.

``scale`` is ``1 / scale_factor`` when a scale factor is given (unless
``recompute_scale_factor=True``), else ``in / out``, so the coordinates
match PyTorch's for every size. The pixel shuffles are a reshape, a
permutation and a reshape.
"""

from __future__ import annotations

import math

import numpy as np

from minigrad import backend
from minigrad._checks import is_int
from minigrad.nn.module import Module
from minigrad.nn.pooling import adaptive_avg_pool1d, adaptive_avg_pool2d
from minigrad.ops.indexing import index
from minigrad.tensor import Tensor

__all__ = [
    "interpolate", "upsample", "pixel_shuffle", "pixel_unshuffle", "Upsample", "UpsamplingNearest2d",
    "UpsamplingBilinear2d", "PixelShuffle", "PixelUnshuffle",
]

_MODES = ("nearest", "linear", "bilinear", "bicubic", "trilinear", "area", "nearest-exact")
_INTERPOLATING = ("linear", "bilinear", "bicubic", "trilinear")
_RANK_OF_MODE = {"linear": 3, "bilinear": 4, "bicubic": 4, "trilinear": 5}


def _is_number(value) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)


def _per_dimension(value, dims: int, spatial: list, names: tuple) -> list:
    """``value`` for each of the ``dims`` spatial dimensions: a number repeated, or a tuple or list of ``dims``.

    ``names``: how PyTorch's ValueError for a wrong length names the argument (subject, value, format, letter).
    """
    if not isinstance(value, (tuple, list)):
        return [value] * dims
    if len(value) != dims:
        subject, described, format_name, letter = names
        raise ValueError(
            f"Input and {subject} must have the same number of spatial dimensions, but got input with spatial "
            f"dimensions of {spatial} and {described} {tuple(value)}. Please provide input tensor in "
            f"(N, C, d1, d2, ...,dK) format and {format_name} in ({letter}1, {letter}2, ...,{letter}K) format."
        )
    return list(value)


def _output_size(input, size, scale_factor, dims):  # noqa: A002
    """(output sizes, the scale factors the coordinates use, or None per dimension) with PyTorch's checks."""
    spatial = list(input.shape[2:])
    if size is None and scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        sizes = _per_dimension(size, dims, spatial, ("output", "output size of", "output size", "o"))
        if not all(map(is_int, sizes)):
            raise TypeError(f"interpolate(): size must be an int or a tuple of ints, got {size!r}")
        return [int(s) for s in sizes], [None] * dims
    scales = _per_dimension(scale_factor, dims, spatial, ("scale_factor", "scale_factor of shape", "scale_factor", "s"))
    if not all(map(_is_number, scales)):
        raise TypeError(f"interpolate(): scale_factor must be a number or a tuple of numbers, got {scale_factor!r}")
    scales = [float(s) for s in scales]
    if not all(map(math.isfinite, scales)):
        raise RuntimeError(f"interpolate(): scale_factor must be finite, got {scale_factor!r}")
    return [math.floor(n * s) for n, s in zip(spatial, scales)], scales


def _taps(mode, in_size, out_size, scale_factor, align_corners, dtype, shortcut=False):
    """[(input index array, weight array or None)] for one dimension: output j = sum_t weight_t[j] * x[index_t[j]].

    ``shortcut``: the same size maps j to j and twice the size j to j // 2 (PyTorch's 2-D nearest kernel).
    """
    j = np.arange(out_size)
    if shortcut and out_size in (in_size, 2 * in_size):  # PyTorch's shortcuts, whatever the scale
        return [(j if out_size == in_size else j // 2, None)]
    if mode in ("nearest", "nearest-exact"):
        # float32 arithmetic, as PyTorch's kernels (scale = 1 / scale_factor taken in double, then rounded).
        scale = np.float32(1.0 / scale_factor) if scale_factor else np.float32(in_size) / np.float32(out_size)
        offset = np.float32(0.5 if mode == "nearest-exact" else 0.0)
        source = np.floor((j.astype(np.float32) + offset) * scale).astype(np.int64)
        return [(np.minimum(source, in_size - 1), None)]
    real = np.dtype(dtype).type
    if align_corners:
        scale = real(in_size - 1) / real(out_size - 1) if out_size > 1 else real(0)
        coordinate = scale * j.astype(dtype)
    else:
        scale = real(1.0 / scale_factor) if scale_factor and scale_factor > 0 else real(in_size) / real(out_size)
        coordinate = scale * (j.astype(dtype) + real(0.5)) - real(0.5)
    if mode == "bicubic":
        first = np.floor(coordinate)
        t = coordinate - first
        first = first.astype(np.int64)
        a = real(-0.75)

        def near(x):  # |x| <= 1
            return ((a + 2) * x - (a + 3)) * x * x + 1

        def far(x):  # 1 < |x| < 2
            return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

        weights = (far(t + 1), near(t), near(1 - t), far(2 - t))
        return [(np.clip(first + k - 1, 0, in_size - 1), w.astype(dtype)) for k, w in enumerate(weights)]
    if out_size == in_size:
        return [(j, None)]
    if not align_corners:
        coordinate = np.maximum(coordinate, real(0))
    low = np.minimum(np.floor(coordinate).astype(np.int64), in_size - 1)
    upper = np.clip(coordinate - low.astype(dtype), 0, 1).astype(dtype)
    high = low + (low < in_size - 1)
    return [(low, (1 - upper).astype(dtype)), (high, upper)]


def _resample(x, axis, taps):
    """Sum over ``taps`` of x gathered along ``axis`` times the tap's weights (broadcast along that axis)."""
    head = (slice(None),) * axis
    out = None
    for positions, weights in taps:
        term = index(x, head + (positions,))
        if weights is not None:
            shape = (len(weights),) + (1,) * (x.ndim - axis - 1)
            term = term * Tensor(backend.to_device(weights.reshape(shape), x.device))
        out = term if out is None else out + term
    return out


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,  # noqa: A002
                recompute_scale_factor=None, antialias=False):
    """Resize the spatial dimensions of a batch: (N, C, *spatial) -> (N, C, *size).

    Args:
        input: float Tensor (N, C, L), (N, C, H, W) or (N, C, D, H, W).
        size: an int or one int per spatial dimension.
        scale_factor: a number or one per spatial dimension (exactly one of
            ``size`` and ``scale_factor``); the output size is
            ``floor(in * scale_factor)``.
        mode: ``"nearest"`` (default), ``"nearest-exact"``, ``"linear"``
            (3-D), ``"bilinear"``/``"bicubic"`` (4-D), ``"trilinear"`` (5-D) or ``"area"`` (3-D, 4-D).
        align_corners: for the interpolating modes, map the corner pixels'
            centres onto each other (default False).
        recompute_scale_factor: compute the coordinates' scale from the sizes
            instead of using ``scale_factor``.
        antialias: only False (PyTorch's anti-aliased downsampling is not provided).

    Returns:
        Tensor (N, C, *output size) of the input's dtype.

    Raises:
        ValueError: neither or both of size and scale_factor, lengths that are
            not the number of spatial dimensions, ``align_corners`` with a
            non-interpolating mode, ``recompute_scale_factor`` with a size, or
            ``antialias=True`` with a mode other than bilinear/bicubic on 4-D input.
        NotImplementedError: an unknown mode, a rank the mode does not take,
            a non-floating input, ``antialias=True`` (bilinear/bicubic), or ``area`` on 5-D input.
        RuntimeError: a scale factor that is not finite.
        RuntimeError: an output size below 1.
    """
    fn = "interpolate"
    if not isinstance(input, Tensor):
        raise TypeError(f"{fn}(): argument 'input' must be a Tensor, got {type(input).__name__}")
    # PyTorch's order: its argument checks (ValueError) come first, then the mode and rank (NotImplementedError),
    # then what its kernels check (dtype, sizes).
    if align_corners is not None and mode in _MODES and mode not in _INTERPOLATING:
        raise ValueError(
            "align_corners option can only be set with the interpolating modes: linear | bilinear | bicubic | "
            "trilinear"
        )
    dims = input.ndim - 2
    sizes, scales = _output_size(input, size, scale_factor, dims)
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if antialias and not (mode in ("bilinear", "bicubic") and input.ndim == 4):
        raise ValueError(f"{fn}(): antialias=True needs mode 'bilinear' or 'bicubic' and a 4-D input, got mode "
                         f"{mode!r} and a {input.ndim}-D input")
    if mode not in _MODES or input.ndim not in (3, 4, 5):
        raise NotImplementedError(
            f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.ndim}D) for the modes: "
            f"{' | '.join(_MODES)} (got {mode})"
        )
    if mode in _RANK_OF_MODE and input.ndim != _RANK_OF_MODE[mode]:
        raise NotImplementedError(f"Got {input.ndim}D input, but {mode} mode needs {_RANK_OF_MODE[mode]}D input")
    if antialias:
        raise NotImplementedError(f"{fn}(): antialias=True is not supported by minigrad")
    if input.dtype.kind != "f":
        raise NotImplementedError(f"{fn}(): mode {mode!r} is not implemented for dtype {input.dtype}")
    if mode != "area" and (min(sizes) < 1 or min(input.shape[2:]) < 1):
        raise RuntimeError(
            f"Input and output sizes should be greater than 0, but got input {tuple(input.shape[2:])} output "
            f"{tuple(sizes)}"
        )
    if recompute_scale_factor:
        scales = [None] * dims
    if mode == "area":
        if dims == 1:
            return adaptive_avg_pool1d(input, sizes[0])
        if dims == 2:
            return adaptive_avg_pool2d(input, tuple(sizes))
        raise NotImplementedError(f"{fn}(): mode 'area' on 5D input needs adaptive_avg_pool3d, not provided")
    out = input
    for k in range(dims):
        taps = _taps(mode, input.shape[2 + k], sizes[k], scales[k], bool(align_corners), input.dtype,
                     shortcut=mode == "nearest" and dims == 2)
        out = _resample(out, 2 + k, taps)
    return out


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):  # noqa: A002
    """The older name of ``interpolate`` (same arguments and results)."""
    return interpolate(input, size, scale_factor, mode, align_corners)


def _check_shuffle(fn, name, input, factor):  # noqa: A002
    if not isinstance(input, Tensor):
        raise TypeError(f"{fn}(): argument 'input' must be a Tensor, got {type(input).__name__}")
    if not is_int(factor):
        raise TypeError(f"{fn}(): argument '{name}' must be an int, got {type(factor).__name__}")
    if factor <= 0:
        raise RuntimeError(f"{fn} expects a positive {name}, but got {factor}")
    if input.ndim < 3:
        raise RuntimeError(
            f"{fn} expects input to have at least 3 dimensions, but got input with {input.ndim} dimension(s)"
        )


def pixel_shuffle(input, upscale_factor):  # noqa: A002
    """Rearrange (*, C * r * r, H, W) into (*, C, H * r, W * r), r = ``upscale_factor`` (sub-pixel convolution).

    Output pixel (c, h * r + i, w * r + j) is input (c * r * r + i * r + j, h, w).

    Raises:
        TypeError: ``upscale_factor`` is not an int.
        RuntimeError: fewer than 3 dimensions, a non-positive factor, or
            channels not divisible by its square.
    """
    fn, r = "pixel_shuffle", upscale_factor
    _check_shuffle(fn, "upscale_factor", input, r)
    *lead, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError(
            f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
            f"upscale_factor, but input.size(-3)={c} is not divisible by {r * r}"
        )
    k = len(lead)
    x = input.reshape(*lead, c // (r * r), r, r, h, w)
    x = x.permute(*range(k), k, k + 3, k + 1, k + 4, k + 2)  # (*, C, H, r, W, r)
    return x.reshape(*lead, c // (r * r), h * r, w * r)


def pixel_unshuffle(input, downscale_factor):  # noqa: A002
    """The inverse of ``pixel_shuffle``: (*, C, H * r, W * r) -> (*, C * r * r, H, W), r = ``downscale_factor``.

    Raises:
        TypeError: ``downscale_factor`` is not an int.
        RuntimeError: fewer than 3 dimensions, a non-positive factor, or a
            height or width not divisible by it.
    """
    fn, r = "pixel_unshuffle", downscale_factor
    _check_shuffle(fn, "downscale_factor", input, r)
    *lead, c, h, w = input.shape
    for label, dim, value in (("height", -2, h), ("width", -1, w)):
        if value % r:
            raise RuntimeError(
                f"pixel_unshuffle expects {label} to be divisible by downscale_factor, but input.size({dim})={value} "
                f"is not divisible by {r}"
            )
    k = len(lead)
    x = input.reshape(*lead, c, h // r, r, w // r, r)
    x = x.permute(*range(k), k, k + 2, k + 4, k + 1, k + 3)  # (*, C, r, r, H, W)
    return x.reshape(*lead, c * r * r, h // r, w // r)


class Upsample(Module):
    """``F.interpolate`` as a module.

    Args:
        size, scale_factor: the output size or the scale (exactly one; see ``interpolate``).
        mode: ``"nearest"`` (default), ``"nearest-exact"``, ``"linear"``,
            ``"bilinear"``, ``"bicubic"``, ``"trilinear"`` or ``"area"``.
        align_corners, recompute_scale_factor: see ``interpolate``.

    The scale factor is kept as a float (or a tuple of floats), converted with ``float()`` as in PyTorch.

    Raises:
        TypeError or ValueError: a scale factor ``float()`` rejects (the class it raises, PyTorch's).
    """

    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None,
                 recompute_scale_factor=None):
        super().__init__()
        self.size = size
        try:
            if isinstance(scale_factor, (tuple, list)):
                self.scale_factor = tuple(float(s) for s in scale_factor)
            else:
                self.scale_factor = float(scale_factor) if scale_factor is not None else None
        except (TypeError, ValueError) as e:
            raise type(e)(f"{type(self).__name__}: scale_factor must be a number or a tuple of numbers, "
                          f"got {scale_factor!r}") from None
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input):  # noqa: A002
        """Resize ``input`` (N, C, *spatial)."""
        return interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                           recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self) -> str:
        info = f"scale_factor={self.scale_factor!r}" if self.scale_factor is not None else f"size={self.size!r}"
        return f"{info}, mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    """Nearest-neighbour upsampling of (N, C, H, W) images: ``Upsample(size, scale_factor, mode="nearest")``."""

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """Bilinear upsampling of (N, C, H, W) images with ``align_corners=True``."""

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)


class _PixelRearrange(Module):
    """What PixelShuffle and PixelUnshuffle share: ``rearrange(input, factor)``, the factor under its PyTorch name."""

    def __init__(self, rearrange, factor_name: str, factor: int):
        super().__init__()
        self._rearrange = rearrange
        self._factor_name = factor_name
        setattr(self, factor_name, factor)

    def forward(self, input):  # noqa: A002
        """Move ``input``'s elements between channels and space (see the subclass)."""
        return self._rearrange(input, getattr(self, self._factor_name))

    def extra_repr(self) -> str:
        return f"{self._factor_name}={getattr(self, self._factor_name)}"


class PixelShuffle(_PixelRearrange):
    """``F.pixel_shuffle`` as a module: (*, C * r * r, H, W) -> (*, C, H * r, W * r)."""

    def __init__(self, upscale_factor: int):
        super().__init__(pixel_shuffle, "upscale_factor", upscale_factor)


class PixelUnshuffle(_PixelRearrange):
    """``F.pixel_unshuffle`` as a module: (*, C, H * r, W * r) -> (*, C * r * r, H, W)."""

    def __init__(self, downscale_factor: int):
        super().__init__(pixel_unshuffle, "downscale_factor", downscale_factor)
