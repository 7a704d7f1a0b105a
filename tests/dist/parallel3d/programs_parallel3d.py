"""Rank programs of the 3-D parallel tests: data parallel replicas of a pipeline, with tensor-parallel stages.

Each takes a plain-data ``spec`` drawn in the pytest process and returns
plain data. The world is laid out as a device mesh ``(dp, pp)`` or
``(dp, pp, tp)``; every stage's module is wrapped in
``DistributedDataParallel`` over ``mesh["dp"]`` and run as a
``PipelineStage`` over ``mesh["pp"]``. Replica ``d`` trains on rows
``d * b .. (d + 1) * b`` of each global batch of ``dp * b`` rows, so the
replicas together equal one process training on the whole batch
(``local_*`` here, run in the pytest process).
"""

from __future__ import annotations

import numpy as np

import minigrad as mg
import minigrad.nn as nn
import minigrad_dist as dist
from minigrad.optim import SGD, Adam
from minigrad_dist.ddp.distributed import DistributedDataParallel
from minigrad_dist.device_mesh import init_device_mesh
from minigrad_dist.pipelining import PipelineStage, Schedule1F1B, ScheduleInterleaved1F1B, split_sequential
from minigrad_dist.tensor_parallel import TensorParallelMLP
from tests.dist.pipelining.programs_pipelining import SCHEDULES, batches, build_model, loss_fn
from tests.dist.programs_common import ensure_init, polite_barrier

# -- the pieces every program shares -------------------------------------------------------------


def _destroy(mesh) -> None:
    for group in mesh.get_all_groups():
        dist.destroy_process_group(group)


def _rows(spec, dp_rank: int) -> slice:
    per_replica = spec["batch"] // spec["dp"]
    return slice(dp_rank * per_replica, (dp_rank + 1) * per_replica)


def _schedule(spec, stages, timeout=60.0):
    cls = SCHEDULES[spec["schedule"]]
    first = stages if cls is ScheduleInterleaved1F1B else stages[0]
    return cls(first, spec["n_microbatches"], loss_fn=loss_fn, timeout=timeout)


def _dp_pp_stages(spec, mesh, modules, ddp_options=None):
    """This rank's stages: ``modules[s]`` for its stages ``s``, each in DDP over ``mesh["dp"]``."""
    pp_rank, pp = mesh.get_local_rank("pp"), spec["pp"]
    num_stages = len(modules)
    ddps = [
        DistributedDataParallel(modules[s], process_group=mesh["dp"].get_group(), **(ddp_options or {}))
        for s in range(pp_rank, num_stages, pp)
    ]
    stages = [
        PipelineStage(ddp, s, num_stages, group=mesh["pp"].get_group())
        for ddp, s in zip(ddps, range(pp_rank, num_stages, pp))
    ]
    return ddps, stages


# -- dp x pp: an MLP cut into stages ------------------------------------------------------------


def train_dp_pp(spec):
    """``spec["steps"]`` SGD-momentum steps of a DDP-wrapped pipeline; this rank's gradients, parameters, losses.

    Also returns how many times each stage's Reducer averaged (once per step) and its bucket count.
    """
    ensure_init()
    mesh = init_device_mesh("cpu", (spec["dp"], spec["pp"]), mesh_dim_names=("dp", "pp"))
    model = build_model(spec)
    names = {id(p): n for n, p in model.named_parameters()}
    modules = split_sequential(model, split_points=spec["split_points"])
    ddp_options = {
        "gradient_as_bucket_view": spec["bucket_view"],
        "bucket_cap_mb": spec["bucket_cap_mb"],
        "first_bucket_cap_mb": spec["bucket_cap_mb"],
    }
    ddps, stages = _dp_pp_stages(spec, mesh, modules, ddp_options)
    schedule = _schedule(spec, stages)
    params = [p for ddp in ddps for p in ddp.parameters()]
    optimizer = SGD(params, lr=spec["lr"], momentum=spec["momentum"])
    x, y = batches(spec)
    rows = _rows(spec, mesh.get_local_rank("dp"))
    grads, losses = [], []
    for step in range(spec["steps"]):
        optimizer.zero_grad()
        step_losses = []
        schedule.step(mg.tensor(x[step][rows]), target=mg.tensor(y[step][rows]), losses=step_losses)
        losses.append([float(loss.item()) for loss in step_losses])
        grads.append({names[id(p)]: p.grad.numpy().copy() for p in params})
        optimizer.step()
    result = {
        "coordinate": mesh.get_coordinate(),
        "grads": grads,
        "params": {names[id(p)]: p.detach().numpy().copy() for p in params},
        "losses": losses,
        "averagings": [ddp.reducer.num_iterations for ddp in ddps],
        "buckets": [len(ddp.reducer.buckets) for ddp in ddps],
    }
    for ddp in ddps:
        ddp.close()
    _destroy(mesh)
    return result


def averaging_timeline(spec):
    """Steps of a traced DDP pipeline (``trace=True``, one parameter per bucket): per step, this rank's
    backward actions ``(microbatch, start, end)`` and the Reducer's events ``(lane, name, start, end)``."""
    ensure_init()
    mesh = init_device_mesh("cpu", (spec["dp"], spec["pp"]), mesh_dim_names=("dp", "pp"))
    modules = split_sequential(build_model(spec), num_stages=spec["pp"])
    ddps, stages = _dp_pp_stages(
        spec, mesh, modules, {"trace": True, "bucket_cap_mb": 1e-6, "first_bucket_cap_mb": 1e-6}
    )
    schedule = _schedule(spec, stages)
    tracer = ddps[0].reducer.tracer
    x, y = batches(spec)
    rows = _rows(spec, mesh.get_local_rank("dp"))
    steps = []
    for step in range(spec["steps"]):
        tracer.events.clear()
        schedule.step(mg.tensor(x[step][rows]), target=mg.tensor(y[step][rows]))
        backwards = [(e[5]["microbatch"], e[3], e[4]) for e in schedule.events if e[5]["kind"] == "B"]
        reducer_events = [
            (lane, name, start, end) for _, lane, name, start, end, _ in tracer.events if lane != "backward"
        ]
        steps.append({"backwards": backwards, "reducer": reducer_events})
    result = {"steps": steps, "params": len(list(ddps[0].parameters())), "buckets": len(ddps[0].reducer.buckets)}
    for ddp in ddps:
        ddp.close()
    _destroy(mesh)
    return result


class PartlyUsed(nn.Module):
    """A Linear stage with a second Linear that the forward never uses (for ``find_unused_parameters``)."""

    def __init__(self, n_in, n_out):
        super().__init__()
        self.used = nn.Linear(n_in, n_out)
        self.unused = nn.Linear(n_in, n_out)

    def forward(self, x):
        return self.used(x)


def _partly_used_model(spec):
    mg.manual_seed(spec["seed"])
    widths = spec["widths"]
    return nn.Sequential(nn.Linear(widths[0], widths[1]), nn.Tanh(), PartlyUsed(widths[1], widths[2])).double()


def local_partly_used(spec):
    """The model of ``unused_parameters`` in one process on the full batch: gradients of the used parameters."""
    model = _partly_used_model(spec)
    x, y = batches(spec)
    loss_fn(model(mg.tensor(x[0])), mg.tensor(y[0])).backward()
    return {n: p.grad.numpy().copy() for n, p in model.named_parameters() if p.grad is not None}


def unused_parameters(spec):
    """One step with a parameter no forward uses, with or without ``find_unused_parameters``.

    Returns this rank's gradients (by name; None where a parameter got none) or the error ``(type, message)``.
    """
    ensure_init()
    mesh = init_device_mesh("cpu", (spec["dp"], spec["pp"]), mesh_dim_names=("dp", "pp"))
    model = _partly_used_model(spec)
    names = {id(p): n for n, p in model.named_parameters()}
    modules = split_sequential(model, split_points=[2])
    ddps, stages = _dp_pp_stages(spec, mesh, modules, {"find_unused_parameters": spec["find_unused"]})
    schedule = _schedule(spec, stages, timeout=spec["timeout"])
    x, y = batches(spec)
    rows = _rows(spec, mesh.get_local_rank("dp"))
    try:
        schedule.step(mg.tensor(x[0][rows]), target=mg.tensor(y[0][rows]))
    except (RuntimeError, TimeoutError) as error:
        _destroy(mesh)  # DDP is broken after a failed averaging: its communicators are left to the pool
        return type(error).__name__, str(error)
    grads = {names[id(p)]: None if p.grad is None else p.grad.numpy().copy() for ddp in ddps for p in ddp.parameters()}
    for ddp in ddps:
        ddp.close()
    _destroy(mesh)
    return grads


def replica_times_out(spec):
    """Replica 1 runs its step under ``no_sync``; replica 0 averages, so its last stage's averaging times out.

    Returns this rank's error ``(type, message)`` or None. The timed-out averaging leaves requests no rank
    will match: DDP cannot close (it is collective), so its communicators stay behind in the pool process.
    """
    if dist.is_initialized():
        dist.destroy_process_group()
    dist.init_process_group(timeout=spec["timeout"])
    try:
        mesh = init_device_mesh("cpu", (spec["dp"], spec["pp"]), mesh_dim_names=("dp", "pp"))
        dp_rank = mesh.get_local_rank("dp")
        modules = split_sequential(build_model(spec), num_stages=spec["pp"])
        ddps, stages = _dp_pp_stages(spec, mesh, modules)
        schedule = _schedule(spec, stages, timeout=spec["timeout"])
        x, y = batches(spec)
        rows = _rows(spec, dp_rank)
        error = None
        try:
            if dp_rank == 1:
                with ddps[0].no_sync():
                    schedule.step(mg.tensor(x[0][rows]), target=mg.tensor(y[0][rows]))
            else:
                schedule.step(mg.tensor(x[0][rows]), target=mg.tensor(y[0][rows]))
        except TimeoutError as caught:
            error = type(caught).__name__, str(caught)
        polite_barrier()  # every rank is done with the step before the groups go
        _destroy(mesh)
        return error
    finally:
        dist.destroy_process_group()


def wrong_groups(spec):
    """Stages whose DDP group is not the mesh's "dp" group: the error ``(type, message)`` on each rank.

    ``spec["case"]``: ``"pp_group"`` wraps DDP over the pipeline's own group; ``"order"`` makes replica 1
    build its interleaved stages in reverse order (the replicas of DDP's group disagree on the stage).
    Every stage has the same parameter shapes, so DDP's own construction succeeds and the stage must tell.
    """
    ensure_init()
    mesh = init_device_mesh("cpu", (spec["dp"], spec["pp"]), mesh_dim_names=("dp", "pp"))
    dp_rank, pp_rank = mesh.get_coordinate()
    mg.manual_seed(spec["seed"])
    num_stages = spec["pp"] * spec["stages_per_rank"]
    stage_indices = list(range(pp_rank, num_stages, spec["pp"]))
    if spec["case"] == "order" and dp_rank == 1:
        stage_indices.reverse()
    group = mesh["pp"].get_group() if spec["case"] == "pp_group" else mesh["dp"].get_group()
    ddps, message = [], None
    try:
        for s in stage_indices:
            ddps.append(DistributedDataParallel(nn.Linear(3, 3).double(), process_group=group))
            PipelineStage(ddps[-1], s, num_stages, group=mesh["pp"].get_group())
    except ValueError as error:
        message = type(error).__name__, str(error)
    for ddp in ddps:
        ddp.close()
    _destroy(mesh)
    return message


# -- dp x pp x tp: tensor-parallel MLP blocks as stages ----------------------------------------


def full_blocks(spec):
    """Per stage, the full layers ``(fc1, tanh, fc2)`` of its MLP block (float64, drawn from the seed)."""
    rng = np.random.default_rng([spec["seed"], 3])
    widths, hidden = spec["widths"], spec["hidden"]
    blocks = []
    for a, b in zip(widths[:-1], widths[1:]):
        fc1 = nn.Linear(a, hidden, dtype=mg.float64)
        fc2 = nn.Linear(hidden, b, dtype=mg.float64)
        with mg.no_grad():
            for p in [*fc1.parameters(), *fc2.parameters()]:
                p.copy_(mg.tensor(rng.standard_normal(p.shape) * 0.5))
        blocks.append((fc1, nn.Tanh(), fc2))
    return blocks


def regression_data(spec):
    """Per step, the global batch's inputs ``(batch, widths[0])`` and targets ``(batch, widths[-1])``."""
    rng = np.random.default_rng([spec["seed"], 4])
    shape_in, shape_out = (spec["batch"], spec["widths"][0]), (spec["batch"], spec["widths"][-1])
    return [(rng.standard_normal(shape_in), rng.standard_normal(shape_out)) for _ in range(spec["steps"])]


def mse(output, target):
    """Mean squared error over the microbatch."""
    return ((output - target) ** 2).mean()


def _block_params(block) -> list:
    """``[fc1.weight, fc1.bias, fc2.weight, fc2.bias]`` of a full block or a TensorParallelMLP."""
    fc1, fc2 = (block[0], block[2]) if isinstance(block, tuple) else (block.fc1, block.fc2)
    return [fc1.weight, fc1.bias, fc2.weight, fc2.bias]


def local_3d(spec):
    """The full blocks in one process on the full batch: per step every block's gradients, then its parameters."""
    blocks = full_blocks(spec)
    params = [p for block in blocks for p in _block_params(block)]
    optimizer = Adam(params, lr=spec["lr"])
    grads = []
    for x, t in regression_data(spec):
        optimizer.zero_grad()
        out = mg.tensor(x)
        for fc1, activation, fc2 in blocks:
            out = fc2(activation(fc1(out)))
        mse(out, mg.tensor(t)).backward()
        grads.append([[p.grad.numpy().copy() for p in _block_params(b)] for b in blocks])
        optimizer.step()
    return {"grads": grads, "params": [[p.detach().numpy().copy() for p in _block_params(b)] for b in blocks]}


def train_3d(spec):
    """dp x pp x tp: stage ``s`` is block ``s`` as a TensorParallelMLP over ``mesh["tp"]``, in DDP over
    ``mesh["dp"]``, run by Schedule1F1B over ``mesh["pp"]``; Adam steps. Returns this rank's shards."""
    ensure_init()
    mesh = init_device_mesh("cpu", (spec["dp"], spec["pp"], spec["tp"]), mesh_dim_names=("dp", "pp", "tp"))
    dp_rank, pp_rank, tp_rank = mesh.get_coordinate()
    block = TensorParallelMLP.from_linears(*full_blocks(spec)[pp_rank], process_group=mesh["tp"].get_group())
    ddp = DistributedDataParallel(block, process_group=mesh["dp"].get_group())
    stage = PipelineStage(ddp, pp_rank, spec["pp"], group=mesh["pp"].get_group())
    schedule = Schedule1F1B(stage, spec["n_microbatches"], loss_fn=mse, timeout=120.0)
    params = _block_params(block)
    optimizer = Adam(params, lr=spec["lr"])
    rows = _rows(spec, dp_rank)
    grads = []
    for x, t in regression_data(spec):
        optimizer.zero_grad()
        schedule.step(mg.tensor(x[rows]), target=mg.tensor(t[rows]))
        grads.append([p.grad.numpy().copy() for p in params])
        optimizer.step()
    result = {
        "coordinate": (dp_rank, pp_rank, tp_rank),
        "grads": grads,
        "params": [p.detach().numpy().copy() for p in params],
        "averagings": ddp.reducer.num_iterations,
    }
    ddp.close()
    _destroy(mesh)
    return result
