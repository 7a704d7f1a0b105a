"""Stepping a ``ZeroRedundancyOptimizer`` during DDP's backward: ZeRO-1 overlapped, and ZeRO-2.

Both are reduction strategies of the Reducer (``ddp/reduction_strategies.py``),
installed by ``minigrad_dist.algorithms.ddp_zero_hook.hook_with_zero_step``.
Per iteration, in order:

1. **Prepare** (end of DDP's forward): the previous iteration must have been
   finished by ``zero.step()``; otherwise the forward raises, because the
   parameters may still be waiting for their all-gathers.
2. **Reduce each bucket** as the Reducer launches it (bucket order):
   ZeRO-1 with the user's comm hook (an allreduce: every rank gets the whole
   averaged bucket, and its grad shard is a slice of it, no copy); ZeRO-2
   with one reduce-scatter (sum) of the padded bucket (each rank receives
   only its shard, and averages it). ZeRO-2 allocates the padded bucket per
   iteration, lets ops compute gradients straight into it, and frees each
   parameter's full ``.grad`` once it is in the bucket.
3. **Step as buckets finish.** When bucket i's reduction has completed (its
   Future's callback, which runs when a later gradient hook or the end of
   backward tests it), this rank's shard of bucket i is stepped and its
   parameters all-gathered (asynchronously, on a communicator of its own,
   so the all-gathers never interleave with the reductions). Steps run
   strictly in bucket order on every rank. ``interleaved=True`` steps each
   bucket as soon as it is reduced; otherwise steps wait until the last
   bucket has been launched (PyTorch's ``hook_with_zero_step``).
4. **``zero.step()``** waits for the all-gathers; the parameters are
   complete only then.

The shards are laid out on the buckets DDP had when the hook was
registered; the strategies keep them (``fixed_buckets``: the Reducer does
not rebuild buckets after the first iteration, unlike plain DDP).
"""

from __future__ import annotations

from minigrad import backend
from minigrad.tensor import Tensor
from minigrad_dist import collectives, memory
from minigrad_dist.ddp.reduction_strategies import CommHookStrategy, ReductionStrategy
from minigrad_dist.process_group import ProcessGroup
from minigrad_dist.zero.flat_shard import flat_layout, whole_layout
from minigrad_dist.zero.segment import Segment, reduce_scatter_flat


class OverlapStepper:
    """Runs steps 1, 3 and 4 of the module docstring for one ``ZeroRedundancyOptimizer``.

    Args:
        zero: the optimizer (built with ``overlap_with_ddp=True``).
        reduce_group: the DDP group (ZeRO-2 reduce-scatters on it, in bucket order).
        interleaved: step each bucket as soon as it is reduced (else after the last launch).
        shard_buckets: cut every bucket into N flat shards; False gives each
            bucket whole to one rank (the least loaded so far).

    Attributes:
        held_gradients: ZeRO-2's reduced gradient shards of this iteration,
            held until ``zero.step()`` (counted by ``zero.memory_holdings()``).
    """

    def __init__(self, zero, reduce_group: ProcessGroup, interleaved: bool, shard_buckets: bool):
        self.zero = zero
        self.reduce_group = reduce_group
        self.gather_group = ProcessGroup(zero.process_group.comm, zero.process_group.world_ranks, allow_two_level=False)
        self.interleaved = interleaved
        self.shard_buckets = shard_buckets
        self.segments = []
        self.held_gradients = []
        self.started = False
        self._works = []
        self._ready = {}
        self._next = 0
        self._all_launched = False

    def attach(self, buckets) -> None:
        """Lay the optimizer's shards out on DDP's ``buckets`` (each bucket one segment, members in buffer order)."""
        rank, world = self.zero.process_group.rank(), self.zero.process_group.size()
        loads = [0] * world
        segments = []
        for bucket in buckets:
            numels = [p.array.size for p in bucket.params]
            if self.shard_buckets:
                layout = flat_layout(numels, world)
            else:
                owner = min(range(world), key=lambda r: loads[r])
                loads[owner] += sum(numels)
                layout = whole_layout(numels, world, owner)
            segments.append(Segment(bucket.params, layout, rank))
        self.segments = segments
        self.zero._attach_segments(segments)

    # -- step 1 -------------------------------------------------------------------------------

    def begin_backward(self) -> None:
        """A backward is coming: the previous update must be finished.

        Raises:
            RuntimeError: ``zero.step()`` was not called after the previous backward.
        """
        if self.started:
            raise RuntimeError(
                "ZeroRedundancyOptimizer(overlap_with_ddp=True): zero.step() was not called after the previous "
                "backward pass. The backward updates the parameters and launches their all-gathers; zero.step() "
                "waits for them and must be called after every backward, before the next forward"
            )
        self.started = True
        self._ready = {}
        self._next = 0
        self._all_launched = False

    # -- steps 2 and 3 -----------------------------------------------------------------------

    def check_in_backward(self) -> None:
        """Raise unless a backward prepared by DDP's forward is running (``ddp.join()`` shadows without one).

        Raises:
            RuntimeError: a bucket is being reduced outside such a backward.
        """
        if not self.started:
            raise RuntimeError(
                "ZeroRedundancyOptimizer hooks: a bucket was reduced outside a backward pass of the DDP model "
                "(ddp.join() or Reducer.reduce_all_buckets); these are not supported with hook_with_zero_step"
            )

    def reduce_scatter(self, index: int, flat, is_last: bool, divide_by: int = 1):
        """ZeRO-2: reduce-scatter (sum) bucket ``index``'s padded ``flat``; a Future of its shard / ``divide_by``.

        Raises:
            RuntimeError: not inside a backward of the DDP model (``check_in_backward``).
        """
        self.check_in_backward()
        segment = self.segments[index]
        with backend.device_context(segment.device):
            shard = segment.xp.empty(segment.layout.shard_numel, dtype=segment.dtype)
        memory.track("gradients", shard)
        work = reduce_scatter_flat(self.reduce_group, flat, shard)

        def reduced(_):
            if divide_by != 1:  # the average, on this rank's 1/N of the elements only
                segment.xp.divide(shard, divide_by, out=shard)
            self.held_gradients.append(shard)
            self.reduced(index, lambda seg: seg.grads_from_shard(shard))
            return shard

        future = work.get_future().then(reduced)
        if is_last:
            self.last_launched()
        return future

    def reduced(self, index: int, set_grads) -> None:
        """Bucket ``index`` is reduced; ``set_grads(segment)`` points the pieces' gradients at the result."""
        self._ready[index] = set_grads
        self._drain()

    def last_launched(self) -> None:
        """The last bucket of the iteration was launched: non-interleaved steps may start."""
        self._all_launched = True
        self._drain()

    def _drain(self) -> None:
        if not (self.interleaved or self._all_launched):
            return
        while self._next in self._ready:
            segment = self.segments[self._next]
            self.zero._step_segment(segment, self._ready.pop(self._next))
            self._works.append(segment.gather(self.gather_group, async_op=True))
            self._next += 1

    # -- step 4 --------------------------------------------------------------------------------

    def finish_step(self) -> None:
        """``zero.step()``: wait for every all-gather of this iteration.

        Raises:
            RuntimeError: no backward since the last step, or a backward that
                did not reduce every bucket.
        """
        if not self.started:
            raise RuntimeError(
                "ZeroRedundancyOptimizer(overlap_with_ddp=True): step() finishes the update that DDP's backward "
                "started, but no backward pass through the DDP model ran since the last step"
            )
        if self._next != len(self.segments):
            raise RuntimeError(
                f"ZeroRedundancyOptimizer: only {self._next} of {len(self.segments)} buckets were reduced and "
                "stepped in the last backward pass (did it fail?)"
            )
        for work in self._works:
            if work is not None:
                work.wait(collectives._world.timeout)
        self._works = []
        self.held_gradients = []
        self.started = False

    def close(self) -> None:
        """Free the all-gather communicator (collective)."""
        if self.gather_group is not None:
            self.gather_group.destroy()
            self.gather_group = None


class OverlappedStepStrategy(CommHookStrategy):
    """ZeRO-1 overlapped: reduce with a comm hook (the ``ZeroStepHook``), step the shards as buckets finish.

    Args:
        hook: the ``ZeroStepHook`` (it calls the user's hook and chains the step).
        state: the user's hook state.
        div_factor: kept for ``join()`` (not supported with ZeRO).
        stepper: the ``OverlapStepper``.
    """

    fixed_buckets = True

    def __init__(self, hook, state, div_factor: int, stepper: OverlapStepper):
        super().__init__(hook, state, div_factor)
        self.stepper = stepper

    def use_buckets(self, buckets) -> None:
        """Remember the last bucket, and lay the optimizer's shards out on ``buckets``."""
        super().use_buckets(buckets)
        self.stepper.attach(buckets)

    def prepare(self, buckets) -> None:
        """Step 1 of the module docstring."""
        self.stepper.begin_backward()

    def close(self) -> None:
        """Free the stepper's all-gather communicator (collective)."""
        self.stepper.close()


class ShardedGradientStrategy(ReductionStrategy):
    """ZeRO-2: reduce-scatter each padded bucket, step this rank's shard, free the full gradients.

    Each bucket's flat buffer (padded to a multiple of N) is allocated when
    its first gradient arrives, tracked as ``gradient_buckets``
    (``minigrad_dist.memory``), and dropped when its reduce-scatter is
    launched; DDP's persistent bucket buffers are released. The slots hold
    raw gradients, so ops compute them straight into the bucket
    (``computes_in_slot``: no copy for ``Linear``'s); each parameter's
    ``.grad`` is set to None once its gradient is in the slot, and the
    reduced shard is divided by ``div_factor`` (1/N of the elements).

    Args:
        stepper: the ``OverlapStepper`` (its ``shard_buckets`` must be True).
        div_factor: the number of ranks gradients are averaged over.
    """

    fixed_buckets = True
    computes_in_slot = True

    def __init__(self, stepper: OverlapStepper, div_factor: int):
        super().__init__(div_factor)
        self.stepper = stepper
        self._flat = []
        self._last_index = 0

    def use_buckets(self, buckets) -> None:
        """Lay the shards out on ``buckets`` and release DDP's own full-size buffers."""
        self.stepper.attach(buckets)
        self._flat = [None] * len(buckets)
        self._views = [None] * len(buckets)
        self._last_index = len(buckets) - 1
        for bucket in buckets:
            with backend.device_context(bucket.params[0].device):
                bucket.buffer = bucket.xp.empty(0, dtype=bucket.buffer.dtype)

    def prepare(self, buckets) -> None:
        """Step 1 of the module docstring."""
        self.stepper.begin_backward()

    def _padded(self, bucket):
        flat = self._flat[bucket.index]
        if flat is None:
            layout = self.stepper.segments[bucket.index].layout
            with backend.device_context(bucket.params[0].device):
                flat = bucket.xp.empty(layout.world_size * layout.shard_numel, dtype=bucket.buffer.dtype)
            flat[layout.total :] = 0
            self._flat[bucket.index] = memory.track("gradient_buckets", flat)
            # One view object per slot for this iteration: an op that computed into it returns that object.
            self._views[bucket.index] = [bucket.view(p, flat) for p in range(len(bucket.params))]
        return flat

    def slot(self, bucket, position: int):
        """The member's region of this iteration's padded bucket (allocated with the bucket's first gradient)."""
        self._padded(bucket)
        return self._views[bucket.index][position]

    def copy_gradient(self, bucket, position: int, grad) -> None:
        """Copy ``grad`` into its slot (unless the op computed it there), then free the parameter's full ``.grad``."""
        view = self.slot(bucket, position)
        if grad is not view:
            view[...] = grad
        bucket.params[position].grad = None

    def launch(self, bucket):
        """Reduce-scatter the padded bucket; the Future's value is this rank's averaged shard (step 3 chained to it)."""
        flat = self._padded(bucket)
        self._flat[bucket.index] = self._views[bucket.index] = None  # the reduce-scatter holds the bucket until done
        return self.stepper.reduce_scatter(bucket.index, flat, bucket.index == self._last_index, self.div_factor)

    def finish(self, bucket, value, globally_used) -> None:
        """Nothing to write: ``.grad`` stays None, the gradient lives on as this rank's shard until ``zero.step()``."""

    def close(self) -> None:
        """Free the stepper's all-gather communicator (collective)."""
        self.stepper.close()


def flat_value(value):
    """A comm hook Future's value as a flat array (hooks may return an array, a Tensor or a one-item list)."""
    if isinstance(value, list):
        value = value[0]
    return value.array if isinstance(value, Tensor) else value
