"""Pipeline parallelism, as ``torch.distributed.pipelining``: stages, microbatches and three schedules.

A model is cut into ``S`` consecutive stages (``split_sequential`` for an
``nn.Sequential``, or any modules you build), stage ``s`` on rank
``s % pp``, each wrapped in a ``PipelineStage``. A schedule cuts the batch
into ``m`` microbatches and moves each through the stages: activations go
forward and gradients backward with nonblocking MPI point-to-point messages
(``schedules.py``). Parameter gradients accumulate over the microbatches
and are divided by ``m``, so with a loss that averages over its microbatch
one ``step`` gives the gradient of the whole batch, as one process would::

    stage = PipelineStage(split_sequential(model, num_stages=pp)[rank], rank, pp)
    schedule = Schedule1F1B(stage, n_microbatches=4, loss_fn=F.cross_entropy)
    optimizer.zero_grad()
    losses = []
    schedule.step(x, target=y, losses=losses)  # x on rank 0, y on rank pp-1
    optimizer.step()

Each schedule is data first: ``schedule.pipeline_order`` lists every
rank's actions (``1F0``: stage 1's forward of microbatch 0; ``0B2``: stage
0's backward of microbatch 2) and ``actions.validate_order`` checks them;
``trace.py`` draws what a step really did and measures the bubble. In the
pictures below (4 ranks, one stage each, 4 microbatches), digits are
forwards and letters backwards (``a`` is microbatch 0's backward, ``b``
microbatch 1's, ...), a backward taking two columns as it costs about two
forwards; dots are the bubble, where a rank waits (``actions.draw`` prints
these from the simulated schedules).

**GPipe** (Huang et al. 2018, ``ScheduleGPipe``):

1. Every stage runs the forwards of microbatches ``0 .. m-1`` as their
   inputs arrive, sending each output on.
2. The last stage computes each microbatch's loss; then every stage runs the
   backwards of ``0 .. m-1`` as their gradients arrive, sending each input
   gradient back.
3. Gradients are summed over the microbatches and divided by ``m``.

::

    rank 0  0123.........aabbccdd
    rank 1  .0123......aabbccdd..
    rank 2  ..0123...aabbccdd....
    rank 3  ...0123aabbccdd......

Every stage holds all ``m`` microbatches' activations at the turn. With
forward time ``f`` and backward ``b`` the step takes ``(m + p - 1)(f + b)``
of which each rank computes ``m (f + b)``: the bubble (idle fraction) is
``(p - 1) / (m + p - 1)``.

**1F1B** (PipeDream-Flush; Narayanan et al., SC 2021, ``Schedule1F1B``):

1. Warm-up: stage ``s`` runs ``p - s - 1`` forwards.
2. Steady state: it alternates one forward and one backward (the oldest
   microbatch whose gradient came back), so a microbatch's activations are
   freed as soon as possible.
3. Cool-down: the remaining backwards; then gradients are divided by ``m``.

::

    rank 0  0123......aa.bb.cc.dd
    rank 1  .012....aa3bb.cc.dd..
    rank 2  ..01..aa2bb3cc.dd....
    rank 3  ...0aa1bb2cc3dd......

The bubble is GPipe's, ``(p - 1)/(m + p - 1)``, but stage ``s`` holds at
most ``p - s`` microbatches' activations (never more than ``p``) instead of ``m``.

**Interleaved 1F1B** (Narayanan et al., SC 2021, ``ScheduleInterleaved1F1B``):

1. Cut the model into ``v * p`` stages; rank ``r`` holds stages
   ``r, r + p, ..., r + (v-1) p`` ("virtual stages"), so a microbatch
   crosses every rank ``v`` times.
2. Each rank runs groups of ``p`` microbatches through its first stage, then
   the same group through its second stage, and so on (needs ``m`` a
   multiple of ``p``), backwards through its stages in reverse.
3. Warm-up of ``2 (p - r - 1) + (v - 1) p`` forwards, then one forward and
   one backward alternate, then the cool-down, as in 1F1B.

::

    p = 2, v = 2, m = 4 (stages 0, 2 on rank 0; 1, 3 on rank 1; F/B of stage.microbatch)
    rank 0  0F0 0F1 2F0 2F1 0F2 2B0 0F3 2B1 2F2 0B0 2F3 0B1 2B2 2B3 0B2 0B3
    rank 1  1F0 1F1 3F0 3B0 3F1 3B1 1F2 1B0 1F3 1B1 3F2 3B2 3F3 3B3 1B2 1B3

Each stage does ``1/v`` of a rank's work, so the bubble's time shrinks by
a factor ``v`` (from ``(p - 1)/m`` of the ideal step time to ``(p - 1)/(v m)``),
for ``v`` times as many messages.
**Data parallel replicas** (pipeline x data parallelism, as
``torch.distributed.pipelining`` with DDP): ``dp`` copies of the pipeline
each train on their own rows of the batch. Lay the ranks out as a device
mesh, wrap each stage's module in ``DistributedDataParallel`` over the
mesh's ``"dp"`` group and run the stages over its ``"pp"`` group
(a ``"tp"`` dimension may split each stage's layers further,
``minigrad_dist.tensor_parallel``)::

    mesh = init_device_mesh("cpu", (dp, pp, tp), mesh_dim_names=("dp", "pp", "tp"))
    ddp = DistributedDataParallel(stage_module, process_group=mesh["dp"].get_group())
    stage = PipelineStage(ddp, stage_index, num_stages, group=mesh["pp"].get_group())

1. Every forward of a microbatch runs under DDP's ``no_sync``: no backward
   communicates, ``.grad`` accumulates over the microbatches.
2. The stage's last backward of the step arms DDP's Reducer for that
   microbatch's outputs just before it runs (``prepare_for_backward``); the
   Reducer averages the accumulated gradients over the replicas, bucket by
   bucket, overlapped with that backward: once per step and stage.
3. The schedule divides by ``m`` afterwards; averaging and dividing commute,
   so every replica holds the gradient of the whole batch of all replicas.
"""

from __future__ import annotations

from minigrad_dist.pipelining import actions as actions  # the schedules as data (a submodule)
from minigrad_dist.pipelining.actions import Action, ScheduleError, pipeline_order, validate_order
from minigrad_dist.pipelining.schedules import (
    PipelineScheduleMulti,
    PipelineScheduleSingle,
    Schedule1F1B,
    ScheduleGPipe,
    ScheduleInterleaved1F1B,
)
from minigrad_dist.pipelining.split import split_sequential
from minigrad_dist.pipelining.stage import PipelineStage

__all__ = [
    "Action",
    "PipelineScheduleMulti",
    "PipelineScheduleSingle",
    "PipelineStage",
    "Schedule1F1B",
    "ScheduleError",
    "ScheduleGPipe",
    "ScheduleInterleaved1F1B",
    "pipeline_order",
    "split_sequential",
    "validate_order",
]
