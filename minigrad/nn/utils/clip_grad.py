"""Gradient clipping: ``clip_grad_norm_``, ``clip_grad_value_``, ``get_total_norm``, ``clip_grads_with_norm_``.

As in ``torch.nn.utils``, the functions work on the ``.grad`` of parameters
(parameters without a gradient are skipped), in place and without
recording: each gradient's memory is rewritten and its version bumped, so
anything holding ``p.grad`` sees the clipped values.

The total norm is PyTorch's: the ``norm_type``-norm of the per-tensor
norms, which equals the norm of all gradients concatenated. ``foreach`` is
accepted for PyTorch's signature; minigrad computes the same numbers either way.
"""

from __future__ import annotations

import math

import numpy as np

from minigrad import backend, views
from minigrad.grad_mode import no_grad
from minigrad.promotion import get_default_dtype
from minigrad.tensor import Tensor

__all__ = ["get_total_norm", "clip_grads_with_norm_", "clip_grad_norm_", "clip_grad_value_"]


def _tensor_list(fn: str, tensors) -> list:
    """``tensors`` (a Tensor or an iterable of Tensors) as a list."""
    if isinstance(tensors, Tensor):
        return [tensors]
    try:
        items = list(tensors)
    except TypeError:
        raise TypeError(f"{fn}(): expected a Tensor or an iterable of Tensors, got {type(tensors).__name__}") from None
    for item in items:
        if not isinstance(item, Tensor):
            raise TypeError(f"{fn}(): expected an iterable of Tensors, got an element of type {type(item).__name__}")
    return items


def _grads(fn: str, parameters) -> list:
    """The ``.grad`` Tensors of ``parameters`` that have one."""
    return [p.grad for p in _tensor_list(fn, parameters) if p.grad is not None]


def _as_float(fn: str, name: str, value, what: str) -> float:
    """``float(value)``, as PyTorch converts it (numeric strings such as "inf" included).

    Raises:
        TypeError or ValueError: the class ``float()`` raises (PyTorch's), with a message naming ``name``.
    """
    try:
        return float(value)
    except (TypeError, ValueError) as e:
        raise type(e)(f"{fn}(): {name} must be {what}, got {value!r}") from None


def _norm_order(fn: str, norm_type) -> float:
    return _as_float(fn, "norm_type", norm_type, "a number (or 'inf')")


def _vector_norm(xp, flat, order: float):
    """The ``order``-norm of a 1-D array, as ``torch.linalg.vector_norm`` defines it (0: count of non-zeros)."""
    if order > 0 and flat.size == 0:
        return xp.zeros((), dtype=flat.dtype)
    if order > 0 and flat.size == 1:  # |x|, as PyTorch: x's square may underflow (below ~1e-154 in float64)
        return xp.asarray(xp.abs(flat[0]))
    return xp.asarray(xp.linalg.norm(flat, ord=order), dtype=flat.dtype)


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None) -> Tensor:
    """The ``norm_type``-norm of ``tensors`` taken together (of the norms of each).

    Args:
        tensors: a Tensor or an iterable of Tensors (usually gradients).
        norm_type: p of the p-norm; ``inf`` (or ``"inf"``) for the largest
            absolute value, 0 for the count of non-zeros.
        error_if_nonfinite: raise when the norm is NaN or infinite.
        foreach: accepted for PyTorch's signature.

    Returns:
        A 0-d Tensor on the first tensor's device, of the tensors' promoted
        dtype (0.0 of the default dtype for no tensors).

    Raises:
        TypeError: ``tensors`` holds something other than Tensors, or ``norm_type`` of a type ``float()``
            rejects. ValueError: ``norm_type`` is a string that is not a number.
        RuntimeError: ``error_if_nonfinite`` and the norm is NaN or infinite.
    """
    fn = "get_total_norm"
    tensors = _tensor_list(fn, tensors)
    order = _norm_order(fn, norm_type)
    if not tensors:
        return Tensor(np.zeros((), dtype=get_default_dtype()))
    device = tensors[0].device
    xp = backend.get_array_module(tensors[0].array)
    dtype = np.result_type(*(t.dtype for t in tensors))
    norms = [backend.to_device(_vector_norm(xp, t.array.reshape(-1), order), device) for t in tensors]
    total = _vector_norm(xp, xp.stack([n.astype(dtype, copy=False) for n in norms]), order)
    if error_if_nonfinite and not bool(xp.isfinite(total)):
        raise RuntimeError(
            f"The total norm of order {order} for gradients from `parameters` is non-finite, so it cannot be "
            "clipped. To disable this error and scale the gradients by the non-finite norm anyway, set "
            "`error_if_nonfinite=False`"
        )
    return Tensor(total)


def _scale_(grad: Tensor, factor) -> None:
    """grad *= factor in place, in the gradient's dtype, as one new version of its memory."""
    data = grad.array
    factor = factor.astype(data.dtype)
    with np.errstate(invalid="ignore", over="ignore"):  # a non-finite norm gives NaN/inf, as in PyTorch
        if backend.is_writeable(data):
            data *= factor
        else:  # a read-only (broadcast) gradient: give the Tensor new memory
            grad.array = data * factor
    views.bump_version(grad)


def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None) -> None:
    """Scale the gradients of ``parameters`` by min(1, max_norm / (total_norm + 1e-6)), in place.

    Args:
        parameters: a Tensor or an iterable of Tensors whose ``.grad`` is scaled.
        max_norm: the largest norm allowed.
        total_norm: the gradients' total norm (a Tensor or number; see ``get_total_norm``).
        foreach: accepted for PyTorch's signature.

    Raises:
        TypeError: ``parameters`` holds something other than Tensors.
        TypeError or ValueError: ``max_norm`` is not a number (the class ``float()`` raises).
    """
    max_norm = _as_float("clip_grads_with_norm_", "max_norm", max_norm, "a number")
    grads = _grads("clip_grads_with_norm_", parameters)
    if not grads:
        return
    total = total_norm.array if isinstance(total_norm, Tensor) else np.asarray(total_norm)
    xp = backend.get_array_module(total)
    coefficient = xp.minimum(max_norm / (total + 1e-6), 1.0)
    with no_grad():
        for grad in grads:
            _scale_(grad, backend.to_device(xp.asarray(coefficient), grad.device))


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None) -> Tensor:
    """Rescale the gradients of ``parameters`` in place so that their total norm is at most ``max_norm``.

    Every gradient is multiplied by min(1, max_norm / (total_norm + 1e-6)).

    Args:
        parameters: a Tensor or an iterable of Tensors (e.g. ``model.parameters()``).
        max_norm: the largest total norm allowed.
        norm_type: p of the p-norm (``inf`` for the largest absolute value).
        error_if_nonfinite: raise instead of clipping when the total norm is NaN or infinite.
        foreach: accepted for PyTorch's signature.

    Returns:
        The total norm of the gradients before clipping, a 0-d Tensor.

    Raises:
        TypeError: ``parameters`` holds something other than Tensors.
        TypeError or ValueError: ``max_norm`` or ``norm_type`` is not a number (the class ``float()`` raises).
        RuntimeError: ``error_if_nonfinite`` and the total norm is NaN or infinite.
    """
    max_norm = _as_float("clip_grad_norm_", "max_norm", max_norm, "a number")
    parameters = _tensor_list("clip_grad_norm_", parameters)
    grads = _grads("clip_grad_norm_", parameters)
    total = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total, foreach)
    return total


def clip_grad_value_(parameters, clip_value, foreach=None) -> None:
    """Clip every gradient of ``parameters`` into [-clip_value, clip_value], in place.

    Raises:
        TypeError: ``parameters`` holds something other than Tensors, or ``clip_value`` is of a type
            ``float()`` rejects.
        ValueError: ``clip_value`` is a string that is not a number, or NaN.
    """
    bound = _as_float("clip_grad_value_", "clip_value", clip_value, "a number")
    if math.isnan(bound):
        raise ValueError("clip_grad_value_(): clip_value must not be NaN")
    with no_grad():
        for grad in _grads("clip_grad_value_", parameters):
            data = grad.array
            xp = backend.get_array_module(data)
            if backend.is_writeable(data):
                xp.clip(data, -bound, bound, out=data)
            else:
                grad.array = xp.clip(data, -bound, bound)
            views.bump_version(grad)
