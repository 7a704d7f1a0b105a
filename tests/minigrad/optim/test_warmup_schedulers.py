"""ConstantLR and LinearLR share their ``get_lr`` (``_WarmupLR``): each keeps PyTorch's warning and state dict."""

from __future__ import annotations

import warnings

import pytest
import torch

import minigrad as mg
from minigrad.optim import lr_scheduler

WARMUPS = {
    "ConstantLR": {"factor": 0.5, "total_iters": 3},
    "LinearLR": {"start_factor": 0.25, "end_factor": 0.75, "total_iters": 3},
}


@pytest.mark.parametrize("name", WARMUPS)
def test_get_lr_outside_step_warns_at_the_caller(name):
    optimizer = mg.optim.SGD([mg.nn.Parameter(mg.zeros(1))], lr=0.1)
    scheduler = getattr(lr_scheduler, name)(optimizer, **WARMUPS[name])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scheduler.get_lr()
    assert [w.category for w in caught] == [UserWarning]
    assert "get_last_lr" in str(caught[0].message) and caught[0].filename == __file__


@pytest.mark.parametrize("name", WARMUPS)
def test_schedule_and_state_dict_are_pytorchs(name):
    optimizer = mg.optim.SGD([mg.nn.Parameter(mg.zeros(1))], lr=0.1)
    reference_optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.1)
    scheduler = getattr(lr_scheduler, name)(optimizer, **WARMUPS[name])
    reference = getattr(torch.optim.lr_scheduler, name)(reference_optimizer, **WARMUPS[name])
    for _ in range(5):
        assert scheduler.get_last_lr() == reference.get_last_lr()
        optimizer.step()
        reference_optimizer.step()
        scheduler.step()
        reference.step()
    assert scheduler.state_dict() == reference.state_dict()
    assert list(scheduler.state_dict())[:3] == list(reference.state_dict())[:3]
