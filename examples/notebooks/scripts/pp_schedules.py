"""GPipe and 1F1B on real ranks: the measured bubble, the Gantt charts, and training equal to one process's.

    mpiexec -n 2 python examples/notebooks/scripts/pp_schedules.py OUT_FOLDER

1. **Bubble.** One balanced stage per rank whose compute is a stand-in that
   sleeps (forward 20 ms, backward 40 ms, around a tiny Linear), 4
   microbatches, 4 steps of each schedule; every step's events are gathered
   and ``trace.idle_fractions`` measures each rank's idle share. Sleeping
   makes a stage's time independent of how many cores the machine has and
   who else uses them. Rank 0 writes the last step's trace with
   ``trace.save_trace`` to ``OUT_FOLDER/<schedule>.json`` and ``.png``.
2. **Training.** An MLP 6 -> 8 -> 8 -> 3 (float64) cut into 2 stages with
   ``split_sequential``, 3 steps of SGD with momentum under each schedule
   (8 samples, 4 microbatches, cross-entropy), against the same training in
   one process on the full batch: the largest difference of this rank's
   stage's parameters.

Rank 0 prints one line ``RESULT <json>``::

    {"idle": {schedule: [per step: {rank: idle fraction}]},
     "peak": {schedule: [per rank: {stage: most microbatches live at once}]},
     "pngs": {schedule: path},
     "max_difference": {schedule: [per rank: largest |pipelined - local| parameter]}}
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

import minigrad as mg
import minigrad_dist as dist
from minigrad import nn
from minigrad.nn import functional as F
from minigrad_dist.pipelining import PipelineStage, Schedule1F1B, ScheduleGPipe, split_sequential, trace
from minigrad_dist.testing.models import SleepingLinear

SCHEDULES = {"gpipe": ScheduleGPipe, "1f1b": Schedule1F1B}
N_MICROBATCHES, FORWARD_S, BACKWARD_S, STEPS = 4, 0.02, 0.04, 4
WIDTHS, BATCH, TRAIN_STEPS = (6, 8, 8, 3), 8, 3


def measure_bubble(name, out):
    """Steps of sleeping stages; per step every rank's idle fraction (on rank 0), the peaks, and the trace's PNG."""
    rank, world = dist.get_rank(), dist.get_world_size()
    stage = PipelineStage(SleepingLinear(4, FORWARD_S, BACKWARD_S).double(), rank, world)
    schedule = SCHEDULES[name](stage, N_MICROBATCHES, loss_fn=lambda y, t: (y * y).mean(), timeout=30.0)
    x = mg.zeros(N_MICROBATCHES * 2, 4, dtype=mg.float64)
    idle = []
    for _ in range(STEPS):
        dist.barrier()
        schedule.step(x, target=x)
        gathered = trace.gather_events(schedule)
        if gathered is not None:
            idle.append(trace.idle_fractions(gathered))
    paths = trace.save_trace(schedule, out / f"{name}.json")
    return idle, schedule.peak_live_activations(), None if paths is None else str(paths[1])


def build_model():
    mg.manual_seed(0)
    layers = [nn.Linear(WIDTHS[0], WIDTHS[1]), nn.Tanh(), nn.Linear(WIDTHS[1], WIDTHS[2]), nn.Tanh()]
    return nn.Sequential(*layers, nn.Linear(WIDTHS[2], WIDTHS[3])).double()


def data():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((TRAIN_STEPS, BATCH, WIDTHS[0]))
    y = rng.integers(0, WIDTHS[-1], size=(TRAIN_STEPS, BATCH))
    return x, y


def train_locally():
    """The reference: the whole model in this process, the full batch; its parameters by name after training."""
    model = build_model()
    optimizer = mg.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x, y = data()
    for step in range(TRAIN_STEPS):
        optimizer.zero_grad()
        F.cross_entropy(model(mg.tensor(x[step])), mg.tensor(y[step])).backward()
        optimizer.step()
    return {n: p.detach().numpy() for n, p in model.named_parameters()}


def train_pipelined(name):
    """The same training with this rank's stage under the schedule; its parameters by name (the full model's names)."""
    rank, world = dist.get_rank(), dist.get_world_size()
    model = build_model()
    names = {id(p): n for n, p in model.named_parameters()}
    stage = PipelineStage(split_sequential(model, num_stages=world)[rank], rank, world)
    schedule = SCHEDULES[name](stage, N_MICROBATCHES, loss_fn=F.cross_entropy, timeout=30.0)
    optimizer = mg.optim.SGD(stage.submod.parameters(), lr=0.1, momentum=0.9)
    x, y = data()
    for step in range(TRAIN_STEPS):
        optimizer.zero_grad()
        schedule.step(mg.tensor(x[step]), target=mg.tensor(y[step]))
        optimizer.step()
    return {names[id(p)]: p.detach().numpy() for p in stage.submod.parameters()}


def main():
    out = Path(sys.argv[1])
    dist.init_process_group()
    rank = dist.get_rank()
    group = dist.get_default_group()
    result = {"idle": {}, "peak": {}, "pngs": {}, "max_difference": {}}
    local = train_locally()
    for name in SCHEDULES:
        idle, peak, png = measure_bubble(name, out)
        pipelined = train_pipelined(name)
        difference = max(float(np.abs(p - local[n]).max()) for n, p in pipelined.items())
        peaks, differences = group.gather_obj(peak, 0), group.gather_obj(difference, 0)
        if rank == 0:
            result["idle"][name], result["pngs"][name] = idle, png
            result["peak"][name], result["max_difference"][name] = peaks, differences
    if rank == 0:
        print("RESULT " + json.dumps(result))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
