"""RMSprop, as ``torch.optim.RMSprop``'s single-tensor implementation computes it."""

from __future__ import annotations

import numpy as np

from minigrad import backend
from minigrad.optim.adam import _lerp_
from minigrad.optim.optimizer import Optimizer, check_grad, check_non_negative, subtract_scaled_
from minigrad.optim.sgd import _direction
from minigrad.tensor import Tensor


class RMSprop(Optimizer):
    """RMSprop: divides the gradient by a running root mean square of past gradients.

    For each parameter ``p`` with gradient ``g`` (PyTorch's update rule)::

        g = -g if maximize
        g = g + weight_decay * p                       if weight_decay != 0
        v = alpha * v + (1 - alpha) * g * g
        if centered:
            m = lerp(m, g, 1 - alpha)                  # running mean of g
            avg = sqrt(v - m * m) + eps
        else:
            avg = sqrt(v) + eps
        if momentum > 0:
            b = momentum * b + g / avg
            p = p - lr * b
        else:
            p = p - lr * g / avg

    Args:
        params: parameters or parameter groups (see ``Optimizer``).
        lr: learning rate (default 1e-2).
        alpha: smoothing constant of the running averages (default 0.99).
        eps: added to the denominator (default 1e-8).
        weight_decay: L2 penalty (default 0).
        momentum: momentum factor (default 0).
        centered: normalize by an estimate of the gradient's variance instead
            of its uncentered second moment.
        maximize: maximize the objective instead of minimizing it.

    State per parameter, as in PyTorch: ``"step"`` (a float32 scalar Tensor
    on the CPU), ``"square_avg"``, and ``"momentum_buffer"`` (with momentum > 0)
    and ``"grad_avg"`` (when centered), created zero at the first step that
    sees a gradient. A buffer that a later change of ``momentum``/``centered``
    needs is created then (PyTorch raises a KeyError instead).
    Not reproduced: a Tensor ``lr``, complex parameters, and the
    ``foreach``/``capturable``/``differentiable`` options.

    Raises:
        ValueError: a negative lr, alpha, eps, momentum or weight_decay (the
            message names the argument).
    """

    def __init__(self, params, lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8,
                 weight_decay: float = 0, momentum: float = 0, centered: bool = False, *,
                 maximize: bool = False):
        defaults = {"lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps, "centered": centered,
                    "weight_decay": weight_decay, "maximize": maximize}
        super().__init__(params, defaults)

    def _check_hyperparameters(self, group: dict) -> None:
        check_non_negative(group, "lr", "RMSprop", "learning rate")
        check_non_negative(group, "eps", "RMSprop", "epsilon value")
        check_non_negative(group, "momentum", "RMSprop", "momentum value")
        check_non_negative(group, "weight_decay", "RMSprop", "weight_decay value")
        check_non_negative(group, "alpha", "RMSprop", "alpha value")

    def _step_group(self, group, scratch) -> None:
        lr, alpha, eps = group["lr"], group["alpha"], group["eps"]
        momentum, centered = group["momentum"], group["centered"]
        for p in group["params"]:
            if p.grad is None:
                continue
            param, grad = p.array, check_grad(p)
            xp = backend.get_array_module(param)
            state = self.state[p]
            if not state:
                state["step"] = Tensor(np.array(0.0, dtype=np.float32))
                state["square_avg"] = _zeros_like(xp, param)
            state["step"].array += 1
            grad = _direction(xp, param, grad, group["weight_decay"], group["maximize"], scratch)

            square_avg = state["square_avg"].array
            square_avg *= alpha
            squared = xp.multiply(grad, 1 - alpha, out=scratch.like(param, 1))
            squared *= grad
            square_avg += squared

            avg = scratch.like(param, 2)
            if centered:
                grad_avg = _buffer(state, "grad_avg", xp, param)
                _lerp_(xp, grad_avg, grad, 1 - alpha, scratch.like(param, 1))
                xp.multiply(grad_avg, grad_avg, out=avg)
                xp.subtract(square_avg, avg, out=avg)
                xp.sqrt(avg, out=avg)
            else:
                xp.sqrt(square_avg, out=avg)
            avg += eps

            if momentum > 0:
                buffer = _buffer(state, "momentum_buffer", xp, param)
                buffer *= momentum
                buffer += xp.divide(grad, avg, out=scratch.like(param, 1))
                subtract_scaled_(xp, param, buffer, lr, scratch)
            else:
                # PyTorch's addcdiv order: (-lr * g) / avg, then added.
                update = xp.multiply(grad, -lr, out=scratch.like(param, 1))
                update /= avg
                param += update


def _zeros_like(xp, param) -> Tensor:
    """A zero Tensor shaped like ``param``, on its device."""
    with backend.device_context(backend.device_of(param)):
        return Tensor(xp.zeros_like(param))


def _buffer(state: dict, name: str, xp, param):
    """The array of ``state[name]``, created zero when missing."""
    if name not in state:
        state[name] = _zeros_like(xp, param)
    return state[name].array
