"""Programs run on every rank by test_reduction_strategies.py: the strategies and the observer, used directly."""

from __future__ import annotations

import numpy as np

import minigrad as mg
import minigrad_dist as dist
from minigrad import nn
from minigrad.tensor import Tensor
from minigrad_dist.algorithms import ddp_comm_hooks as hooks
from minigrad_dist.ddp.bucket import Bucket
from minigrad_dist.ddp.observer import ReducerObserver
from minigrad_dist.ddp.reducer import Reducer
from minigrad_dist.ddp.reduction_strategies import (
    CommHookStrategy,
    IallreduceStrategy,
    SharedMemoryStrategy,
    choose_strategy,
)
from minigrad_dist.ddp.shared_memory import shared_memory_comm
from minigrad_dist.testing.oracles import environment
from tests.dist.programs_common import ensure_init


def _strategy(name, group, timeout=60.0):
    if name == "Iallreduce":
        return IallreduceStrategy(group)
    if name == "comm hook":
        return CommHookStrategy(hooks.allreduce_hook, group, group.size())
    node_comm = shared_memory_comm(group.comm)
    assert node_comm is not None, "the pool's ranks share one node"
    return SharedMemoryStrategy(group, node_comm, timeout)


def _value(result):
    result = result[0] if isinstance(result, list) else result
    return result.array if isinstance(result, Tensor) else result


def strategy_averages_buckets(spec):
    """Fill two buckets through a strategy for three rounds, launch them in order, return the averaged buffers."""
    rank, world = ensure_init()
    group = dist.get_default_group()
    params = [mg.zeros(3, 2, dtype=mg.float64), mg.zeros(5, dtype=mg.float64), mg.zeros(4, dtype=mg.float64)]
    buckets = [Bucket(0, params[:2], [0, 1]), Bucket(1, params[2:], [2])]
    strategy = _strategy(spec["strategy"], group)
    strategy.use_buckets(buckets)
    rounds = []
    for round_ in range(3):
        for bucket in buckets:
            for position, param in enumerate(bucket.params):
                grad = np.full(param.shape, float((rank + 1) * (round_ + 1)))
                strategy.copy_gradient(bucket, position, grad)
        for bucket in buckets:
            bucket.future = strategy.launch(bucket)
            strategy.progress(buckets[: bucket.index + 1])
        rounds.append([_value(bucket.future.wait(60.0)).copy() for bucket in buckets])
    strategy.close()
    return {"rounds": rounds, "staging_detached": all(b.staging is None for b in buckets)}


def shared_memory_wait_times_out(spec):
    """Rank 0 launches a bucket that rank 1 never fills: rank 0's wait raises TimeoutError after ``timeout``."""
    rank, world = ensure_init()
    group = dist.get_default_group()
    param = mg.zeros(4, dtype=mg.float64)
    bucket = Bucket(0, [param], [0])
    strategy = _strategy("shared memory", group, timeout=spec["timeout"])
    strategy.use_buckets([bucket])
    message = None
    if rank == 0:
        strategy.copy_gradient(bucket, 0, np.ones(4))
        future = strategy.launch(bucket)
        try:
            future.wait(spec["timeout"])
        except TimeoutError as error:
            message = str(error)
    strategy.close()  # collective: rank 1 waits here for rank 0
    return message


class Recorder(ReducerObserver):
    """Writes every event of the Reducer down, in order."""

    def __init__(self):
        self.events = []
        self.wrapped = []

    def wrap_gradient_work(self, work, names):
        self.wrapped.append(list(names))

        def recorded(index):
            self.events.append(("gradient", names[index]))
            work(index)

        return recorded

    def bucket_ready(self, bucket):
        self.events.append(("ready", bucket.index))

    def launching(self, bucket):
        self.events.append(("launching", bucket.index))

    def launched(self, bucket):
        self.events.append(("launched", bucket.index, bucket.future is not None))

    def waiting(self):
        self.events.append(("waiting",))

    def waited(self):
        self.events.append(("waited",))


def reducer_reports_to_its_observer(spec):
    """A Reducer built directly, with a recording observer and a timeout; two backward passes."""
    rank, world = ensure_init()
    group = dist.get_default_group()
    with environment({"MINIGRAD_DDP_SHM": spec["shm"]}):
        mg.manual_seed(0)
        model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2)).double()
        named = list(model.named_parameters())
        recorder = Recorder()
        reducer = Reducer([p for _, p in named], [n for n, _ in named], group, bucket_cap_bytes=1,
                          first_bucket_cap_bytes=1, timeout=spec["timeout"], observer=recorder)
    strategy = type(reducer.strategy).__name__
    events = []
    for _ in range(2):
        recorder.events = []
        model.zero_grad()
        out = model(mg.tensor(np.ones((2, 3)) * (rank + 1)))
        reducer.prepare_for_backward(out)
        out.sum().backward()
        events.append(recorder.events)
    result = {
        "strategy": strategy,
        "timeout": reducer.timeout,
        "wrapped": recorder.wrapped,
        "names": [n for n, _ in named],
        "buckets": len(reducer.buckets),
        "events": events,
        "tracer": reducer.tracer,
        "grads": [p.grad.array.copy() for _, p in named],
    }
    reducer.close()
    return result


def comm_hook_replaces_strategy(spec):
    """The default strategy, then the one ``register_comm_hook`` installs; and the gradient it produces."""
    rank, world = ensure_init()
    group = dist.get_default_group()
    with environment({"MINIGRAD_DDP_SHM": spec["shm"]}):
        chosen = choose_strategy(group, [mg.zeros(2)], None)
        chosen.close()
        ddp = dist.DistributedDataParallel(nn.Linear(3, 2).double())
    before = type(ddp.reducer.strategy).__name__
    ddp.register_comm_hook(None, hooks.allreduce_hook)
    after = type(ddp.reducer.strategy).__name__
    ddp(mg.tensor(np.ones((2, 3)) * (rank + 1))).sum().backward()
    result = {"chosen": type(chosen).__name__, "before": before, "after": after,
              "shared_after": ddp.reducer.shared is not None, "grad": ddp.module.weight.grad.array.copy()}
    ddp.close()
    return result
