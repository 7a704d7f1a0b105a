"""Adadelta, as ``torch.optim.Adadelta``'s single-tensor implementation computes it."""

from __future__ import annotations

from minigrad.optim.optimizer import Optimizer, check_real, init_state, params_with_grad
from minigrad.optim.updates import decay_square_average_, regularized_grad, subtract_scaled_


class Adadelta(Optimizer):
    """Adadelta: scales each step by the ratio of running RMS of past updates to that of gradients.

    For each parameter ``p`` with gradient ``g`` (PyTorch's update rule)::

        g = -g if maximize
        g = g + weight_decay * p                       if weight_decay != 0
        v = rho * v + (1 - rho) * g * g                # square_avg
        delta = sqrt(u + eps) / sqrt(v + eps) * g
        u = rho * u + (1 - rho) * delta * delta        # acc_delta
        p = p - lr * delta

    Args:
        params: parameters or parameter groups (see ``Optimizer``).
        lr: factor applied to the step (default 1.0).
        rho: decay rate of the running averages, in [0, 1] (default 0.9).
        eps: added inside the square roots (default 1e-6).
        weight_decay: L2 penalty (default 0).
        maximize: maximize the objective instead of minimizing it.

    State per parameter, as in PyTorch: ``"step"`` (a float32 scalar Tensor
    on the CPU), ``"square_avg"`` and ``"acc_delta"``, created zero at the
    first step that sees a gradient.
    Not reproduced: a Tensor ``lr``, complex parameters, and the
    ``foreach``/``capturable``/``differentiable`` options.

    Raises:
        ValueError: a negative lr, eps or weight_decay, or rho outside [0, 1]
            (the message names the argument).
    """

    _non_negative = {"lr": "learning rate", "eps": "epsilon value", "weight_decay": "weight_decay value"}

    def __init__(self, params, lr: float = 1.0, rho: float = 0.9, eps: float = 1e-6, weight_decay: float = 0,
                 *, maximize: bool = False):
        defaults = {"lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay, "maximize": maximize}
        super().__init__(params, defaults)

    def _check_hyperparameters(self, group: dict) -> None:
        super()._check_hyperparameters(group)
        if "rho" in group and not 0.0 <= check_real(group["rho"], "rho", "Adadelta") <= 1.0:
            raise ValueError(f"Adadelta: invalid rho value rho={group['rho']!r}, expected 0 <= rho <= 1")

    def _step_group(self, group, scratch) -> None:
        lr, rho, eps = group["lr"], group["rho"], group["eps"]
        for p, param, grad, xp in params_with_grad(group):
            state = self.state[p]
            if not state:
                init_state(state, param, "square_avg", "acc_delta")
            state["step"].array += 1
            grad = regularized_grad(xp, param, grad, group["weight_decay"], group["maximize"], scratch)
            square_avg, acc_delta = state["square_avg"].array, state["acc_delta"].array
            decay_square_average_(xp, square_avg, grad, rho, scratch.like(param, 1))

            std = xp.add(square_avg, eps, out=scratch.like(param, 2))
            xp.sqrt(std, out=std)
            delta = xp.add(acc_delta, eps, out=scratch.like(param, 3))
            xp.sqrt(delta, out=delta)
            delta /= std
            delta *= grad

            decay_square_average_(xp, acc_delta, delta, rho, scratch.like(param, 2))
            subtract_scaled_(xp, param, delta, lr, scratch)
