"""``PipelineStage``: one piece of a model, with what it keeps per microbatch between forward and backward.

A stage runs its submodule on one microbatch at a time and remembers, until
that microbatch's backward, the two ends of the autograd graph it built:

1. **Input.** A received activation becomes a fresh leaf with
   ``requires_grad`` (the first stage takes the microbatch of the user's
   batch as it is), so that after the backward its ``.grad`` is the
   gradient to send to the stage before.
2. **Forward.** The submodule's output keeps its graph; the stage holds it
   (and, on the last stage, the loss) under the microbatch's index.
3. **Backward.** A middle stage feeds the received output gradients with
   ``minigrad.autograd.backward(outputs, grads)``; the last stage calls
   ``loss.backward()``. Parameter gradients accumulate in ``.grad`` across
   microbatches. The stage then drops the microbatch's tensors, freeing its
   activations, and returns the input gradients.
4. **Data parallel replicas.** When the submodule is a
   ``DistributedDataParallel`` over the data-parallel group (the ranks that
   run this same stage in other replicas of the pipeline; ``mesh["dp"]``),
   every forward runs under its ``no_sync``, so no backward communicates
   and ``.grad`` accumulates locally over the microbatches. Only the
   stage's last backward of the step (the schedule says which) arms the
   Reducer for that microbatch's outputs (``prepare_for_backward``), just
   before it runs: that backward averages the accumulated gradients over
   the replicas, bucket by bucket as they become ready, once per step. The
   schedule's division by ``m`` comes after and commutes with the average,
   so the result is the gradient of the whole batch of all replicas. At
   construction the replicas check, with one ``all_gather`` over the
   data-parallel group, that they build the same stage and that the group
   holds no other rank of this pipeline.

The stage counts the microbatches whose activations are still alive (a weak
reference to each output: a microbatch counts until its output tensor,
and with it the graph holding the activations, is really gone) and keeps the
peak (``peak_live_activations``), which tests compare with the schedule's
promise (1F1B: at most ``pp``; GPipe: every microbatch).

Which stage talks to which rank, and when, is the schedule's business
(``schedules.py``); stage ``s`` lives on rank ``s % pp`` of its group.
"""

from __future__ import annotations

import weakref

import numpy as np

import minigrad as mg
from minigrad import autograd
from minigrad.nn import Module
from minigrad_dist import collectives
from minigrad_dist.ddp.distributed import DistributedDataParallel

__all__ = ["PipelineStage"]


class PipelineStage:
    """One stage of a pipeline: ``submodule`` run as stage ``stage_index`` of ``num_stages``.

    Stages are placed round-robin on the ranks of ``group``: stage ``s``
    runs on group rank ``s % group size``. With one stage per rank
    (``ScheduleGPipe``, ``Schedule1F1B``) ``stage_index`` is the rank; with
    ``ScheduleInterleaved1F1B`` a rank builds the stages ``rank, rank + pp, ...``.

    The stage's forward takes the previous stage's output (a Tensor, or a
    tuple of Tensors passed as separate arguments) and returns a Tensor or
    a tuple of Tensors; the first stage takes the arguments of
    ``schedule.step`` cut into microbatches along dimension 0.

    Data parallelism across replicas of the pipeline (step 4 of the module
    docstring): pass the stage's module wrapped in
    ``DistributedDataParallel(module, process_group=mesh["dp"].get_group())``
    and the pipeline's group ``mesh["pp"].get_group()``::

        mesh = init_device_mesh("cpu", (dp, pp), mesh_dim_names=("dp", "pp"))
        ddp = DistributedDataParallel(stage_module, process_group=mesh["dp"].get_group())
        stage = PipelineStage(ddp, stage_index, num_stages, group=mesh["pp"].get_group())

    Gradients are then averaged over the replicas once per ``step``, in the
    stage's last backward; the wait is bounded by DDP's timeout
    (``init_process_group(timeout=...)``), and a timeout there raises a
    ``TimeoutError`` naming the stage and the data-parallel ranks. Wrap the
    ``step`` in ``ddp.no_sync()`` to accumulate over several steps without averaging.

    Args:
        submodule: the ``nn.Module`` this stage runs (may be a ``DistributedDataParallel``).
        stage_index: this stage's index, ``0 <= stage_index < num_stages``.
        num_stages: the number of stages of the whole pipeline.
        device: accepted for PyTorch's signature; the stage runs where its
            parameters are.
        input_args: an example of one microbatch's input (Tensor or tuple),
            used to check what arrives: a message of another shape or dtype
            raises a ``RuntimeError`` naming both. Optional.
        output_args: an example of one microbatch's output, checked after
            each forward in the same way. Optional.
        group: the process group whose ranks run the stages (default: the world).

    Raises:
        TypeError: ``submodule`` is not a Module, or an index is not an int.
        ValueError: ``stage_index`` out of range, ``num_stages`` not a
            multiple of the group size, or this stage belongs to another rank;
            with a ``DistributedDataParallel`` submodule, its group holds
            other ranks of this pipeline, or its ranks build different stages
            (raised on every rank of the DDP group).
        RuntimeError: no process group (call ``init_process_group`` first).

    Warning:
        With a ``DistributedDataParallel`` submodule the constructor is
        collective over DDP's group (one ``all_gather``): every replica
        builds its stages in the same order.
    """

    def __init__(self, submodule, stage_index, num_stages, device=None, input_args=None, output_args=None, group=None):
        if not isinstance(submodule, Module):
            raise TypeError(f"PipelineStage: submodule must be an nn.Module, got {type(submodule).__name__}")
        for name, value in (("stage_index", stage_index), ("num_stages", num_stages)):
            if not isinstance(value, int) or isinstance(value, bool):
                raise TypeError(f"PipelineStage: {name} must be an int, got {type(value).__name__}")
        if not 0 <= stage_index < num_stages:
            raise ValueError(f"PipelineStage: stage_index={stage_index} is out of range for {num_stages} stages")
        self.group = collectives._group(group)
        pp = self.group.size()
        if num_stages % pp:
            raise ValueError(
                f"PipelineStage: {num_stages} stages cannot be spread evenly over the group's {pp} ranks; "
                f"use a multiple of {pp} stages (one per rank, or several for ScheduleInterleaved1F1B)"
            )
        if stage_index % pp != self.group.rank():
            raise ValueError(
                f"PipelineStage: stage {stage_index} runs on group rank {stage_index % pp} (stage s on rank "
                f"s % {pp}), but this process is group rank {self.group.rank()}; build stage "
                f"{self.group.rank()} (+ multiples of {pp}) here"
            )
        self.submod = submodule
        self.stage_index = stage_index
        self.num_stages = num_stages
        self.device = device
        self.input_args = _as_tuple(input_args) if input_args is not None else None
        self.output_args = _as_tuple(output_args) if output_args is not None else None
        self.peak_live_activations = 0
        self._ddp = submodule if isinstance(submodule, DistributedDataParallel) else None
        if self._ddp is not None:
            self._check_data_parallel_replicas()
        self._reset()

    @property
    def is_first(self) -> bool:
        """Whether this is stage 0 (it takes the user's input)."""
        return self.stage_index == 0

    @property
    def is_last(self) -> bool:
        """Whether this is the last stage (it computes the loss)."""
        return self.stage_index == self.num_stages - 1

    @property
    def group_size(self) -> int:
        """The number of ranks the pipeline runs on."""
        return self.group.size()

    @property
    def group_rank(self) -> int:
        """This process's rank in the pipeline's group."""
        return self.group.rank()

    def rank_of(self, stage_index: int) -> int:
        """The global rank that runs ``stage_index``."""
        return self.group.world_ranks[stage_index % self.group.size()]

    def _check_data_parallel_replicas(self) -> None:
        """Step 4 at construction: DDP's group crosses this pipeline only here, and its ranks build this stage."""
        ddp_group = self._ddp.process_group
        me = self.group.world_ranks[self.group.rank()]
        shared = sorted(set(ddp_group.world_ranks) & set(self.group.world_ranks) - {me})
        everyone = ddp_group.allgather_obj((self.stage_index, self.num_stages, shared))
        ranks = ddp_group.world_ranks
        crossing = [(ranks[i], s) for i, (_, _, s) in enumerate(everyone) if s]
        if crossing:
            rank, others = crossing[0]
            raise ValueError(
                f"PipelineStage: the DistributedDataParallel module of stage {self.stage_index} averages over "
                f"world ranks {ranks}, but for world rank {rank} that group also holds world ranks {others}, "
                "which run other stages of its pipeline; DDP must average over the ranks that run this same "
                'stage in the other replicas: DistributedDataParallel(module, process_group=mesh["dp"].get_group()) '
                'with PipelineStage(..., group=mesh["pp"].get_group())'
            )
        different = [(ranks[i], s, n) for i, (s, n, _) in enumerate(everyone) if (s, n) != everyone[0][:2]]
        if different:
            rank, stage, stages = different[0]
            raise ValueError(
                f"PipelineStage: the data-parallel replicas of DDP's group (world ranks {ranks}) must build the "
                f"same stage, but world rank {ranks[0]} builds stage {everyone[0][0]} of {everyone[0][1]} and "
                f"world rank {rank} stage {stage} of {stages}; give every replica the same stage_index and "
                "num_stages (the dp groups of a device mesh do)"
            )

    def _reset(self) -> None:
        """Forget the previous step's microbatches (the schedule calls this when a step begins)."""
        self._inputs = {}
        self._outputs = {}
        self._losses = {}
        self._alive = {}
        self.output_shapes = None

    # -- step 1 and 2: forward ------------------------------------------------------------------

    def forward_one_chunk(self, microbatch: int, args: tuple, received: bool) -> tuple:
        """Run the submodule on one microbatch; returns its outputs as a tuple of Tensors.

        ``received``: the args came from the stage before and become leaves
        that require grad (step 1); the first stage's args are used as they are.

        Raises:
            TypeError: the submodule returned something other than Tensors.
            RuntimeError: the outputs differ from ``output_args``.
        """
        if received:
            args = tuple(_leaf(a) for a in args)
        elif self.input_args is not None:
            _check_like(args, self.input_args, f"stage {self.stage_index}'s input microbatch", "input_args")
        outputs = _as_tuple(self._run_submodule(args), what=f"stage {self.stage_index}'s forward output")
        if self.output_args is not None:
            _check_like(outputs, self.output_args, f"stage {self.stage_index}'s output", "output_args")
        self.output_shapes = [(tuple(o.shape), np.dtype(o.dtype)) for o in outputs]
        self._inputs[microbatch] = args
        self._outputs[microbatch] = outputs
        self._alive[microbatch] = [weakref.ref(o) for o in outputs]
        return outputs

    def _run_submodule(self, args):
        if self._ddp is None:
            return self.submod(*args)
        with self._ddp.no_sync():  # step 4: the Reducer is armed at backward time, for the last backward only
            return self.submod(*args)

    def release(self, microbatch: int) -> None:
        """Drop what the forward of ``microbatch`` kept (a schedule without backward calls this after each forward)."""
        self._inputs.pop(microbatch, None)
        self._outputs.pop(microbatch, None)
        self._losses.pop(microbatch, None)

    def set_loss(self, microbatch: int, loss) -> None:
        """Keep the last stage's loss of ``microbatch`` for its backward."""
        self._losses[microbatch] = loss

    # -- step 3: backward ------------------------------------------------------------------------

    def backward_one_chunk(self, microbatch: int, output_grads=None, last_backward: bool = False) -> tuple:
        """Backward of one microbatch: returns the gradients of its received inputs (zeros where unused).

        The last stage differentiates its loss; other stages feed
        ``output_grads`` (one per output) into their outputs' graph. The
        microbatch's tensors are dropped afterwards. ``last_backward``: this
        is the stage's last backward of the step; with a
        ``DistributedDataParallel`` submodule (outside its ``no_sync``) this
        backward averages the accumulated gradients over DDP's group (step 4).

        Raises:
            RuntimeError: no forward of this microbatch is held (the schedule
                ran B before F), or DDP's averaging failed (its error).
            TimeoutError: DDP's averaging waited longer than its timeout for
                another replica (names the stage and the data-parallel ranks).
        """
        if microbatch not in self._outputs:
            raise RuntimeError(f"stage {self.stage_index}: backward of microbatch {microbatch} before its forward")
        outputs = self._outputs.pop(microbatch)
        inputs = self._inputs.pop(microbatch)
        if last_backward and self._ddp is not None and self._ddp.require_backward_grad_sync:
            self._ddp.prepare_for_backward(outputs)
            self._backward_averaging(microbatch, outputs, output_grads)
        else:
            self._run_backward(microbatch, outputs, output_grads)
        del outputs
        if self.is_first:
            return ()
        return tuple(x.grad.array if x.grad is not None else mg.zeros_like(x).array for x in inputs)

    def _run_backward(self, microbatch, outputs, output_grads) -> None:
        if self.is_last:
            self._losses.pop(microbatch).backward()
        else:
            pairs = [(o, mg.Tensor(g)) for o, g in zip(outputs, output_grads) if o.requires_grad]
            if pairs:
                autograd.backward([o for o, _ in pairs], [g for _, g in pairs])

    def _backward_averaging(self, microbatch, outputs, output_grads) -> None:
        """The armed last backward: DDP's timeouts get the pipeline's context (which stage, which replicas)."""
        try:
            self._run_backward(microbatch, outputs, output_grads)
        except TimeoutError as error:
            raise TimeoutError(
                f"pipeline stage {self.stage_index}: averaging its gradients over the data-parallel replicas "
                f"(world ranks {self._ddp.process_group.world_ranks}) in its last backward of the step "
                f"(microbatch {microbatch}) timed out: {error}. Did a replica fail first (see its error), or do "
                "the replicas run different schedules, microbatch counts or numbers of steps?"
            ) from error

    def scale_grads(self, grad_scale_factor: int) -> None:
        """Divide this stage's parameter gradients by ``grad_scale_factor`` (the schedule passes the microbatch count).

        As PyTorch's: with a loss that averages over its microbatch,
        dividing the gradients summed over ``m`` microbatches by ``m`` gives
        the gradient of the loss averaged over the whole batch.
        """
        if grad_scale_factor != 1:
            for p in self.submod.parameters():
                if p.grad is not None:
                    p.grad.array /= grad_scale_factor

    # -- activation accounting ------------------------------------------------------------------

    def live_activations(self) -> int:
        """How many microbatches' outputs (and so their activations) are still alive; updates the peak."""
        for mb in [mb for mb, refs in self._alive.items() if all(r() is None for r in refs)]:
            del self._alive[mb]
        self.peak_live_activations = max(self.peak_live_activations, len(self._alive))
        return len(self._alive)

    def __repr__(self) -> str:
        return f"PipelineStage(stage_index={self.stage_index}, num_stages={self.num_stages}, rank={self.group_rank})"


def _as_tuple(value, what="input_args"):
    values = tuple(value) if isinstance(value, (tuple, list)) else (value,)
    for v in values:
        if not isinstance(v, mg.Tensor):
            raise TypeError(f"{what} must be a Tensor or a tuple of Tensors, got {type(v).__name__}")
    return values


def _leaf(array):
    tensor = mg.Tensor(array)
    if tensor.is_floating_point():
        tensor.requires_grad_()
    return tensor


def _check_like(tensors, examples, what, argument) -> None:
    actual = [(tuple(t.shape), np.dtype(t.dtype)) for t in tensors]
    expected = [(tuple(e.shape), np.dtype(e.dtype)) for e in examples]
    if actual != expected:
        raise RuntimeError(
            f"{what} is {_describe(actual)}, but {argument} says {_describe(expected)}; "
            f"make the stages' shapes agree (or fix {argument})"
        )


def _describe(metas) -> str:
    return ", ".join(f"shape {shape} dtype {dtype}" for shape, dtype in metas) or "nothing"
