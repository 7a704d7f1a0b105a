"""The ``torch.distributed``-style API: the default process group and collectives on it.

Launch with ``mpiexec -n N python script.py``; ranks and world size come from
MPI. ``init_process_group`` wraps a duplicate of ``MPI.COMM_WORLD`` (or of
the communicator you pass), never the communicator itself.

Every collective takes a Tensor or a NumPy/CuPy array and works in place,
like PyTorch's. With ``async_op=True`` it returns a ``Work`` (``wait()``,
``is_completed()``); otherwise it returns None once done. ``src``/``dst``
ranks are global ranks, as in PyTorch, also for subgroups.

Warning:
    Every rank of a group must call the same collectives in the same order
    with matching shapes and dtypes. A rank that skips one leaves the others
    waiting: set ``init_process_group(timeout=...)`` (or the environment
    variable ``MINIGRAD_DIST_TIMEOUT`` in seconds) to turn such a wait into a
    ``TimeoutError`` naming the operation.
"""

from __future__ import annotations

import os
import pickle

import numpy as np

from minigrad import backend as array_backend  # not `backend`: init_process_group has an argument of that name
from minigrad.tensor import Tensor
from minigrad_dist import debug as _debug
from minigrad_dist.failure import install_failure_handlers
from minigrad_dist.mpi import load_mpi
from minigrad_dist.process_group import ProcessGroup, ReduceOp, RoundRobinProcessGroup


class _NonGroupMember:
    """Returned by ``new_group`` on ranks that are not members of the new group."""

    def __repr__(self):
        return "GroupMember.NON_GROUP_MEMBER"


NON_GROUP_MEMBER = _NonGroupMember()


class _World:
    """The default process group and the settings that come with it."""

    def __init__(self):
        self.default_group: ProcessGroup | None = None
        self.timeout: float | None = None
        self.groups: list[ProcessGroup] = []
        self.local_rank: int | None = None


_world = _World()


def init_process_group(backend: str = "mpi", comm=None, timeout=None, round_robin_channels: int = 0) -> None:
    """Create the default process group from an MPI communicator.

    Args:
        backend: only ``"mpi"`` is supported.
        comm: an mpi4py communicator (default ``MPI.COMM_WORLD``); it is duplicated.
        timeout: seconds a blocking collective may wait before raising
            ``TimeoutError`` (a float or ``datetime.timedelta``; default: the
            ``MINIGRAD_DIST_TIMEOUT`` environment variable, else wait forever).
        round_robin_channels: when >= 2, the default group rotates its
            collectives over that many duplicate communicators.

    On machines with CUDA devices, each rank selects device
    ``local_rank % device_count``.

    Also installs ``failure.install_failure_handlers()`` (an uncaught
    exception on any rank aborts the whole job) and reads
    ``MINIGRAD_DIST_DEBUG`` (``detail``: check that ranks call matching
    collectives, see ``minigrad_dist.debug``).

    Raises:
        ValueError: unknown backend, a timeout that is not a positive number,
            a negative ``round_robin_channels``, or an unknown ``MINIGRAD_DIST_DEBUG`` level.
        TypeError: ``comm`` is not an mpi4py communicator, or ``round_robin_channels`` not an int.
        RuntimeError: the default group already exists.
        ImportError: mpi4py is missing (says how to install it).
    """
    if backend != "mpi":
        raise ValueError(f"init_process_group: backend {backend!r} is not supported; use backend='mpi'")
    if _world.default_group is not None:
        raise RuntimeError("init_process_group was already called; call destroy_process_group() first")
    timeout = _resolve_timeout(timeout)
    if not isinstance(round_robin_channels, int) or isinstance(round_robin_channels, bool):
        raise TypeError(
            f"init_process_group: round_robin_channels must be an int, got {round_robin_channels!r}"
        )
    if round_robin_channels < 0:
        raise ValueError(f"init_process_group: round_robin_channels must be >= 0, got {round_robin_channels}")
    MPI = load_mpi()
    if comm is not None and not isinstance(comm, MPI.Comm):
        raise TypeError(f"init_process_group: comm must be an mpi4py communicator, got {type(comm).__name__}")
    install_failure_handlers()
    _debug.set_debug_level_from_env()
    comm = comm if comm is not None else MPI.COMM_WORLD
    if round_robin_channels >= 2:
        _world.default_group = RoundRobinProcessGroup(comm, num_channels=round_robin_channels)
    else:
        _world.default_group = ProcessGroup(comm)
    _world.timeout = timeout
    _world.local_rank = _compute_local_rank(_world.default_group.comm)
    if array_backend.cuda_is_available():
        array_backend.use_cuda_device(_world.local_rank % array_backend.cuda_device_count())


def _resolve_timeout(timeout):
    if timeout is None:
        env = os.environ.get("MINIGRAD_DIST_TIMEOUT")
        if not env:
            return None
        try:
            timeout = float(env)
        except ValueError:
            raise ValueError(f"MINIGRAD_DIST_TIMEOUT must be a number of seconds, got {env!r}") from None
    if hasattr(timeout, "total_seconds"):
        timeout = timeout.total_seconds()
    if not isinstance(timeout, (int, float)) or not timeout > 0:
        raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
    return float(timeout)


def _compute_local_rank(comm) -> int:
    MPI = load_mpi()
    node_comm = comm.Split_type(MPI.COMM_TYPE_SHARED)
    local = node_comm.Get_rank()
    node_comm.Free()
    return local


def is_initialized() -> bool:
    """True once ``init_process_group`` was called (and not destroyed)."""
    return _world.default_group is not None


def _default_group() -> ProcessGroup:
    if _world.default_group is None:
        raise RuntimeError(
            "the default process group is not initialized: call "
            "minigrad_dist.init_process_group(backend='mpi') first (and launch with mpiexec -n N)"
        )
    return _world.default_group


def _group(group) -> ProcessGroup:
    if group is None:
        return _default_group()
    if group is NON_GROUP_MEMBER:
        raise RuntimeError("this rank is not a member of the group it passed (new_group returned NON_GROUP_MEMBER)")
    if not isinstance(group, ProcessGroup):
        raise TypeError(f"group must be a ProcessGroup from new_group(), got {type(group).__name__}")
    return group


def get_rank(group=None) -> int:
    """This process's rank in ``group`` (default: the world)."""
    return _group(group).rank()


def get_world_size(group=None) -> int:
    """Number of ranks in ``group`` (default: the world)."""
    return _group(group).size()


def get_local_rank() -> int:
    """This process's rank among the ranks on the same node (shared-memory split)."""
    _default_group()
    return _world.local_rank


def get_default_group() -> ProcessGroup:
    """The default ``ProcessGroup`` (raises if not initialized)."""
    return _default_group()


def destroy_process_group(group=None) -> None:
    """Free ``group``, or the default group and every group made by ``new_group``."""
    if group is not None:
        _group(group).destroy()
        if group in _world.groups:
            _world.groups.remove(group)
        return
    for g in _world.groups:
        g.destroy()
    _world.groups = []
    if _world.default_group is not None:
        _world.default_group.destroy()
    _world.default_group = None
    _world.timeout = None


def new_group(ranks=None) -> ProcessGroup:
    """A group of the given global ``ranks`` (all ranks when None).

    Must be called by every rank of the world, with the same ``ranks``.
    Ranks outside the group get ``NON_GROUP_MEMBER``.

    Raises:
        TypeError: ``ranks`` is not a list or tuple of ints.
        ValueError: a rank is out of range or repeated.
    """
    world = _default_group()
    size = world.size()
    if ranks is not None and (not isinstance(ranks, (list, tuple)) or not all(map(_is_rank_like, ranks))):
        raise TypeError(f"new_group: ranks must be a list of ints, got {ranks!r}")
    ranks = list(range(size)) if ranks is None else [int(r) for r in ranks]
    if len(set(ranks)) != len(ranks) or any(not 0 <= r < size for r in ranks):
        raise ValueError(f"new_group: ranks must be distinct and in [0, {size}), got {ranks}")
    ranks_sorted = sorted(ranks)
    color = 0 if world.rank() in ranks_sorted else load_mpi().UNDEFINED
    sub = world.comm.Split(color, key=world.rank())
    if sub == load_mpi().COMM_NULL:
        return NON_GROUP_MEMBER
    group = ProcessGroup(sub, world_ranks=ranks_sorted)
    sub.Free()
    _world.groups.append(group)
    return group


def _is_rank_like(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


# -- collectives ----------------------------------------------------------------


def _array(t, fn: str, name: str = "tensor"):
    if isinstance(t, Tensor):
        return t.data
    if array_backend.is_array(t):
        return t
    raise TypeError(f"{fn}: {name} must be a Tensor or a NumPy/CuPy array, got {type(t).__name__}")


def _group_rank(group: ProcessGroup, rank: int, fn: str, what: str) -> int:
    if not isinstance(rank, int) or isinstance(rank, bool):
        raise TypeError(f"{fn}: {what} must be an int rank, got {type(rank).__name__}")
    if rank not in group.world_ranks:
        raise ValueError(f"{fn}: {what}={rank} is not a rank of the group (its ranks are {group.world_ranks})")
    return group.world_ranks.index(rank)


def _check_op(op, fn):
    if not isinstance(op, ReduceOp):
        raise TypeError(f"{fn}: op must be a ReduceOp (e.g. ReduceOp.SUM), got {op!r}")


def _run(method, async_op, *args, **kwargs):
    """Run a group method, honouring the collective timeout for blocking calls."""
    if _world.timeout is not None and not async_op:
        work = method(*args, async_op=True, **kwargs)
        work.wait(_world.timeout)
        return None
    work = method(*args, async_op=async_op, **kwargs)
    return work if async_op else None


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce ``tensor`` across all ranks of ``group``; every rank gets the result in place."""
    _check_op(op, "all_reduce")
    return _run(_group(group).allreduce, async_op, _array(tensor, "all_reduce"), op)


def broadcast(tensor, src=0, group=None, async_op=False):
    """Copy ``tensor`` from global rank ``src`` to every rank of ``group`` (in place)."""
    g = _group(group)
    return _run(g.broadcast, async_op, _array(tensor, "broadcast"), _group_rank(g, src, "broadcast", "src"))


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """Fill ``tensor_list[r]`` with rank r's ``tensor`` on every rank.

    Raises:
        ValueError: ``tensor_list`` does not have one entry per rank of the
            shape and dtype of ``tensor``.
    """
    g = _group(group)
    array = _array(tensor, "all_gather")
    outputs = _output_list(tensor_list, g.size(), array, "all_gather", "tensor_list")
    return _run(g.allgather, async_op, outputs, array)


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce ``input_list[r]`` over ranks; rank r gets the result in ``output``."""
    _check_op(op, "reduce_scatter")
    g = _group(group)
    out = _array(output, "reduce_scatter", "output")
    inputs = _output_list(input_list, g.size(), out, "reduce_scatter", "input_list")
    return _run(g.reduce_scatter, async_op, out, inputs, op)


def reduce(tensor, dst=0, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce ``tensor`` across ranks into ``tensor`` on global rank ``dst``."""
    _check_op(op, "reduce")
    g = _group(group)
    return _run(g.reduce, async_op, _array(tensor, "reduce"), _group_rank(g, dst, "reduce", "dst"), op)


def gather(tensor, gather_list=None, dst=0, group=None, async_op=False):
    """Collect every rank's ``tensor`` into ``gather_list`` on global rank ``dst``."""
    g = _group(group)
    array = _array(tensor, "gather")
    root = _group_rank(g, dst, "gather", "dst")
    outputs = []
    if g.rank() == root:
        outputs = _output_list(gather_list, g.size(), array, "gather", "gather_list")
    return _run(g.gather, async_op, array, outputs, root)


def scatter(tensor, scatter_list=None, src=0, group=None, async_op=False):
    """Rank r receives ``scatter_list[r]`` of global rank ``src`` into ``tensor``."""
    g = _group(group)
    array = _array(tensor, "scatter")
    root = _group_rank(g, src, "scatter", "src")
    inputs = []
    if g.rank() == root:
        inputs = _output_list(scatter_list, g.size(), array, "scatter", "scatter_list")
    return _run(g.scatter, async_op, array, inputs, root)


def barrier(group=None, async_op=False):
    """Block until every rank of ``group`` reached the barrier."""
    return _run(_group(group).barrier, async_op)


def _output_list(items, size, like, fn, name):
    if items is None or not isinstance(items, (list, tuple)):
        raise TypeError(f"{fn}: {name} must be a list of {size} tensors, got {type(items).__name__}")
    if len(items) != size:
        raise ValueError(f"{fn}: {name} must hold one tensor per rank ({size}), got {len(items)}")
    arrays = [_array(t, fn, name) for t in items]
    for i, a in enumerate(arrays):
        if a.shape != like.shape or a.dtype != like.dtype:
            raise ValueError(
                f"{fn}: {name}[{i}] has shape {tuple(a.shape)} and dtype {a.dtype}, expected "
                f"{tuple(like.shape)} and {like.dtype}"
            )
    return arrays


# -- object collectives (pickled: for one trusted MPI job) -------------------------
#
# Objects travel pickled by this module, as ``(True, bytes)``, or as ``(False, why)`` when
# they cannot be pickled (or a root's list is malformed): then every rank involved raises,
# instead of the failing rank raising alone and leaving the others waiting in the collective.


def _pack(obj, what: str):
    try:
        return True, pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as error:  # noqa: BLE001  (pickling raises PicklingError, AttributeError, TypeError...)
        return False, f"{what} cannot be pickled ({type(error).__name__}: {error})"


def _unpack(packed, fn: str):
    ok, data = packed
    if not ok:
        raise TypeError(f"{fn}: {data}")
    return pickle.loads(data)


def all_gather_object(object_list, obj, group=None) -> None:
    """Fill ``object_list[r]`` with rank r's picklable ``obj`` on every rank.

    Raises:
        ValueError: ``object_list`` is not a list with one entry per rank.
        TypeError: on every rank, when some rank's ``obj`` cannot be pickled.
    """
    g = _group(group)
    if not isinstance(object_list, list) or len(object_list) != g.size():
        raise ValueError(f"all_gather_object: object_list must be a list of length {g.size()}")
    packed = g.allgather_obj(_pack(obj, f"the obj of group rank {g.rank()}"))
    object_list[:] = [_unpack(p, "all_gather_object") for p in packed]


def broadcast_object_list(object_list, src=0, group=None) -> None:
    """Replace ``object_list``'s items on every rank by those of global rank ``src``.

    Raises:
        TypeError: ``object_list`` is not a list; or, on every rank, the list
            of ``src`` cannot be pickled.
    """
    g = _group(group)
    if not isinstance(object_list, list):
        raise TypeError(f"broadcast_object_list: object_list must be a list, got {type(object_list).__name__}")
    root = _group_rank(g, src, "broadcast_object_list", "src")
    mine = _pack(list(object_list), f"the object_list of src {src}") if g.rank() == root else None
    object_list[:] = _unpack(g.bcast_obj(mine, root), "broadcast_object_list")


def gather_object(obj, object_gather_list=None, dst=0, group=None) -> None:
    """Collect every rank's ``obj`` into ``object_gather_list`` on global rank ``dst``.

    Raises:
        TypeError: on ``dst`` and on the rank whose ``obj`` cannot be pickled.
        ValueError: ``object_gather_list`` on ``dst`` is not a list with one entry per rank.
    """
    g = _group(group)
    root = _group_rank(g, dst, "gather_object", "dst")
    mine = _pack(obj, f"the obj of group rank {g.rank()}")
    gathered = g.gather_obj(mine, root)
    _unpack(mine, "gather_object")
    if g.rank() == root:
        if not isinstance(object_gather_list, list) or len(object_gather_list) != g.size():
            raise ValueError(f"gather_object: object_gather_list must be a list of length {g.size()} on dst")
        object_gather_list[:] = [_unpack(p, "gather_object") for p in gathered]


def scatter_object_list(scatter_object_output_list, scatter_object_input_list=None, src=0, group=None) -> None:
    """Rank r receives ``scatter_object_input_list[r]`` of ``src`` in ``scatter_object_output_list[0]``.

    Raises:
        TypeError: ``scatter_object_output_list`` is not a non-empty list; or,
            on every rank concerned, the input list of ``src`` is not a list of
            one picklable object per rank.
    """
    g = _group(group)
    root = _group_rank(g, src, "scatter_object_list", "src")
    output = scatter_object_output_list
    if not isinstance(output, list) or not output:
        raise TypeError(
            f"scatter_object_list: scatter_object_output_list must be a non-empty list, got {output!r}"
        )
    items = None
    if g.rank() == root:
        inputs = scatter_object_input_list
        if not isinstance(inputs, list) or len(inputs) != g.size():
            items = [(False, f"the input list on src must be a list of length {g.size()}")] * g.size()
        else:
            items = [_pack(x, f"item {r} of the input list on src") for r, x in enumerate(inputs)]
    mine = g.scatter_obj(items, root)
    for item in items or ():
        _unpack(item, "scatter_object_list")
    output[0] = _unpack(mine, "scatter_object_list")
