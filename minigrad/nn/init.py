"""Parameter initialization, with PyTorch's distributions and formulas (``torch.nn.init``).

Every function fills its tensor in place (without recording a graph) and
returns it. Random values come from ``minigrad.backend.generator(device)``,
so ``mg.manual_seed`` makes them reproducible; they follow PyTorch's
distributions but not its random streams (the same seed gives different
numbers than in PyTorch).
"""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np

from minigrad import backend
from minigrad.tensor import Tensor
from minigrad.views import bump_version

__all__ = [
    "calculate_gain", "calculate_fan_in_and_fan_out", "uniform_", "normal_", "constant_", "zeros_",
    "ones_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_",
]

_LINEAR_FNS = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
               "conv_transpose3d", "sigmoid")


def calculate_gain(nonlinearity: str, param=None) -> float:
    """The recommended gain for ``nonlinearity`` (PyTorch's table).

    linear/conv/sigmoid: 1, tanh: 5/3, relu: sqrt(2), leaky_relu:
    sqrt(2 / (1 + negative_slope**2)) with ``param`` the slope (default 0.01),
    selu: 3/4.

    Raises:
        ValueError: unknown nonlinearity, or a slope that is not a number.
    """
    if nonlinearity in _LINEAR_FNS:
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, (int, float)) and not isinstance(param, bool):
            slope = param
        else:
            raise ValueError(f"calculate_gain: negative_slope {param!r} is not a valid number")
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"calculate_gain: unsupported nonlinearity {nonlinearity!r}")


def calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    """``(fan_in, fan_out)`` of a weight of shape (out, in, *kernel): in*k and out*k, k = prod(kernel).

    Raises:
        TypeError: ``tensor`` is not a Tensor.
        ValueError: the tensor has fewer than 2 dimensions.
    """
    _expect_tensor(tensor, "calculate_fan_in_and_fan_out")
    if tensor.ndim < 2:
        raise ValueError(
            "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions "
            f"(got shape {tuple(tensor.shape)})"
        )
    receptive_field = math.prod(tensor.shape[2:])
    return tensor.shape[1] * receptive_field, tensor.shape[0] * receptive_field


def _correct_fan(tensor: Tensor, mode: str) -> int:
    if not isinstance(mode, str):
        raise ValueError(f"mode {mode!r} not supported, please use one of ['fan_in', 'fan_out']")
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"mode {mode!r} not supported, please use one of ['fan_in', 'fan_out']")
    fan_in, fan_out = calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def _expect_tensor(tensor, fn: str) -> None:
    if not isinstance(tensor, Tensor):
        raise TypeError(f"{fn}: tensor must be a Tensor, got {type(tensor).__name__}")


def _expect_numbers(fn: str, **values) -> None:
    for name, value in values.items():
        if not isinstance(value, (int, float, np.integer, np.floating)) or isinstance(value, bool):
            raise TypeError(f"{fn}: {name} must be a real number, got {type(value).__name__}")


def _sample_dtype(tensor: Tensor):
    """The dtype to draw samples in: the tensor's when the generators support it."""
    dtype = tensor.dtype
    if dtype.kind != "f":  # PyTorch's random kernels are not implemented for the other dtypes
        raise NotImplementedError(f"init: expected a floating point tensor, got dtype {dtype}")
    return dtype if dtype in (np.float32, np.float64) else np.dtype(np.float64)


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0) -> Tensor:
    """Fill ``tensor`` with samples from U(a, b), in place; returns it.

    Raises:
        RuntimeError: ``a > b``, a bound that is NaN or beyond the tensor dtype's finite range, or
            ``b - a`` beyond it.
        TypeError: the tensor is not a Tensor, or a bound is not a number.
        NotImplementedError: the tensor is not floating point.
    """
    _expect_tensor(tensor, "uniform_")
    _expect_numbers("uniform_", a=a, b=b)
    dtype = _sample_dtype(tensor)
    largest = float(np.finfo(tensor.dtype).max)
    for name, bound in (("a", a), ("b", b)):
        if not -largest <= bound <= largest:  # also NaN and infinity
            raise RuntimeError(f"uniform_: {name}={bound} is out of bounds for {tensor.dtype}")
    if a > b:
        raise RuntimeError(f"uniform_: expects a <= b, got a={a} and b={b}")
    if b - a > largest:
        raise RuntimeError(f"uniform_: expects b - a <= {largest:g} (the largest {tensor.dtype}), got a={a} and b={b}")
    device = tensor.device
    with backend.device_context(device):
        samples = backend.generator(device).random(tensor.shape, dtype=dtype)
        samples *= b - a
        samples += a
        tensor.array[...] = samples
    bump_version(tensor)
    return tensor


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0) -> Tensor:
    """Fill ``tensor`` with samples from N(mean, std**2), in place; returns it.

    Raises:
        RuntimeError: ``std`` is negative or NaN.
        TypeError: the tensor is not a Tensor, or mean/std is not a number.
        NotImplementedError: the tensor is not floating point.
    """
    _expect_tensor(tensor, "normal_")
    _expect_numbers("normal_", mean=mean, std=std)
    dtype = _sample_dtype(tensor)
    if not std >= 0:  # also NaN
        raise RuntimeError(f"normal_: expects std >= 0.0, got std={std}")
    device = tensor.device
    with backend.device_context(device):
        samples = backend.generator(device).standard_normal(tensor.shape, dtype=dtype)
        samples *= std
        samples += mean
        tensor.array[...] = samples
    bump_version(tensor)
    return tensor


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill ``tensor`` with ``val`` (a number or a one-element Tensor) in place; returns it.

    Raises:
        TypeError: ``tensor`` is not a Tensor, or ``val`` is neither a number nor a Tensor.
    """
    _expect_tensor(tensor, "constant_")
    if not isinstance(val, (numbers.Number, Tensor)):
        raise TypeError(f"constant_: val must be a number, got {type(val).__name__}")
    tensor.array[...] = val
    bump_version(tensor)
    return tensor


def zeros_(tensor: Tensor) -> Tensor:
    """Fill ``tensor`` with zeros in place; returns it."""
    return constant_(tensor, 0)


def ones_(tensor: Tensor) -> Tensor:
    """Fill ``tensor`` with ones in place; returns it."""
    return constant_(tensor, 1)


def xavier_uniform_(tensor: Tensor, gain: float = 1.0) -> Tensor:
    """Glorot uniform: U(-bound, bound) with bound = gain * sqrt(6 / (fan_in + fan_out)).

    Raises:
        ValueError: the tensor has fewer than 2 dimensions.
    """
    fan_in, fan_out = calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound)


def xavier_normal_(tensor: Tensor, gain: float = 1.0) -> Tensor:
    """Glorot normal: N(0, std**2) with std = gain * sqrt(2 / (fan_in + fan_out)).

    Raises:
        ValueError: the tensor has fewer than 2 dimensions.
    """
    fan_in, fan_out = calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std)


def kaiming_uniform_(tensor: Tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu"):
    """He uniform: U(-bound, bound) with bound = gain * sqrt(3 / fan), gain = calculate_gain(nonlinearity, a).

    ``mode`` picks ``fan_in`` (preserves the forward variance) or ``fan_out``
    (the backward one). A tensor with no elements is left alone, with a warning.

    Raises:
        TypeError: ``tensor`` is not a Tensor.
        ValueError: fewer than 2 dimensions, unknown mode or nonlinearity.
    """
    return _kaiming_(tensor, "kaiming_uniform_", a, mode, nonlinearity, _uniform_with_std_)


def kaiming_normal_(tensor: Tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu"):
    """He normal: N(0, std**2) with std = gain / sqrt(fan), gain = calculate_gain(nonlinearity, a).

    A tensor with no elements is left alone, with a warning.

    Raises:
        TypeError: ``tensor`` is not a Tensor.
        ValueError: fewer than 2 dimensions, unknown mode or nonlinearity.
    """
    return _kaiming_(tensor, "kaiming_normal_", a, mode, nonlinearity, _normal_with_std_)


def _kaiming_(tensor, fn: str, a, mode: str, nonlinearity: str, fill_with_std):
    """Fill ``tensor`` by ``fill_with_std(tensor, gain / sqrt(fan))``; warn and leave it when it has no elements."""
    _expect_tensor(tensor, fn)
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=3)
        return tensor
    return fill_with_std(tensor, calculate_gain(nonlinearity, a) / math.sqrt(_correct_fan(tensor, mode)))


def _uniform_with_std_(tensor: Tensor, std: float) -> Tensor:
    """Fill from U(-bound, bound), bound = sqrt(3) * std: the uniform distribution with deviation ``std``."""
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound)


def _normal_with_std_(tensor: Tensor, std: float) -> Tensor:
    """Fill from N(0, std**2)."""
    return normal_(tensor, 0.0, std)
