"""Flatten parameters into one vector and back: ``parameters_to_vector``, ``vector_to_parameters``."""

from __future__ import annotations

from minigrad.grad_mode import no_grad
from minigrad.ops.shape import cat
from minigrad.tensor import Tensor

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def _parameter_list(fn: str, parameters) -> list:
    if isinstance(parameters, Tensor):
        return [parameters]
    items = list(parameters)
    for item in items:
        if not isinstance(item, Tensor):
            raise TypeError(f"{fn}(): expected an iterable of Tensors, got an element of type {type(item).__name__}")
    return items


def _check_device(device, t: Tensor) -> str:
    if device is not None and t.device != device:
        raise TypeError(
            f"Found two parameters on different devices ({device} and {t.device}), this is currently not supported."
        )
    return t.device


def parameters_to_vector(parameters) -> Tensor:
    """All of ``parameters`` flattened and concatenated into one 1-D Tensor (differentiable, a copy).

    Raises:
        TypeError: parameters on different devices, or an element that is not a Tensor.
        ValueError: no parameters.
    """
    params = _parameter_list("parameters_to_vector", parameters)
    device = None
    for p in params:
        device = _check_device(device, p)
    if not params:
        raise ValueError("parameters_to_vector(): expected at least one parameter")
    return cat([p.reshape(-1) for p in params])


def vector_to_parameters(vec, parameters) -> None:
    """Copy consecutive slices of the 1-D ``vec`` into ``parameters``, in place, in order.

    Each parameter's memory is overwritten (its dtype kept, the values cast)
    and its version bumped; this is not recorded by autograd. Elements of
    ``vec`` past the last parameter are ignored, as in PyTorch.

    Raises:
        TypeError: ``vec`` is not a Tensor, or parameters on different devices.
        RuntimeError: ``vec`` has fewer elements than the parameters together.
    """
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    params = _parameter_list("vector_to_parameters", parameters)
    device = None
    for p in params:
        device = _check_device(device, p)
    flat = vec.detach().reshape(-1)
    total = sum(p.numel() for p in params)
    if flat.numel() < total:
        raise RuntimeError(
            f"vector_to_parameters(): vec has {flat.numel()} elements but the parameters need {total}"
        )
    pointer = 0
    with no_grad():
        for p in params:
            count = p.numel()
            p.copy_(flat[pointer : pointer + count].reshape(p.shape))
            pointer += count
