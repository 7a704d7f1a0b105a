"""Pipeline schedules that run: ``ScheduleGPipe``, ``Schedule1F1B``, ``ScheduleInterleaved1F1B``.

A schedule holds its rank's action list (``actions.py``) and ``step``
walks it, in this order:

1. **Check and cut.** The rank of the first stage cuts the arguments of
   ``step`` into ``n_microbatches`` equal pieces along dimension 0, the rank
   of the last stage cuts ``target`` likewise; a batch that does not divide
   raises before any message moves.
2. **Post the metadata receives.** Each stage that receives activations
   posts a receive for one small message announcing their shapes and dtypes
   (sent once per step with the first activation), so shapes need not be
   declared in advance; ``input_args`` of the stage, when given, are
   checked against them.
3. **Walk the actions.** Before each action, the receives of the next few
   actions are posted (nonblocking ``irecv``) as soon as their shapes are
   known, so messages land while this rank computes; during compute, every
   submodule's forward and every backward node tests the messages in
   flight, since MPI moves them only inside MPI calls. ``F`` runs the stage's
   forward (on the last stage also ``loss_fn``), ``B`` its backward,
   ``SEND_*`` start a nonblocking send and move on, ``RECV_*`` wait for
   their message, at most ``timeout`` seconds. Activations and gradients
   travel as bare contiguous buffers (the metadata message gave their
   shapes; a receive checks the length), sent from and received into the
   arrays themselves: ``p2p.isend`` would copy each into a message behind
   its header. MPICH moves such a message in one copy driven by the
   receiver, while the sender computes. A message between two stages
   of the same rank (one rank, several stages) is handed over in memory.
   Each stage's last ``B`` of the step is marked ``last_backward``: a stage
   whose module is a ``DistributedDataParallel`` averages its gradients over
   the data-parallel replicas there (``stage.py``, step 4).
4. **Finish.** Wait for this rank's sends, divide the parameter
   gradients by ``n_microbatches`` (``scale_grads``, as PyTorch), append the
   per-microbatch losses to ``losses`` and return the last stage's outputs,
   concatenated.

Every action is timed (``perf_counter`` spans on the lanes ``compute``,
``send`` and ``recv``) into ``schedule.events`` for the last step, which
``trace.py`` turns into a Chrome trace, a Gantt chart and the bubble.

Messages are tagged by direction, stage boundary, microbatch and tensor
index, so they can be received in any order and posted early without
mixing up.
"""

from __future__ import annotations

import time

import numpy as np

import minigrad as mg
from minigrad import backend, engine
from minigrad_dist import collectives, p2p
from minigrad_dist.mpi import load_mpi
from minigrad_dist.pipelining import actions as A
from minigrad_dist.pipelining.stage import PipelineStage
from minigrad_dist.process_group import Work

__all__ = [
    "PipelineScheduleMulti",
    "PipelineScheduleSingle",
    "Schedule1F1B",
    "ScheduleGPipe",
    "ScheduleInterleaved1F1B",
]

DEFAULT_TIMEOUT = 300.0
_LOOKAHEAD = 6  # actions ahead whose receives are posted
_MAX_TENSORS = 16  # tensors per stage boundary (tags leave room for this many)
_MAX_DIMS = 16
_META_LEN = 1 + _MAX_TENSORS * (2 + _MAX_DIMS)
_DIRECTIONS = {A.FORWARD: 0, A.BACKWARD: 1, "meta": 2}
_LANES = {
    A.FORWARD: "compute",
    A.BACKWARD: "compute",
    A.SEND_F: "send",
    A.SEND_B: "send",
    A.RECV_F: "recv",
    A.RECV_B: "recv",
}


class _PipelineSchedule:
    """What all schedules share: ``step`` over an action list for this rank's stages (see the module docstring)."""

    schedule_name = None

    def __init__(self, stages, n_microbatches, loss_fn=None, scale_grads=True, *, timeout=None):
        if not stages or not all(isinstance(s, PipelineStage) for s in stages):
            raise TypeError(f"{type(self).__name__}: stages must be PipelineStage objects, got {stages!r}")
        if not isinstance(n_microbatches, int) or isinstance(n_microbatches, bool) or n_microbatches < 1:
            raise ValueError(f"{type(self).__name__}: n_microbatches must be a positive int, got {n_microbatches!r}")
        self._stages = {s.stage_index: s for s in sorted(stages, key=lambda s: s.stage_index)}
        first = next(iter(self._stages.values()))
        self.group = first.group
        self.num_stages = first.num_stages
        self.pp = first.group_size
        self.rank = first.group_rank
        self._n_microbatches = n_microbatches
        self._loss_fn = loss_fn
        self.scale_grads = scale_grads
        self.timeout = timeout if timeout is not None else (collectives._world.timeout or DEFAULT_TIMEOUT)
        stages_per_rank = self.num_stages // self.pp
        self._check_stages(stages, stages_per_rank)
        orders = A.pipeline_order(
            self.schedule_name, self.pp, n_microbatches, stages_per_rank, forward_only=loss_fn is None
        )
        self.pipeline_order = orders
        """Every rank's compute actions, ``{group rank: [Action, ...]}`` (``F``/``B`` of a stage and microbatch)."""
        self.pipeline_order_with_comms = {r: A.with_communication(o, self.num_stages) for r, o in orders.items()}
        """Every rank's full action list, with the sends and receives this rank runs in ``step``."""
        self.events = []
        """The last step's timeline: ``("X", lane, name, start, end, args)`` per action (``trace.py``)."""

    def _check_stages(self, stages, stages_per_rank) -> None:
        if len(stages) != stages_per_rank:
            raise ValueError(
                f"{type(self).__name__}: {self.num_stages} stages on {self.pp} ranks put {stages_per_rank} "
                f"stage(s) on each rank, but this rank gave {len(stages)}"
            )
        if any(s.num_stages != self.num_stages or s.group is not self.group for s in stages):
            raise ValueError(f"{type(self).__name__}: all stages must agree on num_stages and group")

    # -- step ----------------------------------------------------------------------------------

    def step(self, *args, target=None, losses=None, return_outputs=True):
        """Run one iteration of the schedule on the whole batch ``args``; returns the last stage's output.

        Every rank of the pipeline calls ``step``; the input matters only
        on the rank of the first stage and ``target`` only on the rank of
        the last. Gradients accumulate into the stages' parameters (call
        ``optimizer.zero_grad()`` before, as in PyTorch) and are divided by
        ``n_microbatches`` when ``scale_grads`` (right for a loss that
        averages over its microbatch: the result is the gradient of the
        loss averaged over the whole batch).

        Args:
            *args: the first stage's inputs, Tensors with the batch in dimension 0.
            target: the last stage's target, the second argument of ``loss_fn``.
            losses: a list; the last stage appends each microbatch's loss (a Tensor).
            return_outputs: return the last stage's outputs (else None).

        Returns:
            On the last stage's rank, its outputs for the whole batch
            (concatenated along dimension 0); None elsewhere.

        Raises:
            ValueError: the batch (or target) does not divide into
                ``n_microbatches``, or the first/last stage's rank lacks its input/target.
            RuntimeError: a received activation or gradient has another
                shape or dtype than expected (naming both).
            TimeoutError: a message did not arrive within ``timeout`` seconds
                (naming the stage, microbatch and peer; usually another rank failed first).

        Warning:
            After a ``step`` raised, receives it had posted may still be
            pending on the group's point-to-point communicator and could take
            a later step's messages: do not step again on that group; tear the
            process group down (every rank) and start over.
        """
        arg_mbs, target_mbs = self._split_inputs(args, target, losses)
        run = _StepRun(self, arg_mbs, target_mbs)
        run.execute(self.pipeline_order_with_comms[self.rank])
        self.events = run.events
        if self.scale_grads and self._loss_fn is not None:
            for stage in self._stages.values():
                stage.scale_grads(self._n_microbatches)
        last = self._stages.get(self.num_stages - 1)
        if last is None:
            return None
        if losses is not None and self._loss_fn is not None:
            losses.extend(run.losses[mb] for mb in range(self._n_microbatches))
        return run.merged_outputs() if return_outputs else None

    def _split_inputs(self, args, target, losses):
        name = type(self).__name__
        if losses is not None and not isinstance(losses, list):
            raise TypeError(f"{name}.step: losses must be a list, got {type(losses).__name__}")
        arg_mbs = target_mbs = None
        if 0 in self._stages:
            if not args:
                raise ValueError(f"{name}.step: this rank runs the first stage; pass the input batch: step(x)")
            arg_mbs = list(zip(*(self._chunks(a, "input") for a in args)))
        if self.num_stages - 1 in self._stages and self._loss_fn is not None:
            if target is None:
                raise ValueError(f"{name}.step: this rank runs the last stage and has a loss_fn; pass target=...")
            target_mbs = self._chunks(target, "target")
        return arg_mbs, target_mbs

    def _chunks(self, tensor, what):
        if not isinstance(tensor, mg.Tensor):
            raise TypeError(f"{type(self).__name__}.step: the {what} must be a Tensor, got {type(tensor).__name__}")
        m = self._n_microbatches
        if tensor.ndim == 0 or tensor.shape[0] % m:
            size = tensor.shape[0] if tensor.ndim else "a scalar"
            raise ValueError(
                f"{type(self).__name__}.step: the {what}'s batch dimension ({size}) does not divide into "
                f"n_microbatches={m}; use a batch size that is a multiple of {m}"
            )
        size = tensor.shape[0] // m
        return [mg.Tensor(tensor.array[i * size : (i + 1) * size]) for i in range(m)]

    def peak_live_activations(self) -> dict:
        """``{stage index: the most microbatches whose activations it held at once}`` over all steps so far."""
        return {i: s.peak_live_activations for i, s in self._stages.items()}


class PipelineScheduleSingle(_PipelineSchedule):
    """Base of the schedules with one stage per rank (``stage``: this rank's ``PipelineStage``)."""

    def __init__(self, stage, n_microbatches, loss_fn=None, scale_grads=True, *, timeout=None):
        if isinstance(stage, PipelineStage) and stage.num_stages != stage.group_size:
            raise ValueError(
                f"{type(self).__name__} runs one stage per rank: num_stages must equal the group size, got "
                f"{stage.num_stages} stages on {stage.group_size} ranks; use ScheduleInterleaved1F1B for "
                "several stages per rank"
            )
        super().__init__([stage], n_microbatches, loss_fn, scale_grads, timeout=timeout)
        self._stage = stage


class PipelineScheduleMulti(_PipelineSchedule):
    """Base of the schedules with several stages per rank (``stages``: this rank's, any order)."""

    def __init__(self, stages, n_microbatches, loss_fn=None, scale_grads=True, *, timeout=None):
        if not isinstance(stages, (list, tuple)):
            raise TypeError(
                f"{type(self).__name__}: stages must be a list of this rank's PipelineStage objects, got "
                f"{type(stages).__name__}"
            )
        super().__init__(list(stages), n_microbatches, loss_fn, scale_grads, timeout=timeout)


class ScheduleGPipe(PipelineScheduleSingle):
    """GPipe (Huang et al. 2018): all forwards of the microbatches, then all backwards.

    Args:
        stage: this rank's ``PipelineStage`` (one per rank: ``num_stages`` equals the group size).
        n_microbatches: how many pieces ``step`` cuts the batch into (it must divide the batch).
        loss_fn: ``loss_fn(output, target)`` on the last stage; without it ``step`` runs forwards only.
        scale_grads: divide the gradients by ``n_microbatches`` at the end of ``step`` (as PyTorch).
        timeout: seconds any one message may take (default: the process group's timeout, else 300).
            A minigrad extension.

    Each stage holds the activations of all ``n_microbatches`` at the turn
    from forward to backward. Raises as ``PipelineStage`` and ``step``.
    """

    schedule_name = "gpipe"


class Schedule1F1B(PipelineScheduleSingle):
    """1F1B (PipeDream-Flush; Narayanan et al. 2021): a few warm-up forwards, then one forward, one backward.

    Arguments as ``ScheduleGPipe``. Stage ``s`` of ``p`` holds at most
    ``p - s`` microbatches' activations at once (at most ``p``), instead of
    GPipe's ``n_microbatches``; the bubble is the same, ``(p-1)/(m+p-1)``.
    """

    schedule_name = "1f1b"


class ScheduleInterleaved1F1B(PipelineScheduleMulti):
    """Interleaved 1F1B (Narayanan et al. 2021): each rank runs ``v`` stages, round-robin, on a 1F1B pattern.

    Args:
        stages: this rank's stages: with ``num_stages = v * pp``, rank ``r``
            holds stages ``r, r + pp, ..., r + (v-1) pp``.
        n_microbatches: a multiple of the group size.
        loss_fn, scale_grads, timeout: as for ``ScheduleGPipe``.

    The bubble's time shrinks by a factor ``v`` at the price of ``v`` times
    as many messages.

    Raises:
        ValueError: ``n_microbatches`` is not a multiple of the group size,
            or this rank's stages are not the ones it runs.
    """

    schedule_name = "interleaved"


# -- one step on one rank ----------------------------------------------------------------------


class _StepRun:
    """The state of one ``step`` on this rank: received messages, pending sends, losses, outputs."""

    def __init__(self, schedule, arg_mbs, target_mbs):
        self.schedule = schedule
        self.stages = schedule._stages
        self.arg_mbs = arg_mbs
        self.target_mbs = target_mbs
        self.events = []
        self.losses = {}
        self.outputs = {}
        self.received = {}  # (direction, receiving stage, microbatch) -> [arrays]
        self.to_send = {}  # (direction, sending stage, microbatch) -> [arrays]
        self.posted = {}  # (direction, receiving stage, microbatch) -> (works, arrays)
        self.sends = []
        self.input_meta = {}  # stage -> [(shape, dtype)] of its received activations
        self.meta_receives = {}
        self.meta_sent = set()
        self.local_mail = {}  # messages between two stages of this rank
        for stage in self.stages.values():
            stage._reset()

    # step 2 and 3 ------------------------------------------------------------------------------

    def execute(self, order) -> None:
        self.last_backward = {a.stage: a.microbatch for a in order if a.kind == A.BACKWARD}
        for stage_index in self.stages:
            if stage_index > 0 and not self._is_local(stage_index - 1):
                self._post_meta_receive(stage_index)
        # MPICH moves a message only inside MPI calls (MPI_NOTES.md): tested only between actions, a
        # receive posted ahead (or a send's handshake) would wait for the end of the forward or backward.
        hooks = [
            m.register_forward_hook(self._drive_progress) for s in self.stages.values() for m in s.submod.modules()
        ]
        engine.add_node_observer(self._drive_progress)
        try:
            self._walk(order)
        finally:
            engine.remove_node_observer(self._drive_progress)
            for hook in hooks:
                hook.remove()
        for work in self.sends:
            self._wait(work, "the receiver to take a message", None, None)

    def _drive_progress(self, *_) -> None:
        """Test the messages in flight (a forward hook and a backward node observer while a step runs)."""
        for work in self.sends:
            work.is_completed()
        for works, _arrays in self.posted.values():
            for work in works:
                work.is_completed()

    def _walk(self, order) -> None:
        handlers = {
            A.FORWARD: self._forward,
            A.BACKWARD: self._backward,
            A.SEND_F: self._send,
            A.SEND_B: self._send,
            A.RECV_F: self._receive,
            A.RECV_B: self._receive,
        }
        for index, action in enumerate(order):
            self._post_receives_ahead(order[index : index + _LOOKAHEAD])
            start = time.perf_counter()
            handlers[action.kind](action)
            end = time.perf_counter()
            self.events.append(
                (
                    "X",
                    _LANES[action.kind],
                    str(action),
                    start,
                    end,
                    {"stage": action.stage, "microbatch": action.microbatch, "kind": action.kind},
                )
            )
            if action.kind in A.COMPUTE:
                self.stages[action.stage].live_activations()
            self.sends = [w for w in self.sends if not w.is_completed()]

    def _forward(self, action) -> None:
        stage = self.stages[action.stage]
        mb = action.microbatch
        if stage.is_first:
            args, received = self.arg_mbs[mb], False
        else:
            args, received = self.received.pop((A.FORWARD, action.stage, mb)), True
        outputs = stage.forward_one_chunk(mb, args, received)
        if stage.is_last:
            if self.schedule._loss_fn is not None:
                loss = self.schedule._loss_fn(outputs[0] if len(outputs) == 1 else outputs, self.target_mbs[mb])
                stage.set_loss(mb, loss)
                self.losses[mb] = loss.detach()
            self.outputs[mb] = tuple(o.detach() for o in outputs)
        else:
            self.to_send[(A.FORWARD, action.stage, mb)] = [o.array for o in outputs]
        if self.schedule._loss_fn is None:
            stage.release(mb)

    def _backward(self, action) -> None:
        stage = self.stages[action.stage]
        mb = action.microbatch
        grads = None if stage.is_last else self.received.pop((A.BACKWARD, action.stage, mb))
        input_grads = stage.backward_one_chunk(mb, grads, last_backward=self.last_backward[action.stage] == mb)
        if not stage.is_first:
            self.to_send[(A.BACKWARD, action.stage, mb)] = list(input_grads)

    def _send(self, action) -> None:
        direction, sender, receiver, mb = A.message_key(action)
        arrays = [np.ascontiguousarray(a) for a in self.to_send.pop((direction, sender, mb))]
        if self._is_local(receiver):
            self.local_mail[(direction, receiver, mb)] = [a.copy() for a in arrays]
            return
        peer = self.stages[sender].rank_of(receiver)
        group = self.schedule.group
        if direction == A.FORWARD and sender not in self.meta_sent:
            self.meta_sent.add(sender)
            meta = _encode_meta(arrays, sender)
            self.sends.append(p2p.isend(meta, dst=peer, group=group, tag=self._tag("meta", min(sender, receiver), 0)))
        for i, array in enumerate(arrays):
            tag = self._tag(direction, min(sender, receiver), mb, i)
            self.sends.append(_raw_isend(array, receiver % self.schedule.pp, group, tag))

    def _receive(self, action) -> None:
        direction, sender, receiver, mb = A.message_key(action)
        key = (direction, receiver, mb)
        if self._is_local(sender):
            self.received[key] = self.local_mail.pop(key)
            return
        if key not in self.posted:
            self._post_receive(direction, sender, receiver, mb, wait_for_meta=True)
        works, arrays = self.posted.pop(key)
        what = "activation" if direction == A.FORWARD else "gradient"
        for work in works:
            self._wait(work, f"the {what} of microbatch {mb} from stage {sender}", receiver, sender)
            if work.error is not None:
                raise RuntimeError(f"pipeline stage {receiver} receiving the {what} of microbatch {mb}: {work.error}")
        self.received[key] = arrays

    # receives posted early ----------------------------------------------------------------------

    def _post_receives_ahead(self, upcoming) -> None:
        for action in upcoming:
            if action.kind in (A.RECV_F, A.RECV_B):
                direction, sender, receiver, mb = A.message_key(action)
                if (direction, receiver, mb) not in self.posted and not self._is_local(sender):
                    self._post_receive(direction, sender, receiver, mb, wait_for_meta=False)

    def _post_receive(self, direction, sender, receiver, mb, wait_for_meta) -> None:
        """Post the receives of one message if its shapes are known (``wait_for_meta``: wait until they are)."""
        stage = self.stages[receiver]
        if direction == A.FORWARD:
            meta = self._input_meta(receiver, wait=wait_for_meta)
        else:
            meta = stage.output_shapes
        if meta is None:
            return
        arrays = [np.empty(shape, dtype=dtype) for shape, dtype in meta]
        tags = [self._tag(direction, min(sender, receiver), mb, i) for i in range(len(arrays))]
        peer = sender % self.schedule.pp
        works = [_raw_irecv(a, peer, self.schedule.group, t) for a, t in zip(arrays, tags)]
        self.posted[(direction, receiver, mb)] = (works, arrays)

    def _post_meta_receive(self, stage_index) -> None:
        buffer = np.zeros(_META_LEN, dtype=np.int64)
        peer = self.stages[stage_index].rank_of(stage_index - 1)
        tag = self._tag("meta", stage_index - 1, 0)
        self.meta_receives[stage_index] = (p2p.irecv(buffer, src=peer, group=self.schedule.group, tag=tag), buffer)

    def _input_meta(self, stage_index, wait):
        if stage_index not in self.input_meta:
            work, buffer = self.meta_receives[stage_index]
            if not wait and not work.is_completed():
                return None
            self._wait(work, "the shapes of its input activations", stage_index, stage_index - 1)
            meta = _decode_meta(buffer)
            stage = self.stages[stage_index]
            if stage.input_args is not None:
                expected = [(tuple(e.shape), np.dtype(e.dtype)) for e in stage.input_args]
                if meta != expected:
                    raise RuntimeError(
                        f"pipeline stage {stage_index}: stage {stage_index - 1} sends activations of "
                        f"{_describe(meta)}, but this stage's input_args say {_describe(expected)}; make the "
                        "stages' shapes agree (or fix input_args)"
                    )
            self.input_meta[stage_index] = meta
        return self.input_meta[stage_index]

    # helpers ----------------------------------------------------------------------------------

    def _is_local(self, stage_index) -> bool:
        return stage_index in self.stages

    def _tag(self, direction, boundary, mb, index=0) -> int:
        code = (mb * self.schedule.num_stages + boundary) * len(_DIRECTIONS) + _DIRECTIONS[direction]
        return code * _MAX_TENSORS + index

    def _wait(self, work, what, stage_index, peer_stage) -> None:
        timeout = self.schedule.timeout
        try:
            work.wait(timeout)
        except TimeoutError:
            where = "" if stage_index is None else f"stage {stage_index} "
            peer = (
                ""
                if peer_stage is None
                else f" (stage {peer_stage} runs on group rank {peer_stage % self.schedule.pp})"
            )
            raise TimeoutError(
                f"pipeline {where}on group rank {self.schedule.rank} waited {timeout:.1f} s for {what}{peer}; "
                "that rank never sent it: did it fail first (see its error), or do the ranks run different "
                "schedules or microbatch counts?"
            ) from None
        except RuntimeError as error:
            raise RuntimeError(f"pipeline stage {stage_index} receiving {what}: {error}") from None

    def merged_outputs(self):
        m = self.schedule._n_microbatches
        columns = list(zip(*(self.outputs[mb] for mb in range(m))))
        merged = tuple(mg.cat(list(column), dim=0) for column in columns)
        return merged[0] if len(merged) == 1 else merged


class _RawRequest:
    """An MPI request of one bare activation or gradient; a receive checks its length when it completes.

    ``error`` is None, or why the message did not fit its buffer (another
    length than the shapes announced by the metadata message).
    """

    __slots__ = ("request", "nbytes", "status", "error")

    def __init__(self, request, nbytes=None):
        self.request = request
        self.nbytes = nbytes  # a receive's expected length in bytes (None: a send)
        self.status = None if nbytes is None else load_mpi().Status()
        self.error = None

    def Test(self) -> bool:  # noqa: N802  (the name Work calls, after mpi4py's)
        try:
            done = self.request.Test(self.status)
        except load_mpi().Exception as error:  # MPI_ERR_TRUNCATE: a longer message
            self.error = f"MPI failed to receive it: {error}"
            return True
        if done and self.nbytes is not None:
            got = self.status.Get_count(load_mpi().BYTE)
            if got != self.nbytes:
                self.error = f"{got} bytes arrived where the announced shape and dtype take {self.nbytes}"
        return done

    def Wait(self) -> None:  # noqa: N802  (MINIGRAD_DIST_WAIT=spin: the caller asked to spin)
        while not self.Test():
            pass


class _RawWork(Work):
    """``Work`` over a ``_RawRequest``, exposing the receive's ``error`` (None when the message fit)."""

    __slots__ = ()

    @property
    def error(self):
        return self._request.error


def _raw_isend(array, group_peer, group, tag) -> _RawWork:
    """Send ``array``'s bytes alone, without ``p2p.isend``'s header (the metadata message announced its shape).

    The array itself is the message (``p2p.isend`` copies a tensor into a
    message behind its header); MPICH moves a large contiguous message in
    one copy that the receiver drives, while this rank computes.
    """
    if backend.device_of(array) != "cpu":
        backend.synchronize(array)
        array = backend.to_numpy(array)
    comm = collectives.p2p_comm(group)
    request = _RawRequest(comm.Isend(array, group_peer, tag))
    return _RawWork(request, None, [array], "pipeline send", group.spin_wait, buffers=(array,))


def _raw_irecv(array, group_peer, group, tag) -> _RawWork:
    """Receive the bytes of one ``_raw_isend`` into the contiguous NumPy ``array``."""
    comm = collectives.p2p_comm(group)
    request = _RawRequest(comm.Irecv(array, group_peer, tag), array.nbytes)
    return _RawWork(request, None, [array], "pipeline receive", group.spin_wait, buffers=(array,))


def _encode_meta(arrays, stage_index) -> np.ndarray:
    if len(arrays) > _MAX_TENSORS:
        raise ValueError(f"pipeline stage {stage_index} outputs {len(arrays)} tensors; at most {_MAX_TENSORS}")
    meta = np.zeros(_META_LEN, dtype=np.int64)
    meta[0] = len(arrays)
    for i, a in enumerate(arrays):
        if a.ndim > _MAX_DIMS:
            raise ValueError(f"pipeline stage {stage_index}: an output has {a.ndim} dims; at most {_MAX_DIMS}")
        base = 1 + i * (2 + _MAX_DIMS)
        meta[base] = collectives.dtype_code(a.dtype, "pipeline send")
        meta[base + 1] = a.ndim
        meta[base + 2 : base + 2 + a.ndim] = a.shape
    return meta


def _decode_meta(meta) -> list:
    result = []
    for i in range(int(meta[0])):
        base = 1 + i * (2 + _MAX_DIMS)
        ndim = int(meta[base + 1])
        shape = tuple(int(d) for d in meta[base + 2 : base + 2 + ndim])
        result.append((shape, np.dtype(collectives.dtype_of_code(int(meta[base])))))
    return result


def _describe(metas) -> str:
    return ", ".join(f"shape {shape} dtype {np.dtype(dtype)}" for shape, dtype in metas) or "nothing"
