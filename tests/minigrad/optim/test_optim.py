"""``minigrad.optim``: SGD, Adam and AdamW against ``torch.optim`` as oracle, and the Optimizer API.

Each comparison gives both optimizers the same initial parameters and the
same sequence of 20 gradients (some parameters occasionally without a
gradient), and compares parameters and state after every step: to ~1e-12
in float64, to float32 rounding in float32 (PyTorch's CPU kernels fuse
multiply-adds, so the last bit can differ).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import minigrad as mg
from minigrad import optim
from minigrad.nn import Parameter
from minigrad.optim.optimizer import Optimizer, required

SHAPES = [(4, 3), (3,), (2, 2, 2)]
STEPS = 20
TOLERANCE = {np.float64: {"rtol": 1e-12, "atol": 1e-12}, np.float32: {"rtol": 5e-6, "atol": 1e-6}}


def problem(dtype, seed=0):
    """Initial parameter values and, per step, one gradient per parameter (None: no gradient)."""
    rng = np.random.default_rng(seed)
    init = [rng.standard_normal(s).astype(dtype) for s in SHAPES]
    grads = [[rng.standard_normal(s).astype(dtype) for s in SHAPES] for _ in range(STEPS)]
    grads[5][1] = None  # a parameter without a gradient is skipped for that step
    grads[6][0] = None
    return init, grads


def make_pair(init):
    return [Parameter(a.copy()) for a in init], [torch.nn.Parameter(torch.tensor(a.copy())) for a in init]


def set_grads(params, torch_params, grads):
    for p, tp, g in zip(params, torch_params, grads):
        p.grad = None if g is None else mg.Tensor(g.copy())
        tp.grad = None if g is None else torch.tensor(g.copy())


def assert_same_state(optimizer, reference, params, torch_params, tolerance):
    for p, tp in zip(params, torch_params):
        np.testing.assert_allclose(p.array, tp.detach().numpy(), **tolerance)
        mine, theirs = optimizer.state.get(p, {}), reference.state.get(tp, {})
        assert sorted(mine) == sorted(theirs)
        for name, value in theirs.items():
            np.testing.assert_allclose(mine[name].array, value.numpy(), **tolerance, err_msg=name)
            assert mine[name].dtype == np.dtype(str(value.dtype).removeprefix("torch."))


def run_against_pytorch(make, make_reference, dtype, groups=None):
    init, grads = problem(dtype)
    params, torch_params = make_pair(init)
    if groups is None:
        optimizer, reference = make(params), make_reference(torch_params)
    else:
        optimizer, reference = make(groups(params)), make_reference(groups(torch_params))
    for step_grads in grads:
        set_grads(params, torch_params, step_grads)
        optimizer.step()
        reference.step()
        assert_same_state(optimizer, reference, params, torch_params, TOLERANCE[dtype])


SGD_CONFIGS = [
    dict(lr=0.1),
    dict(lr=0.1, momentum=0.9),
    dict(lr=0.05, momentum=0.8, dampening=0.3),
    dict(lr=0.1, momentum=0.9, nesterov=True),
    dict(lr=0.1, weight_decay=0.05),
    dict(lr=0.1, maximize=True),
    dict(lr=0.02, momentum=0.7, dampening=0.1, weight_decay=0.01, maximize=True),
    dict(lr=0.02, momentum=0.7, nesterov=True, weight_decay=0.1, maximize=True),
]
ADAM_CONFIGS = [
    dict(lr=0.01),
    dict(lr=0.01, amsgrad=True),
    dict(lr=0.01, weight_decay=0.1),
    dict(lr=0.01, maximize=True, amsgrad=True, weight_decay=0.05),
    dict(lr=0.003, betas=(0.3, 0.95), eps=1e-3),  # beta1 < 0.5: the other branch of lerp
    dict(lr=0.01, betas=(0.0, 0.0)),
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["float64", "float32"])
@pytest.mark.parametrize("config", SGD_CONFIGS, ids=str)
def test_sgd_matches_pytorch(config, dtype):
    run_against_pytorch(lambda p: optim.SGD(p, **config), lambda p: torch.optim.SGD(p, **config), dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["float64", "float32"])
@pytest.mark.parametrize("config", ADAM_CONFIGS, ids=str)
def test_adam_matches_pytorch(config, dtype):
    run_against_pytorch(lambda p: optim.Adam(p, **config), lambda p: torch.optim.Adam(p, **config), dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["float64", "float32"])
@pytest.mark.parametrize("config", [*ADAM_CONFIGS[:4], dict(lr=0.01, weight_decay=0.5, amsgrad=True)],
                         ids=str)
def test_adamw_matches_pytorch(config, dtype):
    run_against_pytorch(lambda p: optim.AdamW(p, **config), lambda p: torch.optim.AdamW(p, **config), dtype)


def test_adam_with_decoupled_weight_decay_is_adamw():
    config = dict(lr=0.01, weight_decay=0.2, decoupled_weight_decay=True)
    run_against_pytorch(lambda p: optim.Adam(p, **config), lambda p: torch.optim.Adam(p, **config),
                        np.float64)


def test_parameter_groups_use_their_own_hyperparameters():
    def groups(params):
        return [{"params": params[:2], "lr": 0.5, "momentum": 0.5}, {"params": params[2:]}]

    run_against_pytorch(lambda g: optim.SGD(g, lr=0.1, momentum=0.9),
                        lambda g: torch.optim.SGD(g, lr=0.1, momentum=0.9), np.float64, groups)
    run_against_pytorch(lambda g: optim.Adam(g, lr=0.01), lambda g: torch.optim.Adam(g, lr=0.01),
                        np.float64, groups)


def test_groups_get_the_defaults_filled_in():
    params = [Parameter(np.zeros(2)), Parameter(np.zeros(3))]
    optimizer = optim.Adam([{"params": [params[0]], "lr": 0.5}, {"params": params[1]}], betas=(0.8, 0.9))
    first, second = optimizer.param_groups
    assert first["lr"] == 0.5 and second["lr"] == 1e-3
    assert first["betas"] == second["betas"] == (0.8, 0.9)
    assert len(second["params"]) == 1 and second["params"][0] is params[1]
    reference = torch.optim.Adam([torch.nn.Parameter(torch.zeros(2))])
    assert set(optimizer.defaults) <= set(reference.defaults)


def test_step_updates_the_parameter_arrays_in_place_without_recording():
    params = [Parameter(np.ones((3, 3))), Parameter(np.ones(3))]
    arrays = [p.array for p in params]
    optimizer = optim.Adam(params, lr=0.1, amsgrad=True, weight_decay=0.1)
    (params[0] * params[1]).sum().backward()
    optimizer.step()
    assert all(p.array is a for p, a in zip(params, arrays))
    assert all(p.is_leaf and p.grad_fn is None and p.requires_grad for p in params)
    assert not np.allclose(params[0].array, 1.0)


def test_step_with_closure_returns_its_loss_and_enables_grad():
    param = Parameter(np.array([2.0]))
    optimizer = optim.SGD([param], lr=0.25)

    def closure():
        optimizer.zero_grad()
        loss = (param * param).sum()
        loss.backward()
        return loss

    with mg.no_grad():
        loss = optimizer.step(closure)
    assert loss.item() == 4.0 and param.array[0] == 2.0 - 0.25 * 4.0


def test_zero_grad_sets_to_none_or_zeroes_in_place():
    param = Parameter(np.ones(2))
    optimizer = optim.SGD([param], lr=0.1)
    (param * 3).sum().backward()
    grad = param.grad.array
    optimizer.zero_grad(set_to_none=False)
    assert param.grad.array is grad and not grad.any()
    optimizer.zero_grad()
    assert param.grad is None
    optimizer.step()  # no gradient: nothing happens
    np.testing.assert_array_equal(param.array, [1.0, 1.0])
    param.grad = mg.Tensor(np.broadcast_to(np.ones(1), (2,)))  # read-only, as the engine may store
    optimizer.zero_grad(set_to_none=False)
    np.testing.assert_array_equal(param.grad.array, [0.0, 0.0])


def test_gradient_shape_mismatch_is_reported():
    param = Parameter(np.ones(2))
    with pytest.raises(RuntimeError, match=r"assign a gradient of size '\[3\]' to a tensor of size '\[2\]'"):
        param.grad = mg.Tensor(np.ones(3))
    param._grad = mg.Tensor(np.ones(3))  # past the setter's check: the optimizer still names both shapes
    with pytest.raises(RuntimeError, match=r"gradient of shape \(3,\).*\(2,\)"):
        optim.SGD([param]).step()


# -- state dicts ------------------------------------------------------------------------------


def _trained(make, dtype=np.float64, steps=8):
    init, grads = problem(dtype)
    params = [Parameter(a.copy()) for a in init]
    optimizer = make(params)
    for step_grads in grads[:steps]:
        for p, g in zip(params, step_grads):
            p.grad = None if g is None else mg.Tensor(g.copy())
        optimizer.step()
    return params, optimizer, grads[steps:]


@pytest.mark.parametrize("make", [
    lambda p: optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True),
    lambda p: optim.Adam(p, lr=0.01, amsgrad=True),
    lambda p: optim.AdamW([{"params": p[:1], "lr": 0.1}, {"params": p[1:]}], lr=0.01),
], ids=["sgd", "adam", "adamw_groups"])
def test_state_dict_round_trip_continues_identically(make, tmp_path):
    params, optimizer, rest = _trained(make)
    mg.save(optimizer.state_dict(), tmp_path / "optim.ckpt")
    clones = [Parameter(p.array.copy()) for p in params]
    restored = make(clones)
    restored.load_state_dict(mg.load(tmp_path / "optim.ckpt"))
    for step_grads in rest:
        for p, c, g in zip(params, clones, step_grads):
            p.grad = c.grad = None if g is None else mg.Tensor(g.copy())
        optimizer.step()
        restored.step()
        for p, c in zip(params, clones):
            np.testing.assert_array_equal(p.array, c.array)
    assert restored.param_groups[0]["lr"] == optimizer.param_groups[0]["lr"]


def test_state_dict_has_pytorchs_layout():
    params, optimizer, _ = _trained(lambda p: optim.Adam([{"params": p[:2]}, {"params": p[2:], "lr": 0.1}]))
    init, grads = problem(np.float64)
    torch_params = [torch.nn.Parameter(torch.tensor(a)) for a in init]
    reference = torch.optim.Adam([{"params": torch_params[:2]}, {"params": torch_params[2:], "lr": 0.1}])
    for step_grads in grads[:8]:
        for p, g in zip(torch_params, step_grads):
            p.grad = None if g is None else torch.tensor(g)
        reference.step()
    mine, theirs = optimizer.state_dict(), reference.state_dict()
    assert sorted(mine) == sorted(theirs) == ["param_groups", "state"]
    assert sorted(mine["state"]) == sorted(theirs["state"]) == [0, 1, 2]
    for index, values in theirs["state"].items():
        assert sorted(mine["state"][index]) == sorted(values)
        assert isinstance(mine["state"][index]["step"], mg.Tensor)
        assert mine["state"][index]["step"].item() == values["step"].item()
        np.testing.assert_allclose(mine["state"][index]["exp_avg"].array, values["exp_avg"].numpy(),
                                   rtol=1e-12)
    for group, reference_group in zip(mine["param_groups"], theirs["param_groups"]):
        assert group["params"] == reference_group["params"]
        assert {k: reference_group[k] for k in group} == group


def test_load_state_dict_accepts_a_pytorch_state_dict_converted_to_arrays():
    init, grads = problem(np.float64)
    torch_params = [torch.nn.Parameter(torch.tensor(a)) for a in init]
    reference = torch.optim.SGD(torch_params, lr=0.1, momentum=0.9)
    for step_grads in grads[:3]:
        for p, g in zip(torch_params, step_grads):
            p.grad = torch.tensor(g if g is not None else np.zeros_like(p.detach().numpy()))
        reference.step()
    state = reference.state_dict()
    converted = {"state": {k: {n: v.numpy() for n, v in s.items()} for k, s in state["state"].items()},
                 "param_groups": state["param_groups"]}
    params = [Parameter(p.detach().numpy().copy()) for p in torch_params]
    optimizer = optim.SGD(params, lr=0.5, momentum=0.1)
    optimizer.load_state_dict(converted)
    assert optimizer.param_groups[0]["lr"] == 0.1 and optimizer.param_groups[0]["momentum"] == 0.9
    for p, tp, g in zip(params, torch_params, grads[3]):
        p.grad, tp.grad = mg.Tensor(g.copy()), torch.tensor(g.copy())
    optimizer.step()
    reference.step()
    for p, tp in zip(params, torch_params):
        np.testing.assert_allclose(p.array, tp.detach().numpy(), rtol=1e-12, atol=1e-12)


def test_loaded_state_is_cast_to_the_parameters_and_not_shared():
    params, optimizer, _ = _trained(lambda p: optim.Adam(p), np.float64)
    state = optimizer.state_dict()
    float32_params = [Parameter(p.array.astype(np.float32)) for p in params]
    restored = optim.Adam(float32_params)
    restored.load_state_dict(state)
    loaded = restored.state[float32_params[0]]
    assert loaded["exp_avg"].dtype == np.float32 and loaded["step"].dtype == np.float32
    same_dtype = optim.Adam([Parameter(p.array.copy()) for p in params])
    same_dtype.load_state_dict(state)
    first = same_dtype.param_groups[0]["params"][0]
    assert same_dtype.state[first]["exp_avg"].array is not state["state"][0]["exp_avg"].array


def test_load_state_dict_rejects_mismatched_layouts():
    params, optimizer, _ = _trained(lambda p: optim.SGD(p, momentum=0.9))
    state = optimizer.state_dict()
    with pytest.raises(ValueError, match="number of parameter groups"):
        optim.SGD([{"params": params[:1]}, {"params": params[1:]}], momentum=0.9).load_state_dict(state)
    with pytest.raises(ValueError, match="doesn't match the size"):
        optim.SGD(params[:2], momentum=0.9).load_state_dict(state)
    with pytest.raises(KeyError, match="'state' and 'param_groups'"):  # PyTorch's classes for these three
        optimizer.load_state_dict({"state": {}})
    with pytest.raises(TypeError, match="must be a dict"):
        optimizer.load_state_dict([state])
    with pytest.raises(TypeError, match="list of dicts"):
        optimizer.load_state_dict({"state": {}, "param_groups": [3]})


def test_named_parameters_record_their_names():
    model = mg.nn.Linear(2, 2)
    optimizer = optim.SGD(model.named_parameters(), lr=0.1)
    first, second = optimizer.param_groups[0]["params"]
    assert first is model.weight and second is model.bias
    assert optimizer.state_dict()["param_groups"][0]["param_names"] == ["weight", "bias"]


# -- argument checking ------------------------------------------------------------------------


@pytest.mark.parametrize("make, argument", [
    (lambda p: optim.SGD(p, lr=-0.1), "lr"),
    (lambda p: optim.SGD(p, momentum=-0.5), "momentum"),
    (lambda p: optim.SGD(p, weight_decay=-1e-4), "weight_decay"),
    (lambda p: optim.SGD(p, nesterov=True), "nesterov"),
    (lambda p: optim.SGD(p, momentum=0.9, dampening=0.1, nesterov=True), "nesterov"),
    (lambda p: optim.Adam(p, lr=-1e-3), "lr"),
    (lambda p: optim.Adam(p, betas=(1.0, 0.999)), r"betas\[0\]"),
    (lambda p: optim.Adam(p, betas=(0.9, -0.1)), r"betas\[1\]"),
    (lambda p: optim.Adam(p, eps=-1e-8), "eps"),
    (lambda p: optim.Adam(p, weight_decay=-0.1), "weight_decay"),
    (lambda p: optim.AdamW(p, betas=(0.9, 1.5)), r"betas\[1\]"),
    (lambda p: optim.AdamW(p, lr=-1.0), "lr"),
    (lambda p: optim.SGD([{"params": p, "lr": -0.5}], lr=0.1), "lr"),
], ids=lambda v: v if isinstance(v, str) else "")
def test_bad_hyperparameters_raise_value_error_naming_the_argument(make, argument):
    with pytest.raises(ValueError, match=argument):
        make([Parameter(np.zeros(2))])


def test_bad_parameter_lists_are_refused():
    p = Parameter(np.zeros(2))
    with pytest.raises(ValueError, match="empty parameter list"):
        optim.SGD([])
    with pytest.raises(TypeError, match="single"):
        optim.SGD(p)
    with pytest.raises(TypeError, match="can only optimize Tensors"):
        optim.SGD([np.zeros(2)])
    with pytest.raises(ValueError, match="non-leaf"):
        optim.SGD([p * 2])
    with pytest.raises(ValueError, match="more than one parameter group"):
        optim.SGD([{"params": [p]}, {"params": [p]}])
    with pytest.raises(ValueError, match="duplicate parameters"):
        optim.SGD([p, p])
    with pytest.raises(TypeError, match="sets"):
        optim.SGD([{"params": {p}}])
    with pytest.raises(TypeError, match="real number"):
        optim.SGD([p], lr="fast")


def test_required_hyperparameters_must_be_given_by_every_group():
    class Plain(Optimizer):
        def __init__(self, params, lr=required):
            super().__init__(params, {"lr": lr})

    p = Parameter(np.zeros(2))
    with pytest.raises(ValueError, match="required optimization parameter lr"):
        Plain([p])
    assert Plain([{"params": [p], "lr": 0.1}]).param_groups[0]["lr"] == 0.1
    with pytest.raises(NotImplementedError, match="Plain must implement step"):
        Plain([p], lr=0.1).step()


def test_repr_lists_the_groups():
    text = repr(optim.SGD([Parameter(np.zeros(1))], lr=0.5))
    assert text.startswith("SGD (\nParameter Group 0\n") and "    lr: 0.5" in text


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(7,), (256, 257), (3, 65537)])
def test_chunked_update_equals_one_shot_update(dtype, shape, monkeypatch):
    """Without BLAS, large parameters are updated chunk by chunk (cache-friendly): same numbers as one pass."""
    from minigrad import blas
    from minigrad.optim.optimizer import _Scratch, subtract_scaled_

    monkeypatch.setattr(blas, "_routines", {})  # as without SciPy
    rng = np.random.default_rng(1)
    param = rng.standard_normal(shape).astype(dtype)
    direction = rng.standard_normal(shape).astype(dtype)
    expected = param - direction * dtype(0.037)
    subtract_scaled_(np, param, direction, 0.037, _Scratch())
    np.testing.assert_array_equal(param, expected)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_update_rounds_once_as_pytorch_add_with_alpha(dtype):
    """With SciPy, ``param -= lr * grad`` is BLAS's axpy: one rounding per element, as ``add_(alpha=-lr)``."""
    pytest.importorskip("scipy")
    from minigrad.optim.optimizer import _Scratch, subtract_scaled_

    rng = np.random.default_rng(3)
    param, direction = rng.standard_normal((2, 100_003)).astype(dtype)
    expected = torch.from_numpy(param.copy()).add_(torch.from_numpy(direction), alpha=-0.037).numpy()
    rounded_twice = param - direction * dtype(0.037)
    subtract_scaled_(np, param, direction, 0.037, _Scratch())
    np.testing.assert_array_almost_equal_nulp(param, expected, nulp=1)
    assert (param != expected).mean() < 1e-3, "rounded once per element, as PyTorch"
    assert (rounded_twice != expected).mean() > 1e-2, "(rounding twice would differ in many elements)"


def test_chunked_update_handles_non_contiguous_direction():
    from minigrad.optim.optimizer import _Scratch, subtract_scaled_

    rng = np.random.default_rng(2)
    param = rng.standard_normal((300, 400))
    direction = rng.standard_normal((400, 300)).T  # a transposed view
    expected = param - direction * 0.5
    subtract_scaled_(np, param, direction, 0.5, _Scratch())
    np.testing.assert_array_equal(param, expected)
