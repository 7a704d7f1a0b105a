"""Adam and AdamW, as ``torch.optim``'s single-tensor implementation computes them."""

from __future__ import annotations

from minigrad.optim.optimizer import Optimizer, check_real, init_state, params_with_grad
from minigrad.optim.updates import add_divided_, decay_square_average_, lerp_


class Adam(Optimizer):
    """Adam: steps along bias-corrected first/second moment estimates of the gradient.

    For each parameter ``p`` with gradient ``g``, at step ``t`` (PyTorch's
    ``_single_tensor_adam``)::

        g = -g if maximize
        p = p * (1 - lr * weight_decay)         if decoupled_weight_decay (AdamW)
        g = g + weight_decay * p                 otherwise, if weight_decay != 0
        m = lerp(m, g, 1 - beta1)                # beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
        v_max = max(v_max, v)                    if amsgrad (then used instead of v)
        denom = sqrt(v) / sqrt(1 - beta2**t) + eps
        p = p - lr / (1 - beta1**t) * m / denom

    Args:
        params: parameters or parameter groups (see ``Optimizer``).
        lr: learning rate (default 1e-3).
        betas: (beta1, beta2), the moment decay rates, each in [0, 1).
        eps: added to the denominator (default 1e-8).
        weight_decay: L2 penalty, or decoupled decay with ``decoupled_weight_decay``.
        amsgrad: use the maximum of past second moments (AMSGrad).
        maximize: maximize the objective instead of minimizing it.
        decoupled_weight_decay: decay the weights directly (AdamW).

    State per parameter: ``"step"`` (a float32 scalar Tensor on the CPU, as
    in PyTorch), ``"exp_avg"``, ``"exp_avg_sq"`` and, with amsgrad, ``"max_exp_avg_sq"``.
    Not reproduced: Tensor ``lr``/``betas``, and the
    ``foreach``/``fused``/``capturable``/``differentiable`` options.

    Raises:
        ValueError: a negative lr, eps or weight_decay, a beta outside [0, 1),
            or ``betas`` not of length 2 (the message names the argument).
        TypeError: ``betas`` is not a tuple or list, or a hyper-parameter is not
            a real number.
    """

    _non_negative = {"lr": "learning rate", "eps": "epsilon value", "weight_decay": "weight_decay value"}

    def __init__(self, params, lr: float = 1e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, amsgrad: bool = False, *, maximize: bool = False,
                 decoupled_weight_decay: bool = False):
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay, "amsgrad": amsgrad,
                    "maximize": maximize, "decoupled_weight_decay": decoupled_weight_decay}
        super().__init__(params, defaults)

    def _check_hyperparameters(self, group: dict) -> None:
        super()._check_hyperparameters(group)
        name = type(self).__name__
        betas = group["betas"]
        if not isinstance(betas, (tuple, list)):
            raise TypeError(f"{name}: betas must be a pair (beta1, beta2), got {type(betas).__name__} {betas!r:.40}")
        if len(betas) != 2:
            raise ValueError(f"{name}: betas must be a pair (beta1, beta2), got {betas!r}")
        for i, beta in enumerate(betas):
            if not 0.0 <= check_real(beta, f"betas[{i}]", name) < 1.0:
                raise ValueError(
                    f"{name}: invalid beta parameter betas[{i}]={beta!r}, expected 0 <= betas[{i}] < 1"
                )

    def _step_group(self, group, scratch) -> None:
        amsgrad = group["amsgrad"]
        for p, param, grad, xp in params_with_grad(group):
            state = self.state[p]
            if not state:
                _init_state(state, param, amsgrad)
            _adam_update(xp, param, grad, state, group, scratch)


class AdamW(Adam):
    """Adam with decoupled weight decay (``p *= 1 - lr * weight_decay`` before the Adam step).

    Same arguments as ``Adam`` except the default ``weight_decay=1e-2``; decay
    is always decoupled, as in ``torch.optim.AdamW``.
    """

    def __init__(self, params, lr: float = 1e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False, *, maximize: bool = False):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize=maximize,
                         decoupled_weight_decay=True)

    def load_state_dict(self, state_dict: dict) -> None:
        """Like ``Optimizer.load_state_dict``; the decay stays decoupled whatever the saved groups say."""
        super().load_state_dict(state_dict)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True


def _init_state(state: dict, param, amsgrad: bool) -> None:
    init_state(state, param, "exp_avg", "exp_avg_sq", *(("max_exp_avg_sq",) if amsgrad else ()))


def _adam_update(xp, param, grad, state, group, scratch) -> None:
    """One Adam step of ``param`` (in place), in the operation order of PyTorch's single-tensor code.

    Two temporaries shaped like ``param`` come from ``scratch``, each fetched once: ``work`` holds
    the transformed gradient and then the update, ``tmp`` the decay term, the lerp difference,
    the squared gradient and the denominator in turn.
    """
    lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
    weight_decay = group["weight_decay"]
    work, tmp = scratch.like(param, 0), scratch.like(param, 1)
    step_t = state["step"].array
    step_t += 1
    if group["maximize"]:
        grad = xp.negative(grad, out=work)
    if weight_decay != 0:
        if group["decoupled_weight_decay"]:
            param *= 1 - lr * weight_decay
        else:
            decay = xp.multiply(param, weight_decay, out=tmp)
            grad = xp.add(grad, decay, out=work)
    exp_avg, exp_avg_sq = state["exp_avg"].array, state["exp_avg_sq"].array
    lerp_(xp, exp_avg, grad, 1 - beta1, tmp)
    decay_square_average_(xp, exp_avg_sq, grad, beta2, tmp)

    step = float(step_t)
    step_size = lr / (1 - beta1**step)
    bias_correction2_sqrt = (1 - beta2**step) ** 0.5
    if group["amsgrad"]:
        max_exp_avg_sq = state["max_exp_avg_sq"].array
        xp.maximum(max_exp_avg_sq, exp_avg_sq, out=max_exp_avg_sq)
        exp_avg_sq = max_exp_avg_sq
    denom = xp.sqrt(exp_avg_sq, out=tmp)
    denom /= bias_correction2_sqrt
    denom += eps
    add_divided_(xp, param, exp_avg, denom, -step_size, work)  # the gradient in work is no longer needed
