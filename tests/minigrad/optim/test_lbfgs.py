"""``optim.LBFGS`` against ``torch.optim.LBFGS`` as oracle.

Both optimizers start from the same float64 parameters and minimize the same
function (the Rosenbrock function, a linear least-squares regression, a small
tanh network), with and without the strong-Wolfe line search. The parameters
after each ``step`` agree to 1e-10 relative, and so do the losses ``step``
returns and the evaluation/iteration counters: the algorithm and its
arithmetic order are PyTorch's, so the only differences are the last bits of
dot products and sums (BLAS summation order), far below the tolerance.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad as mg
from minigrad import optim
from minigrad.nn import Parameter

RTOL, ATOL = 1e-10, 1e-10  # the parameters are of order 1: 1e-10 relative to their scale


def rosenbrock(lib, x):
    return ((1 - x[:-1]) ** 2).sum() + (100 * (x[1:] - x[:-1] ** 2) ** 2).sum()


def regression_data(seed=0):
    rng = np.random.default_rng(seed)
    features = rng.standard_normal((20, 3))
    targets = features @ np.array([[1.5], [-2.0], [0.5]]) + 0.3 + 0.1 * rng.standard_normal((20, 1))
    return features, targets


def run_pair(init, loss_fn, steps, rtol=RTOL, atol=ATOL, **kwargs):
    """Step both optimizers ``steps`` times on ``loss_fn(lib, *params)``; compare after every step."""
    params = [Parameter(mg.tensor(a.copy())) for a in init]
    torch_params = [torch.nn.Parameter(torch.tensor(a.copy())) for a in init]
    mine, theirs = optim.LBFGS(params, **kwargs), torch.optim.LBFGS(torch_params, **kwargs)

    def closure():
        mine.zero_grad()
        loss = loss_fn(mg, *params)
        loss.backward()
        return loss

    def torch_closure():
        theirs.zero_grad()
        loss = loss_fn(torch, *torch_params)
        loss.backward()
        return loss

    for _ in range(steps):
        loss, torch_loss = mine.step(closure), theirs.step(torch_closure)
        np.testing.assert_allclose(float(loss), float(torch_loss.detach()), rtol=rtol, atol=atol)
        for p, tp in zip(params, torch_params):
            assert p.dtype == p.grad.dtype == np.dtype(str(tp.dtype).removeprefix("torch."))
            np.testing.assert_allclose(p.array, tp.detach().numpy(), rtol=rtol, atol=atol)
        state, torch_state = mine.state[params[0]], theirs.state[torch_params[0]]
        assert state["func_evals"] == torch_state["func_evals"]
        assert state["n_iter"] == torch_state["n_iter"]
        assert len(state["old_dirs"]) == len(torch_state["old_dirs"])
        np.testing.assert_allclose(float(state["t"]), float(torch_state["t"]), rtol=rtol, atol=atol)
    return mine, params


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_rosenbrock_matches_torch(line_search_fn):
    init = [np.array([-1.2, 1.0, -0.5, 0.8, 1.5])]
    lr = 1 if line_search_fn else 0.01
    mine, params = run_pair(init, rosenbrock, steps=6, lr=lr, line_search_fn=line_search_fn)
    if line_search_fn:
        np.testing.assert_allclose(params[0].array, np.ones(5), atol=1e-4)  # it found the minimum


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_regression_matches_torch(line_search_fn):
    features, targets = regression_data()

    def mse(lib, weight, bias):
        prediction = lib.tensor(features) @ weight.T + bias
        return ((prediction - lib.tensor(targets)) ** 2).mean()

    rng = np.random.default_rng(1)
    init = [rng.standard_normal((1, 3)), rng.standard_normal(1)]
    run_pair(init, mse, steps=3, lr=0.5 if line_search_fn is None else 1, line_search_fn=line_search_fn,
             max_iter=10)


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_float32_regression_matches_torch(line_search_fn):
    """In float32 the scalars round as PyTorch's float32 0-d tensors do: agreement to float32 rounding.

    Few iterations: near the optimum float32 gradients are rounding noise, and the noise of the two
    libraries' sums (different orders) would steer the curvature pairs apart.
    """
    features, targets = regression_data()

    def mse(lib, weight):
        prediction = lib.tensor(features.astype(np.float32)) @ weight.T
        return ((prediction - lib.tensor(targets.astype(np.float32))) ** 2).mean()

    init = [np.random.default_rng(2).standard_normal((1, 3)).astype(np.float32)]
    run_pair(init, mse, steps=2, rtol=1e-5, atol=1e-6, lr=0.5 if line_search_fn is None else 1,
             line_search_fn=line_search_fn, max_iter=2)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**16), history_size=st.integers(1, 6), max_iter=st.integers(1, 12),
       max_eval=st.one_of(st.none(), st.integers(1, 15)), line_search_fn=st.sampled_from([None, "strong_wolfe"]))
def test_tanh_network_matches_torch(seed, history_size, max_iter, max_eval, line_search_fn):
    """Short histories (pairs are dropped), few iterations and evaluations (the line search runs out).

    Tolerance 1e-8, as on Rosenbrock below: up to 36 quasi-Newton iterations amplify last-bit
    differences of the sums (seed 22139, history 1, 11 iterations: 3e-9 relative after 3 steps).
    """
    rng = np.random.default_rng(seed)
    x, y = rng.standard_normal((8, 3)), rng.standard_normal((8, 2))

    def loss_fn(lib, w1, b1, w2):
        hidden = (lib.tensor(x) @ w1 + b1).tanh()
        return ((hidden @ w2 - lib.tensor(y)) ** 2).sum()

    init = [rng.standard_normal((3, 4)) * 0.5, rng.standard_normal(4) * 0.1, rng.standard_normal((4, 2)) * 0.5]
    run_pair(init, loss_fn, steps=3, rtol=1e-8, atol=1e-8, lr=1 if line_search_fn else 0.1, history_size=history_size,
             max_iter=max_iter, max_eval=max_eval, line_search_fn=line_search_fn)


@pytest.fixture(params=("cpu", "cuda"))
def device(request) -> str:
    """The device a test runs on; "cuda" skips when no GPU can be used."""
    if request.param == "cuda" and not mg.backend.cuda_is_available():
        pytest.skip(mg.backend.cuda_unavailable_reason())
    return request.param


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_rosenbrock_on_device_matches_torch(device, line_search_fn):
    """The flat vectors live on the parameters' device; the steps are PyTorch's (its run on the CPU).

    Tolerance 1e-8: along Rosenbrock's curved valley, 20 iterations per step amplify a last-bit
    difference of a sum or dot product (BLAS and cuBLAS sum in other orders than PyTorch's CPU
    kernels) about a million-fold; the 5-D start of ``test_rosenbrock_matches_torch`` happens to
    stay within 1e-10 on the CPU, this 4-D one reaches 6e-10 after the second step.
    """
    init = np.array([-1.2, 1.0, -0.5, 0.8])
    p = Parameter(mg.tensor(init.copy(), device=device))
    tp = torch.nn.Parameter(torch.tensor(init.copy()))
    lr = 1 if line_search_fn else 0.01
    mine = optim.LBFGS([p], lr=lr, line_search_fn=line_search_fn, history_size=4)
    theirs = torch.optim.LBFGS([tp], lr=lr, line_search_fn=line_search_fn, history_size=4)

    def closure():
        mine.zero_grad()
        loss = rosenbrock(mg, p)
        loss.backward()
        return loss

    def torch_closure():
        theirs.zero_grad()
        loss = rosenbrock(torch, tp)
        loss.backward()
        return loss

    for _ in range(3):
        mine.step(closure)
        theirs.step(torch_closure)
        assert p.device == mine.state[p]["d"].device
        np.testing.assert_allclose(mg.backend.to_numpy(p.array), tp.detach().numpy(), rtol=1e-8, atol=1e-10)
    assert mine.state[p]["func_evals"] == theirs.state[tp]["func_evals"]


def test_parameter_without_gradient_and_converged_start():
    used, unused = Parameter(mg.tensor([3.0, -1.0], dtype=mg.float64)), Parameter(mg.tensor([5.0], dtype=mg.float64))
    optimizer = optim.LBFGS([used, unused], line_search_fn="strong_wolfe")

    def closure():
        optimizer.zero_grad()
        loss = (used**2).sum()
        loss.backward()
        return loss

    version = used._version
    optimizer.step(closure)
    np.testing.assert_allclose(used.array, [0.0, 0.0], atol=1e-8)
    assert unused.array[0] == 5.0 and used._version > version
    evals = optimizer.state[used]["func_evals"]
    iterations = optimizer.state[used]["n_iter"]
    loss = optimizer.step(closure)  # already optimal: one evaluation, no iteration
    assert float(loss) < 1e-14
    assert optimizer.state[used]["func_evals"] == evals + 1 and optimizer.state[used]["n_iter"] == iterations


def test_closure_runs_with_grad_enabled_and_returns_first_loss():
    p = Parameter(mg.tensor([1.0, 2.0], dtype=mg.float64))
    optimizer = optim.LBFGS([p], max_iter=3)
    seen = []

    def closure():
        seen.append(mg.is_grad_enabled())
        optimizer.zero_grad()
        loss = (p**2).sum()
        loss.backward()
        return loss

    with mg.no_grad():
        loss = optimizer.step(closure)
    assert all(seen) and len(seen) == 3
    assert float(loss) == 5.0


def test_state_dict_round_trip_continues_identically():
    init = np.array([-1.2, 1.0, 0.3])

    def make():
        p = Parameter(mg.tensor(init.copy()))
        optimizer = optim.LBFGS([p], line_search_fn="strong_wolfe", max_iter=4, history_size=3)

        def closure():
            optimizer.zero_grad()
            loss = rosenbrock(mg, p)
            loss.backward()
            return loss

        return p, optimizer, closure

    p, optimizer, closure = make()
    optimizer.step(closure)
    saved = optimizer.state_dict()
    q, restored, restored_closure = make()
    q.array[...] = p.array
    restored.load_state_dict(saved)
    optimizer.step(closure)
    restored.step(restored_closure)
    np.testing.assert_array_equal(p.array, q.array)


def test_errors_match_torch():
    p = Parameter(mg.tensor([1.0]))
    with pytest.raises(ValueError):
        torch.optim.LBFGS([torch.nn.Parameter(torch.ones(1))], lr=-1)
    with pytest.raises(ValueError, match="lr"):
        optim.LBFGS([p], lr=-1)
    with pytest.raises(ValueError, match="parameter groups"):
        optim.LBFGS([{"params": [p]}, {"params": [Parameter(mg.tensor([2.0]))]}])
    optimizer = optim.LBFGS([p], line_search_fn="backtracking")

    def closure():
        optimizer.zero_grad()
        loss = (p**2).sum()
        loss.backward()
        return loss

    with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
        optimizer.step(closure)
    optimizer = optim.LBFGS([p])
    optimizer.add_param_group({"params": [Parameter(mg.tensor([2.0]))]})
    with pytest.raises(AssertionError, match="parameter groups"):  # PyTorch's step asserts
        optimizer.step(closure)
    assert mg.optim.LBFGS is optim.LBFGS and "max_eval: 25" in repr(optim.LBFGS([p]))
