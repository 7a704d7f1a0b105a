"""``FullyShardedDataParallel``: the module wrapper that runs the FSDP algorithm (see the package docstring).

The code follows the package docstring's steps: construction (step 1),
forward (steps 2-3), backward (steps 4-6), then state dicts and the
optimizer-state conversion that checkpoints need.
"""

from __future__ import annotations

import contextlib
import enum
from collections import OrderedDict

import numpy as np

from minigrad import backend, engine
from minigrad.grad_mode import is_grad_enabled, no_grad
from minigrad.nn.module import IncompatibleKeys, Module
from minigrad.tensor import Tensor
from minigrad_dist import collectives
from minigrad_dist.ddp.reducer import tensors_in
from minigrad_dist.fsdp.flat_param import FlatParamHandle, ParamInfo, ReshardedArray, allgather_into
from minigrad_dist.fsdp.mixed_precision import MixedPrecisionPolicy
from minigrad_dist.fsdp.wrap import auto_wrap
from minigrad_dist.process_group import ProcessGroup, ReduceOp

FLAT_PARAM = "_flat_param"
WRAPPED = "_fsdp_wrapped_module"
LAYOUT_KEY = "_fsdp_sharded_layout"
# Where each timeline event goes when the timeline is a trace.Tracer (lanes of the DDP trace format).
_TRACE_LANES = {"gather": "all-gather", "prefetch": "all-gather", "wait": "all-gather", "forward": "forward",
                "pre_backward": "backward", "reshard": "reshard", "reduce_scatter": "reduce-scatter"}


class StateDictType(enum.Enum):
    """What ``state_dict()`` returns (``FullyShardedDataParallel.state_dict_type``).

    ``FULL_STATE_DICT``: the unwrapped model's state dict (original names,
    full values), on every rank. ``SHARDED_STATE_DICT``: each rank's flat
    shards (``"<unit>._flat_param"``) plus their layout (``"_fsdp_sharded_layout"``)
    and the buffers; loadable only with the same number of ranks, each rank
    its own.
    """

    FULL_STATE_DICT = "full"
    SHARDED_STATE_DICT = "sharded"


class FullyShardedDataParallel(Module):
    """Shard a module's parameters, gradients and optimizer state over the ranks of a group.

    Each ``FullyShardedDataParallel`` instance is one *unit*: its parameters
    (those of ``module`` not inside a nested unit) are stored as one flat
    parameter, padded to a multiple of the world size, of which rank ``r``
    keeps slice ``r``. ``parameters()`` yields these shards, so an optimizer
    built on the wrapper updates only this rank's slice. Around each unit's
    forward and backward the full parameters are all-gathered and freed
    again, and gradients are reduce-scattered (averaged) into the shards'
    ``.grad``: the algorithm is the numbered steps of the package docstring.

    Args:
        module: the module to shard (its parameters are taken over, in place:
            keep using the wrapper, not ``module``).
        process_group: the group to shard over (default: the world).
        auto_wrap_policy: makes submodules units of their own before this one
            (``ModuleWrapPolicy``, ``size_based_auto_wrap_policy``, or any
            ``policy(module, recurse, nonwrapped_numel) -> bool``).
        reshard_after_forward: free a (non-root) unit's gathered parameters
            after its forward and gather them again for its backward
            (``ShardingStrategy.FULL_SHARD``); False keeps them from forward
            to the end of backward (``SHARD_GRAD_OP``). The root unit always
            keeps them, as its backward starts right away.
        mixed_precision: a ``MixedPrecisionPolicy`` (or ``MixedPrecision``).
        sync_module_states: broadcast rank 0's parameters and buffers first
            (otherwise every rank must have built the same initial model).
        forward_prefetch: from the second iteration on, start the next unit's
            all-gather when a unit's forward starts.
        backward_prefetch: start the all-gather of the unit expected next in
            the backward (reverse forward order) when a unit's backward starts.
        timeout: seconds a wait for the other ranks may take (None: forever).

    Attributes:
        timeline: None, or a list the root appends ``(event, unit index)``
            pairs to (``"gather"``, ``"prefetch"``, ``"forward"``,
            ``"reshard"``, ``"pre_backward"``, ``"reduce_scatter"``,
            ``"wait"``), set it to ``[]`` on the root to record one; or a
            ``minigrad_dist.ddp.trace.Tracer``, which records each event as
            an instant on a lane (``all-gather``, ``forward``, ``backward``,
            ``reshard``, ``reduce-scatter``) of the DDP trace format (with
            ``tracer.start()`` its ``backward`` lane also gets every graph node).

    Raises:
        TypeError: ``module`` is not a Module, or the policy is not callable.
        ValueError: ``module`` is already wrapped, or one unit's parameters
            differ in dtype, device or ``requires_grad``.

    .. warning::
        Like PyTorch's FSDP, every rank must run the same units in the same
        order (forward and backward): all-gathers and reduce-scatters are
        collectives. A rank whose backward reduced other units than the
        others raises a RuntimeError at the end of the backward, on every rank.

    .. warning::
        The original parameters (``module.weight``) are valid only while
        their unit is unsharded (inside its forward and backward, or inside
        ``summon_full_params``); elsewhere any computation with them raises.
    """

    def __init__(self, module, process_group=None, *, auto_wrap_policy=None, reshard_after_forward: bool = True,
                 mixed_precision=None, sync_module_states: bool = False, forward_prefetch: bool = True,
                 backward_prefetch: bool = True, timeout: float | None = None):
        Module.__init__(self)  # not super(): fully_shard's classes put the module's own class after this one
        if not isinstance(module, Module):
            raise TypeError(f"FullyShardedDataParallel: module must be a minigrad.nn.Module, got "
                            f"{type(module).__name__}")
        if isinstance(module, FullyShardedDataParallel):
            raise ValueError("FullyShardedDataParallel: the module is already wrapped; wrap it only once")
        if auto_wrap_policy is not None and not callable(auto_wrap_policy):
            raise TypeError(f"FullyShardedDataParallel: auto_wrap_policy must be callable, got "
                            f"{type(auto_wrap_policy).__name__}")
        mixed_precision = MixedPrecisionPolicy() if mixed_precision is None else mixed_precision
        if not isinstance(mixed_precision, MixedPrecisionPolicy):
            raise TypeError(f"FullyShardedDataParallel: mixed_precision must be a MixedPrecisionPolicy, got "
                            f"{type(mixed_precision).__name__}")
        group = _resolve_group(process_group)
        options = {"process_group": group, "reshard_after_forward": reshard_after_forward,
                   "mixed_precision": mixed_precision, "sync_module_states": sync_module_states,
                   "forward_prefetch": forward_prefetch, "backward_prefetch": backward_prefetch, "timeout": timeout}
        # Step 1a: nested units first (bottom-up), so this unit owns only what is left.
        if auto_wrap_policy is not None:
            auto_wrap(module, auto_wrap_policy, lambda child: FullyShardedDataParallel(child, **options), _is_unit)
        self._fsdp_wrapped_module = module
        self._group = group
        self._reshard_after_forward = reshard_after_forward
        self._mixed_precision = mixed_precision
        self._forward_prefetch = forward_prefetch
        self._backward_prefetch = backward_prefetch
        self._timeout = timeout
        # Step 1b: flatten and shard this unit's own parameters; the originals leave the module registries.
        infos, self._owner_names = _own_parameters(module)
        _verify_same_parameters(group, infos)
        self._handle = FlatParamHandle(infos, group, mixed_precision.param_dtype, mixed_precision.reduce_dtype,
                                       sync_module_states)  # validates before the module is changed
        _take_over(infos)
        if self._handle.flat_param is not None:
            self._flat_param = self._handle.flat_param
        if sync_module_states and group.size() > 1:
            _broadcast_own_buffers(module, group)
        self._grad_hooks = [info.param.register_post_accumulate_grad_hook(self._on_grad_accumulated)
                            for info in infos if info.param.requires_grad]
        # Step 1c: this unit is the root of everything below it until an outer unit wraps it.
        nested = [m for m in _modules_below(module) if _is_unit(m)]
        self._units = [self, *nested]
        for unit in self._units:
            object.__setattr__(unit, "_fsdp_root", self)  # not a child module: plain attribute
        self._reset_root_state()
        self.timeline = None

    def _reset_root_state(self):
        self._control = None  # the root's own communicator for the end-of-backward agreement (first forward)
        self._forward_order = []
        self._order_recorded = False
        self._forward_visit = 0
        self._in_backward = False
        self._outstanding = []
        self._sync_gradients = True
        self._state_dict_type = StateDictType.FULL_STATE_DICT
        self._summoned = None
        self._broken = None
        self._accumulated = 0
        self._pre_backward_done = False
        self._handled_in_backward = False
        self._reduced_in_hooks = False

    @property
    def module(self) -> Module:
        """The wrapped module."""
        return self._fsdp_wrapped_module

    @property
    def process_group(self) -> ProcessGroup:
        """The group this unit is sharded over."""
        return self._group

    def __getattr__(self, name):
        # As PyTorch's wrapper: attributes the wrapper lacks are the wrapped module's (model.body, model.fc).
        try:
            return super().__getattr__(name)
        except AttributeError:
            wrapped = self.__dict__.get("_modules", {}).get(WRAPPED)
            if wrapped is None:
                raise
            return getattr(wrapped, name)

    def get_submodule(self, target: str) -> Module:
        """The submodule at ``target``, a path in the unwrapped model ("body.0"); units are returned wrapped."""
        module = self
        for part in target.split(".") if target else ():
            while _is_unit(module) and part != WRAPPED:
                module = module._fsdp_wrapped_module
            module = Module.get_submodule(module, part)
        return module

    def __getitem__(self, index):
        """``model[i]`` of a wrapped ``Sequential``."""
        return self._fsdp_wrapped_module[index]

    def _is_root(self) -> bool:
        return self._fsdp_root is self

    def _index(self) -> int:
        return self._fsdp_root._units.index(self)

    def _log(self, event: str, unit) -> None:
        timeline = self._fsdp_root.timeline
        if timeline is None:
            return
        if isinstance(timeline, list):
            timeline.append((event, unit._index()))
        else:  # a ddp.trace.Tracer: an instant on the event's lane of the DDP trace format
            timeline.instant(_TRACE_LANES[event], f"{event} unit {unit._index()}", unit=unit._index())

    # -- names: the unwrapped model's, without "_fsdp_wrapped_module." ------------------------

    def named_parameters(self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True):
        """``(name, flat shard)`` pairs; names are the units' paths in the unwrapped model plus ``_flat_param``."""
        for name, param in super().named_parameters(prefix, recurse, remove_duplicate):
            yield _clean(name), param

    def named_buffers(self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True):
        """``(name, buffer)`` pairs under the unwrapped model's names."""
        for name, buf in super().named_buffers(prefix, recurse, remove_duplicate):
            yield _clean(name), buf

    # -- forward (steps 2 and 3) ------------------------------------------------------------------

    def forward(self, *args, **kwargs):
        """Gather this unit's parameters, run the wrapped module, reshard (see the package docstring)."""
        root = self._fsdp_root
        if self is root:
            args, kwargs = self._root_pre_forward(args, kwargs)
        self._pre_forward()
        output = self._fsdp_wrapped_module(*args, **kwargs)
        self._post_forward(output)
        if self is root:
            self._root_post_forward(output)
        return output

    def _root_pre_forward(self, args, kwargs):
        self._check_usable()
        if self._summoned is not None:
            raise RuntimeError("FullyShardedDataParallel: cannot run forward inside summon_full_params(); "
                               "leave the context first")
        if self._in_backward:
            self._recover_from_failed_backward()
        if self._control is None and self._group.size() > 1:
            # Made here, when no collective of this model is in flight: duplicating a communicator is one.
            self._control = ProcessGroup(self._group.comm, self._group.world_ranks, allow_two_level=False)
        for unit in self._units:  # gathered values may be stale (a forward without backward, a loaded state)
            unit._handle.reshard(self._timeout)
        self._forward_visit = 0
        dtype = self._mixed_precision.param_dtype
        if dtype is not None:
            args, kwargs = _cast_floating(args, dtype), _cast_floating(kwargs, dtype)
        return args, kwargs

    def _recover_from_failed_backward(self):
        """A forward while a backward is marked running: that backward raised before its final callback."""
        if engine.current_task() is not None:
            raise RuntimeError("FullyShardedDataParallel: forward called during this model's backward pass")
        self._in_backward = False
        if self._outstanding:
            self._outstanding = []
            self._broken = "a backward pass failed while reduce-scatters were in flight"
            self._check_usable()

    def _pre_forward(self):
        root = self._fsdp_root
        following = None
        if not root._order_recorded:
            root._forward_order.append(self)
        elif root._forward_visit + 1 < len(root._forward_order):
            following = root._forward_order[root._forward_visit + 1]
        root._forward_visit += 1
        if self._handle.needs_gather:
            self._log("gather", self)
        self._handle.unshard_async()
        if self._forward_prefetch and following is not None and following is not self \
                and following._handle.needs_gather:
            self._log("prefetch", following)
            following._handle.unshard_async()
        self._handle.wait_unshard(self._timeout)
        self._log("forward", self)

    def _post_forward(self, output):
        if self is not self._fsdp_root and self._reshard_after_forward:
            self._handle.reshard(self._timeout)
            self._log("reshard", self)
        if is_grad_enabled():
            for tensor in tensors_in(output):
                if tensor.requires_grad and tensor.grad_fn is not None:
                    tensor.register_hook(self._pre_backward_hook)

    def _root_post_forward(self, output):
        self._order_recorded = True
        if not any(t.requires_grad for t in tensors_in(output)):
            self._handle.reshard(self._timeout)  # no backward will come for this forward

    # -- backward (steps 4 to 6) -------------------------------------------------------------------

    def _start_backward(self):
        """Root: the first hook of a backward queues the final callback and resets the per-backward counts."""
        if self._in_backward:
            return
        self._check_usable()
        self._in_backward = True
        engine.queue_callback(self._finalize_backward)
        for unit in self._units:
            unit._accumulated = 0
            unit._pre_backward_done = False
            unit._handled_in_backward = False
            unit._reduced_in_hooks = False

    def _pre_backward_hook(self, grad):
        root = self._fsdp_root
        root._start_backward()
        if not self._pre_backward_done:
            self._pre_backward_done = True
            if self._handle.needs_gather:
                self._log("gather", self)
            self._handle.unshard_async()
            following = root._next_in_backward(self) if self._backward_prefetch else None
            if following is not None:
                self._log("prefetch", following)
                following._handle.unshard_async()
            self._handle.wait_unshard(self._timeout)
            self._log("pre_backward", self)
        root._progress()

    def _next_in_backward(self, unit):
        """Root: the unit whose backward should come after ``unit``'s (reverse forward order), if still due."""
        order = self._forward_order
        if unit not in order:
            return None
        last = len(order) - 1 - order[::-1].index(unit)
        for candidate in reversed(order[:last]):
            if candidate is unit or candidate._pre_backward_done or candidate._handled_in_backward:
                continue
            return candidate if candidate._handle.needs_gather else None
        return None

    def _on_grad_accumulated(self, param):
        root = self._fsdp_root
        root._start_backward()
        self._accumulated += 1
        if self._accumulated == len(self._grad_hooks) and not self._handled_in_backward:
            self._post_backward()
        root._progress()

    def _post_backward(self):
        """Every parameter of this unit got its gradient: reduce-scatter them (unless no_sync) and reshard."""
        root = self._fsdp_root
        self._handled_in_backward = True
        if root._sync_gradients:
            root._launch_reduce_scatter(self)
            self._reduced_in_hooks = True
        self._handle.reshard(root._timeout)
        self._log("reshard", self)

    def _launch_reduce_scatter(self, unit):
        flat = unit._handle.flatten_gradients()
        work, out = unit._handle.reduce_scatter_async(flat)
        self._outstanding.append(_Reduction(unit, work, out, flat))
        self._log("reduce_scatter", unit)

    def _progress(self):
        """Root: test in-flight collectives (MPI advances nonblocking ones only inside MPI calls)."""
        for reduction in self._outstanding:
            if reduction.flat is not None and reduction.work.is_completed():
                reduction.flat = None  # MPI is done reading it: the full flat gradient can be freed now
        for unit in self._units:
            unit._handle.progress()

    def _finalize_backward(self):
        """Root, end of backward: agree on the remaining units, reduce them, wait for everything, reshard."""
        self._in_backward = False
        try:
            if self._sync_gradients:
                for unit in self._agree_on_remaining_units():
                    self._launch_reduce_scatter(unit)
                    unit._handled_in_backward = True
                self._log("wait", self)
                for reduction in self._outstanding:
                    reduction.work.wait(self._timeout)
                    reduction.flat = None
                    reduction.unit._handle.accumulate_shard_gradient(reduction.out)
        finally:
            self._outstanding = []
            for unit in self._units:
                unit._handle.reshard(self._timeout)

    def _agree_on_remaining_units(self) -> list:
        """Units every rank must still reduce: those some rank holds gradients for and nobody reduced yet.

        One allreduce on the root's own communicator, so that ranks whose
        backward passes reduced different units find out (and raise) instead
        of hanging in mismatched collectives.
        """
        units = [u for u in self._units if u._handle.flat_param is not None and u._handle.requires_grad]
        world = self._group.size()
        vector = np.zeros(2 * len(units), dtype=np.int64)
        for i, unit in enumerate(units):
            vector[2 * i] = 1 if unit._reduced_in_hooks else 0
            vector[2 * i + 1] = 1 if (not unit._reduced_in_hooks and unit._handle.has_gradient()) else 0
        if world > 1:
            if self._control is None:
                raise RuntimeError("FullyShardedDataParallel: a backward reached units whose root never ran a "
                                   "forward; call the outermost FullyShardedDataParallel module, not a nested unit")
            self._control.allreduce(vector, ReduceOp.SUM, async_op=True).wait(self._timeout)
        mixed = [u for i, u in enumerate(units) if 0 < vector[2 * i] < world]
        if mixed:
            self._broken = "ranks reduced different units during one backward pass"
            mine = [self._unit_name(u) for u in mixed if u._reduced_in_hooks]
            raise RuntimeError(
                f"FullyShardedDataParallel: the ranks' backward passes reached different units: "
                f"{[self._unit_name(u) for u in mixed]} had all their gradients on some ranks but not on others "
                f"(rank {self._group.world_ranks[self._group.rank()]} had them for {mine or 'none of them'}). "
                "Every rank must run the same units with the same parameters taking part in the loss."
            )
        return [u for i, u in enumerate(units) if vector[2 * i] == 0 and vector[2 * i + 1] > 0]

    def _unit_name(self, unit) -> str:
        prefix = self._unit_prefixes().get(id(unit), "?")
        return prefix.rstrip(".") or "<root>"

    def _check_usable(self):
        if self._broken is not None:
            raise RuntimeError(f"FullyShardedDataParallel cannot continue: {self._broken}; ranks may disagree "
                               "on pending communication. Recreate the process group and the model.")

    # -- gradient accumulation (step 7) ------------------------------------------------------------

    @contextlib.contextmanager
    def no_sync(self):
        """Accumulate full, unreduced gradients locally; the first backward after the block reduces them.

        Inside the block, backward passes communicate only to gather
        parameters; each unit's full gradients stay on its original
        parameters (memory: the whole model's gradients). Call it on the root.

        Raises:
            RuntimeError: called on a nested unit.
        """
        self._require_root("no_sync()")
        previous = self._sync_gradients
        self._sync_gradients = False
        try:
            yield
        finally:
            self._sync_gradients = previous

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Clear the shards' gradients and any full gradients kept on original parameters (``no_sync``)."""
        super().zero_grad(set_to_none)
        for unit in self._units:
            for info in unit._handle.infos:
                info.param.grad = None

    def set_requires_gradient_sync(self, requires_gradient_sync: bool) -> None:
        """FSDP2's switch for ``no_sync``: False keeps gradients unreduced until it is set back to True."""
        self._require_root("set_requires_gradient_sync()")
        self._sync_gradients = bool(requires_gradient_sync)

    def _require_root(self, what):
        if not self._is_root():
            raise RuntimeError(f"FullyShardedDataParallel: call {what} on the root (outermost) instance")

    # -- memory ------------------------------------------------------------------------------------

    def memory_holdings(self) -> dict:
        """Arrays held beyond the shards and their gradients (which ``parameters()`` reports).

        ``gathered_parameters``: full buffers of unsharded units;
        ``gradients``: full gradients on original parameters (between a
        backward and its reduction, or accumulated under ``no_sync``);
        ``gradient_buckets``: flat gradients being reduce-scattered.
        """
        handles = [unit._handle for unit in self._units]
        return {
            "gathered_parameters": [h.gathered for h in handles if h.gathered is not None],
            "gradients": [info.param.grad for h in handles for info in h.infos if info.param.grad is not None],
            "gradient_buckets": [r.flat for r in self._fsdp_root._outstanding if r.flat is not None],
        }

    # -- full parameters ---------------------------------------------------------------------------

    @staticmethod
    @contextlib.contextmanager
    def summon_full_params(module, writeback: bool = True):
        """Gather every unit's full parameters (master dtype) for the block; collective on every rank.

        Inside, the original parameters (``module.layer.weight``) hold full
        values, and ``state_dict()`` needs no communication (a local copy of
        the full model; ``save_checkpoint`` needs no such block: it calls
        ``checkpoint_state`` on every rank).
        With ``writeback``, changes made to them are copied back to the shards.

        Raises:
            TypeError: ``module`` is not a FullyShardedDataParallel.
            RuntimeError: nested, or called during a backward pass.
        """
        if not isinstance(module, FullyShardedDataParallel):
            raise TypeError(f"summon_full_params: expected a FullyShardedDataParallel, got {type(module).__name__}")
        if module._summoned is not None:
            raise RuntimeError("summon_full_params: already inside summon_full_params for this module")
        if module._fsdp_root._in_backward:
            raise RuntimeError("summon_full_params: cannot gather full parameters during the backward pass")
        fulls = {}
        for unit in module._units:
            unit._handle.reshard(module._timeout)
            full = unit._handle.full_flat()
            fulls[id(unit)] = full
            for info in unit._handle.infos:
                info.param.array = full[info.offset: info.offset + info.numel].reshape(info.shape)
        module._summoned = fulls
        try:
            yield
        finally:
            module._summoned = None
            for unit in module._units:
                if writeback and fulls[id(unit)] is not None:
                    unit._handle.load_full_flat(fulls[id(unit)])
                unit._handle.reshard(module._timeout)

    # -- state dicts -------------------------------------------------------------------------------

    @staticmethod
    @contextlib.contextmanager
    def state_dict_type(module, state_dict_type: StateDictType):
        """Make ``state_dict``/``load_state_dict`` of ``module`` use ``state_dict_type`` inside the block."""
        previous = FullyShardedDataParallel.set_state_dict_type(module, state_dict_type)
        try:
            yield
        finally:
            FullyShardedDataParallel.set_state_dict_type(module, previous)

    @staticmethod
    def set_state_dict_type(module, state_dict_type: StateDictType) -> StateDictType:
        """Set what ``module.state_dict()`` returns from now on; returns the previous type.

        Raises:
            TypeError: ``module`` is not a FullyShardedDataParallel or the type is not a ``StateDictType``.
        """
        if not isinstance(module, FullyShardedDataParallel):
            raise TypeError(f"set_state_dict_type: expected a FullyShardedDataParallel, got {type(module).__name__}")
        if not isinstance(state_dict_type, StateDictType):
            raise TypeError(f"set_state_dict_type: expected a StateDictType, got {state_dict_type!r}")
        previous = module._state_dict_type
        module._state_dict_type = state_dict_type
        return previous

    def state_dict(self, destination=None, prefix: str = "", keep_vars: bool = False):
        """The state dict of the type set by ``state_dict_type`` (default: full; see ``StateDictType``).

        Full: the unwrapped model's keys and values, on every rank; a
        collective (one all-gather per unit), so every rank must call it,
        except inside ``summon_full_params``, where it reads the gathered
        values locally. Sharded: this rank's shards and their layout (no
        communication). Values are copies.
        """
        destination = OrderedDict() if destination is None else destination
        if self._state_dict_type is StateDictType.SHARDED_STATE_DICT:
            return self._sharded_state_dict(destination, prefix)
        return self._full_state_dict(destination, prefix)

    def _full_state_dict(self, destination, prefix):
        fulls = self._summoned
        if fulls is None:
            fulls = {id(unit): unit._handle.full_flat() for unit in self._units}
        values = {}
        for unit in self._units:
            full = fulls[id(unit)]
            for info in unit._handle.infos:
                value = full[info.offset: info.offset + info.numel].reshape(info.shape).copy()
                for owner, name in info.owners:
                    values[(id(owner), name)] = value
        names = self._owner_param_names()
        for module_prefix, module in _clean_named_modules(self._fsdp_wrapped_module):
            for name in names.get(id(module), ()):
                destination[prefix + module_prefix + name] = Tensor(values[(id(module), name)])
            for name, buf in _persistent_buffers(module):
                destination[prefix + module_prefix + name] = Tensor(buf.array.copy())
        return destination

    def _sharded_state_dict(self, destination, prefix):
        layouts = {}
        prefixes = self._unit_prefixes()
        for unit in self._units:
            if unit._handle.flat_param is not None:
                key = prefix + prefixes[id(unit)] + FLAT_PARAM
                destination[key] = Tensor(unit._handle.flat_param.array.copy())
                layouts[key] = unit._handle.layout()
        for module_prefix, module in _clean_named_modules(self._fsdp_wrapped_module):
            for name, buf in _persistent_buffers(module):
                destination[prefix + module_prefix + name] = Tensor(buf.array.copy())
        destination[prefix + LAYOUT_KEY] = layouts
        return destination

    def load_state_dict(self, state_dict, strict: bool = True, assign: bool = False) -> IncompatibleKeys:
        """Load a state dict of the current ``state_dict_type`` (no communication), into the shards in place.

        A full state dict (the unwrapped model's, e.g. from a plain model of
        the same architecture) gives each rank its slice; a sharded one must
        come from the same rank of a run with the same world size and units.

        Returns:
            ``IncompatibleKeys(missing_keys, unexpected_keys)``.

        Raises:
            RuntimeError: missing or unexpected keys (with ``strict``) or a
                shape mismatch, listing every problem; a sharded state dict
                whose layout differs from this model's.
            ValueError: ``assign=True`` (the shards are always copied into).
        """
        if assign:
            raise ValueError("FullyShardedDataParallel.load_state_dict: assign=True is not supported; the values "
                             "are copied into the existing shards")
        if not hasattr(state_dict, "keys"):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict).__name__}.")
        with no_grad():
            if self._state_dict_type is StateDictType.SHARDED_STATE_DICT:
                result = self._load_sharded(state_dict, strict)
            else:
                result = self._load_full(state_dict, strict)
        for unit in self._units:
            unit._handle.reshard(self._timeout)
        return result

    def _load_full(self, state_dict, strict):
        names = self._owner_param_names()
        expected, errors, buffers = set(), [], []
        param_keys = {}
        for module_prefix, module in _clean_named_modules(self._fsdp_wrapped_module):
            for name in names.get(id(module), ()):
                param_keys[(id(module), name)] = module_prefix + name
                expected.add(module_prefix + name)
            for name, buf in _persistent_buffers(module):
                expected.add(module_prefix + name)
                buffers.append((module_prefix + name, buf))
        missing = sorted(k for k in expected if k not in state_dict)
        unexpected = sorted(k for k in state_dict.keys() if k not in expected)
        for unit in self._units:
            handle = unit._handle
            for info in handle.infos:
                key = next((param_keys[(id(o), n)] for o, n in info.owners
                            if param_keys.get((id(o), n)) in state_dict), None)
                if key is None:
                    continue  # reported as missing; with strict=False the shard keeps its values there
                value = _array_of(state_dict[key])
                if tuple(value.shape) != tuple(info.shape):
                    errors.append(f"size mismatch for {key}: copying a param with shape {tuple(value.shape)} "
                                  f"from checkpoint, the shape in current model is {tuple(info.shape)}.")
                    continue
                handle.load_param(info, value)
        for key, buf in buffers:
            if key in state_dict:
                value = _array_of(state_dict[key])
                if tuple(value.shape) != tuple(buf.shape):
                    errors.append(f"size mismatch for {key}: copying a buffer with shape {tuple(value.shape)} "
                                  f"from checkpoint, the shape in current model is {tuple(buf.shape)}.")
                    continue
                buf.array[...] = value
        return _finish_load(type(self).__name__, missing, unexpected, errors, strict)

    def _load_sharded(self, state_dict, strict):
        prefixes = self._unit_prefixes()
        layouts = state_dict.get(LAYOUT_KEY)
        errors, missing = [], []
        if not isinstance(layouts, dict):
            raise RuntimeError(
                "FullyShardedDataParallel.load_state_dict: this is not a sharded state dict (no "
                f"{LAYOUT_KEY!r} entry); load full state dicts outside state_dict_type(SHARDED_STATE_DICT)"
            )
        expected = {LAYOUT_KEY}
        for unit in self._units:
            handle = unit._handle
            if handle.flat_param is None:
                continue
            key = prefixes[id(unit)] + FLAT_PARAM
            expected.add(key)
            if key not in state_dict:
                missing.append(key)
                continue
            saved = layouts.get(key)
            if saved != handle.layout():
                errors.append(f"{key}: the saved shard's layout {saved} differs from this rank's "
                              f"{handle.layout()} (a sharded state dict loads only on the same rank, with the same "
                              "world size and the same units)")
                continue
            handle.flat_param.array[...] = _array_of(state_dict[key])
        for module_prefix, module in _clean_named_modules(self._fsdp_wrapped_module):
            for name, buf in _persistent_buffers(module):
                key = module_prefix + name
                expected.add(key)
                if key in state_dict:
                    buf.array[...] = _array_of(state_dict[key])
                else:
                    missing.append(key)
        unexpected = sorted(k for k in state_dict.keys() if k not in expected)
        return _finish_load(type(self).__name__, missing, unexpected, errors, strict)

    def _owner_param_names(self) -> dict:
        names = {}
        for unit in self._units:
            names.update(unit._owner_names)
        return names

    def _unit_prefixes(self) -> dict:
        """``id(unit) -> clean prefix`` ("" for this one, "body.0." for a nested unit)."""
        prefixes = {id(self): ""}
        stack = [("", self._fsdp_wrapped_module)]
        while stack:
            prefix, module = stack.pop()
            for name, child in module._modules.items():
                if child is None:
                    continue
                if _is_unit(child):
                    prefixes.setdefault(id(child), prefix + name + ".")
                    child = child._fsdp_wrapped_module
                stack.append((prefix + name + ".", child))
        return prefixes

    # -- optimizer state (checkpoints) -------------------------------------------------------------

    @staticmethod
    def optim_state_dict(model, optim) -> dict:
        """The optimizer's state keyed by the unwrapped model's parameter names, with full tensors.

        Collective: shard-shaped state (momentum, Adam's moments) is
        all-gathered per unit and cut into the original parameters' shapes;
        scalar state (``step``) is copied to each of the unit's parameters.
        Every rank gets the result. ``optim_state_dict_to_load`` turns it back
        into ``optim.load_state_dict``'s layout (same units, any rank).

        Returns:
            ``{"state": {name: {key: value}}, "param_groups": [{..., "params": [names]}]}``.
        """
        units = _units_by_flat_param(model)
        saved = optim.state_dict()
        index_to_param = _optimizer_params(optim)
        state = {}
        for index in sorted(saved["state"]):
            unit = units[id(index_to_param[index])]
            handle = unit._handle
            per_param = {}
            for key in sorted(saved["state"][index]):
                value = saved["state"][index][key]
                if _is_shard_shaped(value, handle):
                    array = _array_of(value)
                    full = backend.get_array_module(array).empty(handle.padded_numel, dtype=array.dtype)
                    allgather_into(handle.group, np.ascontiguousarray(array), full, async_op=False)
                    for info in handle.infos:
                        piece = full[info.offset: info.offset + info.numel].reshape(info.shape).copy()
                        per_param.setdefault(info.name, {})[key] = Tensor(piece)
                else:
                    for info in handle.infos:
                        per_param.setdefault(info.name, {})[key] = value
            prefix = model._unit_prefixes()[id(unit)]
            for name, values in per_param.items():
                state[prefix + name] = values
        groups = []
        for group in saved["param_groups"]:
            names = []
            for index in group["params"]:
                unit = units[id(index_to_param[index])]
                prefix = model._unit_prefixes()[id(unit)]
                names.extend(prefix + info.name for info in unit._handle.infos)
            groups.append({**{k: v for k, v in group.items() if k != "params"}, "params": names})
        return {"state": state, "param_groups": groups}

    @staticmethod
    def optim_state_dict_to_load(model, optim, optim_state_dict) -> dict:
        """Turn ``optim_state_dict``'s result into what ``optim.load_state_dict`` takes on this rank (no communication).

        Raises:
            KeyError: the state names a parameter this model lacks, or lacks one it has.
        """
        units = _units_by_flat_param(model)
        index_to_param = _optimizer_params(optim)
        full_state = optim_state_dict["state"]
        state = {}
        for index, flat_param in index_to_param.items():
            unit = units[id(flat_param)]
            handle = unit._handle
            prefix = model._unit_prefixes()[id(unit)]
            entries = [full_state.get(prefix + info.name) for info in handle.infos]
            if all(e is None for e in entries):
                continue
            if any(e is None for e in entries):
                lacking = [prefix + i.name for i, e in zip(handle.infos, entries) if e is None]
                raise KeyError(f"optim_state_dict_to_load: the state has no entry for {lacking}")
            values = {}
            for key in entries[0]:
                first = entries[0][key]
                if isinstance(first, Tensor) or backend.is_array(first):
                    if tuple(_array_of(first).shape) == tuple(handle.infos[0].shape):
                        full = np.concatenate([_array_of(e[key]).reshape(-1) for e in entries])
                        padded = np.zeros(handle.padded_numel, dtype=full.dtype)
                        padded[: handle.numel] = full
                        shard = padded[handle.rank * handle.shard_numel: (handle.rank + 1) * handle.shard_numel]
                        values[key] = Tensor(shard.copy())
                        continue
                values[key] = first
            state[index] = values
        groups = []
        position = {id(p): i for i, p in index_to_param.items()}
        for saved_group, group in zip(optim_state_dict["param_groups"], optim.param_groups):
            groups.append({**{k: v for k, v in saved_group.items() if k != "params"},
                           "params": [position[id(p)] for p in group["params"]]})
        return {"state": state, "param_groups": groups}

    def close(self) -> None:
        """Free the root's control communicator (collective: every rank calls it, once training is over)."""
        if self._control is not None:
            self._control.destroy()
            self._control = None

    # -- the checkpoint protocol of minigrad_dist.checkpoint ------------------------------------------

    def checkpoint_state(self, sharded: bool = False) -> dict:
        """The model state ``save_checkpoint`` writes; collective: every rank calls it, on the root.

        Args:
            sharded: False: the full state dict (``FULL_STATE_DICT``: the
                unwrapped model's names and values, loadable with any number
                of ranks, or into the plain model), on every rank. True: this
                rank's ``SHARDED_STATE_DICT`` (its shards and their layout).

        Raises:
            RuntimeError: called on a nested unit.
        """
        self._require_root("checkpoint_state()")
        with FullyShardedDataParallel.state_dict_type(self, _state_dict_type_of(sharded)):
            return self.state_dict()

    def load_checkpoint_state(self, state, strict: bool = True, sharded: bool = False) -> IncompatibleKeys:
        """Restore what ``checkpoint_state(sharded)`` returned (this rank's slice of it); no communication.

        Raises:
            RuntimeError: as ``load_state_dict`` (mismatched keys or shapes; a
                sharded state from another world size or rank), or called on a nested unit.
        """
        self._require_root("load_checkpoint_state()")
        with FullyShardedDataParallel.state_dict_type(self, _state_dict_type_of(sharded)):
            return self.load_state_dict(state, strict=strict)

    def optim_checkpoint_state(self, optim, sharded: bool = False) -> dict:
        """The state ``save_checkpoint`` writes for ``optim``, an optimizer over this model's shards.

        Full (collective): ``optim_state_dict``'s tensors keyed by parameter
        name, on every rank. Sharded (local): ``optim.state_dict()``, this
        rank's shard state.
        """
        self._require_root("optim_checkpoint_state()")
        if sharded:
            return optim.state_dict()
        return FullyShardedDataParallel.optim_state_dict(self, optim)

    def load_optim_checkpoint_state(self, optim, state, sharded: bool = False) -> None:
        """Load what ``optim_checkpoint_state(optim, sharded)`` returned into ``optim``; no communication.

        Raises:
            KeyError: a full state that lacks some of this model's parameters.
        """
        self._require_root("load_optim_checkpoint_state()")
        if not sharded:
            state = FullyShardedDataParallel.optim_state_dict_to_load(self, optim, state)
        optim.load_state_dict(state)


FSDP = FullyShardedDataParallel


class _Reduction:
    """One unit's reduce-scatter in flight: its Work, the shard-sized output, the flat input (until done)."""

    __slots__ = ("unit", "work", "out", "flat")

    def __init__(self, unit, work, out, flat):
        self.unit, self.work, self.out, self.flat = unit, work, out, flat


# -- construction helpers --------------------------------------------------------------------------------


def _is_unit(module) -> bool:
    return isinstance(module, FullyShardedDataParallel)


def _resolve_group(process_group) -> ProcessGroup:
    if process_group is not None:
        if not isinstance(process_group, ProcessGroup):
            raise TypeError(f"FullyShardedDataParallel: process_group must be a ProcessGroup, got "
                            f"{type(process_group).__name__}")
        return process_group
    if not collectives.is_initialized():
        raise RuntimeError("FullyShardedDataParallel needs a process group: call "
                           "minigrad_dist.init_process_group() first")
    return collectives.get_default_group()


def _modules_below(module):
    """Every module under ``module`` (not itself), pre-order, entering units too."""
    stack = [c for c in reversed(list(module._modules.values())) if c is not None]
    while stack:
        m = stack.pop()
        yield m
        stack.extend(c for c in reversed(list(m._modules.values())) if c is not None)


def _own_parameters(module):
    """This unit's parameters (not those of nested units), as ``ParamInfo``s, and each owner's names."""
    infos, by_id, owner_names = [], {}, {}
    stack = [("", module)]
    while stack:
        prefix, m = stack.pop()
        for name, param in m._parameters.items():
            if param is None:
                continue
            owner_names.setdefault(id(m), []).append(name)
            if isinstance(param.array, ReshardedArray):
                raise ValueError(
                    f"FullyShardedDataParallel: parameter {prefix + name!r} is shared with a nested unit that "
                    "already holds it; a parameter belongs to one unit, so wrap the smallest module that contains "
                    "every use of a shared (tied) parameter instead"
                )
            info = by_id.get(id(param))
            if info is None:
                info = ParamInfo(param, [], prefix + name, tuple(param.shape), int(param.numel()), 0)
                by_id[id(param)] = info
                infos.append(info)
            info.owners.append((m, name))
        children = [(prefix + n + ".", c) for n, c in m._modules.items() if c is not None and not _is_unit(c)]
        stack.extend(reversed(children))
    return infos, owner_names


def _verify_same_parameters(group, infos) -> None:
    """Every rank must build the same unit (names, shapes, dtypes), or the collectives would not match.

    Raises:
        ValueError: on every rank, naming the first rank that differs from rank 0 and how.
    """
    if group.size() == 1:
        return
    mine = [(info.name, tuple(info.shape), str(info.param.array.dtype)) for info in infos]
    everyone = group.allgather_obj(mine)
    for rank, theirs in enumerate(everyone):
        if theirs != everyone[0]:
            first = next((a, b) for a, b in zip(everyone[0] + [None] * len(theirs), theirs + [None] * len(everyone[0]))
                         if a != b)
            raise ValueError(
                f"FullyShardedDataParallel: the ranks built different modules: rank {group.world_ranks[rank]} has "
                f"parameter {first[1]} where rank {group.world_ranks[0]} has {first[0]} (name, shape, dtype). "
                "Every rank must wrap the same architecture in the same way"
            )


def _take_over(infos) -> None:
    """Move the original parameters out of their modules' ``_parameters``, into plain attributes.

    Forward code (``self.weight``) is unchanged, but ``parameters()`` yields
    only the flat shards.
    """
    for info in infos:
        for owner, name in info.owners:
            del owner._parameters[name]
            object.__setattr__(owner, name, info.param)


def _broadcast_own_buffers(module, group):
    for _, m in _clean_named_modules(module, stop_at_units=True):
        for buf in m._buffers.values():
            if buf is not None:
                group.broadcast(buf.array, 0)


def _clean_named_modules(module, stop_at_units: bool = False):
    """``(prefix, module)`` pairs of the unwrapped tree, pre-order; a unit counts as its wrapped module."""
    stack = [("", module)]
    while stack:
        prefix, m = stack.pop()
        if _is_unit(m):
            m = m._fsdp_wrapped_module
        yield prefix, m
        children = [(prefix + n + ".", c) for n, c in m._modules.items()
                    if c is not None and not (stop_at_units and _is_unit(c))]
        stack.extend(reversed(children))


def _persistent_buffers(module):
    for name, buf in module._buffers.items():
        if buf is not None and name not in module._non_persistent_buffers_set:
            yield name, buf


def _clean(name: str) -> str:
    return name.replace(WRAPPED + ".", "")


# -- forward helpers --------------------------------------------------------------------------------------


def _cast_floating(obj, dtype):
    """``obj`` with floating-point Tensors cast to ``dtype`` (nested tuples, lists, dicts)."""
    if isinstance(obj, Tensor):
        return obj.to(dtype=dtype) if obj.dtype.kind == "f" and obj.dtype != dtype else obj
    if isinstance(obj, tuple):
        return tuple(_cast_floating(x, dtype) for x in obj)
    if isinstance(obj, list):
        return [_cast_floating(x, dtype) for x in obj]
    if isinstance(obj, dict):
        return {k: _cast_floating(v, dtype) for k, v in obj.items()}
    return obj


# -- state dict helpers -------------------------------------------------------------------------------------


def _array_of(value):
    if isinstance(value, Tensor):
        return value.array
    if backend.is_array(value):
        return value
    raise RuntimeError(f"FullyShardedDataParallel.load_state_dict: expected a Tensor or array, got "
                       f"{type(value).__name__}")


def _finish_load(name, missing, unexpected, errors, strict) -> IncompatibleKeys:
    if strict:
        if unexpected:
            errors.insert(0, "Unexpected key(s) in state_dict: {}. ".format(", ".join(f'"{k}"' for k in unexpected)))
        if missing:
            errors.insert(0, "Missing key(s) in state_dict: {}. ".format(", ".join(f'"{k}"' for k in missing)))
    if errors:
        details = "\n\t".join(errors)
        raise RuntimeError(f"Error(s) in loading state_dict for {name}:\n\t{details}")
    return IncompatibleKeys(missing, unexpected)


def _units_by_flat_param(model) -> dict:
    if not isinstance(model, FullyShardedDataParallel):
        raise TypeError(f"expected the FullyShardedDataParallel model, got {type(model).__name__}")
    return {id(u._handle.flat_param): u for u in model._units if u._handle.flat_param is not None}


def _optimizer_params(optim) -> dict:
    """``index -> parameter`` in the numbering of ``optim.state_dict()``."""
    index_to_param = {}
    seen = {}
    for group in optim.param_groups:
        for p in group["params"]:
            if id(p) not in seen:
                seen[id(p)] = len(seen)
                index_to_param[seen[id(p)]] = p
    return index_to_param


def _is_shard_shaped(value, handle) -> bool:
    if not (isinstance(value, Tensor) or backend.is_array(value)):
        return False
    return tuple(_array_of(value).shape) == (handle.shard_numel,)



def _state_dict_type_of(sharded: bool) -> StateDictType:
    return StateDictType.SHARDED_STATE_DICT if sharded else StateDictType.FULL_STATE_DICT
