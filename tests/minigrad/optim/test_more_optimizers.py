"""``minigrad.optim``: RMSprop, Adadelta and Adagrad against ``torch.optim`` as oracle.

Same protocol as ``test_optim.py``: both optimizers get the same initial
parameters and the same 20 gradients (a parameter occasionally without
one), and parameters and state are compared after every step.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

import minigrad as mg
from minigrad import optim
from minigrad.nn import Parameter
from tests.minigrad.optim.test_optim import assert_same_state, make_pair, problem, set_grads

TOLERANCE = {np.float64: {"rtol": 1e-10, "atol": 1e-12}, np.float32: {"rtol": 2e-5, "atol": 1e-6}}


def run_against_pytorch(name, config, dtype=np.float64, groups=None):
    """Step ``optim.<name>`` and ``torch.optim.<name>`` side by side; compare after every step."""
    init, grads = problem(dtype)
    params, torch_params = make_pair(init)
    mine = params if groups is None else groups(params)
    theirs = torch_params if groups is None else groups(torch_params)
    optimizer = getattr(optim, name)(mine, **config)
    reference = getattr(torch.optim, name)(theirs, **config)
    assert_same_state(optimizer, reference, params, torch_params, TOLERANCE[dtype])
    for step_grads in grads:
        set_grads(params, torch_params, step_grads)
        optimizer.step()
        reference.step()
        assert_same_state(optimizer, reference, params, torch_params, TOLERANCE[dtype])


def combinations(**options):
    """Every combination of the given option values, as config dicts."""
    names = list(options)
    return [dict(zip(names, values)) for values in itertools.product(*options.values())]


RMSPROP_CONFIGS = [
    *combinations(lr=[0.01], momentum=[0, 0.9], centered=[False, True], weight_decay=[0, 0.1],
                  maximize=[False, True]),
    dict(lr=0.02, alpha=0.5, centered=True),  # lerp weight 0.5: the second branch of lerp
    dict(lr=0.02, alpha=0.2, centered=True, momentum=0.5),
    dict(lr=0.005, alpha=0.9, eps=1e-3, centered=True),
    dict(lr=0.0),
]
ADADELTA_CONFIGS = [
    *combinations(lr=[1.0], weight_decay=[0, 0.1], maximize=[False, True]),
    dict(lr=0.5, rho=0.5, eps=1e-4),
    dict(lr=2.0, rho=0.0),
    dict(lr=1.0, rho=1.0, weight_decay=0.01),
]
ADAGRAD_CONFIGS = [
    *combinations(lr=[0.05], lr_decay=[0, 0.1], weight_decay=[0, 0.1], maximize=[False, True]),
    dict(lr=0.1, initial_accumulator_value=0.5),
    dict(lr=0.1, initial_accumulator_value=0.2, lr_decay=0.01, eps=1e-3, weight_decay=0.05, maximize=True),
]
ALL_CONFIGS = [("RMSprop", c) for c in RMSPROP_CONFIGS] + [("Adadelta", c) for c in ADADELTA_CONFIGS] + [
    ("Adagrad", c) for c in ADAGRAD_CONFIGS
]


@pytest.mark.parametrize("name, config", ALL_CONFIGS, ids=lambda v: str(v))
def test_matches_pytorch_in_float64(name, config):
    run_against_pytorch(name, config)


@pytest.mark.parametrize("name, config", [
    ("RMSprop", dict(lr=0.01, momentum=0.9, centered=True, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.01, maximize=True)),
    ("Adadelta", dict(weight_decay=0.1, maximize=True)),
    ("Adagrad", dict(lr=0.05, lr_decay=0.1, initial_accumulator_value=0.1)),
], ids=lambda v: str(v))
def test_matches_pytorch_in_float32(name, config):
    run_against_pytorch(name, config, np.float32)


@pytest.mark.parametrize("name, config", [
    ("RMSprop", dict(lr=0.01, momentum=0.9)),
    ("Adadelta", dict(lr=1.0)),
    ("Adagrad", dict(lr=0.1, initial_accumulator_value=0.3)),
])
def test_parameter_groups_use_their_own_hyperparameters(name, config):
    overrides = {"RMSprop": {"lr": 0.05, "centered": True, "momentum": 0.0},
                 "Adadelta": {"rho": 0.5, "maximize": True},
                 "Adagrad": {"lr_decay": 0.2, "weight_decay": 0.1}}[name]

    def groups(params):
        return [{"params": params[:2], **overrides}, {"params": params[2:]}]

    run_against_pytorch(name, config, groups=groups)


def test_adagrad_takes_the_initial_accumulator_from_the_constructor_as_pytorch_does():
    # A group's own initial_accumulator_value does not change its sums, in PyTorch as here.
    def groups(params):
        return [{"params": params[:1], "initial_accumulator_value": 5.0}, {"params": params[1:]}]

    run_against_pytorch("Adagrad", dict(lr=0.1, initial_accumulator_value=0.25), groups=groups)


def test_adagrad_state_exists_from_construction_and_for_groups_added_later():
    init, grads = problem(np.float64)
    params, torch_params = make_pair(init)
    optimizer = optim.Adagrad(params[:2], lr=0.1, initial_accumulator_value=0.5)
    reference = torch.optim.Adagrad(torch_params[:2], lr=0.1, initial_accumulator_value=0.5)
    assert sorted(optimizer.state_dict()["state"]) == sorted(reference.state_dict()["state"]) == [0, 1]
    np.testing.assert_array_equal(optimizer.state[params[0]]["sum"].array, np.full((4, 3), 0.5))
    optimizer.add_param_group({"params": params[2:], "lr": 0.3})
    reference.add_param_group({"params": torch_params[2:], "lr": 0.3})
    for step_grads in grads:
        set_grads(params, torch_params, step_grads)
        optimizer.step()
        reference.step()
        assert_same_state(optimizer, reference, params, torch_params, TOLERANCE[np.float64])


def test_rmsprop_creates_a_buffer_that_a_later_option_change_needs():
    """Turning momentum on after the first steps starts a zero buffer (PyTorch raises KeyError)."""
    init, grads = problem(np.float64)
    params, torch_params = make_pair(init)
    optimizer = optim.RMSprop(params, lr=0.01)
    reference = torch.optim.RMSprop(torch_params, lr=0.01)
    for step_grads in grads[:3]:
        set_grads(params, torch_params, step_grads)
        optimizer.step()
        reference.step()
    optimizer.param_groups[0]["momentum"] = 0.9
    set_grads(params, torch_params, grads[3])
    optimizer.step()
    reference.step()  # with a zero buffer, the first momentum step is the plain step
    for p, tp in zip(params, torch_params):
        np.testing.assert_allclose(p.array, tp.detach().numpy(), rtol=1e-12, atol=1e-14)
        assert "momentum_buffer" in optimizer.state[p]
    optimizer.param_groups[0]["centered"] = True
    set_grads(params, torch_params, grads[4])
    optimizer.step()
    assert all("grad_avg" in optimizer.state[p] for p in params if p.grad is not None)


def test_step_updates_in_place_and_bumps_versions():
    for make in (lambda p: optim.RMSprop(p, momentum=0.9, centered=True), optim.Adadelta, optim.Adagrad):
        params = [Parameter(np.ones((3, 3))), Parameter(np.ones(3))]
        arrays = [p.array for p in params]
        versions = [p._version for p in params]
        optimizer = make(params)
        (params[0] * params[1]).sum().backward()
        optimizer.step()
        assert all(p.array is a for p, a in zip(params, arrays))
        assert all(p._version > v for p, v in zip(params, versions))
        assert all(p.is_leaf and p.grad_fn is None for p in params)
        assert not np.allclose(params[0].array, 1.0)


# -- state dicts ------------------------------------------------------------------------------

STATE_CASES = [
    ("RMSprop", dict(lr=0.01, momentum=0.9, centered=True, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.01)),
    ("Adadelta", dict(lr=1.0, weight_decay=0.1, maximize=True)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.05, initial_accumulator_value=0.1)),
]


def _trained(name, config, groups, steps):
    init, grads = problem(np.float64)
    params, torch_params = make_pair(init)
    optimizer = getattr(optim, name)(groups(params), **config)
    reference = getattr(torch.optim, name)(groups(torch_params), **config)
    for step_grads in grads[:steps]:
        set_grads(params, torch_params, step_grads)
        optimizer.step()
        reference.step()
    return params, torch_params, optimizer, reference, grads[steps:]


def _two_groups(params):
    return [{"params": params[:1], "lr": 0.2}, {"params": params[1:]}]


@pytest.mark.parametrize("name, config", STATE_CASES, ids=lambda v: str(v))
def test_state_dict_round_trip_continues_identically(name, config, tmp_path):
    params, _, optimizer, _, rest = _trained(name, config, _two_groups, steps=8)
    mg.save(optimizer.state_dict(), tmp_path / "optim.ckpt")
    clones = [Parameter(p.array.copy()) for p in params]
    restored = getattr(optim, name)(_two_groups(clones), **config)
    restored.load_state_dict(mg.load(tmp_path / "optim.ckpt"))
    for step_grads in rest:
        for p, c, g in zip(params, clones, step_grads):
            p.grad = c.grad = None if g is None else mg.Tensor(g.copy())
        optimizer.step()
        restored.step()
        for p, c in zip(params, clones):
            np.testing.assert_array_equal(p.array, c.array)
        for p, c in zip(params, clones):
            for key, value in optimizer.state[p].items():
                np.testing.assert_array_equal(restored.state[c][key].array, value.array, err_msg=key)
    assert restored.param_groups[0]["lr"] == 0.2


@pytest.mark.parametrize("name, config", STATE_CASES, ids=lambda v: str(v))
def test_state_dict_has_pytorchs_layout_and_loads_pytorchs_state(name, config):
    params, torch_params, optimizer, reference, rest = _trained(name, config, _two_groups, steps=6)
    mine, theirs = optimizer.state_dict(), reference.state_dict()
    assert sorted(mine["state"]) == sorted(theirs["state"])
    for index, values in theirs["state"].items():
        assert sorted(mine["state"][index]) == sorted(values)
        assert mine["state"][index]["step"].item() == values["step"].item()
        assert mine["state"][index]["step"].dtype == np.float32
    for group, reference_group in zip(mine["param_groups"], theirs["param_groups"]):
        assert {k: reference_group[k] for k in group} == group

    # PyTorch's state dict, converted to arrays, continues exactly like PyTorch.
    converted = {"state": {k: {n: v.numpy() for n, v in s.items()} for k, s in theirs["state"].items()},
                 "param_groups": theirs["param_groups"]}
    clones = [Parameter(tp.detach().numpy().copy()) for tp in torch_params]
    loaded = getattr(optim, name)(_two_groups(clones), **config)
    loaded.load_state_dict(converted)
    for step_grads in rest:
        set_grads(clones, torch_params, step_grads)
        loaded.step()
        reference.step()
        assert_same_state(loaded, reference, clones, torch_params, TOLERANCE[np.float64])


# -- argument checking ------------------------------------------------------------------------

BAD_ARGUMENTS = [
    ("RMSprop", dict(lr=-0.1), "lr"),
    ("RMSprop", dict(alpha=-0.5), "alpha"),
    ("RMSprop", dict(eps=-1e-8), "eps"),
    ("RMSprop", dict(momentum=-0.9), "momentum"),
    ("RMSprop", dict(weight_decay=-1e-4), "weight_decay"),
    ("Adadelta", dict(lr=-1.0), "lr"),
    ("Adadelta", dict(rho=1.5), "rho"),
    ("Adadelta", dict(rho=-0.1), "rho"),
    ("Adadelta", dict(eps=-1e-6), "eps"),
    ("Adadelta", dict(weight_decay=-0.1), "weight_decay"),
    ("Adagrad", dict(lr=-0.01), "lr"),
    ("Adagrad", dict(lr_decay=-0.1), "lr_decay"),
    ("Adagrad", dict(weight_decay=-0.1), "weight_decay"),
    ("Adagrad", dict(initial_accumulator_value=-1.0), "initial_accumulator_value"),
    ("Adagrad", dict(eps=-1e-10), "eps"),
]


@pytest.mark.parametrize("name, config, argument", BAD_ARGUMENTS, ids=lambda v: str(v))
def test_bad_hyperparameters_raise_value_error_like_pytorch(name, config, argument):
    with pytest.raises(ValueError):
        getattr(torch.optim, name)([torch.nn.Parameter(torch.zeros(2))], **config)
    with pytest.raises(ValueError, match=argument):
        getattr(optim, name)([Parameter(np.zeros(2))], **config)
    with pytest.raises(ValueError, match=argument):  # in a group's own settings too
        getattr(optim, name)([{"params": [Parameter(np.zeros(2))], **config}])


@pytest.mark.parametrize("name", ["RMSprop", "Adadelta", "Adagrad"])
def test_defaults_are_pytorchs(name):
    mine = getattr(optim, name)([Parameter(np.zeros(2))]).defaults
    theirs = getattr(torch.optim, name)([torch.nn.Parameter(torch.zeros(2))]).defaults
    assert mine == {k: theirs[k] for k in mine}
    assert "lr" in mine and "maximize" in mine


def test_non_numeric_hyperparameter_is_a_type_error():
    with pytest.raises(TypeError, match="real number"):
        optim.RMSprop([Parameter(np.zeros(2))], alpha="0.9")
    with pytest.raises(TypeError, match="real number"):
        optim.Adadelta([Parameter(np.zeros(2))], rho=None)
