"""Alpha dropout (``F.alpha_dropout``, ``F.feature_alpha_dropout``, ``nn.AlphaDropout``,
``nn.FeatureAlphaDropout``), and the masked-noise machinery the dropouts here share.

Alpha dropout (Klambauer et al., 2017) keeps the mean and variance of
self-normalizing (SELU) activations: a dropped unit takes SELU's negative
saturation value -alpha' (alpha' = 1.7580993408473766) instead of zero, and the
result is then scaled and shifted by

    a = 1 / sqrt((alpha'^2 * p + 1) * (1 - p)),   b = alpha' * a * p

so that, with keep = 1 (probability 1 - p) or 0,

    y = a * (x * keep - alpha' * (1 - keep)) + b = x * (a * keep) + (alpha' * a * (keep - 1) + b).

The feature variant draws one keep value per (sample, channel) and applies it
to the whole channel. Like PyTorch's: ``training`` defaults to False for the
functions; when not training, with p = 0 or with an empty input the input
itself is returned; with p = 1 the result is zeros (PyTorch multiplies by 0).

Masks come from the generator of the input's device (``mg.manual_seed``
makes them reproducible; they differ from PyTorch's draws). The gradient of
the input is the upstream gradient times ``a * keep``, the same mask as the
forward pass.
"""

from __future__ import annotations

import math

import numpy as np

from minigrad import backend
from minigrad.nn.module import Module
from minigrad.nn.pointwise_activations import in_place
from minigrad.ops._util import expect_tensor
from minigrad.tensor import Tensor

__all__ = ["alpha_dropout", "feature_alpha_dropout", "AlphaDropout", "FeatureAlphaDropout"]

# -scale * alpha of SELU: where SELU saturates for very negative inputs, the value a dropped unit takes.
SELU_NEGATIVE_SATURATION = 1.7580993408473766


def check_probability(fn: str, p) -> float:
    """``p`` as a float, checked as PyTorch's Python code checks it (NaN passes; see ``check_call``).

    Raises:
        TypeError: ``p`` is not a real number (nor a one-element real tensor).
        ValueError: ``p`` is below 0 or above 1.
    """
    if isinstance(p, Tensor) and p.numel() == 1 and p.dtype.kind in "biuf":
        p = float(p.array.reshape(()))
    if not isinstance(p, (int, float, np.integer, np.floating)):
        raise TypeError(f"{fn}(): dropout probability p must be a number, got {type(p).__name__}")
    if p < 0 or p > 1:
        raise ValueError(f"{fn}(): dropout probability has to be between 0 and 1, but got {p!r}")
    return float(p)


def check_call(fn: str, input, p: float, training) -> None:  # noqa: A002
    """The checks PyTorch's dropout kernels make: a Tensor input, a bool ``training``, a ``p`` that is not NaN.

    Raises:
        TypeError: ``input`` is not a Tensor, or ``training`` is not a bool.
        RuntimeError: ``p`` is NaN.
    """
    expect_tensor(input, fn, "input")
    if not isinstance(training, bool):
        raise TypeError(f"{fn}(): argument 'training' must be a bool, got {type(training).__name__}")
    if math.isnan(p):
        raise RuntimeError(f"{fn}(): dropout probability has to be between 0 and 1, but got {p}")


def masked_noise(fn: str, input, p: float, training: bool, inplace, mask_dims: int | None, alpha: bool):  # noqa: A002
    """Dropout of ``input`` with a keep mask over its first ``mask_dims`` dimensions (None: every element).

    Plain dropout scales kept values by 1 / (1 - p); alpha dropout applies the
    affine map of the module docstring. Returns ``input`` when not training,
    when p is 0 or when it is empty; zeros of its dtype when p is 1.
    With ``inplace`` the result is written into ``input`` (and ``input`` returned).

    Raises:
        RuntimeError: fewer than ``mask_dims`` dimensions; an integer or bool
            input (the scaled mask cannot be stored in it); in grad mode and
            in place, a leaf that requires grad.
        NotImplementedError: a complex input (PyTorch draws no complex masks).
    """
    if not training or p == 0 or input.numel() == 0:
        return input
    xp = backend.get_array_module(input.array)
    if p == 1:
        zero = Tensor._make(xp.zeros((), dtype=input.dtype), False, None, 0)

        def op(x):
            return x * zero
    else:
        op = _noise_op(fn, input, p, mask_dims, alpha)
    return in_place(fn + "_", input, op) if inplace else op(input)


def _noise_op(fn: str, input, p: float, mask_dims: int | None, alpha: bool):  # noqa: A002
    """Draw the mask for ``input`` and return the map x -> x * scale (+ shift) that applies it."""
    if mask_dims is not None and input.ndim < mask_dims:
        raise RuntimeError(
            f"{fn}(): feature dropout drops whole channels, so the input needs a channel dimension; got a "
            f"{input.ndim}-D input of shape {list(input.shape)}"
        )
    if input.dtype.kind == "c":
        raise NotImplementedError(f"{fn}(): not implemented for complex dtype {input.dtype} (use a real input)")
    if input.dtype.kind != "f":
        raise RuntimeError(
            f"{fn}(): input must be floating point in training, got dtype {input.dtype} (the scaled result "
            "cannot be stored in it; convert it with .float())"
        )
    shape = input.shape if mask_dims is None else tuple(input.shape[:mask_dims]) + (1,) * (input.ndim - mask_dims)
    draw_dtype = input.dtype if input.dtype in (np.float32, np.float64) else np.float32
    uniform = backend.generator(backend.device_of(input.array)).random(shape, dtype=draw_dtype)
    keep = (uniform >= p).astype(input.dtype)
    if not alpha:
        scale = Tensor._make(keep * (1.0 / (1.0 - p)), False, None, 0)
        return lambda x: x * scale
    a = 1.0 / math.sqrt((SELU_NEGATIVE_SATURATION ** 2 * p + 1) * (1 - p))
    shift = (keep - 1) * (SELU_NEGATIVE_SATURATION * a) + SELU_NEGATIVE_SATURATION * a * p
    scale = Tensor._make(keep * a, False, None, 0)
    shift = Tensor._make(shift.astype(input.dtype, copy=False), False, None, 0)
    return lambda x: x * scale + shift


def _alpha_dropout(fn: str, input, p, training, inplace, mask_dims):  # noqa: A002
    p = check_probability(fn, p)
    check_call(fn, input, p, training)
    return masked_noise(fn, input, p, training, inplace, mask_dims, alpha=True)


def alpha_dropout(input, p=0.5, training=False, inplace=False):  # noqa: A002  (PyTorch's names)
    """Alpha dropout of each element in training mode: dropped ones become -alpha', then an affine map.

    Keeps zero mean and unit variance for standard-normal inputs (see the
    module docstring). Any shape, including 0-d.

    Args:
        input: floating Tensor.
        p: probability of dropping each element (default 0.5).
        training: apply it (default False, as in PyTorch's function); must be a bool.
        inplace: write the result into ``input`` and return it.

    Returns:
        Tensor of the input's shape and dtype; ``input`` itself when not
        training, when p is 0, or when it is empty; zeros when p is 1.

    Raises:
        TypeError: ``p`` is not a number, ``input`` is not a Tensor, or ``training`` is not a bool.
        ValueError: ``p`` is outside [0, 1].
        RuntimeError: ``p`` is NaN; an integer or bool input in training
            with 0 < p < 1; in place on a leaf that requires grad.
        NotImplementedError: a complex input in training with 0 < p < 1.
    """
    return _alpha_dropout("alpha_dropout", input, p, training, inplace, None)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):  # noqa: A002
    """Alpha dropout of whole channels: one keep value per (sample, channel) of an (N, C, *) input.

    A dropped channel takes the value -alpha' everywhere before the affine
    map (see ``alpha_dropout`` for the arguments and the returned value).

    Raises:
        The errors of ``alpha_dropout``, and RuntimeError for an input of
        fewer than 2 dimensions in training with 0 < p < 1.
    """
    return _alpha_dropout("feature_alpha_dropout", input, p, training, inplace, 2)


class DropoutModule(Module):
    """Shared constructor of the dropout modules here: probability ``p`` and ``inplace``, checked as PyTorch does.

    A NaN ``p`` is accepted here and refused (RuntimeError) when the module is called.

    Raises:
        TypeError: ``p`` is not a number.
        ValueError: ``p`` is outside [0, 1].
    """

    def __init__(self, p: float = 0.5, inplace: bool = False):
        super().__init__()
        check_probability(type(self).__name__, p)
        self.p = p
        self.inplace = inplace

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class AlphaDropout(DropoutModule):
    """Alpha dropout of each element in training mode (see ``F.alpha_dropout``); the identity in eval mode.

    As in PyTorch, ``inplace`` is stored but the module does not write into its input.
    """

    def forward(self, input):  # noqa: A002
        """Apply alpha dropout (training) or return ``input`` (eval)."""
        return alpha_dropout(input, self.p, self.training)


class FeatureAlphaDropout(DropoutModule):
    """Alpha dropout of whole channels of (N, C, *) inputs in training mode (see ``F.feature_alpha_dropout``).

    As in PyTorch, ``inplace`` is stored but the module does not write into its input.
    """

    def forward(self, input):  # noqa: A002
        """Apply channel-wise alpha dropout (training) or return ``input`` (eval)."""
        return feature_alpha_dropout(input, self.p, self.training)
