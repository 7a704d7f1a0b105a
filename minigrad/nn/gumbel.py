"""``gumbel_softmax`` (``torch.nn.functional.gumbel_softmax``): a differentiable sample of a categorical
distribution given by logits (Jang et al. 2017; Maddison et al. 2017).

softmax((logits + g) / tau) along ``dim``, where each g is an independent
Gumbel(0, 1) draw, -log(E) with E ~ Exp(1), from minigrad's generator of the
logits' device (``mg.manual_seed`` makes it reproducible; the draws differ
from PyTorch's). With ``hard=True`` the value is the one-hot vector of the
largest entry and the gradient is the soft sample's (the straight-through
estimator: ``y_hard - y_soft.detach() + y_soft``, the expression PyTorch
evaluates, so the values round alike).
"""

from __future__ import annotations

import warnings

import numpy as np

from minigrad import backend
from minigrad.nn import functional as F
from minigrad.ops._util import expect_tensor
from minigrad.tensor import Tensor

__all__ = ["gumbel_softmax"]

_DEFAULT_EPS = 1e-10


def _gumbel_noise(logits: Tensor):
    """An array of Gumbel(0, 1) draws shaped and typed like ``logits`` (drawn in float64: no zero exponentials
    from a coarse float32 grid, so no infinite noise in practice)."""
    xp = backend.get_array_module(logits.array)
    uniform = backend.generator(backend.device_of(logits.array)).random(logits.shape, dtype=np.float64)
    with np.errstate(divide="ignore"):  # uniform == 0 (probability 2**-53) gives an exponential of 0
        exponential = -xp.log1p(-uniform)
        return (-xp.log(exponential)).astype(logits.dtype, copy=False)


def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    """A sample of the Gumbel-softmax distribution over ``dim`` of ``logits`` (optionally one-hot).

    Args:
        logits: a floating point Tensor of unnormalized log-probabilities, any shape.
        tau: the temperature (a number, or a Tensor that broadcasts); smaller is closer to one-hot.
        hard: return one-hot vectors (the arg max of the soft sample along ``dim``)
            that are differentiated as the soft sample.
        eps: deprecated and unused, as in PyTorch (a value other than 1e-10 warns).
        dim: the dimension of the categories (default -1).

    Returns:
        A Tensor of ``logits``' shape and dtype whose slices along ``dim`` sum to 1.

    Raises:
        TypeError: ``logits`` is not a Tensor, ``tau`` is not a number or Tensor, or ``dim`` is not an int.
        RuntimeError (PyTorch's type): ``logits`` is not floating point, or a Tensor ``tau`` does not
            broadcast with it.
        IndexError (PyTorch's type): ``dim`` is out of range, or ``hard`` with ``dim`` of size 0.
    """
    fn = "gumbel_softmax"
    expect_tensor(logits, fn, "logits")
    if not (isinstance(eps, (int, float)) and eps == _DEFAULT_EPS):
        warnings.warn(f"{fn}(): the `eps` parameter is deprecated and has no effect.", UserWarning, stacklevel=2)
    if logits.dtype.kind != "f":
        raise RuntimeError(f"{fn}(): logits must be floating point (the Gumbel noise is continuous), "
                           f"got {logits.dtype}; convert with .float()")
    if not isinstance(tau, (Tensor, int, float, np.integer, np.floating)) or isinstance(tau, (bool, np.bool_)):
        raise TypeError(f"{fn}(): argument 'tau' must be a number, got {type(tau).__name__}")
    if isinstance(tau, Tensor):
        try:
            np.broadcast_shapes(logits.shape, tau.shape)
        except ValueError:  # NumPy's; PyTorch's type for shapes that do not broadcast is RuntimeError
            raise RuntimeError(f"{fn}(): tau of shape {tau.shape} does not broadcast with logits of shape "
                               f"{logits.shape}") from None
    if not isinstance(dim, (int, np.integer)) or isinstance(dim, (bool, np.bool_)):
        raise TypeError(f"{fn}(): argument 'dim' must be an int, got {type(dim).__name__}")
    size = max(logits.ndim, 1)
    if not -size <= dim < size:
        raise IndexError(f"{fn}(): dim {dim} is out of range for logits of shape {logits.shape} "
                         f"(expected in [{-size}, {size - 1}])")
    axis = int(dim) % size
    if hard and logits.ndim and logits.shape[axis] == 0:
        raise IndexError(f"{fn}(): hard=True needs categories to pick from, but dim {dim} of logits of "
                         f"shape {logits.shape} has size 0")
    noise = Tensor._make(_gumbel_noise(logits), False, None, 0)
    scaled = (logits + noise) / tau
    # F.softmax raises for a dim of size 0; the softmax of no categories is the empty tensor itself.
    y_soft = F.softmax(scaled, axis) if scaled.ndim == 0 or scaled.shape[axis] else scaled * 1
    if not hard:
        return y_soft
    xp = backend.get_array_module(y_soft.array)
    soft = y_soft.detach().array
    if soft.ndim:
        index = xp.expand_dims(xp.argmax(soft, axis=axis), axis)  # the first largest, NaN counting as largest
        positions = xp.arange(soft.shape[axis]).reshape((-1,) + (1,) * (soft.ndim - axis - 1))
        one_hot = (positions == index).astype(soft.dtype)
    else:
        one_hot = xp.ones((), dtype=soft.dtype)
    y_hard = Tensor._make(one_hot, False, None, 0)
    return y_hard - y_soft.detach() + y_soft
