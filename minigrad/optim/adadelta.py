"""Adadelta, as ``torch.optim.Adadelta``'s single-tensor implementation computes it."""

from __future__ import annotations

import numpy as np

from minigrad import backend
from minigrad.optim.optimizer import Optimizer, check_grad, check_non_negative, check_real, subtract_scaled_
from minigrad.optim.sgd import _direction
from minigrad.tensor import Tensor


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

    def __init__(self, params, lr: float = 1.0, rho: float = 0.9, eps: float = 1e-6, weight_decay: float = 0,
                 *, maximize: bool = False):
        defaults = {"lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay, "maximize": maximize}
        super().__init__(params, defaults)

    def _check_hyperparameters(self, group: dict) -> None:
        check_non_negative(group, "lr", "Adadelta", "learning rate")
        check_non_negative(group, "eps", "Adadelta", "epsilon value")
        check_non_negative(group, "weight_decay", "Adadelta", "weight_decay value")
        if "rho" in group and not 0.0 <= check_real(group["rho"], "rho", "Adadelta") <= 1.0:
            raise ValueError(f"Adadelta: invalid rho value rho={group['rho']!r}, expected 0 <= rho <= 1")

    def _step_group(self, group, scratch) -> None:
        lr, rho, eps = group["lr"], group["rho"], group["eps"]
        for p in group["params"]:
            if p.grad is None:
                continue
            param, grad = p.array, check_grad(p)
            xp = backend.get_array_module(param)
            state = self.state[p]
            if not state:
                state["step"] = Tensor(np.array(0.0, dtype=np.float32))
                with backend.device_context(backend.device_of(param)):
                    state["square_avg"] = Tensor(xp.zeros_like(param))
                    state["acc_delta"] = Tensor(xp.zeros_like(param))
            state["step"].array += 1
            grad = _direction(xp, param, grad, group["weight_decay"], group["maximize"], scratch)
            square_avg, acc_delta = state["square_avg"].array, state["acc_delta"].array

            square_avg *= rho
            squared = xp.multiply(grad, 1 - rho, out=scratch.like(param, 1))
            squared *= grad
            square_avg += squared

            std = xp.add(square_avg, eps, out=scratch.like(param, 2))
            xp.sqrt(std, out=std)
            delta = xp.add(acc_delta, eps, out=scratch.like(param, 3))
            xp.sqrt(delta, out=delta)
            delta /= std
            delta *= grad

            acc_delta *= rho
            squared = xp.multiply(delta, 1 - rho, out=scratch.like(param, 2))
            squared *= delta
            acc_delta += squared

            subtract_scaled_(xp, param, delta, lr, scratch)
