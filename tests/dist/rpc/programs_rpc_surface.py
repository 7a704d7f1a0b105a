"""Programs run on every rank of a pool by test_rpc_surface.py: async_execution, init_rpc's options, RemoteModule.

Each program starts RPC, works (rank 0 drives), and shuts RPC down on every rank.
"""

from __future__ import annotations

import os
import threading

import numpy as np

import minigrad as mg
import minigrad_dist.autograd as dist_autograd
import minigrad_dist.rpc as rpc
from minigrad import nn
from minigrad_dist.mpi import load_mpi
from minigrad_dist.nn import RemoteModule
from minigrad_dist.optim import DistributedOptimizer
from minigrad_dist.rpc.api import current_agent


def _message(call):
    """The exception ``call()`` raised, as ``(type name, message)``; None when it returned."""
    try:
        call()
    except Exception as error:  # noqa: BLE001  (the test compares types with PyTorch's)
        return type(error).__name__, str(error)
    return None


def _rank_world():
    comm = load_mpi().COMM_WORLD
    return comm.Get_rank(), comm.Get_size()


# -- functions run remotely -----------------------------------------------------------------


def add(a, b):
    return a + b


@rpc.functions.async_execution
def async_add_chained(to, x, y, z):
    """The PyTorch documentation's example: reply once another RPC's result came back, plus z."""
    return rpc.rpc_async(to, add, args=(x, y)).then(lambda fut: fut.wait() + z)


class _Batch:
    """Calls to ``async_batch_sum`` waiting for the batch to fill up."""

    lock = threading.Lock()
    waiting = []


@rpc.functions.async_execution
def async_batch_sum(value, expected):
    """Reply to every caller with the sum of the batch, once ``expected`` calls have arrived."""
    future = rpc.Future()
    with _Batch.lock:
        _Batch.waiting.append((future, value))
        if len(_Batch.waiting) < expected:
            return future
        batch, _Batch.waiting = _Batch.waiting, []
    total = sum(v for _, v in batch)
    for f, _ in batch:
        f.set_result(total)
    return future


@rpc.functions.async_execution
def async_fail_later():
    future = rpc.Future()
    threading.Timer(0.01, lambda: future.set_exception(KeyError("async boom"))).start()
    return future


@rpc.functions.async_execution
def async_fail_now():
    raise ValueError("failed before returning a future")


@rpc.functions.async_execution
def not_a_future():
    return 5


_parked = []


@rpc.functions.async_execution
def async_parked():
    future = rpc.Future()
    _parked.append(future)
    return future


def release_parked(value):
    while _parked:
        _parked.pop().set_result(value)


@rpc.functions.async_execution
def async_scale(x, factor):
    """x * factor, completed later by another thread."""
    future = rpc.Future()
    threading.Timer(0.01, lambda: future.set_result(x * factor)).start()
    return future


def agent_settings():
    agent = current_agent()
    return len(agent._pool), agent.rpc_timeout


# -- programs --------------------------------------------------------------------------------


def async_execution_program():
    """async_execution through rpc_sync, rpc_async and remote; errors, timeouts, batching, autograd."""
    rank, world = _rank_world()
    rpc.init_rpc(f"worker{rank}", rank=rank, world_size=world,
                 rpc_backend_options=rpc.TensorPipeRpcBackendOptions(num_worker_threads=2, rpc_timeout=30))
    out = {}
    if rank == 0:
        x, y = mg.ones(2), mg.ones(2) * 2
        out["sync"] = rpc.rpc_sync("worker1", async_add_chained, args=("worker2", x, y, 3)).tolist()
        out["async"] = rpc.rpc_async("worker1", async_add_chained, args=("worker2", x, y, 4)).wait().tolist()
        out["remote"] = rpc.remote("worker1", async_add_chained, args=("worker2", x, y, 5)).to_here().tolist()
        local = async_add_chained("worker2", x, y, 1)
        out["local"] = (type(local).__name__, local.wait().tolist())
        # Six calls held by a callee with two worker threads: they only complete together, so no call may
        # hold a thread while it waits.
        futures = [rpc.rpc_async("worker1", async_batch_sum, args=(i, 6)) for i in range(6)]
        out["batch"] = [f.wait() for f in futures]
        out["settings"] = rpc.rpc_sync("worker1", agent_settings)
        out["fail_later"] = _message(lambda: rpc.rpc_sync("worker1", async_fail_later))
        out["fail_now"] = _message(lambda: rpc.rpc_sync("worker1", async_fail_now))
        out["not_a_future"] = _message(lambda: rpc.rpc_sync("worker1", not_a_future))
        out["remote_fail"] = _message(lambda: rpc.remote("worker1", async_fail_later).to_here())
        out["timeout"] = _message(lambda: rpc.rpc_sync("worker1", async_parked, timeout=0.3))
        rpc.rpc_sync("worker1", release_parked, args=(7,))  # the late value is dropped quietly
        out["after_timeout"] = rpc.rpc_sync("worker2", add, args=(1, 2))
        with dist_autograd.context() as context_id:
            t = mg.full((3,), 2.0, requires_grad=True)
            scaled = rpc.rpc_sync("worker1", async_scale, args=(t, 3.0))
            loss = (scaled * scaled).sum()
            dist_autograd.backward(context_id, [loss])
            out["autograd"] = (loss.item(), dist_autograd.get_gradients(context_id)[t].array.tolist())
    rpc.shutdown()
    return out


def options_program(spec):
    """init_rpc's argument checks (every rank fails together), then a run with options honoured."""
    rank, world = _rank_world()
    out = {}
    calls = {
        "backend_not_a_type": lambda: rpc.init_rpc(f"worker{rank}", backend="TENSORPIPE"),
        "options_not_options": lambda: rpc.init_rpc(f"worker{rank}", rpc_backend_options=5),
        "options_and_timeout": lambda: rpc.init_rpc(f"worker{rank}", rpc_timeout=3.0,
                                                     rpc_backend_options=rpc.TensorPipeRpcBackendOptions()),
        "rank_not_int": lambda: rpc.init_rpc(f"worker{rank}", rank="a"),
        "rank_wrong_on_last": lambda: rpc.init_rpc(f"worker{rank}", rank=0 if rank == world - 1 else rank),
        "world_size_wrong": lambda: rpc.init_rpc(f"worker{rank}", world_size=world + 1),
    }
    for name, call in calls.items():
        out[name] = _message(call)
    os.environ["RANK"] = str(rank + 1)
    try:
        out["env_rank_wrong"] = _message(lambda: rpc.init_rpc(f"worker{rank}"))
    finally:
        del os.environ["RANK"]
    options = rpc.TensorPipeRpcBackendOptions(num_worker_threads=3, rpc_timeout=spec["timeout"],
                                              init_method="tcp://127.0.0.1:29500", _transports=["uv"])
    rpc.init_rpc(f"worker{rank}", rpc.BackendType.TENSORPIPE, rank, world, options)
    out["settings"] = agent_settings()
    if rank == 0:
        out["default_timeout"] = _message(lambda: rpc.rpc_sync("worker1", async_parked))
        rpc.rpc_sync("worker1", release_parked, args=(0,))
    rpc.shutdown()
    return out


class Affine(nn.Module):
    """y = x @ weight.T + bias, with the given initial values (so PyTorch can start from the same ones)."""

    def __init__(self, weight, bias):
        super().__init__()
        self.weight = nn.Parameter(mg.tensor(np.asarray(weight)))
        self.bias = nn.Parameter(mg.tensor(np.asarray(bias)))

    def forward(self, x):
        return x @ self.weight.T + self.bias


def _remote_training(module_rref):
    return module_rref.local_value().training


def remote_module_program(spec):
    """Train a local Affine on top of a RemoteModule on worker1 with distributed autograd; report the weights."""
    rank, world = _rank_world()
    rpc.init_rpc(f"worker{rank}")
    out = {}
    if rank == 0:
        remote = RemoteModule("worker1/cpu", Affine, args=(spec["w1"], spec["b1"]))
        local = Affine(spec["w2"], spec["b2"])
        params = remote.remote_parameters() + [rpc.RRef(p) for p in local.parameters()]
        optimizer = DistributedOptimizer(mg.optim.SGD, params, lr=spec["lr"])
        losses = []
        for x in spec["xs"]:
            with dist_autograd.context() as context_id:
                loss = (local(remote(mg.tensor(x)).tanh()) ** 2).sum()
                dist_autograd.backward(context_id, [loss])
                optimizer.step(context_id)
                losses.append(loss.item())
        out["losses"] = losses
        out["remote"] = [p.to_here().array.copy() for p in remote.remote_parameters()]
        out["local"] = [p.array.copy() for p in local.parameters()]
        out["async"] = remote.forward_async(mg.tensor(spec["xs"][0])).wait().array.copy()
        out["sync"] = remote(mg.tensor(spec["xs"][0])).array.copy()
        out["rref_owner"] = remote.get_module_rref().owner_name()
        remote.eval()
        out["remote_training_after_eval"] = rpc.rpc_sync("worker1", _remote_training, (remote.get_module_rref(),))
        out["by_rank"] = RemoteModule("rank:1/cpu", Affine, args=(spec["w1"], spec["b1"])).on
        out["parameters_error"] = _message(lambda: remote.parameters())
        out["bad_device"] = _message(lambda: RemoteModule("worker1", Affine, args=(spec["w1"], spec["b1"])))
        out["unknown_worker"] = _message(lambda: RemoteModule("nobody/cpu", Affine, args=(spec["w1"], spec["b1"])))
        out["constructor_error"] = _message(lambda: RemoteModule("worker1/cpu", Affine, args=([[1.0]],)))
    rpc.shutdown()
    return out
