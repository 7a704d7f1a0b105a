"""Learning-rate schedulers (``mg.optim.lr_scheduler``), mirroring ``torch.optim.lr_scheduler``.

A scheduler owns no learning rate of its own: it rewrites ``group["lr"]`` in
its optimizer's ``param_groups`` each time ``step()`` is called (once per
epoch or per batch, after ``optimizer.step()``), and remembers what it wrote
(``get_last_lr()``). The values are computed as PyTorch computes them,
operation for operation, so a schedule matches PyTorch's to the last bit:

1. Construction records each group's starting rate as ``group["initial_lr"]``
   (kept if already there) and as ``base_lrs``, then performs step 0
   (``last_epoch`` goes from -1 to 0), which writes the first rate.
2. ``step()`` increments ``last_epoch`` and calls ``get_lr()``. Most
   schedulers are *chainable*: ``get_lr()`` derives the new rate from the
   group's current ``"lr"``, so changes made by other schedulers (or by hand)
   carry over. ``step(epoch)`` (deprecated in PyTorch, warns) jumps to
   ``epoch`` with the scheduler's closed form where it has one.
3. ``state_dict()`` is every attribute but the optimizer (in PyTorch's key
   names, so the dicts look alike); ``load_state_dict`` puts them back. Save
   and load the optimizer's state dict beside it: the rates themselves live
   in the optimizer's param groups.

Not reproduced: the warning PyTorch gives when ``scheduler.step()`` is called
before the first ``optimizer.step()`` (it works by wrapping the optimizer's
``step`` method), and Tensor learning rates.
"""

from __future__ import annotations

import copy
import math
import numbers
import types
import warnings
from bisect import bisect_right
from collections import Counter

from minigrad.optim.optimizer import Optimizer

__all__ = [
    "LRScheduler",
    "LambdaLR",
    "MultiplicativeLR",
    "StepLR",
    "MultiStepLR",
    "ConstantLR",
    "LinearLR",
    "ExponentialLR",
    "PolynomialLR",
    "CosineAnnealingLR",
    "OneCycleLR",
    "SequentialLR",
    "ChainedScheduler",
    "ReduceLROnPlateau",
]

_EPOCH_DEPRECATION = (
    "passing an epoch to scheduler.step() is deprecated (as in PyTorch): call scheduler.step() without "
    "arguments once per epoch. With an epoch the scheduler's closed form is used where it has one."
)


def _check_optimizer(optimizer) -> None:
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")


def _check_real(owner: str, **values) -> None:
    """TypeError naming ``owner`` and the argument unless each value is a real number (not a bool).

    PyTorch stores these unchecked and fails at a later ``step()`` with an
    error that names nothing (or never fails and schedules nonsense).
    """
    for name, value in values.items():
        if not isinstance(value, numbers.Real) or isinstance(value, bool):
            raise TypeError(f"{owner}: {name} must be a real number, got {type(value).__name__}")


def _per_group(name: str, optimizer: Optimizer, value) -> list:
    """``value`` repeated for each param group, or checked to have one entry per group if a list/tuple."""
    if isinstance(value, (list, tuple)):
        if len(value) != len(optimizer.param_groups):
            raise ValueError(
                f"{name} must have the same length as optimizer.param_groups: got {len(value)} values "
                f"for {len(optimizer.param_groups)} param groups"
            )
        return list(value)
    return [value] * len(optimizer.param_groups)


def _scaled_lrs(optimizer: Optimizer, factor: float) -> list:
    """Each group's current rate times ``factor``."""
    return [group["lr"] * factor for group in optimizer.param_groups]


def _current_lrs(optimizer: Optimizer) -> list:
    return [group["lr"] for group in optimizer.param_groups]


class LRScheduler:
    """Base class of learning-rate schedulers.

    Subclasses implement ``get_lr()`` (the rates for ``self.last_epoch``,
    one per param group) and may implement ``_closed_form_lr()`` (the same
    from ``base_lrs`` alone, used by ``step(epoch)``).

    Args:
        optimizer: the ``Optimizer`` whose ``group["lr"]`` values are scheduled.
        last_epoch: index of the last epoch done; -1 (default) starts the
            schedule. Any other value resumes it and needs
            ``group["initial_lr"]`` in every group (as a loaded optimizer
            state dict provides).

    Attributes:
        base_lrs: each group's ``initial_lr``.
        last_epoch: the epoch (or batch) index of the last ``step()``.

    Raises:
        TypeError: ``optimizer`` is not an ``Optimizer``.
        KeyError: resuming (``last_epoch != -1``) while a group lacks ``"initial_lr"``.
    """

    _get_lr_called_within_step = False
    _is_initial = False

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1):
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(
                        f"param 'initial_lr' is not specified in param_groups[{i}] when resuming a scheduler "
                        f"with last_epoch={last_epoch}: load the optimizer's state dict first, or pass "
                        "last_epoch=-1 to start a new schedule"
                    )
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._initial_step()

    def _initial_step(self) -> None:
        """Reset the step count and perform step 0 (``get_lr`` sees ``_is_initial``)."""
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def get_lr(self) -> list:
        """The learning rates for ``last_epoch``, one per param group (subclasses implement it).

        Called by ``step()``; to read the rates in use, call ``get_last_lr()``.
        """
        raise NotImplementedError(f"{type(self).__name__} must implement get_lr()")

    def _closed_form_lr(self) -> list | None:
        """The rates at ``last_epoch`` from ``base_lrs`` alone, or None where there is no closed form."""
        return None

    def get_last_lr(self) -> list:
        """The learning rates the last ``step()`` wrote, one per param group (a new list)."""
        return list(self._last_lr)

    def step(self, epoch: int | None = None) -> None:
        """Advance the schedule by one and write the new rates into the optimizer's param groups.

        Call it after ``optimizer.step()``.

        Args:
            epoch: deprecated (warns, as in PyTorch): set ``last_epoch`` to
                ``epoch`` and use the closed form where there is one.
        """
        self._step_count += 1
        if epoch is not None:
            warnings.warn(_EPOCH_DEPRECATION, UserWarning, stacklevel=2)
        self._update_lr(epoch)

    def _update_lr(self, epoch: int | None = None) -> None:
        self._get_lr_called_within_step = True
        try:
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:
                self.last_epoch = epoch
                values = self._closed_form_lr()
                if values is None:
                    values = self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        groups = self.optimizer.param_groups
        if len(values) != len(groups):
            raise ValueError(
                f"{type(self).__name__}: computed {len(values)} learning rates for {len(groups)} param groups; "
                "param groups added after the scheduler was made are not scheduled: make the scheduler after "
                "adding them"
            )
        for group, lr in zip(groups, values):
            group["lr"] = lr
        self._last_lr = _current_lrs(self.optimizer)

    def _warn_if_outside_step(self) -> None:
        if not self._get_lr_called_within_step:
            warnings.warn(
                "To get the last learning rate computed by the scheduler, please use `get_last_lr()`.",
                UserWarning,
                stacklevel=3,
            )

    # -- state dict ----------------------------------------------------------

    def state_dict(self) -> dict:
        """The scheduler's state: a copy of every attribute except the optimizer.

        The learning rates in use live in the optimizer: save its state dict too.
        """
        return {key: copy.deepcopy(value) for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore a state returned by ``state_dict()`` (a copy is taken; the dict is not modified).

        Raises:
            TypeError: ``state_dict`` is not a dict.
            ValueError: it has entries this scheduler does not have (it came
                from another kind of scheduler).
        """
        self._check_state_keys(state_dict)
        self.__dict__.update(copy.deepcopy(state_dict))

    def _check_state_keys(self, state_dict, extra: tuple = ()) -> None:
        if not isinstance(state_dict, dict):
            raise TypeError(f"{type(self).__name__}.load_state_dict expects a dict, got {type(state_dict).__name__}")
        known = set(self.__dict__) | {"_is_initial", "_get_lr_called_within_step", *extra}
        unknown = sorted(str(key) for key in state_dict if key not in known or key == "optimizer")
        if unknown:
            raise ValueError(
                f"{type(self).__name__}.load_state_dict: unexpected entries {unknown}; was the state saved from "
                "another kind of scheduler?"
            )


class _LambdaScheduler(LRScheduler):
    """A scheduler driven by one ``lr_lambda`` per param group (LambdaLR, MultiplicativeLR).

    ``state_dict()`` stores ``lr_lambdas`` as ``None`` for plain functions
    and lambdas, and as a copy of ``__dict__`` for callable objects (whose
    attributes ``load_state_dict`` restores), as in PyTorch.
    """

    def __init__(self, optimizer: Optimizer, lr_lambda, last_epoch: int = -1):
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        self.lr_lambdas = _lambdas(optimizer, lr_lambda)
        super().__init__(optimizer, last_epoch)

    def state_dict(self) -> dict:
        """See the class docstring: the functions themselves are not saved."""
        return _state_without_lambdas(self)

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore the state; saved attributes of callable-object lambdas are restored into them."""
        _load_with_lambdas(self, state_dict)


class LambdaLR(_LambdaScheduler):
    """Sets each group's rate to its initial rate times ``lr_lambda(epoch)``.

    Args:
        optimizer: the scheduled optimizer.
        lr_lambda: a function of the epoch index returning a factor, or a
            list of such functions, one per param group.
        last_epoch: see ``LRScheduler``.

    ``state_dict()`` stores ``lr_lambdas`` as ``None`` for plain functions
    and lambdas, and as a copy of ``__dict__`` for callable objects (whose
    attributes ``load_state_dict`` restores), as in PyTorch.

    Raises:
        ValueError: a list of functions whose length differs from the number of groups.
        TypeError: a function that is not callable.
    """

    def get_lr(self) -> list:
        """``base_lr * lr_lambda(last_epoch)`` for each group."""
        self._warn_if_outside_step()
        factors = _lambda_factors("LambdaLR", self.lr_lambdas, self.last_epoch)
        return [base_lr * factor for factor, base_lr in zip(factors, self.base_lrs)]


class MultiplicativeLR(_LambdaScheduler):
    """Multiplies each group's current rate by ``lr_lambda(epoch)`` at every step after the first.

    Args and state dict as ``LambdaLR``.

    Raises:
        ValueError: a list of functions whose length differs from the number of groups.
        TypeError: a function that is not callable.
    """

    def get_lr(self) -> list:
        """``lr * lr_lambda(last_epoch)`` for each group (the current rates at step 0)."""
        self._warn_if_outside_step()
        if self._is_initial:
            return _current_lrs(self.optimizer)
        factors = _lambda_factors("MultiplicativeLR", self.lr_lambdas, self.last_epoch)
        return [group["lr"] * factor for factor, group in zip(factors, self.optimizer.param_groups)]


def _lambdas(optimizer: Optimizer, lr_lambda) -> list:
    if isinstance(lr_lambda, (list, tuple)):
        if len(lr_lambda) != len(optimizer.param_groups):
            raise ValueError(f"Expected {len(optimizer.param_groups)} lr_lambdas, but got {len(lr_lambda)}")
        lambdas = list(lr_lambda)
    else:
        lambdas = [lr_lambda] * len(optimizer.param_groups)
    for fn in lambdas:
        if not callable(fn):
            raise TypeError(f"lr_lambda should be a function, but got {type(fn).__name__}")
    return lambdas


def _lambda_factors(owner: str, lambdas: list, epoch: int) -> list:
    """Each ``lr_lambda(epoch)``, checked to be a number (TypeError naming ``owner`` otherwise)."""
    factors = [fn(epoch) for fn in lambdas]
    for factor in factors:
        if not isinstance(factor, numbers.Real):
            raise TypeError(f"{owner}: lr_lambda must return a number, got {type(factor).__name__} for epoch {epoch}")
    return factors


def _state_without_lambdas(scheduler) -> dict:
    state = {k: copy.deepcopy(v) for k, v in scheduler.__dict__.items() if k not in ("optimizer", "lr_lambdas")}
    state["lr_lambdas"] = [
        None if isinstance(fn, types.FunctionType) else copy.deepcopy(fn.__dict__) for fn in scheduler.lr_lambdas
    ]
    return state


def _restore_all_but(owner, state_dict: dict, key: str, parts: list, default: list, counted: str) -> list:
    """Copy every entry of ``state_dict`` except ``key`` into ``owner``; return ``state_dict[key]``.

    That entry (``default`` when missing) holds one saved state per item of
    ``parts``, which the caller restores into them; its length is checked
    before anything is restored.

    Raises:
        ValueError: it does not hold one state per item. ``counted`` is the text between the
            two counts in the message ("the state has 1 schedulers, this one 2").
    """
    saved = state_dict.get(key, default)
    if len(saved) != len(parts):
        raise ValueError(f"{type(owner).__name__}.load_state_dict: the state has {len(saved)} {counted} {len(parts)}")
    owner.__dict__.update(copy.deepcopy({k: v for k, v in state_dict.items() if k != key}))
    return saved


def _load_with_lambdas(scheduler, state_dict: dict) -> None:
    scheduler._check_state_keys(state_dict)
    lambdas = scheduler.lr_lambdas
    saved = _restore_all_but(scheduler, state_dict, "lr_lambdas", lambdas, [None] * len(lambdas),
                             "lr_lambdas, this scheduler")
    for fn, attributes in zip(lambdas, saved):
        if attributes is not None:
            fn.__dict__.update(copy.deepcopy(attributes))


class StepLR(LRScheduler):
    """Multiplies each group's rate by ``gamma`` every ``step_size`` epochs.

    Args:
        optimizer: the scheduled optimizer.
        step_size: the period of the decay, in epochs (a positive int).
        gamma: the decay factor (default 0.1).
        last_epoch: see ``LRScheduler``.

    Raises:
        ValueError: ``step_size`` is not a positive int (PyTorch fails with a
            ZeroDivisionError at the first step for 0).
        TypeError: ``gamma`` is not a number.
    """

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1):
        if isinstance(step_size, bool) or not isinstance(step_size, int) or step_size <= 0:
            raise ValueError(f"StepLR: step_size must be a positive int, got {step_size!r}")
        _check_real("StepLR", gamma=gamma)
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        """The current rates, times ``gamma`` when ``last_epoch`` is a positive multiple of ``step_size``."""
        self._warn_if_outside_step()
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return _current_lrs(self.optimizer)
        return _scaled_lrs(self.optimizer, self.gamma)

    def _closed_form_lr(self) -> list:
        return [base_lr * self.gamma ** (self.last_epoch // self.step_size) for base_lr in self.base_lrs]


class MultiStepLR(LRScheduler):
    """Multiplies each group's rate by ``gamma`` at each epoch listed in ``milestones``.

    Args:
        optimizer: the scheduled optimizer.
        milestones: epoch indices (a milestone listed ``n`` times decays by ``gamma ** n``).
        gamma: the decay factor (default 0.1).
        last_epoch: see ``LRScheduler``.

    Raises:
        TypeError: a milestone is not an int, or ``gamma`` is not a number.
    """

    def __init__(self, optimizer: Optimizer, milestones, gamma: float = 0.1, last_epoch: int = -1):
        try:
            milestones = list(milestones)
        except TypeError:
            raise TypeError(f"MultiStepLR: milestones must be an iterable of ints, got {type(milestones).__name__}") \
                from None
        for milestone in milestones:
            if isinstance(milestone, bool) or not isinstance(milestone, int):
                raise TypeError(f"MultiStepLR: milestones must be ints, got {milestone!r}")
        _check_real("MultiStepLR", gamma=gamma)
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        """The current rates, times ``gamma ** count`` at a milestone."""
        self._warn_if_outside_step()
        if self.last_epoch not in self.milestones:
            return _current_lrs(self.optimizer)
        factor = self.gamma ** self.milestones[self.last_epoch]
        return _scaled_lrs(self.optimizer, factor)

    def _closed_form_lr(self) -> list:
        milestones = sorted(self.milestones.elements())
        return [base_lr * self.gamma ** bisect_right(milestones, self.last_epoch) for base_lr in self.base_lrs]

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore the state (milestones saved as a plain dict, e.g. through ``mg.save``, become a Counter)."""
        super().load_state_dict(state_dict)
        self.milestones = Counter(self.milestones)


class _WarmupLR(LRScheduler):
    """Base of the warm-up schedulers (ConstantLR, LinearLR): the rates start at a factor of their
    base values and come back over ``total_iters`` epochs.

    ``get_lr`` multiplies the current rates by the starting factor (``_start_factor()``) at epoch 0
    and leaves the later epochs to the subclass's ``_later_lr()``. The subclass stores its factors
    (under PyTorch's names, which ``state_dict`` shows) before calling this constructor.
    """

    def __init__(self, optimizer: Optimizer, total_iters: int, last_epoch: int):
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        """The current rates times the starting factor at epoch 0, else as the subclass's ``_later_lr()``."""
        self._warn_if_outside_step()
        if self.last_epoch == 0:
            return _scaled_lrs(self.optimizer, self._start_factor())
        return self._later_lr()

    def _start_factor(self) -> float:
        """The factor the rates get at epoch 0."""
        raise NotImplementedError(f"{type(self).__name__} must define _start_factor()")

    def _later_lr(self) -> list:
        """The rates for an epoch after 0 (``last_epoch``), from the current ones."""
        raise NotImplementedError(f"{type(self).__name__} must define _later_lr()")


class ConstantLR(_WarmupLR):
    """Multiplies each group's rate by ``factor`` for the first ``total_iters`` epochs.

    Args:
        optimizer: the scheduled optimizer.
        factor: the factor, in [0, 1] (default 1/3).
        total_iters: the epoch at which the factor is undone (default 5).
        last_epoch: see ``LRScheduler``.

    Raises:
        TypeError: ``factor`` or ``total_iters`` is not a number.
        ValueError: ``factor`` outside [0, 1] (or NaN).
    """

    def __init__(self, optimizer: Optimizer, factor: float = 1.0 / 3, total_iters: int = 5, last_epoch: int = -1):
        _check_real("ConstantLR", factor=factor, total_iters=total_iters)
        if not 0 <= factor <= 1.0:  # NaN fails too
            raise ValueError(f"ConstantLR: factor must be between 0 and 1, got {factor}")
        self.factor = factor
        super().__init__(optimizer, total_iters, last_epoch)

    def _start_factor(self) -> float:
        return self.factor

    def _later_lr(self) -> list:
        """The current rates, divided by ``factor`` at ``total_iters``."""
        if self.last_epoch != self.total_iters:
            return _current_lrs(self.optimizer)
        if self.factor == 0:  # a rate of 0 cannot be divided back (PyTorch's ZeroDivisionError): start from base_lrs
            return self._closed_form_lr()
        return _scaled_lrs(self.optimizer, (1.0 / self.factor))

    def _closed_form_lr(self) -> list:
        done = self.last_epoch >= self.total_iters
        return [base_lr * (self.factor + done * (1 - self.factor)) for base_lr in self.base_lrs]


class LinearLR(_WarmupLR):
    """Scales each group's rate by a factor going linearly from ``start_factor`` to ``end_factor``.

    The factor moves over ``total_iters`` epochs, then stays at ``end_factor``.

    Args:
        optimizer: the scheduled optimizer.
        start_factor: the factor at epoch 0, in (0, 1] (default 1/3).
        end_factor: the factor from ``total_iters`` on, in [0, 1] (default 1).
        total_iters: the number of epochs of the ramp (default 5).
        last_epoch: see ``LRScheduler``.

    Raises:
        TypeError: a factor or ``total_iters`` is not a number.
        ValueError: ``start_factor`` outside (0, 1] or ``end_factor`` outside [0, 1] (or NaN).
    """

    def __init__(self, optimizer: Optimizer, start_factor: float = 1.0 / 3, end_factor: float = 1.0,
                 total_iters: int = 5, last_epoch: int = -1):
        _check_real("LinearLR", start_factor=start_factor, end_factor=end_factor, total_iters=total_iters)
        if not 0 < start_factor <= 1.0:  # NaN fails too
            raise ValueError(f"LinearLR: start_factor must be in (0, 1], got {start_factor}")
        if not 0 <= end_factor <= 1.0:
            raise ValueError(f"LinearLR: end_factor must be in [0, 1], got {end_factor}")
        self.start_factor = start_factor
        self.end_factor = end_factor
        super().__init__(optimizer, total_iters, last_epoch)

    def _start_factor(self) -> float:
        return self.start_factor

    def _later_lr(self) -> list:
        """The current rates times the ratio of this epoch's factor to the previous one's."""
        if self._is_initial or self.last_epoch > self.total_iters:
            return _current_lrs(self.optimizer)
        span = self.end_factor - self.start_factor
        ratio = 1.0 + span / (self.total_iters * self.start_factor + (self.last_epoch - 1) * span)
        return _scaled_lrs(self.optimizer, ratio)

    def _closed_form_lr(self) -> list:
        span = self.end_factor - self.start_factor
        done = min(self.total_iters, self.last_epoch)
        return [base_lr * (self.start_factor + span * done / self.total_iters) for base_lr in self.base_lrs]


class ExponentialLR(LRScheduler):
    """Multiplies each group's rate by ``gamma`` every epoch.

    Args:
        optimizer: the scheduled optimizer.
        gamma: the decay factor.
        last_epoch: see ``LRScheduler``.
    """

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1):
        _check_real("ExponentialLR", gamma=gamma)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        """The current rates times ``gamma`` (unchanged at construction, also when resuming)."""
        self._warn_if_outside_step()
        if self._is_initial:
            return _current_lrs(self.optimizer)
        return _scaled_lrs(self.optimizer, self.gamma)

    def _closed_form_lr(self) -> list:
        return [base_lr * self.gamma**self.last_epoch for base_lr in self.base_lrs]


class PolynomialLR(LRScheduler):
    """Decays each group's rate as ``base_lr * (1 - epoch / total_iters) ** power`` until ``total_iters``.

    Args:
        optimizer: the scheduled optimizer.
        total_iters: the number of epochs of the decay (default 5).
        power: the power of the polynomial (default 1).
        last_epoch: see ``LRScheduler``.
    """

    def __init__(self, optimizer: Optimizer, total_iters: int = 5, power: float = 1.0, last_epoch: int = -1):
        _check_real("PolynomialLR", total_iters=total_iters, power=power)
        self.total_iters = total_iters
        self.power = power
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        """The current rates times the ratio of this epoch's polynomial to the previous one's."""
        self._warn_if_outside_step()
        if self._is_initial or self.last_epoch > self.total_iters:
            return _current_lrs(self.optimizer)
        ratio = ((1.0 - self.last_epoch / self.total_iters) / (1.0 - (self.last_epoch - 1) / self.total_iters))
        factor = ratio**self.power
        return _scaled_lrs(self.optimizer, factor)

    def _closed_form_lr(self) -> list:
        done = min(self.total_iters, self.last_epoch)
        return [base_lr * (1.0 - done / self.total_iters) ** self.power for base_lr in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """Anneals each group's rate from its initial value to ``eta_min`` along half a cosine of period ``T_max``.

    The rate follows ``eta_min + (base_lr - eta_min) * (1 + cos(pi * t / T_max)) / 2``,
    computed recursively from the current rate as PyTorch does (so other
    changes to the rate carry over, and the values match PyTorch's to the
    last bit). Past ``T_max`` the cosine goes on: the rate rises again.

    Args:
        optimizer: the scheduled optimizer.
        T_max: the number of epochs of the half period (a nonzero int).
        eta_min: the lowest rate (default 0).
        last_epoch: see ``LRScheduler``.

    Raises:
        TypeError: ``T_max`` or ``eta_min`` is not a number.
        ValueError: ``T_max`` is 0 (PyTorch fails with a ZeroDivisionError at the first step).
    """

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0, last_epoch: int = -1):  # noqa: N803
        _check_real("CosineAnnealingLR", T_max=T_max, eta_min=eta_min)
        if T_max == 0:
            raise ValueError("CosineAnnealingLR: T_max must be nonzero (the number of epochs to anneal over)")
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        """The next rates of the recursive cosine schedule."""
        self._warn_if_outside_step()
        groups = self.optimizer.param_groups
        epoch, t_max, eta_min = self.last_epoch, self.T_max, self.eta_min
        if self._is_initial:
            return _current_lrs(self.optimizer)
        if self._step_count == 1 and epoch > 0:
            # Resumed: the first value comes from the closed form.
            return [eta_min + (base_lr - eta_min) * (1 + math.cos(epoch * math.pi / t_max)) / 2
                    for base_lr in self.base_lrs]
        if (epoch - 1 - t_max) % (2 * t_max) == 0:
            # Leaving the trough: the recursion would divide by 1 + cos(pi) = 0.
            return [group["lr"] + (base_lr - eta_min) * (1 - math.cos(math.pi / t_max)) / 2
                    for base_lr, group in zip(self.base_lrs, groups)]
        ratio = (1 + math.cos(math.pi * epoch / t_max)) / (1 + math.cos(math.pi * (epoch - 1) / t_max))
        return [ratio * (group["lr"] - eta_min) + eta_min for group in groups]

    def _closed_form_lr(self) -> list:
        cosine = 1 + math.cos(math.pi * self.last_epoch / self.T_max)
        return [self.eta_min + (base_lr - self.eta_min) * cosine / 2 for base_lr in self.base_lrs]


class OneCycleLR(LRScheduler):
    """The 1cycle policy: the rate rises from ``max_lr / div_factor`` to ``max_lr``, then falls far below.

    Meant to be stepped once per batch, ``total_steps`` times in all. With
    ``three_phase=False`` (default) the rate rises for ``pct_start`` of the
    steps then anneals to ``initial_lr / final_div_factor``; with
    ``three_phase=True`` it rises, falls back to ``initial_lr``
    symmetrically, then anneals to the minimum. With ``cycle_momentum`` the
    momentum (``group["momentum"]``, or ``betas[0]`` for Adam-like
    optimizers) moves opposite to the rate between ``max_momentum`` and
    ``base_momentum``. The groups get ``"initial_lr"``, ``"max_lr"``,
    ``"min_lr"`` (and ``"max_momentum"``, ``"base_momentum"``) entries, as in PyTorch.

    Args:
        optimizer: the scheduled optimizer.
        max_lr: the peak rate, one for all groups or a list with one per group.
        total_steps: the number of steps in the cycle; or give ``epochs``
            and ``steps_per_epoch`` (their product is used).
        epochs, steps_per_epoch: see ``total_steps``.
        pct_start: the fraction of the cycle spent raising the rate (a float
            in [0, 1], default 0.3).
        anneal_strategy: ``"cos"`` (default) or ``"linear"``.
        cycle_momentum: cycle the momentum too (default True).
        base_momentum, max_momentum: momentum bounds (defaults 0.85, 0.95),
            scalars or one per group.
        div_factor: ``initial_lr = max_lr / div_factor`` (default 25).
        final_div_factor: ``min_lr = initial_lr / final_div_factor`` (default 1e4).
        three_phase: use the three-phase schedule (default False).
        last_epoch: the index of the last batch done; see ``LRScheduler``.

    Raises:
        TypeError: ``optimizer`` is not an ``Optimizer``.
        ValueError: no valid ``total_steps`` nor ``epochs``/``steps_per_epoch``,
            ``pct_start`` not a float in [0, 1], an unknown ``anneal_strategy``,
            a per-group list of the wrong length, ``cycle_momentum`` with an
            optimizer that has neither momentum nor betas, or (from ``step``)
            stepping past ``total_steps``.
        TypeError: a ``max_lr`` that is not a number.
    """

    def __init__(self, optimizer: Optimizer, max_lr, total_steps: int | None = None, epochs: int | None = None,
                 steps_per_epoch: int | None = None, pct_start: float = 0.3, anneal_strategy: str = "cos",
                 cycle_momentum: bool = True, base_momentum=0.85, max_momentum=0.95, div_factor: float = 25.0,
                 final_div_factor: float = 1e4, three_phase: bool = False, last_epoch: int = -1):
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        self.total_steps = _total_steps(total_steps, epochs, steps_per_epoch)
        if not isinstance(pct_start, float) or not 0 <= pct_start <= 1:  # NaN fails too
            raise ValueError(f"OneCycleLR: expected a float between 0 and 1 for pct_start, but got {pct_start!r}")
        self._schedule_phases = _phases(self.total_steps, pct_start, three_phase)
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"OneCycleLR: anneal_strategy must be 'cos' or 'linear', got {anneal_strategy!r}")
        self._anneal_func_type = anneal_strategy

        max_lrs = _per_group("max_lr", optimizer, max_lr)
        _check_real("OneCycleLR", **{f"max_lr[{i}]": top for i, top in enumerate(max_lrs)})
        if last_epoch == -1:
            for group, top in zip(optimizer.param_groups, max_lrs):
                group["initial_lr"] = top / div_factor
                group["max_lr"] = top
                group["min_lr"] = group["initial_lr"] / final_div_factor

        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError(
                    f"OneCycleLR: cycle_momentum=True needs an optimizer with momentum or betas; "
                    f"{type(optimizer).__name__} has neither (pass cycle_momentum=False)"
                )
            self.use_beta1 = "betas" in optimizer.defaults
            max_momenta = _per_group("max_momentum", optimizer, max_momentum)
            base_momenta = _per_group("base_momentum", optimizer, base_momentum)
            if last_epoch == -1:
                for group, top, bottom in zip(optimizer.param_groups, max_momenta, base_momenta):
                    self._set_momentum(group, top)
                    group["max_momentum"] = top
                    group["base_momentum"] = bottom
        super().__init__(optimizer, last_epoch)

    def _set_momentum(self, group: dict, value: float) -> None:
        if self.use_beta1:
            group["betas"] = (value, *group["betas"][1:])
        else:
            group["momentum"] = value

    def _anneal(self, start: float, end: float, pct: float) -> float:
        if self._anneal_func_type == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def get_lr(self) -> list:
        """The rates for this step (and, with ``cycle_momentum``, sets the groups' momentum).

        Raises:
            ValueError: ``last_epoch`` is past ``total_steps``.
        """
        self._warn_if_outside_step()
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(
                f"OneCycleLR: tried to step {step} times; the specified number of total steps is "
                f"{self.total_steps}"
            )
        lrs = []
        last = len(self._schedule_phases) - 1
        for group in self.optimizer.param_groups:
            start_step = 0.0
            for i, phase in enumerate(self._schedule_phases):
                end_step = phase["end_step"]
                if step <= end_step or i == last:
                    pct = (step - start_step) / (end_step - start_step)
                    lrs.append(self._anneal(group[phase["start_lr"]], group[phase["end_lr"]], pct))
                    if self.cycle_momentum:
                        momentum = self._anneal(group[phase["start_momentum"]], group[phase["end_momentum"]], pct)
                        self._set_momentum(group, momentum)
                    break
                start_step = end_step
        return lrs


def _total_steps(total_steps, epochs, steps_per_epoch) -> int:
    def positive_int(value):
        return isinstance(value, int) and not isinstance(value, bool) and value > 0

    if total_steps is not None:
        if not positive_int(total_steps):
            raise ValueError(f"OneCycleLR: expected a positive integer total_steps, but got {total_steps!r}")
        return total_steps
    if epochs is not None and steps_per_epoch is not None:
        if not positive_int(epochs):
            raise ValueError(f"OneCycleLR: expected a positive integer epochs, but got {epochs!r}")
        if not positive_int(steps_per_epoch):
            raise ValueError(f"OneCycleLR: expected a positive integer steps_per_epoch, but got {steps_per_epoch!r}")
        return epochs * steps_per_epoch
    raise ValueError("OneCycleLR: you must define either total_steps OR (epochs AND steps_per_epoch)")


def _phases(total_steps: int, pct_start: float, three_phase: bool) -> list:
    """The schedule's phases: where each ends and which group entries it anneals between."""
    def phase(end_step, start_lr, end_lr, start_momentum, end_momentum):
        return {"end_step": end_step, "start_lr": start_lr, "end_lr": end_lr,
                "start_momentum": start_momentum, "end_momentum": end_momentum}

    rise = phase(float(pct_start * total_steps) - 1, "initial_lr", "max_lr", "max_momentum", "base_momentum")
    if not three_phase:
        return [rise, phase(total_steps - 1, "max_lr", "min_lr", "base_momentum", "max_momentum")]
    return [
        rise,
        phase(float(2 * pct_start * total_steps) - 2, "max_lr", "initial_lr", "base_momentum", "max_momentum"),
        phase(total_steps - 1, "initial_lr", "min_lr", "max_momentum", "max_momentum"),
    ]


def _scheduler_list(owner: str, schedulers) -> list:
    """``schedulers`` (a non-empty list or tuple of objects with an ``optimizer``) as a list.

    Raises:
        TypeError: not a list or tuple, or an entry without an ``optimizer`` attribute.
        ValueError: an empty list.
    """
    if not isinstance(schedulers, (list, tuple)):
        raise TypeError(f"{owner}: schedulers must be a list of schedulers, got {type(schedulers).__name__}")
    if not schedulers:
        raise ValueError(f"{owner} expects at least one scheduler, but got no scheduler")
    for index, scheduler in enumerate(schedulers):
        if not hasattr(scheduler, "optimizer"):
            raise TypeError(f"{owner}: the scheduler at index {index} should have `optimizer` as its attribute")
    return list(schedulers)


def _check_schedulers(owner: str, optimizer, schedulers) -> None:
    for index, scheduler in enumerate(schedulers):
        if isinstance(scheduler, ReduceLROnPlateau):
            raise ValueError(
                f"{owner} does not support ReduceLROnPlateau (its step() needs the metric), "
                f"but got one at index {index}"
            )
        if scheduler.optimizer is not optimizer:
            raise ValueError(
                f"{owner} expects all schedulers to belong to the same optimizer, but the "
                f"{type(scheduler).__name__} at index {index} has another one"
            )


class SequentialLR(LRScheduler):
    """Runs several schedulers one after another, switching at the given epochs.

    Scheduler ``i + 1`` takes over at epoch ``milestones[i]``, starting its
    own schedule from epoch 0 (from its closed form where it has one) on
    the initial rates.

    Args:
        optimizer: the scheduled optimizer (every scheduler's).
        schedulers: the schedulers, already constructed on ``optimizer``.
        milestones: the epochs of the switches, one fewer than schedulers.
        last_epoch: see ``LRScheduler``.

    Raises:
        ValueError: no schedulers, a ReduceLROnPlateau, a scheduler of
            another optimizer, or a wrong number of milestones.
        TypeError: ``schedulers`` is not a list, a scheduler without an
            ``optimizer`` attribute, or ``milestones`` not a list of ints.
    """

    def __init__(self, optimizer: Optimizer, schedulers: list, milestones: list, last_epoch: int = -1):
        schedulers = _scheduler_list("SequentialLR", schedulers)
        _check_schedulers("SequentialLR", optimizer, schedulers)
        if not isinstance(milestones, (list, tuple)) or not all(
            isinstance(m, int) and not isinstance(m, bool) for m in milestones
        ):
            raise TypeError(f"SequentialLR: milestones must be a list of ints, got {milestones!r:.60}")
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(
                "SequentialLR expects one milestone fewer than schedulers, but got "
                f"{len(schedulers)} schedulers and {len(milestones)} milestones"
            )
        self._schedulers = list(schedulers)
        self._milestones = list(milestones)
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        # Undo what constructing the schedulers did, then start the one that runs at epoch 0.
        for group in optimizer.param_groups:
            group["lr"] = group["initial_lr"]
        for scheduler in _leaves(self._schedulers):
            scheduler.last_epoch -= 1
        first = self._schedulers[bisect_right(self._milestones, 0)]
        first._initial_step()
        self._last_lr = first.get_last_lr()

    def step(self) -> None:
        """Advance the schedule: step the scheduler in charge, or restart the next one at its milestone."""
        self.last_epoch += 1
        index = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[index]
        if index > 0 and self._milestones[index - 1] == self.last_epoch:
            if hasattr(scheduler, "_schedulers"):
                # PyTorch fails here too (NotImplementedError from get_lr), with no message.
                raise NotImplementedError(
                    f"SequentialLR cannot restart the {type(scheduler).__name__} at milestone {self.last_epoch}: "
                    "a scheduler of schedulers has no schedule of its own to restart; put it first, or list its "
                    "schedulers in this SequentialLR"
                )
            scheduler._update_lr(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()

    def state_dict(self) -> dict:
        """The state, with each scheduler's own state dict under ``"_schedulers"``."""
        state = {k: copy.deepcopy(v) for k, v in self.__dict__.items() if k not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [scheduler.state_dict() for scheduler in self._schedulers]
        return state

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore the state, and each scheduler's from its entry.

        Raises:
            ValueError: the number of saved schedulers differs (besides ``LRScheduler.load_state_dict``'s errors).
        """
        _load_nested(self, state_dict)


class ChainedScheduler(LRScheduler):
    """Steps several schedulers together: each ``step()`` calls every scheduler's ``step()`` in order.

    Their effects compose when they are chainable (each scales the current rate).

    Args:
        schedulers: the schedulers, all of one optimizer.
        optimizer: that optimizer (default: the first scheduler's).

    Raises:
        ValueError: no schedulers, a ReduceLROnPlateau, or schedulers of different optimizers.
        TypeError: ``schedulers`` is not a list, or a scheduler without an ``optimizer`` attribute.
    """

    def __init__(self, schedulers, optimizer: Optimizer | None = None):
        schedulers = _scheduler_list("ChainedScheduler", schedulers)
        optimizer = optimizer or schedulers[0].optimizer
        _check_schedulers("ChainedScheduler", optimizer, schedulers)
        self._schedulers = list(schedulers)
        self.optimizer = optimizer
        self._last_lr = _current_lrs(self._schedulers[-1].optimizer)

    def step(self) -> None:
        """Step every scheduler, in order."""
        for scheduler in self._schedulers:
            scheduler.step()
        self._last_lr = _current_lrs(self._schedulers[-1].optimizer)

    def state_dict(self) -> dict:
        """See ``SequentialLR.state_dict``."""
        state = {k: copy.deepcopy(v) for k, v in self.__dict__.items() if k not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [scheduler.state_dict() for scheduler in self._schedulers]
        return state

    def load_state_dict(self, state_dict: dict) -> None:
        """See ``SequentialLR.load_state_dict``."""
        _load_nested(self, state_dict)


def _leaves(schedulers):
    """The schedulers in ``schedulers``, with nested Sequential/Chained ones replaced by theirs."""
    for scheduler in schedulers:
        if hasattr(scheduler, "_schedulers"):
            yield from _leaves(scheduler._schedulers)
        else:
            yield scheduler


def _load_nested(owner, state_dict: dict) -> None:
    owner._check_state_keys(state_dict, extra=("_schedulers",))
    saved = _restore_all_but(owner, state_dict, "_schedulers", owner._schedulers, [], "schedulers, this one")
    for scheduler, state in zip(owner._schedulers, saved):
        scheduler.load_state_dict(state)


class ReduceLROnPlateau(LRScheduler):
    """Multiplies the rates by ``factor`` when a metric has stopped improving for ``patience`` epochs.

    Call ``step(metric)`` once per epoch. A value counts as an improvement
    when it beats the best so far by more than the threshold (``mode="min"``:
    ``best * (1 - threshold)`` with ``threshold_mode="rel"``, ``best - threshold``
    with ``"abs"``; ``mode="max"`` mirrors it). After more than ``patience``
    epochs without one, each group's rate becomes ``max(lr * factor, min_lr)``
    (a change smaller than ``eps`` is skipped), then ``cooldown`` epochs
    pass during which bad epochs are not counted.

    Args:
        optimizer: the scheduled optimizer.
        mode: ``"min"`` (default) or ``"max"``.
        factor: the decay factor, < 1 (default 0.1).
        patience: epochs without improvement tolerated (default 10).
        threshold: the margin of an improvement (default 1e-4).
        threshold_mode: ``"rel"`` (default) or ``"abs"``.
        cooldown: epochs to wait after a reduction (default 0).
        min_lr: the lowest rate, for all groups or a list with one per group.
        eps: the smallest change of rate applied (default 1e-8).

    Raises:
        ValueError: ``factor >= 1`` (or NaN), an unknown ``mode`` or ``threshold_mode``,
            or a ``min_lr`` list whose length differs from the number of groups.
        TypeError: ``optimizer`` is not an ``Optimizer``, or a number argument is not a number.
    """

    def __init__(self, optimizer: Optimizer, mode: str = "min", factor: float = 0.1, patience: int = 10,
                 threshold: float = 1e-4, threshold_mode: str = "rel", cooldown: int = 0, min_lr=0,
                 eps: float = 1e-8):
        _check_real("ReduceLROnPlateau", factor=factor, patience=patience, threshold=threshold, cooldown=cooldown,
                    eps=eps)
        if not factor < 1.0:  # NaN fails too
            raise ValueError(f"ReduceLROnPlateau: factor should be < 1.0, got {factor}")
        self.factor = factor
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != len(optimizer.param_groups):
                raise ValueError(
                    f"ReduceLROnPlateau: expected {len(optimizer.param_groups)} min_lrs, got {len(min_lr)}"
                )
            _check_real("ReduceLROnPlateau", **{f"min_lr[{i}]": low for i, low in enumerate(min_lr)})
            self.default_min_lr = None
            self.min_lrs = list(min_lr)
        else:
            _check_real("ReduceLROnPlateau", min_lr=min_lr)
            self.default_min_lr = min_lr
            self.min_lrs = [min_lr] * len(optimizer.param_groups)
        self.patience = patience
        self.cooldown = cooldown
        self.eps = eps
        self.last_epoch = 0
        self._last_lr = _current_lrs(optimizer)
        self._set_comparison(mode, threshold, threshold_mode)
        self._reset()

    def _set_comparison(self, mode: str, threshold: float, threshold_mode: str) -> None:
        if mode not in ("min", "max"):
            raise ValueError(f"ReduceLROnPlateau: mode {mode!r} is unknown (expected 'min' or 'max')")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError(
                f"ReduceLROnPlateau: threshold mode {threshold_mode!r} is unknown (expected 'rel' or 'abs')"
            )
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self.mode = mode
        self.threshold = threshold
        self.threshold_mode = threshold_mode

    def _reset(self) -> None:
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    @property
    def in_cooldown(self) -> bool:
        """True while epochs after a reduction are being waited out."""
        return self.cooldown_counter > 0

    def _is_better(self, value: float, best: float) -> bool:
        if self.mode == "min":
            if self.threshold_mode == "rel":
                return value < best * (1.0 - self.threshold)
            return value < best - self.threshold
        if self.threshold_mode == "rel":
            return value > best * (self.threshold + 1.0)
        return value > best + self.threshold

    def step(self, metrics, epoch=None) -> None:
        """Record this epoch's metric (a number or a one-element Tensor); reduce the rates when it is time.

        Args:
            metrics: the monitored quantity.
            epoch: deprecated (warns, as in PyTorch): the epoch index to record.
        """
        current = float(metrics)
        if epoch is None:
            epoch = self.last_epoch + 1
        else:
            warnings.warn(_EPOCH_DEPRECATION, UserWarning, stacklevel=2)
        self.last_epoch = epoch
        if self._is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            self._reduce_lr()
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = _current_lrs(self.optimizer)

    def _reduce_lr(self) -> None:
        groups = self.optimizer.param_groups
        if len(groups) != len(self.min_lrs):
            if self.default_min_lr is None:
                raise RuntimeError(
                    f"ReduceLROnPlateau: the optimizer has {len(groups)} param groups but min_lr was given for "
                    f"{len(self.min_lrs)} (a group was added after the scheduler was made): set the scheduler's "
                    "min_lrs to one value per group"
                )
            self.min_lrs = [self.default_min_lr] * len(groups)
        for group, min_lr in zip(groups, self.min_lrs):
            old_lr = float(group["lr"])
            new_lr = max(old_lr * self.factor, min_lr)
            if old_lr - new_lr > self.eps:
                group["lr"] = new_lr

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore the state, checking its mode and threshold_mode.

        Raises:
            ValueError: see ``LRScheduler.load_state_dict``, or an unknown mode / threshold_mode.
        """
        super().load_state_dict(state_dict)
        self._set_comparison(self.mode, self.threshold, self.threshold_mode)
