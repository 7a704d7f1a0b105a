"""The Reducer: averages gradients across ranks during the backward pass.

The algorithm, in the order the code below follows it:

1. **Buckets.** At construction, parameters are assigned to buckets in
   reverse registration order (the order gradients usually become ready),
   the first bucket capped at 1 MiB and the others at ``bucket_cap_mb``.
   Each bucket owns one flat buffer. One post-accumulate-grad hook is
   registered per parameter.
2. **Prepare (end of each DDP forward).** Every bucket's pending count is
   reset to its number of parameters. With ``find_unused_parameters``, the
   autograd graph is walked from the outputs and the parameters it does not
   reach are remembered as unused.
3. **Hook: a gradient is ready.** When a parameter's ``.grad`` was
   accumulated, its hook copies the gradient, divided by the world size,
   into the parameter's slot of its bucket (a comm hook gets it undivided)
   and decrements the bucket's pending count. With shared memory (step 4)
   the slot is in the staging copy and the gradient goes there undivided;
   usually it is there already, because the Reducer offers each slot to the
   op that computes the gradient (``minigrad.engine.set_grad_destination``). The first hook of
   an iteration also queues the end-of-backward callback (step 6) and marks
   the unused parameters ready (their slots hold zeros).
4. **Launch in bucket order.** A bucket whose count reached zero is ready.
   Ready buckets are launched, strictly in bucket-index order on every rank
   (a bucket waits for all lower-index buckets), as an asynchronous
   allreduce (sum) of the pre-divided buffer, or through the registered comm hook.
   When every rank of the group is on one node (and no comm hook is set),
   the hooks write into a staging copy in MPI shared memory instead, and
   launching a bucket announces it there; the ranks then sum it slice by
   slice straight from each other's memory (``shared_memory.py``), with
   a fraction of ``Allreduce``'s copying.
5. **Progress.** MPI advances a nonblocking collective only inside MPI
   calls, so every hook also tests the in-flight reductions: communication
   moves forward while the backward pass computes (a shared-memory bucket
   is summed by the first hook that finds every rank ready).
6. **Finalize (end of backward).** The ranks agree, with one small
   allreduce on the Reducer's own control communicator, that every bucket
   was launched everywhere (otherwise every rank raises an error naming the
   parameters that got no gradient, instead of hanging) and, with
   ``find_unused_parameters``, which parameters were unused on every rank.
   Then it waits for each bucket's reduction, in order, and writes the
   averaged gradients to ``.grad`` as views of the reduced buffer (globally
   unused parameters keep their ``.grad`` untouched).
7. **Rebuild once.** After the first iteration, buckets are rebuilt in the
   order gradients actually arrived on rank 0 (broadcast, so every rank
   builds the same buckets).
"""

from __future__ import annotations

import functools
import warnings

from minigrad import backend, engine
from minigrad.function import AccumulateGrad
from minigrad.tensor import Tensor
from minigrad_dist.algorithms.ddp_comm_hooks import GradBucket
from minigrad_dist.ddp.bucket import FIRST_BUCKET_CAP_BYTES, Bucket, assign_buckets
from minigrad_dist.ddp.shared_memory import SharedBuckets, shared_memory_comm
from minigrad_dist.debug import DebugLevel, get_debug_level
from minigrad_dist.futures import Future
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
    ):
        self.params = list(params)
        self.names = list(names)
        self.group = process_group
        self.control = ProcessGroup(process_group.comm, process_group.world_ranks)
        self.bucket_cap_bytes = bucket_cap_bytes
        self.first_bucket_cap_bytes = first_bucket_cap_bytes
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.comm_hook = None
        self.comm_hook_state = None
        self.div_factor = process_group.size()
        self.timeout = None
        self.broken = None
        self.shared = None
        self._round = 1  # reduction rounds so far + 1 (shared-memory flags count them)
        on_cpu = all(backend.device_of(p.array) == "cpu" for p in self.params)
        self._shared_comm = shared_memory_comm(process_group.comm, wanted=on_cpu)
        reverse = list(reversed(range(len(self.params))))
        self._build_buckets(reverse)
        self._index_of = {id(p): i for i, p in enumerate(self.params)}
        self._hook_handles = [p.register_post_accumulate_grad_hook(self._on_grad_ready) for p in self.params]
        if self._shared_comm is not None:
            # Step 3 without the copy: ops that can write a gradient straight into the staging copy do.
            self._hook_handles += [engine.set_grad_destination(p, functools.partial(self._grad_destination, i))
                                   for i, p in enumerate(self.params)]
        self._armed = False
        self._iteration_started = False
        self._unused = []
        self._used = None
        self._marked = None
        self._next_bucket = 0
        self._arrival_order = []
        self._needs_rebuild = True
        self._warned_nothing_unused = False
        self.num_iterations = 0
        self.tracer = None  # a trace.Tracer while a timeline is recorded

    # -- step 1: buckets --------------------------------------------------------------

    def _build_buckets(self, order):
        groups = assign_buckets(self.params, order, self.bucket_cap_bytes, self.first_bucket_cap_bytes)
        self.buckets = [Bucket(i, [self.params[j] for j in members], members) for i, members in enumerate(groups)]
        self._location = [None] * len(self.params)
        for bucket in self.buckets:
            for slot, index in enumerate(bucket.param_indices):
                self._location[index] = (bucket, slot)
        if self._shared_comm is not None and self.comm_hook is None:
            if self.shared is not None:
                self.shared.free()
            self.shared = SharedBuckets(self._shared_comm, self.buckets)
            self._round = 1  # fresh flags: every rank rebuilds at the same point, so they agree
            for bucket in self.buckets:
                bucket.staging = self.shared.staging_view(bucket.index)

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
        for bucket in self.buckets:
            bucket.reset()
            if not self.gradient_as_bucket_view and bucket.has_outside_views():
                # Last iteration's .grad still views this buffer: reduce into a fresh one.
                xp = backend.get_array_module(bucket.buffer)
                bucket.buffer = xp.empty_like(bucket.buffer)
        self._next_bucket = 0
        self._marked = [False] * len(self.params)
        self._used = [False] * len(self.params)
        self._unused = self._find_unused(outputs) if self.find_unused_parameters else []
        self._armed = True

    def _find_unused(self, outputs) -> list:
        """Indices of parameters the autograd graph of ``outputs`` does not reach."""
        reached = set()
        seen = set()
        stack = [t.grad_fn if t.grad_fn is not None else t._gradient_edge()[0]
                 for t in _tensors_in(outputs) if t.requires_grad]
        while stack:
            node = stack.pop()
            if node in seen:
                continue
            seen.add(node)
            if type(node) is AccumulateGrad:
                reached.add(id(node.variable))
            for edge in node.next_edges:
                if edge is not None and edge[0] not in seen:
                    stack.append(edge[0])
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
                self._mark_ready(index, has_grad=False)
        index = self._index_of[id(param)]
        if self._marked[index]:
            return  # a second accumulation in the same backward: the bucket already holds it
        if self.tracer is None:
            self._mark_ready(index, has_grad=True)
            self._drive_progress()
            return
        start = self.tracer.now()
        self._mark_ready(index, has_grad=True)
        self._drive_progress()
        self.tracer.span("hooks", f"hook {self.names[index]}", start, self.tracer.now(), param=self.names[index])

    def _mark_ready(self, index, has_grad) -> None:
        bucket, slot = self._location[index]
        view = bucket.view(slot) if bucket.staging is None else self._staging_view(bucket, slot)
        if has_grad:
            grad = self.params[index].grad.array
            if bucket.staging is not None:
                # The shared-memory reduction averages; the op may have written the gradient here already.
                if not _same_memory(grad, view):
                    view[...] = grad
            elif self.comm_hook is None:
                # Average on the way in: one pass instead of a copy plus a division of the bucket.
                bucket.xp.divide(grad, self.div_factor, out=view)
            else:
                view[...] = grad  # comm hooks see the raw sum and average themselves
            self._used[index] = True
        else:
            view[...] = 0
        self._marked[index] = True
        if self._needs_rebuild:
            self._arrival_order.append(index)
        bucket.pending -= 1
        if bucket.pending == 0:
            if self.tracer is not None:
                self.tracer.instant("buckets", f"bucket {bucket.index} ready", bucket=bucket.index)
            self._launch_ready_buckets()

    def _grad_destination(self, index):
        """Where parameter ``index``'s gradient may be computed: its slot in the staging copy, or None."""
        if not self._armed or self._marked[index]:
            return None
        bucket, slot = self._location[index]
        if bucket.staging is None:
            return None
        return self._staging_view(bucket, slot)

    def _staging_view(self, bucket, slot):
        if not bucket.staging_writable:
            # The other ranks may still be copying this rank's previous result out of the staging copy.
            self.shared.wait_until_writable(bucket.index, self._round, self.timeout)
            bucket.staging_writable = True
        return bucket.view(slot, bucket.staging)

    # -- step 4: launch in order -----------------------------------------------------------

    def _launch_ready_buckets(self) -> None:
        buckets = self.buckets
        while self._next_bucket < len(buckets) and buckets[self._next_bucket].pending == 0:
            self._launch(buckets[self._next_bucket])
            self._next_bucket += 1

    def _launch(self, bucket) -> None:
        if self.tracer is not None:
            self._launch_traced(bucket)
            return
        if self.comm_hook is not None:
            is_last = bucket.index == len(self.buckets) - 1
            bucket.future = self.comm_hook(self.comm_hook_state, GradBucket(bucket, is_last))
            return
        if bucket.staging is not None:
            if get_debug_level() is not DebugLevel.DETAIL:
                bucket.future = _SharedReduction(self.shared, bucket, self._round, 1.0 / self.div_factor).future
                return
            # Debug mode checks every collective across ranks: reduce this bucket with one.
            bucket.xp.divide(bucket.staging, self.div_factor, out=bucket.buffer)
            self.shared.release_staging(bucket.index, self._round)
        bucket.future = self.group.allreduce(bucket.buffer, ReduceOp.SUM, async_op=True).get_future()

    def _launch_traced(self, bucket) -> None:
        tracer = self.tracer
        self.tracer = None
        start = tracer.now()
        try:
            self._launch(bucket)
        finally:
            self.tracer = tracer
        name = f"allreduce bucket {bucket.index}"
        bucket.future.add_done_callback(
            lambda _: tracer.span("allreduce", name, start, tracer.now(), bucket=bucket.index, bytes=bucket.nbytes)
        )

    # -- step 5: progress ---------------------------------------------------------------------

    def _drive_progress(self) -> None:
        # Shared-memory buckets advance independently, so each gets its turn; MPI completes
        # collectives in order, so after an unfinished one later ones cannot be done either.
        for bucket in self.buckets[: self._next_bucket]:
            if not bucket.future.done() and bucket.staging is None:
                return

    # -- step 6: finalize --------------------------------------------------------------------

    def _finalize_backward(self) -> None:
        self._armed = False
        self._iteration_started = False
        missing = self._missing_params()
        globally_used = self._agree(missing)
        wait_start = self.tracer.now() if self.tracer is not None else None
        for bucket in self.buckets:
            result = bucket.future.wait(self.timeout)
            _copy_result(bucket, result)
        if wait_start is not None:
            self.tracer.span("finalize", "wait for allreduces", wait_start, self.tracer.now())
        self._write_gradients(globally_used)
        self.num_iterations += 1
        self._round += 1
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

    def _write_gradients(self, globally_used) -> None:
        for bucket in self.buckets:
            for slot, index in enumerate(bucket.param_indices):
                if globally_used is not None and not globally_used[index]:
                    continue
                self.params[index].grad = Tensor._make(bucket.view(slot), False, None, 0)

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
                bucket.buffer = backend.get_array_module(bucket.buffer).zeros_like(bucket.buffer)
            else:
                bucket.buffer[...] = 0
            if bucket.staging is not None:
                self._staging_view(bucket, 0)  # waits until the staging copy may be overwritten
                bucket.staging[...] = 0
            bucket.pending = 0
        self._next_bucket = 0
        self._launch_ready_buckets()
        self._marked = [True] * len(self.params)
        self._used = [False] * len(self.params)
        self._agree([])
        for bucket in self.buckets:
            bucket.future.wait(self.timeout)
        self._round += 1
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
        self._round += 1

    # -- control -------------------------------------------------------------------------------

    def _check_usable(self):
        if self.broken is not None:
            raise RuntimeError(
                f"DistributedDataParallel cannot continue: {self.broken}; ranks may now disagree on "
                "pending communication. Recreate the process group and the DDP model."
            )

    def register_comm_hook(self, state, hook) -> None:
        """Use ``hook(state, GradBucket) -> Future`` to reduce buckets (once, before training).

        Raises:
            RuntimeError: a hook is already registered or training already started.
        """
        if self.comm_hook is not None:
            raise RuntimeError("register_comm_hook can only be called once")
        if self.num_iterations > 0:
            raise RuntimeError("register_comm_hook must be called before the first backward pass")
        if not callable(hook):
            raise TypeError(f"hook must be callable, got {type(hook).__name__}")
        self.comm_hook = hook
        self.comm_hook_state = state
        if self.shared is not None:  # comm hooks reduce bucket.buffer themselves
            self.shared.free()
            self.shared = None
            for bucket in self.buckets:
                bucket.staging = None

    def remove_hooks(self) -> None:
        """Unregister the per-parameter hooks (when the DDP wrapper is discarded)."""
        for handle in self._hook_handles:
            handle.remove()
        self._hook_handles = []

    def close(self) -> None:
        """Remove the hooks and free the control communicator (collective: every rank calls it)."""
        self.remove_hooks()
        if self.shared is not None:
            self.shared.free()
            self.shared = None
            for bucket in self.buckets:
                bucket.staging = None
        if self._shared_comm is not None:
            self._shared_comm.Free()
            self._shared_comm = None
        if self.control is not None:
            self.control.destroy()
            self.control = None


class _SharedReduction:
    """The Future of one bucket's shared-memory reduction into ``bucket.buffer``."""

    def __init__(self, shared, bucket, iteration, scale):
        self.shared, self.index, self.iteration, self.out = shared, bucket.index, iteration, bucket.buffer
        self.scale = scale
        shared.mark_ready(self.index, iteration)
        self.future = Future(poll=self._poll, block=self._block)

    def _poll(self) -> None:
        if self.shared.advance(self.index, self.iteration, self.out, self.scale):
            self.future.set_result(self.out)

    def _block(self, timeout) -> None:
        self.shared.wait(self.index, self.iteration, self.out, self.scale, timeout)
        if not self.future.done():
            self.future.set_result(self.out)


def _same_memory(a, b) -> bool:
    """Whether two arrays of one shape view the very same memory (an op wrote the gradient in place)."""
    return a.shape == b.shape and a.__array_interface__["data"][0] == b.__array_interface__["data"][0]


def _copy_result(bucket, result) -> None:
    """Put a reduction's result into the bucket buffer (unless it is the buffer itself)."""
    if isinstance(result, list):
        result = result[0]
    if isinstance(result, Tensor):
        result = result.array
    if result is not bucket.buffer:
        if result.shape != bucket.buffer.shape:
            raise RuntimeError(
                f"comm hook returned a result of shape {tuple(result.shape)} for bucket {bucket.index}, "
                f"expected the bucket's flat shape {tuple(bucket.buffer.shape)}"
            )
        bucket.buffer[...] = result


def _tensors_in(obj):
    """Every Tensor inside nested tuples, lists and dicts."""
    stack = [obj]
    while stack:
        item = stack.pop()
        if isinstance(item, Tensor):
            yield item
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
