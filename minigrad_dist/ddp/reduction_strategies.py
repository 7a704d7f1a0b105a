"""How a ready bucket is reduced across ranks: one small class per way, chosen once by the Reducer.

The Reducer (``reducer.py``) runs the same algorithm whatever the strategy:
it puts each gradient into its bucket, launches ready buckets in bucket
order, keeps the in-flight reductions moving, and at the end of backward
waits for each launched bucket's Future and hands its value to the
strategy. A strategy answers the questions that differ:

* ``prepare(buckets)``: a backward pass is about to start;
* ``slot(bucket, position)``: where a member's gradient goes;
* ``copy_gradient(bucket, position, grad)``: how it gets there (averaged on
  the way in, or raw);
* ``launch(bucket) -> Future``: how the bucket is reduced; the Future's value
  is the averaged flat buffer;
* ``progress(launched)``: how in-flight reductions are moved forward;
* ``finish(bucket, value, globally_used)``: what becomes of a reduced
  bucket; by default its value is copied into ``bucket.buffer`` and each
  member's ``.grad`` becomes a view of it;
* ``use_buckets(buckets)`` when the buckets are (re)built (never rebuilt
  under a strategy with ``fixed_buckets``), ``close()`` at the end.

The strategies:

=========================  ==============================================================
``IallreduceStrategy``     one nonblocking MPI allreduce (sum) of the pre-divided buffer
``SharedMemoryStrategy``   every rank on one node: sums straight from each other's memory
``HierarchicalStrategy``   ranks on several nodes: the same inside each node, and each
                           rank allreduces its slice with its peers on the other nodes
``CommHookStrategy``       a user's ``hook(state, GradBucket) -> Future`` (``register_comm_hook``)
=========================  ==============================================================

``choose_strategy`` picks among the first three when the Reducer is built;
``register_comm_hook`` replaces it with the last, or with the strategy a
hook brings along (``strategy_for_hook``: ZeRO's hooks in
``minigrad_dist.algorithms.ddp_zero_hook`` step the optimizer as buckets
finish, and shard the gradients with a reduce-scatter).
"""

from __future__ import annotations

from minigrad import backend
from minigrad.tensor import Tensor
from minigrad_dist.algorithms.ddp_comm_hooks import GradBucket
from minigrad_dist.ddp.shared_memory import SharedBuckets, node_hierarchy, shared_memory_enabled
from minigrad_dist.debug import DebugLevel, get_debug_level
from minigrad_dist.futures import Future
from minigrad_dist.process_group import ProcessGroup, ReduceOp
from minigrad_dist.topology import Hierarchy, hierarchical_setting


class ReductionStrategy:
    """Base class: how the Reducer reduces one bucket (see the module docstring).

    Attributes:
        div_factor: the number of ranks gradients are averaged over (the
            group's size; ``join()`` may lower it to the ranks still training).
        computes_in_slot: whether an op may compute a gradient straight into
            ``slot(...)`` (through ``minigrad.engine.set_grad_destination``):
            True only where the slot holds the raw, undivided gradient.
        fixed_buckets: the strategy lays state out on the buckets it is
            given, so the Reducer must not rebuild them after the first iteration.
    """

    computes_in_slot = False
    fixed_buckets = False

    def __init__(self, div_factor: int):
        self.div_factor = div_factor

    def use_buckets(self, buckets) -> None:
        """The Reducer built (or rebuilt) its buckets: ``buckets``, in launch order."""

    def prepare(self, buckets) -> None:
        """A backward pass is about to start (step 2, at the end of DDP's forward)."""

    def slot(self, bucket, position: int):
        """Where the gradient of ``bucket``'s member ``position`` goes: an array shaped like that parameter."""
        return bucket.view(position)

    def copy_gradient(self, bucket, position: int, grad) -> None:
        """Put ``grad`` (an array shaped like member ``position``) into its slot."""
        raise NotImplementedError

    def launch(self, bucket) -> Future:
        """Start reducing ``bucket`` (all its slots are filled); the Future's value is the averaged flat buffer."""
        raise NotImplementedError

    def progress(self, launched) -> None:
        """Test the reductions of ``launched`` (the buckets launched so far, in order).

        MPI moves a nonblocking collective forward only inside MPI calls, and
        completes collectives in order, so testing stops at the first
        unfinished one.
        """
        for bucket in launched:
            if not bucket.future.done():
                return

    def finish(self, bucket, value, globally_used) -> None:
        """Step 6 for one reduced bucket: ``value`` (its Future's) into ``bucket.buffer``, then ``.grad`` views.

        Args:
            bucket: the reduced bucket.
            value: its Future's value: the averaged flat buffer (an array, a
                Tensor, or a one-element list of either).
            globally_used: per parameter index, whether some rank used it
                (None without ``find_unused_parameters``); unused ones keep their ``.grad``.

        Raises:
            RuntimeError: a comm hook returned a result that is not shaped like the bucket.
        """
        _copy_result(bucket, value)
        for param, index, view in zip(bucket.params, bucket.param_indices, bucket.lend_views()):
            if globally_used is None or globally_used[index]:
                param.grad = Tensor._make(view, False, None, 0)

    def close(self) -> None:
        """Release what the strategy holds (collective where it holds communicators or windows)."""


class IallreduceStrategy(ReductionStrategy):
    """Average a bucket with one nonblocking allreduce (sum) of its buffer, divided on the way in.

    Args:
        group: the process group gradients are averaged over.
    """

    def __init__(self, group: ProcessGroup):
        super().__init__(group.size())
        self.group = group

    def copy_gradient(self, bucket, position: int, grad) -> None:
        """Divide ``grad`` by ``div_factor`` into its slot: one pass instead of a copy, then a division."""
        bucket.xp.divide(grad, self.div_factor, out=bucket.view(position))

    def launch(self, bucket) -> Future:
        """``Iallreduce`` (sum) of ``bucket.buffer`` in place."""
        return self.group.allreduce(bucket.buffer, ReduceOp.SUM, async_op=True).get_future()


class CommHookStrategy(ReductionStrategy):
    """Reduce a bucket with ``hook(state, GradBucket) -> Future``; the hook sees raw sums and averages itself.

    Args:
        hook: the comm hook (see ``minigrad_dist.algorithms.ddp_comm_hooks``).
        state: its first argument (a process group, a PowerSGD state, ...).
        div_factor: kept for ``join()``; the hook decides how it averages.
    """

    def __init__(self, hook, state, div_factor: int):
        super().__init__(div_factor)
        self.hook = hook
        self.state = state
        self._last_index = 0

    def use_buckets(self, buckets) -> None:
        """Remember which bucket is the last (``GradBucket.is_last``)."""
        self._last_index = len(buckets) - 1

    def copy_gradient(self, bucket, position: int, grad) -> None:
        """Copy ``grad`` into its slot unchanged."""
        bucket.view(position)[...] = grad

    def launch(self, bucket) -> Future:
        """Call the hook on the bucket."""
        return self.hook(self.state, GradBucket(bucket, bucket.index == self._last_index))


class SharedMemoryStrategy(ReductionStrategy):
    """Every rank on one node: reduce each bucket straight from the other ranks' memory (``shared_memory.py``).

    Each bucket gets a staging copy in an MPI shared-memory window
    (``bucket.staging``); the slots are there, hold raw gradients (often
    computed right there by the op), and a bucket's reduction sums the
    staging copies slice by slice, averages, and gathers the result into
    ``bucket.buffer``. Flags in the window count each bucket's rounds.

    Args:
        group: the process group gradients are averaged over.
        node_comm: ``shared_memory_comm(group.comm)`` (freed by ``close()``).
        timeout: seconds a wait for the other ranks may take (None: forever).
    """

    computes_in_slot = True

    def __init__(self, group: ProcessGroup, node_comm, timeout: float | None):
        self._start(group, Hierarchy(node_comm, node_comm.Get_size()), timeout)

    def _start(self, group: ProcessGroup, hierarchy: Hierarchy, timeout: float | None) -> None:
        super().__init__(group.size())
        self.group = group
        self.hierarchy = hierarchy
        self.timeout = timeout
        self.shared = None
        self._buckets = []
        self._rounds = []  # per bucket: reductions launched since the window was made
        self._writable = []  # per bucket: every rank has copied the last result out of this rank's staging copy

    @property
    def node_comm(self):
        """The communicator of this node's ranks (None once closed)."""
        return self.hierarchy.node_comm

    def use_buckets(self, buckets) -> None:
        """A fresh window for these buckets (collective: every rank rebuilds at the same point)."""
        if self.shared is not None:
            self.shared.free()
        self.shared = SharedBuckets(self.hierarchy, [bucket.buffer for bucket in buckets])
        self._buckets = list(buckets)
        for bucket in buckets:
            bucket.staging = self.shared.staging_view(bucket.index)
        # One view object per slot, handed out every time: an op that computed a gradient into its slot
        # returns that very object, so copy_gradient tells by identity (an address compare costs ~3 us).
        self._slot_views = [[bucket.view(p, bucket.staging) for p in range(len(bucket.params))] for bucket in buckets]
        self._rounds = [0] * len(buckets)
        self._writable = [False] * len(buckets)

    def slot(self, bucket, position: int):
        """The member's region of this rank's staging copy; first waits until the copy may be overwritten.

        Raises:
            TimeoutError: another rank did not finish the previous reduction within ``timeout``.
        """
        index = bucket.index
        if not self._writable[index]:
            # The other ranks may still be copying this rank's previous result out of the staging copy.
            self.shared.wait_until_writable(index, self._rounds[index] + 1, self.timeout)
            self._writable[index] = True
        return self._slot_views[index][position]

    def copy_gradient(self, bucket, position: int, grad) -> None:
        """Copy ``grad`` into its slot unchanged, unless the op computed it there already (it is the slot's view)."""
        view = self.slot(bucket, position)
        if grad is not view:
            view[...] = grad

    def launch(self, bucket) -> Future:
        """Announce the staging copy ready; the Future advances the shared-memory reduction when tested.

        In debug mode ``DETAIL`` every collective is checked across ranks, so
        the bucket is averaged into ``bucket.buffer`` and reduced with one
        allreduce instead. Waiting for the Future raises TimeoutError when
        some rank does not reach this bucket in time.
        """
        self._rounds[bucket.index] += 1
        self._writable[bucket.index] = False
        current = self._rounds[bucket.index]
        if get_debug_level() is not DebugLevel.DETAIL:
            return self.shared.start_reduction(bucket.index, current, bucket.buffer, 1.0 / self.div_factor)
        bucket.xp.divide(bucket.staging, self.div_factor, out=bucket.buffer)
        self.shared.release_staging(bucket.index, current)
        return self.group.allreduce(bucket.buffer, ReduceOp.SUM, async_op=True).get_future()

    def progress(self, launched) -> None:
        """Test every launched bucket, so that each Future completes (and says so) as soon as its reduction has."""
        for bucket in launched:
            bucket.future.done()

    def close(self) -> None:
        """Free the window and the communicators (collective), and detach the staging copies."""
        if self.shared is not None:
            for bucket in self._buckets:
                bucket.staging = None
            self.shared.free()
            self.shared = None
        if self.hierarchy.node_comm is not None:
            self.hierarchy.free()


class HierarchicalStrategy(SharedMemoryStrategy):
    """Ranks on several nodes: reduce each bucket in two levels (``shared_memory.py``, steps 1-4).

    Inside each node as ``SharedMemoryStrategy`` does, through the node's
    shared window; between the summing and the gathering, each rank
    allreduces the slices it summed with the ranks that sum the same slices
    on the other nodes (Horovod's and ChainerMN's hierarchical allreduce,
    with every rank of a node taking part instead of one leader).

    Args:
        group: the process group gradients are averaged over.
        hierarchy: ``minigrad_dist.topology.Hierarchy.split(group.comm, group.topology)``
            (freed by ``close()``).
        timeout: seconds a wait for the other ranks may take (None: forever).
    """

    def __init__(self, group: ProcessGroup, hierarchy: Hierarchy, timeout: float | None):
        self._start(group, hierarchy, timeout)


def choose_strategy(group: ProcessGroup, params, timeout: float | None) -> ReductionStrategy:
    """The default strategy: shared memory per node when the ranks can, else ``Iallreduce``.

    Collective over ``group``. Every rank of ``group`` on this node:
    ``SharedMemoryStrategy``. Ranks on several nodes: ``HierarchicalStrategy``
    when ``MINIGRAD_DIST_HIERARCHICAL`` (read now, see
    ``minigrad_dist.topology``) asks for two levels on ``group.topology``
    (by default when some node holds two ranks or more). Shared memory also
    needs every parameter on the CPU on every rank, and can be turned off
    with ``MINIGRAD_DDP_SHM=0``.

    Raises:
        ValueError: ``MINIGRAD_DIST_HIERARCHICAL`` holds an unknown value.
    """
    on_cpu = all(backend.device_of(p.array) == "cpu" for p in params)
    two_levels = group.topology.wants_two_levels(hierarchical_setting())
    hierarchy = node_hierarchy(group.comm, on_cpu and shared_memory_enabled(), two_levels, group.topology)
    if hierarchy is None:
        return IallreduceStrategy(group)
    if hierarchy.cross:
        return HierarchicalStrategy(group, hierarchy, timeout)
    return SharedMemoryStrategy(group, hierarchy.node_comm, timeout)


def strategy_for_hook(hook, state, div_factor: int) -> ReductionStrategy:
    """The strategy ``register_comm_hook(state, hook)`` installs.

    A plain hook function gets a ``CommHookStrategy``. A hook object with a
    ``reduction_strategy(state, div_factor)`` method (ZeRO's, from
    ``minigrad_dist.algorithms.ddp_zero_hook``) brings its own, because it
    also needs to hear of the buckets and of each backward.
    """
    make = getattr(hook, "reduction_strategy", None)
    if make is not None:
        return make(state, div_factor)
    return CommHookStrategy(hook, state, div_factor)


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
