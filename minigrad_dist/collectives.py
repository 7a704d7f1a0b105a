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
import sys

import numpy as np

from minigrad import backend as array_backend  # not `backend`: init_process_group has an argument of that name
from minigrad.tensor import Tensor
from minigrad_dist import debug as _debug
from minigrad_dist import waiting
from minigrad_dist.failure import install_failure_handlers
from minigrad_dist.mpi import finish_buffer, load_mpi, mpi_buffer
from minigrad_dist.process_group import ProcessGroup, ReduceOp, RoundRobinProcessGroup, Work


class _NonGroupMember:
    """Returned by ``new_group`` on ranks that are not members of the new group."""

    def __repr__(self):
        return "GroupMember.NON_GROUP_MEMBER"


NON_GROUP_MEMBER = _NonGroupMember()


class Backend(str):
    """A backend name, as ``torch.distributed.Backend``: ``Backend("GLOO") == "gloo"``.

    Every backend runs on MPI here: ``"mpi"`` and ``"gloo"`` name the same
    thing, ``"nccl"`` says the job computes on GPUs (their tensors go to MPI
    directly when it is CUDA-aware, else through host memory). A
    device-to-backend list such as ``"cpu:gloo,cuda:nccl"`` is accepted too.

    Raises:
        TypeError: the name is not a string.
        ValueError: an unknown backend or device name.
    """

    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    MPI = "mpi"

    def __new__(cls, name):
        if not isinstance(name, str):
            raise TypeError(f"Backend: the name must be a string such as 'gloo', got {type(name).__name__}")
        value = name.strip().lower()
        pairs = [part.split(":", 1) for part in value.split(",")] if ":" in value else [("", value)]
        for device, backend in pairs:
            if backend not in _BACKEND_NAMES or device not in ("", "cpu", "cuda"):
                raise ValueError(
                    f"Backend: unknown backend {name!r}; use 'mpi', 'gloo' or 'nccl' (all run on MPI), "
                    "or a list such as 'cpu:gloo,cuda:nccl'"
                )
        return super().__new__(cls, value)


_BACKEND_NAMES = ("mpi", "gloo", "nccl")
_INIT_METHOD_SCHEMES = ("env://", "tcp://", "file://")

# torch.distributed's deprecated lower-case alias of ReduceOp.
reduce_op = ReduceOp


class _World:
    """The default process group and the settings that come with it."""

    def __init__(self):
        self.default_group: ProcessGroup | None = None
        self.timeout: float | None = None
        self.groups: list[ProcessGroup] = []
        self.backend: Backend | None = None
        self.p2p_comms: dict = {}  # group -> its duplicate communicator for send/recv (p2p.py)
        self.announced = False  # the "runs on MPI" line is printed once per process


_world = _World()


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1, *, comm=None,
                       round_robin_channels: int = 0) -> None:
    """Create the default process group from an MPI communicator.

    Mirrors ``torch.distributed.init_process_group``. MPI does the
    rendezvous: ranks and world size come from the MPI launcher
    (``mpiexec -n N``, ``python -m minigrad_dist.run``, or
    ``minigrad_dist.multiprocessing.spawn``), so ``rank`` and ``world_size``
    are checks, not settings.

    Args:
        backend: ``None`` or ``"mpi"``, ``"gloo"``, ``"nccl"``, or a list such
            as ``"cpu:gloo,cuda:nccl"`` (see ``Backend``): every name runs on
            MPI, and rank 0 prints one line saying so for ``gloo``/``nccl``.
            ``get_backend()`` returns the name given (``"mpi"`` for None).
        init_method: ``None`` or a URL (``env://``, ``tcp://...``,
            ``file://...``); accepted for PyTorch programs, not used (MPI
            does the rendezvous; ``MASTER_ADDR``/``MASTER_PORT`` are ignored too).
        timeout: seconds a blocking collective may wait before raising
            ``TimeoutError`` (a float or ``datetime.timedelta``; default: the
            ``MINIGRAD_DIST_TIMEOUT`` environment variable, else wait forever).
        world_size, rank: ``-1``/``None`` (unset) or the values this process
            expects; they must equal MPI's. When unset and the environment
            variables ``WORLD_SIZE``/``RANK`` are set (by a launcher, for the
            default communicator), those must equal MPI's.
        comm: an mpi4py communicator (default ``MPI.COMM_WORLD``); it is duplicated.
        round_robin_channels: when >= 2, the default group rotates its
            collectives over that many duplicate communicators.

    On machines with CUDA devices, each rank selects device
    ``local_rank % device_count``.

    Also installs ``failure.install_failure_handlers()`` (an uncaught
    exception on any rank aborts the whole job) and reads
    ``MINIGRAD_DIST_DEBUG`` (``detail``: check that ranks call matching
    collectives, see ``minigrad_dist.debug``).

    Raises:
        ValueError: unknown backend, a timeout that is not a positive
            number, a negative ``round_robin_channels``, an unknown
            ``MINIGRAD_DIST_DEBUG`` level, or ``rank``/``world_size`` (or
            ``RANK``/``WORLD_SIZE``) that disagree with MPI: raised on every
            rank, naming both values.
        TypeError: ``comm`` is not an mpi4py communicator, or ``round_robin_channels`` not an int.
        RuntimeError: the default group already exists, ``backend="nccl"``
            on a machine without CUDA devices, an unknown ``init_method``
            scheme, or ``rank``/``world_size`` that are not ints (as PyTorch).
        ImportError: mpi4py is missing (says how to install it).
    """
    backend = Backend(backend) if backend is not None else Backend(Backend.MPI)
    if backend == Backend.NCCL and not array_backend.cuda_is_available():
        raise RuntimeError(
            "init_process_group: backend 'nccl' needs CUDA devices and none was found; "
            "use backend='gloo' or 'mpi' on a CPU-only machine"
        )
    if init_method is not None and (
        not isinstance(init_method, str) or not init_method.startswith(_INIT_METHOD_SCHEMES)
    ):
        raise RuntimeError(
            f"init_process_group: init_method must be None or a URL starting with one of "
            f"{_INIT_METHOD_SCHEMES}, got {init_method!r}"
        )
    if _world.default_group is not None:
        raise RuntimeError("init_process_group was already called; call destroy_process_group() first")
    timeout = _resolve_timeout(timeout)
    if not isinstance(round_robin_channels, int) or isinstance(round_robin_channels, bool):
        raise TypeError(
            f"init_process_group: round_robin_channels must be an int, got {round_robin_channels!r}"
        )
    if round_robin_channels < 0:
        raise ValueError(f"init_process_group: round_robin_channels must be >= 0, got {round_robin_channels}")
    for name, value in (("world_size", world_size), ("rank", rank)):
        if value is not None and not _is_rank_like(value):
            raise RuntimeError(f"init_process_group: {name} must be an int (or -1 for unset), got {value!r}")
    MPI = load_mpi()
    if comm is not None and not isinstance(comm, MPI.Comm):
        raise TypeError(f"init_process_group: comm must be an mpi4py communicator, got {type(comm).__name__}")
    use_env = comm is None
    comm = comm if comm is not None else MPI.COMM_WORLD
    problem = _launch_mismatch(comm, rank, world_size, use_env)
    # Every rank learns every rank's verdict, so a mistake on one rank fails them all (no rank waits alone).
    problems = [p for p in comm.allgather(problem) if p is not None]
    if problems:
        raise ValueError(problem or f"init_process_group failed on another rank: {problems[0]}")
    install_failure_handlers()
    _debug.set_debug_level_from_env()
    if round_robin_channels >= 2:
        _world.default_group = RoundRobinProcessGroup(comm, num_channels=round_robin_channels)
    else:
        _world.default_group = ProcessGroup(comm)
    _world.p2p_comms[_world.default_group] = _world.default_group.comm.Dup()
    waiting.set_oversubscribed(_world.default_group.topology.oversubscribed)
    _world.timeout = timeout
    _world.backend = backend
    if array_backend.cuda_is_available():
        local_rank = _world.default_group.topology.local_rank
        array_backend.use_cuda_device(local_rank % array_backend.cuda_device_count())
    _announce_backend(backend)


def _launch_mismatch(comm, rank, world_size, use_env, fn="init_process_group") -> str | None:
    """Why ``rank``/``world_size`` (or the launcher's RANK/WORLD_SIZE) disagree with MPI; None if they agree."""
    actual = {"rank": comm.Get_rank(), "world_size": comm.Get_size()}
    for name, given, env in (("world_size", world_size, "WORLD_SIZE"), ("rank", rank, "RANK")):
        if given is not None and given != -1:
            if given != actual[name]:
                return (
                    f"{fn}: {name}={given} but MPI says {name} is {actual[name]} (MPI's launcher "
                    f"decides ranks: pass {name}={actual[name]}, leave it out, or launch with the matching "
                    "mpiexec -n / --nproc-per-node)"
                )
        elif use_env and os.environ.get(env) is not None:
            value = os.environ[env]
            if value.strip() != str(actual[name]):
                return (
                    f"{fn}: the environment variable {env}={value} but MPI says {name} is "
                    f"{actual[name]} (unset {env}, or launch with python -m minigrad_dist.run, which sets it)"
                )
    return _launcher_mismatch(actual["world_size"], fn) if use_env else None


# What each MPI launcher tells the processes it starts: how many it started.
_LAUNCHER_WORLD_SIZES = ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE")


def _launcher_mismatch(mpi_size: int, fn: str) -> str | None:
    """Why the launcher's process count disagrees with MPI's world (another MPI's mpiexec); None if it agrees.

    mpi4py built for one MPI library but started by another library's
    ``mpiexec`` gives every process a world of its own: each would train alone.
    """
    for variable in _LAUNCHER_WORLD_SIZES:
        value = os.environ.get(variable, "").strip()
        if value.isdigit() and int(value) != mpi_size:
            MPI = load_mpi()
            library = MPI.Get_library_version().splitlines()[0].strip()
            return (
                f"{fn}: the launcher started {value} processes ({variable}={value}) but MPI sees a world of "
                f"{mpi_size}: mpi4py uses another MPI library ({library}) than the mpiexec that started this "
                "program. Launch with that library's mpiexec (with the pip mpich wheel: the mpiexec in the "
                "virtual environment's bin), or rebuild mpi4py against the MPI whose mpiexec you use"
            )
    return None


def _announce_backend(backend) -> None:
    """Rank 0 says once (on stderr) that a PyTorch backend name runs on MPI."""
    if backend == Backend.MPI or _world.announced or _world.default_group.rank() != 0:
        return
    _world.announced = True
    gpu = " with GPU tensors" if "nccl" in backend else ""
    print(
        f"minigrad_dist: backend {str(backend)!r} runs on MPI{gpu} (MPI does the rendezvous: "
        "init_method, MASTER_ADDR and MASTER_PORT are not used)",
        file=sys.stderr,
        flush=True,
    )


def get_backend(group=None) -> Backend:
    """The backend name given to ``init_process_group`` (``"mpi"`` when it was None).

    Raises:
        RuntimeError: the default group is not initialized.
    """
    _group(group)
    return _world.backend


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
        # PyTorch's words for a group it does not know: ValueError ("not registered").
        raise ValueError(f"group must be a ProcessGroup from new_group(), got {type(group).__name__}")
    return group


def get_rank(group=None) -> int:
    """This process's rank in ``group`` (default: the world)."""
    return _group(group).rank()


def get_world_size(group=None) -> int:
    """Number of ranks in ``group`` (default: the world)."""
    return _group(group).size()


def get_local_rank() -> int:
    """This process's rank among the ranks of the world on its node.

    Nodes come from MPI's shared-memory split (``minigrad_dist.topology``),
    so simulated nodes count (``MPIR_CVAR_NUM_CLIQUES``: round-robin). Local
    ranks follow global ranks. ``init_process_group`` selects CUDA device
    ``get_local_rank() % device_count`` with it.

    Raises:
        RuntimeError: the default group is not initialized.
    """
    return _default_group().topology.local_rank


def get_local_world_size() -> int:
    """Number of ranks of the world on this process's node (``LOCAL_WORLD_SIZE``; see ``get_local_rank``).

    Raises:
        RuntimeError: the default group is not initialized.
    """
    return _default_group().topology.local_size


def get_topology(group=None):
    """Where the ranks of ``group`` (default: the world) sit: a ``minigrad_dist.topology.Topology``.

    Its ``node_of[r]`` and ``local_rank_of[r]`` are the node and local rank of
    group rank ``r``; computed once, when the group was built.

    Raises:
        RuntimeError: the default group is not initialized.
    """
    return _group(group).topology


def get_default_group() -> ProcessGroup:
    """The default ``ProcessGroup`` (raises if not initialized)."""
    return _default_group()


def destroy_process_group(group=None) -> None:
    """Free ``group``, or the default group and every group made by ``new_group``."""
    if group is not None:
        _close_p2p(_group(group))
        group.destroy()
        if group in _world.groups:
            _world.groups.remove(group)
        return
    for g in _world.groups:
        _close_p2p(g)
        g.destroy()
    _world.groups = []
    if _world.default_group is not None:
        _close_p2p(_world.default_group)
        _world.default_group.destroy()
    _world.default_group = None
    _world.timeout = None
    _world.backend = None


def _close_p2p(group) -> None:
    comm = _world.p2p_comms.pop(group, None)
    if comm is not None:
        comm.Free()


def p2p_comm(group: ProcessGroup):
    """The communicator that ``send``/``recv`` use on ``group`` (a duplicate of its own, made with it).

    Raises:
        RuntimeError: ``group`` was not made by ``init_process_group`` or ``new_group``.
    """
    comm = _world.p2p_comms.get(group)
    if comm is None:
        raise RuntimeError(
            "point-to-point calls need a group made by init_process_group() or new_group(); "
            f"this {type(group).__name__} was built directly (or destroyed)"
        )
    return comm


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
    _world.p2p_comms[group] = group.comm.Dup()
    _world.groups.append(group)
    return group


def _is_rank_like(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


# -- collectives ----------------------------------------------------------------


def _array(t, fn: str, name: str = "tensor"):
    if isinstance(t, Tensor):
        return t.array
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
        RuntimeError: ``tensor_list`` does not have one entry per rank of the
            shape of ``tensor`` (PyTorch's class).
        ValueError: an entry's dtype differs from ``tensor``'s.
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
    g, array, root, outputs = _rooted(group, tensor, dst, gather_list, "gather", "dst", "gather_list")
    return _run(g.gather, async_op, array, outputs, root)


def scatter(tensor, scatter_list=None, src=0, group=None, async_op=False):
    """Rank r receives ``scatter_list[r]`` of global rank ``src`` into ``tensor``."""
    g, array, root, inputs = _rooted(group, tensor, src, scatter_list, "scatter", "src", "scatter_list")
    return _run(g.scatter, async_op, array, inputs, root)


def _rooted(group, tensor, rank, tensor_list, fn, what, list_name):
    """``(group, array, root, arrays)`` of a gather or scatter; ``arrays`` (one per rank) exist on the root only.

    Only the root can check the list, and only all ranks together can tell
    whether their tensors match; a mismatch found by one rank alone would
    leave the others waiting in MPI (a hang) or fill the root's buffers with
    bytes of the wrong layout. So the ranks first exchange what each has and
    every rank raises the same error (one small extra collective per call).

    Raises:
        TypeError, ValueError, RuntimeError: on every rank, when the root's
            list is missing (ValueError, as PyTorch) or wrong (see
            ``_per_rank_list``), or some rank's tensor differs from the root's
            in shape or dtype.
    """
    g = _group(group)
    array = _array(tensor, fn)
    root = _group_rank(g, rank, fn, what)
    arrays, problem = [], None
    if g.rank() == root:
        try:
            if tensor_list is None:
                raise ValueError(f"{fn}: {list_name} must be given on the {what} rank ({rank}), one tensor per rank")
            arrays = _output_list(tensor_list, g.size(), array, fn, list_name)
        except (TypeError, ValueError, RuntimeError) as error:
            problem = error
    _agree_on_rooted_call(g, array, root, problem, fn)
    return g, array, root, arrays


def _agree_on_rooted_call(g, array, root, problem, fn) -> None:
    """Raise the same error on every rank if the root's ``problem`` is set or the tensors' shapes or dtypes differ."""
    reports = g.allgather_obj((tuple(array.shape), str(array.dtype), problem))
    root_problem = reports[root][2]
    if root_problem is not None:
        raise type(root_problem)(f"{root_problem} (found on the root, rank {g.world_ranks[root]})")
    shape, dtype = reports[root][:2]
    for r, (other_shape, other_dtype, _) in enumerate(reports):
        if (other_shape, other_dtype) != (shape, dtype):
            raise ValueError(
                f"{fn}: rank {g.world_ranks[r]}'s tensor has shape {other_shape} and dtype {other_dtype}, but the "
                f"root's (rank {g.world_ranks[root]}) has shape {shape} and dtype {dtype}; every rank must pass a "
                "tensor of the same shape and dtype"
            )


def barrier(group=None, async_op=False):
    """Block until every rank of ``group`` reached the barrier."""
    return _run(_group(group).barrier, async_op)


def _output_list(items, size, like, fn, name):
    return _per_rank_list(items, size, fn, name, lambda t, where: _array(t, fn, where), like)


def _per_rank_list(items, size, fn, name, convert, like=None, noun="tensor") -> list:
    """``convert(item, where)`` of each of ``items``: a list of ``size``, one per rank of the group.

    Every converted item must have the shape and dtype of ``like`` (default:
    the first item's). ``minigrad_dist.nn.functional`` checks its Tensor lists here too.

    The error classes are PyTorch's: its process groups reject a list of the
    wrong length or an item of the wrong size (RuntimeError), its Python layer
    a mix of dtypes (ValueError).

    Raises:
        TypeError: ``items`` is not a list or tuple (or ``convert`` refuses an item).
        RuntimeError: the wrong number of items, or one whose shape differs.
        ValueError: an item whose dtype differs.
    """
    if not isinstance(items, (list, tuple)):
        raise TypeError(f"{fn}: {name} must be a list of {size} {noun}s (one per rank), got {type(items).__name__}")
    if len(items) != size:
        raise RuntimeError(f"{fn}: {name} must hold one {noun} per rank of the group ({size}), got {len(items)}")
    converted = [convert(item, f"{name}[{i}]") for i, item in enumerate(items)]
    like = converted[0] if like is None else like
    for i, item in enumerate(converted):
        if item.shape != like.shape or item.dtype != like.dtype:
            kind = ValueError if item.dtype != like.dtype else RuntimeError
            raise kind(
                f"{fn}: {name}[{i}] has shape {tuple(item.shape)} and dtype {item.dtype}, expected shape "
                f"{tuple(like.shape)} and dtype {like.dtype}"
            )
    return converted


# -- all-to-all ---------------------------------------------------------------------
#
# Each rank first tells every peer how many bytes (and of which dtype) it will send it, in
# one small Ialltoall; then the data moves in one Ialltoallv of bytes. A rank whose expected
# sizes disagree with what its peers send still takes part (into a scratch buffer, so no rank
# is left waiting) and then raises, naming the peers: never a silently half-filled output.

_DTYPES = tuple(np.dtype(name) for name in (
    "bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
    "float16", "float32", "float64", "complex64", "complex128",
))


def dtype_code(dtype, fn: str) -> int:
    """A small integer naming ``dtype`` in messages between ranks (for the receiver's checks).

    Raises:
        TypeError: a dtype that cannot be communicated.
    """
    try:
        return _DTYPES.index(np.dtype(dtype))
    except ValueError:
        raise TypeError(f"{fn}: tensors of dtype {dtype} cannot be communicated") from None


def dtype_of_code(code: int):
    """The dtype that ``dtype_code`` named ``code`` (None for an unknown code)."""
    return _DTYPES[code] if 0 <= code < len(_DTYPES) else None


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op=False):
    """Rank i sends ``input_tensor_list[j]`` to rank j, which receives it in ``output_tensor_list[i]``.

    Args:
        output_tensor_list: one tensor per rank of ``group``, written in place.
        input_tensor_list: one tensor per rank of ``group``; shapes may differ
            per peer, but ``input_tensor_list[j]`` on rank i must have the size
            of ``output_tensor_list[i]`` on rank j, and all tensors one dtype.
        group: the process group (default: the world).
        async_op: return a ``Work`` instead of waiting.

    Raises:
        TypeError: the lists are not lists of tensors.
        ValueError: the tensors' dtypes differ.
        RuntimeError: a list does not hold one tensor per rank, or (on the
            receiving rank, after the exchange) a peer sent another size or
            dtype than the output tensor expects.
    """
    g = _group(group)
    n = g.size()
    outputs = _rank_list(output_tensor_list, n, "all_to_all", "output_tensor_list")
    inputs = _rank_list(input_tensor_list, n, "all_to_all", "input_tensor_list")
    dtype = _one_dtype(outputs + inputs, "all_to_all")
    xp = array_backend.get_array_module(*outputs, *inputs)
    send = xp.concatenate([a.reshape(-1) for a in inputs])
    recv = xp.empty(sum(a.size for a in outputs), dtype=dtype)

    def unpack():
        start = 0
        for out in outputs:
            out[...] = recv[start : start + out.size].reshape(out.shape)
            start += out.size

    item = np.dtype(dtype).itemsize
    return _alltoallv(g, "all_to_all", send, [a.size * item for a in inputs], recv,
                      [a.size * item for a in outputs], unpack, outputs, async_op)


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None, group=None,  # noqa: A002
                      async_op=False):
    """Split ``input`` along dim 0 into one slice per rank and send slice j to rank j.

    ``output`` receives, along dim 0 and in rank order, the slices every
    rank sent to this one.

    Args:
        output, input: tensors of one dtype, with at least one dimension.
        output_split_sizes, input_split_sizes: rows per rank along dim 0
            (default: equal splits, so dim 0 must divide by the group size).
        group, async_op: as for every collective.

    Raises:
        TypeError: ``output``/``input`` are not tensors.
        ValueError: a tensor is not contiguous or has no dimension, or dtypes differ.
        RuntimeError: split sizes do not sum to dim 0 or are
            not one per rank, dim 0 does not divide equally, or (after the
            exchange) a peer sent another size or dtype than expected.
    """
    g = _group(group)
    n = g.size()
    out = _array(output, "all_to_all_single", "output")
    inp = _array(input, "all_to_all_single", "input")
    _one_dtype([out, inp], "all_to_all_single")
    counts = []
    for array, splits, name in ((inp, input_split_sizes, "input"), (out, output_split_sizes, "output")):
        if array.ndim == 0:
            raise ValueError(f"all_to_all_single: {name} must have at least one dimension to split along")
        if not array.flags.c_contiguous:
            raise ValueError(f"all_to_all_single: {name} must be contiguous (call .contiguous() first)")
        rows = _split_sizes(splits, array.shape[0], n, name)
        row_bytes = array.nbytes // array.shape[0] if array.shape[0] else 0
        counts.append([r * row_bytes for r in rows])
    return _alltoallv(g, "all_to_all_single", inp, counts[0], out, counts[1], None, [out], async_op)


def _rank_list(items, size, fn, name):
    if not isinstance(items, (list, tuple)):
        raise TypeError(f"{fn}: {name} must be a list of {size} tensors, got {type(items).__name__}")
    if len(items) != size:
        raise RuntimeError(f"{fn}: {name} holds {len(items)} tensors, but the group has {size} ranks")
    return [_array(t, fn, name) for t in items]  # packed into (or unpacked from) one buffer: any layout works


def _one_dtype(arrays, fn):
    dtypes = {a.dtype for a in arrays}
    if len(dtypes) > 1:
        raise ValueError(f"{fn}: all tensors must have the same dtype, got {sorted(map(str, dtypes))}")
    return arrays[0].dtype if arrays else np.float32


def _split_sizes(splits, rows, size, name):
    if splits is None:
        if rows % size:
            raise RuntimeError(
                f"all_to_all_single: {name} has {rows} rows along dim 0, which do not divide equally over "
                f"{size} ranks; pass {name}_split_sizes"
            )
        return [rows // size] * size
    splits = list(splits)
    if len(splits) != size or not all(_is_rank_like(s) and s >= 0 for s in splits):
        raise RuntimeError(
            f"all_to_all_single: {name}_split_sizes must hold {size} non-negative ints (one per rank), got {splits}"
        )
    if sum(splits) != rows:
        raise RuntimeError(
            f"all_to_all_single: {name}_split_sizes {splits} sum to {sum(splits)}, but {name} has {rows} rows "
            "along dim 0"
        )
    return [int(s) for s in splits]


def _alltoallv(group, fn, send, send_counts, recv, recv_counts, unpack, result, async_op):
    """Exchange byte counts and dtypes, then the bytes; see the comment above ``all_to_all``."""
    MPI = load_mpi()
    n = group.size()
    comm = group.comm
    code = dtype_code(recv.dtype, fn)
    meta = np.empty((n, 2), dtype=np.int64)
    meta[:, 0] = send_counts
    meta[:, 1] = code
    told = np.empty_like(meta)
    Work(comm.Ialltoall(meta, told), op_name=f"{fn} (size exchange)", spin=group.spin_wait).wait(_world.timeout)
    wrong = [j for j in range(n) if told[j, 0] != recv_counts[j] or (told[j, 0] and told[j, 1] != code)]
    send_buf = mpi_buffer(send)
    send_bytes = send_buf.reshape(-1).view(np.uint8) if send_buf.size else np.empty(0, np.uint8)
    expected = list(recv_counts)
    if wrong:
        recv_counts = [int(c) for c in told[:, 0]]
        recv_bytes = np.empty(sum(recv_counts), dtype=np.uint8)
        recv_buf = None
    else:
        recv_buf = mpi_buffer(recv)
        recv_bytes = recv_buf.reshape(-1).view(np.uint8) if recv_buf.size else np.empty(0, np.uint8)
    request = comm.Ialltoallv(
        [send_bytes, (list(send_counts), _offsets(send_counts)), MPI.BYTE],
        [recv_bytes, (list(recv_counts), _offsets(recv_counts)), MPI.BYTE],
    )
    if wrong:
        Work(request, op_name=fn, spin=group.spin_wait).wait(_world.timeout)
        details = "; ".join(
            f"rank {group.world_ranks[j]} sent {told[j, 0]} bytes of {dtype_of_code(int(told[j, 1]))}, "
            f"expected {expected[j]} bytes of {recv.dtype}"
            for j in wrong
        )
        raise RuntimeError(f"{fn}: the tensors sent to this rank do not match its outputs: {details}")

    def finish():
        if recv_buf is not recv:
            finish_buffer(recv, recv_buf)
        if unpack is not None:
            unpack()

    work = Work(request, finish, result, fn, group.spin_wait)
    if async_op:
        return work
    work.wait(_world.timeout)
    return None


def _offsets(counts):
    offsets, total = [], 0
    for c in counts:
        offsets.append(total)
        total += int(c)
    return offsets


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
