"""The Reducer: averages gradients across ranks during the backward pass.

The algorithm, in the order the code below follows it:

1. **Buckets.** At construction, parameters are assigned to buckets in
   reverse registration order (the order gradients usually become ready),
   the first bucket capped at 1 MiB and the others at ``bucket_cap_mb``.
   Each bucket owns one flat buffer. One post-accumulate-grad hook is
   registered per parameter.
2. **Prepare (end of each DDP forward).** The strategy hears that a
   backward is coming (``strategy.prepare``) and every bucket's pending
   count is reset to its number of parameters. With ``find_unused_parameters``, the
   autograd graph is walked from the outputs and the parameters it does not
   reach are remembered as unused.
3. **Hook: a gradient is ready.** When a parameter's ``.grad`` was
   accumulated, its hook copies the gradient into the parameter's slot of
   its bucket and decrements the bucket's pending count. The strategy of
   step 4 owns the slots: with ``Iallreduce`` the gradient is divided by
   the world size on the way in; a comm hook gets it undivided; with shared
   memory the slot is in the staging copy and the gradient goes there
   undivided (the reduction averages), and usually it is there already,
   because the Reducer offers each slot to the op that computes the
   gradient (``minigrad.engine.set_grad_destination``). The first hook of
   an iteration also queues the end-of-backward callback (step 6) and marks
   the unused parameters ready (their slots hold zeros, or the ``.grad``
   they accumulated under ``no_sync``).
4. **Launch in bucket order.** A bucket whose count reached zero is ready.
   Ready buckets are launched, strictly in bucket-index order on every rank
   (a bucket waits for all lower-index buckets). *How* a bucket is reduced
   is the reduction strategy's business (``reduction_strategies.py``),
   chosen in the constructor and replaced only by ``use_strategy`` (which
   ``register_comm_hook`` calls): an asynchronous allreduce (sum) of the
   pre-divided buffer (``IallreduceStrategy``); when every rank of the group
   is on one node, a sum straight from each other's memory
   (``SharedMemoryStrategy``, ``shared_memory.py``), with a fraction of
   ``Allreduce``'s copying; when the ranks span nodes, that sum inside each
   node and an allreduce of each slice across nodes (``HierarchicalStrategy``);
   or the registered comm hook (``CommHookStrategy``).
5. **Progress.** MPI advances a nonblocking collective only inside MPI
   calls, so every hook also tests the in-flight reductions: communication
   moves forward while the backward pass computes (a shared-memory bucket
   is summed by the first hook that finds every rank ready).
6. **Finalize (end of backward).** The ranks agree, with one small
   allreduce on the Reducer's own control communicator, that every bucket
   was launched everywhere (otherwise every rank raises an error naming the
   parameters that got no gradient, instead of hanging) and, with
   ``find_unused_parameters``, which parameters were unused on every rank.
   Then it waits for each bucket's reduction, in order, and hands each
   result to the strategy (``strategy.finish``), which by default copies it
   into the bucket's buffer and makes the averaged gradients ``.grad``
   views of it (globally unused parameters keep their ``.grad`` untouched);
   ZeRO's gradient sharding instead leaves ``.grad`` None.
7. **Rebuild once.** After the first iteration, buckets are rebuilt in the
   order gradients actually arrived on rank 0 (broadcast, so every rank
   builds the same buckets), unless the strategy laid out state on the
   buckets it was given (``strategy.fixed_buckets``: ZeRO's shards).

An observer (``observer.py``; ``trace.Tracer`` records a timeline) hears
of each gradient, ready bucket, launch and the final wait; by default it
is one that ignores them all.
"""

from __future__ import annotations

import functools
import warnings

from minigrad import backend, engine
from minigrad.function import AccumulateGrad
from minigrad.graph import walk
from minigrad.tensor import Tensor
from minigrad_dist.ddp.bucket import FIRST_BUCKET_CAP_BYTES, Bucket, assign_buckets
from minigrad_dist.ddp.observer import ReducerObserver
from minigrad_dist.ddp.reduction_strategies import SharedMemoryStrategy, choose_strategy, strategy_for_hook
from minigrad_dist.ddp.trace import Tracer
from minigrad_dist.process_group import ProcessGroup, ReduceOp


class Reducer:
    """Bucketed, overlapped gradient averaging for DistributedDataParallel.

    Args:
        params: the parameters to synchronize (registration order).
        names: their qualified names (for error messages).
        process_group: the group to average over.
        bucket_cap_bytes: cap of every bucket but the first.
        find_unused_parameters: expect parameters without gradients (step 2).
        gradient_as_bucket_view: keep ``.grad`` as views into one persistent
            bucket buffer (saves memory); otherwise a bucket's buffer is reused
            only once nothing outside the Reducer views it any more (the usual
            ``zero_grad()`` drops the views), so an earlier ``.grad`` that is
            still held is never overwritten.
        first_bucket_cap_bytes: cap of the first bucket.
        timeout: seconds any wait for the other ranks may take before raising
            TimeoutError (None: wait forever).
        observer: told of the algorithm's events (a ``trace.Tracer`` records a
            timeline); None: a ``ReducerObserver``, which ignores them.

    Attributes:
        strategy: how a bucket is reduced (``reduction_strategies.py``), chosen
            in the constructor; ``use_strategy`` replaces it.
        observer: the ``ReducerObserver`` told of each step.
        buckets: the ``Bucket`` list, in launch order.

    Construction is collective over ``process_group`` (it picks the reduction
    strategy and may allocate a shared-memory window).
    """

    def __init__(
        self,
        params,
        names,
        process_group: ProcessGroup,
        bucket_cap_bytes: int,
        find_unused_parameters: bool = False,
        gradient_as_bucket_view: bool = False,
        first_bucket_cap_bytes: int = FIRST_BUCKET_CAP_BYTES,
        timeout: float | None = None,
        observer: ReducerObserver | None = None,
    ):
        self.params = list(params)
        self.names = list(names)
        self.group = process_group
        self.control = ProcessGroup(process_group.comm, process_group.world_ranks, allow_two_level=False)
        self.bucket_cap_bytes = bucket_cap_bytes
        self.first_bucket_cap_bytes = first_bucket_cap_bytes
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.timeout = timeout
        self.observer = observer if observer is not None else ReducerObserver()
        self.comm_hook = None
        self.comm_hook_state = None
        self.broken = None
        self.strategy = None
        self._destination_handles = []
        self._needs_rebuild = True
        self.num_iterations = 0
        self._build_buckets(list(reversed(range(len(self.params)))))
        self.use_strategy(choose_strategy(process_group, self.params, timeout))
        self._index_of = {id(p): i for i, p in enumerate(self.params)}
        # Steps 3-5 for one gradient; the observer may wrap them once, here, instead of being asked per gradient.
        self._take_gradient = self.observer.wrap_gradient_work(self._mark_ready, self.names)
        self._hook_handles = [p.register_post_accumulate_grad_hook(self._on_grad_ready) for p in self.params]
        self._armed = False
        self._iteration_started = False
        self._unused = []
        self._used = None
        self._marked = None
        self._next_bucket = 0
        self._arrival_order = []
        self._warned_nothing_unused = False

    @property
    def div_factor(self) -> int:
        """The number of ranks gradients are averaged over (``join()`` may lower it for a while)."""
        return self.strategy.div_factor

    @div_factor.setter
    def div_factor(self, value: int) -> None:
        self.strategy.div_factor = value

    @property
    def shared(self):
        """The shared-memory window (``SharedBuckets``) when buckets are reduced through it, else None."""
        return self.strategy.shared if isinstance(self.strategy, SharedMemoryStrategy) else None

    @property
    def tracer(self):
        """The observer when it records a timeline (a ``trace.Tracer``), else None."""
        return self.observer if isinstance(self.observer, Tracer) else None

    # -- step 1: buckets --------------------------------------------------------------

    def _build_buckets(self, order):
        groups = assign_buckets(self.params, order, self.bucket_cap_bytes, self.first_bucket_cap_bytes)
        self.buckets = [Bucket(i, [self.params[j] for j in members], members) for i, members in enumerate(groups)]
        self._location = [None] * len(self.params)
        for bucket in self.buckets:
            for slot, index in enumerate(bucket.param_indices):
                self._location[index] = (bucket, slot)

    def bucket_order(self) -> list:
        """The parameter indices of each bucket (for inspection and tests)."""
        return [list(b.param_indices) for b in self.buckets]

    # -- step 2: prepare ----------------------------------------------------------------

    def prepare_for_backward(self, outputs) -> None:
        """Arm the hooks for the backward of ``outputs`` (called at the end of DDP's forward).

        Raises:
            RuntimeError: the previous backward started reducing but did not
                finish, or an earlier error left the Reducer unusable.
        """
        self._check_usable()
        if self._iteration_started:
            raise RuntimeError(
                "DistributedDataParallel: the previous backward pass started reducing gradients but "
                "never finished; " + self._missing_message(self._missing_params())
            )
        self.strategy.prepare(self.buckets)
        for bucket in self.buckets:
            bucket.reset()
            if not self.gradient_as_bucket_view and bucket.has_outside_views():
                # Last iteration's .grad still views this buffer: reduce into a fresh one.
                bucket.replace_buffer()
        self._next_bucket = 0
        self._marked = [False] * len(self.params)
        self._used = [False] * len(self.params)
        self._unused = self._find_unused(outputs) if self.find_unused_parameters else []
        self._armed = True

    def _find_unused(self, outputs) -> list:
        """Indices of parameters the autograd graph of ``outputs`` does not reach."""
        roots = [t.grad_fn if t.grad_fn is not None else t._gradient_edge()[0]
                 for t in tensors_in(outputs) if t.requires_grad]
        reached = {id(node.variable) for node in walk(roots) if type(node) is AccumulateGrad}
        unused = [i for i, p in enumerate(self.params) if id(p) not in reached]
        if not unused and not self._warned_nothing_unused:
            self._warned_nothing_unused = True
            warnings.warn(
                "find_unused_parameters=True was passed to DistributedDataParallel, but every parameter "
                "took part in this forward pass; the flag costs a graph traversal per iteration, so drop "
                "it if your model always uses all parameters",
                stacklevel=4,
            )
        return unused

    # -- step 3: a gradient is ready -------------------------------------------------------

    def _on_grad_ready(self, param) -> None:
        if not self._armed:
            return
        if not self._iteration_started:
            self._iteration_started = True
            engine.queue_callback(self._finalize_backward)
            for index in self._unused:
                # Unused in this backward, but a .grad accumulated under no_sync is still this rank's
                # gradient: reduce it (as PyTorch does), else the slot holds zeros.
                self._mark_ready(index, has_grad=self.params[index].grad is not None)
        index = self._index_of[id(param)]
        if self._marked[index]:
            return  # a second accumulation in the same backward: the bucket already holds it
        self._take_gradient(index)

    def _mark_ready(self, index, has_grad=True) -> None:
        bucket, slot = self._location[index]
        if has_grad:
            self.strategy.copy_gradient(bucket, slot, self.params[index].grad.array)
            self._used[index] = True
        else:
            self.strategy.slot(bucket, slot)[...] = 0
        self._marked[index] = True
        if self._needs_rebuild:
            self._arrival_order.append(index)
        bucket.pending -= 1
        if bucket.pending == 0:
            self.observer.bucket_ready(bucket)
            self._launch_ready_buckets()
        # Step 5, progress: MPI advances a nonblocking collective only inside MPI calls.
        self.strategy.progress(self.buckets[: self._next_bucket])

    def _grad_destination(self, index):
        """Where parameter ``index``'s gradient may be computed: its slot (not yet filled), or None."""
        if not self._armed or self._marked[index]:
            return None
        bucket, slot = self._location[index]
        return self.strategy.slot(bucket, slot)

    # -- step 4: launch in order -----------------------------------------------------------

    def _launch_ready_buckets(self) -> None:
        buckets = self.buckets
        while self._next_bucket < len(buckets) and buckets[self._next_bucket].pending == 0:
            bucket = buckets[self._next_bucket]
            self.observer.launching(bucket)
            bucket.future = self.strategy.launch(bucket)
            self.observer.launched(bucket)
            self._next_bucket += 1

    # -- step 6: finalize --------------------------------------------------------------------

    def _finalize_backward(self) -> None:
        self._armed = False
        self._iteration_started = False
        missing = self._missing_params()
        globally_used = self._agree(missing)
        self.observer.waiting()
        results = [bucket.future.wait(self.timeout) for bucket in self.buckets]
        self.observer.waited()
        for bucket, result in zip(self.buckets, results):
            self.strategy.finish(bucket, result, globally_used)
        self.num_iterations += 1
        if self._needs_rebuild:
            self._rebuild_buckets()

    def _missing_params(self) -> list:
        return [i for i, marked in enumerate(self._marked or []) if not marked]

    def _agree(self, missing):
        """One control allreduce: did every rank launch every bucket, and who used what?"""
        xp_np = backend.module_for_device("cpu")
        vector = xp_np.zeros(1 + (len(self.params) if self.find_unused_parameters else 0), dtype=xp_np.int64)
        vector[0] = 1 if missing else 0
        if self.find_unused_parameters:
            vector[1:] = self._used
        work = self.control.allreduce(vector, ReduceOp.SUM, async_op=True)
        work.wait(self.timeout)
        if vector[0] > 0:
            self.broken = "an earlier backward pass failed to reduce gradients on some rank"
            if missing:
                raise RuntimeError("DistributedDataParallel: " + self._missing_message(missing))
            raise RuntimeError(
                f"DistributedDataParallel: {int(vector[0])} other rank(s) got no gradient for some "
                "parameters in this backward, so the gradients could not be averaged (see the error on "
                "those ranks). Pass find_unused_parameters=True if parts of the model can be unused."
            )
        if self.find_unused_parameters:
            return [count > 0 for count in vector[1:]]
        return None

    def _missing_message(self, missing) -> str:
        names = [self.names[i] for i in missing]
        shown = ", ".join(names[:10]) + (f" and {len(names) - 10} more" if len(names) > 10 else "")
        return (
            f"on rank {self.group.rank()} these parameters received no gradient: {shown}. "
            "Their buckets could not be reduced. If parts of your model do not take part in the loss "
            "(for some inputs), pass find_unused_parameters=True to DistributedDataParallel; otherwise "
            "make sure every forward output is used to compute the loss."
        )

    # -- step 7: rebuild ------------------------------------------------------------------------

    def _rebuild_buckets(self) -> None:
        self._needs_rebuild = False
        order = self.control.bcast_obj(self._arrival_order, 0)
        self._arrival_order = []
        if sorted(order) != list(range(len(self.params))):
            return  # rank 0 saw an incomplete order: keep the current buckets
        if [i for b in self.bucket_order() for i in b] == order:
            return
        self._build_buckets(order)
        self.strategy.use_buckets(self.buckets)

    # -- join: shadowing the collectives of ranks that still train -----------------------------

    def shadow_backward(self) -> None:
        """Take part in one backward's collectives with zero gradients (a joined rank).

        Issues exactly what ``prepare_for_backward`` + hooks + finalize issue on
        a training rank: every bucket's reduction in order, the agreement
        allreduce, and the one-time bucket rebuild. Leaves ``.grad`` untouched.
        """
        self._check_usable()
        for bucket in self.buckets:
            bucket.reset()
            if not self.gradient_as_bucket_view:
                bucket.replace_buffer()
            for slot in range(len(bucket.params)):
                self.strategy.slot(bucket, slot)[...] = 0  # this rank contributes zeros
            bucket.pending = 0
        self._next_bucket = 0
        self._launch_ready_buckets()
        self._marked = [True] * len(self.params)
        self._used = [False] * len(self.params)
        self._agree([])
        for bucket in self.buckets:
            bucket.future.wait(self.timeout)
        if self._needs_rebuild:
            self._rebuild_buckets()

    def reduce_all_buckets(self) -> None:
        """Reduce every bucket once, as a backward pass would, whatever the buckets hold (benchmarks)."""
        self._check_usable()
        for bucket in self.buckets:
            bucket.reset()
            bucket.pending = 0
        self._next_bucket = 0
        self._launch_ready_buckets()
        for bucket in self.buckets:
            bucket.future.wait(self.timeout)

    # -- control -------------------------------------------------------------------------------

    def _check_usable(self):
        if self.broken is not None:
            raise RuntimeError(
                f"DistributedDataParallel cannot continue: {self.broken}; ranks may now disagree on "
                "pending communication. Recreate the process group and the DDP model."
            )

    def register_comm_hook(self, state, hook) -> None:
        """Use ``hook(state, GradBucket) -> Future`` to reduce buckets (once, before training).

        Collective: replaces the reduction strategy on every rank (a
        shared-memory window is freed). The hook gets the raw gradient sums and
        must average them itself.

        Raises:
            RuntimeError: a hook is already registered or training already started.
            TypeError: ``hook`` is not callable.
        """
        if self.comm_hook is not None:
            raise RuntimeError("register_comm_hook can only be called once")
        if self.num_iterations > 0:
            raise RuntimeError("register_comm_hook must be called before the first backward pass")
        if not callable(hook):
            raise TypeError(f"hook must be callable, got {type(hook).__name__}")
        self.comm_hook = hook
        self.comm_hook_state = state
        self.use_strategy(strategy_for_hook(hook, state, self.strategy.div_factor))

    def use_strategy(self, strategy) -> None:
        """Reduce buckets with ``strategy`` (a ``ReductionStrategy``) from now on; before the first backward.

        The one way a strategy is installed: the constructor (with
        ``choose_strategy``'s) and ``register_comm_hook`` call it. Collective
        where the old strategy frees communicators or windows. A strategy
        with ``fixed_buckets`` turns step 7 (the rebuild) off.

        Raises:
            RuntimeError: training already started.
        """
        if self.num_iterations > 0:
            raise RuntimeError("the reduction strategy must be chosen before the first backward pass")
        self._remove_destinations()
        if self.strategy is not None:
            self.strategy.close()
        self.strategy = strategy
        strategy.use_buckets(self.buckets)
        self._needs_rebuild = self._needs_rebuild and not strategy.fixed_buckets
        if strategy.computes_in_slot:
            # Step 3 without the copy: ops that can write a gradient straight into its slot do.
            self._destination_handles = [engine.set_grad_destination(p, functools.partial(self._grad_destination, i))
                                         for i, p in enumerate(self.params)]

    def remove_hooks(self) -> None:
        """Unregister the per-parameter hooks (when the DDP wrapper is discarded)."""
        for handle in self._hook_handles:
            handle.remove()
        self._hook_handles = []
        self._remove_destinations()

    def _remove_destinations(self) -> None:
        for handle in self._destination_handles:
            handle.remove()
        self._destination_handles = []

    def close(self) -> None:
        """Remove the hooks and free the strategy's and the control communicators (collective: every rank calls it)."""
        self.remove_hooks()
        if self.strategy is not None:
            self.strategy.close()
        if self.control is not None:
            self.control.destroy()
            self.control = None


def tensors_in(obj):
    """Every Tensor inside nested tuples, lists and dicts (a forward's outputs; FSDP uses it too)."""
    stack = [obj]
    while stack:
        item = stack.pop()
        if isinstance(item, Tensor):
            yield item
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
