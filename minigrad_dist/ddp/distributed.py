"""``DistributedDataParallel``: data-parallel training of a minigrad module over MPI.

Each rank holds a full replica of the model and runs forward and backward
on its own slice of the data; the Reducer (reducer.py) averages gradients
across ranks during the backward pass, so after ``loss.backward()`` every
rank holds the same ``.grad`` and the optimizer keeps the replicas equal.
"""

from __future__ import annotations

import contextlib
import functools
import os

from minigrad._checks import expect_instance
from minigrad.grad_mode import is_grad_enabled
from minigrad.nn.module import Module
from minigrad_dist import collectives, resources
from minigrad_dist.ddp.bucket import FIRST_BUCKET_CAP_BYTES
from minigrad_dist.ddp.join import Join
from minigrad_dist.ddp.reducer import Reducer
from minigrad_dist.ddp.state_sync import broadcast_coalesced, verify_same_parameters
from minigrad_dist.ddp.trace import Tracer, plot_gantt, write_trace
from minigrad_dist.process_group import ProcessGroup


class DistributedDataParallel(Module):
    """Wraps ``module`` so that its gradients are averaged across the ranks of a process group.

    Construction (a recipe, in this order):
        1. check that every rank holds the same parameters (count, then each
           name, shape and dtype; the error names the first difference and the ranks);
        2. broadcast parameters and buffers from rank 0 (coalesced by dtype), so
           every replica starts from the same state;
        3. free the communicators and windows of DDP models over this group
           that were dropped without ``close()`` on every rank, oldest first
           (``minigrad_dist.resources``: the one point where that is safe);
        4. build the Reducer: its reduction strategy (shared memory when every
           rank is on one node, shared memory per node and an allreduce across
           nodes when they span several, else ``Iallreduce``), buckets in reverse
           registration order, and one post-accumulate-grad hook per parameter.

    Args:
        module: the model (a ``minigrad.nn.Module``) replicated on every rank.
        device_ids: accepted for PyTorch compatibility and ignored: each
            process runs its replica on the device its parameters already
            live on (move the module there before wrapping it).
        output_device: accepted for PyTorch compatibility and ignored: the
            output stays on the device the module computed it on.
        bucket_cap_mb: size cap of a gradient bucket in MiB (the first bucket is capped at 1 MiB).
        find_unused_parameters: walk the graph after each forward to find
            parameters that will get no gradient; needed when parts of the
            model may not take part in the loss. Costs a graph traversal.
        broadcast_buffers: copy rank 0's buffers to every rank at each forward.
        gradient_as_bucket_view: make ``.grad`` views into the bucket buffers
            (saves one model's worth of memory; ``.grad`` is overwritten by the
            next iteration's reduction).
        process_group: the group to average over (default: the world).
        first_bucket_cap_mb: cap of the first bucket (default 1 MiB, as upstream).
        trace: record a timeline of each backward (see ``ddp.trace``; default:
            the ``MINIGRAD_DDP_TRACE`` environment variable). Save it with ``save_trace``.

    Warning:
        Every rank must construct DDP, run forward and backward the same
        number of times, and call the same collectives: DDP's allreduces are
        collective calls. Use ``join()`` when ranks have different numbers
        of batches.

    Warning:
        Parameters must not be added, removed or replaced after construction.

    Note:
        When every rank of the group runs on one node (and the parameters are
        on the CPU), buckets are reduced through an MPI shared-memory window
        instead of ``Iallreduce`` (``ddp/shared_memory.py``; its throughput
        beside a raw ``Allreduce`` is ``minigrad.throughput`` in
        ``benchmarks/results/ddp.json``, from ``benchmarks/bench_ddp.py``).
        When the ranks span several nodes, each node sums through its own
        window and the nodes allreduce one slice per rank
        (``MINIGRAD_DIST_HIERARCHICAL``, see ``minigrad_dist.topology``;
        ``benchmarks/results/topology.json``). ``MINIGRAD_DDP_SHM=0`` turns
        shared memory off. ``register_comm_hook`` replaces any of them with the hook.

    Raises:
        TypeError: ``module`` is not a Module, or ``process_group`` not a ProcessGroup.
        ValueError: ``bucket_cap_mb`` is not a positive number.
        RuntimeError: the process group is not initialized, or ranks hold different parameters.
    """

    def __init__(
        self,
        module,
        device_ids=None,
        output_device=None,
        bucket_cap_mb: float = 25,
        find_unused_parameters: bool = False,
        broadcast_buffers: bool = True,
        gradient_as_bucket_view: bool = False,
        process_group=None,
        first_bucket_cap_mb: float | None = None,
        trace: bool | None = None,
    ):
        super().__init__()
        if not isinstance(module, Module):
            raise TypeError(f"DistributedDataParallel wraps a minigrad.nn.Module, got {type(module).__name__}")
        cap_is_number = isinstance(bucket_cap_mb, (int, float)) and not isinstance(bucket_cap_mb, bool)
        if not cap_is_number or not bucket_cap_mb > 0:
            raise ValueError(f"bucket_cap_mb must be a positive number of MiB, got {bucket_cap_mb!r}")
        group = process_group if process_group is not None else collectives.get_default_group()
        expect_instance("process_group", group, ProcessGroup)
        self.module = module
        self.process_group = group
        self.broadcast_buffers = broadcast_buffers
        self.require_backward_grad_sync = True
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view

        named = [(n, p) for n, p in module.named_parameters() if p.requires_grad]
        if not named:
            raise RuntimeError("DistributedDataParallel: the module has no parameter that requires grad")
        verify_same_parameters(group, module)
        broadcast_coalesced(group, [p.array for _, p in module.named_parameters()] + self._buffer_arrays())
        # A collective point every rank reaches in the same order: the only safe place to free dropped models.
        serial = resources.begin(group)
        first_cap = FIRST_BUCKET_CAP_BYTES if first_bucket_cap_mb is None else int(first_bucket_cap_mb * 2**20)
        if trace is None:
            trace = os.environ.get("MINIGRAD_DDP_TRACE", "").strip() not in ("", "0")
        self._tracer = Tracer(group.rank()) if trace else None
        self.reducer = Reducer(
            [p for _, p in named],
            [n for n, _ in named],
            group,
            bucket_cap_bytes=int(bucket_cap_mb * 2**20),
            find_unused_parameters=find_unused_parameters,
            gradient_as_bucket_view=gradient_as_bucket_view,
            first_bucket_cap_bytes=first_cap,
            timeout=collectives._world.timeout,  # init_process_group(timeout=...) bounds DDP's waits too
            observer=self._tracer,
        )
        if self._tracer is not None:
            self._tracer.start()
        self._join = None
        # Dropped without close(): the finalizer unhooks at once and leaves the collective freeing to the
        # next construction over this group (it must refer to the Reducer and tracer, never to self).
        self._finalizer = resources.defer_release(
            self, group, serial, self.reducer.close, on_drop=functools.partial(_unhook, self.reducer, self._tracer)
        )

    def _buffer_arrays(self):
        return [b.array for b in self.module.buffers()]

    def forward(self, *inputs, **kwargs):
        """Run the wrapped module; arms the Reducer for the coming backward.

        Raises:
            RuntimeError: the previous backward did not finish reducing (names
                the parameters that got no gradient).
        """
        if self._join is not None:
            self._join.notify_active_iteration(self)
        if self.broadcast_buffers:
            buffers = self._buffer_arrays()
            if buffers:
                broadcast_coalesced(self.process_group, buffers, timeout=self.reducer.timeout)
        output = self.module(*inputs, **kwargs)
        if is_grad_enabled() and self.require_backward_grad_sync:
            self.reducer.prepare_for_backward(output)
        return output

    @contextlib.contextmanager
    def no_sync(self):
        """Inside this context, backward accumulates ``.grad`` locally without communicating.

        The first forward-backward *outside* the context then averages the
        accumulated gradients, which is how gradient accumulation is done.
        """
        previous = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = previous

    def prepare_for_backward(self, outputs) -> None:
        """Make the next backward of ``outputs`` average the gradients, deciding at backward time.

        What ``forward`` does at its end outside ``no_sync``, for a caller
        that ran its forwards under ``no_sync`` and learns only later which
        backward is the last of a step: a pipeline stage arms the last
        backward of each step this way (``minigrad_dist.pipelining``). That
        backward averages every parameter's ``.grad`` across the group,
        including what earlier backwards accumulated locally; with
        ``find_unused_parameters`` the graph of ``outputs`` decides which
        parameters are unused. Call it just before the backward, on every rank.

        Args:
            outputs: this module's forward outputs (a Tensor or nested tuples,
                lists and dicts of them) whose backward comes next.

        Raises:
            RuntimeError: the previous backward did not finish reducing (names
                the parameters that got no gradient), or an earlier error left DDP unusable.
        """
        self.reducer.prepare_for_backward(outputs)

    def register_comm_hook(self, state, hook) -> None:
        """Reduce each bucket with ``hook(state, bucket) -> Future`` (see algorithms.ddp_comm_hooks).

        Call once, before the first backward.
        """
        self.reducer.register_comm_hook(state, hook)

    def join(self, divide_by_initial_world_size: bool = True, enable: bool = True):
        """Context manager for ranks with uneven numbers of batches (see ``ddp.join.Join``).

        Args:
            divide_by_initial_world_size: average over the initial world size
                (PyTorch's default); False averages over the ranks still
                training, which equals training on the union of the data.
            enable: False turns the context into a no-op.
        """
        return Join(self, divide_by_initial_world_size=divide_by_initial_world_size, enable=enable)

    def save_trace(self, path, png: bool = True):
        """Write the recorded timeline of every rank (collective: call it on every rank).

        Rank 0 writes ``path`` (Chrome trace event JSON; open it in Perfetto) and,
        with ``png`` and matplotlib installed, the Gantt chart next to it.
        Returns the paths written (on rank 0; None elsewhere).

        Raises:
            RuntimeError: tracing is off (pass ``trace=True`` or set ``MINIGRAD_DDP_TRACE=1``).
        """
        tracer = self._tracer
        if tracer is None:
            raise RuntimeError("save_trace: tracing is off; construct DDP with trace=True or set MINIGRAD_DDP_TRACE=1")
        gathered = self.process_group.gather_obj((tracer.rank, tracer.events), 0)
        if self.process_group.rank() != 0:
            return None
        json_path = write_trace(path, gathered)
        png_path = plot_gantt(json_path, gathered) if png else None
        return json_path, png_path

    def close(self) -> None:
        """Release DDP's resources: hooks, the Reducer's communicators and its shared-memory window.

        Collective: call it on every rank (MPI frees communicators and windows together).
        MPI limits how many communicators a process may hold (about 2000 with
        MPICH). A DDP model dropped without ``close()`` is freed too, but
        later: its finalizer only removes its hooks, and the next DDP
        construction over the same group frees its communicators and window
        on every rank in creation order (``minigrad_dist.resources``). Closing
        frees them at once. Calling ``close()`` twice is harmless.
        """
        if self._finalizer.detach() is not None:
            resources.closed(self.process_group)
        if self._tracer is not None:
            self._tracer.stop()
        self.reducer.close()


def _unhook(reducer, tracer) -> None:
    """What a dropped DDP model undoes at once, without MPI: stop the tracer, remove the Reducer's hooks."""
    if tracer is not None:
        tracer.stop()
    reducer.remove_hooks()
