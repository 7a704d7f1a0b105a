"""Programs run on every rank of a pool by the pipelining tests.

Each takes a plain-data ``spec`` (drawn in the pytest process, so every rank
runs the same case) and returns plain data: gradients, parameters, losses,
activation peaks, timelines, errors.
"""

from __future__ import annotations

import numpy as np

import minigrad as mg
import minigrad_dist as dist
from minigrad import nn
from minigrad.nn import functional as F
from minigrad_dist.pipelining import (
    PipelineStage,
    Schedule1F1B,
    ScheduleGPipe,
    ScheduleInterleaved1F1B,
    split_sequential,
)
from minigrad_dist.testing.models import SleepingLinear
from tests.dist.programs_common import ensure_init

SCHEDULES = {"gpipe": ScheduleGPipe, "1f1b": Schedule1F1B, "interleaved": ScheduleInterleaved1F1B}


def build_model(spec):
    """An MLP ``nn.Sequential`` of ``spec["widths"]`` with tanh between the Linear layers (float64, seeded)."""
    mg.manual_seed(spec["seed"])
    widths = spec["widths"]
    layers = []
    for i, (a, b) in enumerate(zip(widths[:-1], widths[1:])):
        layers.append(nn.Linear(a, b))
        if i < len(widths) - 2:
            layers.append(nn.Tanh())
    return nn.Sequential(*layers).double()


def batches(spec):
    """``spec["steps"]`` batches of inputs and class targets."""
    rng = np.random.default_rng(spec["seed"] + 1)
    x = rng.standard_normal((spec["steps"], spec["batch"], spec["widths"][0]))
    y = rng.integers(0, spec["widths"][-1], size=(spec["steps"], spec["batch"]))
    return x, y


def loss_fn(output, target):
    """Cross-entropy averaged over the microbatch."""
    return F.cross_entropy(output, target)


def train_locally(spec):
    """One process, the full batch: per step the gradients (by parameter name) and finally the parameters."""
    model = build_model(spec)
    optimizer = mg.optim.SGD(model.parameters(), lr=spec["lr"], momentum=spec["momentum"])
    x, y = batches(spec)
    grads, losses = [], []
    for step in range(spec["steps"]):
        optimizer.zero_grad()
        loss = loss_fn(model(mg.tensor(x[step])), mg.tensor(y[step]))
        loss.backward()
        losses.append(float(loss.item()))
        grads.append({n: p.grad.numpy().copy() for n, p in model.named_parameters()})
        optimizer.step()
    return {
        "grads": grads,
        "params": {n: p.detach().numpy().copy() for n, p in model.named_parameters()},
        "losses": losses,
    }


def build_pipeline(spec, model, rank, world):
    """This rank's stages and the schedule of ``spec["schedule"]``."""
    num_stages = world * spec.get("stages_per_rank", 1)
    modules = (
        split_sequential(model, split_points=spec["split_points"])
        if "split_points" in spec
        else split_sequential(model, num_stages=num_stages)
    )
    stages = [PipelineStage(modules[s], s, num_stages) for s in range(rank, num_stages, world)]
    cls = SCHEDULES[spec["schedule"]]
    first = stages if cls is ScheduleInterleaved1F1B else stages[0]
    loss = None if spec.get("no_loss") else loss_fn
    schedule = cls(first, spec["n_microbatches"], loss_fn=loss, timeout=spec.get("timeout", 60.0))
    return stages, schedule


def train_pipelined(spec):
    """The same training under the pipeline: gradients and parameters of this rank's stages, losses, peaks."""
    rank, world = ensure_init()
    model = build_model(spec)
    stages, schedule = build_pipeline(spec, model, rank, world)
    names = {id(p): n for n, p in model.named_parameters()}
    params = [p for stage in stages for p in stage.submod.parameters()]
    optimizer = mg.optim.SGD(params, lr=spec["lr"], momentum=spec["momentum"])
    x, y = batches(spec)
    grads, losses, outputs = [], [], None
    for step in range(spec["steps"]):
        optimizer.zero_grad()
        step_losses = []
        outputs = schedule.step(mg.tensor(x[step]), target=mg.tensor(y[step]), losses=step_losses)
        losses.append([float(loss.item()) for loss in step_losses])
        grads.append({names[id(p)]: p.grad.numpy().copy() for p in params})
        optimizer.step()
    return {
        "grads": grads,
        "params": {names[id(p)]: p.detach().numpy().copy() for p in params},
        "losses": losses,
        "output_shape": None if outputs is None else tuple(outputs.shape),
        "peak": schedule.peak_live_activations(),
        "order": [str(a) for a in schedule.pipeline_order_with_comms[rank]],
        "executed": [event[2] for event in schedule.events],
    }


def shape_mismatch(spec):
    """A stage whose ``input_args`` disagree with what the stage before sends: the step must raise, not hang."""
    rank, world = ensure_init()
    model = build_model(spec)
    modules = split_sequential(model, num_stages=world)
    wrong = mg.zeros(spec["batch"] // spec["n_microbatches"], spec["widths"][1] + 1, dtype=mg.float64)
    stage = PipelineStage(modules[rank], rank, world, input_args=wrong if rank == 1 else None)
    schedule = ScheduleGPipe(stage, spec["n_microbatches"], loss_fn=loss_fn, timeout=spec["timeout"])
    x, y = batches(spec)
    schedule.step(mg.tensor(x[0]), target=mg.tensor(y[0]))


def construction_error(spec):
    """The error (type, message) of a wrongly built stage or schedule, on each rank."""
    rank, world = ensure_init()
    model = build_model(spec)
    modules = split_sequential(model, num_stages=spec["num_stages"])
    try:
        stage = PipelineStage(modules[spec.get("stage", rank)], spec.get("stage", rank), spec["num_stages"])
        schedule = SCHEDULES[spec["schedule"]](
            stage if spec["schedule"] != "interleaved" else [stage],
            spec["n_microbatches"],
            loss_fn=loss_fn,
            timeout=10.0,
        )
        if spec.get("step", True):  # only when every rank built its stage: a lone rank would wait for the others
            x, y = batches(spec)
            schedule.step(mg.tensor(x[0]), target=mg.tensor(y[0]))
    except (ValueError, TypeError, RuntimeError) as error:
        return type(error).__name__, str(error)
    return None


def timed_steps(spec):
    """Steps of a balanced pipeline of sleeping stages; returns each step's events (the bubble tests measure them).

    With ``stages_per_rank`` v > 1 (interleaved), each stage sleeps ``1/v`` of the time, so a rank's work is the same.
    """
    rank, world = ensure_init()
    mg.manual_seed(0)
    v = spec.get("stages_per_rank", 1)
    stages = [
        PipelineStage(SleepingLinear(spec["width"], spec["f"] / v, spec["b"] / v).double(), s, world * v)
        for s in range(rank, world * v, world)
    ]
    cls = SCHEDULES[spec["schedule"]]
    schedule = cls(
        stages if cls is ScheduleInterleaved1F1B else stages[0],
        spec["n_microbatches"],
        loss_fn=lambda out, t: (out * out).mean(),
        timeout=30.0,
    )
    x = mg.zeros(spec["n_microbatches"] * 2, spec["width"], dtype=mg.float64)
    steps = []
    for _ in range(spec["steps"]):
        dist.barrier()
        schedule.step(x, target=x)
        steps.append(schedule.events)
    return steps


def save_timeline(spec):
    """Train a step and write the trace with ``save_trace``; rank 0 returns the paths, every rank its action list."""
    from minigrad_dist.pipelining import trace  # noqa: PLC0415  (only this program draws)

    rank, world = ensure_init()
    model = build_model(spec)
    _, schedule = build_pipeline(spec, model, rank, world)
    x, y = batches(spec)
    schedule.step(mg.tensor(x[0]), target=mg.tensor(y[0]))
    paths = trace.save_trace(schedule, spec["path"])
    return {
        "paths": None if paths is None else [str(p) if p else None for p in paths],
        "order": [str(a) for a in schedule.pipeline_order_with_comms[rank]],
    }


class TwoWay(nn.Module):
    """A stage that returns two tensors: ``tanh(W x)`` and ``x * 2`` (a skip the next stage uses)."""

    def __init__(self, n_in, n_hidden):
        super().__init__()
        self.linear = nn.Linear(n_in, n_hidden)

    def forward(self, x):
        return mg.tanh(self.linear(x)), x * 2.0


class Join(nn.Module):
    """A stage that takes two tensors and sums two Linear maps of them."""

    def __init__(self, n_hidden, n_in, n_out):
        super().__init__()
        self.a = nn.Linear(n_hidden, n_out)
        self.b = nn.Linear(n_in, n_out)

    def forward(self, h, skip):
        return self.a(h) + self.b(skip)


def two_way_model(spec):
    """Stage modules (``TwoWay``, ``Join``) passing a tuple between them, and the same model in one piece."""
    mg.manual_seed(spec["seed"])
    first = TwoWay(spec["n_in"], spec["n_hidden"]).double()
    second = Join(spec["n_hidden"], spec["n_in"], spec["n_out"]).double()
    return first, second


def two_way_training(spec):
    """Explicit stage modules with tuple messages: per-step gradients locally (rank -1) or under the pipeline."""
    rank, world = ensure_init() if spec["pipelined"] else (0, 1)
    first, second = two_way_model(spec)
    rng = np.random.default_rng(spec["seed"])
    x = mg.tensor(rng.standard_normal((spec["batch"], spec["n_in"])))
    y = mg.tensor(rng.integers(0, spec["n_out"], size=spec["batch"]))
    if spec["pipelined"]:
        modules = [first, second] if world == 1 else [[first, second][rank]]
        stages = [PipelineStage(m, i if world == 1 else rank, 2) for i, m in enumerate(modules)]
        if world == 1:
            schedule = ScheduleInterleaved1F1B(stages, spec["n_microbatches"], loss_fn=loss_fn)
        else:
            schedule = SCHEDULES[spec["schedule"]](stages[0], spec["n_microbatches"], loss_fn=loss_fn)
        schedule.step(x, target=y)
        params = [p for stage in stages for p in stage.submod.parameters()]
    else:
        loss_fn(second(*first(x)), y).backward()
        params = list(first.parameters()) + list(second.parameters())
    owner = {id(p): f"first.{n}" for n, p in first.named_parameters()}
    owner.update({id(p): f"second.{n}" for n, p in second.named_parameters()})
    return {owner[id(p)]: p.grad.numpy().copy() for p in params}


def forward_only(spec):
    """A schedule without loss_fn: only forwards; the last stage returns the batch's output."""
    rank, world = ensure_init()
    model = build_model(spec)
    _, schedule = build_pipeline(dict(spec, no_loss=True), model, rank, world)
    x, _ = batches(spec)
    output = schedule.step(mg.tensor(x[0]))
    with mg.no_grad():
        expected = model(mg.tensor(x[0]))
    return {
        "actions": [str(a) for a in schedule.pipeline_order_with_comms[rank]],
        "output": None if output is None else output.numpy().copy(),
        "expected": expected.numpy().copy(),
        "grads": [p.grad is None for p in model.parameters()],
    }


def stage_shape_error(spec):
    """One rank, one stage: ``input_args`` or ``output_args`` that disagree with the data; returns the message."""
    ensure_init()
    model = build_model(spec)
    example = mg.zeros(*spec["example_shape"], dtype=mg.float64)
    stage = PipelineStage(model, 0, 1, **{spec["argument"]: example})
    schedule = ScheduleGPipe(stage, spec["n_microbatches"], loss_fn=loss_fn, timeout=10.0)
    x, y = batches(spec)
    try:
        schedule.step(mg.tensor(x[0]), target=mg.tensor(y[0]))
    except RuntimeError as error:
        return str(error)
    return None


def torch_pipeline_gradients(spec):
    """PyTorch's own schedule on one process (gloo, world size 1) with our model's initial weights.

    Returns the gradients after one ``step`` and the per-microbatch losses:
    the oracle for how a step scales gradients and fills ``losses``.
    """
    import torch  # noqa: PLC0415  (the oracle only)
    import torch.distributed as tdist  # noqa: PLC0415
    from torch.distributed import pipelining as tpp  # noqa: PLC0415

    ours = build_model(spec)
    layers = [
        torch.nn.Linear(m.in_features, m.out_features) if isinstance(m, nn.Linear) else torch.nn.Tanh() for m in ours
    ]
    model = torch.nn.Sequential(*layers).double()
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.copy_(torch.from_numpy(dict(ours.named_parameters())[name].detach().numpy()))
    tdist.init_process_group("gloo", store=tdist.HashStore(), rank=0, world_size=1)
    try:
        stage = tpp.PipelineStage(model, 0, 1, device=torch.device("cpu"))
        cls = {"gpipe": tpp.ScheduleGPipe, "1f1b": tpp.Schedule1F1B}[spec["schedule"]]
        schedule = cls(stage, spec["n_microbatches"], loss_fn=torch.nn.functional.cross_entropy)
        x, y = batches(spec)
        losses = []
        schedule.step(torch.from_numpy(x[0]), target=torch.from_numpy(y[0]), losses=losses)
    finally:
        tdist.destroy_process_group()
    return {
        "grads": {n: p.grad.numpy().copy() for n, p in model.named_parameters()},
        "losses": [float(loss.item()) for loss in losses],
    }


def two_pipelines_on_subgroups(spec):
    """Ranks {0, 1} and {2, 3} each run a 2-stage pipeline on their own group (as a pp dimension of a mesh)."""
    rank, world = ensure_init()
    groups = [dist.new_group([0, 1]), dist.new_group([2, 3])]
    group = groups[rank // 2]
    model = build_model(spec)
    modules = split_sequential(model, num_stages=2)
    stage = PipelineStage(modules[rank % 2], rank % 2, 2, group=group)
    schedule = SCHEDULES[spec["schedule"]](stage, spec["n_microbatches"], loss_fn=loss_fn, timeout=60.0)
    names = {id(p): n for n, p in model.named_parameters()}
    x, y = batches(spec)
    schedule.step(mg.tensor(x[0]), target=mg.tensor(y[0]))
    return {names[id(p)]: p.grad.numpy().copy() for p in stage.submod.parameters()}
