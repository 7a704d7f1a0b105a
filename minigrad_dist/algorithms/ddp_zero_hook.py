"""DDP comm hooks that step a ``ZeroRedundancyOptimizer`` during the backward pass (ZeRO-1 overlapped, ZeRO-2).

PyTorch's ``torch.distributed.algorithms.ddp_comm_hooks.ddp_zero_hook``:
``hook_with_zero_step(hook, ddp, zero)`` wraps a comm hook so that, once a
bucket's gradients are averaged, this rank's shard of the bucket is stepped
and the updated parameters are all-gathered, overlapping the optimizer
with the rest of the backward. The algorithm is in
``minigrad_dist/zero/overlap.py``; usage::

    zero = ZeroRedundancyOptimizer(ddp.parameters(), mg.optim.Adam, overlap_with_ddp=True, lr=1e-3)
    ddp.register_comm_hook(None, hook_with_zero_step(allreduce_hook, ddp, zero, shard_buckets=True))
    for x, y in batches:
        loss_fn(ddp(x), y).backward()   # averages, steps, launches the all-gathers
        zero.step()                     # waits for them: call it after every backward

``shard_gradients=True`` turns this into ZeRO-2: each bucket is
reduce-scattered instead of allreduced, every rank keeps only its shard of
the averaged gradient, and ``.grad`` is None after backward.

Differences from PyTorch:

* The shards follow DDP's buckets as they are when the hook is registered,
  and DDP keeps those buckets (it does not rebuild them after the first
  iteration), so every iteration updates the parameters; PyTorch skips the
  updates of its first two or three iterations while DDP settles its buckets.
* ``shard_buckets=True`` cuts every bucket into N equal flat shards (each
  rank holds 1/N of the optimizer state); False (PyTorch's default) gives
  each bucket whole to one rank, the least loaded so far.
* If ``zero.step()`` is not called after a backward, the parameters of the
  pending all-gathers keep their old values and the next forward of the DDP
  model raises RuntimeError (it never trains on half-updated parameters).

Limits: every parameter must get a gradient in every backward (the step of
a bucket runs before DDP knows which parameters no rank used, so
``find_unused_parameters=True`` is refused); ``ddp.join()`` and gradient
clipping between backward and step are not possible (the step runs inside
the backward), as in PyTorch.
"""

from __future__ import annotations

from minigrad_dist.algorithms.ddp_comm_hooks import GradBucket, allreduce_hook
from minigrad_dist.zero.optimizer import ZeroRedundancyOptimizer
from minigrad_dist.zero.overlap import OverlappedStepStrategy, OverlapStepper, ShardedGradientStrategy, flat_value


class ZeroStepHook:
    """A comm hook that also steps ``zero`` (what ``hook_with_zero_step`` returns).

    Calling it on a ``GradBucket`` runs the wrapped hook and chains the
    step of this rank's shard of that bucket to its Future.
    ``register_comm_hook`` installs it through ``reduction_strategy``,
    which also lets it hear of the buckets and of each backward
    (``minigrad_dist.ddp.reduction_strategies.strategy_for_hook``).

    Args:
        hook: the comm hook that averages a bucket (ignored with ``shard_gradients``).
        stepper: the ``OverlapStepper`` of the ZeRO optimizer.
        shard_gradients: ZeRO-2 (reduce-scatter instead of ``hook``).
    """

    def __init__(self, hook, stepper: OverlapStepper, shard_gradients: bool):
        self.hook = hook
        self.stepper = stepper
        self.shard_gradients = shard_gradients

    def __call__(self, state, bucket: GradBucket):
        """ZeRO-1: ``hook(state, bucket)``, then step this rank's shard once it completes; ZeRO-2: reduce-scatter.

        Raises:
            RuntimeError: called outside a backward pass of the DDP model (``ddp.join()`` is not supported).
        """
        self.stepper.check_in_backward()
        index = bucket.index()
        if self.shard_gradients:
            segment = self.stepper.segments[index]
            layout = segment.layout
            flat = segment.xp.zeros(layout.world_size * layout.shard_numel, dtype=segment.dtype)
            segment.xp.divide(bucket.buffer().array, layout.world_size, out=flat[: layout.total])
            return self.stepper.reduce_scatter(index, flat, bucket.is_last())

        def step(future):
            value = future.value()
            reduced = flat_value(value)
            self.stepper.reduced(index, lambda segment: segment.grads_from_concatenation(reduced))
            return value

        chained = self.hook(state, bucket).then(step)
        if bucket.is_last():
            self.stepper.last_launched()
        return chained

    def reduction_strategy(self, state, div_factor: int):
        """The Reducer's strategy for this hook (``ddp/reduction_strategies.py``)."""
        if self.shard_gradients:
            return ShardedGradientStrategy(self.stepper, div_factor)
        return OverlappedStepStrategy(self, state, div_factor, self.stepper)


def hook_with_zero_step(hook, ddp, zero: ZeroRedundancyOptimizer, shard_buckets: bool = False,
                        shard_gradients: bool = False) -> ZeroStepHook:
    """Wrap ``hook`` so that ``zero`` steps each bucket's shard during the backward, once the last bucket is launched.

    The optimizer computation starts after the last bucket's gradients have
    been computed and overlaps the outstanding reductions (PyTorch's
    ``hook_with_zero_step``). Register the result with
    ``ddp.register_comm_hook(state, ...)`` and call ``zero.step()`` after every backward.

    Args:
        hook: a comm hook that averages a bucket, e.g. ``allreduce_hook``.
        ddp: the ``DistributedDataParallel`` model.
        zero: a ``ZeroRedundancyOptimizer`` over ``ddp.parameters()`` built with ``overlap_with_ddp=True``.
        shard_buckets: True: every bucket is cut into N flat shards (each
            rank holds 1/N of the optimizer state); False: each bucket goes
            whole to one rank.
        shard_gradients: ZeRO-2: reduce-scatter each bucket instead of
            averaging it with ``hook`` (which must then be ``allreduce_hook``);
            implies ``shard_buckets``. ``.grad`` is None after backward.

    Raises:
        ValueError: ``zero`` was built without ``overlap_with_ddp``, over
            other parameters than ``ddp``'s, on another process group, or
            already attached; ``ddp`` finds unused parameters; ``shard_gradients``
            with a hook other than ``allreduce_hook``.
        TypeError: ``hook`` is not callable.
    """
    return _zero_hook(hook, ddp, zero, shard_buckets, shard_gradients, interleaved=False)


def hook_with_zero_step_interleaved(hook, ddp, zero: ZeroRedundancyOptimizer, shard_buckets: bool = False,
                                    shard_gradients: bool = False) -> ZeroStepHook:
    """Like ``hook_with_zero_step``, but each bucket's shard is stepped as soon as that bucket is reduced.

    The optimizer computation interleaves with the backward computation
    (PyTorch's ``hook_with_zero_step_interleaved``). Same arguments and errors.
    """
    return _zero_hook(hook, ddp, zero, shard_buckets, shard_gradients, interleaved=True)


def _zero_hook(hook, ddp, zero, shard_buckets, shard_gradients, interleaved) -> ZeroStepHook:
    if not callable(hook):
        raise TypeError(f"hook_with_zero_step: hook must be a comm hook, got {type(hook).__name__}")
    if not isinstance(zero, ZeroRedundancyOptimizer) or not zero.overlap_with_ddp:
        raise ValueError("hook_with_zero_step: zero must be a ZeroRedundancyOptimizer built with overlap_with_ddp=True")
    if zero.overlap is not None:
        raise ValueError("hook_with_zero_step: this ZeroRedundancyOptimizer is already attached to a DDP model")
    if shard_gradients and hook is not allreduce_hook:
        raise ValueError("hook_with_zero_step(shard_gradients=True) reduce-scatters each bucket itself, which "
                         f"shards allreduce_hook's averaging only; got {getattr(hook, '__name__', hook)!r}")
    if ddp.find_unused_parameters:
        raise ValueError(
            "hook_with_zero_step: the step of a bucket runs before DDP knows which parameters no rank used, so "
            "it needs every parameter to get a gradient in every backward (find_unused_parameters=False); use "
            "ZeroRedundancyOptimizer without overlap_with_ddp for such models"
        )
    if ddp.process_group.world_ranks != zero.process_group.world_ranks:
        raise ValueError("hook_with_zero_step: zero and ddp must use the same process group (same ranks)")
    ddp_params = {id(p) for p in ddp.reducer.params}
    zero_params = {id(p) for group in zero.param_groups for p in group["params"]}
    if ddp_params != zero_params:
        raise ValueError(
            f"hook_with_zero_step: zero must optimize exactly ddp's parameters that require grad "
            f"({len(ddp_params)}); it has {len(zero_params)}, {len(zero_params - ddp_params)} of them not in ddp"
        )
    stepper = OverlapStepper(zero, ddp.process_group, interleaved, shard_buckets or shard_gradients)
    zero.overlap = stepper
    return ZeroStepHook(hook, stepper, shard_gradients)
