"""``minigrad.optim.lr_scheduler`` against ``torch.optim.lr_scheduler`` as oracle.

Every schedule is built twice from one factory, ``make(ls, optimizer)`` with
``ls`` either module, on optimizers with the same param groups, and stepped
side by side (``optimizer.step()`` then ``scheduler.step()``). The schedules
are plain Python float arithmetic done in PyTorch's order, so learning rates,
momenta and state dicts are compared for equality, not closeness.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad as mg
from minigrad import optim
from minigrad.nn import Parameter
from minigrad.optim import lr_scheduler

STEPS = 40
SHAPES = [(3, 2), (4,)]


def optimizers(kind: str):
    """The same optimizer in minigrad and PyTorch: (mine, theirs)."""
    def build(module, params):
        first, second = params
        if kind == "sgd":
            return module.SGD([{"params": [first]}, {"params": [second], "lr": 0.02, "momentum": 0.5}],
                              lr=0.1, momentum=0.9)
        if kind == "adam":
            return module.Adam([{"params": [first], "lr": 0.01}, {"params": [second], "betas": (0.8, 0.99)}],
                               lr=0.003)
        if kind == "rmsprop":
            return module.RMSprop(params, lr=0.05, momentum=0.8)
        if kind == "adagrad":
            return module.Adagrad(params, lr=0.1)
        raise AssertionError(kind)

    return (build(optim, [Parameter(np.zeros(s)) for s in SHAPES]),
            build(torch.optim, [torch.nn.Parameter(torch.zeros(s)) for s in SHAPES]))


def groups_without_params(optimizer):
    return [{k: v for k, v in g.items() if k != "params"} for g in optimizer.param_groups]


def comparable_groups(optimizer, reference):
    """Each group's entries that minigrad has, from both optimizers (PyTorch's extra ones dropped)."""
    mine = groups_without_params(optimizer)
    theirs = [{k: g[k] for k in m if k in g} for m, g in zip(mine, reference.param_groups)]
    return mine, theirs


def assert_same_schedule_state(scheduler, reference, optimizer, torch_optimizer):
    assert scheduler.get_last_lr() == reference.get_last_lr()
    mine, theirs = comparable_groups(optimizer, torch_optimizer)
    assert mine == theirs


def step_both(optimizer, torch_optimizer, scheduler, reference, metric=None):
    optimizer.step()
    torch_optimizer.step()
    if metric is None:
        scheduler.step()
        reference.step()
    else:
        scheduler.step(metric)
        reference.step(metric)


SCHEDULES = {
    "step": lambda ls, o: ls.StepLR(o, step_size=4, gamma=0.5),
    "step_every_epoch": lambda ls, o: ls.StepLR(o, 1, gamma=0.9),
    "multistep": lambda ls, o: ls.MultiStepLR(o, [3, 7, 7, 12, 30], gamma=0.3),
    "exponential": lambda ls, o: ls.ExponentialLR(o, 0.93),
    "cosine": lambda ls, o: ls.CosineAnnealingLR(o, T_max=10, eta_min=0.001),
    "cosine_odd": lambda ls, o: ls.CosineAnnealingLR(o, T_max=7),
    "lambda": lambda ls, o: ls.LambdaLR(o, lambda epoch: 0.95**epoch),
    "lambda_per_group": lambda ls, o: ls.LambdaLR(
        o, [lambda e: 1 / (1 + e), lambda e: 0.9 ** (e // 3)][-len(o.param_groups):]),
    "multiplicative": lambda ls, o: ls.MultiplicativeLR(o, lambda epoch: 0.97 if epoch % 2 else 1.01),
    "linear_warmup": lambda ls, o: ls.LinearLR(o),
    "linear_decay": lambda ls, o: ls.LinearLR(o, start_factor=1.0, end_factor=0.1, total_iters=20),
    "constant": lambda ls, o: ls.ConstantLR(o, factor=0.5, total_iters=4),
    "polynomial": lambda ls, o: ls.PolynomialLR(o, total_iters=20, power=2.0),
    "onecycle_cos": lambda ls, o: ls.OneCycleLR(o, max_lr=0.5, total_steps=STEPS),
    "onecycle_linear": lambda ls, o: ls.OneCycleLR(o, max_lr=0.5, total_steps=STEPS, anneal_strategy="linear"),
    "onecycle_three_phase": lambda ls, o: ls.OneCycleLR(o, max_lr=1.0, epochs=4, steps_per_epoch=10,
                                                      three_phase=True, pct_start=0.25),
    "onecycle_three_phase_linear": lambda ls, o: ls.OneCycleLR(
        o, max_lr=1.0, total_steps=STEPS, three_phase=True, anneal_strategy="linear", div_factor=10.0,
        final_div_factor=100.0),
    "onecycle_per_group": lambda ls, o: ls.OneCycleLR(
        o, max_lr=[0.4, 0.2][: len(o.param_groups)], total_steps=STEPS + 5,
        base_momentum=[0.8, 0.7][: len(o.param_groups)], max_momentum=0.9),
    "onecycle_no_momentum": lambda ls, o: ls.OneCycleLR(o, max_lr=0.3, total_steps=STEPS, cycle_momentum=False),
    "sequential": lambda ls, o: ls.SequentialLR(
        o, [ls.LinearLR(o, start_factor=0.1, total_iters=5), ls.CosineAnnealingLR(o, T_max=20)], milestones=[5]),
    "sequential_three": lambda ls, o: ls.SequentialLR(
        o, [ls.ConstantLR(o, factor=0.2, total_iters=10), ls.ExponentialLR(o, 0.9), ls.StepLR(o, 3, gamma=0.5)],
        milestones=[6, 20]),
    "sequential_nested": lambda ls, o: ls.SequentialLR(
        o, [ls.ChainedScheduler([ls.StepLR(o, 2, gamma=0.9), ls.MultiStepLR(o, [5], gamma=0.1)]),
            ls.ExponentialLR(o, 0.8)],
        milestones=[8]),
    "chained": lambda ls, o: ls.ChainedScheduler([ls.ConstantLR(o, factor=0.1, total_iters=3),
                                                ls.ExponentialLR(o, 0.9)]),
}
MOMENTUM_FREE = {name for name in SCHEDULES if name.startswith("onecycle") and name != "onecycle_no_momentum"}
CASES = [(name, kind) for name in SCHEDULES for kind in ("sgd", "adam", "rmsprop", "adagrad")
         if not (kind == "adagrad" and name in MOMENTUM_FREE)]


@pytest.mark.parametrize("name, kind", CASES)
def test_schedule_matches_pytorch(name, kind):
    optimizer, torch_optimizer = optimizers(kind)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch's SequentialLR warns about the order of its own steps
        scheduler = SCHEDULES[name](lr_scheduler, optimizer)
        reference = SCHEDULES[name](torch.optim.lr_scheduler, torch_optimizer)
        assert_same_schedule_state(scheduler, reference, optimizer, torch_optimizer)
        for _ in range(STEPS):
            step_both(optimizer, torch_optimizer, scheduler, reference)
            assert_same_schedule_state(scheduler, reference, optimizer, torch_optimizer)
    assert scheduler.state_dict() == reference.state_dict()


@pytest.mark.parametrize("name", list(SCHEDULES))
def test_state_dict_round_trip_mid_schedule_continues_identically(name, tmp_path):
    optimizer, _ = optimizers("sgd")
    scheduler = SCHEDULES[name](lr_scheduler, optimizer)
    for _ in range(17):
        optimizer.step()
        scheduler.step()
    mg.save({"optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict()}, tmp_path / "ckpt")

    restored_optimizer, _ = optimizers("sgd")
    restored = SCHEDULES[name](lr_scheduler, restored_optimizer)  # as PyTorch advises: scheduler, then loads
    saved = mg.load(tmp_path / "ckpt")
    restored_optimizer.load_state_dict(saved["optimizer"])
    restored.load_state_dict(saved["scheduler"])
    assert restored.get_last_lr() == scheduler.get_last_lr()
    for _ in range(STEPS - 17):
        for o, s in ((optimizer, scheduler), (restored_optimizer, restored)):
            o.step()
            s.step()
        assert restored.get_last_lr() == scheduler.get_last_lr()
        assert groups_without_params(restored_optimizer) == groups_without_params(optimizer)


@pytest.mark.parametrize("name", ["step", "cosine", "onecycle_three_phase", "sequential", "chained", "lambda"])
def test_pytorchs_state_dict_loads_and_continues_like_pytorch(name):
    optimizer, torch_optimizer = optimizers("adam")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reference = SCHEDULES[name](torch.optim.lr_scheduler, torch_optimizer)
        for _ in range(11):
            torch_optimizer.step()
            reference.step()
        scheduler = SCHEDULES[name](lr_scheduler, optimizer)
        torch_state = torch_optimizer.state_dict()
        optimizer.load_state_dict({"state": {}, "param_groups": torch_state["param_groups"]})
        scheduler.load_state_dict(reference.state_dict())
        for _ in range(STEPS - 11):
            step_both(optimizer, torch_optimizer, scheduler, reference)
            assert_same_schedule_state(scheduler, reference, optimizer, torch_optimizer)


def test_lambda_state_dict_keeps_callable_objects_attributes_but_not_functions():
    class Decay:
        def __init__(self, rate):
            self.rate = rate

        def __call__(self, epoch):
            return self.rate**epoch

    optimizer, torch_optimizer = optimizers("sgd")
    scheduler = lr_scheduler.LambdaLR(optimizer, [Decay(0.5), lambda e: 1.0])
    reference = torch.optim.lr_scheduler.LambdaLR(torch_optimizer, [Decay(0.5), lambda e: 1.0])
    state = scheduler.state_dict()
    assert state == reference.state_dict()
    assert state["lr_lambdas"] == [{"rate": 0.5}, None]
    other = lr_scheduler.LambdaLR(optimizers("sgd")[0], [Decay(0.9), lambda e: 2.0])
    other.load_state_dict(state)
    assert other.lr_lambdas[0].rate == 0.5
    assert state["lr_lambdas"] == [{"rate": 0.5}, None]  # the dict given is left as it was


@pytest.mark.parametrize("kind", ["sgd", "adam"])
@pytest.mark.parametrize("config", [
    dict(),
    dict(mode="max", factor=0.5, patience=2),
    dict(threshold_mode="abs", threshold=0.05, patience=1, cooldown=2),
    dict(mode="max", threshold_mode="abs", threshold=0.01, patience=0, min_lr=[0.05, 1e-3]),
    dict(patience=1, factor=0.5, min_lr=0.004, eps=1e-3),
    dict(patience=0, factor=0.9, eps=0.5),  # every reduction smaller than eps: nothing changes
], ids=str)
def test_reduce_on_plateau_matches_pytorch(config, kind, tmp_path):
    optimizer, torch_optimizer = optimizers(kind)
    scheduler = lr_scheduler.ReduceLROnPlateau(optimizer, **config)
    reference = torch.optim.lr_scheduler.ReduceLROnPlateau(torch_optimizer, **config)
    rng = np.random.default_rng(3)
    metric = 1.0
    metrics = []
    for _ in range(60):
        metric *= float(rng.choice([0.9, 0.999, 1.0, 1.0, 1.02]))
        metrics.append(-metric if config.get("mode") == "max" else metric)
    for i, value in enumerate(metrics):
        mine = mg.tensor(value, dtype=mg.float64) if i % 2 else value  # a one-element Tensor is a metric too
        optimizer.step()
        torch_optimizer.step()
        scheduler.step(mine)
        reference.step(value)
        assert_same_schedule_state(scheduler, reference, optimizer, torch_optimizer)
        assert (scheduler.best, scheduler.num_bad_epochs, scheduler.cooldown_counter, scheduler.in_cooldown) == (
            reference.best, reference.num_bad_epochs, reference.cooldown_counter, reference.in_cooldown)
        if i == 30:
            mg.save({"o": optimizer.state_dict(), "s": scheduler.state_dict()}, tmp_path / "ckpt")
            assert scheduler.state_dict() == reference.state_dict()
    saved = mg.load(tmp_path / "ckpt")
    optimizer, _ = optimizers(kind)
    restored = lr_scheduler.ReduceLROnPlateau(optimizer)
    optimizer.load_state_dict(saved["o"])
    restored.load_state_dict(saved["s"])
    for value, expected in zip(metrics[31:], _plateau_lrs(config, kind, metrics)[31:]):
        restored.step(value)
        assert restored.get_last_lr() == expected


def _plateau_lrs(config, kind, metrics):
    _, torch_optimizer = optimizers(kind)
    reference = torch.optim.lr_scheduler.ReduceLROnPlateau(torch_optimizer, **config)
    lrs = []
    for value in metrics:
        reference.step(value)
        lrs.append(reference.get_last_lr())
    return lrs


def test_reduce_on_plateau_needs_min_lrs_for_a_group_added_later():
    optimizer, torch_optimizer = optimizers("sgd")
    scheduler = lr_scheduler.ReduceLROnPlateau(optimizer, patience=0, min_lr=[0.0, 0.0])
    reference = torch.optim.lr_scheduler.ReduceLROnPlateau(torch_optimizer, patience=0, min_lr=[0.0, 0.0])
    optimizer.add_param_group({"params": [Parameter(np.zeros(1))]})
    torch_optimizer.add_param_group({"params": [torch.nn.Parameter(torch.zeros(1))]})
    for s in (scheduler, reference):
        s.step(1.0)
        with pytest.raises(RuntimeError, match="min_lrs" if s is scheduler else None):
            s.step(2.0)
    # With a single min_lr the new group is covered, as in PyTorch.
    optimizer, _ = optimizers("sgd")
    scheduler = lr_scheduler.ReduceLROnPlateau(optimizer, patience=0, min_lr=0.001)
    optimizer.add_param_group({"params": [Parameter(np.zeros(1))], "lr": 0.5})
    scheduler.step(1.0)
    scheduler.step(2.0)
    assert scheduler.get_last_lr() == [0.1 * 0.1, 0.02 * 0.1, 0.5 * 0.1]


# -- closed forms, resuming, warnings -----------------------------------------------------------


@pytest.mark.parametrize("name", ["step", "multistep", "exponential", "cosine", "linear_decay", "constant",
                                  "polynomial", "lambda"])
def test_step_with_an_epoch_warns_and_uses_the_closed_form_like_pytorch(name):
    optimizer, torch_optimizer = optimizers("sgd")
    scheduler = SCHEDULES[name](lr_scheduler, optimizer)
    reference = SCHEDULES[name](torch.optim.lr_scheduler, torch_optimizer)
    for epoch in (3, 4, 12, 7, 25, 0, 8):
        with pytest.warns(UserWarning, match="deprecated"):
            scheduler.step(epoch)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            reference.step(epoch)
        assert_same_schedule_state(scheduler, reference, optimizer, torch_optimizer)
        step_both(optimizer, torch_optimizer, scheduler, reference)
        assert_same_schedule_state(scheduler, reference, optimizer, torch_optimizer)


@pytest.mark.parametrize("name", ["step", "exponential", "cosine", "linear_warmup", "polynomial", "multistep",
                                  "onecycle_cos"])
def test_resuming_with_last_epoch_matches_pytorch(name):
    optimizer, torch_optimizer = optimizers("sgd")
    factories = {
        "step": lambda ls, o, last: ls.StepLR(o, 3, gamma=0.5, last_epoch=last),
        "exponential": lambda ls, o, last: ls.ExponentialLR(o, 0.9, last_epoch=last),
        "cosine": lambda ls, o, last: ls.CosineAnnealingLR(o, T_max=12, eta_min=0.01, last_epoch=last),
        "linear_warmup": lambda ls, o, last: ls.LinearLR(o, total_iters=10, last_epoch=last),
        "polynomial": lambda ls, o, last: ls.PolynomialLR(o, total_iters=15, last_epoch=last),
        "multistep": lambda ls, o, last: ls.MultiStepLR(o, [6, 9], last_epoch=last),
        "onecycle_cos": lambda ls, o, last: ls.OneCycleLR(o, max_lr=0.5, total_steps=30, last_epoch=last),
    }
    make = factories[name]
    make(lr_scheduler, optimizer, -1)  # records initial_lr (and OneCycle's entries) in the groups
    make(torch.optim.lr_scheduler, torch_optimizer, -1)
    scheduler = make(lr_scheduler, optimizer, 5)
    reference = make(torch.optim.lr_scheduler, torch_optimizer, 5)
    assert scheduler.last_epoch == reference.last_epoch == 6
    assert_same_schedule_state(scheduler, reference, optimizer, torch_optimizer)
    for _ in range(20):
        step_both(optimizer, torch_optimizer, scheduler, reference)
        assert_same_schedule_state(scheduler, reference, optimizer, torch_optimizer)


def test_resuming_needs_initial_lr_in_the_groups():
    optimizer, torch_optimizer = optimizers("sgd")
    with pytest.raises(KeyError):
        torch.optim.lr_scheduler.StepLR(torch_optimizer, 3, last_epoch=4)
    with pytest.raises(KeyError, match="initial_lr.*load the optimizer's state dict"):
        lr_scheduler.StepLR(optimizer, 3, last_epoch=4)


def test_initial_lr_is_kept_and_base_lrs_come_from_it():
    optimizer, _ = optimizers("sgd")
    optimizer.param_groups[0]["initial_lr"] = 0.7
    scheduler = lr_scheduler.ExponentialLR(optimizer, 0.5)
    assert scheduler.base_lrs == [0.7, 0.02]
    assert [g["initial_lr"] for g in optimizer.param_groups] == [0.7, 0.02]
    assert optimizer.state_dict()["param_groups"][1]["initial_lr"] == 0.02


def test_get_lr_outside_step_warns_like_pytorch_and_get_last_lr_is_a_copy():
    optimizer, torch_optimizer = optimizers("sgd")
    scheduler = lr_scheduler.StepLR(optimizer, 2)
    reference = torch.optim.lr_scheduler.StepLR(torch_optimizer, 2)
    with pytest.warns(UserWarning, match="get_last_lr"):
        reference.get_lr()
    with pytest.warns(UserWarning, match="get_last_lr"):
        scheduler.get_lr()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        scheduler.step()  # no warning inside step
    last = scheduler.get_last_lr()
    last[0] = 123.0
    assert scheduler.get_last_lr() == [0.1, 0.02]


def test_a_group_added_afterwards_without_a_base_lr_is_refused_like_pytorch():
    optimizer, torch_optimizer = optimizers("sgd")
    scheduler = lr_scheduler.LambdaLR(optimizer, lambda e: 0.5)
    reference = torch.optim.lr_scheduler.LambdaLR(torch_optimizer, lambda e: 0.5)
    optimizer.add_param_group({"params": [Parameter(np.zeros(1))]})
    torch_optimizer.add_param_group({"params": [torch.nn.Parameter(torch.zeros(1))]})
    optimizer.step()
    torch_optimizer.step()
    with pytest.raises(ValueError):
        reference.step()
    with pytest.raises(ValueError, match="added after the scheduler"):
        scheduler.step()
    # Chainable schedulers scale whatever groups there are, in PyTorch as here.
    optimizer, torch_optimizer = optimizers("sgd")
    scheduler = lr_scheduler.ExponentialLR(optimizer, 0.5)
    reference = torch.optim.lr_scheduler.ExponentialLR(torch_optimizer, 0.5)
    optimizer.add_param_group({"params": [Parameter(np.zeros(1))], "lr": 0.4})
    torch_optimizer.add_param_group({"params": [torch.nn.Parameter(torch.zeros(1))], "lr": 0.4})
    step_both(optimizer, torch_optimizer, scheduler, reference)
    assert scheduler.get_last_lr() == reference.get_last_lr() == [0.05, 0.01, 0.2]


def test_onecycle_refuses_to_step_past_total_steps_like_pytorch():
    for ls, optimizer in zip((lr_scheduler, torch.optim.lr_scheduler), optimizers("sgd")):
        scheduler = ls.OneCycleLR(optimizer, max_lr=0.1, total_steps=3)
        for _ in range(3):
            optimizer.step()
            scheduler.step()
        with pytest.raises(ValueError, match="(?i)tried to step 4 times"):
            scheduler.step()


# -- bad arguments ----------------------------------------------------------------------------

BAD = {
    "not_an_optimizer": lambda ls, o: ls.StepLR([o], 3),
    "plateau_not_an_optimizer": lambda ls, o: ls.ReduceLROnPlateau("sgd"),
    "onecycle_not_an_optimizer": lambda ls, o: ls.OneCycleLR(None, max_lr=0.1, total_steps=3),
    "lambda_count": lambda ls, o: ls.LambdaLR(o, [lambda e: 1.0] * 3),
    "lambda_not_callable": lambda ls, o: ls.LambdaLR(o, 0.5),
    "multiplicative_not_callable": lambda ls, o: ls.MultiplicativeLR(o, [lambda e: 1.0, 2.0]),
    "linear_start_zero": lambda ls, o: ls.LinearLR(o, start_factor=0.0),
    "linear_start_above_one": lambda ls, o: ls.LinearLR(o, start_factor=1.5),
    "linear_end_negative": lambda ls, o: ls.LinearLR(o, end_factor=-0.1),
    "constant_factor": lambda ls, o: ls.ConstantLR(o, factor=1.5),
    "onecycle_no_length": lambda ls, o: ls.OneCycleLR(o, max_lr=0.1),
    "onecycle_only_epochs": lambda ls, o: ls.OneCycleLR(o, max_lr=0.1, epochs=3),
    "onecycle_zero_steps": lambda ls, o: ls.OneCycleLR(o, max_lr=0.1, total_steps=0),
    "onecycle_float_steps": lambda ls, o: ls.OneCycleLR(o, max_lr=0.1, total_steps=10.0),
    "onecycle_zero_epochs": lambda ls, o: ls.OneCycleLR(o, max_lr=0.1, epochs=0, steps_per_epoch=5),
    "onecycle_zero_steps_per_epoch": lambda ls, o: ls.OneCycleLR(o, max_lr=0.1, epochs=2, steps_per_epoch=0),
    "onecycle_pct_above_one": lambda ls, o: ls.OneCycleLR(o, max_lr=0.1, total_steps=10, pct_start=1.5),
    "onecycle_pct_int": lambda ls, o: ls.OneCycleLR(o, max_lr=0.1, total_steps=10, pct_start=0),
    "onecycle_strategy": lambda ls, o: ls.OneCycleLR(o, max_lr=0.1, total_steps=10, anneal_strategy="exp"),
    "onecycle_max_lr_count": lambda ls, o: ls.OneCycleLR(o, max_lr=[0.1, 0.2, 0.3], total_steps=10),
    "onecycle_momentum_count": lambda ls, o: ls.OneCycleLR(o, max_lr=0.1, total_steps=10, max_momentum=[0.9]),
    "sequential_empty": lambda ls, o: ls.SequentialLR(o, [], milestones=[]),
    "sequential_milestones": lambda ls, o: ls.SequentialLR(o, [ls.StepLR(o, 2), ls.StepLR(o, 3)], milestones=[]),
    "sequential_plateau": lambda ls, o: ls.SequentialLR(o, [ls.StepLR(o, 2), ls.ReduceLROnPlateau(o)], [3]),
    "sequential_no_optimizer": lambda ls, o: ls.SequentialLR(o, [ls.StepLR(o, 2), object()], [3]),
    "chained_empty": lambda ls, o: ls.ChainedScheduler([]),
    "chained_plateau": lambda ls, o: ls.ChainedScheduler([ls.StepLR(o, 2), ls.ReduceLROnPlateau(o)]),
    "plateau_factor": lambda ls, o: ls.ReduceLROnPlateau(o, factor=1.0),
    "plateau_mode": lambda ls, o: ls.ReduceLROnPlateau(o, mode="avg"),
    "plateau_threshold_mode": lambda ls, o: ls.ReduceLROnPlateau(o, threshold_mode="ratio"),
    "plateau_min_lr_count": lambda ls, o: ls.ReduceLROnPlateau(o, min_lr=[0.1]),
}


@pytest.mark.parametrize("name", list(BAD))
def test_bad_arguments_raise_pytorchs_exception_type(name):
    optimizer, torch_optimizer = optimizers("sgd")
    with pytest.raises(Exception) as theirs:  # the type is what is compared
        BAD[name](torch.optim.lr_scheduler, torch_optimizer)
    with pytest.raises(type(theirs.value)):
        BAD[name](lr_scheduler, optimizer)


@pytest.mark.parametrize("nested", ["ChainedScheduler", "SequentialLR"])
def test_sequential_cannot_restart_a_scheduler_of_schedulers_like_pytorch(nested):
    def make(ls, o):
        inner = [ls.StepLR(o, 2), ls.ExponentialLR(o, 0.9)]
        second = ls.ChainedScheduler(inner) if nested == "ChainedScheduler" else ls.SequentialLR(o, inner, [2])
        return ls.SequentialLR(o, [ls.ConstantLR(o, 0.5), second], milestones=[3])

    for ls, optimizer in zip((lr_scheduler, torch.optim.lr_scheduler), optimizers("sgd")):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            scheduler = make(ls, optimizer)
            scheduler.step()
            scheduler.step()
            with pytest.raises(NotImplementedError, match=None if ls is torch.optim.lr_scheduler else "put it first"):
                scheduler.step()


def test_onecycle_momentum_needs_an_optimizer_with_momentum_like_pytorch():
    optimizer, torch_optimizer = optimizers("adagrad")
    with pytest.raises(ValueError):
        torch.optim.lr_scheduler.OneCycleLR(torch_optimizer, max_lr=0.1, total_steps=10)
    with pytest.raises(ValueError, match="cycle_momentum=False"):
        lr_scheduler.OneCycleLR(optimizer, max_lr=0.1, total_steps=10)


def test_schedulers_of_another_optimizer_are_refused():
    optimizer, _ = optimizers("sgd")
    other, _ = optimizers("adam")
    with pytest.raises(ValueError, match="same optimizer"):
        lr_scheduler.SequentialLR(optimizer, [lr_scheduler.StepLR(optimizer, 2), lr_scheduler.StepLR(other, 2)],
                                  [3])
    with pytest.raises(ValueError, match="same optimizer"):
        lr_scheduler.ChainedScheduler([lr_scheduler.StepLR(optimizer, 2), lr_scheduler.StepLR(other, 2)])


def test_arguments_pytorch_only_fails_on_later_are_refused_at_construction():
    optimizer, _ = optimizers("sgd")
    with pytest.raises(ValueError, match="step_size"):
        lr_scheduler.StepLR(optimizer, 0)
    with pytest.raises(ValueError, match="step_size"):
        lr_scheduler.StepLR(optimizer, 2.5)
    with pytest.raises(ValueError, match="T_max"):
        lr_scheduler.CosineAnnealingLR(optimizer, 0)
    with pytest.raises(TypeError, match="milestones"):
        lr_scheduler.MultiStepLR(optimizer, [2.5])


def test_load_state_dict_refuses_another_schedulers_state():
    optimizer, _ = optimizers("sgd")
    step = lr_scheduler.StepLR(optimizer, 2)
    cosine = lr_scheduler.CosineAnnealingLR(optimizer, 10)
    with pytest.raises(ValueError, match=r"unexpected entries \['T_max', 'eta_min'\]"):
        step.load_state_dict(cosine.state_dict())
    with pytest.raises(TypeError, match="expects a dict"):
        step.load_state_dict([("last_epoch", 3)])
    sequential = lr_scheduler.SequentialLR(optimizer, [lr_scheduler.StepLR(optimizer, 2),
                                                       lr_scheduler.StepLR(optimizer, 3)], [4])
    state = sequential.state_dict()
    state["_schedulers"].pop()
    with pytest.raises(ValueError, match="1 schedulers"):
        sequential.load_state_dict(state)
    plateau = lr_scheduler.ReduceLROnPlateau(optimizer)
    state = plateau.state_dict()
    state["mode"] = "median"
    with pytest.raises(ValueError, match="median"):
        plateau.load_state_dict(state)


# -- property tests ---------------------------------------------------------------------------


def _trajectory(ls, optimizer, make, steps):
    """The learning rates and momenta after construction and each step, or the exception type raised."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            scheduler = make(ls, optimizer)
            out = [(scheduler.get_last_lr(), [g.get("momentum") for g in optimizer.param_groups])]
            for _ in range(steps):
                optimizer.step()
                scheduler.step()
                out.append((scheduler.get_last_lr(), [g.get("momentum") for g in optimizer.param_groups]))
        return out
    except Exception as error:  # compared with PyTorch's
        return type(error)


@settings(max_examples=20, deadline=None)
@given(total_steps=st.integers(1, 60), pct_start=st.floats(0.0, 1.0), strategy=st.sampled_from(["cos", "linear"]),
       three_phase=st.booleans(), div_factor=st.floats(1.0, 100.0), final_div_factor=st.floats(1.0, 1e5))
def test_onecycle_property(total_steps, pct_start, strategy, three_phase, div_factor, final_div_factor):
    def make(ls, o):
        return ls.OneCycleLR(o, max_lr=[0.3, 0.05], total_steps=total_steps, pct_start=pct_start,
                            anneal_strategy=strategy, three_phase=three_phase, div_factor=div_factor,
                            final_div_factor=final_div_factor)

    optimizer, torch_optimizer = optimizers("sgd")
    assert _trajectory(lr_scheduler, optimizer, make, total_steps) == _trajectory(
        torch.optim.lr_scheduler, torch_optimizer, make, total_steps)


@settings(max_examples=20, deadline=None)
@given(t_max=st.integers(1, 15), eta_min=st.floats(0.0, 0.05), steps=st.integers(1, 50),
       gamma=st.floats(0.5, 1.0), milestone=st.integers(1, 30))
def test_cosine_and_sequential_property(t_max, eta_min, steps, gamma, milestone):
    def cosine(ls, o):
        return ls.CosineAnnealingLR(o, T_max=t_max, eta_min=eta_min)

    def sequential(ls, o):
        return ls.SequentialLR(o, [ls.ExponentialLR(o, gamma), ls.CosineAnnealingLR(o, t_max, eta_min)], [milestone])

    for make in (cosine, sequential):
        optimizer, torch_optimizer = optimizers("sgd")
        mine = _trajectory(lr_scheduler, optimizer, make, steps)
        assert mine == _trajectory(torch.optim.lr_scheduler, torch_optimizer, make, steps)
        assert all(math.isfinite(lr) for lrs, _ in mine for lr in lrs)
