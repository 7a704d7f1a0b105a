"""Adagrad, as ``torch.optim.Adagrad``'s single-tensor implementation computes it."""

from __future__ import annotations

from minigrad import backend
from minigrad.optim.optimizer import Optimizer, init_state, params_with_grad
from minigrad.optim.updates import add_divided_, regularized_grad
from minigrad.tensor import Tensor


class Adagrad(Optimizer):
    """Adagrad: divides the gradient by the root of the sum of all past squared gradients.

    For each parameter ``p`` with gradient ``g``, at step ``t`` (PyTorch's update rule)::

        g = -g if maximize
        g = g + weight_decay * p                       if weight_decay != 0
        clr = lr / (1 + (t - 1) * lr_decay)
        s = s + g * g                                  # sum
        p = p - clr * g / (sqrt(s) + eps)

    Args:
        params: parameters or parameter groups (see ``Optimizer``).
        lr: learning rate (default 1e-2).
        lr_decay: learning-rate decay per step (default 0).
        weight_decay: L2 penalty (default 0).
        initial_accumulator_value: starting value of the sum of squares
            (default 0).
        eps: added to the denominator (default 1e-10).
        maximize: maximize the objective instead of minimizing it.

    State per parameter, as in PyTorch: ``"step"`` (a float32 scalar Tensor
    on the CPU) and ``"sum"``. Unlike the other optimizers, the state of
    every parameter given to the constructor exists from construction on,
    so ``state_dict()`` lists it before the first step. As in PyTorch, the
    sums start at the constructor's ``initial_accumulator_value`` in every
    group (a group's own ``initial_accumulator_value`` entry is not used),
    also for groups added later with ``add_param_group``.
    Not reproduced: a Tensor ``lr``, sparse gradients, complex parameters,
    and the ``foreach``/``fused``/``differentiable`` options.

    Raises:
        ValueError: a negative lr, lr_decay, weight_decay,
            initial_accumulator_value or eps (the message names the argument).
    """

    _non_negative = {"lr": "learning rate", "lr_decay": "lr_decay value", "weight_decay": "weight_decay value",
                     "initial_accumulator_value": "initial_accumulator_value value", "eps": "epsilon value"}

    def __init__(self, params, lr: float = 1e-2, lr_decay: float = 0, weight_decay: float = 0,
                 initial_accumulator_value: float = 0, eps: float = 1e-10, *, maximize: bool = False):
        defaults = {"lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
                    "initial_accumulator_value": initial_accumulator_value, "maximize": maximize}
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(self.state[p], p.array)

    def _init_state(self, state: dict, param) -> None:
        xp = backend.get_array_module(param)
        init_state(state, param)
        with backend.device_context(backend.device_of(param)):
            state["sum"] = Tensor(xp.full_like(param, self.defaults["initial_accumulator_value"]))

    def _step_group(self, group, scratch) -> None:
        lr, lr_decay, eps = group["lr"], group["lr_decay"], group["eps"]
        for p, param, grad, xp in params_with_grad(group):
            state = self.state[p]
            if not state:
                self._init_state(state, param)
            step_t = state["step"].array
            step_t += 1
            grad = regularized_grad(xp, param, grad, group["weight_decay"], group["maximize"], scratch)
            clr = lr / (1 + (float(step_t) - 1) * lr_decay)

            state_sum = state["sum"].array
            squared = xp.multiply(grad, grad, out=scratch.like(param, 1))
            state_sum += squared
            std = xp.sqrt(state_sum, out=scratch.like(param, 2))
            std += eps
            add_divided_(xp, param, grad, std, -clr, scratch.like(param, 1))
