"""Padding: ``F.pad`` and the modules ``ZeroPad*d``, ``ConstantPad*d``, ``ReflectionPad*d``,
``ReplicationPad*d`` and ``CircularPad*d`` (1-D, 2-D and 3-D).

``pad`` lists amounts from the last dimension backwards, two per dimension
(before, after), as in PyTorch: ``(left, right, top, bottom)`` pads the last
two dimensions. Constant padding (one op, ``minigrad.ops.padding``) accepts
negative amounts, which crop. The other modes pad the last 1, 2 or 3
dimensions of a (batched or unbatched) input by gathering input positions
with an integer index per padded dimension, so their gradients (sums over
the positions each input value was copied to) and higher orders come from
the indexing op:

* ``reflect``: the input mirrored about its edge values (``dcb|abcd|cba``), amounts below the size;
* ``replicate``: the edge values repeated (``aaa|abcd|ddd``);
* ``circular``: the input wrapped around (``bcd|abcd|abc``), amounts at most the size (after any crop).

Negative amounts crop in these modes too (circular padding wraps around
what the crop leaves, as PyTorch does).
"""

from __future__ import annotations

import numpy as np

from minigrad.nn.module import Module
from minigrad.ops.indexing import index
from minigrad.ops.padding import ConstantPad
from minigrad.tensor import Tensor

__all__ = [
    "pad", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d",
    "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
    "ReplicationPad3d", "CircularPad1d", "CircularPad2d", "CircularPad3d",
]

_MODES = ("constant", "reflect", "replicate", "circular")


def _is_int(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def _pairs(input, pad):  # noqa: A002
    """``pad`` as one (before, after) pair per padded dimension, the last dimension first.

    Raises:
        TypeError: ``pad`` is not a sequence of ints.
        RuntimeError: an odd number of amounts, or more pairs than dimensions.
    """
    if not isinstance(pad, (tuple, list)):
        raise TypeError(f"pad(): argument 'pad' must be a tuple of ints, got {type(pad).__name__}")
    for position, amount in enumerate(pad):
        if not _is_int(amount):
            raise TypeError(
                f"pad(): argument 'pad' must be a tuple of ints, but found element of type "
                f"{type(amount).__name__} at pos {position}"
            )
    if len(pad) % 2:
        raise RuntimeError(f"pad(): padding length must be divisible by 2, got {len(pad)} amounts {tuple(pad)}")
    if len(pad) > 2 * input.ndim:
        raise RuntimeError(
            "pad(): padding length should be less than or equal to two times the input dimension but got "
            f"padding length {len(pad)} and input of dimension {input.ndim}"
        )
    return [(int(pad[i]), int(pad[i + 1])) for i in range(0, len(pad), 2)]


def _source_positions(mode, size, before, after):
    """For each output position of one padded dimension, the input position it copies (int64 array)."""
    if mode == "circular":  # PyTorch crops first, then wraps around what is left
        start, stop = max(-before, 0), size - max(-after, 0)
        kept = stop - start
        return start + np.arange(-max(before, 0), kept + max(after, 0), dtype=np.int64) % kept
    positions = np.arange(-before, size + after, dtype=np.int64)
    if mode == "reflect":
        positions = np.abs(positions)
        return np.where(positions >= size, 2 * (size - 1) - positions, positions)
    return np.clip(positions, 0, size - 1)  # replicate


def _check_gather_padding(mode, input, pairs):  # noqa: A002
    """PyTorch's conditions on reflect/replicate/circular padding (see ``pad``)."""
    count = len(pairs)
    if count not in (1, 2, 3) or input.ndim not in (count + 1, count + 2):
        raise NotImplementedError(
            f"pad(): padding size {2 * count} is not supported for {input.ndim}D input tensor with mode "
            f"{mode!r}; non-constant padding pads the last 1, 2 or 3 dimensions of a 2D or 3D, 3D or 4D, "
            "4D or 5D input (padding size 2, 4 or 6)"
        )
    if 0 in input.shape[1:] or (input.ndim == count + 1 and 0 in input.shape):
        raise RuntimeError(
            f"pad(): {mode} padding expects an input whose dimensions other than the batch are non-empty, "
            f"got shape {input.shape}"
        )
    for k, (before, after) in enumerate(pairs):
        dim = input.ndim - 1 - k
        size = input.shape[dim]
        if mode == "reflect" and (before >= size or after >= size):
            raise RuntimeError(
                f"pad(): padding size should be less than the corresponding input dimension, but got padding "
                f"({before}, {after}) at dimension {dim} of input {list(input.shape)}"
            )
        kept = size + min(before, 0) + min(after, 0)
        if mode == "circular" and (before > kept or after > kept):
            raise RuntimeError(
                f"pad(): padding ({before}, {after}) at dimension {dim} of input {list(input.shape)} causes "
                f"wrapping around more than once (at most the {kept} positions left after cropping)"
            )
        if size + before + after < 0 or size + min(before, 0) + min(after, 0) < 0:
            raise RuntimeError(f"pad(): padding ({before}, {after}) crops more than the {size} positions of "
                               f"dimension {dim} of input {list(input.shape)}")


def pad(input, pad, mode="constant", value=None):  # noqa: A002  (PyTorch's names)
    """Pad (or, with negative amounts, crop) the trailing dimensions of ``input``.

    Args:
        input: Tensor of any shape (``constant``), or with the padded
            dimensions plus one or two leading ones (the other modes).
        pad: ints ``(before_last, after_last, before_second_last, ...)``,
            two per padded dimension, at most two per input dimension.
        mode: ``"constant"`` (default), ``"reflect"``, ``"replicate"`` or ``"circular"``.
        value: the fill of constant padding (default 0); other modes take none.

    Returns:
        Tensor of the input's dtype; each padded dimension grows by ``before + after``.

    Raises:
        TypeError: ``input`` is not a Tensor, ``pad`` is not a sequence of ints, ``mode`` is not a str.
        NotImplementedError: an unknown mode, or a mode other than constant
            with a number of padded dimensions the input's rank does not allow.
        RuntimeError: an odd number of amounts, more amounts than twice the
            rank, a value with a mode other than constant, reflect amounts not
            below the size, circular amounts above it, or a crop larger than
            the dimension.
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"pad(): argument 'input' must be a Tensor, got {type(input).__name__}")
    pairs = _pairs(input, pad)
    if not isinstance(mode, str):
        raise TypeError(f"pad(): argument 'mode' must be str, not {type(mode).__name__}")
    if mode not in _MODES:
        raise NotImplementedError(f"pad(): unrecognised padding mode {mode!r}, expected one of {_MODES}")
    if mode != "constant":
        if value is not None and value != 0:
            raise RuntimeError(f'pad(): padding mode "{mode}" doesn\'t take in value argument')
        _check_gather_padding(mode, input, pairs)
        out = input
        for k, (before, after) in enumerate(pairs):
            dim = input.ndim - 1 - k
            positions = _source_positions(mode, input.shape[dim], before, after)
            out = index(out, (slice(None),) * dim + (positions,))
        return out
    if value is None:
        value = 0
    if not isinstance(value, (int, float, complex, np.number, np.bool_)):
        raise TypeError(f"pad(): argument 'value' must be a number, got {type(value).__name__}")
    full = [(0, 0)] * (input.ndim - len(pairs)) + pairs[::-1]
    for dim, (before, after) in enumerate(full):
        size = input.shape[dim]
        if size + min(before, 0) + min(after, 0) < 0:
            raise RuntimeError(
                f"pad(): padding ({before}, {after}) crops more than the {size} positions of dimension {dim} of "
                f"input {list(input.shape)}"
            )
    return ConstantPad(full, np.asarray(value).astype(input.dtype))(input)


def _ntuple(padding, count: int, name: str) -> tuple:
    """``padding`` (an int, repeated ``count`` times, or a sequence of ints) as a tuple."""
    if _is_int(padding):
        return (int(padding),) * count
    if isinstance(padding, (tuple, list)) and all(_is_int(p) for p in padding):
        return tuple(int(p) for p in padding)
    raise TypeError(f"{name}: padding must be an int or a tuple of {count} ints, got {padding!r}")


class _Pad(Module):
    """Shared body: a padding mode over the last ``_dims`` dimensions (``padding`` has 2 * ``_dims`` ints).

    A subclass names both in its class statement: ``class ReflectionPad2d(_Pad, dims=2, mode="reflect")``.
    """

    _dims = 1
    _mode = "constant"

    def __init_subclass__(cls, dims: int | None = None, mode: str | None = None, **kwargs):
        super().__init_subclass__(**kwargs)
        # What the class statement leaves out is inherited (``class ZeroPad2d(_ZeroPad, ConstantPad2d)``).
        if dims is not None:
            cls._dims = dims
        if mode is not None:
            cls._mode = mode

    def __init__(self, padding):
        super().__init__()
        self.padding = _ntuple(padding, 2 * self._dims, type(self).__name__)

    def forward(self, input):  # noqa: A002
        """``F.pad(input, self.padding, mode)``."""
        return pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPad(_Pad):
    def __init__(self, padding, value):
        super().__init__(padding)
        self.value = value

    def forward(self, input):  # noqa: A002
        """``F.pad(input, self.padding, "constant", self.value)``."""
        return pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPad, dims=1):
    """Pad the last dimension with ``value``: ``padding`` is an int or (left, right); negative amounts crop."""


class ConstantPad2d(_ConstantPad, dims=2):
    """Pad the last two dimensions with ``value``: ``padding`` is an int or (left, right, top, bottom)."""


class ConstantPad3d(_ConstantPad, dims=3):
    """Pad the last three dimensions with ``value``: ``padding`` is an int or a 6-tuple (last dimension first)."""


class _ZeroPad(_ConstantPad):
    """Shared body of ``ZeroPad*d``: constant padding with 0, shown (as in PyTorch) by its padding alone."""

    def __init__(self, padding):
        super().__init__(padding, 0.0)

    extra_repr = _Pad.extra_repr


class ZeroPad1d(_ZeroPad, ConstantPad1d):
    """Pad the last dimension with zeros: ``padding`` is an int or (left, right)."""


class ZeroPad2d(_ZeroPad, ConstantPad2d):
    """Pad the last two dimensions with zeros: ``padding`` is an int or (left, right, top, bottom)."""


class ZeroPad3d(_ZeroPad, ConstantPad3d):
    """Pad the last three dimensions with zeros: ``padding`` is an int or a 6-tuple (last dimension first)."""


class ReflectionPad1d(_Pad, dims=1, mode="reflect"):
    """Mirror the last dimension about its edges of an (N, C, W) or (C, W) input; amounts below W."""


class ReflectionPad2d(_Pad, dims=2, mode="reflect"):
    """Mirror the last two dimensions of an (N, C, H, W) or (C, H, W) input; ``padding`` (left, right, top, bottom)."""


class ReflectionPad3d(_Pad, dims=3, mode="reflect"):
    """Mirror the last three dimensions of an (N, C, D, H, W) or (C, D, H, W) input."""


class ReplicationPad1d(_Pad, dims=1, mode="replicate"):
    """Repeat the edge values of the last dimension of an (N, C, W) or (C, W) input."""


class ReplicationPad2d(_Pad, dims=2, mode="replicate"):
    """Repeat the edge values of the last two dimensions of an (N, C, H, W) or (C, H, W) input."""


class ReplicationPad3d(_Pad, dims=3, mode="replicate"):
    """Repeat the edge values of the last three dimensions of an (N, C, D, H, W) or (C, D, H, W) input."""


class CircularPad1d(_Pad, dims=1, mode="circular"):
    """Wrap the last dimension of an (N, C, W) or (C, W) input around; amounts at most W."""


class CircularPad2d(_Pad, dims=2, mode="circular"):
    """Wrap the last two dimensions of an (N, C, H, W) or (C, H, W) input around."""


class CircularPad3d(_Pad, dims=3, mode="circular"):
    """Wrap the last three dimensions of an (N, C, D, H, W) or (C, D, H, W) input around."""
