"""``ZeroRedundancyOptimizer``: any minigrad optimizer, with its state sharded across the ranks (ZeRO-1).

Construction, in this order:

1. Validate the arguments and collect the parameter groups (the wrapper
   keeps the *full* parameters in ``param_groups``, as PyTorch's does).
2. Check that every rank passed the same parameters (count, shapes, dtypes),
   so that every rank computes the same layout.
3. Cut each group, per dtype, into a segment and lay it out over the ranks
   (``flat_shard.py``): flat, balanced shards by default, whole parameters
   with ``partition="parameters"``. With ``overlap_with_ddp`` this waits
   until ``hook_with_zero_step`` hands over DDP's buckets as the segments.
4. Build the local optimizer (``optimizer_class``) over this rank's pieces,
   one local group per wrapper group, and copy its defaults back into the
   wrapper's groups.

Each ``step()``:

1. Copy the hyper-parameters of the wrapper's groups into the local ones
   (so ``zero.param_groups[0]["lr"] = ...`` and LR schedulers work).
2. Point each piece's ``.grad`` at its run of the parameter's ``.grad``
   (already averaged, e.g. by DDP); pieces of parameters without a
   gradient get None and the local optimizer skips them, as the wrapped
   optimizer would.
3. Step the local optimizer: it updates this rank's pieces of the
   parameters in place.
4. All-gather every segment's updated shards (one collective per segment)
   and write the other ranks' pieces into the parameters.

Every rank thus holds the full parameters but only 1/N of the optimizer
state. ``consolidate_state_dict(to)`` gathers the state on one rank in the
layout the wrapped optimizer would have over the full parameters.
"""

from __future__ import annotations

import numpy as np

from minigrad import backend
from minigrad.grad_mode import enable_grad, no_grad
from minigrad.optim import SGD, Adadelta, Adagrad, Adam, RMSprop
from minigrad.optim.optimizer import Optimizer, _checked_groups
from minigrad.tensor import Tensor
from minigrad_dist import collectives
from minigrad_dist.process_group import ProcessGroup
from minigrad_dist.zero.flat_shard import flat_layout, parameter_layout
from minigrad_dist.zero.segment import Segment

# Optimizers whose update of an element depends only on that element's gradient and state: they may step
# any slice of a parameter. AdamW is an Adam.
ELEMENTWISE_OPTIMIZERS = (SGD, Adam, RMSprop, Adadelta, Adagrad)
PARTITIONS = ("flat", "parameters")
_NOT_HYPERPARAMETERS = ("params", "param_names")


class ZeroRedundancyOptimizer(Optimizer):
    """Wraps an optimizer so that each rank keeps the state of only 1/N of the parameters' elements.

    ``torch.distributed.optim.ZeroRedundancyOptimizer`` with flat, balanced
    shards (see the module docstring for the algorithm). Use it like the
    wrapped optimizer, on the parameters of a DDP model: ``.grad`` must
    hold the averaged gradients when ``step()`` is called.

    Args:
        params: parameters, ``(name, parameter)`` pairs or parameter groups,
            the same on every rank, in the same order.
        optimizer_class: the local optimizer, a subclass of ``minigrad.optim.Optimizer``.
        process_group: the group the state is sharded over (default: the world).
        parameters_as_bucket_view: accepted for PyTorch compatibility; the
            pieces always view the parameters' memory, so there is nothing to bucket.
        overlap_with_ddp: step during DDP's backward; the shards are then the
            DDP buckets, handed over by
            ``minigrad_dist.algorithms.ddp_zero_hook.hook_with_zero_step`` (see there).
        partition: ``"flat"`` (default): the concatenated parameters are cut
            into N equal shards, parameters split at shard boundaries; needs an
            element-wise optimizer (SGD, Adam, AdamW, RMSprop, Adadelta,
            Adagrad). ``"parameters"``: whole parameters, largest first, each to
            the least loaded rank (PyTorch's partition), for any optimizer;
            an optimizer that couples parameters (LBFGS) then sees only its
            rank's parameters, so it equals the plain one only element-wise, as in PyTorch.
        **defaults: the wrapped optimizer's arguments (``lr=...``).

    Attributes:
        optim: the local optimizer over this rank's pieces.
        param_groups: the full parameter groups; their hyper-parameters are
            the ones used (copied into ``optim`` at each step).

    Warning:
        ``step()``, ``consolidate_state_dict()``, ``add_param_group()`` and
        the constructor are collective: every rank must call them, in the same order.

    Note:
        Each piece is stepped by its owner, with the owner's ``.grad``, and
        then copied to every rank: replicas never drift apart, and they
        train like the wrapped optimizer when every rank holds the same
        averaged gradients (as after DDP's backward). A parameter whose
        ``.grad`` is None is skipped, as the wrapped optimizer skips it.
        ``memory_holdings()`` lets ``minigrad_dist.memory.memory_report(model, zero)``
        count this rank's optimizer state.

    Raises:
        TypeError: ``optimizer_class`` is not an Optimizer class, or
            ``process_group`` not a ProcessGroup.
        ValueError: no parameters; an unknown ``partition``; ``partition="flat"``
            with an optimizer that is not element-wise (use ``partition="parameters"``);
            a group mixing devices; a non-contiguous parameter; ranks that
            passed different parameters (names the rank and the parameter).
    """

    def __init__(self, params, optimizer_class, process_group=None, parameters_as_bucket_view: bool = False,
                 overlap_with_ddp: bool = False, partition: str = "flat", **defaults):
        _check_optimizer_class(optimizer_class, partition)
        if overlap_with_ddp and partition != "flat":
            raise ValueError(
                "ZeroRedundancyOptimizer: overlap_with_ddp=True shards DDP's buckets and needs partition='flat'; "
                "choose how buckets are split with hook_with_zero_step(..., shard_buckets=...)"
            )
        group = process_group if process_group is not None else collectives.get_default_group()
        if not isinstance(group, ProcessGroup):
            raise TypeError(
                f"ZeroRedundancyOptimizer: process_group must be a ProcessGroup, got {type(group).__name__}"
            )
        self.optimizer_class = optimizer_class
        self.process_group = group
        self.partition = partition
        self.parameters_as_bucket_view = parameters_as_bucket_view
        self.overlap_with_ddp = overlap_with_ddp
        self.optim = None
        self.segments = []
        self._loads = [0] * group.size()
        self._pieces_of = {}  # id(param) -> [(segment, piece, local tensor)]
        self._consolidated = None
        self._consolidated_on = None
        self.overlap = None  # the OverlapStepper, once hook_with_zero_step attached DDP's buckets
        self._constructed = False
        super().__init__(params, defaults)
        self._verify_across_ranks()
        self._constructed = True
        if not overlap_with_ddp:
            for index in range(len(self.param_groups)):
                self._add_segments(self._segments_of_group(index))
            self._build_local_optimizer()

    # -- construction -------------------------------------------------------------------------

    def add_param_group(self, param_group: dict) -> None:
        """Add a group (collective: every rank adds the same parameters).

        Raises:
            RuntimeError: with ``overlap_with_ddp`` (the shards follow DDP's buckets).
            ValueError/TypeError: as ``Optimizer.add_param_group``, or a group
                mixing devices or holding a non-contiguous parameter.
        """
        if self.overlap_with_ddp and self._constructed:
            raise RuntimeError("ZeroRedundancyOptimizer: add_param_group is not supported with overlap_with_ddp=True "
                               "(the shards are DDP's buckets)")
        super().add_param_group(param_group)
        _check_group_parameters(self.param_groups[-1], len(self.param_groups) - 1)
        if not self._constructed:
            return  # the constructor builds segments and the local optimizer once every group is in
        self._verify_across_ranks()
        index = len(self.param_groups) - 1
        segments = self._segments_of_group(index)
        self._add_segments(segments)
        local = [t for segment in segments for t in segment.local]
        self.optim.add_param_group({"params": local, **_hyperparameters(self.param_groups[index])})
        _copy_missing(self.optim.param_groups[-1], self.param_groups[index])

    def _verify_across_ranks(self) -> None:
        """Step 2: every rank must pass the same parameters (ValueError on every rank, naming the first difference)."""
        mine = [(g, i, _name(group, i), tuple(p.shape), str(p.dtype))
                for g, group in enumerate(self.param_groups) for i, p in enumerate(group["params"])]
        everyone = self.process_group.allgather_obj(mine)
        for rank, theirs in enumerate(everyone):
            if theirs == everyone[0]:
                continue
            if len(theirs) != len(everyone[0]):
                raise ValueError(
                    f"ZeroRedundancyOptimizer: rank {rank} passed {len(theirs)} parameters but rank 0 passed "
                    f"{len(everyone[0])}; every rank must pass the same parameters in the same order"
                )
            for ours, other in zip(everyone[0], theirs):
                if ours != other:
                    raise ValueError(
                        f"ZeroRedundancyOptimizer: parameter {other[1]} of group {other[0]} ({other[2]}) is "
                        f"{other[3]} {other[4]} on rank {rank} but {ours[3]} {ours[4]} on rank 0 (group "
                        f"{ours[0]}); every rank must pass the same parameters in the same order"
                    )

    def _segments_of_group(self, index: int) -> list:
        """Step 3: one segment per dtype of group ``index``, laid out by ``partition``."""
        by_dtype = {}
        for p in self.param_groups[index]["params"]:
            by_dtype.setdefault(p.dtype, []).append(p)
        rank, world = self.process_group.rank(), self.process_group.size()
        segments = []
        for params in by_dtype.values():
            numels = [p.array.size for p in params]
            if self.partition == "flat":
                segments.append(Segment(params, flat_layout(numels, world), rank))
            else:
                segments.append(Segment(params, parameter_layout(numels, world, self._loads), rank, own_params=True))
        return segments

    def _add_segments(self, segments) -> None:
        for segment in segments:
            self.segments.append(segment)
            for piece, tensor in zip(segment.pieces, segment.local):
                self._pieces_of.setdefault(id(segment.params[piece.param]), []).append((segment, piece, tensor))

    def _build_local_optimizer(self) -> None:
        """Step 4: the local optimizer over this rank's pieces, one local group per wrapper group."""
        local_groups = []
        for group in self.param_groups:
            tensors = [t for p in group["params"] for _, _, t in self._pieces_of.get(id(p), [])]
            local_groups.append({"params": tensors, **_hyperparameters(group)})
        try:
            self.optim = self.optimizer_class(local_groups, **self.defaults)
        except TypeError as error:
            raise TypeError(f"ZeroRedundancyOptimizer: {self.optimizer_class.__name__} could not be built with "
                            f"the arguments {sorted(self.defaults)}: {error}") from error
        for group, local in zip(self.param_groups, self.optim.param_groups):
            _copy_missing(local, group)

    def _attach_segments(self, segments) -> None:
        """Overlap mode: use ``segments`` (DDP's buckets) and build the local optimizer over them."""
        self.segments, self._pieces_of = [], {}
        self._add_segments(segments)
        self._build_local_optimizer()

    # -- stepping -------------------------------------------------------------------------------

    def step(self, closure=None):
        """Update the parameters (steps 1-4 of the module docstring); returns ``closure()``'s loss or None.

        Collective. With ``partition="parameters"`` the closure is handed to
        the local optimizer (LBFGS calls it several times: it must not call
        collectives then); otherwise it is called once, before the update.
        With ``overlap_with_ddp``, see ``hook_with_zero_step``: the update
        happened during backward and ``step()`` waits for its all-gathers.

        Raises:
            RuntimeError: overlap mode without a registered hook, or without
                a backward since the last step.
        """
        self._consolidated = None
        if self.overlap_with_ddp:
            if closure is not None:
                raise ValueError("ZeroRedundancyOptimizer: step(closure) is not supported with overlap_with_ddp=True")
            if self.overlap is None:
                raise RuntimeError(
                    "ZeroRedundancyOptimizer(overlap_with_ddp=True): register "
                    "ddp.register_comm_hook(None, hook_with_zero_step(allreduce_hook, ddp, zero)) before training"
                )
            self.overlap.finish_step()
            return None
        loss = None
        if closure is not None and self.partition == "flat":
            with enable_grad():
                loss = closure()
            closure = None
        self._sync_hyperparameters()
        with no_grad():
            for segment in self.segments:
                segment.refresh_views()
                segment.grads_from_params()
            if any(segment.local for segment in self.segments):
                local_loss = self.optim.step(closure)
                loss = local_loss if closure is not None else loss
            elif closure is not None:
                with enable_grad():
                    loss = closure()  # this rank owns nothing, but the caller still gets the loss
            for segment in self.segments:
                segment.clear_grads()
            works = [segment.gather(self.process_group, async_op=True) for segment in self.segments]
            for work in works:
                if work is not None:
                    work.wait(collectives._world.timeout)
        return loss

    def _sync_hyperparameters(self) -> None:
        """Step 1: the wrapper's hyper-parameters into the local groups."""
        for group, local in zip(self.param_groups, self.optim.param_groups):
            local.update(_hyperparameters(group))

    def _step_segment(self, segment, set_grads) -> None:
        """Overlap mode: step this rank's pieces of one segment, their gradients set by ``set_grads(segment)``."""
        self._sync_hyperparameters()
        with no_grad():
            segment.refresh_views()
            set_grads(segment)
            if segment.local:
                self.optim.step()
            segment.clear_grads()

    # -- state dict -----------------------------------------------------------------------------

    def consolidate_state_dict(self, to: int = 0) -> None:
        """Gather the optimizer state on group rank ``to`` (collective), for ``state_dict()`` there.

        The state of each parameter is reassembled from its pieces: element-wise
        buffers are concatenated and reshaped like the parameter; scalars (the
        step count) come from one piece.

        Raises:
            ValueError: ``to`` is not a rank of the group.
            RuntimeError: overlap mode before the hook attached DDP's buckets.
        """
        if not 0 <= to < self.process_group.size():
            raise ValueError(f"consolidate_state_dict: to={to} is not a rank of the group "
                             f"(size {self.process_group.size()})")
        if self.optim is None:
            raise RuntimeError("consolidate_state_dict: the optimizer has no shards yet (overlap_with_ddp=True: "
                               "register hook_with_zero_step with DDP first)")
        gathered = self.process_group.gather_obj(self._local_state_pieces(), to)
        self._consolidated_on = to
        self._consolidated = None
        if self.process_group.rank() == to:
            self._consolidated = self._assemble(gathered)

    def _local_state_pieces(self) -> dict:
        """This rank's state, per parameter index: ``[(start, stop, {name: ("elements"|"value", data)})]``."""
        pieces = {}
        for index, param in enumerate(self._all_params()):
            for _, piece, tensor in self._pieces_of.get(id(param), []):
                state = self.optim.state.get(tensor)
                if not state:
                    continue
                entry = {name: _pack_value(value, tensor) for name, value in state.items()}
                pieces.setdefault(index, []).append((piece.start, piece.stop, entry))
        return pieces

    def _assemble(self, gathered) -> dict:
        params = self._all_params()
        runs = {}
        for rank_pieces in gathered:
            for index, entries in rank_pieces.items():
                runs.setdefault(index, []).extend(entries)
        state = {}
        for index in sorted(runs):
            param = params[index]
            entries = sorted(runs[index], key=lambda entry: entry[0])
            covered = sum(stop - start for start, stop, _ in entries)
            if covered != param.array.size:
                raise RuntimeError(
                    f"consolidate_state_dict: parameter {index} has optimizer state for {covered} of its "
                    f"{param.array.size} elements: the ranks disagreed on whether it had a gradient"
                )
            state[index] = _join_values(param, entries)
        groups, start = [], 0
        for group in self.param_groups:
            packed = _hyperparameters(group)
            if "param_names" in group:
                packed["param_names"] = list(group["param_names"])
            packed["params"] = list(range(start, start + len(group["params"])))
            start += len(group["params"])
            groups.append(packed)
        return {"state": state, "param_groups": groups}

    def state_dict(self) -> dict:
        """The full optimizer state, on the rank ``consolidate_state_dict(to)`` gathered it on.

        The layout is exactly the wrapped optimizer's over the full
        parameters, so it loads into a plain ``optimizer_class`` (or into
        ``load_state_dict`` of any ``ZeroRedundancyOptimizer`` over the same parameters).

        Raises:
            RuntimeError: not consolidated since the last step, or consolidated on another rank.
        """
        if self._consolidated is None:
            if self._consolidated_on is not None and self._consolidated_on != self.process_group.rank():
                raise RuntimeError(
                    f"ZeroRedundancyOptimizer.state_dict(): the state was consolidated on rank "
                    f"{self._consolidated_on}, not on this rank ({self.process_group.rank()}); call "
                    "state_dict() there, or consolidate_state_dict(to=...) on all ranks for this one"
                )
            raise RuntimeError(
                "ZeroRedundancyOptimizer.state_dict(): the optimizer state has not been consolidated on this rank "
                "since the last step; call consolidate_state_dict(to=...) on all ranks first"
            )
        return self._consolidated

    def load_state_dict(self, state_dict: dict) -> None:
        """Load a full state (from ``state_dict()``, or a plain optimizer's); each rank keeps its pieces' share.

        Raises:
            KeyError, TypeError: the layout is malformed (a key missing, an entry of the wrong type), as
                ``Optimizer.load_state_dict``.
            ValueError: the groups differ in number or size from this optimizer's.
            RuntimeError: overlap mode before ``hook_with_zero_step`` was registered (there are no shards yet).
        """
        if self.optim is None:
            raise RuntimeError("ZeroRedundancyOptimizer.load_state_dict: with overlap_with_ddp=True the shards are "
                               "DDP's buckets: register hook_with_zero_step with ddp.register_comm_hook first")
        saved_groups = _checked_groups(state_dict)
        if len(saved_groups) != len(self.param_groups):
            raise ValueError(f"loaded state dict has {len(saved_groups)} parameter groups, the optimizer "
                             f"{len(self.param_groups)}")
        for i, (group, saved) in enumerate(zip(self.param_groups, saved_groups)):
            if len(group["params"]) != len(saved["params"]):
                raise ValueError(f"loaded state dict's group {i} has {len(saved['params'])} parameters, the "
                                 f"optimizer's {len(group['params'])}")
        param_of = {}
        for group, saved in zip(self.param_groups, saved_groups):
            param_of.update(zip(saved["params"], group["params"]))
        local_state = {}
        for key, values in state_dict["state"].items():
            param = param_of.get(key)
            if param is None:
                continue
            for _, piece, tensor in self._pieces_of.get(id(param), []):
                local_state[tensor] = {
                    name: _slice_value(value, param, piece, tensor) for name, value in values.items()
                }
        for group, saved in zip(self.param_groups, saved_groups):
            group.update({k: v for k, v in saved.items() if k not in _NOT_HYPERPARAMETERS})
        index_of, local_groups = {}, []
        for group, local in zip(self.param_groups, self.optim.param_groups):
            for tensor in local["params"]:
                index_of[id(tensor)] = len(index_of)
            local_groups.append({**_hyperparameters(group), "params": [index_of[id(t)] for t in local["params"]]})
        self.optim.load_state_dict({
            "state": {index_of[id(t)]: values for t, values in local_state.items()},
            "param_groups": local_groups,
        })
        self._sync_hyperparameters()

    # -- memory ---------------------------------------------------------------------------------

    def memory_holdings(self) -> dict:
        """What this rank holds beyond the parameters (``minigrad_dist.memory.memory_report``).

        ``optimizer_state``: the local optimizer's state (this rank's shard);
        ``gradients``: with gradient sharding (ZeRO-2), the reduced gradient
        shards held until ``step()``.
        """
        state = [] if self.optim is None else [
            v for values in self.optim.state.values() for v in values.values() if isinstance(v, Tensor)
        ]
        gradients = [] if self.overlap is None else list(self.overlap.held_gradients)
        return {"optimizer_state": state, "gradients": gradients}

    def _all_params(self) -> list:
        return [p for group in self.param_groups for p in group["params"]]

    # -- the checkpoint protocol of minigrad_dist.checkpoint ------------------------------------

    def checkpoint_state(self, sharded: bool = False):
        """The optimizer state ``save_checkpoint`` writes; collective: every rank calls it.

        Args:
            sharded: False: ``consolidate_state_dict(to=0)``, then the full
                state (the wrapped optimizer's layout over the full
                parameters, loadable with any number of ranks) on group rank 0
                and None on the others. True: this rank's shard state and the
                layout of its pieces (no communication).

        Raises:
            RuntimeError: overlap mode before ``hook_with_zero_step`` attached DDP's buckets.
        """
        if not sharded:
            self.consolidate_state_dict(to=0)
            return self.state_dict() if self.process_group.rank() == 0 else None
        if self.optim is None:
            raise RuntimeError("ZeroRedundancyOptimizer.checkpoint_state: the optimizer has no shards yet "
                               "(overlap_with_ddp=True: register hook_with_zero_step with DDP first)")
        return {"layout": self._piece_layout(), "local": self.optim.state_dict()}

    def load_checkpoint_state(self, state, sharded: bool = False) -> None:
        """Restore what ``checkpoint_state(sharded)`` returned; each rank keeps its share (no communication).

        Raises:
            ValueError: a sharded state saved with other pieces (another world
                size, rank or partition): load the full format instead.
            RuntimeError: as ``load_state_dict``.
        """
        if not sharded:
            self.load_state_dict(state)
            return
        if self.optim is None:
            raise RuntimeError("ZeroRedundancyOptimizer.load_checkpoint_state: with overlap_with_ddp=True the "
                               "shards are DDP's buckets: register hook_with_zero_step first")
        layout = self._piece_layout()
        if not isinstance(state, dict) or state.get("layout") != layout:
            saved = state.get("layout") if isinstance(state, dict) else None
            raise ValueError(
                "ZeroRedundancyOptimizer.load_checkpoint_state: the sharded state was saved by rank "
                f"{(saved or {}).get('rank')} of {(saved or {}).get('world_size')} with other pieces than this "
                f"rank's ({layout['rank']} of {layout['world_size']}); a sharded optimizer state loads only into "
                "the same rank of the same layout: save the full format (sharded=False) to change it"
            )
        self.optim.load_state_dict(state["local"])
        for group, local in zip(self.param_groups, self.optim.param_groups):
            group.update(_hyperparameters(local))

    def _piece_layout(self) -> dict:
        """Plain data naming this rank's pieces, in the local optimizer's order: ``(param index, start, stop)``."""
        where = {}
        for index, param in enumerate(self._all_params()):
            for _, piece, tensor in self._pieces_of.get(id(param), []):
                where[id(tensor)] = [index, piece.start, piece.stop]
        pieces = [where[id(t)] for local in self.optim.param_groups for t in local["params"]]
        return {"world_size": self.process_group.size(), "rank": self.process_group.rank(), "pieces": pieces}


def _check_optimizer_class(optimizer_class, partition) -> None:
    if not (isinstance(optimizer_class, type) and issubclass(optimizer_class, Optimizer)):
        raise TypeError("ZeroRedundancyOptimizer: optimizer_class must be a subclass of minigrad.optim.Optimizer "
                        f"(e.g. minigrad.optim.Adam), got {optimizer_class!r}")
    if partition not in PARTITIONS:
        raise ValueError(f"ZeroRedundancyOptimizer: partition must be one of {PARTITIONS}, got {partition!r}")
    if partition == "flat" and not issubclass(optimizer_class, ELEMENTWISE_OPTIMIZERS):
        names = ", ".join(c.__name__ for c in ELEMENTWISE_OPTIMIZERS)
        raise ValueError(
            f"ZeroRedundancyOptimizer: partition='flat' splits parameters between ranks, which is exact only for "
            f"optimizers that update each element on its own ({names} and their subclasses); "
            f"{optimizer_class.__name__} is not one: pass partition='parameters' to give each rank whole parameters"
        )


def _check_group_parameters(group: dict, index: int) -> None:
    params = group["params"]
    for i, p in enumerate(params):
        if p.device != params[0].device:
            raise ValueError(
                f"ZeroRedundancyOptimizer: parameter group {index} mixes devices ({_name(group, 0)} on "
                f"{params[0].device}, {_name(group, i)} on {p.device}); put each device's parameters in its own group"
            )
        if not p.array.flags.c_contiguous:
            raise ValueError(f"ZeroRedundancyOptimizer: {_name(group, i)} is not contiguous; shards view "
                             "parameters as flat arrays (make it contiguous before wrapping)")


def _name(group: dict, i: int) -> str:
    names = group.get("param_names")
    return repr(names[i]) if names else f"parameter {i}"


def _hyperparameters(group: dict) -> dict:
    return {k: v for k, v in group.items() if k not in _NOT_HYPERPARAMETERS}


def _copy_missing(source: dict, target: dict) -> None:
    for key, value in _hyperparameters(source).items():
        target.setdefault(key, value)


def _pack_value(value, tensor):
    """One state value of a piece, for shipping: element-wise buffers marked "elements"."""
    array = value.array if isinstance(value, Tensor) else value
    if backend.is_array(array):
        host = backend.to_numpy(array).copy()
        kind = "elements" if tuple(array.shape) == tuple(tensor.shape) else "value"
        return kind, host
    return "value", value


def _join_values(param, entries) -> dict:
    """A parameter's full state from its pieces' ``(start, stop, {name: (kind, data)})``, sorted by start."""
    joined = {}
    for name, (kind, first) in entries[0][2].items():
        if kind == "value":
            joined[name] = Tensor(first) if isinstance(first, np.ndarray) else first
            continue
        flat = np.empty(param.array.size, dtype=first.dtype)
        for start, stop, values in entries:
            flat[start:stop] = values[name][1].reshape(-1)
        joined[name] = Tensor(backend.to_device(flat.reshape(param.shape), param.device))
    return joined


def _slice_value(value, param, piece, tensor):
    """This piece's share of one full state value: element-wise buffers (shaped like the parameter) are sliced."""
    array = value.array if isinstance(value, Tensor) else value
    if not backend.is_array(array) or tuple(array.shape) != tuple(param.shape):
        return value
    return array.reshape(-1)[piece.start : piece.stop].reshape(tensor.shape)
