"""RMSprop, as ``torch.optim.RMSprop``'s single-tensor implementation computes it."""

from __future__ import annotations

from minigrad.optim.optimizer import Optimizer, init_state, params_with_grad, zeros_state
from minigrad.optim.updates import add_divided_, decay_square_average_, lerp_, regularized_grad, subtract_scaled_


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

    _non_negative = {"lr": "learning rate", "eps": "epsilon value", "momentum": "momentum value",
                     "weight_decay": "weight_decay value", "alpha": "alpha value"}

    def __init__(self, params, lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8,
                 weight_decay: float = 0, momentum: float = 0, centered: bool = False, *,
                 maximize: bool = False):
        defaults = {"lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps, "centered": centered,
                    "weight_decay": weight_decay, "maximize": maximize}
        super().__init__(params, defaults)

    def _step_group(self, group, scratch) -> None:
        lr, alpha, eps = group["lr"], group["alpha"], group["eps"]
        momentum, centered = group["momentum"], group["centered"]
        for p, param, grad, xp in params_with_grad(group):
            state = self.state[p]
            if not state:
                init_state(state, param, "square_avg")
            state["step"].array += 1
            grad = regularized_grad(xp, param, grad, group["weight_decay"], group["maximize"], scratch)
            square_avg = state["square_avg"].array
            decay_square_average_(xp, square_avg, grad, alpha, scratch.like(param, 1))

            avg = scratch.like(param, 2)
            if centered:
                grad_avg = _buffer(state, "grad_avg", param)
                lerp_(xp, grad_avg, grad, 1 - alpha, scratch.like(param, 1))
                xp.multiply(grad_avg, grad_avg, out=avg)
                xp.subtract(square_avg, avg, out=avg)
                xp.sqrt(avg, out=avg)
            else:
                xp.sqrt(square_avg, out=avg)
            avg += eps

            if momentum > 0:
                buffer = _buffer(state, "momentum_buffer", param)
                buffer *= momentum
                buffer += xp.divide(grad, avg, out=scratch.like(param, 1))
                subtract_scaled_(xp, param, buffer, lr, scratch)
            else:
                add_divided_(xp, param, grad, avg, -lr, scratch.like(param, 1))


def _buffer(state: dict, name: str, param):
    """The array of ``state[name]``, created zero (like the array ``param``) when missing."""
    if name not in state:
        state[name] = zeros_state(param)
    return state[name].array
