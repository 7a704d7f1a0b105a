"""One FSDP unit's parameters as a single flat, padded, sharded parameter (the paper's ``FlatParameter``).

A ``FlatParamHandle`` owns the unit's original ``Parameter`` objects and
their layout in one flat vector, and moves between the two states of the
FSDP paper (Zhao et al., VLDB 2023, section 3):

* **sharded**: rank ``r`` holds slice ``r`` of the flat vector (padded to a
  multiple of the world size) as a leaf ``Parameter``, ``flat_param``, which
  is what the optimizer steps. The original parameters point at
  ``ReshardedArray`` placeholders: of the right shape and dtype, but any
  computation with them raises.
* **unsharded**: an all-gather filled a full flat buffer (in the compute
  dtype of the mixed precision policy), and every original parameter's
  ``.array`` is a view of its slice of that buffer. Ops keep the parameter
  Tensors themselves and read ``.array`` when their backward runs, so
  re-pointing ``.array`` before the backward is all they need.

Gradients go the other way: the unit's full gradients are flattened into a
padded vector and reduce-scattered (averaged) into the shard's gradient.

The collectives write straight into the gathered buffer and read straight
from the flat gradient (MPI's ``Iallgather`` / ``Ireduce_scatter_block`` on
the group's communicator), because ``ProcessGroup.allgather`` and
``reduce_scatter`` stage through a second stacked copy, which would double
the very memory FSDP exists to save.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from minigrad import backend
from minigrad.nn.parameter import Parameter
from minigrad.tensor import Tensor
from minigrad_dist import debug, memory
from minigrad_dist.mpi import finish_buffer, load_mpi, mpi_buffer
from minigrad_dist.process_group import ProcessGroup, Work, _avg_divider


class ReshardedArray(np.ndarray):
    """The placeholder ``.array`` of a resharded original parameter.

    It has the parameter's shape and dtype (so ``weight.shape`` still works)
    but only one element of memory, and every NumPy computation on it raises
    a ``RuntimeError`` naming the parameter, instead of computing with stale
    or meaningless values.
    """

    fsdp_name = "a parameter"

    def __array_finalize__(self, source):
        # Views (weight.T, reshapes) keep the name, so the error still says which parameter it was.
        self.fsdp_name = getattr(source, "fsdp_name", "a parameter")

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        raise RuntimeError(_resharded_message(self, f"NumPy's {ufunc.__name__}"))

    def __array_function__(self, func, types, args, kwargs):
        raise RuntimeError(_resharded_message(self, f"NumPy's {func.__name__}"))


def _resharded_message(array, what) -> str:
    name = getattr(array, "fsdp_name", "a parameter")
    return (
        f"FullyShardedDataParallel: {what} used {name} while it is resharded (its values live only as "
        "shards on the ranks). Use parameters of an FSDP unit only inside that unit's forward, or read "
        "them inside `with FullyShardedDataParallel.summon_full_params(model):`"
    )


def resharded_placeholder(shape, dtype, name: str) -> ReshardedArray:
    """A ``ReshardedArray`` of ``shape`` and ``dtype`` backed by a single element."""
    one = np.zeros(1, dtype=dtype)
    view = np.lib.stride_tricks.as_strided(one, shape=tuple(shape), strides=(0,) * len(shape))
    placeholder = view.view(ReshardedArray)
    placeholder.fsdp_name = repr(name)
    placeholder.flags.writeable = False
    return placeholder


@dataclass
class ParamInfo:
    """Where one original parameter lives: in the flat vector and in the module tree.

    Attributes:
        param: the original ``Parameter`` object (kept for the whole run).
        owners: ``(module, attribute name)`` pairs that hold it (tied weights have several).
        name: its qualified name below the unit's wrapped module (the first owner's).
        shape, numel, offset: its shape, element count and start in the flat vector.
    """

    param: Parameter
    owners: list
    name: str
    shape: tuple
    numel: int
    offset: int


class FlatParamHandle:
    """The flat sharded parameter of one FSDP unit and its gather / reshard / reduce-scatter.

    Args:
        infos: ``ParamInfo`` of the unit's own parameters (offsets are assigned here).
        group: the process group the unit is sharded over.
        param_dtype: dtype of the gathered parameters (None: the master dtype).
        reduce_dtype: dtype gradients are reduced in (None: ``param_dtype``, else the master dtype).
        sync_module_states: broadcast rank 0's values before sharding.

    Raises:
        ValueError: the parameters disagree in dtype, device or ``requires_grad``.
    """

    def __init__(self, infos, group: ProcessGroup, param_dtype=None, reduce_dtype=None,
                 sync_module_states: bool = False):
        self.infos = infos
        self.group = group
        self.world = group.size()
        self.rank = group.rank()
        params = [info.param for info in infos]
        _check_uniform(infos)
        self.master_dtype = params[0].array.dtype if params else np.dtype(np.float32)
        self.param_dtype = np.dtype(param_dtype) if param_dtype is not None else self.master_dtype
        if reduce_dtype is not None:
            self.reduce_dtype = np.dtype(reduce_dtype)
        else:
            self.reduce_dtype = self.param_dtype
        self.requires_grad = bool(params and params[0].requires_grad)
        offset = 0
        for info in infos:
            info.offset = offset
            offset += info.numel
        self.numel = offset
        self.shard_numel = -(-self.numel // self.world) if self.numel else 0
        self.padded_numel = self.shard_numel * self.world
        self.flat_param = None
        self.gathered = None  # the full flat buffer while unsharded (or being gathered)
        self._gather_work = None
        self._send = None  # keeps the (cast) shard alive while an all-gather reads it
        if self.numel:
            self.flat_param = Parameter(self._initial_shard(sync_module_states), requires_grad=self.requires_grad)
            self.reshard()

    # -- construction: shard -------------------------------------------------------------

    def _initial_shard(self, sync_module_states):
        xp = backend.get_array_module(self.infos[0].param.array)
        full = xp.zeros(self.padded_numel, dtype=self.master_dtype)
        for info in self.infos:
            full[info.offset: info.offset + info.numel] = info.param.array.reshape(-1)
        if sync_module_states and self.world > 1:
            self.group.broadcast(full, 0)
        return full[self.rank * self.shard_numel: (self.rank + 1) * self.shard_numel].copy()

    # -- unshard: all-gather into a full buffer, point the parameters at it ----------------

    @property
    def is_unsharded(self) -> bool:
        """True while the gathered buffer exists (complete, or an all-gather is filling it)."""
        return self.gathered is not None

    @property
    def needs_gather(self) -> bool:
        """True when the unit has parameters and they are sharded (an all-gather would start)."""
        return self.flat_param is not None and self.gathered is None

    def unshard_async(self) -> None:
        """Start the all-gather of the full parameters (nothing when already unsharded or gathering)."""
        if self.flat_param is None or self.gathered is not None:
            return
        xp = backend.get_array_module(self.flat_param.array)
        shard = self.flat_param.array
        self._send = shard if shard.dtype == self.param_dtype else shard.astype(self.param_dtype)
        self.gathered = memory.track("gathered_parameters", xp.empty(self.padded_numel, dtype=self.param_dtype))
        self._gather_work = allgather_into(self.group, self._send, self.gathered, async_op=True)

    def wait_unshard(self, timeout=None) -> None:
        """Finish the all-gather and point every original parameter at its view of the full buffer."""
        if self.flat_param is None:
            return
        if self.gathered is None:
            self.unshard_async()
        if self._gather_work is not None:
            self._gather_work.wait(timeout)
            self._gather_work = None
            self._send = None
            for info in self.infos:
                info.param.array = self.gathered[info.offset: info.offset + info.numel].reshape(info.shape)

    def progress(self) -> None:
        """Test an in-flight all-gather (MPI advances it only inside MPI calls)."""
        if self._gather_work is not None:
            self._gather_work.is_completed()

    def reshard(self, timeout=None) -> None:
        """Drop the full buffer: the original parameters point at placeholders that raise when used."""
        if self._gather_work is not None:
            self._gather_work.wait(timeout)  # MPI may still be writing into the buffer
            self._gather_work = None
            self._send = None
        self.gathered = None
        for info in self.infos:
            info.param.array = resharded_placeholder(info.shape, self.master_dtype, info.name)

    # -- gradients: flatten and reduce-scatter -----------------------------------------------

    def has_gradient(self) -> bool:
        """Whether any original parameter holds a (full) gradient."""
        return any(info.param.grad is not None for info in self.infos)

    def flatten_gradients(self):
        """The full gradients as one padded flat vector in ``reduce_dtype`` (zeros where none); clears them."""
        xp = backend.get_array_module(self.flat_param.array)
        flat = memory.track("gradient_buckets", xp.zeros(self.padded_numel, dtype=self.reduce_dtype))
        for info in self.infos:
            grad = info.param.grad
            if grad is not None:
                flat[info.offset: info.offset + info.numel] = grad.array.reshape(-1)
                info.param.grad = None
        return flat

    def reduce_scatter_async(self, flat) -> tuple:
        """Start averaging ``flat`` over the ranks into this rank's slice: ``(Work, output array)``."""
        xp = backend.get_array_module(flat)
        out = xp.empty(self.shard_numel, dtype=self.reduce_dtype)
        work = reduce_scatter_from(self.group, flat, out, async_op=True)
        return work, out

    def accumulate_shard_gradient(self, shard_grad) -> None:
        """Add a reduced shard gradient (cast to the master dtype) to ``flat_param.grad``."""
        shard_grad = shard_grad.astype(self.master_dtype, copy=False)
        old = self.flat_param.grad
        if old is None:
            self.flat_param.grad = Tensor._make(shard_grad, False, None, 0)
        else:
            self.flat_param.grad = Tensor._make(old.array + shard_grad, False, None, 0)

    # -- full values (state dicts) -------------------------------------------------------------

    def full_flat(self):
        """The unpadded full flat vector in the master dtype (a blocking all-gather; every rank)."""
        if self.flat_param is None:
            return None
        xp = backend.get_array_module(self.flat_param.array)
        full = xp.empty(self.padded_numel, dtype=self.master_dtype)
        allgather_into(self.group, self.flat_param.array, full, async_op=False)
        return full[: self.numel]

    def load_full_flat(self, full) -> None:
        """Copy this rank's slice of the (unpadded) full flat vector ``full`` into the shard, in place."""
        for info in self.infos:
            self.load_param(info, full[info.offset: info.offset + info.numel])

    def load_param(self, info: ParamInfo, value) -> None:
        """Copy the part of one original parameter's full ``value`` that falls in this rank's shard, in place."""
        start, stop = self.rank * self.shard_numel, (self.rank + 1) * self.shard_numel
        low, high = max(info.offset, start), min(info.offset + info.numel, stop)
        if low >= high:
            return
        flat = backend.to_device(value.reshape(-1), backend.device_of(self.flat_param.array))
        self.flat_param.array[low - start: high - start] = flat[low - info.offset: high - info.offset]

    def layout(self) -> dict:
        """Plain-data description of the flat vector (saved with sharded state dicts)."""
        return {
            "world_size": self.world, "rank": self.rank, "numel": self.numel, "padded_numel": self.padded_numel,
            "params": [[info.name, list(info.shape)] for info in self.infos],
        }


def _check_uniform(infos) -> None:
    if not infos:
        return
    first = infos[0]
    for info in infos[1:]:
        p, q = first.param, info.param
        if p.array.dtype != q.array.dtype:
            raise ValueError(
                f"FullyShardedDataParallel: one unit's parameters must share a dtype to be flattened, but "
                f"{first.name!r} is {p.array.dtype} and {info.name!r} is {q.array.dtype}; cast the module "
                "(.double() / .float()) or wrap those submodules as separate units"
            )
        if backend.device_of(p.array) != backend.device_of(q.array):
            raise ValueError(
                f"FullyShardedDataParallel: {first.name!r} and {info.name!r} are on different devices "
                f"({backend.device_of(p.array)}, {backend.device_of(q.array)}); move the module to one device"
            )
        if p.requires_grad != q.requires_grad:
            raise ValueError(
                f"FullyShardedDataParallel: one unit mixes frozen and trainable parameters ({first.name!r} "
                f"requires_grad={p.requires_grad}, {info.name!r} requires_grad={q.requires_grad}); wrap the "
                "frozen submodules as units of their own"
            )


# -- collectives straight into / out of flat buffers --------------------------------------------


def allgather_into(group: ProcessGroup, shard, full, async_op: bool) -> Work:
    """All-gather every rank's ``shard`` into ``full`` (``group.size() * shard.size`` elements), in rank order."""
    if full.size != shard.size * group.size() or full.dtype != shard.dtype:
        raise ValueError(
            f"all-gather: output of {full.size} {full.dtype} elements cannot hold {group.size()} shards of "
            f"{shard.size} {shard.dtype}"
        )
    if debug.checking():
        debug.verify(group, f"all_gather({debug.tensor_text(shard)})")
    send, recv = mpi_buffer(shard), mpi_buffer(full)
    done = None if recv is full else (lambda: finish_buffer(full, recv))
    comm = group._next_comm()  # the group's own communicator (round-robin groups rotate)
    if async_op:
        return Work(comm.Iallgather(send, recv), done, [full], "all_gather", group.spin_wait)
    comm.Allgather(send, recv)
    return Work(None, done, [full], "all_gather")


def reduce_scatter_from(group: ProcessGroup, flat, out, async_op: bool) -> Work:
    """Average ``flat`` over the ranks; rank ``r`` gets slice ``r`` in ``out`` (``flat.size / group.size()``)."""
    if out.size * group.size() != flat.size or out.dtype != flat.dtype:
        raise ValueError(
            f"reduce-scatter: {flat.size} {flat.dtype} elements do not split into {group.size()} outputs of "
            f"{out.size} {out.dtype}"
        )
    if debug.checking():
        debug.verify(group, f"reduce_scatter({debug.tensor_text(out)}, AVG)")
    MPI = load_mpi()
    send, recv = mpi_buffer(flat), mpi_buffer(out)
    copy_back = None if recv is out else (lambda: finish_buffer(out, recv))
    divide = _avg_divider(out, group.size())

    def done():
        if copy_back is not None:
            copy_back()
        divide()

    comm = group._next_comm()
    if async_op:
        return Work(comm.Ireduce_scatter_block(send, recv, MPI.SUM), done, [out], "reduce_scatter", group.spin_wait)
    comm.Reduce_scatter_block(send, recv, MPI.SUM)
    return Work(None, done, [out], "reduce_scatter")
