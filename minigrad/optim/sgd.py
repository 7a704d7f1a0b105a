"""Stochastic gradient descent with momentum, as ``torch.optim.SGD`` computes it."""

from __future__ import annotations

from minigrad.optim.optimizer import Optimizer, params_with_grad
from minigrad.optim.updates import regularized_grad, subtract_scaled_
from minigrad.tensor import Tensor


class SGD(Optimizer):
    """Stochastic gradient descent, optionally with (Nesterov) momentum and weight decay.

    For each parameter ``p`` with gradient ``g`` (PyTorch's update rule)::

        g = -g if maximize
        g = g + weight_decay * p                      if weight_decay != 0
        if momentum != 0:
            b = g (first step)  or  b = momentum * b + (1 - dampening) * g
            g = g + momentum * b  if nesterov  else  b
        p = p - lr * g

    Args:
        params: parameters or parameter groups (see ``Optimizer``).
        lr: learning rate (default 1e-3, as in PyTorch 2.x).
        momentum: momentum factor (default 0).
        dampening: dampening of the momentum (default 0).
        weight_decay: L2 penalty (default 0).
        nesterov: use Nesterov momentum (needs momentum > 0 and dampening 0).
        maximize: maximize the objective instead of minimizing it.

    State per parameter: ``"momentum_buffer"`` (only with momentum).
    Not reproduced: a Tensor ``lr``, and the ``foreach``/``fused``/``differentiable`` options.

    Raises:
        ValueError: negative lr, momentum or weight_decay, or nesterov without
            momentum / with dampening (the message names the argument).
    """

    _non_negative = {"lr": "learning rate", "momentum": "momentum value", "weight_decay": "weight_decay value"}

    def __init__(self, params, lr: float = 1e-3, momentum: float = 0, dampening: float = 0,
                 weight_decay: float = 0, nesterov: bool = False, *, maximize: bool = False):
        defaults = {"lr": lr, "momentum": momentum, "dampening": dampening, "weight_decay": weight_decay,
                    "nesterov": nesterov, "maximize": maximize}
        super().__init__(params, defaults)

    def _check_hyperparameters(self, group: dict) -> None:
        super()._check_hyperparameters(group)
        if group["nesterov"] and (group["momentum"] <= 0 or group["dampening"] != 0):
            raise ValueError(
                "SGD: nesterov=True requires a momentum > 0 and zero dampening, got "
                f"momentum={group['momentum']}, dampening={group['dampening']}"
            )

    def _step_group(self, group, scratch) -> None:
        lr, momentum, dampening = group["lr"], group["momentum"], group["dampening"]
        weight_decay, nesterov, maximize = group["weight_decay"], group["nesterov"], group["maximize"]
        for p, param, grad, xp in params_with_grad(group):
            direction = regularized_grad(xp, param, grad, weight_decay, maximize, scratch)
            if momentum != 0:
                direction = self._momentum(p, xp, direction, momentum, dampening, nesterov, scratch)
            subtract_scaled_(xp, param, direction, lr, scratch)

    def _momentum(self, p, xp, direction, momentum, dampening, nesterov, scratch):
        """Advance the momentum buffer of ``p``; return the direction to step along."""
        state = self.state[p]
        buffer = state.get("momentum_buffer")
        if buffer is None:
            buffer = Tensor(direction.copy())
            state["momentum_buffer"] = buffer
        else:
            buf = buffer.array
            buf *= momentum
            if dampening == 0:
                buf += direction
            else:
                damped = scratch.like(buf, 1)
                xp.multiply(direction, 1 - dampening, out=damped)
                buf += damped
        if not nesterov:
            return buffer.array
        ahead = scratch.like(direction, 1)
        xp.multiply(buffer.array, momentum, out=ahead)
        xp.add(direction, ahead, out=ahead)
        return ahead
