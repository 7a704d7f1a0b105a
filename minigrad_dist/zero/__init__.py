"""ZeRO: the Zero Redundancy Optimizer's stages 1 and 2 (Rajbhandari et al., 2020) on top of DDP.

Data parallelism keeps N identical copies of everything; ZeRO removes the
redundancy stage by stage. With N ranks:

1. **Stage 1, optimizer state (P_os).** Each rank keeps the optimizer state
   of 1/N of the parameters' elements. After the gradients are averaged
   (DDP's allreduce), each rank steps its own shard, then the updated
   shards are all-gathered so every rank holds the full parameters again.
   ``ZeroRedundancyOptimizer(params, optimizer_class, ...)``, standalone
   after DDP's backward, or overlapped with it (``overlap_with_ddp=True``
   and ``hook_with_zero_step``: a bucket's shard is stepped as soon as the
   bucket's allreduce has finished).
2. **Stage 2, gradients too (P_os+g).** Each bucket of gradients is
   reduce-scattered instead of allreduced: each rank receives only the
   average of its own shard of the bucket, steps that shard at once, and
   all-gathers the updated parameters. The full gradients are freed as soon
   as they are copied into a bucket (``.grad`` is None after backward), so
   a rank holds 1/N of the gradients. ``hook_with_zero_step(...,
   shard_gradients=True)``.
3. (Stage 3 shards the parameters as well: that is FSDP, not here.)

**Memory per parameter** (the paper's formula, Psi parameters, K bytes of
optimizer state per parameter): with mixed-precision Adam the paper counts
2 bytes of fp16 parameter, 2 of fp16 gradient and K = 12 of fp32 master
copy, momentum and variance:

=========  ===================  ========================  =======================
           DDP                  stage 1                   stage 2
=========  ===================  ========================  =======================
formula    (2 + 2 + K) Psi      (2 + 2) Psi + K Psi / N   2 Psi + (2 + K) Psi / N
=========  ===================  ========================  =======================

minigrad trains in one precision, so there is no master copy: in float64,
Adam has 8 + 8 + K with K = 16 (two moments; SGD with momentum K = 8):
DDP 32 bytes, stage 1 ``16 + 16/N``, stage 2 ``8 + 24/N`` bytes per
parameter; in float32 halve every number. ``minigrad_dist.memory.memory_report(model, zero)``
measures what a rank holds (``zero.memory_holdings()`` adds the shards).

Example (every rank runs it)::

    ddp = dist.DistributedDataParallel(model)
    zero = ZeroRedundancyOptimizer(ddp.parameters(), mg.optim.Adam, lr=1e-3)   # stage 1
    loss_fn(ddp(x), y).backward(); zero.step(); zero.zero_grad()

    # stage 1 overlapped with the backward, or stage 2:
    from minigrad_dist.algorithms.ddp_comm_hooks import allreduce_hook
    from minigrad_dist.algorithms.ddp_zero_hook import hook_with_zero_step
    zero = ZeroRedundancyOptimizer(ddp.parameters(), mg.optim.Adam, overlap_with_ddp=True, lr=1e-3)
    ddp.register_comm_hook(None, hook_with_zero_step(allreduce_hook, ddp, zero, shard_gradients=True))
    loss_fn(ddp(x), y).backward()   # reduces, steps and launches the all-gathers
    zero.step()                     # waits for the all-gathers: must be called every iteration

Modules: ``flat_shard.py`` (which rank owns which elements), ``segment.py``
(one group or bucket: pieces, gradients, all-gather), ``optimizer.py``
(``ZeroRedundancyOptimizer``), ``overlap.py`` (stepping during DDP's
backward: the reduction strategies of stages 1 and 2).
"""

from minigrad_dist.zero.optimizer import ZeroRedundancyOptimizer

__all__ = ["ZeroRedundancyOptimizer"]
