"""The public RPC API: ``init_rpc``, ``rpc_sync``, ``rpc_async``, ``remote``, ``shutdown``.

Launch with ``mpiexec -n N python script.py``; every rank calls
``init_rpc(name)`` (a collective: names are exchanged) and, at the end,
``shutdown()``, which waits until every worker has finished all in-flight
work.

Trust model: RPC sends pickled callables and arguments between the ranks of
one MPI job and runs them. Only use it among processes you trust; nothing
listens outside MPI itself.
"""

from __future__ import annotations

import pickle

from minigrad_dist.mpi import load_mpi
from minigrad_dist.rpc.agent import RpcAgent, WorkerInfo

_UNSET = object()


class _RpcState:
    """This process's agent (None before ``init_rpc`` and after ``shutdown``)."""

    def __init__(self):
        self.agent: RpcAgent | None = None


_state = _RpcState()


def current_agent() -> RpcAgent:
    """The running agent.

    Raises:
        RuntimeError: ``init_rpc`` was not called (or RPC was shut down).
    """
    if _state.agent is None:
        raise RuntimeError("RPC is not initialized: call minigrad_dist.rpc.init_rpc(name) first on every rank")
    return _state.agent


def is_initialized() -> bool:
    """True between ``init_rpc`` and ``shutdown``."""
    return _state.agent is not None


def init_rpc(name: str, rank: int | None = None, world_size: int | None = None, rpc_timeout: float = 60.0,
             num_worker_threads: int = 16, comm=None) -> None:
    """Start this worker's RPC agent; every rank of the job must call it.

    Args:
        name: a unique worker name (e.g. ``f"worker{rank}"``).
        rank, world_size: optional checks against MPI's (they come from ``mpiexec``).
        rpc_timeout: default seconds an RPC may take (0: no timeout).
        num_worker_threads: threads that run incoming requests.
        comm: the communicator to use (default ``MPI.COMM_WORLD``; it is duplicated).

    Raises:
        RuntimeError: RPC already initialized, rank/world_size disagree with MPI,
            or the MPI library lacks MPI_THREAD_MULTIPLE.
        ValueError: names are not unique across workers, ``name`` is empty, or
            ``rpc_timeout`` is negative or NaN.
        TypeError: ``rpc_timeout`` is not a number.
    """
    if _state.agent is not None:
        raise RuntimeError("init_rpc was already called; call rpc.shutdown() first")
    if not isinstance(name, str) or not name:
        raise ValueError(f"init_rpc: name must be a non-empty string, got {name!r}")
    _check_timeout(rpc_timeout, "init_rpc", "rpc_timeout")
    MPI = load_mpi()
    comm = comm if comm is not None else MPI.COMM_WORLD
    problem = None
    if rank is not None and rank != comm.Get_rank():
        problem = f"init_rpc: rank={rank} but MPI says this process is rank {comm.Get_rank()}"
    elif world_size is not None and world_size != comm.Get_size():
        problem = f"init_rpc: world_size={world_size} but MPI runs {comm.Get_size()} processes"
    # Every rank learns every rank's verdict, so a mistake on one rank fails them all (no rank waits alone).
    problems = [p for p in comm.allgather(problem) if p is not None]
    if problems:
        raise RuntimeError(problem or f"init_rpc failed on another rank: {problems[0]}")
    _install_failure_handlers()
    agent = RpcAgent(name, comm, num_worker_threads=num_worker_threads, rpc_timeout=rpc_timeout)
    _state.agent = agent  # registered before it serves: handlers look it up
    agent.start()


def _install_failure_handlers():
    try:
        from minigrad_dist import failure  # noqa: PLC0415  (optional module of the reliability layer)
    except ImportError:
        return
    failure.install_failure_handlers()


def shutdown(graceful: bool = True, timeout: float | None = None) -> None:
    """Stop RPC on this worker.

    With ``graceful`` (the default) this is collective: it returns once every
    worker called it and no request, reply or reference-count message is in
    flight or running anywhere. Without it, pending futures fail at once.
    """
    from minigrad_dist.rpc.rref import release_all_owned  # noqa: PLC0415  (rref builds on this module)

    agent = current_agent()
    try:
        agent.shutdown(graceful=graceful, timeout=timeout)
    finally:
        _state.agent = None
        release_all_owned()


def get_worker_info(worker_name: str | None = None) -> WorkerInfo:
    """``WorkerInfo(name, id)`` of ``worker_name`` (default: this worker).

    Raises:
        ValueError: no worker has that name.
    """
    agent = current_agent()
    if worker_name is None:
        return agent.info
    if worker_name not in agent.by_name:
        raise ValueError(f"unknown worker {worker_name!r}; workers are {sorted(agent.by_name)}")
    return agent.by_name[worker_name]


def resolve(to) -> WorkerInfo:
    """A worker given by name, id or WorkerInfo.

    Raises:
        ValueError: no such worker. TypeError: ``to`` has another type.
    """
    agent = current_agent()
    if isinstance(to, WorkerInfo):
        return agent.workers[to.id]
    if isinstance(to, str):
        return get_worker_info(to)
    if isinstance(to, int) and not isinstance(to, bool):
        if not 0 <= to < agent.size:
            raise ValueError(f"worker id {to} is out of range [0, {agent.size})")
        return agent.workers[to]
    raise TypeError(f"to must be a worker name, id or WorkerInfo, got {type(to).__name__}")


def _check_timeout(timeout, fn: str, name: str = "timeout") -> None:
    """A timeout is a number of seconds >= 0 (0: none); NaN and negative values are refused."""
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
        raise TypeError(f"{fn}: {name} must be a number of seconds, got {type(timeout).__name__}")
    if not timeout >= 0:
        raise ValueError(f"{fn}: {name} must be >= 0 seconds (0: no timeout), got {timeout!r}")


def _check_call(func, args, kwargs, timeout=_UNSET):
    if not callable(func):
        raise TypeError(f"func must be callable, got {type(func).__name__}")
    try:
        pickle.dumps(func)
    except Exception as error:  # noqa: BLE001  (PicklingError, AttributeError for local objects, ...)
        raise TypeError(
            f"func must be picklable to be sent (a function defined at the top level of a module), "
            f"got {func!r}: {type(error).__name__}: {error}"
        ) from None
    if not isinstance(args, (tuple, list)):
        raise TypeError(f"args must be a tuple, got {type(args).__name__}")
    if kwargs is not None and not isinstance(kwargs, dict):
        raise TypeError(f"kwargs must be a dict, got {type(kwargs).__name__}")
    if timeout is not _UNSET and timeout is not None:
        _check_timeout(timeout, "rpc")


def rpc_async(to, func, args=(), kwargs=None, timeout=_UNSET):
    """Run ``func(*args, **kwargs)`` on worker ``to``; returns a Future at once.

    The future's ``wait()`` returns the result or re-raises the remote
    exception (same type where possible) with the remote traceback in its
    message. ``timeout`` in seconds (default: init_rpc's ``rpc_timeout``; 0: none)
    fails the future with ``RpcTimeoutError``.

    Raises:
        TypeError: ``func`` is not callable or cannot be pickled, ``args`` is not
            a tuple, ``kwargs`` not a dict, or ``timeout`` not a number.
        ValueError: an unknown worker, or a negative or NaN ``timeout``.
    """
    _check_call(func, args, kwargs, timeout)
    worker = resolve(to)
    agent = current_agent()
    return agent.request(worker.id, func, args, kwargs, None if timeout is _UNSET else timeout)


def rpc_sync(to, func, args=(), kwargs=None, timeout=_UNSET):
    """Run ``func(*args, **kwargs)`` on worker ``to`` and return its result (blocking).

    Raises:
        Whatever the remote function raised (with the remote traceback), or
        ``RpcTimeoutError`` after ``timeout`` seconds.
    """
    return rpc_async(to, func, args, kwargs, timeout).wait()


def remote(to, func, args=(), kwargs=None, timeout=_UNSET):
    """Run ``func`` on worker ``to`` and return at once an ``RRef`` to its (future) result.

    The owner computes while the caller goes on; ``rref.to_here()`` waits for
    the value. An exception raised by ``func`` is re-raised by ``to_here()``.
    """
    from minigrad_dist.rpc.rref import create_remote  # noqa: PLC0415  (rref builds on this module)

    _check_call(func, args, kwargs, timeout)
    return create_remote(resolve(to), func, tuple(args), dict(kwargs or {}),
                         None if timeout is _UNSET else timeout)
