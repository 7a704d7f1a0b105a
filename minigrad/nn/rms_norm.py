"""Root-mean-square layer normalization: ``F.rms_norm`` and ``nn.RMSNorm``.

RMS norm rescales each sample by the root mean square of its trailing
``normalized_shape`` values, without subtracting the mean (Zhang and Sennrich,
2019)::

    y = x / sqrt(mean(x * x over the normalized dims) + eps) * weight

The function is a composition of recorded ops, so its gradients with respect
to the input and the weight come from autograd. As in PyTorch:

* half-precision inputs are normalized in float32 and the result is cast back;
* ``eps=None`` means the machine epsilon of that computation dtype
  (``finfo(float32).eps`` for float16 and float32 inputs);
* the weight may have another floating dtype: the product is taken in the
  promoted dtype and the result has the input's dtype (the weight's gradient
  has the weight's);
* complex inputs square without conjugating (``x * x``, not ``|x|**2``).

Names, signatures, defaults and exception classes mirror PyTorch's.
"""

from __future__ import annotations

import math

import numpy as np

from minigrad import backend
from minigrad.grad_mode import no_grad
from minigrad.nn.loss_utils import expect_tensor
from minigrad.nn.module import Module
from minigrad.nn.parameter import Parameter
from minigrad.promotion import get_default_dtype
from minigrad.tensor import Tensor

__all__ = ["rms_norm", "RMSNorm"]


def _is_int(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def _shape_argument(fn: str, normalized_shape) -> tuple:
    """``normalized_shape`` (a tuple or list of ints) as a tuple of ints; TypeError otherwise."""
    if not isinstance(normalized_shape, (tuple, list)):
        raise TypeError(
            f"{fn}(): argument 'normalized_shape' must be a tuple of ints, got {type(normalized_shape).__name__} "
            "(write (n,) for a single dimension)"
        )
    for position, n in enumerate(normalized_shape):
        if not _is_int(n):
            raise TypeError(
                f"{fn}(): argument 'normalized_shape' must be a tuple of ints, but found element of type "
                f"{type(n).__name__} at pos {position}"
            )
    return tuple(int(n) for n in normalized_shape)


def _eps_argument(fn: str, eps):
    """``eps`` as a float, or None; TypeError unless it is a real number (or a one-element tensor)."""
    if eps is None:
        return None
    if isinstance(eps, Tensor) and eps.numel() == 1 and eps.dtype.kind in "biuf":
        return float(eps.array.reshape(()))
    if not isinstance(eps, (int, float, np.integer, np.floating)):
        raise TypeError(f"{fn}(): argument 'eps' must be a float or None, got {type(eps).__name__}")
    return float(eps)


def _check_input_shape(fn: str, input, shape: tuple) -> None:  # noqa: A002
    """PyTorch's errors for an input that does not end in ``shape``: ValueError if too short, else RuntimeError."""
    if len(shape) > input.ndim:
        raise ValueError(
            f"{fn}(): input tensor must have at least {len(shape)} dimensions (the length of normalized_shape "
            f"{list(shape)}), but got {input.ndim}"
        )
    if tuple(input.shape[input.ndim - len(shape):]) != shape:
        raise RuntimeError(
            f"{fn}(): given normalized_shape={list(shape)}, expected input with shape "
            f"[*, {', '.join(map(str, shape))}], but got input of size {list(input.shape)}"
        )


def rms_norm(input, normalized_shape, weight=None, eps=None):  # noqa: A002  (PyTorch's names)
    """Divide ``input`` by the root mean square of its trailing ``normalized_shape`` values, then scale.

    y = x / sqrt(mean(x * x) + eps) * weight, the mean taken over the last
    ``len(normalized_shape)`` dimensions.

    Args:
        input: floating or complex Tensor (*, *normalized_shape).
        normalized_shape: tuple or list of ints, the trailing shape to
            normalize over (an int is refused, as by PyTorch's function; the
            module accepts one).
        weight: optional Tensor of shape ``normalized_shape``.
        eps: added to the mean square; None (default) for the machine
            epsilon of the computation dtype.

    Returns:
        Tensor of the input's shape and dtype.

    Raises:
        TypeError: ``input`` or ``weight`` is not a Tensor, ``normalized_shape``
            is not a tuple of ints, or ``eps`` is not a number.
        RuntimeError: ``normalized_shape`` is empty, ``weight``'s shape is not
            ``normalized_shape``, or the input does not end in ``normalized_shape``.
        ValueError: ``normalized_shape`` is longer than the input's rank (PyTorch's class).
        NotImplementedError: the input is neither floating point nor complex.
    """
    fn = "rms_norm"
    expect_tensor(fn, "input", input)
    shape = _shape_argument(fn, normalized_shape)
    if weight is not None:
        expect_tensor(fn, "weight", weight)
    eps = _eps_argument(fn, eps)
    if not shape:
        raise RuntimeError(
            f"{fn}(): expected normalized_shape to have at least one dimension, but got normalized_shape = []"
        )
    if weight is not None and tuple(weight.shape) != shape:
        raise RuntimeError(
            f"{fn}(): expected weight to be of the same shape as normalized_shape, but got weight of shape "
            f"{list(weight.shape)} and normalized_shape = {list(shape)}"
        )
    _check_input_shape(fn, input, shape)
    if input.dtype.kind not in "fc":
        raise NotImplementedError(
            f"{fn}(): not implemented for dtype {input.dtype} (floating point or complex input only; "
            "convert it with .float())"
        )
    compute_dtype = np.dtype(np.float32) if input.dtype == np.float16 else input.dtype
    if eps is None:
        eps = float(np.finfo(compute_dtype).eps)  # a complex dtype's finfo is its real part's
    x = input.to(compute_dtype)
    if math.prod(shape) == 0:  # no values to average: the (empty) result is the input itself
        out = x
    else:
        dims = tuple(range(-len(shape), 0))
        out = x * ((x * x).mean(dims, keepdim=True) + eps).rsqrt()
    if weight is not None:
        out = out * weight
    return out.to(input.dtype)


def _module_shape(normalized_shape) -> tuple:
    """The module's ``normalized_shape``: an int becomes (int,). TypeError for non-ints, RuntimeError if negative."""
    if _is_int(normalized_shape):
        normalized_shape = (normalized_shape,)
    if not isinstance(normalized_shape, (tuple, list)):
        raise TypeError(
            f"RMSNorm: normalized_shape must be an int or a tuple of ints, got {type(normalized_shape).__name__}"
        )
    for n in normalized_shape:
        if not _is_int(n):
            raise TypeError(f"RMSNorm: normalized_shape must contain ints, got {n!r} in {normalized_shape!r}")
        if n < 0:
            raise RuntimeError(f"RMSNorm: normalized_shape must not contain negative sizes, got {normalized_shape!r}")
    return tuple(int(n) for n in normalized_shape)


class RMSNorm(Module):
    """RMS normalization over the trailing ``normalized_shape`` dimensions (see ``F.rms_norm``).

    Args:
        normalized_shape: an int or a tuple of ints.
        eps: added to the mean square; None (default) for the machine
            epsilon of the computation dtype.
        elementwise_affine: learn ``weight`` (ones) of shape ``normalized_shape`` (default True).
        device, dtype: where and of which floating dtype the weight is made.

    The ``state_dict`` holds ``weight`` (when affine), as in PyTorch.

    Raises:
        TypeError: ``normalized_shape`` is not an int or a tuple of ints, or ``dtype`` is not a dtype.
        RuntimeError: a negative size, an unknown device, or a weight dtype that is not floating point.
        (forward) the errors of ``F.rms_norm``.
    """

    def __init__(self, normalized_shape, eps: float | None = None, elementwise_affine: bool = True,
                 device=None, dtype=None):
        super().__init__()
        self.normalized_shape = _module_shape(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            device = backend.normalize_device(device)
            try:
                dtype = get_default_dtype() if dtype is None else np.dtype(dtype)
            except (TypeError, ValueError):  # NumPy's, for something that is not a dtype
                raise TypeError(f"RMSNorm: dtype must be a floating point dtype, got {dtype!r:.40}") from None
            xp = backend.module_for_device(device)
            with backend.device_context(device):
                self.weight = Parameter(xp.ones(self.normalized_shape, dtype=dtype))
        else:
            self.register_parameter("weight", None)

    def reset_parameters(self) -> None:
        """Set the weight (when affine) to ones, in place."""
        if self.weight is not None:
            with no_grad():
                self.weight.fill_(1)

    def forward(self, input):  # noqa: A002
        """Normalize ``input`` (shape ``(*, *normalized_shape)``)."""
        return rms_norm(input, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"
