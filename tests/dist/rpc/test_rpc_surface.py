"""PyTorch's RPC surface on real MPI ranks: async_execution, TensorPipeRpcBackendOptions, init_rpc's
signature and checks, and RemoteModule trained with distributed autograd against PyTorch trained locally."""

from __future__ import annotations

import os

import numpy as np
import pytest

import minigrad_dist.rpc as rpc
from tests.dist.conftest import get_pool
from tests.dist.rpc import programs_rpc_surface as programs

pytestmark = pytest.mark.timeout(120)

torch = pytest.importorskip("torch")
trpc = pytest.importorskip("torch.distributed.rpc")


def test_async_execution_with_rpc_sync_rpc_async_and_remote():
    out = get_pool(3).run(programs.async_execution_program, timeout=90)[0]
    assert out["sync"] == [6.0, 6.0] and out["async"] == [7.0, 7.0] and out["remote"] == [8.0, 8.0]
    assert out["local"] == ("Future", [4.0, 4.0]), "called locally, the function returns its Future"
    assert out["batch"] == [15] * 6, "six calls waited on a callee with two threads: none held a thread"
    assert tuple(out["settings"]) == (2, 30.0), "TensorPipeRpcBackendOptions honoured"
    assert out["fail_later"][0] == "KeyError" and "async boom" in out["fail_later"][1]
    assert out["fail_now"][0] == "ValueError" and "async_fail_now" in out["fail_now"][1]
    assert out["not_a_future"][0] == "TypeError" and "must return a Future" in out["not_a_future"][1]
    assert out["remote_fail"][0] == "KeyError" and "async boom" in out["remote_fail"][1]
    assert out["timeout"][0] == "RpcTimeoutError" and "within 0.3 s" in out["timeout"][1]
    assert out["after_timeout"] == 3
    # loss = sum((3 t)^2) at t = 2: value 108, gradient 18 t = 36, through the async reply
    assert out["autograd"] == (108.0, [36.0, 36.0, 36.0])


def test_options_are_honoured_and_init_rpc_checks_like_pytorch(torch_init_rpc_errors):
    results = get_pool(2).run(programs.options_program, {"timeout": 0.5}, timeout=90)
    for rank, out in enumerate(results):
        for name in ("backend_not_a_type", "options_not_options", "rank_not_int"):
            assert out[name][0] == torch_init_rpc_errors[name], (name, out[name])
        assert out["options_and_timeout"][0] == "TypeError"
        kind, text = out["rank_wrong_on_last"]
        assert kind == "RuntimeError"
        assert ("rank=0 but MPI says rank is 1" in text) if rank == 1 else ("failed on another rank" in text)
        assert out["world_size_wrong"][0] == "RuntimeError" and "world_size=3" in out["world_size_wrong"][1]
        assert out["env_rank_wrong"][0] == "RuntimeError" and f"RANK={rank + 1}" in out["env_rank_wrong"][1]
        assert tuple(out["settings"]) == (3, 0.5)
    assert results[0]["default_timeout"][0] == "RpcTimeoutError"
    assert "within 0.5 s" in results[0]["default_timeout"][1], "the options' rpc_timeout is the default timeout"


@pytest.fixture(scope="module")
def torch_init_rpc_errors():
    """PyTorch's exception types for init_rpc's argument errors (raised before any rendezvous)."""
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29581")
    calls = {
        "backend_not_a_type": lambda: trpc.init_rpc("w", backend="TENSORPIPE", rank=0, world_size=1),
        "options_not_options": lambda: trpc.init_rpc("w", rank=0, world_size=1, rpc_backend_options=5),
        "rank_not_int": lambda: trpc.init_rpc("w", rank="a", world_size=1),
    }
    errors = {}
    for name, call in calls.items():
        with pytest.raises(Exception) as info:  # noqa: PT011  (the type is what we compare)
            call()
        errors[name] = type(info.value).__name__
    return errors


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"num_worker_threads": 0}, "num_worker_threads"),
        ({"num_worker_threads": -1}, "num_worker_threads"),
        ({"rpc_timeout": -1}, "rpc_timeout"),
        ({"num_worker_threads": "a"}, "num_worker_threads"),
        ({"init_method": 5}, "init_method"),
        ({"device_maps": {"worker1": {0: 1}}}, "CPU tensors only"),
    ],
)
def test_backend_options_errors_match_pytorch(kwargs, words):
    with pytest.raises(Exception) as theirs:  # noqa: PT011  (the type is what we compare)
        trpc.TensorPipeRpcBackendOptions(**kwargs)
    with pytest.raises(type(theirs.value), match=words):
        rpc.TensorPipeRpcBackendOptions(**kwargs)


def test_backend_options_defaults_and_device_maps_match_pytorch():
    ours, theirs = rpc.TensorPipeRpcBackendOptions(), trpc.TensorPipeRpcBackendOptions()
    for name in ("num_worker_threads", "rpc_timeout", "init_method", "device_maps", "devices"):
        assert getattr(ours, name) == getattr(theirs, name), name
    with pytest.raises(RuntimeError) as error:
        theirs.set_device_map("worker1", {0: 1})  # PyTorch on a machine without GPUs
    with pytest.raises(type(error.value), match="CPU tensors only"):
        ours.set_device_map("worker1", {0: 1})
    with pytest.raises(RuntimeError, match="CPU tensors only"):
        rpc.TensorPipeRpcBackendOptions(devices=["cuda:0"])  # (PyTorch accepts a device list here)
    assert [m.name for m in rpc.BackendType] == [m.name for m in trpc.BackendType]
    assert rpc.functions.async_execution(len)("abc") == 3, "a decorated function still runs locally"
    with pytest.raises(TypeError):
        rpc.functions.async_execution(5)


def torch_training(spec):
    """The same two-layer model trained in one process with PyTorch: (losses, [w1, b1], [w2, b2])."""
    params = [torch.tensor(spec[k], requires_grad=True) for k in ("w1", "b1", "w2", "b2")]
    optimizer = torch.optim.SGD(params, lr=spec["lr"])
    w1, b1, w2, b2 = params
    losses = []
    for x in spec["xs"]:
        optimizer.zero_grad()
        loss = ((torch.tanh(torch.from_numpy(x) @ w1.T + b1) @ w2.T + b2) ** 2).sum()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses, [p.detach().numpy() for p in params[:2]], [p.detach().numpy() for p in params[2:]]


def test_remote_module_trains_like_a_local_model():
    rng = np.random.default_rng(0)
    spec = dict(w1=rng.standard_normal((3, 4)) * 0.5, b1=rng.standard_normal(3), w2=rng.standard_normal((2, 3)),
                b2=rng.standard_normal(2), xs=rng.standard_normal((4, 5, 4)), lr=0.05)
    out = get_pool(2).run(programs.remote_module_program, spec, timeout=90)[0]
    losses, remote, local = torch_training(spec)
    np.testing.assert_allclose(out["losses"], losses, rtol=1e-10)
    for got, expected in zip(out["remote"] + out["local"], remote + local):
        np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(out["async"], out["sync"])
    assert out["rref_owner"] == "worker1" and out["by_rank"] == "worker1"
    assert out["remote_training_after_eval"] is False, "eval() reaches the remote module"
    assert out["parameters_error"][0] == "ValueError" and "remote_parameters()" in out["parameters_error"][1]
    assert out["bad_device"][0] == "ValueError" and "worker name>/<device>" in out["bad_device"][1]
    assert out["unknown_worker"][0] == "ValueError" and "nobody" in out["unknown_worker"][1]
    assert out["constructor_error"][0] == "TypeError" and "bias" in out["constructor_error"][1]
