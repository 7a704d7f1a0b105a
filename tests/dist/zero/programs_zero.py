"""Programs run on every rank of a pool by test_zero.py.

Each takes a plain-data ``spec`` (drawn in the pytest process, so every rank
runs the same case) and returns plain data: parameters after each step,
state dicts as NumPy arrays, error messages, byte counts.
"""

from __future__ import annotations

import numpy as np

import minigrad as mg
import minigrad_dist as dist
from minigrad import nn
from minigrad.nn import functional as F
from minigrad.tensor import Tensor
from minigrad_dist import memory
from minigrad_dist.algorithms.ddp_comm_hooks import allreduce_hook
from minigrad_dist.algorithms.ddp_zero_hook import hook_with_zero_step, hook_with_zero_step_interleaved
from minigrad_dist.optim import ZeroRedundancyOptimizer
from minigrad_dist.testing.models import mlp_from_spec
from tests.dist.programs_common import ensure_init, message_of

HOOKS = {"overlap": hook_with_zero_step, "interleaved": hook_with_zero_step_interleaved}


def build_model(spec):
    """Rank r seeds with ``seed + r``: DDP's broadcast must make the replicas equal."""
    mg.manual_seed(spec["seed"] + dist.get_rank())
    return mlp_from_spec(spec["model"])


def make_zero(spec, ddp):
    """The ZeRO optimizer of ``spec["mode"]`` over ``ddp``'s parameters (registering the hook where one is needed)."""
    optimizer = getattr(mg.optim, spec["optimizer"])
    mode = spec["mode"]
    if mode == "standalone":
        return ZeroRedundancyOptimizer(ddp.parameters(), optimizer, partition=spec.get("partition", "flat"),
                                       **spec["optimizer_kwargs"])
    zero = ZeroRedundancyOptimizer(ddp.parameters(), optimizer, overlap_with_ddp=True, **spec["optimizer_kwargs"])
    maker = HOOKS["interleaved" if spec.get("interleaved") else "overlap"]
    hook = maker(allreduce_hook, ddp, zero, shard_buckets=spec.get("shard_buckets", True),
                 shard_gradients=mode == "zero2")
    ddp.register_comm_hook(None, hook)
    return zero


def _batch(spec, step):
    rank, world = dist.get_rank(), dist.get_world_size()
    x, y = spec["x"][step], spec["y"][step]
    rows = len(x) // world
    window = slice(rank * rows, (rank + 1) * rows)
    return mg.tensor(x[window]), mg.tensor(y[window])


def _params(model):
    return [p.array.copy() for p in model.parameters()]


def _train(spec, ddp, model, optimizer, steps, scheduler=None, check_grads_freed=False):
    history = []
    for step in steps:
        optimizer.zero_grad()
        x, y = _batch(spec, step)
        F.cross_entropy(ddp(x), y).backward()
        if check_grads_freed:
            assert all(p.grad is None for p in model.parameters()), "ZeRO-2 must leave .grad None after backward"
        optimizer.step()
        if scheduler is not None:
            scheduler.step()
        history.append(_params(model))
    return history


def train(spec):
    """ZeRO (``spec["mode"]``) and DDP with the plain optimizer, from the same start; parameters after each step."""
    ensure_init()
    steps = range(len(spec["x"]))
    results = {}
    for kind in ("zero", "ddp"):
        model = build_model(spec)
        ddp = dist.DistributedDataParallel(model, **spec["ddp_kwargs"])
        if kind == "zero":
            optimizer = make_zero(spec, ddp)
        else:
            optimizer = getattr(mg.optim, spec["optimizer"])(ddp.parameters(), **spec["optimizer_kwargs"])
        scheduler = mg.optim.lr_scheduler.StepLR(optimizer, 1, gamma=0.5) if spec.get("scheduler") else None
        results[kind] = _train(spec, ddp, model, optimizer, steps, scheduler,
                               check_grads_freed=kind == "zero" and spec["mode"] == "zero2")
        ddp.close()
    return results


def _to_numpy(state_dict):
    """A state dict with every Tensor as a NumPy array (to travel back to the test)."""
    return {
        "state": {k: {n: v.array.copy() if isinstance(v, Tensor) else v for n, v in values.items()}
                  for k, values in state_dict["state"].items()},
        "param_groups": [dict(g) for g in state_dict["param_groups"]],
    }


def state_dict_round_trip(spec):
    """Train ``spec["split"]`` steps, consolidate on ``spec["to"]``, load into a fresh ZeRO, train on.

    Returns the consolidated state dict and the parameters at the split (from
    rank ``to``), the errors ``state_dict()`` raised before consolidating and
    on the other ranks, and the parameters after the resumed training.
    """
    ensure_init()
    rank = dist.get_rank()
    split, to = spec["split"], spec["to"]
    model = build_model(spec)
    ddp = dist.DistributedDataParallel(model, **spec["ddp_kwargs"])
    zero = make_zero(spec, ddp)
    _train(spec, ddp, model, zero, range(split))
    before = message_of(zero.state_dict)
    zero.consolidate_state_dict(to=to)
    here = zero.state_dict() if rank == to else None
    elsewhere = None if rank == to else message_of(zero.state_dict)
    full = dist.get_default_group().bcast_obj(_to_numpy(here) if rank == to else None, to)
    at_split = _params(model)
    ddp.close()

    resumed = build_model(spec)
    ddp = dist.DistributedDataParallel(resumed, **spec["ddp_kwargs"])
    for p, value in zip(resumed.parameters(), at_split):
        p.array[...] = value
    zero = make_zero(spec, ddp)
    zero.load_state_dict(full)
    history = _train(spec, ddp, resumed, zero, range(split, len(spec["x"])))
    zero.consolidate_state_dict(to=to)
    final_state = _to_numpy(zero.state_dict()) if rank == to else None
    ddp.close()
    return {"full": full, "at_split": at_split, "before": before, "elsewhere": elsewhere,
            "resumed": history, "final_state": final_state}


def add_param_group_and_lbfgs(spec):
    """A group added after construction (own lr), trained beside a plain SGD doing the same; LBFGS by parameters."""
    ensure_init()
    results = {}
    for kind in ("zero", "plain"):
        mg.manual_seed(0)
        model = nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 2)).double()
        first, second = list(model[0].parameters()), list(model[2].parameters())
        if kind == "zero":
            optimizer = ZeroRedundancyOptimizer(first, mg.optim.SGD, lr=0.1, momentum=0.9)
        else:
            optimizer = mg.optim.SGD(first, lr=0.1, momentum=0.9)
        optimizer.add_param_group({"params": second, "lr": 0.05})
        x = mg.tensor(np.linspace(-1, 1, 12).reshape(4, 3))
        for _ in range(3):
            optimizer.zero_grad()
            F.mse_loss(model(x), mg.tensor(np.ones((4, 2)))).backward()
            optimizer.step()
        results[kind] = _params(model)
    mg.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2)).double()
    lbfgs = ZeroRedundancyOptimizer(model.parameters(), mg.optim.LBFGS, partition="parameters", lr=0.5, max_iter=3)
    x = mg.tensor(np.linspace(-1, 1, 12).reshape(4, 3))

    def closure():
        lbfgs.zero_grad()
        loss = F.mse_loss(model(x), mg.tensor(np.ones((4, 2))))
        loss.backward()
        return loss

    losses = [float(lbfgs.step(closure).array) for _ in range(3)]
    results["lbfgs_losses"] = losses
    results["lbfgs_params"] = _params(model)
    return results


def errors(spec):
    """The errors of bad use, each as ``(type name, message)`` (None where nothing was raised)."""
    rank, world = ensure_init()
    found = {}
    mg.manual_seed(0)
    width = 4 if rank == 0 or world == 1 else 5
    odd = nn.Sequential(nn.Linear(3, width), nn.Linear(width, 2)).double()
    found["mismatch"] = message_of(lambda: ZeroRedundancyOptimizer(odd.named_parameters(), mg.optim.SGD, lr=0.1))
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2)).double()
    found["lbfgs_flat"] = message_of(lambda: ZeroRedundancyOptimizer(model.parameters(), mg.optim.LBFGS))
    found["not_a_class"] = message_of(lambda: ZeroRedundancyOptimizer(model.parameters(), "SGD", lr=0.1))
    found["empty"] = message_of(lambda: ZeroRedundancyOptimizer([], mg.optim.SGD, lr=0.1))
    found["partition"] = message_of(lambda: ZeroRedundancyOptimizer(model.parameters(), mg.optim.SGD,
                                                                    partition="rows"))
    found["bad_lr"] = message_of(lambda: ZeroRedundancyOptimizer(model.parameters(), mg.optim.SGD, lr=-1.0))

    ddp = dist.DistributedDataParallel(model)
    zero = ZeroRedundancyOptimizer(ddp.parameters(), mg.optim.Adam, overlap_with_ddp=True, lr=0.1)
    found["no_hook"] = message_of(zero.step)
    found["wrong_hook"] = message_of(lambda: hook_with_zero_step(lambda s, b: None, ddp, zero, shard_gradients=True))
    ddp.register_comm_hook(None, hook_with_zero_step(allreduce_hook, ddp, zero, shard_buckets=True))
    found["step_before_backward"] = message_of(zero.step)
    x, y = mg.tensor(np.ones((2, 3))), mg.tensor([0, 1])
    F.cross_entropy(ddp(x), y).backward()
    found["forward_without_step"] = message_of(lambda: ddp(x))
    zero.step()
    found["state_dict_unconsolidated"] = message_of(zero.state_dict)
    found["consolidate_bad_rank"] = message_of(lambda: zero.consolidate_state_dict(to=world))
    ddp.close()

    unused = dist.DistributedDataParallel(nn.Linear(3, 2).double(), find_unused_parameters=True)
    zero = ZeroRedundancyOptimizer(unused.parameters(), mg.optim.SGD, overlap_with_ddp=True, lr=0.1)
    found["find_unused"] = message_of(lambda: hook_with_zero_step(allreduce_hook, unused, zero))
    other = nn.Linear(3, 2).double()
    zero = ZeroRedundancyOptimizer(other.parameters(), mg.optim.SGD, overlap_with_ddp=True, lr=0.1)
    plain = dist.DistributedDataParallel(nn.Linear(3, 2).double())
    found["other_params"] = message_of(lambda: hook_with_zero_step(allreduce_hook, plain, zero))
    unused.close()
    plain.close()
    return found


class Wide(nn.Module):
    """The issue's 3-layer MLP shape, scaled down to keep the test quick: 256-1024-1024-256 (1.6 M parameters)."""

    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(256, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(),
                                  nn.Linear(1024, 256))

    def forward(self, x):
        return self.body(x)


def memory_per_rank(spec):
    """Bytes of optimizer state and of gradients one rank holds: plain DDP + Adam, ZeRO-1, ZeRO-2."""
    ensure_init()
    x = mg.tensor(np.random.default_rng(dist.get_rank()).standard_normal((2, 256)))
    y = mg.tensor([0, 1])
    report = {}
    for kind in ("ddp", "zero1", "zero2"):
        mg.manual_seed(0)
        model = Wide().double()
        ddp = dist.DistributedDataParallel(model)
        if kind == "ddp":
            optimizer = mg.optim.Adam(ddp.parameters(), lr=1e-3)
        elif kind == "zero1":
            optimizer = ZeroRedundancyOptimizer(ddp.parameters(), mg.optim.Adam, lr=1e-3)
        else:
            optimizer = ZeroRedundancyOptimizer(ddp.parameters(), mg.optim.Adam, overlap_with_ddp=True, lr=1e-3)
            ddp.register_comm_hook(None, hook_with_zero_step(allreduce_hook, ddp, optimizer, shard_gradients=True))
        memory.reset_peaks()
        F.cross_entropy(ddp(x), y).backward()
        after_backward = memory.memory_report(model, optimizer)
        optimizer.step()
        after_step = memory.memory_report(model, optimizer)
        report[kind] = {"gradients": after_backward["gradients"], "optimizer_state": after_step["optimizer_state"],
                        "peak_buckets": after_backward["peak"]["gradient_buckets"],
                        "parameters": after_step["parameters"]}
        ddp.close()
    return report


def steps_during_backward(spec):
    """When each bucket's shard is stepped: ``(segment, last bucket launched, in a gradient hook, backward returned)``.

    A 3-layer model, one parameter per bucket (6 buckets, the last layer's
    first). File barriers (no MPI: an MPI call would drive progress itself)
    make every rank launch the last layer's two buckets, then run one more
    DDP hook, before the next DDP hook tests those buckets: only that hook's
    progress call can complete their reductions, while 4 of the 6 buckets
    are launched. The interleaved hook steps them right there; the other
    waits for the last launch.
    """
    rank, world = ensure_init()
    mg.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 2)).double()
    ddp = dist.DistributedDataParallel(model, bucket_cap_mb=1e-6, first_bucket_cap_mb=1e-6)
    zero = ZeroRedundancyOptimizer(ddp.parameters(), mg.optim.SGD, overlap_with_ddp=True, lr=0.1)
    maker = HOOKS["interleaved" if spec["interleaved"] else "overlap"]
    ddp.register_comm_hook(None, maker(allreduce_hook, ddp, zero, shard_buckets=True, shard_gradients=spec["zero2"]))
    reducer = ddp.reducer
    events = []
    step_segment = zero._step_segment

    def recording(segment, set_grads):
        events.append((zero.segments.index(segment), zero.overlap._all_launched, reducer._iteration_started,
                       seen["returned"]))
        step_segment(segment, set_grads)

    zero._step_segment = recording
    seen = {"last": 0, "middle": 0, "returned": False}

    def after_last_layer(param):
        seen["last"] += 1
        if seen["last"] == 2:
            _file_barrier(spec["dir"], "launched", rank, world)

    def after_middle_layer(param):
        seen["middle"] += 1
        if seen["middle"] == 1:
            _file_barrier(spec["dir"], "hooked", rank, world)

    handles = [p.register_post_accumulate_grad_hook(after_last_layer) for p in model[4].parameters()]
    handles += [p.register_post_accumulate_grad_hook(after_middle_layer) for p in model[2].parameters()]
    F.cross_entropy(ddp(mg.tensor(np.ones((2, 3)) * (rank + 1))), mg.tensor([0, 1])).backward()
    seen["returned"] = True
    zero.step()
    for handle in handles:
        handle.remove()
    ddp.close()
    return events


def _file_barrier(directory, name, rank, world, timeout=60.0):
    """Wait until every rank reached this point, without calling MPI."""
    import pathlib  # noqa: PLC0415
    import time  # noqa: PLC0415

    folder = pathlib.Path(directory)
    (folder / f"{name}.{rank}").touch()
    deadline = time.monotonic() + timeout
    while not all((folder / f"{name}.{r}").exists() for r in range(world)):
        if time.monotonic() > deadline:
            raise TimeoutError(f"file barrier {name!r} in {directory}")
        time.sleep(1e-3)
